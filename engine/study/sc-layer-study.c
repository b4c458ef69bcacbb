/* sc-layer-study.c — the layer sweep (sc-layer-study.h): each layer's attention block
 * zero-ablated in turn, measured against the clean run with the shared effect of
 * sc-study.h, stored as series, and its study kind. */
#include "study/sc-layer-study.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ScLayerSweepResult *
sc_layer_sweep_result_new (int n_layers, int n_tokens)
{
  ScLayerSweepResult *r;

  if (n_layers < 1 || n_tokens < 1 || (r = calloc (1, sizeof *r)) == NULL)
    return NULL;
  r->n_layers = n_layers;
  r->n_tokens = n_tokens;
  r->target = r->top1_clean = r->contrast = -1;
  r->logp_clean = r->loss_clean = r->logit_diff_clean = NAN;
  if ((r->layers = malloc ((size_t) n_layers * sizeof *r->layers)) == NULL)
    {
      free (r);
      return NULL;
    }
  for (int l = 0; l < n_layers; l++)
    r->layers[l] = (ScAblationEffect) { .next = { NAN, NAN, NAN, NAN, NAN, -1, -1 },
                                        .delta_loss = NAN, .flipped = false,
                                        .delta_logit_diff = NAN };
  return r;
}

void
sc_layer_sweep_result_free (ScLayerSweepResult *r)
{
  if (r == NULL)
    return;
  free (r->layers);
  free (r);
}

ScStatus
sc_layer_sweep_run (ScSession *session, const ScModel *model, const int32_t *ids, int n,
                    const ScLayerSweepParams *p, ScStudyProgressFn progress,
                    void *progress_user, ScLayerSweepResult **out, ScError *err)
{
  const ScModelInfo *info;
  ScLayerSweepResult *r = NULL;
  float *clean = NULL, *abl = NULL, *scale = NULL;
  double *losses = NULL;
  ScIntervention iv = { 0 };
  ScForwardOptions opt = { 0 };
  int L, H, V;
  ScStatus st;

  if (p == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "layer sweep: NULL argument");
  if ((st = sc_study_check_ids (session, model, ids, n, 1, p->target, err)) != SC_OK)
    return st;
  info = sc_model_info (model);
  L = (int) info->n_layers;
  H = (int) info->n_heads;
  V = (int) info->n_vocab;
  r = sc_layer_sweep_result_new (L, n);
  clean = malloc ((size_t) n * V * sizeof *clean);
  abl = malloc ((size_t) n * V * sizeof *abl);
  scale = malloc ((size_t) L * H * sizeof *scale);
  if (r == NULL || clean == NULL || abl == NULL || scale == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "layer sweep: out of memory for %d tokens", n);
      goto out;
    }

  /* 1. The clean run, keeping the residual entering every layer. */
  opt.all_logits = true;
  opt.keep_residuals = true;
  if ((st = sc_forward (session, ids, n, &opt, clean, err)) != SC_OK
      || (st = sc_study_clean_measures (clean, ids, n, V, p->target, &r->target,
                                        &r->top1_clean, &r->logp_clean, &r->loss_clean, err))
             != SC_OK
      || (st = sc_study_clean_losses (clean, ids, n, V, &losses, err)) != SC_OK
      || (st = sc_study_check_contrast (p->contrast, r->target, V, err)) != SC_OK)
    goto out;
  r->contrast = p->contrast;
  r->logit_diff_clean = sc_study_logit_diff (clean + (size_t) (n - 1) * V, r->target,
                                             r->contrast);

  /* 2. One layer at a time: every head of layer l scaled to 0, layers below l the clean
   *    run's (start_layer = l). */
  for (int i = 0; i < L * H; i++)
    scale[i] = 1.0f;
  iv.head_scale = scale;
  opt.keep_residuals = false;
  opt.intervention = &iv;
  for (int l = 0; l < L; l++)
    {
      for (int h = 0; h < H; h++)
        scale[l * H + h] = 0.0f;
      opt.start_layer = l;
      st = sc_forward (session, ids, n, &opt, abl, err);
      for (int h = 0; h < H; h++)
        scale[l * H + h] = 1.0f;
      if (st != SC_OK
          || (st = sc_study_same_ids_effect (clean, abl, ids, n, V, r->target, losses,
                                             &r->layers[l], err)) != SC_OK)
        goto out;
      r->layers[l].delta_logit_diff = sc_study_logit_diff (abl + (size_t) (n - 1) * V,
                                                           r->target, r->contrast)
                                      - r->logit_diff_clean;
      if (progress != NULL && !progress (progress_user, (double) (l + 1) / L))
        {
          st = sc_error_set (err, SC_ERR_CANCELLED, "layer sweep: cancelled after layer %d", l);
          goto out;
        }
    }
  *out = r;
  r = NULL;
