/* saccade-figure-heatmap.c — one head as a heatmap: the renderer shared by
 * SaccadeHeatmapView and export (saccade-figure.h).
 *
 * Layout, in three passes:
 *   1. measure: the widest row and column labels at the base font size, the title, the
 *      colour bar;
 *   2. fit: square cells as big as the space left allows; when cells get smaller than a
 *      line of text the labels shrink (to 6 units) and then only every k-th is drawn, and
 *      when every column label fits inside its cell the labels turn horizontal;
 *   3. draw: masked cells hatched, the cells as one image (one pixel per cell, scaled
 *      without smoothing; k x k pixels per cell on vector surfaces), labels, colour bar.
 * Label margins are sized for all labels, not just the visible ones, so zooming and
 * panning move only the cells.
 *
 * A diverging map is always drawn on a linear scale, whatever f->scale says: its range is
 * [-m, m], and a logarithm of signed values is undefined, so "log" there would be a label
 * on a linear picture. The colour bar says "weight", the truth (saccade_figure_heatmap_scale).
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <math.h>

/* Labels longer than this many font sizes are ellipsized: special tokens and long words
 * must not squeeze the matrix. */
#define LABEL_MAX_EM 12.0
/* The smallest label font size (user units) before labels are thinned instead. */
#define LABEL_MIN_SIZE 6.0

typedef struct {
  double fs, pad, gap;
  double top;                  /* where the title goes: the block is centred with it */
  double title_h;              /* title line and the space under it; 0 without a title */
  double axis_h;               /* the "Query"/"Key" captions */
  double lf;                   /* label font size */
  int step;                    /* every step-th label is drawn */
  gboolean cols_vertical;
  double row_w, col_h;         /* label margins */
  double cb_w, bar_w;          /* colour bar: total width, ramp width */
  double rows, cols;           /* visible cells (fractional when zoomed) */
  double row0, col0;
  double mx, my, cell;         /* the matrix's top-left corner and cell side */
  double vmin, vmax;
} Layout;

static void
normalise_range (const SaccadeHeatmapFigure *f, const SaccadeCellRange *range, Layout *L)
{
  L->rows = range != NULL && range->rows > 0 ? MIN (range->rows, f->n_rows) : f->n_rows;
  L->cols = range != NULL && range->cols > 0 ? MIN (range->cols, f->n_cols) : f->n_cols;
  L->row0 = range != NULL ? CLAMP (range->row0, 0.0, f->n_rows - L->rows) : 0.0;
  L->col0 = range != NULL ? CLAMP (range->col0, 0.0, f->n_cols - L->cols) : 0.0;
}

SaccadeScale
saccade_figure_heatmap_scale (const SaccadeHeatmapFigure *f)
{
  return saccade_colormap_is_diverging (f->colormap) ? SACCADE_SCALE_LINEAR : f->scale;
}

void
saccade_figure_range_from_stats (SaccadeColormap map, SaccadeScale scale, double lo, double hi,
                                 double min_pos, double max_abs, double *vmin, double *vmax)
{
  if (saccade_colormap_is_diverging (map))
    {
      *vmin = max_abs > 0 ? -max_abs : -1.0;
      *vmax = max_abs > 0 ? max_abs : 1.0;
    }
  else if (scale == SACCADE_SCALE_LOG)
    {
      /* Four decades below the maximum: attention spans many orders of magnitude, and the
       * smallest fp16 weights are noise, not structure. */
      *vmax = hi > 0 ? hi : 1.0;
      *vmin = isfinite (min_pos) ? MAX (min_pos, *vmax * 1e-4) : *vmax * 1e-4;
      if (*vmin >= *vmax)
        *vmin = *vmax * 1e-4;
    }
  else
    {
      *vmin = isfinite (lo) ? MIN (0.0, lo) : 0.0;
      *vmax = isfinite (hi) && hi > *vmin ? hi : *vmin + 1.0;
    }
}

void
saccade_figure_heatmap_range (const SaccadeHeatmapFigure *f, double *vmin, double *vmax)
{
  double lo = INFINITY, hi = -INFINITY, min_pos = INFINITY, max_abs = 0.0;

  if (f->vmin != f->vmax)
    {
      *vmin = f->vmin;
      *vmax = f->vmax;
      return;
    }
  for (int r = 0; r < f->n_rows; r++)
    for (int c = 0; c < f->n_cols; c++)
      {
        double v = f->values[(gsize) r * f->n_cols + c];
        if ((f->causal && c > r) || !isfinite (v))
          continue;
        lo = MIN (lo, v);
        hi = MAX (hi, v);
        max_abs = MAX (max_abs, fabs (v));
        if (v > 0)
          min_pos = MIN (min_pos, v);
      }
  saccade_figure_range_from_stats (f->colormap, saccade_figure_heatmap_scale (f), lo, hi,
                                   min_pos, max_abs, vmin, vmax);
}

