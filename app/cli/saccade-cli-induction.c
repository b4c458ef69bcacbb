/* saccade-cli-induction.c — `saccade induction`: the induction-head detector on the
 * command line. Parse -> a result (app/core/saccade-induction.h computes or reuses it) ->
 * a ranked table or JSON; with -o FILE.png|svg|pdf also the in-context-learning curve, drawn
 * by the renderer the Induction page shows (ui/figures, "loss"). With --bench it measures the sweep against the same number of
 * plain forward passes of the same length (docs/benchmarks.md). */
#define G_LOG_DOMAIN "saccade-cli"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "app/cli/saccade-cli.h"
#include "app/cli/saccade-cli-store.h"
#include "app/core/saccade-induction.h"
#include "ui/figures/saccade-figure.h"

typedef struct {
  SaccadeCliCommon common;
  char *db;
  char *out_path;               /* -o: the loss curve's figure, or NULL */
  int seq_len, n_seeds, top;
  gboolean recompute, bench;
  int bench_repeats;
  SaccadeCliFigure figure;      /* --preset, --width-mm, ...: the loss curve's */
  SaccadeFigureExportOptions figure_options;
} InductionOptions;

static void
print_text (const SaccadeInduction *ind, const ScModelInfo *info, const InductionOptions *o,
            const char *db_path, const char *warning)
{
  const ScInductionResult *r = ind->result;
  g_autofree int *by_pm = saccade_induction_rank (ind, 0);
  g_autofree int *by_prev = saccade_induction_rank (ind, 1);
  const int n = r->n_layers * r->n_heads, top = MIN (o->top, n);
  int k;

  printf ("%s: induction heads on %s%d random tokens repeated twice, %d seeds\n", info->name,
          r->n_prefix ? "BOS + " : "", r->seq_len, r->n_seeds);
  saccade_cli_print_study_source (ind->source.reused, ind->source.study_id, ind->source.seconds,
                                  1, db_path, warning);
  printf ("\n  rank  head    prefix-match  duplicate  previous  copying\n");
  for (k = 0; k < top; k++)
    {
      const int i = by_pm[k];
      char name[SACCADE_HEAD_NAME_MAX];
      printf ("  %4d  %-6s  %12.3f  %9.3f  %8.3f  %7.3f\n", k + 1,
              saccade_head_name (name, i / r->n_heads, i % r->n_heads),
              r->heads[i].prefix_matching, r->heads[i].duplicate_token,
              r->heads[i].previous_token, ind->copying[i].copying);
    }
  printf ("\n  top previous-token heads:");
  for (k = 0; k < MIN (5, n); k++)
    printf (" L%d.H%d (%.3f)", by_prev[k] / r->n_heads, by_prev[k] % r->n_heads,
            r->heads[by_prev[k]].previous_token);
  printf ("\n\n  mean loss  first copy %.3f nats   second copy %.3f nats\n", r->loss_first,
          r->loss_second);
}

