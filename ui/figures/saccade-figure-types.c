/* saccade-figure-types.c — models side by side as head grids (saccade-figure-types.h).
 *
 * Layout: title; on the left a relative-depth axis (0 at the top, 1 at the bottom, ticks
 * every quarter, its caption rotated); the panels side by side, each headed by its name
 * and its shape, each row of cells one layer, all panels the same height, so that row l of
 * a model of L layers spans depths [l / L, (l + 1) / L); on the right the legend — one
 * line per category: its swatch, its name and each panel's count — or, coloured by a
 * value, the colour bar.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-types.h"

#include <math.h>

#include "ui/figures/saccade-figure-private.h"

/* Okabe & Ito (2008), "Color universal design": distinguishable with every common colour
 * vision deficiency; black left out (it is the text colour), orange last (beside
 * vermillion it is the pair hardest to tell apart). */
static const double palette[][3] = {
  { 0.835, 0.369, 0.000 }, /* vermillion */
  { 0.000, 0.447, 0.698 }, /* blue */
  { 0.941, 0.894, 0.259 }, /* yellow */
  { 0.000, 0.620, 0.451 }, /* bluish green */
  { 0.800, 0.475, 0.655 }, /* reddish purple */
  { 0.337, 0.706, 0.914 }, /* sky blue */
  { 0.902, 0.624, 0.000 }, /* orange */
};
#define N_PALETTE ((int) G_N_ELEMENTS (palette))
/* The "other" category: a light grey that reads as "none of these" on white and on dark. */
#define OTHER_GREY 0.78

void
saccade_figure_types_color (int k, int n, gboolean last_is_other, double rgb[3])
{
  if (last_is_other && k == n - 1)
    {
      rgb[0] = rgb[1] = rgb[2] = OTHER_GREY;
      return;
    }
  k = ((k % N_PALETTE) + N_PALETTE) % N_PALETTE;
  for (int i = 0; i < 3; i++)
    rgb[i] = palette[k][i];
}

static gboolean
value_mode (const SaccadeTypesFigure *f)
{
  for (int p = 0; p < f->n_panels; p++)
    if (f->panels[p].category != NULL)
      return FALSE;
  return TRUE;
}

static void
value_range (const SaccadeTypesFigure *f, double *lo, double *hi)
{
  double a = INFINITY, b = -INFINITY;

  for (int p = 0; p < f->n_panels; p++)
    {
      const SaccadeTypesPanel *pn = &f->panels[p];
      for (gsize k = 0; pn->values != NULL && k < (gsize) pn->n_layers * pn->n_heads; k++)
        if (isfinite (pn->values[k]))
          {
            a = MIN (a, pn->values[k]);
            b = MAX (b, pn->values[k]);
          }
    }
  if (!(a <= b))
    a = 0, b = 1;
  if (b - a < 1e-12)
    b = a + 1;
  *lo = a;
  *hi = b;
}

static gboolean
usable (const SaccadeTypesFigure *f)
{
  return f->n_panels >= 1 && f->n_panels <= SACCADE_TYPES_MAX_PANELS && f->panels != NULL
         && f->n_categories >= 0 && f->n_categories <= SACCADE_TYPES_MAX_CATEGORIES;
}

/* The legend: one line per category, swatch, name, then each panel's count right-aligned
 * in its column. Returns its width (drawn only with @draw). */
static double
legend (cairo_t *cr, const SaccadeTypesFigure *f, const SaccadeFigureStyle *style,
        PangoLayout *layout, double x, double y, gboolean draw)
{
  const double fs = saccade_figure_font_size (style), sw = fs;
  double name_w = 0, count_w = 0, w, h = fs, line_h;
  char buf[32];

  for (int k = 0; k < f->n_categories; k++)
    {
      saccade_figure_layout_set (layout, f->category_names[k], &w, &h);
      name_w = MAX (name_w, w);
    }
  for (int p = 0; p < f->n_panels; p++)
    {
      g_snprintf (buf, sizeof buf, "%c", 'A' + p);
      saccade_figure_layout_set (layout, buf, &w, &h);
      count_w = MAX (count_w, w);
      for (int k = 0; f->panels[p].counts != NULL && k < f->n_categories; k++)
        {
          g_snprintf (buf, sizeof buf, "%d", f->panels[p].counts[k]);
          saccade_figure_layout_set (layout, buf, &w, &h);
          count_w = MAX (count_w, w);
        }
    }
  line_h = h * 1.4;
  if (draw)
    {
      const double cx0 = x + sw + 0.5 * fs + name_w + fs;
      /* the header: each panel's letter over its column */
      for (int p = 0; p < f->n_panels; p++)
        {
          g_snprintf (buf, sizeof buf, "%c", 'A' + p);
          saccade_figure_layout_set (layout, buf, &w, &h);
          saccade_figure_set_fg (cr, style, 0.7);
          saccade_figure_layout_draw (cr, layout, cx0 + (p + 1) * (count_w + fs) - fs - w, y);
        }
      for (int k = 0; k < f->n_categories; k++)
        {
          const double ly = y + (k + 1) * line_h;
          double rgb[3];

          saccade_figure_types_color (k, f->n_categories, TRUE, rgb);
          cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
          cairo_rectangle (cr, x, ly + (h - sw) / 2, sw, sw);
          cairo_fill (cr);
          saccade_figure_set_fg (cr, style, 1.0);
          saccade_figure_layout_set (layout, f->category_names[k], &w, &h);
          saccade_figure_layout_draw (cr, layout, x + sw + 0.5 * fs, ly);
          for (int p = 0; p < f->n_panels; p++)
            {
              if (f->panels[p].counts == NULL)
                continue;
              g_snprintf (buf, sizeof buf, "%d", f->panels[p].counts[k]);
              saccade_figure_layout_set (layout, buf, &w, &h);
              saccade_figure_layout_draw (cr, layout, cx0 + (p + 1) * (count_w + fs) - fs - w,
                                          ly);
            }
        }
    }
  return sw + 0.5 * fs + name_w + fs + f->n_panels * (count_w + fs);
}

