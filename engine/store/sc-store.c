/* sc-store.c — the capture store's façade, its top layer: opening and closing a store, its
 * integrity check, deleting runs. The primitives it opens connections with are
 * sc-store-base.c's; models are sc-store-model.c, reading sc-store-read.c, capturing
 * sc-store-writer.c. No other store file calls this one, except the merge
 * (sc-store-merge.c), which opens and closes whole stores through it.
 *
 * A store keeps one SQLite connection for the caller's thread (this file) and, once the
 * first capture starts, a second one owned by the writer thread (sc-store-writer.c). Both
 * run in WAL mode, so reading never waits for a capture and a capture never waits for
 * readers. Workload: a handful of runs listed or read at a time, heads of 10 kB to a few MB
 * read whole; deletions rare.
 *
 * Untrusted input: the database may come from anywhere. Every connection
 * (sc_store_connection_open, sc-store-base.c) runs in SQLite's defensive mode with
 * triggers and views off, an untrusted schema and cell size checks; opening checks the
 * header (application_id, user_version) and compares the schema with ours before anything
 * is written (sc-store-schema.c); the readers check every number (sc-store-read.c).
 */
#include "store/sc-store-private.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------ */
/* Opening                                                                               */

/* The folder @path is in ("." for a bare name). Caller frees. */
static char *
folder_of (const char *path)
{
  const char *slash = strrchr (path, '/');
  char *dir;

  if (slash == NULL)
    return strdup (".");
  if (slash == path)
    return strdup ("/");
  dir = malloc ((size_t) (slash - path) + 1);
  if (dir != NULL)
    {
      memcpy (dir, path, (size_t) (slash - path));
      dir[slash - path] = '\0';
    }
  return dir;
}

/* Checks a writable store can work: the file (if any) is a regular writable file and
 * the folder takes new files (SQLite creates PATH-wal and PATH-shm beside it). Finding
 * this out here gives a message that says what to fix, where SQLite would only say
 * "unable to open database file" at the first write. */
