/* saccade-attribution-outputs.c — the outputs of the gradient attribution study of a run
 * (app/core/saccade-attribution.h): its CSV, figure and texts, and `saccade attribute`'s
 * JSON and text, the same for the verb and the Attribution page. The columns are described
 * in docs/metrics.md, "Gradient attributions". */
#define G_LOG_DOMAIN "saccade-attribution"

#include "app/core/studies/saccade-study-outputs.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/saccade-attribution.h"
#include "app/core/saccade-csv.h"
#include "app/core/saccade-format.h"
#include "app/core/saccade-json.h"

/* ------------------------------------------------------------------------------------ */
/* Text, CSV, figure                                                                     */

char *
saccade_attribution_completeness (const SaccadeAttribution *a, gboolean translated)
{
  const ScAttrResult *r = a->result;
  const double diff = r->value - r->f_baseline;

  if (r->scores[SC_ATTR_IG] == NULL)
    return NULL;
  if (!translated)
    return g_strdup_printf ("completeness: sum %.4f, f(x) - f(x') %.4f, gap %.4f (%.1f %%)",
                            r->ig_sum, diff, r->ig_gap, 100 * r->ig_gap_rel);
  /* Translators: integrated gradients' completeness: the sum of the attributions, the
   * difference f(x) − f(x′) it should equal, their gap and the gap in percent of it. */
  return g_strdup_printf (_("completeness: sum %.4f, f(x) - f(x') %.4f, gap %.4f (%.1f %%)"),
                          r->ig_sum, diff, r->ig_gap, 100 * r->ig_gap_rel);
}

GBytes *
saccade_attribution_csv (const SaccadeAttribution *a, const char *const *labels)
{
  const ScAttrResult *r = a->result;
  GString *s = g_string_new ("pos,token_id,label,attention,loo_tv");

  for (int m = 0; m < SC_ATTR_N_METHODS; m++)
    {
      /* CSV columns are identifiers: "grad-rollout" becomes grad_rollout */
      g_autofree char *col = g_strdup (sc_attr_method_id (m));
      g_strdelimit (col, "-", '_');
      g_string_append_printf (s, ",%s", col);
    }
  g_string_append (s, "\r\n");
  for (int j = 0; j < a->base.n_tokens; j++)
    {
      const char *label = labels != NULL ? labels[j] : "";
      g_string_append_printf (s, "%d,%d,\"", j, a->base.tokens[j].id);
      for (const char *p = label; *p != '\0'; p++)
        {
          if (*p == '"')
            g_string_append_c (s, '"');
          g_string_append_c (s, *p);
        }
      g_string_append_c (s, '"');
      saccade_csv_add_number (s, a->attention[j]);
      saccade_csv_add_number (s, a->loo[j]);
      for (int m = 0; m < SC_ATTR_N_METHODS; m++)
        saccade_csv_add_number (s, r->scores[m] != NULL ? r->scores[m][j] : NAN);
      g_string_append (s, "\r\n");
    }
  return g_string_free_to_bytes (s);
}

void
saccade_attribution_figure (const SaccadeAttribution *a, const char *const *labels,
                            const char *title, SaccadeAttrRow *rows,
                            SaccadeAttributionFigure *fig)
{
  const ScAttrResult *r = a->result;
  int n = 0;

  /* Translators: rows of the attribution figure. */
  rows[n++] = (SaccadeAttrRow) { _("attention"), a->attention, FALSE };
  rows[n++] = (SaccadeAttrRow) { _("leave-one-out"), a->loo, FALSE };
  for (int m = 0; m < SC_ATTR_N_METHODS; m++)
    if (r->scores[m] != NULL)
      rows[n++] = (SaccadeAttrRow) { saccade_attribution_method_name (m), r->scores[m],
                                     m == SC_ATTR_GRADXINPUT || m == SC_ATTR_IG };
  *fig = (SaccadeAttributionFigure) { .n_tokens = a->base.n_tokens, .n_rows = n, .rows = rows,
                                      .labels = labels, .title = title };
}

char *
saccade_attribution_title (const SaccadeAttribution *a, const char *target_label,
                           const char *contrast_label)
{
  const ScAttrResult *r = a->result;
  g_autoptr (GString) s = g_string_new (NULL);

  if (r->contrast >= 0 && target_label != NULL && contrast_label != NULL)
    /* Translators: the attribution figure's title with a contrast: run id, the measure
     * logit(target) − logit(contrast) with their labels, then their ids. */
    g_string_printf (s, _("Gradient attribution · run %lld · logit(“%s”) − logit(“%s”) "
                          "(%d − %d)"), (long long) a->base.run.id, target_label,
                     contrast_label, (int) r->target, (int) r->contrast);
  else
    {
      /* Translators: the attribution figure's title: run id, then the target token. */
      g_string_printf (s, _("Gradient attribution · run %lld · target %s (%d)"),
                       (long long) a->base.run.id, target_label != NULL ? target_label : "",
                       (int) r->target);
      if (r->contrast >= 0)
        /* Translators: appended to the attribution figure's title: the contrast's id. */
        g_string_append_printf (s, _(" − contrast %d"), (int) r->contrast);
    }
  if (r->scores[SC_ATTR_IG] != NULL)
    {
      g_string_append_printf (s, " · ig %d %s %s", r->steps, sc_attr_rule_id (r->rule),
                              sc_attr_baseline_id (r->baseline));
      if (r->baseline == SC_ATTR_BASELINE_TOKEN)
        g_string_append_printf (s, ":%d", (int) r->baseline_token);
    }
  return g_string_free (g_steal_pointer (&s), FALSE);
}

