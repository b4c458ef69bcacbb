/* saccade-npz.c — the streaming .npy/.npz writer (see saccade-npz.h).
 *
 * An archive is written in one pass, in this order (all integers little-endian):
 *   1. per member: a local file header (signature 0x04034b50) with the CRC-32 left 0, the
 *      name, a ZIP64 extra field (id 0x0001: both sizes) when the member or its offset
 *      passes 0xFFFFFFFF, then the .npy bytes; once they are written, the CRC is patched
 *      into the local header (the file is seekable: we made it);
 *   2. the central directory: one header per member (0x02014b50), the same fields plus the
 *      member's offset, with a ZIP64 extra field holding just the values that did not fit;
 *   3. when any size, offset or count did not fit: the ZIP64 end of central directory record
 *      (0x06064b50) and its locator (0x07064b50); then the end of central directory record
 *      (0x06054b50), its overflowing fields set to 0xFFFF / 0xFFFFFFFF.
 * Sizes are known before a member starts (shape x item size), so the local header is right
 * from the start; only the CRC waits. A .npy file is a lone member's bytes.
 */
#define G_LOG_DOMAIN "saccade-export"

#include "app/core/saccade-npz.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define ZIP_MAX32 0xFFFFFFFFu
#define ZIP_MAX16 0xFFFFu
#define ZIP_VERSION 45       /* 4.5: ZIP64 */
#define ZIP_DOS_DATE 0x0021  /* 1980-01-01: (year - 1980) << 9 | month << 5 | day */
#define ZBUF (1u << 20)      /* deflate output buffer: one write call per MiB */

typedef struct {
  char *name;
  guint64 offset;            /* of its local header */
  guint64 size;              /* of its .npy bytes */
  guint64 csize;             /* as written: = size when stored, else deflate's output */
  gboolean z64;              /* its local header has the ZIP64 extra field */
  guint32 crc;
} Member;

struct _SaccadeNpzWriter
{
  char *path, *tmp_path;
  FILE *f;
  gboolean zip, closed, open_member;
  int level;                 /* deflate level, 0: stored */
  z_stream z;
  gboolean z_live;           /* @z is initialised */
  guint8 *zbuf;              /* deflate's output, ZBUF bytes */
  guint64 max32;             /* sizes and offsets from this one on take ZIP64 fields:
                              * 0xFFFFFFFF, or less in tests */
  GArray *members;           /* Member */
  guint64 at;                /* bytes written so far */
  guint64 left;              /* bytes the open member still expects */
  Member cur;
};

guint8 *
saccade_npy_header (const char *descr, const guint64 *shape, int ndim, gsize *len)
{
  static const char magic[] = "\x93NUMPY\x01\x00";
  const gsize prefix = sizeof magic - 1 + 2;
  GString *dict = g_string_new (NULL);
  gsize header, pad;
  guint8 *out;

  g_return_val_if_fail (ndim >= 0 && ndim <= 8, NULL);
  g_string_append_printf (dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int i = 0; i < ndim; i++)
    g_string_append_printf (dict, "%" G_GUINT64_FORMAT "%s", shape[i],
                            ndim == 1 || i + 1 < ndim ? ", " : "");
  g_string_append (dict, "), }");
  header = dict->len + 1; /* with the newline */
  pad = (64 - (prefix + header) % 64) % 64;
  header += pad;
  *len = prefix + header;
  out = g_malloc (*len);
  memcpy (out, magic, sizeof magic - 1);
  out[8] = (guint8) (header & 0xff);
  out[9] = (guint8) (header >> 8);
  memcpy (out + prefix, dict->str, dict->len);
  memset (out + prefix + dict->len, ' ', pad);
  out[*len - 1] = '\n';
  g_string_free (dict, TRUE);
  return out;
}

/* ------------------------------------------------------------------------------------ */
/* Bytes out                                                                             */

static gboolean
fail_errno (SaccadeNpzWriter *w, const char *what, GError **error)
{
  int e = errno;
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (e), "%s %s: %s", what, w->path,
               g_strerror (e));
  return FALSE;
}

static gboolean
put (SaccadeNpzWriter *w, const void *data, gsize len, GError **error)
{
  if (len > 0 && fwrite (data, 1, len, w->f) != len)
    return fail_errno (w, "writing", error);
  w->at += len;
  return TRUE;
}

static void
le16 (GByteArray *b, guint v)
{
  guint8 p[2] = { (guint8) v, (guint8) (v >> 8) };
  g_byte_array_append (b, p, 2);
}

static void
le32 (GByteArray *b, guint32 v)
{
  guint8 p[4] = { (guint8) v, (guint8) (v >> 8), (guint8) (v >> 16), (guint8) (v >> 24) };
  g_byte_array_append (b, p, 4);
}

