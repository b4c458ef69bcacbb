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
check_backend (ScBackend *b, double bound)
{
  double le, pe, le2, pe2;

  sc_test_arch_compare (model, b, fixture, data, 0, &le, &pe);
  sc_test_arch_compare (model, b, fixture, data, 61, &le2, &pe2);
  printf ("# llama3 vs transformers float64 on %s: max |dlogit| %.3g, max |dP| %.3g (whole "
          "run); %.3g, %.3g (rows 61.. through the KV cache); bound %.0e\n",
          sc_backend_name (b), le, pe, le2, pe2, bound);
  g_assert_cmpfloat (le, <=, bound);
  g_assert_cmpfloat (pe, <=, bound);
  g_assert_cmpfloat (le2, <=, bound);
  g_assert_cmpfloat (pe2, <=, bound);
}
static void
test_vs_transformers_reference_backend (void)
{
  ScBackend *b = sc_backend_cpu_ref_new ();

  check_backend (b, REF_BOUND);
  sc_backend_free (b);
}

static void
test_vs_transformers_cpu (void)
{
  ScError err = { 0 };
  ScBackend *b = sc_backend_cpu_new (2, &err);

  if (b == NULL)
    g_error ("%s", err.message);
  check_backend (b, CPU_BOUND);
  sc_backend_free (b);
}

/* The model file's bytes with @edit applied, written to a temporary file whose name is
 * returned; the edit must match exactly once. */
static char *
edited_copy (const void *from, const void *to, gsize n)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *bytes = NULL;
  char *tmp = NULL;
  gsize len, hits = 0;
  int fd;

  g_assert_true (g_file_get_contents (model_path, &bytes, &len, &error));
  for (gsize i = 0; i + n <= len; i++)
    if (memcmp (bytes + i, from, n) == 0)
      memcpy (bytes + i, to, n), hits++;
  g_assert_cmpuint (hits, ==, 1);
  fd = g_file_open_tmp ("llama3-XXXXXX.gguf", &tmp, &error);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
  g_assert_true (g_file_set_contents (tmp, bytes, (gssize) len, &error));
  return tmp;
}

/* Opens @path, which must be refused with @status and a message holding @a and @b. */
static void
assert_refused (const char *path, ScStatus status, const char *a, const char *b)
{
  ScModel *m = NULL;
  ScError err = { 0 };

  if (sc_model_open (path, 1, &m, &err) != status)
    g_error ("expected %s, got: %s", sc_status_name (status), err.message);
  printf ("# refused: %s\n", err.message);
  g_assert_nonnull (strstr (err.message, a));
  g_assert_nonnull (strstr (err.message, b));
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
  tmp = edited_copy (from, to, sizeof from);
  assert_refused (tmp, SC_ERR_FORMAT, "'rope_freqs.weight'", "needs 8");
  g_unlink (tmp);
  g_free (tmp);

  /* a factor of -3.2995: the angle would turn backwards; refused with its index */
  for (guint c = 0; c < 8; c++)
    ff[c] = bad[c] = (float) json_array_get_double_element (fa, c);
  bad[1] = -ff[1];
  tmp = edited_copy (ff, bad, sizeof ff);
  assert_refused (tmp, SC_ERR_FORMAT, "'rope_freqs.weight': factor 1", "positive");
  g_unlink (tmp);
  g_free (tmp);

  /* a tensor llama does not read (a name of the same length) is refused by name: before
   * rope_freqs, a llama file's extra tensors were silently ignored */
  tmp = edited_copy ("blk.2.ffn_up.weight", "blk.2.attn_qkv.bias", 19);
  assert_refused (tmp, SC_ERR_UNSUPPORTED, "'blk.2.attn_qkv.bias'", "llama");
  g_unlink (tmp);
  g_free (tmp);
}

/* The backward: d log p(top-1 at the last position) / d input embeddings against torch
 * autograd through transformers in float64 (the fixture's "grad"), on @b. */