static ScStatus
check_writable (const char *path, ScError *err)
{
  struct stat sb;
  char *dir;
  bool ok;

  if (stat (path, &sb) == 0)
    {
      if (S_ISDIR (sb.st_mode))
        return sc_error_set (err, SC_ERR_IO, "%s is a folder, not a database file", path);
      if (access (path, R_OK | W_OK) != 0)
        return sc_error_set (err, SC_ERR_IO,
                             "%s is read-only (%s): runs cannot be stored there; reading it "
                             "works, or choose another file with --db", path, strerror (errno));
    }
  else if (errno != ENOENT)
    return sc_error_set (err, SC_ERR_IO, "cannot access %s: %s", path, strerror (errno));
  if ((dir = folder_of (path)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
  ok = access (dir, W_OK | X_OK) == 0;
  if (!ok)
    sc_error_set (err, SC_ERR_IO,
                  "the folder %s is not writable (%s): SQLite needs to create %s-wal and "
                  "%s-shm beside the database; reading it works, or choose another file "
                  "with --db", dir, strerror (errno), path, path);
  free (dir);
  return ok ? SC_OK : SC_ERR_IO;
}

/* Whether SQLite could not open a WAL database read-only because it cannot create the
 * shared-memory file (a read-only folder, or a read-only file without its -shm). */
static bool
is_wal_readonly_failure (int rc)
{
  return rc == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_READONLY || rc == SQLITE_BUSY_RECOVERY;
}

/* The message for a WAL store whose -wal holds committed runs that SQLite cannot read
 * here (it needs PATH-shm, which it cannot create), saying why and what to do. */
static ScStatus
wal_unreadable (const char *path, int rc, ScError *err)
{
  char *dir = folder_of (path);
  char why[160];

  if (dir != NULL && access (dir, W_OK | X_OK) != 0)
    snprintf (why, sizeof why, "the folder %s is not writable (%s)", dir, strerror (errno));
  else
    snprintf (why, sizeof why, "%s-shm cannot be created or opened (%s)", path,
              sqlite3_errstr (rc));
  free (dir);
  return sc_error_set (err, SC_ERR_IO,
                       "%s: its latest runs are still in %s-wal, which SQLite can read only "
                       "through a -shm file beside it, and %s; copy the file together with its "
                       "-wal into a writable folder and open the copy, or open it once where "
                       "the folder is writable (closing folds the -wal into the file)",
                       path, path, why);
}

/* Whether PATH-wal is absent or empty: then the database file alone holds every committed
 * run. */
static bool
wal_is_empty (const char *path)
{
  char wal[PATH_MAX + 8];
  struct stat sb;

  if (snprintf (wal, sizeof wal, "%s-wal", path) >= (int) sizeof wal)
    return false;
  return stat (wal, &sb) != 0 ? errno == ENOENT : sb.st_size == 0;
}

/* Whether no one can write the store at @path while we read it: it is on a read-only
 * medium (a mount flagged read-only), or we may not write the file or its folder (no
 * process of ours can then start a WAL beside it). Only then may a reader open it with
 * immutable=1, a promise to SQLite that the file never changes: an immutable connection
 * takes no locks and keeps no watch on the file, so another process's writes and
 * checkpoints would reach it as a half-changed b-tree ("database disk image is
 * malformed"), and closing it drops every POSIX lock this process holds on the file —
 * after which another process's last close deletes the -wal and -shm under this
 * process's other connections (docs/store.md, "Trust"). */
static bool
store_cannot_change (const char *path)
{
  struct statvfs vfs;
  char *dir;
  bool locked;

  if (statvfs (path, &vfs) == 0 && (vfs.f_flag & ST_RDONLY) != 0)
    return true;
  if (access (path, W_OK) != 0)
    return true;
  if ((dir = folder_of (path)) == NULL)
    return false;
  locked = access (dir, W_OK | X_OK) != 0;
  free (dir);
  return locked;
}

/* The read-only open: a normal read-only connection (the WAL and its -shm are used, so
 * another process may write at any time), then the header and schema read in one
 * transaction. A failure to set up the WAL's shared memory has two causes:
 *   - the store cannot change (store_cannot_change): then, with no WAL content to miss,
 *     the database file alone is the store and is read as immutable; with committed runs
 *     in the -wal, the open fails saying what to do (wal_unreadable);
 *   - otherwise another process is opening, recovering or closing the store at that very
 *     moment (SQLite's locks and files change hands): a passing state, so the normal open
 *     is retried for up to the busy timeout, and never replaced by an immutable one. */
static ScStatus
open_read_only (ScStore *s, ScError *err)
{
  const int step_ms = 10;
  int waited_ms = 0;
  ScStatus st;

  for (;;)
    {
      ScError first = { 0 };
      int rc = SQLITE_OK;

      if ((st = sc_store_connection_open (s, false, &s->db, err)) != SC_OK)
        return st;
      st = sc_store_schema_inspect (s->db, s->path, &s->schema_version, &rc, &first);
      if (st == SC_OK)
        return SC_OK;
      if (st != SC_ERR_DB || !is_wal_readonly_failure (rc))
        {
          if (err != NULL)
            *err = first;
          return st;
        }
      sqlite3_close (s->db);
      s->db = NULL;
      if (store_cannot_change (s->path))
        {
          if (!wal_is_empty (s->path))
            return wal_unreadable (s->path, rc, err);
          s->immutable = true;
          if ((st = sc_store_connection_open (s, false, &s->db, err)) != SC_OK)
            return st;
          return sc_store_schema_inspect (s->db, s->path, &s->schema_version, NULL, err);
        }
      if (waited_ms >= s->busy_ms)
        {
          if (err != NULL)
            *err = first;
          return st;
        }
      sqlite3_sleep (step_ms);
      waited_ms += step_ms;
    }
}

ScStatus
sc_store_open (const char *path, const ScStoreOptions *opt, ScStore **out, ScError *err)
{
  ScStoreOptions defaults = { 0 };
  ScStore *s;
  ScStatus st;
  struct stat sb;

  *out = NULL;
  if (path == NULL || *path == '\0')
    return sc_error_set (err, SC_ERR_INVALID_ARG, "no database path given");
  if (opt == NULL)
    opt = &defaults;
  if (opt->max_blob_bytes != 0 && opt->max_blob_bytes < SC_STORE_MIN_BLOB_BYTES)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "max_blob_bytes %llu is below %u",
                         (unsigned long long) opt->max_blob_bytes, SC_STORE_MIN_BLOB_BYTES);
  if (opt->writable)
    {
      if ((st = check_writable (path, err)) != SC_OK)
        return st;
    }
  else if (stat (path, &sb) != 0)
    return errno == ENOENT
             ? sc_error_set (err, SC_ERR_NOT_FOUND, "no capture store at %s", path)
             : sc_error_set (err, SC_ERR_IO, "cannot access %s: %s", path, strerror (errno));
  else if (S_ISDIR (sb.st_mode))
    return sc_error_set (err, SC_ERR_IO, "%s is a folder, not a database file", path);

  if ((s = calloc (1, sizeof *s)) == NULL || (s->path = strdup (path)) == NULL)
    {
      free (s);
      return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
    }
  s->writable = opt->writable;
  s->busy_ms = opt->busy_timeout_ms == 0 ? SC_STORE_DEFAULT_BUSY_MS : opt->busy_timeout_ms;
  s->max_bytes = opt->max_bytes;
  s->queue_bytes = opt->queue_bytes > 0 ? opt->queue_bytes : SC_STORE_DEFAULT_QUEUE_BYTES;
  s->max_blob_bytes = opt->max_blob_bytes;
  s->compress_heads = opt->compress_heads;

  if (s->writable)
    {
      if ((st = sc_store_connection_open (s, true, &s->db, err)) == SC_OK)
        st = sc_store_schema_prepare (s->db, s->path, s->busy_ms, &s->schema_version, err);
    }
  else
    st = open_read_only (s, err);
  if (st != SC_OK)
    goto fail;
  *out = s;
  return SC_OK;

fail:
  sqlite3_close (s->db);
  free (s->path);
  free (s);
  return st;
}

void
sc_store_close (ScStore *store)
{
  if (store == NULL)
    return;
  if (store->capture != NULL)
    sc_store_capture_abort (store->capture);
  sc_store_writer_free (store->writer);
  /* The last connection to close checkpoints the WAL into the database and removes it. */
  sqlite3_close (store->db);
  free (store->path);
  free (store);
}

const char *
sc_store_path (const ScStore *store)
{
  return store->path;
}

const char *
sc_run_kind_id (ScRunKind kind)
{
  static const char *const IDS[SC_RUN_N_KINDS] = { NULL, "text", "chat", "generated", "ids" };

  return (unsigned) kind < SC_RUN_N_KINDS ? IDS[kind] : NULL;
}

int
sc_store_schema_version (const ScStore *store)
{
  return store->schema_version;
}

bool
sc_store_is_writable (const ScStore *store)
{
  return store->writable;
}

ScStatus
sc_store_check (ScStore *store, ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStatus status = SC_OK;
  int rc;

  if ((rc = sqlite3_prepare_v2 (store->db, "PRAGMA integrity_check", -1, &st, NULL))
      != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "checking integrity");
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW)
    {
      const char *msg = (const char *) sqlite3_column_text (st, 0);
      if (msg == NULL || strcmp (msg, "ok") != 0)
        status = sc_error_set (err, SC_ERR_DB, "%s fails its integrity check: %s", store->path,
                               msg != NULL ? msg : "(no message)");
    }
  else
    status = sc_store_sqlite_error (err, store->db, rc, store->path, "checking integrity");
  sqlite3_finalize (st);
  return status;
}

