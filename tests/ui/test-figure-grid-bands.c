/* test-figure-grid-bands.c — the grid's layers wrapped into bands (issue 30: the Model
 * grid used half the page), pinned down on the geometry every user of the grid reads:
 *
 *   - for the shapes of the models Saccade runs (SmolLM2 30 x 9 in 3 KV groups, Gemma 3
 *     18 x 4 with one, Qwen2.5 0.5B 24 x 14 and 1.5B 28 x 12 with 2) and several areas,
 *     head_at (the centre and the inner corners of head_rect (l, h)) is (l, h) for every
 *     head, no two thumbnails overlap, all lie inside the area and inside the extent;
 *   - the bands chosen are those that give the biggest thumbnails with every layer
 *     numbered: no band count asked for (1 .. n_layers) gives a bigger one unless it must
 *     thin the numbers (then at most a third bigger); a landscape window wraps SmolLM2's
 *     30 layers, its export's natural size keeps them in one band, a journal column
 *     (89 mm at 8 pt: 315 x 430 units) numbers all 30, a band count asked for is kept;
 *   - every layer is numbered in every band (ink beside each layer's first thumbnail, on
 *     the side its number goes), Gemma 3's global layers 5, 11 and 17 among them;
 *   - the Compare page's three figures (SaccadeTiles) go into two rows where that makes
 *     their squares bigger (the page at 1600 x 1000), stay in a row where it does not
 *     (1280 x 800).
 */
#include <math.h>

#include "tests/ui/figure-pixels.h"
#include "ui/figures/saccade-figure-private.h"
#include "ui/widgets/saccade-tiles.h"

typedef struct {
  const char *name;
  int n_layers, n_heads, n_kv_heads;
  gboolean gemma; /* local layers: five of every six (window 512), as Gemma 3 */
} Shape;

static const Shape shapes[] = {
  { "SmolLM2 135M", 30, 9, 3, FALSE },
  { "Gemma 3 270M", 18, 4, 1, TRUE },
  { "Qwen2.5 0.5B", 24, 14, 2, FALSE },
  { "Qwen2.5 1.5B", 28, 12, 2, FALSE },
  { "small", 2, 4, 2, FALSE },
};

/* Areas a figure is drawn in: the Model page at 1600 x 1000 and 1280 x 800, a short wide
 * strip, a tall narrow one, a small square. */
static const int areas[][2] = {
  { 1040, 740 }, { 760, 560 }, { 1600, 300 }, { 420, 1100 }, { 320, 320 },
};

#define N 4 /* tokens per head */

typedef struct {
  float *heads;
  unsigned windows[64];
  SaccadeGridFigure f;
} Grid;

static void
grid_init (Grid *g, const Shape *s)
{
  gsize nh = (gsize) s->n_layers * s->n_heads;

  g->heads = g_new (float, nh * N * N);
  for (gsize i = 0; i < nh * N * N; i++)
    g->heads[i] = (float) ((i * 7) % 11) / 10.0f;
  for (int l = 0; l < s->n_layers; l++)
    g->windows[l] = s->gemma && l % 6 != 5 ? 512 : 0;
  g->f = (SaccadeGridFigure) {
    .n_layers = s->n_layers, .n_heads = s->n_heads, .n_kv_heads = s->n_kv_heads, .n = N,
    .heads = g->heads, .title = s->name, .colormap = SACCADE_COLORMAP_VIRIDIS,
    .layer_windows = g->windows,
  };
}

/* Draws @f into a fresh W x H canvas; the caller clears it. */
static SaccadeGridGeometry
draw (Canvas *c, const SaccadeGridFigure *f, int W, int H)
{
  SaccadeGridGeometry g;

  canvas_init (c, W, H);
  saccade_figure_grid_draw_full (c->cr, f, NULL, NULL, -1, -1, W, H, &g);
  cairo_surface_flush (c->surface);
  return g;
}

static gboolean
overlap (const double a[4], const double b[4])
{
  return a[0] < b[0] + b[2] && b[0] < a[0] + a[2] && a[1] < b[1] + b[3] && b[1] < a[1] + a[3];
}

