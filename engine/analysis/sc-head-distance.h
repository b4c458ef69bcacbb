/* sc-head-distance.h — how differently two attention heads look at the same sentence.
 *
 * The head distance of Clark et al. 2019 ("What does BERT look at?", §5): the mean over
 * query rows of the Jensen–Shannon divergence between the two heads' rows,
 *   JSD (p, q) = H (m) - (H (p) + H (q)) / 2,   m = (p + q) / 2,   H = -sum x ln x (nats),
 * so two identical heads are at 0 and two heads whose rows never share a key are at ln 2.
 * Heads are (n_query, n_key) row-major, rows summing to 1 (causal zeros allowed); the two
 * heads of a pair must have the same shape. Sums in double.
 *
 * Not here: clustering the matrix (sc-cluster.h), running a model.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Jensen–Shannon divergence in nats of two distributions over @n entries; in [0, ln 2]. */
double sc_jsd (const float *p, const float *q, int n);

/* Mean over the @n_query rows of sc_jsd (row i of @a, row i of @b). SC_ERR_INVALID_ARG for
 * NULL pointers or empty shapes. */
ScStatus sc_head_distance (const float *a, const float *b, int n_query, int n_key, double *out,
                           ScError *err);

/* Called now and then with the number of pairs done; returning false cancels. */
typedef bool (*ScAnalysisProgressFn) (void *user, size_t done, size_t total);

/* The (n_heads, n_heads) matrix @out of sc_head_distance() between every pair of the
 * @n_heads heads @heads[i] (each (n_query, n_key), borrowed): symmetric, 0 on the
 * diagonal. Uses up to @n_threads threads (<= 0: all cores). @progress may be NULL.
 * Errors: SC_ERR_INVALID_ARG, SC_ERR_CANCELLED, SC_ERR_NOMEM. */
ScStatus sc_head_distance_matrix (const float *const *heads, int n_heads, int n_query,
                                  int n_key, int n_threads, ScAnalysisProgressFn progress,
                                  void *user, double *out, ScError *err);

#ifdef __cplusplus
}
#endif
