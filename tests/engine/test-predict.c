/* test-predict.c — the top-k next tokens of every position and greedy continuation
 * (engine/forward/sc-predict.h).
 *
 * 1. Against the plain forward pass: sc_predict_topk() after a keep_residuals run gives, at
 *    every position, the ids of the k largest logits of the same run with all_logits (ties:
 *    the lower id), their logits (1e-5 · (1 + |logit|): the vocabulary projection done in
 *    chunks of rows) and their softmax probabilities over the whole row in double (1e-6).
 *    On the tiny llama (one chunk), on the induction llama with a 200-token context over
 *    150 positions (three chunks, the last one partial), and on SmolLM2 with a short
 *    sentence (skipped when the model is not fetched).
 * 2. Bad calls are refused with the session unharmed: k = 0 or > n_vocab, no residuals
 *    kept, more positions than the kept run; a cancelling progress callback.
 * 2b. keep_final (what a capture uses): the same predictions, bit for bit, as after a
 *    keep_residuals run, and the same final residual; an earlier layer's residual and
 *    prefix reuse (start_layer) refused with the reason; a later keep_residuals run keeps
 *    every layer again.
 * 3. Greedy continuation: every generated token is the top-1 of the predictions of one
 *    forward pass over prompt + generated at the position before it (causality: row p of
 *    that pass sees positions 0..p only, exactly what the step that chose token p + 1 saw);
 *    a prompt + n_new longer than the context is refused before anything runs; on_token
 *    returning false stops with SC_ERR_CANCELLED and the tokens so far kept.
 */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/forward/sc-predict.h"
#include "engine/model/sc-model.h"
#include "tests/engine/sc-test-gguf.h"

/* The reference ranking: logit descending, then id ascending. */
static const float *sort_row;

static int
by_logit (const void *a, const void *b)
{
  int32_t i = *(const int32_t *) a, j = *(const int32_t *) b;

  if (sort_row[i] != sort_row[j])
    return sort_row[i] > sort_row[j] ? -1 : 1;
  return i < j ? -1 : i > j;
}

/* Runs @ids with all_logits and with keep_residuals, then checks sc_predict_topk() against
 * the full logits, row by row. */
static void
check_against_all_logits (ScModel *m, const int32_t *ids, int n, int k)
{
  const ScModelInfo *in = sc_model_info (m);
  const int V = (int) in->n_vocab;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScError err = { 0 };
  ScPredictions p = { 0 };
  ScForwardOptions all = { .all_logits = true }, keep = { .keep_residuals = true };
  g_autofree float *logits = g_new (float, (gsize) n * V);
  g_autofree float *last = g_new (float, V);
  g_autofree int32_t *order = g_new (int32_t, V);
  double worst_p = 0.0, worst_l = 0.0;

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_forward (s, ids, n, &all, logits, &err), ==, SC_OK);
  g_assert_cmpint (sc_forward (s, ids, n, &keep, last, &err), ==, SC_OK);
  g_assert_cmpint (sc_predict_topk (s, n, k, NULL, NULL, &p, &err), ==, SC_OK);
  g_assert_cmpint (p.n_positions, ==, n);
  g_assert_cmpint (p.k, ==, k);
  for (int r = 0; r < n; r++)
    {
      const float *row = logits + (size_t) r * V;
      double mx = -INFINITY, z = 0.0;

      for (int j = 0; j < V; j++)
        {
          order[j] = j;
          mx = fmax (mx, row[j]);
        }
      for (int j = 0; j < V; j++)
        z += exp ((double) row[j] - mx);
      sort_row = row;
      qsort (order, V, sizeof *order, by_logit);
      for (int i = 0; i < k; i++)
        {
          size_t at = (size_t) r * k + i;
          double pr = exp ((double) row[order[i]] - mx) / z;
          g_assert_cmpint (p.ids[at], ==, order[i]);
          worst_l = fmax (worst_l, fabs (p.logits[at] - row[order[i]])
                                     / (1.0 + fabs (row[order[i]])));
          worst_p = fmax (worst_p, fabs (p.probs[at] - pr));
          if (i > 0)
            g_assert_cmpfloat (p.probs[at], <=, p.probs[at - 1]);
        }
      if (k == V)
        {
          double sum = 0.0;
          for (int i = 0; i < k; i++)
            sum += p.probs[(size_t) r * k + i];
          g_assert_cmpfloat (fabs (sum - 1.0), <=, 1e-9);
        }
    }
  g_test_message ("%d positions, k %d: max |dp| %.3g, max |dlogit|/(1+|logit|) %.3g", n, k,
                  worst_p, worst_l);
  g_assert_cmpfloat (worst_p, <=, 1e-6);
  g_assert_cmpfloat (worst_l, <=, 1e-5);
  /* The last row's top-1 is the argmax of what the keep_residuals run returned. */
  {
    int32_t best = 0;
    for (int j = 1; j < V; j++)
      if (last[j] > last[best])
        best = j;
    g_assert_cmpint (p.ids[(size_t) (n - 1) * k], ==, best);
  }
  sc_predictions_clear (&p);
  sc_predictions_clear (&p); /* a cleared struct clears again */
  sc_session_free (s);
  sc_backend_free (b);
}

