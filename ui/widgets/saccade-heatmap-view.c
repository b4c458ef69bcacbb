/* saccade-heatmap-view.c — one head as an interactive heatmap (saccade-heatmap-view.h).
 *
 * The view holds a reference to the head's pyramid (saccade-lod.h) and draws it with
 * saccade_figure_heatmap_lod_draw_full() into a SaccadeFigureCache shown as a texture.
 * The cache is invalidated by new data, a colour map or scale, a title, a theme change,
 * and by zooming or panning (which change the visible cells); hovering and the selection
 * are drawn over the texture without rendering again. A render costs what the visible
 * pixels cost (the cells come from the level that has about one cell a device pixel), so
 * it runs on the main thread: docs/benchmarks.md has the numbers at 8,192 tokens. The
 * view state is a zoom factor and the first visible row and column; the renderer's
 * geometry turns pointer positions into tokens and drawn blocks.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/widgets/saccade-heatmap-view-private.h"

#include <math.h>
#include <string.h>

#include "ui/figures/saccade-figure-private.h"
#include "ui/widgets/saccade-view-private.h"

/* Beyond this zoom a cell of a short head is bigger than most windows; a long head may
 * zoom until about this many cells are left across. */
#define ZOOM_MIN_MAX 64.0
#define ZOOM_CELLS_LEFT 8
/* The zoom property's upper bound: the pyramid's largest side (2^15) / ZOOM_CELLS_LEFT. */
#define ZOOM_PROP_MAX 4096.0
/* One wheel notch (or key press) zooms by this factor. */
#define ZOOM_STEP 1.25
/* A wheel notch pans by a tenth of the visible cells, at least this many. */
#define PAN_MIN_CELLS 3.0
#define PAN_SHARE 0.1
/* The selection: GNOME's accent blue, translucent over the cells. */
#define SELECTION_RGBA 0.208f, 0.518f, 0.894f, 0.22f


G_DEFINE_FINAL_TYPE (SaccadeHeatmapView, saccade_heatmap_view, GTK_TYPE_WIDGET)

