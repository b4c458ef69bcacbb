/* test-model.c — SmolLM2-135M end to end, against oracles we did not write.
 *
 *  - logits vs llama.cpp (tests/reference/logits-fixture.*, from gen_logits_fixture.py):
 *    full rows at 3 positions per prompt, and the top-2 logits at every position;
 *  - attention probabilities vs an independent float64 numpy reference reading the GGUF
 *    with the `gguf` package (tests/reference/attention-fixture.*, from attention_ref.py):
 *    every layer and head, max abs error <= 1e-4;
 *  - invariants of every captured head; greedy chat generation answers "Paris";
 *  - interventions: ablating nothing is bit-identical, zero-ablating a head is not.
 *
 * Needs the default model (data/fetch-model.sh); exits 77 (skip) when it is absent.
 */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/text/sc-tokenizer.h"

#include "sc-test-fixture.h"

/* The bound on max |Δlogit| / std(logits) against llama.cpp on the Q4_1 file, and the
 * margin below which a different top-1 token counts as a near-tie. llama.cpp quantises
 * every activation row to 8 bits (Q8_1/Q8_0 blocks of 32) before its Q4_1 and Q8_0 dot
 * products and keeps K and V in fp16; we multiply the same dequantised weights in float32.
 * tests/reference/attention_ref.py separates the two effects: llama.cpp on an all-F32 copy
 * of the file agrees with the float64 numpy reference to 1.5e-5 std, while numpy with
 * ggml's rounding emulated lands 0.60 std from exact math — the same size as our measured
 * worst case against llama.cpp (0.73 std over 64 full rows of 23 prompts). The bound keeps
 * ~35% headroom over that; docs/correctness.md has the numbers. Against the exact numpy
 * reference the bound is four orders of magnitude tighter (NUMPY_LOGIT_BOUND). */
#define LOGIT_BOUND 1.0
#define NUMPY_LOGIT_BOUND 1e-3

static ScModel *model;
static ScBackend *backend;
static ScSession *session;

