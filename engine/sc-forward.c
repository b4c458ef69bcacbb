/* sc-forward.c — the llama-family forward pass over ScBackend (see sc-forward.h).
 *
 * Per layer l, for n tokens (shapes as (rows, cols)):
 *   h     (n, E)  = rmsnorm(x) * attn_norm
 *   q     (n, Q)  = h Wq^T;  k, v (n, KV) = h Wk^T, h Wv^T      Q = H*d, KV = H_kv*d
 *   q, k          = rope(q), rope(k)                           adjacent pairs (GGUF)
 *   P     (H, n, n) = softmax(q k^T * scale) causal, masked      -> observer
 *   o     (n, Q)  = head_scale * P v                            per head
 *   x    += o Wo^T
 *   h     (n, E)  = rmsnorm(x) * ffn_norm
 *   x    += (silu(h Wg^T) * (h Wu^T)) Wd^T                      (n, F) intermediate
 * then logits = (rmsnorm(x) * output_norm) Wout^T for the last row or all rows.
 *
 * What it is not: weights loading (sc-model), the ops themselves (backends).
 */
#include "sc-forward.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  const float *attn_norm, *wq, *wk, *wv, *wo, *ffn_norm, *w_gate, *w_up, *w_down;
} LayerW;

struct ScSession {
  const ScModel *model;
  ScBackend *b;
  LayerW *lw;
  const float *token_embd, *output_norm, *output;

  int cap;       /* token capacity of the buffers below */
  float *x;      /* (cap, E) residual stream */
  float *h;      /* (cap, E) normalised input of a sublayer */
  float *q;      /* (cap, Q) */
  float *k;      /* (cap, KV) */
  float *v;      /* (cap, KV) */
  float *o;      /* (cap, Q) attention output */
  float *gate;   /* (cap, F) */
  float *up;     /* (cap, F) */
  float *probs;  /* (H, cap, cap) on the backend; packed as (H, n, n) for a run of n */
  float *probs_host; /* (H, cap, cap) host copy for device backends; == probs on CPU */
  float *logits_dev; /* (cap, V) */

  /* Prefix reuse: residual entering each layer 0..L (L = final), for kept_ids. */
  float *resid;      /* (L + 1, cap, E), NULL until first kept run */
  int32_t *kept_ids; /* (kept_n) */
  int kept_n;
};

static void
free_buffers (ScSession *s)
{
  ScBackend *b = s->b;
  float **bufs[] = { &s->x, &s->h, &s->q, &s->k, &s->v, &s->o, &s->gate, &s->up, &s->probs,
                     &s->logits_dev, &s->resid };
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
  s->cap = 0;
}

