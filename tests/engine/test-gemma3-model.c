/* test-gemma3-model.c — the real Gemma 3 270M (data/models/gemma-3-270m-q4_k_m.gguf, fetched
 * by `data/fetch-model.sh gemma3`; under the Gemma terms, never committed):
 *   - it loads with the info llama.cpp's rules give it (15 local layers with a 512-token
 *     window and RoPE base 10^4, global layers 5, 11, 17 with base 10^6, scales);
 *   - greedy generation: "The capital of France is the city of" continues with " Paris",
 *     and " Paris" is among the top three next tokens of "The capital of France is" (the
 *     base model's greedy choice there is " the": it goes on "the capital of the country
 *     of France", which the llama.cpp and float64 references of tests/reference/ agree on);
 *   - (the tokenizer against llama.cpp, logits against llama.cpp and attention against the
 *     float64 reference are test-gemma-tokenizer.c's and test-gemma-model.c's)
 *   - gradients run (sc_model_has_backward; torch autograd's numbers are
 *     test-grad-arch.c's).
 * Exits 77 (skip) when the model is absent; $SACCADE_GEMMA_MODEL overrides the path.
 */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/sc-backend.h"
#include "forward/sc-backward.h"
#include "forward/sc-forward.h"
#include "model/sc-model.h"
#include "text/sc-tokenizer.h"

#define GEMMA3_FILE "gemma-3-270m-q4_k_m.gguf"

static ScModel *model;
static ScBackend *backend;
static ScSession *session;

static char *
source_path (const char *rel)
{
  const char *src = g_getenv ("SC_TEST_SOURCE_DIR");
  return g_build_filename (src != NULL ? src : ".", rel, NULL);
}

static void
test_info (void)
{
  const ScModelInfo *in = sc_model_info (model);

  g_assert_cmpstr (in->arch_name, ==, "gemma3");
  g_assert_cmpuint (in->n_layers, ==, 18);
  g_assert_cmpuint (in->n_embd, ==, 640);
  g_assert_cmpuint (in->n_heads, ==, 4);
  g_assert_cmpuint (in->n_kv_heads, ==, 1);
  g_assert_cmpuint (in->head_dim, ==, 256);
  g_assert_cmpuint (in->n_vocab, ==, 262144);
  g_assert_true (in->tied_output);
  g_assert_cmpuint (in->sliding_window, ==, 512);
  g_assert_cmpuint (in->swa_pattern, ==, 6); /* no key in the file: llama.cpp's default */
  g_assert_cmpfloat (in->rope_base, ==, 1e6f);
  g_assert_cmpfloat (in->rope_base_local, ==, 1e4f);
  g_assert_cmpfloat (in->attn_scale, ==, 1.0f / 16.0f);
  g_assert_cmpfloat (in->embd_scale, ==, sqrtf (640.0f));
  for (int l = 0; l < 18; l++)
    g_assert_cmpuint (sc_model_layer_window (in, l), ==,
                      l == 5 || l == 11 || l == 17 ? 0 : 512);
  g_assert_cmpint (sc_tokenizer_bos (sc_model_tokenizer (model)), ==, 2);
  g_assert_true (sc_tokenizer_adds_bos (sc_model_tokenizer (model)));
  g_assert_true (sc_tokenizer_is_eog (sc_model_tokenizer (model), 1));   /* <eos> */
  g_assert_true (sc_tokenizer_is_eog (sc_model_tokenizer (model), 106)); /* <end_of_turn> */
}


static int32_t
argmax (const float *v, int n)
{
  int32_t best = 0;

  for (int i = 1; i < n; i++)
    if (v[i] > v[best])
      best = i;
  return best;
}

