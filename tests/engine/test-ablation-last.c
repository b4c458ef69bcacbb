/* test-ablation-last.c — the head sweep's last-position fast path (ScAblationParams.last_only,
 * ScForwardOptions.last_row) against the all-position sweep, on the tiny llama of
 * sc-test-gguf (2 layers x 4 heads), SmolLM2-135M, Gemma 3 270M and, in 1,
 * Qwen2.5-Coder-0.5B (each real model skipped when it is not fetched).
 *
 * What "exact" means here. last_row computes the last layer's attention output and
 * feed-forward and the output head for the last row alone: matrix-vector products where
 * the all-position run makes products of n rows, and OpenBLAS's bits depend on the row
 * count (docs/benchmarks.md, "Head sweep"). So the fast path is not bit-identical; it is
 * bounded. With δ the largest |z_fast − z_all| over the last row's logits, exactly
 * (ln p_i = z_i − lse z, lse is 1-Lipschitz in the max norm; p_fast,i / p_all,i lies in
 * [e^−2δ, e^2δ]):
 *   |Δ log p_fast − Δ log p_all| <= 2δ, the same for Δ (logit(A) − logit(B));
 *   |TV_fast − TV_all| <= TV (p_fast, p_all) <= (e^2δ − 1) / 2;
 *   |JSD_fast − JSD_all| <= 2 (e^2δ − 1) (to first order the change is at most
 *   (ln 2 + 1 / e) / 2 (e^2δ − 1); twice that covers the rest at these δ);
 * plus 1e-10 for the double sums over the vocabulary. The top-1s agree unless two logits
 * are within 2δ. δ itself is bounded by 1e-5 × max (1, max |z|) (a few ulp: measured up
 * to 1.6e-6 relative, 3.5e-5 at |z| 22.7 on SmolLM2, 1.5e-5 at 20 on Gemma 3).
 *
 * 1. sc_forward with last_row: the last row's logits within that δ bound of the all-logits
 *    run's, for no intervention, a zero-ablated head in the first and the last layer and a
 *    mean-ablated head in the last layer; with prefix reuse (start_layer) the same bits as
 *    without; one token (no rows to skip) bit-identical to a plain last-row run; refused
 *    with all_logits, keep_residuals, keep_kv, n_past and an observer.
 * 2. The sweep with last_only: a head's measures equal, bit for bit, the effect of a
 *    last_row forward of that ablation recomputed here in another session (every head of
 *    the tiny model; on SmolLM2 each layer's first head and the last layer's nine), and
 *    lie within the bounds above of the all-position sweep's, with δ measured for the
 *    recomputed heads and its bound 1e-5 × max (1, 2 max |z_clean|) for the others (the
 *    recomputed heads' logits stay below twice the clean ones'); Δ mean loss is NaN
 *    (finite in the all-position sweep); the clean numbers
 *    are the same bits. Zero-ablation on the tiny model and SmolLM2, mean-ablation on the
 *    tiny one, with a contrast so Δ logit difference is checked. (Gemma 3 only in 1: the
 *    sweep is the same code for every architecture, the layer function is not; its 72
 *    heads' four runs each would take minutes.)
 * 3. The params text: unchanged without last_only, ,"measures":"last" with it (zero and
 *    mean; never on a tokens study), ,"stacked":true after it with stack_layers; a
 *    last_only sweep is stored and read back (NaN Δ loss) and is not found by the
 *    all-position params.
 * 4. Each layer's runs stacked (stack_layers, sc_forward_zero_heads): for every head of
 *    every layer, the stacked run's logits within the δ bound above of the one-at-a-time
 *    last_row run's and of the all-position run's last row (the stacked products have
 *    other row counts, and the last layer runs on every row); the stacked sweep's
 *    measures are those of these logits bit for bit, and within the bounds of the
 *    all-position sweep's; a subset of heads (sc_head_sweep_run_heads) stacks only those;
 *    refused without last_only, with mean-ablation or full_recompute; on the tiny llama
 *    and SmolLM2; Gemma 3, whose layer does not stack, says so (SC_ERR_UNSUPPORTED).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "engine/analysis/sc-effect.h"
#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store-study.h"
#include "engine/study/sc-ablation-study.h"
#include "tests/engine/sc-test-gguf.h"

static const int32_t tiny_ids[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10, 200, 201 };
/* SmolLM2: "The cat sat on the mat." and friends (the ids of test-ablation's default-model
 * test); Gemma 3: <bos> and common ids of its vocabulary */
