/* sc-arch-phi3.c — the Phi-3 architecture (GGUF "phi3": Phi-3 mini and medium at 4k context,
 * Phi-4-mini): its GGUF tensor names, its hyperparameter checks and its layer function.
 *
 * Transcribed from llama.cpp (src/models/phi3.cpp and conversion/phi.py's Phi3MiniModel as
 * vendored by llama-cpp-python 0.3.36) and checked against Hugging Face's Phi3ForCausalLM in
 * float64 (tests/reference/arch_ref_phi3.py). llama's block with two fused tensors and NeoX
 * RoPE:
 *   h     (n_q, E)  = rmsnorm(x) * attn_norm
 *   q|k|v (n_q, Q+2KV) = h Wqkv^T          attn_qkv: one tensor, Q = H*d = E, KV = H_kv*d
 *   q, k            = rope_neox(q), rope_neox(k)   pairs (i, i + n_rot/2) of the first n_rot
 *                                                  dims (Phi-4-mini rotates 3/4 of each head)
 *   P     (H, n_q, n_k) = softmax(q K^T / sqrt(d)) causal, within sliding_window keys when
 *                     the file has one -> observer
 *   o     (n_q, Q)  = head_scale * P V; the intervention's edits (edit_heads)
 *   x    += o Wo^T
 *   g|u   (n_q, 2F) = (rmsnorm(x) * ffn_norm) Wup^T  ffn_up: one tensor, the gate's F rows
 *                                                  first (Hugging Face's Phi3MLP chunks
 *                                                  gate_up_proj's output into gate, up;
 *                                                  llama.cpp's LLM_FFN_SWIGLU on the fused
 *                                                  ffn_up gates with the first half)
 *   x    += (silu(g) * u) Wd^T
 * The loader puts attn_qkv in wq and ffn_up in w_gate and points wk, wv and w_up at their
 * rows (sc-model.c), so the layer is the shared llama block's (ScLayerView) and so is its
 * backward: RoPE on NeoX pairs is the only difference from llama.
 *
 * The sliding window: the converter writes phi3.attention.sliding_window (2047 for Phi-3
 * mini 4k; 0 for Phi-4, which has none). Hugging Face's Phi3 masks every layer to that
 * window; llama.cpp's phi3 reads the key and then disables it ("Phi SWA is currently
 * disabled - results might be suboptimal", PR 13676), running every layer globally. We
 * apply it as Hugging Face does, on every layer (sc_model_layer_window), so past the window
 * Saccade and llama.cpp differ on the same file; a window at or past the context length
 * changes nothing and is dropped (docs/models.md, "Phi-3").
 *
 * What a phi3 file may hold that we refuse by name rather than run wrongly: LongRoPE (the
 * 128k models: rope_factors_long / rope_factors_short tensors and
 * phi3.rope.scaling.attn_factor), RoPE scaling by a factor, separate attn_q / attn_k / attn_v
 * or ffn_gate tensors (llama.cpp accepts them; its converter never writes them) and any
 * other tensor outside this table and the shared ones (sc_arch_check_tensors), a head size
 * times heads other than n_embd (llama.cpp's phi3 assumes it).
 */
#include "model/sc-arch.h"

#include <stddef.h>
#include <stdio.h>

/* One layer's weights as the backend sees them: the shared view, nothing more. */
typedef ScLayerView Phi3Layer;

/* convert_hf_to_gguf.py's names (gguf-py's MODEL_TENSORS[MODEL_ARCH.PHI3]); the fused
 * attn_qkv goes into wq and ffn_up into w_gate, which the loader splits (sc-model.c). */
static const ScArchTensor phi3_tensors[] = {
  { "attn_norm.weight", offsetof (ScLayerWeights, attn_norm), SC_DIM_EMBD, SC_DIM_ONE },
  { "attn_qkv.weight", offsetof (ScLayerWeights, wq), SC_DIM_EMBD, SC_DIM_QKV },
  { "attn_output.weight", offsetof (ScLayerWeights, wo), SC_DIM_Q, SC_DIM_EMBD },
  { "ffn_norm.weight", offsetof (ScLayerWeights, ffn_norm), SC_DIM_EMBD, SC_DIM_ONE },
  { "ffn_up.weight", offsetof (ScLayerWeights, w_gate), SC_DIM_EMBD, SC_DIM_FF2 },
  { "ffn_down.weight", offsetof (ScLayerWeights, w_down), SC_DIM_FF, SC_DIM_EMBD },
};

/* llama.cpp's phi3 hparams: the shared keys, the RMS epsilon, and the window it reads and
 * drops; what it would apply that the shared RoPE does not (LongRoPE) is refused here. */
