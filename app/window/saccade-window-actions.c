/* saccade-window-actions.c — the window's actions (win.*), from one GActionEntry table, the
 * file choosers they open, and saccade_window_update_actions(): the one function that
 * decides which win.* actions are enabled. Accelerators are set by the application
 * (saccade-application.c) and listed in the shortcuts window (saccade-shortcuts-window.ui).
 *
 * Stepping and zoom belong to the pages (page.previous-head, page.reset-zoom, ...: each
 * page installs its own and keeps their enabled state, saccade-page.h). Their win.* twins
 * here only pass the activation on to the visible page, so that the window-wide
 * accelerators reach whichever page is shown.
 */
#define G_LOG_DOMAIN "saccade-window"

#include "app/window/saccade-window-private.h"

#include <glib/gi18n.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-model.h"
#include "app/core/saccade-paths.h"
#include "app/window/saccade-file-chooser.h"

/* The actions that call one function of the window, by action name. */
static const struct {
  const char *name;
  void (*call) (SaccadeWindow *self);
} window_calls[] = {
  { "run", saccade_window_run },
  { "cancel", saccade_window_cancel },
  { "export-figure", saccade_window_export_figure },
  { "export-csv", saccade_window_export_csv },
  { "delete-run", saccade_window_runs_delete_selected },
  { "search", saccade_window_runs_focus_search },
};

static void
action_call (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  const char *name = g_action_get_name (G_ACTION (action));

  for (gsize i = 0; i < G_N_ELEMENTS (window_calls); i++)
    if (g_str_equal (name, window_calls[i].name))
      window_calls[i].call (SACCADE_WINDOW (user_data));
}

/* ------------------------------------------------------------------------------------ */
/* File choosers (saccade-file-chooser.h)                                                */

/* Asks for a file to open (@filter_name: the files @patterns match, or All Files) in the
 * folder of @current (may be NULL); calls @chosen with its path. */
