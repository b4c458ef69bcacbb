/* saccade-figure-effects.c — the figures of the ablation studies (saccade-figure.h, "Ablation
 * effects"): the effects map (one value per head, layers across and heads down, on the
 * diverging red-blue map centred at 0) and the paired bars (two signed values per token,
 * side by side around a zero line). The renderers of the Ablation page and of its export;
 * they know nothing of the studies, only numbers and names.
 *
 * Effects map layout: title; the map with head numbers left (caption "Head" rotated beside
 * them) and layer numbers under it (caption "Layer" below), both thinned so they never
 * overlap; the colour bar right of the map over [-m, m]; under it all, the legend of the
 * flip mark. Cells are square unless the room says otherwise (at most 2:1). A NaN cell is
 * hatched like a masked attention cell, never coloured as 0. A flipped head carries a
 * white ring outlined in black, readable on every colour of the map and on both themes.
 *
 * Paired bars layout: title; a legend of the two series at the top right; a value axis on
 * the left over [min(0, v), max(0, v)] with nice ticks and a zero line; per token two bars
 * (series a left, b right) rising or falling from 0; token labels under the plot, reading
 * upwards, ellipsized at 12 em and thinned to every k-th when pairs get thinner than a
 * line.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <math.h>

#define LABEL_MAX_EM 12.0

/* ------------------------------------------------------------------------------------ */
/* Effects map                                                                           */

double
saccade_figure_effects_map_range (const SaccadeEffectsMapFigure *f)
{
  double m = 0;

  if (f->range > 0)
    return f->range;
  for (int i = 0; f->values != NULL && i < f->n_layers * f->n_heads; i++)
    if (isfinite (f->values[i]))
      m = MAX (m, fabs (f->values[i]));
  return m > 0 ? m : 1.0;
}

static gboolean
any_flipped (const SaccadeEffectsMapFigure *f)
{
  for (int i = 0; f->flipped != NULL && i < f->n_layers * f->n_heads; i++)
    if (f->flipped[i])
      return TRUE;
  return FALSE;
}

/* The white ring with a black outline that marks a flipped head, centred at (cx, cy). */
static void
draw_flip_mark (cairo_t *cr, double cx, double cy, double r)
{
  cairo_save (cr);
  cairo_new_path (cr);
  cairo_arc (cr, cx, cy, r, 0, 2 * G_PI);
  cairo_set_source_rgb (cr, 0, 0, 0);
  cairo_set_line_width (cr, MAX (1.2, 0.55 * r));
  cairo_stroke_preserve (cr);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_set_line_width (cr, MAX (0.6, 0.25 * r));
  cairo_stroke (cr);
  cairo_restore (cr);
}

/* Every k-th label, so that labels of @extent fit in steps of @step. */
static int
label_every (double extent, double step)
{
  return step > 0 ? MAX (1, (int) ceil (extent / step)) : 1;
}