static const int32_t smol_ids[] = { 1, 504, 3458, 282, 4649, 314, 1345, 30 };
static const int32_t gemma_ids[] = { 2, 818, 5866, 10764, 580, 506, 2180, 236761 };
/* "The cat chased the ball because it was" on Qwen2.5-Coder-0.5B */
static const int32_t qwen2_ids[] = { 785, 8251, 61820, 279, 4935, 1576, 432, 572 };

typedef struct {
  ScModel *m;
  const ScModelInfo *in;
  ScBackend *b;
  ScSession *s;
  int L, H, V, d;
} Fixture;

static void
fixture_init (Fixture *f, ScModel *m)
{
  ScError err = { 0 };

  f->m = m;
  f->in = sc_model_info (m);
  f->b = sc_backend_cpu_new (2, NULL);
  g_assert_nonnull (f->b);
  g_assert_cmpint (sc_session_new (m, f->b, &f->s, &err), ==, SC_OK);
  f->L = (int) f->in->n_layers;
  f->H = (int) f->in->n_heads;
  f->V = (int) f->in->n_vocab;
  f->d = (int) f->in->head_dim;
}

static void
fixture_clear (Fixture *f)
{
  sc_session_free (f->s);
  sc_backend_free (f->b);
}

/* Why a real model's cases were skipped (the last one), or NULL: main then exits 77, so that
 * meson and .ci/run see the skip instead of a pass. */
static char *skipped;

/* The model of test case @which: 0 the tiny llama, 1 SmolLM2, 2 Gemma 3, 3 Qwen2.5-Coder
 * (qwen2); NULL (the test skipped) when a real one is not fetched. */
static ScModel *
open_model (int which)
{
  static const char *const FILES[] = { NULL, "SmolLM2-135M-Instruct.Q4_1.gguf",
                                       "gemma-3-270m-q4_k_m.gguf",
                                       "Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf" };
  static const char *const ENVS[] = { NULL, "SACCADE_MODEL", "SACCADE_GEMMA_MODEL",
                                      "SACCADE_QWEN2_MODEL" };
  g_autofree char *path = NULL;
  ScModel *m = NULL;
  ScError err = { 0 };

  if (which == 0)
    return sc_test_tiny_model ();
  path = g_getenv (ENVS[which]) != NULL
           ? g_strdup (g_getenv (ENVS[which]))
           : g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"), "data", "models", FILES[which],
                               NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_free (skipped);
      skipped = g_strdup_printf ("%s is not fetched (data/fetch-model.sh)", path);
      g_test_skip (skipped);
      return NULL;
    }
  if (sc_model_open (path, 2, &m, &err) != SC_OK)
    g_error ("%s", err.message);
  return m;
}

static const int32_t *
model_ids (int which, int *n)
{
  if (which == 0)
    return (*n = (int) G_N_ELEMENTS (tiny_ids)), tiny_ids;
  if (which == 1)
    return (*n = (int) G_N_ELEMENTS (smol_ids)), smol_ids;
  if (which == 2)
    return (*n = (int) G_N_ELEMENTS (gemma_ids)), gemma_ids;
  return (*n = (int) G_N_ELEMENTS (qwen2_ids)), qwen2_ids;
}

/* The largest |a_i − b_i| over @V floats, and the largest |b_i| into *@mag. */
static double
max_diff (const float *a, const float *b, int V, double *mag)
{
  double worst = 0.0, m = 0.0;

  for (int i = 0; i < V; i++)
    {
      worst = MAX (worst, fabs ((double) a[i] - (double) b[i]));
      m = MAX (m, fabs ((double) b[i]));
    }
  if (mag != NULL)
    *mag = m;
  return worst;
}

/* δ's own bound (top-level comment). */
static void
assert_delta_small (double delta, double mag)
{
  g_assert_cmpfloat (delta, <=, 1e-5 * MAX (1.0, mag));
}

