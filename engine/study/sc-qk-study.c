/* sc-qk-study.c — QK attribution (sc-qk-study.h has the definition): one clean forward
 * pass keeping its residuals, every earlier layer's attention output at i and j and the
 * head's own q_i and k_j from the observer, then each component's query and key in double
 * over the host weights, and the (C, C) products. */
#include "study/sc-qk-study.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool
sc_qk_supports (const ScModelInfo *info)
{
  return info != NULL
         && (info->arch == SC_ARCH_LLAMA || info->arch == SC_ARCH_GEMMA3
             || info->arch == SC_ARCH_QWEN2 || info->arch == SC_ARCH_QWEN3
             || info->arch == SC_ARCH_GPT2);
}

int
sc_qk_n_extra (const ScModelInfo *info)
{
  if (info == NULL)
    return 0;
  if (strcmp (info->arch_name, "gpt2") == 0)
    return 2;
  return strcmp (info->arch_name, "qwen2") == 0 ? 1 : 0;
}

ScQkResult *
sc_qk_result_new (int n_layers, int n_heads, int n_tokens, int layer, int n_extra)
{
  ScQkResult *r;
  size_t cc;

  if (n_layers < 1 || n_heads < 1 || n_tokens < 1 || layer < 0 || layer >= n_layers
      || n_extra < 0 || n_extra > 2 || (r = calloc (1, sizeof *r)) == NULL)
    return NULL;
  *r = (ScQkResult) { .n_layers = n_layers, .n_heads = n_heads, .n_tokens = n_tokens,
                      .layer = layer, .head = -1, .query = -1, .key = -1,
                      .n_comp = 1 + layer * (n_heads + 1) + n_extra, .n_extra = n_extra,
                      .top1_clean = -1, .score = NAN,
                      .total = NAN, .rms_q = NAN, .rms_k = NAN };
  cc = (size_t) r->n_comp * r->n_comp;
  if ((r->parts = malloc (cc * sizeof *r->parts)) == NULL)
    {
      free (r);
      return NULL;
    }
  for (size_t k = 0; k < cc; k++)
    r->parts[k] = NAN;
  return r;
}

void
sc_qk_result_free (ScQkResult *r)
{
  if (r == NULL)
    return;
  free (r->parts);
  free (r);
}

int
sc_qk_component_name (const ScQkResult *r, int c, char *buf, size_t size)
{
  int len, l, h;

  if (r == NULL || buf == NULL || c < 0 || c >= r->n_comp)
    return -1;
  if (c == 0)
    len = snprintf (buf, size, "embed");
  else if (c >= r->n_comp - r->n_extra)
    /* the components after the layers: gpt2's position embedding, then the bias */
    len = snprintf (buf, size, "%s", c == r->n_comp - 1 ? "bias" : "pos");
  else
    {
      l = (c - 1) / (r->n_heads + 1);
      h = (c - 1) % (r->n_heads + 1);
      len = h == r->n_heads ? snprintf (buf, size, "MLP%d", l)
                            : snprintf (buf, size, "L%d.H%d", l, h);
    }
  return len < 0 || (size_t) len >= size ? -1 : len;
}

ScStatus
sc_qk_params_resolve (const ScModelInfo *in, int n, const ScQkParams *p, ScQkParams *out,
                      ScError *err)
{
  ScQkParams q;

  if (in == NULL || p == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "qk attribution: NULL argument");
  q = *p;
  if (q.layer == -1)
    q.layer = (int) in->n_layers / 2;
  if (q.query == -1)
    q.query = n - 1;
  if (q.layer < 0 || q.layer >= (int) in->n_layers)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "qk attribution: layer %d is outside 0..%u",
                         q.layer, in->n_layers - 1);
  if (q.head < 0 || q.head >= (int) in->n_heads)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "qk attribution: head %d is outside 0..%u",
                         q.head, in->n_heads - 1);
  if (q.query < 0 || q.query >= n)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "qk attribution: query %d is outside the "
                         "run's positions 0..%d", q.query, n - 1);
  if (q.key < 0 || q.key > q.query)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "qk attribution: key %d is outside 0..%d "
                         "(a query sees only itself and earlier keys)", q.key, q.query);
  *out = q;
  return SC_OK;
}

