/* saccade-compare-models.h — the Compare page's "Two models" view: the model loaded in the
 * window (A) and a second model file (B) on the text of the run shown, side by side as two
 * head grids coloured by head type or by a chosen statistic, with each type's count in
 * each model — the numbers of `saccade compare --model A --model B TEXT`, computed by the
 * same function (app/core/saccade-model-compare.h) in a GTask worker. Drawing is
 * ui/figures/saccade-figure-types.h's.
 *
 * The Compare page owns one SaccadeCompareModels, embeds its widget in its "models" stack
 * page, and forwards to it what the page is asked while that view is shown (the status
 * line, the figure title, exports, whether it is busy). Actions of the page (the e2e test
 * drives them): page.models-b (s: model B's path; starts the comparison), page.models-colour
 * (s: "type", a metric id of docs/metrics.md, "prefix-matching" or "ablation-tv": the
 * stored zero-ablation head sweep of the text, when there is one).
 */
#pragma once

#include <gtk/gtk.h>

#include "app/window/pages/saccade-page.h"

G_BEGIN_DECLS

typedef struct _SaccadeCompareModels SaccadeCompareModels;

/* A new view for @page (borrowed: the page owns the view and outlives it). Calls
 * @changed (@page) whenever its status line or busy state changes. */
SaccadeCompareModels *saccade_compare_models_new (SaccadePage *page,
                                                  void (*changed) (SaccadePage *page));
/* Cancels a running comparison and frees the view (its widget goes with the page). */
void saccade_compare_models_free (SaccadeCompareModels *v);

/* The view's widget (owned by the view until the page adds it to its stack). */
GtkWidget *saccade_compare_models_widget (SaccadeCompareModels *v);

/* The run shown changed: its text is what the next comparison runs on; a result for
 * another text is dropped. */
void saccade_compare_models_set_run (SaccadeCompareModels *v, SaccadeRun *run);

/* Uses @path as model B and starts the comparison (cancelling one that runs). */
void saccade_compare_models_set_b (SaccadeCompareModels *v, const char *path);
/* Colours the grids by "type", a head metric id, "prefix-matching" or "ablation-tv";
 * FALSE for another id. */
gboolean saccade_compare_models_set_colour (SaccadeCompareModels *v, const char *id);

/* The status line's text (translated). Caller frees. */
char *saccade_compare_models_dup_status (SaccadeCompareModels *v);
/* The figure's title: "Heads by type · A vs B · “text”". Caller frees. */
char *saccade_compare_models_dup_title (SaccadeCompareModels *v);
gboolean saccade_compare_models_is_busy (SaccadeCompareModels *v);
/* The figure (PNG, SVG, PDF by the extension) and every head's numbers as CSV. */
gboolean saccade_compare_models_export_figure (SaccadeCompareModels *v, const char *path,
                                               GError **error);
gboolean saccade_compare_models_export_csv (SaccadeCompareModels *v, const char *path,
                                            GError **error);

G_END_DECLS
