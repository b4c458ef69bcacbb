/* sc-store.c — the capture store's façade, its top layer: opening and closing a store, its
 * integrity check, models, deleting runs. The primitives it opens connections with are
 * sc-store-base.c's; reading is sc-store-read.c, capturing sc-store-writer.c.
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

/* Whether PATH-wal is absent or empty: then the database file alone is the whole store and
 * may be read with immutable=1. */
static bool
wal_is_empty (const char *path)
{
  char wal[PATH_MAX + 8];
  struct stat sb;

  if (snprintf (wal, sizeof wal, "%s-wal", path) >= (int) sizeof wal)
    return false;
  return stat (wal, &sb) != 0 ? errno == ENOENT : sb.st_size == 0;
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

  if ((st = sc_store_connection_open (s, s->writable, &s->db, err)) != SC_OK)
    goto fail;
  if (s->writable)
    st = sc_store_schema_prepare (s->db, s->path, s->busy_ms, &s->schema_version, err);
  else
    {
      ScError first = { 0 };
      int rc = SQLITE_OK;
      st = sc_store_schema_inspect (s->db, s->path, &s->schema_version, &rc, &first);
      /* A WAL store in a folder we cannot write to (or without its -shm file) cannot be
       * opened the normal way; when there is no WAL content to miss, the database file
       * alone is the store and SQLite can read it as immutable. */
      if (st == SC_ERR_DB && is_wal_readonly_failure (rc) && wal_is_empty (s->path))
        {
          sqlite3_close (s->db);
          s->db = NULL;
          s->immutable = true;
          if ((st = sc_store_connection_open (s, false, &s->db, err)) != SC_OK)
            goto fail;
          st = sc_store_schema_inspect (s->db, s->path, &s->schema_version, NULL, err);
        }
      else if (st == SC_ERR_DB && is_wal_readonly_failure (rc))
        st = wal_unreadable (s->path, rc, err);
      else if (st != SC_OK && err != NULL)
        *err = first;
    }
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
/* Models                                                                                */

ScStatus
sc_store_model_identify (const ScModel *model, const char *path, ScStoreModel *out,
                         ScError *err)
{
  const ScModelInfo *in = sc_model_info (model);
  uint64_t size = 0;
  ScStatus st;

  memset (out, 0, sizeof *out);
  if ((st = sc_sha256_file (path, out->sha256, &size, err)) != SC_OK)
    return st;
  /* The model was loaded from this path a moment ago; a different size means the file was
   * replaced in between and the hash would name the wrong model. */
  if (size != sc_gguf_file_size (sc_model_gguf (model)))
    return sc_error_set (err, SC_ERR_IO,
                         "%s changed while it was in use (%llu bytes loaded, %llu bytes now)",
                         path, (unsigned long long) sc_gguf_file_size (sc_model_gguf (model)),
                         (unsigned long long) size);
  out->path = path;
  out->file_size = size;
  out->name = in->name;
  out->arch = in->arch_name;
  out->n_layers = in->n_layers;
  out->n_heads = in->n_heads;
  out->n_kv_heads = in->n_kv_heads;
  out->head_dim = in->head_dim;
  out->n_embd = in->n_embd;
  out->n_vocab = in->n_vocab;
  out->n_ctx_train = in->n_ctx_train;
  out->sliding_window = in->sliding_window;
  out->swa_pattern = in->swa_pattern;
  return SC_OK;
}

ScStatus
sc_store_find_model (ScStore *store, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
                     int64_t *model_id, ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStatus status;
  int rc;

  if (store->schema_version == 0)
    return sc_error_set (err, SC_ERR_NOT_FOUND, "%s has no models yet", store->path);
  if ((rc = sqlite3_prepare_v2 (store->db, "SELECT id FROM models WHERE sha256 = ?", -1, &st,
                                NULL)) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "looking up a model");
  sqlite3_bind_blob (st, 1, sha256, SC_SHA256_DIGEST_SIZE, SQLITE_STATIC);
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW)
    {
      *model_id = sqlite3_column_int64 (st, 0);
      status = SC_OK;
    }
  else if (rc == SQLITE_DONE)
    {
      char hex[SC_SHA256_HEX_SIZE];
      sc_sha256_hex (sha256, hex);
      status = sc_error_set (err, SC_ERR_NOT_FOUND, "%s has no model with SHA-256 %s",
                             store->path, hex);
    }
  else
    status = sc_store_sqlite_error (err, store->db, rc, store->path, "looking up a model");
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
