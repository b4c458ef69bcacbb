/* sc-ablation-first.c — the head sweep with an attribution first pass
 * (sc-ablation-first.h). */
#include "study/sc-ablation-first.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/sc-rank.h"
#include "study/sc-patch-study.h"

static double
now_s (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

double
sc_head_first_exact (const ScHeadFirstResult *r, int i)
{
  const ScAblationEffect *e = &r->sweep->heads[i];

  return r->sweep->contrast >= 0 ? e->delta_logit_diff : e->next.delta_logp;
}

void
sc_head_first_result_free (ScHeadFirstResult *r)
{
  if (r == NULL)
    return;
  sc_head_sweep_result_free (r->sweep);
  free (r->estimate);
  free (r->exact);
  free (r);
}

static ScHeadFirstResult *
result_new (int L, int H, int n)
{
  ScHeadFirstResult *r = calloc (1, sizeof *r);

  if (r == NULL)
    return NULL;
  r->sweep = sc_head_sweep_result_new (L, H, n);
  r->estimate = malloc ((size_t) L * H * sizeof *r->estimate);
  r->exact = calloc ((size_t) L * H, sizeof *r->exact);
  r->rho = r->first_s = r->exact_s = NAN;
  if (r->sweep == NULL || r->estimate == NULL || r->exact == NULL)
    {
      sc_head_first_result_free (r);
      return NULL;
    }
  for (int i = 0; i < L * H; i++)
    r->estimate[i] = NAN;
  return r;
}

/* Spearman ρ of the estimates and the exact measures over the exact heads (NaN: undefined). */
static void
set_rho (ScHeadFirstResult *r)
{
  const int LH = r->sweep->n_layers * r->sweep->n_heads;
  double *x = malloc ((size_t) 2 * LH * sizeof *x), *y = x != NULL ? x + LH : NULL;
  ScSpearman sp;
  ScError e = { 0 };
  int k = 0;

  r->rho = NAN;
  if (x == NULL)
    return;
  for (int i = 0; i < LH; i++)
    if (r->exact[i] && isfinite (r->estimate[i]) && isfinite (sc_head_first_exact (r, i)))
      {
        x[k] = r->estimate[i];
        y[k] = sc_head_first_exact (r, i);
        k++;
      }
  if (k >= 3 && sc_spearman_rho (x, y, k, &sp, &e) == SC_OK && isfinite (sp.rho))
    r->rho = sp.rho;
  free (x);
}

/* ------------------------------------------------------------------------------------ */
/* Running                                                                               */

/* The backward's ∂m/∂o per layer, turned into each head's estimate (header). */
typedef struct {
  double *estimate;
  const float *o;    /* (L, H, n, d) the clean run's head outputs */
  const float *mean; /* (L, H, d) or NULL: zero-ablation */
  int H, d, n;
} Estimate;

static bool
estimate_layer (void *user, int layer, const float *d_o, int n, int width)
{
  const Estimate *e = user;

  for (int h = 0; h < e->H; h++)
    {
      const float *a = e->mean != NULL ? e->mean + ((size_t) layer * e->H + h) * e->d : NULL;
      double sum = 0.0;
      for (int p = 0; p < n; p++)
        {
          const float *o = e->o + (((size_t) layer * e->H + h) * e->n + p) * e->d;
          const float *g = d_o + (size_t) p * width + (size_t) h * e->d;
          for (int t = 0; t < e->d; t++)
            sum += ((a != NULL ? (double) a[t] : 0.0) - (double) o[t]) * (double) g[t];
        }
      e->estimate[layer * e->H + h] = sum;
    }
  return true;
}

/* The exact ablations' progress, after the first pass's share. */
typedef struct {
  ScStudyProgressFn fn;
  void *user;
  double first; /* the first pass's share of the whole */
} Progress;

static bool
exact_progress (void *user, double fraction)
{
  const Progress *p = user;

  return p->fn == NULL || p->fn (p->user, p->first + (1.0 - p->first) * fraction);
}

/* A head and its |estimate|, sorted by by_estimate (no global: studies on two sessions may
 * rank at once). */
typedef struct {
  double key;
  int i;
} Ranked;

/* By |estimate| descending, NaN last, ties by index. */
static int
by_estimate (const void *a, const void *b)
{
  const Ranked *p = a, *q = b;

  if (isnan (p->key) != isnan (q->key))
    return isnan (p->key) ? 1 : -1;
  if (!isnan (p->key) && p->key != q->key)
    return p->key > q->key ? -1 : 1;
  return (p->i > q->i) - (p->i < q->i);
}

ScStatus
sc_head_first_run (ScSession *session, ScGrad *grad, const ScModel *model, const int32_t *ids,
                   int n, const ScAblationFirstParams *p, ScStudyProgressFn progress,
                   void *progress_user, ScHeadFirstResult **out, ScError *err)
{
  const ScModelInfo *info = model != NULL ? sc_model_info (model) : NULL;
  ScHeadFirstResult *r = NULL;
  ScHeadSweepResult *sweep = NULL;
  float *o = NULL, *row = NULL;
  Ranked *order = NULL;
  ScPatchTake take;
  ScObserver obs = { .attn_output = sc_patch_take_attn_output };
  ScGradOptions gopt = { 0 };
  Estimate est;
  Progress prog = { progress, progress_user, 0.0 };
  int L, H, V, d, LH, target;
  double t0;
  ScStatus st;

  if (grad == NULL || p == NULL || out == NULL || info == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "first pass: NULL argument");
  if (p->top < 1 || p->top > SC_ABLATION_FIRST_MAX_TOP)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "first pass: the number of heads to ablate "
                         "exactly is 1 to %d, not %d", SC_ABLATION_FIRST_MAX_TOP, p->top);
  if ((st = sc_study_check_ids (session, model, ids, n, 1, p->ablation.target, err)) != SC_OK)
    return st;
  if (p->ablation.mode != SC_ABLATE_ZERO && p->ablation.mode != SC_ABLATE_MEAN)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "first pass: unknown mode %d",
                         (int) p->ablation.mode);
  if (p->ablation.mode == SC_ABLATE_MEAN && p->ablation.head_mean == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "first pass: mean-ablation needs each "
                         "head's mean output (head_mean)");
  L = (int) info->n_layers;
  H = (int) info->n_heads;
  V = (int) info->n_vocab;
  d = (int) info->head_dim;
  LH = L * H;
  r = result_new (L, H, n);
  o = malloc ((size_t) LH * n * d * sizeof *o);
  row = malloc ((size_t) V * sizeof *row);
  order = malloc ((size_t) LH * sizeof *order);
  if (r == NULL || o == NULL || row == NULL || order == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "first pass: out of memory for %d tokens", n);
      goto out;
    }

  /* 1. The first pass: the clean run with the tape, its head outputs kept, and one backward
   *    of the sweep's metric, each layer's ∂m/∂o turned into its heads' estimates. */
  t0 = now_s ();
  take = (ScPatchTake) { .heads = o, .H = H, .Hkv = (int) info->n_kv_heads, .d = d, .n = n };
  obs.user = &take;
  est = (Estimate) { .estimate = r->estimate, .o = o,
                     .mean = p->ablation.mode == SC_ABLATE_MEAN ? p->ablation.head_mean : NULL,
                     .H = H, .d = d, .n = n };
  gopt.observer = &obs;
  gopt.attn_output_grad = estimate_layer;
  gopt.attn_output_grad_user = &est;
  if ((st = sc_grad_forward (grad, ids, n, &gopt, err)) != SC_OK
      || (st = sc_grad_logits (grad, n - 1, row, err)) != SC_OK)
    goto out;
  target = p->ablation.target >= 0 ? p->ablation.target : sc_logits_top1 (row, V);
  if (target < 0)
    {
      st = sc_error_set (err, SC_ERR_INVALID_ARG, "first pass: the clean logits hold a NaN");
      goto out;
    }
  if ((st = sc_study_check_contrast (p->ablation.contrast, target, V, err)) != SC_OK)
    goto out;
  {
    const ScObjective obj = p->ablation.contrast >= 0
      ? (ScObjective) { .kind = SC_OBJECTIVE_LOGIT_DIFF, .position = n - 1, .target = target,
                        .contrast = p->ablation.contrast }
      : (ScObjective) { .kind = SC_OBJECTIVE_LOGP, .position = n - 1, .target = target };
    if ((st = sc_grad_backward (grad, &obj, NULL, NULL, NULL, NULL, err)) != SC_OK)
      goto out;
  }
  r->first_s = now_s () - t0;
  prog.first = 1.0 / (1.0 + (p->top < LH ? p->top : LH));
  if (progress != NULL && !progress (progress_user, prog.first))
    {
      st = sc_error_set (err, SC_ERR_CANCELLED, "first pass: cancelled");
      goto out;
    }

  /* 2. The top K by |estimate|, ablated exactly as the whole sweep ablates them. */
  for (int i = 0; i < LH; i++)
    order[i] = (Ranked) { fabs (r->estimate[i]), i };
  qsort (order, (size_t) LH, sizeof *order, by_estimate);
  r->n_exact = p->top < LH ? p->top : LH;
  for (int k = 0; k < r->n_exact; k++)
    r->exact[order[k].i] = true;
  t0 = now_s ();
  if ((st = sc_head_sweep_run_heads (session, model, ids, n, &p->ablation, r->exact,
                                     exact_progress, &prog, &sweep, err)) != SC_OK)
    goto out;
  r->exact_s = now_s () - t0;
  if (sweep->target != target)
    {
      /* the taped run and the plain one give the same logits to float rounding: only a
       * near-tie at the top can make them name different top-1s */
      st = sc_error_set (err, SC_ERR_INVALID_ARG, "first pass: the taped run's top-1 (%d) "
                         "is not the plain run's (%d), a near-tie; name the target", target,
                         sweep->target);
      goto out;
    }
  sc_head_sweep_result_free (r->sweep);
  r->sweep = sweep;
  sweep = NULL;
  set_rho (r);
  *out = r;
  r = NULL;
