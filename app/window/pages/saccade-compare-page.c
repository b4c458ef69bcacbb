/* saccade-compare-page.c — the Compare page (see saccade-compare-page.h).
 *
 * Two sides, A and B, each a run (any run of the open database: the run shown is used as
 * it is, another is loaded with saccade_run_load_async), a layer and a head. When both
 * runs have the same tokens the third view shows A − B on RdBu and the status line their
 * head distance (sc_head_distance: one pass over n rows, milliseconds at n = 512); when
 * the tokens differ it says so and shows no difference. The matrix view shows the
 * distance between every pair of heads of the run shown, computed by
 * saccade-distance-task.c off the main thread each time a run is shown, with a progress
 * bar; a click on a cell puts that pair into A and B and shows them.
 *
 * The "Two models" view (saccade-compare-models.c) puts the loaded model and a second
 * model file side by side on the run's text.
 *
 * Its own actions (the e2e test drives them): page.view (s: "pair", "matrix", "models"),
 * page.pair (s: "LA.HA LB.HB [RUN_B]": both in the run shown, or B in run RUN_B, one of
 * the database's runs of the same model — win.compare-head's way of setting a head of the
 * run shown beside the same head of another run), page.activate-cell (s: "i j", heads
 * numbered layer * n_heads + head, as a click on that cell does), page.models-b (s: model
 * B's path), page.models-colour (s: "type", a metric id, "prefix-matching",
 * "ablation-tv").
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-compare-page.h"

#include <glib/gi18n.h>
#include <stdlib.h>
#include <string.h>

#include "app/core/saccade-export.h"
#include "app/core/saccade-job.h"
#include "app/window/pages/saccade-compare-models.h"
#include "app/window/pages/saccade-distance-task.h"
#include "engine/analysis/sc-head-distance.h"
#include "ui/widgets/saccade-distance-view.h"
#include "ui/widgets/saccade-heatmap-view.h"
#include "ui/widgets/saccade-tiles.h"

typedef struct {
  GtkDropDown *run_dd;
  GtkAdjustment *layer, *head;
  SaccadeHeatmapView *view;
  SaccadeRun *run;            /* owned, or NULL while loading */
  GCancellable *loading;      /* non-NULL while a run loads */
} Side;

struct _SaccadeComparePage
{
  SaccadePage parent_instance;

  /* Template widgets */
  GtkStack *view_stack;
  GtkLabel *status_label;
  SaccadeHeatmapView *view_diff;
  GtkProgressBar *matrix_progress;
  SaccadeDistanceView *matrix_view;

  Side side[2];
  GArray *run_ids;            /* gint64 per entry of the run drop-downs */
  float *diff;                /* (n, n) A − B, or NULL */
  int diff_n;
  double distance;            /* of the pair; < 0: none */
  GCancellable *matrix_cancel;/* non-NULL while the matrix is computed */
  SaccadeDistanceResult *matrix;
  char **matrix_labels;       /* "L5.H2" */
  gint64 matrix_t0;           /* when the job started (for the time to a drawn matrix) */
  SaccadeCompareModels *models; /* the "Two models" view */
  gboolean updating;
};

static gboolean
showing_models (SaccadeComparePage *self)
{
  return g_strcmp0 (gtk_stack_get_visible_child_name (self->view_stack), "models") == 0;
}

G_DEFINE_FINAL_TYPE (SaccadeComparePage, saccade_compare_page, SACCADE_TYPE_PAGE)

static gboolean
same_tokens (SaccadeRun *a, SaccadeRun *b)
{
  if (a->n != b->n)
    return FALSE;
  for (int i = 0; i < a->n; i++)
    if (a->tokens[i].id != b->tokens[i].id)
      return FALSE;
  return TRUE;
}

