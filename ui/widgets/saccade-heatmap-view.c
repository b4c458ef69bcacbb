/* saccade-heatmap-view.c — one head as an interactive heatmap (saccade-heatmap-view.h).
 *
 * The figure is rendered by saccade_figure_heatmap_draw_full() into a SaccadeFigureCache
 * and shown as a texture. The cache is invalidated by new data, a colour map or scale,
 * a title, a theme change, and by zooming or panning (which change the visible cells);
 * hovering only draws an outline over the texture. The view state is a zoom factor and
 * the first visible row and column; the renderer's geometry turns pointer positions into
 * cells.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/widgets/saccade-heatmap-view.h"

#include <math.h>

#include "ui/figures/saccade-figure-private.h"
#include "ui/widgets/saccade-view-private.h"

/* Beyond this zoom a cell is bigger than most windows. */
#define ZOOM_MAX 64.0
/* One wheel notch (or key press) zooms by this factor. */
#define ZOOM_STEP 1.25

struct _SaccadeHeatmapView {
  GtkWidget parent_instance;

  /* owned data */
  float *values;               /* (n_rows, n_cols) */
  int n_rows, n_cols;
  char **row_labels, **col_labels;
  gboolean causal;
  char *title;
  char *row_name, *col_name;   /* for a matrix that is not a head: what rows, columns and */
  char *value_name;            /* values are ("Layer", "Head", "prefix matching"), or NULL */
  SaccadeColormap colormap;
  SaccadeScale scale;

  /* view */
  double zoom;                 /* >= 1: the share of rows and columns shown is 1 / zoom */
  double row0, col0;           /* first visible cell (fractional) */
  double drag_row0, drag_col0; /* at the start of a drag */
  double pinch_zoom0;          /* at the start of a pinch */
  double pointer_x, pointer_y; /* last pointer position, for zooming around it */
  int hover_row, hover_col;    /* -1: none */

  SaccadeFigureCache *cache;
  SaccadeHeatmapGeometry geom; /* where the cached render put the cells */
};

G_DEFINE_FINAL_TYPE (SaccadeHeatmapView, saccade_heatmap_view, GTK_TYPE_WIDGET)

enum {
  CELL_ACTIVATED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

enum {
  PROP_0,
  PROP_COLORMAP,
  PROP_SCALE,
  PROP_TITLE,
  PROP_ZOOM,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
invalidate (SaccadeHeatmapView *self)
{
  saccade_figure_cache_invalidate (self->cache);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static SaccadeHeatmapFigure
figure (SaccadeHeatmapView *self)
{
  return (SaccadeHeatmapFigure) {
    .values = self->values, .n_rows = self->n_rows, .n_cols = self->n_cols,
    .row_labels = (const char *const *) self->row_labels,
    .col_labels = (const char *const *) self->col_labels,
    .title = self->title, .colormap = self->colormap, .scale = self->scale,
    .causal = self->causal, .row_name = self->row_name, .col_name = self->col_name,
    .value_name = self->value_name,
  };
}

static SaccadeCellRange
visible_range (SaccadeHeatmapView *self)
{
  return (SaccadeCellRange) { self->row0, self->col0, self->n_rows / self->zoom,
                              self->n_cols / self->zoom };
}

static void
clamp_view (SaccadeHeatmapView *self)
{
  self->zoom = CLAMP (self->zoom, 1.0, ZOOM_MAX);
  self->row0 = CLAMP (self->row0, 0.0, self->n_rows - self->n_rows / self->zoom);
  self->col0 = CLAMP (self->col0, 0.0, self->n_cols - self->n_cols / self->zoom);
}

static void
render (cairo_t *cr, double width, double height, gpointer user_data)
{
  SaccadeHeatmapView *self = user_data;
  SaccadeHeatmapFigure f = figure (self);
  SaccadeCellRange range = visible_range (self);
  SaccadeFigureStyle style;

  saccade_view_style_init (GTK_WIDGET (self), &style);
  saccade_figure_heatmap_draw_full (cr, &f, &range, &style, width, height, &self->geom);
}

static void
saccade_heatmap_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  SaccadeHeatmapView *self = SACCADE_HEATMAP_VIEW (widget);
  const SaccadeHeatmapGeometry *g = &self->geom;

  saccade_view_snapshot_cache (widget, snapshot, self->cache, render, self);
  if (self->hover_row >= 0 && g->cell_w > 0)
    {
      double x = g->x + (self->hover_col - g->range.col0) * g->cell_w;
      double y = g->y + (self->hover_row - g->range.row0) * g->cell_h;
      gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT ((float) g->x, (float) g->y,
                                                             (float) g->width, (float) g->height));
      saccade_view_snapshot_outline (widget, snapshot, x, y, g->cell_w, g->cell_h,
                                     MAX (1.0, MIN (2.0, g->cell_w / 8)));
      gtk_snapshot_pop (snapshot);
    }
}

static void
saccade_heatmap_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                              int *minimum, int *natural, int *min_baseline, int *nat_baseline)
{
  /* Small enough for a narrow window; the page gives the figure whatever room it has. */
  *minimum = 160;
  *natural = 480;
}