enum {
  CELL_ACTIVATED,
  RANGE_CHANGED,
  HOVER_CHANGED,
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

void
saccade_heatmap_view_invalidate (SaccadeHeatmapView *self)
{
  saccade_figure_cache_invalidate (self->cache);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static double
zoom_max (SaccadeHeatmapView *self)
{
  return MAX (ZOOM_MIN_MAX, (double) MAX (self->n_rows, self->n_cols) / ZOOM_CELLS_LEFT);
}

static SaccadeHeatmapLodFigure
figure (SaccadeHeatmapView *self)
{
  /* Labels not measured yet are not drawn: the margins would move when they are. */
  gboolean labels = self->label_em >= 0;

  return (SaccadeHeatmapLodFigure) {
    .lod = self->lod,
    .row_labels = labels ? (const char *const *) self->row_labels : NULL,
    .col_labels = labels ? (const char *const *) self->col_labels : NULL,
    .title = self->title, .colormap = self->colormap, .scale = self->scale,
    .row_name = self->row_name, .col_name = self->col_name, .value_name = self->value_name,
    .label_em = MAX (0.0, self->label_em),
  };
}

static SaccadeCellRange
visible_cells (SaccadeHeatmapView *self)
{
  return (SaccadeCellRange) { self->row0, self->col0, self->n_rows / self->zoom,
                              self->n_cols / self->zoom };
}

static void
clamp_view (SaccadeHeatmapView *self)
{
  self->zoom = CLAMP (self->zoom, 1.0, zoom_max (self));
  self->row0 = CLAMP (self->row0, 0.0, self->n_rows - self->n_rows / self->zoom);
  self->col0 = CLAMP (self->col0, 0.0, self->n_cols - self->n_cols / self->zoom);
}

static void
render (cairo_t *cr, double width, double height, gpointer user_data)
{
  SaccadeHeatmapView *self = user_data;
  SaccadeHeatmapLodFigure f;
  SaccadeCellRange range = visible_cells (self);
  SaccadeFigureStyle style;

  f = figure (self);
  saccade_view_style_init (GTK_WIDGET (self), &style);
  saccade_figure_heatmap_lod_draw_full (cr, &f, &range, TRUE, &style, width, height,
                                        &self->geom);
}

/* Token (row, col) to widget coordinates through the last render's geometry. */
static double
token_x (const SaccadeHeatmapGeometry *g, double col)
{
  return g->x + (col - g->range.col0) * g->cell_w;
}

static double
token_y (const SaccadeHeatmapGeometry *g, double row)
{
  return g->y + (row - g->range.row0) * g->cell_h;
}

/* The drawn block holding token (@r, @c): tokens [*r0, *r1) x [*c0, *c1). */
static void
block_of (SaccadeHeatmapView *self, int r, int c, int *r0, int *r1, int *c0, int *c1)
{
  int b = MAX (1, self->geom.block);

  *r0 = r / b * b;
  *c0 = c / b * b;
  *r1 = MIN (self->n_rows, *r0 + b);
  *c1 = MIN (self->n_cols, *c0 + b);
}

static void
snapshot_selection (SaccadeHeatmapView *self, GtkSnapshot *snapshot)
{
  const SaccadeHeatmapGeometry *g = &self->geom;
  double q0, q1, k0, k1, x, y, w, h;

  if (self->selecting)
    {
      q0 = MIN (self->sel_r0, self->sel_r1);
      q1 = MAX (self->sel_r0, self->sel_r1) + 1;
      k0 = MIN (self->sel_c0, self->sel_c1);
      k1 = MAX (self->sel_c0, self->sel_c1) + 1;
    }
  else if (self->has_range)
    {
      q0 = self->range.q0;
      q1 = self->range.q1;
      k0 = self->range.k0;
      k1 = self->range.k1;
    }
  else
    return;
  x = token_x (g, k0);
  y = token_y (g, q0);
  /* At least two pixels, so that a selection of one token of 8,192 is seen zoomed out. */
  w = MAX (2.0, (k1 - k0) * g->cell_w);
  h = MAX (2.0, (q1 - q0) * g->cell_h);
  gtk_snapshot_append_color (snapshot, &(GdkRGBA) { SELECTION_RGBA },
                             &GRAPHENE_RECT_INIT ((float) x, (float) y, (float) w, (float) h));
  saccade_view_snapshot_outline (GTK_WIDGET (self), snapshot, x, y, w, h, 1.5);
}

static void
saccade_heatmap_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  SaccadeHeatmapView *self = SACCADE_HEATMAP_VIEW (widget);
  const SaccadeHeatmapGeometry *g = &self->geom;

  saccade_view_snapshot_cache (widget, snapshot, self->cache, render, self);
  if (g->cell_w <= 0)
    return;
  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT ((float) g->x, (float) g->y,
                                                         (float) g->width, (float) g->height));
  snapshot_selection (self, snapshot);
  if (self->hover_row >= 0 && !self->selecting)
    {
      /* The drawn block under the pointer: one cell zoomed in, a block of the pyramid
       * (what the tooltip describes) zoomed out. */
      int r0, r1, c0, c1;
      double w, h;
      block_of (self, self->hover_row, self->hover_col, &r0, &r1, &c0, &c1);
      w = (c1 - c0) * g->cell_w;
      h = (r1 - r0) * g->cell_h;
      saccade_view_snapshot_outline (widget, snapshot, token_x (g, c0), token_y (g, r0), w, h,
                                     MAX (1.0, MIN (2.0, w / 8)));
    }
  gtk_snapshot_pop (snapshot);
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
  saccade_heatmap_view_invalidate (SACCADE_HEATMAP_VIEW (widget));
}

static void
saccade_heatmap_view_system_setting_changed (GtkWidget *widget, GtkSystemSetting setting)
{
  GTK_WIDGET_CLASS (saccade_heatmap_view_parent_class)->system_setting_changed (widget, setting);
  saccade_heatmap_view_invalidate (SACCADE_HEATMAP_VIEW (widget));
}

static const char *
label_of (char **labels, int i, char buf[16])
{
  return saccade_figure_label ((const char *const *) labels, i, buf);
}

