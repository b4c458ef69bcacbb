/* sc-store.c — opening a capture store, reading runs and heads, deleting runs.
 *
 * A store keeps one SQLite connection for the caller's thread (this file) and, once the
 * first capture starts, a second one owned by the writer thread (sc-store-writer.c). Both
 * run in WAL mode, so reading never waits for a capture and a capture never waits for
 * readers. Workload: a handful of runs listed or read at a time, heads of 10 kB to a few MB
 * read whole; deletions rare.
 *
 * Untrusted input: the database may come from anywhere. Every connection runs in SQLite's
 * defensive mode with an untrusted schema and cell size checks, every BLOB's size is
 * checked against its row before it is unpacked, and opening checks the header
 * (application_id, user_version) before anything is written.
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
/* Errors                                                                                */

/* What an SQLite result code means for the person running Saccade. */
static const char *
explain (int rc)
{
  if (rc == SQLITE_IOERR_WRITE || rc == SQLITE_IOERR_FSYNC || rc == SQLITE_IOERR_TRUNCATE)
    return "writing to the disk failed (is it full?)";
  switch (rc & 0xff)
    {
    case SQLITE_NOTADB: return "the file is not an SQLite database";
    case SQLITE_CORRUPT: return "the database is corrupt";
    case SQLITE_FULL: return "the disk is full (or the store reached its size limit)";
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return "the database is locked by another process writing to it";
    case SQLITE_READONLY: return "the database is read-only";
    case SQLITE_CANTOPEN: return "the file cannot be opened";
    case SQLITE_PERM:
    case SQLITE_AUTH: return "permission denied";
    case SQLITE_IOERR: return "input/output error";
    case SQLITE_CONSTRAINT: return "a row broke the schema's rules";
    case SQLITE_NOMEM: return "out of memory";
    default: return "SQLite failed";
    }
}

ScStatus
sc_store_sqlite_error (ScError *err, sqlite3 *db, int rc, const char *path, const char *what_fmt,
                       ...)
{
  char what[256], sys[96] = "";
  const char *msg = db != NULL ? sqlite3_errmsg (db) : sqlite3_errstr (rc);
  const char *meaning = explain (rc);
  ScStatus status = (rc & 0xff) == SQLITE_NOMEM ? SC_ERR_NOMEM : SC_ERR_DB;
  int sys_errno = db != NULL ? sqlite3_system_errno (db) : 0;
  va_list ap;

  va_start (ap, what_fmt);
  vsnprintf (what, sizeof what, what_fmt, ap);
  va_end (ap);
  /* sqlite3_errmsg() describes the connection's last error, which may not be @rc (a
   * ROLLBACK after the failure replaces it); fall back to the generic text then. */
  if (db != NULL && sqlite3_extended_errcode (db) != rc && sqlite3_errcode (db) != (rc & 0xff))
    {
      msg = sqlite3_errstr (rc);
      sys_errno = 0;
    }
  /* For I/O failures the operating system's reason is what the user can act on; a write
   * that failed for want of space is a full disk whatever SQLite calls it. */
  if (((rc & 0xff) == SQLITE_IOERR || (rc & 0xff) == SQLITE_CANTOPEN
       || (rc & 0xff) == SQLITE_FULL) && sys_errno != 0)
    {
      snprintf (sys, sizeof sys, ": %s", strerror (sys_errno));
      if (sys_errno == ENOSPC || sys_errno == EDQUOT || sys_errno == EFBIG)
        meaning = explain (SQLITE_FULL);
    }
  return sc_error_set (err, status, "%s: %s: %s (%s%s)", path, what, meaning, msg, sys);
}

int
sc_store_exec (sqlite3 *db, const char *sql)
{
  return sqlite3_exec (db, sql, NULL, NULL, NULL);
}

int64_t
sc_store_now_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_REALTIME, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------------------------ */
/* Connections                                                                           */

