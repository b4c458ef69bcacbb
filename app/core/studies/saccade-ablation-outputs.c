/* saccade-ablation-outputs.c — the outputs of the ablation studies of a run (the head sweeps,
 * token leave-one-out, attention permutation, erasure curves: engine/study/
 * sc-ablation-study.h, sc-permutation-study.h, sc-erasure-study.h): their JSON members and
 * their text tables, the same for `saccade ablate` and `saccade study` (the columns are
 * described in docs/metrics.md, "Ablation studies"). */
#include "app/core/studies/saccade-study-outputs.h"

#include <math.h>

#include "app/core/saccade-ablation.h"
#include "app/core/saccade-format.h"
#include "app/core/saccade-head-means.h"
#include "app/core/saccade-json.h"
#include "engine/study/sc-ablation-study.h"
#include "engine/study/sc-erasure-study.h"
#include "engine/study/sc-permutation-study.h"

/* 0 .. @n − 1 ranked by @key (saccade_rank_by_key). Caller frees. */
static int *
rank_by (const double *key, int n)
{
  int *order = g_new (int, n);

  for (int i = 0; i < n; i++)
    order[i] = i;
  saccade_rank_by_key (order, n, key);
  return order;
}

/* One effect's columns; with a contrast a last one, Δ (logit(target) − logit(contrast)). */
static void
effect_row (GString *out, const ScAblationEffect *e, gboolean contrast)
{
  if (!contrast)
    {
      g_string_append_printf (out, "  %+10.4f  %7.4f  %7.4f  %+10.4f  %s\n", e->next.delta_logp,
                              e->next.tv, e->next.jsd, e->delta_loss, e->flipped ? "yes" : "no");
      return;
    }
  g_string_append_printf (out, "  %+10.4f  %7.4f  %7.4f  %+10.4f  %-4s  %+10.4f\n",
                          e->next.delta_logp, e->next.tv, e->next.jsd, e->delta_loss,
                          e->flipped ? "yes" : "no", e->delta_logit_diff);
}

#define EFFECT_HEADER "   Δ log p      TV       JSD      Δ loss     flip"
#define CONTRAST_HEADER "  Δ logit diff"

/* ------------------------------------------------------------------------------------ */
/* Head sweeps                                                                           */

