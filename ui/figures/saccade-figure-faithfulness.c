/* saccade-figure-faithfulness.c — Jain & Wallace's Table 2 as a figure (saccade-figure.h,
 * "faithfulness"): per attention source, how well its token ranking agrees with
 * leave-one-out over a file of sentences. The figure of `saccade faithfulness --file -o`.
 * Also the PNG/SVG/PDF export of this figure and of the scatter (saccade-figure-scatter.c).
 *
 * Layout: title; a caption naming the sentences and the statistics; one row per source, its
 * name on the left; a τ panel on [−1, 1] with a line at 0, the mean τ as a dot and ± one
 * standard deviation as whiskers with caps (clamped to the axis); a share panel on [0, 1]
 * with the share of sentences whose τ has p < 0.05 as a bar; on the right the numbers
 * ("0.12 ± 0.30 · 38 % of 50"), so the figure reads as the table it replaces. A row
 * without a defined mean is left empty but named, with its count of undefined sentences.
 * A row that carries its sentences' τ (the window's prompt-set study) draws them first, as
 * a strip of small translucent points spread over the row's height, so the distribution
 * shows behind its mean and spread.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <math.h>

#define DOT_COLOUR 0
#define BAR_COLOUR 1
#define STRIP_COLOUR 2
#define N_COLOURS 10
/* The strip's vertical spread, a share of the row: the golden-ratio sequence spreads n
 * points evenly over it (deterministic, so the same data draws the same picture). */
#define STRIP_SPREAD 0.6
#define GOLDEN 0.6180339887498949

static void
set_colour (cairo_t *cr, int colour, double alpha)
{
  double rgb[3];

  saccade_figure_head_color (colour, N_COLOURS, rgb);
  cairo_set_source_rgba (cr, rgb[0], rgb[1], rgb[2], alpha);
}

static void
row_numbers (const SaccadeFaithRow *r, char *buf, gsize size)
{
  const int n = r->n_defined + r->n_undefined;

  if (isnan (r->tau_mean))
    /* Translators: a row of the faithfulness figure with no defined τ; %d sentences. */
    g_snprintf (buf, size, _("undefined in all %d"), n);
  else if (isnan (r->tau_std))
    g_snprintf (buf, size, "%.2f · %.0f %% / %d", r->tau_mean, 100 * r->share_significant,
                r->n_defined);
  else
    g_snprintf (buf, size, "%.2f ± %.2f · %.0f %% / %d", r->tau_mean, r->tau_std,
                100 * r->share_significant, r->n_defined);
}

static void
axis (cairo_t *cr, const SaccadeFigureStyle *style, PangoLayout *layout, double x0, double w,
      double y0, double y1, double lo, double hi, const double *ticks, int n_ticks,
      const char *caption)
{
  const double fs = saccade_figure_font_size (style);
  double tw, th;
  char buf[32];

  cairo_set_line_width (cr, MAX (0.5, fs * 0.06));
  for (int i = 0; i < n_ticks; i++)
    {
      const double x = x0 + (ticks[i] - lo) / (hi - lo) * w;
      saccade_figure_set_fg (cr, style, ticks[i] == 0 && lo < 0 ? 0.55 : 0.12);
      cairo_move_to (cr, x, y0);
      cairo_line_to (cr, x, y1);
      cairo_stroke (cr);
      saccade_figure_set_fg (cr, style, 1.0);
      saccade_figure_format_tick (ticks[i], buf);
      saccade_figure_layout_set (layout, buf, &tw, &th);
      saccade_figure_layout_draw (cr, layout, x - tw / 2, y1 + 0.3 * fs);
    }
  saccade_figure_layout_set (layout, caption, &tw, &th);
  saccade_figure_layout_draw (cr, layout, x0 + w / 2 - tw / 2, y1 + 0.3 * fs + th);
  saccade_figure_set_fg (cr, style, 0.6);
  cairo_rectangle (cr, x0, y0, w, y1 - y0);
  cairo_stroke (cr);
}

