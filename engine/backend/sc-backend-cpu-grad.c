/* sc-backend-cpu-grad.c — the backward ops of the CPU backends (sc-backend-impl.h,
 * "Backward ops"): activation gradients for attributions, nothing for the weights.
 *
 * As in the forward (sc-backend-cpu-private.h), the memory-bound ops — rmsnorm, swiglu,
 * get_rows' scatter-add (and rope, in sc-backend-cpu.c) — are one implementation for both
 * CPU backends, accumulating in double so the reduction order does not matter at float
 * precision. The two ops whose cost grows with the model — matmul's input gradient and
 * attention's — have a fast path here (OpenBLAS, called from the op's own thread only:
 * sc-blas.h says why) and a scalar reference in sc-backend-ref.c, and
 * tests/engine/test-backend-grad.c holds them to each other and all of them to finite
 * differences of a double-precision forward.
 */
#include "backend/sc-backend-cpu-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sc-blas.h"
#include "core/sc-math.h"

/* ------------------------------------------------------------------------------------ */
/* Shared by cpu and cpu-ref                                                             */

typedef struct {
  float *dx;
  const float *dy, *x, *w;
  int n, dim, n_tasks;
  float eps;
  bool accumulate;
} RmsBackJob;

static void
rmsnorm_backward_task (void *ctx, int t)
{
  const RmsBackJob *j = ctx;
  int i, c, first, last;

  sc_cpu_chunk (j->n, j->n_tasks, t, &first, &last);
  for (i = first; i < last; i++)
    {
      const float *x = j->x + (size_t) i * j->dim, *dy = j->dy + (size_t) i * j->dim;
      float *dx = j->dx + (size_t) i * j->dim;
      double ss = 0.0, gx = 0.0, r, r3;

      for (c = 0; c < j->dim; c++)
        {
          ss += (double) x[c] * x[c];
          gx += (double) dy[c] * j->w[c] * x[c];
        }
      r = 1.0 / sqrt (ss / j->dim + (double) j->eps);
      r3 = r * r * r * gx / j->dim;
      for (c = 0; c < j->dim; c++)
        {
          double g = r * ((double) dy[c] * j->w[c]) - (double) x[c] * r3;
          dx[c] = (float) (j->accumulate ? dx[c] + g : g);
        }
    }
}

ScStatus
sc_cpu_rmsnorm_backward (ScBackend *b, float *dx, const float *dy, const float *x,
                         const float *w, int n, int dim, float eps, bool accumulate,
                         ScError *err)
{
  RmsBackJob j = { dx, dy, x, w, n, dim, sc_cpu_n_tasks_for (b, n, 2.0 * dim), eps,
                   accumulate };

  sc_pool_run (sc_cpu_pool (b), j.n_tasks, rmsnorm_backward_task, &j);
  return SC_OK;
}

typedef struct {
  float *dgu;
  const float *dy, *gu;
  int n, f, n_tasks;
  bool gelu; /* geglu: the gate is gelu (tanh form) instead of silu */
} SwigluBackJob;

static void
swiglu_backward_task (void *ctx, int t)
{
  const SwigluBackJob *j = ctx;
  int i, c, first, last;

  sc_cpu_chunk (j->n, j->n_tasks, t, &first, &last);
  for (i = first; i < last; i++)
    {
      const float *gate = j->gu + (size_t) i * 2 * j->f, *up = gate + j->f;
      const float *dy = j->dy + (size_t) i * j->f;
      float *dgate = j->dgu + (size_t) i * 2 * j->f, *dup = dgate + j->f;

      for (c = 0; c < j->f; c++)
        {
          const double g = gate[c];
          const double act = j->gelu ? sc_gelu_tanh (g) : g / (1.0 + exp (-g));
          const double grad = j->gelu ? sc_gelu_tanh_grad (g) : sc_silu_grad (g);
          dgate[c] = (float) ((double) dy[c] * up[c] * grad);
          dup[c] = (float) ((double) dy[c] * act);
        }
    }
}

ScStatus
sc_cpu_swiglu_backward (ScBackend *b, float *dgu, const float *dy, const float *gu, int n, int f,
                        ScError *err)
{
  SwigluBackJob j = { dgu, dy, gu, n, f, sc_cpu_n_tasks_for (b, n, 16.0 * f), false };

  sc_pool_run (sc_cpu_pool (b), j.n_tasks, swiglu_backward_task, &j);
  return SC_OK;
}

/* swiglu's task with gelu's gate and derivative. */
ScStatus
sc_cpu_geglu_backward (ScBackend *b, float *dgu, const float *dy, const float *gu, int n, int f,
                       ScError *err)
{
  SwigluBackJob j = { dgu, dy, gu, n, f, sc_cpu_n_tasks_for (b, n, 24.0 * f), true };

  sc_pool_run (sc_cpu_pool (b), j.n_tasks, swiglu_backward_task, &j);
  return SC_OK;
}

/* Serial: rows with the same id add into the same table row, and an addition order fixed
 * by i keeps the result independent of the thread count. */
ScStatus
sc_cpu_get_rows_backward (ScBackend *b, float *dtable, const float *dy, const int32_t *ids,
                          int n, int dim, ScError *err)
{
  int i, c;

  for (i = 0; i < n; i++)
    {
      float *row = dtable + (size_t) ids[i] * dim;
      for (c = 0; c < dim; c++)
        row[c] += dy[(size_t) i * dim + c];
    }
  return SC_OK;
}

