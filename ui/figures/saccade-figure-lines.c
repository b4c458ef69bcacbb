/* saccade-figure-lines.c — one layer as BertViz's "head view": the renderer shared by
 * SaccadeLinesView and export (saccade-figure.h).
 *
 * The tokens stand in two columns, queries on the left and keys on the right; for every
 * head, query i is joined to key j by a line in the head's colour whose opacity is the
 * weight A[i, j] (Vig 2019). Overlapping heads add up, so where many heads agree the line
 * is dark. A highlighted token keeps its own lines at full strength and fades the rest. A
 * legend of head colours stands where the other figures have their colour bar; it names
 * each head by its index in the layer (head_ids), so a figure of head 4 alone says "4".
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <math.h>
#include <stdlib.h>

#define LABEL_MAX_EM 12.0
#define LABEL_MIN_SIZE 6.0
/* Lines fainter than this are invisible at 8 bits (under 1/255 per head): skip them. */
#define MIN_WEIGHT (1.0 / 512)
/* The opacity kept by lines that do not touch the highlighted token. */
#define FADED 0.08

typedef struct {
  double fs, pad, gap, lf, lh;
  double top;             /* where the title goes: centred with the legend and rows */
  double title_h, legend_h;
  int step;
  double label_w, lines_w;
  SaccadeLinesGeometry g;
} Layout;

/* The lines' span: near the columns' height for a sentence (slopes stay readable), within
 * 24 to 48 font sizes (a long text does not make a banner). */
static double
lines_width (const Layout *L, int n)
{
  return CLAMP (0.8 * n * L->g.row_h, 24 * L->fs, 48 * L->fs);
}

static void
layout_compute (cairo_t *cr, const SaccadeLinesFigure *f, const SaccadeFigureStyle *style,
                double W, double H, Layout *L)
{
  g_autoptr (PangoLayout) text = NULL;
  double label_w0, lh0, avail_h, w, h;

  L->fs = saccade_figure_font_size (style);
  L->pad = L->fs;
  L->gap = 0.5 * L->fs;
  L->title_h = 0;
  if (f->title != NULL && *f->title != '\0')
    {
      g_autoptr (PangoLayout) title = saccade_figure_layout_new (cr, style, 1.3 * L->fs, TRUE);
      saccade_figure_layout_set (title, f->title, &w, &h);
      L->title_h = h + 0.6 * L->fs;
    }
  text = saccade_figure_layout_new (cr, style, L->fs, FALSE);
  saccade_figure_layout_set (text, "Ag", NULL, &L->lh);
  /* The legend line, then the column captions. */
  L->legend_h = 2 * L->lh + 1.2 * L->fs;
  pango_layout_set_width (text, (int) (LABEL_MAX_EM * L->fs * PANGO_SCALE));
  pango_layout_set_ellipsize (text, PANGO_ELLIPSIZE_END);
  label_w0 = saccade_figure_labels_max_width (text, f->labels, f->n, &lh0);

  avail_h = H - 2 * L->pad - L->title_h - L->legend_h;
  L->g.n = f->n;
  L->g.row_h = MAX (1e-3, MIN (avail_h / MAX (f->n, 1), 2.4 * L->fs));
  L->lf = L->g.row_h >= 1.3 * L->fs ? L->fs
                                    : MAX (L->g.row_h / 1.3, MIN (L->fs, LABEL_MIN_SIZE));
  L->step = MAX (1, (int) ceil (1.2 * L->lf / L->g.row_h));
  L->label_w = label_w0 * L->lf / L->fs;
  L->lines_w = MAX (4 * L->fs, W - 2 * L->pad - 2 * L->label_w - 2 * L->gap);
  L->lines_w = MIN (L->lines_w, lines_width (L, f->n));
  {
    double block_w = 2 * L->label_w + 2 * L->gap + L->lines_w;
    double x0 = MAX (L->pad, (W - block_w) / 2);
    L->g.label_w = L->label_w;
    L->g.left_x = x0 + L->label_w;
    L->g.right_x = L->g.left_x + 2 * L->gap + L->lines_w;
    L->top = L->pad + MAX (0.0, (avail_h - f->n * L->g.row_h) / 2);
    L->g.y0 = L->top + L->title_h + L->legend_h;
  }
}

void
saccade_figure_lines_natural_size (const SaccadeLinesFigure *f, double *W, double *H)
{
  cairo_surface_t *scratch = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (scratch);
  SaccadeFigureStyle style;
  Layout L;

  saccade_figure_style_init (&style);
  layout_compute (cr, f, &style, 1e5, 1e5, &L);
  /* Rows of 1.9 font sizes up to 60 tokens, then the figure stops growing (1200 units of
   * rows) and labels thin out. */
  *H = 2 * L.pad + L.title_h + L.legend_h + MIN (f->n * 1.9 * L.fs, 1200.0);
  layout_compute (cr, f, &style, 1e5, *H, &L);
  *W = ceil (2 * L.pad + 2 * L.label_w + 2 * L.gap + lines_width (&L, f->n) + 1);
  *H = ceil (*H + 1);
  *W = MAX (*W, ceil (saccade_figure_title_width (cr, &style, f->title) + 1));
  cairo_destroy (cr);
  cairo_surface_destroy (scratch);
}

