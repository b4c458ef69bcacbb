/* test-qk-reference.c — QK attribution (engine/study/sc-qk-study.h) against independent
 * float64 oracles: SmolLM2 (below), Gemma 3 270M, the tiny GPT-2 and Qwen2.5-Coder 0.5B
 * (their cases further down).
 *
 * tests/reference/qk_ref.py recomputes the attribution in float64 on the numpy model of
 * attention_ref.py (the GGUF read through gguf-py, nothing of Saccade imported) and writes
 * tests/reference/qk-fixture.json: for "When Mary and John went to the store, John gave a
 * drink to" (patch-fixture.json's ids), head 16.6 (the head of layer 16 that attends most
 * from the last position to " Mary"), query the last position, key " Mary": the score, the
 * frozen rms at both positions, every component's marginal on each side and the ten
 * largest parts. This test runs the study on the cpu-ref backend and on the cpu backend
 * and checks:
 *   1. the score, rms_q and rms_k, all 161 query-side and 161 key-side marginals and the
 *      ten parts (at the reference's (query, key) components) within the backend's
 *      tolerance of the reference, the component names the reference's;
 *   2. the identity: the parts sum to the forward pass's score within 1e-4 relative;
 *   3. that the comparison could fail: the ten reference parts off the diagonal differ from
 *      their transposes by more than 10 times the tolerance and the marginals spread over
 *      more than 100 times the tolerance.
 *
 * Tolerances. The engine multiplies the same dequantised Q4_1 weights in float32 through
 * 16 layers, the reference in float64; each part is a product of two 64-dimensional
 * projections of residual-stream pieces of size ~1..10. cpu-ref (the plain loops)
 * REF_TOL = 1e-4 absolute on every number (the bound); cpu (blocked matmuls,
 * other summation orders) CPU_TOL = 1e-4 too. Measured largest deviations (printed by the
 * test): 4.0e-7 on cpu-ref, 1.9e-6 on cpu, so both bounds leave a factor of 50 or more.
 *
 * Gemma 3 270M (qk_ref.py gemma3, qk-fixture-gemma3.json): the same checks for heads 9.3 (a
 * local layer) and 11.2 (a global one), query 14, key 2 (" Mary") of the same sentence with
 * BOS — the post-attention norm's and the QK-norm's scales frozen too. Its residual stream
 * is 25 times larger (the embedding scale sqrt(640)) and its head_dim 256: measured largest
 * deviations 2.3e-5 on cpu-ref (REF_TOL) and 9.0e-5 on cpu, which is held to
 * GEMMA_CPU_TOL = 3e-4. Without the Gemma file those two cases skip (and the program exits
 * 77 as below).
 *
 * The tiny GPT-2 (tests/reference/tiny-gpt2.gguf, committed; qk_ref.py gpt2,
 * qk-fixture-gpt2.json): every head of its last layer, query 9, key 4 — the LayerNorm's
 * mean subtraction per component with σ frozen, the token's "embed" and the learned
 * "pos", the LayerNorm and QKV biases as "bias" — the same checks at REF_TOL and CPU_TOL
 * (measured 9.2e-7 on cpu-ref, 1.2e-6 on cpu). Never skipped.
 *
 * Qwen2.5-Coder 0.5B (qk_ref.py qwen2, qk-fixture-qwen2.json, on qwen2_ref.py's model):
 * the same sentence without BOS (Saccade's tokenizer must give the fixture's 14 ids),
 * query 13, key 1 (" Mary"), the heads of most attention to " Mary" in layers 12 and 23
 * (12.1 and 23.9) — with the extra "bias" component last on each side, RoPE_i (b_Q^h) and
 * RoPE_j (b_K^g), whose row and column of parts are in the marginals and the sum. The same
 * checks at REF_TOL and CPU_TOL (measured 1.3e-6 on cpu-ref, 2.7e-6 on cpu); the
 * reference's bias marginals must lie more than 10 * CPU_TOL from 0 on both sides, so the
 * bias counts. An engine that leaves the bias unrotated fails (query marginal of embed off
 * by 1.3e-3), one that leaves it out fails too (2.5e-2). Without the model file
 * (data/fetch-model.sh qwen2.5-0.5b) these two cases skip with their reason and the
 * program exits 77, which .ci/run (which fetches the file) fails.
 *
 * Needs the default model (data/fetch-model.sh) with the fixture's SHA-256; otherwise the
 * program says why and exits 77 (skip), which .ci/run counts as a failure.
 */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend/sc-backend.h"
