/* sc-permutation-study.h — attention permutation (Jain & Wallace 2019, section 4; DESIGN.md,
 * "Analyses"; docs/metrics.md, "Attention permutation and erasure curves"): does the
 * output care which key a head attends to, or only how peaked its rows are?
 *
 * For each studied query head (l, h) — every head, or a caller-given list — and each
 * permutation k = 0 .. N − 1, the run of the sentence with that head's attention rows
 * permuted (SC_ATTN_EDIT_PERMUTE on (l, h) alone, with seed s_k) is compared with the
 * clean run by the measures of sc-ablation-study.h / sc-effect.h: Δ log p(target), TV and
 * JSD of the next-token distribution at the last position, Δ mean loss over the predicted
 * positions q = 1 .. n − 1, flipped (the permuted top-1 differs from the clean top-1).
 * Target: the clean run's top-1 unless the caller names one.
 *
 * Seeds. s_k = sc_permutation_seed (seed, k): the (k + 1)-th output of SplitMix64 (Steele,
 * Lea & Flood 2014) started at state = the base seed, i.e. mix (seed + (k + 1) γ) with
 * γ = 0x9E3779B97F4A7C15 and SplitMix64's finaliser. Every head uses the same s_k; the
 * forward pass folds (s_k, layer, head, query position) into each row's own stream
 * (sc-intervention.h), so different heads get different permutations and a study with N
 * permutations is the first N of one with more.
 *
 * Spread. Per head, over the N permutations, of TV, JSD, Δ log p and Δ mean loss: the
 * minimum, the quartiles q25, median q50, q75 and the maximum, where the p-quantile of the
 * sorted sample x_0 <= .. <= x_{N−1} is linear interpolation between order statistics
 * (Hyndman & Fan 1996 type 7; R's default, numpy's "linear"):
 *   h = (N − 1) p,  Q(p) = x_⌊h⌋ + (h − ⌊h⌋) (x_⌊h⌋+1 − x_⌊h⌋)   (x_N is never read).
 * So with N = 1 every quantile is the one value; with N = 4, q25 = x_0 + 0.75 (x_1 − x_0).
 * A sample holding a NaN has NaN quantiles (Δ mean loss is NaN for n = 1). The flip share
 * is (the number of flipped permutations) / N.
 *
 * Prefix reuse: the clean run keeps its residuals and a head of layer L recomputes only
 * layers >= L (start_layer = L), which gives the full recompute bit for bit (sc-forward.h;
 * full_recompute runs every layer, for tests). A one-token sentence has rows of one key,
 * which every permutation leaves as they are: every effect is exactly 0.
 *
 * Progress and cancel: @progress (may be NULL) is called after each permuted run with the
 * fraction done (0..1]; returning false stops with SC_ERR_CANCELLED and nothing is
 * returned. Deterministic: the same model, ids and params give the same numbers.
 *
 * Storage (sc-store-study.h): kind SC_PERMUTATION_KIND, params from
 * sc_permutation_params_json(). Per studied head, metrics "<m>.min", "<m>.q25",
 * "<m>.median", "<m>.q75", "<m>.max" for m in tv, jsd, delta-logp, delta-loss, and
 * "flip-share"; every permutation's own numbers as series "perm.<metric>" (metric as in
 * sc-ablation-study.h: delta-logp, tv, jsd, delta-loss, flip, top1) at pos = i N + k, i the
 * head's index among the studied heads in layer-major order; series "clean" as in
 * sc-ablation-study.h. The reader recomputes the summaries from the permutations' numbers
 * (the stored summaries are for SQL readers) after checking every one of them.
 *
 * Thread safety: one study per session at a time. Plain C, no GLib.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "study/sc-ablation-study.h"
#include "study/sc-study.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SC_PERMUTATION_KIND "ablate-permute"
/* Bumped whenever a definition above changes, so old stored studies are not reused. */
#define SC_PERMUTATION_STUDY_VERSION 1
/* At most this many permutations per head: far more than a median needs, few enough that
 * a study of every head of SmolLM2 fits the store's series positions (270 × 1024 < 2^19). */
#define SC_PERMUTATION_MAX_N 1024

typedef struct {
  int target;          /* token id to measure, or −1: the clean run's top-1 */
  int n_permutations;  /* N, 1 .. SC_PERMUTATION_MAX_N */
  uint64_t seed;       /* the base seed (above) */
  /* (n_list) flat head indices layer · n_heads + head, each once, any order; NULL (and
   * n_list 0) = every head. Results come in layer-major order either way. Borrowed. */
  const int *heads;
  int n_list;
  bool full_recompute; /* recompute every layer (same numbers; for tests) */
} ScPermutationParams;

