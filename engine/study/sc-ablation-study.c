/* sc-ablation-study.c — the head sweep and token leave-one-out (sc-ablation-study.h has
 * the definitions): drives sc_forward with one ScIntervention per ablated head or token,
 * turns each pair of logit blocks into effects with engine/analysis/sc-effect.c, and
 * stores or reads the results as studies (sc-store-study.h). Nothing here defines a
 * measure; it only decides which runs to compare. */
#include "study/sc-ablation-study.h"

#include "study/sc-head-means.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* [A-Za-z0-9] in the C locale. */
static bool
set_char_ok_alnum (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static ScAblationEffect
nan_effect (void)
{
  ScAblationEffect e;

  e.next = (ScEffect) { NAN, NAN, NAN, NAN, NAN, -1, -1 };
  e.delta_loss = NAN;
  e.flipped = false;
  e.delta_logit_diff = NAN;
  return e;
}

ScHeadSweepResult *
sc_head_sweep_result_new (int n_layers, int n_heads, int n_tokens)
{
  ScHeadSweepResult *r;
  int i;

  if (n_layers < 1 || n_heads < 1 || n_tokens < 1 || (r = calloc (1, sizeof *r)) == NULL)
    return NULL;
  r->n_layers = n_layers;
  r->n_heads = n_heads;
  r->n_tokens = n_tokens;
  r->target = r->top1_clean = r->contrast = -1;
  r->logp_clean = r->loss_clean = r->logit_diff_clean = NAN;
  if ((r->heads = malloc ((size_t) n_layers * n_heads * sizeof *r->heads)) == NULL)
    {
      free (r);
      return NULL;
    }
  for (i = 0; i < n_layers * n_heads; i++)
    r->heads[i] = nan_effect ();
  return r;
}

ScTokenLooResult *
sc_token_loo_result_new (int n_tokens)
{
  ScTokenLooResult *r;
  int i;

  if (n_tokens < 1 || (r = calloc (1, sizeof *r)) == NULL)
    return NULL;
  r->n_tokens = n_tokens;
  r->kinds = SC_LOO_BOTH;
  r->target = r->top1_clean = r->contrast = -1;
  r->logp_clean = r->loss_clean = r->logit_diff_clean = NAN;
  r->mask = malloc ((size_t) n_tokens * sizeof *r->mask);
  r->drop = malloc ((size_t) n_tokens * sizeof *r->drop);
  if (r->mask == NULL || r->drop == NULL)
    {
      sc_token_loo_result_free (r);
      return NULL;
    }
  for (i = 0; i < n_tokens; i++)
    r->mask[i] = r->drop[i] = nan_effect ();
  return r;
}

void
sc_head_sweep_result_free (ScHeadSweepResult *r)
{
  if (r == NULL)
    return;
  free (r->heads);
  free (r);
}

void
sc_token_loo_result_free (ScTokenLooResult *r)
{
  if (r == NULL)
    return;
  free (r->mask);
  free (r->drop);
  free (r);
}

/* ------------------------------------------------------------------------------------ */
/* Running                                                                               */

/* Checks what every study needs before the first run. */
static ScStatus
check_args (ScSession *session, const ScModel *model, const int32_t *ids, int n, int min_n,
            const ScAblationParams *p, void *out, ScError *err)
{
  if (p == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "ablation: NULL argument");
  return sc_study_check_ids (session, model, ids, n, min_n, p->target, err);
}

static bool
report (ScAblationProgressFn progress, void *user, int done, int total)
{
  return progress == NULL || progress (user, (double) done / total);
}

/* An ablated run's effect when it gave the last row alone (@row, against the clean run's
 * @clean_last): sc_study_same_ids_effect's next-token part, no Δ loss (NaN), and Δ logit
 * difference. */
static ScStatus
last_row_effect (const float *clean_last, const float *row, int V, const ScHeadSweepResult *r,
                 ScAblationEffect *e, ScError *err)
{
  ScStatus st = sc_effect_next_token (clean_last, row, V, r->target, &e->next, err);

  if (st != SC_OK)
    return st;
  e->delta_loss = NAN;
  e->flipped = e->next.top1_ablated != e->next.top1_clean;
  e->delta_logit_diff = sc_study_logit_diff (row, r->target, r->contrast) - r->logit_diff_clean;
  return SC_OK;
}

/* stack_layers: the heads of each layer (those @only asks for) as stacked runs
 * (sc_forward_zero_heads, which groups them as memory allows), each run's last-row measures
 * as the one-at-a-time loop of sc_head_sweep_run_heads takes them. @clean_last: the clean
 * run's last row of logits. */
static ScStatus
stacked_sweep (ScSession *session, const int32_t *ids, int n, const bool *only,
               const float *clean_last, ScHeadSweepResult *r, ScAblationProgressFn progress,
               void *progress_user, int *done, int total, ScError *err)
{
  const ScModelInfo *info = sc_model_info (sc_session_model (session));
  const int L = (int) info->n_layers, H = (int) info->n_heads, V = (int) info->n_vocab;
  int *heads = malloc ((size_t) H * sizeof *heads);
  float *logits = malloc ((size_t) H * V * sizeof *logits);
  ScStatus st = SC_OK;

  if (heads == NULL || logits == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "ablation: out of memory for stacked runs");
      goto out;
    }
  for (int l = 0; l < L && st == SC_OK; l++)
    {
      int m = 0;
      for (int h = 0; h < H; h++)
        if (only == NULL || only[l * H + h])
          heads[m++] = h;
      if (m == 0)
        continue;
      if ((st = sc_forward_zero_heads (session, ids, n, l, heads, m, logits, err)) != SC_OK)
        break;
      for (int v = 0; v < m; v++)
        {
          if ((st = last_row_effect (clean_last, logits + (size_t) v * V, V, r,
                                     &r->heads[l * H + heads[v]], err)) != SC_OK)
            break;
          if (!report (progress, progress_user, ++*done, total))
            {
              st = sc_error_set (err, SC_ERR_CANCELLED, "ablation: cancelled after head "
                                 "L%d.H%d", l, heads[v]);
              break;
            }
        }
    }
out:
  free (heads);
  free (logits);
  return st;
}