static void
check_geometry (const SaccadeGridGeometry *g, int W, int H, const char *what)
{
  int nh = g->n_layers * g->n_heads;
  g_autofree double *rects = g_new (double, 4 * nh);
  double ext[4];

  g_assert_cmpfloat (g->thumb, >, 1);
  g_assert_true (saccade_grid_geometry_extent (g, ext));
  for (int l = 0; l < g->n_layers; l++)
    for (int h = 0; h < g->n_heads; h++)
      {
        double *r = rects + 4 * (l * g->n_heads + h);

        saccade_grid_geometry_head_rect (g, l, h, r);
        g_assert_cmpfloat (r[2], ==, g->thumb);
        if (r[0] < 0 || r[1] < 0 || r[0] + r[2] > W || r[1] + r[3] > H)
          g_error ("%s: L%d.H%d at (%.1f, %.1f) is outside the %d x %d area", what, l, h, r[0],
                   r[1], W, H);
        g_assert_cmpfloat (r[0], >=, ext[0] - 1e-9);
        g_assert_cmpfloat (r[1], >=, ext[1] - 1e-9);
        g_assert_cmpfloat (r[0] + r[2], <=, ext[0] + ext[2] + 1e-9);
        g_assert_cmpfloat (r[1] + r[3], <=, ext[1] + ext[3] + 1e-9);
        /* the centre and the four inner corners */
        for (int p = 0; p < 5; p++)
          {
            int hl = -1, hh = -1;
            double x = p == 0 ? r[0] + r[2] / 2 : (p % 2 ? r[0] + 0.01 : r[0] + r[2] - 0.01);
            double y = p == 0 ? r[1] + r[3] / 2 : (p < 3 ? r[1] + 0.01 : r[1] + r[3] - 0.01);
            if (!saccade_grid_geometry_head_at (g, x, y, &hl, &hh) || hl != l || hh != h)
              g_error ("%s: head_at (%.2f, %.2f) inside L%d.H%d's rectangle gave L%d.H%d", what,
                       x, y, l, h, hl, hh);
          }
      }
  for (int i = 0; i < nh; i++)
    for (int j = i + 1; j < nh; j++)
      if (overlap (rects + 4 * i, rects + 4 * j))
        g_error ("%s: heads %d and %d overlap", what, i, j);
  /* Outside every thumbnail: the gap right of the first, above the area, nothing. */
  {
    int hl, hh;
    g_assert_false (saccade_grid_geometry_head_at (g, ext[0] - 1, ext[1] + 1, &hl, &hh));
    g_assert_false (saccade_grid_geometry_head_at (g, rects[0] + rects[2] + 0.05 * g->thumb,
                                                   rects[1] + 1, &hl, &hh));
  }
}

static void
test_round_trip (void)
{
  for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
    for (guint a = 0; a < G_N_ELEMENTS (areas); a++)
      for (int bands = 0; bands <= 3; bands++)
        {
          g_autofree char *what = g_strdup_printf ("%s in %d x %d, bands %d", shapes[s].name,
                                                   areas[a][0], areas[a][1], bands);
          SaccadeGridGeometry g;
          Grid grid;
          Canvas c;

          grid_init (&grid, &shapes[s]);
          grid.f.bands = bands;
          g = draw (&c, &grid.f, areas[a][0], areas[a][1]);
          check_geometry (&g, areas[a][0], areas[a][1], what);
          if (bands > 0)
            {
              int per = (shapes[s].n_layers + bands - 1) / bands;
              g_assert_cmpint (g.band_layers, ==, per);
              g_assert_cmpint (g.n_bands, ==, (shapes[s].n_layers + per - 1) / per);
            }
          canvas_clear (&c);
          g_free (grid.heads);
        }
}

/* The automatic band count gives thumbnails at least as big as any asked for, but for one
 * that would thin the layer numbers where the choice numbers all. */
