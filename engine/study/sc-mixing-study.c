/* sc-mixing-study.c — value zeroing and ALTI of a run (sc-mixing-study.h): the clean pass
 * that keeps each layer's values (and weights), the layer reruns of value zeroing, the maps
 * of analysis/sc-mixing.h and their rollout; storage and the study kind. */
#include "study/sc-mixing-study.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sc-effect.h"
#include "analysis/sc-mixing.h"
#include "analysis/sc-norm-attn.h"

const char *const sc_mixing_method_names[] = { "value-zeroing", "alti", NULL };

bool
sc_mixing_fits (int L, int n)
{
  return L >= 1 && n >= 1
         && (int64_t) (L + 1) * n * (n + 1) / 2 <= (int64_t) SC_STORE_MAX_TOKENS;
}

ScMixingResult *
sc_mixing_result_new (int method, int L, int n)
{
  ScMixingResult *r;

  if (method < SC_MIXING_VALUE_ZEROING || method > SC_MIXING_ALTI || !sc_mixing_fits (L, n)
      || (r = calloc (1, sizeof *r)) == NULL)
    return NULL;
  *r = (ScMixingResult) { .method = method, .n_layers = L, .n_tokens = n, .top1_clean = -1 };
  r->maps = calloc ((size_t) (L + 1) * n * n, sizeof *r->maps);
  r->mix = malloc ((size_t) (L + 1) * sizeof *r->mix);
  if (r->maps == NULL || r->mix == NULL)
    {
      sc_mixing_result_free (r);
      return NULL;
    }
  for (int k = 0; k <= L; k++)
    r->mix[k] = NAN;
  return r;
}

void
sc_mixing_result_free (ScMixingResult *r)
{
  if (r == NULL)
    return;
  free (r->maps);
  free (r->mix);
  free (r);
}

const float *
sc_mixing_result_map (const ScMixingResult *r, int k)
{
  if (r == NULL || k < 0 || k > r->n_layers)
    return NULL;
  return r->maps + (size_t) k * r->n_tokens * r->n_tokens;
}

/* ------------------------------------------------------------------------------------ */
/* Running                                                                               */

typedef struct {
  int n, H, KV;
  float *probs;  /* (L, H, n, n) every layer's weights (ALTI), or NULL */
  float *v;      /* (L, n, KV) every layer's values */
} MixPass;

static float *
mix_layer_buffer (void *user, int layer, int n_q, int n_k)
{
  MixPass *mp = user;

  return mp->probs != NULL && n_q == mp->n && n_k == mp->n
             ? mp->probs + (size_t) layer * mp->H * mp->n * mp->n
             : NULL;
}

static bool
mix_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  MixPass *mp = user;
  float *dst;

  if (n_q != mp->n || n_k != mp->n)
    return false; /* a full run always has n × n */
  dst = mp->probs + ((size_t) layer * mp->H + head) * mp->n * mp->n;
  if (probs != dst) /* not written into our buffer (a device backend) */
    memcpy (dst, probs, (size_t) n_q * n_k * sizeof *probs);
  return true;
}

static bool
mix_qkv (void *user, int layer, const float *q, const float *k, const float *v, int n_q,
         int n_k, int q_width, int kv_width)
{
  MixPass *mp = user;

  (void) q, (void) k, (void) q_width;
  if (n_q != mp->n || n_k != mp->n || kv_width != mp->KV)
    return false;
  memcpy (mp->v + (size_t) layer * mp->n * mp->KV, v, (size_t) n_k * kv_width * sizeof *v);
  return true;
}

/* Value zeroing of every layer into r->maps (sc-mixing-study.h): @vall (L, n, KV) the clean
 * pass's values; the session keeps its residuals. */