static void
set_status (SaccadeComparePage *self)
{
  Side *a = &self->side[0], *b = &self->side[1];
  g_autofree char *text = NULL;

  if (showing_models (self))
    text = saccade_compare_models_dup_status (self->models);
  else if ((a->run != NULL && !a->run->resident) || (b->run != NULL && !b->run->resident))
    {
      SaccadeRun *run = a->run != NULL && !a->run->resident ? a->run : b->run;
      /* Translators: the Compare page on a long run. */
      text = g_strdup_printf (_("Compare and the distance matrix hold whole heads in memory: "
                                "they work on runs of up to %d tokens of this model, and run "
                                "%lld has %d. Open its heads on the Heatmap page."),
                              saccade_run_resident_max_tokens (run->n_layers, run->n_heads),
                              (long long) run->id, run->n);
    }
  else if (g_strcmp0 (gtk_stack_get_visible_child_name (self->view_stack), "matrix") == 0)
    {
      if (self->matrix_cancel != NULL)
        text = g_strdup (_("Computing the distance between every pair of heads…"));
      else if (self->matrix != NULL)
        /* Translators: the distance matrix's status: heads, seconds. */
        text = g_strdup_printf (_("%d heads in average-linkage order · computed in %.2f s · "
                                  "click a cell to compare the pair"),
                                self->matrix->n, self->matrix->seconds);
    }
  else if (a->run == NULL || b->run == NULL)
    text = g_strdup (a->loading != NULL || b->loading != NULL ? _("Loading the run…") : "");
  else if (self->diff == NULL)
    text = g_strdup (_("The two runs have different tokens: no difference is shown"));
  else
    /* Translators: the pair's head distance (Jensen–Shannon divergence, nats). */
    text = g_strdup_printf (_("A: L%d.H%d · B: L%d.H%d · JSD distance %.3f nats"),
                            (int) gtk_adjustment_get_value (a->layer),
                            (int) gtk_adjustment_get_value (a->head),
                            (int) gtk_adjustment_get_value (b->layer),
                            (int) gtk_adjustment_get_value (b->head), self->distance);
  gtk_label_set_text (self->status_label, text != NULL ? text : "");
}

/* Shows both sides and, with the same tokens, their difference and distance. */
static void
refresh_pair (SaccadeComparePage *self)
{
  const float *h[2] = { NULL, NULL };

  g_clear_pointer (&self->diff, g_free);
  self->distance = -1;
  for (int s = 0; s < 2; s++)
    {
      Side *d = &self->side[s];
      g_autofree char *title = NULL;
      int l, hd;

      if (d->run == NULL)
        {
          /* loading, or none: no figure and no title (the last one named another run) */
          saccade_heatmap_view_set_data (d->view, NULL, 0, 0, NULL, NULL, FALSE);
          saccade_heatmap_view_set_title (d->view, NULL);
          continue;
        }
      l = (int) gtk_adjustment_get_value (d->layer);
      hd = (int) gtk_adjustment_get_value (d->head);
      h[s] = saccade_run_head (d->run, l, hd);
      if (h[s] == NULL)
        {
          /* A long run: set_status() says why nothing is shown. */
          saccade_heatmap_view_set_data (d->view, NULL, 0, 0, NULL, NULL, FALSE);
          saccade_heatmap_view_set_title (d->view, NULL);
          continue;
        }
      saccade_heatmap_view_set_data (d->view, h[s], d->run->n, d->run->n,
                                     (const char *const *) d->run->labels,
                                     (const char *const *) d->run->labels, d->run->causal);
      /* Translators: a side of the Compare page: "A: run 3, L5.H2". */
      title = g_strdup_printf (_("%s: run %lld, L%d.H%d"), s == 0 ? "A" : "B",
                               (long long) d->run->id, l, hd);
      saccade_heatmap_view_set_title (d->view, title);
    }
  if (h[0] != NULL && h[1] != NULL && same_tokens (self->side[0].run, self->side[1].run))
    {
      int n = self->side[0].run->n;
      gsize k, nn = (gsize) n * n;
      ScError err = { 0 };

      self->diff = g_new (float, nn);
      self->diff_n = n;
      for (k = 0; k < nn; k++)
        self->diff[k] = h[0][k] - h[1][k];
      if (sc_head_distance (h[0], h[1], n, n, &self->distance, &err) != SC_OK)
        self->distance = -1;
      saccade_heatmap_view_set_data (self->view_diff, self->diff, n, n,
                                     (const char *const *) self->side[0].run->labels,
                                     (const char *const *) self->side[0].run->labels,
                                     self->side[0].run->causal && self->side[1].run->causal);
      saccade_heatmap_view_set_title (self->view_diff, _("A − B"));
      /* The colour bar says what the colours are: a difference of weights, not a weight. */
      saccade_heatmap_view_set_axis_names (self->view_diff, NULL, NULL, _("A − B"));
    }
  else
    saccade_heatmap_view_set_data (self->view_diff, NULL, 0, 0, NULL, NULL, FALSE);
  gtk_widget_set_visible (GTK_WIDGET (self->view_diff), self->diff != NULL);
  set_status (self);
}

