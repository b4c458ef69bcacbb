/* stub */
#define G_LOG_DOMAIN "saccade-ui"
#include "saccade-figure.h"
struct _SaccadeGridThumbs { int dummy; };
SaccadeGridThumbs *
saccade_grid_thumbs_new (const SaccadeGridFigure *f)
{
  return g_new0 (SaccadeGridThumbs, 1);
}
void
saccade_grid_thumbs_free (SaccadeGridThumbs *thumbs)
{
  g_free (thumbs);
}
void
saccade_figure_grid_draw_full (cairo_t *cr, const SaccadeGridFigure *f, SaccadeGridThumbs *thumbs,
                               const SaccadeFigureStyle *style, int sel_layer, int sel_head,
                               double width, double height, SaccadeGridGeometry *geom)
{
}
void
saccade_figure_grid_draw (cairo_t *cr, const SaccadeGridFigure *f, double width, double height)
{
  saccade_figure_grid_draw_full (cr, f, NULL, NULL, -1, -1, width, height, NULL);
}
gboolean
saccade_grid_geometry_head_at (const SaccadeGridGeometry *geom, double x, double y, int *layer,
                               int *head)
{
  return FALSE;
}
void
saccade_grid_geometry_head_rect (const SaccadeGridGeometry *geom, int layer, int head,
                                 double rect[4])
{
  rect[0] = rect[1] = rect[2] = rect[3] = 0;
}
