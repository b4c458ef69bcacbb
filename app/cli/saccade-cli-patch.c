/* saccade-cli-patch.c — `saccade patch`: activation patching of clean/corrupted pairs.
 *
 *   saccade patch RUN --corrupted RUN2 [...]   one stored pair: `saccade study patch` (or
 *                                              `study path-patch` with --senders), stored
 *                                              and reused
 *   saccade patch --file PAIRS [...]           every pair of a file, then each cell's mean
 *                                              effect over the pairs with its bootstrap
 *                                              interval, top share and corrected sign test
 *                                              (app/core/saccade-patch-file.h)
 *     --db DB                                  each pair stored as the study of its two
 *                                              runs, read back on a rerun
 *     --db SHARD.sqlite --shard I/N            only the pairs k with k mod N = I
 *     --report DB                              the table read back from DB (the merged
 *                                              shards), refused naming the pairs missing
 */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli-store.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-format.h"
#include "app/core/saccade-json.h"
#include "app/core/saccade-patch-file.h"
#include "app/core/saccade-paths.h"
#include "app/core/studies/saccade-study-outputs.h"
#include "engine/analysis/sc-stats.h"
#include "ui/figures/saccade-figure.h"

typedef struct {
  SaccadeCliCommon common;
  char *file, *direction, *what, *senders, *component, *figure, *db, *shard, *report;
  int n_boot, seed, top;
  SaccadeCliFigure fig;                 /* --preset, --width-mm, ...: the map's */
  SaccadeFigureExportOptions figure_options;
} PatchOptions;

static void
patch_options_clear (PatchOptions *o)
{
  saccade_cli_common_clear (&o->common);
  g_free (o->file);
  g_free (o->direction);
  g_free (o->what);
  g_free (o->senders);
  g_free (o->component);
  g_free (o->figure);
  g_free (o->db);
  g_free (o->shard);
  g_free (o->report);
  saccade_cli_figure_clear (&o->fig);
}

/* The index of @text among @names (NULL-terminated), or −1 with @error naming @option. */
static int
name_index (const char *const *names, const char *option, const char *text, GError **error)
{
  g_autofree char *all = NULL;

  for (int i = 0; names[i] != NULL; i++)
    if (g_str_equal (names[i], text))
      return i;
  all = g_strjoinv (", ", (char **) names);
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s '%s' is none of %s",
               option, text, all);
  return -1;
}

static gboolean
parse_params (const PatchOptions *o, ScModel *model, SaccadePatchFileParams *p, GError **error)
{
  const ScModelInfo *info = sc_model_info (model);
  int layer[SC_STUDY_HEADS_MAX_COUNT], head[SC_STUDY_HEADS_MAX_COUNT], n;

  saccade_patch_file_params_init (p);
  if (o->direction != NULL
      && (p->direction = name_index (sc_patch_direction_names, "--direction", o->direction,
                                     error)) < 0)
    return FALSE;
  if (o->what != NULL
      && (p->what = name_index (sc_patch_what_names, "--what", o->what, error)) < 0)
    return FALSE;
  if (o->component != NULL
      && (p->component = name_index (sc_path_component_names, "--component", o->component,
                                     error)) < 0)
    return FALSE;
  if (o->senders != NULL)
    {
      if (o->what != NULL)
        {
          g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                               "--senders patches paths into --component; --what is for "
                               "activation patching");
          return FALSE;
        }
      n = sc_study_heads_parse (o->senders, layer, head, p->senders);
      if (n < 1)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--senders '%s' is not a list of heads like L23.H3,L17.H4",
                       o->senders);
          return FALSE;
        }
      for (int i = 0; i < n; i++)
        if (layer[i] >= (int) info->n_layers || head[i] >= (int) info->n_heads)
          {
            char name[SACCADE_HEAD_NAME_MAX];
            g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                         "--senders: %s is not a head of %s (%u layers of %u heads)",
                         saccade_head_name (name, layer[i], head[i]), info->name,
                         info->n_layers, info->n_heads);
            return FALSE;
          }
      p->path = TRUE;
    }
  else if (o->component != NULL)
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           "--component is the receivers' input of path patching: give "
                           "--senders too");
      return FALSE;
    }
  if (o->n_boot < 1 || o->n_boot > SC_STATS_MAX_BOOT)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--bootstrap %d is not in 1..%d", o->n_boot, SC_STATS_MAX_BOOT);
      return FALSE;
    }
  p->n_boot = o->n_boot;
  p->seed = (guint32) o->seed;
  return TRUE;
}

