/* saccade-heads-table.h — every head's statistics as a sortable table (the Model page's
 * "Table" view): one row per head (layer, head, KV head, the engine's nine head metrics,
 * and the last row's top key with its token), a GtkColumnView whose column headers sort.
 * Activating a row (a click, or Enter) emits "head-activated", as a click on a thumbnail
 * of the grid does.
 *
 * Signals: "head-activated" (int layer, int head).
 */
#pragma once

#include <gtk/gtk.h>

#include "app/core/saccade-run.h"
#include "app/window/pages/saccade-head-table.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_HEADS_TABLE (saccade_heads_table_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeHeadsTable, saccade_heads_table, SACCADE, HEADS_TABLE,
                      SaccadeHeadTable)

GtkWidget *saccade_heads_table_new (void);

/* Shows @run's heads (NULL: none); keeps a reference. */
void saccade_heads_table_set_run (SaccadeHeadsTable *self, SaccadeRun *run);

/* Sorts by the column @column_id ("layer", "head", "kv", a metric id such as "entropy",
 * "top-key"), ascending or descending, as a click on its header does. FALSE for an
 * unknown id. */
gboolean saccade_heads_table_sort (SaccadeHeadsTable *self, const char *column_id,
                                   gboolean descending);

/* The head shown in row @row of the table as it is sorted now (what a reader of the table
 * sees at that row); FALSE past the end. */
gboolean saccade_heads_table_get_row (SaccadeHeadsTable *self, guint row, int *layer,
                                      int *head);

G_END_DECLS
