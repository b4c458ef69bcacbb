/* saccade-head-table.c — the pages' head tables' base (see saccade-head-table.h).
 *
 * The view's model is a single selection over a GtkSortListModel of the rows whose sorter
 * is the column view's own: a click on a header sorts by that column, a second reverses,
 * and the view goes back to its top, so that the rows the new order puts first are the
 * ones in sight (the list would otherwise keep the row that was on top in view, wherever
 * the sort moved it).
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-head-table.h"

typedef struct
{
  GtkWidget *scrolled;          /* owned: the only child */
  GtkColumnView *view;          /* the scrolled window's child */
  GListStore *rows;             /* owned */
  GtkSortListModel *shown;      /* the view's model's */
  guint top_idle;               /* going back to the top after a sort, once laid out */
} SaccadeHeadTablePrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (SaccadeHeadTable, saccade_head_table, GTK_TYPE_WIDGET)

enum { SIGNAL_HEAD_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* A row's head, layer * 65536 + head + 1 (0: none), as its qdata. */
static GQuark
row_head_quark (void)
{
  return g_quark_from_static_string ("saccade-head-table-row-head");
}

void
saccade_head_table_row_set_head (gpointer row, int layer, int head)
{
  g_return_if_fail (G_IS_OBJECT (row) && layer >= 0 && head >= 0 && head < 65536);
  g_object_set_qdata (row, row_head_quark (),
                      GSIZE_TO_POINTER ((gsize) layer * 65536 + (gsize) head + 1));
}

gboolean
saccade_head_table_get_head (SaccadeHeadTable *self, guint position, int *layer, int *head)
{
  SaccadeHeadTablePrivate *priv = saccade_head_table_get_instance_private (self);
  g_autoptr (GObject) row = NULL;
  gsize place;

  g_return_val_if_fail (SACCADE_IS_HEAD_TABLE (self), FALSE);
  if (priv->shown == NULL
      || (row = g_list_model_get_item (G_LIST_MODEL (priv->shown), position)) == NULL
      || (place = GPOINTER_TO_SIZE (g_object_get_qdata (row, row_head_quark ()))) == 0)
    return FALSE;
  *layer = (int) ((place - 1) / 65536);
  *head = (int) ((place - 1) % 65536);
  return TRUE;
}

static gboolean
scroll_to_top (gpointer data)
{
  SaccadeHeadTable *self = data;
  SaccadeHeadTablePrivate *priv = saccade_head_table_get_instance_private (self);
  GtkAdjustment *v = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (priv->scrolled));

  priv->top_idle = 0;
  gtk_adjustment_set_value (v, gtk_adjustment_get_lower (v));
  return G_SOURCE_REMOVE;
}

/* The sort order changed: back to the top, once the view has taken the new order in (at
 * once, the list keeps the row that was on top anchored and ignores the move). */
static void
on_sorted (GtkSorter *sorter, GtkSorterChange change, SaccadeHeadTable *self)
{
  SaccadeHeadTablePrivate *priv = saccade_head_table_get_instance_private (self);

  if (priv->scrolled != NULL && priv->top_idle == 0)
    priv->top_idle = g_idle_add (scroll_to_top, self);
}

/* A row activated (a click, Enter): "head-activated" with its head. */
static void
on_activate (GtkColumnView *view, guint position, SaccadeHeadTable *self)
{
  int layer, head;

  if (saccade_head_table_get_head (self, position, &layer, &head))
    g_signal_emit (self, signals[SIGNAL_HEAD_ACTIVATED], 0, layer, head);
}

GtkColumnView *
saccade_head_table_setup (SaccadeHeadTable *self, GType row_type)
{
  SaccadeHeadTablePrivate *priv = saccade_head_table_get_instance_private (self);
  GtkSingleSelection *selection;

  g_return_val_if_fail (SACCADE_IS_HEAD_TABLE (self) && priv->view == NULL, NULL);
  priv->rows = g_list_store_new (row_type);
  priv->view = GTK_COLUMN_VIEW (gtk_column_view_new (NULL));
  priv->shown = gtk_sort_list_model_new (g_object_ref (G_LIST_MODEL (priv->rows)),
                                         g_object_ref (gtk_column_view_get_sorter (priv->view)));
  selection = gtk_single_selection_new (G_LIST_MODEL (priv->shown));
  gtk_single_selection_set_autoselect (selection, FALSE);
  gtk_column_view_set_model (priv->view, GTK_SELECTION_MODEL (selection));
  g_object_unref (selection);
  gtk_column_view_set_single_click_activate (priv->view, TRUE);
  gtk_column_view_set_show_column_separators (priv->view, TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (priv->view), "data-table");
  g_signal_connect (priv->view, "activate", G_CALLBACK (on_activate), self);

  priv->scrolled = gtk_scrolled_window_new ();
  /* Real scroll bars, not overlay ones that show only under the pointer: on a narrow window
   * the right-hand columns are past the edge, and the horizontal bar says so (issue 30). */
  gtk_scrolled_window_set_overlay_scrolling (GTK_SCROLLED_WINDOW (priv->scrolled), FALSE);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (priv->scrolled), GTK_WIDGET (priv->view));
  g_signal_connect_object (gtk_column_view_get_sorter (priv->view), "changed",
                           G_CALLBACK (on_sorted), self, 0);
  gtk_widget_set_parent (priv->scrolled, GTK_WIDGET (self));
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);
  return priv->view;
}

GListModel *
saccade_head_table_get_shown (SaccadeHeadTable *self)
{
  SaccadeHeadTablePrivate *priv = saccade_head_table_get_instance_private (self);

  g_return_val_if_fail (SACCADE_IS_HEAD_TABLE (self), NULL);
  return G_LIST_MODEL (priv->shown);
}

void
saccade_head_table_set_rows (SaccadeHeadTable *self, gpointer *rows, guint n)
{
  SaccadeHeadTablePrivate *priv = saccade_head_table_get_instance_private (self);

  g_return_if_fail (SACCADE_IS_HEAD_TABLE (self) && priv->rows != NULL);
  g_list_store_splice (priv->rows, 0, g_list_model_get_n_items (G_LIST_MODEL (priv->rows)),
                       rows, n);
}

static void
saccade_head_table_dispose (GObject *object)
{
  SaccadeHeadTablePrivate *priv =
    saccade_head_table_get_instance_private (SACCADE_HEAD_TABLE (object));

  g_clear_handle_id (&priv->top_idle, g_source_remove);
  g_clear_pointer (&priv->scrolled, gtk_widget_unparent);
  priv->view = NULL;
  priv->shown = NULL;
  g_clear_object (&priv->rows);
  G_OBJECT_CLASS (saccade_head_table_parent_class)->dispose (object);
}

static void
saccade_head_table_class_init (SaccadeHeadTableClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = saccade_head_table_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
  signals[SIGNAL_HEAD_ACTIVATED] =
    g_signal_new ("head-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                  NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
}

static void
saccade_head_table_init (SaccadeHeadTable *self)
{
}
