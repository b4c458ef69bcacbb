/* saccade-figure-common.c — the pieces every figure renderer uses: style, text, colour bar,
 * masked-cell hatching and colour images of matrices (saccade-figure-private.h).
 *
 * Text goes through Pango with absolute sizes in user units and unhinted metrics, so a
 * figure lays out the same on screen, in a PNG, an SVG and a PDF; the font family list
 * puts a CJK face after the Latin ones so Chinese tokens never show as boxes.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <math.h>
#include <string.h>

void
saccade_figure_style_init (SaccadeFigureStyle *style)
{
  *style = (SaccadeFigureStyle) {
    .fg = { 0.0, 0.0, 0.0, 1.0 },
    .bg = { 1.0, 1.0, 1.0, 1.0 },
    .font_size = 10.0,
    .font_family = NULL,
  };
}

const SaccadeFigureStyle *
saccade_figure_style_resolve (const SaccadeFigureStyle *style, SaccadeFigureStyle *tmp)
{
  if (style != NULL)
    return style;
  saccade_figure_style_init (tmp);
  return tmp;
}

double
saccade_figure_font_size (const SaccadeFigureStyle *style)
{
  return style->font_size > 0 ? style->font_size : SACCADE_FIGURE_BASE_FONT;
}

void
saccade_figure_paint_background (cairo_t *cr, const SaccadeFigureStyle *style, double w,
                                 double h)
{
  if (style->bg[3] <= 0.0 || saccade_figure_export_measuring (cr))
    return;
  cairo_save (cr);
  cairo_set_source_rgba (cr, style->bg[0], style->bg[1], style->bg[2], style->bg[3]);
  cairo_rectangle (cr, 0, 0, w, h);
  cairo_fill (cr);
  cairo_restore (cr);
}

void
saccade_figure_set_fg (cairo_t *cr, const SaccadeFigureStyle *style, double alpha)
{
  cairo_set_source_rgba (cr, style->fg[0], style->fg[1], style->fg[2], style->fg[3] * alpha);
}

PangoLayout *
saccade_figure_layout_new (cairo_t *cr, const SaccadeFigureStyle *style, double size,
                           gboolean bold)
{
  PangoLayout *layout = pango_cairo_create_layout (cr);
  PangoContext *ctx = pango_layout_get_context (layout);
  cairo_font_options_t *fo = cairo_font_options_create ();
  PangoFontDescription *desc = pango_font_description_new ();
  const SaccadeFigureExportOptions *opts;

  /* Unhinted metrics: glyph advances do not depend on the device scale or the surface. */
  cairo_font_options_set_hint_metrics (fo, CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_hint_style (fo, CAIRO_HINT_STYLE_NONE);
  pango_cairo_context_set_font_options (ctx, fo);
  cairo_font_options_destroy (fo);
  pango_layout_context_changed (layout);

  opts = style->font_family == NULL ? saccade_figure_export_options_of (cr) : NULL;
  pango_font_description_set_family (desc, style->font_family != NULL ? style->font_family
                                           : opts != NULL && opts->font_family != NULL
                                             ? opts->font_family
                                             : SACCADE_FIGURE_FONT_FAMILY);
  pango_font_description_set_absolute_size (desc, size * PANGO_SCALE);
  pango_font_description_set_weight (desc, bold ? PANGO_WEIGHT_BOLD : PANGO_WEIGHT_NORMAL);
  pango_layout_set_font_description (layout, desc);
  pango_font_description_free (desc);
  return layout;
}

void
saccade_figure_layout_set (PangoLayout *layout, const char *text, double *w, double *h)
{
  int pw, ph;

  pango_layout_set_text (layout, text != NULL ? text : "", -1);
  pango_layout_get_size (layout, &pw, &ph);
  if (w != NULL)
    *w = (double) pw / PANGO_SCALE;
  if (h != NULL)
    *h = (double) ph / PANGO_SCALE;
}

void
saccade_figure_layout_draw (cairo_t *cr, PangoLayout *layout, double x, double y)
{
  if (!saccade_figure_svg_text_draw (cr, layout, x, y))
    {
      cairo_move_to (cr, x, y);
      pango_cairo_show_layout (cr, layout);
    }
  cairo_new_path (cr);
}

