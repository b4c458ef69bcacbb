/* sc-store-base.c — the capture store's bottom layer: what every other store file uses and
 * which itself calls nothing of the store's.
 *
 * SQLite's result codes in words for the user (sc_store_sqlite_error), a name from the file
 * quoted for a message, a statement run, the clock; one connection opened with the store's
 * per-connection settings (defensive mode, no triggers or views, foreign keys, size limit);
 * a read transaction around several statements; and the first checks of untrusted numbers —
 * a cell's type and range (sc_store_int_in), what a bad cell holds for the message, the
 * message that names a damaged run so that the user can delete it and keep the rest.
 *
 * The layers above (docs/architecture.md, "The store's files"): codecs (sc-store-blob.c,
 * sc-store-sparse.c), the checked readers and writers of each table, then sc-store.c,
 * which opens and closes a store. Nothing here may call up into them: this file includes
 * sc-store-base.h only.
 *
 * What it is not: opening a store (sc-store.c), the schema (sc-store-schema.c), reading a
 * run (sc-store-read.c).
 */
#include "store/sc-store-base.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

void
sc_store_quote (const char *s, size_t len, char *buf, size_t size)
{
  static const char hex[] = "0123456789abcdef";
  size_t i, o = 0;

  buf[o++] = '\'';
  for (i = 0; i < len && s != NULL; i++)
    {
      const unsigned char c = (unsigned char) s[i];
      const bool plain = c >= 0x20 && c < 0x7f && c != '\'' && c != '\\';
      /* room for this byte (1 or 4), then "...'" and the NUL */
      if (o + (plain ? 1 : 4) + 5 > size)
        {
          memcpy (buf + o, "...", 3);
          o += 3;
          break;
        }
      if (plain)
        buf[o++] = (char) c;
      else
        {
          buf[o++] = '\\';
          buf[o++] = 'x';
          buf[o++] = hex[c >> 4];
          buf[o++] = hex[c & 15];
        }
    }
  buf[o++] = '\'';
  buf[o] = '\0';
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
  /* A database file is untrusted input (docs/store.md, "Trust"): no writes to the schema
   * table or other ways to corrupt the file on purpose (DEFENSIVE), no triggers and no
   * views from the file (the schema check refuses them anyway; this is the second
   * wall, for a schema changed by another process after we checked it), no functions
   * with side effects in the schema (TRUSTED_SCHEMA off), extra checks on every b-tree
   * cell. Foreign-key actions (ON DELETE CASCADE) are not triggers and still work. Each
   * setting is read back: a build of SQLite without one fails here, not silently. */
  {
    static const struct {
      int op, value;
      const char *name;
    } config[] = {
      { SQLITE_DBCONFIG_DEFENSIVE, 1, "defensive mode" },
      { SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, "untrusted schema" },
      { SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, "triggers off" },
      { SQLITE_DBCONFIG_ENABLE_VIEW, 0, "views off" },
    };
    for (size_t i = 0; i < sizeof config / sizeof config[0]; i++)
      {
        int now = -1;
        if (sqlite3_db_config (db, config[i].op, config[i].value, &now) != SQLITE_OK
            || now != config[i].value)
          {
            sc_error_set (err, SC_ERR_UNSUPPORTED, "%s: this build of SQLite (%s) cannot "
                          "open a store safely: setting '%s' failed", store->path,
                          sqlite3_libversion (), config[i].name);
            sqlite3_close (db);
            return SC_ERR_UNSUPPORTED;
          }
      }
  }
  sqlite3_busy_timeout (db, store->busy_ms > 0 ? store->busy_ms : 0);
  if ((rc = sc_store_exec (db, "PRAGMA foreign_keys = ON; PRAGMA cell_size_check = ON; "
                               "PRAGMA trusted_schema = OFF")) != SQLITE_OK)
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

/* ------------------------------------------------------------------------------------ */
/* Reading untrusted cells, and saying what is wrong                                     */

/* What a value in a cell is, for a message: "42", "1.5 (a real)", "'abc' (text)". */
void
sc_store_describe_value (sqlite3_stmt *st, int col, char *buf, size_t size)
{
  switch (sqlite3_column_type (st, col))
    {
    case SQLITE_INTEGER:
      snprintf (buf, size, "%lld", (long long) sqlite3_column_int64 (st, col));
      break;
    case SQLITE_FLOAT:
      snprintf (buf, size, "%.17g (a real)", sqlite3_column_double (st, col));
      break;
    case SQLITE_TEXT:
      {
        char q[64];
        sc_store_quote ((const char *) sqlite3_column_text (st, col),
                        (size_t) sqlite3_column_bytes (st, col), q, sizeof q);
        snprintf (buf, size, "%s (text)", q);
      }
      break;
    case SQLITE_BLOB:
      snprintf (buf, size, "a %d-byte blob", sqlite3_column_bytes (st, col));
      break;
    default:
      snprintf (buf, size, "NULL");
    }
}

/* The advice names the run, so that the user can delete it and keep the rest. */
ScStatus
sc_store_bad_run (const ScStore *store, int64_t run_id, ScError *err, const char *fmt, ...)
{
  char what[320];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (what, sizeof what, fmt, ap);
  va_end (ap);
  return sc_error_set (err, SC_ERR_FORMAT,
                       "%s: run %lld: %s; the store was edited or is damaged: delete the run "
                       "(saccade rm %lld) or use a clean copy of the store", store->path,
                       (long long) run_id, what, (long long) run_id);
}

ScStatus
sc_store_not_kept (const ScStore *store, int64_t run_id, int layer, int head, ScError *err)
{
  return sc_error_set (err, SC_ERR_NOT_FOUND, "%s: run %lld did not keep layer %d head %d",
                       store->path, (long long) run_id, layer, head);
}

bool
sc_store_int_in (sqlite3_stmt *st, int col, int64_t lo, int64_t hi, int64_t *v)
{
  if (sqlite3_column_type (st, col) != SQLITE_INTEGER)
    return false;
  *v = sqlite3_column_int64 (st, col);
  return *v >= lo && *v <= hi;
}

/* ------------------------------------------------------------------------------------ */
/* Read transactions                                                                     */

int
sc_store_read_begin (ScStore *store, bool *own)
{
  *own = sqlite3_get_autocommit (store->db) != 0;
  return *own ? sc_store_exec (store->db, "BEGIN") : SQLITE_OK;
}

void
sc_store_read_end (ScStore *store, bool own)
{
  if (own && !sqlite3_get_autocommit (store->db))
    sc_store_exec (store->db, "COMMIT");
}
