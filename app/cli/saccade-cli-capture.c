/* saccade-cli-capture.c — `saccade capture`: run the model on a text (or each line of a file,
 * or a whole prompt file, optionally in the chat template and with greedy continuation) and
 * store every attention head; it prints the new run's id (one per line with --file, and a
 * progress bar on stderr when it is a terminal), so scripts can write
 * `saccade show $(saccade capture -t "...")`. The engine's store (engine/store/sc-store.h)
 * does the work; the result (CaptureResult) is printed by saccade-cli-capture-print.c.
 */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli-capture-private.h"
#include "engine/store/sc-store-heads.h"

#include "app/core/saccade-capture-input.h"
#include "app/core/saccade-dataset.h"
#include "app/core/saccade-observer-tee.h"
#include "engine/forward/sc-predict.h"
#include "ui/figures/saccade-token-label.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------ */
/* capture                                                                               */

/* A progress bar on stderr, drawn only when stderr is a terminal. */
typedef struct {
  gboolean on;
  guint done, total;
  gint64 t0;
} Progress;

static void
progress_draw (Progress *p)
{
  const guint width = 30;
  guint fill;
  double elapsed, eta;

  if (!p->on)
    return;
  fill = p->total > 0 ? width * p->done / p->total : width;
  elapsed = (g_get_monotonic_time () - p->t0) / 1e6;
  eta = p->done > 0 ? elapsed / p->done * (p->total - p->done) : 0.0;
  fprintf (stderr, "\r[");
  for (guint i = 0; i < width; i++)
    fputc (i < fill ? '#' : '.', stderr);
  fprintf (stderr, "] %u/%u runs, %.0f s left ", p->done, p->total, eta);
  fflush (stderr);
}

/* Clears the bar's line: before a result is printed (stdout may be the same terminal) and
 * at the end. */
static void
progress_end (Progress *p)
{
  if (p->on)
    {
      fprintf (stderr, "\r\033[K");
      fflush (stderr);
    }
}

/* The whole of --prompt-file FILE (- = stdin) as one text, its bytes exactly as they are
 * (newlines included); refused when empty or not UTF-8, with the offset of the first bad
 * byte. */
static GBytes *
capture_prompt_file (const char *file, GError **error)
{
  const char *name = strcmp (file, "-") == 0 ? "standard input" : file;
  g_autofree char *contents = NULL;
  const char *bad = NULL;
  gsize len = 0;

  if ((contents = saccade_cli_read_file (file, &len, error)) == NULL)
    return NULL;
  if (len == 0)
    {
      g_set_error (error, SACCADE_ERROR, SC_ERR_INVALID_ARG,
                   "%s is empty: the prompt file holds the whole prompt", name);
      return NULL;
    }
  if (!g_utf8_validate_len (contents, len, &bad))
    {
      gsize at = (gsize) (bad - contents);
      g_set_error (error, SACCADE_ERROR, SC_ERR_INVALID_ARG,
                   "%s is not valid UTF-8: byte %" G_GSIZE_FORMAT " (0x%02X) %s", name, at,
                   (guint) (guchar) *bad,
                   *bad == '\0' ? "is a NUL byte" : "does not start or continue a character");
      return NULL;
    }
  return g_bytes_new_take (g_steal_pointer (&contents), len);
}

/* Only spaces, tabs and line ends (or nothing): the window refuses such a text, and so
 * does the command line (a run of white space measures nothing anyone typed). */
static gboolean
is_blank (const char *p, gsize n)
{
  for (gsize i = 0; i < n; i++)
    if (!g_ascii_isspace (p[i]))
      return FALSE;
  return TRUE;
}

/* The texts to capture: --text, the arguments, one per non-blank line of --file, or the
 * whole of --prompt-file (exactly one of them). */
