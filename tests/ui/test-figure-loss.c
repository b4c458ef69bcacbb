/* test-figure-loss.c — the in-context-learning curve (ui/figures/saccade-figure-loss.c)
 * headless: where the means' lines and the boundary land for a curve worked by hand, the
 * geometry's position lookup, an empty figure, and the three export formats. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "ui/figures/saccade-figure.h"

#define W 600
#define H 400

/* A sequence of 2T + 0 positions, T = 10: loss 10 over the first copy, 2 over the second. */
static void
make_curve (double *v, int n)
{
  v[0] = NAN;
  for (int q = 1; q < n; q++)
    v[q] = q < n / 2 ? 10.0 : 2.0;
}

static gboolean
near_colour (const guint8 *px, const double rgb[3])
{
  /* ARGB32 little-endian: B, G, R, A; the line is opaque enough to be within 40 of its
   * colour over white. */
  return fabs (px[2] - 255 * rgb[0]) < 40 && fabs (px[1] - 255 * rgb[1]) < 40
         && fabs (px[0] - 255 * rgb[2]) < 40;
}

static void
test_lines_and_geometry (void)
{
  double v[20], blue[3], orange[3];
  /* Means away from the curve (10 and 2), so the curve does not cover their lines. */
  SaccadeLossFigure f = { .n = 20, .values = v, .first_start = 1, .boundary = 10,
                          .mean_first = 8.0, .mean_second = 4.0, .value_name = "Loss",
                          .title = "ICL" };
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, W, H);
  cairo_t *cr = cairo_create (s);
  SaccadeLossGeometry g;
  int q, stride, found_blue = 0, found_orange = 0;
  const guint8 *data;

  make_curve (v, 20);
  saccade_figure_loss_draw_full (cr, &f, NULL, W, H, &g);
  cairo_surface_flush (s);
  g_assert_cmpint (g.n, ==, 20);
  g_assert_cmpfloat (g.step, >, 0);
  /* Position lookup: the middle of slot 12, and outside the plot. */
  g_assert_true (saccade_loss_geometry_position_at (&g, g.x0 + 12.5 * g.step,
                                                    g.y0 + g.height / 2, &q));
  g_assert_cmpint (q, ==, 12);
  g_assert_false (saccade_loss_geometry_position_at (&g, g.x0 - 1, g.y0 + 1, &q));

  /* The means: blue across the first copy (slots 1..9), orange across the second, each at
   * its value's height (the axis runs from 0 to 10 · 1.05). */
  saccade_figure_head_color (0, 10, blue);
  saccade_figure_head_color (1, 10, orange);
  data = cairo_image_surface_get_data (s);
  stride = cairo_image_surface_get_stride (s);
  for (int dy = -2; dy <= 2; dy++)
    {
      int y1 = (int) (g.y0 + g.height - 8.0 / 10.5 * g.height) + dy;
      int y2 = (int) (g.y0 + g.height - 4.0 / 10.5 * g.height) + dy;
      int x1 = (int) (g.x0 + 4.2 * g.step), x2 = (int) (g.x0 + 14.2 * g.step);
      found_blue |= near_colour (data + y1 * stride + 4 * x1, blue);
      found_orange |= near_colour (data + y2 * stride + 4 * x2, orange);
      /* Neither line crosses the boundary into the other copy. */
      g_assert_false (near_colour (data + y1 * stride + 4 * x2, blue));
    }
  g_assert_true (found_blue);
  g_assert_true (found_orange);
  cairo_destroy (cr);
  cairo_surface_destroy (s);
}

static void
test_empty_and_export (void)
{
  double v[20];
  SaccadeLossFigure f = { .n = 20, .values = v, .first_start = 1, .boundary = 10,
                          .mean_first = 10.0, .mean_second = 2.0, .title = "ICL" };
  SaccadeLossFigure empty = { 0 };
  g_autofree char *dir = g_dir_make_tmp ("saccade-loss-XXXXXX", NULL);
  const char *ext[] = { "png", "svg", "pdf" }, *magic[] = { "\x89PNG", "<?xml", "%PDF" };
  GError *error = NULL;

  make_curve (v, 20);
  g_assert_false (saccade_figure_export_loss (&empty, "/nonexistent/x.png", NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  for (int i = 0; i < 3; i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/loss.%s", dir, ext[i]);
      g_autofree char *bytes = NULL;
      gsize len = 0;
      g_assert_true (saccade_figure_export_loss (&f, path, NULL, &error));
      g_assert_no_error (error);
      g_assert_true (g_file_get_contents (path, &bytes, &len, NULL));
      g_assert_cmpuint (len, >, 1000);
      g_assert_true (memcmp (bytes, magic[i], strlen (magic[i])) == 0);
      g_unlink (path);
    }
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/figure-loss/lines-and-geometry", test_lines_and_geometry);
  g_test_add_func ("/figure-loss/empty-and-export", test_empty_and_export);
  return g_test_run ();
}
