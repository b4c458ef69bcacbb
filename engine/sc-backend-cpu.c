/* sc-backend-cpu.c — the two CPU backends (see sc-backend.h).
 *
 * "cpu-ref" is the ground truth: every op is a plain loop that accumulates in double and
 * is written to be checked by eye against the math in sc-backend.h. "cpu" is the fast
 * path: projections and the two attention products go to OpenBLAS sgemm, the rest is
 * threaded with OpenMP. Tests (tests/test-backend.c) hold "cpu" to "cpu-ref" with
 * explicit tolerances; never the other way round.
 *
 * Ops that are already memory-bound and simple (rope, swiglu, add, get_rows) share one
 * implementation between the two backends.
 */
#include "sc-backend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "sc-blas.h"
#include "sc-math.h"

/* ------------------------------------------------------------------------------------ */
/* Shared ops                                                                             */

static float *
cpu_alloc (ScBackend *b, size_t n)
{
  /* 64-byte alignment: one cache line, and what AVX-512 loads would want. */
  void *p = NULL;
  size_t bytes = n * sizeof (float);

  if (n == 0 || n > SIZE_MAX / sizeof (float))
    return NULL;
  bytes = (bytes + 63) & ~(size_t) 63;
  if (posix_memalign (&p, 64, bytes) != 0)
    return NULL;
  return p;
}

static void
cpu_free (ScBackend *b, float *buf)
{
  free (buf);
}

static ScStatus
cpu_copy_in (ScBackend *b, float *dst, const float *src, size_t n, ScError *err)
{
  memmove (dst, src, n * sizeof (float));
  return SC_OK;
}

static const float *
cpu_weight (ScBackend *b, const float *host, size_t n, ScError *err)
{
  return host;
}

static ScStatus
cpu_copy (ScBackend *b, float *dst, const float *src, size_t n)
{
  memmove (dst, src, n * sizeof (float));
  return SC_OK;
}

static ScStatus
cpu_get_rows (ScBackend *b, float *dst, const float *table, const int32_t *ids, int n, int dim)
{
  int i;

  for (i = 0; i < n; i++)
    memcpy (dst + (size_t) i * dim, table + (size_t) ids[i] * dim, (size_t) dim * sizeof (float));
  return SC_OK;
}

/* RMSNorm with the sum of squares in double, as ggml does (ggml_float). Shared: the
 * reduction order is the only freedom and double makes it irrelevant at float precision. */
static ScStatus
cpu_rmsnorm (ScBackend *b, float *y, const float *x, const float *w, int n, int dim, float eps)
{
  int i;

#pragma omp parallel for num_threads(b->n_threads) if (n > 16)
  for (i = 0; i < n; i++)
    {
      const float *xr = x + (size_t) i * dim;
      float *yr = y + (size_t) i * dim;
      double ss = 0.0;
      float scale;
      int j;

      for (j = 0; j < dim; j++)
        ss += (double) xr[j] * xr[j];
      scale = (float) (1.0 / sqrt (ss / dim + (double) eps));
      for (j = 0; j < dim; j++)
        yr[j] = xr[j] * scale * w[j];
    }
  return SC_OK;
}

/* Angles are computed in double (pos * base^(-2j/n_rot)) and rounded once, so the error
 * does not grow with the position the way repeated float multiplication does. */
static ScStatus
cpu_rope (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot, int pos0,
          float base)
{
  const int half = n_rot / 2;
  float *cs;
  int i;

  cs = malloc ((size_t) n * half * 2 * sizeof *cs);
  if (cs == NULL)
    return SC_ERR_NOMEM;
  for (i = 0; i < n; i++)
    {
      int j;
      for (j = 0; j < half; j++)
        {
          double theta = (double) (pos0 + i) * pow ((double) base, -2.0 * j / n_rot);
          cs[((size_t) i * half + j) * 2] = (float) cos (theta);
          cs[((size_t) i * half + j) * 2 + 1] = (float) sin (theta);
        }
    }
#pragma omp parallel for num_threads(b->n_threads) if (n > 16)
  for (i = 0; i < n; i++)
    {
      int h, j;
      for (h = 0; h < n_heads; h++)
        {
          float *xh = x + (size_t) i * n_heads * head_dim + (size_t) h * head_dim;
          for (j = 0; j < half; j++)
            {
              const float *c = cs + ((size_t) i * half + j) * 2;
              sc_rope_rotate_pair (&xh[2 * j], &xh[2 * j + 1], c[0], c[1]);
            }
        }
    }
  free (cs);
  return SC_OK;
}

static ScStatus
cpu_swiglu (ScBackend *b, float *y, const float *gate, const float *up, size_t n)
{
  size_t i;

#pragma omp parallel for num_threads(b->n_threads) if (n > 65536)
  for (i = 0; i < n; i++)
    {
      float g = gate[i];
      y[i] = g / (1.0f + expf (-g)) * up[i];
    }
  return SC_OK;
}