/* What was patched, in words: "heads, denoise (clean activations into the corrupted run)". */
static char *
describe (const SaccadePatchFileParams *p)
{
  const char *how = p->direction == SC_PATCH_DENOISE
                      ? "clean activations into the corrupted run"
                      : "corrupted activations into the clean run";

  if (p->path)
    {
      int layer[SC_STUDY_HEADS_MAX_COUNT], head[SC_STUDY_HEADS_MAX_COUNT];
      char canonical[SC_STUDY_HEADS_MAX], name[SACCADE_HEAD_NAME_MAX];
      const int n = sc_study_heads_parse (p->senders, layer, head, canonical);
      g_autoptr (GString) senders = g_string_new (NULL);
      for (int i = 0; i < n; i++)
        g_string_append_printf (senders, "%s%s", i > 0 ? ", " : "",
                                saccade_head_name (name, layer[i], head[i]));
      return g_strdup_printf ("path patching from %s into each later head's %s, %s (%s)",
                              senders->str, sc_path_component_names[p->component],
                              sc_patch_direction_names[p->direction], how);
    }
  return g_strdup_printf ("activation patching of %s, %s (%s)", sc_patch_what_names[p->what],
                          sc_patch_direction_names[p->direction], how);
}

/* The labels of line 1's clean tokens (position grids name their positions with them). */
static char **
first_labels (ScModel *model, const SaccadePatchFile *f)
{
  const SaccadePatchPair *p = g_ptr_array_index (f->pairs, 0);
  g_autoptr (GArray) ids = saccade_tokenize (model, p->clean, -1, FALSE, NULL);
  char **labels = g_new0 (char *, (ids != NULL ? ids->len : 0) + 1);

  for (guint i = 0; ids != NULL && i < ids->len; i++)
    labels[i] = saccade_vocab_label (model, g_array_index (ids, int32_t, i));
  return labels;
}

