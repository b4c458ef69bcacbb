/* sc-backend-cpu.c — the fast CPU backend "cpu", and the ops both CPU backends share.
 *
 * "cpu": projections go to OpenBLAS (sgemm, or sgemv for one row); attention (its kernel,
 * and the capture op that hands heads over as fp16, in sc-backend-cpu-attn.c), norms and
 * activations are vector loops threaded on the engine's own pool (core/sc-pool.h); the
 * engine uses no OpenMP itself (only OpenBLAS's OpenMP build may, inside sgemm). Its
 * ground truth is "cpu-ref" (sc-backend-ref.c): tests/engine/test-backend-ops.c
 * holds every op here to it with explicit tolerances; never the other way round.
 *
 * Ops that are already memory-bound and simple (memory, copies, get_rows, rmsnorm, rope,
 * swiglu, add, add_bias) have one implementation shared by the two backends, declared in
 * sc-backend-cpu-private.h; so does the masked softmax of one row, which the fast kernel
 * falls back to for rows with masked keys.
 *
 * What it is not: the contract (sc-backend-impl.h), BLAS loading (sc-blas.c).
 */
#include "backend/sc-backend-cpu-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/sc-blas.h"
#include "core/sc-math.h"

ScPool *
sc_cpu_pool (ScBackend *b)
{
  return ((ScCpuBackend *) b)->pool;
}

void
sc_cpu_chunk (int n, int n_tasks, int t, int *first, int *last)
{
  *first = (int) ((long long) n * t / n_tasks);
  *last = (int) ((long long) n * (t + 1) / n_tasks);
}

/* One task per thread when the whole is worth waking them for (~64k units, a few
 * microseconds of work), else one. */
int
sc_cpu_n_tasks_for (ScBackend *b, int n, double row_cost)
{
  int threads = sc_pool_n_threads (sc_cpu_pool (b));
  if (threads <= 1 || n < 2 || n * row_cost < 65536.0)
    return 1;
  return n < threads ? n : threads;
}

/* ------------------------------------------------------------------------------------ */
/* Shared ops                                                                             */

float *
sc_cpu_alloc (ScBackend *b, size_t n, ScError *err)
{
  /* 64-byte alignment: one cache line, and what AVX-512 loads would want. */
  void *p = NULL;
  size_t bytes = n * sizeof (float);

  if (n == 0 || n > SIZE_MAX / sizeof (float) - 64)
    {
      sc_error_set (err, n == 0 ? SC_ERR_INVALID_ARG : SC_ERR_NOMEM,
                    "%s: cannot allocate %zu floats", b->ops->name, n);
      return NULL;
    }
  bytes = (bytes + 63) & ~(size_t) 63;
  if (posix_memalign (&p, 64, bytes) != 0)
    {
      sc_error_set (err, SC_ERR_NOMEM, "%s: out of memory for %zu MB", b->ops->name, bytes >> 20);
      return NULL;
    }
  return p;
}

void
sc_cpu_free (ScBackend *b, float *buf)
{
  free (buf);
}

ScStatus
sc_cpu_copy_in (ScBackend *b, float *dst, const float *src, size_t n, ScError *err)
{
  memmove (dst, src, n * sizeof (float));
  return SC_OK;
}

const float *
sc_cpu_weight (ScBackend *b, const float *host, size_t n, ScError *err)
{
  return host;
}

ScStatus
sc_cpu_copy (ScBackend *b, float *dst, const float *src, size_t n, ScError *err)
{
  memmove (dst, src, n * sizeof (float));
  return SC_OK;
}

ScStatus
sc_cpu_copy_2d (ScBackend *b, float *dst, int ld_dst, const float *src, int ld_src, int rows,
                int cols, ScError *err)
{
  int i;

  for (i = 0; i < rows; i++)
    memcpy (dst + (size_t) i * ld_dst, src + (size_t) i * ld_src, (size_t) cols * sizeof (float));
  return SC_OK;
}

