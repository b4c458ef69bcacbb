/* test-figure-heatmap-lod.c — the heatmap drawn from a pyramid (saccade-figure-heatmap-lod.c),
 * headless, by pixels and geometry:
 *
 *   - a whole 8,192-token head (fp16 triangle, synthetic: a previous-token diagonal, a sink
 *     column, noise) in a 1000 x 800 figure: drawn from a level whose cells are at least a
 *     pixel, the diagonal and the sink in their weights' colours, the noise dark, the
 *     masked triangle hatched (never a colour of the map);
 *   - max pooling keeps one strong link of a 2,048 × 2,048 matrix of zeros visible;
 *   - a range: drawn with the range's own positions (geometry), at level 0, cell outlines;
 *     exported to PNG it has the natural size of the range and the colours of the range's
 *     cells only; SVG and PDF exports are valid files; a bad range is an error naming it;
 *   - token labels only when there is room: zoomed out the label margin is empty, zoomed in
 *     it is not.
 * With SC_TEST_SCREENSHOT_DIR set, the figures are also written there as PNGs.
 */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "tests/ui/figure-pixels.h"
#include "tests/ui/synthetic-head.h"
#include "ui/figures/saccade-figure-private.h"

static SaccadeLod *head8k; /* built once: the test's slowest step */

static SaccadeLod *
get_head8k (void)
{
  if (head8k == NULL)
    {
      g_autoptr (GBytes) tri = synth_head_fp16 (8192, 1);
      g_autoptr (GError) error = NULL;
      head8k = saccade_lod_new_fp16_triangle (tri, 8192, &error);
      g_assert_no_error (error);
    }
  return head8k;
}

static void
maybe_save (cairo_surface_t *s, const char *name)
{
  const char *dir = g_getenv ("SC_TEST_SCREENSHOT_DIR");
  if (dir != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      cairo_surface_write_to_png (s, path);
    }
}

static guint32
viridis (double t)
{
  return saccade_colormap_rgb24 (SACCADE_COLORMAP_VIRIDIS, t);
}

/* The pixel at the centre of token cell (@r, @c) of the drawn matrix. */
static guint32
cell_pixel (cairo_surface_t *s, const SaccadeHeatmapGeometry *g, double r, double c)
{
  return pixel (s, g->x + (c + 0.5 - g->range.col0) * g->cell_w,
                g->y + (r + 0.5 - g->range.row0) * g->cell_h);
}

static int
count_near (cairo_surface_t *s, double x0, double y0, double x1, double y1, guint32 want,
            int tol)
{
  int n = 0;
  for (int y = (int) y0; y < (int) y1; y++)
    for (int x = (int) x0; x < (int) x1; x++)
      n += color_distance (pixel (s, x + 0.5, y + 0.5), want) <= tol;
  return n;
}

static void
test_whole_8k (void)
{
  SaccadeHeatmapLodFigure f = { .lod = get_head8k (), .title = "8,192 tokens" };
  SaccadeHeatmapGeometry g;
  Canvas c;
  guint32 masked;

  canvas_init (&c, 1000, 800);
  saccade_figure_heatmap_lod_draw_full (c.cr, &f, NULL, FALSE, NULL, 1000, 800, &g);
  maybe_save (c.surface, "lod-8k-whole.png");
  g_assert_cmpint (g.n_rows, ==, 8192);
  g_assert_cmpfloat (g.cell_w, <, 0.1);
  g_assert_cmpint (g.level, >, 0);
  g_assert_cmpint (g.block, ==, 1 << g.level);
  /* cells of the level drawn are at least a pixel, and the next finer level's are not */
  g_assert_cmpfloat (g.cell_w * g.block, >=, 1.0);
  g_assert_cmpfloat (g.cell_w * g.block / 2, <, 1.0);
  /* vmax is row 0's 1.0: the previous-token weight at 0.6, the sink at 0.25 — sampled in
   * the middle of a drawn block (a block's edge pixel may show its neighbour) */
  {
    int b = g.block, r = 4000 / b * b + b / 2;
    assert_color_near (cell_pixel (c.surface, &g, r, r - 1), viridis (SYNTH_PREV), 3);
    assert_color_near (cell_pixel (c.surface, &g, 5000 / b * b + b / 2, b / 2),
                       viridis (SYNTH_SINK), 3);
  }
  /* noise: the max of a block of shares of 0.1 spread over thousands of keys: dark */
  g_assert_cmpint (color_distance (cell_pixel (c.surface, &g, 6000, 3000), viridis (0)), <, 12);
  /* masked: the light hatching of the export style, no colour of the map */
  masked = cell_pixel (c.surface, &g, 1000, 7000);
  g_assert_cmpint (masked & 0xff, >, 150);
  g_assert_cmpint ((masked >> 8) & 0xff, >, 150);
  g_assert_cmpint ((masked >> 16) & 0xff, >, 150);
  canvas_clear (&c);
}

