/* saccade-figure-heatmap-lod.c — one head of any length as a heatmap, drawn from its
 * level-of-detail pyramid (saccade-lod.h): the renderer of SaccadeHeatmapView and of a
 * range's export (saccade-figure.h). The small-matrix renderer (saccade-figure-heatmap.c)
 * stays for figures that are not heads' pyramids.
 *
 * What a frame costs is what it shows, not what the head holds: the cells come from the
 * level whose cells are at least one device pixel (at 8,192 tokens in an 800-pixel view,
 * level 4: 512 cells a side), one image pixel per cell, scaled up without smoothing; only
 * the visible labels and ticks are laid out. Layout, in three passes:
 *   1. measure: title, captions, the widest position number, the colour bar;
 *   2. fit: square cells as big as the room left allows, first without token labels; when
 *      those cells are tall enough for a readable label (80 % of the text size), again
 *      with the label margins, and labels are on if the cells still are;
 *   3. draw: masked cells hatched (at the drawn level's block), the cells, cell outlines
 *      when cells are big, position ticks at a readable spacing (1, 2, 5 × 10^k tokens),
 *      token labels when on, captions, colour bar, minimap.
 * Margins depend on the whole head (its largest position) and on the labels' widest width
 * (SaccadeHeatmapLodFigure.label_em), never on the range shown: panning moves only cells.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <math.h>

/* Labels longer than this many font sizes are ellipsized (as in the small heatmap). */
#define LABEL_MAX_EM 12.0
/* Token labels are never smaller than this share of the figure's text size: below it they
 * are not drawn (the position ticks still are). 6-unit labels were unreadable. */
#define LABEL_MIN_FRACTION 0.8
/* A label needs its cell to be this many times its font size tall. */
#define LABEL_LINE 1.25
/* Ticks: marks this many font sizes long, numbers at 90 % of the text size, at least this
 * many font sizes apart (besides the widest number). */
#define TICK_LEN_EM 0.35
#define TICK_FONT 0.9
#define TICK_SPACING_EM 1.2
/* Between a row's number and its token label: wider than a word space, so that "␣the"
 * and "4000" read as two columns. */
#define LABEL_NUM_GAP_EM 0.8
/* The minimap's side in font sizes (about 80 pixels on a default GNOME desktop). */
#define MINIMAP_EM 6.0
/* Cells are outlined when they are at least this many device pixels wide. */
#define OUTLINE_MIN_PX 12.0
/* On vector surfaces cells get about this many image pixels per unit (as the small
 * heatmap's), at most this many a side. */
#define VECTOR_PX_PER_UNIT 2.0
#define VECTOR_MAX_PX 4096

typedef struct {
  int n_rows, n_cols;
  double fs, pad, gap, tick_fs, tick_len;
  double top, title_h, axis_h;
  double num_w, num_h;         /* the widest position number, its line height */
  double label_em;             /* widest token label in font sizes (0: no labels) */
  gboolean labels;             /* token labels drawn */
  double lf, label_w;          /* their font size and margin */
  double row_w, col_h;         /* margins between the captions and the matrix */
  double cb_w, bar_w, right_w; /* colour bar, its ramp; the right column (bar, minimap) */
  double mini;                 /* minimap side; 0: no minimap */
  double rows, cols, row0, col0;
  double mx, my, cell;
  int step;                    /* a tick every step tokens */
  double vmin, vmax;
} Layout;

static SaccadeScale
figure_scale (const SaccadeHeatmapLodFigure *f)
{
  return saccade_colormap_is_diverging (f->colormap) ? SACCADE_SCALE_LINEAR : f->scale;
}

void
saccade_figure_heatmap_lod_range (const SaccadeHeatmapLodFigure *f, double *vmin, double *vmax)
{
  SaccadeLodStats s;

  if (f->vmin != f->vmax)
    {
      *vmin = f->vmin;
      *vmax = f->vmax;
      return;
    }
  saccade_lod_get_stats (f->lod, &s);
  saccade_figure_range_from_stats (f->colormap, figure_scale (f), s.lo, s.hi, s.min_pos,
                                   s.max_abs, vmin, vmax);
}

