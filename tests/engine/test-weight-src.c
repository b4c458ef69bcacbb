/* test-weight-src.c — the products over weights kept in their file's form (weight_src,
 * backend/sc-backend-cpu-weight.c) against the same products over the expanded floats.
 *
 * A matrix of three parts of different types (q8_0, f16, q4_0 blocks of random bytes with
 * sane scales) is bound with weight_src and multiplied by the cpu backend; the same matrix
 * expanded with sc_weight_src_dequant() is multiplied as plain floats. The cpu backend's
 * products must be bit for bit the same (that is what keeps the CLI goldens unchanged),
 * including a product by a block of rows addressed as handle + r * cols, a product wider
 * than one decoding panel, get_rows and matmul_backward; cpu-ref's must equal its own
 * product over the floats. The same holds once the cpu backend keeps a matrix decoded (from
 * its second use on, within its budget): the same bits as a backend with no budget, which
 * decodes at every use, and as the floats; a budget too small keeps nothing.
 */
#include <glib.h>
#include <string.h>

#include "backend/sc-backend-impl.h"
#include "backend/sc-backend.h"
#include "core/sc-math.h"
#include "format/sc-quant-blocks.h"
#include "format/sc-quant.h"

typedef struct {
  ScWeightSrc src;
  void *blocks[3];
  float *dense; /* (rows, cols) */
  int64_t rows, cols;
} Matrix;

/* Parts of @r0, @r1, @r2 rows of @cols columns: q8_0, f16, q4_0. */
static Matrix
make_matrix (GRand *rng, int64_t cols, int64_t r0, int64_t r1, int64_t r2)
{
  Matrix m = { .cols = cols, .rows = r0 + r1 + r2 };
  const int64_t nb = cols / 32;
  ScBlockQ8_0 *q8 = g_new0 (ScBlockQ8_0, (gsize) (r0 * nb));
  uint16_t *h = g_new (uint16_t, (gsize) (r1 * cols));
  ScBlockQ4_0 *q4 = g_new0 (ScBlockQ4_0, (gsize) (r2 * nb));
  ScError err = { 0 };

  for (int64_t i = 0; i < r0 * nb; i++)
    {
      q8[i].d = sc_fp32_to_fp16 ((float) g_rand_double_range (rng, 0.001, 0.02));
      for (int k = 0; k < 32; k++)
        q8[i].qs[k] = (int8_t) g_rand_int_range (rng, -127, 128);
    }
  for (int64_t i = 0; i < r1 * cols; i++)
    h[i] = sc_fp32_to_fp16 ((float) g_rand_double_range (rng, -1.0, 1.0));
  for (int64_t i = 0; i < r2 * nb; i++)
    {
      q4[i].d = sc_fp32_to_fp16 ((float) g_rand_double_range (rng, 0.01, 0.2));
      for (int k = 0; k < 16; k++)
        q4[i].qs[k] = (uint8_t) g_rand_int_range (rng, 0, 256);
    }
  m.blocks[0] = q8;
  m.blocks[1] = h;
  m.blocks[2] = q4;
  m.src = (ScWeightSrc) {
    .cols = cols, .n_parts = 3,
    .parts = { { SC_TYPE_Q8_0, q8, r0 }, { SC_TYPE_F16, h, r1 }, { SC_TYPE_Q4_0, q4, r2 } },
  };
  m.dense = g_new (float, (gsize) (m.rows * cols));
  g_assert_cmpint (sc_weight_src_dequant (&m.src, 0, m.rows, m.dense, &err), ==, SC_OK);
  return m;
}

static void
free_matrix (Matrix *m)
{
  for (int i = 0; i < 3; i++)
    g_free (m->blocks[i]);
  g_free (m->dense);
}

static float *
random_floats (GRand *rng, gsize n)
{
  float *v = g_new (float, n);

  for (gsize i = 0; i < n; i++)
    v[i] = (float) g_rand_double_range (rng, -1.0, 1.0);
  return v;
}

