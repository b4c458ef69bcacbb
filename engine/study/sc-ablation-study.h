/* sc-ablation-study.h — ablation importance of heads and tokens (DESIGN.md, "Analyses";
 * docs/metrics.md, "Ablation studies"): how much the model's output changes when one head
 * or one token is taken away, every head or token in turn.
 *
 * Common ground. A study runs on one sentence ids (n >= 1 tokens) and measures, against the
 * clean run of the same ids, with the definitions of engine/analysis/sc-effect.h:
 *   - the next-token effect at the last position n − 1: Δ log p(target), TV, JSD, both
 *     top-1s (target = the clean run's top-1 unless the caller names one);
 *   - Δ mean loss: the mean next-token loss of the ablated run minus the clean run's
 *     (sc-effect.h's loss_q, defined for n >= 2; NaN when n == 1 or no position qualifies);
 *   - flipped: the ablated top-1 differs from the clean top-1.
 *
 * Head sweep (Michel et al. 2019). Each of the n_layers × n_heads query heads is ablated
 * alone — zero-ablation (head_scale 0), or mean-ablation (the head outputs a caller-given
 * mean vector at every position: the reference means of study/sc-head-means.h, whose set
 * the params name; without means the mode is refused). Prefix reuse: the clean run keeps its residuals, and ablating a head
 * of layer L recomputes only layers >= L (start_layer = L), which gives the full run's
 * logits bit for bit (sc-forward.h). Δ mean loss is over the n − 1 predicted positions
 * q = 1 .. n − 1.
 *
 * Token leave-one-out (Jain & Wallace 2019), two kinds, for each position j = 0 .. n − 2:
 *   - mask: token j is removed from every attention row of every layer and the rows
 *     renormalised (ScIntervention.token_mask); positions and ids stay. The effect is read
 *     at position n − 1; Δ mean loss is over q = 1 .. n − 1, as for heads.
 *   - drop: token j is deleted from the ids and the n − 1 remaining tokens are run again
 *     (positions after j shift down by one). The effect is read at the new last position
 *     n − 2, for the same target. Δ mean loss is over the tokens both runs predict: the
 *     original positions q with 1 <= q <= n − 1, q != j, and q's new position q − [q > j]
 *     >= 1 (so with j = 0 the token at q = 1, first in the dropped run, is not counted);
 *     it is mean over those q of (drop loss − clean loss), NaN when there are none.
 * The last token (j = n − 1) is never erased: it is the query whose next token is
 * measured. Its entries are NaN (top-1s −1, flipped false), so n ≥ 2 is required.
 * A caller that needs one kind only (faithfulness reads one) asks for it with
 * ScAblationParams.loo_kinds and pays n − 1 runs instead of 2 (n − 1); the other kind's
 * entries are then NaN, and ScTokenLooResult.kinds says which kinds hold numbers. Each
 * kind's numbers are the same bit for bit whether it ran alone or with the other (every run
 * starts from the same ids; no run reads another's output).
 *
 * Progress and cancel: @progress (may be NULL) is called after each ablated run with the
 * fraction done (0..1]; returning false stops the study with SC_ERR_CANCELLED and nothing
 * is returned. Deterministic: the same model, ids and params give the same numbers.
 *
 * Storage (schema v2 studies, sc-store-study.h): kinds SC_ABLATION_KIND_HEADS and
 * SC_ABLATION_KIND_TOKENS, params from sc_ablation_params_json(). Per head metrics
 * "delta-logp", "tv", "jsd", "delta-loss", "flip" (0/1), "top1" (the ablated top-1 id);
 * per token series "<kind>.<metric>" (kind "mask" or "drop", same metrics, pos = j; only
 * the kinds the result holds, and a one-kind study's params say which: see
 * sc_ablation_params_json);
 * series "clean" holds pos 0 the target, 1 ln p_clean(target), 2 the clean top-1, 3 the
 * clean mean loss, 4 n.
 *
 * Contrast (head sweep and token leave-one-out). With ScAblationParams.contrast B, each
 * effect also holds delta_logit_diff = m_ablated − m_clean, m = logit(target) − logit(B)
 * at the measured position (n − 1; n − 2 for a drop) — ln p(target) − ln p(B), the log-
 * sum-exp cancels. Stored as one more head metric "delta-logit-diff" (per token "<kind>.
 * delta-logit-diff"), the params text gains ,"contrast":B after the target, and "clean"
 * gains pos 5 B and pos 6 m_clean. Without a contrast none of this is written, and the
 * params text is the one written before contrasts existed.
 *
 * Thread safety: one study per session at a time (the session's rule). The progress
 * callback runs on the calling thread. Plain C, no GLib.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "analysis/sc-effect.h"
#include "core/sc-error.h"
#include "forward/sc-forward.h"
#include "model/sc-model.h"
#include "store/sc-store-study.h"
#include "study/sc-study.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SC_ABLATION_KIND_HEADS "ablate-heads"
#define SC_ABLATION_KIND_TOKENS "ablate-tokens"
/* Bumped whenever a definition above changes, so old stored studies are not reused. */
#define SC_ABLATION_STUDY_VERSION 1

