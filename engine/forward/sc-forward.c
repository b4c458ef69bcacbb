/* sc-forward.c — the forward pass over ScBackend, for any architecture (see sc-forward.h).
 *
 * For n tokens of which the first n_past are in the KV cache (nq = n - n_past new rows):
 *   x     (nq, E) = token_embd[ids] (* embd_scale) (+ position_embd[n_past..n) for GPT-2)
 *                   (or the residual kept before start_layer)
 *   for each layer l >= start_layer:
 *     x          = arch->layer(x)                   the architecture's block (model/sc-arch-*.c:
 *                                                   llama's math, with shapes, is in
 *                                                   sc-arch-llama.c); it writes the layer's
 *                                                   keys/values to cache rows n_past..n and
 *                                                   P (H, nq, n) where this file says
 *     observer   <- P                               per head, after the layer returns
 *     observer   <- o (nq, H*d)                     the attention output that multiplied
 *                                                   W_O (attn_output, when asked for)
 *   logits (rows, V) = (rmsnorm(x) * output_norm) Wout^T for the last row or all rows
 *                      (GPT-2: layernorm(x) * output_norm + output_norm_b; output_head).
 * With last_row the last layer computes its attention and feed-forward for the last row
 * only (ScLayerCtx.n_tail: its keys and values still for every row).
 *
 * This file owns what every architecture shares: the session and its buffers, the KV
 * cache, prefix reuse (residuals kept per layer), interventions (head scales and masked
 * tokens handed to the layer's attention op; attention edits, mean-ablation and patches
 * applied by sc_intervention_edit_heads() in sc-intervention.c, which the layer calls
 * between its attention and W_O), the observer and zero-copy capture, progress and timing.
 *
 * The fp16 capture path: on a backend with SC_BACKEND_CAP_ATTN_CAPTURE (the GPU and the
 * fast CPU backend), a layer without edits in an untaped run calls attention_capture
 * instead of attention (choose_capture below): no fp32 probabilities exist; the heads the
 * observer wants arrive as fp16 in the store's layout in host memory. A device backend's
 * are handed to observe_f16 after the next layer has been queued, so their transfer
 * overlaps it; a host backend's (computed synchronously, bit for bit the attention op's
 * probabilities converted) right after their layer. An observer that takes only floats, a
 * tape or an edit gets the fp32 path as before; the reference backend lacks the flag.
 *
 * Why edits are not a backend op: the attention op computes P and o = P V in one call (its
 * SIMD path never holds a whole row of P before the product), so an edit between the two
 * would mean a host callback inside every backend's kernel, or an edit kind per backend. The
 * edited heads are instead a separate, rare path: the op runs unchanged (the un-edited heads,
 * and every run without edits, stay bit for bit what they were), then
 * sc_intervention_edit_heads() rewrites the chosen heads' rows of P in place and recomputes
 * their rows of o = head_scale * P' V (or head_scale * mean) in scalar code with double
 * sums — on host memory directly, on a device backend through download/upload of P, V
 * and o (slow, and only for layers with edits). A row an edit leaves bit-identical keeps
 * the op's o (so a permutation that happens to be the identity, or of a row with one key,
 * changes nothing).
 *
 * What it is not: weights loading (sc-model), a layer's math (the architectures), the ops
 * themselves (backends).
 */
#include "forward/sc-forward.h"
#include "forward/sc-intervention-private.h"
#include "forward/sc-session-private.h"

#include "backend/sc-backend-impl.h"
#include "core/sc-math.h"
#include "model/sc-arch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


