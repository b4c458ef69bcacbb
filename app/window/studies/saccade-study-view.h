/* saccade-study-view.h — SaccadeStudyView, what a study page (saccade-study-page.h) asks of
 * the widget that shows one kind of study's result: show a result, forget it, title it and
 * export it as a figure. The page owns the results and the choosers; a view owns its
 * figure's widgets, buffers, hover and clicks, and nothing else. One view per kind
 * (saccade-study-views.h); a new study kind is a new view here and an entry in its page's
 * study table.
 *
 * A view tells its page what the pointer is over through the "hover" signal (the text, or
 * NULL when the pointer left); a click on a head asks the window for `win.show-head`
 * itself. Main thread only.
 */
#pragma once

#include <gtk/gtk.h>

#include "app/core/saccade-capture-task.h"
#include "app/core/saccade-run.h"

G_BEGIN_DECLS

/* What a result is shown with: choices of the page that change the figure, not the study
 * (a new metric or source is drawn again, never computed again). */
typedef struct {
  SaccadeRun *run;  /* the run the result is of (borrowed; a view keeps a reference), or NULL */
  int metric;       /* SaccadeAblationMetric chosen, for the views that draw a metric */
  int source;       /* SaccadeFaithChoice chosen, for the faithfulness view */
  SaccadeLoadedModel *model; /* the loaded model (borrowed for show() only), or NULL */
} SaccadeStudyContext;

#define SACCADE_TYPE_STUDY_VIEW (saccade_study_view_get_type ())
G_DECLARE_INTERFACE (SaccadeStudyView, saccade_study_view, SACCADE, STUDY_VIEW, GtkWidget)

struct _SaccadeStudyViewInterface
{
  GTypeInterface parent_iface;

  /* Shows @result (borrowed: the page keeps it until it calls clear or show again; its
   * type is the view's kind's, e.g. a SaccadeAblation) with @ctx. */
  void (*show) (SaccadeStudyView *self, gconstpointer result, const SaccadeStudyContext *ctx);
  /* Forgets the result and frees the view's buffers (before the page frees the result). */
  void (*clear) (SaccadeStudyView *self);
  /* The figure's title (caller frees); only called while a result is shown. */
  char *(*dup_title) (SaccadeStudyView *self);
  /* The figure as PNG, SVG or PDF by @path's extension; only called with a result. */
  gboolean (*export_figure) (SaccadeStudyView *self, const char *path, GError **error);
  /* (optional) the widget a click gives the keyboard to; the view itself when unset. */
  GtkWidget *(*get_figure) (SaccadeStudyView *self);
};

void saccade_study_view_show (SaccadeStudyView *self, gconstpointer result,
                              const SaccadeStudyContext *ctx);
void saccade_study_view_clear (SaccadeStudyView *self);
char *saccade_study_view_dup_title (SaccadeStudyView *self);
gboolean saccade_study_view_export_figure (SaccadeStudyView *self, const char *path,
                                           GError **error);
GtkWidget *saccade_study_view_get_figure (SaccadeStudyView *self);

/* For the views: says @text (NULL: nothing) through the "hover" signal. */
void saccade_study_view_hover (SaccadeStudyView *self, const char *text);

/* For the views: what a view keeps of show()'s arguments. set takes a reference to the
 * run; clear drops it. */
typedef struct {
  gconstpointer result;
  SaccadeStudyContext ctx;
} SaccadeStudyShown;

void saccade_study_shown_set (SaccadeStudyShown *shown, gconstpointer result,
                              const SaccadeStudyContext *ctx);
void saccade_study_shown_clear (SaccadeStudyShown *shown);
/* The run's model name ("" without a run), borrowed, and its quoted sentence as the
 * figures' titles end (saccade_page_dup_quoted_text; "" without a run), caller frees. */
const char *saccade_study_shown_model (const SaccadeStudyShown *shown);
char *saccade_study_shown_dup_quote (const SaccadeStudyShown *shown);

/* For the views: the metrics' names as the ablation figures print them (translated): the
 * colour bar or value axis caption with units, and the short form for titles and hover. */
const char *saccade_study_metric_name (int metric);
const char *saccade_study_metric_short (int metric);

/* "logit(“␣Mary”) − logit(“␣John”)" for a study measured against @contrast (token texts
 * by @model, as saccade_study_token_text); NULL when @contrast < 0. Caller frees. */
char *saccade_study_dup_contrast (SaccadeLoadedModel *model, int target, int contrast);
/* @metric's caption (@caption: the colour bar's, with units) or short name (titles, hover);
 * the Δ logit difference names @contrast's tokens when given (saccade_study_dup_contrast).
 * Caller frees. */
char *saccade_study_dup_metric (int metric, const char *contrast, gboolean caption);

/* A token id as the figures show tokens ("“␣tired”"), decoded by @model's tokenizer;
 * "token ID" without a model or when it cannot be decoded. Caller frees. */
char *saccade_study_token_text (SaccadeLoadedModel *model, int id);

/* For the views: a GtkWidget subclass of one child filling it (GtkBinLayout). */
void saccade_study_view_set_child (GtkWidget *view, GtkWidget *child);
/* For the views: connects motion and leave handlers (with @data) to @area's pointer. */
void saccade_study_view_add_pointer (GtkWidget *area, GCallback motion, GCallback leave,
                                     gpointer data);
/* For the views: connects a "released" handler (with @data) to a click on @area. */
void saccade_study_view_add_click (GtkWidget *area, GCallback released, gpointer data);

G_END_DECLS
