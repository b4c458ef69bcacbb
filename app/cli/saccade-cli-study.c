/* saccade-cli-study.c — a verb's study: read back, else computed on a session opened now
 * (saccade-cli-study.h). */
#include "app/cli/saccade-cli-study.h"

#include <stdio.h>
#include <string.h>

#include "app/cli/saccade-cli-store.h"
#include "app/core/saccade-export.h"
#include "app/core/saccade-format.h"
#include "app/core/saccade-paths.h"
#include "app/core/studies/saccade-study-outputs.h"
#include "engine/core/sc-sha256.h"
#include "ui/figures/saccade-figure.h"

gpointer
saccade_cli_study_run (SaccadeStudyFunc func, gpointer data, ScModel *model,
                       const ScStoreModel *ident, const SaccadeCliCommon *common,
                       const char *db_path, gboolean recompute, gboolean lookup_first,
                       char **warning, GError **error)
{
  SaccadeCliSession cs = { 0 };
  ScStoreModel sm;
  ScError err = { 0 };
  gpointer result;

  if (ident != NULL)
    sm = *ident;
  else if (sc_store_model_identify (model, saccade_cli_model_path (common), &sm, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  if (lookup_first && !recompute)
    {
      g_autoptr (GError) local = NULL;
      result = func (model, &sm, NULL, db_path, data, SACCADE_STUDY_STORED_ONLY, NULL, NULL,
                     NULL, NULL, &local);
      if (result != NULL)
        return result;
      /* Anything but "not stored" (a run of another model, a store that cannot be read)
       * would fail the same way computing. */
      if (!g_error_matches (local, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
    }
  if (!saccade_cli_session_open (&cs, common, model, error))
    return NULL;
  result = func (model, &sm, cs.session, db_path, data,
                 recompute ? SACCADE_STUDY_RECOMPUTE : SACCADE_STUDY_DEFAULT,
                 saccade_cli_progress (), NULL, NULL, warning, error);
  saccade_cli_progress_end ();
  saccade_cli_session_close (&cs);
  return result;
}

SaccadeStudy *
saccade_cli_study_get (const ScStudyKind *kind, const void *params, ScModel *model,
                       const ScStoreModel *ident, const SaccadeCliCommon *common,
                       const char *db_path, gint64 run_id, gboolean recompute, char **warning,
                       GError **error)
{
  SaccadeStudyGetData d = { kind, params, run_id };

  return saccade_cli_study_run (saccade_study_get_func, &d, model, ident, common, db_path,
                                recompute, TRUE, warning, error);
}

SaccadeStudy *
saccade_cli_study_of_run (const ScStudyKind *kind, const void *params, ScModel *model,
                          const SaccadeCliCommon *common, const char *db_path, gint64 run_id,
                          gboolean recompute, ScStoreModel *sm, SaccadeStudyRun **run,
                          char **warning, GError **error)
{
  ScError err = { 0 };
  SaccadeStudy *s;

  *run = NULL;
  if (sc_store_model_identify (model, saccade_cli_model_path (common), sm, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  *run = saccade_study_read_run_at (db_path, sm, sc_model_info (model), run_id, error);
  if (*run == NULL)
    return NULL;
  s = saccade_cli_study_get (kind, params, model, sm, common, db_path, run_id, recompute,
                             warning, error);
  if (s == NULL)
    g_clear_pointer (run, saccade_study_run_free);
  return s;
}

void
saccade_cli_study_print (const SaccadeStudy *s, ScModel *model, const SaccadeStudyRun *run,
                         const char *const *labels, const ScStoreStudyData *stored,
                         const SaccadeCliCommon *common, const char *db_path,
                         const char *warning, int top, const char *more)
{
  if (common->json)
    {
      g_autoptr (JsonBuilder) b = saccade_study_outputs_json (s, &run->run, run->tokens, labels,
                                                              stored);
      saccade_json_print (b);
    }
  else
    {
      g_autofree char *text = saccade_study_outputs_text (s, model, &run->run, labels, stored,
                                                          db_path, warning, top);
      fputs (text, stdout);
      if (more != NULL)
        fputs (more, stdout);
    }
}

gboolean
saccade_cli_identify_run_model (ScModel *model, const SaccadeCliCommon *common,
                                const ScStoreRunInfo *run, ScStoreModel *sm, GError **error)
{
  ScError err = { 0 };
  char hex[SC_SHA256_HEX_SIZE];

  if (sc_store_model_identify (model, saccade_cli_model_path (common), sm, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  sc_sha256_hex (sm->sha256, hex);
  if (strcmp (hex, run->model_sha256) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "run %" G_GINT64_FORMAT " was captured with %s (%s, SHA-256 %.12s…), not "
                   "with the loaded model %s (SHA-256 %.12s…); load that file with -m",
                   run->id, run->model_name, run->model_path, run->model_sha256,
                   saccade_cli_model_path (common), hex);
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------------------------ */
/* The verbs of a face's study                                                           */

/* The CSV and the figure the options ask for. */
static int
write_face_outputs (const SaccadeFaceOutputs *o, gconstpointer result, ScModel *model,
                    const char *const *labels, gboolean json, const char *csv_path,
                    const char *figure_path, const SaccadeFigureExportOptions *figure_options)
{
  g_autoptr (GError) error = NULL;

  if (csv_path != NULL)
    {
      g_autoptr (GBytes) csv = o->csv (result, labels);
      if (!saccade_export_write (csv, csv_path, &error))
        return saccade_cli_fail (g_steal_pointer (&error));
      if (!json)
        printf ("wrote one row per %s to %s\n", o->csv_row, csv_path);
    }
  if (figure_path != NULL)
    {
      if (!o->export_figure (result, model, labels, FALSE, figure_path, figure_options,
                             &error))
        return saccade_cli_fail (g_steal_pointer (&error));
      if (!json)
        printf ("wrote the figure to %s\n", figure_path);
    }
  return 0;
}

gboolean
saccade_cli_kind_parse (GOptionContext *ctx, SaccadeCliKindOptions *o,
                        const GOptionEntry *entries, const char *verb, int *argc, char ***argv)
{
  const GOptionEntry own[] = {
    SACCADE_STORE_CLI_DB_OPTION (&o->db),
    SACCADE_STORE_CLI_RECOMPUTE_OPTION (&o->recompute),
    { NULL },
  };

  g_option_context_add_main_entries (ctx, own, NULL);
  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &o->common);
  return saccade_store_cli_parse_run (ctx, argc, argv, verb, &o->run_id);
}

void
saccade_cli_kind_options_clear (SaccadeCliKindOptions *o)
{
  saccade_cli_common_clear (&o->common);
  g_clear_pointer (&o->db, g_free);
}

int
saccade_cli_kind_print (const ScStudyKind *kind, const void *params, ScModel *model,
                        const SaccadeCliKindOptions *o, int top, SaccadeCliKindMore more,
                        gpointer data)
{
  g_autofree char *db_path = saccade_db_path (o->db), *warning = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeStudyRun) run = NULL;
  g_autoptr (SaccadeStudy) s = NULL;
  g_autoptr (GString) text = NULL;
  g_auto (GStrv) labels = NULL;
  ScStoreModel sm;

  s = saccade_cli_study_of_run (kind, params, model, &o->common, db_path, o->run_id,
                                o->recompute, &sm, &run, &warning, &error);
  if (s == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  labels = saccade_token_labels_for_store (run->tokens, (gsize) run->n_tokens);
  if (more != NULL && !o->common.json)
    more (text = g_string_new (NULL), s, (const char *const *) labels, data);
  saccade_cli_study_print (s, model, run, (const char *const *) labels, NULL, &o->common,
                           db_path, warning, top, text != NULL ? text->str : NULL);
  return 0;
}

gboolean
saccade_cli_face_parse (GOptionContext *ctx, SaccadeCliFaceOptions *o,
                        const SaccadeFaceOutputs *outputs, const char *recompute_help,
                        const char *verb, int *argc, char ***argv, gint64 *run_id)
{
  o->csv_help = g_strdup_printf ("write one row per %s as CSV", outputs->csv_row);
  o->figure = (SaccadeCliFigure) SACCADE_CLI_FIGURE_INIT;
  {
    const GOptionEntry entries[] = {
      SACCADE_STORE_CLI_DB_OPTION (&o->db),
      { "recompute", 0, 0, G_OPTION_ARG_NONE, &o->recompute, recompute_help, NULL },
      { "csv", 0, 0, G_OPTION_ARG_FILENAME, &o->csv, o->csv_help, "PATH" },
      { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o->out_path,
        "write the figure (.png, .svg, .pdf)", "FIGURE" },
      SACCADE_CLI_FIGURE_OPTIONS (&o->figure),
      { NULL },
    };
    g_option_context_add_main_entries (ctx, entries, NULL);
  }
  saccade_cli_common_add (ctx, &o->common);
  o->common.needs = SC_BACKEND_CAP_BACKWARD; /* gradients */
  return saccade_store_cli_parse_run (ctx, argc, argv, verb, run_id);
}

ScModel *
saccade_cli_face_load_model (SaccadeCliFaceOptions *o, int *rc)
{
  g_autoptr (GError) error = NULL;
  SaccadeFigureFormat fmt;
  ScModel *model;

  if (o->out_path != NULL && !saccade_figure_format_from_path (o->out_path, &fmt, &error))
    {
      *rc = saccade_cli_fail (g_steal_pointer (&error));
      return NULL;
    }
  if (!saccade_cli_figure_check (&o->figure, o->out_path != NULL, "-o FIGURE",
                                 &o->figure_options, rc))
    return NULL;
  if ((model = saccade_cli_load_model (&o->common, &error)) == NULL)
    *rc = saccade_cli_fail (g_steal_pointer (&error));
  o->model = model;
  return model;
}

void
saccade_cli_face_options_clear (SaccadeCliFaceOptions *o)
{
  g_clear_pointer (&o->model, sc_model_free);
  saccade_cli_common_clear (&o->common);
  g_clear_pointer (&o->db, g_free);
  g_clear_pointer (&o->csv, g_free);
  g_clear_pointer (&o->out_path, g_free);
  g_clear_pointer (&o->csv_help, g_free);
  saccade_cli_figure_clear (&o->figure);
}

int
saccade_cli_study_face (const SaccadeFaceOutputs *out, const void *params, ScModel *model,
                        const SaccadeCliFaceOptions *o, gint64 run_id)
{
  g_autofree char *db_path = saccade_db_path (o->db);
  g_autofree char *warning = NULL;
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) labels = NULL;
  SaccadeStudyGetData d = { out->face->kind, params, run_id };
  const SaccadeStudyFaceBase *base;
  gpointer result;
  int rc;

  /* The face's extras (the attribution's leave-one-out) may need the session even when
   * the study is stored: no lookup first. */
  result = saccade_cli_study_run (out->face->get, &d, model, NULL, &o->common, db_path,
                                  o->recompute, FALSE, &warning, &error);
  if (result == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  base = result; /* a face's result starts with its base */
  labels = saccade_token_labels_for_store (base->tokens, (gsize) base->n_tokens);
  if (o->common.json)
    {
      g_autoptr (JsonBuilder) b = saccade_face_outputs_json (out, result, model,
                                                             (const char *const *) labels);
      saccade_json_print (b);
    }
  else
    {
      g_autofree char *text = out->text (result, model, (const char *const *) labels, db_path,
                                         warning);
      fputs (text, stdout);
    }
  rc = write_face_outputs (out, result, model, (const char *const *) labels, o->common.json,
                           o->csv, o->out_path, &o->figure_options);
  out->face->result_free (result);
  return rc;
}

/* ------------------------------------------------------------------------------------ */
/* `saccade study`: any kind of the table, its options from the kind's own table          */

static int
list_kinds (void)
{
  size_t n = 0;
  const ScStudyKind *const *kinds = sc_study_kinds (&n);

  printf ("Studies of a stored run (saccade study KIND RUN [--OPTION VALUE...]):\n");
  for (size_t i = 0; i < n; i++)
    {
      const ScStudyKind *k = kinds[i];
      if (!(k->needs & SC_STUDY_NEEDS_RUN))
        continue;
      printf ("  %-14s %s%s\n", k->name, k->title,
              (k->needs & SC_STUDY_NEEDS_BACKWARD) ? " (needs a backward pass)" : "");
      for (const ScStudyOption *o = k->options; o != NULL && o->name != NULL; o++)
        printf ("      --%-12s %s%s\n", o->name, o->help,
                o->type == SC_STUDY_OPTION_BOOL ? " (a switch)" : "");
    }
  return 0;
}

int
saccade_cmd_study (int argc, char **argv)
{
  const ScStudyKind *kind;
  SaccadeCliCommon common = { 0 };
  g_autofree char *db = NULL;
  gboolean recompute = FALSE, list = FALSE;
  int top = 10, n_opts = 0, rc = 0;
  g_autoptr (GOptionContext) ctx = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) entries = g_array_new (TRUE, TRUE, sizeof (GOptionEntry));
  g_autofree char **values = NULL;
  g_autofree gboolean *switches = NULL;
  g_autofree char *db_path = NULL;
  g_autofree void *params = NULL;
  g_autoptr (SaccadeStudy) s = NULL;
  g_autoptr (SaccadeStudyRun) run = NULL;
  g_auto (GStrv) labels = NULL;
  g_autofree char *warning = NULL;
  ScStoreStudyData *stored = NULL;
  ScStoreModel sm;
  ScError err = { 0 };
  ScModel *model = NULL;
  gint64 run_id = 0;
  const GOptionEntry fixed[] = {
    SACCADE_STORE_CLI_DB_OPTION (&db),
    SACCADE_STORE_CLI_RECOMPUTE_OPTION (&recompute),
    { "top", 0, 0, G_OPTION_ARG_INT, &top, "rows of a ranked table (10)", "N" },
  };

  /* The kind comes first: its options are the rest of the command line's. */
  if (argc < 2 || g_str_equal (argv[1], "--list") || g_str_equal (argv[1], "--help")
      || g_str_equal (argv[1], "-h"))
    list = TRUE;
  if (list && (argc < 2 || !g_str_equal (argv[1], "--list")))
    {
      fprintf (stderr, "Usage: saccade study KIND RUN [--OPTION VALUE...] [--json]\n"
                       "       saccade study --list\n\n");
      list_kinds ();
      return argc < 2 ? 2 : 0;
    }
  if (list)
    return list_kinds ();
  if ((kind = sc_study_kind_find (argv[1])) == NULL || !(kind->needs & SC_STUDY_NEEDS_RUN))
    {
      fprintf (stderr, "saccade: no study '%s' of a run (saccade study --list)\n", argv[1]);
      return 2;
    }
  for (const ScStudyOption *o = kind->options; o != NULL && o->name != NULL; o++)
    n_opts++;
  values = g_new0 (char *, n_opts + 1);
  switches = g_new0 (gboolean, n_opts + 1);
  for (int i = 0; i < n_opts; i++)
    {
      const ScStudyOption *o = &kind->options[i];
      /* a yes/no option is a switch: --mixing means yes */
      GOptionEntry e = o->type == SC_STUDY_OPTION_BOOL
        ? (GOptionEntry) { o->name, 0, 0, G_OPTION_ARG_NONE, &switches[i], o->help, NULL }
        : (GOptionEntry) { o->name, 0, 0, G_OPTION_ARG_STRING, &values[i], o->help, "VALUE" };
      g_array_append_val (entries, e);
    }
  g_array_append_vals (entries, fixed, G_N_ELEMENTS (fixed));
  {
    g_autofree char *summary = g_strdup_printf ("%s RUN - %s", kind->name, kind->title);
    ctx = g_option_context_new (summary);
  }
  g_option_context_add_main_entries (ctx, (const GOptionEntry *) entries->data, NULL);
  saccade_cli_common_add (ctx, &common);
  if (kind->needs & SC_STUDY_NEEDS_BACKWARD)
    common.needs = SC_BACKEND_CAP_BACKWARD;
  argv[1] = argv[0]; /* the kind is parsed: the run id is the first argument left */
  argc--, argv++;
  if (!saccade_store_cli_parse_run (ctx, &argc, &argv, "study", &run_id))
    {
      rc = 2;
      goto out;
    }
  db_path = saccade_db_path (db);
  if ((model = saccade_cli_load_model (&common, &error)) == NULL)
    {
      rc = saccade_cli_fail (g_steal_pointer (&error));
      goto out;
    }
  params = sc_study_params_dup_default (kind);
  for (int i = 0; i < n_opts; i++)
    {
      const ScStudyOption *o = &kind->options[i];
      g_autofree char *id_text = NULL;
      const char *value = o->type == SC_STUDY_OPTION_BOOL ? (switches[i] ? "yes" : NULL)
                                                          : values[i];
      if (value == NULL)
        continue;
      if (o->type == SC_STUDY_OPTION_TOKEN)
        {
          /* a token's text (or id) becomes its id, as every verb's --target does */
          g_autofree char *option = g_strdup_printf ("--%s", o->name);
          int id = -1;
          if (!saccade_parse_token (model, option, value, &id, &error))
            {
              fprintf (stderr, "saccade: %s\n", error->message);
              rc = 2;
              goto out;
            }
          value = id_text = g_strdup_printf ("%d", id);
        }
      if (sc_study_option_set (kind, params, o->name, value, sc_model_info (model)->n_vocab,
                               &err) != SC_OK)
        {
          fprintf (stderr, "saccade: %s\n", err.message);
          rc = 2;
          goto out;
        }
    }
  s = saccade_cli_study_of_run (kind, params, model, &common, db_path, run_id, recompute, &sm,
                                &run, &warning, &error);
  if (s == NULL)
    {
      rc = saccade_cli_fail (g_steal_pointer (&error));
      goto out;
    }
  labels = saccade_token_labels_for_store (run->tokens, (gsize) run->n_tokens);
  if (saccade_study_outputs_find (kind) == NULL && s->study_id > 0)
    {
      /* no outputs file: what the store holds is what is printed */
      ScStore *store = saccade_store_open (db_path, FALSE, NULL);
      if (store == NULL || sc_store_read_study (store, s->study_id, &stored, NULL) != SC_OK)
        stored = NULL;
      sc_store_close (store);
    }
  saccade_cli_study_print (s, model, run, (const char *const *) labels, stored, &common,
                           db_path, warning, top, NULL);
out:
  for (int i = 0; values != NULL && i < n_opts; i++)
    g_free (values[i]);
  sc_store_study_data_free (stored);
  sc_model_free (model);
  saccade_cli_common_clear (&common);
  return rc;
}
