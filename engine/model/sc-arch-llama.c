/* sc-arch-llama.c — the llama architecture (Llama, SmolLM2, TinyLlama, ...): its GGUF
 * tensor names and its layer function over the backend ops.
 *
 * Per layer l, for the n_q new rows of a run of n_k tokens (shapes as (rows, cols)):
 *   h     (n_q, E)  = rmsnorm(x) * attn_norm
 *   q|k|v (n_q, Q+2KV) = h [Wq;Wk;Wv]^T  (one fused product)   Q = H*d, KV = H_kv*d
 *   q, k            = rope(q), rope(k)                        adjacent pairs (GGUF)
 *   K, V  (n_k, KV) = the cache rows 0..n_past, then k, v      (the new rows)
 *   P     (H, n_q, n_k) = softmax(q K^T * scale) causal, masked  -> observer
 *   o     (n_q, Q)  = head_scale * P V                          per head, GQA
 *   P, o            = the intervention's edits of chosen heads   (edit_heads, if set)
 *   x    += o Wo^T
 *   h     (n_q, E)  = rmsnorm(x) * ffn_norm
 *   g|u   (n_q, 2F) = h [Wg;Wu]^T  (one fused product)
 *   x    += (silu(g) * u) Wd^T                                  (n_q, F) intermediate
 * RoPE on adjacent pairs is the GGUF convention for llama weights (the converter permutes
 * Q and K rows; docs/architecture.md). The embedding lookup and the output head are the
 * forward pass's (sc-forward.c), shared with every architecture.
 */
#include "model/sc-arch.h"

#include <stddef.h>

/* One layer's weights as the backend sees them: the shared view (sc-arch.h), nothing more. */
typedef ScLayerView LlamaLayer;

/* The order is load-bearing: the loader lays the tensors out in this order, so wq, wk, wv
 * and w_gate, w_up are back to back, which the fused projections need (bind_layer checks). */
static const ScArchTensor llama_tensors[] = {
  { "attn_norm.weight", offsetof (ScLayerWeights, attn_norm), SC_DIM_EMBD, SC_DIM_ONE },
  { "attn_q.weight", offsetof (ScLayerWeights, wq), SC_DIM_EMBD, SC_DIM_Q },
  { "attn_k.weight", offsetof (ScLayerWeights, wk), SC_DIM_EMBD, SC_DIM_KV },
  { "attn_v.weight", offsetof (ScLayerWeights, wv), SC_DIM_EMBD, SC_DIM_KV },
  { "attn_output.weight", offsetof (ScLayerWeights, wo), SC_DIM_Q, SC_DIM_EMBD },
  { "ffn_norm.weight", offsetof (ScLayerWeights, ffn_norm), SC_DIM_EMBD, SC_DIM_ONE },
  { "ffn_gate.weight", offsetof (ScLayerWeights, w_gate), SC_DIM_EMBD, SC_DIM_FF },
  { "ffn_up.weight", offsetof (ScLayerWeights, w_up), SC_DIM_EMBD, SC_DIM_FF },
  { "ffn_down.weight", offsetof (ScLayerWeights, w_down), SC_DIM_FF, SC_DIM_EMBD },
};

static ScStatus
llama_bind_layer (ScBackend *b, const ScModelInfo *in, const ScLayerWeights *w, void *view,
                  ScError *err)
{
  return sc_layer_bind_view (b, in, w, view, "llama", err);
}

static ScStatus
llama_layer (const ScLayerCtx *c, const void *view, ScError *err)
{
  const LlamaLayer *w = view;
  const ScModelInfo *in = c->info;
  ScBackend *b = c->b;
  const int H = (int) in->n_heads, Hkv = (int) in->n_kv_heads, d = (int) in->head_dim;
  const int nq = c->n_q, past = c->n_past;
  float *k_new = c->k_cache + (size_t) past * Hkv * d;
  ScStatus st;

  /* attention block: h = norm(x), qkv = h W_qkv^T split into q, and the new rows
   * past..n_k of the K, V cache; RoPE on adjacent pairs */
  if ((st = sc_layer_qkv (c, w, err)) != SC_OK
      || (st = b->ops->rope (b, c->q, nq, H, d, (int) in->n_rot, past, in->rope_base, err))
             != SC_OK
      || (st = b->ops->rope (b, k_new, nq, Hkv, d, (int) in->n_rot, past, in->rope_base, err))
             != SC_OK)
    return st;
  /* the rest on every row, or on the last n_tail: sc_layer_attend_swiglu (sc-arch.h) */
  return sc_layer_attend_swiglu (c, w, err);
}

/* The layer backward (sc-arch.h, ScLayerGradCtx): the forward read from the bottom up,
 * sc_layer_backward_swiglu with RoPE on adjacent pairs. */
static ScStatus
llama_layer_backward (const ScLayerGradCtx *c, const void *view, ScError *err)
{
  return sc_layer_backward_swiglu (c, view, false, err);
}

const ScArchDesc sc_arch_llama = {
  .name = "llama",
  .id = SC_ARCH_LLAMA,
  .tensors = llama_tensors,
  .n_tensors = (int) (sizeof llama_tensors / sizeof llama_tensors[0]),
  .main_tensor = "attn_q.weight",
  .layer_size = sizeof (LlamaLayer),
  .bind_layer = llama_bind_layer,
  .layer = llama_layer,
  .layer_backward = llama_layer_backward,
};
