/* saccade-attribution-page.c — the Attribution page (see saccade-attribution-page.h).
 *
 * Two kinds of background job, each saccade_attribution_async() on the window's
 * SaccadeLoadedModel (app/core/saccade-attribution.h):
 *   1. the lookup, when a run or model is set: STORED_ONLY with the settings shown (no
 *      session lock, no pass run), so a stored study is on screen at once;
 *   2. Run: the study computed (or read back) with the settings, its progress coalesced onto
 *      the bar, Cancel stopping it at the engine's next pass.
 * SaccadeStudyJobs (app/window/studies/saccade-study-jobs.h) keeps both, the bar, Cancel
 * and the status line: a job that finishes after the run, the model or the database
 * changed, or after another request, is dropped (its cancellable is no longer the page's). The figure is drawn by
 * saccade_figure_attribution_draw_full() in the theme's colours; export draws the same
 * figure in the export style. The "Adversarial attention" view beside it
 * (saccade-adversarial-view.c) runs its own jobs; the page forwards it the run, model and
 * database, and exports its figure and CSV while it is the view shown.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-attribution-page.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/saccade-attribution.h"
#include "app/core/saccade-export.h"
#include "app/core/saccade-model.h"
#include "app/window/pages/saccade-adversarial-view.h"
#include "app/window/studies/saccade-study-jobs.h"

/* The table's columns before the methods: position, token, attention, leave-one-out. */
#define FIXED_COLUMNS 4

struct _SaccadeAttributionPage
{
  SaccadePage parent_instance;

  /* Template widgets */
  GtkSpinButton *steps_spin;
  GtkDropDown *rule_dropdown;
  GtkEntry *baseline_entry;
  GtkEntry *target_entry;
  GtkProgressBar *progress_bar;
  GtkWidget *cancel_button;
  GtkLabel *status_label;
  GtkDrawingArea *area;
  GtkLabel *complete_label;
  GtkGrid *table;
  GtkStack *stack;               /* "attributions" or "adversarial" */
  SaccadeAdversarialView *adversarial_view;

  /* Owned */
  SaccadeStudyJobs *jobs;        /* Run's job and the stored study's lookup */
  SaccadeAttribution *result;    /* the study shown, or NULL */
  int hover;                     /* the token under the pointer, or -1 */
  SaccadeAttributionGeometry geom;
};

G_DEFINE_FINAL_TYPE (SaccadeAttributionPage, saccade_attribution_page, SACCADE_TYPE_PAGE)

enum { PROP_0, PROP_STATUS, PROP_FRACTION, PROP_ADVERSARIAL_VIEW, N_PROPS };
static GParamSpec *props[N_PROPS];

static void
update_actions (SaccadeAttributionPage *self)
{
  SaccadePage *page = SACCADE_PAGE (self);
  const gboolean busy = saccade_study_jobs_get_running (self->jobs);
  const gboolean can = saccade_page_get_model (page) != NULL && saccade_page_get_run (page) != NULL
                       && saccade_page_get_db_path (page) != NULL;

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "page.attribute", can && !busy);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "page.cancel", busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->steps_spin), !busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->rule_dropdown), !busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->baseline_entry), !busy);
  gtk_widget_set_sensitive (GTK_WIDGET (self->target_entry), !busy);
}

static ScModel *
page_model (SaccadeAttributionPage *self)
{
  SaccadeLoadedModel *model = saccade_page_get_model (SACCADE_PAGE (self));

  return model != NULL ? saccade_loaded_model_get_model (model) : NULL;
}

/* One token of the loaded model from @text: -1 for an empty text; FALSE with the reason on
 * the status line when it is not one token. @what names the entry ("target", "baseline"). */
static gboolean
parse_token (SaccadeAttributionPage *self, GtkEntry *entry, const char *what, int32_t *out)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (entry));
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) ids = NULL;

  *out = -1;
  if (text == NULL || *text == '\0' || page_model (self) == NULL)
    return TRUE;
  ids = saccade_tokenize (page_model (self), text, -1, FALSE, &error);
  if (ids == NULL)
    {
      saccade_study_jobs_set_status (self->jobs, error->message);
      return FALSE;
    }
  if (ids->len != 1)
    {
      /* Translators: "target" or "baseline", the typed text, its number of tokens. */
      g_autofree char *msg = g_strdup_printf (_("The %s “%s” is %u tokens: type one token"),
                                              what, text, ids->len);
      saccade_study_jobs_set_status (self->jobs, msg);
      return FALSE;
    }
  *out = g_array_index (ids, int32_t, 0);
  return TRUE;
}

