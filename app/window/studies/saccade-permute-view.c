/* saccade-permute-view.c — attention permutation's view (see saccade-study-views.h): the
 * layer × head map of each studied head's median effect over its permutations (heads not
 * studied left blank), the heads whose top-1 changed in at least half the permutations
 * marked; hover gives the spread (quartiles, min–max) and the flip share.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/studies/saccade-study-views.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/saccade-ablation.h"
#include "app/window/pages/saccade-page.h"
#include "ui/figures/saccade-figure.h"

struct _SaccadePermuteView
{
  GtkWidget parent_instance;

  GtkDrawingArea *area;

  SaccadeStudyShown shown;      /* a SaccadeAblation of kind PERMUTE */
  double *cells;                /* each head's median (n_layers * n_heads), NaN: not studied */
  gboolean *flipped;            /* top-1 changed in at least half */
  SaccadeEffectsMapGeometry geom;
  int hover;                    /* the head under the pointer (layer-major), or -1 */
};

static void saccade_permute_view_iface_init (SaccadeStudyViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SaccadePermuteView, saccade_permute_view, GTK_TYPE_WIDGET,
                               G_IMPLEMENT_INTERFACE (SACCADE_TYPE_STUDY_VIEW,
                                                      saccade_permute_view_iface_init))

static const ScPermutationResult *
perm (SaccadePermuteView *self)
{
  const SaccadeAblation *a = self->shown.result;
  return a != NULL ? a->perm : NULL;
}

/* The metric's spread of @h (the chooser's metrics; the loss is over the sentence). */
static const ScSpread *
perm_spread (const ScPermutationHead *h, int metric)
{
  switch (metric)
    {
    case SACCADE_ABLATION_METRIC_DELTA_LOGP:
      return &h->delta_logp;
    case SACCADE_ABLATION_METRIC_JSD:
      return &h->jsd;
    case SACCADE_ABLATION_METRIC_DELTA_LOSS:
      return &h->delta_loss;
    case SACCADE_ABLATION_METRIC_DELTA_LOGIT_DIFF:
      {
        /* a permutation study measures no contrast: nothing to draw (hatched) */
        static const ScSpread none = { NAN, NAN, NAN, NAN, NAN };
        return &none;
      }
    case SACCADE_ABLATION_METRIC_TV:
    default:
      return &h->tv;
    }
}

/* The studied head at layer-major index @i, or NULL. */
static const ScPermutationHead *
perm_head (const ScPermutationResult *r, int i)
{
  for (int k = 0; k < r->n_studied; k++)
    if (r->heads[k].layer * r->n_heads + r->heads[k].head == i)
      return &r->heads[k];
  return NULL;
}

static char *
perm_title (SaccadePermuteView *self)
{
  const ScPermutationResult *r = perm (self);
  g_autofree char *quote = saccade_study_shown_dup_quote (&self->shown);

  /* Translators: the permutation map's title: permutations per head, the metric, the
   * model, the sentence. */
  return g_strdup_printf (_("Permuting each head's attention (%d per head), median %s: %s · %s"),
                          r != NULL ? r->n_permutations : 0,
                          saccade_study_metric_short (self->shown.ctx.metric),
                          saccade_study_shown_model (&self->shown), quote);
}

static void
perm_figure (SaccadePermuteView *self, const char *title, SaccadeEffectsMapFigure *f)
{
  const ScPermutationResult *r = perm (self);

  *f = (SaccadeEffectsMapFigure) {
    .n_layers = r->n_layers, .n_heads = r->n_heads, .values = self->cells,
    .flipped = self->flipped, .value_name = saccade_study_metric_name (self->shown.ctx.metric),
    /* Translators: the mark on heads whose permutations changed the predicted token. */
    .flip_name = _("top-1 changed in at least half the permutations"),
    .layer_name = _("Layer"), .head_name = _("Head"), .title = title,
  };
}

static void
draw_perm (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadePermuteView *self = data;
  g_autofree char *title = NULL;
  SaccadeEffectsMapFigure f;
  SaccadeFigureStyle style;

  if (perm (self) == NULL || self->cells == NULL)
    return;
  title = perm_title (self);
  perm_figure (self, title, &f);
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  saccade_figure_effects_map_draw_full (cr, &f, &style,
                                        self->hover >= 0 ? self->hover / f.n_heads : -1,
                                        self->hover >= 0 ? self->hover % f.n_heads : -1,
                                        width, height, &self->geom);
}

/* The hover text of head @i: its median, the q25–q75 spread, min–max, the flip share. */
static char *
perm_hover_text (SaccadePermuteView *self, int i)
{
  const ScPermutationResult *r = perm (self);
  const ScPermutationHead *h = perm_head (r, i);
  const int metric = self->shown.ctx.metric;
  const ScSpread *sp;

  if (h == NULL)
    /* Translators: hover over a head the permutation study did not study. */
    return g_strdup_printf (_("layer %d head %d: not studied"), i / r->n_heads, i % r->n_heads);
  sp = perm_spread (h, metric);
  /* Translators: hover over a head of the permutation map: layer, head, metric, median,
   * quartiles, minimum and maximum, how many permutations changed the top-1 out of N. */
  return g_strdup_printf (_("layer %d head %d: median %s = %.4g · q25–q75 %.4g – %.4g · "
                            "min–max %.4g – %.4g · top-1 changed in %d of %d"),
                          h->layer, h->head, saccade_study_metric_short (metric), sp->median,
                          sp->q25, sp->q75, sp->min, sp->max,
                          (int) lround (h->flip_share * r->n_permutations), r->n_permutations);
}

