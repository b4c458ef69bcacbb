/* sc-effect.c — output effects of an intervention (definitions in sc-effect.h).
 *
 * Everything is done on log-probabilities in double: ln p_v = l_v − max − ln Z with
 * Z = Σ exp (l_v − max) ≥ 1, so nothing overflows and a probability that underflows to 0
 * still has a finite log. The Jensen–Shannon divergence is summed in its KL form with
 * ln m from the two logs (a log-add-exp), not as H (m) − (H (p) + H (q)) / 2, whose three
 * entropies of order ln n_vocab cancel to a small difference for close distributions.
 * sc_jsd (sc-head-distance.h) is the float-row version for attention rows; here the rows are
 * logits, so the probabilities never exist in float.
 */
#include "analysis/sc-effect.h"

#include <math.h>
#include <stdlib.h>

int
sc_logits_top1 (const float *logits, int n_vocab)
{
  if (logits == NULL || n_vocab < 1)
    return -1;
  int best = 0;
  for (int v = 0; v < n_vocab; v++)
    {
      if (isnan (logits[v]))
        return -1;
      if (logits[v] > logits[best])  /* strict: the lowest id keeps a tie */
        best = v;
    }
  return best;
}

/* Checks a row and returns its max and ln Z (Z = Σ exp (l − max)); SC_ERR_INVALID_ARG on a
 * non-finite entry, named by @what and @row. */
static ScStatus
row_lse (const float *l, int n_vocab, const char *what, int row, double *max_out,
         double *lnz_out, ScError *err)
{
  double max = -INFINITY;
  for (int v = 0; v < n_vocab; v++)
    {
      if (!isfinite (l[v]))
        return sc_error_set (err, SC_ERR_INVALID_ARG, "%s logits row %d, entry %d: %g is not finite",
                             what, row, v, (double) l[v]);
      if (l[v] > max)
        max = l[v];
    }
  double z = 0.0;
  for (int v = 0; v < n_vocab; v++)
    z += exp ((double) l[v] - max);
  *max_out = max;
  *lnz_out = log (z);
  return SC_OK;
}

ScStatus
sc_log_softmax_at (const float *logits, int n_vocab, int token, double *out, ScError *err)
{
  if (logits == NULL || out == NULL || n_vocab < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "log-softmax: NULL logits or n_vocab %d < 1",
                         n_vocab);
  if (token < 0 || token >= n_vocab)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "log-softmax: token %d outside [0, %d)",
                         token, n_vocab);
  double max = 0.0, lnz = 0.0;
  ScStatus st = row_lse (logits, n_vocab, "the", 0, &max, &lnz, err);
  if (st != SC_OK)
    return st;
  *out = (double) logits[token] - max - lnz;
  return SC_OK;
}

ScStatus
sc_effect_next_token (const float *clean, const float *ablated, int n_vocab, int target,
                      ScEffect *out, ScError *err)
{
  if (clean == NULL || ablated == NULL || out == NULL || n_vocab < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "effect: NULL rows or n_vocab %d < 1",
                         n_vocab);
  if (target < 0 || target >= n_vocab)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "effect: target %d outside [0, %d)",
                         target, n_vocab);
  double max_p = 0.0, lnz_p = 0.0, max_q = 0.0, lnz_q = 0.0;
  ScStatus st = row_lse (clean, n_vocab, "clean", 0, &max_p, &lnz_p, err);
  if (st == SC_OK)
    st = row_lse (ablated, n_vocab, "ablated", 0, &max_q, &lnz_q, err);
  if (st != SC_OK)
    return st;

  /* One pass over the vocabulary: with d = |ln p − ln q| and the larger log a, the smaller b,
   *   ln m = a + ln (1 + e^−d) − ln 2,   g = a − ln m = ln 2 − ln (1 + e^−d) ∈ [0, ln 2),
   * so p ln (p/m) + q ln (q/m) = (p + q) g − (the smaller one's probability) · d. */
  double tv = 0.0, jsd = 0.0;
  for (int v = 0; v < n_vocab; v++)
    {
      const double lp = (double) clean[v] - max_p - lnz_p;
      const double lq = (double) ablated[v] - max_q - lnz_q;
      const double p = exp (lp), q = exp (lq);
      tv += fabs (p - q);
      if (lp == lq)
        continue;  /* m = p = q: both terms are exactly 0 */
      const double d = fabs (lp - lq);
      const double g = M_LN2 - log1p (exp (-d));
      jsd += (p + q) * g - (lp > lq ? q : p) * d;
    }
  jsd *= 0.5;
  /* Rounding can leave a few ulps outside the bounds the definitions guarantee. */
  if (jsd < 0.0)
    jsd = 0.0;
  if (jsd > M_LN2)
    jsd = M_LN2;
  tv *= 0.5;
  if (tv > 1.0)
    tv = 1.0;

  out->logp_clean = (double) clean[target] - max_p - lnz_p;
  out->logp_ablated = (double) ablated[target] - max_q - lnz_q;
  out->delta_logp = out->logp_ablated - out->logp_clean;
  out->tv = tv;
  out->jsd = jsd;
  out->top1_clean = sc_logits_top1 (clean, n_vocab);
  out->top1_ablated = sc_logits_top1 (ablated, n_vocab);
  return SC_OK;
}

