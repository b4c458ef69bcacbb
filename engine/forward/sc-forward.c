/* sc-forward.c — the llama-family forward pass over ScBackend (see sc-forward.h).
 *
 * Per layer l, for n tokens (shapes as (rows, cols)):
 *   h     (n, E)  = rmsnorm(x) * attn_norm
 *   q|k|v (n, Q+2KV) = h [Wq;Wk;Wv]^T  (one fused product)    Q = H*d, KV = H_kv*d
 *   q, k          = rope(q), rope(k)                           adjacent pairs (GGUF)
 *   P     (H, n, n) = softmax(q k^T * scale) causal, masked      -> observer
 *   o     (n, Q)  = head_scale * P v                            per head
 *   x    += o Wo^T
 *   h     (n, E)  = rmsnorm(x) * ffn_norm
 *   g|u   (n, 2F) = h [Wg;Wu]^T  (one fused product)
 *   x    += (silu(g) * u) Wd^T                                  (n, F) intermediate
 * then logits = (rmsnorm(x) * output_norm) Wout^T for the last row or all rows.
 *
 * What it is not: weights loading (sc-model), the ops themselves (backends).
 */
#include "forward/sc-forward.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A layer's weights as the backend sees them: Q, K, V and gate, up fused (sc-model.h). */
typedef struct {
  const float *attn_norm, *w_qkv, *wo, *ffn_norm, *w_gate_up, *w_down;
} LayerW;

struct ScSession {
  const ScModel *model;
  ScBackend *b;
  LayerW *lw;
  const float *token_embd, *output_norm, *output;

  int cap;       /* token capacity of the buffers below */
  float *x;      /* (cap, E) residual stream */
  float *h;      /* (cap, E) normalised input of a sublayer */
  float *qkv;    /* (cap, Q + 2 KV) fused projection output */
  float *q;      /* (cap, Q) */
  float *kc;     /* (L, cap, KV) keys of every layer: the KV cache when kept */
  float *vc;     /* (L, cap, KV) values */
  float *o;      /* (cap, Q) attention output */
  float *gu;     /* (cap, 2F) fused gate|up projection output */
  float *act;    /* (cap, F) silu(gate) * up */
  float *probs;  /* (H, cap, cap) on the backend; packed as (H, n_q, n_k) for a run */
  float *probs_host; /* host copy for device backends; == probs on CPU */
  float *logits_dev; /* (cap, V) */

  /* Prefix reuse: residual entering each layer 0..L (L = final), for kept_ids. */
  float *resid;      /* (L + 1, cap, E), NULL until first kept run */
  int32_t *kept_ids; /* (kept_n) */
  int kept_n;

  /* KV cache: kc/vc rows 0..kv_n hold the keys and values of kv_ids. */
  int32_t *kv_ids;
  int kv_n;
};

