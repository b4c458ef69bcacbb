/* sc-forward.c — the forward pass over ScBackend, for any architecture (see sc-forward.h).
 *
 * For n tokens of which the first n_past are in the KV cache (nq = n - n_past new rows):
 *   x     (nq, E) = token_embd[ids]                 (or the residual kept before start_layer)
 *   for each layer l >= start_layer:
 *     x          = arch->layer(x)                   the architecture's block (model/sc-arch-*.c:
 *                                                   llama's math, with shapes, is in
 *                                                   sc-arch-llama.c); it writes the layer's
 *                                                   keys/values to cache rows n_past..n and
 *                                                   P (H, nq, n) where this file says
 *     observer   <- P                               per head, after the layer returns
 *   logits (rows, V) = (rmsnorm(x) * output_norm) Wout^T for the last row or all rows.
 *
 * This file owns what every architecture shares: the session and its buffers, the KV
 * cache, prefix reuse (residuals kept per layer), interventions (head scales and masked
 * tokens handed to the layer), the observer and zero-copy capture, progress and timing.
 *
 * What it is not: weights loading (sc-model), a layer's math (the architectures), the ops
 * themselves (backends).
 */
#include "forward/sc-forward.h"

#include "backend/sc-backend-impl.h"
#include "model/sc-arch.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ScSession {
  const ScModel *model;
  ScBackend *b;
  const ScArchDesc *arch;
  void *layers; /* (L) views of arch->layer_size bytes: each layer's weights on b */
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
  float *probs_host; /* host copy for device backends; == probs on host-memory ones */
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
      s->x = b->ops->alloc (b, cap * E, err);
      s->h = b->ops->alloc (b, cap * E, err);
      s->qkv = b->ops->alloc (b, cap * (Q + 2 * KV), err);
      s->q = b->ops->alloc (b, cap * Q, err);
      s->kc = b->ops->alloc (b, L * cap * KV, err);
      s->vc = b->ops->alloc (b, L * cap * KV, err);
      s->o = b->ops->alloc (b, cap * Q, err);
      s->gu = b->ops->alloc (b, cap * 2 * F, err);
      s->act = b->ops->alloc (b, cap * F, err);
      s->probs = b->ops->alloc (b, in->n_heads * cap * cap, err);
      s->logits_dev = b->ops->alloc (b, cap * V, err);
      if (sc_backend_supports (b, SC_BACKEND_CAP_HOST_MEMORY))
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
              b->ops->copy (b, s->kc + l * cap * KV, old_kc + l * old_cap * KV, (size_t) kv_n * KV,
                            NULL);
              b->ops->copy (b, s->vc + l * cap * KV, old_vc + l * old_cap * KV, (size_t) kv_n * KV,
                            NULL);
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
        {
          if (err != NULL && err->status != SC_OK) /* the backend said what ran out */
            return sc_error_prefix (err, "activations of %d tokens", n);
          return sc_error_set (err, SC_ERR_NOMEM, "out of memory for activations of %d tokens", n);
        }
      s->cap = (int) cap;
    }
  if (need_resid && s->resid == NULL)
    {
      s->resid = b->ops->alloc (b, (in->n_layers + 1) * (size_t) s->cap * E, err);
      if (s->resid == NULL)
        {
          if (err != NULL && err->status != SC_OK)
            return sc_error_prefix (err, "per-layer residuals");
          return sc_error_set (err, SC_ERR_NOMEM, "out of memory for per-layer residuals");
        }
    }
  return SC_OK;
}

ScStatus
sc_session_new (const ScModel *model, ScBackend *b, ScSession **out, ScError *err)
{
  const ScModelInfo *in = sc_model_info (model);
  const ScWeights *w = sc_model_weights (model);
  const ScArchDesc *arch = sc_arch_for (in->arch);
  const size_t E = in->n_embd, V = in->n_vocab;
  ScSession *s;
  ScStatus st;
  uint32_t l;

  *out = NULL;
  if (arch == NULL)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "architecture '%s' has no layer function",
                         in->arch_name);
  s = calloc (1, sizeof *s);
  if (s == NULL || (s->layers = calloc (in->n_layers, arch->layer_size)) == NULL)
    {
      free (s);
      return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
    }
  s->model = model;
  s->b = b;
  s->arch = arch;

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
#undef W
  for (l = 0; l < in->n_layers; l++)
    if ((st = arch->bind_layer (b, in, &w->layers[l], (char *) s->layers + l * arch->layer_size,
                                err)) != SC_OK)
      {
        sc_error_prefix (err, "layer %u", l);
        goto fail;
      }
  *out = s;
  return SC_OK;

