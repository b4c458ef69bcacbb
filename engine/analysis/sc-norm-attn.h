/* sc-norm-attn.h — norm-based attention (Kobayashi, Kuribayashi, Yokoi and Inui 2020,
 * "Attention is Not Only a Weight: Analyzing Transformers with Vector Norms";
 * docs/metrics.md, "Norm-based attention"): how much of token j actually reaches token i
 * through a head is its weight times the size of what it sends.
 *
 * Definitions, for one layer with H query heads of d dimensions, H_kv KV heads (query head
 * h reads KV head g(h) = h / (H / H_kv)), model width E and n tokens:
 *     v_j           the value vector the attention multiplies (the layer's own: after the
 *                   attention norm and W_V, with b_V where the architecture has one — none
 *                   of ours do), KV head g(h)'s d values at token j
 *     f_h(x_j)      = W_O^h v_j          (E): W_O^h is W_O's columns h·d .. (h+1)·d − 1,
 *                   the slice that multiplies head h's output
 *     vnorm[h][j]   = ‖f_h(x_j)‖                                       (the value norm)
 *     N_h[i][j]     = ‖α_h[i][j] f_h(x_j)‖ = α_h[i][j] · vnorm[h][j]     (per head)
 *     N[i][j]       = ‖Σ_h α_h[i][j] f_h(x_j)‖                          (per layer: the heads'
 *                   vectors summed before the norm; with G_j[h][h'] = f_h(x_j) · f_h'(x_j),
 *                   N[i][j]² = Σ_h Σ_h' α_h[i][j] α_h'[i][j] G_j[h][h'])
 * The maps are not renormalised: a row of N_h sums to ‖f‖'s weighted mean, not to 1. The
 * share of the first token (sc_norm_first_share) is the one renormalised quantity, said so
 * where it is used. Sums are in double; the inputs (α, v, W_O) are the forward pass's
 * float32 values and the dense float32 weights of sc-model.h (dequantised at load).
 *
 * Layouts (row-major, host memory): v (n, H_kv · d) as the observer's qkv() gives it, KV
 * head g in columns g·d ..; W_O (E, H · d) as ScLayerWeights.wo; α (H, n_q, n_k) as a
 * layer's observed probabilities (row i of a full run is position i); vnorm (H, n_k);
 * gram (n_k, H, H); a map (n_q, n_k) floats, one per head or per layer — what a heatmap
 * view takes.
 *
 * Pure and plain C (no GLib); thread-safe (no state). Not here: running the model
 * (engine/study/sc-norm-study.h takes v and α from the forward pass).
 */
#pragma once

#include <stddef.h>

#include "core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The shape of one layer's attention. */
typedef struct {
  int n_heads;    /* H */
  int n_kv_heads; /* H_kv, dividing H */
  int head_dim;   /* d */
  int n_embd;     /* E */
} ScNormDims;

/* Value norms of one layer's heads at @n tokens: @vnorm (H, n) ‖f_h(x_j)‖ and, when @gram
 * is not NULL, @gram (n, H, H) the dot products f_h(x_j) · f_h'(x_j) (symmetric; its
 * diagonal is vnorm²). @v (n, H_kv · d), @wo (E, H · d). Errors: SC_ERR_INVALID_ARG (NULL
 * arguments, a dimension < 1, H not a multiple of H_kv), SC_ERR_NOMEM. */
ScStatus sc_norm_values (const float *v, const float *wo, const ScNormDims *dims, int n,
                         double *vnorm, double *gram, ScError *err);

/* Head h's map: @out[i][j] = @alpha[i][j] · @vnorm[j] for one head's (@n_q, @n_k) weights
 * and its @n_k value norms. */
void sc_norm_head_map (const float *alpha, const double *vnorm, int n_q, int n_k, float *out);

/* The layer's map: @out[i][j] = sqrt (max (0, a G_j a)) with a_h = @alpha[h][i][j], for the
 * layer's (H, @n_q, @n_k) weights @alpha and its (@n_k, H, H) @gram (sc_norm_values): n_q ·
 * n_k · H² operations, where summing the E-vectors would cost n_q · n_k · H · E. Errors:
 * SC_ERR_INVALID_ARG (NULL arguments, a dimension < 1), SC_ERR_NOMEM. */
ScStatus sc_norm_layer_map (const float *alpha, const double *gram, int n_heads, int n_q,
                            int n_k, float *out, ScError *err);

/* What a map (or a weight matrix: n_q = n_k = n, a full causal run) gives the first token:
 * the mean over rows i = 1 .. n − 1 of @map[i][0] / Σ_j @map[i][j] (row 0 sees only token
 * 0 and is left out). A row whose sum is 0 or not finite is skipped; NaN when no row is
 * left (n < 2). For weights, whose rows sum to 1, it is the mean weight on the first
 * token; for a norm-based map, its share of the row's norm-based attention. */
double sc_norm_first_share (const float *map, int n);

#ifdef __cplusplus
}
#endif
