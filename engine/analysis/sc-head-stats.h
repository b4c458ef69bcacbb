/* sc-head-stats.h — what one attention head does, in numbers: the per-head statistics of
 * DESIGN.md ("Analyses"), computed once from a head's probability matrix and used by every
 * face of Saccade (the command line, the window's Model page, exports, the store).
 *
 * Definitions (docs/metrics.md cites each one's paper). A is (n_query, n_key) row-major; the
 * queries are the last n_query positions, so row i sits at position p = n_key - n_query + i
 * and, in a causal head, sees keys 0..p. Every "mean" is over the rows it is defined on:
 *   entropy        mean_i  H_i,  H_i = -sum_j a_ij ln a_ij (nats; 0 ln 0 = 0)
 *   entropy_norm   mean over rows with p >= 1 of H_i / ln(p + 1): 0 = one key, 1 = uniform
 *                  over the keys a causal row may see (NaN when no row has p >= 1)
 *   distance       mean_i  sum_j a_ij |p - j|   (mean attention distance, in tokens)
 *   confidence     mean_i  max_j a_ij           (Voita et al. 2019)
 *   sink           mean_i  a_i0                 (attention sink, Xiao et al. 2023)
 *   sink_k         mean_i  sum_{j < k} a_ij     (the first k tokens; k = opt->sink_k)
 *   previous       mean over rows with p >= 1 of a_i,p-1   (NaN when there is none)
 *   self           mean_i  a_i,p
 *   last_entropy, last_top, last_top_weight: the last row's H, argmax key and its weight
 *                  (ties: the lowest key).
 * Sums accumulate in double. The functions never allocate.
 *
 * Not here: anything that runs a model (engine/study/), and storing the numbers
 * (engine/store/).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  double entropy;
  double entropy_norm;
  double distance;
  double confidence;
  double sink;
  double sink_k;
  double previous;
  double self;
  double last_entropy;
  int last_top;
  double last_top_weight;
} ScHeadStats;

typedef struct {
  int sink_k; /* k of sink_k: the first k keys; <= 0 means SC_HEAD_STATS_DEFAULT_SINK_K */
} ScHeadStatsOptions;

/* StreamingLLM (Xiao et al. 2023) keeps four initial tokens as its attention sink. */
#define SC_HEAD_STATS_DEFAULT_SINK_K 4

/* Computes @out from @probs (n_query, n_key), borrowed. @opt may be NULL (defaults).
 * Errors: SC_ERR_INVALID_ARG when @probs or @out is NULL, n_query < 1, n_key < 1 or
 * n_query > n_key (then @out is untouched). */
ScStatus sc_head_stats_compute (const float *probs, int n_query, int n_key,
                                const ScHeadStatsOptions *opt, ScHeadStats *out, ScError *err);

/* The same statistics a row at a time, for a caller that never holds the whole matrix
 * (the store's writer decodes one fp16 row at a time): begin, then every row in order,
 * then end. Bit for bit what sc_head_stats_compute gives on the same rows. */
typedef struct {
  int n_query, n_key, k, i;
  double ent, ent_norm, dist, conf, sink, sink_k, prev, self;
  int n_norm, n_prev;
  ScHeadStats last; /* the last row's part, filled when it arrives */
} ScHeadStatsAcc;

/* Starts @acc for a (n_query, n_key) matrix, 1 <= n_query <= n_key (unchecked here:
 * sc_head_stats_compute checks). @opt may be NULL. */
void sc_head_stats_begin (ScHeadStatsAcc *acc, int n_query, int n_key,
                          const ScHeadStatsOptions *opt);

/* Adds the next row: @row holds n_key floats of which those at @len and beyond are 0 (a
 * causal row: len = p + 1); they need not be read one by one, which halves the work on a
 * causal head. */
void sc_head_stats_add_row (ScHeadStatsAcc *acc, const float *row, int len);

/* The statistics, once all n_query rows were added. */
void sc_head_stats_end (const ScHeadStatsAcc *acc, ScHeadStats *out);

/* The metrics a head can be coloured or sorted by, in the order tables show them. */
typedef enum {
  SC_HEAD_METRIC_ENTROPY,
  SC_HEAD_METRIC_ENTROPY_NORM,
  SC_HEAD_METRIC_DISTANCE,
  SC_HEAD_METRIC_CONFIDENCE,
  SC_HEAD_METRIC_SINK,
  SC_HEAD_METRIC_SINK_K,
  SC_HEAD_METRIC_PREVIOUS,
  SC_HEAD_METRIC_SELF,
  SC_HEAD_METRIC_LAST_ENTROPY,
  SC_HEAD_N_METRICS
} ScHeadMetric;

/* The metric's value in @stats. */
double sc_head_stats_get (const ScHeadStats *stats, ScHeadMetric metric);

/* Stable identifiers ("entropy", "entropy-norm", "distance", "confidence", "sink",
 * "sink-k", "previous-token", "self", "last-entropy"): the names in JSON, in the store's
 * head_scores.metric and in settings. NULL for a value out of range. */
const char *sc_head_metric_id (ScHeadMetric metric);

/* The metric named @id; false when there is none. */
bool sc_head_metric_from_id (const char *id, ScHeadMetric *out);

#ifdef __cplusplus
}
#endif
