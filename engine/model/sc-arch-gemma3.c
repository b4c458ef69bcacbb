/* sc-arch-gemma3.c — the Gemma 3 architecture (GGUF "gemma3": Gemma 3 270M, 1B, 4B, ...
 * text models): its hyperparameter rules, GGUF tensor names and layer function.
 *
 * Transcribed from llama.cpp (ggml-org/llama.cpp: src/models/gemma3.cpp at 569a0092 for the
 * graph, src/llama-model.cpp's LLM_ARCH_GEMMA3 hyperparameters, convert_hf_to_gguf.py's
 * Gemma3Model for what the file already holds); docs/models.md says what differs from llama.
 * Per layer l, for the n_q new rows of a run of n_k tokens (shapes as (rows, cols)):
 *   h     (n_q, E)  = rmsnorm(x) * attn_norm
 *   q|k|v (n_q, Q+2KV) = h [Wq;Wk;Wv]^T  (one fused product)   Q = H*d, KV = H_kv*d
 *   q, k            = rmsnorm(each head's d values) * q_norm, * k_norm    (QK-norm)
 *   q, k            = rope_neox(q, k) with base rope_base_local on a local layer,
 *                     rope_base on a global one                  split halves (NeoX)
 *   P     (H, n_q, n_k) = softmax(q K^T * attn_scale) causal, and on a local layer a
 *                     sliding window of sliding_window keys       -> observer
 *   o     (n_q, Q)  = head_scale * P V; the intervention's edits (edit_heads)
 *   h               = rmsnorm(o Wo^T) * post_attention_norm
 *   x    += h
 *   h               = rmsnorm(x) * ffn_norm
 *   g|u   (n_q, 2F) = h [Wg;Wu]^T
 *   h               = rmsnorm((gelu_tanh(g) * u) Wd^T) * post_ffw_norm
 *   x    += h
 * The embeddings entering layer 0 are scaled by sqrt(E) (ScModelInfo.embd_scale, applied by
 * sc-forward.c); the output head is the shared one (output_norm, tied token_embd), with no
 * logit soft-capping (llama.cpp applies none to a model with sliding-window layers). Norm
 * weights are used as stored: the GGUF converter already added Gemma's "1 +" to them.
 *
 * The backward (gemma3_layer_backward) reads this from the bottom up; the inputs of the
 * post-norms and the QK-norm, which the tape does not keep, it recomputes from what it does
 * (the attention output o, gu, the residual entering the layer).
 */
#include "model/sc-arch.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

/* llama.cpp's defaults for a gemma3 file that does not say (src/llama-model.cpp): every
 * sixth layer is global (layers 5, 11, 17, ...), and local layers rotate with base 10^4. */
#define GEMMA3_DEFAULT_SWA_PATTERN 6u
#define GEMMA3_DEFAULT_ROPE_BASE_LOCAL 10000.0f
/* The one Gemma 3 whose attention scale is 1/sqrt(n_embd / n_heads) instead of
 * 1/sqrt(head_dim): the 27B model, which llama.cpp recognises by its 62 layers (Google's
 * gemma_pytorch config, query_pre_attn_scalar = hidden_size / num_heads there). */
#define GEMMA3_27B_LAYERS 62u

/* One layer's weights as the backend sees them: the shared view (sc-arch.h), then the
 * QK-norm and the post-norms Gemma adds. */
typedef struct {
  ScLayerView base;             /* attn_norm, w_qkv, wo, ffn_norm, w_gate_up, w_down */
  const float *q_norm, *k_norm; /* (d) each */
  const float *post_attn_norm;  /* (E) */
  const float *post_ffn_norm;   /* (E) */
} Gemma3Layer;

/* In arena order: wq, wk, wv and w_gate, w_up back to back (bind_layer checks). */
static const ScArchTensor gemma3_tensors[] = {
  { "attn_norm.weight", offsetof (ScLayerWeights, attn_norm), SC_DIM_EMBD, SC_DIM_ONE },
  { "attn_q.weight", offsetof (ScLayerWeights, wq), SC_DIM_EMBD, SC_DIM_Q },
  { "attn_k.weight", offsetof (ScLayerWeights, wk), SC_DIM_EMBD, SC_DIM_KV },
  { "attn_v.weight", offsetof (ScLayerWeights, wv), SC_DIM_EMBD, SC_DIM_KV },
  { "attn_q_norm.weight", offsetof (ScLayerWeights, attn_q_norm), SC_DIM_HEAD, SC_DIM_ONE },
  { "attn_k_norm.weight", offsetof (ScLayerWeights, attn_k_norm), SC_DIM_HEAD, SC_DIM_ONE },
  { "attn_output.weight", offsetof (ScLayerWeights, wo), SC_DIM_Q, SC_DIM_EMBD },
  { "post_attention_norm.weight", offsetof (ScLayerWeights, post_attn_norm), SC_DIM_EMBD,
    SC_DIM_ONE },
  { "ffn_norm.weight", offsetof (ScLayerWeights, ffn_norm), SC_DIM_EMBD, SC_DIM_ONE },
  { "ffn_gate.weight", offsetof (ScLayerWeights, w_gate), SC_DIM_EMBD, SC_DIM_FF },
  { "ffn_up.weight", offsetof (ScLayerWeights, w_up), SC_DIM_EMBD, SC_DIM_FF },
  { "ffn_down.weight", offsetof (ScLayerWeights, w_down), SC_DIM_FF, SC_DIM_EMBD },
  { "post_ffw_norm.weight", offsetof (ScLayerWeights, post_ffn_norm), SC_DIM_EMBD, SC_DIM_ONE },
};

