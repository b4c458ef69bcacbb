/* test-head-types.c — engine/analysis/sc-head-types on hand-built heads whose statistics
 * are worked out in the comments, so each head's flags and type are known before the code
 * runs; plus the thresholds' edges, NaN statistics and the ids. */
#include <glib.h>
#include <math.h>

#include "engine/analysis/sc-head-types.h"

#define N 8
#define BIT(t) (1u << (t))

/* A causal (N, N) head where row p puts all its weight on key @key_of (p). */
static void
one_key_head (float a[N * N], int (*key_of) (int p))
{
  for (int p = 0; p < N; p++)
    for (int j = 0; j < N; j++)
      a[p * N + j] = j == key_of (p) ? 1.0f : 0.0f;
}

static int key_prev (int p) { return p > 0 ? p - 1 : 0; }
static int key_first (int p) { (void) p; return 0; }
static int key_self (int p) { return p; }

static void
stats_of (const float *a, ScHeadStats *s)
{
  ScError err = { 0 };
  g_assert_cmpint (sc_head_stats_compute (a, N, N, NULL, s, &err), ==, SC_OK);
}

/* Previous-token head, N = 8: previous = 1; sink = (row 0 + row 1) / 8 = 0.25; distance =
 * 7/8 (rows 1..7 at 1); entropy_norm 0. Flags PREVIOUS and LOCAL; type PREVIOUS (it
 * precedes LOCAL). */
static void
test_previous (void)
{
  float a[N * N];
  ScHeadStats s;

  one_key_head (a, key_prev);
  stats_of (a, &s);
  g_assert_cmpfloat_with_epsilon (s.sink, 0.25, 1e-9);
  g_assert_cmpuint (sc_head_type_flags (&s, NULL, NULL), ==,
                    BIT (SC_HEAD_TYPE_PREVIOUS) | BIT (SC_HEAD_TYPE_LOCAL));
  g_assert_cmpint (sc_head_type_classify (&s, NULL, NULL), ==, SC_HEAD_TYPE_PREVIOUS);
  g_assert_cmpfloat (sc_head_type_score (SC_HEAD_TYPE_PREVIOUS, &s, NULL), ==, 1.0);
}

/* First-token head, N = 8: sink = 1; previous = 1/7 (only row 1's key 0 is its previous);
 * distance = (0 + 1 + ... + 7) / 8 = 3.5 > 2; entropy_norm 0. Flags SINK only. */
static void
test_sink (void)
{
  float a[N * N];
  ScHeadStats s;

  one_key_head (a, key_first);
  stats_of (a, &s);
  g_assert_cmpfloat_with_epsilon (s.distance, 3.5, 1e-9);
  g_assert_cmpuint (sc_head_type_flags (&s, NULL, NULL), ==, BIT (SC_HEAD_TYPE_SINK));
  g_assert_cmpint (sc_head_type_classify (&s, NULL, NULL), ==, SC_HEAD_TYPE_SINK);
}

/* Self head: distance 0, previous 0, sink 1/8, entropy_norm 0: LOCAL only. With induction
 * scores prefix matching 0.9 it is an induction head first (and still local); at exactly
 * the threshold too; just below it, local again. */
static void
test_self_and_induction (void)
{
  float a[N * N];
  ScHeadStats s;
  ScInductionScores ind = { .prefix_matching = 0.9, .duplicate_token = 0.05 };

  one_key_head (a, key_self);
  stats_of (a, &s);
  g_assert_cmpuint (sc_head_type_flags (&s, NULL, NULL), ==, BIT (SC_HEAD_TYPE_LOCAL));
  g_assert_cmpint (sc_head_type_classify (&s, NULL, NULL), ==, SC_HEAD_TYPE_LOCAL);
  g_assert_cmpuint (sc_head_type_flags (&s, &ind, NULL), ==,
                    BIT (SC_HEAD_TYPE_INDUCTION) | BIT (SC_HEAD_TYPE_LOCAL));
  g_assert_cmpint (sc_head_type_classify (&s, &ind, NULL), ==, SC_HEAD_TYPE_INDUCTION);
  g_assert_cmpfloat (sc_head_type_score (SC_HEAD_TYPE_INDUCTION, &s, &ind), ==, 0.9);
  g_assert_true (isnan (sc_head_type_score (SC_HEAD_TYPE_INDUCTION, &s, NULL)));
  ind.prefix_matching = SC_HEAD_TYPE_DEFAULT_INDUCTION;
  g_assert_cmpint (sc_head_type_classify (&s, &ind, NULL), ==, SC_HEAD_TYPE_INDUCTION);
  ind.prefix_matching = nextafter (SC_HEAD_TYPE_DEFAULT_INDUCTION, 0);
  g_assert_cmpint (sc_head_type_classify (&s, &ind, NULL), ==, SC_HEAD_TYPE_LOCAL);
}

