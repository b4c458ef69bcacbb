/* sc-store-heads.c — reading heads: whole, as fp16, or a block of rows; from one attention
 * row, from row blocks, or from the sparse form (sc-store.h, sc-store-heads.h).
 *
 * A head is found first (locate): one `attention` row holding the whole packed head, or
 * (schema v3) a run of `attention_parts` rows covering rows 0..n in order — dense row
 * blocks of a head too large for one BLOB, or the sparse form —, or (schema v4) a run of
 * `attention_bands` rows, the band of a sliding-window head (sc-store-band.c). Every
 * number of those rows is checked against the run before any is used (the shape, the
 * layout, each BLOB's length against its rows), so the byte ranges computed from them stay
 * inside the BLOBs.
 * Then only the bytes of the rows asked for are read, through SQLite's incremental BLOB
 * I/O (sqlite3_blob_read at an offset: the pages before it are not loaded), and every
 * value read is checked to be a probability. The row-by-row steps of locating and the byte
 * reads it shares with sc-store-band.c are sc-store-locate.c's.
 *
 * What it is not: runs, tokens and the checks of a run (sc-store-read.c), overviews
 * (sc-store-overview.c).
 */
#include "store/sc-store-heads.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sc-math.h"
#include "store/sc-store-private.h"

/* Values before row @r in a packed causal head: r(r+1)/2 (r <= 2^19: < 2^38). */
static inline uint64_t
tri (uint64_t r)
{
  return r * (r + 1) / 2;
}

/* Values of rows [@a, @b) of a dense head of @n keys. */
static inline uint64_t
dense_values (bool causal, uint32_t n, uint32_t a, uint32_t b)
{
  return causal ? tri (b) - tri (a) : (uint64_t) (b - a) * n;
}

static const char *
layout_name (ScStoreLayout l)
{
  return l == SC_STORE_LAYOUT_CAUSAL ? "causal" : l == SC_STORE_LAYOUT_FULL ? "full" : "sparse";
}

static bool
layout_from (sqlite3_stmt *st, int col, ScStoreLayout *l)
{
  const char *s = (const char *) sqlite3_column_text (st, col);

  if (sqlite3_column_type (st, col) != SQLITE_TEXT || s == NULL)
    return false;
  if (strcmp (s, "causal") == 0)
    *l = SC_STORE_LAYOUT_CAUSAL;
  else if (strcmp (s, "full") == 0)
    *l = SC_STORE_LAYOUT_FULL;
  else if (strcmp (s, "sparse") == 0)
    *l = SC_STORE_LAYOUT_SPARSE;
  else
    return false;
  return true;
}

/* ------------------------------------------------------------------------------------ */
/* Finding a head                                                                        */

/* The one attention row: SELECT id, n_query, n_key, layout, dtype, typeof (data),
 * length (data). */
