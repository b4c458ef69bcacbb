/* test-attribution.c — gradient attributions (study/sc-attribution.h) on SmolLM2 (skipped
 * when the model is not fetched):
 *   1. integrated gradients' completeness bookkeeping at the default 50 adaptive points on
 *      two sentences (the Chinese seed, one with digits): the attributions sum to the
 *      reported sum, the gap is |sum - (f(x) - f(x'))| (docs/gradients.md: on SmolLM2 the
 *      gap at 50 points is large, 34-100 %, and is reported, not bounded); and the adaptive
 *      rule converging on the English sentence (under 5 % at 200 points, less than at 40);
 *      zero embeddings refused where the gradient overflows;
 *   2. the definitions, recomputed here from the backward's raw outputs: saliency is the
 *      norm of the embedding gradient, gradient × input its dot with the embedding, and
 *      gradient-weighted rollout the row of the full matrix product prod_l (I + Ā_l),
 *      computed here layer by layer from every head's P and dP;
 *   3. a token baseline and a named target are honoured;
 *   4. the study through the store: stored, found by its params, read back equal; a
 *      database edited by someone else (a negative saliency, a target outside the
 *      vocabulary) is refused naming the value; bad parameters are refused naming them;
 *   5. a contrast B (f = logit(A) − logit(B), Yin & Neubig 2022): f is ln p(A) − ln p(B) of
 *      two single-target studies, and saliency's gradient, gradient × input and integrated
 *      gradients on the fixed midpoint rule (its nodes do not depend on f) are the
 *      differences of theirs — the gradient is linear in the objective; the study round-
 *      trips through the store with its contrast (a positive f is valid there); a
 *      contrast equal to the target (named, or the clean top-1) is refused.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <string.h>

#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-backward.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store.h"
#include "engine/study/sc-attribution.h"

static const int32_t CAT[] = { 504, 2644, 45360, 260, 4405, 975, 357, 436, 12364, 30 };
static const int32_t SEED_ZH[] = { 178, 230, 121, 18276, 138, 41671, 221, 12831, 18310, 221,
                                   178, 129, 124, 46025, 19076 };
static const int32_t DIGITS[] = { 788, 216, 33, 41, 38, 41, 28, 27639, 24955, 2163,
                                  260, 808, 1055, 288, 4549, 335, 260, 8872, 30 };
static const int32_t FOX[] = { 504, 2365, 6354, 16438, 27003, 690, 260, 23790, 2767, 28,
                               284, 965, 357, 7313, 2025, 30 };

static ScModel *model;
static char *model_file;
static ScBackend *backend;
static ScSession *session;
static ScGrad *grad;

static gboolean
need_model (void)
{
  if (model == NULL)
    g_test_skip ("the default model is not fetched (data/fetch-model.sh)");
  return model != NULL;
}

static ScAttrResult *
attribute (const int32_t *ids, int n, const ScAttrParams *p)
{
  ScAttrResult *r = NULL;
  ScError err = { 0 };

  if (sc_attr_run (grad, model, ids, n, p, NULL, NULL, &r, &err) != SC_OK)
    g_error ("%s", err.message);
  return r;
}

/* 1. */
static void
test_ig_completeness (void)
{
  static const struct {
    const char *name;
    const int32_t *ids;
    int n;
  } s[] = { { "chinese", SEED_ZH, G_N_ELEMENTS (SEED_ZH) },
            { "digits", DIGITS, G_N_ELEMENTS (DIGITS) } };
  /* the default: adaptive, 50 points, the end-of-text token (2) as the baseline */
  ScAttrParams p = { .methods = 1u << SC_ATTR_IG, .target = -1, .contrast = -1, .position = -1,
                     .baseline = SC_ATTR_BASELINE_TOKEN, .baseline_token = 2 };
  ScAttrResult *coarse, *fine;
  size_t i;

  if (!need_model ())
    return;
  for (i = 0; i < G_N_ELEMENTS (s); i++)
    {
      ScAttrResult *r = attribute (s[i].ids, s[i].n, &p);
      double sum = 0.0;
      g_assert_cmpint (r->steps, ==, SC_ATTR_DEFAULT_STEPS);
      for (int j = 0; j < r->n_tokens; j++)
        sum += r->scores[SC_ATTR_IG][j];
      g_assert_cmpfloat (fabs (sum - r->ig_sum), <=, 1e-9 * (1 + fabs (sum)));
      g_assert_cmpfloat (fabs (r->ig_gap - fabs (sum - (r->value - r->f_baseline))), <=, 1e-9);
      g_assert_cmpfloat (fabs (r->ig_gap_rel * fabs (r->value - r->f_baseline) - r->ig_gap), <=,
                         1e-9);
      /* docs/gradients.md: SmolLM2's path has narrow spikes; the gap at 50 points is
       * reported, not bounded here (the 1 % is not met, measured there) */
      g_test_message ("%s: f(x) %.5f f(x') %.5f sum %.5f gap %.3g (%.1f %%)", s[i].name,
                      r->value, r->f_baseline, r->ig_sum, r->ig_gap, 100 * r->ig_gap_rel);
      sc_attr_result_free (r);
    }
  /* the adaptive rule converges on the English sentence: 200 points leave under 5 % of the
   * difference (measured 2.6 %) and less than 40 points do */
  p.steps = 40;
  coarse = attribute (CAT, G_N_ELEMENTS (CAT), &p);
  p.steps = 200;
  fine = attribute (CAT, G_N_ELEMENTS (CAT), &p);
  g_test_message ("adaptive: gap %.3g at 40 points, %.3g at 200", coarse->ig_gap, fine->ig_gap);
  g_assert_cmpfloat (fine->ig_gap, <, coarse->ig_gap);
  g_assert_cmpfloat (fine->ig_gap_rel, <, 0.05);
  sc_attr_result_free (coarse);
  sc_attr_result_free (fine);
}

