/* saccade-bench-patch.c — `saccade bench-patch`: what exact activation patching costs
 * against the plain passes it replaces (docs/benchmarks.md, "Activation patching").
 *
 * For each prompt length n (benchmark prose, as `saccade bench`; the corrupted prompt is
 * the same ids with the middle token replaced by the next id in the vocabulary): one
 * warm-up, then -r rounds, each timing, in alternating order,
 *   - the peer: n_layers × n_heads plain forward passes of the prompt (sc_forward, the last
 *     position's logits), what patching every head would cost without prefix reuse or
 *     sharing, and
 *   - the head map: sc_patch_run denoising every head at every position (two plain runs,
 *     the source's head outputs kept, then one patched run per head from its layer on),
 *   - its first-order estimate: sc_patch_attribution_run (one plain run, one taped run, one
 *     backward pass),
 * and reporting the medians of the rounds' ratios: exact patching ÷ the plain passes (a
 * ratio near 0.5 is what prefix reuse alone gives: a head of layer l recomputes layers
 * l .. L − 1, on average half the model), and attribution patching ÷ one plain pass (the
 * plain passes' time / (n_layers × n_heads) of the same round).
 */
#define G_LOG_DOMAIN "saccade-bench"

#include "app/cli/saccade-cli.h"

#include <stdio.h>

#include "engine/forward/sc-backward.h"
#include "engine/study/sc-patch-study.h"

static double
now_s (void)
{
  return g_get_monotonic_time () / 1e6;
}

static gboolean
run_plain (ScSession *s, const int32_t *ids, int n, int passes, float *logits, ScError *err)
{
  for (int k = 0; k < passes; k++)
    if (sc_forward (s, ids, n, NULL, logits, err) != SC_OK)
      return FALSE;
  return TRUE;
}

/* Every head patched, exactly (@g NULL) or to first order through @g. */
static gboolean
run_patch (ScSession *s, ScGrad *g, const ScModel *m, const int32_t *clean,
           const int32_t *corrupt, int n, ScError *err)
{
  const ScPatchParams p = { .corrupted_run = 1, .target = -1, .contrast = -1,
                            .direction = SC_PATCH_DENOISE, .what = SC_PATCH_HEADS };
  ScPatchResult *r = NULL;
  const ScStatus st = g != NULL ? sc_patch_attribution_run (s, g, m, clean, corrupt, n, &p, NULL,
                                                            NULL, &r, err)
                                : sc_patch_run (s, m, clean, corrupt, n, &p, NULL, NULL, &r, err);

  sc_patch_result_free (r);
  return st == SC_OK;
}

int
saccade_cmd_bench_patch (int argc, char **argv)
{
  g_auto (SaccadeBench) bench = { .reps = 3 };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- activation patching benchmark");
  g_autoptr (GError) error = NULL;
  g_autofree float *logits = NULL;
  const ScModelInfo *in;
  ScSession *s;
  ScGrad *g = NULL;
  ScError err = { 0 };
  int reps, heads, rc = 0;

  saccade_bench_add_options (ctx, &bench, "Timed rounds per size (default 3)", NULL);
  bench.common.needs = SC_BACKEND_CAP_BACKWARD;
  if (!saccade_bench_parse (&bench, ctx, 2, &argc, &argv))
    return 2;
  reps = bench.reps;
  if (!saccade_bench_open (&bench, SACCADE_BENCH_PROSE, &error))
    return saccade_cli_fail (g_steal_pointer (&error));
  s = bench.session.session;
  in = sc_model_info (bench.model);
  heads = (int) (in->n_layers * in->n_heads);
  logits = g_new (float, in->n_vocab);
  if (sc_grad_new (s, &g, &err) != SC_OK)
    return saccade_cli_fail_sc (&err);
  printf ("model %s, %s backend, %d threads; medians of %d rounds\n", in->name,
          sc_backend_name (bench.session.backend), bench.common.threads, reps);
  printf ("\n     n   %d plain passes s   patching %d heads s   ratio   attribution "
          "patching s   ÷ one pass\n", heads, heads);
  for (int i = 0; i < bench.n_lengths && rc == 0; i++)
    {
      const int n = bench.lengths[i];
      const int32_t *clean = (const int32_t *) bench.ids->data;
      g_autofree int32_t *corrupt = g_memdup2 (clean, (gsize) n * sizeof *clean);
      g_autofree double *plain = g_new (double, reps), *patch = g_new (double, reps),
                        *attr = g_new (double, reps), *ratio = g_new (double, reps),
                        *aratio = g_new (double, reps);

      corrupt[n / 2] = (int32_t) ((corrupt[n / 2] + 1) % (int32_t) in->n_vocab);
      /* warm-up, then each round the three in a rotating order */
      if (!run_plain (s, clean, n, 1, logits, &err)
          || !run_patch (s, NULL, bench.model, clean, corrupt, n, &err)
          || !run_patch (s, g, bench.model, clean, corrupt, n, &err))
        {
          rc = saccade_cli_fail_sc (&err);
          break;
        }
      for (int r = 0; r < reps && rc == 0; r++)
        for (int k = 0; k < 3; k++)
          {
            const int which = (r + k) % 3;
            const double t0 = now_s ();
            const gboolean ok = which == 0 ? run_plain (s, clean, n, heads, logits, &err)
                                : run_patch (s, which == 2 ? g : NULL, bench.model, clean,
                                             corrupt, n, &err);
            if (!ok)
              {
                rc = saccade_cli_fail_sc (&err);
                break;
              }
            (which == 0 ? plain : which == 1 ? patch : attr)[r] = now_s () - t0;
          }
      if (rc != 0)
        break;
      for (int r = 0; r < reps; r++)
        {
          ratio[r] = patch[r] / plain[r];
          aratio[r] = attr[r] / (plain[r] / heads);
        }
      printf ("  %4d   %18.3f   %18.3f   %5.2f   %22.3f   %10.2f\n", n,
              saccade_median (plain, reps), saccade_median (patch, reps),
              saccade_median (ratio, reps), saccade_median (attr, reps),
              saccade_median (aratio, reps));
    }
  sc_grad_free (g);
  return rc;
}