void
saccade_figure_faithfulness_draw_full (cairo_t *cr, const SaccadeFaithfulnessFigure *f,
                                       const SaccadeFigureStyle *style_in, double width,
                                       double height, SaccadeFaithfulnessGeometry *geom)
{
  static const double TAU_TICKS[] = { -1, -0.5, 0, 0.5, 1 };
  static const double SHARE_TICKS[] = { 0, 0.5, 1 };
  SaccadeFigureStyle tmp;
  const SaccadeFigureStyle *style = saccade_figure_style_resolve (style_in, &tmp);
  const double fs = saccade_figure_font_size (style), pad = fs;
  const double title_h = saccade_figure_title_band (cr, style, f->title, width, 1.8 * fs);
  double name_w = 0, num_w = 0, w, h, line_h = fs, x0, y0, y1, row_h, avail, tau_w, share_w;
  double share_x0, num_x0;
  g_autoptr (PangoLayout) layout = NULL;
  g_autofree char *caption = NULL;
  SaccadeFaithfulnessGeometry g = { 0 };
  gboolean strips = FALSE;
  char buf[96];

  if (geom != NULL)
    *geom = g;
  cairo_save (cr);
  saccade_figure_paint_background (cr, style, width, height);
  saccade_figure_set_fg (cr, style, 1.0);
  saccade_figure_draw_title (cr, style, f->title, width, pad * 0.5);
  if (f->n_rows <= 0 || f->rows == NULL)
    {
      cairo_restore (cr);
      return;
    }
  layout = saccade_figure_layout_new (cr, style, fs, FALSE);
  for (int r = 0; r < f->n_rows; r++)
    {
      saccade_figure_layout_set (layout, f->rows[r].name, &w, &line_h);
      name_w = MAX (name_w, w);
      row_numbers (&f->rows[r], buf, sizeof buf);
      saccade_figure_layout_set (layout, buf, &w, &line_h);
      num_w = MAX (num_w, w);
    }
  for (int r = 0; r < f->n_rows; r++)
    strips |= f->rows[r].taus != NULL && f->rows[r].n_taus > 0;
  if (strips)
    /* Translators: the faithfulness figure's caption with each sentence's τ drawn; %d is
     * the number of sentences. */
    caption = g_strdup_printf (_("%d sentences · Kendall τ with leave-one-out: points each "
                                 "sentence, mean ± std · bars: share with p < 0.05"),
                               f->n_sentences);
  else
    /* Translators: the faithfulness figure's caption; %d is the number of sentences. */
    caption = g_strdup_printf (_("%d sentences · Kendall τ with leave-one-out: mean ± std · "
                                 "bars: share with p < 0.05"), f->n_sentences);
  saccade_figure_set_fg (cr, style, 0.8);
  pango_layout_set_width (layout, (int) ((width - 2 * pad) * PANGO_SCALE));
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
  saccade_figure_layout_set (layout, caption, &w, &h);
  saccade_figure_layout_draw (cr, layout, MAX (pad, width / 2 - w / 2), pad * 0.5 + title_h);
  pango_layout_set_width (layout, -1);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_NONE);

  /* 1. Columns: names | τ panel (60 % of what is left) | share panel | numbers. */
  x0 = pad + name_w + 0.8 * fs;
  avail = width - x0 - pad - num_w - 1.6 * fs;
  tau_w = avail * 0.6;
  share_w = avail * 0.4 - fs;
  share_x0 = x0 + tau_w + fs;
  num_x0 = share_x0 + share_w + 0.8 * fs;
  y0 = pad * 0.5 + title_h + line_h + 0.8 * fs;
  y1 = height - pad - 2 * line_h - 0.6 * fs;
  if (tau_w < 20 || share_w < 10 || y1 - y0 < f->n_rows)
    {
      cairo_restore (cr);
      return;
    }
  row_h = (y1 - y0) / f->n_rows;
  g = (SaccadeFaithfulnessGeometry) { f->n_rows, y0, row_h, x0, tau_w, share_x0, share_w };
  axis (cr, style, layout, x0, tau_w, y0, y1, -1, 1, TAU_TICKS, G_N_ELEMENTS (TAU_TICKS),
        _("Kendall τ (mean ± std)"));
  axis (cr, style, layout, share_x0, share_w, y0, y1, 0, 1, SHARE_TICKS,
        G_N_ELEMENTS (SHARE_TICKS), _("share with p < 0.05"));

  /* 2. The rows. */
  for (int r = 0; r < f->n_rows; r++)
    {
      const SaccadeFaithRow *row = &f->rows[r];
      const double cy = y0 + (r + 0.5) * row_h, cap = MIN (0.5 * fs, 0.3 * row_h);
      saccade_figure_set_fg (cr, style, 1.0);
      saccade_figure_layout_set (layout, row->name, &w, &h);
      saccade_figure_layout_draw (cr, layout, x0 - 0.8 * fs - w, cy - h / 2);
      row_numbers (row, buf, sizeof buf);
      saccade_figure_layout_set (layout, buf, &w, &h);
      saccade_figure_layout_draw (cr, layout, num_x0, cy - h / 2);
      if (isnan (row->tau_mean))
        continue;
      if (row->taus != NULL)
        {
          const double rad = MAX (1.0, MIN (0.22 * fs, 0.12 * row_h));
          set_colour (cr, STRIP_COLOUR, 0.6);
          for (int i = 0; i < row->n_taus; i++)
            {
              const double jitter = fmod (i * GOLDEN, 1.0) - 0.5;
              if (isnan (row->taus[i]))
                continue;
              cairo_new_sub_path (cr);
              cairo_arc (cr, x0 + (CLAMP (row->taus[i], -1, 1) + 1) / 2 * tau_w,
                         cy + jitter * STRIP_SPREAD * row_h, rad, 0, 2 * G_PI);
            }
          cairo_fill (cr);
        }
      if (isfinite (row->share_significant))
        {
          set_colour (cr, BAR_COLOUR, 0.85);
          cairo_rectangle (cr, share_x0, cy - 0.3 * row_h,
                           CLAMP (row->share_significant, 0, 1) * share_w, 0.6 * row_h);
          cairo_fill (cr);
        }
      set_colour (cr, DOT_COLOUR, 0.95);
      cairo_set_line_width (cr, MAX (1.0, 0.12 * fs));
      if (isfinite (row->tau_std))
        {
          const double lo = CLAMP (row->tau_mean - row->tau_std, -1, 1);
          const double hi = CLAMP (row->tau_mean + row->tau_std, -1, 1);
          const double xl = x0 + (lo + 1) / 2 * tau_w, xh = x0 + (hi + 1) / 2 * tau_w;
          cairo_move_to (cr, xl, cy);
          cairo_line_to (cr, xh, cy);
          cairo_move_to (cr, xl, cy - cap);
          cairo_line_to (cr, xl, cy + cap);
          cairo_move_to (cr, xh, cy - cap);
          cairo_line_to (cr, xh, cy + cap);
          cairo_stroke (cr);
        }
      cairo_arc (cr, x0 + (CLAMP (row->tau_mean, -1, 1) + 1) / 2 * tau_w, cy,
                 MIN (0.4 * fs, 0.35 * row_h), 0, 2 * G_PI);
      cairo_fill (cr);
    }
  if (geom != NULL)
    *geom = g;
  cairo_restore (cr);
}