static const char *
colorbar_caption (const SaccadeHeatmapFigure *f)
{
  if (f->value_name != NULL)
    return f->value_name;
  return saccade_figure_heatmap_scale (f) == SACCADE_SCALE_LOG ? _("weight (log scale)")
                                                                : _("weight");
}

/* Passes 1 and 2 for a figure of @W x @H. */
static void
layout_compute (cairo_t *cr, const SaccadeHeatmapFigure *f, const SaccadeCellRange *range,
                const SaccadeFigureStyle *style, double W, double H, Layout *L)
{
  g_autoptr (PangoLayout) text = saccade_figure_layout_new (cr, style,
                                                            saccade_figure_font_size (style),
                                                            FALSE);
  double row_w0, col_w0, lh0, avail_w, avail_h, w, h;

  L->fs = saccade_figure_font_size (style);
  L->pad = L->fs;
  L->gap = 0.4 * L->fs;
  normalise_range (f, range, L);
  saccade_figure_heatmap_range (f, &L->vmin, &L->vmax);

  /* Pass 1: measure. */
  L->title_h = 0;
  if (f->title != NULL && *f->title != '\0')
    {
      g_autoptr (PangoLayout) title = saccade_figure_layout_new (cr, style, 1.3 * L->fs, TRUE);
      saccade_figure_layout_set (title, f->title, NULL, &h);
      L->title_h = saccade_figure_title_band (cr, style, f->title, W, h + 0.6 * L->fs);
    }
  pango_layout_set_width (text, (int) (LABEL_MAX_EM * L->fs * PANGO_SCALE));
  pango_layout_set_ellipsize (text, PANGO_ELLIPSIZE_END);
  row_w0 = saccade_figure_labels_max_width (text, f->row_labels, f->n_rows, &lh0);
  col_w0 = saccade_figure_labels_max_width (text, f->col_labels, f->n_cols, NULL);
  saccade_figure_layout_set (text, f->row_name != NULL ? f->row_name : _("Query"), &w, &h);
  L->axis_h = h + 0.2 * L->fs;
  L->bar_w = 1.2 * L->fs;
  L->cb_w = 2 * L->gap + saccade_figure_colorbar_width (cr, style, 0.9 * L->fs, L->bar_w,
                                                        saccade_figure_heatmap_scale (f),
                                                        L->vmin, L->vmax,
                                                        colorbar_caption (f));

  /* Pass 2: fit the cells, shrinking then thinning the labels. */
  L->lf = L->fs;
  L->step = 1;
  L->cols_vertical = TRUE;
  for (int pass = 0; pass < 3; pass++)
    {
      double s = L->lf / L->fs;
      L->row_w = row_w0 * s;
      L->col_h = L->cols_vertical ? col_w0 * s : lh0 * s;
      avail_w = W - 2 * L->pad - L->axis_h - L->row_w - L->gap - L->cb_w;
      avail_h = H - 2 * L->pad - L->title_h - L->axis_h - L->col_h - L->gap;
      L->cell = MAX (1e-3, MIN (avail_w / L->cols, avail_h / L->rows));
      if (pass == 0 && L->cell < 1.25 * L->lf)
        L->lf = MAX (L->cell / 1.25, MIN (L->fs, LABEL_MIN_SIZE));
      else if (pass == 1 && col_w0 * (L->lf / L->fs) + 0.3 * L->lf <= L->cell)
        L->cols_vertical = FALSE; /* every column label fits in its cell: horizontal */
      else if (pass >= 1)
        break;
    }
  L->step = MAX (1, (int) ceil (1.25 * L->lf / L->cell));

  /* Centre the block (labels, matrix, colour bar) in what is left. */
  {
    double block_w = L->axis_h + L->row_w + L->gap + L->cols * L->cell + L->cb_w;
    double block_h = L->axis_h + L->col_h + L->gap + L->rows * L->cell;
    double x0 = L->pad + MAX (0.0, (W - 2 * L->pad - block_w) / 2);
    double y0;
    L->top = L->pad + MAX (0.0, (H - 2 * L->pad - L->title_h - block_h) / 2);
    y0 = L->top + L->title_h;
    L->mx = x0 + L->axis_h + L->row_w + L->gap;
    L->my = y0 + L->axis_h + L->col_h + L->gap;
  }
}

