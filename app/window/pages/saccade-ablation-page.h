/* saccade-ablation-page.h — the Ablation page: how much the model's output for the shown run
 * changes when one head or one token is taken away, and whether attention says so (app/
 * core/saccade-ablation.h; docs/metrics.md, "Ablation studies" and "The Ablation page's
 * further studies"; docs/window.md, "The Ablation page"). The user chooses a study (the
 * head sweep, zero- or mean-ablation; token leave-one-out, mask and drop; attention
 * permutation, N per head; erasure curves, mask or drop, with random orders; direct logit
 * attribution; faithfulness, attention against leave-one-out), a target (the clean top-1
 * unless a token is typed) and, where it applies, a metric (Δ log p(target), TV, JSD,
 * Δ mean loss); Run computes it in a worker with a progress bar and Cancel, and stores it.
 * Studies already stored for the run are found when the run is shown and listed with their
 * date; they show at once, without recomputing.
 *
 * The head sweeps draw as a layer × head map on the diverging red-blue map centred at 0
 * (flipped heads marked; hover names the head and its effect; a click opens the head on
 * the Heatmap page) beside the heads ranked by the size of the effect. Token leave-one-out
 * draws as per-token bars, mask and drop side by side. Permutation draws the map of each
 * head's median (its spread on hover), erasure the p(target) curves and flip points, DLA
 * its map beside a stored zero-ablation sweep, faithfulness the scatter with τ and ρ and
 * the head-level table. Export: the figure shown (PNG, SVG, PDF) and every number of the
 * shown study as CSV.
 *
 * Each study is one entry of the page's study table (its name, its view in
 * app/window/studies/, its choosers), so a further study is a further entry and a view.
 *
 * Page actions, each what its chooser or button does: page.run-study (Run), page.cancel
 * (Cancel), page.study (s: "heads", "heads-mean", "tokens", "permute", "erasure", "dla",
 * "faithfulness"), page.metric (s: "delta-logp", "tv", "jsd", "delta-loss"), page.target
 * (s: one token's text, "" for the clean top-1), page.permutations (s: 1 .. 1024),
 * page.seeds (s: 0 .. 256), page.erase-kind (s: "mask", "drop"), page.source (s:
 * "last-mean", "rollout", "flow", "best-head"); a value out of range is refused with a
 * warning. Properties (read-only, notified): "status" (the status line), "fraction" (of the
 * running study, 0 when none runs).
 */
#pragma once

#include "app/window/pages/saccade-page.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_ABLATION_PAGE (saccade_ablation_page_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeAblationPage, saccade_ablation_page, SACCADE, ABLATION_PAGE,
                      SaccadePage)

G_END_DECLS