/* The settings shown as study parameters; FALSE (reason on the status line) when a typed
 * token is not one token. */
static gboolean
current_params (SaccadeAttributionPage *self, ScAttrParams *p)
{
  int32_t baseline;

  saccade_attribution_params_init (p);
  p->steps = gtk_spin_button_get_value_as_int (self->steps_spin);
  /* the dropdown lists the rules in ScAttrRule's order */
  p->rule = (ScAttrRule) MIN (gtk_drop_down_get_selected (self->rule_dropdown),
                              SC_ATTR_N_RULES - 1);
  /* Translators: names of the entries in "The %s “%s” is %u tokens". */
  if (!parse_token (self, self->target_entry, _("target"), &p->target)
      || !parse_token (self, self->baseline_entry, _("baseline"), &baseline))
    return FALSE;
  if (baseline >= 0)
    {
      p->baseline = SC_ATTR_BASELINE_TOKEN;
      p->baseline_token = baseline;
    }
  return TRUE;
}

/* ------------------------------------------------------------------------------------ */
/* Showing the result                                                                    */

static char *
dup_title (SaccadeAttributionPage *self)
{
  g_autofree char *target = NULL;

  if (self->result == NULL)
    return g_strdup ("");
  if (page_model (self) != NULL)
    target = saccade_attribution_token_label (page_model (self), self->result->result->target);
  return saccade_attribution_title (self->result, target);
}

static void
show_idle_status (SaccadeAttributionPage *self)
{
  SaccadePage *page = SACCADE_PAGE (self);
  const SaccadeAttribution *a = self->result;
  g_autofree char *text = NULL;

  if (a != NULL && a->reused)
    /* Translators: the study shown was read back from the database. */
    text = g_strdup_printf (_("Study %lld, read from the database"), (long long) a->study_id);
  else if (a != NULL && a->study_id > 0)
    text = g_strdup_printf (_("Computed in %.1f s · study %lld"), a->seconds,
                            (long long) a->study_id);
  else if (a != NULL)
    text = g_strdup_printf (_("Computed in %.1f s (not stored)"), a->seconds);
  else if (saccade_page_get_run (page) == NULL)
    text = g_strdup (_("Select a run"));
  else if (saccade_page_get_model (page) == NULL)
    text = g_strdup (_("The model is not loaded yet"));
  else
    text = g_strdup (_("Not computed with these settings yet: press Run"));
  saccade_study_jobs_set_status (self->jobs, text);
}

static GtkWidget *
cell (const char *text, gboolean numeric, gboolean header)
{
  GtkWidget *label = gtk_label_new (text);

  gtk_label_set_xalign (GTK_LABEL (label), numeric ? 1.0f : 0.0f);
  if (numeric)
    gtk_widget_add_css_class (label, "numeric");
  if (header)
    gtk_widget_add_css_class (label, "heading");
  return label;
}

static void
add_number (GtkGrid *grid, int col, int row, double v)
{
  char buf[32];

  if (isnan (v))
    g_strlcpy (buf, "–", sizeof buf);
  else
    g_snprintf (buf, sizeof buf, "%.4g", v);
  gtk_grid_attach (grid, cell (buf, TRUE, FALSE), col, row, 1, 1);
}

static void
fill_table (SaccadeAttributionPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));
  const SaccadeAttribution *a = self->result;
  GtkWidget *child;
  int col;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->table))) != NULL)
    gtk_grid_remove (self->table, child);
  if (a == NULL)
    return;
  /* Translators: the attribution table's column headers. */
  gtk_grid_attach (self->table, cell (_("Pos"), TRUE, TRUE), 0, 0, 1, 1);
  gtk_grid_attach (self->table, cell (_("Token"), FALSE, TRUE), 1, 0, 1, 1);
  gtk_grid_attach (self->table, cell (_("attention"), TRUE, TRUE), 2, 0, 1, 1);
  gtk_grid_attach (self->table, cell (_("leave-one-out"), TRUE, TRUE), 3, 0, 1, 1);
  col = FIXED_COLUMNS;
  for (int m = 0; m < SC_ATTR_N_METHODS; m++)
    if (a->result->scores[m] != NULL)
      gtk_grid_attach (self->table, cell (saccade_attribution_method_name (m), TRUE, TRUE),
                       col++, 0, 1, 1);
  for (int j = 0; j < a->n_tokens; j++)
    {
      char pos[16];
      g_snprintf (pos, sizeof pos, "%d", j);
      gtk_grid_attach (self->table, cell (pos, TRUE, FALSE), 0, j + 1, 1, 1);
      gtk_grid_attach (self->table,
                       cell (run != NULL && run->n == a->n_tokens ? run->labels[j] : "", FALSE,
                             FALSE), 1, j + 1, 1, 1);
      add_number (self->table, 2, j + 1, a->attention[j]);
      add_number (self->table, 3, j + 1, a->loo[j]);
      col = FIXED_COLUMNS;
      for (int m = 0; m < SC_ATTR_N_METHODS; m++)
        if (a->result->scores[m] != NULL)
          add_number (self->table, col++, j + 1, a->result->scores[m][j]);
    }
}

