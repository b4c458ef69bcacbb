/* test-qwen2.c — the qwen2 architecture on models the test builds itself (no model file):
 *   - a tiny qwen2 GGUF loads with the info the file says (untied with output.weight, tied
 *     without), 1/sqrt(head_dim) scale, no window;
 *   - the biases, by construction: with W_q = W_k = W_v = 0 every layer's queries and keys are
 *     its biases rotated by their position, so each attention probability is known in closed
 *     form (NeoX pairs (c, c + d/2), base from the file, scale 1/sqrt(d), causal softmax; the
 *     test computes it in double), and every head's output is its KV group's value bias
 *     exactly (a weighted mean of equal vectors);
 *   - with random weights, a KV-cached run equals the whole run;
 *   - bad files fail with a message naming what is wrong: a missing bias, an output bias, a
 *     RoPE scaling factor.
 * The real Qwen2.5-Coder-0.5B-Instruct is tested by test-qwen2-model.c.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "backend/sc-backend.h"
#include "forward/sc-forward.h"
#include "format/sc-gguf.h"
#include "model/sc-model.h"
#include "sc-test-gguf.h"

#define GGML_TYPE_F32 0
#define N_LAYERS 3
#define E 16
#define H 4
#define HKV 2
#define D 4
#define F 24
#define CTX 64
#define ROPE_BASE 1000.0

typedef struct {
  const char *omit;      /* a tensor left out, or NULL */
  gboolean zero_qkv;     /* W_q, W_k, W_v all zero (the biases stay) */
  gboolean tied;         /* no output.weight */
  gboolean output_bias;  /* add output.bias */
  float rope_factor;     /* 0: key absent */
  const char *extra;     /* a tensor to add that qwen2 does not read, or NULL */
} TinyOpts;

static void
add_tensor (ScTestGguf *g, const char *name, int64_t ne0, int64_t ne1, GRand *rng, double lo,
            double hi, gboolean zero)
{
  const int64_t ne[2] = { ne0, ne1 };
  gsize n = (gsize) (ne0 * ne1);
  g_autofree float *v = g_new (float, n);

  for (gsize i = 0; i < n; i++)
    v[i] = zero ? 0.0f : (float) g_rand_double_range (rng, lo, hi);
  sc_test_gguf_add_tensor (g, name, ne1 == 1 ? 1 : 2, ne, GGML_TYPE_F32, v, n * sizeof (float));
}

