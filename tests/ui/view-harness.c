/* view-harness.c — the widget tests' window, frames and pixel counts (view-harness.h). */
#include "tests/ui/view-harness.h"

#include <stdlib.h>

void
iterate (void)
{
  /* Enough main-loop turns for a present, a layout and a frame. */
  for (int i = 0; i < 200; i++)
    g_main_context_iteration (NULL, FALSE);
  g_usleep (20000);
  for (int i = 0; i < 200; i++)
    g_main_context_iteration (NULL, FALSE);
}

/* The widget drawn by GTK, as a texture (caller unrefs). */
GdkTexture *
draw_widget (GtkWidget *widget)
{
  GdkPaintable *paintable = gtk_widget_paintable_new (widget);
  GskRenderer *renderer = gtk_native_get_renderer (gtk_widget_get_native (widget));
  GskRenderNode *node = NULL;
  GdkTexture *texture;
  int tries;

  /* The paintable follows the widget's frames: it is empty until GTK has drawn one, which
   * on a busy machine can take a while after the window is shown. Wait for it (up to
   * ~10 s) rather than for a fixed time. */
  for (tries = 0; tries < 500 && node == NULL; tries++)
    {
      GtkSnapshot *snapshot = gtk_snapshot_new ();
      iterate ();
      gdk_paintable_snapshot (paintable, snapshot, gtk_widget_get_width (widget),
                              gtk_widget_get_height (widget));
      node = gtk_snapshot_free_to_node (snapshot);
    }
  g_assert_nonnull (node);
  texture = gsk_renderer_render_texture (renderer, node, NULL);
  gsk_render_node_unref (node);
  g_object_unref (paintable);
  if (g_getenv ("SC_TEST_SCREENSHOT_DIR") != NULL)
    {
      static int shot;
      g_autofree char *prog = g_path_get_basename (g_get_prgname ());
      g_autofree char *name = g_strdup_printf ("%s-%s-%02d.png", prog,
                                             G_OBJECT_TYPE_NAME (widget), shot++);
      g_autofree char *path = g_build_filename (g_getenv ("SC_TEST_SCREENSHOT_DIR"), name, NULL);
      gdk_texture_save_to_png (texture, path);
    }
  return texture;
}

/* How many pixels of @texture are within 3 of 0xRRGGBB in every channel. */
int
count_color (GdkTexture *texture, guint32 rgb)
{
  int w = gdk_texture_get_width (texture), h = gdk_texture_get_height (texture), n = 0;
  g_autofree guchar *data = g_malloc ((gsize) w * h * 4);

  gdk_texture_download (texture, data, (gsize) w * 4);
  for (int i = 0; i < w * h; i++)
    {
      guint32 px = ((guint32 *) data)[i]; /* premultiplied ARGB, native endian */
      int r = (px >> 16) & 0xff, g = (px >> 8) & 0xff, b = px & 0xff;
      if ((px >> 24) == 0xff && abs (r - (int) (rgb >> 16)) <= 3
          && abs (g - (int) ((rgb >> 8) & 0xff)) <= 3 && abs (b - (int) (rgb & 0xff)) <= 3)
        n++;
    }
  return n;
}

GtkWidget *
show_in_window (GtkWidget *child)
{
  return show_in_window_sized (child, 640, 480);
}

GtkWidget *
show_in_window_sized (GtkWidget *child, int width, int height)
{
  GtkWidget *window = gtk_window_new ();
  gtk_window_set_default_size (GTK_WINDOW (window), width, height);
  gtk_window_set_child (GTK_WINDOW (window), child);
  gtk_window_present (GTK_WINDOW (window));
  /* wait for the window to be mapped and laid out (slow on a busy machine) */
  for (int tries = 0; tries < 500 && gtk_widget_get_width (child) <= 100; tries++)
    iterate ();
  g_assert_cmpint (gtk_widget_get_width (child), >, 100);
  return window;
}

