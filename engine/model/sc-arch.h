/* sc-arch.h — what an architecture provides, and the table that maps a GGUF file's
 * general.architecture to it.
 *
 * An architecture is one file, model/sc-arch-<name>.c, exporting one ScArchDesc:
 *   - its per-layer tensors: GGUF name, shape in symbolic dimensions, and the
 *     ScLayerWeights field the loader (sc-model.c) dequantizes it into, in arena order;
 *   - bind_layer: makes one layer's weights available to a backend, as the architecture's
 *     own view struct (layer_size bytes) that its layer function reads;
 *   - layer: one transformer block over the backend ops (sc-backend-impl.h), run by the
 *     forward pass (sc-forward.c) for each layer.
 * Adding one is that file plus its entry in the table of sc-arch.c (llama.cpp does the
 * same with src/models/<arch>.cpp).
 *
 * The forward pass keeps what is the same for every architecture: the session and its
 * buffers, the KV cache, prefix reuse, interventions, the observer (which reads the
 * probabilities a layer's attention wrote, after the layer returns), the embedding lookup
 * and the output head (RMSNorm + vocabulary projection, as llama and Gemma have; LayerNorm
 * with a bias for GPT-2). What differs before the first layer and in the head is data in
 * ScModelInfo, not a function: embd_scale (Gemma multiplies the embeddings by sqrt(n_embd)),
 * learned_positions (GPT-2 adds position_embd's rows), layer_norm (GPT-2's norms).
 *
 * Internal to the engine: app/ never includes it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/sc-backend-impl.h"
#include "core/sc-error.h"
#include "format/sc-gguf.h"
#include "forward/sc-forward.h"
#include "model/sc-model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A tensor dimension, named by what it is; resolved against ScModelInfo by sc_arch_dim(). */
typedef enum {
  SC_DIM_ONE,  /* 1: the second dimension of a vector */
  SC_DIM_EMBD, /* n_embd */
  SC_DIM_Q,    /* n_heads * head_dim */
  SC_DIM_KV,   /* n_kv_heads * head_dim */
  SC_DIM_FF,   /* n_ff */
  SC_DIM_HEAD, /* head_dim */
  SC_DIM_QKV,  /* Q + 2 KV: a fused Q|K|V projection (GPT-2's and Phi-3's attn_qkv) */
  SC_DIM_FF2,  /* 2 n_ff: a fused gate|up projection (Phi-3's ffn_up) */
} ScDim;

/* One per-layer tensor of an architecture. */
typedef struct {
  const char *name; /* "attn_q.weight": the file holds "blk.<layer>.attn_q.weight" */
  size_t field;     /* offsetof (ScLayerWeights, wq): where its dense floats go */
  ScDim ne0, ne1;   /* its shape in GGUF order: ne0 = input (columns), ne1 = output (rows) */
} ScArchTensor;

/* What the forward pass hands a layer function: layer @layer over the n_q new rows of a
 * run of n_k tokens (positions n_past .. n_k - 1). Buffers are backend memory sized for the
 * session; shapes below are what the layer may use. E = n_embd, Q = n_heads * head_dim,
 * KV = n_kv_heads * head_dim, F = n_ff, H = n_heads. */
