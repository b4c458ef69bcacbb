/* saccade-ablation.c — compute or reuse the studies of a stored run (header).
 *
 * saccade_ablation_get() in four passes, on the calling thread's own store connection:
 *   1. open the store (writable, else read-only to reuse what is there) and check the run:
 *      still there, captured with this model file, its tokens within the vocabulary; the
 *      kind's canonical params (its engine file's *_params_json, filled as its verb does);
 *   2. reuse: the latest complete study of the kind with those params, read back checked
 *      by the kind's *_load;
 *   3. compute on the run's ids (mean-ablation: the reference means first, read or
 *      computed by saccade_head_means_get), the progress callback turning a fired
 *      GCancellable into the study's "stop" (it returns false, the study ends with
 *      SC_ERR_CANCELLED);
 *   4. store in one transaction — after checking the run once more, so a run deleted
 *      while its study ran gets no orphan study. DLA then looks for the zero-ablation sweep
 *      to set beside it.
 * Faithfulness goes through saccade_faithfulness_get() after pass 1 (it reuses, computes and
 * stores on its own, the leave-one-out it runs included). saccade_ablation_async() runs it
 * in a GTask worker under the loaded model's session lock and coalesces progress onto the
 * caller's main context.
 */
#define G_LOG_DOMAIN "saccade-ablation"

#include "app/core/saccade-ablation.h"

#include <glib/gi18n.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-head-means.h"
#include "app/core/saccade-paths.h"

static const char *const KIND_IDS[SACCADE_ABLATION_N_KINDS] = {
  [SACCADE_ABLATION_HEADS] = SC_ABLATION_KIND_HEADS,
  [SACCADE_ABLATION_TOKENS] = SC_ABLATION_KIND_TOKENS,
  [SACCADE_ABLATION_HEADS_MEAN] = SC_ABLATION_KIND_HEADS,
  [SACCADE_ABLATION_PERMUTE] = SC_PERMUTATION_KIND,
  [SACCADE_ABLATION_ERASURE] = SC_ERASURE_KIND,
  [SACCADE_ABLATION_DLA] = SC_DLA_KIND,
  [SACCADE_ABLATION_FAITH] = SC_FAITH_KIND,
};
static const char *const KIND_SHORT[SACCADE_ABLATION_N_KINDS] = {
  [SACCADE_ABLATION_HEADS] = "heads",
  [SACCADE_ABLATION_TOKENS] = "tokens",
  [SACCADE_ABLATION_HEADS_MEAN] = "heads-mean",
  [SACCADE_ABLATION_PERMUTE] = "permute",
  [SACCADE_ABLATION_ERASURE] = "erasure",
  [SACCADE_ABLATION_DLA] = "dla",
  [SACCADE_ABLATION_FAITH] = "faithfulness",
};

const char *
saccade_ablation_kind_id (SaccadeAblationKind kind)
{
  return (unsigned) kind < SACCADE_ABLATION_N_KINDS ? KIND_IDS[kind] : NULL;
}

const char *
saccade_ablation_kind_name (SaccadeAblationKind kind)
{
  return (unsigned) kind < SACCADE_ABLATION_N_KINDS ? KIND_SHORT[kind] : NULL;
}

gboolean
saccade_ablation_kind_from_id (const char *id, SaccadeAblationKind *out)
{
  /* In enum order, so "ablate-heads" is the zero-ablation sweep (HEADS comes first). */
  for (int k = 0; id != NULL && k < SACCADE_ABLATION_N_KINDS; k++)
    if (g_str_equal (id, KIND_IDS[k]) || g_str_equal (id, KIND_SHORT[k]))
      {
        *out = (SaccadeAblationKind) k;
        return TRUE;
      }
  return FALSE;
}

void
saccade_ablation_free (SaccadeAblation *a)
{
  if (a == NULL)
    return;
  sc_head_sweep_result_free (a->heads);
  sc_token_loo_result_free (a->tokens);
  sc_permutation_result_free (a->perm);
  sc_erasure_result_free (a->erasure);
  sc_dla_result_free (a->dla);
  saccade_faithfulness_free (a->faith);
  sc_head_sweep_result_free (a->dla_sweep);
  g_free (a->faith_best_row);
  g_free (a);
}

int
saccade_ablation_target (const SaccadeAblation *a)
{
  if (a->heads != NULL)
    return a->heads->target;
  if (a->tokens != NULL)
    return a->tokens->target;
  if (a->perm != NULL)
    return a->perm->target;
  if (a->erasure != NULL)
    return a->erasure->target;
  if (a->dla != NULL)
    return a->dla->target;
  return a->faith->result->target;
}

int
saccade_ablation_top1_clean (const SaccadeAblation *a)
{
  if (a->heads != NULL)
    return a->heads->top1_clean;
  if (a->tokens != NULL)
    return a->tokens->top1_clean;
  if (a->perm != NULL)
    return a->perm->top1_clean;
  if (a->erasure != NULL)
    return a->erasure->top1_clean;
  if (a->dla != NULL)
    return a->dla->top1_clean;
  return a->faith->result->top1_clean;
}

double
saccade_ablation_logp_clean (const SaccadeAblation *a)
{
  if (a->heads != NULL)
    return a->heads->logp_clean;
  if (a->tokens != NULL)
    return a->tokens->logp_clean;
  if (a->perm != NULL)
    return a->perm->logp_clean;
  if (a->erasure != NULL)
    return a->erasure->logp_clean;
  return NAN; /* DLA measures a logit; faithfulness stores no log-probability */
}

/* ------------------------------------------------------------------------------------ */
/* Metrics, ranking, CSV                                                                 */

