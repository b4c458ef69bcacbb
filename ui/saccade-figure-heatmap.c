/* stub */
#define G_LOG_DOMAIN "saccade-ui"
#include "saccade-figure.h"
void
saccade_figure_heatmap_draw_full (cairo_t *cr, const SaccadeHeatmapFigure *f,
                                  const SaccadeCellRange *range, const SaccadeFigureStyle *style,
                                  double width, double height, SaccadeHeatmapGeometry *geom)
{
}
void
saccade_figure_heatmap_draw (cairo_t *cr, const SaccadeHeatmapFigure *f, double width,
                             double height)
{
  saccade_figure_heatmap_draw_full (cr, f, NULL, NULL, width, height, NULL);
}
gboolean
saccade_heatmap_geometry_cell_at (const SaccadeHeatmapGeometry *geom, double x, double y,
                                  int *row, int *col)
{
  return FALSE;
}
void
saccade_figure_heatmap_range (const SaccadeHeatmapFigure *f, double *vmin, double *vmax)
{
  *vmin = 0;
  *vmax = 1;
}
