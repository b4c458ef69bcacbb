/* test-gemma3.c — the gemma3 architecture and the SentencePiece-style tokenizer on inputs
 * the test builds itself (no model file needed):
 *   - a tiny gemma3 GGUF (6 layers, pattern 3, window 4) loads with the info the rules of
 *     sc-arch-gemma3.c give (local/global layers, windows, RoPE bases, scales);
 *   - its forward pass gives exact zeros outside each local layer's window and none in a
 *     global layer, and a KV-cached run equals the whole run;
 *   - bad files fail with a message naming what is wrong, one test each: a missing norm
 *     tensor, a window larger than the context, a local/global pattern with no global
 *     layer (longer than the model, or 0), a per-layer pattern array;
 *   - rope_neox and scale against hand-worked values;
 *   - a hand-made SentencePiece vocabulary: merges by score, "▁" for spaces, byte
 *     fallback, special tokens, decoding.
 * The real Gemma 3 270M is tested by test-gemma3-model.c.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "backend/sc-backend-impl.h"
#include "forward/sc-forward.h"
#include "format/sc-gguf.h"
#include "model/sc-model.h"
#include "sc-test-gguf.h"
#include "text/sc-tokenizer.h"

#define GGML_TYPE_F32 0
#define N_LAYERS 6
#define E 8
#define H 2
#define HKV 1
#define D 4
#define F 16
#define CTX 64
#define WINDOW 4
#define PATTERN 3

typedef struct {
  const char *omit;       /* a tensor left out, or NULL */
  uint32_t window;        /* 0: key absent */
  uint32_t pattern;       /* 0: key absent */
  gboolean pattern_array; /* write the pattern as a per-layer array */
  gboolean pattern_zero;  /* write a pattern of 0 */
  const char *extra;      /* a tensor to add that gemma3 does not read, or NULL */
} TinyOpts;

static void
add_f32_tensor (ScTestGguf *g, const char *name, int64_t ne0, int64_t ne1, GRand *rng,
                double lo, double hi)
{
  const int64_t ne[2] = { ne0, ne1 };
  gsize n = (gsize) (ne0 * ne1);
  g_autofree float *v = g_new (float, n);

  for (gsize i = 0; i < n; i++)
    v[i] = (float) g_rand_double_range (rng, lo, hi);
  sc_test_gguf_add_tensor (g, name, ne1 == 1 ? 1 : 2, ne, GGML_TYPE_F32, v, n * sizeof (float));
}