static double
grad_error (ScBackend *b, double *value_err)
{
  const ScModelInfo *in = sc_model_info (model);
  JsonObject *go = json_object_get_object_member (fixture, "grad");
  const float *ref = (const float *) g_mapped_file_get_contents (data)
                     + json_object_get_int_member (go, "offset");
  const int E = (int) in->n_embd;
  g_autofree int32_t *ids = NULL;
  g_autofree float *grad = NULL;
  ScObjective obj = { .kind = SC_OBJECTIVE_LOGP, .position = -1,
                      .target = (int32_t) json_object_get_int_member (go, "target") };
  ScGradOptions opt = { 0 };
  ScSession *s = NULL;
  ScGrad *g = NULL;
  ScError err = { 0 };
  double value = 0.0, worst = 0.0, scale = 0.0;
  int n;

  ids = sc_test_fixture_ids (json_object_get_array_member (fixture, "ids"), &n);
  grad = g_new (float, (size_t) n * E);
  g_assert_cmpint (sc_session_new (model, b, &s, &err), ==, SC_OK);
  if (sc_grad_new (s, &g, &err) != SC_OK || sc_grad_forward (g, ids, n, &opt, &err) != SC_OK
      || sc_grad_backward (g, &obj, NULL, NULL, &value, grad, &err) != SC_OK)
    g_error ("llama3 backward: %s", err.message);
  for (size_t k = 0; k < (size_t) n * E; k++)
    {
      worst = fmax (worst, fabs ((double) grad[k] - ref[k]));
      scale = fmax (scale, fabs ((double) ref[k]));
    }
  *value_err = fabs (value - json_object_get_double_member (go, "value"));
  sc_grad_free (g);
  sc_session_free (s);
  return worst / scale;
}

static void
test_gradients (void)
{
  ScError err = { 0 };
  ScBackend *ref = sc_backend_cpu_ref_new (), *cpu = sc_backend_cpu_new (2, &err);
  double vr, vc, er, ec;

  g_assert_nonnull (cpu);
  er = grad_error (ref, &vr);
  ec = grad_error (cpu, &vc);
  printf ("# llama3 gradient of log p vs torch autograd (float64): max |dg| / max |g| %.3g "
          "(cpu-ref), %.3g (cpu); |d log p| %.3g, %.3g; bound %.0e\n", er, ec, vr, vc,
          GRAD_BOUND);
  g_assert_cmpfloat (er, <=, GRAD_BOUND);
  g_assert_cmpfloat (ec, <=, GRAD_BOUND);
  g_assert_cmpfloat (vr, <=, REF_BOUND);
  g_assert_cmpfloat (vc, <=, CPU_BOUND);
  sc_backend_free (ref);
  sc_backend_free (cpu);
}

static void
test_qk_attribution (void)
{
  static const ScQkParams cases[] = { { 2, 3, 95, 40 }, { 1, 0, 70, 69 }, { 2, 1, 50, 0 } };
  g_autofree int32_t *ids = NULL;
  ScBackend *b = sc_backend_cpu_ref_new ();
  ScSession *s = NULL;
  ScError err = { 0 };
  double worst = 0.0;
  int n;

  ids = sc_test_fixture_ids (json_object_get_array_member (fixture, "ids"), &n);
  g_assert_cmpint (sc_session_new (model, b, &s, &err), ==, SC_OK);
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      ScQkResult *r = NULL;
      if (sc_qk_run (s, model, ids, n, &cases[c], &r, &err) != SC_OK)
        g_error ("qk attribution on llama3: %s", err.message);
      g_assert_cmpfloat (fabs (r->score), >, 1e-3);
      worst = fmax (worst, fabs (r->total - r->score) / fabs (r->score));
      sc_qk_result_free (r);
    }
  printf ("# llama3 QK attribution: parts sum to the forward's score within %.3g (relative)\n",
          worst);
  g_assert_cmpfloat (worst, <=, 1e-5);
  sc_session_free (s);
  sc_backend_free (b);
}

int
main (int argc, char **argv)
{
  ScError err = { 0 };
  g_autofree char *sha = NULL;
  int rc;

  g_test_init (&argc, &argv, NULL);
  fixture = sc_test_fixture_json ("arch-fixture-llama3.json", &parser);
  data = sc_test_fixture_map (json_object_get_string_member (fixture, "data_file"));
  model_path = sc_test_reference_path (json_object_get_string_member (fixture, "model_file"));
  sha = sc_test_file_sha256 (model_path);
  if (g_strcmp0 (sha, json_object_get_string_member (fixture, "model_sha256")) != 0)
    g_error ("%s is not the file the fixture was made with (sha256 %s)", model_path, sha);
  if (sc_model_open (model_path, 1, &model, &err) != SC_OK)
    g_error ("%s", err.message);

  g_test_add_func ("/llama3/model/info", test_info);
  g_test_add_func ("/llama3/model/vs-transformers-reference-backend",
                   test_vs_transformers_reference_backend);
  g_test_add_func ("/llama3/model/vs-transformers-cpu", test_vs_transformers_cpu);
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
