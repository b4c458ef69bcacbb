/* sc-head-distance.c — Jensen–Shannon head distances (sc-head-distance.h has the contract).
 *
 * Two paths, the reference first:
 *   sc_jsd / sc_head_distance: the definition, JSD = ½ Σ p ln (p/m) + ½ Σ q ln (q/m), in
 *     double with libm's log — two logs per element. It is the ground truth the matrix is
 *     tested against, and the "naive" peer of `saccade bench-analysis`.
 *   sc_head_distance_matrix: the same numbers for every pair, fast, in three passes:
 *     1. per head and row: H (p) in double (one log per element, once per head, not once
 *        per pair) and the row's support (last non-zero key + 1: a causal row i stops at i);
 *     2. per pair and row: Σ m ln m over the union of the two supports, m = (p + q) / 2,
 *        with a branch-free float log the compiler vectorises (sc_logf, core/sc-math.h), summed in
 *        double; JSD_row = H (m) - (H (p) + H (q)) / 2, clamped to [0, ln 2];
 *     3. the row means go to both (a, b) and (b, a).
 *   So each pair costs one float log per element of the union of its rows' supports
 *   (about n^2 / 2 for causal heads) instead of two double logs per element.
 *   Pass 2 runs on the engine's pool, one task per matrix row a (the pairs a < b), in
 *   batches between which the progress callback is called on the caller's thread.
 *
 * Entries where p and q are both 0 contribute nothing (0 ln 0 = 0) and are skipped.
 */
#include "analysis/sc-head-distance.h"

#include "core/sc-math.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/sc-pool.h"

#define LN2 0.69314718055994530942

/* ------------------------------------------------------------------------------------ */
/* The reference                                                                         */

double
sc_jsd (const float *p, const float *q, int n)
{
  double kl_p = 0.0, kl_q = 0.0;

  for (int j = 0; j < n; j++)
    {
      const double a = p[j], b = q[j], m = 0.5 * (a + b);

      if (a > 0.0)
        kl_p += a * log (a / m);
      if (b > 0.0)
        kl_q += b * log (b / m);
    }
  {
    const double d = 0.5 * (kl_p + kl_q);
    return d < 0.0 ? 0.0 : d > LN2 ? LN2 : d;
  }
}

ScStatus
sc_head_distance (const float *a, const float *b, int n_query, int n_key, double *out,
                  ScError *err)
{
  double sum = 0.0;

  if (a == NULL || b == NULL || out == NULL || n_query < 1 || n_key < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG,
                         "head distance of (%d, %d) heads: need two heads and 1 <= n_query, "
                         "1 <= n_key", n_query, n_key);
  for (int i = 0; i < n_query; i++)
    sum += sc_jsd (a + (size_t) i * n_key, b + (size_t) i * n_key, n_key);
  *out = sum / n_query;
  return SC_OK;
}

/* ------------------------------------------------------------------------------------ */
/* The fast matrix                                                                       */


/* Σ_j m_j ln m_j over j < len, m = (p + q) / 2, in double. The element loop writes into a
 * small buffer (no reduction in it, so it vectorises without reassociation); the buffer is
 * then summed with four accumulators. */
#define CHUNK 256

static double
sum_m_ln_m (const float *p, const float *q, int len)
{
  float t[CHUNK];
  double acc = 0.0;

  for (int j0 = 0; j0 < len; j0 += CHUNK)
    {
      const int c = len - j0 < CHUNK ? len - j0 : CHUNK;
      double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
      int k;

      for (k = 0; k < c; k++)
        {
          const float m = 0.5f * (p[j0 + k] + q[j0 + k]);
          const float lm = sc_logf (m + (float) (m == 0.0f)); /* ln 1 = 0 at m = 0 */
          t[k] = m * lm;                              /* 0 when m = 0 (lm = ln 1 = 0) */
        }
      for (k = 0; k + 4 <= c; k += 4)
        {
          s0 += t[k];
          s1 += t[k + 1];
          s2 += t[k + 2];
          s3 += t[k + 3];
        }
      for (; k < c; k++)
        s0 += t[k];
      acc += (s0 + s1) + (s2 + s3);
    }
  return acc;
}

typedef struct {
  const float *const *heads;
  int n_heads, n_query, n_key;
  const double *h;   /* (n_heads, n_query): each row's entropy */
  const int *len;    /* (n_heads, n_query): each row's support, last non-zero key + 1 */
  int row0;          /* the batch's first matrix row */
  double *out;       /* (n_heads, n_heads) */
} Job;

