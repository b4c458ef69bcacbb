/* saccade-cli-ablate.c — `saccade ablate RUN --heads|--tokens|--permute N|--erasure`: the
 * ablation studies of a stored run: each head zero-ablated in turn, each token masked then
 * dropped in turn, each head's attention rows permuted N times (Jain & Wallace §4), and the
 * erasure curves until the prediction flips (Serrano & Smith). Parse -> a result
 * (engine/study/ computes it, or reads it back from the store when the same model file and
 * parameters were studied before) -> text (a table) or JSON (every number; NaN as null),
 * and for --erasure optionally a figure (-o); --heads --last measures the last position only
 * (ScAblationParams.last_only); --heads --first-pass K ranks every head by its first-order
 * estimate (one backward) and ablates only the top K exactly (engine/study/
 * sc-ablation-first.h). With --bench it times the head sweep against
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

#include "engine/study/sc-ablation-first.h"
#include "engine/study/sc-ablation-study.h"
#include "engine/study/sc-erasure-study.h"
#include "engine/study/sc-permutation-study.h"
#include "engine/analysis/sc-rank.h"
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
  SaccadeCliTarget target;
  char *db, *seed_text, *kind, *output, *layers;
  int top, bench_len, bench_repeats, permute, seeds, first_pass;
  gboolean heads, tokens, erasure, mean, gradient, recompute, bench, last, stack;
  SaccadeCliFigure figure;                   /* --preset, --width-mm, ... */
  SaccadeFigureExportOptions figure_options; /* parsed */
} AblateOptions;

/* The parsed request: which study and its engine parameters. */
typedef struct {
  Study study;
  int target;         /* −1: the clean top-1 */
  int contrast;       /* −1: none (--heads, --tokens only) */
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
 * @q (the target needs the model: saccade_parse_token). */
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
  if (o->first_pass != INT_MIN && q->study != STUDY_HEADS)
    return BAD ("--first-pass applies to --heads (the head sweep's first pass)");
  if (o->first_pass != INT_MIN
      && (o->first_pass < 1 || o->first_pass > SC_ABLATION_FIRST_MAX_TOP))
    return BAD ("--first-pass takes the number of heads to ablate exactly, 1 to %d, not %d",
                SC_ABLATION_FIRST_MAX_TOP, o->first_pass);
  if (o->last && q->study != STUDY_HEADS)
    return BAD ("--last applies to --heads (the last position's measures only)");
  if (o->stack && (!o->last || o->mean || o->first_pass != INT_MIN))
    return BAD ("--stack applies to --heads --last with zero-ablation (each layer's runs "
                "stacked), not with --mean or --first-pass");
  if (o->target.contrast != NULL && q->study != STUDY_HEADS && q->study != STUDY_TOKENS)
    return BAD ("--contrast applies to --heads and --tokens");
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
  ScAblationFirstParams first;
  ScPermutationParams permutation;
  ScErasureParams erasure;
} StudyParams;

/* The study kind @q asks for and its params (in @p). */
static const ScStudyKind *
study_params (const AblateOptions *o, const AblateRequest *q, StudyParams *p,
              const void **params)
{
  p->ablation = (ScAblationParams) { .target = q->target, .contrast = q->contrast,
                                     .mode = SC_ABLATE_ZERO, .last_only = o->last,
                                     .stack_layers = o->stack };
  p->first = (ScAblationFirstParams) { .ablation = p->ablation, .top = o->first_pass };
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
      if (o->first_pass != INT_MIN)
        {
          *params = &p->first;
          return o->mean ? &sc_study_kind_heads_first_mean : &sc_study_kind_heads_first;
        }
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

  /* The run must be of the loaded model file, by fingerprint (said with the paths here). */
  if (!saccade_cli_identify_run_model (model, &o->common, &r->run, &sm, error))
    return FALSE;
  kind = study_params (o, q, &p, &params);
  r->mean = kind == &sc_study_kind_heads_mean || kind == &sc_study_kind_heads_first_mean;
  /* --gradient is never stored: the engine refuses it (issue 12), even over a stored study. */
  r->study = saccade_cli_study_get (kind, params, model, &sm, &o->common, db_path, r->run.id,
                                    o->recompute || o->gradient, &r->warning, error);
  if (r->study == NULL)
    return FALSE;
  switch (q->study)
    {
    case STUDY_HEADS:
      if (o->first_pass == INT_MIN)
        r->heads = r->study->result;
      break;
    case STUDY_TOKENS: r->loo = r->study->result; break;
    case STUDY_PERMUTE: r->perm = r->study->result; break;
    case STUDY_ERASURE: r->erasure = r->study->result; break;
    }
  return TRUE;
}