static void
show_result (SaccadeAttributionPage *self)
{
  g_autofree char *complete = NULL;

  if (self->result != NULL)
    complete = saccade_attribution_completeness (self->result, TRUE);
  gtk_label_set_text (self->complete_label, complete != NULL ? complete : "");
  gtk_widget_set_visible (GTK_WIDGET (self->complete_label), complete != NULL);
  fill_table (self);
  self->hover = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
  show_idle_status (self);
}

/* The labels the figure uses: the run's, when it is the run of the result. */
static const char *const *
result_labels (SaccadeAttributionPage *self)
{
  SaccadeRun *run = saccade_page_get_run (SACCADE_PAGE (self));

  if (run != NULL && self->result != NULL && run->n == self->result->n_tokens)
    return (const char *const *) run->labels;
  return NULL;
}

static void
draw (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeAttributionPage *self = data;
  g_autofree char *title = NULL;
  SaccadeAttrRow rows[SACCADE_ATTRIBUTION_N_ROWS];
  SaccadeAttributionFigure f;
  SaccadeFigureStyle style;

  self->geom = (SaccadeAttributionGeometry) { 0 };
  if (self->result == NULL)
    return;
  title = dup_title (self);
  saccade_attribution_figure (self->result, result_labels (self), title, rows, &f);
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  saccade_figure_attribution_draw_full (cr, &f, &style, self->hover, width, height, &self->geom);
}

static void
motion (GtkEventControllerMotion *ctl, double x, double y, gpointer data)
{
  SaccadeAttributionPage *self = data;
  int token = -1;
  g_autofree char *tip = NULL;

  if (!saccade_attribution_geometry_token_at (&self->geom, x, y, &token))
    token = -1;
  if (token == self->hover)
    return;
  self->hover = token;
  if (token >= 0 && self->result != NULL)
    {
      const SaccadeAttribution *a = self->result;
      const char *const *labels = result_labels (self);
      GString *s = g_string_new (NULL);
      g_string_append_printf (s, "%d %s · %s %.4g · %s %.4g", token,
                              labels != NULL ? labels[token] : "", _("attention"),
                              a->attention[token], _("leave-one-out"), a->loo[token]);
      for (int m = 0; m < SC_ATTR_N_METHODS; m++)
        if (a->result->scores[m] != NULL)
          g_string_append_printf (s, " · %s %.4g", saccade_attribution_method_name (m),
                                  a->result->scores[m][token]);
      tip = g_string_free (s, FALSE);
    }
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->area), tip);
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
}

/* ------------------------------------------------------------------------------------ */
/* Jobs                                                                                  */

static void
stop_jobs (SaccadeAttributionPage *self)
{
  saccade_study_jobs_stop (self->jobs);
}

static void
lookup_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SaccadeAttributionPage *self = SACCADE_ATTRIBUTION_PAGE (source);
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeAttribution) a = saccade_study_face_finish (result, &error);

  if (!saccade_study_jobs_finish_lookup (self->jobs, result))
    return;
  if (a != NULL)
    {
      g_clear_pointer (&self->result, saccade_attribution_free);
      self->result = g_steal_pointer (&a);
      show_result (self);
    }
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
    saccade_study_jobs_set_status (self->jobs, error->message);
  else
    show_idle_status (self);
}

