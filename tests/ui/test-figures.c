/* test-figures.c — the figure renderers, headless (suite "ui").
 *
 * Everything is drawn into Cairo image surfaces or exported to files, and checked by
 * pixels and bytes; no display is needed. What is checked:
 *   1. colour maps: published endpoints (viridis #440154 .. #fde725, magma, cividis),
 *      ids and the enum types' nicks, linear and log scales;
 *   2. token labels: space/newline/tab markers, partial UTF-8 as <0xNN>, CJK kept;
 *   3. the heatmap of a known 3 x 3 causal matrix: each cell's colour at the place the
 *      geometry says, masked cells grey-hatched (not the colour of 0), labels and title
 *      drawn (ink in the margins), the colour bar's ends, zoomed ranges and hit tests;
 *   4. the grid: thumbnails where the geometry says, a wider gap between KV groups,
 *      metric frames in the metric's colour, the selection outline, hit tests;
 *   5. the lines figure: a line in its head's colour, fading by the highlight (the
 *      analyses' figures — profile, bars, distance — are in test-figures-analysis.c);
 *   6. export: PNG at twice the natural size, SVG that parses as XML with an <svg> root,
 *      PDF from %PDF to %%EOF, refusals (extension, empty figure) with a message;
 *   7. fonts: a CJK label is drawn without missing glyphs;
 *   8. the figure cache renders only when stale.
 */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <pango/pangocairo.h>
#include <string.h>

#include "ui/figures/saccade-colormap.h"
#include "ui/figures/saccade-figure-cache.h"
#include "ui/figures/saccade-figure.h"
#include "ui/figures/saccade-token-label.h"
#include "tests/ui/figure-pixels.h"

/* The pixel helpers are in figure-pixels.h (shared with test-figures-analysis.c). */

static void
test_colormap_endpoints (void)
{
  /* matplotlib's _cm_listed.py, first and last entries rounded to 8 bits. */
  g_assert_cmphex (saccade_colormap_rgb24 (SACCADE_COLORMAP_VIRIDIS, 0.0), ==, 0x440154);
  g_assert_cmphex (saccade_colormap_rgb24 (SACCADE_COLORMAP_VIRIDIS, 1.0), ==, 0xfde725);
  g_assert_cmphex (saccade_colormap_rgb24 (SACCADE_COLORMAP_MAGMA, 0.0), ==, 0x000004);
  g_assert_cmphex (saccade_colormap_rgb24 (SACCADE_COLORMAP_MAGMA, 1.0), ==, 0xfcfdbf);
  g_assert_cmphex (saccade_colormap_rgb24 (SACCADE_COLORMAP_CIVIDIS, 0.0), ==, 0x00224e);
  g_assert_cmphex (saccade_colormap_rgb24 (SACCADE_COLORMAP_CIVIDIS, 1.0), ==, 0xfee838);
  /* viridis at its middle sample (128 / 255) */
  g_assert_cmphex (saccade_colormap_rgb24 (SACCADE_COLORMAP_VIRIDIS, 128.0 / 255), ==, 0x21918c);
  g_assert_cmphex (saccade_colormap_rgb24 (SACCADE_COLORMAP_GRAYS, 0.0), ==, 0xffffff);
  g_assert_cmphex (saccade_colormap_rgb24 (SACCADE_COLORMAP_GRAYS, 1.0), ==, 0x000000);
  /* RdBu: blue for negative, red for positive, near-white in the middle */
  g_assert_cmphex (saccade_colormap_rgb24 (SACCADE_COLORMAP_RDBU, 0.0), ==, 0x053061);
  g_assert_cmphex (saccade_colormap_rgb24 (SACCADE_COLORMAP_RDBU, 1.0), ==, 0x67001f);
  assert_color_near (saccade_colormap_rgb24 (SACCADE_COLORMAP_RDBU, 0.5), 0xf7f7f7, 6);
  /* clamping and NaN */
  g_assert_cmphex (saccade_colormap_rgb24 (SACCADE_COLORMAP_VIRIDIS, -3), ==, 0x440154);
  g_assert_cmphex (saccade_colormap_rgb24 (SACCADE_COLORMAP_VIRIDIS, 7), ==, 0xfde725);
  g_assert_cmphex (saccade_colormap_rgb24 (SACCADE_COLORMAP_VIRIDIS, NAN), ==, 0x440154);
}