typedef struct ScLayerCtx {
  ScBackend *b;
  const ScModelInfo *info;
  int layer;
  int n_past, n_q, n_k;     /* n_k = n_past + n_q */
  float *x;                 /* (n_q, E) the residual stream: read, and updated in place */
  float *h;                 /* (n_q, E) scratch: a sublayer's normalised input */
  float *qkv;               /* (n_q, Q + 2 KV) scratch: a fused projection's output */
  float *q;                 /* (n_q, Q) scratch: queries */
  float *o;                 /* (n_q, Q) the attention output. Contract: when the layer
                             * function returns, o still holds exactly what it multiplied
                             * by W_O (after head scales, edit_heads), because the forward
                             * pass hands it to the observer's attn_output then; a layer
                             * must not reuse o as scratch after its output projection */
  float *gu;                /* (n_q, 2 F) scratch: a fused gate|up projection's output */
  float *act;               /* (n_q, F) scratch: the feed-forward activation */
  float *k_cache, *v_cache; /* (n_k, KV) this layer's keys and values: rows < n_past come
                             * from the cache, the layer writes rows n_past .. n_k - 1 */
  float *probs;             /* (H, n_q, n_k): where attention must write probabilities */
  /* A capture that never writes fp32 probabilities (device backends with
   * SC_BACKEND_CAP_ATTN_CAPTURE; sc-forward.c sets it only on layers without edits in
   * untaped runs): sc_layer_attention then calls attention_capture with these (want:
   * host (H) or NULL for none, slot 0 .. SC_BACKEND_CAPTURE_SLOTS - 1) and leaves probs
   * unwritten. */
  bool capture;
  const uint8_t *capture_want;
  int capture_slot;
  const float *head_scale;  /* host (H): the intervention's scale per head, or NULL */
  const uint8_t *key_mask;  /* host (n_k): the intervention's masked tokens, or NULL */
  ScForwardStats *stats;    /* NULL = not measured */
  /* The intervention's edits between the softmax and the output projection (attention
   * edits, mean-ablation; sc-forward.c), or NULL when this layer has none. A layer
   * function calls it right after its attention, before it reads ctx->o:
   *   if (ctx->edit_heads != NULL) TRY (ctx->edit_heads (ctx, causal, window, err));
   * with the same causal and window (sc_layer_attend does both). It rewrites the chosen
   * heads' rows of ctx->probs and of ctx->o; every other head's bytes are left as the
   * attention op wrote them. */
  ScStatus (*edit_heads) (const struct ScLayerCtx *ctx, bool causal, int window, ScError *err);
  const void *edit_user;    /* the forward pass's, for edit_heads */
  float *x_mid;             /* (n_q, E) or NULL: where the layer copies the residual
                             * stream between its attention and feed-forward blocks (the
                             * backward pass's tape; sc-session-private.h) */
  int n_tail;               /* 0: every row. 1 .. n_q - 1: after the queries, keys and
                             * values of all n_q rows (the cache rows are written as
                             * always), the layer computes its attention, output
                             * projection and feed-forward for the last n_tail rows only
                             * (sc_layer_tail), and only those rows of x are updated: a
                             * run whose only output is the last position's logits
                             * (ScForwardOptions.last_row; never with probs wanted by an
                             * observer, edits that read other rows, or a tape) */
  int n_seq;                /* 0 or 1: one sequence. > 1 (only on an architecture with
                             * stacks_sequences, and only with n_past 0, no edit_heads or
                             * x_mid, a capture only without wanted heads, n_tail 0 or 1):
                             * n_seq independent runs of the
                             * same n_q positions stacked — rows s n_q .. (s + 1) n_q - 1
                             * of x, h, qkv, q, o, gu, act are run s's, rows s n_k .. of
                             * k_cache, v_cache its keys and values, head_scale + s H its
                             * scales (when set) — so each product is one for all of them,
                             * while RoPE and attention run per sequence (probs holds one
                             * sequence's at a time, when written). With n_tail 1 the
                             * last row of each goes on alone: gathered into x_tail
                             * (n_seq, E) and q_tail (n_seq, Q), where the layer leaves
                             * them. sc_forward_zero_heads (sc-forward.h) */
  float *x_tail, *q_tail;
} ScLayerCtx;

/* The rows of x a layer computes: n_q, times n_seq when sequences are stacked. */
static inline int
sc_layer_rows (const ScLayerCtx *ctx)
{
  return ctx->n_seq > 1 ? ctx->n_q * ctx->n_seq : ctx->n_q;
}

/* What the backward pass (forward/sc-backward.c) hands a layer's backward function: layer
 * @layer of a whole prompt of n tokens, what its forward left on the tape, and the
 * gradient flowing back. Buffers are backend memory; shapes as in ScLayerCtx. */
