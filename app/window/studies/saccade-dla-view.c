/* saccade-dla-view.c — direct logit attribution's view (see saccade-study-views.h): each
 * head's DLA as a layer × head map; beside a zero-ablation sweep stored for the run, that
 * sweep's Δ log p map and the heads' scatter of DLA against it with Kendall's τ (computed
 * here) and the study's Spearman ρ; a note under them says how the two differ. Hover links
 * the two maps; a click on a head opens it.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/studies/saccade-study-views.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/saccade-ablation.h"
#include "app/window/pages/saccade-page.h"
#include "ui/figures/saccade-figure.h"

struct _SaccadeDlaView
{
  GtkWidget parent_instance;

  GtkWidget *box;
  GtkDrawingArea *dla_area;
  GtkWidget *beside;            /* the sweep's map and the scatter, with a stored sweep */
  GtkDrawingArea *sweep_area;
  GtkDrawingArea *scatter_area;
  GtkLabel *note;

  SaccadeStudyShown shown;      /* a SaccadeAblation of kind DLA */
  double *sweep_cells;          /* the zero-ablation Δ log p beside it, or NULL */
  char *measured;               /* "logit(␣Mary) − logit(␣John)" with a contrast, else NULL */
  ScKendall tau;                /* DLA against that Δ log p (ρ is the study's) */
  SaccadeEffectsMapGeometry dla_geom, sweep_geom;
  int hover;                    /* the head under the pointer (layer-major), or -1 */
};

static void saccade_dla_view_iface_init (SaccadeStudyViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SaccadeDlaView, saccade_dla_view, GTK_TYPE_WIDGET,
                               G_IMPLEMENT_INTERFACE (SACCADE_TYPE_STUDY_VIEW,
                                                      saccade_dla_view_iface_init))

static const SaccadeAblation *
shown (SaccadeDlaView *self)
{
  return self->shown.result;
}

static char *
dla_title (SaccadeDlaView *self)
{
  g_autofree char *quote = saccade_study_shown_dup_quote (&self->shown);

  if (self->measured != NULL)
    /* Translators: the DLA map's title with a contrast: the logit difference attributed,
     * the model, the sentence. */
    return g_strdup_printf (_("Direct logit attribution of %s to each head: %s · %s"),
                            self->measured, saccade_study_shown_model (&self->shown), quote);
  /* Translators: the DLA map's title: the model, the sentence. */
  return g_strdup_printf (_("Direct logit attribution of each head: %s · %s"),
                          saccade_study_shown_model (&self->shown), quote);
}

/* The colour bar's and the scatter's axis name. */
static const char *
dla_value_name (SaccadeDlaView *self)
{
  return self->measured != NULL
           /* Translators: the DLA map's colour bar with a contrast: logit difference units. */
           ? _("direct logit attribution (logit difference)")
           /* Translators: the DLA map's colour bar: logit units of the target token. */
           : _("direct logit attribution (logit)");
}

static void
dla_figure (SaccadeDlaView *self, const char *title, SaccadeEffectsMapFigure *f)
{
  const ScDlaResult *d = shown (self)->dla;

  *f = (SaccadeEffectsMapFigure) {
    .n_layers = d->n_layers, .n_heads = d->n_heads, .values = d->heads,
    .value_name = dla_value_name (self), .layer_name = _("Layer"),
    .head_name = _("Head"), .title = title,
  };
}

static void
sweep_figure (SaccadeDlaView *self, SaccadeEffectsMapFigure *f)
{
  const ScDlaResult *d = shown (self)->dla;

  *f = (SaccadeEffectsMapFigure) {
    .n_layers = d->n_layers, .n_heads = d->n_heads, .values = self->sweep_cells,
    .value_name = saccade_study_metric_name (SACCADE_ABLATION_METRIC_DELTA_LOGP),
    .layer_name = _("Layer"), .head_name = _("Head"),
    /* Translators: the map beside DLA: each head's zero-ablation effect. */
    .title = _("Zero-ablation effect of each head (stored head sweep)"),
  };
}

static void
scatter_figure (SaccadeDlaView *self, SaccadeScatterFigure *f)
{
  const SaccadeAblation *a = shown (self);

  *f = (SaccadeScatterFigure) {
    .n = a->dla->n_layers * a->dla->n_heads, .x = a->dla->heads, .y = self->sweep_cells,
    /* Translators: the DLA scatter's axes and title. */
    .x_name = _("direct logit attribution (logit)"),
    .y_name = _("zero-ablation Δ log p (nats)"), .title = _("Heads: DLA against ablation"),
    .tau = self->tau.tau, .tau_p = self->tau.p, .rho = a->dla_rho.rho, .rho_p = a->dla_rho.p,
  };
}

