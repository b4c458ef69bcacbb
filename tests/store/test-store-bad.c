/* test-store-bad.c — the capture store on bad input: each case fails with a clear message
 * naming the file, and nothing is lost.
 *
 *   not a database, another application's SQLite file, a damaged header, a truncated file,
 *   garbage over interior pages; run ids and heads that do not exist; misuse of the capture
 *   API; a read-only file and a read-only folder (as root, the checks run in a child that
 *   became "nobody"); a full disk three ways (a size quota, a file-size limit, a real tmpfs);
 *   a database locked by another writer.
 */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <sched.h>
#include <signal.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/store/sc-store-private.h"
#include "tests/store/store-fake.h"

static void
test_not_a_database (void)
{
  StoreTmp t;

  store_tmp_init (&t);
  g_assert_true (g_file_set_contents (t.path, "Dear diary,\nthis is not a database. "
                                      "It is long enough to hold a header, though: "
                                      "0123456789012345678901234567890123456789012345678901234"
                                      "5678901234567890123456789\n", -1, NULL));
  store_test_assert_open_fails (t.path, TRUE, SC_ERR_DB, "is not an SQLite database");
  store_test_assert_open_fails (t.path, FALSE, SC_ERR_DB, "is not an SQLite database");
  /* a folder where the file should be */
  store_test_assert_open_fails (t.dir, TRUE, SC_ERR_IO, "is a folder");
  /* a missing file, read-only */
  {
    g_autofree char *missing = g_build_filename (t.dir, "missing.sqlite", NULL);
    ScStoreOptions ro = { 0 };
    ScError err = { 0 };
    ScStore *s = NULL;
    g_assert_cmpint (sc_store_open (missing, &ro, &s, &err), ==, SC_ERR_NOT_FOUND);
    store_test_assert_message (&err, "no capture store at");
    g_assert_false (g_file_test (missing, G_FILE_TEST_EXISTS));
  }
  store_tmp_clear (&t);
}

static void
test_foreign_database (void)
{
  StoreTmp t;

  store_tmp_init (&t);
  store_test_raw_exec (t.path, "CREATE TABLE recipes (name TEXT); INSERT INTO recipes VALUES ('soup')");
  store_test_assert_open_fails (t.path, TRUE, SC_ERR_FORMAT, "is an SQLite database but not a Saccade "
                                                  "capture store");
  store_test_assert_open_fails (t.path, FALSE, SC_ERR_FORMAT, "not a Saccade capture store");
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM recipes"), ==, 1);
  store_tmp_clear (&t);
}

static void
overwrite (const char *path, gint64 at, const void *bytes, gsize len)
{
  FILE *f = fopen (path, "r+b");
  g_assert_nonnull (f);
  g_assert_cmpint (fseek (f, (long) at, SEEK_SET), ==, 0);
  g_assert_cmpuint (fwrite (bytes, 1, len, f), ==, len);
  fclose (f);
}