static void
test_bands_chosen (void)
{
  for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
    for (guint a = 0; a < G_N_ELEMENTS (areas); a++)
      {
        int W = areas[a][0], H = areas[a][1];
        SaccadeGridGeometry best, g;
        Grid grid;
        Canvas c;

        grid_init (&grid, &shapes[s]);
        best = draw (&c, &grid.f, W, H);
        canvas_clear (&c);
        for (int b = 1; b <= shapes[s].n_layers; b++)
          {
            grid.f.bands = b;
            g = draw (&c, &grid.f, W, H);
            canvas_clear (&c);
            /* bigger only where its layer numbers would be thinned and the choice numbers
             * every layer at no more than a quarter of the side */
            if (g.thumb > best.thumb * (1 + 1e-9)
                && !(g.layer_label_every > 1 && best.layer_label_every == 1
                     && best.thumb >= 0.75 * g.thumb))
              g_error ("%s in %d x %d: %d bands give %.2f-px heads (layers numbered every "
                       "%d), the automatic choice (%d bands) %.2f (every %d)", shapes[s].name,
                       W, H, b, g.thumb, g.layer_label_every, best.n_bands, best.thumb,
                       best.layer_label_every);
          }
        g_free (grid.heads);
      }
}

static void
test_bands_expected (void)
{
  Grid grid;
  Canvas c;
  SaccadeGridGeometry one, g;

  grid_init (&grid, &shapes[0]); /* SmolLM2, 30 x 9 */
  /* The Model page at 1600 x 1000: wrapped, and the heads much bigger than in one band. */
  g = draw (&c, &grid.f, 1040, 740);
  canvas_clear (&c);
  grid.f.bands = 1;
  one = draw (&c, &grid.f, 1040, 740);
  canvas_clear (&c);
  g_assert_cmpint (g.n_bands, >=, 2);
  g_assert_cmpfloat (g.thumb, >, 1.2 * one.thumb);
  {
    double ext[4];
    g_assert_true (saccade_grid_geometry_extent (&g, ext));
    g_assert_cmpfloat (ext[3], >, 0.75 * 740); /* the height is used */
  }
  /* The export's natural size (a landscape page for one band of 28-unit heads): one band,
   * layers across. A short wide strip: layers down, wrapped into columns of bands. */
  grid.f.bands = 0;
  {
    double w, h;
    saccade_figure_grid_natural_size (&grid.f, &w, &h);
    g = draw (&c, &grid.f, (int) w, (int) h);
    canvas_clear (&c);
    g_assert_cmpint (g.n_bands, ==, 1);
    g_assert_true (g.layers_across);
    g_assert_cmpfloat (g.thumb, >, 27);
  }
  g = draw (&c, &grid.f, 1600, 300);
  canvas_clear (&c);
  g_assert_cmpint (g.n_bands, >, 1);
  g_assert_false (g.layers_across);
  /* A journal column: every layer numbered (in one band across, only every other one fit). */
  g = draw (&c, &grid.f, 315, 430);
  canvas_clear (&c);
  g_assert_cmpint (g.layer_label_every, ==, 1);
  grid.f.bands = 2;
  one = draw (&c, &grid.f, 315, 430);
  canvas_clear (&c);
  grid.f.bands = 0;
  g_assert_cmpfloat (g.thumb, >=, 0.75 * one.thumb);
  /* Asked for: kept. 30 layers in 3 bands of 10; band 1 starts at layer 10, one band step
   * further along the heads' axis than layer 0. */
  grid.f.bands = 3;
  g = draw (&c, &grid.f, 1040, 740);
  canvas_clear (&c);
  g_assert_cmpint (g.n_bands, ==, 3);
  g_assert_cmpint (g.band_layers, ==, 10);
  {
    double r0[4], r10[4];
    int ax = g.layers_across ? 1 : 0;
    saccade_grid_geometry_head_rect (&g, 0, 0, r0);
    saccade_grid_geometry_head_rect (&g, 10, 0, r10);
    g_assert_cmpfloat (fabs (r10[ax] - r0[ax] - g.band_step), <, 1e-9);
    g_assert_cmpfloat (fabs (r10[1 - ax] - r0[1 - ax]), <, 1e-9);
  }
  g_free (grid.heads);
}

/* Ink where layer @l's number goes: above its first thumbnail with layers across, left of
 * it with layers down (between the thumbnail and the band before, or the margin). */
