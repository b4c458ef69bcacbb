/* test-norm-reference.c — norm-based attention (engine/study/sc-norm-study.h) on SmolLM2
 * and Gemma 3 270M against an independent oracle.
 *
 * tests/reference/norm_ref.py recomputes, in float64 on the numpy model of attention_ref.py
 * (the GGUF read through gguf-py; nothing of Saccade imported), the value norms
 * ‖W_O^h v_j‖, every head's map α_h[i][j] ‖f_h(x_j)‖ and the layer's map ‖Σ_h α_h[i][j]
 * f_h(x_j)‖ — the last as a sum of n_embd-vectors, where the C code goes through the heads'
 * Gram matrices — of layers 0 and 15, the maps with the residual (R: the residual after
 * the attention block split by source token; RN: the same through the FFN's RMSNorm;
 * Kobayashi et al. 2021) and the context-mixing ratios of N, R and RN of those layers, and
 * the first-token summaries of all 270 heads, for
 * "When Mary and John went to the store, John gave a drink to" (14 tokens), and writes
 * tests/reference/norm-fixture.json; with --gemma, the same on gemma3_ref.py's numpy Gemma
 * 3 for the sentence with its <bos> (15 tokens), layers 0 and 9 and all 72 heads, the maps
 * with the residual through Gemma's post-attention norm (norm-fixture-gemma3.json). This
 * test runs the study (sc_norm_run, the layer named) on both CPU backends and compares
 * every number:
 *   cpu-ref (scalar, double accumulation): |δ| <= 1e-4 + 1e-4 |ref|   (TOL_REF)
 *   cpu (OpenBLAS sgemm, SIMD attention):  |δ| <= 5e-4 + 5e-4 |ref|   (TOL_CPU)
 * Why these. The engine runs the dense float32 weights in float32 through 15 layers before
 * the values of layer 15 are made, the reference in float64, so the bound is relative as
 * well as absolute (value norms reach 140, R's diagonal 21,929 at token 0: SmolLM2's
 * massive activation in the residual). Measured on the 2-core x86-64 dev machine: cpu-ref's
 * worst deviation 6.9e-4 absolute (on that entry) and 3.5e-6 relative (entries above 1e-3);
 * cpu's 1.1e-2 and 9.1e-6; on Gemma 3, cpu-ref 4.6e-3 and 1.6e-6, cpu 3.2e-3 and 5.4e-6. cpu
 * gets a wider bound because its sgemm kernels and summation order
 * depend on the CPU OpenBLAS picks; a wrong head slice, KV group or summed norm is off by
 * O(1). The largest deviations seen are printed (g_test_message). That the layer map is
 * not the sum of the head maps (which a norm-of-sum mistaken for a sum-of-norms gives) is
 * asserted on the reference itself: most of its entries differ from that sum by more than
 * 100 bounds.
 *
 * Needs the default model (data/fetch-model.sh) with the fixture's SHA-256; otherwise the
 * program says why and exits 77 (skip), which .ci/run counts as a failure. Without Gemma 3
 * (data/fetch-model.sh gemma3; $SACCADE_GEMMA_MODEL overrides the path) only its three
 * tests are skipped.
 */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "engine/backend/sc-backend.h"
#include "engine/core/sc-sha256.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/study/sc-norm-study.h"

#define TOL_REF(ref) (1e-4 + 1e-4 * fabs (ref))
#define TOL_CPU(ref) (5e-4 + 5e-4 * fabs (ref))

/* One model and its fixture. */
typedef struct {
  const char *name;       /* "smollm2", "gemma3" */
  const char *fixture;    /* in SC_TEST_REFERENCE_DIR */
  const char *env;        /* the variable that overrides the model path */
  const char *file;       /* under data/models/ */
  JsonParser *parser;
  JsonObject *root;
  ScModel *model;
  int32_t *ids;
  int n, L, H;
  char *skip;             /* why the case cannot run, or NULL */
} Case;

