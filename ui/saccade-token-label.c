/* saccade-token-label.c — the display form of a token's bytes (saccade-token-label.h).
 *
 * One pass over the bytes: whole UTF-8 characters are copied (with spaces at either end,
 * newlines and tabs replaced by visible markers), everything else becomes <0xNN> one byte
 * at a time, so a character split across two tokens shows as its bytes in both.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "saccade-token-label.h"

#define MARK_SPACE "\u2423"   /* ␣ OPEN BOX */
#define MARK_NEWLINE "\u23ce" /* ⏎ RETURN SYMBOL */
#define MARK_TAB "\u21e5"     /* ⇥ RIGHTWARDS ARROW TO BAR */

char *
saccade_token_label (const char *bytes, gsize len)
{
  GString *out = g_string_sized_new (len + 8);
  gsize first = 0, last = len; /* the spaces outside [first, last) are marked */
  gsize i = 0;

  if (bytes == NULL)
    len = 0;
  while (first < len && bytes[first] == ' ')
    first++;
  while (last > first && bytes[last - 1] == ' ')
    last--;

  while (i < len)
    {
      guchar c = (guchar) bytes[i];
      gunichar ch;
      gsize n;

      if (c == ' ')
        {
          g_string_append (out, i < first || i >= last ? MARK_SPACE : " ");
          i++;
          continue;
        }
      if (c == '\n')
        {
          g_string_append (out, MARK_NEWLINE);
          i++;
          continue;
        }
      if (c == '\t')
        {
          g_string_append (out, MARK_TAB);
          i++;
          continue;
        }
      ch = g_utf8_get_char_validated (bytes + i, (gssize) (len - i));
      /* Invalid, truncated, NUL, or a control character (C0, DEL, C1): show the bytes. */
      if (ch == (gunichar) -1 || ch == (gunichar) -2 || ch < 0x20 || (ch >= 0x7f && ch < 0xa0))
        {
          g_string_append_printf (out, "<0x%02X>", c);
          i++;
          continue;
        }
      n = (gsize) g_unichar_to_utf8 (ch, NULL);
      g_string_append_len (out, bytes + i, (gssize) n);
      i += n;
    }
  return g_string_free (out, FALSE);
}