static void
configure_side (SaccadeComparePage *self, Side *d)
{
  if (d->run == NULL && d->loading != NULL)
    return; /* the head chosen stays until the run it is of has loaded */
  self->updating = TRUE;
  gtk_adjustment_set_upper (d->layer, d->run != NULL ? d->run->n_layers - 1 : 0);
  gtk_adjustment_set_upper (d->head, d->run != NULL ? d->run->n_heads - 1 : 0);
  self->updating = FALSE;
}

static void
side_loaded (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  SaccadeRun *run = saccade_run_load_finish (result, &error);
  SaccadeComparePage *self;
  Side *d = user_data;

  if (run == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return; /* the page moved on (or went away): d may be gone */
  self = SACCADE_COMPARE_PAGE (source);
  g_clear_object (&d->loading);
  g_clear_pointer (&d->run, saccade_run_unref);
  d->run = run;
  if (run == NULL)
    gtk_label_set_text (self->status_label, error->message);
  configure_side (self, d);
  refresh_pair (self);
}

/* Side @d shows run @id: the run shown as it is, another loaded in the background. */
static void
side_set_run_id (SaccadeComparePage *self, Side *d, gint64 id)
{
  SaccadeRun *shown = saccade_page_get_run (SACCADE_PAGE (self));

  if (d->loading != NULL)
    {
      g_cancellable_cancel (d->loading);
      g_clear_object (&d->loading);
    }
  g_clear_pointer (&d->run, saccade_run_unref);
  if (shown != NULL && id == shown->id)
    d->run = saccade_run_ref (shown);
  else if (id > 0 && saccade_page_get_db_path (SACCADE_PAGE (self)) != NULL)
    {
      d->loading = g_cancellable_new ();
      saccade_run_load_async (self, saccade_page_get_db_path (SACCADE_PAGE (self)), id,
                              d->loading, side_loaded, d);
    }
  configure_side (self, d);
}

static void
run_selected (SaccadeComparePage *self, GParamSpec *pspec, GtkDropDown *dd)
{
  guint sel = gtk_drop_down_get_selected (dd);
  Side *d = dd == self->side[0].run_dd ? &self->side[0] : &self->side[1];

  if (self->updating || sel >= self->run_ids->len)
    return;
  side_set_run_id (self, d, g_array_index (self->run_ids, gint64, sel));
  refresh_pair (self);
}

static void
side_moved (SaccadeComparePage *self)
{
  if (!self->updating)
    refresh_pair (self);
}

/* The drop-downs list the database's runs of the same model as the run shown. */
static void
fill_runs (SaccadeComparePage *self, SaccadeRun *run)
{
  GListModel *runs = saccade_page_get_runs (SACCADE_PAGE (self));
  g_autoptr (GtkStringList) names = gtk_string_list_new (NULL);
  guint i, n = runs != NULL ? g_list_model_get_n_items (runs) : 0, shown = 0;

  g_array_set_size (self->run_ids, 0);
  for (i = 0; run != NULL && i < n; i++)
    {
      g_autoptr (SaccadeRunItem) item = g_list_model_get_item (runs, i);
      gint64 id = saccade_run_item_get_id (item);
      g_autofree char *name = NULL;

      if (g_strcmp0 (saccade_run_item_get_model_name (item), run->model_name) != 0)
        continue;
      if (id == run->id)
        shown = self->run_ids->len;
      name = saccade_page_dup_run_choice (id, saccade_run_item_get_title (item));
      gtk_string_list_append (names, name);
      g_array_append_val (self->run_ids, id);
    }
  if (run != NULL && self->run_ids->len == 0)
    {
      g_autofree char *name = saccade_page_dup_run_choice (run->id, run->text);
      gtk_string_list_append (names, name);
      g_array_append_val (self->run_ids, run->id);
    }
  self->updating = TRUE;
  for (int s = 0; s < 2; s++)
    {
      gtk_drop_down_set_model (self->side[s].run_dd, G_LIST_MODEL (names));
      gtk_drop_down_set_selected (self->side[s].run_dd, shown);
    }
  self->updating = FALSE;
}

/* ------------------------------------------------------------------------------------ */
/* The distance matrix                                                                   */

static void
matrix_progress (gpointer user_data, double fraction)
{
  SaccadeComparePage *self = user_data;

  gtk_progress_bar_set_fraction (self->matrix_progress, fraction);
}

/* The first frame after the matrix arrived: the time from the request to a drawn matrix. */
static gboolean
matrix_drawn (GtkWidget *widget, GdkFrameClock *clock, gpointer user_data)
{
  SaccadeComparePage *self = user_data;

  g_message ("distance matrix: %d heads, %.3f s from request to drawn (worker %.3f s)",
             self->matrix != NULL ? self->matrix->n : 0,
             (g_get_monotonic_time () - self->matrix_t0) / 1e6,
             self->matrix != NULL ? self->matrix->seconds : 0);
  return G_SOURCE_REMOVE;
}

static void
matrix_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  SaccadeComparePage *self = SACCADE_COMPARE_PAGE (source);
  SaccadeDistanceResult *r = saccade_distance_task_run_finish (result, &error);

  if (g_task_get_cancellable (G_TASK (result)) != self->matrix_cancel)
    {
      /* another run took its place, or the page went away (a matrix that finished before
       * the Cancel is of a run no longer shown) */
      saccade_distance_result_free (r);
      return;
    }
  g_clear_object (&self->matrix_cancel);
  gtk_widget_set_visible (GTK_WIDGET (self->matrix_progress), FALSE);
  g_clear_pointer (&self->matrix, saccade_distance_result_free);
  self->matrix = r;
  if (r == NULL)
    {
      gtk_label_set_text (self->status_label, error->message);
      return;
    }
  saccade_distance_view_set_data (self->matrix_view, r->n, r->values, r->order, r->merges,
                                  (const char *const *) self->matrix_labels,
                                  _("JSD (nats)"), _("nats"));
  gtk_widget_add_tick_callback (GTK_WIDGET (self->matrix_view), matrix_drawn, self, NULL);
  set_status (self);
}

