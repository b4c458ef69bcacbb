/* test-capture-task.c — what goes into the window's capture (app/core/saccade-capture-input.h,
 * app/core/saccade-capture-task.h), on the tiny test llama:
 *
 *   1. saccade_capture_input: the text's bytes and ids; a continuation appends
 *      sc_generate_greedy()'s ids and their pieces to the text;
 *   2. saccade_capture_text_async with Generate 5: the stored run's ids are the prompt's
 *      followed by sc_generate_greedy()'s on another session; its text the prompt's bytes
 *      then the generated pieces; the predictions it hands back are sc_predict_topk()'s on
 *      a plain keep_residuals pass over the same ids, bit for bit, for every position; the
 *      progress reaches the main loop in order and ends at (5 + 1) x n_layers steps;
 *   3. refused: the chat template on a model without one (by name), a prompt and a
 *      continuation longer than the context; nothing stored;
 *   4. Cancel at the first progress: G_IO_ERROR_CANCELLED and no run stored (or, on a fast
 *      machine, a complete run).
 */
#include <glib/gstdio.h>
#include <string.h>

#include "app/core/saccade-capture-input.h"
#include "app/core/saccade-capture-task.h"
#include "app/core/saccade-error.h"
#include "app/core/saccade-model.h"
#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-predict.h"
#include "tests/engine/sc-test-gguf.h"

/* Plain bytes of the tiny model's byte vocabulary. */
#define PROMPT "Hello, world"
#define N_GENERATE 5

typedef struct {
  char *dir, *model_path, *db_path;
  ScModel *m;       /* a model of our own: the oracle's */
  ScBackend *b;
  ScSession *s;
  GMainLoop *loop;
  SaccadeLoadedModel *model;
  GError *error;
  gint64 run_id;
  ScPredictions pred;
  GCancellable *cancel_on_progress;
  int progress_calls, last_done, last_total;
} Fixture;

static void
loaded (GObject *source, GAsyncResult *res, gpointer data)
{
  Fixture *f = data;
  f->model = saccade_loaded_model_new_finish (res, &f->error);
  g_main_loop_quit (f->loop);
}

static void
fixture_init (Fixture *f)
{
  ScError err = { 0 };
  gsize len;
  const void *d = g_bytes_get_data (sc_test_tiny_bytes (), &len);

  f->dir = g_dir_make_tmp ("saccade-capture-task-XXXXXX", NULL);
  f->model_path = g_build_filename (f->dir, "tiny.gguf", NULL);
  f->db_path = g_build_filename (f->dir, "captures.sqlite", NULL);
  g_assert_true (g_file_set_contents (f->model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (f->model_path, 1, &f->m, &err), ==, SC_OK);
  f->b = sc_backend_cpu_new (1, &err);
  g_assert_nonnull (f->b);
  g_assert_cmpint (sc_session_new (f->m, f->b, &f->s, &err), ==, SC_OK);
  f->loop = g_main_loop_new (NULL, FALSE);
  saccade_loaded_model_new_async (f->model_path, NULL, loaded, f);
  g_main_loop_run (f->loop);
  g_assert_no_error (f->error);
}

static void
fixture_clear (Fixture *f)
{
  const char *suffixes[] = { "", "-wal", "-shm" };

  g_clear_object (&f->model);
  g_main_loop_unref (f->loop);
  sc_predictions_clear (&f->pred);
  sc_session_free (f->s);
  sc_backend_free (f->b);
  sc_model_free (f->m);
  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *p = g_strconcat (f->db_path, suffixes[i], NULL);
      g_remove (p);
    }
  g_remove (f->model_path);
  g_rmdir (f->dir);
  g_free (f->dir);
  g_free (f->model_path);
  g_free (f->db_path);
}