static void
print_text (const SaccadePatchFile *f, const SaccadePatchFileParams *p, ScModel *model,
            const char *file, int top)
{
  const ScPatchResult *r0 = f->results[0];
  g_autofree char *what = describe (p);
  g_auto (GStrv) labels = first_labels (model, f);
  g_autofree int *order = NULL;
  double mc = 0, mx = 0, mc_min = INFINITY, mx_max = -INFINITY;
  int n_order, n_big = 0, n_holm = 0;

  printf ("%s over %d pairs of %s · %s\n", what, f->n_pairs, file, sc_model_info (model)->name);
  printf ("metric m at the last position: logit(A) − logit(B), or ln p(A) where a pair has no "
          "B and the corrupted run's top-1 is A; effect (m − m_corrupted) / (m_clean − "
          "m_corrupted): 1 restores the clean run, 0 leaves the corrupted one\n\n");
  printf ("  line       A           B        m clean  m corrupted\n");
  for (int i = 0; i < f->n_pairs; i++)
    {
      const SaccadePatchPair *pair = g_ptr_array_index (f->pairs, i);
      const ScPatchResult *r = f->results[i];
      g_autofree char *a = saccade_vocab_label (model, r->target);
      g_autofree char *b = r->contrast >= 0 ? saccade_vocab_label (model, r->contrast)
                                            : g_strdup ("-");
      printf ("  %4d  ", pair->line);
      saccade_store_cli_print_padded (a, 10);
      printf ("  ");
      saccade_store_cli_print_padded (b, 10);
      printf ("  %+8.3f  %+11.3f\n", r->metric_clean, r->metric_corrupted);
      mc += r->metric_clean;
      mx += r->metric_corrupted;
      mc_min = MIN (mc_min, r->metric_clean);
      mx_max = MAX (mx_max, r->metric_corrupted);
    }
  printf ("  m clean: mean %+.3f, min %+.3f · m corrupted: mean %+.3f, max %+.3f\n",
          mc / f->n_pairs, mc_min, mx / f->n_pairs, mx_max);

  order = saccade_patch_file_order (f, &n_order);
  printf ("\nthe %d cells that move the metric most from the %s run's effect %g, by |mean "
          "effect − %g| over the pairs (95 %% percentile bootstrap over pairs, %d resamples, "
          "seed %#x; top: the share of resamples in which the cell moves most; agree: pairs "
          "that move it by more than %.1f the mean's way; sign test of the pairs' moves, "
          "Holm-adjusted over the %d cells tested):\n", MIN (top, n_order),
          f->base == 0.0 ? "corrupted" : "clean", f->base, f->base, p->n_boot, p->seed,
          SACCADE_PATCH_FILE_AGREE, f->n_tested);
  printf ("  %-22s  %7s  %-17s  %6s  %7s  %8s  %8s\n", "cell", "mean", "95 % CI", "top",
          "agree", "p (sign)", "p (Holm)");
  for (int k = 0; k < n_order; k++)
    {
      const int c = order[k];
      n_big += fabs (f->mean[c] - f->base) > 0.05;
      n_holm += f->sign_p_holm[c] < 0.05;
      if (k >= top)
        continue;
      g_autofree char *name = saccade_patch_cell_name (r0, c, (const char *const *) labels);
      printf ("  ");
      saccade_store_cli_print_padded (name, 22);
      if (isnan (f->lo[c]))
        printf ("  %+7.3f  %-17s  %6s", f->mean[c], "(one pair)", "-");
      else
        printf ("  %+7.3f  [%+6.3f, %+6.3f]  %5.1f%%", f->mean[c], f->lo[c], f->hi[c],
                100 * f->top_share[c]);
      printf ("  %3d/%-3d  %8.2g  %8.2g\n", f->n_agree[c], f->n_pairs, f->sign_p[c],
              f->sign_p_holm[c]);
    }
  printf ("%d of the %d cells move the mean effect by more than 0.05; %d pass the sign test "
          "at 0.05 after "
          "Holm's correction (a consistent direction is easy to have when the effect is tiny: "
          "read size and consistency together)\n", n_big, f->n_tested, n_holm);
  if (n_order > 0 && !isnan (f->lo[order[0]]))
    {
      g_autofree char *name = saccade_patch_cell_name (r0, order[0], (const char *const *) labels);
      printf ("reading: %s moves the metric most (mean effect %+.2f, 95 %% CI %+.2f to %+.2f); "
              "it is the top cell in %.0f %% of the resamples%s\n", name, f->mean[order[0]],
              f->lo[order[0]], f->hi[order[0]], 100 * f->top_share[order[0]],
              f->top_share[order[0]] < 0.95 ? ", so calling it \"the\" cell rests on these "
                                               "pairs" : "");
    }
  printf ("%.1f s\n", f->seconds);
}

/* Where a stored pair came from: its runs and study. */
static void
json_stored (JsonBuilder *b, const SaccadePatchStored *st)
{
  saccade_json_int (b, "clean_run", st->clean_run);
  saccade_json_int (b, "corrupted_run", st->corrupted_run);
  saccade_json_int (b, "study_id", st->study_id);
  saccade_json_string (b, "source", st->reused ? "read back" : "computed");
}