static void
print_json (const SaccadeInduction *ind, const ScModelInfo *info)
{
  const ScInductionResult *r = ind->result;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autofree int *order = saccade_induction_rank (ind, 0);
  int k;

  json_builder_begin_object (b);
  saccade_json_string (b, "model", info->name);
  saccade_json_int (b, "seq_len", r->seq_len);
  saccade_json_int (b, "n_seeds", r->n_seeds);
  saccade_json_int (b, "n_prefix", r->n_prefix);
  saccade_json_string (b, "source", ind->source.reused ? "reused" : "computed");
  saccade_json_int (b, "study_id", ind->source.study_id);
  saccade_json_double (b, "loss_first", r->loss_first);
  saccade_json_double (b, "loss_second", r->loss_second);
  saccade_json_doubles (b, "loss", r->loss, r->n_tokens);
  saccade_json_begin_array (b, "heads"); /* ranked by prefix matching */
  for (k = 0; k < r->n_layers * r->n_heads; k++)
    {
      const int i = order[k];
      json_builder_begin_object (b);
      saccade_json_head (b, i / r->n_heads, i % r->n_heads);
      saccade_json_double (b, "prefix_matching", r->heads[i].prefix_matching);
      saccade_json_double (b, "duplicate_token", r->heads[i].duplicate_token);
      saccade_json_double (b, "previous_token", r->heads[i].previous_token);
      saccade_json_double (b, "copying", ind->copying[i].copying);
      saccade_json_double (b, "positive_share", ind->copying[i].positive_share);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  saccade_json_print (b);
}

/* The loss curve of @ind to @path (the format from its extension). */
static gboolean
write_figure (const SaccadeInduction *ind, const ScModelInfo *info, const char *path,
              const SaccadeFigureExportOptions *opts, gboolean say, GError **error)
{
  g_autofree char *title = saccade_induction_dup_loss_title (ind, info->name);
  SaccadeLossFigure f;

  saccade_induction_loss_figure (ind, title, &f);
  if (!saccade_figure_export_loss (&f, path, opts, error))
    return FALSE;
  if (say)
    printf ("\n  wrote the in-context-learning curve to %s\n", path);
  return TRUE;
}

/* The sweep (S scored passes, all logits) against S plain passes of the same ids: with all
 * logits (what the loss curve needs) and with the last position's only. Medians of
 * @repeats. */
static int
run_bench (ScModel *model, const InductionOptions *o)
{
  g_autoptr (GError) error = NULL;
  SaccadeCliSession cs = { 0 };
  const ScInductionParams p = { o->seq_len, o->n_seeds };
  const ScModelInfo *info = sc_model_info (model);
  const int reps = MAX (1, o->bench_repeats);
  g_autofree double *sweep = g_new (double, reps), *plain = g_new (double, reps);
  g_autofree double *last = g_new (double, reps);
  g_autofree int32_t *ids = NULL;
  g_autofree float *logits = NULL;
  ScError err = { 0 };
  int rep, s, pre = 0, n;

  if (!saccade_cli_session_open (&cs, &o->common, model, &error))
    return saccade_cli_fail (g_steal_pointer (&error));
  n = 1 + 2 * o->seq_len;
  ids = g_new (int32_t, n);
  logits = g_new (float, (gsize) n * info->n_vocab);
  for (rep = 0; rep < reps; rep++)
    {
      ScInductionResult *r = NULL;
      ScForwardOptions all = { .all_logits = true }, one = { 0 };
      gint64 t0 = g_get_monotonic_time ();
      if (sc_induction_study_run (cs.session, model, &p, NULL, NULL, &r, &err) != SC_OK)
        {
          saccade_cli_session_close (&cs);
          saccade_set_error_from_sc (&error, &err);
          return saccade_cli_fail (g_steal_pointer (&error));
        }
      sc_induction_result_free (r);
      sweep[rep] = (g_get_monotonic_time () - t0) / 1e6;
      t0 = g_get_monotonic_time ();
      for (s = 0; s < o->n_seeds; s++)
        {
          sc_induction_sequence (model, o->seq_len, s, ids, &pre, NULL);
          sc_forward (cs.session, ids, pre + 2 * o->seq_len, &all, logits, NULL);
        }
      plain[rep] = (g_get_monotonic_time () - t0) / 1e6;
      t0 = g_get_monotonic_time ();
      for (s = 0; s < o->n_seeds; s++)
        {
          sc_induction_sequence (model, o->seq_len, s, ids, &pre, NULL);
          sc_forward (cs.session, ids, pre + 2 * o->seq_len, &one, logits, NULL);
        }
      last[rep] = (g_get_monotonic_time () - t0) / 1e6;
    }
  saccade_cli_session_close (&cs);
  {
    const double ms = saccade_median (sweep, reps), mp = saccade_median (plain, reps);
    const double ml = saccade_median (last, reps);
    if (o->common.json)
      {
        g_autoptr (JsonBuilder) b = json_builder_new ();
        json_builder_begin_object (b);
        saccade_json_string (b, "model", info->name);
        saccade_json_int (b, "seq_len", o->seq_len);
        saccade_json_int (b, "n_seeds", o->n_seeds);
        const SaccadeBenchTime times[] = {
          { "sweep_s", ms }, { "plain_all_logits_s", mp }, { "plain_last_logits_s", ml },
        };
        const SaccadeBenchRatio ratios[] = {
          { "ratio", 0, 1 }, { "ratio_last_logits", 0, 2 },
        };
        saccade_json_bench_sweep (b, reps, times, G_N_ELEMENTS (times), ratios,
                                  G_N_ELEMENTS (ratios));
        json_builder_end_object (b);
        saccade_json_print (b);
      }
    else
      printf ("%s, %d seeds x %d tokens, median of %d:\n  sweep %.3f s, plain forward "
              "(all logits) %.3f s: ratio %.3f\n  plain forward (last logits only) %.3f s: "
              "ratio %.3f\n", info->name, o->n_seeds, pre + 2 * o->seq_len, reps, ms, mp,
              ms / mp, ml, ms / ml);
  }
  return 0;
}

int
saccade_cmd_induction (int argc, char **argv)
{
  InductionOptions o = { .seq_len = SC_INDUCTION_DEFAULT_LEN,
                         .n_seeds = SC_INDUCTION_DEFAULT_SEEDS, .top = 10,
                         .bench_repeats = 5, .figure = SACCADE_CLI_FIGURE_INIT };
  GOptionEntry entries[] = {
    { "len", 0, 0, G_OPTION_ARG_INT, &o.seq_len, "tokens T of the repeated sequence (50)", "T" },
    { "seeds", 0, 0, G_OPTION_ARG_INT, &o.n_seeds, "random sequences S (10)", "S" },
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &o.db, "the capture store (results are reused)", "FILE" },
    SACCADE_STORE_CLI_RECOMPUTE_OPTION (&o.recompute),
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o.out_path,
      "write the in-context-learning curve (.png, .svg, .pdf)", "FILE" },
    SACCADE_CLI_FIGURE_OPTIONS (&o.figure),
    { "top", 0, 0, G_OPTION_ARG_INT, &o.top, "rows of the table (10)", "N" },
    { "bench", 0, 0, G_OPTION_ARG_NONE, &o.bench, "time the sweep against plain passes", NULL },
    { "repeats", 0, 0, G_OPTION_ARG_INT, &o.bench_repeats, "--bench repeats (5)", "N" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- find induction heads");
  g_autoptr (GError) error = NULL;
  g_autofree char *db_path = NULL, *warning = NULL;
  g_autoptr (SaccadeInduction) ind = NULL;
  SaccadeCliSession cs = { 0 };
  const ScInductionParams p = { 0 };
  ScInductionParams params = p;
  ScModel *model;
  int rc = 0;

  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &o.common);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if (!saccade_cli_figure_check (&o.figure, o.out_path != NULL, "-o FILE", &o.figure_options,
                                 &rc))
    {
      saccade_cli_figure_clear (&o.figure);
      return rc;
    }
  if ((model = saccade_cli_load_model (&o.common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  if (o.bench)
    {
      rc = run_bench (model, &o);
      sc_model_free (model);
      return rc;
    }
  params.seq_len = o.seq_len;
  params.n_seeds = o.n_seeds;
  if (o.out_path != NULL)
    {
      SaccadeFigureFormat fmt;
      /* Refused before the study runs, not after seconds of computing. */
      if (!saccade_figure_format_from_path (o.out_path, &fmt, &error))
        {
          sc_model_free (model);
          return saccade_cli_fail (g_steal_pointer (&error));
        }
    }
  db_path = saccade_db_path (o.db);
  if (!saccade_cli_session_open (&cs, &o.common, model, &error))
    {
      sc_model_free (model);
      return saccade_cli_fail (g_steal_pointer (&error));
    }
  ind = saccade_induction_get (model, saccade_cli_model_path (&o.common), cs.session, db_path,
                               &params, o.recompute,
                               saccade_cli_progress (), NULL, NULL,
                               &warning, &error);
  if (isatty (STDERR_FILENO))
    fprintf (stderr, "\r\033[K");
  saccade_cli_session_close (&cs);
  if (ind == NULL)
    rc = saccade_cli_fail (g_steal_pointer (&error));
  else if (o.common.json)
    print_json (ind, sc_model_info (model));
  else
    print_text (ind, sc_model_info (model), &o, db_path, warning);
  if (ind != NULL && o.out_path != NULL
      && !write_figure (ind, sc_model_info (model), o.out_path, &o.figure_options,
                        !o.common.json, &error))
    rc = saccade_cli_fail (g_steal_pointer (&error));
  sc_model_free (model);
  g_free (o.db);
  g_free (o.out_path);
  saccade_cli_figure_clear (&o.figure);
  return rc;
}
