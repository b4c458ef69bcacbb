/* test-gpt2-tokenizer.c — GPT-2's byte-level BPE tokenizer (pre-tokenizer "gpt-2") against
 * llama.cpp's own gpt-2 vocabulary test (issue 28 item 3):
 *
 *  - tests/reference/ggml-vocab-gpt-2.gguf.inp/.out, copied unchanged from llama.cpp's
 *    models/ folder as vendored by llama-cpp-python 0.3.36 (MIT): every text, tokenized as
 *    its test-tokenizer-0 does (add_special=false, parse_special=false), gives its ids;
 *  - the vocabulary is GPT-2's: tests/reference/vocab-gpt2-cases.json (gen_vocab_gpt2.py)
 *    holds the byte tokens, every token and merge the cases' ids are made of, with their ids
 *    and ranks (the script says why that subset tokenizes these texts exactly as the whole
 *    vocabulary does); this test lays them into a GGUF with 50257 ids as llama.cpp's file
 *    has, the other ids named so that no merge can make them;
 *  - with $SACCADE_GPT2_VOCAB naming llama.cpp's vocab-only ggml-vocab-gpt-2.gguf (1.77 MB,
 *    not in the repository) the cases run through the whole vocabulary as well.
 */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "engine/format/sc-gguf.h"
#include "engine/text/sc-tokenizer.h"
#include "tests/engine/sc-test-gguf.h"
#include "tests/engine/sc-test-tokens.h"

static JsonObject *vocab;
static JsonParser *parser;

/* The GGUF (vocabulary keys only) of vocab-gpt2-cases.json; with @pre as its pre-tokenizer. */
static GBytes *
build_vocab (const char *pre)
{
  const guint n_vocab = (guint) json_object_get_int_member (vocab, "n_vocab");
  JsonArray *tokens = json_object_get_array_member (vocab, "tokens");
  JsonArray *merges = json_object_get_array_member (vocab, "merges");
  const guint n_merges = json_array_get_length (merges);
  g_autoptr (GPtrArray) owned = g_ptr_array_new_with_free_func (g_free);
  g_autofree const char **strs = g_new0 (const char *, n_vocab);
  g_autofree const char **mstrs = g_new0 (const char *, n_merges);
  g_autofree uint32_t *lens = g_new0 (uint32_t, n_vocab);
  g_autofree uint32_t *mlens = g_new0 (uint32_t, n_merges);
  g_autofree int32_t *types = g_new0 (int32_t, n_vocab);
  ScTestGguf *g = sc_test_gguf_new (3);
  GBytes *bytes;

  for (guint i = 0; i < json_array_get_length (tokens); i++)
    {
      JsonArray *t = json_array_get_array_element (tokens, i);
      const guint id = (guint) json_array_get_int_element (t, 0);
      g_assert_cmpuint (id, <, n_vocab);
      strs[id] = json_array_get_string_element (t, 1);
      types[id] = (int32_t) json_array_get_int_element (t, 2);
    }
  for (guint id = 0; id < n_vocab; id++)
    {
      if (strs[id] == NULL)
        {
          /* an id the cases do not use: a name with a space, which byte-level tokens
           * never hold (a space is "Ġ") and so no merge makes */
          char *name = g_strdup_printf ("<unused %u>", id);
          g_ptr_array_add (owned, name);
          strs[id] = name;
          types[id] = 1;
        }
      lens[id] = (uint32_t) strlen (strs[id]);
    }
  for (guint i = 0; i < n_merges; i++)
    {
      mstrs[i] = json_array_get_string_element (merges, i);
      mlens[i] = (uint32_t) strlen (mstrs[i]);
    }
  sc_test_gguf_add_str (g, "general.architecture", "gpt2");
  sc_test_gguf_add_str (g, "tokenizer.ggml.model", "gpt2");
  sc_test_gguf_add_str (g, "tokenizer.ggml.pre", pre);
  sc_test_gguf_add_str_array (g, "tokenizer.ggml.tokens", strs, lens, n_vocab);
  sc_test_gguf_add_i32_array (g, "tokenizer.ggml.token_type", types, n_vocab);
  sc_test_gguf_add_str_array (g, "tokenizer.ggml.merges", mstrs, mlens, n_merges);
  sc_test_gguf_add_u32 (g, "tokenizer.ggml.bos_token_id",
                        (uint32_t) json_object_get_int_member (vocab, "bos_id"));
  sc_test_gguf_add_u32 (g, "tokenizer.ggml.eos_token_id",
                        (uint32_t) json_object_get_int_member (vocab, "eos_id"));
  bytes = sc_test_gguf_build (g, NULL);
  sc_test_gguf_free (g);
  return bytes;
}