static const char *const METRIC_IDS[SACCADE_ABLATION_N_METRICS] = {
  "delta_logp", "tv", "jsd", "delta_loss",
};

const char *
saccade_ablation_metric_id (SaccadeAblationMetric m)
{
  return (unsigned) m < SACCADE_ABLATION_N_METRICS ? METRIC_IDS[m] : NULL;
}

double
saccade_ablation_effect_value (const ScAblationEffect *e, SaccadeAblationMetric m)
{
  switch (m)
    {
    case SACCADE_ABLATION_METRIC_DELTA_LOGP:
      return e->next.delta_logp;
    case SACCADE_ABLATION_METRIC_TV:
      return e->next.tv;
    case SACCADE_ABLATION_METRIC_JSD:
      return e->next.jsd;
    case SACCADE_ABLATION_METRIC_DELTA_LOSS:
      return e->delta_loss;
    default:
      return NAN;
    }
}

typedef struct {
  const ScAblationEffect *e;
  SaccadeAblationMetric m;
} RankBy;

static int
rank_cmp (gconstpointer pa, gconstpointer pb, gpointer user_data)
{
  const RankBy *r = user_data;
  const int ia = *(const int *) pa, ib = *(const int *) pb;
  const double a = saccade_ablation_effect_value (&r->e[ia], r->m);
  const double b = saccade_ablation_effect_value (&r->e[ib], r->m);
  const double va = isnan (a) ? -1 : fabs (a), vb = isnan (b) ? -1 : fabs (b);

  return va > vb ? -1 : va < vb ? 1 : ia - ib;
}

int *
saccade_ablation_rank_heads (const ScHeadSweepResult *r, SaccadeAblationMetric m)
{
  const int n = r->n_layers * r->n_heads;
  int *order = g_new (int, n);
  RankBy by = { r->heads, m };

  for (int i = 0; i < n; i++)
    order[i] = i;
  g_qsort_with_data (order, n, sizeof *order, rank_cmp, &by);
  return order;
}

static void
csv_number (GString *out, double v)
{
  char num[G_ASCII_DTOSTR_BUF_SIZE];

  /* NaN (not measured) is an empty field; else 17 significant digits: the stored double. */
  g_string_append_c (out, ',');
  if (!isnan (v))
    g_string_append (out, g_ascii_formatd (num, sizeof num, "%.17g", v));
}

static void
csv_metrics (GString *out, const ScAblationEffect *e)
{
  for (int m = 0; m < SACCADE_ABLATION_N_METRICS; m++)
    csv_number (out, saccade_ablation_effect_value (e, (SaccadeAblationMetric) m));
}

/* The clean run's numbers and the ids every row repeats (each row complete on its own). */
static void
csv_clean (GString *out, const SaccadeAblation *a, double loss_clean)
{
  g_string_append_printf (out, ",%d,%d", saccade_ablation_target (a),
                          saccade_ablation_top1_clean (a));
  csv_number (out, saccade_ablation_logp_clean (a));
  csv_number (out, loss_clean);
  g_string_append_printf (out, ",%lld,%lld\n", (long long) a->run_id, (long long) a->study_id);
}

static const char CSV_CLEAN_COLUMNS[] = "target,top1_clean,logp_clean,loss_clean,run,study\n";

