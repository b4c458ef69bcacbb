/* saccade-induction-page.c — the Induction page (see saccade-induction-page.h).
 *
 * Two background jobs, each a GTask of app/core/saccade-capture-task.h on the window's
 * SaccadeLoadedModel, so the model's session is used by one job at a time (its lock):
 *
 *   1. the study (saccade_induction_async: saccade_induction_get() in a worker, reading
 *      the open database first and storing what it computes there); progress reaches the
 *      page's bar coalesced, Cancel stops it at the next layer;
 *   2. the repeated sequence of seed 0 captured as a run of the open database
 *      (saccade_capture_ids_async), the first time a head is clicked; the run's id is kept
 *      for later clicks on the same result and database. Then win.show-run-head selects
 *      the run and opens the head in the Heatmap page.
 *
 * A job that finishes after the model or the database changed, or after another request,
 * is dropped (its cancellable no longer matches). The result belongs to the model it was
 * computed on; a new model clears it.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-induction-page.h"

#include <glib/gi18n.h>

#include "app/core/saccade-export.h"
#include "app/core/saccade-job.h"
#include "app/window/pages/saccade-induction-table.h"
#include "ui/widgets/saccade-heatmap-view.h"
#include "ui/widgets/saccade-loss-view.h"

enum { FIGURE_LOSS, FIGURE_MAP };

struct _SaccadeInductionPage
{
  SaccadePage parent_instance;

  /* Template widgets */
  GtkSpinButton *len_spin;
  GtkSpinButton *seeds_spin;
  GtkProgressBar *progress_bar;
  GtkWidget *cancel_button;
  GtkLabel *status_label;
  GtkDropDown *figure_dropdown;
  SaccadeHeatmapView *map_view;
  SaccadeInductionTable *table;
  SaccadeLossView *loss_view;

  /* Owned */
  GCancellable *job;          /* the study, while it runs */
  GCancellable *capture;      /* the sequence's capture, while it runs */
  SaccadeInduction *result;   /* the shown study, or NULL */
  char *model_name;           /* of the model the result is about */
  char *result_db;            /* the database the sequence's run went to */
  gint64 seq_run;             /* seed 0's sequence as a run of result_db, or 0 */
  int open_layer, open_head;  /* the head to open when the capture is done */
};

G_DEFINE_FINAL_TYPE (SaccadeInductionPage, saccade_induction_page, SACCADE_TYPE_PAGE)

enum { PROP_0, PROP_STATUS, N_PROPS };
static GParamSpec *props[N_PROPS];

/* Every change of the status line goes through here, so "status" is notified. */
static void
set_status (SaccadeInductionPage *self, const char *text)
{
  if (g_strcmp0 (gtk_label_get_text (self->status_label), text) == 0)
    return;
  gtk_label_set_text (self->status_label, text);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_STATUS]);
}

static void
update_actions (SaccadeInductionPage *self)
{
  SaccadeLoadedModel *model = saccade_page_get_model (SACCADE_PAGE (self));
  gboolean busy = self->job != NULL;

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "page.find-heads", model != NULL && !busy);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "page.find", model != NULL && !busy);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "page.cancel",
                                 busy || self->capture != NULL);
  gtk_widget_set_visible (GTK_WIDGET (self->progress_bar), busy || self->capture != NULL);
  gtk_widget_set_visible (self->cancel_button, busy || self->capture != NULL);
  gtk_widget_set_sensitive (GTK_WIDGET (self->len_spin), !busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->seeds_spin), !busy);
}

