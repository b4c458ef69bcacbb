/* saccade-norms-outputs.c — norm-based attention's outputs (engine/study/sc-norm-study.h):
 * every head's weight on the first token beside its share of the norm-based attention
 * there (the weight–norm gap of an attention sink), the chosen layer's value norms and its
 * maps, in JSON and as tables for a terminal. `saccade study norms` prints them, and
 * `saccade norms` (app/cli/saccade-cli-norms.c) adds one head's map. */
#include "app/core/studies/saccade-study-outputs.h"

#include <math.h>

#include "app/core/saccade-format.h"
#include "app/core/saccade-json.h"
#include "engine/study/sc-norm-study.h"

static void
norms_json (JsonBuilder *b, const SaccadeStudy *s, const ScStoreToken *tokens,
            const char *const *labels)
{
  const ScNormResult *r = s->result;
  const int L = r->n_layers, H = r->n_heads, n = r->n_tokens;

  (void) tokens, (void) labels;
  saccade_json_int (b, "layer", r->layer);
  /* what the numbers are (docs/metrics.md, "Norm-based attention") */
  saccade_json_string (b, "definition", "f_h(x_j) = W_O^h v_j; N_h[i][j] = alpha_h[i][j] "
                       "||f_h(x_j)||; N[i][j] = ||sum_h alpha_h[i][j] f_h(x_j)||; residual: "
                       "||t_ij||, t_ij = sum_h alpha_h[i][j] f_h(x_j) + [i == j] x_i (through "
                       "a post-attention norm where the layer has one); residual_norm: "
                       "||ffn_norm * t_ij|| / rms(sum_j t_ij); maps raw (rows not "
                       "renormalised); *_first and mix over rows i >= 1");
  saccade_json_begin_array (b, "heads");
  for (int l = 0; l < L; l++)
    for (int h = 0; h < H; h++)
      {
        const int at = l * H + h;
        json_builder_begin_object (b);
        saccade_json_head (b, l, h);
        saccade_json_double (b, "weight_first", r->weight_first[at]);
        saccade_json_double (b, "norm_first", r->norm_first[at]);
        saccade_json_double (b, "gap", r->weight_first[at] - r->norm_first[at]);
        saccade_json_double (b, "vnorm_first", r->vnorm_first[at]);
        saccade_json_double (b, "vnorm_rest", r->vnorm_rest[at]);
        json_builder_end_object (b);
      }
  json_builder_end_array (b);
  saccade_json_begin_array (b, "layers");
  for (int l = 0; l < L; l++)
    {
      json_builder_begin_object (b);
      saccade_json_int (b, "layer", l);
      saccade_json_double (b, "weight_first", r->layer_weight_first[l]);
      saccade_json_double (b, "norm_first", r->layer_norm_first[l]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  /* the chosen layer: its context-mixing ratios, (H, n) value norms, then its maps */
  saccade_json_begin_object (b, "mix");
  saccade_json_double (b, "attention", r->mix[0]);
  saccade_json_double (b, "residual", r->mix[1]);
  saccade_json_double (b, "residual_norm", r->mix[2]);
  json_builder_end_object (b);
  saccade_json_matrix (b, "value_norms", r->vnorm, (gsize) H, (gsize) n);
  if (r->maps == NULL)
    {
      json_builder_set_member_name (b, "maps");
      json_builder_add_null_value (b);
      return;
    }
  saccade_json_begin_object (b, "maps");
  saccade_json_begin_array (b, "heads");
  for (int h = 0; h < H; h++)
    saccade_study_json_map (b, sc_norm_result_map (r, h), n);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "layer");
  saccade_study_json_map (b, sc_norm_result_map (r, H), n);
  json_builder_set_member_name (b, "residual");
  saccade_study_json_map (b, sc_norm_result_map (r, H + 1), n);
  json_builder_set_member_name (b, "residual_norm");
  saccade_study_json_map (b, sc_norm_result_map (r, H + 2), n);
  json_builder_end_object (b);
}

/* Heads by the gap weight_first − norm_first, largest first (NaN last), ties by index. */
static int
by_gap (gconstpointer a, gconstpointer b, gpointer user)
{
  const ScNormResult *r = user;
  const int ia = *(const int *) a, ib = *(const int *) b;
  const double ga = r->weight_first[ia] - r->norm_first[ia],
               gb = r->weight_first[ib] - r->norm_first[ib];

  if (isnan (ga) != isnan (gb))
    return isnan (ga) ? 1 : -1;
  return ga > gb ? -1 : ga < gb ? 1 : ia - ib;
}

/* The widest tables printed in full: past this many tokens the maps are in --json only. */
#define TEXT_MAX_TOKENS 40

void
saccade_norms_text_map (GString *out, const ScNormResult *r, const char *const *labels,
                        int head)
{
  const int n = r->n_tokens;
  const float *map = sc_norm_result_map (r, head < 0 ? r->n_heads : head);

  if (head < 0)
    g_string_append_printf (out, "\nlayer %d's map N[i][j] = ||sum_h alpha_h[i][j] f_h(x_j)||"
                                 " (row i: the query; raw, not renormalised)\n", r->layer);
  else
    g_string_append_printf (out, "\nL%d.H%d's map N_h[i][j] = alpha[i][j] ||f_h(x_j)|| (row "
                                 "i: the query; raw, not renormalised)\n", r->layer, head);
  if (map == NULL || n > TEXT_MAX_TOKENS)
    {
      g_string_append_printf (out, "  (%s: --json)\n", map == NULL
                                  ? "not kept: the run is too long for the store's maps"
                                  : "too wide for a terminal");
      return;
    }
  saccade_study_text_triangle (out, map, n, labels, 7);
}

static void
norms_text (GString *out, const SaccadeStudy *s, const char *const *labels, int top)
{
  const ScNormResult *r = s->result;
  const int L = r->n_layers, H = r->n_heads, n = r->n_tokens, LH = L * H;
  g_autofree int *order = g_new (int, LH);

  g_string_append (out, "\nnorm-based attention (Kobayashi 2020): f_h(x_j) = W_O^h v_j, "
                        "N_h[i][j] = alpha_h[i][j] ||f_h(x_j)||\n"
                        "weight: mean alpha[i][0] over rows i >= 1; norm share: mean "
                        "N[i][0] / sum_j N[i][j]\n");
  g_string_append (out, "\n  layer   weight on token 0   norm share on token 0  (the layer: "
                        "its heads' mean weight, ||sum_h||'s share)\n");
  for (int l = 0; l < L; l++)
    g_string_append_printf (out, "  %5d   %17.3f   %21.3f\n", l, r->layer_weight_first[l],
                            r->layer_norm_first[l]);

  for (int i = 0; i < LH; i++)
    order[i] = i;
  g_qsort_with_data (order, LH, sizeof *order, by_gap, (gpointer) r);
  top = CLAMP (top, 0, LH);
  g_string_append_printf (out, "\nthe %d heads with the largest weight-norm gap on token 0 "
                               "(a sink: large weight, small value)\n"
                               "  head      weight   norm share      gap   ||f(x_0)||   mean "
                               "||f(x_j)||, j >= 1\n", top);
  for (int k = 0; k < top; k++)
    {
      const int at = order[k];
      char name[32];
      g_snprintf (name, sizeof name, "L%d.H%d", at / H, at % H);
      g_string_append_printf (out, "  %-8s %7.3f   %10.3f  %+7.3f   %10.3f   %10.3f\n", name,
                              r->weight_first[at], r->norm_first[at],
                              r->weight_first[at] - r->norm_first[at], r->vnorm_first[at],
                              r->vnorm_rest[at]);
    }

  g_string_append_printf (out, "\nlayer %d's value norms ||f_h(x_j)|| per token (rows) and "
                               "head (columns)\n  pos  token        ", r->layer);
  for (int h = 0; h < H; h++)
    {
      char name[16];
      g_snprintf (name, sizeof name, "H%d", h);
      g_string_append_printf (out, " %7s", name);
    }
  g_string_append_c (out, '\n');
  for (int j = 0; j < n && j < TEXT_MAX_TOKENS; j++)
    {
      g_string_append_printf (out, "  %3d  ", j);
      saccade_format_padded (out, labels != NULL ? labels[j] : "", 12);
      for (int h = 0; h < H; h++)
        g_string_append_printf (out, " %7.3f", r->vnorm[(size_t) h * n + j]);
      g_string_append_c (out, '\n');
    }
  if (n > TEXT_MAX_TOKENS)
    g_string_append_printf (out, "  (%d more tokens: --json)\n", n - TEXT_MAX_TOKENS);
  /* the layer's heads' summaries under their columns */
  {
    static const char *const NAMES[] = { "weight on 0", "norm share 0", "gap" };
    for (int k = 0; k < 3; k++)
      {
        g_string_append_printf (out, "  %-17s", NAMES[k]);
        for (int h = 0; h < H; h++)
          {
            const int at = r->layer * H + h;
            const double v = k == 0   ? r->weight_first[at]
                             : k == 1 ? r->norm_first[at]
                                      : r->weight_first[at] - r->norm_first[at];
            g_string_append_printf (out, " %7.3f", v);
          }
        g_string_append_c (out, '\n');
      }
  }
  g_string_append_printf (out, "\nlayer %d's context-mixing ratio (mean over rows i >= 1 of "
                               "what comes from tokens j != i):\n  attention alone %.3f, with "
                               "the residual %.3f, through the FFN's norm %.3f (Kobayashi "
                               "2021)\n", r->layer, r->mix[0], r->mix[1], r->mix[2]);
  saccade_norms_text_map (out, r, labels, -1);
}

const SaccadeStudyOutputs saccade_norms_outputs = {
  .kind = &sc_study_kind_norms,
  .json = norms_json,
  .text = norms_text,
};