/* ------------------------------------------------------------------------------------ */
/* Running                                                                               */

typedef struct {
  int layer, i, j, head, group, d;
  float *o;         /* (layer, 2, Q): layers below @layer, rows i and j */
  float *q, *k;     /* (d): the head's q_i and its group's k_j at @layer */
  bool seen;
} QkCapture;

static bool
keep_rows (void *user, int layer, const float *o, int n_query, int width)
{
  QkCapture *c = user;

  (void) n_query;
  if (layer < c->layer)
    {
      memcpy (c->o + ((size_t) layer * 2) * width, o + (size_t) c->i * width,
              (size_t) width * sizeof *o);
      memcpy (c->o + ((size_t) layer * 2 + 1) * width, o + (size_t) c->j * width,
              (size_t) width * sizeof *o);
    }
  return true;
}

static bool
keep_qk (void *user, int layer, const float *q, const float *k, const float *v, int n_query,
         int n_key, int q_width, int kv_width)
{
  QkCapture *c = user;

  (void) v, (void) n_query, (void) n_key;
  if (layer == c->layer)
    {
      memcpy (c->q, q + (size_t) c->i * q_width + (size_t) c->head * c->d,
              (size_t) c->d * sizeof *q);
      memcpy (c->k, k + (size_t) c->j * kv_width + (size_t) c->group * c->d,
              (size_t) c->d * sizeof *k);
      c->seen = true;
    }
  return true;
}

/* RoPE at position @pos on @x (d doubles), angle pos · base^(−2c / n_rot) / ff[c] for pair c
 * of the first n_rot dimensions (@ff: Llama 3's frequency factors, NULL for none): adjacent
 * pairs (2c, 2c + 1), the GGUF llama convention (sc-arch-llama.c), or with @neox the split
 * halves (c, c + n_rot / 2) (sc-arch-gemma3.c). */
static void
rope_double (double *x, int pos, int n_rot, double base, const float *ff, bool neox)
{
  const int half = n_rot / 2;

  for (int c = 0; c < half; c++)
    {
      const double th = (double) pos * pow (base, -2.0 * c / n_rot) / (ff != NULL ? ff[c] : 1.0);
      const double cs = cos (th), sn = sin (th);
      double *x0 = neox ? &x[c] : &x[2 * c], *x1 = neox ? &x[c + half] : &x[2 * c + 1];
      const double a = *x0, b = *x1;
      *x0 = a * cs - b * sn;
      *x1 = a * sn + b * cs;
    }
}

/* What turns one component's piece of the normed input into its query or key: the rows of
 * the projection, the attention norm's weight and frozen scale (with @center, GPT-2's
 * LayerNorm: the piece's own mean taken out first), the QK-norm's weight and frozen scale
 * (Gemma 3; NULL without), the rotation (none with @rope false); the constants a side
 * adds, which make the bias component: the LayerNorm's bias (GPT-2, before the
 * projection) and the projection's bias (Qwen2, GPT-2). */
typedef struct {
  const float *w;    /* (d, E): the head's block of W_Q or W_K */
  const float *g;    /* (E) attn_norm */
  double rms;        /* of the residual entering the layer at this position (LayerNorm: its
                      * standard deviation), eps included */
  bool center;       /* LayerNorm: c − mean (c) before the weight */
  const float *qkn;  /* (d) attn_q_norm or attn_k_norm, or NULL */
  double rms_qkn;    /* of the whole projection, the QK-norm's frozen scale */
  const float *norm_b; /* (E) attn_norm_b, or NULL */
  const float *b;    /* (d) the head's block of bq or bk, or NULL */
  int d, E, pos, n_rot;
  double base;
  const float *ff;   /* (n_rot/2) RoPE frequency factors, or NULL */
  bool neox, rope;
} Side;

/* out (d) = RoPE_pos (qkn ∘ (W (g ∘ v') / rms) / rms_qkn), v' = v, or v − mean (v) with
 * center; without the QK-norm when there is none, without RoPE when there is none. */
