/* saccade-predictions-view.c — the top-k next tokens after one position (see the header).
 *
 * A vertical box: a heading, then one row per prediction — a flat button holding the
 * row's mark ("A", "B" or nothing) and the token label (ellipsized), a level bar of its
 * probability and the probability in per cent — in a GtkGrid rebuilt on each change (k is
 * ten at most, so rebuilding costs nothing worth caching). The buttons are what a user
 * chooses with (mouse or keyboard); the view only reports the row and whether Ctrl was
 * held, and shows the marks it is told.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/widgets/saccade-predictions-view.h"

#ifndef GETTEXT_PACKAGE
#define GETTEXT_PACKAGE "saccade"
#endif
#include <glib/gi18n-lib.h>

struct _SaccadePredictionsView
{
  GtkWidget parent_instance;

  GtkWidget *heading;   /* GtkLabel */
  GtkWidget *grid;      /* GtkGrid: button (mark, label), bar, per cent */
  int k;
  GPtrArray *buttons;   /* borrowed: row r's button (children of grid) */
  gboolean choosable;
  char *tooltip;        /* the buttons' tooltip, or NULL */
  gboolean ctrl_held;   /* the press that is turning into a click held Ctrl */
};

enum { SIGNAL_CHOSEN, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (SaccadePredictionsView, saccade_predictions_view, GTK_TYPE_WIDGET)

static void
saccade_predictions_view_dispose (GObject *object)
{
  SaccadePredictionsView *self = SACCADE_PREDICTIONS_VIEW (object);

  g_clear_pointer (&self->heading, gtk_widget_unparent);
  g_clear_pointer (&self->grid, gtk_widget_unparent);
  g_clear_pointer (&self->buttons, g_ptr_array_unref);
  g_clear_pointer (&self->tooltip, g_free);
  G_OBJECT_CLASS (saccade_predictions_view_parent_class)->dispose (object);
}

static void
saccade_predictions_view_class_init (SaccadePredictionsViewClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = saccade_predictions_view_dispose;
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BOX_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "predictions");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);

  /* SaccadePredictionsView::chosen (row, contrast): row @row was activated (click, Enter
   * or Space); @contrast when Ctrl was held. */
  signals[SIGNAL_CHOSEN] = g_signal_new ("chosen", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT,
                                         G_TYPE_BOOLEAN);
}

static void
saccade_predictions_view_init (SaccadePredictionsView *self)
{
  GtkLayoutManager *layout = gtk_widget_get_layout_manager (GTK_WIDGET (self));

  gtk_orientable_set_orientation (GTK_ORIENTABLE (layout), GTK_ORIENTATION_VERTICAL);
  gtk_box_layout_set_spacing (GTK_BOX_LAYOUT (layout), 6);
  self->heading = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (self->heading), 0);
  gtk_label_set_wrap (GTK_LABEL (self->heading), TRUE);
  /* A width that does not follow the text: the panel (and with it the window) keeps its
   * width whatever run or position it shows (issue 30: it grew from 1,246 to 1,286 px). */
  gtk_label_set_width_chars (GTK_LABEL (self->heading), 22);
  gtk_label_set_max_width_chars (GTK_LABEL (self->heading), 22);
  gtk_widget_add_css_class (self->heading, "heading");
  gtk_widget_set_parent (self->heading, GTK_WIDGET (self));
  self->grid = gtk_grid_new ();
  gtk_grid_set_row_spacing (GTK_GRID (self->grid), 4);
  gtk_grid_set_column_spacing (GTK_GRID (self->grid), 6);
  gtk_widget_set_parent (self->grid, GTK_WIDGET (self));
  self->buttons = g_ptr_array_new ();
}

GtkWidget *
saccade_predictions_view_new (void)
{
  return g_object_new (SACCADE_TYPE_PREDICTIONS_VIEW, NULL);
}

/* A press on a row: remember whether Ctrl was held for the click it may become. */
static void
row_pressed (GtkGestureClick *gesture, int n_press, double x, double y,
             SaccadePredictionsView *self)
{
  GdkModifierType state =
    gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (gesture));

  self->ctrl_held = (state & GDK_CONTROL_MASK) != 0;
}