#include "engine/core/sc-sha256.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/study/sc-qk-study.h"
#include "engine/text/sc-tokenizer.h"

#define REF_TOL 1e-4
#define CPU_TOL 1e-4
#define GEMMA_CPU_TOL 3e-4

static JsonParser *parser;
static JsonObject *root;
static char *skip_reason;
static ScModel *model;
static double max_dev[8];
static JsonParser *gparser;
static JsonObject *groot;
static char *gemma_skip;
static ScModel *gmodel;
static JsonParser *tparser;
static JsonObject *troot;
static ScModel *tmodel;
static JsonParser *wparser;
static JsonObject *wroot;
static char *qwen2_skip;
static ScModel *wmodel;

static void
check (int which, const char *what, double got, double want, double tol)
{
  max_dev[which] = MAX (max_dev[which], fabs (got - want));
  if (!(fabs (got - want) <= tol))
    g_error ("%s%s: %s: %.9g, the reference %.9g (|δ| %.3g > %.3g)",
             which % 2 == 0 ? "cpu-ref" : "cpu",
             which >= 6   ? " (qwen2)"
             : which >= 4 ? " (gpt2)"
             : which >= 2 ? " (gemma3)"
                          : "",
             what, got, want, fabs (got - want), tol);
}

/* One case (@c: layer, head, query, key, the reference's numbers) of @m on @ids, backend
 * @which (0 cpu-ref, 1 cpu; 2 and 3 the same on Gemma 3, 4 and 5 on the tiny GPT-2, 6 and 7
 * on Qwen2, for the deviations). */
