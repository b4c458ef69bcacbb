/* test-effect.c — engine/analysis/sc-effect on logit rows whose softmax, total variation,
 * Jensen–Shannon divergence and losses are worked out by hand in the comments (nats). Logits
 * such as ln 2 are not exact in float (relative error ≤ 2^-24), hence TOL; rows made of
 * small integers are exact. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/analysis/sc-effect.h"

#define TOL 1e-6

/* Identical rows: p = q, so Δ log p = 0, TV = 0, JSD = 0, exactly (the JSD loop skips equal
 * logs and each ln p is computed by the same operations). */
static void
test_identical (void)
{
  const float l[5] = { 0.5f, -1, 3, 2, 0 };
  ScEffect e;

  g_assert_cmpint (sc_effect_next_token (l, l, 5, 3, &e, NULL), ==, SC_OK);
  g_assert_cmpfloat (e.delta_logp, ==, 0.0);
  g_assert_cmpfloat (e.tv, ==, 0.0);
  g_assert_cmpfloat (e.jsd, ==, 0.0);
  g_assert_cmpint (e.top1_clean, ==, 2);
  g_assert_cmpint (e.top1_ablated, ==, 2);
}

/* Uniform p = (¼, ¼, ¼, ¼) (logits all 0) against q one-hot on token 0 (logits (0, −200,
 * −200, −200): the other tokens have e^−200 ≈ 1e-87, far below double's resolution of 1).
 *   TV  = ½ (|¼ − 1| + 3 · ¼) = ¾
 *   m   = (5/8, 1/8, 1/8, 1/8)
 *   KL (p ‖ m) = ¼ ln (2/5) + ¾ ln 2,   KL (q ‖ m) = ln (8/5)
 *   JSD = ½ (4 ln 2 − (5/4) ln 5) = 2 ln 2 − (5/8) ln 5 ≈ 0.380396
 *   Δ log p(0) = ln 1 − ln ¼ = ln 4;   Δ log p(1) = −200 − ln ¼ = ln 4 − 200. */