static void
free_buffers (ScSession *s)
{
  ScBackend *b = s->b;
  float **bufs[] = { &s->x, &s->h, &s->qkv, &s->q, &s->kc, &s->vc, &s->o, &s->gu, &s->act,
                     &s->probs, &s->logits_dev, &s->resid, &s->resid_final };
  size_t i;

  if (s->probs_host != s->probs)
    free (s->probs_host);
  s->probs_host = NULL;
  free (s->o_host);
  s->o_host = NULL;
  for (i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
    if (*bufs[i] != NULL)
      {
        b->ops->free (b, *bufs[i]);
        *bufs[i] = NULL;
      }
  free (s->kept_ids);
  s->kept_ids = NULL;
  s->kept_n = 0;
  s->kept_final = false;
  free (s->kv_ids);
  s->kv_ids = NULL;
  s->kv_n = 0;
  s->cap = 0;
  s->logits_rows = 0;
}

/* Grows the logits buffer to @rows (<= cap) rows. Sized by what calls read — the last row,
 * every row with all_logits, a chunk of kept rows — not by the token capacity: a capture
 * of n tokens never holds (n, V) logits (1.6 GB for SmolLM2 at 8,192 tokens). */
static ScStatus
ensure_logits (ScSession *s, int rows, ScError *err)
{
  const size_t V = sc_model_info (s->model)->n_vocab;

  if (rows <= s->logits_rows)
    return SC_OK;
  if (s->logits_dev != NULL)
    s->b->ops->free (s->b, s->logits_dev);
  s->logits_rows = 0;
  if ((s->logits_dev = s->b->ops->alloc (s->b, (size_t) rows * V, err)) == NULL)
    {
      if (err != NULL && err->status != SC_OK)
        return sc_error_prefix (err, "logits of %d rows", rows);
      return sc_error_set (err, SC_ERR_NOMEM, "out of memory for logits of %d rows", rows);
    }
  s->logits_rows = rows;
  return SC_OK;
}

/* Grows the buffers to hold @n tokens, keeping the KV cache's contents. A first
 * allocation is exact; later growth (generation adds a token at a time) rounds up to a
 * multiple of 64 so a long generation reallocates rarely. */
static ScStatus
ensure_capacity (ScSession *s, int n, bool need_resid, bool need_final, ScError *err)
{
  const ScModelInfo *in = sc_model_info (s->model);
  const size_t E = in->n_embd, Q = (size_t) in->n_heads * in->head_dim,
               KV = (size_t) in->n_kv_heads * in->head_dim, F = in->n_ff,
               L = in->n_layers;
  ScBackend *b = s->b;
  float *old_kc = NULL, *old_vc = NULL;
  int32_t *kv_ids = NULL;
  int kv_n = 0, old_cap = s->cap;
  const bool lazy_probs = sc_backend_supports (b, SC_BACKEND_CAP_ATTN_CAPTURE);
  size_t cap;

  if (n <= s->cap && (!need_resid || s->resid != NULL)
      && (!need_final || s->resid_final != NULL))
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
      /* On a backend with attention_capture only the layers that take the fp32 path need
       * these (H cap^2 floats: 2.4 GB at 8,192 tokens, on the device and on the host):
       * ensure_probs() makes them then. */
      if (!lazy_probs)
        {
          s->probs = b->ops->alloc (b, in->n_heads * cap * cap, err);
          if (sc_backend_supports (b, SC_BACKEND_CAP_HOST_MEMORY))
            s->probs_host = s->probs;
          else
            s->probs_host = malloc (in->n_heads * cap * cap * sizeof (float));
        }
      if (!s->x || !s->h || !s->qkv || !s->q || !s->kc || !s->vc || !s->o || !s->gu || !s->act
          || (!lazy_probs && (!s->probs || !s->probs_host)))
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
  if (need_final && s->resid_final == NULL
      && (s->resid_final = b->ops->alloc (b, (size_t) s->cap * E, err)) == NULL)
    return err != NULL && err->status != SC_OK
               ? sc_error_prefix (err, "the final residual")
               : sc_error_set (err, SC_ERR_NOMEM, "out of memory for the final residual");
  return SC_OK;
}

ScStatus
sc_session_new (const ScModel *model, ScBackend *b, ScSession **out, ScError *err)
{
  const ScModelInfo *in = sc_model_info (model);
  /* the vectors as floats, the matrices as the file stores them (weight_src) */
  const ScWeights *w = sc_model_weights_packed (model);
  const ScArchDesc *arch = sc_arch_for (in->arch);
  const size_t E = in->n_embd;
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
  if (sc_backend_supports (b, SC_BACKEND_CAP_ATTN_CAPTURE))
    {
      s->capture_want = calloc (in->n_heads, sizeof *s->capture_want);
      s->capture_heads = calloc (in->n_heads, sizeof *s->capture_heads);
      if (s->capture_want == NULL || s->capture_heads == NULL)
        {
          st = sc_error_set (err, SC_ERR_NOMEM, "out of memory");
          goto fail;
        }
    }

#define W(dst, src, n)                                                                        \
  do                                                                                          \
    {                                                                                         \
      if ((dst = b->ops->weight (b, src, n, err)) == NULL)                                    \
        goto fail;                                                                            \
    }                                                                                         \
  while (0)
  /* the float view instead, once sc_model_weights() has made it (sc_layer_bind_matrix) */
  if (w->token_embd != NULL)
    W (s->token_embd, w->token_embd, (size_t) in->n_vocab * E);
  else if ((s->token_embd = b->ops->weight_src (b, &w->src_token_embd, err)) == NULL)
    goto fail;
  W (s->output_norm, w->output_norm, E);
  if (in->layer_norm)
    W (s->output_norm_b, w->output_norm_b, E);
  if (in->learned_positions)
    W (s->position_embd, w->position_embd, (size_t) in->n_ctx_train * E);
  if (in->tied_output)
    s->output = s->token_embd;
  else
    {
      if (w->output != NULL)
        W (s->output, w->output, (size_t) in->n_vocab * E);
      else if ((s->output = b->ops->weight_src (b, &w->src_output, err)) == NULL)
        goto fail;
    }
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
  free (s->capture_want);
  free (s->capture_heads);
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
  free (s->capture_want);
  free (s->capture_heads);
  free (s);
}

ScStatus
sc_session_residual (const ScSession *s, int layer, int row, float *out, ScError *err)
{
  const ScModelInfo *in;
  size_t E;

  if (s == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "residual: NULL argument");
  in = sc_model_info (s->model);
  E = in->n_embd;
  if ((s->resid == NULL && !s->kept_final) || s->kept_n == 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "residual: the session keeps no residuals "
                         "(run sc_forward with keep_residuals first)");
  if (layer < 0 || layer > (int) in->n_layers)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "residual: layer %d is outside 0..%u", layer,
                         in->n_layers);
  if (row < 0 || row >= s->kept_n)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "residual: row %d is outside the kept run's "
                         "0..%d", row, s->kept_n - 1);
  if (s->kept_final && layer != (int) in->n_layers)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "residual: the session kept only the final "
                         "residual (keep_final), not layer %d's", layer);
  return s->b->ops->download (s->b, out,
                              s->kept_final ? s->resid_final + (size_t) row * E
                                            : s->resid + ((size_t) layer * s->cap + row) * E,
                              E, err);
}

