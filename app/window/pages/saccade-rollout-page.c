/* saccade-rollout-page.c — the Rollout page (see saccade-rollout-page.h).
 *
 * One GTask per request computes the rollout (engine/analysis/sc-rollout.h: L products of
 * (n, n) matrices, about 4·10^9 multiply-adds at n = 512 for SmolLM2, seconds) and, when
 * the bars show flow, the flow into the last position (a max-flow per input token). Flow
 * above SC_FLOW_MAX_NODES nodes is refused by the engine; its message is shown in the page
 * and the rollout stays. A job that finishes after another run was shown is dropped (its
 * cancellable no longer matches). Export: the map through the shared exporter
 * (SACCADE_EXPORT_ROLLOUT, the same as `saccade export --figure rollout`), the bars' values
 * as CSV.
 *
 * "Without the first token" rolls out (and flows) the attention with key 0 removed from
 * every row and the rows renormalised (ScRolloutOptions.exclude_first, as `saccade rollout
 * --exclude-first`): rolled out through every layer, the raw weights pile their mass on the
 * first token, the attention sink. The title, the bars' caption and the CSV's column say
 * which attention went in.
 *
 * Its own actions: page.bars (s: "rollout", "flow"), page.first-token (s: "kept",
 * "excluded").
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-rollout-page.h"

#include <glib/gi18n.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-export.h"
#include "app/core/saccade-job.h"
#include "engine/analysis/sc-rollout.h"
#include "ui/widgets/saccade-background.h"
#include "ui/widgets/saccade-bars-view.h"
#include "ui/widgets/saccade-heatmap-view.h"

typedef struct {
  int n;
  gboolean exclude_first;     /* computed without the first token */
  double *rollout;            /* (n, n) */
  double *flow;               /* (n), or NULL */
  char *flow_error;           /* why there is no flow, or NULL */
} RolloutResult;

static void
rollout_result_free (RolloutResult *r)
{
  if (r == NULL)
    return;
  g_free (r->rollout);
  g_free (r->flow);
  g_free (r->flow_error);
  g_free (r);
}

struct _SaccadeRolloutPage
{
  SaccadePage parent_instance;

  /* Template widgets */
  GtkDropDown *bars_dropdown;
  GtkCheckButton *first_check;
  GtkLabel *status_label;
  GtkSpinner *spinner;
  SaccadeHeatmapView *map_view;
  SaccadeBarsView *bars_view;

  GCancellable *job;          /* non-NULL while computing */
  RolloutResult *result;
};

G_DEFINE_FINAL_TYPE (SaccadeRolloutPage, saccade_rollout_page, SACCADE_TYPE_PAGE)

static gboolean
want_flow (SaccadeRolloutPage *self)
{
  return gtk_drop_down_get_selected (self->bars_dropdown) == 1;
}

static gboolean
exclude_first (SaccadeRolloutPage *self)
{
  return gtk_check_button_get_active (self->first_check);
}

static void
worker (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  SaccadeRun *run = task_data;
  gboolean flow = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (task), "saccade-flow"));
  const ScRolloutOptions opt = {
    .exclude_first = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (task),
                                                         "saccade-exclude-first")) != 0,
  };
  RolloutResult *r = g_new0 (RolloutResult, 1);
  g_autofree const float **layers = g_new (const float *, run->n_layers);
  ScError err = { 0 };
  GError *error = NULL;

  for (int l = 0; l < run->n_layers; l++)
    layers[l] = saccade_run_layer (run, l);
  r->n = run->n;
  r->exclude_first = opt.exclude_first;
  r->rollout = g_new (double, (gsize) run->n * run->n);
  if (sc_attention_rollout_with (layers, run->n_layers, run->n_heads, run->n, &opt, r->rollout,
                                 &err) != SC_OK)
    {
      saccade_set_error_from_sc (&error, &err);
      rollout_result_free (r);
      g_task_return_error (task, error);
      return;
    }
  if (flow && !g_cancellable_is_cancelled (cancellable))
    {
      r->flow = g_new (double, run->n);
      if (sc_attention_flow_with (layers, run->n_layers, run->n_heads, run->n, &opt,
                                  run->n - 1, r->flow, &err) != SC_OK)
        {
          g_clear_pointer (&r->flow, g_free);
          r->flow_error = g_strdup (err.message);
        }
    }
  g_task_return_pointer (task, r, (GDestroyNotify) rollout_result_free);
}

