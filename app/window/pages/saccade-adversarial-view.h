/* saccade-adversarial-view.h — the "Adversarial attention" view of the Attribution page:
 * how far one head's (or a whole layer's) attention row can move, in Jensen–Shannon
 * divergence, while the next-token distribution stays within ε in total variation (Jain &
 * Wallace 2019, 4.2; app/core/saccade-adversarial.h). A settings row (layer, head or "All
 * heads", Adam iterations per ε), Search with a progress bar and Cancel (a worker on the
 * loaded model's session, never the main loop), a status line, the figure
 * (ui/figures/saccade-figure-adversarial.c, the figure of `saccade adversarial -o`: the JSD
 * against ε with the ln 2 ceiling, and the original against the adversarial row of a study
 * just computed) and the reading under it. A study stored with the settings shown is read
 * back as soon as the view gets a run, shared with `saccade adversarial` (the same stored
 * params: the default ε, the last row, seed 0).
 *
 * Main thread only. The page owns it (a child of its template), forwards the run, the
 * model and the database with saccade_adversarial_view_set_source(), and exports and titles
 * its figure through its study panel (saccade-study-panel.h) while it is the view shown.
 *
 * Actions, each what its picker or button does: adversarial.search (Search),
 * adversarial.cancel (Cancel), adversarial.layer (s: "L"), adversarial.head (s: "H" or
 * "all"), adversarial.iterations (s: 1 .. 10000); a value out of range is refused with a
 * warning. Properties (read-only, notified): "status" (the status line), "fraction" (of the
 * running search, 0 when none runs).
 */
#pragma once

#include <gtk/gtk.h>

#include "app/core/saccade-capture-task.h"
#include "app/core/saccade-run.h"
#include "app/window/pages/saccade-study-panel.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_ADVERSARIAL_VIEW (saccade_adversarial_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeAdversarialView, saccade_adversarial_view, SACCADE,
                      ADVERSARIAL_VIEW, GtkBox)

/* The run (borrowed; the view keeps a reference), model and database whose studies are
 * shown (each may be NULL); stops a running search and looks up the stored study. */
void saccade_adversarial_view_set_source (SaccadeAdversarialView *self, SaccadeRun *run,
                                          SaccadeLoadedModel *model, const char *db_path);
/* The view's study: its result, jobs, status and exports (borrowed). */
SaccadeStudyPanel *saccade_adversarial_view_get_panel (SaccadeAdversarialView *self);

G_END_DECLS