static void
test_uniform_onehot (void)
{
  const float p[4] = { 0, 0, 0, 0 }, q[4] = { 0, -200, -200, -200 };
  const double jsd = 2 * log (2.0) - 0.625 * log (5.0);
  ScEffect e;

  g_assert_cmpfloat_with_epsilon (jsd, 0.380396, 1e-6);
  g_assert_cmpint (sc_effect_next_token (p, q, 4, 0, &e, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (e.tv, 0.75, 1e-12);
  g_assert_cmpfloat_with_epsilon (e.jsd, jsd, 1e-12);
  g_assert_cmpfloat_with_epsilon (e.delta_logp, log (4.0), 1e-12);
  g_assert_cmpfloat_with_epsilon (e.logp_clean, -log (4.0), 1e-12);
  g_assert_cmpfloat_with_epsilon (e.logp_ablated, 0.0, 1e-12);
  g_assert_cmpint (e.top1_clean, ==, 0);  /* a four-way tie: the lowest id */
  g_assert_cmpint (e.top1_ablated, ==, 0);

  g_assert_cmpint (sc_effect_next_token (p, q, 4, 1, &e, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (e.delta_logp, log (4.0) - 200.0, 1e-9);
  /* Symmetric measures: swapping the rows changes neither TV nor JSD; Δ log p flips. */
  g_assert_cmpint (sc_effect_next_token (q, p, 4, 0, &e, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (e.tv, 0.75, 1e-12);
  g_assert_cmpfloat_with_epsilon (e.jsd, jsd, 1e-12);
  g_assert_cmpfloat_with_epsilon (e.delta_logp, -log (4.0), 1e-12);
}

/* A three-token vocabulary. Clean logits (0, ln 2, ln 3) → p = (1, 2, 3) / 6; ablated
 * (ln 3, ln 2, 0) → q = (3, 2, 1) / 6.
 *   target 2:  Δ log p = ln (1/6) − ln (3/6) = −ln 3
 *   TV  = ½ (2/6 + 0 + 2/6) = 1/3
 *   m   = (⅓, ⅓, ⅓);  KL (p ‖ m) = (1/6) ln ½ + (2/6) ln 1 + (3/6) ln (3/2) = ½ ln 3 − ⅔ ln 2,
 *         KL (q ‖ m) the same by symmetry
 *   JSD = ½ ln 3 − ⅔ ln 2 ≈ 0.087208
 *   top-1: clean 2, ablated 0 (a flip). */
static void
test_three_tokens (void)
{
  const float p[3] = { 0, (float) log (2.0), (float) log (3.0) };
  const float q[3] = { (float) log (3.0), (float) log (2.0), 0 };
  const double jsd = 0.5 * log (3.0) - 2.0 / 3.0 * log (2.0);
  ScEffect e;
  double lp;

  g_assert_cmpfloat_with_epsilon (jsd, 0.087208, 1e-6);
  g_assert_cmpint (sc_log_softmax_at (p, 3, 1, &lp, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (lp, log (2.0 / 6.0), TOL);
  g_assert_cmpint (sc_effect_next_token (p, q, 3, 2, &e, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (e.delta_logp, -log (3.0), TOL);
  g_assert_cmpfloat_with_epsilon (e.tv, 1.0 / 3.0, TOL);
  g_assert_cmpfloat_with_epsilon (e.jsd, jsd, TOL);
  g_assert_cmpint (e.top1_clean, ==, 2);
  g_assert_cmpint (e.top1_ablated, ==, 0);
  /* Target 1 has p = q = 2/6: no change. */
  g_assert_cmpint (sc_effect_next_token (p, q, 3, 1, &e, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (e.delta_logp, 0.0, TOL);
}

/* Softmax is shift-invariant, and the max subtraction keeps e^1000 from overflowing:
 * (1000, 1001, 1002) (exact in float) gives the log-probabilities of (0, 1, 2), namely
 * k − ln (1 + e + e²) for k = 0, 1, 2 (ln (1 + e + e²) ≈ 2.407606). */
static void
test_shift (void)
{
  const float a[3] = { 0, 1, 2 }, b[3] = { 1000, 1001, 1002 };
  const double lnz = log (1 + M_E + M_E * M_E);
  ScEffect e;

  g_assert_cmpfloat_with_epsilon (lnz, 2.407606, 1e-6);
  for (int k = 0; k < 3; k++)
    {
      double la, lb;
      g_assert_cmpint (sc_log_softmax_at (a, 3, k, &la, NULL), ==, SC_OK);
      g_assert_cmpint (sc_log_softmax_at (b, 3, k, &lb, NULL), ==, SC_OK);
      g_assert_cmpfloat_with_epsilon (la, k - lnz, 1e-12);
      g_assert_cmpfloat_with_epsilon (lb, k - lnz, 1e-12);
    }
  g_assert_cmpint (sc_effect_next_token (a, b, 3, 0, &e, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (e.delta_logp, 0.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (e.tv, 0.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (e.jsd, 0.0, 1e-12);
}

/* Ties go to the lowest id; NaN and empty rows have no top-1. */
static void
test_top1 (void)
{
  const float a[4] = { 1, 3, 3, 2 }, b[3] = { -5, -5, -5 }, c[3] = { 0, NAN, 1 };

  g_assert_cmpint (sc_logits_top1 (a, 4), ==, 1);
  g_assert_cmpint (sc_logits_top1 (b, 3), ==, 0);
  g_assert_cmpint (sc_logits_top1 (a + 2, 2), ==, 0);
  g_assert_cmpint (sc_logits_top1 (c, 3), ==, -1);
  g_assert_cmpint (sc_logits_top1 (a, 0), ==, -1);
  g_assert_cmpint (sc_logits_top1 (NULL, 4), ==, -1);
}

/* A sentence of ids (0, 2, 1) over a 3-token vocabulary; row 2 predicts nothing.
 *   clean:   row 0 (0, ln 2, ln 3) → id 2 has p = ½: loss ln 2;  row 1 (0, 0, 0) → id 1: ln 3
 *   ablated: row 0 (ln 3, ln 2, 0) → id 2 has p = 1/6: loss ln 6;  row 1 uniform: ln 3
 *   Δ mean loss = (ln 6 + ln 3) / 2 − (ln 2 + ln 3) / 2 = ½ ln 3 ≈ 0.549306. */
static void
test_losses (void)
{
  const float l2 = (float) log (2.0), l3 = (float) log (3.0);
  const float clean[9] = { 0, l2, l3, 0, 0, 0, 7, 7, 7 };
  const float ablated[9] = { l3, l2, 0, 0, 0, 0, -7, 8, 9 };
  const int32_t ids[3] = { 0, 2, 1 };
  double loss[2], d;

  g_assert_cmpint (sc_token_losses (clean, ids, 3, 3, loss, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (loss[0], log (2.0), TOL);
  g_assert_cmpfloat_with_epsilon (loss[1], log (3.0), 1e-12);
  g_assert_cmpint (sc_delta_loss_logits (clean, ablated, ids, 3, 3, &d, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (d, 0.5 * log (3.0), TOL);

  const double lc[2] = { 1.0, 2.0 }, la[2] = { 1.5, 3.5 };  /* (5 − 3) / 2 = 1 */
  g_assert_cmpint (sc_delta_mean_loss (lc, la, 2, &d, NULL), ==, SC_OK);
  g_assert_cmpfloat (d, ==, 1.0);
}

/* Out-of-contract input is refused with a message naming the place, never a crash. */
static void
test_refused (void)
{
  const float ok[3] = { 0, 1, 2 }, bad[3] = { 0, NAN, 2 }, inf[3] = { 0, INFINITY, 2 };
  const int32_t ids[2] = { 0, 3 };
  const double nan_loss[2] = { 1.0, NAN }, loss[2] = { 1.0, 2.0 };
  ScEffect e;
  ScError err = { 0 };
  double d, lossbuf[2];

  g_assert_cmpint (sc_effect_next_token (ok, bad, 3, 0, &e, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "ablated logits row 0, entry 1"));
  g_assert_cmpint (sc_effect_next_token (inf, ok, 3, 0, &e, NULL), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_effect_next_token (ok, ok, 3, 3, &e, NULL), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_effect_next_token (ok, ok, 3, -1, &e, NULL), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_effect_next_token (NULL, ok, 3, 0, &e, NULL), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_log_softmax_at (ok, 0, 0, &d, NULL), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_token_losses (ok, ids, 2, 3, lossbuf, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "position 1"));
  g_assert_cmpint (sc_token_losses (ok, ids, 1, 3, lossbuf, NULL), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_delta_mean_loss (loss, nan_loss, 2, &d, NULL), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_delta_mean_loss (loss, loss, 0, &d, NULL), ==, SC_ERR_INVALID_ARG);
  const int32_t ids_ok[2] = { 0, 1 };
  g_assert_cmpint (sc_delta_loss_logits (ok, bad, ids_ok, 2, 3, &d, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "ablated: "));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/effect/identical", test_identical);
  g_test_add_func ("/effect/uniform-onehot", test_uniform_onehot);
  g_test_add_func ("/effect/three-tokens", test_three_tokens);
  g_test_add_func ("/effect/shift", test_shift);
  g_test_add_func ("/effect/top1", test_top1);
  g_test_add_func ("/effect/losses", test_losses);
  g_test_add_func ("/effect/refused", test_refused);
  return g_test_run ();
}
