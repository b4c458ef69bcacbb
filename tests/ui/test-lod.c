/* test-lod.c — the heatmap's level-of-detail pyramid (ui/figures/saccade-lod.h), headless:
 *
 *   - 2 × 2 max pooling worked by hand on a 4 × 4 and a 5 × 3 matrix (odd sizes pool what
 *     they have), every level down to one cell;
 *   - a causal head: masked cells are never pooled (a large value above the diagonal does
 *     not leak into any level), and every level is causal;
 *   - NaN cells are skipped, a block of NaN only stays NaN;
 *   - the fp16 triangle gives the same pyramid, cell for cell, as the same head in float,
 *     and stays fp16 (its size is half the float one's);
 *   - fp16 conversion: normals, subnormals, ±0, ±inf, NaN against hand-computed values;
 *   - level choice and find_max (the descent to the exact cell);
 *   - an overview pyramid; untrusted shapes are refused with errors naming them.
 */
#include <math.h>
#include <string.h>

#include "ui/figures/saccade-lod.h"

/* Every float of these tests is k / 1024 with small k, exactly an fp16: the encoder only
 * needs normals (and 0). */
static uint16_t
f16_encode_exact (float v)
{
  int e;
  double m;

  if (v == 0)
    return 0;
  m = frexp (fabs (v), &e); /* v = m · 2^e, m in [0.5, 1) */
  g_assert_true (e - 1 >= -14 && e - 1 <= 15);
  uint16_t mant = (uint16_t) lround ((2 * m - 1) * 1024);
  g_assert_cmpfloat (ldexp (1 + mant / 1024.0, e - 1), ==, fabs (v)); /* exact */
  return (uint16_t) ((v < 0 ? 0x8000u : 0) | ((e - 1 + 15) << 10) | mant);
}

static float
level_value (SaccadeLod *lod, int level, int i, int j)
{
  float v = -12345;
  g_assert_true (saccade_lod_level_value (lod, level, i, j, &v));
  return v;
}

static void
test_fp16 (void)
{
  g_assert_cmpfloat (saccade_fp16_to_float (0x3c00), ==, 1.0f);
  g_assert_cmpfloat (saccade_fp16_to_float (0xc000), ==, -2.0f);
  /* 0x3555: exponent 13, mantissa 0x155 = 341: (1 + 341/1024) · 2^-2 = 1365/4096 */
  g_assert_cmpfloat (saccade_fp16_to_float (0x3555), ==, 1365.0f / 4096.0f);
  g_assert_cmpfloat (saccade_fp16_to_float (0x7bff), ==, 65504.0f);     /* largest normal */
  g_assert_cmpfloat (saccade_fp16_to_float (0x0400), ==, ldexpf (1, -14)); /* smallest normal */
  g_assert_cmpfloat (saccade_fp16_to_float (0x0001), ==, ldexpf (1, -24)); /* smallest subnormal */
  g_assert_cmpfloat (saccade_fp16_to_float (0x03ff), ==, ldexpf (1023, -24));
  g_assert_cmpfloat (saccade_fp16_to_float (0x0000), ==, 0.0f);
  g_assert_true (signbit (saccade_fp16_to_float (0x8000)));
  g_assert_cmpfloat (saccade_fp16_to_float (0x7c00), ==, INFINITY);
  g_assert_cmpfloat (saccade_fp16_to_float (0xfc00), ==, -INFINITY);
  g_assert_true (isnan (saccade_fp16_to_float (0x7e00)));
  g_assert_true (isnan (saccade_fp16_to_float (0xfc01)));
  g_assert_cmpint (f16_encode_exact (0.75f), ==, 0x3a00);
}

static void
test_pool_4x4 (void)
{
  /* Blocks of level 1: top-left {1, 2, 5, 6} → 6; top-right {3, 4, 7, 8} → 8;
   * bottom-left {9, 10, 13, 14} → 14 ... except that we plant a maximum in a corner of
   * each block to see that position does not matter. */
  static const float m[16] = {
     1,  2,  3, 40,
     5, 26,  7,  8,
    90, 10, 11, 12,
    13, 14, 15,  0,
  };
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeLod) lod = saccade_lod_new_float (m, 4, 4, FALSE, &error);

  g_assert_no_error (error);
  g_assert_cmpint (saccade_lod_get_n_levels (lod), ==, 3);
  g_assert_true (saccade_lod_is_exact (lod));
  g_assert_cmpint (saccade_lod_get_level (lod, 1)->rows, ==, 2);
  g_assert_cmpint (saccade_lod_get_level (lod, 1)->block, ==, 2);
  g_assert_cmpfloat (level_value (lod, 1, 0, 0), ==, 26);
  g_assert_cmpfloat (level_value (lod, 1, 0, 1), ==, 40);
  g_assert_cmpfloat (level_value (lod, 1, 1, 0), ==, 90);
  g_assert_cmpfloat (level_value (lod, 1, 1, 1), ==, 15);
  g_assert_cmpint (saccade_lod_get_level (lod, 2)->rows, ==, 1);
  g_assert_cmpint (saccade_lod_get_level (lod, 2)->block, ==, 4);
  g_assert_cmpfloat (level_value (lod, 2, 0, 0), ==, 90);
  g_assert_cmpfloat (level_value (lod, 0, 2, 3), ==, 12); /* level 0 is the data */
}