static void
draw_map (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeDlaView *self = data;
  g_autofree char *title = NULL;
  SaccadeEffectsMapFigure f;
  SaccadeFigureStyle style;
  const int sel = self->hover;

  if (shown (self) == NULL)
    return;
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  if (area == self->dla_area)
    {
      title = dla_title (self);
      dla_figure (self, title, &f);
    }
  else if (self->sweep_cells != NULL)
    sweep_figure (self, &f);
  else
    return;
  saccade_figure_effects_map_draw_full (cr, &f, &style, sel >= 0 ? sel / f.n_heads : -1,
                                        sel >= 0 ? sel % f.n_heads : -1, width, height,
                                        area == self->dla_area ? &self->dla_geom
                                                               : &self->sweep_geom);
}

static void
draw_scatter (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  SaccadeDlaView *self = data;
  SaccadeScatterFigure f;
  SaccadeFigureStyle style;

  if (shown (self) == NULL || self->sweep_cells == NULL)
    return;
  scatter_figure (self, &f);
  saccade_page_figure_style (GTK_WIDGET (area), &style);
  saccade_figure_scatter_draw_full (cr, &f, &style, width, height, NULL);
}

static void
redraw_maps (SaccadeDlaView *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self->dla_area));
  gtk_widget_queue_draw (GTK_WIDGET (self->sweep_area));
}

static const SaccadeEffectsMapGeometry *
geometry_of (SaccadeDlaView *self, GtkEventController *c)
{
  return gtk_event_controller_get_widget (c) == GTK_WIDGET (self->dla_area) ? &self->dla_geom
                                                                            : &self->sweep_geom;
}

static void
map_motion (GtkEventControllerMotion *c, double x, double y, SaccadeDlaView *self)
{
  const SaccadeAblation *a = shown (self);
  g_autofree char *text = NULL;
  int l, h, i = -1;

  if (a != NULL && saccade_effects_map_geometry_head_at (
                     geometry_of (self, GTK_EVENT_CONTROLLER (c)), x, y, &l, &h))
    i = l * a->dla->n_heads + h;
  if (i == self->hover)
    return;
  self->hover = i;
  if (i >= 0 && a->dla_sweep != NULL)
    /* Translators: hover over a head: layer, head, its DLA and zero-ablation Δ log p. */
    text = g_strdup_printf (_("layer %d head %d: DLA = %.4g · zero-ablation Δ log p = %.4g"),
                            l, h, a->dla->heads[i], a->dla_sweep->heads[i].next.delta_logp);
  else if (i >= 0)
    /* Translators: hover over a head: layer, head, its DLA. */
    text = g_strdup_printf (_("layer %d head %d: DLA = %.4g"), l, h, a->dla->heads[i]);
  saccade_study_view_hover (SACCADE_STUDY_VIEW (self), text);
  redraw_maps (self);
}

static void
map_leave (GtkEventControllerMotion *c, SaccadeDlaView *self)
{
  self->hover = -1;
  saccade_study_view_hover (SACCADE_STUDY_VIEW (self), NULL);
  redraw_maps (self);
}

static void
map_released (GtkGestureClick *g, int n_press, double x, double y, SaccadeDlaView *self)
{
  int l, h;

  if (shown (self) != NULL
      && saccade_effects_map_geometry_head_at (geometry_of (self, GTK_EVENT_CONTROLLER (g)), x,
                                               y, &l, &h))
    gtk_widget_activate_action (GTK_WIDGET (self), "win.show-head", "(ii)", l, h);
}

/* ------------------------------------------------------------------------------------ */
/* SaccadeStudyView                                                                      */

static void
dla_show (SaccadeStudyView *view, gconstpointer result, const SaccadeStudyContext *ctx)
{
  SaccadeDlaView *self = SACCADE_DLA_VIEW (view);
  const SaccadeAblation *a = result;
  const ScDlaResult *d = a->dla;
  const int n = d->n_layers * d->n_heads;
  g_autofree char *note = NULL;

  saccade_study_shown_set (&self->shown, result, ctx);
  g_clear_pointer (&self->sweep_cells, g_free);
  g_clear_pointer (&self->measured, g_free);
  if (d->contrast >= 0)
    {
      g_autofree char *t = saccade_study_token_text (ctx->model, d->target);
      g_autofree char *c = saccade_study_token_text (ctx->model, d->contrast);
      self->measured = g_strdup_printf ("logit(%s) − logit(%s)", t, c);
    }
  self->tau.tau = self->tau.p = NAN;
  if (a->dla_sweep != NULL)
    {
      self->sweep_cells = g_new (double, n);
      for (int i = 0; i < n; i++)
        self->sweep_cells[i] = a->dla_sweep->heads[i].next.delta_logp;
      if (sc_kendall_tau_b (d->heads, self->sweep_cells, n, &self->tau, NULL) != SC_OK)
        self->tau.tau = self->tau.p = NAN;
      /* Translators: under the DLA figures: Spearman ρ over the heads and its p. */
      note = g_strdup_printf (_("Over the %d heads, DLA against the zero-ablation Δ log p: "
                                "Spearman ρ = %.3f (p = %.2g). DLA is the linear part of a "
                                "head's effect, with the final norm's scale frozen at the "
                                "clean run; ablation also changes every later layer."),
                              n, a->dla_rho.rho, a->dla_rho.p);
    }
  else if (d->contrast >= 0)
    note = g_strdup (_("Each head's share of the logit difference, written directly through "
                       "W_O and the final norm (its scale frozen at the clean run); the "
                       "embedding, the heads and the MLPs add up to the difference. A head "
                       "sweep measures the target alone, so none is set beside it."));
  else
    note = g_strdup (_("Run the zero-ablation head sweep of this run to set each head's DLA "
                       "beside its ablation effect. DLA is the linear part of a head's "
                       "effect, with the final norm's scale frozen at the clean run."));
  gtk_label_set_text (self->note, note);
  gtk_widget_set_visible (self->beside, a->dla_sweep != NULL);
  self->hover = -1;
  redraw_maps (self);
  gtk_widget_queue_draw (GTK_WIDGET (self->scatter_area));
}