/* Causal uniform, N = 8: entropy_norm 1; distance = mean over p of p/2 = 7/4 = 1.75 <= 2;
 * sink = (1/8) sum 1/(p+1) = H_8 / 8 = 0.340 < 0.5; previous = mean over p >= 1 of 1/(p+1)
 * = (H_8 - 1) / 7 = 0.245. Flags BROAD and LOCAL; type BROAD: the reason BROAD precedes
 * LOCAL (a uniform head on a short text is near the diagonal on average). */
static void
test_uniform_is_broad (void)
{
  float a[N * N];
  ScHeadStats s;

  for (int p = 0; p < N; p++)
    for (int j = 0; j < N; j++)
      a[p * N + j] = j <= p ? 1.0f / (float) (p + 1) : 0.0f;
  stats_of (a, &s);
  g_assert_cmpfloat_with_epsilon (s.entropy_norm, 1.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (s.distance, 1.75, 1e-6);
  g_assert_cmpuint (sc_head_type_flags (&s, NULL, NULL), ==,
                    BIT (SC_HEAD_TYPE_BROAD) | BIT (SC_HEAD_TYPE_LOCAL));
  g_assert_cmpint (sc_head_type_classify (&s, NULL, NULL), ==, SC_HEAD_TYPE_BROAD);
}

/* Statistics set by hand: none meets a criterion (OTHER); NaN meets none; each threshold
 * is inclusive; custom thresholds move the answer. */
static void
test_other_nan_and_edges (void)
{
  ScHeadStats s = { .entropy_norm = 0.5, .distance = 5.0, .sink = 0.2, .previous = 0.1 };
  ScHeadTypeThresholds t;

  g_assert_cmpuint (sc_head_type_flags (&s, NULL, NULL), ==, 0);
  g_assert_cmpint (sc_head_type_classify (&s, NULL, NULL), ==, SC_HEAD_TYPE_OTHER);
  g_assert_true (isnan (sc_head_type_score (SC_HEAD_TYPE_OTHER, &s, NULL)));

  s.previous = NAN;
  s.entropy_norm = NAN;
  s.sink = NAN;
  s.distance = NAN;
  g_assert_cmpuint (sc_head_type_flags (&s, NULL, NULL), ==, 0);

  s = (ScHeadStats) { .entropy_norm = SC_HEAD_TYPE_DEFAULT_BROAD, .distance = 5.0 };
  g_assert_cmpint (sc_head_type_classify (&s, NULL, NULL), ==, SC_HEAD_TYPE_BROAD);
  s = (ScHeadStats) { .distance = SC_HEAD_TYPE_DEFAULT_LOCAL_DISTANCE };
  g_assert_cmpint (sc_head_type_classify (&s, NULL, NULL), ==, SC_HEAD_TYPE_LOCAL);
  s = (ScHeadStats) { .sink = SC_HEAD_TYPE_DEFAULT_SINK, .distance = 5.0 };
  g_assert_cmpint (sc_head_type_classify (&s, NULL, NULL), ==, SC_HEAD_TYPE_SINK);

  sc_head_type_thresholds_default (&t);
  t.sink = 0.6;
  g_assert_cmpint (sc_head_type_classify (&s, NULL, &t), ==, SC_HEAD_TYPE_OTHER);
}

static void
test_precedence_and_ids (void)
{
  unsigned all = 0;
  ScHeadType back;

  for (int k = 0; k < SC_HEAD_TYPE_OTHER; k++)
    all |= BIT (k);
  g_assert_cmpint (sc_head_type_from_flags (all), ==, SC_HEAD_TYPE_INDUCTION);
  g_assert_cmpint (sc_head_type_from_flags (BIT (SC_HEAD_TYPE_LOCAL) | BIT (SC_HEAD_TYPE_SINK)),
                   ==, SC_HEAD_TYPE_SINK);
  g_assert_cmpint (sc_head_type_from_flags (0), ==, SC_HEAD_TYPE_OTHER);
  for (int k = 0; k < SC_HEAD_N_TYPES; k++)
    {
      const char *id = sc_head_type_id ((ScHeadType) k);
      g_assert_nonnull (id);
      g_assert_true (sc_head_type_from_id (id, &back));
      g_assert_cmpint (back, ==, k);
    }
  g_assert_cmpstr (sc_head_type_id (SC_HEAD_TYPE_SINK), ==, "first-token");
  g_assert_null (sc_head_type_id (SC_HEAD_N_TYPES));
  g_assert_false (sc_head_type_from_id ("sink", &back));
  g_assert_false (sc_head_type_from_id (NULL, &back));
  g_assert_false (sc_head_type_larger_is_stronger (SC_HEAD_TYPE_LOCAL));
  g_assert_true (sc_head_type_larger_is_stronger (SC_HEAD_TYPE_SINK));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/head-types/previous", test_previous);
  g_test_add_func ("/head-types/sink", test_sink);
  g_test_add_func ("/head-types/self-and-induction", test_self_and_induction);
  g_test_add_func ("/head-types/uniform-is-broad", test_uniform_is_broad);
  g_test_add_func ("/head-types/other-nan-edges", test_other_nan_and_edges);
  g_test_add_func ("/head-types/precedence-and-ids", test_precedence_and_ids);
  return g_test_run ();
}
