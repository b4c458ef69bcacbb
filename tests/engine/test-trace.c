/* test-trace.c — causal tracing (engine/study/sc-trace.h) on the tiny llama of sc-test-gguf
 * (2 layers × 4 heads).
 *
 * 1. Every cell of the grid equals what the header's definition gives when it is built
 *    another way: in a fresh session, the noise drawn as the header states, the noised run
 *    computed in full, and each restored run a full run (no prefix reuse) whose residual
 *    entering layer l is patched at EVERY position with the noised run's rows and item j's
 *    clean row. The per-sample effects are averaged in the same order, so the means must
 *    be the same doubles.
 * 2. By construction: with no noise (ν = 0) the noised run is the clean run, so every
 *    effect is exactly 0 and the noised log-probability is the clean one.
 * 3. The importance: the largest |mean| over layers and the layer it came from (the lowest
 *    on ties), on a hand-written grid; a NaN and a missing contrast refused.
 * 4. Bad input: one token, too many samples, the contrast equal to the target, an id out of
 *    the vocabulary; cancel stops with SC_ERR_CANCELLED and no result.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/analysis/sc-effect.h"
#include "engine/backend/sc-backend.h"
#include "engine/core/sc-random.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/study/sc-trace.h"
#include "tests/engine/sc-test-gguf.h"

static const int32_t ids[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10 };
#define N ((int) G_N_ELEMENTS (ids))

typedef struct {
  ScModel *m;
  ScBackend *b;
  ScSession *s;
} Fixture;

static void
fixture_init (Fixture *f)
{
  ScError err = { 0 };

  f->m = sc_test_tiny_model ();
  f->b = sc_backend_cpu_new (2, NULL);
  g_assert_nonnull (f->m);
  g_assert_nonnull (f->b);
  g_assert_cmpint (sc_session_new (f->m, f->b, &f->s, &err), ==, SC_OK);
}

static void
fixture_clear (Fixture *f)
{
  sc_session_free (f->s);
  sc_backend_free (f->b);
  sc_model_free (f->m);
}

/* A full run (start_layer 0) with the residual entering layer @l replaced at every
 * position by @rows ((n, E)); its last row into @row; its residuals into @keep ((L, n, E))
 * when not NULL. */
static void
full_run (ScSession *s, const ScModelInfo *in, int l, const float *rows, float *row,
          float *keep)
{
  uint8_t on[N];
  ScIntervention iv = { .patch_tokens = N, .resid_patch = rows, .resid_patch_on = on,
                        .resid_patch_layer = l };
  ScForwardOptions opt = { .intervention = rows != NULL ? &iv : NULL,
                           .keep_residuals = keep != NULL };
  ScError err = { 0 };

  memset (on, 1, sizeof on);
  g_assert_cmpint (sc_forward (s, ids, N, &opt, row, &err), ==, SC_OK);
  for (int k = 0; keep != NULL && k < (int) in->n_layers; k++)
    for (int q = 0; q < N; q++)
      g_assert_cmpint (sc_session_residual (s, k, q, keep + ((size_t) k * N + q) * in->n_embd,
                                            &err), ==, SC_OK);
}

static void
running_mean (double *mean, double x, int k)
{
  *mean += (x - *mean) / (k + 1);
}