void
saccade_figure_heatmap_natural_size (const SaccadeHeatmapFigure *f, double *W, double *H)
{
  cairo_surface_t *scratch = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (scratch);
  SaccadeFigureStyle style;
  int n = MAX (1, MAX (f->n_rows, f->n_cols));
  /* About 520 units for the matrix, cells between 1.5 and 32 units: a 12-token head gets
   * 32-unit cells with room for its labels, a 512-token head fits a page. */
  double cell = CLAMP (520.0 / n, 1.5, 32.0);
  Layout L;

  saccade_figure_style_init (&style);
  /* Lay out at the size the matrix alone needs, then grow by the margins found. */
  layout_compute (cr, f, NULL, &style, 1e5, 1e5, &L);
  L.lf = cell >= 1.25 * L.fs ? L.fs : MAX (cell / 1.25, MIN (L.fs, LABEL_MIN_SIZE));
  {
    g_autoptr (PangoLayout) text = saccade_figure_layout_new (cr, &style, L.lf, FALSE);
    double lh, row_w, col_w;
    pango_layout_set_width (text, (int) (LABEL_MAX_EM * L.fs * PANGO_SCALE));
    pango_layout_set_ellipsize (text, PANGO_ELLIPSIZE_END);
    row_w = saccade_figure_labels_max_width (text, f->row_labels, f->n_rows, &lh);
    col_w = saccade_figure_labels_max_width (text, f->col_labels, f->n_cols, NULL);
    *W = 2 * L.pad + L.axis_h + row_w + L.gap + f->n_cols * cell + L.cb_w;
    *H = 2 * L.pad + L.title_h + L.axis_h + (col_w + 0.3 * L.lf <= cell ? lh : col_w) + L.gap
         + f->n_rows * cell;
    /* The colour bar wants some height even for a one-row matrix. */
    *H = MAX (*H, 2 * L.pad + L.title_h + 8 * L.fs);
    *W = MAX (*W, saccade_figure_title_width (cr, &style, f->title));
    *W = ceil (*W + 1);
    *H = ceil (*H + 1);
  }
  cairo_destroy (cr);
  cairo_surface_destroy (scratch);
}

/* The masked region (cells with column > row) as one staircase polygon, in figure
 * coordinates: rows r >= n_cols - 1 have no masked cells. */
static void
masked_path (cairo_t *cr, const SaccadeHeatmapFigure *f, const Layout *L)
{
  int last = MIN (f->n_rows, f->n_cols - 1); /* rows 0 .. last - 1 have masked cells */
#define X(c) (L->mx + ((c) - L->col0) * L->cell)
#define Y(r) (L->my + ((r) - L->row0) * L->cell)
  if (last <= 0)
    return;
  cairo_move_to (cr, X (1), Y (0));
  cairo_line_to (cr, X (f->n_cols), Y (0));
  cairo_line_to (cr, X (f->n_cols), Y (last));
  for (int r = last - 1; r >= 0; r--)
    {
      cairo_line_to (cr, X (r + 1), Y (r + 1));
      cairo_line_to (cr, X (r + 1), Y (r));
    }
  cairo_close_path (cr);
#undef X
#undef Y
}

/* The thin frame around the matrix. */
static void
outline_matrix (cairo_t *cr, const SaccadeFigureStyle *style, const Layout *L)
{
  cairo_save (cr);
  saccade_figure_set_fg (cr, style, 0.5);
  cairo_set_line_width (cr, 0.75);
  cairo_rectangle (cr, L->mx, L->my, L->cols * L->cell, L->rows * L->cell);
  cairo_stroke (cr);
  cairo_restore (cr);
}

/* The cells: on a vector surface as rectangles when few enough
 * (SACCADE_FIGURE_VECTOR_CELLS_MAX), else as an image scaled without smoothing. */