out:
  sc_head_sweep_result_free (sweep);
  sc_head_first_result_free (r);
  free (o);
  free (row);
  free (order);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* Storage                                                                               */

#define SERIES "first-pass"
#define ESTIMATE "estimate"

int
sc_head_first_params_json (int64_t run_id, const ScAblationFirstParams *p, char *buf,
                           size_t size)
{
  char base[SC_STUDY_PARAMS_MAX];
  int len;

  if (p == NULL || buf == NULL || p->top < 1 || p->top > SC_ABLATION_FIRST_MAX_TOP)
    return -1;
  len = sc_ablation_params_json (SC_ABLATION_KIND_HEADS, run_id, &p->ablation, base,
                                 sizeof base);
  if (len < 2)
    return -1;
  base[len - 1] = '\0'; /* the closing brace */
  len = snprintf (buf, size, "%s,\"first-pass\":\"gradient\",\"top\":%d}", base, p->top);
  return len < 0 || (size_t) len >= size ? -1 : len;
}

ScStatus
sc_head_first_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                     const ScHeadFirstResult *r, int64_t *study_id, ScError *err)
{
  ScStoreStudy *s = NULL;
  const ScHeadSweepResult *h;
  ScStatus st;

  if (r == NULL || r->sweep == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "first pass: no result to store");
  h = r->sweep;
  if ((st = sc_store_study_begin (store, SC_ABLATION_FIRST_KIND, model, params_json, &s, err))
      != SC_OK)
    return st;
  for (int i = 0; i < h->n_layers * h->n_heads; i++)
    {
      const int l = i / h->n_heads, hh = i % h->n_heads;
      if ((st = sc_store_study_add_head (s, l, hh, ESTIMATE, r->estimate[i], err)) != SC_OK)
        goto fail;
      if (!r->exact[i])
        continue;
      double v[SC_STUDY_N_EFFECT_METRICS];
      sc_study_effect_values (&h->heads[i], v);
      for (int k = 0; k < SC_STUDY_N_EFFECT_METRICS; k++)
        if ((st = sc_store_study_add_head (s, l, hh, sc_study_effect_metrics[k], v[k], err))
            != SC_OK)
          goto fail;
      if (h->contrast >= 0
          && (st = sc_store_study_add_head (s, l, hh, SC_STUDY_CONTRAST_METRIC,
                                            h->heads[i].delta_logit_diff, err)) != SC_OK)
        goto fail;
    }
  if ((st = sc_study_add_clean (s, h->target, h->logp_clean, h->top1_clean, h->loss_clean,
                                h->n_tokens, err)) != SC_OK
      || (st = sc_study_add_contrast (s, h->contrast, h->logit_diff_clean, err)) != SC_OK
      || (st = sc_store_study_add_series (s, SERIES, 0, r->n_exact, err)) != SC_OK
      || (st = sc_store_study_add_series (s, SERIES, 1, r->first_s, err)) != SC_OK
      || (st = sc_store_study_add_series (s, SERIES, 2, r->exact_s, err)) != SC_OK)
    goto fail;
  return sc_store_study_commit (s, study_id, err);
fail:
  sc_store_study_abort (s);
  return st;
}

