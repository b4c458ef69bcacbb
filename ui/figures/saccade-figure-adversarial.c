/* saccade-figure-adversarial.c — the figure of adversarial attention (saccade-figure.h,
 * "adversarial"): the JSD that attention reached against the output's allowed change ε, one
 * curve per study, and the original against the adversarial attention row. The renderer of
 * the Attribution page's adversarial view and of `saccade adversarial -o`; it knows only
 * numbers and names.
 *
 * Layout: title; the curve panel (left, or the whole width without rows): y from 0 to
 * ln 2 + 8 % with a dashed line at ln 2, x on a log scale over every ε and a quarter decade
 * more either side (decade ticks), a dot per point, the legend in the upper left; the rows
 * panel (right): two bands, "original" and "adversarial", of bars over the key tokens on
 * one scale, the token labels under them reading upwards, a caption naming the head, row
 * and ε.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <math.h>

/* The curves take the categorical head colours in turn. */
#define N_COLOURS 10
/* Labels longer than this many font sizes are ellipsized (as the attribution bars do). */
#define LABEL_MAX_EM 10.0
/* The y axis runs a little past ln 2 so the dashed ceiling is not on the frame. */
#define Y_HEADROOM 1.08
/* The x axis runs this many decades past the smallest and the largest ε. */
#define X_PAD_DECADES 0.25
/* The share of the width the curve takes when the rows are drawn beside it. */
#define CURVE_SHARE 0.5

/* The x range: every ε of every series with a quarter decade either side (no point on the
 * frame); FALSE when there is none. */
static gboolean
x_range (const SaccadeAdversarialFigure *f, double *lo, double *hi)
{
  double mn = INFINITY, mx = 0;

  for (int s = 0; s < f->n_series; s++)
    for (int i = 0; i < f->series[s].n; i++)
      if (f->series[s].epsilon[i] > 0 && isfinite (f->series[s].epsilon[i]))
        {
          mn = MIN (mn, f->series[s].epsilon[i]);
          mx = MAX (mx, f->series[s].epsilon[i]);
        }
  if (!(mx > 0))
    return FALSE;
  *lo = mn / pow (10, X_PAD_DECADES);
  *hi = mx * pow (10, X_PAD_DECADES);
  return TRUE;
}

/* The x ticks: the decades inside [lo, hi]; with fewer than two, the first series' ε
 * (a single ε, or a narrow set, still gets its values written). */
static int
x_ticks (const SaccadeAdversarialFigure *f, double lo, double hi,
         double ticks[SACCADE_FIGURE_MAX_TICKS])
{
  int n = 0;

  for (int k = (int) ceil (log10 (lo)); k <= (int) floor (log10 (hi)); k++)
    if (n < SACCADE_FIGURE_MAX_TICKS)
      ticks[n++] = pow (10, k);
  if (n >= 2)
    return n;
  n = 0;
  for (int i = 0; i < f->series[0].n && n < SACCADE_FIGURE_MAX_TICKS; i++)
    if (f->series[0].epsilon[i] > 0)
      ticks[n++] = f->series[0].epsilon[i];
  return n;
}