static void
free_buffers (ScSession *s)
{
  ScBackend *b = s->b;
  float **bufs[] = { &s->x, &s->h, &s->qkv, &s->q, &s->kc, &s->vc, &s->o, &s->gu, &s->act,
                     &s->probs, &s->logits_dev, &s->resid };
  size_t i;

  if (s->probs_host != s->probs)
    free (s->probs_host);
  s->probs_host = NULL;
  for (i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
    if (*bufs[i] != NULL)
      {
        b->ops->free (b, *bufs[i]);
        *bufs[i] = NULL;
      }
  free (s->kept_ids);
  s->kept_ids = NULL;
  s->kept_n = 0;
  free (s->kv_ids);
  s->kv_ids = NULL;
  s->kv_n = 0;
  s->cap = 0;
}

/* Grows the buffers to hold @n tokens, keeping the KV cache's contents. A first
 * allocation is exact; later growth (generation adds a token at a time) rounds up to a
 * multiple of 64 so a long generation reallocates rarely. */
static ScStatus
ensure_capacity (ScSession *s, int n, bool need_resid, ScError *err)
{
  const ScModelInfo *in = sc_model_info (s->model);
  const size_t E = in->n_embd, Q = (size_t) in->n_heads * in->head_dim,
               KV = (size_t) in->n_kv_heads * in->head_dim, F = in->n_ff, V = in->n_vocab,
               L = in->n_layers;
  ScBackend *b = s->b;
  float *old_kc = NULL, *old_vc = NULL;
  int32_t *kv_ids = NULL;
  int kv_n = 0, old_cap = s->cap;
  size_t cap;

  if (n <= s->cap && (!need_resid || s->resid != NULL))
    return SC_OK;
  if (n > s->cap)
    {
      cap = s->cap == 0 ? (size_t) n : ((size_t) n + 63) / 64 * 64;
      if (cap > in->n_ctx_train)
        cap = (size_t) n;
      /* keep the cache across the reallocation */
      old_kc = s->kc;
      old_vc = s->vc;
      kv_ids = s->kv_ids;
      kv_n = s->kv_n;
      s->kc = s->vc = NULL;
      s->kv_ids = NULL;
      free_buffers (s);
      s->x = b->ops->alloc (b, cap * E);
      s->h = b->ops->alloc (b, cap * E);
      s->qkv = b->ops->alloc (b, cap * (Q + 2 * KV));
      s->q = b->ops->alloc (b, cap * Q);
      s->kc = b->ops->alloc (b, L * cap * KV);
      s->vc = b->ops->alloc (b, L * cap * KV);
      s->o = b->ops->alloc (b, cap * Q);
      s->gu = b->ops->alloc (b, cap * 2 * F);
      s->act = b->ops->alloc (b, cap * F);
      s->probs = b->ops->alloc (b, in->n_heads * cap * cap);
      s->logits_dev = b->ops->alloc (b, cap * V);
      if (strncmp (b->ops->name, "cpu", 3) == 0)
        s->probs_host = s->probs;
      else
        s->probs_host = malloc (in->n_heads * cap * cap * sizeof (float));
      if (!s->x || !s->h || !s->qkv || !s->q || !s->kc || !s->vc || !s->o || !s->gu || !s->act
          || !s->probs || !s->logits_dev || !s->probs_host)
        {
          free_buffers (s);
          kv_n = 0;
        }
      else if (kv_n > 0)
        {
          size_t l;
          for (l = 0; l < L; l++)
            {
              b->ops->copy (b, s->kc + l * cap * KV, old_kc + l * old_cap * KV, (size_t) kv_n * KV);
              b->ops->copy (b, s->vc + l * cap * KV, old_vc + l * old_cap * KV, (size_t) kv_n * KV);
            }
          s->kv_ids = kv_ids;
          s->kv_n = kv_n;
          kv_ids = NULL;
        }
      if (old_kc != NULL)
        b->ops->free (b, old_kc);
      if (old_vc != NULL)
        b->ops->free (b, old_vc);
      free (kv_ids);
      if (s->x == NULL)
        return sc_error_set (err, SC_ERR_NOMEM, "out of memory for activations of %d tokens", n);
      s->cap = (int) cap;
    }
  if (need_resid && s->resid == NULL)
    {
      s->resid = b->ops->alloc (b, (in->n_layers + 1) * (size_t) s->cap * E);
      if (s->resid == NULL)
        return sc_error_set (err, SC_ERR_NOMEM, "out of memory for per-layer residuals");
    }
  return SC_OK;
}

ScStatus
sc_session_new (const ScModel *model, ScBackend *b, ScSession **out, ScError *err)
{
  const ScModelInfo *in = sc_model_info (model);
  const ScWeights *w = sc_model_weights (model);
  const size_t E = in->n_embd, Q = (size_t) in->n_heads * in->head_dim,
               KV = (size_t) in->n_kv_heads * in->head_dim, F = in->n_ff, V = in->n_vocab;
  ScSession *s;
  uint32_t l;

  *out = NULL;
  s = calloc (1, sizeof *s);
  if (s == NULL || (s->lw = calloc (in->n_layers, sizeof *s->lw)) == NULL)
    {
      free (s);
      return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
    }
  s->model = model;
  s->b = b;

#define W(dst, src, n)                                                                        \
  do                                                                                          \
    {                                                                                         \
      if ((dst = b->ops->weight (b, src, n, err)) == NULL)                                    \
        goto fail;                                                                            \
    }                                                                                         \
  while (0)
  W (s->token_embd, w->token_embd, V * E);
  W (s->output_norm, w->output_norm, E);
  if (in->tied_output)
    s->output = s->token_embd;
  else
    W (s->output, w->output, V * E);
  for (l = 0; l < in->n_layers; l++)
    {
      const ScLayerWeights *lw = &w->layers[l];
      W (s->lw[l].attn_norm, lw->attn_norm, E);
      W (s->lw[l].w_qkv, lw->wq, (Q + 2 * KV) * E); /* wq, wk, wv back to back */
      W (s->lw[l].wo, lw->wo, E * Q);
      W (s->lw[l].ffn_norm, lw->ffn_norm, E);
      W (s->lw[l].w_gate_up, lw->w_gate, 2 * F * E); /* w_gate, w_up back to back */
      W (s->lw[l].w_down, lw->w_down, E * F);
    }
#undef W
  *out = s;
  return SC_OK;

fail:
  free (s->lw);
  free (s);
  return err != NULL ? err->status : SC_ERR_BACKEND;
}

void
sc_session_free (ScSession *s)
{
  if (s == NULL)
    return;
  free_buffers (s);
  free (s->lw);
  free (s);
}

ScBackend *
sc_session_backend (const ScSession *s)
{
  return s->b;
}

int
sc_intervention_first_layer (const ScIntervention *iv, const ScModelInfo *info)
{
  int first = (int) info->n_layers;
  int l, h, e;

  if (iv == NULL)
    return first;
  if (iv->token_mask != NULL)
    return 0;
  for (l = 0; l < (int) info->n_layers && first == (int) info->n_layers; l++)
    for (h = 0; h < (int) info->n_heads; h++)
      {
        size_t i = (size_t) l * info->n_heads + h;
        if ((iv->head_scale != NULL && iv->head_scale[i] != 1.0f)
            || (iv->head_mean_on != NULL && iv->head_mean_on[i]))
          {
            first = l;
            break;
          }
      }
  for (e = 0; e < iv->n_edits; e++)
    if (iv->edits[e].layer < first)
      first = iv->edits[e].layer;
  return first;
}

/* Copies @n ids into *@dst (reallocated). */
static bool
remember_ids (int32_t **dst, const int32_t *ids, int n, ScError *err)
{
  int32_t *p = realloc (*dst, (size_t) n * sizeof *p);

  if (p == NULL)
    {
      sc_error_set (err, SC_ERR_NOMEM, "out of memory");
      return false;
    }
  memcpy (p, ids, (size_t) n * sizeof *p);
  *dst = p;
  return true;
}

/* Checks the arguments of sc_forward() and whether prefix or cache reuse is valid. */
static ScStatus
check_call (ScSession *s, const int32_t *ids, int n, const ScForwardOptions *opt, ScError *err)
{
  const ScModelInfo *in = sc_model_info (s->model);
  const ScIntervention *iv = opt->intervention;
  int i;

  if (ids == NULL || n <= 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "empty input: there are no tokens to run");
  if ((uint32_t) n > in->n_ctx_train)
    return sc_error_set (err, SC_ERR_RANGE, "%d tokens is longer than the model's context of %u",
                         n, in->n_ctx_train);
  for (i = 0; i < n; i++)
    if (ids[i] < 0 || (uint32_t) ids[i] >= in->n_vocab)
      return sc_error_set (err, SC_ERR_INVALID_ARG, "token %d at position %d is outside the "
                           "vocabulary of %u", ids[i], i, in->n_vocab);
  if (iv != NULL && (iv->head_mean != NULL || iv->head_mean_on != NULL || iv->n_edits > 0))
    return sc_error_set (err, SC_ERR_UNSUPPORTED,
                         "mean-ablation and attention edits are not implemented yet; head "
                         "scaling and token masking are");
  if (opt->start_layer < 0 || opt->start_layer > (int) in->n_layers)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "start_layer %d is outside 0..%u",
                         opt->start_layer, in->n_layers);
  if (opt->n_past < 0 || opt->n_past >= n)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "n_past %d must be in 0..%d", opt->n_past,
                         n - 1);
  if (opt->n_past > 0)
    {
      if (opt->start_layer > 0 || opt->keep_residuals)
        return sc_error_set (err, SC_ERR_INVALID_ARG,
                             "n_past cannot be combined with start_layer or keep_residuals");
      if (s->kv_n < opt->n_past
          || memcmp (s->kv_ids, ids, (size_t) opt->n_past * sizeof *ids) != 0)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "n_past %d needs a KV cache kept by a "
                             "previous run on the same first %d tokens", opt->n_past,
                             opt->n_past);
    }
  if (opt->start_layer > 0)
    {
      if (opt->keep_residuals)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "keep_residuals with start_layer %d would "
                             "overwrite the kept prefix with this run's values",
                             opt->start_layer);
      if (s->resid == NULL || s->kept_n != n || memcmp (s->kept_ids, ids, n * sizeof *ids) != 0)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "start_layer %d needs residuals kept by a "
                             "previous run on the same tokens", opt->start_layer);
      if (sc_intervention_first_layer (iv, in) < opt->start_layer)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "the intervention changes layer %d, below "
                             "start_layer %d", sc_intervention_first_layer (iv, in),
                             opt->start_layer);
    }
  return SC_OK;
}

