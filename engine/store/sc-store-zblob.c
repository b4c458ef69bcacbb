/* sc-store-zblob.c — compressed heads (schema v5, attention_z): writing them, finding them,
 * and reading the bytes of a block of rows of any stored dense part.
 *
 * A dense head's packed fp16 values (sc-store-blob.c) are cut into blocks of
 * SC_STORE_Z_BLOCK_ROWS rows; each block is laid out as its values' high bytes, then their
 * low bytes (the high byte of a probability — sign, exponent, two mantissa bits — repeats
 * and compresses; the low byte is close to random), and compressed as one zstd frame at
 * level SC_STORE_Z_LEVEL, with its content size and checksum. The choice was measured first (docs/benchmarks.md, "Compressed
 * heads"). It is lossless: reading gives back the fp16 bits that were stored — unless the
 * run is rounded (schema v6, runs.round_bits and zero_below): then each value was rounded
 * before it was laid out (sc_store_z_round_value), within the bound the run states, and
 * the store keeps the rounded bits, which compress better (docs/store.md, "Rounded heads").
 *
 * A row of attention_z holds the blocks of rows [row0, row1), their frames one after the
 * other in data, and their byte offsets (n + 1, u64, little-endian) in blocks; a head
 * whose frames could pass the BLOB budget takes several rows, as attention_parts does.
 *
 * Trust: every number comes from a file anyone may edit. Locating checks a row's columns
 * (its rows, shape, layout, dtype, codec, block_rows and the length of blocks) before any is
 * used; reading checks each offset it uses (in order, inside data, a frame no longer than
 * zstd's bound for its block, which also bounds the memory) and that a frame decompresses
 * to exactly its block's bytes; zstd itself never writes past the block's buffer. The
 * values are then checked to be probabilities by the caller, as for an uncompressed part.
 *
 * What it is not: the layouts' row arithmetic of uncompressed parts (sc-store-heads.c), the
 * writer thread (sc-store-writer.c).
 */
#include "store/sc-store-private.h"

#include "core/sc-math.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* ------------------------------------------------------------------------------------ */
/* The layout                                                                            */

uint64_t
sc_store_loc_values (const ScStoreHeadLoc *loc, uint32_t a, uint32_t b)
{
  if (loc->layout == SC_STORE_LAYOUT_CAUSAL)
    return (uint64_t) b * (b + 1) / 2 - (uint64_t) a * (a + 1) / 2;
  return (uint64_t) (b - a) * loc->n;
}

static inline void
put_le64 (uint8_t *p, uint64_t v)
{
  for (int i = 0; i < 8; i++)
    p[i] = (uint8_t) (v >> (8 * i));
}

