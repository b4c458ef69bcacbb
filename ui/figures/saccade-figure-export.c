/* saccade-figure-export.c — figures to PNG, SVG and PDF (saccade-figure.h).
 *
 * The same renderers the widgets use draw onto a Cairo image, SVG or PDF surface sized to
 * the figure's labels; the bytes are collected in memory and written with
 * g_file_set_contents(), which writes beside the target and renames, so a failed export
 * never leaves a truncated file behind. PNGs are drawn at 2 pixels per unit (144 dpi) so
 * that they stay sharp in print and on high-density screens, or at the resolution the
 * export options ask, and say so in a pHYs chunk. The options (SaccadeFigureExportOptions)
 * scale the figure to a printed width with its fonts at a printed size; SVG keeps the text
 * as <text> elements (saccade-figure-svg-text.c), PDF keeps it as text by itself.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <string.h>
#include <zlib.h>

/* PNG pixels per user unit (point). */
#define PNG_SCALE 2


gboolean
saccade_figure_format_from_path (const char *path, SaccadeFigureFormat *out, GError **error)
{
  const char *dot = path != NULL ? strrchr (path, '.') : NULL;

  if (dot != NULL && strchr (dot, '/') == NULL)
    {
      if (g_ascii_strcasecmp (dot, ".png") == 0)
        *out = SACCADE_FIGURE_FORMAT_PNG;
      else if (g_ascii_strcasecmp (dot, ".svg") == 0)
        *out = SACCADE_FIGURE_FORMAT_SVG;
      else if (g_ascii_strcasecmp (dot, ".pdf") == 0)
        *out = SACCADE_FIGURE_FORMAT_PDF;
      else
        dot = NULL;
      if (dot != NULL)
        return TRUE;
    }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
               _("Cannot tell the figure format of “%s”: name it .png, .svg or .pdf"),
               path != NULL ? path : "");
  return FALSE;
}

static cairo_status_t
append_bytes (void *closure, const unsigned char *data, unsigned int length)
{
  g_byte_array_append (closure, data, length);
  return CAIRO_STATUS_SUCCESS;
}

static gboolean
cairo_ok (cairo_status_t status, const char *path, GError **error)
{
  if (status == CAIRO_STATUS_SUCCESS)
    return TRUE;
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Could not draw “%s”: %s"), path,
               cairo_status_to_string (status));
  return FALSE;
}

/* Inserts a pHYs chunk (pixels per metre, both axes) after the IHDR chunk of the PNG in
 * @png, so that viewers and layout programs print it at @dpi. */
static void
png_set_dpi (GByteArray *png, double dpi)
{
  /* The signature (8 bytes), then IHDR: length, type, 13 bytes of data, CRC. */
  const guint ihdr_end = 8 + 4 + 4 + 13 + 4;
  guint32 ppm = (guint32) (dpi / 0.0254 + 0.5);
  guint8 chunk[4 + 4 + 9 + 4] = { 0, 0, 0, 9, 'p', 'H', 'Y', 's' };
  guint32 crc;

  if (png->len < ihdr_end || memcmp (png->data + 12, "IHDR", 4) != 0)
    return;
  for (int i = 0; i < 2; i++)
    {
      chunk[8 + 4 * i] = (guint8) (ppm >> 24);
      chunk[9 + 4 * i] = (guint8) (ppm >> 16);
      chunk[10 + 4 * i] = (guint8) (ppm >> 8);
      chunk[11 + 4 * i] = (guint8) ppm;
    }
  chunk[16] = 1; /* the unit: metre */
  crc = (guint32) crc32 (crc32 (0L, Z_NULL, 0), chunk + 4, 4 + 9);
  chunk[17] = (guint8) (crc >> 24);
  chunk[18] = (guint8) (crc >> 16);
  chunk[19] = (guint8) (crc >> 8);
  chunk[20] = (guint8) crc;
  g_byte_array_set_size (png, png->len + sizeof chunk);
  memmove (png->data + ihdr_end + sizeof chunk, png->data + ihdr_end,
           png->len - sizeof chunk - ihdr_end);
  memcpy (png->data + ihdr_end, chunk, sizeof chunk);
}

