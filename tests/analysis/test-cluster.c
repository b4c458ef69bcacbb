/* test-cluster.c — engine/analysis/sc-cluster (average linkage) on small hand-made matrices
 * whose merges, heights and leaf orders are worked out in the comments. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/analysis/sc-cluster.h"

/* Two obvious groups, {0, 2} and {1, 3}:
 *        0    1    2    3
 *   0    0    5    1    6
 *   1    5    0  5.5    2
 *   2    1  5.5    0  6.5
 *   3    6    2  6.5    0
 * merge 0: leaves 0 and 2 at 1 (cluster 4, size 2);
 *   D (4, 1) = (5 + 5.5) / 2 = 5.25, D (4, 3) = (6 + 6.5) / 2 = 6.25;
 * merge 1: leaves 1 and 3 at 2 (cluster 5);
 * merge 2: clusters 4 and 5 at (5.25 + 6.25) / 2 = 5.75 — the mean of the four cross
 *   distances (5 + 6 + 5.5 + 6.5) / 4, as average linkage promises.
 * Order: 4 holds leaf 0, so it goes left: 0 2 | 1 3. */
static void
test_two_groups (void)
{
  const double d[16] = { 0, 5, 1, 6, 5, 0, 5.5, 2, 1, 5.5, 0, 6.5, 6, 2, 6.5, 0 };
  ScClusterMerge m[3];
  int order[4];

  g_assert_cmpint (sc_cluster_average (d, 4, m, order, NULL), ==, SC_OK);
  g_assert_cmpint (m[0].a, ==, 0);
  g_assert_cmpint (m[0].b, ==, 2);
  g_assert_cmpfloat (m[0].height, ==, 1.0);
  g_assert_cmpint (m[0].size, ==, 2);
  g_assert_cmpint (m[1].a, ==, 1);
  g_assert_cmpint (m[1].b, ==, 3);
  g_assert_cmpfloat (m[1].height, ==, 2.0);
  g_assert_cmpint (m[2].a, ==, 4);
  g_assert_cmpint (m[2].b, ==, 5);
  g_assert_cmpfloat_with_epsilon (m[2].height, 5.75, 1e-12);
  g_assert_cmpint (m[2].size, ==, 4);
  g_assert_cmpint (order[0], ==, 0);
  g_assert_cmpint (order[1], ==, 2);
  g_assert_cmpint (order[2], ==, 1);
  g_assert_cmpint (order[3], ==, 3);
}

/* Ties. Three items all at distance 1: the first pair in index order, (0, 1), merges first
 * (cluster 3), then leaf 2 with cluster 3 (a = 2 < b = 3), both at height 1; cluster 3
 * holds leaf 0 and goes left: order 0 1 2.
 * Four items with d (0, 1) = d (2, 3) = 1, the rest 3: (0, 1) before (2, 3), then the two
 * pairs at 3. */
static void
test_ties (void)
{
  const double d3[9] = { 0, 1, 1, 1, 0, 1, 1, 1, 0 };
  const double d4[16] = { 0, 1, 3, 3, 1, 0, 3, 3, 3, 3, 0, 1, 3, 3, 1, 0 };
  ScClusterMerge m[3];
  int order[4];

  g_assert_cmpint (sc_cluster_average (d3, 3, m, order, NULL), ==, SC_OK);
  g_assert_cmpint (m[0].a, ==, 0);
  g_assert_cmpint (m[0].b, ==, 1);
  g_assert_cmpint (m[1].a, ==, 2);
  g_assert_cmpint (m[1].b, ==, 3);
  g_assert_cmpfloat (m[0].height, ==, 1.0);
  g_assert_cmpfloat (m[1].height, ==, 1.0);
  g_assert_cmpint (order[0], ==, 0);
  g_assert_cmpint (order[1], ==, 1);
  g_assert_cmpint (order[2], ==, 2);

  g_assert_cmpint (sc_cluster_average (d4, 4, m, order, NULL), ==, SC_OK);
  g_assert_cmpint (m[0].a, ==, 0);
  g_assert_cmpint (m[0].b, ==, 1);
  g_assert_cmpint (m[1].a, ==, 2);
  g_assert_cmpint (m[1].b, ==, 3);
  g_assert_cmpint (m[2].a, ==, 4);
  g_assert_cmpint (m[2].b, ==, 5);
  g_assert_cmpfloat (m[2].height, ==, 3.0);
  for (int i = 0; i < 4; i++)
    g_assert_cmpint (order[i], ==, i);
}

/* A larger random matrix: heights never decrease (average linkage is monotone), the order
 * is a permutation, the last merge holds every leaf. */
static void
test_random_monotone (void)
{
  enum { N = 30 };
  g_autoptr (GRand) r = g_rand_new_with_seed (11);
  double d[N * N];
  ScClusterMerge m[N - 1];
  int order[N];
  gboolean seen[N] = { 0 };

  for (int i = 0; i < N; i++)
    for (int j = 0; j <= i; j++)
      d[i * N + j] = d[j * N + i] = i == j ? 0 : g_rand_double (r);
  g_assert_cmpint (sc_cluster_average (d, N, m, order, NULL), ==, SC_OK);
  for (int k = 1; k < N - 1; k++)
    g_assert_cmpfloat (m[k].height, >=, m[k - 1].height - 1e-12);
  g_assert_cmpint (m[N - 2].size, ==, N);
  for (int i = 0; i < N; i++)
    {
      g_assert_false (seen[order[i]]);
      seen[order[i]] = TRUE;
    }
}

static void
test_bad (void)
{
  const double asym[4] = { 0, 1, 2, 0 };
  const double neg[4] = { 0, -1, -1, 0 };
  const double nan_d[4] = { 0, NAN, NAN, 0 };
  const double one[1] = { 0 };
  ScClusterMerge m[1];
  int order[2] = { -1, -1 };
  ScError err = { 0 };

  g_assert_cmpint (sc_cluster_average (asym, 2, m, order, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "symmetric"));
  g_assert_cmpint (sc_cluster_average (neg, 2, m, order, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_cluster_average (nan_d, 2, m, order, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_cluster_average (one, 0, m, order, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_cluster_average (one, 1, NULL, order, &err), ==, SC_OK);
  g_assert_cmpint (order[0], ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cluster/two-groups", test_two_groups);
  g_test_add_func ("/cluster/ties", test_ties);
  g_test_add_func ("/cluster/random-monotone", test_random_monotone);
  g_test_add_func ("/cluster/bad", test_bad);
  return g_test_run ();
}
