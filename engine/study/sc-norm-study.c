/* sc-norm-study.c — norm-based attention of a run (sc-norm-study.h): one clean forward pass
 * whose observer takes each layer's weights and values and hands them, with the layer's
 * W_O, to analysis/sc-norm-attn.h; storage and the study kind. */
#include "study/sc-norm-study.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sc-effect.h"
#include "analysis/sc-norm-attn.h"

bool
sc_norm_maps_fit (int H, int n)
{
  const int64_t tri = (int64_t) n * (n + 1) / 2;

  return H >= 1 && n >= 1 && (H + SC_NORM_EXTRA_MAPS) * tri <= (int64_t) SC_STORE_MAX_TOKENS;
}

/* The store's positions hold H · n value norms. */
static bool
vnorms_fit (int H, int n)
{
  return (int64_t) H * n <= (int64_t) SC_STORE_MAX_TOKENS;
}

ScNormResult *
sc_norm_result_new (int L, int H, int n, int layer)
{
  ScNormResult *r;
  const size_t LH = (size_t) L * H;

  if (L < 1 || H < 1 || n < 1 || layer < 0 || layer >= L || !vnorms_fit (H, n)
      || (r = calloc (1, sizeof *r)) == NULL)
    return NULL;
  *r = (ScNormResult) { .n_layers = L, .n_heads = H, .n_tokens = n, .layer = layer,
                        .top1_clean = -1 };
  r->weight_first = malloc (LH * sizeof (double));
  r->norm_first = malloc (LH * sizeof (double));
  r->vnorm_first = malloc (LH * sizeof (double));
  r->vnorm_rest = malloc (LH * sizeof (double));
  r->layer_weight_first = malloc ((size_t) L * sizeof (double));
  r->layer_norm_first = malloc ((size_t) L * sizeof (double));
  r->vnorm = malloc ((size_t) H * n * sizeof (double));
  if (sc_norm_maps_fit (H, n))
    r->maps = calloc ((size_t) (H + SC_NORM_EXTRA_MAPS) * n * n, sizeof (float));
  if (r->weight_first == NULL || r->norm_first == NULL || r->vnorm_first == NULL
      || r->vnorm_rest == NULL || r->layer_weight_first == NULL || r->layer_norm_first == NULL
      || r->vnorm == NULL || (sc_norm_maps_fit (H, n) && r->maps == NULL))
    {
      sc_norm_result_free (r);
      return NULL;
    }
  for (size_t i = 0; i < LH; i++)
    r->weight_first[i] = r->norm_first[i] = r->vnorm_first[i] = r->vnorm_rest[i] = NAN;
  for (int l = 0; l < L; l++)
    r->layer_weight_first[l] = r->layer_norm_first[l] = NAN;
  for (size_t i = 0; i < (size_t) H * n; i++)
    r->vnorm[i] = NAN;
  for (int k = 0; k < 3; k++)
    r->mix[k] = NAN;
  return r;
}

void
sc_norm_result_free (ScNormResult *r)
{
  if (r == NULL)
    return;
  free (r->weight_first);
  free (r->norm_first);
  free (r->vnorm_first);
  free (r->vnorm_rest);
  free (r->layer_weight_first);
  free (r->layer_norm_first);
  free (r->vnorm);
  free (r->maps);
  free (r);
}

const float *
sc_norm_result_map (const ScNormResult *r, int k)
{
  if (r == NULL || r->maps == NULL || k < 0 || k >= r->n_heads + SC_NORM_EXTRA_MAPS)
    return NULL;
  return r->maps + (size_t) k * r->n_tokens * r->n_tokens;
}

/* ------------------------------------------------------------------------------------ */
/* Running                                                                               */

typedef struct {
  const ScModel *model;
  const ScStudyCtx *ctx;      /* progress (may be NULL) */
  ScNormResult *r;
  ScNormDims dims;
  int n;
  float *probs;               /* (H, n, n): the layer's weights */
  double *vnorm;              /* (H, n) */
  double *gram;               /* (n, H, H) */
  float *map;                 /* (n, n) scratch for a map not kept */
  float *alpha;               /* (H, n, n): the chosen layer's weights, kept */
  float *v;                   /* (n, KV): its values */
  float *o;                   /* (n, Q): its attention output (what multiplies W_O) */
  float *layer_maps;          /* (L, n, n) every layer's N, or NULL: not asked */
  ScStatus st;                /* the analysis' failure, said in err (sc_forward then says
                               * "cancelled" in its own) */
  ScError err;
} NormRun;

