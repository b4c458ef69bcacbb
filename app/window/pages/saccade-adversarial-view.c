/* saccade-adversarial-view.c — the Attribution page's adversarial attention view (see
 * saccade-adversarial-view.h).
 *
 * Two kinds of background job, each saccade_adversarial_async() on the page's
 * SaccadeLoadedModel (app/core/saccade-adversarial.h):
 *   1. the lookup, when the run, model or a setting changes: STORED_ONLY (no session lock,
 *      no pass run), so a stored study is on screen at once — its curve only, the store
 *      keeping no rows;
 *   2. Search: the study searched (or read back) with the settings, its progress coalesced
 *      onto the bar, Cancel stopping it at the engine's next step.
 * SaccadeStudyJobs (app/window/studies/saccade-study-jobs.h) keeps both, the bar, Cancel
 * and the status line: a job that finishes after the source changed, or after another
 * request, is dropped (its cancellable is no longer the view's). The widgets are built here, not from a template:
 * the view is one row of settings over a drawing area.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-adversarial-view.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/saccade-adversarial.h"
#include "app/core/saccade-export.h"
#include "app/window/pages/saccade-page.h"
#include "app/window/studies/saccade-study-jobs.h"

/* Adam steps per ε the spin button allows: 1 .. this (the default, 100, is the engine's;
 * 10,000 steps of a whole layer take minutes on two cores). */
#define MAX_ITERATIONS 10000

struct _SaccadeAdversarialView
{
  GtkBox parent_instance;

  GtkSpinButton *layer_spin;
  GtkDropDown *head_dropdown;     /* "All heads", then heads 0 .. n_heads − 1 */
  GtkStringList *head_names;
  GtkSpinButton *iter_spin;
  GtkWidget *search_button, *cancel_button;
  GtkProgressBar *progress_bar;
  GtkLabel *status_label, *reading_label;
  GtkDrawingArea *area;

  SaccadeRun *run;                /* owned reference, or NULL */
  SaccadeLoadedModel *model;      /* owned reference, or NULL */
  char *db_path;
  SaccadeStudyJobs *jobs;         /* Search's job and the stored study's lookup */
  SaccadeAdversarial *result;
  gboolean in_source;             /* set_source is setting the widgets: no lookups */
};

G_DEFINE_FINAL_TYPE (SaccadeAdversarialView, saccade_adversarial_view, GTK_TYPE_BOX)

enum { PROP_0, PROP_STATUS, PROP_FRACTION, N_PROPS };
static GParamSpec *props[N_PROPS];

static gboolean search (SaccadeAdversarialView *self);

static void
update_actions (SaccadeAdversarialView *self)
{
  const gboolean busy = saccade_study_jobs_get_running (self->jobs);
  const gboolean can = self->model != NULL && self->run != NULL && self->db_path != NULL;

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "adversarial.search", can && !busy);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "adversarial.cancel", busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->layer_spin), !busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->head_dropdown), !busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->iter_spin), !busy);
}

static void
current_params (SaccadeAdversarialView *self, ScAdvParams *p)
{
  const guint head = gtk_drop_down_get_selected (self->head_dropdown);

  saccade_adversarial_params_init (p);
  p->layer = gtk_spin_button_get_value_as_int (self->layer_spin);
  p->head = head == 0 || head == GTK_INVALID_LIST_POSITION ? -1 : (int) head - 1;
  p->iterations = gtk_spin_button_get_value_as_int (self->iter_spin);
}

/* ------------------------------------------------------------------------------------ */
/* Showing the result                                                                    */

static const char *const *
result_labels (SaccadeAdversarialView *self)
{
  if (self->run != NULL && self->result != NULL && self->run->n == self->result->n_tokens)
    return (const char *const *) self->run->labels;
  return NULL;
}