static void
choose_file (SaccadeWindow *self, const char *title, const char *filter_name,
             const char *const *patterns, const char *current, SaccadeFileChosenFn chosen)
{
  GtkFileChooser *chooser = saccade_file_chooser_new (GTK_WINDOW (self),
                                                      GTK_FILE_CHOOSER_ACTION_OPEN, title,
                                                      _("_Open"), filter_name, patterns, chosen,
                                                      self, NULL);
  g_autoptr (GtkFileFilter) all = gtk_file_filter_new ();

  gtk_file_filter_set_name (all, _("All Files"));
  gtk_file_filter_add_pattern (all, "*");
  gtk_file_chooser_add_filter (chooser, all);
  saccade_file_chooser_set_folder_of (chooser, current);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

static void
database_chosen (gpointer owner, const char *path, gpointer data)
{
  SaccadeWindow *self = owner;

  g_settings_set_string (self->settings, "last-database", path);
  saccade_window_set_database (self, path);
}

static void
action_open_database (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  SaccadeWindow *self = user_data;
  const char *patterns[] = { "*.sqlite", "*.sqlite3", "*.db", NULL };

  choose_file (self, _("Open Capture Database"), _("Capture Databases"), patterns,
               self->db_path, database_chosen);
}

static void
model_chosen (gpointer owner, const char *path, gpointer data)
{
  SaccadeWindow *self = owner;

  g_settings_set_string (self->settings, "last-model", path);
  saccade_window_set_model_path (self, path);
}

static void
action_open_model (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  SaccadeWindow *self = user_data;
  const char *patterns[] = { "*.gguf", "*.GGUF", NULL };

  choose_file (self, _("Open Model"), _("GGUF Models"), patterns, self->model_path,
               model_chosen);
}

static void
action_use_default_model (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  SaccadeWindow *self = user_data;
  g_settings_set_string (self->settings, "last-model", "");
  saccade_window_set_model_path (self, saccade_model_path (NULL));
}

/* ------------------------------------------------------------------------------------ */

static void
action_toggle_sidebar (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  SaccadeWindow *self = user_data;

  gtk_toggle_button_set_active (self->sidebar_button,
                                !gtk_toggle_button_get_active (self->sidebar_button));
}

static void
action_show_page (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  saccade_window_show_page (SACCADE_WINDOW (user_data), g_variant_get_string (param, NULL));
}

/* What a click on a head of the Model page asks for: that head, in the Heatmap page, with
 * the keyboard on its figure (so the arrow keys step on from there). */
void
saccade_window_open_head (SaccadeWindow *self, int layer, int head)
{
  SaccadePage *heatmap = saccade_window_get_page (self, "heatmap");

  saccade_window_select_head (self, layer, head);
  saccade_window_show_page (self, "heatmap");
  if (heatmap != NULL && saccade_page_get_figure (heatmap) != NULL)
    gtk_widget_grab_focus (saccade_page_get_figure (heatmap));
}

static void
action_show_head (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  int layer = 0, head = 0;

  g_variant_get (param, "(ii)", &layer, &head);
  saccade_window_open_head (SACCADE_WINDOW (user_data), layer, head);
}

/* What the Induction page asks for after capturing its sequence as run @id: that run,
 * selected in the sidebar (the list is read again: the run is new), and the head in the
 * Heatmap page once the run has loaded (saccade-window-runs.c, run_loaded). */
static void
action_show_run_head (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  SaccadeWindow *self = user_data;
  gint64 run_id = 0;
  int layer = 0, head = 0;

  g_variant_get (param, "(xii)", &run_id, &layer, &head);
  if (self->run != NULL && self->run->id == run_id)
    {
      saccade_window_open_head (self, layer, head);
      return;
    }
  self->open_after_load = run_id;
  self->open_layer = layer;
  self->open_head = head;
  saccade_window_runs_reload (self, run_id);
}

/* What the Ablation page's patching map asks for on Shift+click: head (layer, head) of the
 * run shown beside the same head of run @other (the corrupted run), on the Compare page. */
static void
action_compare_head (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  SaccadeWindow *self = user_data;
  SaccadePage *compare = saccade_window_get_page (self, "compare");
  g_autofree char *pair = NULL;
  gint64 other = 0;
  int layer = 0, head = 0;

  g_variant_get (param, "(iix)", &layer, &head, &other);
  if (compare == NULL)
    return;
  saccade_window_show_page (self, "compare");
  pair = g_strdup_printf ("%d.%d %d.%d %" G_GINT64_FORMAT, layer, head, layer, head, other);
  gtk_widget_activate_action (GTK_WIDGET (compare), "page.pair", "s", pair);
}

/* win.NAME -> the visible page's page.NAME (a page without it ignores the accelerator). */
static void
action_to_page (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  SaccadeWindow *self = user_data;
  g_autofree char *name = g_strconcat ("page.", g_action_get_name (G_ACTION (action)), NULL);

  gtk_widget_activate_action_variant (GTK_WIDGET (saccade_window_get_visible_page (self)), name,
                                      param);
}

static const GActionEntry win_entries[] = {
  { .name = "run", .activate = action_call },
  { .name = "cancel", .activate = action_call },
  { .name = "open-database", .activate = action_open_database },
  { .name = "open-model", .activate = action_open_model },
  { .name = "use-default-model", .activate = action_use_default_model },
  { .name = "export-figure", .activate = action_call },
  { .name = "export-csv", .activate = action_call },
  { .name = "delete-run", .activate = action_call },
  { .name = "search", .activate = action_call },
  { .name = "toggle-sidebar", .activate = action_toggle_sidebar },
  { .name = "show-page", .activate = action_show_page, .parameter_type = "s" },
  { .name = "show-head", .activate = action_show_head, .parameter_type = "(ii)" },
  { .name = "show-run-head", .activate = action_show_run_head, .parameter_type = "(xii)" },
  { .name = "compare-head", .activate = action_compare_head, .parameter_type = "(iix)" },
  /* The visible page's page.* actions of the same name. */
  { .name = "previous-head", .activate = action_to_page },
  { .name = "next-head", .activate = action_to_page },
  { .name = "previous-layer", .activate = action_to_page },
  { .name = "next-layer", .activate = action_to_page },
  { .name = "reset-zoom", .activate = action_to_page },
};

static void
set_enabled (SaccadeWindow *self, const char *name, gboolean enabled)
{
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), name);

  if (action != NULL)
    g_simple_action_set_enabled (G_SIMPLE_ACTION (action), enabled);
}

void
saccade_window_update_actions (SaccadeWindow *self)
{
  gboolean capturing = saccade_window_is_capturing (self);
  gboolean waiting = capturing || self->queued_text != NULL || self->large_run_dialog != NULL;
  gboolean has_run = self->run != NULL;
  gboolean selected = saccade_window_runs_selected_id (self) > 0;

  const struct {
    const char *name;
    gboolean enabled;
  } states[] = {
    { "run", !waiting },
    { "cancel", waiting },
    { "open-database", !capturing },
    { "open-model", !waiting },
    { "use-default-model", !waiting },
    { "export-figure", has_run },
    { "export-csv", has_run },
    /* A delete during a capture would wait for the capture's write lock. */
    { "delete-run", selected && !capturing && self->deleting == 0 },
    { "show-page", has_run },
    { "show-head", has_run },
    { "compare-head", has_run },
    { "previous-head", has_run },
    { "next-head", has_run },
    { "previous-layer", has_run },
    { "next-layer", has_run },
    { "reset-zoom", has_run },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (states); i++)
    set_enabled (self, states[i].name, states[i].enabled);

  gtk_stack_set_visible_child_name (self->run_stack, waiting ? "cancel" : "run");
}

void
saccade_window_actions_init (SaccadeWindow *self)
{
  g_action_map_add_action_entries (G_ACTION_MAP (self), win_entries, G_N_ELEMENTS (win_entries),
                                   self);
  saccade_window_update_actions (self);
}
