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
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/store/concurrency/reader-beside-writer", test_reader_beside_writer);
  g_test_add_func ("/store/concurrency/no-false-corrupt", test_no_false_corrupt);
  return g_test_run ();
}