static ScStatus
ensure_capacity (ScSession *s, int n, bool need_resid, ScError *err)
{
  const ScModelInfo *in = sc_model_info (s->model);
  const size_t E = in->n_embd, Q = (size_t) in->n_heads * in->head_dim,
               KV = (size_t) in->n_kv_heads * in->head_dim, F = in->n_ff, V = in->n_vocab;
  ScBackend *b = s->b;
  size_t cap;

  if (n <= s->cap && (!need_resid || s->resid != NULL))
    return SC_OK;
  if (n > s->cap)
    {
      free_buffers (s);
      cap = (size_t) n;
      s->x = b->ops->alloc (b, cap * E);
      s->h = b->ops->alloc (b, cap * E);
      s->q = b->ops->alloc (b, cap * Q);
      s->k = b->ops->alloc (b, cap * KV);
      s->v = b->ops->alloc (b, cap * KV);
      s->o = b->ops->alloc (b, cap * Q);
      s->gate = b->ops->alloc (b, cap * F);
      s->up = b->ops->alloc (b, cap * F);
      s->probs = b->ops->alloc (b, in->n_heads * cap * cap);
      s->logits_dev = b->ops->alloc (b, cap * V);
      if (strncmp (b->ops->name, "cpu", 3) == 0)
        s->probs_host = s->probs;
      else
        s->probs_host = malloc (in->n_heads * cap * cap * sizeof (float));
      if (!s->x || !s->h || !s->q || !s->k || !s->v || !s->o || !s->gate || !s->up || !s->probs
          || !s->logits_dev || !s->probs_host)
        {
          free_buffers (s);
          return sc_error_set (err, SC_ERR_NOMEM, "out of memory for activations of %d tokens", n);
        }
      s->cap = n;
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
      W (s->lw[l].wq, lw->wq, Q * E);
      W (s->lw[l].wk, lw->wk, KV * E);
      W (s->lw[l].wv, lw->wv, KV * E);
      W (s->lw[l].wo, lw->wo, E * Q);
      W (s->lw[l].ffn_norm, lw->ffn_norm, E);
      W (s->lw[l].w_gate, lw->w_gate, F * E);
      W (s->lw[l].w_up, lw->w_up, F * E);
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

/* Checks the arguments of sc_forward() and whether prefix reuse is valid. */
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

/* Hands layer @l's heads to the observer. */
static ScStatus
observe_layer (ScSession *s, const ScObserver *obs, int l, int n, ScError *err)
{
  const ScModelInfo *in = sc_model_info (s->model);
  ScBackend *b = s->b;
  int h;
  bool any = false;

  for (h = 0; h < (int) in->n_heads; h++)
    if (obs->wants == NULL || obs->wants (obs->user, l, h))
      {
        float *p = s->probs_host + (size_t) h * n * n;
        ScStatus st;
        if (!any && s->probs_host != s->probs)
          {
            if ((st = b->ops->download (b, s->probs_host, s->probs, (size_t) in->n_heads * n * n,
                                        err)) != SC_OK)
              return st;
          }
        any = true;
        if (!obs->observe (obs->user, l, h, p, n, n))
          return sc_error_set (err, SC_ERR_CANCELLED, "cancelled at layer %d head %d", l, h);
      }
  return SC_OK;
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
  const size_t nE = (size_t) n * E;
  ScBackend *b = s->b;
  ScStatus st;
  int l, first_row, n_out;

  if (err != NULL)
    sc_error_clear (err);
  if ((st = check_call (s, ids, n, opt, err)) != SC_OK)
    return st;
  if ((st = ensure_capacity (s, n, opt->keep_residuals || opt->start_layer > 0, err)) != SC_OK)
    return st;

  /* The residual stream entering layer start_layer. */
  if (opt->start_layer > 0)
    TRY (b->ops->copy (b, s->x, s->resid + (size_t) opt->start_layer * s->cap * E, nE));
  else
    TRY (b->ops->get_rows (b, s->x, s->token_embd, ids, n, E));

  for (l = opt->start_layer; l < L; l++)
    {
      const LayerW *w = &s->lw[l];
      const float *hs = iv != NULL && iv->head_scale != NULL ? iv->head_scale + (size_t) l * H
                                                             : NULL;

      if (opt->keep_residuals)
        TRY (b->ops->copy (b, s->resid + (size_t) l * s->cap * E, s->x, nE));

      /* attention block */
      TRY (b->ops->rmsnorm (b, s->h, s->x, w->attn_norm, n, E, in->norm_eps));
      TRY (b->ops->matmul (b, s->q, s->h, w->wq, n, E, Q, false));
      TRY (b->ops->matmul (b, s->k, s->h, w->wk, n, E, KV, false));
      TRY (b->ops->matmul (b, s->v, s->h, w->wv, n, E, KV, false));
      TRY (b->ops->rope (b, s->q, n, H, d, (int) in->n_rot, 0, in->rope_base));
      TRY (b->ops->rope (b, s->k, n, Hkv, d, (int) in->n_rot, 0, in->rope_base));
      TRY (b->ops->attention (b, s->o, s->probs, s->q, s->k, s->v, n, H, Hkv, d, in->attn_scale,
                              iv != NULL ? iv->token_mask : NULL, hs));
      if (opt->observer != NULL && (st = observe_layer (s, opt->observer, l, n, err)) != SC_OK)
        return st;
      TRY (b->ops->matmul (b, s->x, s->o, w->wo, n, Q, E, true));

      /* feed-forward block */
      TRY (b->ops->rmsnorm (b, s->h, s->x, w->ffn_norm, n, E, in->norm_eps));
      TRY (b->ops->matmul (b, s->gate, s->h, w->w_gate, n, E, F, false));
      TRY (b->ops->matmul (b, s->up, s->h, w->w_up, n, E, F, false));
      TRY (b->ops->swiglu (b, s->gate, s->gate, s->up, (size_t) n * F));
      TRY (b->ops->matmul (b, s->x, s->gate, w->w_down, n, F, E, true));

      if (opt->progress != NULL && !opt->progress (opt->progress_user, l + 1, L))
        return sc_error_set (err, SC_ERR_CANCELLED, "cancelled after layer %d", l);
    }

  if (opt->keep_residuals)
    {
      TRY (b->ops->copy (b, s->resid + (size_t) L * s->cap * E, s->x, nE));
      if (s->kept_n != n || s->kept_ids == NULL)
        {
          int32_t *kept = realloc (s->kept_ids, (size_t) n * sizeof *kept);
          if (kept == NULL)
            return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
          s->kept_ids = kept;
        }
      memcpy (s->kept_ids, ids, (size_t) n * sizeof *ids);
      s->kept_n = n;
    }

  /* output head: only the rows whose logits are wanted */
  first_row = opt->all_logits ? 0 : n - 1;
  n_out = n - first_row;
  TRY (b->ops->rmsnorm (b, s->h, s->x + (size_t) first_row * E, s->output_norm, n_out, E,
                        in->norm_eps));
  TRY (b->ops->matmul (b, s->logits_dev, s->h, s->output, n_out, E, V, false));
  if (logits != NULL)
    TRY (b->ops->download (b, logits, s->logits_dev, (size_t) n_out * V, err));
  return SC_OK;
}
