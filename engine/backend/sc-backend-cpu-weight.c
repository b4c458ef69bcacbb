/* sc-backend-cpu-weight.c — the CPU backends' weight_src op and the products over the
 * weights it keeps in their file's form (the contract is in sc-backend-impl.h).
 *
 * Why: a model's matrices expanded to float32 take four bytes a weight (6 GB for a 1.5B
 * model) where a Q4_K_M file takes about 0.6. The cpu backend keeps the file's blocks (the
 * GGUF mapping, borrowed) and, inside each product, decodes a panel of weight rows into a
 * float scratch and hands that panel to OpenBLAS:
 *   y[:, r0 .. r0 + m) = x (n, in) . panel (m, in)^T        (sgemm; sgemv when n == 1)
 * The panel holds PANEL_FLOATS floats (16 MB), so a product of a 576-wide model decodes
 * ~7,000 rows at a time: big enough that sgemm runs at full speed, small enough to stay
 * out of the memory budget. The decoding is split over the pool (rows per thread) and
 * costs one pass over the weights per product, which a prompt of n tokens amortises over
 * n rows (docs/benchmarks.md, "Weights kept quantised", measures it).
 *
 * Exactness: a panel's rows are the numbers sc_dequant_row() gives, and each output
 * element is the same dot product over the same `in` values; splitting a product along its
 * output columns changes neither the operands nor OpenBLAS's blocking of the inner
 * dimension, so the outputs are the ones the whole expanded matrix gave (the CLI goldens
 * check it byte for byte). matmul_backward sums over the output rows, which a panel split
 * would reorder: it expands the whole matrix into a temporary instead.
 *
 * Kept decoded. A study runs hundreds of forwards over the same weights (a head sweep, a
 * patching grid, integrated gradients' 50 points), and on a short prompt the decoding pass
 * is most of a product's cost (2x the CPU time of a 12-token forward of SmolLM2, far more
 * under the sanitizers, which instrument the decoding and not OpenBLAS). So a matrix is
 * kept decoded once more of its rows have been decoded than it holds, i.e. from its second
 * use on: one forward (a capture) never keeps anything, the second forward of a study keeps
 * what the budget allows. The budget (sc_backend_cpu_set_weight_cache) is a quarter of the
 * machine's memory, at most 4 GiB, by default: all of a 0.5B model, a third of a 1.5B
 * one. A kept matrix is multiplied in the same panels, by the same calls on the same
 * numbers, as one decoded at each use: the outputs do not depend on which it was
 * (test-weight-src).
 *
 * cpu-ref (expand = true) expands each matrix once into floats it owns, as before: its
 * products stay the plain double loops of the reference.
 *
 * Handles. A handle behaves like the address of the expanded matrix: the layers address
 * row r of W_qkv as handle + r * cols (the backward's separate products by wq, wk and wv).
 * So each matrix gets rows * cols floats of address space, reserved and never readable
 * (PROT_NONE, no memory behind it: reading a handle as floats faults at once), and
 * sc_cpu_weight_find() maps an address inside one of them, in the list the backend keeps,
 * to the matrix and the row (as the CUDA backend recognises its weight() copies). No other
 * op is handed one (the contract).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend/sc-backend-cpu-private.h"
#include "backend/sc-blas.h"

/* Floats of the decoding panel (16 MB). */
#define PANEL_FLOATS ((size_t) 4 << 20)

struct ScCpuWeight {
  ScWeightSrc src;
  int64_t rows;
  float *dense;        /* cpu-ref: the expanded matrix (owned); NULL on cpu */
  const float *handle; /* cpu: the reserved range of rows * cols floats (owned) */
  /* cpu: the matrix kept decoded (owned; NULL until kept, never changed after), and the
   * rows the products have decoded so far (the second use is when it passes rows) */
  _Atomic (float *) kept;
  atomic_int_fast64_t decoded;
};

static ScCpuBackend *
cpu (ScBackend *b)
{
  return (ScCpuBackend *) b;
}

ScCpuWeight *
sc_cpu_weight_find (ScBackend *b, const float *w, int64_t *row0)
{
  ScCpuBackend *cb = cpu (b);
  ScCpuWeight *found = NULL;

  pthread_mutex_lock (&cb->weights_lock);
  for (size_t i = 0; i < cb->n_weights && found == NULL; i++)
    {
      ScCpuWeight *m = cb->weights[i];
      const uintptr_t a = (uintptr_t) m->handle, p = (uintptr_t) w;
      const size_t n = (size_t) m->rows * (size_t) m->src.cols;

      if (m->handle != NULL && p >= a && p < a + n * sizeof (float))
        {
          *row0 = (int64_t) ((p - a) / sizeof (float)) / m->src.cols;
          found = m;
        }
    }
  pthread_mutex_unlock (&cb->weights_lock);
  return found;
}

