/* stub */
#define G_LOG_DOMAIN "saccade-ui"
#include "saccade-figure.h"
gboolean
saccade_figure_format_from_path (const char *path, SaccadeFigureFormat *out, GError **error)
{
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "not yet");
  return FALSE;
}
gboolean
saccade_figure_export_heatmap (const SaccadeHeatmapFigure *f, const char *path, GError **error)
{
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "not yet");
  return FALSE;
}
gboolean
saccade_figure_export_grid (const SaccadeGridFigure *f, const char *path, GError **error)
{
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "not yet");
  return FALSE;
}
gboolean
saccade_figure_export_lines (const SaccadeLinesFigure *f, const char *path, GError **error)
{
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "not yet");
  return FALSE;
}
