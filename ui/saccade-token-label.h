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

G_END_DECLS
