/* test-llama-vocab-tokenizer.c — the tokenizers of Phi-3, Llama 2 and Llama 3 against
 * llama.cpp's own vocabulary tests for them (issue 28 item 3):
 *
 *  - tests/reference/ggml-vocab-{phi-3,llama-spm,llama-bpe}.gguf.inp/.out, copied unchanged
 *    from llama.cpp's models/ folder as vendored by llama-cpp-python 0.3.36 (MIT): every
 *    text, tokenized as its test-tokenizer-0 does (add_special=false, parse_special=false),
 *    gives its ids. phi-3 and llama-spm are SentencePiece vocabularies (GGUF model "llama",
 *    32064 and 32000 tokens, scores, <0xNN> byte fallback, a space prefix); llama-bpe is
 *    Llama 3's byte-level BPE (model "gpt2", pre-tokenizer "llama-bpe", 128256 tokens,
 *    280147 merges);
 *  - the vocabularies: tests/reference/vocab-<family>-cases.json (gen_vocab_cases.py) holds
 *    every token, with its id, type and score, and every merge that tokenizing the cases can
 *    consult (the script says why that subset tokenizes them exactly as the whole vocabulary
 *    does); this test lays them into a GGUF with the file's vocabulary size, the other ids
 *    named so that no lookup can find them;
 *  - with $SACCADE_PHI3_VOCAB, $SACCADE_LLAMA_SPM_VOCAB or $SACCADE_LLAMA_BPE_VOCAB naming
 *    llama.cpp's vocab-only file (not in the repository) the cases run through the whole
 *    vocabulary as well;
 *  - that the cases see what they test: the SentencePiece vocabularies without their space
 *    prefix, and Llama 3's with GPT-2's pre-tokenizer, fail them.
 */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "engine/format/sc-gguf.h"
#include "engine/text/sc-tokenizer.h"
#include "tests/engine/sc-test-gguf.h"
#include "tests/engine/sc-test-tokens.h"

/* One family: its files and what its vocabulary is. */
typedef struct {
  const char *family;     /* "phi-3": ggml-vocab-phi-3.gguf.inp/.out, vocab-phi-3-cases.json */
  const char *env;        /* the variable naming llama.cpp's whole vocab-only file */
  const char *model;      /* tokenizer.ggml.model */
  guint n_vocab, n_cases;
  int32_t bos, eos;
} Family;

static const Family families[] = {
  { "phi-3", "SACCADE_PHI3_VOCAB", "llama", 32064, 46, 1, 32000 },
  { "llama-spm", "SACCADE_LLAMA_SPM_VOCAB", "llama", 32000, 46, 1, 2 },
  { "llama-bpe", "SACCADE_LLAMA_BPE_VOCAB", "gpt2", 128256, 46, 128000, 128001 },
};

/* How build_vocab may depart from the family's file, to show that a case depends on it. */
typedef struct {
  const char *pre;        /* NULL: the file's */
  gboolean no_space_prefix;
} Variant;

static JsonObject *
read_json (const Family *f, JsonParser **parser)
{
  g_autofree char *rel = g_strdup_printf ("tests/reference/vocab-%s-cases.json", f->family);
  g_autofree char *path = sc_test_source_path (rel);
  g_autoptr (GError) error = NULL;
  JsonObject *o;

  *parser = json_parser_new ();
  if (!json_parser_load_from_file (*parser, path, &error))
    g_error ("%s: %s", path, error->message);
  o = json_node_get_object (json_parser_get_root (*parser));
  g_assert_cmpstr (json_object_get_string_member (o, "family"), ==, f->family);
  g_assert_cmpstr (json_object_get_string_member (o, "model"), ==, f->model);
  g_assert_cmpuint ((guint) json_object_get_int_member (o, "n_vocab"), ==, f->n_vocab);
  return o;
}

static void
add_bool_key (ScTestGguf *g, JsonObject *o, const char *member, const char *key)
{
  JsonNode *n = json_object_get_member (o, member);

  if (n != NULL && !json_node_is_null (n))
    sc_test_gguf_add_bool (g, key, json_node_get_boolean (n));
}