void
saccade_figure_effects_map_draw_full (cairo_t *cr, const SaccadeEffectsMapFigure *f,
                                      const SaccadeFigureStyle *style_in, int sel_layer,
                                      int sel_head, double width, double height,
                                      SaccadeEffectsMapGeometry *geom)
{
  SaccadeFigureStyle tmp;
  const SaccadeFigureStyle *style = saccade_figure_style_resolve (style_in, &tmp);
  const double fs = saccade_figure_font_size (style), pad = fs;
  const double title_h = saccade_figure_title_band (cr, style, f->title, width, 1.8 * fs);
  const char *layer_name = f->layer_name != NULL ? f->layer_name : _("Layer");
  const char *head_name = f->head_name != NULL ? f->head_name : _("Head");
  const gboolean legend = f->flip_name != NULL && any_flipped (f);
  g_autoptr (PangoLayout) layout = NULL;
  double m, w, h, line_h, num_w, cb_w, bar_w = 0.9 * fs;
  double x0, y0, avail_w, avail_h, c, cw, ch, map_w, map_h;
  char buf[32];
  int L = f->n_layers, H = f->n_heads, every;

  if (geom != NULL)
    *geom = (SaccadeEffectsMapGeometry) { 0 };
  cairo_save (cr);
  saccade_figure_paint_background (cr, style, width, height);
  saccade_figure_draw_title (cr, style, f->title, width, pad * 0.5);
  if (L <= 0 || H <= 0 || f->values == NULL)
    {
      cairo_restore (cr);
      return;
    }
  m = saccade_figure_effects_map_range (f);
  layout = saccade_figure_layout_new (cr, style, fs, FALSE);
  g_snprintf (buf, sizeof buf, "%d", MAX (L, H) - 1);
  saccade_figure_layout_set (layout, buf, &num_w, &line_h);
  cb_w = saccade_figure_colorbar_width (cr, style, fs, bar_w, SACCADE_SCALE_LINEAR, -m, m,
                                        f->value_name);

  /* 1. the frame: what the labels, captions, colour bar and legend take. */
  x0 = pad + line_h + 0.5 * fs + num_w + 0.4 * fs;
  y0 = pad * 0.5 + title_h + 0.5 * fs;
  avail_w = width - x0 - pad - fs - cb_w;
  avail_h = height - y0 - pad - 0.3 * fs - 2 * line_h - 0.3 * fs
            - (legend ? line_h + 0.6 * fs : 0);
  if (avail_w < L || avail_h < H)
    {
      cairo_restore (cr);
      return;
    }
  c = MIN (avail_w / L, avail_h / H);
  cw = MIN (avail_w / L, 2 * c);
  ch = MIN (avail_h / H, 2 * c);
  map_w = cw * L;
  map_h = ch * H;
  if (geom != NULL)
    *geom = (SaccadeEffectsMapGeometry) { L, H, x0, y0, cw, ch };

  /* 2. the cells; NaN hatched. */
  for (int l = 0; l < L; l++)
    for (int hd = 0; hd < H; hd++)
      {
        double v = f->values[l * H + hd], rgb[3];
        cairo_rectangle (cr, x0 + l * cw, y0 + hd * ch, cw, ch);
        if (!isfinite (v))
          {
            saccade_figure_fill_masked (cr, style, MAX (3.0, 0.3 * MIN (cw, ch)));
            continue;
          }
        saccade_colormap_rgb (SACCADE_COLORMAP_RDBU, 0.5 + 0.5 * CLAMP (v / m, -1.0, 1.0), rgb);
        cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
        cairo_fill (cr);
      }
  saccade_figure_set_fg (cr, style, 0.5);
  cairo_set_line_width (cr, MAX (0.5, fs * 0.06));
  cairo_rectangle (cr, x0, y0, map_w, map_h);
  cairo_stroke (cr);

  /* 3. flip marks and the selected head. */
  for (int i = 0; f->flipped != NULL && i < L * H; i++)
    if (f->flipped[i])
      draw_flip_mark (cr, x0 + (i / H + 0.5) * cw, y0 + (i % H + 0.5) * ch,
                      0.24 * MIN (cw, ch));
  if (sel_layer >= 0 && sel_layer < L && sel_head >= 0 && sel_head < H)
    {
      saccade_figure_set_fg (cr, style, 1.0);
      cairo_set_line_width (cr, MAX (1.5, 0.12 * MIN (cw, ch)));
      cairo_rectangle (cr, x0 + sel_layer * cw, y0 + sel_head * ch, cw, ch);
      cairo_stroke (cr);
    }

  /* 4. numbers and captions. */
  saccade_figure_set_fg (cr, style, 1.0);
  every = label_every (line_h, ch);
  for (int hd = 0; hd < H; hd += every)
    {
      g_snprintf (buf, sizeof buf, "%d", hd);
      saccade_figure_layout_set (layout, buf, &w, &h);
      saccade_figure_layout_draw (cr, layout, x0 - 0.4 * fs - w, y0 + (hd + 0.5) * ch - h / 2);
    }
  every = label_every (num_w + 0.5 * fs, cw);
  for (int l = 0; l < L; l += every)
    {
      g_snprintf (buf, sizeof buf, "%d", l);
      saccade_figure_layout_set (layout, buf, &w, &h);
      saccade_figure_layout_draw (cr, layout, x0 + (l + 0.5) * cw - w / 2, y0 + map_h + 0.3 * fs);
    }
  saccade_figure_layout_set (layout, layer_name, &w, &h);
  saccade_figure_layout_draw (cr, layout, x0 + (map_w - w) / 2, y0 + map_h + 0.3 * fs + line_h);
  saccade_figure_layout_set (layout, head_name, &w, &h);
  cairo_save (cr);
  cairo_translate (cr, pad, y0 + map_h / 2 + w / 2);
  cairo_rotate (cr, -G_PI / 2);
  saccade_figure_layout_draw (cr, layout, 0, 0);
  cairo_restore (cr);

  /* 5. the colour bar beside the map (at least six lines tall, for its ticks). */
  {
    double cb_h = MAX (map_h, MIN (6 * line_h, avail_h));
    saccade_figure_colorbar_draw (cr, style, fs, SACCADE_COLORMAP_RDBU, SACCADE_SCALE_LINEAR,
                                  -m, m, f->value_name, x0 + map_w + fs, y0, bar_w, cb_h);
  }

  /* 6. the legend of the mark. */
  if (legend)
    {
      double ly = y0 + map_h + 0.6 * fs + 2 * line_h, r = 0.3 * line_h;
      draw_flip_mark (cr, x0 + r + 1, ly + line_h / 2, r);
      saccade_figure_set_fg (cr, style, 1.0);
      saccade_figure_layout_set (layout, f->flip_name, &w, &h);
      saccade_figure_layout_draw (cr, layout, x0 + 2 * r + 0.6 * fs, ly);
    }
  cairo_restore (cr);
}

