/* sc-path-patch.h — path patching: does the behaviour flow from a set of sender heads into
 * one receiver head's queries, keys or values? (docs/metrics.md, "Path patching")
 *
 * Wang et al. (2022, "Interpretability in the wild", section 3.1) and Goldowsky-Dill et al.
 * (2023, "Localizing model behavior with path patching"). Activation patching
 * (sc-patch-study.h) asks whether a component matters; path patching asks whether it
 * matters THROUGH a given path: the senders' effect on the metric carried by one
 * receiver's input alone, every other route from the senders to the logits cut.
 *
 * Definition. The clean and corrupted runs, the metric m, the directions (denoise: base
 * the corrupted run, source the clean; noise: base clean, source corrupted) and the
 * normalisation effect = (m − m_corrupted) / (m_clean − m_corrupted) are activation
 * patching's. Given the sender heads S (a list "L.H,L.H") and a component c ∈ {queries,
 * keys, values}:
 *   run A = the base ids with every sender's output (before W_O, every position) taken from
 *     the source run and EVERY OTHER head's output (every layer, every position) frozen at
 *     the base run's own (ScIntervention.head_patch); the MLPs are recomputed, so the paths
 *     from the senders through MLPs into a receiver are kept (as in Wang et al.), while
 *     those through other heads are cut;
 *   for each receiver head r in a layer after the latest sender: run B(r) = the base ids
 *     with r's component c (every position, that query head only: keys and values under
 *     grouped-query attention as activation patching's, sc-intervention.h) taken from
 *     run A, nothing else patched; the cell holds m of run B(r).
 * The grid is (n_layers, n_heads) over receivers. Cells in layers at or before the latest
 * sender have no path and hold m_base exactly (m_corrupted denoising, m_clean noising:
 * effect 0 or 1, the base's own value); ScPathPatchResult.receivers_from_layer says where
 * the receivers start.
 *
 * Each B(r) is sc_forward from r's layer on (prefix reuse of the base run: bit for bit the
 * full run); its head is recomputed in double (as a q/k/v patch of activation patching),
 * so a receiver whose input run A did not change gives m_base to float rounding.
 * Cost: 3 full passes (source, base, run A) plus one partial pass per receiver.
 *
 * Storage (sc-store-study.h): kind SC_PATH_PATCH_KIND, params
 * {"study":V,"run":R,"corrupted":C,"target":A|null,"contrast":B|null,
 *  "direction":"denoise"|"noise","senders":"L.H,...","component":"queries"|"keys"|"values"}
 * (the senders in canonical order, sc_study_heads_parse); the series of activation
 * patching ("patched" over the (n_layers, n_heads) grid, "metric", "clean").
 *
 * Thread safety: one study per session at a time (the session's rule). Plain C, no GLib.
 */
#pragma once

#include "study/sc-patch-study.h"
#include "study/sc-study.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SC_PATH_PATCH_KIND "path-patch"
/* Bumped whenever the definition above changes, so old stored studies are not reused. */
#define SC_PATH_PATCH_VERSION 1

typedef enum {
  SC_PATH_QUERIES = 0,
  SC_PATH_KEYS = 1,
  SC_PATH_VALUES = 2,
} ScPathComponent;

typedef struct {
  /* corrupted run, target, contrast and direction as activation patching's; its `what`
   * is ignored (the component decides the patch) */
  ScPatchParams patch;
  int component;                     /* ScPathComponent */
  char senders[SC_STUDY_HEADS_MAX];  /* "L.H,L.H" (SC_STUDY_OPTION_HEADS) */
} ScPathPatchParams;

typedef struct {
  /* (n_layers, n_heads) over receivers, what = the component's ScPatchWhat (queries,
   * keys or values); patched[l·H + h] for l < receivers_from_layer is m_base */
  ScPatchResult *grid;
  int component;                     /* ScPathComponent */
  char senders[SC_STUDY_HEADS_MAX];  /* canonical */
  int receivers_from_layer;          /* the latest sender's layer + 1 */
} ScPathPatchResult;

/* "queries", "keys", "values", by ScPathComponent; NULL-terminated. */
extern const char *const sc_path_component_names[];

/* The path patching study of @clean and @corrupted (the same length n >= 2) on @session
 * (bound to @model), as defined above; @progress after each run B(r) (false cancels:
 * SC_ERR_CANCELLED). Errors: those of sc_patch_run; SC_ERR_INVALID_ARG for a sender list
 * that is empty or not a list, a sender outside the model (naming it), a sender in the
 * last layer (no receiver is after it), a component that is not an ScPathComponent. */
ScStatus sc_path_patch_run (ScSession *session, const ScModel *model, const int32_t *clean,
                            const int32_t *corrupted, int n_tokens,
                            const ScPathPatchParams *params, ScStudyProgressFn progress,
                            void *progress_user, ScPathPatchResult **out, ScError *err);

void sc_path_patch_result_free (ScPathPatchResult *r); /* NULL is a no-op */

/* The params text of a study of run @run_id into @buf: its length, or −1 when @buf is too
 * small (SC_STUDY_PARAMS_MAX suffices) or a parameter is out of range. */
int sc_path_patch_params_json (int64_t run_id, const ScPathPatchParams *params, char *buf,
                               size_t size);

/* `saccade study path-patch RUN --corrupted RUN2 --senders L.H,... --component keys`. */
extern const ScStudyKind sc_study_kind_path_patch;

#ifdef __cplusplus
}
#endif
