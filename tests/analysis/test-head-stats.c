/* test-head-stats.c — engine/analysis/sc-head-stats on hand-built heads whose statistics
 * are worked out by hand in the comments (the expected values are written as the formulas
 * those comments derive, not computed by a second implementation). */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/analysis/sc-head-stats.h"

#define TOL 1e-6

static void
stats_of (const float *a, int n_q, int n_k, int sink_k, ScHeadStats *s)
{
  ScHeadStatsOptions opt = { .sink_k = sink_k };
  ScError err = { 0 };

  g_assert_cmpint (sc_head_stats_compute (a, n_q, n_k, &opt, s, &err), ==, SC_OK);
}

/* Causal uniform 3 x 3: row p spreads 1/(p+1) over keys 0..p.
 *   entropy   rows 0, ln 2, ln 3                      -> (ln 2 + ln 3) / 3
 *   norm      rows 1, 2: ln 2 / ln 2 = ln 3 / ln 3 = 1 -> 1
 *   distance  0; 1/2 (1 + 0); 1/3 (2 + 1 + 0) = 1     -> 1.5 / 3 = 0.5
 *   max, sink, self: 1, 1/2, 1/3                      -> 11/18
 *   sink_k (k = 2): 1, 1, 2/3                         -> 8/9
 *   previous: rows 1, 2: 1/2, 1/3                     -> 5/12
 *   last row: entropy ln 3, top key 0 (ties go to the lowest key), weight 1/3 */
static void
test_uniform (void)
{
  const float t = 1.0f / 3.0f;
  const float a[9] = { 1, 0, 0, 0.5f, 0.5f, 0, t, t, t };
  ScHeadStats s;

  stats_of (a, 3, 3, 2, &s);
  g_assert_cmpfloat_with_epsilon (s.entropy, (log (2) + log (3)) / 3, TOL);
  g_assert_cmpfloat_with_epsilon (s.entropy_norm, 1.0, TOL);
  g_assert_cmpfloat_with_epsilon (s.distance, 0.5, TOL);
  g_assert_cmpfloat_with_epsilon (s.confidence, 11.0 / 18, TOL);
  g_assert_cmpfloat_with_epsilon (s.sink, 11.0 / 18, TOL);
  g_assert_cmpfloat_with_epsilon (s.sink_k, 8.0 / 9, TOL);
  g_assert_cmpfloat_with_epsilon (s.previous, 5.0 / 12, TOL);
  g_assert_cmpfloat_with_epsilon (s.self, 11.0 / 18, TOL);
  g_assert_cmpfloat_with_epsilon (s.last_entropy, log (3), TOL);
  g_assert_cmpint (s.last_top, ==, 0);
  g_assert_cmpfloat_with_epsilon (s.last_top_weight, 1.0 / 3, TOL);
}

/* One-hot rows on the diagonal (every token attends to itself), 4 x 4:
 *   entropy 0, norm 0, distance 0, confidence 1, self 1, previous 0;
 *   sink: only row 0 puts its mass on key 0 -> 1/4; sink_k (k = 4, the default): rows
 *   0..3 all attend inside the first four keys -> 1; last row's top key is 3. */
static void
test_self_one_hot (void)
{
  float a[16] = { 0 };
  ScHeadStats s;
  int i;

  for (i = 0; i < 4; i++)
    a[i * 4 + i] = 1.0f;
  stats_of (a, 4, 4, 0, &s);
  g_assert_cmpfloat (s.entropy, ==, 0.0);
  g_assert_cmpfloat (s.entropy_norm, ==, 0.0);
  g_assert_cmpfloat (s.distance, ==, 0.0);
  g_assert_cmpfloat (s.confidence, ==, 1.0);
  g_assert_cmpfloat (s.self, ==, 1.0);
  g_assert_cmpfloat (s.previous, ==, 0.0);
  g_assert_cmpfloat_with_epsilon (s.sink, 0.25, TOL);
  g_assert_cmpfloat_with_epsilon (s.sink_k, 1.0, TOL);
  g_assert_cmpint (s.last_top, ==, 3);
  g_assert_cmpfloat (s.last_top_weight, ==, 1.0);
}

/* A pure previous-token head, 4 x 4: row 0 attends to itself (it has nothing else), row
 * i >= 1 puts all its mass on key i - 1.
 *   previous: rows 1..3 all 1 -> 1;  distance 0, 1, 1, 1 -> 3/4;  self: row 0 -> 1/4;
 *   sink: rows 0 and 1 sit on key 0 -> 1/2;  sink_k (k = 2): rows 0, 1, 2 -> 3/4;
 *   entropy 0, confidence 1; the last row looks at key 2. */
