/* sc-store-schema.c — the capture store's schema: the one place it is written down.
 *
 * A store is an SQLite file with application_id 'SCDE' and PRAGMA user_version = the
 * schema version. Version 0 means empty; each migration takes the schema from version v-1
 * to v inside one transaction that also sets user_version, so a store is always at exactly
 * one version. A build reads stores up to SC_STORE_SCHEMA_VERSION and refuses newer ones
 * without touching them. Rules for later versions (docs/store.md): extend, don't break —
 * add tables and columns, never change the meaning of an existing one.
 *
 * What it is not: the queries that use the tables (sc-store.c, sc-store-writer.c).
 */
#include "store/sc-store-private.h"

#include <stdio.h>
#include <string.h>

/* Schema v1. Conventions: times are Unix milliseconds; texts and token pieces are BLOBs
 * holding the exact bytes (they need not be UTF-8); CHECK constraints state each row's
 * invariants so a bug cannot store a BLOB that does not match its dimensions. The
 * attention BLOB is the last column so that reading a row's other columns never touches
 * its overflow pages. */
static const char SCHEMA_V1[] =
  /* A model file, identified by the SHA-256 of its bytes. */
  "CREATE TABLE models (\n"
  "  id          INTEGER PRIMARY KEY,\n"
  "  sha256      BLOB    NOT NULL UNIQUE CHECK (typeof (sha256) = 'blob' AND length (sha256) = 32),\n"
  "  file_size   INTEGER NOT NULL CHECK (file_size >= 0),\n"
  "  path        TEXT    NOT NULL,\n" /* where it was last seen */
  "  name        TEXT    NOT NULL,\n"
  "  arch        TEXT    NOT NULL,\n"
  "  n_layers    INTEGER NOT NULL CHECK (n_layers > 0),\n"
  "  n_heads     INTEGER NOT NULL CHECK (n_heads > 0),\n"
  "  n_kv_heads  INTEGER NOT NULL CHECK (n_kv_heads > 0),\n"
  "  head_dim    INTEGER NOT NULL CHECK (head_dim > 0),\n"
  "  n_embd      INTEGER NOT NULL CHECK (n_embd > 0),\n"
  "  n_vocab     INTEGER NOT NULL CHECK (n_vocab > 0),\n"
  "  n_ctx_train INTEGER NOT NULL CHECK (n_ctx_train >= 0),\n"
  "  added       INTEGER NOT NULL\n"
  ");\n"
  /* One forward pass. AUTOINCREMENT: a deleted run's id is never given to another run, so
   * an id printed yesterday still means that run or nothing. status is 'complete' once the
   * run's transaction commits; readers list only complete runs. */
  "CREATE TABLE runs (\n"
  "  id              INTEGER PRIMARY KEY AUTOINCREMENT,\n"
  "  model_id        INTEGER NOT NULL REFERENCES models (id),\n"
  "  text            BLOB    NOT NULL,\n"
  "  created         INTEGER NOT NULL,\n"
  "  backend         TEXT    NOT NULL,\n"
  "  n_tokens        INTEGER NOT NULL CHECK (n_tokens > 0),\n"
  "  forward_ms      REAL,\n" /* NULL: not measured */
  "  capture_ms      REAL,\n"
  "  attention_bytes INTEGER NOT NULL DEFAULT 0,\n"
  "  status          TEXT    NOT NULL DEFAULT 'writing'\n"
  "                  CHECK (status IN ('writing', 'complete'))\n"
  ");\n"
  "CREATE INDEX runs_model ON runs (model_id);\n"
  "CREATE TABLE tokens (\n"
  "  run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,\n"
  "  pos      INTEGER NOT NULL CHECK (pos >= 0),\n"
  "  token_id INTEGER NOT NULL,\n"
  "  piece    BLOB    NOT NULL,\n"
  "  PRIMARY KEY (run_id, pos)\n"
  ") WITHOUT ROWID;\n"
  /* One head: fp16 little-endian, row-major; 'causal' keeps the lower triangle. */
  "CREATE TABLE attention (\n"
  "  id      INTEGER PRIMARY KEY,\n"
  "  run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,\n"
  "  layer   INTEGER NOT NULL CHECK (layer >= 0),\n"
  "  head    INTEGER NOT NULL CHECK (head >= 0),\n"
  "  n_query INTEGER NOT NULL CHECK (n_query > 0),\n"
  "  n_key   INTEGER NOT NULL CHECK (n_key > 0),\n"
  "  layout  TEXT    NOT NULL CHECK (layout IN ('full', 'causal')),\n"
  "  dtype   TEXT    NOT NULL CHECK (dtype = 'f16'),\n"
  "  data    BLOB    NOT NULL CHECK (typeof (data) = 'blob'),\n"
  "  UNIQUE (run_id, layer, head),\n"
  "  CHECK (layout = 'full' OR n_query = n_key),\n"
  "  CHECK (length (data) = 2 * CASE layout WHEN 'causal' THEN n_query * (n_query + 1) / 2\n"
  "                                         ELSE n_query * n_key END)\n"
  ");\n"
  /* Per-head numbers (entropy, induction score ...) of one run or of a model. */
  "CREATE TABLE head_scores (\n"
  "  id       INTEGER PRIMARY KEY,\n"
  "  run_id   INTEGER REFERENCES runs (id) ON DELETE CASCADE,\n"
  "  model_id INTEGER REFERENCES models (id) ON DELETE CASCADE,\n"
  "  layer    INTEGER NOT NULL CHECK (layer >= 0),\n"
  "  head     INTEGER NOT NULL CHECK (head >= 0),\n"
  "  metric   TEXT    NOT NULL,\n"
  "  value    REAL,\n" /* NULL: undefined (SQLite stores NaN as NULL anyway) */
  "  CHECK ((run_id IS NULL) <> (model_id IS NULL))\n"
  ");\n"
  "CREATE UNIQUE INDEX head_scores_run ON head_scores (run_id, layer, head, metric)\n"
  "  WHERE run_id IS NOT NULL;\n"
  "CREATE UNIQUE INDEX head_scores_model ON head_scores (model_id, layer, head, metric)\n"
  "  WHERE model_id IS NOT NULL;\n"
  /* An ablation study: its kind ('heads', 'tokens', 'permute' ...) and parameters (JSON). */
  "CREATE TABLE studies (\n"
  "  id       INTEGER PRIMARY KEY AUTOINCREMENT,\n"
  "  kind     TEXT    NOT NULL,\n"
  "  model_id INTEGER NOT NULL REFERENCES models (id),\n"
  "  run_id   INTEGER REFERENCES runs (id) ON DELETE CASCADE,\n"
  "  params   TEXT    NOT NULL DEFAULT '{}',\n"
  "  created  INTEGER NOT NULL,\n"
  "  status   TEXT    NOT NULL DEFAULT 'writing' CHECK (status IN ('writing', 'complete'))\n"
  ");\n"
  "CREATE INDEX studies_model ON studies (model_id);\n"
  "CREATE INDEX studies_run ON studies (run_id);\n"
  /* One measured effect: target names what was ablated ('head:L.H', 'token:P' ...). */
  "CREATE TABLE ablations (\n"
  "  study_id INTEGER NOT NULL REFERENCES studies (id) ON DELETE CASCADE,\n"
  "  target   TEXT    NOT NULL,\n"
  "  metric   TEXT    NOT NULL,\n"
  "  value    REAL,\n"
  "  PRIMARY KEY (study_id, target, metric)\n"
  ") WITHOUT ROWID;\n";