static void
test_logits_vs_llamacpp (void)
{
  g_autoptr (JsonParser) parser = NULL;
  JsonObject *root = sc_test_fixture_json ("logits-fixture.json", &parser);
  g_autoptr (GMappedFile) rows = sc_test_fixture_map ("logits-fixture.f32");
  const char *data = g_mapped_file_get_contents (rows);
  const gsize data_len = g_mapped_file_get_length (rows);
  JsonArray *prompts = json_object_get_array_member (root, "prompts");
  const int V = (int) sc_model_info (model)->n_vocab;
  double worst_full = 0.0, worst_top = 0.0;
  int n_positions = 0, n_full = 0, near_ties = 0, min_n = 1 << 30, max_n = 0, chat = 0;
  guint p;

  g_assert_cmpint (json_object_get_int_member (root, "n_vocab"), ==, V);
  g_assert_cmpuint (json_array_get_length (prompts), >=, 20);
  for (p = 0; p < json_array_get_length (prompts); p++)
    {
      JsonObject *pr = json_array_get_object_element (prompts, p);
      JsonArray *top1 = json_object_get_array_member (pr, "top1_id"),
                *top1l = json_object_get_array_member (pr, "top1_logit"),
                *top2 = json_object_get_array_member (pr, "top2_id"),
                *top2l = json_object_get_array_member (pr, "top2_logit"),
                *stds = json_object_get_array_member (pr, "std"),
                *full = json_object_get_array_member (pr, "rows");
      ScForwardOptions opt = { .all_logits = true };
      ScError err = { 0 };
      g_autofree int32_t *ids = NULL;
      g_autofree float *logits = NULL;
      double prompt_worst = 0.0;
      int n, i;
      guint r;

      ids = sc_test_fixture_ids (json_object_get_array_member (pr, "ids"), &n);
      min_n = MIN (min_n, n);
      max_n = MAX (max_n, n);
      chat += json_object_get_boolean_member (pr, "parse_special");
      logits = g_new (float, (gsize) n * V);
      if (sc_forward (session, ids, n, &opt, logits, &err) != SC_OK)
        g_error ("prompt %s: %s", json_object_get_string_member (pr, "name"), err.message);

      /* 1. every position: llama.cpp's top-2 logits, and the same top-1 except near-ties */
      for (i = 0; i < n; i++)
        {
          const float *row = logits + (size_t) i * V;
          int t1 = (int) json_array_get_int_element (top1, i);
          int t2 = (int) json_array_get_int_element (top2, i);
          double std = json_array_get_double_element (stds, i);
          double d1 = fabs (row[t1] - json_array_get_double_element (top1l, i)) / std;
          double d2 = fabs (row[t2] - json_array_get_double_element (top2l, i)) / std;
          int ours = 0, k;
          for (k = 1; k < V; k++)
            if (row[k] > row[ours])
              ours = k;
          worst_top = fmax (worst_top, fmax (d1, d2));
          if (ours != t1)
            {
              double margin = (json_array_get_double_element (top1l, i)
                               - json_array_get_double_element (top2l, i)) / std;
              if (margin >= LOGIT_BOUND)
                g_error ("prompt %s position %d: top-1 %d but llama.cpp says %d with margin "
                         "%.3f std (not a near-tie)", json_object_get_string_member (pr, "name"),
                         i, ours, t1, margin);
              near_ties++;
            }
          n_positions++;
        }
      /* 2. full rows */
      for (r = 0; r < json_array_get_length (full); r++)
        {
          JsonObject *ro = json_array_get_object_element (full, r);
          int pos = (int) json_object_get_int_member (ro, "pos");
          gint64 off = json_object_get_int_member (ro, "offset");
          const float *ref = (const float *) (data + off);
          const float *row = logits + (size_t) pos * V;
          double mean = 0, var = 0, maxd = 0;
          int k;
          g_assert_cmpint (off + (gint64) V * 4, <=, (gint64) data_len);
          for (k = 0; k < V; k++)
            mean += ref[k];
          mean /= V;
          for (k = 0; k < V; k++)
            var += (ref[k] - mean) * (ref[k] - mean);
          for (k = 0; k < V; k++)
            maxd = fmax (maxd, fabs (row[k] - ref[k]));
          prompt_worst = fmax (prompt_worst, maxd / sqrt (var / V));
          n_full++;
        }
      worst_full = fmax (worst_full, prompt_worst);
      g_test_message ("%-22s n=%3d  max|dlogit|/std %.4f", json_object_get_string_member (pr, "name"),
                      n, prompt_worst);
      if (prompt_worst > LOGIT_BOUND)
        g_error ("prompt %s: max |dlogit|/std = %.4f exceeds %.3f",
                 json_object_get_string_member (pr, "name"), prompt_worst, LOGIT_BOUND);
    }
  g_test_message ("%u prompts (%d..%d tokens, %d chat-formatted), %d positions: worst full-row "
                  "max|dlogit|/std %.4f over %d rows, worst top-2 logit error %.4f std, %d "
                  "near-tie top-1 differences", json_array_get_length (prompts), min_n, max_n,
                  chat, n_positions, worst_full, n_full, worst_top, near_ties);
  printf ("# logits vs llama.cpp: worst max|dlogit|/std %.4f (bound %.2f), top-2 %.4f, near-ties "
          "%d of %d positions\n", worst_full, LOGIT_BOUND, worst_top, near_ties, n_positions);
  g_assert_cmpint (min_n, ==, 1);
  g_assert_cmpint (max_n, >=, 256);
  g_assert_cmpint (chat, >=, 1);
  g_assert_cmpfloat (worst_top, <=, LOGIT_BOUND);
}

/* ---- attention vs the numpy reference -------------------------------------------- */

typedef struct {
  const float *ref; /* (L, H, n, n) */
  int H, n, calls;
  double max_err;
  int worst_layer, worst_head;
  double max_row_err; /* |row sum - 1| */
  gboolean causal_ok;
} AttnCheck;