static void
test_previous_token (void)
{
  float a[16] = { 0 };
  ScHeadStats s;
  int i;

  a[0] = 1.0f;
  for (i = 1; i < 4; i++)
    a[i * 4 + i - 1] = 1.0f;
  stats_of (a, 4, 4, 2, &s);
  g_assert_cmpfloat_with_epsilon (s.previous, 1.0, TOL);
  g_assert_cmpfloat_with_epsilon (s.distance, 0.75, TOL);
  g_assert_cmpfloat_with_epsilon (s.self, 0.25, TOL);
  g_assert_cmpfloat_with_epsilon (s.sink, 0.5, TOL);
  g_assert_cmpfloat_with_epsilon (s.sink_k, 0.75, TOL);
  g_assert_cmpfloat (s.entropy, ==, 0.0);
  g_assert_cmpfloat (s.confidence, ==, 1.0);
  g_assert_cmpint (s.last_top, ==, 2);
}

/* An attention sink, 4 x 4: every row on key 0. sink 1; distance 0, 1, 2, 3 -> 3/2;
 * previous: only row 1's previous token is key 0 -> 1/3; self: only row 0 -> 1/4. */
static void
test_sink (void)
{
  float a[16] = { 0 };
  ScHeadStats s;
  int i;

  for (i = 0; i < 4; i++)
    a[i * 4] = 1.0f;
  stats_of (a, 4, 4, 0, &s);
  g_assert_cmpfloat_with_epsilon (s.sink, 1.0, TOL);
  g_assert_cmpfloat_with_epsilon (s.distance, 1.5, TOL);
  g_assert_cmpfloat_with_epsilon (s.previous, 1.0 / 3, TOL);
  g_assert_cmpfloat_with_epsilon (s.self, 0.25, TOL);
  g_assert_cmpint (s.last_top, ==, 0);
}

/* Two queries over four keys (a KV cache): the rows sit at positions 2 and 3.
 *   row p = 2: (1/4, 1/4, 1/2, 0)    row p = 3: (0.1, 0.2, 0.3, 0.4)
 *   H2 = 2 (1/4) ln 4 + (1/2) ln 2 = (3/2) ln 2
 *   H3 = -(0.1 ln 0.1 + 0.2 ln 0.2 + 0.3 ln 0.3 + 0.4 ln 0.4)
 *   norm = (H2 / ln 3 + H3 / ln 4) / 2;   self = (1/2 + 0.4) / 2 = 0.45
 *   previous = (1/4 + 0.3) / 2 = 0.275;   distance = ((2 + 1) / 4 + (0.3 + 0.4 + 0.3)) / 2
 *   = (0.75 + 1.0) / 2 = 0.875;  confidence = (1/2 + 0.4) / 2 = 0.45. */
static void
test_cache_rows (void)
{
  const float a[8] = { 0.25f, 0.25f, 0.5f, 0.0f, 0.1f, 0.2f, 0.3f, 0.4f };
  double h2 = 1.5 * log (2);
  double h3 = -(0.1 * log (0.1) + 0.2 * log (0.2) + 0.3 * log (0.3) + 0.4 * log (0.4));
  ScHeadStats s;

  stats_of (a, 2, 4, 0, &s);
  g_assert_cmpfloat_with_epsilon (s.entropy, (h2 + h3) / 2, TOL);
  g_assert_cmpfloat_with_epsilon (s.entropy_norm, (h2 / log (3) + h3 / log (4)) / 2, TOL);
  g_assert_cmpfloat_with_epsilon (s.self, 0.45, TOL);
  g_assert_cmpfloat_with_epsilon (s.previous, 0.275, TOL);
  g_assert_cmpfloat_with_epsilon (s.distance, 0.875, TOL);
  g_assert_cmpfloat_with_epsilon (s.confidence, 0.45, TOL);
  g_assert_cmpfloat_with_epsilon (s.last_entropy, h3, TOL);
  g_assert_cmpint (s.last_top, ==, 3);
}

/* One token: every row is position 0, so the normalised entropy and the previous-token
 * score are undefined (NaN, never a made-up 0); everything else is defined. */
static void
test_one_token (void)
{
  const float a[1] = { 1.0f };
  ScHeadStats s;

  stats_of (a, 1, 1, 0, &s);
  g_assert_true (isnan (s.entropy_norm));
  g_assert_true (isnan (s.previous));
  g_assert_cmpfloat (s.entropy, ==, 0.0);
  g_assert_cmpfloat (s.sink, ==, 1.0);
  g_assert_cmpfloat (s.sink_k, ==, 1.0);
  g_assert_cmpfloat (s.self, ==, 1.0);
}

