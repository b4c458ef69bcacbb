/* sc-effect.h — how much an intervention changed the model's output.
 *
 * The output measures of ablation importance (DESIGN.md, "Analyses"; docs/metrics.md,
 * "Effects and rank agreement"), computed from logits the study already has: a clean run and
 * an ablated run of the same ids. With p = softmax(clean row), q = softmax(ablated row):
 *   Δ log p(t) = ln q_t − ln p_t                  (nats; negative: the ablation hurt t)
 *   TV (p, q)  = ½ Σ_v |p_v − q_v|                 (in [0, 1])
 *   JSD (p, q) = ½ KL (p ‖ m) + ½ KL (q ‖ m),  m = (p + q) / 2   (nats, in [0, ln 2])
 *   loss_q     = −ln softmax (logits[q − 1])[ids[q]],  q = 1 .. n − 1   (next-token loss)
 *   Δ loss     = mean (ablated losses) − mean (clean losses)   (positive: the ablation hurt)
 * Every difference is ablated − clean. Log-softmax is taken in double after subtracting the
 * row's maximum, so no exp overflows and ln Z ≥ 0 is exact to rounding.
 *
 * Logits are float (the model's), shaped (n_vocab) for one row and (n, n_vocab) row-major
 * for a sentence; every logit must be finite (a NaN or an infinity is SC_ERR_INVALID_ARG
 * naming the row and the entry). Pure functions: no allocation unless stated, no state,
 * safe from any thread.
 *
 * Not here: running the clean or ablated pass (engine/study/), rank agreement between
 * importances (sc-rank.h).
 */
#pragma once

#include <stdint.h>

#include "core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The effect of an intervention on one next-token distribution. */
typedef struct {
  double delta_logp;  /* ln q_target − ln p_target (nats) */
  double logp_clean;  /* ln p_target */
  double logp_ablated;/* ln q_target */
  double tv;          /* ½ Σ |p − q|, in [0, 1] */
  double jsd;         /* Jensen–Shannon divergence (nats), in [0, ln 2] */
  int top1_clean;     /* sc_logits_top1 (clean) */
  int top1_ablated;   /* sc_logits_top1 (ablated) */
} ScEffect;

/* The id of the largest of the @n_vocab logits; on ties the lowest id (so the answer does
 * not depend on the order of a parallel reduction). Returns -1 when @logits is NULL,
 * @n_vocab < 1, or an entry is NaN. */
int sc_logits_top1 (const float *logits, int n_vocab);

/* ln softmax (@logits)[@token] in double, into @out. SC_ERR_INVALID_ARG: NULL pointers,
 * @n_vocab < 1, @token outside [0, n_vocab), a non-finite logit. */
ScStatus sc_log_softmax_at (const float *logits, int n_vocab, int token, double *out,
                            ScError *err);

/* The effect (above) of going from the @clean to the @ablated logit row, both (n_vocab),
 * borrowed, on the next-token distribution and on @target. SC_ERR_INVALID_ARG as for
 * sc_log_softmax_at; *out is untouched on error. */
ScStatus sc_effect_next_token (const float *clean, const float *ablated, int n_vocab,
                               int target, ScEffect *out, ScError *err);

/* The next-token losses of a sentence: @out[q − 1] = −ln softmax (@logits[q − 1])[@ids[q]]
 * for q = 1 .. @n − 1 (the convention of sc-induction-study.h; position 0 has no loss).
 * @logits (n, n_vocab), @ids (n), @out (n − 1), all caller-owned. SC_ERR_INVALID_ARG:
 * NULL pointers, @n < 2, @n_vocab < 1, an id outside [0, n_vocab), a non-finite logit. */
ScStatus sc_token_losses (const float *logits, const int32_t *ids, int n, int n_vocab,
                          double *out, ScError *err);

/* mean (@ablated) − mean (@clean) over @n per-position losses each (two (n) vectors, the
 * same positions). SC_ERR_INVALID_ARG: NULL pointers, @n < 1, a NaN loss (an infinite loss
 * is allowed: a token of probability 0 under float rounding). */
ScStatus sc_delta_mean_loss (const double *clean, const double *ablated, int n, double *out,
                             ScError *err);

/* sc_delta_mean_loss over sc_token_losses of two (n, n_vocab) logit blocks of the same
 * @ids (n): the Δ loss of the sentence, over its n − 1 predicted positions. Allocates
 * 2 (n − 1) doubles (SC_ERR_NOMEM); otherwise the errors of sc_token_losses. */
ScStatus sc_delta_loss_logits (const float *clean, const float *ablated, const int32_t *ids,
                               int n, int n_vocab, double *out, ScError *err);

#ifdef __cplusplus
}
#endif