/* 1. --------------------------------------------------------------------------------- */

static void
test_tiny (void)
{
  static const int32_t ids[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10, 200, 201 };
  ScModel *m = sc_test_tiny_model ();

  check_against_all_logits (m, ids, G_N_ELEMENTS (ids), SC_PREDICT_TOP_K);
  check_against_all_logits (m, ids, 1, 1);
  /* k = the whole vocabulary: every id once, the probabilities summing to 1 */
  check_against_all_logits (m, ids, 3, (int) sc_model_info (m)->n_vocab);
  sc_model_free (m);
}

static void
test_chunks (void)
{
  /* 150 positions: chunks of 64, 64 and 22 rows */
  const int n = 2 * SC_PREDICT_CHUNK_ROWS + 22;
  g_autoptr (GBytes) bytes = sc_test_gguf_induction_llama (200);
  ScModel *m = sc_test_model_open_bytes (bytes);
  g_autofree int32_t *ids = g_new (int32_t, n);
  GRand *rand = g_rand_new_with_seed (5);

  ids[0] = 256 + SC_TEST_GGUF_N_MERGES; /* <s> */
  for (int i = 1; i < n; i++)
    ids[i] = g_rand_int_range (rand, 0, 256);
  check_against_all_logits (m, ids, n, SC_PREDICT_TOP_K);
  g_rand_free (rand);
  sc_model_free (m);
}

static void
test_default_model (void)
{
  const char *env = g_getenv ("SACCADE_MODEL");
  g_autofree char *path = env != NULL ? g_strdup (env)
                                      : g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"),
                                                          "data", "models",
                                                          "SmolLM2-135M-Instruct.Q4_1.gguf",
                                                          NULL);
  /* "The cat chased the ball because it was tired." as SmolLM2 tokenizes it */
  static const int32_t tok[] = { 504, 2644, 45360, 260, 4405, 975, 357, 436, 12364, 30 };
  ScModel *m = NULL;
  ScError err = { 0 };

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("the default model is not fetched (data/fetch-model.sh)");
      return;
    }
  if (sc_model_open (path, 2, &m, &err) != SC_OK)
    g_error ("%s", err.message);
  check_against_all_logits (m, tok, G_N_ELEMENTS (tok), SC_PREDICT_TOP_K);
  sc_model_free (m);
}

/* 2. --------------------------------------------------------------------------------- */

static bool
stop_at_first (void *user, int done, int total)
{
  (*(int *) user)++;
  return false;
}

