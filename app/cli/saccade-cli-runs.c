/* saccade-cli-runs.c — the capture store's listing verbs: `saccade runs` (the stored runs of
 * one database, oldest first, with their model, backend, size and text; --json for the
 * same as an array of saccade_json_run objects) and `saccade rm ID…` (deletes runs, every
 * id checked before anything is deleted; the runs deleted are reported even when a later
 * one fails). Both take --db FILE (the default database otherwise, saccade-paths.h). The
 * helpers every store verb shares are in saccade-cli-store.c; capture is there too.
 */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli-store.h"
#include "app/core/saccade-run.h"

#include <stdio.h>
#include <string.h>

/* The run's text for one table cell: escaped, newlines shown, cut to @width characters. */
static char *
text_cell (const char *text, size_t len, guint width)
{
  g_autofree char *shown = saccade_terminal_text (text, len);
  glong n = g_utf8_strlen (shown, -1);
  GString *s;

  if (n <= (glong) width)
    return g_steal_pointer (&shown);
  s = g_string_new_len (shown, g_utf8_offset_to_pointer (shown, width - 1) - shown);
  g_string_append (s, "…");
  return g_string_free (s, FALSE);
}

/* The options of runs and rm, the only two: --db FILE into @db_opt, --json into @json; @args
 * is the context's summary. FALSE when they do not parse (said on stderr; exit status 2). */