static void
test_corrupt (void)
{
  StoreTmp t;
  ScStore *s = NULL;
  ScError err = { 0 };
  ScStoreRunInfo *runs = NULL;
  size_t n = 0;
  gint64 size;
  guint8 garbage[SC_STORE_PAGE_SIZE];
  ScStatus st;
  int l, h, failures = 0;
  gint64 r;

  store_tmp_init (&t);

  /* (a) a damaged header */
  store_test_three_runs (t.path);
  overwrite (t.path, 0, "SQLite formax 3", 16);
  store_test_assert_open_fails (t.path, TRUE, SC_ERR_DB, "is not an SQLite database");
  store_test_assert_open_fails (t.path, FALSE, SC_ERR_DB, "is not an SQLite database");
  g_unlink (t.path);

  /* (b) truncated to a third: opens (the header is intact), but reading the cut-off runs
   * fails with a message, never a crash */
  store_test_three_runs (t.path);
  size = store_test_file_size (t.path);
  g_assert_cmpint (truncate (t.path, size / 3), ==, 0);
  st = sc_store_open (t.path, NULL, &s, &err);
  if (st == SC_OK)
    {
      st = sc_store_check (s, &err);
      g_assert_cmpint (st, ==, SC_ERR_DB);
      g_test_message ("truncated: %s", err.message);
      store_test_assert_message (&err, t.path);
      for (r = 1; r <= 3; r++)
        {
          g_autofree char *why = NULL;
          failures += !store_fake_verify (s, r, &why);
          if (why != NULL)
            g_test_message ("truncated, run %" G_GINT64_FORMAT ": %s", r, why);
        }
      g_assert_cmpint (failures, >, 0);
      sc_store_close (s);
    }
  else
    {
      g_test_message ("truncated: %s", err.message);
      store_test_assert_message (&err, t.path);
    }
  g_unlink (t.path);

  /* (c) garbage over interior pages (the b-tree of the attention table and the heads):
   * every failing call says the store is corrupt; nothing crashes; integrity_check
   * notices */
  store_test_three_runs (t.path);
  size = store_test_file_size (t.path);
  memset (garbage, 0xA5, sizeof garbage);
  for (r = 2; r < size / SC_STORE_PAGE_SIZE; r += 3)
    overwrite (t.path, r * SC_STORE_PAGE_SIZE, garbage, sizeof garbage);
  s = store_test_open (t.path, FALSE);
  g_assert_cmpint (sc_store_check (s, &err), ==, SC_ERR_DB);
  store_test_assert_message (&err, "fails its integrity check");
  st = sc_store_list_runs (s, &runs, &n, &err);
  if (st != SC_OK)
    {
      g_assert_cmpint (st, ==, SC_ERR_DB);
      store_test_assert_message (&err, "corrupt");
    }
  sc_store_run_list_free (runs, n);
  failures = 0;
  for (r = 1; r <= 3; r++)
    for (l = 0; l < STORE_FAKE_LAYERS; l++)
      for (h = 0; h < STORE_FAKE_HEADS; h++)
        {
          ScStoreHead head = { 0 };
          st = sc_store_read_head (s, r, l, h, &head, &err);
          if (st != SC_OK && st != SC_ERR_NOT_FOUND)
            {
              failures++;
              g_assert_true (st == SC_ERR_DB || st == SC_ERR_FORMAT);
              store_test_assert_message (&err, t.path);
            }
          sc_store_head_clear (&head);
        }
  g_test_message ("garbage pages: %d of %d head reads failed cleanly (%s)", failures,
                  3 * STORE_FAKE_LAYERS * STORE_FAKE_HEADS, err.message);
  g_assert_cmpint (failures, >, 0);
  sc_store_close (s);
  store_tmp_clear (&t);
}

static void
test_missing_run (void)
{
  StoreTmp t;
  ScStore *s;
  ScStoreRunInfo info = { 0 };
  ScStoreHead head = { 0 };
  ScStoreToken *tok = NULL;
  ScError err = { 0 };
  size_t n = 0;

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  store_test_capture (s, 1, 5, TRUE);
  g_assert_cmpint (sc_store_get_run (s, 42, &info, &err), ==, SC_ERR_NOT_FOUND);
  store_test_assert_message (&err, "has no run 42");
  store_test_assert_message (&err, t.path);
  g_assert_cmpint (sc_store_read_head (s, 42, 0, 0, &head, &err), ==, SC_ERR_NOT_FOUND);
  store_test_assert_message (&err, "has no run 42");
  g_assert_cmpint (sc_store_read_tokens (s, 42, &tok, &n, &err), ==, SC_ERR_NOT_FOUND);
  store_test_assert_message (&err, "has no run 42");
  g_assert_cmpint (sc_store_delete_run (s, 42, &err), ==, SC_ERR_NOT_FOUND);
  store_test_assert_message (&err, "has no run 42");
  g_assert_cmpint (sc_store_read_head (s, 1, STORE_FAKE_LAYERS, 0, &head, &err), ==,
                   SC_ERR_NOT_FOUND);
  store_test_assert_message (&err, "run 1 has no layer 4 head 0");
  g_assert_cmpint (sc_store_read_head (s, 1, 0, -1, &head, &err), ==, SC_ERR_NOT_FOUND);
  g_assert_cmpint (sc_store_read_head (s, -3, 0, 0, &head, &err), ==, SC_ERR_NOT_FOUND);
  g_assert_null (head.probs);
  store_test_assert_run (s, 1);
  sc_store_close (s);
  store_tmp_clear (&t);
}