static ScStatus
cpu_add (ScBackend *b, float *y, const float *x, size_t n)
{
  size_t i;

  for (i = 0; i < n; i++)
    y[i] += x[i];
  return SC_OK;
}

/* The masking rules shared by both attention implementations: may the query at position
 * p see key j? */
static inline bool
key_allowed (int p, int j, const uint8_t *key_mask, bool row_all_masked)
{
  if (j > p)
    return false;
  if (row_all_masked)
    return j == p;
  return key_mask == NULL || key_mask[j] == 0;
}

static bool
row_all_masked (int p, const uint8_t *key_mask)
{
  int j;

  if (key_mask == NULL)
    return false;
  for (j = 0; j <= p; j++)
    if (key_mask[j] == 0)
      return false;
  return true;
}

/* Softmax over the allowed entries of one score row (query at position p, n_k keys), in
 * place; every other entry becomes exactly 0. */
static void
softmax_row (float *row, int p, int n_k, const uint8_t *key_mask)
{
  bool all_masked = row_all_masked (p, key_mask);
  float max = -INFINITY;
  double sum = 0.0;
  float inv;
  int j;

  for (j = 0; j <= p; j++)
    if (key_allowed (p, j, key_mask, all_masked) && row[j] > max)
      max = row[j];
  for (j = 0; j < n_k; j++)
    {
      if (key_allowed (p, j, key_mask, all_masked))
        {
          row[j] = expf (row[j] - max);
          sum += row[j];
        }
      else
        row[j] = 0.0f;
    }
  inv = (float) (1.0 / sum);
  for (j = 0; j <= p; j++)
    row[j] *= inv;
}

/* ------------------------------------------------------------------------------------ */
/* cpu-ref: scalar loops, double accumulation                                            */

static ScStatus
ref_matmul (ScBackend *b, float *y, const float *x, const float *w, int n, int in, int out,
            bool accumulate)
{
  int i, o, k;

  for (i = 0; i < n; i++)
    for (o = 0; o < out; o++)
      {
        double acc = 0.0;
        for (k = 0; k < in; k++)
          acc += (double) x[(size_t) i * in + k] * w[(size_t) o * in + k];
        y[(size_t) i * out + o] = (float) (accumulate ? y[(size_t) i * out + o] + acc : acc);
      }
  return SC_OK;
}

static ScStatus
ref_attention (ScBackend *b, float *out, float *probs, const float *q, const float *k,
               const float *v, int n_q, int n_k, int n_heads, int n_kv, int d, float scale,
               const uint8_t *key_mask, const float *head_scale)
{
  const int group = n_heads / n_kv, first = n_k - n_q;
  const size_t qs = (size_t) n_heads * d, kvs = (size_t) n_kv * d;
  int h, i, j, c;

  for (h = 0; h < n_heads; h++)
    {
      const int g = h / group;
      const float hs = head_scale != NULL ? head_scale[h] : 1.0f;

      for (i = 0; i < n_q; i++)
        {
          const int p = first + i;
          float *row = probs + ((size_t) h * n_q + i) * n_k;
          const float *qi = q + i * qs + (size_t) h * d;

          /* 1. scores s_ij = scale * q_i . k_j for the keys the query may see */
          for (j = 0; j < n_k; j++)
            {
              const float *kj = k + j * kvs + (size_t) g * d;
              double dot = 0.0;
              if (j > p)
                {
                  row[j] = 0.0f;
                  continue;
                }
              for (c = 0; c < d; c++)
                dot += (double) qi[c] * kj[c];
              row[j] = (float) (dot * scale);
            }
          /* 2. masked softmax */
          softmax_row (row, p, n_k, key_mask);
          /* 3. o_i = head_scale * sum_j p_ij v_j */
          for (c = 0; c < d; c++)
            {
              double acc = 0.0;
              for (j = 0; j <= p; j++)
                acc += (double) row[j] * v[j * kvs + (size_t) g * d + c];
              out[i * qs + (size_t) h * d + c] = (float) acc * hs;
            }
        }
    }
  return SC_OK;
}

/* ------------------------------------------------------------------------------------ */
/* cpu: OpenBLAS + OpenMP                                                                */

static ScStatus
blas_matmul (ScBackend *b, float *y, const float *x, const float *w, int n, int in, int out,
             bool accumulate)
{
  /* Below this many multiply-adds a product is faster on one core than split across
   * threads that must be woken and joined: a decode step's products (1 x 576 x 1536 =
   * 0.9 M; the vocabulary projection 1 x 576 x 49152 = 28 M) are memory-bound matrix-vector
   * products; a 128-token prompt's smallest projection is 128 x 576 x 192 = 14 M. */
  const double min_parallel_macs = 3.2e7;
  const bool serial = b->n_threads > 1 && (double) n * in * out < min_parallel_macs;

  if (serial)
    sc_blas_set_threads (1);
  /* y (n, out) = x (n, in) . w^T, with w stored (out, in): RowMajor, NoTrans, Trans.
   * One row (a decode step) is a matrix-vector product: sgemv reads W once, where sgemm
   * would first copy all of it into its packed layout. */
  if (n == 1)
    sc_sgemv (out, in, 1.0f, w, in, x, accumulate ? 1.0f : 0.0f, y);
  else
    sc_sgemm (true, n, out, in, 1.0f, x, in, w, in, accumulate ? 1.0f : 0.0f, y, out);
  if (serial)
    sc_blas_set_threads (b->n_threads);
  return SC_OK;
}

