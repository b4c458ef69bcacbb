/* test-store-concurrency.c — a second process reads while a capture is being written.
 *
 * tests/store/store-helper captures fake runs without pause (each run's transaction spans its
 * slow "forward pass", so a write transaction is open almost all the time) while this
 * process, through the public read API with the default settings:
 *   - lists the runs over and over: every listed run must read back whole and exact (so no
 *     partial run is ever visible), and the list never shrinks;
 *   - reads random heads and token lists of listed runs;
 *   - reopens its store now and then (opening races with the writer's commits and
 *     checkpoints too).
 * No call may fail — in particular none with SQLITE_BUSY. The reader uses the default busy
 * timeout, as every user does: WAL readers never wait for a writer, but opening may have to
 * wait a moment while the writing process closes its own connection (the last connection
 * checkpoints and removes the WAL under an exclusive lock). The test reports how many
 * calls it made and the slowest one (a reader that waited for a run's transaction, ~20 ms
 * per run here, would show it).
 * Duration: SC_STORE_CONCURRENCY_SECONDS (default 8).
 *
 * /store/concurrency/threads-open: eight threads of one process open stores at once, over and
 * over — a current store, a v5 store opened read-only (another reference schema), and two
 * that are not ours (an extra table, an index given a condition) — as the window's workers do. The
 * schema check's references are built once per version and shared by every thread
 * (engine/store/sc-store-schema.c): each open must still answer as it does alone, the good
 * ones with their runs, the bad ones with the message naming what is wrong.
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "engine/store/sc-store-heads.h"
#include "engine/store/sc-store-predictions.h"
#include "engine/store/sc-store-scores.h"
#include "engine/store/sc-store-study.h"
#include "tests/store/store-fake.h"

/* The helper program: meson passes its path (tests/store/meson.build). */
static char *
helper_path (void)
{
  const char *path = g_getenv ("SC_STORE_HELPER");

  if (path == NULL)
    g_error ("SC_STORE_HELPER is not set (run through meson test)");
  return g_strdup (path);
}

typedef struct {
  guint64 lists, heads, tokens, verified, reopens;
  double slowest_s;
  char slowest_what[64];
} Counts;

static void
timed (Counts *c, gint64 t0, const char *what)
{
  double s = (g_get_monotonic_time () - t0) / 1e6;
  if (s > c->slowest_s)
    {
      c->slowest_s = s;
      g_strlcpy (c->slowest_what, what, sizeof c->slowest_what);
    }
}

static void
fail_on (ScStatus st, const ScError *err, const char *what)
{
  if (st != SC_OK)
    g_error ("%s failed while a capture was being written: %s (%s)", what, err->message,
             sc_status_name (st));
}