static void
le64 (GByteArray *b, guint64 v)
{
  le32 (b, (guint32) v);
  le32 (b, (guint32) (v >> 32));
}

static gboolean
put_bytes (SaccadeNpzWriter *w, GByteArray *b, GError **error)
{
  gboolean ok = put (w, b->data, b->len, error);
  g_byte_array_unref (b);
  return ok;
}

/* ------------------------------------------------------------------------------------ */
/* The writer                                                                            */

SaccadeNpzWriter *
saccade_npz_writer_new (const char *path, gboolean zip, GError **error)
{
  return saccade_npz_writer_new_full (path, zip, 0, error);
}

SaccadeNpzWriter *
saccade_npz_writer_new_full (const char *path, gboolean zip, int level, GError **error)
{
  return saccade_npz_writer_new_zip64_from (path, zip, level, ZIP_MAX32, error);
}

SaccadeNpzWriter *
saccade_npz_writer_new_zip64_from (const char *path, gboolean zip, int level,
                                   guint64 zip64_from, GError **error)
{
  g_autoptr (SaccadeNpzWriter) w = g_new0 (SaccadeNpzWriter, 1);
  int fd;

  w->path = g_strdup (path);
  w->tmp_path = g_strdup_printf ("%s.XXXXXX", path);
  w->zip = zip;
  w->level = zip ? CLAMP (level, 0, 9) : 0;
  w->max32 = CLAMP (zip64_from, 1, ZIP_MAX32);
  w->members = g_array_new (FALSE, TRUE, sizeof (Member));
  /* 0666 as open() gives a new file (the umask applies), not mkstemp's 0600. */
  if ((fd = g_mkstemp_full (w->tmp_path, O_RDWR | O_CLOEXEC, 0666)) < 0)
    {
      int e = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (e), "cannot create a file beside "
                   "%s: %s", path, g_strerror (e));
      g_clear_pointer (&w->tmp_path, g_free);
      return NULL;
    }
  if ((w->f = fdopen (fd, "w+b")) == NULL)
    {
      fail_errno (w, "opening", error);
      close (fd);
      return NULL;
    }
  /* Members are written in big blocks already; a larger buffer halves the write calls. */
  setvbuf (w->f, NULL, _IOFBF, 1 << 20);
  return g_steal_pointer (&w);
}

/* The local header of @m (@size known, CRC as @m says). */
static GByteArray *
local_header (const Member *m, guint method)
{
  GByteArray *b = g_byte_array_new ();
  gsize name_len = strlen (m->name);

  le32 (b, 0x04034b50);
  le16 (b, ZIP_VERSION);
  le16 (b, 0);                         /* flags */
  le16 (b, method);                    /* 0 stored, 8 deflated */
  le16 (b, 0);                         /* time 00:00 */
  le16 (b, ZIP_DOS_DATE);
  le32 (b, m->crc);                    /* offset 14: patched by end_member */
  le32 (b, m->z64 ? ZIP_MAX32 : (guint32) m->csize);
  le32 (b, m->z64 ? ZIP_MAX32 : (guint32) m->size);
  le16 (b, (guint) name_len);
  le16 (b, m->z64 ? 20 : 0);
  g_byte_array_append (b, (const guint8 *) m->name, (guint) name_len);
  if (m->z64)
    {
      le16 (b, 0x0001);
      le16 (b, 16);
      le64 (b, m->size);               /* uncompressed first (APPNOTE 4.5.3) */
      le64 (b, m->csize);
    }
  return b;
}

static gboolean deflate_run (SaccadeNpzWriter *w, int flush, GError **error);

/* Ends the open member: checks its length, rewrites its local header with the CRC (and
 * the compressed size) now known. */
static gboolean
end_member (SaccadeNpzWriter *w, GError **error)
{
  if (!w->open_member)
    return TRUE;
  w->open_member = FALSE;
  if (w->left != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: member %s ended %"
                   G_GUINT64_FORMAT " bytes short", w->path, w->cur.name, w->left);
      return FALSE;
    }
  if (w->level > 0 && !deflate_run (w, Z_FINISH, error))
    return FALSE;
  if (w->zip)
    {
      /* The header again, now with the CRC and the compressed size, over the first. */
      GByteArray *b = local_header (&w->cur, w->level > 0 ? 8 : 0);
      gboolean ok = fseeko (w->f, (off_t) w->cur.offset, SEEK_SET) == 0
                    && fwrite (b->data, 1, b->len, w->f) == b->len
                    && fseeko (w->f, (off_t) w->at, SEEK_SET) == 0;
      g_byte_array_unref (b);
      if (!ok)
        return fail_errno (w, "writing", error);
    }
  g_array_append_val (w->members, w->cur);
  memset (&w->cur, 0, sizeof w->cur);
  return TRUE;
}

