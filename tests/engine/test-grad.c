/* test-grad.c — the whole backward pass (forward/sc-backward.h) on SmolLM2 (skipped when
 * the model is not fetched), checked against things it does not compute itself:
 *   1. directional finite differences of the forward: for random directions u in the input
 *      embeddings, (f(x + h u) - f(x - h u)) / 2h against <grad, u>; and in one head's
 *      probabilities (set through an SC_ATTN_EDIT_REPLACE edit), against <dP, D>;
 *   2. the same backward on "cpu-ref" (scalar double loops) against "cpu";
 *   3. recomputing layers (a tape of one slot) gives the bit-identical gradient;
 *   4. the objective's value against sc_forward()'s logits (log p and the mean loss);
 *   5. refused inputs name what was wrong.
 * PyTorch autograd is the oracle in test-grad-reference.c.
 *
 * Tolerances: the forward runs in float, so a central difference with h = 1e-2 (relative
 * to |u| = |x|) has a truncation error O(h^2 f''') and a rounding error ~ 1e-6 |f| / h;
 * both stay under 1 % of |<grad, u>| for these directions (measured: under 0.2 %), so 3 %
 * is the bound (a sign or factor error in any op is far outside it).
 */
#include <glib.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-backward.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"

static const int32_t IDS[] = { 504, 2644, 45360, 260, 4405, 975, 357, 436, 12364, 30 };
enum { N = G_N_ELEMENTS (IDS) };

static ScModel *model;

static char *
model_path (void)
{
  const char *env = g_getenv ("SACCADE_MODEL");
  return env != NULL ? g_strdup (env)
                     : g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"), "data", "models",
                                         "SmolLM2-135M-Instruct.Q4_1.gguf", NULL);
}

static gboolean
need_model (void)
{
  if (model == NULL)
    g_test_skip ("the default model is not fetched (data/fetch-model.sh)");
  return model != NULL;
}

typedef struct {
  ScBackend *b;
  ScSession *s;
  ScGrad *g;
  int E, V;
} Fx;

static void
fx_init (Fx *f, bool reference)
{
  ScError err = { 0 };

  f->b = reference ? sc_backend_cpu_ref_new () : sc_backend_cpu_new (2, &err);
  g_assert_nonnull (f->b);
  if (sc_session_new (model, f->b, &f->s, &err) != SC_OK || sc_grad_new (f->s, &f->g, &err) != SC_OK)
    g_error ("%s", err.message);
  f->E = (int) sc_model_info (model)->n_embd;
  f->V = (int) sc_model_info (model)->n_vocab;
}

static void
fx_clear (Fx *f)
{
  sc_grad_free (f->g);
  sc_session_free (f->s);
  sc_backend_free (f->b);
}

/* The clean top-1 after the last token. */
static int32_t
top1 (Fx *f)
{
  g_autofree float *z = g_new (float, f->V);
  ScError err = { 0 };
  int v, best = 0;

  g_assert_cmpint (sc_forward (f->s, IDS, N, NULL, z, &err), ==, SC_OK);
  for (v = 1; v < f->V; v++)
    if (z[v] > z[best])
      best = v;
  return best;
}

/* log p(target) at the last row for the input embeddings @x (N, E), by the plain forward. */
static double
logp_at (Fx *f, const float *x, int32_t target, const ScIntervention *iv)
{
  g_autofree float *z = g_new (float, f->V);
  ScGradOptions o = { .input_embd = x, .intervention = iv };
  ScError err = { 0 };
  double mx = -INFINITY, sum = 0.0;
  int v;

  g_assert_cmpint (sc_grad_forward (f->g, IDS, N, &o, &err), ==, SC_OK);
  g_assert_cmpint (sc_grad_logits (f->g, N - 1, z, &err), ==, SC_OK);
  for (v = 0; v < f->V; v++)
    mx = fmax (mx, z[v]);
  for (v = 0; v < f->V; v++)
    sum += exp (z[v] - mx);
  return z[target] - mx - log (sum);
}

static float *
embeddings (Fx *f)
{
  const float *table = sc_model_weights (model)->token_embd;
  float *x = g_new (float, (size_t) N * f->E);
  int i;

  for (i = 0; i < N; i++)
    memcpy (x + (size_t) i * f->E, table + (size_t) IDS[i] * f->E, f->E * sizeof (float));
  return x;
}