static void
project (const Side *sd, const double *v, double *out)
{
  double mean = 0.0;

  if (sd->center)
    {
      for (int e = 0; e < sd->E; e++)
        mean += v[e];
      mean /= sd->E;
    }
  for (int r = 0; r < sd->d; r++)
    {
      double acc = 0.0;
      for (int e = 0; e < sd->E; e++)
        acc += (double) sd->w[(size_t) r * sd->E + e] * ((double) sd->g[e] * (v[e] - mean));
      out[r] = acc / sd->rms;
      if (sd->qkn != NULL)
        out[r] *= (double) sd->qkn[r] / sd->rms_qkn;
    }
  if (sd->rope)
    rope_double (out, sd->pos, sd->n_rot, sd->base, sd->ff, sd->neox);
}

/* The bias component: out (d) = RoPE_pos (W norm_b + b), each term where the side has it
 * (no QK-norm: the architectures with biases have none). */
static void
project_bias (const Side *sd, double *out)
{
  for (int r = 0; r < sd->d; r++)
    {
      double acc = sd->b != NULL ? (double) sd->b[r] : 0.0;
      if (sd->norm_b != NULL)
        for (int e = 0; e < sd->E; e++)
          acc += (double) sd->w[(size_t) r * sd->E + e] * sd->norm_b[e];
      out[r] = acc;
    }
  if (sd->rope)
    rope_double (out, sd->pos, sd->n_rot, sd->base, sd->ff, sd->neox);
}

/* The attention norm's scale of @x: sqrt (mean x² + eps), or with @center (LayerNorm)
 * sqrt (mean (x − mean x)² + eps). */
static double
rms_of (const float *x, int E, double eps, bool center)
{
  double ss = 0.0, mean = 0.0;

  if (center)
    {
      for (int e = 0; e < E; e++)
        mean += x[e];
      mean /= E;
    }
  for (int e = 0; e < E; e++)
    ss += ((double) x[e] - mean) * ((double) x[e] - mean);
  return sqrt (ss / E + eps);
}