/* 1. */
static void
forward_case (int which)
{
  ScModel *m = open_model (which);
  Fixture f;
  ScError err = { 0 };
  ScForwardOptions all = { .all_logits = true }, fast = { .last_row = true }, bad;
  ScForwardOptions keep = { .all_logits = true, .keep_residuals = true };
  ScObserver obs = { 0 };
  g_autofree float *za = NULL, *zf = NULL, *zp = NULL, *scale = NULL, *mean = NULL;
  g_autofree uint8_t *mean_on = NULL;
  ScIntervention iv = { 0 };
  const int32_t *ids;
  int n, c;

  if (m == NULL)
    return;
  fixture_init (&f, m);
  ids = model_ids (which, &n);
  za = g_new (float, (gsize) n * f.V);
  zf = g_new (float, f.V);
  zp = g_new (float, f.V);
  scale = g_new (float, f.L * f.H);
  mean = g_new (float, (gsize) f.L * f.H * f.d);
  mean_on = g_new0 (uint8_t, f.L * f.H);
  for (int i = 0; i < f.L * f.H; i++)
    scale[i] = 1.0f;
  for (int i = 0; i < f.L * f.H * f.d; i++)
    mean[i] = 0.05f * (float) ((i % 7) - 3);
  /* the clean run keeps its residuals for the prefix-reuse check */
  g_assert_cmpint (sc_forward (f.s, ids, n, &keep, za, &err), ==, SC_OK);
  for (c = 0; c < 4; c++)
    {
      const int head = c == 1 ? 1 : (f.L - 1) * f.H + (f.H - 1);
      double mag, delta;
      memset (&iv, 0, sizeof iv);
      if (c == 1 || c == 2)
        {
          scale[head] = 0.0f;
          iv.head_scale = scale;
        }
      else if (c == 3)
        {
          mean_on[head] = 1;
          iv.head_mean = mean;
          iv.head_mean_on = mean_on;
        }
      all.intervention = fast.intervention = c == 0 ? NULL : &iv;
      all.keep_residuals = false;
      g_assert_cmpint (sc_forward (f.s, ids, n, &all, za, &err), ==, SC_OK);
      g_assert_cmpint (sc_forward (f.s, ids, n, &fast, zf, &err), ==, SC_OK);
      delta = max_diff (zf, za + (size_t) (n - 1) * f.V, f.V, &mag);
      g_test_message ("model %d case %d: delta %.3g of max |z| %.3g", which, c, delta, mag);
      assert_delta_small (delta, mag);
      g_assert_cmpint (sc_logits_top1 (zf, f.V), ==,
                       sc_logits_top1 (za + (size_t) (n - 1) * f.V, f.V));
      /* prefix reuse keeps the bits (the residuals of the clean run above) */
      fast.start_layer = sc_intervention_first_layer (fast.intervention, f.in);
      if (fast.start_layer > f.L - 1)
        fast.start_layer = f.L - 1;
      g_assert_cmpint (sc_forward (f.s, ids, n, &fast, zp, &err), ==, SC_OK);
      g_assert_cmpmem (zp, (gsize) f.V * sizeof *zp, zf, (gsize) f.V * sizeof *zf);
      fast.start_layer = 0;
      scale[head] = 1.0f;
      mean_on[head] = 0;
    }
  /* one token: no row to skip, the plain last-row run's bits */
  fast.intervention = all.intervention = NULL;
  all.all_logits = false;
  g_assert_cmpint (sc_forward (f.s, ids, 1, &all, za, &err), ==, SC_OK);
  g_assert_cmpint (sc_forward (f.s, ids, 1, &fast, zf, &err), ==, SC_OK);
  g_assert_cmpmem (zf, (gsize) f.V * sizeof *zf, za, (gsize) f.V * sizeof *za);
  /* refused combinations */
  for (c = 0; c < 5; c++)
    {
      bad = (ScForwardOptions) { .last_row = true };
      if (c == 0)
        bad.all_logits = true;
      else if (c == 1)
        bad.keep_residuals = true;
      else if (c == 2)
        bad.keep_kv = true;
      else if (c == 3)
        bad.n_past = 1;
      else
        bad.observer = &obs;
      if (c == 3)
        {
          ScForwardOptions kv = { .keep_kv = true };
          g_assert_cmpint (sc_forward (f.s, ids, n - 1, &kv, zf, &err), ==, SC_OK);
        }
      g_assert_cmpint (sc_forward (f.s, ids, n, &bad, za, &err), ==, SC_ERR_INVALID_ARG);
      g_assert_nonnull (strstr (err.message, "last_row"));
    }
  fixture_clear (&f);
  sc_model_free (m);
}

static void
test_forward_tiny (void)
{
  forward_case (0);
}

static void
test_forward_smollm2 (void)
{
  forward_case (1);
}

static void
test_forward_gemma3 (void)
{
  forward_case (2);
}