/* Zero embeddings: the gradient overflows (every RMSNorm multiplies it by up to
 * 1/sqrt(eps) near zero), which is said, not returned as NaN. */
static void
test_ig_zero_baseline (void)
{
  ScAttrParams p = { .methods = 1u << SC_ATTR_IG, .target = -1, .contrast = -1, .position = -1,
                     .steps = 4, .baseline = SC_ATTR_BASELINE_ZERO };
  ScAttrResult *r = NULL;
  ScError err = { 0 };

  if (!need_model ())
    return;
  /* the adaptive rule evaluates the path's start itself, alpha = 0 */
  g_assert_cmpint (sc_attr_run (grad, model, CAT, G_N_ELEMENTS (CAT), &p, NULL, NULL, &r, &err),
                   ==, SC_ERR_RANGE);
  g_assert_nonnull (strstr (err.message, "overflows at alpha = 0"));
  g_assert_null (r);
  /* the fixed rules' first node is away from 0: a finite result or the same refusal */
  for (int rule = SC_ATTR_RULE_GAUSS_LEGENDRE; rule < SC_ATTR_N_RULES; rule++)
    {
      ScStatus st;
      p.rule = (ScAttrRule) rule;
      st = sc_attr_run (grad, model, CAT, G_N_ELEMENTS (CAT), &p, NULL, NULL, &r, &err);
      g_assert_true (st == SC_OK || st == SC_ERR_RANGE);
      if (st == SC_OK)
        g_assert_true (isfinite (r->ig_sum));
      g_clear_pointer (&r, sc_attr_result_free);
    }
}

/* 2. every head's P and dP, kept for the test's own rollout */
typedef struct {
  int n, L, H;
  double *P, *dP; /* (L, H, n, n) */
} Kept;

static bool
keep (void *user, int layer, int head, const float *P, const float *dP, int n)
{
  Kept *k = user;
  const size_t at = ((size_t) layer * k->H + head) * n * n;
  for (int i = 0; i < n * n; i++)
    {
      k->P[at + i] = P[i];
      k->dP[at + i] = dP[i];
    }
  return true;
}

