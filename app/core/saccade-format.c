/* saccade-format.c — text for people (see saccade-format.h). */
#define G_LOG_DOMAIN "saccade"

#include "app/core/saccade-format.h"

#include <string.h>

#include "ui/figures/saccade-token-label.h"

/* The characters that change how a terminal shows what follows them. */
static gboolean
is_reordering_or_c1 (gunichar c)
{
  return (c >= 0x80 && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

char *
saccade_terminal_text (const char *bytes, gssize len)
{
  GString *s;
  const char *p, *end;

  if (bytes == NULL)
    return g_strdup ("");
  if (len < 0)
    len = (gssize) strlen (bytes);
  s = g_string_sized_new ((gsize) len);
  p = bytes;
  end = bytes + len;

  while (p < end)
    {
      gunichar c = g_utf8_get_char_validated (p, end - p);
      if (c == (gunichar) -1 || c == (gunichar) -2)
        {
          g_string_append_printf (s, "\\x%02X", (unsigned char) *p);
          p++;
          continue;
        }
      if (c == '\n')
        g_string_append (s, "\\n");
      else if (c == '\t')
        g_string_append (s, "\\t");
      else if (c == '\r')
        g_string_append (s, "\\r");
      else if (c == '\\')
        g_string_append (s, "\\\\");
      else if (c < 0x20 || c == 0x7f)
        g_string_append_printf (s, "\\x%02X", c);
      else if (is_reordering_or_c1 (c))
        g_string_append_printf (s, "\\u{%04X}", c);
      else
        g_string_append_len (s, p, g_utf8_next_char (p) - p);
      p = g_utf8_next_char (p);
    }
  return g_string_free (s, FALSE);
}

char *
saccade_format_time (gint64 ms, gboolean iso)
{
  g_autoptr (GDateTime) utc = g_date_time_new_from_unix_utc (ms / 1000);
  g_autoptr (GDateTime) local = NULL;

  if (utc == NULL)
    return g_strdup ("?");
  if (iso)
    return g_date_time_format_iso8601 (utc);
  local = g_date_time_to_local (utc);
  return g_date_time_format (local, "%Y-%m-%d %H:%M:%S");
}

char **
saccade_token_labels_for_store (const ScStoreToken *tokens, gsize n)
{
  g_autofree const char **pieces = g_new (const char *, n + 1);
  g_autofree gsize *lens = g_new (gsize, n + 1);
  gsize i;

  for (i = 0; i < n; i++)
    {
      pieces[i] = (const char *) tokens[i].piece;
      lens[i] = tokens[i].len;
    }
  return saccade_token_labels_new (pieces, lens, n);
}

/* Columns @s takes on a terminal: wide (CJK) characters count two, combining marks none. */
static int
display_width (const char *s)
{
  int w = 0;

  for (; *s != '\0'; s = g_utf8_next_char (s))
    {
      gunichar c = g_utf8_get_char (s);
      w += g_unichar_iszerowidth (c) ? 0 : g_unichar_iswide (c) ? 2 : 1;
    }
  return w;
}

void
saccade_format_padded (GString *out, const char *s, int width)
{
  g_string_append_printf (out, "%s%*s", s, MAX (width - display_width (s), 0), "");
}

char *
saccade_format_one_line (const char *text, gsize len)
{
  g_autofree char *shown = saccade_token_label (text, len);
  return g_strstrip (g_strdelimit (g_steal_pointer (&shown), "\r\n\t", ' '));
}

char *
saccade_vocab_label (ScModel *model, int32_t id)
{
  const ScTokenizer *tok = sc_model_tokenizer (model);
  char buf[256];
  size_t len;
  ScStoreToken t;
  g_auto (GStrv) labels = NULL;

  if (id < 0 || (uint32_t) id >= sc_model_info (model)->n_vocab)
    return g_strdup ("?");
  len = sc_token_to_bytes (tok, id, true, buf, sizeof buf);
  t = (ScStoreToken) { id, (uint32_t) MIN (len, sizeof buf), (const uint8_t *) buf };
  labels = saccade_token_labels_for_store (&t, 1);
  return g_strdup (labels != NULL && labels[0] != NULL ? labels[0] : "?");
}

const char *
saccade_head_name (char buf[SACCADE_HEAD_NAME_MAX], int layer, int head)
{
  g_snprintf (buf, SACCADE_HEAD_NAME_MAX, "L%d.H%d", layer, head);
  return buf;
}