static ScStatus
phi3_read_hparams (const ScGguf *g, ScModelInfo *in, ScError *err)
{
  static const char *const long_rope[] = { "rope_factors_long.weight",
                                           "rope_factors_short.weight" };
  char key[128];
  float factor = 1.0f;
  ScStatus st;

  for (size_t i = 0; i < sizeof long_rope / sizeof long_rope[0]; i++)
    if (sc_gguf_find_tensor (g, long_rope[i]) != NULL)
      return sc_error_set (err, SC_ERR_UNSUPPORTED, "tensor '%s': Phi-3's LongRoPE (the "
                           "128k-context models) is not supported", long_rope[i]);
  snprintf (key, sizeof key, "%s.rope.scaling.attn_factor", in->arch_name);
  if (sc_gguf_find_kv (g, key) != NULL && (st = sc_gguf_get_f32 (g, key, &factor, err)) != SC_OK)
    return st;
  if (factor != 1.0f)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "key '%s' is %g: LongRoPE's attention "
                         "factor is not supported", key, (double) factor);
  snprintf (key, sizeof key, "%s.rope.scaling.factor", in->arch_name);
  if (sc_gguf_find_kv (g, key) != NULL && (st = sc_gguf_get_f32 (g, key, &factor, err)) != SC_OK)
    return st;
  if (factor != 1.0f && factor != 0.0f)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "key '%s' is %g: RoPE scaling by a factor "
                         "is not supported yet", key, (double) factor);
  if ((uint64_t) in->head_dim * in->n_heads != in->n_embd)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "phi3 with head size %u x %u heads other "
                         "than embedding_length %u is not supported (llama.cpp's phi3 assumes "
                         "them equal)", in->head_dim, in->n_heads, in->n_embd);

  /* Hugging Face's window on every layer: swa_pattern past the last layer leaves none
   * global (sc_model_layer_window); 0 (Phi-4) is none */
  snprintf (key, sizeof key, "%s.attention.sliding_window", in->arch_name);
  if (sc_gguf_find_kv (g, key) != NULL
      && (st = sc_gguf_get_u32 (g, key, &in->sliding_window, err)) != SC_OK)
    return st;
  if (in->sliding_window >= in->n_ctx_train)
    in->sliding_window = 0; /* no run can be longer than the window: it masks nothing */
  in->swa_pattern = in->sliding_window > 0 ? in->n_layers + 1 : 0;
  in->rope_base_local = in->sliding_window > 0 ? in->rope_base : 0.0f;
  return sc_arch_check_tensors (&sc_arch_phi3, g, in, err);
}

static ScStatus
phi3_bind_layer (ScBackend *b, const ScModelInfo *in, const ScLayerWeights *w, void *view,
                 ScError *err)
{
  return sc_layer_bind_view (b, in, w, view, "phi3", err);
}

static ScStatus
phi3_layer (const ScLayerCtx *c, const void *view, ScError *err)
{
  const Phi3Layer *w = view;
  const ScModelInfo *in = c->info;
  const int H = (int) in->n_heads, Hkv = (int) in->n_kv_heads, d = (int) in->head_dim,
            rot = (int) in->n_rot;
  float *k_new = c->k_cache + (size_t) c->n_past * Hkv * d;
  ScStatus st;

  /* attention block: h = norm(x), qkv = h W_qkv^T split into q and the new cache rows;
   * RoPE on NeoX pairs of the first n_rot dims */
  if ((st = sc_layer_qkv (c, w, err)) != SC_OK
      || (st = sc_backend_rope_neox (c->b, c->q, c->n_q, H, d, rot, c->n_past, in->rope_base,
                                     err)) != SC_OK
      || (st = sc_backend_rope_neox (c->b, k_new, c->n_q, Hkv, d, rot, c->n_past, in->rope_base,
                                     err)) != SC_OK)
    return st;
  /* the rest is llama's (its window: sc_model_layer_window), on every row or on the last
   * n_tail (sc_layer_tail) */
  return sc_layer_attend_swiglu (c, w, err);
}

/* The layer backward (sc-arch.h, ScLayerGradCtx): llama's, with RoPE on NeoX pairs. */
static ScStatus
phi3_layer_backward (const ScLayerGradCtx *c, const void *view, ScError *err)
{
  return sc_layer_backward_swiglu (c, view, true, err);
}

const ScArchDesc sc_arch_phi3 = {
  .name = "phi3",
  .id = SC_ARCH_PHI3,
  .tensors = phi3_tensors,
  .n_tensors = (int) (sizeof phi3_tensors / sizeof phi3_tensors[0]),
  .main_tensor = "attn_qkv.weight",
  .layer_size = sizeof (Phi3Layer),
  .read_hparams = phi3_read_hparams,
  .bind_layer = phi3_bind_layer,
  .layer = phi3_layer,
  .layer_backward = phi3_layer_backward,
};
