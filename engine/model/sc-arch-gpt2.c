/* sc-arch-gpt2.c — the GPT-2 architecture (GGUF "gpt2": GPT-2 and its fine-tunes): its GGUF
 * tensor names, its hyperparameter checks and its layer function.
 *
 * Transcribed from llama.cpp (src/models/gpt2.cpp as vendored by llama-cpp-python 0.3.36,
 * and convert_hf_to_gguf.py's GPT2Model for the tensors and keys) and checked against
 * Hugging Face's GPT2LMHeadModel in float64 (tests/reference/arch_ref_gpt2.py). Per layer,
 * for the n_q new rows of a run of n_k tokens:
 *   h     (n_q, E)  = layernorm(x) * attn_norm + attn_norm_b     (eps: layer_norm_epsilon)
 *   q|k|v (n_q, 3E) = h Wqkv^T + bqkv                            (one fused tensor)
 *   K, V  (n_k, E)  = the cache rows 0..n_past, then k, v         (no RoPE)
 *   P     (H, n_q, n_k) = softmax(q K^T / sqrt(d)) causal, masked -> observer
 *   o     (n_q, E)  = head_scale * P V; the intervention's edits (edit_heads)
 *   x    += o Wo^T + bo
 *   h     (n_q, E)  = layernorm(x) * ffn_norm + ffn_norm_b
 *   x    += gelu(h Wup^T + b_up) Wdown^T + b_down                 (GELU's tanh form: HF's
 *                                                                  "gelu_new", ggml's gelu)
 * Before layer 0 the forward pass adds position_embd's row p to the token embedding at
 * position p (ScModelInfo.learned_positions); after the last layer its output head is
 * LayerNorm with output_norm and output_norm.bias (ScModelInfo.layer_norm), then
 * output.weight (the converter writes token_embd's copy there), or token_embd without it.
 * The value bias rides in the cached values, so every head's o carries it as llama.cpp's
 * does; W_O's bias is added once to the residual, after the heads' sum.
 *
 * What a gpt2 file may hold that we refuse by name rather than run wrongly: any tensor
 * outside the table below and the shared ones (sc_arch_check_tensors), grouped-query heads
 * (head_count_kv other than head_count), a key or value length other than n_embd / heads.
 *
 * No backward yet (layer_backward NULL): the LayerNorm's and GELU's backward ops are not in
 * the backend contract, so gradient studies refuse gpt2 by name (sc_model_has_backward).
 */
#include "model/sc-arch.h"

#include <stddef.h>
#include <stdio.h>

/* One layer's weights as the backend sees them. */
typedef struct {
  const float *attn_norm, *attn_norm_b; /* (E) each */
  const float *w_qkv, *b_qkv;           /* (3E, E), (3E) */
  const float *wo, *bo;                 /* (E, E), (E) */
  const float *ffn_norm, *ffn_norm_b;   /* (E) each */
  const float *w_up, *b_up;             /* (F, E), (F) */
  const float *w_down, *b_down;         /* (E, F), (E) */
} Gpt2Layer;

/* convert_hf_to_gguf.py's names (gguf-py's MODEL_TENSORS[MODEL_ARCH.GPT2]); the fused
 * attn_qkv goes into wq and bq, which the loader splits into wk, wv and bk, bv. */
