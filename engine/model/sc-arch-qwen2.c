/* sc-arch-qwen2.c — the Qwen2 architecture (GGUF "qwen2": Qwen2, Qwen2.5, Qwen2.5-Coder):
 * its GGUF tensor names, its hyperparameter checks and its layer function.
 *
 * Transcribed from llama.cpp (src/models/qwen2.cpp as vendored by llama-cpp-python 0.3.36:
 * the graph and the tensors, llama_model_base::create_tensor_qkv for the biases,
 * llama_model_rope_type: LLM_ARCH_QWEN2 rotates NeoX pairs); docs/models.md says what
 * differs from llama. It is llama's block with biases on the Q, K and V projections and
 * RoPE on split halves:
 *   h     (n_q, E)  = rmsnorm(x) * attn_norm
 *   q|k|v (n_q, Q+2KV) = h [Wq;Wk;Wv]^T  (one fused product)   Q = H*d, KV = H_kv*d
 *   q, k, v        += bq, bk, bv                               (one bias row each)
 *   q, k            = rope_neox(q), rope_neox(k)               pairs (i, i + d/2)
 *   K, V  (n_k, KV) = the cache rows 0..n_past, then k, v      (the new rows)
 *   P     (H, n_q, n_k) = softmax(q K^T / sqrt(d)) causal, masked -> observer
 *   o     (n_q, Q)  = head_scale * P V; the intervention's edits (edit_heads)
 *   x    += o Wo^T                                             (no output bias)
 *   h     (n_q, E)  = rmsnorm(x) * ffn_norm
 *   g|u   (n_q, 2F) = h [Wg;Wu]^T
 *   x    += (silu(g) * u) Wd^T
 * The embedding lookup and the output head (output_norm, then output.weight, or token_embd
 * when the file has no output.weight) are the forward pass's (sc-forward.c). The value bias
 * rides in the cached values, so every head's output o carries it as llama.cpp's does.
 *
 * What a qwen2 file may hold that we refuse by name rather than run wrongly: a fused
 * attn_qkv tensor or missing Q, K, V biases (the tensors below are required), an output bias
 * (output.bias), any other tensor outside the table below and the shared ones
 * (sc_arch_check_tensors), RoPE scaling with a factor other than 1.
 *
 * The backward is llama's (sc_layer_backward_swiglu) with NeoX RoPE: the biases are
 * constants added to q, k and v, so the gradients with respect to the projections' outputs
 * are those with respect to q, k and v themselves.
 */
#include "model/sc-arch.h"

#include <stddef.h>
#include <stdio.h>

/* One layer's weights as the backend sees them: the shared view (sc-arch.h), then the
 * attention biases. */
typedef struct {
  ScLayerView base;             /* attn_norm, w_qkv, wo, ffn_norm, w_gate_up, w_down */
  const float *bq, *bk, *bv;    /* (Q), (KV), (KV) */
} Qwen2Layer;

/* In arena order: wq, wk, wv and w_gate, w_up back to back (bind_layer checks); the biases
 * after the weights they belong to, outside both runs. */
static const ScArchTensor qwen2_tensors[] = {
  { "attn_norm.weight", offsetof (ScLayerWeights, attn_norm), SC_DIM_EMBD, SC_DIM_ONE },
  { "attn_q.weight", offsetof (ScLayerWeights, wq), SC_DIM_EMBD, SC_DIM_Q },
  { "attn_k.weight", offsetof (ScLayerWeights, wk), SC_DIM_EMBD, SC_DIM_KV },
  { "attn_v.weight", offsetof (ScLayerWeights, wv), SC_DIM_EMBD, SC_DIM_KV },
  { "attn_q.bias", offsetof (ScLayerWeights, bq), SC_DIM_Q, SC_DIM_ONE },
  { "attn_k.bias", offsetof (ScLayerWeights, bk), SC_DIM_KV, SC_DIM_ONE },
  { "attn_v.bias", offsetof (ScLayerWeights, bv), SC_DIM_KV, SC_DIM_ONE },
  { "attn_output.weight", offsetof (ScLayerWeights, wo), SC_DIM_Q, SC_DIM_EMBD },
  { "ffn_norm.weight", offsetof (ScLayerWeights, ffn_norm), SC_DIM_EMBD, SC_DIM_ONE },
  { "ffn_gate.weight", offsetof (ScLayerWeights, w_gate), SC_DIM_EMBD, SC_DIM_FF },
  { "ffn_up.weight", offsetof (ScLayerWeights, w_up), SC_DIM_EMBD, SC_DIM_FF },
  { "ffn_down.weight", offsetof (ScLayerWeights, w_down), SC_DIM_FF, SC_DIM_EMBD },
};