double
saccade_figure_title_width (cairo_t *cr, const SaccadeFigureStyle *style, const char *title)
{
  g_autoptr (PangoLayout) layout = NULL;
  double w;

  if (title == NULL || *title == '\0')
    return 0.0;
  layout = saccade_figure_layout_new (cr, style, 1.3 * saccade_figure_font_size (style), TRUE);
  saccade_figure_layout_set (layout, title, &w, NULL);
  return w + 2 * saccade_figure_font_size (style);
}

/* The title's layout, wrapped at word boundaries to @width less the side padding. */
static PangoLayout *
title_layout (cairo_t *cr, const SaccadeFigureStyle *style, const char *title, double width)
{
  double fs = saccade_figure_font_size (style);
  PangoLayout *layout = saccade_figure_layout_new (cr, style, 1.3 * fs, TRUE);

  if (width < 1e6) /* natural sizes measure at an unbounded width */
    pango_layout_set_width (layout, (int) (MAX (1.0, width - 2 * fs) * PANGO_SCALE));
  pango_layout_set_wrap (layout, PANGO_WRAP_WORD_CHAR);
  pango_layout_set_alignment (layout, PANGO_ALIGN_CENTER);
  saccade_figure_layout_set (layout, title, NULL, NULL);
  return layout;
}

double
saccade_figure_title_band (cairo_t *cr, const SaccadeFigureStyle *style, const char *title,
                           double width, double one_line)
{
  g_autoptr (PangoLayout) layout = NULL;
  PangoRectangle line;
  int ph;

  if (title == NULL || *title == '\0')
    return 0.0;
  layout = title_layout (cr, style, title, width);
  pango_layout_get_size (layout, NULL, &ph);
  pango_layout_line_get_extents (pango_layout_get_line_readonly (layout, 0), NULL, &line);
  return one_line + (double) MAX (0, ph - line.height) / PANGO_SCALE;
}

void
saccade_figure_draw_title (cairo_t *cr, const SaccadeFigureStyle *style, const char *title,
                           double width, double y)
{
  g_autoptr (PangoLayout) layout = NULL;

  if (title == NULL || *title == '\0')
    return;
  layout = title_layout (cr, style, title, width);
  cairo_save (cr);
  saccade_figure_set_fg (cr, style, 1.0);
  saccade_figure_layout_draw (cr, layout, saccade_figure_font_size (style), y);
  cairo_restore (cr);
}

const char *
saccade_figure_label (const char *const *labels, int i, char buf[16])
{
  if (labels != NULL && labels[i] != NULL)
    return labels[i];
  g_snprintf (buf, 16, "%d", i);
  return buf;
}

double
saccade_figure_labels_max_width (PangoLayout *layout, const char *const *labels, int n,
                                 double *line_h)
{
  double max_w = 0.0, w, h = 0.0;
  char buf[16];

  for (int i = 0; i < n; i++)
    {
      saccade_figure_layout_set (layout, saccade_figure_label (labels, i, buf), &w, &h);
      max_w = MAX (max_w, w);
    }
  if (line_h != NULL)
    {
      saccade_figure_layout_set (layout, "Ag", NULL, &h);
      *line_h = h;
    }
  return max_w;
}

/* ------------------------------------------------------------------------------------ */
/* Colour bar                                                                            */


/* Tick values for [vmin, vmax]: multiples of a "nice" step (1, 2, 2.5 or 5 times a power
 * of ten, about four intervals) on a linear scale, the powers of ten on a log scale (with
 * the ends when fewer than two decades fit). Returns how many. */
