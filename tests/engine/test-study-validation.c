/* test-study-validation.c — a stored study that lies is refused by its kind's loader
 * (issue 25, items 4 and 7), never reused as if true. Each test computes a study of the
 * tiny llama (sc-test-gguf.h) through its kind's descriptor, stores it, reads it back once
 * (accepted), then edits the database as the issue did (with its own SQLite connection,
 * the store closed) and checks that the loader refuses it with SC_ERR_FORMAT and a message
 * that names what is wrong. Before the fix every one of these was accepted: heads missing
 * for the later layers read as NaN effects of a complete sweep, duplicate rows let the last
 * value win, a TV of 7 was ranked, an adversarial study of another head and one with its
 * JSD mean above its maximum were reused, an attribution whose params say "the last
 * position" reported position 3.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>

#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-backward.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store-study.h"
#include "engine/study/sc-ablation-study.h"
#include "engine/study/sc-adversarial.h"
#include "engine/study/sc-attribution.h"
#include "engine/study/sc-permutation-study.h"
#include "engine/study/sc-study.h"
#include "tests/engine/sc-test-gguf.h"

/* <s> and some bytes of the tiny vocabulary: the run every study here describes. */
static const int32_t IDS[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10 };
#define N ((int) G_N_ELEMENTS (IDS))

typedef struct {
  char *dir, *model_path, *db_path;
  ScModel *model;
  ScBackend *backend;
  ScSession *session;
  ScGrad *grad;
  ScStoreModel sm;
  char pj[SC_STUDY_PARAMS_MAX];
} Fixture;

