/* saccade-lines-view.c — one layer as lines between tokens (saccade-lines-view.h).
 *
 * Rendered by saccade_figure_lines_draw_full() into a SaccadeFigureCache. Hovering a token
 * label highlights its links: the figure is rendered again for each new highlighted token
 * (a few thousand strokes at most for a sentence), never for pointer motion within one.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/widgets/saccade-lines-view.h"

#include "ui/figures/saccade-figure-private.h"
#include "ui/widgets/saccade-view-private.h"

struct _SaccadeLinesView {
  GtkWidget parent_instance;

  /* owned data */
  int n_heads, n;
  float *heads;                /* (n_heads, n, n) */
  char **labels;
  char *title;

  int highlight;               /* -1: none */
  gboolean highlight_is_key;

  SaccadeFigureCache *cache;
  SaccadeLinesGeometry geom;   /* of the cached render */
};

G_DEFINE_FINAL_TYPE (SaccadeLinesView, saccade_lines_view, GTK_TYPE_WIDGET)

static void
invalidate (SaccadeLinesView *self)
{
  saccade_figure_cache_invalidate (self->cache);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
render (cairo_t *cr, double width, double height, gpointer user_data)
{
  SaccadeLinesView *self = user_data;
  SaccadeLinesFigure f = {
    .n_heads = self->n_heads, .n = self->n, .heads = self->heads,
    .labels = (const char *const *) self->labels, .highlight_token = self->highlight,
    .title = self->title,
  };
  SaccadeFigureStyle style;

  saccade_view_style_init (GTK_WIDGET (self), &style);
  saccade_figure_lines_draw_full (cr, &f, &style, self->highlight_is_key, width, height,
                                  &self->geom);
}

static void
saccade_lines_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  SaccadeLinesView *self = SACCADE_LINES_VIEW (widget);

  saccade_view_snapshot_cache (widget, snapshot, self->cache, render, self);
}

static void
saccade_lines_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                            int *minimum, int *natural, int *min_baseline, int *nat_baseline)
{
  *minimum = 160;
  *natural = 480;
}

static void
saccade_lines_view_css_changed (GtkWidget *widget, GtkCssStyleChange *change)
{
  GTK_WIDGET_CLASS (saccade_lines_view_parent_class)->css_changed (widget, change);
  invalidate (SACCADE_LINES_VIEW (widget));
}

static void
set_highlight (SaccadeLinesView *self, int token, gboolean is_key)
{
  if (token == self->highlight && (token < 0 || is_key == self->highlight_is_key))
    return;
  self->highlight = token;
  self->highlight_is_key = is_key;
  invalidate (self);
}

static void
on_motion (GtkEventControllerMotion *ctrl, double x, double y, SaccadeLinesView *self)
{
  int token;
  gboolean is_key;

  if (saccade_lines_geometry_token_at (&self->geom, x, y, &token, &is_key))
    set_highlight (self, token, is_key);
  else
    set_highlight (self, -1, FALSE);
}

static void
on_leave (GtkEventControllerMotion *ctrl, SaccadeLinesView *self)
{
  set_highlight (self, -1, FALSE);
}

static void
saccade_lines_view_finalize (GObject *object)
{
  SaccadeLinesView *self = SACCADE_LINES_VIEW (object);

  g_free (self->heads);
  g_strfreev (self->labels);
  g_free (self->title);
  saccade_figure_cache_free (self->cache);
  G_OBJECT_CLASS (saccade_lines_view_parent_class)->finalize (object);
}

static void
saccade_lines_view_class_init (SaccadeLinesViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->finalize = saccade_lines_view_finalize;
  widget_class->snapshot = saccade_lines_view_snapshot;
  widget_class->measure = saccade_lines_view_measure;
  widget_class->css_changed = saccade_lines_view_css_changed;
  gtk_widget_class_set_css_name (widget_class, "linesview");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
saccade_lines_view_init (SaccadeLinesView *self)
{
  GtkEventController *ctrl;

  self->highlight = -1;
  self->cache = saccade_figure_cache_new ();
  gtk_widget_set_hexpand (GTK_WIDGET (self), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self), TRUE);

  ctrl = gtk_event_controller_motion_new ();
  g_signal_connect (ctrl, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (ctrl, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (GTK_WIDGET (self), ctrl);

  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Attention between tokens, one layer"), -1);
}

GtkWidget *
saccade_lines_view_new (void)
{
  return g_object_new (SACCADE_TYPE_LINES_VIEW, NULL);
}

void
saccade_lines_view_set_data (SaccadeLinesView *self, int n_heads, int n, const float *heads,
                             const char *const *labels)
{
  g_return_if_fail (SACCADE_IS_LINES_VIEW (self));
  g_return_if_fail (n <= 0 || n_heads <= 0 || heads != NULL);

  g_clear_pointer (&self->heads, g_free);
  g_clear_pointer (&self->labels, g_strfreev);
  if (n <= 0 || n_heads <= 0 || heads == NULL)
    n = n_heads = 0;
  self->n_heads = n_heads;
  self->n = n;
  if (n > 0)
    {
      self->heads = g_memdup2 (heads, (gsize) n_heads * n * n * sizeof (float));
      self->labels = saccade_view_labels_dup (labels, n);
    }
  if (self->highlight >= n)
    self->highlight = -1;
  invalidate (self);
}

void
saccade_lines_view_set_title (SaccadeLinesView *self, const char *title)
{
  g_return_if_fail (SACCADE_IS_LINES_VIEW (self));

  if (saccade_view_set_str (&self->title, title))
    invalidate (self);
}