void
saccade_figure_effects_map_draw (cairo_t *cr, const SaccadeEffectsMapFigure *f, double width,
                                 double height)
{
  saccade_figure_effects_map_draw_full (cr, f, NULL, -1, -1, width, height, NULL);
}

gboolean
saccade_effects_map_geometry_head_at (const SaccadeEffectsMapGeometry *geom, double x, double y,
                                      int *layer, int *head)
{
  int l, h;

  if (geom->n_layers <= 0 || geom->cell_w <= 0 || geom->cell_h <= 0 || x < geom->x
      || y < geom->y)
    return FALSE;
  l = (int) floor ((x - geom->x) / geom->cell_w);
  h = (int) floor ((y - geom->y) / geom->cell_h);
  if (l >= geom->n_layers || h >= geom->n_heads)
    return FALSE;
  *layer = l;
  *head = h;
  return TRUE;
}

static void
effects_map_natural_size (const SaccadeEffectsMapFigure *f, double *W, double *H)
{
  cairo_surface_t *scratch = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (scratch);
  SaccadeFigureStyle style;
  /* About 560 units across the layers, cells between 8 and 28 units square. */
  double cell = CLAMP (560.0 / MAX (1, f->n_layers), 8.0, 28.0), fs, m;

  saccade_figure_style_init (&style);
  fs = saccade_figure_font_size (&style);
  m = saccade_figure_effects_map_range (f);
  *W = 2 * fs + 4 * fs + f->n_layers * cell + fs
       + saccade_figure_colorbar_width (cr, &style, fs, 0.9 * fs, SACCADE_SCALE_LINEAR, -m, m,
                                        f->value_name);
  *W = MAX (*W, saccade_figure_title_width (cr, &style, f->title));
  /* Above the map: padding and title (3 em); below: numbers, caption, padding (4.4 em),
   * the legend's line (1.8 em). */
  *H = 3.0 * fs + f->n_heads * cell + 4.4 * fs
       + (f->flip_name != NULL && any_flipped (f) ? 1.8 * fs : 0);
  *H = MAX (*H, 12 * fs);
  cairo_destroy (cr);
  cairo_surface_destroy (scratch);
}

/* ------------------------------------------------------------------------------------ */
/* Paired bars                                                                           */

/* Series a and b: a muted blue and orange (Tableau 10's first two), told apart from each
 * other and from the red-blue map's neutral white. */
void
saccade_figure_paired_bars_color (int series, double rgb[3])
{
  static const double colors[2][3] = { { 0.306, 0.475, 0.655 }, { 0.949, 0.557, 0.169 } };
  const double *c = colors[series != 0];

  rgb[0] = c[0];
  rgb[1] = c[1];
  rgb[2] = c[2];
}

static void
value_range (const SaccadePairedBarsFigure *f, double *lo, double *hi)
{
  *lo = 0;
  *hi = 0;
  for (int i = 0; i < f->n; i++)
    for (int s = 0; s < 2; s++)
      {
        const double *v = s == 0 ? f->a : f->b;
        if (v != NULL && isfinite (v[i]))
          {
            *lo = MIN (*lo, v[i]);
            *hi = MAX (*hi, v[i]);
          }
      }
  if (*hi - *lo <= 0)
    *hi = *lo + 1.0;
}

