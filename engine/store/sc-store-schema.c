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

#include <pthread.h>
#include <stdbool.h>
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

/* Schema v2: the results of a study, in two generic shapes that every study kind can use
 * (the induction detector now, the ablation studies next): a number per (layer, head,
 * metric) and a number per (series, position). A study's rows are written in the same
 * transaction that marks it complete (sc-store-study.c). NULL values are undefined numbers
 * (NaN). The index finds "the latest complete study of this kind for this model". */
static const char SCHEMA_V2[] =
  "CREATE TABLE study_heads (\n"
  "  study_id INTEGER NOT NULL REFERENCES studies (id) ON DELETE CASCADE,\n"
  "  layer    INTEGER NOT NULL CHECK (layer >= 0),\n"
  "  head     INTEGER NOT NULL CHECK (head >= 0),\n"
  "  metric   TEXT    NOT NULL,\n"
  "  value    REAL,\n"
  "  PRIMARY KEY (study_id, layer, head, metric)\n"
  ") WITHOUT ROWID;\n"
  "CREATE TABLE study_series (\n"
  "  study_id INTEGER NOT NULL REFERENCES studies (id) ON DELETE CASCADE,\n"
  "  series   TEXT    NOT NULL,\n"
  "  pos      INTEGER NOT NULL CHECK (pos >= 0),\n"
  "  value    REAL,\n"
  "  PRIMARY KEY (study_id, series, pos)\n"
  ") WITHOUT ROWID;\n"
  "CREATE INDEX studies_kind ON studies (model_id, kind, status);\n";

/* Migration i takes the schema from version i to i + 1. */
/* Schema v3: long runs (docs/store.md, "Schema v3"). Nothing of v2 changes meaning:
 *   runs.kept        NULL: the run has every head (every run before v3); else a bitmap of
 *                    the heads it kept, bit (layer * n_heads + head) of byte bit / 8, least
 *                    significant bit first;
 *   runs.sparse_eps  NULL: heads are dense; else the EPS of the sparse form (below);
 *   head_overviews   per kept head, an S x S fp16 image (sc_store_overview_size) whose cell
 *                    (a, b) is the largest stored value over a block of rows x keys, for a
 *                    window that must show a head without reading it;
 *   attention_parts  heads not stored as one attention row: a dense head too large for one
 *                    BLOB, in row blocks [row0, row1) of its packed layout ('causal' /
 *                    'full'), or a sparse head ('sparse'), also in row blocks: per row, the
 *                    kept (key, fp16 value) pairs, keys (u32) and data (f16) in the same
 *                    order, offsets (u64, row1 - row0 + 1 of them) indexing the head's
 *                    pairs from its first, and the mass each row dropped (f32).
 * A kept head is either one attention row or a run of parts covering rows 0..n_query,
 * never both.
 *   predictions      per position, the top-k next tokens the model predicted after it
 *                    (rank 0 the likeliest), their pieces, logits and probabilities
 *                    (sc-store-predictions.h); none for a run stored without them. */
