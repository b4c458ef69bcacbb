/* saccade-lines-view.c — one layer as lines between tokens (saccade-lines-view.h).
 *
 * Rendered by saccade_figure_lines_draw_cancellable() in a GTask worker into an ARGB32
 * image at the widget's size and scale, which becomes a GdkTexture on the main thread. Every
 * change that alters the picture (data, title, theme) bumps a generation number; a
 * snapshot whose image is of an older generation or another size shows that image as it is
 * and starts a render (one at a time: a new one cancels the last, and a result that is not
 * of the latest job is dropped). A render copies everything it draws (the links are shared
 * by reference, immutable), so the worker never reads the widget.
 * Hovering a token needs no render: the snapshot shows the image's rows faded to HOVER_FADE
 * and draws the token's links and labels over them on the main thread
 * (saccade_figure_lines_draw_highlight(): one pass over the links, a few labels), once per
 * new highlighted token, never per pointer motion within one.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/widgets/saccade-lines-view.h"

#include "ui/figures/saccade-figure-private.h"
#include "ui/widgets/saccade-background.h"
#include "ui/widgets/saccade-view-private.h"

/* What the rows of the image keep of their opacity under a highlight: the other lines
 * recede, their labels stay readable. */
#define HOVER_FADE 0.3

struct _SaccadeLinesView {
  GtkWidget parent_instance;

  /* owned data */
  SaccadeLinesLinks *links;    /* NULL: nothing shown */
  int position0, n;
  char **labels;               /* (n) or NULL */
  gboolean show_positions;
  int *head_ids;               /* (n_shown) or NULL: all */
  int n_shown;
  char *title;

  int highlight;               /* index among the n tokens; -1: none */
  gboolean highlight_is_key;

  guint generation;            /* bumped by every change of the picture */

  /* the image shown, as a texture and as the image it wraps (saccade_view_append_image) */
  GdkTexture *texture;
  cairo_surface_t *surface;
  int tex_w, tex_h, tex_scale;
  guint tex_generation;
  SaccadeLinesGeometry geom;

  /* the render under way */
  GCancellable *job;
  int job_w, job_h, job_scale;
  guint job_generation;
};

enum { PROP_0, PROP_BUSY, N_PROPS };
static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (SaccadeLinesView, saccade_lines_view, GTK_TYPE_WIDGET)

/* ------------------------------------------------------------------------------------ */
/* Rendering in a worker                                                                 */

/* What one render draws: a copy of the view's state. */
typedef struct {
  SaccadeLinesLinks *links;
  int position0, n;
  char **labels;
  gboolean show_positions;
  int *head_ids, n_shown;
  char *title;
  SaccadeFigureStyle style;    /* font_family is a static string */
  int width, height, scale;
} RenderJob;

typedef struct {
  cairo_surface_t *surface;
  SaccadeLinesGeometry geom;
} RenderResult;

static void
render_job_free (RenderJob *j)
{
  saccade_lines_links_unref (j->links);
  g_strfreev (j->labels);
  g_free (j->head_ids);
  g_free (j->title);
  g_free (j);
}

static void
render_result_free (RenderResult *r)
{
  g_clear_pointer (&r->surface, cairo_surface_destroy);
  g_free (r);
}

static void
render_worker (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  RenderJob *j = task_data;
  RenderResult *r = g_new0 (RenderResult, 1);
  SaccadeLinesFigure f = {
    .n_heads = j->head_ids != NULL ? j->n_shown : (j->links != NULL ? j->links->n_heads : 0),
    .n = j->links != NULL ? j->n : 0, .links = j->links,
    .labels = (const char *const *) j->labels, .highlight_token = -1,
    .title = j->title, .head_ids = j->head_ids,
    .n_heads_total = j->links != NULL ? j->links->n_heads : 0, .position0 = j->position0,
    .show_positions = j->show_positions,
  };
  cairo_t *cr;
  gboolean done;

  r->surface = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, j->width * j->scale,
                                           j->height * j->scale);
  cairo_surface_set_device_scale (r->surface, j->scale, j->scale);
  cr = cairo_create (r->surface);
  done = saccade_figure_lines_draw_cancellable (cr, &f, &j->style, FALSE, j->width, j->height,
                                                &r->geom, cancellable);
  cairo_destroy (cr);
  cairo_surface_flush (r->surface);
  if (!done || cairo_surface_status (r->surface) != CAIRO_STATUS_SUCCESS)
    {
      render_result_free (r);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "render cancelled");
      return;
    }
  g_task_return_pointer (task, r, (GDestroyNotify) render_result_free);
}

