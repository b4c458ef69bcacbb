/* saccade-window-runs.c — the sidebar of stored runs: listing the open database's runs
 * (newest first, again whenever saccade-window-watch.c sees another process commit),
 * filtering them by the search text, loading the selected run for the pages (and going
 * back to the run shown when a load is refused), and deleting a run after asking.
 *
 * The list, the load and the delete are jobs in worker threads (saccade-run.c); a job that
 * finishes after the user moved on (another database, another run) is ignored.
 */
#define G_LOG_DOMAIN "saccade-window"

#include "app/window/saccade-window-private.h"

#include <glib/gi18n.h>

/* ------------------------------------------------------------------------------------ */
/* Rows                                                                                  */

static void confirm_delete (SaccadeWindow *self, gint64 run_id, const char *title);

static void
row_delete_clicked (GtkButton *button, SaccadeWindow *self)
{
  SaccadeRunItem *item = g_object_get_data (G_OBJECT (button), "saccade-run-item");

  confirm_delete (self, saccade_run_item_get_id (item), saccade_run_item_get_title (item));
}

static GtkWidget *
create_row (gpointer object, gpointer user_data)
{
  SaccadeRunItem *item = object;
  SaccadeWindow *self = user_data;
  GtkWidget *row = gtk_list_box_row_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *labels = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  GtkWidget *title = gtk_label_new (saccade_run_item_get_title (item));
  GtkWidget *subtitle = gtk_label_new (NULL);
  GtkWidget *del = gtk_button_new_from_icon_name ("user-trash-symbolic");
  g_autofree char *sub = NULL;

  /* "SmolLM2 135M Instruct · 12 tok · 0.4 s · run 17" — the id is what the CLI verbs take. */
  sub = g_strdup_printf (_("%s · run %lld"), saccade_run_item_get_subtitle (item),
                         (long long) saccade_run_item_get_id (item));
  gtk_label_set_text (GTK_LABEL (subtitle), sub);
  gtk_label_set_ellipsize (GTK_LABEL (title), PANGO_ELLIPSIZE_END);
  gtk_label_set_xalign (GTK_LABEL (title), 0);
  gtk_label_set_ellipsize (GTK_LABEL (subtitle), PANGO_ELLIPSIZE_END);
  gtk_label_set_xalign (GTK_LABEL (subtitle), 0);
  gtk_widget_add_css_class (subtitle, "dim-label");
  gtk_widget_add_css_class (subtitle, "saccade-run-subtitle");
  gtk_widget_set_hexpand (labels, TRUE);
  gtk_widget_set_tooltip_text (labels, saccade_run_item_get_tooltip (item));
  gtk_box_append (GTK_BOX (labels), title);
  gtk_box_append (GTK_BOX (labels), subtitle);

  gtk_widget_set_valign (del, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (del, "flat");
  gtk_widget_set_tooltip_text (del, _("Delete Run"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (del), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Delete Run"), -1);
  g_object_set_data_full (G_OBJECT (del), "saccade-run-item", g_object_ref (item),
                          g_object_unref);
  g_signal_connect (del, "clicked", G_CALLBACK (row_delete_clicked), self);

  gtk_box_append (GTK_BOX (box), labels);
  gtk_box_append (GTK_BOX (box), del);
  gtk_widget_set_margin_top (box, 3);
  gtk_widget_set_margin_bottom (box, 3);
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), box);
  g_object_set_data_full (G_OBJECT (row), "saccade-run-item", g_object_ref (item),
                          g_object_unref);
  return row;
}

static SaccadeRunItem *
row_item (GtkListBoxRow *row)
{
  return row != NULL ? g_object_get_data (G_OBJECT (row), "saccade-run-item") : NULL;
}

static gboolean
filter_item (gpointer object, gpointer user_data)
{
  SaccadeWindow *self = user_data;

  return saccade_run_item_matches (SACCADE_RUN_ITEM (object), self->search_needle);
}

static void
search_changed (SaccadeWindow *self)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->search_entry));

  g_clear_pointer (&self->search_needle, g_free);
  if (text != NULL && *text != '\0')
    self->search_needle = g_utf8_casefold (text, -1);
  gtk_filter_changed (self->runs_filter, GTK_FILTER_CHANGE_DIFFERENT);
}

