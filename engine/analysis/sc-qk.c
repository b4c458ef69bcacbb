/* sc-qk.c — one query against its keys (sc-qk.h). */
#include "analysis/sc-qk.h"

#include <math.h>

void
sc_qk_scores (const float *q, const float *k, size_t k_stride, int head_dim, int n,
              double scale, ScQkScore *out)
{
  double mx = -INFINITY, sum = 0;

  /* 1. the scores, and their maximum (softmax is taken relative to it) */
  for (int j = 0; j < n; j++)
    {
      const float *kj = k + (size_t) j * k_stride;
      double dot = 0;
      for (int d = 0; d < head_dim; d++)
        dot += (double) q[d] * kj[d];
      out[j].dot = dot;
      out[j].scaled = dot * scale;
      mx = fmax (mx, out[j].scaled);
    }
  /* 2. the normaliser, 3. the weights */
  for (int j = 0; j < n; j++)
    sum += exp (out[j].scaled - mx);
  for (int j = 0; j < n; j++)
    out[j].weight = exp (out[j].scaled - mx) / sum;
}
