/* test-figures-analysis.c — the analyses' figure renderers, headless (suite "ui"):
 * the layer profile (the mean line at the layer means with NaN left out, dots in their
 * head's colour, the frame's axis from the finite range), the bars (each bar's colour and
 * height from its value, no bar for 0, NaN or negative values, labels, hit tests) and the
 * head-distance matrix (each cell's colour from viridis over [0, max] in the clustering's
 * order, NaN cells as background, the dendrogram's brackets at their merge heights); equal
 * values, one item/head/bar and no data draw without failing. Their export is checked with
 * the other figures' in test-figures.c.
 */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "tests/ui/figure-pixels.h"
#include "ui/figures/saccade-colormap.h"
#include "ui/figures/saccade-figure.h"

/* ------------------------------------------------------------------------------------ */
/* 5b. Layer profile                                                                     */

/* The profile is drawn at 3 pixels per unit so that its thin lines (the frame: 0.6 units,
 * the mean line: 1.5 units) cover whole pixels. */
#define PROFILE_S 3
#define PROFILE_W 400.0
#define PROFILE_H 300.0

/* Where the plot's frame lies, in pixels (found by its grey lines, not by the layout's
 * formulas). */
typedef struct {
  double x0, x1, y0, y1;
} Frame;

/* The pixel's distance from white (the export background). */
static int
inkness (cairo_surface_t *s, int x, int y)
{
  return color_distance (pixel (s, x, y), 0xffffff);
}

/* The frame of a profile drawn with values in {0, 3} and means in [1, 1.5] (the tests'
 * values): column 0.6 W crosses only the frame and the mean line (dots sit within a
 * quarter layer of the layer centres, the caption and layer numbers under them; no title,
 * the legend of head colours right of the frame),
 * and the row of value 0.5 crosses only the frame. A frame line is grey (60 % of the
 * foreground: 0x666666), found from outside where it first reaches half of that. */
static Frame
profile_frame (cairo_surface_t *s, double lo, double hi)
{
  const int w = cairo_image_surface_get_width (s), h = cairo_image_surface_get_height (s);
  const int col = (int) (0.6 * w);
  int top = -1, bottom = -1, left = -1, right = -1, row;
  Frame f;

  for (int y = 0; y < h && top < 0; y++)
    if (inkness (s, col, y) >= 75)
      top = y;
  for (int y = h - 1; y >= 0 && bottom < 0; y--)
    if (inkness (s, col, y) >= 75)
      bottom = y;
  g_assert_cmpint (top, >, 0);
  g_assert_cmpint (bottom, >, top + 100);
  /* the line's centre is ~1 px inside the first pixel that reaches the threshold */
  f.y0 = top + 1;
  f.y1 = bottom;
  row = (int) (f.y1 - (0.5 - lo) / (hi - lo) * (f.y1 - f.y0));
  for (int x = 0; x < w && left < 0; x++)
    if (inkness (s, x, row) >= 75)
      left = x;
  /* from the middle rightwards: right of the frame stands the legend of head colours */
  for (int x = col; x < w && right < 0; x++)
    if (inkness (s, x, row) >= 75)
      right = x;
  g_assert_cmpint (left, >, 0);
  g_assert_cmpint (right, >, left + 100);
  f.x0 = left + 1;
  f.x1 = right;
  /* the frame's right edge is the figure's width less its padding (one font size) and the
   * legend: a column of a dot (or the mean's line, 1.6 font sizes), a text at least two
   * font sizes wide and gaps (0.8 + 0.6), five font sizes at least; the legend has ink */
  g_assert_cmpfloat (f.x1, <=, PROFILE_S * (PROFILE_W - 10 - 50) + 2);
  g_assert_cmpint (ink_in (s, f.x1 + 2, f.y0, w, f.y1, 0xffffff), >, 0);
  return f;
}

/* The y (pixels) of value @v inside @f for the axis [lo, hi]. */
static double
profile_y (const Frame *f, double v, double lo, double hi)
{
  return f->y1 - (v - lo) / (hi - lo) * (f->y1 - f->y0);
}

/* The centre (pixels) of the dark run (the mean line: 90 % foreground) in column @x
 * between the frame's lines; -1 when there is none. */