/* The tooltip of the drawn block holding token (@r, @c); NULL for none. */
static char *
tooltip_text (SaccadeHeatmapView *self, int r, int c)
{
  const SaccadeHeatmapGeometry *g = &self->geom;
  char qb[16], kb[16];
  int br0, br1, bc0, bc1, qr, kc;
  float v;
  gboolean exact;

  if (self->row_name != NULL && self->col_name != NULL)
    {
      /* A matrix that is not a head: a few cells, drawn exactly (level 0's block is 1
       * unless the pyramid is an overview). */
      int b0 = saccade_lod_get_level (self->lod, 0)->block;
      if (!saccade_lod_level_value (self->lod, 0, r / b0, c / b0, &v))
        return NULL;
      /* Translators: a cell of a matrix that is not a head, e.g. "Layer 17 · head 3: 0.8170". */
      return g_strdup_printf (_("%s %s · %s %s: %.4f"), self->row_name,
                              label_of (self->row_labels, r, qb), self->col_name,
                              label_of (self->col_labels, c, kb), v);
    }
  if (saccade_lod_is_causal (self->lod) && c / MAX (1, g->block) > r / MAX (1, g->block))
    /* Translators: a masked cell of a causal head: the query cannot see a later key. */
    return g_strdup_printf (_("“%s” (%d) → “%s” (%d): masked, a later token"),
                            label_of (self->row_labels, r, qb), r,
                            label_of (self->col_labels, c, kb), c);
  if (!saccade_lod_find_max (self->lod, g->level, r / MAX (1, g->block), c / MAX (1, g->block),
                             &qr, &kc, &v, &exact))
    return NULL;
  block_of (self, r, c, &br0, &br1, &bc0, &bc1);
  if (!exact)
    /* Translators: a block of a head whose exact weights are still being read:
     * "queries 0–63 → keys 0–63: at most 0.9000" */
    return g_strdup_printf (_("Queries %d–%d → keys %d–%d: at most %.4f (loading the exact "
                              "weights)"), br0, br1 - 1, bc0, bc1 - 1, v);
  if (br1 - br0 <= 1 && bc1 - bc0 <= 1)
    /* Translators: query token (position) → key token (position): attention weight */
    return g_strdup_printf (_("“%s” (%d) → “%s” (%d): %.4f"),
                            label_of (self->row_labels, qr, qb), qr,
                            label_of (self->col_labels, kc, kb), kc, v);
  /* Translators: zoomed out, one pixel shows the strongest of several tokens' links: that
   * link, then the block it was chosen from (queries first–last × keys first–last) */
  return g_strdup_printf (_("“%s” (%d) → “%s” (%d): %.4f\nthe strongest of queries %d–%d × "
                            "keys %d–%d"),
                          label_of (self->row_labels, qr, qb), qr,
                          label_of (self->col_labels, kc, kb), kc, v, br0, br1 - 1, bc0,
                          bc1 - 1);
}

char *
saccade_heatmap_view_describe_at (SaccadeHeatmapView *self, double x, double y)
{
  int r, c;

  g_return_val_if_fail (SACCADE_IS_HEATMAP_VIEW (self), NULL);
  if (self->lod == NULL || !saccade_heatmap_geometry_cell_at (&self->geom, x, y, &r, &c))
    return NULL;
  return tooltip_text (self, r, c);
}

const SaccadeHeatmapGeometry *
saccade_heatmap_view_get_geometry (SaccadeHeatmapView *self)
{
  g_return_val_if_fail (SACCADE_IS_HEATMAP_VIEW (self), NULL);
  return &self->geom;
}