static void
start_matrix (SaccadeComparePage *self, SaccadeRun *run)
{
  if (self->matrix_cancel != NULL)
    {
      g_cancellable_cancel (self->matrix_cancel);
      g_clear_object (&self->matrix_cancel);
    }
  g_clear_pointer (&self->matrix, saccade_distance_result_free);
  g_clear_pointer (&self->matrix_labels, g_strfreev);
  saccade_distance_view_set_data (self->matrix_view, 0, NULL, NULL, NULL, NULL, NULL, NULL);
  gtk_widget_set_visible (GTK_WIDGET (self->matrix_progress), run != NULL && run->resident);
  gtk_progress_bar_set_fraction (self->matrix_progress, 0);
  if (run == NULL || !run->resident)
    return; /* set_status() says why */
  self->matrix_labels = g_new0 (char *, run->n_layers * run->n_heads + 1);
  for (int k = 0; k < run->n_layers * run->n_heads; k++)
    self->matrix_labels[k] = g_strdup_printf ("L%d.H%d", k / run->n_heads, k % run->n_heads);
  self->matrix_cancel = g_cancellable_new ();
  self->matrix_t0 = g_get_monotonic_time ();
  saccade_distance_task_run_async (self, run, self->matrix_cancel, matrix_progress, self,
                                   matrix_done, NULL);
}