/* A gemma3 file with random F32 weights (norms near 1, as the converter stores them). */
static GBytes *
tiny_gemma3 (const TinyOpts *o)
{
  ScTestGguf *g = sc_test_gguf_new (3);
  GRand *rng = g_rand_new_with_seed (5);
  const struct {
    const char *name;
    int64_t ne0, ne1;
    gboolean norm;
  } per_layer[] = {
    { "attn_norm.weight", E, 1, TRUE },        { "attn_q.weight", E, H * D, FALSE },
    { "attn_k.weight", E, HKV * D, FALSE },    { "attn_v.weight", E, HKV * D, FALSE },
    { "attn_q_norm.weight", D, 1, TRUE },      { "attn_k_norm.weight", D, 1, TRUE },
    { "attn_output.weight", H * D, E, FALSE }, { "post_attention_norm.weight", E, 1, TRUE },
    { "ffn_norm.weight", E, 1, TRUE },         { "ffn_gate.weight", E, F, FALSE },
    { "ffn_up.weight", E, F, FALSE },          { "ffn_down.weight", F, E, FALSE },
    { "post_ffw_norm.weight", E, 1, TRUE },
  };
  GBytes *bytes;

  sc_test_gguf_add_str (g, "general.architecture", "gemma3");
  sc_test_gguf_add_u32 (g, "gemma3.block_count", N_LAYERS);
  sc_test_gguf_add_u32 (g, "gemma3.context_length", CTX);
  sc_test_gguf_add_u32 (g, "gemma3.embedding_length", E);
  sc_test_gguf_add_u32 (g, "gemma3.feed_forward_length", F);
  sc_test_gguf_add_u32 (g, "gemma3.attention.head_count", H);
  sc_test_gguf_add_u32 (g, "gemma3.attention.head_count_kv", HKV);
  sc_test_gguf_add_u32 (g, "gemma3.attention.key_length", D);
  sc_test_gguf_add_u32 (g, "gemma3.attention.value_length", D);
  sc_test_gguf_add_f32 (g, "gemma3.attention.layer_norm_rms_epsilon", 1e-6f);
  sc_test_gguf_add_f32 (g, "gemma3.rope.freq_base", 1e6f);
  if (o->window > 0)
    sc_test_gguf_add_u32 (g, "gemma3.attention.sliding_window", o->window);
  if (o->pattern_array)
    {
      const int32_t flags[N_LAYERS] = { 1, 1, 0, 1, 1, 0 };
      sc_test_gguf_add_i32_array (g, "gemma3.attention.sliding_window_pattern", flags, N_LAYERS);
    }
  else if (o->pattern > 0 || o->pattern_zero)
    sc_test_gguf_add_u32 (g, "gemma3.attention.sliding_window_pattern", o->pattern);
  sc_test_gguf_add_byte_vocab (g);

  add_f32_tensor (g, "token_embd.weight", E, SC_TEST_GGUF_BYTE_VOCAB, rng, -1.0, 1.0);
  add_f32_tensor (g, "output_norm.weight", E, 1, rng, 0.8, 1.2);
  for (int l = 0; l < N_LAYERS; l++)
    for (gsize t = 0; t < G_N_ELEMENTS (per_layer); t++)
      {
        g_autofree char *name = g_strdup_printf ("blk.%d.%s", l, per_layer[t].name);
        if (o->omit != NULL && strcmp (o->omit, name) == 0)
          continue;
        add_f32_tensor (g, name, per_layer[t].ne0, per_layer[t].ne1, rng,
                        per_layer[t].norm ? 0.8 : -0.5, per_layer[t].norm ? 1.2 : 0.5);
      }
  if (o->extra != NULL)
    add_f32_tensor (g, o->extra, E, 1, rng, -0.5, 0.5);
  bytes = sc_test_gguf_build (g, NULL);
  sc_test_gguf_free (g);
  g_rand_free (rng);
  return bytes;
}

/* Opens @bytes as a model; returns the status, the model (or NULL) in *out. */
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

static void
expect_refused (const TinyOpts *o, ScStatus status, const char *const *needles)
{
  g_autoptr (GBytes) bytes = tiny_gemma3 (o);
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
  const TinyOpts o = { .window = WINDOW, .pattern = PATTERN };
  g_autoptr (GBytes) bytes = tiny_gemma3 (&o);
  ScModel *m = NULL;
  ScError err = { 0 };
  const ScModelInfo *in;

  if (open_bytes (bytes, &m, &err) != SC_OK)
    g_error ("%s", err.message);
  in = sc_model_info (m);
  g_assert_cmpint (in->arch, ==, SC_ARCH_GEMMA3);
  g_assert_cmpuint (in->sliding_window, ==, WINDOW);
  g_assert_cmpuint (in->swa_pattern, ==, PATTERN);
  g_assert_cmpfloat (in->rope_base, ==, 1e6f);
  g_assert_cmpfloat (in->rope_base_local, ==, 10000.0f); /* llama.cpp's default */
  g_assert_cmpfloat (in->attn_scale, ==, 1.0f / sqrtf ((float) D));
  g_assert_cmpfloat (in->embd_scale, ==, sqrtf ((float) E));
  /* every third layer global: 2 and 5 */
  for (int l = 0; l < N_LAYERS; l++)
    g_assert_cmpuint (sc_model_layer_window (in, l), ==, (l + 1) % PATTERN == 0 ? 0 : WINDOW);
  g_assert_nonnull (sc_model_weights (m)->layers[0].attn_q_norm);
  g_assert_nonnull (sc_model_weights (m)->layers[N_LAYERS - 1].post_ffn_norm);
  sc_model_free (m);
}