static void
test_colormap_ids (void)
{
  g_autoptr (GEnumClass) klass = g_type_class_ref (SACCADE_TYPE_COLORMAP);
  SaccadeColormap map = SACCADE_COLORMAP_VIRIDIS;
  SaccadeScale scale = SACCADE_SCALE_LINEAR;

  for (int i = 0; i <= SACCADE_COLORMAP_LAST; i++)
    {
      GEnumValue *v = g_enum_get_value (klass, i);
      g_assert_nonnull (v);
      g_assert_cmpstr (v->value_nick, ==, saccade_colormap_id (i));
      g_assert_true (saccade_colormap_from_id (saccade_colormap_id (i), &map));
      g_assert_cmpint (map, ==, i);
      g_assert_nonnull (saccade_colormap_name (i));
    }
  g_assert_true (saccade_colormap_from_id ("MAGMA", &map));
  g_assert_cmpint (map, ==, SACCADE_COLORMAP_MAGMA);
  g_assert_false (saccade_colormap_from_id ("jet", &map));
  g_assert_false (saccade_colormap_from_id (NULL, &map));
  g_assert_cmpint (map, ==, SACCADE_COLORMAP_MAGMA);
  g_assert_true (saccade_colormap_is_diverging (SACCADE_COLORMAP_RDBU));
  g_assert_false (saccade_colormap_is_diverging (SACCADE_COLORMAP_VIRIDIS));
  g_assert_true (saccade_scale_from_id ("log", &scale));
  g_assert_cmpint (scale, ==, SACCADE_SCALE_LOG);
  g_assert_cmpstr (saccade_scale_id (SACCADE_SCALE_LINEAR), ==, "linear");
  g_assert_false (saccade_scale_from_id ("sqrt", &scale));
}

static void
test_scale (void)
{
  g_assert_cmpfloat_with_epsilon (saccade_scale_apply (SACCADE_SCALE_LINEAR, 0.25, 0, 1), 0.25, 1e-12);
  g_assert_cmpfloat_with_epsilon (saccade_scale_apply (SACCADE_SCALE_LINEAR, 2, 0, 1), 1, 1e-12);
  g_assert_cmpfloat_with_epsilon (saccade_scale_apply (SACCADE_SCALE_LINEAR, 0, -1, 1), 0.5, 1e-12);
  g_assert_cmpfloat_with_epsilon (saccade_scale_apply (SACCADE_SCALE_LOG, 0.01, 1e-4, 1), 0.5, 1e-12);
  g_assert_cmpfloat_with_epsilon (saccade_scale_apply (SACCADE_SCALE_LOG, 0, 1e-4, 1), 0, 1e-12);
  g_assert_cmpfloat_with_epsilon (saccade_scale_apply (SACCADE_SCALE_LOG, 1, 1e-4, 1), 1, 1e-12);
  g_assert_cmpfloat_with_epsilon (saccade_scale_apply (SACCADE_SCALE_LINEAR, 3, 2, 2), 0.5, 1e-12);
}

/* ------------------------------------------------------------------------------------ */
/* 2. Token labels                                                                       */

static void
check_label (const char *bytes, gsize len, const char *want)
{
  g_autofree char *got = saccade_token_label (bytes, len);
  g_assert_true (g_utf8_validate (got, -1, NULL));
  g_assert_cmpstr (got, ==, want);
}

static void
test_token_labels (void)
{
  check_label (" the", 4, "␣the");
  check_label ("the", 3, "the");
  check_label ("  x", 3, "␣␣x");
  check_label ("a ", 2, "a␣");
  check_label ("New York", 8, "New York"); /* inner spaces stay spaces */
  check_label ("\n", 1, "⏎");
  check_label ("\n\n", 2, "⏎⏎");
  check_label (".\n", 2, ".⏎");
  check_label ("\tif", 3, "⇥if");
  check_label ("", 0, "");
  check_label (NULL, 0, "");
  check_label ("\0", 1, "<0x00>");
  check_label ("\r", 1, "<0x0D>");
  check_label ("\x7f", 1, "<0x7F>");
  /* 猫 is E7 8C AB: split across tokens, each part shows as bytes */
  check_label ("\xe7\x8c", 2, "<0xE7><0x8C>");
  check_label ("\xab", 1, "<0xAB>");
  check_label ("\xe7\x8c\xab", 3, "猫");
  check_label ("猫追球，它累了。", strlen ("猫追球，它累了。"), "猫追球，它累了。");
  check_label (" 猫", 4, "␣猫");
  check_label ("\xc3\x28", 2, "<0xC3>(");        /* invalid continuation */
  check_label ("\xc2\x85", 2, "<0xC2><0x85>");   /* C1 control NEL */
  check_label ("\xed\xa0\x80", 3, "<0xED><0xA0><0x80>"); /* surrogate */
  check_label ("<|im_start|>", 12, "<|im_start|>");
}

