/* test-figure-scatter.c — the faithfulness figures (ui/figures/saccade-figure-scatter.c and
 * saccade-figure-faithfulness.c) headless: points, bars, dots, whiskers and share bars land
 * where the geometry says for values worked by hand; τ and ρ are written in the plot's
 * corner; empty figures are refused on export; the three formats are what they say. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "tests/ui/figure-pixels.h"
#include "ui/figures/saccade-figure.h"

#define W 800
#define H 500
#define WHITE 0xffffff

static guint32
head_rgb (int colour)
{
  double rgb[3];

  saccade_figure_head_color (colour, 10, rgb);
  return ((guint32) lround (255 * rgb[0]) << 16) | ((guint32) lround (255 * rgb[1]) << 8)
         | (guint32) lround (255 * rgb[2]);
}

static gboolean
near (guint32 got, guint32 want)
{
  /* Dots and bars are drawn at 0.85–0.95 opacity over white. */
  return color_distance (got, want) <= 45;
}

static void
test_scatter_points (void)
{
  const double x[3] = { 0.0, 0.5, 1.0 }, y[3] = { 0.2, 0.1, 0.4 };
  const char *labels[3] = { "a", "b", "c" };
  SaccadeScatterFigure f = { .n = 3, .x = x, .y = y, .labels = labels, .x_name = "attention",
                             .y_name = "leave-one-out", .title = "T", .tau = 0.333,
                             .tau_p = 1.0, .rho = 0.5, .rho_p = NAN };
  SaccadeScatterGeometry g;
  Canvas c;

  canvas_init (&c, W, H);
  saccade_figure_scatter_draw_full (c.cr, &f, NULL, W, H, &g);
  /* Axes from 0 (importances are not negative) to the maximum padded 5 %. */
  g_assert_cmpfloat (g.xmin, ==, 0);
  g_assert_cmpfloat_with_epsilon (g.xmax, 1.05, 1e-12);
  g_assert_cmpfloat_with_epsilon (g.ymax, 0.42, 1e-12);
  g_assert_cmpfloat (g.bars_w, ==, 0);
  /* Point b at (0.5, 0.1): a blue dot at its place, white a dot's width away (no point
   * there). */
  {
    const double px = g.x0 + 0.5 / 1.05 * g.width, py = g.y0 + g.height - 0.1 / 0.42 * g.height;
    g_assert_true (near (pixel (c.surface, px, py), head_rgb (0)));
    g_assert_false (near (pixel (c.surface, px, py - 20), head_rgb (0)));
    /* Its label to the right of it. */
    g_assert_cmpint (ink_in (c.surface, px + 5, py - 8, px + 20, py + 8, WHITE), >, 0);
  }
  /* τ and ρ in the top-left corner of the plot. */
  g_assert_cmpint (ink_in (c.surface, g.x0 + 8, g.y0 + 6, g.x0 + 120, g.y0 + 40, WHITE), >, 50);
  canvas_clear (&c);
}

/* Points in the top-left corner: the τ/ρ box goes to the corner that hides none (top-right,
 * the next in order), and the top-left keeps its points uncovered. */
static void
test_scatter_box_corner (void)
{
  const double x[3] = { 0.0, 0.02, 1.0 }, y[3] = { 1.0, 0.98, 0.0 };
  SaccadeScatterFigure f = { .n = 3, .x = x, .y = y, .tau = -1, .tau_p = 0.3, .rho = -1,
                             .rho_p = NAN };
  SaccadeScatterGeometry g;
  Canvas c;

  canvas_init (&c, W, H);
  saccade_figure_scatter_draw_full (c.cr, &f, NULL, W, H, &g);
  /* The text in the top-right corner, not over the points in the top-left (the same
   * region's width on each side, the points themselves left out on the left). */
  {
    const int right = ink_in (c.surface, g.x0 + g.width - 120, g.y0 + 6, g.x0 + g.width - 8,
                              g.y0 + 40, WHITE);
    const int left = ink_in (c.surface, g.x0 + 30, g.y0 + 6, g.x0 + 142, g.y0 + 40, WHITE);
    g_assert_cmpint (right, >, left + 50);
  }
  canvas_clear (&c);
}

