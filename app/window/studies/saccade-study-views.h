/* saccade-study-views.h — the study views (SaccadeStudyView, saccade-study-view.h), one per
 * kind of study, each in its own file here: the one place that names their types. Each
 * shows a `const SaccadeAblation *` (app/core/saccade-ablation.h) of its kind:
 *
 *   heads    the head sweeps (zero- and mean-ablation): the layer × head map of the chosen
 *            metric on the diverging map, flipped heads marked, beside the ranked heads;
 *   effect bars  token leave-one-out: mask and drop as paired bars per token; the layer
 *            sweep: a bar per layer; the logit lens: ln p(target) per layer, its rank;
 *   permute  attention permutation: the map of each head's median, its spread on hover;
 *   erasure  erasure curves: p(target) as tokens are erased, with the random orders;
 *   dla      direct logit attribution: its map, beside a stored zero-ablation sweep's map
 *            and the heads' scatter with τ and ρ;
 *   faith    faithfulness: the chosen attention source against leave-one-out (scatter with
 *            bars) and the head-level table;
 *   patch    activation patching: the normalised effect of each patched cell (layer × head,
 *            (layer·head) × position or layer × position) on the diverging map, 0 (the
 *            corrupted run) white and ±1 saturated; patterns, queries, keys and values per
 *            query head as heads; path patching's receivers as heads, the heads with no
 *            path hatched and the senders ringed;
 *   qk       QK attribution: one head's score at (query, key) split into query-side ×
 *            key-side component parts (summed by layer, or each head), and the largest;
 *   mixing   context mixing (value zeroing, ALTI): the rollout's token × token map, with
 *            the run's labels.
 *
 * A click on a head (heads, permute, dla, patch) opens it on the Heatmap page
 * (`win.show-head`); Shift+click on a head of the patching map sets it on the clean run
 * beside the same head on the corrupted run on the Compare page (`win.compare-head`).
 */
#pragma once

#include "app/window/studies/saccade-study-view.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_HEADS_VIEW (saccade_heads_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeHeadsView, saccade_heads_view, SACCADE, HEADS_VIEW, GtkWidget)
#define SACCADE_TYPE_EFFECT_BARS_VIEW (saccade_effect_bars_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeEffectBarsView, saccade_effect_bars_view, SACCADE, EFFECT_BARS_VIEW,
                      GtkWidget)
#define SACCADE_TYPE_PERMUTE_VIEW (saccade_permute_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadePermuteView, saccade_permute_view, SACCADE, PERMUTE_VIEW,
                      GtkWidget)
#define SACCADE_TYPE_ERASURE_VIEW (saccade_erasure_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeErasureView, saccade_erasure_view, SACCADE, ERASURE_VIEW,
                      GtkWidget)
#define SACCADE_TYPE_DLA_VIEW (saccade_dla_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeDlaView, saccade_dla_view, SACCADE, DLA_VIEW, GtkWidget)
#define SACCADE_TYPE_PATCH_VIEW (saccade_patch_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadePatchView, saccade_patch_view, SACCADE, PATCH_VIEW, GtkWidget)
#define SACCADE_TYPE_QK_VIEW (saccade_qk_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeQkView, saccade_qk_view, SACCADE, QK_VIEW, GtkWidget)
#define SACCADE_TYPE_MIXING_VIEW (saccade_mixing_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeMixingView, saccade_mixing_view, SACCADE, MIXING_VIEW, GtkWidget)
#define SACCADE_TYPE_FAITH_VIEW (saccade_faith_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeFaithView, saccade_faith_view, SACCADE, FAITH_VIEW, GtkWidget)

/* The QK view's "Each head" toggle: one row and column per component (TRUE) or their sums
 * by layer (FALSE), as a click on it does. */
void saccade_qk_view_set_each_head (SaccadeQkView *self, gboolean each);

/* The faithfulness view's attention sources, in the page's chooser's order
 * (SaccadeStudyContext.source). */
typedef enum {
  SACCADE_FAITH_CHOICE_LAST_MEAN,
  SACCADE_FAITH_CHOICE_ROLLOUT,
  SACCADE_FAITH_CHOICE_FLOW,
  SACCADE_FAITH_CHOICE_BEST_HEAD,
  SACCADE_FAITH_CHOICE_NORM,    /* the context-mixing sources (sc-faithfulness.h) */
  SACCADE_FAITH_CHOICE_NORM_ROLLOUT,
  SACCADE_FAITH_CHOICE_VZ,
  SACCADE_FAITH_CHOICE_VZ_ROLLOUT,
  SACCADE_FAITH_CHOICE_ALTI,
  SACCADE_FAITH_CHOICE_ALTI_ROLLOUT,
  SACCADE_FAITH_N_CHOICES
} SaccadeFaithChoice;

/* The chooser's name of @c (translated) and its id ("last-mean", "rollout", "flow",
 * "best-head", then the engine's ids "norm", "norm-rollout", "vz", "vz-rollout", "alti",
 * "alti-rollout"; page.source's parameter). */
const char *saccade_faith_choice_name (SaccadeFaithChoice c);
const char *saccade_faith_choice_id (SaccadeFaithChoice c);

G_END_DECLS
