/* test-rollout.c — engine/analysis/sc-rollout (attention rollout and flow) on hand-built
 * layers whose Â, rollout and flows are worked out in the comments, with the first token kept
 * and excluded (ScRolloutOptions); maximum flow on a graph with a known cut. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/analysis/sc-rollout.h"

#define TOL 1e-12

/* Random causal layers: (n_layers, n_heads, n, n), rows summing to 1. */
static float *
random_layers (GRand *r, int n_layers, int n_heads, int n)
{
  float *buf = g_new0 (float, (gsize) n_layers * n_heads * n * n);

  for (gsize h = 0; h < (gsize) n_layers * n_heads; h++)
    for (int i = 0; i < n; i++)
      {
        float *row = buf + (h * n + i) * n;
        double sum = 0;

        for (int j = 0; j <= i; j++)
          sum += row[j] = (float) g_rand_double_range (r, 0.01, 1);
        for (int j = 0; j <= i; j++)
          row[j] = (float) (row[j] / sum);
      }
  return buf;
}

/* Every row of the rollout of 4 random causal layers of 3 heads sums to 1, and the
 * rollout stays causal (zeros above the diagonal). */
static void
test_rows_sum_to_one (void)
{
  enum { L = 4, H = 3, N = 9 };
  g_autoptr (GRand) r = g_rand_new_with_seed (5);
  g_autofree float *buf = random_layers (r, L, H, N);
  const float *layers[L];
  double R[N * N];

  for (int l = 0; l < L; l++)
    layers[l] = buf + (gsize) l * H * N * N;
  g_assert_cmpint (sc_attention_rollout (layers, L, H, N, R, NULL), ==, SC_OK);
  for (int i = 0; i < N; i++)
    {
      double sum = 0;
      for (int j = 0; j < N; j++)
        {
          sum += R[i * N + j];
          if (j > i)
            g_assert_cmpfloat (R[i * N + j], ==, 0.0);
        }
      g_assert_cmpfloat_with_epsilon (sum, 1.0, 1e-6); /* float inputs: rows sum to 1 ± n ulp */
    }
}

/* One layer of two heads, A1 = [[1, 0], [1, 0]] and A2 = [[1, 0], [0, 1]]:
 *   mean = [[1, 0], [½, ½]],  Â = ½ mean + ½ I = [[1, 0], [¼, ¾]] = the rollout.
 * Its flow to position 1 is the single edges' capacities, Â[1] = (¼, ¾): one layer is where
 * flow and rollout must agree. */
