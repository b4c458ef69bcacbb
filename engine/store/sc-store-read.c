/* sc-store-read.c — reading runs out of a store, trusting none of it: the listing, one
 * run, and the checked shape of a run that the readers of its tokens and heads start from.
 *
 * The database may come from anyone (a colleague's capture, a file from the web), so it is
 * input like a GGUF file: every number read here is checked — its type first (an INTEGER
 * column can hold text or a real), then its range, then against the other tables' numbers
 * (a head against its run, a run against its model) — before it sizes a buffer, indexes an
 * array or divides. The invariants the callers get are the contract at the top of
 * sc-store.h; docs/store.md ("Trust") gives the ceilings and their reasons.
 *
 * Workload: a listing of tens to thousands of runs (each checked with two index-only
 * aggregates), one run's tokens, heads of 10 kB to a few MB read one at a time. Text cells
 * (a run's text, the model's name and path, the backend) are read through SQLite's
 * incremental BLOB I/O, which knows a cell's size without reading it: a 300 MB text costs
 * a listing its first page, not 300 MB.
 *
 * What it is not: opening and the schema check (sc-store.c, sc-store-schema.c), the
 * primitive checks of a cell (sc-store-base.c), tokens (sc-store-tokens.c), heads
 * (sc-store-heads.c), writing (sc-store-writer.c).
 */
#include "store/sc-store-private.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------ */
/* Text cells through incremental I/O                                                    */

/* One column of a rowid table, read through a BLOB handle that moves from row to row
 * (sqlite3_blob_reopen is much cheaper than a new handle). */
typedef struct {
  const char *table, *column;
  sqlite3_blob *blob;
} Cell;

static void
cell_close (Cell *c)
{
  sqlite3_blob_close (c->blob);
  c->blob = NULL;
}

/* Points @c at row @rowid; *@size receives the cell's size in bytes (read from the
 * record's header: nothing of the value is read). The cell must hold text or a BLOB. */
static int
cell_seek (sqlite3 *db, Cell *c, int64_t rowid, size_t *size)
{
  int rc;

  if (c->blob != NULL)
    {
      rc = sqlite3_blob_reopen (c->blob, rowid);
      if (rc != SQLITE_OK)
        cell_close (c); /* a failed reopen leaves the handle unusable */
    }
  else
    rc = sqlite3_blob_open (db, "main", c->table, c->column, rowid, 0, &c->blob);
  if (rc != SQLITE_OK)
    return rc;
  *size = (size_t) sqlite3_blob_bytes (c->blob);
  return SQLITE_OK;
}

/* Where to cut @s, of which @n bytes are kept out of @full (s[n] is the first byte left
 * out): before a UTF-8 sequence the cut would split, backing off over up to 3 continuation
 * bytes to its lead byte; anywhere in bytes that are not UTF-8. */
static size_t
utf8_cut (const char *s, size_t n, size_t full)
{
  const unsigned char *u = (const unsigned char *) s;
  size_t k = n;

  if (n >= full)
    return n;
  while (k > 0 && n - k < 3 && (u[k] & 0xC0) == 0x80)
    k--;
  return (u[k] & 0xC0) == 0xC0 ? k : n;
}

/* Reads at most @max bytes of the cell (after cell_seek) into a new NUL-terminated string
 * (the cut backs off to a UTF-8 boundary). */
static int
cell_read (Cell *c, size_t size, size_t max, char **out, size_t *len)
{
  size_t n = size < max ? size : max;
  char *s;
  int rc;

  *out = NULL;
  *len = 0;
  /* one byte more than kept, to see whether the cut lands inside a UTF-8 sequence */
  if ((s = malloc (n + 2)) == NULL)
    return SQLITE_NOMEM;
  const size_t want = n + (n < size ? 1 : 0);
  rc = want > 0 ? sqlite3_blob_read (c->blob, s, (int) want, 0) : SQLITE_OK;
  if (rc != SQLITE_OK)
    {
      free (s);
      return rc;
    }
  n = utf8_cut (s, n, size);
  s[n] = '\0';
  *out = s;
  *len = n;
  return SQLITE_OK;
}

/* ------------------------------------------------------------------------------------ */
/* Runs                                                                                  */

/* The run row and its model, every value with what is needed to check it before it is
 * read: the types of the text cells (read through Cell), and the SHA-256 only when it is
 * the 32-byte BLOB it should be (so a huge one is never loaded). */
#define RUN_SELECT_COLS                                                                    \
  "SELECT r.id, r.model_id, r.created, r.n_tokens, r.forward_ms, r.capture_ms, "           \
  "r.attention_bytes, typeof (r.text), typeof (r.backend), m.id, "                        \
  "CASE WHEN typeof (m.sha256) = 'blob' AND length (m.sha256) = 32 THEN m.sha256 END, "   \
  "m.n_layers, m.n_heads, m.n_kv_heads, m.head_dim, m.n_vocab, typeof (m.name), "          \
  "typeof (m.arch), typeof (m.path), "
#define RUN_SELECT_FROM                                                                    \
  "FROM runs r LEFT JOIN models m ON m.id = r.model_id WHERE r.status = 'complete' "