static void
show_idle_status (SaccadeAdversarialView *self)
{
  const SaccadeAdversarial *a = self->result;
  g_autofree char *text = NULL;

  if (a != NULL && a->reused)
    /* Translators: the study shown was read back; the store keeps no attention rows. */
    text = g_strdup_printf (_("Study %lld, read from the database: the curve only (Search "
                              "again to see the rows)"), (long long) a->study_id);
  else if (a != NULL && a->study_id > 0)
    text = g_strdup_printf (_("Searched in %.1f s · study %lld"), a->seconds,
                            (long long) a->study_id);
  else if (a != NULL)
    text = g_strdup_printf (_("Searched in %.1f s (not stored)"), a->seconds);
  else if (self->run == NULL)
    text = g_strdup (_("Select a run"));
  else if (self->model == NULL)
    text = g_strdup (_("The model is not loaded yet"));
  else
    text = g_strdup (_("Not searched with these settings yet: press Search"));
  saccade_study_jobs_set_status (self->jobs, text);
}

static void
show_result (SaccadeAdversarialView *self)
{
  g_autofree char *reading = NULL;

  if (self->result != NULL)
    reading = saccade_adversarial_reading (self->result, TRUE);
  gtk_label_set_text (self->reading_label, reading != NULL ? reading : "");
  gtk_widget_set_visible (GTK_WIDGET (self->reading_label), reading != NULL);
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
  show_idle_status (self);
}

/* The figure of the study shown into @fig, its arrays (n_tokens each) in @buf (caller
 * frees); FALSE without a study. */
static gboolean
make_figure (SaccadeAdversarialView *self, char **title, char **label, SaccadeAdvSeries *series,
             double **buf, SaccadeAdversarialFigure *fig)
{
  const int n = self->result != NULL ? self->result->n_tokens : 0;

  if (self->result == NULL)
    return FALSE;
  *title = saccade_adversarial_title (self->result);
  *label = saccade_adversarial_label (self->result, TRUE);
  *buf = g_new (double, 2 * (gsize) n);
  saccade_adversarial_figure (self->result, *label, result_labels (self), *title, series, *buf,
                              *buf + n, fig);
  return TRUE;
}

static void
draw (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeAdversarialView *self = data;
  g_autofree char *title = NULL, *label = NULL;
  g_autofree double *buf = NULL;
  SaccadeAdvSeries series;
  SaccadeAdversarialFigure f;
  SaccadeFigureStyle style;

  if (!make_figure (self, &title, &label, &series, &buf, &f))
    return;
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  saccade_figure_adversarial_draw (cr, &f, &style, width, height);
}

/* ------------------------------------------------------------------------------------ */
/* Jobs                                                                                  */

static void
stop_jobs (SaccadeAdversarialView *self)
{
  saccade_study_jobs_stop (self->jobs);
}

static void
lookup_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SaccadeAdversarialView *self = SACCADE_ADVERSARIAL_VIEW (source);
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeAdversarial) a = saccade_study_face_finish (result, &error);

  if (!saccade_study_jobs_finish_lookup (self->jobs, result))
    return;
  if (a != NULL)
    {
      g_clear_pointer (&self->result, saccade_adversarial_free);
      self->result = g_steal_pointer (&a);
      show_result (self);
    }
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
    saccade_study_jobs_set_status (self->jobs, error->message);
  else
    show_idle_status (self);
}

static void
look_up (SaccadeAdversarialView *self)
{
  ScAdvParams p;

  if (self->in_source)
    return;
  stop_jobs (self);
  g_clear_pointer (&self->result, saccade_adversarial_free);
  show_result (self);
  update_actions (self);
  if (self->model == NULL || self->run == NULL || self->db_path == NULL)
    return;
  current_params (self, &p);
  saccade_study_face_async (&saccade_adversarial_face, self, self->model, self->db_path,
                            self->run->id, &p, SACCADE_STUDY_STORED_ONLY,
                            saccade_study_jobs_lookup (self->jobs), NULL, NULL, lookup_done,
                            NULL);
}

static char *
progress_text (gpointer owner, double fraction)
{
  if (fraction < 0)
    return g_strdup (_("Searching for adversarial attention…"));
  /* Translators: the search's progress, in percent. */
  return g_strdup_printf (_("Searching for adversarial attention… %.0f %%"), 100.0 * fraction);
}

