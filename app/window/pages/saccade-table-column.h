/* saccade-table-column.h — one sortable, resizable column of a page's number table (the
 * heads table, the induction table): a cell factory whose setup and bind get the column's
 * index as user data, and a GtkCustomSorter over the same index, so that clicking the
 * header sorts the rows by that column. The table is a SaccadeHeadTable (saccade-head-table.h).
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Appends column @col titled @title to @view. @setup and @bind are
 * GtkSignalListItemFactory handlers and @compare a GtkCustomSorter function, each given
 * GINT_TO_POINTER (@col). Returns the column (borrowed: @view holds it). */
GtkColumnViewColumn *saccade_table_add_column (GtkColumnView *view, int col, const char *title,
                                               GCallback setup, GCallback bind,
                                               GCompareDataFunc compare, gboolean expand);

/* For a column's sorter: @x against @y ascending, NaN after every number (a header's
 * second click reverses this: NaN first descending — acceptable and stable). */
int saccade_table_compare_values (double x, double y);
/* For a factory's setup: @item's child becomes a numeric label, right-aligned, or
 * left-aligned and (@ellipsize) ellipsized for text. */
void saccade_table_label_cell (GtkListItem *item, gboolean left, gboolean ellipsize);
/* The same for a small fixed table in a GtkGrid: a label with @text at (@col, @row), the
 * first column left-aligned and the others right-aligned, dimmed for a @heading and in
 * tabular figures otherwise. */
void saccade_table_grid_cell (GtkGrid *grid, int col, int row, const char *text,
                              gboolean heading);

G_END_DECLS