/* The GGUF (vocabulary keys only) of vocab-<family>-cases.json, as the family's file has
 * them, changed by @v. */
static GBytes *
build_vocab (const Family *f, JsonObject *o, const Variant *v)
{
  const guint n_vocab = f->n_vocab;
  const gboolean spm = strcmp (f->model, "llama") == 0;
  JsonArray *tokens = json_object_get_array_member (o, "tokens");
  JsonArray *merges = json_object_get_array_member (o, "merges");
  const guint n_merges = json_array_get_length (merges);
  g_autoptr (GPtrArray) owned = g_ptr_array_new_with_free_func (g_free);
  g_autofree const char **strs = g_new0 (const char *, n_vocab);
  g_autofree const char **mstrs = g_new0 (const char *, n_merges + 1);
  g_autofree uint32_t *lens = g_new0 (uint32_t, n_vocab);
  g_autofree uint32_t *mlens = g_new0 (uint32_t, n_merges + 1);
  g_autofree int32_t *types = g_new0 (int32_t, n_vocab);
  g_autofree float *scores = g_new0 (float, n_vocab);
  ScTestGguf *g = sc_test_gguf_new (3);
  GBytes *bytes;

  for (guint i = 0; i < json_array_get_length (tokens); i++)
    {
      JsonArray *t = json_array_get_array_element (tokens, i);
      const guint id = (guint) json_array_get_int_element (t, 0);
      g_assert_cmpuint (id, <, n_vocab);
      strs[id] = json_array_get_string_element (t, 1);
      types[id] = (int32_t) json_array_get_int_element (t, 2);
      if (spm)
        scores[id] = (float) json_array_get_double_element (t, 3);
    }
  for (guint id = 0; id < n_vocab; id++)
    {
      if (strs[id] == NULL)
        {
          /* an id the cases cannot reach: a name with a plain space, which neither a
           * SentencePiece symbol ("▁") nor a byte-level one ("Ġ") ever holds */
          char *name = g_strdup_printf ("<unused %u>", id);
          g_ptr_array_add (owned, name);
          strs[id] = name;
          types[id] = SC_TOKEN_NORMAL;
        }
      lens[id] = (uint32_t) strlen (strs[id]);
    }
  for (guint i = 0; i < n_merges; i++)
    {
      mstrs[i] = json_array_get_string_element (merges, i);
      mlens[i] = (uint32_t) strlen (mstrs[i]);
    }
  sc_test_gguf_add_str (g, "general.architecture", f->family);
  sc_test_gguf_add_str (g, "tokenizer.ggml.model", f->model);
  sc_test_gguf_add_str (g, "tokenizer.ggml.pre", v->pre != NULL ? v->pre
                                                 : json_object_get_string_member (o, "pre"));
  sc_test_gguf_add_str_array (g, "tokenizer.ggml.tokens", strs, lens, n_vocab);
  if (spm)
    sc_test_gguf_add_f32_array (g, "tokenizer.ggml.scores", scores, n_vocab);
  sc_test_gguf_add_i32_array (g, "tokenizer.ggml.token_type", types, n_vocab);
  if (!spm)
    sc_test_gguf_add_str_array (g, "tokenizer.ggml.merges", mstrs, mlens, n_merges);
  sc_test_gguf_add_u32 (g, "tokenizer.ggml.bos_token_id",
                        (uint32_t) json_object_get_int_member (o, "bos_id"));
  sc_test_gguf_add_u32 (g, "tokenizer.ggml.eos_token_id",
                        (uint32_t) json_object_get_int_member (o, "eos_id"));
  if (!json_node_is_null (json_object_get_member (o, "unk_id")))
    sc_test_gguf_add_u32 (g, "tokenizer.ggml.unknown_token_id",
                          (uint32_t) json_object_get_int_member (o, "unk_id"));
  add_bool_key (g, o, "add_bos", "tokenizer.ggml.add_bos_token");
  add_bool_key (g, o, "add_eos", "tokenizer.ggml.add_eos_token");
  if (v->no_space_prefix)
    sc_test_gguf_add_bool (g, "tokenizer.ggml.add_space_prefix", FALSE);
  else
    add_bool_key (g, o, "add_space_prefix", "tokenizer.ggml.add_space_prefix");
  bytes = sc_test_gguf_build (g, NULL);
  sc_test_gguf_free (g);
  return bytes;
}

