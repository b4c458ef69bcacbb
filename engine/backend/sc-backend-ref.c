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
              row[j] = (float) (dot * params->scale);
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

static const ScBackendOps cpu_ref_ops = {
  .name = "cpu-ref",
  SC_CPU_SHARED_OPS,
  .matmul = ref_matmul,
  .attention = ref_attention,
  .layer_norm = ref_layer_norm,
  .gelu = ref_gelu,
  .geglu = ref_geglu,
};

ScBackend *
sc_backend_cpu_ref_new (void)
{
  ScCpuBackend *cb = sc_cpu_backend_new (&cpu_ref_ops, SC_CPU_CAPS, 1, NULL);

  if (cb == NULL)
    return NULL;
  snprintf (cb->base.description, sizeof cb->base.description,
            "CPU reference (scalar, double accumulation)");
  return &cb->base;
}
