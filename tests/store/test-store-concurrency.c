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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/store/concurrency/reader-beside-writer", test_reader_beside_writer);
  return g_test_run ();
}