/* The rows [*top, *top + *height) of a @lw x @lh layout of @f that hold its drawing (its
 * ink, without the background) and a margin of half the base font, found by drawing it
 * once onto a recording surface. */
static void
content_rows (const void *f, SaccadeFigureDrawFunc draw, const SaccadeFigureExportOptions *opts,
              double lw, double lh, double *top, double *height)
{
  cairo_surface_t *rec = cairo_recording_surface_create (CAIRO_CONTENT_COLOR_ALPHA, NULL);
  cairo_t *cr = cairo_create (rec);
  const double margin = 0.5 * SACCADE_FIGURE_BASE_FONT;
  double x0, y0, iw, ih;

  saccade_figure_export_attach (cr, opts, NULL);
  saccade_figure_export_set_measuring (cr);
  draw (cr, f, lw, lh);
  cairo_destroy (cr);
  cairo_recording_surface_ink_extents (rec, &x0, &y0, &iw, &ih);
  cairo_surface_destroy (rec);
  *top = 0;
  *height = lh;
  if (ih <= 0)
    return;
  *top = MAX (0.0, y0 - margin);
  *height = MIN (lh, y0 + ih + margin) - *top;
}

gboolean
saccade_figure_export_drawn (const void *f, const char *title, SaccadeFigureDrawFunc draw,
                             SaccadeFigureSizeFunc size, const char *path,
                             const SaccadeFigureExportOptions *opts, GError **error)
{
  g_autoptr (GByteArray) bytes = g_byte_array_new ();
  g_autoptr (GString) svg_text = NULL;
  SaccadeFigureFormat format;
  cairo_surface_t *surface;
  cairo_status_t status;
  /* lw x lay_h: the layout drawn; its rows top .. top + lh are the page */
  double w, h, lw, lh, lay_h, k = 1.0, dpi = 72.0 * PNG_SCALE, top = 0;
  cairo_t *cr;

  if (!saccade_figure_format_from_path (path, &format, error))
    return FALSE;
  if (opts != NULL && !saccade_figure_export_options_check (opts, error))
    return FALSE;
  size (f, &w, &h);
  /* The layout (lw x lh) is drawn scaled by k onto the page (w x h points): the base font
   * of 10 user units prints at the asked size, and the page is as wide as asked. */
  lw = w;
  lh = h;
  lay_h = h;
  if (opts != NULL)
    {
      if (opts->font_size > 0)
        k = opts->font_size / SACCADE_FIGURE_BASE_FONT;
      if (opts->width_mm > 0)
        {
          double page_w = opts->width_mm / 25.4 * 72.0;
          lw = page_w / k;
          /* Wider than its natural size, the figure keeps its aspect ratio; narrower, it is
           * laid out at its natural height (its text does not shrink with it, and a grid
           * of 18 layers squeezed to one column in proportion would leave no room for
           * it), and the empty bands above and below what it draws are cut off. */
          if (lw > w)
            lh = lay_h = h * lw / w;
          else
            content_rows (f, draw, opts, lw, lay_h, &top, &lh);
        }
      if (opts->dpi > 0)
        dpi = opts->dpi;
      w = lw * k;
      h = lh * k;
    }
  switch (format)
    {
    case SACCADE_FIGURE_FORMAT_PNG:
      {
        double px = dpi / 72.0;
        surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, (int) (w * px + 0.5),
                                              (int) (h * px + 0.5));
        cairo_surface_set_device_scale (surface, px, px);
      }
      break;
    case SACCADE_FIGURE_FORMAT_SVG:
      surface = cairo_svg_surface_create_for_stream (append_bytes, bytes, w, h);
      svg_text = g_string_new (NULL);
      break;
    case SACCADE_FIGURE_FORMAT_PDF:
    default:
      surface = cairo_pdf_surface_create_for_stream (append_bytes, bytes, w, h);
      cairo_pdf_surface_set_metadata (surface, CAIRO_PDF_METADATA_CREATOR, "Saccade");
      if (title != NULL)
        cairo_pdf_surface_set_metadata (surface, CAIRO_PDF_METADATA_TITLE, title);
      break;
    }
  if (!cairo_ok (cairo_surface_status (surface), path, error))
    {
      cairo_surface_destroy (surface);
      return FALSE;
    }
  cr = cairo_create (surface);
  saccade_figure_export_attach (cr, opts, svg_text);
  cairo_scale (cr, k, k);
  cairo_translate (cr, 0, -top);
  draw (cr, f, lw, lay_h);
  status = cairo_status (cr);
  cairo_destroy (cr);
  if (status == CAIRO_STATUS_SUCCESS && format == SACCADE_FIGURE_FORMAT_PNG)
    status = cairo_surface_write_to_png_stream (surface, append_bytes, bytes);
  cairo_surface_finish (surface); /* vector surfaces write their trailer here */
  if (status == CAIRO_STATUS_SUCCESS)
    status = cairo_surface_status (surface);
  cairo_surface_destroy (surface);
  if (!cairo_ok (status, path, error))
    return FALSE;
  if (format == SACCADE_FIGURE_FORMAT_PNG)
    png_set_dpi (bytes, dpi);
  else if (svg_text != NULL && !saccade_figure_svg_text_merge (bytes, svg_text))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   _("Could not draw “%s”: Cairo's SVG has no closing </svg>"), path);
      return FALSE;
    }
  return g_file_set_contents (path, (const char *) bytes->data, (gssize) bytes->len, error);
}

