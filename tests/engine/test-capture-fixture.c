/* test-capture-fixture.c — the same sentence stores the same bytes, release after release.
 *
 * Runs the default model on a few sentences with both CPU backends, captures every head
 * into a fresh store, and compares the SHA-256 of what was stored — every attention row
 * (layer, head, shape, layout, dtype and the fp16 BLOB), every token row — and of the
 * float32 logits at every position with tests/reference/capture-fixture.json, which was
 * written by this program before a restructuring of the code (see "Regenerating").
 *
 * The reference backend ("cpu-ref": scalar loops, double accumulation, no BLAS) is
 * deterministic on any x86-64 machine with this build's compiler and libm, so its hashes
 * must match exactly everywhere. The fast backend's sums depend on which OpenBLAS kernel
 * family was loaded (SkylakeX and Haswell order their FMAs differently), so its hashes are
 * compared only where the same kernels were chosen; elsewhere the test says so and checks
 * that the fast backend's attention stays within 2e-3 of the reference (test-model and
 * test-attention hold the tight numerical bounds; this test is about identity).
 *
 * Regenerating (only when a change is meant to alter the stored bytes, and say so):
 *   SC_CAPTURE_FIXTURE_WRITE=tests/reference/capture-fixture.json \
 *     meson test -C build test-capture-fixture
 *
 * Needs the default model (data/fetch-model.sh); exits 77 (skip) when it is absent.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "engine/backend/sc-blas.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/core/sc-sha256.h"
#include "engine/store/sc-store.h"
#include "engine/text/sc-tokenizer.h"

static const char *const sentences[] = {
  "The cat chased the ball because it was tired.",
  "猫追球，它累了。",
  "def f(x):\n    return x * 2  # doubles",
};

typedef struct {
  const char *name;     /* "cpu-ref", "cpu" */
  ScBackend *backend;
} Backend;

static ScModel *model;
static char *model_path;
static char *tmpdir;

static void
hex_of (ScSha256 *ctx, char out[SC_SHA256_HEX_SIZE])
{
  uint8_t d[SC_SHA256_DIGEST_SIZE];

  sc_sha256_final (ctx, d);
  sc_sha256_hex (d, out);
}

/* Hashes one column list of every row of @sql (bound to @run_id) in order: integers as
 * 8 little-endian bytes, text and BLOBs as their length then their bytes. */
static void
hash_rows (sqlite3 *db, const char *sql, sqlite3_int64 run_id, char out[SC_SHA256_HEX_SIZE])
{
  sqlite3_stmt *st = NULL;
  ScSha256 ctx;
  int rc, c;

  sc_sha256_init (&ctx);
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &st, NULL), ==, SQLITE_OK);
  sqlite3_bind_int64 (st, 1, run_id);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    for (c = 0; c < sqlite3_column_count (st); c++)
      {
        sqlite3_int64 v;
        int len;

        switch (sqlite3_column_type (st, c))
          {
          case SQLITE_INTEGER:
            v = GINT64_TO_LE (sqlite3_column_int64 (st, c));
            sc_sha256_update (&ctx, &v, sizeof v);
            break;
          default:
            len = sqlite3_column_bytes (st, c);
            v = GINT64_TO_LE ((sqlite3_int64) len);
            sc_sha256_update (&ctx, &v, sizeof v);
            sc_sha256_update (&ctx, sqlite3_column_blob (st, c), (size_t) len);
            break;
          }
      }
  g_assert_cmpint (rc, ==, SQLITE_DONE);
  sqlite3_finalize (st);
  hex_of (&ctx, out);
}

typedef struct {
  char attention[SC_SHA256_HEX_SIZE];
  char tokens[SC_SHA256_HEX_SIZE];
  char logits[SC_SHA256_HEX_SIZE];
  int n_tokens;
} Capture;

/* Captures @text with @b into a new store under tmpdir; fills @out with its hashes. When
 * @probs_out is not NULL it receives the stored heads unpacked, (n_layers * n_heads, n, n). */