static void
job_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SaccadeAdversarialView *self = SACCADE_ADVERSARIAL_VIEW (source);
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeAdversarial) a = saccade_study_face_finish (result, &error);

  if (!saccade_study_jobs_finish_job (self->jobs, result))
    return; /* another source or request took its place */
  update_actions (self);
  if (a == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        saccade_study_jobs_set_status (self->jobs, _("Cancelled"));
      else
        saccade_study_jobs_set_status (self->jobs, error->message);
      return;
    }
  g_clear_pointer (&self->result, saccade_adversarial_free);
  self->result = g_steal_pointer (&a);
  show_result (self);
}

static gboolean
search (SaccadeAdversarialView *self)
{
  ScAdvParams p;
  SaccadeStudyFlags flags = SACCADE_STUDY_DEFAULT;
  GCancellable *job;

  if (self->model == NULL || self->run == NULL || self->db_path == NULL
      || saccade_study_jobs_get_running (self->jobs))
    {
      show_idle_status (self);
      return FALSE;
    }
  /* A study read back has no rows: Search on it searches again to show them. */
  if (self->result != NULL && self->result->reused)
    flags = SACCADE_STUDY_RECOMPUTE;
  current_params (self, &p);
  stop_jobs (self);
  job = saccade_study_jobs_start (self->jobs, progress_text, self);
  update_actions (self);
  saccade_study_face_async (&saccade_adversarial_face, self, self->model, self->db_path,
                            self->run->id, &p, flags, job, saccade_study_jobs_progress,
                            self->jobs, job_done, NULL);
  return TRUE;
}

static void
search_action (GtkWidget *widget, const char *name, GVariant *param)
{
  search (SACCADE_ADVERSARIAL_VIEW (widget));
}

static void
cancel_action (GtkWidget *widget, const char *name, GVariant *param)
{
  saccade_study_jobs_cancel (SACCADE_ADVERSARIAL_VIEW (widget)->jobs);
}

/* ------------------------------------------------------------------------------------ */
/* The page's side                                                                       */

void
saccade_adversarial_view_set_source (SaccadeAdversarialView *self, SaccadeRun *run,
                                     SaccadeLoadedModel *model, const char *db_path)
{
  int n_layers = 1, n_heads = 0;

  g_return_if_fail (SACCADE_IS_ADVERSARIAL_VIEW (self));
  stop_jobs (self);
  if (run != self->run)
    {
      g_clear_pointer (&self->run, saccade_run_unref);
      self->run = run != NULL ? saccade_run_ref (run) : NULL;
    }
  g_set_object (&self->model, model);
  if (g_strcmp0 (db_path, self->db_path) != 0)
    {
      g_free (self->db_path);
      self->db_path = g_strdup (db_path);
    }
  if (run != NULL)
    {
      n_layers = run->n_layers;
      n_heads = run->n_heads;
    }
  self->in_source = TRUE;
  {
    /* The pickers follow the run's shape, keeping the choice when it still fits; a new
     * shape starts at its last layer, every head. */
    const int old_layers = (int) gtk_adjustment_get_upper (
                             gtk_spin_button_get_adjustment (self->layer_spin)) + 1;
    const guint old_heads = g_list_model_get_n_items (G_LIST_MODEL (self->head_names));
    gtk_spin_button_set_range (self->layer_spin, 0, MAX (0, n_layers - 1));
    if (old_layers != n_layers)
      gtk_spin_button_set_value (self->layer_spin, MAX (0, n_layers - 1));
    if (old_heads != (guint) n_heads + 1)
      {
        gtk_string_list_splice (self->head_names, 1, old_heads - 1, NULL);
        for (int h = 0; h < n_heads; h++)
          {
            /* Translators: an entry of the head picker. */
            g_autofree char *name = g_strdup_printf (_("Head %d"), h);
            gtk_string_list_append (self->head_names, name);
          }
        gtk_drop_down_set_selected (self->head_dropdown, 0);
      }
  }
  self->in_source = FALSE;
  look_up (self);
}

