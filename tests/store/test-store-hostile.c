/* test-store-hostile.c — the capture store on hostile databases: a store Saccade wrote,
 * edited with SQL the way anyone with the sqlite3 tool could (hostile-stores.c lists the
 * kinds: triggers, views, extra objects, wrapped products, wrong types, missing and
 * misplaced rows, bad BLOBs, non-probabilities, a 300 MB text cell, an exhausted
 * AUTOINCREMENT ...).
 *
 * For each kind, every reading path — opening, listing, getting each run, reading its
 * tokens and every head — returns SC_OK with the right values, or the failure the kind
 * names (status and the words of the message), never a crash or a hang; and a read-only
 * open leaves the file's bytes exactly as they were (SHA-256 before and after; a refused
 * writable open too). Besides: a trigger planted while a store is open never fires during
 * a capture, and a committed WAL in a read-only folder gets a message saying what to do.
 */
#include <glib.h>
#include <math.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/store/sc-store-heads.h"
#include "engine/store/sc-store-merge.h"
#include "engine/store/sc-store-predictions.h"
#include "engine/store/sc-store-scores.h"
#include "engine/store/sc-store-study.h"
#include "tests/store/hostile-stores.h"
#include "tests/store/store-fake.h"

/* SHA-256 of a file, read in 1 MiB pieces (the huge store is 300 MB); "" if absent. */
static char *
digest (const char *path)
{
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree guchar *buf = g_malloc (1u << 20);
  FILE *f = fopen (path, "rb");
  size_t n;

  if (f == NULL)
    return g_strdup ("");
  while ((n = fread (buf, 1, 1u << 20, f)) > 0)
    g_checksum_update (sum, buf, (gssize) n);
  fclose (f);
  return g_strdup (g_checksum_get_string (sum));
}

static void
assert_fails (ScStatus st, const ScError *err, ScStatus want, const char *needle,
              const char *path, const char *call)
{
  g_test_message ("%s: %s", call, err->message);
  if (st != want)
    g_error ("%s returned %s (want %s): %s", call, sc_status_name (st), sc_status_name (want),
             err->message);
  if (needle != NULL && strstr (err->message, needle) == NULL)
    g_error ("%s: message lacks '%s': %s", call, needle, err->message);
  g_assert_nonnull (strstr (err->message, path));
}

/* A failure that is allowed without being the one the kind is about: a clean one. */
static void
assert_clean (ScStatus st, const ScError *err, const char *path, const char *call)
{
  if (st == SC_OK)
    return;
  g_test_message ("%s: %s", call, err->message);
  g_assert_true (st == SC_ERR_FORMAT || st == SC_ERR_UNSUPPORTED || st == SC_ERR_NOT_FOUND);
  g_assert_nonnull (strstr (err->message, path));
}

static void
assert_ok (ScStatus st, const ScError *err, const char *call)
{
  if (st != SC_OK)
    g_error ("%s failed: %s", call, err->message);
}

