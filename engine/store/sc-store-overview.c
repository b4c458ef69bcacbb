/* sc-store-overview.c — a head's overview image (sc-store-heads.h): the block maxima the
 * writer computes from the fp16 values it stores, and that reading computes for runs
 * stored before schema v3; and the estimate of what a capture will store.
 *
 * An overview of S x S cells over n tokens (S <= n) puts row (or key) i in block a with
 * floor (a n / S) <= i < floor ((a + 1) n / S); cell (a, b) is the maximum over its block.
 * The maximum is taken over the values as stored (fp16, widened exactly to float), so the
 * cell is itself an fp16 value and storing it as fp16 loses nothing.
 *
 * What it is not: reading an overview from the store (sc-store-heads.c).
 */
#include "store/sc-store-heads.h"

#include <stdlib.h>
#include <string.h>

#include "store/sc-store-private.h"

uint32_t
sc_store_overview_start (uint32_t n, uint32_t size, uint32_t a)
{
  return size == 0 ? 0 : (uint32_t) ((uint64_t) a * n / size);
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

void
sc_store_overview_row (float *acc, uint32_t size, const uint32_t *blk, uint32_t row,
                       const float *vals, uint32_t len)
{
  float *cells = acc + (size_t) blk[row] * size;

  for (uint32_t j = 0; j < len; j++)
    {
      float *c = &cells[blk[j]];
      *c = vals[j] > *c ? vals[j] : *c;
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
  return ov->causal && b > a;
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
  const uint64_t s = n < SC_STORE_OVERVIEW_MAX ? n : SC_STORE_OVERVIEW_MAX;
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
  /* An overview shares a leaf page only when two fit in one: at S = 128 (32 KiB) one does
   * not, and each takes a page of its own. */
  per_head = row_bytes (blob + 32) + (ov <= OVERVIEW_SHARE_BYTES ? ov + 64 : PAGE_BYTES)
             + HEAD_OVERHEAD_BYTES;
  return per_head * n_kept + n * TOKEN_BYTES + RUN_OVERHEAD_BYTES;
}
