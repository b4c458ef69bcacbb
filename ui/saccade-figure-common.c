/* stub */
#define G_LOG_DOMAIN "saccade-ui"
#include "saccade-figure.h"
void
saccade_figure_style_init (SaccadeFigureStyle *style)
{
  *style = (SaccadeFigureStyle) { { 0, 0, 0, 1 }, { 1, 1, 1, 1 }, 10, NULL };
}
void
saccade_figure_head_color (int head, int n_heads, double rgb[3])
{
  rgb[0] = rgb[1] = rgb[2] = 0;
}