static void
test_scatter_bars (void)
{
  /* Item 1 has the largest x, item 0 the largest y; each bar is scaled to its own max. */
  const double x[2] = { 0.1, 0.4 }, y[2] = { 3.0, 1.5 };
  SaccadeScatterFigure f = { .n = 2, .x = x, .y = y, .tau = NAN, .tau_p = NAN, .rho = NAN,
                             .rho_p = NAN, .bars = TRUE };
  SaccadeScatterGeometry g;
  Canvas c;

  canvas_init (&c, W, H);
  saccade_figure_scatter_draw_full (c.cr, &f, NULL, W, H, &g);
  g_assert_cmpfloat (g.bars_w, >, 50);
  g_assert_cmpfloat (g.bars_x0, >, g.x0 + g.width);
  /* Row r: the x bar in its upper part (0.1 .. 0.48 of the row), the y bar below. */
  for (int r = 0; r < 2; r++)
    {
      const double yx = g.bars_y0 + (r + 0.3) * g.bar_row_h;
      const double yy = g.bars_y0 + (r + 0.7) * g.bar_row_h;
      const double fx = x[r] / 0.4, fy = y[r] / 3.0;
      g_assert_true (near (pixel (c.surface, g.bars_x0 + (fx - 0.05) * g.bars_w, yx),
                           head_rgb (0)));
      g_assert_true (near (pixel (c.surface, g.bars_x0 + (fy - 0.05) * g.bars_w, yy),
                           head_rgb (1)));
      if (fx < 0.9)
        g_assert_false (near (pixel (c.surface, g.bars_x0 + (fx + 0.05) * g.bars_w, yx),
                              head_rgb (0)));
      if (fy < 0.9)
        g_assert_false (near (pixel (c.surface, g.bars_x0 + (fy + 0.05) * g.bars_w, yy),
                              head_rgb (1)));
    }
  canvas_clear (&c);
}

static void
test_faithfulness_rows (void)
{
  const SaccadeFaithRow rows[3] = {
    { "last-layer mean", 40, 2, 0.5, 0.2, 0.25 },
    { "rollout", 42, 0, -0.4, NAN, 1.0 },
    { "flow", 0, 42, NAN, NAN, NAN },
  };
  SaccadeFaithfulnessFigure f = { 3, rows, 42, "Table 2" };
  SaccadeFaithfulnessGeometry g;
  Canvas c;

  canvas_init (&c, W, H);
  saccade_figure_faithfulness_draw_full (c.cr, &f, NULL, W, H, &g);
  g_assert_cmpint (g.n_rows, ==, 3);
  {
    const double cy = g.y0 + 0.5 * g.row_h;
    /* The dot at τ = 0.5, the whisker at 0.65 (inside 0.5 ± 0.2), nothing at 0.85. */
    g_assert_true (near (pixel (c.surface, g.tau_x0 + 0.75 * g.tau_w, cy), head_rgb (0)));
    g_assert_true (near (pixel (c.surface, g.tau_x0 + 0.825 * g.tau_w, cy), head_rgb (0)));
    g_assert_false (near (pixel (c.surface, g.tau_x0 + 0.925 * g.tau_w, cy), head_rgb (0)));
    g_assert_false (near (pixel (c.surface, g.tau_x0 + 0.55 * g.tau_w, cy), head_rgb (0)));
    /* The share bar to 0.25. */
    g_assert_true (near (pixel (c.surface, g.share_x0 + 0.2 * g.share_w, cy), head_rgb (1)));
    g_assert_false (near (pixel (c.surface, g.share_x0 + 0.3 * g.share_w, cy), head_rgb (1)));
  }
  {
    const double cy = g.y0 + 1.5 * g.row_h;
    /* τ = −0.4 without whiskers (one sentence's std is undefined); a full share bar. */
    g_assert_true (near (pixel (c.surface, g.tau_x0 + 0.3 * g.tau_w, cy), head_rgb (0)));
    g_assert_false (near (pixel (c.surface, g.tau_x0 + 0.36 * g.tau_w, cy), head_rgb (0)));
    g_assert_true (near (pixel (c.surface, g.share_x0 + 0.95 * g.share_w, cy), head_rgb (1)));
  }
  {
    /* An undefined row: named, but neither dot nor bar. */
    const double y0 = g.y0 + 2 * g.row_h + 2, y1 = g.y0 + 3 * g.row_h - 2;
    for (double t = 0.02; t < 1; t += 0.04)
      {
        g_assert_false (near (pixel (c.surface, g.tau_x0 + t * g.tau_w, (y0 + y1) / 2),
                              head_rgb (0)));
        g_assert_false (near (pixel (c.surface, g.share_x0 + t * g.share_w, (y0 + y1) / 2),
                              head_rgb (1)));
      }
    g_assert_cmpint (ink_in (c.surface, 0, y0, g.tau_x0 - 4, y1, WHITE), >, 20);
  }
  canvas_clear (&c);
}

