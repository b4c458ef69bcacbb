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
 * Page actions: page.attribute (Run), page.cancel (Cancel). Export: the figure (PNG, SVG, PDF) and the CSV
 * of the view shown (saccade_attribution_csv per token, saccade_adversarial_csv per ε).
 */
#pragma once

#include "app/window/pages/saccade-adversarial-view.h"
#include "app/window/pages/saccade-page.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_ATTRIBUTION_PAGE (saccade_attribution_page_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeAttributionPage, saccade_attribution_page, SACCADE,
                      ATTRIBUTION_PAGE, SaccadePage)

/* For the e2e test driver, as the settings row's widgets: "steps N", "rule
 * gauss-legendre|midpoint", "baseline TEXT" (empty: zero, else a token), "target TEXT"
 * (empty: the top-1). FALSE for an unknown name or value. */
gboolean saccade_attribution_page_set_option (SaccadeAttributionPage *self, const char *name,
                                              const char *value);
/* The fraction of the running study done (0 when none runs). */
double saccade_attribution_page_get_fraction (SaccadeAttributionPage *self);
/* The status line's text, borrowed. */
const char *saccade_attribution_page_get_status (SaccadeAttributionPage *self);
/* Turns to the adversarial attention view (as its switcher does) and returns it, borrowed. */
SaccadeAdversarialView *saccade_attribution_page_show_adversarial (SaccadeAttributionPage *self);

G_END_DECLS