ScStatus
sc_head_sweep_run (ScSession *session, const ScModel *model, const int32_t *ids, int n,
                   const ScAblationParams *p, ScAblationProgressFn progress,
                   void *progress_user, ScHeadSweepResult **out, ScError *err)
{
  return sc_head_sweep_run_heads (session, model, ids, n, p, NULL, progress, progress_user,
                                  out, err);
}

ScStatus
sc_head_sweep_run_heads (ScSession *session, const ScModel *model, const int32_t *ids, int n,
                         const ScAblationParams *p, const bool *only,
                         ScAblationProgressFn progress, void *progress_user,
                         ScHeadSweepResult **out, ScError *err)
{
  const ScModelInfo *info;
  ScHeadSweepResult *r = NULL;
  float *clean = NULL, *abl = NULL, *scale = NULL;
  double *losses = NULL;
  uint8_t *mean_on = NULL;
  ScIntervention iv = { 0 };
  ScForwardOptions opt = { 0 };
  int L, H, V, l, h, total = 0, done = 0;
  ScStatus st;

  if ((st = check_args (session, model, ids, n, 1, p, out, err)) != SC_OK)
    return st;
  if (p->mode != SC_ABLATE_ZERO && p->mode != SC_ABLATE_MEAN)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "ablation: unknown mode %d", (int) p->mode);
  if (p->stack_layers && (!p->last_only || p->mode != SC_ABLATE_ZERO || p->full_recompute))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "ablation: stacking a layer's runs needs the "
                         "last-position sweep with zero-ablation and prefix reuse");
  if (p->mode == SC_ABLATE_MEAN && p->head_mean == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "ablation: mean-ablation needs each head's "
                         "mean output (head_mean: the reference means of sc-head-means.h)");
  info = sc_model_info (model);
  L = (int) info->n_layers;
  H = (int) info->n_heads;
  V = (int) info->n_vocab;
  for (l = 0; l < L * H; l++)
    total += only == NULL || only[l];
  r = sc_head_sweep_result_new (L, H, n);
  clean = malloc ((size_t) n * V * sizeof *clean);
  /* last_only: an ablated run gives the last row */
  abl = malloc ((size_t) (p->last_only ? 1 : n) * V * sizeof *abl);
  scale = malloc ((size_t) L * H * sizeof *scale);
  mean_on = calloc ((size_t) L * H, 1);
  if (r == NULL || clean == NULL || abl == NULL || scale == NULL || mean_on == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "ablation: out of memory for %d tokens", n);
      goto fail;
    }

  /* 1. The clean run, keeping the residual entering every layer. */
  opt.all_logits = true;
  opt.keep_residuals = !p->full_recompute;
  if ((st = sc_forward (session, ids, n, &opt, clean, err)) != SC_OK
      || (st = sc_study_clean_measures (clean, ids, n, V, p->target, &r->target, &r->top1_clean,
                               &r->logp_clean, &r->loss_clean, err)) != SC_OK
      || (st = sc_study_check_contrast (p->contrast, r->target, V, err)) != SC_OK
      || (!p->last_only
          && (st = sc_study_clean_losses (clean, ids, n, V, &losses, err)) != SC_OK))
    goto fail;
  r->contrast = p->contrast;
  r->logit_diff_clean = sc_study_logit_diff (clean + (size_t) (n - 1) * V, r->target,
                                             r->contrast);

  /* 2. One head at a time: layers below its own are the clean run's. With last_only each
   * run gives the last row's logits, its last layer computed for that row alone. */
  for (l = 0; l < L * H; l++)
    scale[l] = 1.0f;
  if (p->mode == SC_ABLATE_ZERO)
    iv.head_scale = scale;
  else
    {
      iv.head_mean = p->head_mean;
      iv.head_mean_on = mean_on;
    }
  opt.keep_residuals = false;
  opt.all_logits = !p->last_only;
  opt.last_row = p->last_only;
  if (p->stack_layers)
    {
      st = stacked_sweep (session, ids, n, only, clean + (size_t) (n - 1) * V, r, progress,
                          progress_user, &done, total, err);
      if (st != SC_OK)
        goto fail;
      L = 0; /* done: the loop below runs no layer */
    }
  for (l = 0; l < L; l++)
    for (h = 0; h < H; h++)
      {
        const int i = l * H + h;
        if (only != NULL && !only[i])
          continue; /* not asked for: its entry stays NaN */
        if (p->mode == SC_ABLATE_ZERO)
          scale[i] = 0.0f;
        else
          mean_on[i] = 1;
        opt.intervention = &iv;
        opt.start_layer = p->full_recompute ? 0 : l;
        st = sc_forward (session, ids, n, &opt, abl, err);
        scale[i] = 1.0f;
        mean_on[i] = 0;
        if (st != SC_OK)
          goto fail;
        if (p->last_only)
          {
            if ((st = last_row_effect (clean + (size_t) (n - 1) * V, abl, V, r, &r->heads[i],
                                       err)) != SC_OK)
              goto fail;
          }
        else if ((st = sc_study_same_ids_effect (clean, abl, ids, n, V, r->target, losses,
                                                 &r->heads[i], err))
                 != SC_OK)
          goto fail;
        else
          r->heads[i].delta_logit_diff = sc_study_logit_diff (abl + (size_t) (n - 1) * V,
                                                              r->target, r->contrast)
                                         - r->logit_diff_clean;
        if (!report (progress, progress_user, ++done, total))
          {
            st = sc_error_set (err, SC_ERR_CANCELLED, "ablation: cancelled after head L%d.H%d",
                               l, h);
            goto fail;
          }
      }
  free (clean);
  free (abl);
  free (losses);
  free (scale);
  free (mean_on);
  *out = r;
  return SC_OK;