static void
csv_label (GString *out, const char *label)
{
  /* The label as the figures show it, quoted ("" for a quote inside). */
  g_string_append_c (out, '"');
  for (const char *p = label; *p != '\0'; p++)
    {
      if (*p == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
}

/* pos's token id and label, or −1 and "" when the run's tokens do not match. */
static void
csv_token (GString *out, int pos, const ScStoreToken *tokens, const char *const *labels,
           gboolean named)
{
  g_string_append_printf (out, ",%d,", named && tokens != NULL && pos >= 0 ? tokens[pos].id : -1);
  csv_label (out, named && labels != NULL && pos >= 0 ? labels[pos] : "");
}

static const char *const SPREAD_IDS[5] = { "min", "q25", "median", "q75", "max" };

static void
csv_spread (GString *out, const ScSpread *s)
{
  csv_number (out, s->min);
  csv_number (out, s->q25);
  csv_number (out, s->median);
  csv_number (out, s->q75);
  csv_number (out, s->max);
}

/* Permutation: one row per studied head, every quantile of every metric. */
static GBytes *
csv_permutation (const SaccadeAblation *a)
{
  const ScPermutationResult *r = a->perm;
  GString *out = g_string_new ("layer,head");

  for (int m = 0; m < SACCADE_ABLATION_N_METRICS; m++)
    for (int q = 0; q < 5; q++)
      g_string_append_printf (out, ",%s_%s", METRIC_IDS[m], SPREAD_IDS[q]);
  g_string_append_printf (out, ",flip_share,permutations,seed,%s", CSV_CLEAN_COLUMNS);
  for (int i = 0; i < r->n_studied; i++)
    {
      const ScPermutationHead *h = &r->heads[i];
      g_string_append_printf (out, "%d,%d", h->layer, h->head);
      csv_spread (out, &h->delta_logp);
      csv_spread (out, &h->tv);
      csv_spread (out, &h->jsd);
      csv_spread (out, &h->delta_loss);
      csv_number (out, h->flip_share);
      g_string_append_printf (out, ",%d,%" G_GUINT64_FORMAT, r->n_permutations,
                              (guint64) r->seed);
      csv_clean (out, a, r->loss_clean);
    }
  return g_string_free_to_bytes (out);
}

/* Erasure: one row per ordering and step k (k = 0: the clean run, nothing erased). */
static GBytes *
csv_erasure (const SaccadeAblation *a, const ScStoreToken *tokens, const char *const *labels,
             int n)
{
  const ScErasureResult *r = a->erasure;
  const gboolean named = n == r->n_tokens;
  GString *out = g_string_new ("ordering,seed_index,k,fraction_removed,erased_pos,"
                               "erased_token_id,erased_label,p_target,tv,top1,flip_k,kind,");

  g_string_append (out, CSV_CLEAN_COLUMNS);
  for (int c = 0; c < r->n_curves; c++)
    {
      const ScErasureCurve *cv = &r->curves[c];
      for (int k = 0; k < r->n_tokens; k++)
        {
          const int pos = k > 0 ? cv->order[k - 1] : -1;
          g_string_append_printf (out, "%s,%d,%d", sc_erase_ordering_name (cv->ordering),
                                  cv->seed_index, k);
          csv_number (out, (double) k / (r->n_tokens - 1));
          g_string_append_printf (out, ",%d", pos);
          csv_token (out, pos, tokens, labels, named);
          csv_number (out, cv->p_target[k]);
          csv_number (out, cv->tv[k]);
          g_string_append_printf (out, ",%d,%d,%s", cv->top1[k], cv->flip_k,
                                  r->kind == SC_ERASE_DROP ? "drop" : "mask");
          csv_clean (out, a, NAN);
        }
    }
  return g_string_free_to_bytes (out);
}

/* DLA: one row per head (its zero-ablation Δ log p and TV beside it when a sweep is
 * stored), then the embedding and each layer's MLP (head −1). */
static GBytes *
csv_dla (const SaccadeAblation *a)
{
  const ScDlaResult *d = a->dla;
  const ScHeadSweepResult *sw = a->dla_sweep;
  GString *out = g_string_new ("component,layer,head,dla,zero_delta_logp,zero_tv,"
                               "target,top1_clean,logit_clean,rms,run,study\n");

#define DLA_TAIL()                                                                         \
  do                                                                                       \
    {                                                                                      \
      g_string_append_printf (out, ",%d,%d", d->target, d->top1_clean);                   \
      csv_number (out, d->logit_clean);                                                    \
      csv_number (out, d->rms);                                                            \
      g_string_append_printf (out, ",%lld,%lld\n", (long long) a->run_id,                 \
                              (long long) a->study_id);                                    \
    }                                                                                      \
  while (0)
  for (int i = 0; i < d->n_layers * d->n_heads; i++)
    {
      g_string_append_printf (out, "head,%d,%d", i / d->n_heads, i % d->n_heads);
      csv_number (out, d->heads[i]);
      csv_number (out, sw != NULL ? sw->heads[i].next.delta_logp : NAN);
      csv_number (out, sw != NULL ? sw->heads[i].next.tv : NAN);
      DLA_TAIL ();
    }
  g_string_append (out, "embed,-1,-1");
  csv_number (out, d->embed);
  g_string_append (out, ",,");
  DLA_TAIL ();
  for (int l = 0; l < d->n_layers; l++)
    {
      g_string_append_printf (out, "mlp,%d,-1", l);
      csv_number (out, d->mlp[l]);
      g_string_append (out, ",,");
      DLA_TAIL ();
    }
#undef DLA_TAIL
  return g_string_free_to_bytes (out);
}

/* Faithfulness: one row per compared token: its leave-one-out importance and every
 * attention source's (the best head's last). */
static GBytes *
csv_faith (const SaccadeAblation *a, const ScStoreToken *tokens, const char *const *labels,
           int n)
{
  const ScFaithResult *r = a->faith->result;
  const gboolean named = n == r->n_tokens;
  GString *out = g_string_new ("pos,token_id,label,loo,last_mean,rollout,flow,best_head,"
                               "best_head_attention,metric,kind,target,top1_clean,run,study\n");

  for (int j = 0; j < r->n_items; j++)
    {
      g_string_append_printf (out, "%d", j);
      csv_token (out, j, tokens, labels, named);
      csv_number (out, r->loo[j]);
      for (int k = 0; k < SC_FAITH_N_SOURCES; k++)
        csv_number (out, r->attn[k][j]);
      if (a->faith_best_head >= 0)
        g_string_append_printf (out, ",%d.%d", a->faith_best_head / r->n_heads,
                                a->faith_best_head % r->n_heads);
      else
        g_string_append_c (out, ',');
      csv_number (out, a->faith_best_row != NULL ? a->faith_best_row[j] : NAN);
      g_string_append_printf (out, ",%s,%s,%d,%d,%lld,%lld\n", sc_faith_metric_id (r->metric),
                              sc_faith_erase_id (r->kind), r->target, r->top1_clean,
                              (long long) a->run_id, (long long) a->study_id);
    }
  return g_string_free_to_bytes (out);
}

GBytes *
saccade_ablation_csv (const SaccadeAblation *a, const ScStoreToken *tokens,
                      const char *const *labels, int n)
{
  GString *out;

  g_return_val_if_fail (a != NULL, NULL);
  if (a->perm != NULL)
    return csv_permutation (a);
  if (a->erasure != NULL)
    return csv_erasure (a, tokens, labels, n);
  if (a->dla != NULL)
    return csv_dla (a);
  if (a->faith != NULL)
    return csv_faith (a, tokens, labels, n);
  g_return_val_if_fail (a->heads != NULL || a->tokens != NULL, NULL);
  if (a->heads != NULL)
    {
      const ScHeadSweepResult *r = a->heads;
      out = g_string_new ("layer,head");
      for (int m = 0; m < SACCADE_ABLATION_N_METRICS; m++)
        g_string_append_printf (out, ",%s", METRIC_IDS[m]);
      g_string_append_printf (out, ",flipped,top1_ablated,%s", CSV_CLEAN_COLUMNS);
      for (int i = 0; i < r->n_layers * r->n_heads; i++)
        {
          g_string_append_printf (out, "%d,%d", i / r->n_heads, i % r->n_heads);
          csv_metrics (out, &r->heads[i]);
          g_string_append_printf (out, ",%d,%d", r->heads[i].flipped ? 1 : 0,
                                  r->heads[i].next.top1_ablated);
          csv_clean (out, a, r->loss_clean);
        }
      return g_string_free_to_bytes (out);
    }

  const ScTokenLooResult *r = a->tokens;
  const gboolean named = n == r->n_tokens;
  out = g_string_new ("pos,token_id,label");
  for (int s = 0; s < 2; s++)
    for (int m = 0; m < SACCADE_ABLATION_N_METRICS; m++)
      g_string_append_printf (out, ",%s_%s", s == 0 ? "mask" : "drop", METRIC_IDS[m]);
  g_string_append_printf (out, ",mask_flipped,mask_top1,drop_flipped,drop_top1,%s",
                          CSV_CLEAN_COLUMNS);
  for (int j = 0; j < r->n_tokens; j++)
    {
      const char *label = named && labels != NULL ? labels[j] : "";
      /* The label as the figures show it, quoted ("" for a quote inside). */
      g_string_append_printf (out, "%d,%d,\"", j, named && tokens != NULL ? tokens[j].id : -1);
      for (const char *p = label; *p != '\0'; p++)
        {
          if (*p == '"')
            g_string_append_c (out, '"');
          g_string_append_c (out, *p);
        }
      g_string_append_c (out, '"');
      csv_metrics (out, &r->mask[j]);
      csv_metrics (out, &r->drop[j]);
      g_string_append_printf (out, ",%d,%d,%d,%d", r->mask[j].flipped ? 1 : 0,
                              r->mask[j].next.top1_ablated, r->drop[j].flipped ? 1 : 0,
                              r->drop[j].next.top1_ablated);
      csv_clean (out, a, r->loss_clean);
    }
  return g_string_free_to_bytes (out);
}

/* ------------------------------------------------------------------------------------ */
/* Pass 1: the run                                                                       */

static void
set_run_gone (GError **error, gint64 run_id)
{
  /* Translators: a study was asked of a run that was deleted meanwhile. */
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
               _("Run %lld is no longer in the database"), (long long) run_id);
}

/* The ids of run @run_id, checked against @ident and @info; NULL with @error. */
static int32_t *
read_run_ids (ScStore *store, const ScStoreModel *ident, const ScModelInfo *info,
              gint64 run_id, int *n_out, GError **error)
{
  ScStoreRunInfo run = { 0 };
  ScStoreToken *tokens = NULL;
  size_t n = 0;
  ScError err = { 0 };
  char hex[SC_SHA256_HEX_SIZE];
  int32_t *ids = NULL;
  ScStatus st;

  st = sc_store_get_run (store, run_id, &run, &err);
  if (st == SC_OK)
    st = sc_store_read_tokens (store, run_id, &tokens, &n, &err);
  if (st == SC_ERR_NOT_FOUND)
    set_run_gone (error, run_id);
  else if (st != SC_OK)
    saccade_set_error_from_sc (error, &err);
  if (st != SC_OK)
    goto out;
  sc_sha256_hex (ident->sha256, hex);
  if (strcmp (hex, run.model_sha256) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   /* Translators: the run, its model's name and the loaded model's. */
                   _("Run %lld was captured with %s, another model file than the loaded %s"),
                   (long long) run_id, run.model_name, ident->name);
      goto out;
    }
  if (n < 1 || n > INT_MAX)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("Run %lld has no tokens"), (long long) run_id);
      goto out;
    }
  ids = g_new (int32_t, n);
  for (size_t i = 0; i < n; i++)
    {
      /* An untrusted store: the engine checks ids too, but say which token is wrong. */
      if (tokens[i].id < 0 || (uint32_t) tokens[i].id >= info->n_vocab)
        {
          g_set_error (error, SACCADE_ERROR, SC_ERR_FORMAT,
                       "run %lld: token %zu has id %d, outside the vocabulary of %u",
                       (long long) run_id, i, tokens[i].id, info->n_vocab);
          g_clear_pointer (&ids, g_free);
          goto out;
        }
      ids[i] = tokens[i].id;
    }
  *n_out = (int) n;
