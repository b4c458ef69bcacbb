/* sc-arch-qwen3.c — the Qwen3 architecture (GGUF "qwen3": Qwen3 dense models): its GGUF
 * tensor names, its hyperparameter checks and its layer function.
 *
 * Transcribed from llama.cpp (src/models/qwen3.cpp and conversion/qwen.py's Qwen3Model as
 * vendored by llama-cpp-python 0.3.36) and checked against Hugging Face's Qwen3ForCausalLM in
 * float64 (tests/reference/arch_ref_qwen3.py). Qwen2's body without its Q, K, V biases and
 * with a per-head RMSNorm of queries and keys (QK-norm) before RoPE:
 *   h     (n_q, E)  = rmsnorm(x) * attn_norm
 *   q|k|v (n_q, Q+2KV) = h [Wq;Wk;Wv]^T  (one fused product)   Q = H*d, KV = H_kv*d
 *   q, k            = rmsnorm(q) * attn_q_norm, rmsnorm(k) * attn_k_norm, each head's d
 *                     values a row of their own
 *   q, k            = rope_neox(q), rope_neox(k)               pairs (i, i + d/2)
 *   P     (H, n_q, n_k) = softmax(q K^T / sqrt(d)) causal, masked -> observer
 *   o     (n_q, Q)  = head_scale * P V; the intervention's edits (edit_heads)
 *   x    += o Wo^T
 *   x    += (silu(h' Wg^T) * h' Wu^T) Wd^T,  h' = rmsnorm(x) * ffn_norm
 * head_dim comes from qwen3.attention.key_length and may differ from n_embd / heads (it does
 * in every Qwen3: 128 for 1024 / 16 in the 0.6B). The embedding lookup and the output head
 * are the forward pass's (sc-forward.c).
 *
 * What a qwen3 file may hold that we refuse by name rather than run wrongly: any tensor
 * outside this table and the shared ones (biases included; sc_arch_check_tensors), RoPE
 * scaling with a factor other than 1.
 *
 * The backward is llama's with the QK-norm's between the attention's and the projections'
 * (qwen3_layer_backward), checked against torch autograd through transformers on the same
 * weights (test-qwen3-model).
 */
#include "model/sc-arch.h"

#include <stddef.h>
#include <stdio.h>

/* One layer's weights as the backend sees them: the shared view, then the QK-norm weights. */
typedef struct {
  ScLayerView base;           /* attn_norm, w_qkv, wo, ffn_norm, w_gate_up, w_down */
  const float *q_norm, *k_norm; /* (d) each */
} Qwen3Layer;

/* In arena order: wq, wk, wv and w_gate, w_up back to back (bind_layer checks). */
static const ScArchTensor qwen3_tensors[] = {
  { "attn_norm.weight", offsetof (ScLayerWeights, attn_norm), SC_DIM_EMBD, SC_DIM_ONE },
  { "attn_q.weight", offsetof (ScLayerWeights, wq), SC_DIM_EMBD, SC_DIM_Q },
  { "attn_k.weight", offsetof (ScLayerWeights, wk), SC_DIM_EMBD, SC_DIM_KV },
  { "attn_v.weight", offsetof (ScLayerWeights, wv), SC_DIM_EMBD, SC_DIM_KV },
  { "attn_q_norm.weight", offsetof (ScLayerWeights, attn_q_norm), SC_DIM_HEAD, SC_DIM_ONE },
  { "attn_k_norm.weight", offsetof (ScLayerWeights, attn_k_norm), SC_DIM_HEAD, SC_DIM_ONE },
  { "attn_output.weight", offsetof (ScLayerWeights, wo), SC_DIM_Q, SC_DIM_EMBD },
  { "ffn_norm.weight", offsetof (ScLayerWeights, ffn_norm), SC_DIM_EMBD, SC_DIM_ONE },
  { "ffn_gate.weight", offsetof (ScLayerWeights, w_gate), SC_DIM_EMBD, SC_DIM_FF },
  { "ffn_up.weight", offsetof (ScLayerWeights, w_up), SC_DIM_EMBD, SC_DIM_FF },
  { "ffn_down.weight", offsetof (ScLayerWeights, w_down), SC_DIM_FF, SC_DIM_EMBD },
};

/* llama.cpp reads only the shared keys for qwen3; what it would apply that the shared head
 * and RoPE do not is refused here. */
