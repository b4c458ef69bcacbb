/* test-cuda-model.c — a whole model on the GPU against the CPU, with every head captured
 * (needs a device; exits 77 without one).
 *
 * The model: SmolLM2-135M from data/models/ when it is there, on a ~300-token prompt;
 * else (a lent GPU machine gets only the working tree, and the model is 98 MB) a model of
 * SmolLM2's shapes built by the test — 576 wide, 9 query heads over 3 KV heads of 64,
 * feed-forward 1536, 8 layers, the test byte vocabulary — with random weights, on 200
 * tokens. The CPU side is "cpu" (OpenBLAS), or "cpu-ref" where OpenBLAS cannot be loaded.
 * The CPU runs with an fp32 observer; "cuda" with the fp16 capture path
 * (ScObserver.observe_f16: the forward pass's route on a GPU, the one
 * sc_store_capture_observer takes). Checked:
 *   - every head reaches observe_f16, packed, in layer order, and nothing reaches
 *     observe(); its values against the CPU's probabilities: max |error| <= 1e-3 (the
 *     issue's bound: fp16 storage is 4.9e-4 relative by itself; the rest is the GPU's
 *     fp16 projections);
 *   - logits of every row: max |error| <= 0.25 and the same top token on >= 99% of rows
 *     (every projection rounds its input and weights to fp16, 2^-11 relative, through
 *     every layer; SmolLM2's logits span ~[-20, 30]);
 *   - a run with no observer (the fused kernel alone: online softmax) against the
 *     capturing run (exact probabilities times V): the same to 1e-3 in every logit.
 * The measured maxima are printed for docs/cuda.md.
 */
#include <math.h>
#include <string.h>

#include "engine/core/sc-math.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/text/sc-tokenizer.h"
#include "gpu-common.h"
#include "gpu-shaped-model.h"
#include "tests/engine/sc-test-gguf.h"

#define PROB_TOL 1e-3
#define LOGIT_TOL 0.25

typedef struct {
  int L, H, n;
  float *cpu;    /* (L, H, n, n) the CPU's probabilities */
  double worst;
  int n_heads_seen, last;
} Obs;

static bool
cpu_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  Obs *o = user;
  memcpy (o->cpu + ((size_t) layer * o->H + head) * o->n * o->n, probs,
          (size_t) n_q * n_k * sizeof (float));
  return true;
}

static bool
gpu_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  g_error ("layer %d head %d came through observe(), not observe_f16", layer, head);
  return false;
}

static bool
gpu_observe_f16 (void *user, int layer, int head, const uint16_t *values, int n_q, int n_k,
                 bool packed)
{
  Obs *o = user;
  const float *want = o->cpu + ((size_t) layer * o->H + head) * o->n * o->n;
  const int at = layer * o->H + head;

  g_assert_true (packed);
  g_assert_cmpint (at, ==, o->last + 1);
  o->last = at;
  o->n_heads_seen++;
  for (int i = 0; i < n_q; i++)
    for (int j = 0; j <= i; j++)
      {
        const double e = fabs ((double) sc_fp16_to_fp32 (values[sc_attn_packed_index (i, j, n_k,
                                                                                    true)])
                               - want[(size_t) i * n_k + j]);
        if (e > PROB_TOL)
          g_error ("layer %d head %d row %d key %d: |error| %.3g > %g", layer, head, i, j, e,
                   PROB_TOL);
        o->worst = MAX (o->worst, e);
      }
  return true;
}

static void
run (ScModel *m, ScBackend *b, const int32_t *ids, int n, const ScObserver *obs, float *logits)
{
  ScForwardOptions fo = { .observer = obs, .all_logits = true };
  ScError err = { SC_OK, "" };
  ScSession *s = NULL;

  if (sc_session_new (m, b, &s, &err) != SC_OK || sc_forward (s, ids, n, &fo, logits, &err)
                                                      != SC_OK)
    g_error ("%s: %s", sc_backend_name (b), err.message);
  sc_session_free (s);
}

