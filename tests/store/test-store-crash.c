/* test-store-crash.c — SIGKILL a capturing process at random moments.
 *
 * Each trial starts tests/store/store-helper on the same database (so runs accumulate across
 * trials), kills it with SIGKILL after a random delay — while it opens the store, writes a
 * run's rows, commits, checkpoints or closes — and then checks, as the next user of the
 * file would see it:
 *   1. PRAGMA integrity_check passes;
 *   2. every run the helper reported committed, in this trial or any earlier one, is
 *      listed and reads back exactly (tokens, text, every head);
 *   3. every listed run is complete: 'complete' status, all 12 heads, all its tokens;
 *      no row of a run that did not commit is left (no partial run).
 * Half the trials slow the helper's "forward pass" (so most kills land inside a run's
 * transaction), half let it write flat out (so kills land in commits and checkpoints).
 * The number of trials is SC_STORE_CRASH_TRIALS (default 24, at least 20).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

static gint64
raw_int (sqlite3 *db, const char *sql)
{
  sqlite3_stmt *st = NULL;
  gint64 v = -1;

  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &st, NULL), ==, SQLITE_OK);
  if (sqlite3_step (st) == SQLITE_ROW)
    v = sqlite3_column_int64 (st, 0);
  sqlite3_finalize (st);
  return v;
}

typedef struct {
  int trials, mid_run, in_open, runs_committed;
} Tally;

/* Runs one trial; adds the ids the helper reported committed to @committed. */
static void
trial (const char *helper, const char *path, int t, GRand *rng, GHashTable *committed,
       Tally *tally)
{
  gboolean slow = t % 2 == 0;
  g_autofree char *seed = g_strdup_printf ("%d", 1000 * (t + 1));
  char *argv[] = { (char *) helper, (char *) path, seed, "0", slow ? "16" : "32",
                   slow ? "128" : "200", slow ? "2500" : "0", NULL };
  g_autoptr (GError) error = NULL;
  g_autoptr (GIOChannel) out = NULL;
  g_autofree char *text = NULL;
  g_auto (GStrv) lines = NULL;
  const char *last = "";
  GPid pid;
  int fd_out, status, delay_ms, i;

  if (!g_spawn_async_with_pipes (NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid,
                                 NULL, &fd_out, NULL, &error))
    g_error ("starting %s: %s", helper, error->message);
  /* Up to 700 ms: the helper needs ~10 ms to start, a slow run takes ~30 ms x its size. */
  delay_ms = g_rand_int_range (rng, 1, slow ? 700 : 350);
  g_usleep ((gulong) delay_ms * 1000);
  g_assert_cmpint (kill (pid, SIGKILL), ==, 0);
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_spawn_close_pid (pid);
  g_assert_true (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);

  out = g_io_channel_unix_new (fd_out);
  g_io_channel_set_close_on_unref (out, TRUE);
  g_io_channel_read_to_end (out, &text, NULL, NULL);
  lines = g_strsplit (text != NULL ? text : "", "\n", -1);
  for (i = 0; lines[i] != NULL; i++)
    {
      gint64 id;
      if (g_str_has_prefix (lines[i], "error"))
        g_error ("helper: %s", lines[i]);
      if (sscanf (lines[i], "committed %" G_GINT64_FORMAT, &id) == 1)
        {
          g_hash_table_add (committed, g_memdup2 (&id, sizeof id));
          tally->runs_committed++;
        }
      if (*lines[i] != '\0')
        last = lines[i];
    }
  if (g_str_has_prefix (last, "begin"))
    tally->mid_run++;
  else if (*last == '\0')
    tally->in_open++;
  tally->trials++;
  g_test_message ("trial %d (%s): killed after %d ms; last line '%s'", t, slow ? "slow" : "fast",
                  delay_ms, last);
}