fail:
  free (clean);
  free (abl);
  free (losses);
  free (scale);
  free (mean_on);
  sc_head_sweep_result_free (r);
  return st;
}

/* Δ mean loss of dropping token @j (header): @clean (n, V) on @ids, @drop (n − 1, V) on
 * @ids without j. */
static ScStatus
drop_delta_loss (const float *clean, const float *drop, const int32_t *ids, const int32_t *dids,
                 int n, int j, int V, double *out, ScError *err)
{
  double sum = 0.0;
  int q, m = 0;
  ScStatus st;

  for (q = 1; q < n; q++)
    {
      const int nq = q - (q > j);
      double lc, ld;
      if (q == j || nq < 1)
        continue;
      if ((st = sc_log_softmax_at (clean + (size_t) (q - 1) * V, V, ids[q], &lc, err)) != SC_OK
          || (st = sc_log_softmax_at (drop + (size_t) (nq - 1) * V, V, dids[nq], &ld, err))
                 != SC_OK)
        return st;
      sum += (-ld) - (-lc);
      m++;
    }
  *out = m > 0 ? sum / m : NAN;
  return SC_OK;
}

ScStatus
sc_token_loo_run (ScSession *session, const ScModel *model, const int32_t *ids, int n,
                  const ScAblationParams *p, ScAblationProgressFn progress, void *progress_user,
                  ScTokenLooResult **out, ScError *err)
{
  const ScModelInfo *info;
  ScTokenLooResult *r = NULL;
  float *clean = NULL, *abl = NULL;
  double *losses = NULL;
  uint8_t *mask = NULL;
  int32_t *dids = NULL;
  ScIntervention iv = { 0 };
  ScForwardOptions opt = { .all_logits = true };
  unsigned kinds;
  int V, j, k, total, done = 0;
  ScStatus st;

  if ((st = check_args (session, model, ids, n, 2, p, out, err)) != SC_OK)
    return st;
  if ((p->loo_kinds & ~(unsigned) SC_LOO_BOTH) != 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "ablation: leave-one-out kinds 0x%x: only "
                         "mask (0x%x) and drop (0x%x) exist", p->loo_kinds, SC_LOO_MASK,
                         SC_LOO_DROP);
  kinds = p->loo_kinds != 0 ? p->loo_kinds : SC_LOO_BOTH;
  info = sc_model_info (model);
  V = (int) info->n_vocab;
  r = sc_token_loo_result_new (n);
  clean = malloc ((size_t) n * V * sizeof *clean);
  abl = malloc ((size_t) n * V * sizeof *abl);
  mask = calloc ((size_t) n, 1);
  dids = malloc ((size_t) n * sizeof *dids);
  if (r == NULL || clean == NULL || abl == NULL || mask == NULL || dids == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "ablation: out of memory for %d tokens", n);
      goto fail;
    }

  /* 1. The clean run. */
  if ((st = sc_forward (session, ids, n, &opt, clean, err)) != SC_OK
      || (st = sc_study_clean_measures (clean, ids, n, V, p->target, &r->target, &r->top1_clean,
                               &r->logp_clean, &r->loss_clean, err)) != SC_OK
      || (st = sc_study_check_contrast (p->contrast, r->target, V, err)) != SC_OK
      || (st = sc_study_clean_losses (clean, ids, n, V, &losses, err)) != SC_OK)
    goto fail;
  r->contrast = p->contrast;
  r->logit_diff_clean = sc_study_logit_diff (clean + (size_t) (n - 1) * V, r->target,
                                             r->contrast);

  r->kinds = kinds;

  /* 2. For each j but the query: mask it, then drop it (the kinds asked for). */
  iv.token_mask = mask;
  total = (kinds == SC_LOO_BOTH ? 2 : 1) * (n - 1);
  for (j = 0; j < n - 1; j++)
    {
      ScAblationEffect *e = &r->drop[j];
      if (kinds & SC_LOO_MASK)
        {
          mask[j] = 1;
          opt.intervention = &iv;
          st = sc_forward (session, ids, n, &opt, abl, err);
          mask[j] = 0;
          if (st != SC_OK
              || (st = sc_study_same_ids_effect (clean, abl, ids, n, V, r->target, losses,
                                                 &r->mask[j], err))
                     != SC_OK)
            goto fail;
          r->mask[j].delta_logit_diff = sc_study_logit_diff (abl + (size_t) (n - 1) * V,
                                                             r->target, r->contrast)
                                        - r->logit_diff_clean;
          if (!report (progress, progress_user, ++done, total))
            goto cancelled;
        }
      if (!(kinds & SC_LOO_DROP))
        continue;
      for (k = 0; k < n - 1; k++)
        dids[k] = ids[k + (k >= j)];
      opt.intervention = NULL;
      if ((st = sc_forward (session, dids, n - 1, &opt, abl, err)) != SC_OK
          || (st = sc_effect_next_token (clean + (size_t) (n - 1) * V,
                                         abl + (size_t) (n - 2) * V, V, r->target, &e->next,
                                         err)) != SC_OK
          || (st = drop_delta_loss (clean, abl, ids, dids, n, j, V, &e->delta_loss, err))
                 != SC_OK)
        goto fail;
      e->flipped = e->next.top1_ablated != e->next.top1_clean;
      e->delta_logit_diff = sc_study_logit_diff (abl + (size_t) (n - 2) * V, r->target,
                                                 r->contrast)
                            - r->logit_diff_clean;
      if (!report (progress, progress_user, ++done, total))
        goto cancelled;
    }
  free (clean);
  free (abl);
  free (losses);
  free (mask);
  free (dids);
  *out = r;
  return SC_OK;