void
saccade_figure_paired_bars_draw_full (cairo_t *cr, const SaccadePairedBarsFigure *f,
                                      const SaccadeFigureStyle *style_in, int highlight,
                                      double width, double height,
                                      SaccadePairedBarsGeometry *geom)
{
  SaccadeFigureStyle tmp;
  const SaccadeFigureStyle *style = saccade_figure_style_resolve (style_in, &tmp);
  const double fs = saccade_figure_font_size (style), pad = fs;
  const double title_h = saccade_figure_title_band (cr, style, f->title, width, 1.8 * fs);
  double ticks[SACCADE_FIGURE_MAX_TICKS], lo, hi, w, h, line_h = fs, tick_w = 0, label_h;
  double x0, x1, y0, y1, step, yz;
  g_autoptr (PangoLayout) layout = NULL;
  int n_ticks, every;
  char buf[32];

  if (geom != NULL)
    *geom = (SaccadePairedBarsGeometry) { 0 };
  cairo_save (cr);
  saccade_figure_paint_background (cr, style, width, height);
  saccade_figure_draw_title (cr, style, f->title, width, pad * 0.5);
  if (f->n <= 0 || (f->a == NULL && f->b == NULL))
    {
      cairo_restore (cr);
      return;
    }
  value_range (f, &lo, &hi);
  layout = saccade_figure_layout_new (cr, style, fs, FALSE);
  n_ticks = saccade_figure_ticks (SACCADE_SCALE_LINEAR, lo, hi, ticks);
  for (int i = 0; i < n_ticks; i++)
    {
      saccade_figure_format_tick (ticks[i], buf);
      saccade_figure_layout_set (layout, buf, &w, &line_h);
      tick_w = MAX (tick_w, w);
    }
  label_h = MIN (LABEL_MAX_EM * fs,
                 saccade_figure_labels_max_width (layout, f->labels, f->n, NULL));

  /* 1. the frame: caption and ticks left, the legend's line on top, labels below. */
  x0 = pad + (f->value_name != NULL ? line_h + 0.5 * fs : 0) + tick_w + 0.6 * fs;
  x1 = width - pad;
  y0 = pad * 0.5 + title_h + line_h + 0.8 * fs;
  y1 = height - pad - label_h - 0.4 * fs;
  if (x1 - x0 < 10 || y1 - y0 < 10)
    {
      cairo_restore (cr);
      return;
    }
  step = (x1 - x0) / f->n;
  yz = y1 - (0 - lo) / (hi - lo) * (y1 - y0);
  if (geom != NULL)
    *geom = (SaccadePairedBarsGeometry) { f->n, x0, step, y0, y1 - y0 };

  /* 2. the highlighted token's band, grid lines, ticks, caption. */
  if (highlight >= 0 && highlight < f->n)
    {
      saccade_figure_set_fg (cr, style, 0.08);
      cairo_rectangle (cr, x0 + highlight * step, y0, step, y1 - y0);
      cairo_fill (cr);
    }
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
      saccade_figure_layout_draw (cr, layout, 0, 0);
      cairo_restore (cr);
    }

  /* 3. the bars from the zero line, then the zero line over their feet. */
  for (int s = 0; s < 2; s++)
    {
      const double *v = s == 0 ? f->a : f->b;
      double rgb[3];
      if (v == NULL)
        continue;
      saccade_figure_paired_bars_color (s, rgb);
      cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
      for (int i = 0; i < f->n; i++)
        if (isfinite (v[i]))
          {
            double yv = y1 - (v[i] - lo) / (hi - lo) * (y1 - y0);
            cairo_rectangle (cr, x0 + i * step + (0.1 + 0.4 * s) * step, MIN (yv, yz),
                             0.4 * step, fabs (yz - yv));
          }
      cairo_fill (cr);
    }
  saccade_figure_set_fg (cr, style, 0.8);
  cairo_move_to (cr, x0, yz);
  cairo_line_to (cr, x1, yz);
  cairo_stroke (cr);

  /* 4. the legend, right-aligned on its own line above the plot. */
  {
    double lx = x1, ly = y0 - 0.5 * fs - line_h, sw = 0.8 * line_h;
    for (int s = 1; s >= 0; s--)
      {
        const char *name = s == 0 ? f->a_name : f->b_name;
        double rgb[3];
        if (name == NULL || (s == 0 ? f->a : f->b) == NULL)
          continue;
        saccade_figure_layout_set (layout, name, &w, &h);
        lx -= w;
        saccade_figure_set_fg (cr, style, 1.0);
        saccade_figure_layout_draw (cr, layout, lx, ly);
        lx -= 0.4 * fs + sw;
        saccade_figure_paired_bars_color (s, rgb);
        cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
        cairo_rectangle (cr, lx, ly + (h - sw) / 2, sw, sw);
        cairo_fill (cr);
        lx -= 1.2 * fs;
      }
  }

  /* 5. token labels, reading upwards, right-aligned under their pair. */
  saccade_figure_set_fg (cr, style, 1.0);
  every = label_every (line_h, step);
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
saccade_figure_paired_bars_draw (cairo_t *cr, const SaccadePairedBarsFigure *f, double width,
                                 double height)
{
  saccade_figure_paired_bars_draw_full (cr, f, NULL, -1, width, height, NULL);
}

