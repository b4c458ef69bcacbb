/* saccade-cli-store.c — the capture store's verbs capture, runs and rm, and the helpers all
 * the store's verbs share (saccade-cli-store.h; show and export are in saccade-cli-show.c).
 *
 * Every verb takes --db FILE (default $XDG_DATA_HOME/saccade/captures.sqlite) and prints
 * human text, or JSON with --json. `capture` prints the new run's id (one per line with
 * --file, and a progress bar on stderr when it is a terminal), so scripts can write
 * `saccade show $(saccade capture -t "...")`. The engine's store (engine/sc-store.h) does
 * the work; this file parses options, formats output and turns ScErrors into messages.
 */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli-store.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------ */
/* Shared                                                                                */

int
saccade_store_cli_fail (const ScError *err)
{
  fprintf (stderr, "saccade: %s\n", err->message[0] != '\0' ? err->message
                                                          : sc_status_name (err->status));
  return 1;
}

gboolean
saccade_store_cli_run_id (const char *s, gint64 *id)
{
  guint64 v = 0;

  if (s == NULL || !g_ascii_string_to_unsigned (s, 10, 1, G_MAXINT64, &v, NULL))
    {
      fprintf (stderr, "saccade: '%s' is not a run id (a positive number, as `saccade runs` "
                       "lists them)\n", s != NULL ? s : "");
      return FALSE;
    }
  *id = (gint64) v;
  return TRUE;
}

/* A token's bytes for a terminal (escapes for control bytes and invalid UTF-8). */
char *
saccade_store_cli_piece (const ScStoreToken *t)
{
  return saccade_token_display ((const char *) t->piece, t->len);
}

/* Columns @s takes on a terminal: wide (CJK) characters count two, combining marks none. */
static int
display_width (const char *s)
{
  int w = 0;

  for (; *s != '\0'; s = g_utf8_next_char (s))
    {
      gunichar c = g_utf8_get_char (s);
      w += g_unichar_iszerowidth (c) ? 0 : g_unichar_iswide (c) ? 2 : 1;
    }
  return w;
}

/* Prints @s left-aligned in @width terminal columns. */
void
saccade_store_cli_print_padded (const char *s, int width)
{
  printf ("%s%*s", s, MAX (width - display_width (s), 0), "");
}

/* Adds "piece" (when the bytes are UTF-8) and "bytes_hex" (always) to the open object. */
void
saccade_store_cli_json_piece (JsonBuilder *b, const guint8 *bytes, gsize len)
{
  g_autofree char *hex = g_malloc (2 * len + 1);
  gsize i;

  for (i = 0; i < len; i++)
    g_snprintf (hex + 2 * i, 3, "%02x", bytes[i]);
  hex[2 * len] = '\0';
  if (g_utf8_validate ((const char *) bytes, (gssize) len, NULL) && memchr (bytes, 0, len) == NULL)
    {
      g_autofree char *s = g_strndup ((const char *) bytes, len);
      json_builder_set_member_name (b, "piece");
      json_builder_add_string_value (b, s);
    }
  json_builder_set_member_name (b, "bytes_hex");
  json_builder_add_string_value (b, hex);
}

