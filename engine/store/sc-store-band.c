/* sc-store-band.c — heads of sliding-window layers stored as their band (schema v4), and
 * the run's record of which layers are local.
 *
 * A local layer of window w (sc_model_layer_window: Gemma 3's 512) lets query i see keys
 * i - w + 1..i only; the attention op writes exact zeros for the others. Stored causal, a
 * head of n tokens would keep n (n + 1) / 2 values, most of them those zeros; stored as its
 * band, row i keeps keys max (0, i - w + 1)..i — min (i + 1, w) fp16 values —, so about
 * n w in all: at n = 2,048 and w = 512, 917,760 values instead of 2,098,176 (44 %).
 *
 * The writer stores a head as a band when its layer has a window 0 < w < n and the head is
 * causal with exact zeros left of the band (checked per head, as the causal layout is: a
 * forward pass that does not honour the window is stored causal, its values intact). The
 * band goes into attention_bands in row blocks [row0, row1) of at most the BLOB budget,
 * one row when it fits. Each local layer's window is a layer_windows row of the run, so a
 * reader knows which layers are local even for runs too short to need a band.
 *
 * Reading checks every number before it is used: rows 0..n covered in order, the window
 * the same in every part, 0 < w < n and equal to the layer's layer_windows row, each BLOB
 * exactly its rows' length, every value a probability. Readers get the head as the dense
 * view the other layouts give (zeros outside the band) with ScStoreHead.window saying
 * which cells are masked.
 *
 * What it is not: the other layouts (sc-store-heads.c, sc-store-parts.c), the writer
 * thread (sc-store-writer.c).
 */
#include "store/sc-store-private.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Values before row @r: r (r + 1) / 2 up to the window, then w a row. */
static inline uint64_t
before (uint32_t w, uint32_t r)
{
  if (r <= w)
    return (uint64_t) r * (r + 1) / 2;
  return (uint64_t) w * (w + 1) / 2 + (uint64_t) (r - w) * w;
}

uint64_t
sc_store_band_values (uint32_t w, uint32_t a, uint32_t b)
{
  return before (w, b) - before (w, a);
}

/* The first key of row @i's band. */
static inline uint32_t
band_start (uint32_t w, uint32_t i)
{
  return i + 1 > w ? i + 1 - w : 0;
}

bool
sc_store_head_in_band (const float *probs, uint32_t n, uint32_t w)
{
  for (uint32_t i = w; i < n; i++)
    {
      const float *row = probs + (size_t) i * n;
      uint32_t any = 0;
      /* as sc_store_head_is_causal: OR the bits without the sign, test once a row */
      for (uint32_t j = 0; j < band_start (w, i); j++)
        {
          uint32_t bits;
          memcpy (&bits, &row[j], sizeof bits);
          any |= bits & 0x7fffffffu;
        }
      if (any != 0)
        return false;
    }
  return true;
}

void
sc_store_band_pack (const float *probs, uint32_t n, uint32_t w, uint8_t *out)
{
  for (uint32_t i = 0; i < n; i++)
    {
      const uint32_t s = band_start (w, i), len = i + 1 - s;
      sc_store_f16_encode (probs + (size_t) i * n + s, len, out);
      out += 2 * (size_t) len;
    }
}

void
sc_store_band_unpack (const uint8_t *blob, uint32_t n, uint32_t w, uint32_t q0, uint32_t q1,
                      float *out)
{
  for (uint32_t i = q0; i < q1; i++)
    {
      const uint32_t s = band_start (w, i), len = i + 1 - s;
      float *row = out + (size_t) (i - q0) * n;
      memset (row, 0, (size_t) s * sizeof *row);
      sc_store_f16_decode (blob, len, row + s);
      memset (row + i + 1, 0, (size_t) (n - i - 1) * sizeof *row);
      blob += 2 * (size_t) len;
    }
}

/* ------------------------------------------------------------------------------------ */
/* Writing                                                                               */

int
sc_store_windows_insert (sqlite3 *db, int64_t run_id, const uint32_t *windows,
                         uint32_t n_layers)
{
  sqlite3_stmt *st = NULL;
  int rc = SQLITE_DONE;

  for (uint32_t l = 0; l < n_layers && rc == SQLITE_DONE; l++)
    {
      if (windows[l] == 0)
        continue;
      if (st == NULL && (rc = sqlite3_prepare_v2 (db, "INSERT INTO layer_windows (run_id, layer, "
                                                      "size) VALUES (?,?,?)", -1, &st, NULL))
                          != SQLITE_OK)
        return rc;
      sqlite3_bind_int64 (st, 1, run_id);
      sqlite3_bind_int64 (st, 2, l);
      sqlite3_bind_int64 (st, 3, windows[l]);
      rc = sqlite3_step (st);
      sqlite3_reset (st);
    }
  sqlite3_finalize (st);
  return rc;
}

