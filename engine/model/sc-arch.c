/* sc-arch.c — the table of architectures, and the helpers their layer functions share
 * (see sc-arch.h). An architecture itself lives in its own file, sc-arch-<name>.c; this
 * one only lists them.
 */
#include "model/sc-arch.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* Every supported architecture. A new one is a new file and one line here. */
static const ScArchDesc *const arches[] = {
  &sc_arch_llama,
  &sc_arch_gemma3,
  &sc_arch_qwen2,
  &sc_arch_gpt2,
  &sc_arch_qwen3,
  &sc_arch_gemma2,
  &sc_arch_phi3,
};

#define N_ARCHES (sizeof arches / sizeof arches[0])

const ScArchDesc *
sc_arch_find (ScGgufStr name)
{
  size_t i;

  for (i = 0; i < N_ARCHES; i++)
    if (sc_gguf_str_eq (name, arches[i]->name))
      return arches[i];
  return NULL;
}

const ScArchDesc *
sc_arch_for (ScArch id)
{
  size_t i;

  for (i = 0; i < N_ARCHES; i++)
    if (arches[i]->id == id)
      return arches[i];
  return NULL;
}

char *
sc_arch_list (char *buf, size_t size)
{
  size_t i, used = 0;

  if (size == 0)
    return buf;
  buf[0] = '\0';
  for (i = 0; i < N_ARCHES && used < size; i++)
    {
      int w = snprintf (buf + used, size - used, "%s%s", i > 0 ? ", " : "", arches[i]->name);
      if (w < 0)
        break;
      used += (size_t) w;
    }
  return buf;
}

int64_t
sc_arch_dim (ScDim dim, const ScModelInfo *in)
{
  switch (dim)
    {
    case SC_DIM_ONE:
      return 1;
    case SC_DIM_EMBD:
      return in->n_embd;
    case SC_DIM_Q:
      return (int64_t) in->n_heads * in->head_dim;
    case SC_DIM_KV:
      return (int64_t) in->n_kv_heads * in->head_dim;
    case SC_DIM_FF:
      return in->n_ff;
    case SC_DIM_HEAD:
      return in->head_dim;
    case SC_DIM_QKV:
      return (int64_t) (in->n_heads + 2 * in->n_kv_heads) * in->head_dim;
    case SC_DIM_FF2:
      return 2 * (int64_t) in->n_ff;
    }
  return 0;
}