static double
dark_run_centre (cairo_surface_t *s, int x, const Frame *f)
{
  int first = -1, last = -1;
  for (int y = (int) f->y0 + 3; y < (int) f->y1 - 3; y++)
    if (inkness (s, x, y) >= 200)
      {
        if (first < 0)
          first = y;
        last = y;
      }
  return first < 0 ? -1 : (first + last) / 2.0 + 0.5;
}

static guint32
blend_on_white (const double rgb[3], double alpha)
{
  guint32 out = 0;
  for (int c = 0; c < 3; c++)
    out = (out << 8) | (guint32) lround ((alpha * rgb[c] + (1 - alpha)) * 255);
  return out;
}

static void
profile_draw (Canvas *c, const SaccadeProfileFigure *f)
{
  canvas_init (c, (int) (PROFILE_S * PROFILE_W), (int) (PROFILE_S * PROFILE_H));
  cairo_scale (c->cr, PROFILE_S, PROFILE_S);
  saccade_figure_profile_draw_full (c->cr, f, NULL, PROFILE_W, PROFILE_H);
  g_assert_cmpint (cairo_status (c->cr), ==, CAIRO_STATUS_SUCCESS);
}

/* 2 layers x 3 heads with values {0, 0, 3}: both layer means are 1 (the mean, not the
 * median 0 or the middle of the range 1.5), the axis is [0 - 5 %, 3 + 5 %] of the range. */
static void
test_profile_known (void)
{
  const double vals[6] = { 0, 0, 3, 0, 0, 3 }, lo = -0.15, hi = 3.15;
  SaccadeProfileFigure f = { .n_layers = 2, .n_heads = 3, .values = vals };
  double rgb[3], step, y_mean;
  Frame fr;
  Canvas c;

  profile_draw (&c, &f);
  fr = profile_frame (c.surface, lo, hi);
  step = (fr.x1 - fr.x0) / 2;
  /* The mean line: horizontal at value 1, in a column between the layer centres and in
   * another one beside it, in 90 % of the foreground (0x1a1a1a). */
  y_mean = profile_y (&fr, 1.0, lo, hi);
  for (int k = 0; k < 2; k++)
    {
      int x = (int) (fr.x0 + (k == 0 ? 1.0 : 1.2) * step);
      double got = dark_run_centre (c.surface, x, &fr);
      g_assert_cmpfloat (fabs (got - y_mean), <=, 2.5);
      assert_color_near (pixel (c.surface, x, y_mean), 0x1a1a1a, 4);
    }
  /* No line outside the layer centres (the line runs from centre to centre). */
  g_assert_cmpfloat (dark_run_centre (c.surface, (int) (fr.x0 + 0.1 * step), &fr), ==, -1);
  /* Dots: head h of layer l at x0 + (l + 0.5 + (h / 2 - 0.5) / 2) step, in the lines
   * figure's head colour at 80 % opacity; sampled 1.5 units below the centre (inside the
   * 3-unit dot, off the tick's grid line). */
  for (int l = 0; l < 2; l++)
    for (int h = 0; h < 3; h++)
      {
        double x = fr.x0 + (l + 0.5 + (h / 2.0 - 0.5) * 0.5) * step;
        double y = profile_y (&fr, vals[l * 3 + h], lo, hi) + 1.5 * PROFILE_S;
        saccade_figure_head_color (h, 3, rgb);
        assert_color_near (pixel (c.surface, x, y), blend_on_white (rgb, 0.8), 4);
      }
  /* Tick labels left of the frame, layer numbers under it at the layer centres. */
  g_assert_cmpint (ink_in (c.surface, 0, fr.y0, fr.x0 - 3, fr.y1, 0xffffff), >, 30);
  for (int l = 0; l < 2; l++)
    g_assert_cmpint (ink_in (c.surface, fr.x0 + (l + 0.3) * step, fr.y1 + 4,
                             fr.x0 + (l + 0.7) * step, fr.y1 + 20 * PROFILE_S, 0xffffff), >, 10);
  canvas_clear (&c);

  /* A title and a caption draw ink in the top band and left of the ticks. */
  f.title = "Entropy by layer";
  f.metric_name = "entropy (nats)";
  profile_draw (&c, &f);
  g_assert_cmpint (ink_in (c.surface, PROFILE_S * 120, 0, PROFILE_S * 280, PROFILE_S * 20,
                           0xffffff), >, 100);
  g_assert_cmpint (ink_in (c.surface, PROFILE_S * 8, PROFILE_S * 100, PROFILE_S * 22, PROFILE_S * 200,
                           0xffffff), >, 50);
  canvas_clear (&c);
}