/* A sequence's labels name the characters split across tokens. */
static void
test_token_labels_sequence (void)
{
  /* 猫 (E7 8C AB) in three tokens, 追 (E8 BF BD) in two, then whole ones */
  const char *pieces[] = { "\xe7", "\x8c", "\xab\xe8\xbf", "\xbd", "球", " it", "\xff" };
  gsize lens[G_N_ELEMENTS (pieces)];
  g_auto (GStrv) labels = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (pieces); i++)
    lens[i] = strlen (pieces[i]);
  labels = saccade_token_labels_new (pieces, lens, G_N_ELEMENTS (pieces));
  g_assert_cmpuint (g_strv_length (labels), ==, G_N_ELEMENTS (pieces));
  g_assert_cmpstr (labels[0], ==, "<0xE7> (猫)");
  g_assert_cmpstr (labels[1], ==, "<0x8C> (猫)");
  g_assert_cmpstr (labels[2], ==, "<0xAB><0xE8><0xBF> (猫追)");
  g_assert_cmpstr (labels[3], ==, "<0xBD> (追)");
  g_assert_cmpstr (labels[4], ==, "球");
  g_assert_cmpstr (labels[5], ==, "␣it");
  g_assert_cmpstr (labels[6], ==, "<0xFF>");
  g_strfreev (g_steal_pointer (&labels));
  labels = saccade_token_labels_new (NULL, NULL, 0);
  g_assert_cmpuint (g_strv_length (labels), ==, 0);
}

/* ------------------------------------------------------------------------------------ */
/* 3. Heatmap                                                                            */

static const float known3[9] = {
  1.00f, 0.00f, 0.00f,
  0.25f, 0.75f, 0.00f,
  0.10f, 0.20f, 0.70f,
};
static const char *const labels3[3] = { "The", "␣cat", "␣sat" };

static SaccadeHeatmapFigure
known_heatmap (void)
{
  return (SaccadeHeatmapFigure) {
    .values = known3, .n_rows = 3, .n_cols = 3,
    .row_labels = labels3, .col_labels = labels3,
    .title = "Layer 0, head 0",
    .colormap = SACCADE_COLORMAP_VIRIDIS, .scale = SACCADE_SCALE_LINEAR,
    .causal = TRUE, .vmin = 0.0, .vmax = 1.0,
  };
}

static void
test_heatmap_cells (void)
{
  SaccadeHeatmapFigure f = known_heatmap ();
  SaccadeHeatmapGeometry g;
  Canvas c;

  canvas_init (&c, 480, 360);
  saccade_figure_heatmap_draw_full (c.cr, &f, NULL, NULL, 480, 360, &g);
  g_assert_cmpint (cairo_status (c.cr), ==, CAIRO_STATUS_SUCCESS);
  /* The matrix is inside the figure, square cells, leaving room for labels. */
  g_assert_cmpfloat (g.cell_w, ==, g.cell_h);
  g_assert_cmpfloat (g.cell_w, >, 20);
  g_assert_cmpfloat (g.x, >, 20);
  g_assert_cmpfloat (g.y, >, 20);
  g_assert_cmpfloat (g.x + g.width, <, 480);
  g_assert_cmpfloat (g.y + g.height, <, 360);
  g_assert_cmpint (g.n_rows, ==, 3);

  for (int r = 0; r < 3; r++)
    for (int col = 0; col <= r; col++)
      {
        double x = g.x + (col + 0.5) * g.cell_w, y = g.y + (r + 0.5) * g.cell_h;
        int hr = -1, hc = -1;
        assert_color_near (pixel (c.surface, x, y),
                           saccade_colormap_rgb24 (SACCADE_COLORMAP_VIRIDIS, known3[r * 3 + col]), 2);
        g_assert_true (saccade_heatmap_geometry_cell_at (&g, x, y, &hr, &hc));
        g_assert_cmpint (hr, ==, r);
        g_assert_cmpint (hc, ==, col);
      }
  /* Masked cells (above the diagonal): nowhere the colour of 0, and neutral grey. */
  for (int r = 0; r < 3; r++)
    for (int col = r + 1; col < 3; col++)
      for (double fy = 0.15; fy < 0.9; fy += 0.1)
        for (double fx = 0.15; fx < 0.9; fx += 0.1)
          {
            guint32 p = pixel (c.surface, g.x + (col + fx) * g.cell_w, g.y + (r + fy) * g.cell_h);
            int rr = (p >> 16) & 0xff, gg = (p >> 8) & 0xff, bb = p & 0xff;
            g_assert_cmpint (color_distance (p, 0x440154), >, 60);
            g_assert_cmpint (abs (rr - gg), <=, 2);
            g_assert_cmpint (abs (gg - bb), <=, 2);
          }
  {
    int hr, hc;
    g_assert_false (saccade_heatmap_geometry_cell_at (&g, g.x - 1, g.y + 1, &hr, &hc));
    g_assert_false (saccade_heatmap_geometry_cell_at (&g, g.x + g.width + 1, g.y + 1, &hr, &hc));
  }
  canvas_clear (&c);
}

