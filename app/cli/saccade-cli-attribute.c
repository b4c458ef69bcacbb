/* saccade-cli-attribute.c — `saccade attribute RUN`: gradient attributions of a stored run
 * (saliency, gradient × input, integrated gradients, gradient-weighted rollout;
 * engine/study/sc-attribution.h) beside the run's last-layer attention and token
 * leave-one-out. Parse -> a result (app/core/saccade-attribution.h computes or reuses the
 * stored studies) -> text or JSON, with --csv one row per token and with -o the figure
 * (per-token bar rows, ui/figures/saccade-figure-attribution.c, the Attribution page's).
 * Definitions: docs/metrics.md, "Gradient attributions". */
#define G_LOG_DOMAIN "saccade-cli"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app/cli/saccade-cli-store.h"
#include "app/cli/saccade-cli-study.h"
#include "app/core/saccade-attribution.h"
#include "app/core/saccade-export.h"
#include "ui/figures/saccade-figure.h"

typedef struct {
  SaccadeCliCommon common;
  char *db, *method, *target, *rule, *baseline, *csv, *out_path;
  int position, steps;
  gboolean recompute;
} AttrOptions;

/* --method: one of the engine's ids or "all"; several may be given with commas. */
static gboolean
parse_methods (const char *text, unsigned *out, GError **error)
{
  g_auto (GStrv) parts = NULL;

  *out = 0;
  if (text == NULL || strcmp (text, "all") == 0)
    return TRUE;
  parts = g_strsplit (text, ",", -1);
  for (int i = 0; parts[i] != NULL; i++)
    {
      ScAttrMethod m;
      if (!sc_attr_method_from_id (g_strstrip (parts[i]), &m))
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--method is saliency, gradxinput, ig, grad-rollout or all (or a "
                       "comma-separated list), not '%s'", parts[i]);
          return FALSE;
        }
      *out |= 1u << m;
    }
  return TRUE;
}

static gboolean
parse_params (ScModel *model, const AttrOptions *o, ScAttrParams *p, GError **error)
{
  saccade_attribution_params_init (p);
  if (!parse_methods (o->method, &p->methods, error))
    return FALSE;
  if (o->steps < 0 || o->steps > SC_ATTR_MAX_STEPS)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--steps is 1 to %d points, not %d", SC_ATTR_MAX_STEPS, o->steps);
      return FALSE;
    }
  p->steps = o->steps > 0 ? o->steps : SC_ATTR_DEFAULT_STEPS;
  if (o->position < -1)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--position is a token index from 0, not %d", o->position);
      return FALSE;
    }
  p->position = o->position;
  if (o->rule != NULL && !sc_attr_rule_from_id (o->rule, &p->rule))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--rule is adaptive, gauss-legendre or midpoint, not '%s'", o->rule);
      return FALSE;
    }
  if (o->baseline != NULL && strcmp (o->baseline, "zero") == 0)
    p->baseline = SC_ATTR_BASELINE_ZERO;
  else if (o->baseline != NULL && strcmp (o->baseline, "eos") != 0)
    {
      int id;
      if (!g_str_has_prefix (o->baseline, "token:"))
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--baseline is eos, zero or token:ID, not '%s'", o->baseline);
          return FALSE;
        }
      if (!saccade_cli_parse_token (model, "--baseline token:", o->baseline + strlen ("token:"),
                                    &id, error))
        return FALSE;
      p->baseline = SC_ATTR_BASELINE_TOKEN;
      p->baseline_token = id;
    }
  return saccade_cli_parse_token (model, "--target", o->target, &p->target, error);
}

typedef struct {
  SaccadeAttribution *a;
  char **labels;
  char *target_label, *top1_label, *warning;
} AttrOutput;

static void
output_clear (AttrOutput *r)
{
  saccade_attribution_free (r->a);
  g_strfreev (r->labels);
  g_free (r->target_label);
  g_free (r->top1_label);
  g_free (r->warning);
}