static float *
norm_layer_buffer (void *user, int layer, int n_q, int n_k)
{
  NormRun *nr = user;

  (void) layer;
  return n_q == nr->n && n_k == nr->n ? nr->probs : NULL;
}

static bool
norm_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  NormRun *nr = user;
  float *dst = nr->probs + (size_t) head * nr->n * nr->n;

  (void) layer;
  if (n_q != nr->n || n_k != nr->n)
    return false; /* a full run always has n × n */
  if (probs != dst) /* not written into our buffer (a device backend) */
    memcpy (dst, probs, (size_t) n_q * n_k * sizeof *probs);
  return true;
}

static bool
norm_attn_output (void *user, int layer, const float *o, int n_q, int width)
{
  NormRun *nr = user;

  if (layer == nr->r->layer && n_q == nr->n)
    memcpy (nr->o, o, (size_t) n_q * width * sizeof *o);
  return true;
}

/* Layer @layer is done: its weights are in nr->probs, its values in @v. */
static bool
norm_qkv (void *user, int layer, const float *q, const float *k, const float *v, int n_q,
          int n_k, int q_width, int kv_width)
{
  NormRun *nr = user;
  ScNormResult *r = nr->r;
  const int H = nr->dims.n_heads, n = nr->n;
  const size_t plane = (size_t) n * n;
  const bool chosen = layer == r->layer;
  double wsum = 0.0;

  (void) q, (void) k, (void) q_width, (void) kv_width;
  if (n_q != n || n_k != n)
    return false;
  /* 1. the value norms and the heads' Gram matrices */
  if ((nr->st = sc_norm_values (v, sc_model_weights (nr->model)->layers[layer].wo, &nr->dims,
                                n, nr->vnorm, nr->gram, &nr->err)) != SC_OK)
    return false;
  /* 2. each head: its map (kept for the chosen layer), the first token's weight and share */
  for (int h = 0; h < H; h++)
    {
      const float *alpha = nr->probs + h * plane;
      const double *vn = nr->vnorm + (size_t) h * n;
      float *map = chosen && r->maps != NULL ? r->maps + h * plane : nr->map;
      const size_t at = (size_t) layer * H + h;
      double rest = 0.0;
      sc_norm_head_map (alpha, vn, n, n, map);
      r->weight_first[at] = sc_norm_first_share (alpha, n);
      r->norm_first[at] = sc_norm_first_share (map, n);
      r->vnorm_first[at] = vn[0];
      for (int j = 1; j < n; j++)
        rest += vn[j];
      r->vnorm_rest[at] = n > 1 ? rest / (n - 1) : NAN;
      wsum += r->weight_first[at];
    }
  /* 3. the layer's map */
  {
    float *map = chosen && r->maps != NULL ? r->maps + H * plane : nr->map;
    if ((nr->st = sc_norm_layer_map (nr->probs, nr->gram, H, n, n, map, &nr->err)) != SC_OK)
      return false;
    r->layer_norm_first[layer] = sc_norm_first_share (map, n);
    if (nr->layer_maps != NULL)
      memcpy (nr->layer_maps + (size_t) layer * plane, map, plane * sizeof *map);
    if (chosen)
      r->mix[0] = sc_norm_mix_ratio (map, n);
    r->layer_weight_first[layer] = wsum / H;
  }
  if (chosen)
    {
      memcpy (r->vnorm, nr->vnorm, (size_t) H * n * sizeof *r->vnorm);
      memcpy (nr->alpha, nr->probs, (size_t) H * plane * sizeof *nr->alpha);
      memcpy (nr->v, v, (size_t) n * kv_width * sizeof *v);
    }
  return sc_study_report (nr->ctx, (double) (layer + 1) / r->n_layers);
}