/* "file:" URI for @path with immutable=1: % ? # escaped as RFC 3986 asks. */
static char *
immutable_uri (const char *path)
{
  size_t n = strlen (path), i, o = 0;
  char *uri = malloc (3 * n + 32);

  if (uri == NULL)
    return NULL;
  o += (size_t) sprintf (uri, "file:");
  for (i = 0; i < n; i++)
    {
      unsigned char c = (unsigned char) path[i];
      if (c == '%' || c == '?' || c == '#')
        o += (size_t) sprintf (uri + o, "%%%02X", c);
      else
        uri[o++] = (char) c;
    }
  strcpy (uri + o, "?immutable=1");
  return uri;
}

ScStatus
sc_store_connection_open (const ScStore *store, bool writable, sqlite3 **out, ScError *err)
{
  int flags = writable ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
  sqlite3 *db = NULL;
  const char *name = store->path;
  char *uri = NULL;
  ScStatus st;
  int rc;

  *out = NULL;
  if (store->immutable)
    {
      if ((uri = immutable_uri (store->path)) == NULL)
        return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
      name = uri;
      flags |= SQLITE_OPEN_URI;
    }
  rc = sqlite3_open_v2 (name, &db, flags, NULL);
  free (uri);
  if (rc != SQLITE_OK)
    {
      st = sc_store_sqlite_error (err, db, rc, store->path, "opening the store");
      sqlite3_close (db);
      return st;
    }
  sqlite3_extended_result_codes (db, 1);
  /* A database file is untrusted input: no schema-defined functions with side effects,
   * no writes to the schema table, extra checks on every b-tree cell. */
  sqlite3_db_config (db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  sqlite3_db_config (db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
  sqlite3_db_config (db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 1, NULL);
  sqlite3_busy_timeout (db, store->busy_ms > 0 ? store->busy_ms : 0);
  if ((rc = sc_store_exec (db, "PRAGMA foreign_keys = ON; PRAGMA cell_size_check = ON"))
      != SQLITE_OK)
    goto fail;
  if (writable)
    {
      /* synchronous=FULL: a commit returns once the run is on disk (one fsync per run).
       * The writer checkpoints by itself after each commit (sc-store-writer.c); this
       * connection's automatic checkpoints stay for the rare writes made here (deletes). */
      if ((rc = sc_store_exec (db, "PRAGMA synchronous = FULL")) != SQLITE_OK)
        goto fail;
      if (store->max_bytes > 0)
        {
          char sql[64];
          snprintf (sql, sizeof sql, "PRAGMA max_page_count = %llu",
                    (unsigned long long) (store->max_bytes / SC_STORE_PAGE_SIZE));
          if ((rc = sc_store_exec (db, sql)) != SQLITE_OK)
            goto fail;
        }
    }
  *out = db;
  return SC_OK;

fail:
  st = sc_store_sqlite_error (err, db, rc, store->path, "opening the store");
  sqlite3_close (db);
  return st;
}

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

  if ((st = sc_store_connection_open (s, s->writable, &s->db, err)) != SC_OK)
    goto fail;
  if (s->writable)
    st = sc_store_schema_prepare (s->db, s->path, &s->schema_version, err);
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
/* Runs                                                                                  */

#define RUN_COLUMNS                                                                       \
  "r.id, r.model_id, m.name, m.arch, m.path, m.sha256, m.n_layers, m.n_heads, "          \
  "m.n_kv_heads, m.head_dim, r.created, r.backend, r.n_tokens, r.forward_ms, "            \
  "r.capture_ms, r.attention_bytes, r.text "                                              \
  "FROM runs r JOIN models m ON m.id = r.model_id WHERE r.status = 'complete' "

/* A copy of a text column; "" for NULL. */
static char *
dup_column (sqlite3_stmt *st, int col)
{
  const unsigned char *t = sqlite3_column_text (st, col);
  return strdup (t != NULL ? (const char *) t : "");
}

/* A dimension column, which the schema keeps positive; anything else is a damaged row. */
static uint32_t
dim_column (sqlite3_stmt *st, int col)
{
  int64_t v = sqlite3_column_int64 (st, col);
  return v > 0 && v <= INT32_MAX ? (uint32_t) v : 0;
}

static ScStatus
run_from_row (const ScStore *store, sqlite3_stmt *st, ScStoreRunInfo *r, ScError *err)
{
  const void *sha = sqlite3_column_blob (st, 5);
  const void *text = sqlite3_column_blob (st, 16);
  size_t text_len = (size_t) sqlite3_column_bytes (st, 16);

  memset (r, 0, sizeof *r);
  r->id = sqlite3_column_int64 (st, 0);
  r->model_id = sqlite3_column_int64 (st, 1);
  r->model_name = dup_column (st, 2);
  r->model_arch = dup_column (st, 3);
  r->model_path = dup_column (st, 4);
  if (sha != NULL && sqlite3_column_bytes (st, 5) == SC_SHA256_DIGEST_SIZE)
    sc_sha256_hex (sha, r->model_sha256);
  r->n_layers = dim_column (st, 6);
  r->n_heads = dim_column (st, 7);
  r->n_kv_heads = dim_column (st, 8);
  r->head_dim = dim_column (st, 9);
  r->created_ms = sqlite3_column_int64 (st, 10);
  r->backend = dup_column (st, 11);
  r->n_tokens = dim_column (st, 12);
  r->forward_s = sqlite3_column_type (st, 13) == SQLITE_NULL
                   ? -1.0 : sqlite3_column_double (st, 13) / 1000.0;
  r->capture_s = sqlite3_column_type (st, 14) == SQLITE_NULL
                   ? -1.0 : sqlite3_column_double (st, 14) / 1000.0;
  r->attention_bytes = (uint64_t) sqlite3_column_int64 (st, 15);
  r->text = malloc (text_len + 1);
  if (r->text != NULL)
    {
      if (text_len > 0)
        memcpy (r->text, text, text_len);
      r->text[text_len] = '\0';
      r->text_len = text_len;
    }
  if (r->model_name == NULL || r->model_arch == NULL || r->model_path == NULL
      || r->backend == NULL || r->text == NULL)
    {
      sc_store_run_info_clear (r);
      return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
    }
  if (r->n_layers == 0 || r->n_heads == 0 || r->n_tokens == 0 || r->model_sha256[0] == '\0')
    {
      int64_t id = r->id;
      sc_store_run_info_clear (r);
      return sc_error_set (err, SC_ERR_FORMAT, "%s: run %lld has a damaged row", store->path,
                           (long long) id);
    }
  return SC_OK;
}

void
sc_store_run_info_clear (ScStoreRunInfo *info)
{
  if (info == NULL)
    return;
  free (info->model_name);
  free (info->model_arch);
  free (info->model_path);
  free (info->backend);
  free (info->text);
  memset (info, 0, sizeof *info);
}

void
sc_store_run_list_free (ScStoreRunInfo *runs, size_t n_runs)
{
  size_t i;

  if (runs == NULL)
    return;
  for (i = 0; i < n_runs; i++)
    sc_store_run_info_clear (&runs[i]);
  free (runs);
}

ScStatus
sc_store_list_runs (ScStore *store, ScStoreRunInfo **runs, size_t *n_runs, ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStoreRunInfo *list = NULL;
  size_t n = 0, cap = 0;
  ScStatus status = SC_OK;
  int rc;

  *runs = NULL;
  *n_runs = 0;
  if (store->schema_version == 0)
    return SC_OK; /* an empty file opened read-only: no tables, no runs */
  if ((rc = sqlite3_prepare_v2 (store->db, "SELECT " RUN_COLUMNS "ORDER BY r.id", -1, &st,
                                NULL)) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "listing runs");
  /* One statement = one read transaction: the list is a consistent snapshot even while a
   * capture commits. */
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      if (n == cap)
        {
          size_t new_cap = cap ? 2 * cap : 16;
          ScStoreRunInfo *grown = realloc (list, new_cap * sizeof *list);
          if (grown == NULL)
            {
              status = sc_error_set (err, SC_ERR_NOMEM, "out of memory");
              break;
            }
          list = grown;
          cap = new_cap;
        }
      if ((status = run_from_row (store, st, &list[n], err)) != SC_OK)
        break;
      n++;
    }
  if (status == SC_OK && rc != SQLITE_DONE)
    status = sc_store_sqlite_error (err, store->db, rc, store->path, "listing runs");
  sqlite3_finalize (st);
  if (status != SC_OK)
    {
      sc_store_run_list_free (list, n);
      return status;
    }
  *runs = list;
  *n_runs = n;
  return SC_OK;
}

ScStatus
sc_store_get_run (ScStore *store, int64_t run_id, ScStoreRunInfo *out, ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStatus status;
  int rc;

  memset (out, 0, sizeof *out);
  if (store->schema_version == 0)
    return sc_error_set (err, SC_ERR_NOT_FOUND, "%s has no run %lld", store->path,
                         (long long) run_id);
  if ((rc = sqlite3_prepare_v2 (store->db, "SELECT " RUN_COLUMNS "AND r.id = ?", -1, &st,
                                NULL)) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "reading run %lld",
                                  (long long) run_id);
  sqlite3_bind_int64 (st, 1, run_id);
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW)
    status = run_from_row (store, st, out, err);
  else if (rc == SQLITE_DONE)
    status = sc_error_set (err, SC_ERR_NOT_FOUND, "%s has no run %lld", store->path,
                           (long long) run_id);
  else
    status = sc_store_sqlite_error (err, store->db, rc, store->path, "reading run %lld",
                                    (long long) run_id);
  sqlite3_finalize (st);
  return status;
}