ScStatus
sc_arch_check_tensors (const ScArchDesc *arch, const ScGguf *g, const ScModelInfo *in,
                       ScError *err)
{
  static const char *const shared[] = { "token_embd.weight", "output_norm.weight",
                                        "output.weight" };

  for (uint64_t k = 0; k < sc_gguf_n_tensors (g); k++)
    {
      char name[128];
      const char *rest = NULL;
      bool known = false;
      size_t i;

      sc_gguf_str_copy (sc_gguf_tensor (g, k)->name, name, sizeof name);
      for (i = 0; i < sizeof shared / sizeof shared[0] && !known; i++)
        known = strcmp (name, shared[i]) == 0;
      known = known || (in->layer_norm && strcmp (name, "output_norm.bias") == 0)
              || (in->n_rope_freq > 0 && strcmp (name, "rope_freqs.weight") == 0)
              || (in->learned_positions && strcmp (name, "position_embd.weight") == 0);
      if (!known && strncmp (name, "blk.", 4) == 0 && name[4] >= '0' && name[4] <= '9')
        {
          rest = name + 4;
          while (*rest >= '0' && *rest <= '9')
            rest++;
          if (*rest == '.')
            for (i = 0; i < (size_t) arch->n_tensors && !known; i++)
              known = strcmp (rest + 1, arch->tensors[i].name) == 0;
        }
      if (!known)
        return sc_error_set (err, SC_ERR_UNSUPPORTED, "tensor '%s' is not one the '%s' "
                             "architecture reads", name, arch->name);
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

ScStatus
sc_layer_matmul (const ScLayerCtx *c, float *y, const float *x, const float *w, int n, int in,
                 int out, bool accumulate, ScError *err)
{
  double t0 = c->stats != NULL ? now_s () : 0.0;
  ScStatus st = c->b->ops->matmul (c->b, y, x, w, n, in, out, accumulate, err);

  if (c->stats != NULL)
    {
      c->stats->matmul_s += now_s () - t0;
      c->stats->matmul_flops += 2.0 * n * in * out;
    }
  return st;
}

ScStatus
sc_layer_attention (const ScLayerCtx *c, const float *q, bool causal, int window, ScError *err)
{
  const ScModelInfo *in = c->info;
  const ScAttnParams p = {
    .scale = in->attn_scale,
    .causal = causal,
    .window = window,
    .key_mask = c->key_mask,
    .head_scale = c->head_scale,
    .softcap = in->attn_softcap,
  };
  double t0 = c->stats != NULL ? now_s () : 0.0;
  ScStatus st;

  if (c->n_seq > 1) /* stacked sequences: each attends to its own keys */
    {
      const size_t Q = (size_t) in->n_heads * in->head_dim,
                   KV = (size_t) in->n_kv_heads * in->head_dim;
      ScAttnParams ps = p;
      st = SC_OK;
      for (int s = 0; s < c->n_seq && st == SC_OK; s++)
        {
          const size_t qrow = (size_t) s * c->n_q, krow = (size_t) s * c->n_k;
          ps.head_scale = c->head_scale != NULL ? c->head_scale + (size_t) s * in->n_heads
                                                : NULL;
          if (c->capture) /* no head wanted: the fused attention, no probabilities */
            st = sc_backend_attention_capture (c->b, c->o + qrow * Q, q + qrow * Q,
                                               c->k_cache + krow * KV, c->v_cache + krow * KV,
                                               c->n_q, c->n_k, (int) in->n_heads,
                                               (int) in->n_kv_heads, (int) in->head_dim, &ps,
                                               NULL, c->capture_slot, err);
          else
            st = sc_backend_attention (c->b, c->o + qrow * Q, c->probs, q + qrow * Q,
                                       c->k_cache + krow * KV, c->v_cache + krow * KV, c->n_q,
                                       c->n_k, (int) in->n_heads, (int) in->n_kv_heads,
                                       (int) in->head_dim, &ps, err);
        }
    }
  else if (c->capture)
    st = sc_backend_attention_capture (c->b, c->o, q, c->k_cache, c->v_cache, c->n_q, c->n_k,
                                       (int) in->n_heads, (int) in->n_kv_heads,
                                       (int) in->head_dim, &p, c->capture_want, c->capture_slot,
                                       err);
  else
    st = sc_backend_attention (c->b, c->o, c->probs, q, c->k_cache, c->v_cache, c->n_q, c->n_k,
                               (int) in->n_heads, (int) in->n_kv_heads, (int) in->head_dim, &p,
                               err);

  if (c->stats != NULL)
    c->stats->attention_s += now_s () - t0;
  return st;
}

ScStatus
sc_layer_bind_weight (ScBackend *b, const float **dst, const float *src, size_t n, ScError *err)
{
  if ((*dst = b->ops->weight (b, src, n, err)) == NULL)
    return err != NULL && err->status != SC_OK ? err->status : SC_ERR_BACKEND;
  return SC_OK;
}

ScStatus
sc_layer_bind_matrix (ScBackend *b, const float **dst, const float *dense, int64_t rows,
                      int64_t cols, const ScWeightSrc *const *srcs, int n_srcs, ScError *err)
{
  ScWeightSrc m = { .cols = cols, .n_parts = 0 };

  if (dense != NULL)
    return sc_layer_bind_weight (b, dst, dense, (size_t) rows * (size_t) cols, err);

  for (int i = 0; i < n_srcs; i++)
    for (int k = 0; k < srcs[i]->n_parts; k++)
      {
        if (m.n_parts == SC_WEIGHT_MAX_PARTS || srcs[i]->cols != cols)
          return sc_error_set (err, SC_ERR_INVALID_ARG, "a fused projection of more than %d "
                               "parts or of parts of different widths", SC_WEIGHT_MAX_PARTS);
        m.parts[m.n_parts++] = srcs[i]->parts[k];
      }
  if (sc_weight_src_rows (&m) != rows)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "a projection of %lld rows where %lld are "
                         "needed", (long long) sc_weight_src_rows (&m), (long long) rows);
  if ((*dst = b->ops->weight_src (b, &m, err)) == NULL)
    return err != NULL && err->status != SC_OK ? err->status : SC_ERR_BACKEND;
  return SC_OK;
}

ScStatus
sc_layer_bind_view (ScBackend *b, const ScModelInfo *in, const ScLayerWeights *w, ScLayerView *v,
                    const char *arch, ScError *err)
{
  const int64_t E = in->n_embd, Q = (int64_t) in->n_heads * in->head_dim,
                KV = (int64_t) in->n_kv_heads * in->head_dim, F = in->n_ff;
  const ScWeightSrc *qkv[] = { &w->src_wq, &w->src_wk, &w->src_wv };
  const ScWeightSrc *gate_up[] = { &w->src_w_gate, &w->src_w_up };
  const ScWeightSrc *wo[] = { &w->src_wo }, *down[] = { &w->src_w_down };
  ScStatus st;

  /* Once sc_model_weights() has made the float view, it is the weights (a caller may have
   * written into it): bound as floats, as before the file form existed. */
  if (w->wq != NULL)
    {
      if (w->wk != w->wq + Q * E || w->wv != w->wk + KV * E || w->w_up != w->w_gate + F * E)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: the layer's Q, K, V or gate, up "
                             "weights are not back to back, as the fused projections need",
                             arch);
      if ((st = sc_layer_bind_weight (b, &v->attn_norm, w->attn_norm, E, err)) != SC_OK
          || (st = sc_layer_bind_weight (b, &v->w_qkv, w->wq, (Q + 2 * KV) * E, err)) != SC_OK
          || (st = sc_layer_bind_weight (b, &v->wo, w->wo, E * Q, err)) != SC_OK
          || (st = sc_layer_bind_weight (b, &v->ffn_norm, w->ffn_norm, E, err)) != SC_OK
          || (st = sc_layer_bind_weight (b, &v->w_gate_up, w->w_gate, 2 * F * E, err)) != SC_OK
          || (st = sc_layer_bind_weight (b, &v->w_down, w->w_down, E * F, err)) != SC_OK)
        return st;
      return SC_OK;
    }
  if ((st = sc_layer_bind_weight (b, &v->attn_norm, w->attn_norm, E, err)) != SC_OK
      || (st = sc_layer_bind_matrix (b, &v->w_qkv, NULL, Q + 2 * KV, E, qkv, 3, err)) != SC_OK
      || (st = sc_layer_bind_matrix (b, &v->wo, NULL, E, Q, wo, 1, err)) != SC_OK
      || (st = sc_layer_bind_weight (b, &v->ffn_norm, w->ffn_norm, E, err)) != SC_OK
      || (st = sc_layer_bind_matrix (b, &v->w_gate_up, NULL, 2 * F, E, gate_up, 2, err)) != SC_OK
      || (st = sc_layer_bind_matrix (b, &v->w_down, NULL, E, F, down, 1, err)) != SC_OK)
    return sc_error_prefix (err, "%s", arch), st;
  return SC_OK;
}