/* Schema v3 adds the kept heads (their type and length: the bitmap is read through a
 * Cell once checked) and the sparse form; older files have every head, dense. */
/* Schema v5 adds what the run is (the kind read only when it is a short text). */
#define RUN_SELECT_KIND                                                                    \
  "typeof (r.kind), CASE WHEN typeof (r.kind) = 'text' AND length (r.kind) <= 16 THEN "     \
  "r.kind END, r.prompt_tokens, "
/* Schema v6 adds the rounded form. */
#define RUN_SELECT_V6                                                                      \
  RUN_SELECT_COLS "typeof (r.kept), length (r.kept), r.sparse_eps, " RUN_SELECT_KIND        \
  "r.round_bits, r.zero_below " RUN_SELECT_FROM
#define RUN_SELECT_V5                                                                      \
  RUN_SELECT_COLS "typeof (r.kept), length (r.kept), r.sparse_eps, " RUN_SELECT_KIND        \
  "NULL, NULL " RUN_SELECT_FROM
#define RUN_SELECT_V3                                                                      \
  RUN_SELECT_COLS "typeof (r.kept), length (r.kept), r.sparse_eps, 'null', NULL, NULL, "    \
  "NULL, NULL " RUN_SELECT_FROM
#define RUN_SELECT_V2                                                                      \
  RUN_SELECT_COLS "'null', NULL, NULL, 'null', NULL, NULL, NULL, NULL " RUN_SELECT_FROM
/* The run query for @store's schema, with @tail (a literal) after its WHERE. */
#define RUN_SELECT(store, tail)                                                            \
  ((store)->schema_version >= 6   ? RUN_SELECT_V6 tail                                     \
   : (store)->schema_version >= 5 ? RUN_SELECT_V5 tail                                     \
   : (store)->schema_version >= 3 ? RUN_SELECT_V3 tail                                     \
                                  : RUN_SELECT_V2 tail)

enum {
  COL_ID, COL_MODEL_ID, COL_CREATED, COL_N_TOKENS, COL_FORWARD, COL_CAPTURE, COL_ATT_BYTES,
  COL_TEXT_TYPE, COL_BACKEND_TYPE, COL_M_ID, COL_SHA, COL_LAYERS, COL_HEADS, COL_KV_HEADS,
  COL_HEAD_DIM, COL_VOCAB, COL_NAME_TYPE, COL_ARCH_TYPE, COL_PATH_TYPE, COL_KEPT_TYPE,
  COL_KEPT_LEN, COL_SPARSE_EPS, COL_KIND_TYPE, COL_KIND, COL_PROMPT, COL_ROUND_BITS,
  COL_ZERO_BELOW,
};

/* The text cells a run description reads, with one handle each. */
typedef struct {
  Cell text, backend, name, arch, path;
} RunCells;

static void
run_cells_init (RunCells *c)
{
  *c = (RunCells) {
    .text = { "runs", "text", NULL }, .backend = { "runs", "backend", NULL },
    .name = { "models", "name", NULL }, .arch = { "models", "arch", NULL },
    .path = { "models", "path", NULL },
  };
}

static void
run_cells_close (RunCells *c)
{
  cell_close (&c->text);
  cell_close (&c->backend);
  cell_close (&c->name);
  cell_close (&c->arch);
  cell_close (&c->path);
}

static bool
is_bytes_type (sqlite3_stmt *st, int col)
{
  const char *t = (const char *) sqlite3_column_text (st, col);
  return t != NULL && (strcmp (t, "text") == 0 || strcmp (t, "blob") == 0);
}

/* A milliseconds column as seconds: NULL is unknown (-1); else a finite number >= 0. */
static bool
ms_column (sqlite3_stmt *st, int col, double *s)
{
  int t = sqlite3_column_type (st, col);
  double v;

  if (t == SQLITE_NULL)
    {
      *s = -1.0;
      return true;
    }
  if (t != SQLITE_INTEGER && t != SQLITE_FLOAT)
    return false;
  v = sqlite3_column_double (st, col);
  if (!isfinite (v) || v < 0 || v > 1e15) /* 1e15 ms: 31 700 years */
    return false;
  *s = v / 1000.0;
  return true;
}

/* Checks the row's numbers (types, ranges, the model against itself) and fills @shape and,
 * when not NULL, the numbers of @info. */
