/* saccade-attribution-page.c — the Attribution page (see saccade-attribution-page.h).
 *
 * Its study is a SaccadeStudyPanel's (saccade-study-panel.h) of the attribution face
 * (app/core/saccade-attribution.h): the lookup when the run, the model or a setting changes
 * (STORED_ONLY: no session lock, no pass run, so a stored study is on screen at once), Run
 * with its progress and Cancel, the status line and the exports. The page keeps its
 * settings, the table and the figure, drawn by saccade_figure_attribution_draw_full() in
 * the theme's colours. The "Adversarial attention" view beside it
 * (saccade-adversarial-view.c) has a panel of its own; the page forwards it the run, model
 * and database, and titles and exports through the panel of the view shown.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-attribution-page.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/saccade-attribution.h"
#include "app/core/saccade-model.h"
#include "app/window/pages/saccade-adversarial-view.h"
#include "app/window/pages/saccade-study-panel.h"

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
  GtkEntry *contrast_entry;
  GtkProgressBar *progress_bar;
  GtkWidget *cancel_button;
  GtkLabel *status_label;
  GtkDrawingArea *area;
  GtkLabel *complete_label;
  GtkGrid *table;
  GtkStack *stack;               /* "attributions" or "adversarial" */
  SaccadeAdversarialView *adversarial_view;

  /* Owned */
  SaccadeStudyPanel *panel;      /* the source, the study shown, Run, the status line */
  int hover;                     /* the token under the pointer, or -1 */
  SaccadeAttributionGeometry geom;
};

G_DEFINE_FINAL_TYPE (SaccadeAttributionPage, saccade_attribution_page, SACCADE_TYPE_PAGE)

/* status and fraction: saccade_page_class_install_status */
enum { PROP_0, PROP_STATUS, PROP_FRACTION, PROP_ADVERSARIAL_VIEW };

static const SaccadeStudyPanelDesc DESC = {
  /* Translators: the study shown was read back from the database. */
  .reused = N_("Study %lld, read from the database"),
  .computed = N_("Computed in %.1f s · study %lld"),
  .not_stored = N_("Computed in %.1f s (not stored)"),
  .not_yet = N_("Not computed with these settings yet: press Run"),
  .working = N_("Computing the attributions…"),
  /* Translators: the study's progress, in percent. */
  .progress = N_("Computing the attributions… %.0f %%"),
  .nothing = N_("There is nothing to export: press Run first"),
  .run_action = "page.attribute",
  .cancel_action = "page.cancel",
};

static const SaccadeAttribution *
shown (SaccadeAttributionPage *self)
{
  return saccade_study_panel_get_result (self->panel);
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
      saccade_study_panel_set_status (self->panel, error->message);
      return FALSE;
    }
  if (ids->len != 1)
    {
      /* Translators: "target", "contrast" or "baseline", the typed text, its number of
       * tokens. */
      g_autofree char *msg = g_strdup_printf (_("The %s “%s” is %u tokens: type one token"),
                                              what, text, ids->len);
      saccade_study_panel_set_status (self->panel, msg);
      return FALSE;
    }
  *out = g_array_index (ids, int32_t, 0);
  return TRUE;
}

/* The panel's params hook: the settings shown as study parameters; FALSE (reason on the
 * status line) when a typed token is not one token. */
