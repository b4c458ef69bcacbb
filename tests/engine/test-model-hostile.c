/* test-model-hostile.c — model files that lie about themselves are refused by name
 * (issue 25, item 9): a special token id past the vocabulary, a token type outside
 * llama.cpp's enum, a block_count short of the layers the file holds, a NaN or infinite
 * weight. Each builds the tiny llama of sc-test-gguf.h with one thing changed and checks the
 * loader's message names the key, the token or the tensor. Before the fix each of these
 * loaded: the ids fell back to llama.cpp's defaults, the types to UNDEFINED, the model ran
 * block_count layers, and NaN weights gave NaN logits (generate printed nothing, exit 0).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "format/sc-gguf.h"
#include "model/sc-model.h"
#include "sc-test-gguf.h"

/* The tiny llama as written: every tweak off. */
static ScTestTinyTweaks
untweaked (void)
{
  return (ScTestTinyTweaks) { .bos_id = -1, .unk_id = -1, .token_type_at = -1 };
}

/* Opens the tiny llama with @tw; returns the loader's status, its message in @err. */
static ScStatus
open_tweaked (const ScTestTinyTweaks *tw, ScError *err)
{
  g_autoptr (GBytes) bytes = sc_test_gguf_tiny_llama_tweaked (11, "llama", tw);
  gsize n;
  const void *d = g_bytes_get_data (bytes, &n);
  ScGguf *g = NULL;
  ScModel *m = NULL;
  ScStatus st;

  g_assert_cmpint (sc_gguf_open_memory (d, n, &g, err), ==, SC_OK);
  st = sc_model_open_gguf (g, 1, &m, err); /* takes @g, also on failure */
  sc_model_free (m);
  return st;
}

static void
expect_refused (const ScTestTinyTweaks *tw, const char *needle)
{
  ScError err = { 0 };
  ScStatus st = open_tweaked (tw, &err);

  g_test_message ("loader: %s", err.message);
  g_assert_cmpint (st, !=, SC_OK);
  g_assert_nonnull (strstr (err.message, needle));
}

static void
test_untweaked_loads (void)
{
  ScTestTinyTweaks tw = untweaked ();
  ScError err = { 0 };

  tw.unk_id = 5;
  g_assert_cmpint (open_tweaked (&tw, &err), ==, SC_OK);
}

static void
test_bos_beyond_vocabulary (void)
{
  /* the vocabulary is 266 tokens: 266 is the first id past it */
  ScTestTinyTweaks tw = untweaked ();

  tw.bos_id = SC_TEST_GGUF_BYTE_VOCAB;
  expect_refused (&tw,
                  "'tokenizer.ggml.bos_token_id' is 266, beyond the vocabulary of 266 tokens");
}

static void
test_unk_beyond_vocabulary (void)
{
  ScTestTinyTweaks tw = untweaked ();

  tw.unk_id = 100000;
  expect_refused (&tw,
                  "'tokenizer.ggml.unknown_token_id' is 100000, beyond the vocabulary");
}

static void
test_token_type_99 (void)
{
  ScTestTinyTweaks tw = untweaked ();

  tw.token_type_at = 65;
  tw.token_type = 99;
  expect_refused (&tw, "token 65 has type 99");
}

static void
test_token_type_minus_1 (void)
{
  ScTestTinyTweaks tw = untweaked ();

  tw.token_type_at = 3;
  tw.token_type = -1;
  expect_refused (&tw, "token 3 has type -1");
}

static void
test_block_count_short (void)
{
  ScTestTinyTweaks tw = untweaked ();

  tw.block_count = 1;
  expect_refused (&tw, "tensor 'blk.1.");
}

static void
test_nan_norm_weight (void)
{
  ScTestTinyTweaks tw = untweaked ();

  tw.bad_tensor = "blk.1.attn_norm.weight";
  tw.bad_value = NAN;
  expect_refused (&tw,
                  "tensor 'blk.1.attn_norm.weight': element 0 is NaN");
}

static void
test_inf_norm_weight (void)
{
  ScTestTinyTweaks tw = untweaked ();

  tw.bad_tensor = "output_norm.weight";
  tw.bad_value = -INFINITY;
  expect_refused (&tw,
                  "tensor 'output_norm.weight': element 0 is -Inf");
}

/* A matrix stays in the file's blocks and is checked there (by its values or its blocks'
 * scales, sc_quant_row_finite; the row decoded to name the element). */
