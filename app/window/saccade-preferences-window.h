/* saccade-preferences-window.h — Preferences: the figures' colour map and scale, the grid's
 * metric, the backend and the size above which a run asks first, bound to the app's
 * GSettings (the pages follow the same keys, so both always agree).
 */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define SACCADE_TYPE_PREFERENCES_WINDOW (saccade_preferences_window_get_type ())
G_DECLARE_FINAL_TYPE (SaccadePreferencesWindow, saccade_preferences_window, SACCADE,
                      PREFERENCES_WINDOW, AdwPreferencesWindow)

SaccadePreferencesWindow *saccade_preferences_window_new (GSettings *settings);

/* The size (bytes) above which a run asks before it starts, from @settings' "ask-above"
 * (G_MAXUINT64: never). */
guint64 saccade_preferences_ask_above_bytes (GSettings *settings);

G_END_DECLS
