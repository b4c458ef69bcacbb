/* saccade-profile-view.c — the layer profile widget (saccade-profile-view.h). Its tooltip
 * names the layer under the pointer and that layer's mean.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/widgets/saccade-profile-view.h"

#include <math.h>

#include "ui/figures/saccade-figure-private.h"
#include "ui/widgets/saccade-view-private.h"

struct _SaccadeProfileView {
  GtkWidget parent_instance;

  /* owned data */
  int n_layers, n_heads;
  double *values;              /* (n_layers, n_heads) */
  char *metric_name;
  char *title;

  SaccadeFigureCache *cache;
};

G_DEFINE_FINAL_TYPE (SaccadeProfileView, saccade_profile_view, GTK_TYPE_WIDGET)

static void
invalidate (SaccadeProfileView *self)
{
  saccade_figure_cache_invalidate (self->cache);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
render (cairo_t *cr, double width, double height, gpointer user_data)
{
  SaccadeProfileView *self = user_data;
  SaccadeProfileFigure f = {
    .n_layers = self->n_layers, .n_heads = self->n_heads, .values = self->values,
    .metric_name = self->metric_name, .title = self->title,
  };
  SaccadeFigureStyle style;

  saccade_view_style_init (GTK_WIDGET (self), &style);
  saccade_figure_profile_draw_full (cr, &f, &style, width, height);
}

static void
saccade_profile_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  saccade_view_snapshot_cache (widget, snapshot, SACCADE_PROFILE_VIEW (widget)->cache, render,
                               widget);
}

static void
saccade_profile_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                              int *minimum, int *natural, int *min_baseline, int *nat_baseline)
{
  *minimum = 160;
  *natural = 480;
}

static void
saccade_profile_view_css_changed (GtkWidget *widget, GtkCssStyleChange *change)
{
  GTK_WIDGET_CLASS (saccade_profile_view_parent_class)->css_changed (widget, change);
  invalidate (SACCADE_PROFILE_VIEW (widget));
}

static void
saccade_profile_view_finalize (GObject *object)
{
  SaccadeProfileView *self = SACCADE_PROFILE_VIEW (object);

  g_free (self->values);
  g_free (self->metric_name);
  g_free (self->title);
  saccade_figure_cache_free (self->cache);
  G_OBJECT_CLASS (saccade_profile_view_parent_class)->finalize (object);
}

static void
saccade_profile_view_class_init (SaccadeProfileViewClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = saccade_profile_view_finalize;
  widget_class->snapshot = saccade_profile_view_snapshot;
  widget_class->measure = saccade_profile_view_measure;
  widget_class->css_changed = saccade_profile_view_css_changed;
  gtk_widget_class_set_css_name (widget_class, "profileview");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
saccade_profile_view_init (SaccadeProfileView *self)
{
  self->cache = saccade_figure_cache_new ();
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("A head metric by layer"), -1);
}

GtkWidget *
saccade_profile_view_new (void)
{
  return g_object_new (SACCADE_TYPE_PROFILE_VIEW, NULL);
}

void
saccade_profile_view_set_data (SaccadeProfileView *self, int n_layers, int n_heads,
                               const double *values, const char *metric_name)
{
  g_return_if_fail (SACCADE_IS_PROFILE_VIEW (self));

  g_clear_pointer (&self->values, g_free);
  if (n_layers <= 0 || n_heads <= 0 || values == NULL)
    n_layers = n_heads = 0;
  self->n_layers = n_layers;
  self->n_heads = n_heads;
  if (n_layers > 0)
    self->values = g_memdup2 (values, (gsize) n_layers * n_heads * sizeof (double));
  saccade_view_set_str (&self->metric_name, metric_name);
  invalidate (self);
}

void
saccade_profile_view_set_title (SaccadeProfileView *self, const char *title)
{
  g_return_if_fail (SACCADE_IS_PROFILE_VIEW (self));
  if (saccade_view_set_str (&self->title, title))
    invalidate (self);
}
