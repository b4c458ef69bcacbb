/* saccade-export-arrays.c — whole-run arrays: `saccade export RUN --all` (see
 * saccade_export_run_arrays in saccade-export.h for the members). Pass 1 streams the
 * attention from the store one head at a time into the writer (app/core/saccade-npz.h);
 * pass 2 adds the tokens, the text and the metadata, which are small. Nothing here holds
 * more than one head and one block.
 */
#define G_LOG_DOMAIN "saccade-export"

#include "app/core/saccade-export-private.h"

#include <math.h>
#include <string.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-json.h"
#include "app/core/saccade-npz.h"

/* A <U array of @n strings (UTF-8, made valid), each padded to the longest; the item size
 * (4 x that length, at least 4: NumPy has no <U0) into *@item. Caller frees. */
static gunichar *
ucs4_strings (const char *const *s, const gsize *lens, gsize n, gsize *item)
{
  g_autofree gunichar **each = g_new0 (gunichar *, n + 1);
  g_autofree glong *len = g_new0 (glong, n + 1);
  glong longest = 1;
  gunichar *out;

  for (gsize i = 0; i < n; i++)
    {
      g_autofree char *valid = g_utf8_make_valid (s[i], lens != NULL ? (gssize) lens[i] : -1);
      each[i] = g_utf8_to_ucs4_fast (valid, -1, &len[i]);
      longest = MAX (longest, len[i]);
    }
  out = g_new0 (gunichar, (gsize) longest * MAX (n, 1));
  for (gsize i = 0; i < n; i++)
    {
      for (glong c = 0; c < len[i]; c++)
        out[i * (gsize) longest + (gsize) c] = GUINT32_TO_LE (each[i][c]);
      g_free (each[i]);
    }
  *item = (gsize) longest * 4;
  return out;
}

/* The .npz's metadata member: what the arrays are, as JSON. */
static char *
arrays_metadata (const SaccadeExportSource *src, const SaccadeExportRange *r, int stored,
                 int missing)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  saccade_json_string (b, "format", "saccade-run-npz");
  saccade_json_int (b, "version", 1);
  saccade_json_begin_object (b, "run");
  saccade_json_run (b, &src->info);
  json_builder_end_object (b);
  saccade_json_begin_object (b, "range");
  saccade_json_int (b, "q0", r->q0);
  saccade_json_int (b, "q1", r->q1);
  saccade_json_int (b, "k0", r->k0);
  saccade_json_int (b, "k1", r->k1);
  json_builder_end_object (b);
  saccade_json_string (b, "dtype_stored", "f16");
  saccade_json_string (b, "values",
                       "attention probabilities as the store holds them: IEEE fp16 (rounded "
                       "to nearest from the float32 the forward pass computed: within 2^-11 "
                       "relative, 2^-25 absolute below 2^-14), widened exactly to float32; "
                       "a row of n keys sums to 1 only within fp16 rounding (at most "
                       "n * 2^-12 off; docs/store.md has measured ranges). Causal heads are "
                       "0 above the diagonal; heads of a local layer (layer_windows > 0) are "
                       "also 0 left of their window: query i sees keys i - w + 1 .. i, the "
                       "other cells are masked, not attention. A head not stored is NaN (see "
                       "'stored').");
  /* A rounded run's values carry the error its form states (docs/store.md, "Schema v6"). */
  if (src->info.round_bits > 0 || src->info.zero_below > 0)
    saccade_json_string (b, "values_rounded",
                         "this run was stored in the rounded form ('rounded' in 'run'): each "
                         "value within max_relative_error of the fp16 above, values below "
                         "zero_below stored as 0; rows sum to 1 only within that");
  saccade_json_string (b, "layout", "attention[layer, head, query - q0, key - k0]");
  saccade_json_bool (b, "text_is_utf8",
                     g_utf8_validate_len (src->info.text, src->info.text_len, NULL));
  saccade_json_int (b, "heads_stored", stored);
  saccade_json_int (b, "heads_missing", missing);
  json_builder_end_object (b);
  return saccade_json_to_data (b, FALSE, NULL);
}