void
saccade_store_cli_json_tokens (JsonBuilder *b, const ScStoreToken *t, size_t n)
{
  size_t i;

  json_builder_set_member_name (b, "tokens");
  json_builder_begin_array (b);
  for (i = 0; i < n; i++)
    {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "pos");
      json_builder_add_int_value (b, (gint64) i);
      json_builder_set_member_name (b, "id");
      json_builder_add_int_value (b, t[i].id);
      saccade_store_cli_json_piece (b, t[i].piece, t[i].len);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

/* "1.2 MB" style sizes (SI units, like `saccade info`). */
char *
saccade_store_cli_bytes (guint64 bytes)
{
  return g_format_size_full (bytes, G_FORMAT_SIZE_DEFAULT);
}

char *
saccade_store_cli_time (gint64 ms, gboolean iso)
{
  g_autoptr (GDateTime) utc = g_date_time_new_from_unix_utc (ms / 1000);
  g_autoptr (GDateTime) local = NULL;

  if (utc == NULL)
    return g_strdup ("?");
  if (iso)
    return g_date_time_format_iso8601 (utc);
  local = g_date_time_to_local (utc);
  return g_date_time_format (local, "%Y-%m-%d %H:%M:%S");
}

/* The run's text for one table cell: escaped, newlines shown, cut to @width characters. */
static char *
text_cell (const char *text, size_t len, guint width)
{
  g_autofree char *shown = saccade_token_display (text, len);
  glong n = g_utf8_strlen (shown, -1);
  GString *s;

  if (n <= (glong) width)
    return g_steal_pointer (&shown);
  s = g_string_new_len (shown, g_utf8_offset_to_pointer (shown, width - 1) - shown);
  g_string_append (s, "…");
  return g_string_free (s, FALSE);
}

void
saccade_store_cli_json_run (JsonBuilder *b, const ScStoreRunInfo *r)
{
  g_autofree char *created = saccade_store_cli_time (r->created_ms, TRUE);

#define JS(k, v) (json_builder_set_member_name (b, k), json_builder_add_string_value (b, v))
#define JI(k, v) (json_builder_set_member_name (b, k), json_builder_add_int_value (b, (gint64) (v)))
#define JD(k, v) (json_builder_set_member_name (b, k), json_builder_add_double_value (b, v))
  JI ("id", r->id);
  JS ("created", created);
  JI ("created_ms", r->created_ms);
  json_builder_set_member_name (b, "model");
  json_builder_begin_object (b);
  JI ("id", r->model_id);
  JS ("name", r->model_name);
  JS ("architecture", r->model_arch);
  JS ("sha256", r->model_sha256);
  JS ("path", r->model_path);
  JI ("layers", r->n_layers);
  JI ("heads", r->n_heads);
  JI ("kv_heads", r->n_kv_heads);
  JI ("head_dim", r->head_dim);
  json_builder_end_object (b);
  JS ("backend", r->backend);
  JI ("n_tokens", r->n_tokens);
  if (r->forward_s >= 0)
    JD ("forward_seconds", r->forward_s);
  if (r->capture_s >= 0)
    JD ("capture_seconds", r->capture_s);
  JI ("attention_bytes", r->attention_bytes);
  json_builder_set_member_name (b, "text");
  json_builder_begin_object (b);
  saccade_store_cli_json_piece (b, (const guint8 *) r->text, r->text_len);
  json_builder_end_object (b);
#undef JS
#undef JI
#undef JD
}

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

/* The texts to capture: --text, the arguments, or one per non-empty line of --file. */
static GPtrArray *
capture_texts (const char *text_opt, const char *file, int argc, char **argv, GError **error)
{
  GPtrArray *texts = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_autofree char *contents = NULL;
  gsize len = 0;

  if (file != NULL)
    {
      const char *p, *end;
      if (strcmp (file, "-") == 0)
        {
          GString *s = g_string_new (NULL);
          char buf[4096];
          size_t n;
          while ((n = fread (buf, 1, sizeof buf, stdin)) > 0)
            g_string_append_len (s, buf, (gssize) n);
          len = s->len;
          contents = g_string_free (s, FALSE);
        }
      else if (!g_file_get_contents (file, &contents, &len, error))
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
          if (l > 0)
            g_ptr_array_add (texts, g_bytes_new (p, l));
          p = nl != NULL ? nl + 1 : end;
        }
      if (texts->len == 0)
        {
          g_set_error (error, SACCADE_ERROR, SC_ERR_INVALID_ARG, "%s has no non-empty line",
                       file);
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
                   "no text given: use -t TEXT, pass it as arguments, or --file FILE for one "
                   "run per line");
      g_ptr_array_unref (texts);
      return NULL;
    }
  return texts;
}

/* Calls two observers on every head. */
typedef struct {
  ScObserver a, b;
} Tee;

static bool
tee_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  Tee *t = user;
  if (t->a.observe != NULL && !t->a.observe (t->a.user, layer, head, probs, n_q, n_k))
    return false;
  return t->b.observe == NULL || t->b.observe (t->b.user, layer, head, probs, n_q, n_k);
}