/* 1a. input embeddings */
static void
test_directional_embd (void)
{
  Fx f;
  ScError err = { 0 };
  g_autofree float *x = NULL, *grad = NULL, *xp = NULL;
  ScObjective obj = { SC_OBJECTIVE_LOGP, -1, 0, NULL };
  GRand *rng = g_rand_new_with_seed (20261202);
  double value, xnorm = 0.0;
  int t, i;

  if (!need_model ())
    return;
  fx_init (&f, false);
  obj.target = top1 (&f);
  x = embeddings (&f);
  grad = g_new (float, (size_t) N * f.E);
  xp = g_new (float, (size_t) N * f.E);
  g_assert_cmpint (sc_grad_forward (f.g, IDS, N, NULL, &err), ==, SC_OK);
  g_assert_cmpint (sc_grad_backward (f.g, &obj, NULL, NULL, &value, grad, &err), ==, SC_OK);
  g_assert_cmpfloat (fabs (value - logp_at (&f, x, obj.target, NULL)), <, 1e-6);
  for (i = 0; i < N * f.E; i++)
    xnorm += (double) x[i] * x[i];
  xnorm = sqrt (xnorm);
  for (t = 0; t < 4; t++)
    {
      g_autofree double *u = g_new (double, (size_t) N * f.E);
      double unorm = 0.0, dot = 0.0, up, down, fd, h;
      /* directions: random over every token, then concentrated on one token (t - 1) */
      for (i = 0; i < N * f.E; i++)
        {
          const int tok = i / f.E;
          u[i] = (t == 0 || tok == t * 3 - 1) ? g_rand_double_range (rng, -1, 1) : 0.0;
          unorm += u[i] * u[i];
        }
      unorm = sqrt (unorm);
      h = 1e-2 * xnorm / sqrt ((double) N) / unorm;
      for (i = 0; i < N * f.E; i++)
        dot += grad[i] * u[i];
      for (i = 0; i < N * f.E; i++)
        xp[i] = (float) (x[i] + h * u[i]);
      up = logp_at (&f, xp, obj.target, NULL);
      for (i = 0; i < N * f.E; i++)
        xp[i] = (float) (x[i] - h * u[i]);
      down = logp_at (&f, xp, obj.target, NULL);
      fd = (up - down) / (2 * h);
      g_test_message ("direction %d: <grad, u> = %.6g, finite difference %.6g", t, dot, fd);
      g_assert_cmpfloat (fabs (fd - dot), <=, 0.03 * fabs (dot) + 1e-4);
    }
  g_rand_free (rng);
  fx_clear (&f);
}

/* 1b. one head's probabilities: f(P + h D) through a REPLACE edit (P itself replaced by
 * P gives the same output) against <dP, D>. */
typedef struct {
  int layer, head;
  float *P, *dP;
} HeadGrab;

static bool
grab (void *user, int layer, int head, const float *probs, const float *dprobs, int n)
{
  HeadGrab *g = user;
  if (layer == g->layer && head == g->head)
    {
      memcpy (g->P, probs, (size_t) n * n * sizeof (float));
      memcpy (g->dP, dprobs, (size_t) n * n * sizeof (float));
    }
  return true;
}

static void
test_directional_probs (void)
{
  static const int heads[][2] = { { 3, 2 }, { 14, 5 }, { 29, 8 } };
  Fx f;
  ScError err = { 0 };
  ScObjective obj = { SC_OBJECTIVE_LOGP, -1, 0, NULL };
  g_autofree float *x = NULL, *Pp = g_new (float, N * N);
  HeadGrab hg = { 0, 0, g_new (float, N * N), g_new (float, N * N) };
  GRand *rng = g_rand_new_with_seed (7);
  size_t t;
  int i, j;

  if (!need_model ())
    return;
  fx_init (&f, false);
  obj.target = top1 (&f);
  x = embeddings (&f);
  for (t = 0; t < G_N_ELEMENTS (heads); t++)
    {
      ScAttnEdit edit = { heads[t][0], heads[t][1], SC_ATTN_EDIT_REPLACE, 0, Pp };
      ScIntervention iv = { .edits = &edit, .n_edits = 1 };
      double D[N * N], dot = 0.0, up, down, fd, h = 1e-2, same;
      hg.layer = heads[t][0];
      hg.head = heads[t][1];
      g_assert_cmpint (sc_grad_forward (f.g, IDS, N, NULL, &err), ==, SC_OK);
      g_assert_cmpint (sc_grad_backward (f.g, &obj, grab, &hg, NULL, NULL, &err), ==, SC_OK);
      for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
          {
            D[i * N + j] = j <= i ? g_rand_double_range (rng, -1, 1) : 0.0;
            dot += hg.dP[i * N + j] * D[i * N + j];
            /* masked cells get no gradient */
            if (j > i)
              g_assert_cmpfloat (hg.dP[i * N + j], ==, 0.0f);
          }
      memcpy (Pp, hg.P, sizeof (float) * N * N);
      same = logp_at (&f, x, obj.target, &iv);
      g_assert_cmpfloat (fabs (same - logp_at (&f, x, obj.target, NULL)), <, 1e-6);
      for (i = 0; i < N * N; i++)
        Pp[i] = (float) (hg.P[i] + h * D[i]);
      up = logp_at (&f, x, obj.target, &iv);
      for (i = 0; i < N * N; i++)
        Pp[i] = (float) (hg.P[i] - h * D[i]);
      down = logp_at (&f, x, obj.target, &iv);
      fd = (up - down) / (2 * h);
      g_test_message ("layer %d head %d: <dP, D> = %.6g, finite difference %.6g", hg.layer,
                      hg.head, dot, fd);
      g_assert_cmpfloat (fabs (fd - dot), <=, 0.03 * fabs (dot) + 1e-4);
    }
  g_free (hg.P);
  g_free (hg.dP);
  g_rand_free (rng);
  fx_clear (&f);
}