gboolean
saccade_figure_refuse_empty (gboolean empty, GError **error)
{
  if (empty)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                         _("There is nothing to export: the figure has no data"));
  return empty;
}

static void
draw_heatmap (cairo_t *cr, const void *f, double w, double h)
{
  saccade_figure_heatmap_draw (cr, f, w, h);
}

static void
size_heatmap (const void *f, double *w, double *h)
{
  saccade_figure_heatmap_natural_size (f, w, h);
}

gboolean
saccade_figure_export_heatmap (const SaccadeHeatmapFigure *f, const char *path,
                               const SaccadeFigureExportOptions *opts, GError **error)
{
  if (saccade_figure_refuse_empty (f->values == NULL || f->n_rows <= 0 || f->n_cols <= 0, error))
    return FALSE;
  {
    g_auto (GStrv) row = saccade_figure_export_labels (opts, f->row_labels, f->n_rows);
    g_auto (GStrv) col = saccade_figure_export_labels (opts, f->col_labels, f->n_cols);
    SaccadeHeatmapFigure g = *f;

    g.title = saccade_figure_export_title (opts, f->title);
    if (row != NULL)
      g.row_labels = (const char *const *) row;
    if (col != NULL)
      g.col_labels = (const char *const *) col;
    return saccade_figure_export_drawn (&g, g.title, draw_heatmap, size_heatmap, path, opts,
                                        error);
  }
}

/* A pyramid's figure and the range to write: what the writer's draw and size take. */
typedef struct {
  const SaccadeHeatmapLodFigure *f;
  SaccadeTokenRange range;
} LodExport;

static void
draw_heatmap_lod (cairo_t *cr, const void *data, double w, double h)
{
  const LodExport *e = data;
  saccade_figure_heatmap_lod_draw (cr, e->f, &e->range, w, h);
}

static void
size_heatmap_lod (const void *data, double *w, double *h)
{
  const LodExport *e = data;
  saccade_figure_heatmap_lod_natural_size (e->f, &e->range, w, h);
}

