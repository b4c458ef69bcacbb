/* saccade-cli-ablate.c — `saccade ablate RUN --heads|--tokens|--permute N|--erasure`: the
 * ablation studies of a stored run: each head zero-ablated in turn, each token masked then
 * dropped in turn, each head's attention rows permuted N times (Jain & Wallace §4), and the
 * erasure curves until the prediction flips (Serrano & Smith). Parse -> a result
 * (engine/study/ computes it, or reads it back from the store when the same model file and
 * parameters were studied before) -> text (a table) or JSON (every number; NaN as null),
 * and for --erasure optionally a figure (-o). With --bench it times the head sweep against
 * the same number of plain forward passes (docs/benchmarks.md, "Head sweep"). The measures
 * are defined in docs/metrics.md, "Ablation studies" and "Attention permutation and
 * erasure curves". */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli-store.h"
#include "app/cli/saccade-cli-study.h"
#include "app/core/studies/saccade-study-outputs.h"
#include "app/core/saccade-head-means.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/study/sc-ablation-study.h"
#include "engine/study/sc-erasure-study.h"
#include "engine/study/sc-permutation-study.h"
#include "engine/text/sc-tokenizer.h"
#include "ui/figures/saccade-figure.h"

typedef enum {
  STUDY_HEADS,
  STUDY_TOKENS,
  STUDY_PERMUTE,
  STUDY_ERASURE,
} Study;

typedef struct {
  SaccadeCliCommon common;
  char *db, *target_text, *seed_text, *kind, *output, *layers;
  int top, bench_len, bench_repeats, permute, seeds;
  gboolean heads, tokens, erasure, mean, gradient, recompute, bench;
} AblateOptions;

/* The parsed request: which study and its engine parameters. */
typedef struct {
  Study study;
  int target;         /* −1: the clean top-1 */
  guint64 seed;
  ScEraseKind kind;
  GArray *layers;     /* --layer: int layers, or NULL: every layer */
  GArray *head_list;  /* the flat head indices of those layers (parse_layers) */
} AblateRequest;

/* What the verb prints: one of the results, with where it came from. */
typedef struct {
  ScStoreRunInfo run;
  ScStoreToken *tokens;
  size_t n_tokens;
  char **labels;
  ScHeadSweepResult *heads;   /* --heads */
  ScTokenLooResult *loo;      /* --tokens */
  ScPermutationResult *perm;  /* --permute */
  ScErasureResult *erasure;   /* --erasure */
  SaccadeStudy *study;        /* owns the result the pointer above borrows */
  gint64 study_id;
  gboolean reused;
  double seconds;
  char *warning;              /* why it was not stored, or NULL */
  gboolean mean;              /* --heads: mean-ablation (the reference set's means) */
} AblateResult;

static void
ablate_result_clear (AblateResult *r)
{
  sc_store_run_info_clear (&r->run);
  sc_store_tokens_free (r->tokens);
  g_strfreev (r->labels);
  saccade_study_free (r->study);
  g_free (r->warning);
  memset (r, 0, sizeof *r);
}

/* ------------------------------------------------------------------------------------ */
/* Parsing                                                                               */

/* Checks the flags against each other before anything is loaded; fills what it can of
 * @q (the target needs the model: saccade_cli_parse_token). */