/* The chosen layer with its residual (sc-norm-attn.h, Kobayashi 2021), after the pass: x_i
 * the kept residual entering it, A_i = W_O o_i the attention's sum; Gemma 3's post-attention
 * norm (s_i = 1 / rms(A_i), weight ω') where the layer has one; y_i = x_i + s_i ω' ∘ A_i
 * the residual after the block, o_i = 1 / rms(y_i) and w = ffn_norm for the map through
 * the FFN's norm. The maps go to r->maps (H + 1, H + 2) when kept, the mixing ratios to
 * r->mix. */
static ScStatus
norm_residual (ScSession *session, const ScModel *model, NormRun *nr, ScError *err)
{
  ScNormResult *r = nr->r;
  const ScModelInfo *in = sc_model_info (model);
  const ScLayerWeights *lw = &sc_model_weights (model)->layers[r->layer];
  const int H = r->n_heads, n = r->n_tokens, E = (int) in->n_embd,
            Q = (int) (in->n_heads * in->head_dim);
  const size_t plane = (size_t) n * n;
  const double eps = in->norm_eps;
  float *x = malloc ((size_t) n * E * sizeof *x);
  double *s = malloc ((size_t) n * sizeof *s), *os = malloc ((size_t) n * sizeof *os);
  double *omega = malloc ((size_t) E * sizeof *omega), *w = malloc ((size_t) E * sizeof *w);
  double *cross = malloc ((size_t) n * H * sizeof *cross), *xx = malloc ((size_t) n * sizeof *xx);
  double *a = malloc ((size_t) E * sizeof *a);
  float *map[2] = { NULL, NULL };
  ScStatus st = SC_OK;

  if (x == NULL || s == NULL || os == NULL || omega == NULL || w == NULL || cross == NULL
      || xx == NULL || a == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "norm attention: out of memory for %d tokens", n);
      goto out;
    }
  for (int i = 0; i < n && st == SC_OK; i++)
    st = sc_session_residual (session, r->layer, i, x + (size_t) i * E, err);
  if (st != SC_OK)
    goto out;
  /* 1. per row: A_i = W_O o_i, s_i, y_i and o_i */
  for (int i = 0; i < n; i++)
    {
      const float *oi = nr->o + (size_t) i * Q;
      double aa = 0.0, yy = 0.0;
      for (int e = 0; e < E; e++)
        {
          const float *wo = lw->wo + (size_t) e * Q;
          double acc = 0.0;
          for (int k = 0; k < Q; k++)
            acc += (double) wo[k] * oi[k];
          a[e] = acc;
          aa += acc * acc;
        }
      s[i] = lw->post_attn_norm != NULL ? 1.0 / sqrt (aa / E + eps) : 1.0;
      for (int e = 0; e < E; e++)
        {
          const double ye = (double) x[(size_t) i * E + e]
                            + s[i] * (lw->post_attn_norm != NULL ? lw->post_attn_norm[e] : 1.0)
                                  * a[e];
          yy += ye * ye;
        }
      os[i] = 1.0 / sqrt (yy / E + eps);
    }
  /* 2. the two maps: R (w = 1, o_i = 1), then through the FFN's norm */
  for (int k = 0; k < 2; k++)
    {
      map[k] = r->maps != NULL ? r->maps + (size_t) (H + 1 + k) * plane
                               : malloc (plane * sizeof (float));
      if (map[k] == NULL)
        {
          st = sc_error_set (err, SC_ERR_NOMEM, "norm attention: out of memory for %d tokens",
                             n);
          goto out;
        }
      for (int e = 0; e < E; e++)
        {
          w[e] = k == 1 ? (double) lw->ffn_norm[e] : 1.0;
          omega[e] = w[e] * (lw->post_attn_norm != NULL ? lw->post_attn_norm[e] : 1.0);
        }
      if ((st = sc_norm_residual_terms (nr->v, lw->wo, &nr->dims, n, x, omega, w, nr->gram,
                                        cross, xx, err)) != SC_OK
          || (st = sc_norm_residual_map (nr->alpha, nr->gram, cross, xx, H, n, s,
                                         k == 1 ? os : NULL, map[k], err)) != SC_OK)
        goto out;
      r->mix[1 + k] = sc_norm_mix_ratio (map[k], n);
    }
