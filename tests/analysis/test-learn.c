/* test-learn.c — engine/analysis/sc-learn: the seed articles' hand-worked numbers as the
 * expected values of the Learn page's arithmetic. Each number below is quoted from the seed
 * (/work/shared/seeds/000_*.txt "一个手算例子", 004_*.txt "手算一遍", "为什么要除以 √d_k",
 * "KV cache 的显存账", "FlashAttention") or worked by hand in the comment beside it.
 *
 * The articles print 3 or 4 decimals; the tests compare at half a unit of the last printed
 * decimal (ARTICLE3, ARTICLE4), which is what "reproduces the article" means. Counts and
 * byte sizes are exact integers and are compared exactly. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/analysis/sc-learn.h"

#define ARTICLE3 5e-4
#define ARTICLE4 5e-5

static void
assert_row (const double *got, const double *want, int n, double tol)
{
  for (int j = 0; j < n; j++)
    g_assert_cmpfloat_with_epsilon (got[j], want[j], tol);
}

/* Seed 000: q_它 = [1,1,0,0]; keys 猫 [2,2,0,0], 球 [1,0,1,0], 它 [0,0,0,2]; scores 4, 1, 0;
 * ÷ √4 = 2.0, 0.5, 0.0; exp 7.389, 1.649, 1.000 (sum 10.038); weights 0.736, 0.164, 0.100;
 * one-hot V: the output is the weights. Unscaled: softmax (4, 1, 0) = 0.936, 0.047, 0.017. */
static void
test_example_000 (void)
{
  ScLearnExample ex;
  ScLearnAttention a;
  const double raw[3] = { 4, 1, 0 }, scaled[3] = { 2.0, 0.5, 0.0 };
  const double w[3] = { 0.736, 0.164, 0.100 }, w_unscaled[3] = { 0.936, 0.047, 0.017 };
  const double exps[3] = { 7.389, 1.649, 1.000 };

  g_assert_cmpint (sc_learn_example ("000", &ex, NULL), ==, SC_OK);
  g_assert_cmpint (ex.m, ==, 1);
  g_assert_cmpint (ex.n, ==, 3);
  g_assert_cmpint (ex.d, ==, 4);
  g_assert_cmpstr (ex.key_labels[0], ==, "猫");
  g_assert_cmpint (sc_learn_attention (ex.q, ex.k, ex.v, ex.m, ex.n, ex.d, ex.dv, true, 1.0,
                                       &a, NULL), ==, SC_OK);
  g_assert_cmpfloat (a.divisor, ==, 2.0);
  for (int j = 0; j < 3; j++)
    {
      g_assert_cmpfloat (a.raw[j], ==, raw[j]);
      g_assert_cmpfloat (a.scaled[j], ==, scaled[j]);
      /* exps are max-subtracted: × e^max gives the article's unshifted exponentials. */
      g_assert_cmpfloat_with_epsilon (a.exps[j] * exp (a.row_max[0]), exps[j], ARTICLE3);
    }
  g_assert_cmpfloat_with_epsilon (a.exp_sum[0] * exp (a.row_max[0]), 10.038, ARTICLE3);
  assert_row (a.weights, w, 3, ARTICLE3);
  assert_row (a.out, w, 3, ARTICLE3); /* one-hot values: output = weights */
  /* PyTorch's print in the article: tensor([[0.7361, 0.1643, 0.0996]]). */
  g_assert_cmpfloat_with_epsilon (a.weights[0], 0.7361, ARTICLE4);
  g_assert_cmpfloat_with_epsilon (a.weights[1], 0.1643, ARTICLE4);
  g_assert_cmpfloat_with_epsilon (a.weights[2], 0.0996, ARTICLE4);
  g_assert_cmpint (a.top[0], ==, 0);
  g_assert_cmpfloat (a.gap[0], ==, 1.5);
  /* n = 3: ln (0.99 · 2 / 0.01) = ln 198 = 5.28827 in the softmax's input, × 2 in raw units. */
  g_assert_cmpfloat_with_epsilon (a.gap_needed, log (198.0), 1e-12);
  g_assert_cmpfloat_with_epsilon (a.gap_needed_raw, 2 * log (198.0), 1e-12);

  g_assert_cmpint (sc_learn_attention (ex.q, ex.k, ex.v, ex.m, ex.n, ex.d, ex.dv, false, 1.0,
                                       &a, NULL), ==, SC_OK);
  g_assert_cmpfloat (a.divisor, ==, 1.0);
  assert_row (a.weights, w_unscaled, 3, ARTICLE3);
}