static const char SCHEMA_V3[] =
  "ALTER TABLE runs ADD COLUMN kept BLOB CHECK (kept IS NULL OR typeof (kept) = 'blob');\n"
  "ALTER TABLE runs ADD COLUMN sparse_eps REAL\n"
  "  CHECK (sparse_eps IS NULL OR (sparse_eps > 0 AND sparse_eps < 1));\n"
  "CREATE TABLE head_overviews (\n"
  "  id      INTEGER PRIMARY KEY,\n"
  "  run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,\n"
  "  layer   INTEGER NOT NULL CHECK (layer >= 0),\n"
  "  head    INTEGER NOT NULL CHECK (head >= 0),\n"
  "  size    INTEGER NOT NULL CHECK (size > 0),\n"
  "  dtype   TEXT    NOT NULL CHECK (dtype = 'f16'),\n"
  "  data    BLOB    NOT NULL CHECK (typeof (data) = 'blob' AND length (data) = 2 * size * size),\n"
  "  UNIQUE (run_id, layer, head)\n"
  ");\n"
  "CREATE TABLE attention_parts (\n"
  "  id      INTEGER PRIMARY KEY,\n"
  "  run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,\n"
  "  layer   INTEGER NOT NULL CHECK (layer >= 0),\n"
  "  head    INTEGER NOT NULL CHECK (head >= 0),\n"
  "  row0    INTEGER NOT NULL CHECK (row0 >= 0),\n"
  "  row1    INTEGER NOT NULL CHECK (row1 > row0),\n"
  "  n_query INTEGER NOT NULL CHECK (n_query >= row1),\n"
  "  n_key   INTEGER NOT NULL CHECK (n_key > 0),\n"
  "  layout  TEXT    NOT NULL CHECK (layout IN ('full', 'causal', 'sparse')),\n"
  "  dtype   TEXT    NOT NULL CHECK (dtype = 'f16'),\n"
  "  dropped BLOB    CHECK ((layout = 'sparse') = (typeof (dropped) = 'blob')),\n"
  "  offsets BLOB    CHECK ((layout = 'sparse') = (typeof (offsets) = 'blob')),\n"
  "  keys    BLOB    CHECK ((layout = 'sparse') = (typeof (keys) = 'blob')),\n"
  "  data    BLOB    NOT NULL CHECK (typeof (data) = 'blob'),\n"
  "  UNIQUE (run_id, layer, head, row0),\n"
  "  CHECK (layout = 'full' OR n_query = n_key),\n"
  "  CHECK (layout <> 'sparse' OR (length (dropped) = 4 * (row1 - row0)\n"
  "                                AND length (offsets) = 8 * (row1 - row0 + 1)\n"
  "                                AND length (keys) = 2 * length (data))),\n"
  "  CHECK (layout = 'sparse' OR length (data) = 2 * CASE layout\n"
  "           WHEN 'causal' THEN row1 * (row1 + 1) / 2 - row0 * (row0 + 1) / 2\n"
  "           ELSE (row1 - row0) * n_key END)\n"
  ");\n"
  "CREATE TABLE predictions (\n"
  "  run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,\n"
  "  pos      INTEGER NOT NULL CHECK (pos >= 0),\n"
  "  rank     INTEGER NOT NULL CHECK (rank >= 0),\n"
  "  token_id INTEGER NOT NULL CHECK (token_id >= 0),\n"
  "  piece    BLOB    NOT NULL CHECK (typeof (piece) = 'blob'),\n"
  "  logit    REAL,\n" /* NULL: not known */
  "  prob     REAL    NOT NULL CHECK (prob >= 0 AND prob <= 1),\n"
  "  PRIMARY KEY (run_id, pos, rank)\n"
  ") WITHOUT ROWID;\n";

/* Schema v4: sliding-window heads (docs/store.md, "Band heads"). Nothing of v3 changes
 * meaning:
 *   layer_windows    per run, one row for each local layer of its model: the attention
 *                    window (sc_model_layer_window) of that layer, whatever the run's length;
 *                    a layer without a row is global (every layer of every run before v4);
 *   attention_bands  heads of local layers stored as their band: row i holds keys
 *                    max (0, i - w + 1)..i, min (i + 1, w) fp16 values, so a head of n
 *                    tokens takes about n w values instead of n (n + 1) / 2; in row blocks
 *                    [row0, row1) like attention_parts (one row when it fits one BLOB).
 *                    Only when 0 < w < n: a shorter run's heads stay 'causal'.
 * A kept head is one attention row, or attention_parts rows, or attention_bands rows. */
static const char SCHEMA_V4[] =
  "CREATE TABLE layer_windows (\n"
  "  run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,\n"
  "  layer   INTEGER NOT NULL CHECK (layer >= 0),\n"
  "  size    INTEGER NOT NULL CHECK (size > 0),\n"
  "  PRIMARY KEY (run_id, layer)\n"
  ") WITHOUT ROWID;\n"
  "CREATE TABLE attention_bands (\n"
  "  id          INTEGER PRIMARY KEY,\n"
  "  run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,\n"
  "  layer       INTEGER NOT NULL CHECK (layer >= 0),\n"
  "  head        INTEGER NOT NULL CHECK (head >= 0),\n"
  "  row0        INTEGER NOT NULL CHECK (row0 >= 0),\n"
  "  row1        INTEGER NOT NULL CHECK (row1 > row0),\n"
  "  n_query     INTEGER NOT NULL CHECK (n_query >= row1),\n"
  "  window_size INTEGER NOT NULL CHECK (window_size > 0 AND window_size < n_query),\n"
  "  dtype       TEXT    NOT NULL CHECK (dtype = 'f16'),\n"
  "  data        BLOB    NOT NULL CHECK (typeof (data) = 'blob'),\n"
  "  UNIQUE (run_id, layer, head, row0),\n"
  /* values before row r: r (r + 1) / 2 up to the window, then w a row */
  "  CHECK (length (data) = 2 * (\n"
  "    CASE WHEN row1 <= window_size THEN row1 * (row1 + 1) / 2\n"
  "         ELSE window_size * (window_size + 1) / 2 + (row1 - window_size) * window_size END\n"
  "    - CASE WHEN row0 <= window_size THEN row0 * (row0 + 1) / 2\n"
  "           ELSE window_size * (window_size + 1) / 2 + (row0 - window_size) * window_size END))\n"
  ");\n";

