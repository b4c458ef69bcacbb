/* saccade-predictions-view.h — what the model predicts next: the top-k tokens after one
 * position of a run, each with its probability as a number and a bar.
 *
 * The window shows it beside every page for the run's last position (what the model
 * would say next); the Heatmap page points it at the query under the pointer. It takes
 * plain data — display labels and probabilities — and copies them. Its rows can be
 * chosen (the "chosen" signal) and marked A and B: what choosing means is the window's.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SACCADE_TYPE_PREDICTIONS_VIEW (saccade_predictions_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadePredictionsView, saccade_predictions_view, SACCADE,
                      PREDICTIONS_VIEW, GtkWidget)

GtkWidget *saccade_predictions_view_new (void);

/* Shows @heading (e.g. "After “cat” (1)") over @k rows: @labels[r] (display strings) with
 * @probs[r] in [0, 1], best first. @k 0 shows only the heading (NULL: nothing). Copied. */
void saccade_predictions_view_set (SaccadePredictionsView *self, const char *heading, int k,
                                   const char *const *labels, const double *probs);

/* Marks row @a_row "A" (the target) and row @b_row "B" (the contrast); −1: none. Rows
 * keep their marks until the next set_marks (a new set() drops them). */
void saccade_predictions_view_set_marks (SaccadePredictionsView *self, int a_row, int b_row);

/* Rows can be chosen (the window then names their tokens as a target or contrast): each
 * row is a flat button; activating it (a click, Enter or Space) emits
 * SaccadePredictionsView::chosen (int row, gboolean contrast), contrast TRUE for a
 * Ctrl+click or Ctrl+Enter. @tooltip (NULL: none) says what choosing does. */
void saccade_predictions_view_set_choosable (SaccadePredictionsView *self, gboolean choosable,
                                             const char *tooltip);

/* The text of row @r as shown ("␣Paris 62.1 %", "A ␣Paris 62.1 %" when marked), for tests;
 * NULL past the rows shown. */
char *saccade_predictions_view_dup_row_text (SaccadePredictionsView *self, int r);

G_END_DECLS