static GdkTexture *
texture_from_surface (cairo_surface_t *surface)
{
  g_autoptr (GBytes) bytes = NULL;
  int w = cairo_image_surface_get_width (surface), h = cairo_image_surface_get_height (surface);
  int stride = cairo_image_surface_get_stride (surface);

  /* The texture keeps the surface alive instead of copying its pixels. ARGB32 in native
   * byte order, premultiplied, is GDK_MEMORY_DEFAULT. */
  bytes = g_bytes_new_with_free_func (cairo_image_surface_get_data (surface),
                                      (gsize) stride * h,
                                      (GDestroyNotify) cairo_surface_destroy,
                                      cairo_surface_reference (surface));
  return gdk_memory_texture_new (w, h, GDK_MEMORY_DEFAULT, bytes, stride);
}

static void
render_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SaccadeLinesView *self = SACCADE_LINES_VIEW (source);
  RenderResult *r = g_task_propagate_pointer (G_TASK (result), NULL);

  if (g_task_get_cancellable (G_TASK (result)) != self->job)
    {
      if (r != NULL)
        render_result_free (r);
      return; /* a later render took its place */
    }
  g_clear_object (&self->job);
  if (r != NULL)
    {
      g_clear_object (&self->texture);
      g_clear_pointer (&self->surface, cairo_surface_destroy);
      self->texture = texture_from_surface (r->surface);
      self->surface = cairo_surface_reference (r->surface);
      self->tex_w = self->job_w;
      self->tex_h = self->job_h;
      self->tex_scale = self->job_scale;
      self->tex_generation = self->job_generation;
      self->geom = r->geom;
      render_result_free (r);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

static void
start_render (SaccadeLinesView *self, int width, int height, int scale)
{
  RenderJob *j = g_new0 (RenderJob, 1);
  g_autoptr (GTask) task = NULL;
  gboolean was_busy = self->job != NULL;

  if (self->job != NULL)
    g_cancellable_cancel (self->job);
  g_clear_object (&self->job);
  self->job = g_cancellable_new ();
  self->job_w = width;
  self->job_h = height;
  self->job_scale = scale;
  self->job_generation = self->generation;

  j->links = self->links != NULL ? saccade_lines_links_ref (self->links) : NULL;
  j->position0 = self->position0;
  j->n = self->n;
  j->labels = g_strdupv (self->labels);
  j->show_positions = self->show_positions;
  j->head_ids = self->head_ids != NULL
                 ? g_memdup2 (self->head_ids, sizeof (int) * (gsize) MAX (self->n_shown, 1))
                 : NULL;
  j->n_shown = self->n_shown;
  j->title = g_strdup (self->title);
  saccade_view_style_init (GTK_WIDGET (self), &j->style);
  j->width = width;
  j->height = height;
  j->scale = scale;

  task = g_task_new (self, self->job, render_done, NULL);
  g_task_set_source_tag (task, start_render);
  g_task_set_task_data (task, j, (GDestroyNotify) render_job_free);
  saccade_background_run (task, render_worker);
  if (!was_busy)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_BUSY]);
}