static void
heads_json_of (JsonBuilder *b, const SaccadeStudy *s, gboolean mean)
{
  const ScHeadSweepResult *h = s->result;

  saccade_json_string (b, "mode", mean ? "mean" : "zero");
  if (mean)
    saccade_json_string (b, "means", SACCADE_REFERENCE_SET);
  saccade_json_begin_array (b, "heads"); /* layer-major */
  for (int i = 0; i < h->n_layers * h->n_heads; i++)
    {
      json_builder_begin_object (b);
      saccade_json_head (b, i / h->n_heads, i % h->n_heads);
      saccade_study_json_effect (b, &h->heads[i]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static void
heads_json (JsonBuilder *b, const SaccadeStudy *s, const ScStoreToken *tokens,
            const char *const *labels)
{
  (void) tokens, (void) labels;
  heads_json_of (b, s, FALSE);
}

static void
heads_mean_json (JsonBuilder *b, const SaccadeStudy *s, const ScStoreToken *tokens,
                 const char *const *labels)
{
  (void) tokens, (void) labels;
  heads_json_of (b, s, TRUE);
}

static void
heads_table (GString *out, const ScHeadSweepResult *h, gboolean mean, int top_n)
{
  const int n = h->n_layers * h->n_heads, top = MIN (top_n, n);
  g_autofree double *key = g_new (double, n);
  g_autofree int *order = NULL;

  const gboolean contrast = h->contrast >= 0;
  const char *by = contrast ? "|Δ logit diff|" : "|Δ log p|";

  /* with a contrast the heads are ranked by what it measures */
  for (int i = 0; i < n; i++)
    key[i] = fabs (contrast ? h->heads[i].delta_logit_diff : h->heads[i].next.delta_logp);
  order = rank_by (key, n);
  if (mean)
    g_string_append_printf (out, "\nmean-ablating one head at a time (means of %s), the top %d "
                            "by %s:\n", SACCADE_REFERENCE_SET, top, by);
  else
    g_string_append_printf (out, "\nzero-ablating one head at a time, the top %d by %s:\n",
                            top, by);
  g_string_append_printf (out, "  rank  head  " EFFECT_HEADER "%s\n",
                          contrast ? CONTRAST_HEADER : "");
  for (int k = 0; k < top; k++)
    {
      char name[SACCADE_HEAD_NAME_MAX];
      g_string_append_printf (out, "  %4d  %-6s", k + 1,
                              saccade_head_name (name, order[k] / h->n_heads,
                                                 order[k] % h->n_heads));
      effect_row (out, &h->heads[order[k]], contrast);
    }
}

static void
heads_text (GString *out, const SaccadeStudy *s, const char *const *labels, int top)
{
  (void) labels;
  heads_table (out, s->result, FALSE, top);
}

static void
heads_mean_text (GString *out, const SaccadeStudy *s, const char *const *labels, int top)
{
  (void) labels;
  heads_table (out, s->result, TRUE, top);
}

const SaccadeStudyOutputs saccade_heads_outputs = {
  .kind = &sc_study_kind_heads, .json = heads_json, .text = heads_text,
};

const SaccadeStudyOutputs saccade_heads_mean_outputs = {
  .kind = &sc_study_kind_heads_mean, .json = heads_mean_json, .text = heads_mean_text,
};

/* Label @i of the run's (s->n_tokens) labels; "?" past them. The loader refuses a study of
 * another length than its run (saccade-study.h), but a printer trusts no count it did not
 * make: a study's own count once indexed the labels past their end (issue 25). */
static const char *
label_at (const SaccadeStudy *s, const char *const *labels, int i)
{
  return i >= 0 && i < s->n_tokens ? labels[i] : "?";
}

/* ------------------------------------------------------------------------------------ */
/* Token leave-one-out                                                                   */

static void
tokens_json (JsonBuilder *b, const SaccadeStudy *s, const ScStoreToken *tokens,
             const char *const *labels)
{
  const ScTokenLooResult *t = s->result;

  for (int kind = 0; kind < 2; kind++)
    {
      const ScAblationEffect *e = kind == 0 ? t->mask : t->drop;
      saccade_json_begin_array (b, kind == 0 ? "mask" : "drop");
      for (int i = 0; i < MIN (t->n_tokens, s->n_tokens) - 1; i++) /* the query is never erased */
        {
          json_builder_begin_object (b);
          saccade_json_int (b, "pos", i);
          saccade_json_int (b, "id", tokens[i].id);
          saccade_json_string (b, "label", labels[i]);
          saccade_study_json_effect (b, &e[i]);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
    }
}

static void
tokens_text (GString *out, const SaccadeStudy *s, const char *const *labels, int top)
{
  const ScTokenLooResult *t = s->result;

  (void) top;
  for (int kind = 0; kind < 2; kind++)
    {
      g_string_append (out, kind == 0 ? "\nmasking one token out of every attention row:\n"
                                      : "\ndropping one token from the input:\n");
      g_string_append_printf (out, "  pos  token             " EFFECT_HEADER "%s\n",
                              t->contrast >= 0 ? CONTRAST_HEADER : "");
      for (int j = 0; j < t->n_tokens - 1; j++)
        {
          g_string_append_printf (out, "  %3d  ", j);
          saccade_format_padded (out, label_at (s, labels, j), 16);
          effect_row (out, kind == 0 ? &t->mask[j] : &t->drop[j], t->contrast >= 0);
        }
    }
  g_string_append_printf (out, "  (the last token, %s, is the query and is never erased)\n",
                          label_at (s, labels, t->n_tokens - 1));
}

const SaccadeStudyOutputs saccade_tokens_outputs = {
  .kind = &sc_study_kind_tokens, .json = tokens_json, .text = tokens_text,
};

/* ------------------------------------------------------------------------------------ */
/* Attention permutation                                                                 */

static void
json_spread (JsonBuilder *b, const char *name, const ScSpread *s)
{
  saccade_json_begin_object (b, name);
  saccade_json_double (b, "min", s->min);
  saccade_json_double (b, "q25", s->q25);
  saccade_json_double (b, "median", s->median);
  saccade_json_double (b, "q75", s->q75);
  saccade_json_double (b, "max", s->max);
  json_builder_end_object (b);
}

static void
permute_json (JsonBuilder *b, const SaccadeStudy *s, const ScStoreToken *tokens,
              const char *const *labels)
{
  const ScPermutationResult *p = s->result;

  (void) tokens, (void) labels;
  saccade_json_int (b, "permutations", p->n_permutations);
  /* A string: a 64-bit seed does not survive a JSON number read as a double. */
  {
    char seed[24];
    g_snprintf (seed, sizeof seed, "%" G_GUINT64_FORMAT, (guint64) p->seed);
    saccade_json_string (b, "seed", seed);
  }
  saccade_json_string (b, "quantiles", "type 7 (linear interpolation between order statistics)");
  saccade_json_begin_array (b, "heads"); /* layer-major */
  for (int i = 0; i < p->n_studied; i++)
    {
      const ScPermutationHead *h = &p->heads[i];
      json_builder_begin_object (b);
      saccade_json_head (b, h->layer, h->head);
      json_spread (b, "tv", &h->tv);
      json_spread (b, "jsd", &h->jsd);
      json_spread (b, "delta_logp", &h->delta_logp);
      json_spread (b, "delta_loss", &h->delta_loss);
      saccade_json_double (b, "flip_share", h->flip_share);
      saccade_json_begin_array (b, "each");
      for (int k = 0; k < p->n_permutations; k++)
        {
          json_builder_begin_object (b);
          saccade_json_int (b, "k", k);
          {
            char seed[24];
            g_snprintf (seed, sizeof seed, "%" G_GUINT64_FORMAT,
                        (guint64) sc_permutation_seed (p->seed, k));
            saccade_json_string (b, "seed", seed);
          }
          saccade_study_json_effect (b, &p->effects[(gsize) i * p->n_permutations + k]);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static void
permute_text (GString *out, const SaccadeStudy *s, const char *const *labels, int top_n)
{
  const ScPermutationResult *p = s->result;
  const int top = MIN (top_n, p->n_studied);
  g_autofree double *key = g_new (double, p->n_studied);
  g_autofree int *order = NULL;

  (void) labels;
  for (int i = 0; i < p->n_studied; i++)
    key[i] = p->heads[i].tv.median;
  order = rank_by (key, p->n_studied);
  g_string_append_printf (out, "\npermuting one head's attention rows, %d permutation%s per "
                          "head (seed %" G_GUINT64_FORMAT "), the top %d of %d heads by median "
                          "TV:\n", p->n_permutations, p->n_permutations == 1 ? "" : "s",
                          (guint64) p->seed, top, p->n_studied);
  g_string_append (out, "  rank  head    TV median [q25, q75]      JSD median   Δ log p median "
                        "[min, max]        flips\n");
  for (int k = 0; k < top; k++)
    {
      const ScPermutationHead *h = &p->heads[order[k]];
      char name[SACCADE_HEAD_NAME_MAX];
      g_string_append_printf (out, "  %4d  %-6s  %7.4f [%6.4f, %6.4f]  %10.4f   %+8.4f "
                              "[%+8.4f, %+8.4f]  %5.1f%%\n", k + 1,
                              saccade_head_name (name, h->layer, h->head),
                              h->tv.median, h->tv.q25, h->tv.q75, h->jsd.median,
                              h->delta_logp.median, h->delta_logp.min, h->delta_logp.max,
                              100.0 * h->flip_share);
    }
  g_string_append (out, "  (quantiles: linear interpolation between order statistics, type 7)\n");
}

const SaccadeStudyOutputs saccade_permute_outputs = {
  .kind = &sc_study_kind_permute, .json = permute_json, .text = permute_text,
};

/* ------------------------------------------------------------------------------------ */
/* Erasure curves                                                                        */

static void
erasure_json (JsonBuilder *b, const SaccadeStudy *s, const ScStoreToken *tokens,
              const char *const *labels)
{
  const ScErasureResult *e = s->result;
  bool never = false;
  double med = sc_erasure_random_median (e, &never);

  (void) tokens, (void) labels;

  saccade_json_string (b, "kind", e->kind == SC_ERASE_DROP ? "drop" : "mask");
  saccade_json_int (b, "seeds", e->n_random);
  {
    char seed[24];
    g_snprintf (seed, sizeof seed, "%" G_GUINT64_FORMAT, (guint64) e->seed);
    saccade_json_string (b, "seed", seed);
  }
  saccade_json_double (b, "random_median_fraction", med);
  saccade_json_bool (b, "random_median_never", never);
  saccade_json_begin_array (b, "orderings");
  for (int c = 0; c < e->n_curves; c++)
    {
      const ScErasureCurve *cv = &e->curves[c];
      json_builder_begin_object (b);
      saccade_json_string (b, "ordering", sc_erase_ordering_name (cv->ordering));
      if (cv->seed_index >= 0)
        saccade_json_int (b, "seed_index", cv->seed_index);
      saccade_json_bool (b, "never_flips", cv->never_flips);
      if (cv->never_flips)
        {
          json_builder_set_member_name (b, "flip_k");
          json_builder_add_null_value (b);
        }
      else
        saccade_json_int (b, "flip_k", cv->flip_k);
      saccade_json_double (b, "fraction", cv->fraction);
      saccade_json_begin_array (b, "order");
      for (int k = 0; k < e->n_tokens - 1; k++)
        json_builder_add_int_value (b, cv->order[k]);
      json_builder_end_array (b);
      saccade_json_begin_array (b, "curve");
      for (int k = 0; k < e->n_tokens; k++)
        {
          json_builder_begin_object (b);
          saccade_json_int (b, "k", k);
          saccade_json_double (b, "fraction_removed", (double) k / (e->n_tokens - 1));
          saccade_json_double (b, "p_target", cv->p_target[k]);
          saccade_json_double (b, "tv", cv->tv[k]);
          saccade_json_int (b, "top1", cv->top1[k]);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static const char *
curve_name (const ScErasureCurve *cv, char buf[32])
{
  if (cv->ordering == SC_ERASE_ORDER_RANDOM)
    g_snprintf (buf, 32, "random #%d", cv->seed_index);
  else
    g_strlcpy (buf, sc_erase_ordering_name (cv->ordering), 32);
  return buf;
}

static void
erasure_text (GString *out, const SaccadeStudy *s, const char *const *labels, int top)
{
  const ScErasureResult *e = s->result;
  const int m = e->n_tokens - 1;
  bool never = false;
  double med;
  char name[32];

  (void) top;
  g_string_append_printf (out, "\nerasing tokens one after another (%s) until the top-1 flips; "
                          "%d erasable tokens (the query %s is never erased):\n",
                          e->kind == SC_ERASE_DROP ? "dropped" : "masked", m,
                          label_at (s, labels, e->n_tokens - 1));
  g_string_append (out, "  ordering          flips after   fraction   p(target) at the flip   "
                        "erased first\n");
  for (int c = 0; c < e->n_curves; c++)
    {
      const ScErasureCurve *cv = &e->curves[c];
      g_string_append (out, "  ");
      saccade_format_padded (out, curve_name (cv, name), 16);
      if (cv->never_flips)
        g_string_append (out, "  never           —          —                     ");
      else
        g_string_append_printf (out, "  %3d of %-3d    %6.3f     %8.4f              ", cv->flip_k,
                                m, cv->fraction, cv->p_target[cv->flip_k]);
      for (int k = 0; k < MIN (4, m); k++)
        g_string_append_printf (out, "%s%s", k > 0 ? " " : "", label_at (s, labels, cv->order[k]));
      g_string_append_printf (out, "%s\n", m > 4 ? " …" : "");
    }
  if (e->n_random > 0)
    {
      med = sc_erasure_random_median (e, &never);
      if (never)
        g_string_append_printf (out, "  median of the %d random orderings: never\n", e->n_random);
      else
        g_string_append_printf (out, "  median of the %d random orderings: %.3f\n",
                                e->n_random, med);
    }
}

void
saccade_erasure_figure (const ScErasureResult *r, const char *const *names, const char *title,
                        SaccadeErasureSeries *series, SaccadeErasureFigure *f)
{
  bool never = false;

  for (int c = 0; c < r->n_curves; c++)
    {
      const ScErasureCurve *cv = &r->curves[c];
      series[c] = (SaccadeErasureSeries) {
        .name = names[c], .p_target = cv->p_target, .fraction = cv->fraction,
        .random = cv->ordering == SC_ERASE_ORDER_RANDOM,
      };
    }
  *f = (SaccadeErasureFigure) {
    .n_points = r->n_tokens, .n_series = r->n_curves, .series = series,
    .random_median = sc_erasure_random_median (r, &never), .title = title,
  };
}

const SaccadeStudyOutputs saccade_erasure_outputs = {
  .kind = &sc_study_kind_erasure, .json = erasure_json, .text = erasure_text,
};
