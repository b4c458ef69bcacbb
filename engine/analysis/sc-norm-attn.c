/* sc-norm-attn.c — norm-based attention (sc-norm-attn.h): value norms through each head's
 * slice of W_O, and the per-head and per-layer maps. */
#include "analysis/sc-norm-attn.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

ScStatus
sc_norm_values (const float *v, const float *wo, const ScNormDims *dm, int n, double *vnorm,
                double *gram, ScError *err)
{
  int H, Hkv, d, E, Q, KV, group;
  double *f;

  if (v == NULL || wo == NULL || dm == NULL || vnorm == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "norm attention: NULL argument");
  H = dm->n_heads, Hkv = dm->n_kv_heads, d = dm->head_dim, E = dm->n_embd;
  if (n < 1 || H < 1 || Hkv < 1 || d < 1 || E < 1 || H % Hkv != 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "norm attention: bad shape (n %d, heads %d, "
                         "KV heads %d, head_dim %d, n_embd %d)", n, H, Hkv, d, E);
  Q = H * d, KV = Hkv * d, group = H / Hkv;
  /* f (H, E): every head's f_h(x_j) at one token j, in double */
  if ((f = malloc ((size_t) H * E * sizeof *f)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "norm attention: out of memory");
  for (int j = 0; j < n; j++)
    {
      /* 1. f_h(x_j)[e] = Σ_k W_O[e][h·d + k] · v_j[g(h)·d + k] */
      for (int h = 0; h < H; h++)
        {
          const float *vj = v + (size_t) j * KV + (size_t) (h / group) * d;
          double *fh = f + (size_t) h * E, ss = 0.0;
          for (int e = 0; e < E; e++)
            {
              const float *w = wo + (size_t) e * Q + (size_t) h * d;
              double acc = 0.0;
              for (int k = 0; k < d; k++)
                acc += (double) w[k] * (double) vj[k];
              fh[e] = acc;
              ss += acc * acc;
            }
          vnorm[(size_t) h * n + j] = sqrt (ss);
        }
      /* 2. G_j[h][h'] = f_h · f_h' (the diagonal from the same sums as the norms) */
      if (gram != NULL)
        {
          double *g = gram + (size_t) j * H * H;
          for (int h = 0; h < H; h++)
            {
              const double nh = vnorm[(size_t) h * n + j];
              g[(size_t) h * H + h] = nh * nh;
              for (int h2 = h + 1; h2 < H; h2++)
                {
                  const double *a = f + (size_t) h * E, *b = f + (size_t) h2 * E;
                  double acc = 0.0;
                  for (int e = 0; e < E; e++)
                    acc += a[e] * b[e];
                  g[(size_t) h * H + h2] = g[(size_t) h2 * H + h] = acc;
                }
            }
        }
    }
  free (f);
  return SC_OK;
}

void
sc_norm_head_map (const float *alpha, const double *vnorm, int n_q, int n_k, float *out)
{
  for (int i = 0; i < n_q; i++)
    for (int j = 0; j < n_k; j++)
      out[(size_t) i * n_k + j] = (float) ((double) alpha[(size_t) i * n_k + j] * vnorm[j]);
}

ScStatus
sc_norm_layer_map (const float *alpha, const double *gram, int H, int n_q, int n_k, float *out,
                   ScError *err)
{
  const size_t plane = (size_t) n_q * n_k;
  double *a;

  if (alpha == NULL || gram == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "norm attention: NULL argument");
  if (H < 1 || n_q < 1 || n_k < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "norm attention: bad shape (heads %d, "
                         "%d queries, %d keys)", H, n_q, n_k);
  if ((a = malloc ((size_t) H * sizeof *a)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "norm attention: out of memory");

  for (int i = 0; i < n_q; i++)
    for (int j = 0; j < n_k; j++)
      {
        const double *g = gram + (size_t) j * H * H;
        const size_t ij = (size_t) i * n_k + j;
        double q = 0.0;
        bool any = false;
        for (int h = 0; h < H; h++)
          any |= (a[h] = alpha[h * plane + ij]) != 0.0;
        if (any) /* a causal row's keys past i: every weight 0, N 0 (no H² sum) */
          for (int h = 0; h < H; h++)
            {
              double row = 0.0;
              for (int h2 = 0; h2 < H; h2++)
                row += g[(size_t) h * H + h2] * a[h2];
              q += a[h] * row;
            }
        /* a G a >= 0 exactly (a sum of squares); rounding may take a tiny one below */
        out[ij] = (float) sqrt (q > 0.0 ? q : 0.0);
      }
  free (a);
  return SC_OK;
}

double
sc_norm_first_share (const float *map, int n)
{
  double total = 0.0;
  int rows = 0;

  for (int i = 1; i < n; i++)
    {
      const float *row = map + (size_t) i * n;
      double s = 0.0;
      for (int j = 0; j < n; j++)
        s += row[j];
      if (!(s > 0.0) || !isfinite (s))
        continue;
      total += row[0] / s;
      rows++;
    }
  return rows > 0 ? total / rows : NAN;
}