/* Migration i takes the schema from version i to i + 1. */
static const char *const MIGRATIONS[SC_STORE_SCHEMA_VERSION] = {
  SCHEMA_V1,
};

/* Runs "PRAGMA name" and returns its integer result in *@value. */
static int
pragma_int (sqlite3 *db, const char *name, int64_t *value)
{
  char sql[64];
  sqlite3_stmt *st = NULL;
  int rc;

  snprintf (sql, sizeof sql, "PRAGMA %s", name);
  if ((rc = sqlite3_prepare_v2 (db, sql, -1, &st, NULL)) != SQLITE_OK)
    return rc;
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW)
    {
      *value = sqlite3_column_int64 (st, 0);
      rc = SQLITE_OK;
    }
  else if (rc == SQLITE_DONE)
    rc = SQLITE_ERROR;
  sqlite3_finalize (st);
  return rc;
}

static int
read_header_facts (sqlite3 *db, int64_t *app_id, int64_t *version, int64_t *n_objects)
{
  sqlite3_stmt *st = NULL;
  int rc;

  /* The first read of the file: this is where SQLite says "not a database". */
  if ((rc = sqlite3_prepare_v2 (db, "SELECT count(*) FROM sqlite_schema", -1, &st, NULL))
      != SQLITE_OK)
    return rc;
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW)
    {
      *n_objects = sqlite3_column_int64 (st, 0);
      rc = SQLITE_OK;
    }
  sqlite3_finalize (st);
  if (rc != SQLITE_OK)
    return rc;
  if ((rc = pragma_int (db, "application_id", app_id)) != SQLITE_OK)
    return rc;
  return pragma_int (db, "user_version", version);
}

/* Reads the three facts that decide what a file is, in one read transaction (three
 * separate reads could straddle another process's schema creation and see its
 * user_version without its application_id); no writes. */
static int
read_header (sqlite3 *db, int64_t *app_id, int64_t *version, int64_t *n_objects)
{
  bool own = sqlite3_get_autocommit (db) != 0;
  int rc;

  if (own && (rc = sc_store_exec (db, "BEGIN")) != SQLITE_OK)
    return rc;
  rc = read_header_facts (db, app_id, version, n_objects);
  if (own)
    sc_store_exec (db, rc == SQLITE_OK ? "COMMIT" : "ROLLBACK");
  return rc;
}