static void
test_heatmap_labels (void)
{
  SaccadeHeatmapFigure f = known_heatmap ();
  SaccadeHeatmapGeometry g;
  Canvas c;

  canvas_init (&c, 480, 360);
  saccade_figure_heatmap_draw_full (c.cr, &f, NULL, NULL, 480, 360, &g);
  /* Row labels: ink left of the matrix, at each row. */
  for (int r = 0; r < 3; r++)
    g_assert_cmpint (ink_in (c.surface, 0, g.y + r * g.cell_h, g.x - 1,
                             g.y + (r + 1) * g.cell_h, 0xffffff), >, 10);
  /* Column labels: ink above the matrix, over each column. */
  for (int col = 0; col < 3; col++)
    g_assert_cmpint (ink_in (c.surface, g.x + col * g.cell_w, 0, g.x + (col + 1) * g.cell_w,
                             g.y - 1, 0xffffff), >, 10);
  /* Title: ink in the top band, centred. */
  g_assert_cmpint (ink_in (c.surface, 140, 0, 340, 24, 0xffffff), >, 30);
  /* Colour bar: right of the matrix, viridis(1) at its top, viridis(0) at its bottom. */
  {
    gboolean top = FALSE, bottom = FALSE;
    for (double x = g.x + g.width + 2; x < 480; x += 1)
      {
        top = top || color_distance (pixel (c.surface, x, g.y + 2), 0xfde725) <= 6;
        bottom = bottom || color_distance (pixel (c.surface, x, g.y + g.height - 2), 0x440154) <= 6;
      }
    g_assert_true (top);
    g_assert_true (bottom);
  }
  /* Without a background (a widget's style): transparent where nothing is drawn. */
  {
    SaccadeFigureStyle style;
    Canvas t;
    saccade_figure_style_init (&style);
    style.bg[3] = 0;
    canvas_init (&t, 480, 360);
    saccade_figure_heatmap_draw_full (t.cr, &f, NULL, &style, 480, 360, NULL);
    cairo_surface_flush (t.surface);
    g_assert_cmphex (*(guint32 *) cairo_image_surface_get_data (t.surface), ==, 0);
    canvas_clear (&t);
  }
  canvas_clear (&c);
}

static void
test_heatmap_range (void)
{
  float signed_vals[4] = { -0.5f, 0.25f, 0.0f, 0.1f };
  SaccadeHeatmapFigure f = known_heatmap ();
  double lo, hi;

  f.vmin = f.vmax = 0; /* automatic */
  saccade_figure_heatmap_range (&f, &lo, &hi);
  g_assert_cmpfloat (lo, ==, 0);
  g_assert_cmpfloat (hi, ==, 1);
  f.scale = SACCADE_SCALE_LOG;
  saccade_figure_heatmap_range (&f, &lo, &hi);
  g_assert_cmpfloat_with_epsilon (lo, 0.1, 1e-6);
  g_assert_cmpfloat (hi, ==, 1);
  f = (SaccadeHeatmapFigure) { .values = signed_vals, .n_rows = 2, .n_cols = 2,
                               .colormap = SACCADE_COLORMAP_RDBU };
  saccade_figure_heatmap_range (&f, &lo, &hi);
  g_assert_cmpfloat (lo, ==, -0.5);
  g_assert_cmpfloat (hi, ==, 0.5);
}

/* A zoomed range shows fewer, bigger cells; hit tests follow the range. */
static void
test_heatmap_zoom (void)
{
  SaccadeHeatmapFigure f = known_heatmap ();
  SaccadeCellRange range = { .row0 = 1, .col0 = 0, .rows = 2, .cols = 2 };
  SaccadeHeatmapGeometry all, zoomed;
  int r, col;
  Canvas c;

  canvas_init (&c, 480, 360);
  saccade_figure_heatmap_draw_full (c.cr, &f, NULL, NULL, 480, 360, &all);
  saccade_figure_heatmap_draw_full (c.cr, &f, &range, NULL, 480, 360, &zoomed);
  g_assert_cmpfloat (zoomed.cell_w, >, all.cell_w * 1.3);
  g_assert_true (saccade_heatmap_geometry_cell_at (&zoomed, zoomed.x + 1, zoomed.y + 1, &r, &col));
  g_assert_cmpint (r, ==, 1);
  g_assert_cmpint (col, ==, 0);
  assert_color_near (pixel (c.surface, zoomed.x + 0.5 * zoomed.cell_w, zoomed.y + 0.5 * zoomed.cell_h),
                     saccade_colormap_rgb24 (SACCADE_COLORMAP_VIRIDIS, 0.25), 2);
  assert_color_near (pixel (c.surface, zoomed.x + 1.5 * zoomed.cell_w, zoomed.y + 1.5 * zoomed.cell_h),
                     saccade_colormap_rgb24 (SACCADE_COLORMAP_VIRIDIS, 0.20), 2);
  canvas_clear (&c);
}