static GPtrArray *
capture_texts (const char *text_opt, const char *file, const char *prompt_file, int argc,
               char **argv, GError **error)
{
  GPtrArray *texts = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autofree char *contents = NULL;
  gsize len = 0;

  if ((text_opt != NULL) + (file != NULL) + (prompt_file != NULL) + (argc >= 2) > 1)
    {
      g_set_error (error, SACCADE_ERROR, SC_ERR_INVALID_ARG,
                   "give the text one way: -t TEXT, arguments, --file FILE or --prompt-file "
                   "FILE");
      g_ptr_array_unref (texts);
      return NULL;
    }
  if (prompt_file != NULL)
    {
      GBytes *b = capture_prompt_file (prompt_file, error);
      if (b == NULL)
        {
          g_ptr_array_unref (texts);
          return NULL;
        }
      g_ptr_array_add (texts, b);
    }
  else if (file != NULL)
    {
      const char *p, *end;
      if ((contents = saccade_cli_read_file (file, &len, error)) == NULL)
        {
          g_ptr_array_unref (texts);
          return NULL;
        }
      for (p = contents, end = contents + len; p < end;)
        {
          const char *nl = memchr (p, '\n', (size_t) (end - p));
          const char *stop = nl != NULL ? nl : end;
          gsize l = (gsize) (stop - p);
          if (l > 0 && p[l - 1] == '\r')
            l--;
          if (!is_blank (p, l))
            g_ptr_array_add (texts, g_bytes_new (p, l));
          p = nl != NULL ? nl + 1 : end;
        }
      if (texts->len == 0)
        {
          g_set_error (error, SACCADE_ERROR, SC_ERR_INVALID_ARG, "%s has no line with text "
                       "(blank lines are skipped)", file);
          g_ptr_array_unref (texts);
          return NULL;
        }
    }
  else if (text_opt != NULL)
    g_ptr_array_add (texts, g_bytes_new (text_opt, strlen (text_opt)));
  else if (argc >= 2)
    {
      g_autofree char *joined = g_strjoinv (" ", argv + 1);
      g_ptr_array_add (texts, g_bytes_new (joined, strlen (joined)));
    }
  else
    {
      g_set_error (error, SACCADE_ERROR, SC_ERR_INVALID_ARG,
                   "no text given: use -t TEXT, pass it as arguments, --file FILE for one run "
                   "per line, or --prompt-file FILE for one run of the whole file");
      g_ptr_array_unref (texts);
      return NULL;
    }
  if (file == NULL)
    {
      gsize n;
      const char *p = g_bytes_get_data (g_ptr_array_index (texts, 0), &n);
      if (n == 0)
        {
          g_set_error_literal (error, SACCADE_ERROR, SC_ERR_INVALID_ARG,
                               "empty input: the text is empty");
          g_ptr_array_unref (texts);
          return NULL;
        }
      if (is_blank (p, n))
        {
          g_set_error (error, SACCADE_ERROR, SC_ERR_INVALID_ARG,
                       "the text is only white space (%" G_GSIZE_FORMAT " bytes): give some "
                       "words to run", n);
          g_ptr_array_unref (texts);
          return NULL;
        }
    }
  return texts;
}


static void
capture_result_clear (CaptureResult *r)
{
  sc_predictions_clear (&r->pred);
  sc_store_tokens_free (r->pieces);
  saccade_head_stats_table_clear (&r->stats);
  memset (r, 0, sizeof *r);
}


/* Above this a capture warns before it starts (docs/store.md, "Bytes per run"). */
#define CAPTURE_WARN_BYTES 1000000000ull

/* The heads to keep: every (layer, head) with the layer in @layers and the head in @heads
 * (NULL: all). Sets c->keep (NULL when every head is kept) and c->n_kept. */
static gboolean
capture_keep (CaptureCtx *c, const char *layers, const char *heads, GError **error)
{
  return saccade_capture_keep_parse (sc_model_info (c->model), layers, "--layers", heads,
                                     "--heads", &c->keep, &c->n_kept, error);
}

/* What a run of @n_tokens tokens will add to the store (sc_store_estimate_bytes). */
static guint64
capture_estimate (const CaptureCtx *c, guint n_tokens)
{
  const ScModelInfo *in = sc_model_info (c->model);
  return sc_store_estimate_bytes (n_tokens, in->n_layers, in->n_heads,
                                  c->keep != NULL ? c->n_kept : in->n_layers * in->n_heads,
                                  c->sparse_eps > 0);
}

