/* test-qk.c — sc_qk_scores (engine/analysis/sc-qk.h) on hand-worked queries.
 *
 * 1. q = (1, 0), keys (1, 0), (0, 1), (−1, 0), scale 1: dots 1, 0, −1; weights
 *    e / (e + 1 + 1/e) = 0.665241, 1 / (e + 1 + 1/e) = 0.244728, 0.090031.
 * 2. The same with scale 1/√2 (d_k = 2): scaled 0.707107, 0, −0.707107; weights
 *    0.575975, 0.283995, 0.140029 (e^{±1/√2} = 2.028115, 0.493069; sum 3.521184).
 * 3. Strided keys (a (n, 2 heads, d) block, the second head's keys) give the same as
 *    packed keys; one key alone has weight 1; huge scores do not overflow (max first).
 */
#include <glib.h>
#include <math.h>

#include "engine/analysis/sc-qk.h"

static void
test_hand_worked (void)
{
  const float q[2] = { 1, 0 };
  const float k[6] = { 1, 0, 0, 1, -1, 0 };
  ScQkScore s[3];

  sc_qk_scores (q, k, 2, 2, 3, 1.0, s);
  g_assert_cmpfloat_with_epsilon (s[0].dot, 1.0, 1e-15);
  g_assert_cmpfloat_with_epsilon (s[1].dot, 0.0, 1e-15);
  g_assert_cmpfloat_with_epsilon (s[2].dot, -1.0, 1e-15);
  g_assert_cmpfloat_with_epsilon (s[0].weight, 0.665241, 1e-6);
  g_assert_cmpfloat_with_epsilon (s[1].weight, 0.244728, 1e-6);
  g_assert_cmpfloat_with_epsilon (s[2].weight, 0.090031, 1e-6);

  sc_qk_scores (q, k, 2, 2, 3, 1 / sqrt (2.0), s);
  g_assert_cmpfloat_with_epsilon (s[0].scaled, 0.707107, 1e-6);
  g_assert_cmpfloat_with_epsilon (s[0].weight, 0.575975, 1e-6);
  g_assert_cmpfloat_with_epsilon (s[1].weight, 0.283995, 1e-6);
  g_assert_cmpfloat_with_epsilon (s[2].weight, 0.140029, 1e-6);
  g_assert_cmpfloat_with_epsilon (s[0].weight + s[1].weight + s[2].weight, 1.0, 1e-15);
}

static void
test_strided_single_huge (void)
{
  /* keys of head 1 of 2 in an (n = 3, 2, d = 2) block */
  const float k[12] = { 9, 9, 1, 0, 9, 9, 0, 1, 9, 9, -1, 0 };
  const float q[2] = { 1, 0 };
  const float big[2] = { 1e30f, 0 };
  ScQkScore s[3], one;

  sc_qk_scores (q, k + 2, 4, 2, 3, 1.0, s);
  g_assert_cmpfloat_with_epsilon (s[0].weight, 0.665241, 1e-6);
  g_assert_cmpfloat_with_epsilon (s[2].weight, 0.090031, 1e-6);
  sc_qk_scores (q, k + 2, 4, 2, 1, 1.0, &one);
  g_assert_cmpfloat (one.weight, ==, 1.0);
  sc_qk_scores (big, k + 2, 4, 2, 3, 1.0, s);
  g_assert_true (isfinite (s[0].weight) && isfinite (s[1].weight));
  g_assert_cmpfloat (s[0].weight, ==, 1.0);
  g_assert_cmpfloat (s[1].weight, ==, 0.0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/qk/hand-worked", test_hand_worked);
  g_test_add_func ("/qk/strided-single-huge", test_strided_single_huge);
  return g_test_run ();
}
