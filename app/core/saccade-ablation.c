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

#include "app/core/saccade-csv.h"
#include "app/core/saccade-error.h"
#include "app/core/saccade-head-means.h"
#include "app/core/saccade-paths.h"
#include "app/core/studies/saccade-study-outputs.h"

#include <stddef.h>

/* The engine's params of each kind, as its verb sets them from SaccadeAblationParams. */
typedef struct {
  ScAblationParams ablation;
  ScPermutationParams permutation;
  ScErasureParams erasure;
  ScDlaParams dla;
  ScFaithParams faith;
  ScLayerSweepParams layers;
  ScPatchParams patch;
} KindParams;

/* Each kind of the enum: its study kind, where its params sit in KindParams and where its
 * result goes in SaccadeAblation (FAITH's goes through saccade_faithfulness_get). */
static const struct {
  const ScStudyKind *study;
  size_t params;
  size_t result;
} KINDS[SACCADE_ABLATION_N_KINDS] = {
  [SACCADE_ABLATION_HEADS] = { &sc_study_kind_heads, offsetof (KindParams, ablation),
                               offsetof (SaccadeAblation, heads) },
  [SACCADE_ABLATION_TOKENS] = { &sc_study_kind_tokens, offsetof (KindParams, ablation),
                                offsetof (SaccadeAblation, tokens) },
  [SACCADE_ABLATION_HEADS_MEAN] = { &sc_study_kind_heads_mean, offsetof (KindParams, ablation),
                                    offsetof (SaccadeAblation, heads) },
  [SACCADE_ABLATION_PERMUTE] = { &sc_study_kind_permute, offsetof (KindParams, permutation),
                                 offsetof (SaccadeAblation, perm) },
  [SACCADE_ABLATION_ERASURE] = { &sc_study_kind_erasure, offsetof (KindParams, erasure),
                                 offsetof (SaccadeAblation, erasure) },
  [SACCADE_ABLATION_DLA] = { &sc_study_kind_dla, offsetof (KindParams, dla),
                             offsetof (SaccadeAblation, dla) },
  [SACCADE_ABLATION_FAITH] = { &sc_study_kind_faithfulness, offsetof (KindParams, faith), 0 },
  [SACCADE_ABLATION_LAYERS] = { &sc_study_kind_layers, offsetof (KindParams, layers),
                                offsetof (SaccadeAblation, layers) },
  [SACCADE_ABLATION_PATCH] = { &sc_study_kind_patch, offsetof (KindParams, patch),
                               offsetof (SaccadeAblation, patch) },
  [SACCADE_ABLATION_ATTR_PATCH] = { &sc_study_kind_patch_attribution,
                                    offsetof (KindParams, patch),
                                    offsetof (SaccadeAblation, patch) },
};

const ScStudyKind *
saccade_ablation_study_kind (SaccadeAblationKind kind)
{
  return (unsigned) kind < SACCADE_ABLATION_N_KINDS ? KINDS[kind].study : NULL;
}

const char *
saccade_ablation_kind_id (SaccadeAblationKind kind)
{
  return (unsigned) kind < SACCADE_ABLATION_N_KINDS ? KINDS[kind].study->id : NULL;
}

const char *
saccade_ablation_kind_name (SaccadeAblationKind kind)
{
  return (unsigned) kind < SACCADE_ABLATION_N_KINDS ? KINDS[kind].study->name : NULL;
}

gboolean
saccade_ablation_kind_from_id (const char *id, SaccadeAblationKind *out)
{
  /* In enum order, so "ablate-heads" is the zero-ablation sweep (HEADS comes first). */
  for (int k = 0; id != NULL && k < SACCADE_ABLATION_N_KINDS; k++)
    if (g_str_equal (id, KINDS[k].study->id) || g_str_equal (id, KINDS[k].study->name))
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
  saccade_study_free (a->study);
  saccade_study_free (a->patch_exact);
  saccade_faithfulness_free (a->faith);
  sc_head_sweep_result_free (a->dla_sweep);
  g_free (a->faith_best_row);
  g_free (a);
}

