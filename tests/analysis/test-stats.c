/* test-stats.c — engine/analysis/sc-stats: Holm and Benjamini–Hochberg against statsmodels,
 * the correlation entry against scipy, the permutation null against the exact permutation
 * distribution, and the bootstrap on cases whose answer is known without an oracle.
 *
 * The literals below are the output of tests/reference/stats_ref.py (scipy 1.17.1,
 * statsmodels 0.15.0, numpy 2.4.6), pasted; the test does not run Python. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/analysis/sc-rank.h"
#include "engine/analysis/sc-stats.h"

/* --- stats_ref.py output --- */
static const double P[12] = { 0.01, 0.04, NAN, 0.03, 0.005, 0.04, 0.2, 0.5, NAN, 0.0, 1.0, 0.012 };
static const double HOLM[12] = { 0.08, 0.2, NAN, 0.18, 0.045, 0.2, 0.6000000000000001, 1.0, NAN, 0.0, 1.0, 0.084 };
static const double BH[12] = { 0.03, 0.05714285714285715, NAN, 0.05714285714285715, 0.024999999999999998, 0.05714285714285715, 0.25, 0.5555555555555556, NAN, 0.0, 1.0, 0.03 };
static const double X[10] = { 0.3, 1.2, 1.2, 0.7, 2.5, 0.1, 0.9, 3.0, 0.9, 1.7 };
static const double Y[10] = { 1.0, 0.4, 2.2, 0.8, 2.0, 0.2, 0.8, 2.9, 1.1, 0.4 };
#define KENDALL_XY 0.39534883720930236
#define SPEARMAN_XY 0.5214723926380369
/* (1..6) against (2,1,4,3,6,5): tau-b 0.6; exact permutation p over 720 orders */
#define PERM6_P 0.1361111111111111
/* the sign test: scipy.stats.binomtest (rarer sign, nonzero count, 0.5).pvalue */
static const double SIGN0[20] = { 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5 };
#define SIGN0_P 1.9073486328125e-06
static const double SIGN1[20] = { 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -0.2, -0.2, -0.2 };
#define SIGN1_P 0.0025768280029296875
static const double SIGN2[20] = { 0.1, -0.1, 0.1, -0.1, 0.1, -0.1, 0.1, -0.1, 0.1, -0.1, 0.1, -0.1, 0.1, -0.1, 0.1, -0.1, 0.1, -0.1, 0.1, -0.1 };
#define SIGN2_P 1.0
static const double SIGN3[10] = { 0.0, 0.3, -0.3, 0.0, 0.2, 0.2, 0.2, 0.2, 0.2, 0.0 };
#define SIGN3_P 0.125
static const double SIGN4[3] = { 0.0, 0.0, 0.0 };
#define SIGN4_P 1.0
static const double SIGN5[18] = { -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, 0.4, 0.0, 0.0, 0.0, 0.0, 0.0 };
#define SIGN5_P 0.00341796875
/* --- end --- */

#define TOL 1e-12

static void
check_adjusted (const double *got, const double *want, int n)
{
  for (int i = 0; i < n; i++)
    if (isnan (want[i]))
      g_assert_true (isnan (got[i]));
    else
      g_assert_cmpfloat_with_epsilon (got[i], want[i], TOL);
}

/* Ten defined p-values and two NaNs: m = 10, the NaNs come back as NaN. Holm's adjusted p
 * of the smallest nonzero (0.005) is 9 × 0.005 = 0.045 (the 0 comes first). */
