/* saccade-figure-scatter.c — attention importance against leave-one-out importance, one
 * point per token (saccade-figure.h, "scatter"): the figure of `saccade faithfulness RUN -o`
 * and of the Ablation page's faithfulness view. Not the Table-2 figure over many sentences
 * (saccade-figure-faithfulness.c).
 *
 * Layout: title; the plot on the left with nice ticks on both axes from 0 (importances are
 * never negative) — or from the smallest value when one is negative — to the largest value
 * padded by 5 %, the captions below and rotated on the left; Kendall τ and Spearman ρ with
 * their p-values in a box in the plot corner that hides the fewest points, on an 85 % veil
 * of the background (a point under it stays visible, faintly, and the text stays
 * legible); points as dots in the first head colour, each labelled on its right (on its
 * left near the plot's edge).
 * With bars: a panel on the right with one row per item, its label and two horizontal
 * bars — the x value (blue) and the y value (orange), each scaled to its own maximum, since
 * the two importances have different units —
 * so a reader can see which tokens the two rankings disagree on.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <limits.h>
#include <math.h>

/* The two series' colours: the lines figure's heads 0 and 1 (blue, orange). */
#define X_COLOUR 0
#define Y_COLOUR 1
#define N_COLOURS 10
/* Item labels beside points and bars are cut at this many em. */
#define LABEL_MAX_EM 8.0

static void
set_colour (cairo_t *cr, int colour, double alpha)
{
  double rgb[3];

  saccade_figure_head_color (colour, N_COLOURS, rgb);
  cairo_set_source_rgba (cr, rgb[0], rgb[1], rgb[2], alpha);
}

/* [lo, hi] of the finite values of @v, widened to include 0 and padded 5 % at the top. */
static void
value_range (const double *v, const double *other, int n, double *lo, double *hi)
{
  double a = 0, b = -INFINITY;

  for (int i = 0; i < n; i++)
    if (isfinite (v[i]) && isfinite (other[i]))
      {
        a = MIN (a, v[i]);
        b = MAX (b, v[i]);
      }
  if (!isfinite (b) || b <= a)
    b = a + 1;
  *lo = a;
  *hi = a + (b - a) * 1.05;
}

static void
format_stat (char *buf, gsize size, const char *name, double v, double p)
{
  if (isnan (v))
    /* Translators: a rank correlation that cannot be computed, e.g. "Kendall τ undefined". */
    g_snprintf (buf, size, _("%s undefined"), name);
  else if (isnan (p))
    g_snprintf (buf, size, "%s = %.3f", name, v);
  else if (p < 1e-3)
    g_snprintf (buf, size, "%s = %.3f (p = %.1e)", name, v, p);
  else
    g_snprintf (buf, size, "%s = %.3f (p = %.3f)", name, v, p);
}

/* Draws @caption rotated upwards, centred on (@x, @cy). */
static void
draw_vertical_caption (cairo_t *cr, PangoLayout *layout, const char *caption, double x,
                       double cy, double max_len)
{
  double w, h;

  saccade_figure_layout_set (layout, caption, &w, &h);
  cairo_save (cr);
  cairo_translate (cr, x, cy + MIN (w, max_len) / 2);
  cairo_rotate (cr, -G_PI / 2);
  pango_layout_set_width (layout, (int) (max_len * PANGO_SCALE));
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
  saccade_figure_layout_draw (cr, layout, 0, 0);
  cairo_restore (cr);
  pango_layout_set_width (layout, -1);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_NONE);
}

