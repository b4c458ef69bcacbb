/* saccade-grid-view.c — every head of a run as thumbnails (saccade-grid-view.h).
 *
 * The heads are kept only as thumbnails (SaccadeGridThumbs, made once per data set), so a
 * 30 x 9 x 512 x 512 run costs 4 MB here, not 280. The grid is rendered into a
 * SaccadeFigureCache by saccade_figure_grid_draw_full(); a hover outline is drawn over the
 * texture without rendering again. A click on a thumbnail selects it and emits
 * "head-activated"; Enter or Space activates the selected head.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/widgets/saccade-grid-view.h"

#include "ui/figures/saccade-figure-private.h"
#include "ui/widgets/saccade-view-private.h"

struct _SaccadeGridView {
  GtkWidget parent_instance;

  /* owned data */
  int n_layers, n_heads, n_kv_heads, n;
  SaccadeGridThumbs *thumbs;
  double *metric;              /* (n_layers, n_heads) or NULL */
  char *metric_name;
  guint *layer_windows;        /* (n_layers) or NULL: saccade_grid_view_set_layer_windows */
  char *title;
  SaccadeColormap colormap;

  int sel_layer, sel_head;     /* -1: none */
  int hover_layer, hover_head; /* -1: none */

  SaccadeFigureCache *cache;
  SaccadeGridGeometry geom;    /* of the cached render */
};

G_DEFINE_FINAL_TYPE (SaccadeGridView, saccade_grid_view, GTK_TYPE_WIDGET)

enum {
  PROP_0,
  PROP_COLORMAP,
  N_PROPS
};

enum {
  HEAD_ACTIVATED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static void
invalidate (SaccadeGridView *self)
{
  saccade_figure_cache_invalidate (self->cache);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
render (cairo_t *cr, double width, double height, gpointer user_data)
{
  SaccadeGridView *self = user_data;
  SaccadeGridFigure f = {
    .n_layers = self->n_layers, .n_heads = self->n_heads, .n_kv_heads = self->n_kv_heads,
    .n = self->n, .heads = NULL, .metric = self->metric, .metric_name = self->metric_name,
    .title = self->title, .colormap = self->colormap, .scale = SACCADE_SCALE_LINEAR,
    .layer_windows = self->layer_windows,
  };
  SaccadeFigureStyle style;

  saccade_view_style_init (GTK_WIDGET (self), &style);
  self->geom = (SaccadeGridGeometry) { 0 };
  if (self->thumbs == NULL)
    return;
  saccade_figure_grid_draw_full (cr, &f, self->thumbs, &style, self->sel_layer, self->sel_head,
                                 width, height, &self->geom);
}

static void
saccade_grid_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  SaccadeGridView *self = SACCADE_GRID_VIEW (widget);

  saccade_view_snapshot_cache (widget, snapshot, self->cache, render, self);
  if (self->hover_layer >= 0 && self->geom.thumb > 0)
    {
      double r[4], o = self->geom.thumb * 0.04 + 1;
      saccade_grid_geometry_head_rect (&self->geom, self->hover_layer, self->hover_head, r);
      saccade_view_snapshot_outline (widget, snapshot, r[0] - o, r[1] - o, r[2] + 2 * o,
                                     r[3] + 2 * o, 1.0);
    }
}

gboolean
saccade_grid_view_get_drawn (SaccadeGridView *self, double rect[4])
{
  g_return_val_if_fail (SACCADE_IS_GRID_VIEW (self), FALSE);
  return saccade_grid_geometry_extent (&self->geom, rect);
}

static void
saccade_grid_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                           int *minimum, int *natural, int *min_baseline, int *nat_baseline)
{
  *minimum = 160;
  *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 720 : 360;
}

static void
saccade_grid_view_css_changed (GtkWidget *widget, GtkCssStyleChange *change)
{
  GTK_WIDGET_CLASS (saccade_grid_view_parent_class)->css_changed (widget, change);
  invalidate (SACCADE_GRID_VIEW (widget));
}