/* Misuse of the capture API fails clearly and stores nothing. */
static void
test_capture_misuse (void)
{
  StoreTmp t;
  ScStore *s, *ro;
  ScStoreCapture *cap = NULL, *cap2 = NULL;
  ScStoreModel model;
  ScStoreRunDesc desc = { 0 };
  g_autofree ScStoreToken *tokens = store_fake_tokens (1, 6);
  g_autofree float *p = store_fake_head (1, 0, 0, 6, TRUE);
  ScError err = { 0 };
  ScObserver obs;
  gint64 id = 0;
  int l, h;

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  store_test_capture (s, 1, 6, TRUE);
  store_fake_model (&model, 0);
  desc.model = &model;
  desc.tokens = tokens;
  desc.n_tokens = 6;
  desc.backend = "fake";

  /* read-only stores do not capture */
  ro = store_test_open (t.path, FALSE);
  g_assert_cmpint (sc_store_capture_begin (ro, &desc, &cap, &err), ==, SC_ERR_INVALID_ARG);
  store_test_assert_message (&err, "opened read-only");
  g_assert_cmpint (sc_store_delete_run (ro, 1, &err), ==, SC_ERR_INVALID_ARG);
  sc_store_close (ro);

  /* no tokens */
  desc.n_tokens = 0;
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_ERR_INVALID_ARG);
  desc.n_tokens = 6;

  /* one capture at a time */
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap2, &err), ==, SC_ERR_INVALID_ARG);
  store_test_assert_message (&err, "another capture is open");

  /* a missing head: the commit fails and nothing is stored */
  for (l = 0; l < STORE_FAKE_LAYERS; l++)
    for (h = 0; h < STORE_FAKE_HEADS; h++)
      if (l != 2 || h != 1)
        g_assert_cmpint (sc_store_capture_add_head (cap, l, h, p, 6, 6, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_capture_commit (cap, -1, &id, &err), ==, SC_ERR_INVALID_ARG);
  store_test_assert_message (&err, "the run has 11 of the 12 heads it keeps");
  store_test_assert_message (&err, "earlier runs are intact");

  /* a head out of range, of the wrong shape, twice: the capture fails, the observer says
   * stop, the commit reports the first error */
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_OK);
  obs = sc_store_capture_observer (cap);
  g_assert_true (obs.observe (obs.user, 0, 0, p, 6, 6));
  g_assert_cmpint (sc_store_capture_add_head (cap, 0, 0, p, 6, 6, &err), ==, SC_ERR_INVALID_ARG);
  store_test_assert_message (&err, "layer 0 head 0 was added twice");
  g_assert_false (obs.observe (obs.user, 0, 1, p, 6, 6));
  g_assert_cmpint (sc_store_capture_status (cap, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_store_capture_commit (cap, -1, &id, &err), ==, SC_ERR_INVALID_ARG);
  store_test_assert_message (&err, "added twice");

  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_capture_add_head (cap, 9, 0, p, 6, 6, &err), ==, SC_ERR_INVALID_ARG);
  store_test_assert_message (&err, "outside the run's 4 x 3 heads");
  sc_store_capture_abort (cap);

  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_capture_add_head (cap, 0, 0, p, 5, 5, &err), ==, SC_ERR_INVALID_ARG);
  store_test_assert_message (&err, "the run's heads are 6 x 6");
  sc_store_capture_abort (cap);

  /* abort after every head: nothing stored */
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_OK);
  for (l = 0; l < STORE_FAKE_LAYERS; l++)
    for (h = 0; h < STORE_FAKE_HEADS; h++)
      g_assert_cmpint (sc_store_capture_add_head (cap, l, h, p, 6, 6, &err), ==, SC_OK);
  sc_store_capture_abort (cap);
  sc_store_capture_abort (NULL);

  /* closing a store with a capture open aborts it */
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_capture_add_head (cap, 0, 0, p, 6, 6, &err), ==, SC_OK);
  sc_store_close (s);

  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM runs"), ==, 1);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM attention"), ==, 12);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM tokens"), ==, 6);
  s = store_test_open (t.path, TRUE);
  store_test_assert_run (s, 1);
  g_assert_cmpint (store_test_capture (s, 2, 6, TRUE), ==, 2); /* ids of rolled-back runs are reused */
  sc_store_close (s);
  store_tmp_clear (&t);
}

