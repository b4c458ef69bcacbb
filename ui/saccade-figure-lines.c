/* stub */
#define G_LOG_DOMAIN "saccade-ui"
#include "saccade-figure.h"
void
saccade_figure_lines_draw_full (cairo_t *cr, const SaccadeLinesFigure *f,
                                const SaccadeFigureStyle *style, gboolean highlight_is_key,
                                double width, double height, SaccadeLinesGeometry *geom)
{
}
void
saccade_figure_lines_draw (cairo_t *cr, const SaccadeLinesFigure *f, double width, double height)
{
  saccade_figure_lines_draw_full (cr, f, NULL, FALSE, width, height, NULL);
}
gboolean
saccade_lines_geometry_token_at (const SaccadeLinesGeometry *geom, double x, double y, int *token,
                                 gboolean *is_key)
{
  return FALSE;
}