/* Side A shows head @a (layer * n_heads + head) of the run shown, side B head @b of run
 * @run_b (0: the run shown; a run of the drop-downs' list, else the run shown). */
static void
show_pair_of (SaccadeComparePage *self, int a, int b, gint64 run_b)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  int ab[2] = { a, b };
  guint shown = 0, other = GTK_INVALID_LIST_POSITION;

  if (run == NULL)
    return;
  fill_runs (self, run);
  for (guint i = 0; i < self->run_ids->len; i++)
    {
      if (g_array_index (self->run_ids, gint64, i) == run->id)
        shown = i;
      if (g_array_index (self->run_ids, gint64, i) == run_b)
        other = i;
    }
  for (int s = 0; s < 2; s++)
    {
      const guint pick = s == 1 && other != GTK_INVALID_LIST_POSITION ? other : shown;
      self->updating = TRUE;
      gtk_drop_down_set_selected (self->side[s].run_dd, pick);
      self->updating = FALSE;
      side_set_run_id (self, &self->side[s], g_array_index (self->run_ids, gint64, pick));
      self->updating = TRUE;
      gtk_adjustment_set_value (self->side[s].layer, ab[s] / run->n_heads);
      gtk_adjustment_set_value (self->side[s].head, ab[s] % run->n_heads);
      self->updating = FALSE;
    }
  gtk_stack_set_visible_child_name (self->view_stack, "pair");
  refresh_pair (self);
}

/* Both sides show heads @a and @b of the run shown. */
static void
show_pair (SaccadeComparePage *self, int a, int b)
{
  show_pair_of (self, a, b, 0);
}

static void
pair_activated (SaccadeComparePage *self, int a, int b)
{
  show_pair (self, a, b);
}

/* ------------------------------------------------------------------------------------ */
/* SaccadePage                                                                           */

static void
saccade_compare_page_set_run (SaccadePage *page, SaccadeRun *run)
{
  SaccadeComparePage *self = SACCADE_COMPARE_PAGE (page);
  int l = saccade_page_get_layer (page), h = saccade_page_get_head (page);

  const gboolean models = showing_models (self);

  fill_runs (self, run);
  saccade_compare_models_set_run (self->models, run);
  for (int s = 0; s < 2; s++)
    side_set_run_id (self, &self->side[s], run != NULL ? run->id : 0);
  if (run != NULL)
    {
      /* A: the head under the cursor; B: the next head of the same layer. */
      int b = (l * run->n_heads + h + 1) % (run->n_layers * run->n_heads);
      show_pair (self, l * run->n_heads + h, b);
      gtk_stack_set_visible_child_name (self->view_stack, models ? "models" : "pair");
    }
  else
    refresh_pair (self);
  start_matrix (self, run);
}

