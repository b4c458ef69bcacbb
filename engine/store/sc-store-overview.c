/* sc-store-overview.c — a head's overview image (sc-store-heads.h): the block maxima the
 * writer computes from the fp16 values it stores, and that reading computes for runs
 * stored before schema v3; and the estimate of what a capture will store.
 *
 * An overview of S x S cells over n tokens (S <= n) puts row (or key) i in block a with
 * floor (a n / S) <= i < floor ((a + 1) n / S); cell (a, b) is the maximum over its block.
 * The maximum is taken over the values as stored (fp16, widened exactly to float), so the
 * cell is itself an fp16 value and storing it as fp16 loses nothing.
 *
 * A band head's (sc-store-band.c) cells wholly left of its band are masked as well, and 0.
 *
 * Reading an overview checks the stored one against its run, or computes it from the head
 * for runs stored before schema v3 (through sc-store-heads.c's located heads).
 */
#include "store/sc-store-heads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sc-store-private.h"

uint32_t
sc_store_overview_block (uint32_t n)
{
  return n == 0 ? 1 : (n + SC_STORE_OVERVIEW_MAX - 1) / SC_STORE_OVERVIEW_MAX;
}

uint32_t
sc_store_overview_size (uint32_t n)
{
  const uint32_t b = sc_store_overview_block (n);
  return (n + b - 1) / b;
}

uint32_t
sc_store_overview_start (uint32_t n, uint32_t size, uint32_t a)
{
  const uint64_t start = (uint64_t) a * sc_store_overview_block (n);
  (void) size; /* sc_store_overview_size (n): the block follows from n */
  return start < n ? (uint32_t) start : n;
}

void
sc_store_overview_blocks (uint32_t n, uint32_t size, uint32_t *blk)
{
  for (uint32_t a = 0; a < size; a++)
    {
      const uint32_t end = sc_store_overview_start (n, size, a + 1);
      for (uint32_t i = sc_store_overview_start (n, size, a); i < end; i++)
        blk[i] = a;
    }
}

/* Blocks are runs of one fixed length B (sc_store_overview_start: block a starts at a B), so
 * a row's cells are the maxima of its contiguous runs of B values: a loop in 16 lanes per
 * run rather than a scatter through blk[] (a fifth of an 8,192-token capture's time). The
 * maximum is exact in any order, and the values are probabilities (no NaN), so the cells are
 * the same bits as one value at a time. */
void
sc_store_overview_row (float *acc, uint32_t size, const uint32_t *blk, uint32_t row,
                       const float *vals, uint32_t len)
{
  enum { LANES = 16 };
  float *cells = acc + (size_t) blk[row] * size;
  uint32_t B = 1, j0, b;

  /* B from blk[]: the first key of block 1 (a row shorter than a block has one cell) */
  while (B < len && blk[B] == blk[0])
    B++;
  for (j0 = 0, b = 0; j0 < len; j0 += B, b++)
    {
      const uint32_t j1 = len - j0 > B ? j0 + B : len;
      float lane[LANES], m = cells[b];
      uint32_t j = j0;
      int l;

      for (l = 0; l < LANES; l++)
        lane[l] = m;
      for (; j + LANES <= j1; j += LANES)
        for (l = 0; l < LANES; l++)
          lane[l] = vals[j + l] > lane[l] ? vals[j + l] : lane[l];
      for (; j < j1; j++)
        m = vals[j] > m ? vals[j] : m;
      for (l = 0; l < LANES; l++)
        m = lane[l] > m ? lane[l] : m;
      cells[b] = m;
    }
}

int
sc_store_overview_insert (sqlite3 *db, int64_t run_id, int layer, int head, uint32_t size,
                          const float *acc)
{
  const size_t n = (size_t) size * size;
  sqlite3_stmt *st = NULL;
  uint8_t *f16;
  int rc;

  if ((f16 = malloc (2 * n)) == NULL)
    return SQLITE_NOMEM;
  sc_store_f16_encode (acc, n, f16);
  rc = sqlite3_prepare_v2 (db, "INSERT INTO head_overviews (run_id, layer, head, size, dtype, "
                               "data) VALUES (?,?,?,?,'f16',?)", -1, &st, NULL);
  if (rc == SQLITE_OK)
    {
      sqlite3_bind_int64 (st, 1, run_id);
      sqlite3_bind_int (st, 2, layer);
      sqlite3_bind_int (st, 3, head);
      sqlite3_bind_int64 (st, 4, size);
      sqlite3_bind_blob64 (st, 5, f16, 2 * n, SQLITE_STATIC);
      rc = sqlite3_step (st);
    }
  sqlite3_finalize (st);
  free (f16);
  return rc;
}

