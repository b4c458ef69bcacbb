/* saccade-effect-bars-view.c — the bar views (see saccade-study-views.h) of the studies whose
 * result is one effect per item: token leave-one-out (a bar pair per token: masked out of
 * every attention row, dropped from the input), the layer sweep (a bar per layer: its
 * whole attention block taken away) and the logit lens (a bar per residual entry: ln p of
 * the target read off it, the target's rank under each bar). The chosen metric is drawn
 * (the lens has none); hover gives the values and, for a layer, whether the top-1 flipped
 * or what it is.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/studies/saccade-study-views.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/saccade-ablation.h"
#include "app/window/pages/saccade-page.h"
#include "ui/figures/saccade-figure.h"

struct _SaccadeEffectBarsView
{
  GtkWidget parent_instance;

  GtkDrawingArea *area;

  SaccadeStudyShown shown;      /* a SaccadeAblation of kind TOKENS, LAYERS or LENS */
  int n;                        /* items (tokens, layers, lens entries); 0: nothing shown */
  double *bars[2];              /* TOKENS: mask, drop; LAYERS: the layers, LENS: ln p of the
                                 * entries, then NULL (n) */
  GStrv layer_labels;           /* LAYERS: "L0" …, LENS: "L0 #rank" … (n); TOKENS: NULL (the
                                 * run's labels) */
  char *target;                 /* LENS: the target as the figures show tokens */
  char *metric_caption;         /* TOKENS, LAYERS: the metric as the value axis names it, */
  char *metric_short;           /* and in titles and hover (naming the contrast's tokens) */
  SaccadePairedBarsGeometry geom;
  int hover;
};

static void saccade_effect_bars_view_iface_init (SaccadeStudyViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SaccadeEffectBarsView, saccade_effect_bars_view, GTK_TYPE_WIDGET,
                               G_IMPLEMENT_INTERFACE (SACCADE_TYPE_STUDY_VIEW,
                                                      saccade_effect_bars_view_iface_init))

static const SaccadeAblation *
shown (SaccadeEffectBarsView *self)
{
  return self->n > 0 ? self->shown.result : NULL;
}

static char *
bars_title (SaccadeEffectBarsView *self)
{
  g_autofree char *quote = saccade_study_shown_dup_quote (&self->shown);
  const char *metric = self->metric_short;
  const char *model = saccade_study_shown_model (&self->shown);

  if (shown (self) != NULL && shown (self)->lens != NULL)
    /* Translators: the logit lens's title: the target token, the model, the sentence. */
    return g_strdup_printf (_("Logit lens: ln p(%s) and its rank by layer · %s · %s"),
                            self->target, model, quote);
  if (shown (self) != NULL && shown (self)->layers != NULL)
    /* Translators: the layer sweep's title: the metric, the model, the sentence. */
    return g_strdup_printf (_("Taking away each layer's attention: %s · %s · %s"), metric,
                            model, quote);
  /* Translators: token leave-one-out's title: the metric, the model, the sentence. */
  return g_strdup_printf (_("Erasing each token: %s · %s · %s"), metric, model, quote);
}

static void
bars_figure (SaccadeEffectBarsView *self, const char *title, SaccadePairedBarsFigure *f)
{
  SaccadeRun *run = self->shown.ctx.run;

  *f = (SaccadePairedBarsFigure) {
    .n = self->n, .a = self->bars[0], .b = self->bars[1],
    .value_name = self->metric_caption, .title = title,
  };
  if (shown (self) != NULL && shown (self)->lens != NULL)
    /* Translators: the logit lens's value axis: the target's log-probability. */
    f->value_name = _("ln p(target) read at the layer (nats)");
  if (self->layer_labels != NULL)
    f->labels = (const char *const *) self->layer_labels;
  else
    {
      /* Translators: the two kinds of token erasure, the bars' legend. */
      f->a_name = _("mask (out of every attention row)");
      f->b_name = _("drop (from the input)");
      f->labels = run != NULL && run->n == self->n ? (const char *const *) run->labels : NULL;
    }
}