/* Pass 2 for matrix row a = row0 + task: the pairs (a, b), b > a. */
static void
row_task (void *ctx, int task)
{
  const Job *j = ctx;
  const int a = j->row0 + task;
  const float *pa = j->heads[a];

  for (int b = a + 1; b < j->n_heads; b++)
    {
      const float *pb = j->heads[b];
      double sum = 0.0;

      for (int i = 0; i < j->n_query; i++)
        {
          const size_t ra = (size_t) a * j->n_query + i, rb = (size_t) b * j->n_query + i;
          const int len = j->len[ra] > j->len[rb] ? j->len[ra] : j->len[rb];
          const size_t off = (size_t) i * j->n_key;
          double d = -sum_m_ln_m (pa + off, pb + off, len) - 0.5 * (j->h[ra] + j->h[rb]);

          sum += d < 0.0 ? 0.0 : d > LN2 ? LN2 : d;
        }
      j->out[(size_t) a * j->n_heads + b] = sum / j->n_query;
      j->out[(size_t) b * j->n_heads + a] = sum / j->n_query;
    }
}

typedef struct {
  const float *const *heads;
  int n_query, n_key;
  double *h;
  int *len;
} RowJob;

/* Pass 1 for one head. */
static void
entropy_task (void *ctx, int head)
{
  const RowJob *j = ctx;
  const float *p = j->heads[head];

  for (int i = 0; i < j->n_query; i++)
    {
      const float *row = p + (size_t) i * j->n_key;
      double h = 0.0;
      int last = 0;

      for (int k = 0; k < j->n_key; k++)
        if (row[k] > 0.0f)
          {
            h -= (double) row[k] * log ((double) row[k]);
            last = k + 1;
          }
      j->h[(size_t) head * j->n_query + i] = h;
      j->len[(size_t) head * j->n_query + i] = last;
    }
}

/* Rows per batch per thread: enough to keep threads busy, small enough that a cancel is
 * seen within a few per cent of the work. */
#define ROWS_PER_THREAD 4

ScStatus
sc_head_distance_matrix (const float *const *heads, int n_heads, int n_query, int n_key,
                         int n_threads, ScAnalysisProgressFn progress, void *user, double *out,
                         ScError *err)
{
  const size_t total = n_heads > 1 ? (size_t) n_heads * (size_t) (n_heads - 1) / 2 : 0;
  size_t done = 0;
  double *h = NULL;
  int *len = NULL;
  ScPool *pool = NULL;
  ScStatus st = SC_OK;

  if (heads == NULL || out == NULL || n_heads < 1 || n_query < 1 || n_key < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG,
                         "head-distance matrix of %d heads of (%d, %d): need at least one head "
                         "and 1 <= n_query, 1 <= n_key", n_heads, n_query, n_key);
  for (int i = 0; i < n_heads; i++)
    if (heads[i] == NULL)
      return sc_error_set (err, SC_ERR_INVALID_ARG, "head-distance matrix: head %d is NULL", i);

  h = malloc ((size_t) n_heads * n_query * sizeof *h);
  len = malloc ((size_t) n_heads * n_query * sizeof *len);
  pool = sc_pool_new (n_threads);
  if (h == NULL || len == NULL || pool == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "head-distance matrix of %d heads: out of memory",
                         n_heads);
      goto out;
    }

  /* Pass 1. */
  {
    RowJob rj = { heads, n_query, n_key, h, len };
    sc_pool_run (pool, n_heads, entropy_task, &rj);
  }
  for (int i = 0; i < n_heads; i++)
    out[(size_t) i * n_heads + i] = 0.0;

  /* Passes 2 and 3, batch by batch. */
  {
    const int batch = ROWS_PER_THREAD * sc_pool_n_threads (pool);
    Job j = { heads, n_heads, n_query, n_key, h, len, 0, out };

    for (j.row0 = 0; j.row0 < n_heads - 1; j.row0 += batch)
      {
        const int rows = n_heads - 1 - j.row0 < batch ? n_heads - 1 - j.row0 : batch;

        sc_pool_run (pool, rows, row_task, &j);
        for (int r = j.row0; r < j.row0 + rows; r++)
          done += (size_t) (n_heads - 1 - r);
        if (progress != NULL && !progress (user, done, total))
          {
            st = sc_error_set (err, SC_ERR_CANCELLED,
                               "head-distance matrix cancelled after %zu of %zu pairs", done,
                               total);
            goto out;
          }
      }
  }

out:
  sc_pool_free (pool);
  free (h);
  free (len);
  return st;
}