/* What the status line says when nothing runs. */
static void
show_idle_status (SaccadeInductionPage *self)
{
  SaccadeLoadedModel *model = saccade_page_get_model (SACCADE_PAGE (self));
  g_autofree char *text = NULL;

  if (self->result != NULL)
    {
      const SaccadeInduction *ind = self->result;
      if (ind->source.reused)
        /* Translators: the detector's result was read back from the database. */
        text = g_strdup_printf (_("From study %lld"), (long long) ind->source.study_id);
      else if (ind->source.study_id > 0)
        text = g_strdup_printf (_("Computed now in %.1f s · study %lld"),
                                ind->source.seconds, (long long) ind->source.study_id);
      else
        text = g_strdup_printf (_("Computed now in %.1f s (not stored)"), ind->source.seconds);
    }
  else if (model == NULL)
    text = g_strdup (_("The model is not loaded yet"));
  else
    text = g_strdup_printf (_("Find Heads runs %s on random tokens repeated twice"),
                            saccade_loaded_model_get_name (model));
  set_status (self, text);
}

static char *
map_title (SaccadeInductionPage *self)
{
  /* Translators: the score map's title: the model's name. */
  return g_strdup_printf (_("Prefix matching by layer and head · %s"), self->model_name);
}

/* The map's cells: prefix matching with heads as rows and layers as columns, the way the
 * Model page's grid and the Ablation page's maps lay out a model (caller frees). */
static float *
map_cells (const ScInductionResult *r)
{
  float *cells = g_new (float, (gsize) r->n_layers * r->n_heads);

  for (int l = 0; l < r->n_layers; l++)
    for (int h = 0; h < r->n_heads; h++)
      cells[(gsize) h * r->n_layers + l] = (float) r->heads[l * r->n_heads + h].prefix_matching;
  return cells;
}

static void
show_result (SaccadeInductionPage *self)
{
  const SaccadeInduction *ind = self->result;
  g_autofree float *cells = NULL;
  g_autofree char *title = NULL, *loss_title = NULL;
  SaccadeLossFigure f;

  saccade_induction_table_set_result (self->table, ind);
  if (ind == NULL)
    {
      saccade_heatmap_view_set_data (self->map_view, NULL, 0, 0, NULL, NULL, FALSE);
      saccade_heatmap_view_set_title (self->map_view, NULL);
      saccade_loss_view_set_data (self->loss_view, 0, NULL, 0, 0, 0, 0, NULL);
      saccade_loss_view_set_title (self->loss_view, NULL);
      show_idle_status (self);
      return;
    }
  cells = map_cells (ind->result);
  title = map_title (self);
  saccade_heatmap_view_set_data (self->map_view, cells, ind->result->n_heads,
                                 ind->result->n_layers, NULL, NULL, FALSE);
  saccade_heatmap_view_set_title (self->map_view, title);
  loss_title = saccade_induction_dup_loss_title (ind, self->model_name);
  saccade_induction_loss_figure (ind, loss_title, &f);
  saccade_loss_view_set_data (self->loss_view, f.n, f.values, f.first_start, f.boundary,
                              f.mean_first, f.mean_second, f.value_name);
  saccade_loss_view_set_title (self->loss_view, loss_title);
  show_idle_status (self);
}

/* Drops the result and stops both jobs (a new model or database). */
static void
reset (SaccadeInductionPage *self)
{
  saccade_job_cancel_clear (&self->job);
  saccade_job_cancel_clear (&self->capture);
  g_clear_pointer (&self->result, saccade_induction_free);
  g_clear_pointer (&self->result_db, g_free);
  self->seq_run = 0;
  show_result (self);
  update_actions (self);
}

/* ------------------------------------------------------------------------------------ */
/* The study                                                                             */

static void
study_progress (gpointer user_data, double fraction)
{
  SaccadeInductionPage *self = user_data;
  g_autofree char *text = NULL;

  if (self->job == NULL)
    return;
  gtk_progress_bar_set_fraction (self->progress_bar, fraction);
  /* Translators: the detector's progress, in percent. */
  text = g_strdup_printf (_("Running the detector… %.0f %%"), 100.0 * fraction);
  set_status (self, text);
}

