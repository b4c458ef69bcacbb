/* sc-induction.c — induction-head attention scores and OV copying scores (sc-induction.h
 * has the definitions). Runs no model: it reads a captured matrix or the model's weights. */
#include "analysis/sc-induction.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sc-blas.h"

ScStatus
sc_induction_head_scores (const float *probs, int n, int n_prefix, int T,
                          ScInductionScores *out, ScError *err)
{
  double pm = 0.0, dup = 0.0, prev = 0.0;
  int i;

  if (probs == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "induction scores: NULL matrix or result");
  if (T < 2 || n_prefix < 0 || n != n_prefix + 2 * T)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "induction scores: a %d x %d matrix is not a "
                         "prefix of %d plus two copies of %d tokens (T >= 2)", n, n, n_prefix, T);
  for (i = 0; i < T; i++)
    {
      const int p = n_prefix + T + i;
      const float *row = probs + (size_t) p * n;
      pm += row[p - T + 1];
      dup += row[p - T];
      prev += row[p - 1];
    }
  out->prefix_matching = pm / T;
  out->duplicate_token = dup / T;
  out->previous_token = prev / T;
  return SC_OK;
}

/* Vocabulary rows per block of the Gram product: 1024 rows of 576 floats is 2.3 MB, the
 * transposed block stays in L2/L3 while sgemm reads it. */
#define GRAM_BLOCK 1024

ScStatus
sc_ov_gram (const float *w_e, const float *w_u, const float *g_out, int n_vocab, int n_embd,
            float *gram, ScError *err)
{
  float *et, *ub;
  int t0, i, j;

  if (w_e == NULL || w_u == NULL || gram == NULL || n_vocab < 1 || n_embd < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "OV gram: bad arguments");
  et = malloc ((size_t) GRAM_BLOCK * n_embd * sizeof *et);
  ub = malloc ((size_t) GRAM_BLOCK * n_embd * sizeof *ub);
  if (et == NULL || ub == NULL)
    {
      free (et);
      free (ub);
      return sc_error_set (err, SC_ERR_NOMEM, "OV gram: out of memory (n_embd %d)", n_embd);
    }
  memset (gram, 0, (size_t) n_embd * n_embd * sizeof *gram);
  /* gram (E, E) += W_E[block]^T (E, k) . (W_U[block] diag(g_out)) (k, E), block by block:
   * sc_sgemm multiplies untransposed left operands, so each block of W_E is transposed. */
  for (t0 = 0; t0 < n_vocab; t0 += GRAM_BLOCK)
    {
      const int k = n_vocab - t0 < GRAM_BLOCK ? n_vocab - t0 : GRAM_BLOCK;
      for (i = 0; i < k; i++)
        for (j = 0; j < n_embd; j++)
          {
            et[(size_t) j * k + i] = w_e[(size_t) (t0 + i) * n_embd + j];
            ub[(size_t) i * n_embd + j]
                = w_u[(size_t) (t0 + i) * n_embd + j] * (g_out != NULL ? g_out[j] : 1.0f);
          }
      sc_sgemm (false, n_embd, n_embd, k, 1.0f, et, k, ub, n_embd, 1.0f, gram, n_embd);
    }
  free (et);
  free (ub);
  return SC_OK;
}

ScStatus
sc_ov_copying_head (const float *gram, int n_embd, const float *w_v, const float *g_attn,
                    const float *w_o, int ld_o, int head_dim, ScOvCopying *out, ScError *err)
{
  const int d = head_dim, E = n_embd;
  float *wv = NULL, *x = NULL, *y = NULL;
  double *a = NULL, *wr = NULL, *wi = NULL;
  double sum_abs = 0.0, sum_re = 0.0, sum_pos = 0.0;
  ScStatus st = SC_OK;
  int i, j;

  if (gram == NULL || w_v == NULL || w_o == NULL || out == NULL || d < 1 || E < 1 || ld_o < d)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "OV copying: bad arguments");
  wv = malloc ((size_t) d * E * sizeof *wv);
  x = malloc ((size_t) d * E * sizeof *x);
  y = malloc ((size_t) d * d * sizeof *y);
  a = malloc ((size_t) d * d * sizeof *a);
  wr = malloc ((size_t) d * sizeof *wr);
  wi = malloc ((size_t) d * sizeof *wi);
  if (wv == NULL || x == NULL || y == NULL || a == NULL || wr == NULL || wi == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "OV copying: out of memory (head_dim %d)", d);
      goto out;
    }
  /* 1. W_V' = W_V diag(g_attn)   (d, E) */
  for (i = 0; i < d; i++)
    for (j = 0; j < E; j++)
      wv[(size_t) i * E + j] = w_v[(size_t) i * E + j] * (g_attn != NULL ? g_attn[j] : 1.0f);
  /* 2. X = W_V' . gram            (d, E) . (E, E) -> (d, E) */
  sc_sgemm (false, d, E, E, 1.0f, wv, E, gram, E, 0.0f, x, E);
  /* 3. Y = X . W_O^h              (d, E) . (E, d) -> (d, d) */
  sc_sgemm (false, d, d, E, 1.0f, x, E, w_o, ld_o, 0.0f, y, d);
  /* 4. eigenvalues of Y (dgeev; row-major is the transpose, same spectrum) */
  for (i = 0; i < d * d; i++)
    a[i] = y[i];
  if ((st = sc_blas_eigenvalues (d, a, wr, wi, err)) != SC_OK)
    goto out;
  for (i = 0; i < d; i++)
    {
      const double mag = hypot (wr[i], wi[i]);
      sum_abs += mag;
      sum_re += wr[i];
      if (wr[i] > 0.0)
        sum_pos += mag;
    }
  out->copying = sum_abs > 0.0 ? sum_re / sum_abs : NAN;
  out->positive_share = sum_abs > 0.0 ? sum_pos / sum_abs : NAN;
out:
  free (wv);
  free (x);
  free (y);
  free (a);
  free (wr);
  free (wi);
  return st;
}

ScStatus
sc_ov_copying_model (const ScModel *model, ScOvCopying *out, ScError *err)
{
  const ScModelInfo *info;
  const ScWeights *w;
  float *gram;
  ScStatus st;
  uint32_t l, h;

  if (model == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "OV copying: NULL model or result");
  if ((st = sc_blas_init (err)) != SC_OK)
    return st;
  info = sc_model_info (model);
  w = sc_model_weights (model);
  if ((gram = malloc ((size_t) info->n_embd * info->n_embd * sizeof *gram)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "OV copying: out of memory (n_embd %u)",
                         info->n_embd);
  st = sc_ov_gram (w->token_embd, w->output, w->output_norm, (int) info->n_vocab,
                   (int) info->n_embd, gram, err);
  for (l = 0; st == SC_OK && l < info->n_layers; l++)
    for (h = 0; st == SC_OK && h < info->n_heads; h++)
      {
        const ScLayerWeights *lw = &w->layers[l];
        /* GQA: query head h reads the values of KV head h / (n_heads / n_kv_heads). */
        const uint32_t kv = h / (info->n_heads / info->n_kv_heads);
        const float *wv = lw->wv + (size_t) kv * info->head_dim * info->n_embd;
        const float *wo = lw->wo + (size_t) h * info->head_dim;

        st = sc_ov_copying_head (gram, (int) info->n_embd, wv, lw->attn_norm, wo,
                                 (int) (info->n_heads * info->head_dim), (int) info->head_dim,
                                 &out[l * info->n_heads + h], err);
        if (st != SC_OK)
          sc_error_prefix (err, "layer %u head %u", l, h);
      }
  free (gram);
  return st;
}
