/* app-check-image.c — tells whether a PNG is a picture rather than a blank: loads it with
 * gdk-pixbuf and counts the distinct colours of a sample of its pixels.
 *
 * Usage: app-check-image FILE.png MIN_WIDTH MIN_HEIGHT MIN_COLOURS
 * Prints "WxH, N colours"; exits 1 when the file does not load or is smaller or plainer.
 */
#include <gdk-pixbuf/gdk-pixbuf.h>
#include <math.h>
#include <stdlib.h>

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkPixbuf) pb = NULL;
  g_autoptr (GHashTable) colours = g_hash_table_new (NULL, NULL);
  int w, h, x, y, n_ch, stride, step;
  const guchar *px;

  if (argc != 5)
    {
      g_printerr ("usage: app-check-image FILE MIN_WIDTH MIN_HEIGHT MIN_COLOURS\n");
      return 2;
    }
  if ((pb = gdk_pixbuf_new_from_file (argv[1], &error)) == NULL)
    {
      g_printerr ("%s: %s\n", argv[1], error->message);
      return 1;
    }
  w = gdk_pixbuf_get_width (pb);
  h = gdk_pixbuf_get_height (pb);
  n_ch = gdk_pixbuf_get_n_channels (pb);
  stride = gdk_pixbuf_get_rowstride (pb);
  px = gdk_pixbuf_read_pixels (pb);
  /* About 250,000 samples whatever the size. */
  step = MAX (1, (int) sqrt ((double) w * h / 250000.0));
  for (y = 0; y < h; y += step)
    for (x = 0; x < w; x += step)
      {
        const guchar *p = px + (gsize) y * stride + (gsize) x * n_ch;
        guint rgb = (guint) p[0] << 16 | (guint) p[1] << 8 | p[2];
        g_hash_table_add (colours, GUINT_TO_POINTER (rgb + 1));
      }
  g_print ("%s: %dx%d, %u colours\n", argv[1], w, h, g_hash_table_size (colours));
  if (w < atoi (argv[2]) || h < atoi (argv[3])
      || g_hash_table_size (colours) < (guint) atoi (argv[4]))
    {
      g_printerr ("%s: too small or too plain (want at least %sx%s and %s colours)\n", argv[1],
                  argv[2], argv[3], argv[4]);
      return 1;
    }
  return 0;
}