static const char *
colorbar_caption (const SaccadeHeatmapLodFigure *f)
{
  if (f->value_name != NULL)
    return f->value_name;
  return figure_scale (f) == SACCADE_SCALE_LOG ? _("weight (log scale)") : _("weight");
}

double
saccade_figure_labels_em (const char *const *labels, int n)
{
  cairo_surface_t *scratch;
  cairo_t *cr;
  SaccadeFigureStyle style;
  double w;
  /* Measured at 10 units; unhinted metrics scale linearly with the size. */
  const double size = 10.0;

  if (labels == NULL || n <= 0)
    return 0.0;
  scratch = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cr = cairo_create (scratch);
  saccade_figure_style_init (&style);
  {
    g_autoptr (PangoLayout) layout = saccade_figure_layout_new (cr, &style, size, FALSE);
    w = saccade_figure_labels_max_width (layout, labels, n, NULL);
  }
  cairo_destroy (cr);
  cairo_surface_destroy (scratch);
  return w / size;
}

/* The smallest 1, 2 or 5 × 10^k that is at least @x. */
static int
nice_step (double x)
{
  double mag = 1.0;

  if (x <= 1.0)
    return 1;
  while (mag * 10 < x)
    mag *= 10;
  for (int i = 0; i < 3; i++)
    {
      double s = mag * (i == 0 ? 1 : i == 1 ? 2 : 5);
      if (s >= x)
        return (int) s;
    }
  return (int) (mag * 10);
}

/* Device pixels per user unit: what the image surface maps a unit to; a vector surface's
 * viewer resamples, so it gets VECTOR_PX_PER_UNIT. */
static double
pixels_per_unit (cairo_t *cr)
{
  return saccade_figure_target_is_vector (cr) ? VECTOR_PX_PER_UNIT
                                              : saccade_figure_pixels_per_unit (cr);
}

/* Cells of @L with or without labels: the margins, then the cell side. */
static double
fit_cells (Layout *L, gboolean labels, double W, double H)
{
  double avail_w, avail_h;

  L->labels = labels;
  L->label_w = labels ? MIN (L->label_em, LABEL_MAX_EM) * L->lf : 0.0;
  L->row_w = L->tick_len + 0.25 * L->fs + L->num_w
             + (labels ? LABEL_NUM_GAP_EM * L->fs + L->label_w : 0.0) + L->gap;
  L->col_h = L->tick_len + 0.1 * L->fs + L->num_h + (labels ? L->gap + L->label_w : 0.0)
             + L->gap;
  avail_w = W - 2 * L->pad - L->axis_h - L->row_w - 2 * L->gap - L->right_w;
  avail_h = H - 2 * L->pad - L->title_h - L->axis_h - L->col_h;
  L->cell = MAX (1e-6, MIN (avail_w / L->cols, avail_h / L->rows));
  return L->cell;
}

