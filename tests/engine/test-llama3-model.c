/* test-llama3-model.c — Llama 3's RoPE frequency scaling on the llama architecture
 * (model/sc-arch-llama.c, the backends' rope_freq) against Hugging Face transformers in
 * float64, on a tiny Llama with random weights (issue 28 item 2).
 *
 * tests/reference/arch_ref_llama3.py built LlamaForCausalLM(LlamaConfig(...)) with
 * rope_type "llama3" (factor 8, low 1, high 4, original context 32) and seeded random
 * weights, wrote tests/reference/tiny-llama3.gguf as llama.cpp's converter lays it out (Q, K
 * rows permuted for adjacent pairs, the per-pair factors as rope_freqs.weight), and ran it in
 * float64 with transformers' float32 spots patched (arch-fixture-llama3.{json,f32}): every
 * position's logits and every head's probabilities on 96 random ids, three times the
 * original context. Here:
 *  - the file loads as llama with its 8 factors (1, 3.2995, then 8 six times);
 *  - logits and every probability within REF_BOUND on cpu-ref and CPU_BOUND on cpu, whole and
 *    through the KV cache;
 *  - every logit against llama.cpp on the same file within LLAMACPP_BOUND (arch-llamacpp.*);
 *  - the backward: d log p(top-1) / d input embeddings against torch autograd, within
 *    GRAD_BOUND of the largest component;
 *  - QK attribution: the parts of a score through the scaled RoPE sum to the forward's score;
 *  - refusals by name: rope_freqs.weight of the wrong length, a factor that is not positive,
 *    a tensor llama does not read.
 * That the comparison needs the factors: arch_ref_llama3.py --no-scaling writes a fixture of
 * transformers without them on the same file; this test fails on it (README section 12).
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
#include "engine/study/sc-qk-study.h"
#include "sc-test-fixture.h"

/* as test-gpt2-model.c: float32 rounding of logits of std 1.6 and probabilities <= 1 */
#define REF_BOUND 1e-5
#define CPU_BOUND 2e-5
/* against llama.cpp on the same file (tests/reference/llamacpp_arch.py, F32 KV cache): both
 * sides are float32 arithmetic on the same F32 weights; llama.cpp is within 9.2e-6 of
 * transformers' float64 logits and we within CPU_BOUND, so 4e-5 is that sum with headroom;
 * measured 1.5e-5 (cpu-ref) and 1.2e-5 (cpu). */
#define LLAMACPP_BOUND 4e-5
/* the backward in float32 against float64 autograd, relative to the largest component */
#define GRAD_BOUND 2e-5

static ScModel *model;
static JsonParser *parser;
static JsonObject *fixture;
static GMappedFile *data;
static char *model_path;

static void
test_info (void)
{
  const ScModelInfo *in = sc_model_info (model);
  JsonArray *ff = json_object_get_array_member (json_object_get_object_member (fixture, "config"),
                                                "rope_freqs");

  g_assert_cmpstr (in->arch_name, ==, "llama");
  g_assert_cmpint (in->arch, ==, SC_ARCH_LLAMA);
  g_assert_cmpuint (in->n_layers, ==, 3);
  g_assert_cmpuint (in->n_embd, ==, 32);
  g_assert_cmpuint (in->n_heads, ==, 4);
  g_assert_cmpuint (in->n_kv_heads, ==, 2);
  g_assert_cmpuint (in->head_dim, ==, 16);
  g_assert_cmpuint (in->n_rot, ==, 16);
  g_assert_cmpfloat (in->rope_base, ==, 1e4f);
  g_assert_true (in->tied_output);
  g_assert_true (sc_model_has_backward (model));
  g_assert_cmpuint (in->n_rope_freq, ==, 8);
  g_assert_cmpuint (json_array_get_length (ff), ==, 8);
  for (guint c = 0; c < 8; c++)
    g_assert_cmpfloat (in->rope_freq[c], ==, (float) json_array_get_double_element (ff, c));
  g_assert_cmpfloat (in->rope_freq[0], ==, 1.0f);
  g_assert_cmpfloat (in->rope_freq[7], ==, 8.0f);
}