/* A big head still draws every cell (one pixel per cell image) and thins its labels. */
static void
test_heatmap_large (void)
{
  int n = 512;
  g_autofree float *v = g_new0 (float, n * n);
  g_autofree char **labels = g_new0 (char *, n + 1);
  SaccadeHeatmapFigure f;
  SaccadeHeatmapGeometry g;
  Canvas c;

  for (int i = 0; i < n; i++)
    {
      v[i * n + i] = 1.0f;
      labels[i] = g_strdup_printf ("tok%d", i);
    }
  f = (SaccadeHeatmapFigure) { .values = v, .n_rows = n, .n_cols = n,
                               .row_labels = (const char *const *) labels,
                               .col_labels = (const char *const *) labels,
                               .colormap = SACCADE_COLORMAP_MAGMA, .causal = TRUE };
  canvas_init (&c, 900, 800);
  saccade_figure_heatmap_draw_full (c.cr, &f, NULL, NULL, 900, 800, &g);
  g_assert_cmpfloat (g.cell_w * n, <=, 900);
  g_assert_cmpfloat (g.cell_w, >, 1.0);
  /* the diagonal is at vmax */
  assert_color_near (pixel (c.surface, g.x + 100.5 * g.cell_w, g.y + 100.5 * g.cell_h), 0xfcfdbf, 8);
  canvas_clear (&c);
  g_strfreev (g_steal_pointer (&labels));
}

/* ------------------------------------------------------------------------------------ */
/* 4. Grid                                                                               */

/* 2 layers x 4 heads sharing 2 KV heads, n = 4; head (l, h) attends from every query to
 * key h (a vertical stripe), so each thumbnail says which head it is. */
static float *
stripe_heads (int n_layers, int n_heads, int n)
{
  float *heads = g_new0 (float, (gsize) n_layers * n_heads * n * n);
  for (int l = 0; l < n_layers; l++)
    for (int h = 0; h < n_heads; h++)
      for (int i = 0; i < n; i++)
        heads[(((gsize) l * n_heads + h) * n + i) * n + (h % n)] = 1.0f;
  return heads;
}