static inline uint64_t
get_le64 (const uint8_t *p)
{
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

/* ------------------------------------------------------------------------------------ */
/* The rounded form                                                                      */

double
sc_store_round_relative_error (uint32_t round_bits)
{
  return round_bits == 0 ? 0.0 : ldexp (1.0, -(int) round_bits - 1);
}

ScStoreZRound
sc_store_z_round (uint32_t round_bits, double zero_below)
{
  ScStoreZRound r = { .bits = round_bits, .zero = 0 };

  if (zero_below > 0)
    {
      /* the smallest fp16 at or above the threshold: for non-negative fp16 the bit
       * patterns are ordered like the values, so "below it" is one integer compare */
      uint16_t h = sc_fp32_to_fp16 ((float) zero_below);
      while ((double) sc_fp16_to_fp32 (h) < zero_below && h < 0x7c00u)
        h++;
      r.zero = h;
    }
  return r;
}

/* Rounds to nearest, ties to even, keeping r.bits bits after the leading one (for a
 * subnormal, after its own leading one, so the relative bound holds there too): the value
 * moves by at most half of the last kept bit, 2^-(bits + 1) of itself. A carry into the
 * exponent is the right result. Infinities, NaN and a value whose rounding would pass
 * fp16's largest (65504: never a probability) pass unchanged; the reader refuses any value
 * that is not a probability. */
uint16_t
sc_store_z_round_value (ScStoreZRound r, uint16_t h)
{
  const uint16_t sign = h & 0x8000u;
  uint32_t a = h & 0x7fffu;
  uint32_t after, drop;

  if (a < r.zero)
    return sign;
  if (r.bits == 0 || a == 0 || a >= 0x7c00u) /* a zero has no leading one: it stays */
    return h;
  after = a >= 0x400u ? 10u : (uint32_t) (31 - __builtin_clz (a));
  if (after <= r.bits)
    return h;
  drop = after - r.bits;
  a = ((a + (1u << (drop - 1)) - 1u + ((a >> drop) & 1u)) >> drop) << drop;
  return a >= 0x7c00u ? h : (uint16_t) (sign | a);
}

/* @n little-endian fp16 values (2n bytes) as their high bytes, then their low bytes; each
 * value first as @round stores it. */
static void
planes_split (const uint8_t *src, size_t n, ScStoreZRound round, uint8_t *out)
{
  if (round.bits == 0 && round.zero == 0)
    {
      for (size_t i = 0; i < n; i++)
        {
          out[i] = src[2 * i + 1];
          out[n + i] = src[2 * i];
        }
      return;
    }
  for (size_t i = 0; i < n; i++)
    {
      const uint16_t h = sc_store_z_round_value (round, (uint16_t) (src[2 * i]
                                                                    | src[2 * i + 1] << 8));
      out[i] = (uint8_t) (h >> 8);
      out[n + i] = (uint8_t) h;
    }
}

static bool
grow (uint8_t **buf, size_t *cap, size_t need)
{
  uint8_t *p;

  if (*cap >= need)
    return true;
  if ((p = realloc (*buf, need)) == NULL)
    return false;
  *buf = p;
  *cap = need;
  return true;
}

/* ------------------------------------------------------------------------------------ */
/* Writing                                                                               */

struct ScStoreZWriter {
  ZSTD_CCtx *cc;
  uint8_t *planes, *data, *offsets;
  uint64_t *at;               /* where each frame starts in data, and its end */
  size_t planes_cap, data_cap, offsets_cap, at_cap;
};

ScStoreZWriter *
sc_store_z_writer_new (void)
{
  ScStoreZWriter *z = calloc (1, sizeof *z);

  /* each frame carries its content size and a checksum of it, so that a frame edited in
   * the file is refused when it is read, not decompressed into other probabilities */
  if (z != NULL
      && ((z->cc = ZSTD_createCCtx ()) == NULL
          || ZSTD_isError (ZSTD_CCtx_setParameter (z->cc, ZSTD_c_compressionLevel,
                                                   SC_STORE_Z_LEVEL))
          || ZSTD_isError (ZSTD_CCtx_setParameter (z->cc, ZSTD_c_checksumFlag, 1))
          || ZSTD_isError (ZSTD_CCtx_setParameter (z->cc, ZSTD_c_contentSizeFlag, 1))))
    {
      ZSTD_freeCCtx (z->cc);
      free (z);
      z = NULL;
    }
  return z;
}

void
sc_store_z_writer_free (ScStoreZWriter *z)
{
  if (z == NULL)
    return;
  ZSTD_freeCCtx (z->cc);
  free (z->planes);
  free (z->data);
  free (z->offsets);
  free (z->at);
  free (z);
}

/* Every block of @b compressed into z->data, one frame after the other; z->at[k] is where
 * frame k starts (z->at[n_blocks] = the end). */
static ScStatus
compress_blocks (ScStoreZWriter *z, const ScStoreBlobHead *b, const ScStoreHeadLoc *shape,
                 ScStoreZRound round, size_t n_blocks, ScError *err)
{
  uint64_t at = 0;

  if (!grow ((uint8_t **) &z->at, &z->at_cap, sizeof *z->at * (n_blocks + 1)))
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory compressing layer %d head %d",
                         b->layer, b->head);
  for (size_t k = 0; k < n_blocks; k++)
    {
      const uint32_t r = (uint32_t) k * SC_STORE_Z_BLOCK_ROWS;
      const uint32_t e = b->n - r < SC_STORE_Z_BLOCK_ROWS ? b->n : r + SC_STORE_Z_BLOCK_ROWS;
      const size_t values = (size_t) sc_store_loc_values (shape, r, e);
      const size_t bound = ZSTD_compressBound (2 * values);
      size_t got;

      if (!grow (&z->planes, &z->planes_cap, 2 * values)
          || !grow (&z->data, &z->data_cap, at + bound))
        return sc_error_set (err, SC_ERR_NOMEM, "out of memory compressing layer %d head %d",
                             b->layer, b->head);
      planes_split (b->buf + 2 * sc_store_loc_values (shape, 0, r), values, round, z->planes);
      got = ZSTD_compress2 (z->cc, z->data + at, bound, z->planes, 2 * values);
      if (ZSTD_isError (got))
        return sc_error_set (err, SC_ERR_NOMEM, "compressing layer %d head %d: %s", b->layer,
                             b->head, ZSTD_getErrorName (got));
      z->at[k] = at;
      at += got;
    }
  z->at[n_blocks] = at;
  return SC_OK;
}