ScStatus
sc_qk_run (ScSession *session, const ScModel *model, const int32_t *ids, int n,
           const ScQkParams *params, ScQkResult **out, ScError *err)
{
  const ScModelInfo *in;
  const ScWeights *w;
  ScQkResult *r = NULL;
  ScQkParams p;
  QkCapture cap = { 0 };
  ScObserver obs = { 0 };
  ScForwardOptions opt = { .keep_residuals = true };
  float *logits = NULL, *x = NULL;
  double *comp = NULL, *qc = NULL, *kc = NULL, *mlp = NULL, *heads = NULL;
  int L, H, d, E, Q, C, l, window;
  ScStatus st;

  if (params == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "qk attribution: NULL argument");
  if ((st = sc_study_check_ids (session, model, ids, n, 1, -1, err)) != SC_OK)
    return st;
  in = sc_model_info (model);
  w = sc_model_weights (model);
  if ((st = sc_qk_params_resolve (in, n, params, &p, err)) != SC_OK)
    return st;
  if (!sc_qk_supports (in))
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "qk attribution: architecture '%s' is not "
                         "supported (llama, gemma3, qwen2, qwen3 and gpt2 are)", in->arch_name);
  window = (int) sc_model_layer_window (in, p.layer);
  if (window > 0 && p.query - p.key >= window)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "qk attribution: key %d is outside layer "
                         "%d's window of %d keys before query %d", p.key, p.layer, window,
                         p.query);
  L = (int) in->n_layers;
  H = (int) in->n_heads;
  d = (int) in->head_dim;
  E = (int) in->n_embd;
  Q = H * d;
  cap = (QkCapture) { .layer = p.layer, .i = p.query, .j = p.key, .head = p.head,
                      .group = p.head / (H / (int) in->n_kv_heads), .d = d };
  r = sc_qk_result_new (L, H, n, p.layer, sc_qk_n_extra (in));
  logits = malloc ((size_t) in->n_vocab * sizeof *logits);
  x = malloc ((size_t) (p.layer + 1) * 2 * E * sizeof *x);
  cap.o = malloc (((size_t) p.layer * 2 * Q + 1) * sizeof *cap.o);
  cap.q = malloc ((size_t) d * sizeof *cap.q);
  cap.k = malloc ((size_t) d * sizeof *cap.k);
  comp = malloc ((size_t) E * sizeof *comp);
  if (r != NULL)
    {
      C = r->n_comp;
      qc = calloc ((size_t) C * d, sizeof *qc);
      kc = calloc ((size_t) C * d, sizeof *kc);
    }
  if (r == NULL || logits == NULL || x == NULL || cap.o == NULL || cap.q == NULL
      || cap.k == NULL || comp == NULL || qc == NULL || kc == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "qk attribution: out of memory");
      goto out;
    }
  r->head = p.head;
  r->query = p.query;
  r->key = p.key;

  /* 1. The clean run: residuals, attention outputs below the layer, the head's q and k. */
  obs.attn_output = keep_rows;
  obs.qkv = keep_qk;
  obs.user = &cap;
  opt.observer = &obs;
  if ((st = sc_forward (session, ids, n, &opt, logits, err)) != SC_OK)
    goto out;
  if (!cap.seen)
    {
      st = sc_error_set (err, SC_ERR_UNSUPPORTED, "qk attribution: the forward pass did not "
                         "hand over layer %d's queries and keys", p.layer);
      goto out;
    }
  r->top1_clean = sc_logits_top1 (logits, (int) in->n_vocab);
  for (l = 0; l <= p.layer; l++)
    if ((st = sc_session_residual (session, l, p.query, x + ((size_t) l * 2) * E, err))
            != SC_OK
        || (st = sc_session_residual (session, l, p.key, x + ((size_t) l * 2 + 1) * E, err))
               != SC_OK)
      goto out;
  {
    double s = 0.0;
    for (int e = 0; e < d; e++)
      s += (double) cap.q[e] * cap.k[e];
    r->score = s * in->attn_scale;
  }

  /* 2. Each component's query at i (side 0) and key at j (side 1). A Gemma 3 head's write
   *    goes through the post-attention norm, its scale frozen at the layer's whole write
   *    (g' ∘ W_O o_h / rms (W_O o)); its query and key through the QK-norm, scale frozen
   *    at the whole projection. */
  mlp = malloc ((size_t) E * sizeof *mlp);
  heads = malloc ((size_t) H * E * sizeof *heads);
  if (mlp == NULL || heads == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "qk attribution: out of memory");
      goto out;
    }
  for (int side = 0; side < 2; side++)
    {
      const ScLayerWeights *lw = &w->layers[p.layer];
      const float *xl = x + ((size_t) p.layer * 2 + side) * E;
      double *dst = side == 0 ? qc : kc;
      const float *bias = side == 0 ? lw->bq : lw->bk;
      const int block = side == 0 ? p.head : cap.group;
      Side sd = { .w = side == 0 ? lw->wq + (size_t) p.head * d * E
                                 : lw->wk + (size_t) cap.group * d * E,
                  .g = lw->attn_norm, .rms = rms_of (xl, E, in->norm_eps, in->layer_norm),
                  .center = in->layer_norm,
                  .qkn = side == 0 ? lw->attn_q_norm : lw->attn_k_norm, .rms_qkn = 1.0,
                  .norm_b = lw->attn_norm_b,
                  .b = bias != NULL ? bias + (size_t) block * d : NULL,
                  .d = d, .E = E, .pos = side == 0 ? p.query : p.key, .n_rot = (int) in->n_rot,
                  .base = window > 0 ? in->rope_base_local : in->rope_base,
                  .ff = in->n_rope_freq > 0 ? in->rope_freq : NULL,
                  .neox = in->arch == SC_ARCH_GEMMA3 || in->arch == SC_ARCH_QWEN3
                          || in->arch == SC_ARCH_QWEN2,
                  .rope = !in->learned_positions };
      const int first_extra = C - r->n_extra;
      if (side == 0)
        r->rms_q = sd.rms;
      else
        r->rms_k = sd.rms;
      if (sd.qkn != NULL)
        {
          /* the QK-norm's scale: of the whole projection W (g ∘ x) / rms */
          double ss = 0.0;
          for (int k = 0; k < d; k++)
            {
              double acc = 0.0;
              for (int e = 0; e < E; e++)
                acc += (double) sd.w[(size_t) k * E + e] * ((double) sd.g[e] * xl[e]);
              acc /= sd.rms;
              ss += acc * acc;
            }
          sd.rms_qkn = sqrt (ss / d + in->norm_eps);
        }
      for (int e = 0; e < E; e++)
        comp[e] = x[(size_t) side * E + e];
      if (in->learned_positions)
        {
          /* GPT-2: the token's embedding, and the rest of x entering layer 0 — its learned
           * position embedding (to the float rounding of the add) — apart */
          const float *te = w->token_embd + (size_t) ids[sd.pos] * E;
          double *pos = mlp;
          for (int e = 0; e < E; e++)
            {
              pos[e] = comp[e] - (double) te[e];
              comp[e] = te[e];
            }
          project (&sd, pos, dst + (size_t) first_extra * d);
        }
      project (&sd, comp, dst);
      if (sd.b != NULL || sd.norm_b != NULL)
        project_bias (&sd, dst + (size_t) (C - 1) * d);
      for (l = 0; l < p.layer; l++)
        {
          const float *wo = w->layers[l].wo; /* (E, Q) */
          const float *post = w->layers[l].post_attn_norm;
          const float *o = cap.o + ((size_t) l * 2 + side) * Q;
          const float *x0 = x + ((size_t) l * 2 + side) * E;
          const float *x1 = x + ((size_t) (l + 1) * 2 + side) * E;
          double post_rms = 1.0;
          for (int h = 0; h < H; h++)
            for (int e = 0; e < E; e++)
              {
                double acc = 0.0;
                for (int k = h * d; k < (h + 1) * d; k++)
                  acc += (double) wo[(size_t) e * Q + k] * o[k];
                heads[(size_t) h * E + e] = acc;
              }
          if (post != NULL)
            {
              double ss = 0.0;
              for (int e = 0; e < E; e++)
                {
                  double y = 0.0;
                  for (int h = 0; h < H; h++)
                    y += heads[(size_t) h * E + e];
                  ss += y * y;
                }
              post_rms = sqrt (ss / E + in->norm_eps);
              for (int h = 0; h < H; h++)
                for (int e = 0; e < E; e++)
                  heads[(size_t) h * E + e] *= (double) post[e] / post_rms;
            }
          /* the MLP's part is what is left of the layer's update */
          for (int e = 0; e < E; e++)
            mlp[e] = (double) x1[e] - (double) x0[e];
          for (int h = 0; h < H; h++)
            {
              for (int e = 0; e < E; e++)
                mlp[e] -= heads[(size_t) h * E + e];
              project (&sd, heads + (size_t) h * E, dst + (size_t) (1 + l * (H + 1) + h) * d);
            }
          project (&sd, mlp, dst + (size_t) (1 + l * (H + 1) + H) * d);
        }
    }

  /* 3. The parts. */
  r->total = 0.0;
  for (int a = 0; a < C; a++)
    for (int b = 0; b < C; b++)
      {
        double s = 0.0;
        for (int e = 0; e < d; e++)
          s += qc[(size_t) a * d + e] * kc[(size_t) b * d + e];
        r->parts[(size_t) a * C + b] = s * in->attn_scale;
        r->total += r->parts[(size_t) a * C + b];
      }
  *out = r;
  r = NULL;
