/* saccade-npz.h — NumPy's .npy and .npz files, written as a stream: arrays far larger than
 * memory (a whole run's attention) go out a block at a time.
 *
 * .npy (NumPy format 1.0, numpy/lib/format.py): the magic "\x93NUMPY", version 1.0, a
 * little-endian uint16 header length, a Python dict literal {'descr', 'fortran_order',
 * 'shape'} padded with spaces and a newline so the data starts at a multiple of 64 bytes,
 * then the data in C order. Version 1.0 limits the header to 65 535 bytes: every shape
 * written here fits.
 * .npz (numpy.savez): a ZIP archive of NAME.npy members, stored (method 0, as numpy.savez)
 * or deflated (method 8, raw deflate through zlib, as numpy.savez_compressed), with
 * ZIP64 records wherever a size or an offset passes 4 GiB (PKWARE APPNOTE 6.3, 4.5.3), so
 * a member may be any size. Members are CRC-32 checked (zlib's crc32); times are the DOS
 * epoch 1980-01-01 00:00, so the same export gives the same bytes. Stored is the default of
 * the exports: a 512-token run's attention deflates to ~30 % (the causal zeros and the
 * widened fp16's zero mantissa bits), but at 10-50 MB/s against the disk's hundreds
 * (docs/store.md, "Whole-run export").
 *
 * No Debian 12 library writes either format from C (libzip could hold the container, but it
 * builds the archive at zip_close and needs a callback source to stream a member; the
 * format is three record kinds), so this file writes them, and the tests read them back
 * with NumPy.
 *
 * Files are written beside their path and renamed over it on success: a failed or abandoned
 * export leaves no half file. A writer belongs to one thread.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _SaccadeNpzWriter SaccadeNpzWriter;

/* The .npy header (magic to newline) of an array of NumPy type @descr ("<f4", "|b1",
 * "<i4", "<U12") and C-order @shape (@ndim values, 0 <= @ndim <= 8); *@len receives its
 * length (a multiple of 64). Caller frees. */
guint8 *saccade_npy_header (const char *descr, const guint64 *shape, int ndim, gsize *len);

/* Starts writing @path: an .npz archive when @zip, else a single .npy (then exactly one
 * member is written and its name is ignored). NULL with @error set (G_IO_ERROR) when the
 * file beside @path cannot be created. */
SaccadeNpzWriter *saccade_npz_writer_new (const char *path, gboolean zip, GError **error);
/* The same, an archive's members deflated at zlib @level (1-9; 0: stored), as
 * numpy.savez_compressed writes them. */
SaccadeNpzWriter *saccade_npz_writer_new_full (const char *path, gboolean zip, int level,
                                               GError **error);
/* The same, with ZIP64 records for every size and offset from @zip64_from bytes on (clamped
 * to 1 .. 0xFFFFFFFF, where the format needs them). The records are valid for any value, so
 * a test (tests/app/app-write-npz.c) writes the records of a 4 GiB member without 4 GiB of
 * disk; everything else uses the format's own threshold through the functions above. */
SaccadeNpzWriter *saccade_npz_writer_new_zip64_from (const char *path, gboolean zip, int level,
                                                     guint64 zip64_from, GError **error);

/* Begins the member @name (".npy" is appended in an archive) of type @descr and @shape;
 * exactly the array's bytes (product of @shape x the type's size, @item_size) must follow
 * through saccade_npz_writer_data() before the next begin or close. */
gboolean saccade_npz_writer_begin (SaccadeNpzWriter *w, const char *name, const char *descr,
                                   gsize item_size, const guint64 *shape, int ndim,
                                   GError **error);
gboolean saccade_npz_writer_data (SaccadeNpzWriter *w, const void *data, gsize len,
                                  GError **error);

/* A whole member at once: begin + data. */
gboolean saccade_npz_writer_add (SaccadeNpzWriter *w, const char *name, const char *descr,
                                 gsize item_size, const guint64 *shape, int ndim,
                                 const void *data, GError **error);

/* Finishes the last member (checking its length), writes the archive's directory, syncs
 * and renames the file over @path. *@bytes (optional) receives the file's size. After a
 * failure the file beside @path is removed. */
gboolean saccade_npz_writer_close (SaccadeNpzWriter *w, guint64 *bytes, GError **error);

/* Frees @w; a writer not closed removes its file. NULL is a no-op. */
void saccade_npz_writer_free (SaccadeNpzWriter *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeNpzWriter, saccade_npz_writer_free)

G_END_DECLS