/* The blocks of the row that starts at block @k0: as many as fit @budget (at least one). */
static size_t
row_end (const ScStoreZWriter *z, size_t k0, size_t n_blocks, uint64_t budget)
{
  size_t k1 = k0 + 1;

  while (k1 < n_blocks && z->at[k1 + 1] - z->at[k0] <= budget)
    k1++;
  return k1;
}

ScStatus
sc_store_z_insert (sqlite3 *db, ScStoreZWriter *z, const char *path, int64_t run_id,
                   const ScStoreBlobHead *b, ScStoreZRound round, uint64_t budget, bool *fits,
                   uint64_t *stored, ScError *err)
{
  const ScStoreHeadLoc shape = { .layout = b->causal ? SC_STORE_LAYOUT_CAUSAL : SC_STORE_LAYOUT_FULL,
                                 .n = b->n };
  const size_t n_blocks = (b->n + SC_STORE_Z_BLOCK_ROWS - 1) / SC_STORE_Z_BLOCK_ROWS;
  sqlite3_stmt *st = NULL;
  ScStatus status = SC_OK;
  uint64_t total = 0;
  int rc;

  *fits = false;
  *stored = 0;
  /* every frame must be sure to fit one BLOB (a block has at most SC_STORE_Z_BLOCK_ROWS
   * rows of at most n values), or the head goes uncompressed */
  if (ZSTD_compressBound (2 * (size_t) (b->n < SC_STORE_Z_BLOCK_ROWS ? b->n : SC_STORE_Z_BLOCK_ROWS)
                          * b->n) > budget)
    return SC_OK;
  if ((status = compress_blocks (z, b, &shape, round, n_blocks, err)) != SC_OK)
    return status;
  /* the rows' data and offsets together must be smaller than the fp16 BLOB (a head of a
   * few tokens is not): runs.attention_bytes never passes the uncompressed size */
  for (size_t k0 = 0, k1; k0 < n_blocks; k0 = k1)
    {
      k1 = row_end (z, k0, n_blocks, budget);
      total += z->at[k1] - z->at[k0] + 8 * (uint64_t) (k1 - k0 + 1);
    }
  if (total >= b->len)
    return SC_OK;
  *fits = true;
  if (!grow (&z->offsets, &z->offsets_cap, 8 * (n_blocks + 1)))
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory compressing layer %d head %d",
                         b->layer, b->head);
  if ((rc = sqlite3_prepare_v2 (db, "INSERT INTO attention_z (run_id, layer, head, row0, row1, "
                                    "n_query, n_key, layout, dtype, codec, block_rows, blocks, "
                                    "data) VALUES (?,?,?,?,?,?,?,?,'f16','zstd-split',?,?,?)",
                                -1, &st, NULL)) != SQLITE_OK)
    goto db_error;
  for (size_t k0 = 0, k1; k0 < n_blocks; k0 = k1)
    {
      const uint32_t r0 = (uint32_t) k0 * SC_STORE_Z_BLOCK_ROWS;
      uint32_t r1;

      k1 = row_end (z, k0, n_blocks, budget);
      r1 = k1 == n_blocks ? b->n : (uint32_t) k1 * SC_STORE_Z_BLOCK_ROWS;
      for (size_t k = k0; k <= k1; k++)
        put_le64 (z->offsets + 8 * (k - k0), z->at[k] - z->at[k0]);
      sqlite3_bind_int64 (st, 1, run_id);
      sqlite3_bind_int (st, 2, b->layer);
      sqlite3_bind_int (st, 3, b->head);
      sqlite3_bind_int64 (st, 4, r0);
      sqlite3_bind_int64 (st, 5, r1);
      sqlite3_bind_int64 (st, 6, b->n);
      sqlite3_bind_int64 (st, 7, b->n);
      sqlite3_bind_text (st, 8, b->causal ? "causal" : "full", -1, SQLITE_STATIC);
      sqlite3_bind_int (st, 9, SC_STORE_Z_BLOCK_ROWS);
      sqlite3_bind_blob64 (st, 10, z->offsets, 8 * (k1 - k0 + 1), SQLITE_STATIC);
      sqlite3_bind_blob64 (st, 11, z->data + z->at[k0], z->at[k1] - z->at[k0], SQLITE_STATIC);
      rc = sqlite3_step (st);
      sqlite3_reset (st);
      sqlite3_clear_bindings (st);
      if (rc != SQLITE_DONE)
        goto db_error;
    }
  *stored = total;
  goto out;