static void
study_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SaccadeInductionPage *self = SACCADE_INDUCTION_PAGE (source);
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeInduction) ind = saccade_induction_finish (result, &error);

  if (g_task_get_cancellable (G_TASK (result)) != self->job)
    return; /* another model, database or request took its place */
  g_clear_object (&self->job);
  update_actions (self);
  if (ind == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        set_status (self, _("Cancelled"));
      else
        set_status (self, error->message);
      return;
    }
  g_clear_pointer (&self->result, saccade_induction_free);
  self->result = g_steal_pointer (&ind);
  self->seq_run = 0;
  show_result (self);
}

/* Runs the detector with @seq_len and @n_seeds, shown in the spin buttons. */
static void
find (SaccadeInductionPage *self, int seq_len, int n_seeds)
{
  SaccadeLoadedModel *model = saccade_page_get_model (SACCADE_PAGE (self));
  const ScInductionParams params = { seq_len, n_seeds };

  gtk_spin_button_set_value (self->len_spin, seq_len);
  gtk_spin_button_set_value (self->seeds_spin, n_seeds);
  if (model == NULL || self->job != NULL)
    return;
  self->job = g_cancellable_new ();
  g_free (self->model_name);
  self->model_name = g_strdup (saccade_loaded_model_get_name (model));
  gtk_progress_bar_set_fraction (self->progress_bar, 0.0);
  set_status (self, _("Running the detector…"));
  update_actions (self);
  saccade_induction_async (self, model, saccade_page_get_db_path (SACCADE_PAGE (self)), &params,
                           self->job, study_progress, self, study_done, NULL);
}

static void
find_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeInductionPage *self = SACCADE_INDUCTION_PAGE (widget);

  if (param != NULL)
    {
      int seq_len, n_seeds;
      g_variant_get (param, "(ii)", &seq_len, &n_seeds);
      find (self, seq_len, n_seeds);
    }
  else
    find (self, gtk_spin_button_get_value_as_int (self->len_spin),
          gtk_spin_button_get_value_as_int (self->seeds_spin));
}

static void
cancel_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeInductionPage *self = SACCADE_INDUCTION_PAGE (widget);

  if (self->job != NULL)
    g_cancellable_cancel (self->job);
  if (self->capture != NULL)
    g_cancellable_cancel (self->capture);
}

/* ------------------------------------------------------------------------------------ */
/* Opening a head on the repeated sequence                                               */

static void
open_on_run (SaccadeInductionPage *self)
{
  gtk_widget_activate_action (GTK_WIDGET (self), "win.show-run-head", "(xii)",
                              (gint64) self->seq_run, self->open_layer, self->open_head);
}

static void
capture_progress (gpointer user_data, int layers_done, int n_layers)
{
  SaccadeInductionPage *self = user_data;

  if (self->capture != NULL && n_layers > 0)
    gtk_progress_bar_set_fraction (self->progress_bar, (double) layers_done / n_layers);
}

static void
capture_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SaccadeInductionPage *self = SACCADE_INDUCTION_PAGE (source);
  g_autoptr (GError) error = NULL;
  gint64 run_id = saccade_capture_finish (result, &error);

  if (g_task_get_cancellable (G_TASK (result)) != self->capture)
    return;
  g_clear_object (&self->capture);
  update_actions (self);
  if (run_id <= 0)
    {
      set_status (self, g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED)
                          ? _("Cancelled") : error->message);
      return;
    }
  self->seq_run = run_id;
  g_free (self->result_db);
  self->result_db = g_strdup (saccade_page_get_db_path (SACCADE_PAGE (self)));
  show_idle_status (self);
  open_on_run (self);
}

/* Opens head (@layer, @head) on the repeated sequence, capturing it first if needed. FALSE
 * when there is no result yet, or its capture is still running. */
