/* sc-rank.c — Kendall τ-b, Spearman ρ, their p-values and top-k overlap (definitions and
 * contract in sc-rank.h).
 *
 * Kendall's pairs are counted directly, O(n²), rather than with Knight's O(n log n) merge
 * sort: n here is a sentence's tokens or a model's heads (hundreds, a few thousand at most),
 * where the direct count takes milliseconds, and the direct count is the definition itself —
 * no bookkeeping of joint ties inside a merge to get wrong. The tie groups (for n_1, n_2 and
 * the variance) come from one sort of each vector.
 *
 * The t and normal tails come from GSL (gsl_cdf_tdist_Q, gsl_cdf_ugaussian_Q): the t CDF is
 * an incomplete beta function whose accurate evaluation in both tails is not code to write
 * by hand. The exact Kendall distribution is ours: GSL has none, and it is a three-line
 * recurrence (below).
 */
#include "analysis/sc-rank.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

typedef struct {
  double v;
  int i;
} Item;

/* Ascending by value, then by index: a total, deterministic order (qsort is not stable). */
static int
item_cmp_asc (const void *pa, const void *pb)
{
  const Item *a = pa, *b = pb;
  if (a->v != b->v)
    return a->v < b->v ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}

/* Descending by value, then ascending by index: the top-k order. */
static int
item_cmp_desc (const void *pa, const void *pb)
{
  const Item *a = pa, *b = pb;
  if (a->v != b->v)
    return a->v > b->v ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}

static ScStatus
check_vec (const double *x, int n, const char *what, ScError *err)
{
  if (x == NULL || n < 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: NULL vector or n %d < 0", what, n);
  for (int i = 0; i < n; i++)
    if (isnan (x[i]))
      return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: NaN at index %d", what, i);
  return SC_OK;
}

static Item *
sorted_items (const double *x, int n, int (*cmp) (const void *, const void *))
{
  Item *it = malloc ((size_t) (n > 0 ? n : 1) * sizeof *it);
  if (it == NULL)
    return NULL;
  for (int i = 0; i < n; i++)
    it[i] = (Item) { x[i], i };
  qsort (it, (size_t) n, sizeof *it, cmp);
  return it;
}

ScStatus
sc_rank_midranks (const double *x, int n, double *ranks, ScError *err)
{
  ScStatus st = check_vec (x, n, "mid-ranks", err);
  if (st != SC_OK)
    return st;
  if (ranks == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "mid-ranks: NULL output");
  Item *it = sorted_items (x, n, item_cmp_asc);
  if (it == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "mid-ranks: no memory for %d items", n);
  /* A run it[a .. b) of equal values holds ranks a + 1 .. b: their mean is (a + 1 + b) / 2. */
  for (int a = 0; a < n;)
    {
      int b = a + 1;
      while (b < n && it[b].v == it[a].v)
        b++;
      for (int k = a; k < b; k++)
        ranks[it[k].i] = 0.5 * (double) (a + 1 + b);
      a = b;
    }
  free (it);
  return SC_OK;
}

/* The tie sums of one vector over its groups of t equal values:
 *   pairs = Σ t (t − 1) / 2,  a = Σ t (t − 1),  b = Σ t (t − 1)(t − 2),  c = Σ t (t − 1)(2t + 5). */
typedef struct {
  int64_t pairs;
  double a, b, c;
} TieSums;

static ScStatus
tie_sums (const double *x, int n, TieSums *out, ScError *err)
{
  Item *it = sorted_items (x, n, item_cmp_asc);
  if (it == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "Kendall: no memory for %d items", n);
  *out = (TieSums) { 0 };
  for (int a = 0; a < n;)
    {
      int b = a + 1;
      while (b < n && it[b].v == it[a].v)
        b++;
      const double t = b - a;
      out->pairs += (int64_t) (b - a) * (b - a - 1) / 2;
      out->a += t * (t - 1);
      out->b += t * (t - 1) * (t - 2);
      out->c += t * (t - 1) * (2 * t + 5);
      a = b;
    }
  free (it);
  return SC_OK;
}

ScStatus
sc_kendall_exact_p (int n, int64_t n_discordant, double *p, ScError *err)
{
  if (p == NULL || n < 1 || n > SC_KENDALL_EXACT_MAX_N)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "Kendall exact: n %d outside [1, %d]", n,
                         SC_KENDALL_EXACT_MAX_N);
  const int64_t n0 = (int64_t) n * (n - 1) / 2;
  if (n_discordant < 0 || n_discordant > n0)
    return sc_error_set (err, SC_ERR_INVALID_ARG,
                         "Kendall exact: %lld discordant pairs outside [0, %lld]",
                         (long long) n_discordant, (long long) n0);
  /* The distribution is symmetric (reversing a permutation maps I to n_0 − I): sum the
   * lower tail up to c and double it. */
  const int c = (int) (n_discordant < n0 - n_discordant ? n_discordant : n0 - n_discordant);
  double *table = calloc (2 * ((size_t) c + 1), sizeof *table);
  if (table == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "Kendall exact: no memory");
  double *cur = table, *next = table + c + 1;
  /* P_j (k) = P (I = k) for a random permutation of j. Inserting element j into a
   * permutation of j − 1 adds 0 .. j − 1 inversions, each with probability 1/j:
   *   P_1 (0) = 1,   P_j (k) = (1/j) Σ_{i = 0}^{min (k, j − 1)} P_{j−1} (k − i).
   * (The Mahonian numbers, OEIS A008302, divided by j!.) Only k ≤ c is needed. Summing the
   * window directly (O(n c · n), at most 1.5e6 additions) keeps every term positive: no
   * cancellation of a running difference of prefix sums. */
  cur[0] = 1.0;
  for (int j = 2; j <= n; j++)
    {
      for (int k = 0; k <= c; k++)
        {
          double s = 0.0;
          for (int i = 0; i <= k && i < j; i++)
            s += cur[k - i];
          next[k] = s / j;
        }
      double *t = cur;
      cur = next;
      next = t;
    }
  double tail = 0.0;
  for (int k = 0; k <= c; k++)
    tail += cur[k];
  free (table);
  *p = fmin (1.0, 2.0 * tail);
  return SC_OK;
}

