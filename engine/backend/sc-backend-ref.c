/* sc-backend-ref.c — "cpu-ref", the scalar reference backend: the ground truth.
 *
 * Every op that has a fast version elsewhere is written here as a plain single-threaded
 * loop that accumulates in double, to be checked by eye against the math in
 * sc-backend-impl.h. tests/engine/test-backend-ops.c holds "cpu" (and, when present, the
 * CUDA backend) to these with explicit tolerances. Speed is not a goal; clarity is.
 *
 * The memory-bound ops (memory, copies, get_rows, rmsnorm, rope, swiglu, add, add_bias)
 * are shared with "cpu" (sc-backend-cpu-private.h says why), as is the masked softmax of a
 * row, here with libm's expf. Per-element math (GELU, the mask rule) comes from
 * core/sc-math.h, the same helpers the fast paths and the GPU use.
 */
#include "backend/sc-backend-cpu-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/sc-math.h"

/* y (n, out) = x (n, in) . W^T, each dot product in double, rounded once. */
static ScStatus
ref_matmul (ScBackend *b, float *y, const float *x, const float *w, int n, int in, int out,
            bool accumulate, ScError *err)
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
               const float *v, int n_q, int n_k, int n_heads, int n_kv, int d,
               const ScAttnParams *params, ScError *err)
{
  const int group = n_heads / n_kv, first = n_k - n_q;
  const size_t qs = (size_t) n_heads * d, kvs = (size_t) n_kv * d;
  int h, i, j, c;

  for (h = 0; h < n_heads; h++)
    {
      const int g = h / group;
      const float hs = params->head_scale != NULL ? params->head_scale[h] : 1.0f;

      for (i = 0; i < n_q; i++)
        {
          const int p = first + i;
          float *row = probs + ((size_t) h * n_q + i) * n_k;
          const float *qi = q + i * qs + (size_t) h * d;
          int lo, hi;

          sc_attn_key_range (p, n_k, params->causal, params->window, &lo, &hi);
          /* 1. scores s_ij = scale * q_i . k_j for the keys the query may see */
          for (j = 0; j < n_k; j++)
            {
              const float *kj = k + j * kvs + (size_t) g * d;
              double dot = 0.0;
              if (j < lo || j > hi)
                {
                  row[j] = 0.0f;
                  continue;
                }
              for (c = 0; c < d; c++)
                dot += (double) qi[c] * kj[c];
              dot *= params->scale;
              if (params->softcap > 0.0f) /* Gemma 2: cap tanh(s / cap), in double */
                dot = params->softcap * tanh (dot / params->softcap);
              row[j] = (float) dot;
            }
          /* 2. masked softmax */
          sc_cpu_softmax_row (row, p, n_k, lo, hi, params->key_mask, false);
          /* 3. o_i = head_scale * sum_j p_ij v_j */
          for (c = 0; c < d; c++)
            {
              double acc = 0.0;
              for (j = lo; j <= hi; j++)
                acc += (double) row[j] * v[j * kvs + (size_t) g * d + c];
              out[i * qs + (size_t) h * d + c] = (float) acc * hs;
            }
        }
    }
  return SC_OK;
}

/* y = (x - mean) / sqrt(var + eps) * w + bias, everything in double, rounded once. */
static ScStatus
ref_layer_norm (ScBackend *b, float *y, const float *x, const float *w, const float *bias, int n,
                int dim, float eps, ScError *err)
{
  int i, c;

  for (i = 0; i < n; i++)
    {
      const float *xr = x + (size_t) i * dim;
      float *yr = y + (size_t) i * dim;
      double mean = 0.0, var = 0.0, inv;

      for (c = 0; c < dim; c++)
        mean += xr[c];
      mean /= dim;
      for (c = 0; c < dim; c++)
        var += ((double) xr[c] - mean) * ((double) xr[c] - mean);
      var /= dim;
      inv = 1.0 / sqrt (var + (double) eps);
      for (c = 0; c < dim; c++)
        yr[c] = (float) (((double) xr[c] - mean) * inv * w[c] + (bias != NULL ? bias[c] : 0.0));
    }
  return SC_OK;
}

static ScStatus
ref_gelu (ScBackend *b, float *y, const float *x, size_t n, ScError *err)
{
  size_t i;

  for (i = 0; i < n; i++)
    y[i] = (float) sc_gelu_tanh (x[i]);
  return SC_OK;
}

static ScStatus
ref_geglu (ScBackend *b, float *y, const float *gu, int n, int f, ScError *err)
{
  int i, c;

  for (i = 0; i < n; i++)
    for (c = 0; c < f; c++)
      {
        const float *gate = gu + (size_t) i * 2 * f, *up = gate + f;
        y[(size_t) i * f + c] = (float) (sc_gelu_tanh (gate[c]) * up[c]);
      }
  return SC_OK;
}