static ScStatus
check_run_row (const ScStore *store, sqlite3_stmt *st, ScStoreRunShape *shape, ScStoreRunInfo *info,
               ScError *err)
{
  static const struct {
    int col;
    const char *name;
    int64_t lo, hi;
  } model_dims[] = {
    { COL_LAYERS, "n_layers", 1, SC_STORE_MAX_LAYERS },
    { COL_HEADS, "n_heads", 1, SC_STORE_MAX_HEADS },
    { COL_KV_HEADS, "n_kv_heads", 1, SC_STORE_MAX_HEADS },
    { COL_HEAD_DIM, "head_dim", 1, SC_STORE_MAX_HEAD_DIM },
    { COL_VOCAB, "n_vocab", 1, INT32_MAX },
  };
  int64_t id = 0, model_id = 0, v = 0, dims[5];
  char val[96];
  size_t i;

  memset (shape, 0, sizeof *shape);
  if (!sc_store_int_in (st, COL_ID, 1, INT64_MAX, &id))
    {
      /* no run id to name: say which value it is */
      sc_store_describe_value (st, COL_ID, val, sizeof val);
      return sc_error_set (err, SC_ERR_FORMAT, "%s: the runs table has a row whose id is %s, "
                           "not a positive integer; the store was edited or is damaged: use a "
                           "clean copy of the store", store->path, val);
    }
  if (!sc_store_int_in (st, COL_MODEL_ID, 1, INT64_MAX, &model_id))
    {
      sc_store_describe_value (st, COL_MODEL_ID, val, sizeof val);
      return sc_store_bad_run (store, id, err, "runs.model_id is %s, not a positive integer", val);
    }
  if (sqlite3_column_type (st, COL_M_ID) == SQLITE_NULL)
    return sc_store_bad_run (store, id, err, "runs.model_id is %lld, a model the store does not hold",
                    (long long) model_id);
  if (!sc_store_int_in (st, COL_CREATED, 0, SC_STORE_MAX_TIME_MS, &v))
    {
      sc_store_describe_value (st, COL_CREATED, val, sizeof val);
      return sc_store_bad_run (store, id, err, "runs.created is %s, not a time in milliseconds between "
                      "1970 and 9999", val);
    }
  if (!sc_store_int_in (st, COL_N_TOKENS, 1, SC_STORE_MAX_TOKENS, &v))
    {
      sc_store_describe_value (st, COL_N_TOKENS, val, sizeof val);
      return sc_store_bad_run (store, id, err, "runs.n_tokens is %s, outside 1..%u", val,
                      SC_STORE_MAX_TOKENS);
    }
  shape->n_tokens = (uint32_t) v;
  {
    double fwd, cap;
    if (!ms_column (st, COL_FORWARD, &fwd) || !ms_column (st, COL_CAPTURE, &cap))
      {
        int col = ms_column (st, COL_FORWARD, &fwd) ? COL_CAPTURE : COL_FORWARD;
        sc_store_describe_value (st, col, val, sizeof val);
        return sc_store_bad_run (store, id, err, "runs.%s is %s, not a duration in milliseconds",
                        col == COL_FORWARD ? "forward_ms" : "capture_ms", val);
      }
    if (info != NULL)
      {
        info->forward_s = fwd;
        info->capture_s = cap;
      }
  }
  if (!is_bytes_type (st, COL_TEXT_TYPE) || !is_bytes_type (st, COL_BACKEND_TYPE))
    {
      bool text = !is_bytes_type (st, COL_TEXT_TYPE);
      return sc_store_bad_run (store, id, err, "runs.%s holds %s, not text", text ? "text" : "backend",
                      (const char *) sqlite3_column_text (st, text ? COL_TEXT_TYPE
                                                                   : COL_BACKEND_TYPE));
    }
  if (sqlite3_column_type (st, COL_SHA) != SQLITE_BLOB)
    return sc_store_bad_run (store, id, err, "models row %lld: sha256 is not a 32-byte BLOB",
                    (long long) model_id);
  for (i = 0; i < sizeof model_dims / sizeof model_dims[0]; i++)
    if (!sc_store_int_in (st, model_dims[i].col, model_dims[i].lo, model_dims[i].hi, &dims[i]))
      {
        sc_store_describe_value (st, model_dims[i].col, val, sizeof val);
        return sc_store_bad_run (store, id, err, "models row %lld: %s is %s, outside %lld..%lld",
                        (long long) model_id, model_dims[i].name, val,
                        (long long) model_dims[i].lo, (long long) model_dims[i].hi);
      }
  /* dims: layers, heads, kv_heads, head_dim, vocab; each >= 1 from here on */
  if (dims[0] * dims[1] > (int64_t) SC_STORE_MAX_RUN_HEADS)
    return sc_store_bad_run (store, id, err, "models row %lld: %lld layers x %lld heads is more than "
                    "%u heads", (long long) model_id, (long long) dims[0], (long long) dims[1],
                    SC_STORE_MAX_RUN_HEADS);
  if (dims[2] > dims[1] || dims[1] % dims[2] != 0)
    return sc_store_bad_run (store, id, err, "models row %lld: n_kv_heads = %lld does not divide "
                    "n_heads = %lld", (long long) model_id, (long long) dims[2],
                    (long long) dims[1]);
  {
    /* at most every head full: 2 n^2 bytes each; n <= 2^19 and heads <= 2^16 keep this
     * under 2^55 */
    const uint64_t n = shape->n_tokens;
    const uint64_t most = (uint64_t) dims[0] * (uint64_t) dims[1] * 2u * n * n;
    if (!sc_store_int_in (st, COL_ATT_BYTES, 0, (int64_t) most, &v))
      {
        sc_store_describe_value (st, COL_ATT_BYTES, val, sizeof val);
        return sc_store_bad_run (store, id, err, "runs.attention_bytes is %s, outside 0..%llu (%lld "
                        "heads of %llu tokens)", val, (unsigned long long) most,
                        (long long) (dims[0] * dims[1]), (unsigned long long) n);
      }
  }
  if (!is_bytes_type (st, COL_NAME_TYPE) || !is_bytes_type (st, COL_ARCH_TYPE)
      || !is_bytes_type (st, COL_PATH_TYPE))
    return sc_store_bad_run (store, id, err, "models row %lld: name, arch and path must be text",
                    (long long) model_id);
  shape->id = id;
  shape->n_layers = (uint32_t) dims[0];
  shape->n_heads = (uint32_t) dims[1];
  shape->n_vocab = dims[4];
  if (info != NULL)
    {
      info->id = id;
      info->model_id = model_id;
      info->created_ms = sqlite3_column_int64 (st, COL_CREATED);
      info->n_tokens = shape->n_tokens;
      info->attention_bytes = (uint64_t) sqlite3_column_int64 (st, COL_ATT_BYTES);
      info->n_layers = (uint32_t) dims[0];
      info->n_heads = (uint32_t) dims[1];
      info->n_kv_heads = (uint32_t) dims[2];
      info->head_dim = (uint32_t) dims[3];
      info->n_vocab = (uint32_t) dims[4];
      sc_sha256_hex (sqlite3_column_blob (st, COL_SHA), info->model_sha256);
    }
  return SC_OK;
}