static void
draw_bars (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeEffectBarsView *self = data;
  g_autofree char *title = NULL;
  SaccadePairedBarsFigure f;
  SaccadeFigureStyle style;

  if (shown (self) == NULL)
    return;
  title = bars_title (self);
  bars_figure (self, title, &f);
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  saccade_figure_paired_bars_draw_full (cr, &f, &style, self->hover, width, height,
                                        &self->geom);
}

/* What the pointer over item @i says (NULL: nothing). */
static char *
hover_text (SaccadeEffectBarsView *self, int i)
{
  const SaccadeAblation *a = shown (self);
  const char *name = self->metric_short;
  SaccadeRun *run = self->shown.ctx.run;

  if (a == NULL || i < 0 || i >= self->n)
    return NULL;
  if (a->lens != NULL)
    {
      g_autofree char *top1 = saccade_study_token_text (self->shown.ctx.model,
                                                        a->lens->top1[i]);
      /* Translators: hover over an entry of the logit lens: the layer it enters, the
       * target, its log-probability, probability and rank (0: the top-1), the top-1. */
      return g_strdup_printf (_("entering layer %d: ln p(%s) = %.4g (p = %.3g), rank %d; "
                                "the top-1 is %s"), i, self->target, self->bars[0][i],
                              exp (self->bars[0][i]), a->lens->rank[i], top1);
    }
  if (a->layers != NULL && a->layers->layers[i].flipped)
    /* Translators: hover over a layer of the layer sweep whose ablation changed the
     * prediction: layer, metric, value, the new top-1 token id. */
    return g_strdup_printf (_("layer %d: %s = %.4g; the top-1 becomes token %d"), i, name,
                            self->bars[0][i], a->layers->layers[i].next.top1_ablated);
  if (a->layers != NULL)
    /* Translators: hover over a layer of the layer sweep: layer, metric, value. */
    return g_strdup_printf (_("layer %d: %s = %.4g; the top-1 stays"), i, name,
                            self->bars[0][i]);
  if (i == self->n - 1)
    /* Translators: hover over the last token, which leave-one-out never erases. */
    return g_strdup_printf (_("token %d is the query: never erased"), i);
  /* Translators: hover over a token: position, label, metric, mask and drop values. */
  return g_strdup_printf (_("token %d “%s”: %s = %.4g masked, %.4g dropped"), i,
                          run != NULL && i < run->n ? run->labels[i] : "", name,
                          self->bars[0][i], self->bars[1][i]);
}

static void
bars_motion (GtkEventControllerMotion *c, double x, double y, SaccadeEffectBarsView *self)
{
  int i = -1;
  g_autofree char *text = NULL;

  if (shown (self) == NULL || !saccade_paired_bars_geometry_token_at (&self->geom, x, y, &i))
    i = -1;
  if (i == self->hover)
    return;
  self->hover = i;
  text = hover_text (self, i);
  saccade_study_view_hover (SACCADE_STUDY_VIEW (self), text);
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
}

static void
bars_leave (GtkEventControllerMotion *c, SaccadeEffectBarsView *self)
{
  self->hover = -1;
  saccade_study_view_hover (SACCADE_STUDY_VIEW (self), NULL);
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
}

/* ------------------------------------------------------------------------------------ */
/* SaccadeStudyView                                                                      */

static void
bars_clear (SaccadeStudyView *view)
{
  SaccadeEffectBarsView *self = SACCADE_EFFECT_BARS_VIEW (view);

  saccade_study_shown_clear (&self->shown);
  self->n = 0;
  g_clear_pointer (&self->bars[0], g_free);
  g_clear_pointer (&self->bars[1], g_free);
  g_clear_pointer (&self->layer_labels, g_strfreev);
  g_clear_pointer (&self->target, g_free);
  g_clear_pointer (&self->metric_caption, g_free);
  g_clear_pointer (&self->metric_short, g_free);
}