/* Every reading path over one kind. */
static void
read_everything (const HostileKind *k, const char *path)
{
  ScStoreOptions ro = { 0 };
  ScStore *s = NULL;
  ScStoreRunInfo *runs = NULL;
  ScError err = { 0 };
  size_t n = 0, i;
  ScStatus st;
  gint64 t0;
  int r, l, h;

  assert_ok (sc_store_open (path, &ro, &s, &err), &err, "open");

  t0 = g_get_monotonic_time ();
  st = sc_store_list_runs (s, &runs, &n, &err);
  g_test_message ("list: %.1f ms", (g_get_monotonic_time () - t0) / 1e3);
  if (k->where == HOSTILE_AT_RUN)
    assert_fails (st, &err, k->status, k->needle, path, "list");
  else
    {
      guint hidden = k->where == HOSTILE_HIDDEN ? k->bad_runs : 0;
      assert_ok (st, &err, "list");
      g_assert_cmpuint (n, ==, (guint) (HOSTILE_RUNS - __builtin_popcount (hidden)));
      for (i = 0; i < n; i++)
        {
          g_assert_cmpuint ((hidden >> runs[i].id) & 1, ==, 0);
          g_assert_cmpuint (runs[i].text_len, <=, SC_STORE_LIST_TEXT_BYTES);
          if ((k->flags & HOSTILE_HUGE_TEXT) && runs[i].id == 2)
            {
              g_assert_cmpuint (runs[i].text_len, ==, SC_STORE_LIST_TEXT_BYTES);
              g_assert_true (runs[i].text_truncated);
              /* the first page, not 300 MB: milliseconds even under sanitizers */
              g_assert_cmpint (g_get_monotonic_time () - t0, <, 2 * G_USEC_PER_SEC);
            }
          else
            g_assert_false (runs[i].text_truncated);
        }
    }
  sc_store_run_list_free (runs, n);

  for (r = 1; r <= HOSTILE_RUNS; r++)
    {
      const gboolean bad = (k->bad_runs >> r) & 1;
      ScStoreRunInfo info = { 0 };
      ScStoreToken *tokens = NULL;
      size_t n_tokens = 0;
      char call[64];

      g_snprintf (call, sizeof call, "get run %d", r);
      st = sc_store_get_run (s, r, &info, &err);
      if (bad && (k->where == HOSTILE_AT_RUN || k->where == HOSTILE_HIDDEN))
        assert_fails (st, &err, k->status, k->needle, path, call);
      else
        {
          assert_ok (st, &err, call);
          g_assert_cmpint (info.id, ==, r);
          g_assert_true (info.n_kv_heads >= 1 && info.n_heads % info.n_kv_heads == 0);
          if ((k->flags & HOSTILE_HUGE_TEXT) && r == 2)
            {
              g_assert_cmpuint (info.text_len, ==, hostile_huge_bytes ());
              g_assert_false (info.text_truncated);
              g_assert_true (info.text[0] == 0 && info.text[info.text_len - 1] == 0
                             && info.text[info.text_len] == 0);
            }
        }
      sc_store_run_info_clear (&info);

      g_snprintf (call, sizeof call, "tokens of run %d", r);
      st = sc_store_read_tokens (s, r, &tokens, &n_tokens, &err);
      if (bad && (k->where == HOSTILE_AT_TOKENS || k->where == HOSTILE_HIDDEN))
        assert_fails (st, &err, k->status, k->needle, path, call);
      else if (bad && k->where == HOSTILE_AT_RUN)
        assert_clean (st, &err, path, call);
      else
        assert_ok (st, &err, call);
      if (st == SC_OK)
        g_assert_nonnull (tokens);
      sc_store_tokens_free (tokens);

      for (l = 0; l < STORE_FAKE_LAYERS; l++)
        for (h = 0; h < STORE_FAKE_HEADS; h++)
          {
            ScStoreHead head = { 0 };
            const gboolean this_head = k->where == HOSTILE_AT_HEADS
                                       || (k->where == HOSTILE_AT_HEAD && l == k->layer
                                           && h == k->head)
                                       || k->where == HOSTILE_HIDDEN;
            g_snprintf (call, sizeof call, "run %d layer %d head %d", r, l, h);
            st = sc_store_read_head (s, r, l, h, &head, &err);
            if (bad && this_head)
              assert_fails (st, &err, k->status, k->needle, path, call);
            else if (bad && k->where == HOSTILE_AT_RUN)
              assert_clean (st, &err, path, call);
            else
              assert_ok (st, &err, call);
            if (st == SC_OK)
              {
                /* the contract: every value a probability */
                for (gsize v = 0; v < (gsize) head.n_query * head.n_key; v++)
                  g_assert_true (head.probs[v] >= 0.0f && head.probs[v] <= 1.0f);
              }
            else
              g_assert_null (head.probs);
            sc_store_head_clear (&head);
          }

      /* the runs the kind leaves alone read back exactly as captured */
      if (!bad && !((k->flags & HOSTILE_HUGE_TEXT) && r == 2))
        {
          g_autofree char *why = NULL;
          if (!store_fake_verify (s, r, &why))
            g_error ("run %d: %s", r, why);
        }
    }
  sc_store_close (s);
}