gboolean
saccade_figure_export_heatmap_lod (const SaccadeHeatmapLodFigure *f,
                                   const SaccadeTokenRange *range, const char *path,
                                   const SaccadeFigureExportOptions *opts, GError **error)
{
  g_auto (GStrv) rows = NULL;
  g_auto (GStrv) cols = NULL;
  SaccadeHeatmapLodFigure g = *f;
  LodExport e;
  int nr, nc;

  if (saccade_figure_refuse_empty (f->lod == NULL, error))
    return FALSE;
  nr = saccade_lod_get_n_rows (f->lod);
  nc = saccade_lod_get_n_cols (f->lod);
  rows = saccade_figure_export_labels (opts, f->row_labels, nr);
  cols = saccade_figure_export_labels (opts, f->col_labels, nc);
  g.title = saccade_figure_export_title (opts, f->title);
  if (rows != NULL)
    g.row_labels = (const char *const *) rows;
  if (cols != NULL)
    g.col_labels = (const char *const *) cols;
  e = (LodExport) { &g, range != NULL ? *range : (SaccadeTokenRange) { 0, nr, 0, nc } };
  if (e.range.q0 < 0 || e.range.q0 >= e.range.q1 || e.range.q1 > nr || e.range.k0 < 0
      || e.range.k0 >= e.range.k1 || e.range.k1 > nc)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   /* Translators: queries q0:q1 and keys k0:k1 (half-open), as saccade export --range writes them */
                   _("Cannot export the range %d:%d,%d:%d of a head of %d × %d tokens"),
                   e.range.q0, e.range.q1, e.range.k0, e.range.k1, nr, nc);
      return FALSE;
    }
  return saccade_figure_export_drawn (&e, g.title, draw_heatmap_lod, size_heatmap_lod, path,
                                      opts, error);
}

static void
draw_grid (cairo_t *cr, const void *f, double w, double h)
{
  saccade_figure_grid_draw (cr, f, w, h);
}

static void
size_grid (const void *f, double *w, double *h)
{
  saccade_figure_grid_natural_size (f, w, h);
}

gboolean
saccade_figure_export_grid (const SaccadeGridFigure *f, const char *path,
                            const SaccadeFigureExportOptions *opts, GError **error)
{
  if (saccade_figure_refuse_empty ((f->heads == NULL
                                   && (f->overviews == NULL || f->overview_size <= 0))
                                  || f->n_layers <= 0 || f->n_heads <= 0 || f->n <= 0
                                  || f->n_kv_heads <= 0 || f->n_heads % f->n_kv_heads != 0,
                                  error))
    return FALSE;
  {
    SaccadeGridFigure g = *f;

    g.title = saccade_figure_export_title (opts, f->title);
    return saccade_figure_export_drawn (&g, g.title, draw_grid, size_grid, path, opts, error);
  }
}

static void
draw_lines (cairo_t *cr, const void *f, double w, double h)
{
  saccade_figure_lines_draw (cr, f, w, h);
}

static void
size_lines (const void *f, double *w, double *h)
{
  saccade_figure_lines_natural_size (f, w, h);
}

gboolean
saccade_figure_export_lines (const SaccadeLinesFigure *f, const char *path,
                             const SaccadeFigureExportOptions *opts, GError **error)
{
  /* Chosen links may show no head (every head toggled off): the tokens are still drawn. */
  if (saccade_figure_refuse_empty (f->n <= 0 || (f->links == NULL
                                                 && (f->heads == NULL || f->n_heads <= 0)),
                                   error))
    return FALSE;
  {
    g_auto (GStrv) labels = saccade_figure_export_labels (opts, f->labels, f->n);
    SaccadeLinesFigure g = *f;

    g.title = saccade_figure_export_title (opts, f->title);
    if (labels != NULL)
      g.labels = (const char *const *) labels;
    return saccade_figure_export_drawn (&g, g.title, draw_lines, size_lines, path, opts, error);
  }
}

static void
draw_profile (cairo_t *cr, const void *f, double w, double h)
{
  saccade_figure_profile_draw (cr, f, w, h);
}

static void
size_profile (const void *f, double *w, double *h)
{
  saccade_figure_profile_natural_size (f, w, h);
}

