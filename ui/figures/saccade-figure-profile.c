/* saccade-figure-profile.c — the layer profile: one head metric by layer, a dot per head
 * and the layer's mean as a line (saccade-figure.h). The renderer of the Model page's
 * "Profile" view and of its export.
 *
 * Layout: title; a value axis on the left with nice ticks over [min, max] of the finite
 * values (padded by 5 %), its caption rotated beside it; layers along the bottom (every
 * k-th numbered so that numbers never overlap). Dots take their head's colour from the
 * lines figure's palette (saccade_figure_head_color), so head 2 is the same colour in both
 * figures, and a legend on the right names each colour's head and the mean's line; NaN
 * values (a metric undefined for the run) are left out of dots, means and range.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <math.h>

/* The finite range of the values, padded so that no dot sits on the frame. FALSE when
 * there is no finite value. */
static gboolean
value_range (const SaccadeProfileFigure *f, double *lo, double *hi)
{
  double a = INFINITY, b = -INFINITY;
  gsize k, nh = (gsize) f->n_layers * f->n_heads;

  for (k = 0; f->values != NULL && k < nh; k++)
    if (isfinite (f->values[k]))
      {
        a = MIN (a, f->values[k]);
        b = MAX (b, f->values[k]);
      }
  if (!(a <= b))
    return FALSE;
  if (b - a < 1e-12)
    {
      a -= 0.5;
      b += 0.5;
    }
  *lo = a - 0.05 * (b - a);
  *hi = b + 0.05 * (b - a);
  return TRUE;
}

/* The legend of head colours right of the plot: a dot and the head's number per head,
 * then the layer mean's line, in as many columns of @per_col entries as the plot's height
 * @avail_h needs. Returns its width (with the gap before it). */
static double
legend_width (PangoLayout *layout, int n_heads, double fs, double avail_h, int *per_col)
{
  double w, h;
  char buf[32];
  int n = n_heads + 1, cols;

  g_snprintf (buf, sizeof buf, "%d", MAX (0, n_heads - 1));
  saccade_figure_layout_set (layout, buf, &w, &h);
  saccade_figure_layout_set (layout, _("mean"), &w, NULL);
  *per_col = MAX (1, (int) floor (avail_h / (1.2 * h)));
  cols = (n + *per_col - 1) / *per_col;
  /* a column: the dot or line (1.6 em), the widest text, a gap */
  return 0.8 * fs + cols * (1.6 * fs + MAX (w, 2 * fs) + 0.6 * fs);
}

static void
draw_legend (cairo_t *cr, PangoLayout *layout, const SaccadeFigureStyle *style, int n_heads,
             double fs, double x, double y, int per_col, double col_w)
{
  double w, h, r = 0.3 * fs;
  char buf[32];

  saccade_figure_layout_set (layout, "0", &w, &h);
  for (int i = 0; i <= n_heads; i++)
    {
      double ex = x + (i / per_col) * col_w, ey = y + (i % per_col) * 1.2 * h, cy = ey + h / 2;

      if (i < n_heads)
        {
          double rgb[3];
          saccade_figure_head_color (i, n_heads, rgb);
          cairo_set_source_rgba (cr, rgb[0], rgb[1], rgb[2], 0.8);
          cairo_arc (cr, ex + 0.8 * fs, cy, r, 0, 2 * G_PI);
          cairo_fill (cr);
          g_snprintf (buf, sizeof buf, "%d", i);
        }
      else
        {
          saccade_figure_set_fg (cr, style, 0.9);
          cairo_set_line_width (cr, MAX (1.0, fs * 0.15));
          cairo_move_to (cr, ex + 0.1 * fs, cy);
          cairo_line_to (cr, ex + 1.5 * fs, cy);
          cairo_stroke (cr);
          g_strlcpy (buf, _("mean"), sizeof buf);
        }
      saccade_figure_set_fg (cr, style, 1.0);
      saccade_figure_layout_set (layout, buf, &w, NULL);
      saccade_figure_layout_draw (cr, layout, ex + 1.6 * fs, ey);
    }
}

