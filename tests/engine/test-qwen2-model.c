/* test-qwen2-model.c — Qwen2.5-Coder-0.5B-Instruct (GGUF arch "qwen2") end to end, against
 * oracles we did not write:
 *
 *  - it loads with the shape llama.cpp reads from the file (24 layers, 14 query heads over 2 KV
 *    heads of 64, RoPE base 10^6, a separate output.weight) and its chat answer is right;
 *  - attention probabilities of every layer and head against the independent float64 numpy
 *    forward of tests/reference/qwen2_ref.py (attention-fixture-qwen2.*), max abs error
 *    <= 1e-4, on five short prompts (every row) and a 200-token prompt (10 rows); the causal
 *    upper triangle exactly 0, rows summing to 1;
 *  - logits against the same numpy reference (exact math on both sides: a tight bound);
 *  - the same on the scalar reference backend (cpu-ref), first prompt only (it is slow);
 *  - logits against llama.cpp (tests/reference/logits-fixture-qwen2.*, from
 *    gen_logits_fixture_qwen2.py) on 21 prompts within LOGIT_BOUND (why that bound: below);
 *  - gradients run (sc_model_has_backward; torch autograd's numbers are test-grad-arch.c's).
 *
 * Prompts are given as ids (stored in the fixtures), so this test does not depend on the
 * tokenizer; test-qwen2-tokenizer holds that to llama.cpp.
 *
 * Needs data/models/Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf (or $SACCADE_QWEN2_MODEL); exits 77
 * (skip) when it is absent, and skips when the file is not the one the fixtures were made with.
 *
 * With the argument "1.5b" (meson's test-qwen2-1.5b-model) the same checks run on
 * Qwen2.5-Coder-1.5B-Instruct (28 layers, 12 query heads over 2 KV heads of 128), against
 * attention-fixture-qwen2-1.5b.* (qwen2_ref.py --1.5b: fewer stored rows) and
 * logits-fixture-qwen2-1.5b.* (gen_logits_fixture_qwen2.py --1.5b: the same 21 prompts).
 * CI does not fetch that model (data/fetch-model.sh qwen2.5-1.5b does), so without it this
 * run exits 77 with the reason .ci/run allows.
 */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/forward/sc-backward.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/text/sc-tokenizer.h"

#include "sc-test-fixture.h"

/* Against the exact numpy reference only float32 rounding is left. */
#define NUMPY_LOGIT_BOUND 5e-4
#define ATTN_BOUND 1e-4

/* One Qwen2.5-Coder model: its file, the fixtures made from it, the shape it must load with
 * and what differs between the two (bounds measured per model, below). */
typedef struct {
  const char *label, *file, *env, *fetch;
  const char *attention_fixture, *logits_fixture; /* JSON; each names its .f32 */
  const char *name;
  const char *answer; /* greedy answer to the chat question (llama.cpp's, comfortable margins) */
  guint n_layers, n_embd, n_heads, head_dim, n_ff;
  double logit_bound, near_tie;
  int llamacpp_from; /* the first position compared with llama.cpp */
  double attn_bound_layer0; /* layer 0's probabilities on cpu (the others: ATTN_BOUND) */
  guint ref_prompts;        /* attention prompts run on cpu-ref */
} Qwen2Variant;

static const Qwen2Variant *variant;

/* Bound on max |Δlogit| / std(logits) against llama.cpp on the Q4_K_M file, over the stored
 * vocabulary slice and top-32 of each stored row and the top-2 of every position, after
 * removing each row's mean (ours from our row, llama.cpp's from the fixture's full-row mean):
 * a constant shift of a row changes no probability (llama.cpp's shifts reach 0.09 std here).
 * llama.cpp quantises every activation row to 8 bits before its Q4_K/Q5_0/Q6_K/Q8_0 dot
 * products and keeps K and V in fp16; we multiply the same dequantised weights in float32 and
 * agree with the exact float64 reference to NUMPY_LOGIT_BOUND, and so does llama.cpp on an
 * all-F32 copy of the file (1.2e-4 std, tests/reference/README.md section 10): the whole gap
 * is llama.cpp's rounding on the quantised file. Measured (21 prompts, 1..255 tokens, 60
 * stored rows, 1167 positions): 0.288 std over the rows, 0.215 std on the top-2; the bound
 * keeps ~40% headroom. */