static gboolean
saccade_grid_view_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard,
                                 GtkTooltip *tooltip)
{
  SaccadeGridView *self = SACCADE_GRID_VIEW (widget);
  int layer, head, group;
  g_autofree char *text = NULL;

  if (keyboard && self->sel_layer >= 0)
    layer = self->sel_layer, head = self->sel_head;
  else if (keyboard || !saccade_grid_geometry_head_at (&self->geom, x, y, &layer, &head))
    return FALSE;
  group = self->n_kv_heads > 0 ? self->n_heads / self->n_kv_heads : self->n_heads;
  text = g_strdup_printf (_("Layer %d, head %d (KV head %d)"), layer, head,
                          head / MAX (group, 1));
  if (self->metric != NULL)
    {
      g_autofree char *line = g_strdup_printf ("\n%s: %.4g",
                                               self->metric_name != NULL ? self->metric_name
                                                                         : _("metric"),
                                               self->metric[layer * self->n_heads + head]);
      char *both = g_strconcat (text, line, NULL);
      g_free (text);
      text = both;
    }
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

static void
on_motion (GtkEventControllerMotion *ctrl, double x, double y, SaccadeGridView *self)
{
  int layer = -1, head = -1;

  if (!saccade_grid_geometry_head_at (&self->geom, x, y, &layer, &head))
    layer = head = -1;
  if (layer != self->hover_layer || head != self->hover_head)
    {
      self->hover_layer = layer;
      self->hover_head = head;
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}

static void
on_leave (GtkEventControllerMotion *ctrl, SaccadeGridView *self)
{
  self->hover_layer = self->hover_head = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_released (GtkGestureClick *gesture, int n_press, double x, double y, SaccadeGridView *self)
{
  int layer, head;

  if (!saccade_grid_geometry_head_at (&self->geom, x, y, &layer, &head))
    return;
  gtk_widget_grab_focus (GTK_WIDGET (self));
  saccade_grid_view_set_selected (self, layer, head);
  g_signal_emit (self, signals[HEAD_ACTIVATED], 0, layer, head);
}

static void
action_activate (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeGridView *self = SACCADE_GRID_VIEW (widget);

  if (self->sel_layer >= 0)
    g_signal_emit (self, signals[HEAD_ACTIVATED], 0, self->sel_layer, self->sel_head);
}

static void
saccade_grid_view_finalize (GObject *object)
{
  SaccadeGridView *self = SACCADE_GRID_VIEW (object);

  saccade_grid_thumbs_free (self->thumbs);
  g_free (self->metric);
  g_free (self->layer_windows);
  g_free (self->metric_name);
  g_free (self->title);
  saccade_figure_cache_free (self->cache);
  G_OBJECT_CLASS (saccade_grid_view_parent_class)->finalize (object);
}

static void
saccade_grid_view_get_property (GObject *object, guint prop_id, GValue *value,
                                GParamSpec *pspec)
{
  SaccadeGridView *self = SACCADE_GRID_VIEW (object);

  switch (prop_id)
    {
    case PROP_COLORMAP:
      g_value_set_enum (value, self->colormap);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
saccade_grid_view_set_property (GObject *object, guint prop_id, const GValue *value,
                                GParamSpec *pspec)
{
  SaccadeGridView *self = SACCADE_GRID_VIEW (object);

  switch (prop_id)
    {
    case PROP_COLORMAP:
      saccade_grid_view_set_colormap (self, g_value_get_enum (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
saccade_grid_view_class_init (SaccadeGridViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->finalize = saccade_grid_view_finalize;
  object_class->get_property = saccade_grid_view_get_property;
  object_class->set_property = saccade_grid_view_set_property;
  widget_class->snapshot = saccade_grid_view_snapshot;
  widget_class->measure = saccade_grid_view_measure;
  widget_class->query_tooltip = saccade_grid_view_query_tooltip;
  widget_class->css_changed = saccade_grid_view_css_changed;

  properties[PROP_COLORMAP] =
    g_param_spec_enum ("colormap", NULL, NULL, SACCADE_TYPE_COLORMAP, SACCADE_COLORMAP_VIRIDIS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * SaccadeGridView::head-activated:
   * @layer: the head's layer
   * @head: the query head within the layer
   *
   * A thumbnail was clicked, or Enter pressed on the selected one.
   */
  signals[HEAD_ACTIVATED] =
    g_signal_new ("head-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);

  gtk_widget_class_install_action (widget_class, "grid.activate", NULL, action_activate);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Return, 0, "grid.activate", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Enter, 0, "grid.activate", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_space, 0, "grid.activate", NULL);

  gtk_widget_class_set_css_name (widget_class, "gridview");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
saccade_grid_view_init (SaccadeGridView *self)
{
  GtkEventController *ctrl;
  GtkGesture *gesture;

  self->sel_layer = self->sel_head = -1;
  self->hover_layer = self->hover_head = -1;
  self->cache = saccade_figure_cache_new ();
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);

  ctrl = gtk_event_controller_motion_new ();
  g_signal_connect (ctrl, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (ctrl, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), ctrl);

  gesture = gtk_gesture_click_new ();
  g_signal_connect (gesture, "released", G_CALLBACK (on_released), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (gesture));

  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Every attention head of the run"), -1);
}

GtkWidget *
saccade_grid_view_new (void)
{
  return g_object_new (SACCADE_TYPE_GRID_VIEW, NULL);
}

/* Takes the shape and thumbnails of @f (heads or overviews). */
static void
set_figure (SaccadeGridView *self, const SaccadeGridFigure *f, const double *metric,
            const char *metric_name)
{
  int n_layers = f->n_layers;

  g_clear_pointer (&self->thumbs, saccade_grid_thumbs_free);
  g_clear_pointer (&self->layer_windows, g_free);
  self->n_layers = n_layers > 0 ? n_layers : 0;
  self->n_heads = n_layers > 0 ? f->n_heads : 0;
  self->n_kv_heads = n_layers > 0 ? f->n_kv_heads : 0;
  self->n = n_layers > 0 ? f->n : 0;
  if (n_layers > 0)
    self->thumbs = saccade_grid_thumbs_new (f);
  if (self->sel_layer >= self->n_layers || self->sel_head >= self->n_heads)
    self->sel_layer = self->sel_head = -1;
  self->hover_layer = self->hover_head = -1;
  saccade_grid_view_set_metric (self, metric, metric_name);
  invalidate (self);
}

void
saccade_grid_view_set_data (SaccadeGridView *self, int n_layers, int n_heads, int n_kv_heads,
                            int n, const float *heads, const double *metric,
                            const char *metric_name)
{
  SaccadeGridFigure f = { .n_layers = n_layers, .n_heads = n_heads,
                          .n_kv_heads = n_kv_heads, .n = n, .heads = heads };

  g_return_if_fail (SACCADE_IS_GRID_VIEW (self));
  g_return_if_fail (n_layers <= 0 || (n_heads > 0 && n > 0 && heads != NULL));
  g_return_if_fail (n_layers <= 0 || (n_kv_heads > 0 && n_heads % n_kv_heads == 0));

  if (heads == NULL)
    f.n_layers = 0;
  set_figure (self, &f, metric, metric_name);
}

void
saccade_grid_view_set_overviews (SaccadeGridView *self, int n_layers, int n_heads,
                                 int n_kv_heads, int n, int overview_size,
                                 const float *overviews, const double *metric,
                                 const char *metric_name)
{
  SaccadeGridFigure f = { .n_layers = n_layers, .n_heads = n_heads,
                          .n_kv_heads = n_kv_heads, .n = n, .overviews = overviews,
                          .overview_size = overview_size };

  g_return_if_fail (SACCADE_IS_GRID_VIEW (self));
  g_return_if_fail (n_layers <= 0 || (n_heads > 0 && n > 0 && overviews != NULL
                                      && overview_size > 0 && overview_size <= n));
  g_return_if_fail (n_layers <= 0 || (n_kv_heads > 0 && n_heads % n_kv_heads == 0));

  if (overviews == NULL)
    f.n_layers = 0;
  set_figure (self, &f, metric, metric_name);
}

void
saccade_grid_view_set_layer_windows (SaccadeGridView *self, const guint *windows)
{
  g_return_if_fail (SACCADE_IS_GRID_VIEW (self));

  g_clear_pointer (&self->layer_windows, g_free);
  if (windows != NULL && self->n_layers > 0)
    self->layer_windows = g_memdup2 (windows, (gsize) self->n_layers * sizeof *windows);
  invalidate (self);
}

void
saccade_grid_view_set_metric (SaccadeGridView *self, const double *metric,
                              const char *metric_name)
{
  g_return_if_fail (SACCADE_IS_GRID_VIEW (self));

  g_clear_pointer (&self->metric, g_free);
  if (metric != NULL && self->n_layers > 0)
    self->metric = g_memdup2 (metric, (gsize) self->n_layers * self->n_heads * sizeof (double));
  saccade_view_set_str (&self->metric_name, metric_name);
  invalidate (self);
}

void
saccade_grid_view_set_title (SaccadeGridView *self, const char *title)
{
  g_return_if_fail (SACCADE_IS_GRID_VIEW (self));

  if (saccade_view_set_str (&self->title, title))
    invalidate (self);
}

void
saccade_grid_view_set_colormap (SaccadeGridView *self, SaccadeColormap colormap)
{
  g_return_if_fail (SACCADE_IS_GRID_VIEW (self));
  g_return_if_fail ((guint) colormap <= SACCADE_COLORMAP_LAST);

  if (self->colormap == colormap)
    return;
  self->colormap = colormap;
  invalidate (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COLORMAP]);
}

SaccadeColormap
saccade_grid_view_get_colormap (SaccadeGridView *self)
{
  g_return_val_if_fail (SACCADE_IS_GRID_VIEW (self), SACCADE_COLORMAP_VIRIDIS);
  return self->colormap;
}

void
saccade_grid_view_set_selected (SaccadeGridView *self, int layer, int head)
{
  g_return_if_fail (SACCADE_IS_GRID_VIEW (self));

  if (layer < 0 || head < 0 || layer >= self->n_layers || head >= self->n_heads)
    layer = head = -1;
  if (layer == self->sel_layer && head == self->sel_head)
    return;
  self->sel_layer = layer;
  self->sel_head = head;
  invalidate (self);
}