static void
test_pool_odd (void)
{
  /* 5 x 3: level 1 is 3 x 2, its last row pools row 4 alone, its last column column 2
   * alone; level 2 is 2 x 1, level 3 is 1 x 1. Negative values: the max, not |max|. */
  static const float m[15] = {
    -1, -2, -3,
    -4, -5, -6,
    -7, -8, -9,
    -10, -11, -12,
    -13, -14, -15,
  };
  g_autoptr (SaccadeLod) lod = saccade_lod_new_float (m, 5, 3, FALSE, NULL);
  const SaccadeLodLevel *l1 = saccade_lod_get_level (lod, 1);
  float v;

  g_assert_cmpint (saccade_lod_get_n_levels (lod), ==, 4);
  g_assert_cmpint (l1->rows, ==, 3);
  g_assert_cmpint (l1->cols, ==, 2);
  g_assert_cmpfloat (level_value (lod, 1, 0, 0), ==, -1);
  g_assert_cmpfloat (level_value (lod, 1, 0, 1), ==, -3);
  g_assert_cmpfloat (level_value (lod, 1, 1, 0), ==, -7);
  g_assert_cmpfloat (level_value (lod, 1, 1, 1), ==, -9);
  g_assert_cmpfloat (level_value (lod, 1, 2, 0), ==, -13);
  g_assert_cmpfloat (level_value (lod, 1, 2, 1), ==, -15);
  g_assert_cmpint (saccade_lod_get_level (lod, 2)->rows, ==, 2);
  g_assert_cmpint (saccade_lod_get_level (lod, 2)->cols, ==, 1);
  g_assert_cmpfloat (level_value (lod, 2, 0, 0), ==, -1);
  g_assert_cmpfloat (level_value (lod, 2, 1, 0), ==, -13);
  g_assert_cmpfloat (level_value (lod, 3, 0, 0), ==, -1);
  g_assert_false (saccade_lod_level_value (lod, 1, 3, 0, &v)); /* outside */
  g_assert_false (saccade_lod_level_value (lod, 4, 0, 0, &v)); /* no such level */
}

/* A 5-token causal head whose masked cells hold 100: none of it may reach a level. */
static const float causal5[25] = {
  0.5f,   100,    100,    100,    100,
  0.25f,  0.75f,  100,    100,    100,
  0.125f, 0.375f, 0.5f,   100,    100,
  0.0625f, 0.25f, 0.125f, 0.5f,   100,
  0.875f, 0.0625f, 0.0625f, 0.25f, 0.125f,
};

static void
check_causal5 (SaccadeLod *lod)
{
  float v;

  g_assert_true (saccade_lod_is_causal (lod));
  g_assert_cmpint (saccade_lod_get_n_levels (lod), ==, 4);
  /* level 1 (3 x 3, lower triangle): (0,0) = max(0.5, 0.25, 0.75) = 0.75 */
  g_assert_cmpfloat (level_value (lod, 1, 0, 0), ==, 0.75f);
  g_assert_false (saccade_lod_level_value (lod, 1, 0, 1, &v)); /* masked */
  /* (1,0) = rows 2-3, cols 0-1 = max(0.125, 0.375, 0.0625, 0.25) */
  g_assert_cmpfloat (level_value (lod, 1, 1, 0), ==, 0.375f);
  /* (1,1) = rows 2-3, cols 2-3 unmasked: 0.5, 0.125, 0.5 (the 100 at (2,3) is masked) */
  g_assert_cmpfloat (level_value (lod, 1, 1, 1), ==, 0.5f);
  g_assert_cmpfloat (level_value (lod, 1, 2, 0), ==, 0.875f);
  g_assert_cmpfloat (level_value (lod, 1, 2, 1), ==, 0.25f);
  g_assert_cmpfloat (level_value (lod, 1, 2, 2), ==, 0.125f);
  g_assert_false (saccade_lod_level_value (lod, 1, 1, 2, &v));
  /* level 2 (2 x 2): (0,0) = max(0.75, 0.375, 0.5) */
  g_assert_cmpfloat (level_value (lod, 2, 0, 0), ==, 0.75f);
  g_assert_false (saccade_lod_level_value (lod, 2, 0, 1, &v));
  g_assert_cmpfloat (level_value (lod, 2, 1, 0), ==, 0.875f);
  g_assert_cmpfloat (level_value (lod, 2, 1, 1), ==, 0.125f);
  g_assert_cmpfloat (level_value (lod, 3, 0, 0), ==, 0.875f);
  {
    SaccadeLodStats s;
    saccade_lod_get_stats (lod, &s);
    g_assert_cmpfloat (s.hi, ==, 0.875);
    g_assert_cmpfloat (s.lo, ==, 0.0625);
    g_assert_cmpfloat (s.min_pos, ==, 0.0625);
  }
}

