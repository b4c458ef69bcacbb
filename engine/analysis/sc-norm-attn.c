/* sc-norm-attn.c — norm-based attention (sc-norm-attn.h): value norms through each head's
 * slice of W_O, and the per-head and per-layer maps. */
#include "analysis/sc-norm-attn.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

/* Checks @dm and @n; SC_OK or SC_ERR_INVALID_ARG naming the shape. */
static ScStatus
check_dims (const ScNormDims *dm, int n, ScError *err)
{
  if (n < 1 || dm->n_heads < 1 || dm->n_kv_heads < 1 || dm->head_dim < 1 || dm->n_embd < 1
      || dm->n_heads % dm->n_kv_heads != 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "norm attention: bad shape (n %d, heads %d, "
                         "KV heads %d, head_dim %d, n_embd %d)", n, dm->n_heads,
                         dm->n_kv_heads, dm->head_dim, dm->n_embd);
  return SC_OK;
}

void
sc_norm_head_vectors (const float *v, const float *wo, const ScNormDims *dm, int j, double *f)
{
  const int H = dm->n_heads, d = dm->head_dim, E = dm->n_embd, Q = H * d,
            KV = dm->n_kv_heads * d, group = H / dm->n_kv_heads;

  for (int h = 0; h < H; h++)
    {
      const float *vj = v + (size_t) j * KV + (size_t) (h / group) * d;
      double *fh = f + (size_t) h * E;
      for (int e = 0; e < E; e++)
        {
          const float *w = wo + (size_t) e * Q + (size_t) h * d;
          double acc = 0.0;
          for (int k = 0; k < d; k++)
            acc += (double) w[k] * (double) vj[k];
          fh[e] = acc;
        }
    }
}

ScStatus
sc_norm_values (const float *v, const float *wo, const ScNormDims *dm, int n, double *vnorm,
                double *gram, ScError *err)
{
  int H, E;
  double *f;
  ScStatus st;

  if (v == NULL || wo == NULL || dm == NULL || vnorm == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "norm attention: NULL argument");
  if ((st = check_dims (dm, n, err)) != SC_OK)
    return st;
  H = dm->n_heads, E = dm->n_embd;
  if ((f = malloc ((size_t) H * E * sizeof *f)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "norm attention: out of memory");
  for (int j = 0; j < n; j++)
    {
      /* 1. f_h(x_j) and its norm */
      sc_norm_head_vectors (v, wo, dm, j, f);
      for (int h = 0; h < H; h++)
        {
          const double *fh = f + (size_t) h * E;
          double ss = 0.0;
          for (int e = 0; e < E; e++)
            ss += fh[e] * fh[e];
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

ScStatus
sc_norm_residual_terms (const float *v, const float *wo, const ScNormDims *dm, int n,
                        const float *x, const double *omega, const double *w, double *gram,
                        double *cross, double *xx, ScError *err)
{
  int H, E;
  double *f;
  ScStatus st;

  if (v == NULL || wo == NULL || dm == NULL || x == NULL || gram == NULL || cross == NULL
      || xx == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "norm attention: NULL argument");
  if ((st = check_dims (dm, n, err)) != SC_OK)
    return st;
  H = dm->n_heads, E = dm->n_embd;
  if ((f = malloc ((size_t) H * E * sizeof *f)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "norm attention: out of memory");
  for (int j = 0; j < n; j++)
    {
      const float *xj = x + (size_t) j * E;
      double *g = gram + (size_t) j * H * H, s = 0.0;
      sc_norm_head_vectors (v, wo, dm, j, f);
      /* ω ∘ f_h, in place: the Gram and the cross terms read only the weighted vectors */
      for (int h = 0; h < H; h++)
        for (int e = 0; e < E; e++)
          f[(size_t) h * E + e] *= omega != NULL ? omega[e] : 1.0;
      for (int h = 0; h < H; h++)
        {
          const double *a = f + (size_t) h * E;
          double c = 0.0;
          for (int h2 = h; h2 < H; h2++)
            {
              const double *b = f + (size_t) h2 * E;
              double acc = 0.0;
              for (int e = 0; e < E; e++)
                acc += a[e] * b[e];
              g[(size_t) h * H + h2] = g[(size_t) h2 * H + h] = acc;
            }
          for (int e = 0; e < E; e++)
            c += a[e] * (w != NULL ? w[e] : 1.0) * (double) xj[e];
          cross[(size_t) j * H + h] = c;
        }
      for (int e = 0; e < E; e++)
        {
          const double we = (w != NULL ? w[e] : 1.0) * (double) xj[e];
          s += we * we;
        }
      xx[j] = s;
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

ScStatus
sc_norm_residual_map (const float *alpha, const double *gram, const double *cross,
                      const double *xx, int H, int n, const double *row_scale,
                      const double *out_scale, float *out, ScError *err)
{
  const size_t plane = (size_t) n * n;
  double *a;

  if (alpha == NULL || gram == NULL || cross == NULL || xx == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "norm attention: NULL argument");
  if (H < 1 || n < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "norm attention: bad shape (heads %d, %d "
                         "tokens)", H, n);
  if ((a = malloc ((size_t) H * sizeof *a)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "norm attention: out of memory");
  for (int i = 0; i < n; i++)
    {
      const double s = row_scale != NULL ? row_scale[i] : 1.0;
      const double o = out_scale != NULL ? out_scale[i] : 1.0;
      for (int j = 0; j < n; j++)
        {
          const double *g = gram + (size_t) j * H * H;
          const size_t ij = (size_t) i * n + j;
          double q = 0.0;
          for (int h = 0; h < H; h++)
            a[h] = alpha[h * plane + ij];
          for (int h = 0; h < H; h++)
            {
              double row = 0.0;
              for (int h2 = 0; h2 < H; h2++)
                row += g[(size_t) h * H + h2] * a[h2];
              q += a[h] * row;
            }
          q *= s * s;
          if (j == i) /* the residual: + 2 s (a · c_i) + ‖w ∘ x_i‖² */
            {
              double ac = 0.0;
              for (int h = 0; h < H; h++)
                ac += a[h] * cross[(size_t) i * H + h];
              q += 2.0 * s * ac + xx[i];
            }
          out[ij] = (float) (o * sqrt (q > 0.0 ? q : 0.0));
        }
    }
  free (a);
  return SC_OK;
}

double
sc_norm_mix_ratio (const float *map, int n)
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
      total += (s - row[i]) / s;
      rows++;
    }
  return rows > 0 ? total / rows : NAN;
}
