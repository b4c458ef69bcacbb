/* saccade-format.h — text for people, shared by both faces: a token's bytes made safe for a
 * terminal or a CSV cell, and times. Not here: the window's token labels with visible
 * markers for spaces and newlines (ui/figures/saccade-token-label.h), and JSON
 * (saccade-json.h).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Escapes token bytes for a terminal: printable UTF-8 kept, \n \t \r \\ shown as escapes,
 * other control bytes and invalid UTF-8 as \xNN. Caller frees. */
char *saccade_token_display (const char *bytes, gsize len);

/* @ms (Unix milliseconds) as local "YYYY-MM-DD HH:MM:SS", or ISO 8601 UTC when @iso;
 * "?" for a time GDateTime cannot hold. Caller frees. */
char *saccade_format_time (gint64 ms, gboolean iso);

G_END_DECLS
