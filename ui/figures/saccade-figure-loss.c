/* saccade-figure-loss.c — the in-context-learning curve (saccade-figure.h): the loss at every
 * target position of a sequence repeated twice, the boundary between the copies marked, and
 * each copy's mean loss as a horizontal line with its value. The renderer of the Induction
 * page's curve and of `saccade induction -o FILE`.
 *
 * Layout: title; a value axis on the left from 0 (a loss is never negative) to the largest
 * finite value padded by 5 %, its caption rotated beside it; positions along the bottom with
 * nice integer ticks and a caption. The boundary is a dashed vertical line half a position
 * before the second copy's first target, named at its foot. Each copy's mean is a line in
 * its own colour across the copy, its value tagged in the right margin at the line's height
 * and named in a legend under the title, so that no number is written over the curve. The curve is drawn over everything; NaN values (position 0, which
 * predicts nothing) break it.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <math.h>

/* The colours of the two means: the lines figure's heads 0 and 1 (blue, orange), so they
 * stand apart from the curve drawn in the text colour. */
#define FIRST_COLOUR 0
#define SECOND_COLOUR 1
#define N_COLOURS 10

static double
max_finite (const SaccadeLossFigure *f)
{
  double m = -INFINITY;

  for (int q = 0; q < f->n; q++)
    if (isfinite (f->values[q]))
      m = MAX (m, f->values[q]);
  if (isfinite (f->mean_first))
    m = MAX (m, f->mean_first);
  if (isfinite (f->mean_second))
    m = MAX (m, f->mean_second);
  return m;
}

/* The y of @value in the plot. */
static double
value_y (const SaccadeLossGeometry *g, double lo, double hi, double value)
{
  return g->y0 + g->height - (value - lo) / (hi - lo) * g->height;
}

static void
set_mean_colour (cairo_t *cr, int colour)
{
  double rgb[3];

  saccade_figure_head_color (colour, N_COLOURS, rgb);
  cairo_set_source_rgba (cr, rgb[0], rgb[1], rgb[2], 0.95);
}

/* The legend under the title: a short line in each mean's colour and its text, centred;
 * returns its height (0 when there is no mean to name). The texts name the copy and its
 * value, so the numbers never sit on the curve. */
static double
draw_legend (cairo_t *cr, PangoLayout *layout, const SaccadeFigureStyle *style,
             const SaccadeLossFigure *f, gboolean two, double width, double y)
{
  double fs = saccade_figure_font_size (style), swatch = 1.6 * fs, gap = 1.2 * fs;
  double total = 0, w[2] = { 0 }, h = fs, x;
  g_autofree char *text[2] = { NULL, NULL };
  const double means[2] = { f->mean_first, two ? f->mean_second : NAN };
  int k;

  for (k = 0; k < 2; k++)
    if (isfinite (means[k]))
      {
        /* Translators: the loss curve's legend, e.g. "second copy: mean 2.97 nats". */
        text[k] = g_strdup_printf (_("%s: mean %.2f nats"),
                                   k == 0 ? _("first copy") : _("second copy"), means[k]);
        saccade_figure_layout_set (layout, text[k], &w[k], &h);
        total += (total > 0 ? gap : 0) + swatch + 0.4 * fs + w[k];
      }
  if (total <= 0)
    return 0;
  x = MAX (fs, (width - total) / 2);
  for (k = 0; k < 2; k++)
    if (text[k] != NULL)
      {
        set_mean_colour (cr, k == 0 ? FIRST_COLOUR : SECOND_COLOUR);
        cairo_set_line_width (cr, MAX (1.0, fs * 0.15));
        cairo_move_to (cr, x, y + h / 2);
        cairo_line_to (cr, x + swatch, y + h / 2);
        cairo_stroke (cr);
        saccade_figure_set_fg (cr, style, 1.0);
        saccade_figure_layout_set (layout, text[k], &w[k], &h);
        saccade_figure_layout_draw (cr, layout, x + swatch + 0.4 * fs, y);
        x += swatch + 0.4 * fs + w[k] + gap;
      }
  return h + 0.3 * fs;
}

