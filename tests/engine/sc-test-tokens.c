/* sc-test-tokens.c — the helpers the two tokenizer oracle tests share (sc-test-tokens.h). */
#include "tests/engine/sc-test-tokens.h"

#include <stdio.h>
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

/* llama.cpp's test-tokenizer-0 cases: the texts of @inp separated by
 * "\n__ggml_vocab_test__\n" (the file ends with one), one line of ids per text in @out. */
guint
sc_test_llama_vocab_cases (const ScTokenizer *tok, const char *family, const char *what)
{
  static const char sep[] = "\n__ggml_vocab_test__\n";
  g_autofree char *inp_rel = g_strdup_printf ("tests/reference/ggml-vocab-%s.gguf.inp", family);
  g_autofree char *out_rel = g_strdup_printf ("tests/reference/ggml-vocab-%s.gguf.out", family);
  g_autofree char *inp_path = sc_test_source_path (inp_rel);
  g_autofree char *out_path = sc_test_source_path (out_rel);
  g_autofree char *inp = NULL, *out = NULL;
  g_auto (GStrv) lines = NULL;
  g_autoptr (GError) error = NULL;
  gsize inp_len, pos = 0;
  guint n_cases = 0, n_bad = 0, n_lines;
  ScError err = { 0 };

  if (!g_file_get_contents (inp_path, &inp, &inp_len, &error)
      || !g_file_get_contents (out_path, &out, NULL, &error))
    g_error ("cannot read llama.cpp's %s vocabulary cases: %s", family, error->message);
  lines = g_strsplit (out, "\n", -1);
  n_lines = g_strv_length (lines);
  if (n_lines > 0 && lines[n_lines - 1][0] == '\0')
    n_lines--; /* the newline that ends the last line */
  while (pos < inp_len)
    {
      const char *next = g_strstr_len (inp + pos, (gssize) (inp_len - pos), sep);
      gsize len = next != NULL ? (gsize) (next - (inp + pos)) : inp_len - pos;
      g_auto (GStrv) fields = NULL;
      g_autofree int32_t *want = NULL;
      int32_t *ids = NULL;
      size_t n = 0;
      guint n_want = 0;

      g_assert_cmpuint (n_cases, <, n_lines);
      fields = g_strsplit (g_strstrip (lines[n_cases]), " ", -1);
      want = g_new (int32_t, g_strv_length (fields) + 1);
      for (guint i = 0; fields[i] != NULL; i++)
        if (fields[i][0] != '\0')
          want[n_want++] = (int32_t) g_ascii_strtoll (fields[i], NULL, 10);
      g_assert_cmpint (sc_tokenize (tok, inp + pos, len, false, false, &ids, &n, &err), ==, SC_OK);
      if (n != n_want || (n > 0 && memcmp (ids, want, n * sizeof *ids) != 0))
        {
          g_autofree char *got_s = sc_test_ids_to_string (ids, n);
          g_autofree char *want_s = sc_test_ids_to_string (want, n_want);
          g_autofree char *raw = g_strndup (inp + pos, len);
          g_autofree char *shown = g_strescape (raw, NULL);
          g_test_message ("MISMATCH (%s) case %u \"%.200s\"\n  llama.cpp: %.400s\n  saccade:   "
                          "%.400s", what, n_cases, shown, want_s, got_s);
          n_bad++;
        }
      free (ids);
      n_cases++;
      pos += len + (next != NULL ? strlen (sep) : 0);
    }
  g_assert_cmpuint (n_cases, ==, n_lines);
  printf ("# %s tokenizer vs llama.cpp's ggml-vocab-%s cases (%s): %u cases, %u id "
          "mismatches\n", family, family, what, n_cases, n_bad);
  if (n_bad > 0)
    g_error ("%u of llama.cpp's %u %s vocabulary cases differ (%s)", n_bad, n_cases, family,
             what);
  return n_cases;
}