out:
  sc_store_tokens_free (tokens);
  sc_store_run_info_clear (&run);
  return ids;
}

static gboolean
run_exists (ScStore *store, gint64 run_id)
{
  ScStoreRunInfo run = { 0 };
  ScStatus st = sc_store_get_run (store, run_id, &run, NULL);

  sc_store_run_info_clear (&run);
  return st != SC_ERR_NOT_FOUND;
}

/* When study @id was stored (0 when it cannot be read). */
static gint64
study_created (ScStore *store, gint64 id)
{
  ScStoreStudyData *d = NULL;
  gint64 ms = 0;

  if (sc_store_read_study (store, id, &d, NULL) == SC_OK)
    ms = d->created_ms;
  sc_store_study_data_free (d);
  return ms;
}

/* ------------------------------------------------------------------------------------ */
/* Passes 2-4                                                                            */

typedef struct {
  SaccadeAblationProgress progress;
  gpointer user_data;
  GCancellable *cancellable;
  double base, span;  /* this part's share of the whole bar */
} Progress;

static bool
on_progress (void *user, double fraction)
{
  Progress *p = user;
  if (p->progress != NULL)
    p->progress (p->base + p->span * fraction, p->user_data);
  return !g_cancellable_is_cancelled (p->cancellable);
}

static void
on_means_progress (double fraction, gpointer user)
{
  on_progress (user, fraction);
}