bool
sc_store_shape_keeps (const ScStoreRunShape *r, int layer, int head)
{
  size_t bit;

  if (layer < 0 || (uint32_t) layer >= r->n_layers || head < 0 || (uint32_t) head >= r->n_heads)
    return false;
  if (r->all_kept)
    return true;
  bit = (size_t) layer * r->n_heads + (size_t) head;
  return (r->kept[bit / 8] >> (bit % 8)) & 1u;
}

/* Schema v3's columns of the run row (checked by check_run_row's caller, after it): the
 * sparse EPS, and the kept bitmap, read through incremental I/O once its length is known
 * to be exactly one bit per head of the model, with no bit set past the last head and at
 * least one set. */
static ScStatus
load_kept (ScStore *store, sqlite3_stmt *st, ScStoreRunShape *shape, ScError *err)
{
  const size_t n_heads = (size_t) shape->n_layers * shape->n_heads; /* <= 2^16 */
  const size_t want = (n_heads + 7) / 8;
  const char *type = (const char *) sqlite3_column_text (st, COL_KEPT_TYPE);
  sqlite3_blob *blob = NULL;
  char val[96];
  size_t i;
  int rc;

  shape->sparse_eps = 0;
  if (sqlite3_column_type (st, COL_SPARSE_EPS) != SQLITE_NULL)
    {
      const double eps = sqlite3_column_double (st, COL_SPARSE_EPS);
      if (sqlite3_column_type (st, COL_SPARSE_EPS) != SQLITE_FLOAT || !(eps > 0 && eps < 1))
        {
          sc_store_describe_value (st, COL_SPARSE_EPS, val, sizeof val);
          return sc_store_bad_run (store, shape->id, err, "runs.sparse_eps is %s, not NULL or "
                                   "a number between 0 and 1", val);
        }
      shape->sparse_eps = eps;
    }
  shape->all_kept = true;
  shape->n_kept = (uint32_t) n_heads;
  if (type == NULL || strcmp (type, "null") == 0)
    return SC_OK;
  if (strcmp (type, "blob") != 0 || sqlite3_column_int64 (st, COL_KEPT_LEN) != (int64_t) want)
    return sc_store_bad_run (store, shape->id, err, "runs.kept is %s of %lld bytes; a model of "
                             "%u x %u heads needs a %zu-byte bitmap", type,
                             (long long) sqlite3_column_int64 (st, COL_KEPT_LEN),
                             shape->n_layers, shape->n_heads, want);
  if ((rc = sqlite3_blob_open (store->db, "main", "runs", "kept", shape->id, 0, &blob))
        != SQLITE_OK
      || (size_t) sqlite3_blob_bytes (blob) != want
      || (rc = sqlite3_blob_read (blob, shape->kept, (int) want, 0)) != SQLITE_OK)
    {
      ScStatus status = rc != SQLITE_OK
        ? sc_store_sqlite_error (err, store->db, rc, store->path, "reading the kept heads of "
                                 "run %lld", (long long) shape->id)
        : sc_store_bad_run (store, shape->id, err, "runs.kept changed size while read");
      sqlite3_blob_close (blob);
      return status;
    }
  sqlite3_blob_close (blob);
  shape->all_kept = false;
  shape->n_kept = 0;
  for (i = 0; i < n_heads; i++)
    shape->n_kept += (shape->kept[i / 8] >> (i % 8)) & 1u;
  if (n_heads % 8 != 0 && (shape->kept[want - 1] >> (n_heads % 8)) != 0)
    return sc_store_bad_run (store, shape->id, err, "runs.kept has bits set past the model's "
                             "%zu heads", n_heads);
  if (shape->n_kept == 0)
    return sc_store_bad_run (store, shape->id, err, "runs.kept keeps no head");
  return SC_OK;
}

uint32_t
sc_store_run_layer_window (const ScStoreRunInfo *info, int layer)
{
  if (info->windows == NULL || layer < 0 || (uint32_t) layer >= info->n_layers)
    return 0;
  return info->windows[layer];
}

