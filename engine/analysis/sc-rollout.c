/* sc-rollout.c — attention rollout and attention flow (sc-rollout.h has the definitions).
 *
 * Rollout, in double:
 *   1. Â_l = ½ mean_h A_l,h + ½ I for every layer (each head's rows first renormalised
 *      without key 0 when the options exclude the first token), with each row's support
 *      (the range of its non-zero columns: 0..i for a causal row i);
 *   2. R = Â_1, then R ← Â_l R for l = 2..L, row by row as a sum of scaled rows of R
 *      (R'[i] += Â_l[i][k] R[k] over the non-zero Â_l[i][k], each over R[k]'s support).
 *      For causal heads that touches about L n^3 / 6 entries instead of L n^3, and the
 *      inner loop is an AXPY the compiler vectorises.
 * Flow: the layered graph of sc-rollout.h built once per target over the nodes that can
 *   reach the target (for a causal model the positions <= target), then one maximum flow
 *   per input token by igraph's push-relabel (igraph_maxflow_value).
 *
 * igraph 0.10 as Debian builds it is not thread-safe (IGRAPH_THREAD_SAFE is 0: its error
 * handler and its stack of temporary allocations are process globals), and its default
 * error handler aborts. Every igraph call here therefore runs under one process-wide mutex,
 * with the "ignore" handler (free the temporaries, return the code) installed for the
 * duration and the caller's restored after: a failure is an ScError, never an abort.
 */
#include "analysis/sc-rollout.h"

#include <igraph.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------ */
/* Â                                                                                     */

/* Adds @scale times head @a's rows without key 0, each renormalised over the keys left
 * (a row with nothing left adds @scale on its diagonal), to @out (n, n). */
static void
add_without_first (const float *a, int n, double scale, double *out)
{
  for (int i = 0; i < n; i++)
    {
      const float *row = a + (size_t) i * n;
      double *dst = out + (size_t) i * n, left = 0.0;

      for (int j = 1; j < n; j++)
        left += row[j];
      if (left > 0.0)
        {
          const double f = scale / left;
          for (int j = 1; j < n; j++)
            dst[j] += f * row[j];
        }
      else
        dst[i] += scale;
    }
}

/* Â_l for @layer ((n_heads, n, n) floats) into @out (n, n) doubles, with each row's
 * non-zero columns in [lo[i], hi[i]); with @exclude_first each head without key 0 (header). */
static void
residual_mean (const float *layer, int n_heads, int n, bool exclude_first, double *out, int *lo,
               int *hi)
{
  const size_t nn = (size_t) n * n;
  const double scale = 0.5 / n_heads;

  memset (out, 0, nn * sizeof *out);
  for (int h = 0; h < n_heads; h++)
    {
      const float *a = layer + (size_t) h * nn;
      if (exclude_first)
        add_without_first (a, n, scale, out);
      else
        for (size_t k = 0; k < nn; k++)
          out[k] += scale * a[k];
    }
  for (int i = 0; i < n; i++)
    {
      double *row = out + (size_t) i * n;
      int l = i, r = i + 1;

      row[i] += 0.5;
      for (int j = 0; j < n; j++)
        if (row[j] != 0.0)
          {
            if (j < l)
              l = j;
            if (j + 1 > r)
              r = j + 1;
          }
      lo[i] = l;
      hi[i] = r;
    }
}

static ScStatus
check_layers (const float *const *layers, int n_layers, int n_heads, int n, ScError *err)
{
  if (layers == NULL || n_layers < 1 || n_heads < 1 || n < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "rollout of %d layers x %d heads of %d tokens: "
                         "need at least one of each", n_layers, n_heads, n);
  for (int l = 0; l < n_layers; l++)
    if (layers[l] == NULL)
      return sc_error_set (err, SC_ERR_INVALID_ARG, "rollout: layer %d is NULL", l);
  return SC_OK;
}