void
saccade_window_runs_focus_search (SaccadeWindow *self)
{
  adw_flap_set_reveal_flap (self->flap, TRUE);
  gtk_widget_grab_focus (GTK_WIDGET (self->search_entry));
}

/* ------------------------------------------------------------------------------------ */
/* Loading the selected run                                                              */

static void
run_loaded (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SaccadeWindow *self = SACCADE_WINDOW (source);
  g_autoptr (GCancellable) mine = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeRun) run = saccade_run_load_finish (result, &error);

  if (mine != self->run_cancellable || g_cancellable_is_cancelled (mine))
    return; /* superseded by a later selection, or the window is closing */
  g_clear_object (&self->run_cancellable);
  self->loading_run_id = 0;
  if (run == NULL)
    {
      saccade_window_show_error (self, _("Could not load the run"), error);
      /* The sidebar must say what the pages show: back to the run shown, or to none. */
      saccade_window_runs_select (self, self->run != NULL ? self->run->id : 0);
      saccade_window_update_actions (self);
      return;
    }
  saccade_window_set_run (self, run);
  if (self->open_after_load != 0 && self->open_after_load == run->id)
    {
      self->open_after_load = 0;
      saccade_window_open_head (self, self->open_layer, self->open_head);
    }
}

static void
load_run (SaccadeWindow *self, gint64 run_id)
{
  if (self->run != NULL && self->run->id == run_id && self->run_cancellable == NULL)
    return;
  if (self->run_cancellable != NULL)
    {
      if (self->loading_run_id == run_id)
        return;
      g_cancellable_cancel (self->run_cancellable);
      g_clear_object (&self->run_cancellable);
    }
  self->run_cancellable = g_cancellable_new ();
  self->loading_run_id = run_id;
  saccade_run_load_async (self, self->db_path, run_id, self->run_cancellable, run_loaded,
                          g_object_ref (self->run_cancellable));
  saccade_window_update_actions (self);
}

static void
row_selected (SaccadeWindow *self, GtkListBoxRow *row)
{
  SaccadeRunItem *item = row_item (row);

  if (item != NULL)
    load_run (self, saccade_run_item_get_id (item));
}

gint64
saccade_window_runs_selected_id (SaccadeWindow *self)
{
  SaccadeRunItem *item = row_item (gtk_list_box_get_selected_row (self->runs_list));

  return item != NULL ? saccade_run_item_get_id (item) : 0;
}

void
saccade_window_runs_select (SaccadeWindow *self, gint64 run_id)
{
  GListModel *shown = G_LIST_MODEL (self->runs_shown);
  guint i, n = g_list_model_get_n_items (shown);

  if (run_id == 0)
    {
      gtk_list_box_unselect_all (self->runs_list);
      return;
    }

  /* A run the search hides cannot be selected: clear the search first. */
  if (self->search_needle != NULL)
    {
      gboolean hidden = TRUE;
      for (i = 0; i < n && hidden; i++)
        {
          g_autoptr (SaccadeRunItem) item = g_list_model_get_item (shown, i);
          hidden = saccade_run_item_get_id (item) != run_id;
        }
      if (hidden)
        gtk_editable_set_text (GTK_EDITABLE (self->search_entry), "");
      n = g_list_model_get_n_items (shown);
    }
  for (i = 0; i < n; i++)
    {
      g_autoptr (SaccadeRunItem) item = g_list_model_get_item (shown, i);
      if (saccade_run_item_get_id (item) == run_id)
        {
          /* Selected, not focused: after a run the sentence entry keeps the keyboard. */
          gtk_list_box_select_row (self->runs_list,
                                   gtk_list_box_get_row_at_index (self->runs_list, (int) i));
          return;
        }
    }
}

/* ------------------------------------------------------------------------------------ */
/* Listing                                                                               */

typedef struct {
  SaccadeWindow *self;
  char *db_path;  /* the database asked about: a reply for another one is stale */
} ListCall;