static gboolean
check_options (const AblateOptions *o, AblateRequest *q, GError **error)
{
  const int n = !!o->heads + !!o->tokens + (o->permute != INT_MIN) + !!o->erasure;

#define BAD(...) (g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, __VA_ARGS__), FALSE)
  if (n != 1)
    return BAD ("ablate takes one of --heads, --tokens, --permute N and --erasure");
  q->study = o->heads ? STUDY_HEADS : o->tokens ? STUDY_TOKENS
             : o->erasure ? STUDY_ERASURE : STUDY_PERMUTE;
  if (q->study == STUDY_PERMUTE && (o->permute < 1 || o->permute > SC_PERMUTATION_MAX_N))
    return BAD ("--permute takes the number of permutations per head, 1 to %d, not %d",
                SC_PERMUTATION_MAX_N, o->permute);
  if (o->mean && q->study != STUDY_HEADS)
    return BAD ("--mean applies to --heads (mean-ablation of each head)");
  if (o->kind != NULL && q->study != STUDY_ERASURE)
    return BAD ("--kind applies to --erasure (--tokens runs both kinds)");
  q->kind = SC_ERASE_MASK;
  if (o->kind != NULL && strcmp (o->kind, "mask") != 0)
    {
      if (strcmp (o->kind, "drop") != 0)
        return BAD ("--kind is mask or drop, not '%s'", o->kind);
      q->kind = SC_ERASE_DROP;
    }
  if (o->seeds != INT_MIN && q->study != STUDY_ERASURE)
    return BAD ("--seeds applies to --erasure (the number of random orderings)");
  if (o->seeds != INT_MIN && (o->seeds < 0 || o->seeds > SC_ERASURE_MAX_SEEDS))
    return BAD ("--seeds takes 0 to %d random orderings, not %d", SC_ERASURE_MAX_SEEDS,
                o->seeds);
  if (o->seed_text != NULL && q->study != STUDY_PERMUTE && q->study != STUDY_ERASURE)
    return BAD ("--seed applies to --permute and --erasure");
  q->seed = 0;
  if (o->seed_text != NULL
      && !g_ascii_string_to_unsigned (o->seed_text, 10, 0, G_MAXUINT64, &q->seed, NULL))
    return BAD ("--seed takes an unsigned 64-bit integer, not '%s'", o->seed_text);
  if (o->gradient && q->study != STUDY_ERASURE)
    return BAD ("--gradient applies to --erasure");
  if (o->layers != NULL && q->study != STUDY_PERMUTE)
    return BAD ("--layer applies to --permute");
  if (o->layers != NULL)
    {
      g_auto (GStrv) parts = g_strsplit (o->layers, ",", -1);
      q->layers = g_array_new (FALSE, FALSE, sizeof (int));
      for (int i = 0; parts[i] != NULL; i++)
        {
          guint64 l;
          if (!g_ascii_string_to_unsigned (g_strstrip (parts[i]), 10, 0, G_MAXINT32, &l, NULL))
            return BAD ("--layer takes layer numbers separated by commas, not '%s'", o->layers);
          for (guint j = 0; j < q->layers->len; j++)
            if (g_array_index (q->layers, int, j) == (int) l)
              return BAD ("--layer names layer %d twice", (int) l);
          g_array_append_val (q->layers, (int) { (int) l });
        }
    }
  if (o->output != NULL && q->study != STUDY_ERASURE)
    return BAD ("-o writes the erasure figure: it applies to --erasure");
  if (o->output != NULL)
    {
      SaccadeFigureFormat fmt;
      if (!saccade_figure_format_from_path (o->output, &fmt, error))
        return FALSE;
    }
#undef BAD
  return TRUE;
}

/* The heads of the --layer layers, checked against the model. */
static gboolean
parse_layers (ScModel *model, AblateRequest *q, GError **error)
{
  const ScModelInfo *info = sc_model_info (model);

  if (q->layers == NULL)
    return TRUE;
  q->head_list = g_array_new (FALSE, FALSE, sizeof (int));
  for (guint j = 0; j < q->layers->len; j++)
    {
      const int l = g_array_index (q->layers, int, j);
      if (l >= (int) info->n_layers)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--layer %d: %s has layers 0 to %u", l, info->name, info->n_layers - 1);
          return FALSE;
        }
      for (int h = 0; h < (int) info->n_heads; h++)
        g_array_append_val (q->head_list, (int) { l * (int) info->n_heads + h });
    }
  return TRUE;
}

/* ------------------------------------------------------------------------------------ */
/* Computing or reading back                                                             */

/* Reads run @id and its tokens from the store at @path, with their labels. */
static gboolean
read_run (const char *path, gint64 id, AblateResult *r, GError **error)
{
  if (!saccade_store_read_run (path, id, &r->run, &r->tokens, &r->n_tokens, error))
    return FALSE;
  r->labels = saccade_token_labels_for_store (r->tokens, r->n_tokens);
  return TRUE;
}

/* The engine parameters of each study. */
typedef struct {
  ScAblationParams ablation;
  ScPermutationParams permutation;
  ScErasureParams erasure;
} StudyParams;

/* The study kind @q asks for and its params (in @p). */
static const ScStudyKind *
study_params (const AblateOptions *o, const AblateRequest *q, StudyParams *p,
              const void **params)
{
  p->ablation = (ScAblationParams) { .target = q->target, .mode = SC_ABLATE_ZERO };
  p->permutation = (ScPermutationParams) { .target = q->target, .n_permutations = o->permute,
                                           .seed = q->seed };
  if (q->head_list != NULL)
    {
      p->permutation.heads = (const int *) q->head_list->data;
      p->permutation.n_list = (int) q->head_list->len;
    }
  p->erasure = (ScErasureParams) { .target = q->target, .kind = q->kind,
                                   .n_random = o->seeds != INT_MIN ? o->seeds : 8,
                                   .seed = q->seed, .gradient = o->gradient };
  switch (q->study)
    {
    case STUDY_HEADS:
      *params = &p->ablation;
      /* mean-ablation with the shipped reference set's means (saccade-head-means.h) */
      return o->mean ? &sc_study_kind_heads_mean : &sc_study_kind_heads;
    case STUDY_TOKENS:
      *params = &p->ablation;
      return &sc_study_kind_tokens;
    case STUDY_PERMUTE:
      *params = &p->permutation;
      return &sc_study_kind_permute;
    case STUDY_ERASURE:
    default:
      *params = &p->erasure;
      return &sc_study_kind_erasure;
    }
}

