/* sc-stats.c — Holm and Benjamini–Hochberg corrections, percentile bootstrap intervals and
 * a permutation null (definitions and contract in sc-stats.h). Nothing here decides which
 * vectors are compared: engine/study/ does.
 *
 * The random numbers are GSL's mt19937 (gsl_rng_uniform_int for the bootstrap's indices,
 * gsl_ran_shuffle for permutations): a documented generator with a fixed sequence per seed,
 * so that a study read back from the store gets the same intervals as when it was computed.
 */
#include "analysis/sc-stats.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "analysis/sc-rank.h"

/* ------------------------------------------------------------------------------------ */
/* Corrections                                                                           */

typedef struct {
  double p;
  int i;
} PItem;

static int
pitem_cmp (const void *pa, const void *pb)
{
  const PItem *a = pa, *b = pb;
  if (a->p != b->p)
    return a->p < b->p ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}

/* The non-NaN entries of @p sorted ascending into *@out (caller frees), their count into
 * *@m. */
static ScStatus
sorted_p (const double *p, int n, const char *what, PItem **out, int *m, ScError *err)
{
  PItem *it;
  int k = 0;

  if (p == NULL || n < 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: NULL p-values or n %d < 0", what, n);
  for (int i = 0; i < n; i++)
    if (!isnan (p[i]) && !(p[i] >= 0 && p[i] <= 1))
      return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: p-value %g at index %d is outside "
                           "[0, 1]", what, p[i], i);
  if ((it = malloc ((size_t) (n > 0 ? n : 1) * sizeof *it)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "%s: no memory for %d p-values", what, n);
  for (int i = 0; i < n; i++)
    if (!isnan (p[i]))
      it[k++] = (PItem) { p[i], i };
  qsort (it, (size_t) k, sizeof *it, pitem_cmp);
  *out = it;
  *m = k;
  return SC_OK;
}

ScStatus
sc_stats_holm (const double *p, int n, double *adj, int *m_out, ScError *err)
{
  PItem *it;
  int m;
  ScStatus st;

  if (adj == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "Holm: NULL output");
  if ((st = sorted_p (p, n, "Holm", &it, &m, err)) != SC_OK)
    return st;
  for (int i = 0; i < n; i++)
    if (isnan (p[i]))
      adj[i] = NAN;
  /* adj_(j) = min (1, max_{k <= j} (m − k) p_(k)) with 0-based k: a running maximum. */
  double run = 0.0;
  for (int j = 0; j < m; j++)
    {
      run = fmax (run, fmin (1.0, (double) (m - j) * it[j].p));
      adj[it[j].i] = run;
    }
  free (it);
  if (m_out != NULL)
    *m_out = m;
  return SC_OK;
}

ScStatus
sc_stats_bh (const double *p, int n, double *q, int *m_out, ScError *err)
{
  PItem *it;
  int m;
  ScStatus st;

  if (q == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "Benjamini-Hochberg: NULL output");
  if ((st = sorted_p (p, n, "Benjamini-Hochberg", &it, &m, err)) != SC_OK)
    return st;
  for (int i = 0; i < n; i++)
    if (isnan (p[i]))
      q[i] = NAN;
  /* q_(j) = min (1, min_{k >= j} m p_(k) / (k + 1)) with 0-based k: a running minimum from
   * the largest p down. */
  double run = 1.0;
  for (int j = m - 1; j >= 0; j--)
    {
      run = fmin (run, (double) m * it[j].p / (j + 1));
      q[it[j].i] = run;
    }
  free (it);
  if (m_out != NULL)
    *m_out = m;
  return SC_OK;
}

/* ------------------------------------------------------------------------------------ */
/* Resampling                                                                            */

ScStatus
sc_stats_corr (ScStatsCorr kind, const double *x, const double *y, int n, double *r,
               ScError *err)
{
  ScSpearman sp;
  ScStatus st;

  if (r == NULL || (kind != SC_STATS_KENDALL && kind != SC_STATS_SPEARMAN))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "correlation: bad arguments");
  if (kind == SC_STATS_KENDALL)
    return sc_kendall_tau_b_value (x, y, n, r, err);
  st = sc_spearman_rho (x, y, n, &sp, err);
  *r = st == SC_OK ? sp.rho : NAN;
  return st;
}

/* The central [Q(α/2), Q(1 − α/2)] of the first @m values of @v (sorted here). */
static void
band (double *v, int m, double level, double *lo, double *hi)
{
  const double a = 0.5 * (1.0 - level);

  gsl_sort (v, 1, (size_t) m);
  *lo = gsl_stats_quantile_from_sorted_data (v, 1, (size_t) m, a);
  *hi = gsl_stats_quantile_from_sorted_data (v, 1, (size_t) m, 1.0 - a);
}