int
saccade_figure_ticks (SaccadeScale scale, double vmin, double vmax, double ticks[SACCADE_FIGURE_MAX_TICKS])
{
  int n = 0;

  if (!(vmax > vmin) || !isfinite (vmin) || !isfinite (vmax))
    {
      ticks[0] = vmin;
      return isfinite (vmin) ? 1 : 0;
    }
  if (scale == SACCADE_SCALE_LOG && vmin > 0)
    {
      int k0 = (int) ceil (log10 (vmin) - 1e-9), k1 = (int) floor (log10 (vmax) + 1e-9);
      if (k1 - k0 + 1 >= 2)
        {
          for (int k = k0; k <= k1 && n < SACCADE_FIGURE_MAX_TICKS; k++)
            ticks[n++] = pow (10.0, k);
          return n;
        }
      ticks[n++] = vmin;
      ticks[n++] = vmax;
      return n;
    }
  {
    double raw = (vmax - vmin) / 4.0, mag = pow (10.0, floor (log10 (raw))), norm = raw / mag;
    double step = (norm < 1.5 ? 1.0 : norm < 2.25 ? 2.0 : norm < 3.5 ? 2.5 : norm < 7.5 ? 5.0
                                                                                   : 10.0)
                  * mag;
    double first = ceil (vmin / step - 1e-9) * step;
    for (double t = first; t <= vmax + step * 1e-6 && n < SACCADE_FIGURE_MAX_TICKS; t += step)
      ticks[n++] = fabs (t) < step * 1e-9 ? 0.0 : t;
  }
  return n;
}

void
saccade_figure_format_tick (double v, char buf[32])
{
  if (v != 0.0 && (fabs (v) < 1e-3 || fabs (v) >= 1e4))
    g_snprintf (buf, 32, "%.0e", v);
  else
    g_snprintf (buf, 32, "%.3g", v);
}

double
saccade_figure_colorbar_width (cairo_t *cr, const SaccadeFigureStyle *style, double size,
                               double bar_w, SaccadeScale scale, double vmin, double vmax,
                               const char *caption)
{
  g_autoptr (PangoLayout) layout = saccade_figure_layout_new (cr, style, size, FALSE);
  double ticks[SACCADE_FIGURE_MAX_TICKS], max_w = 0.0, w, h = 0.0;
  int n = saccade_figure_ticks (scale, vmin, vmax, ticks);
  char buf[32];

  for (int i = 0; i < n; i++)
    {
      saccade_figure_format_tick (ticks[i], buf);
      saccade_figure_layout_set (layout, buf, &w, &h);
      max_w = MAX (max_w, w);
    }
  saccade_figure_layout_set (layout, "Ag", NULL, &h);
  return bar_w + 0.4 * size + 0.3 * size + max_w
         + (caption != NULL && *caption != '\0' ? 0.6 * size + h : 0.0);
}

void
saccade_figure_colorbar_draw (cairo_t *cr, const SaccadeFigureStyle *style, double size,
                              SaccadeColormap map, SaccadeScale scale, double vmin,
                              double vmax, const char *caption, double x, double y,
                              double bar_w, double height)
{
  g_autoptr (PangoLayout) layout = saccade_figure_layout_new (cr, style, size, FALSE);
  cairo_pattern_t *ramp = cairo_pattern_create_linear (0, y + height, 0, y);
  double ticks[SACCADE_FIGURE_MAX_TICKS], max_w = 0.0, w, h;
  int n = saccade_figure_ticks (scale, vmin, vmax, ticks);
  char buf[32];

  cairo_save (cr);
  /* 33 stops: the maps are smooth, and linear interpolation between 32 intervals is
   * within one 8-bit step of the tables. */
  for (int i = 0; i <= 32; i++)
    {
      double rgb[3], t = i / 32.0;
      saccade_colormap_rgb (map, t, rgb);
      cairo_pattern_add_color_stop_rgb (ramp, t, rgb[0], rgb[1], rgb[2]);
    }
  cairo_rectangle (cr, x, y, bar_w, height);
  cairo_set_source (cr, ramp);
  cairo_fill (cr);
  cairo_pattern_destroy (ramp);

  saccade_figure_set_fg (cr, style, 0.6);
  cairo_set_line_width (cr, MAX (0.5, size * 0.06));
  cairo_rectangle (cr, x, y, bar_w, height);
  cairo_stroke (cr);

  saccade_figure_set_fg (cr, style, 1.0);
  for (int i = 0; i < n; i++)
    {
      double t = saccade_scale_apply (scale, ticks[i], vmin, vmax);
      double ty = y + height * (1.0 - t);
      if (vmax <= vmin)
        ty = y + height / 2;
      cairo_move_to (cr, x + bar_w, ty);
      cairo_line_to (cr, x + bar_w + 0.4 * size, ty);
      cairo_stroke (cr);
      saccade_figure_format_tick (ticks[i], buf);
      saccade_figure_layout_set (layout, buf, &w, &h);
      max_w = MAX (max_w, w);
      saccade_figure_layout_draw (cr, layout, x + bar_w + 0.7 * size, ty - h / 2);
    }
  if (caption != NULL && *caption != '\0')
    {
      saccade_figure_layout_set (layout, caption, &w, &h);
      cairo_save (cr);
      cairo_translate (cr, x + bar_w + 0.7 * size + max_w + 0.6 * size, y + height / 2 + w / 2);
      cairo_rotate (cr, -G_PI / 2);
      saccade_figure_layout_draw (cr, layout, 0, 0);
      cairo_restore (cr);
    }
  cairo_restore (cr);
}