gboolean
saccade_npz_writer_begin (SaccadeNpzWriter *w, const char *name, const char *descr,
                          gsize item_size, const guint64 *shape, int ndim, GError **error)
{
  g_autofree guint8 *header = NULL;
  gsize header_len = 0;
  guint64 count = 1;

  g_return_val_if_fail (!w->closed, FALSE);
  if (!end_member (w, error))
    return FALSE;
  if (!w->zip && w->members->len > 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "%s: a .npy file holds one array", w->path);
      return FALSE;
    }
  for (int i = 0; i < ndim; i++)
    if (!g_uint64_checked_mul (&count, count, shape[i]))
      count = G_MAXUINT64;
  if (!g_uint64_checked_mul (&count, count, item_size))
    count = G_MAXUINT64;
  if (count == G_MAXUINT64)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "%s: array %s is too large", w->path, name);
      return FALSE;
    }
  header = saccade_npy_header (descr, shape, ndim, &header_len);
  w->cur.name = g_strdup_printf ("%s.npy", name);
  w->cur.offset = w->at;
  w->cur.size = header_len + count;
  w->cur.crc = (guint32) crc32 (0L, Z_NULL, 0);
  w->cur.csize = w->cur.size;
  w->open_member = TRUE;
  w->left = w->cur.size;
  if (w->level > 0)
    {
      if (!w->z_live)
        {
          if (deflateInit2 (&w->z, w->level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY)
              != Z_OK)
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: deflate: %s", w->path,
                           w->z.msg != NULL ? w->z.msg : "cannot start");
              return FALSE;
            }
          w->z_live = TRUE;
          w->zbuf = g_malloc (ZBUF);
        }
      else
        deflateReset (&w->z);
      w->cur.csize = 0;
    }
  /* Raw deflate can exceed its input a little (deflateBound): the ZIP64 fields are chosen
   * by that bound, since the header is written before the data. */
  w->cur.z64 = w->cur.offset >= w->max32
               || (w->level > 0 ? deflateBound (&w->z, w->cur.size) + 64 : w->cur.size)
                  >= w->max32;
  if (w->zip && !put_bytes (w, local_header (&w->cur, w->level > 0 ? 8 : 0), error))
    return FALSE;
  return saccade_npz_writer_data (w, header, header_len, error);
}

/* Runs deflate over its pending input (@flush Z_NO_FLUSH) or to the member's end
 * (Z_FINISH), writing what it makes. */
static gboolean
deflate_run (SaccadeNpzWriter *w, int flush, GError **error)
{
  int rc;

  do
    {
      gsize made;
      w->z.next_out = w->zbuf;
      w->z.avail_out = ZBUF;
      rc = deflate (&w->z, flush);
      if (rc == Z_STREAM_ERROR)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: deflate failed", w->path);
          return FALSE;
        }
      made = ZBUF - w->z.avail_out;
      w->cur.csize += made;
      if (!put (w, w->zbuf, made, error))
        return FALSE;
    }
  while (flush == Z_FINISH ? rc != Z_STREAM_END : w->z.avail_in > 0 || w->z.avail_out == 0);
  return TRUE;
}

gboolean
saccade_npz_writer_data (SaccadeNpzWriter *w, const void *data, gsize len, GError **error)
{
  const guint8 *p = data;

  g_return_val_if_fail (w->open_member, FALSE);
  if (len > w->left)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: member %s got more bytes than "
                   "its shape holds", w->path, w->cur.name);
      return FALSE;
    }
  w->left -= len;
  /* zlib takes uInt lengths: feed it in pieces under 2^30. */
  for (gsize done = 0; done < len;)
    {
      uInt piece = (uInt) MIN (len - done, (gsize) 1 << 30);
      w->cur.crc = (guint32) crc32 (w->cur.crc, p + done, piece);
      if (w->level > 0)
        {
          w->z.next_in = (Bytef *) (p + done);
          w->z.avail_in = piece;
          if (!deflate_run (w, Z_NO_FLUSH, error))
            return FALSE;
        }
      done += piece;
    }
  return w->level > 0 || put (w, data, len, error);
}

gboolean
saccade_npz_writer_add (SaccadeNpzWriter *w, const char *name, const char *descr,
                        gsize item_size, const guint64 *shape, int ndim, const void *data,
                        GError **error)
{
  guint64 count = item_size;

  for (int i = 0; i < ndim; i++)
    count *= shape[i];
  return saccade_npz_writer_begin (w, name, descr, item_size, shape, ndim, error)
         && saccade_npz_writer_data (w, data, (gsize) count, error);
}

