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

void
sc_head_stats_begin (ScHeadStatsAcc *acc, int n_query, int n_key, const ScHeadStatsOptions *opt)
{
  int k = opt != NULL && opt->sink_k > 0 ? opt->sink_k : SC_HEAD_STATS_DEFAULT_SINK_K;

  memset (acc, 0, sizeof *acc);
  acc->n_query = n_query;
  acc->n_key = n_key;
  acc->k = k > n_key ? n_key : k;
}

void
sc_head_stats_add_row (ScHeadStatsAcc *acc, const float *row, int len)
{
  const int n_key = acc->n_key, p = n_key - acc->n_query + acc->i;
  /* The row sums run in lanes of 8 (row_entropy, row_distance): stopping at the end of the
   * 8-block that holds the last nonzero entry adds the same values to the same lanes, in
   * the same order, as running to n_key would (the zeros after it add exactly +0), so the
   * result is the same bits. */
  int span = len <= 0 ? 8 : (len + 7) / 8 * 8;
  double h, d, first = 0.0;
  float top;
  int j;

  if (span > n_key)
    span = n_key;
  h = row_entropy (row, span);
  d = row_distance (row, span, p);
  top = row_max (row, span);
  for (j = 0; j < acc->k; j++)
    first += row[j];
  acc->ent += h;
  acc->dist += d;
  acc->conf += top;
  acc->sink += row[0];
  acc->sink_k += first;
  if (p >= 1)
    {
      acc->ent_norm += h / log ((double) p + 1.0);
      acc->n_norm++;
      acc->prev += row[p - 1];
      acc->n_prev++;
    }
  acc->self += row[p];
  if (++acc->i == acc->n_query)
    {
      acc->last.last_entropy = row_entropy (row, n_key);
      acc->last.last_top = 0;
      for (j = 1; j < n_key; j++)
        if (row[j] > row[acc->last.last_top])
          acc->last.last_top = j;
      acc->last.last_top_weight = row[acc->last.last_top];
    }
}

void
sc_head_stats_end (const ScHeadStatsAcc *acc, ScHeadStats *out)
{
  const int n_query = acc->n_query;

  memset (out, 0, sizeof *out);
  out->entropy = acc->ent / n_query;
  out->entropy_norm = acc->n_norm > 0 ? acc->ent_norm / acc->n_norm : NAN;
  out->distance = acc->dist / n_query;
  out->confidence = acc->conf / n_query;
  out->sink = acc->sink / n_query;
  out->sink_k = acc->sink_k / n_query;
  out->previous = acc->n_prev > 0 ? acc->prev / acc->n_prev : NAN;
  out->self = acc->self / n_query;
  out->last_entropy = acc->last.last_entropy;
  out->last_top = acc->last.last_top;
  out->last_top_weight = acc->last.last_top_weight;
}

ScStatus
sc_head_stats_compute (const float *probs, int n_query, int n_key, const ScHeadStatsOptions *opt,
                       ScHeadStats *out, ScError *err)
{
  ScHeadStatsAcc acc;

  if (probs == NULL || out == NULL || n_query < 1 || n_key < 1 || n_query > n_key)
    return sc_error_set (err, SC_ERR_INVALID_ARG,
                         "head statistics of a (%d, %d) matrix: need 1 <= n_query <= n_key",
                         n_query, n_key);
  sc_head_stats_begin (&acc, n_query, n_key, opt);
  for (int i = 0; i < n_query; i++)
    sc_head_stats_add_row (&acc, probs + (size_t) i * n_key, n_key);
  sc_head_stats_end (&acc, out);
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