/* Hands layer @l's attention output, (n_q, Q) in ctx->o (@o: the session's, or the tape's)
 * after the layer returned (the architecture contract in sc-arch.h), to the observer's
 * attn_output; downloaded into a host copy on device backends. */
static ScStatus
observe_attn_output (ScSession *s, const ScObserver *obs, int l, const float *o, int n_q,
                     ScError *err)
{
  const ScModelInfo *in = sc_model_info (s->model);
  const int Q = (int) (in->n_heads * in->head_dim);
  const float *host = o;
  ScStatus st;

  if (!sc_backend_supports (s->b, SC_BACKEND_CAP_HOST_MEMORY))
    {
      if (s->o_host == NULL
          && (s->o_host = malloc ((size_t) s->cap * Q * sizeof (float))) == NULL)
        return sc_error_set (err, SC_ERR_NOMEM, "out of memory for the attention output");
      if ((st = s->b->ops->download (s->b, s->o_host, o, (size_t) n_q * Q, err)) != SC_OK)
        return st;
      host = s->o_host;
    }
  if (!obs->attn_output (obs->user, l, host, n_q, Q))
    return sc_error_set (err, SC_ERR_CANCELLED, "cancelled at layer %d's attention output", l);
  return SC_OK;
}

/* Layer @c->layer's queries (the call's new rows) and keys and values (every key), as the
 * layer left them in @c, to the observer's qkv; host copies on device backends. */
