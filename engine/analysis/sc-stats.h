/* sc-stats.h — statistics that keep a correlation from misleading: multiple-comparison
 * corrections, bootstrap confidence intervals and a permutation null (docs/metrics.md,
 * "Statistics: corrections, intervals, null baselines").
 *
 * Corrections of m p-values p_1 .. p_m, sorted ascending p_(1) <= .. <= p_(m):
 *   Holm (1979), step-down, controls the family-wise error rate:
 *     adj_(i) = min (1, max_{j <= i} (m − j + 1) p_(j));
 *   Benjamini–Hochberg (1995), step-up, controls the false discovery rate (q-values):
 *     q_(i) = min (1, min_{j >= i} m p_(j) / j).
 *   Both are statsmodels.stats.multitest.multipletests 'holm' and 'fdr_bh'. A NaN p (an
 *   undefined test) is passed through as NaN and not counted in m.
 *
 * Bootstrap (Efron & Tibshirani 1993, the percentile interval) of a rank correlation over n
 * paired items (x_i, y_i): B resamples of n indices drawn uniformly with replacement, the
 * statistic of each (Kendall τ-b or Spearman ρ, sc-rank.h; a resample where it is undefined
 * — every drawn x or y equal — is skipped and counted), and the interval
 * [Q(α/2), Q(1 − α/2)] of the defined ones, Q the linear-interpolation quantile of the sorted
 * values (numpy's default, GSL's gsl_stats_quantile_from_sorted_data). Of a mean over n
 * values the same with the mean as the statistic. The generator is GSL's mt19937 seeded with
 * @seed: the same inputs, B and seed give the same interval on every machine.
 *
 * Permutation null of a correlation: y permuted uniformly (gsl_ran_shuffle, mt19937, @seed)
 * B times; the two-sided p-value (1 + #{|r*| >= |r|}) / (1 + B'), B' the permutations where
 * r* is defined (Phipson & Smyth 2010: never 0), and the null's central band
 * [Q(α/2), Q(1 − α/2)] — how large a correlation chance alone gives at this n.
 *
 * Contract: inputs are borrowed; NaN in a correlation's vectors is refused
 * (SC_ERR_INVALID_ARG). A statistic that cannot be computed (too few items, too few defined
 * resamples: fewer than half of B) gives NaN bounds and SC_ERR_RANGE with the reason. Pure
 * functions, safe from any thread; the ones that allocate say so (SC_ERR_NOMEM).
 */
#pragma once

#include <stdint.h>

#include "core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* B when none is asked: the percentile interval's 2.5 % point then rests on 25 resamples. */
#define SC_STATS_DEFAULT_BOOT 1000
/* Resamples are capped: B × n² Kendall pairs must stay seconds, not minutes. */
#define SC_STATS_MAX_BOOT 100000
/* The seed when none is asked: any fixed number would do; this one spells the project. */
#define SC_STATS_DEFAULT_SEED 0x5ACCADEu

typedef enum {
  SC_STATS_KENDALL = 0,  /* τ-b */
  SC_STATS_SPEARMAN,     /* ρ with mid-ranks */
} ScStatsCorr;

typedef struct {
  double lo, hi;   /* the percentile interval; NaN when undefined */
  double level;    /* its coverage, e.g. 0.95 */
  int n_boot;      /* B asked */
  int n_valid;     /* resamples whose statistic was defined */
  uint32_t seed;
} ScStatsInterval;

typedef struct {
  double observed; /* the correlation of the data */
  double p;        /* two-sided permutation p-value */
  double lo, hi;   /* the null's central band at the level asked */
  int n_perm, n_valid;
  uint32_t seed;
} ScStatsPermNull;

/* Holm-adjusted p-values of @p (n; NaN passed through) into @adj (n; may be @p itself);
 * *@m_out (may be NULL) receives m, the non-NaN count. SC_ERR_INVALID_ARG for a p outside
 * [0, 1] or NULL arguments. Allocates n indices. */
ScStatus sc_stats_holm (const double *p, int n, double *adj, int *m_out, ScError *err);

/* Benjamini–Hochberg q-values, otherwise as sc_stats_holm. */
ScStatus sc_stats_bh (const double *p, int n, double *q, int *m_out, ScError *err);

/* The correlation @kind of (@x, @y) (n) alone: sc_kendall_tau_b_value or sc_spearman_rho's
 * ρ. SC_ERR_RANGE (NaN) when undefined. */
ScStatus sc_stats_corr (ScStatsCorr kind, const double *x, const double *y, int n, double *r,
                        ScError *err);

/* The percentile bootstrap interval of @kind over the n pairs (above), @n_boot resamples in
 * [1, SC_STATS_MAX_BOOT], @level in (0, 1). Allocates O(n + B). */
ScStatus sc_stats_bootstrap_corr (ScStatsCorr kind, const double *x, const double *y, int n,
                                  int n_boot, double level, uint32_t seed,
                                  ScStatsInterval *out, ScError *err);

/* The percentile bootstrap interval of the mean of @v (n >= 2; NaN refused). */
ScStatus sc_stats_bootstrap_mean (const double *v, int n, int n_boot, double level,
                                  uint32_t seed, ScStatsInterval *out, ScError *err);

/* Which column is "the top one" of a resample (sc_stats_bootstrap_columns). */
typedef enum {
  SC_STATS_TOP_LARGEST = 0,  /* the largest mean */
  SC_STATS_TOP_LARGEST_ABS,  /* the largest |mean|: an effect of either sign */
} ScStatsTop;

/* The same over the m columns of @v ((n, m) row-major, n >= 2; NaN refused) at once: each
 * resample draws n row indices (in the order sc_stats_bootstrap_mean draws them, so column
 * j's interval is exactly sc_stats_bootstrap_mean's of column j with the same seed) and
 * takes every column's mean over them. @lo, @hi (m): each column's percentile interval;
 * @top_share (m, may be NULL): the share of resamples in which that column's mean is the
 * top one by @top (ties: the lowest column) — how often a column picked as "the best" out
 * of m is the best when the rows are drawn again. Allocates m × B doubles. */
ScStatus sc_stats_bootstrap_columns (const double *v, int n, int m, int n_boot, double level,
                                     uint32_t seed, ScStatsTop top, double *lo, double *hi,
                                     double *top_share, ScError *err);

/* The exact two-sided sign test of "the values are centred on 0": zeros are dropped, k the
 * count of the rarer sign among the r others, p = min (1, 2 P(X <= k)), X ~ Binomial (r,
 * 1/2) (scipy.stats.binomtest (k, r, 0.5).pvalue). p = 1 when every value is 0. NaN
 * refused (SC_ERR_INVALID_ARG). */
ScStatus sc_stats_sign_test (const double *v, int n, double *p, ScError *err);

/* The permutation null of @kind with @y permuted (above), @n_perm in [1, SC_STATS_MAX_BOOT].
 * SC_ERR_RANGE when the observed correlation is undefined. Allocates O(n + B). */
ScStatus sc_stats_permutation_null (ScStatsCorr kind, const double *x, const double *y, int n,
                                    int n_perm, double level, uint32_t seed,
                                    ScStatsPermNull *out, ScError *err);

#ifdef __cplusplus
}
#endif
