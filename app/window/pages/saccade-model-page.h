/* saccade-model-page.h — the Model page: every head of the run as a thumbnail, query heads
 * grouped by their KV head, coloured by a metric (kept in GSettings); a click on a head opens
 * it in the Heatmap page (win.show-head).
 * A SaccadePage (saccade-page.h): the window knows it through the base class only.
 */
#pragma once

#include "app/window/pages/saccade-page.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_MODEL_PAGE (saccade_model_page_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeModelPage, saccade_model_page, SACCADE, MODEL_PAGE, SaccadePage)

G_END_DECLS
