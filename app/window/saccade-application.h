/* saccade-application.h — the desktop application: app-wide actions (quit, about,
 * preferences), accelerators, settings, the --db and --model options, and the main window.
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define SACCADE_APP_ID "io.github.saccade.Saccade"

#define SACCADE_TYPE_APPLICATION (saccade_application_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeApplication, saccade_application, SACCADE, APPLICATION,
                      AdwApplication)

SaccadeApplication *saccade_application_new (void);

/* The io.github.saccade.Saccade settings (the installed schema, else the one compiled into
 * the build folder for an uninstalled build). Borrowed. */
GSettings *saccade_application_get_settings (SaccadeApplication *self);

/* What main() returns after g_application_run(): 1 when the settings could not be read,
 * else 0. */
int saccade_application_get_exit_status (SaccadeApplication *self);

G_END_DECLS