/* Without the window key every layer is global (llama.cpp's LLAMA_SWA_TYPE_NONE), and the
 * pattern defaults to llama.cpp's 6 when only the window is given. */
static void
test_defaults (void)
{
  const TinyOpts none = { 0 }, no_pattern = { .window = WINDOW };
  g_autoptr (GBytes) a = tiny_gemma3 (&none);
  g_autoptr (GBytes) b = tiny_gemma3 (&no_pattern);
  ScModel *m = NULL;
  ScError err = { 0 };

  if (open_bytes (a, &m, &err) != SC_OK)
    g_error ("%s", err.message);
  g_assert_cmpuint (sc_model_info (m)->sliding_window, ==, 0);
  for (int l = 0; l < N_LAYERS; l++)
    g_assert_cmpuint (sc_model_layer_window (sc_model_info (m), l), ==, 0);
  sc_model_free (m);
  if (open_bytes (b, &m, &err) != SC_OK)
    g_error ("%s", err.message);
  g_assert_cmpuint (sc_model_info (m)->swa_pattern, ==, 6);
  for (int l = 0; l < N_LAYERS; l++)
    g_assert_cmpuint (sc_model_layer_window (sc_model_info (m), l), ==, l == 5 ? 0 : WINDOW);
  sc_model_free (m);
}

typedef struct {
  int bad_local, bad_global, rows;
} WindowCheck;

static bool
check_window (void *user, int layer, int head, const float *p, int nq, int nk)
{
  WindowCheck *c = user;
  const bool local = (layer + 1) % PATTERN != 0;

  (void) head;
  for (int i = 0; i < nq; i++)
    {
      const int pos = nk - nq + i;
      double sum = 0.0;
      for (int j = 0; j < nk; j++)
        {
          const bool visible = j <= pos && (!local || pos - j < WINDOW);
          sum += p[(size_t) i * nk + j];
          if (!visible && p[(size_t) i * nk + j] != 0.0f)
            c->bad_local++;
          if (visible && !local && p[(size_t) i * nk + j] == 0.0f)
            c->bad_global++;
        }
      g_assert_cmpfloat (fabs (sum - 1.0), <, 1e-5);
      c->rows++;
    }
  return true;
}

/* Local layers see exactly their window, global ones every earlier key; a run continued
 * from the KV cache gives the logits of the whole run. */