/* Passes 1 and 2 for a figure of @W x @H showing @range (NULL: all) of the head. */
static void
layout_compute (cairo_t *cr, const SaccadeHeatmapLodFigure *f, const SaccadeCellRange *range,
                gboolean minimap, const SaccadeFigureStyle *style, double W, double H,
                Layout *L)
{
  double w, h, lf_min;
  char buf[16];

  *L = (Layout) { 0 };
  L->n_rows = saccade_lod_get_n_rows (f->lod);
  L->n_cols = saccade_lod_get_n_cols (f->lod);
  L->fs = saccade_figure_font_size (style);
  L->pad = L->fs;
  L->gap = 0.4 * L->fs;
  L->tick_fs = TICK_FONT * L->fs;
  L->tick_len = TICK_LEN_EM * L->fs;
  L->rows = range != NULL && range->rows > 0 ? MIN (range->rows, L->n_rows) : L->n_rows;
  L->cols = range != NULL && range->cols > 0 ? MIN (range->cols, L->n_cols) : L->n_cols;
  L->row0 = range != NULL ? CLAMP (range->row0, 0.0, L->n_rows - L->rows) : 0.0;
  L->col0 = range != NULL ? CLAMP (range->col0, 0.0, L->n_cols - L->cols) : 0.0;
  saccade_figure_heatmap_lod_range (f, &L->vmin, &L->vmax);

  /* Pass 1: measure. */
  if (f->title != NULL && *f->title != '\0')
    {
      g_autoptr (PangoLayout) title = saccade_figure_layout_new (cr, style, 1.3 * L->fs, TRUE);
      saccade_figure_layout_set (title, f->title, NULL, &h);
      L->title_h = saccade_figure_title_band (cr, style, f->title, W, h + 0.6 * L->fs);
    }
  {
    g_autoptr (PangoLayout) text = saccade_figure_layout_new (cr, style, L->fs, FALSE);
    g_autoptr (PangoLayout) num = saccade_figure_layout_new (cr, style, L->tick_fs, FALSE);
    saccade_figure_layout_set (text, f->row_name != NULL ? f->row_name : _("Query"), &w, &h);
    L->axis_h = h + 0.2 * L->fs;
    /* The head's largest position: the margins do not change with the range shown. */
    g_snprintf (buf, sizeof buf, "%d", MAX (L->n_rows, L->n_cols) - 1);
    saccade_figure_layout_set (num, buf, &L->num_w, &L->num_h);
  }
  L->bar_w = 1.2 * L->fs;
  L->cb_w = saccade_figure_colorbar_width (cr, style, 0.9 * L->fs, L->bar_w, figure_scale (f),
                                           L->vmin, L->vmax, colorbar_caption (f));
  L->mini = minimap ? MINIMAP_EM * L->fs : 0.0;
  L->right_w = MAX (L->cb_w, L->mini);

  /* Pass 2: fit, first without token labels. */
  lf_min = LABEL_MIN_FRACTION * L->fs;
  L->lf = L->fs;
  fit_cells (L, FALSE, W, H);
  if ((f->row_labels != NULL || f->col_labels != NULL) && L->cell >= LABEL_LINE * lf_min)
    {
      if (f->label_em > 0)
        L->label_em = f->label_em;
      else
        {
          /* An export: the range's own labels (few: their cells are a line tall). */
          int r0 = (int) L->row0, c0 = (int) L->col0;
          double er = saccade_figure_labels_em (f->row_labels ? f->row_labels + r0 : NULL,
                                                (int) ceil (L->rows));
          double ec = saccade_figure_labels_em (f->col_labels ? f->col_labels + c0 : NULL,
                                                (int) ceil (L->cols));
          L->label_em = MAX (er, ec);
        }
      for (int pass = 0; pass < 2; pass++)
        {
          /* Labels as big as the text, or as the cell allows; their margins shrink the
           * cells, so fit twice. */
          L->lf = CLAMP (L->cell / LABEL_LINE, lf_min, L->fs);
          fit_cells (L, TRUE, W, H);
        }
      if (L->cell < LABEL_LINE * lf_min)
        fit_cells (L, FALSE, W, H);
      else
        L->lf = CLAMP (L->cell / LABEL_LINE, lf_min, L->lf);
    }
  L->step = nice_step (MAX (L->num_w + TICK_SPACING_EM * L->tick_fs,
                            TICK_SPACING_EM * 1.5 * L->num_h) / L->cell);

  /* Centre the block (captions, margins, matrix, right column) in what is left. */
  {
    double block_w = L->axis_h + L->row_w + L->cols * L->cell + 2 * L->gap + L->right_w;
    double block_h = L->axis_h + L->col_h + L->rows * L->cell;
    double x0 = L->pad + MAX (0.0, (W - 2 * L->pad - block_w) / 2);
    L->top = L->pad + MAX (0.0, (H - 2 * L->pad - L->title_h - block_h) / 2);
    double ppu = pixels_per_unit (cr);
    /* On whole device pixels: cells start crisp, and the first row and column of a long
     * head (a pixel wide) are not blended with the margin. */
    L->mx = round ((x0 + L->axis_h + L->row_w) * ppu) / ppu;
    L->my = round ((L->top + L->title_h + L->axis_h + L->col_h) * ppu) / ppu;
  }
  /* The minimap needs room under the colour bar; a short matrix has none. */
  if (L->mini > 0 && L->rows * L->cell < L->mini + 8 * L->fs)
    L->mini = 0;
}

