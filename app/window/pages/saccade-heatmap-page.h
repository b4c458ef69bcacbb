/* saccade-heatmap-page.h — the Heatmap page: one head of the run as a matrix: the layer and
 * head pickers, the colour map and the linear/log scale (kept in GSettings), zoom
 * (page.reset-zoom).
 * Properties (read-only, notified): "scale" (the scale the scale control shows pressed,
 * "linear" or "log"), "log-offered" (whether "Log" can be chosen: FALSE for a diverging
 * colour map, always drawn linear).
 * A SaccadePage (saccade-page.h): the window knows it through the base class only.
 */
#pragma once

#include "app/window/pages/saccade-page.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_HEATMAP_PAGE (saccade_heatmap_page_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeHeatmapPage, saccade_heatmap_page, SACCADE, HEATMAP_PAGE, SaccadePage)

G_END_DECLS