static ScStudyClean
clean_of (const SaccadeAblation *a)
{
  ScStudyClean c = SC_STUDY_CLEAN_INIT;

  if (a->study != NULL)
    a->study->kind->result_clean (a->study->result, &c);
  else if (a->faith != NULL)
    sc_study_kind_faithfulness.result_clean (a->faith->result, &c);
  return c;
}

int
saccade_ablation_target (const SaccadeAblation *a)
{
  return clean_of (a).target;
}

int
saccade_ablation_top1_clean (const SaccadeAblation *a)
{
  return clean_of (a).top1_clean;
}

double
saccade_ablation_logp_clean (const SaccadeAblation *a)
{
  return clean_of (a).logp_clean; /* NaN: DLA measures a logit, faithfulness stores none */
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

static int
by_key_desc (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const double *key = user_data;
  const int ia = *(const int *) a, ib = *(const int *) b;
  const double va = isnan (key[ia]) ? -INFINITY : key[ia];
  const double vb = isnan (key[ib]) ? -INFINITY : key[ib];

  return va > vb ? -1 : va < vb ? 1 : ia - ib;
}

void
saccade_rank_by_key (int *order, int n, const double *key)
{
  g_qsort_with_data (order, n, sizeof *order, by_key_desc, (gpointer) key);
}

int *
saccade_ablation_rank_heads (const ScHeadSweepResult *r, SaccadeAblationMetric m)
{
  const int n = r->n_layers * r->n_heads;
  int *order = g_new (int, n);
  g_autofree double *key = g_new (double, n);

  for (int i = 0; i < n; i++)
    {
      order[i] = i;
      key[i] = fabs (saccade_ablation_effect_value (&r->heads[i], m));
    }
  saccade_rank_by_key (order, n, key);
  return order;
}

static void
csv_metrics (GString *out, const ScAblationEffect *e)
{
  for (int m = 0; m < SACCADE_ABLATION_N_METRICS; m++)
    saccade_csv_add_exact (out, saccade_ablation_effect_value (e, (SaccadeAblationMetric) m));
}

/* The clean run's numbers and the ids every row repeats (each row complete on its own). */
static void
csv_clean (GString *out, const SaccadeAblation *a, double loss_clean)
{
  g_string_append_printf (out, ",%d,%d", saccade_ablation_target (a),
                          saccade_ablation_top1_clean (a));
  saccade_csv_add_exact (out, saccade_ablation_logp_clean (a));
  saccade_csv_add_exact (out, loss_clean);
  g_string_append_printf (out, ",%lld,%lld\n", (long long) a->run_id, (long long) a->study_id);
}

static const char CSV_CLEAN_COLUMNS[] = "target,top1_clean,logp_clean,loss_clean,run,study\n";

/* A sweep's effects, a row each: per head (@n_heads > 0: "layer,head", layer-major) or per
 * layer (@n_heads 0: "layer"). */
static GBytes *
csv_sweep (const SaccadeAblation *a, const ScAblationEffect *effects, int n_layers,
           int n_heads, double loss_clean)
{
  GString *out = g_string_new (n_heads > 0 ? "layer,head" : "layer");
  const int n = n_heads > 0 ? n_layers * n_heads : n_layers;

  for (int m = 0; m < SACCADE_ABLATION_N_METRICS; m++)
    g_string_append_printf (out, ",%s", METRIC_IDS[m]);
  g_string_append_printf (out, ",flipped,top1_ablated,%s", CSV_CLEAN_COLUMNS);
  for (int i = 0; i < n; i++)
    {
      if (n_heads > 0)
        g_string_append_printf (out, "%d,%d", i / n_heads, i % n_heads);
      else
        g_string_append_printf (out, "%d", i);
      csv_metrics (out, &effects[i]);
      g_string_append_printf (out, ",%d,%d", effects[i].flipped ? 1 : 0,
                              effects[i].next.top1_ablated);
      csv_clean (out, a, loss_clean);
    }
  return g_string_free_to_bytes (out);
}

/* pos's token id and label, or −1 and "" when the run's tokens do not match. */
static void
csv_token (GString *out, int pos, const ScStoreToken *tokens, const char *const *labels,
           gboolean named)
{
  g_string_append_printf (out, ",%d,", named && tokens != NULL && pos >= 0 ? tokens[pos].id : -1);
  saccade_csv_quoted (out, named && labels != NULL && pos >= 0 ? labels[pos] : "");
}

static const char *const SPREAD_IDS[5] = { "min", "q25", "median", "q75", "max" };

static void
csv_spread (GString *out, const ScSpread *s)
{
  saccade_csv_add_exact (out, s->min);
  saccade_csv_add_exact (out, s->q25);
  saccade_csv_add_exact (out, s->median);
  saccade_csv_add_exact (out, s->q75);
  saccade_csv_add_exact (out, s->max);
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
      saccade_csv_add_exact (out, h->flip_share);
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
          saccade_csv_add_exact (out, (double) k / (r->n_tokens - 1));
          g_string_append_printf (out, ",%d", pos);
          csv_token (out, pos, tokens, labels, named);
          saccade_csv_add_exact (out, cv->p_target[k]);
          saccade_csv_add_exact (out, cv->tv[k]);
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
      saccade_csv_add_exact (out, d->logit_clean);                                                    \
      saccade_csv_add_exact (out, d->rms);                                                            \
      g_string_append_printf (out, ",%lld,%lld\n", (long long) a->run_id,                 \
                              (long long) a->study_id);                                    \
    }                                                                                      \
  while (0)
  for (int i = 0; i < d->n_layers * d->n_heads; i++)
    {
      g_string_append_printf (out, "head,%d,%d", i / d->n_heads, i % d->n_heads);
      saccade_csv_add_exact (out, d->heads[i]);
      saccade_csv_add_exact (out, sw != NULL ? sw->heads[i].next.delta_logp : NAN);
      saccade_csv_add_exact (out, sw != NULL ? sw->heads[i].next.tv : NAN);
      DLA_TAIL ();
    }
  g_string_append (out, "embed,-1,-1");
  saccade_csv_add_exact (out, d->embed);
  g_string_append (out, ",,");
  DLA_TAIL ();
  for (int l = 0; l < d->n_layers; l++)
    {
      g_string_append_printf (out, "mlp,%d,-1", l);
      saccade_csv_add_exact (out, d->mlp[l]);
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
      saccade_csv_add_exact (out, r->loo[j]);
      for (int k = 0; k < SC_FAITH_N_SOURCES; k++)
        saccade_csv_add_exact (out, r->attn[k][j]);
      if (a->faith_best_head >= 0)
        g_string_append_printf (out, ",%d.%d", a->faith_best_head / r->n_heads,
                                a->faith_best_head % r->n_heads);
      else
        g_string_append_c (out, ',');
      saccade_csv_add_exact (out, a->faith_best_row != NULL ? a->faith_best_row[j] : NAN);
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
  if (a->patch != NULL)
    return saccade_patch_csv (a->patch, labels, n, a->run_id, a->patch_corrupted,
                              a->study_id);
  if (a->heads != NULL)
    return csv_sweep (a, a->heads->heads, a->heads->n_layers, a->heads->n_heads,
                      a->heads->loss_clean);
  if (a->layers != NULL)
    return csv_sweep (a, a->layers->layers, a->layers->n_layers, 0, a->layers->loss_clean);
  g_return_val_if_fail (a->tokens != NULL, NULL);

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
/* The study                                                                             */

static void
kind_params (SaccadeAblationKind kind, const SaccadeAblationParams *p, KindParams *k)
{
  /* The window offers a contrast with DLA and patching only (the head sweep and token
   * leave-one-out take one through the CLI and `saccade study`). */
  k->ablation = (ScAblationParams) { .target = p->target, .contrast = -1,
                                     .mode = SC_ABLATE_ZERO };
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
  k->dla = (ScDlaParams) { .target = p->target, .contrast = p->contrast };
  k->layers = (ScLayerSweepParams) { .target = p->target };
  k->patch = (ScPatchParams) { .corrupted_run = p->corrupted_run, .target = p->target,
                               .contrast = p->contrast, .direction = p->patch_direction,
                               .what = p->patch_what };
  /* `saccade faithfulness RUN`'s defaults: TV of masking, top-k 0 (= 3) */
  k->faith = (ScFaithParams) { SC_FAITH_METRIC_TV, SC_FAITH_ERASE_MASK, 0, p->target };
}

void
saccade_dla_find_sweep (ScStore *store, const ScModelInfo *info, const ScStoreModel *ident,
                        gint64 run_id, const ScDlaResult *d, ScHeadSweepResult **sweep,
                        gint64 *sweep_id, ScSpearman *rho)
{
  const int tries[2] = { d->target, -1 };
  const int n = d->n_layers * d->n_heads;

  *sweep = NULL;
  rho->rho = rho->p = NAN;
  /* a sweep measures Δ log p of the target alone: no match for a logit difference */
  if (d->contrast >= 0)
    return;
  for (int k = 0; k < 2 && *sweep == NULL; k++)
    {
      const ScAblationParams p = { .target = tries[k], .contrast = -1, .mode = SC_ABLATE_ZERO };
      ScHeadSweepResult *sw = NULL;
      char pj[128];
      int64_t id = 0;
      if (k == 1 && d->target != d->top1_clean)
        break;
      if (sc_ablation_params_json (SC_ABLATION_KIND_HEADS, run_id, &p, pj, sizeof pj) < 0
          || sc_head_sweep_load (store, info, ident->sha256, pj, &sw, &id, NULL) != SC_OK)
        continue;
      if (sw->target != d->target || sw->n_tokens != d->n_tokens
          || sw->n_layers * sw->n_heads != n)
        sc_head_sweep_result_free (sw);
      else
        {
          *sweep = sw;
          if (sweep_id != NULL)
            *sweep_id = id;
        }
    }
  if (*sweep != NULL)
    {
      g_autofree double *dlp = g_new (double, n);
      for (int i = 0; i < n; i++)
        dlp[i] = (*sweep)->heads[i].next.delta_logp;
      if (sc_spearman_rho (d->heads, dlp, n, rho, NULL) != SC_OK)
        rho->rho = rho->p = NAN;
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

/* FAITH: saccade_faithfulness_get() reuses or computes (and stores, with the leave-one-out
 * it runs) on its own connections, after the run is checked here; STORED_ONLY first checks
 * that a study is there. */
static gboolean
get_faith (ScModel *model, const ScStoreModel *ident, ScSession *session, const char *db_path,
           const KindParams *k, SaccadeStudyFlags flags, SaccadeProgress progress,
           gpointer user_data, GCancellable *cancellable, char **store_warning,
           SaccadeAblation *a, GError **error)
{
  const ScModelInfo *info = sc_model_info (model);
  g_autoptr (SaccadeStudyRun) run = NULL;
  ScFaithResult *probe = NULL;
  ScError err = { 0 };
  ScStore *store = NULL;
  char pj[SC_STUDY_PARAMS_MAX];
  gboolean ok = FALSE;
  ScStatus st;

  if (!(flags & SACCADE_STUDY_STORED_ONLY))
    store = saccade_store_open (db_path, TRUE, NULL);
  if (store == NULL && (store = saccade_store_open (db_path, FALSE, &err)) == NULL)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  if ((run = saccade_study_read_run (store, ident, info, a->run_id, NULL, error)) == NULL)
    goto out;
  if (sc_faith_params_json (a->run_id, run->ids, run->n_tokens, &k->faith, pj, sizeof pj) < 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "ablation: the parameters of a %s study are out of range", SC_FAITH_KIND);
      goto out;
    }
  if (flags & SACCADE_STUDY_STORED_ONLY)
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
          goto out;
        }
    }
  if (run->n_tokens < SC_FAITH_MIN_TOKENS)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   /* Translators: faithfulness needs this many tokens; the run has fewer. */
                   _("Faithfulness compares at least two tokens and the query: run %lld has "
                     "%d tokens, it needs %d"), (long long) a->run_id, run->n_tokens,
                   SC_FAITH_MIN_TOKENS);
      goto out;
    }
  a->faith = saccade_faithfulness_get (model, ident->path, session, db_path, a->run_id,
                                       run->ids, run->n_tokens, &k->faith, FALSE,
                                       (flags & SACCADE_STUDY_RECOMPUTE) != 0, progress,
                                       user_data, cancellable, store_warning, error);
  if (a->faith == NULL)
    goto out;
  a->study_id = a->faith->study_id;
  a->reused = a->faith->reused;
  a->seconds = a->faith->reused ? 0 : a->faith->seconds;
  if (a->study_id > 0)
    a->created_ms = saccade_study_created_ms (store, a->study_id);
  faith_best_head (store, a);
  ok = TRUE;