/* What a run is (runs.kind, prompt_tokens; schema v5): stored as the capture says,
 * checked when it begins, read back, and refused by name when someone else wrote it. */
static void
test_run_kind (void)
{
  StoreTmp t;
  ScStore *s;
  ScStoreCapture *cap = NULL;
  ScStoreModel model;
  ScStoreRunDesc desc = { 0 };
  g_autofree ScStoreToken *tokens = store_fake_tokens (1, 6);
  g_autofree float *p = store_fake_head (1, 0, 0, 6, TRUE);
  ScStoreRunInfo info = { 0 };
  ScError err = { 0 };
  const struct { ScRunKind kind; uint32_t n_prompt; const char *id; } KINDS[] = {
    { SC_RUN_KIND_UNKNOWN, 0, NULL }, { SC_RUN_KIND_TEXT, 0, "text" },
    { SC_RUN_KIND_CHAT, 0, "chat" }, { SC_RUN_KIND_GENERATED, 4, "generated" },
    { SC_RUN_KIND_IDS, 0, "ids" },
  };
  gint64 id = 0;
  char sql[160];

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  store_fake_model (&model, 0);
  desc = (ScStoreRunDesc) { .model = &model, .text = "abc", .text_len = 3, .tokens = tokens,
                            .n_tokens = 6, .backend = "fake" };
  for (gsize k = 0; k < G_N_ELEMENTS (KINDS); k++)
    {
      desc.kind = KINDS[k].kind;
      desc.n_prompt = KINDS[k].n_prompt;
      g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_OK);
      for (int l = 0; l < STORE_FAKE_LAYERS; l++)
        for (int h = 0; h < STORE_FAKE_HEADS; h++)
          g_assert_cmpint (sc_store_capture_add_head (cap, l, h, p, 6, 6, &err), ==, SC_OK);
      g_assert_cmpint (sc_store_capture_commit (cap, -1, &id, &err), ==, SC_OK);
      g_assert_cmpint (sc_store_get_run (s, id, &info, &err), ==, SC_OK);
      g_assert_cmpint (info.kind, ==, KINDS[k].kind);
      g_assert_cmpuint (info.n_prompt, ==, KINDS[k].n_prompt);
      g_assert_cmpstr (sc_run_kind_id (info.kind), ==, KINDS[k].id);
      sc_store_run_info_clear (&info);
    }

  /* a prompt only for a generated run, and shorter than it; no kind past the last */
  desc.kind = SC_RUN_KIND_GENERATED;
  desc.n_prompt = 6;
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_ERR_INVALID_ARG);
  store_test_assert_message (&err, "a generated run of 6 tokens cannot have a prompt of 6");
  desc.n_prompt = 0;
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_ERR_INVALID_ARG);
  desc.kind = SC_RUN_KIND_TEXT;
  desc.n_prompt = 2;
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_ERR_INVALID_ARG);
  store_test_assert_message (&err, "a non-generated run");
  desc.kind = SC_RUN_N_KINDS;
  desc.n_prompt = 0;
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_ERR_INVALID_ARG);
  store_test_assert_message (&err, "is not a kind of run");
  sc_store_close (s);

  /* Edited by someone else, past the schema's CHECKs: refused by name, the others read. */
  g_snprintf (sql, sizeof sql, "PRAGMA ignore_check_constraints = ON; "
              "UPDATE runs SET kind = 'poem' WHERE id = 2");
  store_test_raw_exec (t.path, sql);
  g_snprintf (sql, sizeof sql, "PRAGMA ignore_check_constraints = ON; "
              "UPDATE runs SET prompt_tokens = 9 WHERE id = 4");
  store_test_raw_exec (t.path, sql);
  g_snprintf (sql, sizeof sql, "PRAGMA ignore_check_constraints = ON; "
              "UPDATE runs SET prompt_tokens = 1 WHERE id = 3");
  store_test_raw_exec (t.path, sql);
  s = store_test_open (t.path, FALSE);
  g_assert_cmpint (sc_store_get_run (s, 2, &info, &err), ==, SC_ERR_FORMAT);
  store_test_assert_message (&err, "runs.kind is text poem, not NULL or one of text, chat, "
                                   "generated, ids");
  g_assert_cmpint (sc_store_get_run (s, 4, &info, &err), ==, SC_ERR_FORMAT);
  store_test_assert_message (&err, "runs.prompt_tokens is 9; only a generated run has one");
  g_assert_cmpint (sc_store_get_run (s, 3, &info, &err), ==, SC_ERR_FORMAT);
  store_test_assert_message (&err, "runs.prompt_tokens is 1");
  g_assert_cmpint (sc_store_get_run (s, 5, &info, &err), ==, SC_OK);
  g_assert_cmpint (info.kind, ==, SC_RUN_KIND_IDS);
  sc_store_run_info_clear (&info);
  sc_store_close (s);
  store_tmp_clear (&t);
}

