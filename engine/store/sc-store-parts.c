/* sc-store-parts.c — heads stored as attention_parts rows (schema v3), as the writer
 * thread inserts them: a dense head whose BLOB would pass SQLite's length limit, in row
 * blocks of its packed layout, and a sparse head (sc-store-sparse.c), in row blocks too,
 * each block's dropped masses, offsets, keys and values bound as slices of the head's
 * buffer (no copy). A block takes as many rows as fit the budget.
 *
 * The buffer's layout (ScStoreBlobHead): dense, the packed fp16 head (sc-store-blob.c);
 * sparse, dropped (f32, n), offsets (u64, n + 1), keys (u32, nnz), values (f16, nnz), all
 * little-endian — what sc_store_sparse_serialise writes.
 *
 * What it is not: reading parts (sc-store-heads.c), the writer thread (sc-store-writer.c).
 */
#include "store/sc-store-private.h"

#include <string.h>

static inline uint64_t
le64_at (const uint8_t *p)
{
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

static inline uint32_t
le32_at (const uint8_t *p)
{
  return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

/* Where the sparse form's arrays start in a slot. */
static size_t
sparse_offsets_at (uint32_t n)
{
  return 4 * (size_t) n;
}

static size_t
sparse_keys_at (uint32_t n)
{
  return 4 * (size_t) n + 8 * ((size_t) n + 1);
}

/* Exported: see sc-store-private.h. */
void
sc_store_blob_head_unpack (const ScStoreBlobHead *b, float *out)
{
  const uint32_t n = b->n;

  if (b->window > 0)
    {
      sc_store_band_unpack (b->buf, n, b->window, 0, n, out);
      return;
    }
  if (!b->sparse)
    {
      sc_store_blob_unpack (b->buf, n, n, b->causal, out);
      return;
    }
  {
    const uint8_t *offs = b->buf + sparse_offsets_at (n);
    const uint8_t *keys = b->buf + sparse_keys_at (n);
    const uint8_t *vals = keys + 4 * b->nnz;

    memset (out, 0, (size_t) n * n * sizeof *out);
    for (uint32_t i = 0; i < n; i++)
      for (uint64_t j = le64_at (offs + 8 * (size_t) i); j < le64_at (offs + 8 * ((size_t) i + 1));
           j++)
        sc_store_f16_decode (vals + 2 * j, 1, &out[(size_t) i * n + le32_at (keys + 4 * j)]);
  }
}

/* Inserts rows [@r0, @r1) of the slot's head as one attention_parts row. */
static int
insert_part (sqlite3_stmt *st, int64_t run_id, const ScStoreBlobHead *slot, uint32_t r0,
             uint32_t r1)
{
  const uint32_t n = slot->n;
  int rc;

  sqlite3_bind_int64 (st, 1, run_id);
  sqlite3_bind_int (st, 2, slot->layer);
  sqlite3_bind_int (st, 3, slot->head);
  sqlite3_bind_int64 (st, 4, r0);
  sqlite3_bind_int64 (st, 5, r1);
  sqlite3_bind_int64 (st, 6, n);
  sqlite3_bind_int64 (st, 7, n);
  if (!slot->sparse)
    {
      const uint64_t at = slot->causal ? (uint64_t) r0 * (r0 + 1) / 2 : (uint64_t) r0 * n;
      const uint64_t end = slot->causal ? (uint64_t) r1 * (r1 + 1) / 2 : (uint64_t) r1 * n;
      sqlite3_bind_text (st, 8, slot->causal ? "causal" : "full", -1, SQLITE_STATIC);
      sqlite3_bind_blob64 (st, 12, slot->buf + 2 * at, 2 * (end - at), SQLITE_STATIC);
    }
  else
    {
      const uint8_t *offs = slot->buf + sparse_offsets_at (n);
      const uint8_t *keys = slot->buf + sparse_keys_at (n);
      const uint8_t *vals = keys + 4 * slot->nnz;
      const uint64_t p0 = le64_at (offs + 8 * (size_t) r0), p1 = le64_at (offs + 8 * (size_t) r1);
      sqlite3_bind_text (st, 8, "sparse", -1, SQLITE_STATIC);
      sqlite3_bind_blob64 (st, 9, slot->buf + 4 * (size_t) r0, 4 * (uint64_t) (r1 - r0),
                           SQLITE_STATIC);
      sqlite3_bind_blob64 (st, 10, offs + 8 * (size_t) r0, 8 * ((uint64_t) (r1 - r0) + 1),
                           SQLITE_STATIC);
      /* an empty BLOB, not NULL, when the rows keep nothing */
      if (p1 == p0)
        {
          sqlite3_bind_zeroblob (st, 11, 0);
          sqlite3_bind_zeroblob (st, 12, 0);
        }
      else
        {
          sqlite3_bind_blob64 (st, 11, keys + 4 * p0, 4 * (p1 - p0), SQLITE_STATIC);
          sqlite3_bind_blob64 (st, 12, vals + 2 * p0, 2 * (p1 - p0), SQLITE_STATIC);
        }
    }
  rc = sqlite3_step (st);
  sqlite3_reset (st);
  sqlite3_clear_bindings (st);
  return rc;
}

/* The BLOB bytes of rows [@r0, @r1) of the slot's head in an attention_parts row. */
static uint64_t
part_bytes (const ScStoreBlobHead *slot, uint32_t r0, uint32_t r1)
{
  if (!slot->sparse)
    return 2 * (slot->causal ? (uint64_t) r1 * (r1 + 1) / 2 - (uint64_t) r0 * (r0 + 1) / 2
                             : (uint64_t) (r1 - r0) * slot->n);
  {
    const uint8_t *offs = slot->buf + sparse_offsets_at (slot->n);
    return sc_store_sparse_bytes (r1 - r0, le64_at (offs + 8 * (size_t) r1)
                                             - le64_at (offs + 8 * (size_t) r0));
  }
}

ScStatus
sc_store_parts_insert (sqlite3 *db, sqlite3_stmt *st, const char *path, int64_t run_id,
                       const ScStoreBlobHead *slot, uint64_t budget, ScError *err)
{
  uint32_t r0 = 0;
  int rc;

  while (r0 < slot->n)
    {
      uint32_t r1 = r0 + 1;
      if (part_bytes (slot, r0, r1) > budget)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: row %u of layer %d head %d needs "
                             "%llu bytes, more than one BLOB may hold here (%llu)",
                             path, r0, slot->layer, slot->head,
                             (unsigned long long) part_bytes (slot, r0, r1),
                             (unsigned long long) budget);
      /* grow the block a row at a time: the sizes are sums, cheap to recompute */
      while (r1 < slot->n && part_bytes (slot, r0, r1 + 1) <= budget)
        r1++;
      if ((rc = insert_part (st, run_id, slot, r0, r1)) != SQLITE_DONE)
        return sc_store_sqlite_error (err, db, rc, path,
                                      "storing rows %u..%u of layer %d head %d of a new run",
                                      r0, r1, slot->layer, slot->head);
      r0 = r1;
    }
  return SC_OK;
}