/* Decodes rows [first, first + n) of @w's matrix into @dst over the pool. */
typedef struct {
  const ScWeightSrc *src;
  int64_t first, n;
  int64_t cols;
  float *dst;
  int n_tasks;
  ScError error;
  pthread_mutex_t lock;
} DecodeJob;

static void
decode_task (void *ctx, int t)
{
  DecodeJob *j = ctx;
  int64_t a = j->n * t / j->n_tasks, z = j->n * (t + 1) / j->n_tasks;
  ScError e = { SC_OK, "" };

  if (sc_weight_src_dequant (j->src, j->first + a, z - a, j->dst + (size_t) a * j->cols, &e)
      != SC_OK)
    {
      pthread_mutex_lock (&j->lock);
      if (j->error.status == SC_OK)
        j->error = e;
      pthread_mutex_unlock (&j->lock);
    }
}

static ScStatus
decode_rows (ScBackend *b, const ScWeightSrc *src, int64_t first, int64_t n, float *dst,
             ScError *err)
{
  DecodeJob j = { src, first, n, src->cols, dst, 1, { SC_OK, "" }, PTHREAD_MUTEX_INITIALIZER };

  j.n_tasks = sc_cpu_n_tasks_for (b, (int) n, (double) src->cols);
  sc_pool_run (sc_cpu_pool (b), j.n_tasks, decode_task, &j);
  pthread_mutex_destroy (&j.lock);
  if (j.error.status != SC_OK)
    {
      if (err != NULL)
        *err = j.error;
      return j.error.status;
    }
  return SC_OK;
}

static bool
same_src (const ScWeightSrc *a, const ScWeightSrc *b)
{
  if (a->cols != b->cols || a->n_parts != b->n_parts)
    return false;
  for (int k = 0; k < a->n_parts; k++)
    if (a->parts[k].type != b->parts[k].type || a->parts[k].data != b->parts[k].data
        || a->parts[k].rows != b->parts[k].rows)
      return false;
  return true;
}

static const float *weight_src_locked (ScBackend *b, const ScWeightSrc *src, ScError *err);

const float *
sc_cpu_weight_src (ScBackend *b, const ScWeightSrc *src, ScError *err)
{
  ScCpuBackend *cb = cpu (b);
  const float *h;

  pthread_mutex_lock (&cb->weights_lock);
  h = weight_src_locked (b, src, err);
  pthread_mutex_unlock (&cb->weights_lock);
  return h;
}