static void
test_bad_calls (void)
{
  static const int32_t ids[] = { 264, 72, 101, 108, 108, 111 };
  const int n = G_N_ELEMENTS (ids);
  ScModel *m = sc_test_tiny_model ();
  const int V = (int) sc_model_info (m)->n_vocab;
  ScBackend *b = sc_backend_cpu_new (1, NULL);
  ScSession *s = NULL;
  ScError err = { 0 };
  ScPredictions p = { 0 };
  ScForwardOptions keep = { .keep_residuals = true };
  g_autofree float *logits = g_new (float, V);
  int calls = 0;

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  /* nothing kept yet */
  g_assert_cmpint (sc_forward (s, ids, n, NULL, logits, &err), ==, SC_OK);
  g_assert_cmpint (sc_predict_topk (s, n, 3, NULL, NULL, &p, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "keeps no residuals"));
  g_assert_null (p.ids);

  g_assert_cmpint (sc_forward (s, ids, n, &keep, logits, &err), ==, SC_OK);
  g_assert_cmpint (sc_predict_topk (s, n, 0, NULL, NULL, &p, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "k = 0"));
  g_assert_cmpint (sc_predict_topk (s, n, V + 1, NULL, NULL, &p, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_predict_topk (s, n + 1, 3, NULL, NULL, &p, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "outside the kept run"));
  g_assert_null (p.ids);
  g_assert_cmpint (sc_predict_topk (s, n, 3, stop_at_first, &calls, &p, &err), ==,
                   SC_ERR_CANCELLED);
  g_assert_cmpint (calls, ==, 1);
  g_assert_null (p.ids);
  g_assert_cmpint (sc_predict_topk (NULL, n, 3, NULL, NULL, &p, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_session_kept_logits (s, 0, 0, logits, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_session_kept_logits (s, -1, 1, logits, &err), ==, SC_ERR_INVALID_ARG);

  /* the session still works, and the kept residuals are untouched by the refusals */
  g_assert_cmpint (sc_predict_topk (s, n, 3, NULL, NULL, &p, &err), ==, SC_OK);
  g_assert_cmpint (p.n_positions, ==, n);
  sc_predictions_clear (&p);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

/* 2b. ------------------------------------------------------------------------------- */

static void
test_keep_final (void)
{
  static const int32_t ids[] = { 264, 72, 101, 108, 108, 111, 44, 32, 119 };
  const int n = G_N_ELEMENTS (ids);
  ScModel *m = sc_test_tiny_model ();
  const ScModelInfo *in = sc_model_info (m);
  const int V = (int) in->n_vocab, E = (int) in->n_embd, L = (int) in->n_layers;
  ScBackend *b = sc_backend_cpu_new (1, NULL);
  ScSession *s = NULL;
  ScError err = { 0 };
  ScPredictions all = { 0 }, fin = { 0 };
  ScForwardOptions keep = { .keep_residuals = true }, final = { .keep_final = true },
                   reuse = { .start_layer = 1 };
  g_autofree float *logits = g_new (float, V), *r_all = g_new (float, E),
                   *r_fin = g_new (float, E);

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_forward (s, ids, n, &keep, logits, &err), ==, SC_OK);
  g_assert_cmpint (sc_predict_topk (s, n, 5, NULL, NULL, &all, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_residual (s, L, n - 1, r_all, &err), ==, SC_OK);
  g_assert_cmpint (sc_forward (s, ids, n, &final, logits, &err), ==, SC_OK);
  g_assert_cmpint (sc_predict_topk (s, n, 5, NULL, NULL, &fin, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_residual (s, L, n - 1, r_fin, &err), ==, SC_OK);
  g_assert_cmpmem (r_all, E * sizeof (float), r_fin, E * sizeof (float));
  g_assert_cmpint (fin.n_positions, ==, n);
  g_assert_cmpmem (all.ids, (size_t) n * 5 * sizeof *all.ids, fin.ids,
                   (size_t) n * 5 * sizeof *fin.ids);
  g_assert_cmpmem (all.logits, (size_t) n * 5 * sizeof *all.logits, fin.logits,
                   (size_t) n * 5 * sizeof *fin.logits);
  g_assert_cmpmem (all.probs, (size_t) n * 5 * sizeof *all.probs, fin.probs,
                   (size_t) n * 5 * sizeof *fin.probs);
  /* only the final residual is there now */
  g_assert_cmpint (sc_session_residual (s, 0, 0, r_fin, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "only the final residual"));
  g_assert_cmpint (sc_forward (s, ids, n, &reuse, logits, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "start_layer 1 needs residuals kept"));
  /* keep_residuals again: every layer kept, prefix reuse allowed */
  g_assert_cmpint (sc_forward (s, ids, n, &keep, logits, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_residual (s, 0, 0, r_fin, &err), ==, SC_OK);
  g_assert_cmpint (sc_forward (s, ids, n, &reuse, logits, &err), ==, SC_OK);
  sc_predictions_clear (&all);
  sc_predictions_clear (&fin);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

/* 3. --------------------------------------------------------------------------------- */

typedef struct {
  int seen, stop_after;
  int32_t last;
} TokenLog;

static bool
log_token (void *user, int32_t id, int done, int n_new)
{
  TokenLog *t = user;

  t->seen++;
  t->last = id;
  g_assert_cmpint (done, ==, t->seen);
  return t->stop_after == 0 || t->seen < t->stop_after;
}

static void
test_greedy (void)
{
  enum { N_PROMPT = 5, N_NEW = 20 };
  ScModel *m = sc_test_tiny_model ();
  const ScModelInfo *in = sc_model_info (m);
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScError err = { 0 };
  ScPredictions p = { 0 };
  ScForwardOptions keep = { .keep_residuals = true };
  int32_t ids[N_PROMPT + N_NEW] = { 264, 72, 101, 108, 108 };
  g_autofree float *logits = g_new (float, in->n_vocab);
  g_autofree int32_t *big = g_new0 (int32_t, in->n_ctx_train + 1);
  TokenLog log = { 0 };
  int n = 0;

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_generate_greedy (s, ids, N_PROMPT, N_NEW, log_token, NULL, &log, &n,
                                       &err), ==, SC_OK);
  g_assert_cmpint (n, >, N_PROMPT);
  g_assert_cmpint (log.seen, ==, n - N_PROMPT);
  g_test_message ("%d tokens generated", n - N_PROMPT);
  /* one forward over prompt + generated: its top-1 at p - 1 is the token at p */
  g_assert_cmpint (sc_forward (s, ids, n, &keep, logits, &err), ==, SC_OK);
  g_assert_cmpint (sc_predict_topk (s, n, 1, NULL, NULL, &p, &err), ==, SC_OK);
  for (int i = N_PROMPT; i < n; i++)
    g_assert_cmpint (p.ids[i - 1], ==, ids[i]);
  sc_predictions_clear (&p);

  /* longer than the context: refused before anything runs */
  big[0] = 264;
  g_assert_cmpint (sc_generate_greedy (s, big, 1, (int) in->n_ctx_train, NULL, NULL, NULL, &n,
                                       &err), ==, SC_ERR_RANGE);
  g_assert_nonnull (strstr (err.message, "context"));
  g_assert_cmpint (n, ==, 1);
  g_assert_cmpint (sc_generate_greedy (s, ids, 0, 3, NULL, NULL, NULL, &n, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_generate_greedy (s, ids, N_PROMPT, -1, NULL, NULL, NULL, &n, &err), ==,
                   SC_ERR_INVALID_ARG);

  /* stopped by on_token after 2: both kept; 0 new tokens: nothing runs */
  log = (TokenLog) { .stop_after = 2 };
  g_assert_cmpint (sc_generate_greedy (s, ids, N_PROMPT, N_NEW, log_token, NULL, &log, &n,
                                       &err), ==, SC_ERR_CANCELLED);
  g_assert_cmpint (n, ==, N_PROMPT + 2);
  g_assert_cmpint (ids[N_PROMPT + 1], ==, log.last);
  g_assert_cmpint (sc_generate_greedy (s, ids, N_PROMPT, 0, NULL, NULL, NULL, &n, &err), ==,
                   SC_OK);
  g_assert_cmpint (n, ==, N_PROMPT);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/predict/tiny", test_tiny);
  g_test_add_func ("/predict/chunks", test_chunks);
  g_test_add_func ("/predict/default-model", test_default_model);
  g_test_add_func ("/predict/bad-calls", test_bad_calls);
  g_test_add_func ("/predict/keep-final", test_keep_final);
  g_test_add_func ("/predict/greedy", test_greedy);
  return g_test_run ();
}