/* One call of read_every: SC_OK, or a clean failure naming the file; a failure holding
 * the kind's needle with its status is remembered in *@found. */
static void
every_call (const HostileKind *k, const char *path, ScStatus st, const ScError *err,
            const char *call, gboolean *found)
{
  if (st == SC_OK)
    return;
  g_test_message ("%s: %s: %s", call, sc_status_name (st), err->message);
  assert_clean (st, err, path, call);
  if (k->needle != NULL && st == k->status && strstr (err->message, k->needle) != NULL)
    *found = TRUE;
}

/* Every reading path over a HOSTILE_EVERY kind, the tables beyond runs, tokens and heads
 * included: each run's heads, overviews, predictions and head scores, every study by id,
 * the studies listed by kind, the shard manifests. Each call returns SC_OK with values
 * inside the contracts, or a clean failure; a kind with a needle fails somewhere with it,
 * one with status SC_OK (and no needle) nowhere. */
static void
read_every (const HostileKind *k, const char *path, gboolean merge)
{
  static const char *const study_kinds[] = { "shard", "ablate-heads", "faithfulness" };
  ScStoreOptions ro = { 0 };
  ScStore *s = NULL;
  ScStoreRunInfo *runs = NULL;
  ScError err = { 0 };
  gboolean found = FALSE;
  size_t n = 0;
  ScStatus st;
  char call[96];

  assert_ok (sc_store_open (path, &ro, &s, &err), &err, "open");
  st = sc_store_list_runs (s, &runs, &n, &err);
  every_call (k, path, st, &err, "list", &found);
  sc_store_run_list_free (runs, n);
  for (int r = 1; r <= HOSTILE_EVERY_RUNS; r++)
    {
      ScStoreRunInfo info = { 0 };
      ScStoreToken *tokens = NULL;
      size_t n_tokens = 0;
      ScStorePredictions pred = { 0 };
      ScStoreHeadScores scores = { 0 };

      g_snprintf (call, sizeof call, "get run %d", r);
      st = sc_store_get_run (s, r, &info, &err);
      every_call (k, path, st, &err, call, &found);
      g_snprintf (call, sizeof call, "tokens of run %d", r);
      st = sc_store_read_tokens (s, r, &tokens, &n_tokens, &err);
      every_call (k, path, st, &err, call, &found);
      sc_store_tokens_free (tokens);
      for (int l = 0; l < STORE_FAKE_LAYERS; l++)
        for (int h = 0; h < STORE_FAKE_HEADS; h++)
          {
            ScStoreHead head = { 0 };
            ScStoreOverview ov = { 0 };

            g_snprintf (call, sizeof call, "run %d layer %d head %d", r, l, h);
            st = sc_store_read_head (s, r, l, h, &head, &err);
            if (st != SC_ERR_NOT_FOUND || info.kept == NULL)
              every_call (k, path, st, &err, call, &found);
            if (st == SC_OK)
              for (gsize v = 0; v < (gsize) head.n_query * head.n_key; v++)
                g_assert_true (head.probs[v] >= 0.0f && head.probs[v] <= 1.0f);
            sc_store_head_clear (&head);
            g_snprintf (call, sizeof call, "overview of run %d layer %d head %d", r, l, h);
            st = sc_store_read_overview (s, r, l, h, &ov, &err);
            if (st != SC_ERR_NOT_FOUND || info.kept == NULL)
              every_call (k, path, st, &err, call, &found);
            if (st == SC_OK)
              for (gsize v = 0; v < (gsize) ov.size * ov.size; v++)
                g_assert_true (ov.values[v] >= 0.0f && ov.values[v] <= 1.0f);
            sc_store_overview_clear (&ov);
          }
      g_snprintf (call, sizeof call, "predictions of run %d", r);
      st = sc_store_read_predictions (s, r, &pred, &err);
      every_call (k, path, st, &err, call, &found);
      if (st == SC_OK && info.id == r)
        {
          g_assert_true (pred.n_positions == 0 || pred.n_positions == info.n_tokens);
          for (gsize v = 0; v < (gsize) pred.n_positions * pred.k; v++)
            g_assert_cmpuint (pred.pieces[v].len, <=, SC_STORE_MAX_PREDICTION_PIECE_BYTES);
        }
      sc_store_predictions_clear (&pred);
      g_snprintf (call, sizeof call, "head scores of run %d", r);
      st = sc_store_read_head_scores (s, r, &scores, &err);
      every_call (k, path, st, &err, call, &found);
      if (st == SC_OK)
        for (guint32 h = 0; h < scores.n_layers * scores.n_heads; h++)
          g_assert_true (scores.stats[h].last_top >= 0
                         && scores.stats[h].last_top < (int) scores.n_tokens);
      sc_store_head_scores_clear (&scores);
      sc_store_run_info_clear (&info);
    }
  for (gint64 id = 1; id <= 5; id++)
    {
      ScStoreStudyData *d = NULL;

      g_snprintf (call, sizeof call, "study %" G_GINT64_FORMAT, id);
      st = sc_store_read_study (s, id, &d, &err);
      if (st != SC_ERR_NOT_FOUND)
        every_call (k, path, st, &err, call, &found);
      sc_store_study_data_free (d);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (study_kinds); i++)
    {
      ScStoreStudyRef *refs = NULL;
      size_t n_refs = 0;

      g_snprintf (call, sizeof call, "studies of kind %s", study_kinds[i]);
      st = sc_store_list_studies (s, study_kinds[i], &refs, &n_refs, &err);
      every_call (k, path, st, &err, call, &found);
      sc_store_study_refs_free (refs, n_refs);
    }
  sc_store_close (s);

  /* the merge takes the store as a shard: merged whole (and the result reads as cleanly) or
   * refused with a message naming the file */
  if (merge)
    {
      g_autofree char *dir = g_path_get_dirname (path);
      g_autofree char *out = g_build_filename (dir, "merged.sqlite", NULL);
      const char *const shards[] = { path };
      ScStoreMergeStats stats = { 0 };
      HostileKind quiet = *k;

      st = sc_store_merge (out, shards, 1, NULL, NULL, &stats, &err);
      if (st != SC_OK)
        {
          g_test_message ("merge: %s: %s", sc_status_name (st), err.message);
          g_assert_true (st == SC_ERR_FORMAT || st == SC_ERR_INVALID_ARG
                         || st == SC_ERR_UNSUPPORTED);
          g_assert_nonnull (strstr (err.message, path));
          if (k->needle != NULL && st == k->status && strstr (err.message, k->needle) != NULL)
            found = TRUE;
          g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
        }
      else
        {
          g_test_message ("merge: %zu runs, %zu studies, %zu left out", stats.n_runs_added,
                          stats.n_studies_added, stats.n_skipped);
          quiet.needle = NULL;
          read_every (&quiet, out, FALSE);
          g_unlink (out);
        }
    }
  if (k->needle != NULL && !found)
    g_error ("%s: no reading call failed with %s and '%s'", k->name, sc_status_name (k->status),
             k->needle);
}

