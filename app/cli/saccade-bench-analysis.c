/* saccade-bench-analysis.c — `saccade bench-analysis`: what the head-distance matrix costs
 * (docs/benchmarks.md, "Head analysis").
 *
 * For each prompt length n: one forward pass over the benchmark prose captures every head
 * in memory; then the all-pairs matrix of sc_head_distance_matrix (one float log per
 * element of m, on all threads and on one) is timed against the peer, the naive loop that
 * calls the reference sc_head_distance (two double logs per element, every key) for every
 * pair, on one thread. The naive loop is too slow to run over all 36,315 pairs at n = 512
 * (minutes), so it runs over the pairs of the first heads until a second has passed and is
 * scaled to all pairs (every pair costs it the same: same shapes, no skipping). Medians of
 * -r rounds; the two results are checked to agree to 1e-6 nats on the pairs both computed.
 */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/analysis/sc-head-distance.h"

typedef struct {
  float *heads;      /* (n_layers, n_heads, n, n) */
  int n_heads;
  size_t head_floats;
} Capture;

static float *
cap_layer_buffer (void *user, int layer, int n_q, int n_k)
{
  Capture *c = user;
  return c->heads + (size_t) layer * c->n_heads * c->head_floats;
}

static bool
cap_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  Capture *c = user;
  float *dst = c->heads + ((size_t) layer * c->n_heads + head) * c->head_floats;

  if (probs != dst)
    memcpy (dst, probs, c->head_floats * sizeof *dst);
  return true;
}

typedef struct {
  int n, n_all;
  double fast_s, fast1_s, naive_s; /* naive_s: scaled to every pair */
  size_t naive_pairs;
  double max_err;
} Row;

static double
now_s (void)
{
  return g_get_monotonic_time () / 1e6;
}

int
saccade_cmd_bench_analysis (int argc, char **argv)
{
  g_auto (SaccadeBench) bench = { .reps = 3 };
  g_autoptr (GError) error = NULL;
  g_autofree Row *rows = NULL;
  ScError err = { 0 };
  int n_rows, reps, rc = 0;

  if (!saccade_bench_parse (&bench,
                            "- the head-distance matrix of every head against the naive "
                            "two-log loop",
                            "Timed rounds (default 3)", NULL, 1, &argc, &argv))
    return 2;
  reps = bench.reps;
  n_rows = bench.n_lengths;
  rows = g_new0 (Row, n_rows);
  for (int i = 0; i < n_rows; i++)
    rows[i].n = bench.lengths[i];
  if (!saccade_bench_open (&bench, SACCADE_BENCH_PROSE, &error))
    return saccade_cli_fail (g_steal_pointer (&error));

  for (int r = 0; r < n_rows; r++)
    {
      const ScModelInfo *in = sc_model_info (bench.model);
      const int n = rows[r].n, n_all = (int) (in->n_layers * in->n_heads);
      const size_t nn = (size_t) n * n;
      Capture c = { NULL, (int) in->n_heads, nn };
      ScObserver obs = { NULL, cap_observe, &c, cap_layer_buffer };
      ScForwardOptions fo = { .observer = &obs };
      g_autofree float *logits = g_new (float, in->n_vocab);
      g_autofree const float **heads = g_new (const float *, n_all);
      g_autofree double *d = g_new (double, (gsize) n_all * n_all);
      g_autofree double *t_fast = g_new (double, reps), *t_fast1 = g_new (double, reps),
                        *t_naive = g_new (double, reps);

      rows[r].n_all = n_all;
      if ((c.heads = g_try_malloc ((gsize) n_all * nn * sizeof (float))) == NULL)
        {
          fprintf (stderr, "saccade: not enough memory for %d heads of %d tokens\n", n_all, n);
          rc = 1;
          break;
        }
      if (sc_forward (bench.session.session, (const int32_t *) bench.ids->data, n, &fo, logits,
                      &err) != SC_OK)
        {
          g_free (c.heads);
          saccade_set_error_from_sc (&error, &err);
          return saccade_cli_fail (g_steal_pointer (&error));
        }
      for (int h = 0; h < n_all; h++)
        heads[h] = c.heads + (size_t) h * nn;
      for (int k = 0; k < reps; k++)
        {
          double t0 = now_s ();
          size_t pairs = 0;
          double naive = 0;

          sc_head_distance_matrix (heads, n_all, n, n, bench.common.threads, NULL, NULL, d, NULL);
          t_fast[k] = now_s () - t0;
          t0 = now_s ();
          sc_head_distance_matrix (heads, n_all, n, n, 1, NULL, NULL, d, NULL);
          t_fast1[k] = now_s () - t0;
          /* the peer: row-major pairs (a, b > a) until a second has passed */
          t0 = now_s ();
          for (int a = 0; a < n_all && now_s () - t0 < 1.0; a++)
            for (int b = a + 1; b < n_all && now_s () - t0 < 1.0; b++)
              {
                sc_head_distance (heads[a], heads[b], n, n, &naive, NULL);
                rows[r].max_err = MAX (rows[r].max_err, fabs (naive - d[(gsize) a * n_all + b]));
                pairs++;
              }
          t_naive[k] = (now_s () - t0) / pairs * ((double) n_all * (n_all - 1) / 2);
          rows[r].naive_pairs = pairs;
        }
      rows[r].fast_s = saccade_median (t_fast, reps);
      rows[r].fast1_s = saccade_median (t_fast1, reps);
      rows[r].naive_s = saccade_median (t_naive, reps);
      g_free (c.heads);
    }

  if (bench.common.json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      json_builder_begin_object (b);
      saccade_json_int (b, "threads", bench.common.threads);
      saccade_json_int (b, "reps", reps);
      saccade_json_begin_array (b, "rows");
      for (int r = 0; r < n_rows; r++)
        {
          json_builder_begin_object (b);
          saccade_json_int (b, "n", rows[r].n);
          saccade_json_int (b, "heads", rows[r].n_all);
          saccade_json_double (b, "matrix_seconds", rows[r].fast_s);
          saccade_json_double (b, "matrix_seconds_1_thread", rows[r].fast1_s);
          saccade_json_double (b, "naive_seconds_1_thread", rows[r].naive_s);
          saccade_json_int (b, "naive_pairs_timed", (gint64) rows[r].naive_pairs);
          saccade_json_double (b, "max_abs_difference", rows[r].max_err);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      json_builder_end_object (b);
      saccade_json_print (b);
    }
  else
    {
      printf ("Head-distance matrix (mean JSD of every pair of heads), median of %d; the naive "
              "peer is timed on the first pairs and scaled to all\n", reps);
      printf ("    n  heads  matrix s  1 thread s  naive 1 thread s  naive/1 thread  max |diff|\n");
      for (int r = 0; r < n_rows; r++)
        printf ("%5d  %5d  %8.3f  %10.3f  %16.1f  %13.1fx  %10.1e\n", rows[r].n, rows[r].n_all,
                rows[r].fast_s, rows[r].fast1_s, rows[r].naive_s,
                rows[r].naive_s / rows[r].fast1_s, rows[r].max_err);
    }
  return rc;
}
