/* sc-mixing.c — value zeroing's distance and rows, ALTI of a layer and the rollout of
 * either (sc-mixing.h). */
#include "analysis/sc-mixing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double
sc_mixing_cos_distance (const float *a, const float *b, int n)
{
  double ab = 0.0, aa = 0.0, bb = 0.0, c;

  for (int e = 0; e < n; e++)
    {
      ab += (double) a[e] * b[e];
      aa += (double) a[e] * a[e];
      bb += (double) b[e] * b[e];
    }
  if (aa == 0.0 || bb == 0.0)
    return aa == bb ? 0.0 : 1.0;
  c = ab / sqrt (aa * bb);
  c = 1.0 - c;
  return c < 0.0 ? 0.0 : c > 2.0 ? 2.0 : c;
}

void
sc_mixing_normalise_rows (float *map, int n)
{
  for (int i = 0; i < n; i++)
    {
      float *row = map + (size_t) i * n;
      double s = 0.0;
      for (int j = 0; j <= i; j++)
        s += row[j];
      for (int j = 0; j < n; j++)
        row[j] = j <= i && s > 0.0 && isfinite (s) ? (float) (row[j] / s) : 0.0f;
    }
}

ScStatus
sc_alti_layer_map (const float *v, const float *wo, const ScNormDims *dm, int n,
                   const float *alpha, const float *x, const float *post_norm, double eps,
                   float *out, ScError *err)
{
  const size_t plane = (size_t) n * n;
  int H, E;
  double *f = NULL, *a = NULL, *y = NULL, *c = NULL;
  ScStatus st = SC_OK;

  if (v == NULL || wo == NULL || dm == NULL || alpha == NULL || x == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "ALTI: NULL argument");
  if (n < 1 || dm->n_heads < 1 || dm->n_kv_heads < 1 || dm->head_dim < 1 || dm->n_embd < 1
      || dm->n_heads % dm->n_kv_heads != 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "ALTI: bad shape (n %d, heads %d, KV heads "
                         "%d, head_dim %d, n_embd %d)", n, dm->n_heads, dm->n_kv_heads,
                         dm->head_dim, dm->n_embd);
  H = dm->n_heads, E = dm->n_embd;
  f = malloc ((size_t) n * H * E * sizeof *f);    /* f_h(x_j), (n, H, E) */
  a = malloc ((size_t) (n + 1) * E * sizeof *a);  /* row i's A_ij, (n, E), then their sum */
  y = malloc ((size_t) E * sizeof *y);
  c = malloc ((size_t) n * sizeof *c);
  if (f == NULL || a == NULL || y == NULL || c == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "ALTI: out of memory for %d tokens", n);
      goto out;
    }
  for (int j = 0; j < n; j++)
    sc_norm_head_vectors (v, wo, dm, j, f + (size_t) j * H * E);
  for (int i = 0; i < n; i++)
    {
      const float *xi = x + (size_t) i * E;
      double *sum = a + (size_t) n * E, scale = 1.0, ynorm = 0.0, total = 0.0;

      /* 1. A_ij = Σ_h α_h[i][j] f_h(x_j) for j <= i, and their sum */
      memset (sum, 0, (size_t) E * sizeof *sum);
      for (int j = 0; j <= i; j++)
        {
          double *aij = a + (size_t) j * E;
          memset (aij, 0, (size_t) E * sizeof *aij);
          for (int h = 0; h < H; h++)
            {
              const double w = alpha[h * plane + (size_t) i * n + j];
              const double *fh = f + ((size_t) j * H + h) * E;
              if (w != 0.0)
                for (int e = 0; e < E; e++)
                  aij[e] += w * fh[e];
            }
          for (int e = 0; e < E; e++)
            sum[e] += aij[e];
        }
      /* 2. the linearised post-attention norm: P_i(u) = ω' ∘ u / rms(Σ_j A_ij) */
      if (post_norm != NULL)
        {
          double ss = 0.0;
          for (int e = 0; e < E; e++)
            ss += sum[e] * sum[e];
          scale = 1.0 / sqrt (ss / E + eps);
        }
#define P_I(u, e) ((post_norm != NULL ? scale * post_norm[e] : 1.0) * (u))
      /* 3. y_i = Σ_j T_i(x_j) = x_i + P_i(Σ_j A_ij) */
      for (int e = 0; e < E; e++)
        {
          y[e] = (double) xi[e] + P_I (sum[e], e);
          ynorm += fabs (y[e]);
        }
      /* 4. c_ij = max(0, ‖y_i‖₁ − ‖y_i − T_i(x_j)‖₁) */
      for (int j = 0; j <= i; j++)
        {
          const double *aij = a + (size_t) j * E;
          double d = 0.0;
          for (int e = 0; e < E; e++)
            d += fabs (y[e] - P_I (aij[e], e) - (j == i ? (double) xi[e] : 0.0));
          c[j] = ynorm - d > 0.0 ? ynorm - d : 0.0;
          total += c[j];
        }
#undef P_I
      for (int j = 0; j < n; j++)
        out[(size_t) i * n + j] = j <= i && total > 0.0 && isfinite (total)
                                      ? (float) (c[j] / total) : 0.0f;
    }
out:
  free (f);
  free (a);
  free (y);
  free (c);
  return st;
}

ScStatus
sc_mixing_rollout (const float *const *maps, int L, int n, double *out, ScError *err)
{
  const size_t nn = (size_t) n * n;
  double *tmp;

  if (maps == NULL || out == NULL || L < 1 || n < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "mixing rollout of %d layers of %d tokens: "
                         "need at least one of each", L, n);
  for (int l = 0; l < L; l++)
    if (maps[l] == NULL)
      return sc_error_set (err, SC_ERR_INVALID_ARG, "mixing rollout: layer %d is NULL", l);
  if ((tmp = malloc (nn * sizeof *tmp)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "mixing rollout of %d tokens: out of memory", n);
  for (size_t k = 0; k < nn; k++)
    out[k] = maps[0][k];
  /* R ← M_l · R, layer by layer: (M R)[i][j] = Σ_k M[i][k] R[k][j] */
  for (int l = 1; l < L; l++)
    {
      const float *m = maps[l];
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
          {
            double acc = 0.0;
            for (int k = 0; k < n; k++)
              acc += (double) m[(size_t) i * n + k] * out[(size_t) k * n + j];
            tmp[(size_t) i * n + j] = acc;
          }
      memcpy (out, tmp, nn * sizeof *out);
    }
  free (tmp);
  return SC_OK;
}
