/* saccade-rollout-page.h — the Rollout page: attention rollout (Abnar & Zuidema 2020) of the
 * run shown as a token × token map, and how much each input token reaches the last
 * position — by rollout or by attention flow — as bars. Both are computed in a worker.
 *
 * A page of its own rather than a view of Heatmap or Lines: rollout is a figure of the
 * whole model (every layer, every head), so the layer and head pickers those pages are
 * built around would mean nothing on it.
 */
#pragma once

#include "app/window/pages/saccade-page.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_ROLLOUT_PAGE (saccade_rollout_page_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeRolloutPage, saccade_rollout_page, SACCADE, ROLLOUT_PAGE,
                      SaccadePage)

G_END_DECLS