cancelled:
  st = sc_error_set (err, SC_ERR_CANCELLED, "ablation: cancelled at token %d", j);
fail:
  free (clean);
  free (abl);
  free (losses);
  free (mask);
  free (dids);
  sc_token_loo_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* Storage                                                                               */

int
sc_ablation_params_json (const char *kind, int64_t run_id, const ScAblationParams *p,
                         char *buf, size_t size)
{
  const bool heads = kind != NULL && strcmp (kind, SC_ABLATION_KIND_HEADS) == 0;
  char target[40];
  const char *kinds = "";
  /* without last_only the text is the one written before the option existed */
  const char *measures = !heads || p == NULL || !p->last_only ? ""
                         : p->stack_layers ? ",\"measures\":\"last\",\"stacked\":true"
                                           : ",\"measures\":\"last\"";
  int len;

  if (p == NULL || buf == NULL || (p->loo_kinds & ~(unsigned) SC_LOO_BOTH) != 0
      || p->contrast < -1)
    return -1;
  if (!heads && p->loo_kinds == SC_LOO_MASK)
    kinds = ",\"kinds\":\"mask\"";
  else if (!heads && p->loo_kinds == SC_LOO_DROP)
    kinds = ",\"kinds\":\"drop\"";
  if (p->target >= 0)
    snprintf (target, sizeof target, "%d", p->target);
  else
    strcpy (target, "null");
  /* without a contrast the text is the one written before contrasts existed */
  if (p->contrast >= 0)
    snprintf (target + strlen (target), sizeof target - strlen (target), ",\"contrast\":%d",
              p->contrast);
  if (heads && p->mode == SC_ABLATE_MEAN)
    {
      /* the set's name goes in as is: it must need no JSON escaping */
      size_t i, n = p->mean_set != NULL ? strlen (p->mean_set) : 0;
      if (n < 1 || n >= SC_HEAD_MEANS_SET_MAX)
        return -1;
      for (i = 0; i < n; i++)
        if (!set_char_ok_alnum (p->mean_set[i]) && p->mean_set[i] != '.'
            && p->mean_set[i] != '_' && p->mean_set[i] != '-')
          return -1;
      len = snprintf (buf, size, "{\"study\":%d,\"run\":%lld,\"target\":%s,\"mode\":\"mean\","
                      "\"means\":\"%s\"%s}", SC_ABLATION_STUDY_VERSION, (long long) run_id,
                      target, p->mean_set, measures);
    }
  else
    len = snprintf (buf, size, "{\"study\":%d,\"run\":%lld,\"target\":%s,\"mode\":\"zero\""
                    "%s%s}", SC_ABLATION_STUDY_VERSION, (long long) run_id, target, kinds,
                    measures);
  return len < 0 || (size_t) len >= size ? -1 : len;
}