static ScStatus
blas_attention (ScBackend *b, float *out, float *probs, const float *q, const float *k,
                const float *v, int n_q, int n_k, int n_heads, int n_kv, int d, float scale,
                const uint8_t *key_mask, const float *head_scale)
{
  const int group = n_heads / n_kv, first = n_k - n_q;
  const int qs = n_heads * d, kvs = n_kv * d;
  int h;

  /* Heads are independent: one OpenMP thread per head, single-threaded BLAS inside; a
   * decode step's few multiply-adds stay on one thread. */
  const bool parallel = (double) n_q * n_k * d * n_heads >= 4e6;

  sc_blas_set_threads (1);
#pragma omp parallel for schedule(dynamic, 1) num_threads(b->n_threads) if (parallel)
  for (h = 0; h < n_heads; h++)
    {
      const int g = h / group;
      const float hs = head_scale != NULL ? head_scale[h] : 1.0f;
      float *p = probs + (size_t) h * n_q * n_k;
      int i;

      /* 1. S (n_q, n_k) = scale * Q_h (n_q, d) . K_g^T; lda/ldb stride over the interleaved
       *    heads. The causal upper triangle is computed and then overwritten: one sgemm is
       *    still faster than n_q dot-product calls at the sizes we run. */
      sc_sgemm (true, n_q, n_k, d, scale, q + (size_t) h * d, qs, k + (size_t) g * d, kvs, 0.0f,
                p, n_k);
      /* 2. masked softmax per row */
      for (i = 0; i < n_q; i++)
        softmax_row (p + (size_t) i * n_k, first + i, n_k, key_mask);
      /* 3. O_h (n_q, d) = head_scale * P (n_q, n_k) . V_g (n_k, d) */
      sc_sgemm (false, n_q, d, n_k, hs, p, n_k, v + (size_t) g * d, kvs, 0.0f,
                out + (size_t) h * d, qs);
    }
  sc_blas_set_threads (b->n_threads);
  return SC_OK;
}

/* ------------------------------------------------------------------------------------ */

static void
cpu_destroy (ScBackend *b)
{
  free (b);
}

static const ScBackendOps cpu_ops = {
  .name = "cpu",
  .destroy = cpu_destroy,
  .alloc = cpu_alloc,
  .free = cpu_free,
  .upload = cpu_copy_in,
  .download = cpu_copy_in,
  .weight = cpu_weight,
  .get_rows = cpu_get_rows,
  .rmsnorm = cpu_rmsnorm,
  .matmul = blas_matmul,
  .rope = cpu_rope,
  .attention = blas_attention,
  .swiglu = cpu_swiglu,
  .add = cpu_add,
  .copy = cpu_copy,
};

static const ScBackendOps cpu_ref_ops = {
  .name = "cpu-ref",
  .destroy = cpu_destroy,
  .alloc = cpu_alloc,
  .free = cpu_free,
  .upload = cpu_copy_in,
  .download = cpu_copy_in,
  .weight = cpu_weight,
  .get_rows = cpu_get_rows,
  .rmsnorm = cpu_rmsnorm,
  .matmul = ref_matmul,
  .rope = cpu_rope,
  .attention = ref_attention,
  .swiglu = cpu_swiglu,
  .add = cpu_add,
  .copy = cpu_copy,
};

ScBackend *
sc_backend_cpu_new (int n_threads, ScError *err)
{
  ScBackend *b;

  if (sc_blas_init (err) != SC_OK)
    return NULL;
  b = calloc (1, sizeof *b);
  if (b == NULL)
    {
      sc_error_set (err, SC_ERR_NOMEM, "out of memory");
      return NULL;
    }
#ifdef _OPENMP
  if (n_threads <= 0)
    n_threads = omp_get_num_procs ();
#endif
  if (n_threads <= 0)
    n_threads = 1;
  b->ops = &cpu_ops;
  b->n_threads = n_threads;
  sc_blas_set_threads (n_threads);
  snprintf (b->description, sizeof b->description, "CPU, %d thread%s, %s", n_threads,
            n_threads == 1 ? "" : "s", sc_blas_describe ());
  return b;
}

ScBackend *
sc_backend_cpu_ref_new (void)
{
  ScBackend *b = calloc (1, sizeof *b);

  if (b == NULL)
    return NULL;
  b->ops = &cpu_ref_ops;
  b->n_threads = 1;
  snprintf (b->description, sizeof b->description, "CPU reference (scalar, double accumulation)");
  return b;
}

void
sc_backend_free (ScBackend *b)
{
  if (b != NULL)
    b->ops->destroy (b);
}