/* 2 and 3. */
static void
run_backward (Fx *f, size_t tape_max, ScObjectiveKind kind, int32_t target, float *grad,
              double *value)
{
  ScGradOptions o = { .tape_max_bytes = tape_max };
  ScObjective obj = { kind, -1, target, NULL };
  ScError err = { 0 };

  g_assert_cmpint (sc_grad_forward (f->g, IDS, N, &o, &err), ==, SC_OK);
  g_assert_cmpint (sc_grad_backward (f->g, &obj, NULL, NULL, value, grad, &err), ==, SC_OK);
}

static void
test_cpu_vs_ref (void)
{
  Fx f, r;
  g_autofree float *a = NULL, *b = NULL;
  double va, vb, worst = 0.0, scale = 0.0;
  int i;

  if (!need_model ())
    return;
  fx_init (&f, false);
  fx_init (&r, true);
  a = g_new (float, (size_t) N * f.E);
  b = g_new (float, (size_t) N * f.E);
  run_backward (&f, 0, SC_OBJECTIVE_LOSS, 0, a, &va);
  run_backward (&r, 0, SC_OBJECTIVE_LOSS, 0, b, &vb);
  for (i = 0; i < N * f.E; i++)
    {
      worst = fmax (worst, fabs (a[i] - b[i]));
      scale = fmax (scale, fabs (b[i]));
    }
  g_test_message ("loss %.9g vs %.9g; max |cpu - cpu-ref| %.3g of max |grad| %.3g", va, vb,
                  worst, scale);
  g_assert_cmpfloat (fabs (va - vb), <=, 1e-4 * fabs (vb));
  g_assert_cmpfloat (worst, <=, 2e-3 * scale);
  fx_clear (&r);
  fx_clear (&f);
}

static void
test_recompute_identical (void)
{
  Fx f;
  g_autofree float *a = NULL, *b = NULL;
  double va, vb;

  if (!need_model ())
    return;
  fx_init (&f, false);
  a = g_new (float, (size_t) N * f.E);
  b = g_new (float, (size_t) N * f.E);
  run_backward (&f, 0, SC_OBJECTIVE_LOSS, 0, a, &va);
  g_assert_false (sc_grad_stats (f.g).recomputed);
  run_backward (&f, 1, SC_OBJECTIVE_LOSS, 0, b, &vb);
  g_assert_true (sc_grad_stats (f.g).recomputed);
  g_assert_cmpfloat (va, ==, vb);
  g_assert_cmpmem (a, sizeof (float) * N * f.E, b, sizeof (float) * N * f.E);
  fx_clear (&f);
}

/* 4. the loss against sc_forward's logits */
static void
test_loss_value (void)
{
  Fx f;
  g_autofree float *z = NULL;
  ScForwardOptions fo = { .all_logits = TRUE };
  ScError err = { 0 };
  double value, want = 0.0;
  int i, v;

  if (!need_model ())
    return;
  fx_init (&f, false);
  z = g_new (float, (size_t) N * f.V);
  g_assert_cmpint (sc_forward (f.s, IDS, N, &fo, z, &err), ==, SC_OK);
  for (i = 0; i < N - 1; i++)
    {
      const float *zi = z + (size_t) i * f.V;
      double mx = -INFINITY, sum = 0.0;
      for (v = 0; v < f.V; v++)
        mx = fmax (mx, zi[v]);
      for (v = 0; v < f.V; v++)
        sum += exp (zi[v] - mx);
      want -= (zi[IDS[i + 1]] - mx - log (sum)) / (N - 1);
    }
  run_backward (&f, 0, SC_OBJECTIVE_LOSS, 0, NULL, &value);
  g_assert_cmpfloat (fabs (value - want), <=, 1e-6 * want);
  fx_clear (&f);
}

