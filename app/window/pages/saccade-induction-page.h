/* saccade-induction-page.h — the Induction page: the induction-head detector (Olsson et al.
 * 2022; app/core/saccade-induction.h) on the window's loaded model, T random tokens repeated
 * twice over S seeds, run in a worker with a progress bar and Cancel, reused from the open
 * database when it holds the same study. It shows the layer × head map of the
 * prefix-matching score, the heads ranked (prefix matching, duplicate token, previous
 * token, copying), and the in-context-learning curve. Clicking a head in the map or the
 * table captures the first seed's sequence as a run (once) and opens the head on it in the
 * Heatmap page.
 *
 * Page actions: page.find-heads, page.cancel. Export: the loss curve or the score map
 * (the toolbar's choice) as a figure, the ranked heads as CSV.
 */
#pragma once

#include "app/window/pages/saccade-page.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_INDUCTION_PAGE (saccade_induction_page_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeInductionPage, saccade_induction_page, SACCADE, INDUCTION_PAGE,
                      SaccadePage)

/* For the e2e test driver: runs the detector with @seq_len and @n_seeds, as the spin
 * buttons and Find Heads do. */
void saccade_induction_page_find (SaccadeInductionPage *self, int seq_len, int n_seeds);

/* For the e2e test driver: opens head (@layer, @head) on the repeated sequence, as a click
 * does. FALSE when there is no result yet. */
gboolean saccade_induction_page_open_head (SaccadeInductionPage *self, int layer, int head);

/* The status line's text ("From study 3 · …"), borrowed: for the e2e test driver. */
const char *saccade_induction_page_get_status (SaccadeInductionPage *self);

G_END_DECLS
