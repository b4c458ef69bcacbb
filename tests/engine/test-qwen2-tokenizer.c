/* test-qwen2-tokenizer.c — Qwen2's byte-level BPE tokenizer (pre-tokenizer "qwen2") against
 * llama.cpp, on the vocabulary of Qwen2.5-Coder-0.5B-Instruct:
 *
 *  - every case of tests/reference/tokenizer-cases-qwen2.json (gen_tokenizer_fixture_qwen2.py:
 *    llama.cpp 0.3.36's llama_tokenize(add_special=false, parse_special=<case>) on the model's
 *    GGUF): every id must match, decoding the ids must give llama.cpp's detokenization byte for
 *    byte, and valid text without special parsing must decode back to itself. The cases are the
 *    SmolLM2 fixture's texts plus digit runs, upper-case contractions, \r\n and whitespace
 *    runs, code, Qwen2.5's special tokens (ChatML, FIM, tool call, vision) with special
 *    parsing on and off, and the chat template;
 *  - llama.cpp's own qwen2 vocabulary test (tests/reference/ggml-vocab-qwen2.gguf.inp/.out,
 *    copied unchanged from llama.cpp's models/ folder as vendored by llama-cpp-python 0.3.36,
 *    MIT): its 46 texts, tokenized as its test-tokenizer-0 does (add_special=false,
 *    parse_special=false), give its ids. Those ids were made on llama.cpp's vocab-only
 *    ggml-vocab-qwen2.gguf (Qwen1.5's tokenizer); check_vocab_qwen2.py showed llama.cpp gives
 *    the same ids for every case on this model's vocabulary, so they are run here through the
 *    model's tokenizer (the file CI fetches). $SACCADE_QWEN2_VOCAB naming that vocab-only
 *    file runs them through it as well.
 *
 * Needs data/models/Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf (or $SACCADE_QWEN2_MODEL); exits 77
 * (skip) when it is absent, and skips when the file is not the one the fixture was made with.
 */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "engine/format/sc-gguf.h"
#include "engine/text/sc-tokenizer.h"
#include "tests/engine/sc-test-tokens.h"

static char *model_path;

static ScTokenizer *
open_tokenizer (const char *path, ScGguf **g)
{
  ScTokenizer *tok = NULL;
  ScError err = { 0 };

  if (sc_gguf_open (path, g, &err) != SC_OK)
    g_error ("%s: %s", path, err.message);
  if (sc_tokenizer_new_from_gguf (*g, &tok, &err) != SC_OK)
    g_error ("tokenizer from %s: %s", path, err.message);
  return tok;
}

