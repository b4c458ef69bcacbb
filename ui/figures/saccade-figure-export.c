/* saccade-figure-export.c — figures to PNG, SVG and PDF (saccade-figure.h).
 *
 * The same renderers the widgets use draw onto a Cairo image, SVG or PDF surface sized to
 * the figure's labels; the bytes are collected in memory and written with
 * g_file_set_contents(), which writes beside the target and renames, so a failed export
 * never leaves a truncated file behind. PNGs are drawn at 2 pixels per unit (about 144
 * dpi) so that they stay sharp in print and on high-density screens.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-figure-private.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <string.h>

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

gboolean
saccade_figure_export_drawn (const void *f, const char *title, SaccadeFigureDrawFunc draw,
                             SaccadeFigureSizeFunc size, const char *path, GError **error)
{
  g_autoptr (GByteArray) bytes = g_byte_array_new ();
  SaccadeFigureFormat format;
  cairo_surface_t *surface;
  cairo_status_t status;
  double w, h;
  cairo_t *cr;

  if (!saccade_figure_format_from_path (path, &format, error))
    return FALSE;
  size (f, &w, &h);
  switch (format)
    {
    case SACCADE_FIGURE_FORMAT_PNG:
      surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, (int) (w * PNG_SCALE),
                                            (int) (h * PNG_SCALE));
      cairo_surface_set_device_scale (surface, PNG_SCALE, PNG_SCALE);
      break;
    case SACCADE_FIGURE_FORMAT_SVG:
      surface = cairo_svg_surface_create_for_stream (append_bytes, bytes, w, h);
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
  draw (cr, f, w, h);
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
saccade_figure_export_heatmap (const SaccadeHeatmapFigure *f, const char *path, GError **error)
{
  if (saccade_figure_refuse_empty (f->values == NULL || f->n_rows <= 0 || f->n_cols <= 0, error))
    return FALSE;
  return saccade_figure_export_drawn (f, f->title, draw_heatmap, size_heatmap, path, error);
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
                                   GError **error)
{
  LodExport e;
  int nr, nc;

  if (saccade_figure_refuse_empty (f->lod == NULL, error))
    return FALSE;
  nr = saccade_lod_get_n_rows (f->lod);
  nc = saccade_lod_get_n_cols (f->lod);
  e = (LodExport) { f, range != NULL ? *range : (SaccadeTokenRange) { 0, nr, 0, nc } };
  if (e.range.q0 < 0 || e.range.q0 >= e.range.q1 || e.range.q1 > nr || e.range.k0 < 0
      || e.range.k0 >= e.range.k1 || e.range.k1 > nc)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   /* Translators: queries q0:q1 and keys k0:k1 (half-open), as saccade export --range writes them */
                   _("Cannot export the range %d:%d,%d:%d of a head of %d × %d tokens"),
                   e.range.q0, e.range.q1, e.range.k0, e.range.k1, nr, nc);
      return FALSE;
    }
  return saccade_figure_export_drawn (&e, f->title, draw_heatmap_lod, size_heatmap_lod, path,
                                      error);
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
saccade_figure_export_grid (const SaccadeGridFigure *f, const char *path, GError **error)
{
  if (saccade_figure_refuse_empty ((f->heads == NULL
                                   && (f->overviews == NULL || f->overview_size <= 0))
                                  || f->n_layers <= 0 || f->n_heads <= 0 || f->n <= 0
                                  || f->n_kv_heads <= 0 || f->n_heads % f->n_kv_heads != 0,
                                  error))
    return FALSE;
  return saccade_figure_export_drawn (f, f->title, draw_grid, size_grid, path, error);
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
saccade_figure_export_lines (const SaccadeLinesFigure *f, const char *path, GError **error)
{
  /* Chosen links may show no head (every head toggled off): the tokens are still drawn. */
  if (saccade_figure_refuse_empty (f->n <= 0 || (f->links == NULL
                                                 && (f->heads == NULL || f->n_heads <= 0)),
                                   error))
    return FALSE;
  return saccade_figure_export_drawn (f, f->title, draw_lines, size_lines, path, error);
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
saccade_figure_export_profile (const SaccadeProfileFigure *f, const char *path, GError **error)
{
  if (saccade_figure_refuse_empty (f->values == NULL || f->n_layers <= 0 || f->n_heads <= 0, error))
    return FALSE;
  return saccade_figure_export_drawn (f, f->title, draw_profile, size_profile, path, error);
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
saccade_figure_export_bars (const SaccadeBarsFigure *f, const char *path, GError **error)
{
  if (saccade_figure_refuse_empty (f->values == NULL || f->n <= 0, error))
    return FALSE;
  return saccade_figure_export_drawn (f, f->title, draw_bars, size_bars, path, error);
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
                                GError **error)
{
  if (saccade_figure_refuse_empty (f->values == NULL || f->n <= 0, error))
    return FALSE;
  return saccade_figure_export_drawn (f, f->title, draw_distance, size_distance, path, error);
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
saccade_figure_export_loss (const SaccadeLossFigure *f, const char *path, GError **error)
{
  if (saccade_figure_refuse_empty (f->values == NULL || f->n < 2, error))
    return FALSE;
  return saccade_figure_export_drawn (f, f->title, draw_loss, size_loss, path, error);
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
saccade_figure_export_erasure (const SaccadeErasureFigure *f, const char *path, GError **error)
{
  if (saccade_figure_refuse_empty (f->series == NULL || f->n_series < 1 || f->n_points < 2, error))
    return FALSE;
  return saccade_figure_export_drawn (f, f->title, draw_erasure, size_erasure, path, error);
}