db_error:
  status = sc_store_sqlite_error (err, db, rc, path, "storing layer %d head %d of a new run",
                                  b->layer, b->head);
out:
  sqlite3_finalize (st);
  return status;
}

/* ------------------------------------------------------------------------------------ */
/* Locating                                                                              */

/* The query's columns; id, row0, row1 first, where sc_store_head_loc_check_rows reads them. */
enum {
  Z_ID, Z_ROW0, Z_ROW1, Z_NQ, Z_NK, Z_LAYOUT, Z_DTYPE, Z_CODEC, Z_BLOCK_ROWS, Z_BLOCKS_T,
  Z_BLOCKS_L, Z_DATA_T, Z_DATA_L,
};

static size_t
n_blocks (const ScStorePart *p)
{
  return (p->row1 - p->row0 + p->block_rows - 1) / p->block_rows;
}

/* One attention_z row of the head being located. */
static ScStatus
check_z_row (ScStore *store, sqlite3_stmt *st, const ScStoreRunShape *r, int layer, int head,
             ScStoreHeadLoc *loc, ScStorePart *p, ScError *err)
{
  const char *layout = (const char *) sqlite3_column_text (st, Z_LAYOUT);
  const char *codec = (const char *) sqlite3_column_text (st, Z_CODEC);
  const char *blocks_t = (const char *) sqlite3_column_text (st, Z_BLOCKS_T);
  const char *data_t = (const char *) sqlite3_column_text (st, Z_DATA_T);
  ScStoreLayout l;
  int64_t br = 0;
  ScStatus status;
  char val[96];

  if ((status = sc_store_head_loc_check_rows (store, st, r, layer, head, loc, p, err)) != SC_OK)
    return status;
  /* (Z_NQ, Z_NK are columns 3 and 4) */
  if ((status = sc_store_head_loc_check_square (store, st, r, layer, head, loc, p->rowid, err))
      != SC_OK)
    return status;
  l = layout != NULL && strcmp (layout, "causal") == 0 ? SC_STORE_LAYOUT_CAUSAL
      : layout != NULL && strcmp (layout, "full") == 0 ? SC_STORE_LAYOUT_FULL
                                                       : SC_STORE_LAYOUT_SPARSE;
  if (sqlite3_column_type (st, Z_LAYOUT) != SQLITE_TEXT || l == SC_STORE_LAYOUT_SPARSE
      || (loc->n_parts > 0 && l != loc->layout))
    {
      sc_store_describe_value (st, Z_LAYOUT, val, sizeof val);
      return sc_store_bad_run (store, r->id, err, "attention_z row %lld (layer %d head %d): "
                               "layout is %s, not 'causal' or 'full' as the head's other "
                               "parts", (long long) p->rowid, layer, head, val);
    }
  if ((status = sc_store_head_loc_check_f16 (store, st, Z_DTYPE, r, layer, head, loc, p->rowid,
                                             err)) != SC_OK)
    return status;
  if (sqlite3_column_type (st, Z_CODEC) != SQLITE_TEXT || codec == NULL
      || strcmp (codec, "zstd-split") != 0)
    {
      sc_store_describe_value (st, Z_CODEC, val, sizeof val);
      return sc_error_set (err, SC_ERR_UNSUPPORTED, "%s: run %lld: attention_z row %lld (layer "
                           "%d head %d) has codec %s; this version reads 'zstd-split' only",
                           store->path, (long long) r->id, (long long) p->rowid, layer, head,
                           val);
    }
  /* a block holds at most its part's rows, whatever block_rows says: 1..the most tokens */
  if (!sc_store_int_in (st, Z_BLOCK_ROWS, 1, SC_STORE_MAX_TOKENS, &br))
    {
      sc_store_describe_value (st, Z_BLOCK_ROWS, val, sizeof val);
      return sc_store_bad_run (store, r->id, err, "attention_z row %lld (layer %d head %d): "
                               "block_rows is %s, not an integer in 1..%u", (long long) p->rowid,
                               layer, head, val, SC_STORE_MAX_TOKENS);
    }
  p->block_rows = (uint32_t) br;
  if (blocks_t == NULL || strcmp (blocks_t, "blob") != 0
      || sqlite3_column_int64 (st, Z_BLOCKS_L) != 8 * ((int64_t) n_blocks (p) + 1)
      || data_t == NULL || strcmp (data_t, "blob") != 0)
    return sc_store_bad_run (store, r->id, err, "attention_z row %lld (layer %d head %d): "
                             "blocks is not a BLOB of %lld bytes (the offsets of rows %u..%u "
                             "in blocks of %u rows), or data is not a BLOB",
                             (long long) p->rowid, layer, head,
                             8 * ((long long) n_blocks (p) + 1), p->row0, p->row1,
                             p->block_rows);
  p->z_bytes = (uint64_t) sqlite3_column_int64 (st, Z_DATA_L);
  loc->layout = l;
  return SC_OK;
}

