/* saccade-application.c — the desktop application (AdwApplication, io.github.saccade.Saccade):
 * its options (--db, --model), settings, app-wide actions from a GActionEntry table (quit,
 * about, preferences), every accelerator of the app and its windows, and the main window.
 *
 * AdwApplication loads style.css and gtk/help-overlay.ui (the shortcuts window, Ctrl+?)
 * from the resource base path /io/github/saccade/Saccade by itself.
 */
#define G_LOG_DOMAIN "saccade-app"

#include "app/window/saccade-application.h"

#include <glib/gi18n.h>

#include "app/window/saccade-preferences-window.h"
#include "app/window/saccade-window.h"
#include "ui/widgets/saccade-background.h"

/* How much lower than the window a worker runs: at nice 10 the kernel weighs a worker at a
 * tenth of the main thread (sched(7)), so the main loop keeps most of a core however many
 * workers a selection starts. */
#define BACKGROUND_NICE 10

struct _SaccadeApplication
{
  AdwApplication parent_instance;

  GSettings *settings;
  char *db_opt;      /* --db */
  char *model_opt;   /* --model */
  int exit_status;
};

G_DEFINE_FINAL_TYPE (SaccadeApplication, saccade_application, ADW_TYPE_APPLICATION)

/* ------------------------------------------------------------------------------------ */
/* Settings                                                                              */

/* The installed schema, else the one meson compiled into the build folder (an uninstalled
 * build run as build/app/saccade, as the README says). NULL with @error if neither. */
static GSettings *
settings_new (GError **error)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr (GSettingsSchemaSource) build_source = NULL;
  g_autoptr (GSettingsSchema) schema = NULL;

  if (source != NULL)
    schema = g_settings_schema_source_lookup (source, SACCADE_APP_ID, TRUE);
  if (schema == NULL)
    {
      build_source = g_settings_schema_source_new_from_directory (SACCADE_BUILD_SCHEMA_DIR,
                                                                  source, FALSE, NULL);
      if (build_source != NULL)
        schema = g_settings_schema_source_lookup (build_source, SACCADE_APP_ID, TRUE);
    }
  if (schema == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "the settings schema %s is not installed (and %s has no compiled copy)",
                   SACCADE_APP_ID, SACCADE_BUILD_SCHEMA_DIR);
      return NULL;
    }
  return g_settings_new_full (schema, NULL, NULL);
}

GSettings *
saccade_application_get_settings (SaccadeApplication *self)
{
  g_return_val_if_fail (SACCADE_IS_APPLICATION (self), NULL);
  return self->settings;
}

int
saccade_application_get_exit_status (SaccadeApplication *self)
{
  g_return_val_if_fail (SACCADE_IS_APPLICATION (self), 1);
  return self->exit_status;
}

/* ------------------------------------------------------------------------------------ */
/* Actions                                                                               */

static void
action_quit (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  GtkApplication *app = user_data;
  g_autolist (GtkWindow) windows = NULL;

  /* Close every window the way its close button does (each saves its size); the
   * application ends with the last one. */
  for (GList *l = gtk_application_get_windows (app); l != NULL; l = l->next)
    windows = g_list_prepend (windows, g_object_ref (l->data));
  for (GList *l = windows; l != NULL; l = l->next)
    gtk_window_close (l->data);
}

static void
action_about (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  GtkApplication *app = user_data;
  const char *developers[] = { "The Saccade developers", NULL };
  GtkWidget *about = adw_about_window_new ();

  g_object_set (about,
                "transient-for", gtk_application_get_active_window (app),
                "application-name", _("Saccade"),
                "application-icon", SACCADE_APP_ID,
                "developer-name", _("The Saccade developers"),
                "developers", developers,
                "version", SACCADE_VERSION,
                "website", "https://github.com/saccade/saccade",
                "issue-url", "https://github.com/saccade/saccade/issues",
                "comments", _("Saccade runs a transformer language model on your computer, "
                              "captures the attention weights of every layer and head, and "
                              "shows where each head looks."),
                "license-type", GTK_LICENSE_GPL_3_0,
                /* Translators: your name(s), one per line, to be credited in About. */
                "translator-credits", _("translator-credits"),
                NULL);
  gtk_window_present (GTK_WINDOW (about));
}

static void
action_preferences (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  SaccadeApplication *self = user_data;
  GtkWindow *parent = gtk_application_get_active_window (GTK_APPLICATION (self));
  SaccadePreferencesWindow *prefs = saccade_preferences_window_new (self->settings);

  gtk_window_set_transient_for (GTK_WINDOW (prefs), parent);
  gtk_window_present (GTK_WINDOW (prefs));
}

static const GActionEntry app_entries[] = {
  { .name = "quit", .activate = action_quit },
  { .name = "about", .activate = action_about },
  { .name = "preferences", .activate = action_preferences },
};

