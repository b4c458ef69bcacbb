/* test-gemma2-model.c — the gemma2 architecture (model/sc-arch-gemma2.c) against Hugging
 * Face transformers in float64, on a tiny Gemma 2 with random weights (issue 28 item 2).
 *
 * tests/reference/arch_ref_gemma2.py built Gemma2ForCausalLM(Gemma2Config(...)) with seeded
 * random weights (every norm weight drawn), attention soft-cap 4 and final soft-cap 3 (small
 * enough to bend these random numbers), window 8 on layers 0 and 2, wrote
 * tests/reference/tiny-gemma2.gguf as llama.cpp's converter lays Gemma 2 out, and ran it in
 * float64 with transformers' float32 spots patched (arch-fixture-gemma2.{json,f32}): every
 * position's logits and every head's probabilities on 96 random ids. Here:
 *  - the file loads as gemma2: both soft-caps, the window and its pattern, NeoX RoPE base
 *    10^4, embeddings scaled by sqrt(32), tied output;
 *  - logits and every probability within REF_BOUND on cpu-ref and CPU_BOUND on cpu, whole and
 *    through the KV cache;
 *  - every logit against llama.cpp within LLAMACPP_BOUND (arch-llamacpp.*);
 *  - the output head (soft-capped) is the same in sc_forward, kept logits and unembed;
 *  - the backward through both soft-caps: d log p(top-1) / d input embeddings against torch
 *    autograd in float64, within GRAD_BOUND of its largest component (cpu and cpu-ref);
 *  - refusals by name: a tensor gemma2 does not read, a negative soft-cap, DLA (soft-capped
 *    logits are no sum of parts), QK attribution (nor is a capped score).
 * That the comparison needs each soft-cap: arch_ref_gemma2.py --no-attn-softcap and
 * --no-final-softcap write fixtures of transformers without one of them on the same file;
 * this test fails on both (README section 12).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-backward.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/study/sc-dla.h"
#include "engine/study/sc-qk-study.h"
#include "sc-test-fixture.h"

/* as test-gpt2-model.c: float32 rounding of logits below 3 and probabilities <= 1 */
#define REF_BOUND 1e-5
#define CPU_BOUND 2e-5
/* the backward in float32 against float64 autograd, relative to the largest component */
#define GRAD_BOUND 2e-5
/* against llama.cpp on the same weights (tests/reference/llamacpp_arch.py, F32 KV cache): ggml's
 * CPU GELU rounds its input to fp16 and reads an fp16 table, which puts llama.cpp 3.2e-3 from
 * transformers' float64 logits (gpt2, where the script emulates that GELU, goes from 6.2e-3
 * to 5.7e-4); measured 3.2e-3 (cpu-ref and cpu). A looser check than the 1e-5 against
 * transformers above, which holds the GELU's form. */
#define LLAMACPP_BOUND 5e-3

static ScModel *model;
static JsonParser *parser;
static JsonObject *fixture;
static GMappedFile *data;
static char *model_path;

static void
test_info (void)
{
  const ScModelInfo *in = sc_model_info (model);

  g_assert_cmpstr (in->arch_name, ==, "gemma2");
  g_assert_cmpint (in->arch, ==, SC_ARCH_GEMMA2);
  g_assert_cmpuint (in->n_layers, ==, 4);
  g_assert_cmpuint (in->n_embd, ==, 32);
  g_assert_cmpuint (in->n_heads, ==, 4);
  g_assert_cmpuint (in->n_kv_heads, ==, 2);
  g_assert_cmpuint (in->head_dim, ==, 16);
  g_assert_cmpfloat (in->rope_base, ==, 1e4f);
  g_assert_cmpfloat (in->rope_base_local, ==, 1e4f);
  g_assert_cmpfloat (in->attn_scale, ==, 0.25f);
  g_assert_cmpfloat (in->attn_softcap, ==, 4.0f);
  g_assert_cmpfloat (in->final_softcap, ==, 3.0f);
  g_assert_cmpfloat (in->embd_scale, ==, sqrtf (32.0f));
  g_assert_true (in->tied_output);
  g_assert_true (sc_model_has_backward (model));
  g_assert_cmpuint (in->sliding_window, ==, 8);
  g_assert_cmpuint (sc_model_layer_window (in, 0), ==, 8);
  g_assert_cmpuint (sc_model_layer_window (in, 1), ==, 0);
  g_assert_cmpuint (sc_model_layer_window (in, 2), ==, 8);
  g_assert_cmpuint (sc_model_layer_window (in, 3), ==, 0);
}

