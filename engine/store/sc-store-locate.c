/* sc-store-locate.c — the checked steps that every reader of a head's rows shares: finding
 * its parts row by row and reading their bytes.
 *
 * A head stored in row blocks (attention_parts, sc-store-heads.c) or as its band
 * (attention_bands, sc-store-band.c) is located one row of its table at a time: each row's
 * id and rows [row0, row1) are checked to continue where the previous part ended and to end
 * inside the run, its dtype to be 'f16', and the parts to end exactly at row n. The bytes
 * are then read through a BLOB handle that moves between rows, refusing a cell whose size
 * changed since it was checked; a value that is not a probability is named with its row
 * and part. The messages name the table from ScStoreHeadLoc.table.
 *
 * These steps live below both layouts' readers so that neither calls the other for them:
 * sc-store-heads.c calls sc-store-band.c (a head may be a band), and both call this file,
 * which calls only the bottom layer (sc-store-base.c, sc-store-blob.c).
 *
 * What it is not: the layouts' own checks (a row's layout, lengths and window:
 * sc-store-heads.c, sc-store-band.c), reading a run (sc-store-read.c).
 */
#include "store/sc-store-private.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------ */
/* Locating                                                                              */

void
sc_store_head_loc_clear (ScStoreHeadLoc *loc)
{
  free (loc->parts);
  memset (loc, 0, sizeof *loc);
}

ScStatus
sc_store_head_loc_check_more (ScStore *store, const ScStoreRunShape *r, int layer, int head,
                              const ScStoreHeadLoc *loc, ScError *err)
{
  if (loc->n_parts > 0 && loc->parts[loc->n_parts - 1].row1 == r->n_tokens)
    return sc_store_bad_run (store, r->id, err, "layer %d head %d has %s rows past its last "
                             "row", layer, head, loc->table);
  return SC_OK;
}

ScStatus
sc_store_head_loc_push (ScStoreHeadLoc *loc, size_t *cap, const ScStorePart *p, ScError *err)
{
  if (loc->n_parts == *cap)
    {
      size_t new_cap = *cap ? 2 * *cap : 4;
      ScStorePart *grown = realloc (loc->parts, new_cap * sizeof *grown);
      if (grown == NULL)
        return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
      loc->parts = grown;
      *cap = new_cap;
    }
  loc->parts[loc->n_parts++] = *p;
  return SC_OK;
}

/* The columns sc_store_head_loc_check_rows reads, the same in both tables' queries. */
enum { LOC_ID, LOC_ROW0, LOC_ROW1 };

ScStatus
sc_store_head_loc_check_rows (const ScStore *store, sqlite3_stmt *st, const ScStoreRunShape *r,
                              int layer, int head, const ScStoreHeadLoc *loc, ScStorePart *p,
                              ScError *err)
{
  const uint32_t n = r->n_tokens;
  const uint32_t expect_row0 = loc->n_parts > 0 ? loc->parts[loc->n_parts - 1].row1 : 0;
  int64_t rowid = 0, row0 = -1, row1 = -1;
  char val[96];

  if (!sc_store_int_in (st, LOC_ID, INT64_MIN, INT64_MAX, &rowid))
    return sc_store_bad_run (store, r->id, err, "an %s row of layer %d head %d has no integer "
                             "id", loc->table, layer, head);
  if (!sc_store_int_in (st, LOC_ROW0, expect_row0, expect_row0, &row0)
      || !sc_store_int_in (st, LOC_ROW1, (int64_t) expect_row0 + 1, n, &row1))
    {
      int col = sc_store_int_in (st, LOC_ROW0, expect_row0, expect_row0, &row0) ? LOC_ROW1
                                                                                : LOC_ROW0;
      sc_store_describe_value (st, col, val, sizeof val);
      return sc_store_bad_run (store, r->id, err, "%s row %lld (layer %d head %d): %s is %s; "
                               "the head's parts must cover rows 0..%u in order, and this one "
                               "starts at row %u", loc->table, (long long) rowid, layer, head,
                               col == LOC_ROW0 ? "row0" : "row1", val, n, expect_row0);
    }
  *p = (ScStorePart) { rowid, (uint32_t) row0, (uint32_t) row1, 0 };
  return SC_OK;
}

ScStatus
sc_store_head_loc_check_square (const ScStore *store, sqlite3_stmt *st, const ScStoreRunShape *r,
                                int layer, int head, const ScStoreHeadLoc *loc, int64_t rowid,
                                ScError *err)
{
  enum { NQ = 3, NK = 4 };
  const uint32_t n = r->n_tokens;
  int64_t v = 0;
  char val[96];

  if (!sc_store_int_in (st, NQ, n, n, &v) || !sc_store_int_in (st, NK, n, n, &v))
    {
      int col = sc_store_int_in (st, NQ, n, n, &v) ? NK : NQ;
      sc_store_describe_value (st, col, val, sizeof val);
      return sc_store_bad_run (store, r->id, err, "%s row %lld (layer %d head %d): %s is %s, "
                               "but the run has %u tokens", loc->table, (long long) rowid, layer,
                               head, col == NQ ? "n_query" : "n_key", val, n);
    }
  return SC_OK;
}