/* Shows the study stored with the settings shown, if any (the run or model changed). */
static void
look_up (SaccadeAttributionPage *self)
{
  SaccadePage *page = SACCADE_PAGE (self);
  SaccadeLoadedModel *model = saccade_page_get_model (page);
  SaccadeRun *run = saccade_page_get_run (page);
  const char *db = saccade_page_get_db_path (page);
  ScAttrParams p;

  stop_jobs (self);
  g_clear_pointer (&self->result, saccade_attribution_free);
  show_result (self);
  update_actions (self);
  if (model == NULL || run == NULL || db == NULL || !current_params (self, &p))
    return;
  saccade_study_face_async (&saccade_attribution_face, self, model, db, run->id, &p,
                            SACCADE_STUDY_STORED_ONLY, saccade_study_jobs_lookup (self->jobs),
                            NULL, NULL, lookup_done, NULL);
}

static char *
progress_text (gpointer owner, double fraction)
{
  if (fraction < 0)
    return g_strdup (_("Computing the attributions…"));
  /* Translators: the study's progress, in percent. */
  return g_strdup_printf (_("Computing the attributions… %.0f %%"), 100.0 * fraction);
}

static void
job_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SaccadeAttributionPage *self = SACCADE_ATTRIBUTION_PAGE (source);
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeAttribution) a = saccade_study_face_finish (result, &error);

  if (!saccade_study_jobs_finish_job (self->jobs, result))
    return; /* another run, model, database or request took its place */
  update_actions (self);
  if (a == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        saccade_study_jobs_set_status (self->jobs, _("Cancelled"));
      else
        saccade_study_jobs_set_status (self->jobs, error->message);
      return;
    }
  g_clear_pointer (&self->result, saccade_attribution_free);
  self->result = g_steal_pointer (&a);
  show_result (self);
}

static gboolean
saccade_attribution_page_run (SaccadeAttributionPage *self)
{
  SaccadePage *page = SACCADE_PAGE (self);
  SaccadeLoadedModel *model = saccade_page_get_model (page);
  SaccadeRun *run = saccade_page_get_run (page);
  const char *db = saccade_page_get_db_path (page);
  ScAttrParams p;
  GCancellable *job;

  if (model == NULL || run == NULL || db == NULL || saccade_study_jobs_get_running (self->jobs))
    return FALSE;
  if (!current_params (self, &p))
    return FALSE;
  stop_jobs (self);
  job = saccade_study_jobs_start (self->jobs, progress_text, self);
  update_actions (self);
  saccade_study_face_async (&saccade_attribution_face, self, model, db, run->id, &p,
                            SACCADE_STUDY_DEFAULT, job, saccade_study_jobs_progress, self->jobs,
                            job_done, NULL);
  return TRUE;
}

/* page.steps, page.rule, page.baseline, page.target: what the settings row's widgets do
 * (a baseline or target is a token's text, "" for the default). */
static void
setting_action (GtkWidget *widget, const char *action, GVariant *param)
{
  SaccadeAttributionPage *self = SACCADE_ATTRIBUTION_PAGE (widget);
  const char *value = g_variant_get_string (param, NULL);
  guint64 n;
  ScAttrRule r;

  if (g_str_equal (action, "page.steps")
      && g_ascii_string_to_unsigned (value, 10, 1, SC_ATTR_MAX_STEPS, &n, NULL))
    gtk_spin_button_set_value (self->steps_spin, (double) n);
  else if (g_str_equal (action, "page.rule") && sc_attr_rule_from_id (value, &r))
    gtk_drop_down_set_selected (self->rule_dropdown, (guint) r);
  else if (g_str_equal (action, "page.baseline"))
    gtk_editable_set_text (GTK_EDITABLE (self->baseline_entry), value);
  else if (g_str_equal (action, "page.target"))
    gtk_editable_set_text (GTK_EDITABLE (self->target_entry), value);
  else
    g_warning ("the Attribution page's %s takes no '%s'", action, value);
}

/* page.view: "attributions" or "adversarial", as the switcher does. */
static void
view_action (GtkWidget *widget, const char *action, GVariant *param)
{
  SaccadeAttributionPage *self = SACCADE_ATTRIBUTION_PAGE (widget);
  const char *name = g_variant_get_string (param, NULL);

  if (gtk_stack_get_child_by_name (self->stack, name) != NULL)
    gtk_stack_set_visible_child_name (self->stack, name);
  else
    g_warning ("the Attribution page has no view '%s'", name);
}

