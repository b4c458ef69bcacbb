/* sc-induction-study.h — the induction-head detector (Olsson et al. 2022): runs the model
 * on S repeated random sequences and scores every head (engine/analysis/sc-induction.h
 * defines the scores) and every position's loss.
 *
 * The sequences. Seed s (0 .. S-1) seeds splitmix64 (Steele et al. 2014; state = s, each
 * draw adds 0x9E3779B97F4A7C15 and mixes), which draws T distinct ordinary tokens by a
 * partial Fisher-Yates shuffle of the ordinary-token list (j = i + draw mod (M - i); the
 * modulo bias is below M / 2^64). Ordinary tokens are those of type NORMAL
 * (tokenizer.ggml.token_type 1, after the tokenizer's CONTROL marking of special tokens)
 * other than BOS and EOS, with ids below both the tokenizer's and the model's vocabulary:
 * CONTROL, BYTE, UNUSED, USER_DEFINED, UNKNOWN and UNDEFINED tokens never appear. The
 * sequence is BOS (when the tokenizer adds one: n_prefix = 1, else 0), then the T tokens,
 * then the same T tokens again: n = n_prefix + 2T ids. The same (model, T, s) always gives
 * the same sequence.
 *
 * The loss. With all logits of a run, loss[q] = -ln p(ids[q] | ids[0..q-1]) for every
 * target position q = 1 .. n-1, averaged over seeds: loss[q] = logsumexp(z) - z[ids[q]] for
 * the logits z of position q-1 (the maximum and the exponentials in float, sc_expf of
 * core/sc-math.h; the sum, the logarithm and the loss in double). loss_first is
 * its mean over the targets of the first copy (q = max(1, n_prefix) .. n_prefix+T-1),
 * loss_second over the second copy (q = n_prefix+T .. n-1): a model that learns in
 * context predicts the second copy far better.
 *
 * Thread safety: one study per session at a time (the session's rule); the model may be
 * shared. The progress callback runs on the calling thread.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "analysis/sc-induction.h"
#include "core/sc-error.h"
#include "forward/sc-forward.h"
#include "model/sc-model.h"
#include "study/sc-study.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The benchmark: 50 tokens repeated, 10 seeds. */
#define SC_INDUCTION_DEFAULT_LEN 50
#define SC_INDUCTION_DEFAULT_SEEDS 10

typedef struct {
  int seq_len; /* T >= 2 */
  int n_seeds; /* S >= 1 */
} ScInductionParams;

typedef struct {
  int n_layers, n_heads; /* of the model */
  int seq_len, n_seeds, n_prefix, n_tokens; /* T, S, BOS or not, n = n_prefix + 2T */
  ScInductionScores *heads; /* (n_layers * n_heads), layer-major: means over the seeds */
  double *loss;             /* (n_tokens): loss[q] as above, mean over seeds; loss[0] = NaN */
  double loss_first, loss_second;
  int32_t *ids;             /* (n_tokens): seed 0's sequence, to show a head on it */
} ScInductionResult;

/* Called after each layer of each seed with the fraction done (0..1]; false cancels. */
typedef ScStudyProgressFn ScInductionProgressFn;

/* Fills @ids (room for n_prefix + 2T) with seed @seed's sequence; *@n_prefix (may be NULL)
 * receives 0 or 1. Errors: SC_ERR_INVALID_ARG (T < 2, seed < 0), SC_ERR_RANGE (n_prefix +
 * 2T beyond the model's context), SC_ERR_UNSUPPORTED (fewer than T ordinary tokens),
 * SC_ERR_NOMEM. */
ScStatus sc_induction_sequence (const ScModel *model, int seq_len, int seed, int32_t *ids,
                                int *n_prefix, ScError *err);

/* Runs the detector on @session (bound to @model). On success *@out is the caller's (free
 * with sc_induction_result_free). Errors: those of sc_induction_sequence() (checked before
 * any run, and SC_ERR_INVALID_ARG for S < 1), those of sc_forward() (SC_ERR_CANCELLED when
 * @progress returned false), SC_ERR_NOMEM. */
ScStatus sc_induction_study_run (ScSession *session, const ScModel *model,
                                 const ScInductionParams *params, ScInductionProgressFn progress,
                                 void *progress_user, ScInductionResult **out, ScError *err);

/* An empty result of the given shape (every number NaN, ids zero), for a reader that fills
 * it from the store. NULL when out of memory or a dimension is < 1. */
ScInductionResult *sc_induction_result_new (int n_layers, int n_heads, int seq_len, int n_seeds,
                                            int n_prefix);

void sc_induction_result_free (ScInductionResult *result); /* NULL is a no-op */

#ifdef __cplusplus
}
#endif