static void
invalidate (SaccadeLinesView *self)
{
  self->generation++;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* The image with its rows faded, and the highlighted token's links and labels over it. */
static void
snapshot_highlight (SaccadeLinesView *self, GtkSnapshot *snapshot)
{
  SaccadeLinesFigure f = {
    .n_heads = self->head_ids != NULL ? self->n_shown : self->links->n_heads, .n = self->n,
    .links = self->links, .labels = (const char *const *) self->labels,
    .highlight_token = self->highlight, .head_ids = self->head_ids,
    .n_heads_total = self->links->n_heads, .position0 = self->position0,
    .show_positions = self->show_positions,
  };
  graphene_rect_t all = GRAPHENE_RECT_INIT (0, 0, self->tex_w, self->tex_h);
  SaccadeFigureStyle style;
  double top;
  cairo_t *cr;

  saccade_view_style_init (GTK_WIDGET (self), &style);
  /* the rows begin where lines to earlier keys end: half a row (at most half a font size)
   * above the first row, and a line's width more */
  top = self->geom.y0 - MIN (0.5 * self->geom.row_h, 0.5 * saccade_figure_font_size (&style))
        - 2;
  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, 0, self->tex_w, MAX (top, 0)));
  saccade_view_append_image (GTK_WIDGET (self), snapshot, self->texture, self->surface, &all);
  gtk_snapshot_pop (snapshot);
  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, MAX (top, 0), self->tex_w,
                                                         MAX (self->tex_h - top, 0)));
  gtk_snapshot_push_opacity (snapshot, HOVER_FADE);
  saccade_view_append_image (GTK_WIDGET (self), snapshot, self->texture, self->surface, &all);
  gtk_snapshot_pop (snapshot);
  gtk_snapshot_pop (snapshot);
  cr = gtk_snapshot_append_cairo (snapshot, &all);
  saccade_figure_lines_draw_highlight (cr, &f, &style, self->highlight_is_key, &self->geom);
  cairo_destroy (cr);
}

static void
saccade_lines_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  SaccadeLinesView *self = SACCADE_LINES_VIEW (widget);
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  int scale = gtk_widget_get_scale_factor (widget);
  gboolean current = self->texture != NULL && self->tex_generation == self->generation
                     && self->tex_w == width && self->tex_h == height
                     && self->tex_scale == scale;

  if (width <= 0 || height <= 0)
    return;
  /* The last image at its own size, even when stale: better than a blank while the next
   * one is drawn. */
  if (self->texture != NULL)
    {
      gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
      /* a highlight goes over an image of the current data only (its geometry is theirs) */
      if (self->highlight >= 0 && self->links != NULL && self->tex_generation == self->generation
          && self->geom.n == self->n)
        snapshot_highlight (self, snapshot);
      else
        saccade_view_append_image (widget, snapshot, self->texture, self->surface,
                                   &GRAPHENE_RECT_INIT (0, 0, self->tex_w, self->tex_h));
      gtk_snapshot_pop (snapshot);
    }
  if (!current && !(self->job != NULL && self->job_generation == self->generation
                    && self->job_w == width && self->job_h == height
                    && self->job_scale == scale))
    start_render (self, width, height, scale);
}