static void
test_reader_beside_writer (void)
{
  g_autofree char *helper = helper_path ();
  g_autofree char *dir = g_dir_make_tmp ("sc-store-conc-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "captures.sqlite", NULL);
  const char *env = g_getenv ("SC_STORE_CONCURRENCY_SECONDS");
  const double seconds = env != NULL ? g_ascii_strtod (env, NULL) : 8.0;
  char *argv[] = { helper, path, "1", "0", "24", "160", "1500", NULL };
  ScStoreOptions wopt = { .writable = TRUE };
  GHashTable *verified = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  g_autoptr (GError) error = NULL;
  GRand *rng = g_rand_new_with_seed (7);
  ScStore *s = NULL;
  ScError err = { 0 };
  Counts c = { 0 };
  gint64 start, t0;
  size_t last_n = 0;
  GPid pid;
  int status;

  /* Create the store first, so the reader never meets a half-created file. */
  fail_on (sc_store_open (path, &wopt, &s, &err), &err, "creating the store");
  sc_store_close (s);
  s = NULL;

  if (!g_spawn_async (NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                      NULL, NULL, &pid, &error))
    g_error ("starting %s: %s", helper, error->message);

  start = g_get_monotonic_time ();
  while ((g_get_monotonic_time () - start) / 1e6 < seconds)
    {
      ScStoreRunInfo *runs = NULL;
      size_t n = 0, i;

      if (s == NULL || g_rand_int_range (rng, 0, 20) == 0)
        {
          sc_store_close (s);
          t0 = g_get_monotonic_time ();
          fail_on (sc_store_open (path, NULL, &s, &err), &err, "opening");
          timed (&c, t0, "open");
          c.reopens++;
        }

      t0 = g_get_monotonic_time ();
      fail_on (sc_store_list_runs (s, &runs, &n, &err), &err, "listing runs");
      timed (&c, t0, "list");
      c.lists++;
      g_assert_cmpuint (n, >=, last_n);
      last_n = n;

      for (i = 0; i < n; i++)
        if (!g_hash_table_contains (verified, &runs[i].id))
          {
            g_autofree char *why = NULL;
            t0 = g_get_monotonic_time ();
            if (!store_fake_verify (s, runs[i].id, &why))
              g_error ("a listed run is not whole: %s", why);
            timed (&c, t0, "verify run");
            g_hash_table_add (verified, g_memdup2 (&runs[i].id, sizeof runs[i].id));
            c.verified++;
          }
      if (n > 0)
        {
          const ScStoreRunInfo *r = &runs[g_rand_int_range (rng, 0, (gint32) n)];
          ScStoreHead head = { 0 };
          ScStoreToken *tokens = NULL;
          size_t n_tokens = 0;

          t0 = g_get_monotonic_time ();
          fail_on (sc_store_read_head (s, r->id, g_rand_int_range (rng, 0, STORE_FAKE_LAYERS),
                                       g_rand_int_range (rng, 0, STORE_FAKE_HEADS), &head, &err),
                   &err, "reading a head");
          timed (&c, t0, "read head");
          g_assert_cmpuint (head.n_query, ==, r->n_tokens);
          sc_store_head_clear (&head);
          c.heads++;
          t0 = g_get_monotonic_time ();
          fail_on (sc_store_read_tokens (s, r->id, &tokens, &n_tokens, &err), &err,
                   "reading tokens");
          timed (&c, t0, "read tokens");
          g_assert_cmpuint (n_tokens, ==, r->n_tokens);
          sc_store_tokens_free (tokens);
          c.tokens++;
        }
      sc_store_run_list_free (runs, n);
      g_usleep (2000);
    }
  sc_store_close (s);

  /* The writer must still be writing, not stopped by an error. */
  g_assert_cmpint (waitpid (pid, &status, WNOHANG), ==, 0);
  kill (pid, SIGKILL);
  waitpid (pid, &status, 0);
  g_spawn_close_pid (pid);

  g_test_message ("%.0f s beside the writer: %" G_GUINT64_FORMAT " lists, %" G_GUINT64_FORMAT
                  " head reads, %" G_GUINT64_FORMAT " token reads, %" G_GUINT64_FORMAT
                  " runs verified whole, %" G_GUINT64_FORMAT " opens; slowest call %.3f s (%s)",
                  seconds, c.lists, c.heads, c.tokens, c.verified, c.reopens, c.slowest_s,
                  c.slowest_what);
  printf ("# reader beside a writer for %.0f s: %" G_GUINT64_FORMAT " lists, %" G_GUINT64_FORMAT
          " head reads, %" G_GUINT64_FORMAT " token reads, %" G_GUINT64_FORMAT " runs verified "
          "whole, %" G_GUINT64_FORMAT " opens, 0 failures (0 SQLITE_BUSY); slowest call %.3f s "
          "(%s)\n", seconds, c.lists, c.heads, c.tokens, c.verified, c.reopens, c.slowest_s,
          c.slowest_what);
  g_assert_cmpuint (c.verified, >=, 5);

  /* And the file is sound after the writer's death. */
  fail_on (sc_store_open (path, &wopt, &s, &err), &err, "reopening");
  fail_on (sc_store_check (s, &err), &err, "integrity check");
  sc_store_close (s);
  {
    const char *suffix[] = { "", "-wal", "-shm" };
    int k;
    for (k = 0; k < 3; k++)
      {
        g_autofree char *f = g_strconcat (path, suffix[k], NULL);
        g_unlink (f);
      }
  }
  g_rmdir (dir);
  g_hash_table_unref (verified);
  g_rand_free (rng);
}

/* ------------------------------------------------------------------------------------ */
/* A false "database disk image is malformed" (issue 25, item 1)                         */

/* A shim over SQLite's default VFS that makes the next @shm_failures attempts to map a
 * database's -shm fail with SQLITE_CANTOPEN: what a reader meets when another process
 * creates, recovers or removes the WAL's shared memory at the moment it opens. Only the
 * test installs it; the product has no such hook. */
static sqlite3_vfs shim_vfs;
static sqlite3_vfs *real_vfs;
static sqlite3_io_methods shim_methods;
static const sqlite3_io_methods *real_methods;
static int shm_failures;

static int
shim_shm_map (sqlite3_file *f, int page, int size, int extend, void volatile **out)
{
  if (shm_failures > 0)
    {
      shm_failures--;
      return SQLITE_CANTOPEN;
    }
  return real_methods->xShmMap (f, page, size, extend, out);
}

static int
shim_open (sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags)
{
  int rc = real_vfs->xOpen (real_vfs, name, f, flags, out_flags);

  (void) vfs;
  /* Only the locking unix file of a main database maps a -shm (an immutable one has
   * other methods, with no xShmMap worth failing). */
  if (rc == SQLITE_OK && (flags & SQLITE_OPEN_MAIN_DB) && f->pMethods != NULL
      && f->pMethods->iVersion >= 2 && f->pMethods->xShmMap != NULL
      && (real_methods == NULL || real_methods == f->pMethods))
    {
      if (real_methods == NULL)
        {
          real_methods = f->pMethods;
          shim_methods = *real_methods;
          shim_methods.xShmMap = shim_shm_map;
        }
      f->pMethods = &shim_methods;
    }
  return rc;
}

static void
shim_install (void)
{
  if (real_vfs != NULL)
    return;
  real_vfs = sqlite3_vfs_find (NULL);
  shim_vfs = *real_vfs;
  shim_vfs.zName = "sc-test-shm-shim";
  shim_vfs.xOpen = shim_open;
  g_assert_cmpint (sqlite3_vfs_register (&shim_vfs, 1), ==, SQLITE_OK);
}

/* A reader opens the store while no -wal exists and the -shm cannot be mapped for a moment
 * (the old code took that for "the database file alone is the store" and read it as
 * immutable); then a writer stores and checkpoints several long runs, and deletes one.
 * The reader must see every new run, read every head of each, never get "corrupt", and
 * never see the deleted run. */
static void
test_no_false_corrupt (void)
{
  StoreTmp t;
  ScStoreOptions wopt = { .writable = TRUE };
  g_autofree char *wal = NULL;
  ScStore *reader = NULL, *writer = NULL;
  ScError err = { 0 };
  gint64 ids[4];

  shim_install ();
  store_tmp_init (&t);
  wal = g_strconcat (t.path, "-wal", NULL);
  store_test_three_runs (t.path); /* closed: the last close removed the -wal */
  g_assert_false (g_file_test (wal, G_FILE_TEST_EXISTS));

  shm_failures = 1;
  fail_on (sc_store_open (t.path, NULL, &reader, &err), &err, "opening read-only");
  g_assert_cmpint (shm_failures, ==, 0);

  fail_on (sc_store_open (t.path, &wopt, &writer, &err), &err, "opening to write");
  for (int k = 0; k < 4; k++)
    {
      ScStoreRunInfo *runs = NULL;
      size_t n = 0;

      ids[k] = store_fake_capture (writer, 1000 + (guint64) k, 300 + 40 * k, TRUE, 0, 0, &err);
      if (ids[k] < 0)
        g_error ("capturing: %s", err.message);
      store_test_raw_exec (t.path, "PRAGMA wal_checkpoint(TRUNCATE)");
      fail_on (sc_store_list_runs (reader, &runs, &n, &err), &err, "listing runs");
      g_assert_cmpuint (n, ==, 3 + (size_t) k + 1);
      g_assert_cmpint (runs[n - 1].id, ==, ids[k]);
      sc_store_run_list_free (runs, n);
      for (int i = 0; i <= k; i++)
        {
          g_autofree char *why = NULL;
          if (!store_fake_verify (reader, ids[i], &why))
            g_error ("run %" G_GINT64_FORMAT " read beside the writer: %s", ids[i], why);
        }
    }
  fail_on (sc_store_delete_run (writer, ids[0], &err), &err, "deleting a run");
  store_test_raw_exec (t.path, "PRAGMA wal_checkpoint(TRUNCATE)");
  {
    ScStoreRunInfo info;
    g_assert_cmpint (sc_store_get_run (reader, ids[0], &info, &err), ==, SC_ERR_NOT_FOUND);
  }
  sc_store_close (writer);
  sc_store_close (reader);
  store_tmp_clear (&t);
}

/* ------------------------------------------------------------------------------------ */
/* The stress test (issue 25): every read path beside two writers and a deleter          */

/* The run of @seed: its storage form follows from the seed, so that the reader can rebuild
 * any run it meets from the seed in its text. Long runs, as a Gemma capture writes them:
 * a 520-token band run with layer windows and predictions; a dense causal run; a full
 * run; a sparse run. */
static StoreFakeRun
stress_run (guint64 seed)
{
  switch (seed % 4)
    {
    case 0: return (StoreFakeRun) { seed, 520, TRUE, 64, NULL, 0, 10 };
    case 1: return (StoreFakeRun) { seed, 260, TRUE, 0, NULL, 0, 10 };
    case 2: return (StoreFakeRun) { seed, 90, FALSE, 0, NULL, 0, 0 };
    default: return (StoreFakeRun) { seed, 200, TRUE, 0, NULL, 1e-3, 0 };
    }
}

/* What a child process says on the shared pipe, one line (< PIPE_BUF: written whole):
 *   "C ID T"  run ID committed at monotonic time T (µs)
 *   "S ID"    a study stored;   "D ID"  run ID deleted;   "K"  a TRUNCATE checkpoint done
 *   "E MSG"   an error: the test fails */
static void
say (int fd, const char *fmt, ...) G_GNUC_PRINTF (2, 3);
static void
say (int fd, const char *fmt, ...)
{
  char line[512];
  va_list ap;
  int n;

  va_start (ap, fmt);
  n = g_vsnprintf (line, sizeof line - 1, fmt, ap);
  va_end (ap);
  n = MIN (n, (int) sizeof line - 2);
  line[n++] = '\n';
  if (write (fd, line, (size_t) n) != n)
    _exit (3);
}

/* Writer @which (0 or 1): captures runs of seeds which, which + 2, ... (slowly: each head
 * waits @delay_us, so a run's write transaction is long), a study naming each run, and
 * reopens the store every third run; writer 1 stores heads in row blocks. */
static void
stress_writer (const char *path, int which, gint64 until, int fd)
{
  const ScStoreOptions opt = { .writable = TRUE,
                               .max_blob_bytes = which == 1 ? SC_STORE_MIN_BLOB_BYTES : 0 };
  ScStore *s = NULL;
  ScError err = { 0 };

  for (guint64 seed = (guint64) which; g_get_monotonic_time () < until; seed += 2)
    {
      const StoreFakeRun r = stress_run (seed);
      ScStoreModel m;
      ScStoreStudy *st = NULL;
      char params[96];
      gint64 id;

      if (s == NULL && sc_store_open (path, &opt, &s, &err) != SC_OK)
        say (fd, "E writer %d: opening: %s", which, err.message), _exit (1);
      if ((id = store_fake_capture_run (s, &r, 300, &err)) < 0)
        say (fd, "E writer %d: capturing seed %" G_GUINT64_FORMAT ": %s", which, seed,
             err.message), _exit (1);
      say (fd, "C %" G_GINT64_FORMAT " %" G_GINT64_FORMAT, id, g_get_monotonic_time ());
      store_fake_model (&m, 0);
      g_snprintf (params, sizeof params, "{\"study\":1,\"run\":%" G_GINT64_FORMAT "}", id);
      if (sc_store_study_begin (s, "stress", &m, params, &st, &err) != SC_OK
          || sc_store_study_add_head (st, 1, 2, "x", (double) id, &err) != SC_OK
          || sc_store_study_add_series (st, "y", 0, (double) seed, &err) != SC_OK
          || sc_store_study_commit (st, &id, &err) != SC_OK)
        say (fd, "E writer %d: storing a study: %s", which, err.message), _exit (1);
      say (fd, "S %" G_GINT64_FORMAT, id);
      if (seed % 3 == 0)
        {
          sc_store_close (s);
          s = NULL;
        }
    }
  sc_store_close (s);
  _exit (0);
}

/* The deleter: every 150 ms, deletes the oldest run but the last four, then checkpoints
 * with TRUNCATE through a plain connection (which waits for nobody: SQLITE_BUSY is fine). */
static void
stress_deleter (const char *path, gint64 until, int fd)
{
  const ScStoreOptions opt = { .writable = TRUE };
  ScStore *s = NULL;
  ScError err = { 0 };
  sqlite3 *db = NULL;

  if (sc_store_open (path, &opt, &s, &err) != SC_OK)
    say (fd, "E deleter: opening: %s", err.message), _exit (1);
  if (sqlite3_open (path, &db) != SQLITE_OK)
    say (fd, "E deleter: opening a plain connection"), _exit (1);
  sqlite3_busy_timeout (db, 2000);
  while (g_get_monotonic_time () < until)
    {
      ScStoreRunInfo *runs = NULL;
      size_t n = 0;

      g_usleep (150 * 1000);
      if (sc_store_list_runs (s, &runs, &n, &err) != SC_OK)
        say (fd, "E deleter: listing: %s", err.message), _exit (1);
      if (n > 4)
        {
          const gint64 id = runs[0].id;
          if (sc_store_delete_run (s, id, &err) != SC_OK)
            say (fd, "E deleter: deleting run %" G_GINT64_FORMAT ": %s", id, err.message),
              _exit (1);
          say (fd, "D %" G_GINT64_FORMAT, id);
        }
      sc_store_run_list_free (runs, n);
      if (sqlite3_exec (db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL) == SQLITE_OK)
        say (fd, "K");
    }
  sqlite3_close (db);
  sc_store_close (s);
  _exit (0);
}

typedef struct {
  GHashTable *committed; /* run id -> commit time (µs), until seen or deleted */
  GHashTable *seen;      /* run ids read whole once */
  GHashTable *deleted;
  guint64 reads, gone, runs, studies, deletes, checkpoints, studies_read;
  gint64 worst_visible_us;
  char buf[8192];
  size_t len;
} Stress;

/* Reads what the children said so far (the pipe is non-blocking). */
static void
stress_drain (Stress *x, int fd)
{
  ssize_t got;

  while ((got = read (fd, x->buf + x->len, sizeof x->buf - 1 - x->len)) > 0)
    {
      char *line = x->buf, *nl;
      x->len += (size_t) got;
      x->buf[x->len] = '\0';
      while ((nl = strchr (line, '\n')) != NULL)
        {
          gint64 id = 0, t = 0;
          *nl = '\0';
          if (line[0] == 'E')
            g_error ("a child failed: %s", line + 2);
          else if (sscanf (line, "C %" G_GINT64_FORMAT " %" G_GINT64_FORMAT, &id, &t) == 2)
            {
              x->runs++;
              g_hash_table_insert (x->committed, g_memdup2 (&id, sizeof id),
                                   g_memdup2 (&t, sizeof t));
            }
          else if (sscanf (line, "D %" G_GINT64_FORMAT, &id) == 1)
            {
              x->deletes++;
              g_hash_table_add (x->deleted, g_memdup2 (&id, sizeof id));
              g_hash_table_remove (x->committed, &id);
            }
          else if (line[0] == 'S')
            x->studies++;
          else if (line[0] == 'K')
            x->checkpoints++;
          line = nl + 1;
        }
      x->len -= (size_t) (line - x->buf);
      memmove (x->buf, line, x->len);
    }
}

/* A read's outcome: fine, or the run went away (deleted since it was listed: NOT_FOUND),
 * or the test fails — a FORMAT or DB error ("corrupt") on a healthy store is the bug. */
static gboolean
stress_ok (Stress *x, ScStatus st, const ScError *err, const char *what, gint64 id)
{
  x->reads++;
  if (st == SC_OK)
    return TRUE;
  if (st == SC_ERR_NOT_FOUND)
    {
      x->gone++;
      return FALSE;
    }
  g_error ("%s of run %" G_GINT64_FORMAT " beside two writers and a deleter: %s (%s)", what,
           id, err->message, sc_status_name (st));
  return FALSE;
}

/* Every read path the window uses, on run @info (a run listed a moment ago). */
static void
stress_read_run (Stress *x, ScStore *s, const ScStoreRunInfo *info, GRand *rng)
{
  const gboolean first = !g_hash_table_contains (x->seen, &info->id);
  const int l = g_rand_int_range (rng, 0, STORE_FAKE_LAYERS);
  const int h = g_rand_int_range (rng, 0, STORE_FAKE_HEADS);
  ScStoreRunInfo run = { 0 };
  ScStoreToken *tokens = NULL;
  size_t n_tokens = 0;
  ScStoreHead head = { 0 };
  ScStoreHeadF16 f16 = { 0 };
  ScStoreOverview ov = { 0 };
  ScStorePredictions pred = { 0 };
  ScStoreHeadScores scores = { 0 };
  ScError err = { 0 };
  guint64 seed = 0;
  StoreFakeRun r;

  if (!stress_ok (x, sc_store_get_run (s, info->id, &run, &err), &err, "get_run", info->id))
    return;
  if (sscanf (run.text, "fake run seed=%" G_GUINT64_FORMAT, &seed) != 1)
    g_error ("run %" G_GINT64_FORMAT ": not a fake run's text", info->id);
  r = stress_run (seed);
  g_assert_cmpuint (run.n_tokens, ==, (guint) r.n);
  g_assert_cmpuint (sc_store_run_layer_window (&run, 0), ==, r.window);
  sc_store_run_info_clear (&run);

  if (stress_ok (x, sc_store_read_tokens (s, info->id, &tokens, &n_tokens, &err), &err,
                 "read_tokens", info->id))
    g_assert_cmpuint (n_tokens, ==, (gsize) r.n);
  sc_store_tokens_free (tokens);
  if (stress_ok (x, sc_store_read_head (s, info->id, l, h, &head, &err), &err, "read_head",
                 info->id) && first && r.sparse_eps == 0)
    {
      /* the first time: the head is the one captured, within fp16 rounding */
      g_autofree float *want = store_fake_run_head (&r, l, h);
      for (gsize i = 0; i < (gsize) r.n * r.n; i++)
        if (!store_fake_fp16_close (want[i], head.probs[i]))
          g_error ("run %" G_GINT64_FORMAT " head %d.%d value %zu: %g, captured %g", info->id,
                   l, h, i, head.probs[i], want[i]);
      g_hash_table_add (x->seen, g_memdup2 (&info->id, sizeof info->id));
    }
  else if (first && head.probs != NULL)
    g_hash_table_add (x->seen, g_memdup2 (&info->id, sizeof info->id));
  sc_store_head_clear (&head);
  stress_ok (x, sc_store_read_head_f16 (s, info->id, l, h, &f16, &err), &err, "read_head_f16",
             info->id);
  sc_store_head_f16_clear (&f16);
  {
    g_autofree float *rows = g_new (float, (gsize) 8 * r.n);
    const guint32 q0 = (guint32) g_rand_int_range (rng, 0, r.n - 8);
    stress_ok (x, sc_store_read_head_rows (s, info->id, l, h, q0, q0 + 8, rows, NULL, &err),
               &err, "read_head_rows", info->id);
  }
  if (stress_ok (x, sc_store_read_overview (s, info->id, l, h, &ov, &err), &err,
                 "read_overview", info->id))
    g_assert_false (ov.computed);
  sc_store_overview_clear (&ov);
  if (stress_ok (x, sc_store_read_predictions (s, info->id, &pred, &err), &err,
                 "read_predictions", info->id))
    g_assert_cmpuint (pred.k, ==, r.predictions_k);
  sc_store_predictions_clear (&pred);
  stress_ok (x, sc_store_read_head_scores (s, info->id, &scores, &err), &err,
             "read_head_scores", info->id);
  sc_store_head_scores_clear (&scores);
}

static void
test_stress (void)
{
  const char *env = g_getenv ("SC_STORE_STRESS_SECONDS");
  const double seconds = env != NULL ? g_ascii_strtod (env, NULL) : 6.0;
  /* a committed run must be listed within this (a reader's loop is a few reads) */
  const gint64 visible_bound_us = 5 * G_USEC_PER_SEC;
  StoreTmp t;
  Stress x = { 0 };
  ScStoreOptions wopt = { .writable = TRUE };
  ScStore *s = NULL;
  ScError err = { 0 };
  GRand *rng = g_rand_new_with_seed (25);
  gint64 start, until;
  pid_t kids[3];
  int pipefd[2];

  store_tmp_init (&t);
  fail_on (sc_store_open (t.path, &wopt, &s, &err), &err, "creating the store");
  sc_store_close (s);
  s = NULL;
  x.committed = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
  x.seen = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  x.deleted = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  g_assert_cmpint (pipe (pipefd), ==, 0);
  start = g_get_monotonic_time ();
  until = start + (gint64) (seconds * G_USEC_PER_SEC);
  for (int k = 0; k < 3; k++)
    {
      kids[k] = fork ();
      g_assert_cmpint (kids[k], >=, 0);
      if (kids[k] == 0)
        {
          close (pipefd[0]);
          if (k < 2)
            stress_writer (t.path, k, until, pipefd[1]);
          stress_deleter (t.path, until, pipefd[1]);
        }
    }
  close (pipefd[1]);
  g_assert_cmpint (fcntl (pipefd[0], F_SETFL, O_NONBLOCK), ==, 0);

  while (g_get_monotonic_time () < until)
    {
      ScStoreRunInfo *runs = NULL;
      ScStoreStudyRef *refs = NULL;
      size_t n = 0, n_refs = 0;
      gint64 now;

      stress_drain (&x, pipefd[0]);
      if (s == NULL || g_rand_int_range (rng, 0, 10) == 0)
        {
          sc_store_close (s);
          s = NULL;
          stress_ok (&x, sc_store_open (t.path, NULL, &s, &err), &err, "open", 0);
        }
      stress_ok (&x, sc_store_list_runs (s, &runs, &n, &err), &err, "list_runs", 0);
      now = g_get_monotonic_time ();
      for (size_t i = 0; i < n; i++)
        {
          gint64 *t_commit = g_hash_table_lookup (x.committed, &runs[i].id);
          if (t_commit != NULL)
            {
              x.worst_visible_us = MAX (x.worst_visible_us, now - *t_commit);
              g_hash_table_remove (x.committed, &runs[i].id);
            }
        }
      /* the newest run (the one just committed) and one at random */
      if (n > 0)
        stress_read_run (&x, s, &runs[n - 1], rng);
      if (n > 1)
        stress_read_run (&x, s, &runs[g_rand_int_range (rng, 0, (gint32) n - 1)], rng);
      sc_store_run_list_free (runs, n);

      stress_ok (&x, sc_store_list_studies (s, "stress", &refs, &n_refs, &err), &err,
                 "list_studies", 0);
      if (n_refs > 0)
        {
          ScStoreStudyData *d = NULL;
          const ScStoreStudyRef *ref = &refs[g_rand_int_range (rng, 0, (gint32) n_refs)];
          if (stress_ok (&x, sc_store_read_study (s, ref->id, &d, &err), &err, "read_study",
                         ref->id))
            {
              g_assert_cmpuint (d->n_head_values, ==, 1);
              g_assert_cmpuint (d->n_series_values, ==, 1);
              x.studies_read++;
            }
          sc_store_study_data_free (d);
        }
      sc_store_study_refs_free (refs, n_refs);
      /* every committed run not yet listed is younger than the bound */
      {
        GHashTableIter it;
        gpointer key, value;
        g_hash_table_iter_init (&it, x.committed);
        while (g_hash_table_iter_next (&it, &key, &value))
          if (now - *(gint64 *) value > visible_bound_us)
            g_error ("run %" G_GINT64_FORMAT " was committed %.1f s ago and is not listed",
                     *(gint64 *) key, (now - *(gint64 *) value) / 1e6);
      }
    }
  sc_store_close (s);
  for (int k = 0; k < 3; k++)
    {
      int status = 0;
      g_assert_cmpint (waitpid (kids[k], &status, 0), ==, kids[k]);
      stress_drain (&x, pipefd[0]);
      if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
        g_error ("child %d ended with status 0x%x", k, status);
    }
  stress_drain (&x, pipefd[0]);
  close (pipefd[0]);
  /* the runs committed in the last moment: listed by a last reader */
  fail_on (sc_store_open (t.path, NULL, &s, &err), &err, "opening at the end");
  {
    ScStoreRunInfo *runs = NULL;
    size_t n = 0;
    fail_on (sc_store_list_runs (s, &runs, &n, &err), &err, "listing at the end");
    for (size_t i = 0; i < n; i++)
      g_hash_table_remove (x.committed, &runs[i].id);
    sc_store_run_list_free (runs, n);
  }
  fail_on (sc_store_check (s, &err), &err, "integrity check");
  sc_store_close (s);
  g_assert_cmpuint (g_hash_table_size (x.committed), ==, 0);
  g_assert_cmpuint (x.runs, >=, 4);
  g_assert_cmpuint (g_hash_table_size (x.seen), >=, 2);
  printf ("# stress, %.1f s: %" G_GUINT64_FORMAT " reads (%" G_GUINT64_FORMAT " of a run "
          "deleted meanwhile: not found), %" G_GUINT64_FORMAT " runs and %" G_GUINT64_FORMAT
          " studies written by two writers, %" G_GUINT64_FORMAT " runs deleted, %"
          G_GUINT64_FORMAT " TRUNCATE checkpoints, %u runs read on first sight (one head of each non-sparse run "
          "compared with its capture), %"
          G_GUINT64_FORMAT " studies read; every committed run listed within %.2f s; 0 errors, "
          "0 false corrupt\n",
          (g_get_monotonic_time () - start) / 1e6, x.reads, x.gone, x.runs, x.studies,
          x.deletes, x.checkpoints, g_hash_table_size (x.seen), x.studies_read,
          x.worst_visible_us / 1e6);
  g_hash_table_unref (x.committed);
  g_hash_table_unref (x.seen);
  g_hash_table_unref (x.deleted);
  g_rand_free (rng);
  store_tmp_clear (&t);
}

typedef struct {
  const char *paths[4];
  gint failures; /* atomic */
  char first_failure[512];
  GMutex lock;
} OpenRace;

static void
open_race_fail (OpenRace *r, const char *what)
{
  g_mutex_lock (&r->lock);
  if (g_atomic_int_add (&r->failures, 1) == 0)
    g_strlcpy (r->first_failure, what, sizeof r->first_failure);
  g_mutex_unlock (&r->lock);
}

static gpointer
open_race_thread (gpointer data)
{
  OpenRace *r = data;

  for (int i = 0; i < 40; i++)
    {
      const int which = (i + GPOINTER_TO_INT (g_thread_self ())) & 3;
      const ScStoreOptions ro = { .writable = false };
      ScStore *s = NULL;
      ScError err = { 0 };
      const ScStatus st = sc_store_open (r->paths[which], which == 1 ? &ro : NULL, &s, &err);
      g_autofree char *what = NULL;

      switch (which)
        {
        case 0:
        case 1:
          if (st != SC_OK)
            what = g_strdup_printf ("store %d refused: %s", which, err.message);
          else
            {
              ScStoreRunInfo *runs = NULL;
              size_t n = 0;
              if (sc_store_list_runs (s, &runs, &n, &err) != SC_OK || n != 3)
                what = g_strdup_printf ("store %d: %zu runs listed (%s)", which, n, err.message);
              sc_store_run_list_free (runs, n);
            }
          break;
        case 2:
          if (st != SC_ERR_FORMAT || strstr (err.message, "holds table 'intruder'") == NULL)
            what = g_strdup_printf ("the store with an extra table: %d, '%s'", st, err.message);
          break;
        default:
          if (st != SC_ERR_FORMAT || strstr (err.message, "definition of index") == NULL)
            what = g_strdup_printf ("the store with a changed index: %d, '%s'", st, err.message);
          break;
        }
      sc_store_close (s);
      if (what != NULL)
        {
          open_race_fail (r, what);
          break;
        }
    }
  return NULL;
}

static void
test_threads_open (void)
{
  StoreTmp t;
  OpenRace r = { 0 };
  g_autofree char *v5 = NULL, *extra = NULL, *index = NULL;
  g_autofree char *index_name = NULL, *index_sql = NULL;
  GThread *threads[8];

  store_tmp_init (&t);
  g_mutex_init (&r.lock);
  v5 = g_build_filename (t.dir, "v5.db", NULL);
  extra = g_build_filename (t.dir, "extra.db", NULL);
  index = g_build_filename (t.dir, "index.db", NULL);
  store_test_three_runs (t.path);
  store_test_three_runs (v5);
  store_test_raw_exec (v5, STORE_TEST_TO_V5_SQL);
  store_test_three_runs (extra);
  store_test_raw_exec (extra, "CREATE TABLE intruder (x)");
  store_test_three_runs (index);
  /* the first index of the schema without a condition, made again with one */
  index_name = store_test_raw_text (index, "SELECT name FROM sqlite_schema WHERE type = 'index' "
                                           "AND sql IS NOT NULL AND sql NOT LIKE '%WHERE%' "
                                           "ORDER BY name LIMIT 1");
  index_sql = store_test_raw_text (index, "SELECT 'DROP INDEX ' || name || '; ' || sql || "
                                          "' WHERE 1' FROM sqlite_schema WHERE type = 'index' "
                                          "AND sql IS NOT NULL AND sql NOT LIKE '%WHERE%' "
                                          "ORDER BY name LIMIT 1");
  g_assert_nonnull (index_name);
  store_test_raw_exec (index, index_sql);
  r.paths[0] = t.path;
  r.paths[1] = v5;
  r.paths[2] = extra;
  r.paths[3] = index;

  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("open", open_race_thread, &r);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);
  if (g_atomic_int_get (&r.failures) != 0)
    g_error ("%d of 8 threads saw a wrong answer; the first: %s",
             g_atomic_int_get (&r.failures), r.first_failure);
  printf ("# 8 threads x 40 opens of 4 stores (index %s changed): every answer as alone\n",
          index_name);
  /* the v5 store was only read: still v5 */
  g_assert_cmpint (store_test_raw_int (v5, "PRAGMA user_version"), ==, 5);
  g_mutex_clear (&r.lock);
  store_tmp_clear (&t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/store/concurrency/reader-beside-writer", test_reader_beside_writer);
  g_test_add_func ("/store/concurrency/no-false-corrupt", test_no_false_corrupt);
  g_test_add_func ("/store/concurrency/stress", test_stress);
  g_test_add_func ("/store/concurrency/threads-open", test_threads_open);
  return g_test_run ();
}