out:
  free (logits);
  free (x);
  free (cap.o);
  free (cap.q);
  free (cap.k);
  free (comp);
  free (qc);
  free (kc);
  free (mlp);
  free (heads);
  sc_qk_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* Storage                                                                               */

int
sc_qk_params_json (int64_t run_id, const ScQkParams *p, char *buf, size_t size)
{
  int len;

  if (p == NULL || buf == NULL || p->layer < 0 || p->head < 0 || p->query < 0 || p->key < 0)
    return -1;
  len = snprintf (buf, size, "{\"study\":%d,\"run\":%lld,\"layer\":%d,\"head\":%d,\"query\":%d,"
                  "\"key\":%d}", SC_QK_STUDY_VERSION, (long long) run_id, p->layer, p->head,
                  p->query, p->key);
  return len < 0 || (size_t) len >= size ? -1 : len;
}

#define N_QK 9

ScStatus
sc_qk_store (ScStore *store, const ScStoreModel *model, const char *params_json,
             const ScQkResult *r, int64_t *study_id, ScError *err)
{
  ScStoreStudy *s = NULL;
  double v[N_QK];
  size_t cc;
  ScStatus st;

  if (r == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "qk attribution: no result to store");
  cc = (size_t) r->n_comp * r->n_comp;
  if (cc > SC_STORE_MAX_TOKENS)
    return sc_error_set (err, SC_ERR_RANGE, "qk attribution: %zu parts do not fit the store's "
                         "series (at most %u)", cc, SC_STORE_MAX_TOKENS);
  if ((st = sc_store_study_begin (store, SC_QK_STUDY_KIND, model, params_json, &s, err))
      != SC_OK)
    return st;
  for (size_t k = 0; k < cc; k++)
    if ((st = sc_store_study_add_series (s, "part", (int) k, r->parts[k], err)) != SC_OK)
      goto fail;
  v[0] = r->score;
  v[1] = r->rms_q;
  v[2] = r->rms_k;
  v[3] = r->n_tokens;
  v[4] = r->top1_clean;
  v[5] = r->layer;
  v[6] = r->head;
  v[7] = r->query;
  v[8] = r->key;
  for (int k = 0; k < N_QK; k++)
    if ((st = sc_store_study_add_series (s, "qk", k, v[k], err)) != SC_OK)
      goto fail;
  return sc_store_study_commit (s, study_id, err);
fail:
  sc_store_study_abort (s);
  return st;
}