static void
test_oracle (void)
{
  g_autofree char *fixture =
    sc_test_source_path ("tests/reference/tokenizer-cases-qwen2.json");
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;
  ScGguf *g = NULL;
  ScTokenizer *tok;
  ScError err = { 0 };

  if (!json_parser_load_from_file (parser, fixture, &error))
    g_error ("cannot read the oracle fixture %s: %s", fixture, error->message);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));

  g_autoptr (GMappedFile) map = g_mapped_file_new (model_path, FALSE, &error);
  g_assert_no_error (error);
  g_autofree char *sha =
    g_compute_checksum_for_data (G_CHECKSUM_SHA256,
                                 (const guchar *) g_mapped_file_get_contents (map),
                                 g_mapped_file_get_length (map));
  if (g_strcmp0 (sha, json_object_get_string_member (root, "model_sha256")) != 0)
    {
      g_test_skip_printf ("%s is not the model the fixture was made with (sha256 %s)",
                          model_path, sha);
      return;
    }
  tok = open_tokenizer (model_path, &g);

  JsonObject *vocab = json_object_get_object_member (root, "vocab");
  g_assert_cmpstr (json_object_get_string_member (vocab, "pre"), ==, "qwen2");
  g_assert_cmpuint (sc_tokenizer_n_vocab (tok), ==, json_object_get_int_member (vocab, "n_vocab"));
  g_assert_cmpint (sc_tokenizer_bos (tok), ==, json_object_get_int_member (vocab, "llama_bos_id"));
  g_assert_cmpint (sc_tokenizer_eos (tok), ==, json_object_get_int_member (vocab, "llama_eos_id"));
  g_assert_false (sc_tokenizer_adds_bos (tok)); /* tokenizer.ggml.add_bos_token = false */
  g_assert_true (sc_tokenizer_is_eog (tok, 151645)); /* <|im_end|> */
  g_assert_true (sc_tokenizer_is_eog (tok, 151643)); /* <|endoftext|> */

  JsonArray *cases = json_object_get_array_member (root, "cases");
  guint n_cases = json_array_get_length (cases), n_bad = 0, n_bad_decode = 0, n_roundtrip = 0;
  guint n_long_piece = 0, n_special = 0, n_digit_cases = 0;
  gsize total_bytes = 0, total_ids = 0;
  g_assert_cmpuint (n_cases, ==, json_object_get_int_member (root, "n_cases"));
  g_assert_cmpuint (n_cases, >=, 500);

  for (guint c = 0; c < n_cases; c++)
    {
      JsonObject *cs = json_array_get_object_element (cases, c);
      const char *name = json_object_get_string_member (cs, "name");
      gboolean parse_special = json_object_get_boolean_member (cs, "parse_special");
      g_autoptr (GBytes) text =
        sc_test_hex_to_bytes (json_object_get_string_member (cs, "text_hex"));
      JsonArray *want_arr = json_object_get_array_member (cs, "ids");
      guint n_want = json_array_get_length (want_arr);
      g_autofree int32_t *want = g_new (int32_t, n_want + 1);
      for (guint i = 0; i < n_want; i++)
        want[i] = (int32_t) json_array_get_int_element (want_arr, i);

      gsize len;
      const char *data = g_bytes_get_data (text, &len);
      int32_t *ids = NULL;
      size_t n = 0;
      g_assert_cmpint (sc_tokenize (tok, data, len, false, parse_special, &ids, &n, &err), ==,
                       SC_OK);
      total_bytes += len;
      total_ids += n;
      n_special += parse_special;
      /* digit runs: the qwen2 pattern makes every digit a piece of its own */
      for (gsize i = 0; i + 1 < len; i++)
        if (g_ascii_isdigit (data[i]) && g_ascii_isdigit (data[i + 1]))
          {
            n_digit_cases++;
            break;
          }

      if (n != n_want || (n > 0 && memcmp (ids, want, n * sizeof *ids) != 0))
        {
          if (n_bad++ < 12)
            {
              g_autofree char *got_s = sc_test_ids_to_string (ids, n);
              g_autofree char *want_s = sc_test_ids_to_string (want, n_want);
              g_autofree char *shown = g_strescape (json_object_get_string_member_with_default (
                                                      cs, "text", "(invalid UTF-8)"), NULL);
              g_test_message ("MISMATCH %s (parse_special=%d) \"%.200s\"\n  llama.cpp: %.400s\n  "
                              "saccade:   %.400s", name, parse_special, shown, want_s, got_s);
            }
        }
      else
        {
          /* llama-cpp-python's detokenize reads each piece into a 32-byte buffer and loses
           * longer ones; such cases are checked by the round trip only */
          g_autoptr (GBytes) dec = sc_test_decode_all (tok, ids, n, true);
          g_autoptr (GBytes) want_dec =
            sc_test_hex_to_bytes (json_object_get_string_member (cs, "decoded_hex"));
          gboolean long_piece = FALSE;
          for (size_t i = 0; i < n; i++)
            long_piece |= sc_token_to_bytes (tok, ids[i], true, NULL, 0) > 32;
          if (long_piece)
            n_long_piece++;
          else if (!g_bytes_equal (dec, want_dec) && n_bad_decode++ < 12)
            g_test_message ("DECODE MISMATCH %s", name);
          if (!parse_special && sc_test_is_valid_utf8 (text) && g_bytes_equal (want_dec, text))
            {
              g_autoptr (GBytes) plain = sc_test_decode_all (tok, ids, n, false);
              if (!g_bytes_equal (plain, text) && n_bad_decode++ < 12)
                g_test_message ("ROUND TRIP MISMATCH %s", name);
              n_roundtrip++;
            }
        }
      for (size_t i = 0; i < n; i++)
        g_assert_cmpuint ((uint32_t) ids[i], <, sc_tokenizer_n_vocab (tok));
      free (ids);
    }
  g_test_message ("%u cases (%u with special parsing, %u with digit runs, %u round trips, %u "
                  "with pieces over 32 bytes): %u id mismatches, %u decode mismatches; %zu bytes "
                  "-> %zu ids", n_cases, n_special, n_digit_cases, n_roundtrip, n_long_piece,
                  n_bad, n_bad_decode, total_bytes, total_ids);
  printf ("# qwen2 tokenizer vs llama.cpp: %u cases, %u id mismatches, %u decode mismatches\n",
          n_cases, n_bad, n_bad_decode);
  /* the fixture must exercise what it claims to */
  g_assert_cmpuint (n_special, >=, 50);
  g_assert_cmpuint (n_digit_cases, >=, 30);

  /* inputs on which llama.cpp aborts (if any): Saccade must not */
  JsonArray *crash = json_object_get_array_member (root, "llama_cpp_crash_cases");
  for (guint c = 0; c < json_array_get_length (crash); c++)
    {
      JsonObject *cs = json_array_get_object_element (crash, c);
      g_autoptr (GBytes) text =
        sc_test_hex_to_bytes (json_object_get_string_member (cs, "text_hex"));
      gsize len;
      const char *data = g_bytes_get_data (text, &len);
      int32_t *ids = NULL;
      size_t n = 0;
      g_assert_cmpint (sc_tokenize (tok, data, len, false, false, &ids, &n, &err), ==, SC_OK);
      free (ids);
    }

  sc_tokenizer_free (tok);
  sc_gguf_close (g);
  if (n_bad > 0 || n_bad_decode > 0)
    g_error ("%u of %u cases differ from llama.cpp (%u decode differences); see the messages above",
             n_bad, n_cases, n_bad_decode);
}