static void
test_grid_layout (void)
{
  g_autofree float *heads = stripe_heads (2, 4, 4);
  double metric[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  SaccadeGridFigure f = {
    .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .n = 4, .heads = heads,
    .title = "Model", .colormap = SACCADE_COLORMAP_VIRIDIS,
  };
  SaccadeGridGeometry g;
  double a[4], b[4], c4[4];
  int l, h;
  Canvas c;

  canvas_init (&c, 640, 480);
  saccade_figure_grid_draw_full (c.cr, &f, NULL, NULL, -1, -1, 640, 480, &g);
  g_assert_cmpfloat (g.thumb, >, 30);
  /* heads 0-1 and 2-3 share KV heads: the gap between 1 and 2 is wider than 0-1 */
  saccade_grid_geometry_head_rect (&g, 0, 0, a);
  saccade_grid_geometry_head_rect (&g, 0, 1, b);
  saccade_grid_geometry_head_rect (&g, 0, 2, c4);
  {
    int ax = g.layers_across ? 1 : 0; /* the heads' axis */
    double gap01 = b[ax] - (a[ax] + a[2 + ax]), gap12 = c4[ax] - (b[ax] + b[2 + ax]);
    g_assert_cmpfloat (gap01, >, 0);
    g_assert_cmpfloat (gap12, >, gap01 + 0.3 * g.thumb);
    /* the group gap is background */
    g_assert_cmphex (pixel (c.surface, ax == 0 ? b[0] + b[2] + gap12 / 2 : b[0] + b[2] / 2,
                            ax == 1 ? b[1] + b[3] + gap12 / 2 : b[1] + b[3] / 2), ==, 0xffffff);
  }
  /* thumbnails: head h's stripe is column h, at the top of the colour map; elsewhere the
   * colour of 0 (the stripe heads are not causal) */
  for (l = 0; l < 2; l++)
    for (h = 0; h < 4; h++)
      {
        double r[4];
        int hl, hh;
        saccade_grid_geometry_head_rect (&g, l, h, r);
        assert_color_near (pixel (c.surface, r[0] + (h + 0.5) * r[2] / 4, r[1] + 0.5 * r[3] / 4),
                           0xfde725, 2);
        assert_color_near (pixel (c.surface, r[0] + ((h + 2) % 4 + 0.5) * r[2] / 4,
                                  r[1] + 2.5 * r[3] / 4),
                           0x440154, 2);
        g_assert_true (saccade_grid_geometry_head_at (&g, r[0] + 1, r[1] + r[3] - 1, &hl, &hh));
        g_assert_cmpint (hl, ==, l);
        g_assert_cmpint (hh, ==, h);
      }
  g_assert_false (saccade_grid_geometry_head_at (&g, 1, 1, &l, &h));
  /* labels were drawn left of and above the grid */
  g_assert_cmpint (ink_in (c.surface, 0, a[1], a[0] - 2, a[1] + 3 * g.step, 0xffffff), >, 10);
  g_assert_cmpint (ink_in (c.surface, a[0], 20, a[0] + 3 * g.step, a[1] - 2, 0xffffff), >, 10);
  canvas_clear (&c);

  /* With a metric: frames in the metric's colour (the largest at the map's top), greys
   * inside, a colour bar; a selected head outlined in the foreground colour. */
  f.metric = metric;
  f.metric_name = "entropy";
  canvas_init (&c, 640, 480);
  saccade_figure_grid_draw_full (c.cr, &f, NULL, NULL, 1, 3, 640, 480, &g);
  saccade_grid_geometry_head_rect (&g, 1, 3, a);
  saccade_grid_geometry_head_rect (&g, 0, 0, b);
  assert_color_near (pixel (c.surface, a[0] - 0.05 * g.thumb, a[1] + a[3] / 2), 0xfde725, 3);
  assert_color_near (pixel (c.surface, b[0] - 0.05 * g.thumb, b[1] + b[3] / 2), 0x440154, 3);
  assert_color_near (pixel (c.surface, b[0] + 0.5 * b[2] / 4, b[1] + 0.5 * b[3] / 4), 0x000000, 2);
  assert_color_near (pixel (c.surface, a[0] - 0.1 * g.thumb - 2, a[1] + a[3] / 2), 0x000000, 40);
  canvas_clear (&c);
}

/* Prebuilt thumbnails give the same picture as thumbnails made for the call. */
static void
test_grid_thumbs (void)
{
  int n = 130; /* reduced to 65 x 65 blocks of 2 */
  g_autofree float *heads = stripe_heads (3, 2, n);
  SaccadeGridFigure f = { .n_layers = 3, .n_heads = 2, .n_kv_heads = 1, .n = n,
                          .heads = heads, .colormap = SACCADE_COLORMAP_CIVIDIS };
  g_autoptr (SaccadeGridThumbs) th = saccade_grid_thumbs_new (&f);
  Canvas a, b;

  canvas_init (&a, 400, 300);
  canvas_init (&b, 400, 300);
  saccade_figure_grid_draw_full (a.cr, &f, NULL, NULL, -1, -1, 400, 300, NULL);
  f.heads = NULL;
  saccade_figure_grid_draw_full (b.cr, &f, th, NULL, -1, -1, 400, 300, NULL);
  cairo_surface_flush (a.surface);
  cairo_surface_flush (b.surface);
  g_assert_cmpmem (cairo_image_surface_get_data (a.surface), 400 * 300 * 4,
                   cairo_image_surface_get_data (b.surface), 400 * 300 * 4);
  g_assert_cmpint (ink_in (b.surface, 0, 0, 400, 300, 0xffffff), >, 1000);
  canvas_clear (&a);
  canvas_clear (&b);
}

/* ------------------------------------------------------------------------------------ */
/* 5. Lines                                                                              */

static void
test_lines (void)
{
  /* two heads over 3 tokens: head 0 sends everything to key 0, head 1 to the token itself */
  float heads[2 * 9] = {
    1, 0, 0, 1, 0, 0, 1, 0, 0,
    1, 0, 0, 0, 1, 0, 0, 0, 1,
  };
  SaccadeLinesFigure f = { .n_heads = 2, .n = 3, .heads = heads, .labels = labels3,
                           .highlight_token = -1, .title = "Layer 3" };
  SaccadeLinesGeometry g;
  double c0[3], c1[3];
  int tok;
  gboolean key;
  Canvas c;

  saccade_figure_head_color (0, 2, c0);
  saccade_figure_head_color (1, 2, c1);
  canvas_init (&c, 500, 300);
  saccade_figure_lines_draw_full (c.cr, &f, NULL, FALSE, 500, 300, &g);
  g_assert_cmpint (g.n, ==, 3);
  g_assert_cmpfloat (g.right_x - g.left_x, >, 100);
  {
    /* midway along the line from query 1 to key 0: head 0's colour; along query 2 to
     * key 2 (horizontal): head 1's colour (no other line passes there) */
    double x = (g.left_x + g.right_x) / 2;
    double y10 = g.y0 + ((1 + 0.5) + (0 + 0.5)) / 2 * g.row_h;
    guint32 want0 = ((guint32) lround (c0[0] * 255) << 16) | ((guint32) lround (c0[1] * 255) << 8)
                    | (guint32) lround (c0[2] * 255);
    guint32 want1 = ((guint32) lround (c1[0] * 255) << 16) | ((guint32) lround (c1[1] * 255) << 8)
                    | (guint32) lround (c1[2] * 255);
    assert_color_near (pixel (c.surface, x, y10), want0, 6);
    assert_color_near (pixel (c.surface, x, g.y0 + 2.5 * g.row_h), want1, 6);
    /* labels on both sides */
    g_assert_cmpint (ink_in (c.surface, g.left_x - g.label_w, g.y0, g.left_x, g.y0 + 3 * g.row_h,
                             0xffffff), >, 20);
    g_assert_cmpint (ink_in (c.surface, g.right_x, g.y0, g.right_x + g.label_w, g.y0 + 3 * g.row_h,
                             0xffffff), >, 20);
    g_assert_true (saccade_lines_geometry_token_at (&g, g.left_x - 2, g.y0 + 2.5 * g.row_h, &tok, &key));
    g_assert_cmpint (tok, ==, 2);
    g_assert_false (key);
    g_assert_true (saccade_lines_geometry_token_at (&g, g.right_x + 2, g.y0 + 0.5 * g.row_h, &tok, &key));
    g_assert_cmpint (tok, ==, 0);
    g_assert_true (key);
    g_assert_false (saccade_lines_geometry_token_at (&g, x, g.y0 + 0.5 * g.row_h, &tok, &key));

    /* Highlighting query 0 fades query 1's line to key 0 almost to the background. */
    f.highlight_token = 0;
    saccade_figure_lines_draw_full (c.cr, &f, NULL, FALSE, 500, 300, &g);
    g_assert_cmpint (color_distance (pixel (c.surface, x, y10), 0xffffff), <, 40);
    /* ... and keeps the lines from query 0 to key 0 (both heads draw one there) */
    g_assert_cmpint (color_distance (pixel (c.surface, x, g.y0 + 0.5 * g.row_h), 0xffffff), >, 120);
  }
  canvas_clear (&c);
}

/* ------------------------------------------------------------------------------------ */
/* 6. Export                                                                             */

static void
test_export (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("saccade-figures-XXXXXX", &error);
  g_autofree float *heads = stripe_heads (3, 4, 3);
  SaccadeHeatmapFigure hm = known_heatmap ();
  SaccadeGridFigure grid = { .n_layers = 3, .n_heads = 4, .n_kv_heads = 2, .n = 3,
                             .heads = heads, .title = "grid" };
  SaccadeLinesFigure lines = { .n_heads = 4, .n = 3, .heads = heads, .labels = labels3,
                               .highlight_token = -1, .title = "lines" };
  const char *kinds[] = { "heatmap", "grid", "lines" };
  const char *exts[] = { "png", "svg", "pdf" };
  SaccadeFigureFormat fmt;

  g_assert_no_error (error);
  for (guint k = 0; k < G_N_ELEMENTS (kinds); k++)
    for (guint e = 0; e < G_N_ELEMENTS (exts); e++)
      {
        g_autofree char *name = g_strdup_printf ("%s.%s", kinds[k], exts[e]);
        g_autofree char *path = g_build_filename (dir, name, NULL);
        gboolean ok = k == 0 ? saccade_figure_export_heatmap (&hm, path, NULL, &error)
                      : k == 1 ? saccade_figure_export_grid (&grid, path, NULL, &error)
                               : saccade_figure_export_lines (&lines, path, NULL, &error);
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

  /* The heatmap PNG is drawn at 2 px per unit: its cells are where a 2x draw puts them. */
  {
    g_autofree char *path = g_build_filename (dir, "cells.PNG", NULL);
    cairo_surface_t *s;
    g_assert_true (saccade_figure_format_from_path (path, &fmt, NULL));
    g_assert_cmpint (fmt, ==, SACCADE_FIGURE_FORMAT_PNG);
    g_assert_true (saccade_figure_export_heatmap (&hm, path, NULL, &error));
    s = cairo_image_surface_create_from_png (path);
    {
      int w = cairo_image_surface_get_width (s), h = cairo_image_surface_get_height (s);
      SaccadeHeatmapGeometry g;
      Canvas c;
      canvas_init (&c, w, h);
      cairo_surface_set_device_scale (c.surface, 2, 2);
      saccade_figure_heatmap_draw_full (c.cr, &hm, NULL, NULL, w / 2.0, h / 2.0, &g);
      assert_color_near (pixel (s, 2 * (g.x + 1.5 * g.cell_w), 2 * (g.y + 2.5 * g.cell_h)),
                         saccade_colormap_rgb24 (SACCADE_COLORMAP_VIRIDIS, 0.2), 2);
      canvas_clear (&c);
    }
    cairo_surface_destroy (s);
    g_assert_cmpint (g_unlink (path), ==, 0);
  }

  /* Refusals: an unknown extension, an empty figure; nothing is written. */
  {
    g_autofree char *path = g_build_filename (dir, "figure.jpg", NULL);
    SaccadeHeatmapFigure empty = { 0 };
    g_assert_false (saccade_figure_export_heatmap (&hm, path, NULL, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
    g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
    g_free (path);
    path = g_build_filename (dir, "empty.svg", NULL);
    g_assert_false (saccade_figure_export_heatmap (&empty, path, NULL, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    g_clear_error (&error);
    g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
    g_assert_false (saccade_figure_format_from_path ("noext", &fmt, NULL));
    g_assert_false (saccade_figure_format_from_path ("dir.png/file", &fmt, NULL));
  }
  /* A folder that does not exist: a GFileError, no crash. */
  {
    g_autofree char *path = g_build_filename (dir, "missing", "x.pdf", NULL);
    g_assert_false (saccade_figure_export_lines (&lines, path, NULL, &error));
    g_assert_nonnull (error);
    g_clear_error (&error);
  }
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

/* ------------------------------------------------------------------------------------ */
/* 7. Fonts                                                                              */

/* The figures' font list finds a face for every glyph of a Chinese sentence and of the
 * token markers (no boxes). Needs fonts-noto-cjk (tools/setup.sh installs it). */
static void
test_cjk_font (void)
{
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 10, 10);
  cairo_t *cr = cairo_create (s);
  PangoLayout *layout = pango_cairo_create_layout (cr);
  PangoFontDescription *desc = pango_font_description_from_string (SACCADE_FIGURE_FONT_FAMILY " 10");

  pango_layout_set_font_description (layout, desc);
  pango_layout_set_text (layout, "猫追球，它累了。␣⏎⇥ The cat", -1);
  g_assert_cmpint (pango_layout_get_unknown_glyphs_count (layout), ==, 0);
  pango_font_description_free (desc);
  g_object_unref (layout);
  cairo_destroy (cr);
  cairo_surface_destroy (s);
}

/* ------------------------------------------------------------------------------------ */
/* 8. The figure cache                                                                   */

static void
count_render (cairo_t *cr, double w, double h, gpointer user)
{
  (*(int *) user)++;
  cairo_set_source_rgb (cr, 1, 0, 0);
  cairo_rectangle (cr, 0, 0, w / 2, h);
  cairo_fill (cr);
}

static void
test_cache (void)
{
  g_autoptr (SaccadeFigureCache) cache = saccade_figure_cache_new ();
  cairo_surface_t *s;
  int renders = 0;
  Canvas c;

  g_assert_null (saccade_figure_cache_get_surface (cache));
  g_assert_true (saccade_figure_cache_ensure (cache, 40, 30, 2, count_render, &renders));
  g_assert_false (saccade_figure_cache_ensure (cache, 40, 30, 2, count_render, &renders));
  g_assert_cmpint (renders, ==, 1);
  s = saccade_figure_cache_get_surface (cache);
  g_assert_cmpint (cairo_image_surface_get_width (s), ==, 80);
  g_assert_cmpint (cairo_image_surface_get_height (s), ==, 60);
  g_assert_true (saccade_figure_cache_ensure (cache, 41, 30, 2, count_render, &renders));
  saccade_figure_cache_invalidate (cache);
  g_assert_true (saccade_figure_cache_ensure (cache, 41, 30, 2, count_render, &renders));
  g_assert_cmpint (renders, ==, 3);
  g_assert_nonnull (saccade_figure_cache_get_texture (cache));
  g_assert_cmpint (gdk_texture_get_width (saccade_figure_cache_get_texture (cache)), ==, 82);

  canvas_init (&c, 82, 60);
  cairo_scale (c.cr, 2, 2);
  saccade_figure_cache_paint (cache, c.cr);
  cairo_identity_matrix (c.cr);
  cairo_surface_flush (c.surface);
  g_assert_cmphex (pixel (c.surface, 5, 5), ==, 0xff0000);
  canvas_clear (&c);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ui/colormap/endpoints", test_colormap_endpoints);
  g_test_add_func ("/ui/colormap/ids", test_colormap_ids);
  g_test_add_func ("/ui/colormap/scale", test_scale);
  g_test_add_func ("/ui/token-label/piece", test_token_labels);
  g_test_add_func ("/ui/token-label/sequence", test_token_labels_sequence);
  g_test_add_func ("/ui/heatmap/cells", test_heatmap_cells);
  g_test_add_func ("/ui/heatmap/labels", test_heatmap_labels);
  g_test_add_func ("/ui/heatmap/range", test_heatmap_range);
  g_test_add_func ("/ui/heatmap/zoom", test_heatmap_zoom);
  g_test_add_func ("/ui/heatmap/large", test_heatmap_large);
  g_test_add_func ("/ui/grid/layout", test_grid_layout);
  g_test_add_func ("/ui/grid/thumbs", test_grid_thumbs);
  g_test_add_func ("/ui/lines", test_lines);
  g_test_add_func ("/ui/export", test_export);
  g_test_add_func ("/ui/fonts/cjk", test_cjk_font);
  g_test_add_func ("/ui/cache", test_cache);
  return g_test_run ();
}
