/* test-mixing-reference.c — value zeroing and ALTI (engine/study/sc-mixing-study.h) on
 * SmolLM2 and Gemma 3 270M against an independent oracle.
 *
 * tests/reference/mixing_ref.py recomputes, in float64 on the numpy models of
 * attention_ref.py and gemma3_ref.py (the GGUF read through gguf-py; nothing of Saccade
 * imported), for "When Mary and John went to the store, John gave a drink to" (14 tokens;
 * Gemma 3: 15 with <bos>): every layer's value-zeroing map (the layer's FFN run on the
 * residual with token j's f_h(x_j) removed, 1 − cos against the clean output, rows
 * normalised) and ALTI map (the L1 distances of the block's per-token terms), the maps of
 * layer 0 and the middle layer, both rollouts over every layer and every map's mixing
 * ratio, and writes mixing-fixture.json (mixing-fixture-gemma3.json). This test runs the
 * study (sc_mixing_run, both methods) and compares every kept number:
 *   cpu-ref (scalar, double accumulation) and cpu (OpenBLAS sgemm, SIMD attention):
 *   |δ| <= 1e-4 (TOL), the maps being shares in [0, 1]. Measured on the 2-core x86-64 dev
 *   machine: cpu-ref's largest deviation 3.6e-7 (SmolLM2 and Gemma 3), cpu's 1.5e-6 and
 *   1.8e-6. A wrong row, key, head group or norm is off by O(0.01) or more. The largest
 *   deviations seen are printed (g_test_message).
 *
 * Needs the default model (data/fetch-model.sh) with the fixture's SHA-256; otherwise the
 * program says why and exits 77 (skip). Without Gemma 3 only its tests are skipped.
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
#include "engine/study/sc-mixing-study.h"

#define TOL 1e-4

typedef struct {
  const char *name, *fixture, *env, *file;
  JsonParser *parser;
  JsonObject *root;
  ScModel *model;
  int32_t *ids;
  int n, L;
  char *skip;
} Case;

static Case cases[] = {
  { "smollm2", "mixing-fixture.json", "SACCADE_MODEL", "SmolLM2-135M-Instruct.Q4_1.gguf" },
  { "gemma3", "mixing-fixture-gemma3.json", "SACCADE_GEMMA_MODEL",
    "gemma-3-270m-q4_k_m.gguf" },
};

typedef struct {
  const char *name;
  double max_abs;
} Run;

static void
check (const Case *c, Run *run, const char *what, double got, double want)
{
  const double dev = fabs (got - want);

  run->max_abs = MAX (run->max_abs, dev);
  if (!(dev <= TOL))
    g_error ("%s %s: %s: %.9g, the reference %.9g (|δ| %.3g > %.3g)", c->name, run->name,
             what, got, want, dev, TOL);
}

/* @map (n, n) against the fixture's rows @want. */
static void
check_map (const Case *c, Run *run, const char *what, const float *map, JsonArray *want)
{
  char at[128];

  for (int i = 0; i < c->n; i++)
    for (int j = 0; j < c->n; j++)
      {
        snprintf (at, sizeof at, "%s[%d][%d]", what, i, j);
        if (j > i)
          g_assert_cmpfloat (map[i * c->n + j], ==, 0.0f);
        check (c, run, at, map[i * c->n + j],
               json_array_get_double_element (json_array_get_array_element (want, i), j));
      }
}

static void
run_backend (const Case *c, Run *run, ScBackend *backend)
{
  static const char *const KEYS[] = { "value_zeroing", "alti" };
  ScSession *session = NULL;
  ScError err = { 0 };
  char what[96];

  if (sc_session_new (c->model, backend, &session, &err) != SC_OK)
    g_error ("%s", err.message);
  for (int m = SC_MIXING_VALUE_ZEROING; m <= SC_MIXING_ALTI; m++)
    {
      JsonObject *rec = json_object_get_object_member (c->root, KEYS[m]);
      JsonArray *layers = json_object_get_array_member (rec, "layers");
      JsonArray *mix = json_object_get_array_member (rec, "mix");
      const ScMixingParams p = { .method = m };
      ScMixingResult *r = NULL;

      if (sc_mixing_run (session, c->model, c->ids, c->n, &p, NULL, &r, &err) != SC_OK)
        g_error ("%s %s: %s", run->name, KEYS[m], err.message);
      g_assert_cmpint (r->n_layers, ==, c->L);
      for (guint k = 0; k < json_array_get_length (layers); k++)
        {
          JsonObject *o = json_array_get_object_element (layers, k);
          const int l = (int) json_object_get_int_member (o, "layer");
          snprintf (what, sizeof what, "%s L%d", KEYS[m], l);
          check_map (c, run, what, sc_mixing_result_map (r, l),
                     json_object_get_array_member (o, "map"));
        }
      snprintf (what, sizeof what, "%s rollout", KEYS[m]);
      check_map (c, run, what, sc_mixing_result_map (r, c->L),
                 json_object_get_array_member (rec, "rollout"));
      g_assert_cmpint ((int) json_array_get_length (mix), ==, c->L + 1);
      for (int k = 0; k <= c->L; k++)
        {
          snprintf (what, sizeof what, "%s mixing ratio %d", KEYS[m], k);
          check (c, run, what, r->mix[k], json_array_get_double_element (mix, k));
        }
      sc_mixing_result_free (r);
    }
  g_test_message ("%s %s: largest deviation from the reference %.3g", c->name, run->name,
                  run->max_abs);
  sc_session_free (session);
}

static void
test_backend (gconstpointer data, bool reference)
{
  const Case *c = data;
  Run run = { reference ? "cpu-ref" : "cpu", 0 };
  ScBackend *b;

  if (c->skip != NULL)
    {
      g_test_skip (c->skip);
      return;
    }
  b = reference ? sc_backend_cpu_ref_new () : sc_backend_cpu_new (2, NULL);
  g_assert_nonnull (b);
  run_backend (c, &run, b);
  sc_backend_free (b);
}

static void
test_cpu_ref (gconstpointer data)
{
  test_backend (data, true);
}

static void
test_cpu (gconstpointer data)
{
  test_backend (data, false);
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
                   "saccade-mixing-fixture/1");
  a = json_object_get_array_member (c->root, "ids");
  c->n = (int) json_array_get_length (a);
  c->ids = g_new (int32_t, c->n);
  for (int i = 0; i < c->n; i++)
    c->ids[i] = (int32_t) json_array_get_int_element (a, i);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      c->skip = g_strdup_printf ("the model is not fetched (%s)", path);
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
  g_assert_cmpint ((int) json_object_get_int_member (c->root, "n_layers"), ==, c->L);
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  for (gsize k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      Case *c = &cases[k];
      g_autofree char *t1 = g_strdup_printf ("/mixing-reference/%s/cpu-ref", c->name);
      g_autofree char *t2 = g_strdup_printf ("/mixing-reference/%s/cpu", c->name);
      setup (c);
      g_test_add_data_func (t1, c, test_cpu_ref);
      g_test_add_data_func (t2, c, test_cpu);
    }
  rc = g_test_run ();
  for (gsize k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      sc_model_free (cases[k].model);
      g_free (cases[k].ids);
      g_clear_object (&cases[k].parser);
    }
  if (cases[0].skip != NULL)
    {
      g_printerr ("skipped: %s\n", cases[0].skip);
      rc = 77;
    }
  for (gsize k = 0; k < G_N_ELEMENTS (cases); k++)
    g_free (cases[k].skip);
  return rc;
}