static void
test_inf_matrix_weight (void)
{
  ScTestTinyTweaks tw = untweaked ();

  tw.bad_tensor = "blk.1.ffn_down.weight";
  tw.bad_value = INFINITY;
  expect_refused (&tw, "tensor 'blk.1.ffn_down.weight': element 0 is +Inf");
}

/* Writes GGUF @bytes to a new temporary file; caller removes and frees the path. */
static char *
write_temp (GBytes *bytes)
{
  g_autoptr (GError) error = NULL;
  char *path = NULL;
  int fd = g_file_open_tmp ("peek-XXXXXX.gguf", &path, &error);
  gsize n;
  const char *d = g_bytes_get_data (bytes, &n);

  g_assert_no_error (error);
  close (fd);
  g_file_set_contents (path, d, (gssize) n, &error);
  g_assert_no_error (error);
  return path;
}

/* sc_model_peek (the model list's header read): the hyperparameters and name of a good
 * file without loading it; an unknown architecture and a cut file refused by name with the
 * path; a file whose weights are bad passes (only the header is read) though sc_model_open
 * refuses it — the contract saccade-models.h states. */
static void
test_peek (void)
{
  ScTestTinyTweaks tw = untweaked ();
  g_autoptr (GBytes) good = sc_test_gguf_tiny_llama_tweaked (11, "llama", &tw);
  g_autoptr (GBytes) bert = sc_test_gguf_tiny_llama_tweaked (11, "bert", &tw);
  g_autoptr (GBytes) nan_weight = NULL;
  g_autofree char *good_path = write_temp (good), *bert_path = write_temp (bert);
  g_autofree char *nan_path = NULL, *cut_path = NULL;
  ScModelInfo info;
  ScError err = { 0 };
  ScModel *m = NULL;
  gsize n;
  const char *d = g_bytes_get_data (good, &n);
  g_autoptr (GError) error = NULL;

  g_assert_cmpint (sc_model_peek (good_path, &info, &err), ==, SC_OK);
  g_assert_cmpstr (info.arch_name, ==, "llama");
  g_assert_cmpuint (info.n_layers, ==, 2);
  g_assert_cmpuint (info.n_heads, ==, 4);
  g_assert_cmpuint (info.n_kv_heads, ==, 2);
  g_assert_cmpuint (info.n_vocab, ==, 0); /* the tokenizer is not read */
  g_assert_cmpstr (info.name, !=, "");

  g_assert_cmpint (sc_model_peek (bert_path, &info, &err), ==, SC_ERR_UNSUPPORTED);
  g_assert_nonnull (strstr (err.message, "'bert'"));
  g_assert_nonnull (strstr (err.message, bert_path));

  cut_path = g_strconcat (good_path, ".cut", NULL);
  g_file_set_contents (cut_path, d, 200, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sc_model_peek (cut_path, &info, &err), !=, SC_OK);
  g_assert_nonnull (strstr (err.message, cut_path));

  tw.bad_tensor = "blk.1.attn_norm.weight";
  tw.bad_value = NAN;
  nan_weight = sc_test_gguf_tiny_llama_tweaked (11, "llama", &tw);
  nan_path = write_temp (nan_weight);
  g_assert_cmpint (sc_model_peek (nan_path, &info, &err), ==, SC_OK);
  g_assert_cmpint (sc_model_open (nan_path, 1, &m, &err), !=, SC_OK);
  g_assert_null (m);
  g_assert_nonnull (strstr (err.message, "element 0 is NaN"));

  g_assert_cmpint (sc_model_peek (NULL, &info, &err), ==, SC_ERR_INVALID_ARG);
  g_unlink (good_path);
  g_unlink (bert_path);
  g_unlink (cut_path);
  g_unlink (nan_path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/model-hostile/untweaked-loads", test_untweaked_loads);
  g_test_add_func ("/model-hostile/bos-beyond-vocabulary", test_bos_beyond_vocabulary);
  g_test_add_func ("/model-hostile/unk-beyond-vocabulary", test_unk_beyond_vocabulary);
  g_test_add_func ("/model-hostile/token-type-99", test_token_type_99);
  g_test_add_func ("/model-hostile/token-type-minus-1", test_token_type_minus_1);
  g_test_add_func ("/model-hostile/block-count-short", test_block_count_short);
  g_test_add_func ("/model-hostile/nan-norm-weight", test_nan_norm_weight);
  g_test_add_func ("/model-hostile/inf-norm-weight", test_inf_norm_weight);
  g_test_add_func ("/model-hostile/inf-matrix-weight", test_inf_matrix_weight);
  g_test_add_func ("/model-hostile/peek", test_peek);
  return g_test_run ();
}
