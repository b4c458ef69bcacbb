/* sc-sink.c — first-token mass and the sink rate of Gu et al. 2025 (sc-sink.h has the
 * definitions). */
#include "analysis/sc-sink.h"

#include <math.h>

ScStatus
sc_sink_first_mass (const float *probs, int n_query, int n_key, double *out, ScError *err)
{
  double sum = 0.0;

  if (probs == NULL || out == NULL || n_query < 1 || n_key < 1 || n_query > n_key)
    return sc_error_set (err, SC_ERR_INVALID_ARG,
                         "first-token mass of a (%d, %d) matrix: need 1 <= n_query <= n_key",
                         n_query, n_key);
  for (int i = 0; i < n_query; i++)
    sum += probs[(size_t) i * n_key];
  *out = sum / n_query;
  return SC_OK;
}

ScStatus
sc_sink_rate (const double *mass, int n_layers, int n_heads, double epsilon, ScSinkRate *out,
              double *layer_rate, double *layer_mean, ScError *err)
{
  double total = 0.0;
  int sinks = 0, counted = 0;

  if (mass == NULL || out == NULL || n_layers < 1 || n_heads < 1 || !isfinite (epsilon))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "sink rate of %d layers x %d heads at "
                         "epsilon %g: need masses, at least one head and a finite epsilon",
                         n_layers, n_heads, epsilon);
  for (int l = 0; l < n_layers; l++)
    {
      double sum = 0.0;
      int s = 0, c = 0;

      for (int h = 0; h < n_heads; h++)
        {
          const double m = mass[(size_t) l * n_heads + h];

          if (m > epsilon) /* false for NaN */
            s++;
          if (!isnan (m))
            {
              sum += m;
              c++;
            }
        }
      if (layer_rate != NULL)
        layer_rate[l] = (double) s / n_heads;
      if (layer_mean != NULL)
        layer_mean[l] = c > 0 ? sum / c : NAN;
      sinks += s;
      counted += c;
      total += sum;
    }
  out->epsilon = epsilon;
  out->n_heads = n_layers * n_heads;
  out->n_sinks = sinks;
  out->rate = (double) sinks / out->n_heads;
  out->mean = counted > 0 ? total / counted : NAN;
  return SC_OK;
}

/* Whether mass a (index i) ranks before mass b (index j): larger first, NaN last, ties to
 * the lower index. */
static bool
before (double a, int i, double b, int j)
{
  if (isnan (a) != isnan (b))
    return !isnan (a);
  if (!isnan (a) && a != b)
    return a > b;
  return i < j;
}

int
sc_sink_top (const double *mass, int n, int k, int *idx)
{
  int m;

  if (mass == NULL || idx == NULL || n < 1 || k < 1)
    return 0;
  m = k < n ? k : n;
  /* Insertion into a sorted prefix of length at most m. */
  int have = 0;
  for (int i = 0; i < n; i++)
    {
      int pos = have;

      while (pos > 0 && before (mass[i], i, mass[idx[pos - 1]], idx[pos - 1]))
        pos--;
      if (pos >= m)
        continue;
      for (int q = (have < m ? have : m - 1); q > pos; q--)
        idx[q] = idx[q - 1];
      idx[pos] = i;
      if (have < m)
        have++;
    }
  return have;
}