#define LOGIT_BOUND 0.4
/* A different top-1 is accepted only where llama.cpp's own top-1/top-2 margin is below this
 * (std units): the 24 flips measured all had margins <= 0.077 std; since our logits are exact
 * to NUMPY_LOGIT_BOUND, which positions flip is fixed by the fixture, not by our build. */
#define NEAR_TIE 0.15
/* The 1.5B model's, measured the same way (tests/reference/README.md section 10.5). Against
 * llama.cpp: 0.733 std over 39 stored rows and 0.584 on the top-2 of 1146 positions (the
 * float64 reference itself is 0.70 std from llama.cpp at those positions), so 1.0; 26
 * near-tie flips, margins <= 0.077 std. Position 0 is left out of that comparison: there
 * llama.cpp's row is 4.5-6.9 std from the float64 reference on every prompt (top-1 different
 * on 5 of 6), while ours is within NUMPY_LOGIT_BOUND of the reference at position 0 as
 * everywhere (attention-vs-numpy): the gap is llama.cpp's arithmetic on the quantised file,
 * not a property of the model; it is printed, not bounded. The chat answer is llama.cpp's
 * greedy one (smallest step margin 4.1 logits). */
#define LOGIT_BOUND_15B 1.0
#define NEAR_TIE_15B 0.15
#define ANSWER_15B "The capital of France is Paris."
/* Layer 0 on cpu: head dim 128 and layer 0's large Q/K biases make its scores the largest,
 * and the cpu kernel sums their 128 products in float32: 2.15e-4 measured (chat_france;
 * 0.5B: 8.6e-5 over 64 products). cpu-ref, summing in double, gives 2.3e-5 on layer 0 and
 * keeps every layer within ATTN_BOUND; every later layer is within 1.1e-5 on cpu too. */
#define ATTN_BOUND_LAYER0_15B 4e-4

static const Qwen2Variant variants[] = {
  { .label = "Qwen2.5-Coder-0.5B-Instruct", .file = "Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf",
    .env = "SACCADE_QWEN2_MODEL", .fetch = "qwen2.5-0.5b",
    .attention_fixture = "attention-fixture-qwen2.json",
    .logits_fixture = "logits-fixture-qwen2.json",
    .name = "Qwen2.5-Coder 0.5B Instruct \xc2\xb7 Q4_K_M",
    .answer = "The capital of France is Paris.",
    .n_layers = 24, .n_embd = 896, .n_heads = 14, .head_dim = 64, .n_ff = 4864,
    .logit_bound = LOGIT_BOUND, .near_tie = NEAR_TIE, .attn_bound_layer0 = ATTN_BOUND,
    .ref_prompts = 1 },
  { .label = "Qwen2.5-Coder-1.5B-Instruct", .file = "Qwen2.5-Coder-1.5B-Instruct-Q4_K_M.gguf",
    .env = "SACCADE_QWEN2_15B_MODEL", .fetch = "qwen2.5-1.5b",
    .attention_fixture = "attention-fixture-qwen2-1.5b.json",
    .logits_fixture = "logits-fixture-qwen2-1.5b.json",
    .name = "Qwen2.5-Coder 1.5B Instruct \xc2\xb7 Q4_K_M",
    .answer = ANSWER_15B,
    .n_layers = 28, .n_embd = 1536, .n_heads = 12, .head_dim = 128, .n_ff = 8960,
    .logit_bound = LOGIT_BOUND_15B, .near_tie = NEAR_TIE_15B, .llamacpp_from = 1,
    .attn_bound_layer0 = ATTN_BOUND_LAYER0_15B, .ref_prompts = 2 },
};

