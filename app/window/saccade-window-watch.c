/* saccade-window-watch.c — noticing runs that another process (the command line, a second
 * window) adds to or deletes from the open database, so the sidebar lists them without
 * reopening.
 *
 * How: a read-only SQLite connection of our own on the database, and SQLite's
 * `PRAGMA data_version` on it every WATCH_MS. The value changes exactly when another
 * connection has committed since the last time this one asked (sqlite.org/pragma.html
 * #pragma_data_version); this connection never writes, so it never changes the value
 * itself. A file monitor was the other way, and a worse one: every connection SQLite opens
 * and closes on a WAL database touches the -wal and -shm files, so the window's own reads
 * (each list and load opens the store) would wake it, and reloading would wake it again.
 *
 * Pass order, so that no commit is missed and none is counted twice:
 *   1. every list of the runs (saccade_window_runs_reload) first records the value
 *      (saccade_window_watch_sync): whatever was committed before is in that list;
 *   2. a poll that finds another value asks for a new list, unless the window is busy
 *      (capturing, loading, listing, deleting): then it waits for a later poll;
 *   3. the window's own captures and deletes are commits of other connections too, but
 *      each ends in a list (pass 1), which takes the new value: no second list.
 * The list keeps the run shown selected (saccade-window-runs.c).
 *
 * Not here: reading runs (saccade-run.c), the schema (engine/store). The connection lives
 * on the main thread: the pragma reads one counter from the WAL index, microseconds, and
 * never waits for a writer (WAL readers do not block).
 */
#define G_LOG_DOMAIN "saccade-window"

#include "app/window/saccade-window-private.h"

#include <sqlite3.h>

/* Once a second: a run the command line stores appears while the user still looks. */
#define WATCH_MS 1000

typedef struct {
  sqlite3 *db;        /* read-only, or NULL until the file exists */
  char *path;         /* the database it watches */
  gint64 version;     /* data_version when the last list was asked for; -1: unknown */
  guint source_id;
} Watch;

static void
watch_close (Watch *w)
{
  if (w->db != NULL)
    sqlite3_close (w->db);
  w->db = NULL;
}

/* The current data_version, or -1 when the database cannot be read (not created yet, or
 * gone: then the next poll tries to open it again). */
static gint64
watch_read (Watch *w)
{
  sqlite3_stmt *stmt = NULL;
  gint64 v = -1;

  if (w->db == NULL)
    {
      if (!g_file_test (w->path, G_FILE_TEST_IS_REGULAR)
          || sqlite3_open_v2 (w->path, &w->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        {
          watch_close (w);
          return -1;
        }
      /* The file is untrusted input (DESIGN.md, "Capture store"): nothing in it runs here.
       * The pragma reads no table, but the connection is locked down as the store's are. */
      sqlite3_db_config (w->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
      sqlite3_db_config (w->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
      sqlite3_db_config (w->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
      sqlite3_db_config (w->db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
      /* A writer's lock is held only while it commits: wait that long, not forever. */
      sqlite3_busy_timeout (w->db, 100);
    }
  if (sqlite3_prepare_v2 (w->db, "PRAGMA data_version", -1, &stmt, NULL) == SQLITE_OK
      && sqlite3_step (stmt) == SQLITE_ROW)
    v = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  if (v < 0)
    watch_close (w);
  return v;
}

static gboolean
watch_tick (gpointer data)
{
  SaccadeWindow *self = data;
  Watch *w = self->db_watch;
  gint64 v;

  if (saccade_window_is_busy (self))
    return G_SOURCE_CONTINUE; /* pass 2: a later poll */
  v = watch_read (w);
  if (v >= 0 && v != w->version)
    {
      g_debug ("%s changed (data_version %" G_GINT64_FORMAT " -> %" G_GINT64_FORMAT "): "
               "listing the runs again", w->path, w->version, v);
      saccade_window_runs_reload (self, 0); /* pass 1 records v */
    }
  return G_SOURCE_CONTINUE;
}

static void
watch_free (gpointer data)
{
  Watch *w = data;

  g_clear_handle_id (&w->source_id, g_source_remove);
  watch_close (w);
  g_free (w->path);
  g_free (w);
}

void
saccade_window_watch_sync (SaccadeWindow *self)
{
  Watch *w = self->db_watch;

  if (w == NULL || g_strcmp0 (w->path, self->db_path) != 0)
    {
      g_clear_pointer (&self->db_watch, watch_free);
      if (self->db_path == NULL)
        return;
      w = self->db_watch = g_new0 (Watch, 1);
      w->path = g_strdup (self->db_path);
      w->source_id = g_timeout_add (WATCH_MS, watch_tick, self);
    }
  /* Pass 1. When the file does not exist yet, -1: the first poll that can read it lists
   * again (the list that creates the file may have raced with a writer). */
  w->version = watch_read (w);
}

void
saccade_window_watch_stop (SaccadeWindow *self)
{
  g_clear_pointer (&self->db_watch, watch_free);
}