/* y = x . W[r0 .. r0 + out)^T through @w (a handle or floats) on @b, into a new buffer
 * that starts as @y0 (for accumulate). */
static float *
product (ScBackend *b, const float *w, const float *x, const float *y0, int n, int in, int out,
         bool accumulate)
{
  float *y = g_memdup2 (y0, (gsize) n * out * sizeof (float));
  ScError err = { 0 };

  if (b->ops->matmul (b, y, x, w, n, in, out, accumulate, &err) != SC_OK)
    g_error ("%s", err.message);
  return y;
}

static void
assert_same (const float *a, const float *b, gsize n)
{
  for (gsize i = 0; i < n; i++)
    if (memcmp (&a[i], &b[i], sizeof (float)) != 0)
      g_error ("element %zu: %.9g != %.9g", (size_t) i, (double) a[i], (double) b[i]);
}

static void
check_backend (ScBackend *b, const Matrix *m, GRand *rng)
{
  ScError err = { 0 };
  const int in = (int) m->cols, out = (int) m->rows;
  const float *h = b->ops->weight_src (b, &m->src, &err);
  static const int ns[] = { 1, 3, 17 };

  g_assert_nonnull (h);
  for (gsize k = 0; k < G_N_ELEMENTS (ns); k++)
    {
      const int n = ns[k];
      g_autofree float *x = random_floats (rng, (gsize) n * in);
      g_autofree float *y0 = random_floats (rng, (gsize) n * out);
      for (int acc = 0; acc < 2; acc++)
        {
          g_autofree float *got = product (b, h, x, y0, n, in, out, acc);
          g_autofree float *want = product (b, m->dense, x, y0, n, in, out, acc);
          assert_same (got, want, (gsize) n * out);
        }
      /* rows r .. r + 40 of the matrix (across the q8_0 | f16 border) as handle + r * in */
      {
        const int r = (int) m->src.parts[0].rows - 20;
        g_autofree float *got = product (b, h + (size_t) r * in, x, y0, n, in, 40, false);
        g_autofree float *want = product (b, m->dense + (size_t) r * in, x, y0, n, in, 40, false);
        assert_same (got, want, (gsize) n * 40);
      }
      /* dx (n, in) = dy (n, out) . W */
      if (b->ops->matmul_backward != NULL)
        {
          g_autofree float *dy = random_floats (rng, (gsize) n * out);
          g_autofree float *got = g_new0 (float, (gsize) n * in);
          g_autofree float *want = g_new0 (float, (gsize) n * in);
          g_assert_cmpint (b->ops->matmul_backward (b, got, dy, h, n, in, out, false, &err), ==,
                           SC_OK);
          g_assert_cmpint (b->ops->matmul_backward (b, want, dy, m->dense, n, in, out, false,
                                                    &err), ==, SC_OK);
          assert_same (got, want, (gsize) n * in);
        }
    }
  /* get_rows: rows from every part */
  {
    const int32_t ids[4] = { 0, (int32_t) m->src.parts[0].rows, out - 1, 5 };
    g_autofree float *got = g_new (float, 4 * (gsize) in);
    g_autofree float *want = g_new (float, 4 * (gsize) in);
    g_assert_cmpint (b->ops->get_rows (b, got, h, ids, 4, in, &err), ==, SC_OK);
    g_assert_cmpint (b->ops->get_rows (b, want, m->dense, ids, 4, in, &err), ==, SC_OK);
    assert_same (got, want, 4 * (gsize) in);
  }
}

static void
test_products (void)
{
  GRand *rng = g_rand_new_with_seed (28);
  Matrix m = make_matrix (rng, 96, 70, 50, 30);
  ScError err = { 0 };
  ScBackend *cpu = sc_backend_cpu_new (2, &err), *ref = sc_backend_cpu_ref_new ();

  g_assert_nonnull (cpu);
  g_assert_nonnull (ref);
  check_backend (cpu, &m, rng);
  check_backend (ref, &m, rng);
  sc_backend_free (cpu);
  sc_backend_free (ref);
  free_matrix (&m);
  g_rand_free (rng);
}

