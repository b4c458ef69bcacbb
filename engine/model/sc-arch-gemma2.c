/* sc-arch-gemma2.c — the Gemma 2 architecture (GGUF "gemma2": Gemma 2 2B, 9B, 27B): its
 * hyperparameter rules, GGUF tensor names and layer function.
 *
 * Transcribed from llama.cpp (src/models/gemma2.cpp and conversion/gemma.py's Gemma2Model as
 * vendored by llama-cpp-python 0.3.36) and checked against Hugging Face's Gemma2ForCausalLM
 * in float64 (tests/reference/arch_ref_gemma2.py). Gemma 3's block without its QK-norm, with
 * the attention scores and the final logits soft-capped:
 *   h     (n_q, E)  = rmsnorm(x) * attn_norm
 *   q|k|v (n_q, Q+2KV) = h [Wq;Wk;Wv]^T  (one fused product)   Q = H*d, KV = H_kv*d
 *   q, k            = rope_neox(q, k)  (rope_base; freq_base_swa on a local layer)
 *   s               = q K^T * attn_scale;  s = attn_softcap * tanh(s / attn_softcap)
 *   P     (H, n_q, n_k) = softmax(s) causal, and on a local layer (every even one: layer l
 *                     is global when l + 1 is a multiple of the pattern, 2) a sliding
 *                     window of sliding_window keys                -> observer
 *   o     (n_q, Q)  = head_scale * P V; the intervention's edits (edit_heads)
 *   x    += rmsnorm(o Wo^T) * post_attention_norm
 *   g|u   (n_q, 2F) = (rmsnorm(x) * ffn_norm) [Wg;Wu]^T
 *   x    += rmsnorm((gelu_tanh(g) * u) Wd^T) * post_ffw_norm
 * The embeddings entering layer 0 are scaled by sqrt(E) (ScModelInfo.embd_scale); the output
 * head is the shared one (tied token_embd) followed by the final soft-capping,
 * logits = final_softcap * tanh(logits / final_softcap) (ScModelInfo.final_softcap,
 * sc-forward.c). Norm weights are used as stored: the converter added Gemma's "1 +".
 *
 * The backward (gemma2_layer_backward) is Gemma 3's without the QK-norm; the attention op's
 * backward caps as its forward did (the raw scores recomputed from q and k) and
 * sc-backward.c undoes the final soft-capping. DLA (soft-capped logits are not a sum of
 * parts), QK attribution (nor is a capped score) and the neuron view refuse gemma2 by name.
 */
#include "model/sc-arch.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

/* llama.cpp's defaults for a gemma2 file that does not say (src/models/gemma2.cpp): a
 * window of 4096, every second layer global. */
#define GEMMA2_DEFAULT_WINDOW 4096u
#define GEMMA2_DEFAULT_SWA_PATTERN 2u
/* The one Gemma 2 whose attention scale is 1/sqrt(n_embd / n_heads) instead of
 * 1/sqrt(head_dim): the 27B model, which llama.cpp recognises by its 46 layers. */
#define GEMMA2_27B_LAYERS 46u

/* One layer's weights as the backend sees them: the shared view, then the post-norms. */
typedef struct {
  ScLayerView base;            /* attn_norm, w_qkv, wo, ffn_norm, w_gate_up, w_down */
  const float *post_attn_norm; /* (E) */
  const float *post_ffn_norm;  /* (E) */
} Gemma2Layer;