/* A sample's minimum, quartiles (type 7, above) and maximum. */
typedef struct {
  double min, q25, median, q75, max;
} ScSpread;

typedef struct {
  int layer, head;
  ScSpread tv, jsd, delta_logp, delta_loss;
  double flip_share;   /* flipped / N, in [0, 1] */
} ScPermutationHead;

typedef struct {
  int n_layers, n_heads, n_tokens;
  int n_permutations;
  uint64_t seed;
  int target, top1_clean;
  double logp_clean, loss_clean;  /* as ScHeadSweepResult */
  int n_studied;                  /* heads studied */
  ScPermutationHead *heads;       /* (n_studied), layer-major */
  ScAblationEffect *effects;      /* (n_studied, N): head i's permutation k at i N + k */
} ScPermutationResult;

/* s_k (top-level comment). */
uint64_t sc_permutation_seed (uint64_t base_seed, int k);

/* The p-quantile (type 7) of @sorted (n >= 1, ascending, no NaN); NaN when n < 1 or p is
 * outside [0, 1]. */
double sc_quantile_sorted (const double *sorted, int n, double p);

/* The spread of @v (n >= 1 values, not modified); every field NaN when a value is NaN or
 * n < 1. Allocates n doubles: false when out of memory. */
bool sc_spread (const double *v, int n, ScSpread *out);

/* The study of @ids (n_tokens >= 1) on @session (bound to @model). On success *@out is the
 * caller's (sc_permutation_result_free). Errors: SC_ERR_INVALID_ARG (NULL arguments,
 * n_tokens < 1, an id outside the vocabulary, a target outside it, N outside
 * 1 .. SC_PERMUTATION_MAX_N, a head index outside the model or listed twice, n_list < 0
 * or > 0 with heads NULL), those of sc_forward() and sc-effect.h, SC_ERR_CANCELLED,
 * SC_ERR_NOMEM. All checked before the first run. */
ScStatus sc_permutation_run (ScSession *session, const ScModel *model, const int32_t *ids,
                             int n_tokens, const ScPermutationParams *params,
                             ScAblationProgressFn progress, void *progress_user,
                             ScPermutationResult **out, ScError *err);

/* An empty result of @n_studied heads (numbers NaN, top-1s −1, heads' layer/head −1), for
 * readers. NULL when out of memory or a count is < 1. */
ScPermutationResult *sc_permutation_result_new (int n_layers, int n_heads, int n_tokens,
                                                int n_studied, int n_permutations);
void sc_permutation_result_free (ScPermutationResult *r); /* NULL is a no-op */

/* The canonical params text {"study":V,"run":R,"target":T|null,"n":N,"seed":S,
 * "heads":null|[i,...]} (seed as an unsigned decimal, heads as sorted flat indices) into
 * @buf. Returns the length, or −1 when @buf is too small or params are NULL. */
int sc_permutation_params_json (int64_t run_id, const ScPermutationParams *params, char *buf,
                                size_t size);

/* Stores @r as a complete study (one transaction; nothing stays on failure). Errors: those
 * of sc-store-study.h; SC_ERR_INVALID_ARG when the permutations do not fit the store's
 * series positions (n_studied × N >= 2^19). */
ScStatus sc_permutation_store (ScStore *store, const ScStoreModel *model,
                               const char *params_json, const ScPermutationResult *r,
                               int64_t *study_id, ScError *err);

/* Reads back the latest complete study with @params_json of the model with @sha256.
 * SC_ERR_NOT_FOUND when there is none; SC_ERR_FORMAT when anything does not fit @info or is
 * out of range: N outside 1 .. SC_PERMUTATION_MAX_N or not the params', a head without all
 * N permutations, TV outside [0, 1], JSD outside [0, ln 2], a flip other than 0/1 or not
 * matching the top-1s, a top-1 outside the vocabulary, a Δ log p that is not finite. */
ScStatus sc_permutation_load (ScStore *store, const ScModelInfo *info,
                              const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
                              const char *params_json, ScPermutationResult **out,
                              int64_t *study_id, ScError *err);

/* This file's study kind (sc-study.h), params ScPermutationParams:
 * `saccade ablate RUN --permute N`. */
extern const ScStudyKind sc_study_kind_permute;

#ifdef __cplusplus
}
#endif