/* The pair counts of (@x, @y): concordant, discordant, tied in x, tied in y. The sign of
 * (x_i − x_j)(y_i − y_j) comes from comparisons (∞ − ∞ would be NaN). */
static void
kendall_pairs (const double *x, const double *y, int n, int64_t *nc_out, int64_t *nd_out,
               int64_t *tx_out, int64_t *ty_out)
{
  int64_t nc = 0, nd = 0, tx = 0, ty = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      {
        const int dx = (x[i] > x[j]) - (x[i] < x[j]);
        const int dy = (y[i] > y[j]) - (y[i] < y[j]);
        tx += dx == 0;
        ty += dy == 0;
        if (dx * dy > 0)
          nc++;
        else if (dx * dy < 0)
          nd++;
      }
  *nc_out = nc;
  *nd_out = nd;
  *tx_out = tx;
  *ty_out = ty;
}

ScStatus
sc_kendall_tau_b_value (const double *x, const double *y, int n, double *tau, ScError *err)
{
  ScStatus st;
  int64_t nc, nd, tx, ty;
  if (tau == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "Kendall: NULL output");
  *tau = NAN;
  if ((st = check_vec (x, n, "Kendall x", err)) != SC_OK
      || (st = check_vec (y, n, "Kendall y", err)) != SC_OK)
    return st;
  if (n < 2)
    return sc_error_set (err, SC_ERR_RANGE, "Kendall: n = %d, at least 2 pairs are needed", n);
  kendall_pairs (x, y, n, &nc, &nd, &tx, &ty);
  const int64_t n0 = (int64_t) n * (n - 1) / 2;
  if (tx == n0 || ty == n0)
    return sc_error_set (err, SC_ERR_RANGE, "Kendall: %s is constant, τ-b is 0/0",
                         tx == n0 ? "x" : "y");
  *tau = fmax (-1.0, fmin (1.0, (double) (nc - nd)
                                  / sqrt ((double) (n0 - tx) * (double) (n0 - ty))));
  return SC_OK;
}

static void
kendall_nan (ScKendall *out)
{
  *out = (ScKendall) { .tau = NAN, .p = NAN, .z = NAN, .method = SC_PVALUE_NONE };
}

ScStatus
sc_kendall_tau_b (const double *x, const double *y, int n, ScKendall *out, ScError *err)
{
  ScStatus st;
  if (out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "Kendall: NULL output");
  if ((st = check_vec (x, n, "Kendall x", err)) != SC_OK
      || (st = check_vec (y, n, "Kendall y", err)) != SC_OK)
    return st;
  kendall_nan (out);
  if (n < 2)
    return sc_error_set (err, SC_ERR_RANGE, "Kendall: n = %d, at least 2 pairs are needed", n);

  /* 1. Pairs. */
  int64_t nc, nd, tx, ty;
  kendall_pairs (x, y, n, &nc, &nd, &tx, &ty);
  const int64_t n0 = (int64_t) n * (n - 1) / 2;
  if (tx == n0 || ty == n0)
    return sc_error_set (err, SC_ERR_RANGE, "Kendall: %s is constant, τ-b is 0/0",
                         tx == n0 ? "x" : "y");

  /* 2. Tie groups, for the variance. */
  TieSums sx, sy;
  if ((st = tie_sums (x, n, &sx, err)) != SC_OK || (st = tie_sums (y, n, &sy, err)) != SC_OK)
    return st;

  /* 3. τ-b, and z with Kendall's tie-corrected variance of S (Kendall 1970; scipy's formula):
   *   Var S = (n (n−1)(2n+5) − Σ t(t−1)(2t+5) − Σ u(u−1)(2u+5)) / 18
   *         + Σ t(t−1) · Σ u(u−1) / (2 n (n−1))
   *         + Σ t(t−1)(t−2) · Σ u(u−1)(u−2) / (9 n (n−1)(n−2)). */
  const double dn = n, s = (double) (nc - nd);
  double var = (dn * (dn - 1) * (2 * dn + 5) - sx.c - sy.c) / 18.0
               + sx.a * sy.a / (2 * dn * (dn - 1));
  if (n > 2)
    var += sx.b * sy.b / (9 * dn * (dn - 1) * (dn - 2));
  out->s = nc - nd;
  out->n_concordant = nc;
  out->n_discordant = nd;
  out->ties_x = tx;
  out->ties_y = ty;
  out->tau = fmax (-1.0, fmin (1.0, s / sqrt ((double) (n0 - tx) * (double) (n0 - ty))));
  out->z = s / sqrt (var);

  /* 4. The p-value: exact without ties for small n, else normal. */
  if (tx == 0 && ty == 0 && n <= SC_KENDALL_EXACT_MAX_N)
    {
      if ((st = sc_kendall_exact_p (n, nd, &out->p, err)) != SC_OK)
        return st;
      out->method = SC_PVALUE_EXACT;
    }
  else
    {
      out->p = fmin (1.0, 2.0 * gsl_cdf_ugaussian_Q (fabs (out->z)));
      out->method = SC_PVALUE_NORMAL;
    }
  return SC_OK;
}