void
saccade_figure_faithfulness_draw (cairo_t *cr, const SaccadeFaithfulnessFigure *f,
                                  double width, double height)
{
  saccade_figure_faithfulness_draw_full (cr, f, NULL, width, height, NULL);
}

void
saccade_figure_faithfulness_natural_size (const SaccadeFaithfulnessFigure *f, double *w,
                                          double *h)
{
  cairo_surface_t *scratch = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (scratch);
  SaccadeFigureStyle style;

  saccade_figure_style_init (&style);
  /* 36 units a row keeps dots, whiskers and numbers apart; 720 wide holds the caption. */
  *w = 720;
  *h = 110 + 36.0 * MAX (1, f->n_rows);
  *w = MAX (*w, ceil (saccade_figure_title_width (cr, &style, f->title) + 1));
  cairo_destroy (cr);
  cairo_surface_destroy (scratch);
}

/* ------------------------------------------------------------------------------------ */
/* Export, through the one writer (saccade-figure-private.h). */

static void
draw_scatter (cairo_t *cr, const void *f, double w, double h)
{
  saccade_figure_scatter_draw (cr, f, w, h);
}

static void
size_scatter (const void *f, double *w, double *h)
{
  saccade_figure_scatter_natural_size (f, w, h);
}

gboolean
saccade_figure_export_scatter (const SaccadeScatterFigure *f, const char *path,
                               const SaccadeFigureExportOptions *opts, GError **error)
{
  if (saccade_figure_refuse_empty (f->x == NULL || f->y == NULL || f->n <= 0, error))
    return FALSE;
  {
    SaccadeScatterFigure g = *f;

    g.title = saccade_figure_export_title (opts, f->title);
    return saccade_figure_export_drawn (&g, g.title, draw_scatter, size_scatter, path, opts,
                                        error);
  }
}

static void
draw_faith (cairo_t *cr, const void *f, double w, double h)
{
  saccade_figure_faithfulness_draw (cr, f, w, h);
}

static void
size_faith (const void *f, double *w, double *h)
{
  saccade_figure_faithfulness_natural_size (f, w, h);
}

gboolean
saccade_figure_export_faithfulness (const SaccadeFaithfulnessFigure *f, const char *path,
                                    const SaccadeFigureExportOptions *opts, GError **error)
{
  if (saccade_figure_refuse_empty (f->rows == NULL || f->n_rows <= 0, error))
    return FALSE;
  {
    SaccadeFaithfulnessFigure g = *f;

    g.title = saccade_figure_export_title (opts, f->title);
    return saccade_figure_export_drawn (&g, g.title, draw_faith, size_faith, path, opts, error);
  }
}