/* ------------------------------------------------------------------------------------ */
/* Masked cells and colour images                                                        */

/* The hatching's lines, in the foreground at this alpha, this share of their spacing wide
 * (at least 0.4 units). */
#define HATCH_ALPHA 0.28
#define HATCH_WIDTH 0.12

void
saccade_figure_fill_masked (cairo_t *cr, const SaccadeFigureStyle *style, double spacing)
{
  double x0, y0, x1, y1, lw;

  cairo_save (cr);
  /* A tint of the foreground: light grey on white, dark grey on a dark theme — never a
   * colour of the sequential maps, whose ends are saturated. */
  saccade_figure_set_fg (cr, style, 0.08);
  cairo_fill_preserve (cr);
  spacing = MAX (spacing, 2.0);
  lw = MAX (0.4, spacing * HATCH_WIDTH);
  if (!saccade_figure_target_is_vector (cr))
    {
      /* On an image: fill with a repeating tile of one 45° line, a whole number of device
       * pixels square so that it repeats seamlessly. Stroking hundreds of lines clipped
       * to a staircase cost 40 ms for the masked half of an 8,192-token head; a tile
       * costs one composite. Lines are anchored at the origin: adjacent fills line up. */
      double ppu;
      int n;
      cairo_surface_t *tile;
      cairo_pattern_t *pat;
      cairo_matrix_t m;
      cairo_t *t;

      ppu = saccade_figure_pixels_per_unit (cr);
      n = MAX (2, (int) lround (spacing * ppu));
      tile = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, n, n);
      t = cairo_create (tile);
      cairo_set_source_rgba (t, style->fg[0], style->fg[1], style->fg[2],
                             style->fg[3] * HATCH_ALPHA);
      cairo_set_line_width (t, lw * ppu);
      /* the line and its neighbours one tile left and right, for the corners */
      for (int k = -1; k <= 1; k++)
        {
          cairo_move_to (t, k * n, n);
          cairo_line_to (t, (k + 1) * n, 0);
        }
      cairo_stroke (t);
      cairo_destroy (t);
      pat = cairo_pattern_create_for_surface (tile);
      cairo_pattern_set_extend (pat, CAIRO_EXTEND_REPEAT);
      cairo_matrix_init_scale (&m, ppu, ppu);
      cairo_pattern_set_matrix (pat, &m);
      cairo_set_source (cr, pat);
      cairo_fill (cr);
      cairo_pattern_destroy (pat);
      cairo_surface_destroy (tile);
      cairo_restore (cr);
      return;
    }
  /* On a vector surface: real lines, sharp at any zoom of the viewer. */
  cairo_clip (cr);
  cairo_clip_extents (cr, &x0, &y0, &x1, &y1);
  saccade_figure_set_fg (cr, style, HATCH_ALPHA);
  cairo_set_line_width (cr, lw);
  /* 45° lines through the clip's extents, anchored at multiples of @spacing so that
   * adjacent fills line up. */
  for (double c = floor ((x0 - (y1 - y0)) / spacing) * spacing; c <= x1; c += spacing)
    {
      cairo_move_to (cr, c, y1);
      cairo_line_to (cr, c + (y1 - y0), y0);
    }
  cairo_stroke (cr);
  cairo_restore (cr);
}