static void
show_result (SaccadeRolloutPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  RolloutResult *r = self->result;
  g_autofree float *cells = NULL;
  g_autofree char *title = NULL;
  gsize k, nn;

  if (run == NULL || r == NULL)
    {
      /* nothing shown: no title either (the previous run's would name the wrong sentence) */
      saccade_heatmap_view_set_data (self->map_view, NULL, 0, 0, NULL, NULL, FALSE);
      saccade_heatmap_view_set_title (self->map_view, NULL);
      saccade_bars_view_set_data (self->bars_view, 0, NULL, NULL, NULL);
      return;
    }
  nn = (gsize) r->n * r->n;
  cells = g_new (float, nn);
  for (k = 0; k < nn; k++)
    cells[k] = (float) r->rollout[k];
  title = saccade_page_dup_figure_title (SACCADE_PAGE (self));
  saccade_heatmap_view_set_data (self->map_view, cells, r->n, r->n,
                                 (const char *const *) run->labels,
                                 (const char *const *) run->labels, run->causal);
  saccade_heatmap_view_set_title (self->map_view, title);
  if (want_flow (self) && r->flow != NULL)
    saccade_bars_view_set_data (self->bars_view, r->n, r->flow,
                                (const char *const *) run->labels,
                                r->exclude_first
                                  /* Translators: the bars' caption without the first token
                                   * (the sink); short: it stands on a short axis. */
                                  ? _("Flow (no token 0)") : _("Flow"));
  else
    saccade_bars_view_set_data (self->bars_view, r->n, r->rollout + (gsize) (r->n - 1) * r->n,
                                (const char *const *) run->labels,
                                r->exclude_first ? _("Rollout (no token 0)")
                                                 : _("Rollout"));
  gtk_label_set_text (self->status_label,
                      want_flow (self) && r->flow_error != NULL ? r->flow_error : "");
}

static void
job_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  RolloutResult *r = g_task_propagate_pointer (G_TASK (result), &error);
  SaccadeRolloutPage *self = SACCADE_ROLLOUT_PAGE (source);

  if (g_task_get_cancellable (G_TASK (result)) != self->job)
    {
      rollout_result_free (r);
      return; /* another run or request took its place */
    }
  g_clear_object (&self->job);
  gtk_spinner_stop (self->spinner);
  if (r == NULL)
    {
      gtk_label_set_text (self->status_label, error->message);
      return;
    }
  g_clear_pointer (&self->result, rollout_result_free);
  self->result = r;
  show_result (self);
}

static void
start_job (SaccadeRolloutPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  g_autoptr (GTask) task = NULL;

  saccade_job_cancel_clear (&self->job);
  if (run == NULL)
    return;
  if (!run->resident)
    {
      g_autofree char *text = g_strdup_printf (
        /* Translators: the Rollout page on a long run. */
        _("Rollout and flow need every head of the run at once: they are computed for runs "
          "of up to %d tokens of this model, and this run has %d. Choose a shorter run, or "
          "export the heads (saccade export RUN --all) for a notebook."),
        saccade_run_resident_max_tokens (run->n_layers, run->n_heads), run->n);
      gtk_label_set_text (self->status_label, text);
      return;
    }
  self->job = g_cancellable_new ();
  task = g_task_new (self, self->job, job_done, NULL);
  g_task_set_task_data (task, saccade_run_ref (run), (GDestroyNotify) saccade_run_unref);
  g_object_set_data (G_OBJECT (task), "saccade-flow", GINT_TO_POINTER (want_flow (self)));
  g_object_set_data (G_OBJECT (task), "saccade-exclude-first",
                     GINT_TO_POINTER (exclude_first (self)));
  gtk_spinner_start (self->spinner);
  gtk_label_set_text (self->status_label, want_flow (self) ? _("Computing rollout and flow…")
                                                           : _("Computing the rollout…"));
  saccade_background_run (task, worker);
}

static void
saccade_rollout_page_set_run (SaccadePage *page, SaccadeRun *run)
{
  SaccadeRolloutPage *self = SACCADE_ROLLOUT_PAGE (page);

  g_clear_pointer (&self->result, rollout_result_free);
  show_result (self);
  start_job (self);
}

static void
bars_selected (SaccadeRolloutPage *self)
{
  if (want_flow (self) && (self->result == NULL || (self->result->flow == NULL
                                                    && self->result->flow_error == NULL)))
    start_job (self);
  else
    show_result (self);
}

static void
first_toggled (SaccadeRolloutPage *self)
{
  /* the shown result was computed with the other attention: it goes, its title with it */
  g_clear_pointer (&self->result, rollout_result_free);
  show_result (self);
  start_job (self);
}

static char *
saccade_rollout_page_dup_figure_title (SaccadePage *page)
{
  return saccade_page_dup_run_title (page, exclude_first (SACCADE_ROLLOUT_PAGE (page))
                                             /* Translators: the rollout map's title begins
                                              * so when the sink is left out. */
                                             ? _("Attention rollout, first token excluded")
                                             /* Translators: the rollout map's title begins
                                              * so. */
                                             : _("Attention rollout"));
}

