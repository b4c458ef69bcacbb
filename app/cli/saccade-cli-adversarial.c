/* saccade-cli-adversarial.c — `saccade adversarial RUN`: adversarial attention of a stored
 * run (Jain & Wallace 2019, 4.2; engine/study/sc-adversarial.h): how far a head's (or a
 * layer's) attention row can move, in JSD, while the next-token distribution moves less
 * than ε in TVD. Parse -> a result (app/core/saccade-adversarial.h computes or reuses the
 * stored study) -> text or JSON, with --csv one row per ε and with -o the figure (the curve
 * and the rows, ui/figures/saccade-figure-adversarial.c, the Attribution page's). Definition:
 * docs/metrics.md, "Adversarial attention". */
#define G_LOG_DOMAIN "saccade-cli"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/cli/saccade-cli-store.h"
#include "app/cli/saccade-cli-study.h"
#include "app/core/saccade-adversarial.h"
#include "app/core/saccade-attribution.h"
#include "app/core/saccade-export.h"
#include "ui/figures/saccade-figure.h"

typedef struct {
  SaccadeCliCommon common;
  char *db, *head, *row, *epsilon, *csv, *out_path;
  int layer, iterations;
  gint64 seed;
  gboolean recompute;
} AdvOptions;

static gboolean G_GNUC_PRINTF (2, 3)
bad (GError **error, const char *format, ...)
{
  va_list ap;

  va_start (ap, format);
  g_propagate_error (error, g_error_new_valist (G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                                                format, ap));
  va_end (ap);
  return FALSE;
}

/* The options as study parameters (@eps holds the ε values), checked for what needs no
 * model; the layer, head and row against the model and run are the core's. */
static gboolean
parse_params (const AdvOptions *o, ScAdvParams *p, double *eps, GError **error)
{
  char *end;

  saccade_adversarial_params_init (p);
  if (o->layer < 0)
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           "--layer L is required (a layer index from 0)");
      return FALSE;
    }
  p->layer = o->layer;
  if (o->head != NULL && strcmp (o->head, "all") != 0)
    {
      long h = strtol (o->head, &end, 10);
      if (*o->head == '\0' || *end != '\0' || h < 0 || h > G_MAXINT)
        return bad (error, "--head is a head index from 0 or 'all', not '%s'", o->head);
      p->head = (int) h;
    }
  if (o->row != NULL && strcmp (o->row, "all") == 0)
    p->row = SC_ADV_ALL_ROWS;
  else if (o->row != NULL && strcmp (o->row, "last") != 0)
    {
      long r = strtol (o->row, &end, 10);
      if (*o->row == '\0' || *end != '\0' || r < 1 || r > G_MAXINT)
        return bad (error, "--row is a query row from 1 (row 0 sees a single key and cannot "
                    "move), 'last' or 'all', not '%s'", o->row);
      p->row = (int) r;
    }
  if (o->epsilon != NULL)
    {
      g_auto (GStrv) parts = g_strsplit (o->epsilon, ",", -1);
      const int n = (int) g_strv_length (parts);
      if (n < 1 || n > SC_ADV_MAX_EPSILONS)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--epsilon takes 1 to %d values, not %d", SC_ADV_MAX_EPSILONS, n);
          return FALSE;
        }
      for (int k = 0; k < n; k++)
        {
          const char *t = g_strstrip (parts[k]);
          eps[k] = g_ascii_strtod (t, &end);
          if (*t == '\0' || *end != '\0' || !(eps[k] > 0 && eps[k] <= 1))
            return bad (error, "--epsilon values are in (0, 1] (the output's total variation "
                        "distance allowed), not '%s'", t);
        }
      p->epsilons = eps;
      p->n_epsilons = n;
    }
  if (o->iterations < 0 || o->iterations > 100000)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--iterations is 1 to 100000 Adam steps per ε, not %d", o->iterations);
      return FALSE;
    }
  p->iterations = o->iterations > 0 ? o->iterations : SC_ADV_DEFAULT_ITERATIONS;
  if (o->seed < 0)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--seed is 0 or more, not %" G_GINT64_FORMAT, o->seed);
      return FALSE;
    }
  p->seed = (uint64_t) o->seed;
  return TRUE;
}