static GBytes *
tiny_qwen2 (const TinyOpts *o)
{
  ScTestGguf *g = sc_test_gguf_new (3);
  GRand *rng = g_rand_new_with_seed (28);
  const struct {
    const char *name;
    int64_t ne0, ne1;
    gboolean norm, qkv;
  } per_layer[] = {
    { "attn_norm.weight", E, 1, TRUE, FALSE },     { "attn_q.weight", E, H * D, FALSE, TRUE },
    { "attn_k.weight", E, HKV * D, FALSE, TRUE },  { "attn_v.weight", E, HKV * D, FALSE, TRUE },
    { "attn_q.bias", H * D, 1, FALSE, FALSE },     { "attn_k.bias", HKV * D, 1, FALSE, FALSE },
    { "attn_v.bias", HKV * D, 1, FALSE, FALSE },
    { "attn_output.weight", H * D, E, FALSE, FALSE },
    { "ffn_norm.weight", E, 1, TRUE, FALSE },      { "ffn_gate.weight", E, F, FALSE, FALSE },
    { "ffn_up.weight", E, F, FALSE, FALSE },       { "ffn_down.weight", F, E, FALSE, FALSE },
  };
  GBytes *bytes;

  sc_test_gguf_add_str (g, "general.architecture", "qwen2");
  sc_test_gguf_add_u32 (g, "qwen2.block_count", N_LAYERS);
  sc_test_gguf_add_u32 (g, "qwen2.context_length", CTX);
  sc_test_gguf_add_u32 (g, "qwen2.embedding_length", E);
  sc_test_gguf_add_u32 (g, "qwen2.feed_forward_length", F);
  sc_test_gguf_add_u32 (g, "qwen2.attention.head_count", H);
  sc_test_gguf_add_u32 (g, "qwen2.attention.head_count_kv", HKV);
  sc_test_gguf_add_f32 (g, "qwen2.attention.layer_norm_rms_epsilon", 1e-6f);
  sc_test_gguf_add_f32 (g, "qwen2.rope.freq_base", (float) ROPE_BASE);
  if (o->rope_factor != 0.0f)
    sc_test_gguf_add_f32 (g, "qwen2.rope.scaling.factor", o->rope_factor);
  sc_test_gguf_add_byte_vocab (g);

  add_tensor (g, "token_embd.weight", E, SC_TEST_GGUF_BYTE_VOCAB, rng, -1.0, 1.0, FALSE);
  add_tensor (g, "output_norm.weight", E, 1, rng, 0.8, 1.2, FALSE);
  if (!o->tied)
    add_tensor (g, "output.weight", E, SC_TEST_GGUF_BYTE_VOCAB, rng, -1.0, 1.0, FALSE);
  if (o->output_bias)
    add_tensor (g, "output.bias", SC_TEST_GGUF_BYTE_VOCAB, 1, rng, -1.0, 1.0, FALSE);
  for (int l = 0; l < N_LAYERS; l++)
    for (gsize t = 0; t < G_N_ELEMENTS (per_layer); t++)
      {
        g_autofree char *name = g_strdup_printf ("blk.%d.%s", l, per_layer[t].name);
        if (o->omit != NULL && strcmp (o->omit, name) == 0)
          continue;
        add_tensor (g, name, per_layer[t].ne0, per_layer[t].ne1, rng,
                    per_layer[t].norm ? 0.8 : -0.5, per_layer[t].norm ? 1.2 : 0.5,
                    o->zero_qkv && per_layer[t].qkv);
      }
  if (o->extra != NULL)
    add_tensor (g, o->extra, E, 1, rng, 0.8, 1.2, FALSE);
  bytes = sc_test_gguf_build (g, NULL);
  sc_test_gguf_free (g);
  g_rand_free (rng);
  return bytes;
}

static ScStatus
open_bytes (GBytes *bytes, ScModel **out, ScError *err)
{
  gsize n;
  const void *data = g_bytes_get_data (bytes, &n);
  ScGguf *gguf;
  ScStatus st = sc_gguf_open_memory (data, n, &gguf, err);

  *out = NULL;
  return st != SC_OK ? st : sc_model_open_gguf (gguf, 1, out, err);
}

static ScModel *
open_tiny (const TinyOpts *o)
{
  g_autoptr (GBytes) bytes = tiny_qwen2 (o);
  ScModel *m = NULL;
  ScError err = { 0 };

  if (open_bytes (bytes, &m, &err) != SC_OK)
    g_error ("%s", err.message);
  return m;
}

static void
expect_refused (const TinyOpts *o, ScStatus status, const char *const *needles)
{
  g_autoptr (GBytes) bytes = tiny_qwen2 (o);
  ScModel *m = NULL;
  ScError err = { 0 };

  g_assert_cmpint (open_bytes (bytes, &m, &err), ==, status);
  g_assert_null (m);
  for (int i = 0; needles[i] != NULL; i++)
    if (strstr (err.message, needles[i]) == NULL)
      g_error ("message '%s' does not name '%s'", err.message, needles[i]);
}