typedef struct {
  ScBackend *b;
  const ScModelInfo *info;
  int layer, n;
  /* the forward's values (ScForwardTape, the session's cache and residuals) */
  const float *x_in;          /* (n, E) the residual entering the layer */
  const float *x_mid;         /* (n, E) the residual between its blocks */
  const float *q;             /* (n, Q) queries after RoPE */
  const float *o;             /* (n, Q) the attention output the forward multiplied by W_O */
  const float *k, *v;         /* (n, KV) keys after RoPE, values */
  const float *probs;         /* (H, n, n) the probabilities that multiplied V */
  const float *gu;            /* (n, 2F) the gate|up projection's output */
  const float *head_scale;    /* host (H) or NULL, as in the forward */
  const uint8_t *key_mask;    /* host (n) or NULL, as in the forward */
  const uint8_t *detached;    /* host (H) or NULL: heads whose P was set from outside */
  /* the gradient */
  float *dx;                  /* (n, E) in: d objective / d residual leaving the layer;
                               * out: d objective / d residual entering it */
  float *dprobs;              /* (H, n, n) out: d objective / d P */
  /* scratch */
  float *dh;                  /* (n, E) */
  float *dq;                  /* (n, Q) */
  float *dk, *dv;             /* (n, KV) each */
  float *dattn;               /* (n, Q) the gradient of the attention output */
  float *dgu;                 /* (n, 2F) */
  float *dact;                /* (n, F) */
} ScLayerGradCtx;

typedef struct {
  const char *name;            /* general.architecture, e.g. "llama" */
  ScArch id;
  const ScArchTensor *tensors; /* (n_tensors) per-layer tensors, in arena order */
  int n_tensors;
  const char *main_tensor;     /* whose type is shown as the model's ("attn_q.weight") */
  size_t layer_size;           /* bytes of one layer's backend view */

  /* (optional: NULL = nothing beyond the shared keys) Reads the architecture's own
   * hyperparameters into @info after sc-model.c has read the shared ones ("<arch>.block_count",
   * ...): sliding window and its pattern, a second RoPE base, the attention and embedding
   * scales. Returns SC_ERR_FORMAT / SC_ERR_RANGE / SC_ERR_UNSUPPORTED naming the key. */
  ScStatus (*read_hparams) (const ScGguf *gguf, ScModelInfo *info, ScError *err);

  /* Fills @view (layer_size bytes) with @host's weights made available to @b (through
   * b->ops->weight). Returns the backend's error (SC_ERR_NOMEM, SC_ERR_BACKEND). */
  ScStatus (*bind_layer) (ScBackend *b, const ScModelInfo *info, const ScLayerWeights *host,
                          void *view, ScError *err);

  /* Runs one layer: ctx->x (n_q, E) += the block's contributions; writes this layer's
   * new keys and values and the attention probabilities. Returns the first failing op's
   * status with @err filled (SC_ERR_NOMEM, SC_ERR_BACKEND, SC_ERR_UNSUPPORTED). */
  ScStatus (*layer) (const ScLayerCtx *ctx, const void *view, ScError *err);

  /* (optional: NULL = no gradients for this architecture) The layer's backward: from
   * ctx->dx to the gradient of the residual entering the layer (in place), and ctx->dprobs,
   * through the backend's backward ops, given what the layer's forward wrote on the tape
   * (which needs the forward to fill ScLayerCtx.x_mid). */
  ScStatus (*layer_backward) (const ScLayerGradCtx *ctx, const void *view, ScError *err);

  /* The layer function takes stacked sequences (ScLayerCtx.n_seq): it runs only through
   * the shared helpers below that honour it (sc_layer_qkv, sc_layer_rope,
   * sc_layer_attend_swiglu). */
  bool stacks_sequences;
} ScArchDesc;

/* The architectures (one file each). */
extern const ScArchDesc sc_arch_llama;
extern const ScArchDesc sc_arch_gemma3;
extern const ScArchDesc sc_arch_qwen2;
extern const ScArchDesc sc_arch_gpt2;
extern const ScArchDesc sc_arch_qwen3;
extern const ScArchDesc sc_arch_gemma2;
extern const ScArchDesc sc_arch_phi3;

/* The architecture whose name is @name (a GGUF string, not NUL-terminated), or NULL. */
const ScArchDesc *sc_arch_find (ScGgufStr name);

/* The architecture with id @id, or NULL. */
const ScArchDesc *sc_arch_for (ScArch id);

/* Writes the supported names, comma-separated ("llama"), into @buf; returns @buf. */
char *sc_arch_list (char *buf, size_t size);

