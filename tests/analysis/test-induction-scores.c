/* test-induction-scores.c — engine/analysis/sc-induction on hand-built matrices and
 * weights whose answers are worked out in the comments: a pure induction stripe, a pure
 * previous-token diagonal, uniform rows; OV circuits equal to +I, -I, a rotation and a
 * diagonal with mixed signs. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/analysis/sc-induction.h"
#include "engine/backend/sc-blas.h"

#define TOL 1e-6

/* BOS + T tokens twice: n = 1 + 2T. */
enum { T = 5, N = 1 + 2 * T };

/* Every row p >= T + 1 (the second copy) puts all its weight on p - T + 1, earlier rows on
 * themselves: prefix matching 1, duplicate 0, previous 0 (p - T + 1 != p - 1 as T > 2). */
static void
test_stripe (void)
{
  float a[N * N] = { 0 };
  ScInductionScores s;
  ScError err = { 0 };
  int p;

  for (p = 0; p < N; p++)
    a[p * N + (p >= 1 + T ? p - T + 1 : p)] = 1.0f;
  g_assert_cmpint (sc_induction_head_scores (a, N, 1, T, &s, &err), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (s.prefix_matching, 1.0, TOL);
  g_assert_cmpfloat_with_epsilon (s.duplicate_token, 0.0, TOL);
  g_assert_cmpfloat_with_epsilon (s.previous_token, 0.0, TOL);

  /* The duplicate stripe (p - T): 0, 1, 0. */
  memset (a, 0, sizeof a);
  for (p = 0; p < N; p++)
    a[p * N + (p >= 1 + T ? p - T : p)] = 1.0f;
  g_assert_cmpint (sc_induction_head_scores (a, N, 1, T, &s, &err), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (s.prefix_matching, 0.0, TOL);
  g_assert_cmpfloat_with_epsilon (s.duplicate_token, 1.0, TOL);
}

/* Row p on p - 1 (row 0 on itself): previous 1, the others 0. */
static void
test_previous (void)
{
  float a[N * N] = { 0 };
  ScInductionScores s;
  ScError err = { 0 };
  int p;

  a[0] = 1.0f;
  for (p = 1; p < N; p++)
    a[p * N + p - 1] = 1.0f;
  g_assert_cmpint (sc_induction_head_scores (a, N, 1, T, &s, &err), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (s.previous_token, 1.0, TOL);
  g_assert_cmpfloat_with_epsilon (s.prefix_matching, 0.0, TOL);
  g_assert_cmpfloat_with_epsilon (s.duplicate_token, 0.0, TOL);
}

/* Causal uniform: row p gives 1/(p+1) to each key, so all three scores are
 * mean over p = T+1 .. 2T of 1/(p+1) = (1/7 + 1/8 + 1/9 + 1/10 + 1/11) / 5 for T = 5. */
static void
test_uniform (void)
{
  float a[N * N] = { 0 };
  const double want = (1.0 / 7 + 1.0 / 8 + 1.0 / 9 + 1.0 / 10 + 1.0 / 11) / 5;
  ScInductionScores s;
  ScError err = { 0 };
  int p, j;

  for (p = 0; p < N; p++)
    for (j = 0; j <= p; j++)
      a[p * N + j] = 1.0f / (float) (p + 1);
  g_assert_cmpint (sc_induction_head_scores (a, N, 1, T, &s, &err), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (s.prefix_matching, want, TOL);
  g_assert_cmpfloat_with_epsilon (s.duplicate_token, want, TOL);
  g_assert_cmpfloat_with_epsilon (s.previous_token, want, TOL);

  /* Shapes that are not a prefix plus two copies, and T < 2, are refused. */
  g_assert_cmpint (sc_induction_head_scores (a, N, 1, T + 1, &s, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_induction_head_scores (a, 2, 0, 1, &s, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "T >= 2"));
}

/* OV circuits. n_vocab = n_embd = head_dim = 3, W_E = W_U = I, norms NULL (ones) or
 * explicit, so BA = W_V W_O and its eigenvalues are chosen directly. */
enum { D = 3 };

static void
ov_score (const float *wv, const float *wo, const float *g_attn, const float *g_out,
          ScOvCopying *out)
{
  static const float eye[D * D] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };
  float gram[D * D];
  ScError err = { 0 };

  g_assert_cmpint (sc_blas_init (&err), ==, SC_OK);
  g_assert_cmpint (sc_ov_gram (eye, eye, g_out, D, D, gram, &err), ==, SC_OK);
  g_assert_cmpint (sc_ov_copying_head (gram, D, wv, g_attn, wo, D, D, out, &err), ==, SC_OK);
}

static void
test_ov (void)
{
  static const float eye[D * D] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 };
  static const float neg[D * D] = { -1, 0, 0, 0, -1, 0, 0, 0, -1 };
  /* A 90° rotation in the (0, 1) plane (eigenvalues ±i) and 0 on axis 2:
   * sum Re λ = 0, sum |λ| = 2 -> copying 0, positive share 0. */
  static const float rot[D * D] = { 0, -1, 0, 1, 0, 0, 0, 0, 0 };
  /* diag (3, -1, 0): (3 - 1) / 4 = 0.5, positive share 3/4. */
  static const float mixed[D * D] = { 3, 0, 0, 0, -1, 0, 0, 0, 0 };
  /* Norm weights folded in: g_attn = (2, 1, 1), g_out = (1, -1, 1) on W_V = W_O = I give
   * BA = diag (g_attn) diag (g_out) = diag (2, -1, 1): (2 - 1 + 1) / 4 = 0.5, share 3/4. */
  static const float g_attn[D] = { 2, 1, 1 }, g_out[D] = { 1, -1, 1 };
  ScOvCopying s;

  ov_score (eye, eye, NULL, NULL, &s);
  g_assert_cmpfloat_with_epsilon (s.copying, 1.0, TOL);
  g_assert_cmpfloat_with_epsilon (s.positive_share, 1.0, TOL);
  ov_score (neg, eye, NULL, NULL, &s);
  g_assert_cmpfloat_with_epsilon (s.copying, -1.0, TOL);
  g_assert_cmpfloat_with_epsilon (s.positive_share, 0.0, TOL);
  ov_score (rot, eye, NULL, NULL, &s);
  g_assert_cmpfloat_with_epsilon (s.copying, 0.0, TOL);
  g_assert_cmpfloat_with_epsilon (s.positive_share, 0.0, TOL);
  ov_score (eye, mixed, NULL, NULL, &s);
  g_assert_cmpfloat_with_epsilon (s.copying, 0.5, TOL);
  g_assert_cmpfloat_with_epsilon (s.positive_share, 0.75, TOL);
  ov_score (eye, eye, g_attn, g_out, &s);
  g_assert_cmpfloat_with_epsilon (s.copying, 0.5, TOL);
  g_assert_cmpfloat_with_epsilon (s.positive_share, 0.75, TOL);
}

/* A vocabulary larger than the head: n_vocab 4, n_embd 2, head_dim 1, W_E = W_U with rows
 * e_0, e_1, e_0, -e_1 (so W_E^T W_U = diag (2, 2)); W_V = (1, 0), W_O = (1, 0)^T: BA = 2,
 * one positive eigenvalue -> 1; W_O = (-1, 0)^T -> -1. The full 4 x 4 circuit
 * W_U W_O W_V W_E^T has the same nonzero eigenvalue (2), which is the point of BA. */
static void
test_ov_rectangular (void)
{
  static const float we[8] = { 1, 0, 0, 1, 1, 0, 0, -1 };
  static const float wv[2] = { 1, 0 }, wo_pos[2] = { 1, 0 }, wo_neg[2] = { -1, 0 };
  float gram[4];
  ScOvCopying s;
  ScError err = { 0 };

  g_assert_cmpint (sc_blas_init (&err), ==, SC_OK);
  g_assert_cmpint (sc_ov_gram (we, we, NULL, 4, 2, gram, &err), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (gram[0], 2.0, TOL);
  g_assert_cmpfloat_with_epsilon (gram[1], 0.0, TOL);
  g_assert_cmpfloat_with_epsilon (gram[3], 2.0, TOL);
  /* W_O is (n_embd 2, head_dim 1) with rows 1 apart */
  g_assert_cmpint (sc_ov_copying_head (gram, 2, wv, NULL, wo_pos, 1, 1, &s, &err), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (s.copying, 1.0, TOL);
  g_assert_cmpint (sc_ov_copying_head (gram, 2, wv, NULL, wo_neg, 1, 1, &s, &err), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (s.copying, -1.0, TOL);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/induction/stripe", test_stripe);
  g_test_add_func ("/induction/previous", test_previous);
  g_test_add_func ("/induction/uniform", test_uniform);
  g_test_add_func ("/induction/ov", test_ov);
  g_test_add_func ("/induction/ov-rectangular", test_ov_rectangular);
  return g_test_run ();
}