static void
draw_cells (cairo_t *cr, const SaccadeHeatmapFigure *f, const SaccadeFigureStyle *style,
            const Layout *L)
{
  int r0 = (int) floor (L->row0), r1 = MIN (f->n_rows, (int) ceil (L->row0 + L->rows));
  int c0 = (int) floor (L->col0), c1 = MIN (f->n_cols, (int) ceil (L->col0 + L->cols));
  gboolean vector = saccade_figure_target_is_vector (cr);
  /* On vector surfaces the viewer resamples the image, smoothing if it likes: give each
   * cell enough pixels (about two per unit, at most 4096 a side) that smoothing only
   * touches cell edges. */
  int k = vector ? CLAMP ((int) ceil (2 * L->cell), 1, MAX (1, 4096 / MAX (c1 - c0, r1 - r0)))
                 : 1;
  cairo_surface_t *img;
  cairo_pattern_t *pat;
  cairo_matrix_t m;

  cairo_save (cr);
  cairo_rectangle (cr, L->mx, L->my, L->cols * L->cell, L->rows * L->cell);
  cairo_clip (cr);
  if (f->causal)
    {
      masked_path (cr, f, L);
      saccade_figure_fill_masked (cr, style, CLAMP (L->cell / 3, 3.0, 6.0));
    }
  if (vector && (gint64) (r1 - r0) * (c1 - c0) <= SACCADE_FIGURE_VECTOR_CELLS_MAX)
    {
      img = saccade_figure_cells_image (f->values, f->n_cols, r0, r1, c0, c1, f->causal, 1,
                                        f->colormap, saccade_figure_heatmap_scale (f), L->vmin,
                                        L->vmax);
      saccade_figure_cells_rects (cr, img, L->mx + (c0 - L->col0) * L->cell,
                                  L->my + (r0 - L->row0) * L->cell, L->cell);
      cairo_surface_destroy (img);
      cairo_restore (cr);
      outline_matrix (cr, style, L);
      return;
    }
  img = saccade_figure_cells_image (f->values, f->n_cols, r0, r1, c0, c1, f->causal, k,
                                    f->colormap, saccade_figure_heatmap_scale (f), L->vmin,
                                    L->vmax);
  pat = cairo_pattern_create_for_surface (img);
  /* Pattern space is image pixels: pixel (0, 0) is cell (r0, c0). */
  cairo_matrix_init_scale (&m, k / L->cell, k / L->cell);
  cairo_matrix_translate (&m, -(L->mx + (c0 - L->col0) * L->cell),
                          -(L->my + (r0 - L->row0) * L->cell));
  cairo_pattern_set_matrix (pat, &m);
  cairo_pattern_set_filter (pat, CAIRO_FILTER_NEAREST);
  cairo_set_source (cr, pat);
  cairo_rectangle (cr, L->mx + (c0 - L->col0) * L->cell, L->my + (r0 - L->row0) * L->cell,
                   (c1 - c0) * L->cell, (r1 - r0) * L->cell);
  cairo_fill (cr);
  cairo_pattern_destroy (pat);
  cairo_surface_destroy (img);
  cairo_restore (cr);

  outline_matrix (cr, style, L);
}

static void
draw_labels (cairo_t *cr, const SaccadeHeatmapFigure *f, const SaccadeFigureStyle *style,
             const Layout *L, double W)
{
  g_autoptr (PangoLayout) text = saccade_figure_layout_new (cr, style, L->lf, FALSE);
  double mw = L->cols * L->cell, mh = L->rows * L->cell, w, h;
  char buf[16];

  pango_layout_set_width (text, (int) (LABEL_MAX_EM * L->fs * PANGO_SCALE));
  pango_layout_set_ellipsize (text, PANGO_ELLIPSIZE_END);
  cairo_save (cr);
  saccade_figure_set_fg (cr, style, 1.0);

  /* Rows: right-aligned against the matrix. */
  for (int r = (int) floor (L->row0); r < MIN (f->n_rows, (int) ceil (L->row0 + L->rows)); r++)
    {
      double cy = L->my + (r + 0.5 - L->row0) * L->cell;
      if (r % L->step != 0 || cy < L->my || cy > L->my + mh)
        continue;
      saccade_figure_layout_set (text, saccade_figure_label (f->row_labels, r, buf), &w, &h);
      saccade_figure_layout_draw (cr, text, L->mx - L->gap - w, cy - h / 2);
    }
  /* Columns: reading upwards from the matrix, or horizontal and centred when they fit. */
  for (int c = (int) floor (L->col0); c < MIN (f->n_cols, (int) ceil (L->col0 + L->cols)); c++)
    {
      double cx = L->mx + (c + 0.5 - L->col0) * L->cell;
      if (c % L->step != 0 || cx < L->mx || cx > L->mx + mw)
        continue;
      saccade_figure_layout_set (text, saccade_figure_label (f->col_labels, c, buf), &w, &h);
      if (L->cols_vertical)
        {
          cairo_save (cr);
          cairo_translate (cr, cx - h / 2, L->my - L->gap);
          cairo_rotate (cr, -G_PI / 2);
          saccade_figure_layout_draw (cr, text, 0, 0);
          cairo_restore (cr);
        }
      else
        saccade_figure_layout_draw (cr, text, cx - w / 2, L->my - L->gap - h);
    }

  /* Axis captions, muted: "Key" above the column labels, "Query" left of the rows. */
  {
    g_autoptr (PangoLayout) cap = saccade_figure_layout_new (cr, style, L->fs, FALSE);
    saccade_figure_set_fg (cr, style, 0.6);
    saccade_figure_layout_set (cap, f->col_name != NULL ? f->col_name : _("Key"), &w, &h);
    saccade_figure_layout_draw (cr, cap, L->mx + mw / 2 - w / 2,
                                L->my - L->gap - L->col_h - L->axis_h);
    saccade_figure_layout_set (cap, f->row_name != NULL ? f->row_name : _("Query"), &w, &h);
    cairo_translate (cr, L->mx - L->gap - L->row_w - L->axis_h, L->my + mh / 2 + w / 2);
    cairo_rotate (cr, -G_PI / 2);
    saccade_figure_layout_draw (cr, cap, 0, 0);
  }
  cairo_restore (cr);
}