static const ScStudyValueRule ESTIMATE_RULE = { ESTIMATE, -DBL_MAX, DBL_MAX, true };
static const ScStudyValueRule SERIES_RULE = { SERIES, 0.0, DBL_MAX, true };

ScStatus
sc_head_first_load (ScStore *store, const ScModelInfo *info,
                    const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                    ScHeadFirstResult **out, int64_t *study_id, ScError *err)
{
  ScStoreStudyData *d = NULL;
  ScHeadFirstResult *r = NULL;
  bool *wanted = NULL;
  int target, top1, n, contrast, LH, n_wanted = 0;
  double logp, loss, diff, series[3] = { NAN, NAN, NAN };
  uint64_t top;
  ScStatus st;

  if ((st = sc_study_find_and_read (store, SC_ABLATION_FIRST_KIND, sha256, params_json, &d,
                                    study_id, err)) != SC_OK)
    return st;
  if (d->n_layers != (int) info->n_layers || d->n_heads != (int) info->n_heads
      || !sc_study_read_clean (d, info->n_vocab, &target, &logp, &top1, &loss, &n)
      || !sc_study_read_contrast (d, info->n_vocab, target, &contrast, &diff)
      || !sc_study_params_uint (params_json, "top", &top))
    goto bad;
  LH = d->n_layers * d->n_heads;
  if ((wanted = calloc ((size_t) LH, sizeof *wanted)) == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "first pass: out of memory");
      goto fail;
    }
  /* the heads measured exactly are those that hold a Δ log p row (a head with part of the
   * metrics is then refused by the check) */
  for (size_t i = 0; i < d->n_head_values; i++)
    if (strcmp (d->heads[i].metric, sc_study_effect_metrics[0]) == 0)
      wanted[d->heads[i].layer * d->n_heads + d->heads[i].head] = true;
  for (int i = 0; i < LH; i++)
    n_wanted += wanted[i];
  if ((st = sc_study_check_heads (d, &ESTIMATE_RULE, 1, NULL, err)) != SC_OK
      || (st = sc_study_check_heads (d, sc_study_effect_rules, SC_STUDY_N_EFFECT_METRICS,
                                     wanted, err)) != SC_OK
      || (contrast >= 0
          && (st = sc_study_check_heads (d, &sc_study_contrast_rule, 1, wanted, err)) != SC_OK)
      || (st = sc_study_check_series (d, &SERIES_RULE, 3, err)) != SC_OK
      || (st = sc_study_check_target (d, params_json, target, err)) != SC_OK
      || (st = sc_study_check_contrast_params (d, params_json, contrast, err)) != SC_OK)
    goto fail;
  for (size_t i = 0; i < d->n_series_values; i++)
    if (strcmp (d->series[i].series, SERIES) == 0)
      series[d->series[i].pos] = d->series[i].value;
  if (series[0] != (double) n_wanted || (uint64_t) n_wanted != (top < (uint64_t) LH ? top
                                                                 : (uint64_t) LH))
    {
      st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): %d heads measured exactly, "
                         "where its params ask for %llu", (long long) d->id,
                         SC_ABLATION_FIRST_KIND, n_wanted, (unsigned long long) top);
      goto fail;
    }
  if ((r = result_new (d->n_layers, d->n_heads, n)) == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "first pass: out of memory");
      goto fail;
    }
  r->sweep->target = target;
  r->sweep->top1_clean = top1;
  r->sweep->logp_clean = logp;
  r->sweep->loss_clean = loss;
  r->sweep->contrast = contrast;
  r->sweep->logit_diff_clean = diff;
  r->n_exact = n_wanted;
  r->first_s = series[1];
  r->exact_s = series[2];
  memcpy (r->exact, wanted, (size_t) LH * sizeof *wanted);
  for (size_t i = 0; i < d->n_head_values; i++)
    {
      const ScStoreHeadValue *v = &d->heads[i];
      const int at = v->layer * d->n_heads + v->head;
      const int k = sc_study_effect_metric_index (v->metric);
      if (strcmp (v->metric, ESTIMATE) == 0)
        r->estimate[at] = v->value;
      else if (contrast >= 0 && strcmp (v->metric, SC_STUDY_CONTRAST_METRIC) == 0)
        r->sweep->heads[at].delta_logit_diff = v->value;
      else if (k >= 0 && !sc_study_effect_set (&r->sweep->heads[at], k, v->value, top1, logp,
                                               info->n_vocab))
        goto bad;
    }
  set_rho (r);
  free (wanted);
  sc_store_study_data_free (d);
  *out = r;
  return SC_OK;