/* The bars' panel over (x0, y0, w, h). */
static void
draw_bars (cairo_t *cr, const SaccadeScatterFigure *f, const SaccadeFigureStyle *style,
           PangoLayout *layout, double x0, double y0, double w, double h,
           SaccadeScatterGeometry *g)
{
  const double fs = saccade_figure_font_size (style);
  double mx = 0, my = 0, label_w, line_h, row_h, bx, bw, tw, th, legend_x;
  char buf[16];

  for (int i = 0; i < f->n; i++)
    {
      if (isfinite (f->x[i]))
        mx = MAX (mx, fabs (f->x[i]));
      if (isfinite (f->y[i]))
        my = MAX (my, fabs (f->y[i]));
    }
  label_w = MIN (saccade_figure_labels_max_width (layout, f->labels, f->n, &line_h),
                 LABEL_MAX_EM * fs);
  /* The legend: a swatch and the name of each series. */
  legend_x = x0;
  for (int k = 0; k < 2; k++)
    {
      const char *name = k == 0 ? (f->x_name != NULL ? f->x_name : "x")
                                : (f->y_name != NULL ? f->y_name : "y");
      set_colour (cr, k == 0 ? X_COLOUR : Y_COLOUR, 0.9);
      cairo_rectangle (cr, legend_x, y0 + 0.25 * line_h, 0.8 * fs, 0.5 * line_h);
      cairo_fill (cr);
      saccade_figure_set_fg (cr, style, 1.0);
      pango_layout_set_width (layout, (int) (MAX (1, w / 2 - 1.2 * fs) * PANGO_SCALE));
      pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
      saccade_figure_layout_set (layout, name, &tw, &th);
      saccade_figure_layout_draw (cr, layout, legend_x + fs, y0);
      pango_layout_set_width (layout, -1);
      pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_NONE);
      legend_x += w / 2;
    }
  y0 += line_h * 1.4;
  h -= line_h * 1.4;
  row_h = h / f->n;
  bx = x0 + label_w + 0.5 * fs;
  bw = w - label_w - 0.5 * fs;
  g->bars_x0 = bx;
  g->bars_w = bw;
  g->bars_y0 = y0;
  g->bar_row_h = row_h;
  if (bw < 4 || row_h < 1)
    return;
  pango_layout_set_width (layout, (int) (label_w * PANGO_SCALE));
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
  pango_layout_set_alignment (layout, PANGO_ALIGN_RIGHT);
  for (int i = 0; i < f->n; i++)
    {
      const double ry = y0 + i * row_h;
      const double vals[2] = { mx > 0 && isfinite (f->x[i]) ? fabs (f->x[i]) / mx : 0,
                               my > 0 && isfinite (f->y[i]) ? fabs (f->y[i]) / my : 0 };
      if (row_h >= 0.8 * line_h)
        {
          saccade_figure_set_fg (cr, style, 1.0);
          saccade_figure_layout_set (layout, saccade_figure_label (f->labels, i, buf), &tw, &th);
          saccade_figure_layout_draw (cr, layout, x0, ry + row_h / 2 - th / 2);
        }
      for (int k = 0; k < 2; k++)
        {
          set_colour (cr, k == 0 ? X_COLOUR : Y_COLOUR, 0.9);
          cairo_rectangle (cr, bx, ry + row_h * (0.1 + 0.4 * k), bw * vals[k], row_h * 0.38);
          cairo_fill (cr);
        }
    }
  pango_layout_set_width (layout, -1);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_NONE);
  pango_layout_set_alignment (layout, PANGO_ALIGN_LEFT);
  saccade_figure_set_fg (cr, style, 0.6);
  cairo_set_line_width (cr, MAX (0.5, fs * 0.06));
  cairo_move_to (cr, bx, y0);
  cairo_line_to (cr, bx, y0 + h);
  cairo_stroke (cr);
}

/* Ticks and their labels along one axis of the plot. */
static void
draw_ticks (cairo_t *cr, const SaccadeFigureStyle *style, PangoLayout *layout, gboolean x_axis,
            double lo, double hi, double x0, double y0, double x1, double y1)
{
  const double fs = saccade_figure_font_size (style);
  double ticks[SACCADE_FIGURE_MAX_TICKS], w, h;
  int n = saccade_figure_ticks (SACCADE_SCALE_LINEAR, lo, hi, ticks);
  char buf[32];

  for (int i = 0; i < n; i++)
    {
      const double t = (ticks[i] - lo) / (hi - lo);
      if (t < -1e-9 || t > 1 + 1e-9)
        continue;
      saccade_figure_format_tick (ticks[i], buf);
      saccade_figure_layout_set (layout, buf, &w, &h);
      saccade_figure_set_fg (cr, style, 0.12);
      if (x_axis)
        {
          const double x = x0 + t * (x1 - x0);
          cairo_move_to (cr, x, y0);
          cairo_line_to (cr, x, y1);
          cairo_stroke (cr);
          saccade_figure_set_fg (cr, style, 1.0);
          saccade_figure_layout_draw (cr, layout, x - w / 2, y1 + 0.3 * fs);
        }
      else
        {
          const double y = y1 - t * (y1 - y0);
          cairo_move_to (cr, x0, y);
          cairo_line_to (cr, x1, y);
          cairo_stroke (cr);
          saccade_figure_set_fg (cr, style, 1.0);
          saccade_figure_layout_draw (cr, layout, x0 - 0.4 * fs - w, y - h / 2);
        }
    }
}

