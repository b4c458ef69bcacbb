/* saccade-heatmap-page.h — the Heatmap page: one head of the run as a matrix: the layer and
 * head pickers, the colour map and the linear/log scale (kept in GSettings), zoom
 * (page.reset-zoom).
 * A SaccadePage (saccade-page.h): the window knows it through the base class only.
 */
#pragma once

#include "app/window/pages/saccade-page.h"
#include "ui/figures/saccade-colormap.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_HEATMAP_PAGE (saccade_heatmap_page_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeHeatmapPage, saccade_heatmap_page, SACCADE, HEATMAP_PAGE, SaccadePage)

/* What the scale control shows: the scale pressed (*@shown) and whether "Log" can be
 * chosen (*@log_offered: FALSE for a diverging colour map, always drawn linear). For the
 * test driver; either pointer may be NULL. */
void saccade_heatmap_page_get_scale_control (SaccadeHeatmapPage *self, SaccadeScale *shown,
                                             gboolean *log_offered);

G_END_DECLS