void
saccade_figure_heatmap_draw_full (cairo_t *cr, const SaccadeHeatmapFigure *f,
                                  const SaccadeCellRange *range, const SaccadeFigureStyle *style,
                                  double width, double height, SaccadeHeatmapGeometry *geom)
{
  SaccadeFigureStyle tmp;
  Layout L;

  style = saccade_figure_style_resolve (style, &tmp);
  cairo_save (cr);
  saccade_figure_paint_background (cr, style, width, height);
  if (geom != NULL)
    *geom = (SaccadeHeatmapGeometry) { 0 };

  if (f->values == NULL || f->n_rows <= 0 || f->n_cols <= 0)
    {
      saccade_figure_draw_title (cr, style, f->title, width, saccade_figure_font_size (style));
      cairo_restore (cr);
      return;
    }

  layout_compute (cr, f, range, style, width, height, &L);
  saccade_figure_draw_title (cr, style, f->title, width, L.top);
  draw_cells (cr, f, style, &L);
  draw_labels (cr, f, style, &L, width);
  {
    double bar_h = MAX (L.rows * L.cell, MIN (8 * L.fs, height - L.my - L.pad));
    saccade_figure_colorbar_draw (cr, style, 0.9 * L.fs, f->colormap,
                                  saccade_figure_heatmap_scale (f), L.vmin, L.vmax,
                                  colorbar_caption (f), L.mx + L.cols * L.cell + 2 * L.gap,
                                  L.my, L.bar_w, bar_h);
  }
  if (geom != NULL)
    *geom = (SaccadeHeatmapGeometry) {
      .x = L.mx, .y = L.my, .width = L.cols * L.cell, .height = L.rows * L.cell,
      .cell_w = L.cell, .cell_h = L.cell,
      .range = { L.row0, L.col0, L.rows, L.cols },
      .n_rows = f->n_rows, .n_cols = f->n_cols,
    };
  cairo_restore (cr);
}

void
saccade_figure_heatmap_draw (cairo_t *cr, const SaccadeHeatmapFigure *f, double width,
                             double height)
{
  saccade_figure_heatmap_draw_full (cr, f, NULL, NULL, width, height, NULL);
}

gboolean
saccade_heatmap_geometry_cell_at (const SaccadeHeatmapGeometry *geom, double x, double y,
                                  int *row, int *col)
{
  double r, c;

  if (geom->cell_w <= 0 || x < geom->x || y < geom->y || x >= geom->x + geom->width
      || y >= geom->y + geom->height)
    return FALSE;
  r = floor (geom->range.row0 + (y - geom->y) / geom->cell_h);
  c = floor (geom->range.col0 + (x - geom->x) / geom->cell_w);
  if (r < 0 || c < 0 || r >= geom->n_rows || c >= geom->n_cols)
    return FALSE;
  *row = (int) r;
  *col = (int) c;
  return TRUE;
}