static void
print_summary (const SaccadeHeadStatsTable *s, const ScStoreToken *pieces, int n, double secs)
{
  int l, h;

  printf ("%d tokens, %d layers x %d heads, %.3f s\n", n, s->n_layers, s->n_heads, secs);
  printf ("layer head  entropy(mean,last)  sink   prev   last token -> top key (weight)\n");
  for (l = 0; l < s->n_layers; l++)
    for (h = 0; h < s->n_heads; h++)
      {
        const ScHeadStats *st = saccade_head_stats_table_get (s, l, h);
        g_autofree char *p = saccade_store_cli_piece (&pieces[st->last_top]);
        printf ("%5d %4d   %6.3f %6.3f     %5.3f  %5.3f  -> %3d '%s' (%.3f)\n", l, h,
                st->entropy, st->last_entropy, st->sink, st->previous, st->last_top, p,
                st->last_top_weight);
      }
}

static void
json_add_summary (JsonBuilder *b, const SaccadeHeadStatsTable *s, int n_kv_heads)
{
  int l, h;

  json_builder_set_member_name (b, "heads");
  json_builder_begin_array (b);
  for (l = 0; l < s->n_layers; l++)
    for (h = 0; h < s->n_heads; h++)
      {
        const ScHeadStats *st = saccade_head_stats_table_get (s, l, h);
        json_builder_begin_object (b);
#define JI(k, v) (json_builder_set_member_name (b, k), json_builder_add_int_value (b, v))
#define JD(k, v) (json_builder_set_member_name (b, k), json_builder_add_double_value (b, v))
        JI ("layer", l);
        JI ("head", h);
        JI ("kv_head", h / (s->n_heads / n_kv_heads));
        JD ("mean_entropy", st->entropy);
        JD ("last_entropy", st->last_entropy);
        JD ("sink_mass", st->sink);
        JD ("prev_token", st->previous);
        JI ("last_top_key", st->last_top);
        JD ("last_top_weight", st->last_top_weight);
#undef JI
#undef JD
        json_builder_end_object (b);
      }
  json_builder_end_array (b);
}

typedef struct {
  const SaccadeCliCommon *common;
  ScModel *model;
  ScSession *session;
  ScStore *store;           /* NULL with --no-store */
  const ScStoreModel *ident;
  const char *backend_name;
  gboolean parse_special, summary;
  float *logits;
  Progress *progress;
} CaptureCtx;