/* ------------------------------------------------------------------------------------ */
/* Text                                                                                  */

/* ------------------------------------------------------------------------------------ */
/* JSON                                                                                  */

/* ------------------------------------------------------------------------------------ */
/* The erasure figure                                                                    */

static gboolean
write_erasure_figure (const AblateResult *r, const char *path,
                      const SaccadeFigureExportOptions *opts, GError **error)
{
  const ScErasureResult *e = r->erasure;
  g_autofree SaccadeErasureSeries *se = g_new0 (SaccadeErasureSeries, e->n_curves);
  g_autofree const char **names = g_new0 (const char *, e->n_curves);
  g_autofree char *title = NULL;
  SaccadeErasureFigure f;

  for (int c = 0; c < e->n_curves; c++)
    names[c] = sc_erase_ordering_name (e->curves[c].ordering);
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
  saccade_erasure_figure (e, names, title, se, &f);
  return saccade_figure_export_erasure (&f, path, opts, error);
}

/* ------------------------------------------------------------------------------------ */
/* --bench                                                                               */

/* The plain passes interleaved with a sweep: one after every BENCH_EVERY-th head, timed
 * apart from the sweep (the same session: a run without keep_residuals on the same ids
 * leaves the kept residuals as they are, sc-forward.h). */
enum { BENCH_EVERY = 9 };
typedef struct {
  ScSession *session;
  const int32_t *ids;
  int n, done;
  float *logits;
  double plain_s; /* the plain passes' time */
  int plain_n;
} BenchPlain;

static bool
bench_plain (void *user, double fraction)
{
  BenchPlain *bp = user;
  const ScForwardOptions all = { .all_logits = true };
  gint64 t0;

  (void) fraction;
  if (bp->done++ % BENCH_EVERY != BENCH_EVERY / 2)
    return true;
  t0 = g_get_monotonic_time ();
  sc_forward (bp->session, bp->ids, bp->n, &all, bp->logits, NULL);
  bp->plain_s += (g_get_monotonic_time () - t0) / 1e6;
  bp->plain_n++;
  return true;
}

/* The JSON object both benchmarks print, begun with the model, the length and the heads. */
static JsonBuilder *
bench_json_begin (const ScModelInfo *info, int n, int heads)
{
  JsonBuilder *b = json_builder_new ();

  json_builder_begin_object (b);
  saccade_json_string (b, "model", info->name);
  saccade_json_int (b, "n_tokens", n);
  saccade_json_int (b, "heads", heads);
  return b;
}

/* The head sweep of an @len-token sentence against n_layers × n_heads plain forward passes
 * (all logits, as the all-position sweep computes them), three sweeps per repeat: the
 * last-position fast path (last_only), the same with each layer's runs stacked
 * (stack_layers) and the all-position sweep with prefix reuse; with --recompute a fourth,
 * every layer recomputed (full_recompute). Each sweep is paired with
 * plain passes interleaved with it (bench_plain: one after every ninth head, their mean
 * times the number of heads; their time is not the sweep's), so the load of the moment hits
 * both sides of a ratio; the ratios are the medians of those paired ratios over the
 * repeats. */