static bool
attn_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  AttnCheck *c = user;
  const float *ref = c->ref + ((size_t) layer * c->H + head) * c->n * c->n;
  int i, j;

  g_assert_cmpint (n_q, ==, c->n);
  g_assert_cmpint (n_k, ==, c->n);
  for (i = 0; i < n_q; i++)
    {
      double sum = 0.0;
      for (j = 0; j < n_k; j++)
        {
          double e = fabs (probs[i * n_k + j] - ref[i * n_k + j]);
          if (e > c->max_err)
            {
              c->max_err = e;
              c->worst_layer = layer;
              c->worst_head = head;
            }
          if (j > i && probs[i * n_k + j] != 0.0f)
            c->causal_ok = FALSE;
          sum += probs[i * n_k + j];
        }
      c->max_row_err = fmax (c->max_row_err, fabs (sum - 1.0));
    }
  c->calls++;
  return true;
}

static void
check_attention_fixture (ScSession *s, int max_prompts)
{
  g_autoptr (JsonParser) parser = NULL;
  JsonObject *root = sc_test_fixture_json ("attention-fixture.json", &parser);
  g_autoptr (GMappedFile) blob = sc_test_fixture_map ("attention-fixture.f32");
  const char *data = g_mapped_file_get_contents (blob);
  JsonArray *prompts = json_object_get_array_member (root, "prompts");
  const ScModelInfo *in = sc_model_info (model);
  guint p;

  g_assert_cmpuint (json_array_get_length (prompts), >=, 3);
  for (p = 0; p < json_array_get_length (prompts) && (int) p < max_prompts; p++)
    {
      JsonObject *pr = json_array_get_object_element (prompts, p);
      JsonObject *att = json_object_get_object_member (pr, "attention");
      g_autofree int32_t *ids = NULL;
      g_autofree float *logits = NULL;
      AttnCheck c = { 0 };
      ScObserver obs = { NULL, attn_observe, &c };
      ScForwardOptions opt = { .observer = &obs };
      ScError err = { 0 };
      int n;

      ids = sc_test_fixture_ids (json_object_get_array_member (pr, "ids"), &n);
      c.ref = (const float *) (data + json_object_get_int_member (att, "offset"));
      c.H = (int) in->n_heads;
      c.n = n;
      c.causal_ok = TRUE;
      logits = g_new (float, in->n_vocab);
      if (sc_forward (s, ids, n, &opt, logits, &err) != SC_OK)
        g_error ("%s", err.message);
      g_assert_cmpint (c.calls, ==, (int) (in->n_layers * in->n_heads)); /* 270 */
      g_test_message ("%s %-10s n=%2d: max |dP| %.3g (layer %d head %d), max |row sum - 1| %.3g",
                      sc_backend_name (sc_session_backend (s)), json_object_get_string_member (pr, "name"),
                      n, c.max_err, c.worst_layer, c.worst_head, c.max_row_err);
      printf ("# attention vs numpy (%s, %s, %d tokens): max |dP| = %.3g\n",
              sc_backend_name (sc_session_backend (s)), json_object_get_string_member (pr, "name"), n,
              c.max_err);
      g_assert_true (c.causal_ok);
      g_assert_cmpfloat (c.max_row_err, <=, 1e-5);
      g_assert_cmpfloat (c.max_err, <=, 1e-4);
      /* the last position's logits against the reference's, exact math on both sides */
      {
        JsonObject *lo = json_object_get_object_member (pr, "logits_last");
        const float *ref = (const float *) (data + json_object_get_int_member (lo, "offset"));
        double mean = 0, var = 0, maxd = 0;
        int k;
        for (k = 0; k < (int) in->n_vocab; k++)
          mean += ref[k];
        mean /= in->n_vocab;
        for (k = 0; k < (int) in->n_vocab; k++)
          {
            var += (ref[k] - mean) * (ref[k] - mean);
            maxd = fmax (maxd, fabs (logits[k] - ref[k]));
          }
        maxd /= sqrt (var / in->n_vocab);
        printf ("# logits vs numpy (%s, %s): max |dlogit|/std = %.3g\n",
                sc_backend_name (sc_session_backend (s)), json_object_get_string_member (pr, "name"), maxd);
        g_assert_cmpfloat (maxd, <=, NUMPY_LOGIT_BOUND);
      }
    }
}

