/* sc-backend-impl.h — the backend contract for implementers: the ops vtable, the struct
 * behind an ScBackend, and the checked entry points of the optional ops.
 *
 * Who includes it: the backends (sc-backend-cpu.c, sc-backend-ref.c, cuda/), the forward
 * pass (forward/sc-forward.c) and the architectures' layer functions (model/sc-arch-*.c).
 * Users of a backend need only sc-backend.h.
 *
 * Buffers: `float *` handles returned by alloc(). With SC_BACKEND_CAP_HOST_MEMORY they are
 * host memory; otherwise they are device pointers, which is why results reach the host only
 * through download(). All shapes are row-major and written next to each op as (rows, cols).
 * Arguments marked "host" are host memory on every backend.
 *
 * Errors: every op that can fail returns an ScStatus and fills @err (which may be NULL) with
 * the same status and a message naming the op, the backend and the cause ("cuda: attention:
 * launch failed: ..."); the caller adds where in the model it happened. The CPU ops fail
 * only when scratch memory runs out (SC_ERR_NOMEM). Arguments are the caller's contract and
 * are not re-checked by the ops, except where sc_backend_attention() says so.
 *
 * Required ops are called through b->ops directly. Optional ops, marked "(optional)", may be
 * NULL; a backend that fills one sets its ScBackendCap flag in b->caps. Call them through
 * the sc_backend_*() functions at the end, which report SC_ERR_UNSUPPORTED (naming the op
 * and the backend) when the backend lacks them, so an architecture that needs an op fails
 * cleanly on a backend that has not implemented it yet.
 *
 * A new backend fills this table, sets its caps, and joins the backend table of
 * tests/engine/test-backend-ops.c, which runs every op against "cpu-ref".
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/sc-backend.h"
#include "core/sc-error.h"
#include "format/sc-quant.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the attention op masks and scales (see the attention op below). The zero value
 * {0} is NOT the llama default: set causal = true for a decoder. */
typedef struct {
  float scale;              /* multiplies q . k: 1/sqrt(head_dim) unless the model says */
  bool causal;              /* query at position p sees keys j <= p only; false needs
                             * SC_BACKEND_CAP_ATTN_NONCAUSAL */
  int window;               /* > 0: keys with p - j >= window are masked too (sliding
                             * window; needs SC_BACKEND_CAP_ATTN_WINDOW); 0 = none */
  const uint8_t *key_mask;  /* host (n_k): nonzero = masked for every query; NULL = none */
  const float *head_scale;  /* host (n_heads): output scale per query head; NULL = all 1 */
  float softcap;            /* > 0: each visible score s becomes softcap * tanh(s / softcap)
                             * before the softmax (Gemma 2's attention-logit soft-capping;
                             * needs SC_BACKEND_CAP_SOFTCAP); 0 = none */
} ScAttnParams;