bool
sc_store_overview_masked (const ScStoreOverview *ov, uint32_t a, uint32_t b)
{
  /* Block b's first key floor (b n / S) >= block a's end floor ((a + 1) n / S) exactly
   * when b > a, as floor (x n / S) grows strictly with x for n >= S. */
  if (ov->causal && b > a)
    return true;
  if (ov->window == 0 || b >= a)
    return false;
  /* Left of the band: block b's last key, its end - 1, is before the band of block a's
   * first row r, which starts at key r - w + 1: end - 1 + w <= r. */
  {
    const uint32_t n = ov->n_tokens;
    const uint64_t b_end = sc_store_overview_start (n, ov->size, b + 1);
    const uint64_t a_start = sc_store_overview_start (n, ov->size, a);
    return b_end + ov->window <= a_start + 1;
  }
}

void
sc_store_overview_clear (ScStoreOverview *ov)
{
  if (ov == NULL)
    return;
  free (ov->values);
  memset (ov, 0, sizeof *ov);
}

/* The store's page (SC_STORE_PAGE_SIZE), and the largest cell two of which share one. */
#define PAGE_BYTES 65536u
#define OVERVIEW_SHARE_BYTES ((PAGE_BYTES - 128u) / 2u)
/* Per kept head besides its BLOBs, measured on SmolLM2 runs (docs/store.md, "Bytes per
 * run"): the attention row's other columns and b-tree entries, the head_scores rows with
 * their index entries. */
#define HEAD_OVERHEAD_BYTES 1024u
/* Per token: its tokens row (position, id, a piece of a few bytes) and index share. */
#define TOKEN_BYTES 32u
/* Per run: the runs row and the partly filled last pages of its tables. */
#define RUN_OVERHEAD_BYTES (4u * PAGE_BYTES)

/* What a row of @payload bytes takes in a table b-tree of PAGE_BYTES pages, as SQLite lays
 * it out (its file format, "B-tree Cell Format"): up to X bytes stay in the leaf; past
 * that, M + (P - M) mod (U - 4) stay local when that is at most X (else M), and the rest
 * fills whole overflow pages of U - 4 bytes each. */
static uint64_t
row_bytes (uint64_t payload)
{
  const uint64_t u = PAGE_BYTES, x = u - 35, m = (u - 12) * 32 / 255 - 23;
  uint64_t local, k;

  if (payload <= x)
    return payload;
  k = m + (payload - m) % (u - 4);
  local = k <= x ? k : m;
  return local + (payload - local + u - 5) / (u - 4) * u;
}

uint64_t
sc_store_estimate_bytes (uint32_t n_tokens, uint32_t n_layers, uint32_t n_heads,
                         uint32_t n_kept, bool sparse)
{
  const uint64_t n = n_tokens;
  const uint64_t s = sc_store_overview_size (n_tokens);
  const uint64_t ov = 2 * s * s;
  uint64_t per_head, blob;

  (void) sparse; /* a sparse head is stored sparse only when smaller: dense is the bound */
  if (n == 0 || n_kept == 0 || n_layers == 0 || n_heads == 0)
    return 0;
  if ((uint64_t) n_kept > (uint64_t) n_layers * n_heads)
    n_kept = n_layers * n_heads;
  if (n > SC_STORE_MAX_TOKENS)
    return UINT64_MAX;
  /* A head past SQLite's default length limit (1e9) is split into row blocks, which costs
   * the same pages within one per block. */
  blob = n * (n + 1);
  /* An overview shares a leaf page only when two fit in one (at most 8 KiB at S <= 64:
   * eight share a page; a 128-cell overview, 32 KiB, would take a page of its own). */
  per_head = row_bytes (blob + 32) + (ov <= OVERVIEW_SHARE_BYTES ? ov + 64 : PAGE_BYTES)
             + HEAD_OVERHEAD_BYTES;
  return per_head * n_kept + n * TOKEN_BYTES + RUN_OVERHEAD_BYTES;
}

/* ------------------------------------------------------------------------------------ */
/* Overviews                                                                             */