static void
test_attention_vs_numpy (void)
{
  check_attention_fixture (session, 1000);
}

/* The scalar reference backend too, on the first prompt (it is slow). */
static void
test_attention_vs_numpy_reference_backend (void)
{
  ScBackend *ref = sc_backend_cpu_ref_new ();
  ScSession *s = NULL;
  ScError err = { 0 };

  g_assert_cmpint (sc_session_new (model, ref, &s, &err), ==, SC_OK);
  check_attention_fixture (s, 1);
  sc_session_free (s);
  sc_backend_free (ref);
}

static void
test_shapes (void)
{
  const ScModelInfo *in = sc_model_info (model);

  g_assert_cmpstr (in->arch_name, ==, "llama");
  g_assert_cmpuint (in->n_layers, ==, 30);
  g_assert_cmpuint (in->n_heads, ==, 9);
  g_assert_cmpuint (in->n_kv_heads, ==, 3);
  g_assert_cmpuint (in->head_dim, ==, 64);
  g_assert_cmpuint (in->n_embd, ==, 576);
  g_assert_cmpuint (in->n_vocab, ==, 49152);
  g_assert_true (in->tied_output);
  g_assert_cmpfloat (in->rope_base, ==, 100000.0f);
  /* 134,515,008 parameters in HF's count; the GGUF stores the same tensors */
  g_assert_cmpuint (sc_model_n_params (model), ==, 134515008);
}

/* ---- generation -------------------------------------------------------------------- */

