/* sc-store-private.h — what the capture store's files above its bottom layer share.
 * sc-store-base.h, included here, is the bottom layer (the ScStore struct, SQLite
 * errors, connections, the checks of untrusted cells, the fp16 BLOB codec). Each
 * section below names the file that defines what it declares; which file may call which
 * is the layering of docs/architecture.md, "The store's files" — sc-store-read.c: runs,
 * every number checked; sc-store-predictions.c: the next-token predictions;
 * sc-store-schema.c: the schema, its migrations and the check that a file's schema is
 * ours; sc-store-model.c: the models table; sc-store-locate.c: the shared steps of
 * locating a head's rows and reading their bytes; sc-store-heads.c: reading heads and
 * rows; sc-store-overview.c: overview images (made, read) and the estimate;
 * sc-store-sparse.c: the sparse form; sc-store-parts.c: heads in row blocks;
 * sc-store-band.c: heads of sliding-window layers stored as their band, and the run's
 * layer windows; sc-store-scores.c: head statistics; sc-store-writer.c: captures and
 * the writer thread; sc-store-shard.c: the shard manifests the merge compares.
 * Not installed, not for callers outside engine/store/ and the store's tests.
 */
#pragma once

#include "analysis/sc-head-stats.h"
#include "store/sc-store-base.h"
#include "store/sc-store.h"
#include "store/sc-store-merge.h"
#include "store/sc-store-predictions.h"

/* ------------------------------------------------------------------------------------ */
/* sc-store-read.c                                                                       */

/* What reading a head or tokens needs to know about its run, checked (sc-store.h, "Trust"):
 * 1 <= n_layers * n_heads <= SC_STORE_MAX_RUN_HEADS, 1 <= n_tokens <= SC_STORE_MAX_TOKENS,
 * 1 <= n_kept <= n_layers * n_heads, kept[] holds exactly n_kept bits (all of them when
 * all_kept), sparse_eps 0 or in (0, 1). 8 KiB: lives on the stack. */
typedef struct {
  int64_t id;
  uint32_t n_layers, n_heads, n_tokens;
  int64_t n_vocab;
  bool all_kept;
  uint32_t n_kept;
  double sparse_eps;
  uint8_t kept[SC_STORE_MAX_RUN_HEADS / 8];
} ScStoreRunShape;

/* Whether @r kept (@layer, @head); false outside its shape. */
bool sc_store_shape_keeps (const ScStoreRunShape *r, int layer, int head);

/* Run @run_id checked as a run (its row, model and kept heads, not its other rows):
 * SC_ERR_NOT_FOUND unless it is complete. */
ScStatus sc_store_run_shape (ScStore *store, int64_t run_id, ScStoreRunShape *shape,
                             ScError *err);

/* ------------------------------------------------------------------------------------ */
/* sc-store-predictions.c                                                                */

/* Copies predictions into @dst (sc_store_capture_set_predictions()'s checks). */
ScStatus sc_store_predictions_copy (ScStorePredictions *dst, uint32_t n_positions, uint32_t k,
                                    const int32_t *ids, const float *logits,
                                    const double *probs, const ScStoreToken *pieces,
                                    ScError *err);
/* Inserts @p as run @run_id's predictions (the writer, in the run's transaction); returns
 * SQLite's code, SQLITE_DONE when all are in. */
int sc_store_predictions_insert (sqlite3 *db, int64_t run_id, const ScStorePredictions *p);

/* ------------------------------------------------------------------------------------ */
/* sc-store-schema.c                                                                     */

/* Reads application_id, user_version and whether the schema is empty, and compares the
 * schema with the one this build writes for that version (sc_store_schema_verify), in one
 * read transaction, without writing. Fails with SC_ERR_DB (not a database / corrupt /
 * unreadable), SC_ERR_FORMAT (an SQLite database that is not a Saccade store, or a schema
 * that is not ours), SC_ERR_UNSUPPORTED (a newer schema). *@version is 0 for an empty
 * database; *@sqlite_rc (may be NULL) SQLite's code for the read. */
ScStatus sc_store_schema_inspect (sqlite3 *db, const char *path, int *version, int *sqlite_rc,
                                  ScError *err);

