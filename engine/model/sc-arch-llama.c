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
 * Q and K rows; docs/architecture.md). Llama 3.1 and later scale RoPE's frequencies: llama.cpp's
 * converter writes the per-pair factors as the tensor rope_freqs.weight (n_rot/2 values),
 * and pair c's angle pos * base^(-2c/n_rot) is divided by factor c (llama.cpp's
 * ggml_rope_ext with freq_factors; checked against Hugging Face's "llama3" rope_type in
 * float64, tests/reference/arch_ref_llama3.py). The embedding lookup and the output head are
 * the forward pass's (sc-forward.c), shared with every architecture.
 *
 * Mistral (7B v0.1) is a llama body whose every layer attends to the last sliding_window
 * keys only. llama.cpp's converter writes MistralForCausalLM as arch "llama" without the
 * window, and llama.cpp's llama runs every layer globally, so a real Mistral GGUF runs here
 * as it does there. A file that says "llama.attention.sliding_window" (the key llama.cpp's
 * converter writes for the families whose window llama.cpp applies) gets the window on every
 * layer, as Hugging Face's MistralForCausalLM applies it (tests/reference/arch_ref_mistral.py;
 * docs/models.md, "Mistral").
 *
 * What a llama file may hold that we refuse by name rather than run wrongly: any tensor
 * outside this table and the shared ones (sc_arch_check_tensors), a rope_freqs.weight of
 * another length than n_rot/2 or with a factor that is not finite and positive, a RoPE
 * scaling factor other than 1 (linear or YaRN scaling).
 */
#include "model/sc-arch.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

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

/* llama.cpp reads the shared keys for llama and, where the file has it, rope_freqs.weight
 * (LLM_TENSOR_ROPE_FREQS, shape {n_rot/2}); what else it would apply is refused here. */
static ScStatus
llama_read_hparams (const ScGguf *g, ScModelInfo *in, ScError *err)
{
  const ScGgufTensor *t = sc_gguf_find_tensor (g, "rope_freqs.weight");
  const int64_t half = in->n_rot / 2;
  char key[128];
  float factor = 1.0f;
  ScStatus st;

  snprintf (key, sizeof key, "%s.rope.scaling.factor", in->arch_name);
  if (sc_gguf_find_kv (g, key) != NULL && (st = sc_gguf_get_f32 (g, key, &factor, err)) != SC_OK)
    return st;
  if (factor != 1.0f && factor != 0.0f)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "key '%s' is %g: RoPE scaling by a factor "
                         "is not supported yet", key, (double) factor);
  /* Mistral's window on every layer: swa_pattern past the last layer leaves none global
   * (sc_model_layer_window) */
  snprintf (key, sizeof key, "%s.attention.sliding_window", in->arch_name);
  if (sc_gguf_find_kv (g, key) != NULL
      && (st = sc_gguf_get_u32 (g, key, &in->sliding_window, err)) != SC_OK)
    return st;
  if (in->sliding_window > in->n_ctx_train)
    return sc_error_set (err, SC_ERR_RANGE, "key '%s' is %u, larger than the context length "
                         "%u", key, in->sliding_window, in->n_ctx_train);
  in->swa_pattern = in->sliding_window > 0 ? in->n_layers + 1 : 0;
  in->rope_base_local = in->sliding_window > 0 ? in->rope_base : 0.0f;

  in->n_rope_freq = 0;
  if (t != NULL)
    {
      if (t->n_dims != 1 || t->ne[0] != half)
        return sc_error_set (err, SC_ERR_FORMAT, "tensor 'rope_freqs.weight' has %lld x %lld "
                             "values where rope.dimension_count %u needs %lld (one a RoPE pair)",
                             (long long) t->ne[0], (long long) t->ne[1], in->n_rot,
                             (long long) half);
      if (half > SC_MAX_ROPE_PAIRS)
        return sc_error_set (err, SC_ERR_UNSUPPORTED, "tensor 'rope_freqs.weight': %lld RoPE "
                             "pairs are more than the %d supported", (long long) half,
                             SC_MAX_ROPE_PAIRS);
      if ((st = sc_dequant_row (t->type, t->data, in->rope_freq, half, err)) != SC_OK)
        return sc_error_prefix (err, "tensor 'rope_freqs.weight'"), st;
      for (int64_t c = 0; c < half; c++)
        if (!(isfinite (in->rope_freq[c]) && in->rope_freq[c] > 0.0f))
          return sc_error_set (err, SC_ERR_FORMAT, "tensor 'rope_freqs.weight': factor %lld is "
                               "%g (a frequency factor must be finite and positive)",
                               (long long) c, (double) in->rope_freq[c]);
      in->n_rope_freq = (uint32_t) half;
    }
  return sc_arch_check_tensors (&sc_arch_llama, g, in, err);
}

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
  float *k_new = c->k_cache + (size_t) c->n_past * in->n_kv_heads * in->head_dim;
  ScStatus st;

  /* attention block: h = norm(x), qkv = h W_qkv^T split into q, and the new rows
   * past..n_k of the K, V cache; RoPE on adjacent pairs (with Llama 3's factors) */
  if ((st = sc_layer_qkv (c, w, err)) != SC_OK
      || (st = sc_layer_rope (c, c->q, (int) in->n_heads, err)) != SC_OK
      || (st = sc_layer_rope (c, k_new, (int) in->n_kv_heads, err)) != SC_OK)
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
  .read_hparams = llama_read_hparams,
  .bind_layer = llama_bind_layer,
  .layer = llama_layer,
  .layer_backward = llama_layer_backward,
  .stacks_sequences = true,
};