ScStatus
sc_layer_qkv (const ScLayerCtx *c, const ScLayerView *w, ScError *err)
{
  const ScModelInfo *in = c->info;
  ScBackend *b = c->b;
  /* stacked sequences (n_past 0): their cache rows are back to back, as their x rows */
  const int E = (int) in->n_embd, d = (int) in->head_dim, Q = (int) in->n_heads * d,
            KV = (int) in->n_kv_heads * d, nq = sc_layer_rows (c), past = c->n_past;
  float *k_new = c->k_cache + (size_t) past * KV, *v_new = c->v_cache + (size_t) past * KV;
  ScStatus st;

  if ((st = b->ops->rmsnorm (b, c->h, c->x, w->attn_norm, nq, E, in->norm_eps, err)) != SC_OK
      || (st = sc_layer_matmul (c, c->qkv, c->h, w->w_qkv, nq, E, Q + 2 * KV, false, err))
             != SC_OK
      || (st = b->ops->copy_2d (b, c->q, Q, c->qkv, Q + 2 * KV, nq, Q, err)) != SC_OK
      || (st = b->ops->copy_2d (b, k_new, KV, c->qkv + Q, Q + 2 * KV, nq, KV, err)) != SC_OK
      || (st = b->ops->copy_2d (b, v_new, KV, c->qkv + Q + KV, Q + 2 * KV, nq, KV, err)) != SC_OK)
    return st;
  return SC_OK;
}

