/* saccade-first-outputs.c — the outputs of the head sweep with a first-order first pass
 * (engine/study/sc-ablation-first.h): every head's estimate, the exact effects of the top K,
 * Spearman's ρ between the two over those K and the time each part took; the same for
 * `saccade ablate --heads --first-pass` and `saccade study heads-first` (docs/metrics.md,
 * "Head sweep with a first pass"). */
#include "app/core/studies/saccade-study-outputs.h"

#include <math.h>

#include "app/core/saccade-ablation.h"
#include "app/core/saccade-format.h"
#include "app/core/saccade-head-means.h"
#include "app/core/saccade-json.h"
#include "engine/study/sc-ablation-first.h"

/* The name of the measure the estimate is of. */
static const char *
measure_name (const ScHeadFirstResult *r, gboolean json)
{
  if (r->sweep->contrast >= 0)
    return json ? "delta_logit_diff" : "Δ logit diff";
  return json ? "delta_logp" : "Δ log p";
}

static void
first_json_of (JsonBuilder *b, const SaccadeStudy *s, gboolean mean)
{
  const ScHeadFirstResult *r = s->result;
  const ScHeadSweepResult *h = r->sweep;

  saccade_json_string (b, "mode", mean ? "mean" : "zero");
  if (mean)
    saccade_json_string (b, "means", SACCADE_REFERENCE_SET);
  saccade_json_string (b, "first_pass", "gradient");
  saccade_json_string (b, "estimate_of", measure_name (r, TRUE));
  saccade_json_int (b, "exact_heads", r->n_exact);
  saccade_json_double (b, "spearman_rho", r->rho);
  saccade_json_double (b, "first_pass_s", r->first_s);
  saccade_json_double (b, "exact_s", r->exact_s);
  saccade_json_begin_array (b, "heads"); /* layer-major */
  for (int i = 0; i < h->n_layers * h->n_heads; i++)
    {
      json_builder_begin_object (b);
      saccade_json_head (b, i / h->n_heads, i % h->n_heads);
      saccade_json_double (b, "estimate", r->estimate[i]);
      saccade_json_bool (b, "exact", r->exact[i]);
      if (r->exact[i])
        {
          saccade_study_json_effect (b, &h->heads[i]);
          if (h->contrast >= 0)
            saccade_json_double (b, "delta_logit_diff", h->heads[i].delta_logit_diff);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static void
first_json (JsonBuilder *b, const SaccadeStudy *s, const ScStoreToken *tokens,
            const char *const *labels)
{
  (void) tokens, (void) labels;
  first_json_of (b, s, FALSE);
}

static void
first_mean_json (JsonBuilder *b, const SaccadeStudy *s, const ScStoreToken *tokens,
                 const char *const *labels)
{
  (void) tokens, (void) labels;
  first_json_of (b, s, TRUE);
}

static void
first_table (GString *out, const ScHeadFirstResult *r, gboolean mean, int top_n)
{
  const ScHeadSweepResult *h = r->sweep;
  const int n = h->n_layers * h->n_heads, top = MIN (top_n, n);
  const gboolean contrast = h->contrast >= 0;
  g_autofree double *key = g_new (double, n);
  g_autofree int *order = g_new (int, n);

  for (int i = 0; i < n; i++)
    {
      key[i] = fabs (r->estimate[i]);
      order[i] = i;
    }
  saccade_rank_by_key (order, n, key);
  g_string_append_printf (out, "\nfirst pass: each head's %s under %s-ablation estimated to "
                          "first order (one taped run and one backward, %.3f s)%s%s;\n"
                          "the top %d by |estimate| %s-ablated exactly (%.3f s)\n",
                          measure_name (r, FALSE), mean ? "mean" : "zero", r->first_s,
                          mean ? ", means of " : "", mean ? SACCADE_REFERENCE_SET : "",
                          r->n_exact, mean ? "mean" : "zero", r->exact_s);
  if (isnan (r->rho))
    g_string_append (out, "Spearman ρ (estimate, exact) over those heads: undefined\n");
  else
    g_string_append_printf (out, "Spearman ρ (estimate, exact) over those %d heads: %.3f\n",
                            r->n_exact, r->rho);
  g_string_append_printf (out, "the top %d by |estimate| (rows without numbers: estimate "
                          "only, not ablated):\n", top);
  g_string_append_printf (out, "  rank  head      estimate   Δ log p      TV       JSD      "
                          "Δ loss     flip%s\n",
                          contrast ? "  Δ logit diff" : "");
  for (int k = 0; k < top; k++)
    {
      const int i = order[k];
      const ScAblationEffect *e = &h->heads[i];
      char name[SACCADE_HEAD_NAME_MAX];
      g_string_append_printf (out, "  %4d  %-6s  %+10.4f", k + 1,
                              saccade_head_name (name, i / h->n_heads, i % h->n_heads),
                              r->estimate[i]);
      if (!r->exact[i])
        {
          g_string_append (out, "  (estimate only)\n");
          continue;
        }
      g_string_append_printf (out, "  %+10.4f  %7.4f  %7.4f  %+10.4f  %-4s", e->next.delta_logp,
                              e->next.tv, e->next.jsd, e->delta_loss, e->flipped ? "yes" : "no");
      if (contrast)
        g_string_append_printf (out, "  %+10.4f", e->delta_logit_diff);
      g_string_append_c (out, '\n');
    }
}

static void
first_text (GString *out, const SaccadeStudy *s, const char *const *labels, int top)
{
  (void) labels;
  first_table (out, s->result, FALSE, top);
}

static void
first_mean_text (GString *out, const SaccadeStudy *s, const char *const *labels, int top)
{
  (void) labels;
  first_table (out, s->result, TRUE, top);
}

const SaccadeStudyOutputs saccade_heads_first_outputs = {
  .kind = &sc_study_kind_heads_first, .json = first_json, .text = first_text,
};

const SaccadeStudyOutputs saccade_heads_first_mean_outputs = {
  .kind = &sc_study_kind_heads_first_mean, .json = first_mean_json, .text = first_mean_text,
};