static ScStatus
check_head_row (const ScStore *store, sqlite3_stmt *st, const ScStoreRunShape *r, int layer,
                int head, ScStoreHeadLoc *loc, ScError *err)
{
  const char *dtype = (const char *) sqlite3_column_text (st, 4);
  const char *data_type = (const char *) sqlite3_column_text (st, 5);
  int64_t nq = 0, nk = 0, rowid = 0, len = sqlite3_column_int64 (st, 6), want;
  ScStoreLayout layout;
  char val[96];

  if (!sc_store_int_in (st, 0, INT64_MIN, INT64_MAX, &rowid))
    return sc_store_bad_run (store, r->id, err, "the attention row of layer %d head %d has no "
                             "integer id", layer, head);
  if (!sc_store_int_in (st, 1, r->n_tokens, r->n_tokens, &nq)
      || !sc_store_int_in (st, 2, r->n_tokens, r->n_tokens, &nk))
    {
      int col = sc_store_int_in (st, 1, r->n_tokens, r->n_tokens, &nq) ? 2 : 1;
      sc_store_describe_value (st, col, val, sizeof val);
      return sc_store_bad_run (store, r->id, err, "attention row %lld (layer %d head %d): %s is "
                               "%s, but the run has %u tokens", (long long) rowid, layer, head,
                               col == 1 ? "n_query" : "n_key", val, r->n_tokens);
    }
  if (!layout_from (st, 3, &layout) || layout == SC_STORE_LAYOUT_SPARSE)
    {
      sc_store_describe_value (st, 3, val, sizeof val);
      return sc_store_bad_run (store, r->id, err, "attention row %lld (layer %d head %d): layout "
                               "is %s, not 'causal' or 'full'", (long long) rowid, layer, head,
                               val);
    }
  if (sqlite3_column_type (st, 4) != SQLITE_TEXT || dtype == NULL || strcmp (dtype, "f16") != 0)
    {
      sc_store_describe_value (st, 4, val, sizeof val);
      return sc_error_set (err, SC_ERR_UNSUPPORTED, "%s: run %lld: attention row %lld (layer %d "
                           "head %d) has dtype %s; this version reads 'f16' only", store->path,
                           (long long) r->id, (long long) rowid, layer, head, val);
    }
  /* n <= 2^19: n * n * 2 < 2^39 */
  want = (int64_t) sc_store_blob_bytes (layout == SC_STORE_LAYOUT_CAUSAL, (uint32_t) nq, (uint32_t) nk);
  if (data_type == NULL || strcmp (data_type, "blob") != 0 || len != want)
    return sc_store_bad_run (store, r->id, err, "attention row %lld (layer %d head %d): data is "
                             "%s of %lld bytes; a %s %lld x %lld fp16 head has %lld",
                             (long long) rowid, layer, head,
                             data_type != NULL ? data_type : "?", (long long) len,
                             layout_name (layout), (long long) nq, (long long) nk,
                             (long long) want);
  if ((loc->parts = malloc (sizeof *loc->parts)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
  loc->table = "attention";
  loc->layout = layout;
  loc->n = r->n_tokens;
  loc->parts[0] = (ScStorePart) { rowid, 0, r->n_tokens, 0 };
  loc->n_parts = 1;
  return SC_OK;
}

/* The query's columns; id, row0, row1 first, where sc_store_head_loc_check_rows reads them. */
enum {
  P_ID, P_ROW0, P_ROW1, P_NQ, P_NK, P_LAYOUT, P_DTYPE, P_DROPPED_T, P_DROPPED_L, P_OFFSETS_T,
  P_OFFSETS_L, P_KEYS_T, P_KEYS_L, P_DATA_T, P_DATA_L,
};

static bool
is_blob_of (sqlite3_stmt *st, int type_col, int len_col, int64_t len)
{
  const char *t = (const char *) sqlite3_column_text (st, type_col);
  return t != NULL && strcmp (t, "blob") == 0 && sqlite3_column_int64 (st, len_col) == len;
}

/* One attention_parts row (the columns above) of the head being located: it must start
 * where the previous one ended, lie inside the run, have the head's layout and BLOBs of
 * exactly the lengths its rows need. */
static ScStatus
check_part_row (ScStore *store, sqlite3_stmt *st, const ScStoreRunShape *r, int layer,
                int head, ScStoreHeadLoc *loc, ScStorePart *p, ScError *err)
{
  const uint32_t n = r->n_tokens;
  ScStoreLayout layout;
  ScStatus status;
  char val[96];

  if ((status = sc_store_head_loc_check_rows (store, st, r, layer, head, loc, p, err)) != SC_OK)
    return status;
  /* (P_NQ, P_NK are columns 3 and 4) */
  if ((status = sc_store_head_loc_check_square (store, st, r, layer, head, loc, p->rowid, err))
      != SC_OK)
    return status;
  if (!layout_from (st, P_LAYOUT, &layout) || (loc->n_parts > 0 && layout != loc->layout))
    {
      sc_store_describe_value (st, P_LAYOUT, val, sizeof val);
      return sc_store_bad_run (store, r->id, err, "attention_parts row %lld (layer %d head %d): "
                               "layout is %s, not 'causal', 'full' or 'sparse' as the head's "
                               "other parts", (long long) p->rowid, layer, head, val);
    }
  if ((status = sc_store_head_loc_check_f16 (store, st, P_DTYPE, r, layer, head, loc, p->rowid,
                                             err)) != SC_OK)
    return status;
  {
    const uint32_t rows = p->row1 - p->row0;
    if (layout != SC_STORE_LAYOUT_SPARSE)
      {
        const int64_t want = 2 * (int64_t) dense_values (layout == SC_STORE_LAYOUT_CAUSAL, n, p->row0,
                                                         p->row1);
        if (!is_blob_of (st, P_DATA_T, P_DATA_L, want))
          return sc_store_bad_run (store, r->id, err, "attention_parts row %lld (layer %d head "
                                   "%d): data is not a BLOB of %lld bytes, the size of rows "
                                   "%u..%u of a %s fp16 head of %u tokens", (long long) p->rowid,
                                   layer, head, (long long) want, p->row0, p->row1,
                                   layout_name (layout), n);
      }
    else
      {
        /* at most every value of the rows kept: a causal row i keeps at most i + 1 */
        const int64_t most = (int64_t) dense_values (true, n, p->row0, p->row1);
        const int64_t data_len = sqlite3_column_int64 (st, P_DATA_L);
        if (!is_blob_of (st, P_DROPPED_T, P_DROPPED_L, 4 * (int64_t) rows)
            || !is_blob_of (st, P_OFFSETS_T, P_OFFSETS_L, 8 * ((int64_t) rows + 1))
            || !is_blob_of (st, P_DATA_T, P_DATA_L, data_len) || data_len % 2 != 0
            || data_len / 2 > most || !is_blob_of (st, P_KEYS_T, P_KEYS_L, 2 * data_len))
          return sc_store_bad_run (store, r->id, err, "attention_parts row %lld (layer %d head "
                                   "%d): the sparse BLOBs of rows %u..%u do not fit (dropped "
                                   "4 bytes a row, offsets 8 bytes a row and one more, keys 4 "
                                   "and data 2 bytes a pair, at most %lld pairs)",
                                   (long long) p->rowid, layer, head, p->row0, p->row1,
                                   (long long) most);
        p->n_pairs = (uint64_t) data_len / 2;
      }
  }
  loc->layout = layout;
  return SC_OK;
}

/* Finds head (@layer, @head) of run @r. */
static ScStatus
locate (ScStore *store, const ScStoreRunShape *r, int layer, int head, ScStoreHeadLoc *loc,
        ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStatus status = SC_OK;
  int rc;

  memset (loc, 0, sizeof *loc);
  if (layer < 0 || (uint32_t) layer >= r->n_layers || head < 0 || (uint32_t) head >= r->n_heads)
    return sc_error_set (err, SC_ERR_NOT_FOUND, "%s: run %lld has no layer %d head %d (its "
                         "model has %u layers x %u heads)", store->path, (long long) r->id,
                         layer, head, r->n_layers, r->n_heads);
  if (!sc_store_shape_keeps (r, layer, head))
    return sc_store_not_kept (store, r->id, layer, head, err);
  /* typeof and length of a BLOB come from its record header: the data is read later, once
   * its size is known to be right. */
  if ((rc = sqlite3_prepare_v2 (store->db,
                                "SELECT id, n_query, n_key, layout, dtype, typeof (data), "
                                "length (data) FROM attention "
                                "WHERE run_id = ?1 AND layer = ?2 AND head = ?3", -1, &st, NULL))
      != SQLITE_OK)
    goto db_error;
  sqlite3_bind_int64 (st, 1, r->id);
  sqlite3_bind_int (st, 2, layer);
  sqlite3_bind_int (st, 3, head);
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW)
    {
      status = check_head_row (store, st, r, layer, head, loc, err);
      goto out;
    }
  if (rc != SQLITE_DONE)
    goto db_error;
  sqlite3_finalize (st);
  st = NULL;
  if (store->schema_version >= 5)
    {
      if ((status = sc_store_z_locate (store, r, layer, head, loc, err)) != SC_OK
          || loc->n_parts > 0)
        goto out;
    }
  if (store->schema_version < 3)
    {
      status = sc_store_bad_run (store, r->id, err, "the attention table has no row for layer "
                                 "%d head %d", layer, head);
      goto out;
    }
  if ((status = sc_store_head_loc_scan (store, r, layer, head, "attention_parts",
                                        "SELECT id, row0, row1, n_query, n_key, layout, dtype, "
                                        "typeof (dropped), length (dropped), typeof (offsets), "
                                        "length (offsets), typeof (keys), length (keys), "
                                        "typeof (data), length (data) FROM attention_parts "
                                        "WHERE run_id = ?1 AND layer = ?2 AND head = ?3 "
                                        "ORDER BY row0", check_part_row, loc, err)) != SC_OK)
    goto out;
  if (loc->n_parts == 0 && store->schema_version >= 4)
    {
      if ((status = sc_store_band_locate (store, r, layer, head, loc, err)) != SC_OK
          || loc->n_parts > 0)
        goto out;
    }
  if (loc->n_parts == 0)
    status = sc_store_bad_run (store, r->id, err, "neither attention nor attention_parts%s%s "
                               "has a row for layer %d head %d",
                               store->schema_version >= 4 ? " nor attention_bands" : "",
                               store->schema_version >= 5 ? " nor attention_z" : "", layer,
                               head);
  else
    status = sc_store_head_loc_check_end (store, r, layer, head, loc, err);
  goto out;

db_error:
  status = sc_store_sqlite_error (err, store->db, rc, store->path,
                                  "reading run %lld layer %d head %d", (long long) r->id, layer,
                                  head);
out:
  sqlite3_finalize (st);
  if (status != SC_OK)
    sc_store_head_loc_clear (loc);
  return status;
}

/* ------------------------------------------------------------------------------------ */
/* Reading rows                                                                          */

typedef ScStoreCellHandle Handle;

/* Rows [@q0, @q1) of a dense head into @buf, packed (fp16 bytes as stored), each value
 * checked. */
static ScStatus
read_dense (ScStore *store, const ScStoreRunShape *r, const ScStoreHeadLoc *loc, int layer, int head,
            uint32_t q0, uint32_t q1, uint8_t *buf, ScError *err)
{
  const bool causal = loc->layout == SC_STORE_LAYOUT_CAUSAL;
  ScStorePartReader pr = { 0 };
  ScStatus status = SC_OK;

  for (size_t k = 0; k < loc->n_parts && status == SC_OK; k++)
    {
      const ScStorePart *p = &loc->parts[k];
      const uint32_t a = q0 > p->row0 ? q0 : p->row0, b = q1 < p->row1 ? q1 : p->row1;
      if (a >= b)
        continue;
      const uint64_t len = 2 * dense_values (causal, loc->n, a, b);
      uint8_t *dst = buf + 2 * dense_values (causal, loc->n, q0, a);
      size_t bad;

      status = sc_store_part_bytes (store, r, loc, &pr, p, layer, head, a, b, dst, err);
      if (status == SC_OK && (bad = sc_store_blob_first_bad (dst, len / 2)) < len / 2)
        {
          /* the row of value @bad: the first row whose end passes it */
          uint32_t row = a;
          while (row + 1 < b && dense_values (causal, loc->n, a, row + 1) <= bad)
            row++;
          status = sc_store_bad_value (store, r, loc, p, layer, head,
                              dense_values (causal, loc->n, 0, a) + bad, row, dst + 2 * bad,
                              err);
        }
    }
  sc_store_part_reader_clear (&pr);
  return status;
}

static inline uint64_t
get_le64 (const uint8_t *p)
{
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

static inline uint32_t
get_le32 (const uint8_t *p)
{
  return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

/* Rows [@q0, @q1) of a sparse head as float into @out ((q1 - q0) x n, zeroed here) and
 * their dropped mass into @dropped (may be NULL). Checks the offsets (from the part's
 * first, non-decreasing, a row's count within its keys, the last = the part's pairs), the
 * keys (increasing within a row, inside the row: <= i for a causal head), the values and
 * the dropped masses (finite, in [0, 1]). */
static ScStatus
read_sparse (ScStore *store, const ScStoreRunShape *r, const ScStoreHeadLoc *loc, int layer, int head,
             uint32_t q0, uint32_t q1, float *out, float *dropped, ScError *err)
{
  const uint32_t n = loc->n;
  Handle h = { 0 };
  ScStatus status = SC_OK;
  uint8_t *offs = NULL, *keys = NULL, *vals = NULL, *drop = NULL;
  float *fv = NULL;

  memset (out, 0, (size_t) (q1 - q0) * n * sizeof *out);
  for (size_t k = 0; k < loc->n_parts && status == SC_OK; k++)
    {
      const ScStorePart *p = &loc->parts[k];
      const uint32_t a = q0 > p->row0 ? q0 : p->row0, b = q1 < p->row1 ? q1 : p->row1;
      const uint32_t rows = p->row1 - p->row0;
      uint8_t first[8], last[8];
      uint64_t base, lo, hi;

      if (a >= b)
        continue;
      free (offs);
      free (drop);
      if ((offs = malloc (8 * ((size_t) (b - a) + 1))) == NULL
          || (drop = malloc (4 * (size_t) (b - a))) == NULL)
        {
          status = sc_error_set (err, SC_ERR_NOMEM, "out of memory");
          break;
        }
      if ((status = sc_store_cell_read (store, r, loc, &h, "offsets", p->rowid, 8 * ((uint64_t) rows + 1),
                               0, 8, first, err)) != SC_OK
          || (status = sc_store_cell_read (store, r, loc, &h, "offsets", p->rowid,
                                  8 * ((uint64_t) rows + 1), 8 * (uint64_t) rows, 8, last, err))
               != SC_OK
          || (status = sc_store_cell_read (store, r, loc, &h, "offsets", p->rowid,
                                  8 * ((uint64_t) rows + 1), 8 * (uint64_t) (a - p->row0),
                                  8 * ((uint64_t) (b - a) + 1), offs, err)) != SC_OK
          || (status = sc_store_cell_read (store, r, loc, &h, "dropped", p->rowid, 4 * (uint64_t) rows,
                                  4 * (uint64_t) (a - p->row0), 4 * (uint64_t) (b - a), drop,
                                  err)) != SC_OK)
        break;
      base = get_le64 (first);
      if (get_le64 (last) < base || get_le64 (last) - base != p->n_pairs)
        {
          status = sc_store_bad_run (store, r->id, err, "attention_parts row %lld (layer %d head "
                                     "%d): its offsets span %llu pairs, its keys hold %llu",
                                     (long long) p->rowid, layer, head,
                                     (unsigned long long) (get_le64 (last) - base),
                                     (unsigned long long) p->n_pairs);
          break;
        }
      /* every offset read: from the part's first, non-decreasing, rows no longer than
       * their keys, inside the part's pairs */
      for (uint32_t i = a; i <= b && status == SC_OK; i++)
        {
          const uint64_t o = get_le64 (offs + 8 * (size_t) (i - a));
          const uint64_t prev = i > a ? get_le64 (offs + 8 * (size_t) (i - a - 1)) : base;
          /* offset i ends row i - 1, which has i keys (the sparse form is causal) */
          if (o < prev || o - base > p->n_pairs || (i > a && o - prev > (uint64_t) i))
            status = sc_store_bad_run (store, r->id, err, "attention_parts row %lld (layer %d "
                                       "head %d): offset of row %u is %llu, outside the part's "
                                       "pairs or out of order", (long long) p->rowid, layer,
                                       head, i, (unsigned long long) o);
        }
      if (status != SC_OK)
        break;
      lo = get_le64 (offs) - base;
      hi = get_le64 (offs + 8 * (size_t) (b - a)) - base;
      free (keys);
      free (vals);
      free (fv);
      keys = malloc (4 * (size_t) (hi - lo) + 1);
      vals = malloc (2 * (size_t) (hi - lo) + 1);
      fv = malloc (sizeof *fv * (size_t) (hi - lo) + 1);
      if (keys == NULL || vals == NULL || fv == NULL)
        {
          status = sc_error_set (err, SC_ERR_NOMEM, "out of memory");
          break;
        }
      if ((status = sc_store_cell_read (store, r, loc, &h, "keys", p->rowid, 4 * p->n_pairs, 4 * lo,
                               4 * (hi - lo), keys, err)) != SC_OK
          || (status = sc_store_cell_read (store, r, loc, &h, "data", p->rowid, 2 * p->n_pairs, 2 * lo,
                                  2 * (hi - lo), vals, err)) != SC_OK)
        break;
      {
        const size_t bad = sc_store_blob_first_bad (vals, (size_t) (hi - lo));
        if (bad < hi - lo)
          {
            uint32_t row = a;
            while (row + 1 < b && get_le64 (offs + 8 * (size_t) (row + 1 - a)) - base - lo <= bad)
              row++;
            status = sc_store_bad_value (store, r, loc, p, layer, head, base + lo + bad, row,
                                vals + 2 * bad, err);
            break;
          }
      }
      sc_store_f16_decode (vals, (size_t) (hi - lo), fv);
      for (uint32_t i = a; i < b && status == SC_OK; i++)
        {
          const uint64_t s = get_le64 (offs + 8 * (size_t) (i - a)) - base - lo;
          const uint64_t e = get_le64 (offs + 8 * (size_t) (i - a + 1)) - base - lo;
          float *row = out + (size_t) (i - q0) * n, d;
          int64_t prev_key = -1;

          for (uint64_t j = s; j < e; j++)
            {
              const uint32_t key = get_le32 (keys + 4 * j);
              if ((int64_t) key <= prev_key || key > i)
                {
                  status = sc_store_bad_run (store, r->id, err, "attention_parts row %lld (layer "
                                             "%d head %d): row %u keeps key %u, out of order or "
                                             "past the row's last key %u", (long long) p->rowid,
                                             layer, head, i, key, i);
                  break;
                }
              prev_key = key;
              row[key] = fv[j];
            }
          memcpy (&d, drop + 4 * (size_t) (i - a), sizeof d); /* little-endian hosts */
          if (status == SC_OK && !(d >= 0.0f && d <= 1.0f))
            status = sc_store_bad_run (store, r->id, err, "attention_parts row %lld (layer %d "
                                       "head %d): row %u dropped a mass of %g, not in [0, 1]",
                                       (long long) p->rowid, layer, head, i, (double) d);
          if (dropped != NULL)
            dropped[i - q0] = d;
        }
    }
  sc_store_cell_close (&h);
  free (offs);
  free (drop);
  free (keys);
  free (vals);
  free (fv);
  return status;
}

/* ------------------------------------------------------------------------------------ */
/* The public readers                                                                    */

ScStatus
sc_store_head_find (ScStore *store, int64_t run_id, int layer, int head, ScStoreRunShape *r, ScStoreHeadLoc *loc,
      ScError *err)
{
  ScStatus status = sc_store_run_shape (store, run_id, r, err);

  if (status == SC_OK)
    status = locate (store, r, layer, head, loc, err);
  return status;
}

ScStatus
sc_store_head_rows (ScStore *store, const ScStoreRunShape *r, const ScStoreHeadLoc *loc, int layer, int head,
           uint32_t q0, uint32_t q1, float *out, float *dropped, ScError *err)
{
  const bool causal = loc->layout == SC_STORE_LAYOUT_CAUSAL;
  uint8_t *buf;
  ScStatus status;

  if (loc->layout == SC_STORE_LAYOUT_SPARSE)
    return read_sparse (store, r, loc, layer, head, q0, q1, out, dropped, err);
  if (loc->layout == SC_STORE_LAYOUT_BAND)
    {
      if (dropped != NULL)
        memset (dropped, 0, (size_t) (q1 - q0) * sizeof *dropped);
      return sc_store_band_rows (store, r, loc, layer, head, q0, q1, out, err);
    }
  if ((buf = malloc (2 * dense_values (causal, loc->n, q0, q1))) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory reading rows %u..%u of a head of %u "
                         "tokens", q0, q1, loc->n);
  if ((status = read_dense (store, r, loc, layer, head, q0, q1, buf, err)) == SC_OK)
    {
      const uint8_t *src = buf;
      for (uint32_t i = q0; i < q1; i++)
        {
          const uint32_t len = causal ? i + 1 : loc->n;
          float *row = out + (size_t) (i - q0) * loc->n;
          sc_store_f16_decode (src, len, row);
          src += 2 * (size_t) len;
          memset (row + len, 0, (size_t) (loc->n - len) * sizeof *row);
          if (dropped != NULL)
            dropped[i - q0] = 0.0f;
        }
    }
  free (buf);
  return status;
}

void
sc_store_head_clear (ScStoreHead *head)
{
  if (head == NULL)
    return;
  free (head->probs);
  free (head->dropped);
  memset (head, 0, sizeof *head);
}

ScStatus
sc_store_read_head (ScStore *store, int64_t run_id, int layer, int head, ScStoreHead *out,
                    ScError *err)
{
  ScStoreRunShape r;
  ScStoreHeadLoc loc = { 0 };
  ScStatus status;
  bool own = false;
  int rc;

  memset (out, 0, sizeof *out);
  if ((rc = sc_store_read_begin (store, &own)) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "reading run %lld",
                                  (long long) run_id);
  if ((status = sc_store_head_find (store, run_id, layer, head, &r, &loc, err)) != SC_OK)
    goto out;
  {
    const size_t n = r.n_tokens;
    out->n_query = out->n_key = (uint32_t) n;
    out->causal = loc.layout != SC_STORE_LAYOUT_FULL;
    out->window = loc.window;
    if ((out->probs = malloc (n * n * sizeof (float))) == NULL
        || (loc.layout == SC_STORE_LAYOUT_SPARSE && (out->dropped = malloc (n * sizeof (float))) == NULL))
      {
        status = sc_error_set (err, SC_ERR_NOMEM, "out of memory reading a %zu x %zu head", n,
                               n);
        goto out;
      }
    status = sc_store_head_rows (store, &r, &loc, layer, head, 0, (uint32_t) n, out->probs, out->dropped,
                        err);
  }
out:
  sc_store_head_loc_clear (&loc);
  sc_store_read_end (store, own);
  if (status != SC_OK)
    sc_store_head_clear (out);
  return status;
}

ScStatus
sc_store_read_head_rows (ScStore *store, int64_t run_id, int layer, int head, uint32_t q0,
                         uint32_t q1, float *out, float *dropped, ScError *err)
{
  ScStoreRunShape r;
  ScStoreHeadLoc loc = { 0 };
  ScStatus status;
  bool own = false;
  int rc;

  if ((rc = sc_store_read_begin (store, &own)) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "reading run %lld",
                                  (long long) run_id);
  if ((status = sc_store_head_find (store, run_id, layer, head, &r, &loc, err)) != SC_OK)
    goto out;
  if (q0 >= q1 || q1 > r.n_tokens)
    {
      status = sc_error_set (err, SC_ERR_INVALID_ARG, "%s: run %lld has %u tokens; rows %u..%u "
                             "are not a block of them", store->path, (long long) run_id,
                             r.n_tokens, q0, q1);
      goto out;
    }
  status = sc_store_head_rows (store, &r, &loc, layer, head, q0, q1, out, dropped, err);
out:
  sc_store_head_loc_clear (&loc);
  sc_store_read_end (store, own);
  return status;
}

void
sc_store_head_f16_clear (ScStoreHeadF16 *h)
{
  if (h == NULL)
    return;
  free (h->values);
  memset (h, 0, sizeof *h);
}

ScStatus
sc_store_read_head_f16 (ScStore *store, int64_t run_id, int layer, int head,
                        ScStoreHeadF16 *out, ScError *err)
{
  ScStoreRunShape r;
  ScStoreHeadLoc loc = { 0 };
  ScStatus status;
  float *rows = NULL;
  bool own = false;
  int rc;

  memset (out, 0, sizeof *out);
  if ((rc = sc_store_read_begin (store, &own)) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "reading run %lld",
                                  (long long) run_id);
  if ((status = sc_store_head_find (store, run_id, layer, head, &r, &loc, err)) != SC_OK)
    goto out;
  out->n_query = out->n_key = r.n_tokens;
  out->causal = loc.layout != SC_STORE_LAYOUT_FULL;
  out->sparse = loc.layout == SC_STORE_LAYOUT_SPARSE;
  out->window = loc.window;
  out->n_values = dense_values (out->causal, r.n_tokens, 0, r.n_tokens);
  if ((out->values = malloc (out->n_values * sizeof *out->values)) == NULL)
    {
      status = sc_error_set (err, SC_ERR_NOMEM, "out of memory reading a head of %u tokens",
                             r.n_tokens);
      goto out;
    }
  if (loc.layout == SC_STORE_LAYOUT_CAUSAL || loc.layout == SC_STORE_LAYOUT_FULL)
    {
      status = read_dense (store, &r, &loc, layer, head, 0, r.n_tokens,
                           (uint8_t *) out->values, err);
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
      for (size_t i = 0; status == SC_OK && i < out->n_values; i++)
        {
          const uint8_t *b = (const uint8_t *) &out->values[i];
          out->values[i] = (uint16_t) (b[0] | b[1] << 8);
        }
#endif
      goto out;
    }
  /* Sparse or band: expand a block of rows at a time through float (exact: every value is
   * an fp16), then pack the lower triangle (zeros outside the band). */
  {
    const uint32_t n = r.n_tokens;
    const uint32_t step = SC_STORE_CHUNK_VALUES / n > 0 ? SC_STORE_CHUNK_VALUES / n : 1;
    uint16_t *dst = out->values;

    if ((rows = malloc ((size_t) step * n * sizeof *rows)) == NULL)
      {
        status = sc_error_set (err, SC_ERR_NOMEM, "out of memory");
        goto out;
      }
    for (uint32_t q0 = 0; q0 < n && status == SC_OK; q0 += step)
      {
        const uint32_t q1 = n - q0 < step ? n : q0 + step;
        status = sc_store_head_rows (store, &r, &loc, layer, head, q0, q1, rows, NULL, err);
        for (uint32_t i = q0; status == SC_OK && i < q1; i++)
          for (uint32_t j = 0; j <= i; j++)
            *dst++ = sc_fp32_to_fp16 (rows[(size_t) (i - q0) * n + j]);
      }
  }
out:
  free (rows);
  sc_store_head_loc_clear (&loc);
  sc_store_read_end (store, own);
  if (status != SC_OK)
    sc_store_head_f16_clear (out);
  return status;
}