/* The stored overview of the located head, checked: *@found false when there is none. */
static ScStatus
read_stored_overview (ScStore *store, const ScStoreRunShape *r, int layer, int head,
                      ScStoreOverview *ov, bool *found, ScError *err)
{
  const uint32_t size = ov->size;
  const size_t n_cells = (size_t) size * size;
  sqlite3_stmt *st = NULL;
  sqlite3_blob *blob = NULL;
  ScStatus status = SC_OK;
  uint8_t *buf = NULL;
  int64_t rowid = 0, v = 0;
  char val[96];
  int rc;

  *found = false;
  if ((rc = sqlite3_prepare_v2 (store->db, "SELECT id, size, dtype, typeof (data), "
                                "length (data) FROM head_overviews WHERE run_id = ?1 AND "
                                "layer = ?2 AND head = ?3", -1, &st, NULL)) != SQLITE_OK)
    goto db_error;
  sqlite3_bind_int64 (st, 1, r->id);
  sqlite3_bind_int (st, 2, layer);
  sqlite3_bind_int (st, 3, head);
  if ((rc = sqlite3_step (st)) == SQLITE_DONE)
    goto out;
  if (rc != SQLITE_ROW)
    goto db_error;
  *found = true;
  if (!sc_store_int_in (st, 0, INT64_MIN, INT64_MAX, &rowid))
    {
      status = sc_store_bad_run (store, r->id, err, "the head_overviews row of layer %d head %d "
                                 "has no integer id", layer, head);
      goto out;
    }
  if (!sc_store_int_in (st, 1, size, size, &v))
    {
      sc_store_describe_value (st, 1, val, sizeof val);
      status = sc_store_bad_run (store, r->id, err, "head_overviews row %lld (layer %d head %d): "
                                 "size is %s; a run of %u tokens has overviews of %u",
                                 (long long) rowid, layer, head, val, r->n_tokens, size);
      goto out;
    }
  {
    const char *dtype = (const char *) sqlite3_column_text (st, 2);
    const char *type = (const char *) sqlite3_column_text (st, 3);
    if (dtype == NULL || strcmp (dtype, "f16") != 0 || type == NULL || strcmp (type, "blob") != 0
        || sqlite3_column_int64 (st, 4) != (int64_t) (2 * n_cells))
      {
        status = sc_store_bad_run (store, r->id, err, "head_overviews row %lld (layer %d head "
                                   "%d): data is not an f16 BLOB of %zu bytes", (long long) rowid,
                                   layer, head, 2 * n_cells);
        goto out;
      }
  }
  if ((buf = malloc (2 * n_cells)) == NULL)
    {
      status = sc_error_set (err, SC_ERR_NOMEM, "out of memory");
      goto out;
    }
  if ((rc = sqlite3_blob_open (store->db, "main", "head_overviews", "data", rowid, 0, &blob))
        != SQLITE_OK
      || (rc = sqlite3_blob_bytes (blob) == (int) (2 * n_cells) ? SQLITE_OK : SQLITE_CORRUPT)
           != SQLITE_OK
      || (rc = sqlite3_blob_read (blob, buf, (int) (2 * n_cells), 0)) != SQLITE_OK)
    goto db_error;
  {
    const size_t bad = sc_store_blob_first_bad (buf, n_cells);
    if (bad < n_cells)
      {
        float x;
        sc_store_f16_decode (buf + 2 * bad, 1, &x);
        status = sc_store_bad_run (store, r->id, err, "head_overviews row %lld (layer %d head "
                                   "%d): cell %zu is %g, not a probability in [0, 1]",
                                   (long long) rowid, layer, head, bad, (double) x);
        goto out;
      }
  }
  sc_store_f16_decode (buf, n_cells, ov->values);
  for (uint32_t a = 0; a < size; a++)
    for (uint32_t b = 0; b < size; b++)
      if (sc_store_overview_masked (ov, a, b) && ov->values[(size_t) a * size + b] != 0.0f)
        {
          /* a masked cell lies above the diagonal (b > a) or, in a band head, wholly left
           * of the band (b < a): say which (issue 25, item 10) */
          status = sc_store_bad_run (store, r->id, err, "head_overviews row %lld (layer %d head "
                                     "%d): cell (%u, %u), %s, is %g, not 0", (long long) rowid,
                                     layer, head, a, b, b > a
                                       ? "above the diagonal of a causal head"
                                       : "outside the band (left of the head's window)",
                                     (double) ov->values[(size_t) a * size + b]);
          goto out;
        }
  goto out;

db_error:
  status = sc_store_sqlite_error (err, store->db, rc, store->path, "reading the overview of "
                                  "run %lld layer %d head %d", (long long) r->id, layer, head);
out:
  sqlite3_blob_close (blob);
  sqlite3_finalize (st);
  free (buf);
  return status;
}