static GBytes *
triangle_of (const float *m, int n)
{
  gsize k = 0;
  uint16_t *tri = g_new (uint16_t, (gsize) n * (n + 1) / 2);

  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++)
      tri[k++] = f16_encode_exact (m[i * n + j]);
  return g_bytes_new_take (tri, k * sizeof (uint16_t));
}

static void
test_causal_float_and_fp16 (void)
{
  g_autoptr (SaccadeLod) lf = saccade_lod_new_float (causal5, 5, 5, TRUE, NULL);
  g_autoptr (GBytes) tri = triangle_of (causal5, 5);
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeLod) lh = saccade_lod_new_fp16_triangle (tri, 5, &error);

  g_assert_no_error (error);
  check_causal5 (lf);
  check_causal5 (lh);
  g_assert_true (saccade_lod_get_level (lh, 0)->fp16);
  g_assert_true (saccade_lod_get_level (lh, 0)->tri);
  g_assert_true (saccade_lod_get_level (lh, 1)->fp16);
  /* level 0 is the bytes given, not a copy */
  g_assert_true (saccade_lod_get_level (lh, 0)->data == g_bytes_get_data (tri, NULL));
}

/* A bigger random causal head (odd side 37): the fp16 pyramid equals the float one cell
 * for cell at every level, and it is the size the header says (fp16: 2 bytes a cell of
 * the triangles; float: 4 bytes a cell of the full levels). */
static void
test_fp16_equals_float (void)
{
  const int n = 37;
  g_autofree float *m = g_new (float, n * n);
  g_autoptr (GRand) rand = g_rand_new_with_seed (7);
  g_autoptr (SaccadeLod) lf = NULL, lh = NULL;
  g_autoptr (GBytes) tri = NULL;
  gsize tri_cells = 0, full_cells = 0;

  for (int i = 0; i < n * n; i++)
    m[i] = (float) g_rand_int_range (rand, 0, 1024) / 1024.0f;
  lf = saccade_lod_new_float (m, n, n, TRUE, NULL);
  tri = triangle_of (m, n);
  lh = saccade_lod_new_fp16_triangle (tri, n, NULL);
  g_assert_cmpint (saccade_lod_get_n_levels (lf), ==, 7); /* 37 19 10 5 3 2 1 */
  g_assert_cmpint (saccade_lod_get_n_levels (lh), ==, saccade_lod_get_n_levels (lf));
  for (int k = 0; k < saccade_lod_get_n_levels (lf); k++)
    {
      const SaccadeLodLevel *a = saccade_lod_get_level (lf, k), *b = saccade_lod_get_level (lh, k);
      g_assert_cmpint (a->rows, ==, b->rows);
      g_assert_cmpint (a->cols, ==, b->cols);
      tri_cells += (gsize) b->rows * (b->rows + 1) / 2;
      full_cells += (gsize) a->rows * a->cols;
      for (int i = 0; i < a->rows; i++)
        for (int j = 0; j < a->cols; j++)
          {
            float va, vb;
            gboolean ha = saccade_lod_level_value (lf, k, i, j, &va);
            gboolean hb = saccade_lod_level_value (lh, k, i, j, &vb);
            g_assert_cmpint (ha, ==, hb);
            g_assert_cmpint (ha, ==, j <= i);
            if (ha)
              {
                /* the brute-force maximum over the block of the head */
                float want = -1;
                int blk = a->block;
                for (int r = i * blk; r < MIN (n, (i + 1) * blk); r++)
                  for (int c = j * blk; c < MIN (n, (j + 1) * blk) && c <= r; c++)
                    want = MAX (want, m[r * n + c]);
                g_assert_cmpfloat (va, ==, want);
                g_assert_cmpfloat (vb, ==, want);
              }
          }
    }
  g_assert_cmpuint (saccade_lod_get_size (lh), ==, tri_cells * 2);
  g_assert_cmpuint (saccade_lod_get_size (lf), ==, full_cells * 4);
}