static void
compare_case (int which, ScModel *m, const int32_t *ids, int n, JsonObject *c)
{
  ScBackend *b = which % 2 == 0 ? sc_backend_cpu_ref_new () : sc_backend_cpu_new (2, NULL);
  const double tol = which % 2 == 0 ? REF_TOL : which == 3 ? GEMMA_CPU_TOL : CPU_TOL;
  const char *bname = which % 2 == 0 ? "cpu-ref" : "cpu";
  JsonArray *qm = json_object_get_array_member (c, "query_marginals");
  JsonArray *km = json_object_get_array_member (c, "key_marginals");
  JsonArray *names = json_object_get_array_member (c, "components");
  JsonArray *top = json_object_get_array_member (c, "top_parts");
  ScQkParams p = { .layer = (int) json_object_get_int_member (c, "layer"),
                   .head = (int) json_object_get_int_member (c, "head"),
                   .query = (int) json_object_get_int_member (c, "query"),
                   .key = (int) json_object_get_int_member (c, "key") };
  ScSession *s = NULL;
  ScQkResult *r = NULL;
  ScError err = { 0 };
  double sum = 0.0;
  int C;

  g_assert_nonnull (b);
  if (sc_session_new (m, b, &s, &err) != SC_OK)
    g_error ("%s", err.message);
  if (sc_qk_run (s, m, ids, n, &p, &r, &err) != SC_OK)
    g_error ("%s", err.message);
  C = r->n_comp;
  g_assert_cmpint (C, ==, (int) json_object_get_int_member (c, "n_components"));
  g_assert_cmpint ((int) json_array_get_length (names), ==, C);
  for (int k = 0; k < C; k++)
    {
      char name[32];
      g_assert_cmpint (sc_qk_component_name (r, k, name, sizeof name), >, 0);
      g_assert_cmpstr (name, ==, json_array_get_string_element (names, k));
    }

  /* 1. */
  check (which, "score", r->score, json_object_get_double_member (c, "score"), tol);
  check (which, "rms at the query", r->rms_q, json_object_get_double_member (c, "rms_query"),
         tol);
  check (which, "rms at the key", r->rms_k, json_object_get_double_member (c, "rms_key"), tol);
  for (int k = 0; k < C; k++)
    {
      double mq = 0.0, mk = 0.0;
      char what[64];
      for (int o = 0; o < C; o++)
        {
          mq += r->parts[(gsize) k * C + o];
          mk += r->parts[(gsize) o * C + k];
        }
      snprintf (what, sizeof what, "query marginal of %s",
                json_array_get_string_element (names, k));
      check (which, what, mq, json_array_get_double_element (qm, k), tol);
      snprintf (what, sizeof what, "key marginal of %s",
                json_array_get_string_element (names, k));
      check (which, what, mk, json_array_get_double_element (km, k), tol);
    }
  for (guint t = 0; t < json_array_get_length (top); t++)
    {
      JsonObject *o = json_array_get_object_element (top, t);
      const int qa = (int) json_object_get_int_member (o, "query");
      const int kb = (int) json_object_get_int_member (o, "key");
      char what[96];
      snprintf (what, sizeof what, "part %s (key) x %s (query)",
                json_object_get_string_member (o, "key_name"),
                json_object_get_string_member (o, "query_name"));
      check (which, what, r->parts[(gsize) qa * C + kb],
             json_object_get_double_member (o, "value"), tol);
      /* 3. a transposed index would be caught (off the diagonal) */
      if (qa != kb)
        g_assert_cmpfloat (fabs (json_object_get_double_member (o, "value")
                                 - r->parts[(gsize) kb * C + qa]), >, 10 * tol);
    }

  /* 2. */
  for (int k = 0; k < C * C; k++)
    sum += r->parts[k];
  g_assert_cmpfloat (fabs (sum - r->score), <=, 1e-4 * fabs (r->score));
  g_test_message ("%s, head %d.%d: score %.6f, sum of parts %.6f, largest deviation so far "
                  "%.3g", bname, p.layer, p.head, r->score, sum, max_dev[which]);
  sc_qk_result_free (r);
  sc_session_free (s);
  sc_backend_free (b);
}

static int32_t *
ids_of (JsonObject *o, int *n)
{
  JsonArray *a = json_object_get_array_member (o, "ids");
  int32_t *ids;

  *n = (int) json_array_get_length (a);
  ids = g_new (int32_t, *n);
  for (int i = 0; i < *n; i++)
    ids[i] = (int32_t) json_array_get_int_element (a, i);
  return ids;
}

static void
run_backend (int which)
{
  g_autofree int32_t *ids = NULL;
  int n;

  if (skip_reason != NULL)
    {
      g_test_skip (skip_reason);
      return;
    }
  ids = ids_of (root, &n);
  compare_case (which, model, ids, n, root);
}

static void
run_gemma (int which)
{
  g_autofree int32_t *ids = NULL;
  JsonArray *cases;
  int n;

  if (gemma_skip != NULL)
    {
      g_test_skip (gemma_skip);
      return;
    }
  ids = ids_of (groot, &n);
  cases = json_object_get_array_member (groot, "cases");
  g_assert_cmpuint (json_array_get_length (cases), ==, 2);
  for (guint k = 0; k < json_array_get_length (cases); k++)
    compare_case (2 + which, gmodel, ids, n, json_array_get_object_element (cases, k));
}

/* The tiny GPT-2 (qk-fixture-gpt2.json): LayerNorm centred per component, "pos" and "bias"
 * beside the heads and MLPs; every head of its last layer. */
static void
run_gpt2 (int which)
{
  g_autofree int32_t *ids = NULL;
  JsonArray *cases;
  int n;

  ids = ids_of (troot, &n);
  cases = json_object_get_array_member (troot, "cases");
  g_assert_cmpuint (json_array_get_length (cases), ==, sc_model_info (tmodel)->n_heads);
  for (guint k = 0; k < json_array_get_length (cases); k++)
    compare_case (4 + which, tmodel, ids, n, json_array_get_object_element (cases, k));
}