static void
test_single_link_survives (void)
{
  const int n = 2048;
  g_autofree float *m = g_new0 (float, (gsize) n * n);
  g_autoptr (SaccadeLod) lod = NULL;
  SaccadeHeatmapLodFigure f = { 0 };
  SaccadeHeatmapGeometry g;
  Canvas c;

  m[(gsize) 1234 * n + 567] = 1.0f;
  lod = saccade_lod_new_float (m, n, n, FALSE, NULL);
  f.lod = lod;
  canvas_init (&c, 400, 400);
  saccade_figure_heatmap_lod_draw_full (c.cr, &f, NULL, FALSE, NULL, 400, 400, &g);
  g_assert_cmpfloat (g.cell_w, <, 0.25); /* 8 or more cells a pixel */
  /* the one link is drawn (max pooling); a mean would make it 1/64 of the top or less */
  g_assert_cmpint (count_near (c.surface, g.x, g.y, g.x + g.width, g.y + g.height,
                               viridis (1.0), 3), >=, 1);
  assert_color_near (cell_pixel (c.surface, &g, 1234 / g.block * g.block + g.block / 2,
                                 567 / g.block * g.block + g.block / 2),
                     viridis (1.0), 3);
  canvas_clear (&c);
}

/* A 12-token causal head: 0.2 inside queries 4..7 × keys 2..5 except (6, 3) = 0.5; 1.0
 * everywhere else, so a cell drawn outside the range would show the top of the map. */
static SaccadeLod *
range_head (void)
{
  float m[144];

  for (int i = 0; i < 12; i++)
    for (int j = 0; j < 12; j++)
      m[i * 12 + j] = (i >= 4 && i < 8 && j >= 2 && j < 6) ? 0.2f : 1.0f;
  m[6 * 12 + 3] = 0.5f;
  return saccade_lod_new_float (m, 12, 12, TRUE, NULL);
}

static const char *const labels12[12] = { "The", "␣cat", "␣sat", "␣on", "␣the", "␣mat",
                                          "␣and", "␣the", "␣dog", "␣sat", "␣too", "." };

static void
test_range_draw (void)
{
  g_autoptr (SaccadeLod) lod = range_head ();
  SaccadeHeatmapLodFigure f = { .lod = lod, .row_labels = labels12, .col_labels = labels12 };
  SaccadeTokenRange r = { 4, 8, 2, 6 };
  SaccadeHeatmapGeometry g;
  Canvas c;

  canvas_init (&c, 500, 400);
  saccade_figure_heatmap_lod_draw_full (c.cr, &f, &(SaccadeCellRange) { 4, 2, 4, 4 }, FALSE,
                                        NULL, 500, 400, &g);
  maybe_save (c.surface, "lod-range.png");
  /* the range's own positions: the matrix starts at query 4, key 2 */
  g_assert_cmpfloat (g.range.row0, ==, 4);
  g_assert_cmpfloat (g.range.col0, ==, 2);
  g_assert_cmpfloat (g.range.rows, ==, 4);
  g_assert_cmpint (g.level, ==, 0);
  assert_color_near (cell_pixel (c.surface, &g, 6, 3), viridis (0.5), 3);
  assert_color_near (cell_pixel (c.surface, &g, 7, 5), viridis (0.2), 3);
  /* no cell outside the range in the matrix */
  g_assert_cmpint (count_near (c.surface, g.x, g.y, g.x + g.width, g.y + g.height,
                               viridis (1.0), 8), ==, 0);
  /* cell outlines: the line between (6, 3) and (6, 4) differs from both cells */
  {
    double x = g.x + (4 - g.range.col0) * g.cell_w, y = g.y + (6.5 - g.range.row0) * g.cell_h;
    guint32 line = pixel (c.surface, x, y);
    g_assert_cmpint (color_distance (line, viridis (0.5)), >, 8);
    g_assert_cmpint (color_distance (line, viridis (0.2)), >, 8);
  }
  /* the same range drawn through the export-style entry point has the same matrix */
  saccade_figure_heatmap_lod_draw (c.cr, &f, &r, 500, 400);
  assert_color_near (cell_pixel (c.surface, &g, 6, 3), viridis (0.5), 3);
  canvas_clear (&c);
}

