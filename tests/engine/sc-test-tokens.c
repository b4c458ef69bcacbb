/* sc-test-tokens.c — the helpers the two tokenizer oracle tests share (sc-test-tokens.h). */
#include "tests/engine/sc-test-tokens.h"

#include <string.h>

char *
sc_test_source_path (const char *rel)
{
  const char *src = g_getenv ("SC_TEST_SOURCE_DIR");
  return g_build_filename (src != NULL ? src : ".", rel, NULL);
}

GBytes *
sc_test_hex_to_bytes (const char *hex)
{
  gsize n = strlen (hex) / 2;
  guint8 *out = g_malloc (n + 1);
  for (gsize i = 0; i < n; i++)
    out[i] = (guint8) (g_ascii_xdigit_value (hex[2 * i]) * 16
                       + g_ascii_xdigit_value (hex[2 * i + 1]));
  return g_bytes_new_take (out, n);
}

char *
sc_test_ids_to_string (const int32_t *ids, gsize n)
{
  GString *s = g_string_new (NULL);
  for (gsize i = 0; i < n; i++)
    g_string_append_printf (s, "%s%d", i ? " " : "", ids[i]);
  return g_string_free (s, FALSE);
}

GBytes *
sc_test_decode_all (const ScTokenizer *tok, const int32_t *ids, gsize n, bool special)
{
  GByteArray *out = g_byte_array_new ();
  for (gsize i = 0; i < n; i++)
    {
      size_t need = sc_token_to_bytes (tok, ids[i], special, NULL, 0);
      guint at = out->len;
      g_byte_array_set_size (out, at + (guint) need);
      g_assert_cmpuint (sc_token_to_bytes (tok, ids[i], special, (char *) out->data + at, need),
                        ==, need);
    }
  return g_byte_array_free_to_bytes (out);
}

gboolean
sc_test_is_valid_utf8 (GBytes *b)
{
  gsize n;
  const char *d = g_bytes_get_data (b, &n);
  return g_utf8_validate_len (d, n, NULL);
}
