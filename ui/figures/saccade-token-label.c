/* saccade-token-label.c — the display form of a token's bytes (saccade-token-label.h).
 *
 * One pass over the bytes: whole UTF-8 characters are copied (with spaces at either end,
 * newlines and tabs replaced by visible markers), everything else becomes <0xNN> one byte
 * at a time, so a character split across two tokens shows as its bytes in both.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/figures/saccade-token-label.h"

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

/* The characters of the concatenated pieces that start in one token and end in another:
 * for each token, the whole characters it has a part of, in order. */
char **
saccade_token_labels_new (const char *const *pieces, const gsize *lens, gsize n)
{
  g_autoptr (GByteArray) all = g_byte_array_new ();
  g_autofree gsize *start = g_new (gsize, n + 1); /* token i's bytes: [start[i], start[i+1]) */
  g_autofree GString **split = g_new0 (GString *, n);
  char **out = g_new0 (char *, n + 1);
  gsize tok = 0, p = 0;

  for (gsize i = 0; i < n; i++)
    {
      start[i] = all->len;
      if (lens[i] > 0)
        g_byte_array_append (all, (const guint8 *) pieces[i], (guint) lens[i]);
    }
  start[n] = all->len;

  /* One pass over the text: whole characters whose bytes lie in more than one token. */
  while (p < all->len)
    {
      gunichar ch = g_utf8_get_char_validated ((const char *) all->data + p,
                                               (gssize) (all->len - p));
      gsize len = 1, last;
      if (ch != (gunichar) -1 && ch != (gunichar) -2)
        len = (gsize) g_unichar_to_utf8 (ch, NULL);
      while (tok + 1 < n && start[tok + 1] <= p)
        tok++;
      last = tok;
      while (last + 1 < n && start[last + 1] < p + len)
        last++;
      if (len > 1 && last > tok)
        for (gsize t = tok; t <= last; t++)
          {
            if (split[t] == NULL)
              split[t] = g_string_new (NULL);
            g_string_append_len (split[t], (const char *) all->data + p, (gssize) len);
          }
      p += len;
    }

  for (gsize i = 0; i < n; i++)
    {
      char *label = saccade_token_label (pieces[i], lens[i]);
      if (split[i] != NULL)
        {
          out[i] = g_strdup_printf ("%s (%s)", label, split[i]->str);
          g_free (label);
          g_string_free (split[i], TRUE);
        }
      else
        out[i] = label;
    }
  return out;
}
