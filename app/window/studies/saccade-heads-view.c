/* saccade-heads-view.c — the head sweeps' view (zero- and mean-ablation; see
 * saccade-study-views.h): the layer × head map of the chosen metric on the diverging
 * red-blue map centred at 0, the heads whose ablation changed the top-1 marked, hover naming
 * the head and its effect, beside the heads ranked by the size of the effect
 * (SaccadeAblationTable). A click on a head, in the map or the table, opens it.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/studies/saccade-study-views.h"

#include <glib/gi18n.h>

#include "app/core/saccade-ablation.h"
#include "app/core/saccade-head-means.h"
#include "app/window/pages/saccade-ablation-table.h"
#include "app/window/pages/saccade-page.h"
#include "ui/figures/saccade-figure.h"

struct _SaccadeHeadsView
{
  GtkWidget parent_instance;

  GtkWidget *paned;
  GtkDrawingArea *map_area;
  SaccadeAblationTable *table;

  SaccadeStudyShown shown;      /* a SaccadeAblation of kind HEADS or HEADS_MEAN */
  double *cells;                /* the map's values (n_layers * n_heads), or NULL */
  gboolean *flipped;            /* the map's marks */
  SaccadeEffectsMapGeometry geom;
  int hover_layer, hover_head;
  char *metric_caption;         /* the metric as the colour bar names it, and in titles */
  char *metric_short;           /* (with a contrast, "Δ [logit(“␣Mary”) − logit(“␣John”)]") */
};

static void saccade_heads_view_iface_init (SaccadeStudyViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SaccadeHeadsView, saccade_heads_view, GTK_TYPE_WIDGET,
                               G_IMPLEMENT_INTERFACE (SACCADE_TYPE_STUDY_VIEW,
                                                      saccade_heads_view_iface_init))

static const ScHeadSweepResult *
sweep (SaccadeHeadsView *self)
{
  const SaccadeAblation *a = self->shown.result;
  return a != NULL ? a->heads : NULL;
}

static char *
heads_title (SaccadeHeadsView *self)
{
  const SaccadeAblation *a = self->shown.result;
  g_autofree char *quote = saccade_study_shown_dup_quote (&self->shown);

  if (a != NULL && a->kind == SACCADE_ABLATION_HEADS_MEAN)
    /* Translators: the mean-ablation sweep's title: the reference set, the metric, the
     * model, the sentence. */
    return g_strdup_printf (_("Mean-ablating each head (means of %s): %s · %s · %s"),
                            SACCADE_REFERENCE_SET, self->metric_short,
                            saccade_study_shown_model (&self->shown), quote);
  if (a != NULL && a->first != NULL)
    /* Translators: the head sweep after a first pass: how many heads were ablated exactly
     * (the others are hatched: estimated only), the metric, the model, the sentence. */
    return g_strdup_printf (_("Zero-ablating the top %1$d heads of a first-order first pass: "
                              "%2$s · %3$s · %4$s"), a->first->n_exact, self->metric_short,
                            saccade_study_shown_model (&self->shown), quote);
  /* Translators: the head sweep's title: the metric, the model, the sentence. */
  return g_strdup_printf (_("Zero-ablating each head: %s · %s · %s"), self->metric_short,
                          saccade_study_shown_model (&self->shown), quote);
}

static void
map_figure (SaccadeHeadsView *self, const char *title, SaccadeEffectsMapFigure *f)
{
  const ScHeadSweepResult *r = sweep (self);

  *f = (SaccadeEffectsMapFigure) {
    .n_layers = r->n_layers, .n_heads = r->n_heads, .values = self->cells,
    .flipped = self->flipped, .value_name = self->metric_caption,
    /* Translators: the mark on heads whose ablation changed the predicted token. */
    .flip_name = _("top-1 changed when ablated"), .layer_name = _("Layer"),
    .head_name = _("Head"), .title = title,
  };
}

static void
draw_map (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeHeadsView *self = data;
  g_autofree char *title = NULL;
  SaccadeEffectsMapFigure f;
  SaccadeFigureStyle style;

  if (sweep (self) == NULL || self->cells == NULL)
    return;
  title = heads_title (self);
  map_figure (self, title, &f);
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  saccade_figure_effects_map_draw_full (cr, &f, &style, self->hover_layer, self->hover_head,
                                        width, height, &self->geom);
}

static void
map_motion (GtkEventControllerMotion *c, double x, double y, SaccadeHeadsView *self)
{
  const ScHeadSweepResult *r = sweep (self);
  const int metric = self->shown.ctx.metric;
  int l = -1, h = -1;
  g_autofree char *text = NULL;

  if (r == NULL || !saccade_effects_map_geometry_head_at (&self->geom, x, y, &l, &h))
    l = h = -1;
  if (l == self->hover_layer && h == self->hover_head)
    return;
  self->hover_layer = l;
  self->hover_head = h;
  if (l >= 0)
    {
      const ScAblationEffect *e = &r->heads[l * r->n_heads + h];
      /* Translators: hover over a head of the sweep: layer, head, metric, value. */
      text = g_strdup_printf (_("layer %d head %d: %s = %.4g%s"), l, h, self->metric_short,
                              saccade_ablation_effect_value (e, (SaccadeAblationMetric) metric),
                              e->flipped ? _(" · top-1 changed") : "");
    }
  saccade_study_view_hover (SACCADE_STUDY_VIEW (self), text);
  gtk_widget_queue_draw (GTK_WIDGET (self->map_area));
}

static void
map_leave (GtkEventControllerMotion *c, SaccadeHeadsView *self)
{
  self->hover_layer = self->hover_head = -1;
  saccade_study_view_hover (SACCADE_STUDY_VIEW (self), NULL);
  gtk_widget_queue_draw (GTK_WIDGET (self->map_area));
}

