/* saccade-adversarial-view.c — the Attribution page's adversarial attention view (see
 * saccade-adversarial-view.h).
 *
 * Its study is a SaccadeStudyPanel's (saccade-study-panel.h) of the adversarial face
 * (app/core/saccade-adversarial.h): the lookup when the run, model or a setting changes
 * (STORED_ONLY, so a stored study is on screen at once — its curve only, the store keeping
 * no rows), Search (Run, with progress and Cancel), the status line and the exports. The
 * view keeps its settings and draws the figure. The widgets are built here, not from a
 * template: the view is one row of settings over a drawing area.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-adversarial-view.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/saccade-adversarial.h"
#include "app/window/pages/saccade-page.h"
#include "app/window/pages/saccade-study-panel.h"

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

  SaccadeStudyPanel *panel;       /* the source, the study shown, Search, the status */
  gboolean in_source;             /* set_source is setting the widgets: no lookups */
};

G_DEFINE_FINAL_TYPE (SaccadeAdversarialView, saccade_adversarial_view, GTK_TYPE_BOX)

/* status and fraction: saccade_page_class_install_status */
enum { PROP_0, PROP_STATUS, PROP_FRACTION };

static const SaccadeStudyPanelDesc DESC = {
  /* Translators: the study shown was read back; the store keeps no attention rows. */
  .reused = N_("Study %lld, read from the database: the curve only (Search again to see the "
               "rows)"),
  .computed = N_("Searched in %.1f s · study %lld"),
  .not_stored = N_("Searched in %.1f s (not stored)"),
  .not_yet = N_("Not searched with these settings yet: press Search"),
  .working = N_("Searching for adversarial attention…"),
  /* Translators: the search's progress, in percent. */
  .progress = N_("Searching for adversarial attention… %.0f %%"),
  .nothing = N_("There is nothing to export: press Search first"),
  .run_action = "adversarial.search",
  .cancel_action = "adversarial.cancel",
};

static const SaccadeAdversarial *
shown (SaccadeAdversarialView *self)
{
  return saccade_study_panel_get_result (self->panel);
}

/* The panel's params hook: the settings shown. */
static gboolean
current_params (GtkWidget *widget, gpointer params)
{
  SaccadeAdversarialView *self = SACCADE_ADVERSARIAL_VIEW (widget);
  const guint head = gtk_drop_down_get_selected (self->head_dropdown);
  ScAdvParams *p = params;

  saccade_adversarial_params_init (p);
  p->layer = gtk_spin_button_get_value_as_int (self->layer_spin);
  p->head = head == 0 || head == GTK_INVALID_LIST_POSITION ? -1 : (int) head - 1;
  p->iterations = gtk_spin_button_get_value_as_int (self->iter_spin);
  return TRUE;
}

static void
draw (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeAdversarialView *self = data;
  const SaccadeAdversarial *a = shown (self);
  g_autofree char *title = NULL, *label = NULL;
  g_autofree double *buf = NULL;
  SaccadeAdvSeries series;
  SaccadeAdversarialFigure f;
  SaccadeFigureStyle style;

  if (a == NULL)
    return;
  title = saccade_adversarial_title (a);
  label = saccade_adversarial_label (a, TRUE);
  buf = g_new (double, 2 * (gsize) a->base.n_tokens);
  saccade_adversarial_figure (a, label, saccade_study_panel_get_labels (self->panel), title,
                              &series, buf, buf + a->base.n_tokens, &f);
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  saccade_figure_adversarial_draw (cr, &f, &style, width, height);
}

static void
look_up (SaccadeAdversarialView *self)
{
  if (!self->in_source)
    saccade_study_panel_look_up (self->panel);
}

static void
search_action (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeAdversarialView *self = SACCADE_ADVERSARIAL_VIEW (widget);
  /* A study read back has no rows: Search on it searches again to show them. */
  const SaccadeStudyFlags flags = shown (self) != NULL && shown (self)->base.reused
                                    ? SACCADE_STUDY_RECOMPUTE : SACCADE_STUDY_DEFAULT;

  if (!saccade_study_panel_run (self->panel, flags))
    saccade_study_panel_show_status (self->panel);
}

static void
cancel_action (GtkWidget *widget, const char *name, GVariant *param)
{
  saccade_study_panel_cancel (SACCADE_ADVERSARIAL_VIEW (widget)->panel);
}

/* ------------------------------------------------------------------------------------ */
/* The page's side                                                                       */

void
saccade_adversarial_view_set_source (SaccadeAdversarialView *self, SaccadeRun *run,
                                     SaccadeLoadedModel *model, const char *db_path)
{
  int n_layers = 1, n_heads = 0;

  g_return_if_fail (SACCADE_IS_ADVERSARIAL_VIEW (self));
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
  saccade_study_panel_set_source (self->panel, run, model, db_path);
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

SaccadeStudyPanel *
saccade_adversarial_view_get_panel (SaccadeAdversarialView *self)
{
  g_return_val_if_fail (SACCADE_IS_ADVERSARIAL_VIEW (self), NULL);
  return self->panel;
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
  SaccadeStudyPanel *panel = SACCADE_ADVERSARIAL_VIEW (object)->panel;

  if (!saccade_page_get_status (saccade_study_panel_get_jobs (panel), PROP_STATUS, prop_id,
                                value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
saccade_adversarial_view_dispose (GObject *object)
{
  SaccadeAdversarialView *self = SACCADE_ADVERSARIAL_VIEW (object);

  saccade_study_panel_stop (self->panel);
  G_OBJECT_CLASS (saccade_adversarial_view_parent_class)->dispose (object);
}

static void
saccade_adversarial_view_finalize (GObject *object)
{
  saccade_study_panel_free (SACCADE_ADVERSARIAL_VIEW (object)->panel);
  G_OBJECT_CLASS (saccade_adversarial_view_parent_class)->finalize (object);
}

static void
saccade_adversarial_view_class_init (SaccadeAdversarialViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = saccade_adversarial_view_dispose;
  object_class->finalize = saccade_adversarial_view_finalize;
  object_class->get_property = saccade_adversarial_view_get_property;
  /* SaccadeAdversarialView:status: the status line. :fraction: of the running search, 0
   * when none runs. */
  saccade_page_class_install_status (object_class, PROP_STATUS);
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
  gtk_label_set_wrap (self->status_label, TRUE);
  gtk_label_set_wrap_mode (self->status_label, PANGO_WRAP_WORD_CHAR);
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
  self->panel = saccade_study_panel_new (GTK_WIDGET (self), &saccade_adversarial_outputs, &DESC,
                                         &(SaccadeStudyPanelWidgets) {
                                           self->status_label, self->progress_bar,
                                           self->cancel_button, GTK_WIDGET (self->area),
                                           self->reading_label },
                                         current_params, NULL);
  saccade_study_panel_add_settings (self->panel, GTK_WIDGET (self->layer_spin),
                                    GTK_WIDGET (self->head_dropdown),
                                    GTK_WIDGET (self->iter_spin), NULL);
  saccade_page_forward_status (G_OBJECT (self), saccade_study_panel_get_jobs (self->panel));
  /* Other settings may have a stored study: show it, or say there is none. */
  g_signal_connect_swapped (self->layer_spin, "value-changed", G_CALLBACK (look_up), self);
  g_signal_connect_swapped (self->head_dropdown, "notify::selected", G_CALLBACK (look_up), self);
  g_signal_connect_swapped (self->iter_spin, "value-changed", G_CALLBACK (look_up), self);
  saccade_study_panel_show (self->panel);
}
