/* sc-cluster.c — average-linkage (UPGMA) clustering of a distance matrix (sc-cluster.h).
 *
 * Hand-written rather than taken from a library: Debian 12's C libraries that a plain C
 * engine could link have no average-linkage clustering of a given matrix (GSL has none;
 * igraph clusters graphs by modularity, not a distance matrix hierarchically), and the
 * textbook algorithm is forty lines. It is O(n^3) time and O(n^2) memory: at 270 heads
 * (SmolLM2) about 7 million comparisons, a few milliseconds; the O(n^2) nearest-neighbour
 * chain would matter only past some thousands of items.
 *
 * Passes:
 *   1. check the matrix and copy it into a working (n, n) matrix D; cluster s lives in
 *      slot s, and a merged cluster takes the slot of its part with the smaller first leaf,
 *      so a slot's index is always its cluster's first (smallest) leaf;
 *   2. n - 1 times: find the active pair (s, t), s < t, with the smallest D (ties: the
 *      smallest s, then the smallest t — the first found in row-major order), record the
 *      merge, and update row s by Lance–Williams for average linkage:
 *        D (s ∪ t, u) = (|s| D (s, u) + |t| D (t, u)) / (|s| + |t|);
 *   3. the leaf order: walk the dendrogram from the root, left child first, where the
 *      left child is the one with the smaller first leaf.
 */
#include "analysis/sc-cluster.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Two entries d (i, j) and d (j, i) are symmetric when they agree to this relative
 * tolerance: a matrix written from one value per pair agrees exactly, one read back from
 * a CSV printed with 9 significant digits agrees to about 1e-9. */
#define SYM_TOL 1e-9

ScStatus
sc_cluster_average (const double *d, int n, ScClusterMerge *merges, int *order, ScError *err)
{
  double *w = NULL;
  int *size = NULL, *id = NULL, *first = NULL, *stack = NULL;
  bool *active = NULL;
  ScStatus st = SC_OK;
  int i, j, k;

  if (d == NULL || order == NULL || n < 1 || (n > 1 && merges == NULL))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "clustering %d items: need n >= 1 and the "
                         "distance, merge and order arrays", n);
  /* Pass 1. */
  for (i = 0; i < n; i++)
    for (j = i + 1; j < n; j++)
      {
        const double a = d[(size_t) i * n + j], b = d[(size_t) j * n + i];

        if (!isfinite (a) || !isfinite (b) || a < 0.0 || b < 0.0)
          return sc_error_set (err, SC_ERR_INVALID_ARG, "clustering: distance (%d, %d) is %g, "
                               "not a finite non-negative number", i, j, !isfinite (a) || a < 0 ? a : b);
        if (fabs (a - b) > SYM_TOL * fmax (fabs (a), fabs (b)))
          return sc_error_set (err, SC_ERR_INVALID_ARG, "clustering: the matrix is not symmetric "
                               "(d (%d, %d) = %.17g, d (%d, %d) = %.17g)", i, j, a, j, i, b);
      }
  if (n == 1)
    {
      order[0] = 0;
      return SC_OK;
    }
  w = malloc ((size_t) n * n * sizeof *w);
  size = malloc ((size_t) n * sizeof *size);
  id = malloc ((size_t) n * sizeof *id);
  first = malloc ((size_t) (2 * n - 1) * sizeof *first);
  stack = malloc ((size_t) (2 * n - 1) * sizeof *stack);
  active = malloc ((size_t) n * sizeof *active);
  if (w == NULL || size == NULL || id == NULL || first == NULL || stack == NULL || active == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "clustering %d items: out of memory", n);
      goto out;
    }
  memcpy (w, d, (size_t) n * n * sizeof *w);
  for (i = 0; i < n; i++)
    {
      size[i] = 1;
      id[i] = i;
      first[i] = i;
      active[i] = true;
    }

  /* Pass 2. */
  for (k = 0; k < n - 1; k++)
    {
      int s = -1, t = -1;
      double best = INFINITY;

      for (i = 0; i < n; i++)
        if (active[i])
          for (j = i + 1; j < n; j++)
            if (active[j] && w[(size_t) i * n + j] < best)
              {
                best = w[(size_t) i * n + j];
                s = i;
                t = j;
              }
      if (s < 0)
        {
          /* Every remaining distance is +inf: impossible after pass 1's checks. */
          s = 0;
          t = 1;
        }
      merges[k].a = id[s] < id[t] ? id[s] : id[t];
      merges[k].b = id[s] < id[t] ? id[t] : id[s];
      merges[k].height = best;
      merges[k].size = size[s] + size[t];
      for (int u = 0; u < n; u++)
        if (active[u] && u != s && u != t)
          {
            const double v = (size[s] * w[(size_t) s * n + u] + size[t] * w[(size_t) t * n + u])
                             / (size[s] + size[t]);
            w[(size_t) s * n + u] = v;
            w[(size_t) u * n + s] = v;
          }
      size[s] += size[t];
      active[t] = false;
      id[s] = n + k;
      first[n + k] = s; /* slot s holds the smaller first leaf (s < t) */
    }

  /* Pass 3: depth first from the root (cluster 2n - 2), pushing the right child first. */
  {
    int top = 0, at = 0;

    stack[top++] = 2 * n - 2;
    while (top > 0)
      {
        const int c = stack[--top];

        if (c < n)
          {
            order[at++] = c;
            continue;
          }
        {
          const ScClusterMerge *m = &merges[c - n];
          const bool a_left = first[m->a] < first[m->b];

          stack[top++] = a_left ? m->b : m->a;
          stack[top++] = a_left ? m->a : m->b;
        }
      }
  }

out:
  free (w);
  free (size);
  free (id);
  free (first);
  free (stack);
  free (active);
  return st;
}