out:
  for (int k = 0; k < 2; k++)
    if (r->maps == NULL)
      free (map[k]);
  free (x);
  free (s);
  free (os);
  free (omega);
  free (w);
  free (cross);
  free (xx);
  free (a);
  return st;
}

ScStatus
sc_norm_run (ScSession *session, const ScModel *model, const int32_t *ids, int n,
             const ScNormParams *p, const ScStudyCtx *progress, ScNormResult **out,
             ScError *err)
{
  return sc_norm_run_layers (session, model, ids, n, p, progress, out, NULL, err);
}

ScStatus
sc_norm_run_layers (ScSession *session, const ScModel *model, const int32_t *ids, int n,
                    const ScNormParams *p, const ScStudyCtx *progress, ScNormResult **out,
                    float *layer_maps, ScError *err)
{
  const ScModelInfo *info;
  NormRun nr = { 0 };
  ScObserver obs = { 0 };
  ScForwardOptions opt = { 0 };
  float *logits = NULL;
  int L, H, layer;
  ScStatus st;

  if (p == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "norm attention: NULL argument");
  if (n < 2) /* the summaries read rows 1 .. n − 1 */
    return sc_error_set (err, SC_ERR_INVALID_ARG, "norm attention: %d token%s given, at least "
                         "2 needed (row 0 sees only itself)", n, n == 1 ? "" : "s");
  if ((st = sc_study_check_ids (session, model, ids, n, 2, -1, err)) != SC_OK)
    return st;
  info = sc_model_info (model);
  /* the residual terms go through ffn_norm as RMSNorm (residual_terms) */
  if (info->layer_norm)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "norm attention: architecture '%s' is not "
                         "supported (its LayerNorm is not in the residual terms yet)",
                         info->arch_name);
  L = (int) info->n_layers;
  H = (int) info->n_heads;
  layer = p->layer < 0 ? L / 2 : p->layer;
  if (p->layer < -1 || layer >= L)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "norm attention: layer %d is outside 0..%d",
                         p->layer, L - 1);
  if (!vnorms_fit (H, n))
    return sc_error_set (err, SC_ERR_RANGE, "norm attention: %d heads × %d tokens of value "
                         "norms are more than the store's %u positions", H, n,
                         SC_STORE_MAX_TOKENS);
  nr.model = model;
  nr.layer_maps = layer_maps;
  nr.ctx = progress;
  nr.n = n;
  nr.st = SC_OK;
  nr.dims = (ScNormDims) { H, (int) info->n_kv_heads, (int) info->head_dim, (int) info->n_embd };
  nr.r = sc_norm_result_new (L, H, n, layer);
  nr.probs = malloc ((size_t) H * n * n * sizeof *nr.probs);
  nr.vnorm = malloc ((size_t) H * n * sizeof *nr.vnorm);
  nr.gram = malloc ((size_t) n * H * H * sizeof *nr.gram);
  nr.map = malloc ((size_t) n * n * sizeof *nr.map);
  nr.alpha = malloc ((size_t) H * n * n * sizeof *nr.alpha);
  nr.v = malloc ((size_t) n * info->n_kv_heads * info->head_dim * sizeof *nr.v);
  nr.o = malloc ((size_t) n * H * info->head_dim * sizeof *nr.o);
  logits = malloc ((size_t) info->n_vocab * sizeof *logits);
  if (nr.r == NULL || nr.probs == NULL || nr.vnorm == NULL || nr.gram == NULL
      || nr.map == NULL || nr.alpha == NULL || nr.v == NULL || nr.o == NULL || logits == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "norm attention: out of memory for %d tokens", n);
      goto out;
    }
  obs.observe = norm_observe;
  obs.layer_buffer = norm_layer_buffer;
  obs.qkv = norm_qkv;
  obs.attn_output = norm_attn_output;
  obs.user = &nr;
  opt.observer = &obs;
  opt.keep_residuals = true; /* x_i entering the chosen layer, for the residual's terms */
  st = sc_forward (session, ids, n, &opt, logits, err);
  if (nr.st != SC_OK) /* the analysis failed inside the observer: its error, not "cancelled" */
    {
      st = nr.st;
      if (err != NULL)
        *err = nr.err;
    }
  if (st != SC_OK || (st = norm_residual (session, model, &nr, err)) != SC_OK)
    goto out;
  nr.r->top1_clean = sc_logits_top1 (logits, (int) info->n_vocab);
  *out = nr.r;
  nr.r = NULL;