static void
row_clicked (GtkButton *button, SaccadePredictionsView *self)
{
  const int r = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (button), "row"));
  const gboolean contrast = self->ctrl_held;

  self->ctrl_held = FALSE;
  g_signal_emit (self, signals[SIGNAL_CHOSEN], 0, r, contrast);
}

/* Ctrl+Enter (or Ctrl+Space) on a row: the keyboard's Ctrl+click. */
static gboolean
row_contrast_key (GtkWidget *button, GVariant *args, gpointer data)
{
  SaccadePredictionsView *self = data;

  g_signal_emit (self, signals[SIGNAL_CHOSEN], 0,
                 GPOINTER_TO_INT (g_object_get_data (G_OBJECT (button), "row")), TRUE);
  return TRUE;
}

/* Row @r's button: its mark (empty until set_marks) and @name. */
static GtkWidget *
row_button (SaccadePredictionsView *self, int r, GtkWidget *name)
{
  GtkWidget *button = gtk_button_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 4);
  GtkWidget *mark = gtk_label_new (NULL);
  GtkGesture *press = gtk_gesture_click_new ();
  GtkEventController *keys = gtk_shortcut_controller_new ();

  gtk_label_set_width_chars (GTK_LABEL (mark), 1);
  gtk_widget_add_css_class (mark, "mark");
  gtk_box_append (GTK_BOX (box), mark);
  gtk_box_append (GTK_BOX (box), name);
  gtk_button_set_child (GTK_BUTTON (button), box);
  gtk_widget_add_css_class (button, "flat");
  gtk_widget_add_css_class (button, "prediction");
  g_object_set_data (G_OBJECT (button), "row", GINT_TO_POINTER (r));
  g_object_set_data (G_OBJECT (button), "mark", mark);
  g_object_set_data (G_OBJECT (button), "name", name);
  gtk_widget_set_sensitive (button, self->choosable);
  gtk_widget_set_tooltip_text (button, self->tooltip);
  gtk_event_controller_set_propagation_phase (GTK_EVENT_CONTROLLER (press), GTK_PHASE_CAPTURE);
  g_signal_connect (press, "pressed", G_CALLBACK (row_pressed), self);
  gtk_widget_add_controller (button, GTK_EVENT_CONTROLLER (press));
  gtk_shortcut_controller_add_shortcut (
    GTK_SHORTCUT_CONTROLLER (keys),
    gtk_shortcut_new (gtk_shortcut_trigger_parse_string ("<Control>Return|<Control>KP_Enter|"
                                                         "<Control>space"),
                      gtk_callback_action_new (row_contrast_key, self, NULL)));
  gtk_widget_add_controller (button, keys);
  g_signal_connect (button, "clicked", G_CALLBACK (row_clicked), self);
  g_ptr_array_add (self->buttons, button);
  return button;
}

void
saccade_predictions_view_set_marks (SaccadePredictionsView *self, int a_row, int b_row)
{
  g_return_if_fail (SACCADE_IS_PREDICTIONS_VIEW (self));

  for (guint r = 0; r < self->buttons->len; r++)
    {
      GtkWidget *button = g_ptr_array_index (self->buttons, r);
      GtkWidget *mark = g_object_get_data (G_OBJECT (button), "mark");
      const gboolean a = (int) r == a_row, b = (int) r == b_row && !a;
      /* Translators: the predictions panel's marks: the target (A) and the contrast (B). */
      gtk_label_set_text (GTK_LABEL (mark), a ? C_("target mark", "A")
                                              : b ? C_("contrast mark", "B") : "");
      gtk_widget_remove_css_class (mark, "target");
      gtk_widget_remove_css_class (mark, "contrast");
      if (a || b)
        gtk_widget_add_css_class (mark, a ? "target" : "contrast");
      gtk_accessible_update_state (GTK_ACCESSIBLE (button), GTK_ACCESSIBLE_STATE_PRESSED,
                                   a || b ? GTK_ACCESSIBLE_TRISTATE_TRUE
                                          : GTK_ACCESSIBLE_TRISTATE_FALSE, -1);
    }
}

