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
#include "backend/sc-backend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/sc-blas.h"
#include "core/sc-math.h"
#include "core/sc-pool.h"

/* The CPU backends' state: the public part and the pool that runs their loops. */
typedef struct {
  ScBackend base;
  ScPool *pool;
} CpuBackend;

static ScPool *
pool_of (ScBackend *b)
{
  return ((CpuBackend *) b)->pool;
}

/* Rows [first, last) of task @t when @n rows are split into @n_tasks even chunks. */
static void
chunk (int n, int n_tasks, int t, int *first, int *last)
{
  *first = (int) ((long long) n * t / n_tasks);
  *last = (int) ((long long) n * (t + 1) / n_tasks);
}

/* How many tasks to split @n rows of @row_cost units into: one per thread when the whole
 * is worth waking them for (~64k units, a few microseconds of work), else one. */
static int
n_tasks_for (ScBackend *b, int n, double row_cost)
{
  int threads = sc_pool_n_threads (pool_of (b));
  if (threads <= 1 || n < 2 || n * row_cost < 65536.0)
    return 1;
  return n < threads ? n : threads;
}

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
cpu_copy_2d (ScBackend *b, float *dst, int ld_dst, const float *src, int ld_src, int rows,
             int cols)
{
  int i;

  for (i = 0; i < rows; i++)
    memcpy (dst + (size_t) i * ld_dst, src + (size_t) i * ld_src, (size_t) cols * sizeof (float));
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
typedef struct {
  float *y;
  const float *x, *w;
  int n, dim, n_tasks;
  float eps;
} RmsJob;

static void
rmsnorm_task (void *ctx, int t)
{
  const RmsJob *j = ctx;
  int i, first, last;

  chunk (j->n, j->n_tasks, t, &first, &last);
  for (i = first; i < last; i++)
    {
      const float *xr = j->x + (size_t) i * j->dim;
      float *yr = j->y + (size_t) i * j->dim;
      double ss = 0.0;
      float scale;
      int c;

      for (c = 0; c < j->dim; c++)
        ss += (double) xr[c] * xr[c];
      scale = (float) (1.0 / sqrt (ss / j->dim + (double) j->eps));
      for (c = 0; c < j->dim; c++)
        yr[c] = xr[c] * scale * j->w[c];
    }
}

static ScStatus
cpu_rmsnorm (ScBackend *b, float *y, const float *x, const float *w, int n, int dim, float eps)
{
  RmsJob j = { y, x, w, n, dim, n_tasks_for (b, n, dim), eps };

  sc_pool_run (pool_of (b), j.n_tasks, rmsnorm_task, &j);
  return SC_OK;
}

/* Angles are computed in double (pos * base^(-2j/n_rot)) and rounded once, so the error
 * does not grow with the position the way repeated float multiplication does. */
typedef struct {
  float *x;
  const float *cs; /* (n, n_rot/2, 2) cos, sin */
  int n, n_heads, head_dim, half, n_tasks;
} RopeJob;

static void
rope_task (void *ctx, int t)
{
  const RopeJob *j = ctx;
  int i, h, c, first, last;

  chunk (j->n, j->n_tasks, t, &first, &last);
  for (i = first; i < last; i++)
    for (h = 0; h < j->n_heads; h++)
      {
        float *xh = j->x + ((size_t) i * j->n_heads + h) * j->head_dim;
        for (c = 0; c < j->half; c++)
          {
            const float *cs = j->cs + ((size_t) i * j->half + c) * 2;
            sc_rope_rotate_pair (&xh[2 * c], &xh[2 * c + 1], cs[0], cs[1]);
          }
      }
}

static ScStatus
cpu_rope (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot, int pos0,
          float base)
{
  RopeJob j = { x, NULL, n, n_heads, head_dim, n_rot / 2,
                n_tasks_for (b, n, (double) n_heads * head_dim) };
  float *cs;
  int i, c;

  cs = malloc ((size_t) n * j.half * 2 * sizeof *cs);
  if (cs == NULL)
    return SC_ERR_NOMEM;
  for (i = 0; i < n; i++)
    for (c = 0; c < j.half; c++)
      {
        double theta = (double) (pos0 + i) * pow ((double) base, -2.0 * c / n_rot);
        cs[((size_t) i * j.half + c) * 2] = (float) cos (theta);
        cs[((size_t) i * j.half + c) * 2 + 1] = (float) sin (theta);
      }
  j.cs = cs;
  sc_pool_run (pool_of (b), j.n_tasks, rope_task, &j);
  free (cs);
  return SC_OK;
}

typedef struct {
  float *y;
  const float *gu;
  int n, f, n_tasks;
} SwigluJob;

static void
swiglu_task (void *ctx, int t)
{
  const SwigluJob *j = ctx;
  int i, c, first, last;

  chunk (j->n, j->n_tasks, t, &first, &last);
  for (i = first; i < last; i++)
    {
      const float *restrict gate = j->gu + (size_t) i * 2 * j->f;
      const float *restrict up = gate + j->f;
      float *restrict y = j->y + (size_t) i * j->f;
      for (c = 0; c < j->f; c++)
        y[c] = gate[c] / (1.0f + expf (-gate[c])) * up[c];
    }
}

static ScStatus
cpu_swiglu (ScBackend *b, float *y, const float *gu, int n, int f)
{
  /* an expf costs ~8 of rmsnorm's multiply-adds */
  SwigluJob j = { y, gu, n, f, n_tasks_for (b, n, 8.0 * f) };

  sc_pool_run (pool_of (b), j.n_tasks, swiglu_task, &j);
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
softmax_row_exp (float *row, int p, int n_k, const uint8_t *key_mask, bool fast_exp)
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
          row[j] = fast_exp ? sc_expf (row[j] - max) : expf (row[j] - max);
          sum += row[j];
        }
      else
        row[j] = 0.0f;
    }
  inv = (float) (1.0 / sum);
  for (j = 0; j <= p; j++)
    row[j] *= inv;
}