/* dx (n, in) = dy (n, out) . W, each sum in double, rounded once. */
static ScStatus
ref_matmul_backward (ScBackend *b, float *dx, const float *dy, const float *w, int n, int in,
                     int out, bool accumulate, ScError *err)
{
  int i, o, c;

  for (i = 0; i < n; i++)
    for (c = 0; c < in; c++)
      {
        double acc = 0.0;
        for (o = 0; o < out; o++)
          acc += (double) dy[(size_t) i * out + o] * w[(size_t) o * in + c];
        dx[(size_t) i * in + c] = (float) (accumulate ? dx[(size_t) i * in + c] + acc : acc);
      }
  return SC_OK;
}

/* The attention gradients of sc-backend-impl.h, written as the formulas read: per head and
 * row, dP over the visible keys, the softmax Jacobian, then the sums into dq, dk, dv, all
 * in double. dk and dv are accumulated in double buffers and rounded once at the end. */
static ScStatus
ref_attention_backward (ScBackend *b, float *dq, float *dk, float *dv, float *dprobs,
                        const float *dout, const float *q, const float *k, const float *v,
                        const float *probs, int n, int n_heads, int n_kv, int d,
                        const ScAttnParams *p, const uint8_t *detached, ScError *err)
{
  const int group = n_heads / n_kv, Q = n_heads * d, KV = n_kv * d;
  const size_t nn = (size_t) n * n;
  double *dkd = calloc ((size_t) 2 * n * KV + 2 * (size_t) n, sizeof *dkd), *dvd, *ds, *dp;
  int h, i, j, c;

  if (dkd == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "%s: attention_backward: out of memory",
                         b->ops->name);
  dvd = dkd + (size_t) n * KV;
  ds = dvd + (size_t) n * KV;
  dp = ds + n;
  for (h = 0; h < n_heads; h++)
    {
      const int g = h / group;
      const double hs = p->head_scale != NULL ? p->head_scale[h] : 1.0;
      const bool attached = detached == NULL || !detached[h];

      for (i = 0; i < n; i++)
        {
          const float *P = probs + h * nn + (size_t) i * n, *go = dout + (size_t) i * Q + h * d;
          float *dP = dprobs + h * nn + (size_t) i * n;
          double dot = 0.0;
          bool all_masked;
          int lo, hi;

          sc_attn_key_range (i, n, p->causal, p->window, &lo, &hi);
          all_masked = sc_cpu_row_all_masked (lo, hi, p->key_mask);
          /* dP over the visible keys, then the softmax Jacobian ds */
          for (j = 0; j < n; j++)
            {
              dp[j] = 0.0;
              if (sc_cpu_key_allowed (i, j, lo, hi, p->key_mask, all_masked))
                for (c = 0; c < d; c++)
                  dp[j] += hs * go[c] * v[(size_t) j * KV + g * d + c];
              dP[j] = (float) dp[j];
              dot += (double) P[j] * dp[j];
            }
          for (j = 0; j < n; j++)
            ds[j] = (double) P[j] * (dp[j] - dot);
          /* Gemma 2's capped scores c = cap tanh(u / cap): ds/du = ds/dc (1 - tanh^2(u / cap)),
           * the raw u = scale q.k recomputed in double */
          for (j = 0; j < n && p->softcap > 0.0f; j++)
            if (ds[j] != 0.0)
              {
                double u = 0.0, th;
                for (c = 0; c < d; c++)
                  u += (double) q[(size_t) i * Q + h * d + c] * k[(size_t) j * KV + g * d + c];
                th = tanh (p->scale * u / p->softcap);
                ds[j] *= 1.0 - th * th;
              }
          /* dq_i; dk_j and dv_j collect every row's share */
          for (c = 0; c < d; c++)
            {
              double acc = 0.0;
              for (j = 0; j < n; j++)
                acc += ds[j] * k[(size_t) j * KV + g * d + c];
              dq[(size_t) i * Q + h * d + c] = attached ? (float) (p->scale * acc) : 0.0f;
            }
          for (j = 0; j < n; j++)
            for (c = 0; c < d; c++)
              {
                const size_t at = (size_t) j * KV + g * d + c;
                if (attached)
                  dkd[at] += p->scale * ds[j] * q[(size_t) i * Q + h * d + c];
                dvd[at] += hs * P[j] * go[c];
              }
        }
    }
  for (i = 0; i < n * KV; i++)
    {
      dk[i] = (float) dkd[i];
      dv[i] = (float) dvd[i];
    }
  free (dkd);
  return SC_OK;
}

static const ScBackendOps cpu_ref_ops = {
  .name = "cpu-ref",
  SC_CPU_SHARED_OPS,
  .matmul = ref_matmul,
  .attention = ref_attention,
  .layer_norm = ref_layer_norm,
  .gelu = ref_gelu,
  .geglu = ref_geglu,
  .matmul_backward = ref_matmul_backward,
  .attention_backward = ref_attention_backward,
};

ScBackend *
sc_backend_cpu_ref_new (void)
{
  ScCpuBackend *cb = sc_cpu_backend_new (&cpu_ref_ops, SC_CPU_CAPS, 1, NULL);

  if (cb == NULL)
    return NULL;
  /* the reference multiplies floats in double: weight_src expands each matrix once */
  cb->expand_weights = true;
  snprintf (cb->base.description, sizeof cb->base.description,
            "CPU reference (scalar, double accumulation)");
  return &cb->base;
}