/* Schema v5: compressed heads (docs/store.md, "Compressed heads"). Nothing of v4 changes
 * meaning:
 *   attention_z  a dense head ('causal', 'full') in row blocks [row0, row1) like
 *                attention_parts (one row when it fits one BLOB), each row's values in
 *                their packed fp16 order (as attention) cut into blocks of block_rows rows
 *                from row0
 *                (the last may be shorter), each block its high bytes then its low bytes,
 *                compressed as one zstd frame (codec 'zstd-split'); blocks holds the
 *                blocks' n + 1 byte offsets into data (u64, little-endian: 0, ...,
 *                length (data)), so that a reader decompresses one block at a time.
 * Sparse heads and bands stay as v4 stores them. A kept head is one attention row, or
 * attention_parts rows, or attention_bands rows, or attention_z rows.
 * And what a run is:
 *   runs.kind           NULL: not said (every run before v5); 'text', 'chat', 'generated'
 *                       or 'ids' (ScRunKind);
 *   runs.prompt_tokens  'generated': how many of the run's tokens are the prompt's (the
 *                       rest were generated; fewer than n_tokens); NULL otherwise. */
static const char SCHEMA_V5[] =
  "CREATE TABLE attention_z (\n"
  "  id          INTEGER PRIMARY KEY,\n"
  "  run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,\n"
  "  layer       INTEGER NOT NULL CHECK (layer >= 0),\n"
  "  head        INTEGER NOT NULL CHECK (head >= 0),\n"
  "  row0        INTEGER NOT NULL CHECK (row0 >= 0),\n"
  "  row1        INTEGER NOT NULL CHECK (row1 > row0),\n"
  "  n_query     INTEGER NOT NULL CHECK (n_query >= row1),\n"
  "  n_key       INTEGER NOT NULL CHECK (n_key > 0),\n"
  "  layout      TEXT    NOT NULL CHECK (layout IN ('full', 'causal')),\n"
  "  dtype       TEXT    NOT NULL CHECK (dtype = 'f16'),\n"
  "  codec       TEXT    NOT NULL CHECK (codec = 'zstd-split'),\n"
  "  block_rows  INTEGER NOT NULL CHECK (block_rows > 0),\n"
  "  blocks      BLOB    NOT NULL CHECK (typeof (blocks) = 'blob' AND length (blocks) =\n"
  "                                      8 * ((row1 - row0 + block_rows - 1) / block_rows + 1)),\n"
  "  data        BLOB    NOT NULL CHECK (typeof (data) = 'blob'),\n"
  "  UNIQUE (run_id, layer, head, row0),\n"
  "  CHECK (layout = 'full' OR n_query = n_key)\n"
  ");\n"
  "ALTER TABLE runs ADD COLUMN kind TEXT\n"
  "  CHECK (kind IS NULL OR kind IN ('text', 'chat', 'generated', 'ids'));\n"
  "ALTER TABLE runs ADD COLUMN prompt_tokens INTEGER\n"
  "  CHECK (prompt_tokens IS NULL OR (kind = 'generated' AND prompt_tokens > 0\n"
  "                                   AND prompt_tokens < n_tokens));\n";

/* Schema v6: the rounded form (docs/store.md, "Rounded heads"). Nothing of v5 changes
 * meaning; a run with both columns NULL is stored as before:
 *   runs.round_bits  NULL: values stored as their fp16; else 1..9: the values of the run's
 *                    attention_z heads were rounded to this many mantissa bits after their
 *                    leading one (relative error at most 2^-(round_bits + 1));
 *   runs.zero_below  NULL: none; else in (0, 1): values of its attention_z heads whose fp16
 *                    was below it were stored as 0. */