ScStatus
sc_store_band_insert (sqlite3 *db, const char *path, int64_t run_id, const ScStoreBlobHead *b,
                      uint64_t budget, ScError *err)
{
  const uint32_t n = b->n, w = b->window;
  sqlite3_stmt *st = NULL;
  uint32_t r0 = 0;
  int rc;

  if ((rc = sqlite3_prepare_v2 (db, "INSERT INTO attention_bands (run_id, layer, head, row0, "
                                    "row1, n_query, window_size, dtype, data) "
                                    "VALUES (?,?,?,?,?,?,?,'f16',?)", -1, &st, NULL))
      != SQLITE_OK)
    return sc_store_sqlite_error (err, db, rc, path, "storing layer %d head %d of a new run",
                                  b->layer, b->head);
  while (r0 < n)
    {
      uint32_t r1 = r0 + 1;
      if (2 * sc_store_band_values (w, r0, r1) > budget)
        {
          sqlite3_finalize (st);
          return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: row %u of layer %d head %d needs "
                               "%llu bytes, more than one BLOB may hold here (%llu)", path, r0,
                               b->layer, b->head,
                               (unsigned long long) (2 * sc_store_band_values (w, r0, r1)),
                               (unsigned long long) budget);
        }
      /* the whole rest when it fits (the common case), else as many rows as fit: a row
       * holds at most w values, so the block is found by division past the window */
      if (2 * sc_store_band_values (w, r0, n) <= budget)
        r1 = n;
      else
        while (r1 < n && 2 * sc_store_band_values (w, r0, r1 + 1) <= budget)
          r1++;
      sqlite3_bind_int64 (st, 1, run_id);
      sqlite3_bind_int (st, 2, b->layer);
      sqlite3_bind_int (st, 3, b->head);
      sqlite3_bind_int64 (st, 4, r0);
      sqlite3_bind_int64 (st, 5, r1);
      sqlite3_bind_int64 (st, 6, n);
      sqlite3_bind_int64 (st, 7, w);
      /* SQLITE_STATIC: the slot stays the writer's until the step has copied it */
      sqlite3_bind_blob64 (st, 8, b->buf + 2 * sc_store_band_values (w, 0, r0),
                           2 * sc_store_band_values (w, r0, r1), SQLITE_STATIC);
      rc = sqlite3_step (st);
      sqlite3_reset (st);
      sqlite3_clear_bindings (st);
      if (rc != SQLITE_DONE)
        {
          ScStatus s = sc_store_sqlite_error (err, db, rc, path, "storing rows %u..%u of layer "
                                              "%d head %d of a new run", r0, r1, b->layer,
                                              b->head);
          sqlite3_finalize (st);
          return s;
        }
      r0 = r1;
    }
  sqlite3_finalize (st);
  return SC_OK;
}

/* ------------------------------------------------------------------------------------ */
/* Reading                                                                               */

ScStatus
sc_store_load_windows (ScStore *store, const ScStoreRunShape *r, uint32_t **out, ScError *err)
{
  sqlite3_stmt *st = NULL;
  uint32_t *win = NULL;
  ScStatus status = SC_OK;
  char val[96];
  int rc;

  *out = NULL;
  if (store->schema_version < 4)
    return SC_OK;
  if ((rc = sqlite3_prepare_v2 (store->db, "SELECT layer, size FROM layer_windows "
                                           "WHERE run_id = ? ORDER BY layer", -1, &st, NULL))
      != SQLITE_OK)
    goto db_error;
  sqlite3_bind_int64 (st, 1, r->id);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      int64_t layer = -1, size = 0;
      if (!sc_store_int_in (st, 0, 0, (int64_t) r->n_layers - 1, &layer))
        {
          sc_store_describe_value (st, 0, val, sizeof val);
          status = sc_store_bad_run (store, r->id, err, "layer_windows has a row for layer %s, "
                                     "outside the model's %u layers", val, r->n_layers);
          goto out;
        }
      if (!sc_store_int_in (st, 1, 1, INT32_MAX, &size))
        {
          sc_store_describe_value (st, 1, val, sizeof val);
          status = sc_store_bad_run (store, r->id, err, "layer_windows: layer %lld has a window "
                                     "of %s tokens, not an integer in 1..%d", (long long) layer,
                                     val, INT32_MAX);
          goto out;
        }
      if (win == NULL && (win = calloc (r->n_layers, sizeof *win)) == NULL)
        {
          status = sc_error_set (err, SC_ERR_NOMEM, "out of memory");
          goto out;
        }
      /* the primary key makes a layer unique; a file whose key was bypassed is refused */
      if (win[layer] != 0)
        {
          status = sc_store_bad_run (store, r->id, err, "layer_windows has two rows for layer "
                                     "%lld", (long long) layer);
          goto out;
        }
      win[layer] = (uint32_t) size;
    }
  if (rc != SQLITE_DONE)
    goto db_error;
  *out = win;
  win = NULL;
  goto out;