static ScModel *model;
static ScBackend *backend;
static ScSession *session;
static char *model_sha;

/* TRUE when @root was made from the model under test; else marks the test skipped. */
static gboolean
same_model (JsonObject *root)
{
  if (g_strcmp0 (json_object_get_string_member (root, "model_sha256"), model_sha) == 0)
    return TRUE;
  g_test_skip_printf ("the model is not the one the fixture was made with (sha256 %s)", model_sha);
  return FALSE;
}

static double
row_mean (const float *row, int V)
{
  double m = 0.0;

  for (int k = 0; k < V; k++)
    m += row[k];
  return m / V;
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

/* ---- the model ------------------------------------------------------------------- */

static void
test_info (void)
{
  const ScModelInfo *in = sc_model_info (model);
  const ScTokenizer *tok = sc_model_tokenizer (model);

  g_assert_cmpstr (in->arch_name, ==, "qwen2");
  g_assert_cmpint (in->arch, ==, SC_ARCH_QWEN2);
  g_assert_cmpstr (in->name, ==, variant->name);
  g_assert_cmpuint (in->n_layers, ==, variant->n_layers);
  g_assert_cmpuint (in->n_embd, ==, variant->n_embd);
  g_assert_cmpuint (in->n_heads, ==, variant->n_heads);
  g_assert_cmpuint (in->n_kv_heads, ==, 2);
  g_assert_cmpuint (in->head_dim, ==, variant->head_dim);
  g_assert_cmpuint (in->n_rot, ==, variant->head_dim);
  g_assert_cmpuint (in->n_ff, ==, variant->n_ff);
  g_assert_cmpuint (in->n_vocab, ==, 151936);
  g_assert_false (in->tied_output); /* both files carry output.weight */
  g_assert_cmpfloat (in->rope_base, ==, 1e6f);
  g_assert_cmpfloat (in->attn_scale, ==, 1.0f / sqrtf ((float) variant->head_dim));
  g_assert_cmpfloat (in->embd_scale, ==, 0.0f);
  g_assert_cmpuint (in->sliding_window, ==, 0);
  for (int l = 0; l < (int) in->n_layers; l++)
    g_assert_cmpuint (sc_model_layer_window (in, l), ==, 0);
  /* every layer has its three biases, and they are not all zero */
  for (int l = 0; l < (int) in->n_layers; l++)
    {
      /* the packed view: the biases are dense vectors in it, and the float view of the
       * matrices would cost 7 GB on the 1.5B model */
      const ScLayerWeights *w = &sc_model_weights_packed (model)->layers[l];
      const int kv = (int) (in->n_kv_heads * in->head_dim);
      double sq = 0.0, sk = 0.0, sv = 0.0;
      g_assert_nonnull (w->bq);
      g_assert_nonnull (w->bk);
      g_assert_nonnull (w->bv);
      for (int i = 0; i < (int) (in->n_heads * in->head_dim); i++)
        sq += fabs (w->bq[i]);
      for (int i = 0; i < kv; i++)
        sk += fabs (w->bk[i]), sv += fabs (w->bv[i]);
      g_assert_cmpfloat (sq, >, 0.0);
      g_assert_cmpfloat (sk, >, 0.0);
      g_assert_cmpfloat (sv, >, 0.0);
    }
  g_assert_false (sc_tokenizer_adds_bos (tok));
  g_assert_cmpint (sc_tokenizer_eos (tok), ==, 151645);
  g_assert_true (sc_tokenizer_is_eog (tok, 151645)); /* <|im_end|> */
  g_assert_true (sc_tokenizer_is_eog (tok, 151643)); /* <|endoftext|> */
}

/* The chat answer, greedy with the KV cache, until <|im_end|>: "The capital of France is
 * Paris." (llama.cpp's greedy answer in logits-fixture-qwen2.json, every step's top-1/top-2
 * margin >= 3.7 logits). */
static void
test_generation (void)
{
  static const char prompt[] =
    "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant."
    "<|im_end|>\n<|im_start|>user\nWhat is the capital of France?<|im_end|>\n"
    "<|im_start|>assistant\n";
  const ScTokenizer *tok = sc_model_tokenizer (model);
  const int V = (int) sc_model_info (model)->n_vocab;
  g_autofree float *logits = g_new (float, V);
  GString *out = g_string_new ("");
  g_autofree char *answer = NULL;
  int32_t *ids = NULL;
  size_t n = 0, n0;
  bool stopped = false;
  ScError err = { 0 };

  g_assert_cmpint (sc_tokenize (tok, prompt, strlen (prompt), false, true, &ids, &n, &err), ==,
                   SC_OK);
  n0 = n;
  ids = realloc (ids, (n + 16) * sizeof *ids);
  g_assert_nonnull (ids);
  for (int t = 0; t < 16 && !stopped; t++)
    {
      ScForwardOptions opt = { .keep_kv = true, .n_past = t == 0 ? 0 : (int) n - 1 };
      char piece[64];
      size_t len;

      if (sc_forward (session, ids, (int) n, &opt, logits, &err) != SC_OK)
        g_error ("%s", err.message);
      ids[n] = argmax (logits, V);
      if (sc_tokenizer_is_eog (tok, ids[n]))
        stopped = true;
      else
        {
          len = sc_token_to_bytes (tok, ids[n], false, piece, sizeof piece);
          g_string_append_len (out, piece, (gssize) MIN (len, sizeof piece));
          n++;
        }
    }
  answer = g_string_free (out, FALSE);
  g_test_message ("greedy chat answer after %zu prompt tokens: '%s'", n0, answer);
  g_assert_true (stopped);
  g_assert_cmpint (ids[n], ==, 151645);
  g_assert_cmpstr (answer, ==, variant->answer);
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

/* ---- attention vs the numpy reference -------------------------------------------- */

typedef struct {
  const float *ref;   /* (L, H, R, n): the stored rows */
  const int *rows;    /* R query positions */
  int R, H, n, calls;
  double max_err, max_row_err;
  double max_err_first; /* layer 0 */
  double max_err_later; /* over layers 1..L-1: layer 0's Q and K biases (up to 81 and 145)
                         * make its scores the largest, and float32's rounding of them the
                         * largest error */
  int worst_layer, worst_head, worst_row;
  guint64 masked_cells, masked_nonzero, visible_zero;
} AttnCheck;

static bool
attn_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  AttnCheck *c = user;

  g_assert_cmpint (n_q, ==, c->n);
  g_assert_cmpint (n_k, ==, c->n);
  for (int i = 0; i < n_q; i++)
    {
      const float *row = probs + (size_t) i * n_k;
      double sum = 0.0;
      for (int j = 0; j < n_k; j++)
        {
          if (j > i)
            {
              c->masked_cells++;
              c->masked_nonzero += row[j] != 0.0f;
            }
          else
            c->visible_zero += row[j] == 0.0f;
          sum += row[j];
        }
      c->max_row_err = fmax (c->max_row_err, fabs (sum - 1.0));
    }
  for (int r = 0; r < c->R; r++)
    {
      const float *ref = c->ref + (((size_t) layer * c->H + head) * c->R + r) * c->n;
      const float *row = probs + (size_t) c->rows[r] * n_k;
      for (int j = 0; j < n_k; j++)
        {
          double e = fabs ((double) row[j] - ref[j]);
          if (layer > 0)
            c->max_err_later = fmax (c->max_err_later, e);
          else
            c->max_err_first = fmax (c->max_err_first, e);
          if (e > c->max_err)
            {
              c->max_err = e;
              c->worst_layer = layer;
              c->worst_head = head;
              c->worst_row = c->rows[r];
            }
        }
    }
  c->calls++;
  return true;
}

/* Runs the first @max_prompts prompts of the attention fixture through @s: layer 0's
 * probabilities within @layer0_bound, every later layer's within ATTN_BOUND. */
static void
check_attention_fixture (ScSession *s, guint max_prompts, double layer0_bound)
{
  g_autoptr (JsonParser) parser = NULL;
  JsonObject *root = sc_test_fixture_json (variant->attention_fixture, &parser);
  g_autoptr (GMappedFile) blob = NULL;
  const ScModelInfo *in = sc_model_info (model);
  const int V = (int) in->n_vocab;
  JsonArray *prompts = json_object_get_array_member (root, "prompts");
  JsonObject *sl = json_object_get_object_member (root, "logit_slice");
  const int stride = (int) json_object_get_int_member (sl, "stride");
  const int n_slice = (int) json_object_get_int_member (sl, "count");
  double worst_attn = 0.0, worst_logit = 0.0;
  int longest = 0;
  const char *data;
  gsize data_len;

  if (!same_model (root))
    return;
  blob = sc_test_fixture_map (json_object_get_string_member (root, "data_file"));
  data = g_mapped_file_get_contents (blob);
  data_len = g_mapped_file_get_length (blob);
  g_assert_cmpint (json_object_get_int_member (root, "total_bytes"), ==, (gint64) data_len);
  g_assert_cmpint ((gint64) n_slice * stride, >=, V);
  g_assert_cmpuint (json_array_get_length (prompts), >=, 5);
  for (guint p = 0; p < json_array_get_length (prompts) && p < max_prompts; p++)
    {
      JsonObject *pr = json_array_get_object_element (prompts, p);
      const char *name = json_object_get_string_member (pr, "name");
      JsonObject *att = json_object_get_object_member (pr, "attention");
      JsonArray *rows = json_object_get_array_member (pr, "rows");
      JsonArray *lrows = json_object_get_array_member (pr, "logits");
      g_autofree int32_t *ids = NULL;
      g_autofree int *row_pos = NULL;
      g_autofree float *logits = NULL;
      AttnCheck c = { 0 };
      ScObserver obs = { NULL, attn_observe, &c };
      ScForwardOptions opt = { .observer = &obs };
      ScError err = { 0 };
      gint64 off = json_object_get_int_member (att, "offset");
      gboolean all;
      int n;

      ids = sc_test_fixture_ids (json_object_get_array_member (pr, "ids"), &n);
      c.R = (int) json_array_get_length (rows);
      row_pos = g_new (int, c.R);
      for (int r = 0; r < c.R; r++)
        {
          row_pos[r] = (int) json_array_get_int_element (rows, r);
          g_assert_cmpint (row_pos[r], >=, 0);
          g_assert_cmpint (row_pos[r], <, n);
        }
      g_assert_cmpint (off + (gint64) in->n_layers * in->n_heads * c.R * n * 4, <=,
                       (gint64) data_len);
      c.ref = (const float *) (data + off);
      c.rows = row_pos;
      c.H = (int) in->n_heads;
      c.n = n;
      all = n <= 64; /* every position's logits for short prompts, else the last only */
      opt.all_logits = all;
      logits = g_new (float, (size_t) (all ? n : 1) * V);
      if (sc_forward (s, ids, n, &opt, logits, &err) != SC_OK)
        g_error ("%s: %s", name, err.message);
      g_assert_cmpint (c.calls, ==, (int) (in->n_layers * in->n_heads));
      g_test_message ("%-12s n=%3d rows=%3d: max |dP| %.3g (layer %d head %d row %d), max |row "
                      "sum - 1| %.3g, %" G_GUINT64_FORMAT " masked cells", name, n, c.R,
                      c.max_err, c.worst_layer, c.worst_head, c.worst_row, c.max_row_err,
                      c.masked_cells);
      printf ("# qwen2 attention vs numpy (%s, %s, %d tokens, %d rows): max |dP| = %.3g (layers "
              "1-%d: %.3g)\n", sc_backend_name (sc_session_backend (s)), name, n, c.R, c.max_err,
              (int) in->n_layers - 1, c.max_err_later);
      g_assert_cmpuint (c.masked_nonzero, ==, 0);
      /* the reference's smallest visible weight is in the fixture; where it is far above
       * float32's range, no visible cell may be 0 */
      if (json_object_get_double_member (pr, "min_visible_probability") > 1e-30)
        g_assert_cmpuint (c.visible_zero, ==, 0);
      g_assert_cmpfloat (c.max_row_err, <=, 1e-5);
      g_assert_cmpfloat (c.max_err_first, <=, layer0_bound);
      g_assert_cmpfloat (c.max_err_later, <=, ATTN_BOUND);
      worst_attn = fmax (worst_attn, c.max_err);
      longest = MAX (longest, n);

      /* logits at the reference's positions (the last only for long prompts) */
      for (guint k = 0; k < json_array_get_length (lrows); k++)
        {
          JsonObject *lo = json_array_get_object_element (lrows, k);
          int pos = (int) json_object_get_int_member (lo, "pos");
          JsonObject *slo = json_object_get_object_member (lo, "slice");
          const float *ref = (const float *) (data + json_object_get_int_member (slo, "offset"));
          JsonArray *tid = json_object_get_array_member (lo, "top_ids"),
                    *tlg = json_object_get_array_member (lo, "top_logits");
          double std = json_object_get_double_member (lo, "std"), maxd = 0.0;
          const float *row;

          if (!all && pos != n - 1)
            continue;
          row = logits + (size_t) (all ? pos : 0) * V;
          g_assert_cmpint (json_object_get_int_member (slo, "count"), ==, n_slice);
          for (int j = 0; j < n_slice; j++)
            maxd = fmax (maxd, fabs (row[(size_t) j * stride] - ref[j]));
          for (int j = 0; j < (int) json_array_get_length (tid); j++)
            maxd = fmax (maxd, fabs (row[json_array_get_int_element (tid, j)]
                                     - json_array_get_double_element (tlg, j)));
          g_assert_cmpint (argmax (row, V), ==, json_array_get_int_element (tid, 0));
          worst_logit = fmax (worst_logit, maxd / std);
          if (maxd / std > NUMPY_LOGIT_BOUND)
            g_error ("%s position %d: max |dlogit|/std = %.3g vs numpy exceeds %.3g", name, pos,
                     maxd / std, NUMPY_LOGIT_BOUND);
        }
    }
  printf ("# qwen2 (%s): attention vs numpy max |dP| %.3g (bound %.0e, longest prompt %d); "
          "logits vs numpy max |dlogit|/std %.3g (bound %.0e)\n",
          sc_backend_name (sc_session_backend (s)), worst_attn, ATTN_BOUND, longest, worst_logit,
          NUMPY_LOGIT_BOUND);
}

static void
test_attention_vs_numpy (void)
{
  check_attention_fixture (session, G_MAXUINT, variant->attn_bound_layer0);
}

/* The scalar reference backend too, on the first prompt or two (it is slow): its double
 * accumulation holds every layer, layer 0 included, to ATTN_BOUND. */
static void
test_attention_vs_numpy_reference_backend (void)
{
  ScBackend *ref = sc_backend_cpu_ref_new ();
  ScSession *s = NULL;
  ScError err = { 0 };

  g_assert_cmpint (sc_session_new (model, ref, &s, &err), ==, SC_OK);
  check_attention_fixture (s, variant->ref_prompts, ATTN_BOUND);
  sc_session_free (s);
  sc_backend_free (ref);
}

/* ---- logits vs llama.cpp ----------------------------------------------------------- */

static void
test_logits_vs_llamacpp (void)
{
  g_autoptr (JsonParser) parser = NULL;
  JsonObject *root = sc_test_fixture_json (variant->logits_fixture, &parser);
  g_autoptr (GMappedFile) blob = NULL;
  JsonArray *prompts = json_object_get_array_member (root, "prompts");
  const int V = (int) sc_model_info (model)->n_vocab;
  const int stride = (int) json_object_get_int_member (root, "slice_stride");
  const int n_slice = (int) json_object_get_int_member (root, "slice_count");
  double worst_rows = 0.0, worst_top = 0.0, worst_shift = 0.0, tie_margin = 0.0;
  double unbounded = 0.0;
  int n_positions = 0, n_rows = 0, near_ties = 0, chat = 0;
  const char *data;
  gsize data_len;

  if (!same_model (root))
    return;
  blob = sc_test_fixture_map (json_object_get_string_member (root, "rows_file"));
  data = g_mapped_file_get_contents (blob);
  data_len = g_mapped_file_get_length (blob);
  g_assert_cmpint (json_object_get_int_member (root, "n_vocab"), ==, V);
  g_assert_cmpint ((gint64) n_slice * stride, >=, V);
  g_assert_cmpuint (json_array_get_length (prompts), >=, 20);
  for (guint p = 0; p < json_array_get_length (prompts); p++)
    {
      JsonObject *pr = json_array_get_object_element (prompts, p);
      const char *name = json_object_get_string_member (pr, "name");
      JsonArray *top1 = json_object_get_array_member (pr, "top1_id"),
                *top1l = json_object_get_array_member (pr, "top1_logit"),
                *top2 = json_object_get_array_member (pr, "top2_id"),
                *top2l = json_object_get_array_member (pr, "top2_logit"),
                *stds = json_object_get_array_member (pr, "std"),
                *means = json_object_get_array_member (pr, "mean"),
                *rows = json_object_get_array_member (pr, "rows");
      g_autofree int32_t *ids = NULL;
      g_autofree float *all = NULL;
      ScForwardOptions opt = { .all_logits = true };
      ScError err = { 0 };
      double prompt_worst = 0.0;
      int n;

      ids = sc_test_fixture_ids (json_object_get_array_member (pr, "ids"), &n);
      chat += json_object_get_boolean_member (pr, "parse_special");
      all = g_new (float, (size_t) n * V);
      if (sc_forward (session, ids, n, &opt, all, &err) != SC_OK)
        g_error ("prompt %s: %s", name, err.message);
      for (guint r = 0; r < json_array_get_length (rows); r++)
        {
          JsonObject *ro = json_array_get_object_element (rows, r);
          int pos = (int) json_object_get_int_member (ro, "pos");
          gint64 off = json_object_get_int_member (ro, "offset");
          const float *ref = (const float *) (data + off);
          JsonArray *tid = json_object_get_array_member (ro, "top_ids"),
                    *tlg = json_object_get_array_member (ro, "top_logits");
          const float *row = all + (size_t) pos * V;
          double std = json_array_get_double_element (stds, pos), maxd = 0.0;
          /* compared after removing each row's own mean: a constant shift is softmax-free */
          double shift = row_mean (row, V) - json_array_get_double_element (means, pos);

          g_assert_cmpint (off + (gint64) n_slice * 4, <=, (gint64) data_len);
          for (int j = 0; j < n_slice; j++)
            maxd = fmax (maxd, fabs (row[(size_t) j * stride] - shift - ref[j]));
          for (int j = 0; j < (int) json_array_get_length (tid); j++)
            maxd = fmax (maxd, fabs (row[json_array_get_int_element (tid, j)] - shift
                                     - json_array_get_double_element (tlg, j)));
          if (pos < variant->llamacpp_from)
            {
              /* not bounded (the variant's comment says why); printed */
              unbounded = fmax (unbounded, maxd / std);
              continue;
            }
          prompt_worst = fmax (prompt_worst, maxd / std);
          worst_shift = fmax (worst_shift, fabs (shift) / std);
          n_rows++;
        }
      for (int i = variant->llamacpp_from; i < n; i++)
        {
          const float *row = all + (size_t) i * V;
          int t1 = (int) json_array_get_int_element (top1, i);
          int t2 = (int) json_array_get_int_element (top2, i);
          double std = json_array_get_double_element (stds, i);
          double shift = row_mean (row, V) - json_array_get_double_element (means, i);
          double d1 = fabs (row[t1] - shift - json_array_get_double_element (top1l, i)) / std;
          double d2 = fabs (row[t2] - shift - json_array_get_double_element (top2l, i)) / std;
          int ours = argmax (row, V);

          worst_top = fmax (worst_top, fmax (d1, d2));
          if (ours != t1)
            {
              double margin = (json_array_get_double_element (top1l, i)
                               - json_array_get_double_element (top2l, i)) / std;
              if (margin >= variant->near_tie)
                g_error ("prompt %s position %d: top-1 %d but llama.cpp says %d with margin "
                         "%.3f std (not a near-tie)", name, i, ours, t1, margin);
              tie_margin = fmax (tie_margin, margin);
              near_ties++;
            }
          n_positions++;
        }
      worst_rows = fmax (worst_rows, prompt_worst);
      g_test_message ("%-24s n=%3d  max|dlogit|/std %.4f", name, n, prompt_worst);
      if (prompt_worst > variant->logit_bound)
        g_error ("prompt %s: max |dlogit|/std = %.4f exceeds %.3f", name, prompt_worst,
                 variant->logit_bound);
    }
  printf ("# qwen2 logits vs llama.cpp (row means removed): worst max|dlogit|/std %.4f over %d "
          "rows (bound %.2f), top-2 %.4f, largest mean shift %.3f std, near-tie top-1 "
          "differences %d of %d positions (largest llama.cpp margin among them %.3f std)\n",
          worst_rows, n_rows, variant->logit_bound, worst_top, worst_shift, near_ties, n_positions,
          tie_margin);
  if (variant->llamacpp_from > 0)
    printf ("# positions before %d (not bounded): max|dlogit|/std %.3f against llama.cpp\n",
            variant->llamacpp_from, unbounded);
  g_assert_cmpint (chat, >=, 1);
  g_assert_cmpfloat (worst_top, <=, variant->logit_bound);
}

int
main (int argc, char **argv)
{
  const char *env;
  const char *src = g_getenv ("SC_TEST_SOURCE_DIR");
  g_autofree char *path = NULL;
  ScError err = { 0 };
  int rc;

  g_test_init (&argc, &argv, NULL);
  variant = &variants[argc > 1 && strcmp (argv[1], "1.5b") == 0];
  env = g_getenv (variant->env);
  path = env != NULL ? g_strdup (env)
                     : g_build_filename (src != NULL ? src : ".", "data", "models", variant->file,
                                         NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      /* .ci/run allows the 1.5B's skip by these words */
      printf ("1..0 # SKIP the %s model is not fetched (%s): run data/fetch-model.sh %s or set "
              "%s\n", variant->label, path, variant->fetch, variant->env);
      return 77;
    }
  model_sha = sc_test_file_sha256 (path);
  if (sc_model_open (path, 2, &model, &err) != SC_OK)
    g_error ("%s: %s", path, err.message);
  backend = sc_backend_cpu_new (2, &err);
  if (backend == NULL || sc_session_new (model, backend, &session, &err) != SC_OK)
    g_error ("%s", err.message);

  g_test_add_func ("/qwen2/model/info", test_info);
  g_test_add_func ("/qwen2/model/generation", test_generation);
  g_test_add_func ("/qwen2/model/gradients", test_gradients);
  g_test_add_func ("/qwen2/model/attention-vs-numpy", test_attention_vs_numpy);
  g_test_add_func ("/qwen2/model/attention-vs-numpy-reference-backend",
                   test_attention_vs_numpy_reference_backend);
  g_test_add_func ("/qwen2/model/logits-vs-llamacpp", test_logits_vs_llamacpp);
  rc = g_test_run ();
  sc_session_free (session);
  sc_backend_free (backend);
  sc_model_free (model);
  g_free (model_sha);
  return rc;
}