/* Begins storing @bytes as a run of @r's tokens; NULL with @err set on failure. */
static ScStoreCapture *
capture_begin (CaptureCtx *c, const char *bytes, gsize len, const CaptureResult *r,
               ScError *err)
{
  ScStoreRunDesc desc = {
    .model = c->ident, .text = bytes, .text_len = len, .tokens = r->pieces,
    .n_tokens = r->n_tokens, .backend = c->backend_name, .keep = c->keep,
    .sparse_eps = c->sparse_eps, .round_bits = c->round_bits, .zero_below = c->zero_below,
  };
  ScStoreCapture *cap = NULL;

  desc.kind = saccade_capture_run_kind (r->n_prompt, r->n_tokens, c->chat, &desc.n_prompt);
  if (sc_store_capture_begin (c->store, &desc, &cap, err) != SC_OK)
    return NULL;
  return cap;
}

/* The ids and the run's text of one text: in the chat template with --chat, followed by
 * --generate N greedy tokens (app/core/saccade-capture-input.h). */
static gboolean
capture_input (CaptureCtx *c, GBytes *text, SaccadeCaptureInput *input, GError **error)
{
  gsize len = 0;
  const char *bytes = g_bytes_get_data (text, &len);

  if (!saccade_capture_input_init (input, c->model, bytes, (gssize) len, c->parse_special,
                                   c->chat, error))
    return FALSE;
  if (input->ids->len == 0)
    {
      g_set_error (error, SACCADE_ERROR, SC_ERR_INVALID_ARG,
                   "empty input: the text has no tokens");
      return FALSE;
    }
  return c->n_generate == 0
         || saccade_capture_input_generate (input, c->s.session, c->n_generate, NULL, NULL,
                                            error);
}

/* Runs one text, storing it unless --no-store; fills @r. */
static gboolean
capture_one (CaptureCtx *c, GBytes *text, CaptureResult *r, GError **error)
{
  const ScModelInfo *in = sc_model_info (c->model);
  g_auto (SaccadeCaptureInput) input = { 0 };
  GArray *ids;
  const char *bytes;
  gsize len;
  ScStoreCapture *cap = NULL;
  ScError err = { 0 };
  /* the store's observer and, with --summary, the statistics' (the tee keeps a GPU's fp16
   * route to the store: app/core/saccade-observer-tee.h) */
  ScObserver store_obs = { 0 }, stats_obs = { 0 };
  g_auto (SaccadeObserverTee) tee = { 0 };
  /* The final residual is kept for the predictions (sc_predict_topk). */
  ScForwardOptions fo = { 0 };
  SaccadeCaptureOutcome out = { 0 };
  ScStoreRunInfo info = { 0 };

  if (!capture_input (c, text, &input, error))
    return FALSE;
  ids = input.ids;
  bytes = input.text->str;
  len = input.text->len;
  r->n_tokens = ids->len;
  r->n_prompt = input.n_prompt;
  if (sc_store_tokens_from_ids (sc_model_tokenizer (c->model), (const int32_t *) ids->data,
                                ids->len, &r->pieces, &err) != SC_OK)
    goto sc_fail;
  if (c->summary)
    {
      saccade_head_stats_table_init (&r->stats, (int) in->n_layers, (int) in->n_heads);
      stats_obs = (ScObserver) { NULL, saccade_head_stats_table_observe, &r->stats };
    }
  if (c->store != NULL)
    {
      const guint64 est = capture_estimate (c, r->n_tokens);
      if (est > CAPTURE_WARN_BYTES)
        {
          g_autofree char *size = saccade_store_cli_bytes (est);
          fprintf (stderr, "saccade: warning: this run of %u tokens will add about %s to %s%s; "
                   "--layers, --heads and --sparse store less (--estimate tells before "
                   "running)\n", r->n_tokens, size, sc_store_path (c->store),
                   c->sparse_eps > 0 ? " at most (sparse: the dense bound)" : "");
        }
      if ((cap = capture_begin (c, bytes, len, r, &err)) == NULL)
        goto sc_fail;
      store_obs = sc_store_capture_observer (cap);
    }
  fo.observer = saccade_observer_tee_init (&tee, &store_obs, &stats_obs);
  if (saccade_capture_forward (c->s.session, c->model, cap, (const int32_t *) ids->data,
                               (int) ids->len, &fo, NULL, NULL, &out, &err) != SC_OK)
    goto sc_fail;
  r->pred = out.pred;
  memset (&out.pred, 0, sizeof out.pred);
  r->seconds = out.forward_s;
  r->predict_seconds = out.predict_s;
  r->run_id = out.run_id;
  if (cap != NULL)
    {
      if (sc_store_get_run (c->store, r->run_id, &info, &err) != SC_OK)
        goto sc_fail;
      r->attention_bytes = info.attention_bytes;
      sc_store_run_info_clear (&info);
    }
  return TRUE;

sc_fail:
  sc_predictions_clear (&out.pred);
  sc_store_run_info_clear (&info);
  saccade_set_error_from_sc (error, &err);
  return FALSE;
}