/* Seed 004: row 3 scaled (0.7071, 0.7071, 1.4142), exp (2.0281, 2.0281, 4.1133), sum 8.1695,
 * weights (0.2483, 0.2483, 0.5035); z1 = (1.2033, 1.1978), z2 = (1.0000, 1.6044),
 * z3 = (1.2552, 1.5035); "q_3 · k_3 = 2 比另两个点积大 1". */
static void
test_example_004 (void)
{
  ScLearnExample ex;
  ScLearnAttention a;
  const double raw[9] = { 1, 0, 1, 0, 1, 1, 1, 1, 2 };
  const double scaled3[3] = { 0.7071, 0.7071, 1.4142 }, exps3[3] = { 2.0281, 2.0281, 4.1133 };
  const double w3[3] = { 0.2483, 0.2483, 0.5035 };
  const double z[6] = { 1.2033, 1.1978, 1.0000, 1.6044, 1.2552, 1.5035 };

  g_assert_cmpint (sc_learn_example ("004", &ex, NULL), ==, SC_OK);
  g_assert_cmpint (sc_learn_attention (ex.q, ex.k, ex.v, ex.m, ex.n, ex.d, ex.dv, true, 1.0,
                                       &a, NULL), ==, SC_OK);
  for (int i = 0; i < 9; i++)
    g_assert_cmpfloat (a.raw[i], ==, raw[i]);
  assert_row (a.scaled + 6, scaled3, 3, ARTICLE4);
  for (int j = 0; j < 3; j++)
    g_assert_cmpfloat_with_epsilon (a.exps[6 + j] * exp (a.row_max[2]), exps3[j], ARTICLE4);
  g_assert_cmpfloat_with_epsilon (a.exp_sum[2] * exp (a.row_max[2]), 8.1695, ARTICLE4);
  assert_row (a.weights + 6, w3, 3, ARTICLE4);
  assert_row (a.out, z, 6, ARTICLE4);
  /* Rows sum to 1; columns do not (column 3 gets 0.4011 + 0.4011 + 0.5035). */
  for (int i = 0; i < 3; i++)
    g_assert_cmpfloat_with_epsilon (a.weights[i * 3] + a.weights[i * 3 + 1]
                                    + a.weights[i * 3 + 2], 1.0, 1e-15);
  g_assert_cmpfloat (fabs (a.weights[2] + a.weights[5] + a.weights[8] - 1.0), >, 0.3);
  /* Row 3's gap is 1 / √2 in the softmax's input; 0.99 needs ln 198 = 5.288, i.e. a raw gap
   * of 5.288 · √2 = 7.479 ("分数差要拉到 10 以上" is the same order, for a gap to all). */
  g_assert_cmpint (a.top[2], ==, 2);
  g_assert_cmpfloat_with_epsilon (a.gap[2], 1 / sqrt (2.0), 1e-12);
  g_assert_cmpfloat_with_epsilon (a.gap_needed_raw, log (198.0) * sqrt (2.0), 1e-12);

  /* Temperature: T = 2 halves every logit; T → large flattens toward 1/3 each. */
  g_assert_cmpint (sc_learn_attention (ex.q, ex.k, ex.v, 3, 3, 2, 2, true, 2.0, &a, NULL), ==,
                   SC_OK);
  g_assert_cmpfloat_with_epsilon (a.logits[8], sqrt (2.0) / 2, 1e-12);
  g_assert_cmpfloat_with_epsilon (a.weights[8], exp (0.5 / sqrt (2.0)) / (2 + exp (0.5 / sqrt (2.0))), 1e-12);
  g_assert_cmpint (sc_learn_attention (ex.q, ex.k, ex.v, 3, 3, 2, 2, true, 1e6, &a, NULL), ==,
                   SC_OK);
  g_assert_cmpfloat_with_epsilon (a.weights[8], 1.0 / 3, 1e-6);
}

