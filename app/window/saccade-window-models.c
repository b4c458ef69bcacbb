/* saccade-window-models.c — the model menu's list of the models fetched on this machine
 * (app/core/saccade-models.h, as `saccade models` prints it) and win.use-model, whose state
 * is the model file in use, so the menu marks it.
 *
 * The list is read again each time the menu opens (a header read per file, milliseconds),
 * so a model fetched while the window is open is there the next time.
 */
#define G_LOG_DOMAIN "saccade"

#include <glib/gi18n.h>

#include "app/core/saccade-models.h"
#include "app/window/saccade-window-private.h"

/* Replaces the menu's first section, the fetched models, by the files found now. */
static void
fill_menu (GtkMenuButton *button, gpointer user_data)
{
  SaccadeWindow *self = user_data;
  GMenu *menu = G_MENU (gtk_menu_button_get_menu_model (button));
  g_autoptr (GMenu) section = g_menu_new ();
  g_autoptr (GPtrArray) files = saccade_model_files ();

  for (guint i = 0; i < files->len; i++)
    {
      const SaccadeModelFile *f = g_ptr_array_index (files, i);
      g_autoptr (GMenuItem) item = NULL;

      if (f->name == NULL)
        continue; /* a header Saccade refuses: `saccade models` says why */
      item = g_menu_item_new (f->name, NULL);
      g_menu_item_set_action_and_target_value (item, "win.use-model",
                                               g_variant_new_string (f->path));
      g_menu_append_item (section, item);
    }
  if (self->models_listed)
    g_menu_remove (menu, 0);
  /* Translators: the model menu's heading over the model files found in data/models/ (and
   * the user's saccade/models folder), each named by its readable name. */
  g_menu_insert_section (menu, 0, _("Fetched Models"), G_MENU_MODEL (section));
  self->models_listed = TRUE;
}

static void
action_use_model (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  SaccadeWindow *self = user_data;
  const char *path = g_variant_get_string (param, NULL);

  if (g_strcmp0 (path, self->model_path) == 0 && self->model_error == NULL)
    return; /* already the one in use */
  g_settings_set_string (self->settings, "last-model", path);
  saccade_window_set_model_path (self, path);
}

void
saccade_window_models_init (SaccadeWindow *self)
{
  const GActionEntry entries[] = {
    { .name = "use-model", .activate = action_use_model, .parameter_type = "s", .state = "''" },
  };

  g_action_map_add_action_entries (G_ACTION_MAP (self), entries, G_N_ELEMENTS (entries), self);
  fill_menu (self->model_button, self);
  gtk_menu_button_set_create_popup_func (self->model_button, fill_menu, self, NULL);
}

void
saccade_window_models_sync (SaccadeWindow *self)
{
  GAction *action = g_action_map_lookup_action (G_ACTION_MAP (self), "use-model");

  if (action != NULL)
    g_simple_action_set_state (G_SIMPLE_ACTION (action),
                               g_variant_new_string (self->model_path != NULL ? self->model_path
                                                                              : ""));
}