gboolean
saccade_paired_bars_geometry_token_at (const SaccadePairedBarsGeometry *geom, double x,
                                       double y, int *token)
{
  int i;

  if (geom->n <= 0 || geom->step <= 0 || x < geom->x0 || y < geom->y0
      || y > geom->y0 + geom->height)
    return FALSE;
  i = (int) floor ((x - geom->x0) / geom->step);
  if (i >= geom->n)
    return FALSE;
  *token = i;
  return TRUE;
}

static void
paired_bars_natural_size (const SaccadePairedBarsFigure *f, double *W, double *H)
{
  cairo_surface_t *scratch = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t *cr = cairo_create (scratch);
  SaccadeFigureStyle style;
  g_autoptr (PangoLayout) layout = NULL;
  double fs, label_w;

  saccade_figure_style_init (&style);
  fs = saccade_figure_font_size (&style);
  layout = saccade_figure_layout_new (cr, &style, fs, FALSE);
  label_w = MIN (LABEL_MAX_EM * fs, saccade_figure_labels_max_width (layout, f->labels, f->n,
                                                                      NULL));
  /* Pairs 2.6 em wide: two bars a line thick each, with air between tokens. */
  *W = MAX (saccade_figure_title_width (cr, &style, f->title), 9 * fs + f->n * 2.6 * fs);
  *W = MAX (*W, 40 * fs);
  *H = 26 * fs + label_w;
  g_clear_object (&layout);
  cairo_destroy (cr);
  cairo_surface_destroy (scratch);
}

/* ------------------------------------------------------------------------------------ */
/* Export                                                                                */

/* Through the one writer (saccade-figure-private.h). */

static void
size_map (const void *f, double *w, double *h)
{
  effects_map_natural_size (f, w, h);
}

static void
size_pairs (const void *f, double *w, double *h)
{
  paired_bars_natural_size (f, w, h);
}

static void
draw_map (cairo_t *cr, const void *f, double w, double h)
{
  saccade_figure_effects_map_draw (cr, f, w, h);
}

static void
draw_pairs (cairo_t *cr, const void *f, double w, double h)
{
  saccade_figure_paired_bars_draw (cr, f, w, h);
}

gboolean
saccade_figure_export_effects_map (const SaccadeEffectsMapFigure *f, const char *path,
                                   const SaccadeFigureExportOptions *opts, GError **error)
{
  if (saccade_figure_refuse_empty (f->n_layers <= 0 || f->n_heads <= 0 || f->values == NULL,
                                   error))
    return FALSE;
  {
    SaccadeEffectsMapFigure g = *f;

    g.title = saccade_figure_export_title (opts, f->title);
    return saccade_figure_export_drawn (&g, g.title, draw_map, size_map, path, opts, error);
  }
}

gboolean
saccade_figure_export_paired_bars (const SaccadePairedBarsFigure *f, const char *path,
                                   const SaccadeFigureExportOptions *opts, GError **error)
{
  if (saccade_figure_refuse_empty (f->n <= 0 || (f->a == NULL && f->b == NULL), error))
    return FALSE;
  {
    SaccadePairedBarsFigure g = *f;

    g.title = saccade_figure_export_title (opts, f->title);
    return saccade_figure_export_drawn (&g, g.title, draw_pairs, size_pairs, path, opts, error);
  }
}
