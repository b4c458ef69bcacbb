/* test-figure-effects.c — the ablation figures, headless (suite "ui"):
 *   1. the effects map: each cell's colour is RdBu at 0.5 + v / (2m) with m = max |v| (so
 *      0 is the map's white middle, +m its red end and −m its blue end), a given range
 *      overrides m, NaN cells are hatched (not white), flipped heads carry a white ring,
 *      the head under a point is the cell drawn there, and nothing is hit outside;
 *   2. the paired bars: series a left and b right of each token's slot, rising above or
 *      falling below the zero line by their value, no bar for NaN; the token under a point;
 *   3. both export to PNG, SVG and PDF; an empty figure and a bad extension are refused.
 */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "tests/ui/figure-pixels.h"
#include "ui/figures/saccade-colormap.h"
#include "ui/figures/saccade-figure.h"

#define MAP_W 600
#define MAP_H 320

/* 3 layers x 2 heads, layer-major: (0,0) +1, (0,1) -1, (1,0) 0, (1,1) NaN, (2,0) 0.5,
 * (2,1) -0.25. */
static const double MAP_VALUES[6] = { 1.0, -1.0, 0.0, NAN, 0.5, -0.25 };
static const gboolean MAP_FLIPPED[6] = { FALSE, FALSE, FALSE, FALSE, TRUE, FALSE };

static void
cell_centre (const SaccadeEffectsMapGeometry *g, int l, int h, double *x, double *y)
{
  *x = g->x + (l + 0.5) * g->cell_w;
  *y = g->y + (h + 0.5) * g->cell_h;
}

static void
test_map_colors (void)
{
  SaccadeEffectsMapFigure f = { .n_layers = 3, .n_heads = 2, .values = MAP_VALUES,
                                .flipped = MAP_FLIPPED, .value_name = "Δ log p (nats)",
                                .flip_name = "top-1 flipped", .title = "Head sweep" };
  SaccadeEffectsMapGeometry g;
  Canvas c;
  double x, y;
  int l, h;

  g_assert_cmpfloat (saccade_figure_effects_map_range (&f), ==, 1.0);
  canvas_init (&c, MAP_W, MAP_H);
  saccade_figure_effects_map_draw_full (c.cr, &f, NULL, -1, -1, MAP_W, MAP_H, &g);
  cairo_surface_flush (c.surface);
  g_assert_cmpint (g.n_layers, ==, 3);
  g_assert_cmpint (g.n_heads, ==, 2);
  g_assert_cmpfloat (g.cell_w, >, 10);
  g_assert_cmpfloat (g.cell_h, >, 10);

  /* Colours through RdBu at 0.5 + v / 2 (m = 1). */
  cell_centre (&g, 0, 0, &x, &y);
  assert_color_near (pixel (c.surface, x, y), saccade_colormap_rgb24 (SACCADE_COLORMAP_RDBU, 1.0), 6);
  cell_centre (&g, 0, 1, &x, &y);
  assert_color_near (pixel (c.surface, x, y), saccade_colormap_rgb24 (SACCADE_COLORMAP_RDBU, 0.0), 6);
  cell_centre (&g, 1, 0, &x, &y);
  assert_color_near (pixel (c.surface, x, y), saccade_colormap_rgb24 (SACCADE_COLORMAP_RDBU, 0.5), 6);
  cell_centre (&g, 2, 1, &x, &y);
  assert_color_near (pixel (c.surface, x, y),
                     saccade_colormap_rgb24 (SACCADE_COLORMAP_RDBU, 0.375), 6);
  /* The map's ends are red (+) and blue (−): the legend's reading of the sign. */
  {
    guint32 pos = saccade_colormap_rgb24 (SACCADE_COLORMAP_RDBU, 1.0);
    guint32 neg = saccade_colormap_rgb24 (SACCADE_COLORMAP_RDBU, 0.0);
    g_assert_cmpint ((int) (pos >> 16), >, (int) (pos & 0xff));
    g_assert_cmpint ((int) (neg & 0xff), >, (int) (neg >> 16));
  }
  /* NaN: hatched, so some of its pixels are far from the white middle of the map. */
  g_assert_cmpint (ink_in (c.surface, g.x + g.cell_w + 2, g.y + g.cell_h + 2,
                           g.x + 2 * g.cell_w - 2, g.y + 2 * g.cell_h - 2,
                           saccade_colormap_rgb24 (SACCADE_COLORMAP_RDBU, 0.5)), >, 10);
  /* The flipped head (2, 0): the cell's colour at its centre, a white ring at 0.24 of
   * the cell from it, black beside the ring. The unflipped (0, 0) has no ring. */
  cell_centre (&g, 2, 0, &x, &y);
  {
    double r = 0.24 * MIN (g.cell_w, g.cell_h);
    assert_color_near (pixel (c.surface, x, y),
                       saccade_colormap_rgb24 (SACCADE_COLORMAP_RDBU, 0.75), 6);
    assert_color_near (pixel (c.surface, x + r, y), 0xffffff, 40);
    cell_centre (&g, 0, 0, &x, &y);
    assert_color_near (pixel (c.surface, x + r, y),
                       saccade_colormap_rgb24 (SACCADE_COLORMAP_RDBU, 1.0), 6);
  }

  /* Hit tests: every cell's centre is that head; outside is nothing. */
  for (int i = 0; i < 6; i++)
    {
      cell_centre (&g, i / 2, i % 2, &x, &y);
      g_assert_true (saccade_effects_map_geometry_head_at (&g, x, y, &l, &h));
      g_assert_cmpint (l, ==, i / 2);
      g_assert_cmpint (h, ==, i % 2);
    }
  g_assert_false (saccade_effects_map_geometry_head_at (&g, g.x - 1, g.y + 1, &l, &h));
  g_assert_false (saccade_effects_map_geometry_head_at (&g, g.x + 3 * g.cell_w + 1, g.y + 1,
                                                        &l, &h));
  g_assert_false (saccade_effects_map_geometry_head_at (&g, g.x + 1, g.y + 2 * g.cell_h + 1,
                                                        &l, &h));
  canvas_clear (&c);

  /* A given range: +1 of [−2, 2] is three quarters up the map. */
  f.range = 2.0;
  g_assert_cmpfloat (saccade_figure_effects_map_range (&f), ==, 2.0);
  canvas_init (&c, MAP_W, MAP_H);
  saccade_figure_effects_map_draw_full (c.cr, &f, NULL, -1, -1, MAP_W, MAP_H, &g);
  cairo_surface_flush (c.surface);
  cell_centre (&g, 0, 0, &x, &y);
  assert_color_near (pixel (c.surface, x, y),
                     saccade_colormap_rgb24 (SACCADE_COLORMAP_RDBU, 0.75), 6);
  canvas_clear (&c);

  /* All zero or all NaN: m = 1, nothing fails. */
  {
    const double zeros[6] = { 0 }, nans[6] = { NAN, NAN, NAN, NAN, NAN, NAN };
    SaccadeEffectsMapFigure z = { .n_layers = 3, .n_heads = 2, .values = zeros };
    g_assert_cmpfloat (saccade_figure_effects_map_range (&z), ==, 1.0);
    z.values = nans;
    g_assert_cmpfloat (saccade_figure_effects_map_range (&z), ==, 1.0);
    canvas_init (&c, MAP_W, MAP_H);
    saccade_figure_effects_map_draw (c.cr, &z, MAP_W, MAP_H);
    z.n_layers = 0;
    saccade_figure_effects_map_draw_full (c.cr, &z, NULL, -1, -1, MAP_W, MAP_H, &g);
    g_assert_cmpint (g.n_layers, ==, 0);
    g_assert_false (saccade_effects_map_geometry_head_at (&g, 100, 100, &l, &h));
    canvas_clear (&c);
  }
}