static bool
whole_in (double v, double lo, double hi)
{
  return v >= lo && v <= hi && v == floor (v);
}

ScStatus
sc_qk_load (ScStore *store, const ScModelInfo *info,
            const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
            const ScQkParams *params, ScQkResult **out, int64_t *study_id, ScError *err)
{
  ScStoreStudyData *d = NULL;
  ScQkResult *r = NULL;
  ScQkParams want;
  ScStudyValueRule rule = { "part", -1e30, 1e30, false };
  double v[N_QK];
  ScError e2 = { 0 };
  size_t cc;
  ScStatus st;

  if (store == NULL || info == NULL || params == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "qk attribution: NULL argument");
  if ((st = sc_study_find_and_read (store, SC_QK_STUDY_KIND, sha256, params_json, &d,
                                    study_id, err)) != SC_OK)
    return st;
  for (int k = 0; k < N_QK; k++)
    v[k] = NAN;
  for (size_t i = 0; i < d->n_series_values; i++)
    if (strcmp (d->series[i].series, "qk") == 0 && d->series[i].pos < N_QK)
      v[d->series[i].pos] = d->series[i].value;
  if (d->n_layers != (int) info->n_layers || d->n_heads != (int) info->n_heads
      || !isfinite (v[0]) || !(v[1] > 0) || !(v[2] > 0)
      || !whole_in (v[3], 1, SC_STORE_MAX_TOKENS) || !whole_in (v[4], 0, info->n_vocab - 1)
      || !whole_in (v[5], 0, info->n_layers - 1) || !whole_in (v[6], 0, info->n_heads - 1)
      || !whole_in (v[7], 0, v[3] - 1) || !whole_in (v[8], 0, v[7])
      || sc_qk_params_resolve (info, (int) v[3], params, &want, &e2) != SC_OK
      || want.layer != (int) v[5] || want.head != (int) v[6] || want.query != (int) v[7]
      || want.key != (int) v[8]
      || (r = sc_qk_result_new (d->n_layers, d->n_heads, (int) v[3], (int) v[5],
                                  sc_qk_n_extra (info))) == NULL)
    goto bad;
  cc = (size_t) r->n_comp * r->n_comp;
  if (cc > SC_STORE_MAX_TOKENS
      || (st = sc_study_check_series (d, &rule, (int) cc, err)) != SC_OK)
    {
      if (st == SC_OK)
        goto bad;
      sc_store_study_data_free (d);
      sc_qk_result_free (r);
      return st;
    }
  r->score = v[0];
  r->rms_q = v[1];
  r->rms_k = v[2];
  r->top1_clean = (int) v[4];
  r->head = (int) v[6];
  r->query = (int) v[7];
  r->key = (int) v[8];
  r->total = 0.0;
  for (size_t i = 0; i < d->n_series_values; i++)
    if (strcmp (d->series[i].series, "part") == 0)
      r->parts[d->series[i].pos] = d->series[i].value;
    else if (strcmp (d->series[i].series, "qk") != 0)
      goto bad;
  for (size_t k = 0; k < cc; k++)
    r->total += r->parts[k];
  if (!(fabs (r->total - r->score) <= 1e-3 * fmax (1.0, fabs (r->score))))
    {
      st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): its parts sum to %.6g, not "
                         "its score %.6g", (long long) d->id, SC_QK_STUDY_KIND, r->total,
                         r->score);
      sc_store_study_data_free (d);
      sc_qk_result_free (r);
      return st;
    }
  sc_store_study_data_free (d);
  *out = r;
  return SC_OK;