static void
dla_clear (SaccadeStudyView *view)
{
  SaccadeDlaView *self = SACCADE_DLA_VIEW (view);

  saccade_study_shown_clear (&self->shown);
  g_clear_pointer (&self->sweep_cells, g_free);
  g_clear_pointer (&self->measured, g_free);
}

static char *
dla_dup_title (SaccadeStudyView *view)
{
  return dla_title (SACCADE_DLA_VIEW (view));
}

static gboolean
dla_export_figure (SaccadeStudyView *view, const char *path, GError **error)
{
  SaccadeDlaView *self = SACCADE_DLA_VIEW (view);
  g_autofree char *title = dla_title (self);
  SaccadeEffectsMapFigure f;

  dla_figure (self, title, &f);
  return saccade_figure_export_effects_map (&f, path, NULL, error);
}

static void
saccade_dla_view_iface_init (SaccadeStudyViewInterface *iface)
{
  iface->show = dla_show;
  iface->clear = dla_clear;
  iface->dup_title = dla_dup_title;
  iface->export_figure = dla_export_figure;
}

static void
saccade_dla_view_dispose (GObject *object)
{
  SaccadeDlaView *self = SACCADE_DLA_VIEW (object);

  dla_clear (SACCADE_STUDY_VIEW (self));
  g_clear_pointer (&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS (saccade_dla_view_parent_class)->dispose (object);
}

static void
saccade_dla_view_class_init (SaccadeDlaViewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = saccade_dla_view_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
}

static GtkDrawingArea *
map_area (SaccadeDlaView *self, gboolean hexpand, gboolean vexpand)
{
  GtkWidget *area = gtk_drawing_area_new ();

  gtk_widget_set_focusable (area, TRUE);
  gtk_widget_set_hexpand (area, hexpand);
  gtk_widget_set_vexpand (area, vexpand);
  gtk_widget_set_size_request (area, -1, 220);
  gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (area), draw_map, self, NULL);
  saccade_study_view_add_pointer (area, G_CALLBACK (map_motion), G_CALLBACK (map_leave), self);
  saccade_study_view_add_click (area, G_CALLBACK (map_released), self);
  return GTK_DRAWING_AREA (area);
}

static void
saccade_dla_view_init (SaccadeDlaView *self)
{
  self->box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  self->dla_area = map_area (self, FALSE, TRUE);
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->dla_area));
  self->beside = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
  gtk_widget_set_vexpand (self->beside, TRUE);
  self->sweep_area = map_area (self, TRUE, FALSE);
  gtk_box_append (GTK_BOX (self->beside), GTK_WIDGET (self->sweep_area));
  self->scatter_area = GTK_DRAWING_AREA (gtk_drawing_area_new ());
  gtk_widget_set_size_request (GTK_WIDGET (self->scatter_area), 420, -1);
  gtk_drawing_area_set_draw_func (self->scatter_area, draw_scatter, self, NULL);
  gtk_box_append (GTK_BOX (self->beside), GTK_WIDGET (self->scatter_area));
  gtk_box_append (GTK_BOX (self->box), self->beside);
  self->note = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_wrap (self->note, TRUE);
  gtk_widget_set_margin_top (GTK_WIDGET (self->note), 6);
  gtk_widget_set_margin_bottom (GTK_WIDGET (self->note), 6);
  gtk_widget_add_css_class (GTK_WIDGET (self->note), "dim-label");
  gtk_box_append (GTK_BOX (self->box), GTK_WIDGET (self->note));
  saccade_study_view_set_child (GTK_WIDGET (self), self->box);
  self->hover = -1;
}
