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

/* What each timed way runs on: the clean prompt in pass.ids. */
typedef struct {
  SaccadeBenchPass pass;
  const int32_t *corrupt;
  int heads;
} PatchWays;

/* One of the three timed (SaccadeBenchWay): 0 the plain passes, 1 exact patching, 2 its
 * first-order estimate. */
static gboolean
run_way (int which, gpointer data, ScError *err)
{
  const PatchWays *w = data;
  const SaccadeBenchPass *p = &w->pass;

  if (which == 0)
    return run_plain (p->session, p->ids, p->n, w->heads, p->logits, err);
  return run_patch (p->session, which == 2 ? p->grad : NULL, p->model, p->ids, w->corrupt, p->n,
                    err);
}

int
saccade_cmd_bench_patch (int argc, char **argv)
{
  g_auto (SaccadeBench) bench = { .reps = 3, .common.needs = SC_BACKEND_CAP_BACKWARD };
  g_autoptr (GError) error = NULL;
  g_autofree float *logits = NULL;
  const ScModelInfo *in;
  ScSession *s;
  ScGrad *g = NULL;
  ScError err = { 0 };
  int reps, heads, rc = 0;

  if (!saccade_bench_parse (&bench, "- activation patching benchmark",
                            "Timed rounds per size (default 3)", NULL, 2, &argc, &argv))
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
  saccade_bench_print_header (&bench);
  printf ("\n     n   %d plain passes s   patching %d heads s   ratio   attribution "
          "patching s   ÷ one pass\n", heads, heads);
  for (int i = 0; i < bench.n_lengths && rc == 0; i++)
    {
      const int n = bench.lengths[i];
      const int32_t *clean = (const int32_t *) bench.ids->data;
      g_autofree int32_t *corrupt = g_memdup2 (clean, (gsize) n * sizeof *clean);
      const PatchWays w = { { s, bench.model, clean, n, logits, g }, corrupt, heads };
      g_autofree double *t = g_new (double, 3 * reps), *ratio = g_new (double, reps),
                        *aratio = g_new (double, reps);
      double *plain = t, *patch = t + reps, *attr = t + 2 * reps;

      corrupt[n / 2] = (int32_t) ((corrupt[n / 2] + 1) % (int32_t) in->n_vocab);
      /* warm-up, then each round the three in a rotating order */
      if (!run_plain (s, clean, n, 1, logits, &err) || !run_way (1, (gpointer) &w, &err)
          || !run_way (2, (gpointer) &w, &err)
          || !saccade_bench_rotate (reps, 3, run_way, (gpointer) &w, t, &err))
        {
          rc = saccade_cli_fail_sc (&err);
          break;
        }
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
