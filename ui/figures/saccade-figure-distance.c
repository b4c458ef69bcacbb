/* saccade-figure-distance.c — a symmetric distance matrix (the head-distance matrix of the
 * Compare page) in a clustering order, with the clustering's dendrogram above it
 * (saccade-figure.h). The renderer of the Compare page's matrix and of its export.
 *
 * In three passes:
 *   1. layout: title; the dendrogram's band (a fifth of the matrix side, at most 80 units)
 *      above the matrix; item labels on the left and under the matrix, thinned to every
 *      k-th when cells are smaller than a line; a colour bar on the right;
 *   2. cells: the matrix permuted into the figure's order becomes one image, one pixel per
 *      cell (k x k on vector surfaces), drawn without smoothing, as the heatmap does;
 *   3. the dendrogram: every merge is a bracket from its two children's x positions (a leaf
 *      sits at its cell's centre, a cluster at the mean of its children) up to its height,
 *      scaled so that the last merge touches the band's top.
 * The merges' heights must be non-decreasing along the merge order for the brackets to
 * nest (average linkage guarantees it); anything else still draws, only crossing.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <math.h>

typedef struct {
  double fs, pad, title_h, dendro_h, label_w, lf, cb_w, bar_w;
  double mx, my, cell;
  int step;
  double vmin, vmax;
} Layout;

static void
range_of (const SaccadeDistanceFigure *f, double *vmin, double *vmax)
{
  double hi = 0;
  gsize k, nn = (gsize) f->n * f->n;

  if (f->vmin != f->vmax)
    {
      *vmin = f->vmin;
      *vmax = f->vmax;
      return;
    }
  for (k = 0; k < nn; k++)
    if (isfinite (f->values[k]))
      hi = MAX (hi, f->values[k]);
  *vmin = 0;
  *vmax = hi > 0 ? hi : 1;
}

static int
item_at (const SaccadeDistanceFigure *f, int pos)
{
  /* The order should be a permutation of 0..n-1 (sc_cluster_average()'s); anything else
   * falls back to the natural place instead of indexing outside the figure. */
  if (f->order == NULL || f->order[pos] < 0 || f->order[pos] >= f->n)
    return pos;
  return f->order[pos];
}

static void
layout_compute (cairo_t *cr, const SaccadeDistanceFigure *f, const SaccadeFigureStyle *style,
                double width, double height, Layout *L)
{
  g_autoptr (PangoLayout) layout = NULL;
  double line_h = 0, side;

  L->fs = saccade_figure_font_size (style);
  L->pad = L->fs;
  L->title_h = saccade_figure_title_band (cr, style, f->title, width, 1.8 * L->fs);
  range_of (f, &L->vmin, &L->vmax);
  L->bar_w = L->fs;
  L->cb_w = saccade_figure_colorbar_width (cr, style, L->fs, L->bar_w, SACCADE_SCALE_LINEAR,
                                           L->vmin, L->vmax, f->value_name) + L->fs;
  L->lf = MAX (6.0, 0.85 * L->fs);
  layout = saccade_figure_layout_new (cr, style, L->lf, FALSE);
  L->label_w = saccade_figure_labels_max_width (layout, f->labels, f->n, &line_h) + 0.4 * L->fs;
  /* The matrix is square: the side both directions allow, the dendrogram taking a fifth of
   * it above. */
  {
    double h_rest = height - L->pad * 1.5 - L->title_h - L->label_w - 0.3 * L->fs;
    double h_side = f->merges != NULL ? MAX (h_rest / 1.2, h_rest - 80.0 - 0.3 * L->fs) : h_rest;
    side = MIN (width - 2 * L->pad - L->label_w - L->cb_w, h_side);
  }
  side = MAX (side, 1.0);
  L->dendro_h = f->merges != NULL ? MIN (0.2 * side, 80.0) : 0;
  L->cell = side / MAX (1, f->n);
  L->mx = L->pad + L->label_w + MAX (0.0, (width - 2 * L->pad - L->label_w - L->cb_w - side) / 2);
  L->my = L->pad * 0.5 + L->title_h + L->dendro_h + (L->dendro_h > 0 ? 0.3 * L->fs : 0);
  L->step = MAX (1, (int) ceil (line_h / MAX (L->cell, 1e-6)));
}

/* Pass 3: brackets; x of leaf position p is mx + (p + 0.5) * cell. */
static void
draw_dendrogram (cairo_t *cr, const SaccadeDistanceFigure *f, const SaccadeFigureStyle *style,
                 const Layout *L)
{
  int n = f->n, k;
  g_autofree double *x = g_new (double, 2 * n);
  g_autofree double *y = g_new (double, 2 * n);
  g_autofree int *pos = g_new (int, n);
  g_autofree gboolean *made = g_new0 (gboolean, 2 * n); /* clusters with a position */
  double top = f->merges[n - 2].height, base = L->my - 0.3 * L->fs;

  if (!(top > 0))
    top = 1;
  for (k = 0; k < n; k++)
    pos[k] = k;
  for (k = 0; k < n; k++)
    pos[item_at (f, k)] = k;
  for (k = 0; k < n; k++)
    {
      x[k] = L->mx + (pos[k] + 0.5) * L->cell;
      y[k] = base;
      made[k] = TRUE;
    }
  saccade_figure_set_fg (cr, style, 0.75);
  cairo_set_line_width (cr, MAX (0.4, L->fs * 0.05));
  for (k = 0; k < n - 1; k++)
    {
      const SaccadeDendroMerge *m = &f->merges[k];
      double my = base - MAX (0.0, m->height) / top * L->dendro_h;
      /* A merge naming a cluster not made yet, or one skipped before it (so later merges
       * that name a skipped one are skipped too), or a height that is not a number: not
       * ours to draw. The data may come from a store someone else wrote. */
      if (m->a < 0 || m->b < 0 || m->a >= n + k || m->b >= n + k || !made[m->a] || !made[m->b]
          || !isfinite (my))
        continue;
      cairo_move_to (cr, x[m->a], y[m->a]);
      cairo_line_to (cr, x[m->a], my);
      cairo_line_to (cr, x[m->b], my);
      cairo_line_to (cr, x[m->b], y[m->b]);
      x[n + k] = (x[m->a] + x[m->b]) / 2;
      y[n + k] = my;
      made[n + k] = TRUE;
    }
  cairo_stroke (cr);
}