static ScStatus
value_zeroing (ScSession *session, const ScModel *model, const int32_t *ids, int n,
               const float *vall, const ScStudyCtx *ctx, ScMixingResult *r, ScError *err)
{
  const ScModelInfo *in = sc_model_info (model);
  const int L = (int) in->n_layers, H = (int) in->n_heads, d = (int) in->head_dim,
            E = (int) in->n_embd, KV = (int) in->n_kv_heads * d, group = H / (int) in->n_kv_heads;
  const size_t rows = (size_t) n * d; /* one head's patch: (n, d) */
  float *patch = malloc ((size_t) L * H * rows * sizeof *patch);
  uint8_t *on = calloc ((size_t) L * H, 1);
  float *base = malloc ((size_t) n * E * sizeof *base), *var = malloc ((size_t) n * E * sizeof *var);
  ScIntervention iv = { 0 };
  ScStatus st = SC_OK;

  if (patch == NULL || on == NULL || base == NULL || var == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "value zeroing: out of memory for %d tokens", n);
      goto out;
    }
  /* the patch: each query head's own values, v_patch's (L, H, n, d) layout */
  for (int l = 0; l < L; l++)
    for (int h = 0; h < H; h++)
      for (int j = 0; j < n; j++)
        memcpy (patch + ((size_t) l * H + h) * rows + (size_t) j * d,
                vall + ((size_t) l * n + j) * KV + (size_t) (h / group) * d, d * sizeof *patch);
  iv.patch_tokens = n;
  iv.v_patch = patch;
  iv.v_patch_on = on;
  for (int l = 0; l < L && st == SC_OK; l++)
    {
      float *map = r->maps + (size_t) l * n * n;
      memset (on + (size_t) l * H, 1, (size_t) H);
      /* 1. the reference: the layer with its own values, through the same arithmetic */
      if ((st = sc_session_layer_output (session, ids, n, l, &iv, base, err)) != SC_OK)
        break;
      /* 2. each key j zeroed in every head */
      for (int j = 0; j < n && st == SC_OK; j++)
        {
          for (int h = 0; h < H; h++)
            memset (patch + ((size_t) l * H + h) * rows + (size_t) j * d, 0, d * sizeof *patch);
          st = sc_session_layer_output (session, ids, n, l, &iv, var, err);
          for (int h = 0; h < H; h++) /* back to the run's own values */
            memcpy (patch + ((size_t) l * H + h) * rows + (size_t) j * d,
                    vall + ((size_t) l * n + j) * KV + (size_t) (h / group) * d,
                    d * sizeof *patch);
          if (st != SC_OK)
            break;
          for (int i = j; i < n; i++)
            map[(size_t) i * n + j] = (float) sc_mixing_cos_distance (base + (size_t) i * E,
                                                                      var + (size_t) i * E, E);
          if (!sc_study_report (ctx, (l + (j + 1.0) / n) / L))
            st = sc_error_set (err, SC_ERR_CANCELLED, "value zeroing: cancelled at layer %d", l);
        }
      sc_mixing_normalise_rows (map, n);
      memset (on + (size_t) l * H, 0, (size_t) H);
    }
out:
  free (patch);
  free (on);
  free (base);
  free (var);
  return st;
}

/* ALTI of every layer into r->maps from the clean pass (@mp) and the kept residuals. */
static ScStatus
alti (ScSession *session, const ScModel *model, const MixPass *mp, const ScStudyCtx *ctx,
      ScMixingResult *r, ScError *err)
{
  const ScModelInfo *in = sc_model_info (model);
  const int L = (int) in->n_layers, E = (int) in->n_embd, n = mp->n;
  const ScNormDims dims = { (int) in->n_heads, (int) in->n_kv_heads, (int) in->head_dim, E };
  float *x = malloc ((size_t) n * E * sizeof *x);
  ScStatus st = SC_OK;

  if (x == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "ALTI: out of memory for %d tokens", n);
  for (int l = 0; l < L && st == SC_OK; l++)
    {
      const ScLayerWeights *lw = &sc_model_weights (model)->layers[l];
      for (int i = 0; i < n && st == SC_OK; i++)
        st = sc_session_residual (session, l, i, x + (size_t) i * E, err);
      if (st == SC_OK)
        st = sc_alti_layer_map (mp->v + (size_t) l * n * mp->KV, lw->wo, &dims, n,
                                mp->probs + (size_t) l * mp->H * n * n, x, lw->post_attn_norm,
                                in->norm_eps, r->maps + (size_t) l * n * n, err);
      if (st == SC_OK && !sc_study_report (ctx, (l + 1.0) / L))
        st = sc_error_set (err, SC_ERR_CANCELLED, "ALTI: cancelled at layer %d", l);
    }
  free (x);
  return st;
}

