/* saccade-patch-outputs.c — activation patching's outputs (engine/study/sc-patch-study.h):
 * the metric and its normalisation, every patched cell in JSON and in CSV (the window's
 * export), and for a terminal the cells that moved the metric most and, for every (layer,
 * head) grid (heads, patterns, queries, keys, values), the whole layer × head map. */
#include "app/core/studies/saccade-study-outputs.h"

#include <math.h>

#include "app/core/saccade-csv.h"
#include "app/core/saccade-json.h"
#include "engine/study/sc-patch-study.h"

/* The value of the unpatched base run on the normalised scale: the corrupted run (0) is
 * the base when denoising, the clean run (1) when noising. */
static double
base_value (const ScPatchResult *r)
{
  return r->direction == SC_PATCH_DENOISE ? 0.0 : 1.0;
}

/* Is @r's grid (n_layers, n_heads): one cell per head, every position? */
static bool
per_head (const ScPatchResult *r)
{
  return r->what != SC_PATCH_HEAD_POSITIONS && r->what != SC_PATCH_RESIDUAL;
}

void
saccade_patch_cell (const ScPatchResult *r, int c, int *layer, int *head, int *pos)
{
  const int row = c / r->n_cols, col = c % r->n_cols;

  switch (r->what)
    {
    case SC_PATCH_HEADS:
    case SC_PATCH_PATTERNS:
    case SC_PATCH_QUERIES:
    case SC_PATCH_KEYS:
    case SC_PATCH_VALUES:
      *layer = row, *head = col, *pos = -1;
      break;
    case SC_PATCH_HEAD_POSITIONS:
      *layer = row / r->n_heads, *head = row % r->n_heads, *pos = col;
      break;
    default:
      *layer = row, *head = -1, *pos = col;
      break;
    }
}

void
saccade_patch_json_metric (JsonBuilder *b, const ScPatchResult *r)
{
  saccade_json_int (b, "rows", r->n_rows);
  saccade_json_int (b, "cols", r->n_cols);
  /* the metric, what it was on each run, and the scale every cell's effect is on */
  saccade_json_string (b, "metric", r->contrast >= 0 ? "logit(target) - logit(contrast)"
                                                      : "ln p(target)");
  saccade_json_int (b, "contrast", r->contrast);
  saccade_json_double (b, "m_clean", r->metric_clean);
  saccade_json_double (b, "m_corrupted", r->metric_corrupted);
  saccade_json_int (b, "top1_corrupted", r->top1_corrupted);
  saccade_json_string (b, "effect", "(m - m_corrupted) / (m_clean - m_corrupted)");
}

