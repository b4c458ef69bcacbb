/* saccade-norm-maps.h — norm-based attention (Kobayashi et al. 2020; engine/study/
 * sc-norm-study.h, docs/metrics.md "Norm-based attention") of the run a page shows, for the
 * pages that draw it beside the weights: the Heatmap page's "Norm" view of one head
 * (‖α_ij f_h(x_j)‖) and the Model page's per-head metrics (the first token's norm share
 * beside its weight).
 *
 * The numbers come from the norm study of the run, through the one load-or-run-and-store
 * path (app/core/saccade-study.h): read back when the store holds it for that layer, else
 * one forward pass on the loaded model in a worker, stored — so `saccade norms RUN --layer
 * L` prints the same study. A SaccadeNormCache keeps the results of one run by layer, so
 * stepping through heads or coming back to a layer asks for nothing.
 *
 * Main thread only (the study itself runs in a worker).
 */
#pragma once

#include <gtk/gtk.h>

#include "app/core/saccade-capture-task.h"
#include "app/core/saccade-run.h"
#include "engine/study/sc-norm-study.h"

G_BEGIN_DECLS

/* What the caller needs of the study. */
typedef enum {
  SACCADE_NORM_NEED_HEADS, /* every head's first-token numbers (any run the store can hold) */
  SACCADE_NORM_NEED_MAPS,  /* also the layer's maps (runs short enough: sc_norm_maps_fit) */
} SaccadeNormNeed;

/* Why the norms of @run cannot be computed here (translated; caller frees), or NULL when they
 * can: no run, no model loaded yet, no database, a run of another model file, or a run too
 * long for what @need asks (its token count and the limit said). */
char *saccade_norm_dup_unavailable (SaccadeRun *run, SaccadeLoadedModel *model,
                                    const char *db_path, SaccadeNormNeed need);

/* The norm study of run @run_id for @layer (−1: the middle one) in a worker; @callback gets
 * it with saccade_norm_get_finish(). @cancellable (may be NULL) stops it. */
void saccade_norm_get_async (gpointer source_object, SaccadeLoadedModel *model,
                             const char *db_path, gint64 run_id, int layer,
                             GCancellable *cancellable, GAsyncReadyCallback callback,
                             gpointer user_data);
/* The result (caller frees with sc_norm_result_free), or NULL with @error set
 * (G_IO_ERROR_CANCELLED when stopped). */
ScNormResult *saccade_norm_get_finish (GAsyncResult *result, GError **error);

/* One run's results by layer. */
typedef struct _SaccadeNormCache SaccadeNormCache;

SaccadeNormCache *saccade_norm_cache_new (void);
void saccade_norm_cache_free (SaccadeNormCache *cache); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeNormCache, saccade_norm_cache_free)

/* Forgets everything unless it holds run @run_id's results already (a run's id names its
 * numbers for good: a deleted run's id is not reused by the store). */
void saccade_norm_cache_set_run (SaccadeNormCache *cache, gint64 run_id);
/* Keeps @r (taken) as the results of its layer (r->layer), replacing any kept before. */
void saccade_norm_cache_take (SaccadeNormCache *cache, ScNormResult *r);
/* Layer @layer's results (borrowed), or NULL; @layer −1: any layer's (every result holds
 * every head's first-token numbers). */
const ScNormResult *saccade_norm_cache_lookup (SaccadeNormCache *cache, int layer);

/* The CSV of head @head's map of @r (r->maps kept), queries [@q0, @q1) × keys [@k0, @k1):
 * the Heatmap page's head CSV (a header row of "pos:token" keys, a first column of query
 * labels) whose corner cell names what the cells are, "query\key [norm ||alpha_ij
 * f_h(x_j)||]", so a file read later says it holds norms, not weights. NULL when the map
 * is not kept or the range is outside it. */
GBytes *saccade_norm_map_csv (const ScNormResult *r, int head, const char *const *labels,
                              int q0, int q1, int k0, int k1);

/* The per-head table of @r as CSV — layer,head,weight_first,norm_first,gap,vnorm_first,
 * vnorm_rest — one row per head (the Model page's export of its norm metrics). */
GBytes *saccade_norm_heads_csv (const ScNormResult *r);

G_END_DECLS