ScStatus
sc_mixing_run (ScSession *session, const ScModel *model, const int32_t *ids, int n,
               const ScMixingParams *p, const ScStudyCtx *progress, ScMixingResult **out,
               ScError *err)
{
  const ScModelInfo *info;
  MixPass mp = { 0 };
  ScObserver obs = { 0 };
  ScForwardOptions opt = { 0 };
  ScMixingResult *r = NULL;
  const float **maps = NULL;
  double *roll = NULL;
  float *logits = NULL;
  int L;
  ScStatus st;

  if (p == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "context mixing: NULL argument");
  if (p->method != SC_MIXING_VALUE_ZEROING && p->method != SC_MIXING_ALTI)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "context mixing: method %d is neither "
                         "value-zeroing (0) nor alti (1)", p->method);
  if (n < 2) /* the mixing ratios read rows 1 .. n − 1 */
    return sc_error_set (err, SC_ERR_INVALID_ARG, "context mixing: %d token%s given, at "
                         "least 2 needed (row 0 sees only itself)", n, n == 1 ? "" : "s");
  if ((st = sc_study_check_ids (session, model, ids, n, 2, -1, err)) != SC_OK)
    return st;
  info = sc_model_info (model);
  /* ALTI's per-token terms leave out a bias on W_O (GPT-2's), which no token owns */
  if (p->method == SC_MIXING_ALTI && info->layer_norm)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "context mixing: ALTI does not support "
                         "architecture '%s' yet (its W_O bias and LayerNorm); value zeroing "
                         "does", info->arch_name);
  L = (int) info->n_layers;
  if (!sc_mixing_fits (L, n))
    return sc_error_set (err, SC_ERR_RANGE, "context mixing: %d maps of %d tokens are more "
                         "than the store's %u positions", L + 1, n, SC_STORE_MAX_TOKENS);
  mp.n = n;
  mp.H = (int) info->n_heads;
  mp.KV = (int) (info->n_kv_heads * info->head_dim);
  r = sc_mixing_result_new (p->method, L, n);
  mp.v = malloc ((size_t) L * n * mp.KV * sizeof *mp.v);
  if (p->method == SC_MIXING_ALTI)
    mp.probs = malloc ((size_t) L * mp.H * n * n * sizeof *mp.probs);
  logits = malloc ((size_t) info->n_vocab * sizeof *logits);
  maps = malloc ((size_t) L * sizeof *maps);
  roll = malloc ((size_t) n * n * sizeof *roll);
  if (r == NULL || mp.v == NULL || (p->method == SC_MIXING_ALTI && mp.probs == NULL)
      || logits == NULL || maps == NULL || roll == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "context mixing: out of memory for %d tokens", n);
      goto out;
    }
  /* 1. the clean pass: values (and weights), residuals kept */
  if (mp.probs != NULL)
    {
      obs.observe = mix_observe;
      obs.layer_buffer = mix_layer_buffer;
    }
  obs.qkv = mix_qkv;
  obs.user = &mp;
  opt.observer = &obs;
  opt.keep_residuals = true;
  if ((st = sc_forward (session, ids, n, &opt, logits, err)) != SC_OK)
    goto out;
  r->top1_clean = sc_logits_top1 (logits, (int) info->n_vocab);
  /* 2. each layer's map */
  st = p->method == SC_MIXING_ALTI ? alti (session, model, &mp, progress, r, err)
                                   : value_zeroing (session, model, ids, n, mp.v, progress, r,
                                                    err);
  if (st != SC_OK)
    goto out;
  /* 3. the rollout and the mixing ratios */
  for (int l = 0; l < L; l++)
    maps[l] = sc_mixing_result_map (r, l);
  if ((st = sc_mixing_rollout (maps, L, n, roll, err)) != SC_OK)
    goto out;
  for (size_t k = 0; k < (size_t) n * n; k++)
    r->maps[(size_t) L * n * n + k] = (float) roll[k];
  for (int k = 0; k <= L; k++)
    r->mix[k] = sc_norm_mix_ratio (sc_mixing_result_map (r, k), n);
  *out = r;
  r = NULL;
out:
  free (mp.v);
  free (mp.probs);
  free (logits);
  free (maps);
  free (roll);
  sc_mixing_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* Storage                                                                               */

int
sc_mixing_params_json (int64_t run_id, int method, char *buf, size_t size)
{
  int len;

  if (method < SC_MIXING_VALUE_ZEROING || method > SC_MIXING_ALTI)
    return -1;
  len = snprintf (buf, size, "{\"study\":%d,\"run\":%lld,\"method\":\"%s\"}",
                  SC_MIXING_STUDY_VERSION, (long long) run_id, sc_mixing_method_names[method]);
  return len < 0 || (size_t) len >= size ? -1 : len;
}

