/* test-figure-fixes.c — what a new user met in the figures (issue 11), each pinned down:
 *
 *   - the lines figure's legend names the heads it shows by their index in the layer, in
 *     the colour each has among all the layer's heads ("4", not "0", for head 4 alone);
 *   - the grid figure has a colour bar without a metric too (the thumbnails' own 0..1
 *     scale), where the metric's bar would stand;
 *   - a diverging map is drawn on a linear scale whatever the scale asks, and says so: the
 *     heatmap and the grid drawn with rdbu and "log" are, pixel for pixel, the same as with
 *     rdbu and "linear" (before, the picture was linear and the caption said "log scale").
 */
#include <math.h>
#include <string.h>

#include "tests/ui/figure-pixels.h"
#include "ui/figures/saccade-figure-private.h"

static guint32
rgb24 (const double rgb[3])
{
  return ((guint32) lround (rgb[0] * 255) << 16) | ((guint32) lround (rgb[1] * 255) << 8)
         | (guint32) lround (rgb[2] * 255);
}

/* Pixels of @s in [x0, x1) x [y0, y1) within @tol of @want. */
static int
count_near (cairo_surface_t *s, int x0, int y0, int x1, int y1, guint32 want, int tol)
{
  int n = 0;

  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++)
      n += color_distance (pixel (s, x + 0.5, y + 0.5), want) <= tol;
  return n;
}

static void
test_lines_legend_head_ids (void)
{
  /* Head 4 of a layer of 9, alone: everything to key 0. */
  static const char *const labels[] = { "a", "b", "c", NULL };
  float head[9] = { 1, 0, 0, 1, 0, 0, 1, 0, 0 };
  int ids[1] = { 4 };
  SaccadeLinesFigure f = { .n_heads = 1, .n = 3, .heads = head, .labels = labels,
                           .highlight_token = -1, .head_ids = ids, .n_heads_total = 9 };
  SaccadeLinesGeometry g;
  double c4[3], c0[3];
  Canvas c;

  saccade_figure_head_color (4, 9, c4);
  saccade_figure_head_color (0, 9, c0);
  g_assert_cmpint (color_distance (rgb24 (c4), rgb24 (c0)), >, 60);
  canvas_init (&c, 500, 300);
  saccade_figure_lines_draw_full (c.cr, &f, NULL, FALSE, 500, 300, &g);
  cairo_surface_flush (c.surface);
  /* The legend (above the rows): a solid swatch in head 4's colour, none in head 0's. */
  g_assert_cmpint (count_near (c.surface, 0, 0, 500, (int) g.y0, rgb24 (c4), 3), >, 20);
  g_assert_cmpint (count_near (c.surface, 0, 0, 500, (int) g.y0, rgb24 (c0), 40), ==, 0);
  canvas_clear (&c);
}

/* A 2-layer x 2-head run of 4 tokens; head (l, h) looks at key h. */
static float grid_heads[2 * 2 * 16];

static void
fill_grid_heads (void)
{
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < 4; i++)
      for (int j = 0; j <= i; j++)
        grid_heads[k * 16 + i * 4 + j] = j == MIN (i, k % 2) ? 1.0f : 0.0f;
}

static void
test_grid_colorbar_without_metric (void)
{
  SaccadeGridFigure f = { .n_layers = 2, .n_heads = 2, .n_kv_heads = 1, .n = 4,
                          .heads = grid_heads, .colormap = SACCADE_COLORMAP_VIRIDIS };
  double metric[4] = { 0.1, 0.2, 0.3, 0.4 };
  SaccadeGridFigure fm = f;
  SaccadeGridGeometry g;
  double w, h, wm, hm, last[4], top_rgb[3], bottom_rgb[3];
  int x0, yt;
  Canvas c;

  fill_grid_heads ();
  fm.metric = metric;
  fm.metric_name = "metric";
  /* Room for a colour bar in both. */
  saccade_figure_grid_natural_size (&f, &w, &h);
  saccade_figure_grid_natural_size (&fm, &wm, &hm);
  g_assert_cmpfloat (fabs (w - wm), <, 0.25 * wm);

  canvas_init (&c, 600, 400);
  saccade_figure_grid_draw_full (c.cr, &f, NULL, NULL, -1, -1, 600, 400, &g);
  cairo_surface_flush (c.surface);
  g_assert_cmpfloat (g.thumb, >, 10);
  saccade_grid_geometry_head_rect (&g, g.n_layers - 1, g.n_heads - 1, last);
  /* Right of the last thumbnail: the ramp, viridis(1) near its top, viridis(0) near its
   * bottom (the bar starts at the first thumbnail's top and is at least 8 font sizes). */
  saccade_colormap_rgb (SACCADE_COLORMAP_VIRIDIS, 1.0, top_rgb);
  saccade_colormap_rgb (SACCADE_COLORMAP_VIRIDIS, 0.0, bottom_rgb);
  x0 = (int) ceil (last[0] + last[2] + 2);
  yt = (int) g.y;
  g_assert_cmpint (count_near (c.surface, x0, yt, 600, yt + 6, rgb24 (top_rgb), 20), >, 10);
  g_assert_cmpint (count_near (c.surface, x0, yt + 6, 600, 400, rgb24 (bottom_rgb), 20), >, 10);
  canvas_clear (&c);
}