/* The model, the heads to keep (--layers, --heads), store, backend and session every text
 * of a capture uses; on failure the caller's capture_ctx_clear() frees what was made. */
static gboolean
capture_ctx_init (CaptureCtx *c, const SaccadeCliCommon *common, const char *db_opt,
                  gboolean store, const char *layers, const char *heads, ScStoreModel *ident,
                  GError **error)
{
  g_autofree char *path = NULL;
  ScError err = { 0 };

  /* the heads to keep are checked before the store is created */
  if ((c->model = saccade_cli_load_model (common, error)) == NULL
      || !capture_keep (c, layers, heads, error))
    return FALSE;
  /* The backend before the store: a backend that cannot start creates no database. */
  if (!saccade_cli_session_open (&c->s, common, c->model, error))
    return FALSE;
  c->backend_name = sc_backend_name (c->s.backend);
  if (store)
    {
      /* The model is identified by its bytes; the path is stored as given, made absolute. */
      c->model_path = g_canonicalize_filename (saccade_cli_model_path (common), NULL);
      if (sc_store_model_identify (c->model, c->model_path, ident, &err) != SC_OK)
        goto sc_fail;
      c->ident = ident;
      path = saccade_db_path (db_opt);
      if ((c->store = saccade_store_open_with (path, TRUE, c->compress, &err)) == NULL)
        goto sc_fail;
    }
  return TRUE;

sc_fail:
  saccade_set_error_from_sc (error, &err);
  return FALSE;
}

static void
capture_ctx_clear (CaptureCtx *c)
{
  g_free (c->keep);
  g_free (c->model_path);
  saccade_cli_session_close (&c->s);
  sc_store_close (c->store);
  sc_model_free (c->model);
}

/* Captures every text: prints each result as it comes, or adds it to @json; returns the
 * exit status. */
static int
capture_all (CaptureCtx *c, GPtrArray *texts, const char *file, JsonBuilder *json)
{
  g_autoptr (GError) error = NULL;
  Progress prog = { .on = file != NULL && isatty (STDERR_FILENO), .total = texts->len,
                    .t0 = g_get_monotonic_time () };
  int rc = 0;

  if (json != NULL)
    {
      json_builder_begin_object (json);
      if (c->store != NULL)
        saccade_json_string (json, "database", sc_store_path (c->store));
      /* The backend every run of this call computed with (what "auto" chose). */
      saccade_json_string (json, "backend", c->backend_name);
      saccade_json_begin_array (json, "runs");
    }
  progress_draw (&prog);
  for (guint i = 0; i < texts->len; i++)
    {
      CaptureResult r = { 0 };
      gboolean ok = capture_one (c, g_ptr_array_index (texts, i), &r, &error);

      progress_end (&prog);
      if (ok && json != NULL)
        saccade_cli_capture_add_json (json, &r, c);
      else if (ok)
        saccade_cli_capture_print_text (&r, c);
      capture_result_clear (&r);
      if (!ok)
        {
          if (texts->len > 1 || c->text_line != NULL)
            g_prefix_error (&error, "line %u of %s: ",
                            (c->text_line != NULL ? c->text_line[i] : i) + 1, file);
          fprintf (stderr, "saccade: %s\n", error->message);
          rc = 1;
          break;
        }
      prog.done++;
      progress_draw (&prog);
    }
  progress_end (&prog);
  if (json != NULL)
    {
      json_builder_end_array (json);
      if (rc != 0)
        saccade_json_string (json, "error", error->message);
      json_builder_end_object (json);
      saccade_json_print (json);
    }
  return rc;
}

