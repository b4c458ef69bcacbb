/* saccade-distance-task.h — the head-distance matrix of a run and its average-linkage
 * clustering (engine/analysis/sc-head-distance.h, sc-cluster.h), computed in a worker
 * thread for the Compare page, with progress coalesced onto the main loop.
 *
 * At n = 512 tokens the 270 × 270 matrix (36,315 pairs of 512 JSD rows) takes seconds; the
 * window never waits for it. The job is saccade-job.h's: progress coalesced onto the main
 * loop, none once the job is cancelled.
 */
#pragma once

#include <gio/gio.h>

#include "app/core/saccade-job.h"

#include "app/core/saccade-run.h"
#include "ui/figures/saccade-figure.h"

G_BEGIN_DECLS

typedef struct {
  int n;                      /* heads: n_layers * n_heads, head k is (k / n_heads, k % n_heads) */
  double *values;             /* (n, n) */
  int *order;                 /* (n) average-linkage leaf order */
  SaccadeDendroMerge *merges; /* (n - 1) */
  double seconds;             /* worker time */
} SaccadeDistanceResult;

void saccade_distance_result_free (SaccadeDistanceResult *r); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeDistanceResult, saccade_distance_result_free)


/* Computes @run's matrix (the run is referenced for the job). A matrix finished before a
 * Cancel is still returned (saccade-job.h): the caller compares the task's cancellable
 * with its current one. Errors: SACCADE_ERROR with the engine's message,
 * G_IO_ERROR_CANCELLED. */
void saccade_distance_task_run_async (gpointer source_object, SaccadeRun *run,
                                      GCancellable *cancellable,
                                      SaccadeJobProgress progress, gpointer progress_data,
                                      GAsyncReadyCallback callback, gpointer user_data);
SaccadeDistanceResult *saccade_distance_task_run_finish (GAsyncResult *result, GError **error);

G_END_DECLS