out:
  free (logits);
  free (nr.probs);
  free (nr.vnorm);
  free (nr.gram);
  free (nr.map);
  free (nr.alpha);
  free (nr.v);
  free (nr.o);
  sc_norm_result_free (nr.r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* Storage                                                                               */

int
sc_norm_params_json (int64_t run_id, int layer, char *buf, size_t size)
{
  int len;

  if (layer < 0)
    return -1;
  len = snprintf (buf, size, "{\"study\":%d,\"run\":%lld,\"layer\":%d}", SC_NORM_STUDY_VERSION,
                  (long long) run_id, layer);
  return len < 0 || (size_t) len >= size ? -1 : len;
}

/* The metrics of every head, in the order of head_values(). */
static const char *const HEAD_METRICS[] = { "weight-first", "norm-first", "vnorm-first",
                                            "vnorm-rest" };
#define N_HEAD_METRICS 4

static void
head_values (const ScNormResult *r, size_t at, double v[N_HEAD_METRICS])
{
  v[0] = r->weight_first[at];
  v[1] = r->norm_first[at];
  v[2] = r->vnorm_first[at];
  v[3] = r->vnorm_rest[at];
}

ScStatus
sc_norm_store (ScStore *store, const ScStoreModel *model, const char *params_json,
               const ScNormResult *r, int64_t *study_id, ScError *err)
{
  ScStoreStudy *s = NULL;
  const int L = r != NULL ? r->n_layers : 0, H = r != NULL ? r->n_heads : 0,
            n = r != NULL ? r->n_tokens : 0;
  ScStatus st;

  if (r == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "norm attention: no result to store");
  if ((st = sc_store_study_begin (store, SC_NORM_STUDY_KIND, model, params_json, &s, err))
      != SC_OK)
    return st;
#define TRY(expr)                                                                             \
  do                                                                                          \
    {                                                                                         \
      if ((st = (expr)) != SC_OK)                                                             \
        goto fail;                                                                            \
    }                                                                                         \
  while (0)
  for (int l = 0; l < L; l++)
    {
      for (int h = 0; h < H; h++)
        {
          double v[N_HEAD_METRICS];
          head_values (r, (size_t) l * H + h, v);
          for (int m = 0; m < N_HEAD_METRICS; m++)
            TRY (sc_store_study_add_head (s, l, h, HEAD_METRICS[m], v[m], err));
        }
      TRY (sc_store_study_add_series (s, "layer-weight-first", l, r->layer_weight_first[l],
                                      err));
      TRY (sc_store_study_add_series (s, "layer-norm-first", l, r->layer_norm_first[l], err));
    }
  for (int i = 0; i < H * n; i++)
    TRY (sc_store_study_add_series (s, "vnorm", i, r->vnorm[i], err));
  for (int k = 0; r->maps != NULL && k < H + SC_NORM_EXTRA_MAPS; k++)
    {
      const float *map = sc_norm_result_map (r, k);
      for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++)
          TRY (sc_store_study_add_series (s, "maps", (int) sc_study_tri_pos (k, n, i, j),
                                          map[(size_t) i * n + j], err));
    }
  for (int k = 0; k < 3; k++)
    TRY (sc_store_study_add_series (s, "mix", k, r->mix[k], err));
  TRY (sc_store_study_add_series (s, "n", 0, n, err));
  TRY (sc_store_study_add_series (s, "top1", 0, r->top1_clean, err));
#undef TRY
  return sc_store_study_commit (s, study_id, err);
fail:
  sc_store_study_abort (s);
  return st;
}