static void
test_corrections (void)
{
  double adj[12], q[12];
  int m = -1;

  g_assert_cmpint (sc_stats_holm (P, 12, adj, &m, NULL), ==, SC_OK);
  g_assert_cmpint (m, ==, 10);
  check_adjusted (adj, HOLM, 12);
  m = -1;
  g_assert_cmpint (sc_stats_bh (P, 12, q, &m, NULL), ==, SC_OK);
  g_assert_cmpint (m, ==, 10);
  check_adjusted (q, BH, 12);
  /* monotone in p, never below p, capped at 1 */
  for (int i = 0; i < 12; i++)
    for (int j = 0; j < 12; j++)
      if (!isnan (P[i]) && !isnan (P[j]) && P[i] <= P[j])
        {
          g_assert_cmpfloat (adj[i], <=, adj[j]);
          g_assert_cmpfloat (q[i], <=, q[j]);
        }
  for (int i = 0; i < 12; i++)
    if (!isnan (P[i]))
      {
        g_assert_cmpfloat (adj[i], >=, P[i]);
        g_assert_cmpfloat (q[i], >=, P[i]);
        g_assert_cmpfloat (adj[i], <=, 1.0);
        g_assert_cmpfloat (q[i], <=, 1.0);
        g_assert_cmpfloat (q[i], <=, adj[i]); /* BH is never stricter than Holm */
      }
  /* in place */
  {
    double v[12];
    memcpy (v, P, sizeof v);
    g_assert_cmpint (sc_stats_holm (v, 12, v, NULL, NULL), ==, SC_OK);
    check_adjusted (v, HOLM, 12);
  }
  /* a p outside [0, 1] is refused; no p at all is m = 0 */
  {
    const double bad[2] = { 0.5, 1.5 }, none[2] = { NAN, NAN };
    double o[2];
    g_assert_cmpint (sc_stats_holm (bad, 2, o, NULL, NULL), ==, SC_ERR_INVALID_ARG);
    g_assert_cmpint (sc_stats_bh (bad, 2, o, NULL, NULL), ==, SC_ERR_INVALID_ARG);
    g_assert_cmpint (sc_stats_bh (none, 2, o, &m, NULL), ==, SC_OK);
    g_assert_cmpint (m, ==, 0);
    g_assert_true (isnan (o[0]) && isnan (o[1]));
  }
}

