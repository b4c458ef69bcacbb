/* saccade-erasure-view.c — erasure curves' view (see saccade-study-views.h): p(target) as
 * the tokens are erased in each order (attention, leave-one-out, gradient, the random
 * orders), where the top-1 flips, and the random orders' median.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/studies/saccade-study-views.h"

#include <glib/gi18n.h>

#include "app/core/saccade-ablation.h"
#include "app/core/studies/saccade-study-outputs.h"
#include "app/window/pages/saccade-page.h"
#include "ui/figures/saccade-figure.h"

struct _SaccadeErasureView
{
  GtkWidget parent_instance;

  GtkDrawingArea *area;

  SaccadeStudyShown shown;      /* a SaccadeAblation of kind ERASURE */
  SaccadeErasureSeries *series; /* the figure's (n_curves), or NULL */
  char **series_names;          /* their names (NULL-terminated) */
};

static void saccade_erasure_view_iface_init (SaccadeStudyViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SaccadeErasureView, saccade_erasure_view, GTK_TYPE_WIDGET,
                               G_IMPLEMENT_INTERFACE (SACCADE_TYPE_STUDY_VIEW,
                                                      saccade_erasure_view_iface_init))

static const ScErasureResult *
erasure (SaccadeErasureView *self)
{
  const SaccadeAblation *a = self->shown.result;
  return a != NULL ? a->erasure : NULL;
}

static char *
erasure_title (SaccadeErasureView *self)
{
  const ScErasureResult *r = erasure (self);
  g_autofree char *quote = saccade_study_shown_dup_quote (&self->shown);
  const gboolean drop = r != NULL && r->kind == SC_ERASE_DROP;

  /* Translators: the erasure figure's title: mask or drop, the model, the sentence. */
  return g_strdup_printf (_("Erasing tokens until the top-1 flips (%s): %s · %s"),
                          drop ? _("drop") : _("mask"), saccade_study_shown_model (&self->shown),
                          quote);
}

static const char *
ordering_name (ScEraseOrdering o)
{
  switch (o)
    {
    case SC_ERASE_ORDER_ATTENTION:
      /* Translators: an erasure ordering: by the last layer's mean attention. */
      return _("attention (last-layer mean)");
    case SC_ERASE_ORDER_LOO:
      return _("leave-one-out (TV)");
    case SC_ERASE_ORDER_RANDOM:
      return _("random");
    default:
      return _("gradient");
    }
}

static void
erasure_figure (SaccadeErasureView *self, const char *title, SaccadeErasureFigure *f)
{
  saccade_erasure_figure (erasure (self), (const char *const *) self->series_names, title,
                          self->series, f);
}

static void
draw_erasure (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeErasureView *self = data;
  g_autofree char *title = NULL;
  SaccadeErasureFigure f;
  SaccadeFigureStyle style;

  if (erasure (self) == NULL || self->series == NULL)
    return;
  title = erasure_title (self);
  erasure_figure (self, title, &f);
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  saccade_figure_erasure_draw_full (cr, &f, &style, width, height);
}

/* ------------------------------------------------------------------------------------ */
/* SaccadeStudyView                                                                      */

static void
erasure_show (SaccadeStudyView *view, gconstpointer result, const SaccadeStudyContext *ctx)
{
  SaccadeErasureView *self = SACCADE_ERASURE_VIEW (view);
  const ScErasureResult *r = ((const SaccadeAblation *) result)->erasure;

  saccade_study_shown_set (&self->shown, result, ctx);
  g_free (self->series);
  g_strfreev (self->series_names);
  self->series = g_new0 (SaccadeErasureSeries, r->n_curves);
  self->series_names = g_new0 (char *, r->n_curves + 1);
  for (int c = 0; c < r->n_curves; c++)
    {
      const ScErasureCurve *cv = &r->curves[c];
      self->series_names[c] =
        cv->ordering == SC_ERASE_ORDER_RANDOM
          /* Translators: one random erasure order, by its seed's index. */
          ? g_strdup_printf (_("random #%d"), cv->seed_index)
          : g_strdup (ordering_name (cv->ordering));
    }
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
}

static void
erasure_clear (SaccadeStudyView *view)
{
  SaccadeErasureView *self = SACCADE_ERASURE_VIEW (view);

  saccade_study_shown_clear (&self->shown);
  g_clear_pointer (&self->series, g_free);
  g_clear_pointer (&self->series_names, g_strfreev);
}

static char *
erasure_dup_title (SaccadeStudyView *view)
{
  return erasure_title (SACCADE_ERASURE_VIEW (view));
}

static gboolean
erasure_export_figure (SaccadeStudyView *view, const char *path, GError **error)
{
  SaccadeErasureView *self = SACCADE_ERASURE_VIEW (view);
  g_autofree char *title = erasure_title (self);
  SaccadeErasureFigure f;

  erasure_figure (self, title, &f);
  return saccade_figure_export_erasure (&f, path, NULL, error);
}

static void
saccade_erasure_view_iface_init (SaccadeStudyViewInterface *iface)
{
  iface->show = erasure_show;
  iface->clear = erasure_clear;
  iface->dup_title = erasure_dup_title;
  iface->export_figure = erasure_export_figure;
}

static void
saccade_erasure_view_dispose (GObject *object)
{
  SaccadeErasureView *self = SACCADE_ERASURE_VIEW (object);

  erasure_clear (SACCADE_STUDY_VIEW (self));
  if (self->area != NULL)
    gtk_widget_unparent (GTK_WIDGET (self->area));
  self->area = NULL;
  G_OBJECT_CLASS (saccade_erasure_view_parent_class)->dispose (object);
}

static void
saccade_erasure_view_class_init (SaccadeErasureViewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = saccade_erasure_view_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
}

static void
saccade_erasure_view_init (SaccadeErasureView *self)
{
  self->area = GTK_DRAWING_AREA (gtk_drawing_area_new ());
  gtk_widget_set_focusable (GTK_WIDGET (self->area), TRUE);
  saccade_study_view_set_child (GTK_WIDGET (self), GTK_WIDGET (self->area));
  gtk_drawing_area_set_draw_func (self->area, draw_erasure, self, NULL);
}