out:
  sc_store_close (store);
  return ok;
}

/* ATTR_PATCH: the stored exact patching of the same parameters, beside the estimates
 * (SaccadeAblation.patch_exact); looked up only, so a window never pays 270 passes for it. */
static void
find_exact_patch (ScModel *model, const ScStoreModel *ident, const char *db_path,
                  gint64 run_id, const ScPatchParams *p, SaccadeAblation *a)
{
  const ScPatchResult *x;
  int cells;

  a->patch_exact = saccade_study_get (&sc_study_kind_patch, p, model, ident, NULL, db_path,
                                      run_id, SACCADE_STUDY_STORED_ONLY, NULL, NULL, NULL,
                                      NULL, NULL);
  if (a->patch_exact == NULL)
    return;
  x = a->patch_exact->result;
  cells = x->n_rows * x->n_cols;
  if (x->n_rows != a->patch->n_rows || x->n_cols != a->patch->n_cols)
    {
      g_clear_pointer (&a->patch_exact, saccade_study_free);
      return;
    }
  a->patch_exact_id = a->patch_exact->study_id;
  if (sc_spearman_rho (a->patch->patched, x->patched, cells, &a->patch_rho, NULL) != SC_OK)
    a->patch_rho.rho = a->patch_rho.p = NAN;
}

