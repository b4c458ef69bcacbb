/* test-gemma-model.c — Gemma 3 270M end to end, against oracles we did not write.
 *
 *  - attention probabilities of every layer and head against the independent float64 numpy
 *    forward of tests/reference/gemma3_ref.py (attention-fixture-gemma3.*), max abs error
 *    <= 1e-4, on short prompts (every row) and a 560-token prompt (a sample of rows on both
 *    sides of the 512-token window); on every row of every prompt, the cells a local layer
 *    must not see (key j <= query i - 512) and the causal upper triangle are exactly 0, every
 *    other cell is > 0 (the window is exactly 512 keys wide), and the global layers see past
 *    it;
 *  - logits against the same numpy reference (exact math on both sides: a tight bound);
 *  - the same on the scalar reference backend (cpu-ref), first prompt only (it is slow);
 *  - logits against llama.cpp (tests/reference/logits-fixture-gemma3.*, from
 *    gen_logits_fixture_gemma3.py) on 24 prompts within LOGIT_BOUND (why that bound: below).
 *
 * Prompts are given as ids (stored in the fixtures, <bos> first), so this test does not depend
 * on the tokenizer; test-gemma-tokenizer holds that to llama.cpp.
 *
 * Needs data/models/gemma-3-270m-q4_k_m.gguf (or $SACCADE_GEMMA_MODEL); exits 77 (skip) when it
 * is absent, and skips when the file is not the one the fixtures were made with.
 */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"

#include "sc-test-fixture.h"

/* Bound on max |Δlogit| / std(logits) against llama.cpp on the Q4_K_M file, over the stored
 * vocabulary slice and top-32 of each stored row and the top-2 of every position, after
 * removing each row's mean (ours from our row, llama.cpp's from the fixture's full-row mean):
 * a constant shift of a row changes no probability, and llama.cpp's rounding shifts whole
 * rows by up to 1.1 std right after <start_of_turn> (tests/reference/README.md, Gemma section).
 * llama.cpp quantises every activation row to 8 bits before its Q4_K/Q5_0/Q6_K/Q8_0 dot
 * products and keeps K and V in fp16; we multiply the same dequantised weights in float32 and
 * agree with the exact float64 reference to 4e-5 std (NUMPY_LOGIT_BOUND), so the whole gap is
 * llama.cpp's rounding. Measured (24 prompts, 1..600 tokens, 69 stored rows, 931 positions):
 * 0.47 std over the rows, 0.57 std on the top-2; the bound keeps ~40% headroom. */
#define LOGIT_BOUND 0.8
/* A different top-1 is accepted only where llama.cpp's own top-1/top-2 margin is below this
 * (std units): the 56 flips measured all had margins <= 0.149 std; since our logits are exact
 * to 4e-5 std, which positions flip is fixed by the fixture, not by our build. */
#define NEAR_TIE 0.3
/* Against the exact numpy reference only float32 rounding is left: measured 3.7e-5 std (5
 * prompts, 65 positions); the bound keeps a factor ~13 of headroom for other BLAS kernels. */
#define NUMPY_LOGIT_BOUND 5e-4
#define ATTN_BOUND 1e-4

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

/* Mean of the @V logits of @row (double accumulation). */
static double
row_mean (const float *row, int V)
{
  double m = 0.0;
  int k;

  for (k = 0; k < V; k++)
    m += row[k];
  return m / V;
}

/* Logits of @ids at the last position (prefix runs for long prompts). */
static float *
last_logits (const int32_t *ids, int n)
{
  const int V = (int) sc_model_info (model)->n_vocab;
  float *out = g_new (float, V);
  ScError err = { 0 };

  if (sc_forward (session, ids, n, NULL, out, &err) != SC_OK)
    g_error ("forward (%d tokens): %s", n, err.message);
  return out;
}

