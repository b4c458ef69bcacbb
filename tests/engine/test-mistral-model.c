/* test-mistral-model.c — Mistral's sliding window on the llama architecture
 * (model/sc-arch-llama.c) against Hugging Face transformers in float64, on a tiny Mistral with
 * random weights (issue 28 item 2).
 *
 * tests/reference/arch_ref_mistral.py built MistralForCausalLM(MistralConfig(...,
 * sliding_window=16)) with seeded random weights, wrote tests/reference/tiny-mistral.gguf as
 * llama.cpp's converter lays Mistral out (arch "llama") plus llama.attention.sliding_window =
 * 16, which the converter does not write (llama.cpp runs a converted Mistral without its
 * window; docs/models.md), and ran it in float64 (arch-fixture-mistral.{json,f32}): every
 * position's logits and every head's probabilities on 96 random ids, six windows. Here:
 *  - the file loads as llama with a window of 16 on every layer;
 *  - logits and every probability within REF_BOUND on cpu-ref and CPU_BOUND on cpu, whole and
 *    through the KV cache (rows 61.. see only cached keys of their window);
 *  - the backward through the windowed attention against torch autograd, within GRAD_BOUND
 *    of the largest component;
 *  - QK attribution: the parts of a score inside the window sum to the forward's score;
 *  - refusals by name: a window larger than the context, a tensor llama does not read.
 * That the comparison needs the window: arch_ref_mistral.py --no-window writes a fixture of
 * transformers without it on the same file; this test fails on it (README section 12).
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

/* as test-gpt2-model.c: float32 rounding of logits of std 1.4 and probabilities <= 1; the
 * logit bound is at the float32 floor of this model: seeds 32 and 34 of arch_ref_mistral.py
 * give 1.06e-5 and 1.12e-5 on cpu-ref, the committed seed 33 6.3e-6 (docs/models.md) */
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
  g_assert_cmpuint (in->n_rope_freq, ==, 0);
  g_assert_cmpuint (in->sliding_window, ==, 16);
  g_assert_cmpfloat (in->rope_base_local, ==, in->rope_base);
  for (int l = 0; l < 3; l++)
    g_assert_cmpuint (sc_model_layer_window (in, l), ==, 16);
}

static void
check_backend (ScBackend *b, double bound)
{
  double le, pe, le2, pe2;

  sc_test_arch_compare (model, b, fixture, data, 0, &le, &pe);
  sc_test_arch_compare (model, b, fixture, data, 61, &le2, &pe2);
  printf ("# mistral vs transformers float64 on %s: max |dlogit| %.3g, max |dP| %.3g (whole "
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
  fd = g_file_open_tmp ("mistral-XXXXXX.gguf", &tmp, &error);
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
  /* the key, then its type (u32, 4) and value 16; 1000 is past the context of 128 */
  static const char key[] = "llama.attention.sliding_window";
  guint8 from[sizeof key - 1 + 8], to[sizeof from];
  const guint32 type = 4, sixteen = 16, big = 1000;
  char *tmp;

  memcpy (from, key, sizeof key - 1);
  memcpy (from + sizeof key - 1, &type, 4);
  memcpy (from + sizeof key + 3, &sixteen, 4);
  memcpy (to, from, sizeof from);
  memcpy (to + sizeof key + 3, &big, 4);
  tmp = edited_copy (from, to, sizeof from);
  assert_refused (tmp, SC_ERR_RANGE, "'llama.attention.sliding_window' is 1000", "context");
  g_unlink (tmp);
  g_free (tmp);

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
    g_error ("mistral backward: %s", err.message);
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
  printf ("# mistral gradient of log p vs torch autograd (float64): max |dg| / max |g| %.3g "
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
  /* keys inside the query's window of 16 */
  static const ScQkParams cases[] = { { 2, 3, 95, 85 }, { 1, 0, 70, 69 }, { 2, 1, 50, 40 } };
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
        g_error ("qk attribution on mistral: %s", err.message);
      g_assert_cmpfloat (fabs (r->score), >, 1e-3);
      worst = fmax (worst, fabs (r->total - r->score) / fabs (r->score));
      sc_qk_result_free (r);
    }
  printf ("# mistral QK attribution: parts sum to the forward's score within %.3g (relative)\n",
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
  fixture = sc_test_fixture_json ("arch-fixture-mistral.json", &parser);
  data = sc_test_fixture_map (json_object_get_string_member (fixture, "data_file"));
  model_path = sc_test_reference_path (json_object_get_string_member (fixture, "model_file"));
  sha = sc_test_file_sha256 (model_path);
  if (g_strcmp0 (sha, json_object_get_string_member (fixture, "model_sha256")) != 0)
    g_error ("%s is not the file the fixture was made with (sha256 %s)", model_path, sha);
  if (sc_model_open (model_path, 1, &model, &err) != SC_OK)
    g_error ("%s", err.message);

  g_test_add_func ("/mistral/model/info", test_info);
  g_test_add_func ("/mistral/model/vs-transformers-reference-backend",
                   test_vs_transformers_reference_backend);
  g_test_add_func ("/mistral/model/vs-transformers-cpu", test_vs_transformers_cpu);
  g_test_add_func ("/mistral/model/refusals", test_refusals);
  g_test_add_func ("/mistral/model/gradients", test_gradients);
  g_test_add_func ("/mistral/model/qk-attribution", test_qk_attribution);
  rc = g_test_run ();
  sc_model_free (model);
  g_mapped_file_unref (data);
  g_object_unref (parser);
  g_free (model_path);
  return rc;
}
