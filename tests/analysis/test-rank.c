/* test-rank.c — engine/analysis/sc-rank: Kendall τ-b, Spearman ρ, their p-values and top-k
 * overlap against values worked by hand in the comments, Kendall's table of the exact null
 * distribution, and scipy.stats.
 *
 * The scipy literals were generated once with scipy 1.17.1 (pip, Python 3.11), not needed
 * to run this test:
 *   from scipy import stats
 *   stats.kendalltau (x, y, method='exact' | 'asymptotic' | 'auto'), stats.spearmanr (x, y)
 *   and scipy.stats._mstats_basic._kendall_p_exact (50, d) for the boundary,
 * on the vectors written out in each test (the n = 50 permutation is written out too). */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/analysis/sc-rank.h"

/* scipy prints 16–17 digits; the two computations differ in summation order only. */
#define SCIPY_TOL 1e-12

/* Mid-ranks: (10, 20, 20, 5, 20) sorted is 5, 10, 20, 20, 20 → ranks 1, 2, (3 + 4 + 5)/3 = 4. */
static void
test_midranks (void)
{
  const double x[5] = { 10, 20, 20, 5, 20 };
  const double want[5] = { 2, 4, 4, 1, 4 };
  const double z[3] = { -INFINITY, INFINITY, 0 };
  const double zwant[3] = { 1, 3, 2 };
  double r[5];

  g_assert_cmpint (sc_rank_midranks (x, 5, r, NULL), ==, SC_OK);
  for (int i = 0; i < 5; i++)
    g_assert_cmpfloat (r[i], ==, want[i]);
  g_assert_cmpint (sc_rank_midranks (z, 3, r, NULL), ==, SC_OK);  /* infinities just rank */
  for (int i = 0; i < 3; i++)
    g_assert_cmpfloat (r[i], ==, zwant[i]);
}

/* x = (1, 2, 2, 3, 4), y = (2, 1, 3, 3, 4); the 10 pairs (i, j):
 *   (0,1) x up, y down: D    (0,2) C   (0,3) C   (0,4) C   (1,2) tied in x
 *   (1,3) C   (1,4) C   (2,3) tied in y   (2,4) C   (3,4) C
 * n_c = 7, n_d = 1, S = 6, n_0 = 10, n_1 = n_2 = 1: τ-b = 6 / sqrt (9 · 9) = 2/3.
 * One tie group of t = 2 in each: Σ t(t−1)(2t+5) = 18, Σ t(t−1) = 2, Σ t(t−1)(t−2) = 0,
 *   Var S = (5·4·15 − 18 − 18) / 18 + 2 · 2 / (2 · 5 · 4) + 0 = 264/18 + 1/10 = 14.7667,
 *   z = 6 / sqrt (14.7667) = 1.56138, p = 2 Q (z) = 0.118433 (scipy: 0.1184329289166719,
 *   the normal method since there are ties). */