const ScLayerCtx *
sc_layer_tail (const ScLayerCtx *c, ScLayerCtx *t)
{
  const int skip = c->n_q - c->n_tail;

  if (c->n_tail <= 0 || skip <= 0)
    return c;
  *t = *c;
  t->n_q = c->n_tail;
  t->n_past = c->n_k - c->n_tail;
  t->n_tail = 0;
  t->x = c->x + (size_t) skip * c->info->n_embd;
  t->q = c->q + (size_t) skip * c->info->n_heads * c->info->head_dim;
  if (c->x_mid != NULL)
    t->x_mid = c->x_mid + (size_t) skip * c->info->n_embd;
  return t;
}

/* sc_layer_tail for stacked sequences (n_tail 1): the last row of each, gathered into
 * x_tail and q_tail, then a sequence of one query over its own n_k keys. */
static ScStatus
stacked_tail (const ScLayerCtx *c, ScLayerCtx *t, ScError *err)
{
  const int E = (int) c->info->n_embd, Q = (int) (c->info->n_heads * c->info->head_dim);
  ScStatus st;

  if (c->n_tail != 1 || c->x_tail == NULL || c->q_tail == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "stacked sequences take n_tail 1 with "
                         "x_tail and q_tail, not n_tail %d", c->n_tail);
  if ((st = c->b->ops->copy_2d (c->b, c->x_tail, E, c->x + (size_t) (c->n_q - 1) * E,
                                c->n_q * E, c->n_seq, E, err)) != SC_OK
      || (st = c->b->ops->copy_2d (c->b, c->q_tail, Q, c->q + (size_t) (c->n_q - 1) * Q,
                                   c->n_q * Q, c->n_seq, Q, err)) != SC_OK)
    return st;
  *t = *c;
  t->x = c->x_tail;
  t->q = c->q_tail;
  t->n_q = 1;
  t->n_past = c->n_k - 1;
  t->n_tail = 0;
  return SC_OK;
}

ScStatus
sc_layer_attend (const ScLayerCtx *c, bool causal, int window, ScError *err)
{
  ScStatus st = sc_layer_attention (c, c->q, causal, window, err);

  if (st == SC_OK && c->edit_heads != NULL)
    st = c->edit_heads (c, causal, window, err);
  return st;
}

ScStatus
sc_layer_save_mid (const ScLayerCtx *c, ScError *err)
{
  if (c->x_mid == NULL)
    return SC_OK;
  return c->b->ops->copy (c->b, c->x_mid, c->x, (size_t) c->n_q * c->info->n_embd, err);
}