void
saccade_figure_cells_rects (cairo_t *cr, cairo_surface_t *cells, double x, double y,
                            double side)
{
  /* Each cell reaches a little into its right and lower neighbours, which are drawn over
   * it: anti-aliased viewers then show no hairline seams between cells. */
  int w = cairo_image_surface_get_width (cells), h = cairo_image_surface_get_height (cells);
  int stride = cairo_image_surface_get_stride (cells);
  const guchar *data;
  double overlap = 0.02 * side;

  cairo_surface_flush (cells);
  data = cairo_image_surface_get_data (cells);
  cairo_save (cr);
  for (int r = 0; r < h; r++)
    for (int c = 0; c < w; c++)
      {
        guint32 px = ((const guint32 *) (data + (gsize) r * stride))[c];

        if ((px >> 24) == 0)
          continue; /* masked or not a number: what is underneath shows, as in the image */
        cairo_set_source_rgb (cr, ((px >> 16) & 0xff) / 255.0, ((px >> 8) & 0xff) / 255.0,
                              (px & 0xff) / 255.0);
        cairo_rectangle (cr, x + c * side, y + r * side, side + (c + 1 < w ? overlap : 0),
                         side + (r + 1 < h ? overlap : 0));
        cairo_fill (cr);
      }
  cairo_restore (cr);
}

/* Colours are looked up in a table of this many steps: finer than 8-bit output. */
#define LUT_SIZE 1024

cairo_surface_t *
saccade_figure_cells_image (const float *values, int stride, int r0, int r1, int c0, int c1,
                            gboolean causal, int k, SaccadeColormap map, SaccadeScale scale,
                            double vmin, double vmax)
{
  int rows = MAX (r1 - r0, 1), cols = MAX (c1 - c0, 1);
  cairo_surface_t *img;
  guint32 lut[LUT_SIZE];
  guchar *data;
  int px_stride;

  k = MAX (k, 1);
  img = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, cols * k, rows * k);
  if (cairo_surface_status (img) != CAIRO_STATUS_SUCCESS)
    return img;
  for (int i = 0; i < LUT_SIZE; i++)
    lut[i] = 0xff000000u | saccade_colormap_rgb24 (map, (double) i / (LUT_SIZE - 1));

  cairo_surface_flush (img);
  data = cairo_image_surface_get_data (img);
  px_stride = cairo_image_surface_get_stride (img);
  for (int r = r0; r < r1; r++)
    {
      guint32 *first = (guint32 *) (data + (gsize) (r - r0) * k * px_stride);
      for (int c = c0; c < c1; c++)
        {
          double v = values[(gsize) r * stride + c];
          guint32 px = 0; /* transparent: masked or not a number */
          if (!(causal && c > r) && !isnan (v))
            px = lut[(int) lround (saccade_scale_apply (scale, v, vmin, vmax) * (LUT_SIZE - 1))];
          for (int dx = 0; dx < k; dx++)
            first[(c - c0) * k + dx] = px;
        }
      for (int dy = 1; dy < k; dy++)
        memcpy ((guchar *) first + (gsize) dy * px_stride, first, (gsize) cols * k * 4);
    }
  cairo_surface_mark_dirty (img);
  return img;
}

/* The colour of value @v: transparent for NaN, else @lut at its scaled position. */
static inline guint32
lut_color (const guint32 *lut, double v, SaccadeScale scale, double vmin, double vmax)
{
  if (isnan (v))
    return 0;
  return lut[(int) lround (saccade_scale_apply (scale, v, vmin, vmax) * (LUT_SIZE - 1))];
}