static gboolean
current_params (GtkWidget *widget, gpointer params)
{
  SaccadeAttributionPage *self = SACCADE_ATTRIBUTION_PAGE (widget);
  ScAttrParams *p = params;
  int32_t baseline;

  saccade_attribution_params_init (p);
  p->steps = gtk_spin_button_get_value_as_int (self->steps_spin);
  /* the dropdown lists the rules in ScAttrRule's order */
  p->rule = (ScAttrRule) MIN (gtk_drop_down_get_selected (self->rule_dropdown),
                              SC_ATTR_N_RULES - 1);
  /* Translators: names of the entries in "The %s “%s” is %u tokens". */
  if (!parse_token (self, self->target_entry, _("target"), &p->target)
      || !parse_token (self, self->contrast_entry, _("contrast"), &p->contrast)
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
  const SaccadeAttribution *a = shown (self);
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
  for (int j = 0; j < a->base.n_tokens; j++)
    {
      char pos[16];
      g_snprintf (pos, sizeof pos, "%d", j);
      gtk_grid_attach (self->table, cell (pos, TRUE, FALSE), 0, j + 1, 1, 1);
      gtk_grid_attach (self->table,
                       cell (run != NULL && run->n == a->base.n_tokens ? run->labels[j] : "", FALSE,
                             FALSE), 1, j + 1, 1, 1);
      add_number (self->table, 2, j + 1, a->attention[j]);
      add_number (self->table, 3, j + 1, a->loo[j]);
      col = FIXED_COLUMNS;
      for (int m = 0; m < SC_ATTR_N_METHODS; m++)
        if (a->result->scores[m] != NULL)
          add_number (self->table, col++, j + 1, a->result->scores[m][j]);
    }
}

/* The panel's changed hook: the result or the running study changed. */
static void
changed (GtkWidget *widget)
{
  SaccadeAttributionPage *self = SACCADE_ATTRIBUTION_PAGE (widget);

  fill_table (self);
  self->hover = -1;
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
  if (shown (self) == NULL)
    return;
  title = saccade_study_panel_dup_title (self->panel);
  saccade_attribution_figure (shown (self), saccade_study_panel_get_labels (self->panel), title,
                              rows, &f);
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
  if (token >= 0 && shown (self) != NULL)
    {
      const SaccadeAttribution *a = shown (self);
      const char *const *labels = saccade_study_panel_get_labels (self->panel);
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
/* Actions                                                                               */

static void
look_up (SaccadeAttributionPage *self)
{
  saccade_study_panel_look_up (self->panel);
}

static void
run_study (SaccadeAttributionPage *self)
{
  saccade_study_panel_run (self->panel, SACCADE_STUDY_DEFAULT);
}

/* page.steps, page.rule, page.baseline, page.target, page.contrast: what the settings
 * row's widgets do (a baseline, target or contrast is a token's text, "" for the default;
 * the window hands the target and contrast chosen in the predictions panel here). */
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
  else if (g_str_equal (action, "page.contrast"))
    gtk_editable_set_text (GTK_EDITABLE (self->contrast_entry), value);
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
  run_study (SACCADE_ATTRIBUTION_PAGE (widget));
}

static void
cancel_action (GtkWidget *widget, const char *name, GVariant *param)
{
  saccade_study_panel_cancel (SACCADE_ATTRIBUTION_PAGE (widget)->panel);
}

/* ------------------------------------------------------------------------------------ */
/* SaccadePage                                                                           */

/* The panel of the view shown: the adversarial view's, or the attributions'. */
static SaccadeStudyPanel *
shown_panel (SaccadeAttributionPage *self)
{
  if (g_strcmp0 (gtk_stack_get_visible_child_name (self->stack), "adversarial") == 0)
    return saccade_adversarial_view_get_panel (self->adversarial_view);
  return self->panel;
}

static void
source_changed (SaccadeAttributionPage *self)
{
  SaccadePage *page = SACCADE_PAGE (self);

  saccade_study_panel_set_source (self->panel, saccade_page_get_run (page),
                                  saccade_page_get_model (page),
                                  saccade_page_get_db_path (page));
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
  return saccade_study_panel_dup_title (shown_panel (SACCADE_ATTRIBUTION_PAGE (page)));
}

static gboolean
saccade_attribution_page_export_figure (SaccadePage *page, const char *path, GError **error)
{
  return saccade_study_panel_export_figure (shown_panel (SACCADE_ATTRIBUTION_PAGE (page)), path,
                                            error);
}

static gboolean
saccade_attribution_page_export_csv (SaccadePage *page, const char *path, GError **error)
{
  return saccade_study_panel_export_csv (shown_panel (SACCADE_ATTRIBUTION_PAGE (page)), path,
                                         error);
}

static gboolean
saccade_attribution_page_is_busy (SaccadePage *page)
{
  SaccadeAttributionPage *self = SACCADE_ATTRIBUTION_PAGE (page);
  SaccadeStudyPanel *adversarial = saccade_adversarial_view_get_panel (self->adversarial_view);

  return saccade_study_jobs_get_busy (saccade_study_panel_get_jobs (self->panel))
         || saccade_study_jobs_get_busy (saccade_study_panel_get_jobs (adversarial));
}

static void
saccade_attribution_page_get_property (GObject *object, guint prop_id, GValue *value,
                                       GParamSpec *pspec)
{
  SaccadeAttributionPage *self = SACCADE_ATTRIBUTION_PAGE (object);

  if (prop_id == PROP_ADVERSARIAL_VIEW)
    g_value_set_object (value, self->adversarial_view);
  else if (!saccade_page_get_status (saccade_study_panel_get_jobs (self->panel), PROP_STATUS,
                                     prop_id, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
saccade_attribution_page_dispose (GObject *object)
{
  SaccadeAttributionPage *self = SACCADE_ATTRIBUTION_PAGE (object);

  saccade_study_panel_stop (self->panel);
  gtk_widget_dispose_template (GTK_WIDGET (object), SACCADE_TYPE_ATTRIBUTION_PAGE);
  G_OBJECT_CLASS (saccade_attribution_page_parent_class)->dispose (object);
}

static void
saccade_attribution_page_finalize (GObject *object)
{
  saccade_study_panel_free (SACCADE_ATTRIBUTION_PAGE (object)->panel);
  G_OBJECT_CLASS (saccade_attribution_page_parent_class)->finalize (object);
}

static void
saccade_attribution_page_class_init (SaccadeAttributionPageClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  SaccadePageClass *page_class = SACCADE_PAGE_CLASS (klass);

  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->dispose = saccade_attribution_page_dispose;
  object_class->finalize = saccade_attribution_page_finalize;
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
  gtk_widget_class_install_action (widget_class, "page.contrast", "s", setting_action);
  gtk_widget_class_install_action (widget_class, "page.view", "s", view_action);
  /* SaccadeAttributionPage:status: the attributions' status line. :fraction: of the
   * running study, 0 when none runs. :adversarial-view: the Adversarial attention view. */
  saccade_page_class_install_status (object_class, PROP_STATUS);
  g_object_class_install_property (object_class, PROP_ADVERSARIAL_VIEW,
                                   g_param_spec_object ("adversarial-view", NULL, NULL,
                                                        SACCADE_TYPE_ADVERSARIAL_VIEW, flags));

  g_type_ensure (SACCADE_TYPE_ADVERSARIAL_VIEW);
  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/saccade/Saccade/pages/saccade-attribution-page.ui");
#define CHILD(name) \
  gtk_widget_class_bind_template_child (widget_class, SaccadeAttributionPage, name)
  CHILD (steps_spin);
  CHILD (rule_dropdown);
  CHILD (baseline_entry);
  CHILD (target_entry);
  CHILD (contrast_entry);
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
  self->panel = saccade_study_panel_new (GTK_WIDGET (self), &saccade_attribution_outputs,
                                         &DESC, &(SaccadeStudyPanelWidgets) {
                                           self->status_label, self->progress_bar,
                                           self->cancel_button, GTK_WIDGET (self->area),
                                           self->complete_label },
                                         current_params, changed);
  saccade_study_panel_add_settings (self->panel, GTK_WIDGET (self->steps_spin),
                                    GTK_WIDGET (self->rule_dropdown),
                                    GTK_WIDGET (self->baseline_entry),
                                    GTK_WIDGET (self->target_entry),
                                    GTK_WIDGET (self->contrast_entry), NULL);
  saccade_page_forward_status (G_OBJECT (self), saccade_study_panel_get_jobs (self->panel));
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
                            G_CALLBACK (run_study), self);
  g_signal_connect_swapped (self->baseline_entry, "activate",
                            G_CALLBACK (run_study), self);
  g_signal_connect_swapped (self->contrast_entry, "activate", G_CALLBACK (run_study), self);
  saccade_study_panel_show (self->panel);
}
