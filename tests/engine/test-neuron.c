/* test-neuron.c — sc_session_layer_qk (sc-forward.h) against the forward pass itself: the
 * queries and keys it returns, dotted, scaled by attn_scale and softmaxed over the visible
 * keys, must give the probabilities sc_forward hands its observer, head by head, for the
 * first and the last layer of SmolLM2 (skipped when the model is not fetched). A wrong RoPE,
 * a wrong KV-head mapping or keys of another layer would miss by far more than the 1e-5
 * allowed (float rounding of a 64-term dot product and the softmax, the forward's and ours
 * summed in different orders). Also: its argument errors name what was wrong, and the
 * session still runs a plain forward afterwards, bit for bit as before.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"

/* "The cat chased the ball because it was tired." as SmolLM2 tokenizes it */
static const int32_t tok[] = { 504, 2644, 45360, 260, 4405, 975, 357, 436, 12364, 30 };
#define N_TOK ((int) G_N_ELEMENTS (tok))

typedef struct {
  int layer;
  int n_heads;
  float *probs; /* (n_heads, N, N) */
} Keep;

static bool
keep_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  Keep *k = user;
  g_assert_cmpint (n_q, ==, N_TOK);
  g_assert_cmpint (n_k, ==, N_TOK);
  if (layer == k->layer)
    memcpy (k->probs + (size_t) head * N_TOK * N_TOK, probs, sizeof (float) * N_TOK * N_TOK);
  return true;
}

static void
check_layer (ScSession *s, const ScModelInfo *in, int layer)
{
  const int H = (int) in->n_heads, D = (int) in->head_dim, group = H / (int) in->n_kv_heads;
  const int Q = H * D, KV = (int) in->n_kv_heads * D;
  g_autofree float *q = g_new (float, (gsize) N_TOK * Q);
  g_autofree float *k = g_new (float, (gsize) N_TOK * KV);
  Keep keep = { layer, H, g_new0 (float, (gsize) H * N_TOK * N_TOK) };
  ScObserver obs = { .observe = keep_observe, .user = &keep };
  ScForwardOptions fo = { .observer = &obs };
  ScError err = { 0 };
  double worst = 0;

  g_assert_cmpint (sc_forward (s, tok, N_TOK, &fo, NULL, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_layer_qk (s, tok, N_TOK, layer, q, k, &err), ==, SC_OK);
  for (int h = 0; h < H; h++)
    for (int i = 0; i < N_TOK; i++)
      {
        double sc[N_TOK], mx = -INFINITY, sum = 0;
        for (int j = 0; j <= i; j++)
          {
            const float *qi = q + (size_t) i * Q + h * D, *kj = k + (size_t) j * KV + (h / group) * D;
            double dot = 0;
            for (int d = 0; d < D; d++)
              dot += (double) qi[d] * kj[d];
            sc[j] = dot * in->attn_scale;
            mx = MAX (mx, sc[j]);
          }
        for (int j = 0; j <= i; j++)
          sum += exp (sc[j] - mx);
        for (int j = 0; j < N_TOK; j++)
          {
            const double p = j <= i ? exp (sc[j] - mx) / sum : 0;
            const double got = keep.probs[((size_t) h * N_TOK + i) * N_TOK + j];
            worst = MAX (worst, fabs (p - got));
          }
      }
  g_test_message ("layer %d: max |softmax(q.k * scale) - observed| = %.3g", layer, worst);
  g_assert_cmpfloat (worst, <=, 1e-5);
  g_free (keep.probs);
}

static void
test_smollm2 (void)
{
  const char *env = g_getenv ("SACCADE_MODEL");
  g_autofree char *path = env != NULL ? g_strdup (env)
                                      : g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"),
                                                          "data", "models",
                                                          "SmolLM2-135M-Instruct.Q4_1.gguf",
                                                          NULL);
  ScModel *m = NULL;
  ScBackend *b;
  ScSession *s = NULL;
  ScError err = { 0 };
  const ScModelInfo *in;
  g_autofree float *before = NULL, *after = NULL, *q = NULL, *k = NULL;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("the default model is not fetched (data/fetch-model.sh)");
      return;
    }
  if (sc_model_open (path, 2, &m, &err) != SC_OK)
    g_error ("%s", err.message);
  in = sc_model_info (m);
  b = sc_backend_cpu_new (2, NULL);
  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);

  before = g_new (float, in->n_vocab);
  after = g_new (float, in->n_vocab);
  g_assert_cmpint (sc_forward (s, tok, N_TOK, NULL, before, &err), ==, SC_OK);

  check_layer (s, in, 0);
  check_layer (s, in, (int) in->n_layers - 1);

  /* errors name the layer / the emptiness */
  q = g_new (float, (gsize) N_TOK * in->n_heads * in->head_dim);
  k = g_new (float, (gsize) N_TOK * in->n_kv_heads * in->head_dim);
  g_assert_cmpint (sc_session_layer_qk (s, tok, N_TOK, (int) in->n_layers, q, k, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "layer 30 is outside 0..29"));
  g_assert_cmpint (sc_session_layer_qk (s, tok, N_TOK, -1, q, k, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_session_layer_qk (s, tok, 0, 0, q, k, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "no tokens"));

  /* the session is as good as before */
  g_assert_cmpint (sc_forward (s, tok, N_TOK, NULL, after, &err), ==, SC_OK);
  g_assert_cmpmem (before, sizeof (float) * in->n_vocab, after, sizeof (float) * in->n_vocab);

  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/neuron/smollm2-layer-qk", test_smollm2);
  return g_test_run ();
}