typedef struct {
  const char *name;

  void (*destroy) (ScBackend *b);

  /* Memory. alloc returns NULL (and fills @err) on failure; upload/download copy
   * @n_floats floats between host memory and a backend buffer. */
  float *(*alloc) (ScBackend *b, size_t n_floats, ScError *err);
  void (*free) (ScBackend *b, float *buf);
  ScStatus (*upload) (ScBackend *b, float *dst, const float *src, size_t n_floats, ScError *err);
  ScStatus (*download) (ScBackend *b, float *dst, const float *src, size_t n_floats, ScError *err);

  /* Makes a weight matrix available to the backend. Host-memory backends return @host
   * itself (no copy); device backends upload once and keep the copy until destroy. NULL
   * (and @err filled) on failure. */
  const float *(*weight) (ScBackend *b, const float *host, size_t n_floats, ScError *err);

  /* A weight matrix as the file stores it (format/sc-quant.h: rows of quantised blocks, of
   * up to three tensors stacked, as a fused projection is), made available as the @w of
   * matmul and matmul_backward and the @table of get_rows — not of any other op. What it
   * returns is a handle for those three: cpu keeps the blocks and decodes a panel of rows
   * inside each product; cpu-ref and device backends expand it once, into floats they own.
   * A handle addresses rows as the expanded matrix's address would: handle + r * cols is
   * row r, for products by a block of rows (a fused projection's parts).
   * The products are those of the expanded matrix (sc_weight_src_dequant), to the same
   * tolerance. Host code may read the handle as floats only where @src is one F32 part on
   * a host-memory backend (then it is the data itself). Valid until destroy; NULL (@err
   * filled) on failure. */
  const float *(*weight_src) (ScBackend *b, const ScWeightSrc *src, ScError *err);

  /* dst (n, dim) = table[ids[i]] rows; ids are host memory and already range-checked. */
  ScStatus (*get_rows) (ScBackend *b, float *dst, const float *table, const int32_t *ids, int n,
                        int dim, ScError *err);

  /* y (n, dim) = x / sqrt(mean(x^2) + eps) * w, per row; y may alias x. */
  ScStatus (*rmsnorm) (ScBackend *b, float *y, const float *x, const float *w, int n, int dim,
                       float eps, ScError *err);

  /* y (n, out) = x (n, in) . W^T with W (out, in); accumulate adds into y instead. */
  ScStatus (*matmul) (ScBackend *b, float *y, const float *x, const float *w, int n, int in,
                      int out, bool accumulate, ScError *err);

  /* In place: x (n, n_heads * head_dim), row i at position pos0 + i; rotates adjacent
   * pairs (2j, 2j+1) of the first n_rot dims of every head by pos * base^(-2j/n_rot). */
  ScStatus (*rope) (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot, int pos0,
                    float base, ScError *err);

  /* (optional; SC_BACKEND_CAP_ROPE_NEOX) rope with the NeoX pairing (ggml's
   * GGML_ROPE_TYPE_NEOX, which llama.cpp uses for Gemma and GPT-NeoX weights): the pair j is
   * (j, j + n_rot/2) of each head, rotated by the same angle pos * base^(-2j/n_rot). */
  ScStatus (*rope_neox) (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot,
                         int pos0, float base, ScError *err);

  /* (optional; SC_BACKEND_CAP_SOFTCAP) y (n) = cap * tanh(x / cap), cap > 0; y may alias x:
   * Gemma 2's soft-capping of the final logits. */
  ScStatus (*softcap) (ScBackend *b, float *y, const float *x, float cap, size_t n,
                       ScError *err);

  /* (optional; SC_BACKEND_CAP_ROPE_FREQ) rope, or rope_neox with @neox, with a frequency
   * factor per pair: pair c turns by pos * base^(-2c/n_rot) / freq_factors[c], with
   * @freq_factors host memory (n_rot/2), each finite and > 0 — ggml's rope with
   * freq_factors, which llama.cpp feeds from a file's rope_freqs.weight (Llama 3's scaling).
   * With @inverse, by the opposite angle: the backward of either pairing (the rotation's
   * transpose is its inverse). */
  ScStatus (*rope_freq) (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot,
                         int pos0, float base, const float *freq_factors, bool neox,
                         bool inverse, ScError *err);

  /* Grouped-query attention of n_q queries over n_k keys (1 <= n_q <= n_k): the queries
   * are the last n_q positions, so query row i sits at position p = n_k - n_q + i (n_q ==
   * n_k for a whole prompt; n_q < n_k when keys come from a cache).
   *   q (n_q, n_heads * d), k and v (n_k, n_kv * d); query head h uses kv head
   *     h / (n_heads / n_kv);
   *   visible keys of row i: j in [lo, hi] (sc_attn_key_range in core/sc-math.h): hi = p
   *     when p->causal, else n_k - 1; lo = max(0, p - window + 1) with a window, else 0;
   *     then minus the keys p->key_mask masks; a row whose visible keys are all masked
   *     attends to itself alone;
   *   probs (n_heads, n_q, n_k): softmax_j(scale * q_i . k_j) over row i's visible keys,
   *     exactly 0 for every other key;
   *   out (n_q, n_heads * d) = head_scale[h] * probs_h . v.
   * Backends without the optional options may assume causal and window = 0 (callers go
   * through sc_backend_attention(), which checks). */
  ScStatus (*attention) (ScBackend *b, float *out, float *probs, const float *q, const float *k,
                         const float *v, int n_q, int n_k, int n_heads, int n_kv, int d,
                         const ScAttnParams *params, ScError *err);

  /* y (n, f) = silu(gu[:, 0:f]) * gu[:, f:2f]: the fused gate|up projection (n, 2f) of a
   * SwiGLU block; y must not overlap gu. */
  ScStatus (*swiglu) (ScBackend *b, float *y, const float *gu, int n, int f, ScError *err);

  /* y (n) += x (n). */
  ScStatus (*add) (ScBackend *b, float *y, const float *x, size_t n, ScError *err);

  /* (optional; SC_BACKEND_CAP_SCALE) y (n) = s * x (n); y may alias x. */
  ScStatus (*scale) (ScBackend *b, float *y, const float *x, float s, size_t n, ScError *err);

  /* Copies n floats between backend buffers. */
  ScStatus (*copy) (ScBackend *b, float *dst, const float *src, size_t n, ScError *err);

  /* Copies a (rows, cols) block: dst row i = src row i, with leading dimensions (floats
   * between row starts) ld_dst and ld_src. Splits a fused projection's output. */
  ScStatus (*copy_2d) (ScBackend *b, float *dst, int ld_dst, const float *src, int ld_src,
                       int rows, int cols, ScError *err);

  /* (optional; SC_BACKEND_CAP_LAYER_NORM) y (n, dim) = (x - mean) / sqrt(var + eps) * w
   * + bias per row, with mean and the biased variance var = mean((x - mean)^2) of the row;
   * bias (dim) may be NULL (none); y may alias x. */
  ScStatus (*layer_norm) (ScBackend *b, float *y, const float *x, const float *w,
                          const float *bias, int n, int dim, float eps, ScError *err);

  /* (optional; SC_BACKEND_CAP_GELU) y (n) = gelu(x (n)), the tanh approximation
   * (sc_gelu_tanhf in core/sc-math.h, not BERT's erf form); y may alias x. */
  ScStatus (*gelu) (ScBackend *b, float *y, const float *x, size_t n, ScError *err);

  /* (optional; SC_BACKEND_CAP_GELU) y (n, f) = gelu(gu[:, 0:f]) * gu[:, f:2f]: a GeGLU
   * block's fused gate|up projection (n, 2f) (Gemma), gelu as above; y must not overlap
   * gu. */
  ScStatus (*geglu) (ScBackend *b, float *y, const float *gu, int n, int f, ScError *err);

  /* (optional; SC_BACKEND_CAP_ADD_BIAS) y (n, dim) += bias (dim) on every row. */
  ScStatus (*add_bias) (ScBackend *b, float *y, const float *bias, int n, int dim, ScError *err);

  /* (optional; SC_BACKEND_CAP_ATTN_CAPTURE: the GPU, and the fast CPU backend, which needs
   * no O(H n^2) float buffer then) The attention op of a
   * capture, which never materialises fp32 probabilities: @out exactly as attention's
   * (same inputs, params and tolerance); and for each head h with @want[h] nonzero (host
   * (n_heads); NULL = none: the op is then a plain fused attention), its probabilities as
   * fp16 (sc_fp32_to_fp16 of values within attention's tolerance; exactly 0 wherever
   * attention writes 0) in the store's layout (docs/store.md; sc_attn_packed_index in
   * core/sc-math.h): the lower triangle, row i at i(i+1)/2, when params->causal and n_q ==
   * n_k, else all (n_q, n_k) row-major. They land in host memory the backend owns for
   * @slot (0 .. SC_BACKEND_CAPTURE_SLOTS - 1) asynchronously: the op may return before the
   * copies finish, so that they overlap the next ops. */
  ScStatus (*attention_capture) (ScBackend *b, float *out, const float *q, const float *k,
                                 const float *v, int n_q, int n_k, int n_heads, int n_kv, int d,
                                 const ScAttnParams *params, const uint8_t *want, int slot,
                                 ScError *err);

  /* (optional; SC_BACKEND_CAP_ATTN_CAPTURE) Waits until the copies of the last
   * attention_capture on @slot have landed and sets heads[h] (host (n_heads of that call))
   * to head h's fp16 values, NULL for a head it did not capture, and *packed to whether
   * they are in the triangle layout. The values are the backend's, valid until the next
   * attention_capture on the same slot or destroy (on a host backend — synchronous, one
   * area for every slot — until the next attention_capture on any slot). */
  ScStatus (*capture_wait) (ScBackend *b, int slot, const uint16_t **heads, bool *packed,
                            ScError *err);

  /* ---- Backward ops (optional as a set; SC_BACKEND_CAP_BACKWARD) ----------------------
   * Activation gradients only (DESIGN.md, "Backward pass"): each takes dy, the gradient of
   * a scalar objective with respect to its forward op's output, and writes the gradient
   * with respect to the op's input; no weight gradients. The forward's inputs that the
   * derivative needs are passed back in, as the forward read them. Two forward ops need no
   * backward op of their own: add (y = a + b passes dy to both, the caller adds it where
   * both branches meet) and copy / copy_2d (the gradient is copied back the same way). */

  /* (optional; SC_BACKEND_CAP_BACKWARD) matmul's input gradient: dx (n, in) = dy (n, out)
   * . W (out, in), the forward's W; accumulate adds into dx instead. */
  ScStatus (*matmul_backward) (ScBackend *b, float *dx, const float *dy, const float *w, int n,
                               int in, int out, bool accumulate, ScError *err);

  /* (optional; SC_BACKEND_CAP_BACKWARD) rmsnorm's input gradient, per row with
   * r = 1 / sqrt (mean (x^2) + eps) and g = dy * w:
   *   dx = r g - x r^3 (g . x) / dim
   * written into dx (n, dim), or added with accumulate; x is the forward's input. dx must
   * not alias dy or x. */
  ScStatus (*rmsnorm_backward) (ScBackend *b, float *dx, const float *dy, const float *x,
                                const float *w, int n, int dim, float eps, bool accumulate,
                                ScError *err);

  /* (optional; SC_BACKEND_CAP_BACKWARD) rope's input gradient, in place: a rotation is
   * orthogonal, so dx is dy rotated by the opposite angle (same arguments as rope). */
  ScStatus (*rope_backward) (ScBackend *b, float *dx, int n, int n_heads, int head_dim, int n_rot,
                             int pos0, float base, ScError *err);

  /* (optional; SC_BACKEND_CAP_BACKWARD) swiglu's input gradient: from dy (n, f) and the
   * forward's gu (n, 2f), dgu (n, 2f) with, per element, s = sigmoid (gate):
   *   dgate = dy * up * s (1 + gate (1 - s)),   dup = dy * silu (gate).
   * dgu must not overlap dy or gu. */
  ScStatus (*swiglu_backward) (ScBackend *b, float *dgu, const float *dy, const float *gu, int n,
                               int f, ScError *err);

  /* (optional; SC_BACKEND_CAP_BACKWARD with SC_BACKEND_CAP_ROPE_NEOX) rope_neox's input
   * gradient, in place: dy rotated by the opposite angle (same arguments as rope_neox). */
  ScStatus (*rope_neox_backward) (ScBackend *b, float *dx, int n, int n_heads, int head_dim,
                                  int n_rot, int pos0, float base, ScError *err);

  /* (optional; SC_BACKEND_CAP_BACKWARD with SC_BACKEND_CAP_GELU) geglu's input gradient:
   * from dy (n, f) and the forward's gu (n, 2f), dgu (n, 2f) with, per element,
   *   dgate = dy * up * gelu'(gate),   dup = dy * gelu(gate)
   * (gelu the tanh form, as geglu). dgu must not overlap dy or gu. */
  ScStatus (*geglu_backward) (ScBackend *b, float *dgu, const float *dy, const float *gu, int n,
                              int f, ScError *err);

  /* (optional; SC_BACKEND_CAP_BACKWARD) get_rows' input gradient, a scatter-add:
   * dtable[ids[i]] (dim) += dy[i] for i < n (rows of a repeated id add up). */
  ScStatus (*get_rows_backward) (ScBackend *b, float *dtable, const float *dy, const int32_t *ids,
                                 int n, int dim, ScError *err);

  /* (optional; SC_BACKEND_CAP_BACKWARD) The attention op's gradients for a whole prompt
   * (n_q == n_k == n: no cache), from dout (n, n_heads * d) and the forward's q, k, v and
   * probs (n_heads, n, n) as it wrote them, with the same @params. Per head h (kv head g,
   * head scale hs), row i, over the keys j the row sees (probs > 0 or visible; every other
   * entry of dprobs is exactly 0):
   *   dprobs[h][i][j] = hs dout_i . v_j          (the gradient with respect to P itself)
   *   ds_ij           = p_ij (dprobs_ij - sum_j' p_ij' dprobs_ij')   (softmax Jacobian)
   *                     times 1 - tanh^2(scale q_i.k_j / softcap) with @params->softcap > 0
   *                     (the capped score's derivative; q and k give the raw score)
   *   dq_i            = scale sum_j ds_ij k_j
   *   dk_j            = scale sum_{h in g} sum_i ds_ij q_i
   *   dv_j            = sum_{h in g} hs sum_i p_ij dout_i
   * dq (n, n_heads * d), dk and dv (n, n_kv * d) are written, not accumulated. A head with
   * @detached[h] nonzero (host (n_heads) or NULL) had its probabilities set from outside
   * (an attention edit): its P does not depend on q and k, so it adds nothing to dq and
   * dk (its dprobs and dv are as above). */
  ScStatus (*attention_backward) (ScBackend *b, float *dq, float *dk, float *dv, float *dprobs,
                                  const float *dout, const float *q, const float *k,
                                  const float *v, const float *probs, int n, int n_heads,
                                  int n_kv, int d, const ScAttnParams *params,
                                  const uint8_t *detached, ScError *err);
} ScBackendOps;