/* In arena order: wq, wk, wv and w_gate, w_up back to back (bind_layer checks). */
static const ScArchTensor gemma2_tensors[] = {
  { "attn_norm.weight", offsetof (ScLayerWeights, attn_norm), SC_DIM_EMBD, SC_DIM_ONE },
  { "attn_q.weight", offsetof (ScLayerWeights, wq), SC_DIM_EMBD, SC_DIM_Q },
  { "attn_k.weight", offsetof (ScLayerWeights, wk), SC_DIM_EMBD, SC_DIM_KV },
  { "attn_v.weight", offsetof (ScLayerWeights, wv), SC_DIM_EMBD, SC_DIM_KV },
  { "attn_output.weight", offsetof (ScLayerWeights, wo), SC_DIM_Q, SC_DIM_EMBD },
  { "post_attention_norm.weight", offsetof (ScLayerWeights, post_attn_norm), SC_DIM_EMBD,
    SC_DIM_ONE },
  { "ffn_norm.weight", offsetof (ScLayerWeights, ffn_norm), SC_DIM_EMBD, SC_DIM_ONE },
  { "ffn_gate.weight", offsetof (ScLayerWeights, w_gate), SC_DIM_EMBD, SC_DIM_FF },
  { "ffn_up.weight", offsetof (ScLayerWeights, w_up), SC_DIM_EMBD, SC_DIM_FF },
  { "ffn_down.weight", offsetof (ScLayerWeights, w_down), SC_DIM_FF, SC_DIM_EMBD },
  { "post_ffw_norm.weight", offsetof (ScLayerWeights, post_ffn_norm), SC_DIM_EMBD, SC_DIM_ONE },
};

/* An optional positive float key "<arch>.@name" into *@out (left as is when absent). */
static ScStatus
get_positive (const ScGguf *g, const ScModelInfo *in, const char *name, float *out, ScError *err)
{
  char key[128];
  ScStatus st;

  snprintf (key, sizeof key, "%s.%s", in->arch_name, name);
  if (sc_gguf_find_kv (g, key) == NULL)
    return SC_OK;
  if ((st = sc_gguf_get_f32 (g, key, out, err)) != SC_OK)
    return st;
  if (!(isfinite (*out) && *out > 0.0f))
    return sc_error_set (err, SC_ERR_RANGE, "key '%s' is %g (expected a positive number)", key,
                         (double) *out);
  return SC_OK;
}

/* The keys llama.cpp reads for LLM_ARCH_GEMMA2, with its defaults and our checks. */
static ScStatus
gemma2_read_hparams (const ScGguf *g, ScModelInfo *in, ScError *err)
{
  char key[128];
  uint32_t window = GEMMA2_DEFAULT_WINDOW, pattern = GEMMA2_DEFAULT_SWA_PATTERN;
  float base_local = in->rope_base, attn_cap = 0.0f, final_cap = 0.0f, factor = 1.0f;
  const ScGgufKv *kv;
  ScStatus st;

  snprintf (key, sizeof key, "%s.attention.sliding_window", in->arch_name);
  if (sc_gguf_find_kv (g, key) != NULL && (st = sc_gguf_get_u32 (g, key, &window, err)) != SC_OK)
    return st;
  /* a window at least the context long masks nothing; 0 would mask every key */
  if (window == 0)
    return sc_error_set (err, SC_ERR_RANGE, "key '%s' is 0 (expected a window of at least one "
                         "key)", key);
  snprintf (key, sizeof key, "%s.attention.sliding_window_pattern", in->arch_name);
  if ((kv = sc_gguf_find_kv (g, key)) != NULL)
    {
      if (kv->type == SC_GGUF_TYPE_ARRAY)
        return sc_error_set (err, SC_ERR_UNSUPPORTED, "key '%s' is a per-layer array; only "
                             "a number (every n-th layer global) is supported", key);
      if ((st = sc_gguf_get_u32 (g, key, &pattern, err)) != SC_OK)
        return st;
      if (pattern == 0 || pattern > in->n_layers)
        return sc_error_set (err, SC_ERR_RANGE, "key '%s' is %u: with %u layers, expected 1 "
                             "to %u (every n-th layer global)", key, pattern, in->n_layers,
                             in->n_layers);
    }
  if ((st = get_positive (g, in, "rope.freq_base_swa", &base_local, err)) != SC_OK
      || (st = get_positive (g, in, "attn_logit_softcapping", &attn_cap, err)) != SC_OK
      || (st = get_positive (g, in, "final_logit_softcapping", &final_cap, err)) != SC_OK)
    return st;
  snprintf (key, sizeof key, "%s.rope.scaling.factor", in->arch_name);
  if (sc_gguf_find_kv (g, key) != NULL && (st = sc_gguf_get_f32 (g, key, &factor, err)) != SC_OK)
    return st;
  if (factor != 1.0f && factor != 0.0f)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "key '%s' is %g: RoPE scaling is not "
                         "supported yet", key, (double) factor);

  in->sliding_window = window;
  in->swa_pattern = pattern;
  in->rope_base_local = base_local;
  in->attn_softcap = attn_cap;
  in->final_softcap = final_cap;
  in->attn_scale = in->n_layers == GEMMA2_27B_LAYERS
                   ? 1.0f / sqrtf ((float) (in->n_embd / in->n_heads))
                   : 1.0f / sqrtf ((float) in->head_dim);
  in->embd_scale = sqrtf ((float) in->n_embd);
  return sc_arch_check_tensors (&sc_arch_gemma2, g, in, err);
}