static void
test_bad_arguments (void)
{
  const float a[4] = { 1, 0, 0.5f, 0.5f };
  ScHeadStats s = { .entropy = 42 };
  ScError err = { 0 };

  g_assert_cmpint (sc_head_stats_compute (a, 3, 2, NULL, &s, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "(3, 2)"));
  g_assert_cmpint (sc_head_stats_compute (a, 0, 2, NULL, &s, NULL), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_head_stats_compute (NULL, 2, 2, NULL, &s, NULL), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_head_stats_compute (a, 2, 2, NULL, NULL, NULL), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpfloat (s.entropy, ==, 42.0); /* untouched on error */
}

/* Every metric has an id that maps back to it, and the getter returns its field. */
static void
test_metric_ids (void)
{
  const float t = 1.0f / 3.0f;
  const float a[9] = { 1, 0, 0, 0.5f, 0.5f, 0, t, t, t };
  ScHeadStats s;
  int m;

  stats_of (a, 3, 3, 2, &s);
  for (m = 0; m < SC_HEAD_N_METRICS; m++)
    {
      ScHeadMetric back;
      const char *id = sc_head_metric_id ((ScHeadMetric) m);

      g_assert_nonnull (id);
      g_assert_true (sc_head_metric_from_id (id, &back));
      g_assert_cmpint (back, ==, m);
    }
  g_assert_null (sc_head_metric_id (SC_HEAD_N_METRICS));
  g_assert_false (sc_head_metric_from_id ("no-such-metric", &(ScHeadMetric) { 0 }));
  g_assert_false (sc_head_metric_from_id (NULL, &(ScHeadMetric) { 0 }));
  g_assert_cmpfloat (sc_head_stats_get (&s, SC_HEAD_METRIC_PREVIOUS), ==, s.previous);
  g_assert_cmpfloat (sc_head_stats_get (&s, SC_HEAD_METRIC_SINK_K), ==, s.sink_k);
  g_assert_cmpfloat (sc_head_stats_get (&s, SC_HEAD_METRIC_DISTANCE), ==, s.distance);
  g_assert_true (isnan (sc_head_stats_get (&s, SC_HEAD_N_METRICS)));
}

/* The row-at-a-time form (what the store's writer uses, handing each causal row with its
 * length p + 1 so the zeros after it are not visited) gives the same bits as the whole
 * matrix, for lengths on and off the 8-lane blocks, with rows of real-looking spread
 * (a sink, a diagonal, noise) and a row buffer that holds the zeros only once. */
static void
test_rows_same_bits (void)
{
  const int sizes[] = { 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 130 };
  GRand *rng = g_rand_new_with_seed (29);

  for (size_t t = 0; t < G_N_ELEMENTS (sizes); t++)
    {
      const int n = sizes[t];
      float *a = g_new0 (float, (size_t) n * n), *row = g_new0 (float, n);
      ScHeadStats whole, by_row;
      ScHeadStatsAcc acc;
      ScHeadStatsOptions opt = { .sink_k = 3 };

      for (int i = 0; i < n; i++)
        {
          double sum = 0.0;
          for (int j = 0; j <= i; j++)
            {
              double w = g_rand_double (rng) * (j == 0 ? 20.0 : j == i ? 5.0 : 1.0);
              if (g_rand_int_range (rng, 0, 7) == 0)
                w = 0.0; /* exact zeros inside the row as well */
              a[(size_t) i * n + j] = (float) w;
              sum += w;
            }
          for (int j = 0; j <= i; j++)
            a[(size_t) i * n + j] = sum > 0 ? (float) (a[(size_t) i * n + j] / sum) : 1.0f;
        }
      g_assert_cmpint (sc_head_stats_compute (a, n, n, &opt, &whole, NULL), ==, SC_OK);
      sc_head_stats_begin (&acc, n, n, &opt);
      for (int i = 0; i < n; i++)
        {
          memcpy (row, a + (size_t) i * n, (size_t) (i + 1) * sizeof *row);
          sc_head_stats_add_row (&acc, row, i + 1);
        }
      sc_head_stats_end (&acc, &by_row);
      g_assert_cmpmem (&whole, sizeof whole, &by_row, sizeof by_row);
      g_free (a);
      g_free (row);
    }
  g_rand_free (rng);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/head-stats/uniform", test_uniform);
  g_test_add_func ("/head-stats/self-one-hot", test_self_one_hot);
  g_test_add_func ("/head-stats/previous-token", test_previous_token);
  g_test_add_func ("/head-stats/sink", test_sink);
  g_test_add_func ("/head-stats/cache-rows", test_cache_rows);
  g_test_add_func ("/head-stats/one-token", test_one_token);
  g_test_add_func ("/head-stats/bad-arguments", test_bad_arguments);
  g_test_add_func ("/head-stats/metric-ids", test_metric_ids);
  g_test_add_func ("/head-stats/rows-same-bits", test_rows_same_bits);
  return g_test_run ();
}
