/* saccade-study-outputs.c — the table of outputs files and what every study's JSON and text
 * share (saccade-study-outputs.h). */
#define G_LOG_DOMAIN "saccade-study"

#include "app/core/studies/saccade-study-outputs.h"

#include <math.h>

#include "app/core/saccade-format.h"
#include "app/core/saccade-json.h"

static const SaccadeStudyOutputs *const OUTPUTS[] = {
  &saccade_heads_outputs,
  &saccade_heads_mean_outputs,
  &saccade_heads_first_outputs,
  &saccade_heads_first_mean_outputs,
  &saccade_layers_outputs,
  &saccade_tokens_outputs,
  &saccade_permute_outputs,
  &saccade_erasure_outputs,
  &saccade_patch_outputs,
  &saccade_patch_attribution_outputs,
  &saccade_path_patch_outputs,
  &saccade_lens_outputs,
  &saccade_qk_outputs,
  &saccade_norms_outputs,
  &saccade_mixing_outputs,
  NULL,
};

const SaccadeStudyOutputs *
saccade_study_outputs_find (const ScStudyKind *kind)
{
  for (size_t i = 0; OUTPUTS[i] != NULL; i++)
    if (OUTPUTS[i]->kind == kind)
      return OUTPUTS[i];
  return NULL;
}

void
saccade_study_face_source_line (GString *out, const SaccadeStudyFaceBase *base,
                                const char *db_path, const char *warning)
{
  if (base->reused)
    g_string_append_printf (out, "reused study %" G_GINT64_FORMAT " from %s\n", base->study_id,
                            db_path);
  else if (base->study_id > 0)
    g_string_append_printf (out, "computed now, stored as study %" G_GINT64_FORMAT " in %s\n",
                            base->study_id, db_path);
  else
    g_string_append_printf (out, "computed now (not stored: %s)\n",
                            warning != NULL ? warning : "no store");
}

void
saccade_study_json_head (JsonBuilder *b, gint64 run_id, const char *model, const char *kind_id,
                         gboolean reused, gint64 study_id)
{
  saccade_json_int (b, "run", run_id);
  saccade_json_string (b, "model", model);
  saccade_json_string (b, "study", kind_id);
  saccade_json_string (b, "source", reused ? "reused" : "computed");
  saccade_json_int (b, "study_id", study_id);
}

JsonBuilder *
saccade_face_outputs_json (const SaccadeFaceOutputs *o, gconstpointer result, ScModel *model,
                           const char *const *labels)
{
  const SaccadeStudyFaceBase *base = result; /* a face's result starts with it */
  JsonBuilder *b = json_builder_new ();

  json_builder_begin_object (b);
  saccade_study_json_head (b, base->run.id, base->run.model_name, o->face->kind->id,
                           base->reused, base->study_id);
  o->json (b, result, model, labels);
  json_builder_end_object (b);
  return b;
}

void
saccade_study_json_effect (JsonBuilder *b, const ScAblationEffect *e)
{
  saccade_json_double (b, "delta_logp", e->next.delta_logp);
  saccade_json_double (b, "tv", e->next.tv);
  saccade_json_double (b, "jsd", e->next.jsd);
  saccade_json_double (b, "delta_loss", e->delta_loss);
  saccade_json_bool (b, "flip", e->flipped);
  saccade_json_int (b, "top1", e->next.top1_ablated);
  if (!isnan (e->delta_logit_diff)) /* with a contrast only */
    saccade_json_double (b, "delta_logit_diff", e->delta_logit_diff);
}