static const ScArchTensor gpt2_tensors[] = {
  { "attn_norm.weight", offsetof (ScLayerWeights, attn_norm), SC_DIM_EMBD, SC_DIM_ONE },
  { "attn_norm.bias", offsetof (ScLayerWeights, attn_norm_b), SC_DIM_EMBD, SC_DIM_ONE },
  { "attn_qkv.weight", offsetof (ScLayerWeights, wq), SC_DIM_EMBD, SC_DIM_QKV },
  { "attn_qkv.bias", offsetof (ScLayerWeights, bq), SC_DIM_QKV, SC_DIM_ONE },
  { "attn_output.weight", offsetof (ScLayerWeights, wo), SC_DIM_Q, SC_DIM_EMBD },
  { "attn_output.bias", offsetof (ScLayerWeights, bo), SC_DIM_EMBD, SC_DIM_ONE },
  { "ffn_norm.weight", offsetof (ScLayerWeights, ffn_norm), SC_DIM_EMBD, SC_DIM_ONE },
  { "ffn_norm.bias", offsetof (ScLayerWeights, ffn_norm_b), SC_DIM_EMBD, SC_DIM_ONE },
  { "ffn_up.weight", offsetof (ScLayerWeights, w_up), SC_DIM_EMBD, SC_DIM_FF },
  { "ffn_up.bias", offsetof (ScLayerWeights, b_up), SC_DIM_FF, SC_DIM_ONE },
  { "ffn_down.weight", offsetof (ScLayerWeights, w_down), SC_DIM_FF, SC_DIM_EMBD },
  { "ffn_down.bias", offsetof (ScLayerWeights, b_down), SC_DIM_EMBD, SC_DIM_ONE },
};

/* llama.cpp's gpt2 hparams: the shared keys and "gpt2.attention.layer_norm_epsilon"
 * (required there, and here). */
static ScStatus
gpt2_read_hparams (const ScGguf *g, ScModelInfo *in, ScError *err)
{
  char key[128];
  ScStatus st;

  snprintf (key, sizeof key, "%s.attention.layer_norm_epsilon", in->arch_name);
  if ((st = sc_gguf_get_f32 (g, key, &in->norm_eps, err)) != SC_OK)
    return st;
  if (!(in->norm_eps > 0.0f && in->norm_eps < 1.0f))
    return sc_error_set (err, SC_ERR_RANGE, "key '%s' is %g (expected a small positive "
                         "number)", key, (double) in->norm_eps);
  if (in->n_kv_heads != in->n_heads)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "gpt2 with %u key/value heads for %u query "
                         "heads is not supported (GPT-2 has one per head)", in->n_kv_heads,
                         in->n_heads);
  if ((uint64_t) in->head_dim * in->n_heads != in->n_embd)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "gpt2 with head size %u x %u heads other "
                         "than embedding_length %u is not supported", in->head_dim, in->n_heads,
                         in->n_embd);
  in->layer_norm = true;
  in->learned_positions = true;
  return sc_arch_check_tensors (&sc_arch_gpt2, g, in, err);
}

static ScStatus
gpt2_bind_layer (ScBackend *b, const ScModelInfo *in, const ScLayerWeights *w, void *view,
                 ScError *err)
{
  const size_t E = in->n_embd, QKV = (size_t) (in->n_heads + 2 * in->n_kv_heads) * in->head_dim,
               F = in->n_ff;
  Gpt2Layer *v = view;
  const ScWeightSrc *qkv[] = { &w->src_wq }, *wo[] = { &w->src_wo }, *up[] = { &w->src_w_up },
                    *down[] = { &w->src_w_down };
  ScStatus st;

  if ((st = sc_layer_bind_weight (b, &v->attn_norm, w->attn_norm, E, err)) != SC_OK
      || (st = sc_layer_bind_weight (b, &v->attn_norm_b, w->attn_norm_b, E, err)) != SC_OK
      || (st = sc_layer_bind_matrix (b, &v->w_qkv, w->wq, QKV, E, qkv, 1, err)) != SC_OK
      || (st = sc_layer_bind_weight (b, &v->b_qkv, w->bq, QKV, err)) != SC_OK
      || (st = sc_layer_bind_matrix (b, &v->wo, w->wo, E, E, wo, 1, err)) != SC_OK
      || (st = sc_layer_bind_weight (b, &v->bo, w->bo, E, err)) != SC_OK
      || (st = sc_layer_bind_weight (b, &v->ffn_norm, w->ffn_norm, E, err)) != SC_OK
      || (st = sc_layer_bind_weight (b, &v->ffn_norm_b, w->ffn_norm_b, E, err)) != SC_OK
      || (st = sc_layer_bind_matrix (b, &v->w_up, w->w_up, F, E, up, 1, err)) != SC_OK
      || (st = sc_layer_bind_weight (b, &v->b_up, w->b_up, F, err)) != SC_OK
      || (st = sc_layer_bind_matrix (b, &v->w_down, w->w_down, E, F, down, 1, err)) != SC_OK
      || (st = sc_layer_bind_weight (b, &v->b_down, w->b_down, E, err)) != SC_OK)
    return st;
  return SC_OK;
}