/* An exhausted AUTOINCREMENT: the next capture says so (not "the disk is full"), and the
 * store is left as it was. */
static void
capture_with_no_ids_left (const char *path)
{
  ScStoreOptions rw = { .writable = TRUE };
  ScStore *s = NULL;
  ScError err = { 0 };

  assert_ok (sc_store_open (path, &rw, &s, &err), &err, "writable open");
  g_assert_cmpint (store_fake_capture (s, 9, 4, TRUE, 0, 0, &err), ==, -1);
  g_test_message ("capture: %s", err.message);
  g_assert_cmpint (err.status, ==, SC_ERR_RANGE);
  store_test_assert_message (&err, "has given out every run id");
  store_test_assert_message (&err, "earlier runs are intact");
  g_assert_null (strstr (err.message, "disk is full"));
  sc_store_close (s);
  store_test_assert_nothing_lost (path, HOSTILE_RUNS, FALSE);
}

static void
test_kind (gconstpointer data)
{
  const HostileKind *k = data;
  StoreTmp t;
  g_autofree char *base = NULL, *why = NULL, *before = NULL, *after = NULL, *wal = NULL;

  store_tmp_init (&t);
  base = g_build_filename (t.dir, "base.sqlite", NULL);
  wal = g_strconcat (t.path, "-wal", NULL);
  if (k->flags & HOSTILE_EVERY)
    hostile_base_every (base);
  else
    hostile_base (base);
  if (!hostile_build (k, base, t.path, &why))
    {
      g_test_skip (why);
      store_tmp_clear (&t);
      return;
    }
  g_test_message ("%s: %s", k->name, k->what);
  before = digest (t.path);
  if (k->where == HOSTILE_AT_OPEN)
    {
      /* refused read-only and writable, saying what it found and what to do, untouched */
      store_test_assert_open_fails (t.path, FALSE, k->status, k->needle);
      store_test_assert_open_fails (t.path, TRUE, k->status, k->needle);
    }
  else if (k->where == HOSTILE_SOMEWHERE)
    read_every (k, t.path, TRUE);
  else
    read_everything (k, t.path);
  after = digest (t.path);
  g_assert_cmpstr (before, ==, after);
  g_assert_false (store_test_file_size (wal) > 0);
  if (k->flags & HOSTILE_SEQUENCE_MAX)
    capture_with_no_ids_left (t.path);
  store_tmp_clear (&t);
}

