/* saccade-layers-outputs.c — the layer sweep's outputs (engine/study/sc-layer-study.h): per
 * layer its effect in JSON, and a table with a bar of |Δ log p| for a terminal. */
#include "app/core/studies/saccade-study-outputs.h"

#include <math.h>

#include "app/core/saccade-json.h"
#include "engine/study/sc-layer-study.h"

static void
layers_json (JsonBuilder *b, const SaccadeStudy *s, const ScStoreToken *tokens,
             const char *const *labels)
{
  const ScLayerSweepResult *r = s->result;

  (void) tokens, (void) labels;
  if (r->contrast >= 0)
    {
      saccade_json_int (b, "contrast", r->contrast);
      saccade_json_double (b, "logit_diff_clean", r->logit_diff_clean);
    }
  saccade_json_begin_array (b, "layers");
  for (int l = 0; l < r->n_layers; l++)
    {
      json_builder_begin_object (b);
      saccade_json_int (b, "layer", l);
      saccade_study_json_effect (b, &r->layers[l]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

/* Every layer in order (there are few), a bar of |Δ log p| against the largest. */
static void
layers_text (GString *out, const SaccadeStudy *s, const char *const *labels, int top)
{
  const ScLayerSweepResult *r = s->result;
  double most = 0;

  (void) labels, (void) top;
  for (int l = 0; l < r->n_layers; l++)
    if (isfinite (r->layers[l].next.delta_logp))
      most = MAX (most, fabs (r->layers[l].next.delta_logp));
  g_string_append (out, "\nzero-ablating each layer's attention (every head) in turn:\n"
                        "  layer     Δ log p      TV       JSD      Δ loss     flip\n");
  for (int l = 0; l < r->n_layers; l++)
    {
      const ScAblationEffect *e = &r->layers[l];
      const int bar = most > 0 && isfinite (e->next.delta_logp)
                        ? (int) lround (20 * fabs (e->next.delta_logp) / most) : 0;
      g_string_append_printf (out, "  %5d  %+10.4f  %7.4f  %7.4f  %+10.4f  %-4s %.*s\n", l,
                              e->next.delta_logp, e->next.tv, e->next.jsd, e->delta_loss,
                              e->flipped ? "yes" : "no", bar, "####################");
    }
}

const SaccadeStudyOutputs saccade_layers_outputs = {
  .kind = &sc_study_kind_layers,
  .json = layers_json,
  .text = layers_text,
};