static void
test_generation (void)
{
  g_autoptr (JsonParser) parser = NULL;
  JsonObject *root = sc_test_fixture_json ("logits-fixture.json", &parser);
  JsonArray *gens = json_object_get_array_member (root, "generations");
  const ScTokenizer *tok = sc_model_tokenizer (model);
  const int V = (int) sc_model_info (model)->n_vocab;
  g_autofree float *logits = g_new (float, V);
  guint g;
  gboolean saw_paris = FALSE;

  for (g = 0; g < json_array_get_length (gens); g++)
    {
      JsonObject *ge = json_array_get_object_element (gens, g);
      const char *text = json_object_get_string_member (ge, "prompt_text");
      gboolean is_chat = g_strcmp0 (json_object_get_string_member (ge, "kind"), "chat") == 0;
      g_autofree int32_t *want_prompt = NULL, *want_gen = NULL;
      g_autoptr (GString) out = g_string_new (NULL);
      GArray *ids = g_array_new (FALSE, FALSE, sizeof (int32_t));
      int32_t *tids = NULL;
      size_t tn = 0;
      int n_want_prompt, n_want_gen, step, same = 0;
      ScError err = { 0 };

      want_prompt = sc_test_fixture_ids (json_object_get_array_member (ge, "prompt_ids"), &n_want_prompt);
      want_gen = sc_test_fixture_ids (json_object_get_array_member (ge, "generated_ids"), &n_want_gen);
      /* our tokenizer must reproduce the prompt ids */
      g_assert_cmpint (sc_tokenize (tok, text, strlen (text), FALSE, is_chat, &tids, &tn, &err),
                       ==, SC_OK);
      g_assert_cmpint ((int) tn, ==, n_want_prompt);
      g_assert_cmpint (memcmp (tids, want_prompt, tn * sizeof *tids), ==, 0);
      g_array_append_vals (ids, tids, (guint) tn);
      free (tids);

      for (step = 0; step < n_want_gen; step++)
        {
          int best = 0, k;
          char buf[128];
          size_t nb;
          ScForwardOptions opt = { .keep_kv = true, .n_past = step == 0 ? 0 : (int) ids->len - 1 };
          if (sc_forward (session, (int32_t *) ids->data, (int) ids->len, &opt, logits, &err)
              != SC_OK)
            g_error ("%s", err.message);
          for (k = 1; k < V; k++)
            if (logits[k] > logits[best])
              best = k;
          if (best == want_gen[step] && same == step)
            same++;
          if (sc_tokenizer_is_eog (tok, best))
            break;
          g_array_append_val (ids, best);
          nb = sc_token_to_bytes (tok, best, FALSE, buf, sizeof buf);
          g_string_append_len (out, buf, (gssize) MIN (nb, sizeof buf));
        }
      {
        g_autofree char *valid = g_utf8_make_valid (out->str, (gssize) out->len);
        char keep[129];
        g_autofree char *shown = NULL;
        int b;
        for (b = 0; b < 128; b++) /* escape control characters, keep UTF-8 as it is */
          keep[b] = (char) (0x80 + b);
        keep[128] = '\0';
        shown = g_strescape (valid, keep);
        printf ("# generation %s: \"%s\" (first %d of %d ids as llama.cpp's)\n",
                json_object_get_string_member (ge, "name"), shown, same, n_want_gen);
      }
      if (is_chat && strstr (text, "capital of France") != NULL)
        {
          g_assert_nonnull (strstr (out->str, "Paris"));
          saw_paris = TRUE;
        }
      g_array_unref (ids);
    }
  g_assert_true (saw_paris);

  /* The exact-math reference's own greedy answer (float64 numpy, no activation rounding)
   * must be ours token for token: no near-tie rounding can excuse a difference there. */
  {
    g_autoptr (JsonParser) ap = NULL;
    JsonObject *aroot = sc_test_fixture_json ("attention-fixture.json", &ap);
    JsonArray *rg = json_object_get_array_member (aroot, "reference_generations");
    guint r;

    g_assert_cmpuint (json_array_get_length (rg), >=, 1);
    for (r = 0; r < json_array_get_length (rg); r++)
      {
        JsonObject *ge = json_array_get_object_element (rg, r);
        g_autofree int32_t *prompt = NULL, *want = NULL;
        GArray *ids = g_array_new (FALSE, FALSE, sizeof (int32_t));
        int n_prompt, n_want, step;
        ScError err = { 0 };

        prompt = sc_test_fixture_ids (json_object_get_array_member (ge, "prompt_ids"), &n_prompt);
        want = sc_test_fixture_ids (json_object_get_array_member (ge, "generated_ids"), &n_want);
        g_array_append_vals (ids, prompt, (guint) n_prompt);
        for (step = 0; step < n_want; step++)
          {
            ScForwardOptions opt = { .keep_kv = true,
                                     .n_past = step == 0 ? 0 : (int) ids->len - 1 };
            int best = 0, k;
            if (sc_forward (session, (int32_t *) ids->data, (int) ids->len, &opt, logits, &err)
                != SC_OK)
              g_error ("%s", err.message);
            for (k = 1; k < V; k++)
              if (logits[k] > logits[best])
                best = k;
            g_assert_cmpint (best, ==, want[step]);
            g_array_append_val (ids, best);
          }
        g_array_unref (ids);
      }
  }
}

/* ---- interventions ------------------------------------------------------------------ */

