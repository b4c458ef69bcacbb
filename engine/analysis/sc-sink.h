/* sc-sink.h — attention sinks as Gu et al. 2025 measure them ("When Attention Sink Emerges
 * in Language Models: An Empirical View", ICLR 2025): each head's attention mass on the
 * first token, and the share of heads where that mass passes a threshold. Pure functions
 * over captured matrices; the study that makes the three inputs and runs the model is
 * engine/study/sc-sink-study.h. docs/metrics.md ("Attention sinks") has the definitions.
 *
 *   first-token mass   α_1 = (1/n_q) Σ_i A[i][0] over the head's n_q rows: with the full
 *                      square (n_q = n_k = T) it is Gu et al.'s importance score of the first
 *                      token, (1/T) Σ_{t=1..T} A_{t,1}, the mean over EVERY query, row 0
 *                      (where A[0][0] = 1 in a causal head) included — what their code
 *                      (eval_sink_open_source.py) computes. It equals sc-head-stats' "sink".
 *   sink rate          Sink_1^ε = (1/(L·H)) Σ_l Σ_h 1(α_1^{l,h} > ε): strictly greater, as
 *                      their code compares; a NaN mass never counts. Per layer the same share
 *                      over that layer's H heads.
 * Sums accumulate in double. The functions never allocate.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Gu et al.'s threshold ε and input length T. */
#define SC_SINK_EPSILON 0.3
#define SC_SINK_TOKENS 64

/* *@out = (1/n_query) Σ_i probs[i][0] for @probs (n_query, n_key) row-major, borrowed.
 * Errors: SC_ERR_INVALID_ARG when @probs or @out is NULL or not 1 <= n_query <= n_key (then
 * *@out is untouched). */
ScStatus sc_sink_first_mass (const float *probs, int n_query, int n_key, double *out,
                             ScError *err);

typedef struct {
  double epsilon;  /* the threshold it was counted with */
  int n_heads;     /* L·H: every head counted */
  int n_sinks;     /* heads with mass > epsilon */
  double rate;     /* n_sinks / n_heads, in [0, 1] */
  double mean;     /* the mean mass over the heads whose mass is not NaN (NaN if none) */
} ScSinkRate;

/* Counts the sinks among @mass (n_layers * n_heads, layer-major: head h of layer l at
 * l * n_heads + h). @layer_rate and @layer_mean (n_layers each, either may be NULL) receive
 * each layer's share of sink heads and its mean mass (NaN where every mass is NaN).
 * Errors: SC_ERR_INVALID_ARG (NULL @mass or @out, n_layers or n_heads < 1, @epsilon not
 * finite); the outputs are untouched then. */
ScStatus sc_sink_rate (const double *mass, int n_layers, int n_heads, double epsilon,
                       ScSinkRate *out, double *layer_rate, double *layer_mean, ScError *err);

/* Writes into @idx the indices of the min(@k, @n) largest of @mass (n), largest first; ties
 * go to the lower index, NaN counts as smaller than every number. Returns how many it
 * wrote (0 for n < 1, k < 1 or a NULL array). O(n k). */
int sc_sink_top (const double *mass, int n, int k, int *idx);

#ifdef __cplusplus
}
#endif