typedef enum {
  SC_ABLATE_ZERO = 0, /* head_scale 0 */
  SC_ABLATE_MEAN,     /* the head outputs head_mean (needs it) */
} ScAblateMode;

/* Token leave-one-out: which erasure kinds to run (bits). */
typedef enum {
  SC_LOO_MASK = 1 << 0,
  SC_LOO_DROP = 1 << 1,
  SC_LOO_BOTH = SC_LOO_MASK | SC_LOO_DROP,
} ScLooKinds;

typedef struct {
  int target;              /* token id to measure, or -1: the clean run's top-1 */
  /* Head sweep and token leave-one-out: a second token B, or −1: none. With B each effect
   * also holds Δ (logit(target) − logit(B)) at n − 1 (ScAblationEffect.delta_logit_diff),
   * the contrastive measure of Wang et al. 2022's indirect-object metric. */
  int contrast;
  ScAblateMode mode;       /* head sweep only */
  /* (n_layers, n_heads, head_dim) finite means, borrowed; SC_ABLATE_MEAN only
   * (ScHeadMeans.mean, sc-head-means.h). */
  const float *head_mean;
  /* SC_ABLATE_MEAN: the name of the reference set the means come from
   * (SC_HEAD_MEANS_SET_MAX rules), written into the params so that a sweep is reused only
   * with means of the same set; not read by the sweep itself. */
  const char *mean_set;
  /* Head sweep: recompute every layer for each head instead of reusing the clean prefix
   * (same numbers bit for bit; for tests and the benchmark). */
  bool full_recompute;
  /* Head sweep only: the last position's measures alone (Δ log p, TV, JSD, the top-1s,
   * flipped, Δ logit difference); Δ mean loss is NaN. Each ablated run then computes the
   * last layer's attention and feed-forward and the output head for the last row only
   * (ScForwardOptions.last_row), about a third less work at 64 tokens. Not bit-identical
   * to the all-position sweep: the logits of the last row differ by a few ulp (one row's
   * products are matrix-vector products), so each measure differs by at most 2δ for Δ
   * log p and Δ logit difference, e^(2δ) − 1 for TV and JSD, with δ the largest logit
   * difference (tests/engine/test-ablation-last.c checks both; docs/benchmarks.md, "Head
   * sweep"). The clean run is the same. Its params text says "measures":"last". */
  bool last_only;
  /* Head sweep with last_only and SC_ABLATE_ZERO: the nine runs of each layer's heads made
   * together, stacked into one batch (sc_forward_zero_heads), so each product is one for
   * all of them; within a bound of the runs made one at a time, as last_only is of the
   * all-position sweep (tests/engine/test-ablation-last.c measures both; docs/benchmarks.md,
   * "Head sweep: the runs of one layer stacked"). Its params text says "stacked":true.
   * Refused (SC_ERR_INVALID_ARG) without last_only, with mean-ablation or full_recompute,
   * and (SC_ERR_UNSUPPORTED) on an architecture or backend that does not stack runs. */
  bool stack_layers;
  /* Token leave-one-out only: the kinds to run, SC_LOO_* bits; 0 means both (so a
   * zero-initialised params runs what it always ran). Other bits are refused. */
  unsigned loo_kinds;
} ScAblationParams;