ScStatus
sc_attention_rollout (const float *const *layers, int n_layers, int n_heads, int n, double *out,
                      ScError *err)
{
  return sc_attention_rollout_with (layers, n_layers, n_heads, n, NULL, out, err);
}

ScStatus
sc_attention_rollout_with (const float *const *layers, int n_layers, int n_heads, int n,
                           const ScRolloutOptions *opt, double *out, ScError *err)
{
  const bool excl = opt != NULL && opt->exclude_first;
  const size_t nn = (size_t) n * n;
  double *a = NULL, *tmp = NULL;
  int *alo = NULL, *ahi = NULL, *rlo = NULL, *rhi = NULL;
  ScStatus st;

  if ((st = check_layers (layers, n_layers, n_heads, n, err)) != SC_OK)
    return st;
  if (out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "rollout: no output matrix");
  a = malloc (nn * sizeof *a);
  tmp = malloc (nn * sizeof *tmp);
  alo = malloc ((size_t) n * sizeof *alo);
  ahi = malloc ((size_t) n * sizeof *ahi);
  rlo = malloc ((size_t) n * sizeof *rlo);
  rhi = malloc ((size_t) n * sizeof *rhi);
  if (a == NULL || tmp == NULL || alo == NULL || ahi == NULL || rlo == NULL || rhi == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "rollout of %d tokens: out of memory", n);
      goto out;
    }

  /* Pass 1 for the first layer: R = Â_1. */
  residual_mean (layers[0], n_heads, n, excl, out, rlo, rhi);

  /* Pass 2. */
  for (int l = 1; l < n_layers; l++)
    {
      residual_mean (layers[l], n_heads, n, excl, a, alo, ahi);
      memset (tmp, 0, nn * sizeof *tmp);
      for (int i = 0; i < n; i++)
        {
          double *dst = tmp + (size_t) i * n;
          int lo = n, hi = 0;

          for (int k = alo[i]; k < ahi[i]; k++)
            {
              const double w = a[(size_t) i * n + k];
              const double *src = out + (size_t) k * n;

              if (w == 0.0)
                continue;
              for (int j = rlo[k]; j < rhi[k]; j++)
                dst[j] += w * src[j];
              if (rlo[k] < lo)
                lo = rlo[k];
              if (rhi[k] > hi)
                hi = rhi[k];
            }
          alo[i] = lo; /* reused: the new row's support */
          ahi[i] = hi;
        }
      memcpy (out, tmp, nn * sizeof *out);
      memcpy (rlo, alo, (size_t) n * sizeof *rlo);
      memcpy (rhi, ahi, (size_t) n * sizeof *rhi);
    }

out:
  free (a);
  free (tmp);
  free (alo);
  free (ahi);
  free (rlo);
  free (rhi);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* Maximum flow through igraph                                                           */

static pthread_mutex_t igraph_lock = PTHREAD_MUTEX_INITIALIZER;

/* What a failed igraph call means, for a message. */
static ScStatus
igraph_failed (ScError *err, igraph_error_t rc, const char *what)
{
  return sc_error_set (err, rc == IGRAPH_ENOMEM ? SC_ERR_NOMEM : SC_ERR_INVALID_ARG,
                       "%s: igraph failed: %s", what, igraph_strerror (rc));
}

/* A graph and its capacities for repeated flows; igraph_lock held by the caller. */
typedef struct {
  igraph_t g;
  igraph_vector_t cap;
  bool have_g, have_cap;
} Graph;

static void
graph_destroy (Graph *gr)
{
  if (gr->have_g)
    igraph_destroy (&gr->g);
  if (gr->have_cap)
    igraph_vector_destroy (&gr->cap);
}