/* --sparse[=EPS]: the option group's data is the EPS to set. */
static gboolean
parse_sparse (const char *name, const char *value, gpointer data, GError **error)
{
  double *eps = data;
  char *end = NULL;

  *eps = SC_STORE_DEFAULT_SPARSE_EPS;
  if (value == NULL)
    return TRUE;
  *eps = g_ascii_strtod (value, &end);
  if (end == value || *end != '\0' || !(*eps > 0 && *eps < 1))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: '%s' is not an EPS "
                   "between 0 and 1 (e.g. --sparse=1e-3)", name, value);
      return FALSE;
    }
  return TRUE;
}

/* --estimate: what each text would add to the store, without running the model. */
static int
capture_print_estimates (CaptureCtx *c, GPtrArray *texts, gboolean json_out)
{
  const ScModelInfo *in = sc_model_info (c->model);
  g_autoptr (JsonBuilder) json = json_out ? json_builder_new () : NULL;
  g_autoptr (GError) error = NULL;

  if (json != NULL)
    {
      json_builder_begin_object (json);
      saccade_json_int (json, "heads_kept", c->keep != NULL ? c->n_kept
                                                            : in->n_layers * in->n_heads);
      saccade_json_int (json, "heads", (gint64) in->n_layers * in->n_heads);
      if (c->sparse_eps > 0)
        saccade_json_double (json, "sparse_eps", c->sparse_eps);
      saccade_json_begin_array (json, "runs");
    }
  for (guint i = 0; i < texts->len; i++)
    {
      gsize len = 0;
      const char *bytes = g_bytes_get_data (g_ptr_array_index (texts, i), &len);
      g_autoptr (GArray) ids = saccade_tokenize (c->model, bytes, (gssize) len,
                                                 c->parse_special, &error);
      guint64 est;

      if (ids == NULL)
        return saccade_cli_fail (g_steal_pointer (&error));
      est = capture_estimate (c, ids->len);
      if (json != NULL)
        {
          json_builder_begin_object (json);
          saccade_json_int (json, "n_tokens", ids->len);
          saccade_json_int (json, "bytes", (gint64) est);
          json_builder_end_object (json);
        }
      else
        {
          g_autofree char *size = saccade_store_cli_bytes (est);
          printf ("%u tokens, %u of %u heads%s: about %s (%" G_GUINT64_FORMAT " bytes)%s\n",
                  ids->len, c->keep != NULL ? c->n_kept : in->n_layers * in->n_heads,
                  in->n_layers * in->n_heads, c->sparse_eps > 0 ? ", sparse" : "", size, est,
                  c->sparse_eps > 0 ? " at most: the dense bound; sparse heads take less" : "");
        }
    }
  if (json != NULL)
    {
      json_builder_end_array (json);
      json_builder_end_object (json);
      saccade_json_print (json);
    }
  return 0;
}