static void
draw_curves (cairo_t *cr, const SaccadeFigureStyle *style, PangoLayout *layout,
             const SaccadeAdversarialFigure *f, double x, double y, double w, double h)
{
  const double fs = saccade_figure_font_size (style), ymax = G_LN2 * Y_HEADROOM;
  const double yticks[] = { 0, 0.2, 0.4, 0.6 };
  double ticks[SACCADE_FIGURE_MAX_TICKS], lo, hi, tw, th, x0, x1, y0, y1, lx, ly;
  char buf[32];
  int n_ticks;
  const double dash[] = { 4.0, 3.0 };

  if (!x_range (f, &lo, &hi))
    return;
  saccade_figure_layout_set (layout, "0.6", &tw, &th);
  x0 = x + tw + 2.2 * fs;  /* tick values and the rotated axis name */
  x1 = x + w - 0.8 * fs;
  y0 = y + 0.4 * fs;
  y1 = y + h - 2 * th - 0.8 * fs;
  if (x1 - x0 < 20 || y1 - y0 < 20)
    return;
#define PX(e) (x0 + (log10 (e) - log10 (lo)) / (log10 (hi) - log10 (lo)) * (x1 - x0))
#define PY(v) (y1 - (v) / ymax * (y1 - y0))
  /* frame, grid and ticks */
  cairo_set_line_width (cr, 1.0);
  saccade_figure_set_fg (cr, style, 0.5);
  cairo_rectangle (cr, x0, y0, x1 - x0, y1 - y0);
  cairo_stroke (cr);
  for (size_t i = 0; i < G_N_ELEMENTS (yticks); i++)
    {
      saccade_figure_set_fg (cr, style, 0.12);
      cairo_move_to (cr, x0, PY (yticks[i]));
      cairo_line_to (cr, x1, PY (yticks[i]));
      cairo_stroke (cr);
      saccade_figure_set_fg (cr, style, 0.8);
      saccade_figure_format_tick (yticks[i], buf);
      saccade_figure_layout_set (layout, buf, &tw, &th);
      saccade_figure_layout_draw (cr, layout, x0 - 0.4 * fs - tw, PY (yticks[i]) - th / 2);
    }
  n_ticks = x_ticks (f, lo, hi, ticks);
  for (int i = 0; i < n_ticks; i++)
    {
      saccade_figure_set_fg (cr, style, 0.12);
      cairo_move_to (cr, PX (ticks[i]), y0);
      cairo_line_to (cr, PX (ticks[i]), y1);
      cairo_stroke (cr);
      saccade_figure_set_fg (cr, style, 0.8);
      saccade_figure_format_tick (ticks[i], buf);
      saccade_figure_layout_set (layout, buf, &tw, &th);
      saccade_figure_layout_draw (cr, layout, PX (ticks[i]) - tw / 2, y1 + 0.3 * fs);
    }
  /* Translators: the adversarial figure's x axis: the largest total variation distance the
   * next-token distribution may move. */
  saccade_figure_layout_set (layout, _("ε (output TVD allowed, log scale)"), &tw, &th);
  saccade_figure_layout_draw (cr, layout, (x0 + x1) / 2 - tw / 2, y1 + 0.3 * fs + th);
  /* Translators: the adversarial figure's y axis. */
  saccade_figure_layout_set (layout, _("attention JSD (nats)"), &tw, &th);
  cairo_save (cr);
  cairo_translate (cr, x, (y0 + y1) / 2 + tw / 2);
  cairo_rotate (cr, -G_PI / 2);
  saccade_figure_layout_draw (cr, layout, 0, 0);
  cairo_restore (cr);
  /* the ceiling */
  saccade_figure_set_fg (cr, style, 0.6);
  cairo_set_dash (cr, dash, G_N_ELEMENTS (dash), 0);
  cairo_move_to (cr, x0, PY (G_LN2));
  cairo_line_to (cr, x1, PY (G_LN2));
  cairo_stroke (cr);
  cairo_set_dash (cr, NULL, 0, 0);
  /* Translators: the dashed line at the JSD's largest value. */
  saccade_figure_layout_set (layout, _("ln 2: disjoint support"), &tw, &th);
  saccade_figure_layout_draw (cr, layout, x1 - 0.4 * fs - tw, PY (G_LN2) - th);
  /* the curves and the legend */
  lx = x0 + 0.6 * fs;
  ly = PY (G_LN2) + 0.4 * fs;
  for (int s = 0; s < f->n_series; s++)
    {
      const SaccadeAdvSeries *se = &f->series[s];
      double rgb[3];
      gboolean started = FALSE;
      saccade_figure_head_color (s, N_COLOURS, rgb);
      cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
      cairo_set_line_width (cr, 2.0);
      for (int i = 0; i < se->n; i++)
        {
          const double e = se->epsilon[i], v = se->jsd[i];
          if (!(e > 0) || !isfinite (v))
            continue;
          if (started)
            cairo_line_to (cr, PX (e), PY (CLAMP (v, 0, ymax)));
          else
            cairo_move_to (cr, PX (e), PY (CLAMP (v, 0, ymax)));
          started = TRUE;
        }
      cairo_stroke (cr);
      for (int i = 0; i < se->n; i++)
        if (se->epsilon[i] > 0 && isfinite (se->jsd[i]))
          {
            cairo_arc (cr, PX (se->epsilon[i]), PY (CLAMP (se->jsd[i], 0, ymax)), 3.0, 0,
                       2 * G_PI);
            cairo_fill (cr);
          }
      if (se->label == NULL)
        continue;
      cairo_rectangle (cr, lx, ly + 0.35 * fs, 1.4 * fs, 0.3 * fs);
      cairo_fill (cr);
      saccade_figure_set_fg (cr, style, 1.0);
      saccade_figure_layout_set (layout, se->label, &tw, &th);
      saccade_figure_layout_draw (cr, layout, lx + 1.8 * fs, ly);
      ly += th;
    }
#undef PX
#undef PY
}