/* Runs and stores one text; prints its result (or adds it to @json). */
static gboolean
capture_one (CaptureCtx *c, GBytes *text, JsonBuilder *json, GError **error)
{
  const ScModelInfo *in = sc_model_info (c->model);
  gsize len = 0;
  const char *bytes = g_bytes_get_data (text, &len);
  g_autoptr (GArray) ids = NULL;
  ScStoreToken *pieces = NULL;
  ScStoreCapture *cap = NULL;
  SaccadeHeadStatsTable sum = { 0 };
  ScStoreRunDesc desc = { 0 };
  ScError err = { 0 };
  Tee tee = { { 0 }, { 0 } };
  ScObserver obs = { NULL, tee_observe, &tee };
  ScForwardOptions fo = { .observer = &obs };
  ScStoreRunInfo info = { 0 };
  gint64 run_id = 0, t0;
  double secs;
  gboolean ok = FALSE;

  if ((ids = saccade_tokenize (c->model, bytes, (gssize) len, c->parse_special, error)) == NULL)
    return FALSE;
  if (ids->len == 0)
    {
      g_set_error (error, SACCADE_ERROR, SC_ERR_INVALID_ARG,
                   "empty input: the text has no tokens");
      return FALSE;
    }
  if (sc_store_tokens_from_ids (sc_model_tokenizer (c->model), (const int32_t *) ids->data,
                                ids->len, &pieces, &err) != SC_OK)
    goto sc_fail;
  if (c->summary)
    {
      saccade_head_stats_table_init (&sum, (int) in->n_layers, (int) in->n_heads);
      tee.b = (ScObserver) { NULL, saccade_head_stats_table_observe, &sum };
    }
  if (c->store != NULL)
    {
      desc.model = c->ident;
      desc.text = bytes;
      desc.text_len = len;
      desc.tokens = pieces;
      desc.n_tokens = ids->len;
      desc.backend = c->backend_name;
      if (sc_store_capture_begin (c->store, &desc, &cap, &err) != SC_OK)
        goto sc_fail;
      tee.a = sc_store_capture_observer (cap);
    }

  t0 = g_get_monotonic_time ();
  if (sc_forward (c->session, (const int32_t *) ids->data, (int) ids->len, &fo, c->logits, &err)
      != SC_OK)
    {
      /* A store that failed stops the forward pass; its own error says why. */
      if (cap != NULL && err.status == SC_ERR_CANCELLED)
        sc_store_capture_commit (cap, -1, NULL, &err);
      else
        sc_store_capture_abort (cap);
      goto sc_fail;
    }
  secs = (g_get_monotonic_time () - t0) / 1e6;
  if (cap != NULL)
    {
      ScStatus st = sc_store_capture_commit (cap, secs, &run_id, &err);
      cap = NULL;
      if (st != SC_OK || sc_store_get_run (c->store, run_id, &info, &err) != SC_OK)
        goto sc_fail;
    }

  progress_end (c->progress);
  if (json != NULL)
    {
      json_builder_begin_object (json);
      if (c->store != NULL)
        {
          json_builder_set_member_name (json, "run");
          json_builder_add_int_value (json, run_id);
          json_builder_set_member_name (json, "attention_bytes");
          json_builder_add_int_value (json, (gint64) info.attention_bytes);
        }
      json_builder_set_member_name (json, "n_tokens");
      json_builder_add_int_value (json, ids->len);
      json_builder_set_member_name (json, "seconds");
      json_builder_add_double_value (json, secs);
      if (c->summary)
        json_add_summary (json, &sum, (int) in->n_kv_heads);
      json_builder_end_object (json);
    }
  else if (c->summary)
    {
      print_summary (&sum, pieces, (int) ids->len, secs);
      if (c->store != NULL)
        {
          g_autofree char *size = saccade_store_cli_bytes (info.attention_bytes);
          printf ("stored as run %" G_GINT64_FORMAT " (%s) in %s\n", run_id, size,
                  sc_store_path (c->store));
        }
    }
  else
    printf ("%" G_GINT64_FORMAT "\n", run_id);
  fflush (stdout);
  ok = TRUE;
  goto out;

sc_fail:
  saccade_set_error_from_sc (error, &err);
out:
  sc_store_run_info_clear (&info);
  saccade_head_stats_table_clear (&sum);
  sc_store_tokens_free (pieces);
  return ok;
}