static ScStatus
observe_qkv (ScSession *s, const ScObserver *obs, const ScLayerCtx *c, ScError *err)
{
  const ScModelInfo *in = sc_model_info (s->model);
  const int Q = (int) (in->n_heads * in->head_dim), KV = (int) (in->n_kv_heads * in->head_dim);
  const size_t nq = (size_t) c->n_q * Q, nk = (size_t) c->n_k * KV;
  const float *q = c->q, *k = c->k_cache, *v = c->v_cache;
  float *copy = NULL;
  ScStatus st = SC_OK;

  if (!sc_backend_supports (s->b, SC_BACKEND_CAP_HOST_MEMORY))
    {
      if ((copy = malloc ((nq + 2 * nk) * sizeof (float))) == NULL)
        return sc_error_set (err, SC_ERR_NOMEM, "out of memory for layer %d's queries, keys "
                             "and values", c->layer);
      if ((st = s->b->ops->download (s->b, copy, c->q, nq, err)) != SC_OK
          || (st = s->b->ops->download (s->b, copy + nq, c->k_cache, nk, err)) != SC_OK
          || (st = s->b->ops->download (s->b, copy + nq + nk, c->v_cache, nk, err)) != SC_OK)
        goto out;
      q = copy;
      k = copy + nq;
      v = copy + nq + nk;
    }
  if (!obs->qkv (obs->user, c->layer, q, k, v, c->n_q, c->n_k, Q, KV))
    st = sc_error_set (err, SC_ERR_CANCELLED, "cancelled at layer %d's queries, keys and "
                       "values", c->layer);
out:
  free (copy);
  return st;
}

ScBackend *
sc_session_backend (const ScSession *s)
{
  return s->b;
}

const ScModel *
sc_session_model (const ScSession *s)
{
  return s->model;
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

/* The output head's norm of @n rows @x into @y: RMSNorm with output_norm, or GPT-2's
 * LayerNorm with output_norm and output_norm_b (ScModelInfo.layer_norm). */
static ScStatus
output_norm (ScSession *s, float *y, const float *x, int n, ScError *err)
{
  const ScModelInfo *in = sc_model_info (s->model);

  if (in->layer_norm)
    return sc_backend_layer_norm (s->b, y, x, s->output_norm, s->output_norm_b, n,
                                  (int) in->n_embd, in->norm_eps, err);
  return s->b->ops->rmsnorm (s->b, y, x, s->output_norm, n, (int) in->n_embd, in->norm_eps,
                             err);
}

/* The vocabulary projection of @n normed rows s->h into s->logits_dev (@c clocks it), then
 * Gemma 2's final soft-capping, cap tanh(logit / cap), when the model has it. */
static ScStatus
unembed (ScSession *s, const ScLayerCtx *c, int n, ScError *err)
{
  const ScModelInfo *in = sc_model_info (s->model);
  const int E = (int) in->n_embd, V = (int) in->n_vocab;
  ScStatus st = sc_layer_matmul (c, s->logits_dev, s->h, s->output, n, E, V, false, err);

  if (st == SC_OK && in->final_softcap > 0.0f)
    st = sc_backend_softcap (s->b, s->logits_dev, s->logits_dev, in->final_softcap,
                             (size_t) n * V, err);
  return st;
}

/* Checks the arguments of sc_forward() and whether prefix or cache reuse is valid. */
static ScStatus
check_call (ScSession *s, const int32_t *ids, int n, const ScForwardOptions *opt, bool recompute,
            ScError *err)
{
  const ScModelInfo *in = sc_model_info (s->model);
  const ScIntervention *iv = opt->intervention;
  ScStatus st;
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
  if ((st = sc_intervention_check (iv, in, n, err)) != SC_OK)
    return st;
  if (opt->start_layer < 0 || opt->start_layer > (int) in->n_layers)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "start_layer %d is outside 0..%u",
                         opt->start_layer, in->n_layers);
  if (opt->n_past < 0 || opt->n_past >= n)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "n_past %d must be in 0..%d", opt->n_past,
                         n - 1);
  if (opt->n_past > 0)
    {
      if (opt->start_layer > 0 || opt->keep_residuals || opt->keep_final)
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
      if (opt->keep_residuals && !recompute)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "keep_residuals with start_layer %d would "
                             "overwrite the kept prefix with this run's values",
                             opt->start_layer);
      if (s->resid == NULL || s->kept_final || s->kept_n != n
          || memcmp (s->kept_ids, ids, n * sizeof *ids) != 0)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "start_layer %d needs residuals kept by a "
                             "previous run on the same tokens", opt->start_layer);
      if (!recompute && sc_intervention_first_layer (iv, in) < opt->start_layer)
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

  if (obs->observe == NULL)
    return SC_OK;
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

