/* sc-backward.h — the backward pass: gradients of a scalar objective with respect to the
 * input embeddings and to every head's attention probabilities (DESIGN.md, "Backward
 * pass"). Activation gradients only; the weights get none.
 *
 * An ScGrad is bound to a session (sc-forward.h) and keeps what the backward needs:
 *   1. sc_grad_forward() runs the model on a whole prompt with a tape — per layer the
 *      queries after RoPE, the probabilities, the gate|up projection and the residual
 *      between the blocks, beside the session's own per-layer keys, values and residuals;
 *   2. sc_grad_backward() takes an objective, computes its value from the kept final
 *      residual, and runs the layers' backward functions (model/sc-arch-*.c) from the last
 *      layer down, each through the backend's backward ops (sc-backend-impl.h), handing
 *      each layer's d objective / d P to an observer, and returns d objective / d input.
 * Memory: the tape of every layer is kept when it fits in tape_max_bytes (default
 * SC_GRAD_TAPE_MAX_BYTES); otherwise one layer's slot is kept and each layer is recomputed
 * from its kept residual just before its backward (a third forward's work, no n x n matrix
 * per layer). docs/gradients.md gives the bytes at n = 128, 512, 2,048.
 *
 * Objectives (ScObjective): the log-probability of a target token at a row, the sentence's
 * mean next-token loss, or any function of one row's logits whose gradient the caller gives
 * (adversarial attention's distance penalty).
 *
 * Interventions: head scales, masked tokens and SC_ATTN_EDIT_REPLACE edits (whose heads are
 * detached: their P does not depend on their queries and keys). Mean-ablation and the
 * other edits are refused (SC_ERR_INVALID_ARG): their P is not a differentiable function
 * the backward ops know.
 *
 * Thread safety: one thread at a time per ScGrad and its session. Plain C, no GLib.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sc-error.h"
#include "forward/sc-forward.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The tape is kept whole up to this many bytes (SmolLM2: ~1.1 MB a token for 30 layers at
 * n = 512, so whole up to n ≈ 800; past it layers are recomputed). */
#define SC_GRAD_TAPE_MAX_BYTES ((size_t) 1 << 30)

typedef enum {
  /* log p (target | tokens 0 .. position) = log_softmax (logits[position])[target] */
  SC_OBJECTIVE_LOGP = 0,
  /* the mean next-token loss over the sentence: -(1 / (n - 1)) sum_{i < n - 1}
   * log p (ids[i + 1] | tokens 0 .. i); needs n >= 2 */
  SC_OBJECTIVE_LOSS,
  /* the caller's function of the logits of row @position, given as its gradient
   * @dlogits; its value is the caller's (sc_grad_backward reports NaN) */
  SC_OBJECTIVE_DLOGITS,
  /* logit(target) − logit(contrast) at row @position, which is also
   * log p(target) − log p(contrast): the log-sum-exp cancels (contrastive explanations,
   * Yin & Neubig 2022) */
  SC_OBJECTIVE_LOGIT_DIFF,
} ScObjectiveKind;

typedef struct {
  ScObjectiveKind kind;
  int position;          /* LOGP, DLOGITS, LOGIT_DIFF: the row, 0 .. n - 1; -1 = the last */
  int32_t target;        /* LOGP, LOGIT_DIFF: a token id */
  const float *dlogits;  /* DLOGITS: host (n_vocab), borrowed for the call */
  int32_t contrast;      /* LOGIT_DIFF: a token id other than @target */
} ScObjective;

/* Per layer (from the last down) and head: @probs the forward's probabilities and
 * @dprobs d objective / d P, (n, n) row-major host memory each, borrowed for the call
 * (exactly 0 where the query does not see the key). Returning false cancels. */
typedef bool (*ScGradObserveFn) (void *user, int layer, int head, const float *probs,
                                 const float *dprobs, int n);