int
main (int argc, char **argv)
{
  g_autofree char *path = g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"), "data", "models",
                                            "SmolLM2-135M-Instruct.Q4_1.gguf", NULL);
  g_autoptr (GString) text = g_string_new (NULL);
  GBytes *shaped = NULL;
  ScBackend *gpu, *cpu;
  ScModel *m = NULL;
  ScError err = { SC_OK, "" };
  int32_t *ids = NULL;
  size_t n_ids = 0;
  Obs o = { 0 };
  ScObserver co = { NULL, cpu_observe, &o }, go = { NULL, gpu_observe, &o };
  float *lc, *lg, *lf;
  double worst_logit = 0.0, worst_fused = 0.0;
  int agree = 0, V;

  g_test_init (&argc, &argv, NULL);
  gpu = gpu_backend_or_skip ("test-cuda-model");
  if (g_file_test (path, G_FILE_TEST_EXISTS))
    {
      if (sc_model_open (path, 4, &m, &err) != SC_OK)
        g_error ("%s", err.message);
      for (int i = 0; i < 12; i++)
        g_string_append (text, "The quick brown fox jumps over the lazy dog while the cat, who "
                               "had seen it all before, keeps counting: one, two, three. ");
      if (sc_tokenize (sc_model_tokenizer (m), text->str, text->len, true, true, &ids, &n_ids,
                       &err) != SC_OK)
        g_error ("%s", err.message);
      printf ("# SmolLM2-135M (%s)\n", path);
    }
  else
    {
      shaped = gpu_smollm2_shaped (8);
      m = sc_test_model_open_bytes (shaped);
      n_ids = 200;
      ids = malloc (n_ids * sizeof *ids);
      for (size_t i = 0; i < n_ids; i++)
        ids[i] = (int32_t) ((i * 131 + 7) % 264);
      printf ("# %s is absent: a SmolLM2-shaped model with random weights, 8 layers\n", path);
    }
  o.L = (int) sc_model_info (m)->n_layers;
  o.H = (int) sc_model_info (m)->n_heads;
  o.n = (int) n_ids;
  o.last = -1;
  V = (int) sc_model_info (m)->n_vocab;
  o.cpu = g_new (float, (size_t) o.L * o.H * n_ids * n_ids);
  lc = g_new (float, n_ids * V);
  lg = g_new (float, n_ids * V);
  lf = g_new (float, n_ids * V);
  cpu = sc_backend_cpu_new (0, &err);
  if (cpu == NULL)
    {
      printf ("# the cpu backend is unavailable here (%s): comparing with cpu-ref\n",
              err.message);
      cpu = sc_backend_cpu_ref_new ();
    }
  printf ("# %zu tokens; %s against %s\n", n_ids, sc_backend_description (gpu),
          sc_backend_description (cpu));

  run (m, cpu, ids, (int) n_ids, &co, lc);
  go.observe_f16 = gpu_observe_f16;
  run (m, gpu, ids, (int) n_ids, &go, lg);
  run (m, gpu, ids, (int) n_ids, NULL, lf);
  g_assert_cmpint (o.n_heads_seen, ==, o.L * o.H);

  for (size_t i = 0; i < n_ids; i++)
    {
      int top_c = 0, top_g = 0;
      for (int t = 0; t < V; t++)
        {
          const size_t at = i * V + t;
          worst_logit = MAX (worst_logit, fabs ((double) lg[at] - lc[at]));
          worst_fused = MAX (worst_fused, fabs ((double) lf[at] - lg[at]));
          top_c = lc[at] > lc[i * V + top_c] ? t : top_c;
          top_g = lg[at] > lg[i * V + top_g] ? t : top_g;
        }
      agree += top_c == top_g;
    }
  printf ("# probabilities: max |error| %.3g (bound %g); logits: max |error| %.3g (bound %g), "
          "top token agrees on %d of %zu rows; fused vs capture logits: %.3g\n", o.worst,
          PROB_TOL, worst_logit, LOGIT_TOL, agree, n_ids, worst_fused);
  g_assert_cmpfloat (worst_logit, <=, LOGIT_TOL);
  g_assert_cmpfloat ((double) agree, >=, 0.99 * (double) n_ids);
  g_assert_cmpfloat (worst_fused, <=, 1e-3);

  g_free (o.cpu);
  g_free (lc);
  g_free (lg);
  g_free (lf);
  free (ids);
  sc_backend_free (cpu);
  sc_backend_free (gpu);
  sc_model_free (m);
  if (shaped != NULL)
    g_bytes_unref (shaped);
  return 0;
}