bool
sc_store_run_has_head (const ScStoreRunInfo *info, int layer, int head)
{
  size_t bit;

  if (layer < 0 || (uint32_t) layer >= info->n_layers || head < 0
      || (uint32_t) head >= info->n_heads)
    return false;
  if (info->kept == NULL)
    return true;
  bit = (size_t) layer * info->n_heads + (size_t) head;
  return (info->kept[bit / 8] >> (bit % 8)) & 1u;
}

/* Reads one name-like cell (at most SC_STORE_MAX_NAME_BYTES) into *@out. */
static ScStatus
read_name (ScStore *store, int64_t run_id, Cell *c, int64_t rowid, char **out, ScError *err)
{
  size_t size = 0, len = 0;
  int rc;

  if ((rc = cell_seek (store->db, c, rowid, &size)) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "reading %s.%s of run %lld",
                                  c->table, c->column, (long long) run_id);
  if (size > SC_STORE_MAX_NAME_BYTES)
    return sc_store_bad_run (store, run_id, err, "%s row %lld: %s is %zu bytes long, more than %u",
                    c->table, (long long) rowid, c->column, size, SC_STORE_MAX_NAME_BYTES);
  if ((rc = cell_read (c, size, size, out, &len)) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "reading %s.%s of run %lld",
                                  c->table, c->column, (long long) run_id);
  return SC_OK;
}

/* The run's text: the first @max bytes, or all of it (@max SIZE_MAX). */
static ScStatus
read_text (ScStore *store, RunCells *cells, ScStoreRunInfo *r, size_t max, ScError *err)
{
  size_t size = 0;
  int rc;

  if ((rc = cell_seek (store->db, &cells->text, r->id, &size)) == SQLITE_OK)
    rc = cell_read (&cells->text, size, max, &r->text, &r->text_len);
  if (rc != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "reading the text of run %lld",
                                  (long long) r->id);
  r->text_truncated = r->text_len < size;
  return SC_OK;
}

/* Statements that check a run's rows, prepared once per listing. */
typedef struct {
  sqlite3_stmt *heads, *tokens, *kept;
} RowChecks;

static void
row_checks_clear (RowChecks *q)
{
  sqlite3_finalize (q->heads);
  sqlite3_finalize (q->tokens);
  sqlite3_finalize (q->kept);
  q->heads = q->tokens = q->kept = NULL;
}

/* The run has exactly one head per (layer < n_layers, head < n_heads) and one token row
 * per position 0..n_tokens-1: with the UNIQUE (run_id, layer, head) and PRIMARY KEY
 * (run_id, pos) keys, integer types, the count and the extremes say so. Both aggregates
 * read only the keys' b-trees, never a BLOB. */
/* Schema v3: a run's heads are attention rows or runs of attention_parts rows; each
 * (layer, head) that has either must be one the run kept, once, and every kept one must
 * be there. Reads the keys of both tables (one row per head, index only). */
static ScStatus
check_kept_rows (ScStore *store, RowChecks *q, const ScStoreRunShape *r, ScError *err)
{
  uint8_t seen[SC_STORE_MAX_RUN_HEADS / 8];
  uint32_t n = 0;
  char val[96];
  int rc;

  if (q->kept == NULL
      && (rc = sqlite3_prepare_v2 (store->db,
                                   store->schema_version >= 5
                                   ? "SELECT layer, head FROM attention WHERE run_id = ?1 "
                                     "UNION ALL SELECT DISTINCT layer, head FROM attention_parts "
                                     "WHERE run_id = ?1 UNION ALL SELECT DISTINCT layer, head "
                                     "FROM attention_bands WHERE run_id = ?1 UNION ALL SELECT "
                                     "DISTINCT layer, head FROM attention_z WHERE run_id = ?1"
                                   : store->schema_version >= 4
                                   ? "SELECT layer, head FROM attention WHERE run_id = ?1 "
                                     "UNION ALL SELECT DISTINCT layer, head FROM attention_parts "
                                     "WHERE run_id = ?1 UNION ALL SELECT DISTINCT layer, head "
                                     "FROM attention_bands WHERE run_id = ?1"
                                   : "SELECT layer, head FROM attention WHERE run_id = ?1 "
                                     "UNION ALL SELECT DISTINCT layer, head FROM attention_parts "
                                     "WHERE run_id = ?1", -1, &q->kept, NULL)) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "checking run %lld",
                                  (long long) r->id);
  memset (seen, 0, sizeof seen);
  sqlite3_reset (q->kept);
  sqlite3_bind_int64 (q->kept, 1, r->id);
  while ((rc = sqlite3_step (q->kept)) == SQLITE_ROW)
    {
      int64_t layer = -1, head = -1;
      size_t bit;

      if (!sc_store_int_in (q->kept, 0, 0, (int64_t) r->n_layers - 1, &layer)
          || !sc_store_int_in (q->kept, 1, 0, (int64_t) r->n_heads - 1, &head))
        {
          int col = sc_store_int_in (q->kept, 0, 0, (int64_t) r->n_layers - 1, &layer) ? 1 : 0;
          sc_store_describe_value (q->kept, col, val, sizeof val);
          return sc_store_bad_run (store, r->id, err, "a stored head has %s %s, outside the "
                                   "model's %u layers x %u heads", col ? "head" : "layer", val,
                                   r->n_layers, r->n_heads);
        }
      bit = (size_t) layer * r->n_heads + (size_t) head;
      if (!sc_store_shape_keeps (r, (int) layer, (int) head))
        return sc_store_bad_run (store, r->id, err, "layer %lld head %lld is stored, but the "
                                 "run did not keep it (runs.kept)", (long long) layer,
                                 (long long) head);
      if ((seen[bit / 8] >> (bit % 8)) & 1u)
        return sc_store_bad_run (store, r->id, err, "layer %lld head %lld is stored both in "
                                 "attention and in attention_parts%s", (long long) layer,
                                 (long long) head,
                                 store->schema_version >= 5 ? " or attention_bands or attention_z"
                                 : store->schema_version >= 4 ? " or attention_bands" : "");
      seen[bit / 8] |= (uint8_t) (1u << (bit % 8));
      n++;
    }
  if (rc != SQLITE_DONE)
    return sc_store_sqlite_error (err, store->db, rc, store->path,
                                  "checking the heads of run %lld", (long long) r->id);
  if (n != r->n_kept)
    return sc_store_bad_run (store, r->id, err, "%u of the %u heads the run kept are stored",
                             n, r->n_kept);
  return SC_OK;
}