typedef struct {
  const ScIntervention *intervention; /* NULL = none; borrowed until sc_grad_backward returns */
  const float *input_embd;            /* host (n, E) or NULL: embeddings instead of the ids'
                                       * rows of token_embd (copied), in the same space:
                                       * scaled by ScModelInfo.embd_scale (Gemma) as the
                                       * looked-up rows are */
  size_t tape_max_bytes;              /* 0 = SC_GRAD_TAPE_MAX_BYTES */
  const ScObserver *observer;         /* the forward's probabilities, as sc_forward */
  /* > 0: recompute only layers >= start_layer, reusing the layers below from the previous
   * sc_grad_forward() on the same ids and input (an intervention that changes nothing
   * below start_layer gives the same result as a full run, bit for bit) */
  int start_layer;
  /* the backward stops after this layer (0 = every layer): grad_embd is then the gradient
   * with respect to the residual entering it */
  int lowest_layer;
  /* Optional (NULL = not wanted): called by sc_grad_backward() for each layer it passes,
   * from the last down, with @d_o = d objective / d o, the gradient with respect to the
   * layer's attention output before W_O — the o of ScObserver.attn_output: (n, width) host
   * floats, width = n_heads * head_dim, head h in columns h * head_dim .. — borrowed for the
   * call (a host copy on a device backend). Attribution patching multiplies it by the
   * change of a head's output (study/sc-patch-study.h). Returning false cancels. */
  bool (*attn_output_grad) (void *user, int layer, const float *d_o, int n, int width);
  void *attn_output_grad_user;
} ScGradOptions;

/* Where the time and memory went (bytes are what the session and the ScGrad hold). */
typedef struct {
  bool recomputed;        /* layers were recomputed (the tape did not fit) */
  size_t tape_bytes;      /* the tape as held */
  size_t grad_bytes;      /* the backward's own buffers (gradients, scratch) */
  size_t session_bytes;   /* the session's activations, cache and residuals */
  double forward_s, backward_s;
} ScGradStats;

typedef struct ScGrad ScGrad;

/* Binds a backward pass to @session (borrowed; it must outlive the ScGrad). Errors:
 * SC_ERR_UNSUPPORTED when the architecture has no layer backward or the backend no backward
 * ops (the message names which), SC_ERR_NOMEM. */
ScStatus sc_grad_new (ScSession *session, ScGrad **out, ScError *err);
void sc_grad_free (ScGrad *grad); /* NULL is a no-op */

/* The forward pass on @ids (n >= 1 tokens) with the tape, keeping the residuals for
 * sc_grad_logits() and the backward. Errors: those of sc_forward(), SC_ERR_INVALID_ARG for
 * an intervention the backward cannot follow (above), SC_ERR_NOMEM naming the tape. */
ScStatus sc_grad_forward (ScGrad *grad, const int32_t *ids, int n_tokens,
                          const ScGradOptions *options, ScError *err);

/* The logits of row @row of the last sc_grad_forward() into @logits (n_vocab host floats). */
ScStatus sc_grad_logits (ScGrad *grad, int row, float *logits, ScError *err);

/* The backward of @objective through the last sc_grad_forward(): *@value (may be NULL)
 * receives the objective's value (NaN for DLOGITS), @grad_embd (host (n, E), may be NULL)
 * d objective / d input embeddings (the token_embd rows or input_embd, before Gemma's
 * embd_scale; with lowest_layer, the residual entering that layer), and @observe (may be
 * NULL) each head's d objective / d P.
 * May be called again with another objective on the same forward. Errors:
 * SC_ERR_INVALID_ARG (no forward yet, a position or target out of range, LOSS with n < 2),
 * the backend's errors, SC_ERR_CANCELLED (the observer), SC_ERR_NOMEM. */
ScStatus sc_grad_backward (ScGrad *grad, const ScObjective *objective, ScGradObserveFn observe,
                           void *observe_user, double *value, float *grad_embd, ScError *err);

/* Stats of the last forward and backward. */
ScGradStats sc_grad_stats (const ScGrad *grad);

#ifdef __cplusplus
}
#endif