ScStatus
sc_cpu_get_rows (ScBackend *b, float *dst, const float *table, const int32_t *ids, int n, int dim,
                 ScError *err)
{
  int64_t row0 = 0;
  ScCpuWeight *qw = sc_cpu_weight_find (b, table, &row0);
  int i;

  if (qw != NULL)
    return sc_cpu_weight_get_rows (b, qw, row0, dst, ids, n, dim, err);
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

  sc_cpu_chunk (j->n, j->n_tasks, t, &first, &last);
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

ScStatus
sc_cpu_rmsnorm (ScBackend *b, float *y, const float *x, const float *w, int n, int dim, float eps,
                ScError *err)
{
  RmsJob j = { y, x, w, n, dim, sc_cpu_n_tasks_for (b, n, dim), eps };

  sc_pool_run (sc_cpu_pool (b), j.n_tasks, rmsnorm_task, &j);
  return SC_OK;
}

/* Angles are computed in double (pos * base^(-2j/n_rot)) and rounded once, so the error
 * does not grow with the position the way repeated float multiplication does. */
typedef struct {
  float *x;
  const float *cs; /* (n, n_rot/2, 2) cos, sin */
  int n, n_heads, head_dim, half, n_tasks;
  bool neox;       /* pairs (c, c + half) instead of (2c, 2c + 1) */
} RopeJob;

static void
rope_task (void *ctx, int t)
{
  const RopeJob *j = ctx;
  int i, h, c, first, last;

  sc_cpu_chunk (j->n, j->n_tasks, t, &first, &last);
  for (i = first; i < last; i++)
    for (h = 0; h < j->n_heads; h++)
      {
        float *xh = j->x + ((size_t) i * j->n_heads + h) * j->head_dim;
        for (c = 0; c < j->half; c++)
          {
            const float *cs = j->cs + ((size_t) i * j->half + c) * 2;
            if (j->neox)
              sc_rope_rotate_pair (&xh[c], &xh[c + j->half], cs[0], cs[1]);
            else
              sc_rope_rotate_pair (&xh[2 * c], &xh[2 * c + 1], cs[0], cs[1]);
          }
      }
}

/* Rotates by the angle times @dir: +1 is rope, -1 its inverse (the backward); @neox picks
 * the split-halves pairing; @ff (n_rot/2) or NULL divides pair c's angle by ff[c]. */
static ScStatus
rope_apply (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot, int pos0,
            float base, const float *ff, double dir, bool neox, ScError *err)
{
  RopeJob j = { x, NULL, n, n_heads, head_dim, n_rot / 2,
                sc_cpu_n_tasks_for (b, n, (double) n_heads * head_dim), neox };
  float *cs;
  int i, c;

  if (j.half == 0 || n <= 0) /* nothing to rotate (and malloc (0) may return NULL) */
    return SC_OK;
  cs = malloc ((size_t) n * j.half * 2 * sizeof *cs);
  if (cs == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "%s: rope: out of memory for %d positions",
                         b->ops->name, n);
  for (i = 0; i < n; i++)
    for (c = 0; c < j.half; c++)
      {
        double theta = (double) (pos0 + i) * pow ((double) base, -2.0 * c / n_rot);
        if (ff != NULL)
          theta /= (double) ff[c];
        cs[((size_t) i * j.half + c) * 2] = (float) cos (theta);
        cs[((size_t) i * j.half + c) * 2 + 1] = (float) (dir * sin (theta));
      }
  j.cs = cs;
  sc_pool_run (sc_cpu_pool (b), j.n_tasks, rope_task, &j);
  free (cs);
  return SC_OK;
}

ScStatus
sc_cpu_rope (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot, int pos0,
             float base, ScError *err)
{
  return rope_apply (b, x, n, n_heads, head_dim, n_rot, pos0, base, NULL, 1.0, false, err);
}

/* The same angles on the NeoX pairs (c, c + n_rot/2): ggml's GGML_ROPE_TYPE_NEOX. */
ScStatus
sc_cpu_rope_neox (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot, int pos0,
                  float base, ScError *err)
{
  return rope_apply (b, x, n, n_heads, head_dim, n_rot, pos0, base, NULL, 1.0, true, err);
}

/* Either pairing with a factor per pair, forwards or (@inverse) backwards. */
ScStatus
sc_cpu_rope_freq (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot, int pos0,
                  float base, const float *freq_factors, bool neox, bool inverse, ScError *err)
{
  return rope_apply (b, x, n, n_heads, head_dim, n_rot, pos0, base, freq_factors,
                     inverse ? -1.0 : 1.0, neox, err);
}

/* The rotation's transpose is its inverse: the same angles with the sine negated
 * (cos(-t) = cos t exactly, sin(-t) = -sin t exactly), so the backward undoes the forward
 * to rounding. */
ScStatus
sc_cpu_rope_backward (ScBackend *b, float *dx, int n, int n_heads, int head_dim, int n_rot,
                      int pos0, float base, ScError *err)
{
  return rope_apply (b, dx, n, n_heads, head_dim, n_rot, pos0, base, NULL, -1.0, false, err);
}

/* The same inverse on the NeoX pairs. */
ScStatus
sc_cpu_rope_neox_backward (ScBackend *b, float *dx, int n, int n_heads, int head_dim, int n_rot,
                           int pos0, float base, ScError *err)
{
  return rope_apply (b, dx, n, n_heads, head_dim, n_rot, pos0, base, NULL, -1.0, true, err);
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

  sc_cpu_chunk (j->n, j->n_tasks, t, &first, &last);
  for (i = first; i < last; i++)
    {
      const float *restrict gate = j->gu + (size_t) i * 2 * j->f;
      const float *restrict up = gate + j->f;
      float *restrict y = j->y + (size_t) i * j->f;
      for (c = 0; c < j->f; c++)
        y[c] = sc_siluf (gate[c]) * up[c];
    }
}

ScStatus
sc_cpu_swiglu (ScBackend *b, float *y, const float *gu, int n, int f, ScError *err)
{
  /* an expf costs ~8 of rmsnorm's multiply-adds */
  SwigluJob j = { y, gu, n, f, sc_cpu_n_tasks_for (b, n, 8.0 * f) };

  sc_pool_run (sc_cpu_pool (b), j.n_tasks, swiglu_task, &j);
  return SC_OK;
}

ScStatus
sc_cpu_add (ScBackend *b, float *y, const float *x, size_t n, ScError *err)
{
  size_t i;

  for (i = 0; i < n; i++)
    y[i] += x[i];
  return SC_OK;
}

/* One float product per element: exact-rounded, the same on every path. */
ScStatus
sc_cpu_scale (ScBackend *b, float *y, const float *x, float s, size_t n, ScError *err)
{
  size_t i;

  (void) b;
  (void) err;
  for (i = 0; i < n; i++)
    y[i] = s * x[i];
  return SC_OK;
}

/* Gemma 2's final-logit soft-capping: core/sc-math.h's sc_softcapf per element. */
ScStatus
sc_cpu_softcap (ScBackend *b, float *y, const float *x, float cap, size_t n, ScError *err)
{
  (void) b;
  (void) err;
  for (size_t i = 0; i < n; i++)
    y[i] = sc_softcapf (x[i], cap);
  return SC_OK;
}

/* One float addition per element is exact-rounded whatever the order, so the reference
 * and the fast path are the same loop. */
ScStatus
sc_cpu_add_bias (ScBackend *b, float *y, const float *bias, int n, int dim, ScError *err)
{
  int i, c;

  for (i = 0; i < n; i++)
    for (c = 0; c < dim; c++)
      y[(size_t) i * dim + c] += bias[c];
  return SC_OK;
}

void
sc_cpu_softmax_row (float *row, int p, int n_k, int lo, int hi, const uint8_t *key_mask,
                    bool fast_exp)
{
  bool all_masked = sc_cpu_row_all_masked (lo, hi, key_mask);
  float max = -INFINITY;
  double sum = 0.0;
  float inv;
  int j;

  for (j = lo; j <= hi; j++)
    if (sc_cpu_key_allowed (p, j, lo, hi, key_mask, all_masked) && row[j] > max)
      max = row[j];
  for (j = 0; j < n_k; j++)
    {
      if (sc_cpu_key_allowed (p, j, lo, hi, key_mask, all_masked))
        {
          row[j] = fast_exp ? sc_expf (row[j] - max) : expf (row[j] - max);
          sum += row[j];
        }
      else
        row[j] = 0.0f;
    }
  inv = (float) (1.0 / sum);
  for (j = lo; j <= hi; j++)
    row[j] *= inv;
}

/* ------------------------------------------------------------------------------------ */
/* cpu: OpenBLAS products, pool-threaded vector loops                                    */

static ScStatus
blas_matmul (ScBackend *b, float *y, const float *x, const float *w, int n, int in, int out,
             bool accumulate, ScError *err)
{
  /* Below this many multiply-adds a product is faster on one core than split across
   * threads that must be woken and joined: a decode step's products (1 x 576 x 1536 =
   * 0.9 M; the vocabulary projection 1 x 576 x 49152 = 28 M) are memory-bound matrix-vector
   * products; a 128-token prompt's smallest projection is 128 x 576 x 192 = 14 M. */
  const double min_parallel_macs = 3.2e7;
  const bool serial = b->n_threads > 1 && (double) n * in * out < min_parallel_macs;
  int64_t row0 = 0;
  ScCpuWeight *qw = sc_cpu_weight_find (b, w, &row0);

  /* a matrix kept in its file's form (weight_src): decoded panel by panel */
  if (qw != NULL)
    return sc_cpu_weight_matmul (b, qw, row0, y, x, n, in, out, accumulate, err);
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

/* LayerNorm: mean and biased variance in double, two passes (the one-pass E[x^2] - E[x]^2
 * loses digits when |mean| >> std), the normalised value in double too (a float mean would
 * cost ~ulp(mean)/std of relative error, 1e-5 for a row of mean 100 and spread 1), then the
 * weight and bias in float. */
typedef struct {
  float *y;
  const float *x, *w, *bias;
  int n, dim, n_tasks;
  float eps;
} LayerNormJob;

static void
layer_norm_task (void *ctx, int t)
{
  const LayerNormJob *j = ctx;
  int i, first, last;

  sc_cpu_chunk (j->n, j->n_tasks, t, &first, &last);
  for (i = first; i < last; i++)
    {
      const float *xr = j->x + (size_t) i * j->dim;
      float *yr = j->y + (size_t) i * j->dim;
      double mean = 0.0, ss = 0.0, inv;
      int c;

      for (c = 0; c < j->dim; c++)
        mean += xr[c];
      mean /= j->dim;
      for (c = 0; c < j->dim; c++)
        ss += ((double) xr[c] - mean) * ((double) xr[c] - mean);
      inv = 1.0 / sqrt (ss / j->dim + (double) j->eps);
      for (c = 0; c < j->dim; c++)
        {
          const float xn = (float) (((double) xr[c] - mean) * inv);
          yr[c] = xn * j->w[c] + (j->bias != NULL ? j->bias[c] : 0.0f);
        }
    }
}

static ScStatus
fast_layer_norm (ScBackend *b, float *y, const float *x, const float *w, const float *bias, int n,
                 int dim, float eps, ScError *err)
{
  LayerNormJob j = { y, x, w, bias, n, dim, sc_cpu_n_tasks_for (b, n, 2.0 * dim), eps };

  sc_pool_run (sc_cpu_pool (b), j.n_tasks, layer_norm_task, &j);
  return SC_OK;
}

/* gelu over blocks of GELU_BLOCK elements, so a flat array splits into pool tasks. */
enum { GELU_BLOCK = 4096 };

typedef struct {
  float *y;
  const float *x, *gu;
  size_t n;     /* gelu: elements */
  int rows, f;  /* geglu: (rows, f) output */
  int n_tasks;
} GeluJob;

static void
gelu_task (void *ctx, int t)
{
  const GeluJob *j = ctx;
  const int n_blocks = (int) ((j->n + GELU_BLOCK - 1) / GELU_BLOCK);
  int first, last;
  size_t i, end;

  sc_cpu_chunk (n_blocks, j->n_tasks, t, &first, &last);
  end = (size_t) last * GELU_BLOCK < j->n ? (size_t) last * GELU_BLOCK : j->n;
  for (i = (size_t) first * GELU_BLOCK; i < end; i++)
    j->y[i] = sc_gelu_tanhf (j->x[i]);
}

static ScStatus
fast_gelu (ScBackend *b, float *y, const float *x, size_t n, ScError *err)
{
  GeluJob j = { y, x, NULL, n, 0, 0, 1 };
  const size_t n_blocks = (n + GELU_BLOCK - 1) / GELU_BLOCK;

  if (n == 0)
    return SC_OK;
  if (n_blocks > (size_t) INT32_MAX)
    return sc_error_set (err, SC_ERR_RANGE, "cpu: gelu: %zu elements is too many", n);
  /* a tanhf costs ~20 of rmsnorm's multiply-adds */
  j.n_tasks = sc_cpu_n_tasks_for (b, (int) n_blocks, 20.0 * GELU_BLOCK);
  sc_pool_run (sc_cpu_pool (b), j.n_tasks, gelu_task, &j);
  return SC_OK;
}

static void
geglu_task (void *ctx, int t)
{
  const GeluJob *j = ctx;
  int i, c, first, last;

  sc_cpu_chunk (j->rows, j->n_tasks, t, &first, &last);
  for (i = first; i < last; i++)
    {
      const float *restrict gate = j->gu + (size_t) i * 2 * j->f;
      const float *restrict up = gate + j->f;
      float *restrict y = j->y + (size_t) i * j->f;
      for (c = 0; c < j->f; c++)
        y[c] = sc_gelu_tanhf (gate[c]) * up[c];
    }
}

static ScStatus
fast_geglu (ScBackend *b, float *y, const float *gu, int n, int f, ScError *err)
{
  GeluJob j = { y, NULL, gu, 0, n, f, sc_cpu_n_tasks_for (b, n, 20.0 * f) };

  sc_pool_run (sc_cpu_pool (b), j.n_tasks, geglu_task, &j);
  return SC_OK;
}

/* ------------------------------------------------------------------------------------ */

static const ScBackendOps cpu_ops = {
  .name = "cpu",
  SC_CPU_SHARED_OPS,
  .matmul = blas_matmul,
  .attention = sc_cpu_attention,
  .attention_capture = sc_cpu_attention_capture,
  .capture_wait = sc_cpu_capture_wait,
  .layer_norm = fast_layer_norm,
  .gelu = fast_gelu,
  .geglu = fast_geglu,
  .matmul_backward = sc_cpu_matmul_backward,
  .attention_backward = sc_cpu_attention_backward,
};

void
sc_cpu_destroy (ScBackend *b)
{
  ScCpuBackend *cb = (ScCpuBackend *) b;

  sc_cpu_weights_free (b);
  sc_pool_free (cb->pool);
  free (cb->capture);
  free (cb->capture_at);
  free (b);
}

ScCpuBackend *
sc_cpu_backend_new (const ScBackendOps *ops, unsigned caps, int n_threads, ScError *err)
{
  ScCpuBackend *cb = calloc (1, sizeof *cb);

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
  pthread_mutex_init (&cb->panel_lock, NULL);
  pthread_mutex_init (&cb->weights_lock, NULL);
  pthread_mutex_init (&cb->kept_lock, NULL);
  cb->kept_budget = sc_cpu_weight_cache_default ();
  cb->base.ops = ops;
  cb->base.caps = caps;
  cb->base.n_threads = sc_pool_n_threads (cb->pool);
  return cb;
}

ScBackend *
sc_backend_cpu_new (int n_threads, ScError *err)
{
  ScCpuBackend *cb;

  if (sc_blas_init (err) != SC_OK)
    return NULL;
  if ((cb = sc_cpu_backend_new (&cpu_ops, SC_CPU_CAPS | SC_BACKEND_CAP_ATTN_CAPTURE, n_threads, err)) == NULL)
    return NULL;
  sc_blas_set_threads (cb->base.n_threads);
  snprintf (cb->base.description, sizeof cb->base.description, "CPU, %d thread%s, %s",
            cb->base.n_threads, cb->base.n_threads == 1 ? "" : "s", sc_blas_describe ());
  return &cb->base;
}