/* SC_OK when every tensor of @g is one that @arch reads: the shared ones (token_embd,
 * position_embd, output_norm and output, with their .bias where @info says LayerNorm,
 * rope_freqs where @info has frequency factors) and
 * "blk.<layer>.<name>" for a name in @arch's table; else SC_ERR_UNSUPPORTED naming the
 * first other tensor, which this architecture would otherwise ignore and so run another
 * model than the file's. */
ScStatus sc_arch_check_tensors (const ScArchDesc *arch, const ScGguf *g, const ScModelInfo *info,
                                ScError *err);

/* The value of @dim for @info. */
int64_t sc_arch_dim (ScDim dim, const ScModelInfo *info);

/* Helpers for layer functions (llama.cpp's build_* in the small). */

/* The weights every architecture's layer has, as the backend sees them: Q, K, V and gate,
 * up fused. An architecture's view struct starts with one (LlamaLayer is only this; Gemma 3
 * adds its extra norms after it). */
typedef struct {
  const float *attn_norm; /* (E) */
  const float *w_qkv;     /* (Q + 2 KV, E): wq, wk, wv back to back */
  const float *wo;        /* (E, Q) */
  const float *ffn_norm;  /* (E) */
  const float *w_gate_up; /* (2 F, E): w_gate, w_up back to back */
  const float *w_down;    /* (E, F) */
} ScLayerView;

/* Makes @n host floats at @src available to @b (b->ops->weight) and stores the backend's
 * pointer in *@dst. Returns the backend's error (SC_ERR_NOMEM, SC_ERR_BACKEND) with @err
 * filled, SC_ERR_BACKEND when the backend left it empty. */
ScStatus sc_layer_bind_weight (ScBackend *b, const float **dst, const float *src, size_t n,
                               ScError *err);

/* Makes the matrix (@rows, @cols) whose rows are those of @srcs[0 .. n_srcs) stacked (the
 * file's tensors: a fused projection is several) available to @b (b->ops->weight_src) and
 * stores the backend's handle in *@dst; when @dense is not NULL (the model's float view,
 * which sc_model_weights() made and a caller may have written into) it is bound instead
 * (sc_layer_bind_weight). SC_ERR_INVALID_ARG when the parts do not make that shape; else
 * the backend's error (SC_ERR_NOMEM, SC_ERR_BACKEND). */
ScStatus sc_layer_bind_matrix (ScBackend *b, const float **dst, const float *dense,
                               int64_t rows, int64_t cols, const ScWeightSrc *const *srcs,
                               int n_srcs, ScError *err);

/* Fills @v with @w's shared weights bound to @b: the vectors with sc_layer_bind_weight, the
 * matrices in their file form with sc_layer_bind_matrix (wq, wk, wv stacked into W_qkv and
 * w_gate, w_up into W_gate_up, as the fused projections need) — or, once the model's
 * float view exists (w->wq set), the floats, checked back to back; errors name @arch. */
ScStatus sc_layer_bind_view (ScBackend *b, const ScModelInfo *info, const ScLayerWeights *w,
                             ScLayerView *v, const char *arch, ScError *err);

/* The start of the attention block: ctx->h = rmsnorm(ctx->x) * attn_norm, one fused
 * projection by w_qkv, split into ctx->q (n_q, Q) and the new cache rows n_past .. n_k - 1 of
 * ctx->k_cache and ctx->v_cache (n_q, KV each), before any QK-norm or RoPE. */
ScStatus sc_layer_qkv (const ScLayerCtx *ctx, const ScLayerView *w, ScError *err);

/* The context of the rest of a layer after its queries, keys and values: @ctx itself when
 * ctx->n_tail is 0, else @tail filled as @ctx seen from its last n_tail rows — n_q =
 * n_tail, n_past = n_k - n_tail, x, q and x_mid moved down to those rows — so that
 * sc_layer_attend, the output projection and the feed-forward on it compute those rows
 * exactly as a run of n_past cached rows would. A layer function calls it once its keys and
 * values are in the cache (after QK-norm and RoPE):
 *   const ScLayerCtx *t = sc_layer_tail (c, &tail);  then t for everything after. */
const ScLayerCtx *sc_layer_tail (const ScLayerCtx *ctx, ScLayerCtx *tail);

