/* sc-dla.c — direct logit attribution of one run (sc-dla.h has the definition): one clean
 * forward pass keeping its residuals, the last row's attention output of every layer taken
 * from the observer, then the terms in double over the host weights. Nothing here runs
 * an ablation; the comparison with one is the caller's. */
#include "study/sc-dla.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sc-effect.h"

ScDlaResult *
sc_dla_result_new (int n_layers, int n_heads, int n_tokens)
{
  ScDlaResult *r;
  int i;

  if (n_layers < 1 || n_heads < 1 || n_tokens < 1 || (r = calloc (1, sizeof *r)) == NULL)
    return NULL;
  r->n_layers = n_layers;
  r->n_heads = n_heads;
  r->n_tokens = n_tokens;
  r->target = r->top1_clean = r->contrast = -1;
  r->logit_clean = r->logit_recon = r->rms = r->embed = NAN;
  r->heads = malloc ((size_t) n_layers * n_heads * sizeof *r->heads);
  r->mlp = malloc ((size_t) n_layers * sizeof *r->mlp);
  if (r->heads == NULL || r->mlp == NULL)
    {
      sc_dla_result_free (r);
      return NULL;
    }
  for (i = 0; i < n_layers * n_heads; i++)
    r->heads[i] = NAN;
  for (i = 0; i < n_layers; i++)
    r->mlp[i] = NAN;
  return r;
}

void
sc_dla_result_free (ScDlaResult *r)
{
  if (r == NULL)
    return;
  free (r->heads);
  free (r->mlp);
  free (r);
}

/* ------------------------------------------------------------------------------------ */
/* Running                                                                               */

typedef struct {
  float *o;   /* (L, Q): each layer's attention output at the last row */
  int n;      /* the run's length: the last row is n − 1 of the call's n rows */
} LastRow;

static bool
keep_last_row (void *user, int layer, const float *o, int n_query, int width)
{
  LastRow *lr = user;

  memcpy (lr->o + (size_t) layer * width, o + (size_t) (n_query - 1) * width,
          (size_t) width * sizeof *o);
  return true;
}

/* u · x over @E elements, in double. */
static double
dot_u (const double *u, const float *x, int E)
{
  double acc = 0.0;
  int e;

  for (e = 0; e < E; e++)
    acc += u[e] * (double) x[e];
  return acc;
}