ScStatus
sc_spearman_rho (const double *x, const double *y, int n, ScSpearman *out, ScError *err)
{
  ScStatus st;
  if (out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "Spearman: NULL output");
  if ((st = check_vec (x, n, "Spearman x", err)) != SC_OK
      || (st = check_vec (y, n, "Spearman y", err)) != SC_OK)
    return st;
  *out = (ScSpearman) { .rho = NAN, .p = NAN, .t = NAN, .df = n - 2,
                        .method = SC_PVALUE_NONE };
  if (n < 2)
    return sc_error_set (err, SC_ERR_RANGE, "Spearman: n = %d, at least 2 pairs are needed", n);

  double *rx = malloc (2 * (size_t) n * sizeof *rx);
  if (rx == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "Spearman: no memory for %d ranks", 2 * n);
  double *ry = rx + n;
  if ((st = sc_rank_midranks (x, n, rx, err)) != SC_OK
      || (st = sc_rank_midranks (y, n, ry, err)) != SC_OK)
    {
      free (rx);
      return st;
    }
  /* Pearson on the ranks. Mid-ranks always average (n + 1) / 2, exactly. */
  const double mean = 0.5 * (n + 1);
  double sxy = 0, sxx = 0, syy = 0;
  for (int i = 0; i < n; i++)
    {
      const double a = rx[i] - mean, b = ry[i] - mean;
      sxy += a * b;
      sxx += a * a;
      syy += b * b;
    }
  free (rx);
  if (sxx == 0 || syy == 0)
    return sc_error_set (err, SC_ERR_RANGE, "Spearman: %s is constant, ρ is 0/0",
                         sxx == 0 ? "x" : "y");
  const double rho = fmax (-1.0, fmin (1.0, sxy / sqrt (sxx * syy)));
  out->rho = rho;
  if (n < 3)
    return SC_OK;  /* ρ = ±1 with no degrees of freedom: no p-value (header) */
  out->df = n - 2;
  out->method = SC_PVALUE_STUDENT_T;
  if (fabs (rho) == 1.0)
    {
      out->t = copysign (INFINITY, rho);
      out->p = 0.0;
      return SC_OK;
    }
  out->t = rho * sqrt ((n - 2) / ((1 - rho) * (1 + rho)));
  out->p = fmin (1.0, 2.0 * gsl_cdf_tdist_Q (fabs (out->t), n - 2));
  return SC_OK;
}

ScStatus
sc_topk_overlap (const double *a, const double *b, int n, int k, double *out, ScError *err)
{
  ScStatus st;
  if (out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "top-k: NULL output");
  if ((st = check_vec (a, n, "top-k a", err)) != SC_OK
      || (st = check_vec (b, n, "top-k b", err)) != SC_OK)
    return st;
  if (k < 1 || k > n)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "top-k: k %d outside [1, %d]", k, n);
  Item *ia = sorted_items (a, n, item_cmp_desc);
  Item *ib = sorted_items (b, n, item_cmp_desc);
  bool *in_a = calloc ((size_t) n, sizeof *in_a);
  if (ia == NULL || ib == NULL || in_a == NULL)
    {
      free (ia);
      free (ib);
      free (in_a);
      return sc_error_set (err, SC_ERR_NOMEM, "top-k: no memory for %d items", n);
    }
  for (int r = 0; r < k; r++)
    in_a[ia[r].i] = true;
  int common = 0;
  for (int r = 0; r < k; r++)
    common += in_a[ib[r].i];
  free (ia);
  free (ib);
  free (in_a);
  *out = (double) common / k;
  return SC_OK;
}