/* More rows than one 16 MB panel holds (4 Mi floats / 64 columns = 65,536 rows). */
static void
test_many_panels (void)
{
  GRand *rng = g_rand_new_with_seed (5);
  Matrix m = make_matrix (rng, 64, 40000, 20000, 12000);
  ScError err = { 0 };
  ScBackend *cpu = sc_backend_cpu_new (2, &err);
  const float *h;
  const int n = 5, in = 64, out = (int) m.rows;
  g_autofree float *x = random_floats (rng, (gsize) n * in);
  g_autofree float *y0 = g_new0 (float, (gsize) n * out);

  g_assert_nonnull (cpu);
  h = cpu->ops->weight_src (cpu, &m.src, &err);
  g_assert_nonnull (h);
  /* binding the same matrix again gives the same handle */
  g_assert_true (cpu->ops->weight_src (cpu, &m.src, &err) == h);
  {
    g_autofree float *got = product (cpu, h, x, y0, n, in, out, false);
    g_autofree float *want = product (cpu, m.dense, x, y0, n, in, out, false);
    assert_same (got, want, (gsize) n * out);
  }
  sc_backend_free (cpu);
  free_matrix (&m);
  g_rand_free (rng);
}

/* The products of a backend that keeps @m decoded (from the second use on) against one with
 * no budget (it decodes at every use), bit for bit: the first use, the uses after it, rows
 * addressed as handle + r * cols, matmul_backward and get_rows. */
static void
check_kept (const Matrix *m, GRand *rng)
{
  ScError err = { 0 };
  ScBackend *kept = sc_backend_cpu_new (2, &err), *plain = sc_backend_cpu_new (2, &err);
  const int in = (int) m->cols, out = (int) m->rows, r = (int) m->src.parts[0].rows - 20;
  const size_t bytes = (size_t) out * (size_t) in * sizeof (float);
  const float *hk, *hp;

  g_assert_nonnull (kept);
  g_assert_nonnull (plain);
  sc_backend_cpu_set_weight_cache (kept, bytes);
  sc_backend_cpu_set_weight_cache (plain, 0);
  hk = kept->ops->weight_src (kept, &m->src, &err);
  hp = plain->ops->weight_src (plain, &m->src, &err);
  g_assert_nonnull (hk);
  g_assert_nonnull (hp);
  for (int use = 0; use < 3; use++)
    {
      const int n = use == 1 ? 1 : 7;
      g_autofree float *x = random_floats (rng, (gsize) n * in);
      g_autofree float *y0 = random_floats (rng, (gsize) n * out);
      g_autofree float *dy = random_floats (rng, (gsize) n * out);
      g_autofree float *got = product (kept, hk, x, y0, n, in, out, use == 2);
      /* the first product decodes every row once: nothing is kept until the next use */
      const size_t kept_now = sc_backend_cpu_weight_cache_bytes (kept);
      g_autofree float *want = product (plain, hp, x, y0, n, in, out, use == 2);
      g_autofree float *floats = product (plain, m->dense, x, y0, n, in, out, use == 2);
      g_autofree float *got_rows = product (kept, hk + (size_t) r * in, x, y0, n, in, 40, false);
      g_autofree float *want_rows = product (plain, hp + (size_t) r * in, x, y0, n, in, 40, false);
      g_autofree float *dx_got = g_new0 (float, (gsize) n * in);
      g_autofree float *dx_want = g_new0 (float, (gsize) n * in);

      g_assert_cmpuint (kept_now, ==, use == 0 ? 0 : bytes);
      assert_same (got, want, (gsize) n * out);
      assert_same (got, floats, (gsize) n * out);
      assert_same (got_rows, want_rows, (gsize) n * 40);
      g_assert_cmpint (kept->ops->matmul_backward (kept, dx_got, dy, hk, n, in, out, false, &err),
                       ==, SC_OK);
      g_assert_cmpint (plain->ops->matmul_backward (plain, dx_want, dy, hp, n, in, out, false,
                                                    &err), ==, SC_OK);
      assert_same (dx_got, dx_want, (gsize) n * in);
    }
  g_assert_cmpuint (sc_backend_cpu_weight_cache_bytes (kept), ==, bytes);
  g_assert_cmpuint (sc_backend_cpu_weight_cache_bytes (plain), ==, 0);
  {
    const int32_t ids[4] = { 0, (int32_t) m->src.parts[0].rows, out - 1, 5 };
    g_autofree float *got = g_new (float, 4 * (gsize) in);
    g_autofree float *want = g_new (float, 4 * (gsize) in);
    g_assert_cmpint (kept->ops->get_rows (kept, got, hk, ids, 4, in, &err), ==, SC_OK);
    g_assert_cmpint (plain->ops->get_rows (plain, want, hp, ids, 4, in, &err), ==, SC_OK);
    assert_same (got, want, 4 * (gsize) in);
  }
  sc_backend_free (kept);
  sc_backend_free (plain);
}

