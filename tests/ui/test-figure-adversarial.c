/* test-figure-adversarial.c — the adversarial attention figure
 * (ui/figures/saccade-figure-adversarial.c) headless, read back from its exported PNG: two
 * series each drawn in its colour in the curve panel, the one with the larger JSD higher;
 * with rows, the original (grey) and adversarial (red) bars on the right, the adversarial
 * row's mass where the numbers put it; without rows the curves take the whole width and
 * no bar is drawn; SVG and PDF export; an empty figure is refused. */
#include <glib/gstdio.h>
#include <math.h>

#include "tests/ui/figure-pixels.h"
#include "ui/figures/saccade-figure.h"

#define NE 4
#define NT 5

/* Pixels within 40 per channel of @rgb in the rectangle, and their mean x and y. */
static int
count_colour (cairo_surface_t *s, double x0, double y0, double x1, double y1,
              const double rgb[3], double *mean_x, double *mean_y)
{
  const guint32 want = ((guint32) lround (255 * rgb[0]) << 16)
                       | ((guint32) lround (255 * rgb[1]) << 8) | (guint32) lround (255 * rgb[2]);
  double sx = 0, sy = 0;
  int n = 0;

  for (int y = (int) y0; y < (int) y1; y++)
    for (int x = (int) x0; x < (int) x1; x++)
      if (color_distance (pixel (s, x, y), want) <= 40)
        {
          sx += x;
          sy += y;
          n++;
        }
  if (mean_x != NULL)
    *mean_x = n > 0 ? sx / n : NAN;
  if (mean_y != NULL)
    *mean_y = n > 0 ? sy / n : NAN;
  return n;
}

static cairo_surface_t *
export_png (const SaccadeAdversarialFigure *f, const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr (GError) error = NULL;
  cairo_surface_t *s;

  g_assert_true (saccade_figure_export_adversarial (f, path, NULL, &error));
  g_assert_no_error (error);
  check_png (path);
  s = cairo_image_surface_create_from_png (path);
  g_assert_cmpint (cairo_surface_status (s), ==, CAIRO_STATUS_SUCCESS);
  g_remove (path);
  return s;
}

static void
test_curves_and_rows (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-adv-fig-XXXXXX", NULL);
  const double eps[NE] = { 0.001, 0.01, 0.05, 0.1 };
  const double low[NE] = { 0.0, 0.02, 0.05, 0.08 };
  const double high[NE] = { 0.3, 0.5, 0.6, 0.65 };
  /* The adversarial row moves all its mass to the first key; the original to the last. */
  const double orig[NT] = { 0.05, 0.05, 0.1, 0.2, 0.6 };
  const double adv[NT] = { 0.9, 0.025, 0.025, 0.025, 0.025 };
  const SaccadeAdvSeries se[2] = { { "layer 29 head 3", NE, eps, low },
                                   { "layer 29 all heads", NE, eps, high } };
  SaccadeAdversarialFigure f = { .n_series = 2, .series = se, .n_tokens = NT, .original = orig,
                                 .adversarial = adv, .rows_head = 3, .rows_row = 4,
                                 .rows_epsilon = 0.1, .title = "Adversarial attention" };
  double c0[3], c1[3], red[3], grey[3], y0, y1, rx, gx;
  cairo_surface_t *s;
  int W, H;

  saccade_figure_head_color (0, 10, c0);
  saccade_figure_head_color (1, 10, c1);
  saccade_figure_head_color (3, 10, red);
  saccade_figure_head_color (7, 10, grey);
  s = export_png (&f, dir, "rows.png");
  W = cairo_image_surface_get_width (s);
  H = cairo_image_surface_get_height (s);
  /* Both curves in the left half (below the title: the legend swatches count too), the
   * larger JSD higher. */
  g_assert_cmpint (count_colour (s, 0, H * 0.15, W * 0.5, H, c0, NULL, &y0), >, 100);
  g_assert_cmpint (count_colour (s, 0, H * 0.15, W * 0.5, H, c1, NULL, &y1), >, 100);
  g_assert_cmpfloat (y1, <, y0);
  /* The rows on the right: red mass left of the grey mass (first key against last). */
  g_assert_cmpint (count_colour (s, W * 0.55, 0, W, H, red, &rx, NULL), >, 200);
  g_assert_cmpint (count_colour (s, W * 0.55, 0, W, H, grey, &gx, NULL), >, 200);
  g_assert_cmpfloat (rx, <, gx);
  g_assert_cmpint (count_colour (s, W * 0.55, 0, W, H, c0, NULL, NULL), ==, 0);
  cairo_surface_destroy (s);

  /* A stored study: no rows; the curves reach the right half, no bar is drawn. */
  f.n_tokens = 0;
  f.original = f.adversarial = NULL;
  s = export_png (&f, dir, "curve.png");
  W = cairo_image_surface_get_width (s);
  H = cairo_image_surface_get_height (s);
  g_assert_cmpint (count_colour (s, W * 0.6, 0, W, H, c1, NULL, NULL), >, 50);
  g_assert_cmpint (count_colour (s, 0, 0, W, H, red, NULL, NULL), ==, 0);
  cairo_surface_destroy (s);

  {
    g_autofree char *svg = g_build_filename (dir, "a.svg", NULL);
    g_autofree char *pdf = g_build_filename (dir, "a.pdf", NULL);
    g_autoptr (GError) error = NULL;
    g_assert_true (saccade_figure_export_adversarial (&f, svg, NULL, &error));
    check_svg (svg);
    g_assert_true (saccade_figure_export_adversarial (&f, pdf, NULL, &error));
    check_pdf (pdf);
    g_remove (svg);
    g_remove (pdf);
  }
  g_rmdir (dir);
}

static void
test_empty_refused (void)
{
  SaccadeAdversarialFigure f = { .n_series = 0 };
  g_autoptr (GError) error = NULL;

  g_assert_false (saccade_figure_export_adversarial (&f, "/nonexistent/x.png", NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/figure-adversarial/curves-and-rows", test_curves_and_rows);
  g_test_add_func ("/figure-adversarial/empty-refused", test_empty_refused);
  return g_test_run ();
}