/* adversarial.layer, adversarial.head, adversarial.iterations: what their pickers do. */
static void
option_action (GtkWidget *widget, const char *action, GVariant *param)
{
  SaccadeAdversarialView *self = SACCADE_ADVERSARIAL_VIEW (widget);
  const char *value = g_variant_get_string (param, NULL);
  const guint n_items = g_list_model_get_n_items (G_LIST_MODEL (self->head_names));
  guint64 n;

  if (g_str_equal (action, "adversarial.layer")
      && g_ascii_string_to_unsigned (value, 10, 0,
                                     (guint64) gtk_adjustment_get_upper (
                                       gtk_spin_button_get_adjustment (self->layer_spin)),
                                     &n, NULL))
    gtk_spin_button_set_value (self->layer_spin, (double) n);
  else if (g_str_equal (action, "adversarial.head") && g_str_equal (value, "all"))
    gtk_drop_down_set_selected (self->head_dropdown, 0);
  else if (g_str_equal (action, "adversarial.head") && n_items > 1
           && g_ascii_string_to_unsigned (value, 10, 0, n_items - 2, &n, NULL))
    gtk_drop_down_set_selected (self->head_dropdown, (guint) n + 1);
  else if (g_str_equal (action, "adversarial.iterations")
           && g_ascii_string_to_unsigned (value, 10, 1, MAX_ITERATIONS, &n, NULL))
    gtk_spin_button_set_value (self->iter_spin, (double) n);
  else
    g_warning ("the adversarial view's %s takes no '%s'", action, value);
}

gboolean
saccade_adversarial_view_is_busy (SaccadeAdversarialView *self)
{
  g_return_val_if_fail (SACCADE_IS_ADVERSARIAL_VIEW (self), FALSE);
  return saccade_study_jobs_get_busy (self->jobs);
}

char *
saccade_adversarial_view_dup_title (SaccadeAdversarialView *self)
{
  g_return_val_if_fail (SACCADE_IS_ADVERSARIAL_VIEW (self), NULL);
  return self->result != NULL ? saccade_adversarial_title (self->result) : g_strdup ("");
}

static gboolean
no_result (SaccadeAdversarialView *self, GError **error)
{
  if (self->result != NULL)
    return FALSE;
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       _("There is nothing to export: press Search first"));
  return TRUE;
}

gboolean
saccade_adversarial_view_export_figure (SaccadeAdversarialView *self, const char *path,
                                        GError **error)
{
  g_autofree char *title = NULL, *label = NULL;
  g_autofree double *buf = NULL;
  SaccadeAdvSeries series;
  SaccadeAdversarialFigure f;

  g_return_val_if_fail (SACCADE_IS_ADVERSARIAL_VIEW (self), FALSE);
  if (no_result (self, error))
    return FALSE;
  make_figure (self, &title, &label, &series, &buf, &f);
  return saccade_figure_export_adversarial (&f, path, error);
}

gboolean
saccade_adversarial_view_export_csv (SaccadeAdversarialView *self, const char *path,
                                     GError **error)
{
  g_autoptr (GBytes) data = NULL;

  g_return_val_if_fail (SACCADE_IS_ADVERSARIAL_VIEW (self), FALSE);
  if (no_result (self, error))
    return FALSE;
  data = saccade_adversarial_csv (self->result);
  return saccade_export_write (data, path, error);
}

/* ------------------------------------------------------------------------------------ */
/* Widget                                                                                */

static GtkWidget *
mnemonic_label (const char *text, GtkWidget *target, int margin_start)
{
  GtkWidget *label = gtk_label_new_with_mnemonic (text);

  gtk_label_set_mnemonic_widget (GTK_LABEL (label), target);
  gtk_widget_set_margin_start (label, margin_start);
  return label;
}