db_error:
  status = sc_store_sqlite_error (err, store->db, rc, store->path, "reading the layer windows "
                                  "of run %lld", (long long) r->id);
out:
  free (win);
  sqlite3_finalize (st);
  return status;
}

/* The window run @r records for @layer (0: none). */
static ScStatus
layer_window (ScStore *store, const ScStoreRunShape *r, int layer, int64_t *w, ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStatus status = SC_OK;
  char val[96];
  int rc;

  *w = 0;
  if ((rc = sqlite3_prepare_v2 (store->db, "SELECT size FROM layer_windows WHERE run_id = ? "
                                           "AND layer = ?", -1, &st, NULL)) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "reading the window of "
                                  "run %lld layer %d", (long long) r->id, layer);
  sqlite3_bind_int64 (st, 1, r->id);
  sqlite3_bind_int (st, 2, layer);
  if ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      if (!sc_store_int_in (st, 0, 1, INT32_MAX, w))
        {
          sc_store_describe_value (st, 0, val, sizeof val);
          status = sc_store_bad_run (store, r->id, err, "layer_windows: layer %d has a window "
                                     "of %s tokens, not an integer in 1..%d", layer, val,
                                     INT32_MAX);
        }
    }
  else if (rc != SQLITE_DONE)
    status = sc_store_sqlite_error (err, store->db, rc, store->path, "reading the window of "
                                    "run %lld layer %d", (long long) r->id, layer);
  sqlite3_finalize (st);
  return status;
}

/* The query's columns; id, row0, row1 first, where sc_store_head_loc_check_rows reads them. */
enum { B_ID, B_ROW0, B_ROW1, B_NQ, B_WIN, B_DTYPE, B_DATA_T, B_DATA_L };

/* One attention_bands row of the head being located: it starts where the previous ended,
 * lies inside the run, has the head's window and a BLOB of exactly its rows' length. */
static ScStatus
check_band_row (ScStore *store, sqlite3_stmt *st, const ScStoreRunShape *r, int layer, int head,
                int64_t layer_w, ScStoreHeadLoc *loc, ScStorePart *p, ScError *err)
{
  const uint32_t n = r->n_tokens;
  const char *data_t = (const char *) sqlite3_column_text (st, B_DATA_T);
  int64_t v = 0, w = 0;
  ScStatus status;
  char val[96];

  if ((status = sc_store_head_loc_check_rows (store, st, r, layer, head, loc, p, err)) != SC_OK)
    return status;
  if (!sc_store_int_in (st, B_NQ, n, n, &v))
    {
      sc_store_describe_value (st, B_NQ, val, sizeof val);
      return sc_store_bad_run (store, r->id, err, "attention_bands row %lld (layer %d head %d): "
                               "n_query is %s, but the run has %u tokens", (long long) p->rowid,
                               layer, head, val, n);
    }
  if (!sc_store_int_in (st, B_WIN, 1, (int64_t) n - 1, &w))
    {
      sc_store_describe_value (st, B_WIN, val, sizeof val);
      return sc_store_bad_run (store, r->id, err, "attention_bands row %lld (layer %d head %d): "
                               "window_size is %s; a band of a %u-token run has a window of "
                               "1..%u tokens", (long long) p->rowid, layer, head, val, n, n - 1);
    }
  if (w != layer_w || (loc->n_parts > 0 && (uint32_t) w != loc->window))
    return sc_store_bad_run (store, r->id, err, "attention_bands row %lld (layer %d head %d): "
                             "window_size is %lld, but layer %d's window is %lld%s",
                             (long long) p->rowid, layer, head, (long long) w, layer,
                             (long long) (loc->n_parts > 0 ? loc->window : layer_w),
                             loc->n_parts > 0 ? " in the head's other parts"
                             : layer_w == 0 ? " (layer_windows has no row: a global layer)"
                                            : " (layer_windows)");
  if ((status = sc_store_head_loc_check_f16 (store, st, B_DTYPE, r, layer, head, loc, p->rowid,
                                             err)) != SC_OK)
    return status;
  {
    const int64_t want = 2 * (int64_t) sc_store_band_values ((uint32_t) w, p->row0, p->row1);
    if (data_t == NULL || strcmp (data_t, "blob") != 0
        || sqlite3_column_int64 (st, B_DATA_L) != want)
      return sc_store_bad_run (store, r->id, err, "attention_bands row %lld (layer %d head %d): "
                               "data is %s of %lld bytes; rows %lld..%lld of a band of window "
                               "%lld have %lld", (long long) p->rowid, layer, head,
                               data_t != NULL ? data_t : "?",
                               (long long) sqlite3_column_int64 (st, B_DATA_L),
                               (long long) p->row0, (long long) p->row1, (long long) w,
                               (long long) want);
  }
  loc->window = (uint32_t) w;
  return SC_OK;
}