/* The engine parameters of each kind, from @p, as its verb sets them. */
typedef struct {
  ScAblationParams ablation;
  ScPermutationParams permutation;
  ScErasureParams erasure;
  ScFaithParams faith;
} KindParams;

static void
kind_params (SaccadeAblationKind kind, const SaccadeAblationParams *p, KindParams *k)
{
  k->ablation = (ScAblationParams) { .target = p->target, .mode = SC_ABLATE_ZERO };
  if (kind == SACCADE_ABLATION_HEADS_MEAN)
    {
      k->ablation.mode = SC_ABLATE_MEAN;
      k->ablation.mean_set = SACCADE_REFERENCE_SET;
    }
  k->permutation = (ScPermutationParams) {
    .target = p->target,
    .n_permutations = p->n_permutations > 0 ? p->n_permutations
                                            : SACCADE_ABLATION_DEFAULT_PERMUTATIONS,
    .seed = p->seed,
  };
  k->erasure = (ScErasureParams) { .target = p->target, .kind = p->erase_kind,
                                   .n_random = p->n_random, .seed = p->seed };
  /* `saccade faithfulness RUN`'s defaults: TV of masking, top-k 0 (= 3) */
  k->faith = (ScFaithParams) { SC_FAITH_METRIC_TV, SC_FAITH_ERASE_MASK, 0, p->target };
}

static int
kind_params_json (SaccadeAblationKind kind, gint64 run_id, const KindParams *k,
                  const int32_t *ids, int n, char *buf, size_t size)
{
  switch (kind)
    {
    case SACCADE_ABLATION_HEADS:
    case SACCADE_ABLATION_HEADS_MEAN:
    case SACCADE_ABLATION_TOKENS:
      return sc_ablation_params_json (KIND_IDS[kind], run_id, &k->ablation, buf, size);
    case SACCADE_ABLATION_PERMUTE:
      return sc_permutation_params_json (run_id, &k->permutation, buf, size);
    case SACCADE_ABLATION_ERASURE:
      return sc_erasure_params_json (run_id, &k->erasure, buf, size);
    case SACCADE_ABLATION_DLA:
      return sc_dla_params_json (run_id, k->ablation.target, buf, size);
    case SACCADE_ABLATION_FAITH:
      return sc_faith_params_json (run_id, ids, n, &k->faith, buf, size);
    default:
      return -1;
    }
}

/* The stored study's length in tokens (to refuse one that does not describe the run). */
static int
result_n_tokens (const SaccadeAblation *a)
{
  if (a->heads != NULL)
    return a->heads->n_tokens;
  if (a->tokens != NULL)
    return a->tokens->n_tokens;
  if (a->perm != NULL)
    return a->perm->n_tokens;
  if (a->erasure != NULL)
    return a->erasure->n_tokens;
  if (a->dla != NULL)
    return a->dla->n_tokens;
  return -1;
}

static void
clear_results (SaccadeAblation *a)
{
  g_clear_pointer (&a->heads, sc_head_sweep_result_free);
  g_clear_pointer (&a->tokens, sc_token_loo_result_free);
  g_clear_pointer (&a->perm, sc_permutation_result_free);
  g_clear_pointer (&a->erasure, sc_erasure_result_free);
  g_clear_pointer (&a->dla, sc_dla_result_free);
}

static ScStatus
load_kind (ScStore *store, const ScModelInfo *info, const ScStoreModel *ident,
           const KindParams *k, const char *pj, SaccadeAblation *a, int64_t *id, ScError *err)
{
  switch (a->kind)
    {
    case SACCADE_ABLATION_HEADS:
    case SACCADE_ABLATION_HEADS_MEAN:
      return sc_head_sweep_load (store, info, ident->sha256, pj, &a->heads, id, err);
    case SACCADE_ABLATION_TOKENS:
      return sc_token_loo_load (store, info, ident->sha256, pj, &a->tokens, id, err);
    case SACCADE_ABLATION_PERMUTE:
      return sc_permutation_load (store, info, ident->sha256, pj, &a->perm, id, err);
    case SACCADE_ABLATION_ERASURE:
      return sc_erasure_load (store, info, ident->sha256, pj, &a->erasure, id, err);
    case SACCADE_ABLATION_DLA:
      return sc_dla_load (store, info, ident->sha256, pj, &a->dla, id, err);
    default:
      return SC_ERR_INVALID_ARG;
    }
}

static ScStatus
run_kind (ScSession *session, ScModel *model, const int32_t *ids, int n, const KindParams *k,
          Progress *prog, SaccadeAblation *a, ScError *err)
{
  switch (a->kind)
    {
    case SACCADE_ABLATION_HEADS:
    case SACCADE_ABLATION_HEADS_MEAN:
      return sc_head_sweep_run (session, model, ids, n, &k->ablation, on_progress, prog,
                                &a->heads, err);
    case SACCADE_ABLATION_TOKENS:
      return sc_token_loo_run (session, model, ids, n, &k->ablation, on_progress, prog,
                               &a->tokens, err);
    case SACCADE_ABLATION_PERMUTE:
      return sc_permutation_run (session, model, ids, n, &k->permutation, on_progress, prog,
                                 &a->perm, err);
    case SACCADE_ABLATION_ERASURE:
      return sc_erasure_run (session, model, ids, n, &k->erasure, on_progress, prog,
                             &a->erasure, err);
    case SACCADE_ABLATION_DLA:
      {
        /* one clean pass: no progress between, so say it is done when it is */
        ScStatus st = sc_dla_run (session, model, ids, n, k->ablation.target, &a->dla, err);
        if (st == SC_OK && !on_progress (prog, 1.0))
          {
            g_clear_pointer (&a->dla, sc_dla_result_free);
            st = SC_ERR_CANCELLED;
          }
        return st;
      }
    default:
      return SC_ERR_INVALID_ARG;
    }
}