/* 1. */
static void
test_cells_by_definition (void)
{
  Fixture f, g;
  const ScTraceParams p = { .target = -1, .contrast = 99, .samples = 2, .noise = 2.5,
                            .seed = 7 };
  ScTraceResult *r = NULL;
  ScError err = { 0 };
  const ScModelInfo *in;
  int L, E, V;
  float *clean, *noised, *noised_resid, *patch, *noised_row, *row;
  double mean = 0, ss = 0, sigma;
  double *tv, *dlp, *dld;

  fixture_init (&f);
  fixture_init (&g);
  in = sc_model_info (f.m);
  L = (int) in->n_layers, E = (int) in->n_embd, V = (int) in->n_vocab;
  g_assert_cmpint (sc_trace_run (f.s, f.m, ids, N, &p, NULL, NULL, &r, &err), ==, SC_OK);
  g_assert_cmpint (r->n_layers, ==, L);
  g_assert_cmpint (r->n_tokens, ==, N);
  g_assert_cmpint (r->samples, ==, 2);
  g_assert_cmpfloat (r->noise, ==, 2.5);
  g_assert_cmpint (r->contrast, ==, 99);

  clean = g_new (float, (size_t) L * N * E);
  noised = g_new (float, (size_t) N * E);
  noised_resid = g_new (float, (size_t) L * N * E);
  patch = g_new (float, (size_t) N * E);
  noised_row = g_new (float, V);
  row = g_new (float, V);
  tv = g_new0 (double, (size_t) L * (N - 1));
  dlp = g_new0 (double, (size_t) L * (N - 1));
  dld = g_new0 (double, (size_t) L * (N - 1));

  /* the clean run, σ of the items' embedding entries */
  full_run (g.s, in, 0, NULL, row, clean);
  g_assert_cmpint (sc_logits_top1 (row, V), ==, r->target);
  for (size_t i = 0; i < (size_t) (N - 1) * E; i++)
    mean += clean[i];
  mean /= (double) (N - 1) * E;
  for (size_t i = 0; i < (size_t) (N - 1) * E; i++)
    ss += (clean[i] - mean) * (clean[i] - mean);
  sigma = sqrt (ss / ((double) (N - 1) * E));
  g_assert_cmpfloat (r->sigma, ==, sigma);

  for (int s = 0; s < 2; s++)
    {
      uint64_t state = 7 ^ (0x7ACEull << 32) ^ (uint64_t) s;

      (void) sc_splitmix64 (&state);
      memcpy (noised, clean, (size_t) N * E * sizeof *noised);
      for (size_t i = 0; i < (size_t) (N - 1) * E; i++)
        noised[i] = (float) ((double) noised[i] + 2.5 * sigma * sc_gaussian (&state));
      full_run (g.s, in, 0, noised, noised_row, noised_resid);
      for (int l = 0; l < L; l++)
        for (int j = 0; j < N - 1; j++)
          {
            const size_t c = (size_t) l * (N - 1) + j;
            ScEffect e;

            memcpy (patch, noised_resid + (size_t) l * N * E, (size_t) N * E * sizeof *patch);
            memcpy (patch + (size_t) j * E, clean + ((size_t) l * N + j) * E,
                    (size_t) E * sizeof *patch);
            full_run (g.s, in, l, patch, row, NULL);
            g_assert_cmpint (sc_effect_next_token (noised_row, row, V, r->target, &e, &err), ==,
                             SC_OK);
            running_mean (&tv[c], e.tv, s);
            running_mean (&dlp[c], e.delta_logp, s);
            running_mean (&dld[c], ((double) row[r->target] - row[99])
                                       - ((double) noised_row[r->target] - noised_row[99]), s);
          }
    }
  for (size_t c = 0; c < (size_t) L * (N - 1); c++)
    {
      g_assert_cmpfloat (r->tv[c], ==, tv[c]);
      g_assert_cmpfloat (r->delta_logp[c], ==, dlp[c]);
      g_assert_cmpfloat (r->delta_logit_diff[c], ==, dld[c]);
      g_assert_true (r->jsd[c] >= 0 && r->jsd[c] <= log (2.0));
    }
  /* the noise matters: some token restores something */
  {
    double most = 0;
    for (size_t c = 0; c < (size_t) L * (N - 1); c++)
      most = fmax (most, r->tv[c]);
    g_assert_cmpfloat (most, >, 1e-3);
  }
  g_free (clean), g_free (noised), g_free (noised_resid), g_free (patch);
  g_free (noised_row), g_free (row), g_free (tv), g_free (dlp), g_free (dld);
  sc_trace_result_free (r);
  fixture_clear (&f);
  fixture_clear (&g);
}

