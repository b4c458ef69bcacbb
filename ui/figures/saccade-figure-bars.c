/* saccade-figure-bars.c — one value per token as vertical bars (saccade-figure.h): how much
 * each input token reaches one position through attention rollout or flow. The renderer
 * of the Rollout view's bars and of their export.
 *
 * Layout: title; a value axis on the left starting at 0 with nice ticks to the largest
 * value; one bar per token, coloured by its value through the colour map (so the bars read
 * like the row of the rollout map above them); token labels under the bars, reading
 * upwards, ellipsized at 12 em and thinned to every k-th when bars get thinner than a line.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <math.h>

#define LABEL_MAX_EM 12.0

static double
max_value (const SaccadeBarsFigure *f)
{
  double m = 0;

  for (int i = 0; f->values != NULL && i < f->n; i++)
    if (isfinite (f->values[i]))
      m = MAX (m, f->values[i]);
  return m > 0 ? m : 1.0;
}

void
saccade_figure_bars_draw_full (cairo_t *cr, const SaccadeBarsFigure *f,
                               const SaccadeFigureStyle *style_in, double width,
                               double height, SaccadeBarsGeometry *geom)
{
  SaccadeFigureStyle tmp;
  const SaccadeFigureStyle *style = saccade_figure_style_resolve (style_in, &tmp);
  double fs = saccade_figure_font_size (style), pad = fs, hi, w, h, line_h, tick_w = 0;
  double title_h = saccade_figure_title_band (cr, style, f->title, width, 1.8 * fs);
  double ticks[SACCADE_FIGURE_MAX_TICKS], label_h, x0, x1, y0, y1, step;
  g_autoptr (PangoLayout) layout = NULL;
  int n_ticks, every;
  char buf[32];

  if (geom != NULL)
    *geom = (SaccadeBarsGeometry) { 0 };
  cairo_save (cr);
  saccade_figure_paint_background (cr, style, width, height);
  saccade_figure_draw_title (cr, style, f->title, width, pad * 0.5);
  if (f->n <= 0 || f->values == NULL)
    {
      cairo_restore (cr);
      return;
    }
  hi = max_value (f);
  layout = saccade_figure_layout_new (cr, style, fs, FALSE);
  n_ticks = saccade_figure_ticks (SACCADE_SCALE_LINEAR, 0, hi, ticks);
  for (int i = 0; i < n_ticks; i++)
    {
      saccade_figure_format_tick (ticks[i], buf);
      saccade_figure_layout_set (layout, buf, &w, &h);
      tick_w = MAX (tick_w, w);
    }
  line_h = h;
  label_h = MIN (LABEL_MAX_EM * fs,
                 saccade_figure_labels_max_width (layout, f->labels, f->n, NULL));

  /* 1. the frame: value caption and ticks left, token labels (upwards) below. */
  x0 = pad + (f->value_name != NULL ? line_h + 0.5 * fs : 0) + tick_w + 0.6 * fs;
  x1 = width - pad;
  y0 = pad * 0.5 + title_h + 0.5 * fs;
  y1 = height - pad - label_h - 0.4 * fs;
  if (x1 - x0 < 10 || y1 - y0 < 10)
    {
      cairo_restore (cr);
      return;
    }
  step = (x1 - x0) / f->n;
  if (geom != NULL)
    *geom = (SaccadeBarsGeometry) { .n = f->n, .x0 = x0, .step = step, .y0 = y0,
                                    .height = y1 - y0 };

  /* 2. grid lines, ticks, caption. */
  cairo_set_line_width (cr, MAX (0.5, fs * 0.06));
  for (int i = 0; i < n_ticks; i++)
    {
      double ty = y1 - ticks[i] / hi * (y1 - y0);
      saccade_figure_set_fg (cr, style, 0.12);
      cairo_move_to (cr, x0, ty);
      cairo_line_to (cr, x1, ty);
      cairo_stroke (cr);
      saccade_figure_set_fg (cr, style, 1.0);
      saccade_figure_format_tick (ticks[i], buf);
      saccade_figure_layout_set (layout, buf, &w, &h);
      saccade_figure_layout_draw (cr, layout, x0 - 0.4 * fs - w, ty - h / 2);
    }
  if (f->value_name != NULL)
    {
      saccade_figure_layout_set (layout, f->value_name, &w, &h);
      cairo_save (cr);
      cairo_translate (cr, pad, (y0 + y1) / 2 + MIN (w, y1 - y0) / 2);
      cairo_rotate (cr, -G_PI / 2);
      saccade_figure_layout_draw (cr, layout, 0, 0);
      cairo_restore (cr);
    }

  /* 3. the bars, then the baseline over their feet. */
  for (int i = 0; i < f->n; i++)
    {
      double v = isfinite (f->values[i]) ? MAX (0, f->values[i]) : 0, rgb[3];
      double bh = v / hi * (y1 - y0);
      saccade_colormap_rgb (f->colormap, v / hi, rgb);
      cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
      cairo_rectangle (cr, x0 + i * step + 0.1 * step, y1 - bh, 0.8 * step, bh);
      cairo_fill (cr);
    }
  saccade_figure_set_fg (cr, style, 0.8);
  cairo_move_to (cr, x0, y1);
  cairo_line_to (cr, x1, y1);
  cairo_stroke (cr);

  /* 4. token labels, reading upwards, right-aligned under their bar. */
  saccade_figure_set_fg (cr, style, 1.0);
  every = MAX (1, (int) ceil (line_h / step));
  pango_layout_set_width (layout, (int) (label_h * PANGO_SCALE));
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
  pango_layout_set_alignment (layout, PANGO_ALIGN_RIGHT);
  for (int i = 0; i < f->n; i += every)
    {
      char pos[16];
      saccade_figure_layout_set (layout, saccade_figure_label (f->labels, i, pos), &w, &h);
      cairo_save (cr);
      cairo_translate (cr, x0 + (i + 0.5) * step - h / 2, y1 + 0.3 * fs + label_h);
      cairo_rotate (cr, -G_PI / 2);
      saccade_figure_layout_draw (cr, layout, 0, 0);
      cairo_restore (cr);
    }
  cairo_restore (cr);
}