static ScStatus
store_kind (ScStore *store, const ScStoreModel *ident, const char *pj, const SaccadeAblation *a,
            int64_t *id, ScError *err)
{
  switch (a->kind)
    {
    case SACCADE_ABLATION_HEADS:
    case SACCADE_ABLATION_HEADS_MEAN:
      return sc_head_sweep_store (store, ident, pj, a->heads, id, err);
    case SACCADE_ABLATION_TOKENS:
      return sc_token_loo_store (store, ident, pj, a->tokens, id, err);
    case SACCADE_ABLATION_PERMUTE:
      return sc_permutation_store (store, ident, pj, a->perm, id, err);
    case SACCADE_ABLATION_ERASURE:
      return sc_erasure_store (store, ident, pj, a->erasure, id, err);
    case SACCADE_ABLATION_DLA:
      return sc_dla_store (store, ident, pj, a->dla, id, err);
    default:
      return SC_ERR_INVALID_ARG;
    }
}

/* DLA: the stored zero-ablation sweep of the same run whose target is the DLA's, tried with
 * the target named and, when it is the clean top-1, as the default target (as `saccade dla`
 * does), and ρ of DLA against its Δ log p. */
static void
dla_find_sweep (ScStore *store, const ScModelInfo *info, const ScStoreModel *ident,
                SaccadeAblation *a)
{
  const ScDlaResult *d = a->dla;
  const int tries[2] = { d->target, -1 };
  const int n = d->n_layers * d->n_heads;

  a->dla_rho.rho = a->dla_rho.p = NAN;
  for (int k = 0; k < 2 && a->dla_sweep == NULL; k++)
    {
      const ScAblationParams p = { .target = tries[k], .mode = SC_ABLATE_ZERO };
      ScHeadSweepResult *sw = NULL;
      char pj[128];
      if (k == 1 && d->target != d->top1_clean)
        break;
      if (sc_ablation_params_json (SC_ABLATION_KIND_HEADS, a->run_id, &p, pj, sizeof pj) < 0
          || sc_head_sweep_load (store, info, ident->sha256, pj, &sw, NULL, NULL) != SC_OK)
        continue;
      if (sw->target != d->target || sw->n_tokens != d->n_tokens
          || sw->n_layers * sw->n_heads != n)
        sc_head_sweep_result_free (sw);
      else
        a->dla_sweep = sw;
    }
  if (a->dla_sweep != NULL)
    {
      g_autofree double *dlp = g_new (double, n);
      for (int i = 0; i < n; i++)
        dlp[i] = a->dla_sweep->heads[i].next.delta_logp;
      if (sc_spearman_rho (d->heads, dlp, n, &a->dla_rho, NULL) != SC_OK)
        a->dla_rho.rho = a->dla_rho.p = NAN;
    }
}

/* FAITH: the best head and its last query's row (from the computed rows, else the run's
 * stored head). */
static void
faith_best_head (ScStore *store, SaccadeAblation *a)
{
  const ScFaithResult *r = a->faith->result;
  const int n_h = r->n_layers * r->n_heads;
  int best = -1;

  for (int h = 0; h < n_h; h++)
    if (r->heads[h].status == SC_OK && !isnan (r->heads[h].tau)
        && (best < 0 || r->heads[h].tau > r->heads[best].tau))
      best = h;
  a->faith_best_head = best;
  if (best < 0)
    return;
  if (r->head_rows != NULL)
    {
      a->faith_best_row = g_new (double, r->n_items);
      for (int j = 0; j < r->n_items; j++)
        a->faith_best_row[j] = r->head_rows[(size_t) best * r->n_items + j];
      return;
    }
  {
    ScStoreHead head = { 0 };
    if (sc_store_read_head (store, a->run_id, best / r->n_heads, best % r->n_heads, &head, NULL)
          == SC_OK
        && head.n_query == (uint32_t) r->n_tokens && head.n_key == (uint32_t) r->n_tokens)
      {
        const float *last = head.probs + (size_t) (r->n_tokens - 1) * head.n_key;
        a->faith_best_row = g_new (double, r->n_items);
        for (int j = 0; j < r->n_items; j++)
          a->faith_best_row[j] = last[j];
      }
    sc_store_head_clear (&head);
  }
}

/* FAITH, after pass 1: saccade_faithfulness_get() reuses or computes (and stores, with the
 * leave-one-out it runs) on its own connections; STORED_ONLY first checks that a study is
 * there. */
static gboolean
get_faith (ScModel *model, const ScStoreModel *ident, ScSession *session, ScStore *store,
           const char *db_path, const int32_t *ids, int n, const KindParams *k,
           const char *pj, SaccadeAblationFlags flags, Progress *prog, char **store_warning,
           SaccadeAblation *a, GError **error)
{
  const ScModelInfo *info = sc_model_info (model);
  ScFaithResult *probe = NULL;
  ScError err = { 0 };
  ScStatus st;

  if (flags & SACCADE_ABLATION_STORED_ONLY)
    {
      st = sc_faith_load (store, info, ident->sha256, pj, &k->faith, &probe, NULL, &err);
      sc_faith_result_free (probe);
      if (st != SC_OK)
        {
          if (st == SC_ERR_NOT_FOUND)
            g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                         "run %lld has no stored %s study with these parameters",
                         (long long) a->run_id, SC_FAITH_KIND);
          else
            saccade_set_error_from_sc (error, &err);
          return FALSE;
        }
    }
  if (n < SC_FAITH_MIN_TOKENS)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   /* Translators: faithfulness needs this many tokens; the run has fewer. */
                   _("Faithfulness compares at least two tokens and the query: run %lld has "
                     "%d tokens, it needs %d"), (long long) a->run_id, n, SC_FAITH_MIN_TOKENS);
      return FALSE;
    }
  a->faith = saccade_faithfulness_get (model, ident->path, session, db_path, a->run_id, ids, n,
                                       &k->faith, FALSE,
                                       (flags & SACCADE_ABLATION_RECOMPUTE) != 0,
                                       prog->progress, prog->user_data, prog->cancellable,
                                       store_warning, error);
  if (a->faith == NULL)
    return FALSE;
  a->study_id = a->faith->study_id;
  a->reused = a->faith->reused;
  a->seconds = a->faith->reused ? 0 : a->faith->seconds;
  if (a->study_id > 0)
    a->created_ms = study_created (store, a->study_id);
  faith_best_head (store, a);
  return TRUE;
}