void
saccade_predictions_view_set_choosable (SaccadePredictionsView *self, gboolean choosable,
                                        const char *tooltip)
{
  g_return_if_fail (SACCADE_IS_PREDICTIONS_VIEW (self));

  self->choosable = choosable;
  g_free (self->tooltip);
  self->tooltip = g_strdup (tooltip);
  for (guint r = 0; r < self->buttons->len; r++)
    {
      gtk_widget_set_sensitive (g_ptr_array_index (self->buttons, r), choosable);
      gtk_widget_set_tooltip_text (g_ptr_array_index (self->buttons, r), tooltip);
    }
}

void
saccade_predictions_view_set (SaccadePredictionsView *self, const char *heading, int k,
                              const char *const *labels, const double *probs)
{
  GtkWidget *child;

  g_return_if_fail (SACCADE_IS_PREDICTIONS_VIEW (self));
  g_return_if_fail (k <= 0 || (labels != NULL && probs != NULL));

  while ((child = gtk_widget_get_first_child (self->grid)) != NULL)
    gtk_grid_remove (GTK_GRID (self->grid), child);
  g_ptr_array_set_size (self->buttons, 0);
  gtk_label_set_text (GTK_LABEL (self->heading), heading != NULL ? heading : "");
  self->k = MAX (k, 0);
  for (int r = 0; r < self->k; r++)
    {
      double p = CLAMP (probs[r], 0.0, 1.0);
      g_autofree char *pct = g_strdup_printf ("%.1f %%", 100 * p);
      GtkWidget *name = gtk_label_new (labels[r] != NULL ? labels[r] : "");
      GtkWidget *row = row_button (self, r, name);
      GtkWidget *bar = gtk_level_bar_new_for_interval (0, 1);
      GtkWidget *value = gtk_label_new (pct);

      gtk_label_set_xalign (GTK_LABEL (name), 0);
      gtk_label_set_ellipsize (GTK_LABEL (name), PANGO_ELLIPSIZE_END);
      gtk_label_set_max_width_chars (GTK_LABEL (name), 12);
      gtk_label_set_width_chars (GTK_LABEL (name), 12);
      /* Drop the level bar's "low/high" colour offsets: a probability is not a battery. */
      gtk_level_bar_remove_offset_value (GTK_LEVEL_BAR (bar), GTK_LEVEL_BAR_OFFSET_LOW);
      gtk_level_bar_remove_offset_value (GTK_LEVEL_BAR (bar), GTK_LEVEL_BAR_OFFSET_HIGH);
      gtk_level_bar_remove_offset_value (GTK_LEVEL_BAR (bar), GTK_LEVEL_BAR_OFFSET_FULL);
      gtk_level_bar_set_value (GTK_LEVEL_BAR (bar), p);
      gtk_widget_set_size_request (bar, 60, -1);
      gtk_widget_set_valign (bar, GTK_ALIGN_CENTER);
      gtk_label_set_xalign (GTK_LABEL (value), 1);
      gtk_label_set_width_chars (GTK_LABEL (value), 7); /* "100.0 %" */
      gtk_widget_add_css_class (value, "numeric");
      gtk_widget_add_css_class (value, "dim-label");
      gtk_grid_attach (GTK_GRID (self->grid), row, 0, r, 1, 1);
      gtk_grid_attach (GTK_GRID (self->grid), bar, 1, r, 1, 1);
      gtk_grid_attach (GTK_GRID (self->grid), value, 2, r, 1, 1);
    }
}

char *
saccade_predictions_view_dup_row_text (SaccadePredictionsView *self, int r)
{
  GtkWidget *name, *mark, *value;

  g_return_val_if_fail (SACCADE_IS_PREDICTIONS_VIEW (self), NULL);
  if (r < 0 || r >= self->k)
    return NULL;
  name = g_object_get_data (G_OBJECT (g_ptr_array_index (self->buttons, r)), "name");
  mark = g_object_get_data (G_OBJECT (g_ptr_array_index (self->buttons, r)), "mark");
  value = gtk_grid_get_child_at (GTK_GRID (self->grid), 2, r);
  return g_strdup_printf ("%s%s%s %s", gtk_label_get_text (GTK_LABEL (mark)),
                          *gtk_label_get_text (GTK_LABEL (mark)) != '\0' ? " " : "",
                          gtk_label_get_text (GTK_LABEL (name)),
                          gtk_label_get_text (GTK_LABEL (value)));
}