#define BARS_W 500
#define BARS_H 360

static void
test_paired_bars (void)
{
  const double a[3] = { 1.0, -0.5, NAN }, b[3] = { 0.5, 0.25, NAN };
  const char *const labels[3] = { "The", " cat", " sat" };
  SaccadePairedBarsFigure f = { .n = 3, .a = a, .b = b, .a_name = "mask", .b_name = "drop",
                                .labels = labels, .value_name = "Δ log p (nats)",
                                .title = "Leave one out" };
  SaccadePairedBarsGeometry g;
  double rgb_a[3], rgb_b[3], y1, yz, unit;
  guint32 ca, cb;
  Canvas c;
  int t;

  saccade_figure_paired_bars_color (0, rgb_a);
  saccade_figure_paired_bars_color (1, rgb_b);
  ca = ((guint32) lround (rgb_a[0] * 255) << 16) | ((guint32) lround (rgb_a[1] * 255) << 8)
       | (guint32) lround (rgb_a[2] * 255);
  cb = ((guint32) lround (rgb_b[0] * 255) << 16) | ((guint32) lround (rgb_b[1] * 255) << 8)
       | (guint32) lround (rgb_b[2] * 255);
  g_assert_cmpint (color_distance (ca, cb), >, 100);

  canvas_init (&c, BARS_W, BARS_H);
  saccade_figure_paired_bars_draw_full (c.cr, &f, NULL, -1, BARS_W, BARS_H, &g);
  cairo_surface_flush (c.surface);
  g_assert_cmpint (g.n, ==, 3);
  g_assert_cmpfloat (g.step, >, 20);
  /* The axis spans [−0.5, 1]: zero a third of the way up. */
  y1 = g.y0 + g.height;
  unit = g.height / 1.5;
  yz = y1 - 0.5 * unit;

  /* Token 0: a rises to 1 (left), b to 0.5 (right). */
  assert_color_near (pixel (c.surface, g.x0 + 0.3 * g.step, yz - 0.9 * unit), ca, 8);
  assert_color_near (pixel (c.surface, g.x0 + 0.3 * g.step, yz - 1.1 * unit), 0xffffff, 40);
  assert_color_near (pixel (c.surface, g.x0 + 0.7 * g.step, yz - 0.4 * unit), cb, 8);
  g_assert_cmpint (color_distance (pixel (c.surface, g.x0 + 0.7 * g.step, yz - 0.6 * unit), cb),
                   >, 60);
  /* Token 1: a falls to −0.5, b rises to 0.25. */
  assert_color_near (pixel (c.surface, g.x0 + 1.3 * g.step, yz + 0.4 * unit), ca, 8);
  assert_color_near (pixel (c.surface, g.x0 + 1.3 * g.step, yz - 0.1 * unit), 0xffffff, 40);
  assert_color_near (pixel (c.surface, g.x0 + 1.7 * g.step, yz - 0.2 * unit), cb, 8);
  /* Token 2: NaN, no bars. */
  g_assert_cmpint (ink_in (c.surface, g.x0 + 2.1 * g.step, g.y0 + 2, g.x0 + 2.9 * g.step,
                           yz - 3, 0xffffff), <, 6);
  g_assert_cmpint (ink_in (c.surface, g.x0 + 2.1 * g.step, yz + 3, g.x0 + 2.9 * g.step,
                           y1 - 2, 0xffffff), <, 6);

  for (int i = 0; i < 3; i++)
    {
      g_assert_true (saccade_paired_bars_geometry_token_at (&g, g.x0 + (i + 0.5) * g.step,
                                                            g.y0 + 1, &t));
      g_assert_cmpint (t, ==, i);
    }
  g_assert_false (saccade_paired_bars_geometry_token_at (&g, g.x0 - 1, g.y0 + 1, &t));
  g_assert_false (saccade_paired_bars_geometry_token_at (&g, g.x0 + 1, y1 + 1, &t));
  canvas_clear (&c);

  /* No data, one series, every value 0: drawn without failing. */
  canvas_init (&c, BARS_W, BARS_H);
  f.b = NULL;
  saccade_figure_paired_bars_draw (c.cr, &f, BARS_W, BARS_H);
  f.n = 0;
  saccade_figure_paired_bars_draw_full (c.cr, &f, NULL, -1, BARS_W, BARS_H, &g);
  g_assert_cmpint (g.n, ==, 0);
  canvas_clear (&c);
}