/* The runs stored at f->db_path (0 when the file was never created). */
static size_t
n_runs (Fixture *f)
{
  ScStoreOptions so = { 0 };
  ScStore *store = NULL;
  ScStoreRunInfo *runs = NULL;
  ScError err = { 0 };
  size_t n = 0;

  if (!g_file_test (f->db_path, G_FILE_TEST_EXISTS))
    return 0;
  g_assert_cmpint (sc_store_open (f->db_path, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_list_runs (store, &runs, &n, &err), ==, SC_OK);
  sc_store_run_list_free (runs, n);
  sc_store_close (store);
  return n;
}

static void
progress (gpointer data, int done, int total)
{
  Fixture *f = data;

  /* on the main loop's thread, coalesced, never going backwards */
  g_assert_true (g_main_context_is_owner (g_main_context_default ()));
  g_assert_cmpint (done, >=, f->last_done);
  g_assert_cmpint (done, <=, total);
  f->last_done = done;
  f->last_total = total;
  f->progress_calls++;
  if (f->cancel_on_progress != NULL)
    g_cancellable_cancel (f->cancel_on_progress);
}

static void
captured (GObject *source, GAsyncResult *res, gpointer data)
{
  Fixture *f = data;
  f->run_id = saccade_capture_finish_with_predictions (res, &f->pred, &f->error);
  g_main_loop_quit (f->loop);
}

/* Runs a capture of @text with @options to its end. */
static void
run_capture (Fixture *f, const char *text, const SaccadeCaptureOptions *options,
             GCancellable *cancellable)
{
  sc_predictions_clear (&f->pred);
  g_clear_error (&f->error);
  f->run_id = 0;
  f->progress_calls = f->last_done = f->last_total = 0;
  saccade_capture_text_async (NULL, f->model, f->db_path, text, options, cancellable, progress,
                              f, captured, f);
  g_main_loop_run (f->loop);
}

/* 1. --------------------------------------------------------------------------------- */

static void
test_input (void)
{
  Fixture f = { 0 };
  g_auto (SaccadeCaptureInput) in = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) want = NULL;
  ScError err = { 0 };
  int n = 0;

  fixture_init (&f);
  g_assert_true (saccade_capture_input_init (&in, f.m, PROMPT, -1, TRUE, FALSE, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (in.text->str, ==, PROMPT);
  want = saccade_tokenize (f.m, PROMPT, -1, TRUE, NULL);
  g_assert_cmpint (in.ids->len, ==, want->len);
  g_assert_cmpint (in.n_prompt, ==, want->len);
  g_assert_cmpmem (in.ids->data, in.ids->len * 4, want->data, want->len * 4);

  g_assert_true (saccade_capture_input_generate (&in, f.s, N_GENERATE, NULL, NULL, &error));
  g_assert_no_error (error);
  g_array_set_size (want, want->len + N_GENERATE);
  g_assert_cmpint (sc_generate_greedy (f.s, (int32_t *) want->data, (int) in.n_prompt,
                                       N_GENERATE, NULL, NULL, NULL, &n, &err), ==, SC_OK);
  g_assert_cmpint (in.ids->len, ==, n);
  g_assert_cmpmem (in.ids->data, in.ids->len * 4, want->data, (gsize) n * 4);
  {
    /* the text: the prompt, then the generated ids' pieces as the store keeps them */
    g_autoptr (GString) t = g_string_new (PROMPT);
    ScStoreToken *pieces = NULL;
    g_assert_cmpint (sc_store_tokens_from_ids (sc_model_tokenizer (f.m),
                                               (const int32_t *) in.ids->data, in.ids->len,
                                               &pieces, &err), ==, SC_OK);
    for (guint i = in.n_prompt; i < in.ids->len; i++)
      g_string_append_len (t, (const char *) pieces[i].piece, pieces[i].len);
    g_assert_cmpmem (in.text->str, in.text->len, t->str, t->len);
    sc_store_tokens_free (pieces);
  }
  fixture_clear (&f);
}

/* 2. --------------------------------------------------------------------------------- */

static void
test_generate (void)
{
  Fixture f = { 0 };
  const SaccadeCaptureOptions opt = { .n_generate = N_GENERATE };
  ScStoreOptions so = { 0 };
  ScStore *store = NULL;
  ScStoreToken *tokens = NULL;
  ScStoreRunInfo info = { 0 };
  ScPredictions want = { 0 };
  ScForwardOptions keep = { .keep_residuals = true };
  ScError err = { 0 };
  g_autoptr (GArray) ids = NULL;
  g_autofree float *logits = NULL;
  size_t n_tok = 0;
  guint n_prompt;
  int n = 0, L;

  fixture_init (&f);
  L = (int) sc_model_info (f.m)->n_layers;
  logits = g_new (float, sc_model_info (f.m)->n_vocab);
  run_capture (&f, PROMPT, &opt, NULL);
  g_assert_no_error (f.error);
  g_assert_cmpint (f.run_id, >, 0);
  g_assert_cmpint (f.progress_calls, >, 0);
  g_assert_cmpint (f.last_total, ==, (N_GENERATE + 1) * L);

  /* the oracle: the prompt's ids and sc_generate_greedy's continuation */
  ids = saccade_tokenize (f.m, PROMPT, -1, TRUE, NULL);
  n_prompt = ids->len;
  g_array_set_size (ids, n_prompt + N_GENERATE);
  g_assert_cmpint (sc_generate_greedy (f.s, (int32_t *) ids->data, (int) n_prompt, N_GENERATE,
                                       NULL, NULL, NULL, &n, &err), ==, SC_OK);
  g_array_set_size (ids, (guint) n);
  g_assert_cmpint (n, >, (int) n_prompt);

  g_assert_cmpint (sc_store_open (f.db_path, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_read_tokens (store, f.run_id, &tokens, &n_tok, &err), ==, SC_OK);
  g_assert_cmpint (n_tok, ==, n);
  for (int i = 0; i < n; i++)
    g_assert_cmpint (tokens[i].id, ==, g_array_index (ids, int32_t, i));
  g_assert_cmpint (sc_store_get_run (store, f.run_id, &info, &err), ==, SC_OK);
  {
    g_autoptr (GString) t = g_string_new (PROMPT);
    for (int i = (int) n_prompt; i < n; i++)
      g_string_append_len (t, (const char *) tokens[i].piece, tokens[i].len);
    g_assert_cmpmem (info.text, info.text_len, t->str, t->len);
  }

  /* the predictions: those of a plain pass over the same ids, bit for bit */
  g_assert_cmpint (sc_forward (f.s, (const int32_t *) ids->data, n, &keep, logits, &err), ==,
                   SC_OK);
  g_assert_cmpint (sc_predict_topk (f.s, n, SC_PREDICT_TOP_K, NULL, NULL, &want, &err), ==,
                   SC_OK);
  g_assert_cmpint (f.pred.n_positions, ==, n);
  g_assert_cmpint (f.pred.k, ==, SC_PREDICT_TOP_K);
  g_assert_cmpmem (f.pred.ids, (gsize) n * want.k * sizeof *want.ids, want.ids,
                   (gsize) n * want.k * sizeof *want.ids);
  g_assert_cmpmem (f.pred.probs, (gsize) n * want.k * sizeof *want.probs, want.probs,
                   (gsize) n * want.k * sizeof *want.probs);
  /* greedy: the top-1 at each position before a generated token is that token */
  for (int i = (int) n_prompt; i < n; i++)
    g_assert_cmpint (f.pred.ids[(size_t) (i - 1) * want.k], ==, g_array_index (ids, int32_t, i));

  sc_predictions_clear (&want);
  sc_store_run_info_clear (&info);
  sc_store_tokens_free (tokens);
  sc_store_close (store);
  fixture_clear (&f);
}

/* 3. --------------------------------------------------------------------------------- */

static void
test_refused (void)
{
  Fixture f = { 0 };
  SaccadeCaptureOptions chat = { .chat = TRUE }, too_long = { 0 };

  fixture_init (&f);
  too_long.n_generate = (int) sc_model_info (f.m)->n_ctx_train;
  run_capture (&f, PROMPT, &chat, NULL);
  g_assert_error (f.error, SACCADE_ERROR, SC_ERR_UNSUPPORTED);
  g_assert_nonnull (strstr (f.error->message, "no ChatML chat template"));
  g_assert_cmpint (f.run_id, ==, 0);
  g_assert_null (f.pred.ids);
  run_capture (&f, PROMPT, &too_long, NULL);
  g_assert_error (f.error, SACCADE_ERROR, SC_ERR_RANGE);
  g_assert_nonnull (strstr (f.error->message, "more are to be generated"));
  g_assert_cmpuint (n_runs (&f), ==, 0);
  fixture_clear (&f);
}

/* 4. --------------------------------------------------------------------------------- */

static void
test_cancel (void)
{
  Fixture f = { 0 };
  const SaccadeCaptureOptions opt = { .n_generate = N_GENERATE };
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();

  fixture_init (&f);
  f.cancel_on_progress = cancellable;
  run_capture (&f, PROMPT, &opt, cancellable);
  /* The worker may finish before the first idle runs on a fast machine: then the run is
   * complete and stored, which is also correct. Otherwise nothing is stored. */
  if (f.run_id == 0)
    {
      g_assert_error (f.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
      g_assert_null (f.pred.ids);
      g_assert_cmpuint (n_runs (&f), ==, 0);
    }
  else
    g_assert_cmpuint (n_runs (&f), ==, 1);
  fixture_clear (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/capture-task/input", test_input);
  g_test_add_func ("/capture-task/generate", test_generate);
  g_test_add_func ("/capture-task/refused", test_refused);
  g_test_add_func ("/capture-task/cancel", test_cancel);
  return g_test_run ();
}
