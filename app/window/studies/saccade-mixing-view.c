/* saccade-mixing-view.c — the context-mixing view (see saccade-study-views.h): the rollout
 * of a value-zeroing or ALTI study (engine/study/sc-mixing-study.h), each token's share in
 * each later token's representation through every layer, as ui's heatmap with the run's
 * token labels (causal: nothing above the diagonal). The heatmap's own tooltip names the
 * cell under the pointer; its export writes the figure.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/studies/saccade-study-views.h"

#include <glib/gi18n.h>

#include "app/core/saccade-ablation.h"
#include "ui/widgets/saccade-heatmap-view.h"

struct _SaccadeMixingView
{
  GtkWidget parent_instance;

  SaccadeHeatmapView *map;
  SaccadeStudyShown shown;      /* a SaccadeAblation of kind MIXING_VZ or MIXING_ALTI */
};

static void saccade_mixing_view_iface_init (SaccadeStudyViewInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SaccadeMixingView, saccade_mixing_view, GTK_TYPE_WIDGET,
                               G_IMPLEMENT_INTERFACE (SACCADE_TYPE_STUDY_VIEW,
                                                      saccade_mixing_view_iface_init))

static char *
mixing_title (SaccadeMixingView *self)
{
  const ScMixingResult *r = ((const SaccadeAblation *) self->shown.result)->mixing;
  const double mix = r->mix[r->n_layers];
  g_autofree char *quote = saccade_study_shown_dup_quote (&self->shown);
  const char *model = saccade_study_shown_model (&self->shown);

  if (r->method == SC_MIXING_ALTI)
    /* Translators: the context-mixing map's title: its rollout's mixing ratio, the model,
     * the sentence. */
    return g_strdup_printf (_("Context mixing by ALTI, rolled out over every layer (mixing "
                              "%.2f) · %s · %s"), mix, model, quote);
  /* Translators: the same for value zeroing. */
  return g_strdup_printf (_("Context mixing by value zeroing, rolled out over every layer "
                            "(mixing %.2f) · %s · %s"), mix, model, quote);
}

/* ------------------------------------------------------------------------------------ */
/* SaccadeStudyView                                                                      */

static void
mixing_clear (SaccadeStudyView *view)
{
  SaccadeMixingView *self = SACCADE_MIXING_VIEW (view);

  saccade_study_shown_clear (&self->shown);
  saccade_heatmap_view_set_data (self->map, NULL, 0, 0, NULL, NULL, FALSE);
  saccade_heatmap_view_set_title (self->map, NULL);
}

static void
mixing_show (SaccadeStudyView *view, gconstpointer result, const SaccadeStudyContext *ctx)
{
  SaccadeMixingView *self = SACCADE_MIXING_VIEW (view);
  const SaccadeAblation *a = result;
  const ScMixingResult *r = a->mixing;
  SaccadeRun *run = ctx->run;
  const char *const *labels = NULL;
  g_autofree char *title = NULL;

  mixing_clear (view);
  g_return_if_fail (r != NULL);
  saccade_study_shown_set (&self->shown, result, ctx);
  if (run != NULL && run->n == r->n_tokens)
    labels = (const char *const *) run->labels;
  saccade_heatmap_view_set_data (self->map, sc_mixing_result_map (r, r->n_layers), r->n_tokens,
                                 r->n_tokens, labels, labels, TRUE);
  title = mixing_title (self);
  saccade_heatmap_view_set_title (self->map, title);
}

static char *
mixing_dup_title (SaccadeStudyView *view)
{
  return mixing_title (SACCADE_MIXING_VIEW (view));
}

static gboolean
mixing_export_figure (SaccadeStudyView *view, const char *path, GError **error)
{
  return saccade_heatmap_view_export (SACCADE_MIXING_VIEW (view)->map, path, NULL, error);
}

static GtkWidget *
mixing_get_figure (SaccadeStudyView *view)
{
  return GTK_WIDGET (SACCADE_MIXING_VIEW (view)->map);
}

static void
saccade_mixing_view_iface_init (SaccadeStudyViewInterface *iface)
{
  iface->show = mixing_show;
  iface->clear = mixing_clear;
  iface->dup_title = mixing_dup_title;
  iface->export_figure = mixing_export_figure;
  iface->get_figure = mixing_get_figure;
}

static void
saccade_mixing_view_dispose (GObject *object)
{
  SaccadeMixingView *self = SACCADE_MIXING_VIEW (object);

  saccade_study_shown_clear (&self->shown);
  g_clear_pointer ((GtkWidget **) &self->map, gtk_widget_unparent);
  G_OBJECT_CLASS (saccade_mixing_view_parent_class)->dispose (object);
}

static void
saccade_mixing_view_class_init (SaccadeMixingViewClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = saccade_mixing_view_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
}

static void
saccade_mixing_view_init (SaccadeMixingView *self)
{
  self->map = SACCADE_HEATMAP_VIEW (saccade_heatmap_view_new ());
  saccade_heatmap_view_set_colormap (self->map, SACCADE_COLORMAP_MAGMA);
  /* Translators: the context-mixing map's axes and colour bar. */
  saccade_heatmap_view_set_axis_names (self->map, _("Token"), _("Source token"),
                                       _("share (rollout)"));
  saccade_study_view_set_child (GTK_WIDGET (self), GTK_WIDGET (self->map));
}