static void
test_one_layer (void)
{
  const float heads[8] = { 1, 0, 1, 0, 1, 0, 0, 1 };
  const float *layers[1] = { heads };
  double R[4], f[2];

  g_assert_cmpint (sc_attention_rollout (layers, 1, 2, 2, R, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (R[0], 1.0, TOL);
  g_assert_cmpfloat_with_epsilon (R[1], 0.0, TOL);
  g_assert_cmpfloat_with_epsilon (R[2], 0.25, TOL);
  g_assert_cmpfloat_with_epsilon (R[3], 0.75, TOL);
  g_assert_cmpint (sc_attention_flow (layers, 1, 2, 2, 1, f, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (f[0], 0.25, 1e-9);
  g_assert_cmpfloat_with_epsilon (f[1], 0.75, 1e-9);
}

/* One random layer: flow to every target equals that row of the rollout. */
static void
test_one_layer_random (void)
{
  enum { H = 2, N = 7 };
  g_autoptr (GRand) r = g_rand_new_with_seed (9);
  g_autofree float *buf = random_layers (r, 1, H, N);
  const float *layers[1] = { buf };
  double R[N * N], f[N];

  g_assert_cmpint (sc_attention_rollout (layers, 1, H, N, R, NULL), ==, SC_OK);
  for (int t = 0; t < N; t++)
    {
      g_assert_cmpint (sc_attention_flow (layers, 1, H, N, t, f, NULL), ==, SC_OK);
      for (int j = 0; j < N; j++)
        g_assert_cmpfloat_with_epsilon (f[j], R[t * N + j], 1e-9);
    }
}

/* Two layers of one head, n = 3, that do not commute:
 *   A0 = [[1,0,0], [1,0,0], [0,1,0]]  -> Â0 = [[1,0,0], [½,½,0], [0,½,½]]
 *   A1 = [[1,0,0], [0,1,0], [1,0,0]]  -> Â1 = [[1,0,0], [0,1,0], [½,0,½]]
 *   R = Â1 Â0: row 0 (1,0,0); row 1 = Â0[1] = (½,½,0); row 2 = ½ Â0[0] + ½ Â0[2] = (½,¼,¼)
 *   (the wrong order Â0 Â1 would give row 2 = (¼,½,¼)).
 * Flow to (2, 2), whose in-edges are (1,0) and (1,2), each of capacity ½:
 *   from (0,0): (0,0)->(1,0) [1] ->(2,2) [½]; (0,0)->(1,1) leads nowhere: ½;
 *   from (0,1): (0,1)->(1,2) [½] ->(2,2) [½]: ½;  from (0,2): (0,2)->(1,2) [½]: ½.
 * The cut {(1,0)->(2,2), (1,2)->(2,2)} of capacity 1 bounds the three flows' sum only
 * jointly; each alone is ½ — flow is not additive, unlike rollout. */
static void
test_two_layers (void)
{
  const float a0[9] = { 1, 0, 0, 1, 0, 0, 0, 1, 0 };
  const float a1[9] = { 1, 0, 0, 0, 1, 0, 1, 0, 0 };
  const float *layers[2] = { a0, a1 };
  const double want[9] = { 1, 0, 0, 0.5, 0.5, 0, 0.5, 0.25, 0.25 };
  double R[9], f[3];

  g_assert_cmpint (sc_attention_rollout (layers, 2, 1, 3, R, NULL), ==, SC_OK);
  for (int k = 0; k < 9; k++)
    g_assert_cmpfloat_with_epsilon (R[k], want[k], TOL);
  g_assert_cmpint (sc_attention_flow (layers, 2, 1, 3, 2, f, NULL), ==, SC_OK);
  for (int j = 0; j < 3; j++)
    g_assert_cmpfloat_with_epsilon (f[j], 0.5, 1e-9);
}

/* A chain: layer 0 moves token 1 fully onto token 0 (A0 row 1 = (1, 0): Â0 row 1 =
 * (½, ½)); layers 1 and 2 attend to themselves (Â = I). Each input has a single path to
 * (3, 1) whose other edges have capacity 1, so flow = the bottleneck = the product of the
 * path = rollout: (½, ½). */
static void
test_chain (void)
{
  const float a0[4] = { 1, 0, 1, 0 };
  const float self[4] = { 1, 0, 0, 1 };
  const float *layers[3] = { a0, self, self };
  double R[4], f[2];

  g_assert_cmpint (sc_attention_rollout (layers, 3, 1, 2, R, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (R[2], 0.5, TOL);
  g_assert_cmpfloat_with_epsilon (R[3], 0.5, TOL);
  g_assert_cmpint (sc_attention_flow (layers, 3, 1, 2, 1, f, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (f[0], R[2], 1e-9);
  g_assert_cmpfloat_with_epsilon (f[1], R[3], 1e-9);
  /* Position 0 sees only itself: flow (1, 0), like the rollout's row 0. */
  g_assert_cmpint (sc_attention_flow (layers, 3, 1, 2, 0, f, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (f[0], 1.0, 1e-9);
  g_assert_cmpfloat (f[1], ==, 0.0);
}

/* The network of CLRS (3rd ed.) figure 26.1: s = 0, t = 5; its minimum cut
 * {1->3 (12), 4->3 (7), 4->5 (4)} has capacity 23, the maximum flow. */
static void
test_max_flow_known_cut (void)
{
  const int e[] = { 0, 1, 0, 2, 1, 2, 2, 1, 1, 3, 3, 2, 2, 4, 4, 3, 3, 5, 4, 5 };
  const double c[] = { 16, 13, 10, 4, 12, 9, 14, 7, 20, 4 };
  double v = 0;
  ScError err = { 0 };

  g_assert_cmpint (sc_max_flow (6, e, c, 10, 0, 5, &v, &err), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (v, 23.0, 1e-9);
  /* The reverse has no path: 0. */
  g_assert_cmpint (sc_max_flow (6, e, c, 10, 5, 0, &v, &err), ==, SC_OK);
  g_assert_cmpfloat (v, ==, 0.0);
  g_assert_cmpint (sc_max_flow (6, e, c, 10, 0, 6, &v, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_max_flow (6, e, c, 10, 2, 2, &v, &err), ==, SC_ERR_INVALID_ARG);
}

/* Past the limits the flow is refused before anything is read or allocated; SmolLM2's
 * 30 layers get 64 tokens. */
static void
test_flow_too_large (void)
{
  const float dummy[1] = { 1 };
  const float *layers[1] = { dummy };
  const float *many[30];
  double f[1];
  ScError err = { 0 };
  const int n = SC_FLOW_MAX_NODES / 2 + 1; /* (1 + 1) n > SC_FLOW_MAX_NODES */

  g_assert_cmpint (sc_attention_flow (layers, 1, 1, n, 0, f, &err), ==, SC_ERR_RANGE);
  g_assert_nonnull (strstr (err.message, "nodes"));
  g_assert_false (sc_attention_flow_fits (1, n));
  g_assert_true (sc_attention_flow_fits (30, 64));
  g_assert_false (sc_attention_flow_fits (30, 65));
  for (int l = 0; l < 30; l++)
    many[l] = dummy;
  g_assert_cmpint (sc_attention_flow (many, 30, 1, 65, 0, f, &err), ==, SC_ERR_RANGE);
  g_assert_nonnull (strstr (err.message, "up to 64 tokens for 30 layers"));
}

static void
test_bad_args (void)
{
  const float a[1] = { 1 };
  const float *layers[2] = { a, NULL };
  double R[1];
  ScError err = { 0 };

  g_assert_cmpint (sc_attention_rollout (layers, 2, 1, 1, R, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_attention_rollout (layers, 0, 1, 1, R, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_attention_flow (layers, 1, 1, 1, 1, R, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_attention_rollout (layers, 1, 1, 1, R, &err), ==, SC_OK);
  g_assert_cmpfloat (R[0], ==, 1.0);
}

/* Without the first token, one head, n = 3: A = [[1,0,0], [½,½,0], [.6,.2,.2]].
 *   row 0 has nothing but key 0: the identity row (1,0,0); row 1 keeps key 1 alone: (0,1,0);
 *   row 2 keeps (.2,.2) of 0.4: (0,½,½).
 *   Â' = ½ A' + ½ I = [[1,0,0], [0,1,0], [0,¼,¾]] = the rollout, and the flow into 2 is
 *   row 2 (one layer): (0, ¼, ¾).
 * Kept: Â = [[1,0,0], [¼,¾,0], [.3,.1,.6]], the first token holding .3 of position 2. */
static void
test_exclude_first_one_layer (void)
{
  const float a[9] = { 1, 0, 0, 0.5f, 0.5f, 0, 0.6f, 0.2f, 0.2f };
  const float *layers[1] = { a };
  const ScRolloutOptions excl = { .exclude_first = true }, keep = { 0 };
  const double want[9] = { 1, 0, 0, 0, 1, 0, 0, 0.25, 0.75 };
  double R[9], f[3];

  g_assert_cmpint (sc_attention_rollout_with (layers, 1, 1, 3, &excl, R, NULL), ==, SC_OK);
  for (int k = 0; k < 9; k++)
    g_assert_cmpfloat_with_epsilon (R[k], want[k], 1e-7); /* float inputs (.6, .2) */
  g_assert_cmpint (sc_attention_flow_with (layers, 1, 1, 3, &excl, 2, f, NULL), ==, SC_OK);
  g_assert_cmpfloat (f[0], ==, 0.0);
  g_assert_cmpfloat_with_epsilon (f[1], 0.25, 1e-7);
  g_assert_cmpfloat_with_epsilon (f[2], 0.75, 1e-7);
  g_assert_cmpint (sc_attention_rollout_with (layers, 1, 1, 3, &keep, R, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (R[6], 0.3, 1e-7);
  g_assert_cmpfloat_with_epsilon (R[7], 0.1, 1e-7);
  g_assert_cmpfloat_with_epsilon (R[8], 0.6, 1e-7);
}

/* Two layers of two heads, n = 2, A1 = [[1,0],[1,0]] (row 1 all on the sink) and
 * A2 = [[1,0],[½,½]] in both layers.
 *   Kept: mean row 1 = (¾,¼), Â = [[1,0],[⅜,⅝]], R = Â² row 1 = (⅜ + ⅝·⅜, ⅝²)
 *         = (39/64, 25/64): the first token holds 0.61 of position 1.
 *   Without the first token: A1 row 1 has nothing left, the identity row (0,1); A2 row 1
 *         keeps (0,1): Â = I, R = I: position 1 draws only from itself, token 0 gets 0. */
static void
test_exclude_first_sink_head (void)
{
  const float heads[8] = { 1, 0, 1, 0, 1, 0, 0.5f, 0.5f };
  const float *layers[2] = { heads, heads };
  const ScRolloutOptions excl = { .exclude_first = true };
  double R[4], f[2];

  g_assert_cmpint (sc_attention_rollout (layers, 2, 2, 2, R, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (R[2], 39.0 / 64, TOL);
  g_assert_cmpfloat_with_epsilon (R[3], 25.0 / 64, TOL);
  g_assert_cmpint (sc_attention_rollout_with (layers, 2, 2, 2, &excl, R, NULL), ==, SC_OK);
  g_assert_cmpfloat (R[0], ==, 1.0);
  g_assert_cmpfloat (R[1], ==, 0.0);
  g_assert_cmpfloat (R[2], ==, 0.0);
  g_assert_cmpfloat (R[3], ==, 1.0);
  g_assert_cmpint (sc_attention_flow_with (layers, 2, 2, 2, &excl, 1, f, NULL), ==, SC_OK);
  g_assert_cmpfloat (f[0], ==, 0.0);
  g_assert_cmpfloat_with_epsilon (f[1], 1.0, 1e-9);
}

/* Random causal layers without the first token: rows still sum to 1, token 0 reaches no
 * position but itself (rollout and flow), and layers that never look at key 0 (but row 0,
 * which can look nowhere else) give the same rollout either way. */
static void
test_exclude_first_random (void)
{
  enum { L = 3, H = 2, N = 6 };
  g_autoptr (GRand) r = g_rand_new_with_seed (11);
  g_autofree float *buf = random_layers (r, L, H, N);
  const float *layers[L];
  const ScRolloutOptions excl = { .exclude_first = true };
  double R[N * N], R2[N * N], f[N];

  for (int l = 0; l < L; l++)
    layers[l] = buf + (gsize) l * H * N * N;
  g_assert_cmpint (sc_attention_rollout_with (layers, L, H, N, &excl, R, NULL), ==, SC_OK);
  for (int i = 0; i < N; i++)
    {
      double sum = 0;
      for (int j = 0; j < N; j++)
        sum += R[i * N + j];
      g_assert_cmpfloat_with_epsilon (sum, 1.0, 1e-6);
      if (i > 0)
        g_assert_cmpfloat (R[i * N], ==, 0.0);
    }
  g_assert_cmpint (sc_attention_flow_with (layers, L, H, N, &excl, N - 1, f, NULL), ==, SC_OK);
  g_assert_cmpfloat (f[0], ==, 0.0);
  for (int j = 1; j < N; j++)
    g_assert_cmpfloat (f[j], >, 0.0);

  /* No weight on key 0 outside row 0: renormalising changes nothing. */
  for (gsize h = 0; h < (gsize) L * H; h++)
    for (int i = 1; i < N; i++)
      {
        float *row = buf + (h * N + i) * N;
        double sum = 0;
        row[0] = 0;
        for (int j = 1; j <= i; j++)
          sum += row[j];
        for (int j = 1; j <= i; j++)
          row[j] = (float) (row[j] / sum);
      }
  g_assert_cmpint (sc_attention_rollout (layers, L, H, N, R, NULL), ==, SC_OK);
  g_assert_cmpint (sc_attention_rollout_with (layers, L, H, N, &excl, R2, NULL), ==, SC_OK);
  for (int k = 0; k < N * N; k++)
    g_assert_cmpfloat_with_epsilon (R2[k], R[k], 1e-6);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/rollout/rows-sum-to-one", test_rows_sum_to_one);
  g_test_add_func ("/rollout/one-layer", test_one_layer);
  g_test_add_func ("/rollout/one-layer-random", test_one_layer_random);
  g_test_add_func ("/rollout/two-layers", test_two_layers);
  g_test_add_func ("/rollout/chain", test_chain);
  g_test_add_func ("/rollout/max-flow-known-cut", test_max_flow_known_cut);
  g_test_add_func ("/rollout/flow-too-large", test_flow_too_large);
  g_test_add_func ("/rollout/bad-args", test_bad_args);
  g_test_add_func ("/rollout/exclude-first-one-layer", test_exclude_first_one_layer);
  g_test_add_func ("/rollout/exclude-first-sink-head", test_exclude_first_sink_head);
  g_test_add_func ("/rollout/exclude-first-random", test_exclude_first_random);
  return g_test_run ();
}