static void
test_shapes (void)
{
  const ScModelInfo *in = sc_model_info (model);
  int l;

  g_assert_cmpstr (in->arch_name, ==, "gemma3");
  g_assert_cmpuint (in->n_layers, ==, 18);
  g_assert_cmpuint (in->n_heads, ==, 4);
  g_assert_cmpuint (in->n_kv_heads, ==, 1);
  g_assert_cmpuint (in->head_dim, ==, 256);
  g_assert_cmpuint (in->n_embd, ==, 640);
  g_assert_cmpuint (in->n_vocab, ==, 262144);
  g_assert_true (in->tied_output);
  g_assert_cmpfloat (in->rope_base, ==, 1000000.0f);
  g_assert_cmpfloat (in->rope_base_local, ==, 10000.0f);
  g_assert_cmpuint (in->sliding_window, ==, 512);
  /* llama.cpp's set_swa_pattern(6): layer l is local iff l % 6 < 5 (5 local : 1 global) */
  for (l = 0; l < (int) in->n_layers; l++)
    g_assert_cmpuint (sc_model_layer_window (in, l), ==, l % 6 < 5 ? 512 : 0);
}

/* ---- attention vs the numpy reference -------------------------------------------- */

typedef struct {
  const float *ref;   /* (L, H, R, n): the stored rows */
  const int *rows;    /* R query positions */
  int R, H, n, window, calls;
  const ScModelInfo *info;
  double max_err, max_row_err;
  int worst_layer, worst_head, worst_row;
  guint64 masked_cells, masked_nonzero, visible_zero, global_far_nonzero;
} AttnCheck;

