/* saccade-figure-attribution.c — the figure of gradient attributions (saccade-figure.h,
 * "attribution"): rows of per-token bars sharing one token axis, so that attention,
 * leave-one-out and each gradient method can be read against each other token by token.
 * The renderer of the Attribution page and of `saccade attribute -o`; it knows only numbers
 * and names.
 *
 * Layout: title; an optional caption (the completeness line); one band per row with its
 * name on the left and its scale (the largest |value|, which is drawn full height) on the
 * right; unsigned rows grow from the band's bottom in the row's colour, signed rows from
 * its middle in red (> 0) or blue (< 0) of the diverging map; the token labels under the
 * last band, reading upwards.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <math.h>

/* Labels longer than this many font sizes are ellipsized (as the paired bars do). */
#define LABEL_MAX_EM 12.0
/* The unsigned rows take these of the categorical head colours, in turn. */
#define N_COLOURS 10
/* Where on the diverging map (0.5 ± this) signed bars are coloured: the map's mid-tones,
 * which read on a white figure and on the dark style's background alike (its ends, dark red
 * and dark blue, vanish on the latter). */
#define DIVERGING_DEPTH 0.32

/* The row's largest |value| over the finite values; 0 when there is none. */
static double
row_scale (const SaccadeAttrRow *row, int n)
{
  double m = 0;

  for (int i = 0; row->values != NULL && i < n; i++)
    if (isfinite (row->values[i]))
      m = MAX (m, fabs (row->values[i]));
  return m;
}

/* The row's scale as printed at its right: "±m" for a signed row. */
static void
scale_text (const SaccadeAttrRow *row, int n, char buf[64])
{
  char tick[32];

  saccade_figure_format_tick (row_scale (row, n), tick);
  g_snprintf (buf, 64, "%s%s", row->is_signed ? "±" : "", tick);
}

static int
label_every (double extent, double step)
{
  return step > 0 ? MAX (1, (int) ceil (extent / step)) : 1;
}

static void
draw_row (cairo_t *cr, const SaccadeFigureStyle *style, const SaccadeAttributionFigure *f,
          int r, double x0, double step, double top, double band_h)
{
  const SaccadeAttrRow *row = &f->rows[r];
  const double m = row_scale (row, f->n_tokens), inner = 0.86 * band_h;
  const double base = row->is_signed ? top + band_h / 2 : top + band_h - 0.07 * band_h;
  const double full = row->is_signed ? inner / 2 : inner;
  double rgb[3];

  /* The baseline (0) across the band. */
  saccade_figure_set_fg (cr, style, row->is_signed ? 0.6 : 0.35);
  cairo_set_line_width (cr, 1.0);
  cairo_move_to (cr, x0, base);
  cairo_line_to (cr, x0 + f->n_tokens * step, base);
  cairo_stroke (cr);
  if (row->values == NULL || m <= 0)
    return;
  if (!row->is_signed)
    {
      saccade_figure_head_color (r, N_COLOURS, rgb);
      cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
    }
  for (int i = 0; i < f->n_tokens; i++)
    {
      const double v = row->values[i];
      double hgt;
      if (!isfinite (v))
        continue;
      hgt = v / m * full;
      if (row->is_signed)
        {
          saccade_colormap_rgb (SACCADE_COLORMAP_RDBU,
                                v >= 0 ? 0.5 + DIVERGING_DEPTH : 0.5 - DIVERGING_DEPTH, rgb);
          cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
        }
      /* a non-zero value is at least a hairline, so it is told from 0 */
      if (v != 0 && fabs (hgt) < 0.75)
        hgt = copysign (0.75, hgt);
      cairo_rectangle (cr, x0 + (i + 0.15) * step, base - MAX (hgt, 0), 0.7 * step, fabs (hgt));
      if (row->is_signed)
        cairo_fill (cr);
    }
  cairo_fill (cr);
}