bad:
  st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): its values do not fit %s",
                     (long long) d->id, SC_ABLATION_FIRST_KIND, info->name);
fail:
  free (wanted);
  sc_store_study_data_free (d);
  sc_head_first_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* The study kinds (sc-study.h)                                                          */

/* @params with the mode and means of @kind (the mean kind takes @ctx's). */
static ScAblationFirstParams
kind_params (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx)
{
  ScAblationFirstParams p = *(const ScAblationFirstParams *) params;

  if (kind == &sc_study_kind_heads_first_mean)
    p.ablation.mode = SC_ABLATE_MEAN, p.ablation.head_mean = ctx->head_mean,
    p.ablation.mean_set = ctx->means_set;
  else
    p.ablation.mode = SC_ABLATE_ZERO, p.ablation.head_mean = NULL, p.ablation.mean_set = NULL;
  return p;
}

static int
first_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx,
                   char *buf, size_t size, ScError *err)
{
  const ScAblationFirstParams p = kind_params (kind, params, ctx);
  int len;

  if ((len = sc_head_first_params_json (ctx->run_id, &p, buf, size)) < 0)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: the parameters are out of range (top "
                  "is 1 to %d)", kind->name, SC_ABLATION_FIRST_MAX_TOP);
  return len;
}

static ScStatus
first_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
           ScError *err)
{
  const ScAblationFirstParams p = kind_params (kind, params, ctx);
  ScHeadFirstResult *r = NULL;
  ScStatus st = sc_head_first_run (ctx->session, ctx->grad, ctx->model, ctx->ids,
                                   ctx->n_tokens, &p, ctx->progress, ctx->progress_user, &r,
                                   err);

  *out = r;
  return st;
}