ScStatus
sc_head_sweep_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                     const ScHeadSweepResult *r, int64_t *study_id, ScError *err)
{
  ScStoreStudy *s = NULL;
  ScStatus st;
  int i, k;

  if (r == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "ablation: no result to store");
  if ((st = sc_store_study_begin (store, SC_ABLATION_KIND_HEADS, model, params_json, &s, err))
      != SC_OK)
    return st;
  for (i = 0; i < r->n_layers * r->n_heads; i++)
    {
      double v[SC_STUDY_N_EFFECT_METRICS];
      sc_study_effect_values (&r->heads[i], v);
      for (k = 0; k < SC_STUDY_N_EFFECT_METRICS; k++)
        if ((st = sc_store_study_add_head (s, i / r->n_heads, i % r->n_heads,
                                           sc_study_effect_metrics[k], v[k], err)) != SC_OK)
          goto fail;
      if (r->contrast >= 0
          && (st = sc_store_study_add_head (s, i / r->n_heads, i % r->n_heads,
                                            SC_STUDY_CONTRAST_METRIC,
                                            r->heads[i].delta_logit_diff, err)) != SC_OK)
        goto fail;
    }
  if ((st = sc_study_add_clean (s, r->target, r->logp_clean, r->top1_clean, r->loss_clean,
                                r->n_tokens, err)) != SC_OK
      || (st = sc_study_add_contrast (s, r->contrast, r->logit_diff_clean, err)) != SC_OK)
    goto fail;
  return sc_store_study_commit (s, study_id, err);
fail:
  sc_store_study_abort (s);
  return st;
}

ScStatus
sc_token_loo_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                    const ScTokenLooResult *r, int64_t *study_id, ScError *err)
{
  static const char *const KIND[2] = { "mask", "drop" };
  ScStoreStudy *s = NULL;
  ScStatus st;
  int i, k, c;

  if (r == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "ablation: no result to store");
  if (r->kinds == 0 || (r->kinds & ~(unsigned) SC_LOO_BOTH) != 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "ablation: the result's leave-one-out kinds "
                         "0x%x are not mask and/or drop", r->kinds);
  if ((st = sc_store_study_begin (store, SC_ABLATION_KIND_TOKENS, model, params_json, &s, err))
      != SC_OK)
    return st;
  for (c = 0; c < 2; c++) /* only the kinds the result holds */
    for (i = 0; i < r->n_tokens && (r->kinds & (c == 0 ? SC_LOO_MASK : SC_LOO_DROP)); i++)
      {
        double v[SC_STUDY_N_EFFECT_METRICS];
        sc_study_effect_values (c == 0 ? &r->mask[i] : &r->drop[i], v);
        for (k = 0; k <= SC_STUDY_N_EFFECT_METRICS; k++)
          {
            char name[SC_STORE_STUDY_NAME_MAX];
            if (k == SC_STUDY_N_EFFECT_METRICS && r->contrast < 0)
              break;
            snprintf (name, sizeof name, "%s.%s", KIND[c],
                      k < SC_STUDY_N_EFFECT_METRICS ? sc_study_effect_metrics[k]
                                                    : SC_STUDY_CONTRAST_METRIC);
            if ((st = sc_store_study_add_series (s, name, i,
                                                 k < SC_STUDY_N_EFFECT_METRICS
                                                   ? v[k]
                                                   : (c == 0 ? r->mask : r->drop)[i].delta_logit_diff,
                                                 err)) != SC_OK)
              goto fail;
          }
      }
  if ((st = sc_study_add_clean (s, r->target, r->logp_clean, r->top1_clean, r->loss_clean,
                                r->n_tokens, err)) != SC_OK
      || (st = sc_study_add_contrast (s, r->contrast, r->logit_diff_clean, err)) != SC_OK)
    goto fail;
  return sc_store_study_commit (s, study_id, err);
fail:
  sc_store_study_abort (s);
  return st;
}