static gboolean
open_head (SaccadeInductionPage *self, int layer, int head)
{
  SaccadeLoadedModel *model = saccade_page_get_model (SACCADE_PAGE (self));
  const char *db = saccade_page_get_db_path (SACCADE_PAGE (self));
  const ScInductionResult *r;

  if (self->result == NULL || model == NULL || db == NULL || self->capture != NULL)
    return FALSE;
  r = self->result->result;
  self->open_layer = CLAMP (layer, 0, r->n_layers - 1);
  self->open_head = CLAMP (head, 0, r->n_heads - 1);
  if (self->seq_run > 0 && g_strcmp0 (self->result_db, db) == 0)
    {
      open_on_run (self);
      return TRUE;
    }
  self->capture = g_cancellable_new ();
  gtk_progress_bar_set_fraction (self->progress_bar, 0.0);
  set_status (self, _("Capturing the repeated sequence (seed 0)…"));
  update_actions (self);
  saccade_capture_ids_async (self, model, db, r->ids, r->n_tokens, self->capture,
                             capture_progress, self, capture_done, NULL);
  return TRUE;
}

static void
head_activated (SaccadeInductionPage *self, int layer, int head)
{
  open_head (self, layer, head);
}

/* A click on the map's cell (head, layer). */
static void
map_activated (SaccadeInductionPage *self, int head, int layer)
{
  open_head (self, layer, head);
}

/* page.open-head ((ii): layer, head), what a click on the head does; refused with a warning
 * when there is no result to open a head of. */
static void
open_head_action (GtkWidget *widget, const char *name, GVariant *param)
{
  int layer, head;

  g_variant_get (param, "(ii)", &layer, &head);
  if (!open_head (SACCADE_INDUCTION_PAGE (widget), layer, head))
    g_warning ("the Induction page has no result to open L%d.H%d of", layer, head);
}

/* ------------------------------------------------------------------------------------ */
/* SaccadePage                                                                           */

static void
saccade_induction_page_set_model (SaccadePage *page, SaccadeLoadedModel *model)
{
  reset (SACCADE_INDUCTION_PAGE (page));
}

static char *
saccade_induction_page_dup_figure_title (SaccadePage *page)
{
  SaccadeInductionPage *self = SACCADE_INDUCTION_PAGE (page);

  if (self->result == NULL)
    return g_strdup ("");
  if (gtk_drop_down_get_selected (self->figure_dropdown) == FIGURE_MAP)
    return map_title (self);
  return saccade_induction_dup_loss_title (self->result, self->model_name);
}

static gboolean
no_result (SaccadeInductionPage *self, GError **error)
{
  if (self->result != NULL)
    return FALSE;
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       _("There is nothing to export: press Find Heads first"));
  return TRUE;
}

static gboolean
saccade_induction_page_export_figure (SaccadePage *page, const char *path, GError **error)
{
  SaccadeInductionPage *self = SACCADE_INDUCTION_PAGE (page);
  g_autofree char *title = NULL;
  g_autofree float *cells = NULL;
  const ScInductionResult *r;

  if (no_result (self, error))
    return FALSE;
  title = saccade_induction_page_dup_figure_title (page);
  r = self->result->result;
  if (gtk_drop_down_get_selected (self->figure_dropdown) != FIGURE_MAP)
    {
      SaccadeLossFigure f;
      saccade_induction_loss_figure (self->result, title, &f);
      return saccade_figure_export_loss (&f, path, NULL, error);
    }
  cells = map_cells (r);
  return saccade_figure_export_heatmap (&(SaccadeHeatmapFigure) {
    .values = cells, .n_rows = r->n_heads, .n_cols = r->n_layers, .title = title,
    .colormap = SACCADE_COLORMAP_VIRIDIS, .scale = SACCADE_SCALE_LINEAR,
    .row_name = _("Head"), .col_name = _("Layer"), .value_name = _("prefix matching"),
  }, path, NULL, error);
}

static gboolean
saccade_induction_page_export_csv (SaccadePage *page, const char *path, GError **error)
{
  SaccadeInductionPage *self = SACCADE_INDUCTION_PAGE (page);
  g_autoptr (GBytes) data = NULL;

  if (no_result (self, error))
    return FALSE;
  data = saccade_export_induction_csv (self->result);
  return saccade_export_write (data, path, error);
}