static void
test_info (void)
{
  const TinyOpts o = { 0 }, t = { .tied = TRUE };
  ScModel *m = open_tiny (&o), *mt = open_tiny (&t);
  const ScModelInfo *in = sc_model_info (m);

  g_assert_cmpstr (in->arch_name, ==, "qwen2");
  g_assert_cmpint (in->arch, ==, SC_ARCH_QWEN2);
  g_assert_cmpuint (in->n_heads, ==, H);
  g_assert_cmpuint (in->n_kv_heads, ==, HKV);
  g_assert_cmpuint (in->head_dim, ==, D);
  g_assert_cmpuint (in->n_rot, ==, D);
  g_assert_cmpfloat (in->attn_scale, ==, 0.5f);
  g_assert_cmpfloat (in->rope_base, ==, (float) ROPE_BASE);
  g_assert_cmpuint (in->sliding_window, ==, 0);
  g_assert_false (in->tied_output);
  g_assert_true (sc_model_weights (m)->output != sc_model_weights (m)->token_embd);
  g_assert_nonnull (sc_model_weights (m)->layers[N_LAYERS - 1].bv);
  g_assert_true (sc_model_has_backward (m));
  g_assert_true (sc_model_info (mt)->tied_output);
  g_assert_true (sc_model_weights (mt)->output == sc_model_weights (mt)->token_embd);
  sc_model_free (m);
  sc_model_free (mt);
}

/* ---- the biases by construction ---------------------------------------------------- */

typedef struct {
  const ScModel *m;
  int n;
  double max_p_err, max_o_err;
  int n_probs, n_outs;
} BiasCheck;

/* @x (D) rotated in place by position @pos: NeoX pairs (c, c + D/2), angle pos · base^(−2c/D). */
static void
rope_neox_double (double *x, int pos)
{
  for (int c = 0; c < D / 2; c++)
    {
      const double th = pos * pow (ROPE_BASE, -2.0 * c / D);
      const double a = x[c], b = x[c + D / 2];
      x[c] = a * cos (th) - b * sin (th);
      x[c + D / 2] = a * sin (th) + b * cos (th);
    }
}

static bool
bias_probs (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  BiasCheck *c = user;
  const ScLayerWeights *w = &sc_model_weights (c->m)->layers[layer];
  const int g = head / (H / HKV);

  g_assert_cmpint (n_q, ==, c->n);
  for (int i = 0; i < n_q; i++)
    {
      double q[D], s[64], mx = -INFINITY, sum = 0.0;
      for (int e = 0; e < D; e++)
        q[e] = w->bq[head * D + e];
      rope_neox_double (q, i);
      for (int j = 0; j <= i; j++)
        {
          double k[D], dot = 0.0;
          for (int e = 0; e < D; e++)
            k[e] = w->bk[g * D + e];
          rope_neox_double (k, j);
          for (int e = 0; e < D; e++)
            dot += q[e] * k[e];
          s[j] = dot / sqrt ((double) D);
          mx = fmax (mx, s[j]);
        }
      for (int j = 0; j <= i; j++)
        sum += s[j] = exp (s[j] - mx);
      for (int j = 0; j < n_k; j++)
        {
          double want = j <= i ? s[j] / sum : 0.0;
          c->max_p_err = fmax (c->max_p_err, fabs (probs[(size_t) i * n_k + j] - want));
        }
    }
  c->n_probs++;
  return true;
}

static bool
bias_output (void *user, int layer, const float *o, int n_q, int width)
{
  BiasCheck *c = user;
  const ScLayerWeights *w = &sc_model_weights (c->m)->layers[layer];

  g_assert_cmpint (width, ==, H * D);
  for (int i = 0; i < n_q; i++)
    for (int h = 0; h < H; h++)
      for (int e = 0; e < D; e++)
        c->max_o_err = fmax (c->max_o_err, fabs (o[(size_t) i * width + h * D + e]
                                                 - w->bv[(h / (H / HKV)) * D + e]));
  c->n_outs++;
  return true;
}