/* Qwen2.5-Coder 0.5B (qk-fixture-qwen2.json): "bias" the last component on each side; the
 * heads of layers 12 and 23 that attend most to " Mary". */
static void
run_qwen2 (int which)
{
  g_autofree int32_t *ids = NULL;
  JsonArray *cases;
  int n;

  if (qwen2_skip != NULL)
    {
      g_test_skip (qwen2_skip);
      return;
    }
  ids = ids_of (wroot, &n);
  cases = json_object_get_array_member (wroot, "cases");
  g_assert_cmpuint (json_array_get_length (cases), ==, 2);
  for (guint k = 0; k < json_array_get_length (cases); k++)
    {
      JsonObject *c = json_array_get_object_element (cases, k);
      JsonArray *names = json_object_get_array_member (c, "components");
      const guint last = json_array_get_length (names) - 1;

      /* the bias is there and weighs: leaving it out or unrotated cannot pass unseen */
      g_assert_cmpstr (json_array_get_string_element (names, last), ==, "bias");
      g_assert_cmpfloat (fabs (json_array_get_double_element (
                             json_object_get_array_member (c, "query_marginals"), last)),
                         >, 10 * CPU_TOL);
      g_assert_cmpfloat (fabs (json_array_get_double_element (
                             json_object_get_array_member (c, "key_marginals"), last)),
                         >, 10 * CPU_TOL);
      compare_case (6 + which, wmodel, ids, n, c);
    }
}

static void
test_qwen2_ref (void)
{
  run_qwen2 (0);
}

static void
test_qwen2_cpu (void)
{
  run_qwen2 (1);
}

static void
test_gpt2_ref (void)
{
  run_gpt2 (0);
}

static void
test_gpt2_cpu (void)
{
  run_gpt2 (1);
}

static void
test_gemma_ref (void)
{
  run_gemma (0);
}

static void
test_gemma_cpu (void)
{
  run_gemma (1);
}

static void
test_ref (void)
{
  run_backend (0);
}

static void
test_cpu (void)
{
  run_backend (1);
}

/* 3. the marginals spread: a component mixed up with another would be caught */
static void
test_discriminates (void)
{
  JsonArray *qm = json_object_get_array_member (root, "query_marginals");
  double lo = INFINITY, hi = -INFINITY;

  for (guint c = 0; c < json_array_get_length (qm); c++)
    {
      lo = MIN (lo, json_array_get_double_element (qm, c));
      hi = MAX (hi, json_array_get_double_element (qm, c));
    }
  g_assert_cmpfloat (hi - lo, >, 100 * CPU_TOL);
}

static void
setup (void)
{
  const char *refdir = g_getenv ("SC_TEST_REFERENCE_DIR");
  const char *env = g_getenv ("SACCADE_MODEL");
  g_autofree char *path = NULL, *json_path = NULL;
  g_autoptr (GError) error = NULL;
  uint8_t digest[SC_SHA256_DIGEST_SIZE];
  char hex[SC_SHA256_HEX_SIZE];
  ScError err = { 0 };

  if (refdir == NULL)
    g_error ("SC_TEST_REFERENCE_DIR is not set (run through meson test)");
  path = env != NULL ? g_strdup (env)
                     : g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"), "data", "models",
                                         "SmolLM2-135M-Instruct.Q4_1.gguf", NULL);
  json_path = g_build_filename (refdir, "qk-fixture.json", NULL);
  parser = json_parser_new ();
  if (!json_parser_load_from_file (parser, json_path, &error))
    g_error ("%s: %s", json_path, error->message);
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (root, "format"), ==, "saccade-qk-fixture/1");
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      skip_reason = g_strdup_printf ("the default model is not fetched (%s); run "
                                     "data/fetch-model.sh", path);
      return;
    }
  if (sc_sha256_file (path, digest, NULL, &err) != SC_OK)
    g_error ("%s", err.message);
  sc_sha256_hex (digest, hex);
  if (strcmp (hex, json_object_get_string_member (root, "model_sha256")) != 0)
    {
      skip_reason = g_strdup_printf ("%s has SHA-256 %s, the fixture was made from %s", path,
                                     hex, json_object_get_string_member (root, "model_sha256"));
      return;
    }
  if (sc_model_open (path, 2, &model, &err) != SC_OK)
    g_error ("%s", err.message);
}