static void
bars_show (SaccadeStudyView *view, gconstpointer result, const SaccadeStudyContext *ctx)
{
  SaccadeEffectBarsView *self = SACCADE_EFFECT_BARS_VIEW (view);
  const SaccadeAblation *a = result;
  const SaccadeAblationMetric metric = (SaccadeAblationMetric) ctx->metric;
  const ScAblationEffect *series[2] = { NULL, NULL };
  g_autofree char *contrast = NULL;

  bars_clear (view);
  if (a->lens != NULL)
    {
      self->n = a->lens->n_layers + 1;
      self->bars[0] = g_memdup2 (a->lens->logp, self->n * sizeof (double));
      self->layer_labels = g_new0 (char *, self->n + 1);
      for (int l = 0; l < self->n; l++)
        self->layer_labels[l] = g_strdup_printf ("L%d #%d", l, a->lens->rank[l]);
      self->target = saccade_study_token_text (ctx->model, a->lens->target);
    }
  else if (a->layers != NULL)
    {
      self->n = a->layers->n_layers;
      series[0] = a->layers->layers;
      contrast = saccade_study_dup_contrast (ctx->model, a->layers->target,
                                             a->layers->contrast);
      self->layer_labels = g_new0 (char *, self->n + 1);
      for (int l = 0; l < self->n; l++)
        self->layer_labels[l] = g_strdup_printf ("L%d", l);
    }
  else
    {
      g_return_if_fail (a->tokens != NULL);
      self->n = a->tokens->n_tokens;
      series[0] = a->tokens->mask;
      series[1] = a->tokens->drop;
      contrast = saccade_study_dup_contrast (ctx->model, a->tokens->target,
                                             a->tokens->contrast);
    }
  self->metric_caption = saccade_study_dup_metric (metric, contrast, TRUE);
  self->metric_short = saccade_study_dup_metric (metric, contrast, FALSE);
  saccade_study_shown_set (&self->shown, result, ctx);
  for (int s = 0; s < 2; s++)
    if (series[s] != NULL)
      {
        self->bars[s] = g_new (double, self->n);
        for (int j = 0; j < self->n; j++)
          self->bars[s][j] = saccade_ablation_effect_value (&series[s][j], metric);
      }
  self->hover = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
}

static char *
bars_dup_title (SaccadeStudyView *view)
{
  return bars_title (SACCADE_EFFECT_BARS_VIEW (view));
}

static gboolean
bars_export_figure (SaccadeStudyView *view, const char *path, GError **error)
{
  SaccadeEffectBarsView *self = SACCADE_EFFECT_BARS_VIEW (view);
  g_autofree char *title = bars_title (self);
  SaccadePairedBarsFigure f;

  bars_figure (self, title, &f);
  return saccade_figure_export_paired_bars (&f, path, NULL, error);
}

static void
saccade_effect_bars_view_iface_init (SaccadeStudyViewInterface *iface)
{
  iface->show = bars_show;
  iface->clear = bars_clear;
  iface->dup_title = bars_dup_title;
  iface->export_figure = bars_export_figure;
}

static void
saccade_effect_bars_view_dispose (GObject *object)
{
  SaccadeEffectBarsView *self = SACCADE_EFFECT_BARS_VIEW (object);

  bars_clear (SACCADE_STUDY_VIEW (self));
  g_clear_pointer ((GtkWidget **) &self->area, gtk_widget_unparent);
  G_OBJECT_CLASS (saccade_effect_bars_view_parent_class)->dispose (object);
}

static void
saccade_effect_bars_view_class_init (SaccadeEffectBarsViewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = saccade_effect_bars_view_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
}

static void
saccade_effect_bars_view_init (SaccadeEffectBarsView *self)
{
  self->area = GTK_DRAWING_AREA (gtk_drawing_area_new ());
  gtk_widget_set_focusable (GTK_WIDGET (self->area), TRUE);
  saccade_study_view_set_child (GTK_WIDGET (self), GTK_WIDGET (self->area));
  self->hover = -1;
  gtk_drawing_area_set_draw_func (self->area, draw_bars, self, NULL);
  saccade_study_view_add_pointer (GTK_WIDGET (self->area), G_CALLBACK (bars_motion),
                                  G_CALLBACK (bars_leave), self);
}