ScStatus
sc_dla_run (ScSession *session, const ScModel *model, const int32_t *ids, int n, int target,
            int contrast, ScDlaResult **out, ScError *err)
{
  const ScModelInfo *in;
  const ScWeights *w;
  ScDlaResult *r = NULL;
  ScObserver obs = { 0 };
  ScForwardOptions opt = { 0 };
  LastRow lr = { NULL, n };
  float *logits = NULL, *x = NULL, *wu_rows = NULL, *wo = NULL;
  double *u = NULL, *v = NULL, ss, prev;
  int L, H, d, E, Q, V, l, h, e, k, i;
  ScStatus st;

  if (session == NULL || model == NULL || ids == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "dla: NULL argument");
  in = sc_model_info (model);
  /* the vectors as floats; the two rows of W_U and each W_O decoded from the file below */
  w = sc_model_weights_packed (model);
  /* the read-out direction below is RMSNorm's frozen scale; LayerNorm's centring and its
   * bias, and the biases of W_O and W_down, would need terms of their own */
  if (in->layer_norm)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "dla: architecture '%s' is not supported "
                         "(its LayerNorm and output biases are not decomposed yet)",
                         in->arch_name);
  /* cap tanh(l / cap) of a sum is not the sum of the parts' */
  if (in->final_softcap > 0.0f)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "dla: architecture '%s' is not supported "
                         "(its logits are soft-capped, which a sum of parts is not)",
                         in->arch_name);
  if (n < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "dla: no tokens given");
  for (i = 0; i < n; i++)
    if (ids[i] < 0 || (uint32_t) ids[i] >= in->n_vocab)
      return sc_error_set (err, SC_ERR_INVALID_ARG, "dla: token %d has id %d, outside the "
                           "vocabulary of %u", i, ids[i], in->n_vocab);
  if (target < -1 || (target >= 0 && (uint32_t) target >= in->n_vocab))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "dla: target %d is outside the vocabulary "
                         "0..%u", target, in->n_vocab - 1);
  if (contrast < -1 || (contrast >= 0 && (uint32_t) contrast >= in->n_vocab))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "dla: contrast %d is outside the "
                         "vocabulary 0..%u", contrast, in->n_vocab - 1);
  L = (int) in->n_layers;
  H = (int) in->n_heads;
  d = (int) in->head_dim;
  E = (int) in->n_embd;
  Q = H * d;
  V = (int) in->n_vocab;
  r = sc_dla_result_new (L, H, n);
  lr.o = malloc ((size_t) L * Q * sizeof *lr.o);
  logits = malloc ((size_t) V * sizeof *logits);
  x = malloc ((size_t) (L + 1) * E * sizeof *x);
  u = malloc ((size_t) E * sizeof *u);
  v = malloc ((size_t) Q * sizeof *v);
  wu_rows = malloc (2 * (size_t) E * sizeof *wu_rows);
  wo = malloc ((size_t) E * Q * sizeof *wo);
  if (r == NULL || lr.o == NULL || logits == NULL || x == NULL || u == NULL || v == NULL
      || wu_rows == NULL || wo == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "dla: out of memory");
      goto fail;
    }

  /* 1. The clean run: last-position logits, every layer's attention output at n − 1, and
   *    the residuals x_0 .. x_L at n − 1. */
  obs.attn_output = keep_last_row;
  obs.user = &lr;
  opt.observer = &obs;
  opt.keep_residuals = true;
  if ((st = sc_forward (session, ids, n, &opt, logits, err)) != SC_OK)
    goto fail;
  for (l = 0; l <= L; l++)
    if ((st = sc_session_residual (session, l, n - 1, x + (size_t) l * E, err)) != SC_OK)
      goto fail;
  r->top1_clean = sc_logits_top1 (logits, V);
  if (r->top1_clean < 0)
    {
      st = sc_error_set (err, SC_ERR_INVALID_ARG, "dla: the clean logits hold a NaN");
      goto fail;
    }
  r->target = target >= 0 ? target : r->top1_clean;
  r->contrast = contrast;
  if (r->contrast == r->target)
    {
      st = sc_error_set (err, SC_ERR_INVALID_ARG, "dla: the contrast %d is the target (%s)",
                         contrast, target >= 0 ? "as given" : "the clean top-1");
      goto fail;
    }
  r->logit_clean = r->contrast >= 0 ? (double) logits[r->target] - (double) logits[r->contrast]
                                    : logits[r->target];

  /* 2. The frozen norm scale and the read-out direction u = (W_U[t] − W_U[B]) ∘ g / rms
   *    (without a contrast, W_U[t] ∘ g / rms). */
  ss = 0.0;
  for (e = 0; e < E; e++)
    ss += (double) x[(size_t) L * E + e] * x[(size_t) L * E + e];
  r->rms = sqrt (ss / E + (double) in->norm_eps);
  if ((st = sc_model_matrix_rows (&w->src_output, w->output, r->target, 1, wu_rows, err)) != SC_OK
      || (r->contrast >= 0
          && (st = sc_model_matrix_rows (&w->src_output, w->output, r->contrast, 1, wu_rows + E,
                                            err))
                 != SC_OK))
    goto fail;
  for (e = 0; e < E; e++)
    {
      double wu = wu_rows[e];
      if (r->contrast >= 0)
        wu -= wu_rows[E + e];
      u[e] = wu * (double) w->output_norm[e] / r->rms;
    }
  r->logit_recon = dot_u (u, x + (size_t) L * E, E);
  r->embed = dot_u (u, x, E);

  /* 3. Per layer: v = W_O^T u (Q), so head h's term is o_h · v[block h] (the same sum as
   *    u · (W_O[:, block h] o_h), in another order); the MLP's is the rest of the layer's
   *    residual update. */
  prev = r->embed;
  for (l = 0; l < L; l++)
    {
      const float *o = lr.o + (size_t) l * Q;
      double attn = 0.0, next;
      /* wo (E, Q) */
      if ((st = sc_model_matrix_rows (&w->layers[l].src_wo, w->layers[l].wo, 0, E, wo, err)) != SC_OK)
        goto fail;
      for (k = 0; k < Q; k++)
        v[k] = 0.0;
      for (e = 0; e < E; e++)
        for (k = 0; k < Q; k++)
          v[k] += u[e] * (double) wo[(size_t) e * Q + k];
      for (h = 0; h < H; h++)
        {
          double acc = 0.0;
          for (k = h * d; k < (h + 1) * d; k++)
            acc += (double) o[k] * v[k];
          r->heads[l * H + h] = acc;
          attn += acc;
        }
      next = dot_u (u, x + (size_t) (l + 1) * E, E);
      r->mlp[l] = (next - prev) - attn;
      prev = next;
    }
  free (lr.o);
  free (logits);
  free (x);
  free (u);
  free (v);
  free (wu_rows);
  free (wo);
  *out = r;
  return SC_OK;