/* ------------------------------------------------------------------------------------ */
/* `saccade attribute`                                                                   */

static char *
attribution_text (gconstpointer result, ScModel *model, const char *const *labels,
                  const char *db_path, const char *warning)
{
  const SaccadeAttribution *a = result;
  const ScAttrResult *r = a->result;
  g_autofree char *complete = saccade_attribution_completeness (a, FALSE);
  g_autofree char *target_label = saccade_vocab_label (model, r->target);
  g_autofree char *top1_label = saccade_vocab_label (model, r->top1);
  GString *out = g_string_new (NULL);

  if (r->contrast >= 0)
    {
      g_autofree char *contrast_label = saccade_vocab_label (model, r->contrast);
      g_string_append_printf (out, "run %" G_GINT64_FORMAT " (%d tokens), %s: f(x) = logit(target "
                              "%d %s) - logit(contrast %d %s) after tokens 0 .. %d = %.4f, the "
                              "log-probability difference (clean top-1 %d %s)\n",
                              a->base.run.id, a->base.n_tokens, a->base.run.model_name,
                              (int) r->target, target_label, (int) r->contrast, contrast_label,
                              r->position, r->value, (int) r->top1, top1_label);
    }
  else
    g_string_append_printf (out, "run %" G_GINT64_FORMAT " (%d tokens), %s: f(x) = log p(target "
                            "%d %s | tokens 0 .. %d) = %.4f (clean top-1 %d %s)\n",
                            a->base.run.id, a->base.n_tokens, a->base.run.model_name,
                            (int) r->target, target_label, r->position, r->value, (int) r->top1,
                            top1_label);
  saccade_study_face_source_line (out, &a->base, db_path, warning);
  g_string_append_printf (out, "attention: last layer, mean of %d heads, query row %d; "
                          "leave-one-out: TV of the next token with the token masked (%s)\n",
                          a->attention_heads, r->position,
                          r->position != a->base.n_tokens - 1 ? "only at the last position"
                          : a->loo_reused                ? "stored ablate-tokens study"
                                                         : "computed now and stored");

  g_string_append (out, "\n  pos  token              attention  leave-one-out");
  for (int m = 0; m < SC_ATTR_N_METHODS; m++)
    if (r->scores[m] != NULL)
      g_string_append_printf (out, "  %12s", sc_attr_method_id (m));
  g_string_append (out, "\n");
  for (int j = 0; j < a->base.n_tokens; j++)
    {
      g_string_append_printf (out, "  %3d  ", j);
      saccade_format_padded (out, labels[j], 16);
      g_string_append_printf (out, "  %9.4f  %13.5f", a->attention[j], a->loo[j]);
      for (int m = 0; m < SC_ATTR_N_METHODS; m++)
        if (r->scores[m] != NULL)
          g_string_append_printf (out, "  %+12.5f", r->scores[m][j]);
      g_string_append (out, "\n");
    }
  if (complete != NULL)
    {
      g_string_append_printf (out, "\nig: %d points, %s rule, %s baseline", r->steps,
                              sc_attr_rule_id (r->rule), sc_attr_baseline_id (r->baseline));
      if (r->baseline == SC_ATTR_BASELINE_TOKEN)
        g_string_append_printf (out, " (token %d)", (int) r->baseline_token);
      g_string_append_printf (out, "\n%s\n", complete);
    }
  g_string_append_printf (out, "\ntiming: %.2f s in all: attribution %.2f s (%s; %.2f s in "
                          "forward and backward passes), leave-one-out %.2f s (%s), attention "
                          "%.2f s (read from the run)\n", a->base.seconds, a->attr_seconds,
                          a->base.reused ? "read back" : "computed",
                          a->base.reused ? 0.0 : r->forward_backward_s, a->loo_seconds,
                          r->position != a->base.n_tokens - 1 ? "not measured at this position"
                          : a->loo_reused                ? "read back"
                                                         : "computed",
                          MAX (0.0, a->base.seconds - a->attr_seconds - a->loo_seconds));
  return g_string_free (out, FALSE);
}