/* The head scores of a run of chosen heads: the heads it did not keep have every score NaN
 * and their last top key, an int, is 0 (a position callers may index with). Found by
 * fuzz-store under UBSan: the reader converted the NaN to int, undefined behaviour, which
 * `saccade heads` then used as an index into the run's token labels. */
static void
test_scores_of_unkept_heads (void)
{
  StoreTmp t;
  ScStore *s;
  ScStoreHeadScores scores = { 0 };
  ScError err = { 0 };

  store_tmp_init (&t);
  hostile_base_every (t.path);
  s = store_test_open (t.path, FALSE);
  assert_ok (sc_store_read_head_scores (s, 3, &scores, &err), &err, "head scores of run 3");
  for (guint32 h = 0; h < scores.n_layers * scores.n_heads; h++)
    if (HOSTILE_EVERY_KEEP[h])
      g_assert_true (scores.stats[h].last_top >= 0 && scores.stats[h].last_top < 5);
    else
      {
        g_assert_cmpint (scores.stats[h].last_top, ==, 0);
        g_assert_true (isnan (scores.stats[h].last_top_weight) && isnan (scores.stats[h].entropy));
      }
  sc_store_head_scores_clear (&scores);
  sc_store_close (s);
  store_tmp_clear (&t);
}

/* ------------------------------------------------------------------------------------ */

