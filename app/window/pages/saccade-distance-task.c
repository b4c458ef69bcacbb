/* saccade-distance-task.c — the head-distance matrix in a worker (saccade-distance-task.h).
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-distance-task.h"

#include <glib/gi18n.h>

#include "app/core/saccade-error.h"
#include "engine/analysis/sc-cluster.h"
#include "engine/analysis/sc-head-distance.h"

typedef struct {
  SaccadeRun *run;
  GCancellable *cancellable;
  SaccadeProgress progress;
  gpointer progress_data;
  GMainContext *context;
  gint done_permille;         /* atomic: latest progress */
  gint idle_pending;          /* atomic: an idle is queued */
  gint refs;                  /* atomic: the worker and a pending idle share this */
} Job;

static void
job_unref (Job *j)
{
  if (!g_atomic_int_dec_and_test (&j->refs))
    return;
  saccade_run_unref (j->run);
  g_clear_object (&j->cancellable);
  g_main_context_unref (j->context);
  g_free (j);
}

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

static gboolean
progress_idle (gpointer data)
{
  Job *j = data;

  g_atomic_int_set (&j->idle_pending, 0);
  if (j->progress != NULL && !g_cancellable_is_cancelled (j->cancellable))
    j->progress (g_atomic_int_get (&j->done_permille) / 1000.0, j->progress_data);
  return G_SOURCE_REMOVE;
}

/* From the worker: keep the latest count, queue at most one idle. */
static bool
on_progress (void *user, size_t done, size_t total)
{
  Job *j = user;

  g_atomic_int_set (&j->done_permille, total > 0 ? (gint) (1000.0 * done / total) : 0);
  if (g_atomic_int_compare_and_exchange (&j->idle_pending, 0, 1))
    {
      g_atomic_int_inc (&j->refs);
      g_main_context_invoke_full (j->context, G_PRIORITY_DEFAULT_IDLE, progress_idle, j,
                                  (GDestroyNotify) job_unref);
    }
  return !g_cancellable_is_cancelled (j->cancellable);
}

static void
worker (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  Job *j = task_data;
  SaccadeRun *run = j->run;
  int n = run->n_layers * run->n_heads;
  g_autoptr (SaccadeDistanceResult) r = g_new0 (SaccadeDistanceResult, 1);
  g_autofree const float **heads = g_new (const float *, n);
  g_autofree ScClusterMerge *merges = g_new0 (ScClusterMerge, MAX (1, n - 1));
  gint64 t0 = g_get_monotonic_time ();
  ScError err = { 0 };
  GError *error = NULL;

  for (int k = 0; k < n; k++)
    heads[k] = saccade_run_head (run, k / run->n_heads, k % run->n_heads);
  r->n = n;
  r->values = g_try_new (double, (gsize) n * n);
  r->order = g_new (int, n);
  r->merges = g_new0 (SaccadeDendroMerge, MAX (1, n - 1));
  if (r->values == NULL)
    sc_error_set (&err, SC_ERR_NOMEM, "out of memory for a %d x %d distance matrix", n, n);
  else if (sc_head_distance_matrix (heads, n, run->n, run->n, 0, on_progress, j, r->values,
                                    &err) == SC_OK)
    sc_cluster_average (r->values, n, merges, r->order, &err);
  if (err.status != SC_OK)
    {
      if (err.status == SC_ERR_CANCELLED)
        g_set_error_literal (&error, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("Cancelled"));
      else
        saccade_set_error_from_sc (&error, &err);
      g_task_return_error (task, error);
      return;
    }
  for (int k = 0; k < n - 1; k++)
    r->merges[k] = (SaccadeDendroMerge) { merges[k].a, merges[k].b, merges[k].height };
  r->seconds = (g_get_monotonic_time () - t0) / 1e6;
  g_task_return_pointer (task, g_steal_pointer (&r), (GDestroyNotify) saccade_distance_result_free);
}

void
saccade_distance_task_run_async (gpointer source_object, SaccadeRun *run,
                                 GCancellable *cancellable, SaccadeProgress progress,
                                 gpointer progress_data, GAsyncReadyCallback callback,
                                 gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (source_object, cancellable, callback, user_data);
  Job *j = g_new0 (Job, 1);

  j->run = saccade_run_ref (run);
  j->cancellable = cancellable != NULL ? g_object_ref (cancellable) : g_cancellable_new ();
  j->progress = progress;
  j->progress_data = progress_data;
  j->context = g_main_context_ref_thread_default ();
  j->refs = 1;
  g_task_set_source_tag (task, saccade_distance_task_run_async);
  g_task_set_task_data (task, j, (GDestroyNotify) job_unref);
  g_task_run_in_thread (task, worker);
}

SaccadeDistanceResult *
saccade_distance_task_run_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}