ScStatus
sc_layer_rope (const ScLayerCtx *c, float *x, int n_heads, ScError *err)
{
  const ScModelInfo *in = c->info;
  const int n_seq = c->n_seq > 1 ? c->n_seq : 1;
  const size_t block = (size_t) c->n_q * n_heads * in->head_dim; /* one sequence's rows */
  ScStatus st = SC_OK;

  /* each stacked sequence from its own position n_past */
  for (int s = 0; s < n_seq && st == SC_OK; s++)
    if (in->n_rope_freq > 0)
      st = sc_backend_rope_freq (c->b, x + s * block, c->n_q, n_heads, (int) in->head_dim,
                                 (int) in->n_rot, c->n_past, in->rope_base, in->rope_freq, false,
                                 false, err);
    else
      st = c->b->ops->rope (c->b, x + s * block, c->n_q, n_heads, (int) in->head_dim,
                            (int) in->n_rot, c->n_past, in->rope_base, err);
  return st;
}

ScStatus
sc_layer_qk_norm_rope (const ScLayerCtx *c, const float *q_norm, const float *k_norm, float base,
                       ScError *err)
{
  const ScModelInfo *in = c->info;
  ScBackend *b = c->b;
  const int H = (int) in->n_heads, Hkv = (int) in->n_kv_heads, d = (int) in->head_dim,
            rot = (int) in->n_rot, nq = c->n_q, past = c->n_past;
  float *k_new = c->k_cache + (size_t) past * Hkv * d;
  ScStatus st;

  if ((st = b->ops->rmsnorm (b, c->q, c->q, q_norm, nq * H, d, in->norm_eps, err)) != SC_OK
      || (st = b->ops->rmsnorm (b, k_new, k_new, k_norm, nq * Hkv, d, in->norm_eps, err))
             != SC_OK
      || (st = sc_backend_rope_neox (b, c->q, nq, H, d, rot, past, base, err)) != SC_OK)
    return st;
  return sc_backend_rope_neox (b, k_new, nq, Hkv, d, rot, past, base, err);
}

ScStatus
sc_layer_attend_swiglu (const ScLayerCtx *c, const ScLayerView *w, ScError *err)
{
  const ScModelInfo *in = c->info;
  const int E = (int) in->n_embd, Q = (int) (in->n_heads * in->head_dim), F = (int) in->n_ff;
  ScLayerCtx tail;
  const ScLayerCtx *t = &tail;
  ScStatus st;

  if (c->n_seq > 1 && c->n_tail > 0)
    {
      if ((st = stacked_tail (c, &tail, err)) != SC_OK)
        return st;
    }
  else
    t = sc_layer_tail (c, &tail);
  /* P (H, nq, n_k) into c->probs, o (nq, Q); causal, with the layer's window (Mistral's;
   * none elsewhere); then the intervention's edits of chosen heads' P and o (sc-arch.h),
   * before o is used. c->o is not touched again: the observer reads it after the layer
   * returns (sc-arch.h) */
  if ((st = sc_layer_attend (t, true, (int) sc_model_layer_window (in, c->layer), err)) != SC_OK
      || (st = sc_layer_matmul (t, t->x, t->o, w->wo, sc_layer_rows (t), Q, E, true, err))
             != SC_OK
      || (st = sc_layer_save_mid (t, err)) != SC_OK /* the backward pass's tape */
      /* feed-forward block: h = norm(x), gu = h W_gate_up^T, SwiGLU */
      || (st = sc_layer_gate_up (t, w, err)) != SC_OK
      || (st = t->b->ops->swiglu (t->b, t->act, t->gu, sc_layer_rows (t), F, err)) != SC_OK)
    return st;
  return sc_layer_matmul (t, t->x, t->act, w->w_down, sc_layer_rows (t), F, E, true, err);
}