/* Greedy continuation of @prompt by @n_new tokens (KV cache), decoded. */
static char *
greedy (const char *prompt, int n_new)
{
  const ScTokenizer *tok = sc_model_tokenizer (model);
  const int V = (int) sc_model_info (model)->n_vocab;
  g_autofree float *logits = g_new (float, V);
  int32_t *ids = NULL;
  size_t n = 0;
  ScError err = { 0 };
  GString *out = g_string_new ("");

  g_assert_cmpint (sc_tokenize (tok, prompt, strlen (prompt), true, true, &ids, &n, &err), ==,
                   SC_OK);
  ids = realloc (ids, (n + (size_t) n_new) * sizeof *ids);
  g_assert_nonnull (ids);
  for (int t = 0; t < n_new; t++)
    {
      ScForwardOptions opt = { .keep_kv = true, .n_past = t == 0 ? 0 : (int) n - 1 };
      char piece[64];
      size_t len;

      if (sc_forward (session, ids, (int) n, &opt, logits, &err) != SC_OK)
        g_error ("%s", err.message);
      ids[n] = argmax (logits, V);
      len = sc_token_to_bytes (tok, ids[n], false, piece, sizeof piece);
      g_string_append_len (out, piece, (gssize) MIN (len, sizeof piece));
      n++;
    }
  free (ids);
  return g_string_free (out, FALSE);
}

static void
test_generation (void)
{
  const ScTokenizer *tok = sc_model_tokenizer (model);
  const int V = (int) sc_model_info (model)->n_vocab;
  g_autofree char *paris = greedy ("The capital of France is the city of", 4);
  g_autofree float *logits = g_new (float, V);
  const char *prompt = "The capital of France is";
  int32_t *ids = NULL, paris_id;
  size_t n = 0;
  int rank = 0;
  ScError err = { 0 };

  g_test_message ("greedy: 'The capital of France is the city of' ->%s", paris);
  g_assert_true (g_str_has_prefix (paris, " Paris"));

  g_assert_cmpint (sc_tokenize (tok, prompt, strlen (prompt), true, true, &ids, &n, &err), ==,
                   SC_OK);
  if (sc_forward (session, ids, (int) n, NULL, logits, &err) != SC_OK)
    g_error ("%s", err.message);
  paris_id = sc_tokenizer_find (tok, "\xe2\x96\x81Paris", 8);
  g_assert_cmpint (paris_id, >=, 0);
  for (int v = 0; v < V; v++)
    rank += logits[v] > logits[paris_id];
  g_assert_cmpint (rank, <, 3);
  free (ids);
}

/* The architecture has a backward pass (its numbers against torch autograd are
 * test-grad-arch.c's). */
static void
test_gradients (void)
{
  ScGrad *grad = NULL;
  ScError err = { 0 };

  g_assert_true (sc_model_has_backward (model));
  if (sc_grad_new (session, &grad, &err) != SC_OK)
    g_error ("%s", err.message);
  sc_grad_free (grad);
}

int
main (int argc, char **argv)
{
  const char *env = g_getenv ("SACCADE_GEMMA_MODEL");
  g_autofree char *path = env != NULL ? g_strdup (env) : source_path ("data/models/" GEMMA3_FILE);
  ScError err = { 0 };
  int rc;

  g_test_init (&argc, &argv, NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      printf ("1..0 # SKIP Gemma 3 270M is not fetched (%s); run data/fetch-model.sh gemma3\n",
              path);
      return 77;
    }
  if (sc_model_open (path, 2, &model, &err) != SC_OK)
    g_error ("%s", err.message);
  if ((backend = sc_backend_cpu_new (2, &err)) == NULL
      || sc_session_new (model, backend, &session, &err) != SC_OK)
    g_error ("%s", err.message);

  g_test_add_func ("/gemma3-model/info", test_info);
  g_test_add_func ("/gemma3-model/generation", test_generation);
  g_test_add_func ("/gemma3-model/gradients", test_gradients);
  rc = g_test_run ();
  sc_session_free (session);
  sc_backend_free (backend);
  sc_model_free (model);
  return rc;
}