/* A NaN is left out of the dots, the mean and the range; a layer of equal values, one
 * head, all NaN and no layers draw without failing. */
static void
test_profile_degenerate (void)
{
  const double lo = -0.15, hi = 3.15;
  /* layer 0: {0, NaN, 3} has the mean 1.5 (1 if NaN counted as 0); layer 1: mean 1 */
  double vals[6] = { 0, NAN, 3, 0, 0, 3 };
  SaccadeProfileFigure f = { .n_layers = 2, .n_heads = 3, .values = vals };
  double step, want;
  Frame fr;
  Canvas c;

  profile_draw (&c, &f);
  fr = profile_frame (c.surface, lo, hi); /* the same axis: NaN is not in the range */
  step = (fr.x1 - fr.x0) / 2;
  /* midway between the layer centres the line is at the mean of 1.5 and 1 */
  want = profile_y (&fr, 1.25, lo, hi);
  g_assert_cmpfloat (fabs (dark_run_centre (c.surface, (int) (fr.x0 + step), &fr) - want), <=, 2.5);
  /* no dot where head 1 of layer 0 would be drawn as 0 */
  g_assert_cmpint (inkness (c.surface, (int) (fr.x0 + 0.5 * step),
                            (int) (profile_y (&fr, 0, lo, hi) + 1.5 * PROFILE_S)), <, 40);
  canvas_clear (&c);

  /* Equal values (2 layers, one head each): the axis is the value ± 0.5 (+ 5 %), the line
   * at its middle; the single head's dot at its layer's centre. */
  {
    const double eq[2] = { 2.0, 2.0 };
    SaccadeProfileFigure e = { .n_layers = 2, .n_heads = 1, .values = eq };
    double rgb[3];
    int top = -1, bottom = -1, col;
    profile_draw (&c, &e);
    col = (int) (0.6 * cairo_image_surface_get_width (c.surface));
    for (int y = 0; y < cairo_image_surface_get_height (c.surface) && top < 0; y++)
      if (inkness (c.surface, col, y) >= 75)
        top = y;
    for (int y = cairo_image_surface_get_height (c.surface) - 1; y >= 0 && bottom < 0; y--)
      if (inkness (c.surface, col, y) >= 75)
        bottom = y;
    fr = (Frame) { 0, 0, top + 1, bottom };
    g_assert_cmpfloat (fabs (dark_run_centre (c.surface, col, &fr) - (fr.y0 + fr.y1) / 2), <=, 2.5);
    /* layer 0's dot, 1.5 units below the line's centre: head 0's colour (under a line's
     * edge at most) */
    saccade_figure_head_color (0, 1, rgb);
    {
      gboolean found = FALSE;
      for (int x = 0; x < col && !found; x++)
        found = color_distance (pixel (c.surface, x, (fr.y0 + fr.y1) / 2 + 2.5 * PROFILE_S),
                                blend_on_white (rgb, 0.8)) <= 6;
      g_assert_true (found);
    }
    canvas_clear (&c);
  }
  /* One layer, one head: a dot, no failure (a single mean is a point, not a line). */
  {
    const double one = 0.7;
    SaccadeProfileFigure e = { .n_layers = 1, .n_heads = 1, .values = &one, .title = "one" };
    profile_draw (&c, &e);
    g_assert_cmpint (ink_in (c.surface, 0, PROFILE_S * 40, PROFILE_S * PROFILE_W,
                             PROFILE_S * 250, 0xffffff), >, 100);
    canvas_clear (&c);
  }
  /* Every value NaN, and no layers: the title only, nothing in the plot. */
  for (int k = 0; k < 2; k++)
    {
      double nan6[6] = { NAN, NAN, NAN, NAN, NAN, NAN };
      SaccadeProfileFigure e = { .n_layers = k == 0 ? 2 : 0, .n_heads = 3, .values = nan6,
                                 .title = "empty" };
      profile_draw (&c, &e);
      g_assert_cmpint (ink_in (c.surface, PROFILE_S * 150, 0, PROFILE_S * 250, PROFILE_S * 20,
                               0xffffff), >, 20);
      g_assert_cmpint (ink_in (c.surface, 0, PROFILE_S * 30, PROFILE_S * PROFILE_W,
                               PROFILE_S * PROFILE_H, 0xffffff), ==, 0);
      canvas_clear (&c);
    }
}