ScStatus
sc_layer_attend_geglu_post (const ScLayerCtx *c, const ScLayerView *w, const float *post_attn_norm,
                            const float *post_ffn_norm, int window, ScError *err)
{
  const ScModelInfo *in = c->info;
  const int E = (int) in->n_embd, Q = (int) (in->n_heads * in->head_dim), F = (int) in->n_ff;
  ScLayerCtx tail;
  const ScLayerCtx *t = sc_layer_tail (c, &tail);
  ScBackend *b = t->b;
  const int nq = t->n_q;
  ScStatus st;

  /* P (H, nq, n_k) into c->probs, o (nq, Q); causal, the layer's window; the edits; then
   * h = post_norm(o W_O^T): o is not touched again (the observer reads it, sc-arch.h) */
  if ((st = sc_layer_attend (t, true, window, err)) != SC_OK
      || (st = sc_layer_matmul (t, t->h, t->o, w->wo, nq, Q, E, false, err)) != SC_OK
      || (st = b->ops->rmsnorm (b, t->h, t->h, post_attn_norm, nq, E, in->norm_eps, err))
             != SC_OK
      || (st = b->ops->add (b, t->x, t->h, (size_t) nq * E, err)) != SC_OK
      || (st = sc_layer_save_mid (t, err)) != SC_OK /* the backward pass's tape */
      /* feed-forward block: h = norm(x), gu = h W_gate_up^T, GeGLU, its post-norm */
      || (st = sc_layer_gate_up (t, w, err)) != SC_OK
      || (st = sc_backend_geglu (b, t->act, t->gu, nq, F, err)) != SC_OK
      || (st = sc_layer_matmul (t, t->h, t->act, w->w_down, nq, F, E, false, err)) != SC_OK
      || (st = b->ops->rmsnorm (b, t->h, t->h, post_ffn_norm, nq, E, in->norm_eps, err))
             != SC_OK)
    return st;
  return b->ops->add (b, t->x, t->h, (size_t) nq * E, err);
}