static gboolean
saccade_induction_page_is_busy (SaccadePage *page)
{
  SaccadeInductionPage *self = SACCADE_INDUCTION_PAGE (page);

  return self->job != NULL || self->capture != NULL;
}

static void
saccade_induction_page_get_property (GObject *object, guint prop_id, GValue *value,
                                     GParamSpec *pspec)
{
  SaccadeInductionPage *self = SACCADE_INDUCTION_PAGE (object);

  switch (prop_id)
    {
    case PROP_STATUS:
      g_value_set_string (value, gtk_label_get_text (self->status_label));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
saccade_induction_page_dispose (GObject *object)
{
  SaccadeInductionPage *self = SACCADE_INDUCTION_PAGE (object);

  saccade_job_cancel_clear (&self->job);
  saccade_job_cancel_clear (&self->capture);
  g_clear_pointer (&self->result, saccade_induction_free);
  g_clear_pointer (&self->model_name, g_free);
  g_clear_pointer (&self->result_db, g_free);
  gtk_widget_dispose_template (GTK_WIDGET (object), SACCADE_TYPE_INDUCTION_PAGE);
  G_OBJECT_CLASS (saccade_induction_page_parent_class)->dispose (object);
}

static void
saccade_induction_page_class_init (SaccadeInductionPageClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  SaccadePageClass *page_class = SACCADE_PAGE_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = saccade_induction_page_dispose;
  G_OBJECT_CLASS (klass)->get_property = saccade_induction_page_get_property;
  page_class->set_model = saccade_induction_page_set_model;
  page_class->dup_figure_title = saccade_induction_page_dup_figure_title;
  page_class->export_figure = saccade_induction_page_export_figure;
  page_class->export_csv = saccade_induction_page_export_csv;
  page_class->is_busy = saccade_induction_page_is_busy;
  props[PROP_STATUS] = g_param_spec_string ("status", NULL, NULL, "",
                                            G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY
                                              | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (G_OBJECT_CLASS (klass), N_PROPS, props);
  gtk_widget_class_install_action (widget_class, "page.find-heads", NULL, find_action);
  gtk_widget_class_install_action (widget_class, "page.find", "(ii)", find_action);
  gtk_widget_class_install_action (widget_class, "page.open-head", "(ii)", open_head_action);
  gtk_widget_class_install_action (widget_class, "page.cancel", NULL, cancel_action);

  g_type_ensure (SACCADE_TYPE_HEATMAP_VIEW);
  g_type_ensure (SACCADE_TYPE_INDUCTION_TABLE);
  g_type_ensure (SACCADE_TYPE_LOSS_VIEW);
  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/saccade/Saccade/pages/saccade-induction-page.ui");
#define CHILD(name) gtk_widget_class_bind_template_child (widget_class, SaccadeInductionPage, name)
  CHILD (len_spin);
  CHILD (seeds_spin);
  CHILD (progress_bar);
  CHILD (cancel_button);
  CHILD (status_label);
  CHILD (figure_dropdown);
  CHILD (map_view);
  CHILD (table);
  CHILD (loss_view);
#undef CHILD
}

static void
saccade_induction_page_init (SaccadeInductionPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  saccade_page_set_figure (SACCADE_PAGE (self), GTK_WIDGET (self->map_view));
  saccade_heatmap_view_set_axis_names (self->map_view, _("Head"), _("Layer"),
                                       _("prefix matching"));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->status_label),
                               _("Click a head in the map or the table to open it on the "
                                 "repeated sequence"));
  g_signal_connect_swapped (self->map_view, "cell-activated", G_CALLBACK (map_activated), self);
  g_signal_connect_swapped (self->table, "head-activated", G_CALLBACK (head_activated), self);
  show_result (self);
  update_actions (self);
}
