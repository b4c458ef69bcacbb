/* saccade-figure-erasure.c — erasure curves (Serrano & Smith 2019; saccade-figure.h): how
 * soon erasing a sentence's tokens in each ordering flips the model's prediction. The
 * renderer of `saccade ablate RUN --erasure -o FILE` and of the Ablation page's flip curves.
 *
 * Layout: title; a legend under it (one swatch per named ordering, then the random seeds and
 * their median); two panels side by side sharing the fraction-removed axis [0, 1]:
 *   left   p(target) after each erasure against the fraction of tokens removed: a line per
 *          named ordering in its colour with a ring at its flip point, each random seed as
 *          a thin grey line, the pointwise median of the seeds as a dashed dark line;
 *   right  the fraction removed at the flip, one row per named ordering (a dot in its
 *          colour) and a row "random" (each seed a small grey dot, spread over the row's
 *          height in seed order so equal values stay visible, and the seeds' median as a
 *          black bar); an ordering that never flips is drawn hollow in a "never" column
 *          right of 1.
 * The seeds' median fraction comes with the data (the engine defines it); the pointwise
 * median curve of the left panel is type 7 over the seeds' finite values at each step.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <math.h>
#include <stdlib.h>

/* Named orderings take the lines figure's colours 0, 1, ... of a ten-colour cycle. */
#define N_COLOURS 10
#define RANDOM_GREY 0.55