static gboolean
same_runs (GListModel *a, GListModel *b)
{
  guint n = g_list_model_get_n_items (a);

  if (n != g_list_model_get_n_items (b))
    return FALSE;
  for (guint i = 0; i < n; i++)
    {
      g_autoptr (SaccadeRunItem) x = g_list_model_get_item (a, i);
      g_autoptr (SaccadeRunItem) y = g_list_model_get_item (b, i);
      if (saccade_run_item_get_id (x) != saccade_run_item_get_id (y))
        return FALSE;
    }
  return TRUE;
}

static void
runs_listed (GObject *source, GAsyncResult *result, gpointer user_data)
{
  ListCall *call = user_data;
  SaccadeWindow *self = call->self;
  g_autoptr (GError) error = NULL;
  g_autoptr (GListStore) list = saccade_run_list_finish (result, &error);
  gboolean stale = g_strcmp0 (call->db_path, self->db_path) != 0;
  gint64 select = self->select_after_list;
  guint n, i;

  g_free (call->db_path);
  g_free (call);
  self->listing--;
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) || stale)
    return;
  if (list == NULL)
    {
      g_list_store_remove_all (self->runs);
      saccade_window_show_error (self, _("Could not open the database"), error);
      saccade_window_set_status (self, error->message);
      saccade_window_update_actions (self);
      return;
    }

  self->select_after_list = 0;
  n = g_list_model_get_n_items (G_LIST_MODEL (list));
  /* Runs are immutable once stored: the same ids are the same list, and keeping the rows
   * keeps the sidebar's scroll position and selection (the watch lists again for every
   * commit to the database, studies included). */
  if (!same_runs (G_LIST_MODEL (self->runs), G_LIST_MODEL (list)))
    {
      g_autoptr (GPtrArray) items = g_ptr_array_new_with_free_func (g_object_unref);
      for (i = 0; i < n; i++)
        g_ptr_array_add (items, g_list_model_get_item (G_LIST_MODEL (list), i));
      g_list_store_splice (self->runs, 0, g_list_model_get_n_items (G_LIST_MODEL (self->runs)),
                           items->pdata, items->len);
    }

  /* Select the run just captured, else keep the one shown, else show the newest. */
  if (select == 0 && self->run != NULL)
    select = self->run->id;
  if (select == 0 && n > 0)
    {
      g_autoptr (SaccadeRunItem) newest = g_list_model_get_item (G_LIST_MODEL (self->runs), 0);
      select = saccade_run_item_get_id (newest);
    }
  if (select != 0)
    saccade_window_runs_select (self, select);
  saccade_window_update_actions (self);
  saccade_window_maybe_run_sample (self, n);
}

void
saccade_window_runs_reload (SaccadeWindow *self, gint64 select_id)
{
  ListCall *call = g_new0 (ListCall, 1);

  /* What this list will include, so that the watch lists again only for later commits. */
  saccade_window_watch_sync (self);
  call->self = self;
  call->db_path = g_strdup (self->db_path);
  if (select_id != 0)
    self->select_after_list = select_id;
  self->listing++;
  saccade_run_list_async (self, self->db_path, self->cancellable, runs_listed, call);
  saccade_window_update_actions (self);
}

/* ------------------------------------------------------------------------------------ */
/* Deleting                                                                              */

static void
run_deleted (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SaccadeWindow *self = SACCADE_WINDOW (source);
  gint64 run_id = GPOINTER_TO_SIZE (user_data);
  g_autoptr (GError) error = NULL;
  g_autofree char *msg = NULL;

  self->deleting--;
  if (!saccade_run_delete_finish (result, &error))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return; /* the window closed */
      saccade_window_show_error (self, _("Could not delete the run"), error);
      saccade_window_update_actions (self);
      return;
    }
  msg = g_strdup_printf (_("Run %lld deleted"), (long long) run_id);
  saccade_window_toast (self, msg);
  if (self->run != NULL && self->run->id == run_id)
    saccade_window_set_run (self, NULL);
  saccade_window_runs_reload (self, 0);
}

static void
delete_response (AdwMessageDialog *dialog, const char *response, SaccadeWindow *self)
{
  gint64 run_id = (gint64) GPOINTER_TO_SIZE (g_object_get_data (G_OBJECT (dialog), "run-id"));

  if (g_strcmp0 (response, "delete") != 0)
    return;
  self->deleting++;
  saccade_run_delete_async (self, self->db_path, run_id, self->cancellable, run_deleted,
                            GSIZE_TO_POINTER ((gsize) run_id));
  saccade_window_update_actions (self);
}