static char *
saccade_compare_page_dup_figure_title (SaccadePage *page)
{
  SaccadeComparePage *self = SACCADE_COMPARE_PAGE (page);
  SaccadeRun *run = saccade_page_get_run (page);
  g_autofree char *quote = NULL;

  if (showing_models (self))
    return saccade_compare_models_dup_title (self->models);
  if (run == NULL)
    return g_strdup ("");
  quote = saccade_page_dup_quoted_text (run);
  if (g_strcmp0 (gtk_stack_get_visible_child_name (self->view_stack), "matrix") == 0)
    /* Translators: the distance matrix's title begins so. */
    return saccade_page_dup_run_title (page, _("Head distance (JSD)"));
  /* Translators: the difference map's title: "L5.H2 − L7.H1 · “The cat…”". */
  return g_strdup_printf (_("L%d.H%d − L%d.H%d · %s"),
                          (int) gtk_adjustment_get_value (self->side[0].layer),
                          (int) gtk_adjustment_get_value (self->side[0].head),
                          (int) gtk_adjustment_get_value (self->side[1].layer),
                          (int) gtk_adjustment_get_value (self->side[1].head), quote);
}

static gboolean
no_data (GError **error)
{
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       _("There is nothing to export: the figure has no data"));
  return FALSE;
}

static gboolean
saccade_compare_page_export_figure (SaccadePage *page, const char *path, GError **error)
{
  SaccadeComparePage *self = SACCADE_COMPARE_PAGE (page);
  g_autofree char *title = saccade_compare_page_dup_figure_title (page);
  Side *a = &self->side[0];

  if (showing_models (self))
    return saccade_compare_models_export_figure (self->models, path, error);
  if (g_strcmp0 (gtk_stack_get_visible_child_name (self->view_stack), "matrix") == 0)
    {
      if (self->matrix == NULL)
        return no_data (error);
      return saccade_figure_export_distance (&(SaccadeDistanceFigure) {
        .n = self->matrix->n, .values = self->matrix->values, .order = self->matrix->order,
        .merges = self->matrix->merges, .labels = (const char *const *) self->matrix_labels,
        .value_name = _("JSD (nats)"), .title = title, .colormap = SACCADE_COLORMAP_VIRIDIS,
      }, path, NULL, error);
    }
  if (self->diff == NULL || a->run == NULL)
    return no_data (error);
  return saccade_figure_export_heatmap (&(SaccadeHeatmapFigure) {
    .values = self->diff, .n_rows = self->diff_n, .n_cols = self->diff_n,
    .row_labels = (const char *const *) a->run->labels,
    .col_labels = (const char *const *) a->run->labels, .title = title,
    .colormap = SACCADE_COLORMAP_RDBU, .causal = a->run->causal, .value_name = _("A − B"),
  }, path, NULL, error);
}

static gboolean
saccade_compare_page_export_csv (SaccadePage *page, const char *path, GError **error)
{
  SaccadeComparePage *self = SACCADE_COMPARE_PAGE (page);
  g_autoptr (GBytes) data = NULL;

  if (showing_models (self))
    return saccade_compare_models_export_csv (self->models, path, error);
  if (g_strcmp0 (gtk_stack_get_visible_child_name (self->view_stack), "matrix") == 0)
    {
      if (self->matrix == NULL)
        return no_data (error);
      data = saccade_export_distance_csv (self->matrix->n, self->matrix->values,
                                          self->matrix->order,
                                          (const char *const *) self->matrix_labels);
    }
  else
    {
      g_autofree double *d = NULL;
      gsize k, nn = (gsize) self->diff_n * self->diff_n;
      if (self->diff == NULL)
        return no_data (error);
      d = g_new (double, nn);
      for (k = 0; k < nn; k++)
        d[k] = self->diff[k];
      data = saccade_export_distance_csv (self->diff_n, d, NULL,
                                          (const char *const *) self->side[0].run->labels);
    }
  return saccade_export_write (data, path, error);
}

static gboolean
saccade_compare_page_is_busy (SaccadePage *page)
{
  SaccadeComparePage *self = SACCADE_COMPARE_PAGE (page);
  return self->matrix_cancel != NULL || self->side[0].loading != NULL
         || self->side[1].loading != NULL || saccade_compare_models_is_busy (self->models);
}