/* SHA-256 over every row of the runs before @below: runs, tokens and heads, as stored. */
static char *
rows_digest (const char *path, gint64 below)
{
  static const char *const queries[] = {
    "SELECT id, model_id, text, created, backend, n_tokens, forward_ms, capture_ms, "
    "attention_bytes, status FROM runs WHERE id < ?1 ORDER BY id",
    "SELECT run_id, pos, token_id, piece FROM tokens WHERE run_id < ?1 ORDER BY run_id, pos",
    "SELECT run_id, layer, head, n_query, n_key, layout, dtype, data FROM attention "
    "WHERE run_id < ?1 ORDER BY run_id, layer, head",
  };
  g_autoptr (GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  sqlite3 *db = NULL;
  gint64 rows = 0;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  for (gsize q = 0; q < G_N_ELEMENTS (queries); q++)
    {
      sqlite3_stmt *st = NULL;
      g_assert_cmpint (sqlite3_prepare_v2 (db, queries[q], -1, &st, NULL), ==, SQLITE_OK);
      sqlite3_bind_int64 (st, 1, below);
      while (sqlite3_step (st) == SQLITE_ROW)
        {
          for (int c = 0; c < sqlite3_column_count (st); c++)
            {
              const void *b = sqlite3_column_blob (st, c);
              g_checksum_update (sum, (const guchar *) "|", 1);
              if (b != NULL)
                g_checksum_update (sum, b, sqlite3_column_bytes (st, c));
            }
          rows++;
        }
      sqlite3_finalize (st);
    }
  sqlite3_close (db);
  return g_strdup_printf ("%s (%" G_GINT64_FORMAT " rows)", g_checksum_get_string (sum), rows);
}

/* A trigger planted by another process while the store is open (after its schema was
 * checked) never fires: triggers are off on every connection. Earlier runs stay byte for
 * byte. In plain SQLite the same trigger does fire (the control), and opening the store
 * afterwards refuses it. */
static void
test_planted_trigger_never_fires (void)
{
  static const char plant[] = "CREATE TRIGGER wipe AFTER INSERT ON attention BEGIN "
                              "DELETE FROM attention WHERE run_id < NEW.run_id; END";
  StoreTmp t;
  g_autofree char *before = NULL, *after = NULL, *control = NULL, *why = NULL;
  ScStoreOptions rw = { .writable = TRUE };
  ScStore *s = NULL;
  ScError err = { 0 };

  store_tmp_init (&t);
  hostile_base (t.path);
  assert_ok (sc_store_open (t.path, &rw, &s, &err), &err, "writable open");
  g_assert_cmpint (store_fake_capture (s, 4, 5, TRUE, 0, 0, &err), ==, 4); /* the writer runs */
  before = rows_digest (t.path, 5);
  g_assert_true (hostile_exec (t.path, plant, &why));
  g_assert_cmpint (store_fake_capture (s, 5, 7, TRUE, 0, 0, &err), ==, 5);
  g_assert_cmpint (store_fake_capture (s, 6, 3, FALSE, 1, 0, &err), ==, 6);
  sc_store_close (s);
  after = rows_digest (t.path, 5);
  g_test_message ("runs 1-4 before: %s, after: %s", before, after);
  g_assert_cmpstr (before, ==, after);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count (*) FROM attention"), ==,
                   6 * STORE_FAKE_LAYERS * STORE_FAKE_HEADS);

  /* the control: plain SQLite runs it */
  control = g_build_filename (t.dir, "control.sqlite", NULL);
  {
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true (g_file_get_contents (t.path, &bytes, &len, NULL));
    g_assert_true (g_file_set_contents (control, bytes, (gssize) len, NULL));
  }
  g_assert_true (hostile_exec (control, "INSERT INTO attention (run_id, layer, head, n_query, "
                                        "n_key, layout, dtype, data) VALUES (6, 9, 9, 1, 1, "
                                        "'causal', 'f16', zeroblob (2))", &why));
  g_assert_cmpint (store_test_raw_int (control, "SELECT count (*) FROM attention WHERE run_id < 6"),
                   ==, 0);

  /* and the store with it is refused, read-only and writable */
  store_test_assert_open_fails (t.path, FALSE, SC_ERR_FORMAT, "holds trigger 'wipe'");
  store_test_assert_open_fails (t.path, TRUE, SC_ERR_FORMAT, "a trigger runs its own SQL");
  store_tmp_clear (&t);
}