/* Compares every row of the file's sqlite_schema with what this build creates for schema
 * @version (which it builds in an in-memory database): the same tables with the same
 * columns (PRAGMA table_xinfo) and the same SQL, the same indexes, nothing else — no
 * trigger, view, virtual table or extra index or table. SC_ERR_FORMAT names the first
 * object that differs and says what the user can do. Reads only. */
ScStatus sc_store_schema_verify (sqlite3 *db, const char *path, int version, ScError *err);

/* Makes a writable connection's database current: creates the current schema in an empty database
 * (page size, incremental auto-vacuum, WAL first), or migrates an older one, each step in
 * one transaction. *@version receives the resulting version. */
/* @busy_ms: how long a lock may be waited for (< 0: not at all), as the store's. */
ScStatus sc_store_schema_prepare (sqlite3 *db, const char *path, int busy_ms, int *version,
                                  ScError *err);

/* ------------------------------------------------------------------------------------ */
/* sc-store-model.c                                                                      */

/* Finds the model by fingerprint or adds it on @db (inside the caller's write
 * transaction); *@id receives its row id, *@mismatch whether a stored row with that hash
 * has another shape (a damaged row: the caller refuses). Returns SQLite's code. */
int sc_store_upsert_model (sqlite3 *db, const ScStoreModel *m, int64_t *id, bool *mismatch);

/* ------------------------------------------------------------------------------------ */
/* sc-store-locate.c                                                                     */

typedef enum {
  SC_STORE_LAYOUT_CAUSAL,
  SC_STORE_LAYOUT_FULL,
  SC_STORE_LAYOUT_SPARSE,
  SC_STORE_LAYOUT_BAND,      /* attention_bands (schema v4): row i holds keys i - w + 1..i */
} ScStoreLayout;

typedef struct {
  int64_t rowid;
  uint32_t row0, row1;
  uint64_t n_pairs;          /* sparse: the pairs the part holds */
  uint32_t block_rows;       /* attention_z: rows per compressed block; else 0 */
  uint64_t z_bytes;          /* attention_z: length (data) */
} ScStorePart;

/* Where a head's rows are, checked. */
typedef struct {
  const char *table;         /* "attention", "attention_parts", "attention_bands" or
                              * "attention_z" (then the parts are compressed) */
  ScStoreLayout layout;
  uint32_t n;                /* n_query = n_key = the run's n_tokens */
  uint32_t window;           /* band: the window w, 0 < w < n, its layer's; else 0 */
  ScStorePart *parts;        /* (n_parts), rows in order from 0 to n */
  size_t n_parts;
} ScStoreHeadLoc;

/* Frees @loc's parts and zeroes it. */
void sc_store_head_loc_clear (ScStoreHeadLoc *loc);

/* The steps attention_parts and attention_bands locate a head by, one row at a time
 * (sc-store-heads.c, sc-store-band.c); @loc->table names the table in their errors. */
/* Before a further row: SC_OK, or the run's error (sc_store_bad_run) when @loc's parts
 * already end at row n (each part holds >= 1 row: at most n parts). */
ScStatus sc_store_head_loc_check_more (ScStore *store, const ScStoreRunShape *r, int layer,
                                       int head, const ScStoreHeadLoc *loc, ScError *err);
/* Appends @p to loc->parts, doubling it (its capacity in *@cap) when full. Returns
 * SC_ERR_NOMEM, loc unchanged, when that fails. */
ScStatus sc_store_head_loc_push (ScStoreHeadLoc *loc, size_t *cap, const ScStorePart *p,
                                 ScError *err);
/* The start of checking a row of loc->table, whose columns 0, 1, 2 are id, row0, row1: an
 * integer id, and rows [row0, row1) that start where @loc's previous part ended (0 for the
 * first) and end inside the run. Fills @p (n_pairs 0); SC_OK or the run's error. */
ScStatus sc_store_head_loc_check_rows (const ScStore *store, sqlite3_stmt *st,
                                       const ScStoreRunShape *r, int layer, int head,
                                       const ScStoreHeadLoc *loc, ScStorePart *p, ScError *err);
/* SC_OK when columns 3 and 4 of loc->table's row @rowid (n_query, n_key) are both the
 * run's n_tokens, else the run's error naming the column and its value. */
