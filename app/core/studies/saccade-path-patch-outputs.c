/* saccade-path-patch-outputs.c — path patching's outputs (engine/study/sc-path-patch.h): the
 * senders, the component and where the receivers start, every cell of the (layer, head)
 * grid in JSON, and for a terminal the receivers that moved the metric most and the whole
 * layer × head map. The metric and its normalisation are activation patching's
 * (saccade-patch-outputs.c prints the same lines for its own study). */
#include "app/core/studies/saccade-study-outputs.h"

#include <math.h>

#include "app/core/saccade-json.h"
#include "engine/study/sc-path-patch.h"

static void
path_json (JsonBuilder *b, const SaccadeStudy *s, const ScStoreToken *tokens,
           const char *const *labels)
{
  const ScPathPatchResult *r = s->result;
  const ScPatchResult *g = r->grid;

  (void) tokens, (void) labels;
  saccade_json_begin_object (b, "path_patch");
  saccade_json_string (b, "direction", sc_patch_direction_names[g->direction]);
  saccade_json_string (b, "senders", r->senders);
  saccade_json_string (b, "component", sc_path_component_names[r->component]);
  /* cells in earlier layers have no path from the senders: they hold m_base exactly */
  saccade_json_int (b, "receivers_from_layer", r->receivers_from_layer);
  saccade_patch_json_metric (b, g);
  json_builder_end_object (b);
  saccade_json_begin_array (b, "cells");
  for (int c = 0; c < g->n_rows * g->n_cols; c++)
    {
      json_builder_begin_object (b);
      saccade_json_int (b, "layer", c / g->n_cols);
      saccade_json_int (b, "head", c % g->n_cols);
      saccade_json_bool (b, "receiver", c / g->n_cols >= r->receivers_from_layer);
      saccade_json_double (b, "m", g->patched[c]);
      saccade_json_double (b, "effect", sc_patch_normalised (g, g->patched[c]));
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static void
path_text (GString *out, const SaccadeStudy *s, const char *const *labels, int top)
{
  const ScPathPatchResult *r = s->result;
  const ScPatchResult *g = r->grid;
  const int first = r->receivers_from_layer * g->n_cols, cells = g->n_rows * g->n_cols;
  const int n_recv = cells - first, shown = MIN (top, n_recv);
  const double base = g->direction == SC_PATCH_DENOISE ? 0.0 : 1.0;
  g_autofree int *order = g_new0 (int, MAX (n_recv, 1));

  (void) labels;
  g_string_append_printf (out, "\npath patching, %s (%s), senders %s into each later head's "
                               "%s:\n", sc_patch_direction_names[g->direction],
                          g->direction == SC_PATCH_DENOISE
                            ? "the senders' clean outputs into the corrupted run"
                            : "the senders' corrupted outputs into the clean run",
                          r->senders, sc_path_component_names[r->component]);
  g_string_append (out, "  run A: the base run with the senders' outputs from the other run "
                        "and every other head's frozen (MLPs recomputed); each receiver's "
                        "input from run A\n");
  saccade_patch_text_metric (out, g);
  g_string_append_printf (out, "  receivers: layers %d to %d (layers up to the latest sender's "
                               "have no path: the base run's m)\n", r->receivers_from_layer,
                          g->n_rows - 1);
  saccade_patch_rank_cells (g, first, order);
  g_string_append_printf (out, "\n  the %d receivers whose %s move the metric most from the "
                               "%s run's %g:\n      effect          m  receiver\n",
                          shown, sc_path_component_names[r->component],
                          base == 0.0 ? "corrupted" : "clean", base);
  for (int i = 0; i < shown; i++)
    g_string_append_printf (out, "  %+9.4f  %+9.4f  L%d.H%d\n",
                            sc_patch_normalised (g, g->patched[order[i]]), g->patched[order[i]],
                            order[i] / g->n_cols, order[i] % g->n_cols);
  saccade_patch_text_map (out, g, "effect through each receiver (rows: layers, columns: heads; "
                                  "'.': no path)", r->receivers_from_layer);
}

const SaccadeStudyOutputs saccade_path_patch_outputs = {
  .kind = &sc_study_kind_path_patch,
  .json = path_json,
  .text = path_text,
};