/* sc_layer_attention of ctx->q, then the intervention's edits of chosen heads
 * (ctx->edit_heads, when set) with the same @causal and @window; after it ctx->o holds what
 * the output projection must multiply. */
ScStatus sc_layer_attend (const ScLayerCtx *ctx, bool causal, int window, ScError *err);

/* Between the attention and feed-forward blocks: copies ctx->x into ctx->x_mid when the
 * backward pass keeps a tape (ctx->x_mid != NULL); nothing otherwise. */
ScStatus sc_layer_save_mid (const ScLayerCtx *ctx, ScError *err);

/* RoPE at positions ctx->n_past .. on @x (ctx->n_q rows of @n_heads heads of head_dim):
 * adjacent pairs (llama's GGUF weights), with the model's base and, when the file gives
 * them (info->n_rope_freq > 0, Llama 3), its frequency factors (sc_backend_rope_freq). */
ScStatus sc_layer_rope (const ScLayerCtx *ctx, float *x, int n_heads, ScError *err);

/* Qwen3's and Gemma 3's QK-norm, then RoPE on NeoX pairs: each head's d values of ctx->q
 * and of the new cache rows of K are a row of their own, rmsnorm'd in place and scaled by
 * @q_norm, @k_norm (d each), then rotated with @base. */
ScStatus sc_layer_qk_norm_rope (const ScLayerCtx *ctx, const float *q_norm, const float *k_norm,
                                float base, ScError *err);

/* The rest of llama's block once ctx->q and the new cache rows are ready (llama, Qwen2,
 * Qwen3): on every row or the last n_tail (sc_layer_tail), the causal attention with the
 * layer's window (sc_model_layer_window: Mistral's; none elsewhere) and the edits, x += o Wo^T, the tape's x_mid, then x += swiglu(rmsnorm(x) [Wg;Wu]^T) Wd^T. */
ScStatus sc_layer_attend_swiglu (const ScLayerCtx *ctx, const ScLayerView *w, ScError *err);

/* The rest of Gemma's block once ctx->q and the new cache rows are ready (Gemma 2, Gemma 3),
 * on every row or the last n_tail (sc_layer_tail): the causal attention with @window and
 * the edits, x += rmsnorm(o Wo^T) * @post_attn_norm, the tape's x_mid, then
 * x += rmsnorm(geglu(rmsnorm(x) [Wg;Wu]^T) Wd^T) * @post_ffn_norm. */
ScStatus sc_layer_attend_geglu_post (const ScLayerCtx *ctx, const ScLayerView *w,
                                     const float *post_attn_norm, const float *post_ffn_norm,
                                     int window, ScError *err);

/* The start of the feed-forward block: ctx->h = rmsnorm(ctx->x) * ffn_norm, then
 * ctx->gu (n_q, 2 F) = ctx->h . w_gate_up^T (one fused product); the activation is the
 * architecture's. */
ScStatus sc_layer_gate_up (const ScLayerCtx *ctx, const ScLayerView *w, ScError *err);

/* A projection y (n, out) = x (n, in) . W^T (+ y with @accumulate) on ctx->b, clocked
 * into ctx->stats when given. */
ScStatus sc_layer_matmul (const ScLayerCtx *ctx, float *y, const float *x, const float *w, int n,
                          int in, int out, bool accumulate, ScError *err);

/* The attention of queries @q (n_q, Q) over the layer's cache rows 0 .. n_k - 1 into
 * ctx->o and ctx->probs, with the intervention's key mask and head scales, @causal and
 * sliding @window (0 = none), scaled by info->attn_scale; clocked when stats are kept. */
ScStatus sc_layer_attention (const ScLayerCtx *ctx, const float *q, bool causal, int window,
                             ScError *err);

/* Steps of a layer's backward (ScLayerGradCtx), shared by the architectures. */

/* The attention op's backward from ctx->dattn (d o) into ctx->dq, ctx->dk, ctx->dv and
 * ctx->dprobs, with the forward's @window and the intervention's head scales, key mask and
 * detached heads; then RoPE's (adjacent pairs, or NeoX's split halves with @neox) on dq and
 * dk with @base, and the model's frequency factors when it has them (info->n_rope_freq).
 * dq and dk are then the gradients before RoPE. */