static void
test_kendall_hand (void)
{
  const double x[5] = { 1, 2, 2, 3, 4 }, y[5] = { 2, 1, 3, 3, 4 };
  ScKendall k;

  g_assert_cmpint (sc_kendall_tau_b (x, y, 5, &k, NULL), ==, SC_OK);
  g_assert_cmpint (k.n_concordant, ==, 7);
  g_assert_cmpint (k.n_discordant, ==, 1);
  g_assert_cmpint (k.s, ==, 6);
  g_assert_cmpint (k.ties_x, ==, 1);
  g_assert_cmpint (k.ties_y, ==, 1);
  g_assert_cmpfloat_with_epsilon (k.tau, 2.0 / 3.0, 1e-15);
  g_assert_cmpfloat_with_epsilon (k.z, 6 / sqrt (264.0 / 18 + 0.1), 1e-12);
  g_assert_cmpfloat_with_epsilon (k.z, 1.56138, 1e-5);
  g_assert_cmpint (k.method, ==, SC_PVALUE_NORMAL);
  g_assert_cmpfloat_with_epsilon (k.p, 0.1184329289166719, SCIPY_TOL);
  /* Symmetric in its arguments; reversing y flips the sign, not the p-value. */
  const double yr[5] = { -2, -1, -3, -3, -4 };
  g_assert_cmpint (sc_kendall_tau_b (y, x, 5, &k, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (k.tau, 2.0 / 3.0, 1e-15);
  g_assert_cmpint (sc_kendall_tau_b (x, yr, 5, &k, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (k.tau, -2.0 / 3.0, 1e-15);
  g_assert_cmpfloat_with_epsilon (k.p, 0.1184329289166719, SCIPY_TOL);
}

/* The classic table of the null distribution of S (M. G. Kendall, Rank Correlation
 * Methods, 4th ed., 1970, Appendix Table 1; S. Siegel, Nonparametric Statistics, 1956,
 * Table Q; quoted from memory, and re-derived by hand just below):
 * for n = 5 the one-sided P (S ≥ s) is .008, .042, .117, .242, .408 for s = 10, 8, 6, 4, 2.
 * By hand: S = n_0 − 2 I with I the inversions; the number of permutations of 5 with
 * I = 0, 1, 2, ... is 1, 4, 9, 15, 20, 22, 20, ... (Mahonian numbers, OEIS A008302), so
 * P (I ≤ c) = 1, 5, 14, 29, 49 over 120 and the two-sided p = 2 P (I ≤ c):
 * 2/120 = 0.016667 (S = 10), 10/120, 28/120, 58/120, 98/120; at S = 0 (c = 5) it is capped
 * at 1. */
static void
test_kendall_exact_table (void)
{
  const double cum[5] = { 1, 5, 14, 29, 49 };
  const double table[5] = { .008, .042, .117, .242, .408 };
  double p;

  for (int d = 0; d < 5; d++)
    {
      g_assert_cmpint (sc_kendall_exact_p (5, d, &p, NULL), ==, SC_OK);
      g_assert_cmpfloat_with_epsilon (p, 2 * cum[d] / 120, 1e-15);
      g_assert_cmpfloat_with_epsilon (p / 2, table[d], 5e-4);  /* the table's 3 decimals */
      /* the distribution is symmetric: d and n_0 − d discordant pairs have the same p */
      double q;
      g_assert_cmpint (sc_kendall_exact_p (5, 10 - d, &q, NULL), ==, SC_OK);
      g_assert_cmpfloat (q, ==, p);
    }
  g_assert_cmpint (sc_kendall_exact_p (5, 5, &p, NULL), ==, SC_OK);
  g_assert_cmpfloat (p, ==, 1.0);
  g_assert_cmpint (sc_kendall_exact_p (1, 0, &p, NULL), ==, SC_OK);
  g_assert_cmpfloat (p, ==, 1.0);
  g_assert_cmpint (sc_kendall_exact_p (2, 0, &p, NULL), ==, SC_OK);  /* P (I = 0) = ½ */
  g_assert_cmpfloat (p, ==, 1.0);

  /* Through sc_kendall_tau_b: the identity (S = 10) and one swap (S = 8). */
  const double x[5] = { 1, 2, 3, 4, 5 }, y[5] = { 2, 1, 3, 4, 5 };
  ScKendall k;
  g_assert_cmpint (sc_kendall_tau_b (x, x, 5, &k, NULL), ==, SC_OK);
  g_assert_cmpint (k.method, ==, SC_PVALUE_EXACT);
  g_assert_cmpfloat (k.tau, ==, 1.0);
  g_assert_cmpfloat_with_epsilon (k.p, 2.0 / 120, 1e-15);
  g_assert_cmpint (sc_kendall_tau_b (x, y, 5, &k, NULL), ==, SC_OK);
  g_assert_cmpint (k.s, ==, 8);
  g_assert_cmpfloat_with_epsilon (k.tau, 0.8, 1e-15);
  g_assert_cmpfloat_with_epsilon (k.p, 10.0 / 120, 1e-15);
}

/* n = 10, y = (2, 0, 1, 5, 3, 4, 9, 6, 8, 7) against x = 0 .. 9: 8 inversions, S = 29,
 * τ = 29/45. scipy: exact p 0.009148478835978836; its asymptotic p 0.009491096053440909
 * (our z gives the same through 2 Q (z)). */
static void
test_kendall_scipy_exact (void)
{
  double x[10];
  const double y[10] = { 2, 0, 1, 5, 3, 4, 9, 6, 8, 7 };
  ScKendall k;

  for (int i = 0; i < 10; i++)
    x[i] = i;
  g_assert_cmpint (sc_kendall_tau_b (x, y, 10, &k, NULL), ==, SC_OK);
  g_assert_cmpint (k.n_discordant, ==, 8);
  g_assert_cmpfloat_with_epsilon (k.tau, 29.0 / 45, 1e-15);
  g_assert_cmpint (k.method, ==, SC_PVALUE_EXACT);
  g_assert_cmpfloat_with_epsilon (k.p, 0.009148478835978836, SCIPY_TOL);
  g_assert_cmpfloat_with_epsilon (erfc (fabs (k.z) / sqrt (2.0)), 0.009491096053440909,
                                  SCIPY_TOL);
}

/* Ties, n = 12: x = (1,1,2,2,2,3,4,4,5,6,6,6), y = (2,1,1,3,3,2,5,4,4,6,5,5).
 * scipy: τ-b 0.7692588674452776, p 0.0013272553764714541 (normal, tie-corrected);
 * Spearman ρ 0.8826772320772333, p 0.00014331548298497857. */
static void
test_scipy_ties (void)
{
  const double x[12] = { 1, 1, 2, 2, 2, 3, 4, 4, 5, 6, 6, 6 };
  const double y[12] = { 2, 1, 1, 3, 3, 2, 5, 4, 4, 6, 5, 5 };
  ScKendall k;
  ScSpearman s;

  g_assert_cmpint (sc_kendall_tau_b (x, y, 12, &k, NULL), ==, SC_OK);
  g_assert_cmpint (k.method, ==, SC_PVALUE_NORMAL);
  g_assert_cmpfloat_with_epsilon (k.tau, 0.7692588674452776, SCIPY_TOL);
  g_assert_cmpfloat_with_epsilon (k.p, 0.0013272553764714541, SCIPY_TOL);
  g_assert_cmpint (sc_spearman_rho (x, y, 12, &s, NULL), ==, SC_OK);
  g_assert_cmpint (s.method, ==, SC_PVALUE_STUDENT_T);
  g_assert_cmpint (s.df, ==, 10);
  g_assert_cmpfloat_with_epsilon (s.rho, 0.8826772320772333, SCIPY_TOL);
  g_assert_cmpfloat_with_epsilon (s.p, 0.00014331548298497857, SCIPY_TOL);
}

/* The boundary n = SC_KENDALL_EXACT_MAX_N = 50. The permutation below (a fixed LCG
 * shuffle) has S = 115, τ = 115/1225: scipy exact p 0.34211444993474344, asymptotic
 * 0.3360703787234419. Over every d = 0 .. 1225 the exact p and the normal one
 * (Var S = n (n−1)(2n+5)/18, no ties) differ by at most 0.00766 (scipy's largest gap, at
 * d = 587; the normal lacks a continuity correction); near p = 0.05 (d = 496, S = 233:
 * exact 0.05196394953716699, normal 0.051294008395299975) by under 7e-4. One pair more
 * (n = 51) and the same function switches to the normal method. */
static void
test_kendall_boundary (void)
{
  const double perm[50] = { 1, 3, 5, 13, 10, 14, 45, 17, 32, 37, 33, 19, 18, 38, 46, 12, 15,
                            30, 41, 29, 40, 34, 35, 48, 7, 26, 16, 39, 21, 22, 20, 47, 11, 24,
                            25, 36, 0, 2, 31, 43, 23, 8, 9, 4, 44, 49, 42, 28, 27, 6 };
  double x[51], y[51];
  ScKendall k;

  for (int i = 0; i < 50; i++)
    x[i] = i, y[i] = perm[i];
  g_assert_cmpint (sc_kendall_tau_b (x, y, 50, &k, NULL), ==, SC_OK);
  g_assert_cmpint (k.s, ==, 115);
  g_assert_cmpint (k.method, ==, SC_PVALUE_EXACT);
  g_assert_cmpfloat_with_epsilon (k.p, 0.34211444993474344, SCIPY_TOL);
  g_assert_cmpfloat_with_epsilon (erfc (fabs (k.z) / sqrt (2.0)), 0.3360703787234419,
                                  SCIPY_TOL);

  const double v = 50.0 * 49 * 105 / 18;
  double worst = 0;
  for (int d = 0; d <= 1225; d++)
    {
      double p;
      g_assert_cmpint (sc_kendall_exact_p (50, d, &p, NULL), ==, SC_OK);
      const double pn = erfc (fabs (1225.0 - 2 * d) / sqrt (2 * v));
      worst = fmax (worst, fabs (p - pn));
      if (d == 496)
        {
          g_assert_cmpfloat_with_epsilon (p, 0.05196394953716699, SCIPY_TOL);
          g_assert_cmpfloat_with_epsilon (pn, 0.051294008395299975, SCIPY_TOL);
          g_assert_cmpfloat (fabs (p - pn), <, 7e-4);
        }
    }
  g_assert_cmpfloat_with_epsilon (worst, 0.00766037557101551, 1e-9);

  x[50] = 50, y[50] = 50;
  g_assert_cmpint (sc_kendall_tau_b (x, y, 51, &k, NULL), ==, SC_OK);
  g_assert_cmpint (k.method, ==, SC_PVALUE_NORMAL);
  g_assert_cmpint (sc_kendall_exact_p (51, 0, &(double) { 0 }, NULL), ==, SC_ERR_INVALID_ARG);
}

/* Spearman with ties by hand: x = (1, 2, 2, 3, 4) → mid-ranks (1, 2.5, 2.5, 4, 5);
 * y = (2, 1, 3, 3, 4) → (2, 1, 3.5, 3.5, 5). Centred on 3:
 *   a = (−2, −½, −½, 1, 2),  b = (−1, −2, ½, ½, 2)
 *   Σ ab = 2 + 1 − ¼ + ½ + 4 = 7.25,  Σ a² = Σ b² = 9.5,  ρ = 7.25 / 9.5 = 29/38 = 0.763158
 *   t = ρ sqrt (3 / (1 − ρ²)) = (29/38) · 38 · sqrt (3/603) = 29 / sqrt (201) = 2.045508,
 *   p = 2 P (T_3 > t); for 3 degrees of freedom the t CDF is closed:
 *   P (T_3 > t) = ½ − (1/π) (u / (1 + u²) + atan u),  u = t / √3.
 * scipy: ρ 0.7631578947368421, p 0.13333911953180624. */
static void
test_spearman_hand (void)
{
  const double x[5] = { 1, 2, 2, 3, 4 }, y[5] = { 2, 1, 3, 3, 4 };
  const double t = 29 / sqrt (201.0), u = t / sqrt (3.0);
  const double p = 2 * (0.5 - (u / (1 + u * u) + atan (u)) / M_PI);
  ScSpearman s;

  g_assert_cmpint (sc_spearman_rho (x, y, 5, &s, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (s.rho, 29.0 / 38, 1e-15);
  g_assert_cmpfloat_with_epsilon (s.t, t, 1e-12);
  g_assert_cmpint (s.df, ==, 3);
  g_assert_cmpfloat_with_epsilon (s.p, p, 1e-12);
  g_assert_cmpfloat_with_epsilon (s.p, 0.13333911953180624, SCIPY_TOL);

  /* No ties, n = 10 (the Kendall vectors above): scipy ρ 0.8424242424242423 (= 139/165:
   * Σ d² = 26, 1 − 6 · 26 / 990), p 0.002220031225916843. */
  double x10[10];
  const double y10[10] = { 2, 0, 1, 5, 3, 4, 9, 6, 8, 7 };
  for (int i = 0; i < 10; i++)
    x10[i] = i;
  g_assert_cmpint (sc_spearman_rho (x10, y10, 10, &s, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (s.rho, 139.0 / 165, 1e-15);
  g_assert_cmpfloat_with_epsilon (s.p, 0.002220031225916843, SCIPY_TOL);

  /* Perfect agreement: ρ = 1, t = +∞, p = 0; n = 2 has a ρ but no p-value. */
  g_assert_cmpint (sc_spearman_rho (x10, x10, 10, &s, NULL), ==, SC_OK);
  g_assert_cmpfloat (s.rho, ==, 1.0);
  g_assert_cmpfloat (s.p, ==, 0.0);
  g_assert_true (isinf (s.t) && s.t > 0);
  g_assert_cmpint (sc_spearman_rho (x10, y10, 2, &s, NULL), ==, SC_OK);
  g_assert_cmpfloat (s.rho, ==, -1.0);  /* (0, 1) against (2, 0) */
  g_assert_true (isnan (s.p));
  g_assert_cmpint (s.method, ==, SC_PVALUE_NONE);
}

/* a = (.5, .9, .9, .1, .7), b = (.9, .1, .8, .8, .2); ties go to the lower index:
 *   top_1 (a) = {1}          top_1 (b) = {0}          overlap 0
 *   top_2 (a) = {1, 2}       top_2 (b) = {0, 2}       overlap ½
 *   top_3 (a) = {1, 2, 4}    top_3 (b) = {0, 2, 3}    overlap ⅓
 *   top_5 = everything: 1. */
static void
test_topk (void)
{
  const double a[5] = { .5, .9, .9, .1, .7 }, b[5] = { .9, .1, .8, .8, .2 };
  double o;

  g_assert_cmpint (sc_topk_overlap (a, b, 5, 1, &o, NULL), ==, SC_OK);
  g_assert_cmpfloat (o, ==, 0.0);
  g_assert_cmpint (sc_topk_overlap (a, b, 5, 2, &o, NULL), ==, SC_OK);
  g_assert_cmpfloat (o, ==, 0.5);
  g_assert_cmpint (sc_topk_overlap (a, b, 5, 3, &o, NULL), ==, SC_OK);
  g_assert_cmpfloat (o, ==, 1.0 / 3);
  g_assert_cmpint (sc_topk_overlap (a, b, 5, 5, &o, NULL), ==, SC_OK);
  g_assert_cmpfloat (o, ==, 1.0);
  g_assert_cmpint (sc_topk_overlap (a, a, 5, 2, &o, NULL), ==, SC_OK);
  g_assert_cmpfloat (o, ==, 1.0);
  g_assert_cmpint (sc_topk_overlap (a, b, 5, 0, &o, NULL), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_topk_overlap (a, b, 5, 6, &o, NULL), ==, SC_ERR_INVALID_ARG);
}

/* NaN is refused naming the vector and index; n < 2 and constant vectors are undefined:
 * SC_ERR_RANGE with NaN results. */
static void
test_refused (void)
{
  const double x[3] = { 1, 2, 3 }, nan3[3] = { 1, NAN, 3 }, c[3] = { 4, 4, 4 };
  ScKendall k;
  ScSpearman s;
  ScError err = { 0 };
  double o;

  g_assert_cmpint (sc_kendall_tau_b (x, nan3, 3, &k, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "Kendall y: NaN at index 1"));
  g_assert_cmpint (sc_spearman_rho (nan3, x, 3, &s, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "Spearman x: NaN at index 1"));
  g_assert_cmpint (sc_topk_overlap (x, nan3, 3, 1, &o, NULL), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_rank_midranks (nan3, 3, &o, NULL), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_kendall_tau_b (NULL, x, 3, &k, NULL), ==, SC_ERR_INVALID_ARG);

  g_assert_cmpint (sc_kendall_tau_b (x, x, 1, &k, &err), ==, SC_ERR_RANGE);
  g_assert_nonnull (strstr (err.message, "at least 2"));
  g_assert_true (isnan (k.tau) && isnan (k.p));
  g_assert_cmpint (k.method, ==, SC_PVALUE_NONE);
  g_assert_cmpint (sc_spearman_rho (x, x, 0, &s, NULL), ==, SC_ERR_RANGE);
  g_assert_true (isnan (s.rho) && isnan (s.p));

  g_assert_cmpint (sc_kendall_tau_b (x, c, 3, &k, &err), ==, SC_ERR_RANGE);
  g_assert_nonnull (strstr (err.message, "y is constant"));
  g_assert_true (isnan (k.tau) && isnan (k.p));
  g_assert_cmpint (sc_spearman_rho (c, x, 3, &s, &err), ==, SC_ERR_RANGE);
  g_assert_nonnull (strstr (err.message, "x is constant"));
  g_assert_true (isnan (s.rho));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/rank/midranks", test_midranks);
  g_test_add_func ("/rank/kendall-hand", test_kendall_hand);
  g_test_add_func ("/rank/kendall-exact-table", test_kendall_exact_table);
  g_test_add_func ("/rank/kendall-scipy-exact", test_kendall_scipy_exact);
  g_test_add_func ("/rank/scipy-ties", test_scipy_ties);
  g_test_add_func ("/rank/kendall-boundary", test_kendall_boundary);
  g_test_add_func ("/rank/spearman-hand", test_spearman_hand);
  g_test_add_func ("/rank/topk", test_topk);
  g_test_add_func ("/rank/refused", test_refused);
  return g_test_run ();
}