void
saccade_figure_bars_draw (cairo_t *cr, const SaccadeBarsFigure *f, double width, double height)
{
  saccade_figure_bars_draw_full (cr, f, NULL, width, height, NULL);
}

gboolean
saccade_bars_geometry_bar_at (const SaccadeBarsGeometry *geom, double x, double y, int *bar)
{
  int i;

  if (geom->n <= 0 || geom->step <= 0 || y < geom->y0 || y > geom->y0 + geom->height)
    return FALSE;
  i = (int) floor ((x - geom->x0) / geom->step);
  if (i < 0 || i >= geom->n)
    return FALSE;
  *bar = i;
  return TRUE;
}

void
saccade_figure_bars_natural_size (const SaccadeBarsFigure *f, double *W, double *H)
{
  cairo_surface_t *scratch = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (scratch);
  SaccadeFigureStyle style;
  g_autoptr (PangoLayout) layout = NULL;
  double label_h;

  saccade_figure_style_init (&style);
  layout = saccade_figure_layout_new (cr, &style, saccade_figure_font_size (&style), FALSE);
  label_h = MIN (LABEL_MAX_EM * saccade_figure_font_size (&style),
                 saccade_figure_labels_max_width (layout, f->labels, f->n, NULL));
  /* Bars of 16 units (a label's line and a gap) up to 60 tokens, then at most 960. */
  *W = ceil (100 + MIN (16.0 * MAX (1, f->n), 960.0));
  *H = ceil (300 + label_h);
  *W = MAX (*W, ceil (saccade_figure_title_width (cr, &style, f->title) + 1));
  g_clear_object (&layout);
  cairo_destroy (cr);
  cairo_surface_destroy (scratch);
}