void
saccade_figure_loss_draw_full (cairo_t *cr, const SaccadeLossFigure *f,
                               const SaccadeFigureStyle *style_in, double width, double height,
                               SaccadeLossGeometry *geom)
{
  SaccadeFigureStyle tmp;
  const SaccadeFigureStyle *style = saccade_figure_style_resolve (style_in, &tmp);
  double fs = saccade_figure_font_size (style), pad = fs, lo = 0, hi;
  double ticks[SACCADE_FIGURE_MAX_TICKS], tick_w = 0, w, h = fs, line_h;
  double title_h = saccade_figure_title_band (cr, style, f->title, width, 1.8 * fs);
  double x0, x1, y0, y1, last_right = -INFINITY, tag_w = 0, legend_h;
  g_autoptr (PangoLayout) layout = NULL;
  SaccadeLossGeometry g = { 0 };
  int n_ticks, split;
  char buf[32];

  if (geom != NULL)
    *geom = g;
  cairo_save (cr);
  saccade_figure_paint_background (cr, style, width, height);
  saccade_figure_set_fg (cr, style, 1.0);
  saccade_figure_draw_title (cr, style, f->title, width, pad * 0.5);
  if (f->n < 2 || f->values == NULL || !isfinite (hi = max_finite (f)))
    {
      cairo_restore (cr);
      return;
    }
  hi = MAX (hi, 1e-6) * 1.05;
  layout = saccade_figure_layout_new (cr, style, fs, FALSE);
  n_ticks = saccade_figure_ticks (SACCADE_SCALE_LINEAR, lo, hi, ticks);
  for (int i = 0; i < n_ticks; i++)
    {
      saccade_figure_format_tick (ticks[i], buf);
      saccade_figure_layout_set (layout, buf, &w, &h);
      tick_w = MAX (tick_w, w);
    }
  line_h = h;
  split = f->boundary > 0 && f->boundary < f->n ? f->boundary : 0;
  /* The means' value tags stand in the right margin, at their lines' height. */
  saccade_figure_layout_set (layout, "00.00", &tag_w, &h);

  /* 1. the plot's frame: caption and ticks on the left, value tags on the right; the
   * legend above; positions and caption below. */
  legend_h = draw_legend (cr, layout, style, f, split > 0, width, pad * 0.5 + title_h);
  x0 = pad + (f->value_name != NULL ? line_h + 0.5 * fs : 0) + tick_w + 0.6 * fs;
  x1 = width - pad - tag_w - 0.4 * fs;
  y0 = pad * 0.5 + title_h + legend_h + 0.5 * fs;
  y1 = height - pad - 2 * line_h - 0.6 * fs;
  if (x1 - x0 < 10 || y1 - y0 < 10)
    {
      cairo_restore (cr);
      return;
    }
  /* Position q is drawn at the centre of its slot [x0 + q·step, x0 + (q+1)·step). */
  g = (SaccadeLossGeometry) { f->n, x0, (x1 - x0) / f->n, y0, x1 - x0, y1 - y0 };
  if (geom != NULL)
    *geom = g;

  /* 2. value grid lines and ticks. */
  cairo_set_line_width (cr, MAX (0.5, fs * 0.06));
  for (int i = 0; i < n_ticks; i++)
    {
      double ty = y1 - (ticks[i] - lo) / (hi - lo) * (y1 - y0);
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
      pango_layout_set_width (layout, (int) ((y1 - y0) * PANGO_SCALE));
      pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
      saccade_figure_layout_draw (cr, layout, 0, 0);
      cairo_restore (cr);
      pango_layout_set_width (layout, -1);
      pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_NONE);
    }

  /* 3. position ticks: the integer ones of a nice step over [0, n - 1], each with a short
   * mark below the frame; a label that would touch the previous one is left out. */
  n_ticks = saccade_figure_ticks (SACCADE_SCALE_LINEAR, 0, f->n - 1, ticks);
  for (int i = 0; i < n_ticks; i++)
    {
      double cx;
      if (ticks[i] < 0 || ticks[i] > f->n - 1 || fabs (ticks[i] - round (ticks[i])) > 1e-9)
        continue;
      cx = x0 + (ticks[i] + 0.5) * g.step;
      saccade_figure_set_fg (cr, style, 0.6);
      cairo_move_to (cr, cx, y1);
      cairo_line_to (cr, cx, y1 + 0.25 * fs);
      cairo_stroke (cr);
      saccade_figure_set_fg (cr, style, 1.0);
      g_snprintf (buf, sizeof buf, "%.0f", ticks[i]);
      saccade_figure_layout_set (layout, buf, &w, &h);
      if (cx - w / 2 < last_right + 0.3 * fs)
        continue;
      saccade_figure_layout_draw (cr, layout, cx - w / 2, y1 + 0.3 * fs);
      last_right = cx + w / 2;
    }
  saccade_figure_layout_set (layout, f->position_name != NULL ? f->position_name
                                                              : _("Target position"), &w, &h);
  saccade_figure_layout_draw (cr, layout, (x0 + x1) / 2 - w / 2, y1 + 0.3 * fs + line_h);
  saccade_figure_set_fg (cr, style, 0.6);
  cairo_rectangle (cr, x0, y0, x1 - x0, y1 - y0);
  cairo_stroke (cr);

  /* 4. inside the frame: the boundary and the copies' names, the means, the curve. */
  /* The value tags: a mean's value beside the frame at its line's height, the lower one
   * pushed down when the two would touch. */
  {
    const double means[2] = { f->mean_first, split > 0 ? f->mean_second : NAN };
    double ty[2] = { NAN, NAN };
    for (int k = 0; k < 2; k++)
      if (isfinite (means[k]))
        ty[k] = value_y (&g, lo, hi, means[k]) - line_h / 2;
    if (isfinite (ty[0]) && isfinite (ty[1]) && fabs (ty[0] - ty[1]) < line_h)
      {
        int low = ty[0] > ty[1] ? 0 : 1;
        ty[low] = ty[1 - low] + line_h;
      }
    for (int k = 0; k < 2; k++)
      if (isfinite (ty[k]))
        {
          g_snprintf (buf, sizeof buf, "%.2f", means[k]);
          set_mean_colour (cr, k == 0 ? FIRST_COLOUR : SECOND_COLOUR);
          saccade_figure_layout_set (layout, buf, &w, &h);
          saccade_figure_layout_draw (cr, layout, x1 + 0.4 * fs, ty[k]);
        }
  }

  cairo_rectangle (cr, x0, y0, x1 - x0, y1 - y0);
  cairo_clip (cr);
  if (split > 0)
    {
      const double dash[] = { 0.4 * fs, 0.3 * fs };
      double bx = x0 + split * g.step;
      saccade_figure_set_fg (cr, style, 0.55);
      cairo_set_dash (cr, dash, 2, 0);
      cairo_move_to (cr, bx, y0);
      cairo_line_to (cr, bx, y1);
      cairo_stroke (cr);
      cairo_set_dash (cr, NULL, 0, 0);
      saccade_figure_set_fg (cr, style, 0.75);
      /* At the bottom, where a learning model's curve has dropped away from the text. */
      saccade_figure_layout_set (layout, _("second copy starts"), &w, &h);
      saccade_figure_layout_draw (cr, layout, bx + 0.4 * fs, y1 - h - 0.3 * fs);
    }
  /* Each copy's mean across its targets: [first_start, boundary) and [boundary, n). */
  cairo_set_line_width (cr, MAX (1.0, fs * 0.15));
  if (isfinite (f->mean_first))
    {
      double y = value_y (&g, lo, hi, f->mean_first);
      set_mean_colour (cr, FIRST_COLOUR);
      cairo_move_to (cr, x0 + MAX (1, f->first_start) * g.step, y);
      cairo_line_to (cr, x0 + (split > 0 ? split : f->n) * g.step, y);
      cairo_stroke (cr);
    }
  if (split > 0 && isfinite (f->mean_second))
    {
      double y = value_y (&g, lo, hi, f->mean_second);
      set_mean_colour (cr, SECOND_COLOUR);
      cairo_move_to (cr, x0 + split * g.step, y);
      cairo_line_to (cr, x1, y);
      cairo_stroke (cr);
    }
  saccade_figure_set_fg (cr, style, 0.9);
  cairo_set_line_width (cr, MAX (1.0, fs * 0.12));
  cairo_set_line_join (cr, CAIRO_LINE_JOIN_ROUND);
  {
    gboolean pen_down = FALSE;
    double r = CLAMP (g.step * 0.2, 0.8, 0.22 * fs);
    for (int q = 0; q < f->n; q++)
      {
        double v = f->values[q], cx = x0 + (q + 0.5) * g.step;
        if (!isfinite (v))
          {
            pen_down = FALSE;
            continue;
          }
        double cy = y1 - (v - lo) / (hi - lo) * (y1 - y0);
        if (pen_down)
          cairo_line_to (cr, cx, cy);
        else
          cairo_move_to (cr, cx, cy);
        pen_down = TRUE;
      }
    cairo_stroke (cr);
    /* A dot per position when there is room for it: a short curve's points stay visible. */
    if (g.step >= 3)
      for (int q = 0; q < f->n; q++)
        if (isfinite (f->values[q]))
          {
            cairo_arc (cr, x0 + (q + 0.5) * g.step,
                       y1 - (f->values[q] - lo) / (hi - lo) * (y1 - y0), r, 0, 2 * G_PI);
            cairo_fill (cr);
          }
  }
  cairo_restore (cr);
}