static void
patch_json (JsonBuilder *b, const SaccadeStudy *s, const ScStoreToken *tokens,
            const char *const *labels)
{
  const ScPatchResult *r = s->result;
  const int cells = r->n_rows * r->n_cols;

  (void) tokens, (void) labels;
  saccade_json_begin_object (b, "patch");
  saccade_json_string (b, "direction", sc_patch_direction_names[r->direction]);
  saccade_json_string (b, "what", sc_patch_what_names[r->what]);
  /* exact: each cell a patched run; attribution: its first-order estimate */
  saccade_json_string (b, "method", r->estimated ? "attribution" : "exact");
  saccade_patch_json_metric (b, r);
  json_builder_end_object (b);
  saccade_json_begin_array (b, "cells");
  for (int c = 0; c < cells; c++)
    {
      int layer, head, pos;
      saccade_patch_cell (r, c, &layer, &head, &pos);
      json_builder_begin_object (b);
      saccade_json_int (b, "layer", layer);
      if (head >= 0)
        saccade_json_int (b, "head", head);
      if (pos >= 0)
        saccade_json_int (b, "pos", pos);
      saccade_json_double (b, "m", r->patched[c]);
      saccade_json_double (b, "effect", sc_patch_normalised (r, r->patched[c]));
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

static int
by_moved (gconstpointer a, gconstpointer b, gpointer user)
{
  const double *moved = user;
  const double x = moved[*(const int *) a], y = moved[*(const int *) b];

  return x < y ? 1 : x > y ? -1 : *(const int *) a - *(const int *) b;
}

void
saccade_patch_rank_cells (const ScPatchResult *r, int first, int *order)
{
  const int cells = r->n_rows * r->n_cols;
  const double base = base_value (r);
  const double m_base = base == 0.0 ? r->metric_corrupted : r->metric_clean;
  g_autofree double *moved = g_new0 (double, MAX (cells, 1));

  for (int c = first; c < cells; c++)
    {
      const double e = sc_patch_normalised (r, r->patched[c]);
      order[c - first] = c;
      moved[c] = isfinite (e) ? fabs (e - base) : fabs (r->patched[c] - m_base);
    }
  g_qsort_with_data (order, cells - first, sizeof *order, by_moved, moved);
}

void
saccade_patch_text_metric (GString *out, const ScPatchResult *r)
{
  if (r->contrast >= 0)
    g_string_append_printf (out, "  metric m = logit(%d) - logit(%d) at the last position\n",
                            r->target, r->contrast);
  else
    g_string_append_printf (out, "  metric m = ln p(%d) at the last position (the corrupted "
                                 "run's top-1 is the target: no contrast)\n", r->target);
  g_string_append_printf (out, "  m clean %+.4f, m corrupted %+.4f (its top-1 %d); effect = "
                               "(m - m_corrupted) / (m_clean - m_corrupted): clean 1, "
                               "corrupted 0\n", r->metric_clean, r->metric_corrupted,
                          r->top1_corrupted);
  if (isnan (sc_patch_normalised (r, r->metric_clean)))
    g_string_append (out, "  the two runs do not differ on the metric: nothing to patch "
                          "(effects are NaN; m is listed)\n");
}

void
saccade_patch_text_map (GString *out, const ScPatchResult *r, const char *title,
                        int first_layer)
{
  g_string_append_printf (out, "\n  %s:\n      ", title);
  for (int h = 0; h < r->n_heads; h++)
    g_string_append_printf (out, " %6s%d", "H", h);
  g_string_append_c (out, '\n');
  for (int l = 0; l < r->n_layers; l++)
    {
      g_string_append_printf (out, "  L%-3d", l);
      for (int h = 0; h < r->n_heads; h++)
        if (l < first_layer)
          g_string_append_printf (out, " %7s", ".");
        else
          g_string_append_printf (out, " %+7.3f",
                                  sc_patch_normalised (r, r->patched[l * r->n_heads + h]));
      g_string_append_c (out, '\n');
    }
}

char *
saccade_patch_cell_name (const ScPatchResult *r, int c, const char *const *labels)
{
  int layer, head, pos;

  saccade_patch_cell (r, c, &layer, &head, &pos);
  if (pos < 0)
    return g_strdup_printf ("L%d.H%d", layer, head);
  if (head < 0)
    return g_strdup_printf ("L%d @ %d %s", layer, pos, labels[pos]);
  return g_strdup_printf ("L%d.H%d @ %d %s", layer, head, pos, labels[pos]);
}

static void
patch_text (GString *out, const SaccadeStudy *s, const char *const *labels, int top)
{
  const ScPatchResult *r = s->result;
  const int cells = r->n_rows * r->n_cols;
  const double base = base_value (r);
  g_autofree int *order = g_new (int, cells);

  g_string_append_printf (out, "\n%s, %s (%s), %s:\n",
                          r->estimated ? "attribution patching (first-order estimates of "
                                         "each patch from one backward pass)"
                                       : "activation patching",
                          sc_patch_direction_names[r->direction],
                          r->direction == SC_PATCH_DENOISE
                            ? "clean activations into the corrupted run"
                            : "corrupted activations into the clean run",
                          sc_patch_what_names[r->what]);
  saccade_patch_text_metric (out, r);
  saccade_patch_rank_cells (r, 0, order);
  g_string_append_printf (out, "\n  the %d patches that move the metric most from the %s "
                               "run's %g:\n      effect          m  component\n",
                          MIN (top, cells), base == 0.0 ? "corrupted" : "clean", base);
  for (int i = 0; i < MIN (top, cells); i++)
    {
      g_autofree char *name = saccade_patch_cell_name (r, order[i], labels);
      g_string_append_printf (out, "  %+9.4f  %+9.4f  %s\n",
                              sc_patch_normalised (r, r->patched[order[i]]),
                              r->patched[order[i]], name);
    }
  if (per_head (r))
    saccade_patch_text_map (out, r, "effect of each head (rows: layers, columns: heads)", 0);
}

GBytes *
saccade_patch_csv (const ScPatchResult *r, const char *const *labels, int n, gint64 run_id,
                   gint64 corrupted_run, gint64 study_id)
{
  GString *out = g_string_new ("layer,head,pos,label,m,effect,target,contrast,m_clean,"
                               "m_corrupted,direction,what,run,corrupted,study\n");
  const int cells = r->n_rows * r->n_cols;
  const gboolean named = labels != NULL && n == r->n_tokens;

  for (int c = 0; c < cells; c++)
    {
      int layer, head, pos;
      saccade_patch_cell (r, c, &layer, &head, &pos);
      g_string_append_printf (out, "%d,", layer);
      if (head >= 0)
        g_string_append_printf (out, "%d", head);
      g_string_append_c (out, ',');
      if (pos >= 0)
        g_string_append_printf (out, "%d", pos);
      g_string_append_c (out, ',');
      saccade_csv_quoted (out, named && pos >= 0 ? labels[pos] : "");
      saccade_csv_add_exact (out, r->patched[c]);
      saccade_csv_add_exact (out, sc_patch_normalised (r, r->patched[c]));
      g_string_append_printf (out, ",%d,%d", r->target, r->contrast);
      saccade_csv_add_exact (out, r->metric_clean);
      saccade_csv_add_exact (out, r->metric_corrupted);
      g_string_append_printf (out, ",%s,%s,%lld,%lld,%lld\n",
                              sc_patch_direction_names[r->direction],
                              sc_patch_what_names[r->what], (long long) run_id,
                              (long long) corrupted_run, (long long) study_id);
    }
  return g_string_free_to_bytes (out);
}

const SaccadeStudyOutputs saccade_patch_outputs = {
  .kind = &sc_study_kind_patch,
  .json = patch_json,
  .text = patch_text,
};

const SaccadeStudyOutputs saccade_patch_attribution_outputs = {
  .kind = &sc_study_kind_patch_attribution,
  .json = patch_json,
  .text = patch_text,
};