static Case cases[] = {
  { "smollm2", "norm-fixture.json", "SACCADE_MODEL", "SmolLM2-135M-Instruct.Q4_1.gguf" },
  { "gemma3", "norm-fixture-gemma3.json", "SACCADE_GEMMA_MODEL", "gemma-3-270m-q4_k_m.gguf" },
};

/* The case the checks below read. */
static Case *cur;

/* The backend under test and its bound. */
typedef struct {
  const char *name;
  bool reference;   /* cpu-ref: TOL_REF, else TOL_CPU */
  double max_abs, max_rel;
} Run;

static void
check (Run *run, const char *what, double got, double want)
{
  const double tol = run->reference ? TOL_REF (want) : TOL_CPU (want);
  const double dev = fabs (got - want);

  run->max_abs = MAX (run->max_abs, dev);
  if (fabs (want) > 1e-3)
    run->max_rel = MAX (run->max_rel, dev / fabs (want));
  if (!(dev <= tol))
    g_error ("%s %s: %s: %.9g, the reference %.9g (|δ| %.3g > %.3g)", cur->name, run->name,
             what, got, want, dev, tol);
}

static double
at2 (JsonArray *a, int i, int j)
{
  return json_array_get_double_element (json_array_get_array_element (a, i), j);
}

static double
at3 (JsonArray *a, int i, int j, int k)
{
  return at2 (json_array_get_array_element (a, i), j, k);
}

/* Layer @rec's value norms and maps against the study of that layer. */
static void
check_layer (Run *run, const ScNormResult *r, JsonObject *rec)
{
  const int n = cur->n, H = cur->H;
  const int layer = (int) json_object_get_int_member (rec, "layer");
  JsonArray *vnorm = json_object_get_array_member (rec, "vnorm");
  JsonArray *maps = json_object_get_array_member (rec, "head_maps");
  JsonArray *lmap = json_object_get_array_member (rec, "layer_map");
  JsonArray *rmap = json_object_get_array_member (rec, "res_map");
  JsonArray *rnmap = json_object_get_array_member (rec, "resnorm_map");
  JsonArray *mix = json_object_get_array_member (rec, "mix");
  char what[96];

  g_assert_cmpint (r->layer, ==, layer);
  g_assert_nonnull (r->maps);
  for (int h = 0; h < H; h++)
    for (int j = 0; j < n; j++)
      {
        snprintf (what, sizeof what, "L%d.H%d vnorm[%d]", layer, h, j);
        check (run, what, r->vnorm[h * n + j], at2 (vnorm, h, j));
      }
  /* the test can tell ‖Σ_h‖ from Σ_h ‖‖: off the first column (row 0 has one key) */
  {
    int apart = 0;
    for (int i = 1; i < n; i++)
      for (int j = 0; j <= i; j++)
        {
          double sum = 0.0;
          for (int h = 0; h < H; h++)
            sum += at3 (maps, h, i, j);
          apart += sum - at2 (lmap, i, j) > 100 * TOL_CPU (sum);
        }
    g_assert_cmpint (apart, >=, n * (n - 1) / 4);
  }
  for (int k = 0; k < H + SC_NORM_EXTRA_MAPS; k++)
    {
      static const char *const EXTRA[] = { "layer N", "residual R", "residual+norm RN" };
      const float *map = sc_norm_result_map (r, k);
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
          {
            const double want = k < H       ? at3 (maps, k, i, j)
                                : k == H     ? at2 (lmap, i, j)
                                : k == H + 1 ? at2 (rmap, i, j)
                                             : at2 (rnmap, i, j);
            if (k < H)
              snprintf (what, sizeof what, "L%d.H%d N_h[%d][%d]", layer, k, i, j);
            else
              snprintf (what, sizeof what, "L%d %s[%d][%d]", layer, EXTRA[k - H], i, j);
            if (j > i) /* causal: nothing from a later token, exactly */
              g_assert_cmpfloat (map[i * n + j], ==, 0.0f);
            check (run, what, map[i * n + j], want);
          }
    }
  for (int k = 0; k < 3; k++)
    {
      snprintf (what, sizeof what, "L%d mixing ratio %d", layer, k);
      check (run, what, r->mix[k], json_array_get_double_element (mix, k));
    }
}