/* One ablation's effect (top-level comment): ScAblationEffect, sc-study.h. */

typedef struct {
  int n_layers, n_heads, n_tokens;
  int target;              /* the id measured */
  int top1_clean;
  double logp_clean;       /* ln p_clean(target) at n − 1 */
  double loss_clean;       /* mean clean loss over q = 1 .. n − 1 (NaN when n == 1) */
  int contrast;            /* −1: none */
  double logit_diff_clean; /* logit(target) − logit(contrast) at n − 1; NaN without one */
  ScAblationEffect *heads; /* (n_layers * n_heads), layer-major */
} ScHeadSweepResult;

typedef struct {
  int n_tokens;
  unsigned kinds;          /* SC_LOO_* bits: the kinds computed (or read back); the others'
                            * entries are all NaN */
  int target, top1_clean;
  double logp_clean, loss_clean;
  int contrast;            /* −1: none */
  double logit_diff_clean; /* as in ScHeadSweepResult */
  ScAblationEffect *mask;  /* (n_tokens); entry n − 1 is NaN (never erased) */
  ScAblationEffect *drop;  /* (n_tokens); likewise */
} ScTokenLooResult;

/* Called after each ablated run with the fraction done; false cancels. */
typedef ScStudyProgressFn ScAblationProgressFn;

/* The head sweep of @ids (n_tokens >= 1) on @session (bound to @model). On success *@out is
 * the caller's (sc_head_sweep_result_free). Errors: SC_ERR_INVALID_ARG (NULL arguments,
 * n_tokens < 1, an id out of the vocabulary, a target outside [0, n_vocab), a mode not in
 * the enum, SC_ABLATE_MEAN without head_mean), those of sc_forward() and sc-effect.h,
 * SC_ERR_CANCELLED, SC_ERR_NOMEM. All checked before the first run where they can be. */
ScStatus sc_head_sweep_run (ScSession *session, const ScModel *model, const int32_t *ids,
                            int n_tokens, const ScAblationParams *params,
                            ScAblationProgressFn progress, void *progress_user,
                            ScHeadSweepResult **out, ScError *err);

/* sc_head_sweep_run for the heads @only marks ((n_layers * n_heads), layer-major; NULL:
 * every head): each of them is ablated as the whole sweep ablates it, so its effect is the
 * whole sweep's bit for bit; the others' entries stay NaN (top-1s −1, flipped false). The
 * attribution first pass (sc-ablation-first.h) measures its top heads with it. @progress
 * counts the marked heads only. */
ScStatus sc_head_sweep_run_heads (ScSession *session, const ScModel *model,
                                  const int32_t *ids, int n_tokens,
                                  const ScAblationParams *params, const bool *only,
                                  ScAblationProgressFn progress, void *progress_user,
                                  ScHeadSweepResult **out, ScError *err);

/* Token leave-one-out of @ids (n_tokens >= 2): the kinds @params->loo_kinds names (0: both).
 * @params->mode, head_mean and full_recompute are ignored. Errors as sc_head_sweep_run
 * (n_tokens < 2 is SC_ERR_INVALID_ARG: there is no token to erase but the query; so are
 * loo_kinds bits outside SC_LOO_BOTH). */
ScStatus sc_token_loo_run (ScSession *session, const ScModel *model, const int32_t *ids,
                           int n_tokens, const ScAblationParams *params,
                           ScAblationProgressFn progress, void *progress_user,
                           ScTokenLooResult **out, ScError *err);