static ScStatus
check_resampling (int n_boot, double level, const char *what, ScError *err)
{
  if (n_boot < 1 || n_boot > SC_STATS_MAX_BOOT)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: %d resamples, not in [1, %d]", what,
                         n_boot, SC_STATS_MAX_BOOT);
  if (!(level > 0 && level < 1))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: level %g is not in (0, 1)", what,
                         level);
  return SC_OK;
}

static bool
has_nan (const double *v, int n)
{
  for (int i = 0; i < n; i++)
    if (isnan (v[i]))
      return true;
  return false;
}

/* Fewer defined resamples than this share of B: no interval (a statistic defined on a
 * minority of resamples describes those, not the data). */
#define MIN_VALID_SHARE 0.5

ScStatus
sc_stats_bootstrap_corr (ScStatsCorr kind, const double *x, const double *y, int n,
                         int n_boot, double level, uint32_t seed, ScStatsInterval *out,
                         ScError *err)
{
  gsl_rng *rng = NULL;
  double *bx = NULL, *by = NULL, *stat = NULL;
  ScStatus st;
  int m = 0;

  if (out == NULL || x == NULL || y == NULL || n < 0
      || (kind != SC_STATS_KENDALL && kind != SC_STATS_SPEARMAN))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "bootstrap: bad arguments");
  *out = (ScStatsInterval) { NAN, NAN, level, n_boot, 0, seed };
  if ((st = check_resampling (n_boot, level, "bootstrap", err)) != SC_OK)
    return st;
  if (has_nan (x, n) || has_nan (y, n))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "bootstrap: a NaN among the pairs");
  if (n < 2)
    return sc_error_set (err, SC_ERR_RANGE, "bootstrap: %d pairs, at least 2 are needed", n);
  rng = gsl_rng_alloc (gsl_rng_mt19937);
  bx = malloc (2 * (size_t) n * sizeof *bx);
  stat = malloc ((size_t) n_boot * sizeof *stat);
  if (rng == NULL || bx == NULL || stat == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "bootstrap: no memory for %d pairs", n);
      goto done;
    }
  by = bx + n;
  gsl_rng_set (rng, seed);
  /* 1. B resamples of the indices; 2. the statistic of each (undefined: skipped);
   * 3. the percentile interval of the defined. */
  for (int b = 0; b < n_boot; b++)
    {
      double r;
      for (int i = 0; i < n; i++)
        {
          const unsigned long k = gsl_rng_uniform_int (rng, (unsigned long) n);
          bx[i] = x[k];
          by[i] = y[k];
        }
      st = sc_stats_corr (kind, bx, by, n, &r, NULL);
      if (st == SC_ERR_NOMEM)
        {
          st = sc_error_set (err, SC_ERR_NOMEM, "bootstrap: no memory");
          goto done;
        }
      if (st == SC_OK)
        stat[m++] = r;
    }
  out->n_valid = m;
  if (m < MIN_VALID_SHARE * n_boot || m < 1)
    {
      st = sc_error_set (err, SC_ERR_RANGE, "bootstrap: the statistic is defined in %d of %d "
                         "resamples", m, n_boot);
      goto done;
    }
  band (stat, m, level, &out->lo, &out->hi);
  st = SC_OK;
done:
  gsl_rng_free (rng);
  free (bx);
  free (stat);
  return st;
}

ScStatus
sc_stats_bootstrap_mean (const double *v, int n, int n_boot, double level, uint32_t seed,
                         ScStatsInterval *out, ScError *err)
{
  ScStatus st;

  if (out == NULL || v == NULL || n < 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "bootstrap: bad arguments");
  *out = (ScStatsInterval) { NAN, NAN, level, n_boot, 0, seed };
  st = sc_stats_bootstrap_columns (v, n, 1, n_boot, level, seed, SC_STATS_TOP_LARGEST,
                                   &out->lo, &out->hi, NULL, err);
  if (st == SC_OK)
    out->n_valid = n_boot;
  return st;
}