/* Builds @gr from @n_edges edges (@edges[2k] -> @edges[2k + 1]) with @capacity. */
static igraph_error_t
graph_build (Graph *gr, int n_nodes, const int *edges, const double *capacity, size_t n_edges)
{
  igraph_vector_int_t ev;
  igraph_error_t rc;

  if ((rc = igraph_vector_int_init (&ev, (igraph_integer_t) (2 * n_edges))) != IGRAPH_SUCCESS)
    return rc;
  for (size_t k = 0; k < 2 * n_edges; k++)
    VECTOR (ev)[k] = edges[k];
  rc = igraph_create (&gr->g, &ev, n_nodes, IGRAPH_DIRECTED);
  igraph_vector_int_destroy (&ev);
  if (rc != IGRAPH_SUCCESS)
    return rc;
  gr->have_g = true;
  if ((rc = igraph_vector_init (&gr->cap, (igraph_integer_t) n_edges)) != IGRAPH_SUCCESS)
    return rc;
  gr->have_cap = true;
  for (size_t k = 0; k < n_edges; k++)
    VECTOR (gr->cap)[k] = capacity[k];
  return IGRAPH_SUCCESS;
}

ScStatus
sc_max_flow (int n_nodes, const int *edges, const double *capacity, int n_edges, int source,
             int target, double *value, ScError *err)
{
  igraph_error_handler_t *old;
  Graph gr = { 0 };
  igraph_real_t v = 0;
  igraph_error_t rc;
  ScStatus st = SC_OK;

  if (n_nodes < 1 || n_edges < 0 || (n_edges > 0 && (edges == NULL || capacity == NULL))
      || value == NULL || source < 0 || source >= n_nodes || target < 0 || target >= n_nodes
      || source == target)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "maximum flow from %d to %d in a graph of %d "
                         "nodes: need distinct nodes of the graph", source, target, n_nodes);
  for (int k = 0; k < n_edges; k++)
    if (edges[2 * k] < 0 || edges[2 * k] >= n_nodes || edges[2 * k + 1] < 0
        || edges[2 * k + 1] >= n_nodes || !(capacity[k] >= 0.0) || !isfinite (capacity[k]))
      return sc_error_set (err, SC_ERR_INVALID_ARG, "maximum flow: edge %d (%d -> %d, capacity "
                           "%g) is not an edge of the graph", k, edges[2 * k], edges[2 * k + 1],
                           capacity[k]);
  pthread_mutex_lock (&igraph_lock);
  old = igraph_set_error_handler (igraph_error_handler_ignore);
  rc = graph_build (&gr, n_nodes, edges, capacity, (size_t) n_edges);
  if (rc == IGRAPH_SUCCESS)
    rc = igraph_maxflow_value (&gr.g, &v, source, target, &gr.cap, NULL);
  if (rc != IGRAPH_SUCCESS)
    st = igraph_failed (err, rc, "maximum flow");
  graph_destroy (&gr);
  igraph_set_error_handler (old);
  pthread_mutex_unlock (&igraph_lock);
  if (st == SC_OK)
    *value = v;
  return st;
}

bool
sc_attention_flow_fits (int n_layers, int n)
{
  if (n_layers < 1 || n < 1 || (double) (n_layers + 1) * n > SC_FLOW_MAX_NODES)
    return false;
  return (double) n * n_layers * ((double) n * (n + 1) / 2) <= SC_FLOW_MAX_WORK;
}

ScStatus
sc_attention_flow (const float *const *layers, int n_layers, int n_heads, int n, int target,
                   double *out, ScError *err)
{
  return sc_attention_flow_with (layers, n_layers, n_heads, n, NULL, target, out, err);
}

