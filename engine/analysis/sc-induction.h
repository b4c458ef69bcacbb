/* sc-induction.h — the induction-head scores of Olsson et al. 2022 ("In-context learning
 * and induction heads"): what one head does on a repeated random sequence, and how much its
 * OV circuit copies tokens. Pure functions over a captured matrix and the model's weights;
 * the detector that makes the sequence and runs the model is engine/study/
 * sc-induction-study.h. Definitions are in docs/metrics.md ("Induction heads").
 *
 * The repeated sequence, n = n_prefix + 2T positions:
 *   positions 0 .. n_prefix-1            the prefix (BOS, when the tokenizer adds one)
 *   positions n_prefix .. n_prefix+T-1    the first copy t_0 .. t_{T-1}
 *   positions n_prefix+T .. n-1           the second copy, the same T tokens
 * The T tokens are distinct, so a token of the second copy has exactly one earlier
 * occurrence, T positions back.
 *
 * Attention scores. A is the head's (n, n) probability matrix, row-major, causal. Every
 * score is a mean over the T rows of the second copy, p = n_prefix + T + i, i = 0..T-1,
 * of one key per row:
 *   prefix_matching   a[p][p - T + 1]   the token after p's earlier occurrence (for i = T-1
 *                                       this is the first token of the second copy, still
 *                                       <= p, so every row counts)
 *   duplicate_token   a[p][p - T]       p's earlier occurrence itself
 *   previous_token    a[p][p - 1]       the token just before p
 * Only the second copy is averaged: there every key exists and the three keys are distinct
 * (T >= 2), and a uniform head scores about 1/(n_prefix + 1.5 T) on each, not the 1/2 of
 * the first rows of the sequence. Sums accumulate in double.
 *
 * OV copying score. For head h of a layer, token t's one-hot input maps to the logits
 *   M = W_U' W_O^h W_V'^h W_E^T                    (n_vocab, n_vocab)
 * where W_E (n_vocab, n_embd) is token_embd, W_U (n_vocab, n_embd) the output matrix
 * (token_embd when tied), W_V^h (head_dim, n_embd) the rows of wv of h's KV group (GQA),
 * W_O^h (n_embd, head_dim) the columns of wo that h's output multiplies, and the norms are
 * folded in: W_V' = W_V diag(g_attn) (the attention RMSNorm multiplies the normalised
 * residual by g_attn before wv reads it) and W_U' = W_U diag(g_out) (the output RMSNorm
 * before the vocabulary projection). Each RMSNorm also divides by the residual's RMS, a
 * positive per-token scalar: it scales M's rows or columns by positive numbers that
 * depend on the context, not on the head, and is left out (Olsson et al. do the same with
 * LayerNorm). Write M = A B with A = W_U' W_O^h (n_vocab, head_dim) and B = W_V'^h W_E^T
 * (head_dim, n_vocab); AB and BA have the same nonzero eigenvalues (if ABx = λx with
 * λ != 0 then Bx != 0 and BA(Bx) = λ(Bx)), so we decompose the head_dim x head_dim
 *   BA = W_V'^h (W_E^T W_U') W_O^h
 * instead of a vocabulary-sized matrix. W_E^T W_U' (n_embd, n_embd) is shared by all heads.
 * Of BA's eigenvalues λ (LAPACK dgeev) we report
 *   copying            sum Re λ / sum |λ|      in [-1, 1]: THE copying score (Olsson et
 *                                              al.'s "positive eigenvalue" statistic);
 *                                              identity -> 1, -identity -> -1
 *   positive_share     sum_{Re λ > 0} |λ| / sum |λ|   in [0, 1]
 * Both are NaN for a head whose circuit is zero (sum |λ| = 0).
 */
#pragma once

#include <stdbool.h>

#include "core/sc-error.h"
#include "model/sc-model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  double prefix_matching;
  double duplicate_token;
  double previous_token;
} ScInductionScores;

/* The attention scores of one head. @probs is (n, n) row-major, borrowed, with
 * n = n_prefix + 2 * T. Errors: SC_ERR_INVALID_ARG (NULL pointers, T < 2, n_prefix < 0,
 * @n != n_prefix + 2T); @out is then untouched. */
ScStatus sc_induction_head_scores (const float *probs, int n, int n_prefix, int T,
                                   ScInductionScores *out, ScError *err);

typedef struct {
  double copying;        /* sum Re λ / sum |λ| */
  double positive_share; /* sum_{Re λ > 0} |λ| / sum |λ| */
} ScOvCopying;

/* W_E^T diag-folded W_U: @gram (n_embd, n_embd) row-major receives
 *   gram[i][j] = sum_t w_e[t][i] w_u[t][j] g_out[j]
 * for @w_e, @w_u (n_vocab, n_embd) row-major and @g_out (n_embd, NULL = ones). Uses BLAS
 * (sc_blas_init() first). Errors: SC_ERR_INVALID_ARG, SC_ERR_NOMEM. */
ScStatus sc_ov_gram (const float *w_e, const float *w_u, const float *g_out, int n_vocab,
                     int n_embd, float *gram, ScError *err);

/* One head's score from @gram (sc_ov_gram), @w_v (head_dim, n_embd) row-major (its KV
 * group's rows), @g_attn (n_embd, NULL = ones), and @w_o: the (n_embd, head_dim) block
 * starting at the head's first column of wo, whose rows are @ld_o floats apart. Uses BLAS
 * and LAPACK (sc_blas_init() first). Errors: SC_ERR_INVALID_ARG, SC_ERR_NOMEM, and
 * sc_blas_eigenvalues()'s (SC_ERR_UNSUPPORTED: no LAPACK in the loaded OpenBLAS). */
ScStatus sc_ov_copying_head (const float *gram, int n_embd, const float *w_v,
                             const float *g_attn, const float *w_o, int ld_o, int head_dim,
                             ScOvCopying *out, ScError *err);

/* Every head of @model: @out holds n_layers * n_heads entries, layer-major. Loads BLAS
 * itself. Errors: as above (the message names the layer and head). */
ScStatus sc_ov_copying_model (const ScModel *model, ScOvCopying *out, ScError *err);

#ifdef __cplusplus
}
#endif