/* ---- the fp16 capture path (SC_BACKEND_CAP_ATTN_CAPTURE) ------------------------- */

/* The session's fp32 probabilities (H, cap, cap) and their host copy, which
 * ensure_capacity leaves unmade on a backend with attention_capture until a layer takes
 * the fp32 path. */
static ScStatus
ensure_probs (ScSession *s, ScError *err)
{
  const size_t n = (size_t) sc_model_info (s->model)->n_heads * s->cap * s->cap;
  ScBackend *b = s->b;

  if (s->probs != NULL)
    return SC_OK;
  if ((s->probs = b->ops->alloc (b, n, err)) == NULL)
    return err != NULL && err->status != SC_OK
               ? err->status
               : sc_error_set (err, SC_ERR_NOMEM, "out of memory for the probabilities");
  if (sc_backend_supports (b, SC_BACKEND_CAP_HOST_MEMORY))
    s->probs_host = s->probs;
  else if ((s->probs_host = malloc (n * sizeof (float))) == NULL)
    {
      b->ops->free (b, s->probs);
      s->probs = NULL;
      return sc_error_set (err, SC_ERR_NOMEM, "out of memory for a host copy of %zu "
                           "probabilities", n);
    }
  return SC_OK;
}

/* Decides how layer @l's attention runs on a backend with attention_capture: sets
 * c->capture (and the wanted heads in s->capture_want) unless the layer must have fp32
 * probabilities — it has edits (c->edit_heads) or the observer wants a head but only takes
 * fp32 (no observe_f16). No observer, or no head wanted: a plain fused attention. */
static void
choose_capture (ScSession *s, const ScObserver *obs, int l, ScLayerCtx *c)
{
  const int H = (int) sc_model_info (s->model)->n_heads;
  bool any = false;
  int h;

  c->capture = false;
  c->capture_want = NULL;
  if (s->capture_want == NULL || c->edit_heads != NULL)
    return;
  for (h = 0; h < H; h++)
    {
      s->capture_want[h] = obs != NULL && (obs->observe != NULL || obs->observe_f16 != NULL)
                           && (obs->wants == NULL || obs->wants (obs->user, l, h));
      any = any || s->capture_want[h];
    }
  if (any && obs->observe_f16 == NULL)
    return;
  c->capture = true;
  c->capture_want = any ? s->capture_want : NULL;
  c->capture_slot = l % SC_BACKEND_CAPTURE_SLOTS;
}

/* Hands captured layer @l's heads, waiting for their copy, to observe_f16. */
static ScStatus
observe_layer_f16 (ScSession *s, const ScObserver *obs, int l, int n_q, int n_k, ScError *err)
{
  const int H = (int) sc_model_info (s->model)->n_heads;
  ScBackend *b = s->b;
  bool packed = false;
  ScStatus st;
  int h;

  if ((st = b->ops->capture_wait (b, l % SC_BACKEND_CAPTURE_SLOTS, s->capture_heads, &packed,
                                  err)) != SC_OK)
    return st;
  for (h = 0; h < H; h++)
    if (s->capture_heads[h] != NULL
        && !obs->observe_f16 (obs->user, l, h, s->capture_heads[h], n_q, n_k, packed))
      return sc_error_set (err, SC_ERR_CANCELLED, "cancelled at layer %d head %d", l, h);
  return SC_OK;
}

/* Residual patching (sc-intervention.h): the flagged rows of @x, the residual entering
 * the patched layer for positions @past .. @past + @nq - 1, replaced by the patch's. */