/* The checks, as a user who may read but not write. */
static void
read_only_checks (const StoreTmp *t, gboolean folder)
{
  ScStore *s = NULL;
  ScStoreRunInfo *runs = NULL;
  ScStoreCapture *cap = NULL;
  ScStoreRunDesc desc = { 0 };
  ScError err = { 0 };
  size_t n = 0;

  /* writing fails, saying why */
  store_test_assert_open_fails (t->path, TRUE, SC_ERR_IO, folder ? "is not writable" : "is read-only");
  /* reading works */
  s = store_test_open (t->path, FALSE);
  g_assert_cmpint (sc_store_list_runs (s, &runs, &n, &err), ==, SC_OK);
  g_assert_cmpuint (n, ==, 3);
  sc_store_run_list_free (runs, n);
  store_test_assert_run (s, 1);
  store_test_assert_run (s, 3);
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_ERR_INVALID_ARG);
  sc_store_close (s);
}

/* A store whose file (or folder) the user cannot write. Root ignores permission bits, so
 * as root the checks run in a child process that has become "nobody". */
static void
read_only_body (gboolean folder)
{
  StoreTmp t;
  g_autofree char *before = NULL, *after = NULL;
  gboolean root = geteuid () == 0;
  pid_t pid;
  int status = 0;

  store_tmp_init (&t);
  store_test_three_runs (t.path);
  before = store_test_digest (t.path);
  if (folder)
    {
      /* the file is the user's and writable; only the folder is not */
      if (root)
        g_assert_cmpint (chown (t.path, 65534, 65534), ==, 0);
      g_assert_cmpint (g_chmod (t.path, 0644), ==, 0);
      g_assert_cmpint (g_chmod (t.dir, 0555), ==, 0);
    }
  else
    {
      /* the folder takes new files (-wal, -shm); the file is read-only */
      if (root)
        g_assert_cmpint (chown (t.dir, 65534, 65534), ==, 0);
      g_assert_cmpint (g_chmod (t.dir, root ? 0755 : 0777), ==, 0);
      g_assert_cmpint (g_chmod (t.path, 0444), ==, 0);
    }
  if (!root)
    read_only_checks (&t, folder);
  else if ((pid = fork ()) == 0)
    {
      if (setgid (65534) != 0 || setuid (65534) != 0)
        _exit (3);
      read_only_checks (&t, folder);
      _exit (0);
    }
  else
    {
      g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
      g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    }
  after = store_test_digest (t.path);
  g_assert_cmpstr (before, ==, after);
  store_tmp_clear (&t);
}

static void
test_read_only_file (void)
{
  read_only_body (FALSE);
}

static void
test_read_only_folder (void)
{
  read_only_body (TRUE);
}