static void
fixture_open (Fixture *f)
{
  ScError err = { 0 };
  gsize len;
  const void *d = g_bytes_get_data (sc_test_tiny_bytes (), &len);

  f->dir = g_dir_make_tmp ("saccade-study-validation-XXXXXX", NULL);
  f->model_path = g_build_filename (f->dir, "tiny.gguf", NULL);
  f->db_path = g_build_filename (f->dir, "s.sqlite", NULL);
  g_assert_true (g_file_set_contents (f->model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (f->model_path, 1, &f->model, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_model_identify (f->model, f->model_path, &f->sm, &err), ==, SC_OK);
  g_assert_nonnull (f->backend = sc_backend_cpu_new (1, &err));
  g_assert_cmpint (sc_session_new (f->model, f->backend, &f->session, &err), ==, SC_OK);
  g_assert_cmpint (sc_grad_new (f->session, &f->grad, &err), ==, SC_OK);
}

static void
fixture_close (Fixture *f)
{
  g_autofree char *wal = g_strconcat (f->db_path, "-wal", NULL);
  g_autofree char *shm = g_strconcat (f->db_path, "-shm", NULL);

  sc_grad_free (f->grad);
  sc_session_free (f->session);
  sc_backend_free (f->backend);
  sc_model_free (f->model);
  g_remove (wal);
  g_remove (shm);
  g_remove (f->db_path);
  g_remove (f->model_path);
  g_rmdir (f->dir);
  g_free (f->db_path);
  g_free (f->model_path);
  g_free (f->dir);
}

static ScStore *
store_open (Fixture *f)
{
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScError err = { 0 };

  if (sc_store_open (f->db_path, &so, &store, &err) != SC_OK)
    g_error ("%s", err.message);
  return store;
}

static ScStudyCtx
ctx_of (Fixture *f)
{
  return (ScStudyCtx) { .model = f->model, .session = f->session, .grad = f->grad,
                        .run_id = 1, .ids = IDS, .n_tokens = N };
}

/* Runs @kind with @params on IDS as run 1, stores it, and reads it back (accepted). */
static void
run_and_store (Fixture *f, const ScStudyKind *kind, const void *params)
{
  ScStudyCtx ctx = ctx_of (f);
  ScStore *store = store_open (f);
  ScError err = { 0 };
  void *r = NULL, *back = NULL;
  int64_t id = 0;

  g_assert_cmpint (sc_study_params_json (kind, params, &ctx, f->pj, sizeof f->pj, &err), ==,
                   SC_OK);
  if (sc_study_run (kind, &ctx, params, &r, &err) != SC_OK)
    g_error ("%s: %s", kind->name, err.message);
  g_assert_cmpint (kind->store (store, &f->sm, f->pj, r, &id, &err), ==, SC_OK);
  if (kind->load (store, sc_model_info (f->model), f->sm.sha256, f->pj, params, &back, NULL,
                  &err) != SC_OK)
    g_error ("%s, as stored: %s", kind->name, err.message);
  kind->result_free (back);
  kind->result_free (r);
  sc_store_close (store);
}

/* Edits the database with its own connection, as a user with sqlite3 would. */
static void
edit (Fixture *f, const char *sql)
{
  sqlite3 *db = NULL;
  char *msg = NULL;

  g_assert_cmpint (sqlite3_open (f->db_path, &db), ==, SQLITE_OK);
  if (sqlite3_exec (db, sql, NULL, NULL, &msg) != SQLITE_OK)
    g_error ("%s: %s", sql, msg);
  sqlite3_close (db);
}

/* The study is refused: SC_ERR_FORMAT, a message holding @needle, no result. */
static void
expect_refused (Fixture *f, const ScStudyKind *kind, const void *params, const char *needle)
{
  ScStore *store = store_open (f);
  ScError err = { 0 };
  void *back = NULL;
  ScStatus st = kind->load (store, sc_model_info (f->model), f->sm.sha256, f->pj, params,
                            &back, NULL, &err);

  g_test_message ("%s: %s", kind->name, err.message);
  sc_store_close (store);
  if (st == SC_OK)
    kind->result_free (back);
  g_assert_cmpint (st, ==, SC_ERR_FORMAT);
  g_assert_null (back);
  g_assert_nonnull (strstr (err.message, needle));
}

/* ------------------------------------------------------------------------------------ */

static void
test_heads_missing_layers (void)
{
  Fixture f;

  fixture_open (&f);
  run_and_store (&f, &sc_study_kind_heads, NULL);
  edit (&f, "DELETE FROM study_heads WHERE layer >= 1");
  expect_refused (&f, &sc_study_kind_heads, NULL, "head L1.H0's 'delta-logp' is missing");
  fixture_close (&f);
}

static void
test_heads_tv_out_of_range (void)
{
  Fixture f;

  fixture_open (&f);
  run_and_store (&f, &sc_study_kind_heads, NULL);
  edit (&f, "UPDATE study_heads SET value = 7 WHERE layer = 0 AND head = 1 AND metric = 'tv'");
  expect_refused (&f, &sc_study_kind_heads, NULL, "head L0.H1's 'tv' is 7, outside [0, 1]");
  fixture_close (&f);
}

static void
test_tokens_count_edited (void)
{
  Fixture f;

  fixture_open (&f);
  run_and_store (&f, &sc_study_kind_tokens, NULL);
  /* the edit: the clean series' token count 40 for a 10-token run */
  edit (&f, "UPDATE study_series SET value = 40 WHERE series = 'clean' AND pos = 4");
  expect_refused (&f, &sc_study_kind_tokens, NULL, "lacks position 10 of its 40");
  fixture_close (&f);
}

static void
test_tokens_target_edited (void)
{
  const ScAblationParams p = { .target = 72, .contrast = -1 };
  Fixture f;

  fixture_open (&f);
  run_and_store (&f, &sc_study_kind_tokens, &p);
  /* the params say target 72; the clean series now says 101 */
  edit (&f, "UPDATE study_series SET value = 101 WHERE series = 'clean' AND pos = 0");
  expect_refused (&f, &sc_study_kind_tokens, &p, "its parameters name target 72, its clean "
                  "series 101");
  fixture_close (&f);
}

/* Duplicated primary keys (the rebuilt table gave head 3.1 a DLA of +99 beside the
 * real one). The store refuses to open a table rebuilt without its key (its schema check),
 * so the rows are built here as the reader would return them, ordered. */
static void
test_duplicate_rows (void)
{
  ScStoreHeadValue heads[3] = { { 3, 1, "dla", 0.25 }, { 3, 1, "dla", 99 }, { 3, 1, "tv", 0.1 } };
  ScStoreSeriesValue series[3] = { { "clean", 0, 5 }, { "clean", 1, -1 }, { "clean", 1, -2 } };
  ScStoreStudyData d = { .id = 3, .kind = "dla", .n_layers = 4, .n_heads = 2, .heads = heads,
                         .n_head_values = 3, .series = series, .n_series_values = 2 };
  ScError err = { 0 };

  g_assert_cmpint (sc_study_check_unique (&d, &err), ==, SC_ERR_FORMAT);
  g_assert_cmpstr (err.message, ==, "study 3 (dla): head L3.H1 holds 'dla' twice");
  heads[1].metric[0] = 'e'; /* "ela": no longer a twin */
  d.n_series_values = 3;
  g_assert_cmpint (sc_study_check_unique (&d, &err), ==, SC_ERR_FORMAT);
  g_assert_cmpstr (err.message, ==, "study 3 (dla): series 'clean' holds position 1 twice");
  d.n_series_values = 2;
  g_assert_cmpint (sc_study_check_unique (&d, &err), ==, SC_OK);
}

static void
test_permute_heads_missing (void)
{
  static const int LIST[] = { 0, 1, 5 };
  const ScPermutationParams p = { .target = -1, .n_permutations = 2, .seed = 1, .heads = LIST,
                                  .n_list = 3 };
  Fixture f;

  fixture_open (&f);
  run_and_store (&f, &sc_study_kind_permute, &p);
  /* head 5 (1.1) and its two permutations (positions 4 and 5) gone: read as a study of
   * two heads under the params of three */
  edit (&f, "DELETE FROM study_heads WHERE layer = 1; DELETE FROM study_series WHERE "
            "series LIKE 'perm.%' AND pos >= 4");
  expect_refused (&f, &sc_study_kind_permute, &p, "head L1.H1, which its parameters list, is "
                  "missing");
  fixture_close (&f);
}

static const ScAdvParams ADV = { .layer = 1, .head = 0, .row = -1, .iterations = 3, .seed = 7 };

static void
test_adversarial_other_head (void)
{
  Fixture f;

  fixture_open (&f);
  run_and_store (&f, &sc_study_kind_adversarial, &ADV);
  /* a study of layer 1 head 2 under the params text of head 0: the issue reused one of
   * another layer and head for --layer 3 --head 0 */
  edit (&f, "UPDATE study_series SET value = 2 WHERE series = 'clean' AND pos = 1");
  expect_refused (&f, &sc_study_kind_adversarial, &ADV, "its parameters say layer 1 head 0");
  fixture_close (&f);
}

static void
test_adversarial_jsd_mean_above_max (void)
{
  Fixture f;

  fixture_open (&f);
  run_and_store (&f, &sc_study_kind_adversarial, &ADV);
  edit (&f, "UPDATE study_series SET value = (SELECT value FROM study_series WHERE "
            "series = 'jsd.max' AND pos = 0) * 0.5 + 0.001 WHERE series = 'jsd.max' AND pos = 0;"
            "UPDATE study_series SET value = (SELECT value FROM study_series WHERE "
            "series = 'jsd.max' AND pos = 0) + 0.001 WHERE series = 'jsd' AND pos = 0");
  expect_refused (&f, &sc_study_kind_adversarial, &ADV, "above the JSD max");
  fixture_close (&f);
}

static void
test_attribution_position_not_last (void)
{
  ScAttrParams p = { .target = -1, .contrast = -1, .position = -1, .methods = 1u << SC_ATTR_SALIENCY };
  Fixture f;

  fixture_open (&f);
  run_and_store (&f, &sc_study_kind_attribution, &p);
  edit (&f, "UPDATE study_series SET value = 3 WHERE series = 'clean' AND pos = 1");
  expect_refused (&f, &sc_study_kind_attribution, &p, "the parameters say position -1");
  fixture_close (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/study-validation/heads-missing-layers", test_heads_missing_layers);
  g_test_add_func ("/study-validation/heads-tv-out-of-range", test_heads_tv_out_of_range);
  g_test_add_func ("/study-validation/tokens-count-edited", test_tokens_count_edited);
  g_test_add_func ("/study-validation/tokens-target-edited", test_tokens_target_edited);
  g_test_add_func ("/study-validation/duplicate-rows", test_duplicate_rows);
  g_test_add_func ("/study-validation/permute-heads-missing", test_permute_heads_missing);
  g_test_add_func ("/study-validation/adversarial-other-head", test_adversarial_other_head);
  g_test_add_func ("/study-validation/adversarial-jsd-mean-above-max",
                   test_adversarial_jsd_mean_above_max);
  g_test_add_func ("/study-validation/attribution-position-not-last",
                   test_attribution_position_not_last);
  return g_test_run ();
}
