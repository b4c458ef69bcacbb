/* saccade-induction-table.h — the induction study's heads as a ranked, sortable table (the
 * Induction page): rank by prefix matching, layer, head, prefix-matching, duplicate-token,
 * previous-token and copying scores (docs/metrics.md, "Induction heads"), a GtkColumnView
 * whose headers sort. Activating a row (a click, or Enter) emits "head-activated".
 *
 * Signals: "head-activated" (int layer, int head).
 */
#pragma once

#include <gtk/gtk.h>

#include "app/core/saccade-induction.h"
#include "app/window/pages/saccade-head-table.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_INDUCTION_TABLE (saccade_induction_table_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeInductionTable, saccade_induction_table, SACCADE, INDUCTION_TABLE,
                      SaccadeHeadTable)

GtkWidget *saccade_induction_table_new (void);

/* Shows @ind's heads ranked by prefix matching (NULL: none). The rows copy the numbers:
 * @ind is not kept. */
void saccade_induction_table_set_result (SaccadeInductionTable *self,
                                         const SaccadeInduction *ind);

G_END_DECLS
