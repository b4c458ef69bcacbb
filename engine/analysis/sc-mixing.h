/* sc-mixing.h — context mixing per layer, residual included (docs/metrics.md, "Value
 * zeroing" and "ALTI"): how much token j contributes to token i's representation at a
 * layer, and those maps rolled out through the model.
 *
 * Value zeroing (Mohebbi, Zuidema, Chrupała and Alishahi 2023, "Quantifying Context
 * Mixing in Transformers"): with x_i the residual leaving layer l (after its FFN)
 * and x_i^{¬j} the same when token j's value vectors are zero in every head of layer l,
 *     VZ[i][j] = 1 − cos(x_i, x_i^{¬j})   for j <= i, 0 above the diagonal,
 * each row then divided by its sum over j <= i. The study makes x^{¬j} by running the layer
 * again (study/sc-mixing-study.h); here are the distance and the normalisation.
 *
 * ALTI (Ferrando, Gállego and Costa-jussà 2022, "Measuring the Mixing of Contextual
 * Information in the Transformer"): the attention block's output with its residual,
 * y_i = x_i + P_i(Σ_h Σ_j α_h[i][j] f_h(x_j)), split by source token,
 *     T_i(x_j) = P_i(A_ij) + δ_ij x_i,   A_ij = Σ_h α_h[i][j] f_h(x_j),   Σ_j T_i(x_j) = y_i,
 * f_h(x_j) = W_O^h v_j (sc-norm-attn.h). P_i is the norm an architecture puts on the
 * attention's sum before the residual, linearised at row i as the paper linearises
 * LayerNorm (L_i(u) = γ ∘ (u − μ(u)) / σ(y_i)): Gemma 3's post-attention RMSNorm becomes
 * P_i(u) = ω' ∘ u / rms(Σ_j A_ij) (no mean to remove; the scale frozen at the sum's, so
 * Σ_j P_i(A_ij) is the norm's real output); llama and qwen2 have none (P_i(u) = u), their
 * pre-attention RMSNorm acting on x_j alone inside f_h. Then
 *     d_ij = ‖y_i − T_i(x_j)‖₁,   c_ij = max(0, ‖y_i‖₁ − d_ij),   C[i][j] = c_ij / Σ_k c_ik.
 * A row whose sum is 0 (or not finite) stays 0 in both methods.
 *
 * Rollout (both papers roll their maps out without adding the identity: each map already
 * holds the residual): R = M_{L−1} · … · M_1 · M_0.
 *
 * Pure and plain C (no GLib); thread-safe (no state). Sums in double.
 */
#pragma once

#include "analysis/sc-norm-attn.h"
#include "core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 − cos(@a, @b) over @n floats, in [0, 2]: 0 when both are zero, 1 when only one is. Equal
 * vectors give exactly 0 (a·a / sqrt(‖a‖²‖a‖²) is exactly 1 in IEEE arithmetic). */
double sc_mixing_cos_distance (const float *a, const float *b, int n);

/* Each row i of the causal (@n, @n) @map divided by its sum over j <= i; entries above the
 * diagonal set to 0; a row whose sum is 0, negative or not finite set to 0 entirely. */
void sc_mixing_normalise_rows (float *map, int n);

/* ALTI of one layer into @out (n, n), rows normalised: @v (n, H_kv · d) and @wo (E, H · d)
 * as sc_norm_values takes them, @alpha (H, n, n) the layer's weights (a full causal run),
 * @x (n, E) the residual entering the layer, @post_norm (E) Gemma 3's post-attention RMSNorm
 * weights or NULL (none), @eps its epsilon. Errors: SC_ERR_INVALID_ARG (NULL arguments, a
 * bad shape), SC_ERR_NOMEM. */
ScStatus sc_alti_layer_map (const float *v, const float *wo, const ScNormDims *dims, int n,
                            const float *alpha, const float *x, const float *post_norm,
                            double eps, float *out, ScError *err);

/* The rollout R = M_{L−1} · … · M_0 of @n_layers (n, n) maps @maps[l] into @out (n, n).
 * Errors: SC_ERR_INVALID_ARG, SC_ERR_NOMEM. */
ScStatus sc_mixing_rollout (const float *const *maps, int n_layers, int n, double *out,
                            ScError *err);

#ifdef __cplusplus
}
#endif