ScStatus
sc_norm_load (ScStore *store, const ScModelInfo *info,
              const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
              ScNormResult **out, int64_t *study_id, ScError *err)
{
  /* a weight and a share in [0, 1] (the share NaN where every row's sum was 0); norms >= 0 */
  const ScStudyValueRule head_rules[N_HEAD_METRICS] = {
    { "weight-first", 0.0, 1.0, false }, { "norm-first", 0.0, 1.0, true },
    { "vnorm-first", 0.0, 1e30, false }, { "vnorm-rest", 0.0, 1e30, false },
  };
  const ScStudyValueRule lw = { "layer-weight-first", 0.0, 1.0, false },
                         ln = { "layer-norm-first", 0.0, 1.0, true },
                         vn = { "vnorm", 0.0, 1e30, false }, mp = { "maps", 0.0, 1e30, false },
                         nn = { "n", 2.0, SC_STORE_MAX_TOKENS, false },
                         mx = { "mix", 0.0, 1.0, true },
                         t1 = { "top1", 0.0, (double) info->n_vocab - 1, false };
  ScStoreStudyData *d = NULL;
  ScNormResult *r = NULL;
  uint64_t layer = 0;
  double nv, top1;
  int n, H;
  ScStatus st;

  if ((st = sc_study_find_and_read (store, SC_NORM_STUDY_KIND, sha256, params_json, &d,
                                    study_id, err)) != SC_OK)
    return st;
  H = d->n_heads;
  nv = sc_study_series_at0 (d, "n");
  top1 = sc_study_series_at0 (d, "top1");
  if (d->n_layers != (int) info->n_layers || H != (int) info->n_heads
      || !sc_study_params_uint (params_json, "layer", &layer) || layer >= info->n_layers
      || !(nv >= 2 && nv <= SC_STORE_MAX_TOKENS && nv == floor (nv))
      || !(top1 == floor (top1)) || !vnorms_fit (H, (int) nv)
      || (r = sc_norm_result_new (d->n_layers, H, (int) nv, (int) layer)) == NULL)
    goto bad;
  n = (int) nv;
  st = sc_study_check_heads (d, head_rules, N_HEAD_METRICS, NULL, err);
  if (st == SC_OK)
    st = sc_study_check_series (d, &lw, d->n_layers, err);
  if (st == SC_OK)
    st = sc_study_check_series (d, &ln, d->n_layers, err);
  if (st == SC_OK)
    st = sc_study_check_series (d, &vn, H * n, err);
  if (st == SC_OK) /* the maps are there exactly when they fit */
    st = sc_study_check_series (d, &mp,
                                r->maps != NULL ? (H + SC_NORM_EXTRA_MAPS) * n * (n + 1) / 2 : 0,
                                err);
  if (st == SC_OK)
    st = sc_study_check_series (d, &mx, 3, err);
  if (st == SC_OK)
    st = sc_study_check_series (d, &nn, 1, err);
  if (st == SC_OK)
    st = sc_study_check_series (d, &t1, 1, err);
  if (st != SC_OK)
    {
      sc_store_study_data_free (d);
      sc_norm_result_free (r);
      return st;
    }
  r->top1_clean = (int) top1;
  for (size_t i = 0; i < d->n_head_values; i++)
    {
      const ScStoreHeadValue *v = &d->heads[i];
      const size_t at = (size_t) v->layer * H + v->head;
      if (strcmp (v->metric, "weight-first") == 0)
        r->weight_first[at] = v->value;
      else if (strcmp (v->metric, "norm-first") == 0)
        r->norm_first[at] = v->value;
      else if (strcmp (v->metric, "vnorm-first") == 0)
        r->vnorm_first[at] = v->value;
      else if (strcmp (v->metric, "vnorm-rest") == 0)
        r->vnorm_rest[at] = v->value;
      else
        goto bad;
    }
  for (size_t i = 0; i < d->n_series_values; i++)
    {
      const ScStoreSeriesValue *v = &d->series[i];
      if (strcmp (v->series, "layer-weight-first") == 0)
        r->layer_weight_first[v->pos] = v->value;
      else if (strcmp (v->series, "layer-norm-first") == 0)
        r->layer_norm_first[v->pos] = v->value;
      else if (strcmp (v->series, "vnorm") == 0)
        r->vnorm[v->pos] = v->value;
      else if (strcmp (v->series, "mix") == 0)
        r->mix[v->pos] = v->value;
      else if (strcmp (v->series, "maps") == 0)
        {
          int k, row, col;
          sc_study_tri_unpos (v->pos, n, &k, &row, &col);
          r->maps[((size_t) k * n + row) * n + col] = (float) v->value;
        }
      else if (strcmp (v->series, "n") != 0 && strcmp (v->series, "top1") != 0)
        goto bad;
    }
  sc_store_study_data_free (d);
  *out = r;
  return SC_OK;
bad:
  st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): its values do not fit %s and its "
                     "parameters", (long long) d->id, SC_NORM_STUDY_KIND, info->name);
  sc_store_study_data_free (d);
  sc_norm_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* The study kind (sc-study.h)                                                           */