static void
saccade_adversarial_view_get_property (GObject *object, guint prop_id, GValue *value,
                                       GParamSpec *pspec)
{
  SaccadeAdversarialView *self = SACCADE_ADVERSARIAL_VIEW (object);

  switch (prop_id)
    {
    case PROP_STATUS:
      g_value_set_string (value, saccade_study_jobs_get_status (self->jobs));
      break;
    case PROP_FRACTION:
      g_value_set_double (value, saccade_study_jobs_get_fraction (self->jobs));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
saccade_adversarial_view_dispose (GObject *object)
{
  SaccadeAdversarialView *self = SACCADE_ADVERSARIAL_VIEW (object);

  if (self->jobs != NULL)
    stop_jobs (self);
  g_clear_object (&self->jobs);
  g_clear_pointer (&self->result, saccade_adversarial_free);
  g_clear_pointer (&self->run, saccade_run_unref);
  g_clear_object (&self->model);
  g_clear_pointer (&self->db_path, g_free);
  G_OBJECT_CLASS (saccade_adversarial_view_parent_class)->dispose (object);
}

static void
saccade_adversarial_view_class_init (SaccadeAdversarialViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  const GParamFlags flags = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->dispose = saccade_adversarial_view_dispose;
  object_class->get_property = saccade_adversarial_view_get_property;
  /* SaccadeAdversarialView:status: the status line. :fraction: of the running search, 0
   * when none runs. */
  props[PROP_STATUS] = g_param_spec_string ("status", NULL, NULL, "", flags);
  props[PROP_FRACTION] = g_param_spec_double ("fraction", NULL, NULL, 0, 1, 0, flags);
  g_object_class_install_properties (object_class, N_PROPS, props);
  gtk_widget_class_install_action (widget_class, "adversarial.search", NULL, search_action);
  gtk_widget_class_install_action (widget_class, "adversarial.cancel", NULL, cancel_action);
  gtk_widget_class_install_action (widget_class, "adversarial.layer", "s", option_action);
  gtk_widget_class_install_action (widget_class, "adversarial.head", "s", option_action);
  gtk_widget_class_install_action (widget_class, "adversarial.iterations", "s", option_action);
}

static void
saccade_adversarial_view_init (SaccadeAdversarialView *self)
{
  GtkWidget *bar = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6), *spacer, *export;
  GtkStringList *heads;

  gtk_orientable_set_orientation (GTK_ORIENTABLE (self), GTK_ORIENTATION_VERTICAL);
  gtk_widget_add_css_class (bar, "saccade-toolbar");

  self->layer_spin = GTK_SPIN_BUTTON (gtk_spin_button_new_with_range (0, 0, 1));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->layer_spin),
                               _("The layer whose attention is searched"));
  /* Translators: "All heads" searches every head of the layer at once. */
  heads = gtk_string_list_new ((const char *const[]) { _("All heads"), NULL });
  self->head_names = heads;
  self->head_dropdown = GTK_DROP_DOWN (gtk_drop_down_new (G_LIST_MODEL (heads), NULL));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->head_dropdown),
                               _("One head, or every head of the layer at once"));
  self->iter_spin = GTK_SPIN_BUTTON (gtk_spin_button_new_with_range (1, MAX_ITERATIONS, 10));
  gtk_spin_button_set_value (self->iter_spin, SC_ADV_DEFAULT_ITERATIONS);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->iter_spin),
                               _("Adam steps per ε (each a forward and, while the output "
                                 "moves too far, a backward pass)"));
  self->search_button = gtk_button_new_with_mnemonic (_("_Search"));
  gtk_widget_add_css_class (self->search_button, "suggested-action");
  gtk_widget_set_margin_start (self->search_button, 6);
  gtk_widget_set_tooltip_text (self->search_button,
                               _("Search for attention as far as possible from the original "
                                 "while the next-token distribution moves less than ε "
                                 "(0.001 to 0.1)"));
  self->progress_bar = GTK_PROGRESS_BAR (gtk_progress_bar_new ());
  gtk_widget_set_valign (GTK_WIDGET (self->progress_bar), GTK_ALIGN_CENTER);
  gtk_widget_set_size_request (GTK_WIDGET (self->progress_bar), 120, -1);
  self->cancel_button = gtk_button_new_from_icon_name ("process-stop-symbolic");
  gtk_widget_add_css_class (self->cancel_button, "flat");
  gtk_widget_set_tooltip_text (self->cancel_button, _("Cancel"));
  spacer = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
  gtk_widget_set_hexpand (spacer, TRUE);
  /* as the gradient attributions' toolbar: the window's export, of the view shown */
  export = gtk_button_new_from_icon_name ("document-save-symbolic");
  gtk_widget_set_tooltip_text (export, _("Export Figure… (Ctrl+E)"));
  gtk_actionable_set_action_name (GTK_ACTIONABLE (export), "win.export-figure");

  /* Translators: the adversarial view's settings (mnemonics). */
  gtk_box_append (GTK_BOX (bar), mnemonic_label (_("_Layer"), GTK_WIDGET (self->layer_spin), 0));
  gtk_box_append (GTK_BOX (bar), GTK_WIDGET (self->layer_spin));
  gtk_box_append (GTK_BOX (bar), mnemonic_label (_("H_ead"), GTK_WIDGET (self->head_dropdown), 6));
  gtk_box_append (GTK_BOX (bar), GTK_WIDGET (self->head_dropdown));
  gtk_box_append (GTK_BOX (bar),
                  mnemonic_label (_("_Iterations"), GTK_WIDGET (self->iter_spin), 6));
  gtk_box_append (GTK_BOX (bar), GTK_WIDGET (self->iter_spin));
  gtk_box_append (GTK_BOX (bar), self->search_button);
  gtk_box_append (GTK_BOX (bar), GTK_WIDGET (self->progress_bar));
  gtk_box_append (GTK_BOX (bar), self->cancel_button);
  gtk_box_append (GTK_BOX (bar), spacer);
  gtk_box_append (GTK_BOX (bar), export);
  gtk_box_append (GTK_BOX (self), bar);

  self->status_label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (self->status_label, 0);
  gtk_label_set_ellipsize (self->status_label, PANGO_ELLIPSIZE_END);
  gtk_widget_set_margin_start (GTK_WIDGET (self->status_label), 12);
  gtk_widget_set_margin_end (GTK_WIDGET (self->status_label), 12);
  gtk_widget_set_margin_top (GTK_WIDGET (self->status_label), 4);
  gtk_widget_set_margin_bottom (GTK_WIDGET (self->status_label), 2);
  gtk_widget_add_css_class (GTK_WIDGET (self->status_label), "dim-label");
  gtk_box_append (GTK_BOX (self), GTK_WIDGET (self->status_label));

  self->area = GTK_DRAWING_AREA (gtk_drawing_area_new ());
  gtk_widget_set_hexpand (GTK_WIDGET (self->area), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self->area), TRUE);
  gtk_drawing_area_set_draw_func (self->area, draw, self, NULL);
  gtk_box_append (GTK_BOX (self), GTK_WIDGET (self->area));

  self->reading_label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_xalign (self->reading_label, 0);
  gtk_label_set_wrap (self->reading_label, TRUE);
  gtk_label_set_selectable (self->reading_label, TRUE);
  gtk_widget_set_margin_start (GTK_WIDGET (self->reading_label), 12);
  gtk_widget_set_margin_end (GTK_WIDGET (self->reading_label), 12);
  gtk_widget_set_margin_top (GTK_WIDGET (self->reading_label), 6);
  gtk_widget_set_margin_bottom (GTK_WIDGET (self->reading_label), 6);
  gtk_box_append (GTK_BOX (self), GTK_WIDGET (self->reading_label));

  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->search_button), "adversarial.search");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->cancel_button), "adversarial.cancel");
  self->jobs = saccade_study_jobs_new (self->status_label, self->progress_bar,
                                       self->cancel_button);
  saccade_study_jobs_forward (self->jobs, G_OBJECT (self), props[PROP_STATUS],
                              props[PROP_FRACTION]);
  /* Other settings may have a stored study: show it, or say there is none. */
  g_signal_connect_swapped (self->layer_spin, "value-changed", G_CALLBACK (look_up), self);
  g_signal_connect_swapped (self->head_dropdown, "notify::selected", G_CALLBACK (look_up), self);
  g_signal_connect_swapped (self->iter_spin, "value-changed", G_CALLBACK (look_up), self);
  show_result (self);
  update_actions (self);
}