/* The check, as a user who may read but not write the folder. */
static void
committed_wal_checks (const char *path)
{
  ScStoreOptions ro = { 0 };
  ScStore *s = NULL;
  ScError err = { 0 };
  ScStatus st = sc_store_open (path, &ro, &s, &err);

  g_assert_null (s);
  assert_fails (st, &err, SC_ERR_IO, "latest runs are still in", path, "open");
  store_test_assert_message (&err, "is not writable");
  store_test_assert_message (&err, "copy the file together with its -wal");
}

/* A store whose -wal holds a committed change, without its -shm, in a folder nobody may
 * write: SQLite cannot read it; the message says why and what to do. Once the folder is
 * writable the same open works and shows the change. */
static void
test_committed_wal_read_only_folder (void)
{
  StoreTmp t;
  g_autofree char *wal = NULL, *shm = NULL, *db_before = NULL, *wal_before = NULL;
  g_autofree char *db_after = NULL, *wal_after = NULL;
  gboolean root = geteuid () == 0;
  ScStoreRunInfo info = { 0 };
  ScError err = { 0 };
  ScStore *s;
  sqlite3 *db = NULL;
  pid_t pid;
  int status = 0;

  store_tmp_init (&t);
  hostile_base (t.path);
  wal = g_strconcat (t.path, "-wal", NULL);
  shm = g_strconcat (t.path, "-shm", NULL);
  /* a committed transaction left in the WAL: no checkpoint on close */
  g_assert_cmpint (sqlite3_open (t.path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_db_config (db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "PRAGMA wal_autocheckpoint = 0; "
                                     "UPDATE runs SET backend = 'edited' WHERE id = 1", NULL,
                                 NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
  g_unlink (shm);
  g_assert_cmpint (store_test_file_size (wal), >, 0);
  db_before = digest (t.path);
  wal_before = digest (wal);

  if (root)
    g_assert_cmpint (chown (t.path, 65534, 65534), ==, 0);
  g_assert_cmpint (g_chmod (t.dir, 0555), ==, 0);
  if (!root)
    committed_wal_checks (t.path);
  else if ((pid = fork ()) == 0)
    {
      if (setgid (65534) != 0 || setuid (65534) != 0)
        _exit (3);
      committed_wal_checks (t.path);
      _exit (0);
    }
  else
    {
      g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
      g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    }
  g_assert_cmpint (g_chmod (t.dir, 0755), ==, 0);
  db_after = digest (t.path);
  wal_after = digest (wal);
  g_assert_cmpstr (db_before, ==, db_after);
  g_assert_cmpstr (wal_before, ==, wal_after);

  /* where the folder is writable, the same read-only open sees the committed change */
  s = store_test_open (t.path, FALSE);
  assert_ok (sc_store_get_run (s, 1, &info, &err), &err, "get run 1");
  g_assert_cmpstr (info.backend, ==, "edited");
  sc_store_run_info_clear (&info);
  sc_store_close (s);
  store_tmp_clear (&t);
}

int
main (int argc, char **argv)
{
  const HostileKind *kinds;
  gsize n, i;

  g_test_init (&argc, &argv, NULL);
  kinds = hostile_kinds (&n);
  for (i = 0; i < n; i++)
    {
      g_autofree char *name = g_strconcat ("/store/hostile/", kinds[i].name, NULL);
      g_test_add_data_func (name, &kinds[i], test_kind);
    }
  g_test_add_func ("/store/hostile/planted-trigger-never-fires", test_planted_trigger_never_fires);
  g_test_add_func ("/store/hostile/scores-of-unkept-heads", test_scores_of_unkept_heads);
  g_test_add_func ("/store/hostile/committed-wal-read-only-folder",
                   test_committed_wal_read_only_folder);
  return g_test_run ();
}