/* ------------------------------------------------------------------------------------ */
/* Widget                                                                                */

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
  /* drawn over the image: no new render */
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
on_motion (GtkEventControllerMotion *ctrl, double x, double y, SaccadeLinesView *self)
{
  int token;
  gboolean is_key;

  if (saccade_lines_geometry_token_at (&self->geom, x, y, &token, &is_key) && token < self->n)
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
saccade_lines_view_get_property (GObject *object, guint prop_id, GValue *value,
                                 GParamSpec *pspec)
{
  SaccadeLinesView *self = SACCADE_LINES_VIEW (object);

  switch (prop_id)
    {
    case PROP_BUSY:
      g_value_set_boolean (value, saccade_lines_view_get_busy (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
saccade_lines_view_dispose (GObject *object)
{
  SaccadeLinesView *self = SACCADE_LINES_VIEW (object);

  if (self->job != NULL)
    g_cancellable_cancel (self->job);
  g_clear_object (&self->job);
  g_clear_object (&self->texture);
  g_clear_pointer (&self->surface, cairo_surface_destroy);
  G_OBJECT_CLASS (saccade_lines_view_parent_class)->dispose (object);
}

static void
saccade_lines_view_finalize (GObject *object)
{
  SaccadeLinesView *self = SACCADE_LINES_VIEW (object);

  saccade_lines_links_unref (self->links);
  g_strfreev (self->labels);
  g_free (self->head_ids);
  g_free (self->title);
  G_OBJECT_CLASS (saccade_lines_view_parent_class)->finalize (object);
}

static void
saccade_lines_view_class_init (SaccadeLinesViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->get_property = saccade_lines_view_get_property;
  object_class->dispose = saccade_lines_view_dispose;
  object_class->finalize = saccade_lines_view_finalize;
  widget_class->snapshot = saccade_lines_view_snapshot;
  widget_class->measure = saccade_lines_view_measure;
  widget_class->css_changed = saccade_lines_view_css_changed;

  properties[PROP_BUSY] =
    g_param_spec_boolean ("busy", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_css_name (widget_class, "linesview");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
saccade_lines_view_init (SaccadeLinesView *self)
{
  GtkEventController *ctrl;

  self->highlight = -1;
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
  g_autoptr (SaccadeLinesLinks) links = NULL;

  g_return_if_fail (SACCADE_IS_LINES_VIEW (self));
  g_return_if_fail (n <= 0 || n_heads <= 0 || heads != NULL);

  if (n > 0 && n_heads > 0 && heads != NULL)
    links = saccade_lines_links_select (heads, n_heads, 0, n, 0, n, SACCADE_LINES_MIN_WEIGHT,
                                        0, NULL);
  saccade_lines_view_set_links (self, links, 0, links != NULL ? n : 0, labels, FALSE, NULL, 0);
}

void
saccade_lines_view_set_links (SaccadeLinesView *self, SaccadeLinesLinks *links, int position0,
                              int n, const char *const *labels, gboolean show_positions,
                              const int *head_ids, int n_shown)
{
  g_return_if_fail (SACCADE_IS_LINES_VIEW (self));
  g_return_if_fail (links == NULL || (n >= 0 && position0 >= 0));
  g_return_if_fail (head_ids == NULL || n_shown >= 0);

  if (links != NULL)
    saccade_lines_links_ref (links);
  saccade_lines_links_unref (self->links);
  self->links = links;
  g_clear_pointer (&self->labels, g_strfreev);
  g_clear_pointer (&self->head_ids, g_free);
  self->n = links != NULL ? n : 0;
  self->position0 = links != NULL ? position0 : 0;
  self->show_positions = show_positions;
  if (self->n > 0)
    self->labels = saccade_view_labels_dup (labels, self->n);
  self->n_shown = 0;
  if (links != NULL && head_ids != NULL)
    {
      self->head_ids = g_new (int, MAX (n_shown, 1));
      for (int k = 0; k < n_shown; k++)
        if (head_ids[k] >= 0 && head_ids[k] < links->n_heads)
          self->head_ids[self->n_shown++] = head_ids[k];
    }
  if (self->highlight >= self->n)
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

gboolean
saccade_lines_view_get_busy (SaccadeLinesView *self)
{
  g_return_val_if_fail (SACCADE_IS_LINES_VIEW (self), FALSE);

  /* A mapped view whose image is not of its current state draws it at its next frame. */
  return self->job != NULL
         || (gtk_widget_get_mapped (GTK_WIDGET (self))
             && (self->texture == NULL || self->tex_generation != self->generation));
}

int
saccade_lines_view_get_highlight (SaccadeLinesView *self, gboolean *is_key)
{
  g_return_val_if_fail (SACCADE_IS_LINES_VIEW (self), -1);

  if (is_key != NULL)
    *is_key = self->highlight_is_key;
  return self->highlight >= 0 ? self->position0 + self->highlight : -1;
}

void
saccade_lines_view_set_highlight (SaccadeLinesView *self, int position, gboolean is_key)
{
  int token = position - self->position0;

  g_return_if_fail (SACCADE_IS_LINES_VIEW (self));

  if (position < 0 || token < 0 || token >= self->n)
    token = -1;
  set_highlight (self, token, is_key);
}