/* ------------------------------------------------------------------------------------ */
/* Actions                                                                               */

static void
view_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeComparePage *self = SACCADE_COMPARE_PAGE (widget);
  const char *view = g_variant_get_string (param, NULL);

  if (gtk_stack_get_child_by_name (self->view_stack, view) != NULL)
    gtk_stack_set_visible_child_name (self->view_stack, view);
}

static void
pair_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeComparePage *self = SACCADE_COMPARE_PAGE (widget);
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  int la, ha, lb, hb, n;
  gint64 run_b = 0;

  if (run != NULL
      && (n = sscanf (g_variant_get_string (param, NULL), "%d.%d %d.%d %" G_GINT64_FORMAT,
                      &la, &ha, &lb, &hb, &run_b)) >= 4)
    show_pair_of (self, la * run->n_heads + ha, lb * run->n_heads + hb, n == 5 ? run_b : 0);
}

static void
models_b_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeComparePage *self = SACCADE_COMPARE_PAGE (widget);

  gtk_stack_set_visible_child_name (self->view_stack, "models");
  saccade_compare_models_set_b (self->models, g_variant_get_string (param, NULL));
}

static void
models_colour_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeComparePage *self = SACCADE_COMPARE_PAGE (widget);

  if (!saccade_compare_models_set_colour (self->models, g_variant_get_string (param, NULL)))
    g_warning ("page.models-colour: no colouring '%s'", g_variant_get_string (param, NULL));
}

/* The "Two models" view's status or busy state changed. */
static void
models_changed (SaccadePage *page)
{
  set_status (SACCADE_COMPARE_PAGE (page));
}

static void
activate_cell_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeComparePage *self = SACCADE_COMPARE_PAGE (widget);
  int a, b;

  if (self->matrix != NULL && sscanf (g_variant_get_string (param, NULL), "%d %d", &a, &b) == 2
      && a >= 0 && b >= 0 && a < self->matrix->n && b < self->matrix->n)
    g_signal_emit_by_name (self->matrix_view, "pair-activated", a, b);
}

/* ------------------------------------------------------------------------------------ */
/* GObject                                                                               */

static void
saccade_compare_page_dispose (GObject *object)
{
  SaccadeComparePage *self = SACCADE_COMPARE_PAGE (object);

  for (int s = 0; s < 2; s++)
    {
      if (self->side[s].loading != NULL)
        g_cancellable_cancel (self->side[s].loading);
      g_clear_object (&self->side[s].loading);
      g_clear_pointer (&self->side[s].run, saccade_run_unref);
    }
  saccade_job_cancel_clear (&self->matrix_cancel);
  g_clear_pointer (&self->models, saccade_compare_models_free);
  gtk_widget_dispose_template (GTK_WIDGET (object), SACCADE_TYPE_COMPARE_PAGE);
  G_OBJECT_CLASS (saccade_compare_page_parent_class)->dispose (object);
}

static void
saccade_compare_page_finalize (GObject *object)
{
  SaccadeComparePage *self = SACCADE_COMPARE_PAGE (object);

  g_array_unref (self->run_ids);
  g_free (self->diff);
  saccade_distance_result_free (self->matrix);
  g_strfreev (self->matrix_labels);
  G_OBJECT_CLASS (saccade_compare_page_parent_class)->finalize (object);
}