static ScStatus
patch_residual (ScBackend *b, float *x, const ScIntervention *iv, int past, int nq, int E,
                ScError *err)
{
  ScStatus st;

  for (int i = 0; i < nq; i++)
    if (iv->resid_patch_on[past + i]
        && (st = b->ops->upload (b, x + (size_t) i * E, iv->resid_patch + (size_t) (past + i) * E,
                                 (size_t) E, err)) != SC_OK)
      return st;
  return SC_OK;
}

ScStatus
sc_forward (ScSession *s, const int32_t *ids, int n, const ScForwardOptions *options,
            float *logits, ScError *err)
{
  return sc_forward_taped (s, ids, n, options, NULL, logits, err);
}

ScStatus
sc_forward_taped (ScSession *s, const int32_t *ids, int n, const ScForwardOptions *options,
                  const ScForwardTape *tape, float *logits, ScError *err)
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
  const EditCtx edit_ctx = { iv };
  ScLayerCtx c;
  ScStatus st;
  const int stop = tape != NULL && tape->stop_layer > 0 && tape->stop_layer < L ? tape->stop_layer
                                                                                  : L;
  int l, first_row, n_out;
  int pending = -1; /* a captured layer whose heads the observer has not been handed yet */

  if (err != NULL)
    sc_error_clear (err);
  if ((st = check_call (s, ids, n, opt, tape != NULL && tape->recompute, err)) != SC_OK)
    return st;
  if (opt->last_row && (tape != NULL || opt->all_logits || opt->keep_residuals || opt->keep_final
                       || opt->keep_kv
                        || past > 0 || opt->observer != NULL))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "last_row computes the last position's "
                         "logits only: it cannot be combined with all_logits, keep_residuals, "
                         "keep_kv, n_past, an observer or a tape");
  if (tape != NULL && (past > 0 || opt->keep_kv))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "a taped forward runs whole prompts (no "
                         "n_past, no keep_kv)");
  if ((st = ensure_capacity (s, n, opt->keep_residuals || opt->start_layer > 0,
                             opt->keep_final && !opt->keep_residuals, err)) != SC_OK)
    return st;
  /* what every layer shares (the buffers as ensure_capacity left them); the loop sets the
   * per-layer fields */
  c = (ScLayerCtx) {
    .b = b, .info = in, .n_past = past, .n_q = nq, .n_k = n,
    .x = s->x, .h = s->h, .qkv = s->qkv, .q = s->q, .o = s->o, .gu = s->gu, .act = s->act,
    .key_mask = iv != NULL ? iv->token_mask : NULL, .stats = opt->stats,
    .edit_user = &edit_ctx,
  };
  /* A run that keeps residuals overwrites the kept ones: they are valid again only when
   * it completes. */
  if (opt->keep_residuals || opt->keep_final)
    s->kept_n = 0;
  /* This call rewrites cache rows past..n; what was cached beyond `past` is gone. */
  if (s->kv_n > past)
    s->kv_n = past;

  /* The residual stream entering layer start_layer, for the nq new rows. */
  if (opt->start_layer > 0)
    TRY (b->ops->copy (b, s->x, s->resid + (size_t) opt->start_layer * s->cap * E, nE, err));
  else if (tape != NULL && tape->input_embd != NULL)
    TRY (b->ops->copy (b, s->x, tape->input_embd, nE, err));
  else
    {
      TRY (b->ops->get_rows (b, s->x, s->token_embd, ids + past, nq, E, err));
      /* Gemma scales the looked-up rows (not embeddings handed in from outside, as
       * llama.cpp's gemma3 graph) */
      if (in->embd_scale != 0.0f)
        TRY (sc_backend_scale (b, s->x, s->x, in->embd_scale, nE, err));
      /* GPT-2's learned positions: row p for the token at position p (check_call kept n
       * within n_ctx_train, the table's rows) */
      if (s->position_embd != NULL)
        TRY (b->ops->add (b, s->x, s->position_embd + (size_t) past * E, nE, err));
    }

  for (l = opt->start_layer; l < stop; l++)
    {
      c.layer = l;
      c.head_scale = iv != NULL && iv->head_scale != NULL ? iv->head_scale + (size_t) l * H : NULL;
      c.edit_heads = sc_intervention_layer_edited (iv, l, H) ? sc_intervention_edit_heads : NULL;
      c.k_cache = s->kc + (size_t) l * s->cap * KV;
      c.v_cache = s->vc + (size_t) l * s->cap * KV;
      /* last_row: the last layer's rows below the last reach no logit */
      c.n_tail = opt->last_row && l == L - 1 && nq > 1 ? 1 : 0;

      if (iv != NULL && iv->resid_patch != NULL && iv->resid_patch_layer == l)
        TRY (patch_residual (b, s->x, iv, past, nq, E, err));
      if (opt->keep_residuals)
        TRY (b->ops->copy (b, s->resid + (size_t) l * s->cap * E, s->x, nE, err));

      /* the observer may take the probabilities straight into its own memory (host
       * memory backends only) */
      c.probs = s->probs;
      if (opt->observer != NULL && opt->observer->layer_buffer != NULL
          && sc_backend_supports (b, SC_BACKEND_CAP_HOST_MEMORY))
        {
          float *mine = opt->observer->layer_buffer (opt->observer->user, l, nq, n);
          if (mine != NULL)
            c.probs = mine;
        }
      if (tape != NULL) /* a NULL slot: the session's own buffer, as without a tape */
        {
          c.q = tape->q != NULL ? tape->q + l * tape->q_stride : s->q;
          c.probs = tape->probs != NULL ? tape->probs + l * tape->probs_stride : c.probs;
          c.gu = tape->gu != NULL ? tape->gu + l * tape->gu_stride : s->gu;
          c.x_mid = tape->x_mid != NULL ? tape->x_mid + l * tape->x_mid_stride : NULL;
          c.o = tape->o != NULL ? tape->o + l * tape->o_stride : s->o;
        }
      else
        choose_capture (s, opt->observer, l, &c);
      if (!c.capture && c.probs == NULL) /* the fp32 path on a capture backend */
        {
          if ((st = ensure_probs (s, err)) != SC_OK)
            return st;
          c.probs = s->probs;
        }
      if ((st = s->arch->layer (&c, (const char *) s->layers + (size_t) l * s->arch->layer_size,
                                err)) != SC_OK)
        {
          op_failed (b, st, err);
          sc_error_prefix (err, "layer %d", l);
          return st;
        }
      /* the previous captured layer first (its copy overlapped this layer), then this one */
      if (pending >= 0 && (st = observe_layer_f16 (s, opt->observer, pending, nq, n, err))
                              != SC_OK)
        return st;
      pending = c.capture && c.capture_want != NULL ? l : -1;
      /* attn_output comes after the layer's heads (sc-forward.h): no overlap then; nor on
       * a host backend, whose capture op is synchronous (one area serves every slot) */
      if (pending >= 0
          && (opt->observer->attn_output != NULL
              || sc_backend_supports (b, SC_BACKEND_CAP_HOST_MEMORY)))
        {
          if ((st = observe_layer_f16 (s, opt->observer, pending, nq, n, err)) != SC_OK)
            return st;
          pending = -1;
        }
      if (opt->observer != NULL && !c.capture
          && (st = observe_layer (s, opt->observer, l, c.probs, nq, n, err)) != SC_OK)
        return st;
      if (opt->observer != NULL && opt->observer->attn_output != NULL
          && (st = observe_attn_output (s, opt->observer, l, c.o, nq, err)) != SC_OK)
        return st;
      if (opt->observer != NULL && opt->observer->qkv != NULL
          && (st = observe_qkv (s, opt->observer, &c, err)) != SC_OK)
        return st;

      if (opt->progress != NULL && !opt->progress (opt->progress_user, l + 1, L))
        return sc_error_set (err, SC_ERR_CANCELLED, "cancelled after layer %d", l);
    }

  if (pending >= 0 && (st = observe_layer_f16 (s, opt->observer, pending, nq, n, err)) != SC_OK)
    return st;
  if (stop < L) /* a taped run of some layers: no output head */
    {
      if (opt->stats != NULL)
        opt->stats->total_s += now_s () - t_start;
      return SC_OK;
    }
  if (opt->keep_residuals || opt->keep_final)
    {
      s->kept_final = !opt->keep_residuals;
      TRY (b->ops->copy (b, s->kept_final ? s->resid_final : s->resid + (size_t) L * s->cap * E,
                         s->x, nE, err));
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
  if ((st = ensure_logits (s, n_out, err)) != SC_OK)
    return st;
  TRY (output_norm (s, s->h, s->x + (size_t) first_row * E, n_out, err));
  TRY (unembed (s, &c, n_out, err));
  if (logits != NULL)
    TRY (b->ops->download (b, logits, s->logits_dev, (size_t) n_out * V, err));
  if (opt->stats != NULL)
    opt->stats->total_s += now_s () - t_start;
  return SC_OK;
}