static int
run_bench (ScModel *model, const AblateOptions *o)
{
  static const char TEXT[] = "The cat chased the ball because it was tired, and the dog "
                             "watched from the porch while the children laughed. ";
  enum { LAST, STACK, ALL, FULL, N_SWEEPS };
  static const char *const TIME_NAME[N_SWEEPS] = { "sweep_last_s", "sweep_last_stacked_s",
                                                   "sweep_s", "sweep_full_recompute_s" };
  static const char *const RATIO_NAME[N_SWEEPS] = { "ratio_last", "ratio_last_stacked",
                                                    "ratio", "ratio_full_recompute" };
  const ScModelInfo *info = sc_model_info (model);
  const int reps = MAX (1, o->bench_repeats), heads = (int) (info->n_layers * info->n_heads);
  const int n = MAX (2, o->bench_len), n_sweeps = o->recompute ? N_SWEEPS : FULL;
  g_autofree double *times = g_new (double, (gsize) N_SWEEPS * reps);
  g_autofree double *plain = g_new (double, (gsize) N_SWEEPS * reps);
  g_autofree double *ratios = g_new (double, (gsize) N_SWEEPS * reps);
  g_autofree int32_t *ids = g_new (int32_t, n);
  g_autofree float *logits = NULL;
  g_autoptr (GArray) tok = NULL;
  g_autoptr (GError) error = NULL;
  SaccadeCliSession cs = { 0 };
  ScAblationParams p = { .target = -1, .contrast = -1 };
  ScError err = { 0 };
  double med_t[N_SWEEPS], med_p[N_SWEEPS], med_r[N_SWEEPS];
  int rep, i, w;

  if ((tok = saccade_tokenize (model, TEXT, -1, FALSE, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  for (i = 0; i < n; i++) /* the text repeated up to n tokens */
    ids[i] = g_array_index (tok, int32_t, i % tok->len);
  if (!saccade_cli_session_open (&cs, &o->common, model, &error))
    return saccade_cli_fail (g_steal_pointer (&error));
  logits = g_new (float, (gsize) n * info->n_vocab);
  for (rep = 0; rep < reps; rep++)
    for (w = 0; w < n_sweeps; w++)
      {
        ScHeadSweepResult *r = NULL;
        BenchPlain bp = { cs.session, ids, n, 0, logits, 0.0, 0 };
        gint64 t0;

        p.last_only = w == LAST || w == STACK;
        p.stack_layers = w == STACK;
        p.full_recompute = w == FULL;
        t0 = g_get_monotonic_time ();
        if (sc_head_sweep_run (cs.session, model, ids, n, &p, bench_plain, &bp, &r, &err)
            != SC_OK)
          {
            saccade_cli_session_close (&cs);
            saccade_set_error_from_sc (&error, &err);
            return saccade_cli_fail (g_steal_pointer (&error));
          }
        sc_head_sweep_result_free (r);
        times[w * reps + rep] = (g_get_monotonic_time () - t0) / 1e6 - bp.plain_s;
        plain[w * reps + rep] = bp.plain_s / MAX (1, bp.plain_n) * heads;
        ratios[w * reps + rep] = times[w * reps + rep] / plain[w * reps + rep];
      }
  saccade_cli_session_close (&cs);
  for (w = 0; w < N_SWEEPS; w++) /* NaN: not timed */
    med_t[w] = med_p[w] = med_r[w] = NAN;
  for (w = 0; w < n_sweeps; w++)
    {
      med_t[w] = saccade_median (times + w * reps, reps);
      med_p[w] = saccade_median (plain + w * reps, reps);
      med_r[w] = saccade_median (ratios + w * reps, reps);
    }
  if (o->common.json)
    {
      g_autoptr (JsonBuilder) b = bench_json_begin (info, n, heads);
      const SaccadeBenchTime t[] = {
        { TIME_NAME[LAST], med_t[LAST] }, { TIME_NAME[STACK], med_t[STACK] },
        { TIME_NAME[ALL], med_t[ALL] }, { TIME_NAME[FULL], med_t[FULL] },
        { "plain_passes_s", med_p[ALL] },
      };
      saccade_json_bench_sweep (b, reps, t, n_sweeps == N_SWEEPS ? 5 : 3, NULL, 0);
      if (n_sweeps < N_SWEEPS)
        saccade_json_double (b, "plain_passes_s", med_p[ALL]);
      for (w = 0; w < n_sweeps; w++) /* the medians of the paired ratios */
        saccade_json_double (b, RATIO_NAME[w], med_r[w]);
      json_builder_end_object (b);
      saccade_json_print (b);
    }
  else
    {
      printf ("%s, %d heads, %d tokens, median of %d (each sweep paired with %d plain passes: "
              "those timed between its heads):\n  last position only (Δ log p, TV, JSD) %.3f s, plain %.3f "
              "s: ratio %.3f\n  the same, each layer's runs stacked %.3f s, plain %.3f s: "
              "ratio %.3f\n  all positions (Δ loss too) %.3f s, plain %.3f s: ratio "
              "%.3f\n", info->name, heads, n, reps, heads, med_t[LAST], med_p[LAST],
              med_r[LAST], med_t[STACK], med_p[STACK], med_r[STACK], med_t[ALL], med_p[ALL],
              med_r[ALL]);
      if (n_sweeps == N_SWEEPS)
        printf ("  every layer recomputed %.3f s, plain %.3f s: ratio %.3f\n", med_t[FULL],
                med_p[FULL], med_r[FULL]);
    }
  return 0;
}

/* --bench --first-pass K: per repeat the whole head sweep, then the first pass and its top K
 * ablated exactly (sc_head_first_run), on the same session and ids; the medians of the
 * times, of the paired ratios (first pass + exact) ÷ sweep, and of Spearman's ρ between the
 * estimates and the whole sweep's Δ log p over every head (docs/benchmarks.md, "Head sweep
 * with a first pass"). */
static int
run_bench_first (ScModel *model, const AblateOptions *o)
{
  static const char TEXT[] = "The cat chased the ball because it was tired, and the dog "
                             "watched from the porch while the children laughed. ";
  enum { FULL, FIRST, EXACT, RATIO, RHO, N_COLS };
  const ScModelInfo *info = sc_model_info (model);
  const int reps = MAX (1, o->bench_repeats), heads = (int) (info->n_layers * info->n_heads);
  const int n = MAX (2, o->bench_len);
  g_autofree double *v = g_new (double, (gsize) N_COLS * reps);
  g_autofree double *x = g_new (double, heads), *y = g_new (double, heads);
  g_autofree int32_t *ids = g_new (int32_t, n);
  g_autoptr (GArray) tok = NULL;
  g_autoptr (GError) error = NULL;
  SaccadeCliSession cs = { 0 };
  ScGrad *grad = NULL;
  const ScAblationFirstParams fp = { .ablation = { .target = -1, .contrast = -1 },
                                     .top = o->first_pass };
  ScError err = { 0 };
  double med[N_COLS];

  if ((tok = saccade_tokenize (model, TEXT, -1, FALSE, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  for (int i = 0; i < n; i++) /* the text repeated up to n tokens */
    ids[i] = g_array_index (tok, int32_t, i % tok->len);
  if (!saccade_cli_session_open (&cs, &o->common, model, &error))
    return saccade_cli_fail (g_steal_pointer (&error));
  if (sc_grad_new (cs.session, &grad, &err) != SC_OK)
    goto fail;
  for (int rep = 0; rep < reps; rep++)
    {
      ScHeadSweepResult *full = NULL;
      ScHeadFirstResult *r = NULL;
      ScSpearman sp;
      gint64 t0 = g_get_monotonic_time ();

      if (sc_head_sweep_run (cs.session, model, ids, n, &fp.ablation, NULL, NULL, &full, &err)
          != SC_OK)
        goto fail;
      v[FULL * reps + rep] = (g_get_monotonic_time () - t0) / 1e6;
      if (sc_head_first_run (cs.session, grad, model, ids, n, &fp, NULL, NULL, &r, &err)
          != SC_OK)
        {
          sc_head_sweep_result_free (full);
          goto fail;
        }
      v[FIRST * reps + rep] = r->first_s;
      v[EXACT * reps + rep] = r->exact_s;
      v[RATIO * reps + rep] = (r->first_s + r->exact_s) / v[FULL * reps + rep];
      for (int i = 0; i < heads; i++)
        x[i] = r->estimate[i], y[i] = full->heads[i].next.delta_logp;
      v[RHO * reps + rep] = sc_spearman_rho (x, y, heads, &sp, &err) == SC_OK ? sp.rho : NAN;
      sc_head_sweep_result_free (full);
      sc_head_first_result_free (r);
    }
  sc_grad_free (grad);
  saccade_cli_session_close (&cs);
  for (int c = 0; c < N_COLS; c++)
    med[c] = saccade_median (v + c * reps, reps);
  if (o->common.json)
    {
      g_autoptr (JsonBuilder) b = bench_json_begin (info, n, heads);
      saccade_json_int (b, "exact_heads", MIN (o->first_pass, heads));
      saccade_json_int (b, "repeats", reps);
      saccade_json_double (b, "sweep_s", med[FULL]);
      saccade_json_double (b, "first_pass_s", med[FIRST]);
      saccade_json_double (b, "exact_s", med[EXACT]);
      saccade_json_double (b, "ratio", med[RATIO]);
      saccade_json_double (b, "spearman_rho_all_heads", med[RHO]);
      json_builder_end_object (b);
      saccade_json_print (b);
    }
  else
    printf ("%s, %d heads, %d tokens, median of %d:\n  whole sweep %.3f s\n  first pass "
            "%.3f s + the top %d ablated exactly %.3f s: ratio %.3f of the sweep\n  Spearman "
            "ρ of the estimates and the sweep's Δ log p over every head: %.3f\n", info->name,
            heads, n, reps, med[FULL], med[FIRST], MIN (o->first_pass, heads), med[EXACT],
            med[RATIO], med[RHO]);
  return 0;
fail:
  sc_grad_free (grad);
  saccade_cli_session_close (&cs);
  saccade_set_error_from_sc (&error, &err);
  return saccade_cli_fail (g_steal_pointer (&error));
}

/* ------------------------------------------------------------------------------------ */

int
saccade_cmd_ablate (int argc, char **argv)
{
  AblateOptions o = { .top = 10, .bench_len = 64, .bench_repeats = 3, .permute = INT_MIN,
                      .seeds = INT_MIN, .first_pass = INT_MIN, .figure = SACCADE_CLI_FIGURE_INIT };
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
      "--erasure: also order by gradient importance (needs the backward pass, which Gemma 3 lacks)", NULL },
    { "mean", 0, 0, G_OPTION_ARG_NONE, &o.mean, "--heads: mean-ablation instead of zero", NULL },
    { "first-pass", 0, 0, G_OPTION_ARG_INT, &o.first_pass,
      "--heads: estimate every head's effect to first order (one backward pass), then ablate "
      "only the top K exactly (needs the architecture's backward pass)", "K" },
    { "last", 0, 0, G_OPTION_ARG_NONE, &o.last,
      "--heads: the last position's measures only (no Δ loss), in about half the time", NULL },
    { "stack", 0, 0, G_OPTION_ARG_NONE, &o.stack,
      "--heads --last: each layer's runs stacked into one batch (faster; within a stated "
      "bound of the runs one at a time: docs/benchmarks.md)", NULL },
    SACCADE_CLI_TARGET_OPTIONS (&o.target, "whose probability is measured"),
    { "seed", 0, 0, G_OPTION_ARG_STRING, &o.seed_text,
      "--permute, --erasure: base seed (0)", "S" },
    { "seeds", 0, 0, G_OPTION_ARG_INT, &o.seeds, "--erasure: random orderings (8)", "R" },
    { "kind", 0, 0, G_OPTION_ARG_STRING, &o.kind,
      "--erasure: mask (default: out of every attention row) or drop (from the input)",
      "mask|drop" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output,
      "--erasure: write the figure (.png, .svg, .pdf)", "FIGURE" },
    SACCADE_CLI_FIGURE_OPTIONS (&o.figure),
    SACCADE_STORE_CLI_DB_OPTION (&o.db),
    SACCADE_STORE_CLI_RECOMPUTE_OPTION (&o.recompute),
    { "top", 0, 0, G_OPTION_ARG_INT, &o.top, "--heads, --permute: rows of the table (10)", "N" },
    { "bench", 0, 0, G_OPTION_ARG_NONE, &o.bench,
      "time the head sweep against plain passes (no RUN; with --recompute also every "
      "layer recomputed; with --first-pass K against the first pass and its top K)", NULL },
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
      if (o.first_pass != INT_MIN
          && (o.first_pass < 1 || o.first_pass > SC_ABLATION_FIRST_MAX_TOP))
        rc = 2, fprintf (stderr, "saccade: --first-pass takes the number of heads to ablate "
                         "exactly, 1 to %d, not %d\n", SC_ABLATION_FIRST_MAX_TOP, o.first_pass);
      else
        rc = o.first_pass != INT_MIN ? run_bench_first (model, &o) : run_bench (model, &o);
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
  else if (!saccade_cli_figure_check (&o.figure, o.output != NULL, "-o FIGURE",
                                      &o.figure_options, &rc))
    ;
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
  else if (!saccade_cli_target_parse (model, &o.target, &q.target, &q.contrast, &error)
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
            {
              g_autoptr (JsonBuilder) b =
                saccade_study_outputs_json (r.study, &r.run, r.tokens,
                                            (const char *const *) r.labels, NULL);
              saccade_json_print (b);
            }
          else
            {
              g_autofree char *text =
                saccade_study_outputs_text (r.study, model, &r.run,
                                            (const char *const *) r.labels, NULL, db_path,
                                            r.warning, o.top);
              fputs (text, stdout);
            }
          if (o.output != NULL)
            {
              if (!write_erasure_figure (&r, o.output, &o.figure_options, &error))
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
  saccade_cli_target_clear (&o.target);
  g_free (o.seed_text);
  g_free (o.kind);
  g_free (o.output);
  g_free (o.layers);
  saccade_cli_figure_clear (&o.figure);
  return rc;
}