SaccadeAblation *
saccade_ablation_get (ScModel *model, const ScStoreModel *ident, ScSession *session,
                      const char *db_path, gint64 run_id, SaccadeAblationKind kind,
                      const SaccadeAblationParams *params, SaccadeAblationFlags flags,
                      SaccadeAblationProgress progress, gpointer user_data,
                      GCancellable *cancellable, char **store_warning, GError **error)
{
  static const SaccadeAblationParams defaults = { .target = -1,
                                                  .n_random = SACCADE_ABLATION_DEFAULT_SEEDS };
  const ScModelInfo *info;
  const char *kind_id = saccade_ablation_kind_id (kind);
  g_autoptr (SaccadeAblation) a = NULL;
  g_autoptr (SaccadeHeadMeans) hm = NULL;
  g_autofree int32_t *ids = NULL;
  Progress prog = { progress, user_data, cancellable, 0, 1 };
  KindParams kp;
  ScError err = { 0 };
  ScStore *store = NULL;
  char pj[256];
  int64_t id = 0;
  int n = 0;
  gint64 t0;
  ScStatus st;

  g_return_val_if_fail (model != NULL && ident != NULL, NULL);
  info = sc_model_info (model);
  if (params == NULL)
    params = &defaults;
  if (kind_id == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "ablation: no study kind %d", (int) kind);
      return NULL;
    }
  if (db_path == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("No database is open: a study belongs to a stored run"));
      return NULL;
    }
  if (session == NULL && !(flags & SACCADE_ABLATION_STORED_ONLY))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "ablation: computing a study needs a session");
      return NULL;
    }
  kind_params (kind, params, &kp);

  /* 1. the store and the run. */
  if (!(flags & SACCADE_ABLATION_STORED_ONLY))
    store = saccade_store_open (db_path, TRUE, NULL);
  if (store == NULL && (store = saccade_store_open (db_path, FALSE, &err)) == NULL)
    {
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  if ((ids = read_run_ids (store, ident, info, run_id, &n, error)) == NULL)
    goto fail;
  if (kind_params_json (kind, run_id, &kp, ids, n, pj, sizeof pj) < 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "ablation: the parameters of a %s study are out of range", kind_id);
      goto fail;
    }

  a = g_new0 (SaccadeAblation, 1);
  a->kind = kind;
  a->run_id = run_id;
  a->faith_best_head = -1;
  a->dla_rho.rho = a->dla_rho.p = NAN;
  if (kind == SACCADE_ABLATION_FAITH)
    {
      if (!get_faith (model, ident, session, store, db_path, ids, n, &kp, pj, flags, &prog,
                      store_warning, a, error))
        goto fail;
      sc_store_close (store);
      return g_steal_pointer (&a);
    }

  /* 2. reuse. */
  if (!(flags & SACCADE_ABLATION_RECOMPUTE))
    {
      st = load_kind (store, info, ident, &kp, pj, a, &id, &err);
      if (st == SC_OK && result_n_tokens (a) == n)
        {
          a->study_id = id;
          a->created_ms = study_created (store, id);
          a->reused = TRUE;
          if (kind == SACCADE_ABLATION_DLA)
            dla_find_sweep (store, info, ident, a);
          sc_store_close (store);
          return g_steal_pointer (&a);
        }
      /* A stored study of another length does not describe this run: compute anew. */
      clear_results (a);
      if (st != SC_OK && st != SC_ERR_NOT_FOUND)
        g_message ("study of run %lld not reused: %s", (long long) run_id, err.message);
    }
  if (flags & SACCADE_ABLATION_STORED_ONLY)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "run %lld has no stored %s study with these parameters",
                   (long long) run_id, kind_id);
      goto fail;
    }

  /* 3. compute (the reference means first, for mean-ablation). */
  t0 = g_get_monotonic_time ();
  if (kind == SACCADE_ABLATION_HEADS_MEAN)
    {
      g_autofree char *means_warning = NULL;
      /* When the means are computed, they take the first 30 % of the bar: the set's passes
       * are about a third of a 270-head sweep of a short sentence (docs/window.md). */
      Progress mp = { progress, user_data, cancellable, 0, 0.3 };
      hm = saccade_head_means_get (model, ident->path, session, db_path, NULL, FALSE,
                                   on_means_progress, &mp, cancellable, &means_warning, error);
      if (hm == NULL)
        goto fail;
      if (means_warning != NULL)
        g_message ("reference means: %s", means_warning);
      kp.ablation.head_mean = hm->means->mean;
      a->means_computed = !hm->reused;
      a->means_seconds = hm->seconds;
      if (a->means_computed)
        prog.base = 0.3, prog.span = 0.7;
    }
  st = run_kind (session, model, ids, n, &kp, &prog, a, &err);
  if (st != SC_OK)
    {
      if (st == SC_ERR_CANCELLED && g_cancellable_is_cancelled (cancellable))
        g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("Cancelled"));
      else
        saccade_set_error_from_sc (error, &err);
      goto fail;
    }
  a->seconds = (double) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC;

  /* 4. store, whole or not at all. */
  if (!sc_store_is_writable (store))
    {
      if (store_warning != NULL)
        *store_warning = g_strdup_printf ("%s is read-only", db_path);
    }
  else if (!run_exists (store, run_id))
    {
      set_run_gone (error, run_id);
      goto fail;
    }
  else
    {
      st = store_kind (store, ident, pj, a, &id, &err);
      if (st == SC_OK)
        {
          a->study_id = id;
          a->created_ms = study_created (store, id);
        }
      else if (store_warning != NULL)
        *store_warning = g_strdup (err.message);
    }
  if (kind == SACCADE_ABLATION_DLA)
    dla_find_sweep (store, info, ident, a);
  sc_store_close (store);
  return g_steal_pointer (&a);