/* A full disk, simulated by a size limit on the database (PRAGMA max_page_count). */
static void
test_full_disk_quota (void)
{
  StoreTmp t;
  /* an empty store takes ~18 pages (1.1 MB at 64 KiB pages); two small runs fit */
  ScStoreOptions opt = { .writable = TRUE, .max_bytes = 3u << 20 };
  ScError err = { 0 };
  ScStore *s = NULL;
  gint64 id;

  store_tmp_init (&t);
  g_assert_cmpint (sc_store_open (t.path, &opt, &s, &err), ==, SC_OK);
  g_assert_cmpint (store_fake_capture (s, 1, 64, TRUE, 0, 0, &err), ==, 1);
  g_assert_cmpint (store_fake_capture (s, 2, 64, TRUE, 0, 0, &err), ==, 2);
  /* 12 heads of 500 x 501 bytes: 3 MB, over the limit */
  id = store_fake_capture (s, 3, 500, TRUE, 0, 0, &err);
  g_assert_cmpint (id, ==, -1);
  g_test_message ("quota: %s", err.message);
  g_assert_cmpint (err.status, ==, SC_ERR_DB);
  store_test_assert_message (&err, t.path);
  store_test_assert_message (&err, "the disk is full");
  store_test_assert_message (&err, "the run was not stored, earlier runs are intact");
  /* the store stays usable */
  g_assert_cmpint (store_fake_capture (s, 4, 16, TRUE, 0, 0, &err), ==, 3);
  sc_store_close (s);
  store_test_assert_nothing_lost (t.path, 3, FALSE);
  store_tmp_clear (&t);
}

/* A full disk, simulated by a file size limit (RLIMIT_FSIZE): the writes themselves fail,
 * as they do when a disk fills up. */
static void
test_full_disk_fsize (void)
{
  StoreTmp t;
  ScError err = { 0 };
  ScStore *s;
  struct rlimit rl;
  gint64 limit, id;
  g_autofree char *wal = NULL;

  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
      g_test_trap_assert_passed ();
      return;
    }
  signal (SIGXFSZ, SIG_IGN);
  store_tmp_init (&t);
  wal = g_strconcat (t.path, "-wal", NULL);
  s = store_test_open (t.path, TRUE);
  store_test_capture (s, 1, 64, TRUE);
  store_test_capture (s, 2, 64, TRUE);
  limit = MAX (store_test_file_size (t.path), store_test_file_size (wal)) + 64 * 1024;
  g_assert_cmpint (getrlimit (RLIMIT_FSIZE, &rl), ==, 0);
  rl.rlim_cur = (rlim_t) limit;
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &rl), ==, 0);
  /* 12 heads of 500 x 501 bytes (3 MB): more than the WAL, which the two schema
   * migrations and two runs grew to ~1.5 MB, can take again without growing */
  id = store_fake_capture (s, 3, 500, TRUE, 0, 0, &err);
  g_assert_cmpint (id, ==, -1);
  g_printerr ("# file size limit %" G_GINT64_FORMAT ": %s\n", limit, err.message);
  g_assert_cmpint (err.status, ==, SC_ERR_DB);
  store_test_assert_message (&err, t.path);
  /* SQLite reports the failed write as an I/O error (EFBIG is not ENOSPC) */
  g_assert_true (strstr (err.message, "the disk is full") != NULL
                 || strstr (err.message, "writing to the disk failed (is it full?)") != NULL);
  store_test_assert_message (&err, "earlier runs are intact");
  rl.rlim_cur = rl.rlim_max;
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &rl), ==, 0);
  sc_store_close (s);
  store_test_assert_nothing_lost (t.path, 2, TRUE);
  store_tmp_clear (&t);
}

/* A real full disk: a 4 MiB tmpfs in a private mount namespace (needs root or user
 * namespaces; skipped where neither is allowed). */
static void
test_full_disk_tmpfs (void)
{
  StoreTmp t;
  g_autofree char *mnt = NULL, *path = NULL;
  ScError err = { 0 };
  ScStore *s;
  int r, ok = 0;
  gint64 id = 0;

  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
      if (g_test_trap_has_passed ())
        return;
      g_test_trap_assert_stdout ("*cannot mount a tmpfs here*");
      g_test_skip ("cannot mount a tmpfs here (no root, no user namespaces)");
      return;
    }
  store_tmp_init (&t);
  mnt = g_build_filename (t.dir, "mnt", NULL);
  g_mkdir (mnt, 0755);
  if (unshare (CLONE_NEWNS | (geteuid () == 0 ? 0 : CLONE_NEWUSER)) != 0
      || mount ("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0
      || mount ("tmpfs", mnt, "tmpfs", 0, "size=4m") != 0)
    {
      printf ("cannot mount a tmpfs here: %s\n", g_strerror (errno));
      fflush (stdout);
      store_tmp_clear (&t);
      exit (1);
    }
  path = g_build_filename (mnt, "captures.sqlite", NULL);
  s = store_test_open (path, TRUE);
  /* runs of 12 x 150 x 151 bytes (272 kB) until the disk is full */
  for (r = 1; r <= 40; r++)
    {
      id = store_fake_capture (s, (guint64) r, 150, TRUE, 0, 0, &err);
      if (id < 0)
        break;
      ok++;
    }
  g_assert_cmpint (id, ==, -1);
  g_assert_cmpint (ok, >, 0);
  g_printerr ("# tmpfs full after %d runs: %s\n", ok, err.message);
  g_assert_cmpint (err.status, ==, SC_ERR_DB);
  store_test_assert_message (&err, "the disk is full");
  store_test_assert_message (&err, "earlier runs are intact");
  sc_store_close (s);
  store_test_assert_nothing_lost (path, ok, FALSE);
  umount (mnt);
  store_tmp_clear (&t);
}