gboolean
saccade_figure_export_profile (const SaccadeProfileFigure *f, const char *path,
                               const SaccadeFigureExportOptions *opts, GError **error)
{
  if (saccade_figure_refuse_empty (f->values == NULL || f->n_layers <= 0 || f->n_heads <= 0, error))
    return FALSE;
  {
    SaccadeProfileFigure g = *f;

    g.title = saccade_figure_export_title (opts, f->title);
    return saccade_figure_export_drawn (&g, g.title, draw_profile, size_profile, path, opts,
                                        error);
  }
}

static void
draw_bars (cairo_t *cr, const void *f, double w, double h)
{
  saccade_figure_bars_draw (cr, f, w, h);
}

static void
size_bars (const void *f, double *w, double *h)
{
  saccade_figure_bars_natural_size (f, w, h);
}

gboolean
saccade_figure_export_bars (const SaccadeBarsFigure *f, const char *path,
                            const SaccadeFigureExportOptions *opts, GError **error)
{
  if (saccade_figure_refuse_empty (f->values == NULL || f->n <= 0, error))
    return FALSE;
  {
    g_auto (GStrv) labels = saccade_figure_export_labels (opts, f->labels, f->n);
    SaccadeBarsFigure g = *f;

    g.title = saccade_figure_export_title (opts, f->title);
    if (labels != NULL)
      g.labels = (const char *const *) labels;
    return saccade_figure_export_drawn (&g, g.title, draw_bars, size_bars, path, opts, error);
  }
}

static void
draw_distance (cairo_t *cr, const void *f, double w, double h)
{
  saccade_figure_distance_draw (cr, f, w, h);
}

static void
size_distance (const void *f, double *w, double *h)
{
  saccade_figure_distance_natural_size (f, w, h);
}

gboolean
saccade_figure_export_distance (const SaccadeDistanceFigure *f, const char *path,
                                const SaccadeFigureExportOptions *opts, GError **error)
{
  if (saccade_figure_refuse_empty (f->values == NULL || f->n <= 0, error))
    return FALSE;
  {
    SaccadeDistanceFigure g = *f;

    g.title = saccade_figure_export_title (opts, f->title);
    return saccade_figure_export_drawn (&g, g.title, draw_distance, size_distance, path, opts,
                                        error);
  }
}

static void
draw_loss (cairo_t *cr, const void *f, double w, double h)
{
  saccade_figure_loss_draw (cr, f, w, h);
}

static void
size_loss (const void *f, double *w, double *h)
{
  saccade_figure_loss_natural_size (f, w, h);
}

gboolean
saccade_figure_export_loss (const SaccadeLossFigure *f, const char *path,
                            const SaccadeFigureExportOptions *opts, GError **error)
{
  if (saccade_figure_refuse_empty (f->values == NULL || f->n < 2, error))
    return FALSE;
  {
    SaccadeLossFigure g = *f;

    g.title = saccade_figure_export_title (opts, f->title);
    return saccade_figure_export_drawn (&g, g.title, draw_loss, size_loss, path, opts, error);
  }
}

static void
draw_erasure (cairo_t *cr, const void *f, double w, double h)
{
  saccade_figure_erasure_draw (cr, f, w, h);
}

static void
size_erasure (const void *f, double *w, double *h)
{
  saccade_figure_erasure_natural_size (f, w, h);
}

gboolean
saccade_figure_export_erasure (const SaccadeErasureFigure *f, const char *path,
                               const SaccadeFigureExportOptions *opts, GError **error)
{
  if (saccade_figure_refuse_empty (f->series == NULL || f->n_series < 1 || f->n_points < 2, error))
    return FALSE;
  {
    SaccadeErasureFigure g = *f;

    g.title = saccade_figure_export_title (opts, f->title);
    return saccade_figure_export_drawn (&g, g.title, draw_erasure, size_erasure, path, opts,
                                        error);
  }
}