static ScStatus
check_run_rows (ScStore *store, RowChecks *q, const ScStoreRunShape *r, ScError *err)
{
  int64_t n, lo, hi, lo2, hi2, odd;
  ScStatus status;
  int rc;

  if (store->schema_version >= 3 && (status = check_kept_rows (store, q, r, err)) != SC_OK)
    return status;

  if (q->heads == NULL
      && ((rc = sqlite3_prepare_v2 (store->db,
                                    "SELECT count (*), min (layer), max (layer), min (head), "
                                    "max (head), sum (typeof (layer) <> 'integer' OR typeof "
                                    "(head) <> 'integer') FROM attention WHERE run_id = ?",
                                    -1, &q->heads, NULL)) != SQLITE_OK
          || (rc = sqlite3_prepare_v2 (store->db,
                                       "SELECT count (*), min (pos), max (pos), sum (typeof "
                                       "(pos) <> 'integer') FROM tokens WHERE run_id = ?",
                                       -1, &q->tokens, NULL)) != SQLITE_OK))
    return sc_store_sqlite_error (err, store->db, rc, store->path, "checking run %lld",
                                  (long long) r->id);

  if (store->schema_version >= 3)
    goto tokens;
  sqlite3_reset (q->heads);
  sqlite3_bind_int64 (q->heads, 1, r->id);
  if ((rc = sqlite3_step (q->heads)) != SQLITE_ROW)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "checking the heads of run %lld",
                                  (long long) r->id);
  n = sqlite3_column_int64 (q->heads, 0);
  lo = sqlite3_column_int64 (q->heads, 1);
  hi = sqlite3_column_int64 (q->heads, 2);
  lo2 = sqlite3_column_int64 (q->heads, 3);
  hi2 = sqlite3_column_int64 (q->heads, 4);
  odd = sqlite3_column_int64 (q->heads, 5);
  if (odd != 0)
    return sc_store_bad_run (store, r->id, err, "%lld attention rows have a layer or head that is not "
                    "an integer", (long long) odd);
  if (n != (int64_t) r->n_layers * r->n_heads || lo < 0 || hi >= r->n_layers || lo2 < 0
      || hi2 >= r->n_heads)
    return sc_store_bad_run (store, r->id, err, "the attention table has %lld heads of layers %lld..%lld "
                    "and heads %lld..%lld for a model of %u layers x %u heads", (long long) n,
                    (long long) lo, (long long) hi, (long long) lo2, (long long) hi2,
                    r->n_layers, r->n_heads);

tokens:
  sqlite3_reset (q->tokens);
  sqlite3_bind_int64 (q->tokens, 1, r->id);
  if ((rc = sqlite3_step (q->tokens)) != SQLITE_ROW)
    return sc_store_sqlite_error (err, store->db, rc, store->path,
                                  "checking the tokens of run %lld", (long long) r->id);
  n = sqlite3_column_int64 (q->tokens, 0);
  lo = sqlite3_column_int64 (q->tokens, 1);
  hi = sqlite3_column_int64 (q->tokens, 2);
  odd = sqlite3_column_int64 (q->tokens, 3);
  if (odd != 0)
    return sc_store_bad_run (store, r->id, err, "%lld token rows have a position that is not an integer",
                    (long long) odd);
  if (n != r->n_tokens || lo != 0 || hi != (int64_t) r->n_tokens - 1)
    return sc_store_bad_run (store, r->id, err, "the tokens table has %lld rows at positions %lld..%lld "
                    "for %u tokens (positions 0..%u, each once)", (long long) n, (long long) lo,
                    (long long) hi, r->n_tokens, r->n_tokens - 1);
  return SC_OK;
}

/* Schema v5's columns of the run row: what the run is, one of the kinds or NULL, and for a
 * generated run its prompt's tokens, fewer than the run's. */