/* A row as the options spell it: the params' SC_ADV_ALL_ROWS and −1 (last), or a result's
 * −1 (every row) when @result. */
static const char *
row_text (int row, gboolean result, char buf[16])
{
  if (row == SC_ADV_ALL_ROWS || (result && row < 0))
    return "all";
  if (row < 0)
    return "last";
  g_snprintf (buf, 16, "%d", row);
  return buf;
}

typedef struct {
  SaccadeAdversarial *a;
  char **labels;
  char *target_label, *warning;
} AdvOutput;

static void
print_text (const AdvOutput *out, const char *db_path)
{
  const SaccadeAdversarial *a = out->a;
  const ScAdvResult *r = a->result;
  g_autofree char *label = saccade_adversarial_label (a, FALSE);
  g_autofree char *reading = saccade_adversarial_reading (a, FALSE);
  char rb[16];
  int head, row;
  double wide;

  printf ("run %" G_GINT64_FORMAT " (%d tokens), %s: %s, query row %s, %d distribution%s "
          "searched; target (clean top-1) %d %s\n", a->run.id, a->n_tokens, a->run.model_name,
          label, row_text (r->row, TRUE, rb), r->n_dists, r->n_dists == 1 ? "" : "s",
          (int) r->target, out->target_label);
  if (a->reused)
    printf ("reused study %" G_GINT64_FORMAT " from %s\n", a->study_id, db_path);
  else if (a->study_id > 0)
    printf ("computed now, stored as study %" G_GINT64_FORMAT " in %s\n", a->study_id, db_path);
  else
    printf ("computed now (not stored: %s)\n", out->warning != NULL ? out->warning : "no store");
  printf ("%d Adam iterations per epsilon, seed %" G_GUINT64_FORMAT "\n\n", a->params.iterations,
          a->params.seed);
  printf ("  epsilon     JSD mean   JSD max   TVD (<= epsilon)\n");
  for (int e = 0; e < r->n_epsilons; e++)
    printf ("  %-9g  %8.4f  %8.4f  %8.5f\n", r->epsilon[e], r->jsd[e], r->jsd_max[e], r->tvd[e]);
  printf ("\n%s\n", reading);
  if (saccade_adversarial_widest (a, &head, &row, &wide) >= 0)
    printf ("widest move: head %d, row %d, JSD %.4f at epsilon %g\n", head, row, wide,
            r->epsilon[r->n_epsilons - 1]);
  printf ("\ntiming: %.2f s in all: search %.2f s (%s), the rest reading the run and the "
          "store\n", a->seconds, a->reused ? 0.0 : a->search_seconds,
          a->reused ? "read back" : "forward and backward passes");
}