/* ------------------------------------------------------------------------------------ */
/* Deleting                                                                              */

ScStatus
sc_store_delete_run (ScStore *store, int64_t run_id, ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStatus status;
  int rc, changes;

  if (!store->writable)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s was opened read-only", store->path);
  if ((rc = sc_store_exec (store->db, "BEGIN IMMEDIATE")) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "deleting run %lld",
                                  (long long) run_id);
  /* ON DELETE CASCADE removes the tokens, heads, scores and studies of the run. */
  if ((rc = sqlite3_prepare_v2 (store->db, "DELETE FROM runs WHERE id = ?", -1, &st, NULL))
      != SQLITE_OK)
    goto fail;
  sqlite3_bind_int64 (st, 1, run_id);
  rc = sqlite3_step (st);
  sqlite3_finalize (st);
  if (rc != SQLITE_DONE)
    goto fail;
  changes = sqlite3_changes (store->db);
  if (changes == 0)
    {
      sc_store_exec (store->db, "ROLLBACK");
      return sc_error_set (err, SC_ERR_NOT_FOUND, "%s has no run %lld", store->path,
                           (long long) run_id);
    }
  /* auto_vacuum = INCREMENTAL: move the freed pages to the end of the file and cut them
   * off, in the same transaction (docs/store.md compares this with VACUUM). */
  if ((rc = sc_store_exec (store->db, "PRAGMA incremental_vacuum")) != SQLITE_OK)
    goto fail;
  if ((rc = sc_store_exec (store->db, "COMMIT")) != SQLITE_OK)
    goto fail;
  /* The file shrinks when the WAL is copied back; readers of older snapshots may hold
   * that off, in which case a later checkpoint finishes the job. */
  sqlite3_wal_checkpoint_v2 (store->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
  return SC_OK;

fail:
  status = sc_store_sqlite_error (err, store->db, rc, store->path, "deleting run %lld",
                                  (long long) run_id);
  if (!sqlite3_get_autocommit (store->db))
    sc_store_exec (store->db, "ROLLBACK");
  return status;
}