static void
draw_rows (cairo_t *cr, const SaccadeFigureStyle *style, PangoLayout *layout,
           const SaccadeAdversarialFigure *f, double x, double y, double w, double h)
{
  const double fs = saccade_figure_font_size (style);
  const double *rows[2] = { f->original, f->adversarial };
  /* Translators: the two bar rows of the adversarial figure. */
  const char *names[2] = { _("original"), _("adversarial") };
  double m = 0, name_w = 0, tw, th, line_h = fs, label_h, x0, x1, y0, y1, band, step;
  char buf[64], tick[32];
  int every;

  for (int r = 0; r < 2; r++)
    {
      saccade_figure_layout_set (layout, names[r], &tw, &th);
      name_w = MAX (name_w, tw);
      for (int j = 0; j < f->n_tokens; j++)
        if (isfinite (rows[r][j]))
          m = MAX (m, rows[r][j]);
    }
  /* Translators: the caption of the adversarial rows: head, query row, ε. */
  g_snprintf (buf, sizeof buf, _("head %d · row %d · ε %g"), f->rows_head, f->rows_row,
              f->rows_epsilon);
  saccade_figure_set_fg (cr, style, 0.8);
  saccade_figure_layout_set (layout, buf, &tw, &th);
  saccade_figure_layout_draw (cr, layout, x + w / 2 - tw / 2, y);
  label_h = MIN (LABEL_MAX_EM * fs,
                 saccade_figure_labels_max_width (layout, f->labels, f->n_tokens, &line_h));
  saccade_figure_format_tick (m, tick);
  saccade_figure_layout_set (layout, tick, &tw, &th);
  x0 = x + name_w + 0.8 * fs;
  x1 = x + w - tw - 0.8 * fs;
  y0 = y + th + 0.4 * fs;
  y1 = y + h - label_h - 0.4 * fs;
  if (x1 - x0 < 10 || y1 - y0 < 8 || f->n_tokens <= 0)
    return;
  step = (x1 - x0) / f->n_tokens;
  band = (y1 - y0) / 2;
  for (int r = 0; r < 2; r++)
    {
      const double top = y0 + r * band, base = top + 0.93 * band, full = 0.86 * band;
      double rgb[3];
      saccade_figure_set_fg (cr, style, 0.35);
      cairo_set_line_width (cr, 1.0);
      cairo_move_to (cr, x0, base);
      cairo_line_to (cr, x1, base);
      cairo_stroke (cr);
      saccade_figure_head_color (r == 0 ? 7 : 3, N_COLOURS, rgb);
      cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
      for (int j = 0; m > 0 && j < f->n_tokens; j++)
        {
          double hgt = isfinite (rows[r][j]) ? rows[r][j] / m * full : 0;
          if (rows[r][j] > 0 && hgt < 0.75)
            hgt = 0.75; /* a non-zero weight is at least a hairline */
          if (hgt > 0)
            cairo_rectangle (cr, x0 + (j + 0.15) * step, base - hgt, 0.7 * step, hgt);
        }
      cairo_fill (cr);
      saccade_figure_set_fg (cr, style, 1.0);
      saccade_figure_layout_set (layout, names[r], &tw, &th);
      saccade_figure_layout_draw (cr, layout, x0 - 0.8 * fs - tw, top + band / 2 - th / 2);
      saccade_figure_set_fg (cr, style, 0.7);
      saccade_figure_layout_set (layout, tick, &tw, &th);
      saccade_figure_layout_draw (cr, layout, x1 + 0.4 * fs, top + 0.07 * band);
    }
  saccade_figure_set_fg (cr, style, 1.0);
  every = step > 0 ? MAX (1, (int) ceil (line_h / step)) : 1;
  pango_layout_set_width (layout, (int) (label_h * PANGO_SCALE));
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
  pango_layout_set_alignment (layout, PANGO_ALIGN_RIGHT);
  for (int j = 0; j < f->n_tokens; j += every)
    {
      char pos[16];
      saccade_figure_layout_set (layout, saccade_figure_label (f->labels, j, pos), &tw, &th);
      cairo_save (cr);
      cairo_translate (cr, x0 + (j + 0.5) * step - th / 2, y1 + 0.3 * fs + label_h);
      cairo_rotate (cr, -G_PI / 2);
      saccade_figure_layout_draw (cr, layout, 0, 0);
      cairo_restore (cr);
    }
  pango_layout_set_width (layout, -1);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_NONE);
  pango_layout_set_alignment (layout, PANGO_ALIGN_LEFT);
}