static void
print_json (const AdvOutput *out)
{
  const SaccadeAdversarial *a = out->a;
  const ScAdvResult *r = a->result;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  char rb[16];
  int head, row;
  double wide;

  json_builder_begin_object (b);
  saccade_json_int (b, "run", a->run.id);
  saccade_json_string (b, "model", a->run.model_name);
  saccade_json_string (b, "study", SC_ADV_KIND);
  saccade_json_string (b, "source", a->reused ? "reused" : "computed");
  saccade_json_int (b, "study_id", a->study_id);
  saccade_json_begin_object (b, "params");
  saccade_json_int (b, "layer", a->params.layer);
  if (a->params.head < 0)
    saccade_json_string (b, "head", "all");
  else
    saccade_json_int (b, "head", a->params.head);
  if (a->params.row < 0)
    saccade_json_string (b, "row", row_text (a->params.row, FALSE, rb));
  else
    saccade_json_int (b, "row", a->params.row);
  saccade_json_begin_array (b, "epsilons");
  for (int e = 0; e < a->params.n_epsilons; e++)
    saccade_json_add_double (b, a->params.epsilons[e]);
  json_builder_end_array (b);
  saccade_json_int (b, "iterations", a->params.iterations);
  saccade_json_double (b, "lr", a->params.lr);
  saccade_json_int (b, "seed", (gint64) a->params.seed);
  json_builder_end_object (b);
  saccade_json_int (b, "n_tokens", a->n_tokens);
  saccade_json_int (b, "n_dists", r->n_dists);
  saccade_json_int (b, "target", r->target);
  saccade_json_string (b, "target_label", out->target_label);
  saccade_json_double (b, "jsd_ceiling", SACCADE_ADVERSARIAL_JSD_MAX);
  saccade_json_begin_array (b, "points");
  for (int e = 0; e < r->n_epsilons; e++)
    {
      json_builder_begin_object (b);
      saccade_json_double (b, "epsilon", r->epsilon[e]);
      saccade_json_double (b, "jsd", r->jsd[e]);
      saccade_json_double (b, "jsd_max", r->jsd_max[e]);
      saccade_json_double (b, "tvd", r->tvd[e]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  if (saccade_adversarial_widest (a, &head, &row, &wide) >= 0)
    {
      const int k = saccade_adversarial_widest (a, NULL, NULL, NULL);
      saccade_json_begin_object (b, "rows");
      saccade_json_int (b, "head", head);
      saccade_json_int (b, "row", row);
      saccade_json_double (b, "jsd", wide);
      saccade_json_begin_array (b, "original");
      for (int j = 0; j < a->n_tokens; j++)
        saccade_json_add_double (b, r->original[(size_t) k * a->n_tokens + j]);
      json_builder_end_array (b);
      saccade_json_begin_array (b, "adversarial");
      for (int j = 0; j < a->n_tokens; j++)
        saccade_json_add_double (b, r->adversarial[(size_t) k * a->n_tokens + j]);
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  saccade_json_begin_array (b, "tokens");
  for (int j = 0; j < a->n_tokens; j++)
    json_builder_add_string_value (b, out->labels[j]);
  json_builder_end_array (b);
  saccade_json_begin_object (b, "timing");
  saccade_json_double (b, "total_s", a->seconds);
  saccade_json_double (b, "search_s", a->reused ? 0.0 : a->search_seconds);
  json_builder_end_object (b);
  json_builder_end_object (b);
  saccade_json_print (b);
}

static int
write_outputs (const AdvOutput *out, const AdvOptions *o)
{
  g_autoptr (GError) error = NULL;

  if (o->csv != NULL)
    {
      g_autoptr (GBytes) csv = saccade_adversarial_csv (out->a);
      if (!saccade_export_write (csv, o->csv, &error))
        return saccade_cli_fail (g_steal_pointer (&error));
      if (!o->common.json)
        printf ("wrote one row per epsilon to %s\n", o->csv);
    }
  if (o->out_path != NULL)
    {
      g_autofree char *title = saccade_adversarial_title (out->a);
      g_autofree char *label = saccade_adversarial_label (out->a, TRUE);
      g_autofree double *orig = g_new (double, out->a->n_tokens);
      g_autofree double *adv = g_new (double, out->a->n_tokens);
      SaccadeAdvSeries series;
      SaccadeAdversarialFigure fig;
      saccade_adversarial_figure (out->a, label, (const char *const *) out->labels, title,
                                  &series, orig, adv, &fig);
      if (!saccade_figure_export_adversarial (&fig, o->out_path, &error))
        return saccade_cli_fail (g_steal_pointer (&error));
      if (!o->common.json)
        printf ("wrote the figure to %s\n", o->out_path);
    }
  return 0;
}

typedef struct {
  gint64 run_id;
  const ScAdvParams *params;
} Job;

static gpointer
adversarial_func (ScModel *model, const ScStoreModel *ident, ScSession *session,
                 const char *db_path, gpointer data, SaccadeStudyFlags flags,
                 SaccadeProgress progress, gpointer progress_data, GCancellable *cancellable,
                 char **store_warning, GError **error)
{
  Job *job = data;

  return saccade_adversarial_get (model, ident, session, db_path, job->run_id, job->params, flags,
                                 progress, progress_data, cancellable, store_warning, error);
}

static int
adversarial (ScModel *model, const AdvOptions *o, const ScAdvParams *p, gint64 run_id)
{
  g_autofree char *db_path = saccade_db_path (o->db);
  g_autoptr (GError) error = NULL;
  AdvOutput out = { 0 };
  Job job = { run_id, p };
  int rc;

  out.a = saccade_cli_study_run (adversarial_func, &job, model, NULL, &o->common, db_path,
                                 o->recompute, FALSE, &out.warning, &error);
  if (out.a == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  out.labels = saccade_token_labels_for_store (out.a->tokens, (gsize) out.a->n_tokens);
  out.target_label = saccade_attribution_token_label (model, out.a->result->target);
  if (o->common.json)
    print_json (&out);
  else
    print_text (&out, db_path);
  rc = write_outputs (&out, o);
  saccade_adversarial_free (out.a);
  g_strfreev (out.labels);
  g_free (out.target_label);
  g_free (out.warning);
  return rc;
}

int
saccade_cmd_adversarial (int argc, char **argv)
{
  AdvOptions o = { .layer = -1 };
  GOptionEntry entries[] = {
    { "layer", 0, 0, G_OPTION_ARG_INT, &o.layer, "the layer searched (required)", "L" },
    { "head", 0, 0, G_OPTION_ARG_STRING, &o.head,
      "one head, or all (default: every head of the layer at once)", "H" },
    { "row", 0, 0, G_OPTION_ARG_STRING, &o.row,
      "the query row: an index from 1, last (default) or all", "I" },
    { "epsilon", 0, 0, G_OPTION_ARG_STRING, &o.epsilon,
      "the output's allowed total variation distance: values in (0, 1], comma-separated "
      "(default 0.001,0.005,0.01,0.02,0.05,0.1)", "E[,E...]" },
    { "iterations", 0, 0, G_OPTION_ARG_INT, &o.iterations, "Adam steps per epsilon (100)",
      "N" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &o.seed, "the start's noise seed (0)", "S" },
    SACCADE_STORE_CLI_DB_OPTION (&o.db),
    { "recompute", 0, 0, G_OPTION_ARG_NONE, &o.recompute,
      "search even if a study is stored", NULL },
    { "csv", 0, 0, G_OPTION_ARG_FILENAME, &o.csv, "write one row per epsilon as CSV", "PATH" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o.out_path,
      "write the figure (.png, .svg, .pdf)", "FIGURE" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "RUN - how far attention can move while the next-token distribution stays within "
    "epsilon (Jain & Wallace 2019)");
  g_autoptr (GError) error = NULL;
  SaccadeFigureFormat fmt;
  double eps[SC_ADV_MAX_EPSILONS];
  ScAdvParams p;
  ScModel *model = NULL;
  gint64 run = 0;
  int rc;

  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &o.common);
  o.common.needs = SC_BACKEND_CAP_BACKWARD; /* gradients */
  if (!saccade_store_cli_parse_run (ctx, &argc, &argv, "adversarial", &run))
    return 2;
  /* Refused before the model loads and the study runs. */
  if (!parse_params (&o, &p, eps, &error))
    rc = saccade_cli_fail (g_steal_pointer (&error)) + 1;
  else if (o.out_path != NULL && !saccade_figure_format_from_path (o.out_path, &fmt, &error))
    rc = saccade_cli_fail (g_steal_pointer (&error));
  else if ((model = saccade_cli_load_model (&o.common, &error)) == NULL)
    rc = saccade_cli_fail (g_steal_pointer (&error));
  else
    rc = adversarial (model, &o, &p, run);
  sc_model_free (model);
  saccade_cli_common_clear (&o.common);
  g_free (o.db);
  g_free (o.head);
  g_free (o.row);
  g_free (o.epsilon);
  g_free (o.csv);
  g_free (o.out_path);
  return rc;
}
