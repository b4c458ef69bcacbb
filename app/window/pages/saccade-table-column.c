/* saccade-table-column.c — a sortable column of a page's number table
 * (saccade-table-column.h).
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-table-column.h"

GtkColumnViewColumn *
saccade_table_add_column (GtkColumnView *view, int col, const char *title, GCallback setup,
                          GCallback bind, GCompareDataFunc compare, gboolean expand)
{
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
  GtkCustomSorter *sorter = gtk_custom_sorter_new (compare, GINT_TO_POINTER (col), NULL);
  GtkColumnViewColumn *c;

  g_signal_connect (factory, "setup", setup, GINT_TO_POINTER (col));
  g_signal_connect (factory, "bind", bind, GINT_TO_POINTER (col));
  c = gtk_column_view_column_new (title, factory);
  gtk_column_view_column_set_sorter (c, GTK_SORTER (sorter));
  gtk_column_view_column_set_resizable (c, TRUE);
  gtk_column_view_column_set_expand (c, expand);
  gtk_column_view_append_column (view, c);
  g_object_unref (sorter);
  g_object_unref (c);
  return c;
}