/* last_row on qwen2 (its own layer file, which takes the tail as llama and Gemma do) */
static void
test_forward_qwen2 (void)
{
  forward_case (3);
}

/* Bitwise equality of doubles. */
static void
assert_same_double (double a, double b)
{
  g_assert_cmpmem (&a, sizeof a, &b, sizeof b);
}

/* What 2. and 4. start from: two sessions on @m (@f runs the sweeps, @g the runs they are
 * checked against), the ids of case @which, and buffers for the clean and an all-position
 * run's logits (n rows) and a last-row run's (one). */
static const int32_t *
sweep_setup (ScModel *m, int which, Fixture *f, Fixture *g, int *n, float **clean, float **za,
             float **zf)
{
  const int32_t *ids = model_ids (which, n);

  fixture_init (f, m);
  fixture_init (g, m);
  *clean = g_new (float, (gsize) *n * f->V);
  *za = g_new (float, (gsize) *n * f->V);
  *zf = g_new (float, f->V);
  return ids;
}

/* 2. */
static void
sweep_case (int which, ScAblateMode mode)
{
  ScModel *m = open_model (which);
  Fixture f, g;
  ScError err = { 0 };
  ScAblationParams p = { .target = -1, .contrast = -1, .mode = mode };
  ScHeadSweepResult *ra = NULL, *rf = NULL;
  ScForwardOptions all = { .all_logits = true }, fast = { .last_row = true };
  g_autofree float *clean = NULL, *za = NULL, *zf = NULL, *scale = NULL, *mean = NULL;
  g_autofree uint8_t *mean_on = NULL;
  ScIntervention iv = { 0 };
  const int32_t *ids;
  double worst = 0.0, mag = 0.0, clean_mag;
  int n, i;

  if (m == NULL)
    return;
  ids = sweep_setup (m, which, &f, &g, &n, &clean, &za, &zf);
  scale = g_new (float, f.L * f.H);
  mean = g_new (float, (gsize) f.L * f.H * f.d);
  mean_on = g_new0 (uint8_t, f.L * f.H);
  for (i = 0; i < f.L * f.H; i++)
    scale[i] = 1.0f;
  for (i = 0; i < f.L * f.H * f.d; i++)
    mean[i] = 0.05f * (float) ((i % 7) - 3);
  if (mode == SC_ABLATE_ZERO)
    iv.head_scale = scale;
  else
    {
      p.head_mean = iv.head_mean = mean;
      iv.head_mean_on = mean_on;
      p.mean_set = "test";
    }
  /* a contrast: the clean top-1's neighbour in the vocabulary; the clean run keeps its
   * residuals so the recomputes below reuse the prefix as the sweep does */
  all.keep_residuals = true;
  g_assert_cmpint (sc_forward (g.s, ids, n, &all, clean, &err), ==, SC_OK);
  all.keep_residuals = false;
  clean_mag = 0.0;
  for (i = 0; i < f.V; i++)
    clean_mag = MAX (clean_mag, fabs ((double) clean[(size_t) (n - 1) * f.V + i]));
  p.contrast = (sc_logits_top1 (clean + (size_t) (n - 1) * f.V, f.V) + 1) % f.V;
  all.intervention = fast.intervention = &iv;
  g_assert_cmpint (sc_head_sweep_run (f.s, m, ids, n, &p, NULL, NULL, &ra, &err), ==, SC_OK);
  p.last_only = true;
  g_assert_cmpint (sc_head_sweep_run (f.s, m, ids, n, &p, NULL, NULL, &rf, &err), ==, SC_OK);
  assert_same_double (rf->logp_clean, ra->logp_clean);
  assert_same_double (rf->loss_clean, ra->loss_clean);
  assert_same_double (rf->logit_diff_clean, ra->logit_diff_clean);
  g_assert_cmpint (rf->target, ==, ra->target);
  g_assert_cmpint (rf->top1_clean, ==, ra->top1_clean);

  for (i = 0; i < f.L * f.H; i++)
    {
      const ScAblationEffect *a = &ra->heads[i], *e = &rf->heads[i];
      /* recomputed here: every head of the tiny model; of a real one each layer's first
       * head and the whole last layer (all 270 would take minutes) */
      const bool redo = which == 0 || i % f.H == 0 || i / f.H == f.L - 1;
      ScAblationEffect x = { 0 };
      double delta, grow;
      g_assert_true (isnan (e->delta_loss));
      g_assert_true (isfinite (a->delta_loss));
      if (redo)
        {
          double mg;
          if (mode == SC_ABLATE_ZERO)
            scale[i] = 0.0f;
          else
            mean_on[i] = 1;
          all.start_layer = fast.start_layer = i / f.H;
          g_assert_cmpint (sc_forward (g.s, ids, n, &all, za, &err), ==, SC_OK);
          g_assert_cmpint (sc_forward (g.s, ids, n, &fast, zf, &err), ==, SC_OK);
          scale[i] = 1.0f;
          mean_on[i] = 0;
          /* the sweep's numbers are those of this last_row run, bit for bit */
          g_assert_cmpint (sc_effect_next_token (clean + (size_t) (n - 1) * f.V, zf, f.V,
                                                 rf->target, &x.next, &err), ==, SC_OK);
          assert_same_double (e->next.delta_logp, x.next.delta_logp);
          assert_same_double (e->next.tv, x.next.tv);
          assert_same_double (e->next.jsd, x.next.jsd);
          g_assert_cmpint (e->next.top1_ablated, ==, x.next.top1_ablated);
          g_assert_cmpint (e->flipped, ==, x.next.top1_ablated != x.next.top1_clean);
          delta = max_diff (zf, za + (size_t) (n - 1) * f.V, f.V, &mg);
          assert_delta_small (delta, mg);
          /* what the other heads' bound assumes */
          g_assert_cmpfloat (mg, <=, 2.0 * clean_mag);
          worst = MAX (worst, delta);
          mag = MAX (mag, mg);
        }
      else /* δ's bound, with the ablated logits below twice the clean ones' size */
        delta = 1e-5 * MAX (1.0, 2.0 * clean_mag);
      /* within the bound of the all-position sweep's */
      grow = expm1 (2.0 * delta);
      g_assert_cmpfloat (fabs (e->next.delta_logp - a->next.delta_logp), <=, 2 * delta + 1e-10);
      g_assert_cmpfloat (fabs (e->delta_logit_diff - a->delta_logit_diff), <=,
                         2 * delta + 1e-10);
      g_assert_cmpfloat (fabs (e->next.tv - a->next.tv), <=, grow / 2 + 1e-10);
      g_assert_cmpfloat (fabs (e->next.jsd - a->next.jsd), <=, 2 * grow + 1e-10);
      assert_same_double (e->next.logp_clean, a->next.logp_clean);
      if (redo && e->next.top1_ablated != a->next.top1_ablated)
        {
          /* a near tie: the two tokens within 2δ in the all-position run */
          const float *row = za + (size_t) (n - 1) * f.V;
          g_assert_cmpfloat (fabs ((double) row[e->next.top1_ablated]
                                   - (double) row[a->next.top1_ablated]), <=, 2 * delta);
        }
    }
  g_test_message ("model %d mode %d: largest delta %.3g, largest |z| %.3g", which, (int) mode,
                  worst, mag);
  /* prefix reuse and full recomputes agree under last_only too */
  if (which == 0)
    {
      ScHeadSweepResult *rr = NULL;
      p.full_recompute = true;
      g_assert_cmpint (sc_head_sweep_run (f.s, m, ids, n, &p, NULL, NULL, &rr, &err), ==,
                       SC_OK);
      for (i = 0; i < f.L * f.H; i++)
        {
          assert_same_double (rr->heads[i].next.delta_logp, rf->heads[i].next.delta_logp);
          assert_same_double (rr->heads[i].next.jsd, rf->heads[i].next.jsd);
          assert_same_double (rr->heads[i].delta_logit_diff, rf->heads[i].delta_logit_diff);
        }
      sc_head_sweep_result_free (rr);
    }
  sc_head_sweep_result_free (ra);
  sc_head_sweep_result_free (rf);
  fixture_clear (&f);
  fixture_clear (&g);
  sc_model_free (m);
}