static void
perm_motion (GtkEventControllerMotion *c, double x, double y, SaccadePermuteView *self)
{
  g_autofree char *text = NULL;
  int l, h, i = -1;

  if (perm (self) != NULL && saccade_effects_map_geometry_head_at (&self->geom, x, y, &l, &h))
    i = l * self->geom.n_heads + h;
  if (i == self->hover)
    return;
  self->hover = i;
  if (i >= 0)
    text = perm_hover_text (self, i);
  saccade_study_view_hover (SACCADE_STUDY_VIEW (self), text);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->area), text);
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
}

static void
perm_leave (GtkEventControllerMotion *c, SaccadePermuteView *self)
{
  self->hover = -1;
  saccade_study_view_hover (SACCADE_STUDY_VIEW (self), NULL);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->area), NULL);
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
}

static void
perm_released (GtkGestureClick *g, int n_press, double x, double y, SaccadePermuteView *self)
{
  int l, h;

  if (perm (self) != NULL && saccade_effects_map_geometry_head_at (&self->geom, x, y, &l, &h))
    gtk_widget_activate_action (GTK_WIDGET (self), "win.show-head", "(ii)", l, h);
}

/* ------------------------------------------------------------------------------------ */
/* SaccadeStudyView                                                                      */

static void
permute_show (SaccadeStudyView *view, gconstpointer result, const SaccadeStudyContext *ctx)
{
  SaccadePermuteView *self = SACCADE_PERMUTE_VIEW (view);
  const ScPermutationResult *r = ((const SaccadeAblation *) result)->perm;
  const int n = r->n_layers * r->n_heads;

  saccade_study_shown_set (&self->shown, result, ctx);
  g_free (self->cells);
  g_free (self->flipped);
  self->cells = g_new (double, n);
  self->flipped = g_new0 (gboolean, n);
  for (int i = 0; i < n; i++)
    self->cells[i] = NAN; /* a head not studied */
  for (int k = 0; k < r->n_studied; k++)
    {
      const ScPermutationHead *h = &r->heads[k];
      const int i = h->layer * r->n_heads + h->head;
      if (i < 0 || i >= n)
        continue;
      self->cells[i] = perm_spread (h, ctx->metric)->median;
      self->flipped[i] = h->flip_share >= 0.5;
    }
  self->hover = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self->area));
}

static void
permute_clear (SaccadeStudyView *view)
{
  SaccadePermuteView *self = SACCADE_PERMUTE_VIEW (view);

  saccade_study_shown_clear (&self->shown);
  g_clear_pointer (&self->cells, g_free);
  g_clear_pointer (&self->flipped, g_free);
}

static char *
permute_dup_title (SaccadeStudyView *view)
{
  return perm_title (SACCADE_PERMUTE_VIEW (view));
}

static gboolean
permute_export_figure (SaccadeStudyView *view, const char *path, GError **error)
{
  SaccadePermuteView *self = SACCADE_PERMUTE_VIEW (view);
  g_autofree char *title = perm_title (self);
  SaccadeEffectsMapFigure f;

  perm_figure (self, title, &f);
  return saccade_figure_export_effects_map (&f, path, NULL, error);
}

static void
saccade_permute_view_iface_init (SaccadeStudyViewInterface *iface)
{
  iface->show = permute_show;
  iface->clear = permute_clear;
  iface->dup_title = permute_dup_title;
  iface->export_figure = permute_export_figure;
}

static void
saccade_permute_view_dispose (GObject *object)
{
  SaccadePermuteView *self = SACCADE_PERMUTE_VIEW (object);

  permute_clear (SACCADE_STUDY_VIEW (self));
  if (self->area != NULL)
    gtk_widget_unparent (GTK_WIDGET (self->area));
  self->area = NULL;
  G_OBJECT_CLASS (saccade_permute_view_parent_class)->dispose (object);
}

static void
saccade_permute_view_class_init (SaccadePermuteViewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = saccade_permute_view_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
}

static void
saccade_permute_view_init (SaccadePermuteView *self)
{
  self->area = GTK_DRAWING_AREA (gtk_drawing_area_new ());
  gtk_widget_set_focusable (GTK_WIDGET (self->area), TRUE);
  gtk_widget_set_has_tooltip (GTK_WIDGET (self->area), TRUE);
  saccade_study_view_set_child (GTK_WIDGET (self), GTK_WIDGET (self->area));
  self->hover = -1;
  gtk_drawing_area_set_draw_func (self->area, draw_perm, self, NULL);
  saccade_study_view_add_pointer (GTK_WIDGET (self->area), G_CALLBACK (perm_motion),
                                  G_CALLBACK (perm_leave), self);
  saccade_study_view_add_click (GTK_WIDGET (self->area), G_CALLBACK (perm_released), self);
}