/* The softmax does not overflow on scores far beyond exp's range (max subtracted). */
static void
test_large_scores (void)
{
  const double q[2] = { 1000, 0 }, k[4] = { 1, 0, 0.999, 0 }, v[2] = { 1, 0 };
  ScLearnAttention a;

  g_assert_cmpint (sc_learn_attention (q, k, v, 1, 2, 2, 1, false, 1.0, &a, NULL), ==, SC_OK);
  g_assert_cmpfloat (a.exps[0], ==, 1.0);
  g_assert_cmpfloat_with_epsilon (a.weights[0], 1 / (1 + exp (-1.0)), 1e-12);
  g_assert_true (isfinite (a.out[0]));
}

static void
test_gap_for_weight (void)
{
  g_assert_cmpfloat_with_epsilon (sc_learn_gap_for_weight (2, 0.99), log (99.0), 1e-12);
  g_assert_cmpfloat_with_epsilon (sc_learn_gap_for_weight (3, 0.99), 5.288267, 1e-6);
  g_assert_cmpfloat (sc_learn_gap_for_weight (1, 0.99), ==, 0);
  g_assert_true (isnan (sc_learn_gap_for_weight (0, 0.99)));
  g_assert_true (isnan (sc_learn_gap_for_weight (3, 1.0)));
  /* At exactly that gap the top weight is 0.99. */
  const double g = sc_learn_gap_for_weight (5, 0.99);
  g_assert_cmpfloat_with_epsilon (exp (g) / (exp (g) + 4), 0.99, 1e-12);
}

