/* test-phi3-model.c — the phi3 architecture (model/sc-arch-phi3.c) against Hugging Face
 * transformers in float64, on a tiny Phi-3 with random weights (issue 28 item 2).
 *
 * tests/reference/arch_ref_phi3.py built Phi3ForCausalLM(Phi3Config(...)) with seeded random
 * weights (every RMSNorm weight drawn), a partial rotary factor of 0.75, 4 query heads over 2
 * KV heads and a sliding window of 32, wrote tests/reference/tiny-phi3.gguf as llama.cpp's
 * converter lays Phi-3 out (fused attn_qkv, fused ffn_up holding gate then up, untied
 * output), and ran it in float64 with transformers' float32 spots patched
 * (arch-fixture-phi3.{json,f32}): every position's logits and every head's probabilities on
 * 96 random ids, three windows long. Here:
 *  - the file loads as phi3: head_dim 8 of which n_rot 6 turn, NeoX RoPE base 10^4, window
 *    32 on every layer, separate output matrix, the fused tensors split at load;
 *  - logits and every probability within REF_BOUND on cpu-ref and CPU_BOUND on cpu, whole and
 *    through the KV cache;
 *  - the backward: d log p(top-1) / d input embeddings against torch autograd through the
 *    same transformers model in float64, within GRAD_BOUND of the largest component;
 *  - that the comparison sees each choice the architecture makes: the same file run with
 *    gate and up swapped, with RoPE on adjacent pairs (llama's) instead of NeoX's, or without
 *    the window (as llama.cpp runs it) is off by far more than the bound (WRONG_MIN);
 *  - refusals by name: LongRoPE's factor tensor, a tensor phi3 does not read.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "sc-test-fixture.h"

/* as test-gpt2-model.c: float32 rounding of logits of std 1.6 and probabilities <= 1 */
#define REF_BOUND 1e-5
#define CPU_BOUND 2e-5
/* the backward in float32 against float64 autograd, relative to the largest component */
#define GRAD_BOUND 2e-5
/* a wrong variant must miss the logits by at least this: 10^4 times REF_BOUND, a tenth of a
 * logit of std 1.6 (the margins measured are printed and in docs/models.md) */
#define WRONG_MIN 0.1

static ScModel *model;
static JsonParser *parser;
static JsonObject *fixture;
static GMappedFile *data;
static char *model_path;

static void
test_info (void)
{
  const ScModelInfo *in = sc_model_info (model);
  /* the file form only: the comparisons below run on it (sc_layer_bind_view); the float
   * view is made on the copies of the wrong variants and by the gradients, last */
  const ScLayerWeights *w = &sc_model_weights_packed (model)->layers[0];
  const size_t E = 32, F = 64;

  g_assert_cmpstr (in->arch_name, ==, "phi3");
  g_assert_cmpint (in->arch, ==, SC_ARCH_PHI3);
  g_assert_cmpuint (in->n_layers, ==, 3);
  g_assert_cmpuint (in->n_embd, ==, E);
  g_assert_cmpuint (in->n_heads, ==, 4);
  g_assert_cmpuint (in->n_kv_heads, ==, 2);
  g_assert_cmpuint (in->head_dim, ==, 8);
  g_assert_cmpuint (in->n_rot, ==, 6);
  g_assert_cmpuint (in->n_ff, ==, F);
  g_assert_cmpfloat (in->rope_base, ==, 1e4f);
  g_assert_cmpfloat (in->norm_eps, ==, 1e-5f);
  g_assert_false (in->tied_output);
  g_assert_false (in->layer_norm);
  g_assert_false (in->learned_positions);
  g_assert_cmpuint (in->n_rope_freq, ==, 0);
  g_assert_cmpuint (in->sliding_window, ==, 32);
  for (int l = 0; l < 3; l++)
    g_assert_cmpuint (sc_model_layer_window (in, l), ==, 32);
  g_assert_true (sc_model_has_backward (model));
  /* the fused tensors as the file has them: Q|K|V in wq's place, gate|up in w_gate's */
  g_assert_cmpint (w->src_wq.n_parts, ==, 1);
  g_assert_cmpint (w->src_wq.parts[0].rows, ==, 32 + 2 * 16);
  g_assert_cmpint (w->src_wk.n_parts, ==, 0);
  g_assert_cmpint (w->src_wv.n_parts, ==, 0);
  g_assert_cmpint (w->src_w_gate.n_parts, ==, 1);
  g_assert_cmpint (w->src_w_gate.parts[0].rows, ==, 2 * F);
  g_assert_cmpint (w->src_w_up.n_parts, ==, 0);
  g_assert_cmpint (w->src_w_gate.cols, ==, E);
  g_assert_null (w->bq);
}