/* Pass 2 of saccade_export_run_arrays: every member after the attention. */
static gboolean
write_run_members (SaccadeNpzWriter *w, const SaccadeExportSource *src,
                   const SaccadeExportRange *r, const guint8 *stored_mask, int stored,
                   int missing, GError **error)
{
  const gsize n = (gsize) src->n;
  const guint64 shape_lh[2] = { (guint64) src->n_layers, (guint64) src->n_heads };
  guint64 shape[1];
  g_autofree gint32 *ints = g_new (gint32, MAX (n, 1));
  g_autofree gint64 *offsets = g_new (gint64, n + 1);
  g_autofree const char **pieces = g_new (const char *, n + 1);
  g_autofree gsize *lens = g_new (gsize, n + 1);
  g_autofree guint8 *bytes = NULL;
  g_autofree gunichar *u = NULL;
  g_autofree char *meta = NULL;
  gsize item = 0, total = 0;

  if (!saccade_npz_writer_add (w, "stored", "|b1", 1, shape_lh, 2, stored_mask, error))
    return FALSE;
  /* Each layer's attention window (0: global): a local layer's keys left of its window
   * are 0 in `attention`, masked like the upper triangle. */
  {
    g_autofree gint32 *win = g_new (gint32, MAX (src->n_layers, 1));
    for (int l = 0; l < src->n_layers; l++)
      win[l] = GINT32_TO_LE ((gint32) (src->run != NULL ? saccade_run_layer_window (src->run, l)
                                                        : sc_store_run_layer_window (&src->info,
                                                                                     l)));
    shape[0] = (guint64) src->n_layers;
    if (!saccade_npz_writer_add (w, "layer_windows", "<i4", 4, shape, 1, win, error))
      return FALSE;
  }
  /* Positions: the range's rows, its columns, every token. */
  {
    const int from[3] = { r->q0, r->k0, 0 }, to[3] = { r->q1, r->k1, (int) n };
    const char *names[3] = { "query_positions", "key_positions", "positions" };
    for (int a = 0; a < 3; a++)
      {
        for (int i = from[a]; i < to[a]; i++)
          ints[i - from[a]] = GINT32_TO_LE (i);
        shape[0] = (guint64) (to[a] - from[a]);
        if (!saccade_npz_writer_add (w, names[a], "<i4", 4, shape, 1, ints, error))
          return FALSE;
      }
  }
  shape[0] = n;
  for (gsize i = 0; i < n; i++)
    ints[i] = GINT32_TO_LE (src->tokens[i].id);
  if (!saccade_npz_writer_add (w, "token_ids", "<i4", 4, shape, 1, ints, error))
    return FALSE;
  /* The exact bytes, and their offsets. */
  offsets[0] = 0;
  for (gsize i = 0; i < n; i++)
    {
      total += src->tokens[i].len;
      offsets[i + 1] = (gint64) total;
    }
  bytes = g_malloc (MAX (total, 1));
  for (gsize i = 0; i < n; i++)
    if (src->tokens[i].len > 0)
      memcpy (bytes + offsets[i], src->tokens[i].piece, src->tokens[i].len);
  for (gsize i = 0; i <= n; i++)
    offsets[i] = GINT64_TO_LE (offsets[i]);
  shape[0] = total;
  if (!saccade_npz_writer_add (w, "token_bytes", "|u1", 1, shape, 1, bytes, error))
    return FALSE;
  shape[0] = n + 1;
  if (!saccade_npz_writer_add (w, "token_offsets", "<i8", 8, shape, 1, offsets, error))
    return FALSE;
  /* The pieces as text, and the labels. */
  for (gsize i = 0; i < n; i++)
    {
      pieces[i] = (const char *) src->tokens[i].piece;
      lens[i] = src->tokens[i].len;
    }
  shape[0] = n;
  {
    g_autofree char *descr = NULL;
    u = ucs4_strings (pieces, lens, n, &item);
    descr = g_strdup_printf ("<U%" G_GSIZE_FORMAT, item / 4);
    if (!saccade_npz_writer_add (w, "tokens", descr, item, shape, 1, u, error))
      return FALSE;
    g_clear_pointer (&u, g_free);
    g_clear_pointer (&descr, g_free);
    u = ucs4_strings ((const char *const *) src->labels, NULL, n, &item);
    descr = g_strdup_printf ("<U%" G_GSIZE_FORMAT, item / 4);
    if (!saccade_npz_writer_add (w, "token_labels", descr, item, shape, 1, u, error))
      return FALSE;
  }
  /* The text (valid UTF-8, and its exact bytes), and the metadata: 0-d arrays. */
  {
    const char *text = src->info.text;
    const gsize text_len = src->info.text_len;
    g_autofree char *descr = NULL;
    g_clear_pointer (&u, g_free);
    u = ucs4_strings (&text, &text_len, 1, &item);
    descr = g_strdup_printf ("<U%" G_GSIZE_FORMAT, item / 4);
    if (!saccade_npz_writer_add (w, "text", descr, item, NULL, 0, u, error))
      return FALSE;
    shape[0] = text_len;
    if (!saccade_npz_writer_add (w, "text_bytes", "|u1", 1, shape, 1,
                                 text_len > 0 ? text : "", error))
      return FALSE;
    meta = arrays_metadata (src, r, stored, missing);
    g_clear_pointer (&u, g_free);
    g_clear_pointer (&descr, g_free);
    u = ucs4_strings ((const char *const *) &meta, NULL, 1, &item);
    descr = g_strdup_printf ("<U%" G_GSIZE_FORMAT, item / 4);
    return saccade_npz_writer_add (w, "metadata", descr, item, NULL, 0, u, error);
  }
}