/* The checks after a kill. */
static void
verify (const char *path, GHashTable *committed)
{
  ScStoreOptions opt = { .writable = TRUE };
  ScStore *s = NULL;
  ScStoreRunInfo *runs = NULL;
  ScError err = { 0 };
  GHashTable *listed = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  GHashTableIter it;
  gpointer key;
  sqlite3 *db = NULL;
  size_t n = 0, i;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      /* killed before the store existed */
      g_assert_cmpuint (g_hash_table_size (committed), ==, 0);
      g_hash_table_unref (listed);
      return;
    }
  /* Open it as the next capture would (this runs WAL recovery). */
  if (sc_store_open (path, &opt, &s, &err) != SC_OK)
    g_error ("reopening after the kill: %s", err.message);
  if (sc_store_check (s, &err) != SC_OK)
    g_error ("%s", err.message);
  g_assert_cmpint (sc_store_list_runs (s, &runs, &n, &err), ==, SC_OK);
  for (i = 0; i < n; i++)
    {
      g_autofree char *why = NULL;
      if (!store_fake_verify (s, runs[i].id, &why))
        g_error ("after a kill: %s", why);
      g_hash_table_add (listed, g_memdup2 (&runs[i].id, sizeof runs[i].id));
    }
  sc_store_run_list_free (runs, n);
  g_hash_table_iter_init (&it, committed);
  while (g_hash_table_iter_next (&it, &key, NULL))
    if (!g_hash_table_contains (listed, key))
      g_error ("run %" G_GINT64_FORMAT " was committed but is gone", *(gint64 *) key);
  sc_store_close (s);

  /* No trace of a run that did not commit, and every run whole. */
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (raw_int (db, "SELECT count(*) FROM runs WHERE status <> 'complete'"), ==, 0);
  g_assert_cmpint (raw_int (db, "SELECT count(*) FROM runs"), ==, (gint64) n);
  g_assert_cmpint (raw_int (db, "SELECT count(*) FROM attention WHERE run_id NOT IN "
                                "(SELECT id FROM runs)"), ==, 0);
  g_assert_cmpint (raw_int (db, "SELECT count(*) FROM tokens WHERE run_id NOT IN "
                                "(SELECT id FROM runs)"), ==, 0);
  g_assert_cmpint (raw_int (db, "SELECT count(*) FROM runs r WHERE (SELECT count(*) FROM "
                                "attention a WHERE a.run_id = r.id) <> 12 OR (SELECT count(*) "
                                "FROM tokens t WHERE t.run_id = r.id) <> r.n_tokens"), ==, 0);
  sqlite3_close (db);
  g_hash_table_unref (listed);
}

static void
test_sigkill (void)
{
  g_autofree char *helper = helper_path ();
  g_autofree char *dir = g_dir_make_tmp ("sc-store-crash-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "captures.sqlite", NULL);
  const char *env = g_getenv ("SC_STORE_CRASH_TRIALS");
  int n_trials = MAX (env != NULL ? atoi (env) : 24, 20), t; /* the issue asks for >= 20 */
  GHashTable *committed = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  GRand *rng = g_rand_new_with_seed (20240611);
  Tally tally = { 0 };
  const char *suffix[] = { "", "-wal", "-shm" };

  g_assert_true (g_file_test (helper, G_FILE_TEST_IS_EXECUTABLE));
  for (t = 0; t < n_trials; t++)
    {
      trial (helper, path, t, rng, committed, &tally);
      verify (path, committed);
    }
  g_test_message ("%d trials: %d killed inside a run, %d before the first output; %d runs "
                  "committed in all, every one intact", tally.trials, tally.mid_run,
                  tally.in_open, tally.runs_committed);
  printf ("# %d SIGKILL trials: %d inside a run's transaction, %d while opening; %u runs "
          "committed and intact; integrity_check ok after each\n", tally.trials, tally.mid_run,
          tally.in_open, g_hash_table_size (committed));
  g_assert_cmpint (tally.trials, >=, 20);
  /* Most kills land inside a run (23 of 24 on a quiet machine); a loaded machine starts
   * the helper later, so only ask for enough of them to mean something. */
  g_assert_cmpint (tally.mid_run, >=, 5);
  g_assert_cmpuint (g_hash_table_size (committed), >, 0);

  for (t = 0; t < (int) G_N_ELEMENTS (suffix); t++)
    {
      g_autofree char *f = g_strconcat (path, suffix[t], NULL);
      g_unlink (f);
    }
  g_rmdir (dir);
  g_hash_table_unref (committed);
  g_rand_free (rng);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/store/crash/sigkill", test_sigkill);
  return g_test_run ();
}