ScStatus sc_store_head_loc_check_square (const ScStore *store, sqlite3_stmt *st,
                                         const ScStoreRunShape *r, int layer, int head,
                                         const ScStoreHeadLoc *loc, int64_t rowid, ScError *err);
/* SC_OK when column @col of loc->table's row @rowid is the text 'f16', else
 * SC_ERR_UNSUPPORTED naming the dtype it is. */
ScStatus sc_store_head_loc_check_f16 (const ScStore *store, sqlite3_stmt *st, int col,
                                      const ScStoreRunShape *r, int layer, int head,
                                      const ScStoreHeadLoc *loc, int64_t rowid, ScError *err);
/* Checks one row of a head's table (its columns as the caller's query has them) and fills
 * @p; SC_OK or the error. */
typedef ScStatus (*ScStoreRowCheck) (ScStore *store, sqlite3_stmt *st, const ScStoreRunShape *r,
                                     int layer, int head, ScStoreHeadLoc *loc, ScStorePart *p,
                                     ScError *err);
/* Runs @sql (?1 the run, ?2 the layer, ?3 the head; rows in row0 order, columns 0-2 id,
 * row0, row1) over @table and checks each row with @check (after
 * sc_store_head_loc_check_more), pushing its part into @loc (table and n set). Does not
 * check where the parts end. SQLite's errors name the run, layer and head. */
ScStatus sc_store_head_loc_scan (ScStore *store, const ScStoreRunShape *r, int layer, int head,
                                 const char *table, const char *sql, ScStoreRowCheck check,
                                 ScStoreHeadLoc *loc, ScError *err);
/* After the last row: SC_OK when @loc has no parts or they end at row n, else the run's
 * error saying where they end. */
ScStatus sc_store_head_loc_check_end (ScStore *store, const ScStoreRunShape *r, int layer,
                                      int head, const ScStoreHeadLoc *loc, ScError *err);

/* A BLOB handle that moves between the rows and columns of one table. */
typedef struct {
  sqlite3_blob *blob;
  const char *column;
  int64_t rowid;
} ScStoreCellHandle;

void sc_store_cell_close (ScStoreCellHandle *h);

/* Reads @len bytes at @offset of @column of row @rowid of @loc's table into @buf; the cell
 * must be @cell_bytes long (it was checked: a change means another writer edited the row). */
ScStatus sc_store_cell_read (ScStore *store, const ScStoreRunShape *r, const ScStoreHeadLoc *loc,
                             ScStoreCellHandle *h, const char *column, int64_t rowid,
                             uint64_t cell_bytes, uint64_t offset, uint64_t len, void *buf,
                             ScError *err);

/* The message for a value that is not a probability: value @index of the head (in its
 * packed order), in row @row, of part @p; @f16 points at it. */
ScStatus sc_store_bad_value (ScStore *store, const ScStoreRunShape *r, const ScStoreHeadLoc *loc,
                             const ScStorePart *p, int layer, int head, uint64_t index,
                             uint32_t row, const uint8_t *f16, ScError *err);

/* ------------------------------------------------------------------------------------ */
/* sc-store-heads.c                                                                      */

/* Floats read per step when a whole head goes through float a block of rows at a time
 * (an overview computed, a sparse head to fp16): 1 Mi values, 4 MiB. */
#define SC_STORE_CHUNK_VALUES (1u << 20)

/* Run @run_id's shape and head (@layer, @head)'s location, every number of its rows
 * checked (in the caller's read transaction, if any). Errors as sc_store_read_head. */
ScStatus sc_store_head_find (ScStore *store, int64_t run_id, int layer, int head,
                             ScStoreRunShape *r, ScStoreHeadLoc *loc, ScError *err);
/* Rows [@q0, @q1) (0 <= q0 < q1 <= n) of a located head as float into @out, @dropped (may
 * be NULL) as sc_store_read_head_rows says; every value checked. */
ScStatus sc_store_head_rows (ScStore *store, const ScStoreRunShape *r, const ScStoreHeadLoc *loc,
                             int layer, int head, uint32_t q0, uint32_t q1, float *out,
                             float *dropped, ScError *err);

/* ------------------------------------------------------------------------------------ */
/* sc-store-overview.c                                                                   */

/* The block each of @n keys (or rows) falls in, for an overview of @size (<= n) blocks:
 * @blk holds n entries. */