static ScStatus
load_kind (ScStore *store, sqlite3_stmt *st, uint32_t n_tokens, ScRunKind *kind,
           uint32_t *n_prompt, ScError *err)
{
  const char *type = (const char *) sqlite3_column_text (st, COL_KIND_TYPE);
  const char *id = (const char *) sqlite3_column_text (st, COL_KIND);
  const int64_t id_run = sqlite3_column_int64 (st, COL_ID);
  char val[96];

  *kind = SC_RUN_KIND_UNKNOWN;
  *n_prompt = 0;
  if (type != NULL && strcmp (type, "null") != 0)
    {
      int k;
      for (k = SC_RUN_KIND_UNKNOWN + 1; k < SC_RUN_N_KINDS; k++)
        if (id != NULL && strcmp (id, sc_run_kind_id ((ScRunKind) k)) == 0)
          break;
      if (k == SC_RUN_N_KINDS)
        return sc_store_bad_run (store, id_run, err, "runs.kind is %s%s%s, not NULL or one of "
                                 "text, chat, generated, ids", type, id != NULL ? " " : "",
                                 id != NULL ? id : "");
      *kind = (ScRunKind) k;
    }
  if (sqlite3_column_type (st, COL_PROMPT) != SQLITE_NULL)
    {
      const int64_t p = sqlite3_column_int64 (st, COL_PROMPT);
      if (sqlite3_column_type (st, COL_PROMPT) != SQLITE_INTEGER
          || *kind != SC_RUN_KIND_GENERATED || p <= 0 || p >= (int64_t) n_tokens)
        {
          sc_store_describe_value (st, COL_PROMPT, val, sizeof val);
          return sc_store_bad_run (store, id_run, err, "runs.prompt_tokens is %s; only a "
                                   "generated run has one, between 1 and its %u tokens", val,
                                   n_tokens);
        }
      *n_prompt = (uint32_t) p;
    }
  return SC_OK;
}

/* Schema v6's columns of the run row: the rounded form, NULL or a number in range each,
 * and only for a dense run (what the writer stores). */
static ScStatus
load_round (ScStore *store, sqlite3_stmt *st, int64_t id_run, const ScStoreRunShape *shape,
            ScStoreRunInfo *r, ScError *err)
{
  char val[96];
  int64_t bits = 0;

  if (sqlite3_column_type (st, COL_ROUND_BITS) != SQLITE_NULL
      && !sc_store_int_in (st, COL_ROUND_BITS, 1, SC_STORE_ROUND_BITS_MAX, &bits))
    {
      sc_store_describe_value (st, COL_ROUND_BITS, val, sizeof val);
      return sc_store_bad_run (store, id_run, err, "runs.round_bits is %s, not NULL or a "
                               "number of mantissa bits between 1 and %u", val,
                               SC_STORE_ROUND_BITS_MAX);
    }
  r->round_bits = (uint32_t) bits;
  r->zero_below = 0;
  if (sqlite3_column_type (st, COL_ZERO_BELOW) != SQLITE_NULL)
    {
      const double z = sqlite3_column_double (st, COL_ZERO_BELOW);
      if (sqlite3_column_type (st, COL_ZERO_BELOW) != SQLITE_FLOAT || !(z > 0 && z < 1))
        {
          sc_store_describe_value (st, COL_ZERO_BELOW, val, sizeof val);
          return sc_store_bad_run (store, id_run, err, "runs.zero_below is %s, not NULL or a "
                                   "number between 0 and 1", val);
        }
      r->zero_below = z;
    }
  if ((r->round_bits > 0 || r->zero_below > 0) && shape->sparse_eps > 0)
    return sc_store_bad_run (store, id_run, err, "the run says it is both sparse and "
                             "rounded; a capture stores one or the other");
  return SC_OK;
}

/* One listed or read run from the current row of a RUN_SELECT statement: checked, then its
 * strings read (the text cut to @text_max bytes), then its rows checked. */
