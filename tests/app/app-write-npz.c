/* app-write-npz.c — writes a small .npz through app/core/saccade-npz.c with ZIP64 records
 * forced from a low byte count on, for tests/app/test-cli-export.sh: the records a member
 * past 4 GiB needs, checked by NumPy, Python's zipfile and Info-ZIP without 4 GiB of disk.
 *
 * Usage: app-write-npz OUT.npz [ZIP64_FROM [LEVEL]]
 *   ZIP64_FROM  bytes from which sizes and offsets take ZIP64 fields ("" or 0: the format's
 *               own threshold, 4 GiB); LEVEL  deflate level (0 or "": stored)
 * The members are the same whatever the options: "attention" float32 (3, 5, 5) = i / 100,
 * "tokens" int32 (10,) = 0..9, "stored" bool (3,) = 1 0 1.
 */
#include <glib.h>
#include <stdint.h>
#include <stdio.h>

#include "app/core/saccade-npz.h"

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeNpzWriter) w = NULL;
  guint64 from = 0, level = 0;
  float attention[3 * 5 * 5];
  int32_t tokens[10];
  const guint8 stored[3] = { 1, 0, 1 };
  const guint64 shape_a[3] = { 3, 5, 5 }, shape_t[1] = { 10 }, shape_s[1] = { 3 };

  if (argc < 2 || argc > 4
      || (argc > 2 && *argv[2] != '\0'
          && !g_ascii_string_to_unsigned (argv[2], 10, 0, G_MAXUINT32, &from, NULL))
      || (argc > 3 && *argv[3] != '\0'
          && !g_ascii_string_to_unsigned (argv[3], 10, 0, 9, &level, NULL)))
    {
      fprintf (stderr, "usage: app-write-npz OUT.npz [ZIP64_FROM [LEVEL]]\n");
      return 2;
    }
  for (int i = 0; i < 3 * 5 * 5; i++)
    attention[i] = (float) i / 100.0f;
  for (int i = 0; i < 10; i++)
    tokens[i] = i;
  w = from > 0 ? saccade_npz_writer_new_zip64_from (argv[1], TRUE, (int) level, from, &error)
               : saccade_npz_writer_new_full (argv[1], TRUE, (int) level, &error);
  if (w == NULL
      || !saccade_npz_writer_add (w, "attention", "<f4", 4, shape_a, 3, attention, &error)
      || !saccade_npz_writer_add (w, "tokens", "<i4", 4, shape_t, 1, tokens, &error)
      || !saccade_npz_writer_add (w, "stored", "|b1", 1, shape_s, 1, stored, &error)
      || !saccade_npz_writer_close (w, NULL, &error))
    {
      fprintf (stderr, "app-write-npz: %s\n", error->message);
      return 1;
    }
  return 0;
}