void
saccade_figure_distance_draw_full (cairo_t *cr, const SaccadeDistanceFigure *f,
                                   const SaccadeFigureStyle *style_in, double width,
                                   double height, SaccadeHeatmapGeometry *geom)
{
  SaccadeFigureStyle tmp;
  const SaccadeFigureStyle *style = saccade_figure_style_resolve (style_in, &tmp);
  g_autoptr (PangoLayout) layout = NULL;
  g_autofree float *permuted = NULL;
  cairo_surface_t *img;
  double side, w, h;
  int n = f->n, k = 1;
  Layout L;

  if (geom != NULL)
    *geom = (SaccadeHeatmapGeometry) { 0 };
  cairo_save (cr);
  saccade_figure_paint_background (cr, style, width, height);
  saccade_figure_draw_title (cr, style, f->title, width, 0.5 * saccade_figure_font_size (style));
  if (n <= 0 || f->values == NULL)
    {
      cairo_restore (cr);
      return;
    }
  layout_compute (cr, f, style, width, height, &L);
  side = L.cell * n;

  /* 2. cells, in order. */
  permuted = g_new (float, (gsize) n * n);
  for (int r = 0; r < n; r++)
    for (int c = 0; c < n; c++)
      permuted[(gsize) r * n + c] = (float) f->values[(gsize) item_at (f, r) * n + item_at (f, c)];
  if (saccade_figure_target_is_vector (cr))
    k = CLAMP ((int) ceil (2 * L.cell), 1, 16);
  img = saccade_figure_cells_image (permuted, n, 0, n, 0, n, FALSE, k, f->colormap,
                                    SACCADE_SCALE_LINEAR, L.vmin, L.vmax);
  cairo_save (cr);
  cairo_rectangle (cr, L.mx, L.my, side, side);
  cairo_clip (cr);
  cairo_translate (cr, L.mx, L.my);
  cairo_scale (cr, L.cell / k, L.cell / k);
  cairo_set_source_surface (cr, img, 0, 0);
  cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_NEAREST);
  cairo_paint (cr);
  cairo_restore (cr);
  cairo_surface_destroy (img);

  /* labels: rows on the left (right-aligned), columns below (reading upwards). */
  layout = saccade_figure_layout_new (cr, style, L.lf, FALSE);
  saccade_figure_set_fg (cr, style, 1.0);
  for (int p = 0; p < n; p += L.step)
    {
      char buf[16];
      const char *s = saccade_figure_label (f->labels, item_at (f, p), buf);
      saccade_figure_layout_set (layout, s, &w, &h);
      saccade_figure_layout_draw (cr, layout, L.mx - 0.3 * L.fs - w,
                                  L.my + (p + 0.5) * L.cell - h / 2);
      cairo_save (cr);
      cairo_translate (cr, L.mx + (p + 0.5) * L.cell - h / 2, L.my + side + 0.3 * L.fs + w);
      cairo_rotate (cr, -G_PI / 2);
      saccade_figure_layout_draw (cr, layout, 0, 0);
      cairo_restore (cr);
    }
  if (f->merges != NULL && n > 1)
    draw_dendrogram (cr, f, style, &L);
  saccade_figure_colorbar_draw (cr, style, L.fs, f->colormap, SACCADE_SCALE_LINEAR, L.vmin,
                                L.vmax, f->value_name, L.mx + side + L.fs, L.my, L.bar_w,
                                side);
  if (geom != NULL)
    *geom = (SaccadeHeatmapGeometry) {
      .x = L.mx, .y = L.my, .width = side, .height = side, .cell_w = L.cell, .cell_h = L.cell,
      .range = { 0, 0, n, n }, .n_rows = n, .n_cols = n,
    };
  cairo_restore (cr);
}

void
saccade_figure_distance_draw (cairo_t *cr, const SaccadeDistanceFigure *f, double width,
                              double height)
{
  saccade_figure_distance_draw_full (cr, f, NULL, width, height, NULL);
}

void
saccade_figure_distance_natural_size (const SaccadeDistanceFigure *f, double *W, double *H)
{
  cairo_surface_t *scratch = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (scratch);
  SaccadeFigureStyle style;
  Layout L;
  /* Cells of 12 units up to 50 items, then a 600-unit matrix (270 heads: 2.2 units a
   * cell, labels thinned). */
  double side = MIN (12.0 * MAX (1, f->n), 600.0);

  saccade_figure_style_init (&style);
  layout_compute (cr, f, &style, 1e5, 1e5, &L);
  *W = ceil (2 * L.pad + L.label_w + side + L.cb_w + 1);
  *H = ceil (1.5 * L.pad + L.title_h + (f->merges != NULL ? MIN (0.2 * side, 80.0) + 0.3 * L.fs : 0)
             + side + L.label_w + 0.3 * L.fs + 1);
  *W = MAX (*W, ceil (saccade_figure_title_width (cr, &style, f->title) + 1));
  cairo_destroy (cr);
  cairo_surface_destroy (scratch);
}