static ScStatus
gpt2_layer (const ScLayerCtx *c, const void *view, ScError *err)
{
  const Gpt2Layer *w = view;
  const ScModelInfo *in = c->info;
  ScBackend *b = c->b;
  const int E = (int) in->n_embd, d = (int) in->head_dim, Q = (int) in->n_heads * d,
            KV = (int) in->n_kv_heads * d, F = (int) in->n_ff;
  const int nq = c->n_q, past = c->n_past;
  float *k_new = c->k_cache + (size_t) past * KV, *v_new = c->v_cache + (size_t) past * KV;
  ScLayerCtx tail;
  const ScLayerCtx *t;
  ScStatus st;

#define TRY(expr)                                                                             \
  do                                                                                          \
    {                                                                                         \
      if ((st = (expr)) != SC_OK)                                                             \
        return st;                                                                            \
    }                                                                                         \
  while (0)
  /* attention block: h = layernorm(x), qkv = h W_qkv^T + b_qkv, split into q and the new
   * rows past..n_k of the K, V cache */
  TRY (sc_backend_layer_norm (b, c->h, c->x, w->attn_norm, w->attn_norm_b, nq, E, in->norm_eps,
                              err));
  TRY (sc_layer_matmul (c, c->qkv, c->h, w->w_qkv, nq, E, Q + 2 * KV, false, err));
  TRY (sc_backend_add_bias (b, c->qkv, w->b_qkv, nq, Q + 2 * KV, err));
  TRY (b->ops->copy_2d (b, c->q, Q, c->qkv, Q + 2 * KV, nq, Q, err));
  TRY (b->ops->copy_2d (b, k_new, KV, c->qkv + Q, Q + 2 * KV, nq, KV, err));
  TRY (b->ops->copy_2d (b, v_new, KV, c->qkv + Q + KV, Q + 2 * KV, nq, KV, err));
  /* the rest on every row, or on the last n_tail (sc_layer_tail) */
  t = sc_layer_tail (c, &tail);
  /* P (H, nq, n_k) into c->probs, o (nq, Q); causal, no window; the edits */
  TRY (sc_layer_attend (t, true, 0, err));
  TRY (sc_layer_matmul (t, t->x, t->o, w->wo, t->n_q, Q, E, true, err));
  TRY (sc_backend_add_bias (b, t->x, w->bo, t->n_q, E, err));
  /* c->o is not touched again: the observer reads it after we return (sc-arch.h) */
  TRY (sc_layer_save_mid (t, err));

  /* feed-forward block: h = layernorm(x), act = gelu(h W_up^T + b_up) */
  TRY (sc_backend_layer_norm (b, t->h, t->x, w->ffn_norm, w->ffn_norm_b, t->n_q, E,
                              in->norm_eps, err));
  TRY (sc_layer_matmul (t, t->act, t->h, w->w_up, t->n_q, E, F, false, err));
  TRY (sc_backend_add_bias (b, t->act, w->b_up, t->n_q, F, err));
  TRY (sc_backend_gelu (b, t->act, t->act, (size_t) t->n_q * F, err));
  TRY (sc_layer_matmul (t, t->x, t->act, w->w_down, t->n_q, F, E, true, err));
  TRY (sc_backend_add_bias (b, t->x, w->b_down, t->n_q, E, err));
#undef TRY
  return SC_OK;
}

const ScArchDesc sc_arch_gpt2 = {
  .name = "gpt2",
  .id = SC_ARCH_GPT2,
  .tensors = gpt2_tensors,
  .n_tensors = (int) (sizeof gpt2_tensors / sizeof gpt2_tensors[0]),
  .main_tensor = "attn_qkv.weight",
  .layer_size = sizeof (Gpt2Layer),
  .read_hparams = gpt2_read_hparams,
  .bind_layer = gpt2_bind_layer,
  .layer = gpt2_layer,
};