ScStatus sc_layer_attend_backward (const ScLayerGradCtx *ctx, int window, bool neox, float base,
                                   ScError *err);

/* The start of the attention block backwards: ctx->dh = @dq Wq + @dk Wk + ctx->dv Wv (the
 * fused rows of w_qkv), then ctx->dx += rmsnorm'(ctx->dh) at ctx->x_in with attn_norm. @dq
 * (n, Q) and @dk (n, KV) are the gradients of the projections' outputs (ctx->dq, ctx->dk,
 * or after a QK-norm's backward). */
ScStatus sc_layer_qkv_backward (const ScLayerGradCtx *ctx, const ScLayerView *w, const float *dq,
                                const float *dk, ScError *err);

/* The start of the feed-forward block backwards: ctx->dh = ctx->dgu [Wg;Wu], then
 * ctx->dx += rmsnorm'(ctx->dh) at ctx->x_mid with ffn_norm. */
ScStatus sc_layer_gate_up_backward (const ScLayerGradCtx *ctx, const ScLayerView *w,
                                    ScError *err);

/* The backward of a QK-norm (Qwen3, Gemma 3) and then of the block's start: its inputs
 * again, q0, k0 = (rmsnorm(ctx->x_in) * attn_norm) Wq^T, Wk^T into @q0 (n, Q) and @k0
 * (n, KV), with ctx->dh as scratch; @dq0, @dk0 = rmsnorm'(ctx->dq, ctx->dk) at q0, k0 with
 * @q_norm, @k_norm per head (a row of d values); then sc_layer_qkv_backward from @dq0, @dk0.
 * The four buffers are the architecture's scratch, free of ctx->dq, ctx->dk, ctx->dv and
 * ctx->x_in. */
ScStatus sc_layer_qk_norm_backward (const ScLayerGradCtx *ctx, const ScLayerView *w,
                                    const float *q_norm, const float *k_norm, float *q0, float *k0,
                                    float *dq0, float *dk0, ScError *err);

/* The backward of llama's block down to the attention's: dact = dx Wd, dgu = swiglu'(dact),
 * the feed-forward's start, do = dx Wo, then sc_layer_attend_backward with the layer's window
 * (as the forward's) and the model's RoPE base (NeoX pairs with @neox). What remains is the
 * block's start. */
ScStatus sc_layer_backward_swiglu_attend (const ScLayerGradCtx *ctx, const ScLayerView *w,
                                          bool neox, ScError *err);

/* The backward of Gemma's block (Gemma 2 and 3) down to the attention's, the forward read
 * from the bottom up:
 *   feed-forward:  a2 = geglu(gu) Wd^T                        (recomputed: act in dact)
 *                  da2 = rmsnorm'(dx) at a2 with @post_ffn_norm
 *                  dact = da2 Wd;  dgu = geglu'(dact);  dh = dgu [Wg;Wu]
 *                  dx  += rmsnorm'(dh) at x_mid
 *   attention:     a1 = o Wo^T;  da1 = rmsnorm'(dx) at a1 with @post_attn_norm
 *                  do = da1 Wo;  dq, dk, dv, dP = attention'(do) with the layer's window
 *                  (soft-capped as the forward was: ScModelInfo.attn_softcap)
 *                  dq, dk = rope_neox^-1 (dq, dk) with the layer's base
 * leaving ctx->dq, ctx->dk, ctx->dv for the block's start. ctx->dgu is the scratch of da2 and
 * da1 (n × n_embd), so n_embd <= 2 n_ff is required. */
ScStatus sc_layer_backward_geglu_post_attend (const ScLayerGradCtx *ctx, const ScLayerView *w,
                                              const float *post_attn_norm,
                                              const float *post_ffn_norm, ScError *err);

/* The whole backward of llama's block (sc-arch-llama.c), which Qwen2's is too: its RoPE
 * NeoX-ordered with @neox (Qwen2's Q, K, V biases are constants: they change nothing
 * backwards). */
ScStatus sc_layer_backward_swiglu (const ScLayerGradCtx *ctx, const ScLayerView *w, bool neox,
                                   ScError *err);

#ifdef __cplusplus
}
#endif