/* Computes the located head's overview from its rows, SC_STORE_CHUNK_VALUES floats at a time. */
static ScStatus
compute_overview (ScStore *store, const ScStoreRunShape *r, const ScStoreHeadLoc *loc, int layer,
                  int head, ScStoreOverview *ov, ScError *err)
{
  const uint32_t n = r->n_tokens, step = SC_STORE_CHUNK_VALUES / n > 0 ? SC_STORE_CHUNK_VALUES / n : 1;
  uint32_t *blk = malloc ((size_t) n * sizeof *blk);
  float *rows = malloc ((size_t) step * n * sizeof *rows);
  ScStatus status = SC_OK;

  if (blk == NULL || rows == NULL)
    status = sc_error_set (err, SC_ERR_NOMEM, "out of memory");
  else
    {
      sc_store_overview_blocks (n, ov->size, blk);
      memset (ov->values, 0, (size_t) ov->size * ov->size * sizeof *ov->values);
      for (uint32_t q0 = 0; q0 < n && status == SC_OK; q0 += step)
        {
          const uint32_t q1 = n - q0 < step ? n : q0 + step;
          status = sc_store_head_rows (store, r, loc, layer, head, q0, q1, rows, NULL, err);
          for (uint32_t i = q0; status == SC_OK && i < q1; i++)
            sc_store_overview_row (ov->values, ov->size, blk, i, rows + (size_t) (i - q0) * n,
                                   loc->layout != SC_STORE_LAYOUT_FULL ? i + 1 : n);
        }
    }
  free (blk);
  free (rows);
  return status;
}

/* Stores a computed overview: a cache write that never waits for another writer. */
static bool
store_overview (ScStore *store, int64_t run_id, int layer, int head, const ScStoreOverview *ov)
{
  int rc;

  sqlite3_busy_timeout (store->db, 0);
  rc = sc_store_exec (store->db, "BEGIN IMMEDIATE");
  sqlite3_busy_timeout (store->db, store->busy_ms > 0 ? store->busy_ms : 0);
  if (rc != SQLITE_OK)
    return false;
  rc = sc_store_overview_insert (store->db, run_id, layer, head, ov->size, ov->values);
  if (rc == SQLITE_DONE && sc_store_exec (store->db, "COMMIT") == SQLITE_OK)
    return true;
  if (!sqlite3_get_autocommit (store->db))
    sc_store_exec (store->db, "ROLLBACK");
  return false;
}

ScStatus
sc_store_read_overview (ScStore *store, int64_t run_id, int layer, int head,
                        ScStoreOverview *out, ScError *err)
{
  ScStoreRunShape r;
  ScStoreHeadLoc loc = { 0 };
  ScStatus status;
  bool own = false, found = false;
  int rc;

  memset (out, 0, sizeof *out);
  if ((rc = sc_store_read_begin (store, &own)) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "reading run %lld",
                                  (long long) run_id);
  if ((status = sc_store_head_find (store, run_id, layer, head, &r, &loc, err)) != SC_OK)
    goto out;
  out->n_tokens = r.n_tokens;
  out->size = sc_store_overview_size (r.n_tokens);
  out->causal = loc.layout != SC_STORE_LAYOUT_FULL;
  out->window = loc.window;
  if ((out->values = malloc ((size_t) out->size * out->size * sizeof *out->values)) == NULL)
    {
      status = sc_error_set (err, SC_ERR_NOMEM, "out of memory");
      goto out;
    }
  if (store->schema_version >= 3
      && ((status = read_stored_overview (store, &r, layer, head, out, &found, err)) != SC_OK
          || found))
    goto out;
  if ((status = compute_overview (store, &r, &loc, layer, head, out, err)) != SC_OK)
    goto out;
  out->computed = true;
  if (own)
    {
      sc_store_read_end (store, own);
      own = false;
    }
  if (store->writable && store->capture == NULL && store->schema_version >= 3)
    out->stored = store_overview (store, run_id, layer, head, out);
out:
  sc_store_head_loc_clear (&loc);
  sc_store_read_end (store, own);
  if (status != SC_OK)
    sc_store_overview_clear (out);
  return status;
}
