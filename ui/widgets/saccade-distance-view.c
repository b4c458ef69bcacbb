/* saccade-distance-view.c — the head-distance matrix widget (saccade-distance-view.h).
 * Rendered once per data set and size; the hovered cell's outline is drawn over the
 * cached texture, so moving the pointer over 270 × 270 cells costs no Cairo work.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/widgets/saccade-distance-view.h"

#include "ui/figures/saccade-figure-private.h"
#include "ui/widgets/saccade-view-private.h"

struct _SaccadeDistanceView {
  GtkWidget parent_instance;

  /* owned data */
  int n;
  double *values;              /* (n, n) */
  int *order;                  /* (n) */
  SaccadeDendroMerge *merges;  /* (n - 1) or NULL */
  char **labels;               /* (n) or NULL */
  char *value_name, *unit, *title;

  int hover_row, hover_col;    /* drawing positions; -1: none */
  SaccadeFigureCache *cache;
  SaccadeHeatmapGeometry geom; /* of the cached render */
};

G_DEFINE_FINAL_TYPE (SaccadeDistanceView, saccade_distance_view, GTK_TYPE_WIDGET)

enum { SIGNAL_PAIR_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
invalidate (SaccadeDistanceView *self)
{
  saccade_figure_cache_invalidate (self->cache);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
render (cairo_t *cr, double width, double height, gpointer user_data)
{
  SaccadeDistanceView *self = user_data;
  SaccadeDistanceFigure f = {
    .n = self->n, .values = self->values, .order = self->order, .merges = self->merges,
    .labels = (const char *const *) self->labels, .value_name = self->value_name,
    .title = self->title, .colormap = SACCADE_COLORMAP_VIRIDIS,
  };
  SaccadeFigureStyle style;

  saccade_view_style_init (GTK_WIDGET (self), &style);
  saccade_figure_distance_draw_full (cr, &f, &style, width, height, &self->geom);
}

static void
saccade_distance_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  SaccadeDistanceView *self = SACCADE_DISTANCE_VIEW (widget);
  const SaccadeHeatmapGeometry *g = &self->geom;

  saccade_view_snapshot_cache (widget, snapshot, self->cache, render, self);
  if (self->hover_row >= 0 && self->hover_col >= 0 && self->n > 0)
    saccade_view_snapshot_outline (widget, snapshot, g->x + self->hover_col * g->cell_w,
                                   g->y + self->hover_row * g->cell_h, MAX (2.0, g->cell_w),
                                   MAX (2.0, g->cell_h), 1.0);
}

static void
saccade_distance_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                               int *minimum, int *natural, int *min_baseline,
                               int *nat_baseline)
{
  *minimum = 160;
  *natural = 480;
}

static void
saccade_distance_view_css_changed (GtkWidget *widget, GtkCssStyleChange *change)
{
  GTK_WIDGET_CLASS (saccade_distance_view_parent_class)->css_changed (widget, change);
  invalidate (SACCADE_DISTANCE_VIEW (widget));
}

static gboolean
cell_at (SaccadeDistanceView *self, double x, double y, int *row, int *col)
{
  return self->n > 0 && saccade_heatmap_geometry_cell_at (&self->geom, x, y, row, col)
         && *row >= 0 && *row < self->n && *col >= 0 && *col < self->n;
}

static gboolean
saccade_distance_view_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard,
                                     GtkTooltip *tooltip)
{
  SaccadeDistanceView *self = SACCADE_DISTANCE_VIEW (widget);
  g_autofree char *text = NULL;
  char ba[16], bb[16];
  int r, c, a, b;

  if (keyboard || !cell_at (self, x, y, &r, &c))
    return FALSE;
  a = self->order[r];
  b = self->order[c];
  /* Translators: a cell of the head-distance matrix: "L5.H2 ~ L7.H1: 0.23 nats". */
  text = g_strdup_printf (_("%s ~ %s: %.2f %s"),
                          saccade_figure_label ((const char *const *) self->labels, a, ba),
                          saccade_figure_label ((const char *const *) self->labels, b, bb),
                          self->values[(gsize) a * self->n + b],
                          self->unit != NULL ? self->unit : "");
  gtk_tooltip_set_text (tooltip, g_strchomp (text));
  return TRUE;
}