/* 2. */
static void
test_no_noise (void)
{
  Fixture f;
  const ScTraceParams p = { .target = -1, .contrast = -1, .samples = 1, .noise_zero = true };
  ScTraceResult *r = NULL;
  ScError err = { 0 };

  fixture_init (&f);
  g_assert_cmpint (sc_trace_run (f.s, f.m, ids, N, &p, NULL, NULL, &r, &err), ==, SC_OK);
  g_assert_cmpfloat (r->noise, ==, 0.0);
  g_assert_cmpfloat (r->logp_noised, ==, r->logp_clean);
  for (size_t c = 0; c < (size_t) r->n_layers * (N - 1); c++)
    {
      g_assert_cmpfloat (r->tv[c], ==, 0.0);
      g_assert_cmpfloat (r->jsd[c], ==, 0.0);
      g_assert_cmpfloat (r->delta_logp[c], ==, 0.0);
      g_assert_true (isnan (r->delta_logit_diff[c]));
    }
  sc_trace_result_free (r);
  fixture_clear (&f);
}

/* 3. */
static void
test_importance (void)
{
  /* 3 layers, 3 items: item 0 peaks (|−0.5|) at layer 1; item 1 ties 0.2 at layers 0 and 2
   * (the lowest wins); item 2 peaks at layer 2 */
  double tv[9] = { 0.1, 0.2, 0.0,  -0.5, 0.1, 0.3,  0.4, 0.2, 0.9 };
  ScTraceResult r = { .n_layers = 3, .n_tokens = 4, .contrast = -1, .tv = tv, .jsd = tv,
                      .delta_logp = tv, .delta_logit_diff = tv };
  double out[3];
  int layer[3];
  ScError err = { 0 };

  g_assert_cmpint (sc_trace_importance (&r, SC_TRACE_ABS_DELTA_LOGP, out, layer, &err), ==,
                   SC_OK);
  g_assert_cmpfloat (out[0], ==, 0.5);
  g_assert_cmpint (layer[0], ==, 1);
  g_assert_cmpfloat (out[1], ==, 0.2);
  g_assert_cmpint (layer[1], ==, 0);
  g_assert_cmpfloat (out[2], ==, 0.9);
  g_assert_cmpint (layer[2], ==, 2);
  g_assert_cmpint (sc_trace_importance (&r, SC_TRACE_ABS_DELTA_LOGIT_DIFF, out, NULL, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "contrast"));
  tv[4] = NAN;
  g_assert_cmpint (sc_trace_importance (&r, SC_TRACE_TV, out, NULL, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "token 1 at layer 1"));
  g_assert_cmpint (sc_trace_importance (&r, (ScTraceMeasure) 9, out, NULL, &err), ==,
                   SC_ERR_INVALID_ARG);
}

static bool
cancel_after_three (void *user, double fraction)
{
  int *calls = user;

  (void) fraction;
  return ++*calls < 3;
}

/* 4. */
static void
test_invalid (void)
{
  Fixture f;
  ScTraceParams p = { .target = -1, .contrast = -1 };
  ScTraceResult *r = NULL;
  ScError err = { 0 };
  int32_t bad[N];
  int calls = 0;

  fixture_init (&f);
  g_assert_cmpint (sc_trace_run (f.s, f.m, ids, 1, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  p.samples = SC_TRACE_MAX_SAMPLES + 1;
  g_assert_cmpint (sc_trace_run (f.s, f.m, ids, N, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "samples"));
  p.samples = 1;
  p.target = 5, p.contrast = 5;
  g_assert_cmpint (sc_trace_run (f.s, f.m, ids, N, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "contrast"));
  p.target = -1, p.contrast = -1;
  memcpy (bad, ids, sizeof bad);
  bad[3] = 1 << 20;
  g_assert_cmpint (sc_trace_run (f.s, f.m, bad, N, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_trace_run (f.s, f.m, ids, N, &p, cancel_after_three, &calls, &r, &err),
                   ==, SC_ERR_CANCELLED);
  g_assert_cmpint (calls, ==, 3);
  g_assert_null (r);
  fixture_clear (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/trace/cells-by-definition", test_cells_by_definition);
  g_test_add_func ("/trace/no-noise", test_no_noise);
  g_test_add_func ("/trace/importance", test_importance);
  g_test_add_func ("/trace/invalid", test_invalid);
  return g_test_run ();
}