/* The leave-one-out kinds the params name ("kinds": "mask" or "drop"; absent: both) each
 * with every metric at every one of the @n positions, and no other kind. */
static ScStatus
check_loo_series (const ScStoreStudyData *d, const char *params_json, int n, bool contrast,
                  ScError *err)
{
  static const char *const KIND[2] = { "mask", "drop" };
  const bool only_mask = strstr (params_json, "\"kinds\":\"mask\"") != NULL;
  const bool only_drop = strstr (params_json, "\"kinds\":\"drop\"") != NULL;
  ScStatus st;

  for (int c = 0; c < 2; c++)
    {
      const bool wanted = c == 0 ? !only_drop : !only_mask;
      for (int k = 0; k <= SC_STUDY_N_EFFECT_METRICS; k++)
        {
          ScStudyValueRule rule = k < SC_STUDY_N_EFFECT_METRICS ? sc_study_effect_rules[k]
                                                                : sc_study_contrast_rule;
          char name[SC_STORE_STUDY_NAME_MAX];
          snprintf (name, sizeof name, "%s.%s", KIND[c], rule.name);
          rule.name = name;
          /* a kind not asked for holds no position at all; the contrast's metric only
           * with a contrast */
          const bool held = wanted && (k < SC_STUDY_N_EFFECT_METRICS || contrast);
          if ((st = sc_study_check_series (d, &rule, held ? n : 0, err)) != SC_OK)
            return st;
        }
    }
  return SC_OK;
}

ScStatus
sc_head_sweep_load (ScStore *store, const ScModelInfo *info,
                    const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                    ScHeadSweepResult **out, int64_t *study_id, ScError *err)
{
  ScStoreStudyData *d = NULL;
  ScHeadSweepResult *r = NULL;
  int target, top1, n, contrast;
  double logp, loss, diff;
  size_t i;
  ScStatus st;

  if ((st = sc_study_find_and_read (store, SC_ABLATION_KIND_HEADS, sha256, params_json, &d,
                                    study_id, err)) != SC_OK)
    return st;
  if (d->n_layers != (int) info->n_layers || d->n_heads != (int) info->n_heads
      || !sc_study_read_clean (d, info->n_vocab, &target, &logp, &top1, &loss, &n)
      || !sc_study_read_contrast (d, info->n_vocab, target, &contrast, &diff))
    goto bad;
  /* every head swept, each value in range, the target and contrast the params asked for */
  if ((st = sc_study_check_heads (d, sc_study_effect_rules, SC_STUDY_N_EFFECT_METRICS, NULL,
                                  err)) != SC_OK
      || (contrast >= 0
          && (st = sc_study_check_heads (d, &sc_study_contrast_rule, 1, NULL, err)) != SC_OK)
      || (st = sc_study_check_target (d, params_json, target, err)) != SC_OK
      || (st = sc_study_check_contrast_params (d, params_json, contrast, err)) != SC_OK)
    {
      sc_store_study_data_free (d);
      return st;
    }
  if ((r = sc_head_sweep_result_new (d->n_layers, d->n_heads, n)) == NULL)
    {
      sc_store_study_data_free (d);
      return sc_error_set (err, SC_ERR_NOMEM, "ablation: out of memory");
    }
  r->target = target;
  r->top1_clean = top1;
  r->logp_clean = logp;
  r->loss_clean = loss;
  r->contrast = contrast;
  r->logit_diff_clean = diff;
  for (i = 0; i < d->n_head_values; i++)
    {
      const ScStoreHeadValue *v = &d->heads[i];
      const int k = sc_study_effect_metric_index (v->metric);
      if (contrast >= 0 && strcmp (v->metric, SC_STUDY_CONTRAST_METRIC) == 0)
        r->heads[v->layer * d->n_heads + v->head].delta_logit_diff = v->value;
      if (k >= 0 && !sc_study_effect_set (&r->heads[v->layer * d->n_heads + v->head], k, v->value,
                                          top1, logp, info->n_vocab))
        goto bad;
    }
  sc_store_study_data_free (d);
  *out = r;
  return SC_OK;
bad:
  st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): its values do not fit %s",
                     (long long) d->id, SC_ABLATION_KIND_HEADS, info->name);
  sc_store_study_data_free (d);
  sc_head_sweep_result_free (r);
  return st;
}

