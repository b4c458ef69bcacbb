/* sc-rollout.h — attention rollout and attention flow (Abnar & Zuidema 2020, "Quantifying
 * attention flow in transformers"): how much each input token reaches a position through
 * every layer, counting the residual connection.
 *
 * For layer l with heads A_l,h (n, n): Â_l = ½ · mean_h A_l,h + ½ · I (each row sums to 1).
 *   rollout  R = Â_L · ... · Â_1   (n, n): row i says how much position i draws from each
 *            input token; every row sums to 1.
 *   flow     for an output position t: a layered graph with n nodes per layer boundary
 *            (0..L), an edge from (l, j) to (l + 1, i) of capacity Â_l+1[i][j]; flow[j] is
 *            the maximum flow from input node (0, j) to output node (L, t).
 * Rollout is a chain of (n, n) products (L n^3, BLAS-free double loops at our sizes). Flow
 * is a max-flow per input token on (L + 1) n nodes and L n^2 edges, solved by igraph's
 * push-relabel; it is refused above SC_FLOW_MAX_NODES nodes (SC_ERR_RANGE, saying so).
 *
 * Not here: running the model (the caller hands over captured heads).
 */
#pragma once

#include "core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest graph flow accepts: (n_layers + 1) * n nodes. docs/metrics.md gives the time
 * this takes on the reference machine. */
#define SC_FLOW_MAX_NODES 40000

/* @layers[l] (n_layers entries, borrowed) is layer l's (n_heads, n, n) block of heads.
 * Fills @out (n, n) with the rollout R. Errors: SC_ERR_INVALID_ARG, SC_ERR_NOMEM. */
ScStatus sc_attention_rollout (const float *const *layers, int n_layers, int n_heads, int n,
                               double *out, ScError *err);

/* Fills @out (n) with the flow from every input token to output position @target
 * (0 <= target < n). Errors: SC_ERR_INVALID_ARG, SC_ERR_RANGE (graph too large),
 * SC_ERR_NOMEM, SC_ERR_UNSUPPORTED (built without igraph). */
ScStatus sc_attention_flow (const float *const *layers, int n_layers, int n_heads, int n,
                            int target, double *out, ScError *err);

#ifdef __cplusplus
}
#endif