ScStatus
sc_token_losses (const float *logits, const int32_t *ids, int n, int n_vocab, double *out,
                 ScError *err)
{
  if (logits == NULL || ids == NULL || out == NULL || n < 2 || n_vocab < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG,
                         "token losses: NULL arguments, n %d < 2 or n_vocab %d < 1", n, n_vocab);
  for (int q = 0; q < n; q++)
    if (ids[q] < 0 || ids[q] >= n_vocab)
      return sc_error_set (err, SC_ERR_INVALID_ARG, "token losses: id %d at position %d outside [0, %d)",
                           (int) ids[q], q, n_vocab);
  for (int q = 1; q < n; q++)
    {
      const float *row = logits + (size_t) (q - 1) * (size_t) n_vocab;
      double max = 0.0, lnz = 0.0;
      ScStatus st = row_lse (row, n_vocab, "the", q - 1, &max, &lnz, err);
      if (st != SC_OK)
        return st;
      out[q - 1] = -((double) row[ids[q]] - max - lnz);
    }
  return SC_OK;
}

ScStatus
sc_delta_mean_loss (const double *clean, const double *ablated, int n, double *out,
                    ScError *err)
{
  if (clean == NULL || ablated == NULL || out == NULL || n < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "delta loss: NULL arguments or n %d < 1", n);
  double sc = 0.0, sa = 0.0;
  for (int i = 0; i < n; i++)
    {
      if (isnan (clean[i]) || isnan (ablated[i]))
        return sc_error_set (err, SC_ERR_INVALID_ARG, "delta loss: NaN loss at position %d", i);
      sc += clean[i];
      sa += ablated[i];
    }
  *out = sa / n - sc / n;
  return SC_OK;
}

ScStatus
sc_delta_loss_logits (const float *clean, const float *ablated, const int32_t *ids, int n,
                      int n_vocab, double *out, ScError *err)
{
  if (clean == NULL || ablated == NULL || ids == NULL || out == NULL || n < 2 || n_vocab < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG,
                         "delta loss: NULL arguments, n %d < 2 or n_vocab %d < 1", n, n_vocab);
  double *lc = malloc (2 * (size_t) (n - 1) * sizeof *lc);
  if (lc == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "delta loss: no memory for %d losses", 2 * (n - 1));
  double *la = lc + (n - 1);
  ScStatus st = sc_token_losses (clean, ids, n, n_vocab, lc, err);
  if (st != SC_OK)
    sc_error_prefix (err, "clean");
  else if ((st = sc_token_losses (ablated, ids, n, n_vocab, la, err)) != SC_OK)
    sc_error_prefix (err, "ablated");
  else
    st = sc_delta_mean_loss (lc, la, n - 1, out, err);
  free (lc);
  return st;
}