void sc_store_overview_blocks (uint32_t n, uint32_t size, uint32_t *blk);

/* Folds row @row of a head (@vals: its first @len values, keys 0..len-1; the rest are 0)
 * into @acc (size x size, the running maxima, zeroed by the caller). */
void sc_store_overview_row (float *acc, uint32_t size, const uint32_t *blk, uint32_t row,
                            const float *vals, uint32_t len);

/* Inserts @acc (size x size maxima, fp16 values) as head (@layer, @head)'s overview of
 * run @run_id through @db (inside the caller's transaction). Returns SQLite's code
 * (SQLITE_DONE when stored). */
int sc_store_overview_insert (sqlite3 *db, int64_t run_id, int layer, int head, uint32_t size,
                              const float *acc);

/* ------------------------------------------------------------------------------------ */
/* sc-store-sparse.c                                                                     */

/* A head's sparse form (docs/store.md, "Sparse heads"): per row, the fewest keys whose
 * weights sum to >= 1 - eps (descending, ties to the lower key), kept in key order. */
typedef struct {
  uint32_t n;                /* rows = keys */
  bool causal;
  uint64_t *offsets;         /* (n + 1): row i's pairs are [offsets[i], offsets[i + 1]) */
  uint32_t *keys;            /* (nnz) */
  uint8_t *vals;             /* (nnz) fp16, little-endian */
  float *dropped;            /* (n) the sum of the float weights left out */
  uint64_t nnz, cap;         /* pairs held, room for */
  /* scratch for one row */
  uint32_t *order;
  uint32_t order_cap;
} ScStoreSparse;

/* Builds @sp from @probs (n x n, causal: row i's keys 0..i). Returns false when out of
 * memory. @sp's arrays grow and are reused across heads. */
bool sc_store_sparse_build (ScStoreSparse *sp, const float *probs, uint32_t n, bool causal,
                            double eps);
void sc_store_sparse_clear (ScStoreSparse *sp);

/* Bytes the sparse form takes in the store (dropped, offsets, keys, values). */
uint64_t sc_store_sparse_bytes (uint32_t n, uint64_t nnz);

/* Writes @sp into @out (sc_store_sparse_bytes (n, nnz) bytes): dropped (f32, n), offsets
 * (u64, n + 1), keys (u32, nnz), values (f16, nnz), little-endian. */
void sc_store_sparse_serialise (const ScStoreSparse *sp, uint8_t *out);

/* ------------------------------------------------------------------------------------ */
/* sc-store-parts.c                                                                      */

/* One head as the writer holds it: the packed fp16 head, or the sparse form as
 * sc_store_sparse_serialise writes it. */
typedef struct {
  const uint8_t *buf;
  size_t len;
  int layer, head;
  uint32_t n;                /* n_query = n_key */
  bool causal;
  bool sparse;
  uint64_t nnz;              /* sparse: the pairs */
  uint32_t window;           /* band (sc-store-band.c): 0 < window < n; 0: not a band */
} ScStoreBlobHead;

/* @b as (n, n) floats into @out: its fp16 values widened; zeros above the diagonal of a
 * causal head and where a sparse head dropped keys. */
void sc_store_blob_head_unpack (const ScStoreBlobHead *b, float *out);

/* Inserts @b as attention_parts rows of run @run_id through @st (a prepared INSERT INTO
 * attention_parts (run_id, layer, head, row0, row1, n_query, n_key, layout, dtype, dropped,
 * offsets, keys, data) VALUES (?,?,?,?,?,?,?,?,'f16',?,?,?,?)), each block holding at most
 * @budget bytes of BLOBs. SC_ERR_INVALID_ARG when one row does not fit; SQLite's errors
 * on @db name @path. */
ScStatus sc_store_parts_insert (sqlite3 *db, sqlite3_stmt *st, const char *path, int64_t run_id,
                                const ScStoreBlobHead *b, uint64_t budget, ScError *err);

/* ------------------------------------------------------------------------------------ */
/* sc-store-band.c                                                                       */

/* Values of rows [@a, @b) (a <= b) of a band head of window @w (>= 1): row i holds
 * min (i + 1, w). At most 2^19 x 2^19: fits 64 bits. */
