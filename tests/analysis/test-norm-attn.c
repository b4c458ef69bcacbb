/* test-norm-attn.c — norm-based attention's arithmetic (engine/analysis/sc-norm-attn.h) on
 * hand-built values, W_O and weights whose answers are worked out here.
 *
 * 1. Value norms through each head's slice of W_O, under GQA: E = 3, H = 2 query heads
 *    sharing H_kv = 1 KV head (d = 2), n = 2 tokens, v_0 = (1, 2), v_1 = (0, 0) (a token
 *    whose value is zero), W_O (3, 4) =
 *        [1 0 | 0 0]
 *        [0 1 | 0 2]
 *        [0 0 | 3 0]
 *    head 0 (columns 0, 1): f_0(x_0) = (1, 2, 0), ‖‖ = √5; head 1 (columns 2, 3):
 *    f_1(x_0) = (0, 4, 3), ‖‖ = 5; both 0 at token 1. Gram at token 0: [[5, 8], [8, 25]]
 *    (f_0 · f_1 = 2 · 4 = 8); at token 1 all 0. With a KV head each, head 1 reads the second
 *    value block instead: (1, 0) there gives W_O's column 2, (0, 0, 3), norm 3.
 * 2. A head's map is α times the key's norm: with α = [[1, 0], [0.25, 0.75]] and the norms
 *    (√5, 0): [[√5, 0], [√5/4, 0]] — a zero value moves nothing, whatever its weight.
 * 3. The layer's map sums the heads' vectors before the norm: at token 0 with weights a, b
 *    on the two heads, ‖a f_0 + b f_1‖² = 5a² + 16ab + 25b²; with a = b = 1: 46. Orthogonal
 *    heads give √(N_0² + N_1²), parallel ones N_0 + N_1, opposite equal ones 0 (not a NaN
 *    from a rounding below 0).
 * 4. The first token's share: rows 1 .. n − 1 each divided by its sum; row 0 left out; a
 *    zero row skipped; NaN with no row left.
 * 5. Bad input refused: NULL, H not a multiple of H_kv, n < 1.
 * 6. With the residual (Kobayashi 2021): test 1's heads, residual rows x_0 = (0, 0, 1),
 *    x_1 = (1, 0, 0), weights head 0 [[1, 0], [.5, .5]], head 1 [[1, 0], [1, 0]].
 *    R[0][0] = ‖f_0 + f_1 + x_0‖ = ‖(1, 6, 4)‖ = √53 (a G a = 46, 2 a · c = 2 · 3, ‖x‖² = 1);
 *    R[1][0] = ‖.5 f_0 + f_1‖ = √34.25 (no residual off the diagonal); R[1][1] = ‖x_1‖ = 1
 *    (its values are 0); R[0][1] = 0. Row scales s = (2, 1): R[0][0] = ‖(2, 12, 6) + x_0‖ =
 *    √197; out scales (1, 0.5) halve row 1. Channel weights ω = w = (1, 0, 2):
 *    ‖w ∘ (f_0 + f_1 + x_0)‖ = ‖(1, 0, 8)‖ = √65. Mixing ratio of [[5], [1, 3], [2, 2, 4]]:
 *    rows 1, 2 give 1/4 and 1/2: 0.375.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/analysis/sc-norm-attn.h"

static const float WO[12] = { 1, 0, 0, 0, /* row e = 0 */
                              0, 1, 0, 2, /* e = 1 */
                              0, 0, 3, 0 /* e = 2 */ };
static const float V[4] = { 1, 2, 0, 0 }; /* (n = 2, KV = 2) */

