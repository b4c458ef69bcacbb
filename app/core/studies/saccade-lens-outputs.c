/* saccade-lens-outputs.c — the logit lens's outputs (engine/study/sc-lens-study.h): each
 * layer's ln p, rank and top-1 of the target (and the logit difference with a contrast) in
 * JSON, and a table with a bar of p for a terminal. */
#include "app/core/studies/saccade-study-outputs.h"

#include <math.h>

#include "app/core/saccade-json.h"
#include "engine/study/sc-lens-study.h"

static void
lens_json (JsonBuilder *b, const SaccadeStudy *s, const ScStoreToken *tokens,
           const char *const *labels)
{
  const ScLensResult *r = s->result;

  (void) tokens, (void) labels;
  saccade_json_int (b, "contrast", r->contrast);
  /* entry l is the residual entering layer l; the last (n_layers) the model's output */
  saccade_json_begin_array (b, "lens");
  for (int l = 0; l <= r->n_layers; l++)
    {
      json_builder_begin_object (b);
      saccade_json_int (b, "layer", l);
      saccade_json_double (b, "logp", r->logp[l]);
      saccade_json_int (b, "rank", r->rank[l]);
      saccade_json_int (b, "top1", r->top1[l]);
      if (r->contrast >= 0)
        saccade_json_double (b, "m", r->m[l]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static void
lens_text (GString *out, const SaccadeStudy *s, const char *const *labels, int top)
{
  const ScLensResult *r = s->result;

  (void) labels, (void) top;
  g_string_append_printf (out, "\nlogit lens at the last position: the residual entering "
                               "each layer through the final norm and the unembedding\n"
                               "(row %d is the model's own output)\n", r->n_layers);
  g_string_append_printf (out, "  layer   ln p(%d)       p        rank    top-1%s\n",
                          r->target, r->contrast >= 0 ? "   logit(A) - logit(B)" : "");
  for (int l = 0; l <= r->n_layers; l++)
    {
      const double p = exp (r->logp[l]);
      const int bar = isfinite (p) ? (int) lround (20 * p) : 0;
      g_string_append_printf (out, "  %5d  %9.3f  %9.3g  %8d  %7d", l, r->logp[l], p,
                              r->rank[l], r->top1[l]);
      if (r->contrast >= 0)
        g_string_append_printf (out, "  %+10.4f", r->m[l]);
      g_string_append_printf (out, "%s%.*s\n", bar > 0 ? "  " : "", bar,
                              "####################");
    }
}

const SaccadeStudyOutputs saccade_lens_outputs = {
  .kind = &sc_study_kind_lens,
  .json = lens_json,
  .text = lens_text,
};