/* Pass 2 and 3: the central directory and its end records. */
static gboolean
write_directory (SaccadeNpzWriter *w, GError **error)
{
  GByteArray *b = g_byte_array_new ();
  guint64 cd_offset = w->at, cd_size, n = w->members->len;
  gboolean z64_end;

  for (guint i = 0; i < w->members->len; i++)
    {
      const Member *m = &g_array_index (w->members, Member, i);
      gboolean big = m->size >= w->max32 || m->csize >= w->max32;
      gboolean far = m->offset >= w->max32;
      gsize name_len = strlen (m->name);

      le32 (b, 0x02014b50);
      le16 (b, ZIP_VERSION | (3 << 8)); /* made by: Unix */
      le16 (b, ZIP_VERSION);
      le16 (b, 0);
      le16 (b, w->level > 0 ? 8 : 0);
      le16 (b, 0);
      le16 (b, ZIP_DOS_DATE);
      le32 (b, m->crc);
      le32 (b, big ? ZIP_MAX32 : (guint32) m->csize);
      le32 (b, big ? ZIP_MAX32 : (guint32) m->size);
      le16 (b, (guint) name_len);
      le16 (b, (big ? 16 : 0) + (far ? 8 : 0) + (big || far ? 4 : 0));
      le16 (b, 0);                     /* comment */
      le16 (b, 0);                     /* disk */
      le16 (b, 0);                     /* internal attributes */
      le32 (b, 0100644u << 16);        /* external: a regular file, rw-r--r-- */
      le32 (b, far ? ZIP_MAX32 : (guint32) m->offset);
      g_byte_array_append (b, (const guint8 *) m->name, (guint) name_len);
      if (big || far)
        {
          le16 (b, 0x0001);
          le16 (b, (big ? 16 : 0) + (far ? 8 : 0));
          if (big)
            {
              le64 (b, m->size);
              le64 (b, m->csize);
            }
          if (far)
            le64 (b, m->offset);
        }
    }
  cd_size = b->len;
  z64_end = n >= ZIP_MAX16 || cd_offset >= w->max32 || cd_size >= w->max32;
  if (z64_end)
    {
      guint64 rec = cd_offset + cd_size;
      le32 (b, 0x06064b50);
      le64 (b, 44);                    /* the record's size after this field */
      le16 (b, ZIP_VERSION | (3 << 8));
      le16 (b, ZIP_VERSION);
      le32 (b, 0);
      le32 (b, 0);
      le64 (b, n);
      le64 (b, n);
      le64 (b, cd_size);
      le64 (b, cd_offset);
      le32 (b, 0x07064b50);
      le32 (b, 0);
      le64 (b, rec);
      le32 (b, 1);                     /* disks */
    }
  le32 (b, 0x06054b50);
  le16 (b, 0);
  le16 (b, 0);
  le16 (b, z64_end ? ZIP_MAX16 : (guint) n);
  le16 (b, z64_end ? ZIP_MAX16 : (guint) n);
  le32 (b, z64_end ? ZIP_MAX32 : (guint32) cd_size);
  le32 (b, z64_end ? ZIP_MAX32 : (guint32) cd_offset);
  le16 (b, 0);
  return put_bytes (w, b, error);
}

gboolean
saccade_npz_writer_close (SaccadeNpzWriter *w, guint64 *bytes, GError **error)
{
  g_return_val_if_fail (!w->closed, FALSE);
  if (!end_member (w, error))
    return FALSE;
  if (!w->zip && w->members->len != 1)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "%s: a .npy file holds one array", w->path);
      return FALSE;
    }
  if (w->zip && !write_directory (w, error))
    return FALSE;
  if (fflush (w->f) != 0 || fsync (fileno (w->f)) != 0)
    return fail_errno (w, "writing", error);
  if (fclose (w->f) != 0)
    {
      w->f = NULL;
      return fail_errno (w, "writing", error);
    }
  w->f = NULL;
  if (g_rename (w->tmp_path, w->path) != 0)
    return fail_errno (w, "renaming the new file to", error);
  g_clear_pointer (&w->tmp_path, g_free);
  w->closed = TRUE;
  if (bytes != NULL)
    *bytes = w->at;
  return TRUE;
}

void
saccade_npz_writer_free (SaccadeNpzWriter *w)
{
  if (w == NULL)
    return;
  if (w->f != NULL)
    fclose (w->f);
  if (w->z_live)
    deflateEnd (&w->z);
  g_free (w->zbuf);
  if (w->tmp_path != NULL)
    g_unlink (w->tmp_path);
  for (guint i = 0; i < w->members->len; i++)
    g_free (g_array_index (w->members, Member, i).name);
  g_array_unref (w->members);
  g_free (w->cur.name);
  g_free (w->path);
  g_free (w->tmp_path);
  g_free (w);
}