ScStatus
sc_attention_flow_with (const float *const *layers, int n_layers, int n_heads, int n,
                        const ScRolloutOptions *opt, int target, double *out, ScError *err)
{
  const bool excl = opt != NULL && opt->exclude_first;
  const size_t nn = (size_t) n * n;
  double *a = NULL, *cap = NULL;
  int *lo = NULL, *hi = NULL, *edges = NULL;
  bool *reach = NULL;
  size_t n_edges = 0, max_edges = 0;
  igraph_error_handler_t *old;
  Graph gr = { 0 };
  ScStatus st;
  int n_nodes;

  if ((st = check_layers (layers, n_layers, n_heads, n, err)) != SC_OK)
    return st;
  if (out == NULL || target < 0 || target >= n)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "attention flow to position %d of %d tokens: "
                         "no such position", target, n);
  if (!sc_attention_flow_fits (n_layers, n))
    {
      int most = 1;

      while (sc_attention_flow_fits (n_layers, most + 1))
        most++;
      return sc_error_set (err, SC_ERR_RANGE, "attention flow over %d layers of %d tokens is "
                           "too large to stay interactive (one maximum flow per token over "
                           "%lld nodes); flows are computed up to %d tokens for %d layers: use "
                           "rollout, or a shorter text", n_layers, n,
                           (long long) (n_layers + 1) * n, most, n_layers);
    }
  n_nodes = (n_layers + 1) * n;

  /* The Â of every layer, and which nodes reach the target (layer by layer downwards). */
  a = malloc ((size_t) n_layers * nn * sizeof *a);
  lo = malloc ((size_t) n * sizeof *lo);
  hi = malloc ((size_t) n * sizeof *hi);
  reach = calloc ((size_t) n_nodes, sizeof *reach);
  if (a == NULL || lo == NULL || hi == NULL || reach == NULL)
    goto nomem;
  reach[(size_t) n_layers * n + target] = true;
  for (int l = n_layers - 1; l >= 0; l--)
    {
      const double *al = a + (size_t) l * nn;

      residual_mean (layers[l], n_heads, n, excl, a + (size_t) l * nn, lo, hi);
      for (int i = 0; i < n; i++)
        if (reach[(size_t) (l + 1) * n + i])
          for (int j = lo[i]; j < hi[i]; j++)
            if (al[(size_t) i * n + j] > 0.0)
              {
                reach[(size_t) l * n + j] = true;
                max_edges++;
              }
    }

  /* The edges (l, j) -> (l + 1, i) of capacity Â_l+1[i][j] between reaching nodes. */
  edges = malloc ((max_edges > 0 ? max_edges : 1) * 2 * sizeof *edges);
  cap = malloc ((max_edges > 0 ? max_edges : 1) * sizeof *cap);
  if (edges == NULL || cap == NULL)
    goto nomem;
  for (int l = 0; l < n_layers; l++)
    {
      const double *al = a + (size_t) l * nn;

      for (int i = 0; i < n; i++)
        if (reach[(size_t) (l + 1) * n + i])
          for (int j = 0; j < n; j++)
            if (al[(size_t) i * n + j] > 0.0)
              {
                edges[2 * n_edges] = l * n + j;
                edges[2 * n_edges + 1] = (l + 1) * n + i;
                cap[n_edges++] = al[(size_t) i * n + j];
              }
    }

  pthread_mutex_lock (&igraph_lock);
  old = igraph_set_error_handler (igraph_error_handler_ignore);
  {
    igraph_error_t rc = graph_build (&gr, n_nodes, edges, cap, n_edges);

    for (int j = 0; j < n && rc == IGRAPH_SUCCESS; j++)
      {
        igraph_real_t v = 0;

        if (!reach[j])
          {
            out[j] = 0.0;
            continue;
          }
        rc = igraph_maxflow_value (&gr.g, &v, j, n_layers * n + target, &gr.cap, NULL);
        out[j] = v;
      }
    if (rc != IGRAPH_SUCCESS)
      st = igraph_failed (err, rc, "attention flow");
  }
  graph_destroy (&gr);
  igraph_set_error_handler (old);
  pthread_mutex_unlock (&igraph_lock);
  goto out;

nomem:
  st = sc_error_set (err, SC_ERR_NOMEM, "attention flow of %d layers of %d tokens: out of "
                     "memory", n_layers, n);
out:
  free (a);
  free (lo);
  free (hi);
  free (reach);
  free (edges);
  free (cap);
  return st;
}