static bool
attn_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  AttnCheck *c = user;
  const int win = (int) sc_model_layer_window (c->info, layer);
  int i, j, r;

  g_assert_cmpint (n_q, ==, c->n);
  g_assert_cmpint (n_k, ==, c->n);
  for (i = 0; i < n_q; i++)
    {
      const float *row = probs + (size_t) i * n_k;
      double sum = 0.0;
      for (j = 0; j < n_k; j++)
        {
          gboolean masked = j > i || (win > 0 && i - j >= win);
          if (masked)
            {
              c->masked_cells++;
              if (row[j] != 0.0f)
                c->masked_nonzero++;
            }
          else
            {
              if (row[j] == 0.0f)
                c->visible_zero++; /* the reference's smallest visible weight is 3.9e-22 */
              if (win == 0 && i - j >= c->window)
                c->global_far_nonzero++;
            }
          sum += row[j];
        }
      c->max_row_err = fmax (c->max_row_err, fabs (sum - 1.0));
    }
  for (r = 0; r < c->R; r++)
    {
      const float *ref = c->ref + (((size_t) layer * c->H + head) * c->R + r) * c->n;
      const float *row = probs + (size_t) c->rows[r] * n_k;
      for (j = 0; j < n_k; j++)
        {
          double e = fabs ((double) row[j] - ref[j]);
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

/* Runs the first @max_prompts prompts of the attention fixture through @s. */
static void
check_attention_fixture (ScSession *s, guint max_prompts)
{
  g_autoptr (JsonParser) parser = NULL;
  JsonObject *root = sc_test_fixture_json ("attention-fixture-gemma3.json", &parser);
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
  guint p;

  if (!same_model (root))
    return;
  blob = sc_test_fixture_map ("attention-fixture-gemma3.f32");
  data = g_mapped_file_get_contents (blob);
  data_len = g_mapped_file_get_length (blob);
  g_assert_cmpint (json_object_get_int_member (root, "total_bytes"), ==, (gint64) data_len);
  g_assert_cmpint ((gint64) n_slice * stride, >=, V);
  g_assert_cmpuint (json_array_get_length (prompts), >=, 4);
  for (p = 0; p < json_array_get_length (prompts) && p < max_prompts; p++)
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
      gboolean all = FALSE;
      ScForwardOptions opt = { .observer = &obs };
      ScError err = { 0 };
      gint64 off = json_object_get_int_member (att, "offset");
      int n, r;
      guint k;

      ids = sc_test_fixture_ids (json_object_get_array_member (pr, "ids"), &n);
      c.R = (int) json_array_get_length (rows);
      row_pos = g_new (int, c.R);
      for (r = 0; r < c.R; r++)
        {
          row_pos[r] = (int) json_array_get_int_element (rows, r);
          g_assert_cmpint (row_pos[r], >=, 0);
          g_assert_cmpint (row_pos[r], <, n);
        }
      g_assert_cmpint (off + (gint64) in->n_layers * in->n_heads * c.R * n * 4, <=, (gint64) data_len);
      c.ref = (const float *) (data + off);
      c.rows = row_pos;
      c.H = (int) in->n_heads;
      c.n = n;
      c.window = (int) in->sliding_window;
      c.info = in;
      all = n <= 64; /* every position's logits for short prompts, else the last only */
      opt.all_logits = all;
      logits = g_new (float, (size_t) (all ? n : 1) * V);
      if (sc_forward (s, ids, n, &opt, logits, &err) != SC_OK)
        g_error ("%s: %s", name, err.message);
      g_assert_cmpint (c.calls, ==, (int) (in->n_layers * in->n_heads));
      g_test_message ("%-12s n=%3d rows=%3d: max |dP| %.3g (layer %d head %d row %d), max |row "
                      "sum - 1| %.3g, %" G_GUINT64_FORMAT " masked cells, %" G_GUINT64_FORMAT
                      " global cells past the window nonzero", name, n, c.R, c.max_err,
                      c.worst_layer, c.worst_head, c.worst_row, c.max_row_err, c.masked_cells,
                      c.global_far_nonzero);
      printf ("# gemma attention vs numpy (%s, %s, %d tokens, %d rows): max |dP| = %.3g\n",
              sc_backend_name (sc_session_backend (s)), name, n, c.R, c.max_err);
      g_assert_cmpuint (c.masked_nonzero, ==, 0);
      g_assert_cmpuint (c.visible_zero, ==, 0); /* so the window is neither wider nor narrower */
      g_assert_cmpfloat (c.max_row_err, <=, 1e-5);
      g_assert_cmpfloat (c.max_err, <=, ATTN_BOUND);
      if (n > c.window)
        g_assert_cmpuint (c.global_far_nonzero, >, 0); /* global layers are not windowed */
      worst_attn = fmax (worst_attn, c.max_err);
      longest = MAX (longest, n);

      /* logits at the reference's positions (the last only for long prompts) */
      for (k = 0; k < json_array_get_length (lrows); k++)
        {
          JsonObject *lo = json_array_get_object_element (lrows, k);
          int pos = (int) json_object_get_int_member (lo, "pos");
          JsonObject *slo = json_object_get_object_member (lo, "slice");
          const float *ref = (const float *) (data + json_object_get_int_member (slo, "offset"));
          JsonArray *tid = json_object_get_array_member (lo, "top_ids"),
                    *tlg = json_object_get_array_member (lo, "top_logits");
          double std = json_object_get_double_member (lo, "std"), maxd = 0.0;
          const float *row;
          int j;

          if (!all && pos != n - 1)
            continue;
          row = logits + (size_t) (all ? pos : 0) * V;
          g_assert_cmpint (json_object_get_int_member (slo, "count"), ==, n_slice);
          for (j = 0; j < n_slice; j++)
            maxd = fmax (maxd, fabs (row[(size_t) j * stride] - ref[j]));
          for (j = 0; j < (int) json_array_get_length (tid); j++)
            maxd = fmax (maxd, fabs (row[json_array_get_int_element (tid, j)]
                                     - json_array_get_double_element (tlg, j)));
          worst_logit = fmax (worst_logit, maxd / std);
          if (maxd / std > NUMPY_LOGIT_BOUND)
            g_error ("%s position %d: max |dlogit|/std = %.3g vs numpy exceeds %.3g", name, pos,
                     maxd / std, NUMPY_LOGIT_BOUND);
        }
    }
  printf ("# gemma (%s): attention vs numpy max |dP| %.3g (bound %.0e, longest prompt %d); "
          "logits vs numpy max |dlogit|/std %.3g (bound %.0e)\n",
          sc_backend_name (sc_session_backend (s)), worst_attn, ATTN_BOUND, longest, worst_logit,
          NUMPY_LOGIT_BOUND);
  if (max_prompts >= json_array_get_length (prompts))
    g_assert_cmpint (longest, >, (int) in->sliding_window);
}

static void
test_attention_vs_numpy (void)
{
  check_attention_fixture (session, G_MAXUINT);
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

/* ---- logits vs llama.cpp ----------------------------------------------------------- */

static void
test_logits_vs_llamacpp (void)
{
  g_autoptr (JsonParser) parser = NULL;
  JsonObject *root = sc_test_fixture_json ("logits-fixture-gemma3.json", &parser);
  g_autoptr (GMappedFile) blob = NULL;
  JsonArray *prompts = json_object_get_array_member (root, "prompts");
  const int V = (int) sc_model_info (model)->n_vocab;
  const int stride = (int) json_object_get_int_member (root, "slice_stride");
  const int n_slice = (int) json_object_get_int_member (root, "slice_count");
  double worst_rows = 0.0, worst_top = 0.0, worst_shift = 0.0, tie_margin = 0.0;
  int n_positions = 0, n_rows = 0, near_ties = 0, max_n = 0, chat = 0;
  const char *data;
  gsize data_len;
  guint p;

  if (!same_model (root))
    return;
  blob = sc_test_fixture_map ("logits-fixture-gemma3.f32");
  data = g_mapped_file_get_contents (blob);
  data_len = g_mapped_file_get_length (blob);
  g_assert_cmpint (json_object_get_int_member (root, "n_vocab"), ==, V);
  g_assert_cmpint ((gint64) n_slice * stride, >=, V);
  g_assert_cmpuint (json_array_get_length (prompts), >=, 20);
  for (p = 0; p < json_array_get_length (prompts); p++)
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
      double prompt_worst = 0.0;
      gboolean every = FALSE;
      int n, i;
      guint r;

      ids = sc_test_fixture_ids (json_object_get_array_member (pr, "ids"), &n);
      max_n = MAX (max_n, n);
      chat += json_object_get_boolean_member (pr, "parse_special");
      every = n <= 160; /* all positions in one run; longer prompts: one run per stored row */
      if (every)
        {
          ScForwardOptions opt = { .all_logits = true };
          ScError err = { 0 };
          all = g_new (float, (size_t) n * V);
          if (sc_forward (session, ids, n, &opt, all, &err) != SC_OK)
            g_error ("prompt %s: %s", name, err.message);
        }
      for (r = 0; r < json_array_get_length (rows); r++)
        {
          JsonObject *ro = json_array_get_object_element (rows, r);
          int pos = (int) json_object_get_int_member (ro, "pos");
          gint64 off = json_object_get_int_member (ro, "offset");
          const float *ref = (const float *) (data + off);
          JsonArray *tid = json_object_get_array_member (ro, "top_ids"),
                    *tlg = json_object_get_array_member (ro, "top_logits");
          g_autofree float *own = every ? NULL : last_logits (ids, pos + 1);
          const float *row = every ? all + (size_t) pos * V : own;
          double std = json_array_get_double_element (stds, pos), maxd = 0.0;
          /* compared after removing each row's own mean: a constant shift is softmax-free */
          double shift = row_mean (row, V) - json_array_get_double_element (means, pos);
          int j, ours = 0;

          g_assert_cmpint (off + (gint64) n_slice * 4, <=, (gint64) data_len);
          for (j = 0; j < n_slice; j++)
            maxd = fmax (maxd, fabs (row[(size_t) j * stride] - shift - ref[j]));
          for (j = 0; j < (int) json_array_get_length (tid); j++)
            maxd = fmax (maxd, fabs (row[json_array_get_int_element (tid, j)] - shift
                                     - json_array_get_double_element (tlg, j)));
          prompt_worst = fmax (prompt_worst, maxd / std);
          worst_shift = fmax (worst_shift, fabs (shift) / std);
          n_rows++;
          if (!every)
            {
              /* the top-2 check of the loop below, for this position */
              int t1 = (int) json_array_get_int_element (top1, pos);
              for (j = 1; j < V; j++)
                if (row[j] > row[ours])
                  ours = j;
              if (ours != t1)
                {
                  double margin = (json_array_get_double_element (top1l, pos)
                                   - json_array_get_double_element (top2l, pos)) / std;
                  if (margin >= NEAR_TIE)
                    g_error ("prompt %s position %d: top-1 %d but llama.cpp says %d (margin %.3f "
                             "std)", name, pos, ours, t1, margin);
                  tie_margin = fmax (tie_margin, margin);
                  near_ties++;
                }
              n_positions++;
            }
        }
      for (i = 0; every && i < n; i++)
        {
          const float *row = all + (size_t) i * V;
          int t1 = (int) json_array_get_int_element (top1, i);
          int t2 = (int) json_array_get_int_element (top2, i);
          double std = json_array_get_double_element (stds, i);
          double shift = row_mean (row, V) - json_array_get_double_element (means, i);
          double d1 = fabs (row[t1] - shift - json_array_get_double_element (top1l, i)) / std;
          double d2 = fabs (row[t2] - shift - json_array_get_double_element (top2l, i)) / std;
          int ours = 0, k;
          for (k = 1; k < V; k++)
            if (row[k] > row[ours])
              ours = k;
          worst_top = fmax (worst_top, fmax (d1, d2));
          if (ours != t1)
            {
              double margin = (json_array_get_double_element (top1l, i)
                               - json_array_get_double_element (top2l, i)) / std;
              if (margin >= NEAR_TIE)
                g_error ("prompt %s position %d: top-1 %d but llama.cpp says %d with margin "
                         "%.3f std (not a near-tie)", name, i, ours, t1, margin);
              tie_margin = fmax (tie_margin, margin);
              near_ties++;
            }
          n_positions++;
        }
      worst_rows = fmax (worst_rows, prompt_worst);
      g_test_message ("%-24s n=%3d  max|dlogit|/std %.4f", name, n, prompt_worst);
      if (prompt_worst > LOGIT_BOUND)
        g_error ("prompt %s: max |dlogit|/std = %.4f exceeds %.3f", name, prompt_worst, LOGIT_BOUND);
    }
  printf ("# gemma logits vs llama.cpp (row means removed): worst max|dlogit|/std %.4f over %d "
          "rows (bound %.2f), top-2 %.4f, largest mean shift %.3f std, near-tie top-1 "
          "differences %d of %d positions (largest llama.cpp margin among them %.3f std)\n",
          worst_rows, n_rows, LOGIT_BOUND, worst_top, worst_shift, near_ties, n_positions,
          tie_margin);
  g_assert_cmpint (max_n, >, (int) sc_model_info (model)->sliding_window);
  g_assert_cmpint (chat, >=, 1);
  g_assert_cmpfloat (worst_top, <=, LOGIT_BOUND);
}

int
main (int argc, char **argv)
{
  const char *env = g_getenv ("SACCADE_GEMMA_MODEL");
  const char *src = g_getenv ("SC_TEST_SOURCE_DIR");
  g_autofree char *path = NULL;
  ScError err = { 0 };
  int rc;

  g_test_init (&argc, &argv, NULL);
  path = env != NULL ? g_strdup (env)
                     : g_build_filename (src != NULL ? src : ".", "data", "models",
                                         "gemma-3-270m-q4_k_m.gguf", NULL);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      printf ("1..0 # SKIP the Gemma 3 270M model is not present (%s); put "
              "gemma-3-270m-q4_k_m.gguf in data/models/ or set SACCADE_GEMMA_MODEL\n", path);
      return 77;
    }
  model_sha = sc_test_file_sha256 (path);
  if (sc_model_open (path, 2, &model, &err) != SC_OK)
    g_error ("%s: %s", path, err.message);
  backend = sc_backend_cpu_new (2, &err);
  if (backend == NULL || sc_session_new (model, backend, &session, &err) != SC_OK)
    g_error ("%s", err.message);

  g_test_add_func ("/gemma/model/shapes", test_shapes);
  g_test_add_func ("/gemma/model/attention-vs-numpy", test_attention_vs_numpy);
  g_test_add_func ("/gemma/model/attention-vs-numpy-reference-backend",
                   test_attention_vs_numpy_reference_backend);
  g_test_add_func ("/gemma/model/logits-vs-llamacpp", test_logits_vs_llamacpp);
  rc = g_test_run ();
  sc_session_free (session);
  sc_backend_free (backend);
  sc_model_free (model);
  g_free (model_sha);
  return rc;
}