static int
cmp_double (const void *a, const void *b)
{
  const double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

/* Type 7 median of @n finite values (sorted here). */
static double
median_of (double *v, int n)
{
  double h;
  int i;

  if (n < 1)
    return NAN;
  qsort (v, (size_t) n, sizeof *v, cmp_double);
  h = (n - 1) * 0.5;
  i = (int) h;
  if (h == i)
    return v[i];
  return v[i] + (h - i) * (v[i + 1] - v[i]);
}

static int
n_random (const SaccadeErasureFigure *f)
{
  int c = 0;

  for (int s = 0; s < f->n_series; s++)
    c += f->series[s].random;
  return c;
}

/* A polyline through (fraction k/(n − 1), @p[k]), broken at non-finite values. */
static void
polyline (cairo_t *cr, const double *p, int n, double x0, double x1, double y1, double hi,
          double y0)
{
  gboolean pen = FALSE;

  for (int k = 0; k < n; k++)
    {
      const double x = x0 + (double) k / (n - 1) * (x1 - x0), y = y1 - p[k] / hi * (y1 - y0);
      if (!isfinite (p[k]))
        {
          pen = FALSE;
          continue;
        }
      (pen ? cairo_line_to : cairo_move_to) (cr, x, y);
      pen = TRUE;
    }
}

static void
set_series_colour (cairo_t *cr, int colour, double alpha)
{
  double rgb[3];

  saccade_figure_head_color (colour, N_COLOURS, rgb);
  cairo_set_source_rgba (cr, rgb[0], rgb[1], rgb[2], alpha);
}

/* The legend: returns its height. */
static double
draw_legend (cairo_t *cr, PangoLayout *layout, const SaccadeFigureStyle *style,
             const SaccadeErasureFigure *f, double width, double y)
{
  const double fs = saccade_figure_font_size (style), sw = 1.6 * fs, gap = 1.2 * fs;
  const int R = n_random (f);
  g_autofree char *rand_text = NULL;
  double total = 0, w, h = fs, x;
  int pass, colour;

  /* Translators: the erasure figure's legend for the random orderings and how many there
   * are, e.g. "random orderings (8)". */
  rand_text = g_strdup_printf (_("random orderings (%d)"), R);
  /* Pass 0 measures, pass 1 draws centred. */
  for (pass = 0; pass < 2; pass++)
    {
      x = MAX (fs, (width - total) / 2);
      colour = 0;
      for (int s = 0; s < f->n_series; s++)
        {
          const SaccadeErasureSeries *se = &f->series[s];
          if (se->random)
            continue;
          saccade_figure_layout_set (layout, se->name != NULL ? se->name : "", &w, &h);
          if (pass == 0)
            total += (total > 0 ? gap : 0) + sw + 0.4 * fs + w;
          else
            {
              set_series_colour (cr, colour, 1.0);
              cairo_set_line_width (cr, MAX (1.0, fs * 0.2));
              cairo_move_to (cr, x, y + h / 2);
              cairo_line_to (cr, x + sw, y + h / 2);
              cairo_stroke (cr);
              saccade_figure_set_fg (cr, style, 1.0);
              saccade_figure_layout_draw (cr, layout, x + sw + 0.4 * fs, y);
              x += sw + 0.4 * fs + w + gap;
            }
          colour++;
        }
      {
        /* Translators: the erasure figure's legend for the ring marking where the top-1
         * prediction first changes. */
        const char *ring = _("top-1 flips");
        saccade_figure_layout_set (layout, ring, &w, &h);
        if (pass == 0)
          total += (total > 0 ? gap : 0) + fs + 0.4 * fs + w;
        else
          {
            saccade_figure_set_fg (cr, style, 0.85);
            cairo_set_line_width (cr, MAX (1.0, fs * 0.15));
            cairo_arc (cr, x + 0.5 * fs, y + h / 2, 0.45 * fs, 0, 2 * G_PI);
            cairo_stroke (cr);
            saccade_figure_set_fg (cr, style, 1.0);
            saccade_figure_layout_draw (cr, layout, x + 1.4 * fs, y);
            x += 1.4 * fs + w + gap;
          }
      }
      if (R > 0)
        {
          const char *med = _("median of the random seeds");
          double w2;
          saccade_figure_layout_set (layout, rand_text, &w, &h);
          saccade_figure_layout_set (layout, med, &w2, &h);
          if (pass == 0)
            total += (total > 0 ? gap : 0) + 2 * (sw + 0.4 * fs) + w + gap + w2;
          else
            {
              const double dash[] = { 0.5 * fs, 0.3 * fs };
              cairo_set_source_rgba (cr, RANDOM_GREY, RANDOM_GREY, RANDOM_GREY, 1.0);
              cairo_set_line_width (cr, MAX (1.0, fs * 0.1));
              cairo_move_to (cr, x, y + h / 2);
              cairo_line_to (cr, x + sw, y + h / 2);
              cairo_stroke (cr);
              saccade_figure_set_fg (cr, style, 1.0);
              saccade_figure_layout_set (layout, rand_text, &w, &h);
              saccade_figure_layout_draw (cr, layout, x + sw + 0.4 * fs, y);
              x += sw + 0.4 * fs + w + gap;
              saccade_figure_set_fg (cr, style, 0.85);
              cairo_set_line_width (cr, MAX (1.0, fs * 0.15));
              cairo_set_dash (cr, dash, 2, 0);
              cairo_move_to (cr, x, y + h / 2);
              cairo_line_to (cr, x + sw, y + h / 2);
              cairo_stroke (cr);
              cairo_set_dash (cr, NULL, 0, 0);
              saccade_figure_set_fg (cr, style, 1.0);
              saccade_figure_layout_set (layout, med, &w2, &h);
              saccade_figure_layout_draw (cr, layout, x + sw + 0.4 * fs, y);
            }
        }
    }
  return h + 0.4 * fs;
}

/* Ticks 0, 0.25, .., 1 along [x0, x1] under y1, and the caption below them. */
static void
draw_fraction_axis (cairo_t *cr, PangoLayout *layout, const SaccadeFigureStyle *style,
                    double x0, double x1, double y1, double line_h)
{
  const double fs = saccade_figure_font_size (style);
  char buf[32];
  double w, h;

  for (int t = 0; t <= 4; t++)
    {
      const double v = t / 4.0, x = x0 + v * (x1 - x0);
      saccade_figure_set_fg (cr, style, 0.6);
      cairo_move_to (cr, x, y1);
      cairo_line_to (cr, x, y1 + 0.25 * fs);
      cairo_stroke (cr);
      saccade_figure_set_fg (cr, style, 1.0);
      saccade_figure_format_tick (v, buf);
      saccade_figure_layout_set (layout, buf, &w, &h);
      saccade_figure_layout_draw (cr, layout, x - w / 2, y1 + 0.3 * fs);
    }
  saccade_figure_layout_set (layout, _("Fraction of tokens removed"), &w, &h);
  saccade_figure_layout_draw (cr, layout, (x0 + x1) / 2 - w / 2, y1 + 0.3 * fs + line_h);
}

/* The left panel in the frame (x0, y0)–(x1, y1). */
static void
draw_curves (cairo_t *cr, PangoLayout *layout, const SaccadeFigureStyle *style,
             const SaccadeErasureFigure *f, double x0, double y0, double x1, double y1,
             double line_h)
{
  const double fs = saccade_figure_font_size (style);
  const int n = f->n_points, R = n_random (f);
  double hi = 0, ticks[SACCADE_FIGURE_MAX_TICKS], w, h;
  char buf[32];
  int n_ticks, colour;

#define PX(k) (x0 + (double) (k) / (n - 1) * (x1 - x0))
#define PY(v) (y1 - (v) / hi * (y1 - y0))
  for (int s = 0; s < f->n_series; s++)
    for (int k = 0; k < n; k++)
      if (isfinite (f->series[s].p_target[k]))
        hi = MAX (hi, f->series[s].p_target[k]);
  hi = MIN (1.0, MAX (hi, 1e-6) * 1.05);
  /* 1. value grid, ticks, caption. */
  n_ticks = saccade_figure_ticks (SACCADE_SCALE_LINEAR, 0, hi, ticks);
  cairo_set_line_width (cr, MAX (0.5, fs * 0.06));
  for (int i = 0; i < n_ticks; i++)
    {
      const double ty = PY (ticks[i]);
      if (ticks[i] < 0 || ticks[i] > hi)
        continue;
      saccade_figure_set_fg (cr, style, 0.12);
      cairo_move_to (cr, x0, ty);
      cairo_line_to (cr, x1, ty);
      cairo_stroke (cr);
      saccade_figure_set_fg (cr, style, 1.0);
      saccade_figure_format_tick (ticks[i], buf);
      saccade_figure_layout_set (layout, buf, &w, &h);
      saccade_figure_layout_draw (cr, layout, x0 - 0.4 * fs - w, ty - h / 2);
    }
  saccade_figure_layout_set (layout, f->value_name != NULL ? f->value_name : _("p(target)"),
                             &w, &h);
  cairo_save (cr);
  cairo_translate (cr, fs, (y0 + y1) / 2 + MIN (w, y1 - y0) / 2);
  cairo_rotate (cr, -G_PI / 2);
  saccade_figure_layout_draw (cr, layout, 0, 0);
  cairo_restore (cr);
  draw_fraction_axis (cr, layout, style, x0, x1, y1, line_h);
  saccade_figure_set_fg (cr, style, 0.6);
  cairo_rectangle (cr, x0, y0, x1 - x0, y1 - y0);
  cairo_stroke (cr);

  /* 2. inside: random seeds under everything, their median, then the named orderings. */
  cairo_save (cr);
  cairo_rectangle (cr, x0, y0, x1 - x0, y1 - y0);
  cairo_clip (cr);
  cairo_set_line_join (cr, CAIRO_LINE_JOIN_ROUND);
  cairo_set_line_width (cr, MAX (0.6, fs * 0.07));
  cairo_set_source_rgba (cr, RANDOM_GREY, RANDOM_GREY, RANDOM_GREY, 0.55);
  for (int s = 0; s < f->n_series; s++)
    if (f->series[s].random)
      {
        polyline (cr, f->series[s].p_target, n, x0, x1, y1, hi, y0);
        cairo_stroke (cr);
      }
  if (R > 0)
    {
      g_autofree double *v = g_new (double, R), *med = g_new (double, n);
      const double dash[] = { 0.5 * fs, 0.3 * fs };
      for (int k = 0; k < n; k++)
        {
          int c = 0;
          for (int s = 0; s < f->n_series; s++)
            if (f->series[s].random && isfinite (f->series[s].p_target[k]))
              v[c++] = f->series[s].p_target[k];
          med[k] = median_of (v, c);
        }
      polyline (cr, med, n, x0, x1, y1, hi, y0);
      saccade_figure_set_fg (cr, style, 0.85);
      cairo_set_line_width (cr, MAX (1.0, fs * 0.15));
      cairo_set_dash (cr, dash, 2, 0);
      cairo_stroke (cr);
      cairo_set_dash (cr, NULL, 0, 0);
    }
  colour = 0;
  for (int s = 0; s < f->n_series; s++)
    {
      const SaccadeErasureSeries *se = &f->series[s];
      if (se->random)
        continue;
      set_series_colour (cr, colour, 1.0);
      cairo_set_line_width (cr, MAX (1.2, fs * 0.2));
      polyline (cr, se->p_target, n, x0, x1, y1, hi, y0);
      cairo_stroke (cr);
      for (int k = 0; k < n; k++)
        if (isfinite (se->p_target[k]))
        {
          cairo_arc (cr, PX (k), PY (se->p_target[k]), MAX (1.0, 0.18 * fs), 0, 2 * G_PI);
          cairo_fill (cr);
        }
      if (isfinite (se->fraction) && se->fraction >= 0 && se->fraction <= 1
          && isfinite (se->p_target[(int) lround (se->fraction * (n - 1))]))
        {
          /* The flip point: a ring around the curve's point at that fraction. */
          const int k = (int) lround (se->fraction * (n - 1));
          cairo_set_line_width (cr, MAX (1.0, fs * 0.15));
          cairo_arc (cr, PX (k), PY (se->p_target[k]), 0.5 * fs, 0, 2 * G_PI);
          cairo_stroke (cr);
        }
      colour++;
    }
  cairo_restore (cr);
#undef PX
#undef PY
}

/* The right panel: fraction removed at the flip, one row per named ordering and one for the
 * random seeds; the "never" column stands right of 1, in [x1 + gap, x1 + gap + never_w). */
static void
draw_flips (cairo_t *cr, PangoLayout *layout, const SaccadeFigureStyle *style,
            const SaccadeErasureFigure *f, double label_w, double x0, double y0, double x1,
            double y1, double never_w, double line_h)
{
  const double fs = saccade_figure_font_size (style), gap = 0.6 * fs;
  const int R = n_random (f);
  int rows = 0, row, colour;
  double row_h, w, h, nx;

  for (int s = 0; s < f->n_series; s++)
    rows += !f->series[s].random;
  rows += R > 0;
  if (rows == 0)
    return;
  row_h = (y1 - y0) / rows;
  nx = x1 + gap + never_w / 2;
#define FX(v) (isfinite (v) ? x0 + (v) * (x1 - x0) : nx)
  /* 1. frame, vertical grid at the ticks, the never column, the axis. */
  cairo_set_line_width (cr, MAX (0.5, fs * 0.06));
  for (int t = 1; t < 4; t++)
    {
      saccade_figure_set_fg (cr, style, 0.12);
      cairo_move_to (cr, x0 + t / 4.0 * (x1 - x0), y0);
      cairo_line_to (cr, x0 + t / 4.0 * (x1 - x0), y1);
      cairo_stroke (cr);
    }
  draw_fraction_axis (cr, layout, style, x0, x1, y1, line_h);
  saccade_figure_set_fg (cr, style, 0.6);
  cairo_rectangle (cr, x0, y0, x1 - x0, y1 - y0);
  cairo_stroke (cr);
  saccade_figure_set_fg (cr, style, 0.06);
  cairo_rectangle (cr, x1 + gap, y0, never_w, y1 - y0);
  cairo_fill (cr);
  saccade_figure_set_fg (cr, style, 1.0);
  /* Translators: the erasure figure's column for orderings whose erasures never flip the
   * prediction. */
  saccade_figure_layout_set (layout, _("never"), &w, &h);
  saccade_figure_layout_draw (cr, layout, nx - w / 2, y1 + 0.3 * fs);
  /* Translators: the title of the erasure figure's right panel. */
  saccade_figure_layout_set (layout, _("Removed when the top-1 flips"), &w, &h);
  saccade_figure_layout_draw (cr, layout, (x0 + x1) / 2 - w / 2, y0 - h - 0.2 * fs);

  /* 2. the rows. */
  row = 0;
  colour = 0;
  for (int s = 0; s <= f->n_series; s++)
    {
      const gboolean is_random_row = s == f->n_series;
      const double cy = y0 + (row + 0.5) * row_h;
      const char *name;
      if (is_random_row ? R == 0 : f->series[s].random)
        continue;
      name = is_random_row ? _("random") : f->series[s].name != NULL ? f->series[s].name : "";
      saccade_figure_set_fg (cr, style, 1.0);
      saccade_figure_layout_set (layout, name, &w, &h);
      saccade_figure_layout_draw (cr, layout, x0 - 0.5 * fs - MIN (w, label_w), cy - h / 2);
      if (!is_random_row)
        {
          const double v = f->series[s].fraction;
          set_series_colour (cr, colour++, 1.0);
          cairo_arc (cr, FX (v), cy, 0.45 * fs, 0, 2 * G_PI);
          if (isfinite (v))
            cairo_fill (cr);
          else
            {
              cairo_set_line_width (cr, MAX (1.0, fs * 0.15));
              cairo_stroke (cr);
            }
        }
      else
        {
          int c = 0;
          for (int t = 0; t < f->n_series; t++)
            if (f->series[t].random)
              {
                const double fr = f->series[t].fraction;
                /* Spread over the row's middle 60 % in seed order. */
                const double dy = R > 1 ? (c / (double) (R - 1) - 0.5) * 0.6 * row_h : 0;
                cairo_set_source_rgba (cr, RANDOM_GREY, RANDOM_GREY, RANDOM_GREY, 0.8);
                cairo_arc (cr, FX (fr), cy + dy, 0.25 * fs, 0, 2 * G_PI);
                cairo_fill (cr);
                c++;
              }
          {
            const double med = f->random_median;
            const double mx = FX (med);
            saccade_figure_set_fg (cr, style, 1.0);
            cairo_set_line_width (cr, MAX (1.5, fs * 0.25));
            cairo_move_to (cr, mx, cy - 0.4 * row_h);
            cairo_line_to (cr, mx, cy + 0.4 * row_h);
            cairo_stroke (cr);
          }
        }
      row++;
    }
#undef FX
}

void
saccade_figure_erasure_draw_full (cairo_t *cr, const SaccadeErasureFigure *f,
                                  const SaccadeFigureStyle *style_in, double width,
                                  double height)
{
  SaccadeFigureStyle tmp;
  const SaccadeFigureStyle *style = saccade_figure_style_resolve (style_in, &tmp);
  const double fs = saccade_figure_font_size (style), pad = fs;
  const double title_h = saccade_figure_title_band (cr, style, f->title, width, 1.8 * fs);
  g_autoptr (PangoLayout) layout = NULL;
  double w, h, line_h, tick_w, label_w = 0, never_w, legend_h, y0, y1, split;
  double lx0, lx1, rx0, rx1;

  cairo_save (cr);
  saccade_figure_paint_background (cr, style, width, height);
  saccade_figure_set_fg (cr, style, 1.0);
  saccade_figure_draw_title (cr, style, f->title, width, pad * 0.5);
  if (f->n_points < 2 || f->n_series < 1 || f->series == NULL)
    {
      cairo_restore (cr);
      return;
    }
  layout = saccade_figure_layout_new (cr, style, fs, FALSE);
  saccade_figure_layout_set (layout, "0.00", &tick_w, &line_h);
  for (int s = 0; s < f->n_series; s++)
    if (!f->series[s].random && f->series[s].name != NULL)
      {
        saccade_figure_layout_set (layout, f->series[s].name, &w, &h);
        label_w = MAX (label_w, w);
      }
  saccade_figure_layout_set (layout, _("random"), &w, &h);
  label_w = MIN (MAX (label_w, w), width * 0.2);
  saccade_figure_layout_set (layout, _("never"), &never_w, &h);
  never_w += 0.8 * fs;

  legend_h = draw_legend (cr, layout, style, f, width, pad * 0.5 + title_h);
  /* Room above the panels for the right panel's caption. */
  y0 = pad * 0.5 + title_h + legend_h + line_h + 0.6 * fs;
  y1 = height - pad - 2 * line_h - 0.6 * fs;
  split = width * 0.58;
  lx0 = pad + line_h + 0.5 * fs + tick_w + 0.6 * fs;
  lx1 = split - 1.5 * fs;
  rx0 = split + label_w + 1.0 * fs;
  rx1 = width - pad - never_w - 0.6 * fs;
  if (lx1 - lx0 < 20 || rx1 - rx0 < 20 || y1 - y0 < 20)
    {
      cairo_restore (cr);
      return;
    }
  draw_curves (cr, layout, style, f, lx0, y0, lx1, y1, line_h);
  draw_flips (cr, layout, style, f, label_w, rx0, y0, rx1, y1, never_w, line_h);
  cairo_restore (cr);
}

void
saccade_figure_erasure_draw (cairo_t *cr, const SaccadeErasureFigure *f, double width,
                             double height)
{
  saccade_figure_erasure_draw_full (cr, f, NULL, width, height);
}

void
saccade_figure_erasure_natural_size (const SaccadeErasureFigure *f, double *w, double *h)
{
  cairo_surface_t *scratch = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (scratch);
  SaccadeFigureStyle style;

  saccade_figure_style_init (&style);
  /* A two-panel figure a column wide in a paper at 10 pt: 760 × 380 units; a row of the
   * right panel needs about two lines, so many orderings make it taller. */
  *w = 760;
  *h = MAX (380, 160 + 28.0 * (f->n_series - n_random (f) + 1));
  *w = MAX (*w, ceil (saccade_figure_title_width (cr, &style, f->title) + 1));
  cairo_destroy (cr);
  cairo_surface_destroy (scratch);
}