static gboolean
saccade_heatmap_view_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard,
                                    GtkTooltip *tooltip)
{
  g_autofree char *text = NULL;

  if (keyboard
      || (text = saccade_heatmap_view_describe_at (SACCADE_HEATMAP_VIEW (widget), x, y)) == NULL)
    return FALSE;
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
  self->zoom = CLAMP (old * factor, 1.0, zoom_max (self));
  if (self->zoom == old)
    return;
  /* Margins do not depend on the zoom (until labels appear), so the cell size scales
   * with it. */
  self->row0 = r - (y - g->y) / (g->cell_h * self->zoom / old);
  self->col0 = c - (x - g->x) / (g->cell_w * self->zoom / old);
  clamp_view (self);
  saccade_heatmap_view_invalidate (self);
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
  SaccadeCellRange v = visible_cells (self);

  if (state & GDK_CONTROL_MASK)
    {
      zoom_at (self, pow (ZOOM_STEP, -dy), self->pointer_x, self->pointer_y);
      return TRUE;
    }
  if (self->zoom > 1.0)
    {
      /* Zoomed in: the wheel pans (Shift: sideways), a tenth of the view a notch. */
      if (state & GDK_SHIFT_MASK)
        dx = dy, dy = 0;
      self->row0 += dy * MAX (PAN_MIN_CELLS, PAN_SHARE * v.rows);
      self->col0 += dx * MAX (PAN_MIN_CELLS, PAN_SHARE * v.cols);
      clamp_view (self);
      saccade_heatmap_view_invalidate (self);
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
      g_signal_emit (self, signals[HOVER_CHANGED], 0, r, c);
    }
}

static void
on_leave (GtkEventControllerMotion *ctrl, SaccadeHeatmapView *self)
{
  gboolean was = self->hover_row >= 0;

  self->hover_row = self->hover_col = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  if (was)
    g_signal_emit (self, signals[HOVER_CHANGED], 0, -1, -1);
}

/* The token at (@x, @y), clamped into the matrix (a selection may be dragged past it). */
static void
token_at_clamped (SaccadeHeatmapView *self, double x, double y, int *r, int *c)
{
  const SaccadeHeatmapGeometry *g = &self->geom;

  x = CLAMP (x, g->x, g->x + g->width - 1e-6);
  y = CLAMP (y, g->y, g->y + g->height - 1e-6);
  *r = CLAMP ((int) floor (g->range.row0 + (y - g->y) / g->cell_h), 0, self->n_rows - 1);
  *c = CLAMP ((int) floor (g->range.col0 + (x - g->x) / g->cell_w), 0, self->n_cols - 1);
}

static void
on_drag_begin (GtkGestureDrag *gesture, double x, double y, SaccadeHeatmapView *self)
{
  GdkModifierType state =
    gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (gesture));
  int r, c;

  if ((state & GDK_SHIFT_MASK) && self->lod != NULL
      && saccade_heatmap_geometry_cell_at (&self->geom, x, y, &r, &c))
    {
      /* Shift+drag: select queries x keys. */
      self->selecting = TRUE;
      self->sel_x0 = x;
      self->sel_y0 = y;
      self->sel_r0 = self->sel_r1 = r;
      self->sel_c0 = self->sel_c1 = c;
      gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
      gtk_widget_queue_draw (GTK_WIDGET (self));
      return;
    }
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
  if (self->selecting)
    {
      token_at_clamped (self, self->sel_x0 + dx, self->sel_y0 + dy, &self->sel_r1,
                        &self->sel_c1);
      gtk_widget_queue_draw (GTK_WIDGET (self)); /* the overlay only */
      return;
    }
  self->row0 = self->drag_row0 - dy / self->geom.cell_h;
  self->col0 = self->drag_col0 - dx / self->geom.cell_w;
  clamp_view (self);
  saccade_heatmap_view_invalidate (self);
}