SaccadeAblation *
saccade_ablation_get (ScModel *model, const ScStoreModel *ident, ScSession *session,
                      const char *db_path, gint64 run_id, SaccadeAblationKind kind,
                      const SaccadeAblationParams *params, SaccadeStudyFlags flags,
                      SaccadeProgress progress, gpointer user_data,
                      GCancellable *cancellable, char **store_warning, GError **error)
{
  static const SaccadeAblationParams defaults = { .target = -1, .contrast = -1,
                                                  .n_random = SACCADE_ABLATION_DEFAULT_SEEDS };
  g_autoptr (SaccadeAblation) a = NULL;
  KindParams kp;

  g_return_val_if_fail (model != NULL && ident != NULL, NULL);
  if (params == NULL)
    params = &defaults;
  if ((unsigned) kind >= SACCADE_ABLATION_N_KINDS)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "ablation: no study kind %d", (int) kind);
      return NULL;
    }
  if (!saccade_study_check_call ("ablation", db_path, session, flags, error))
    return NULL;
  kind_params (kind, params, &kp);
  a = g_new0 (SaccadeAblation, 1);
  a->kind = kind;
  a->run_id = run_id;
  a->faith_best_head = -1;
  a->dla_rho.rho = a->dla_rho.p = NAN;
  a->patch_rho.rho = a->patch_rho.p = NAN;
  if (kind == SACCADE_ABLATION_FAITH)
    return get_faith (model, ident, session, db_path, &kp, flags, progress, user_data,
                      cancellable, store_warning, a, error)
             ? g_steal_pointer (&a) : NULL;

  a->study = saccade_study_get (KINDS[kind].study, (const char *) &kp + KINDS[kind].params,
                                model, ident, session, db_path, run_id, flags, progress,
                                user_data, cancellable, store_warning, error);
  if (a->study == NULL)
    return NULL;
  /* the typed view of the result (borrowed from a->study) */
  *(void **) ((char *) a + KINDS[kind].result) = a->study->result;
  a->study_id = a->study->study_id;
  a->created_ms = a->study->created_ms;
  a->reused = a->study->reused;
  a->seconds = a->study->seconds;
  a->means_computed = a->study->means_computed;
  a->means_seconds = a->study->means_seconds;
  if (kind == SACCADE_ABLATION_PATCH || kind == SACCADE_ABLATION_ATTR_PATCH)
    a->patch_corrupted = kp.patch.corrupted_run;
  if (kind == SACCADE_ABLATION_ATTR_PATCH)
    find_exact_patch (model, ident, db_path, run_id, &kp.patch, a);
  if (kind == SACCADE_ABLATION_DLA)
    {
      ScStore *store = saccade_store_open (db_path, FALSE, NULL);
      if (store != NULL)
        saccade_dla_find_sweep (store, sc_model_info (model), ident, run_id, a->dla,
                                &a->dla_sweep, NULL, &a->dla_rho);
      sc_store_close (store);
    }
  return g_steal_pointer (&a);
}