fail:
  free (lr.o);
  free (logits);
  free (x);
  free (u);
  free (v);
  free (wu_rows);
  free (wo);
  sc_dla_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* Storage                                                                               */

int
sc_dla_params_json (int64_t run_id, int target, int contrast, char *buf, size_t size)
{
  char t[40];
  int len;

  if (buf == NULL)
    return -1;
  if (target >= 0)
    snprintf (t, sizeof t, "%d", target);
  else
    strcpy (t, "null");
  /* without a contrast the text is what it was before contrasts existed */
  if (contrast >= 0)
    snprintf (t + strlen (t), sizeof t - strlen (t), ",\"contrast\":%d", contrast);
  len = snprintf (buf, size, "{\"study\":%d,\"run\":%lld,\"target\":%s}", SC_DLA_STUDY_VERSION,
                  (long long) run_id, t);
  return len < 0 || (size_t) len >= size ? -1 : len;
}

#define N_CLEAN 6 /* and pos 6, the contrast, when there is one */

ScStatus
sc_dla_store (ScStore *store, const ScStoreModel *model, const char *params_json,
              const ScDlaResult *r, int64_t *study_id, ScError *err)
{
  ScStoreStudy *s = NULL;
  double clean[N_CLEAN];
  ScStatus st;
  int i;

  if (r == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "dla: no result to store");
  if ((st = sc_store_study_begin (store, SC_DLA_KIND, model, params_json, &s, err)) != SC_OK)
    return st;
  for (i = 0; i < r->n_layers * r->n_heads; i++)
    if ((st = sc_store_study_add_head (s, i / r->n_heads, i % r->n_heads, "dla", r->heads[i],
                                       err)) != SC_OK)
      goto fail;
  for (i = 0; i < r->n_layers; i++)
    if ((st = sc_store_study_add_series (s, "mlp", i, r->mlp[i], err)) != SC_OK)
      goto fail;
  clean[0] = r->target;
  clean[1] = r->logit_clean;
  clean[2] = r->top1_clean;
  clean[3] = r->rms;
  clean[4] = r->n_tokens;
  clean[5] = r->logit_recon;
  for (i = 0; i < N_CLEAN; i++)
    if ((st = sc_store_study_add_series (s, "clean", i, clean[i], err)) != SC_OK)
      goto fail;
  if (r->contrast >= 0
      && (st = sc_store_study_add_series (s, "clean", N_CLEAN, r->contrast, err)) != SC_OK)
    goto fail;
  if ((st = sc_store_study_add_series (s, "embed", 0, r->embed, err)) != SC_OK)
    goto fail;
  return sc_store_study_commit (s, study_id, err);
fail:
  sc_store_study_abort (s);
  return st;
}

