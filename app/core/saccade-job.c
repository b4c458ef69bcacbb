/* saccade-job.c — a GTask in a worker with coalesced progress (saccade-job.h).
 *
 * The worker writes the fraction into an atomic int and queues an idle on the caller's
 * context only when none is pending; the idle reads the latest fraction. So a study that
 * reports after each of thousands of runs costs the main loop one callback per frame at
 * most, and the last fraction reported is the one shown. A count of steps travels as its
 * own pair of ints (saccade_job_progress_steps()), so the main loop gets the count exactly,
 * not a fraction rounded to PROGRESS_SCALE.
 */
#define G_LOG_DOMAIN "saccade-job"

#include "app/core/saccade-job.h"

#include "ui/widgets/saccade-background.h"
/* A fraction travels as an int of this many steps: finer than a progress bar's pixels. */
#define PROGRESS_SCALE 1000

struct _SaccadeJob {
  SaccadeJobFunc func;
  gpointer data;
  GDestroyNotify data_free;
  GDestroyNotify result_free;
  SaccadeJobProgress progress;          /* one of these two, or neither */
  SaccadeJobStepsProgress steps_progress;
  gpointer progress_data;
  GMainContext *context;
  char *name;
  GTask *task;       /* borrowed: the job lives as the task's data */
  /* The latest progress, done of total, written by the worker and read by the main loop
   * under progress_lock (a pair: two atomics could be read half old, half new). */
  GMutex progress_lock;
  int done, total;
  int idle_pending;  /* atomic: a progress callback is queued */
};

static void
job_free (SaccadeJob *job)
{
  if (job->data_free != NULL && job->data != NULL)
    job->data_free (job->data);
  g_main_context_unref (job->context);
  g_mutex_clear (&job->progress_lock);
  g_free (job->name);
  g_free (job);
}

static gboolean
progress_idle (gpointer data)
{
  GTask *task = data;
  SaccadeJob *job = g_task_get_task_data (task);
  GCancellable *cancellable = g_task_get_cancellable (task);
  int done, total;

  g_atomic_int_set (&job->idle_pending, 0);
  /* The caller that cancelled has moved on: its progress data may be gone. */
  if (g_task_get_completed (task)
      || (cancellable != NULL && g_cancellable_is_cancelled (cancellable)))
    return G_SOURCE_REMOVE;
  g_mutex_lock (&job->progress_lock);
  done = job->done;
  total = job->total;
  g_mutex_unlock (&job->progress_lock);
  if (job->steps_progress != NULL)
    job->steps_progress (job->progress_data, done, total);
  else if (job->progress != NULL)
    job->progress (job->progress_data, total > 0 ? (double) done / total : 0.0);
  return G_SOURCE_REMOVE;
}

void
saccade_job_progress_steps (SaccadeJob *job, int done, int total)
{
  g_mutex_lock (&job->progress_lock);
  job->done = CLAMP (done, 0, MAX (total, 0));
  job->total = MAX (total, 0);
  g_mutex_unlock (&job->progress_lock);
  if ((job->progress != NULL || job->steps_progress != NULL)
      && g_atomic_int_compare_and_exchange (&job->idle_pending, 0, 1))
    {
      g_autoptr (GSource) source = g_idle_source_new ();
      g_source_set_callback (source, progress_idle, g_object_ref (job->task), g_object_unref);
      g_source_set_name (source, job->name);
      g_source_attach (source, job->context);
    }
}

void
saccade_job_progress (SaccadeJob *job, double fraction)
{
  saccade_job_progress_steps (job, (int) (CLAMP (fraction, 0.0, 1.0) * PROGRESS_SCALE),
                              PROGRESS_SCALE);
}

void
saccade_job_report (double fraction, gpointer job)
{
  saccade_job_progress (job, fraction);
}

static void
job_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  SaccadeJob *job = task_data;
  GError *error = NULL;
  gpointer result;

  (void) source;
  result = job->func (job, job->data, cancellable, &error);
  if (result == NULL)
    {
      if (error == NULL) /* a bug in the job: say so rather than hang the caller */
        error = g_error_new (G_IO_ERROR, G_IO_ERROR_FAILED, "%s: no result and no error",
                             job->name);
      g_task_return_error (task, error);
      return;
    }
  g_task_return_pointer (task, result, job->result_free);
}

/* Both entry points: @progress or @steps_progress (or neither). */
static void
job_run_async (gpointer source_object, GCancellable *cancellable, gpointer source_tag,
               const char *name, SaccadeJobFunc func, gpointer data, GDestroyNotify data_free,
               GDestroyNotify result_free, SaccadeJobProgress progress,
               SaccadeJobStepsProgress steps_progress, gpointer progress_data,
               GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = NULL;
  SaccadeJob *job;

  task = g_task_new (source_object, cancellable, callback, user_data);
  g_task_set_source_tag (task, source_tag);
  g_task_set_name (task, name);
  /* The worker says what happened (saccade-job.h, "Cancellation"). */
  g_task_set_check_cancellable (task, FALSE);
  job = g_new0 (SaccadeJob, 1);
  job->func = func;
  job->data = data;
  job->data_free = data_free;
  job->result_free = result_free;
  job->progress = progress;
  job->steps_progress = steps_progress;
  job->progress_data = progress_data;
  g_mutex_init (&job->progress_lock);
  job->context = g_main_context_ref_thread_default ();
  job->name = g_strdup_printf ("[saccade] %s", name != NULL ? name : "job");
  job->task = task;
  g_task_set_task_data (task, job, (GDestroyNotify) job_free);
  saccade_background_run (task, job_thread);
}

void
saccade_job_cancel_clear (GCancellable **cancellable)
{
  if (*cancellable != NULL)
    g_cancellable_cancel (*cancellable);
  g_clear_object (cancellable);
}

void
saccade_job_run_async (gpointer source_object, GCancellable *cancellable, gpointer source_tag,
                       const char *name, SaccadeJobFunc func, gpointer data,
                       GDestroyNotify data_free, GDestroyNotify result_free,
                       SaccadeJobProgress progress, gpointer progress_data,
                       GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (func != NULL);
  job_run_async (source_object, cancellable, source_tag, name, func, data, data_free,
                 result_free, progress, NULL, progress_data, callback, user_data);
}

void
saccade_job_run_steps_async (gpointer source_object, GCancellable *cancellable,
                             gpointer source_tag, const char *name, SaccadeJobFunc func,
                             gpointer data, GDestroyNotify data_free,
                             GDestroyNotify result_free, SaccadeJobStepsProgress progress,
                             gpointer progress_data, GAsyncReadyCallback callback,
                             gpointer user_data)
{
  g_return_if_fail (func != NULL);
  job_run_async (source_object, cancellable, source_tag, name, func, data, data_free,
                 result_free, NULL, progress, progress_data, callback, user_data);
}

gpointer
saccade_job_finish (GAsyncResult *result, gpointer source_tag, GError **error)
{
  g_return_val_if_fail (G_IS_TASK (result), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == source_tag, NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

bool
saccade_progress_part_engine (void *user, double fraction)
{
  SaccadeProgressPart *p = user;

  if (p->progress != NULL)
    p->progress (MIN (1.0, p->base + p->span * fraction), p->user_data);
  return !g_cancellable_is_cancelled (p->cancellable);
}

bool
saccade_progress_part_count (void *part, size_t done, size_t total)
{
  return saccade_progress_part_engine (part, total > 0 ? (double) done / (double) total : 1.0);
}

void
saccade_progress_part_report (double fraction, gpointer part)
{
  saccade_progress_part_engine (part, fraction);
}