void
saccade_figure_types_draw_full (cairo_t *cr, const SaccadeTypesFigure *f,
                                const SaccadeFigureStyle *style_in, double width,
                                double height)
{
  SaccadeFigureStyle tmp;
  const SaccadeFigureStyle *style = saccade_figure_style_resolve (style_in, &tmp);
  const double fs = saccade_figure_font_size (style), pad = fs;
  const double title_h = saccade_figure_title_band (cr, style, f->title, width, 1.8 * fs);
  const gboolean by_value = usable (f) && value_mode (f);
  g_autoptr (PangoLayout) layout = NULL;
  g_autoptr (PangoLayout) bold = NULL;
  double lo = 0, hi = 1, right_w, axis_w, x0, x1, y0, y1, panel_w, gap, w, h = fs;
  char buf[32];

  cairo_save (cr);
  saccade_figure_paint_background (cr, style, width, height);
  saccade_figure_set_fg (cr, style, 1.0);
  saccade_figure_draw_title (cr, style, f->title, width, pad * 0.5);
  if (!usable (f))
    {
      cairo_restore (cr);
      return;
    }
  layout = saccade_figure_layout_new (cr, style, fs, FALSE);
  bold = saccade_figure_layout_new (cr, style, fs, TRUE);
  if (by_value)
    {
      value_range (f, &lo, &hi);
      right_w = saccade_figure_colorbar_width (cr, style, fs, fs, SACCADE_SCALE_LINEAR, lo, hi,
                                               f->value_name);
    }
  else
    right_w = legend (cr, f, style, layout, 0, 0, FALSE);
  saccade_figure_layout_set (layout, "0.75", &w, &h);
  axis_w = h + 0.5 * fs + w + 0.5 * fs;
  x0 = pad + axis_w;
  x1 = width - pad - right_w - 1.5 * fs;
  y0 = pad * 0.5 + title_h + 0.5 * fs + 2.6 * h; /* room for the panels' two header lines */
  y1 = height - pad;
  gap = 1.5 * fs;
  panel_w = (x1 - x0 - gap * (f->n_panels - 1)) / f->n_panels;
  if (panel_w < 10 || y1 - y0 < 10)
    {
      cairo_restore (cr);
      return;
    }

  /* 1. the relative-depth axis: ticks every quarter, 0 at the top. */
  cairo_set_line_width (cr, MAX (0.5, fs * 0.06));
  for (int t = 0; t <= 4; t++)
    {
      const double ty = y0 + t / 4.0 * (y1 - y0);
      g_snprintf (buf, sizeof buf, "%g", t / 4.0);
      saccade_figure_layout_set (layout, buf, &w, &h);
      saccade_figure_set_fg (cr, style, 1.0);
      saccade_figure_layout_draw (cr, layout, x0 - 0.5 * fs - w, ty - h / 2);
      saccade_figure_set_fg (cr, style, 0.5);
      cairo_move_to (cr, x0 - 0.35 * fs, ty);
      cairo_line_to (cr, x0 - 0.05 * fs, ty);
      cairo_stroke (cr);
    }
  saccade_figure_set_fg (cr, style, 1.0);
  saccade_figure_layout_set (layout, _("Relative depth (layer / layers)"), &w, &h);
  cairo_save (cr);
  cairo_translate (cr, pad, (y0 + y1) / 2 + MIN (w, y1 - y0) / 2);
  cairo_rotate (cr, -G_PI / 2);
  pango_layout_set_width (layout, (int) ((y1 - y0) * PANGO_SCALE));
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_END);
  saccade_figure_layout_draw (cr, layout, 0, 0);
  cairo_restore (cr);
  pango_layout_set_width (layout, -1);
  pango_layout_set_ellipsize (layout, PANGO_ELLIPSIZE_NONE);

  /* 2. the panels. */
  for (int p = 0; p < f->n_panels; p++)
    {
      const SaccadeTypesPanel *pn = &f->panels[p];
      const double px = x0 + p * (panel_w + gap);
      double cw, ch;

      pango_layout_set_width (bold, (int) (panel_w * PANGO_SCALE));
      pango_layout_set_ellipsize (bold, PANGO_ELLIPSIZE_END);
      saccade_figure_set_fg (cr, style, 1.0);
      saccade_figure_layout_set (bold, pn->name, &w, &h);
      saccade_figure_layout_draw (cr, bold, px, y0 - 2.5 * h);
      /* Translators: a panel's shape: "30 layers × 9 heads". */
      g_autofree char *shape = g_strdup_printf (_("%d layers × %d heads"), pn->n_layers,
                                                pn->n_heads);
      saccade_figure_set_fg (cr, style, 0.7);
      saccade_figure_layout_set (layout, shape, &w, &h);
      saccade_figure_layout_draw (cr, layout, px, y0 - 1.3 * h);
      if (pn->n_layers <= 0 || pn->n_heads <= 0)
        continue;
      cw = panel_w / pn->n_heads;
      ch = (y1 - y0) / pn->n_layers;
      for (int l = 0; l < pn->n_layers; l++)
        for (int hd = 0; hd < pn->n_heads; hd++)
          {
            const gsize i = (gsize) l * pn->n_heads + hd;
            double rgb[3] = { OTHER_GREY, OTHER_GREY, OTHER_GREY };
            /* a hairline gap between cells, so equal neighbours stay countable */
            const double inset = MIN (0.5, 0.08 * MIN (cw, ch));

            cairo_rectangle (cr, px + hd * cw + inset, y0 + l * ch + inset, cw - 2 * inset,
                             ch - 2 * inset);
            if (pn->category != NULL && pn->category[i] >= 0
                && pn->category[i] < f->n_categories)
              saccade_figure_types_color (pn->category[i], f->n_categories, TRUE, rgb);
            else if (pn->category == NULL && pn->values != NULL && isfinite (pn->values[i]))
              saccade_colormap_rgb (f->colormap, (pn->values[i] - lo) / (hi - lo), rgb);
            else
              {
                saccade_figure_fill_masked (cr, style, MAX (2.0, 0.4 * fs));
                continue;
              }
            cairo_set_source_rgb (cr, rgb[0], rgb[1], rgb[2]);
            cairo_fill (cr);
          }
      saccade_figure_set_fg (cr, style, 0.6);
      cairo_rectangle (cr, px, y0, panel_w, y1 - y0);
      cairo_stroke (cr);
    }

  /* 3. the legend or the colour bar. */
  if (by_value)
    saccade_figure_colorbar_draw (cr, style, fs, f->colormap, SACCADE_SCALE_LINEAR, lo, hi,
                                  f->value_name, width - pad - right_w, y0, fs, y1 - y0);
  else
    legend (cr, f, style, layout, width - pad - right_w, y0 - 1.3 * h, TRUE);
  cairo_restore (cr);
}