ScStatus
sc_dla_load (ScStore *store, const ScModelInfo *info,
             const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
             ScDlaResult **out, int64_t *study_id, ScError *err)
{
  const int L = (int) info->n_layers, H = (int) info->n_heads;
  double clean[N_CLEAN + 1];
  ScStoreStudyData *d = NULL;
  ScDlaResult *r = NULL;
  size_t i;
  int64_t id = 0;
  int k;
  ScStatus st;

  if (store == NULL || info == NULL || params_json == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "dla: NULL argument");
  if ((st = sc_study_find_and_read (store, SC_DLA_KIND, sha256, params_json, &d, &id,
                                    err)) != SC_OK)
    return st;
#define BAD(...)                                                                              \
  do                                                                                          \
    {                                                                                         \
      sc_error_set (err, SC_ERR_FORMAT, __VA_ARGS__);                                         \
      sc_error_prefix (err, "study %lld (%s)", (long long) id, SC_DLA_KIND);                  \
      st = SC_ERR_FORMAT;                                                                     \
      goto fail;                                                                              \
    }                                                                                         \
  while (0)
  if (d->n_layers != L || d->n_heads != H)
    BAD ("its model row has %d layers x %d heads, %s has %d x %d", d->n_layers, d->n_heads,
         info->name, L, H);
  for (k = 0; k <= N_CLEAN; k++)
    clean[k] = NAN;
  for (i = 0; i < d->n_series_values; i++)
    if (strcmp (d->series[i].series, "clean") == 0 && d->series[i].pos <= N_CLEAN)
      clean[d->series[i].pos] = d->series[i].value;
  if (!(clean[0] >= 0 && clean[0] < info->n_vocab && clean[0] == floor (clean[0])
        && clean[2] >= 0 && clean[2] < info->n_vocab && clean[2] == floor (clean[2])
        && clean[4] >= 1 && clean[4] <= SC_STORE_MAX_TOKENS && clean[4] == floor (clean[4])
        && isfinite (clean[1]) && isfinite (clean[3]) && clean[3] > 0 && isfinite (clean[5])))
    BAD ("its \"clean\" series (target %g, logit %g, top-1 %g, rms %g, n %g) is missing or out "
         "of range for %s", clean[0], clean[1], clean[2], clean[3], clean[4], info->name);
  if (!isnan (clean[N_CLEAN])
      && !(clean[N_CLEAN] >= 0 && clean[N_CLEAN] < info->n_vocab
           && clean[N_CLEAN] == floor (clean[N_CLEAN]) && clean[N_CLEAN] != clean[0]))
    BAD ("its contrast %g is outside the vocabulary of %s or the target itself",
         clean[N_CLEAN], info->name);
  if ((r = sc_dla_result_new (L, H, (int) clean[4])) == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "dla: out of memory");
      goto fail;
    }
  r->target = (int) clean[0];
  r->contrast = isnan (clean[N_CLEAN]) ? -1 : (int) clean[N_CLEAN];
  r->logit_clean = clean[1];
  r->top1_clean = (int) clean[2];
  r->rms = clean[3];
  r->logit_recon = clean[5];
  for (i = 0; i < d->n_head_values; i++)
    if (strcmp (d->heads[i].metric, "dla") == 0)
      r->heads[d->heads[i].layer * H + d->heads[i].head] = d->heads[i].value;
  for (i = 0; i < d->n_series_values; i++)
    {
      const ScStoreSeriesValue *v = &d->series[i];
      if (strcmp (v->series, "mlp") == 0)
        {
          if (v->pos >= L)
            BAD ("series \"mlp\" has position %d, beyond its %d layers", v->pos, L);
          r->mlp[v->pos] = v->value;
        }
      else if (strcmp (v->series, "embed") == 0 && v->pos == 0)
        r->embed = v->value;
    }
  for (k = 0; k < L * H; k++)
    if (!isfinite (r->heads[k]))
      BAD ("head L%d.H%d's \"dla\" is missing or not finite", k / H, k % H);
  for (k = 0; k < L; k++)
    if (!isfinite (r->mlp[k]))
      BAD ("layer %d's \"mlp\" is missing or not finite", k);
  if (!isfinite (r->embed))
    BAD ("its \"embed\" term is missing or not finite");