/* The family's cases through the subset vocabulary changed by @v; the number of cases. */
static guint
run_subset (const Family *f, const Variant *v, const char *what)
{
  JsonParser *parser = NULL;
  JsonObject *o = read_json (f, &parser);
  g_autoptr (GBytes) bytes = build_vocab (f, o, v);
  ScTokenizer *tok = NULL;
  ScGguf *g = NULL;
  ScError err = { 0 };
  gsize n;
  const void *d = g_bytes_get_data (bytes, &n);
  guint n_cases;

  if (sc_gguf_open_memory (d, n, &g, &err) != SC_OK
      || sc_tokenizer_new_from_gguf (g, &tok, &err) != SC_OK)
    g_error ("the %s vocabulary: %s", f->family, err.message);
  g_assert_cmpuint (sc_tokenizer_n_vocab (tok), ==, f->n_vocab);
  g_assert_cmpint (sc_tokenizer_bos (tok), ==, f->bos);
  g_assert_cmpint (sc_tokenizer_eos (tok), ==, f->eos);
  n_cases = sc_test_llama_vocab_cases (tok, f->family, what);
  sc_tokenizer_free (tok);
  sc_gguf_close (g);
  g_object_unref (parser);
  return n_cases;
}

static void
test_cases (gconstpointer data)
{
  const Family *f = data;
  const Variant as_is = { 0 };
  const char *full = g_getenv (f->env);
  g_autofree char *what = g_strdup_printf ("the %s tokens and merges the cases use", f->family);

  g_assert_cmpuint (run_subset (f, &as_is, what), ==, f->n_cases);
  if (full != NULL)
    {
      ScTokenizer *tok = NULL;
      ScGguf *g = NULL;
      ScError err = { 0 };

      if (sc_gguf_open (full, &g, &err) != SC_OK
          || sc_tokenizer_new_from_gguf (g, &tok, &err) != SC_OK)
        g_error ("%s: %s", full, err.message);
      g_assert_cmpuint (sc_tokenizer_n_vocab (tok), ==, f->n_vocab);
      g_assert_cmpuint (sc_test_llama_vocab_cases (tok, f->family, full), ==, f->n_cases);
      sc_tokenizer_free (tok);
      sc_gguf_close (g);
    }
  else
    printf ("# $%s unset: llama.cpp's whole %s vocabulary not checked\n", f->env, f->family);
}

/* The same vocabulary changed by @v must fail the cases. */
static void
assert_variant_fails (const Family *f, const Variant *v, const char *what)
{
  if (g_test_subprocess ())
    {
      run_subset (f, v, what);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_failed ();
  g_test_trap_assert_stderr ("*vocabulary cases differ*");
}

/* SentencePiece's space prefix: without it "Hello world" starts with "H", not "▁H". */
static void
test_spm_space_prefix_matters (gconstpointer data)
{
  const Variant v = { .no_space_prefix = TRUE };

  assert_variant_fails (data, &v, "the same vocabulary without its space prefix");
}

/* Llama 3's pre-tokenizer: GPT-2's splits digits and contractions otherwise. */
static void
test_bpe_pre_tokenizer_matters (void)
{
  const Variant v = { .pre = "gpt-2" };

  assert_variant_fails (&families[2], &v, "the same vocabulary, GPT-2's pre-tokenizer");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (families); i++)
    {
      g_autofree char *path = g_strdup_printf ("/tokenizer/%s/llama.cpp-vocab-cases",
                                               families[i].family);
      g_test_add_data_func (path, &families[i], test_cases);
      if (strcmp (families[i].model, "llama") == 0)
        {
          g_autofree char *p2 = g_strdup_printf ("/tokenizer/%s/space-prefix-matters",
                                                 families[i].family);
          g_test_add_data_func (p2, &families[i], test_spm_space_prefix_matters);
        }
    }
  g_test_add_func ("/tokenizer/llama-bpe/pre-tokenizer-matters", test_bpe_pre_tokenizer_matters);
  return g_test_run ();
}