out:
  free (clean);
  free (abl);
  free (scale);
  free (losses);
  sc_layer_sweep_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* Storage                                                                               */

int
sc_layer_sweep_params_json (int64_t run_id, const ScLayerSweepParams *p, char *buf, size_t size)
{
  char target[40];
  int len;

  if (p == NULL || p->target < -1 || p->contrast < -1)
    return -1;
  if (p->target >= 0)
    snprintf (target, sizeof target, "%d", p->target);
  else
    strcpy (target, "null");
  /* without a contrast the text is the one written before contrasts existed */
  if (p->contrast >= 0)
    snprintf (target + strlen (target), sizeof target - strlen (target), ",\"contrast\":%d",
              p->contrast);
  len = snprintf (buf, size, "{\"study\":%d,\"run\":%lld,\"target\":%s}", SC_LAYER_STUDY_VERSION,
                  (long long) run_id, target);
  return len < 0 || (size_t) len >= size ? -1 : len;
}

ScStatus
sc_layer_sweep_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                      const ScLayerSweepResult *r, int64_t *study_id, ScError *err)
{
  ScStoreStudy *s = NULL;
  ScStatus st;

  if (r == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "layer sweep: no result to store");
  if ((st = sc_store_study_begin (store, SC_LAYER_STUDY_KIND, model, params_json, &s, err))
      != SC_OK)
    return st;
  for (int l = 0; l < r->n_layers; l++)
    {
      double v[SC_STUDY_N_EFFECT_METRICS];
      sc_study_effect_values (&r->layers[l], v);
      for (int k = 0; k < SC_STUDY_N_EFFECT_METRICS; k++)
        if ((st = sc_store_study_add_series (s, sc_study_effect_metrics[k], l, v[k], err))
            != SC_OK)
          goto fail;
      if (r->contrast >= 0
          && (st = sc_store_study_add_series (s, SC_STUDY_CONTRAST_METRIC, l,
                                              r->layers[l].delta_logit_diff, err)) != SC_OK)
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
sc_layer_sweep_load (ScStore *store, const ScModelInfo *info,
                     const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                     ScLayerSweepResult **out, int64_t *study_id, ScError *err)
{
  ScStoreStudyData *d = NULL;
  ScLayerSweepResult *r = NULL;
  int target, top1, n, contrast;
  double logp, loss, diff;
  ScStatus st;

  if ((st = sc_study_find_and_read (store, SC_LAYER_STUDY_KIND, sha256, params_json, &d,
                                    study_id, err)) != SC_OK)
    return st;
  if (d->n_layers != (int) info->n_layers
      || !sc_study_read_clean (d, info->n_vocab, &target, &logp, &top1, &loss, &n)
      || !sc_study_read_contrast (d, info->n_vocab, target, &contrast, &diff))
    goto bad;
  /* every layer swept, each value in range, the target and contrast the params name */
  st = sc_study_check_target (d, params_json, target, err);
  if (st == SC_OK)
    st = sc_study_check_contrast_params (d, params_json, contrast, err);
  for (int k = 0; k < SC_STUDY_N_EFFECT_METRICS && st == SC_OK; k++)
    st = sc_study_check_series (d, &sc_study_effect_rules[k], d->n_layers, err);
  if (st == SC_OK && contrast >= 0)
    st = sc_study_check_series (d, &sc_study_contrast_rule, d->n_layers, err);
  if (st != SC_OK)
    {
      sc_store_study_data_free (d);
      return st;
    }
  if ((r = sc_layer_sweep_result_new (d->n_layers, n)) == NULL)
    {
      sc_store_study_data_free (d);
      return sc_error_set (err, SC_ERR_NOMEM, "layer sweep: out of memory");
    }
  r->target = target;
  r->top1_clean = top1;
  r->logp_clean = logp;
  r->loss_clean = loss;
  r->contrast = contrast;
  r->logit_diff_clean = diff;
  for (size_t i = 0; i < d->n_series_values; i++)
    {
      const ScStoreSeriesValue *v = &d->series[i];
      const int k = sc_study_effect_metric_index (v->series);
      if (contrast >= 0 && strcmp (v->series, SC_STUDY_CONTRAST_METRIC) == 0 && v->pos >= 0
          && v->pos < r->n_layers)
        r->layers[v->pos].delta_logit_diff = v->value;
      if (k < 0)
        continue; /* "clean" (read above), the contrast's */
      if (v->pos < 0 || v->pos >= r->n_layers
          || !sc_study_effect_set (&r->layers[v->pos], k, v->value, top1, logp, info->n_vocab))
        goto bad;
    }
  sc_store_study_data_free (d);
  *out = r;
  return SC_OK;
bad:
  st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): its values do not fit %s",
                     (long long) d->id, SC_LAYER_STUDY_KIND, info->name);
  sc_store_study_data_free (d);
  sc_layer_sweep_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* The study kind (sc-study.h)                                                           */

static int
layers_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx,
                    char *buf, size_t size, ScError *err)
{
  const int len = sc_layer_sweep_params_json (ctx->run_id, params, buf, size);

  if (len < 0)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: the parameters are out of range",
                  kind->name);
  return len;
}