static void
test_values (void)
{
  const ScNormDims dm = { .n_heads = 2, .n_kv_heads = 1, .head_dim = 2, .n_embd = 3 };
  double vn[4], g[8];
  ScError err = { 0 };

  g_assert_cmpint (sc_norm_values (V, WO, &dm, 2, vn, g, &err), ==, SC_OK);
  /* vnorm (H, n) */
  g_assert_cmpfloat_with_epsilon (vn[0], sqrt (5.0), 1e-15);
  g_assert_cmpfloat (vn[1], ==, 0.0);
  g_assert_cmpfloat_with_epsilon (vn[2], 5.0, 1e-15);
  g_assert_cmpfloat (vn[3], ==, 0.0);
  /* gram (n, H, H) */
  g_assert_cmpfloat_with_epsilon (g[0], 5.0, 1e-14);
  g_assert_cmpfloat_with_epsilon (g[1], 8.0, 1e-14);
  g_assert_cmpfloat_with_epsilon (g[2], 8.0, 1e-14);
  g_assert_cmpfloat_with_epsilon (g[3], 25.0, 1e-14);
  for (int k = 4; k < 8; k++)
    g_assert_cmpfloat (g[k], ==, 0.0);
  /* without the Gram matrices */
  g_assert_cmpint (sc_norm_values (V, WO, &dm, 2, vn, NULL, &err), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (vn[2], 5.0, 1e-15);

  /* the same heads each with its own KV head: head 1 now reads the second value block */
  {
    const ScNormDims own = { .n_heads = 2, .n_kv_heads = 2, .head_dim = 2, .n_embd = 3 };
    const float v2[4] = { 1, 2, 1, 0 }; /* one token: KV head 0 (1, 2), KV head 1 (1, 0) */
    double vn2[2];
    g_assert_cmpint (sc_norm_values (v2, WO, &own, 1, vn2, NULL, &err), ==, SC_OK);
    g_assert_cmpfloat_with_epsilon (vn2[0], sqrt (5.0), 1e-15);
    /* head 1: W_O's column 2 times 1 = (0, 0, 3) */
    g_assert_cmpfloat_with_epsilon (vn2[1], 3.0, 1e-15);
  }
}

static void
test_head_map (void)
{
  const float alpha[4] = { 1, 0, 0.25f, 0.75f };
  const double vn[2] = { sqrt (5.0), 0.0 };
  float map[4];

  sc_norm_head_map (alpha, vn, 2, 2, map);
  g_assert_cmpfloat_with_epsilon (map[0], sqrt (5.0), 1e-6);
  g_assert_cmpfloat (map[1], ==, 0.0f);
  g_assert_cmpfloat_with_epsilon (map[2], sqrt (5.0) / 4, 1e-6);
  g_assert_cmpfloat (map[3], ==, 0.0f); /* weight 0.75 on a zero value */
}

static void
test_layer_map (void)
{
  /* one query, one key: the Gram of test 1's token 0 */
  const double g[4] = { 5, 8, 8, 25 };
  const float ones[2] = { 1, 1 }; /* (H = 2, 1, 1) */
  const float halves[2] = { 0.5f, 0.25f };
  const double orth[4] = { 4, 0, 0, 9 };     /* ‖f_0‖ = 2, ‖f_1‖ = 3, orthogonal */
  const double par[4] = { 4, 6, 6, 9 };      /* parallel: f_0 · f_1 = 2 · 3 */
  const double anti[4] = { 4, -4, -4, 4 };   /* f_1 = −f_0 */
  float out;
  ScError err = { 0 };

  g_assert_cmpint (sc_norm_layer_map (ones, g, 2, 1, 1, &out, &err), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (out, sqrt (46.0), 1e-5);
  /* 5/4 + 16/8 + 25/16 = 4.8125 */
  g_assert_cmpint (sc_norm_layer_map (halves, g, 2, 1, 1, &out, &err), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (out, sqrt (4.8125), 1e-6);
  g_assert_cmpint (sc_norm_layer_map (ones, orth, 2, 1, 1, &out, &err), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (out, sqrt (13.0), 1e-6);
  g_assert_cmpint (sc_norm_layer_map (ones, par, 2, 1, 1, &out, &err), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (out, 5.0, 1e-6);
  g_assert_cmpint (sc_norm_layer_map (ones, anti, 2, 1, 1, &out, &err), ==, SC_OK);
  g_assert_cmpfloat (out, ==, 0.0f);
  {
    /* rounding that takes a G a a hair below 0 gives 0, not NaN */
    const double below[4] = { 1, -1 - 1e-15, -1 - 1e-15, 1 };
    g_assert_cmpint (sc_norm_layer_map (ones, below, 2, 1, 1, &out, &err), ==, SC_OK);
    g_assert_cmpfloat (out, ==, 0.0f);
  }
  {
    /* two queries over two keys, causal: the key past the query gets exactly 0; the
     * Gram of test 1 (token 1's all zero) */
    const double g2[8] = { 5, 8, 8, 25, 0, 0, 0, 0 };
    const float alpha[8] = { 1, 0, 0.5f, 0.5f, /* head 0 */ 1, 0, 1, 0 /* head 1 */ };
    float map[4];
    g_assert_cmpint (sc_norm_layer_map (alpha, g2, 2, 2, 2, map, &err), ==, SC_OK);
    g_assert_cmpfloat_with_epsilon (map[0], sqrt (46.0), 1e-5);
    g_assert_cmpfloat (map[1], ==, 0.0f);
    /* row 1, key 0: a = (0.5, 1): 5/4 + 8 + 25 = 34.25 */
    g_assert_cmpfloat_with_epsilon (map[2], sqrt (34.25), 1e-5);
    g_assert_cmpfloat (map[3], ==, 0.0f); /* zero values */
  }
}

static void
test_first_share (void)
{
  /* rows: 0 (left out), 1 = (1, 3) → 1/4, 2 = (2, 1, 1) → 1/2: mean 3/8 */
  const float m[9] = { 7, 0, 0, 1, 3, 0, 2, 1, 1 };
  const float zero_row[9] = { 7, 0, 0, 0, 0, 0, 2, 1, 1 };
  const float none[9] = { 0 };

  g_assert_cmpfloat_with_epsilon (sc_norm_first_share (m, 3), 0.375, 1e-15);
  g_assert_cmpfloat_with_epsilon (sc_norm_first_share (zero_row, 3), 0.5, 1e-15);
  g_assert_true (isnan (sc_norm_first_share (none, 3)));
  g_assert_true (isnan (sc_norm_first_share (m, 1)));
}

static void
test_bad_input (void)
{
  const ScNormDims bad = { .n_heads = 3, .n_kv_heads = 2, .head_dim = 2, .n_embd = 3 };
  const ScNormDims dm = { .n_heads = 2, .n_kv_heads = 1, .head_dim = 2, .n_embd = 3 };
  const float a = 1;
  double vn[4], g = 1;
  float out;
  ScError err = { 0 };

  g_assert_cmpint (sc_norm_values (V, WO, &bad, 2, vn, NULL, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "KV heads 2"));
  g_assert_cmpint (sc_norm_values (V, WO, &dm, 0, vn, NULL, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_norm_values (NULL, WO, &dm, 2, vn, NULL, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_norm_layer_map (&a, &g, 0, 1, 1, &out, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_norm_layer_map (&a, NULL, 1, 1, 1, &out, &err), ==, SC_ERR_INVALID_ARG);
}

static void
test_residual (void)
{
  const ScNormDims dm = { .n_heads = 2, .n_kv_heads = 1, .head_dim = 2, .n_embd = 3 };
  const float x[6] = { 0, 0, 1, 1, 0, 0 };
  const float alpha[8] = { 1, 0, 0.5f, 0.5f, /* head 0 */ 1, 0, 1, 0 /* head 1 */ };
  const double s[2] = { 2, 1 }, o[2] = { 1, 0.5 }, wt[3] = { 1, 0, 2 };
  double g[8], c[4], xx[2];
  float R[4];
  ScError err = { 0 };

  g_assert_cmpint (sc_norm_residual_terms (V, WO, &dm, 2, x, NULL, NULL, g, c, xx, &err), ==,
                   SC_OK);
  g_assert_cmpfloat_with_epsilon (g[1], 8.0, 1e-14);
  g_assert_cmpfloat_with_epsilon (c[0], 0.0, 1e-15); /* f_0(x_0) · x_0 */
  g_assert_cmpfloat_with_epsilon (c[1], 3.0, 1e-15); /* f_1(x_0) · x_0 */
  g_assert_cmpfloat (xx[0], ==, 1.0);
  g_assert_cmpint (sc_norm_residual_map (alpha, g, c, xx, 2, 2, NULL, NULL, R, &err), ==,
                   SC_OK);
  g_assert_cmpfloat_with_epsilon (R[0], sqrt (53.0), 1e-5);
  g_assert_cmpfloat (R[1], ==, 0.0f);
  g_assert_cmpfloat_with_epsilon (R[2], sqrt (34.25), 1e-5);
  g_assert_cmpfloat_with_epsilon (R[3], 1.0, 1e-6);
  g_assert_cmpint (sc_norm_residual_map (alpha, g, c, xx, 2, 2, s, o, R, &err), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (R[0], sqrt (197.0), 1e-5);
  g_assert_cmpfloat_with_epsilon (R[2], 0.5 * sqrt (34.25), 1e-5);
  g_assert_cmpfloat_with_epsilon (R[3], 0.5, 1e-6);
  g_assert_cmpint (sc_norm_residual_terms (V, WO, &dm, 2, x, wt, wt, g, c, xx, &err), ==,
                   SC_OK);
  g_assert_cmpint (sc_norm_residual_map (alpha, g, c, xx, 2, 2, NULL, NULL, R, &err), ==,
                   SC_OK);
  g_assert_cmpfloat_with_epsilon (R[0], sqrt (65.0), 1e-5);
  /* refused: no residual */
  g_assert_cmpint (sc_norm_residual_terms (V, WO, &dm, 2, NULL, NULL, NULL, g, c, xx, &err),
                   ==, SC_ERR_INVALID_ARG);
  {
    const float m[9] = { 5, 0, 0, 1, 3, 0, 2, 2, 4 };
    g_assert_cmpfloat_with_epsilon (sc_norm_mix_ratio (m, 3), 0.375, 1e-15);
    g_assert_true (isnan (sc_norm_mix_ratio (m, 1)));
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/norm-attn/values", test_values);
  g_test_add_func ("/norm-attn/head-map", test_head_map);
  g_test_add_func ("/norm-attn/layer-map", test_layer_map);
  g_test_add_func ("/norm-attn/first-share", test_first_share);
  g_test_add_func ("/norm-attn/bad-input", test_bad_input);
  g_test_add_func ("/norm-attn/residual", test_residual);
  return g_test_run ();
}