static gboolean
parse_db_json (int *argc, char ***argv, const char *args, char **db_opt, gboolean *json)
{
  GOptionEntry entries[] = {
    SACCADE_STORE_CLI_DB_OPTION (db_opt),
    SACCADE_CLI_JSON_OPTION (json),
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (args);

  g_option_context_add_main_entries (ctx, entries, NULL);
  return saccade_cli_parse_options (ctx, argc, argv);
}

/* ------------------------------------------------------------------------------------ */
/* runs                                                                                  */

/* The stored runs of one database. */
typedef struct {
  char *path;
  gboolean exists;        /* FALSE: the default database was never created (no runs) */
  ScStoreRunInfo *runs;   /* (n), oldest first */
  size_t n;
  guint64 total_bytes;    /* of attention, over every run */
} RunsResult;

static void
runs_result_clear (RunsResult *r)
{
  sc_store_run_list_free (r->runs, r->n);
  g_free (r->path);
}

static gboolean
runs_list (const char *db_opt, RunsResult *r, ScError *err)
{
  ScStore *store;
  gboolean ok;

  r->path = saccade_db_path (db_opt);
  /* No default database yet: nothing captured, which is not an error. */
  r->exists = g_file_test (r->path, G_FILE_TEST_EXISTS) || db_opt != NULL;
  if (!r->exists)
    return TRUE;
  if ((store = saccade_store_open (r->path, FALSE, err)) == NULL)
    return FALSE;
  ok = sc_store_list_runs (store, &r->runs, &r->n, err) == SC_OK;
  for (size_t i = 0; ok && i < r->n; i++)
    r->total_bytes += r->runs[i].attention_bytes;
  sc_store_close (store);
  return ok;
}

static void
runs_print_json (const RunsResult *r)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  saccade_json_string (b, "database", r->path);
  saccade_json_begin_array (b, "runs");
  for (size_t i = 0; i < r->n; i++)
    {
      json_builder_begin_object (b);
      saccade_json_run (b, &r->runs[i]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  saccade_json_print (b);
}

static void
runs_print_text (const RunsResult *r)
{
  g_autofree char *sz = saccade_store_cli_bytes (r->total_bytes);

  if (!r->exists)
    {
      printf ("No runs yet (%s does not exist; `saccade capture` creates it).\n", r->path);
      return;
    }
  if (r->n == 0)
    {
      printf ("No runs in %s.\n", r->path);
      return;
    }
  printf ("%5s  %-19s  %-24s %6s %7s %9s  %-7s  %-20s  %s\n", "run", "created (local)",
          "model", "tokens", "heads", "size", "backend", "kind", "text");
  for (size_t i = 0; i < r->n; i++)
    {
      const ScStoreRunInfo *run = &r->runs[i];
      g_autofree char *when = saccade_format_time (run->created_ms, FALSE);
      g_autofree char *model = text_cell (run->model_name, strlen (run->model_name), 24);
      g_autofree char *text = text_cell (run->text, run->text_len, 48);
      /* The backend that computed it ("cpu-ref" is the longest name we write). */
      g_autofree char *backend = text_cell (run->backend, strlen (run->backend), 7);
      /* "30x9", or the heads kept of them ("22/270"); "s" for a sparse run, "r" for a
       * rounded one */
      const char *form = run->sparse_eps > 0 ? "s"
                         : run->round_bits > 0 || run->zero_below > 0 ? "r" : "";
      g_autofree char *heads = run->kept != NULL
        ? g_strdup_printf ("%u/%u%s", run->n_kept, run->n_layers * run->n_heads, form)
        : g_strdup_printf ("%ux%u%s", run->n_layers, run->n_heads, form);
      g_autofree char *size = saccade_store_cli_bytes (run->attention_bytes);
      /* "sentence", "prompt + 4 generated", ...; "-" for a short run stored before the
       * store said what a run is */
      g_autofree char *kind = saccade_run_kind_label (run);
      printf ("%5" G_GINT64_FORMAT "  %-19s  ", run->id, when);
      saccade_store_cli_print_padded (model, 24);
      printf (" %6u %7s %9s  ", run->n_tokens, heads, size);
      saccade_store_cli_print_padded (backend, 7);
      printf ("  %-20s  %s\n", kind != NULL ? kind : "-", text);
    }
  printf ("%zu run%s, %s of attention, in %s\n", r->n, r->n == 1 ? "" : "s", sz, r->path);
  for (size_t i = 0; i < r->n; i++)
    {
      g_autofree char *rounded = saccade_run_rounding_label (r->runs[i].round_bits,
                                                             r->runs[i].zero_below);
      if (rounded != NULL)
        printf ("run %" G_GINT64_FORMAT " (r): %s\n", r->runs[i].id, rounded);
    }
}

int
saccade_cmd_runs (int argc, char **argv)
{
  gboolean json = FALSE;
  g_autofree char *db_opt = NULL;
  RunsResult r = { 0 };
  ScError err = { 0 };
  int rc = 0;

  if (!parse_db_json (&argc, &argv, "- list the stored runs", &db_opt, &json))
    return 2;
  if (!runs_list (db_opt, &r, &err))
    rc = saccade_store_cli_fail (&err);
  else if (json)
    runs_print_json (&r);
  else
    runs_print_text (&r);
  runs_result_clear (&r);
  return rc;
}

/* ------------------------------------------------------------------------------------ */
/* rm                                                                                    */

/* What `saccade rm` did: the runs deleted, in order, until the first failure. */
typedef struct {
  GArray *deleted;        /* gint64 */
  ScError err;            /* status != SC_OK: why the next one was not deleted */
} RmResult;

/* Deletes @ids from the store at @path once every one of them is known to exist (a typo
 * deletes nothing). FALSE with @r->err set when nothing could be tried. */
static gboolean
rm_runs (const char *path, const gint64 *ids, int n, RmResult *r)
{
  ScStore *store;
  int i;

  r->deleted = g_array_new (FALSE, FALSE, sizeof (gint64));
  if ((store = saccade_store_open (path, TRUE, &r->err)) == NULL)
    return FALSE;
  for (i = 0; i < n; i++)
    {
      ScStoreRunInfo info = { 0 };
      if (sc_store_get_run (store, ids[i], &info, &r->err) != SC_OK)
        {
          sc_store_close (store);
          return FALSE;
        }
      sc_store_run_info_clear (&info);
    }
  for (i = 0; i < n && sc_store_delete_run (store, ids[i], &r->err) == SC_OK; i++)
    g_array_append_val (r->deleted, ids[i]);
  sc_store_close (store);
  return TRUE;
}

static void
rm_print (const RmResult *r, gboolean json)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  if (!json)
    {
      for (guint i = 0; i < r->deleted->len; i++)
        printf ("Deleted run %" G_GINT64_FORMAT "\n", g_array_index (r->deleted, gint64, i));
      return;
    }
  json_builder_begin_object (b);
  saccade_json_begin_array (b, "deleted");
  for (guint i = 0; i < r->deleted->len; i++)
    json_builder_add_int_value (b, g_array_index (r->deleted, gint64, i));
  json_builder_end_array (b);
  if (r->err.status != SC_OK)
    saccade_json_string (b, "error", r->err.message);
  json_builder_end_object (b);
  saccade_json_print (b);
}

int
saccade_cmd_rm (int argc, char **argv)
{
  gboolean json = FALSE;
  g_autofree char *db_opt = NULL;
  g_autofree char *path = NULL;
  g_autofree gint64 *ids = NULL;
  RmResult r = { 0 };
  int i, rc = 0;

  if (!parse_db_json (&argc, &argv, "RUN... - delete runs and give their space back", &db_opt,
                      &json))
    return 2;
  if (argc < 2)
    {
      fprintf (stderr, "saccade: rm takes one or more run ids (see `saccade runs`)\n");
      return 2;
    }
  /* Check every id before deleting anything. */
  ids = g_new (gint64, argc);
  for (i = 1; i < argc; i++)
    if (!saccade_store_cli_run_id (argv[i], &ids[i - 1]))
      return 2;
  path = saccade_db_path (db_opt);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      fprintf (stderr, "saccade: no capture store at %s\n", path);
      return 1;
    }
  if (!rm_runs (path, ids, argc - 1, &r))
    rc = saccade_store_cli_fail (&r.err);
  else
    {
      /* The runs deleted are reported even when a later one failed: in text, the lines
       * before the message; in JSON, the object (with "error") after it. */
      if (!json)
        rm_print (&r, FALSE);
      if (r.err.status != SC_OK)
        rc = saccade_store_cli_fail (&r.err);
      if (json)
        rm_print (&r, TRUE);
    }
  g_array_unref (r.deleted);
  return rc;
}