static void
print_text (const AttrOutput *out, const char *db_path)
{
  const SaccadeAttribution *a = out->a;
  const ScAttrResult *r = a->result;
  g_autofree char *complete = saccade_attribution_completeness (a, FALSE);

  printf ("run %" G_GINT64_FORMAT " (%d tokens), %s: f(x) = log p(target %d %s | tokens 0 .. "
          "%d) = %.4f (clean top-1 %d %s)\n", a->run.id, a->n_tokens, a->run.model_name,
          (int) r->target, out->target_label, r->position, r->value, (int) r->top1,
          out->top1_label);
  if (a->reused)
    printf ("reused study %" G_GINT64_FORMAT " from %s\n", a->study_id, db_path);
  else if (a->study_id > 0)
    printf ("computed now, stored as study %" G_GINT64_FORMAT " in %s\n", a->study_id, db_path);
  else
    printf ("computed now (not stored: %s)\n", out->warning != NULL ? out->warning : "no store");
  printf ("attention: last layer, mean of %d heads, query row %d; leave-one-out: TV of the "
          "next token with the token masked (%s)\n", a->attention_heads, r->position,
          r->position != a->n_tokens - 1 ? "only at the last position"
          : a->loo_reused                ? "stored ablate-tokens study"
                                         : "computed now and stored");

  printf ("\n  pos  token              attention  leave-one-out");
  for (int m = 0; m < SC_ATTR_N_METHODS; m++)
    if (r->scores[m] != NULL)
      printf ("  %12s", sc_attr_method_id (m));
  printf ("\n");
  for (int j = 0; j < a->n_tokens; j++)
    {
      printf ("  %3d  ", j);
      saccade_store_cli_print_padded (out->labels[j], 16);
      printf ("  %9.4f  %13.5f", a->attention[j], a->loo[j]);
      for (int m = 0; m < SC_ATTR_N_METHODS; m++)
        if (r->scores[m] != NULL)
          printf ("  %+12.5f", r->scores[m][j]);
      printf ("\n");
    }
  if (complete != NULL)
    printf ("\nig: %d points, %s rule, %s baseline", r->steps, sc_attr_rule_id (r->rule),
            sc_attr_baseline_id (r->baseline));
  if (complete != NULL && r->baseline == SC_ATTR_BASELINE_TOKEN)
    printf (" (token %d)", (int) r->baseline_token);
  if (complete != NULL)
    printf ("\n%s\n", complete);
  printf ("\ntiming: %.2f s in all: attribution %.2f s (%s; %.2f s in forward and backward "
          "passes), leave-one-out %.2f s (%s), attention %.2f s (read from the run)\n",
          a->seconds, a->attr_seconds, a->reused ? "read back" : "computed",
          a->reused ? 0.0 : r->forward_backward_s, a->loo_seconds,
          r->position != a->n_tokens - 1 ? "not measured at this position"
          : a->loo_reused                ? "read back"
                                         : "computed",
          MAX (0.0, a->seconds - a->attr_seconds - a->loo_seconds));
}

