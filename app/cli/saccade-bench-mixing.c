/* saccade-bench-mixing.c — `saccade bench-mixing`: what context mixing of a whole model
 * costs against one forward pass (docs/benchmarks.md, "Context mixing").
 *
 * For each prompt length n (--sizes; benchmark prose, as `saccade bench`): one warm-up,
 * then -r rounds, each timing, in a rotating order,
 *   - the peer: one plain forward pass of the prompt (sc_forward, the last position's
 *     logits),
 *   - value zeroing of every layer (sc_mixing_run: one pass keeping the values and the
 *     residuals, then n + 1 reruns of each layer alone with its values patched),
 *   - ALTI of every layer (sc_mixing_run: one pass keeping the weights, values and
 *     residuals, then each layer's L1 distances on the host),
 * both with their rollout, and reporting the medians of the rounds' ratios to the pass.
 */
#define G_LOG_DOMAIN "saccade-bench"

#include "app/cli/saccade-cli.h"

#include <stdio.h>

#include "engine/study/sc-mixing-study.h"

/* One of the three timed (SaccadeBenchWay): 0 the plain pass, else sc_mixing_run with
 * method @which − 1. */
static gboolean
run_one (int which, gpointer data, ScError *err)
{
  const SaccadeBenchPass *w = data;
  const ScMixingParams p = { .method = which - 1 };
  ScMixingResult *r = NULL;
  ScStatus st;

  if (which == 0)
    return sc_forward (w->session, w->ids, w->n, NULL, w->logits, err) == SC_OK;
  st = sc_mixing_run (w->session, w->model, w->ids, w->n, &p, NULL, &r, err);
  sc_mixing_result_free (r);
  return st == SC_OK;
}

int
saccade_cmd_bench_mixing (int argc, char **argv)
{
  g_auto (SaccadeBench) bench = { .reps = 5 };
  g_autoptr (GError) error = NULL;
  g_autofree float *logits = NULL;
  ScError err = { 0 };
  int reps, rc = 0;

  if (!saccade_bench_parse (&bench, "- context mixing benchmark",
                            "Timed rounds per size (default 5)", NULL, 2, &argc, &argv))
    return 2;
  reps = bench.reps;
  if (!saccade_bench_open (&bench, SACCADE_BENCH_PROSE, &error))
    return saccade_cli_fail (g_steal_pointer (&error));
  logits = g_new (float, sc_model_info (bench.model)->n_vocab);
  saccade_bench_print_header (&bench);
  printf ("\n     n   one pass s   value zeroing s   ÷ one pass   ALTI s   ÷ one pass\n");
  for (int i = 0; i < bench.n_lengths && rc == 0; i++)
    {
      const SaccadeBenchPass w = { bench.session.session, bench.model,
                                   (const int32_t *) bench.ids->data, bench.lengths[i], logits,
                                   NULL };
      g_autofree double *t = g_new (double, 3 * reps), *vz = g_new (double, reps),
                        *al = g_new (double, reps);

      for (int k = 0; k < 3 && rc == 0; k++) /* warm-up */
        if (!run_one (k, (gpointer) &w, &err))
          rc = saccade_cli_fail_sc (&err);
      if (rc == 0 && !saccade_bench_rotate (reps, 3, run_one, (gpointer) &w, t, &err))
        rc = saccade_cli_fail_sc (&err);
      if (rc != 0)
        break;
      for (int r = 0; r < reps; r++)
        {
          vz[r] = t[reps + r] / t[r];
          al[r] = t[2 * reps + r] / t[r];
        }
      printf ("  %4d   %10.4f   %15.3f   %10.1f   %6.3f   %10.1f\n", w.n,
              saccade_median (t, reps), saccade_median (t + reps, reps),
              saccade_median (vz, reps), saccade_median (t + 2 * reps, reps),
              saccade_median (al, reps));
    }
  return rc;
}
