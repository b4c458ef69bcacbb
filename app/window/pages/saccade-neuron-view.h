/* saccade-neuron-view.h — "Inside the model", the last section of the Learn page (issue 13):
 * the neuron view of app/core/saccade-neuron.h on the run the window shows. Layer, head and
 * query pickers; a heatmap of q ∘ k (a row per visible key, a column per dimension of the
 * head, red–blue diverging around 0: the terms whose sum is q · k); a table per key of
 * q · k, the scaled score, its softmax weight and the probability the run stored; and the
 * head-wide largest |weight − stored| over every query. Picking a layer or head recomputes
 * layers 0 .. L of the run in a GTask worker on the loaded model's session (only while the
 * section is mapped: a run switched to on another page is computed when the Learn page is
 * shown); picking a query only redraws.
 */
#pragma once

#include <gtk/gtk.h>

#include "app/core/saccade-capture-task.h"
#include "app/core/saccade-run.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_NEURON_VIEW (saccade_neuron_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeNeuronView, saccade_neuron_view, SACCADE, NEURON_VIEW, GtkBox)

GtkWidget *saccade_neuron_view_new (void);
/* The loaded model (NULL: none yet) and the run shown (NULL: none) with the store it was
 * read from (copied); each referenced. Either change recomputes. */
void saccade_neuron_view_set_model (SaccadeNeuronView *self, SaccadeLoadedModel *model);
void saccade_neuron_view_set_run (SaccadeNeuronView *self, SaccadeRun *run);
/* As a user picking them (the test driver): values outside the run are clamped. */
void saccade_neuron_view_pick (SaccadeNeuronView *self, int layer, int head, int query);
/* TRUE while a computation runs. */
gboolean saccade_neuron_view_is_busy (SaccadeNeuronView *self);

G_END_DECLS