static void
capture (const Backend *b, const char *text, int index, Capture *out, float **probs_out)
{
  const ScModelInfo *info = sc_model_info (model);
  g_autofree char *db_path = g_strdup_printf ("%s/%s-%d.sqlite", tmpdir, b->name, index);
  ScStoreOptions opt = { .writable = true };
  ScStore *store = NULL;
  ScStoreCapture *cap = NULL;
  ScStoreModel ident;
  ScStoreToken *pieces = NULL;
  ScStoreRunDesc desc = { 0 };
  ScForwardOptions fo = { 0 };
  ScSession *session = NULL;
  ScObserver obs;
  ScError err = { 0 };
  ScSha256 ctx;
  int32_t *ids = NULL;
  size_t n_ids = 0;
  int64_t run_id = 0;
  g_autofree float *logits = NULL;
  sqlite3 *db = NULL;

  g_assert_cmpint (sc_tokenize (sc_model_tokenizer (model), text, strlen (text), true, true,
                                &ids, &n_ids, &err), ==, SC_OK);
  g_assert_cmpuint (n_ids, >, 0);
  g_assert_cmpint (sc_store_tokens_from_ids (sc_model_tokenizer (model), ids, n_ids, &pieces,
                                             &err), ==, SC_OK);
  g_assert_cmpint (sc_store_model_identify (model, model_path, &ident, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (db_path, &opt, &store, &err), ==, SC_OK);
  desc.model = &ident;
  desc.text = text;
  desc.text_len = strlen (text);
  desc.tokens = pieces;
  desc.n_tokens = n_ids;
  desc.backend = b->name;
  g_assert_cmpint (sc_store_capture_begin (store, &desc, &cap, &err), ==, SC_OK);
  obs = sc_store_capture_observer (cap);
  fo.observer = &obs;
  fo.all_logits = true;
  logits = g_new (float, n_ids * (size_t) info->n_vocab);
  g_assert_cmpint (sc_session_new (model, b->backend, &session, &err), ==, SC_OK);
  if (sc_forward (session, ids, (int) n_ids, &fo, logits, &err) != SC_OK)
    g_error ("forward (%s): %s", b->name, err.message);
  g_assert_cmpint (sc_store_capture_commit (cap, -1, &run_id, &err), ==, SC_OK);
  sc_session_free (session);

  if (probs_out != NULL)
    {
      size_t nn = n_ids * n_ids;
      float *all = g_new (float, (size_t) info->n_layers * info->n_heads * nn);
      uint32_t l, h;

      for (l = 0; l < info->n_layers; l++)
        for (h = 0; h < info->n_heads; h++)
          {
            ScStoreHead head = { 0 };

            g_assert_cmpint (sc_store_read_head (store, run_id, (int) l, (int) h, &head, &err),
                             ==, SC_OK);
            memcpy (all + ((size_t) l * info->n_heads + h) * nn, head.probs, nn * sizeof (float));
            sc_store_head_clear (&head);
          }
      *probs_out = all;
    }
  sc_store_close (store);

  /* Read back as any other program would: plain SQL on the file. */
  g_assert_cmpint (sqlite3_open_v2 (db_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  hash_rows (db,
             "SELECT layer, head, n_query, n_key, layout, dtype, data FROM attention "
             "WHERE run_id = ?1 ORDER BY layer, head",
             run_id, out->attention);
  hash_rows (db, "SELECT pos, token_id, piece FROM tokens WHERE run_id = ?1 ORDER BY pos", run_id,
             out->tokens);
  sqlite3_close (db);

  sc_sha256_init (&ctx);
  sc_sha256_update (&ctx, logits, n_ids * (size_t) info->n_vocab * sizeof (float));
  hex_of (&ctx, out->logits);
  out->n_tokens = (int) n_ids;

  sc_store_tokens_free (pieces);
  free (ids);
  g_unlink (db_path);
}

static void
write_fixture (const char *path, Backend *backends, int n_backends)
{
  g_autoptr (JsonBuilder) jb = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;
  g_autoptr (GError) error = NULL;
  int bi;
  size_t i;

  json_builder_begin_object (jb);
  json_builder_set_member_name (jb, "blas");
  json_builder_add_string_value (jb, sc_blas_describe ());
  json_builder_set_member_name (jb, "cases");
  json_builder_begin_array (jb);
  for (bi = 0; bi < n_backends; bi++)
    for (i = 0; i < G_N_ELEMENTS (sentences); i++)
      {
        Capture c;

        capture (&backends[bi], sentences[i], (int) i, &c, NULL);
        json_builder_begin_object (jb);
        json_builder_set_member_name (jb, "backend");
        json_builder_add_string_value (jb, backends[bi].name);
        json_builder_set_member_name (jb, "text");
        json_builder_add_string_value (jb, sentences[i]);
        json_builder_set_member_name (jb, "n_tokens");
        json_builder_add_int_value (jb, c.n_tokens);
        json_builder_set_member_name (jb, "attention_sha256");
        json_builder_add_string_value (jb, c.attention);
        json_builder_set_member_name (jb, "tokens_sha256");
        json_builder_add_string_value (jb, c.tokens);
        json_builder_set_member_name (jb, "logits_sha256");
        json_builder_add_string_value (jb, c.logits);
        json_builder_end_object (jb);
      }
  json_builder_end_array (jb);
  json_builder_end_object (jb);
  root = json_builder_get_root (jb);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  if (!json_generator_to_file (gen, path, &error))
    g_error ("%s: %s", path, error->message);
  printf ("# wrote %s\n", path);
}

static Backend backends[2];
static JsonArray *cases;
static char *fixture_blas;

static void
test_case (gconstpointer data)
{
  JsonObject *o = json_array_get_object_element (cases, GPOINTER_TO_UINT (data));
  const char *bname = json_object_get_string_member (o, "backend");
  const char *text = json_object_get_string_member (o, "text");
  const Backend *b = g_str_equal (bname, "cpu-ref") ? &backends[0] : &backends[1];
  gboolean exact = b == &backends[0] || g_str_equal (fixture_blas, sc_blas_describe ());
  Capture c;

  g_assert_true (g_str_equal (bname, b->name));
  capture (b, text, (int) GPOINTER_TO_UINT (data), &c, NULL);
  g_assert_cmpint (c.n_tokens, ==, json_object_get_int_member (o, "n_tokens"));
  g_assert_cmpstr (c.tokens, ==, json_object_get_string_member (o, "tokens_sha256"));
  if (exact)
    {
      g_assert_cmpstr (c.attention, ==, json_object_get_string_member (o, "attention_sha256"));
      g_assert_cmpstr (c.logits, ==, json_object_get_string_member (o, "logits_sha256"));
    }
  else
    {
      /* Other BLAS kernels than the fixture's: the same sentence through both backends,
       * stored, must still agree as attention (identity needs the same kernels). */
      g_autofree float *fast = NULL, *ref = NULL;
      Capture cr;
      size_t k, n = (size_t) sc_model_info (model)->n_layers * sc_model_info (model)->n_heads
                    * c.n_tokens * c.n_tokens;
      double worst = 0.0;

      g_test_message ("BLAS is \"%s\", the fixture was made with \"%s\": comparing the fast "
                      "backend with the reference instead of byte for byte",
                      sc_blas_describe (), fixture_blas);
      capture (b, text, 100, &c, &fast);
      capture (&backends[0], text, 101, &cr, &ref);
      for (k = 0; k < n; k++)
        worst = MAX (worst, fabs ((double) fast[k] - ref[k]));
      g_assert_cmpfloat (worst, <=, 2e-3);
    }
}

int
main (int argc, char **argv)
{
  const char *write_to = g_getenv ("SC_CAPTURE_FIXTURE_WRITE");
  const char *refdir = g_getenv ("SC_TEST_REFERENCE_DIR");
  g_autofree char *fixture = NULL;
  g_autoptr (JsonParser) parser = NULL;
  g_autoptr (GError) error = NULL;
  ScError err = { 0 };
  JsonObject *root;
  guint i;
  int rc;

  g_test_init (&argc, &argv, NULL);
  if (refdir == NULL)
    g_error ("SC_TEST_REFERENCE_DIR is not set (run through meson test)");
  model_path = g_strdup (g_getenv ("SACCADE_MODEL"));
  if (model_path == NULL)
    model_path = g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"), "data", "models",
                                   "SmolLM2-135M-Instruct.Q4_1.gguf", NULL);
  if (!g_file_test (model_path, G_FILE_TEST_EXISTS))
    {
      printf ("1..0 # SKIP the default model is not fetched (%s); run data/fetch-model.sh\n",
              model_path);
      return 77;
    }
  if (sc_model_open (model_path, 2, &model, &err) != SC_OK)
    g_error ("%s", err.message);
  backends[0] = (Backend) { "cpu-ref", sc_backend_cpu_ref_new () };
  backends[1] = (Backend) { "cpu", sc_backend_cpu_new (2, &err) };
  if (backends[1].backend == NULL)
    g_error ("%s", err.message);
  tmpdir = g_dir_make_tmp ("saccade-capture-fixture-XXXXXX", &error);
  g_assert_no_error (error);

  if (write_to != NULL)
    {
      write_fixture (write_to, backends, G_N_ELEMENTS (backends));
      rc = 0;
    }
  else
    {
      fixture = g_build_filename (refdir, "capture-fixture.json", NULL);
      parser = json_parser_new ();
      if (!json_parser_load_from_file (parser, fixture, &error))
        g_error ("%s: %s", fixture, error->message);
      root = json_node_get_object (json_parser_get_root (parser));
      fixture_blas = g_strdup (json_object_get_string_member (root, "blas"));
      cases = json_object_get_array_member (root, "cases");
      g_assert_cmpuint (json_array_get_length (cases), ==,
                        G_N_ELEMENTS (sentences) * G_N_ELEMENTS (backends));
      for (i = 0; i < json_array_get_length (cases); i++)
        {
          JsonObject *o = json_array_get_object_element (cases, i);
          g_autofree char *name = g_strdup_printf ("/capture-fixture/%s/%u",
                                                   json_object_get_string_member (o, "backend"),
                                                   i % (guint) G_N_ELEMENTS (sentences));
          g_test_add_data_func (name, GUINT_TO_POINTER (i), test_case);
        }
      rc = g_test_run ();
    }

  g_rmdir (tmpdir);
  g_free (tmpdir);
  g_free (fixture_blas);
  sc_backend_free (backends[0].backend);
  sc_backend_free (backends[1].backend);
  sc_model_free (model);
  g_free (model_path);
  return rc;
}