static void
test_range_export (void)
{
  g_autoptr (SaccadeLod) lod = range_head ();
  SaccadeHeatmapLodFigure f = { .lod = lod, .row_labels = labels12, .col_labels = labels12,
                                .title = "Queries 4–7 × keys 2–5" };
  SaccadeTokenRange r = { 4, 8, 2, 6 };
  g_autofree char *dir = g_dir_make_tmp ("saccade-lod-XXXXXX", NULL);
  g_autofree char *png = g_build_filename (dir, "range.png", NULL);
  g_autofree char *svg = g_build_filename (dir, "range.svg", NULL);
  g_autofree char *pdf = g_build_filename (dir, "range.pdf", NULL);
  g_autofree char *bad = g_build_filename (dir, "bad.png", NULL);
  g_autoptr (GError) error = NULL;
  cairo_surface_t *img;
  double w, h;
  int top, mid;

  g_assert_true (saccade_figure_export_heatmap_lod (&f, &r, png, NULL, &error));
  g_assert_no_error (error);
  img = cairo_image_surface_create_from_png (png);
  g_assert_cmpint (cairo_surface_status (img), ==, CAIRO_STATUS_SUCCESS);
  maybe_save (img, "lod-range-export.png");
  saccade_figure_heatmap_lod_natural_size (&f, &r, &w, &h);
  /* 4 x 4 cells of 32 pt at 2 px a point, with margins */
  g_assert_cmpint (cairo_image_surface_get_width (img), ==, (int) (2 * w));
  g_assert_cmpint (cairo_image_surface_get_height (img), ==, (int) (2 * h));
  g_assert_cmpfloat (w, >, 4 * 32);
  g_assert_cmpfloat (w, <, 4 * 32 + 300);
  /* the (6, 3) cell: 64 x 64 pixels of viridis(0.5), less its outline (plus a sliver of
   * the colour bar); the 1.0 of the cells outside the range: only the colour bar's top */
  mid = count_near (img, 0, 0, cairo_image_surface_get_width (img),
                    cairo_image_surface_get_height (img), viridis (0.5), 2);
  top = count_near (img, 0, 0, cairo_image_surface_get_width (img),
                    cairo_image_surface_get_height (img), viridis (1.0), 2);
  g_assert_cmpint (mid, >, 3000);
  g_assert_cmpint (top, <, 400);
  cairo_surface_destroy (img);

  g_assert_true (saccade_figure_export_heatmap_lod (&f, &r, svg, NULL, &error));
  check_svg (svg);
  g_assert_true (saccade_figure_export_heatmap_lod (&f, &r, pdf, NULL, &error));
  check_pdf (pdf);
  /* the whole head when no range is given */
  g_assert_true (saccade_figure_export_heatmap_lod (&f, NULL, png, NULL, &error));
  check_png (png);

  g_assert_false (saccade_figure_export_heatmap_lod (&f, &(SaccadeTokenRange) { 4, 13, 2, 6 },
                                                     bad, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "4:13,2:6"));
  g_assert_false (g_file_test (bad, G_FILE_TEST_EXISTS));
  g_clear_error (&error);
  g_assert_false (saccade_figure_export_heatmap_lod (&f, &(SaccadeTokenRange) { 5, 5, 2, 6 },
                                                     bad, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);

  g_unlink (png);
  g_unlink (svg);
  g_unlink (pdf);
  g_rmdir (dir);
}

static void
test_whole_8k_export (void)
{
  g_autofree char **labels = g_new0 (char *, 8193);
  SaccadeHeatmapLodFigure f = { .lod = get_head8k () };
  g_autofree char *dir = g_dir_make_tmp ("saccade-lod-XXXXXX", NULL);
  g_autofree char *png = g_build_filename (dir, "whole.png", NULL);
  g_autoptr (GError) error = NULL;
  cairo_surface_t *img;

  for (int i = 0; i < 8192; i++)
    labels[i] = g_strdup_printf ("t%d", i);
  f.row_labels = f.col_labels = (const char *const *) labels;
  g_assert_true (saccade_figure_export_heatmap_lod (&f, NULL, png, NULL, &error));
  g_assert_no_error (error);
  img = cairo_image_surface_create_from_png (png);
  g_assert_cmpint (cairo_surface_status (img), ==, CAIRO_STATUS_SUCCESS);
  maybe_save (img, "lod-8k-export.png");
  /* a page, not 8,192 cells of 1.5 pt: the matrix is 520 pt, the figure under 800 pt */
  g_assert_cmpint (cairo_image_surface_get_width (img), <, 2 * 800);
  g_assert_cmpint (cairo_image_surface_get_height (img), <, 2 * 800);
  cairo_surface_destroy (img);
  g_unlink (png);
  g_rmdir (dir);
  g_strfreev (labels);
  labels = NULL;
}

static void
test_labels_only_with_room (void)
{
  g_auto (GStrv) labels = g_new0 (char *, 8193);
  SaccadeHeatmapLodFigure f = { .lod = get_head8k () };
  SaccadeHeatmapGeometry whole, bare, zoomed;
  Canvas c;

  for (int i = 0; i < 8192; i++)
    labels[i] = g_strdup_printf ("␣token%d", i);
  f.row_labels = f.col_labels = (const char *const *) labels;
  f.label_em = saccade_figure_labels_em (f.row_labels, 8192);
  g_assert_cmpfloat (f.label_em, >, 3);
  canvas_init (&c, 1000, 800);
  saccade_figure_heatmap_lod_draw_full (c.cr, &f, NULL, TRUE, NULL, 1000, 800, &whole);
  /* zoomed out: the matrix is where it is without labels (no room is made for them) */
  saccade_figure_heatmap_lod_draw_full (c.cr, &(SaccadeHeatmapLodFigure) { .lod = f.lod }, NULL,
                                        TRUE, NULL, 1000, 800, &bare);
  g_assert_cmpfloat (whole.x, ==, bare.x);
  g_assert_cmpfloat (whole.y, ==, bare.y);
  g_assert_cmpfloat (whole.cell_w, ==, bare.cell_w);
  saccade_figure_heatmap_lod_draw_full (c.cr, &f, &(SaccadeCellRange) { 4000, 4000, 20, 25 },
                                        TRUE, NULL, 1000, 800, &zoomed);
  maybe_save (c.surface, "lod-8k-zoomed.png");
  /* zoomed in: 20 rows in ~700 units, room for labels: their margins take room from the
   * cells */
  g_assert_cmpfloat (zoomed.cell_h, >, 20);
  saccade_figure_heatmap_lod_draw_full (c.cr, &(SaccadeHeatmapLodFigure) { .lod = f.lod },
                                        &(SaccadeCellRange) { 4000, 4000, 20, 25 }, TRUE, NULL,
                                        1000, 800, &bare);
  g_assert_cmpfloat (zoomed.cell_h, <, bare.cell_h - 1);
  saccade_figure_heatmap_lod_draw_full (c.cr, &f, &(SaccadeCellRange) { 4000, 4000, 20, 25 },
                                        TRUE, NULL, 1000, 800, &zoomed);
  g_assert_cmpint (zoomed.level, ==, 0);
  /* the minimap: under the colour bar, right of the matrix, the head's shape */
  g_assert_cmpfloat (zoomed.mini_w, >, 40);
  g_assert_cmpfloat (zoomed.mini_w, ==, zoomed.mini_h);
  g_assert_cmpfloat (zoomed.mini_x, >, zoomed.x + zoomed.width);
  g_assert_cmpfloat (whole.mini_w, ==, 0); /* nothing to locate when all is shown */
  canvas_clear (&c);
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/heatmap-lod/whole-8k", test_whole_8k);
  g_test_add_func ("/heatmap-lod/single-link-survives", test_single_link_survives);
  g_test_add_func ("/heatmap-lod/range-draw", test_range_draw);
  g_test_add_func ("/heatmap-lod/range-export", test_range_export);
  g_test_add_func ("/heatmap-lod/whole-8k-export", test_whole_8k_export);
  g_test_add_func ("/heatmap-lod/labels-only-with-room", test_labels_only_with_room);
  rc = g_test_run ();
  g_clear_pointer (&head8k, saccade_lod_unref);
  return rc;
}