/* Draws tokens [row0, row0 + rows) x [col0, col0 + cols) of the head into the rectangle at
 * (@x, @y) with cells of @cell units: the masked area hatched, the cells of the level
 * whose cells are at least a device pixel. Returns the level drawn. */
static int
paint_cells (cairo_t *cr, const SaccadeHeatmapLodFigure *f, const SaccadeFigureStyle *style,
             const Layout *L, double x, double y, double cell, double row0, double col0,
             double rows, double cols)
{
  const SaccadeLod *lod = f->lod;
  double ppu = pixels_per_unit (cr);
  int level = saccade_lod_pick_level (lod, 1.0 / (cell * ppu));
  const SaccadeLodLevel *lv = saccade_lod_get_level (lod, level);
  int b = lv->block;
  int i0 = (int) floor (row0 / b), i1 = MIN (lv->rows, (int) ceil ((row0 + rows) / b));
  int j0 = (int) floor (col0 / b), j1 = MIN (lv->cols, (int) ceil ((col0 + cols) / b));
  double side = cell * b;                   /* a level cell in units */
  gboolean vector = saccade_figure_target_is_vector (cr);
  int k = vector ? CLAMP ((int) ceil (VECTOR_PX_PER_UNIT * side), 1,
                          MAX (1, VECTOR_MAX_PX / MAX (1, MAX (i1 - i0, j1 - j0))))
                 : 1;
  cairo_surface_t *img;
  cairo_pattern_t *pat;
  cairo_matrix_t m;
#define X(tok) (x + ((tok) - col0) * cell)
#define Y(tok) (y + ((tok) - row0) * cell)

  cairo_save (cr);
  cairo_rectangle (cr, x, y, cols * cell, rows * cell);
  cairo_clip (cr);
  if (saccade_lod_is_causal (lod) && i0 < i1)
    {
      /* The staircase over the level's rows: level row i is masked from token (i + 1) b. */
      cairo_move_to (cr, X ((double) (i0 + 1) * b), Y ((double) i0 * b));
      for (int i = i0; i < i1; i++)
        {
          cairo_line_to (cr, X ((double) (i + 1) * b), Y ((double) (i + 1) * b));
          cairo_line_to (cr, X ((double) (i + 2) * b), Y ((double) (i + 1) * b));
        }
      cairo_line_to (cr, X (col0 + cols) + side, Y ((double) i1 * b));
      cairo_line_to (cr, X (col0 + cols) + side, Y ((double) i0 * b));
      cairo_close_path (cr);
      saccade_figure_fill_masked (cr, style, CLAMP (cell / 3, 3.0, 6.0));
    }
  if (saccade_lod_get_window (lod) > 0 && i0 < i1)
    {
      /* A band head: each level row is masked left of its band's first cell. */
      for (int i = i0; i < i1; i++)
        {
          int s = saccade_lod_band_start (lod, level, i);
          if (s > 0)
            cairo_rectangle (cr, X (0) - side, Y ((double) i * b), s * (double) b * cell + side,
                             side);
        }
      saccade_figure_fill_masked (cr, style, CLAMP (cell / 3, 3.0, 6.0));
    }
  if (!vector)
    {
      /* An image: the pixels as they will be, painted 1:1 (x, y are on whole pixels). */
      int w = (int) ceil (cols * cell * ppu - 1e-6), h = (int) ceil (rows * cell * ppu - 1e-6);
      img = saccade_figure_lod_screen_image (lod, level, row0, col0, 1.0 / (cell * ppu), w, h,
                                             f->colormap, figure_scale (f), L->vmin, L->vmax);
      cairo_surface_set_device_scale (img, ppu, ppu);
      cairo_set_source_surface (cr, img, x, y);
      /* (x, y) on whole pixels makes this a copy; elsewhere (a caller's own transform)
       * nearest keeps cells sharp rather than smoothing them into each other. */
      cairo_pattern_set_filter (cairo_get_source (cr), CAIRO_FILTER_NEAREST);
      cairo_paint (cr);
    }
  else if ((gint64) (i1 - i0) * (j1 - j0) <= SACCADE_FIGURE_VECTOR_CELLS_MAX)
    {
      /* A vector surface and few cells: a rectangle per cell, sharp at any zoom. */
      img = saccade_figure_lod_cells_image (lod, level, i0, i1, j0, j1, 1, f->colormap,
                                            figure_scale (f), L->vmin, L->vmax);
      saccade_figure_cells_rects (cr, img, X ((double) j0 * b), Y ((double) i0 * b), side);
    }
  else
    {
      /* A vector surface: one image of the level's cells, k x k pixels a cell, that the
       * viewer scales. */
      img = saccade_figure_lod_cells_image (lod, level, i0, i1, j0, j1, k, f->colormap,
                                            figure_scale (f), L->vmin, L->vmax);
      pat = cairo_pattern_create_for_surface (img);
      /* Pattern space is image pixels: pixel (0, 0) is level cell (i0, j0). */
      cairo_matrix_init_scale (&m, k / side, k / side);
      cairo_matrix_translate (&m, -X ((double) j0 * b), -Y ((double) i0 * b));
      cairo_pattern_set_matrix (pat, &m);
      cairo_pattern_set_filter (pat, CAIRO_FILTER_NEAREST);
      cairo_set_source (cr, pat);
      cairo_rectangle (cr, X ((double) j0 * b), Y ((double) i0 * b), (j1 - j0) * side,
                       (i1 - i0) * side);
      cairo_fill (cr);
      cairo_pattern_destroy (pat);
    }
  cairo_surface_destroy (img);

  /* Exact cells big enough to tell apart: a thin line between them. */
  if (level == 0 && b == 1 && cell * ppu >= OUTLINE_MIN_PX)
    {
      saccade_figure_set_fg (cr, style, 0.15);
      cairo_set_line_width (cr, 1.0 / ppu);
      for (int i = i0 + 1; i < i1; i++)
        {
          cairo_move_to (cr, x, Y (i));
          cairo_line_to (cr, x + cols * cell, Y (i));
        }
      for (int j = j0 + 1; j < j1; j++)
        {
          cairo_move_to (cr, X (j), y);
          cairo_line_to (cr, X (j), y + rows * cell);
        }
      cairo_stroke (cr);
    }
  cairo_restore (cr);

  /* The frame just outside the cells: at 8,192 tokens the first column (the sink) is a
   * pixel wide, and a frame over it would hide it. */
  cairo_save (cr);
  saccade_figure_set_fg (cr, style, 0.5);
  cairo_set_line_width (cr, 0.75);
  cairo_rectangle (cr, x - 0.375, y - 0.375, cols * cell + 0.75, rows * cell + 0.75);
  cairo_stroke (cr);
  cairo_restore (cr);
#undef X
#undef Y
  return level;
}