cairo_surface_t *
saccade_figure_lod_cells_image (const SaccadeLod *lod, int level, int i0, int i1, int j0,
                                int j1, int k, SaccadeColormap map, SaccadeScale scale,
                                double vmin, double vmax)
{
  const SaccadeLodLevel *L = saccade_lod_get_level (lod, level);
  gboolean causal = saccade_lod_is_causal (lod);
  int rows, cols, px_stride;
  g_autofree guint32 *lut16 = NULL;
  guint32 lut[LUT_SIZE];
  cairo_surface_t *img;
  guchar *data;

  i0 = CLAMP (i0, 0, L->rows);
  i1 = CLAMP (i1, i0, L->rows);
  j0 = CLAMP (j0, 0, L->cols);
  j1 = CLAMP (j1, j0, L->cols);
  rows = MAX (i1 - i0, 1);
  cols = MAX (j1 - j0, 1);
  k = MAX (k, 1);
  img = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, cols * k, rows * k);
  if (cairo_surface_status (img) != CAIRO_STATUS_SUCCESS)
    return img;
  for (int i = 0; i < LUT_SIZE; i++)
    lut[i] = 0xff000000u | saccade_colormap_rgb24 (map, (double) i / (LUT_SIZE - 1));
  if (L->fp16)
    {
      /* Colouring each of the 65,536 halves once costs less than scaling each of the
       * ~10^6 visible pixels (a log scale is a logarithm per value). */
      lut16 = g_new (guint32, 65536);
      for (guint h = 0; h < 65536; h++)
        lut16[h] = lut_color (lut, saccade_fp16_to_float ((uint16_t) h), scale, vmin, vmax);
    }

  cairo_surface_flush (img);
  data = cairo_image_surface_get_data (img);
  px_stride = cairo_image_surface_get_stride (img);
  for (int i = i0; i < i1; i++)
    {
      guint32 *first = (guint32 *) (data + (gsize) (i - i0) * k * px_stride);
      gsize row = L->tri ? (gsize) i * (i + 1) / 2 : (gsize) i * L->cols;
      int j_end = causal ? MIN (j1, i + 1) : j1; /* masked cells stay transparent */
      int j_start = CLAMP (saccade_lod_band_start (lod, level, i), j0, MAX (j0, j_end));
      for (int j = j0; j < j_start; j++)
        for (int dx = 0; dx < k; dx++)
          first[(j - j0) * k + dx] = 0; /* left of a band: masked */
      for (int j = j_start; j < j_end; j++)
        {
          guint32 px = L->fp16 ? lut16[((const uint16_t *) L->data)[row + j]]
                               : lut_color (lut, ((const float *) L->data)[row + j], scale,
                                            vmin, vmax);
          for (int dx = 0; dx < k; dx++)
            first[(j - j0) * k + dx] = px;
        }
      for (int j = MAX (j0, j_end); j < j1; j++)
        for (int dx = 0; dx < k; dx++)
          first[(j - j0) * k + dx] = 0;
      for (int dy = 1; dy < k; dy++)
        memcpy ((guchar *) first + (gsize) dy * px_stride, first, (gsize) cols * k * 4);
    }
  cairo_surface_mark_dirty (img);
  return img;
}