static void
confirm_delete (SaccadeWindow *self, gint64 run_id, const char *title)
{
  g_autofree char *heading = NULL, *body = NULL;
  GtkWidget *dialog;

  heading = g_strdup_printf (_("Delete Run %lld?"), (long long) run_id);
  body = g_strdup_printf (_("“%s” and every attention head stored with it will be removed "
                            "from the database. This cannot be undone."), title);
  dialog = adw_message_dialog_new (GTK_WINDOW (self), heading, body);
  adw_message_dialog_add_responses (ADW_MESSAGE_DIALOG (dialog), "cancel", _("_Cancel"),
                                    "delete", _("_Delete"), NULL);
  adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (dialog), "delete",
                                              ADW_RESPONSE_DESTRUCTIVE);
  adw_message_dialog_set_default_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  adw_message_dialog_set_close_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  g_object_set_data (G_OBJECT (dialog), "run-id", GSIZE_TO_POINTER ((gsize) run_id));
  g_signal_connect (dialog, "response", G_CALLBACK (delete_response), self);
  gtk_window_present (GTK_WINDOW (dialog));
}

void
saccade_window_runs_delete_selected (SaccadeWindow *self)
{
  SaccadeRunItem *item = row_item (gtk_list_box_get_selected_row (self->runs_list));

  if (item != NULL)
    confirm_delete (self, saccade_run_item_get_id (item), saccade_run_item_get_title (item));
}

/* ------------------------------------------------------------------------------------ */

static gboolean
list_key_pressed (GtkEventControllerKey *controller, guint keyval, guint keycode,
                  GdkModifierType state, SaccadeWindow *self)
{
  if ((keyval == GDK_KEY_Delete || keyval == GDK_KEY_KP_Delete)
      && (state & GDK_MODIFIER_MASK) == 0)
    {
      saccade_window_runs_delete_selected (self);
      return TRUE;
    }
  return FALSE;
}

void
saccade_window_runs_init (SaccadeWindow *self)
{
  GtkWidget *placeholder = gtk_label_new (_("No runs yet"));
  GtkEventController *keys = gtk_event_controller_key_new ();

  gtk_widget_add_css_class (placeholder, "dim-label");
  gtk_widget_set_margin_top (placeholder, 24);
  gtk_list_box_set_placeholder (self->runs_list, placeholder);
  /* A list box bound to a model ignores filter functions: filter the model instead. */
  self->runs_filter = GTK_FILTER (gtk_custom_filter_new (filter_item, self, NULL));
  self->runs_shown = gtk_filter_list_model_new (G_LIST_MODEL (g_object_ref (self->runs)),
                                                GTK_FILTER (g_object_ref (self->runs_filter)));
  gtk_list_box_bind_model (self->runs_list, G_LIST_MODEL (self->runs_shown), create_row, self,
                           NULL);
  g_signal_connect_swapped (self->runs_list, "row-selected", G_CALLBACK (row_selected), self);
  g_signal_connect_swapped (self->search_entry, "search-changed", G_CALLBACK (search_changed),
                            self);
  g_signal_connect (keys, "key-pressed", G_CALLBACK (list_key_pressed), self);
  gtk_widget_add_controller (GTK_WIDGET (self->runs_list), keys);
  gtk_search_entry_set_key_capture_widget (self->search_entry, NULL);
}

GListModel *
saccade_window_get_runs (SaccadeWindow *self)
{
  g_return_val_if_fail (SACCADE_IS_WINDOW (self), NULL);
  return G_LIST_MODEL (self->runs);
}

GListModel *
saccade_window_get_runs_shown (SaccadeWindow *self)
{
  g_return_val_if_fail (SACCADE_IS_WINDOW (self), NULL);
  return G_LIST_MODEL (self->runs_shown);
}

void
saccade_window_set_search (SaccadeWindow *self, const char *text)
{
  g_return_if_fail (SACCADE_IS_WINDOW (self));
  gtk_editable_set_text (GTK_EDITABLE (self->search_entry), text != NULL ? text : "");
}