/* The keys llama.cpp reads for LLM_ARCH_GEMMA3, with its defaults and our checks. */
static ScStatus
gemma3_read_hparams (const ScGguf *g, ScModelInfo *in, ScError *err)
{
  const char *a = in->arch_name;
  char key[128];
  uint32_t window = 0, pattern = GEMMA3_DEFAULT_SWA_PATTERN;
  float base_local = GEMMA3_DEFAULT_ROPE_BASE_LOCAL, softcap = 0.0f;
  const ScGgufKv *kv;
  ScStatus st;

  /* "<arch>.attention.sliding_window": absent or 0 = no local layers (llama.cpp then runs
   * every layer globally) */
  snprintf (key, sizeof key, "%s.attention.sliding_window", a);
  if (sc_gguf_find_kv (g, key) != NULL
      && (st = sc_gguf_get_u32 (g, key, &window, err)) != SC_OK)
    return st;
  if (window > in->n_ctx_train)
    return sc_error_set (err, SC_ERR_RANGE, "key '%s' is %u, larger than the context length "
                         "%u", key, window, in->n_ctx_train);

  /* "<arch>.attention.sliding_window_pattern" (llama.cpp's LLM_KV_ATTENTION_SLIDING_WINDOW_
   * PATTERN): every pattern-th layer is global. A per-layer array is not read yet. */
  snprintf (key, sizeof key, "%s.attention.sliding_window_pattern", a);
  if ((kv = sc_gguf_find_kv (g, key)) != NULL)
    {
      if (kv->type == SC_GGUF_TYPE_ARRAY)
        return sc_error_set (err, SC_ERR_UNSUPPORTED, "key '%s' is a per-layer array; only "
                             "a number (every n-th layer global) is supported", key);
      if ((st = sc_gguf_get_u32 (g, key, &pattern, err)) != SC_OK)
        return st;
    }
  /* 0 would make every layer local in llama.cpp and more than n_layers leaves none global:
   * either way no layer sees past the window, which no Gemma 3 does. A pattern need not
   * divide the layer count (Gemma 3 1B: 26 layers, pattern 6, global 5, 11, 17, 23). */
  if (window > 0 && (pattern == 0 || pattern > in->n_layers))
    return sc_error_set (err, SC_ERR_RANGE, "key '%s' is %u: with %u layers, expected 1 to "
                         "%u (every n-th layer global)", key, pattern, in->n_layers,
                         in->n_layers);

  /* "<arch>.rope.freq_base_swa": the local layers' RoPE base */
  snprintf (key, sizeof key, "%s.rope.freq_base_swa", a);
  if (sc_gguf_find_kv (g, key) != NULL)
    {
      if ((st = sc_gguf_get_f32 (g, key, &base_local, err)) != SC_OK)
        return st;
      if (!isfinite (base_local) || base_local <= 0.0f)
        return sc_error_set (err, SC_ERR_RANGE, "key '%s' is %g (expected a positive number)",
                             key, (double) base_local);
    }

  /* Soft-capping: llama.cpp applies it only to a gemma3 file without local layers. */
  snprintf (key, sizeof key, "%s.final_logit_softcapping", a);
  if (sc_gguf_find_kv (g, key) != NULL
      && (st = sc_gguf_get_f32 (g, key, &softcap, err)) != SC_OK)
    return st;
  if (window == 0 && softcap > 0.0f)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "key '%s' (final logit soft-capping %g) is "
                         "not supported", key, (double) softcap);

  /* The larger Gemma 3 models scale the global layers' positions (linear, factor 8); we
   * would silently ignore the factor, so refuse it. */
  snprintf (key, sizeof key, "%s.rope.scaling.factor", a);
  {
    float factor = 1.0f;
    if (sc_gguf_find_kv (g, key) != NULL
        && (st = sc_gguf_get_f32 (g, key, &factor, err)) != SC_OK)
      return st;
    if (factor != 1.0f && factor != 0.0f)
      return sc_error_set (err, SC_ERR_UNSUPPORTED, "key '%s' is %g: RoPE scaling is not "
                           "supported yet", key, (double) factor);
  }

  in->sliding_window = window;
  in->swa_pattern = window > 0 ? pattern : 0;
  in->rope_base_local = window > 0 ? base_local : 0.0f;
  in->attn_scale = in->n_layers == GEMMA3_27B_LAYERS
                   ? 1.0f / sqrtf ((float) (in->n_embd / in->n_heads))
                   : 1.0f / sqrtf ((float) in->head_dim);
  in->embd_scale = sqrtf ((float) in->n_embd);
  /* a tensor outside the table (and the shared ones) would be ignored: refused by name */
  return sc_arch_check_tensors (&sc_arch_gemma3, g, in, err);
}