/* Head @k of the figure: its index in the layer and its colour there. */
static int
head_id (const SaccadeLinesFigure *f, int k)
{
  return f->head_ids != NULL ? f->head_ids[k] : k;
}

static void
head_rgb (const SaccadeLinesFigure *f, int k, double rgb[3])
{
  int total = f->n_heads_total > 0 ? f->n_heads_total : f->n_heads;

  saccade_figure_head_color (head_id (f, k), MAX (total, head_id (f, k) + 1), rgb);
}

static double
row_y (const Layout *L, int i)
{
  return L->g.y0 + (i + 0.5) * L->g.row_h;
}

static void
draw_legend (cairo_t *cr, const SaccadeLinesFigure *f, const SaccadeFigureStyle *style,
             const Layout *L, double W)
{
  g_autoptr (PangoLayout) text = saccade_figure_layout_new (cr, style, 0.9 * L->fs, FALSE);
  double y = L->top + L->title_h, sw = 0.9 * L->fs, total = 0, x, w, h;
  char buf[32];

  /* "Heads ■0 ■1 ..." ("Head ■4" for one), centred: measure, then draw. */
  saccade_figure_layout_set (text, f->n_heads == 1 ? _("Head") : _("Heads"), &w, &h);
  total = w + L->gap;
  for (int hd = 0; hd < f->n_heads; hd++)
    {
      g_snprintf (buf, sizeof buf, "%d", head_id (f, hd));
      saccade_figure_layout_set (text, buf, &w, NULL);
      total += sw + 0.25 * L->fs + w + 0.8 * L->fs;
    }
  x = MAX (L->pad, (W - total) / 2);
  cairo_save (cr);
  saccade_figure_set_fg (cr, style, 0.7);
  saccade_figure_layout_set (text, f->n_heads == 1 ? _("Head") : _("Heads"), &w, &h);
  saccade_figure_layout_draw (cr, text, x, y);
  x += w + L->gap;
  for (int hd = 0; hd < f->n_heads; hd++)
    {
      double rgb[3];
      head_rgb (f, hd, rgb);
      cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
      cairo_rectangle (cr, x, y + (h - sw) / 2, sw, sw);
      cairo_fill (cr);
      x += sw + 0.25 * L->fs;
      g_snprintf (buf, sizeof buf, "%d", head_id (f, hd));
      saccade_figure_layout_set (text, buf, &w, NULL);
      saccade_figure_set_fg (cr, style, 0.85);
      saccade_figure_layout_draw (cr, text, x, y);
      x += w + 0.8 * L->fs;
    }
  /* Column captions and what opacity means. */
  y += h + 0.6 * L->fs;
  saccade_figure_set_fg (cr, style, 0.6);
  saccade_figure_layout_set (text, _("Query"), &w, &h);
  saccade_figure_layout_draw (cr, text, L->g.left_x - w, y);
  saccade_figure_layout_set (text, _("Key"), &w, &h);
  saccade_figure_layout_draw (cr, text, L->g.right_x, y);
  saccade_figure_layout_set (text, _("line opacity = weight"), &w, &h);
  saccade_figure_layout_draw (cr, text, (L->g.left_x + L->g.right_x - w) / 2, y);
  cairo_restore (cr);
}

typedef struct {
  float alpha;
  int head, i, j;
} Line;

static int
cmp_line (const void *a, const void *b)
{
  const Line *x = a, *y = b;
  return (x->alpha > y->alpha) - (x->alpha < y->alpha);
}

/* Every visible line, faintest first, so that the strongest links end on top whatever
 * their head (drawing head by head would bury head 0 under head 8). */
static void
draw_lines (cairo_t *cr, const SaccadeLinesFigure *f, const Layout *L, gboolean key_side)
{
  double x0 = L->g.left_x + L->gap, x1 = L->g.right_x - L->gap;
  double lw = CLAMP (L->g.row_h * 0.12, 0.5, 2.0);
  int n = f->n, hl = f->highlight_token;
  g_autoptr (GArray) lines = g_array_new (FALSE, FALSE, sizeof (Line));
  double (*rgb)[3] = g_malloc_n ((gsize) f->n_heads, sizeof *rgb);

  for (int hd = 0; hd < f->n_heads; hd++)
    {
      const float *a = f->heads + (gsize) hd * n * n;
      head_rgb (f, hd, rgb[hd]);
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
          {
            double w = a[(gsize) i * n + j];
            gboolean mine = hl < 0 || (key_side ? j == hl : i == hl);
            Line line = { (float) (MIN (w, 1.0) * (mine ? 1.0 : FADED)), hd, i, j };
            if (w >= MIN_WEIGHT && line.alpha >= MIN_WEIGHT)
              g_array_append_val (lines, line);
          }
    }
  qsort (lines->data, lines->len, sizeof (Line), cmp_line);

  cairo_save (cr);
  cairo_set_line_width (cr, lw);
  cairo_set_line_cap (cr, CAIRO_LINE_CAP_ROUND);
  for (guint k = 0; k < lines->len; k++)
    {
      const Line *line = &g_array_index (lines, Line, k);
      cairo_set_source_rgba (cr, rgb[line->head][0], rgb[line->head][1], rgb[line->head][2],
                             line->alpha);
      cairo_move_to (cr, x0, row_y (L, line->i));
      cairo_line_to (cr, x1, row_y (L, line->j));
      cairo_stroke (cr);
    }
  cairo_restore (cr);
  g_free (rgb);
}