static void
saccade_heatmap_view_css_changed (GtkWidget *widget, GtkCssStyleChange *change)
{
  GTK_WIDGET_CLASS (saccade_heatmap_view_parent_class)->css_changed (widget, change);
  invalidate (SACCADE_HEATMAP_VIEW (widget));
}

static void
saccade_heatmap_view_system_setting_changed (GtkWidget *widget, GtkSystemSetting setting)
{
  GTK_WIDGET_CLASS (saccade_heatmap_view_parent_class)->system_setting_changed (widget, setting);
  invalidate (SACCADE_HEATMAP_VIEW (widget));
}

static const char *
label_of (char **labels, int i, char buf[16])
{
  return saccade_figure_label ((const char *const *) labels, i, buf);
}

static gboolean
saccade_heatmap_view_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard,
                                    GtkTooltip *tooltip)
{
  SaccadeHeatmapView *self = SACCADE_HEATMAP_VIEW (widget);
  g_autofree char *text = NULL;
  char qb[16], kb[16];
  int r, c;

  if (keyboard || !saccade_heatmap_geometry_cell_at (&self->geom, x, y, &r, &c))
    return FALSE;
  if (self->row_name != NULL && self->col_name != NULL)
    /* Translators: a cell of a matrix that is not a head, e.g. "Layer 17 · head 3: 0.8170". */
    text = g_strdup_printf (_("%s %s · %s %s: %.4f"), self->row_name,
                            label_of (self->row_labels, r, qb), self->col_name,
                            label_of (self->col_labels, c, kb),
                            self->values[(gsize) r * self->n_cols + c]);
  else if (self->causal && c > r)
    /* Translators: a masked cell of a causal head: the query cannot see a later key. */
    text = g_strdup_printf (_("“%s” (%d) → “%s” (%d): masked, a later token"),
                            label_of (self->row_labels, r, qb), r,
                            label_of (self->col_labels, c, kb), c);
  else
    /* Translators: query token (position) → key token (position): attention weight */
    text = g_strdup_printf (_("“%s” (%d) → “%s” (%d): %.4f"),
                            label_of (self->row_labels, r, qb), r,
                            label_of (self->col_labels, c, kb), c,
                            self->values[(gsize) r * self->n_cols + c]);
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

/* Zooms by @factor keeping the cell under (@x, @y) where it is. */
static void
zoom_at (SaccadeHeatmapView *self, double factor, double x, double y)
{
  const SaccadeHeatmapGeometry *g = &self->geom;
  double old = self->zoom, r, c;

  if (self->n_rows <= 0 || g->cell_w <= 0)
    return;
  x = CLAMP (x, g->x, g->x + g->width);
  y = CLAMP (y, g->y, g->y + g->height);
  r = g->range.row0 + (y - g->y) / g->cell_h;
  c = g->range.col0 + (x - g->x) / g->cell_w;
  self->zoom = CLAMP (old * factor, 1.0, ZOOM_MAX);
  if (self->zoom == old)
    return;
  /* Margins do not depend on the zoom, so the cell size scales with it. */
  self->row0 = r - (y - g->y) / (g->cell_h * self->zoom / old);
  self->col0 = c - (x - g->x) / (g->cell_w * self->zoom / old);
  clamp_view (self);
  invalidate (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
}

static void
zoom_centre (SaccadeHeatmapView *self, double factor)
{
  zoom_at (self, factor, self->geom.x + self->geom.width / 2,
           self->geom.y + self->geom.height / 2);
}

static gboolean
on_scroll (GtkEventControllerScroll *ctrl, double dx, double dy, SaccadeHeatmapView *self)
{
  GdkModifierType state =
    gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (ctrl));

  if (state & GDK_CONTROL_MASK)
    {
      zoom_at (self, pow (ZOOM_STEP, -dy), self->pointer_x, self->pointer_y);
      return TRUE;
    }
  if (self->zoom > 1.0)
    {
      /* Zoomed in: the wheel pans (Shift: sideways), three cells a notch. */
      if (state & GDK_SHIFT_MASK)
        dx = dy, dy = 0;
      self->row0 += 3 * dy;
      self->col0 += 3 * dx;
      clamp_view (self);
      invalidate (self);
      return TRUE;
    }
  return FALSE; /* let a scrolled parent have it */
}

static void
on_motion (GtkEventControllerMotion *ctrl, double x, double y, SaccadeHeatmapView *self)
{
  int r = -1, c = -1;

  self->pointer_x = x;
  self->pointer_y = y;
  if (!saccade_heatmap_geometry_cell_at (&self->geom, x, y, &r, &c))
    r = c = -1;
  if (r != self->hover_row || c != self->hover_col)
    {
      self->hover_row = r;
      self->hover_col = c;
      gtk_widget_queue_draw (GTK_WIDGET (self)); /* the outline only: no render */
    }
}

static void
on_leave (GtkEventControllerMotion *ctrl, SaccadeHeatmapView *self)
{
  self->hover_row = self->hover_col = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_drag_begin (GtkGestureDrag *gesture, double x, double y, SaccadeHeatmapView *self)
{
  if (self->zoom <= 1.0)
    {
      gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_DENIED);
      return;
    }
  self->drag_row0 = self->row0;
  self->drag_col0 = self->col0;
}

static void
on_drag_update (GtkGestureDrag *gesture, double dx, double dy, SaccadeHeatmapView *self)
{
  if (self->geom.cell_w <= 0)
    return;
  self->row0 = self->drag_row0 - dy / self->geom.cell_h;
  self->col0 = self->drag_col0 - dx / self->geom.cell_w;
  clamp_view (self);
  invalidate (self);
}

static void
on_pinch_begin (GtkGesture *gesture, GdkEventSequence *seq, SaccadeHeatmapView *self)
{
  self->pinch_zoom0 = self->zoom;
}

static void
on_pinch (GtkGestureZoom *gesture, double scale, SaccadeHeatmapView *self)
{
  double x, y;

  if (!gtk_gesture_get_bounding_box_center (GTK_GESTURE (gesture), &x, &y))
    x = self->pointer_x, y = self->pointer_y;
  zoom_at (self, self->pinch_zoom0 * scale / self->zoom, x, y);
}

static void
on_click (GtkGestureClick *gesture, int n_press, double x, double y, SaccadeHeatmapView *self)
{
  int r, c;

  if (n_press == 2)
    saccade_heatmap_view_reset_zoom (self);
  else if (n_press == 1 && saccade_heatmap_geometry_cell_at (&self->geom, x, y, &r, &c)
           && !(self->causal && c > r))
    g_signal_emit (self, signals[CELL_ACTIVATED], 0, r, c);
}

static void
action_zoom (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeHeatmapView *self = SACCADE_HEATMAP_VIEW (widget);

  if (g_str_equal (name, "heatmap.zoom-in"))
    zoom_centre (self, ZOOM_STEP);
  else if (g_str_equal (name, "heatmap.zoom-out"))
    zoom_centre (self, 1.0 / ZOOM_STEP);
  else
    saccade_heatmap_view_reset_zoom (self);
}

static void
saccade_heatmap_view_finalize (GObject *object)
{
  SaccadeHeatmapView *self = SACCADE_HEATMAP_VIEW (object);

  g_free (self->values);
  g_free (self->row_name);
  g_free (self->col_name);
  g_free (self->value_name);
  g_strfreev (self->row_labels);
  g_strfreev (self->col_labels);
  g_free (self->title);
  saccade_figure_cache_free (self->cache);
  G_OBJECT_CLASS (saccade_heatmap_view_parent_class)->finalize (object);
}

static void
saccade_heatmap_view_get_property (GObject *object, guint prop_id, GValue *value,
                                   GParamSpec *pspec)
{
  SaccadeHeatmapView *self = SACCADE_HEATMAP_VIEW (object);

  switch (prop_id)
    {
    case PROP_COLORMAP:
      g_value_set_enum (value, self->colormap);
      break;
    case PROP_SCALE:
      g_value_set_enum (value, self->scale);
      break;
    case PROP_TITLE:
      g_value_set_string (value, self->title);
      break;
    case PROP_ZOOM:
      g_value_set_double (value, self->zoom);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
saccade_heatmap_view_set_property (GObject *object, guint prop_id, const GValue *value,
                                   GParamSpec *pspec)
{
  SaccadeHeatmapView *self = SACCADE_HEATMAP_VIEW (object);

  switch (prop_id)
    {
    case PROP_COLORMAP:
      saccade_heatmap_view_set_colormap (self, g_value_get_enum (value));
      break;
    case PROP_SCALE:
      saccade_heatmap_view_set_scale (self, g_value_get_enum (value));
      break;
    case PROP_TITLE:
      saccade_heatmap_view_set_title (self, g_value_get_string (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
saccade_heatmap_view_class_init (SaccadeHeatmapViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->finalize = saccade_heatmap_view_finalize;
  object_class->get_property = saccade_heatmap_view_get_property;
  object_class->set_property = saccade_heatmap_view_set_property;
  widget_class->snapshot = saccade_heatmap_view_snapshot;
  widget_class->measure = saccade_heatmap_view_measure;
  widget_class->query_tooltip = saccade_heatmap_view_query_tooltip;
  widget_class->css_changed = saccade_heatmap_view_css_changed;
  widget_class->system_setting_changed = saccade_heatmap_view_system_setting_changed;

  properties[PROP_COLORMAP] =
    g_param_spec_enum ("colormap", NULL, NULL, SACCADE_TYPE_COLORMAP, SACCADE_COLORMAP_VIRIDIS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_SCALE] =
    g_param_spec_enum ("scale", NULL, NULL, SACCADE_TYPE_SCALE, SACCADE_SCALE_LINEAR,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_TITLE] =
    g_param_spec_string ("title", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_ZOOM] =
    g_param_spec_double ("zoom", NULL, NULL, 1.0, ZOOM_MAX, 1.0,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * SaccadeHeatmapView::cell-activated:
   * @row: the cell's row
   * @col: the cell's column
   *
   * A cell that is not masked was clicked (once).
   */
  signals[CELL_ACTIVATED] =
    g_signal_new ("cell-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);

  gtk_widget_class_install_action (widget_class, "heatmap.zoom-in", NULL, action_zoom);
  gtk_widget_class_install_action (widget_class, "heatmap.zoom-out", NULL, action_zoom);
  gtk_widget_class_install_action (widget_class, "heatmap.zoom-reset", NULL, action_zoom);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_plus, GDK_CONTROL_MASK,
                                       "heatmap.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_equal, GDK_CONTROL_MASK,
                                       "heatmap.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_minus, GDK_CONTROL_MASK,
                                       "heatmap.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_0, GDK_CONTROL_MASK,
                                       "heatmap.zoom-reset", NULL);

  gtk_widget_class_set_css_name (widget_class, "heatmapview");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
saccade_heatmap_view_init (SaccadeHeatmapView *self)
{
  GtkEventController *ctrl;
  GtkGesture *gesture;

  self->zoom = 1.0;
  self->hover_row = self->hover_col = -1;
  self->cache = saccade_figure_cache_new ();
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  gtk_widget_set_focusable (GTK_WIDGET (self), TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);

  ctrl = gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (ctrl, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (GTK_WIDGET (self), ctrl);

  ctrl = gtk_event_controller_motion_new ();
  g_signal_connect (ctrl, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (ctrl, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), ctrl);

  gesture = gtk_gesture_drag_new ();
  g_signal_connect (gesture, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (gesture, "drag-update", G_CALLBACK (on_drag_update), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (gesture));

  gesture = gtk_gesture_zoom_new ();
  g_signal_connect (gesture, "begin", G_CALLBACK (on_pinch_begin), self);
  g_signal_connect (gesture, "scale-changed", G_CALLBACK (on_pinch), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (gesture));

  gesture = gtk_gesture_click_new ();
  g_signal_connect (gesture, "pressed", G_CALLBACK (on_click), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (gesture));

  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Attention heatmap"), -1);
}

GtkWidget *
saccade_heatmap_view_new (void)
{
  return g_object_new (SACCADE_TYPE_HEATMAP_VIEW, NULL);
}

void
saccade_heatmap_view_set_data (SaccadeHeatmapView *self, const float *values, int n_rows,
                               int n_cols, const char *const *row_labels,
                               const char *const *col_labels, gboolean causal)
{
  gboolean same_shape;

  g_return_if_fail (SACCADE_IS_HEATMAP_VIEW (self));
  g_return_if_fail (n_rows <= 0 || n_cols <= 0 || values != NULL);

  if (n_rows <= 0 || n_cols <= 0 || values == NULL)
    n_rows = n_cols = 0;
  same_shape = n_rows == self->n_rows && n_cols == self->n_cols;
  g_clear_pointer (&self->values, g_free);
  g_clear_pointer (&self->row_labels, g_strfreev);
  g_clear_pointer (&self->col_labels, g_strfreev);
  self->n_rows = n_rows;
  self->n_cols = n_cols;
  self->causal = causal;
  if (n_rows > 0)
    {
      self->values = g_memdup2 (values, (gsize) n_rows * n_cols * sizeof (float));
      self->row_labels = saccade_view_labels_dup (row_labels, n_rows);
      self->col_labels = saccade_view_labels_dup (col_labels, n_cols);
    }
  self->hover_row = self->hover_col = -1;
  if (!same_shape)
    {
      /* Stepping through heads of one run keeps the zoom; a new run starts whole. */
      self->zoom = 1.0;
      self->row0 = self->col0 = 0.0;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
    }
  clamp_view (self);
  invalidate (self);
}

void
saccade_heatmap_view_set_title (SaccadeHeatmapView *self, const char *title)
{
  g_return_if_fail (SACCADE_IS_HEATMAP_VIEW (self));

  if (saccade_view_set_str (&self->title, title))
    {
      gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                      title != NULL ? title : _("Attention heatmap"), -1);
      invalidate (self);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TITLE]);
    }
}

const char *
saccade_heatmap_view_get_title (SaccadeHeatmapView *self)
{
  g_return_val_if_fail (SACCADE_IS_HEATMAP_VIEW (self), NULL);
  return self->title;
}

void
saccade_heatmap_view_set_colormap (SaccadeHeatmapView *self, SaccadeColormap colormap)
{
  g_return_if_fail (SACCADE_IS_HEATMAP_VIEW (self));
  g_return_if_fail ((guint) colormap <= SACCADE_COLORMAP_LAST);

  if (self->colormap == colormap)
    return;
  self->colormap = colormap;
  invalidate (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COLORMAP]);
}

SaccadeColormap
saccade_heatmap_view_get_colormap (SaccadeHeatmapView *self)
{
  g_return_val_if_fail (SACCADE_IS_HEATMAP_VIEW (self), SACCADE_COLORMAP_VIRIDIS);
  return self->colormap;
}

void
saccade_heatmap_view_set_scale (SaccadeHeatmapView *self, SaccadeScale scale)
{
  g_return_if_fail (SACCADE_IS_HEATMAP_VIEW (self));
  g_return_if_fail (scale == SACCADE_SCALE_LINEAR || scale == SACCADE_SCALE_LOG);

  if (self->scale == scale)
    return;
  self->scale = scale;
  invalidate (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SCALE]);
}

SaccadeScale
saccade_heatmap_view_get_scale (SaccadeHeatmapView *self)
{
  g_return_val_if_fail (SACCADE_IS_HEATMAP_VIEW (self), SACCADE_SCALE_LINEAR);
  return self->scale;
}

void
saccade_heatmap_view_reset_zoom (SaccadeHeatmapView *self)
{
  g_return_if_fail (SACCADE_IS_HEATMAP_VIEW (self));

  if (self->zoom == 1.0 && self->row0 == 0.0 && self->col0 == 0.0)
    return;
  self->zoom = 1.0;
  self->row0 = self->col0 = 0.0;
  invalidate (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
}

double
saccade_heatmap_view_get_zoom (SaccadeHeatmapView *self)
{
  g_return_val_if_fail (SACCADE_IS_HEATMAP_VIEW (self), 1.0);
  return self->zoom;
}

void
saccade_heatmap_view_set_axis_names (SaccadeHeatmapView *self, const char *row_name,
                                     const char *col_name, const char *value_name)
{
  gboolean changed;

  g_return_if_fail (SACCADE_IS_HEATMAP_VIEW (self));
  changed = saccade_view_set_str (&self->row_name, row_name);
  changed |= saccade_view_set_str (&self->col_name, col_name);
  changed |= saccade_view_set_str (&self->value_name, value_name);
  if (changed)
    {
      saccade_figure_cache_invalidate (self->cache);
      gtk_widget_queue_draw (GTK_WIDGET (self));
    }
}
