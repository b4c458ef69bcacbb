/* saccade-token-label.h — how a token's bytes are shown in figures and widgets.
 *
 * Byte-level BPE pieces carry spaces and newlines that are invisible in a label, and may
 * split a UTF-8 character between tokens. The display form makes both visible: leading and
 * trailing spaces as "␣", newlines as "⏎", tabs as "⇥", other control characters and
 * bytes that are not part of a whole UTF-8 character as "<0xNN>". Everything else — CJK
 * included — is kept as it is. Pure function: thread-safe.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The display form of @len bytes at @bytes (any bytes; NUL included; @bytes may be NULL
 * when @len is 0). Returns valid UTF-8; caller frees. An empty piece gives "". */
char *saccade_token_label (const char *bytes, gsize len);

/* The labels of a whole sequence of tokens (@pieces[i] holds @lens[i] bytes): each as
 * saccade_token_label() shows it, and where a UTF-8 character is split across tokens (CJK
 * text under a byte-level vocabulary: 猫 = E7 8C AB in three tokens), each of those tokens'
 * labels also names the character: "<0xE7> (猫)", "<0x8C> (猫)", "<0xAB> (猫)". Returns a
 * NULL-terminated array of @n strings; g_strfreev() it. */
char **saccade_token_labels_new (const char *const *pieces, const gsize *lens, gsize n);

G_END_DECLS