static ScStatus
gemma2_bind_layer (ScBackend *b, const ScModelInfo *in, const ScLayerWeights *w, void *view,
                   ScError *err)
{
  Gemma2Layer *v = view;
  ScStatus st;

  if ((st = sc_layer_bind_view (b, in, w, &v->base, "gemma2", err)) != SC_OK
      || (st = sc_layer_bind_weight (b, &v->post_attn_norm, w->post_attn_norm, in->n_embd, err))
             != SC_OK
      || (st = sc_layer_bind_weight (b, &v->post_ffn_norm, w->post_ffn_norm, in->n_embd, err))
             != SC_OK)
    return st;
  return SC_OK;
}

static ScStatus
gemma2_layer (const ScLayerCtx *c, const void *view, ScError *err)
{
  const Gemma2Layer *w = view;
  const ScModelInfo *in = c->info;
  const int window = (int) sc_model_layer_window (in, c->layer);
  const float base = window > 0 ? in->rope_base_local : in->rope_base;
  float *k_new = c->k_cache + (size_t) c->n_past * in->n_kv_heads * in->head_dim;
  ScStatus st;

  /* attention block: h = norm(x), qkv = h W_qkv^T split into q and the new cache rows;
   * NeoX RoPE with the layer's base (the soft-capping is the attention op's, from
   * info->attn_softcap: sc_layer_attention) */
  if ((st = sc_layer_qkv (c, &w->base, err)) != SC_OK
      || (st = sc_backend_rope_neox (c->b, c->q, c->n_q, (int) in->n_heads, (int) in->head_dim,
                                     (int) in->n_rot, c->n_past, base, err)) != SC_OK
      || (st = sc_backend_rope_neox (c->b, k_new, c->n_q, (int) in->n_kv_heads,
                                     (int) in->head_dim, (int) in->n_rot, c->n_past, base, err))
             != SC_OK)
    return st;
  /* the rest is Gemma 3's, on every row or on the last n_tail (sc_layer_tail) */
  return sc_layer_attend_geglu_post (c, &w->base, w->post_attn_norm, w->post_ffn_norm, window,
                                     err);
}

/* The layer backward (sc-arch.h): Gemma's block down to the attention's
 * (sc_layer_backward_geglu_post_attend, soft-capped as the forward), then the block's start,
 * dh = dq Wq + dk Wk + dv Wv and dx += rmsnorm'(dh) at x_in. The embedding scale is
 * sc-backward.c's. */
static ScStatus
gemma2_layer_backward (const ScLayerGradCtx *c, const void *view, ScError *err)
{
  const Gemma2Layer *w = view;
  ScStatus st = sc_layer_backward_geglu_post_attend (c, &w->base, w->post_attn_norm,
                                                     w->post_ffn_norm, err);

  if (st != SC_OK)
    return st;
  return sc_layer_qkv_backward (c, &w->base, c->dq, c->dk, err);
}

const ScArchDesc sc_arch_gemma2 = {
  .name = "gemma2",
  .id = SC_ARCH_GEMMA2,
  .tensors = gemma2_tensors,
  .n_tensors = (int) (sizeof gemma2_tensors / sizeof gemma2_tensors[0]),
  .main_tensor = "attn_q.weight",
  .layer_size = sizeof (Gemma2Layer),
  .read_hparams = gemma2_read_hparams,
  .bind_layer = gemma2_bind_layer,
  .layer = gemma2_layer,
  .layer_backward = gemma2_layer_backward,
};