static ScStatus
gemma3_bind_layer (ScBackend *b, const ScModelInfo *in, const ScLayerWeights *w, void *view,
                   ScError *err)
{
  const size_t E = in->n_embd, d = in->head_dim;
  Gemma3Layer *v = view;
  ScStatus st;

  if ((st = sc_layer_bind_view (b, in, w, &v->base, "gemma3", err)) != SC_OK
      || (st = sc_layer_bind_weight (b, &v->q_norm, w->attn_q_norm, d, err)) != SC_OK
      || (st = sc_layer_bind_weight (b, &v->k_norm, w->attn_k_norm, d, err)) != SC_OK
      || (st = sc_layer_bind_weight (b, &v->post_attn_norm, w->post_attn_norm, E, err))
             != SC_OK
      || (st = sc_layer_bind_weight (b, &v->post_ffn_norm, w->post_ffn_norm, E, err)) != SC_OK)
    return st;
  return SC_OK;
}

static ScStatus
gemma3_layer (const ScLayerCtx *c, const void *view, ScError *err)
{
  const Gemma3Layer *w = view;
  const int window = (int) sc_model_layer_window (c->info, c->layer);
  const float base = window > 0 ? c->info->rope_base_local : c->info->rope_base;
  ScStatus st;

  /* attention block: h = norm(x), qkv = h W_qkv^T split into q, and the new rows
   * past..n_k of the K, V cache; QK-norm (each head's d values a row of their own), NeoX
   * RoPE with the layer's base */
  if ((st = sc_layer_qkv (c, &w->base, err)) != SC_OK
      || (st = sc_layer_qk_norm_rope (c, w->q_norm, w->k_norm, base, err)) != SC_OK)
    return st;
  /* the rest, shared with Gemma 2, on every row or on the last n_tail (sc_layer_tail) */
  return sc_layer_attend_geglu_post (c, &w->base, w->post_attn_norm, w->post_ffn_norm, window,
                                     err);
}

/* The layer backward (sc-arch.h, ScLayerGradCtx): Gemma's block down to the attention's
 * (sc_layer_backward_geglu_post_attend), then the QK-norm:
 *   q0, k0 = (rmsnorm(x_in) * attn_norm) Wq^T, Wk^T      (recomputed)
 *   dq, dk = rmsnorm'(dq) at q0 with q_norm, at k0 with k_norm, per head
 *   dh = dq Wq + dk Wk + dv Wv;  dx += rmsnorm'(dh) at x_in
 * The embedding scale is sc-backward.c's. Scratch beyond the named buffers: dgu (n, 2F)
 * holds q0, k0, dq0, dk0 back to back, which needs Q + KV <= F (every Gemma 3: 270M has
 * Q + KV = 1280, F = 2048). */
static ScStatus
gemma3_layer_backward (const ScLayerGradCtx *c, const void *view, ScError *err)
{
  const Gemma3Layer *w = view;
  const ScModelInfo *in = c->info;
  const int Q = (int) (in->n_heads * in->head_dim),
            KV = (int) (in->n_kv_heads * in->head_dim), F = (int) in->n_ff;
  const size_t N = (size_t) c->n;
  float *q0 = c->dgu, *k0 = q0 + N * Q, *dq0 = k0 + N * KV, *dk0 = dq0 + N * Q;
  ScStatus st;

  if (Q + KV > F)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "gemma3 backward: queries %d and keys %d do "
                         "not fit its scratch of n_ff %d (needs Q + KV <= n_ff)", Q, KV, F);
  if ((st = sc_layer_backward_geglu_post_attend (c, &w->base, w->post_attn_norm,
                                                 w->post_ffn_norm, err)) != SC_OK)
    return st;
  /* QK-norm: its inputs again, then its backward per head, then the block's start */
  return sc_layer_qk_norm_backward (c, &w->base, w->q_norm, w->k_norm, q0, k0, dq0, dk0, err);
}

const ScArchDesc sc_arch_gemma3 = {
  .name = "gemma3",
  .id = SC_ARCH_GEMMA3,
  .tensors = gemma3_tensors,
  .n_tensors = (int) (sizeof gemma3_tensors / sizeof gemma3_tensors[0]),
  .main_tensor = "attn_q.weight",
  .layer_size = sizeof (Gemma3Layer),
  .read_hparams = gemma3_read_hparams,
  .bind_layer = gemma3_bind_layer,
  .layer = gemma3_layer,
  .layer_backward = gemma3_layer_backward,
};