uint64_t sc_store_band_values (uint32_t w, uint32_t a, uint32_t b);

/* Whether the causal head @probs (n, n) is zero left of its band: every entry (i, j) with
 * j + w <= i exactly 0 (-0 counts). The entries above the diagonal are not looked at. */
bool sc_store_head_in_band (const float *probs, uint32_t n, uint32_t w);

/* Packs the band of @probs (n, n), window @w (0 < w < n), as fp16 into @out
 * (2 sc_store_band_values (w, 0, n) bytes); sc_store_blob_pack's rounding. */
void sc_store_band_pack (const float *probs, uint32_t n, uint32_t w, uint8_t *out);

/* Widens rows [@q0, @q1) of a packed band (@blob starts at row q0) into @out ((q1 - q0) x n
 * floats, zeros outside the band). */
void sc_store_band_unpack (const uint8_t *blob, uint32_t n, uint32_t w, uint32_t q0,
                           uint32_t q1, float *out);

/* Inserts the band head @b (b->window > 0) as attention_bands rows of run @run_id, each
 * holding at most @budget bytes of BLOB (one row when it fits). SQLite's errors on @db
 * name @path; SC_ERR_INVALID_ARG when one row does not fit. */
ScStatus sc_store_band_insert (sqlite3 *db, const char *path, int64_t run_id,
                               const ScStoreBlobHead *b, uint64_t budget, ScError *err);

/* Inserts one layer_windows row per layer of @windows (n_layers entries) that is > 0.
 * Returns SQLite's code (SQLITE_DONE when all went in). */
int sc_store_windows_insert (sqlite3 *db, int64_t run_id, const uint32_t *windows,
                             uint32_t n_layers);

/* Run @r's layer windows (schema v4): *@out is NULL when no layer has one (every run
 * before v4), else n_layers entries, 0 for a global layer (free()). Each row checked: an
 * integer layer inside the model, an integer size in [1, INT32_MAX], one row per layer. */
ScStatus sc_store_load_windows (ScStore *store, const ScStoreRunShape *r, uint32_t **out,
                                ScError *err);

/* Locates head (@layer, @head) of run @r in attention_bands (schema v4), every number of
 * its rows checked: rows 0..n covered in order, the window the same in every row, 0 < w <
 * n and the layer's recorded window, each BLOB exactly its rows' length. Sets loc->n_parts
 * to 0 (and returns SC_OK) when the table has no row for the head. */
ScStatus sc_store_band_locate (ScStore *store, const ScStoreRunShape *r, int layer, int head,
                               ScStoreHeadLoc *loc, ScError *err);

/* Rows [@q0, @q1) of a located band head as float into @out ((q1 - q0) x n, zeros outside
 * the band), reading only their bytes; every value checked to be a probability. */
ScStatus sc_store_band_rows (ScStore *store, const ScStoreRunShape *r, const ScStoreHeadLoc *loc,
                             int layer, int head, uint32_t q0, uint32_t q1, float *out,
                             ScError *err);

/* ------------------------------------------------------------------------------------ */
/* sc-store-zblob.c: compressed heads (schema v5, attention_z)                           */

/* Rows per compressed block, and the zstd level (docs/benchmarks.md, "Compressed heads"). */
#define SC_STORE_Z_BLOCK_ROWS 64
#define SC_STORE_Z_LEVEL 1

/* fp16 values of rows [@a, @b) of a dense head of @loc's layout in its packed order (a
 * causal head's triangle, a full head's rows). */
uint64_t sc_store_loc_values (const ScStoreHeadLoc *loc, uint32_t a, uint32_t b);

/* The rounded form as the compressor applies it to fp16 bits: @bits mantissa bits after
 * the leading one (0: not rounded), and values whose magnitude's bits are below @zero
 * (the smallest fp16 at or above runs.zero_below; 0: none) stored as 0. */
typedef struct {
  uint32_t bits;
  uint16_t zero;
} ScStoreZRound;

/* The form for @round_bits (0..SC_STORE_ROUND_BITS_MAX) and @zero_below (0 or (0, 1)). */
ScStoreZRound sc_store_z_round (uint32_t round_bits, double zero_below);

/* @h as the rounded form @r stores it. */
uint16_t sc_store_z_round_value (ScStoreZRound r, uint16_t h);