static ScStatus
check_header (const char *path, int64_t app_id, int64_t version, int64_t n_objects,
              ScError *err)
{
  if (app_id != SC_STORE_APPLICATION_ID && (app_id != 0 || version != 0 || n_objects != 0))
    return sc_error_set (err, SC_ERR_FORMAT,
                         "%s is an SQLite database but not a Saccade capture store "
                         "(application_id 0x%08llx, user_version %lld); choose another file "
                         "with --db", path, (unsigned long long) (uint32_t) app_id,
                         (long long) version);
  if (version > SC_STORE_SCHEMA_VERSION)
    return sc_error_set (err, SC_ERR_UNSUPPORTED,
                         "%s was created by a newer Saccade (schema %lld); this version reads "
                         "up to %d", path, (long long) version, SC_STORE_SCHEMA_VERSION);
  if (version < 0 || (app_id == SC_STORE_APPLICATION_ID && version == 0 && n_objects != 0))
    return sc_error_set (err, SC_ERR_FORMAT,
                         "%s: inconsistent store header (user_version %lld with %lld schema "
                         "objects)", path, (long long) version, (long long) n_objects);
  return SC_OK;
}

ScStatus
sc_store_schema_inspect (sqlite3 *db, const char *path, int *version, int *sqlite_rc,
                         ScError *err)
{
  int64_t app_id = 0, v = 0, n_objects = 0;
  ScStatus st;
  int rc;

  rc = read_header (db, &app_id, &v, &n_objects);
  if (sqlite_rc != NULL)
    *sqlite_rc = rc;
  if (rc != SQLITE_OK)
    return sc_store_sqlite_error (err, db, rc, path, "reading the store's header");
  if ((st = check_header (path, app_id, v, n_objects, err)) != SC_OK)
    return st;
  *version = (int) v;
  return SC_OK;
}

/* Settings that only an empty database can take: they shape the file itself. */
static ScStatus
init_empty (sqlite3 *db, const char *path, ScError *err)
{
  char sql[128];
  int rc;

  /* page_size and auto_vacuum must come before the first table; WAL before anyone else can
   * open the file in rollback mode (docs/store.md says why each). */
  snprintf (sql, sizeof sql, "PRAGMA page_size = %d; PRAGMA auto_vacuum = INCREMENTAL",
            SC_STORE_PAGE_SIZE);
  if ((rc = sc_store_exec (db, sql)) != SQLITE_OK)
    return sc_store_sqlite_error (err, db, rc, path, "setting up a new store");
  return SC_OK;
}

ScStatus
sc_store_schema_prepare (sqlite3 *db, const char *path, int *version, ScError *err)
{
  int64_t app_id = 0, v = 0, n_objects = 0;
  char sql[96];
  ScStatus st;
  int rc;

  if ((rc = read_header (db, &app_id, &v, &n_objects)) != SQLITE_OK)
    return sc_store_sqlite_error (err, db, rc, path, "reading the store's header");
  if ((st = check_header (path, app_id, v, n_objects, err)) != SC_OK)
    return st;
  if (v == 0 && (st = init_empty (db, path, err)) != SC_OK)
    return st;

  /* journal_mode is persistent; setting it on a store already in WAL changes nothing. */
  if ((rc = sc_store_exec (db, "PRAGMA journal_mode = WAL")) != SQLITE_OK)
    return sc_store_sqlite_error (err, db, rc, path, "switching to WAL mode");

  while (v < SC_STORE_SCHEMA_VERSION)
    {
      /* BEGIN IMMEDIATE serialises two processes creating the same store: the second
       * waits, then sees the first one's version and has nothing left to do. */
      if ((rc = sc_store_exec (db, "BEGIN IMMEDIATE")) != SQLITE_OK)
        return sc_store_sqlite_error (err, db, rc, path, "starting the schema update");
      if ((rc = read_header (db, &app_id, &v, &n_objects)) != SQLITE_OK)
        goto fail;
      if ((st = check_header (path, app_id, v, n_objects, err)) != SC_OK)
        {
          sc_store_exec (db, "ROLLBACK");
          return st;
        }
      if (v >= SC_STORE_SCHEMA_VERSION)
        {
          sc_store_exec (db, "ROLLBACK");
          break;
        }
      if ((rc = sc_store_exec (db, MIGRATIONS[v])) != SQLITE_OK)
        goto fail;
      snprintf (sql, sizeof sql, "PRAGMA application_id = %d; PRAGMA user_version = %lld",
                SC_STORE_APPLICATION_ID, (long long) (v + 1));
      if ((rc = sc_store_exec (db, sql)) != SQLITE_OK)
        goto fail;
      if ((rc = sc_store_exec (db, "COMMIT")) != SQLITE_OK)
        goto fail;
      v++;
    }
  *version = (int) v;
  return SC_OK;

fail:
  st = sc_store_sqlite_error (err, db, rc, path, "updating the schema to version %lld",
                              (long long) (v + 1));
  if (!sqlite3_get_autocommit (db))
    sc_store_exec (db, "ROLLBACK");
  return st;
}
