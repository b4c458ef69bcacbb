/* test-figure-erasure.c — the erasure-curve figure (ui/figures/saccade-figure-erasure.c)
 * headless, read back from its exported PNG: each named ordering's colour is in both
 * panels, the right panel puts an earlier flip further left, an ordering that never flips
 * lands in the "never" column and only then, the random seeds are grey; SVG and PDF export;
 * an empty figure is refused. */
#include <glib/gstdio.h>
#include <math.h>

#include "tests/ui/figure-pixels.h"
#include "ui/figures/saccade-figure.h"

#define NP 6

/* Pixels within 40 per channel of @rgb in the rectangle, and their mean x. */
static int
count_colour (cairo_surface_t *s, double x0, double y0, double x1, double y1,
              const double rgb[3], double *mean_x)
{
  const guint32 want = ((guint32) lround (255 * rgb[0]) << 16)
                       | ((guint32) lround (255 * rgb[1]) << 8) | (guint32) lround (255 * rgb[2]);
  double sx = 0;
  int n = 0;

  for (int y = (int) y0; y < (int) y1; y++)
    for (int x = (int) x0; x < (int) x1; x++)
      if (color_distance (pixel (s, x, y), want) <= 40)
        {
          sx += x;
          n++;
        }
  if (mean_x != NULL)
    *mean_x = n > 0 ? sx / n : NAN;
  return n;
}

/* Exports @f as PNG into @dir and loads it back. */
static cairo_surface_t *
export_png (const SaccadeErasureFigure *f, const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;
  cairo_surface_t *s;

  g_assert_true (saccade_figure_export_erasure (f, path, NULL, &error));
  g_assert_no_error (error);
  check_png (path);
  s = cairo_image_surface_create_from_png (path);
  g_assert_cmpint (cairo_surface_status (s), ==, CAIRO_STATUS_SUCCESS);
  g_remove (path);
  return s;
}

static void
test_orderings_in_pixels (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-erasure-fig-XXXXXX", NULL);
  const double att[NP] = { 0.8, 0.6, 0.45, 0.2, 0.1, 0.05 };
  const double loo[NP] = { 0.8, 0.3, 0.1, 0.05, 0.04, 0.02 };
  const double r0[NP] = { 0.8, 0.75, 0.7, 0.5, 0.3, 0.2 };
  const double r1[NP] = { 0.8, 0.8, 0.78, 0.77, 0.7, 0.6 };
  SaccadeErasureSeries se[4] = {
    { "attention", att, 0.6, FALSE },
    { "leave-one-out", loo, 0.2, FALSE },
    { NULL, r0, 0.8, TRUE },
    { NULL, r1, NAN, TRUE },
  };
  /* Seeds 0.8 and never: the median is never (the engine's rule), drawn in the column. */
  SaccadeErasureFigure f = { .n_points = NP, .n_series = 4, .series = se, .random_median = NAN,
                             .title = "Erasure until the prediction flips" };
  double blue[3], orange[3], grey[3] = { 0.55, 0.55, 0.55 }, bx, ox;
  cairo_surface_t *s;
  int W, H, right;

  saccade_figure_head_color (0, 10, blue);
  saccade_figure_head_color (1, 10, orange);
  s = export_png (&f, dir, "erasure.png");
  W = cairo_image_surface_get_width (s);
  H = cairo_image_surface_get_height (s);
  /* The left panel holds both curves; the right panel both dots, below the legend. */
  g_assert_cmpint (count_colour (s, 0, H * 0.25, W * 0.55, H, blue, NULL), >, 200);
  g_assert_cmpint (count_colour (s, 0, H * 0.25, W * 0.55, H, orange, NULL), >, 200);
  g_assert_cmpint (count_colour (s, W * 0.6, H * 0.25, W, H, blue, &bx), >, 50);
  g_assert_cmpint (count_colour (s, W * 0.6, H * 0.25, W, H, orange, &ox), >, 50);
  /* Leave-one-out flips at 0.2, attention at 0.6: further left. */
  g_assert_cmpfloat (ox, <, bx);
  /* Nobody named is in the never column (the right 7 %), but one random seed is. */
  right = (int) (W * 0.93);
  g_assert_cmpint (count_colour (s, right, H * 0.25, W, H * 0.95, blue, NULL), ==, 0);
  g_assert_cmpint (count_colour (s, right, H * 0.25, W, H * 0.95, grey, NULL), >, 10);
  /* The random seeds' grey lines in the left panel. */
  g_assert_cmpint (count_colour (s, 0, H * 0.25, W * 0.55, H * 0.9, grey, NULL), >, 100);
  cairo_surface_destroy (s);

  /* Attention never flips: its hollow ring moves to the never column. */
  se[0].fraction = NAN;
  s = export_png (&f, dir, "never.png");
  g_assert_cmpint (count_colour (s, right, H * 0.25, W, H * 0.95, blue, NULL), >, 20);
  cairo_surface_destroy (s);

  /* The vector formats. */
  {
    g_autofree char *svg = g_build_filename (dir, "e.svg", NULL);
    g_autofree char *pdf = g_build_filename (dir, "e.pdf", NULL);
    g_autoptr (GError) error = NULL;
    g_assert_true (saccade_figure_export_erasure (&f, svg, NULL, &error));
    check_svg (svg);
    g_assert_true (saccade_figure_export_erasure (&f, pdf, NULL, &error));
    check_pdf (pdf);
    g_remove (svg);
    g_remove (pdf);
  }
  g_rmdir (dir);
}

static void
test_empty_refused (void)
{
  SaccadeErasureFigure f = { .n_points = 1 };
  g_autoptr (GError) error = NULL;

  g_assert_false (saccade_figure_export_erasure (&f, "/nonexistent/x.png", NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/figure-erasure/orderings-in-pixels", test_orderings_in_pixels);
  g_test_add_func ("/figure-erasure/empty-refused", test_empty_refused);
  return g_test_run ();
}
