/* saccade-window.h — Saccade's main window: the model, a sentence and Run in the header
 * bar, the stored runs in a sidebar, the Heatmap, Model and Lines pages, a status line.
 * DESIGN.md ("The window") describes it; saccade-window-private.h lists its parts.
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define SACCADE_TYPE_WINDOW (saccade_window_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeWindow, saccade_window, SACCADE, WINDOW, AdwApplicationWindow)

/* A window on the capture database @db_path (NULL: the default one, or the last opened)
 * running the model @model_path (NULL: the last used, else the default model). */
SaccadeWindow *saccade_window_new (AdwApplication *application, const char *db_path,
                                   const char *model_path);

G_END_DECLS
