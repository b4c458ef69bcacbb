/* test-head-distance.c — engine/analysis/sc-head-distance on hand-built heads whose
 * Jensen–Shannon distances are worked out in the comments (nats throughout). */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/analysis/sc-head-distance.h"

#define TOL 1e-6

/* Identical rows: m = p, so H (m) - (H (p) + H (p)) / 2 = 0. */
static void
test_identical (void)
{
  const float p[4] = { 0.1f, 0.2f, 0.3f, 0.4f };
  const float a[6] = { 1, 0, 0, 0.25f, 0.5f, 0.25f };
  double d = -1;

  g_assert_cmpfloat_with_epsilon (sc_jsd (p, p, 4), 0.0, 1e-12);
  g_assert_cmpint (sc_head_distance (a, a, 2, 3, &d, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (d, 0.0, 1e-12);
}

/* Disjoint supports: p = (1, 0), q = (0, 1): m = (½, ½), H (m) = ln 2, H (p) = H (q) = 0,
 * so JSD = ln 2, the maximum. The same for spread rows: p = (½, ½, 0, 0), q = (0, 0, ½, ½):
 * H (m) = ln 4, H (p) = H (q) = ln 2, JSD = ln 4 - ln 2 = ln 2. */
static void
test_disjoint (void)
{
  const float p[2] = { 1, 0 }, q[2] = { 0, 1 };
  const float r[4] = { 0.5f, 0.5f, 0, 0 }, s[4] = { 0, 0, 0.5f, 0.5f };

  g_assert_cmpfloat_with_epsilon (sc_jsd (p, q, 2), log (2.0), 1e-12);
  g_assert_cmpfloat_with_epsilon (sc_jsd (r, s, 4), log (2.0), 1e-12);
}

/* p = (1, 0), q = (½, ½): m = (¾, ¼).
 *   H (m) = -¾ ln ¾ - ¼ ln ¼ = ln 4 - ¾ ln 3,  H (p) = 0,  H (q) = ln 2
 *   JSD = ln 4 - ¾ ln 3 - ½ ln 2 = (3/2) ln 2 - ¾ ln 3 ≈ 0.215761. */
static void
test_known (void)
{
  const float p[2] = { 1, 0 }, q[2] = { 0.5f, 0.5f };
  const double want = 1.5 * log (2.0) - 0.75 * log (3.0);

  g_assert_cmpfloat_with_epsilon (sc_jsd (p, q, 2), want, 1e-12);
  g_assert_cmpfloat_with_epsilon (sc_jsd (q, p, 2), want, 1e-12);
  g_assert_cmpfloat_with_epsilon (want, 0.215761, 1e-6);
}

/* Two causal 2 x 2 heads: A rows (1, 0), (1, 0); B rows (1, 0), (½, ½).
 * Row 0 is the same (0), row 1 is the known pair above: distance = ((3/2) ln 2 - ¾ ln 3) / 2. */
static void
test_head_mean (void)
{
  const float a[4] = { 1, 0, 1, 0 }, b[4] = { 1, 0, 0.5f, 0.5f };
  double d;

  g_assert_cmpint (sc_head_distance (a, b, 2, 2, &d, NULL), ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (d, (1.5 * log (2.0) - 0.75 * log (3.0)) / 2, 1e-12);
}

/* The matrix of three heads: {A, A, B} from above. d (0, 1) = 0, d (0, 2) = d (1, 2) = the
 * mean above; symmetric, zero diagonal. */
static void
test_matrix_small (void)
{
  const float a[4] = { 1, 0, 1, 0 }, b[4] = { 1, 0, 0.5f, 0.5f };
  const float *heads[3] = { a, a, b };
  const double ab = (1.5 * log (2.0) - 0.75 * log (3.0)) / 2;
  double m[9];

  g_assert_cmpint (sc_head_distance_matrix (heads, 3, 2, 2, 1, NULL, NULL, m, NULL), ==, SC_OK);
  for (int i = 0; i < 3; i++)
    g_assert_cmpfloat (m[i * 3 + i], ==, 0.0);
  g_assert_cmpfloat_with_epsilon (m[1], 0.0, TOL);
  g_assert_cmpfloat_with_epsilon (m[2], ab, TOL);
  g_assert_cmpfloat_with_epsilon (m[5], ab, TOL);
  g_assert_cmpfloat (m[3], ==, m[1]);
  g_assert_cmpfloat (m[6], ==, m[2]);
  g_assert_cmpfloat (m[7], ==, m[5]);
}

/* A random causal head of @n tokens (rows normalised over keys 0..i, some exact zeros). */
static void
random_causal (GRand *r, int n, float *out)
{
  for (int i = 0; i < n; i++)
    {
      float *row = out + (gsize) i * n;
      double sum = 0;

      for (int j = 0; j < n; j++)
        {
          row[j] = j <= i && g_rand_int_range (r, 0, 5) != 0
                   ? (float) pow (g_rand_double (r), 4) : 0.0f;
          sum += row[j];
        }
      if (sum == 0)
        row[i] = 1, sum = 1;
      for (int j = 0; j < n; j++)
        row[j] = (float) (row[j] / sum);
    }
}

/* The fast matrix (one float log per element of m) against pairwise calls of the reference
 * (two double logs per element), for 12 random causal heads of 37 tokens, on 1 and on 3
 * threads: within 1e-6 nats, exactly symmetric, zero diagonal; 1 and 3 threads agree
 * bit for bit (each pair is computed by one task either way). */
static void
test_matrix_vs_pairs (void)
{
  enum { H = 12, N = 37 };
  g_autoptr (GRand) r = g_rand_new_with_seed (7);
  g_autofree float *buf = g_new (float, H * N * N);
  const float *heads[H];
  double m1[H * H], m3[H * H];

  for (int h = 0; h < H; h++)
    {
      random_causal (r, N, buf + (gsize) h * N * N);
      heads[h] = buf + (gsize) h * N * N;
    }
  g_assert_cmpint (sc_head_distance_matrix (heads, H, N, N, 1, NULL, NULL, m1, NULL), ==, SC_OK);
  g_assert_cmpint (sc_head_distance_matrix (heads, H, N, N, 3, NULL, NULL, m3, NULL), ==, SC_OK);
  for (int a = 0; a < H; a++)
    for (int b = 0; b < H; b++)
      {
        double want;

        g_assert_cmpint (sc_head_distance (heads[a], heads[b], N, N, &want, NULL), ==, SC_OK);
        g_assert_cmpfloat_with_epsilon (m1[a * H + b], want, TOL);
        g_assert_cmpfloat (m1[a * H + b], ==, m1[b * H + a]);
        g_assert_cmpfloat (m1[a * H + b], ==, m3[a * H + b]);
        if (a == b)
          g_assert_cmpfloat (m1[a * H + b], ==, 0.0);
        else
          g_assert_cmpfloat (m1[a * H + b], >, 0.0);
      }
}

typedef struct {
  int calls;
  int stop_after;
  size_t last_done, total;
} Progress;

static bool
progress_cb (void *user, size_t done, size_t total)
{
  Progress *p = user;

  g_assert_cmpuint (done, >=, p->last_done);
  g_assert_cmpuint (done, <=, total);
  p->last_done = done;
  p->total = total;
  return ++p->calls < p->stop_after;
}

/* 40 heads make 780 pairs in batches of 4 rows (one thread): progress is called more than
 * once, ends at done == total when not stopped, and returning false cancels. */
static void
test_progress_cancel (void)
{
  enum { H = 40, N = 4 };
  g_autoptr (GRand) r = g_rand_new_with_seed (3);
  g_autofree float *buf = g_new (float, H * N * N);
  g_autofree double *m = g_new (double, H * H);
  const float *heads[H];
  Progress p = { 0, 1000, 0, 0 };
  ScError err = { 0 };

  for (int h = 0; h < H; h++)
    {
      random_causal (r, N, buf + (gsize) h * N * N);
      heads[h] = buf + (gsize) h * N * N;
    }
  g_assert_cmpint (sc_head_distance_matrix (heads, H, N, N, 1, progress_cb, &p, m, &err), ==,
                   SC_OK);
  g_assert_cmpint (p.calls, >, 1);
  g_assert_cmpuint (p.last_done, ==, 780);
  g_assert_cmpuint (p.total, ==, 780);

  p = (Progress) { 0, 2, 0, 0 };
  g_assert_cmpint (sc_head_distance_matrix (heads, H, N, N, 1, progress_cb, &p, m, &err), ==,
                   SC_ERR_CANCELLED);
  g_assert_cmpint (p.calls, ==, 2);
  g_assert_nonnull (strstr (err.message, "cancelled"));
}

static void
test_bad_args (void)
{
  const float a[1] = { 1 };
  const float *heads[2] = { a, NULL };
  double d[4];
  ScError err = { 0 };

  g_assert_cmpint (sc_head_distance (a, NULL, 1, 1, d, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_head_distance (a, a, 0, 1, d, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_head_distance_matrix (heads, 2, 1, 1, 1, NULL, NULL, d, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_head_distance_matrix (heads, 0, 1, 1, 1, NULL, NULL, d, &err), ==,
                   SC_ERR_INVALID_ARG);
  /* One head: a 1 x 1 matrix holding 0. */
  g_assert_cmpint (sc_head_distance_matrix (heads, 1, 1, 1, 1, NULL, NULL, d, &err), ==, SC_OK);
  g_assert_cmpfloat (d[0], ==, 0.0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/head-distance/identical", test_identical);
  g_test_add_func ("/head-distance/disjoint", test_disjoint);
  g_test_add_func ("/head-distance/known", test_known);
  g_test_add_func ("/head-distance/head-mean", test_head_mean);
  g_test_add_func ("/head-distance/matrix-small", test_matrix_small);
  g_test_add_func ("/head-distance/matrix-vs-pairs", test_matrix_vs_pairs);
  g_test_add_func ("/head-distance/progress-cancel", test_progress_cancel);
  g_test_add_func ("/head-distance/bad-args", test_bad_args);
  return g_test_run ();
}