ScStatus
sc_session_unembed (ScSession *s, const float *x, int n_rows, float *logits, ScError *err)
{
  const ScModelInfo *in;
  ScLayerCtx c;
  ScBackend *b;
  ScStatus st;
  size_t E, V;
  int chunk;

  if (err != NULL)
    sc_error_clear (err);
  if (s == NULL || x == NULL || logits == NULL || n_rows < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "unembed: NULL argument or no rows");
  in = sc_model_info (s->model);
  b = s->b;
  E = in->n_embd;
  V = in->n_vocab;
  for (size_t i = 0; i < (size_t) n_rows * E; i++)
    if (!isfinite (x[i]))
      return sc_error_set (err, SC_ERR_INVALID_ARG, "unembed: row %zu is not finite at "
                           "dimension %zu", i / E, i % E);
  /* x and h (cap, E) hold a chunk; a session that has not run yet gets room for one row */
  if (s->cap == 0 && (st = ensure_capacity (s, 1, false, false, err)) != SC_OK)
    return st;
  chunk = n_rows < s->cap ? n_rows : s->cap;
  if ((st = ensure_logits (s, chunk, err)) != SC_OK)
    return st;
  c = (ScLayerCtx) { .b = b, .info = in };
  for (int r0 = 0; r0 < n_rows; r0 += chunk)
    {
      const int m = n_rows - r0 < chunk ? n_rows - r0 : chunk;
      TRY (b->ops->upload (b, s->x, x + (size_t) r0 * E, (size_t) m * E, err));
      TRY (output_norm (s, s->h, s->x, m, err));
      TRY (unembed (s, &c, m, err));
      TRY (b->ops->download (b, logits + (size_t) r0 * V, s->logits_dev, (size_t) m * V, err));
    }
  return SC_OK;
}