/* Each sentence's τ as a point of the strip, at its τ, spread over the row by the golden-
 * ratio sequence (point i at (frac(i · 0.618…) − 0.5) · 0.6 of the row height from its
 * centre), in the third colour at 0.6 opacity; a row without points draws none. */
static void
test_faithfulness_strip (void)
{
  const double taus[2] = { -0.8, 0.8 };
  SaccadeFaithRow rows[2] = {
    { "with points", 2, 0, 0.0, NAN, 0.0, taus, 2 },
    { "without", 2, 0, 0.0, NAN, 0.0 },
  };
  SaccadeFaithfulnessFigure f = { 2, rows, 2, "strip" };
  SaccadeFaithfulnessGeometry g;
  const guint32 strip = head_rgb (2);
  /* 0.6 of the colour over white */
  const guint32 want = ((guint32) lround (0.6 * (strip >> 16 & 0xff) + 0.4 * 255) << 16)
                       | ((guint32) lround (0.6 * (strip >> 8 & 0xff) + 0.4 * 255) << 8)
                       | (guint32) lround (0.6 * (strip & 0xff) + 0.4 * 255);
  Canvas c;

  canvas_init (&c, W, H);
  saccade_figure_faithfulness_draw_full (c.cr, &f, NULL, W, H, &g);
  g_assert_cmpint (g.n_rows, ==, 2);
  for (int i = 0; i < 2; i++)
    {
      const double jitter = fmod (i * 0.6180339887498949, 1.0) - 0.5;
      const double x = g.tau_x0 + (taus[i] + 1) / 2 * g.tau_w;
      g_assert_true (color_distance (pixel (c.surface, x, g.y0 + (0.5 + 0.6 * jitter) * g.row_h),
                                     want) <= 30);
      /* the second row has no points there */
      g_assert_false (color_distance (pixel (c.surface, x,
                                             g.y0 + (1.5 + 0.6 * jitter) * g.row_h),
                                      want) <= 30);
    }
  canvas_clear (&c);
}

static void
test_export (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-figure-scatter-XXXXXX", NULL);
  const double x[3] = { 0.1, 0.2, 0.3 }, y[3] = { 0.3, 0.1, 0.2 };
  const char *labels[3] = { "猫", "追", "球" };
  SaccadeScatterFigure s = { .n = 3, .x = x, .y = y, .labels = labels, .title = "scatter",
                             .tau = -0.333, .tau_p = 1, .rho = -0.5, .rho_p = 0.67,
                             .bars = TRUE };
  const SaccadeFaithRow rows[1] = { { "rollout", 3, 0, 0.1, 0.3, 0.33 } };
  SaccadeFaithfulnessFigure t = { 1, rows, 3, "table" };
  static const char *const EXT[3] = { "png", "svg", "pdf" };
  GError *error = NULL;

  for (int k = 0; k < 3; k++)
    {
      g_autofree char *p1 = g_strdup_printf ("%s/scatter.%s", dir, EXT[k]);
      g_autofree char *p2 = g_strdup_printf ("%s/table.%s", dir, EXT[k]);
      g_assert_true (saccade_figure_export_scatter (&s, p1, NULL, &error));
      g_assert_no_error (error);
      g_assert_true (saccade_figure_export_faithfulness (&t, p2, NULL, &error));
      g_assert_no_error (error);
      if (k == 0)
        check_png (p1), check_png (p2);
      else if (k == 1)
        check_svg (p1), check_svg (p2);
      else
        check_pdf (p1), check_pdf (p2);
      g_remove (p1);
      g_remove (p2);
    }
  /* Empty figures and unknown extensions are refused, and leave no file. */
  {
    g_autofree char *p = g_build_filename (dir, "empty.png", NULL);
    SaccadeScatterFigure e = { 0 };
    SaccadeFaithfulnessFigure te = { 0 };
    g_assert_false (saccade_figure_export_scatter (&e, p, NULL, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
    g_assert_false (saccade_figure_export_faithfulness (&te, p, NULL, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
    g_assert_false (g_file_test (p, G_FILE_TEST_EXISTS));
  }
  {
    g_autofree char *p = g_build_filename (dir, "x.bmp", NULL);
    g_assert_false (saccade_figure_export_scatter (&s, p, NULL, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
  }
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/figure-scatter/box-corner", test_scatter_box_corner);
  g_test_add_func ("/figure-scatter/points", test_scatter_points);
  g_test_add_func ("/figure-scatter/faithfulness-strip", test_faithfulness_strip);
  g_test_add_func ("/figure-scatter/bars", test_scatter_bars);
  g_test_add_func ("/figure-faithfulness/rows", test_faithfulness_rows);
  g_test_add_func ("/figure-faithfulness/export", test_export);
  return g_test_run ();
}