static void
on_drag_end (GtkGestureDrag *gesture, double dx, double dy, SaccadeHeatmapView *self)
{
  if (!self->selecting)
    return;
  self->selecting = FALSE;
  saccade_heatmap_view_set_range (self, MIN (self->sel_r0, self->sel_r1),
                                  MAX (self->sel_r0, self->sel_r1) + 1,
                                  MIN (self->sel_c0, self->sel_c1),
                                  MAX (self->sel_c0, self->sel_c1) + 1);
  gtk_widget_queue_draw (GTK_WIDGET (self));
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

/* A click on the minimap centres the view there. */
static gboolean
minimap_click (SaccadeHeatmapView *self, double x, double y)
{
  const SaccadeHeatmapGeometry *g = &self->geom;
  SaccadeCellRange v = visible_cells (self);

  if (g->mini_w <= 0 || x < g->mini_x || y < g->mini_y || x > g->mini_x + g->mini_w
      || y > g->mini_y + g->mini_h)
    return FALSE;
  self->row0 = (y - g->mini_y) / g->mini_h * self->n_rows - v.rows / 2;
  self->col0 = (x - g->mini_x) / g->mini_w * self->n_cols - v.cols / 2;
  clamp_view (self);
  saccade_heatmap_view_invalidate (self);
  return TRUE;
}

static void
on_click (GtkGestureClick *gesture, int n_press, double x, double y, SaccadeHeatmapView *self)
{
  GdkModifierType state =
    gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (gesture));
  int r, c, qr, kc;
  float v;
  gboolean exact;

  if (self->lod == NULL || (state & GDK_SHIFT_MASK))
    return; /* Shift: the drag gesture's selection */
  if (n_press == 2)
    saccade_heatmap_view_reset_zoom (self);
  else if (n_press == 1 && !minimap_click (self, x, y)
           && saccade_heatmap_geometry_cell_at (&self->geom, x, y, &r, &c))
    {
      int b = MAX (1, self->geom.block);
      /* The strongest cell of the drawn block (the cell itself when zoomed in). */
      if (saccade_lod_find_max (self->lod, self->geom.level, r / b, c / b, &qr, &kc, &v, &exact)
          && exact)
        g_signal_emit (self, signals[CELL_ACTIVATED], 0, qr, kc);
    }
}

static void
action_zoom (GtkWidget *widget, const char *name, GVariant *param)
{
  SaccadeHeatmapView *self = SACCADE_HEATMAP_VIEW (widget);

  if (g_str_equal (name, "heatmap.zoom-in"))
    zoom_centre (self, ZOOM_STEP);
  else if (g_str_equal (name, "heatmap.zoom-out"))
    zoom_centre (self, 1.0 / ZOOM_STEP);
  else if (g_str_equal (name, "heatmap.zoom-to-range"))
    {
      if (self->has_range)
        saccade_heatmap_view_zoom_to (self, self->range.q0, self->range.q1, self->range.k0,
                                      self->range.k1);
    }
  else if (g_str_equal (name, "heatmap.clear-range"))
    saccade_heatmap_view_set_range (self, 0, 0, 0, 0);
  else
    saccade_heatmap_view_reset_zoom (self);
}

