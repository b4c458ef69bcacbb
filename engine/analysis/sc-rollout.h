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
 * Without the first token (ScRolloutOptions.exclude_first; docs/metrics.md, "Attention sinks"):
 * before the mean, every head's row i drops key 0 and is renormalised over the keys left,
 * A'[i][j] = A[i][j] / Σ_{k>=1} A[i][k] for j >= 1 and A'[i][0] = 0; a row with no weight
 * left (row 0 of a causal head, or a head whose row put everything on key 0) becomes the
 * identity row A'[i][i] = 1 (the head passes position i on unchanged). The residual ½ I is
 * kept as it is, so Â's rows still sum to 1, and token 0 reaches no other position: its
 * rollout and flow into any target t > 0 are 0, and what the sink held is spread over the
 * other keys in proportion to their attention.
 * Rollout is a chain of (n, n) products (L n^3, BLAS-free double loops at our sizes). Flow
 * is a max-flow per input token on (L + 1) n nodes and L n^2 edges, solved by igraph's
 * push-relabel; it is refused past SC_FLOW_MAX_WORK or SC_FLOW_MAX_NODES (SC_ERR_RANGE, saying so).
 *
 * Not here: running the model (the caller hands over captured heads).
 */
#pragma once

#include <stdbool.h>

#include "core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Flow's limits, checked before anything is allocated (docs/metrics.md, "Attention flow",
 * has the measurements). One call solves one maximum flow per input token over a graph of
 * (n_layers + 1) n nodes and, for causal heads, up to n_layers n (n + 1) / 2 edges, and
 * push-relabel's time grows with (flows x edges) — not with nodes alone: 1,984 nodes (30
 * layers, 64 tokens) take 0.4 s, 1,792 nodes (6 layers, 256 tokens) 7 s. So:
 *   SC_FLOW_MAX_WORK   n x n_layers x n (n + 1) / 2 <= this: about 1 s on the reference
 *                      machine (2 cores, 0.25 us per edge and flow); SmolLM2 (30 layers)
 *                      gets flows up to 64 tokens;
 *   SC_FLOW_MAX_NODES  (n_layers + 1) n <= this: bounds the memory of deep models with
 *                      few tokens.
 * sc_attention_flow_fits() says beforehand whether a shape passes both. */
#define SC_FLOW_MAX_NODES 40000
#define SC_FLOW_MAX_WORK 4000000.0

/* Whether sc_attention_flow() accepts @n_layers layers of @n tokens (it refuses the rest
 * with SC_ERR_RANGE). */
bool sc_attention_flow_fits (int n_layers, int n);

/* How the attention enters Â. Zeroed (or a NULL pointer): as the model computed it. */
typedef struct {
  bool exclude_first; /* drop key 0 from every row and renormalise (above) */
} ScRolloutOptions;

/* @layers[l] (n_layers entries, borrowed) is layer l's (n_heads, n, n) block of heads.
 * Fills @out (n, n) with the rollout R. Errors: SC_ERR_INVALID_ARG, SC_ERR_NOMEM. */
ScStatus sc_attention_rollout (const float *const *layers, int n_layers, int n_heads, int n,
                               double *out, ScError *err);
/* The same with @opt (NULL: the defaults, as sc_attention_rollout). */
ScStatus sc_attention_rollout_with (const float *const *layers, int n_layers, int n_heads,
                                    int n, const ScRolloutOptions *opt, double *out,
                                    ScError *err);

/* Fills @out (n) with the flow from every input token to output position @target
 * (0 <= target < n). Errors: SC_ERR_INVALID_ARG, SC_ERR_RANGE (graph too large),
 * SC_ERR_NOMEM, SC_ERR_UNSUPPORTED (built without igraph). */
ScStatus sc_attention_flow (const float *const *layers, int n_layers, int n_heads, int n,
                            int target, double *out, ScError *err);
/* The same with @opt (NULL: the defaults, as sc_attention_flow). */
ScStatus sc_attention_flow_with (const float *const *layers, int n_layers, int n_heads, int n,
                                 const ScRolloutOptions *opt, int target, double *out,
                                 ScError *err);

/* The maximum flow from node @source to node @target (distinct, in [0, n_nodes)) of the
 * directed graph with @n_edges edges @edges[2k] -> @edges[2k + 1] of @capacity[k] (finite,
 * >= 0), by igraph's push-relabel: the building block of sc_attention_flow, public so that
 * it can be tested on graphs with a known cut. Errors: SC_ERR_INVALID_ARG, SC_ERR_NOMEM. */
ScStatus sc_max_flow (int n_nodes, const int *edges, const double *capacity, int n_edges,
                      int source, int target, double *value, ScError *err);

#ifdef __cplusplus
}
#endif
