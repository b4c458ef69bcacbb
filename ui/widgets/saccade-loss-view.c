/* saccade-loss-view.c — the in-context-learning curve widget (saccade-loss-view.h). The
 * hovered position's slot is outlined over the cached texture.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/widgets/saccade-loss-view.h"

#include <math.h>

#include "ui/figures/saccade-figure-private.h"
#include "ui/widgets/saccade-view-private.h"

struct _SaccadeLossView {
  GtkWidget parent_instance;

  /* owned data */
  int n;
  double *values;              /* (n) */
  int first_start, boundary;
  double mean_first, mean_second;
  char *value_name;
  char *title;

  SaccadeFigureCache *cache;
  SaccadeLossGeometry geom;    /* of the cached render */
  int hover;                   /* position under the pointer, or -1 */
};

G_DEFINE_FINAL_TYPE (SaccadeLossView, saccade_loss_view, GTK_TYPE_WIDGET)

static void
invalidate (SaccadeLossView *self)
{
  saccade_figure_cache_invalidate (self->cache);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
render (cairo_t *cr, double width, double height, gpointer user_data)
{
  SaccadeLossView *self = user_data;
  SaccadeLossFigure f = {
    .n = self->n, .values = self->values, .first_start = self->first_start,
    .boundary = self->boundary, .mean_first = self->mean_first,
    .mean_second = self->mean_second, .value_name = self->value_name, .title = self->title,
  };
  SaccadeFigureStyle style;

  saccade_view_style_init (GTK_WIDGET (self), &style);
  saccade_figure_loss_draw_full (cr, &f, &style, width, height, &self->geom);
}

static void
saccade_loss_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  SaccadeLossView *self = SACCADE_LOSS_VIEW (widget);

  saccade_view_snapshot_cache (widget, snapshot, self->cache, render, widget);
  if (self->hover >= 0 && self->hover < self->geom.n)
    saccade_view_snapshot_outline (widget, snapshot,
                                   self->geom.x0 + self->hover * self->geom.step,
                                   self->geom.y0, self->geom.step, self->geom.height, 1.0);
}

static void
saccade_loss_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                           int *minimum, int *natural, int *min_baseline, int *nat_baseline)
{
  *minimum = 140;
  *natural = 320;
}

static void
saccade_loss_view_css_changed (GtkWidget *widget, GtkCssStyleChange *change)
{
  GTK_WIDGET_CLASS (saccade_loss_view_parent_class)->css_changed (widget, change);
  invalidate (SACCADE_LOSS_VIEW (widget));
}

static gboolean
saccade_loss_view_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard,
                                 GtkTooltip *tooltip)
{
  SaccadeLossView *self = SACCADE_LOSS_VIEW (widget);
  g_autofree char *text = NULL;
  int q;

  if (keyboard || !saccade_loss_geometry_position_at (&self->geom, x, y, &q)
      || !isfinite (self->values[q]))
    return FALSE;
  /* Translators: the loss curve's tooltip: a position and the mean loss predicting it. */
  text = g_strdup_printf (_("Position %d (%s): %.3f nats"), q,
                          q < self->boundary ? _("first copy") : _("second copy"),
                          self->values[q]);
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

static void
on_motion (GtkEventControllerMotion *ctrl, double x, double y, SaccadeLossView *self)
{
  int q = -1;

  if (!saccade_loss_geometry_position_at (&self->geom, x, y, &q))
    q = -1;
  if (q != self->hover)
    {
      self->hover = q;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static void
on_leave (GtkEventControllerMotion *ctrl, SaccadeLossView *self)
{
  self->hover = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
saccade_loss_view_finalize (GObject *object)
{
  SaccadeLossView *self = SACCADE_LOSS_VIEW (object);

  g_free (self->values);
  g_free (self->value_name);
  g_free (self->title);
  saccade_figure_cache_free (self->cache);
  G_OBJECT_CLASS (saccade_loss_view_parent_class)->finalize (object);
}

static void
saccade_loss_view_class_init (SaccadeLossViewClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = saccade_loss_view_finalize;
  widget_class->snapshot = saccade_loss_view_snapshot;
  widget_class->measure = saccade_loss_view_measure;
  widget_class->css_changed = saccade_loss_view_css_changed;
  widget_class->query_tooltip = saccade_loss_view_query_tooltip;
  gtk_widget_class_set_css_name (widget_class, "lossview");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
saccade_loss_view_init (SaccadeLossView *self)
{
  GtkEventController *motion = gtk_event_controller_motion_new ();

  self->cache = saccade_figure_cache_new ();
  self->hover = -1;
  self->mean_first = self->mean_second = NAN;
  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (motion, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), motion);
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Loss at every position of the repeated sequence"), -1);
}

GtkWidget *
saccade_loss_view_new (void)
{
  return g_object_new (SACCADE_TYPE_LOSS_VIEW, NULL);
}

void
saccade_loss_view_set_data (SaccadeLossView *self, int n, const double *values,
                            int first_start, int boundary, double mean_first,
                            double mean_second, const char *value_name)
{
  g_return_if_fail (SACCADE_IS_LOSS_VIEW (self));

  g_clear_pointer (&self->values, g_free);
  if (n < 2 || values == NULL)
    n = 0;
  self->n = n;
  if (n > 0)
    self->values = g_memdup2 (values, (gsize) n * sizeof (double));
  self->first_start = first_start;
  self->boundary = boundary;
  self->mean_first = mean_first;
  self->mean_second = mean_second;
  self->hover = -1;
  saccade_view_set_str (&self->value_name, value_name);
  invalidate (self);
}

void
saccade_loss_view_set_title (SaccadeLossView *self, const char *title)
{
  g_return_if_fail (SACCADE_IS_LOSS_VIEW (self));
  if (saccade_view_set_str (&self->title, title))
    invalidate (self);
}