static void
open_head (SaccadeHeadsView *self, int layer, int head)
{
  gtk_widget_activate_action (GTK_WIDGET (self), "win.show-head", "(ii)", layer, head);
}

static void
map_released (GtkGestureClick *g, int n_press, double x, double y, SaccadeHeadsView *self)
{
  int l, h;

  if (sweep (self) != NULL && saccade_effects_map_geometry_head_at (&self->geom, x, y, &l, &h))
    open_head (self, l, h);
}

/* ------------------------------------------------------------------------------------ */
/* SaccadeStudyView                                                                      */

static void
heads_show (SaccadeStudyView *view, gconstpointer result, const SaccadeStudyContext *ctx)
{
  SaccadeHeadsView *self = SACCADE_HEADS_VIEW (view);
  const SaccadeAblation *a = result;
  const ScHeadSweepResult *r = a->heads;
  const int n = r->n_layers * r->n_heads;

  g_autofree char *contrast = saccade_study_dup_contrast (ctx->model, r->target, r->contrast);

  saccade_study_shown_set (&self->shown, a, ctx);
  g_free (self->metric_caption);
  g_free (self->metric_short);
  self->metric_caption = saccade_study_dup_metric (ctx->metric, contrast, TRUE);
  self->metric_short = saccade_study_dup_metric (ctx->metric, contrast, FALSE);
  g_free (self->cells);
  g_free (self->flipped);
  self->cells = g_new (double, n);
  self->flipped = g_new (gboolean, n);
  for (int i = 0; i < n; i++)
    {
      self->cells[i] = saccade_ablation_effect_value (&r->heads[i],
                                                      (SaccadeAblationMetric) ctx->metric);
      self->flipped[i] = r->heads[i].flipped;
    }
  saccade_ablation_table_set_result (self->table, r, (SaccadeAblationMetric) ctx->metric);
  self->hover_layer = self->hover_head = -1;
  gtk_widget_queue_draw (GTK_WIDGET (self->map_area));
}

static void
heads_clear (SaccadeStudyView *view)
{
  SaccadeHeadsView *self = SACCADE_HEADS_VIEW (view);

  saccade_study_shown_clear (&self->shown);
  g_clear_pointer (&self->metric_caption, g_free);
  g_clear_pointer (&self->metric_short, g_free);
  g_clear_pointer (&self->cells, g_free);
  g_clear_pointer (&self->flipped, g_free);
}

static char *
heads_dup_title (SaccadeStudyView *view)
{
  return heads_title (SACCADE_HEADS_VIEW (view));
}

static gboolean
heads_export_figure (SaccadeStudyView *view, const char *path, GError **error)
{
  SaccadeHeadsView *self = SACCADE_HEADS_VIEW (view);
  g_autofree char *title = heads_title (self);
  SaccadeEffectsMapFigure f;

  map_figure (self, title, &f);
  return saccade_figure_export_effects_map (&f, path, NULL, error);
}

static GtkWidget *
heads_get_figure (SaccadeStudyView *view)
{
  return GTK_WIDGET (SACCADE_HEADS_VIEW (view)->map_area);
}

static void
saccade_heads_view_iface_init (SaccadeStudyViewInterface *iface)
{
  iface->show = heads_show;
  iface->clear = heads_clear;
  iface->dup_title = heads_dup_title;
  iface->export_figure = heads_export_figure;
  iface->get_figure = heads_get_figure;
}

static void
saccade_heads_view_dispose (GObject *object)
{
  SaccadeHeadsView *self = SACCADE_HEADS_VIEW (object);

  heads_clear (SACCADE_STUDY_VIEW (self));
  g_clear_pointer (&self->paned, gtk_widget_unparent);
  G_OBJECT_CLASS (saccade_heads_view_parent_class)->dispose (object);
}

static void
saccade_heads_view_class_init (SaccadeHeadsViewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = saccade_heads_view_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
}

static void
saccade_heads_view_init (SaccadeHeadsView *self)
{
  self->map_area = GTK_DRAWING_AREA (gtk_drawing_area_new ());
  gtk_widget_set_focusable (GTK_WIDGET (self->map_area), TRUE);
  gtk_widget_set_hexpand (GTK_WIDGET (self->map_area), TRUE);
  gtk_widget_set_size_request (GTK_WIDGET (self->map_area), 360, -1);
  self->table = g_object_new (SACCADE_TYPE_ABLATION_TABLE, NULL);
  gtk_widget_set_size_request (GTK_WIDGET (self->table), 300, -1);
  self->paned = gtk_paned_new (GTK_ORIENTATION_HORIZONTAL);
  gtk_paned_set_position (GTK_PANED (self->paned), 760);
  gtk_paned_set_shrink_start_child (GTK_PANED (self->paned), FALSE);
  gtk_paned_set_start_child (GTK_PANED (self->paned), GTK_WIDGET (self->map_area));
  gtk_paned_set_end_child (GTK_PANED (self->paned), GTK_WIDGET (self->table));
  saccade_study_view_set_child (GTK_WIDGET (self), self->paned);

  self->hover_layer = self->hover_head = -1;
  gtk_drawing_area_set_draw_func (self->map_area, draw_map, self, NULL);
  saccade_study_view_add_pointer (GTK_WIDGET (self->map_area), G_CALLBACK (map_motion),
                                  G_CALLBACK (map_leave), self);
  saccade_study_view_add_click (GTK_WIDGET (self->map_area), G_CALLBACK (map_released), self);
  g_signal_connect_swapped (self->table, "head-activated", G_CALLBACK (open_head), self);
}