/* Gemma 3 270M: qk-fixture-gemma3.json, $SACCADE_GEMMA_MODEL or the default file. */
static void
setup_gemma (void)
{
  const char *env = g_getenv ("SACCADE_GEMMA_MODEL");
  g_autofree char *path = NULL, *json_path = NULL;
  g_autoptr (GError) error = NULL;
  uint8_t digest[SC_SHA256_DIGEST_SIZE];
  char hex[SC_SHA256_HEX_SIZE];
  ScError err = { 0 };

  path = env != NULL ? g_strdup (env)
                     : g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"), "data", "models",
                                         "gemma-3-270m-q4_k_m.gguf", NULL);
  json_path = g_build_filename (g_getenv ("SC_TEST_REFERENCE_DIR"), "qk-fixture-gemma3.json",
                                NULL);
  gparser = json_parser_new ();
  if (!json_parser_load_from_file (gparser, json_path, &error))
    g_error ("%s: %s", json_path, error->message);
  groot = json_node_get_object (json_parser_get_root (gparser));
  g_assert_cmpstr (json_object_get_string_member (groot, "format"), ==,
                   "saccade-qk-fixture-gemma3/1");
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      gemma_skip = g_strdup_printf ("the Gemma 3 model is not fetched (%s)", path);
      return;
    }
  if (sc_sha256_file (path, digest, NULL, &err) != SC_OK)
    g_error ("%s", err.message);
  sc_sha256_hex (digest, hex);
  if (strcmp (hex, json_object_get_string_member (groot, "model_sha256")) != 0)
    {
      gemma_skip = g_strdup_printf ("%s has SHA-256 %s, the fixture was made from %s", path,
                                    hex, json_object_get_string_member (groot,
                                                                        "model_sha256"));
      return;
    }
  if (sc_model_open (path, 2, &gmodel, &err) != SC_OK)
    g_error ("%s", err.message);
}

/* tiny-gpt2.gguf (a committed file) and its fixture: never skipped. */
static void
setup_gpt2 (void)
{
  g_autofree char *path = NULL, *json_path = NULL;
  g_autoptr (GError) error = NULL;
  uint8_t digest[SC_SHA256_DIGEST_SIZE];
  char hex[SC_SHA256_HEX_SIZE];
  ScError err = { 0 };

  path = g_build_filename (g_getenv ("SC_TEST_REFERENCE_DIR"), "tiny-gpt2.gguf", NULL);
  json_path = g_build_filename (g_getenv ("SC_TEST_REFERENCE_DIR"), "qk-fixture-gpt2.json",
                                NULL);
  tparser = json_parser_new ();
  if (!json_parser_load_from_file (tparser, json_path, &error))
    g_error ("%s: %s", json_path, error->message);
  troot = json_node_get_object (json_parser_get_root (tparser));
  g_assert_cmpstr (json_object_get_string_member (troot, "format"), ==,
                   "saccade-qk-fixture-gpt2/1");
  if (sc_sha256_file (path, digest, NULL, &err) != SC_OK)
    g_error ("%s", err.message);
  sc_sha256_hex (digest, hex);
  g_assert_cmpstr (hex, ==, json_object_get_string_member (troot, "model_sha256"));
  if (sc_model_open (path, 1, &tmodel, &err) != SC_OK)
    g_error ("%s", err.message);
}

/* Qwen2.5-Coder 0.5B: qk-fixture-qwen2.json, $SACCADE_QWEN2_MODEL or the default file; the
 * fixture's ids must be what Saccade's tokenizer makes of its text (no BOS added). */