static void
test_definitions (void)
{
  const int n = G_N_ELEMENTS (FOX);
  const ScModelInfo *in;
  ScAttrParams p = { .target = -1, .contrast = -1, .position = -1 };
  ScAttrResult *r;
  ScError err = { 0 };
  Kept k;
  int E, i, j, l, h, t;
  g_autofree float *g = NULL;
  g_autofree double *R = NULL, *T = NULL, *A = NULL;

  if (!need_model ())
    return;
  in = sc_model_info (model);
  E = (int) in->n_embd;
  p.methods = (1u << SC_ATTR_SALIENCY) | (1u << SC_ATTR_GRADXINPUT) | (1u << SC_ATTR_GRAD_ROLLOUT);
  r = attribute (FOX, n, &p);
  g_assert_null (r->scores[SC_ATTR_IG]);
  g_assert_true (isnan (r->ig_gap));
  /* the raw gradient and every head's P, dP through the backward directly */
  k = (Kept) { n, (int) in->n_layers, (int) in->n_heads, NULL, NULL };
  k.P = g_new (double, (size_t) k.L * k.H * n * n);
  k.dP = g_new (double, (size_t) k.L * k.H * n * n);
  g = g_new (float, (size_t) n * E);
  {
    ScObjective obj = { SC_OBJECTIVE_LOGP, -1, r->target, NULL };
    double value;
    g_assert_cmpint (sc_grad_forward (grad, FOX, n, NULL, &err), ==, SC_OK);
    g_assert_cmpint (sc_grad_backward (grad, &obj, keep, &k, &value, g, &err), ==, SC_OK);
    g_assert_cmpfloat (fabs (value - r->value), <=, 1e-9);
  }
  for (i = 0; i < n; i++)
    {
      const float *x = sc_model_weights (model)->token_embd + (size_t) FOX[i] * E;
      double norm = 0.0, dot = 0.0;
      for (t = 0; t < E; t++)
        {
          norm += (double) g[i * E + t] * g[i * E + t];
          dot += (double) g[i * E + t] * x[t];
        }
      g_assert_cmpfloat (fabs (r->scores[SC_ATTR_SALIENCY][i] - sqrt (norm)), <=, 1e-9 * sqrt (norm));
      g_assert_cmpfloat (fabs (r->scores[SC_ATTR_GRADXINPUT][i] - dot), <=, 1e-9 * (1 + fabs (dot)));
    }
  /* rollout as the full product: R = I, R <- R + Ā_l R for l = 0 .. L - 1 */
  R = g_new0 (double, n * n);
  T = g_new (double, n * n);
  A = g_new (double, n * n);
  for (i = 0; i < n; i++)
    R[i * n + i] = 1.0;
  for (l = 0; l < k.L; l++)
    {
      memset (A, 0, sizeof (double) * n * n);
      for (h = 0; h < k.H; h++)
        for (i = 0; i < n * n; i++)
          {
            const size_t at = ((size_t) l * k.H + h) * n * n + i;
            A[i] += fmax (0.0, k.dP[at] * k.P[at]) / k.H;
          }
      for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
          {
            double s = 0.0;
            for (t = 0; t < n; t++)
              s += A[i * n + t] * R[t * n + j];
            T[i * n + j] = R[i * n + j] + s;
          }
      memcpy (R, T, sizeof (double) * n * n);
    }
  for (j = 0; j < n; j++)
    {
      const double want = R[(n - 1) * n + j];
      g_assert_cmpfloat (fabs (r->scores[SC_ATTR_GRAD_ROLLOUT][j] - want), <=, 1e-9 * (1 + want));
      g_assert_cmpfloat (r->scores[SC_ATTR_GRAD_ROLLOUT][j], >=, 0.0);
    }
  g_assert_cmpfloat (r->scores[SC_ATTR_GRAD_ROLLOUT][n - 1], >=, 1.0);
  g_free (k.P);
  g_free (k.dP);
  sc_attr_result_free (r);
}

/* 3. */
static void
test_options (void)
{
  ScAttrParams p = { .methods = 1u << SC_ATTR_IG, .target = 13, .contrast = -1, .position = 5,
                     .steps = 8, .baseline = SC_ATTR_BASELINE_TOKEN, .baseline_token = 2 };
  ScAttrResult *r, *z;

  if (!need_model ())
    return;
  r = attribute (CAT, G_N_ELEMENTS (CAT), &p);
  g_assert_cmpint (r->target, ==, 13);
  g_assert_cmpint (r->position, ==, 5);
  g_assert_cmpint (r->steps, ==, 8);
  g_assert_cmpint (r->baseline_token, ==, 2);
  p.baseline_token = 0;
  z = attribute (CAT, G_N_ELEMENTS (CAT), &p);
  /* another baseline, another f(x'); the same f(x) */
  g_assert_cmpfloat (r->value, ==, z->value);
  g_assert_cmpfloat (fabs (r->f_baseline - z->f_baseline), >, 1e-3);
  /* tokens after the position cannot matter: their attribution is exactly 0 */
  for (int j = 6; j < (int) G_N_ELEMENTS (CAT); j++)
    g_assert_cmpfloat (r->scores[SC_ATTR_IG][j], ==, 0.0);
  sc_attr_result_free (r);
  sc_attr_result_free (z);
}