static void
json_params (JsonBuilder *b, const SaccadeAttribution *a)
{
  const ScAttrResult *r = a->result;

  saccade_json_begin_object (b, "params");
  saccade_json_begin_array (b, "methods");
  for (int m = 0; m < SC_ATTR_N_METHODS; m++)
    if (r->scores[m] != NULL)
      json_builder_add_string_value (b, sc_attr_method_id (m));
  json_builder_end_array (b);
  saccade_json_int (b, "target", a->params.target);
  if (a->params.contrast >= 0)
    saccade_json_int (b, "contrast", a->params.contrast);
  saccade_json_int (b, "position", a->params.position);
  saccade_json_int (b, "steps", r->steps);
  saccade_json_string (b, "rule", sc_attr_rule_id (r->rule));
  saccade_json_string (b, "baseline", sc_attr_baseline_id (r->baseline));
  if (r->baseline == SC_ATTR_BASELINE_TOKEN)
    saccade_json_int (b, "baseline_token", r->baseline_token);
  json_builder_end_object (b);
}

/* Each method's scores, then one object per token with every number of its row. */
static void
json_scores (JsonBuilder *b, const SaccadeAttribution *a, const char *const *labels)
{
  const ScAttrResult *r = a->result;

  saccade_json_begin_object (b, "scores");
  for (int m = 0; m < SC_ATTR_N_METHODS; m++)
    if (r->scores[m] != NULL)
      saccade_json_doubles (b, sc_attr_method_id (m), r->scores[m], (gsize) a->base.n_tokens);
  json_builder_end_object (b);
  saccade_json_begin_array (b, "tokens");
  for (int j = 0; j < a->base.n_tokens; j++)
    {
      json_builder_begin_object (b);
      saccade_json_int (b, "pos", j);
      saccade_json_int (b, "id", a->base.tokens[j].id);
      saccade_json_string (b, "label", labels[j]);
      saccade_json_double (b, "attention", a->attention[j]);
      saccade_json_double (b, "loo", a->loo[j]);
      for (int m = 0; m < SC_ATTR_N_METHODS; m++)
        if (r->scores[m] != NULL)
          saccade_json_double (b, sc_attr_method_id (m), r->scores[m][j]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static void
attribution_json (JsonBuilder *b, gconstpointer result, ScModel *model,
                  const char *const *labels)
{
  const SaccadeAttribution *a = result;
  const ScAttrResult *r = a->result;
  g_autofree char *target_label = saccade_vocab_label (model, r->target);

  json_params (b, a);
  saccade_json_int (b, "n_tokens", a->base.n_tokens);
  saccade_json_int (b, "position", r->position);
  saccade_json_int (b, "target", r->target);
  saccade_json_string (b, "target_label", target_label);
  if (r->contrast >= 0)
    {
      /* "value" is then logit(target) − logit(contrast) */
      g_autofree char *contrast_label = saccade_vocab_label (model, r->contrast);
      saccade_json_int (b, "contrast", r->contrast);
      saccade_json_string (b, "contrast_label", contrast_label);
    }
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
  json_scores (b, a, labels);
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
  saccade_json_double (b, "total_s", a->base.seconds);
  saccade_json_double (b, "attribution_s", a->attr_seconds);
  saccade_json_double (b, "forward_backward_s", a->base.reused ? 0.0 : r->forward_backward_s);
  saccade_json_double (b, "loo_s", a->loo_seconds);
  json_builder_end_object (b);
}

static GBytes *
attribution_csv (gconstpointer result, const char *const *labels)
{
  return saccade_attribution_csv (result, labels);
}

static char *
attribution_note (gconstpointer result)
{
  return saccade_attribution_completeness (result, TRUE);
}

/* The title names the target with @model's label of it (its id alone without a model). */
static char *
attribution_title (gconstpointer result, ScModel *model)
{
  const SaccadeAttribution *a = result;
  g_autofree char *target = NULL, *contrast = NULL;

  if (model != NULL)
    target = saccade_vocab_label (model, a->result->target);
  if (model != NULL && a->result->contrast >= 0)
    contrast = saccade_vocab_label (model, a->result->contrast);
  return saccade_attribution_title (a, target, contrast);
}

static gboolean
attribution_export (gconstpointer result, ScModel *model, const char *const *labels,
                    gboolean translated, const char *path,
                    const SaccadeFigureExportOptions *opts, GError **error)
{
  g_autofree char *title = attribution_title (result, model);
  g_autofree char *caption = saccade_attribution_completeness (result, translated);
  SaccadeAttrRow rows[SACCADE_ATTRIBUTION_N_ROWS];
  SaccadeAttributionFigure fig;

  saccade_attribution_figure (result, labels, title, rows, &fig);
  fig.caption = caption;
  return saccade_figure_export_attribution (&fig, path, opts, error);
}

const SaccadeFaceOutputs saccade_attribution_outputs = {
  .face = &saccade_attribution_face,
  .json = attribution_json,
  .text = attribution_text,
  .csv = attribution_csv,
  .csv_row = "token",
  .note = attribution_note,
  .title = attribution_title,
  .export_figure = attribution_export,
};