static void
test_refusals (void)
{
  /* the tensor info of rope_freqs.weight: its name, then n_dims 1 (u32) and ne[0] 8 (i64) */
  static const char name[] = "rope_freqs.weight";
  guint8 from[sizeof name - 1 + 12], to[sizeof from];
  const guint32 one = 1;
  const gint64 eight = 8, four = 4;
  float ff[8], bad[8];
  JsonArray *fa = json_object_get_array_member (json_object_get_object_member (fixture, "config"),
                                                "rope_freqs");
  char *tmp;

  memcpy (from, name, sizeof name - 1);
  memcpy (from + sizeof name - 1, &one, 4);
  memcpy (from + sizeof name + 3, &eight, 8);
  memcpy (to, from, sizeof from);
  memcpy (to + sizeof name + 3, &four, 8);
  /* 4 factors where 16 rotated dimensions need 8: refused by name, not read past */
  tmp = sc_test_edited_copy (model_path, "llama3-XXXXXX.gguf", from, to, sizeof from);
  sc_test_assert_refused (tmp, SC_ERR_FORMAT, "'rope_freqs.weight'", "needs 8");
  g_unlink (tmp);
  g_free (tmp);

  /* a factor of -3.2995: the angle would turn backwards; refused with its index */
  for (guint c = 0; c < 8; c++)
    ff[c] = bad[c] = (float) json_array_get_double_element (fa, c);
  bad[1] = -ff[1];
  tmp = sc_test_edited_copy (model_path, "llama3-XXXXXX.gguf", ff, bad, sizeof ff);
  sc_test_assert_refused (tmp, SC_ERR_FORMAT, "'rope_freqs.weight': factor 1", "positive");
  g_unlink (tmp);
  g_free (tmp);

  /* a tensor llama does not read (a name of the same length) is refused by name: before
   * rope_freqs, a llama file's extra tensors were silently ignored */
  tmp = sc_test_edited_copy (model_path, "llama3-XXXXXX.gguf",
                             "blk.2.ffn_up.weight", "blk.2.attn_qkv.bias", 19);
  sc_test_assert_refused (tmp, SC_ERR_UNSUPPORTED, "'blk.2.attn_qkv.bias'", "llama");
  g_unlink (tmp);
  g_free (tmp);
}

static void
test_gradients (void)
{
  sc_test_arch_check_gradients ("llama3", model, fixture, data, GRAD_BOUND, REF_BOUND, CPU_BOUND);
}

static void
test_qk_attribution (void)
{
  static const ScQkParams cases[] = { { 2, 3, 95, 40 }, { 1, 0, 70, 69 }, { 2, 1, 50, 0 } };

  sc_test_arch_check_qk ("llama3", model, fixture, cases, G_N_ELEMENTS (cases), 1e-5);
}

static void
test_vs_llamacpp (void)
{
  sc_test_arch_check_llamacpp ("llama3", model, fixture, LLAMACPP_BOUND);
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  sc_test_arch_open ("arch-fixture-llama3.json", &parser, &fixture, &data, &model_path, &model);

  g_test_add_func ("/llama3/model/info", test_info);
  sc_test_arch_add_vs_transformers ("llama3", model, fixture, data, REF_BOUND, CPU_BOUND);
  g_test_add_func ("/llama3/model/vs-llamacpp", test_vs_llamacpp);
  g_test_add_func ("/llama3/model/refusals", test_refusals);
  g_test_add_func ("/llama3/model/gradients", test_gradients);
  g_test_add_func ("/llama3/model/qk-attribution", test_qk_attribution);
  rc = g_test_run ();
  sc_model_free (model);
  g_mapped_file_unref (data);
  g_object_unref (parser);
  g_free (model_path);
  return rc;
}
