/* saccade-study-view.c — the SaccadeStudyView interface and the few helpers its views share
 * (see saccade-study-view.h).
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/studies/saccade-study-view.h"

#include <glib/gi18n.h>

#include "app/core/saccade-ablation.h"
#include "app/window/pages/saccade-page.h"
#include "ui/figures/saccade-token-label.h"

G_DEFINE_INTERFACE (SaccadeStudyView, saccade_study_view, GTK_TYPE_WIDGET)

enum { SIGNAL_HOVER, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
saccade_study_view_default_init (SaccadeStudyViewInterface *iface)
{
  /* SaccadeStudyView::hover: the text of what the pointer is over, NULL when it left. */
  signals[SIGNAL_HOVER] = g_signal_new ("hover", G_TYPE_FROM_INTERFACE (iface),
                                        G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE,
                                        1, G_TYPE_STRING);
}

void
saccade_study_view_show (SaccadeStudyView *self, gconstpointer result,
                         const SaccadeStudyContext *ctx)
{
  g_return_if_fail (SACCADE_IS_STUDY_VIEW (self));
  g_return_if_fail (result != NULL && ctx != NULL);
  SACCADE_STUDY_VIEW_GET_IFACE (self)->show (self, result, ctx);
}

void
saccade_study_view_clear (SaccadeStudyView *self)
{
  g_return_if_fail (SACCADE_IS_STUDY_VIEW (self));
  SACCADE_STUDY_VIEW_GET_IFACE (self)->clear (self);
}

char *
saccade_study_view_dup_title (SaccadeStudyView *self)
{
  g_return_val_if_fail (SACCADE_IS_STUDY_VIEW (self), NULL);
  return SACCADE_STUDY_VIEW_GET_IFACE (self)->dup_title (self);
}

gboolean
saccade_study_view_export_figure (SaccadeStudyView *self, const char *path, GError **error)
{
  g_return_val_if_fail (SACCADE_IS_STUDY_VIEW (self), FALSE);
  return SACCADE_STUDY_VIEW_GET_IFACE (self)->export_figure (self, path, error);
}

GtkWidget *
saccade_study_view_get_figure (SaccadeStudyView *self)
{
  SaccadeStudyViewInterface *iface;

  g_return_val_if_fail (SACCADE_IS_STUDY_VIEW (self), NULL);
  iface = SACCADE_STUDY_VIEW_GET_IFACE (self);
  return iface->get_figure != NULL ? iface->get_figure (self) : GTK_WIDGET (self);
}

void
saccade_study_view_hover (SaccadeStudyView *self, const char *text)
{
  g_return_if_fail (SACCADE_IS_STUDY_VIEW (self));
  g_signal_emit (self, signals[SIGNAL_HOVER], 0, text);
}

/* ------------------------------------------------------------------------------------ */
/* Helpers for the views                                                                 */

void
saccade_study_shown_set (SaccadeStudyShown *shown, gconstpointer result,
                         const SaccadeStudyContext *ctx)
{
  SaccadeRun *old = shown->ctx.run;

  shown->result = result;
  shown->ctx = *ctx;
  if (shown->ctx.run != NULL)
    saccade_run_ref (shown->ctx.run);
  if (old != NULL)
    saccade_run_unref (old);
}

void
saccade_study_shown_clear (SaccadeStudyShown *shown)
{
  g_clear_pointer (&shown->ctx.run, saccade_run_unref);
  shown->result = NULL;
}

const char *
saccade_study_shown_model (const SaccadeStudyShown *shown)
{
  return shown->ctx.run != NULL ? shown->ctx.run->model_name : "";
}

char *
saccade_study_shown_dup_quote (const SaccadeStudyShown *shown)
{
  return shown->ctx.run != NULL ? saccade_page_dup_quoted_text (shown->ctx.run) : g_strdup ("");
}

/* The effects the figures can show (app/core/saccade-ablation.h; docs/metrics.md). */
static const char *const METRIC_NAMES[SACCADE_ABLATION_N_METRICS] = {
  /* Translators: the metric chooser and the colour bar / value axis captions. */
  N_("Δ log p(target) (nats)"),
  N_("Total variation"),
  N_("Jensen–Shannon divergence (nats)"),
  N_("Δ mean loss (nats)"),
  N_("Δ logit difference (nats)"),
};
/* Titles and hover text: short forms. */
static const char *const METRIC_SHORT[SACCADE_ABLATION_N_METRICS] = {
  N_("Δ log p"), N_("TV"), N_("JSD"), N_("Δ loss"), N_("Δ logit diff"),
};

const char *
saccade_study_metric_name (int metric)
{
  return _(METRIC_NAMES[CLAMP (metric, 0, SACCADE_ABLATION_N_METRICS - 1)]);
}

const char *
saccade_study_metric_short (int metric)
{
  return _(METRIC_SHORT[CLAMP (metric, 0, SACCADE_ABLATION_N_METRICS - 1)]);
}

char *
saccade_study_dup_contrast (SaccadeLoadedModel *model, int target, int contrast)
{
  g_autofree char *a = NULL, *b = NULL;

  if (contrast < 0)
    return NULL;
  a = saccade_study_token_text (model, target);
  b = saccade_study_token_text (model, contrast);
  return g_strdup_printf ("logit(%s) − logit(%s)", a, b);
}

char *
saccade_study_dup_metric (int metric, const char *contrast, gboolean caption)
{
  if (metric == SACCADE_ABLATION_METRIC_DELTA_LOGIT_DIFF && contrast != NULL)
    /* Translators: the Δ logit difference named by its tokens, %s "logit(“␣Mary”) −
     * logit(“␣John”)": as a colour bar caption (with units), then in a title. */
    return g_strdup_printf (caption ? _("Δ [%s] (nats)") : _("Δ [%s]"), contrast);
  return g_strdup (caption ? saccade_study_metric_name (metric)
                           : saccade_study_metric_short (metric));
}

char *
saccade_study_token_text (SaccadeLoadedModel *model, int id)
{
  ScStoreToken *pieces = NULL;
  char *label = NULL, *out;

  if (model != NULL && id >= 0
      && sc_store_tokens_from_ids (sc_model_tokenizer (saccade_loaded_model_get_model (model)),
                                   &(int32_t) { id }, 1, &pieces, NULL) == SC_OK)
    label = saccade_token_label ((const char *) pieces[0].piece, pieces[0].len);
  sc_store_tokens_free (pieces);
  if (label == NULL)
    /* Translators: a token shown by its id when it cannot be decoded. */
    return g_strdup_printf (_("token %d"), id);
  out = g_strdup_printf ("“%s”", label);
  g_free (label);
  return out;
}

void
saccade_study_view_set_child (GtkWidget *view, GtkWidget *child)
{
  gtk_widget_set_parent (child, view);
}

void
saccade_study_view_add_pointer (GtkWidget *area, GCallback motion, GCallback leave,
                                gpointer data)
{
  GtkEventController *c = gtk_event_controller_motion_new ();

  g_signal_connect (c, "motion", motion, data);
  g_signal_connect (c, "leave", leave, data);
  gtk_widget_add_controller (area, c);
}

void
saccade_study_view_add_click (GtkWidget *area, GCallback released, gpointer data)
{
  GtkGesture *click = gtk_gesture_click_new ();

  g_signal_connect (click, "released", released, data);
  gtk_widget_add_controller (area, GTK_EVENT_CONTROLLER (click));
}