/* The handle. Fields are set once by the backend's constructor. */
struct ScBackend {
  const ScBackendOps *ops;
  unsigned caps;         /* ScBackendCap flags; an optional op's flag => its op is set */
  int n_threads;
  char description[128]; /* for display: "CPU, 2 threads, ...", a GPU's name */
};

/* The checked entry points: each returns SC_ERR_UNSUPPORTED with "backend 'NAME' has no
 * OP (an optional op)" when the backend lacks the op or its flag, else the op's result. */
ScStatus sc_backend_layer_norm (ScBackend *b, float *y, const float *x, const float *w,
                                const float *bias, int n, int dim, float eps, ScError *err);
ScStatus sc_backend_gelu (ScBackend *b, float *y, const float *x, size_t n, ScError *err);
ScStatus sc_backend_geglu (ScBackend *b, float *y, const float *gu, int n, int f, ScError *err);
ScStatus sc_backend_add_bias (ScBackend *b, float *y, const float *bias, int n, int dim,
                              ScError *err);
ScStatus sc_backend_scale (ScBackend *b, float *y, const float *x, float s, size_t n,
                           ScError *err);
ScStatus sc_backend_rope_neox (ScBackend *b, float *x, int n, int n_heads, int head_dim,
                               int n_rot, int pos0, float base, ScError *err);