/* Every head's and layer's first-token summaries. */
static void
check_summaries (Run *run, const ScNormResult *r)
{
  const int L = cur->L, H = cur->H;
  JsonArray *heads = json_object_get_array_member (cur->root, "heads");
  JsonArray *layers = json_object_get_array_member (cur->root, "layer_summaries");
  static const char *const NAMES[] = { "weight_first", "norm_first", "vnorm_first",
                                       "vnorm_rest" };
  char what[96];

  g_assert_cmpint (json_array_get_length (heads), ==, L * H);
  for (int i = 0; i < L * H; i++)
    {
      JsonObject *o = json_array_get_object_element (heads, i);
      const int l = (int) json_object_get_int_member (o, "layer"),
                h = (int) json_object_get_int_member (o, "head");
      const double got[4] = { r->weight_first[l * H + h], r->norm_first[l * H + h],
                              r->vnorm_first[l * H + h], r->vnorm_rest[l * H + h] };
      for (int m = 0; m < 4; m++)
        {
          snprintf (what, sizeof what, "L%d.H%d %s", l, h, NAMES[m]);
          check (run, what, got[m], json_object_get_double_member (o, NAMES[m]));
        }
    }
  for (int l = 0; l < L; l++)
    {
      JsonObject *o = json_array_get_object_element (layers, l);
      snprintf (what, sizeof what, "L%d layer_weight_first", l);
      check (run, what, r->layer_weight_first[l],
             json_object_get_double_member (o, "layer_weight_first"));
      snprintf (what, sizeof what, "L%d layer_norm_first", l);
      check (run, what, r->layer_norm_first[l],
             json_object_get_double_member (o, "layer_norm_first"));
    }
}

static void
run_backend (Run *run, ScBackend *backend)
{
  JsonArray *kept = json_object_get_array_member (cur->root, "layers");
  ScSession *session = NULL;
  ScError err = { 0 };

  if (sc_session_new (cur->model, backend, &session, &err) != SC_OK)
    g_error ("%s", err.message);
  for (guint k = 0; k < json_array_get_length (kept); k++)
    {
      JsonObject *rec = json_array_get_object_element (kept, k);
      const ScNormParams p = { .layer = (int) json_object_get_int_member (rec, "layer") };
      ScNormResult *r = NULL;
      if (sc_norm_run (session, cur->model, cur->ids, cur->n, &p, NULL, &r, &err) != SC_OK)
        g_error ("%s: %s", run->name, err.message);
      check_layer (run, r, rec);
      if (k == 0)
        check_summaries (run, r);
      sc_norm_result_free (r);
    }
  g_test_message ("%s %s: largest deviation from the reference %.3g absolute, %.3g relative",
                  cur->name, run->name, run->max_abs, run->max_rel);
  sc_session_free (session);
}

static void
test_cpu_ref (gconstpointer data)
{
  Run run = { "cpu-ref", true, 0, 0 };
  ScBackend *b;

  cur = (Case *) data;
  if (cur->skip != NULL)
    {
      g_test_skip (cur->skip);
      return;
    }
  b = sc_backend_cpu_ref_new ();
  g_assert_nonnull (b);
  run_backend (&run, b);
  sc_backend_free (b);
}

static void
test_cpu (gconstpointer data)
{
  Run run = { "cpu", false, 0, 0 };
  ScBackend *b;

  cur = (Case *) data;
  if (cur->skip != NULL)
    {
      g_test_skip (cur->skip);
      return;
    }
  b = sc_backend_cpu_new (2, NULL);
  g_assert_nonnull (b);
  run_backend (&run, b);
  sc_backend_free (b);
}