/* Empty results (every number NaN, top-1s −1; a tokens result's kinds SC_LOO_BOTH), for a
 * reader that fills them from the store. NULL when out of memory or a dimension is < 1. */
ScHeadSweepResult *sc_head_sweep_result_new (int n_layers, int n_heads, int n_tokens);
ScTokenLooResult *sc_token_loo_result_new (int n_tokens);
void sc_head_sweep_result_free (ScHeadSweepResult *r); /* NULL is a no-op */
void sc_token_loo_result_free (ScTokenLooResult *r);   /* NULL is a no-op */

/* ------------------------------------------------------------------------------------ */
/* Storage                                                                               */

/* The canonical params text (fixed key order, no spaces) of a study of @run_id:
 * {"study":V,"run":R,"target":T|null,"mode":"zero"} or, for a mean-ablation head sweep,
 * {"study":V,"run":R,"target":T|null,"mode":"mean","means":"SET"} into @buf (@size bytes).
 * The tokens study always writes mode "zero" (it ablates no head); one of one kind only
 * (loo_kinds SC_LOO_MASK or SC_LOO_DROP) appends ,"kinds":"mask" or ,"kinds":"drop", so a
 * one-kind study is never found by a reader that wants both (the default's text is the one
 * it always was). Returns the length, or −1 when @buf is too small (80 bytes always suffice
 * for "zero", 96 for a one-kind tokens study, 160 for "mean"), a mean sweep's mean_set is
 * not a valid set name, or loo_kinds has bits outside SC_LOO_BOTH. A head sweep with
 * last_only appends ,"measures":"last" (16 more bytes), and stack_layers then
 * ,"stacked":true (14 more); without them the text is the one written before the options
 * existed. */
int sc_ablation_params_json (const char *kind, int64_t run_id, const ScAblationParams *params,
                             char *buf, size_t size);

/* Stores a result as a complete study of @model with @params_json, in one transaction
 * (nothing stays on failure); a tokens result stores the series of its kinds only (the
 * caller gives params_json from params whose loo_kinds are the result's kinds).
 * *@study_id (may be NULL) receives its id. Errors: those of sc-store-study.h;
 * SC_ERR_INVALID_ARG for a tokens result whose kinds are 0 or outside SC_LOO_BOTH. */
ScStatus sc_head_sweep_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                              const ScHeadSweepResult *r, int64_t *study_id, ScError *err);
ScStatus sc_token_loo_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                             const ScTokenLooResult *r, int64_t *study_id, ScError *err);

/* Reads back the latest complete study of the model with @sha256 and @params_json (a
 * tokens result's kinds: those whose series the study holds). SC_ERR_NOT_FOUND when there
 * is none; SC_ERR_FORMAT when the stored study does not fit
 * @info (its shape, or a value out of range such as a top-1 outside the vocabulary).
 * *@study_id (may be NULL) receives its id. */
ScStatus sc_head_sweep_load (ScStore *store, const ScModelInfo *info,
                             const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                             ScHeadSweepResult **out, int64_t *study_id, ScError *err);
ScStatus sc_token_loo_load (ScStore *store, const ScModelInfo *info,
                            const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                            ScTokenLooResult **out, int64_t *study_id, ScError *err);

/* The study kinds of this file (sc-study.h), params ScAblationParams:
 *   heads       ablate-heads, zero-ablation        `saccade ablate RUN --heads`
 *   heads-mean  ablate-heads, mean-ablation with the means of ScStudyCtx.means_set (needs
 *               SC_STUDY_NEEDS_MEANS; params' mode, head_mean and mean_set are the ctx's)
 *   tokens      ablate-tokens, the kinds of params' loo_kinds (0: both)  `--tokens` */
extern const ScStudyKind sc_study_kind_heads;
extern const ScStudyKind sc_study_kind_heads_mean;
extern const ScStudyKind sc_study_kind_tokens;

#ifdef __cplusplus
}
#endif