/* The writer's compression state (its buffers grow to the largest head). */
typedef struct ScStoreZWriter ScStoreZWriter;
ScStoreZWriter *sc_store_z_writer_new (void);
void sc_store_z_writer_free (ScStoreZWriter *z); /* NULL is a no-op */

/* Inserts dense head @b (not sparse, not a band) as attention_z rows of run @run_id, each
 * row's data at most @budget bytes. *@fits false (nothing inserted) when one block cannot
 * be sure to fit or the compressed rows would not be smaller than @b's fp16 BLOB (the
 * caller then stores it uncompressed); *@stored: the bytes of data and blocks inserted.
 * Each value is stored as @round gives it (@b's buffer is not changed). */
ScStatus sc_store_z_insert (sqlite3 *db, ScStoreZWriter *z, const char *path, int64_t run_id,
                            const ScStoreBlobHead *b, ScStoreZRound round, uint64_t budget,
                            bool *fits, uint64_t *stored, ScError *err);

/* Finds head (@layer, @head) of run @r in attention_z (schema v5), every number of its
 * rows checked; loc->n_parts stays 0 when it has no row there. */
ScStatus sc_store_z_locate (ScStore *store, const ScStoreRunShape *r, int layer, int head,
                            ScStoreHeadLoc *loc, ScError *err);

/* What reading a located head's parts needs across calls: BLOB handles and, for
 * attention_z, the decompressor and one block's buffers. Zeroed to start;
 * sc_store_part_reader_clear frees it. */
typedef struct {
  ScStoreCellHandle data, blocks;
  void *dctx;                /* ZSTD_DCtx */
  uint8_t *frame, *planes;
  size_t frame_cap, planes_cap;
} ScStorePartReader;
void sc_store_part_reader_clear (ScStorePartReader *pr);

/* The packed fp16 bytes of rows [@a, @b) (inside part @p) into @dst: a slice of an
 * uncompressed part's BLOB, or the blocks of an attention_z part that hold them, each
 * decompressed on its own (a reader holds one block at a time) and checked to give
 * exactly its bytes; the values are not checked here. */
ScStatus sc_store_part_bytes (ScStore *store, const ScStoreRunShape *r, const ScStoreHeadLoc *loc,
                              ScStorePartReader *pr, const ScStorePart *p, int layer, int head,
                              uint32_t a, uint32_t b, uint8_t *dst, ScError *err);

/* ------------------------------------------------------------------------------------ */
/* sc-store-scores.c                                                                     */

/* The statement sc_store_scores_insert() binds. */
#define SC_STORE_SCORES_INSERT_SQL                                                         \
  "INSERT OR IGNORE INTO head_scores (run_id, layer, head, metric, value) VALUES (?,?,?,?,?)"

/* Inserts head (@layer, @head)'s scores from @stats through @st (a prepared
 * SC_STORE_SCORES_INSERT_SQL), all of them or, with @only non-NULL, score k where only[k].
 * Returns SQLite's code (SQLITE_DONE when every row went in). */
int sc_store_scores_insert (sqlite3_stmt *st, int64_t run_id, int layer, int head,
                            const ScHeadStats *stats, const bool *only);

/* ------------------------------------------------------------------------------------ */
/* sc-store-writer.c                                                                     */

/* Stops the writer thread (after its current job and checkpoint) and closes its
 * connection. NULL is a no-op. */
void sc_store_writer_free (ScStoreWriter *writer);

/* ------------------------------------------------------------------------------------ */
/* sc-store-shard.c                                                                      */

/* The manifests of one input of a merge; @path borrows the store's. */
typedef struct {
  const char *path;
  ScStoreManifest *m;
  size_t n_m;
} ScStoreManifests;

/* Reads @store's complete manifests into @in (each checked: its study readable, series
 * "shard" exactly (I, N) with integers 0 <= I < N <= SC_STORE_MAX_SHARDS). */
ScStatus sc_store_read_manifests (ScStore *store, ScStoreManifests *in, ScError *err);

/* The manifest rule of sc-store-merge.h over @n_in inputs. */
ScStatus sc_store_check_manifests (const ScStoreManifests *in, size_t n_in, ScError *err);

/* Frees what @in holds. */
void sc_store_manifests_clear (ScStoreManifests *in);
