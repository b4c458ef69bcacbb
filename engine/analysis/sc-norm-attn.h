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

/* @f (H, E): every head's f_h(x_j) = W_O^h v_j at token @j, in double (no checks: @dims
 * as sc_norm_values checks them). */
void sc_norm_head_vectors (const float *v, const float *wo, const ScNormDims *dims, int j,
                           double *f);

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

/* ------------------------------------------------------------------------------------ */
/* With the residual and the norms (Kobayashi, Kuribayashi, Yokoi and Inui 2021,
 * "Incorporating Residual and Normalization Layers into Analysis of Masked Language
 * Models"), for a full causal run (n queries = n keys = n tokens):
 *     A_ij   = Σ_h α_h[i][j] f_h(x_j)                      (the layer map's vector)
 *     t_ij   = s_i · (ω' ∘ A_ij) + δ_ij x_i                 x_i: the residual entering the
 *              layer; s_i ω' a norm the architecture puts on the attention's sum before the
 *              residual, frozen at row i's scale (Gemma 3's post-attention RMSNorm: ω' its
 *              weight, s_i = 1 / rms(Σ_j A_ij)); none (ω' = 1, s_i = 1) for llama
 *     R[i][j] = o_i ‖w ∘ t_ij‖                             w, o_i: a norm read after the
 *              residual (the FFN's RMSNorm: w its weight, o_i = 1 / rms(Σ_j t_ij)), or none
 *              (w = 1, o_i = 1): the residual-aware map
 * Σ_j t_ij is the residual after the attention block, and Σ_j o_i (w ∘ t_ij) what the FFN
 * reads, exactly: the terms split the layer's real output by source token. With ω = w ∘ ω':
 *     R[i][j]² = o_i² (s_i² a G^ω_j a + δ_ij (2 s_i a · c_i + ‖w ∘ x_i‖²)),
 *     G^ω_j[h][h'] = Σ_e ω_e² f_h(x_j)[e] f_h'(x_j)[e],  c_i[h] = Σ_e ω_e w_e f_h(x_i)[e] x_i[e]. */

/* G^ω (n, H, H), c (n, H) and ‖w ∘ x_j‖² (n) for one layer: @x (n, E) the residual entering
 * it, @omega and @w (E) the weights above (NULL: all 1). Errors as sc_norm_values. */
ScStatus sc_norm_residual_terms (const float *v, const float *wo, const ScNormDims *dims, int n,
                                 const float *x, const double *omega, const double *w,
                                 double *gram, double *cross, double *xx, ScError *err);

/* The map R (n, n) from the layer's (H, n, n) weights @alpha and the terms of
 * sc_norm_residual_terms; @row_scale (s_i) and @out_scale (o_i), (n) each, NULL: all 1.
 * Errors: SC_ERR_INVALID_ARG (NULL arguments, a dimension < 1), SC_ERR_NOMEM. */
ScStatus sc_norm_residual_map (const float *alpha, const double *gram, const double *cross,
                               const double *xx, int n_heads, int n, const double *row_scale,
                               const double *out_scale, float *out, ScError *err);

/* The context-mixing ratio of a map (Kobayashi 2021): the mean over rows i = 1 .. n − 1 of
 * Σ_{j ≠ i} @map[i][j] / Σ_j @map[i][j] — how much of what reaches token i comes from other
 * tokens. Rows whose sum is 0 or not finite skipped; NaN when none is left. */
double sc_norm_mix_ratio (const float *map, int n);

#ifdef __cplusplus
}
#endif