static ScStatus
run_from_row (ScStore *store, sqlite3_stmt *st, RunCells *cells, RowChecks *q, size_t text_max,
              ScStoreRunInfo *r, ScError *err)
{
  ScStoreRunShape shape;
  ScStatus status;
  int64_t model_id;

  memset (r, 0, sizeof *r);
  if ((status = check_run_row (store, st, &shape, r, err)) != SC_OK
      || (status = load_kept (store, st, &shape, err)) != SC_OK)
    return status;
  if ((status = load_kind (store, st, r->n_tokens, &r->kind, &r->n_prompt, err)) != SC_OK
      || (status = load_round (store, st, shape.id, &shape, r, err)) != SC_OK)
    return status;
  r->n_kept = shape.n_kept;
  r->sparse_eps = shape.sparse_eps;
  if (!shape.all_kept)
    {
      const size_t bytes = ((size_t) shape.n_layers * shape.n_heads + 7) / 8;
      if ((r->kept = malloc (bytes)) == NULL)
        return sc_error_set (err, SC_ERR_NOMEM, "out of memory reading run %lld",
                             (long long) shape.id);
      memcpy (r->kept, shape.kept, bytes);
    }
  if ((status = sc_store_load_windows (store, &shape, &r->windows, err)) != SC_OK)
    {
      sc_store_run_info_clear (r);
      return status;
    }
  model_id = r->model_id;
  if ((status = read_name (store, r->id, &cells->name, model_id, &r->model_name, err)) != SC_OK
      || (status = read_name (store, r->id, &cells->arch, model_id, &r->model_arch, err)) != SC_OK
      || (status = read_name (store, r->id, &cells->path, model_id, &r->model_path, err)) != SC_OK
      || (status = read_name (store, r->id, &cells->backend, r->id, &r->backend, err)) != SC_OK
      || (status = read_text (store, cells, r, text_max, err)) != SC_OK
      || (status = check_run_rows (store, q, &shape, err)) != SC_OK)
    {
      sc_store_run_info_clear (r);
      return status;
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
  free (info->kept);
  free (info->windows);
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
  RunCells cells;
  RowChecks q = { 0 };
  size_t n = 0, cap = 0;
  ScStatus status = SC_OK;
  bool own = false;
  int rc;

  *runs = NULL;
  *n_runs = 0;
  if (store->schema_version == 0)
    return SC_OK; /* an empty file opened read-only: no tables, no runs */
  run_cells_init (&cells);
  /* One read transaction: the list and its checks are one consistent snapshot even while
   * a capture commits. */
  if ((rc = sc_store_read_begin (store, &own)) != SQLITE_OK
      || (rc = sqlite3_prepare_v2 (store->db,
                                   RUN_SELECT (store, "ORDER BY r.id"),
                                   -1, &st, NULL))
           != SQLITE_OK)
    {
      status = sc_store_sqlite_error (err, store->db, rc, store->path, "listing runs");
      goto out;
    }
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      if (n == cap)
        {
          size_t new_cap = cap ? 2 * cap : 16;
          ScStoreRunInfo *grown = realloc (list, new_cap * sizeof *list);
          if (grown == NULL)
            {
              status = sc_error_set (err, SC_ERR_NOMEM, "out of memory listing runs");
              break;
            }
          list = grown;
          cap = new_cap;
        }
      if ((status = run_from_row (store, st, &cells, &q, SC_STORE_LIST_TEXT_BYTES, &list[n],
                                  err)) != SC_OK)
        break;
      n++;
    }
  if (status == SC_OK && rc != SQLITE_DONE)
    status = sc_store_sqlite_error (err, store->db, rc, store->path, "listing runs");
out:
  sqlite3_finalize (st);
  row_checks_clear (&q);
  run_cells_close (&cells);
  sc_store_read_end (store, own);
  if (status != SC_OK)
    {
      sc_store_run_list_free (list, n);
      return status;
    }
  *runs = list;
  *n_runs = n;
  return SC_OK;
}

/* Prepares RUN_SELECT for run @run_id and steps it: SQLITE_ROW, or SQLITE_DONE (no such
 * complete run), or an error. */
static int
select_run (ScStore *store, int64_t run_id, sqlite3_stmt **st)
{
  int rc = sqlite3_prepare_v2 (store->db,
                               RUN_SELECT (store, "AND r.id = ?"),
                               -1, st, NULL);

  if (rc != SQLITE_OK)
    return rc;
  sqlite3_bind_int64 (*st, 1, run_id);
  return sqlite3_step (*st);
}

static ScStatus
no_run (const ScStore *store, int64_t run_id, ScError *err)
{
  return sc_error_set (err, SC_ERR_NOT_FOUND, "%s has no run %lld", store->path,
                       (long long) run_id);
}

ScStatus
sc_store_get_run (ScStore *store, int64_t run_id, ScStoreRunInfo *out, ScError *err)
{
  sqlite3_stmt *st = NULL;
  RunCells cells;
  RowChecks q = { 0 };
  ScStatus status;
  bool own = false;
  int rc;

  memset (out, 0, sizeof *out);
  if (store->schema_version == 0)
    return no_run (store, run_id, err);
  run_cells_init (&cells);
  if ((rc = sc_store_read_begin (store, &own)) == SQLITE_OK)
    rc = select_run (store, run_id, &st);
  if (rc == SQLITE_ROW)
    status = run_from_row (store, st, &cells, &q, SIZE_MAX, out, err);
  else if (rc == SQLITE_DONE)
    status = no_run (store, run_id, err);
  else
    status = sc_store_sqlite_error (err, store->db, rc, store->path, "reading run %lld",
                                    (long long) run_id);
  sqlite3_finalize (st);
  row_checks_clear (&q);
  run_cells_close (&cells);
  sc_store_read_end (store, own);
  return status;
}

ScStatus
sc_store_run_shape (ScStore *store, int64_t run_id, ScStoreRunShape *shape, ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStatus status;
  int rc;

  if (store->schema_version == 0)
    return no_run (store, run_id, err);
  rc = select_run (store, run_id, &st);
  if (rc == SQLITE_ROW)
    {
      if ((status = check_run_row (store, st, shape, NULL, err)) == SC_OK)
        status = load_kept (store, st, shape, err);
    }
  else if (rc == SQLITE_DONE)
    status = no_run (store, run_id, err);
  else
    status = sc_store_sqlite_error (err, store->db, rc, store->path, "reading run %lld",
                                    (long long) run_id);
  sqlite3_finalize (st);
  return status;
}