static ScStatus
layers_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
            ScError *err)
{
  ScLayerSweepResult *r = NULL;
  ScStatus st = sc_layer_sweep_run (ctx->session, ctx->model, ctx->ids, ctx->n_tokens, params,
                                    ctx->progress, ctx->progress_user, &r, err);

  (void) kind;
  *out = r;
  return st;
}

static ScStatus
layers_store (ScStore *store, const ScStoreModel *model, const char *params_json,
              const void *result, int64_t *study_id, ScError *err)
{
  return sc_layer_sweep_store (store, model, params_json, result, study_id, err);
}

static ScStatus
layers_load (ScStore *store, const ScModelInfo *info,
             const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
             const void *params, void **out, int64_t *study_id, ScError *err)
{
  ScLayerSweepResult *r = NULL;
  ScStatus st = sc_layer_sweep_load (store, info, sha256, params_json, &r, study_id, err);

  (void) params;
  *out = r;
  return st;
}

static int
layers_n_tokens (const void *result)
{
  return ((const ScLayerSweepResult *) result)->n_tokens;
}

static void
layers_clean (const void *result, ScStudyClean *out)
{
  const ScLayerSweepResult *r = result;

  out->target = r->target;
  out->top1_clean = r->top1_clean;
  out->logp_clean = r->logp_clean;
  out->loss_clean = r->loss_clean;
}

static void
layers_free (void *result)
{
  sc_layer_sweep_result_free (result);
}

static const ScLayerSweepParams LAYERS_DEFAULT = { .target = -1, .contrast = -1 };

static const ScStudyOption LAYERS_OPTIONS[] = {
  { "target", SC_STUDY_OPTION_TOKEN, offsetof (ScLayerSweepParams, target), 0, 0, NULL,
    "the token whose probability is measured (default: the clean top-1)" },
  { "contrast", SC_STUDY_OPTION_TOKEN, offsetof (ScLayerSweepParams, contrast), 0, 0, NULL,
    "a second token B: also measure Δ (logit(target) - logit(B)) (default: none)" },
  { NULL },
};

const ScStudyKind sc_study_kind_layers = {
  .id = SC_LAYER_STUDY_KIND,
  .name = "layers",
  .title = "Layer sweep (each layer's attention zero-ablated)",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_SESSION,
  .min_tokens = 1,
  .params_size = sizeof (ScLayerSweepParams),
  .params_default = &LAYERS_DEFAULT,
  .options = LAYERS_OPTIONS,
  .params_json = layers_params_json,
  .run = layers_run,
  .store = layers_store,
  .load = layers_load,
  .result_n_tokens = layers_n_tokens,
  .result_clean = layers_clean,
  .result_free = layers_free,
};