void
saccade_figure_attribution_draw_full (cairo_t *cr, const SaccadeAttributionFigure *f,
                                      const SaccadeFigureStyle *style_in, int highlight,
                                      double width, double height,
                                      SaccadeAttributionGeometry *geom)
{
  SaccadeFigureStyle tmp;
  const SaccadeFigureStyle *style = saccade_figure_style_resolve (style_in, &tmp);
  const double fs = saccade_figure_font_size (style), pad = fs;
  const double title_h = saccade_figure_title_band (cr, style, f->title, width, 1.8 * fs);
  double name_w = 0, scale_w = 0, w, h, line_h = fs, label_h, x0, x1, y0, y1, step, band_h;
  double caption_h = 0;
  g_autoptr (PangoLayout) layout = NULL;
  char buf[64];
  int every;

  if (geom != NULL)
    *geom = (SaccadeAttributionGeometry) { 0 };
  cairo_save (cr);
  saccade_figure_paint_background (cr, style, width, height);
  saccade_figure_set_fg (cr, style, 1.0);
  saccade_figure_draw_title (cr, style, f->title, width, pad * 0.5);
  if (f->n_tokens <= 0 || f->n_rows <= 0 || f->rows == NULL)
    {
      cairo_restore (cr);
      return;
    }
  layout = saccade_figure_layout_new (cr, style, fs, FALSE);
  for (int r = 0; r < f->n_rows; r++)
    {
      saccade_figure_layout_set (layout, f->rows[r].name, &w, &line_h);
      name_w = MAX (name_w, w);
      scale_text (&f->rows[r], f->n_tokens, buf);
      saccade_figure_layout_set (layout, buf, &w, &line_h);
      scale_w = MAX (scale_w, w);
    }
  if (f->caption != NULL && *f->caption != '\0')
    {
      saccade_figure_set_fg (cr, style, 0.8);
      pango_layout_set_width (layout, (int) ((width - 2 * pad) * PANGO_SCALE));
      pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
      saccade_figure_layout_set (layout, f->caption, &w, &caption_h);
      saccade_figure_layout_draw (cr, layout, MAX (pad, width / 2 - w / 2), pad * 0.5 + title_h);
      pango_layout_set_width (layout, -1);
      pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_NONE);
      caption_h += 0.4 * fs;
    }
  label_h = MIN (LABEL_MAX_EM * fs,
                 saccade_figure_labels_max_width (layout, f->labels, f->n_tokens, NULL));

  /* 1. The frame: names left, scales right, labels below. */
  x0 = pad + name_w + 0.8 * fs;
  x1 = width - pad - scale_w - 0.8 * fs;
  y0 = pad * 0.5 + title_h + caption_h + 0.4 * fs;
  y1 = height - pad - label_h - 0.4 * fs;
  if (x1 - x0 < 10 || y1 - y0 < 4 * f->n_rows)
    {
      cairo_restore (cr);
      return;
    }
  step = (x1 - x0) / f->n_tokens;
  band_h = (y1 - y0) / f->n_rows;
  if (geom != NULL)
    *geom = (SaccadeAttributionGeometry) { f->n_tokens, f->n_rows, x0, step, y0, band_h };

  /* 2. The highlighted token's column, then the rows. */
  if (highlight >= 0 && highlight < f->n_tokens)
    {
      saccade_figure_set_fg (cr, style, 0.08);
      cairo_rectangle (cr, x0 + highlight * step, y0, step, y1 - y0);
      cairo_fill (cr);
    }
  for (int r = 0; r < f->n_rows; r++)
    {
      const SaccadeAttrRow *row = &f->rows[r];
      const double top = y0 + r * band_h, cy = top + band_h / 2;
      draw_row (cr, style, f, r, x0, step, top, band_h);
      saccade_figure_set_fg (cr, style, 1.0);
      saccade_figure_layout_set (layout, row->name, &w, &h);
      saccade_figure_layout_draw (cr, layout, x0 - 0.8 * fs - w, cy - h / 2);
      saccade_figure_set_fg (cr, style, 0.7);
      if (row->values == NULL)
        /* Translators: a row of the attribution figure whose method did not run. */
        g_strlcpy (buf, _("not computed"), sizeof buf);
      else
        scale_text (row, f->n_tokens, buf);
      saccade_figure_layout_set (layout, buf, &w, &h);
      if (row->values == NULL)
        saccade_figure_layout_draw (cr, layout, x0 + 0.5 * fs, cy - h / 2);
      else
        saccade_figure_layout_draw (cr, layout, x1 + 0.8 * fs, top + 0.07 * band_h);
      if (r > 0)
        {
          saccade_figure_set_fg (cr, style, 0.15);
          cairo_set_line_width (cr, 1.0);
          cairo_move_to (cr, x0, top);
          cairo_line_to (cr, x1, top);
          cairo_stroke (cr);
        }
    }

  /* 3. Token labels, reading upwards, right-aligned under their column. */
  saccade_figure_set_fg (cr, style, 1.0);
  every = label_every (line_h, step);
  pango_layout_set_width (layout, (int) (label_h * PANGO_SCALE));
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
  pango_layout_set_alignment (layout, PANGO_ALIGN_RIGHT);
  for (int i = 0; i < f->n_tokens; i += every)
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
saccade_figure_attribution_draw (cairo_t *cr, const SaccadeAttributionFigure *f, double width,
                                 double height)
{
  saccade_figure_attribution_draw_full (cr, f, NULL, -1, width, height, NULL);
}

