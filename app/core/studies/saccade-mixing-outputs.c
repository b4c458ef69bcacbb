/* saccade-mixing-outputs.c — context mixing's outputs (engine/study/sc-mixing-study.h):
 * every layer's map and its rollout through the model, by value zeroing or ALTI, in JSON
 * and as tables for a terminal (each layer's mixing ratio and the last token's top source
 * there, the last token's top sources in the rollout and at a chosen layer, that layer's
 * map). `saccade study mixing` prints them, and `saccade mixing`
 * (app/cli/saccade-cli-mixing.c) chooses the layer or the rollout. */
#include "app/core/studies/saccade-study-outputs.h"

#include <math.h>

#include "app/core/saccade-format.h"
#include "app/core/saccade-json.h"
#include "engine/study/sc-mixing-study.h"

static const char *const DEFINITIONS[] = {
  "value zeroing (Mohebbi 2023): VZ_l[i][j] = 1 - cos(x_i, x_i with token j's values zeroed "
  "in every head of layer l), on the residual leaving layer l (after its FFN), j <= i, each "
  "row divided by its sum over j <= i (a zero row stays 0); rollout R = M_{L-1} ... M_0",
  "ALTI (Ferrando 2022): T_i(x_j) = P_i(sum_h alpha_h[i][j] W_O^h v_j) + [i == j] x_i, "
  "y_i = sum_j T_i(x_j) (P_i: Gemma 3's post-attention RMSNorm frozen at row i's scale, "
  "else the identity); c_ij = max(0, ||y_i||_1 - ||y_i - T_i(x_j)||_1), rows normalised; "
  "rollout R = M_{L-1} ... M_0",
};

static void
mixing_json (JsonBuilder *b, const SaccadeStudy *s, const ScStoreToken *tokens,
             const char *const *labels)
{
  const ScMixingResult *r = s->result;
  const int L = r->n_layers, n = r->n_tokens;

  (void) tokens, (void) labels;
  saccade_json_string (b, "method", sc_mixing_method_names[r->method]);
  saccade_json_string (b, "definition", DEFINITIONS[r->method]);
  saccade_json_begin_array (b, "layers");
  for (int l = 0; l <= L; l++)
    {
      const float *map = sc_mixing_result_map (r, l);
      json_builder_begin_object (b);
      if (l < L)
        saccade_json_int (b, "layer", l);
      else
        saccade_json_string (b, "layer", "rollout");
      saccade_json_double (b, "mix", r->mix[l]);
      json_builder_set_member_name (b, "map");
      saccade_study_json_map (b, map, n);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

/* The key of row @row of @map (n keys) with the largest share, ties by the lower index. */
static int
top_key (const float *map, int n, int row)
{
  int best = 0;

  for (int j = 1; j <= row; j++)
    if (map[(gsize) row * n + j] > map[(gsize) row * n + best])
      best = j;
  return best;
}

static const char *
label_of (const char *const *labels, int j)
{
  return labels != NULL ? labels[j] : "";
}

/* The name of map @k of @r: "layer 15" or "the rollout". */
static char *
map_name (const ScMixingResult *r, int k)
{
  return k < r->n_layers ? g_strdup_printf ("layer %d", k) : g_strdup ("the rollout");
}

/* The widest map printed in full: past this many tokens the maps are in --json only. */
#define TEXT_MAX_TOKENS 40

void
saccade_mixing_text_map (GString *out, const ScMixingResult *r, const char *const *labels,
                         int k, int top)
{
  const int n = r->n_tokens, last = n - 1;
  const float *map = sc_mixing_result_map (r, k);
  g_autofree char *name = map_name (r, k);
  g_autofree int *order = g_new (int, n);

  if (map == NULL)
    return;
  /* 1. the last token's sources, largest first */
  for (int j = 0; j < n; j++)
    order[j] = j;
  for (int a = 1; a < n; a++) /* insertion sort by share, ties by position */
    for (int b = a; b > 0 && map[(gsize) last * n + order[b]] > map[(gsize) last * n + order[b - 1]];
         b--)
      {
        const int t = order[b];
        order[b] = order[b - 1];
        order[b - 1] = t;
      }
  top = CLAMP (top, 1, n);
  g_string_append_printf (out, "\n%s: the last token's (%d ", name, last);
  saccade_format_padded (out, label_of (labels, last), 0);
  g_string_append_printf (out, ") top %d sources\n  pos  token          share\n", top);
  for (int t = 0; t < top; t++)
    {
      g_string_append_printf (out, "  %3d  ", order[t]);
      saccade_format_padded (out, label_of (labels, order[t]), 12);
      g_string_append_printf (out, "  %6.3f\n", map[(gsize) last * n + order[t]]);
    }
  /* 2. the map */
  g_string_append_printf (out, "\n%s's map (row i: the query, shares of its sources j <= i)\n",
                          name);
  if (n > TEXT_MAX_TOKENS)
    {
      g_string_append (out, "  (too wide for a terminal: --json)\n");
      return;
    }
  saccade_study_text_triangle (out, map, n, labels, 6);
}

static void
mixing_text (GString *out, const SaccadeStudy *s, const char *const *labels, int top)
{
  const ScMixingResult *r = s->result;
  const int L = r->n_layers, n = r->n_tokens, last = n - 1;

  g_string_append_printf (out, "\ncontext mixing by %s\n  %s\n",
                          sc_mixing_method_names[r->method], DEFINITIONS[r->method]);
  g_string_append (out, "\n  layer   mixing ratio   the last token's top source   share\n");
  for (int k = 0; k <= L; k++)
    {
      const float *map = sc_mixing_result_map (r, k);
      const int j = top_key (map, n, last);
      if (k < L)
        g_string_append_printf (out, "  %5d   %12.3f   %3d ", k, r->mix[k], j);
      else
        g_string_append_printf (out, "  %5s   %12.3f   %3d ", "all", r->mix[k], j);
      saccade_format_padded (out, label_of (labels, j), 24);
      g_string_append_printf (out, "  %6.3f\n", map[(gsize) last * n + j]);
    }
  g_string_append (out, "  (mixing ratio: the mean over rows i >= 1 of the share from tokens "
                        "j != i; all: the rollout)\n");
  saccade_mixing_text_map (out, r, labels, L, top);
}

const SaccadeStudyOutputs saccade_mixing_outputs = {
  .kind = &sc_study_kind_mixing,
  .json = mixing_json,
  .text = mixing_text,
};