static void
test_nan (void)
{
  const float m[4] = { NAN, NAN, NAN, NAN };
  const float m2[6] = { NAN, 0.25f, NAN, NAN, 0.5f, NAN };
  g_autoptr (SaccadeLod) a = saccade_lod_new_float (m, 2, 2, FALSE, NULL);
  g_autoptr (SaccadeLod) b = saccade_lod_new_float (m2, 2, 3, FALSE, NULL);
  int r, c;
  float v;
  gboolean exact;

  g_assert_true (isnan (level_value (a, 1, 0, 0)));
  g_assert_false (saccade_lod_find_max (a, 1, 0, 0, &r, &c, &v, &exact));
  g_assert_cmpfloat (level_value (b, 1, 0, 0), ==, 0.5f);   /* NaN, 0.25, NaN, 0.5 */
  g_assert_true (isnan (level_value (b, 1, 0, 1)));          /* column 2: NaN only */
  g_assert_cmpfloat (level_value (b, 2, 0, 0), ==, 0.5f);
}

static void
test_pick_and_find (void)
{
  const int n = 64;
  g_autofree float *m = g_new0 (float, n * n);
  g_autoptr (SaccadeLod) lod = NULL;
  int r, c;
  float v;
  gboolean exact;

  m[45 * n + 3] = 0.9f;
  m[10 * n + 10] = 0.5f;
  lod = saccade_lod_new_float (m, n, n, TRUE, NULL);
  g_assert_cmpint (saccade_lod_pick_level (lod, 0.25), ==, 0);
  g_assert_cmpint (saccade_lod_pick_level (lod, 1.0), ==, 0);
  g_assert_cmpint (saccade_lod_pick_level (lod, 1.5), ==, 1);  /* block 2 >= 1.5 */
  g_assert_cmpint (saccade_lod_pick_level (lod, 8.0), ==, 3);
  g_assert_cmpint (saccade_lod_pick_level (lod, 9.0), ==, 4);
  g_assert_cmpint (saccade_lod_pick_level (lod, 1e6), ==, 6);  /* the top */
  /* level 3 (blocks of 8): (5, 0) covers rows 40-47, cols 0-7 → the 0.9 at (45, 3) */
  g_assert_true (saccade_lod_find_max (lod, 3, 5, 0, &r, &c, &v, &exact));
  g_assert_cmpint (r, ==, 45);
  g_assert_cmpint (c, ==, 3);
  g_assert_cmpfloat (v, ==, 0.9f);
  g_assert_true (exact);
  g_assert_true (saccade_lod_find_max (lod, 6, 0, 0, &r, &c, &v, &exact));
  g_assert_cmpint (r, ==, 45);
  g_assert_false (saccade_lod_find_max (lod, 3, 0, 1, &r, &c, &v, &exact)); /* masked */
}

static void
test_overview (void)
{
  /* 10 tokens in blocks of 4: a 3 x 3 overview. */
  const float ov[9] = { 0.5f, NAN, NAN, 0.25f, 0.75f, NAN, 1.0f, 0.125f, 0.5f };
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeLod) lod = NULL;
  int r, c;
  float v;
  gboolean exact;

  g_assert_cmpint (saccade_lod_overview_block (10, 3), ==, 4);
  g_assert_cmpint (saccade_lod_overview_block (8192, 128), ==, 64);
  lod = saccade_lod_new_overview (ov, 3, 3, 10, 10, TRUE, &error);
  g_assert_no_error (error);
  g_assert_false (saccade_lod_is_exact (lod));
  g_assert_cmpint (saccade_lod_get_level (lod, 0)->block, ==, 4);
  g_assert_cmpint (saccade_lod_get_n_levels (lod), ==, 3);
  g_assert_cmpfloat (level_value (lod, 1, 1, 0), ==, 1.0f);
  g_assert_cmpint (saccade_lod_pick_level (lod, 1.0), ==, 0);
  g_assert_cmpint (saccade_lod_pick_level (lod, 5.0), ==, 1);
  g_assert_true (saccade_lod_find_max (lod, 1, 1, 0, &r, &c, &v, &exact));
  g_assert_false (exact);
  g_assert_cmpint (r, ==, 8); /* the overview block (2, 0): tokens 8 .. 9 */
  g_assert_cmpint (c, ==, 0);

  /* shapes without a common block */
  g_assert_null (saccade_lod_new_overview (ov, 3, 3, 10, 20, TRUE, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "3 x 3 overview of a 10 x 20"));
}

