/* sc-store-base.h — the capture store's bottom layer, shared by all of its files: the
 * ScStore struct, the primitives of sc-store-base.c (SQLite errors in words, statements, a
 * connection with the store's settings, read transactions, the checks of untrusted cells
 * and the messages that name a damaged run) and the fp16 BLOB codec of sc-store-blob.c.
 * The files declared here call nothing else of the store's and include only this header;
 * the layers above them are declared in sc-store-private.h (docs/architecture.md, "The
 * store's files").
 * Not installed, not for callers outside engine/store/ and the store's tests.
 */
#pragma once

#include <sqlite3.h>
#include <stdarg.h>

#include "store/sc-store.h"

typedef struct ScStoreWriter ScStoreWriter;

/* Invariants: db is open for the store's lifetime; writer is NULL until the first capture
 * and only on writable stores; capture is the open capture (at most one) or NULL. */
struct ScStore {
  char *path;
  sqlite3 *db;              /* reads, deletes, schema work: the caller's thread */
  bool writable;
  bool immutable;           /* read-only fallback: opened with immutable=1 (docs/store.md) */
  int busy_ms;              /* < 0: no waiting */
  uint64_t max_bytes;
  size_t queue_bytes;
  uint64_t max_blob_bytes;  /* 0: SQLite's length limit; else the writer's (tests) */
  bool compress_heads;      /* the writer stores dense heads and bands in attention_z */
  int schema_version;
  ScStoreWriter *writer;    /* the writer thread and its connection */
  ScStoreCapture *capture;  /* the open capture, if any */
};

/* The page size new stores get (docs/store.md, "Page size"). */
#define SC_STORE_PAGE_SIZE 65536

/* 'SCDE' as the application_id in the SQLite header: marks the file as a Saccade store. */
#define SC_STORE_APPLICATION_ID 0x53434445

/* ------------------------------------------------------------------------------------ */
/* sc-store-base.c: SQLite, connections                                                  */

/* Fills @err with SC_ERR_DB (SC_ERR_NOMEM for SQLITE_NOMEM) and a message
 *   "<path>: <what>: <explanation> (<SQLite's message>)"
 * where the explanation says in words what @rc means for a user (not a database, corrupt,
 * disk full, locked by another process ...). @db may be NULL. Returns the status. */
ScStatus sc_store_sqlite_error (ScError *err, sqlite3 *db, int rc, const char *path,
                                const char *what_fmt, ...)
  __attribute__ ((format (printf, 5, 6)));

/* Opens one connection to @path with the store's per-connection settings (foreign keys,
 * busy timeout, defensive mode, size limit). Writable connections also get WAL and
 * synchronous=FULL (the schema must already be checked). */
ScStatus sc_store_connection_open (const ScStore *store, bool writable, sqlite3 **out,
                                   ScError *err);

/* Writes @len bytes of @s (a name from the file: any bytes) into @buf as a quoted,
 * printable string for a message: 'name', with quotes, backslashes, control bytes and
 * bytes >= 0x80 as \xNN, cut with "..." to fit @size (>= 8). */
void sc_store_quote (const char *s, size_t len, char *buf, size_t size);

/* Runs @sql (no rows expected). Returns SQLite's code. */
int sc_store_exec (sqlite3 *db, const char *sql);

/* Milliseconds since the Unix epoch. */
int64_t sc_store_now_ms (void);

/* ------------------------------------------------------------------------------------ */
/* sc-store-base.c: untrusted cells, read transactions                                   */

/* SC_ERR_FORMAT "PATH: run R: <what>; the store was edited or is damaged: delete the run
 * ...". */
ScStatus sc_store_bad_run (const ScStore *store, int64_t run_id, ScError *err,
                           const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));

/* SC_ERR_NOT_FOUND "PATH: run R did not keep layer L head H". */
ScStatus sc_store_not_kept (const ScStore *store, int64_t run_id, int layer, int head,
                            ScError *err);

/* A read transaction around several statements (one snapshot), unless one is open;
 * *@own says whether read_end must close it. */
int sc_store_read_begin (ScStore *store, bool *own);
void sc_store_read_end (ScStore *store, bool own);

/* Column @col as an integer in [@lo, @hi]; false for another type or value. */
bool sc_store_int_in (sqlite3_stmt *st, int col, int64_t lo, int64_t hi, int64_t *v);

/* What a value in a cell is, for a message: "42", "1.5 (a real)", "'abc' (text)". */
void sc_store_describe_value (sqlite3_stmt *st, int col, char *buf, size_t size);

/* ------------------------------------------------------------------------------------ */
/* sc-store-blob.c                                                                       */

/* Bytes of a head's BLOB: fp16, n*(n+1)/2 values when causal, else n_query*n_key. */
size_t sc_store_blob_bytes (bool causal, uint32_t n_query, uint32_t n_key);

/* The index of the first of @n fp16 values in @blob that is not a probability (NaN,
 * infinite, negative other than -0, or above 1), or @n when all are. */
size_t sc_store_blob_first_bad (const uint8_t *blob, size_t n);

/* Whether @probs (n, n) is causal: every entry above the diagonal exactly zero. */
bool sc_store_head_is_causal (const float *probs, uint32_t n_query, uint32_t n_key);

/* @n floats to fp16, little-endian, bit for bit what sc_fp32_to_fp16 gives (F16C when the
 * build targets it), and back (what sc_fp16_to_fp32 gives). */
void sc_store_f16_encode (const float *src, size_t n, uint8_t *out);
void sc_store_f16_decode (const uint8_t *src, size_t n, float *out);

/* Whether the conversions above use F16C. */
bool sc_store_blob_simd (void);

/* Converts @probs to fp16 (sc_fp32_to_fp16: round to nearest even), little-endian, keeping
 * only the lower triangle when @causal; @out holds sc_store_blob_bytes() bytes. */
void sc_store_blob_pack (const float *probs, uint32_t n_query, uint32_t n_key, bool causal,
                         uint8_t *out);

/* The inverse: (n_query, n_key) floats, zeros above the diagonal when @causal. */
void sc_store_blob_unpack (const uint8_t *blob, uint32_t n_query, uint32_t n_key, bool causal,
                           float *out);