gboolean
saccade_attribution_geometry_token_at (const SaccadeAttributionGeometry *geom, double x,
                                       double y, int *token)
{
  int i;

  if (geom->n_tokens <= 0 || geom->step <= 0 || x < geom->x0 || y < geom->y0
      || y > geom->y0 + geom->n_rows * geom->row_h)
    return FALSE;
  i = (int) floor ((x - geom->x0) / geom->step);
  if (i >= geom->n_tokens)
    return FALSE;
  *token = i;
  return TRUE;
}

void
saccade_figure_attribution_natural_size (const SaccadeAttributionFigure *f, double *W,
                                         double *H)
{
  cairo_surface_t *scratch = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (scratch);
  SaccadeFigureStyle style;
  g_autoptr (PangoLayout) layout = NULL;
  double fs, label_w, name_w = 0, w, lh;

  saccade_figure_style_init (&style);
  fs = saccade_figure_font_size (&style);
  layout = saccade_figure_layout_new (cr, &style, fs, FALSE);
  label_w = MIN (LABEL_MAX_EM * fs, saccade_figure_labels_max_width (layout, f->labels,
                                                                      f->n_tokens, NULL));
  for (int r = 0; r < f->n_rows; r++)
    {
      saccade_figure_layout_set (layout, f->rows[r].name, &w, &lh);
      name_w = MAX (name_w, w);
    }
  /* Columns 1.8 em wide: a bar and air, and a label's line height; rows 4 em tall. The
   * caption needs about 60 em. */
  *W = MAX (saccade_figure_title_width (cr, &style, f->title),
            name_w + 8 * fs + MAX (1, f->n_tokens) * 1.8 * fs);
  *W = MAX (*W, 60 * fs);
  *H = 6 * fs + (f->caption != NULL ? 1.6 * fs : 0) + 4.0 * fs * MAX (1, f->n_rows) + label_w;
  g_clear_object (&layout);
  cairo_destroy (cr);
  cairo_surface_destroy (scratch);
}

static void
draw_attr (cairo_t *cr, const void *f, double w, double h)
{
  saccade_figure_attribution_draw (cr, f, w, h);
}

static void
size_attr (const void *f, double *w, double *h)
{
  saccade_figure_attribution_natural_size (f, w, h);
}

gboolean
saccade_figure_export_attribution (const SaccadeAttributionFigure *f, const char *path,
                                   const SaccadeFigureExportOptions *opts, GError **error)
{
  if (saccade_figure_refuse_empty (f->rows == NULL || f->n_rows <= 0 || f->n_tokens <= 0,
                                   error))
    return FALSE;
  {
    SaccadeAttributionFigure g = *f;

    g.title = saccade_figure_export_title (opts, f->title);
    return saccade_figure_export_drawn (&g, g.title, draw_attr, size_attr, path, opts, error);
  }
}