/* llama.cpp reads only the shared keys for qwen2 (llama_model_qwen2::load_arch_hparams);
 * what it would apply that the shared head and RoPE do not is refused here. */
static ScStatus
qwen2_read_hparams (const ScGguf *g, ScModelInfo *in, ScError *err)
{
  char key[128];
  float factor = 1.0f;
  ScStatus st;

  if (sc_gguf_find_tensor (g, "output.bias") != NULL)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "tensor 'output.bias' (a bias on the "
                         "output head) is not supported");
  snprintf (key, sizeof key, "%s.rope.scaling.factor", in->arch_name);
  if (sc_gguf_find_kv (g, key) != NULL && (st = sc_gguf_get_f32 (g, key, &factor, err)) != SC_OK)
    return st;
  if (factor != 1.0f && factor != 0.0f)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "key '%s' is %g: RoPE scaling is not "
                         "supported yet", key, (double) factor);
  /* a tensor outside the table (and the shared ones) would be ignored: refused by name */
  return sc_arch_check_tensors (&sc_arch_qwen2, g, in, err);
}

static ScStatus
qwen2_bind_layer (ScBackend *b, const ScModelInfo *in, const ScLayerWeights *w, void *view,
                  ScError *err)
{
  const size_t Q = (size_t) in->n_heads * in->head_dim,
               KV = (size_t) in->n_kv_heads * in->head_dim;
  Qwen2Layer *v = view;
  ScStatus st;

  if ((st = sc_layer_bind_view (b, in, w, &v->base, "qwen2", err)) != SC_OK
      || (st = sc_layer_bind_weight (b, &v->bq, w->bq, Q, err)) != SC_OK
      || (st = sc_layer_bind_weight (b, &v->bk, w->bk, KV, err)) != SC_OK
      || (st = sc_layer_bind_weight (b, &v->bv, w->bv, KV, err)) != SC_OK)
    return st;
  return SC_OK;
}

static ScStatus
qwen2_layer (const ScLayerCtx *c, const void *view, ScError *err)
{
  const Qwen2Layer *w = view;
  const ScModelInfo *in = c->info;
  ScBackend *b = c->b;
  const int H = (int) in->n_heads, Hkv = (int) in->n_kv_heads, d = (int) in->head_dim,
            Q = H * d, KV = Hkv * d;
  const int nq = c->n_q, past = c->n_past;
  float *k_new = c->k_cache + (size_t) past * KV, *v_new = c->v_cache + (size_t) past * KV;
  ScStatus st;

  /* attention block: h = norm(x), qkv = h W_qkv^T split into q, and the new rows
   * past..n_k of the K, V cache; then the biases, before RoPE (llama.cpp's build_qkv) */
  if ((st = sc_layer_qkv (c, &w->base, err)) != SC_OK
      || (st = sc_backend_add_bias (b, c->q, w->bq, nq, Q, err)) != SC_OK
      || (st = sc_backend_add_bias (b, k_new, w->bk, nq, KV, err)) != SC_OK
      || (st = sc_backend_add_bias (b, v_new, w->bv, nq, KV, err)) != SC_OK
      || (st = sc_backend_rope_neox (b, c->q, nq, H, d, (int) in->n_rot, past, in->rope_base,
                                     err)) != SC_OK
      || (st = sc_backend_rope_neox (b, k_new, nq, Hkv, d, (int) in->n_rot, past, in->rope_base,
                                     err)) != SC_OK)
    return st;
  /* the rest is llama's, on every row or on the last n_tail (sc_layer_tail) */
  return sc_layer_attend_swiglu (c, &w->base, err);
}

/* The layer backward (sc-arch.h, ScLayerGradCtx): llama's, RoPE on NeoX pairs. */
static ScStatus
qwen2_layer_backward (const ScLayerGradCtx *c, const void *view, ScError *err)
{
  const Qwen2Layer *w = view;

  return sc_layer_backward_swiglu (c, &w->base, true, err);
}

const ScArchDesc sc_arch_qwen2 = {
  .name = "qwen2",
  .id = SC_ARCH_QWEN2,
  .tensors = qwen2_tensors,
  .n_tensors = (int) (sizeof qwen2_tensors / sizeof qwen2_tensors[0]),
  .main_tensor = "attn_q.weight",
  .layer_size = sizeof (Qwen2Layer),
  .read_hparams = qwen2_read_hparams,
  .bind_layer = qwen2_bind_layer,
  .layer = qwen2_layer,
  .layer_backward = qwen2_layer_backward,
};