static void
draw_labels (cairo_t *cr, const SaccadeLinesFigure *f, const SaccadeFigureStyle *style,
             const Layout *L, gboolean key_side)
{
  g_autoptr (PangoLayout) text = saccade_figure_layout_new (cr, style, L->lf, FALSE);
  g_autoptr (PangoLayout) bold = saccade_figure_layout_new (cr, style, L->lf, TRUE);
  char buf[16];

  pango_layout_set_width (text, (int) (LABEL_MAX_EM * L->fs * PANGO_SCALE));
  pango_layout_set_ellipsize (text, PANGO_ELLIPSIZE_END);
  pango_layout_set_width (bold, (int) (LABEL_MAX_EM * L->fs * PANGO_SCALE));
  pango_layout_set_ellipsize (bold, PANGO_ELLIPSIZE_END);
  cairo_save (cr);
  for (int side = 0; side < 2; side++)
    for (int i = 0; i < f->n; i++)
      {
        gboolean lit = f->highlight_token == i && (side == 1) == key_side;
        PangoLayout *lay = lit ? bold : text;
        double w, h, x;
        if (i % L->step != 0 && !lit)
          continue;
        saccade_figure_layout_set (lay, saccade_figure_label (f->labels, i, buf), &w, &h);
        x = side == 0 ? L->g.left_x - w : L->g.right_x;
        if (lit)
          {
            saccade_figure_set_fg (cr, style, 0.12);
            cairo_rectangle (cr, x - 0.25 * L->fs, row_y (L, i) - h / 2, w + 0.5 * L->fs, h);
            cairo_fill (cr);
          }
        saccade_figure_set_fg (cr, style, f->highlight_token < 0 || lit ? 1.0 : 0.75);
        saccade_figure_layout_draw (cr, lay, x, row_y (L, i) - h / 2);
      }
  cairo_restore (cr);
}

void
saccade_figure_lines_draw_full (cairo_t *cr, const SaccadeLinesFigure *f,
                                const SaccadeFigureStyle *style, gboolean highlight_is_key,
                                double width, double height, SaccadeLinesGeometry *geom)
{
  SaccadeFigureStyle tmp;
  Layout L;

  style = saccade_figure_style_resolve (style, &tmp);
  if (geom != NULL)
    *geom = (SaccadeLinesGeometry) { 0 };
  cairo_save (cr);
  saccade_figure_paint_background (cr, style, width, height);
  layout_compute (cr, f, style, width, height, &L);
  if (f->heads == NULL || f->n <= 0 || f->n_heads <= 0)
    {
      saccade_figure_draw_title (cr, style, f->title, width, L.pad);
      cairo_restore (cr);
      return;
    }
  saccade_figure_draw_title (cr, style, f->title, width, L.top);
  draw_legend (cr, f, style, &L, width);
  draw_lines (cr, f, &L, highlight_is_key);
  draw_labels (cr, f, style, &L, highlight_is_key);
  if (geom != NULL)
    *geom = L.g;
  cairo_restore (cr);
}

void
saccade_figure_lines_draw (cairo_t *cr, const SaccadeLinesFigure *f, double width, double height)
{
  saccade_figure_lines_draw_full (cr, f, NULL, FALSE, width, height, NULL);
}

gboolean
saccade_lines_geometry_token_at (const SaccadeLinesGeometry *g, double x, double y, int *token,
                                 gboolean *is_key)
{
  double r;

  if (g->n <= 0 || g->row_h <= 0)
    return FALSE;
  r = floor ((y - g->y0) / g->row_h);
  if (r < 0 || r >= g->n)
    return FALSE;
  /* The label columns, with a little slack towards the lines. */
  if (x >= g->left_x - g->label_w - 4 && x <= g->left_x + 8)
    *is_key = FALSE;
  else if (x >= g->right_x - 8 && x <= g->right_x + g->label_w + 4)
    *is_key = TRUE;
  else
    return FALSE;
  *token = (int) r;
  return TRUE;
}