static void
test_kept (void)
{
  GRand *rng = g_rand_new_with_seed (29);
  Matrix small = make_matrix (rng, 96, 70, 50, 30);
  /* more rows than one panel: a kept matrix is multiplied in the same panels */
  Matrix large = make_matrix (rng, 64, 40000, 20000, 12000);
  ScError err = { 0 };
  ScBackend *cpu = sc_backend_cpu_new (1, &err), *ref = sc_backend_cpu_ref_new ();
  const float *h;
  float x[96] = { 0 }, y[220];

  check_kept (&small, rng);
  check_kept (&large, rng);
  /* a budget one float too small keeps nothing, however often the matrix is used */
  g_assert_nonnull (cpu);
  sc_backend_cpu_set_weight_cache (cpu, (size_t) small.rows * small.cols * sizeof (float) - 4);
  h = cpu->ops->weight_src (cpu, &small.src, &err);
  for (int use = 0; use < 4; use++)
    g_assert_cmpint (cpu->ops->matmul (cpu, y, x, h, 1, 96, (int) small.rows, false, &err), ==,
                     SC_OK);
  g_assert_cmpuint (sc_backend_cpu_weight_cache_bytes (cpu), ==, 0);
  /* cpu-ref expands every matrix anyway: it keeps nothing besides */
  sc_backend_cpu_set_weight_cache (ref, (size_t) 1 << 30);
  g_assert_nonnull (ref->ops->weight_src (ref, &small.src, &err));
  g_assert_cmpuint (sc_backend_cpu_weight_cache_bytes (ref), ==, 0);
  sc_backend_free (cpu);
  sc_backend_free (ref);
  free_matrix (&small);
  free_matrix (&large);
  g_rand_free (rng);
}

/* A product whose shape does not match the bound matrix is refused by name. */
static void
test_wrong_shape (void)
{
  GRand *rng = g_rand_new_with_seed (9);
  Matrix m = make_matrix (rng, 64, 10, 10, 10);
  ScError err = { 0 };
  ScBackend *cpu = sc_backend_cpu_new (1, &err);
  const float *h = cpu->ops->weight_src (cpu, &m.src, &err);
  float x[64] = { 0 }, y[64];

  g_assert_nonnull (h);
  g_assert_cmpint (cpu->ops->matmul (cpu, y, x, h + 20 * 64, 1, 64, 20, false, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "rows 20 .. 40 of a (30, 64) weight"));
  sc_backend_free (cpu);
  free_matrix (&m);
  g_rand_free (rng);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/weight-src/products", test_products);
  g_test_add_func ("/weight-src/many-panels", test_many_panels);
  g_test_add_func ("/weight-src/kept", test_kept);
  g_test_add_func ("/weight-src/wrong-shape", test_wrong_shape);
  return g_test_run ();
}