void
saccade_figure_types_draw (cairo_t *cr, const SaccadeTypesFigure *f, double width,
                           double height)
{
  saccade_figure_types_draw_full (cr, f, NULL, width, height);
}

void
saccade_figure_types_natural_size (const SaccadeTypesFigure *f, double *w, double *h)
{
  /* 360 units per panel (9 heads of 40) plus the axis and the legend; 600 high: 20 per
   * layer for SmolLM2's 30, so every row stays visible in a PNG. */
  *w = 220 + 360.0 * MAX (1, f->n_panels);
  *h = 600;
}

static void
draw_types (cairo_t *cr, const void *f, double w, double h)
{
  saccade_figure_types_draw (cr, f, w, h);
}

static void
size_types (const void *f, double *w, double *h)
{
  saccade_figure_types_natural_size (f, w, h);
}

gboolean
saccade_figure_export_types (const SaccadeTypesFigure *f, const char *path,
                             const SaccadeFigureExportOptions *opts, GError **error)
{
  if (saccade_figure_refuse_empty (!usable (f), error))
    return FALSE;
  {
    SaccadeTypesFigure g = *f;

    g.title = saccade_figure_export_title (opts, f->title);
    return saccade_figure_export_drawn (&g, g.title, draw_types, size_types, path, opts, error);
  }
}