/* The method the params text names, or −1. */
static int
params_method (const char *params_json)
{
  char pat[48];

  for (int m = 0; sc_mixing_method_names[m] != NULL; m++)
    {
      snprintf (pat, sizeof pat, "\"method\":\"%s\"", sc_mixing_method_names[m]);
      if (params_json != NULL && strstr (params_json, pat) != NULL)
        return m;
    }
  return -1;
}

ScStatus
sc_mixing_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                 const ScMixingResult *r, int64_t *study_id, ScError *err)
{
  ScStoreStudy *s = NULL;
  ScStatus st;

  if (r == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "context mixing: no result to store");
  if ((st = sc_store_study_begin (store, SC_MIXING_STUDY_KIND, model, params_json, &s, err))
      != SC_OK)
    return st;
#define TRY(expr)                                                                             \
  do                                                                                          \
    {                                                                                         \
      if ((st = (expr)) != SC_OK)                                                             \
        goto fail;                                                                            \
    }                                                                                         \
  while (0)
  for (int k = 0; k <= r->n_layers; k++)
    {
      const float *map = sc_mixing_result_map (r, k);
      const int n = r->n_tokens;
      for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++)
          TRY (sc_store_study_add_series (s, "maps", (int) sc_study_tri_pos (k, n, i, j),
                                          map[(size_t) i * n + j], err));
      TRY (sc_store_study_add_series (s, "mix", k, r->mix[k], err));
    }
  TRY (sc_store_study_add_series (s, "n", 0, r->n_tokens, err));
  TRY (sc_store_study_add_series (s, "top1", 0, r->top1_clean, err));
#undef TRY
  return sc_store_study_commit (s, study_id, err);
fail:
  sc_store_study_abort (s);
  return st;
}

/* Every row of layer maps 0 .. L − 1 sums to 1 (within float rounding) or holds only 0. */
static bool
rows_whole (const ScMixingResult *r)
{
  const int n = r->n_tokens;

  for (int k = 0; k < r->n_layers; k++)
    for (int i = 0; i < n; i++)
      {
        const float *row = sc_mixing_result_map (r, k) + (size_t) i * n;
        double s = 0.0;
        for (int j = 0; j <= i; j++)
          s += row[j];
        if (s != 0.0 && fabs (s - 1.0) > 1e-4)
          return false;
      }
  return true;
}

ScStatus
sc_mixing_load (ScStore *store, const ScModelInfo *info,
                const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                ScMixingResult **out, int64_t *study_id, ScError *err)
{
  /* a share in [0, 1]: the rollout's products of such rows too, up to float rounding */
  const ScStudyValueRule mp = { "maps", 0.0, 1.0 + 1e-5, false },
                         mx = { "mix", 0.0, 1.0, true },
                         nn = { "n", 2.0, SC_STORE_MAX_TOKENS, false },
                         t1 = { "top1", 0.0, (double) info->n_vocab - 1, false };
  const int L = (int) info->n_layers, method = params_method (params_json);
  ScStoreStudyData *d = NULL;
  ScMixingResult *r = NULL;
  double nv, top1;
  int n;
  ScStatus st;

  if ((st = sc_study_find_and_read (store, SC_MIXING_STUDY_KIND, sha256, params_json, &d,
                                    study_id, err)) != SC_OK)
    return st;
  nv = sc_study_series_at0 (d, "n");
  top1 = sc_study_series_at0 (d, "top1");
  if (method < 0 || !(nv >= 2 && nv <= SC_STORE_MAX_TOKENS && nv == floor (nv))
      || !(top1 == floor (top1)) || !sc_mixing_fits (L, (int) nv)
      || (r = sc_mixing_result_new (method, L, (int) nv)) == NULL)
    goto bad;
  n = (int) nv;
  st = sc_study_check_series (d, &mp, (L + 1) * n * (n + 1) / 2, err);
  if (st == SC_OK)
    st = sc_study_check_series (d, &mx, L + 1, err);
  if (st == SC_OK)
    st = sc_study_check_series (d, &nn, 1, err);
  if (st == SC_OK)
    st = sc_study_check_series (d, &t1, 1, err);
  if (st != SC_OK)
    {
      sc_store_study_data_free (d);
      sc_mixing_result_free (r);
      return st;
    }
  r->top1_clean = (int) top1;
  for (size_t i = 0; i < d->n_series_values; i++)
    {
      const ScStoreSeriesValue *v = &d->series[i];
      if (strcmp (v->series, "maps") == 0)
        {
          int k, row, col;
          sc_study_tri_unpos (v->pos, n, &k, &row, &col);
          r->maps[((size_t) k * n + row) * n + col] = (float) v->value;
        }
      else if (strcmp (v->series, "mix") == 0)
        r->mix[v->pos] = v->value;
      else if (strcmp (v->series, "n") != 0 && strcmp (v->series, "top1") != 0)
        goto bad;
    }
  if (!rows_whole (r))
    {
      st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): a row of a layer's map sums "
                         "to neither 1 nor 0", (long long) d->id, SC_MIXING_STUDY_KIND);
      sc_store_study_data_free (d);
      sc_mixing_result_free (r);
      return st;
    }
  sc_store_study_data_free (d);
  *out = r;
  return SC_OK;