static void
test_parse_matrix (void)
{
  double m[SC_LEARN_MAX_DIM * SC_LEARN_MAX_DIM];
  int r = 0, c = 0;
  ScError err = { 0 };

  g_assert_cmpint (sc_learn_parse_matrix ("1 1 0 0; 2, 2, 0, 0\n-1.5 0 0 1e1;", "K", m, &r, &c,
                                          &err), ==, SC_OK);
  g_assert_cmpint (r, ==, 3);
  g_assert_cmpint (c, ==, 4);
  g_assert_cmpfloat (m[4], ==, 2);
  g_assert_cmpfloat (m[8], ==, -1.5);
  g_assert_cmpfloat (m[11], ==, 10);

  g_assert_cmpint (sc_learn_parse_matrix ("1 2; 3 x", "Q", m, &r, &c, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "Q: 'x' at row 2 column 2 is not a finite number"));
  g_assert_cmpint (sc_learn_parse_matrix ("1 2abc", "Q", m, &r, &c, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "'2abc'"));
  g_assert_cmpint (sc_learn_parse_matrix ("1 nan", "V", m, &r, &c, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_learn_parse_matrix ("1e999", "V", m, &r, &c, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_learn_parse_matrix ("1 2 3; 4 5", "K", m, &r, &c, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "K: row 2 has 2 values, row 1 has 3"));
  g_assert_cmpint (sc_learn_parse_matrix ("1 2; 3", "K", m, &r, &c, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "K: row 2 has 1 value, row 1 has 2"));
  g_assert_cmpint (sc_learn_parse_matrix (" ; ", "K", m, &r, &c, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "empty"));
  GString *big = g_string_new (NULL);
  for (int i = 0; i <= SC_LEARN_MAX_DIM; i++)
    g_string_append (big, "1 ");
  g_assert_cmpint (sc_learn_parse_matrix (big->str, "K", m, &r, &c, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_string_free (big, TRUE);
}

/* Q (m, d) and K (n, d) share d; K and V share n; m and d_v are free. */
static void
test_check_shapes (void)
{
  ScError err = { 0 };

  g_assert_cmpint (sc_learn_check_shapes (4, 3, 4, 3, NULL), ==, SC_OK);
  g_assert_cmpint (sc_learn_check_shapes (2, 3, 3, 3, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "Q has 2 columns and K has 3"));
  g_assert_cmpint (sc_learn_check_shapes (2, 2, 2, 1, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "K has 2 rows and V has 1"));
}

static void
test_attention_bad_input (void)
{
  const double x[4] = { 1, 0, 0, NAN };
  ScLearnAttention a;
  ScError err = { 0 };

  g_assert_cmpint (sc_learn_attention (x, x, x, 1, 1, 2, 2, true, 0, &a, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "temperature"));
  g_assert_cmpint (sc_learn_attention (x, x, x, 0, 1, 2, 2, true, 1, &a, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_learn_attention (x, x, x, 1, 1, 0, 2, true, 1, &a, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "d_k = 0"));
  g_assert_cmpint (sc_learn_attention (x, x, x, 2, 1, 2, 2, true, 1, &a, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "Q: row 2 column 2 is not finite"));
  g_assert_cmpint (sc_learn_example ("005", &(ScLearnExample) { 0 }, &err), ==,
                   SC_ERR_NOT_FOUND);
}

/* Seed 004: d_k = 64 → std 8; two scores 16 apart: e^16 ≈ 8.9e6, the larger weight
 * 0.9999999, p (1 − p) ≈ 1.1e-7. Exactly: p = 1 / (1 + e^−16) = 0.99999988746, p (1 − p) =
 * e^−16 / (1 + e^−16)² = 1.12535e-7. Scaled, the gap is 16 / 8 = 2: p = 1 / (1 + e^−2) =
 * 0.880797, p (1 − p) = 0.104994. */
static void
test_sqrt_dk (void)
{
  ScLearnSqrtDk s;
  ScError err = { 0 };

  g_assert_cmpint (sc_learn_sqrt_dk (64, 16, 2, &s, NULL), ==, SC_OK);
  g_assert_cmpfloat (s.std_unscaled, ==, 8);
  g_assert_cmpfloat (s.std_scaled, ==, 1);
  g_assert_cmpfloat_with_epsilon (s.exp_gap / 1e6, 8.9, 0.05);
  g_assert_cmpfloat_with_epsilon (s.p_unscaled, 0.9999999, 5e-8);
  g_assert_cmpfloat_with_epsilon (s.jacobian_unscaled / 1e-7, 1.1, 0.05);
  g_assert_cmpfloat_with_epsilon (s.jacobian_unscaled, exp (-16.0) / pow (1 + exp (-16.0), 2),
                                  1e-20);
  g_assert_cmpfloat_with_epsilon (s.p_scaled, 0.880797, 1e-6);
  g_assert_cmpfloat_with_epsilon (s.jacobian_scaled, 0.104994, 1e-6);
  /* At a gap of 40 the subtraction 1 − p would be 0 in double; ours keeps e^−40. */
  g_assert_cmpint (sc_learn_sqrt_dk (64, 40, 2, &s, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (s.jacobian_unscaled / exp (-40.0), 1.0, 1e-12);
  g_assert_cmpint (sc_learn_sqrt_dk (0, 1, 2, &s, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "d_k = 0"));
  g_assert_cmpint (sc_learn_sqrt_dk (64, -1, 2, &s, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_learn_sqrt_dk (64, 1, 1, &s, &err), ==, SC_ERR_INVALID_ARG);
}

/* Seed 004: d_model = 512, h = 8 → d_k = 64. */
static void
test_heads (void)
{
  int64_t dk = 0;
  ScError err = { 0 };

  g_assert_cmpint (sc_learn_head_dim (512, 8, &dk, NULL), ==, SC_OK);
  g_assert_cmpint (dk, ==, 64);
  g_assert_cmpint (sc_learn_head_dim (576, 9, &dk, NULL), ==, SC_OK); /* SmolLM2-135M */
  g_assert_cmpint (dk, ==, 64);
  g_assert_cmpint (sc_learn_head_dim (512, 7, &dk, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "not divisible"));
  g_assert_cmpint (sc_learn_head_dim (512, 0, &dk, &err), ==, SC_ERR_INVALID_ARG);
}

/* Seed 004: Llama 2 70B, 80 layers, d_head 128, fp16, 4,096 tokens:
 * 2 · 80 · 64 · 128 · 4096 · 2 = 10,737,418,240 B = 10 GiB with 64 KV heads; ÷ 8 = 1.25 GiB
 * with 8; 160 MiB with 1. SmolLM2-135M: 2 · 30 · 3 · 64 · 2 = 23,040 bytes per token. */
static void
test_kv_cache (void)
{
  const ScLearnKvPreset *p;
  ScLearnKvCache c;
  ScError err = { 0 };
  int n = 0;

  g_assert_nonnull (sc_learn_kv_presets (&n));
  g_assert_cmpint (n, ==, 4);
  p = sc_learn_kv_preset ("llama2-70b-mha");
  g_assert_nonnull (p);
  g_assert_cmpint (sc_learn_kv_cache (p->layers, p->kv_heads, p->head_dim, 4096, 2, 2039, &c,
                                      NULL), ==, SC_OK);
  g_assert_cmpint (c.bytes, ==, INT64_C (10737418240));
  g_assert_cmpfloat (c.gib, ==, 10.0);
  g_assert_cmpfloat_with_epsilon (c.read_seconds, 10737418240.0 / 2039e9, 1e-15);
  p = sc_learn_kv_preset ("llama2-70b-gqa");
  g_assert_cmpint (sc_learn_kv_cache (p->layers, p->kv_heads, p->head_dim, 4096, 2, 2039, &c,
                                      NULL), ==, SC_OK);
  g_assert_cmpfloat (c.gib, ==, 1.25);
  p = sc_learn_kv_preset ("llama2-70b-mqa");
  g_assert_cmpint (sc_learn_kv_cache (p->layers, p->kv_heads, p->head_dim, 4096, 2, 0, &c,
                                      NULL), ==, SC_OK);
  g_assert_cmpint (c.bytes, ==, INT64_C (160) << 20);
  g_assert_true (isnan (c.read_seconds));
  p = sc_learn_kv_preset ("smollm2");
  g_assert_cmpint (sc_learn_kv_cache (p->layers, p->kv_heads, p->head_dim, 1, 2, 0, &c, NULL),
                   ==, SC_OK);
  g_assert_cmpint (c.bytes_per_token, ==, 23040);
  g_assert_null (sc_learn_kv_preset ("gpt-5"));

  g_assert_cmpint (sc_learn_kv_cache (80, 64, 128, -1, 2, 0, &c, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "length -1"));
  g_assert_cmpint (sc_learn_kv_cache (80, 64, 128, INT64_C (1) << 50, 2, 0, &c, &err), ==,
                   SC_ERR_RANGE);
  g_assert_nonnull (strstr (err.message, "overflows int64"));
  g_assert_cmpint (sc_learn_kv_cache (80, 0, 128, 1, 2, 0, &c, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_learn_kv_cache (80, 8, 128, 1, 2, NAN, &c, &err), ==, SC_ERR_INVALID_ARG);
}

/* n = 4,096, fp16: S is 4096² · 2 = 33,554,432 B = 32 MiB per head per layer.
 * A100 (192 KB, fp16 → M = 98,304 elements), d = 64: B_c = ⌈98304 / 256⌉ = 384,
 * B_r = min (384, 64) = 64, T_c = ⌈4096 / 384⌉ = 11, T_r = 64.
 * standard = 4 · 4096 · 64 + 4 · 4096² = 1,048,576 + 67,108,864 = 68,157,440;
 * flash = 3 · 262,144 + 2 · 4096 + 11 · (3 · 262,144 + 4 · 4096)
 *       = 786,432 + 8,192 + 11 · 802,816 = 9,625,600; ratio 7.081. */
static void
test_flash (void)
{
  const ScLearnGpuPreset *g = sc_learn_gpu_preset ("a100");
  ScLearnFlash f;
  ScError err = { 0 };
  int n = 0;

  g_assert_nonnull (sc_learn_gpu_presets (&n));
  g_assert_cmpint (n, ==, 3);
  g_assert_nonnull (g);
  g_assert_cmpint (g->sram_bytes_per_sm, ==, 192 * 1024);
  g_assert_cmpint (sc_learn_flash (4096, 64, g->sram_bytes_per_sm, 2, g->hbm_gbs, &f, NULL), ==,
                   SC_OK);
  g_assert_cmpint (f.score_bytes, ==, INT64_C (32) << 20);
  g_assert_cmpint (f.m_elems, ==, 98304);
  g_assert_cmpint (f.block_c, ==, 384);
  g_assert_cmpint (f.block_r, ==, 64);
  g_assert_cmpint (f.t_c, ==, 11);
  g_assert_cmpint (f.t_r, ==, 64);
  g_assert_cmpint (f.standard_elems, ==, 68157440);
  g_assert_cmpint (f.flash_elems, ==, 9625600);
  g_assert_cmpfloat_with_epsilon (f.ratio, 68157440.0 / 9625600.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (f.standard_seconds, 68157440.0 * 2 / 2039e9, 1e-15);

  /* A larger SRAM means fewer passes (M in the denominator): H100's 256 KB → B_c = 512,
   * T_c = 8. */
  g = sc_learn_gpu_preset ("h100");
  g_assert_cmpint (sc_learn_flash (4096, 64, g->sram_bytes_per_sm, 2, 0, &f, NULL), ==, SC_OK);
  g_assert_cmpint (f.t_c, ==, 8);
  g_assert_cmpint (f.flash_elems, ==, 786432 + 8192 + 8 * 802816);
  /* A sequence shorter than a block: one pass. */
  g_assert_cmpint (sc_learn_flash (100, 64, 192 * 1024, 2, 0, &f, NULL), ==, SC_OK);
  g_assert_cmpint (f.block_c, ==, 100);
  g_assert_cmpint (f.t_c, ==, 1);

  g_assert_cmpint (sc_learn_flash (4096, 64, 200, 2, 0, &f, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "M >= 4d"));
  g_assert_cmpint (sc_learn_flash (INT64_C (1) << 40, 64, 192 * 1024, 2, 0, &f, &err), ==,
                   SC_ERR_RANGE);
  g_assert_cmpint (sc_learn_flash (0, 64, 192 * 1024, 2, 0, &f, &err), ==, SC_ERR_INVALID_ARG);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/learn/example-000", test_example_000);
  g_test_add_func ("/learn/example-004", test_example_004);
  g_test_add_func ("/learn/large-scores", test_large_scores);
  g_test_add_func ("/learn/gap-for-weight", test_gap_for_weight);
  g_test_add_func ("/learn/parse-matrix", test_parse_matrix);
  g_test_add_func ("/learn/check-shapes", test_check_shapes);
  g_test_add_func ("/learn/attention-bad-input", test_attention_bad_input);
  g_test_add_func ("/learn/sqrt-dk", test_sqrt_dk);
  g_test_add_func ("/learn/heads", test_heads);
  g_test_add_func ("/learn/kv-cache", test_kv_cache);
  g_test_add_func ("/learn/flash", test_flash);
  return g_test_run ();
}