void
saccade_figure_scatter_draw_full (cairo_t *cr, const SaccadeScatterFigure *f,
                                  const SaccadeFigureStyle *style_in, double width,
                                  double height, SaccadeScatterGeometry *geom)
{
  SaccadeFigureStyle tmp;
  const SaccadeFigureStyle *style = saccade_figure_style_resolve (style_in, &tmp);
  const double fs = saccade_figure_font_size (style), pad = fs;
  const double title_h = saccade_figure_title_band (cr, style, f->title, width, 1.8 * fs);
  double xlo, xhi, ylo, yhi, tick_w = 0, w, h, line_h, x0, x1, y0, y1, plot_right;
  double ticks[SACCADE_FIGURE_MAX_TICKS];
  g_autoptr (PangoLayout) layout = NULL;
  SaccadeScatterGeometry g = { 0 };
  char buf[32];
  int n_ticks;

  if (geom != NULL)
    *geom = g;
  cairo_save (cr);
  saccade_figure_paint_background (cr, style, width, height);
  saccade_figure_set_fg (cr, style, 1.0);
  saccade_figure_draw_title (cr, style, f->title, width, pad * 0.5);
  if (f->n <= 0 || f->x == NULL || f->y == NULL)
    {
      cairo_restore (cr);
      return;
    }
  layout = saccade_figure_layout_new (cr, style, fs, FALSE);
  value_range (f->x, f->y, f->n, &xlo, &xhi);
  value_range (f->y, f->x, f->n, &ylo, &yhi);
  n_ticks = saccade_figure_ticks (SACCADE_SCALE_LINEAR, ylo, yhi, ticks);
  for (int i = 0; i < n_ticks; i++)
    {
      saccade_figure_format_tick (ticks[i], buf);
      saccade_figure_layout_set (layout, buf, &w, &h);
      tick_w = MAX (tick_w, w);
    }
  line_h = h;

  /* 1. The frames: the plot on the left (all of the width without bars), the bars on the
   * right; captions and ticks outside the plot. */
  plot_right = f->bars ? width * 0.58 : width - pad;
  x0 = pad + (f->y_name != NULL ? line_h + 0.5 * fs : 0) + tick_w + 0.6 * fs;
  x1 = plot_right - pad;
  y0 = pad * 0.5 + title_h + 0.5 * fs;
  y1 = height - pad - (f->x_name != NULL ? 2 : 1) * line_h - 0.6 * fs;
  if (x1 - x0 < 20 || y1 - y0 < 20)
    {
      cairo_restore (cr);
      return;
    }
  g = (SaccadeScatterGeometry) { x0, y0, x1 - x0, y1 - y0, xlo, xhi, ylo, yhi, 0, 0, 0, 0 };
  cairo_set_line_width (cr, MAX (0.5, fs * 0.06));
  draw_ticks (cr, style, layout, TRUE, xlo, xhi, x0, y0, x1, y1);
  draw_ticks (cr, style, layout, FALSE, ylo, yhi, x0, y0, x1, y1);
  saccade_figure_set_fg (cr, style, 1.0);
  if (f->x_name != NULL)
    {
      pango_layout_set_width (layout, (int) ((x1 - x0) * PANGO_SCALE));
      pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
      saccade_figure_layout_set (layout, f->x_name, &w, &h);
      saccade_figure_layout_draw (cr, layout, (x0 + x1) / 2 - w / 2, y1 + 0.3 * fs + line_h);
      pango_layout_set_width (layout, -1);
      pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_NONE);
    }
  if (f->y_name != NULL)
    draw_vertical_caption (cr, layout, f->y_name, pad, (y0 + y1) / 2, y1 - y0);
  saccade_figure_set_fg (cr, style, 0.6);
  cairo_rectangle (cr, x0, y0, x1 - x0, y1 - y0);
  cairo_stroke (cr);

  /* 2. The points and their labels, clipped to the plot. */
  cairo_save (cr);
  cairo_rectangle (cr, x0, y0, x1 - x0, y1 - y0);
  cairo_clip (cr);
  {
    g_autoptr (PangoLayout) small = saccade_figure_layout_new (cr, style, 0.85 * fs, FALSE);
    const double r = 0.3 * fs;
    pango_layout_set_width (small, (int) (LABEL_MAX_EM * fs * PANGO_SCALE));
    pango_layout_set_ellipsize (small, PANGO_ELLIPSIZE_END);
    for (int i = 0; i < f->n; i++)
      {
        double px, py;
        if (!isfinite (f->x[i]) || !isfinite (f->y[i]))
          continue;
        px = x0 + (f->x[i] - xlo) / (xhi - xlo) * (x1 - x0);
        py = y1 - (f->y[i] - ylo) / (yhi - ylo) * (y1 - y0);
        set_colour (cr, X_COLOUR, 0.85);
        cairo_arc (cr, px, py, r, 0, 2 * G_PI);
        cairo_fill (cr);
        if (f->labels != NULL)
          {
            saccade_figure_set_fg (cr, style, 0.8);
            saccade_figure_layout_set (small, saccade_figure_label (f->labels, i, buf), &w, &h);
            /* Right of the point, or left of it where the plot's edge would cut it. */
            saccade_figure_layout_draw (cr, small, px + 1.5 * r + w > x1 ? px - 1.5 * r - w
                                                                         : px + 1.5 * r,
                                        py - h / 2);
          }
      }
  }
  cairo_restore (cr);

  /* 3. τ and ρ in a corner of the plot, on a veil of the background. */
  {
    char lines[2][96];
    double tw0, tw1, th;
    format_stat (lines[0], sizeof lines[0], _("Kendall τ"), f->tau, f->tau_p);
    format_stat (lines[1], sizeof lines[1], _("Spearman ρ"), f->rho, f->rho_p);
    double bw, bh, bx, by;
    int best = 0, best_n = INT_MAX;
    saccade_figure_layout_set (layout, lines[0], &tw0, &th);
    saccade_figure_layout_set (layout, lines[1], &tw1, &th);
    bw = MAX (tw0, tw1) + 0.8 * fs;
    bh = 2 * th + 0.6 * fs;
    /* The corner whose box hides the fewest points (with a label's width to their right),
     * top-left first on ties: the box never covers the data it describes when it can help. */
    for (int c = 0; c < 4; c++)
      {
        const double cx = c % 2 == 0 ? x0 + 0.3 * fs : x1 - 0.3 * fs - bw;
        const double cy = c < 2 ? y0 + 0.3 * fs : y1 - 0.3 * fs - bh;
        int n_in = 0;
        for (int i = 0; i < f->n; i++)
          {
            double px, py;
            if (!isfinite (f->x[i]) || !isfinite (f->y[i]))
              continue;
            px = x0 + (f->x[i] - xlo) / (xhi - xlo) * (x1 - x0);
            py = y1 - (f->y[i] - ylo) / (yhi - ylo) * (y1 - y0);
            n_in += px + (f->labels != NULL ? 6 * fs : fs) > cx && px - fs < cx + bw
                    && py + fs > cy && py - fs < cy + bh;
          }
        if (n_in < best_n)
          best = c, best_n = n_in;
      }
    bx = best % 2 == 0 ? x0 + 0.3 * fs : x1 - 0.3 * fs - bw;
    by = best < 2 ? y0 + 0.3 * fs : y1 - 0.3 * fs - bh;
    cairo_rectangle (cr, bx, by, bw, bh);
    cairo_set_source_rgba (cr, style->bg[0], style->bg[1], style->bg[2],
                           style->bg[3] > 0 ? 0.85 : 0.0);
    cairo_fill_preserve (cr);
    saccade_figure_set_fg (cr, style, 0.4);
    cairo_stroke (cr);
    saccade_figure_set_fg (cr, style, 1.0);
    saccade_figure_layout_set (layout, lines[0], &tw0, &th);
    saccade_figure_layout_draw (cr, layout, bx + 0.4 * fs, by + 0.3 * fs);
    saccade_figure_layout_set (layout, lines[1], &tw1, &th);
    saccade_figure_layout_draw (cr, layout, bx + 0.4 * fs, by + 0.3 * fs + th);
  }

  /* 4. The bars. */
  if (f->bars && width - plot_right - pad > 4 * fs)
    draw_bars (cr, f, style, layout, plot_right + pad, y0, width - plot_right - 2 * pad,
               y1 - y0, &g);
  if (geom != NULL)
    *geom = g;
  cairo_restore (cr);
}

void
saccade_figure_scatter_draw (cairo_t *cr, const SaccadeScatterFigure *f, double width,
                             double height)
{
  saccade_figure_scatter_draw_full (cr, f, NULL, width, height, NULL);
}

void
saccade_figure_scatter_natural_size (const SaccadeScatterFigure *f, double *w, double *h)
{
  cairo_surface_t *scratch = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (scratch);
  SaccadeFigureStyle style;

  saccade_figure_style_init (&style);
  /* A square-ish plot of 480; the bars panel adds 360 and needs a line (~16 units) per item
   * so that every label stays legible. */
  *w = f->bars ? 840 : 520;
  *h = MAX (440, f->bars ? 90 + 16.0 * MAX (1, f->n) : 0);
  *w = MAX (*w, ceil (saccade_figure_title_width (cr, &style, f->title) + 1));
  cairo_destroy (cr);
  cairo_surface_destroy (scratch);
}
