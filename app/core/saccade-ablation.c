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
#include "app/core/studies/saccade-study-outputs.h"
#include "engine/store/sc-store-heads.h"

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
  ScLensParams lens;
  ScMixingParams mixing_vz, mixing_alti;
  ScPathPatchParams path;
  ScQkParams qk;
  ScAblationFirstParams first;
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
  [SACCADE_ABLATION_LENS] = { &sc_study_kind_lens, offsetof (KindParams, lens),
                              offsetof (SaccadeAblation, lens) },
  [SACCADE_ABLATION_MIXING_VZ] = { &sc_study_kind_mixing, offsetof (KindParams, mixing_vz),
                                   offsetof (SaccadeAblation, mixing) },
  [SACCADE_ABLATION_MIXING_ALTI] = { &sc_study_kind_mixing, offsetof (KindParams, mixing_alti),
                                     offsetof (SaccadeAblation, mixing) },
  [SACCADE_ABLATION_PATH_PATCH] = { &sc_study_kind_path_patch, offsetof (KindParams, path),
                                    offsetof (SaccadeAblation, path) },
  [SACCADE_ABLATION_QK] = { &sc_study_kind_qk, offsetof (KindParams, qk),
                            offsetof (SaccadeAblation, qk) },
  [SACCADE_ABLATION_HEADS_FIRST] = { &sc_study_kind_heads_first, offsetof (KindParams, first),
                                     offsetof (SaccadeAblation, first) },
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
/* Metrics and ranking                                                                   */

static const char *const METRIC_IDS[SACCADE_ABLATION_N_METRICS] = {
  "delta_logp", "tv", "jsd", "delta_loss", "delta_logit_diff",
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
    case SACCADE_ABLATION_METRIC_DELTA_LOGIT_DIFF:
      return e->delta_logit_diff;
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

/* ------------------------------------------------------------------------------------ */
/* The study                                                                             */

static void
kind_params (SaccadeAblationKind kind, const SaccadeAblationParams *p, KindParams *k)
{
  /* The head sweeps, token leave-one-out and the layer sweep take the contrast as `saccade
   * ablate --heads --contrast B` does (the permutation has none: engine). */
  k->ablation = (ScAblationParams) { .target = p->target, .contrast = p->contrast,
                                     .mode = SC_ABLATE_ZERO };
  if (kind == SACCADE_ABLATION_HEADS_MEAN)
    {
      k->ablation.mode = SC_ABLATE_MEAN;
      k->ablation.mean_set = SACCADE_REFERENCE_SET;
    }
  k->first = (ScAblationFirstParams) { .ablation = k->ablation,
                                       .top = SACCADE_ABLATION_DEFAULT_FIRST_TOP };
  k->first.ablation.mode = SC_ABLATE_ZERO, k->first.ablation.mean_set = NULL;
  k->permutation = (ScPermutationParams) {
    .target = p->target,
    .n_permutations = p->n_permutations > 0 ? p->n_permutations
                                            : SACCADE_ABLATION_DEFAULT_PERMUTATIONS,
    .seed = p->seed,
  };
  k->erasure = (ScErasureParams) { .target = p->target, .kind = p->erase_kind,
                                   .n_random = p->n_random, .seed = p->seed };
  k->dla = (ScDlaParams) { .target = p->target, .contrast = p->contrast };
  k->layers = (ScLayerSweepParams) { .target = p->target, .contrast = p->contrast };
  k->lens = (ScLensParams) { .target = p->target, .contrast = p->contrast };
  k->mixing_vz = (ScMixingParams) { SC_MIXING_VALUE_ZEROING };
  k->mixing_alti = (ScMixingParams) { SC_MIXING_ALTI };
  k->patch = (ScPatchParams) { .corrupted_run = p->corrupted_run, .target = p->target,
                               .contrast = p->contrast, .direction = p->patch_direction,
                               .what = p->patch_what };
  k->path = (ScPathPatchParams) { .patch = k->patch, .component = p->path_component };
  k->path.patch.what = SC_PATCH_HEADS; /* ignored by path patching */
  g_strlcpy (k->path.senders, p->senders, sizeof k->path.senders);
  k->qk = (ScQkParams) { .layer = p->qk_layer, .head = p->qk_head, .query = p->qk_query,
                         .key = p->qk_key };
  /* `saccade faithfulness RUN --mixing --kind K`'s defaults: TV (with a contrast, |Δ
   * logit difference|; with causal tracing |Δ log p|) against the page's reference
   * (leave-one-out by masking unless chosen), top-k 0 (= 3), every context-mixing source
   * for the chooser */
  k->faith = (ScFaithParams) { .metric = p->contrast >= 0 ? SC_FAITH_METRIC_ABS_DELTA_LOGIT_DIFF
                                         : p->faith_kind == SC_FAITH_ERASE_TRACE
                                           ? SC_FAITH_METRIC_ABS_DELTA_LOGP
                                           : SC_FAITH_METRIC_TV,
                               .kind = p->faith_kind, .target = p->target, .mixing = TRUE,
                               .contrastive = p->contrast >= 0, .contrast = p->contrast };
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
                  gint64 run_id, const ScPatchParams *p, SaccadeStudyFlags flags,
                  SaccadeAblation *a)
{
  const ScPatchResult *x;
  int cells;

  a->patch_exact = saccade_study_get (&sc_study_kind_patch, p, model, ident, NULL, db_path,
                                      run_id,
                                      SACCADE_STUDY_STORED_ONLY
                                        | (flags & SACCADE_STUDY_RUN_MODEL),
                                      NULL, NULL, NULL, NULL, NULL);
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

/* QK with key −1: the key the head attends most from the query in the run's stored
 * attention (the first of equal weights), with layer and query resolved as the engine does
 * (sc_qk_params_resolve). Only the query's row is read: a whole head of an 8,192-token run
 * is 268 MB as float, and the window asks again on every change of layer or head. A layer
 * or head outside the model, or a query outside the run, is left for the engine to refuse
 * in its words (key 0). */
static gboolean
qk_most_attended_key (ScModel *model, const char *db_path, gint64 run_id, ScQkParams *p,
                      GError **error)
{
  const ScModelInfo *info = sc_model_info (model);
  const int layer = p->layer < 0 ? (int) info->n_layers / 2 : p->layer;
  ScStoreRunInfo run = { 0 };
  g_autofree float *row = NULL;
  ScError err = { 0 };
  ScStore *store;
  ScStatus st;
  int query, best = 0;

  p->key = 0;
  if (layer >= (int) info->n_layers || p->head < 0 || p->head >= (int) info->n_heads)
    return TRUE;
  if ((store = saccade_store_open (db_path, FALSE, &err)) == NULL)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  if ((st = sc_store_get_run (store, run_id, &run, &err)) == SC_OK)
    {
      query = p->query < 0 ? (int) run.n_tokens - 1 : p->query;
      if (query >= 0 && query < (int) run.n_tokens)
        {
          row = g_new (float, run.n_tokens);
          st = sc_store_read_head_rows (store, run_id, layer, p->head, (uint32_t) query,
                                        (uint32_t) query + 1, row, NULL, &err);
          for (int j = 1; st == SC_OK && j <= query; j++)
            if (row[j] > row[best])
              best = j;
        }
    }
  sc_store_run_info_clear (&run);
  sc_store_close (store);
  if (st != SC_OK)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   /* Translators: QK attribution's default key needs the head's stored
                    * attention; %s: the store's message. */
                   _("The key the head L%d.H%d attends most cannot be read (%s): choose the "
                     "key"), layer, p->head, err.message);
      return FALSE;
    }
  p->key = best;
  return TRUE;
}