/* One shard's pairs (no table: that is the whole file's, after the merge). */
static void
print_shard (const SaccadePatchFile *f, const SaccadePatchFileParams *p, ScModel *model,
             const PatchOptions *o)
{
  if (o->common.json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      json_builder_begin_object (b);
      saccade_json_string (b, "file", o->file);
      saccade_json_string (b, "model", sc_model_info (model)->name);
      saccade_json_string (b, "study", p->path ? SC_PATH_PATCH_KIND : "patch");
      saccade_json_string (b, "shard", o->shard);
      saccade_json_string (b, "db", o->db);
      saccade_json_int (b, "n_pairs", f->n_pairs);
      saccade_json_int (b, "read_back", f->n_reused);
      saccade_json_int (b, "computed", f->n_pairs - f->n_reused);
      saccade_json_double (b, "seconds", f->seconds);
      saccade_json_begin_array (b, "pairs");
      for (int i = 0; i < f->n_pairs; i++)
        {
          const SaccadePatchPair *pair = g_ptr_array_index (f->pairs, i);
          json_builder_begin_object (b);
          saccade_json_int (b, "line", pair->line);
          json_stored (b, &f->stored[i]);
          saccade_json_double (b, "m_clean", f->results[i]->metric_clean);
          saccade_json_double (b, "m_corrupted", f->results[i]->metric_corrupted);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      json_builder_end_object (b);
      saccade_json_print (b);
      return;
    }
  printf ("shard %s of %s: %d pairs, %d read back from %s, %d computed now and stored\n",
          o->shard, o->file, f->n_pairs, f->n_reused, o->db, f->n_pairs - f->n_reused);
  if (f->n_pairs > 0)
    printf ("  line  clean run  corrupted run     study   m clean  m corrupted\n");
  for (int i = 0; i < f->n_pairs; i++)
    {
      const SaccadePatchPair *pair = g_ptr_array_index (f->pairs, i);
      const SaccadePatchStored *st = &f->stored[i];
      printf ("  %4d  %9" G_GINT64_FORMAT "  %13" G_GINT64_FORMAT "  %8" G_GINT64_FORMAT
              "  %+8.3f  %+11.3f  %s\n", pair->line, st->clean_run, st->corrupted_run,
              st->study_id, f->results[i]->metric_clean, f->results[i]->metric_corrupted,
              st->reused ? "read back" : "computed");
    }
  printf ("the table is the whole file's: merge the shards' databases (saccade merge OUT "
          "SHARD.sqlite…), then saccade patch --file %s --report OUT\n", o->file);
}

static void
print_json (const SaccadePatchFile *f, const SaccadePatchFileParams *p, ScModel *model,
            const char *file, const char *db)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  const ScPatchResult *r0 = f->results[0];
  g_auto (GStrv) labels = first_labels (model, f);
  g_autofree int *order = NULL;
  int n_order;

  json_builder_begin_object (b);
  saccade_json_string (b, "file", file);
  saccade_json_string (b, "model", sc_model_info (model)->name);
  saccade_json_string (b, "study", p->path ? SC_PATH_PATCH_KIND : "patch");
  saccade_json_string (b, "direction", sc_patch_direction_names[p->direction]);
  if (p->path)
    {
      saccade_json_string (b, "senders", p->senders);
      saccade_json_string (b, "component", sc_path_component_names[p->component]);
    }
  else
    saccade_json_string (b, "what", sc_patch_what_names[p->what]);
  saccade_json_int (b, "rows", f->n_rows);
  saccade_json_int (b, "cols", f->n_cols);
  saccade_json_int (b, "first_row", f->first_row);
  saccade_json_int (b, "n_pairs", f->n_pairs);
  saccade_json_int (b, "bootstrap", p->n_boot);
  saccade_json_int (b, "seed", p->seed);
  saccade_json_int (b, "tested", f->n_tested);
  saccade_json_double (b, "base", f->base);
  saccade_json_double (b, "seconds", f->seconds);
  if (f->stored != NULL)
    {
      saccade_json_string (b, "db", db);
      saccade_json_int (b, "read_back", f->n_reused);
      saccade_json_int (b, "computed", f->n_pairs - f->n_reused);
    }
  saccade_json_begin_array (b, "pairs");
  for (int i = 0; i < f->n_pairs; i++)
    {
      const SaccadePatchPair *pair = g_ptr_array_index (f->pairs, i);
      const ScPatchResult *r = f->results[i];
      const int cells = f->n_rows * f->n_cols;
      json_builder_begin_object (b);
      saccade_json_int (b, "line", pair->line);
      saccade_json_string (b, "clean", pair->clean);
      saccade_json_string (b, "corrupted", pair->corrupted);
      saccade_json_int (b, "target", r->target);
      saccade_json_int (b, "contrast", r->contrast);
      saccade_json_double (b, "m_clean", r->metric_clean);
      saccade_json_double (b, "m_corrupted", r->metric_corrupted);
      if (f->stored != NULL)
        json_stored (b, &f->stored[i]);
      saccade_json_begin_array (b, "effect");
      for (int c = 0; c < cells; c++)
        json_builder_add_double_value (b, f->effect[(gsize) i * cells + c]);
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  /* the tested cells, largest |mean − base| first */
  order = saccade_patch_file_order (f, &n_order);
  saccade_json_begin_array (b, "cells");
  for (int k = 0; k < n_order; k++)
    {
      const int c = order[k];
      int layer, head, pos;
      g_autofree char *name = saccade_patch_cell_name (r0, c, (const char *const *) labels);
      saccade_patch_cell (r0, c, &layer, &head, &pos);
      json_builder_begin_object (b);
      saccade_json_string (b, "name", name);
      saccade_json_int (b, "layer", layer);
      saccade_json_int (b, "head", head);
      saccade_json_int (b, "pos", pos);
      saccade_json_double (b, "mean", f->mean[c]);
      saccade_json_double (b, "ci_lo", f->lo[c]);
      saccade_json_double (b, "ci_hi", f->hi[c]);
      saccade_json_double (b, "top_share", f->top_share[c]);
      saccade_json_int (b, "agree", f->n_agree[c]);
      saccade_json_double (b, "sign_p", f->sign_p[c]);
      saccade_json_double (b, "sign_p_holm", f->sign_p_holm[c]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  saccade_json_print (b);
}

/* The mean effect of each head as a heatmap (per-head grids only). */
static gboolean
write_figure (const SaccadePatchFile *f, const SaccadePatchFileParams *p, ScModel *model,
              const char *path, const SaccadeFigureExportOptions *opts, GError **error)
{
  const int cells = f->n_rows * f->n_cols;
  g_autofree float *v = g_new (float, cells);
  g_autofree char *what = describe (p);
  g_autofree char *title = g_strdup_printf ("%s · mean effect over %d pairs · %s", what,
                                            f->n_pairs, sc_model_info (model)->name);
  /* the move from the base run, so that 0 (white) is "changes nothing" either way */
  SaccadeHeatmapFigure hm = { .values = v, .n_rows = f->n_rows, .n_cols = f->n_cols,
                              .title = title, .colormap = SACCADE_COLORMAP_RDBU,
                              .scale = SACCADE_SCALE_LINEAR, .vmin = -1, .vmax = 1,
                              .row_name = "Layer", .col_name = "Head",
                              .value_name = f->base == 0.0 ? "mean effect"
                                                           : "mean effect − 1 (clean run 0)" };

  if (f->results[0]->what == SC_PATCH_HEAD_POSITIONS || f->results[0]->what == SC_PATCH_RESIDUAL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "--figure draws a layer × head map: not for --what head-positions "
                           "or residual");
      return FALSE;
    }
  for (int c = 0; c < cells; c++)
    v[c] = isnan (f->mean[c]) ? 0.0f : (float) (f->mean[c] - f->base);
  return saccade_figure_export_heatmap (&hm, path, opts, error);
}

/* --db, --shard, --report: the pairs stored in (or read back from) a database. */
static SaccadePatchFile *
run_stored (const PatchOptions *o, ScModel *model, const SaccadePatchFileParams *p,
            GPtrArray *pairs, GError **error)
{
  const char *db = o->report != NULL ? o->report : o->db;
  g_autofree char *db_path = saccade_db_path (db);
  SaccadeCliSession cs = { 0 };
  SaccadeShard shard = { 0, 1 };
  SaccadePatchFile *f;
  ScStoreModel ident;
  ScError err = { 0 };

  if (o->shard != NULL && !saccade_shard_parse (o->shard, &shard, error))
    {
      g_ptr_array_unref (pairs);
      return NULL;
    }
  if (sc_store_model_identify (model, saccade_cli_model_path (&o->common), &ident, &err)
      != SC_OK)
    {
      g_ptr_array_unref (pairs);
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  if (o->report != NULL)
    {
      if (!g_file_test (db_path, G_FILE_TEST_EXISTS))
        {
          g_ptr_array_unref (pairs);
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "no capture store at %s",
                       db_path);
          return NULL;
        }
      return saccade_patch_file_run_stored (model, &ident, NULL, o->file, pairs, p, NULL,
                                            db_path, SACCADE_PATCH_FILE_STORED_ONLY, NULL,
                                            NULL, NULL, error);
    }
  if (!saccade_cli_session_open (&cs, &o->common, model, error))
    {
      g_ptr_array_unref (pairs);
      return NULL;
    }
  f = saccade_patch_file_run_stored (model, &ident, cs.session, o->file, pairs, p, &shard,
                                     db_path, SACCADE_PATCH_FILE_COMPUTE,
                                     saccade_cli_progress (), NULL, NULL, error);
  saccade_cli_progress_end ();
  saccade_cli_session_close (&cs);
  return f;
}

static int
file_mode (const PatchOptions *o)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadePatchFile) f = NULL;
  SaccadeCliSession cs = { 0 };
  SaccadePatchFileParams p;
  GPtrArray *pairs;
  ScModel *model;
  int rc = 0;

  if ((model = saccade_cli_load_model (&o->common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  if (!parse_params (o, model, &p, &error))
    {
      sc_model_free (model);
      fprintf (stderr, "saccade: %s\n", error->message);
      return 2;
    }
  if ((pairs = saccade_patch_pairs_read (o->file, &error)) == NULL)
    {
      sc_model_free (model);
      return saccade_cli_fail (g_steal_pointer (&error));
    }
  if (o->db != NULL || o->report != NULL)
    f = run_stored (o, model, &p, pairs, &error);
  else if (saccade_cli_session_open (&cs, &o->common, model, &error))
    {
      f = saccade_patch_file_run (model, cs.session, pairs, &p, saccade_cli_progress (), NULL,
                                  NULL, &error);
      saccade_cli_progress_end ();
      saccade_cli_session_close (&cs);
    }
  else
    g_ptr_array_unref (pairs);
  if (f == NULL)
    rc = saccade_cli_fail (g_steal_pointer (&error));
  else if (f->partial)
    print_shard (f, &p, model, o);
  else
    {
      const char *db = o->report != NULL ? o->report : o->db;
      if (o->common.json)
        print_json (f, &p, model, o->file, db);
      else
        {
          if (o->report != NULL)
            printf ("the %d pairs of %s read back from %s\n", f->n_pairs, o->file, db);
          else if (o->db != NULL)
            printf ("%d pairs of %s: %d read back from %s, %d computed now and stored\n",
                    f->n_pairs, o->file, f->n_reused, db, f->n_pairs - f->n_reused);
          print_text (f, &p, model, o->file, o->top);
        }
      if (o->figure != NULL
          && !write_figure (f, &p, model, o->figure, &o->figure_options, &error))
        rc = saccade_cli_fail (g_steal_pointer (&error));
      else if (o->figure != NULL && !o->common.json)
        printf ("wrote the mean effect map to %s\n", o->figure);
    }
  sc_model_free (model);
  return rc;
}

/* --db, --shard and --report together as they may be; says why not on stderr. */
static gboolean
check_store_options (const PatchOptions *o)
{
  const char *why = NULL;

  if (o->report != NULL && (o->db != NULL || o->shard != NULL))
    why = "--report DB reads the table of DB back: no --db, no --shard";
  else if (o->shard != NULL && o->db == NULL)
    why = "--shard I/N is for --db SHARD.sqlite (each shard writes its own database; merge "
          "them with `saccade merge`, then read the table with --report)";
  else if (o->shard != NULL && o->figure != NULL)
    why = "--figure draws the whole file's table: with --report, after the merge";
  if (why != NULL)
    fprintf (stderr, "saccade: %s\n", why);
  return why == NULL;
}

/* `saccade patch RUN ...`: the stored study of one pair, as `saccade study` runs it. */
static int
run_mode (int argc, char **argv)
{
  gboolean path = FALSE;
  g_autofree char **args = g_new0 (char *, argc + 2);

  for (int i = 1; i < argc; i++)
    path |= g_str_equal (argv[i], "--senders") || g_str_has_prefix (argv[i], "--senders=");
  args[0] = (char *) "study";
  args[1] = (char *) (path ? SC_PATH_PATCH_KIND : "patch");
  memcpy (args + 2, argv + 1, (gsize) (argc - 1) * sizeof *args);
  return saccade_cmd_study (argc + 1, args);
}

int
saccade_cmd_patch (int argc, char **argv)
{
  PatchOptions o = { .n_boot = 10000, .seed = (int) SC_STATS_DEFAULT_SEED, .top = 12,
                     .fig = SACCADE_CLI_FIGURE_INIT };
  g_autoptr (GOptionContext) ctx = NULL;
  int rc;
  const GOptionEntry entries[] = {
    { "file", 0, 0, G_OPTION_ARG_FILENAME, &o.file,
      "the pairs: one a line, CLEAN<tab>CORRUPTED[<tab>A[<tab>B]] (A, B: the metric's "
      "tokens; default the clean and the corrupted top-1)", "PAIRS" },
    { "direction", 0, 0, G_OPTION_ARG_STRING, &o.direction,
      "denoise (clean activations into the corrupted run; the default) or noise", "DIR" },
    { "what", 0, 0, G_OPTION_ARG_STRING, &o.what,
      "heads (default), head-positions, residual, patterns, queries, keys or values", "WHAT" },
    { "senders", 0, 0, G_OPTION_ARG_STRING, &o.senders,
      "path patching from these heads (L23.H3,L17.H4) into each later head's --component",
      "HEADS" },
    { "component", 0, 0, G_OPTION_ARG_STRING, &o.component,
      "with --senders: the receivers' queries, keys (default) or values", "C" },
    { "bootstrap", 0, 0, G_OPTION_ARG_INT, &o.n_boot,
      "resamples of the pairs for the intervals (10000)", "B" },
    { "seed", 0, 0, G_OPTION_ARG_INT, &o.seed, "seed of the resampling (default 0x5accade)",
      "N" },
    { "top", 0, 0, G_OPTION_ARG_INT, &o.top, "cells listed (12)", "N" },
    { "figure", 0, 0, G_OPTION_ARG_FILENAME, &o.figure,
      "write the mean effect per head as a map (.png, .svg, .pdf; noising: its move from the "
      "clean run's 1)", "FIGURE" },
    SACCADE_STORE_CLI_DB_OPTION (&o.db),
    { "shard", 0, 0, G_OPTION_ARG_STRING, &o.shard,
      "with --db: only the pairs k with k mod N = I (I/N, e.g. 0/3), for a later merge; see "
      "docs/cluster.md", "I/N" },
    { "report", 0, 0, G_OPTION_ARG_FILENAME, &o.report,
      "the table read back from DB (the shards merged), computing nothing", "DB" },
    SACCADE_CLI_FIGURE_OPTIONS (&o.fig),
    G_OPTION_ENTRY_NULL
  };

  /* a run id first: the stored study of one pair */
  if (argc >= 2 && argv[1][0] != '-')
    return run_mode (argc, argv);
  ctx = g_option_context_new ("--file PAIRS - activation patching over clean/corrupted pairs");
  g_option_context_set_summary (ctx,
                                "saccade patch RUN --corrupted RUN2 [--senders ...] is `saccade "
                                "study patch` (or path-patch) of one stored pair.\n"
                                "saccade patch --file PAIRS patches every pair of a file and "
                                "summarises each cell over the pairs; with --db each pair is "
                                "stored as the study of its two runs and read back on a rerun, "
                                "--shard I/N computes a share of the pairs into its own "
                                "database, and --report DB reads the table back from the "
                                "merged shards.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &o.common);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    {
      patch_options_clear (&o);
      return 2;
    }
  if (!saccade_cli_figure_check (&o.fig, o.figure != NULL, "--figure", &o.figure_options, &rc))
    {
      patch_options_clear (&o);
      return rc;
    }
  if (o.file == NULL)
    {
      fprintf (stderr, "saccade: patch needs --file PAIRS, or a stored run: saccade patch RUN "
                       "--corrupted RUN2 (see --help)\n");
      patch_options_clear (&o);
      return 2;
    }
  if (!check_store_options (&o))
    rc = 2;
  else
    rc = file_mode (&o);
  patch_options_clear (&o);
  return rc;
}