static void
test_output_head (void)
{
  const ScModelInfo *in = sc_model_info (model);
  const int V = (int) in->n_vocab, E = (int) in->n_embd, L = (int) in->n_layers;
  g_autofree int32_t *ids = NULL;
  g_autofree float *logits = NULL, *kept = NULL, *lens = NULL, *x = NULL;
  ScBackend *b = sc_backend_cpu_ref_new ();
  ScForwardOptions opt = { .all_logits = true, .keep_residuals = true };
  ScSession *s = NULL;
  ScError err = { 0 };
  double worst = 0.0;
  int n;

  ids = sc_test_fixture_ids (json_object_get_array_member (fixture, "ids"), &n);
  logits = g_new (float, (size_t) n * V);
  kept = g_new (float, (size_t) n * V);
  lens = g_new (float, (size_t) n * V);
  x = g_new (float, (size_t) n * E);
  g_assert_cmpint (sc_session_new (model, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_forward (s, ids, n, &opt, logits, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_kept_logits (s, 0, n, kept, &err), ==, SC_OK);
  for (int i = 0; i < n; i++)
    g_assert_cmpint (sc_session_residual (s, L, i, x + (size_t) i * E, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_unembed (s, x, n, lens, &err), ==, SC_OK);
  for (size_t k = 0; k < (size_t) n * V; k++)
    {
      g_assert_cmpfloat (kept[k], ==, logits[k]);
      worst = fmax (worst, fabs ((double) lens[k] - logits[k]));
    }
  g_assert_cmpfloat (worst, <=, 1e-6);
  sc_session_free (s);
  sc_backend_free (b);
}

/* Both soft-caps backwards: a build without the attention cap's derivative misses by 0.61 of
 * the gradient's largest component, one without the final cap's by 4.7 (both backends). */
static void
test_gradients (void)
{
  sc_test_arch_check_gradients ("gemma2", model, fixture, data, GRAD_BOUND, REF_BOUND, CPU_BOUND);
}

static void
test_refusals (void)
{
  /* the key, its type (f32, 6) and value 4; -4 is no cap */
  static const char key[] = "gemma2.attn_logit_softcapping";
  guint8 from[sizeof key - 1 + 8], to[sizeof from];
  const guint32 type = 6;
  const float four = 4.0f, minus = -4.0f;
  g_autofree int32_t *ids = NULL;
  ScBackend *b = sc_backend_cpu_ref_new ();
  ScSession *s = NULL;
  ScDlaResult *dla = NULL;
  ScQkResult *qk = NULL;
  const ScQkParams qp = { 1, 0, 20, 10 };
  ScError err = { 0 };
  char *tmp;
  int n;

  memcpy (from, key, sizeof key - 1);
  memcpy (from + sizeof key - 1, &type, 4);
  memcpy (from + sizeof key + 3, &four, 4);
  memcpy (to, from, sizeof from);
  memcpy (to + sizeof key + 3, &minus, 4);
  tmp = sc_test_edited_copy (model_path, "gemma2-XXXXXX.gguf", from, to, sizeof from);
  sc_test_assert_refused (tmp, SC_ERR_RANGE, "'gemma2.attn_logit_softcapping' is -4", "positive");
  g_unlink (tmp);
  g_free (tmp);

  tmp = sc_test_edited_copy (model_path, "gemma2-XXXXXX.gguf",
                             "blk.2.ffn_up.weight", "blk.2.attn_qkv.bias", 19);
  sc_test_assert_refused (tmp, SC_ERR_UNSUPPORTED, "'blk.2.attn_qkv.bias'", "gemma2");
  g_unlink (tmp);
  g_free (tmp);

  /* what has no soft-capped form yet is refused naming the architecture */
  ids = sc_test_fixture_ids (json_object_get_array_member (fixture, "ids"), &n);
  g_assert_cmpint (sc_session_new (model, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_qk_run (s, model, ids, n, &qp, &qk, &err), ==, SC_ERR_UNSUPPORTED);
  printf ("# refused: %s\n", err.message);
  g_assert_nonnull (strstr (err.message, "'gemma2'"));
  g_assert_cmpint (sc_dla_run (s, model, ids, n, -1, -1, &dla, &err), ==, SC_ERR_UNSUPPORTED);
  printf ("# refused: %s\n", err.message);
  g_assert_nonnull (strstr (err.message, "soft-capped"));
  sc_session_free (s);
  sc_backend_free (b);
}

static void
test_vs_llamacpp (void)
{
  sc_test_arch_check_llamacpp ("gemma2", model, fixture, LLAMACPP_BOUND);
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  sc_test_arch_open ("arch-fixture-gemma2.json", &parser, &fixture, &data, &model_path, &model);

  g_test_add_func ("/gemma2/model/info", test_info);
  sc_test_arch_add_vs_transformers ("gemma2", model, fixture, data, REF_BOUND, CPU_BOUND);
  g_test_add_func ("/gemma2/model/vs-llamacpp", test_vs_llamacpp);
  g_test_add_func ("/gemma2/model/output-head", test_output_head);
  g_test_add_func ("/gemma2/model/gradients", test_gradients);
  g_test_add_func ("/gemma2/model/refusals", test_refusals);
  rc = g_test_run ();
  sc_model_free (model);
  g_mapped_file_unref (data);
  g_object_unref (parser);
  g_free (model_path);
  return rc;
}