/* ------------------------------------------------------------------------------------ */
/* In a worker                                                                           */

typedef struct {
  gint64 run_id;
  SaccadeAblationKind kind;
  SaccadeAblationParams params;
} Job;

static gpointer
ablation_func (ScModel *model, const ScStoreModel *ident, ScSession *session,
               const char *db_path, gpointer data, SaccadeStudyFlags flags,
               SaccadeProgress progress, gpointer progress_data, GCancellable *cancellable,
               char **store_warning, GError **error)
{
  Job *job = data;

  return saccade_ablation_get (model, ident, session, db_path, job->run_id, job->kind,
                               &job->params, flags, progress, progress_data, cancellable,
                               store_warning, error);
}

void
saccade_ablation_async (gpointer source_object, SaccadeLoadedModel *model, const char *db_path,
                        gint64 run_id, SaccadeAblationKind kind,
                        const SaccadeAblationParams *params, SaccadeStudyFlags flags,
                        GCancellable *cancellable, SaccadeJobProgress progress,
                        gpointer progress_data, GAsyncReadyCallback callback,
                        gpointer user_data)
{
  Job *job = g_new0 (Job, 1);

  job->run_id = run_id;
  job->kind = kind;
  if (params != NULL)
    job->params = *params;
  else
    job->params = (SaccadeAblationParams) { .target = -1, .contrast = -1,
                                            .n_random = SACCADE_ABLATION_DEFAULT_SEEDS };
  /* FAITH's lookup may run one clean pass for the head level's direct logit attribution:
   * it holds the session even then. */
  saccade_study_job_async (source_object, saccade_ablation_async, "ablation", model, db_path,
                           flags, kind == SACCADE_ABLATION_FAITH, ablation_func, job, g_free,
                           (GDestroyNotify) saccade_ablation_free, cancellable, progress,
                           progress_data, callback, user_data);
}

SaccadeAblation *
saccade_ablation_finish (GAsyncResult *result, GError **error)
{
  return saccade_job_finish (result, saccade_ablation_async, error);
}