static void
test_sweep_tiny (void)
{
  sweep_case (0, SC_ABLATE_ZERO);
  sweep_case (0, SC_ABLATE_MEAN);
}

static void
test_sweep_smollm2 (void)
{
  sweep_case (1, SC_ABLATE_ZERO);
}

/* 4. */
static void
stacked_case (int which)
{
  ScModel *m = open_model (which);
  Fixture f, g;
  ScError err = { 0 };
  ScAblationParams p = { .target = -1, .contrast = -1, .mode = SC_ABLATE_ZERO,
                         .last_only = true };
  ScHeadSweepResult *ra = NULL, *rs = NULL, *ro = NULL;
  ScForwardOptions all = { .all_logits = true }, fast = { .last_row = true };
  g_autofree float *clean = NULL, *za = NULL, *zf = NULL, *zs = NULL, *scale = NULL;
  g_autofree int *heads = NULL;
  g_autofree bool *only = NULL;
  ScIntervention iv = { 0 };
  const int32_t *ids;
  double worst_fast = 0.0, worst_all = 0.0, mag = 0.0;
  int n, i, l, h;

  if (m == NULL)
    return;
  ids = sweep_setup (m, which, &f, &g, &n, &clean, &za, &zf);
  zs = g_new (float, (gsize) f.H * f.V);
  scale = g_new (float, f.L * f.H);
  heads = g_new (int, f.H);
  only = g_new0 (bool, f.L * f.H);
  for (i = 0; i < f.L * f.H; i++)
    scale[i] = 1.0f;
  for (h = 0; h < f.H; h++)
    heads[h] = h;
  iv.head_scale = scale;
  all.intervention = fast.intervention = &iv;
  all.keep_residuals = true;
  g_assert_cmpint (sc_forward (g.s, ids, n, &all, clean, &err), ==, SC_OK);
  all.keep_residuals = false;
  p.contrast = (sc_logits_top1 (clean + (size_t) (n - 1) * f.V, f.V) + 1) % f.V;

  /* the refusals */
  p.stack_layers = true;
  p.last_only = false;
  g_assert_cmpint (sc_head_sweep_run (f.s, m, ids, n, &p, NULL, NULL, &rs, &err), ==,
                   SC_ERR_INVALID_ARG);
  p.last_only = true;
  p.full_recompute = true;
  g_assert_cmpint (sc_head_sweep_run (f.s, m, ids, n, &p, NULL, NULL, &rs, &err), ==,
                   SC_ERR_INVALID_ARG);
  p.full_recompute = false;
  p.mode = SC_ABLATE_MEAN;
  g_assert_cmpint (sc_head_sweep_run (f.s, m, ids, n, &p, NULL, NULL, &rs, &err), ==,
                   SC_ERR_INVALID_ARG);
  p.mode = SC_ABLATE_ZERO;

  /* the sweeps: all positions (the reference), stacked, and stacked over a subset */
  p.stack_layers = p.last_only = false;
  g_assert_cmpint (sc_head_sweep_run (f.s, m, ids, n, &p, NULL, NULL, &ra, &err), ==, SC_OK);
  p.stack_layers = p.last_only = true;
  g_assert_cmpint (sc_head_sweep_run (f.s, m, ids, n, &p, NULL, NULL, &rs, &err), ==, SC_OK);
  for (i = 0; i < f.L * f.H; i += 3) /* every third head: groups of any size in a layer */
    only[i] = true;
  g_assert_cmpint (sc_head_sweep_run_heads (f.s, m, ids, n, &p, only, NULL, NULL, &ro, &err),
                   ==, SC_OK);
  assert_same_double (rs->logp_clean, ra->logp_clean);
  assert_same_double (rs->logit_diff_clean, ra->logit_diff_clean);

  for (l = 0; l < f.L; l++)
    {
      /* the layer's runs stacked, here in the other session (it kept the clean residuals) */
      g_assert_cmpint (sc_forward_zero_heads (g.s, ids, n, l, heads, f.H, zs, &err), ==, SC_OK);
      for (h = 0; h < f.H; h++)
        {
          const int i2 = l * f.H + h;
          const float *row = zs + (size_t) h * f.V;
          const ScAblationEffect *a = &ra->heads[i2], *e = &rs->heads[i2];
          ScAblationEffect x = { 0 };
          double d_fast, d_all, mg, grow;

          scale[i2] = 0.0f;
          all.start_layer = fast.start_layer = l;
          g_assert_cmpint (sc_forward (g.s, ids, n, &all, za, &err), ==, SC_OK);
          g_assert_cmpint (sc_forward (g.s, ids, n, &fast, zf, &err), ==, SC_OK);
          scale[i2] = 1.0f;
          d_fast = max_diff (row, zf, f.V, &mg);
          assert_delta_small (d_fast, mg);
          d_all = max_diff (row, za + (size_t) (n - 1) * f.V, f.V, &mg);
          assert_delta_small (d_all, mg);
          worst_fast = MAX (worst_fast, d_fast);
          worst_all = MAX (worst_all, d_all);
          mag = MAX (mag, mg);

          /* the sweep's numbers are those of the stacked logits, bit for bit */
          g_assert_cmpint (sc_effect_next_token (clean + (size_t) (n - 1) * f.V, row, f.V,
                                                 rs->target, &x.next, &err), ==, SC_OK);
          assert_same_double (e->next.delta_logp, x.next.delta_logp);
          assert_same_double (e->next.tv, x.next.tv);
          assert_same_double (e->next.jsd, x.next.jsd);
          g_assert_cmpint (e->next.top1_ablated, ==, x.next.top1_ablated);
          g_assert_true (isnan (e->delta_loss));
          /* and within the bounds of the all-position sweep's */
          grow = expm1 (2.0 * d_all);
          g_assert_cmpfloat (fabs (e->next.delta_logp - a->next.delta_logp), <=,
                             2 * d_all + 1e-10);
          g_assert_cmpfloat (fabs (e->delta_logit_diff - a->delta_logit_diff), <=,
                             2 * d_all + 1e-10);
          g_assert_cmpfloat (fabs (e->next.tv - a->next.tv), <=, grow / 2 + 1e-10);
          g_assert_cmpfloat (fabs (e->next.jsd - a->next.jsd), <=, 2 * grow + 1e-10);
          /* the subset: the heads asked for, each as in a group of its own layer's */
          if (only[i2])
            {
              g_assert_cmpfloat (fabs (ro->heads[i2].next.delta_logp - e->next.delta_logp), <=,
                                 4 * d_all + 1e-10);
              g_assert_true (isfinite (ro->heads[i2].next.delta_logp));
            }
          else
            g_assert_true (isnan (ro->heads[i2].next.delta_logp));
        }
    }
  g_test_message ("model %d stacked: largest delta %.3g against one at a time, %.3g against "
                  "all positions, largest |z| %.3g", which, worst_fast, worst_all, mag);
  sc_head_sweep_result_free (ra);
  sc_head_sweep_result_free (rs);
  sc_head_sweep_result_free (ro);
  fixture_clear (&f);
  fixture_clear (&g);
  sc_model_free (m);
}

