/* saccade-ablation-table.h — the head sweep's heads ranked (the Ablation page): rank by the
 * size of the chosen effect (saccade_ablation_rank_heads), the head, the four effects
 * (docs/metrics.md, "Ablation studies") and whether the top-1 changed, in a GtkColumnView.
 * Activating a row (a click, or Enter) emits "head-activated".
 *
 * Signals: "head-activated" (int layer, int head).
 */
#pragma once

#include <gtk/gtk.h>

#include "app/core/saccade-ablation.h"
#include "app/window/pages/saccade-head-table.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_ABLATION_TABLE (saccade_ablation_table_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeAblationTable, saccade_ablation_table, SACCADE, ABLATION_TABLE,
                      SaccadeHeadTable)

/* Shows @r's heads ranked by |@metric| (NULL: none). The rows copy the numbers: @r is not
 * kept. */
void saccade_ablation_table_set_result (SaccadeAblationTable *self, const ScHeadSweepResult *r,
                                        SaccadeAblationMetric metric);

/* Row @row's head (for the e2e test driver); FALSE past the last row. */
gboolean saccade_ablation_table_get_row (SaccadeAblationTable *self, guint row, int *layer,
                                         int *head);

G_END_DECLS