ScStatus
sc_stats_bootstrap_columns (const double *v, int n, int m, int n_boot, double level,
                            uint32_t seed, ScStatsTop top, double *lo, double *hi,
                            double *top_share, ScError *err)
{
  gsl_rng *rng = NULL;
  double *stat = NULL, *sum = NULL;
  ScStatus st;

  if (v == NULL || lo == NULL || hi == NULL || n < 0 || m < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "bootstrap: bad arguments");
  for (int j = 0; j < m; j++)
    {
      lo[j] = hi[j] = NAN;
      if (top_share != NULL)
        top_share[j] = NAN;
    }
  if ((st = check_resampling (n_boot, level, "bootstrap", err)) != SC_OK)
    return st;
  if ((size_t) n * (size_t) m > (size_t) INT32_MAX)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "bootstrap: %d × %d values are too many", n,
                         m);
  if (has_nan (v, n * m))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "bootstrap: a NaN among the values");
  if (n < 2)
    return sc_error_set (err, SC_ERR_RANGE, "bootstrap: %d values, at least 2 are needed", n);
  rng = gsl_rng_alloc (gsl_rng_mt19937);
  stat = malloc ((size_t) n_boot * (size_t) m * sizeof *stat);
  sum = calloc ((size_t) m, sizeof *sum);
  if (rng == NULL || stat == NULL || sum == NULL)
    {
      gsl_rng_free (rng);
      free (stat);
      free (sum);
      return sc_error_set (err, SC_ERR_NOMEM, "bootstrap: no memory for %d resamples of %d "
                           "columns", n_boot, m);
    }
  gsl_rng_set (rng, seed);
  if (top_share != NULL)
    memset (top_share, 0, (size_t) m * sizeof *top_share);
  for (int b = 0; b < n_boot; b++)
    {
      int best = 0;
      memset (sum, 0, (size_t) m * sizeof *sum);
      for (int i = 0; i < n; i++)
        {
          const double *row = v + (size_t) gsl_rng_uniform_int (rng, (unsigned long) n) * m;
          for (int j = 0; j < m; j++)
            sum[j] += row[j];
        }
      /* column-major, so that each column's B means are one run for band() */
      for (int j = 0; j < m; j++)
        {
          stat[(size_t) j * n_boot + b] = sum[j] / n;
          if (top == SC_STATS_TOP_LARGEST_ABS ? fabs (sum[j]) > fabs (sum[best])
                                              : sum[j] > sum[best])
            best = j;
        }
      if (top_share != NULL)
        top_share[best] += 1.0;
    }
  for (int j = 0; j < m; j++)
    {
      band (stat + (size_t) j * n_boot, n_boot, level, &lo[j], &hi[j]);
      if (top_share != NULL)
        top_share[j] /= n_boot;
    }
  gsl_rng_free (rng);
  free (stat);
  free (sum);
  return SC_OK;
}

ScStatus
sc_stats_sign_test (const double *v, int n, double *p, ScError *err)
{
  unsigned int pos = 0, neg = 0;

  if (v == NULL || p == NULL || n < 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "sign test: bad arguments");
  *p = NAN;
  if (has_nan (v, n))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "sign test: a NaN among the values");
  for (int i = 0; i < n; i++)
    {
      pos += v[i] > 0;
      neg += v[i] < 0;
    }
  if (pos + neg == 0)
    {
      *p = 1.0;
      return SC_OK;
    }
  *p = fmin (1.0, 2.0 * gsl_cdf_binomial_P (pos < neg ? pos : neg, 0.5, pos + neg));
  return SC_OK;
}

ScStatus
sc_stats_permutation_null (ScStatsCorr kind, const double *x, const double *y, int n,
                           int n_perm, double level, uint32_t seed, ScStatsPermNull *out,
                           ScError *err)
{
  gsl_rng *rng = NULL;
  double *py = NULL, *stat = NULL, r0;
  ScStatus st;
  int m = 0, extreme = 0;

  if (out == NULL || x == NULL || y == NULL || n < 0
      || (kind != SC_STATS_KENDALL && kind != SC_STATS_SPEARMAN))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "permutation null: bad arguments");
  *out = (ScStatsPermNull) { NAN, NAN, NAN, NAN, n_perm, 0, seed };
  if ((st = check_resampling (n_perm, level, "permutation null", err)) != SC_OK)
    return st;
  if ((st = sc_stats_corr (kind, x, y, n, &r0, err)) != SC_OK)
    return st;
  out->observed = r0;
  rng = gsl_rng_alloc (gsl_rng_mt19937);
  py = malloc ((size_t) n * sizeof *py);
  stat = malloc ((size_t) n_perm * sizeof *stat);
  if (rng == NULL || py == NULL || stat == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "permutation null: no memory for %d items", n);
      goto done;
    }
  gsl_rng_set (rng, seed);
  memcpy (py, y, (size_t) n * sizeof *py);
  /* Each permutation shuffles the previous one: the composition of uniform shuffles is a
   * uniform shuffle, and it saves a copy. A value within 1e-12 of |r| counts as "as large":
   * the same τ reached through different pairs must not differ by rounding. */
  for (int b = 0; b < n_perm; b++)
    {
      double r;
      gsl_ran_shuffle (rng, py, (size_t) n, sizeof *py);
      st = sc_stats_corr (kind, x, py, n, &r, NULL);
      if (st == SC_ERR_NOMEM)
        {
          st = sc_error_set (err, SC_ERR_NOMEM, "permutation null: no memory");
          goto done;
        }
      if (st != SC_OK)
        continue;
      stat[m++] = r;
      extreme += fabs (r) >= fabs (r0) - 1e-12;
    }
  out->n_valid = m;
  if (m < 1)
    {
      st = sc_error_set (err, SC_ERR_RANGE, "permutation null: no permutation is defined");
      goto done;
    }
  out->p = (1.0 + extreme) / (1.0 + m);
  band (stat, m, level, &out->lo, &out->hi);
  st = SC_OK;
done:
  gsl_rng_free (rng);
  free (py);
  free (stat);
  return st;
}