static ScTokenizer *
open_bytes (GBytes *bytes, ScGguf **g)
{
  ScTokenizer *tok = NULL;
  ScError err = { 0 };
  gsize n;
  const void *d = g_bytes_get_data (bytes, &n);

  if (sc_gguf_open_memory (d, n, g, &err) != SC_OK
      || sc_tokenizer_new_from_gguf (*g, &tok, &err) != SC_OK)
    g_error ("the gpt-2 vocabulary: %s", err.message);
  return tok;
}

static void
test_llama_vocab_cases (void)
{
  const char *full = g_getenv ("SACCADE_GPT2_VOCAB");
  g_autoptr (GBytes) bytes = build_vocab ("gpt-2");
  ScGguf *g = NULL;
  ScTokenizer *tok = open_bytes (bytes, &g);
  ScError err = { 0 };

  g_assert_cmpuint (sc_tokenizer_n_vocab (tok), ==, 50257);
  g_assert_false (sc_tokenizer_adds_bos (tok));
  g_assert_cmpint (sc_tokenizer_eos (tok), ==, 50256);
  g_assert_cmpuint (sc_test_llama_vocab_cases (tok, "gpt-2", "GPT-2's tokens and merges the "
                                               "cases use"), ==, 46);
  sc_tokenizer_free (tok);
  sc_gguf_close (g);
  if (full != NULL)
    {
      if (sc_gguf_open (full, &g, &err) != SC_OK
          || sc_tokenizer_new_from_gguf (g, &tok, &err) != SC_OK)
        g_error ("%s: %s", full, err.message);
      g_assert_cmpuint (sc_test_llama_vocab_cases (tok, "gpt-2", full), ==, 46);
      sc_tokenizer_free (tok);
      sc_gguf_close (g);
    }
}

/* The pre-tokenizer matters: the same vocabulary split by another pattern (llama3's: digits
 * in threes, contractions case-insensitive, runs of punctuation with a leading space) gives
 * other ids on llama.cpp's gpt-2 cases ("   Hello" with the leading spaces split otherwise,
 * "3333333" in threes), so the test above tests the "gpt-2" pattern and not BPE alone. */
static void
test_pre_tokenizer_matters (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr (GBytes) bytes = build_vocab ("llama3");
      ScGguf *g = NULL;
      ScTokenizer *tok = open_bytes (bytes, &g);
      sc_test_llama_vocab_cases (tok, "gpt-2", "the same vocabulary, llama3's pre-tokenizer");
      sc_tokenizer_free (tok);
      sc_gguf_close (g);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*vocabulary cases differ*");
}

int
main (int argc, char **argv)
{
  g_autofree char *path = NULL;
  g_autoptr (GError) error = NULL;
  int rc;

  g_test_init (&argc, &argv, NULL);
  path = sc_test_source_path ("tests/reference/vocab-gpt2-cases.json");
  parser = json_parser_new ();
  if (!json_parser_load_from_file (parser, path, &error))
    g_error ("%s: %s", path, error->message);
  vocab = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (vocab, "pre"), ==, "gpt-2");

  g_test_add_func ("/gpt2/tokenizer/llama.cpp-vocab-cases", test_llama_vocab_cases);
  g_test_add_func ("/gpt2/tokenizer/pre-tokenizer-matters", test_pre_tokenizer_matters);
  rc = g_test_run ();
  g_object_unref (parser);
  return rc;
}