static void
softmax_row (float *row, int p, int n_k, const uint8_t *key_mask)
{
  softmax_row_exp (row, p, n_k, key_mask, false);
}

/* The fast path's softmax of one row: the same result as softmax_row() to a few ulp, in
 * loops that vectorise: 16 running maxima and 16 partial sums (added in double at the
 * end, in a fixed order, so the result does not depend on the thread or the machine's
 * vector width) and sc_expf. Rows with masked keys take the shared scalar path. */
static void
softmax_row_fast (float *restrict row, int p, int n_k, const uint8_t *key_mask)
{
  enum { LANES = 16 };
  float lane_max[LANES], lane_sum[LANES], max, inv;
  const int len = p + 1, whole = len / LANES * LANES;
  double sum = 0.0;
  int j, l;

  /* A row with masked keys takes the scalar path (with the same exp); a mask that masks
   * nothing this row can see changes nothing, bit for bit. */
  if (key_mask != NULL)
    for (j = 0; j <= p; j++)
      if (key_mask[j])
        {
          softmax_row_exp (row, p, n_k, key_mask, true);
          return;
        }
  for (l = 0; l < LANES; l++)
    {
      lane_max[l] = -INFINITY;
      lane_sum[l] = 0.0f;
    }
  for (j = 0; j < whole; j += LANES)
    for (l = 0; l < LANES; l++)
      lane_max[l] = row[j + l] > lane_max[l] ? row[j + l] : lane_max[l];
  max = -INFINITY;
  for (l = 0; l < LANES; l++)
    max = lane_max[l] > max ? lane_max[l] : max;
  for (j = whole; j < len; j++)
    max = row[j] > max ? row[j] : max;

  for (j = 0; j < whole; j += LANES)
    for (l = 0; l < LANES; l++)
      {
        const float e = sc_expf (row[j + l] - max);
        row[j + l] = e;
        lane_sum[l] += e;
      }
  for (l = 0; l < LANES; l++)
    sum += lane_sum[l];
  for (j = whole; j < len; j++)
    {
      row[j] = sc_expf (row[j] - max);
      sum += row[j];
    }
  inv = (float) (1.0 / sum);
  for (j = 0; j < len; j++)
    row[j] *= inv;
  for (j = len; j < n_k; j++)
    row[j] = 0.0f;
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

/* The attention op's arguments, shared by its per-head tasks. */
typedef struct {
  float *out, *probs;
  const float *q, *k, *v;
  int n_q, n_k, n_heads, n_kv, d;
  float scale;
  const uint8_t *key_mask;
  const float *head_scale;
  const float *kt; /* (n_kv, d, n_k): each KV head's keys, transposed */
} AttnJob;

/* One head, written as vector loops the compiler turns into SIMD without reassociating a
 * float reduction (so results do not depend on -ffast-math), four query rows at a time:
 *   1. with K_g^T (d, n_k) transposed by the caller, a query row's scores are d AXPYs over
 *      the contiguous keys it may see: s[0..p] += q[c] * Kt[c][0..p];
 *   2. masked softmax of the row;
 *   3. o[0..d] = head_scale * sum_{j<=p} P[j] * V_g[j][0..d], AXPYs over contiguous rows.
 * Only the causal triangle is computed (half of a full product). The kernel uses no BLAS:
 * OpenBLAS's OpenMP build must not be entered from several of our threads at once. */
static void
attention_head_task (void *ctx, int h)
{
  enum { R = 4 }; /* query rows per block: each key/value load serves R rows */
  const AttnJob *j = ctx;
  const int g = h / (j->n_heads / j->n_kv), first = j->n_k - j->n_q, d = j->d;
  const size_t qs = (size_t) j->n_heads * d, kvs = (size_t) j->n_kv * d;
  const float hs = j->head_scale != NULL ? j->head_scale[h] : 1.0f;
  const float *kt = j->kt + (size_t) g * d * j->n_k;
  int i0, r, c, key;

  for (i0 = 0; i0 < j->n_q; i0 += R)
    {
      const int nr = j->n_q - i0 < R ? j->n_q - i0 : R;
      const int pmax = first + i0 + nr - 1; /* the block's last row sees keys 0..pmax */
      float *rows[R];
      const float *qrow[R];
      float *orow[R];

      for (r = 0; r < nr; r++)
        {
          rows[r] = j->probs + ((size_t) h * j->n_q + i0 + r) * j->n_k;
          qrow[r] = j->q + (i0 + r) * qs + (size_t) h * d;
          orow[r] = j->out + (i0 + r) * qs + (size_t) h * d;
          for (key = 0; key <= pmax; key++)
            rows[r][key] = 0.0f;
        }
      /* 1. scores for keys 0..pmax (entries past a row's own position are discarded by
       *    the softmax, which writes exact zeros there) */
      for (c = 0; c < d; c++)
        {
          const float *restrict ktc = kt + (size_t) c * j->n_k;
          if (nr == R)
            {
              float *restrict s0 = rows[0], *restrict s1 = rows[1], *restrict s2 = rows[2],
                              *restrict s3 = rows[3];
              const float q0 = qrow[0][c] * j->scale, q1 = qrow[1][c] * j->scale,
                          q2 = qrow[2][c] * j->scale, q3 = qrow[3][c] * j->scale;
              for (key = 0; key <= pmax; key++)
                {
                  const float kv = ktc[key];
                  s0[key] += q0 * kv;
                  s1[key] += q1 * kv;
                  s2[key] += q2 * kv;
                  s3[key] += q3 * kv;
                }
            }
          else
            for (r = 0; r < nr; r++)
              {
                float *restrict sr = rows[r];
                const float qc = qrow[r][c] * j->scale;
                for (key = 0; key <= pmax; key++)
                  sr[key] += qc * ktc[key];
              }
        }
      /* 2. masked softmax per row */
      for (r = 0; r < nr; r++)
        softmax_row_fast (rows[r], first + i0 + r, j->n_k, j->key_mask);
      /* 3. o_r = head_scale * sum_key P[r][key] * V_g[key] */
      for (r = 0; r < nr; r++)
        for (c = 0; c < d; c++)
          orow[r][c] = 0.0f;
      for (key = 0; key <= pmax; key++)
        {
          const float *restrict vj = j->v + key * kvs + (size_t) g * d;
          for (r = 0; r < nr; r++)
            {
              float *restrict o = orow[r];
              const float w = rows[r][key] * hs;
              if (w == 0.0f)
                continue;
              for (c = 0; c < d; c++)
                o[c] += w * vj[c];
            }
        }
    }
}

static ScStatus
blas_attention (ScBackend *b, float *out, float *probs, const float *q, const float *k,
                const float *v, int n_q, int n_k, int n_heads, int n_kv, int d, float scale,
                const uint8_t *key_mask, const float *head_scale)
{
  AttnJob j = { out, probs, q, k, v, n_q, n_k, n_heads, n_kv, d, scale, key_mask, head_scale,
                NULL };
  /* Heads are independent: one pool task per head; a decode step's few multiply-adds
   * stay on the calling thread. */
  const bool parallel = (double) n_q * n_k * d * n_heads >= 4e6;
  const size_t kvs = (size_t) n_kv * d;
  float *kt = malloc ((size_t) n_kv * d * n_k * sizeof *kt);
  int g, c, key;

  if (kt == NULL)
    return SC_ERR_NOMEM;
  /* Kt[g] (d, n_k) = K_g^T, once per KV head (each serves n_heads / n_kv query heads) */
  for (g = 0; g < n_kv; g++)
    for (key = 0; key < n_k; key++)
      for (c = 0; c < d; c++)
        kt[((size_t) g * d + c) * n_k + key] = k[key * kvs + (size_t) g * d + c];
  j.kt = kt;
  if (parallel)
    sc_pool_run (pool_of (b), n_heads, attention_head_task, &j);
  else
    for (int h = 0; h < n_heads; h++)
      attention_head_task (&j, h);
  free (kt);
  return SC_OK;
}

/* ------------------------------------------------------------------------------------ */

static void
cpu_destroy (ScBackend *b)
{
  sc_pool_free (pool_of (b));
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
  .copy_2d = cpu_copy_2d,
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
  .copy_2d = cpu_copy_2d,
};

static CpuBackend *
cpu_backend_alloc (const ScBackendOps *ops, int n_threads, ScError *err)
{
  CpuBackend *cb = calloc (1, sizeof *cb);

  if (cb != NULL && (cb->pool = sc_pool_new (n_threads)) == NULL)
    {
      free (cb);
      cb = NULL;
    }
  if (cb == NULL)
    {
      sc_error_set (err, SC_ERR_NOMEM, "out of memory or threads for the CPU backend");
      return NULL;
    }
  cb->base.ops = ops;
  cb->base.n_threads = sc_pool_n_threads (cb->pool);
  return cb;
}

ScBackend *
sc_backend_cpu_new (int n_threads, ScError *err)
{
  CpuBackend *cb;

  if (sc_blas_init (err) != SC_OK)
    return NULL;
  if ((cb = cpu_backend_alloc (&cpu_ops, n_threads, err)) == NULL)
    return NULL;
  sc_blas_set_threads (cb->base.n_threads);
  snprintf (cb->base.description, sizeof cb->base.description, "CPU, %d thread%s, %s",
            cb->base.n_threads, cb->base.n_threads == 1 ? "" : "s", sc_blas_describe ());
  return &cb->base;
}

ScBackend *
sc_backend_cpu_ref_new (void)
{
  CpuBackend *cb = cpu_backend_alloc (&cpu_ref_ops, 1, NULL);

  if (cb == NULL)
    return NULL;
  snprintf (cb->base.description, sizeof cb->base.description,
            "CPU reference (scalar, double accumulation)");
  return &cb->base;
}

void
sc_backend_free (ScBackend *b)
{
  if (b != NULL)
    b->ops->destroy (b);
}
