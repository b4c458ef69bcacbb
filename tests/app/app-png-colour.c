/* app-png-colour.c — counts the pixels of a PNG that have one colour, for tests that check
 * a figure drew something in the colour it should (a head's legend swatch, say).
 *
 * Usage: app-png-colour FILE.png RRGGBB [TOLERANCE]
 * Prints the number of pixels whose every channel is within TOLERANCE (default 2) of
 * RRGGBB; exits 0, or 2 when the arguments or the file are bad.
 */
#include <gdk-pixbuf/gdk-pixbuf.h>
#include <stdlib.h>

int
main (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GdkPixbuf) pb = NULL;
  guint64 want, count = 0;
  int tol = 2, w, h, n_ch, stride;
  const guchar *px;
  char *end = NULL;

  if (argc < 3 || argc > 4)
    {
      g_printerr ("usage: app-png-colour FILE RRGGBB [TOLERANCE]\n");
      return 2;
    }
  want = g_ascii_strtoull (argv[2], &end, 16);
  if (end == argv[2] || *end != '\0' || want > 0xffffff)
    {
      g_printerr ("app-png-colour: '%s' is not a colour RRGGBB\n", argv[2]);
      return 2;
    }
  if (argc == 4)
    tol = atoi (argv[3]);
  if ((pb = gdk_pixbuf_new_from_file (argv[1], &error)) == NULL)
    {
      g_printerr ("%s: %s\n", argv[1], error->message);
      return 2;
    }
  w = gdk_pixbuf_get_width (pb);
  h = gdk_pixbuf_get_height (pb);
  n_ch = gdk_pixbuf_get_n_channels (pb);
  stride = gdk_pixbuf_get_rowstride (pb);
  px = gdk_pixbuf_read_pixels (pb);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        const guchar *p = px + (gsize) y * stride + (gsize) x * n_ch;
        gboolean near = TRUE;
        for (int c = 0; c < 3; c++)
          near = near && abs ((int) p[c] - (int) ((want >> (16 - 8 * c)) & 0xff)) <= tol;
        count += near;
      }
  g_print ("%" G_GUINT64_FORMAT "\n", count);
  return 0;
}