int
saccade_cmd_capture (int argc, char **argv)
{
  SaccadeCliCommon common = { 0 };
  gboolean no_special = FALSE, summary = FALSE, no_store = FALSE;
  char *file = NULL, *text_opt = NULL, *db_opt = NULL;
  GOptionEntry entries[] = {
    { "text", 't', 0, G_OPTION_ARG_STRING, &text_opt, "The text to run", "TEXT" },
    { "file", 'f', 0, G_OPTION_ARG_FILENAME, &file,
      "One run per non-empty line of FILE (- = stdin)", "FILE" },
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &db_opt,
      "Capture database (default: $XDG_DATA_HOME/saccade/captures.sqlite)", "FILE" },
    { "summary", 's', 0, G_OPTION_ARG_NONE, &summary,
      "Also print a per-head summary (entropy, sink, previous token, top key)", NULL },
    { "no-store", 0, 0, G_OPTION_ARG_NONE, &no_store,
      "Only print the summary; store nothing", NULL },
    { "no-parse-special", 0, 0, G_OPTION_ARG_NONE, &no_special,
      "Treat special-token text as plain text", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "[TEXT...] - run the model and store every attention head");
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) texts = NULL;
  g_autoptr (JsonBuilder) json = NULL;
  g_autofree char *path = NULL, *model_path = NULL;
  g_autofree float *logits = NULL;
  ScStoreModel ident = { 0 };
  ScBackend *backend = NULL;
  ScError err = { 0 };
  CaptureCtx c = { 0 };
  Progress prog = { 0 };
  int rc = 0;
  guint i;

  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &common);
  g_option_context_set_description (ctx,
    "Prints the new run's id (one per line with --file). Examples:\n"
    "  saccade capture -t \"The cat chased the ball because it was tired.\"\n"
    "  saccade capture --file sentences.txt --db study.sqlite\n"
    "  saccade show $(saccade capture -t \"Hello\") --layer 3 --head 1");
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if (no_store)
    summary = TRUE;
  if ((texts = capture_texts (text_opt, file, argc, argv, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  if ((c.model = saccade_cli_load_model (&common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  c.common = &common;
  c.parse_special = !no_special;
  c.summary = summary;
  if (!no_store)
    {
      /* The model is identified by its bytes; the path is stored as given, made absolute. */
      model_path = g_canonicalize_filename (saccade_cli_model_path (&common), NULL);
      if (sc_store_model_identify (c.model, model_path, &ident, &err) != SC_OK)
        goto sc_fail;
      c.ident = &ident;
      path = saccade_db_path (db_opt);
      if ((c.store = saccade_store_open (path, TRUE, &err)) == NULL)
        goto sc_fail;
    }
  if ((backend = saccade_cli_backend (&common, &error)) == NULL)
    goto fail;
  c.backend_name = backend->ops->name;
  if (sc_session_new (c.model, backend, &c.session, &err) != SC_OK)
    goto sc_fail;
  c.logits = logits = g_new (float, sc_model_info (c.model)->n_vocab);

  if (common.json)
    {
      json = json_builder_new ();
      json_builder_begin_object (json);
      if (c.store != NULL)
        {
          json_builder_set_member_name (json, "database");
          json_builder_add_string_value (json, sc_store_path (c.store));
        }
      json_builder_set_member_name (json, "runs");
      json_builder_begin_array (json);
    }
  prog.on = file != NULL && isatty (STDERR_FILENO);
  c.progress = &prog;
  prog.total = texts->len;
  prog.t0 = g_get_monotonic_time ();
  progress_draw (&prog);
  for (i = 0; i < texts->len; i++)
    {
      if (!capture_one (&c, g_ptr_array_index (texts, i), json, &error))
        {
          progress_end (&prog);
          if (texts->len > 1)
            g_prefix_error (&error, "line %u of %s: ", i + 1, file);
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
        {
          json_builder_set_member_name (json, "error");
          json_builder_add_string_value (json, error->message);
        }
      json_builder_end_object (json);
      saccade_cli_print_json (json);
    }
  goto done;

sc_fail:
  saccade_set_error_from_sc (&error, &err);
fail:
  fprintf (stderr, "saccade: %s\n", error->message);
  rc = 1;
done:
  sc_session_free (c.session);
  sc_backend_free (backend);
  sc_store_close (c.store);
  sc_model_free (c.model);
  return rc;
}

/* ------------------------------------------------------------------------------------ */
/* runs                                                                                  */

int
saccade_cmd_runs (int argc, char **argv)
{
  gboolean json = FALSE;
  char *db_opt = NULL;
  GOptionEntry entries[] = {
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &db_opt,
      "Capture database (default: $XDG_DATA_HOME/saccade/captures.sqlite)", "FILE" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print JSON", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- list the stored runs");
  g_autofree char *path = NULL;
  ScStoreRunInfo *runs = NULL;
  ScStore *store;
  ScError err = { 0 };
  guint64 total = 0;
  size_t n = 0, i;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  path = saccade_db_path (db_opt);
  if (!g_file_test (path, G_FILE_TEST_EXISTS) && db_opt == NULL)
    {
      /* No default database yet: nothing captured, which is not an error. */
      if (json)
        {
          g_autoptr (JsonBuilder) b = json_builder_new ();
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "database");
          json_builder_add_string_value (b, path);
          json_builder_set_member_name (b, "runs");
          json_builder_begin_array (b);
          json_builder_end_array (b);
          json_builder_end_object (b);
          saccade_cli_print_json (b);
        }
      else
        printf ("No runs yet (%s does not exist; `saccade capture` creates it).\n", path);
      return 0;
    }
  if ((store = saccade_store_open (path, FALSE, &err)) == NULL)
    return saccade_store_cli_fail (&err);
  if (sc_store_list_runs (store, &runs, &n, &err) != SC_OK)
    {
      sc_store_close (store);
      return saccade_store_cli_fail (&err);
    }
  for (i = 0; i < n; i++)
    total += runs[i].attention_bytes;

  if (json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "database");
      json_builder_add_string_value (b, path);
      json_builder_set_member_name (b, "runs");
      json_builder_begin_array (b);
      for (i = 0; i < n; i++)
        {
          json_builder_begin_object (b);
          saccade_store_cli_json_run (b, &runs[i]);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      json_builder_end_object (b);
      saccade_cli_print_json (b);
    }
  else if (n == 0)
    printf ("No runs in %s.\n", path);
  else
    {
      g_autofree char *sz = saccade_store_cli_bytes (total);
      printf ("%5s  %-19s  %-24s %6s %6s %9s  %s\n", "run", "created (local)", "model", "tokens",
              "heads", "size", "text");
      for (i = 0; i < n; i++)
        {
          const ScStoreRunInfo *r = &runs[i];
          g_autofree char *when = saccade_store_cli_time (r->created_ms, FALSE);
          g_autofree char *model = text_cell (r->model_name, strlen (r->model_name), 24);
          g_autofree char *text = text_cell (r->text, r->text_len, 48);
          g_autofree char *heads = g_strdup_printf ("%ux%u", r->n_layers, r->n_heads);
          g_autofree char *size = saccade_store_cli_bytes (r->attention_bytes);
          printf ("%5" G_GINT64_FORMAT "  %-19s  ", r->id, when);
          saccade_store_cli_print_padded (model, 24);
          printf (" %6u %6s %9s  %s\n", r->n_tokens, heads, size, text);
        }
      printf ("%zu run%s, %s of attention, in %s\n", n, n == 1 ? "" : "s", sz, path);
    }
  sc_store_run_list_free (runs, n);
  sc_store_close (store);
  return 0;
}

/* ------------------------------------------------------------------------------------ */
/* rm                                                                                    */

int
saccade_cmd_rm (int argc, char **argv)
{
  gboolean json = FALSE;
  char *db_opt = NULL;
  GOptionEntry entries[] = {
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &db_opt,
      "Capture database (default: $XDG_DATA_HOME/saccade/captures.sqlite)", "FILE" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print JSON", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "RUN... - delete runs and give their space back");
  g_autoptr (JsonBuilder) b = NULL;
  g_autofree char *path = NULL;
  g_autofree gint64 *ids = NULL;
  ScStore *store;
  ScError err = { 0 };
  int i, rc = 0;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if (argc < 2)
    {
      fprintf (stderr, "saccade: rm takes one or more run ids (see `saccade runs`)\n");
      return 2;
    }
  /* Check every id before deleting anything. */
  ids = g_new (gint64, argc);
  for (i = 1; i < argc; i++)
    if (!saccade_store_cli_run_id (argv[i], &ids[i]))
      return 2;
  path = saccade_db_path (db_opt);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      fprintf (stderr, "saccade: no capture store at %s\n", path);
      return 1;
    }
  if ((store = saccade_store_open (path, TRUE, &err)) == NULL)
    return saccade_store_cli_fail (&err);
  /* Every run must exist before any is deleted: a typo deletes nothing. */
  for (i = 1; i < argc; i++)
    {
      ScStoreRunInfo info = { 0 };
      if (sc_store_get_run (store, ids[i], &info, &err) != SC_OK)
        {
          sc_store_close (store);
          return saccade_store_cli_fail (&err);
        }
      sc_store_run_info_clear (&info);
    }
  if (json)
    {
      b = json_builder_new ();
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "deleted");
      json_builder_begin_array (b);
    }
  for (i = 1; i < argc; i++)
    {
      if (sc_store_delete_run (store, ids[i], &err) != SC_OK)
        {
          rc = saccade_store_cli_fail (&err);
          break;
        }
      if (b != NULL)
        json_builder_add_int_value (b, ids[i]);
      else
        printf ("Deleted run %" G_GINT64_FORMAT "\n", ids[i]);
    }
  if (b != NULL)
    {
      json_builder_end_array (b);
      if (rc != 0)
        {
          json_builder_set_member_name (b, "error");
          json_builder_add_string_value (b, err.message);
        }
      json_builder_end_object (b);
      saccade_cli_print_json (b);
    }
  sc_store_close (store);
  return rc;
}