#undef BAD
  sc_store_study_data_free (d);
  if (study_id != NULL)
    *study_id = id;
  *out = r;
  return SC_OK;

fail:
  sc_store_study_data_free (d);
  sc_dla_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* The study kind (sc-study.h)                                                           */

static int
dla_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx, char *buf,
                 size_t size, ScError *err)
{
  const ScDlaParams *p = params;
  int len = sc_dla_params_json (ctx->run_id, p->target, p->contrast, buf, size);

  if (len < 0)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: the parameters are out of range",
                  kind->name);
  return len;
}

/* One clean pass: no progress between, so it says it is done when it is. */
static ScStatus
dla_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
         ScError *err)
{
  ScDlaResult *r = NULL;
  const ScDlaParams *p = params;
  ScStatus st = sc_dla_run (ctx->session, ctx->model, ctx->ids, ctx->n_tokens, p->target,
                            p->contrast, &r, err);

  if (st == SC_OK && !sc_study_report (ctx, 1.0))
    {
      sc_dla_result_free (r);
      r = NULL;
      st = sc_error_set (err, SC_ERR_CANCELLED, "study %s: cancelled", kind->name);
    }
  *out = r;
  return st;
}

static ScStatus
dla_store (ScStore *store, const ScStoreModel *model, const char *params_json,
           const void *result, int64_t *study_id, ScError *err)
{
  return sc_dla_store (store, model, params_json, result, study_id, err);
}

static ScStatus
dla_load (ScStore *store, const ScModelInfo *info, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
          const char *params_json, const void *params, void **out, int64_t *study_id,
          ScError *err)
{
  const ScDlaParams *p = params;
  ScDlaResult *r = NULL;
  ScStatus st = sc_dla_load (store, info, sha256, params_json, &r, study_id, err);

  /* the params text names the contrast: a stored series that says another was edited */
  if (st == SC_OK && r->contrast != p->contrast)
    {
      st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): its contrast %d is not the %d "
                         "its parameters name", study_id != NULL ? (long long) *study_id : 0LL,
                         SC_DLA_KIND, r->contrast, p->contrast);
      sc_dla_result_free (r);
      r = NULL;
    }
  *out = r;
  return st;
}

static int
dla_n_tokens (const void *result)
{
  return ((const ScDlaResult *) result)->n_tokens;
}

static void
dla_clean (const void *result, ScStudyClean *out)
{
  const ScDlaResult *r = result;

  out->target = r->target;
  out->top1_clean = r->top1_clean;
  out->logp_clean = NAN;
  out->loss_clean = NAN;
  out->contrast = r->contrast;
  out->logit_diff_clean = r->contrast >= 0 ? r->logit_clean : NAN;
}

static void
dla_free (void *result)
{
  sc_dla_result_free (result);
}

static const ScStudyOption DLA_OPTIONS[] = {
  { "target", SC_STUDY_OPTION_TOKEN, offsetof (ScDlaParams, target), 0, 0, NULL,
    "the token whose logit is attributed (default: the clean top-1)" },
  { "contrast", SC_STUDY_OPTION_TOKEN, offsetof (ScDlaParams, contrast), 0, 0, NULL,
    "a second token: attribute logit(target) - logit(contrast) (default: none)" },
  { NULL },
};

static const ScDlaParams DLA_DEFAULT = { .target = -1, .contrast = -1 };

const ScStudyKind sc_study_kind_dla = {
  .id = SC_DLA_KIND,
  .name = "dla",
  .title = "Direct logit attribution",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_SESSION,
  .min_tokens = 1,
  .params_size = sizeof (ScDlaParams),
  .params_default = &DLA_DEFAULT,
  .options = DLA_OPTIONS,
  .params_json = dla_params_json,
  .run = dla_run,
  .store = dla_store,
  .load = dla_load,
  .result_n_tokens = dla_n_tokens,
  .result_clean = dla_clean,
  .result_free = dla_free,
};