/* @m (the fixture's file, opened anew and edited) against the fixture on cpu-ref: must miss
 * the logits by WRONG_MIN or more. */
static void
assert_wrong (ScModel *m, const char *what)
{
  ScBackend *b = sc_backend_cpu_ref_new ();
  double le, pe;

  sc_test_arch_compare (m, b, fixture, data, 0, &le, &pe);
  printf ("# phi3 %s vs transformers: max |dlogit| %.3g, max |dP| %.3g (must be >= %g)\n",
          what, le, pe, WRONG_MIN);
  g_assert_cmpfloat (le, >=, WRONG_MIN);
  sc_backend_free (b);
}

static ScModel *
open_copy (const char *path)
{
  ScModel *m = NULL;
  ScError err = { 0 };

  if (sc_model_open (path, 1, &m, &err) != SC_OK)
    g_error ("%s", err.message);
  return m;
}

/* Gate and up swapped: each layer's two halves of ffn_up exchanged in the float view the
 * forward pass binds (sc_layer_bind_view). */
static void
test_wrong_gate_up_order (void)
{
  ScModel *m = open_copy (model_path);
  const ScModelInfo *in = sc_model_info (m);
  const ScWeights *ws = sc_model_weights (m);
  const size_t E = in->n_embd, FE = (size_t) in->n_ff * E,
               Q = (size_t) in->n_heads * in->head_dim, KV = (size_t) in->n_kv_heads * in->head_dim;
  g_autofree float *tmp = g_new (float, FE);

  for (uint32_t l = 0; l < in->n_layers; l++)
    {
      ScLayerWeights *w = &ws->layers[l];
      /* the float view of the fused tensors, split at load: K and V rows after Q's, up rows
       * after the gate's */
      g_assert_true (w->wk == w->wq + Q * E && w->wv == w->wk + KV * E);
      g_assert_true (w->w_up == w->w_gate + FE);
      memcpy (tmp, w->w_gate, FE * sizeof (float));
      memcpy (w->w_gate, w->w_up, FE * sizeof (float));
      memcpy (w->w_up, tmp, FE * sizeof (float));
    }
  assert_wrong (m, "with gate and up swapped");
  sc_model_free (m);
}

/* RoPE on adjacent pairs: NeoX turns dims (c, c + n_rot/2) of a head together, llama's GGUF
 * convention (2c, 2c + 1). Moving row 2c of each Q and K head to c and row 2c + 1 to
 * c + n_rot/2 makes the NeoX rotation turn exactly the pairs the adjacent one would turn on
 * the file's rows, and leaves every dot product otherwise unchanged: what the model would
 * compute with llama's RoPE. */
static void
test_wrong_rope_style (void)
{
  ScModel *m = open_copy (model_path);
  const ScModelInfo *in = sc_model_info (m);
  const ScWeights *ws = sc_model_weights (m);
  const size_t E = in->n_embd, d = in->head_dim, half = in->n_rot / 2;
  const size_t n_heads = in->n_heads + in->n_kv_heads; /* Q's heads, then K's: back to back */
  g_autofree float *head = g_new (float, d * E);

  for (uint32_t l = 0; l < in->n_layers; l++)
    for (size_t h = 0; h < n_heads; h++)
      {
        float *rows = ws->layers[l].wq + h * d * E;
        memcpy (head, rows, d * E * sizeof (float));
        for (size_t c = 0; c < half; c++)
          {
            memcpy (rows + c * E, head + 2 * c * E, E * sizeof (float));
            memcpy (rows + (c + half) * E, head + (2 * c + 1) * E, E * sizeof (float));
          }
      }
  assert_wrong (m, "with RoPE on adjacent pairs");
  sc_model_free (m);
}