static gboolean
has_rows (const SaccadeAdversarialFigure *f)
{
  return f->n_tokens > 0 && f->original != NULL && f->adversarial != NULL;
}

void
saccade_figure_adversarial_draw (cairo_t *cr, const SaccadeAdversarialFigure *f,
                                 const SaccadeFigureStyle *style_in, double width,
                                 double height)
{
  SaccadeFigureStyle tmp;
  const SaccadeFigureStyle *style = saccade_figure_style_resolve (style_in, &tmp);
  const double fs = saccade_figure_font_size (style), pad = fs;
  const double title_h = saccade_figure_title_band (cr, style, f->title, width, 1.8 * fs);
  const double top = pad * 0.5 + title_h + 0.4 * fs, bottom = height - pad;
  g_autoptr (PangoLayout) layout = NULL;
  double curve_w;

  cairo_save (cr);
  saccade_figure_paint_background (cr, style, width, height);
  saccade_figure_set_fg (cr, style, 1.0);
  saccade_figure_draw_title (cr, style, f->title, width, pad * 0.5);
  if (f->n_series <= 0 || f->series == NULL || bottom - top < 4 * fs)
    {
      cairo_restore (cr);
      return;
    }
  layout = saccade_figure_layout_new (cr, style, fs, FALSE);
  curve_w = has_rows (f) ? CURVE_SHARE * (width - 2 * pad) : width - 2 * pad;
  draw_curves (cr, style, layout, f, pad, top, curve_w, bottom - top);
  if (has_rows (f))
    draw_rows (cr, style, layout, f, pad + curve_w + 1.5 * fs, top,
               width - 2 * pad - curve_w - 1.5 * fs, bottom - top);
  cairo_restore (cr);
}

void
saccade_figure_adversarial_natural_size (const SaccadeAdversarialFigure *f, double *W,
                                         double *H)
{
  cairo_surface_t *scratch = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (scratch);
  SaccadeFigureStyle style;
  double fs, label_w = 0;

  saccade_figure_style_init (&style);
  fs = saccade_figure_font_size (&style);
  if (has_rows (f))
    {
      g_autoptr (PangoLayout) layout = saccade_figure_layout_new (cr, &style, fs, FALSE);
      label_w = MIN (LABEL_MAX_EM * fs,
                     saccade_figure_labels_max_width (layout, f->labels, f->n_tokens, NULL));
    }
  /* The curve 40 em by 28 em; the rows beside it as wide, columns 1.8 em each. */
  *W = 44 * fs + (has_rows (f) ? MAX (40 * fs, 8 * fs + f->n_tokens * 1.8 * fs) : 0);
  *W = MAX (*W, saccade_figure_title_width (cr, &style, f->title));
  *H = 4 * fs + MAX (28 * fs, 18 * fs + label_w);
  cairo_destroy (cr);
  cairo_surface_destroy (scratch);
}

static void
draw_adv (cairo_t *cr, const void *f, double w, double h)
{
  saccade_figure_adversarial_draw (cr, f, NULL, w, h);
}

static void
size_adv (const void *f, double *w, double *h)
{
  saccade_figure_adversarial_natural_size (f, w, h);
}

gboolean
saccade_figure_export_adversarial (const SaccadeAdversarialFigure *f, const char *path,
                                   const SaccadeFigureExportOptions *opts, GError **error)
{
  if (saccade_figure_refuse_empty (f->series == NULL || f->n_series <= 0, error))
    return FALSE;
  {
    SaccadeAdversarialFigure g = *f;

    g.title = saccade_figure_export_title (opts, f->title);
    return saccade_figure_export_drawn (&g, g.title, draw_adv, size_adv, path, opts, error);
  }
}
