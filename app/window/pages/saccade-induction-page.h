/* saccade-induction-page.h — the Induction page: the induction-head detector (Olsson et al.
 * 2022; app/core/saccade-induction.h) on the window's loaded model, T random tokens repeated
 * twice over S seeds, run in a worker with a progress bar and Cancel, reused from the open
 * database when it holds the same study. It shows the layer × head map of the
 * prefix-matching score, the heads ranked (prefix matching, duplicate token, previous
 * token, copying), and the in-context-learning curve. Clicking a head in the map or the
 * table captures the first seed's sequence as a run (once) and opens the head on it in the
 * Heatmap page.
 *
 * Page actions: page.find-heads (Find Heads, with the spin buttons' values), page.find
 * ((ii): sequence length, seeds: sets the spin buttons and runs, as Find Heads does),
 * page.open-head ((ii): layer, head: what a click on the head does; refused with a warning
 * without a result), page.cancel. Property (read-only, notified): "status" (the status
 * line). Export: the loss curve or the score map (the toolbar's choice) as a figure, the
 * ranked heads as CSV.
 */
#pragma once

#include "app/window/pages/saccade-page.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_INDUCTION_PAGE (saccade_induction_page_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeInductionPage, saccade_induction_page, SACCADE, INDUCTION_PAGE,
                      SaccadePage)

G_END_DECLS