/* Hands layer @l's heads, (n_q, n_k) each, to the observer. @probs is where the attention
 * op wrote them: the session's buffer, or the observer's own layer buffer (host memory). */
static ScStatus
observe_layer (ScSession *s, const ScObserver *obs, int l, const float *probs, int n_q, int n_k,
               ScError *err)
{
  const ScModelInfo *in = sc_model_info (s->model);
  const size_t per_head = (size_t) n_q * n_k;
  const float *host = probs;
  ScBackend *b = s->b;
  bool downloaded = false;
  int h;

  for (h = 0; h < (int) in->n_heads; h++)
    if (obs->wants == NULL || obs->wants (obs->user, l, h))
      {
        ScStatus st;
        if (!downloaded && probs == s->probs && s->probs_host != s->probs)
          {
            if ((st = b->ops->download (b, s->probs_host, s->probs, in->n_heads * per_head, err))
                != SC_OK)
              return st;
            host = s->probs_host;
          }
        downloaded = true;
        if (!obs->observe (obs->user, l, h, host + h * per_head, n_q, n_k))
          return sc_error_set (err, SC_ERR_CANCELLED, "cancelled at layer %d head %d", l, h);
      }
  return SC_OK;
}

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A projection, clocked when @stats is given. */
static ScStatus
matmul (ScBackend *b, ScForwardStats *stats, float *y, const float *x, const float *w, int n,
        int in, int out, bool accumulate)
{
  double t0 = stats != NULL ? now_s () : 0.0;
  ScStatus st = b->ops->matmul (b, y, x, w, n, in, out, accumulate);

  if (stats != NULL)
    {
      stats->matmul_s += now_s () - t0;
      stats->matmul_flops += 2.0 * n * in * out;
    }
  return st;
}