SaccadeAblation *
saccade_ablation_get (ScModel *model, const ScStoreModel *ident, ScSession *session,
                      const char *db_path, gint64 run_id, SaccadeAblationKind kind,
                      const SaccadeAblationParams *params, SaccadeStudyFlags flags,
                      SaccadeProgress progress, gpointer user_data,
                      GCancellable *cancellable, char **store_warning, GError **error)
{
  static const SaccadeAblationParams defaults = { .target = -1, .contrast = -1,
                                                  .n_random = SACCADE_ABLATION_DEFAULT_SEEDS,
                                                  .qk_layer = -1, .qk_query = -1,
                                                  .qk_key = -1 };
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
  if (kind == SACCADE_ABLATION_QK && kp.qk.key < 0
      && !qk_most_attended_key (model, db_path, run_id, &kp.qk, error))
    return NULL;
  a = g_new0 (SaccadeAblation, 1);
  a->kind = kind;
  a->run_id = run_id;
  a->faith_best_head = -1;
  a->dla_rho.rho = a->dla_rho.p = NAN;
  a->patch_rho.rho = a->patch_rho.p = NAN;
  if (kind == SACCADE_ABLATION_FAITH && (flags & SACCADE_STUDY_RUN_MODEL))
    {
      /* its head level and DLA are read (or computed) on the loaded model itself */
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "ablation: a stored %s study is read only with its run's model loaded",
                   SC_FAITH_KIND);
      return NULL;
    }
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
  if (kind == SACCADE_ABLATION_PATCH || kind == SACCADE_ABLATION_ATTR_PATCH
      || kind == SACCADE_ABLATION_PATH_PATCH)
    a->patch_corrupted = kp.patch.corrupted_run;
  if (kind == SACCADE_ABLATION_HEADS_FIRST)
    a->heads = a->first->sweep; /* the exact effects, drawn as a sweep's */
  if (kind == SACCADE_ABLATION_PATH_PATCH)
    a->patch = a->path->grid; /* its metric and grid, as activation patching's */
  if (kind == SACCADE_ABLATION_ATTR_PATCH)
    find_exact_patch (model, ident, db_path, run_id, &kp.patch, flags, a);
  if (kind == SACCADE_ABLATION_DLA)
    {
      ScStore *store = saccade_store_open (db_path, FALSE, NULL);
      SaccadeRunModel own = { 0 };
      if (store == NULL)
        ;
      else if (!(flags & SACCADE_STUDY_RUN_MODEL))
        saccade_dla_find_sweep (store, sc_model_info (model), ident, run_id, a->dla,
                                &a->dla_sweep, NULL, &a->dla_rho);
      else if (saccade_run_model_read (store, run_id, &own, NULL))
        saccade_dla_find_sweep (store, &own.info, &own.ident, run_id, a->dla, &a->dla_sweep,
                                NULL, &a->dla_rho);
      saccade_run_model_clear (&own);
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
                                            .n_random = SACCADE_ABLATION_DEFAULT_SEEDS,
                                            .qk_layer = -1, .qk_query = -1, .qk_key = -1 };
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