/* The layer @p names on @ctx's model: −1 is the middle one; −1 when it is outside. */
static int
resolve_layer (const ScNormParams *p, const ScModel *model)
{
  const int L = (int) sc_model_info (model)->n_layers;
  const int layer = p->layer < 0 ? L / 2 : p->layer;

  return p->layer < -1 || layer >= L ? -1 : layer;
}

static int
norm_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx,
                  char *buf, size_t size, ScError *err)
{
  const int layer = resolve_layer (params, ctx->model);
  const int len = layer >= 0 ? sc_norm_params_json (ctx->run_id, layer, buf, size) : -1;

  if (len < 0)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: --layer %d is outside 0..%u", kind->name,
                  ((const ScNormParams *) params)->layer,
                  sc_model_info (ctx->model)->n_layers - 1);
  return len;
}

static ScStatus
norm_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
          ScError *err)
{
  ScNormResult *r = NULL;
  ScStatus st = sc_norm_run (ctx->session, ctx->model, ctx->ids, ctx->n_tokens, params, ctx,
                             &r, err);

  (void) kind;
  *out = r;
  return st;
}

static ScStatus
norm_store (ScStore *store, const ScStoreModel *model, const char *params_json,
            const void *result, int64_t *study_id, ScError *err)
{
  return sc_norm_store (store, model, params_json, result, study_id, err);
}

static ScStatus
norm_load (ScStore *store, const ScModelInfo *info, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
           const char *params_json, const void *params, void **out, int64_t *study_id,
           ScError *err)
{
  ScNormResult *r = NULL;
  ScStatus st = sc_norm_load (store, info, sha256, params_json, &r, study_id, err);

  (void) params; /* the params text holds the resolved layer */
  *out = r;
  return st;
}

static int
norm_n_tokens (const void *result)
{
  return ((const ScNormResult *) result)->n_tokens;
}

static void
norm_clean (const void *result, ScStudyClean *out)
{
  *out = (ScStudyClean) { .target = -1,
                          .top1_clean = ((const ScNormResult *) result)->top1_clean,
                          .logp_clean = NAN, .loss_clean = NAN, .contrast = -1,
                          .logit_diff_clean = NAN };
}

static void
norm_free (void *result)
{
  sc_norm_result_free (result);
}

static const ScNormParams NORM_DEFAULT = { .layer = -1 };

static const ScStudyOption NORM_OPTIONS[] = {
  { "layer", SC_STUDY_OPTION_INT, offsetof (ScNormParams, layer), -1,
    (int) SC_STORE_MAX_LAYERS - 1, NULL,
    "the layer whose value norms and maps are kept (default -1: the middle layer)" },
  { NULL },
};

const ScStudyKind sc_study_kind_norms = {
  .id = SC_NORM_STUDY_KIND,
  .name = "norms",
  .title = "Norm-based attention (Kobayashi 2020: weight times value norm)",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_SESSION,
  .min_tokens = 2,
  .params_size = sizeof (ScNormParams),
  .params_default = &NORM_DEFAULT,
  .options = NORM_OPTIONS,
  .params_json = norm_params_json,
  .run = norm_run,
  .store = norm_store,
  .load = norm_load,
  .result_n_tokens = norm_n_tokens,
  .result_clean = norm_clean,
  .result_free = norm_free,
};