/* Position ticks and numbers on both axes, token labels when on, the axis captions. */
static void
draw_axes (cairo_t *cr, const SaccadeHeatmapLodFigure *f, const SaccadeFigureStyle *style,
           const Layout *L)
{
  g_autoptr (PangoLayout) num = saccade_figure_layout_new (cr, style, L->tick_fs, FALSE);
  double mw = L->cols * L->cell, mh = L->rows * L->cell, w, h;
  int r_first = (int) floor (L->row0), r_end = MIN (L->n_rows, (int) ceil (L->row0 + L->rows));
  int c_first = (int) floor (L->col0), c_end = MIN (L->n_cols, (int) ceil (L->col0 + L->cols));
  char buf[16];

  cairo_save (cr);
  cairo_set_line_width (cr, MAX (0.5, 0.06 * L->fs));
  /* Rows: marks against the matrix's left edge, numbers right-aligned beside them. */
  for (int r = (r_first + L->step - 1) / L->step * L->step; r < r_end; r += L->step)
    {
      double cy = L->my + (r + 0.5 - L->row0) * L->cell;
      if (cy < L->my || cy > L->my + mh)
        continue;
      saccade_figure_set_fg (cr, style, 0.6);
      cairo_move_to (cr, L->mx - L->tick_len, cy);
      cairo_line_to (cr, L->mx, cy);
      cairo_stroke (cr);
      saccade_figure_set_fg (cr, style, 0.85);
      g_snprintf (buf, sizeof buf, "%d", r);
      saccade_figure_layout_set (num, buf, &w, &h);
      saccade_figure_layout_draw (cr, num, L->mx - L->tick_len - 0.25 * L->fs - w, cy - h / 2);
    }
  /* Columns: marks against the top edge, numbers centred above them. */
  for (int c = (c_first + L->step - 1) / L->step * L->step; c < c_end; c += L->step)
    {
      double cx = L->mx + (c + 0.5 - L->col0) * L->cell;
      if (cx < L->mx || cx > L->mx + mw)
        continue;
      saccade_figure_set_fg (cr, style, 0.6);
      cairo_move_to (cr, cx, L->my - L->tick_len);
      cairo_line_to (cr, cx, L->my);
      cairo_stroke (cr);
      saccade_figure_set_fg (cr, style, 0.85);
      g_snprintf (buf, sizeof buf, "%d", c);
      saccade_figure_layout_set (num, buf, &w, &h);
      saccade_figure_layout_draw (cr, num, cx - w / 2, L->my - L->tick_len - 0.1 * L->fs - h);
    }

  if (L->labels)
    {
      g_autoptr (PangoLayout) text = saccade_figure_layout_new (cr, style, L->lf, FALSE);
      double row_x = L->mx - L->tick_len - 0.25 * L->fs - L->num_w - LABEL_NUM_GAP_EM * L->fs;
      double col_y = L->my - L->tick_len - 0.1 * L->fs - L->num_h - L->gap;
      pango_layout_set_width (text, (int) (L->label_w * PANGO_SCALE) + 1);
      pango_layout_set_ellipsize (text, PANGO_ELLIPSIZE_END);
      saccade_figure_set_fg (cr, style, 1.0);
      /* Row labels end at the same x (the layout is label_w wide, right-aligned in it);
       * column labels start at the same height. */
      pango_layout_set_alignment (text, PANGO_ALIGN_RIGHT);
      for (int r = r_first; f->row_labels != NULL && r < r_end; r++)
        {
          double cy = L->my + (r + 0.5 - L->row0) * L->cell;
          if (cy < L->my || cy > L->my + mh)
            continue;
          saccade_figure_layout_set (text, f->row_labels[r], &w, &h);
          /* right-aligned inside the layout's width: its box starts label_w to the left */
          saccade_figure_layout_draw (cr, text, row_x - L->label_w, cy - h / 2);
        }
      for (int c = c_first; f->col_labels != NULL && c < c_end; c++)
        {
          double cx = L->mx + (c + 0.5 - L->col0) * L->cell;
          if (cx < L->mx || cx > L->mx + mw)
            continue;
          pango_layout_set_alignment (text, PANGO_ALIGN_LEFT);
          saccade_figure_layout_set (text, f->col_labels[c], &w, &h);
          cairo_save (cr);
          cairo_translate (cr, cx - h / 2, col_y);
          cairo_rotate (cr, -G_PI / 2);
          saccade_figure_layout_draw (cr, text, 0, 0);
          cairo_restore (cr);
        }
    }

  /* Captions, muted: "Key" above the columns, "Query" left of the rows. */
  {
    g_autoptr (PangoLayout) cap = saccade_figure_layout_new (cr, style, L->fs, FALSE);
    saccade_figure_set_fg (cr, style, 0.6);
    saccade_figure_layout_set (cap, f->col_name != NULL ? f->col_name : _("Key"), &w, &h);
    saccade_figure_layout_draw (cr, cap, L->mx + mw / 2 - w / 2, L->my - L->col_h - L->axis_h);
    saccade_figure_layout_set (cap, f->row_name != NULL ? f->row_name : _("Query"), &w, &h);
    cairo_translate (cr, L->mx - L->row_w - L->axis_h, L->my + mh / 2 + w / 2);
    cairo_rotate (cr, -G_PI / 2);
    saccade_figure_layout_draw (cr, cap, 0, 0);
  }
  cairo_restore (cr);
}

