/* saccade-predictions-view.c — the top-k next tokens after one position (see the header).
 *
 * A vertical box: a heading, then one row per prediction — the token label (ellipsized),
 * a level bar of its probability and the probability in per cent — in a GtkGrid rebuilt on
 * each change (k is ten at most, so rebuilding costs nothing worth caching).
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/widgets/saccade-predictions-view.h"

struct _SaccadePredictionsView
{
  GtkWidget parent_instance;

  GtkWidget *heading;   /* GtkLabel */
  GtkWidget *grid;      /* GtkGrid: label, bar, per cent */
  int k;
};

G_DEFINE_FINAL_TYPE (SaccadePredictionsView, saccade_predictions_view, GTK_TYPE_WIDGET)

static void
saccade_predictions_view_dispose (GObject *object)
{
  SaccadePredictionsView *self = SACCADE_PREDICTIONS_VIEW (object);

  g_clear_pointer (&self->heading, gtk_widget_unparent);
  g_clear_pointer (&self->grid, gtk_widget_unparent);
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
}

GtkWidget *
saccade_predictions_view_new (void)
{
  return g_object_new (SACCADE_TYPE_PREDICTIONS_VIEW, NULL);
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
  gtk_label_set_text (GTK_LABEL (self->heading), heading != NULL ? heading : "");
  self->k = MAX (k, 0);
  for (int r = 0; r < self->k; r++)
    {
      double p = CLAMP (probs[r], 0.0, 1.0);
      g_autofree char *pct = g_strdup_printf ("%.1f %%", 100 * p);
      GtkWidget *name = gtk_label_new (labels[r] != NULL ? labels[r] : "");
      GtkWidget *bar = gtk_level_bar_new_for_interval (0, 1);
      GtkWidget *value = gtk_label_new (pct);

      gtk_label_set_xalign (GTK_LABEL (name), 0);
      gtk_label_set_ellipsize (GTK_LABEL (name), PANGO_ELLIPSIZE_END);
      gtk_label_set_max_width_chars (GTK_LABEL (name), 14);
      gtk_label_set_width_chars (GTK_LABEL (name), 14);
      gtk_widget_set_tooltip_text (name, labels[r]);
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
      gtk_grid_attach (GTK_GRID (self->grid), name, 0, r, 1, 1);
      gtk_grid_attach (GTK_GRID (self->grid), bar, 1, r, 1, 1);
      gtk_grid_attach (GTK_GRID (self->grid), value, 2, r, 1, 1);
    }
}

char *
saccade_predictions_view_dup_row_text (SaccadePredictionsView *self, int r)
{
  GtkWidget *name, *value;

  g_return_val_if_fail (SACCADE_IS_PREDICTIONS_VIEW (self), NULL);
  if (r < 0 || r >= self->k)
    return NULL;
  name = gtk_grid_get_child_at (GTK_GRID (self->grid), 0, r);
  value = gtk_grid_get_child_at (GTK_GRID (self->grid), 2, r);
  return g_strdup_printf ("%s %s", gtk_label_get_text (GTK_LABEL (name)),
                          gtk_label_get_text (GTK_LABEL (value)));
}