/* Another process holds the write lock: a capture waits for the busy timeout, then fails
 * saying so; reading goes on meanwhile; once the lock is gone, capturing works. */
static void
test_locked (void)
{
  StoreTmp t;
  ScStoreOptions opt = { .writable = TRUE, .busy_timeout_ms = 300 };
  ScStore *s = NULL, *ro;
  ScStoreRunInfo *runs = NULL;
  ScError err = { 0 };
  sqlite3 *other = NULL;
  size_t n = 0;
  gint64 t0, id;

  store_tmp_init (&t);
  store_test_three_runs (t.path);
  g_assert_cmpint (sqlite3_open (t.path, &other), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (other, "BEGIN IMMEDIATE; DELETE FROM head_scores", NULL, NULL,
                                 NULL), ==, SQLITE_OK);

  g_assert_cmpint (sc_store_open (t.path, &opt, &s, &err), ==, SC_OK);
  t0 = g_get_monotonic_time ();
  id = store_fake_capture (s, 4, 16, TRUE, 0, 0, &err);
  g_assert_cmpint (id, ==, -1);
  g_test_message ("locked: %s (after %.2f s)", err.message,
                  (g_get_monotonic_time () - t0) / 1e6);
  g_assert_cmpint (err.status, ==, SC_ERR_DB);
  store_test_assert_message (&err, "locked by another process");
  store_test_assert_message (&err, t.path);
  g_assert_cmpint (g_get_monotonic_time () - t0, >=, 250000);

  g_assert_cmpint (sc_store_delete_run (s, 1, &err), ==, SC_ERR_DB);
  store_test_assert_message (&err, "locked by another process");

  ro = store_test_open (t.path, FALSE);
  g_assert_cmpint (sc_store_list_runs (ro, &runs, &n, &err), ==, SC_OK);
  g_assert_cmpuint (n, ==, 3);
  sc_store_run_list_free (runs, n);
  store_test_assert_run (ro, 2);
  sc_store_close (ro);

  g_assert_cmpint (sqlite3_exec (other, "COMMIT", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (other);
  g_assert_cmpint (store_fake_capture (s, 5, 16, TRUE, 0, 0, &err), ==, 4);
  sc_store_close (s);
  store_test_assert_nothing_lost (t.path, 4, FALSE);
  store_tmp_clear (&t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/store/bad/not-a-database", test_not_a_database);
  g_test_add_func ("/store/bad/foreign-database", test_foreign_database);
  g_test_add_func ("/store/bad/corrupt", test_corrupt);
  g_test_add_func ("/store/bad/missing-run", test_missing_run);
  g_test_add_func ("/store/bad/capture-misuse", test_capture_misuse);
  g_test_add_func ("/store/bad/run-kind", test_run_kind);
  g_test_add_func ("/store/bad/read-only-file", test_read_only_file);
  g_test_add_func ("/store/bad/read-only-folder", test_read_only_folder);
  g_test_add_func ("/store/bad/full-disk-quota", test_full_disk_quota);
  g_test_add_func ("/store/bad/full-disk-fsize", test_full_disk_fsize);
  g_test_add_func ("/store/bad/full-disk-tmpfs", test_full_disk_tmpfs);
  g_test_add_func ("/store/bad/locked", test_locked);
  return g_test_run ();
}