/* The whole head small, under the colour bar, with the visible rectangle. */
static void
draw_minimap (cairo_t *cr, const SaccadeHeatmapLodFigure *f, const SaccadeFigureStyle *style,
              const Layout *L, SaccadeHeatmapGeometry *geom)
{
  int n = MAX (L->n_rows, L->n_cols);
  double cell = L->mini / n;
  double ppu = pixels_per_unit (cr);
  /* on whole device pixels, as the matrix is */
  double x = round ((L->mx + L->cols * L->cell + 2 * L->gap) * ppu) / ppu;
  double y = round ((L->my + L->rows * L->cell - L->n_rows * cell) * ppu) / ppu;
  double vx = x + L->col0 * cell, vy = y + L->row0 * cell;
  /* at least 5 pixels: 24 tokens of 8,192 would be a speck */
  double vw = MAX (L->cols * cell, 5.0 / ppu), vh = MAX (L->rows * cell, 5.0 / ppu);

  paint_cells (cr, f, style, L, x, y, cell, 0, 0, L->n_rows, L->n_cols);
  cairo_save (cr);
  /* The visible rectangle: a dark halo under a light line, readable over any colour. */
  cairo_rectangle (cr, vx, vy, vw, vh);
  cairo_set_source_rgba (cr, 0, 0, 0, 0.7);
  cairo_set_line_width (cr, 3.0 / ppu);
  cairo_stroke_preserve (cr);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_set_line_width (cr, 1.5 / ppu);
  cairo_stroke (cr);
  cairo_restore (cr);
  if (geom != NULL)
    {
      geom->mini_x = x;
      geom->mini_y = y;
      geom->mini_w = L->n_cols * cell;
      geom->mini_h = L->n_rows * cell;
    }
}