/* ------------------------------------------------------------------------------------ */
/* cpu: OpenBLAS                                                                         */

ScStatus
sc_cpu_matmul_backward (ScBackend *b, float *dx, const float *dy, const float *w, int n, int in,
                        int out, bool accumulate, ScError *err)
{
  int64_t row0 = 0;
  ScCpuWeight *qw = sc_cpu_weight_find (b, w, &row0);

  if (qw != NULL)
    return sc_cpu_weight_matmul_backward (b, qw, row0, dx, dy, n, in, out, accumulate, err);
  /* dx (n, in) = dy (n, out) . W (out, in): RowMajor, NoTrans, NoTrans */
  sc_sgemm (false, n, in, out, 1.0f, dy, out, w, in, accumulate ? 1.0f : 0.0f, dx, in);
  return SC_OK;
}

/* Zeroes every entry of @row (n keys) that the query at position @p may not see, the
 * attention op's rule (sc_cpu_key_allowed). */
static void
mask_row (float *row, int p, int n, int lo, int hi, const uint8_t *key_mask, bool all_masked)
{
  int j;

  for (j = 0; j < n; j++)
    if (!sc_cpu_key_allowed (p, j, lo, hi, key_mask, all_masked))
      row[j] = 0.0f;
}

/* Per head, four products of (n, n) by (n, d) through sgemm (the causal triangle is not
 * exploited: the backward runs once per attribution, and BLAS on the full square is
 * faster than hand-written triangles at these sizes), and the softmax Jacobian row by row
 * in double:
 *   dP   = hs dout_h V_g^T                 masked to the visible keys  -> dprobs
 *   dS   = P * (dP - rowsum (P * dP))
 *   dq_h = scale dS K_g,  dk_g += scale dS^T q_h,  dv_g += hs P^T dout_h */
ScStatus
sc_cpu_attention_backward (ScBackend *b, float *dq, float *dk, float *dv, float *dprobs,
                           const float *dout, const float *q, const float *k, const float *v,
                           const float *probs, int n, int n_heads, int n_kv, int d,
                           const ScAttnParams *p, const uint8_t *detached, ScError *err)
{
  const int group = n_heads / n_kv, Q = n_heads * d, KV = n_kv * d;
  const size_t nn = (size_t) n * n;
  float *ds;
  int h, i, j;

  /* with soft-capping (Gemma 2), a second n × n block holds the raw scores */
  if ((ds = malloc ((p->softcap > 0.0f ? 2 : 1) * nn * sizeof *ds)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "%s: attention_backward: out of memory for %d x %d "
                         "scores", b->ops->name, n, n);
  memset (dk, 0, (size_t) n * KV * sizeof *dk);
  memset (dv, 0, (size_t) n * KV * sizeof *dv);
  for (h = 0; h < n_heads; h++)
    {
      const int g = h / group;
      const float hs = p->head_scale != NULL ? p->head_scale[h] : 1.0f;
      const float *P = probs + h * nn;
      float *dP = dprobs + h * nn;

      sc_sgemm (true, n, n, d, hs, dout + (size_t) h * d, Q, v + (size_t) g * d, KV, 0.0f, dP, n);
      for (i = 0; i < n; i++)
        {
          float *dpr = dP + (size_t) i * n, *dsr = ds + (size_t) i * n;
          const float *pr = P + (size_t) i * n;
          int lo, hi;
          double dot = 0.0;

          sc_attn_key_range (i, n, p->causal, p->window, &lo, &hi);
          mask_row (dpr, i, n, lo, hi, p->key_mask, sc_cpu_row_all_masked (lo, hi, p->key_mask));
          for (j = 0; j < n; j++)
            dot += (double) pr[j] * dpr[j];
          for (j = 0; j < n; j++)
            dsr[j] = (float) ((double) pr[j] * ((double) dpr[j] - dot));
        }
      if (p->softcap > 0.0f)
        {
          /* the scores were capped, c = cap tanh(u / cap) of the raw u = scale q.k: ds/du =
           * ds/dc (1 - tanh^2), u recomputed from q and k (ds is 0 on every hidden key) */
          float *u = ds + nn;
          sc_sgemm (true, n, n, d, p->scale, q + (size_t) h * d, Q, k + (size_t) g * d, KV,
                    0.0f, u, n);
          for (size_t t = 0; t < nn; t++)
            if (ds[t] != 0.0f)
              {
                const double th = tanh ((double) u[t] / p->softcap);
                ds[t] = (float) ((double) ds[t] * (1.0 - th * th));
              }
        }
      if (detached != NULL && detached[h])
        for (i = 0; i < n; i++)
          memset (dq + (size_t) i * Q + (size_t) h * d, 0, (size_t) d * sizeof *dq);
      else
        {
          sc_sgemm (false, n, d, n, p->scale, ds, n, k + (size_t) g * d, KV, 0.0f,
                    dq + (size_t) h * d, Q);
          sc_sgemm_t (true, false, n, d, n, p->scale, ds, n, q + (size_t) h * d, Q, 1.0f,
                      dk + (size_t) g * d, KV);
        }
      sc_sgemm_t (true, false, n, d, n, hs, P, n, dout + (size_t) h * d, Q, 1.0f,
                  dv + (size_t) g * d, KV);
    }
  free (ds);
  return SC_OK;
}