static void
set_hover (SaccadeDistanceView *self, int r, int c)
{
  if (r == self->hover_row && c == self->hover_col)
    return;
  self->hover_row = r;
  self->hover_col = c;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_motion (GtkEventControllerMotion *ctrl, double x, double y, SaccadeDistanceView *self)
{
  int r, c;

  if (cell_at (self, x, y, &r, &c))
    set_hover (self, r, c);
  else
    set_hover (self, -1, -1);
}

static void
on_leave (GtkEventControllerMotion *ctrl, SaccadeDistanceView *self)
{
  set_hover (self, -1, -1);
}

static void
on_released (GtkGestureClick *gesture, int n_press, double x, double y,
             SaccadeDistanceView *self)
{
  int r, c;

  gtk_widget_grab_focus (GTK_WIDGET (self));
  if (cell_at (self, x, y, &r, &c))
    g_signal_emit (self, signals[SIGNAL_PAIR_ACTIVATED], 0, self->order[r], self->order[c]);
}

static void
saccade_distance_view_finalize (GObject *object)
{
  SaccadeDistanceView *self = SACCADE_DISTANCE_VIEW (object);

  g_free (self->values);
  g_free (self->order);
  g_free (self->merges);
  g_strfreev (self->labels);
  g_free (self->value_name);
  g_free (self->unit);
  g_free (self->title);
  saccade_figure_cache_free (self->cache);
  G_OBJECT_CLASS (saccade_distance_view_parent_class)->finalize (object);
}

static void
saccade_distance_view_class_init (SaccadeDistanceViewClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = saccade_distance_view_finalize;
  widget_class->snapshot = saccade_distance_view_snapshot;
  widget_class->measure = saccade_distance_view_measure;
  widget_class->css_changed = saccade_distance_view_css_changed;
  widget_class->query_tooltip = saccade_distance_view_query_tooltip;
  gtk_widget_class_set_css_name (widget_class, "distanceview");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);

  signals[SIGNAL_PAIR_ACTIVATED] =
    g_signal_new ("pair-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL,
                  NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
}

static void
saccade_distance_view_init (SaccadeDistanceView *self)
{
  GtkEventController *ctrl;
  GtkGesture *click;

  self->hover_row = self->hover_col = -1;
  self->cache = saccade_figure_cache_new ();
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  ctrl = gtk_event_controller_motion_new ();
  g_signal_connect (ctrl, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (ctrl, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), ctrl);
  click = gtk_gesture_click_new ();
  g_signal_connect (click, "released", G_CALLBACK (on_released), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (click));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Distances between every pair of heads"), -1);
}

GtkWidget *
saccade_distance_view_new (void)
{
  return g_object_new (SACCADE_TYPE_DISTANCE_VIEW, NULL);
}

void
saccade_distance_view_set_data (SaccadeDistanceView *self, int n, const double *values,
                                const int *order, const SaccadeDendroMerge *merges,
                                const char *const *labels, const char *value_name,
                                const char *unit)
{
  g_return_if_fail (SACCADE_IS_DISTANCE_VIEW (self));

  g_clear_pointer (&self->values, g_free);
  g_clear_pointer (&self->order, g_free);
  g_clear_pointer (&self->merges, g_free);
  g_clear_pointer (&self->labels, g_strfreev);
  if (n <= 0 || values == NULL)
    n = 0;
  self->n = n;
  if (n > 0)
    {
      self->values = g_memdup2 (values, (gsize) n * n * sizeof (double));
      self->order = g_new (int, n);
      for (int i = 0; i < n; i++)
        self->order[i] = order != NULL ? order[i] : i;
      if (merges != NULL && n > 1)
        self->merges = g_memdup2 (merges, (gsize) (n - 1) * sizeof *merges);
      self->labels = saccade_view_labels_dup (labels, n);
    }
  self->hover_row = self->hover_col = -1;
  saccade_view_set_str (&self->value_name, value_name);
  saccade_view_set_str (&self->unit, unit);
  invalidate (self);
}

void
saccade_distance_view_set_title (SaccadeDistanceView *self, const char *title)
{
  g_return_if_fail (SACCADE_IS_DISTANCE_VIEW (self));
  if (saccade_view_set_str (&self->title, title))
    invalidate (self);
}
