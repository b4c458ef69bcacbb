/* saccade-format.h — text for people, shared by both faces: a token's bytes made safe for a
 * terminal or a CSV cell, and times. Not here: the window's token labels with visible
 * markers for spaces and newlines (ui/figures/saccade-token-label.h), and JSON
 * (saccade-json.h).
 */
#pragma once

#include <glib.h>

#include "engine/model/sc-model.h"
#include "engine/store/sc-store.h"

G_BEGIN_DECLS

/* Bytes from a file or a database (a model's name, a run's text, a backend name — anything
 * a stranger could have written) made safe to print on a terminal: printable UTF-8 kept;
 * \n \t \r \\ as those escapes; other C0 controls, DEL and bytes that are not valid UTF-8
 * as \xNN; C1 controls (U+0080..U+009F, which some terminals obey like ESC [) and the
 * bidirectional overrides and isolates (U+202A..U+202E, U+2066..U+2069, which reorder what
 * is shown) as \u{XXXX}. So no escape sequence reaches the terminal and what is printed
 * reads in the order it is stored. @len < 0: @bytes is NUL-terminated. Caller frees. */
char *saccade_terminal_text (const char *bytes, gssize len);

/* @ms (Unix milliseconds) as local "YYYY-MM-DD HH:MM:SS", or ISO 8601 UTC when @iso;
 * "?" for a time GDateTime cannot hold. Caller frees. */
char *saccade_format_time (gint64 ms, gboolean iso);

/* The labels of a stored token sequence as the figures show them
 * (saccade_token_labels_new(): "␣cat", "⏎", "<0xE7> (猫)" for a character split across
 * byte tokens), computed over the whole sequence. Labels are safe on a terminal too: every
 * control character is shown as bytes. NULL-terminated; g_strfreev() it. */
char **saccade_token_labels_for_store (const ScStoreToken *tokens, gsize n);

/* A head as both faces print it, "L23.H3" (layer 23, head 3; the command line reads this
 * form and "23.3"), into @buf; returns @buf. */
#define SACCADE_HEAD_NAME_MAX 32
const char *saccade_head_name (char buf[SACCADE_HEAD_NAME_MAX], int layer, int head);

/* A display label of vocabulary token @id of @model (as the run's tokens are labelled:
 * "␣Paris"), or "?" for an id outside the vocabulary. Caller frees. */
char *saccade_vocab_label (ScModel *model, int32_t id);

/* The run text @text (@len bytes) on one line, readable: newlines and tabs as the token
 * labels show them, then as spaces, stripped. Caller frees. */
char *saccade_format_one_line (const char *text, gsize len);

/* Appends @s left-aligned in @width terminal columns (wide, CJK, characters count two,
 * combining marks none; a longer @s is not cut). */
void saccade_format_padded (GString *out, const char *s, int width);

G_END_DECLS
