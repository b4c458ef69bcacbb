/* test-store-study.c — study results in the store (engine/store/sc-store-study.h): a
 * round trip, reuse by kind/model/params, a v1 store migrated to v2 with its runs intact
 * byte for byte (and still readable read-only without migrating), and hostile edits of the
 * new tables, each refused with SC_ERR_FORMAT naming what is wrong. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/store/sc-store-study.h"
#include "tests/store/hostile-stores.h"
#include "tests/store/store-fake.h"

static const char PARAMS[] = "{\"seq_len\":5,\"n_seeds\":2}";

/* The model of store_fake_capture's variant 0: 4 layers x 3 heads. */
static void
fake_model (ScStoreModel *m)
{
  memset (m, 0, sizeof *m);
  memset (m->sha256, 0xAB, sizeof m->sha256);
  m->path = "/models/fake.gguf";
  m->file_size = 1234;
  m->name = "fake";
  m->arch = "llama";
  m->n_layers = 4;
  m->n_heads = 3;
  m->n_kv_heads = 3;
  m->head_dim = 8;
  m->n_embd = 24;
  m->n_vocab = 100;
  m->n_ctx_train = 64;
}

static gint64
store_study (ScStore *s, const char *params)
{
  ScStoreModel m;
  ScStoreStudy *st = NULL;
  ScError err = { 0 };
  int64_t id = 0;
  int l, h, p;

  fake_model (&m);
  g_assert_cmpint (sc_store_study_begin (s, "induction", &m, params, &st, &err), ==, SC_OK);
  for (l = 0; l < 4; l++)
    for (h = 0; h < 3; h++)
      {
        g_assert_cmpint (sc_store_study_add_head (st, l, h, "prefix_matching", l + h / 10.0,
                                                  &err), ==, SC_OK);
        g_assert_cmpint (sc_store_study_add_head (st, l, h, "copying", h == 1 ? NAN : -0.5,
                                                  &err), ==, SC_OK);
      }
  for (p = 0; p < 11; p++)
    g_assert_cmpint (sc_store_study_add_series (st, "loss", p, p == 0 ? NAN : 1.0 / p, &err),
                     ==, SC_OK);
  /* out of the model: refused, the study goes on */
  g_assert_cmpint (sc_store_study_add_head (st, 4, 0, "x", 1, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_store_study_commit (st, &id, &err), ==, SC_OK);
  return id;
}

static void
test_round_trip (void)
{
  StoreTmp t;
  ScStore *s;
  ScStoreModel m;
  ScStoreStudyData *d = NULL;
  ScError err = { 0 };
  int64_t id, found = 0;

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  fake_model (&m);
  g_assert_cmpint (sc_store_find_study (s, "induction", m.sha256, PARAMS, &found, &err), ==,
                   SC_ERR_NOT_FOUND);
  id = store_study (s, PARAMS);
  g_assert_cmpint (store_study (s, "{\"seq_len\":6,\"n_seeds\":2}"), >, id);
  g_assert_cmpint (sc_store_find_study (s, "induction", m.sha256, PARAMS, &found, &err), ==,
                   SC_OK);
  g_assert_cmpint (found, ==, id);
  /* the latest of two with the same params */
  g_assert_cmpint (sc_store_find_study (s, "induction", m.sha256, PARAMS, &found, &err), ==,
                   SC_OK);
  g_assert_cmpint (sc_store_read_study (s, id, &d, &err), ==, SC_OK);
  g_assert_cmpstr (d->kind, ==, "induction");
  g_assert_cmpstr (d->params, ==, PARAMS);
  g_assert_cmpint (d->n_layers, ==, 4);
  g_assert_cmpint (d->n_heads, ==, 3);
  g_assert_cmpuint (d->n_head_values, ==, 24);
  g_assert_cmpuint (d->n_series_values, ==, 11);
  /* ordered by layer, head, metric: 0.0 copying, 0.0 prefix_matching, 0.1 copying ... */
  g_assert_cmpstr (d->heads[0].metric, ==, "copying");
  g_assert_cmpfloat (d->heads[0].value, ==, -0.5);
  g_assert_true (isnan (d->heads[2].value)); /* head 0.1 copying: NaN -> NULL -> NaN */
  g_assert_cmpfloat (d->heads[23].value, ==, 3 + 2 / 10.0);
  g_assert_true (isnan (d->series[0].value));
  g_assert_cmpfloat (d->series[4].value, ==, 0.25);
  sc_store_study_data_free (d);

  /* an aborted study is not there */
  {
    ScStoreStudy *st = NULL;
    g_assert_cmpint (sc_store_study_begin (s, "induction", &m, "{}", &st, &err), ==, SC_OK);
    sc_store_study_abort (st);
    g_assert_cmpint (sc_store_find_study (s, "induction", m.sha256, "{}", &found, &err), ==,
                     SC_ERR_NOT_FOUND);
  }
  sc_store_close (s);
  /* read-only: found and read again */
  s = store_test_open (t.path, FALSE);
  g_assert_cmpint (sc_store_find_study (s, "induction", m.sha256, PARAMS, &found, &err), ==,
                   SC_OK);
  g_assert_cmpint (sc_store_read_study (s, found, &d, &err), ==, SC_OK);
  sc_store_study_data_free (d);
  sc_store_close (s);
  store_tmp_clear (&t);
}

/* Every run's rows as text: ids, texts, tokens, the attention BLOBs in hex. */
static char *
dump_runs (const char *path)
{
  return store_test_raw_text (path,
      "SELECT group_concat (x, '|') FROM ("
      " SELECT id || ':' || hex (text) || ':' || n_tokens || ':' || created AS x FROM runs"
      " UNION ALL SELECT run_id || '/' || pos || '/' || token_id || '/' || hex (piece) FROM tokens"
      " UNION ALL SELECT run_id || '.' || layer || '.' || head || '.' || hex (data) FROM attention"
      " ORDER BY 1)");
}

/* A v1 store made by this code (v3 taken back to v2, its v2 objects dropped and
 * user_version 1: the v1 objects' SQL is the same text) opens read-only as v1 without a
 * write, then writable migrates to the current version and keeps every run byte for
 * byte. */
static void
test_migration (void)
{
  StoreTmp t;
  ScStore *s;
  ScStoreModel m;
  ScError err = { 0 };
  int64_t found = 0;
  g_autofree char *before = NULL, *after = NULL, *digest = NULL, *digest2 = NULL;
  g_autofree char *why = NULL;

  store_tmp_init (&t);
  store_test_three_runs (t.path);
  g_assert_true (hostile_exec (t.path, STORE_TEST_TO_V2_SQL, &why));
  g_assert_true (hostile_exec (t.path, "DROP TABLE study_heads; DROP TABLE study_series; "
                               "DROP INDEX studies_kind; PRAGMA user_version = 1", &why));
  g_assert_cmpint (store_test_raw_int (t.path, "PRAGMA user_version"), ==, 1);
  before = dump_runs (t.path);
  digest = store_test_digest (t.path);

  s = store_test_open (t.path, FALSE);
  g_assert_cmpint (sc_store_schema_version (s), ==, 1);
  store_test_assert_run (s, 1);
  fake_model (&m);
  g_assert_cmpint (sc_store_find_study (s, "induction", m.sha256, PARAMS, &found, &err), ==,
                   SC_ERR_NOT_FOUND);
  sc_store_close (s);
  digest2 = store_test_digest (t.path);
  g_assert_cmpstr (digest, ==, digest2); /* read-only: not a byte changed */

  s = store_test_open (t.path, TRUE);
  g_assert_cmpint (sc_store_schema_version (s), ==, SC_STORE_SCHEMA_VERSION);
  store_study (s, PARAMS);
  sc_store_close (s);
  g_assert_cmpint (store_test_raw_int (t.path, "PRAGMA user_version"), ==,
                   SC_STORE_SCHEMA_VERSION);
  after = dump_runs (t.path);
  g_assert_cmpstr (before, ==, after);
  s = store_test_open (t.path, FALSE);
  store_test_assert_run (s, 1);
  store_test_assert_run (s, 2);
  store_test_assert_run (s, 3);
  sc_store_close (s);
  store_tmp_clear (&t);
}

typedef struct {
  const char *sql;
  const char *needle;
} Edit;

/* Hand edits of a stored study (CHECK constraints ignored, as the sqlite3 tool allows). */
static const Edit edits[] = {
  { "UPDATE study_heads SET layer = 4 WHERE layer = 3 AND head = 0 AND metric = 'copying'",
    "head L4.H0, outside the model's 4 layers x 3 heads" },
  { "UPDATE study_heads SET head = -1 WHERE layer = 0 AND head = 0 AND metric = 'copying'",
    "head L0.H-1, outside" },
  { "UPDATE study_heads SET layer = '0x' WHERE layer = 1 AND head = 0 AND metric = 'copying'",
    "outside the model" },
  { "UPDATE study_heads SET value = 'high' WHERE layer = 1 AND head = 2",
    "is not a finite REAL or NULL" },
  { "UPDATE study_heads SET value = x'00' WHERE layer = 1 AND head = 2",
    "is not a finite REAL or NULL" },
  { "UPDATE study_heads SET metric = 'bad name; drop' WHERE layer = 2 AND head = 2 "
    "AND metric = 'copying'",
    "metric name Saccade does not write" },
  { "UPDATE study_series SET pos = 600000 WHERE pos = 3", "loss has position 600000" },
  { "UPDATE study_series SET value = 9e999 WHERE pos = 3", "loss[3] is not a finite REAL" },
  { "UPDATE study_series SET series = '' WHERE pos = 3", "a series name Saccade does not write" },
  { "UPDATE models SET n_layers = 0", "claims 0 layers x 3 heads" },
  { "UPDATE models SET n_heads = 100000", "claims 4 layers x 100000 heads" },
  { "UPDATE studies SET params = x'7b7d'", "params is not a text" },
  { "UPDATE studies SET kind = 'Induction Heads'", "its kind is not a name" },
  { "WITH RECURSIVE c (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 800) "
    "INSERT INTO study_heads SELECT 1, 0, 0, 'm' || i, 1.0 FROM c", "head values, more than" },
};

static void
test_hostile (void)
{
  StoreTmp t;
  g_autofree char *base = NULL;
  gsize i;

  store_tmp_init (&t);
  base = g_build_filename (t.dir, "base.sqlite", NULL);
  {
    ScStore *s = store_test_open (base, TRUE);
    store_study (s, PARAMS);
    sc_store_close (s);
  }
  for (i = 0; i < G_N_ELEMENTS (edits); i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/edit-%zu.sqlite", t.dir, i);
      g_autofree char *why = NULL;
      g_autofree char *bytes = NULL;
      gsize len;
      ScStore *s;
      ScStoreStudyData *d = NULL;
      ScError err = { 0 };

      g_assert_true (g_file_get_contents (base, &bytes, &len, NULL));
      g_assert_true (g_file_set_contents (path, bytes, (gssize) len, NULL));
      if (!hostile_exec (path, edits[i].sql, &why))
        g_error ("edit %zu: %s", i, why);
      s = store_test_open (path, FALSE);
      g_assert_cmpint (sc_store_read_study (s, 1, &d, &err), ==, SC_ERR_FORMAT);
      g_assert_null (d);
      if (strstr (err.message, edits[i].needle) == NULL)
        g_error ("edit %zu (%s): message lacks '%s': %s", i, edits[i].sql, edits[i].needle,
                 err.message);
      g_assert_nonnull (strstr (err.message, path));
      sc_store_close (s);
    }
  store_tmp_clear (&t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/store/study/round-trip", test_round_trip);
  g_test_add_func ("/store/study/migration", test_migration);
  g_test_add_func ("/store/study/hostile", test_hostile);
  return g_test_run ();
}