ScStatus
sc_store_z_locate (ScStore *store, const ScStoreRunShape *r, int layer, int head,
                   ScStoreHeadLoc *loc, ScError *err)
{
  ScStatus status = sc_store_head_loc_scan (
    store, r, layer, head, "attention_z",
    "SELECT id, row0, row1, n_query, n_key, layout, dtype, codec, block_rows, typeof (blocks), "
    "length (blocks), typeof (data), length (data) FROM attention_z WHERE run_id = ?1 AND "
    "layer = ?2 AND head = ?3 ORDER BY row0", check_z_row, loc, err);

  if (status == SC_OK)
    status = sc_store_head_loc_check_end (store, r, layer, head, loc, err);
  return status;
}

/* ------------------------------------------------------------------------------------ */
/* Reading                                                                               */

void
sc_store_part_reader_clear (ScStorePartReader *pr)
{
  sc_store_cell_close (&pr->data);
  sc_store_cell_close (&pr->blocks);
  ZSTD_freeDCtx (pr->dctx);
  free (pr->frame);
  free (pr->planes);
  memset (pr, 0, sizeof *pr);
}

/* Block @k of part @p (rows [@b0, @b1)) decompressed into pr->planes (@bytes long). */
static ScStatus
read_block (ScStore *store, const ScStoreRunShape *r, const ScStoreHeadLoc *loc,
            ScStorePartReader *pr, const ScStorePart *p, int layer, int head, size_t k,
            uint32_t b0, uint32_t b1, size_t bytes, ScError *err)
{
  const uint64_t blocks_len = 8 * ((uint64_t) n_blocks (p) + 1);
  uint8_t at[16];
  uint64_t o0, o1;
  size_t got;
  ScStatus status;

  if ((status = sc_store_cell_read (store, r, loc, &pr->blocks, "blocks", p->rowid, blocks_len,
                                    8 * (uint64_t) k, 16, at, err)) != SC_OK)
    return status;
  o0 = get_le64 (at);
  o1 = get_le64 (at + 8);
  if (o0 > o1 || o1 > p->z_bytes || (k == 0 && o0 != 0) || o1 - o0 > ZSTD_compressBound (bytes))
    return sc_store_bad_run (store, r->id, err, "attention_z row %lld (layer %d head %d): block "
                             "%zu (rows %u..%u) spans bytes %llu..%llu of its data, which "
                             "holds %llu; a block of %zu bytes compresses to at most %zu",
                             (long long) p->rowid, layer, head, k, b0, b1,
                             (unsigned long long) o0, (unsigned long long) o1,
                             (unsigned long long) p->z_bytes, bytes,
                             ZSTD_compressBound (bytes));
  if (!grow (&pr->frame, &pr->frame_cap, (size_t) (o1 - o0) + 1)
      || !grow (&pr->planes, &pr->planes_cap, bytes + 1)
      || (pr->dctx == NULL && (pr->dctx = ZSTD_createDCtx ()) == NULL))
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory reading rows %u..%u of layer %d "
                         "head %d", b0, b1, layer, head);
  if ((status = sc_store_cell_read (store, r, loc, &pr->data, "data", p->rowid, p->z_bytes, o0,
                                    o1 - o0, pr->frame, err)) != SC_OK)
    return status;
  got = ZSTD_decompressDCtx (pr->dctx, pr->planes, bytes, pr->frame, (size_t) (o1 - o0));
  if (ZSTD_isError (got) || got != bytes)
    return sc_store_bad_run (store, r->id, err, "attention_z row %lld (layer %d head %d): block "
                             "%zu (rows %u..%u) does not decompress to its %zu bytes (%s)",
                             (long long) p->rowid, layer, head, k, b0, b1, bytes,
                             ZSTD_isError (got) ? ZSTD_getErrorName (got) : "a different size");
  return SC_OK;
}