static gboolean
same_pixels (cairo_surface_t *a, cairo_surface_t *b)
{
  int h = cairo_image_surface_get_height (a), stride = cairo_image_surface_get_stride (a);

  cairo_surface_flush (a);
  cairo_surface_flush (b);
  return memcmp (cairo_image_surface_get_data (a), cairo_image_surface_get_data (b),
                 (size_t) h * stride) == 0;
}

static void
test_diverging_log_is_linear (void)
{
  /* A signed matrix, as a difference of two heads is. */
  float values[16] = { 0.5f, -0.2f, 0.01f, 0, -0.7f, 0.3f, 0.02f, -0.05f,
                       0.1f, 0.9f, -0.3f, 0.4f, -0.01f, 0.2f, 0.6f, -0.9f };
  SaccadeHeatmapFigure lin = { .values = values, .n_rows = 4, .n_cols = 4,
                               .colormap = SACCADE_COLORMAP_RDBU, .scale = SACCADE_SCALE_LINEAR,
                               .title = "difference" };
  SaccadeHeatmapFigure log_ = lin;
  SaccadeGridFigure glin = { .n_layers = 2, .n_heads = 2, .n_kv_heads = 1, .n = 4,
                             .heads = grid_heads, .colormap = SACCADE_COLORMAP_RDBU,
                             .scale = SACCADE_SCALE_LINEAR };
  double metric[4] = { -0.3, 0.1, 0.2, 0.5 };
  SaccadeGridFigure glog;
  Canvas a, b;

  fill_grid_heads ();
  log_.scale = SACCADE_SCALE_LOG;
  g_assert_cmpint (saccade_figure_heatmap_scale (&log_), ==, SACCADE_SCALE_LINEAR);
  g_assert_cmpint (saccade_figure_heatmap_scale (&lin), ==, SACCADE_SCALE_LINEAR);
  {
    SaccadeHeatmapFigure seq = lin;
    seq.colormap = SACCADE_COLORMAP_VIRIDIS;
    seq.scale = SACCADE_SCALE_LOG;
    g_assert_cmpint (saccade_figure_heatmap_scale (&seq), ==, SACCADE_SCALE_LOG);
  }
  canvas_init (&a, 500, 400);
  canvas_init (&b, 500, 400);
  saccade_figure_heatmap_draw (a.cr, &lin, 500, 400);
  saccade_figure_heatmap_draw (b.cr, &log_, 500, 400);
  g_assert_true (same_pixels (a.surface, b.surface));

  glin.metric = metric;
  glin.metric_name = "Δ entropy";
  glog = glin;
  glog.scale = SACCADE_SCALE_LOG;
  /* (each figure paints its own opaque background first) */
  saccade_figure_grid_draw (a.cr, &glin, 500, 400);
  saccade_figure_grid_draw (b.cr, &glog, 500, 400);
  g_assert_true (same_pixels (a.surface, b.surface));
  canvas_clear (&a);
  canvas_clear (&b);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/figures/lines/legend-head-ids", test_lines_legend_head_ids);
  g_test_add_func ("/figures/grid/colorbar-without-metric", test_grid_colorbar_without_metric);
  g_test_add_func ("/figures/diverging-log-is-linear", test_diverging_log_is_linear);
  return g_test_run ();
}
