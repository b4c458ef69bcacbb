/* saccade-table-column.c — a sortable column of a page's number table
 * (saccade-table-column.h).
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-table-column.h"

#include <math.h>

int
saccade_table_compare_values (double x, double y)
{
  if (isnan (x) || isnan (y))
    return isnan (x) - isnan (y);
  return x < y ? -1 : x > y ? 1 : 0;
}

void
saccade_table_label_cell (GtkListItem *item, gboolean left, gboolean ellipsize)
{
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (label), left ? 0.0f : 1.0f);
  gtk_widget_add_css_class (label, "numeric");
  if (ellipsize)
    gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  gtk_list_item_set_child (item, label);
}

void
saccade_table_grid_cell (GtkGrid *grid, int col, int row, const char *text, gboolean heading)
{
  GtkWidget *l = gtk_label_new (text);

  gtk_label_set_xalign (GTK_LABEL (l), col == 0 ? 0.0f : 1.0f);
  gtk_widget_add_css_class (l, heading ? "dim-label" : "numeric");
  gtk_grid_attach (grid, l, col, row, 1, 1);
}

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