static const char SCHEMA_V6[] =
  "ALTER TABLE runs ADD COLUMN round_bits INTEGER\n"
  "  CHECK (round_bits IS NULL OR round_bits BETWEEN 1 AND 9);\n"
  "ALTER TABLE runs ADD COLUMN zero_below REAL\n"
  "  CHECK (zero_below IS NULL OR (zero_below > 0 AND zero_below < 1));\n";

static const char *const MIGRATIONS[SC_STORE_SCHEMA_VERSION] = {
  SCHEMA_V1,
  SCHEMA_V2,
  SCHEMA_V3,
  SCHEMA_V4,
  SCHEMA_V5,
  SCHEMA_V6,
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

/* Reads the facts that decide what a file is and checks them — and the schema of a
 * non-empty store — in one read transaction unless the caller holds one (separate reads
 * could straddle another process's schema creation and see its user_version without its
 * application_id); no writes. *@sqlite_rc (may be NULL): SQLite's code for the reads. */
static ScStatus
inspect (sqlite3 *db, const char *path, int64_t *version, int *sqlite_rc, ScError *err)
{
  bool own = sqlite3_get_autocommit (db) != 0;
  int64_t app_id = 0, v = 0, n_objects = 0;
  ScStatus st;
  int rc = SQLITE_OK;

  if (own)
    rc = sc_store_exec (db, "BEGIN");
  if (rc == SQLITE_OK)
    rc = read_header_facts (db, &app_id, &v, &n_objects);
  if (sqlite_rc != NULL)
    *sqlite_rc = rc;
  if (rc != SQLITE_OK)
    st = sc_store_sqlite_error (err, db, rc, path, "reading the store's header");
  else if ((st = check_header (path, app_id, v, n_objects, err)) == SC_OK && v > 0)
    st = sc_store_schema_verify (db, path, (int) v, err);
  if (own && !sqlite3_get_autocommit (db))
    sc_store_exec (db, "COMMIT"); /* a read transaction: nothing to keep or undo */
  *version = v;
  return st;
}

ScStatus
sc_store_schema_inspect (sqlite3 *db, const char *path, int *version, int *sqlite_rc,
                         ScError *err)
{
  int64_t v = 0;
  ScStatus st = inspect (db, path, &v, sqlite_rc, err);

  if (st == SC_OK)
    *version = (int) v;
  return st;
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
sc_store_schema_prepare (sqlite3 *db, const char *path, int busy_ms, int *version,
                         ScError *err)
{
  int64_t v = 0;
  char sql[96];
  ScStatus st;
  int rc;

  /* Header and schema are checked before the first write (journal_mode below is one): a
   * store that is not ours is refused as it was found. */
  if ((st = inspect (db, path, &v, NULL, err)) != SC_OK)
    return st;
  if (v == 0 && (st = init_empty (db, path, err)) != SC_OK)
    return st;

  /* journal_mode is persistent; setting it on a store already in WAL changes nothing.
   * Switching needs an exclusive lock, and when another connection is switching or
   * creating the same new store at that moment SQLite answers SQLITE_BUSY at once, without
   * calling the busy handler (waiting could deadlock two lock upgrades). So retry here, for
   * as long as the connection's busy timeout would have waited. */
  {
    const int step_ms = 5;
    int waited_ms = 0;

    while ((rc = sc_store_exec (db, "PRAGMA journal_mode = WAL")) == SQLITE_BUSY
           && waited_ms < busy_ms)
      {
        sqlite3_sleep (step_ms);
        waited_ms += step_ms;
      }
  }
  if (rc != SQLITE_OK)
    return sc_store_sqlite_error (err, db, rc, path, "switching to WAL mode");

  while (v < SC_STORE_SCHEMA_VERSION)
    {
      /* BEGIN IMMEDIATE serialises two processes creating the same store: the second
       * waits, then sees the first one's version and has nothing left to do. */
      if ((rc = sc_store_exec (db, "BEGIN IMMEDIATE")) != SQLITE_OK)
        return sc_store_sqlite_error (err, db, rc, path, "starting the schema update");
      /* again under the write lock: another process may have changed the file since */
      if ((st = inspect (db, path, &v, NULL, err)) != SC_OK)
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

/* ------------------------------------------------------------------------------------ */
/* Is the file's schema ours?                                                            */

/* The schema this build writes for @version, in a new in-memory database: the reference
 * the file is compared with (it keeps the schema written down once, in MIGRATIONS). Opened
 * in serialized mode, so that one reference can serve every thread (reference_schema). */
static int
expected_schema (int version, sqlite3 **out)
{
  sqlite3 *mem = NULL;
  int rc, v;

  *out = NULL;
  rc = sqlite3_open_v2 (":memory:", &mem, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY
                                              | SQLITE_OPEN_FULLMUTEX, NULL);
  for (v = 0; rc == SQLITE_OK && v < version; v++)
    rc = sc_store_exec (mem, MIGRATIONS[v]);
  if (rc != SQLITE_OK)
    {
      sqlite3_close (mem);
      return rc;
    }
  *out = mem;
  return SQLITE_OK;
}

/* The references, built once per version and kept for the process. Building one runs every
 * migration up to it, ~2 ms: most of what opening a store cost, and the window opens the
 * store in each worker (48 opens for its start and one selection of a long run, nine at
 * once: docs/benchmarks.md, "Long runs in the window"). A reference is only read after it
 * is built; in serialized mode (SQLITE_OPEN_FULLMUTEX, sqlite3_threadsafe() != 0) threads
 * may step their own statements on the same connection. A library built without mutexes
 * gets a new reference per call, which the caller closes (*@owned). */
static pthread_mutex_t reference_lock = PTHREAD_MUTEX_INITIALIZER;
static sqlite3 *references[SC_STORE_SCHEMA_VERSION + 1];

static int
reference_schema (int version, sqlite3 **out, bool *owned)
{
  int rc = SQLITE_OK;

  *out = NULL;
  *owned = false;
  if (version < 0 || version > SC_STORE_SCHEMA_VERSION)
    return SQLITE_RANGE;
  if (sqlite3_threadsafe () == 0)
    {
      *owned = true;
      return expected_schema (version, out);
    }
  pthread_mutex_lock (&reference_lock);
  if (references[version] == NULL)
    rc = expected_schema (version, &references[version]);
  *out = references[version];
  pthread_mutex_unlock (&reference_lock);
  return rc;
}

/* A column of a text result as a string for comparison; NULL stays NULL. */
static const char *
col_text (sqlite3_stmt *st, int col)
{
  return (const char *) sqlite3_column_text (st, col);
}

static bool
same_text (const char *a, const char *b)
{
  return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp (a, b) == 0);
}

/* What the user can do about a schema that is not ours. */
#define SCHEMA_REMEDY "the store is not opened: ask whoever sent it for a clean copy"

/* One table's columns (cid, name, type, notnull, dflt_value, pk, hidden) against the
 * reference's. */
static ScStatus
compare_columns (sqlite3 *db, sqlite3 *ref, const char *path, const char *table, int version,
                 ScError *err)
{
  static const char sql[] = "SELECT name, type, \"notnull\", dflt_value, pk, hidden "
                            "FROM pragma_table_xinfo (?) ORDER BY cid";
  sqlite3_stmt *a = NULL, *b = NULL;
  ScStatus status = SC_OK;
  int rc_a, rc_b, cid;

  if (sqlite3_prepare_v2 (db, sql, -1, &a, NULL) != SQLITE_OK
      || sqlite3_prepare_v2 (ref, sql, -1, &b, NULL) != SQLITE_OK)
    {
      status = sc_store_sqlite_error (err, db, sqlite3_errcode (db), path,
                                      "reading the columns of table %s", table);
      goto out;
    }
  sqlite3_bind_text (a, 1, table, -1, SQLITE_STATIC);
  sqlite3_bind_text (b, 1, table, -1, SQLITE_STATIC);
  for (cid = 0;; cid++)
    {
      rc_a = sqlite3_step (a);
      rc_b = sqlite3_step (b);
      if (rc_a != SQLITE_ROW && rc_a != SQLITE_DONE)
        {
          status = sc_store_sqlite_error (err, db, rc_a, path, "reading the columns of table %s",
                                          table);
          break;
        }
      if (rc_a == SQLITE_DONE && rc_b == SQLITE_DONE)
        break;
      if (rc_a == SQLITE_ROW && rc_b == SQLITE_ROW)
        {
          bool same = true;
          for (int k = 0; k < 6; k++)
            same = same && same_text (col_text (a, k), col_text (b, k));
          if (same)
            continue;
        }
      {
        char got[96] = "nothing", want[96] = "nothing";
        if (rc_a == SQLITE_ROW)
          {
            char q[64];
            const char *t = col_text (a, 1);
            sc_store_quote (col_text (a, 0), (size_t) sqlite3_column_bytes (a, 0), q, sizeof q);
            snprintf (got, sizeof got, "%s %s%s%s", q, t != NULL ? t : "",
                      sqlite3_column_int (a, 2) ? " NOT NULL" : "",
                      sqlite3_column_int (a, 5) ? " (hidden or generated)" : "");
          }
        if (rc_b == SQLITE_ROW)
          snprintf (want, sizeof want, "'%s' %s%s", col_text (b, 0), col_text (b, 1),
                    sqlite3_column_int (b, 2) ? " NOT NULL" : "");
        status = sc_error_set (err, SC_ERR_FORMAT, "%s: table %s is not the one Saccade writes: "
                               "its column %d is %s where schema version %d has %s; "
                               SCHEMA_REMEDY, path, table, cid, got, version, want);
      }
      break;
    }
out:
  sqlite3_finalize (a);
  sqlite3_finalize (b);
  return status;
}

/* Whether @s is a plain SQL identifier, safe to print bare in a command to copy. */
static bool
plain_identifier (const char *s, size_t len)
{
  size_t i;

  for (i = 0; i < len; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '_'
          || (i > 0 && s[i] >= '0' && s[i] <= '9')))
      return false;
  return len > 0 && len < 64;
}

/* The message for an object the reference does not have. */
static ScStatus
unknown_object (const char *path, const char *type, const char *name, size_t name_len,
                const char *tbl, size_t tbl_len, ScError *err)
{
  char qn[72], qt[80] = "", fix[160];
  const char *why, *drop;

  sc_store_quote (name, name_len, qn, sizeof qn);
  if (tbl_len != name_len || memcmp (tbl, name, name_len) != 0)
    {
      memcpy (qt, " on ", 4);
      sc_store_quote (tbl, tbl_len, qt + 4, sizeof qt - 4);
    }
  if (strcmp (type, "trigger") == 0)
    why = "a trigger runs its own SQL whenever rows change, so the store is not opened";
  else if (strcmp (type, "view") == 0)
    why = "a view runs its own query when it is read, so the store is not opened";
  else if (strcmp (type, "table") == 0 && strcmp (name, "sqlite_stat1") == 0)
    why = "it holds statistics from ANALYZE, which steer SQLite's query plans, so the store "
          "is not opened";
  else
    why = "the store is not opened";
  drop = strcmp (type, "index") == 0 ? "INDEX" : strcmp (type, "view") == 0 ? "VIEW"
         : strcmp (type, "trigger") == 0 ? "TRIGGER" : "TABLE";
  if (plain_identifier (name, name_len))
    snprintf (fix, sizeof fix, "sqlite3 FILE 'DROP %s %.*s'", drop, (int) name_len, name);
  else
    snprintf (fix, sizeof fix, "DROP %s in the sqlite3 tool", drop);
  return sc_error_set (err, SC_ERR_FORMAT,
                       "%s holds %s %s%s, which Saccade does not write: %s. If you trust the "
                       "file, remove it (%s), or ask whoever sent it for a clean copy", path,
                       type, qn, qt, why, fix);
}

ScStatus
sc_store_schema_verify (sqlite3 *db, const char *path, int version, ScError *err)
{
  sqlite3 *ref = NULL;
  sqlite3_stmt *file = NULL, *find = NULL, *all = NULL;
  ScStatus status = SC_OK;
  int64_t n_matched = 0;
  bool owned = false;
  int rc;

  if ((rc = reference_schema (version, &ref, &owned)) != SQLITE_OK)
    return sc_error_set (err, SC_ERR_NOMEM, "%s: cannot build the reference schema (%s)", path,
                         sqlite3_errstr (rc));
  if ((rc = sqlite3_prepare_v2 (db, "SELECT type, name, tbl_name, sql FROM main.sqlite_schema",
                                -1, &file, NULL)) != SQLITE_OK)
    {
      status = sc_store_sqlite_error (err, db, rc, path, "reading the store's schema");
      goto out;
    }
  if ((rc = sqlite3_prepare_v2 (ref, "SELECT type, tbl_name, sql FROM sqlite_schema "
                                     "WHERE name = ?", -1, &find, NULL)) != SQLITE_OK)
    {
      status = sc_store_sqlite_error (err, ref, rc, path, "reading the reference schema");
      goto out;
    }
  /* Pass 1: every object of the file is one of the reference's, of the same type, on the
   * same table, with the same columns and the same SQL. */
  while ((rc = sqlite3_step (file)) == SQLITE_ROW)
    {
      const char *type = col_text (file, 0), *name = col_text (file, 1);
      const char *tbl = col_text (file, 2), *sql = col_text (file, 3);
      const size_t name_len = (size_t) sqlite3_column_bytes (file, 1);
      const size_t tbl_len = (size_t) sqlite3_column_bytes (file, 2);
      char qn[72];

      if (type == NULL || name == NULL || tbl == NULL)
        {
          status = sc_error_set (err, SC_ERR_FORMAT, "%s: its schema table has a row without "
                                 "a type or name; " SCHEMA_REMEDY, path);
          break;
        }
      sqlite3_reset (find);
      sqlite3_bind_text (find, 1, name, (int) name_len, SQLITE_TRANSIENT);
      if ((rc = sqlite3_step (find)) != SQLITE_ROW)
        {
          status = unknown_object (path, type, name, name_len, tbl, tbl_len, err);
          break;
        }
      sc_store_quote (name, name_len, qn, sizeof qn);
      if (!same_text (type, col_text (find, 0)) || !same_text (tbl, col_text (find, 1)))
        {
          status = sc_error_set (err, SC_ERR_FORMAT, "%s: %s is a %s on %s, where Saccade "
                                 "writes a %s on %s; " SCHEMA_REMEDY, path, qn, type, tbl,
                                 col_text (find, 0), col_text (find, 1));
          if (strcmp (tbl, name) == 0 && same_text (tbl, col_text (find, 1)))
            status = sc_error_set (err, SC_ERR_FORMAT, "%s: %s is a %s, where Saccade writes a "
                                   "%s; " SCHEMA_REMEDY, path, qn, type, col_text (find, 0));
          break;
        }
      if (strcmp (type, "table") == 0
          && (status = compare_columns (db, ref, path, name, version, err)) != SC_OK)
        break;
      if (!same_text (sql, col_text (find, 2)))
        {
          status = sc_error_set (err, SC_ERR_FORMAT, "%s: the definition of %s %s differs from "
                                 "what Saccade writes (a constraint, key, collation or "
                                 "condition was changed); " SCHEMA_REMEDY, path, type, qn);
          break;
        }
      n_matched++;
    }
  if (status == SC_OK && rc != SQLITE_DONE)
    status = sc_store_sqlite_error (err, db, rc, path, "reading the store's schema");
  if (status != SC_OK)
    goto out;

  /* Pass 2: nothing of the reference is missing (names are unique, so counting the
   * matches is enough to know; the query names the first one missing). */
  if ((rc = sqlite3_prepare_v2 (ref, "SELECT type, name FROM sqlite_schema", -1, &all, NULL))
      != SQLITE_OK)
    {
      status = sc_store_sqlite_error (err, ref, rc, path, "reading the reference schema");
      goto out;
    }
  {
    int64_t n_ref = 0;
    while (sqlite3_step (all) == SQLITE_ROW)
      n_ref++;
    if (n_ref != n_matched)
      {
        sqlite3_stmt *has = NULL;
        sqlite3_reset (all);
        if (sqlite3_prepare_v2 (db, "SELECT 1 FROM main.sqlite_schema WHERE name = ?", -1,
                                &has, NULL) == SQLITE_OK)
          while (sqlite3_step (all) == SQLITE_ROW)
            {
              sqlite3_reset (has);
              sqlite3_bind_text (has, 1, col_text (all, 1), -1, SQLITE_TRANSIENT);
              if (sqlite3_step (has) != SQLITE_ROW)
                break;
            }
        status = sc_error_set (err, SC_ERR_FORMAT, "%s lacks the %s %s of schema version %d: "
                               "the store is damaged or was edited; " SCHEMA_REMEDY, path,
                               col_text (all, 0) != NULL ? col_text (all, 0) : "object",
                               col_text (all, 1) != NULL ? col_text (all, 1) : "?", version);
        sqlite3_finalize (has);
      }
  }
out:
  sqlite3_finalize (file);
  sqlite3_finalize (find);
  sqlite3_finalize (all);
  if (owned)
    sqlite3_close (ref);
  return status;
}