void
saccade_figure_loss_draw (cairo_t *cr, const SaccadeLossFigure *f, double width, double height)
{
  saccade_figure_loss_draw_full (cr, f, NULL, width, height, NULL);
}

gboolean
saccade_loss_geometry_position_at (const SaccadeLossGeometry *geom, double x, double y,
                                   int *position)
{
  int q;

  if (geom->n <= 0 || geom->step <= 0 || x < geom->x0 || x >= geom->x0 + geom->width
      || y < geom->y0 || y >= geom->y0 + geom->height)
    return FALSE;
  q = (int) ((x - geom->x0) / geom->step);
  if (q < 0 || q >= geom->n)
    return FALSE;
  *position = q;
  return TRUE;
}

void
saccade_figure_loss_natural_size (const SaccadeLossFigure *f, double *w, double *h)
{
  cairo_surface_t *scratch = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (scratch);
  SaccadeFigureStyle style;

  saccade_figure_style_init (&style);
  /* 6 units per position (T = 50: 100 positions, 600 + margins), between 480 (a short
   * curve keeps its labels apart) and 1200 (a long one stays a page wide); 360 of loss. */
  *w = CLAMP (120 + 6.0 * MAX (1, f->n), 480, 1200);
  *h = 360;
  *w = MAX (*w, ceil (saccade_figure_title_width (cr, &style, f->title) + 1));
  cairo_destroy (cr);
  cairo_surface_destroy (scratch);
}
