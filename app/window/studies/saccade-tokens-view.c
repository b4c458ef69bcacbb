/* saccade-tokens-view.c — token leave-one-out's view (see saccade-study-views.h): the
 * chosen metric of erasing each token, masked out of every attention row and dropped from
 * the input, as paired bars per token; hover gives both values.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/studies/saccade-study-views.h"

#include <glib/gi18n.h>

#include "app/core/saccade-ablation.h"
#include "app/window/pages/saccade-page.h"
#include "ui/figures/saccade-figure.h"

struct _SaccadeTokensView
{
  GtkWidget parent_instance;

  GtkDrawingArea *area;

  SaccadeStudyShown shown;      /* a SaccadeAblation of kind TOKENS */
  double *bars[2];              /* mask, drop (n_tokens), or NULL */
  SaccadePairedBarsGeometry geom;
  int hover_token;
};

static void saccade_tokens_view_iface_init (SaccadeStudyViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SaccadeTokensView, saccade_tokens_view, GTK_TYPE_WIDGET,
                               G_IMPLEMENT_INTERFACE (SACCADE_TYPE_STUDY_VIEW,
                                                      saccade_tokens_view_iface_init))

static const ScTokenLooResult *
loo (SaccadeTokensView *self)
{
  const SaccadeAblation *a = self->shown.result;
  return a != NULL ? a->tokens : NULL;
}

static char *
tokens_title (SaccadeTokensView *self)
{
  g_autofree char *quote = saccade_study_shown_dup_quote (&self->shown);

  /* Translators: token leave-one-out's title: the metric, the model, the sentence. */
  return g_strdup_printf (_("Erasing each token: %s · %s · %s"),
                          saccade_study_metric_short (self->shown.ctx.metric),
                          saccade_study_shown_model (&self->shown), quote);
}

static void
bars_figure (SaccadeTokensView *self, const char *title, SaccadePairedBarsFigure *f)
{
  const ScTokenLooResult *r = loo (self);
  SaccadeRun *run = self->shown.ctx.run;

  *f = (SaccadePairedBarsFigure) {
    .n = r->n_tokens, .a = self->bars[0], .b = self->bars[1],
    /* Translators: the two kinds of token erasure, the bars' legend. */
    .a_name = _("mask (out of every attention row)"), .b_name = _("drop (from the input)"),
    .labels = run != NULL && run->n == r->n_tokens ? (const char *const *) run->labels : NULL,
    .value_name = saccade_study_metric_name (self->shown.ctx.metric), .title = title,
  };
}

static void
draw_bars (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeTokensView *self = data;
  g_autofree char *title = NULL;
  SaccadePairedBarsFigure f;
  SaccadeFigureStyle style;

  if (loo (self) == NULL || self->bars[0] == NULL)
    return;
  title = tokens_title (self);
  bars_figure (self, title, &f);
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  saccade_figure_paired_bars_draw_full (cr, &f, &style, self->hover_token, width, height,
                                        &self->geom);
}

static void
bars_motion (GtkEventControllerMotion *c, double x, double y, SaccadeTokensView *self)
{
  const ScTokenLooResult *r = loo (self);
  SaccadeRun *run = self->shown.ctx.run;
  const SaccadeAblationMetric metric = (SaccadeAblationMetric) self->shown.ctx.metric;
  int t = -1;
  g_autofree char *text = NULL;

  if (r == NULL || !saccade_paired_bars_geometry_token_at (&self->geom, x, y, &t))
    t = -1;
  if (t == self->hover_token)
    return;
  self->hover_token = t;
  if (t >= 0 && t == r->n_tokens - 1)
    /* Translators: hover over the last token, which leave-one-out never erases. */
    text = g_strdup_printf (_("token %d is the query: never erased"), t);
  else if (t >= 0)
    /* Translators: hover over a token: position, label, metric, mask and drop values. */
    text = g_strdup_printf (_("token %d “%s”: %s = %.4g masked, %.4g dropped"), t,
                            run != NULL && t < run->n ? run->labels[t] : "",
                            saccade_study_metric_short (metric),
                            saccade_ablation_effect_value (&r->mask[t], metric),
                            saccade_ablation_effect_value (&r->drop[t], metric));
  saccade_study_view_hover (SACCADE_STUDY_VIEW (self), text);
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
}

static void
bars_leave (GtkEventControllerMotion *c, SaccadeTokensView *self)
{
  self->hover_token = -1;
  saccade_study_view_hover (SACCADE_STUDY_VIEW (self), NULL);
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
}

/* ------------------------------------------------------------------------------------ */
/* SaccadeStudyView                                                                      */

static void
tokens_show (SaccadeStudyView *view, gconstpointer result, const SaccadeStudyContext *ctx)
{
  SaccadeTokensView *self = SACCADE_TOKENS_VIEW (view);
  const ScTokenLooResult *r = ((const SaccadeAblation *) result)->tokens;

  saccade_study_shown_set (&self->shown, result, ctx);
  for (int s = 0; s < 2; s++)
    {
      g_free (self->bars[s]);
      self->bars[s] = g_new (double, r->n_tokens);
      for (int j = 0; j < r->n_tokens; j++)
        self->bars[s][j] = saccade_ablation_effect_value (s == 0 ? &r->mask[j] : &r->drop[j],
                                                          (SaccadeAblationMetric) ctx->metric);
    }
  self->hover_token = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
}

static void
tokens_clear (SaccadeStudyView *view)
{
  SaccadeTokensView *self = SACCADE_TOKENS_VIEW (view);

  saccade_study_shown_clear (&self->shown);
  g_clear_pointer (&self->bars[0], g_free);
  g_clear_pointer (&self->bars[1], g_free);
}

static char *
tokens_dup_title (SaccadeStudyView *view)
{
  return tokens_title (SACCADE_TOKENS_VIEW (view));
}

static gboolean
tokens_export_figure (SaccadeStudyView *view, const char *path, GError **error)
{
  SaccadeTokensView *self = SACCADE_TOKENS_VIEW (view);
  g_autofree char *title = tokens_title (self);
  SaccadePairedBarsFigure f;

  bars_figure (self, title, &f);
  return saccade_figure_export_paired_bars (&f, path, error);
}

static void
saccade_tokens_view_iface_init (SaccadeStudyViewInterface *iface)
{
  iface->show = tokens_show;
  iface->clear = tokens_clear;
  iface->dup_title = tokens_dup_title;
  iface->export_figure = tokens_export_figure;
}

static void
saccade_tokens_view_dispose (GObject *object)
{
  SaccadeTokensView *self = SACCADE_TOKENS_VIEW (object);

  tokens_clear (SACCADE_STUDY_VIEW (self));
  if (self->area != NULL)
    gtk_widget_unparent (GTK_WIDGET (self->area));
  self->area = NULL;
  G_OBJECT_CLASS (saccade_tokens_view_parent_class)->dispose (object);
}

static void
saccade_tokens_view_class_init (SaccadeTokensViewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = saccade_tokens_view_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
}

static void
saccade_tokens_view_init (SaccadeTokensView *self)
{
  self->area = GTK_DRAWING_AREA (gtk_drawing_area_new ());
  gtk_widget_set_focusable (GTK_WIDGET (self->area), TRUE);
  saccade_study_view_set_child (GTK_WIDGET (self), GTK_WIDGET (self->area));
  self->hover_token = -1;
  gtk_drawing_area_set_draw_func (self->area, draw_bars, self, NULL);
  saccade_study_view_add_pointer (GTK_WIDGET (self->area), G_CALLBACK (bars_motion),
                                  G_CALLBACK (bars_leave), self);
}