/* ------------------------------------------------------------------------------------ */
/* Tokens                                                                                */

/* One block: the array, then the pieces' bytes. */
static ScStoreToken *
tokens_alloc (size_t n, size_t piece_bytes)
{
  if (n > (SIZE_MAX - piece_bytes) / sizeof (ScStoreToken))
    return NULL;
  return malloc (n * sizeof (ScStoreToken) + piece_bytes + 1);
}

void
sc_store_tokens_free (ScStoreToken *tokens)
{
  free (tokens);
}

ScStatus
sc_store_tokens_from_ids (const ScTokenizer *tok, const int32_t *ids, size_t n_ids,
                          ScStoreToken **tokens, ScError *err)
{
  ScStoreToken *t;
  uint8_t *bytes;
  size_t i, total = 0;

  *tokens = NULL;
  for (i = 0; i < n_ids; i++)
    total += sc_token_to_bytes (tok, ids[i], true, NULL, 0);
  if ((t = tokens_alloc (n_ids, total)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
  bytes = (uint8_t *) (t + n_ids);
  for (i = 0; i < n_ids; i++)
    {
      size_t len = sc_token_to_bytes (tok, ids[i], true, (char *) bytes, total);
      t[i].id = ids[i];
      t[i].len = (uint32_t) len;
      t[i].piece = bytes;
      bytes += len;
      total -= len;
    }
  *tokens = t;
  return SC_OK;
}

/* Fails with NOT_FOUND unless @run_id names a complete run. */
static ScStatus
require_run (ScStore *store, int64_t run_id, uint32_t *n_tokens, ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStatus status;
  int rc;

  if (store->schema_version == 0)
    return sc_error_set (err, SC_ERR_NOT_FOUND, "%s has no run %lld", store->path,
                         (long long) run_id);
  if ((rc = sqlite3_prepare_v2 (store->db,
                                "SELECT n_tokens FROM runs WHERE id = ? AND status = 'complete'",
                                -1, &st, NULL)) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "reading run %lld",
                                  (long long) run_id);
  sqlite3_bind_int64 (st, 1, run_id);
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW)
    {
      if (n_tokens != NULL)
        *n_tokens = dim_column (st, 0);
      status = SC_OK;
    }
  else if (rc == SQLITE_DONE)
    status = sc_error_set (err, SC_ERR_NOT_FOUND, "%s has no run %lld", store->path,
                           (long long) run_id);
  else
    status = sc_store_sqlite_error (err, store->db, rc, store->path, "reading run %lld",
                                    (long long) run_id);
  sqlite3_finalize (st);
  return status;
}

ScStatus
sc_store_read_tokens (ScStore *store, int64_t run_id, ScStoreToken **tokens, size_t *n_tokens,
                      ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStoreToken *t = NULL;
  uint32_t n_expected = 0;
  size_t n = 0, total = 0;
  uint8_t *bytes;
  ScStatus status;
  int rc;

  *tokens = NULL;
  *n_tokens = 0;
  /* The run check, the size pass and the copy pass are one read transaction, so a
   * concurrent delete cannot change the rows between the passes. */
  if ((rc = sc_store_exec (store->db, "BEGIN")) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "reading run %lld",
                                  (long long) run_id);
  if ((status = require_run (store, run_id, &n_expected, err)) != SC_OK)
    goto done;
  if ((rc = sqlite3_prepare_v2 (store->db,
                                "SELECT count (*), coalesce (sum (length (piece)), 0) FROM tokens "
                                "WHERE run_id = ?", -1, &st, NULL)) != SQLITE_OK
      || (sqlite3_bind_int64 (st, 1, run_id), rc = sqlite3_step (st)) != SQLITE_ROW)
    goto db_error;
  n = (size_t) sqlite3_column_int64 (st, 0);
  total = (size_t) sqlite3_column_int64 (st, 1);
  sqlite3_finalize (st);
  st = NULL;
  if (n != n_expected)
    {
      status = sc_error_set (err, SC_ERR_FORMAT, "%s: run %lld has %zu token rows for %u tokens",
                             store->path, (long long) run_id, n, n_expected);
      goto done;
    }
  if ((t = tokens_alloc (n, total)) == NULL)
    {
      status = sc_error_set (err, SC_ERR_NOMEM, "out of memory");
      goto done;
    }
  bytes = (uint8_t *) (t + n);
  if ((rc = sqlite3_prepare_v2 (store->db,
                                "SELECT pos, token_id, piece FROM tokens WHERE run_id = ? "
                                "ORDER BY pos", -1, &st, NULL)) != SQLITE_OK)
    goto db_error;
  sqlite3_bind_int64 (st, 1, run_id);
  for (size_t i = 0; (rc = sqlite3_step (st)) == SQLITE_ROW; i++)
    {
      const void *piece = sqlite3_column_blob (st, 2);
      size_t len = (size_t) sqlite3_column_bytes (st, 2);
      if (i >= n || sqlite3_column_int64 (st, 0) != (int64_t) i || len > total)
        {
          status = sc_error_set (err, SC_ERR_FORMAT, "%s: run %lld has a damaged token list "
                                 "at position %zu", store->path, (long long) run_id, i);
          goto done;
        }
      t[i].id = (int32_t) sqlite3_column_int64 (st, 1);
      t[i].len = (uint32_t) len;
      t[i].piece = bytes;
      if (len > 0)
        memcpy (bytes, piece, len);
      bytes += len;
      total -= len;
    }
  if (rc != SQLITE_DONE)
    goto db_error;
  *tokens = t;
  *n_tokens = n;
  t = NULL;
  status = SC_OK;
  goto done;

db_error:
  status = sc_store_sqlite_error (err, store->db, rc, store->path, "reading the tokens of run %lld",
                                  (long long) run_id);
done:
  sqlite3_finalize (st);
  sc_store_exec (store->db, "COMMIT");
  free (t);
  return status;
}

/* ------------------------------------------------------------------------------------ */
/* Heads                                                                                 */

/* The largest n a head may claim: a (n, n) float matrix of 2^40 bytes is far beyond any
 * run we can compute, and small enough that no size computation below overflows. */
#define MAX_HEAD_DIM (1u << 19)

void
sc_store_head_clear (ScStoreHead *head)
{
  if (head == NULL)
    return;
  free (head->probs);
  memset (head, 0, sizeof *head);
}

ScStatus
sc_store_read_head (ScStore *store, int64_t run_id, int layer, int head, ScStoreHead *out,
                    ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStatus status;
  int rc;

  memset (out, 0, sizeof *out);
  if (store->schema_version == 0)
    return require_run (store, run_id, NULL, err);
  if ((rc = sqlite3_prepare_v2 (store->db,
                                "SELECT a.n_query, a.n_key, a.layout, a.dtype, a.data "
                                "FROM attention a JOIN runs r ON r.id = a.run_id "
                                "WHERE a.run_id = ?1 AND a.layer = ?2 AND a.head = ?3 "
                                "AND r.status = 'complete'", -1, &st, NULL)) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "reading run %lld",
                                  (long long) run_id);
  sqlite3_bind_int64 (st, 1, run_id);
  sqlite3_bind_int (st, 2, layer);
  sqlite3_bind_int (st, 3, head);
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW)
    {
      int64_t nq = sqlite3_column_int64 (st, 0), nk = sqlite3_column_int64 (st, 1);
      const char *layout = (const char *) sqlite3_column_text (st, 2);
      const char *dtype = (const char *) sqlite3_column_text (st, 3);
      const void *blob = sqlite3_column_blob (st, 4);
      size_t bytes = (size_t) sqlite3_column_bytes (st, 4);
      bool causal = layout != NULL && strcmp (layout, "causal") == 0;

      /* Trust nothing in the row: the sizes decide an allocation and a walk over the BLOB. */
      if (nq <= 0 || nk <= 0 || nq > MAX_HEAD_DIM || nk > MAX_HEAD_DIM
          || layout == NULL || (!causal && strcmp (layout, "full") != 0) || (causal && nq != nk)
          || dtype == NULL || strcmp (dtype, "f16") != 0
          || bytes != sc_store_blob_bytes (causal, (uint32_t) nq, (uint32_t) nk)
          || (blob == NULL && bytes > 0))
        status = sc_error_set (err, SC_ERR_FORMAT,
                               "%s: run %lld layer %d head %d: the stored head does not match "
                               "its description (%lld x %lld %s %s, %zu bytes)", store->path,
                               (long long) run_id, layer, head, (long long) nq, (long long) nk,
                               layout != NULL ? layout : "?", dtype != NULL ? dtype : "?", bytes);
      else if ((out->probs = malloc ((size_t) nq * (size_t) nk * sizeof (float))) == NULL)
        status = sc_error_set (err, SC_ERR_NOMEM, "out of memory reading a %lld x %lld head",
                               (long long) nq, (long long) nk);
      else
        {
          out->n_query = (uint32_t) nq;
          out->n_key = (uint32_t) nk;
          out->causal = causal;
          sc_store_blob_unpack (blob, out->n_query, out->n_key, causal, out->probs);
          status = SC_OK;
        }
    }
  else if (rc == SQLITE_DONE)
    {
      /* Say which is missing: the run or the head. */
      sqlite3_finalize (st);
      st = NULL;
      status = require_run (store, run_id, NULL, err);
      if (status == SC_OK)
        status = sc_error_set (err, SC_ERR_NOT_FOUND, "%s: run %lld has no layer %d head %d",
                               store->path, (long long) run_id, layer, head);
    }
  else
    status = sc_store_sqlite_error (err, store->db, rc, store->path,
                                    "reading run %lld layer %d head %d", (long long) run_id,
                                    layer, head);
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
