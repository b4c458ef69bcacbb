/* test-sink.c — engine/analysis/sc-sink (first-token mass and the sink rate of Gu et al.
 * 2025) on hand-built heads whose masses are worked out in the comments. */
#include <glib.h>
#include <math.h>

#include "engine/analysis/sc-sink.h"

#define TOL 1e-12

static double
mass_of (const float *a, int n_q, int n_k)
{
  double m = -1;

  g_assert_cmpint (sc_sink_first_mass (a, n_q, n_k, &m, NULL), ==, SC_OK);
  return m;
}

/* Four causal 4 x 4 heads, T = 4; α = (1/4) Σ_t A[t][0], row 0 (A[0][0] = 1) included:
 *   uniform   row p puts 1/(p+1) on key 0: (1 + ½ + ⅓ + ¼) / 4 = (25/12) / 4 = 25/48
 *   sink      every row on key 0: 1
 *   previous  row p on key p-1 (row 0 on itself): rows 0 and 1 hit key 0: 2/4 = ½
 *   self      row p on key p: only row 0: 1/4 (the least any causal head can have)
 * At ε = 0.3 the first three are sinks: Sink = 3/4. */
static void
test_first_mass (void)
{
  const float u2 = 0.5f, u3 = 1.0f / 3, u4 = 0.25f;
  const float uniform[16] = { 1, 0, 0, 0, u2, u2, 0, 0, u3, u3, u3, 0, u4, u4, u4, u4 };
  const float sink[16] = { 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0 };
  const float prev[16] = { 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0 };
  const float self[16] = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 };
  double mass[4];
  ScSinkRate r;

  mass[0] = mass_of (uniform, 4, 4);
  mass[1] = mass_of (sink, 4, 4);
  mass[2] = mass_of (prev, 4, 4);
  mass[3] = mass_of (self, 4, 4);
  g_assert_cmpfloat_with_epsilon (mass[0], 25.0 / 48, 1e-7); /* float 1/3 */
  g_assert_cmpfloat_with_epsilon (mass[1], 1.0, TOL);
  g_assert_cmpfloat_with_epsilon (mass[2], 0.5, TOL);
  g_assert_cmpfloat_with_epsilon (mass[3], 0.25, TOL);
  g_assert_cmpint (sc_sink_rate (mass, 1, 4, SC_SINK_EPSILON, &r, NULL, NULL, NULL), ==, SC_OK);
  g_assert_cmpint (r.n_heads, ==, 4);
  g_assert_cmpint (r.n_sinks, ==, 3);
  g_assert_cmpfloat_with_epsilon (r.rate, 0.75, TOL);
  g_assert_cmpfloat_with_epsilon (r.mean, (25.0 / 48 + 1 + 0.5 + 0.25) / 4, 1e-7);

  /* The last two queries of the uniform head only (rows at positions 2, 3): (⅓ + ¼) / 2
   * = 7/24 — the mean over the rows given, which is Gu et al.'s α only for the square. */
  g_assert_cmpfloat_with_epsilon (mass_of (uniform + 8, 2, 4), 7.0 / 24, 1e-7);
}

/* Two layers of two heads, masses (.31, .3 | NaN, .9), ε = .3: strictly greater counts,
 * so .31 and .9 are sinks and .3 is not: Sink = 2/4; per layer ½ and ½ (NaN is not a sink
 * but is a head). Means skip the NaN: layer 0 (.31 + .3)/2 = .305, layer 1 .9; all three
 * (.31 + .3 + .9)/3. */
static void
test_rate (void)
{
  const double mass[4] = { 0.31, 0.3, NAN, 0.9 };
  double lr[2], lm[2];
  ScSinkRate r;

  g_assert_cmpint (sc_sink_rate (mass, 2, 2, 0.3, &r, lr, lm, NULL), ==, SC_OK);
  g_assert_cmpint (r.n_sinks, ==, 2);
  g_assert_cmpfloat_with_epsilon (r.rate, 0.5, TOL);
  g_assert_cmpfloat (r.epsilon, ==, 0.3);
  g_assert_cmpfloat_with_epsilon (lr[0], 0.5, TOL);
  g_assert_cmpfloat_with_epsilon (lr[1], 0.5, TOL);
  g_assert_cmpfloat_with_epsilon (lm[0], 0.305, TOL);
  g_assert_cmpfloat_with_epsilon (lm[1], 0.9, TOL);
  g_assert_cmpfloat_with_epsilon (r.mean, (0.31 + 0.3 + 0.9) / 3, TOL);

  /* ε = 0: every finite positive mass counts; ε = 1: none can (α <= 1). */
  g_assert_cmpint (sc_sink_rate (mass, 2, 2, 0.0, &r, NULL, NULL, NULL), ==, SC_OK);
  g_assert_cmpint (r.n_sinks, ==, 3);
  g_assert_cmpint (sc_sink_rate (mass, 2, 2, 1.0, &r, NULL, NULL, NULL), ==, SC_OK);
  g_assert_cmpint (r.n_sinks, ==, 0);
  g_assert_cmpfloat (r.rate, ==, 0.0);
}

/* Top heads: (.2, NaN, .9, .2, .5) -> 2 (.9), 4 (.5), 0 and 3 (.2 each, the lower index
 * first), then 1 (NaN last). */
static void
test_top (void)
{
  const double mass[5] = { 0.2, NAN, 0.9, 0.2, 0.5 };
  int idx[8];

  g_assert_cmpint (sc_sink_top (mass, 5, 3, idx), ==, 3);
  g_assert_cmpint (idx[0], ==, 2);
  g_assert_cmpint (idx[1], ==, 4);
  g_assert_cmpint (idx[2], ==, 0);
  g_assert_cmpint (sc_sink_top (mass, 5, 8, idx), ==, 5);
  g_assert_cmpint (idx[2], ==, 0);
  g_assert_cmpint (idx[3], ==, 3);
  g_assert_cmpint (idx[4], ==, 1);
  g_assert_cmpint (sc_sink_top (mass, 5, 0, idx), ==, 0);
  g_assert_cmpint (sc_sink_top (NULL, 5, 3, idx), ==, 0);
}

static void
test_bad_args (void)
{
  const float a[4] = { 1, 0, 0.5f, 0.5f };
  const double mass[1] = { 0.5 };
  double m = 42;
  ScSinkRate r;
  ScError err = { 0 };

  g_assert_cmpint (sc_sink_first_mass (a, 3, 2, &m, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_sink_first_mass (a, 0, 2, &m, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_sink_first_mass (NULL, 2, 2, &m, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpfloat (m, ==, 42);
  g_assert_cmpint (sc_sink_rate (mass, 0, 1, 0.3, &r, NULL, NULL, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_sink_rate (mass, 1, 1, NAN, &r, NULL, NULL, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_sink_rate (NULL, 1, 1, 0.3, &r, NULL, NULL, &err), ==, SC_ERR_INVALID_ARG);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sink/first-mass", test_first_mass);
  g_test_add_func ("/sink/rate", test_rate);
  g_test_add_func ("/sink/top", test_top);
  g_test_add_func ("/sink/bad-args", test_bad_args);
  return g_test_run ();
}