/* Every accelerator, the app's and the windows' (the shortcuts window lists them all). */
static const struct {
  const char *action;
  const char *accels[3];
} accels[] = {
  { "app.quit", { "<Control>q", NULL } },
  { "app.preferences", { "<Control>comma", NULL } },
  { "win.show-help-overlay", { "<Control>question", NULL } },
  { "window.close", { "<Control>w", NULL } },
  { "win.run", { "<Control>Return", "<Control>KP_Enter", NULL } },
  { "win.open-database", { "<Control>o", NULL } },
  { "win.open-model", { "<Control><Shift>o", NULL } },
  { "win.export-figure", { "<Control>e", NULL } },
  { "win.export-csv", { "<Control><Shift>e", NULL } },
  { "win.search", { "<Control>f", NULL } },
  { "win.toggle-sidebar", { "F9", NULL } },
  { "win.show-page('heatmap')", { "<Alt>1", NULL } },
  { "win.show-page('model')", { "<Alt>2", NULL } },
  { "win.show-page('lines')", { "<Alt>3", NULL } },
  { "win.reset-zoom", { "<Control>0", NULL } },
};

/* ------------------------------------------------------------------------------------ */
/* GApplication                                                                          */

static void
saccade_application_startup (GApplication *app)
{
  SaccadeApplication *self = SACCADE_APPLICATION (app);
  g_autoptr (GError) error = NULL;
  gsize i;

  G_APPLICATION_CLASS (saccade_application_parent_class)->startup (app);
  gtk_window_set_default_icon_name (SACCADE_APP_ID);
  /* the window's workers (lookups, loads, studies, captures) yield the cores to the frame
   * being drawn (ui/widgets/saccade-background.h) */
  saccade_background_set_nice (BACKGROUND_NICE);
  if ((self->settings = settings_new (&error)) == NULL)
    {
      g_printerr ("saccade: %s\n", error->message);
      self->exit_status = 1;
      return;
    }
  g_action_map_add_action_entries (G_ACTION_MAP (app), app_entries, G_N_ELEMENTS (app_entries),
                                   app);
  for (i = 0; i < G_N_ELEMENTS (accels); i++)
    gtk_application_set_accels_for_action (GTK_APPLICATION (app), accels[i].action,
                                           accels[i].accels);
}

static void
saccade_application_activate (GApplication *app)
{
  SaccadeApplication *self = SACCADE_APPLICATION (app);
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (app));

  if (self->settings == NULL)
    return; /* startup failed and said why */
  if (window == NULL)
    window = GTK_WINDOW (saccade_window_new (ADW_APPLICATION (app), self->db_opt,
                                             self->model_opt));
  gtk_window_present (window);
}

static void
saccade_application_shutdown (GApplication *app)
{
  SaccadeApplication *self = SACCADE_APPLICATION (app);

  /* Window sizes are written as the windows close: make sure they reach the disk. */
  if (self->settings != NULL)
    g_settings_sync ();
  G_APPLICATION_CLASS (saccade_application_parent_class)->shutdown (app);
}

static void
saccade_application_finalize (GObject *object)
{
  SaccadeApplication *self = SACCADE_APPLICATION (object);

  g_clear_object (&self->settings);
  g_free (self->db_opt);
  g_free (self->model_opt);
  G_OBJECT_CLASS (saccade_application_parent_class)->finalize (object);
}

static void
saccade_application_class_init (SaccadeApplicationClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = saccade_application_finalize;
  G_APPLICATION_CLASS (klass)->startup = saccade_application_startup;
  G_APPLICATION_CLASS (klass)->activate = saccade_application_activate;
  G_APPLICATION_CLASS (klass)->shutdown = saccade_application_shutdown;
}

static void
saccade_application_init (SaccadeApplication *self)
{
  const GOptionEntry entries[] = {
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &self->db_opt,
      N_("Capture database (default: the last opened, else ~/.local/share/saccade/captures.sqlite)"),
      N_("FILE") },
    { "model", 'm', 0, G_OPTION_ARG_FILENAME, &self->model_opt,
      N_("GGUF model file (default: the last used, else the default model)"), N_("FILE") },
    G_OPTION_ENTRY_NULL
  };

  g_application_add_main_option_entries (G_APPLICATION (self), entries);
  g_application_set_option_context_parameter_string (G_APPLICATION (self), NULL);
  g_application_set_option_context_summary (
    G_APPLICATION (self), _("Opens the Saccade window. `saccade --help` lists the command-line verbs."));
}

SaccadeApplication *
saccade_application_new (void)
{
  /* Every window is its own process's: a second `saccade --db other.sqlite` must open that
   * database, not raise the first window. */
  return g_object_new (SACCADE_TYPE_APPLICATION,
                       "application-id", SACCADE_APP_ID,
                       "flags", G_APPLICATION_NON_UNIQUE,
                       "resource-base-path", "/io/github/saccade/Saccade",
                       NULL);
}