bad:
  st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): its values do not fit %s and its "
                     "parameters", (long long) d->id, SC_MIXING_STUDY_KIND, info->name);
  sc_store_study_data_free (d);
  sc_mixing_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* The study kind (sc-study.h)                                                           */

static int
mixing_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx,
                    char *buf, size_t size, ScError *err)
{
  const int method = ((const ScMixingParams *) params)->method;
  const int len = sc_mixing_params_json (ctx->run_id, method, buf, size);

  if (len < 0)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: method %d is not one of value-zeroing, "
                  "alti", kind->name, method);
  return len;
}

static ScStatus
mixing_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
            ScError *err)
{
  ScMixingResult *r = NULL;
  ScStatus st = sc_mixing_run (ctx->session, ctx->model, ctx->ids, ctx->n_tokens, params, ctx,
                               &r, err);

  (void) kind;
  *out = r;
  return st;
}

static ScStatus
mixing_store (ScStore *store, const ScStoreModel *model, const char *params_json,
              const void *result, int64_t *study_id, ScError *err)
{
  return sc_mixing_store (store, model, params_json, result, study_id, err);
}

static ScStatus
mixing_load (ScStore *store, const ScModelInfo *info,
             const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
             const void *params, void **out, int64_t *study_id, ScError *err)
{
  ScMixingResult *r = NULL;
  ScStatus st = sc_mixing_load (store, info, sha256, params_json, &r, study_id, err);

  (void) params; /* the params text holds the method */
  *out = r;
  return st;
}

static int
mixing_n_tokens (const void *result)
{
  return ((const ScMixingResult *) result)->n_tokens;
}

static void
mixing_clean (const void *result, ScStudyClean *out)
{
  *out = (ScStudyClean) { .target = -1,
                          .top1_clean = ((const ScMixingResult *) result)->top1_clean,
                          .logp_clean = NAN, .loss_clean = NAN, .contrast = -1,
                          .logit_diff_clean = NAN };
}

static void
mixing_free (void *result)
{
  sc_mixing_result_free (result);
}

static const ScMixingParams MIXING_DEFAULT = { .method = SC_MIXING_VALUE_ZEROING };

static const ScStudyOption MIXING_OPTIONS[] = {
  { "method", SC_STUDY_OPTION_CHOICE, offsetof (ScMixingParams, method), 0, 0,
    sc_mixing_method_names,
    "value-zeroing (Mohebbi 2023: each key's values zeroed, the layer run again) or alti "
    "(Ferrando 2022: the attention block split by source token)" },
  { NULL },
};

const ScStudyKind sc_study_kind_mixing = {
  .id = SC_MIXING_STUDY_KIND,
  .name = "mixing",
  .title = "Context mixing per layer and rolled out (value zeroing, ALTI)",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_SESSION,
  .min_tokens = 2,
  .params_size = sizeof (ScMixingParams),
  .params_default = &MIXING_DEFAULT,
  .options = MIXING_OPTIONS,
  .params_json = mixing_params_json,
  .run = mixing_run,
  .store = mixing_store,
  .load = mixing_load,
  .result_n_tokens = mixing_n_tokens,
  .result_clean = mixing_clean,
  .result_free = mixing_free,
};