static int
layer_number_ink (Canvas *c, const SaccadeGridGeometry *g, int l)
{
  double r[4], fs = SACCADE_FIGURE_BASE_FONT;

  saccade_grid_geometry_head_rect (g, l, 0, r);
  if (g->layers_across)
    return ink_in (c->surface, r[0], r[1] - g->thumb * 0.15 - 1.6 * fs, r[0] + r[2],
                   r[1] - g->thumb * 0.15 - 1, 0xffffff);
  return ink_in (c->surface, r[0] - g->thumb * 0.15 - 2.2 * fs, r[1],
                 r[0] - g->thumb * 0.15 - 1, r[1] + r[3], 0xffffff);
}

static void
test_every_layer_numbered (void)
{
  for (guint s = 0; s < G_N_ELEMENTS (shapes); s++)
    for (guint a = 0; a < 3; a++) /* the two window sizes, and a journal column */
      {
        Grid grid;
        Canvas c;
        SaccadeGridGeometry g;

        int W = a < 2 ? areas[a][0] : 315, H = a < 2 ? areas[a][1] : 430;

        grid_init (&grid, &shapes[s]);
        g = draw (&c, &grid.f, W, H);
        g_assert_cmpint (g.layer_label_every, ==, 1);
        for (int l = 0; l < shapes[s].n_layers; l++)
          if (layer_number_ink (&c, &g, l) < 3)
            g_error ("%s in %d x %d (%d bands, layers %s): layer %d has no number",
                     shapes[s].name, W, H, g.n_bands,
                     g.layers_across ? "across" : "down", l);
        canvas_clear (&c);
        g_free (grid.heads);
      }
}

/* The exported size with bands asked for: wide enough for the bands, laid out as asked. */
static void
test_natural_size_bands (void)
{
  Grid grid;
  double w1, h1, w2, h2;
  Canvas c;
  SaccadeGridGeometry g;

  grid_init (&grid, &shapes[0]);
  saccade_figure_grid_natural_size (&grid.f, &w1, &h1);
  grid.f.bands = 2;
  saccade_figure_grid_natural_size (&grid.f, &w2, &h2);
  g_assert_cmpfloat (h2, >, 1.5 * h1 - 100);
  g_assert_cmpfloat (w2, <, w1);
  g = draw (&c, &grid.f, (int) w2, (int) h2);
  g_assert_cmpint (g.n_bands, ==, 2);
  g_assert_cmpfloat (g.thumb, >, 25); /* the natural 28-unit heads, give or take rounding */
  canvas_clear (&c);
  g_free (grid.heads);
}

static void
test_tiles_columns (void)
{
  double side, row_side;
  int cols;

  /* The Compare page's pair at 1600 x 1000 (1050 x 780 for three figures): two rows, and
   * the square much bigger than in one row. At 1280 x 800 (990 x 590): the row. */
  cols = saccade_tiles_best_columns (3, 1050, 780, 150, 125, 160, 160, &side);
  g_assert_cmpint (cols, ==, 2);
  row_side = MIN (1050 / 3.0 - 150, 780 - 125);
  g_assert_cmpfloat (side, >, 1.25 * row_side);
  g_assert_cmpint (saccade_tiles_best_columns (3, 990, 590, 150, 125, 160, 160, NULL), ==, 3);
  /* A short wide strip: one row. A tall narrow one: one column. */
  g_assert_cmpint (saccade_tiles_best_columns (3, 1500, 400, 150, 125, 160, 160, NULL), ==, 3);
  g_assert_cmpint (saccade_tiles_best_columns (3, 500, 1500, 150, 125, 160, 160, NULL), ==, 1);
  /* Tiles under the children's minimum are not chosen: one row. */
  g_assert_cmpint (saccade_tiles_best_columns (3, 900, 300, 0, 0, 160, 160, NULL), ==, 3);
  g_assert_cmpint (saccade_tiles_best_columns (1, 300, 300, 150, 125, 160, 160, NULL), ==, 1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/figures/grid-bands/round-trip", test_round_trip);
  g_test_add_func ("/figures/grid-bands/chosen", test_bands_chosen);
  g_test_add_func ("/figures/grid-bands/expected", test_bands_expected);
  g_test_add_func ("/figures/grid-bands/every-layer-numbered", test_every_layer_numbered);
  g_test_add_func ("/figures/grid-bands/natural-size", test_natural_size_bands);
  g_test_add_func ("/widgets/tiles/columns", test_tiles_columns);
  return g_test_run ();
}