ScStatus
sc_session_kept_logits (ScSession *s, int row0, int n_rows, float *logits, ScError *err)
{
  const ScModelInfo *in;
  const float *final;
  ScLayerCtx c;
  ScBackend *b;
  ScStatus st;
  int E, V;

  if (err != NULL)
    sc_error_clear (err);
  if (s == NULL || logits == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "kept logits: NULL argument");
  in = sc_model_info (s->model);
  b = s->b;
  E = (int) in->n_embd;
  V = (int) in->n_vocab;
  if ((s->resid == NULL && !s->kept_final) || s->kept_n == 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "kept logits: the session keeps no "
                         "residuals (run sc_forward with keep_residuals first)");
  if (row0 < 0 || n_rows < 1 || n_rows > s->kept_n - row0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "kept logits: rows %d .. %d are outside the "
                         "kept run's 0 .. %d", row0, row0 + n_rows - 1, s->kept_n - 1);
  /* kept_n <= cap, so h (cap, E) holds the rows; the output head exactly as sc_forward
   * applies it. */
  final = s->kept_final ? s->resid_final + (size_t) row0 * E
                        : s->resid + ((size_t) in->n_layers * s->cap + row0) * E;
  c = (ScLayerCtx) { .b = b, .info = in };
  if ((st = ensure_logits (s, n_rows, err)) != SC_OK)
    return st;
  TRY (output_norm (s, s->h, final, n_rows, err));
  TRY (unembed (s, &c, n_rows, err));
  TRY (b->ops->download (b, logits, s->logits_dev, (size_t) n_rows * V, err));
  return SC_OK;
}