ScStatus
sc_token_loo_load (ScStore *store, const ScModelInfo *info,
                   const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                   ScTokenLooResult **out, int64_t *study_id, ScError *err)
{
  ScStoreStudyData *d = NULL;
  ScTokenLooResult *r = NULL;
  int target, top1, n, contrast;
  double logp, loss, diff;
  size_t i;
  ScStatus st;

  if ((st = sc_study_find_and_read (store, SC_ABLATION_KIND_TOKENS, sha256, params_json, &d,
                                    study_id, err)) != SC_OK)
    return st;
  if (!sc_study_read_clean (d, info->n_vocab, &target, &logp, &top1, &loss, &n)
      || !sc_study_read_contrast (d, info->n_vocab, target, &contrast, &diff))
    goto bad;
  if ((st = check_loo_series (d, params_json, n, contrast >= 0, err)) != SC_OK
      || (st = sc_study_check_target (d, params_json, target, err)) != SC_OK
      || (st = sc_study_check_contrast_params (d, params_json, contrast, err)) != SC_OK)
    {
      sc_store_study_data_free (d);
      return st;
    }
  if ((r = sc_token_loo_result_new (n)) == NULL)
    {
      sc_store_study_data_free (d);
      return sc_error_set (err, SC_ERR_NOMEM, "ablation: out of memory");
    }
  r->target = target;
  r->top1_clean = top1;
  r->logp_clean = logp;
  r->loss_clean = loss;
  r->contrast = contrast;
  r->logit_diff_clean = diff;
  r->kinds = 0;
  for (i = 0; i < d->n_series_values; i++)
    {
      const ScStoreSeriesValue *v = &d->series[i];
      const char *dot = strchr (v->series, '.');
      ScAblationEffect *e;
      int k;
      if (strncmp (v->series, "mask.", 5) == 0)
        {
          e = r->mask;
          r->kinds |= SC_LOO_MASK;
        }
      else if (strncmp (v->series, "drop.", 5) == 0)
        {
          e = r->drop;
          r->kinds |= SC_LOO_DROP;
        }
      else
        continue;
      if (contrast >= 0 && strcmp (dot + 1, SC_STUDY_CONTRAST_METRIC) == 0 && v->pos < n)
        {
          e[v->pos].delta_logit_diff = v->value;
          continue;
        }
      if ((k = sc_study_effect_metric_index (dot + 1)) < 0)
        continue;
      if (v->pos >= n || !sc_study_effect_set (&e[v->pos], k, v->value, top1, logp, info->n_vocab))
        goto bad;
    }
  if (r->kinds == 0) /* no kind at all: nothing to read back */
    goto bad;
  sc_store_study_data_free (d);
  *out = r;
  return SC_OK;
bad:
  st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): its values do not fit %s",
                     (long long) d->id, SC_ABLATION_KIND_TOKENS, info->name);
  sc_store_study_data_free (d);
  sc_token_loo_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* The study kinds (sc-study.h)                                                          */

static int
heads_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx,
                   char *buf, size_t size, ScError *err)
{
  ScAblationParams p = *(const ScAblationParams *) params;
  int len;

  if (kind == &sc_study_kind_heads_mean)
    p.mode = SC_ABLATE_MEAN, p.mean_set = ctx->means_set;
  else
    p.mode = SC_ABLATE_ZERO, p.head_mean = NULL, p.mean_set = NULL;
  if ((len = sc_ablation_params_json (kind->id, ctx->run_id, &p, buf, size)) < 0)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: the parameters are out of range",
                  kind->name);
  return len;
}

static ScStatus
heads_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
           ScError *err)
{
  ScAblationParams p = *(const ScAblationParams *) params;
  ScHeadSweepResult *r = NULL;
  ScStatus st;

  if (kind == &sc_study_kind_heads_mean)
    p.mode = SC_ABLATE_MEAN, p.head_mean = ctx->head_mean, p.mean_set = ctx->means_set;
  else
    p.mode = SC_ABLATE_ZERO, p.head_mean = NULL, p.mean_set = NULL;
  st = sc_head_sweep_run (ctx->session, ctx->model, ctx->ids, ctx->n_tokens, &p, ctx->progress,
                          ctx->progress_user, &r, err);
  *out = r;
  return st;
}

static ScStatus
heads_store (ScStore *store, const ScStoreModel *model, const char *params_json,
             const void *result, int64_t *study_id, ScError *err)
{
  return sc_head_sweep_store (store, model, params_json, result, study_id, err);
}

static ScStatus
heads_load (ScStore *store, const ScModelInfo *info, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
            const char *params_json, const void *params, void **out, int64_t *study_id,
            ScError *err)
{
  ScHeadSweepResult *r = NULL;
  ScStatus st = sc_head_sweep_load (store, info, sha256, params_json, &r, study_id, err);

  (void) params;
  *out = r;
  return st;
}

static int
heads_n_tokens (const void *result)
{
  return ((const ScHeadSweepResult *) result)->n_tokens;
}