int
saccade_cmd_capture (int argc, char **argv)
{
  g_auto (SaccadeCliCommon) common = { 0 };
  gboolean no_special = FALSE, summary = FALSE, no_store = FALSE, chat = FALSE;
  gboolean estimate = FALSE;
  int n_generate = 0;
  g_autofree char *file = NULL, *text_opt = NULL, *db_opt = NULL, *prompt_file = NULL;
  g_autofree char *layers_opt = NULL, *heads_opt = NULL, *shard_opt = NULL;
  double sparse_eps = 0, zero_below = 0;
  gboolean compress = FALSE;
  int round_bits = 0;
  SaccadeShard shard = { 0, 1 };
  g_autoptr (GArray) text_line = g_array_new (FALSE, FALSE, sizeof (guint));
  guint n_lines = 0;
  GOptionEntry entries[] = {
    { "text", 't', 0, G_OPTION_ARG_STRING, &text_opt, "The text to run", "TEXT" },
    { "file", 'f', 0, G_OPTION_ARG_FILENAME, &file,
      "One run per non-blank line of FILE (- = stdin)", "FILE" },
    { "prompt-file", 'p', 0, G_OPTION_ARG_FILENAME, &prompt_file,
      "One run of the whole of FILE, newlines included (- = stdin; UTF-8)", "FILE" },
    { "chat", 'c', 0, G_OPTION_ARG_NONE, &chat,
      "Wrap the text in the model's chat template (as generate --chat)", NULL },
    { "generate", 'g', 0, G_OPTION_ARG_INT, &n_generate,
      "Also store N greedily generated tokens after the text (as generate -n N)", "N" },
    SACCADE_STORE_CLI_DB_OPTION (&db_opt),
    { "summary", 's', 0, G_OPTION_ARG_NONE, &summary,
      "Also print a per-head summary (entropy, sink, previous token, top key)", NULL },
    { "no-store", 0, 0, G_OPTION_ARG_NONE, &no_store,
      "Only print the summary; store nothing", NULL },
    { "no-parse-special", 0, 0, G_OPTION_ARG_NONE, &no_special,
      "Treat special-token text as plain text", NULL },
    { "layers", 0, 0, G_OPTION_ARG_STRING, &layers_opt,
      "Store only these layers (e.g. 10-20 or 0,4,10-12; with --heads, their product)",
      "LIST" },
    { "heads", 0, 0, G_OPTION_ARG_STRING, &heads_opt, "Store only these heads of each layer",
      "LIST" },
    { "sparse", 0, G_OPTION_FLAG_OPTIONAL_ARG, G_OPTION_ARG_CALLBACK, (gpointer) parse_sparse,
      "Per row, store only the keys that hold 1 - EPS of the attention (default 1e-3)",
      "EPS" },
    { "compress", 0, 0, G_OPTION_ARG_NONE, &compress,
      "Store dense heads compressed: lossless (zstd), about 63 % of the bytes; needs a "
      "Saccade that reads schema 5 (docs/store.md)", NULL },
    { "round-bits", 0, 0, G_OPTION_ARG_INT, &round_bits,
      "Store each value rounded to M mantissa bits (1-9; within 2^-(M+1) of itself: 3.1 % "
      "at M = 4); implies --compress; needs a Saccade that reads schema 6", "M" },
    { "zero-below", 0, 0, G_OPTION_ARG_DOUBLE, &zero_below,
      "Store values below F (0 < F < 1) as 0; implies --compress", "F" },
    { "estimate", 0, 0, G_OPTION_ARG_NONE, &estimate,
      "Print what the runs would add to the store, and run nothing", NULL },
    { "shard", 0, 0, G_OPTION_ARG_STRING, &shard_opt,
      "--file with --db: only lines k with k mod N = I, resumed after an interruption "
      "(I/N; docs/cluster.md)", "I/N" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "[TEXT...] - run the model and store every attention head");
  GOptionGroup *group = g_option_group_new (NULL, NULL, NULL, &sparse_eps, NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) texts = NULL;
  g_autoptr (JsonBuilder) json = NULL;
  ScStoreModel ident = { 0 };
  CaptureCtx c = { 0 };
  int rc;

  g_option_group_add_entries (group, entries);
  g_option_context_set_main_group (ctx, group);
  saccade_cli_common_add (ctx, &common);
  g_option_context_set_description (ctx,
    "Prints the new run's id (one per line with --file). Warns on stderr before a run that\n"
    "would add more than 1 GB to the store. Examples:\n"
    "  saccade capture -t \"The cat chased the ball because it was tired.\"\n"
    "  saccade capture --file sentences.txt --db study.sqlite\n"
    "  saccade capture --chat --generate 32 --prompt-file question.txt\n"
    "  saccade capture --file long.txt --layers 10-20 --heads 0,4 --sparse --estimate\n"
    "  saccade show $(saccade capture -t \"Hello\") --layer 3 --head 1");
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if (n_generate < 0 || (chat && no_special))
    {
      fprintf (stderr, "saccade: %s\n", n_generate < 0 ? "--generate must be >= 0"
                       : "--chat needs special tokens parsed: drop --no-parse-special");
      return 2;
    }
  if (round_bits < 0 || round_bits > (int) SC_STORE_ROUND_BITS_MAX
      || !(zero_below >= 0 && zero_below < 1)
      || ((round_bits > 0 || zero_below > 0) && sparse_eps > 0))
    {
      fprintf (stderr, "saccade: %s\n",
               round_bits < 0 || round_bits > (int) SC_STORE_ROUND_BITS_MAX
                 ? "--round-bits must be between 1 and 9 (fp16 keeps 10 mantissa bits)"
               : !(zero_below >= 0 && zero_below < 1)
                 ? "--zero-below must be a number between 0 and 1"
                 : "--sparse cannot be rounded: --round-bits and --zero-below are for dense "
                   "heads");
      return 2;
    }
  if (shard_opt != NULL
      && (file == NULL || db_opt == NULL || no_store || strcmp (file, "-") == 0))
    {
      fprintf (stderr, "saccade: --shard I/N is for --file FILE with --db SHARD.sqlite (each "
                       "shard stores into its own database; merge them with `saccade merge`)\n");
      return 2;
    }
  if (shard_opt != NULL && !saccade_shard_parse (shard_opt, &shard, &error))
    return saccade_cli_fail (g_steal_pointer (&error));
  if ((texts = capture_texts (text_opt, file, prompt_file, argc, argv, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  n_lines = texts->len;
  if (shard_opt != NULL)
    {
      /* the shard's lines, in file order */
      guint kept = 0;
      for (guint k = 0; k < n_lines; k++)
        if (saccade_shard_has (&shard, k))
          {
            GBytes *b = texts->pdata[k];
            texts->pdata[k] = texts->pdata[kept];
            texts->pdata[kept++] = b;
            g_array_append_val (text_line, k);
          }
      g_ptr_array_set_size (texts, kept);
      c.text_line = (const guint *) (void *) text_line->data;
    }
  c.parse_special = !no_special;
  c.chat = chat;
  c.n_generate = n_generate;
  c.summary = summary || no_store;
  c.sparse_eps = sparse_eps;
  c.round_bits = (guint32) round_bits;
  c.zero_below = zero_below;
  c.compress = compress || round_bits > 0 || zero_below > 0;
  if (estimate)
    {
      if ((c.model = saccade_cli_load_model (&common, &error)) == NULL
          || !capture_keep (&c, layers_opt, heads_opt, &error))
        rc = saccade_cli_fail (g_steal_pointer (&error));
      else
        rc = capture_print_estimates (&c, texts, common.json);
    }
  else if (!capture_ctx_init (&c, &common, db_opt, !no_store, layers_opt, heads_opt, &ident,
                              &error))
    rc = saccade_cli_fail (g_steal_pointer (&error));
  else
    {
      guint done = 0;
      rc = 0;
      if (shard_opt != NULL)
        {
          /* the settings every shard of one capture shares (the merge compares them) */
          g_autofree char *l = g_strescape (layers_opt != NULL ? layers_opt : "", NULL);
          g_autofree char *h = g_strescape (heads_opt != NULL ? heads_opt : "", NULL);
          char eps[G_ASCII_DTOSTR_BUF_SIZE];
          g_autofree char *settings = g_strdup_printf (
            "{\"chat\":%s,\"generate\":%d,\"parse_special\":%s,\"layers\":\"%s\","
            "\"heads\":\"%s\",\"sparse\":%s}", chat ? "true" : "false", n_generate,
            no_special ? "false" : "true", l, h,
            g_ascii_formatd (eps, sizeof eps, "%.17g", sparse_eps));
          /* the rounded form joins the settings only when asked for, so that a shard begun
           * before it existed resumes with the same settings */
          if (round_bits > 0 || zero_below > 0)
            {
              char zero[G_ASCII_DTOSTR_BUF_SIZE];
              char *with = g_strdup_printf ("%.*s,\"round_bits\":%d,\"zero_below\":%s}",
                                            (int) strlen (settings) - 1, settings, round_bits,
                                            g_ascii_formatd (zero, sizeof zero, "%.17g",
                                                             zero_below));
              g_free (settings);
              settings = with;
            }
          if (!saccade_capture_shard_begin (c.store, &ident, file, n_lines, settings, &shard,
                                            &done, &error))
            rc = saccade_cli_fail (g_steal_pointer (&error));
          else if (done > 0)
            {
              fprintf (stderr, "saccade: resuming shard %s: %u of its %u lines are already "
                               "stored in %s\n", shard_opt, MIN (done, texts->len), texts->len,
                       sc_store_path (c.store));
              g_array_remove_range (text_line, 0, MIN (done, texts->len));
              g_ptr_array_remove_range (texts, 0, MIN (done, texts->len));
              c.text_line = (const guint *) (void *) text_line->data;
            }
        }
      if (common.json)
        json = json_builder_new ();
      if (rc == 0)
        rc = capture_all (&c, texts, file, json);
    }
  capture_ctx_clear (&c);
  return rc;
}