static void
attribute_action (GtkWidget *widget, const char *name, GVariant *param)
{
  saccade_attribution_page_run (SACCADE_ATTRIBUTION_PAGE (widget));
}

static void
cancel_action (GtkWidget *widget, const char *name, GVariant *param)
{
  saccade_study_jobs_cancel (SACCADE_ATTRIBUTION_PAGE (widget)->jobs);
}

/* ------------------------------------------------------------------------------------ */
/* SaccadePage                                                                           */

/* The adversarial view is the one shown. */
static gboolean
adversarial_shown (SaccadeAttributionPage *self)
{
  return g_strcmp0 (gtk_stack_get_visible_child_name (self->stack), "adversarial") == 0;
}

static void
source_changed (SaccadeAttributionPage *self)
{
  SaccadePage *page = SACCADE_PAGE (self);

  look_up (self);
  saccade_adversarial_view_set_source (self->adversarial_view, saccade_page_get_run (page),
                                       saccade_page_get_model (page),
                                       saccade_page_get_db_path (page));
}

static void
saccade_attribution_page_set_run (SaccadePage *page, SaccadeRun *run)
{
  source_changed (SACCADE_ATTRIBUTION_PAGE (page));
}

static void
saccade_attribution_page_set_model (SaccadePage *page, SaccadeLoadedModel *model)
{
  source_changed (SACCADE_ATTRIBUTION_PAGE (page));
}

static char *
saccade_attribution_page_dup_figure_title (SaccadePage *page)
{
  SaccadeAttributionPage *self = SACCADE_ATTRIBUTION_PAGE (page);

  if (adversarial_shown (self))
    return saccade_adversarial_view_dup_title (self->adversarial_view);
  return dup_title (self);
}

static gboolean
no_result (SaccadeAttributionPage *self, GError **error)
{
  if (self->result != NULL)
    return FALSE;
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       _("There is nothing to export: press Run first"));
  return TRUE;
}

static gboolean
saccade_attribution_page_export_figure (SaccadePage *page, const char *path, GError **error)
{
  SaccadeAttributionPage *self = SACCADE_ATTRIBUTION_PAGE (page);
  g_autofree char *title = NULL, *caption = NULL;
  SaccadeAttrRow rows[SACCADE_ATTRIBUTION_N_ROWS];
  SaccadeAttributionFigure f;

  if (adversarial_shown (self))
    return saccade_adversarial_view_export_figure (self->adversarial_view, path, error);
  if (no_result (self, error))
    return FALSE;
  title = dup_title (self);
  caption = saccade_attribution_completeness (self->result, TRUE);
  saccade_attribution_figure (self->result, result_labels (self), title, rows, &f);
  f.caption = caption;
  return saccade_figure_export_attribution (&f, path, error);
}

static gboolean
saccade_attribution_page_export_csv (SaccadePage *page, const char *path, GError **error)
{
  SaccadeAttributionPage *self = SACCADE_ATTRIBUTION_PAGE (page);
  g_autoptr (GBytes) data = NULL;

  if (adversarial_shown (self))
    return saccade_adversarial_view_export_csv (self->adversarial_view, path, error);
  if (no_result (self, error))
    return FALSE;
  data = saccade_attribution_csv (self->result, result_labels (self));
  return saccade_export_write (data, path, error);
}

static gboolean
saccade_attribution_page_is_busy (SaccadePage *page)
{
  SaccadeAttributionPage *self = SACCADE_ATTRIBUTION_PAGE (page);

  return saccade_study_jobs_get_busy (self->jobs)
         || saccade_adversarial_view_is_busy (self->adversarial_view);
}