static void
test_export (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-effects-XXXXXX", NULL);
  const double a[3] = { 1.0, -0.5, NAN }, b[3] = { 0.5, 0.25, NAN };
  SaccadeEffectsMapFigure map = { .n_layers = 3, .n_heads = 2, .values = MAP_VALUES,
                                  .flipped = MAP_FLIPPED, .value_name = "Δ log p (nats)",
                                  .flip_name = "top-1 flipped", .title = "Head sweep" };
  SaccadePairedBarsFigure bars = { .n = 3, .a = a, .b = b, .a_name = "mask", .b_name = "drop",
                                   .title = "Leave one out" };
  const char *const ext[3] = { "png", "svg", "pdf" };
  g_autoptr (GError) error = NULL;

  for (int i = 0; i < 3; i++)
    {
      g_autofree char *pm = g_strdup_printf ("%s/map.%s", dir, ext[i]);
      g_autofree char *pb = g_strdup_printf ("%s/bars.%s", dir, ext[i]);
      g_assert_true (saccade_figure_export_effects_map (&map, pm, NULL, &error));
      g_assert_no_error (error);
      g_assert_true (saccade_figure_export_paired_bars (&bars, pb, NULL, &error));
      g_assert_no_error (error);
      (i == 0 ? check_png : i == 1 ? check_svg : check_pdf) (pm);
      (i == 0 ? check_png : i == 1 ? check_svg : check_pdf) (pb);
      g_remove (pm);
      g_remove (pb);
    }
  {
    g_autofree char *bad = g_strdup_printf ("%s/map.jpg", dir);
    g_assert_false (saccade_figure_export_effects_map (&map, bad, NULL, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
    g_assert_false (g_file_test (bad, G_FILE_TEST_EXISTS));
  }
  {
    g_autofree char *p = g_strdup_printf ("%s/empty.png", dir);
    map.n_layers = 0;
    bars.n = 0;
    g_assert_false (saccade_figure_export_effects_map (&map, p, NULL, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
    g_assert_false (saccade_figure_export_paired_bars (&bars, p, NULL, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    g_assert_false (g_file_test (p, G_FILE_TEST_EXISTS));
  }
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/figure-effects/map", test_map_colors);
  g_test_add_func ("/figure-effects/paired-bars", test_paired_bars);
  g_test_add_func ("/figure-effects/export", test_export);
  return g_test_run ();
}