/* The key phi3.attention.sliding_window, its type (u32) and its value */
static void
window_key (guint8 *buf, guint32 value)
{
  static const char key[] = "phi3.attention.sliding_window";
  const guint32 type = 4;

  memcpy (buf, key, sizeof key - 1);
  memcpy (buf + sizeof key - 1, &type, 4);
  memcpy (buf + sizeof key + 3, &value, 4);
}

/* Without the window, as llama.cpp runs a phi3 file: 0 in the key (Phi-4's "none"). */
static void
test_wrong_no_window (void)
{
  guint8 from[sizeof "phi3.attention.sliding_window" - 1 + 8], to[sizeof from];
  ScModel *m;
  char *tmp;

  window_key (from, 32);
  window_key (to, 0);
  tmp = sc_test_edited_copy (model_path, "phi3-XXXXXX.gguf", from, to, sizeof from);
  m = open_copy (tmp);
  g_assert_cmpuint (sc_model_info (m)->sliding_window, ==, 0);
  assert_wrong (m, "without its window");
  sc_model_free (m);
  g_unlink (tmp);
  g_free (tmp);

  /* a window as long as the context (128) masks nothing: dropped, every layer global */
  window_key (to, 128);
  tmp = sc_test_edited_copy (model_path, "phi3-XXXXXX.gguf", from, to, sizeof from);
  m = open_copy (tmp);
  g_assert_cmpuint (sc_model_info (m)->sliding_window, ==, 0);
  g_assert_cmpuint (sc_model_layer_window (sc_model_info (m), 0), ==, 0);
  sc_model_free (m);
  g_unlink (tmp);
  g_free (tmp);
}

static void
test_refusals (void)
{
  char *tmp;

  /* LongRoPE (Phi-3's 128k models): refused by its factors' name, before the missing layer
   * tensor (renamed from a name of the same length) is looked for */
  tmp = sc_test_edited_copy (model_path, "phi3-XXXXXX.gguf", "blk.1.attn_output.weight",
                             "rope_factors_long.weight", 24);
  sc_test_assert_refused (tmp, SC_ERR_UNSUPPORTED, "'rope_factors_long.weight'", "LongRoPE");
  g_unlink (tmp);
  g_free (tmp);

  /* a separate gate (llama's layout): not a tensor phi3 reads */
  tmp = sc_test_edited_copy (model_path, "phi3-XXXXXX.gguf", "blk.2.ffn_down.weight",
                             "blk.2.ffn_gate.weight", 21);
  sc_test_assert_refused (tmp, SC_ERR_UNSUPPORTED, "'blk.2.ffn_gate.weight'", "phi3");
  g_unlink (tmp);
  g_free (tmp);
}

static void
test_gradients (void)
{
  sc_test_arch_check_gradients ("phi3", model, fixture, data, GRAD_BOUND, REF_BOUND, CPU_BOUND);
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  sc_test_arch_open ("arch-fixture-phi3.json", &parser, &fixture, &data, &model_path, &model);

  g_test_add_func ("/phi3/model/info", test_info);
  sc_test_arch_add_vs_transformers ("phi3", model, fixture, data, REF_BOUND, CPU_BOUND);
  g_test_add_func ("/phi3/model/wrong-gate-up-order", test_wrong_gate_up_order);
  g_test_add_func ("/phi3/model/wrong-rope-style", test_wrong_rope_style);
  g_test_add_func ("/phi3/model/wrong-no-window", test_wrong_no_window);
  g_test_add_func ("/phi3/model/refusals", test_refusals);
  g_test_add_func ("/phi3/model/gradients", test_gradients);
  rc = g_test_run ();
  sc_model_free (model);
  g_mapped_file_unref (data);
  g_object_unref (parser);
  g_free (model_path);
  return rc;
}