ScStatus
sc_layer_gate_up (const ScLayerCtx *c, const ScLayerView *w, ScError *err)
{
  const ScModelInfo *in = c->info;
  const int E = (int) in->n_embd, F = (int) in->n_ff, nq = sc_layer_rows (c);
  ScStatus st = c->b->ops->rmsnorm (c->b, c->h, c->x, w->ffn_norm, nq, E, in->norm_eps, err);

  if (st == SC_OK)
    st = sc_layer_matmul (c, c->gu, c->h, w->w_gate_up, nq, E, 2 * F, false, err);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* Backward steps                                                                        */

ScStatus
sc_layer_attend_backward (const ScLayerGradCtx *c, int window, bool neox, float base,
                          ScError *err)
{
  const ScModelInfo *in = c->info;
  ScBackend *b = c->b;
  const int H = (int) in->n_heads, Hkv = (int) in->n_kv_heads, d = (int) in->head_dim,
            rot = (int) in->n_rot, n = c->n;
  const ScAttnParams ap = { .scale = in->attn_scale, .causal = true, .window = window,
                            .key_mask = c->key_mask, .head_scale = c->head_scale,
                            .softcap = in->attn_softcap };
  ScStatus st;

  if ((st = b->ops->attention_backward (b, c->dq, c->dk, c->dv, c->dprobs, c->dattn, c->q, c->k,
                                        c->v, c->probs, n, H, Hkv, d, &ap, c->detached, err))
      != SC_OK)
    return st;
  if (in->n_rope_freq > 0)
    {
      if ((st = sc_backend_rope_freq (b, c->dq, n, H, d, rot, 0, base, in->rope_freq, neox, true,
                                      err)) != SC_OK)
        return st;
      return sc_backend_rope_freq (b, c->dk, n, Hkv, d, rot, 0, base, in->rope_freq, neox, true,
                                   err);
    }
  if (neox)
    {
      if ((st = sc_backend_rope_neox_backward (b, c->dq, n, H, d, rot, 0, base, err)) != SC_OK)
        return st;
      return sc_backend_rope_neox_backward (b, c->dk, n, Hkv, d, rot, 0, base, err);
    }
  if ((st = b->ops->rope_backward (b, c->dq, n, H, d, rot, 0, base, err)) != SC_OK)
    return st;
  return b->ops->rope_backward (b, c->dk, n, Hkv, d, rot, 0, base, err);
}

ScStatus
sc_layer_qkv_backward (const ScLayerGradCtx *c, const ScLayerView *w, const float *dq,
                       const float *dk, ScError *err)
{
  const ScModelInfo *in = c->info;
  ScBackend *b = c->b;
  const int E = (int) in->n_embd, Q = (int) (in->n_heads * in->head_dim),
            KV = (int) (in->n_kv_heads * in->head_dim), n = c->n;
  ScStatus st;

  if ((st = b->ops->matmul_backward (b, c->dh, dq, w->w_qkv, n, E, Q, false, err)) != SC_OK
      || (st = b->ops->matmul_backward (b, c->dh, dk, w->w_qkv + (size_t) Q * E, n, E, KV, true,
                                        err)) != SC_OK
      || (st = b->ops->matmul_backward (b, c->dh, c->dv, w->w_qkv + (size_t) (Q + KV) * E, n, E,
                                        KV, true, err)) != SC_OK)
    return st;
  return b->ops->rmsnorm_backward (b, c->dx, c->dh, c->x_in, w->attn_norm, n, E, in->norm_eps,
                                   true, err);
}

ScStatus
sc_layer_gate_up_backward (const ScLayerGradCtx *c, const ScLayerView *w, ScError *err)
{
  const ScModelInfo *in = c->info;
  ScBackend *b = c->b;
  const int E = (int) in->n_embd, F = (int) in->n_ff, n = c->n;
  ScStatus st;

  if ((st = b->ops->matmul_backward (b, c->dh, c->dgu, w->w_gate_up, n, E, 2 * F, false, err))
      != SC_OK)
    return st;
  return b->ops->rmsnorm_backward (b, c->dx, c->dh, c->x_mid, w->ffn_norm, n, E, in->norm_eps,
                                   true, err);
}

ScStatus
sc_layer_qk_norm_backward (const ScLayerGradCtx *c, const ScLayerView *w, const float *q_norm,
                           const float *k_norm, float *q0, float *k0, float *dq0, float *dk0,
                           ScError *err)
{
  const ScModelInfo *in = c->info;
  ScBackend *b = c->b;
  const int E = (int) in->n_embd, H = (int) in->n_heads, Hkv = (int) in->n_kv_heads,
            d = (int) in->head_dim, Q = H * d, KV = Hkv * d, n = c->n;
  const float eps = in->norm_eps;
  ScStatus st;

  if ((st = b->ops->rmsnorm (b, c->dh, c->x_in, w->attn_norm, n, E, eps, err)) != SC_OK
      || (st = b->ops->matmul (b, q0, c->dh, w->w_qkv, n, E, Q, false, err)) != SC_OK
      || (st = b->ops->matmul (b, k0, c->dh, w->w_qkv + (size_t) Q * E, n, E, KV, false, err))
             != SC_OK
      || (st = b->ops->rmsnorm_backward (b, dq0, c->dq, q0, q_norm, n * H, d, eps, false, err))
             != SC_OK
      || (st = b->ops->rmsnorm_backward (b, dk0, c->dk, k0, k_norm, n * Hkv, d, eps, false,
                                         err)) != SC_OK)
    return st;
  return sc_layer_qkv_backward (c, w, dq0, dk0, err);
}

ScStatus
sc_layer_backward_swiglu_attend (const ScLayerGradCtx *c, const ScLayerView *w, bool neox,
                                 ScError *err)
{
  const ScModelInfo *in = c->info;
  ScBackend *b = c->b;
  const int E = (int) in->n_embd, Q = (int) (in->n_heads * in->head_dim), F = (int) in->n_ff,
            n = c->n;
  ScStatus st;

  if ((st = b->ops->matmul_backward (b, c->dact, c->dx, w->w_down, n, F, E, false, err)) != SC_OK
      || (st = b->ops->swiglu_backward (b, c->dgu, c->dact, c->gu, n, F, err)) != SC_OK
      || (st = sc_layer_gate_up_backward (c, w, err)) != SC_OK
      || (st = b->ops->matmul_backward (b, c->dattn, c->dx, w->wo, n, Q, E, false, err)) != SC_OK)
    return st;
  return sc_layer_attend_backward (c, (int) sc_model_layer_window (in, c->layer), neox,
                                   in->rope_base, err);
}

ScStatus
sc_layer_backward_geglu_post_attend (const ScLayerGradCtx *c, const ScLayerView *w,
                                     const float *post_attn_norm, const float *post_ffn_norm,
                                     ScError *err)
{
  const ScModelInfo *in = c->info;
  ScBackend *b = c->b;
  const int E = (int) in->n_embd, Q = (int) (in->n_heads * in->head_dim), F = (int) in->n_ff,
            n = c->n;
  const int window = (int) sc_model_layer_window (in, c->layer);
  const float base = window > 0 ? in->rope_base_local : in->rope_base, eps = in->norm_eps;
  ScStatus st;

  if (E > 2 * F)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "Gemma backward: n_embd %d does not fit its "
                         "scratch of 2 n_ff = %d", E, 2 * F);
  /* feed-forward block, from its post-norm */
  if ((st = sc_backend_geglu (b, c->dact, c->gu, n, F, err)) != SC_OK
      || (st = b->ops->matmul (b, c->dh, c->dact, w->w_down, n, F, E, false, err)) != SC_OK
      || (st = b->ops->rmsnorm_backward (b, c->dgu, c->dx, c->dh, post_ffn_norm, n, E, eps,
                                         false, err)) != SC_OK
      || (st = b->ops->matmul_backward (b, c->dact, c->dgu, w->w_down, n, F, E, false, err))
             != SC_OK
      || (st = sc_backend_geglu_backward (b, c->dgu, c->dact, c->gu, n, F, err)) != SC_OK
      || (st = sc_layer_gate_up_backward (c, w, err)) != SC_OK)
    return st;
  /* attention block, from its post-norm */
  if ((st = b->ops->matmul (b, c->dh, c->o, w->wo, n, Q, E, false, err)) != SC_OK
      || (st = b->ops->rmsnorm_backward (b, c->dgu, c->dx, c->dh, post_attn_norm, n, E, eps,
                                         false, err)) != SC_OK
      || (st = b->ops->matmul_backward (b, c->dattn, c->dgu, w->wo, n, Q, E, false, err))
             != SC_OK)
    return st;
  return sc_layer_attend_backward (c, window, true, base, err);
}

/* The forward read from the bottom up:
 *   feed-forward:  dact = dx Wd;  dgu = swiglu'(dact);  dh = dgu [Wg;Wu]
 *                  dx  += rmsnorm'(dh) at x_mid               (the residual passes dx on)
 *   attention:     do = dx Wo;  dq, dk, dv, dP = attention'(do)
 *                  dq, dk = rope^-1 (dq, dk)
 *                  dh = dq Wq + dk Wk + dv Wv                 (the fused rows of W_qkv)
 *                  dx  += rmsnorm'(dh) at x_in */
ScStatus
sc_layer_backward_swiglu (const ScLayerGradCtx *c, const ScLayerView *w, bool neox, ScError *err)
{
  ScStatus st = sc_layer_backward_swiglu_attend (c, w, neox, err);

  if (st != SC_OK)
    return st;
  return sc_layer_qkv_backward (c, w, c->dq, c->dk, err);
}