static ScStatus
qwen3_read_hparams (const ScGguf *g, ScModelInfo *in, ScError *err)
{
  char key[128];
  float factor = 1.0f;
  ScStatus st;

  snprintf (key, sizeof key, "%s.rope.scaling.factor", in->arch_name);
  if (sc_gguf_find_kv (g, key) != NULL && (st = sc_gguf_get_f32 (g, key, &factor, err)) != SC_OK)
    return st;
  if (factor != 1.0f && factor != 0.0f)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "key '%s' is %g: RoPE scaling is not "
                         "supported yet", key, (double) factor);
  return sc_arch_check_tensors (&sc_arch_qwen3, g, in, err);
}

static ScStatus
qwen3_bind_layer (ScBackend *b, const ScModelInfo *in, const ScLayerWeights *w, void *view,
                  ScError *err)
{
  Qwen3Layer *v = view;
  ScStatus st;

  if ((st = sc_layer_bind_view (b, in, w, &v->base, "qwen3", err)) != SC_OK
      || (st = sc_layer_bind_weight (b, &v->q_norm, w->attn_q_norm, in->head_dim, err)) != SC_OK
      || (st = sc_layer_bind_weight (b, &v->k_norm, w->attn_k_norm, in->head_dim, err)) != SC_OK)
    return st;
  return SC_OK;
}

static ScStatus
qwen3_layer (const ScLayerCtx *c, const void *view, ScError *err)
{
  const Qwen3Layer *w = view;
  ScStatus st;

  /* attention block: h = norm(x), qkv = h W_qkv^T split into q and the new cache rows;
   * QK-norm: each head's d values are a row of their own; then RoPE on NeoX pairs */
  if ((st = sc_layer_qkv (c, &w->base, err)) != SC_OK
      || (st = sc_layer_qk_norm_rope (c, w->q_norm, w->k_norm, c->info->rope_base, err))
             != SC_OK)
    return st;
  /* the rest is llama's, on every row or on the last n_tail (sc_layer_tail) */
  return sc_layer_attend_swiglu (c, &w->base, err);
}

/* The layer backward (sc-arch.h, ScLayerGradCtx), the forward read from the bottom up:
 *   feed-forward:  dact = dx Wd;  dgu = swiglu'(dact);  dx += rmsnorm'(dgu [Wg;Wu]) at x_mid
 *   attention:     do = dx Wo;  dq, dk, dv, dP = attention'(do);  dq, dk = rope_neox^-1
 *                  q0, k0 = (rmsnorm(x_in) * attn_norm) Wq^T, Wk^T          (recomputed)
 *                  dq0, dk0 = rmsnorm'(dq) at q0 with q_norm, at k0 with k_norm, per head
 *                  dh = dq0 Wq + dk0 Wk + dv Wv;  dx += rmsnorm'(dh) at x_in
 * Scratch: q0 in dattn (n, Q) and k0 in dact (n, F), both free once the attention's
 * backward has run; dq0, dk0 back to back in dgu (n, 2F). That needs KV <= F and
 * Q + KV <= 2F (every Qwen3: the 0.6B has Q 2048, KV 1024, F 3072). */
static ScStatus
qwen3_layer_backward (const ScLayerGradCtx *c, const void *view, ScError *err)
{
  const Qwen3Layer *w = view;
  const ScModelInfo *in = c->info;
  const int Q = (int) (in->n_heads * in->head_dim), KV = (int) (in->n_kv_heads * in->head_dim),
            F = (int) in->n_ff;
  float *dq0 = c->dgu, *dk0 = c->dgu + (size_t) c->n * Q;
  ScStatus st;

  if (KV > F || Q + KV > 2 * F)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "qwen3 backward: queries %d and keys %d do "
                         "not fit its scratch of n_ff %d (needs keys <= n_ff and queries + "
                         "keys <= 2 n_ff)", Q, KV, F);
  if ((st = sc_layer_backward_swiglu_attend (c, &w->base, true, err)) != SC_OK)
    return st;
  /* QK-norm: its inputs again, then its backward per head, then the block's start */
  return sc_layer_qk_norm_backward (c, &w->base, w->q_norm, w->k_norm, c->dattn, c->dact, dq0,
                                    dk0, err);
}

const ScArchDesc sc_arch_qwen3 = {
  .name = "qwen3",
  .id = SC_ARCH_QWEN3,
  .tensors = qwen3_tensors,
  .n_tensors = (int) (sizeof qwen3_tensors / sizeof qwen3_tensors[0]),
  .main_tensor = "attn_q.weight",
  .layer_size = sizeof (Qwen3Layer),
  .read_hparams = qwen3_read_hparams,
  .bind_layer = qwen3_bind_layer,
  .layer = qwen3_layer,
  .layer_backward = qwen3_layer_backward,
};
