/* saccade-ablation-csv.c — every number of an Ablation-page study as CSV
 * (saccade_ablation_csv, saccade-ablation.h; the columns in docs/metrics.md, "The Ablation
 * page and its exports"): one writer per kind of result, the clean run's numbers and the ids
 * repeated on each row.
 */
#define G_LOG_DOMAIN "saccade-ablation"

#include "app/core/saccade-ablation.h"

#include <math.h>

#include "app/core/saccade-csv.h"
#include "app/core/studies/saccade-study-outputs.h"

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
 * layer (@n_heads 0: "layer"). After a first pass (a->first) two more columns, the head's
 * first-order estimate and whether it was ablated exactly (1) or only estimated (0: its
 * effect, flipped and top-1 cells are empty). */
static GBytes *
csv_sweep (const SaccadeAblation *a, const ScAblationEffect *effects, int n_layers,
           int n_heads, double loss_clean)
{
  GString *out = g_string_new (n_heads > 0 ? "layer,head" : "layer");
  const int n = n_heads > 0 ? n_layers * n_heads : n_layers;

  for (int m = 0; m < SACCADE_ABLATION_N_METRICS; m++)
    g_string_append_printf (out, ",%s", saccade_ablation_metric_id ((SaccadeAblationMetric) m));
  g_string_append_printf (out, ",flipped,top1_ablated,%s%s",
                          a->first != NULL ? "estimate,exact," : "", CSV_CLEAN_COLUMNS);
  for (int i = 0; i < n; i++)
    {
      const gboolean exact = a->first == NULL || a->first->exact[i];
      if (n_heads > 0)
        g_string_append_printf (out, "%d,%d", i / n_heads, i % n_heads);
      else
        g_string_append_printf (out, "%d", i);
      csv_metrics (out, &effects[i]);
      if (exact)
        g_string_append_printf (out, ",%d,%d", effects[i].flipped ? 1 : 0,
                                effects[i].next.top1_ablated);
      else
        g_string_append (out, ",,");
      if (a->first != NULL)
        {
          saccade_csv_add_exact (out, a->first->estimate[i]);
          g_string_append_printf (out, ",%d", exact ? 1 : 0);
        }
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

  /* the four spreads a permutation study keeps (it has no contrast) */
  for (int m = 0; m <= SACCADE_ABLATION_METRIC_DELTA_LOSS; m++)
    for (int q = 0; q < 5; q++)
      g_string_append_printf (out, ",%s_%s", saccade_ablation_metric_id ((SaccadeAblationMetric) m), SPREAD_IDS[q]);
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
  GString *out = g_string_new ("pos,token_id,label,loo");

  /* one column per source the result holds (last_mean, rollout, flow, ...) */
  for (int k = 0; k < sc_faith_n_sources (r); k++)
    {
      g_autofree char *col = g_strdelimit (g_strdup (sc_faith_source_id (k)), "-", '_');
      g_string_append_printf (out, ",%s", col);
    }
  g_string_append (out, ",best_head,best_head_attention,metric,kind,target,top1_clean,run,"
                   "study\n");

  for (int j = 0; j < r->n_items; j++)
    {
      g_string_append_printf (out, "%d", j);
      csv_token (out, j, tokens, labels, named);
      saccade_csv_add_exact (out, r->loo[j]);
      for (int k = 0; k < sc_faith_n_sources (r); k++)
        saccade_csv_add_exact (out, r->attn[k][j]);
      if (a->faith_best_head >= 0)
        g_string_append_printf (out, ",L%d.H%d", a->faith_best_head / r->n_heads,
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

/* The logit lens: one row per entry l = 0 .. n_layers (the residual entering layer l). */
static GBytes *
csv_lens (const SaccadeAblation *a)
{
  const ScLensResult *r = a->lens;
  GString *out = g_string_new ("layer,logp,p,rank,top1,m,contrast,");

  g_string_append (out, CSV_CLEAN_COLUMNS);
  for (int l = 0; l <= r->n_layers; l++)
    {
      g_string_append_printf (out, "%d", l);
      saccade_csv_add_exact (out, r->logp[l]);
      saccade_csv_add_exact (out, exp (r->logp[l]));
      g_string_append_printf (out, ",%d,%d", r->rank[l], r->top1[l]);
      saccade_csv_add_exact (out, r->m[l]);
      g_string_append_printf (out, ",%d", r->contrast);
      csv_clean (out, a, r->loss_clean);
    }
  return g_string_free_to_bytes (out);
}

/* Context mixing: one row per cell j <= i of each layer's map, then of the rollout. */
static GBytes *
csv_mixing (const SaccadeAblation *a, const char *const *labels, int n)
{
  const ScMixingResult *r = a->mixing;
  const gboolean named = labels != NULL && n == r->n_tokens;
  GString *out = g_string_new ("map,query,query_label,key,key_label,share,mix,method,run,"
                               "study\n");

  for (int k = 0; k <= r->n_layers; k++)
    {
      const float *map = sc_mixing_result_map (r, k);
      for (int i = 0; i < r->n_tokens; i++)
        for (int j = 0; j <= i; j++)
          {
            if (k < r->n_layers)
              g_string_append_printf (out, "%d,%d,", k, i);
            else
              g_string_append_printf (out, "rollout,%d,", i);
            saccade_csv_quoted (out, named ? labels[i] : "");
            g_string_append_printf (out, ",%d,", j);
            saccade_csv_quoted (out, named ? labels[j] : "");
            saccade_csv_add_exact (out, map[(size_t) i * r->n_tokens + j]);
            saccade_csv_add_exact (out, r->mix[k]);
            g_string_append_printf (out, ",%s,%lld,%lld\n", sc_mixing_method_names[r->method],
                                    (long long) a->run_id, (long long) a->study_id);
          }
    }
  return g_string_free_to_bytes (out);
}

/* Path patching: one row per (layer, head) of the receivers' grid; receiver 0 for the cells
 * up to the latest sender's layer, which have no path and hold the base run's m. */
static GBytes *
csv_path (const SaccadeAblation *a)
{
  const ScPathPatchResult *r = a->path;
  const ScPatchResult *g = r->grid;
  GString *out = g_string_new ("layer,head,receiver,m,effect,target,contrast,m_clean,"
                               "m_corrupted,direction,senders,component,run,corrupted,"
                               "study\n");

  for (int c = 0; c < g->n_rows * g->n_cols; c++)
    {
      g_string_append_printf (out, "%d,%d,%d", c / g->n_cols, c % g->n_cols,
                              c / g->n_cols >= r->receivers_from_layer);
      saccade_csv_add_exact (out, g->patched[c]);
      saccade_csv_add_exact (out, sc_patch_normalised (g, g->patched[c]));
      g_string_append_printf (out, ",%d,%d", g->target, g->contrast);
      saccade_csv_add_exact (out, g->metric_clean);
      saccade_csv_add_exact (out, g->metric_corrupted);
      g_string_append_printf (out, ",%s,\"%s\",%s,%lld,%lld,%lld\n",
                              sc_patch_direction_names[g->direction], r->senders,
                              sc_path_component_names[r->component], (long long) a->run_id,
                              (long long) a->patch_corrupted, (long long) a->study_id);
    }
  return g_string_free_to_bytes (out);
}

/* QK attribution: one row per (query-side component, key-side component). */
static GBytes *
csv_qk (const SaccadeAblation *a)
{
  const ScQkResult *r = a->qk;
  const int C = r->n_comp;
  GString *out = g_string_new ("query_component,key_component,part,layer,head,query,key,"
                               "score,sum_of_parts,run,study\n");
  char qn[32], kn[32];

  for (int q = 0; q < C; q++)
    for (int k = 0; k < C; k++)
      {
        sc_qk_component_name (r, q, qn, sizeof qn);
        sc_qk_component_name (r, k, kn, sizeof kn);
        g_string_append_printf (out, "%s,%s", qn, kn);
        saccade_csv_add_exact (out, r->parts[(size_t) q * C + k]);
        g_string_append_printf (out, ",%d,%d,%d,%d", r->layer, r->head, r->query, r->key);
        saccade_csv_add_exact (out, r->score);
        saccade_csv_add_exact (out, r->total);
        g_string_append_printf (out, ",%lld,%lld\n", (long long) a->run_id,
                                (long long) a->study_id);
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
  if (a->path != NULL)
    return csv_path (a);
  if (a->qk != NULL)
    return csv_qk (a);
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
  if (a->lens != NULL)
    return csv_lens (a);
  if (a->mixing != NULL)
    return csv_mixing (a, labels, n);
  if (a->layers != NULL)
    return csv_sweep (a, a->layers->layers, a->layers->n_layers, 0, a->layers->loss_clean);
  g_return_val_if_fail (a->tokens != NULL, NULL);

  const ScTokenLooResult *r = a->tokens;
  const gboolean named = n == r->n_tokens;
  out = g_string_new ("pos,token_id,label");
  for (int s = 0; s < 2; s++)
    for (int m = 0; m < SACCADE_ABLATION_N_METRICS; m++)
      g_string_append_printf (out, ",%s_%s", s == 0 ? "mask" : "drop", saccade_ablation_metric_id ((SaccadeAblationMetric) m));
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