static void
saccade_attribution_page_get_property (GObject *object, guint prop_id, GValue *value,
                                       GParamSpec *pspec)
{
  SaccadeAttributionPage *self = SACCADE_ATTRIBUTION_PAGE (object);

  switch (prop_id)
    {
    case PROP_STATUS:
      g_value_set_string (value, saccade_study_jobs_get_status (self->jobs));
      break;
    case PROP_FRACTION:
      g_value_set_double (value, saccade_study_jobs_get_fraction (self->jobs));
      break;
    case PROP_ADVERSARIAL_VIEW:
      g_value_set_object (value, self->adversarial_view);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
saccade_attribution_page_dispose (GObject *object)
{
  SaccadeAttributionPage *self = SACCADE_ATTRIBUTION_PAGE (object);

  if (self->jobs != NULL)
    stop_jobs (self);
  g_clear_object (&self->jobs);
  g_clear_pointer (&self->result, saccade_attribution_free);
  gtk_widget_dispose_template (GTK_WIDGET (object), SACCADE_TYPE_ATTRIBUTION_PAGE);
  G_OBJECT_CLASS (saccade_attribution_page_parent_class)->dispose (object);
}

static void
saccade_attribution_page_class_init (SaccadeAttributionPageClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  SaccadePageClass *page_class = SACCADE_PAGE_CLASS (klass);

  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->dispose = saccade_attribution_page_dispose;
  object_class->get_property = saccade_attribution_page_get_property;
  page_class->set_run = saccade_attribution_page_set_run;
  page_class->set_model = saccade_attribution_page_set_model;
  page_class->dup_figure_title = saccade_attribution_page_dup_figure_title;
  page_class->export_figure = saccade_attribution_page_export_figure;
  page_class->export_csv = saccade_attribution_page_export_csv;
  page_class->is_busy = saccade_attribution_page_is_busy;
  gtk_widget_class_install_action (widget_class, "page.attribute", NULL, attribute_action);
  gtk_widget_class_install_action (widget_class, "page.cancel", NULL, cancel_action);
  gtk_widget_class_install_action (widget_class, "page.steps", "s", setting_action);
  gtk_widget_class_install_action (widget_class, "page.rule", "s", setting_action);
  gtk_widget_class_install_action (widget_class, "page.baseline", "s", setting_action);
  gtk_widget_class_install_action (widget_class, "page.target", "s", setting_action);
  gtk_widget_class_install_action (widget_class, "page.view", "s", view_action);
  /* SaccadeAttributionPage:status: the attributions' status line. :fraction: of the
   * running study, 0 when none runs. :adversarial-view: the Adversarial attention view. */
  props[PROP_STATUS] = g_param_spec_string ("status", NULL, NULL, "", flags);
  props[PROP_FRACTION] = g_param_spec_double ("fraction", NULL, NULL, 0, 1, 0, flags);
  props[PROP_ADVERSARIAL_VIEW] = g_param_spec_object ("adversarial-view", NULL, NULL,
                                                      SACCADE_TYPE_ADVERSARIAL_VIEW, flags);
  g_object_class_install_properties (object_class, N_PROPS, props);

  g_type_ensure (SACCADE_TYPE_ADVERSARIAL_VIEW);
  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/saccade/Saccade/pages/saccade-attribution-page.ui");
#define CHILD(name) \
  gtk_widget_class_bind_template_child (widget_class, SaccadeAttributionPage, name)
  CHILD (steps_spin);
  CHILD (rule_dropdown);
  CHILD (baseline_entry);
  CHILD (target_entry);
  CHILD (progress_bar);
  CHILD (cancel_button);
  CHILD (status_label);
  CHILD (area);
  CHILD (complete_label);
  CHILD (table);
  CHILD (stack);
  CHILD (adversarial_view);
#undef CHILD
}

static void
saccade_attribution_page_init (SaccadeAttributionPage *self)
{
  GtkEventController *ctl;

  gtk_widget_init_template (GTK_WIDGET (self));
  self->jobs = saccade_study_jobs_new (self->status_label, self->progress_bar,
                                       self->cancel_button);
  saccade_study_jobs_forward (self->jobs, G_OBJECT (self), props[PROP_STATUS],
                              props[PROP_FRACTION]);
  self->hover = -1;
  saccade_page_set_figure (SACCADE_PAGE (self), GTK_WIDGET (self->area));
  gtk_drawing_area_set_draw_func (self->area, draw, self, NULL);
  ctl = gtk_event_controller_motion_new ();
  g_signal_connect (ctl, "motion", G_CALLBACK (motion), self);
  gtk_widget_add_controller (GTK_WIDGET (self->area), ctl);
  /* Other settings may have a stored study: show it, or say there is none. */
  g_signal_connect_swapped (self->steps_spin, "value-changed", G_CALLBACK (look_up), self);
  g_signal_connect_swapped (self->rule_dropdown, "notify::selected", G_CALLBACK (look_up), self);
  g_signal_connect_swapped (self->target_entry, "activate",
                            G_CALLBACK (saccade_attribution_page_run), self);
  g_signal_connect_swapped (self->baseline_entry, "activate",
                            G_CALLBACK (saccade_attribution_page_run), self);
  show_result (self);
  update_actions (self);
}