/* Computes the study @q asks for on run @r, or reads it back; stores what it computed. */
static gboolean
get_result (ScModel *model, const AblateOptions *o, const AblateRequest *q, const char *db_path,
            AblateResult *r, GError **error)
{
  const ScStudyKind *kind;
  const void *params = NULL;
  StudyParams p;
  ScStoreModel sm;
  ScError err = { 0 };
  char hex[SC_SHA256_HEX_SIZE];

  /* The run must be of the loaded model file, by fingerprint (said with the paths here). */
  if (sc_store_model_identify (model, saccade_cli_model_path (&o->common), &sm, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  sc_sha256_hex (sm.sha256, hex);
  if (strcmp (hex, r->run.model_sha256) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "run %" G_GINT64_FORMAT " was captured with %s (%s, SHA-256 %.12s…), not "
                   "with the loaded model %s (SHA-256 %.12s…); load that file with -m",
                   r->run.id, r->run.model_name, r->run.model_path, r->run.model_sha256,
                   saccade_cli_model_path (&o->common), hex);
      return FALSE;
    }
  kind = study_params (o, q, &p, &params);
  r->mean = kind == &sc_study_kind_heads_mean;
  /* --gradient is never stored: the engine refuses it (issue 12), even over a stored study. */
  r->study = saccade_cli_study_get (kind, params, model, &o->common, db_path, r->run.id,
                                    o->recompute || o->gradient, &r->warning, error);
  if (r->study == NULL)
    return FALSE;
  switch (q->study)
    {
    case STUDY_HEADS: r->heads = r->study->result; break;
    case STUDY_TOKENS: r->loo = r->study->result; break;
    case STUDY_PERMUTE: r->perm = r->study->result; break;
    case STUDY_ERASURE: r->erasure = r->study->result; break;
    }
  r->reused = r->study->reused;
  r->study_id = r->study->study_id;
  r->seconds = r->study->seconds;
  return TRUE;
}

/* ------------------------------------------------------------------------------------ */
/* Text                                                                                  */

static void
print_source (const AblateResult *r, const char *db_path)
{
  if (r->reused)
    printf ("reused study %" G_GINT64_FORMAT " from %s (--recompute to compute again)\n",
            r->study_id, db_path);
  else if (r->study_id > 0)
    printf ("computed now in %.1f s, stored as study %" G_GINT64_FORMAT " in %s\n", r->seconds,
            r->study_id, db_path);
  else
    printf ("computed now in %.1f s (not stored: %s)\n", r->seconds,
            r->warning != NULL ? r->warning : "no store");
}

/* Sorts indices by a key, largest first, NaN last, ties by index. */
static int
by_key_desc (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const double *key = user_data;
  const int ia = *(const int *) a, ib = *(const int *) b;
  const double va = isnan (key[ia]) ? -INFINITY : key[ia];
  const double vb = isnan (key[ib]) ? -INFINITY : key[ib];

  return va > vb ? -1 : va < vb ? 1 : ia - ib;
}

static int *
rank_by (const double *key, int n)
{
  int *order = g_new (int, n);

  for (int i = 0; i < n; i++)
    order[i] = i;
  g_qsort_with_data (order, n, sizeof *order, by_key_desc, (gpointer) key);
  return order;
}

static void
print_effect_row (const ScAblationEffect *e)
{
  printf ("  %+10.4f  %7.4f  %7.4f  %+10.4f  %s\n", e->next.delta_logp, e->next.tv,
          e->next.jsd, e->delta_loss, e->flipped ? "yes" : "no");
}

static void
print_heads (const ScHeadSweepResult *h, gboolean mean, int top_n)
{
  const int n = h->n_layers * h->n_heads, top = MIN (top_n, n);
  g_autofree double *key = g_new (double, n);
  g_autofree int *order = NULL;

  for (int i = 0; i < n; i++)
    key[i] = fabs (h->heads[i].next.delta_logp);
  order = rank_by (key, n);
  if (mean)
    printf ("\nmean-ablating one head at a time (means of %s), the top %d by |Δ log p|:\n",
            SACCADE_REFERENCE_SET, top);
  else
    printf ("\nzero-ablating one head at a time, the top %d by |Δ log p|:\n", top);
  printf ("  rank  head     Δ log p      TV       JSD      Δ loss     flip\n");
  for (int k = 0; k < top; k++)
    {
      printf ("  %4d  %2d.%-3d", k + 1, order[k] / h->n_heads, order[k] % h->n_heads);
      print_effect_row (&h->heads[order[k]]);
    }
}

static void
print_tokens (const AblateResult *r)
{
  const ScTokenLooResult *t = r->loo;

  for (int kind = 0; kind < 2; kind++)
    {
      printf (kind == 0 ? "\nmasking one token out of every attention row:\n"
                        : "\ndropping one token from the input:\n");
      printf ("  pos  token                Δ log p      TV       JSD      Δ loss     flip\n");
      for (int j = 0; j < t->n_tokens - 1; j++)
        {
          printf ("  %3d  ", j);
          saccade_store_cli_print_padded (r->labels[j], 16);
          print_effect_row (kind == 0 ? &t->mask[j] : &t->drop[j]);
        }
    }
  printf ("  (the last token, %s, is the query and is never erased)\n",
          r->labels[t->n_tokens - 1]);
}

static void
print_permute (const ScPermutationResult *p, int top_n)
{
  const int top = MIN (top_n, p->n_studied);
  g_autofree double *key = g_new (double, p->n_studied);
  g_autofree int *order = NULL;

  for (int i = 0; i < p->n_studied; i++)
    key[i] = p->heads[i].tv.median;
  order = rank_by (key, p->n_studied);
  printf ("\npermuting one head's attention rows, %d permutation%s per head (seed %" G_GUINT64_FORMAT
          "), the top %d of %d heads by median TV:\n", p->n_permutations,
          p->n_permutations == 1 ? "" : "s", (guint64) p->seed, top, p->n_studied);
  printf ("  rank  head    TV median [q25, q75]      JSD median   Δ log p median [min, max]"
          "        flips\n");
  for (int k = 0; k < top; k++)
    {
      const ScPermutationHead *h = &p->heads[order[k]];
      printf ("  %4d  %2d.%-3d  %7.4f [%6.4f, %6.4f]  %10.4f   %+8.4f [%+8.4f, %+8.4f]  %5.1f%%\n",
              k + 1, h->layer, h->head, h->tv.median, h->tv.q25, h->tv.q75, h->jsd.median,
              h->delta_logp.median, h->delta_logp.min, h->delta_logp.max,
              100.0 * h->flip_share);
    }
  printf ("  (quantiles: linear interpolation between order statistics, type 7)\n");
}

static const char *
curve_name (const ScErasureCurve *cv, char buf[32])
{
  if (cv->ordering == SC_ERASE_ORDER_RANDOM)
    g_snprintf (buf, 32, "random #%d", cv->seed_index);
  else
    g_strlcpy (buf, sc_erase_ordering_name (cv->ordering), 32);
  return buf;
}

static void
print_erasure (const AblateResult *r)
{
  const ScErasureResult *e = r->erasure;
  const int m = e->n_tokens - 1;
  bool never = false;
  double med;
  char name[32];

  printf ("\nerasing tokens one after another (%s) until the top-1 flips; %d erasable tokens "
          "(the query %s is never erased):\n", e->kind == SC_ERASE_DROP ? "dropped" : "masked",
          m, r->labels[e->n_tokens - 1]);
  printf ("  ordering          flips after   fraction   p(target) at the flip   erased first\n");
  for (int c = 0; c < e->n_curves; c++)
    {
      const ScErasureCurve *cv = &e->curves[c];
      printf ("  ");
      saccade_store_cli_print_padded (curve_name (cv, name), 16);
      if (cv->never_flips)
        printf ("  never           —          —                     ");
      else
        printf ("  %3d of %-3d    %6.3f     %8.4f              ", cv->flip_k, m, cv->fraction,
                cv->p_target[cv->flip_k]);
      for (int k = 0; k < MIN (4, m); k++)
        printf ("%s%s", k > 0 ? " " : "", r->labels[cv->order[k]]);
      printf ("%s\n", m > 4 ? " …" : "");
    }
  if (e->n_random > 0)
    {
      med = sc_erasure_random_median (e, &never);
      if (never)
        printf ("  median of the %d random orderings: never\n", e->n_random);
      else
        printf ("  median of the %d random orderings: %.3f\n", e->n_random, med);
    }
}

static void
print_text (const AblateResult *r, const AblateOptions *o, const char *db_path)
{
  int target, top1;
  double logp, loss = NAN;

  if (r->heads != NULL)
    target = r->heads->target, top1 = r->heads->top1_clean, logp = r->heads->logp_clean,
    loss = r->heads->loss_clean;
  else if (r->loo != NULL)
    target = r->loo->target, top1 = r->loo->top1_clean, logp = r->loo->logp_clean,
    loss = r->loo->loss_clean;
  else if (r->perm != NULL)
    target = r->perm->target, top1 = r->perm->top1_clean, logp = r->perm->logp_clean,
    loss = r->perm->loss_clean;
  else
    target = r->erasure->target, top1 = r->erasure->top1_clean, logp = r->erasure->logp_clean;
  printf ("run %" G_GINT64_FORMAT " (%zu tokens), %s: target %d at the last position "
          "(ln p = %.4f, clean top-1 %d)", r->run.id, r->n_tokens, r->run.model_name, target,
          logp, top1);
  if (isfinite (loss))
    printf (", mean loss %.4f nats", loss);
  printf ("\n");
  print_source (r, db_path);
  if (r->heads != NULL)
    print_heads (r->heads, r->mean, o->top);
  else if (r->loo != NULL)
    print_tokens (r);
  else if (r->perm != NULL)
    print_permute (r->perm, o->top);
  else
    print_erasure (r);
}

/* ------------------------------------------------------------------------------------ */
/* JSON                                                                                  */

static void
json_spread (JsonBuilder *b, const char *name, const ScSpread *s)
{
  saccade_json_begin_object (b, name);
  saccade_json_double (b, "min", s->min);
  saccade_json_double (b, "q25", s->q25);
  saccade_json_double (b, "median", s->median);
  saccade_json_double (b, "q75", s->q75);
  saccade_json_double (b, "max", s->max);
  json_builder_end_object (b);
}

static void
json_permute (JsonBuilder *b, const ScPermutationResult *p)
{
  saccade_json_int (b, "permutations", p->n_permutations);
  /* A string: a 64-bit seed does not survive a JSON number read as a double. */
  {
    char seed[24];
    g_snprintf (seed, sizeof seed, "%" G_GUINT64_FORMAT, (guint64) p->seed);
    saccade_json_string (b, "seed", seed);
  }
  saccade_json_string (b, "quantiles", "type 7 (linear interpolation between order statistics)");
  saccade_json_begin_array (b, "heads"); /* layer-major */
  for (int i = 0; i < p->n_studied; i++)
    {
      const ScPermutationHead *h = &p->heads[i];
      json_builder_begin_object (b);
      saccade_json_int (b, "layer", h->layer);
      saccade_json_int (b, "head", h->head);
      json_spread (b, "tv", &h->tv);
      json_spread (b, "jsd", &h->jsd);
      json_spread (b, "delta_logp", &h->delta_logp);
      json_spread (b, "delta_loss", &h->delta_loss);
      saccade_json_double (b, "flip_share", h->flip_share);
      saccade_json_begin_array (b, "each");
      for (int k = 0; k < p->n_permutations; k++)
        {
          json_builder_begin_object (b);
          saccade_json_int (b, "k", k);
          {
            char seed[24];
            g_snprintf (seed, sizeof seed, "%" G_GUINT64_FORMAT,
                        (guint64) sc_permutation_seed (p->seed, k));
            saccade_json_string (b, "seed", seed);
          }
          saccade_study_json_effect (b, &p->effects[(gsize) i * p->n_permutations + k]);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static void
json_erasure (JsonBuilder *b, const AblateResult *r)
{
  const ScErasureResult *e = r->erasure;
  bool never = false;
  double med = sc_erasure_random_median (e, &never);

  saccade_json_string (b, "kind", e->kind == SC_ERASE_DROP ? "drop" : "mask");
  saccade_json_int (b, "seeds", e->n_random);
  {
    char seed[24];
    g_snprintf (seed, sizeof seed, "%" G_GUINT64_FORMAT, (guint64) e->seed);
    saccade_json_string (b, "seed", seed);
  }
  saccade_json_double (b, "random_median_fraction", med);
  saccade_json_bool (b, "random_median_never", never);
  saccade_json_begin_array (b, "orderings");
  for (int c = 0; c < e->n_curves; c++)
    {
      const ScErasureCurve *cv = &e->curves[c];
      json_builder_begin_object (b);
      saccade_json_string (b, "ordering", sc_erase_ordering_name (cv->ordering));
      if (cv->seed_index >= 0)
        saccade_json_int (b, "seed_index", cv->seed_index);
      saccade_json_bool (b, "never_flips", cv->never_flips);
      if (cv->never_flips)
        {
          json_builder_set_member_name (b, "flip_k");
          json_builder_add_null_value (b);
        }
      else
        saccade_json_int (b, "flip_k", cv->flip_k);
      saccade_json_double (b, "fraction", cv->fraction);
      saccade_json_begin_array (b, "order");
      for (int k = 0; k < e->n_tokens - 1; k++)
        json_builder_add_int_value (b, cv->order[k]);
      json_builder_end_array (b);
      saccade_json_begin_array (b, "curve");
      for (int k = 0; k < e->n_tokens; k++)
        {
          json_builder_begin_object (b);
          saccade_json_int (b, "k", k);
          saccade_json_double (b, "fraction_removed", (double) k / (e->n_tokens - 1));
          saccade_json_double (b, "p_target", cv->p_target[k]);
          saccade_json_double (b, "tv", cv->tv[k]);
          saccade_json_int (b, "top1", cv->top1[k]);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static void
print_json (const AblateResult *r, const AblateRequest *q)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  int target, top1;
  double logp, loss = NAN;

  if (r->heads != NULL)
    target = r->heads->target, top1 = r->heads->top1_clean, logp = r->heads->logp_clean,
    loss = r->heads->loss_clean;
  else if (r->loo != NULL)
    target = r->loo->target, top1 = r->loo->top1_clean, logp = r->loo->logp_clean,
    loss = r->loo->loss_clean;
  else if (r->perm != NULL)
    target = r->perm->target, top1 = r->perm->top1_clean, logp = r->perm->logp_clean,
    loss = r->perm->loss_clean;
  else
    target = r->erasure->target, top1 = r->erasure->top1_clean, logp = r->erasure->logp_clean;
  json_builder_begin_object (b);
  saccade_json_int (b, "run", r->run.id);
  saccade_json_string (b, "model", r->run.model_name);
  saccade_json_string (b, "study", r->study->kind->id);
  saccade_json_string (b, "source", r->reused ? "reused" : "computed");
  saccade_json_int (b, "study_id", r->study_id);
  saccade_json_double (b, "seconds", r->reused ? NAN : r->seconds);
  saccade_json_int (b, "n_tokens", (gint64) r->n_tokens);
  saccade_json_int (b, "target", target);
  saccade_json_int (b, "top1_clean", top1);
  saccade_json_double (b, "logp_clean", logp);
  saccade_json_double (b, "loss_clean", loss);
  saccade_json_begin_array (b, "tokens");
  for (size_t i = 0; i < r->n_tokens; i++)
    {
      json_builder_begin_object (b);
      saccade_json_int (b, "pos", (gint64) i);
      saccade_json_int (b, "id", r->tokens[i].id);
      saccade_json_string (b, "label", r->labels[i]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  if (r->heads != NULL)
    {
      const ScHeadSweepResult *h = r->heads;
      saccade_json_string (b, "mode", r->mean ? "mean" : "zero");
      if (r->mean)
        saccade_json_string (b, "means", SACCADE_REFERENCE_SET);
      saccade_json_begin_array (b, "heads"); /* layer-major */
      for (int i = 0; i < h->n_layers * h->n_heads; i++)
        {
          json_builder_begin_object (b);
          saccade_json_int (b, "layer", i / h->n_heads);
          saccade_json_int (b, "head", i % h->n_heads);
          saccade_study_json_effect (b, &h->heads[i]);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
    }
  else if (r->loo != NULL)
    for (int kind = 0; kind < 2; kind++)
      {
        const ScAblationEffect *e = kind == 0 ? r->loo->mask : r->loo->drop;
        saccade_json_begin_array (b, kind == 0 ? "mask" : "drop");
        for (int i = 0; i < r->loo->n_tokens - 1; i++) /* the query is never erased */
          {
            json_builder_begin_object (b);
            saccade_json_int (b, "pos", i);
            saccade_json_int (b, "id", r->tokens[i].id);
            saccade_json_string (b, "label", r->labels[i]);
            saccade_study_json_effect (b, &e[i]);
            json_builder_end_object (b);
          }
        json_builder_end_array (b);
      }
  else if (r->perm != NULL)
    json_permute (b, r->perm);
  else
    json_erasure (b, r);
  json_builder_end_object (b);
  saccade_json_print (b);
}

/* ------------------------------------------------------------------------------------ */
/* The erasure figure                                                                    */

static gboolean
write_erasure_figure (const AblateResult *r, const char *path, GError **error)
{
  const ScErasureResult *e = r->erasure;
  g_autofree SaccadeErasureSeries *se = g_new0 (SaccadeErasureSeries, e->n_curves);
  g_autofree char *title = NULL;
  SaccadeErasureFigure f = { 0 };
  bool never = false;

  for (int c = 0; c < e->n_curves; c++)
    {
      const ScErasureCurve *cv = &e->curves[c];
      se[c] = (SaccadeErasureSeries) { sc_erase_ordering_name (cv->ordering), cv->p_target,
                                       cv->fraction, cv->ordering == SC_ERASE_ORDER_RANDOM };
    }
  /* The sentence on one line, cut at 60 characters: the title sets the figure's width. */
  g_autofree char *text = g_utf8_make_valid (r->run.text != NULL ? r->run.text : "",
                                             (gssize) r->run.text_len);
  g_strdelimit (text, "\n\r\t", ' ');
  if (g_utf8_strlen (text, -1) > 60)
    {
      g_autofree char *cut = g_utf8_substring (text, 0, 59);
      g_free (text);
      text = g_strconcat (cut, "…", NULL);
    }
  title = g_strdup_printf ("Erasure curves (%s, %s): “%s”", r->run.model_name,
                           e->kind == SC_ERASE_DROP ? "tokens dropped" : "tokens masked", text);
  f.n_points = e->n_tokens;
  f.n_series = e->n_curves;
  f.series = se;
  f.random_median = sc_erasure_random_median (e, &never);
  f.title = title;
  return saccade_figure_export_erasure (&f, path, error);
}

/* ------------------------------------------------------------------------------------ */
/* --bench                                                                               */

/* The head sweep of an @len-token sentence against n_layers × n_heads plain forward passes
 * (all logits, as the sweep computes them), medians of @repeats. */
static int
run_bench (ScModel *model, const AblateOptions *o)
{
  static const char TEXT[] = "The cat chased the ball because it was tired, and the dog "
                             "watched from the porch while the children laughed. ";
  const ScModelInfo *info = sc_model_info (model);
  const int reps = MAX (1, o->bench_repeats), heads = (int) (info->n_layers * info->n_heads);
  const int n = MAX (2, o->bench_len);
  g_autofree double *sweep = g_new (double, reps), *full = g_new (double, reps);
  g_autofree double *plain = g_new (double, reps);
  g_autofree int32_t *ids = g_new (int32_t, n);
  g_autofree float *logits = NULL;
  g_autoptr (GArray) tok = NULL;
  g_autoptr (GError) error = NULL;
  SaccadeCliSession cs = { 0 };
  ScAblationParams p = { .target = -1 };
  ScForwardOptions all = { .all_logits = true };
  ScError err = { 0 };
  int rep, i, k;

  if ((tok = saccade_tokenize (model, TEXT, -1, FALSE, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  for (i = 0; i < n; i++) /* the text repeated up to n tokens */
    ids[i] = g_array_index (tok, int32_t, i % tok->len);
  if (!saccade_cli_session_open (&cs, &o->common, model, &error))
    return saccade_cli_fail (g_steal_pointer (&error));
  logits = g_new (float, (gsize) n * info->n_vocab);
  for (rep = 0; rep < reps; rep++)
    {
      ScHeadSweepResult *r = NULL;
      double one[5];
      gint64 t0;

      for (k = 0; k < 2; k++)
        {
          p.full_recompute = k == 1;
          t0 = g_get_monotonic_time ();
          if (sc_head_sweep_run (cs.session, model, ids, n, &p, NULL, NULL, &r, &err) != SC_OK)
            {
              saccade_cli_session_close (&cs);
              saccade_set_error_from_sc (&error, &err);
              return saccade_cli_fail (g_steal_pointer (&error));
            }
          sc_head_sweep_result_free (r);
          (k == 0 ? sweep : full)[rep] = (g_get_monotonic_time () - t0) / 1e6;
        }
      /* One plain pass, median of 5, times the number of heads. */
      for (k = 0; k < 5; k++)
        {
          t0 = g_get_monotonic_time ();
          sc_forward (cs.session, ids, n, &all, logits, NULL);
          one[k] = (g_get_monotonic_time () - t0) / 1e6;
        }
      plain[rep] = saccade_median (one, 5) * heads;
    }
  saccade_cli_session_close (&cs);
  {
    const double ms = saccade_median (sweep, reps), mf = saccade_median (full, reps);
    const double mp = saccade_median (plain, reps);
    if (o->common.json)
      {
        g_autoptr (JsonBuilder) b = json_builder_new ();
        json_builder_begin_object (b);
        saccade_json_string (b, "model", info->name);
        saccade_json_int (b, "n_tokens", n);
        saccade_json_int (b, "heads", heads);
        saccade_json_int (b, "repeats", reps);
        saccade_json_double (b, "sweep_s", ms);
        saccade_json_double (b, "sweep_full_recompute_s", mf);
        saccade_json_double (b, "plain_passes_s", mp);
        saccade_json_double (b, "ratio", ms / mp);
        saccade_json_double (b, "ratio_full_recompute", mf / mp);
        json_builder_end_object (b);
        saccade_json_print (b);
      }
    else
      printf ("%s, %d heads, %d tokens, median of %d:\n  sweep with prefix reuse %.3f s, "
              "%d plain passes %.3f s: ratio %.3f\n  sweep recomputing every layer %.3f s: "
              "ratio %.3f\n", info->name, heads, n, reps, ms, heads, mp, ms / mp, mf, mf / mp);
  }
  return 0;
}

/* ------------------------------------------------------------------------------------ */

int
saccade_cmd_ablate (int argc, char **argv)
{
  AblateOptions o = { .top = 10, .bench_len = 64, .bench_repeats = 3, .permute = INT_MIN,
                      .seeds = INT_MIN };
  GOptionEntry entries[] = {
    { "heads", 0, 0, G_OPTION_ARG_NONE, &o.heads, "zero-ablate each head in turn", NULL },
    { "tokens", 0, 0, G_OPTION_ARG_NONE, &o.tokens, "mask, then drop, each token in turn", NULL },
    { "permute", 0, 0, G_OPTION_ARG_INT, &o.permute,
      "permute each head's attention rows N times (seeded)", "N" },
    { "erasure", 0, 0, G_OPTION_ARG_NONE, &o.erasure,
      "erase tokens in order of attention, leave-one-out and at random until the top-1 flips",
      NULL },
    { "layer", 0, 0, G_OPTION_ARG_STRING, &o.layers,
      "--permute: only the heads of these layers (default: every head)", "L[,L...]" },
    { "gradient", 0, 0, G_OPTION_ARG_NONE, &o.gradient,
      "--erasure: also order by gradient importance (needs issue 12's backward pass)", NULL },
    { "mean", 0, 0, G_OPTION_ARG_NONE, &o.mean, "--heads: mean-ablation instead of zero", NULL },
    { "target", 0, 0, G_OPTION_ARG_STRING, &o.target_text,
      "the token whose probability is measured: an id or a one-token text (default: the clean "
      "top-1)", "TOKEN" },
    { "seed", 0, 0, G_OPTION_ARG_STRING, &o.seed_text,
      "--permute, --erasure: base seed (0)", "S" },
    { "seeds", 0, 0, G_OPTION_ARG_INT, &o.seeds, "--erasure: random orderings (8)", "R" },
    { "kind", 0, 0, G_OPTION_ARG_STRING, &o.kind,
      "--erasure: mask (default: out of every attention row) or drop (from the input)",
      "mask|drop" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output,
      "--erasure: write the figure (.png, .svg, .pdf)", "FIGURE" },
    SACCADE_STORE_CLI_DB_OPTION (&o.db),
    { "recompute", 0, 0, G_OPTION_ARG_NONE, &o.recompute, "compute even if stored", NULL },
    { "top", 0, 0, G_OPTION_ARG_INT, &o.top, "--heads, --permute: rows of the table (10)", "N" },
    { "bench", 0, 0, G_OPTION_ARG_NONE, &o.bench,
      "time the head sweep against plain passes (no RUN)", NULL },
    { "len", 0, 0, G_OPTION_ARG_INT, &o.bench_len, "--bench: tokens (64)", "N" },
    { "repeats", 0, 0, G_OPTION_ARG_INT, &o.bench_repeats, "--bench: repeats (3)", "N" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("RUN --heads|--tokens|--permute N|"
                                                         "--erasure - ablation studies of a "
                                                         "stored run");
  g_autoptr (GError) error = NULL;
  g_autofree char *db_path = NULL;
  AblateRequest q = { 0 };
  AblateResult r = { 0 };
  ScModel *model = NULL;
  gint64 run = 0;
  int rc = 0;

  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &o.common);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if (o.bench)
    {
      if ((model = saccade_cli_load_model (&o.common, &error)) == NULL)
        return saccade_cli_fail (g_steal_pointer (&error));
      rc = run_bench (model, &o);
      sc_model_free (model);
      return rc;
    }
  if (argc != 2)
    {
      fprintf (stderr, "saccade: ablate takes one run id (see `saccade runs`)\n");
      rc = 2;
    }
  else if (!saccade_store_cli_run_id (argv[1], &run))
    rc = 2;
  else if (!check_options (&o, &q, &error))
    {
      fprintf (stderr, "saccade: %s\n", error->message);
      rc = 2;
    }
  if (rc != 0)
    goto out;
  db_path = saccade_db_path (o.db);
  if (!read_run (db_path, run, &r, &error))
    rc = saccade_cli_fail (g_steal_pointer (&error));
  else if ((model = saccade_cli_load_model (&o.common, &error)) == NULL)
    rc = saccade_cli_fail (g_steal_pointer (&error));
  else if (!saccade_cli_parse_token (model, "--target", o.target_text, &q.target, &error)
           || !parse_layers (model, &q, &error))
    {
      fprintf (stderr, "saccade: %s\n", error->message);
      rc = 2;
    }
  else
    {
      if (!get_result (model, &o, &q, db_path, &r, &error))
        rc = saccade_cli_fail (g_steal_pointer (&error));
      else
        {
          if (o.common.json)
            print_json (&r, &q);
          else
            print_text (&r, &o, db_path);
          if (o.output != NULL)
            {
              if (!write_erasure_figure (&r, o.output, &error))
                rc = saccade_cli_fail (g_steal_pointer (&error));
              else if (!o.common.json)
                printf ("wrote %s\n", o.output);
            }
        }
    }
out:
  if (q.layers != NULL)
    g_array_unref (q.layers);
  if (q.head_list != NULL)
    g_array_unref (q.head_list);
  ablate_result_clear (&r);
  sc_model_free (model);
  g_free (o.db);
  g_free (o.target_text);
  g_free (o.seed_text);
  g_free (o.kind);
  g_free (o.output);
  g_free (o.layers);
  return rc;
}