void
saccade_figure_profile_draw_full (cairo_t *cr, const SaccadeProfileFigure *f,
                                  const SaccadeFigureStyle *style_in, double width,
                                  double height)
{
  SaccadeFigureStyle tmp;
  const SaccadeFigureStyle *style = saccade_figure_style_resolve (style_in, &tmp);
  double fs = saccade_figure_font_size (style), pad = fs, lo = 0, hi = 1;
  double ticks[SACCADE_FIGURE_MAX_TICKS], tick_w = 0, w, h = fs, line_h;
  double title_h = saccade_figure_title_band (cr, style, f->title, width, 1.8 * fs);
  double x0, x1, y0, y1, step, legend_w;
  g_autoptr (PangoLayout) layout = NULL;
  int n_ticks, every, l, hd, per_col;
  char buf[32];

  cairo_save (cr);
  saccade_figure_paint_background (cr, style, width, height);
  saccade_figure_set_fg (cr, style, 1.0);
  saccade_figure_draw_title (cr, style, f->title, width, pad * 0.5);
  if (f->n_layers <= 0 || f->n_heads <= 0 || !value_range (f, &lo, &hi))
    {
      cairo_restore (cr);
      return;
    }
  layout = saccade_figure_layout_new (cr, style, fs, FALSE);
  n_ticks = saccade_figure_ticks (SACCADE_SCALE_LINEAR, lo, hi, ticks);
  for (int i = 0; i < n_ticks; i++)
    {
      saccade_figure_format_tick (ticks[i], buf);
      saccade_figure_layout_set (layout, buf, &w, &h);
      tick_w = MAX (tick_w, w);
    }
  line_h = h;
  /* 1. the plot's frame: caption, ticks on the left; layer numbers and caption below. */
  x0 = pad + (f->metric_name != NULL ? line_h + 0.5 * fs : 0) + tick_w + 0.6 * fs;
  y0 = pad * 0.5 + title_h + 0.5 * fs;
  y1 = height - pad - 2 * line_h - 0.6 * fs;
  /* The legend of head colours takes the right side. */
  legend_w = legend_width (layout, f->n_heads, fs, y1 - y0, &per_col);
  x1 = width - pad - legend_w;
  if (x1 - x0 < 10 || y1 - y0 < 10)
    {
      cairo_restore (cr);
      return;
    }
  step = (x1 - x0) / f->n_layers;

  /* 2. axes, grid lines and tick labels. */
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
  saccade_figure_set_fg (cr, style, 0.6);
  cairo_rectangle (cr, x0, y0, x1 - x0, y1 - y0);
  cairo_stroke (cr);
  saccade_figure_set_fg (cr, style, 1.0);
  /* Layer numbers: every k-th, k the smallest that keeps two digits and a gap apart. */
  saccade_figure_layout_set (layout, "000", &w, &h);
  every = MAX (1, (int) ceil (w / step));
  for (l = 0; l < f->n_layers; l += every)
    {
      double cx = x0 + (l + 0.5) * step;
      g_snprintf (buf, sizeof buf, "%d", l);
      saccade_figure_layout_set (layout, buf, &w, &h);
      saccade_figure_layout_draw (cr, layout, cx - w / 2, y1 + 0.3 * fs);
    }
  saccade_figure_layout_set (layout, _("Layer"), &w, &h);
  saccade_figure_layout_draw (cr, layout, (x0 + x1) / 2 - w / 2, y1 + 0.3 * fs + line_h);
  if (f->metric_name != NULL)
    {
      saccade_figure_layout_set (layout, f->metric_name, &w, &h);
      cairo_save (cr);
      cairo_translate (cr, pad, (y0 + y1) / 2 + MIN (w, y1 - y0) / 2);
      cairo_rotate (cr, -G_PI / 2);
      pango_layout_set_width (layout, (int) ((y1 - y0) * PANGO_SCALE));
      pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
      saccade_figure_layout_draw (cr, layout, 0, 0);
      cairo_restore (cr);
    }

  draw_legend (cr, layout, style, f->n_heads, fs, x1 + 0.8 * fs, y0, per_col,
               (legend_w - 0.8 * fs) / ((f->n_heads + per_col) / per_col));

  /* 3. dots (spread a little across the layer's column by head, so equal values do not
   * hide each other), then the mean line over them. */
  cairo_rectangle (cr, x0, y0, x1 - x0, y1 - y0);
  cairo_clip (cr);
  {
    double r = CLAMP (step * 0.08, 1.5, 0.3 * fs);
    for (l = 0; l < f->n_layers; l++)
      for (hd = 0; hd < f->n_heads; hd++)
        {
          double v = f->values[(gsize) l * f->n_heads + hd], rgb[3];
          double cx = x0 + (l + 0.5) * step
                      + (f->n_heads > 1 ? (hd / (f->n_heads - 1.0) - 0.5) * step * 0.5 : 0);
          if (!isfinite (v))
            continue;
          saccade_figure_head_color (hd, f->n_heads, rgb);
          cairo_set_source_rgba (cr, rgb[0], rgb[1], rgb[2], 0.8);
          cairo_arc (cr, cx, y1 - (v - lo) / (hi - lo) * (y1 - y0), r, 0, 2 * G_PI);
          cairo_fill (cr);
        }
  }
  saccade_figure_set_fg (cr, style, 0.9);
  cairo_set_line_width (cr, MAX (1.0, fs * 0.15));
  {
    gboolean pen_down = FALSE;
    for (l = 0; l < f->n_layers; l++)
      {
        double sum = 0;
        int count = 0;
        for (hd = 0; hd < f->n_heads; hd++)
          {
            double v = f->values[(gsize) l * f->n_heads + hd];
            if (isfinite (v))
              {
                sum += v;
                count++;
              }
          }
        if (count == 0)
          {
            pen_down = FALSE;
            continue;
          }
        double cx = x0 + (l + 0.5) * step, cy = y1 - (sum / count - lo) / (hi - lo) * (y1 - y0);
        if (pen_down)
          cairo_line_to (cr, cx, cy);
        else
          cairo_move_to (cr, cx, cy);
        pen_down = TRUE;
      }
    cairo_stroke (cr);
  }
  cairo_restore (cr);
}

void
saccade_figure_profile_draw (cairo_t *cr, const SaccadeProfileFigure *f, double width,
                             double height)
{
  saccade_figure_profile_draw_full (cr, f, NULL, width, height);
}

void
saccade_figure_profile_natural_size (const SaccadeProfileFigure *f, double *w, double *h)
{
  cairo_surface_t *scratch = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (scratch);
  SaccadeFigureStyle style;

  saccade_figure_style_init (&style);
  /* 24 units per layer (SmolLM2's 30 layers: 720), 400 of values: dots of one layer stay
   * apart, and the mean line's slope stays readable. */
  *w = 120 + 24.0 * MAX (1, f->n_layers);
  *h = 400;
  {
    g_autoptr (PangoLayout) layout =
      saccade_figure_layout_new (cr, &style, SACCADE_FIGURE_BASE_FONT, FALSE);
    int per_col;
    /* the legend, measured for the plot's height at this size */
    *w += legend_width (layout, f->n_heads, SACCADE_FIGURE_BASE_FONT, *h - 80, &per_col);
  }
  *w = MAX (*w, ceil (saccade_figure_title_width (cr, &style, f->title) + 1));
  cairo_destroy (cr);
  cairo_surface_destroy (scratch);
}