static void
test_llama_vocab_cases (void)
{
  const char *vocab = g_getenv ("SACCADE_QWEN2_VOCAB");
  ScGguf *g = NULL;
  ScTokenizer *tok = open_tokenizer (model_path, &g);

  g_assert_cmpuint (sc_test_llama_vocab_cases (tok, "qwen2", "the model's vocabulary"), ==, 46);
  sc_tokenizer_free (tok);
  sc_gguf_close (g);
  if (vocab != NULL)
    {
      tok = open_tokenizer (vocab, &g);
      g_assert_cmpuint (sc_test_llama_vocab_cases (tok, "qwen2", vocab), ==, 46);
      sc_tokenizer_free (tok);
      sc_gguf_close (g);
    }
}

int
main (int argc, char **argv)
{
  const char *env = g_getenv ("SACCADE_QWEN2_MODEL");
  int rc;

  g_test_init (&argc, &argv, NULL);
  model_path = env != NULL ? g_strdup (env)
                           : sc_test_source_path ("data/models/"
                                                  "Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf");
  if (!g_file_test (model_path, G_FILE_TEST_EXISTS))
    {
      printf ("1..0 # SKIP the Qwen2.5-Coder-0.5B-Instruct model is not present (%s); run "
              "data/fetch-model.sh qwen2.5-0.5b or set SACCADE_QWEN2_MODEL\n", model_path);
      g_free (model_path);
      return 77;
    }
  g_test_add_func ("/qwen2/tokenizer/oracle/llama.cpp", test_oracle);
  g_test_add_func ("/qwen2/tokenizer/llama.cpp-vocab-cases", test_llama_vocab_cases);
  rc = g_test_run ();
  g_free (model_path);
  return rc;
}