static void
setup_qwen2 (void)
{
  const char *env = g_getenv ("SACCADE_QWEN2_MODEL");
  g_autofree char *path = NULL, *json_path = NULL;
  g_autofree int32_t *want = NULL;
  g_autoptr (GError) error = NULL;
  uint8_t digest[SC_SHA256_DIGEST_SIZE];
  char hex[SC_SHA256_HEX_SIZE];
  ScError err = { 0 };
  const char *text;
  int32_t *got = NULL;
  size_t n_got = 0;
  int n_want;

  path = env != NULL ? g_strdup (env)
                     : g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"), "data", "models",
                                         "Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf", NULL);
  json_path = g_build_filename (g_getenv ("SC_TEST_REFERENCE_DIR"), "qk-fixture-qwen2.json",
                                NULL);
  wparser = json_parser_new ();
  if (!json_parser_load_from_file (wparser, json_path, &error))
    g_error ("%s: %s", json_path, error->message);
  wroot = json_node_get_object (json_parser_get_root (wparser));
  g_assert_cmpstr (json_object_get_string_member (wroot, "format"), ==,
                   "saccade-qk-fixture-qwen2/1");
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      qwen2_skip = g_strdup_printf ("the Qwen2.5-Coder 0.5B model is not fetched (%s); run "
                                    "data/fetch-model.sh qwen2.5-0.5b", path);
      return;
    }
  if (sc_sha256_file (path, digest, NULL, &err) != SC_OK)
    g_error ("%s", err.message);
  sc_sha256_hex (digest, hex);
  if (strcmp (hex, json_object_get_string_member (wroot, "model_sha256")) != 0)
    {
      qwen2_skip = g_strdup_printf ("%s has SHA-256 %s, the fixture was made from %s", path,
                                    hex, json_object_get_string_member (wroot,
                                                                        "model_sha256"));
      return;
    }
  if (sc_model_open (path, 2, &wmodel, &err) != SC_OK)
    g_error ("%s", err.message);
  text = json_object_get_string_member (wroot, "text");
  if (sc_tokenize (sc_model_tokenizer (wmodel), text, strlen (text), true, false, &got,
                   &n_got, &err)
      != SC_OK)
    g_error ("%s", err.message);
  want = ids_of (wroot, &n_want);
  g_assert_cmpmem (got, n_got * sizeof *got, want, (gsize) n_want * sizeof *want);
  free (got);
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  setup ();
  setup_gemma ();
  setup_gpt2 ();
  setup_qwen2 ();
  g_test_add_func ("/qk-reference/cpu-ref", test_ref);
  g_test_add_func ("/qk-reference/cpu", test_cpu);
  g_test_add_func ("/qk-reference/discriminates", test_discriminates);
  g_test_add_func ("/qk-reference/gemma3-cpu-ref", test_gemma_ref);
  g_test_add_func ("/qk-reference/gemma3-cpu", test_gemma_cpu);
  g_test_add_func ("/qk-reference/gpt2-cpu-ref", test_gpt2_ref);
  g_test_add_func ("/qk-reference/gpt2-cpu", test_gpt2_cpu);
  g_test_add_func ("/qk-reference/qwen2-cpu-ref", test_qwen2_ref);
  g_test_add_func ("/qk-reference/qwen2-cpu", test_qwen2_cpu);
  rc = g_test_run ();
  sc_model_free (model);
  sc_model_free (gmodel);
  sc_model_free (tmodel);
  sc_model_free (wmodel);
  g_clear_object (&parser);
  g_clear_object (&gparser);
  g_clear_object (&tparser);
  g_clear_object (&wparser);
  if (gemma_skip != NULL)
    {
      g_printerr ("skipped: %s\n", gemma_skip);
      g_free (gemma_skip);
      rc = rc == 0 ? 77 : rc;
    }
  if (qwen2_skip != NULL)
    {
      g_printerr ("skipped: %s\n", qwen2_skip);
      g_free (qwen2_skip);
      rc = rc == 0 ? 77 : rc;
    }
  if (skip_reason != NULL)
    {
      g_printerr ("skipped: %s\n", skip_reason);
      g_free (skip_reason);
      return 77;
    }
  return rc;
}