ScStatus sc_backend_softcap (ScBackend *b, float *y, const float *x, float cap, size_t n,
                             ScError *err);
ScStatus sc_backend_rope_freq (ScBackend *b, float *x, int n, int n_heads, int head_dim,
                               int n_rot, int pos0, float base, const float *freq_factors,
                               bool neox, bool inverse, ScError *err);

/* The optional backward ops of the optional forward ops (SC_ERR_UNSUPPORTED as above). */
ScStatus sc_backend_rope_neox_backward (ScBackend *b, float *dx, int n, int n_heads,
                                        int head_dim, int n_rot, int pos0, float base,
                                        ScError *err);
ScStatus sc_backend_geglu_backward (ScBackend *b, float *dgu, const float *dy, const float *gu,
                                    int n, int f, ScError *err);

/* How many host areas attention_capture rotates through: layer l uses slot l % 2, so the
 * host reads layer l's probabilities while the device computes layer l + 1. */
#define SC_BACKEND_CAPTURE_SLOTS 2

/* attention_capture after sc_backend_attention()'s checks, and SC_ERR_UNSUPPORTED unless
 * @b has SC_BACKEND_CAP_ATTN_CAPTURE; SC_ERR_INVALID_ARG for a slot out of range. */
ScStatus sc_backend_attention_capture (ScBackend *b, float *out, const float *q, const float *k,
                                       const float *v, int n_q, int n_k, int n_heads, int n_kv,
                                       int d, const ScAttnParams *params, const uint8_t *want,
                                       int slot, ScError *err);

/* SC_ERR_UNSUPPORTED ("backend 'NAME' has no backward ops") unless @b has
 * SC_BACKEND_CAP_BACKWARD; the backward pass checks once, then calls the ops directly. */
ScStatus sc_backend_check_backward (const ScBackend *b, ScError *err);

/* The attention op, after checking what the op may assume: SC_ERR_INVALID_ARG unless
 * 1 <= n_q <= n_k, n_kv >= 1 divides n_heads, d >= 1 and window >= 0; SC_ERR_UNSUPPORTED
 * when params ask for an option (non-causal, window) the backend lacks. */
ScStatus sc_backend_attention (ScBackend *b, float *out, float *probs, const float *q,
                               const float *k, const float *v, int n_q, int n_k, int n_heads,
                               int n_kv, int d, const ScAttnParams *params, ScError *err);

#ifdef __cplusplus
}
#endif
