/* sc-rank.h — rank agreement between two importance vectors over the same items.
 *
 * "Attention vs ablation" (DESIGN.md, "Analyses"; Jain & Wallace 2019, Table 2): for one
 * sentence, how well an attention-based importance of its tokens (or of the model's heads)
 * orders them like leave-one-out importance does. Definitions (docs/metrics.md, "Effects
 * and rank agreement"), over n pairs (x_i, y_i):
 *   Kendall τ-b = (n_c − n_d) / sqrt ((n_0 − n_1)(n_0 − n_2)),  n_0 = n (n − 1) / 2,
 *     n_c, n_d the concordant and discordant pairs, n_1 = Σ t (t − 1) / 2 over the tie groups
 *     of x, n_2 the same for y; S = n_c − n_d.
 *   Spearman ρ = Pearson correlation of the mid-ranks of x and of y (ties get the mean of
 *     the ranks they span).
 *   top-k overlap = |top_k (x) ∩ top_k (y)| / k; top_k is the k largest values (larger =
 *     more important), ties broken by the lower index.
 * p-values are two-sided, against independence:
 *   τ: exact (the distribution of the number of inversions of a random permutation) when
 *     n ≤ SC_KENDALL_EXACT_MAX_N and neither vector has ties; otherwise the normal
 *     approximation z = S / sqrt (Var S) with Kendall's tie-corrected variance.
 *   ρ: t = ρ sqrt ((n − 2) / (1 − ρ²)) against Student's t with n − 2 degrees of freedom
 *     (GSL's gsl_cdf_tdist_Q).
 * These are the methods of scipy.stats.kendalltau (method 'auto') and spearmanr.
 *
 * Contract of every function: inputs are borrowed (n) double vectors, any NaN is refused
 * (SC_ERR_INVALID_ARG, naming the vector and index; ±infinity is allowed, it only ranks).
 * When the statistic is undefined the results are NaN and the return is SC_ERR_RANGE with
 * the reason: n < 2, or (τ, ρ) a vector that is constant (every pair tied: 0/0). Pure
 * functions; the ones that allocate say so (SC_ERR_NOMEM); safe from any thread.
 *
 * Not here: computing the importances (sc-effect.h, engine/study/), aggregating over
 * sentences.
 */
#pragma once

#include <stdint.h>

#include "core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest n for the exact Kendall p-value. The exact table costs ~1.5e6 additions there;
 * above it the normal approximation (no continuity correction) is within 0.0077 of the
 * exact p for every S at n = 50, and within 7e-4 around p = 0.05 (tests/analysis/test-rank.c
 * checks the boundary). scipy.stats.kendalltau's 'auto' switches earlier, above n = 33,
 * where the largest gap is 0.014: we keep exact p-values a little longer. */
#define SC_KENDALL_EXACT_MAX_N 50

typedef enum {
  SC_PVALUE_NONE = 0,  /* undefined (n too small, a constant vector) */
  SC_PVALUE_EXACT,     /* exact permutation distribution */
  SC_PVALUE_NORMAL,    /* normal approximation (tie-corrected variance) */
  SC_PVALUE_STUDENT_T, /* Student's t with n − 2 degrees of freedom */
} ScPValueMethod;

typedef struct {
  double tau;               /* τ-b, in [−1, 1] */
  double p;                 /* two-sided p-value */
  double z;                 /* S / sqrt (Var S) (also given when the p-value is exact) */
  int64_t s;                /* S = n_c − n_d */
  int64_t n_concordant;
  int64_t n_discordant;
  int64_t ties_x;           /* n_1: pairs tied in x (including those tied in both) */
  int64_t ties_y;           /* n_2 */
  ScPValueMethod method;
} ScKendall;

typedef struct {
  double rho;               /* in [−1, 1] */
  double p;                 /* two-sided; NaN when n < 3 (no degrees of freedom) */
  double t;                 /* ρ sqrt ((n − 2) / (1 − ρ²)); ±inf when |ρ| = 1 */
  int df;                   /* n − 2 */
  ScPValueMethod method;
} ScSpearman;

/* The mid-ranks of @x (n) into @ranks (n), 1-based: the smallest value has rank 1, a tie
 * group spanning ranks r .. r + t − 1 gets r + (t − 1) / 2 each. Allocates n indices. */
ScStatus sc_rank_midranks (const double *x, int n, double *ranks, ScError *err);

/* Kendall τ-b of (@x, @y) and its p-value (above) into @out. Counts the pairs directly,
 * O(n²) (n ≤ 10⁴ takes well under a second); allocates O(n). */
ScStatus sc_kendall_tau_b (const double *x, const double *y, int n, ScKendall *out,
                           ScError *err);

/* τ-b of (@x, @y) alone into *@tau, the same number as sc_kendall_tau_b's (NaN and
 * SC_ERR_RANGE when undefined), without the p-value or the tie groups: for resampling
 * (sc-stats.h), where the exact p-value's table would cost more than the statistic.
 * Allocates nothing. */
ScStatus sc_kendall_tau_b_value (const double *x, const double *y, int n, double *tau,
                                 ScError *err);

/* Two-sided exact p-value of Kendall's S for @n untied pairs with @n_discordant discordant
 * pairs: 2 P (I ≤ min (d, n_0 − d)) capped at 1, I the inversions of a uniformly random
 * permutation of n. SC_ERR_INVALID_ARG for n outside [1, SC_KENDALL_EXACT_MAX_N] or d
 * outside [0, n_0]. Allocates O(n²) doubles. */
ScStatus sc_kendall_exact_p (int n, int64_t n_discordant, double *p, ScError *err);

/* Spearman ρ of (@x, @y) with mid-ranks and its p-value into @out. Allocates O(n). */
ScStatus sc_spearman_rho (const double *x, const double *y, int n, ScSpearman *out,
                          ScError *err);

/* |top_k (@a) ∩ top_k (@b)| / @k into @out, top_k as above. SC_ERR_INVALID_ARG for @k
 * outside [1, n] or a NaN. Allocates O(n). */
ScStatus sc_topk_overlap (const double *a, const double *b, int n, int k, double *out,
                          ScError *err);

#ifdef __cplusplus
}
#endif