static void
test_stacked_tiny (void)
{
  stacked_case (0);
}

static void
test_stacked_smollm2 (void)
{
  stacked_case (1);
}

/* An architecture whose layer does not stack sequences says so; the sweep refuses. */
static void
test_stacked_gemma3 (void)
{
  ScModel *m = open_model (2);
  Fixture f;
  ScError err = { 0 };
  ScForwardOptions keep = { .keep_residuals = true };
  ScAblationParams p = { .target = -1, .contrast = -1, .last_only = true,
                         .stack_layers = true };
  ScHeadSweepResult *r = NULL;
  const int32_t *ids;
  const int heads[] = { 0 };
  g_autofree float *z = NULL;
  int n;

  if (m == NULL)
    return;
  fixture_init (&f, m);
  ids = model_ids (2, &n);
  z = g_new (float, f.V);
  g_assert_cmpint (sc_forward (f.s, ids, n, &keep, z, &err), ==, SC_OK);
  g_assert_cmpint (sc_forward_zero_heads (f.s, ids, n, 1, heads, 1, z, &err), ==,
                   SC_ERR_UNSUPPORTED);
  g_assert_nonnull (strstr (err.message, "gemma3"));
  g_assert_cmpint (sc_head_sweep_run (f.s, m, ids, n, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_UNSUPPORTED);
  g_assert_null (r);
  fixture_clear (&f);
  sc_model_free (m);
}

/* 3. */
static void
test_params_store (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-ablation-last-XXXXXX", NULL);
  g_autofree char *model_path = g_build_filename (dir, "tiny.gguf", NULL);
  g_autofree char *db_path = g_build_filename (dir, "s.sqlite", NULL);
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreModel sm;
  ScModel *m = NULL;
  Fixture f;
  ScAblationParams p = { .target = -1, .contrast = -1 };
  ScHeadSweepResult *r = NULL, *back = NULL;
  ScError err = { 0 };
  char pj[160], pa[160];
  gsize len;
  const void *d;
  const int n = (int) G_N_ELEMENTS (tiny_ids);

  /* the texts */
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_HEADS, 5, &p, pa, sizeof pa), >,
                   0);
  g_assert_cmpstr (pa, ==, "{\"study\":1,\"run\":5,\"target\":null,\"mode\":\"zero\"}");
  p.last_only = true;
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_HEADS, 5, &p, pj, sizeof pj), >,
                   0);
  g_assert_cmpstr (pj, ==, "{\"study\":1,\"run\":5,\"target\":null,\"mode\":\"zero\","
                           "\"measures\":\"last\"}");
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_TOKENS, 5, &p, pj, sizeof pj), >,
                   0);
  g_assert_cmpstr (pj, ==, "{\"study\":1,\"run\":5,\"target\":null,\"mode\":\"zero\"}");
  p.mode = SC_ABLATE_MEAN;
  p.mean_set = "ref";
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_HEADS, 5, &p, pj, sizeof pj), >,
                   0);
  g_assert_cmpstr (pj, ==, "{\"study\":1,\"run\":5,\"target\":null,\"mode\":\"mean\","
                           "\"means\":\"ref\",\"measures\":\"last\"}");
  p.last_only = false;
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_HEADS, 5, &p, pj, sizeof pj), >,
                   0);
  g_assert_cmpstr (pj, ==, "{\"study\":1,\"run\":5,\"target\":null,\"mode\":\"mean\","
                           "\"means\":\"ref\"}");
  p = (ScAblationParams) { .target = -1, .contrast = -1, .last_only = true,
                           .stack_layers = true };
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_HEADS, 5, &p, pj, sizeof pj), >,
                   0);
  g_assert_cmpstr (pj, ==, "{\"study\":1,\"run\":5,\"target\":null,\"mode\":\"zero\","
                           "\"measures\":\"last\",\"stacked\":true}");

  /* stored and read back */
  p = (ScAblationParams) { .target = -1, .contrast = -1, .last_only = true };
  d = g_bytes_get_data (sc_test_tiny_bytes (), &len);
  g_assert_true (g_file_set_contents (model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (model_path, 1, &m, &err), ==, SC_OK);
  fixture_init (&f, m);
  g_assert_cmpint (sc_store_model_identify (m, model_path, &sm, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_head_sweep_run (f.s, m, tiny_ids, n, &p, NULL, NULL, &r, &err), ==, SC_OK);
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_HEADS, 5, &p, pj, sizeof pj), >,
                   0);
  g_assert_cmpint (sc_head_sweep_store (store, &sm, pj, r, NULL, &err), ==, SC_OK);
  g_assert_cmpint (sc_head_sweep_load (store, f.in, sm.sha256, pa, &back, NULL, &err), ==,
                   SC_ERR_NOT_FOUND);
  g_assert_cmpint (sc_head_sweep_load (store, f.in, sm.sha256, pj, &back, NULL, &err), ==,
                   SC_OK);
  for (int i = 0; i < f.L * f.H; i++)
    {
      assert_same_double (back->heads[i].next.delta_logp, r->heads[i].next.delta_logp);
      assert_same_double (back->heads[i].next.tv, r->heads[i].next.tv);
      assert_same_double (back->heads[i].next.jsd, r->heads[i].next.jsd);
      g_assert_true (isnan (back->heads[i].delta_loss));
      g_assert_cmpint (back->heads[i].next.top1_ablated, ==, r->heads[i].next.top1_ablated);
    }
  sc_store_close (store);
  sc_head_sweep_result_free (r);
  sc_head_sweep_result_free (back);
  fixture_clear (&f);
  sc_model_free (m);
  g_remove (db_path);
  g_remove (model_path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ablation-last/forward-tiny", test_forward_tiny);
  g_test_add_func ("/ablation-last/forward-smollm2", test_forward_smollm2);
  g_test_add_func ("/ablation-last/forward-gemma3", test_forward_gemma3);
  g_test_add_func ("/ablation-last/forward-qwen2", test_forward_qwen2);
  g_test_add_func ("/ablation-last/sweep-tiny", test_sweep_tiny);
  g_test_add_func ("/ablation-last/sweep-smollm2", test_sweep_smollm2);
  g_test_add_func ("/ablation-last/params-store", test_params_store);
  g_test_add_func ("/ablation-last/stacked-tiny", test_stacked_tiny);
  g_test_add_func ("/ablation-last/stacked-smollm2", test_stacked_smollm2);
  g_test_add_func ("/ablation-last/stacked-gemma3", test_stacked_gemma3);
  rc = g_test_run ();
  if (rc == 0 && skipped != NULL)
    {
      g_printerr ("skipped: %s\n", skipped);
      rc = 77;
    }
  g_free (skipped);
  return rc;
}