void
saccade_figure_heatmap_lod_draw_full (cairo_t *cr, const SaccadeHeatmapLodFigure *f,
                                      const SaccadeCellRange *range, gboolean minimap,
                                      const SaccadeFigureStyle *style, double width,
                                      double height, SaccadeHeatmapGeometry *geom)
{
  SaccadeFigureStyle tmp;
  Layout L;
  int level;
  double bar_h;

  style = saccade_figure_style_resolve (style, &tmp);
  cairo_save (cr);
  saccade_figure_paint_background (cr, style, width, height);
  if (geom != NULL)
    *geom = (SaccadeHeatmapGeometry) { 0 };
  if (f->lod == NULL)
    {
      saccade_figure_draw_title (cr, style, f->title, width, saccade_figure_font_size (style));
      cairo_restore (cr);
      return;
    }

  layout_compute (cr, f, range, minimap, style, width, height, &L);
  saccade_figure_draw_title (cr, style, f->title, width, L.top);
  level = paint_cells (cr, f, style, &L, L.mx, L.my, L.cell, L.row0, L.col0, L.rows, L.cols);
  draw_axes (cr, f, style, &L);
  /* The minimap, when shown, takes the bottom of the colour bar's column. */
  if (L.mini > 0 && L.rows >= L.n_rows && L.cols >= L.n_cols)
    L.mini = 0; /* all is shown: nothing to locate */
  bar_h = L.mini > 0 ? L.rows * L.cell - L.mini - 1.5 * L.fs
                     : MAX (L.rows * L.cell, MIN (8 * L.fs, height - L.my - L.pad));
  saccade_figure_colorbar_draw (cr, style, 0.9 * L.fs, f->colormap, figure_scale (f), L.vmin,
                                L.vmax, colorbar_caption (f), L.mx + L.cols * L.cell + 2 * L.gap,
                                L.my, L.bar_w, bar_h);
  if (geom != NULL)
    *geom = (SaccadeHeatmapGeometry) {
      .x = L.mx, .y = L.my, .width = L.cols * L.cell, .height = L.rows * L.cell,
      .cell_w = L.cell, .cell_h = L.cell,
      .range = { L.row0, L.col0, L.rows, L.cols },
      .n_rows = L.n_rows, .n_cols = L.n_cols,
      .level = level, .block = saccade_lod_get_level (f->lod, level)->block,
    };
  if (L.mini > 0)
    draw_minimap (cr, f, style, &L, geom);
  cairo_restore (cr);
}