/* The statistic entry is scipy's, and τ alone equals sc_kendall_tau_b's τ. */
static void
test_corr (void)
{
  double r;
  ScKendall k;
  const double c[3] = { 1, 1, 1 }, d[3] = { 1, 2, 3 };

  g_assert_cmpint (sc_stats_corr (SC_STATS_KENDALL, X, Y, 10, &r, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (r, KENDALL_XY, TOL);
  g_assert_cmpint (sc_kendall_tau_b (X, Y, 10, &k, NULL), ==, SC_OK);
  g_assert_cmpfloat (r, ==, k.tau);
  g_assert_cmpint (sc_stats_corr (SC_STATS_SPEARMAN, X, Y, 10, &r, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (r, SPEARMAN_XY, TOL);
  g_assert_cmpint (sc_stats_corr (SC_STATS_KENDALL, c, d, 3, &r, NULL), ==, SC_ERR_RANGE);
  g_assert_true (isnan (r));
}

/* Perfectly monotone pairs: every resample that is defined has τ = ρ = 1, so the interval
 * is [1, 1]; the same seed gives the same interval, bit for bit; on typical data the
 * interval holds the point estimate and lies in [−1, 1]. */
static void
test_bootstrap (void)
{
  const double a[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, b[8] = { 10, 20, 25, 40, 41, 60, 70, 99 };
  ScStatsInterval ci, ci2, ci3;

  for (int kind = SC_STATS_KENDALL; kind <= SC_STATS_SPEARMAN; kind++)
    {
      g_assert_cmpint (sc_stats_bootstrap_corr (kind, a, b, 8, 500, 0.95, 7, &ci, NULL), ==,
                       SC_OK);
      g_assert_cmpfloat (ci.lo, ==, 1.0);
      g_assert_cmpfloat (ci.hi, ==, 1.0);
      g_assert_cmpint (ci.n_boot, ==, 500);
      g_assert_cmpint (ci.n_valid, <=, 500);
      /* a resample is undefined only when it draws one index 8 times: (1/8)^7 each */
      g_assert_cmpint (ci.n_valid, ==, 500);

      g_assert_cmpint (sc_stats_bootstrap_corr (kind, X, Y, 10, 1000, 0.95,
                                                SC_STATS_DEFAULT_SEED, &ci, NULL), ==, SC_OK);
      g_assert_cmpint (sc_stats_bootstrap_corr (kind, X, Y, 10, 1000, 0.95,
                                                SC_STATS_DEFAULT_SEED, &ci2, NULL), ==, SC_OK);
      g_assert_cmpfloat (ci.lo, ==, ci2.lo);
      g_assert_cmpfloat (ci.hi, ==, ci2.hi);
      const double point = kind == SC_STATS_KENDALL ? KENDALL_XY : SPEARMAN_XY;
      g_assert_cmpfloat (ci.lo, <, point);
      g_assert_cmpfloat (ci.hi, >, point);
      g_assert_cmpfloat (ci.lo, >=, -1.0);
      g_assert_cmpfloat (ci.hi, <=, 1.0);
      /* another seed: another interval, of about the same width */
      g_assert_cmpint (sc_stats_bootstrap_corr (kind, X, Y, 10, 1000, 0.95, 12345, &ci3, NULL),
                       ==, SC_OK);
      g_assert_true (ci3.lo != ci.lo || ci3.hi != ci.hi);
      g_assert_cmpfloat (fabs ((ci3.hi - ci3.lo) - (ci.hi - ci.lo)), <, 0.15);
      /* a wider level gives a wider interval from the same resamples */
      g_assert_cmpint (sc_stats_bootstrap_corr (kind, X, Y, 10, 1000, 0.5,
                                                SC_STATS_DEFAULT_SEED, &ci3, NULL), ==, SC_OK);
      g_assert_cmpfloat (ci3.lo, >=, ci.lo);
      g_assert_cmpfloat (ci3.hi, <=, ci.hi);
    }
  /* refused: NaN, B out of range; undefined: a constant vector has no defined resample */
  {
    const double n1[3] = { 1, NAN, 2 }, c[3] = { 4, 4, 4 };
    g_assert_cmpint (sc_stats_bootstrap_corr (SC_STATS_KENDALL, n1, a, 3, 10, 0.95, 1, &ci,
                                              NULL), ==, SC_ERR_INVALID_ARG);
    g_assert_cmpint (sc_stats_bootstrap_corr (SC_STATS_KENDALL, a, b, 8, 0, 0.95, 1, &ci,
                                              NULL), ==, SC_ERR_INVALID_ARG);
    g_assert_cmpint (sc_stats_bootstrap_corr (SC_STATS_KENDALL, c, a, 3, 10, 0.95, 1, &ci,
                                              NULL), ==, SC_ERR_RANGE);
    g_assert_true (isnan (ci.lo) && isnan (ci.hi));
    g_assert_cmpint (ci.n_valid, ==, 0);
  }
}

/* The mean's interval: a constant sample gives [c, c]; for 0, 1 (equal counts) the mean is
 * 1/2 and the interval holds it, symmetric about it within the resampling noise. */
static void
test_bootstrap_mean (void)
{
  const double c[5] = { 0.25, 0.25, 0.25, 0.25, 0.25 };
  double v[40];
  ScStatsInterval ci, ci2;

  g_assert_cmpint (sc_stats_bootstrap_mean (c, 5, 200, 0.95, 3, &ci, NULL), ==, SC_OK);
  g_assert_cmpfloat (ci.lo, ==, 0.25);
  g_assert_cmpfloat (ci.hi, ==, 0.25);
  for (int i = 0; i < 40; i++)
    v[i] = i % 2;
  g_assert_cmpint (sc_stats_bootstrap_mean (v, 40, 2000, 0.95, 3, &ci, NULL), ==, SC_OK);
  g_assert_cmpint (sc_stats_bootstrap_mean (v, 40, 2000, 0.95, 3, &ci2, NULL), ==, SC_OK);
  g_assert_cmpfloat (ci.lo, ==, ci2.lo);
  g_assert_cmpfloat (ci.hi, ==, ci2.hi);
  g_assert_cmpfloat (ci.lo, <, 0.5);
  g_assert_cmpfloat (ci.hi, >, 0.5);
  /* the normal approximation's half-width 1.96 sqrt (0.25 / 40) = 0.155 */
  g_assert_cmpfloat (fabs ((ci.hi - ci.lo) / 2 - 0.155), <, 0.03);
  g_assert_cmpint (sc_stats_bootstrap_mean (v, 1, 10, 0.95, 3, &ci, NULL), ==, SC_ERR_RANGE);
}

/* Every column's interval over shared resamples is sc_stats_bootstrap_mean's of that
 * column with the same seed, bit for bit (the draws are the same indices); a column larger
 * than the others in every row is the top one in every resample, two equal columns share
 * it by the lowest index. */
static void
test_bootstrap_columns (void)
{
  enum { N = 23, M = 4 };
  double v[N * M], col[N], lo[M], hi[M], top[M];
  ScStatsInterval ci;

  for (int i = 0; i < N; i++)
    {
      v[i * M + 0] = sin (1.3 * i);
      v[i * M + 1] = 5.0 + cos (0.7 * i);   /* always the largest */
      v[i * M + 2] = (i % 3) - 1.0;
      v[i * M + 3] = 0.01 * i * i;
    }
  g_assert_cmpint (sc_stats_bootstrap_columns (v, N, M, 3000, 0.9, 17, SC_STATS_TOP_LARGEST, lo,
                                               hi, top, NULL), ==,
                   SC_OK);
  for (int j = 0; j < M; j++)
    {
      for (int i = 0; i < N; i++)
        col[i] = v[i * M + j];
      g_assert_cmpint (sc_stats_bootstrap_mean (col, N, 3000, 0.9, 17, &ci, NULL), ==, SC_OK);
      g_assert_cmpfloat (lo[j], ==, ci.lo);
      g_assert_cmpfloat (hi[j], ==, ci.hi);
    }
  g_assert_cmpfloat (top[1], ==, 1.0);
  g_assert_cmpfloat (top[0] + top[2] + top[3], ==, 0.0);
  /* ties: two identical columns, the first one wins every resample */
  for (int i = 0; i < N; i++)
    v[i * M + 3] = v[i * M + 1];
  g_assert_cmpint (sc_stats_bootstrap_columns (v, N, M, 100, 0.9, 17, SC_STATS_TOP_LARGEST, lo,
                                               hi, top, NULL), ==,
                   SC_OK);
  g_assert_cmpfloat (top[1], ==, 1.0);
  g_assert_cmpfloat (top[3], ==, 0.0);
  /* by magnitude: a column far below zero is the top one, not the largest signed */
  for (int i = 0; i < N; i++)
    v[i * M + 2] = -9.0 - (i % 3);
  g_assert_cmpint (sc_stats_bootstrap_columns (v, N, M, 100, 0.9, 17, SC_STATS_TOP_LARGEST_ABS,
                                               lo, hi, top, NULL), ==, SC_OK);
  g_assert_cmpfloat (top[2], ==, 1.0);
  g_assert_cmpint (sc_stats_bootstrap_columns (v, N, M, 100, 0.9, 17, SC_STATS_TOP_LARGEST, lo,
                                               hi, top, NULL), ==, SC_OK);
  g_assert_cmpfloat (top[2], ==, 0.0);
  /* refusals: a NaN, fewer than two rows */
  v[5] = NAN;
  g_assert_cmpint (sc_stats_bootstrap_columns (v, N, M, 100, 0.9, 17, SC_STATS_TOP_LARGEST, lo,
                                               hi, NULL, NULL), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_true (isnan (lo[0]) && isnan (hi[M - 1]));
  g_assert_cmpint (sc_stats_bootstrap_columns (v + 8, 1, M, 100, 0.9, 17, SC_STATS_TOP_LARGEST,
                                               lo, hi, NULL, NULL), ==, SC_ERR_RANGE);
}

/* The sign test against scipy.stats.binomtest (stats_ref.py, section 4). */
static void
test_sign (void)
{
  const struct { const double *v; int n; double p; } cases[] = {
    { SIGN0, G_N_ELEMENTS (SIGN0), SIGN0_P }, { SIGN1, G_N_ELEMENTS (SIGN1), SIGN1_P },
    { SIGN2, G_N_ELEMENTS (SIGN2), SIGN2_P }, { SIGN3, G_N_ELEMENTS (SIGN3), SIGN3_P },
    { SIGN4, G_N_ELEMENTS (SIGN4), SIGN4_P }, { SIGN5, G_N_ELEMENTS (SIGN5), SIGN5_P },
  };
  const double bad[3] = { 1, NAN, -1 };
  double p;

  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_assert_cmpint (sc_stats_sign_test (cases[c].v, cases[c].n, &p, NULL), ==, SC_OK);
      g_assert_cmpfloat_with_epsilon (p, cases[c].p, 1e-12 * fmax (1.0, cases[c].p));
    }
  g_assert_cmpint (sc_stats_sign_test (bad, 3, &p, NULL), ==, SC_ERR_INVALID_ARG);
  g_assert_true (isnan (p));
}

/* (1..6) against (2,1,4,3,6,5): τ = 0.6, and over all 720 orders of y the share with
 * |τ*| >= 0.6 is PERM6_P. With B = 20000 the Monte-Carlo p's standard error is
 * sqrt (0.136 · 0.864 / 20000) = 0.0024: within 0.01 is four of them. The null band of
 * τ at n = 6 is symmetric about 0 (reversing y negates τ). */
static void
test_permutation_null (void)
{
  const double x[6] = { 1, 2, 3, 4, 5, 6 }, y[6] = { 2, 1, 4, 3, 6, 5 };
  ScStatsPermNull pn, pn2;

  g_assert_cmpint (sc_stats_permutation_null (SC_STATS_KENDALL, x, y, 6, 20000, 0.95,
                                              SC_STATS_DEFAULT_SEED, &pn, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (pn.observed, 0.6, 1e-12);
  g_assert_cmpfloat (fabs (pn.p - PERM6_P), <, 0.01);
  g_assert_cmpint (pn.n_valid, ==, 20000);
  g_assert_cmpfloat (pn.lo, <, 0);
  g_assert_cmpfloat (pn.hi, >, 0);
  g_assert_cmpfloat (fabs (pn.lo + pn.hi), <=, 0.2 + 1e-12); /* τ moves in steps of 2/15 */
  g_assert_cmpint (sc_stats_permutation_null (SC_STATS_KENDALL, x, y, 6, 20000, 0.95,
                                              SC_STATS_DEFAULT_SEED, &pn2, NULL), ==, SC_OK);
  g_assert_cmpfloat (pn.p, ==, pn2.p);
  g_assert_cmpfloat (pn.lo, ==, pn2.lo);
  /* never p = 0: the data count as one of the orders */
  g_assert_cmpint (sc_stats_permutation_null (SC_STATS_SPEARMAN, x, x, 6, 10, 0.95, 1, &pn,
                                              NULL), ==, SC_OK);
  g_assert_cmpfloat (pn.p, >=, 1.0 / 11);
  /* an undefined observed correlation */
  {
    const double c[6] = { 1, 1, 1, 1, 1, 1 };
    g_assert_cmpint (sc_stats_permutation_null (SC_STATS_KENDALL, c, y, 6, 10, 0.95, 1, &pn,
                                                NULL), ==, SC_ERR_RANGE);
    g_assert_true (isnan (pn.p));
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/stats/corrections", test_corrections);
  g_test_add_func ("/stats/corr", test_corr);
  g_test_add_func ("/stats/bootstrap", test_bootstrap);
  g_test_add_func ("/stats/bootstrap-mean", test_bootstrap_mean);
  g_test_add_func ("/stats/permutation-null", test_permutation_null);
  g_test_add_func ("/stats/bootstrap-columns", test_bootstrap_columns);
  g_test_add_func ("/stats/sign", test_sign);
  return g_test_run ();
}
