/* sc-trace.h — causal tracing of one sentence: how much of the model's answer each token's
 * own hidden state restores, layer by layer, when every other input token is noised
 * (Meng, Bau, Andonian & Belinkov, "Locating and Editing Factual Associations in GPT",
 * NeurIPS 2022, section 2.1; docs/metrics.md, "Causal tracing").
 *
 * Patching needs two runs that differ where the behaviour is decided. Faithfulness over a
 * sentence has one, and patching the clean/corrupted pairs of the patching study token by
 * token gives nothing before the first changed token (the two runs' residuals are equal
 * there). Causal tracing makes the corrupted run from the sentence itself, so that every
 * token has a patching effect:
 *
 *   clean run    the ids as they are; x^l_j is the residual stream entering layer l at
 *                position j (x^0 the embeddings, with the architecture's scaling);
 *   noised run   every item's embedding (positions j = 0 .. n − 2; the last token n − 1 is
 *                the query whose next token is measured and is never touched, as in
 *                leave-one-out) replaced by x^0_j + ν σ z_j, z_j ~ N(0, I) drawn from
 *                SplitMix64 seeded by (seed, sample) (core/sc-random.h), σ the standard
 *                deviation of the items' clean embedding entries (the sentence's own
 *                tokens: Meng et al. take it over the inputs they corrupt), ν = noise
 *                (3 in the paper and by default);
 *   restored run the noised run with x^l_j set back to the clean run's, for one layer l
 *                and one item j, every layer from l on recomputed (prefix reuse: the
 *                noised run's residuals below l are kept; at l = 0 the item's clean
 *                embedding among the noised ones).
 * The effect of (l, j) in one sample is that of the restored run against the noised run
 * on the last position's next-token distribution, measured as leave-one-out measures an
 * erasure (ScAblationEffect, sc-effect.h, with the noised run in the place of the clean
 * one): TV, JSD, Δ log p(target) = ln p_restored − ln p_noised, and with a contrast B the
 * Δ (logit(target) − logit(B)). Each is averaged over the samples (the paper averages ten).
 * The target is the clean run's top-1 unless named.
 *
 * The importance of item j for a measure M is the largest over layers of |mean M(l, j)|:
 * the most any one layer's state of that token restores of the answer
 * (sc_trace_importance). The whole grid is kept for the caller that shows it.
 *
 * Cost: per sample, one noised run and L (n − 1) restored runs, the one at layer l
 * recomputing L − l layers (about L (n − 1) / 2 full passes); its last row's logits only.
 *
 * Deterministic (the noise is seeded; the passes are the engine's). Thread safety: one study
 * per session at a time. Plain C, no GLib.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "core/sc-error.h"
#include "forward/sc-forward.h"
#include "model/sc-model.h"
#include "study/sc-study.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Meng et al.'s noise: three standard deviations of the inputs' embeddings. */
#define SC_TRACE_DEFAULT_NOISE 3.0
/* Samples of the noise a result averages. The paper averages ten; three keep a sentence's
 * tracing near the cost of its other sources, and the result names the count. */
#define SC_TRACE_DEFAULT_SAMPLES 3
#define SC_TRACE_MAX_SAMPLES 64
#define SC_TRACE_DEFAULT_SEED 1

typedef struct {
  int target;      /* a token id, or −1: the clean top-1 */
  int contrast;    /* a token id B (not the target), or −1: none */
  int samples;     /* <= 0: SC_TRACE_DEFAULT_SAMPLES; at most SC_TRACE_MAX_SAMPLES */
  double noise;    /* ν; <= 0 or NaN: SC_TRACE_DEFAULT_NOISE (ν = 0 is not noise: a test
                    * that wants it sets noise_zero) */
  bool noise_zero; /* ν = 0 exactly (the noised run is the clean run: every effect is 0) */
  uint64_t seed;
} ScTraceParams;

typedef struct {
  int n_layers, n_tokens;     /* the grids are (n_layers, n_tokens − 1): item j, layer l */
  int samples;
  double noise, sigma;        /* ν, and σ of the items' clean embeddings */
  int target, top1_clean, contrast;
  double logp_clean;          /* ln p_clean(target) at the last position */
  double logp_noised;         /* its mean over the samples' noised runs */
  double logit_diff_clean, logit_diff_noised; /* with a contrast; NaN without */
  /* mean over samples, (n_layers · (n_tokens − 1)), layer-major */
  double *tv, *jsd, *delta_logp, *delta_logit_diff; /* the last NaN without a contrast */
} ScTraceResult;

/* The tracing of @ids (n >= 2: one item and the query) on @session (bound to @model);
 * @progress after each restored run (false cancels: SC_ERR_CANCELLED, no result). Errors:
 * SC_ERR_INVALID_ARG (NULL arguments, an id, target or contrast outside the vocabulary, the
 * contrast equal to the target, samples over the maximum, items whose embeddings are all
 * equal, so σ = 0), those of sc_forward, SC_ERR_NOMEM. */
ScStatus sc_trace_run (ScSession *session, const ScModel *model, const int32_t *ids, int n,
                       const ScTraceParams *params, ScStudyProgressFn progress,
                       void *progress_user, ScTraceResult **out, ScError *err);

void sc_trace_result_free (ScTraceResult *r); /* NULL is a no-op */

/* Which measure an importance reads. */
typedef enum {
  SC_TRACE_TV = 0,
  SC_TRACE_JSD,
  SC_TRACE_ABS_DELTA_LOGP,
  SC_TRACE_ABS_DELTA_LOGIT_DIFF, /* with a contrast only */
} ScTraceMeasure;

/* @out[j] = max over layers l of |mean M(l, j)| for the items j = 0 .. n − 2, and, when
 * @layer is not NULL, @layer[j] the l that gave it (the lowest on ties). SC_ERR_INVALID_ARG
 * for NULL arguments, a measure out of range, the logit difference without a contrast, or
 * a NaN in the grid. */
ScStatus sc_trace_importance (const ScTraceResult *r, ScTraceMeasure measure, double *out,
                              int *layer, ScError *err);

#ifdef __cplusplus
}
#endif
