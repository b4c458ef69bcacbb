/* saccade-head-table.h — SaccadeHeadTable, the base of the pages' tables whose rows are
 * heads (the Model page's heads table, the induction table, the ablation ranking): a
 * sortable GtkColumnView over a GListStore of row objects in a scrolled window that fills
 * the widget, one click activating a row, and the "head-activated" signal (int layer,
 * int head) for the row's head. A subclass makes its rows, adds its columns
 * (saccade-table-column.h) and tells each row its head. Main thread only.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SACCADE_TYPE_HEAD_TABLE (saccade_head_table_get_type ())
G_DECLARE_DERIVABLE_TYPE (SaccadeHeadTable, saccade_head_table, SACCADE, HEAD_TABLE, GtkWidget)

struct _SaccadeHeadTableClass
{
  GtkWidgetClass parent_class;
};

/* For a subclass making its rows: @row (a row object) shows head (@layer, @head), which a
 * click on it activates. */
void saccade_head_table_row_set_head (gpointer row, int layer, int head);

/* For a subclass's init: the rows are objects of @row_type; returns the view to add
 * columns to (borrowed). Once. */
GtkColumnView *saccade_head_table_setup (SaccadeHeadTable *self, GType row_type);
/* The rows in the order shown (as the headers sort them), borrowed. */
GListModel *saccade_head_table_get_shown (SaccadeHeadTable *self);
/* Replaces every row with @rows (@n objects of the row type; the table takes references). */
void saccade_head_table_set_rows (SaccadeHeadTable *self, gpointer *rows, guint n);
/* The head in row @position as the table is sorted now; FALSE past the end. */
gboolean saccade_head_table_get_head (SaccadeHeadTable *self, guint position, int *layer,
                                      int *head);

G_END_DECLS