/* The middle layer is what −1 names, and the fixture's ids are the prompt's. */
static void
test_fixture_shape (gconstpointer data)
{
  cur = (Case *) data;
  if (cur->skip != NULL)
    {
      g_test_skip (cur->skip);
      return;
    }
  g_assert_cmpint ((int) json_object_get_int_member (cur->root, "middle_layer"), ==,
                   cur->L / 2);
  g_assert_cmpint ((int) json_object_get_int_member (cur->root, "n_heads"), ==, cur->H);
  g_assert_cmpint ((int) json_object_get_int_member (cur->root, "n_layers"), ==, cur->L);
}

static void
setup (Case *c)
{
  const char *refdir = g_getenv ("SC_TEST_REFERENCE_DIR");
  const char *env = g_getenv (c->env);
  g_autofree char *path = NULL, *json_path = NULL;
  g_autoptr (GError) error = NULL;
  uint8_t digest[SC_SHA256_DIGEST_SIZE];
  char hex[SC_SHA256_HEX_SIZE];
  JsonArray *a;
  ScError err = { 0 };

  if (refdir == NULL)
    g_error ("SC_TEST_REFERENCE_DIR is not set (run through meson test)");
  path = env != NULL ? g_strdup (env)
                     : g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"), "data", "models",
                                         c->file, NULL);
  json_path = g_build_filename (refdir, c->fixture, NULL);
  c->parser = json_parser_new ();
  if (!json_parser_load_from_file (c->parser, json_path, &error))
    g_error ("%s: %s", json_path, error->message);
  c->root = json_node_get_object (json_parser_get_root (c->parser));
  g_assert_cmpstr (json_object_get_string_member (c->root, "format"), ==,
                   "saccade-norm-fixture/1");
  a = json_object_get_array_member (c->root, "ids");
  c->n = (int) json_array_get_length (a);
  c->ids = g_new (int32_t, c->n);
  for (int i = 0; i < c->n; i++)
    c->ids[i] = (int32_t) json_array_get_int_element (a, i);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      c->skip = g_strdup_printf ("the model is not fetched (%s); run data/fetch-model.sh%s",
                                 path, strcmp (c->name, "gemma3") == 0 ? " gemma3" : "");
      return;
    }
  if (sc_sha256_file (path, digest, NULL, &err) != SC_OK)
    g_error ("%s", err.message);
  sc_sha256_hex (digest, hex);
  if (strcmp (hex, json_object_get_string_member (c->root, "model_sha256")) != 0)
    {
      c->skip = g_strdup_printf ("%s has SHA-256 %s, the fixture was made from %s", path, hex,
                                 json_object_get_string_member (c->root, "model_sha256"));
      return;
    }
  if (sc_model_open (path, 2, &c->model, &err) != SC_OK)
    g_error ("%s", err.message);
  c->L = (int) sc_model_info (c->model)->n_layers;
  c->H = (int) sc_model_info (c->model)->n_heads;
}

int
main (int argc, char **argv)
{
  char *skip;
  int rc;

  g_test_init (&argc, &argv, NULL);
  for (gsize k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      Case *c = &cases[k];
      g_autofree char *t1 = g_strdup_printf ("/norm-reference/%s/fixture", c->name);
      g_autofree char *t2 = g_strdup_printf ("/norm-reference/%s/cpu-ref", c->name);
      g_autofree char *t3 = g_strdup_printf ("/norm-reference/%s/cpu", c->name);
      setup (c);
      g_test_add_data_func (t1, c, test_fixture_shape);
      g_test_add_data_func (t2, c, test_cpu_ref);
      g_test_add_data_func (t3, c, test_cpu);
    }
  rc = g_test_run ();
  for (gsize k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      sc_model_free (cases[k].model);
      g_free (cases[k].ids);
      g_clear_object (&cases[k].parser);
      if (k > 0)
        g_free (cases[k].skip);
    }
  /* SmolLM2 is the default model (tools/setup.sh fetches it): without it the test cannot
   * run at all, a skip that .ci/run counts as a failure; Gemma 3 is fetched on request, and
   * without it only its tests are skipped. */
  skip = cases[0].skip;
  if (skip != NULL)
    {
      g_printerr ("skipped: %s\n", skip);
      g_free (skip);
      return 77;
    }
  return rc;
}