fail:
  free (s->layers);
  free (s);
  return err != NULL && err->status != SC_OK ? err->status : SC_ERR_BACKEND;
}

void
sc_session_free (ScSession *s)
{
  if (s == NULL)
    return;
  free_buffers (s);
  free (s->layers);
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

/* The status of a failed op, with a message even when the backend gave none. */
static ScStatus
op_failed (ScBackend *b, ScStatus st, ScError *err)
{
  if (err != NULL && err->status != st)
    sc_error_set (err, st, "backend %s failed (%s)", b->ops->name, sc_status_name (st));
  return st;
}

#define TRY(expr)                                                                             \
  do                                                                                          \
    {                                                                                         \
      ScStatus st_ = (expr);                                                                  \
      if (st_ != SC_OK)                                                                       \
        return op_failed (b, st_, err);                                                       \
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
  const int E = (int) in->n_embd, H = (int) in->n_heads,
            KV = (int) in->n_kv_heads * (int) in->head_dim, V = (int) in->n_vocab,
            L = (int) in->n_layers;
  const int past = opt->n_past, nq = n - past; /* rows computed by this call */
  const size_t nE = (size_t) nq * E;
  ScBackend *b = s->b;
  const double t_start = opt->stats != NULL ? now_s () : 0.0;
  ScLayerCtx c;
  ScStatus st;
  int l, first_row, n_out;

  if (err != NULL)
    sc_error_clear (err);
  if ((st = check_call (s, ids, n, opt, err)) != SC_OK)
    return st;
  if ((st = ensure_capacity (s, n, opt->keep_residuals || opt->start_layer > 0, err)) != SC_OK)
    return st;
  /* what every layer shares (the buffers as ensure_capacity left them); the loop sets the
   * per-layer fields */
  c = (ScLayerCtx) {
    .b = b, .info = in, .n_past = past, .n_q = nq, .n_k = n,
    .x = s->x, .h = s->h, .qkv = s->qkv, .q = s->q, .o = s->o, .gu = s->gu, .act = s->act,
    .key_mask = iv != NULL ? iv->token_mask : NULL, .stats = opt->stats,
  };
  /* This call rewrites cache rows past..n; what was cached beyond `past` is gone. */
  if (s->kv_n > past)
    s->kv_n = past;

  /* The residual stream entering layer start_layer, for the nq new rows. */
  if (opt->start_layer > 0)
    TRY (b->ops->copy (b, s->x, s->resid + (size_t) opt->start_layer * s->cap * E, nE, err));
  else
    TRY (b->ops->get_rows (b, s->x, s->token_embd, ids + past, nq, E, err));

  for (l = opt->start_layer; l < L; l++)
    {
      c.layer = l;
      c.head_scale = iv != NULL && iv->head_scale != NULL ? iv->head_scale + (size_t) l * H : NULL;
      c.k_cache = s->kc + (size_t) l * s->cap * KV;
      c.v_cache = s->vc + (size_t) l * s->cap * KV;

      if (opt->keep_residuals)
        TRY (b->ops->copy (b, s->resid + (size_t) l * s->cap * E, s->x, nE, err));

      /* the observer may take the probabilities straight into its own memory (host
       * memory backends only) */
      c.probs = s->probs;
      if (opt->observer != NULL && opt->observer->layer_buffer != NULL
          && s->probs_host == s->probs)
        {
          float *mine = opt->observer->layer_buffer (opt->observer->user, l, nq, n);
          if (mine != NULL)
            c.probs = mine;
        }
      if ((st = s->arch->layer (&c, (const char *) s->layers + (size_t) l * s->arch->layer_size,
                                err)) != SC_OK)
        {
          op_failed (b, st, err);
          sc_error_prefix (err, "layer %d", l);
          return st;
        }
      if (opt->observer != NULL
          && (st = observe_layer (s, opt->observer, l, c.probs, nq, n, err)) != SC_OK)
        return st;

      if (opt->progress != NULL && !opt->progress (opt->progress_user, l + 1, L))
        return sc_error_set (err, SC_ERR_CANCELLED, "cancelled after layer %d", l);
    }

  if (opt->keep_residuals)
    {
      TRY (b->ops->copy (b, s->resid + (size_t) L * s->cap * E, s->x, nE, err));
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
                        in->norm_eps, err));
  TRY (sc_layer_matmul (&c, s->logits_dev, s->h, s->output, n_out, E, V, false, err));
  if (logits != NULL)
    TRY (b->ops->download (b, logits, s->logits_dev, (size_t) n_out * V, err));
  if (opt->stats != NULL)
    opt->stats->total_s += now_s () - t_start;
  return SC_OK;
}