static void
test_interventions (void)
{
  const ScModelInfo *in = sc_model_info (model);
  static const char text[] = "The cat chased the ball because it was tired.";
  const int V = (int) in->n_vocab;
  int32_t *ids = NULL;
  size_t n = 0;
  ScError err = { 0 };
  g_autofree float *plain = NULL, *got = NULL, *full = NULL;
  g_autofree float *scale = g_new (float, in->n_layers * in->n_heads);
  g_autofree uint8_t *mask = NULL;
  ScIntervention noop = { 0 };
  ScForwardOptions keep = { .all_logits = true, .keep_residuals = true };
  ScForwardOptions with = { .all_logits = true, .intervention = &noop };
  guint i;

  g_assert_cmpint (sc_tokenize (sc_model_tokenizer (model), text, strlen (text), FALSE, FALSE,
                                &ids, &n, &err), ==, SC_OK);
  plain = g_new (float, n * V);
  got = g_new (float, n * V);
  full = g_new (float, n * V);
  mask = g_new0 (uint8_t, n);
  for (i = 0; i < in->n_layers * in->n_heads; i++)
    scale[i] = 1.0f;
  noop.head_scale = scale;
  noop.token_mask = mask;

  g_assert_cmpint (sc_forward (session, ids, (int) n, &keep, plain, &err), ==, SC_OK);
  g_assert_cmpint (sc_forward (session, ids, (int) n, &with, got, &err), ==, SC_OK);
  g_assert_cmpint (memcmp (plain, got, n * V * sizeof (float)), ==, 0);

  /* zero-ablate layer 12 head 4 */
  noop.token_mask = NULL;
  scale[12 * in->n_heads + 4] = 0.0f;
  g_assert_cmpint (sc_forward (session, ids, (int) n, &with, full, &err), ==, SC_OK);
  g_assert_cmpint (memcmp (plain, full, n * V * sizeof (float)), !=, 0);
  {
    double maxd = 0;
    for (i = 0; i < n * V; i++)
      maxd = fmax (maxd, fabs (plain[i] - full[i]));
    g_test_message ("zero-ablating L12H4 moves logits by up to %.3f", maxd);
  }
  /* prefix reuse from layer 12 gives the same bits */
  with.start_layer = 12;
  g_assert_cmpint (sc_forward (session, ids, (int) n, &with, got, &err), ==, SC_OK);
  g_assert_cmpint (memcmp (full, got, n * V * sizeof (float)), ==, 0);
  free (ids);
}

static void
test_bad_text (void)
{
  const ScTokenizer *tok = sc_model_tokenizer (model);
  const int n_ctx = (int) sc_model_info (model)->n_ctx_train;
  g_autofree int32_t *ids = g_new0 (int32_t, n_ctx + 1);
  int32_t *t = NULL;
  size_t n = 99;
  ScError err = { 0 };

  /* empty text tokenizes to nothing, and the forward pass refuses nothing with a message */
  g_assert_cmpint (sc_tokenize (tok, "", 0, FALSE, FALSE, &t, &n, &err), ==, SC_OK);
  g_assert_cmpuint (n, ==, 0);
  free (t);
  g_assert_cmpint (sc_forward (session, ids, 0, NULL, NULL, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "empty input"));
  /* longer than the context */
  g_assert_cmpint (sc_forward (session, ids, n_ctx + 1, NULL, NULL, &err), ==, SC_ERR_RANGE);
  g_assert_nonnull (strstr (err.message, "longer than the model's context"));
}

int
main (int argc, char **argv)
{
  const char *path = g_getenv ("SACCADE_MODEL");
  g_autofree char *default_path = NULL;
  ScError err = { 0 };
  int rc;

  g_test_init (&argc, &argv, NULL);
  if (path == NULL)
    path = default_path = g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"), "data", "models",
                                            "SmolLM2-135M-Instruct.Q4_1.gguf", NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      printf ("1..0 # SKIP the default model is not fetched (%s); run data/fetch-model.sh\n", path);
      return 77;
    }
  if (sc_model_open (path, 2, &model, &err) != SC_OK)
    g_error ("%s", err.message);
  backend = sc_backend_cpu_new (2, NULL);
  if (sc_session_new (model, backend, &session, &err) != SC_OK)
    g_error ("%s", err.message);

  g_test_add_func ("/model/shapes", test_shapes);
  g_test_add_func ("/model/logits-vs-llamacpp", test_logits_vs_llamacpp);
  g_test_add_func ("/model/attention-vs-numpy", test_attention_vs_numpy);
  g_test_add_func ("/model/attention-vs-numpy-reference-backend",
                   test_attention_vs_numpy_reference_backend);
  g_test_add_func ("/model/generation", test_generation);
  g_test_add_func ("/model/interventions", test_interventions);
  g_test_add_func ("/model/bad-text", test_bad_text);
  rc = g_test_run ();
  sc_session_free (session);
  sc_backend_free (backend);
  sc_model_free (model);
  return rc;
}