/* 5. */
static void
test_refused (void)
{
  Fx f;
  ScError err = { 0 };
  ScObjective obj = { SC_OBJECTIVE_LOGP, N, 5, NULL };
  uint8_t *mean_on;
  float *mean;
  ScIntervention iv = { 0 };
  ScAttnEdit edit = { 1, 1, SC_ATTN_EDIT_PERMUTE, 3, NULL };
  const ScModelInfo *in;

  if (!need_model ())
    return;
  fx_init (&f, false);
  in = sc_model_info (model);
  g_assert_cmpint (sc_grad_backward (f.g, &obj, NULL, NULL, NULL, NULL, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "no forward"));
  g_assert_cmpint (sc_grad_forward (f.g, IDS, N, NULL, &err), ==, SC_OK);
  g_assert_cmpint (sc_grad_backward (f.g, &obj, NULL, NULL, NULL, NULL, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "position 10"));
  obj = (ScObjective) { SC_OBJECTIVE_LOGP, -1, 49152, NULL };
  g_assert_cmpint (sc_grad_backward (f.g, &obj, NULL, NULL, NULL, NULL, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "target 49152"));
  g_assert_cmpint (sc_grad_forward (f.g, IDS, 1, NULL, &err), ==, SC_OK);
  obj.kind = SC_OBJECTIVE_LOSS;
  g_assert_cmpint (sc_grad_backward (f.g, &obj, NULL, NULL, NULL, NULL, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "at least 2 tokens"));
  mean_on = g_new0 (uint8_t, in->n_layers * in->n_heads);
  mean = g_new0 (float, (size_t) in->n_layers * in->n_heads * in->head_dim);
  mean_on[7] = 1;
  iv.head_mean = mean;
  iv.head_mean_on = mean_on;
  {
    ScGradOptions o = { .intervention = &iv };
    g_assert_cmpint (sc_grad_forward (f.g, IDS, N, &o, &err), ==, SC_ERR_INVALID_ARG);
    g_assert_nonnull (strstr (err.message, "mean-ablation"));
    iv = (ScIntervention) { .edits = &edit, .n_edits = 1 };
    g_assert_cmpint (sc_grad_forward (f.g, IDS, N, &o, &err), ==, SC_ERR_INVALID_ARG);
    g_assert_nonnull (strstr (err.message, "REPLACE"));
    /* a head's queries, keys or values patched: no backward either */
    {
      g_autofree float *qkv = g_new0 (float, (size_t) in->n_layers * in->n_heads * N
                                                 * in->head_dim);
      for (int f3 = 0; f3 < 3; f3++)
        {
          iv = (ScIntervention) { .patch_tokens = N };
          if (f3 == 0)
            iv.q_patch = qkv, iv.q_patch_on = mean_on;
          else if (f3 == 1)
            iv.k_patch = qkv, iv.k_patch_on = mean_on;
          else
            iv.v_patch = qkv, iv.v_patch_on = mean_on;
          g_assert_cmpint (sc_grad_forward (f.g, IDS, N, &o, &err), ==, SC_ERR_INVALID_ARG);
          g_assert_nonnull (strstr (err.message, "activation patching has no backward"));
        }
    }
  }
  g_assert_cmpint (sc_grad_forward (f.g, IDS, 0, NULL, &err), ==, SC_ERR_INVALID_ARG);
  g_free (mean_on);
  g_free (mean);
  fx_clear (&f);
}

int
main (int argc, char **argv)
{
  g_autofree char *path = NULL;
  ScError err = { 0 };
  int rc;

  g_test_init (&argc, &argv, NULL);
  path = model_path ();
  if (g_file_test (path, G_FILE_TEST_EXISTS) && sc_model_open (path, 2, &model, &err) != SC_OK)
    g_error ("%s", err.message);
  g_test_add_func ("/grad/directional-embeddings", test_directional_embd);
  g_test_add_func ("/grad/directional-probs", test_directional_probs);
  g_test_add_func ("/grad/cpu-vs-cpu-ref", test_cpu_vs_ref);
  g_test_add_func ("/grad/recompute-identical", test_recompute_identical);
  g_test_add_func ("/grad/loss-value", test_loss_value);
  g_test_add_func ("/grad/refused", test_refused);
  rc = g_test_run ();
  sc_model_free (model);
  return rc;
}