#define TRY(expr)                                                                             \
  do                                                                                          \
    {                                                                                         \
      ScStatus st_ = (expr);                                                                  \
      if (st_ != SC_OK)                                                                       \
        {                                                                                     \
          if (err != NULL && err->status != st_)                                              \
            sc_error_set (err, st_, "backend %s failed (%s)", b->ops->name,                   \
                          sc_status_name (st_));                                              \
          return st_;                                                                         \
        }                                                                                     \
    }                                                                                         \
  while (0)

ScStatus
sc_forward (ScSession *s, const int32_t *ids, int n, const ScForwardOptions *options,
            float *logits, ScError *err)
{
  static const ScForwardOptions defaults = { 0 };
  const ScForwardOptions *opt = options != NULL ? options : &defaults;
  const ScModelInfo *in = sc_model_info (s->model);
  const ScIntervention *iv = opt->intervention;
  const int E = (int) in->n_embd, H = (int) in->n_heads, Hkv = (int) in->n_kv_heads,
            d = (int) in->head_dim, Q = H * d, KV = Hkv * d, F = (int) in->n_ff,
            V = (int) in->n_vocab, L = (int) in->n_layers;
  const int past = opt->n_past, nq = n - past; /* rows computed by this call */
  const size_t nE = (size_t) nq * E;
  ScBackend *b = s->b;
  const double t_start = opt->stats != NULL ? now_s () : 0.0;
  double t_attn;
  float *probs;
  ScStatus st;
  int l, first_row, n_out;

  if (err != NULL)
    sc_error_clear (err);
  if ((st = check_call (s, ids, n, opt, err)) != SC_OK)
    return st;
  if ((st = ensure_capacity (s, n, opt->keep_residuals || opt->start_layer > 0, err)) != SC_OK)
    return st;
  /* This call rewrites cache rows past..n; what was cached beyond `past` is gone. */
  if (s->kv_n > past)
    s->kv_n = past;

  /* The residual stream entering layer start_layer, for the nq new rows. */
  if (opt->start_layer > 0)
    TRY (b->ops->copy (b, s->x, s->resid + (size_t) opt->start_layer * s->cap * E, nE));
  else
    TRY (b->ops->get_rows (b, s->x, s->token_embd, ids + past, nq, E));

  for (l = opt->start_layer; l < L; l++)
    {
      const LayerW *w = &s->lw[l];
      const float *hs = iv != NULL && iv->head_scale != NULL ? iv->head_scale + (size_t) l * H
                                                             : NULL;
      float *kl = s->kc + (size_t) l * s->cap * KV, *vl = s->vc + (size_t) l * s->cap * KV;

      if (opt->keep_residuals)
        TRY (b->ops->copy (b, s->resid + (size_t) l * s->cap * E, s->x, nE));

      /* attention block; new keys and values go to cache rows past..n */
      TRY (b->ops->rmsnorm (b, s->h, s->x, w->attn_norm, nq, E, in->norm_eps));
      /* qkv (nq, Q + 2KV) = h W_qkv^T, then split: q, and K, V into the cache */
      TRY (matmul (b, opt->stats, s->qkv, s->h, w->w_qkv, nq, E, Q + 2 * KV, false));
      TRY (b->ops->copy_2d (b, s->q, Q, s->qkv, Q + 2 * KV, nq, Q));
      TRY (b->ops->copy_2d (b, kl + (size_t) past * KV, KV, s->qkv + Q, Q + 2 * KV, nq, KV));
      TRY (b->ops->copy_2d (b, vl + (size_t) past * KV, KV, s->qkv + Q + KV, Q + 2 * KV, nq, KV));
      TRY (b->ops->rope (b, s->q, nq, H, d, (int) in->n_rot, past, in->rope_base));
      TRY (b->ops->rope (b, kl + (size_t) past * KV, nq, Hkv, d, (int) in->n_rot, past,
                         in->rope_base));
      /* the observer may take the probabilities straight into its own memory (CPU only) */
      probs = s->probs;
      if (opt->observer != NULL && opt->observer->layer_buffer != NULL
          && s->probs_host == s->probs)
        {
          float *mine = opt->observer->layer_buffer (opt->observer->user, l, nq, n);
          if (mine != NULL)
            probs = mine;
        }
      t_attn = opt->stats != NULL ? now_s () : 0.0;
      TRY (b->ops->attention (b, s->o, probs, s->q, kl, vl, nq, n, H, Hkv, d, in->attn_scale,
                              iv != NULL ? iv->token_mask : NULL, hs));
      if (opt->stats != NULL)
        opt->stats->attention_s += now_s () - t_attn;
      if (opt->observer != NULL
          && (st = observe_layer (s, opt->observer, l, probs, nq, n, err)) != SC_OK)
        return st;
      TRY (matmul (b, opt->stats, s->x, s->o, w->wo, nq, Q, E, true));

      /* feed-forward block */
      TRY (b->ops->rmsnorm (b, s->h, s->x, w->ffn_norm, nq, E, in->norm_eps));
      TRY (matmul (b, opt->stats, s->gu, s->h, w->w_gate_up, nq, E, 2 * F, false));
      TRY (b->ops->swiglu (b, s->act, s->gu, nq, F));
      TRY (matmul (b, opt->stats, s->x, s->act, w->w_down, nq, F, E, true));

      if (opt->progress != NULL && !opt->progress (opt->progress_user, l + 1, L))
        return sc_error_set (err, SC_ERR_CANCELLED, "cancelled after layer %d", l);
    }

  if (opt->keep_residuals)
    {
      TRY (b->ops->copy (b, s->resid + (size_t) L * s->cap * E, s->x, nE));
      if (!remember_ids (&s->kept_ids, ids, n, err))
        return SC_ERR_NOMEM;
      s->kept_n = n;
    }
  /* The cache now holds keys and values for ids[0..n) — valid for a later n_past only
   * when this run computed every layer (a start_layer run leaves lower layers stale). */
  if (opt->keep_kv && opt->start_layer == 0)
    {
      if (!remember_ids (&s->kv_ids, ids, n, err))
        return SC_ERR_NOMEM;
      s->kv_n = n;
    }
  else
    s->kv_n = 0;

  /* output head: only the rows whose logits are wanted */
  first_row = opt->all_logits ? 0 : nq - 1;
  n_out = nq - first_row;
  TRY (b->ops->rmsnorm (b, s->h, s->x + (size_t) first_row * E, s->output_norm, n_out, E,
                        in->norm_eps));
  TRY (matmul (b, opt->stats, s->logits_dev, s->h, s->output, n_out, E, V, false));
  if (logits != NULL)
    TRY (b->ops->download (b, logits, s->logits_dev, (size_t) n_out * V, err));
  if (opt->stats != NULL)
    opt->stats->total_s += now_s () - t_start;
  return SC_OK;
}