/* @range clamped to the head, as a cell range; FALSE when nothing is left. */
static gboolean
cell_range_of (const SaccadeHeatmapLodFigure *f, const SaccadeTokenRange *range,
               SaccadeCellRange *out)
{
  int nr = saccade_lod_get_n_rows (f->lod), nc = saccade_lod_get_n_cols (f->lod);
  int q0 = 0, q1 = nr, k0 = 0, k1 = nc;

  if (range != NULL)
    {
      q0 = CLAMP (range->q0, 0, nr);
      q1 = CLAMP (range->q1, q0, nr);
      k0 = CLAMP (range->k0, 0, nc);
      k1 = CLAMP (range->k1, k0, nc);
    }
  *out = (SaccadeCellRange) { q0, k0, q1 - q0, k1 - k0 };
  return q1 > q0 && k1 > k0;
}

void
saccade_figure_heatmap_lod_draw (cairo_t *cr, const SaccadeHeatmapLodFigure *f,
                                 const SaccadeTokenRange *range, double width, double height)
{
  SaccadeCellRange cells;

  if (f->lod != NULL && !cell_range_of (f, range, &cells))
    {
      /* An empty range draws the title alone. */
      saccade_figure_heatmap_lod_draw_full (cr, &(SaccadeHeatmapLodFigure) { .title = f->title },
                                            NULL, FALSE, NULL, width, height, NULL);
      return;
    }
  saccade_figure_heatmap_lod_draw_full (cr, f, f->lod != NULL ? &cells : NULL, FALSE, NULL,
                                        width, height, NULL);
}

void
saccade_figure_heatmap_lod_natural_size (const SaccadeHeatmapLodFigure *f,
                                         const SaccadeTokenRange *range, double *W, double *H)
{
  cairo_surface_t *scratch = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (scratch);
  SaccadeFigureStyle style;
  SaccadeCellRange cells;
  Layout L;
  /* About 520 units for the matrix's longer side, cells at most 32 units: a 12-token range
   * gets 32-unit cells with its labels, a whole 8,192-token head fits a page. */
  double cell;

  SaccadeHeatmapLodFigure g = *f;
  gboolean labels;

  cell_range_of (f, range, &cells);
  cell = MIN (32.0, 520.0 / MAX (1.0, MAX (cells.rows, cells.cols)));
  saccade_figure_style_init (&style);
  /* Labels when the cells are tall enough for them, as layout_compute() decides when it
   * draws at this size; without them nothing is measured. */
  labels = (f->row_labels != NULL || f->col_labels != NULL)
           && cell >= LABEL_LINE * LABEL_MIN_FRACTION * saccade_figure_font_size (&style);
  if (!labels)
    g.row_labels = g.col_labels = NULL;
  /* The margins of a layout whose cells come out at @cell: measure on a huge canvas, then
   * fit again at @cell's label size. */
  layout_compute (cr, &g, &cells, FALSE, &style, 1e6, 1e6, &L);
  L.lf = labels ? CLAMP (cell / LABEL_LINE, LABEL_MIN_FRACTION * L.fs, L.fs) : L.fs;
  fit_cells (&L, labels, 1e6, 1e6);
  *W = 2 * L.pad + L.axis_h + L.row_w + cells.cols * cell + 2 * L.gap + L.right_w;
  *H = 2 * L.pad + L.title_h + L.axis_h + L.col_h + cells.rows * cell;
  /* The colour bar wants some height even for a one-row range. */
  *H = MAX (*H, 2 * L.pad + L.title_h + 8 * L.fs);
  *W = MAX (*W, saccade_figure_title_width (cr, &style, f->title));
  *W = ceil (*W + 1);
  *H = ceil (*H + 1);
  cairo_destroy (cr);
  cairo_surface_destroy (scratch);
}
