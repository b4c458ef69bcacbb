/* saccade-attribution-page.h — the Attribution page: gradient attributions of the selected
 * run's tokens (app/core/saccade-attribution.h: saliency, gradient × input, integrated
 * gradients, gradient rollout) beside the run's last-layer attention and token
 * leave-one-out. A settings row (integration points, rule, baseline, target: empty for the
 * model's top-1), Run with a progress bar and Cancel (a worker on the loaded model's
 * session, never the main loop), then the per-token bar rows
 * (ui/figures/saccade-figure-attribution.c, the figure of `saccade attribute -o`), the
 * numbers as a table and the integrated-gradients completeness line. A study stored with
 * the settings shown is read back as soon as the page gets a run; Run computes and stores
 * one otherwise, shared with `saccade attribute` (the same stored params).
 *
 * A switcher at the top turns to the "Adversarial attention" view
 * (saccade-adversarial-view.h): layer and head pickers, Search with progress and Cancel, the
 * JSD-against-ε curve and the original against the adversarial attention row.
 *
 * Page actions, each what its widget does: page.attribute (Run), page.cancel (Cancel),
 * page.steps (s: 1 .. SC_ATTR_MAX_STEPS), page.rule (s: "adaptive", "gauss-legendre",
 * "midpoint"), page.baseline and page.target (s: one token's text, "" for the default),
 * page.view (s: "attributions", "adversarial": the switcher). Properties (read-only,
 * notified): "status" (the attributions' status line), "fraction" (of the running study, 0
 * when none runs), "adversarial-view" (the SaccadeAdversarialView, with its own actions and
 * properties). Export: the figure (PNG, SVG, PDF) and the CSV of the view shown
 * (saccade_attribution_csv per token, saccade_adversarial_csv per ε).
 */
#pragma once

#include "app/window/pages/saccade-adversarial-view.h"
#include "app/window/pages/saccade-page.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_ATTRIBUTION_PAGE (saccade_attribution_page_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeAttributionPage, saccade_attribution_page, SACCADE,
                      ATTRIBUTION_PAGE, SaccadePage)

G_END_DECLS