static ScStatus
first_store (ScStore *store, const ScStoreModel *model, const char *params_json,
             const void *result, int64_t *study_id, ScError *err)
{
  return sc_head_first_store (store, model, params_json, result, study_id, err);
}

static ScStatus
first_load (ScStore *store, const ScModelInfo *info, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
            const char *params_json, const void *params, void **out, int64_t *study_id,
            ScError *err)
{
  ScHeadFirstResult *r = NULL;
  ScStatus st = sc_head_first_load (store, info, sha256, params_json, &r, study_id, err);

  (void) params;
  *out = r;
  return st;
}

static int
first_n_tokens (const void *result)
{
  return ((const ScHeadFirstResult *) result)->sweep->n_tokens;
}

static void
first_clean (const void *result, ScStudyClean *out)
{
  const ScHeadSweepResult *r = ((const ScHeadFirstResult *) result)->sweep;

  out->target = r->target;
  out->top1_clean = r->top1_clean;
  out->logp_clean = r->logp_clean;
  out->loss_clean = r->loss_clean;
  out->contrast = r->contrast;
  out->logit_diff_clean = r->logit_diff_clean;
}

static void
first_free (void *result)
{
  sc_head_first_result_free (result);
}

static const ScStudyOption FIRST_OPTIONS[] = {
  { "target", SC_STUDY_OPTION_TOKEN, offsetof (ScAblationFirstParams, ablation.target), 0, 0,
    NULL, "the token whose probability is measured (default: the clean top-1)" },
  { "contrast", SC_STUDY_OPTION_TOKEN, offsetof (ScAblationFirstParams, ablation.contrast), 0,
    0, NULL, "a second token: rank and measure the change of logit(target) - logit(contrast) "
    "(default: none)" },
  { "top", SC_STUDY_OPTION_INT, offsetof (ScAblationFirstParams, top), 1,
    SC_ABLATION_FIRST_MAX_TOP, NULL,
    "how many heads, the first by the first-order estimate, are ablated exactly (30)" },
  { NULL },
};