static const float *
weight_src_locked (ScBackend *b, const ScWeightSrc *src, ScError *err)
{
  ScCpuBackend *cb = cpu (b);
  ScCpuWeight *w;

  if (src->n_parts < 1 || src->n_parts > SC_WEIGHT_MAX_PARTS || src->cols < 1)
    {
      sc_error_set (err, SC_ERR_INVALID_ARG, "%s: weight_src: a matrix of %d parts and %lld "
                    "columns", b->ops->name, src->n_parts, (long long) src->cols);
      return NULL;
    }
  /* One F32 tensor is already floats: the old weight() path, no copy. */
  if (!cb->expand_weights && src->n_parts == 1 && src->parts[0].type == SC_TYPE_F32
      && (uintptr_t) src->parts[0].data % _Alignof (float) == 0)
    return src->parts[0].data;
  /* A session made again over the same model binds the same matrices: one handle each
   * (cpu reads the blocks at each use, so the handle is the same matrix while the model
   * lives; cpu-ref's copies are not shared, as its weight() copied nothing before). */
  if (!cb->expand_weights)
    for (size_t i = 0; i < cb->n_weights; i++)
      if (same_src (&cb->weights[i]->src, src))
        return cb->weights[i]->handle;
  if (cb->n_weights == cb->cap_weights)
    {
      size_t cap = cb->cap_weights != 0 ? 2 * cb->cap_weights : 64;
      ScCpuWeight **list = realloc (cb->weights, cap * sizeof *list);
      if (list == NULL)
        goto nomem;
      cb->weights = list;
      cb->cap_weights = cap;
    }
  if ((w = calloc (1, sizeof *w)) == NULL)
    goto nomem;
  w->src = *src;
  w->rows = sc_weight_src_rows (src);
  if ((size_t) w->rows > SIZE_MAX / sizeof (float) / 2 / (size_t) src->cols)
    {
      free (w);
      goto nomem;
    }
  if (!cb->expand_weights)
    {
      void *range = mmap (NULL, (size_t) w->rows * (size_t) src->cols * sizeof (float),
                          PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (range == MAP_FAILED)
        {
          free (w);
          goto nomem;
        }
      w->handle = range;
    }
  else
    {
      if ((w->dense = sc_cpu_alloc (b, (size_t) w->rows * (size_t) src->cols, err)) == NULL)
        {
          free (w);
          goto nomem;
        }
      if (decode_rows (b, src, 0, w->rows, w->dense, err) != SC_OK)
        {
          free (w->dense);
          free (w);
          return NULL;
        }
    }
  cb->weights[cb->n_weights++] = w;
  return w->dense != NULL ? w->dense : w->handle;

nomem:
  sc_error_set (err, SC_ERR_NOMEM, "%s: out of memory for a weight", b->ops->name);
  return NULL;
}

void
sc_cpu_weights_free (ScBackend *b)
{
  ScCpuBackend *cb = cpu (b);

  for (size_t i = 0; i < cb->n_weights; i++)
    {
      ScCpuWeight *w = cb->weights[i];
      free (w->dense);
      free (atomic_load (&w->kept));
      if (w->handle != NULL)
        munmap ((void *) w->handle, (size_t) w->rows * (size_t) w->src.cols * sizeof (float));
      free (w);
    }
  free (cb->weights);
  free (cb->panel);
  pthread_mutex_destroy (&cb->panel_lock);
  pthread_mutex_destroy (&cb->weights_lock);
  pthread_mutex_destroy (&cb->kept_lock);
}

size_t
sc_cpu_weight_cache_default (void)
{
  const long pages = sysconf (_SC_PHYS_PAGES), page = sysconf (_SC_PAGESIZE);
  const size_t most = (size_t) 4 << 30;

  if (pages <= 0 || page <= 0)
    return (size_t) 1 << 30;
  return (size_t) pages / 4 < most / (size_t) page ? (size_t) pages / 4 * (size_t) page : most;
}

/* The two CPU backends: those whose state is an ScCpuBackend, which they destroy alike. */
static bool
is_cpu (const ScBackend *b)
{
  return b != NULL && b->ops->destroy == sc_cpu_destroy;
}

void
sc_backend_cpu_set_weight_cache (ScBackend *b, size_t bytes)
{
  if (!is_cpu (b))
    return;
  pthread_mutex_lock (&cpu (b)->kept_lock);
  cpu (b)->kept_budget = bytes;
  pthread_mutex_unlock (&cpu (b)->kept_lock);
}

size_t
sc_backend_cpu_weight_cache_bytes (ScBackend *b)
{
  size_t n = 0;

  if (!is_cpu (b))
    return 0;
  pthread_mutex_lock (&cpu (b)->kept_lock);
  n = cpu (b)->kept_bytes;
  pthread_mutex_unlock (&cpu (b)->kept_lock);
  return n;
}

/* @w's rows decoded, when it is kept; else counts @n_rows more decoded rows and keeps it
 * when they pass its size and the budget allows. NULL: decode at this use (also when
 * memory runs out: keeping is an optimisation, never a failure). */
static const float *
kept_rows (ScBackend *b, ScCpuWeight *w, int64_t n_rows)
{
  ScCpuBackend *cb = cpu (b);
  const float *k = atomic_load_explicit (&w->kept, memory_order_acquire);
  const size_t bytes = (size_t) w->rows * (size_t) w->src.cols * sizeof (float);
  float *made = NULL;

  if (k != NULL)
    return k;
  if (atomic_fetch_add (&w->decoded, n_rows) + n_rows <= w->rows)
    return NULL;
  pthread_mutex_lock (&cb->kept_lock);
  if ((k = atomic_load_explicit (&w->kept, memory_order_acquire)) == NULL
      && cb->kept_bytes + bytes <= cb->kept_budget
      && (made = sc_cpu_alloc (b, bytes / sizeof (float), NULL)) != NULL)
    {
      if (decode_rows (b, &w->src, 0, w->rows, made, NULL) == SC_OK)
        {
          atomic_store_explicit (&w->kept, made, memory_order_release);
          cb->kept_bytes += bytes;
          k = made;
        }
      else
        free (made);
    }
  pthread_mutex_unlock (&cb->kept_lock);
  return k;
}

/* The backend's panel, or a fresh one when another thread holds it (the caller frees it
 * then: *@owned). */
static float *
take_panel (ScBackend *b, bool *owned, ScError *err)
{
  ScCpuBackend *cb = cpu (b);
  float *p;

  if (pthread_mutex_trylock (&cb->panel_lock) == 0)
    {
      if (cb->panel == NULL && (cb->panel = sc_cpu_alloc (b, PANEL_FLOATS, err)) == NULL)
        {
          pthread_mutex_unlock (&cb->panel_lock);
          return NULL;
        }
      *owned = false;
      return cb->panel;
    }
  if ((p = sc_cpu_alloc (b, PANEL_FLOATS, err)) != NULL)
    *owned = true;
  return p;
}

static void
give_panel (ScBackend *b, float *p, bool owned)
{
  if (owned)
    free (p);
  else
    pthread_mutex_unlock (&cpu (b)->panel_lock);
}

ScStatus
sc_cpu_weight_matmul (ScBackend *b, ScCpuWeight *w, int64_t row0, float *y, const float *x,
                      int n, int in, int out, bool accumulate, ScError *err)
{
  /* As blas_matmul: below this many multiply-adds one core beats a woken team. */
  const double min_parallel_macs = 3.2e7;
  const bool serial = b->n_threads > 1 && (double) n * in * out < min_parallel_macs;
  const int64_t panel_rows = (int64_t) (PANEL_FLOATS / (size_t) in);
  const float *kept;
  bool owned = false;
  float *panel = NULL;
  ScStatus st = SC_OK;

  if (w->src.cols != in || row0 + out > w->rows || panel_rows < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: matmul: rows %lld .. %lld of a (%lld, "
                         "%lld) weight used as (%d, %d)", b->ops->name, (long long) row0,
                         (long long) (row0 + out), (long long) w->rows,
                         (long long) w->src.cols, out, in);
  if ((kept = kept_rows (b, w, out)) == NULL && (panel = take_panel (b, &owned, err)) == NULL)
    return SC_ERR_NOMEM;
  if (serial)
    sc_blas_set_threads (1);
  for (int64_t r0 = 0; r0 < out; r0 += panel_rows)
    {
      const int m = (int) (out - r0 < panel_rows ? out - r0 : panel_rows);
      const float *p = kept != NULL ? kept + (size_t) (row0 + r0) * (size_t) in : panel;

      if (kept == NULL && (st = decode_rows (b, &w->src, row0 + r0, m, panel, err)) != SC_OK)
        break;
      /* y[:, r0 .. r0 + m) = x . panel^T, as blas_matmul does with the whole matrix; a kept
       * matrix in the same panels, so that the sums are the same */
      if (n == 1)
        sc_sgemv (m, in, 1.0f, p, in, x, accumulate ? 1.0f : 0.0f, y + r0);
      else
        sc_sgemm (true, n, m, in, 1.0f, x, in, p, in, accumulate ? 1.0f : 0.0f, y + r0, out);
    }
  if (serial)
    sc_blas_set_threads (b->n_threads);
  if (panel != NULL)
    give_panel (b, panel, owned);
  return st;
}

ScStatus
sc_cpu_weight_matmul_backward (ScBackend *b, ScCpuWeight *w, int64_t row0, float *dx,
                               const float *dy, int n, int in, int out, bool accumulate,
                               ScError *err)
{
  const float *kept;
  float *full;
  ScStatus st;

  if (w->src.cols != in || row0 + out > w->rows)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: matmul_backward: rows %lld .. %lld of a "
                         "(%lld, %lld) weight used as (%d, %d)", b->ops->name, (long long) row0,
                         (long long) (row0 + out), (long long) w->rows,
                         (long long) w->src.cols, out, in);
  if ((kept = kept_rows (b, w, out)) != NULL)
    {
      sc_sgemm (false, n, in, out, 1.0f, dy, out, kept + (size_t) row0 * (size_t) in, in,
                accumulate ? 1.0f : 0.0f, dx, in);
      return SC_OK;
    }
  if ((full = sc_cpu_alloc (b, (size_t) out * (size_t) in, err)) == NULL)
    return SC_ERR_NOMEM;
  if ((st = decode_rows (b, &w->src, row0, out, full, err)) == SC_OK)
    sc_sgemm (false, n, in, out, 1.0f, dy, out, full, in, accumulate ? 1.0f : 0.0f, dx, in);
  free (full);
  return st;
}

ScStatus
sc_cpu_weight_get_rows (ScBackend *b, ScCpuWeight *w, int64_t row0, float *dst,
                        const int32_t *ids, int n, int dim, ScError *err)
{
  const float *kept = atomic_load_explicit (&w->kept, memory_order_acquire);
  ScStatus st;

  if (w->src.cols != dim)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: get_rows: a table of %lld columns read "
                         "as %d", b->ops->name, (long long) w->src.cols, dim);
  for (int i = 0; i < n; i++)
    if (kept != NULL)
      memcpy (dst + (size_t) i * dim, kept + (size_t) (row0 + ids[i]) * (size_t) dim,
              (size_t) dim * sizeof (float));
    else if ((st = sc_weight_src_dequant (&w->src, row0 + ids[i], 1, dst + (size_t) i * dim, err))
             != SC_OK)
      return st;
  return SC_OK;
}