/* 4. */
static void
tamper (const char *db, const char *sql)
{
  sqlite3 *h;
  g_assert_cmpint (sqlite3_open (db, &h), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (h, sql, NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (h);
}

static void
test_store (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-attr-XXXXXX", NULL);
  g_autofree char *db = g_build_filename (dir, "a.sqlite", NULL);
  ScAttrParams p = { .methods = 0, .target = -1, .contrast = -1, .position = -1, .steps = 4,
                     .baseline = SC_ATTR_BASELINE_TOKEN, .baseline_token = 2 };
  const ScModelInfo *in;
  ScStoreModel sm;
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScAttrResult *r, *back = NULL;
  ScError err = { 0 };
  char params[320];
  int64_t id = 0, id2 = 0;

  if (!need_model ())
    return;
  in = sc_model_info (model);
  r = attribute (CAT, G_N_ELEMENTS (CAT), &p);
  g_assert_cmpint (sc_attr_params_json (0, CAT, G_N_ELEMENTS (CAT), &p, params, sizeof params),
                   >, 0);
  g_assert_nonnull (strstr (params, "\"methods\":\"saliency,gradxinput,ig,grad-rollout\""));
  g_assert_nonnull (strstr (params, "\"steps\":4,\"rule\":\"adaptive\",\"baseline\":\"token:2\""));
  g_assert_cmpint (sc_store_open (db, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_model_identify (model, model_file, &sm, &err), ==, SC_OK);
  g_assert_cmpint (sc_attr_store (store, &sm, params, r, &id, &err), ==, SC_OK);
  g_assert_cmpint (sc_attr_load (store, in, sm.sha256, params, &p, &back, &id2, &err), ==, SC_OK);
  g_assert_cmpint (id, ==, id2);
  g_assert_cmpint (back->methods, ==, r->methods);
  g_assert_cmpint (back->target, ==, r->target);
  g_assert_cmpfloat (back->ig_gap, ==, r->ig_gap);
  g_assert_cmpint (back->steps, ==, 4);
  for (int m = 0; m < SC_ATTR_N_METHODS; m++)
    g_assert_cmpmem (back->scores[m], sizeof (double) * r->n_tokens, r->scores[m],
                     sizeof (double) * r->n_tokens);
  sc_attr_result_free (back);
  back = NULL;
  sc_store_close (store);

  /* someone else's edits */
  tamper (db, "UPDATE study_series SET value = -1 WHERE series = 'saliency' AND pos = 3");
  g_assert_cmpint (sc_store_open (db, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_attr_load (store, in, sm.sha256, params, &p, &back, NULL, &err), ==,
                   SC_ERR_FORMAT);
  g_assert_nonnull (strstr (err.message, "'saliency' at 3"));
  sc_store_close (store);
  tamper (db, "UPDATE study_series SET value = 1 WHERE series = 'saliency' AND pos = 3;"
              "UPDATE study_series SET value = 99999999 WHERE series = 'clean' AND pos = 0");
  g_assert_cmpint (sc_store_open (db, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_attr_load (store, in, sm.sha256, params, &p, &back, NULL, &err), ==,
                   SC_ERR_FORMAT);
  g_assert_nonnull (strstr (err.message, "clean"));
  sc_store_close (store);
  sc_attr_result_free (r);
  g_remove (db);
  g_rmdir (dir);
}

/* 5. */
static void
test_contrast (void)
{
  const int n = G_N_ELEMENTS (FOX);
  g_autofree char *dir = g_dir_make_tmp ("saccade-attr-XXXXXX", NULL);
  g_autofree char *db = g_build_filename (dir, "a.sqlite", NULL);
  ScAttrParams p = { .methods = (1u << SC_ATTR_GRADXINPUT) | (1u << SC_ATTR_IG), .target = -1,
                     .contrast = -1, .position = -1, .steps = 6, .rule = SC_ATTR_RULE_MIDPOINT,
                     .baseline = SC_ATTR_BASELINE_TOKEN, .baseline_token = 2 };
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreModel sm;
  ScAttrResult *a, *b, *c, *back = NULL;
  ScError err = { 0 };
  char params[320];
  int32_t A, B;
  double scale = 0.0;

  if (!need_model ())
    return;
  a = attribute (FOX, n, &p);
  A = a->target;
  B = A == 13 ? 14 : 13;
  p.target = B;
  b = attribute (FOX, n, &p);
  p.target = -1; /* the clean top-1, A */
  p.contrast = B;
  c = attribute (FOX, n, &p);
  g_assert_cmpint (c->target, ==, A);
  g_assert_cmpint (c->contrast, ==, B);
  g_test_message ("f = %.6f, ln p(A) - ln p(B) = %.6f", c->value, a->value - b->value);
  g_assert_cmpfloat (fabs (c->value - (a->value - b->value)), <=, 1e-4);
  g_assert_cmpfloat (fabs (c->f_baseline - (a->f_baseline - b->f_baseline)), <=, 1e-4);
  for (int i = 0; i < n; i++)
    scale = fmax (scale, fabs (a->scores[SC_ATTR_IG][i]) + fabs (b->scores[SC_ATTR_IG][i]));
  for (int m = SC_ATTR_GRADXINPUT; m <= SC_ATTR_IG; m++)
    for (int i = 0; i < n; i++)
      {
        const double d = a->scores[m][i] - b->scores[m][i];
        g_assert_cmpfloat (fabs (c->scores[m][i] - d), <=, 1e-3 * (1.0 + scale));
      }

  /* the store: its own params text, read back with the contrast, f > 0 accepted */
  g_assert_cmpint (sc_attr_params_json (0, FOX, n, &p, params, sizeof params), >, 0);
  {
    char want[64];
    g_snprintf (want, sizeof want, "\"target\":null,\"contrast\":%d,\"position\"", (int) B);
    g_assert_nonnull (strstr (params, want));
  }
  g_assert_cmpint (sc_store_open (db, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_model_identify (model, model_file, &sm, &err), ==, SC_OK);
  g_assert_cmpint (sc_attr_store (store, &sm, params, c, NULL, &err), ==, SC_OK);
  g_assert_cmpint (sc_attr_load (store, sc_model_info (model), sm.sha256, params, &p, &back,
                                 NULL, &err), ==, SC_OK);
  g_assert_cmpint (back->contrast, ==, B);
  g_assert_cmpfloat (back->value, ==, c->value);
  g_assert_cmpmem (back->scores[SC_ATTR_IG], sizeof (double) * n, c->scores[SC_ATTR_IG],
                   sizeof (double) * n);
  sc_attr_result_free (back);
  back = NULL;
  sc_store_close (store);

  /* refused: the contrast is the target, named or the clean top-1 */
  p.target = B;
  g_assert_cmpint (sc_attr_run (grad, model, FOX, n, &p, NULL, NULL, &back, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "contrast"));
  p.target = -1;
  p.contrast = A;
  g_assert_cmpint (sc_attr_run (grad, model, FOX, n, &p, NULL, NULL, &back, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "the clean top-1"));
  g_assert_null (back);
  sc_attr_result_free (a);
  sc_attr_result_free (b);
  sc_attr_result_free (c);
  g_remove (db);
  g_rmdir (dir);
}

static void
test_refused (void)
{
  ScAttrParams p = { .target = -1, .contrast = -1, .position = -1 };
  ScAttrResult *r = NULL;
  ScError err = { 0 };
  const int32_t bad[] = { 504, 99999 };

  if (!need_model ())
    return;
  g_assert_cmpint (sc_attr_run (grad, model, bad, 2, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "99999"));
  p.position = 10;
  g_assert_cmpint (sc_attr_run (grad, model, CAT, 10, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "position 10"));
  p.position = -1;
  p.steps = SC_ATTR_MAX_STEPS + 1;
  g_assert_cmpint (sc_attr_run (grad, model, CAT, 10, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "steps"));
  p.steps = 0;
  p.baseline = SC_ATTR_BASELINE_TOKEN;
  p.baseline_token = -4;
  g_assert_cmpint (sc_attr_run (grad, model, CAT, 10, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "baseline token -4"));
  g_assert_null (r);
}

int
main (int argc, char **argv)
{
  const char *env = g_getenv ("SACCADE_MODEL");
  g_autofree char *path = env != NULL ? g_strdup (env)
                                      : g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"),
                                                          "data", "models",
                                                          "SmolLM2-135M-Instruct.Q4_1.gguf",
                                                          NULL);
  ScError err = { 0 };
  int rc;

  g_test_init (&argc, &argv, NULL);
  model_file = path;
  if (g_file_test (path, G_FILE_TEST_EXISTS))
    {
      if (sc_model_open (path, 2, &model, &err) != SC_OK
          || (backend = sc_backend_cpu_new (2, &err)) == NULL
          || sc_session_new (model, backend, &session, &err) != SC_OK
          || sc_grad_new (session, &grad, &err) != SC_OK)
        g_error ("%s", err.message);
    }
  g_test_add_func ("/attribution/ig-completeness", test_ig_completeness);
  g_test_add_func ("/attribution/ig-zero-baseline", test_ig_zero_baseline);
  g_test_add_func ("/attribution/definitions", test_definitions);
  g_test_add_func ("/attribution/options", test_options);
  g_test_add_func ("/attribution/store", test_store);
  g_test_add_func ("/attribution/refused", test_refused);
  g_test_add_func ("/attribution/contrast", test_contrast);
  rc = g_test_run ();
  sc_grad_free (grad);
  sc_session_free (session);
  sc_backend_free (backend);
  sc_model_free (model);
  return rc;
}