ScStatus
sc_store_band_locate (ScStore *store, const ScStoreRunShape *r, int layer, int head,
                      ScStoreHeadLoc *loc, ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStatus status = SC_OK;
  int64_t layer_w = 0;
  size_t cap = 0;
  int rc;

  if ((rc = sqlite3_prepare_v2 (store->db,
                                "SELECT id, row0, row1, n_query, window_size, dtype, "
                                "typeof (data), length (data) FROM attention_bands "
                                "WHERE run_id = ?1 AND layer = ?2 AND head = ?3 ORDER BY row0",
                                -1, &st, NULL)) != SQLITE_OK)
    goto db_error;
  sqlite3_bind_int64 (st, 1, r->id);
  sqlite3_bind_int (st, 2, layer);
  sqlite3_bind_int (st, 3, head);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      ScStorePart p;
      if (loc->n_parts == 0)
        {
          if ((status = layer_window (store, r, layer, &layer_w, err)) != SC_OK)
            goto out;
          loc->table = "attention_bands";
          loc->layout = SC_STORE_LAYOUT_BAND;
          loc->n = r->n_tokens;
        }
      if ((status = sc_store_head_loc_check_more (store, r, layer, head, loc, err)) != SC_OK
          || (status = check_band_row (store, st, r, layer, head, layer_w, loc, &p, err))
                 != SC_OK
          || (status = sc_store_head_loc_push (loc, &cap, &p, err)) != SC_OK)
        goto out;
    }
  if (rc != SQLITE_DONE)
    goto db_error;
  status = sc_store_head_loc_check_end (store, r, layer, head, loc, err);
  goto out;

db_error:
  status = sc_store_sqlite_error (err, store->db, rc, store->path,
                                  "reading run %lld layer %d head %d", (long long) r->id, layer,
                                  head);
out:
  sqlite3_finalize (st);
  return status;
}

ScStatus
sc_store_band_rows (ScStore *store, const ScStoreRunShape *r, const ScStoreHeadLoc *loc,
                    int layer, int head, uint32_t q0, uint32_t q1, float *out, ScError *err)
{
  const uint32_t w = loc->window, n = loc->n;
  ScStoreCellHandle h = { 0 };
  ScStatus status = SC_OK;
  uint8_t *buf;

  if ((buf = malloc (2 * sc_store_band_values (w, q0, q1) + 1)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory reading rows %u..%u of a head of %u "
                         "tokens", q0, q1, n);
  for (size_t k = 0; k < loc->n_parts && status == SC_OK; k++)
    {
      const ScStorePart *p = &loc->parts[k];
      const uint32_t a = q0 > p->row0 ? q0 : p->row0, b = q1 < p->row1 ? q1 : p->row1;
      if (a >= b)
        continue;
      const uint64_t cell = 2 * sc_store_band_values (w, p->row0, p->row1);
      const uint64_t at = 2 * sc_store_band_values (w, p->row0, a);
      const uint64_t len = 2 * sc_store_band_values (w, a, b);
      uint8_t *dst = buf + 2 * sc_store_band_values (w, q0, a);
      size_t bad;

      status = sc_store_cell_read (store, r, loc, &h, "data", p->rowid, cell, at, len, dst, err);
      if (status == SC_OK && (bad = sc_store_blob_first_bad (dst, len / 2)) < len / 2)
        {
          uint32_t row = a;
          while (row + 1 < b && sc_store_band_values (w, a, row + 1) <= bad)
            row++;
          status = sc_store_bad_value (store, r, loc, p, layer, head,
                                       sc_store_band_values (w, 0, a) + bad, row, dst + 2 * bad,
                                       err);
        }
    }
  sc_store_cell_close (&h);
  if (status == SC_OK)
    sc_store_band_unpack (buf, n, w, q0, q1, out);
  free (buf);
  return status;
}
