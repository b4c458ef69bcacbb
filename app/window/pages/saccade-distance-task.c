/* saccade-distance-task.c — the head-distance matrix in a worker (saccade-distance-task.h).
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-distance-task.h"

#include <glib/gi18n.h>

#include "app/core/saccade-error.h"
#include "engine/analysis/sc-cluster.h"
#include "engine/analysis/sc-head-distance.h"

void
saccade_distance_result_free (SaccadeDistanceResult *r)
{
  if (r == NULL)
    return;
  g_free (r->values);
  g_free (r->order);
  g_free (r->merges);
  g_free (r);
}

static gpointer
worker (SaccadeJob *job, gpointer data, GCancellable *cancellable, GError **error)
{
  SaccadeRun *run = data;
  /* After each pair of heads: the job coalesces it (saccade-job.h). */
  SaccadeProgressPart p = { saccade_job_report, job, cancellable, 0.0, 1.0 };
  int n = run->n_layers * run->n_heads;
  g_autoptr (SaccadeDistanceResult) r = g_new0 (SaccadeDistanceResult, 1);
  g_autofree const float **heads = g_new (const float *, n);
  g_autofree ScClusterMerge *merges = g_new0 (ScClusterMerge, MAX (1, n - 1));
  gint64 t0 = g_get_monotonic_time ();
  ScError err = { 0 };

  for (int k = 0; k < n; k++)
    heads[k] = saccade_run_head (run, k / run->n_heads, k % run->n_heads);
  r->n = n;
  r->values = g_try_new (double, (gsize) n * n);
  r->order = g_new (int, n);
  r->merges = g_new0 (SaccadeDendroMerge, MAX (1, n - 1));
  if (r->values == NULL)
    sc_error_set (&err, SC_ERR_NOMEM, "out of memory for a %d x %d distance matrix", n, n);
  else if (sc_head_distance_matrix (heads, n, run->n, run->n, 0, saccade_progress_part_count, &p, r->values,
                                    &err) == SC_OK)
    sc_cluster_average (r->values, n, merges, r->order, &err);
  if (err.status != SC_OK)
    {
      if (err.status == SC_ERR_CANCELLED)
        g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("Cancelled"));
      else
        saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  for (int k = 0; k < n - 1; k++)
    r->merges[k] = (SaccadeDendroMerge) { merges[k].a, merges[k].b, merges[k].height };
  r->seconds = (g_get_monotonic_time () - t0) / 1e6;
  return g_steal_pointer (&r);
}

void
saccade_distance_task_run_async (gpointer source_object, SaccadeRun *run,
                                 GCancellable *cancellable, SaccadeJobProgress progress,
                                 gpointer progress_data, GAsyncReadyCallback callback,
                                 gpointer user_data)
{
  saccade_job_run_async (source_object, cancellable, saccade_distance_task_run_async,
                         "distance matrix", worker, saccade_run_ref (run),
                         (GDestroyNotify) saccade_run_unref,
                         (GDestroyNotify) saccade_distance_result_free, progress, progress_data,
                         callback, user_data);
}

SaccadeDistanceResult *
saccade_distance_task_run_finish (GAsyncResult *result, GError **error)
{
  return saccade_job_finish (result, saccade_distance_task_run_async, error);
}