static gboolean
saccade_rollout_page_export_figure (SaccadePage *page, const char *path, GError **error)
{
  g_autoptr (SaccadeExportSource) src = NULL;
  g_autofree char *title = saccade_rollout_page_dup_figure_title (page);

  if ((src = saccade_page_new_export_source (page, error)) == NULL)
    return FALSE;
  return saccade_export_figure (src, &(SaccadeExportFigure) {
    .kind = SACCADE_EXPORT_ROLLOUT, .title = title, .colormap = SACCADE_COLORMAP_MAGMA,
    .scale = SACCADE_SCALE_LINEAR, .exclude_first = exclude_first (SACCADE_ROLLOUT_PAGE (page)),
  }, path, error);
}

static gboolean
saccade_rollout_page_export_csv (SaccadePage *page, const char *path, GError **error)
{
  SaccadeRolloutPage *self = SACCADE_ROLLOUT_PAGE (page);
  SaccadeRun *run = saccade_page_get_run (page);
  RolloutResult *r = self->result;
  g_autoptr (SaccadeExportSource) src = NULL;
  g_autoptr (GBytes) data = NULL;
  gboolean flow = want_flow (self) && r != NULL && r->flow != NULL;

  if (run == NULL || r == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("There is nothing to export: the figure has no data"));
      return FALSE;
    }
  if ((src = saccade_export_source_new_for_run (run, error)) == NULL)
    return FALSE;
  data = saccade_export_values_csv (src, flow ? r->flow : r->rollout + (gsize) (r->n - 1) * r->n,
                                    flow ? (r->exclude_first ? "flow_first_excluded" : "flow")
                                         : (r->exclude_first ? "rollout_first_excluded"
                                                             : "rollout"));
  return saccade_export_write (data, path, error);
}

static gboolean
saccade_rollout_page_is_busy (SaccadePage *page)
{
  return SACCADE_ROLLOUT_PAGE (page)->job != NULL;
}

static void
bars_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeRolloutPage *self = SACCADE_ROLLOUT_PAGE (widget);

  gtk_drop_down_set_selected (self->bars_dropdown,
                              g_str_equal (g_variant_get_string (param, NULL), "flow") ? 1 : 0);
}

static void
first_token_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeRolloutPage *self = SACCADE_ROLLOUT_PAGE (widget);

  gtk_check_button_set_active (self->first_check,
                               g_str_equal (g_variant_get_string (param, NULL), "excluded"));
}

static void
saccade_rollout_page_dispose (GObject *object)
{
  SaccadeRolloutPage *self = SACCADE_ROLLOUT_PAGE (object);

  saccade_job_cancel_clear (&self->job);
  g_clear_pointer (&self->result, rollout_result_free);
  gtk_widget_dispose_template (GTK_WIDGET (object), SACCADE_TYPE_ROLLOUT_PAGE);
  G_OBJECT_CLASS (saccade_rollout_page_parent_class)->dispose (object);
}

static void
saccade_rollout_page_class_init (SaccadeRolloutPageClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  SaccadePageClass *page_class = SACCADE_PAGE_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = saccade_rollout_page_dispose;
  page_class->set_run = saccade_rollout_page_set_run;
  page_class->dup_figure_title = saccade_rollout_page_dup_figure_title;
  page_class->export_figure = saccade_rollout_page_export_figure;
  page_class->export_csv = saccade_rollout_page_export_csv;
  page_class->is_busy = saccade_rollout_page_is_busy;
  gtk_widget_class_install_action (widget_class, "page.bars", "s", bars_action);
  gtk_widget_class_install_action (widget_class, "page.first-token", "s", first_token_action);

  g_type_ensure (SACCADE_TYPE_HEATMAP_VIEW);
  g_type_ensure (SACCADE_TYPE_BARS_VIEW);
  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/saccade/Saccade/pages/saccade-rollout-page.ui");
#define CHILD(name) gtk_widget_class_bind_template_child (widget_class, SaccadeRolloutPage, name)
  CHILD (bars_dropdown);
  CHILD (first_check);
  CHILD (status_label);
  CHILD (spinner);
  CHILD (map_view);
  CHILD (bars_view);
#undef CHILD
}

static void
saccade_rollout_page_init (SaccadeRolloutPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  saccade_page_set_figure (SACCADE_PAGE (self), GTK_WIDGET (self->map_view));
  saccade_heatmap_view_set_colormap (self->map_view, SACCADE_COLORMAP_MAGMA);
  saccade_bars_view_set_colormap (self->bars_view, SACCADE_COLORMAP_MAGMA);
  g_signal_connect_swapped (self->bars_dropdown, "notify::selected", G_CALLBACK (bars_selected),
                            self);
  g_signal_connect_swapped (self->first_check, "toggled", G_CALLBACK (first_toggled), self);
}
