/* saccade-bars-view.c — the per-token bars widget (saccade-bars-view.h).
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/widgets/saccade-bars-view.h"

#include "ui/figures/saccade-figure-private.h"
#include "ui/widgets/saccade-view-private.h"

struct _SaccadeBarsView {
  GtkWidget parent_instance;

  /* owned data */
  int n;
  double *values;              /* (n) */
  char **labels;               /* (n) or NULL */
  char *value_name;
  char *title;
  SaccadeColormap colormap;

  int hover;                   /* -1: none */
  SaccadeFigureCache *cache;
  SaccadeBarsGeometry geom;    /* of the cached render */
};

G_DEFINE_FINAL_TYPE (SaccadeBarsView, saccade_bars_view, GTK_TYPE_WIDGET)

static void
invalidate (SaccadeBarsView *self)
{
  saccade_figure_cache_invalidate (self->cache);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
render (cairo_t *cr, double width, double height, gpointer user_data)
{
  SaccadeBarsView *self = user_data;
  SaccadeBarsFigure f = {
    .n = self->n, .values = self->values, .labels = (const char *const *) self->labels,
    .value_name = self->value_name, .title = self->title, .colormap = self->colormap,
  };
  SaccadeFigureStyle style;

  saccade_view_style_init (GTK_WIDGET (self), &style);
  saccade_figure_bars_draw_full (cr, &f, &style, width, height, &self->geom);
}

static void
saccade_bars_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  SaccadeBarsView *self = SACCADE_BARS_VIEW (widget);

  saccade_view_snapshot_cache (widget, snapshot, self->cache, render, self);
  if (self->hover >= 0 && self->hover < self->geom.n)
    saccade_view_snapshot_outline (widget, snapshot, self->geom.x0 + self->hover * self->geom.step,
                                   self->geom.y0, self->geom.step, self->geom.height, 1.0);
}

static void
saccade_bars_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                           int *minimum, int *natural, int *min_baseline, int *nat_baseline)
{
  *minimum = 120;
  *natural = 320;
}

static void
saccade_bars_view_css_changed (GtkWidget *widget, GtkCssStyleChange *change)
{
  GTK_WIDGET_CLASS (saccade_bars_view_parent_class)->css_changed (widget, change);
  invalidate (SACCADE_BARS_VIEW (widget));
}

static gboolean
saccade_bars_view_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard,
                                 GtkTooltip *tooltip)
{
  SaccadeBarsView *self = SACCADE_BARS_VIEW (widget);
  g_autofree char *text = NULL;
  char pos[16];
  int i;

  if (keyboard || !saccade_bars_geometry_bar_at (&self->geom, x, y, &i))
    return FALSE;
  /* Translators: a bar's tooltip: the token (its position) and its value. */
  text = g_strdup_printf (_("“%s” (%d): %.3f"),
                          saccade_figure_label ((const char *const *) self->labels, i, pos), i,
                          self->values[i]);
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

static void
on_motion (GtkEventControllerMotion *ctrl, double x, double y, SaccadeBarsView *self)
{
  int i = -1;

  if (!saccade_bars_geometry_bar_at (&self->geom, x, y, &i))
    i = -1;
  if (i != self->hover)
    {
      self->hover = i;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static void
on_leave (GtkEventControllerMotion *ctrl, SaccadeBarsView *self)
{
  self->hover = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
saccade_bars_view_finalize (GObject *object)
{
  SaccadeBarsView *self = SACCADE_BARS_VIEW (object);

  g_free (self->values);
  g_strfreev (self->labels);
  g_free (self->value_name);
  g_free (self->title);
  saccade_figure_cache_free (self->cache);
  G_OBJECT_CLASS (saccade_bars_view_parent_class)->finalize (object);
}

static void
saccade_bars_view_class_init (SaccadeBarsViewClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = saccade_bars_view_finalize;
  widget_class->snapshot = saccade_bars_view_snapshot;
  widget_class->measure = saccade_bars_view_measure;
  widget_class->css_changed = saccade_bars_view_css_changed;
  widget_class->query_tooltip = saccade_bars_view_query_tooltip;
  gtk_widget_class_set_css_name (widget_class, "barsview");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
saccade_bars_view_init (SaccadeBarsView *self)
{
  GtkEventController *ctrl;

  self->hover = -1;
  self->colormap = SACCADE_COLORMAP_VIRIDIS;
  self->cache = saccade_figure_cache_new ();
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  ctrl = gtk_event_controller_motion_new ();
  g_signal_connect (ctrl, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (ctrl, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), ctrl);
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("One value per token"), -1);
}

GtkWidget *
saccade_bars_view_new (void)
{
  return g_object_new (SACCADE_TYPE_BARS_VIEW, NULL);
}

void
saccade_bars_view_set_data (SaccadeBarsView *self, int n, const double *values,
                            const char *const *labels, const char *value_name)
{
  g_return_if_fail (SACCADE_IS_BARS_VIEW (self));

  g_clear_pointer (&self->values, g_free);
  g_clear_pointer (&self->labels, g_strfreev);
  if (n <= 0 || values == NULL)
    n = 0;
  self->n = n;
  if (n > 0)
    {
      self->values = g_memdup2 (values, (gsize) n * sizeof (double));
      self->labels = saccade_view_labels_dup (labels, n);
    }
  self->hover = -1;
  saccade_view_set_str (&self->value_name, value_name);
  invalidate (self);
}

void
saccade_bars_view_set_title (SaccadeBarsView *self, const char *title)
{
  g_return_if_fail (SACCADE_IS_BARS_VIEW (self));
  if (saccade_view_set_str (&self->title, title))
    invalidate (self);
}

void
saccade_bars_view_set_colormap (SaccadeBarsView *self, SaccadeColormap colormap)
{
  g_return_if_fail (SACCADE_IS_BARS_VIEW (self));
  if (colormap == self->colormap)
    return;
  self->colormap = colormap;
  invalidate (self);
}