cairo_surface_t *
saccade_figure_lod_screen_image (const SaccadeLod *lod, int level, double row0, double col0,
                                 double tokens_per_px, int w, int h, SaccadeColormap map,
                                 SaccadeScale scale, double vmin, double vmax)
{
  const SaccadeLodLevel *L = saccade_lod_get_level (lod, level);
  gboolean causal = saccade_lod_is_causal (lod);
  int n_rows = saccade_lod_get_n_rows (lod), n_cols = saccade_lod_get_n_cols (lod);
  g_autofree int *col_of = NULL;   /* (w) the level column under each pixel, -1: none */
  g_autofree guint32 *lut16 = NULL;
  guint32 lut[LUT_SIZE];
  cairo_surface_t *img;
  guchar *data;
  int stride, band0;

  w = MAX (w, 1);
  h = MAX (h, 1);
  img = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, w, h);
  if (cairo_surface_status (img) != CAIRO_STATUS_SUCCESS)
    return img;
  for (int i = 0; i < LUT_SIZE; i++)
    lut[i] = 0xff000000u | saccade_colormap_rgb24 (map, (double) i / (LUT_SIZE - 1));
  if (L->fp16)
    {
      lut16 = g_new (guint32, 65536);
      for (guint v = 0; v < 65536; v++)
        lut16[v] = lut_color (lut, saccade_fp16_to_float ((uint16_t) v), scale, vmin, vmax);
    }
  /* Pass 1: which level column each pixel column samples (its centre's token). */
  col_of = g_new (int, w);
  for (int x = 0; x < w; x++)
    {
      double t = col0 + (x + 0.5) * tokens_per_px;
      col_of[x] = t >= 0 && t < n_cols ? MIN (L->cols - 1, (int) (t / L->block)) : -1;
    }
  /* Pass 2: rows; a pixel row samples one level row, so equal rows are copied. */
  cairo_surface_flush (img);
  data = cairo_image_surface_get_data (img);
  stride = cairo_image_surface_get_stride (img);
  for (int y = 0, prev_i = -2; y < h; y++)
    {
      double t = row0 + (y + 0.5) * tokens_per_px;
      int i = t >= 0 && t < n_rows ? MIN (L->rows - 1, (int) (t / L->block)) : -1;
      guint32 *px = (guint32 *) (data + (gsize) y * stride);
      gsize row;

      if (i == prev_i)
        {
          memcpy (px, data + (gsize) (y - 1) * stride, (gsize) w * 4);
          continue;
        }
      prev_i = i;
      row = i < 0 ? 0 : L->tri ? (gsize) i * (i + 1) / 2 : (gsize) i * L->cols;
      band0 = i < 0 ? 0 : saccade_lod_band_start (lod, level, i);
      for (int x = 0; x < w; x++)
        {
          int j = col_of[x];
          if (i < 0 || j < 0 || (causal && j > i) || j < band0)
            px[x] = 0; /* outside the head, or masked: transparent */
          else if (L->fp16)
            px[x] = lut16[((const uint16_t *) L->data)[row + j]];
          else
            px[x] = lut_color (lut, ((const float *) L->data)[row + j], scale, vmin, vmax);
        }
    }
  cairo_surface_mark_dirty (img);
  return img;
}

double
saccade_figure_pixels_per_unit (cairo_t *cr)
{
  double dx = 1.0, dy = 0.0, sx = 1.0, sy = 1.0;

  /* The CTM's scale, then the surface's device scale (HiDPI), which the CTM leaves out. */
  cairo_user_to_device_distance (cr, &dx, &dy);
  cairo_surface_get_device_scale (cairo_get_target (cr), &sx, &sy);
  return MAX (1e-3, hypot (dx, dy) * sx);
}

gboolean
saccade_figure_target_is_vector (cairo_t *cr)
{
  return cairo_surface_get_type (cairo_get_target (cr)) != CAIRO_SURFACE_TYPE_IMAGE;
}

/* ------------------------------------------------------------------------------------ */
/* Head colours                                                                          */

/* Tableau 10 (matplotlib's tab10, d3's category10 — the colours BertViz uses): ten hues
 * that stay apart for readers with the common colour-vision deficiencies better than a
 * hue wheel does. */
static const guint32 tab10[10] = {
  0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd,
  0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf,
};

void
saccade_figure_head_color (int head, int n_heads, double rgb[3])
{
  if (n_heads <= (int) G_N_ELEMENTS (tab10) && head >= 0)
    {
      guint32 c = tab10[head % G_N_ELEMENTS (tab10)];
      rgb[0] = ((c >> 16) & 0xff) / 255.0;
      rgb[1] = ((c >> 8) & 0xff) / 255.0;
      rgb[2] = (c & 0xff) / 255.0;
      return;
    }
  /* More heads: evenly spaced hues at a fixed, mid lightness (HSV s = 0.75, v = 0.85). */
  {
    double hue = fmod ((double) MAX (head, 0) / MAX (n_heads, 1), 1.0) * 6.0;
    double s = 0.75, v = 0.85, f = hue - floor (hue);
    double p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
    switch ((int) floor (hue) % 6)
      {
      case 0: rgb[0] = v, rgb[1] = t, rgb[2] = p; break;
      case 1: rgb[0] = q, rgb[1] = v, rgb[2] = p; break;
      case 2: rgb[0] = p, rgb[1] = v, rgb[2] = t; break;
      case 3: rgb[0] = p, rgb[1] = q, rgb[2] = v; break;
      case 4: rgb[0] = t, rgb[1] = p, rgb[2] = v; break;
      default: rgb[0] = v, rgb[1] = p, rgb[2] = q; break;
      }
  }
}