static void
test_untrusted (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) short_tri = g_bytes_new_take (g_new0 (uint16_t, 5), 5 * sizeof (uint16_t));
  float one = 1;

  g_assert_null (saccade_lod_new_fp16_triangle (short_tri, 3, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "of 3 tokens is 12 bytes, this one is 10"));
  g_clear_error (&error);
  g_assert_null (saccade_lod_new_fp16_triangle (short_tri, -4, &error));
  g_assert_nonnull (strstr (error->message, "tokens -4"));
  g_clear_error (&error);
  g_assert_null (saccade_lod_new_fp16_triangle (short_tri, 1 << 20, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (saccade_lod_new_float (&one, 0, 1, FALSE, &error));
  g_assert_nonnull (strstr (error->message, "rows 0"));
  g_clear_error (&error);
  {
    g_autoptr (SaccadeLod) lod = saccade_lod_new_float (&one, 1, 1, TRUE, &error);
    g_assert_no_error (error);
    g_assert_cmpint (saccade_lod_get_n_levels (lod), ==, 1);
  }
}

static void
on_built (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SaccadeLod **out = user_data;
  g_autoptr (GError) error = NULL;

  *out = saccade_lod_new_fp16_triangle_finish (result, &error);
  g_assert_no_error (error);
}

static void
test_async (void)
{
  g_autoptr (GBytes) tri = triangle_of (causal5, 5);
  SaccadeLod *lod = NULL;

  saccade_lod_new_fp16_triangle_async (tri, 5, NULL, on_built, &lod);
  while (lod == NULL)
    g_main_context_iteration (NULL, TRUE);
  check_causal5 (lod);
  saccade_lod_unref (lod);
}

/* A band head (a local layer's, window w): at every level a cell is masked exactly when
 * every token of it is above the diagonal or left of the band; masked cells have no value,
 * the others keep theirs. */
static void
test_band (void)
{
  const int n = 45, w = 7;
  g_autofree float *a = g_new0 (float, n * n);
  g_autoptr (SaccadeLod) lod = NULL;

  for (int i = 0; i < n; i++)
    for (int j = MAX (0, i - w + 1); j <= i; j++)
      a[i * n + j] = 1.0f / (float) MIN (i + 1, w);
  lod = saccade_lod_new_float (a, n, n, TRUE, NULL);
  g_assert_nonnull (lod);
  g_assert_cmpint (saccade_lod_get_window (lod), ==, 0);
  g_assert_false (saccade_lod_is_masked (lod, 0, 20, 0)); /* no window: only causal */
  saccade_lod_set_window (lod, w);
  g_assert_cmpint (saccade_lod_get_window (lod), ==, w);
  for (int level = 0; level < saccade_lod_get_n_levels (lod); level++)
    {
      const SaccadeLodLevel *L = saccade_lod_get_level (lod, level);
      for (int i = 0; i < L->rows; i++)
        for (int j = 0; j < L->cols; j++)
          {
            gboolean open = FALSE;
            float v;
            for (int r = i * L->block; r < MIN (n, (i + 1) * L->block); r++)
              for (int c = j * L->block; c < MIN (n, (j + 1) * L->block); c++)
                open = open || (c <= r && c + w > r);
            g_assert_cmpint (saccade_lod_is_masked (lod, level, i, j), ==, !open);
            g_assert_cmpint (j < saccade_lod_band_start (lod, level, i), ==,
                             !open && j <= i);
            g_assert_cmpint (saccade_lod_level_value (lod, level, i, j, &v), ==, open);
            if (open && level == 0)
              g_assert_cmpfloat (v, ==, a[i * n + j]);
          }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/lod/fp16", test_fp16);
  g_test_add_func ("/lod/pool-4x4", test_pool_4x4);
  g_test_add_func ("/lod/pool-odd", test_pool_odd);
  g_test_add_func ("/lod/causal-float-and-fp16", test_causal_float_and_fp16);
  g_test_add_func ("/lod/fp16-equals-float", test_fp16_equals_float);
  g_test_add_func ("/lod/nan", test_nan);
  g_test_add_func ("/lod/pick-and-find", test_pick_and_find);
  g_test_add_func ("/lod/overview", test_overview);
  g_test_add_func ("/lod/untrusted", test_untrusted);
  g_test_add_func ("/lod/async", test_async);
  g_test_add_func ("/lod/band", test_band);
  return g_test_run ();
}