fail:
  sc_store_close (store);
  return NULL;
}

/* ------------------------------------------------------------------------------------ */
/* In a worker                                                                           */

/* A study's progress travels as an int of this many steps (atomic). */
#define PROGRESS_SCALE 1000

typedef struct {
  SaccadeLoadedModel *model;
  char *db_path;
  gint64 run_id;
  SaccadeAblationKind kind;
  SaccadeAblationParams params;
  SaccadeAblationFlags flags;
  SaccadeAblationTaskProgress progress;
  gpointer progress_data;
  GMainContext *context;
  GTask *task;       /* borrowed: the job lives as the task's data */
  int done;          /* atomic: written by the worker, read by the main loop */
  int idle_pending;  /* atomic: a progress callback is queued */
} Job;

static void
job_free (Job *job)
{
  g_clear_object (&job->model);
  g_main_context_unref (job->context);
  g_free (job->db_path);
  g_free (job);
}

static gboolean
progress_idle (gpointer data)
{
  GTask *task = data;
  Job *job = g_task_get_task_data (task);

  g_atomic_int_set (&job->idle_pending, 0);
  if (!g_task_get_completed (task) && job->progress != NULL)
    job->progress (job->progress_data,
                   (double) g_atomic_int_get (&job->done) / PROGRESS_SCALE);
  return G_SOURCE_REMOVE;
}

/* SaccadeAblationProgress, in the worker: one idle queued at most. */
static void
job_progress (double fraction, gpointer user_data)
{
  Job *job = user_data;

  g_atomic_int_set (&job->done, (int) (CLAMP (fraction, 0.0, 1.0) * PROGRESS_SCALE));
  if (g_atomic_int_compare_and_exchange (&job->idle_pending, 0, 1))
    {
      g_autoptr (GSource) source = g_idle_source_new ();
      g_source_set_callback (source, progress_idle, g_object_ref (job->task), g_object_unref);
      g_source_set_static_name (source, "[saccade] ablation progress");
      g_source_attach (source, job->context);
    }
}

static void
ablation_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  Job *job = task_data;
  g_autofree char *warning = NULL;
  SaccadeAblation *a;
  GError *error = NULL;
  ScSession *session = NULL;

  /* The whole study holds the session: a capture started meanwhile waits for it. A lookup
   * of stored studies runs nothing and takes no lock. */
  if (!(job->flags & SACCADE_ABLATION_STORED_ONLY) || job->kind == SACCADE_ABLATION_FAITH)
    session = saccade_loaded_model_lock_session (job->model);
  a = saccade_ablation_get (saccade_loaded_model_get_model (job->model),
                            saccade_loaded_model_get_ident (job->model), session, job->db_path,
                            job->run_id, job->kind, &job->params, job->flags, job_progress, job,
                            cancellable, &warning, &error);
  if (session != NULL)
    saccade_loaded_model_unlock_session (job->model);
  if (a == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  if (warning != NULL)
    g_message ("The ablation study was not stored: %s", warning);
  g_task_return_pointer (task, a, (GDestroyNotify) saccade_ablation_free);
}

void
saccade_ablation_async (gpointer source_object, SaccadeLoadedModel *model, const char *db_path,
                        gint64 run_id, SaccadeAblationKind kind,
                        const SaccadeAblationParams *params, SaccadeAblationFlags flags,
                        GCancellable *cancellable,
                        SaccadeAblationTaskProgress progress, gpointer progress_data,
                        GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = NULL;
  Job *job;

  g_return_if_fail (SACCADE_IS_LOADED_MODEL (model));

  task = g_task_new (source_object, cancellable, callback, user_data);
  g_task_set_source_tag (task, saccade_ablation_async);
  /* The worker says what happened: a study that saw the cancel returns CANCELLED (and
   * stored nothing); one that finished first was stored and is returned as such — GTask
   * must not turn it into "cancelled" after the fact. */
  g_task_set_check_cancellable (task, FALSE);
  job = g_new0 (Job, 1);
  job->model = g_object_ref (model);
  job->db_path = g_strdup (db_path);
  job->run_id = run_id;
  job->kind = kind;
  if (params != NULL)
    job->params = *params;
  else
    job->params = (SaccadeAblationParams) { .target = -1,
                                            .n_random = SACCADE_ABLATION_DEFAULT_SEEDS };
  job->flags = flags;
  job->progress = progress;
  job->progress_data = progress_data;
  job->context = g_main_context_ref_thread_default ();
  job->task = task;
  g_task_set_task_data (task, job, (GDestroyNotify) job_free);
  g_task_run_in_thread (task, ablation_thread);
}

SaccadeAblation *
saccade_ablation_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (G_IS_TASK (result), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