static const ScAblationFirstParams FIRST_DEFAULT = {
  .ablation = { .target = -1, .contrast = -1, .mode = SC_ABLATE_ZERO }, .top = 30 };
static const ScAblationFirstParams FIRST_MEAN_DEFAULT = {
  .ablation = { .target = -1, .contrast = -1, .mode = SC_ABLATE_MEAN }, .top = 30 };

const ScStudyKind sc_study_kind_heads_first = {
  .id = SC_ABLATION_FIRST_KIND,
  .name = "heads-first",
  .title = "Head sweep with a first-order first pass (zero-ablation)",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_SESSION | SC_STUDY_NEEDS_BACKWARD,
  .min_tokens = 1,
  .params_size = sizeof (ScAblationFirstParams),
  .params_default = &FIRST_DEFAULT,
  .options = FIRST_OPTIONS,
  .params_json = first_params_json,
  .run = first_run,
  .store = first_store,
  .load = first_load,
  .result_n_tokens = first_n_tokens,
  .result_clean = first_clean,
  .result_free = first_free,
};

const ScStudyKind sc_study_kind_heads_first_mean = {
  .id = SC_ABLATION_FIRST_KIND,
  .name = "heads-first-mean",
  .title = "Head sweep with a first-order first pass (mean-ablation)",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_SESSION | SC_STUDY_NEEDS_BACKWARD
           | SC_STUDY_NEEDS_MEANS,
  .min_tokens = 1,
  .params_size = sizeof (ScAblationFirstParams),
  .params_default = &FIRST_MEAN_DEFAULT,
  .options = FIRST_OPTIONS,
  .params_json = first_params_json,
  .run = first_run,
  .store = first_store,
  .load = first_load,
  .result_n_tokens = first_n_tokens,
  .result_clean = first_clean,
  .result_free = first_free,
};