static void
test_forward (void)
{
  const TinyOpts o = { .window = WINDOW, .pattern = PATTERN };
  g_autoptr (GBytes) bytes = tiny_gemma3 (&o);
  const int32_t ids[12] = { 72, 101, 108, 108, 111, 32, 119, 111, 114, 108, 100, 33 };
  const int n = 12;
  ScModel *m = NULL;
  ScBackend *b = sc_backend_cpu_ref_new ();
  ScSession *s = NULL;
  ScError err = { 0 };
  WindowCheck wc = { 0 };
  const ScObserver obs = { .observe = check_window, .user = &wc };
  ScForwardOptions opt = { .observer = &obs };
  float whole[SC_TEST_GGUF_BYTE_VOCAB], cached[SC_TEST_GGUF_BYTE_VOCAB];

  if (open_bytes (bytes, &m, &err) != SC_OK || sc_session_new (m, b, &s, &err) != SC_OK)
    g_error ("%s", err.message);
  if (sc_forward (s, ids, n, &opt, whole, &err) != SC_OK)
    g_error ("%s", err.message);
  g_assert_cmpint (wc.rows, ==, N_LAYERS * H * n);
  g_assert_cmpint (wc.bad_local, ==, 0);
  g_assert_cmpint (wc.bad_global, ==, 0);

  opt = (ScForwardOptions) { .keep_kv = true };
  if (sc_forward (s, ids, 7, &opt, NULL, &err) != SC_OK)
    g_error ("%s", err.message);
  opt = (ScForwardOptions) { .n_past = 7 };
  if (sc_forward (s, ids, n, &opt, cached, &err) != SC_OK)
    g_error ("%s", err.message);
  for (int v = 0; v < SC_TEST_GGUF_BYTE_VOCAB; v++)
    g_assert_cmpfloat (fabsf (whole[v] - cached[v]), <=, 1e-4f * (1.0f + fabsf (whole[v])));
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

static void
test_missing_norm (void)
{
  const TinyOpts o = { .window = WINDOW, .pattern = PATTERN,
                       .omit = "blk.4.post_attention_norm.weight" };
  const char *const needles[] = { "blk.4.post_attention_norm.weight", "missing", NULL };

  expect_refused (&o, SC_ERR_FORMAT, needles);
}

static void
test_missing_qk_norm (void)
{
  const TinyOpts o = { .window = WINDOW, .pattern = PATTERN, .omit = "blk.0.attn_k_norm.weight" };
  const char *const needles[] = { "blk.0.attn_k_norm.weight", "missing", NULL };

  expect_refused (&o, SC_ERR_FORMAT, needles);
}

static void
test_window_beyond_context (void)
{
  const TinyOpts o = { .window = CTX + 1, .pattern = PATTERN };
  const char *const needles[] = { "gemma3.attention.sliding_window", "65", "context length 64",
                                  NULL };

  expect_refused (&o, SC_ERR_RANGE, needles);
}

/* A tensor gemma3 does not read (here a bias gemma3 has none of) is refused by name rather
 * than ignored: a file with one holds something this code would not apply. */
static void
test_unknown_tensor (void)
{
  const TinyOpts o = { .window = WINDOW, .pattern = PATTERN, .extra = "blk.1.attn_q.bias" };
  const char *const needles[] = { "'blk.1.attn_q.bias'", "gemma3", NULL };

  expect_refused (&o, SC_ERR_UNSUPPORTED, needles);
}

/* A pattern longer than the model leaves no global layer. (A pattern that does not divide
 * the layer count is valid: Gemma 3 1B has 26 layers and pattern 6.) */
static void
test_pattern_without_global_layer (void)
{
  const TinyOpts o = { .window = WINDOW, .pattern = N_LAYERS + 1 };
  const char *const needles[] = { "gemma3.attention.sliding_window_pattern", "is 7", "6 layers",
                                  NULL };

  expect_refused (&o, SC_ERR_RANGE, needles);
}

/* 0 would make every layer local in llama.cpp (no layer sees past the window) */
static void
test_pattern_zero (void)
{
  const TinyOpts o = { .window = WINDOW, .pattern_zero = TRUE };
  const char *const needles[] = { "gemma3.attention.sliding_window_pattern", "is 0", NULL };

  expect_refused (&o, SC_ERR_RANGE, needles);
}

static void
test_pattern_array (void)
{
  const TinyOpts o = { .window = WINDOW, .pattern_array = TRUE };
  const char *const needles[] = { "sliding_window_pattern", "per-layer array", NULL };

  expect_refused (&o, SC_ERR_UNSUPPORTED, needles);
}

/* rope_neox pairs element c with c + n_rot/2 (ggml's NeoX mode), at the same angles. */
static void
test_rope_neox (void)
{
  ScBackend *b = sc_backend_cpu_ref_new ();
  ScError err = { 0 };
  /* one head of 4 dims at position 3, base 100: pairs (0,2) at angle 3, (1,3) at
   * 3 * 100^(-1/2) = 0.3 */
  float x[4] = { 1.0f, 2.0f, 3.0f, 4.0f };
  const double t0 = 3.0, t1 = 0.3;
  const double want[4] = { 1 * cos (t0) - 3 * sin (t0), 2 * cos (t1) - 4 * sin (t1),
                           1 * sin (t0) + 3 * cos (t0), 2 * sin (t1) + 4 * cos (t1) };
  float y[3] = { 1.0f, -2.0f, 0.5f };

  g_assert_cmpint (sc_backend_rope_neox (b, x, 1, 1, 4, 4, 3, 100.0f, &err), ==, SC_OK);
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat (fabs (x[i] - want[i]), <, 1e-6);
  g_assert_cmpint (sc_backend_scale (b, y, y, 4.0f, 3, &err), ==, SC_OK);
  g_assert_cmpfloat (y[0], ==, 4.0f);
  g_assert_cmpfloat (y[1], ==, -8.0f);
  g_assert_cmpfloat (y[2], ==, 2.0f);
  sc_backend_free (b);
}

/* ---- the SentencePiece-style tokenizer on a hand-made vocabulary ------------------- */

#define SP "\xe2\x96\x81" /* U+2581 */

static const char *const SPM_TEXTS[] = {
  "<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<0x41>", "<0xC3>", "<0xA9>",
  SP, "a", "b", "c", "ab", "bc", SP "a", SP "ab", "abc", "<mask>",
};
static const float SPM_SCORES[] = {
  0, 0, 0, 0, 0, 0, 0, 0, -1.0f, -2.0f, -2.0f, -2.0f, -3.0f, -1.5f, -0.5f, -0.4f, -5.0f, 0,
};
static const int32_t SPM_TYPES[] = {
  3, 3, 3, 2, 3, 6, 6, 6, 1, 1, 1, 1, 1, 1, 1, 1, 1, 4,
};
enum { PAD, EOS, BOS, UNK, SOT, B41, BC3, BA9, TSP, TA, TB, TC, TAB, TBC, TSPA, TSPAB, TABC,
       MASK, N_SPM };

static ScTokenizer *
spm_tokenizer (bool add_space_prefix)
{
  ScTokenizerDesc d;
  uint32_t lens[N_SPM];
  ScTokenizer *tok = NULL;
  ScError err = { 0 };

  for (int i = 0; i < N_SPM; i++)
    lens[i] = (uint32_t) strlen (SPM_TEXTS[i]);
  sc_tokenizer_desc_init (&d);
  d.model = SC_TOKENIZER_SPM;
  d.n_tokens = N_SPM;
  d.tokens = SPM_TEXTS;
  d.token_lens = lens;
  d.token_types = SPM_TYPES;
  d.scores = SPM_SCORES;
  d.bos_id = BOS;
  d.eos_id = EOS;
  d.unk_id = UNK;
  d.add_bos = true;
  d.add_space_prefix = add_space_prefix;
  if (sc_tokenizer_new (&d, &tok, &err) != SC_OK)
    g_error ("%s", err.message);
  return tok;
}

static void
expect_ids (const ScTokenizer *tok, const char *text, bool add_special, bool parse_special,
            const int32_t *want, size_t n_want)
{
  int32_t *ids = NULL;
  size_t n = 0;
  ScError err = { 0 };

  if (sc_tokenize (tok, text, strlen (text), add_special, parse_special, &ids, &n, &err) != SC_OK)
    g_error ("%s", err.message);
  if (n != n_want || (n > 0 && memcmp (ids, want, n * sizeof *ids) != 0))
    {
      g_autoptr (GString) got = g_string_new ("");
      for (size_t i = 0; i < n; i++)
        g_string_append_printf (got, " %d", ids[i]);
      g_error ("'%s': got%s", text, got->str);
    }
  g_free (ids);
}

static void
test_spm_tokenize (void)
{
  ScTokenizer *tok = spm_tokenizer (false);
  ScTokenizer *prefixed = spm_tokenizer (true);

  /* "abc": b+c (-1.5) before a+b (-3), then a+bc = "abc" (-5) is a token too */
  {
    const int32_t want[] = { BOS, TABC };
    expect_ids (tok, "abc", true, true, want, G_N_ELEMENTS (want));
  }
  /* " abc": the highest score first: "▁a" (-0.5), then "▁ab" (-0.4) beats "bc" (-1.5), whose
   * queued pair is then stale; "▁abc" is no token */
  {
    const int32_t want[] = { TSPAB, TC };
    expect_ids (tok, " abc", false, true, want, G_N_ELEMENTS (want));
  }
  /* "cab": no pair with c is a token */
  {
    const int32_t want[] = { TC, TAB };
    expect_ids (tok, "cab", false, true, want, G_N_ELEMENTS (want));
  }
  /* " ab": ▁+a (-0.5) beats a+b (-3); then ▁a+b = "▁ab" (-0.4) */
  {
    const int32_t want[] = { TSPAB };
    expect_ids (tok, " ab", false, true, want, G_N_ELEMENTS (want));
  }
  /* a space prefix only when asked (add_space_prefix) */
  {
    const int32_t want[] = { TSPAB };
    expect_ids (prefixed, "ab", false, true, want, G_N_ELEMENTS (want));
  }
  /* byte fallback: "A" has a <0x41> token; "é" (C3 A9) is two byte tokens; "Z" has none
   * and becomes UNK */
  {
    const int32_t want[] = { B41, BC3, BA9, UNK };
    expect_ids (tok, "A\xc3\xa9Z", false, true, want, G_N_ELEMENTS (want));
  }
  /* special tokens with parse_special; as text without (then merged like any text, here
   * into bytes and UNKs); USER_DEFINED always */
  {
    const int32_t want[] = { TA, SOT, TB, MASK };
    expect_ids (tok, "a<start_of_turn>b<mask>", false, true, want, G_N_ELEMENTS (want));
  }
  {
    const int32_t want[] = { TSPA, SOT, TSP, TB };
    expect_ids (prefixed, "a<start_of_turn>b", false, true, want, G_N_ELEMENTS (want));
  }
  sc_tokenizer_free (tok);
  sc_tokenizer_free (prefixed);
}

static void
test_spm_decode (void)
{
  ScTokenizer *tok = spm_tokenizer (false);
  char buf[16];

  g_assert_cmpuint (sc_token_to_bytes (tok, TSPAB, false, buf, sizeof buf), ==, 3);
  g_assert_cmpmem (buf, 3, " ab", 3);
  g_assert_cmpuint (sc_token_to_bytes (tok, BC3, false, buf, sizeof buf), ==, 1);
  g_assert_cmpint ((unsigned char) buf[0], ==, 0xC3);
  g_assert_cmpuint (sc_token_to_bytes (tok, SOT, false, buf, sizeof buf), ==, 0);
  g_assert_cmpuint (sc_token_to_bytes (tok, SOT, true, buf, sizeof buf), ==, 15);
  g_assert_cmpuint (sc_token_to_bytes (tok, MASK, false, buf, sizeof buf), ==, 6);
  g_assert_cmpstr (sc_tokenizer_pre (tok), ==, "spm");
  sc_tokenizer_free (tok);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gemma3/info", test_info);
  g_test_add_func ("/gemma3/defaults", test_defaults);
  g_test_add_func ("/gemma3/forward-windows", test_forward);
  g_test_add_func ("/gemma3/bad/missing-post-attention-norm", test_missing_norm);
  g_test_add_func ("/gemma3/bad/missing-k-norm", test_missing_qk_norm);
  g_test_add_func ("/gemma3/bad/window-beyond-context", test_window_beyond_context);
  g_test_add_func ("/gemma3/bad/unknown-tensor", test_unknown_tensor);
  g_test_add_func ("/gemma3/bad/pattern-without-global-layer", test_pattern_without_global_layer);
  g_test_add_func ("/gemma3/bad/pattern-zero", test_pattern_zero);
  g_test_add_func ("/gemma3/bad/pattern-array", test_pattern_array);
  g_test_add_func ("/gemma3/ops/rope-neox-and-scale", test_rope_neox);
  g_test_add_func ("/gemma3/spm/tokenize", test_spm_tokenize);
  g_test_add_func ("/gemma3/spm/decode", test_spm_decode);
  return g_test_run ();
}