static void
saccade_heatmap_view_finalize (GObject *object)
{
  SaccadeHeatmapView *self = SACCADE_HEATMAP_VIEW (object);

  g_clear_pointer (&self->lod, saccade_lod_unref);
  g_clear_object (&self->label_cancel);
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
    g_param_spec_double ("zoom", NULL, NULL, 1.0, ZOOM_PROP_MAX, 1.0,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * SaccadeHeatmapView::cell-activated:
   * @row: the cell's row
   * @col: the cell's column
   *
   * A cell that is not masked was clicked (once); zoomed out, the strongest cell of the
   * block clicked.
   */
  signals[CELL_ACTIVATED] =
    g_signal_new ("cell-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
  /**
   * SaccadeHeatmapView::range-changed:
   *
   * The selected range changed or was cleared (saccade_heatmap_view_get_range()).
   */
  signals[RANGE_CHANGED] =
    g_signal_new ("range-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 0);
  /**
   * SaccadeHeatmapView::hover-changed:
   * @row: the query under the pointer (zoomed out, the first of its block), or -1
   * @col: the key, or -1
   *
   * The pointer moved onto another cell, or off the matrix (-1, -1).
   */
  signals[HOVER_CHANGED] =
    g_signal_new ("hover-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);

  gtk_widget_class_install_action (widget_class, "heatmap.zoom-in", NULL, action_zoom);
  gtk_widget_class_install_action (widget_class, "heatmap.zoom-out", NULL, action_zoom);
  gtk_widget_class_install_action (widget_class, "heatmap.zoom-reset", NULL, action_zoom);
  gtk_widget_class_install_action (widget_class, "heatmap.zoom-to-range", NULL, action_zoom);
  gtk_widget_class_install_action (widget_class, "heatmap.clear-range", NULL, action_zoom);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_plus, GDK_CONTROL_MASK,
                                       "heatmap.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_equal, GDK_CONTROL_MASK,
                                       "heatmap.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_minus, GDK_CONTROL_MASK,
                                       "heatmap.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_0, GDK_CONTROL_MASK,
                                       "heatmap.zoom-reset", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "heatmap.clear-range",
                                       NULL);

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
  self->label_em = 0.0;
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
  g_signal_connect (gesture, "drag-end", G_CALLBACK (on_drag_end), self);
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

/* Takes @lod (a reference; NULL clears) and copies the labels. */
static void
take_lod (SaccadeHeatmapView *self, SaccadeLod *lod, const char *const *row_labels,
          const char *const *col_labels)
{
  int n_rows = lod != NULL ? saccade_lod_get_n_rows (lod) : 0;
  int n_cols = lod != NULL ? saccade_lod_get_n_cols (lod) : 0;
  gboolean same_shape = n_rows == self->n_rows && n_cols == self->n_cols;

  g_clear_pointer (&self->lod, saccade_lod_unref);
  g_clear_pointer (&self->row_labels, g_strfreev);
  g_clear_pointer (&self->col_labels, g_strfreev);
  self->lod = lod;
  self->n_rows = n_rows;
  self->n_cols = n_cols;
  self->row_labels = saccade_view_labels_dup (row_labels, n_rows);
  self->col_labels = saccade_view_labels_dup (col_labels, n_cols);
  saccade_heatmap_view_measure_labels (self);
  self->hover_row = self->hover_col = -1;
  self->selecting = FALSE;
  self->geom = (SaccadeHeatmapGeometry) { 0 };
  if (!same_shape)
    {
      /* Stepping through heads of one run keeps the zoom and the range; a new run starts
       * whole. */
      self->zoom = 1.0;
      self->row0 = self->col0 = 0.0;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
      if (self->has_range)
        {
          self->has_range = FALSE;
          g_signal_emit (self, signals[RANGE_CHANGED], 0);
        }
    }
  clamp_view (self);
  saccade_heatmap_view_invalidate (self);
}

void
saccade_heatmap_view_set_data (SaccadeHeatmapView *self, const float *values, int n_rows,
                               int n_cols, const char *const *row_labels,
                               const char *const *col_labels, gboolean causal)
{
  g_autoptr (GError) error = NULL;
  SaccadeLod *lod = NULL;

  g_return_if_fail (SACCADE_IS_HEATMAP_VIEW (self));
  g_return_if_fail (n_rows <= 0 || n_cols <= 0 || values != NULL);

  if (n_rows > 0 && n_cols > 0 && values != NULL
      && (lod = saccade_lod_new_float (values, n_rows, n_cols, causal, &error)) == NULL)
    g_warning ("heatmap view: %s", error->message);
  take_lod (self, lod, row_labels, col_labels);
}

void
saccade_heatmap_view_set_lod (SaccadeHeatmapView *self, SaccadeLod *lod,
                              const char *const *row_labels, const char *const *col_labels)
{
  g_return_if_fail (SACCADE_IS_HEATMAP_VIEW (self));

  take_lod (self, lod != NULL ? saccade_lod_ref (lod) : NULL, row_labels, col_labels);
}

SaccadeLod *
saccade_heatmap_view_get_lod (SaccadeHeatmapView *self)
{
  g_return_val_if_fail (SACCADE_IS_HEATMAP_VIEW (self), NULL);
  return self->lod;
}

void
saccade_heatmap_view_set_title (SaccadeHeatmapView *self, const char *title)
{
  g_return_if_fail (SACCADE_IS_HEATMAP_VIEW (self));

  if (saccade_view_set_str (&self->title, title))
    {
      gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                      title != NULL ? title : _("Attention heatmap"), -1);
      saccade_heatmap_view_invalidate (self);
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
  saccade_heatmap_view_invalidate (self);
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
  saccade_heatmap_view_invalidate (self);
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
  saccade_heatmap_view_invalidate (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
}

double
saccade_heatmap_view_get_zoom (SaccadeHeatmapView *self)
{
  g_return_val_if_fail (SACCADE_IS_HEATMAP_VIEW (self), 1.0);
  return self->zoom;
}

void
saccade_heatmap_view_zoom_to (SaccadeHeatmapView *self, int q0, int q1, int k0, int k1)
{
  double old;

  g_return_if_fail (SACCADE_IS_HEATMAP_VIEW (self));
  q0 = CLAMP (q0, 0, self->n_rows);
  q1 = CLAMP (q1, q0, self->n_rows);
  k0 = CLAMP (k0, 0, self->n_cols);
  k1 = CLAMP (k1, k0, self->n_cols);
  if (q1 <= q0 || k1 <= k0)
    return;
  old = self->zoom;
  self->zoom = MIN ((double) self->n_rows / (q1 - q0), (double) self->n_cols / (k1 - k0));
  self->row0 = q0;
  self->col0 = k0;
  clamp_view (self);
  saccade_heatmap_view_invalidate (self);
  if (self->zoom != old)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
}

gboolean
saccade_heatmap_view_get_range (SaccadeHeatmapView *self, int *q0, int *q1, int *k0, int *k1)
{
  g_return_val_if_fail (SACCADE_IS_HEATMAP_VIEW (self), FALSE);

  if (!self->has_range)
    return FALSE;
  if (q0 != NULL)
    *q0 = self->range.q0;
  if (q1 != NULL)
    *q1 = self->range.q1;
  if (k0 != NULL)
    *k0 = self->range.k0;
  if (k1 != NULL)
    *k1 = self->range.k1;
  return TRUE;
}

void
saccade_heatmap_view_set_range (SaccadeHeatmapView *self, int q0, int q1, int k0, int k1)
{
  SaccadeTokenRange r;
  gboolean has;

  g_return_if_fail (SACCADE_IS_HEATMAP_VIEW (self));
  r.q0 = CLAMP (q0, 0, self->n_rows);
  r.q1 = CLAMP (q1, r.q0, self->n_rows);
  r.k0 = CLAMP (k0, 0, self->n_cols);
  r.k1 = CLAMP (k1, r.k0, self->n_cols);
  has = r.q1 > r.q0 && r.k1 > r.k0;
  if (has == self->has_range
      && (!has || memcmp (&r, &self->range, sizeof r) == 0))
    return;
  self->has_range = has;
  self->range = has ? r : (SaccadeTokenRange) { 0 };
  gtk_widget_queue_draw (GTK_WIDGET (self)); /* the overlay only */
  g_signal_emit (self, signals[RANGE_CHANGED], 0);
}

gboolean
saccade_heatmap_view_get_visible_range (SaccadeHeatmapView *self, SaccadeTokenRange *range)
{
  SaccadeCellRange v;

  g_return_val_if_fail (SACCADE_IS_HEATMAP_VIEW (self), FALSE);
  if (self->lod == NULL)
    return FALSE;
  v = visible_cells (self);
  /* A hair's tolerance: 8192 / 3 rows shown from 0 end at 2730.666..., not 2731. */
  range->q0 = CLAMP ((int) floor (v.row0 + 1e-9), 0, self->n_rows - 1);
  range->q1 = CLAMP ((int) ceil (v.row0 + v.rows - 1e-9), range->q0 + 1, self->n_rows);
  range->k0 = CLAMP ((int) floor (v.col0 + 1e-9), 0, self->n_cols - 1);
  range->k1 = CLAMP ((int) ceil (v.col0 + v.cols - 1e-9), range->k0 + 1, self->n_cols);
  return TRUE;
}

gboolean
saccade_heatmap_view_get_export_range (SaccadeHeatmapView *self, SaccadeTokenRange *range)
{
  g_return_val_if_fail (SACCADE_IS_HEATMAP_VIEW (self), FALSE);
  if (self->lod == NULL)
    return FALSE;
  if (self->has_range)
    {
      *range = self->range;
      return TRUE;
    }
  return saccade_heatmap_view_get_visible_range (self, range);
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
    saccade_heatmap_view_invalidate (self);
}