static void
saccade_compare_page_class_init (SaccadeComparePageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  SaccadePageClass *page_class = SACCADE_PAGE_CLASS (klass);

  object_class->dispose = saccade_compare_page_dispose;
  object_class->finalize = saccade_compare_page_finalize;
  page_class->set_run = saccade_compare_page_set_run;
  page_class->dup_figure_title = saccade_compare_page_dup_figure_title;
  page_class->export_figure = saccade_compare_page_export_figure;
  page_class->export_csv = saccade_compare_page_export_csv;
  page_class->is_busy = saccade_compare_page_is_busy;

  gtk_widget_class_install_action (widget_class, "page.view", "s", view_action);
  gtk_widget_class_install_action (widget_class, "page.pair", "s", pair_action);
  gtk_widget_class_install_action (widget_class, "page.activate-cell", "s",
                                   activate_cell_action);
  gtk_widget_class_install_action (widget_class, "page.models-b", "s", models_b_action);
  gtk_widget_class_install_action (widget_class, "page.models-colour", "s",
                                   models_colour_action);

  g_type_ensure (SACCADE_TYPE_HEATMAP_VIEW);
  g_type_ensure (SACCADE_TYPE_DISTANCE_VIEW);
  g_type_ensure (SACCADE_TYPE_TILES); /* A, B and A − B in a row, or A and B over A − B */
  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/saccade/Saccade/pages/saccade-compare-page.ui");
#define CHILD(name) gtk_widget_class_bind_template_child (widget_class, SaccadeComparePage, name)
  CHILD (view_stack);
  CHILD (status_label);
  CHILD (view_diff);
  CHILD (matrix_progress);
  CHILD (matrix_view);
#undef CHILD
  /* Each side's widgets, side[0] from "run_a" … "view_a", side[1] from "run_b" … "view_b". */
  static const char *const names[][4] = { { "run_a", "layer_a", "head_a", "view_a" },
                                           { "run_b", "layer_b", "head_b", "view_b" } };
  G_STATIC_ASSERT (G_N_ELEMENTS (names) == G_N_ELEMENTS (((SaccadeComparePage *) NULL)->side));
  for (guint k = 0; k < G_N_ELEMENTS (names); k++)
    {
      gssize side = G_STRUCT_OFFSET (SaccadeComparePage, side) + (gssize) (k * sizeof (Side));

      gtk_widget_class_bind_template_child_full (widget_class, names[k][0], FALSE,
                                                 side + G_STRUCT_OFFSET (Side, run_dd));
      gtk_widget_class_bind_template_child_full (widget_class, names[k][1], FALSE,
                                                 side + G_STRUCT_OFFSET (Side, layer));
      gtk_widget_class_bind_template_child_full (widget_class, names[k][2], FALSE,
                                                 side + G_STRUCT_OFFSET (Side, head));
      gtk_widget_class_bind_template_child_full (widget_class, names[k][3], FALSE,
                                                 side + G_STRUCT_OFFSET (Side, view));
    }
}

static void
saccade_compare_page_init (SaccadeComparePage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->run_ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  self->distance = -1;
  self->models = saccade_compare_models_new (SACCADE_PAGE (self), models_changed);
  gtk_stack_add_titled (self->view_stack, saccade_compare_models_widget (self->models), "models",
                        _("Two models"));
  saccade_page_set_figure (SACCADE_PAGE (self), GTK_WIDGET (self->matrix_view));
  saccade_heatmap_view_set_colormap (self->view_diff, SACCADE_COLORMAP_RDBU);
  for (int s = 0; s < 2; s++)
    {
      saccade_page_run_dropdown_init (self->side[s].run_dd);
      g_signal_connect_swapped (self->side[s].run_dd, "notify::selected",
                                G_CALLBACK (run_selected), self);
      g_signal_connect_swapped (self->side[s].layer, "value-changed", G_CALLBACK (side_moved),
                                self);
      g_signal_connect_swapped (self->side[s].head, "value-changed", G_CALLBACK (side_moved),
                                self);
    }
  g_signal_connect_swapped (self->matrix_view, "pair-activated", G_CALLBACK (pair_activated),
                            self);
  g_signal_connect_swapped (self->view_stack, "notify::visible-child-name",
                            G_CALLBACK (set_status), self);
}