ScStatus
sc_store_head_loc_check_f16 (const ScStore *store, sqlite3_stmt *st, int col,
                             const ScStoreRunShape *r, int layer, int head,
                             const ScStoreHeadLoc *loc, int64_t rowid, ScError *err)
{
  const char *dtype = (const char *) sqlite3_column_text (st, col);
  char val[96];

  if (sqlite3_column_type (st, col) != SQLITE_TEXT || dtype == NULL || strcmp (dtype, "f16") != 0)
    {
      sc_store_describe_value (st, col, val, sizeof val);
      return sc_error_set (err, SC_ERR_UNSUPPORTED, "%s: run %lld: %s row %lld (layer %d head "
                           "%d) has dtype %s; this version reads 'f16' only", store->path,
                           (long long) r->id, loc->table, (long long) rowid, layer, head, val);
    }
  return SC_OK;
}

ScStatus
sc_store_head_loc_check_end (ScStore *store, const ScStoreRunShape *r, int layer, int head,
                             const ScStoreHeadLoc *loc, ScError *err)
{
  if (loc->n_parts > 0 && loc->parts[loc->n_parts - 1].row1 != r->n_tokens)
    return sc_store_bad_run (store, r->id, err, "the %s rows of layer %d head %d end at row %u "
                             "of %u", loc->table, layer, head, loc->parts[loc->n_parts - 1].row1,
                             r->n_tokens);
  return SC_OK;
}

ScStatus
sc_store_head_loc_scan (ScStore *store, const ScStoreRunShape *r, int layer, int head,
                        const char *table, const char *sql, ScStoreRowCheck check,
                        ScStoreHeadLoc *loc, ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStatus status = SC_OK;
  size_t cap = 0;
  int rc;

  if ((rc = sqlite3_prepare_v2 (store->db, sql, -1, &st, NULL)) != SQLITE_OK)
    goto db_error;
  sqlite3_bind_int64 (st, 1, r->id);
  sqlite3_bind_int (st, 2, layer);
  sqlite3_bind_int (st, 3, head);
  loc->table = table;
  loc->n = r->n_tokens;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      ScStorePart p;
      if ((status = sc_store_head_loc_check_more (store, r, layer, head, loc, err)) != SC_OK
          || (status = check (store, st, r, layer, head, loc, &p, err)) != SC_OK
          || (status = sc_store_head_loc_push (loc, &cap, &p, err)) != SC_OK)
        goto out;
    }
  if (rc == SQLITE_DONE)
    goto out;

db_error:
  status = sc_store_sqlite_error (err, store->db, rc, store->path,
                                  "reading run %lld layer %d head %d", (long long) r->id, layer,
                                  head);
out:
  sqlite3_finalize (st);
  return status;
}

/* ------------------------------------------------------------------------------------ */
/* Reading bytes                                                                         */

void
sc_store_cell_close (ScStoreCellHandle *h)
{
  sqlite3_blob_close (h->blob);
  h->blob = NULL;
}

ScStatus
sc_store_cell_read (ScStore *store, const ScStoreRunShape *r, const ScStoreHeadLoc *loc,
                    ScStoreCellHandle *h, const char *column, int64_t rowid, uint64_t cell_bytes,
                    uint64_t offset, uint64_t len, void *buf, ScError *err)
{
  int rc = SQLITE_OK;

  if (h->blob != NULL && (h->column != column || h->rowid != rowid))
    {
      if (h->column == column)
        rc = sqlite3_blob_reopen (h->blob, rowid);
      else
        sc_store_cell_close (h);
      if (rc != SQLITE_OK)
        sc_store_cell_close (h);
    }
  if (rc == SQLITE_OK && h->blob == NULL)
    rc = sqlite3_blob_open (store->db, "main", loc->table, column, rowid, 0, &h->blob);
  if (rc != SQLITE_OK)
    {
      sc_store_cell_close (h);
      return sc_store_sqlite_error (err, store->db, rc, store->path, "reading %s.%s row %lld of "
                                    "run %lld", loc->table, column, (long long) rowid,
                                    (long long) r->id);
    }
  h->column = column;
  h->rowid = rowid;
  /* cell_bytes was checked against SQLite's own length: below 2^31 */
  if ((uint64_t) sqlite3_blob_bytes (h->blob) != cell_bytes || offset + len > cell_bytes)
    return sc_store_bad_run (store, r->id, err, "%s row %lld changed size while read",
                             loc->table, (long long) rowid);
  if (len > 0 && (rc = sqlite3_blob_read (h->blob, buf, (int) len, (int) offset)) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "reading %s.%s row %lld of "
                                  "run %lld", loc->table, column, (long long) rowid,
                                  (long long) r->id);
  return SC_OK;
}

/* The message for a value that is not a probability: value @index of the head (in its
 * packed order, or its pairs for a sparse head), in row @row. */
ScStatus
sc_store_bad_value (ScStore *store, const ScStoreRunShape *r, const ScStoreHeadLoc *loc,
                    const ScStorePart *p, int layer, int head, uint64_t index, uint32_t row,
                    const uint8_t *f16, ScError *err)
{
  float v;

  sc_store_f16_decode (f16, 1, &v);
  return sc_store_bad_run (store, r->id, err, "%s row %lld (layer %d head %d): value %llu is "
                           "%g, not a probability in [0, 1] (row %u)", loc->table,
                           (long long) p->rowid, layer, head, (unsigned long long) index,
                           (double) v, row);
}