/* ------------------------------------------------------------------------------------ */
/* 5c. Bars                                                                              */

static const char *const labels6[6] = { "The", "␣cat", "␣sat", "␣on", "␣the", "␣mat" };

/* Bars of 0.25, 1, 0.5, 0, NaN and -1 against the largest value 1: a bar of v reaches
 * v x the plot's height in viridis(v); 0, NaN and negative values have no bar. */
static void
test_bars_known (void)
{
  const double vals[6] = { 0.25, 1.0, 0.5, 0.0, NAN, -1.0 };
  SaccadeBarsFigure f = { .n = 6, .values = vals, .labels = labels6, .title = "Rollout",
                          .value_name = "flow", .colormap = SACCADE_COLORMAP_VIRIDIS };
  SaccadeBarsGeometry g;
  double y1;
  int bar = -1;
  Canvas c;

  canvas_init (&c, 400, 300);
  saccade_figure_bars_draw_full (c.cr, &f, NULL, 400, 300, &g);
  g_assert_cmpint (cairo_status (c.cr), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint (g.n, ==, 6);
  g_assert_cmpfloat (g.step, >, 20);
  g_assert_cmpfloat (g.height, >, 100);
  y1 = g.y0 + g.height;
#define BAR_X(i, frac) (g.x0 + ((i) + (frac)) * g.step)
  /* the tallest bar fills the plot, in the map's top colour */
  assert_color_near (pixel (c.surface, BAR_X (1, 0.5), g.y0 + 0.5 * g.height), 0xfde725, 2);
  assert_color_near (pixel (c.surface, BAR_X (1, 0.5), g.y0 + 2), 0xfde725, 2);
  /* 0.25 and 0.5: their colours below their tops, background above */
  assert_color_near (pixel (c.surface, BAR_X (0, 0.5), y1 - 0.125 * g.height),
                     saccade_colormap_rgb24 (SACCADE_COLORMAP_VIRIDIS, 0.25), 2);
  g_assert_cmpint (inkness (c.surface, BAR_X (0, 0.5), y1 - 0.4 * g.height), <, 40);
  assert_color_near (pixel (c.surface, BAR_X (2, 0.5), y1 - 0.25 * g.height),
                     saccade_colormap_rgb24 (SACCADE_COLORMAP_VIRIDIS, 0.5), 2);
  g_assert_cmpint (inkness (c.surface, BAR_X (2, 0.5), y1 - 0.6 * g.height), <, 40);
  /* 0, NaN (missing) and a negative value: no bar */
  for (int i = 3; i < 6; i++)
    g_assert_cmpint (inkness (c.surface, BAR_X (i, 0.5), y1 - 0.3 * g.height), <, 40);
  /* bars are 80 % of their step: background between bar 0 and bar 1 */
  g_assert_cmpint (inkness (c.surface, BAR_X (1, 0.0), y1 - 0.05 * g.height), <, 40);
  /* hit tests */
  g_assert_true (saccade_bars_geometry_bar_at (&g, BAR_X (1, 0.5), g.y0 + 10, &bar));
  g_assert_cmpint (bar, ==, 1);
  g_assert_true (saccade_bars_geometry_bar_at (&g, BAR_X (5, 0.9), y1 - 1, &bar));
  g_assert_cmpint (bar, ==, 5);
  g_assert_false (saccade_bars_geometry_bar_at (&g, g.x0 - 2, g.y0 + 10, &bar));
  g_assert_false (saccade_bars_geometry_bar_at (&g, BAR_X (1, 0.5), y1 + 5, &bar));
  /* a label under every bar, ticks left of the plot, the title on top */
  for (int i = 0; i < 6; i++)
    g_assert_cmpint (ink_in (c.surface, BAR_X (i, 0), y1 + 2, BAR_X (i, 1), 300, 0xffffff), >, 10);
  g_assert_cmpint (ink_in (c.surface, 0, g.y0, g.x0 - 2, y1, 0xffffff), >, 30);
  g_assert_cmpint (ink_in (c.surface, 150, 0, 250, 20, 0xffffff), >, 30);
#undef BAR_X
  canvas_clear (&c);
}

/* Equal values fill the plot (scaled to their own maximum); all zeros or all NaN draw no
 * bar; one bar; no bars. None of them fails. */
static void
test_bars_degenerate (void)
{
  const double eq[2] = { 0.5, 0.5 }, zeros[3] = { 0, 0, 0 }, nans[3] = { NAN, NAN, NAN };
  const double one = 2.0;
  SaccadeBarsFigure f = { .n = 2, .values = eq, .colormap = SACCADE_COLORMAP_VIRIDIS };
  SaccadeBarsGeometry g;
  int bar;
  Canvas c;

  canvas_init (&c, 300, 240);
  saccade_figure_bars_draw_full (c.cr, &f, NULL, 300, 240, &g);
  for (int i = 0; i < 2; i++)
    assert_color_near (pixel (c.surface, g.x0 + (i + 0.5) * g.step, g.y0 + 0.1 * g.height),
                       0xfde725, 2);
  for (int k = 0; k < 2; k++)
    {
      f = (SaccadeBarsFigure) { .n = 3, .values = k == 0 ? zeros : nans,
                                .colormap = SACCADE_COLORMAP_VIRIDIS };
      saccade_figure_bars_draw_full (c.cr, &f, NULL, 300, 240, &g);
      g_assert_cmpint (g.n, ==, 3);
      /* inside the plot only the light grid lines: nothing with ink */
      g_assert_cmpint (ink_in (c.surface, g.x0 + 1, g.y0 + 1, g.x0 + 3 * g.step - 1,
                               g.y0 + g.height - 2, 0xffffff), ==, 0);
    }
  f = (SaccadeBarsFigure) { .n = 1, .values = &one, .colormap = SACCADE_COLORMAP_MAGMA };
  saccade_figure_bars_draw_full (c.cr, &f, NULL, 300, 240, &g);
  g_assert_cmpint (g.n, ==, 1);
  assert_color_near (pixel (c.surface, g.x0 + 0.5 * g.step, g.y0 + 0.5 * g.height), 0xfcfdbf, 2);
  f = (SaccadeBarsFigure) { .n = 0, .values = NULL, .title = "nothing" };
  saccade_figure_bars_draw_full (c.cr, &f, NULL, 300, 240, &g);
  g_assert_cmpint (cairo_status (c.cr), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint (g.n, ==, 0);
  g_assert_false (saccade_bars_geometry_bar_at (&g, 150, 120, &bar));
  canvas_clear (&c);
}

/* ------------------------------------------------------------------------------------ */
/* 5d. Distance matrix and dendrogram                                                    */

/* Three heads: d(0, 1) = 1, d(0, 2) = 4, d(1, 2) = 2. Average linkage joins 0 and 1 at 1,
 * then 2 with {0, 1} at (4 + 2) / 2 = 3; drawn in the order 2, 0, 1. */
static const double dist3[9] = {
  0, 1, 4,
  1, 0, 2,
  4, 2, 0,
};
static const int order3[3] = { 2, 0, 1 };
static const SaccadeDendroMerge merges3[2] = { { 0, 1, 1.0 }, { 2, 3, 3.0 } };
static const char *const heads3[3] = { "L0.H0", "L0.H1", "L1.H0" };

static SaccadeDistanceFigure
known_distance (void)
{
  return (SaccadeDistanceFigure) {
    .n = 3, .values = dist3, .order = order3, .merges = merges3, .labels = heads3,
    .value_name = "JSD (nats)", .title = "Head distances", .colormap = SACCADE_COLORMAP_VIRIDIS,
  };
}

static void
test_distance_cells (void)
{
  SaccadeDistanceFigure f = known_distance ();
  SaccadeHeatmapGeometry g;
  Canvas c;

  canvas_init (&c, 400, 400);
  saccade_figure_distance_draw_full (c.cr, &f, NULL, 400, 400, &g);
  g_assert_cmpint (cairo_status (c.cr), ==, CAIRO_STATUS_SUCCESS);
  g_assert_cmpint (g.n_rows, ==, 3);
  g_assert_cmpfloat (g.cell_w, ==, g.cell_h);
  g_assert_cmpfloat (g.cell_w, >, 30);
  /* Cell (r, c) shows the items (order[r], order[c]) through viridis over [0, max = 4]:
   * the diagonal at the map's bottom, the largest distance at its top. */
  for (int r = 0; r < 3; r++)
    for (int col = 0; col < 3; col++)
      {
        double x = g.x + (col + 0.5) * g.cell_w, y = g.y + (r + 0.5) * g.cell_h;
        double d = dist3[order3[r] * 3 + order3[col]];
        int hr = -1, hc = -1;
        assert_color_near (pixel (c.surface, x, y),
                           saccade_colormap_rgb24 (SACCADE_COLORMAP_VIRIDIS, d / 4), 2);
        g_assert_true (saccade_heatmap_geometry_cell_at (&g, x, y, &hr, &hc));
        g_assert_cmpint (hr, ==, r);
        g_assert_cmpint (hc, ==, col);
      }
  assert_color_near (pixel (c.surface, g.x + 0.5 * g.cell_w, g.y + 0.5 * g.cell_h), 0x440154, 2);
  assert_color_near (pixel (c.surface, g.x + 1.5 * g.cell_w, g.y + 0.5 * g.cell_h), 0xfde725, 2);
  /* Labels left of every row and under every column; the title on top. */
  for (int p = 0; p < 3; p++)
    {
      g_assert_cmpint (ink_in (c.surface, 0, g.y + p * g.cell_h, g.x - 1, g.y + (p + 1) * g.cell_h,
                               0xffffff), >, 10);
      g_assert_cmpint (ink_in (c.surface, g.x + p * g.cell_w, g.y + g.height + 1,
                               g.x + (p + 1) * g.cell_w, 400, 0xffffff), >, 10);
    }
  g_assert_cmpint (ink_in (c.surface, 120, 0, 280, 22, 0xffffff), >, 30);
  /* The colour bar: viridis(max) at its top, viridis(0) at its bottom. */
  {
    gboolean top = FALSE, bottom = FALSE;
    for (double x = g.x + g.width + 2; x < 400; x += 1)
      {
        top = top || color_distance (pixel (c.surface, x, g.y + 2), 0xfde725) <= 6;
        bottom = bottom || color_distance (pixel (c.surface, x, g.y + g.height - 2), 0x440154) <= 6;
      }
    g_assert_true (top);
    g_assert_true (bottom);
  }
  canvas_clear (&c);
}

/* The dendrogram: leaves at cell centres, brackets at their merge heights scaled so that
 * the last merge (3) touches the top of a band a fifth of the matrix side high (at most
 * 80 units), whose foot is 0.3 font sizes (3 units) above the matrix. */
static void
test_distance_dendrogram (void)
{
  SaccadeDistanceFigure f = known_distance ();
  SaccadeHeatmapGeometry g;
  double base, dh, cx[3];
  Canvas c;

  canvas_init (&c, 400, 400);
  saccade_figure_distance_draw_full (c.cr, &f, NULL, 400, 400, &g);
  base = g.y - 3;
  dh = MIN (0.2 * g.width, 80.0);
  g_assert_cmpfloat (dh, >, 30);
  for (int p = 0; p < 3; p++)
    cx[p] = g.x + (p + 0.5) * g.cell_w; /* positions 0, 1, 2 hold items 2, 0, 1 */
#define INK_AT(x, y) ink_in (c.surface, (x) - 1, (y) - 2, (x) + 2, (y) + 3, 0xffffff)
  /* merge 0 joins items 0 and 1 (positions 1, 2) at 1/3 of the band */
  g_assert_cmpint (INK_AT ((cx[1] + cx[2]) / 2 - 0.25 * g.cell_w, base - dh / 3), >, 0);
  g_assert_cmpint (INK_AT (cx[1], base - dh / 6), >, 0);
  g_assert_cmpint (INK_AT (cx[2], base - dh / 6), >, 0);
  /* ... and item 0's line stops there */
  g_assert_cmpint (INK_AT (cx[1], base - 2 * dh / 3), ==, 0);
  g_assert_cmpint (INK_AT ((cx[1] + cx[2]) / 2 - 0.25 * g.cell_w, base - 2 * dh / 3), ==, 0);
  /* merge 1 joins item 2 (position 0) with that cluster (at the mean of positions 1 and
   * 2) at the top of the band; item 2's line rises all the way */
  g_assert_cmpint (INK_AT ((cx[0] + (cx[1] + cx[2]) / 2) / 2, base - dh), >, 0);
  g_assert_cmpint (INK_AT (cx[0], base - dh / 2), >, 0);
  g_assert_cmpint (INK_AT ((cx[1] + cx[2]) / 2, base - 2 * dh / 3), >, 0);
  /* nothing in the band right of the last leaf */
  g_assert_cmpint (ink_in (c.surface, cx[2] + 3, base - dh - 2, g.x + g.width, base + 1,
                           0xffffff), ==, 0);
#undef INK_AT
  /* Without merges: no band, the matrix moves up. */
  {
    SaccadeHeatmapGeometry g2;
    f.merges = NULL;
    saccade_figure_distance_draw_full (c.cr, &f, NULL, 400, 400, &g2);
    g_assert_cmpfloat (g2.y, <, g.y);
  }
  canvas_clear (&c);
}

/* NaN cells show the background (missing, not the colour of 0) and stay out of the range;
 * equal distances, one item, a merge naming an item that does not exist, and no items
 * draw without failing. */
static void
test_distance_degenerate (void)
{
  double vals[9];
  SaccadeDistanceFigure f = known_distance ();
  SaccadeHeatmapGeometry g;
  Canvas c;

  memcpy (vals, dist3, sizeof vals);
  vals[0 * 3 + 1] = vals[1 * 3 + 0] = NAN; /* items 0 and 1: positions 1 and 2 */
  f.values = vals;
  canvas_init (&c, 400, 400);
  saccade_figure_distance_draw_full (c.cr, &f, NULL, 400, 400, &g);
  g_assert_cmphex (pixel (c.surface, g.x + 2.5 * g.cell_w, g.y + 1.5 * g.cell_h), ==, 0xffffff);
  g_assert_cmphex (pixel (c.surface, g.x + 1.5 * g.cell_w, g.y + 2.5 * g.cell_h), ==, 0xffffff);
  assert_color_near (pixel (c.surface, g.x + 1.5 * g.cell_w, g.y + 0.5 * g.cell_h), 0xfde725, 2);
  assert_color_near (pixel (c.surface, g.x + 2.5 * g.cell_w, g.y + 0.5 * g.cell_h),
                     saccade_colormap_rgb24 (SACCADE_COLORMAP_VIRIDIS, 0.5), 2);

  /* Three identical heads: every distance 0, every merge at 0; the range falls back to
   * [0, 1] and every cell is viridis(0); the brackets lie flat on the band's foot. */
  {
    const double zeros[9] = { 0 };
    const SaccadeDendroMerge flat[2] = { { 0, 1, 0.0 }, { 2, 3, 0.0 } };
    f = known_distance ();
    f.values = zeros;
    f.merges = flat;
    saccade_figure_distance_draw_full (c.cr, &f, NULL, 400, 400, &g);
    g_assert_cmpint (cairo_status (c.cr), ==, CAIRO_STATUS_SUCCESS);
    for (int r = 0; r < 3; r++)
      for (int col = 0; col < 3; col++)
        assert_color_near (pixel (c.surface, g.x + (col + 0.5) * g.cell_w,
                                  g.y + (r + 0.5) * g.cell_h), 0x440154, 2);
    g_assert_cmpint (ink_in (c.surface, g.x, g.y - 3 - 0.2 * g.width, g.x + g.width, g.y - 6,
                             0xffffff), ==, 0);
  }
  /* One item: one cell at 0, no dendrogram (there is nothing to merge). */
  {
    const double zero = 0;
    const int o = 0;
    f = (SaccadeDistanceFigure) { .n = 1, .values = &zero, .order = &o, .merges = merges3,
                                  .colormap = SACCADE_COLORMAP_VIRIDIS };
    saccade_figure_distance_draw_full (c.cr, &f, NULL, 400, 400, &g);
    g_assert_cmpint (cairo_status (c.cr), ==, CAIRO_STATUS_SUCCESS);
    g_assert_cmpint (g.n_rows, ==, 1);
    assert_color_near (pixel (c.surface, g.x + 0.5 * g.cell_w, g.y + 0.5 * g.cell_h), 0x440154, 2);
  }
  /* A merge naming a cluster that does not exist (99) is skipped, the valid one drawn. */
  {
    const SaccadeDendroMerge bad[2] = { { 0, 1, 1.0 }, { 2, 99, 3.0 } };
    f = known_distance ();
    f.merges = bad;
    saccade_figure_distance_draw_full (c.cr, &f, NULL, 400, 400, &g);
    g_assert_cmpint (cairo_status (c.cr), ==, CAIRO_STATUS_SUCCESS);
    g_assert_cmpint (ink_in (c.surface, g.x + 1.5 * g.cell_w - 1, g.y - 3 - 0.2 * g.width / 3 - 2,
                             g.x + 1.5 * g.cell_w + 2, g.y - 3 - 0.2 * g.width / 3 + 3,
                             0xffffff), >, 0);
  }
  /* No items: the title only. */
  {
    SaccadeDistanceFigure e = { .n = 0, .title = "none" };
    saccade_figure_distance_draw_full (c.cr, &e, NULL, 400, 400, &g);
    g_assert_cmpint (cairo_status (c.cr), ==, CAIRO_STATUS_SUCCESS);
    g_assert_cmpint (g.n_rows, ==, 0);
    g_assert_cmpint (ink_in (c.surface, 0, 30, 400, 400, 0xffffff), ==, 0);
  }
  canvas_clear (&c);
}

/* ------------------------------------------------------------------------------------ */
/* Export                                                                                */

static void
test_export_analysis (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("saccade-figures-analysis-XXXXXX", &error);
  const char *exts[] = { "png", "svg", "pdf" };

  g_assert_no_error (error);
  /* The profile, the bars and the distance matrix in all three formats; empty ones refused
   * with a message. */
  {
    const double prof[8] = { 0.1, 0.5, 0.2, NAN, 0.9, 0.3, 0.4, 0.6 };
    const double bars[6] = { 0.25, 1.0, 0.5, 0.0, 0.7, 0.1 };
    SaccadeProfileFigure pf = { .n_layers = 4, .n_heads = 2, .values = prof,
                                .metric_name = "entropy", .title = "profile" };
    SaccadeBarsFigure bf = { .n = 6, .values = bars, .labels = labels6, .value_name = "flow",
                             .title = "bars", .colormap = SACCADE_COLORMAP_MAGMA };
    SaccadeDistanceFigure df = known_distance ();
    const char *kinds3[] = { "profile", "bars", "distance" };
    for (guint k = 0; k < G_N_ELEMENTS (kinds3); k++)
      {
        for (guint e = 0; e < G_N_ELEMENTS (exts); e++)
          {
            g_autofree char *name = g_strdup_printf ("%s.%s", kinds3[k], exts[e]);
            g_autofree char *path = g_build_filename (dir, name, NULL);
            gboolean ok = k == 0 ? saccade_figure_export_profile (&pf, path, NULL, &error)
                          : k == 1 ? saccade_figure_export_bars (&bf, path, NULL, &error)
                                   : saccade_figure_export_distance (&df, path, NULL, &error);
            g_assert_no_error (error);
            g_assert_true (ok);
            if (e == 0)
              check_png (path);
            else if (e == 1)
              check_svg (path);
            else
              check_pdf (path);
            g_assert_cmpint (g_unlink (path), ==, 0);
          }
        /* no data (n = 0, then values NULL with a size): refused, nothing written */
        for (int empty = 0; empty < 2; empty++)
          {
            g_autofree char *path = g_build_filename (dir, "empty.pdf", NULL);
            SaccadeProfileFigure pe = { .n_layers = empty ? 4 : 0, .n_heads = 2 };
            SaccadeBarsFigure be = { .n = empty ? 6 : 0 };
            SaccadeDistanceFigure de = { .n = empty ? 3 : 0 };
            gboolean ok = k == 0 ? saccade_figure_export_profile (&pe, path, NULL, &error)
                          : k == 1 ? saccade_figure_export_bars (&be, path, NULL, &error)
                                   : saccade_figure_export_distance (&de, path, NULL, &error);
            g_assert_false (ok);
            g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
            g_assert_cmpuint (strlen (error->message), >, 10);
            g_clear_error (&error);
            g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
          }
      }
  }

  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ui/profile/known", test_profile_known);
  g_test_add_func ("/ui/profile/degenerate", test_profile_degenerate);
  g_test_add_func ("/ui/bars/known", test_bars_known);
  g_test_add_func ("/ui/bars/degenerate", test_bars_degenerate);
  g_test_add_func ("/ui/distance/cells", test_distance_cells);
  g_test_add_func ("/ui/distance/dendrogram", test_distance_dendrogram);
  g_test_add_func ("/ui/distance/degenerate", test_distance_degenerate);
  g_test_add_func ("/ui/analysis/export", test_export_analysis);
  return g_test_run ();
}