static void
heads_clean (const void *result, ScStudyClean *out)
{
  const ScHeadSweepResult *r = result;

  out->target = r->target;
  out->top1_clean = r->top1_clean;
  out->logp_clean = r->logp_clean;
  out->loss_clean = r->loss_clean;
  out->contrast = r->contrast;
  out->logit_diff_clean = r->logit_diff_clean;
}

static void
heads_free (void *result)
{
  sc_head_sweep_result_free (result);
}

static const ScStudyOption ABLATION_OPTIONS[] = {
  { "target", SC_STUDY_OPTION_TOKEN, offsetof (ScAblationParams, target), 0, 0, NULL,
    "the token whose probability is measured (default: the clean top-1)" },
  { "contrast", SC_STUDY_OPTION_TOKEN, offsetof (ScAblationParams, contrast), 0, 0, NULL,
    "a second token: also measure the change of logit(target) - logit(contrast) "
    "(default: none)" },
  { NULL },
};

static const ScAblationParams HEADS_DEFAULT = { .target = -1, .contrast = -1,
                                                .mode = SC_ABLATE_ZERO };
static const ScAblationParams HEADS_MEAN_DEFAULT = { .target = -1, .contrast = -1,
                                                     .mode = SC_ABLATE_MEAN };

const ScStudyKind sc_study_kind_heads = {
  .id = SC_ABLATION_KIND_HEADS,
  .name = "heads",
  .title = "Head sweep (zero-ablation)",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_SESSION,
  .min_tokens = 1,
  .params_size = sizeof (ScAblationParams),
  .params_default = &HEADS_DEFAULT,
  .options = ABLATION_OPTIONS,
  .params_json = heads_params_json,
  .run = heads_run,
  .store = heads_store,
  .load = heads_load,
  .result_n_tokens = heads_n_tokens,
  .result_clean = heads_clean,
  .result_free = heads_free,
};

const ScStudyKind sc_study_kind_heads_mean = {
  .id = SC_ABLATION_KIND_HEADS,
  .name = "heads-mean",
  .title = "Head sweep (mean-ablation)",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_SESSION | SC_STUDY_NEEDS_MEANS,
  .min_tokens = 1,
  .params_size = sizeof (ScAblationParams),
  .params_default = &HEADS_MEAN_DEFAULT,
  .options = ABLATION_OPTIONS,
  .params_json = heads_params_json,
  .run = heads_run,
  .store = heads_store,
  .load = heads_load,
  .result_n_tokens = heads_n_tokens,
  .result_clean = heads_clean,
  .result_free = heads_free,
};

static int
tokens_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx,
                    char *buf, size_t size, ScError *err)
{
  int len = sc_ablation_params_json (kind->id, ctx->run_id, params, buf, size);

  if (len < 0)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: the parameters are out of range",
                  kind->name);
  return len;
}

static ScStatus
tokens_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
            ScError *err)
{
  ScTokenLooResult *r = NULL;
  ScStatus st = sc_token_loo_run (ctx->session, ctx->model, ctx->ids, ctx->n_tokens, params,
                                  ctx->progress, ctx->progress_user, &r, err);

  (void) kind;
  *out = r;
  return st;
}

static ScStatus
tokens_store (ScStore *store, const ScStoreModel *model, const char *params_json,
              const void *result, int64_t *study_id, ScError *err)
{
  return sc_token_loo_store (store, model, params_json, result, study_id, err);
}

static ScStatus
tokens_load (ScStore *store, const ScModelInfo *info, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
             const char *params_json, const void *params, void **out, int64_t *study_id,
             ScError *err)
{
  ScTokenLooResult *r = NULL;
  ScStatus st = sc_token_loo_load (store, info, sha256, params_json, &r, study_id, err);

  (void) params;
  *out = r;
  return st;
}

static int
tokens_n_tokens (const void *result)
{
  return ((const ScTokenLooResult *) result)->n_tokens;
}

static void
tokens_clean (const void *result, ScStudyClean *out)
{
  const ScTokenLooResult *r = result;

  out->target = r->target;
  out->top1_clean = r->top1_clean;
  out->logp_clean = r->logp_clean;
  out->loss_clean = r->loss_clean;
  out->contrast = r->contrast;
  out->logit_diff_clean = r->logit_diff_clean;
}

static void
tokens_free (void *result)
{
  sc_token_loo_result_free (result);
}

const ScStudyKind sc_study_kind_tokens = {
  .id = SC_ABLATION_KIND_TOKENS,
  .name = "tokens",
  .title = "Token leave-one-out",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_SESSION,
  .min_tokens = 2,
  .params_size = sizeof (ScAblationParams),
  .params_default = &HEADS_DEFAULT,
  .options = ABLATION_OPTIONS,
  .params_json = tokens_params_json,
  .run = tokens_run,
  .store = tokens_store,
  .load = tokens_load,
  .result_n_tokens = tokens_n_tokens,
  .result_clean = tokens_clean,
  .result_free = tokens_free,
};