/* A kind with no outputs file: every number its stored form holds. */
static void
json_stored (JsonBuilder *b, const ScStoreStudyData *d)
{
  if (d == NULL)
    return;
  saccade_json_string (b, "params", d->params);
  saccade_json_begin_array (b, "head_values");
  for (size_t i = 0; i < d->n_head_values; i++)
    {
      json_builder_begin_object (b);
      saccade_json_head (b, d->heads[i].layer, d->heads[i].head);
      saccade_json_string (b, "metric", d->heads[i].metric);
      saccade_json_double (b, "value", d->heads[i].value);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  saccade_json_begin_array (b, "series_values");
  for (size_t i = 0; i < d->n_series_values; i++)
    {
      json_builder_begin_object (b);
      saccade_json_string (b, "series", d->series[i].series);
      saccade_json_int (b, "pos", d->series[i].pos);
      saccade_json_double (b, "value", d->series[i].value);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

JsonBuilder *
saccade_study_outputs_json (const SaccadeStudy *s, const ScStoreRunInfo *run,
                            const ScStoreToken *tokens, const char *const *labels,
                            const ScStoreStudyData *stored)
{
  const SaccadeStudyOutputs *o = saccade_study_outputs_find (s->kind);
  JsonBuilder *b = json_builder_new ();
  ScStudyClean c = SC_STUDY_CLEAN_INIT;

  s->kind->result_clean (s->result, &c);
  json_builder_begin_object (b);
  saccade_study_json_head (b, s->run_id, run->model_name, s->kind->id, s->reused,
                           s->study_id);
  saccade_json_double (b, "seconds", s->reused ? NAN : s->seconds);
  saccade_json_int (b, "n_tokens", s->n_tokens);
  saccade_json_int (b, "target", c.target);
  saccade_json_int (b, "top1_clean", c.top1_clean);
  saccade_json_double (b, "logp_clean", c.logp_clean);
  saccade_json_double (b, "loss_clean", c.loss_clean);
  if (c.contrast >= 0)
    {
      /* each effect's "delta_logit_diff" is then Δ (logit(target) − logit(contrast)) */
      saccade_json_int (b, "contrast", c.contrast);
      saccade_json_double (b, "logit_diff_clean", c.logit_diff_clean);
    }
  saccade_json_begin_array (b, "tokens");
  for (int i = 0; i < s->n_tokens; i++)
    {
      json_builder_begin_object (b);
      saccade_json_int (b, "pos", i);
      saccade_json_int (b, "id", tokens[i].id);
      saccade_json_string (b, "label", labels[i]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  if (o != NULL)
    o->json (b, s, tokens, labels);
  else
    json_stored (b, stored);
  json_builder_end_object (b);
  return b;
}

/* " ␣Mary" after an id, or nothing without a model. Caller frees. */
static char *
vocab_suffix (ScModel *model, int id)
{
  g_autofree char *label = model != NULL ? saccade_vocab_label (model, id) : NULL;

  return label != NULL ? g_strconcat (" ", label, NULL) : g_strdup ("");
}

char *
saccade_study_outputs_text (const SaccadeStudy *s, ScModel *model, const ScStoreRunInfo *run,
                            const char *const *labels, const ScStoreStudyData *stored,
                            const char *db_path, const char *warning, int top)
{
  const SaccadeStudyOutputs *o = saccade_study_outputs_find (s->kind);
  GString *out = g_string_new (NULL);
  ScStudyClean c = SC_STUDY_CLEAN_INIT;

  s->kind->result_clean (s->result, &c);
  g_autofree char *target = vocab_suffix (model, c.target);
  g_autofree char *top1 = vocab_suffix (model, c.top1_clean);
  g_string_append_printf (out, "run %" G_GINT64_FORMAT " (%d tokens), %s: ", s->run_id,
                          s->n_tokens, run->model_name);
  if (c.target < 0)
    g_string_append (out, s->kind->title);
  else if (isfinite (c.logp_clean))
    g_string_append_printf (out, "target %d%s at the last position (ln p = %.4f, clean top-1 "
                            "%d%s)", c.target, target, c.logp_clean, c.top1_clean, top1);
  else
    g_string_append_printf (out, "target %d%s at the last position (clean top-1 %d%s)",
                            c.target, target, c.top1_clean, top1);
  if (isfinite (c.loss_clean))
    g_string_append_printf (out, ", mean loss %.4f nats", c.loss_clean);
  g_string_append_c (out, '\n');
  if (c.contrast >= 0)
    {
      g_autofree char *contrast = vocab_suffix (model, c.contrast);
      g_string_append_printf (out, "against contrast %d%s: logit(target) - logit(contrast) = "
                              "%.4f in the clean run (the log-probability difference)\n",
                              c.contrast, contrast, c.logit_diff_clean);
    }
  if (s->reused)
    g_string_append_printf (out, "reused study %" G_GINT64_FORMAT " from %s (--recompute to "
                            "compute again)\n", s->study_id, db_path);
  else if (s->study_id > 0)
    g_string_append_printf (out, "computed now in %.1f s, stored as study %" G_GINT64_FORMAT
                            " in %s\n", s->seconds, s->study_id, db_path);
  else
    g_string_append_printf (out, "computed now in %.1f s (not stored: %s)\n", s->seconds,
                            warning != NULL ? warning : "no store");
  if (o != NULL)
    o->text (out, s, labels, top);
  else if (stored != NULL)
    g_string_append_printf (out, "%s: %zu head values and %zu series values stored (--json "
                            "prints them)\n", s->kind->title, stored->n_head_values,
                            stored->n_series_values);
  return g_string_free (out, FALSE);
}

void
saccade_study_json_map (JsonBuilder *b, const float *map, int n)
{
  json_builder_begin_array (b);
  for (int i = 0; i < n; i++)
    {
      json_builder_begin_array (b);
      for (int j = 0; j < n; j++)
        saccade_json_add_double (b, map[(gsize) i * n + j]);
      json_builder_end_array (b);
    }
  json_builder_end_array (b);
}

void
saccade_study_text_triangle (GString *out, const float *map, int n, const char *const *labels,
                             int width)
{
  for (int i = 0; i < n; i++)
    {
      g_string_append_printf (out, "  %3d ", i);
      saccade_format_padded (out, labels != NULL ? labels[i] : "", 12);
      for (int j = 0; j <= i; j++)
        g_string_append_printf (out, " %*.3f", width, map[(gsize) i * n + j]);
      g_string_append_c (out, '\n');
    }
}