gboolean
saccade_export_run_arrays (SaccadeExportSource *src, const SaccadeExportRange *range,
                           gboolean npz, const char *path, SaccadeExportArrays *out,
                           GError **error)
{
  return saccade_export_run_arrays_full (src, range, npz, 0, path, out, error);
}

gboolean
saccade_export_run_arrays_full (SaccadeExportSource *src, const SaccadeExportRange *range,
                                gboolean npz, int level, const char *path,
                                SaccadeExportArrays *out, GError **error)
{
  g_autoptr (SaccadeNpzWriter) w = NULL;
  g_autofree guint8 *stored_mask = NULL;
  g_autofree float *block = NULL;
  SaccadeExportRange r;
  guint64 shape[4];
  gsize nq, nk;
  int stored = 0, missing = 0;

  if (src->store == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           "whole-run arrays are written from the store, head by head");
      return FALSE;
    }
  if (!saccade_export_range_resolve (src, range, &r, error))
    return FALSE;
  nq = (gsize) (r.q1 - r.q0);
  nk = (gsize) (r.k1 - r.k0);
  shape[0] = (guint64) src->n_layers;
  shape[1] = (guint64) src->n_heads;
  shape[2] = nq;
  shape[3] = nk;
  if ((block = g_try_new (float, nq * nk)) == NULL)
    {
      g_set_error (error, SACCADE_ERROR, SC_ERR_NOMEM, "out of memory for one %" G_GSIZE_FORMAT
                   " x %" G_GSIZE_FORMAT " head", nq, nk);
      return FALSE;
    }
  stored_mask = g_new0 (guint8, (gsize) src->n_layers * src->n_heads);
  if ((w = saccade_npz_writer_new_full (path, npz, level, error)) == NULL
      || !saccade_npz_writer_begin (w, "attention", "<f4", 4, shape, 4, error))
    return FALSE;
  /* Pass 1: the attention, one head at a time (read whole, cut, written). */
  for (int l = 0; l < src->n_layers; l++)
    for (int h = 0; h < src->n_heads; h++)
      {
        ScStoreHead head = { 0 };
        ScError err = { 0 };
        ScStatus st = sc_store_read_head (src->store, src->run_id, l, h, &head, &err);

        if (st == SC_ERR_NOT_FOUND)
          {
            /* A capture of chosen heads: this one was not kept. */
            for (gsize k = 0; k < nq * nk; k++)
              block[k] = NAN;
            missing++;
          }
        else if (st != SC_OK)
          {
            saccade_set_error_from_sc (error, &err);
            return FALSE;
          }
        else if (head.n_query != (guint32) src->n || head.n_key != (guint32) src->n)
          {
            g_set_error (error, SACCADE_ERROR, SC_ERR_FORMAT, "run %" G_GINT64_FORMAT
                         " layer %d head %d: %u x %u, not %d x %d", src->run_id, l, h,
                         head.n_query, head.n_key, src->n, src->n);
            sc_store_head_clear (&head);
            return FALSE;
          }
        else
          {
            saccade_export_cut_block (head.probs, src->n, &r, block);
            sc_store_head_clear (&head);
            stored_mask[(gsize) l * src->n_heads + h] = 1;
            stored++;
          }
#if G_BYTE_ORDER != G_LITTLE_ENDIAN
        for (gsize k = 0; k < nq * nk; k++)
          {
            guint32 bits;
            memcpy (&bits, &block[k], 4);
            bits = GUINT32_TO_LE (bits);
            memcpy (&block[k], &bits, 4);
          }
#endif
        if (!saccade_npz_writer_data (w, block, nq * nk * sizeof (float), error))
          return FALSE;
      }
  if (stored == 0)
    {
      g_set_error (error, SACCADE_ERROR, SC_ERR_NOT_FOUND, "run %" G_GINT64_FORMAT
                   " has no stored heads (was it deleted while exporting?)", src->run_id);
      return FALSE;
    }
  /* Pass 2: tokens, text and metadata (.npz only). */
  g_clear_pointer (&block, g_free);
  if (npz && !write_run_members (w, src, &r, stored_mask, stored, missing, error))
    return FALSE;
  if (out != NULL)
    *out = (SaccadeExportArrays) { .n_query = (guint) nq, .n_key = (guint) nk,
                                   .heads_stored = stored, .heads_missing = missing };
  return saccade_npz_writer_close (w, out != NULL ? &out->bytes : NULL, error);
}
