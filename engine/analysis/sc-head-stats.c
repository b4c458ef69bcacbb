/* sc-head-stats.c — per-head statistics (sc-head-stats.h has the definitions). One pass
 * over the rows; every sum in double so that a 4,096-row mean keeps its digits. */
#include "analysis/sc-head-stats.h"

#include "core/sc-math.h"

#include <math.h>
#include <string.h>

static const char *const metric_ids[SC_HEAD_N_METRICS] = {
  [SC_HEAD_METRIC_ENTROPY] = "entropy",
  [SC_HEAD_METRIC_ENTROPY_NORM] = "entropy-norm",
  [SC_HEAD_METRIC_DISTANCE] = "distance",
  [SC_HEAD_METRIC_CONFIDENCE] = "confidence",
  [SC_HEAD_METRIC_SINK] = "sink",
  [SC_HEAD_METRIC_SINK_K] = "sink-k",
  [SC_HEAD_METRIC_PREVIOUS] = "previous-token",
  [SC_HEAD_METRIC_SELF] = "self",
  [SC_HEAD_METRIC_LAST_ENTROPY] = "last-entropy",
};

/* -sum a ln a over one row, 0 ln 0 = 0. The logs are core/sc-math.h's branch-free sc_logf
 * (1e-7 relative; a zero becomes ln 1 = 0, so the loop has no branch and vectorises), the
 * sum is in double: a capture computes this for every row of every head (35 M logs for 270
 * heads at n = 512), where libm's log cost as much as a tenth of the capture. */
static double
row_entropy (const float *row, int len)
{
  enum { LANES = 8 };
  double acc[LANES] = { 0 }, h = 0.0;
  int j = 0, k;

  /* Eight independent double sums (a fixed order, so the result does not depend on the
   * compiler): without them IEEE semantics forbid vectorising one running sum. */
  for (; j + LANES <= len; j += LANES)
    for (k = 0; k < LANES; k++)
      {
        const float a = row[j + k];
        acc[k] += (double) (a * sc_logf (a + (float) (a <= 0.0f)));
      }
  for (; j < len; j++)
    {
      const float a = row[j];
      h += (double) (a * sc_logf (a + (float) (a <= 0.0f)));
    }
  for (k = 0; k < LANES; k++)
    h += acc[k];
  return -h;
}

/* sum_j a_j |p - j| over one row, in LANES independent double sums (as row_entropy). */
static double
row_distance (const float *row, int len, int p)
{
  enum { LANES = 8 };
  double acc[LANES] = { 0 }, d = 0.0;
  int j = 0, k;

  for (; j + LANES <= len; j += LANES)
    for (k = 0; k < LANES; k++)
      {
        const int off = j + k - p;
        acc[k] += (double) row[j + k] * (double) (off < 0 ? -off : off);
      }
  for (; j < len; j++)
    d += (double) row[j] * (double) (j > p ? j - p : p - j);
  for (k = 0; k < LANES; k++)
    d += acc[k];
  return d;
}

/* max_j a_j (the row's "confidence"); exact, so any order gives the same value. */
static float
row_max (const float *row, int len)
{
  enum { LANES = 8 };
  float m[LANES];
  int j = 0, k;

  for (k = 0; k < LANES; k++)
    m[k] = row[0];
  for (; j + LANES <= len; j += LANES)
    for (k = 0; k < LANES; k++)
      m[k] = row[j + k] > m[k] ? row[j + k] : m[k];
  for (; j < len; j++)
    m[0] = row[j] > m[0] ? row[j] : m[0];
  for (k = 1; k < LANES; k++)
    m[0] = m[k] > m[0] ? m[k] : m[0];
  return m[0];
}

ScStatus
sc_head_stats_compute (const float *probs, int n_query, int n_key, const ScHeadStatsOptions *opt,
                       ScHeadStats *out, ScError *err)
{
  int k = opt != NULL && opt->sink_k > 0 ? opt->sink_k : SC_HEAD_STATS_DEFAULT_SINK_K;
  double ent = 0.0, ent_norm = 0.0, dist = 0.0, conf = 0.0, sink = 0.0, sink_k = 0.0;
  double prev = 0.0, self = 0.0;
  int n_norm = 0, n_prev = 0, i, j;
  const float *last;

  if (probs == NULL || out == NULL || n_query < 1 || n_key < 1 || n_query > n_key)
    return sc_error_set (err, SC_ERR_INVALID_ARG,
                         "head statistics of a (%d, %d) matrix: need 1 <= n_query <= n_key",
                         n_query, n_key);
  if (k > n_key)
    k = n_key;

  for (i = 0; i < n_query; i++)
    {
      const float *row = probs + (size_t) i * n_key;
      int p = n_key - n_query + i;
      double h = row_entropy (row, n_key), d = row_distance (row, n_key, p), first = 0.0;
      float top = row_max (row, n_key);

      for (j = 0; j < k; j++)
        first += row[j];
      ent += h;
      dist += d;
      conf += top;
      sink += row[0];
      sink_k += first;
      if (p >= 1)
        {
          ent_norm += h / log ((double) p + 1.0);
          n_norm++;
          prev += row[p - 1];
          n_prev++;
        }
      self += row[p];
    }

  memset (out, 0, sizeof *out);
  out->entropy = ent / n_query;
  out->entropy_norm = n_norm > 0 ? ent_norm / n_norm : NAN;
  out->distance = dist / n_query;
  out->confidence = conf / n_query;
  out->sink = sink / n_query;
  out->sink_k = sink_k / n_query;
  out->previous = n_prev > 0 ? prev / n_prev : NAN;
  out->self = self / n_query;

  last = probs + (size_t) (n_query - 1) * n_key;
  out->last_entropy = row_entropy (last, n_key);
  out->last_top = 0;
  for (j = 1; j < n_key; j++)
    if (last[j] > last[out->last_top])
      out->last_top = j;
  out->last_top_weight = last[out->last_top];
  return SC_OK;
}

double
sc_head_stats_get (const ScHeadStats *s, ScHeadMetric metric)
{
  switch (metric)
    {
    case SC_HEAD_METRIC_ENTROPY: return s->entropy;
    case SC_HEAD_METRIC_ENTROPY_NORM: return s->entropy_norm;
    case SC_HEAD_METRIC_DISTANCE: return s->distance;
    case SC_HEAD_METRIC_CONFIDENCE: return s->confidence;
    case SC_HEAD_METRIC_SINK: return s->sink;
    case SC_HEAD_METRIC_SINK_K: return s->sink_k;
    case SC_HEAD_METRIC_PREVIOUS: return s->previous;
    case SC_HEAD_METRIC_SELF: return s->self;
    case SC_HEAD_METRIC_LAST_ENTROPY: return s->last_entropy;
    case SC_HEAD_N_METRICS: break;
    }
  return NAN;
}

const char *
sc_head_metric_id (ScHeadMetric metric)
{
  return (unsigned) metric < SC_HEAD_N_METRICS ? metric_ids[metric] : NULL;
}

bool
sc_head_metric_from_id (const char *id, ScHeadMetric *out)
{
  int m;

  for (m = 0; id != NULL && m < SC_HEAD_N_METRICS; m++)
    if (strcmp (id, metric_ids[m]) == 0)
      {
        *out = (ScHeadMetric) m;
        return true;
      }
  return false;
}