ScStatus
sc_store_part_bytes (ScStore *store, const ScStoreRunShape *r, const ScStoreHeadLoc *loc,
                     ScStorePartReader *pr, const ScStorePart *p, int layer, int head,
                     uint32_t a, uint32_t b, uint8_t *dst, ScError *err)
{
  ScStatus status = SC_OK;

  if (p->block_rows == 0)
    return sc_store_cell_read (store, r, loc, &pr->data, "data", p->rowid,
                               2 * sc_store_loc_values (loc, p->row0, p->row1),
                               2 * sc_store_loc_values (loc, p->row0, a),
                               2 * sc_store_loc_values (loc, a, b), dst, err);
  for (size_t k = (a - p->row0) / p->block_rows; status == SC_OK; k++)
    {
      const uint32_t b0 = p->row0 + (uint32_t) k * p->block_rows;
      const uint32_t b1 = p->row1 - b0 < p->block_rows ? p->row1 : b0 + p->block_rows;
      const uint32_t c0 = a > b0 ? a : b0, c1 = b < b1 ? b : b1;
      const size_t values = (size_t) sc_store_loc_values (loc, b0, b1);

      if (b0 >= b)
        break;
      if ((status = read_block (store, r, loc, pr, p, layer, head, k, b0, b1, 2 * values, err))
          == SC_OK)
        {
          /* rows [c0, c1) of the block: a slice of its joined values */
          const size_t from = (size_t) sc_store_loc_values (loc, b0, c0);
          const size_t count = (size_t) sc_store_loc_values (loc, c0, c1);
          uint8_t *out = dst + 2 * sc_store_loc_values (loc, a, c0);
          for (size_t i = 0; i < count; i++)
            {
              out[2 * i] = pr->planes[values + from + i];
              out[2 * i + 1] = pr->planes[from + i];
            }
        }
    }
  return status;
}