static void
test_biases (void)
{
  const TinyOpts o = { .zero_qkv = TRUE };
  ScModel *m = open_tiny (&o);
  ScBackend *backends[2] = { sc_backend_cpu_ref_new (), NULL };
  const int32_t ids[9] = { 72, 101, 108, 108, 111, 32, 119, 111, 33 };
  ScError err = { 0 };

  backends[1] = sc_backend_cpu_new (1, &err);
  g_assert_nonnull (backends[1]);
  for (int k = 0; k < 2; k++)
    {
      BiasCheck c = { .m = m, .n = 9 };
      const ScObserver obs = { .observe = bias_probs, .attn_output = bias_output, .user = &c };
      ScForwardOptions opt = { .observer = &obs };
      ScSession *s = NULL;

      if (sc_session_new (m, backends[k], &s, &err) != SC_OK
          || sc_forward (s, ids, 9, &opt, NULL, &err) != SC_OK)
        g_error ("%s", err.message);
      g_test_message ("%s: max |dP| %.3g, max |o - b_v| %.3g", sc_backend_name (backends[k]),
                      c.max_p_err, c.max_o_err);
      g_assert_cmpint (c.n_probs, ==, N_LAYERS * H);
      g_assert_cmpint (c.n_outs, ==, N_LAYERS);
      g_assert_cmpfloat (c.max_p_err, <=, 1e-6);
      g_assert_cmpfloat (c.max_o_err, <=, 1e-6);
      sc_session_free (s);
      sc_backend_free (backends[k]);
    }
  sc_model_free (m);
}

static void
test_kv_cache (void)
{
  const TinyOpts o = { 0 };
  ScModel *m = open_tiny (&o);
  ScBackend *b = sc_backend_cpu_ref_new ();
  ScSession *s = NULL;
  const int32_t ids[12] = { 72, 101, 108, 108, 111, 32, 119, 111, 114, 108, 100, 33 };
  float whole[SC_TEST_GGUF_BYTE_VOCAB], cached[SC_TEST_GGUF_BYTE_VOCAB];
  ScForwardOptions opt = { 0 };
  ScError err = { 0 };

  if (sc_session_new (m, b, &s, &err) != SC_OK
      || sc_forward (s, ids, 12, &opt, whole, &err) != SC_OK)
    g_error ("%s", err.message);
  opt = (ScForwardOptions) { .keep_kv = true };
  if (sc_forward (s, ids, 7, &opt, NULL, &err) != SC_OK)
    g_error ("%s", err.message);
  opt = (ScForwardOptions) { .n_past = 7 };
  if (sc_forward (s, ids, 12, &opt, cached, &err) != SC_OK)
    g_error ("%s", err.message);
  for (int v = 0; v < SC_TEST_GGUF_BYTE_VOCAB; v++)
    g_assert_cmpfloat (fabsf (whole[v] - cached[v]), <=, 1e-4f * (1.0f + fabsf (whole[v])));
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

static void
test_missing_bias (void)
{
  const TinyOpts o = { .omit = "blk.1.attn_k.bias" };
  const char *const needles[] = { "blk.1.attn_k.bias", "missing", NULL };

  expect_refused (&o, SC_ERR_FORMAT, needles);
}

static void
test_output_bias (void)
{
  const TinyOpts o = { .output_bias = TRUE };
  const char *const needles[] = { "output.bias", "not supported", NULL };

  expect_refused (&o, SC_ERR_UNSUPPORTED, needles);
}

/* A tensor qwen2 does not read (here the QK-norm of qwen3) is refused by name rather than
 * ignored. */
static void
test_unknown_tensor (void)
{
  const TinyOpts o = { .extra = "blk.0.attn_q_norm.weight" };
  const char *const needles[] = { "'blk.0.attn_q_norm.weight'", "qwen2", NULL };

  expect_refused (&o, SC_ERR_UNSUPPORTED, needles);
}

static void
test_rope_scaling (void)
{
  const TinyOpts o = { .rope_factor = 4.0f };
  const char *const needles[] = { "qwen2.rope.scaling.factor", "4", NULL };

  expect_refused (&o, SC_ERR_UNSUPPORTED, needles);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/qwen2/info", test_info);
  g_test_add_func ("/qwen2/biases-by-construction", test_biases);
  g_test_add_func ("/qwen2/kv-cache", test_kv_cache);
  g_test_add_func ("/qwen2/bad/missing-k-bias", test_missing_bias);
  g_test_add_func ("/qwen2/bad/output-bias", test_output_bias);
  g_test_add_func ("/qwen2/bad/rope-scaling", test_rope_scaling);
  g_test_add_func ("/qwen2/bad/unknown-tensor", test_unknown_tensor);
  return g_test_run ();
}