static void
print_json (const AttrOutput *out)
{
  const SaccadeAttribution *a = out->a;
  const ScAttrResult *r = a->result;
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  saccade_json_int (b, "run", a->run.id);
  saccade_json_string (b, "model", a->run.model_name);
  saccade_json_string (b, "study", SC_ATTR_KIND);
  saccade_json_string (b, "source", a->reused ? "reused" : "computed");
  saccade_json_int (b, "study_id", a->study_id);
  saccade_json_begin_object (b, "params");
  saccade_json_begin_array (b, "methods");
  for (int m = 0; m < SC_ATTR_N_METHODS; m++)
    if (r->scores[m] != NULL)
      json_builder_add_string_value (b, sc_attr_method_id (m));
  json_builder_end_array (b);
  saccade_json_int (b, "target", a->params.target);
  saccade_json_int (b, "position", a->params.position);
  saccade_json_int (b, "steps", r->steps);
  saccade_json_string (b, "rule", sc_attr_rule_id (r->rule));
  saccade_json_string (b, "baseline", sc_attr_baseline_id (r->baseline));
  if (r->baseline == SC_ATTR_BASELINE_TOKEN)
    saccade_json_int (b, "baseline_token", r->baseline_token);
  json_builder_end_object (b);
  saccade_json_int (b, "n_tokens", a->n_tokens);
  saccade_json_int (b, "position", r->position);
  saccade_json_int (b, "target", r->target);
  saccade_json_string (b, "target_label", out->target_label);
  saccade_json_int (b, "top1", r->top1);
  saccade_json_double (b, "value", r->value);
  saccade_json_begin_object (b, "attention");
  saccade_json_string (b, "source", "last-layer head mean of the query row, from the run");
  saccade_json_int (b, "heads", a->attention_heads);
  json_builder_end_object (b);
  saccade_json_begin_object (b, "loo");
  saccade_json_string (b, "metric", "tv");
  saccade_json_string (b, "kind", "mask");
  saccade_json_bool (b, "reused", a->loo_reused);
  saccade_json_int (b, "study_id", a->loo_study_id);
  json_builder_end_object (b);
  saccade_json_begin_object (b, "scores");
  for (int m = 0; m < SC_ATTR_N_METHODS; m++)
    if (r->scores[m] != NULL)
      {
        saccade_json_begin_array (b, sc_attr_method_id (m));
        for (int j = 0; j < a->n_tokens; j++)
          saccade_json_add_double (b, r->scores[m][j]);
        json_builder_end_array (b);
      }
  json_builder_end_object (b);
  saccade_json_begin_array (b, "tokens");
  for (int j = 0; j < a->n_tokens; j++)
    {
      json_builder_begin_object (b);
      saccade_json_int (b, "pos", j);
      saccade_json_int (b, "id", a->tokens[j].id);
      saccade_json_string (b, "label", out->labels[j]);
      saccade_json_double (b, "attention", a->attention[j]);
      saccade_json_double (b, "loo", a->loo[j]);
      for (int m = 0; m < SC_ATTR_N_METHODS; m++)
        if (r->scores[m] != NULL)
          saccade_json_double (b, sc_attr_method_id (m), r->scores[m][j]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  if (r->scores[SC_ATTR_IG] != NULL)
    {
      saccade_json_begin_object (b, "completeness");
      saccade_json_double (b, "f_x", r->value);
      saccade_json_double (b, "f_baseline", r->f_baseline);
      saccade_json_double (b, "sum", r->ig_sum);
      saccade_json_double (b, "difference", r->value - r->f_baseline);
      saccade_json_double (b, "gap", r->ig_gap);
      saccade_json_double (b, "gap_rel", r->ig_gap_rel);
      json_builder_end_object (b);
    }
  saccade_json_begin_object (b, "timing");
  saccade_json_double (b, "total_s", a->seconds);
  saccade_json_double (b, "attribution_s", a->attr_seconds);
  saccade_json_double (b, "forward_backward_s", a->reused ? 0.0 : r->forward_backward_s);
  saccade_json_double (b, "loo_s", a->loo_seconds);
  json_builder_end_object (b);
  json_builder_end_object (b);
  saccade_json_print (b);
}

static int
write_outputs (const AttrOutput *out, const AttrOptions *o)
{
  g_autoptr (GError) error = NULL;

  if (o->csv != NULL)
    {
      g_autoptr (GBytes) csv = saccade_attribution_csv (out->a, (const char *const *) out->labels);
      if (!saccade_export_write (csv, o->csv, &error))
        return saccade_cli_fail (g_steal_pointer (&error));
      if (!o->common.json)
        printf ("wrote one row per token to %s\n", o->csv);
    }
  if (o->out_path != NULL)
    {
      g_autofree char *title = saccade_attribution_title (out->a, out->target_label);
      g_autofree char *caption = saccade_attribution_completeness (out->a, FALSE);
      SaccadeAttrRow rows[SACCADE_ATTRIBUTION_N_ROWS];
      SaccadeAttributionFigure fig;
      saccade_attribution_figure (out->a, (const char *const *) out->labels, title, rows, &fig);
      fig.caption = caption;
      if (!saccade_figure_export_attribution (&fig, o->out_path, &error))
        return saccade_cli_fail (g_steal_pointer (&error));
      if (!o->common.json)
        printf ("wrote the figure to %s\n", o->out_path);
    }
  return 0;
}

typedef struct {
  gint64 run_id;
  const ScAttrParams *params;
} Job;

static gpointer
attribute_func (ScModel *model, const ScStoreModel *ident, ScSession *session,
               const char *db_path, gpointer data, SaccadeStudyFlags flags,
               SaccadeProgress progress, gpointer progress_data, GCancellable *cancellable,
               char **store_warning, GError **error)
{
  Job *job = data;

  return saccade_attribution_get (model, ident, session, db_path, job->run_id, job->params, flags,
                                 progress, progress_data, cancellable, store_warning, error);
}

static int
attribute (ScModel *model, const AttrOptions *o, const ScAttrParams *p, gint64 run_id)
{
  g_autofree char *db_path = saccade_db_path (o->db);
  g_autoptr (GError) error = NULL;
  AttrOutput out = { 0 };
  Job job = { run_id, p };
  int rc;

  out.a = saccade_cli_study_run (attribute_func, &job, model, NULL, &o->common, db_path,
                                 o->recompute, FALSE, &out.warning, &error);
  if (out.a == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  out.labels = saccade_token_labels_for_store (out.a->tokens, (gsize) out.a->n_tokens);
  out.target_label = saccade_attribution_token_label (model, out.a->result->target);
  out.top1_label = saccade_attribution_token_label (model, out.a->result->top1);
  if (o->common.json)
    print_json (&out);
  else
    print_text (&out, db_path);
  rc = write_outputs (&out, o);
  output_clear (&out);
  return rc;
}

int
saccade_cmd_attribute (int argc, char **argv)
{
  AttrOptions o = { .position = -1 };
  GOptionEntry entries[] = {
    { "method", 0, 0, G_OPTION_ARG_STRING, &o.method,
      "saliency, gradxinput, ig, grad-rollout or all (default; or a comma-separated list)",
      "METHOD" },
    { "target", 0, 0, G_OPTION_ARG_STRING, &o.target,
      "the token whose log-probability is attributed: an id or a text of one token "
      "(default: the clean top-1)", "TOKEN" },
    { "position", 0, 0, G_OPTION_ARG_INT, &o.position,
      "the position whose next token is measured (default: the last)", "I" },
    { "steps", 0, 0, G_OPTION_ARG_INT, &o.steps, "ig: integration points (50)", "N" },
    { "rule", 0, 0, G_OPTION_ARG_STRING, &o.rule,
      "ig: adaptive (default), gauss-legendre or midpoint", "RULE" },
    { "baseline", 0, 0, G_OPTION_ARG_STRING, &o.baseline,
      "ig: zero (default) or token:ID (every position that token's embedding)", "BASELINE" },
    SACCADE_STORE_CLI_DB_OPTION (&o.db),
    { "recompute", 0, 0, G_OPTION_ARG_NONE, &o.recompute,
      "compute the attribution even if stored", NULL },
    { "csv", 0, 0, G_OPTION_ARG_FILENAME, &o.csv, "write one row per token as CSV", "PATH" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o.out_path,
      "write the figure (.png, .svg, .pdf)", "FIGURE" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "RUN - gradient attributions of a stored run's tokens, beside attention and "
    "leave-one-out");
  g_autoptr (GError) error = NULL;
  SaccadeFigureFormat fmt;
  ScAttrParams p;
  ScModel *model = NULL;
  unsigned methods;
  gint64 run = 0;
  int rc;

  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &o.common);
  o.common.needs = SC_BACKEND_CAP_BACKWARD; /* gradients */
  if (!saccade_store_cli_parse_run (ctx, &argc, &argv, "attribute", &run))
    return 2;
  /* Refused before the model loads and the study runs. */
  if (!parse_methods (o.method, &methods, &error))
    return saccade_cli_fail (g_steal_pointer (&error)) + 1;
  if (o.out_path != NULL && !saccade_figure_format_from_path (o.out_path, &fmt, &error))
    return saccade_cli_fail (g_steal_pointer (&error));
  if ((model = saccade_cli_load_model (&o.common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  if (!parse_params (model, &o, &p, &error))
    rc = saccade_cli_fail (g_steal_pointer (&error)) + 1;
  else
    rc = attribute (model, &o, &p, run);
  sc_model_free (model);
  saccade_cli_common_clear (&o.common);
  g_free (o.db);
  g_free (o.method);
  g_free (o.target);
  g_free (o.rule);
  g_free (o.baseline);
  g_free (o.csv);
  g_free (o.out_path);
  return rc;
}