bad:
  st = sc_error_set (err, SC_ERR_FORMAT, "study %lld (%s): its values do not fit %s and its "
                     "parameters", (long long) d->id, SC_QK_STUDY_KIND, info->name);
  sc_store_study_data_free (d);
  sc_qk_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* The study kind (sc-study.h)                                                           */

static int
qk_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx, char *buf,
                size_t size, ScError *err)
{
  ScQkParams p;
  int len;

  if (sc_qk_params_resolve (sc_model_info (ctx->model), ctx->n_tokens, params, &p, err)
      != SC_OK)
    return -1;
  if ((len = sc_qk_params_json (ctx->run_id, &p, buf, size)) < 0)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: the parameters are out of range",
                  kind->name);
  return len;
}

static ScStatus
qk_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
        ScError *err)
{
  ScQkResult *r = NULL;
  ScStatus st = sc_qk_run (ctx->session, ctx->model, ctx->ids, ctx->n_tokens, params, &r,
                           err);

  if (st == SC_OK && !sc_study_report (ctx, 1.0))
    {
      sc_qk_result_free (r);
      r = NULL;
      st = sc_error_set (err, SC_ERR_CANCELLED, "study %s: cancelled", kind->name);
    }
  *out = r;
  return st;
}

static ScStatus
qk_store (ScStore *store, const ScStoreModel *model, const char *params_json,
          const void *result, int64_t *study_id, ScError *err)
{
  return sc_qk_store (store, model, params_json, result, study_id, err);
}

static ScStatus
qk_load (ScStore *store, const ScModelInfo *info, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
         const char *params_json, const void *params, void **out, int64_t *study_id,
         ScError *err)
{
  ScQkResult *r = NULL;
  ScStatus st = sc_qk_load (store, info, sha256, params_json, params, &r, study_id, err);

  *out = r;
  return st;
}

static int
qk_n_tokens (const void *result)
{
  return ((const ScQkResult *) result)->n_tokens;
}

/* The study measures a score, not a token: the clean top-1 is its only token. */
static void
qk_clean (const void *result, ScStudyClean *out)
{
  const ScQkResult *r = result;

  out->target = r->top1_clean;
  out->top1_clean = r->top1_clean;
  out->logp_clean = NAN;
  out->loss_clean = NAN;
}

static void
qk_free (void *result)
{
  sc_qk_result_free (result);
}

static const ScQkParams QK_DEFAULT = { .layer = -1, .head = 0, .query = -1, .key = 0 };

static const ScStudyOption QK_OPTIONS[] = {
  { "layer", SC_STUDY_OPTION_INT, offsetof (ScQkParams, layer), -1, 1 << 16, NULL,
    "the head's layer (default -1: the middle layer)" },
  { "head", SC_STUDY_OPTION_INT, offsetof (ScQkParams, head), 0, 1 << 16, NULL,
    "the query head (default 0)" },
  { "query", SC_STUDY_OPTION_INT, offsetof (ScQkParams, query), -1, 1 << 20, NULL,
    "the query position i (default -1: the last)" },
  { "key", SC_STUDY_OPTION_INT, offsetof (ScQkParams, key), 0, 1 << 20, NULL,
    "the key position j <= i (default 0)" },
  { NULL },
};

const ScStudyKind sc_study_kind_qk = {
  .id = SC_QK_STUDY_KIND,
  .name = "qk",
  .title = "QK attribution (a head's score split by upstream components)",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_SESSION,
  .min_tokens = 1,
  .params_size = sizeof (ScQkParams),
  .params_default = &QK_DEFAULT,
  .options = QK_OPTIONS,
  .params_json = qk_params_json,
  .run = qk_run,
  .store = qk_store,
  .load = qk_load,
  .result_n_tokens = qk_n_tokens,
  .result_clean = qk_clean,
  .result_free = qk_free,
};
