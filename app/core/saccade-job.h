/* saccade-job.h — one background job: a GTask run in a worker thread, with a GCancellable
 * and progress coalesced onto the caller's main context (Sysprof's document loader is the
 * model). Every background task of the window uses it: studies, captures, the two-model
 * comparison, the distance matrix.
 *
 * Progress: the worker calls saccade_job_progress() as often as it likes; the main loop
 * sees at most one pending callback, which reports the latest fraction. A job that counts
 * steps (the capture's layers) reports them with saccade_job_progress_steps() and is
 * started with saccade_job_run_steps_async(): its callback gets the count itself, exactly.
 * No progress callback runs after the job's result is delivered, nor once its cancellable
 * is cancelled (the caller has moved on; its progress data may be gone).
 *
 * Cancellation: the worker decides. A job that saw the cancel returns
 * G_IO_ERROR_CANCELLED; one that finished first returns its result, which the caller gets
 * as such (the task does not turn a finished job into "cancelled" after the fact, so a
 * stored study is never reported as lost).
 *
 * Not here: what a job computes (saccade-study.h and the task files).
 */
#pragma once

#include <gio/gio.h>
#include <stdbool.h>

G_BEGIN_DECLS

/* A fraction done (0..1], called on the thread that computes. */
typedef void (*SaccadeProgress) (double fraction, gpointer user_data);

/* One part of a whole progress bar: the part's fractions f map to base + span · f of
 * @progress (may be NULL), and, given to the engine as its progress callback, a fired
 * @cancellable (may be NULL) becomes the engine's "stop". */
typedef struct {
  SaccadeProgress progress;
  gpointer user_data;
  GCancellable *cancellable;
  double base, span;
} SaccadeProgressPart;

/* @part's progress in the engine's shape (ScStudyProgressFn): false once cancelled. */
bool saccade_progress_part_engine (void *part, double fraction);
/* @part's progress for the engine's counting callbacks (@done of @total; none of none is
 * all): false once cancelled. */
bool saccade_progress_part_count (void *part, size_t done, size_t total);
/* @part's progress as a SaccadeProgress. */
void saccade_progress_part_report (double fraction, gpointer part);

/* A fraction done (0..1], called on the main context that started the job. */
typedef void (*SaccadeJobProgress) (gpointer user_data, double fraction);

/* Steps done of a total (0 <= done <= total), called on the main context that started
 * the job. */
typedef void (*SaccadeJobStepsProgress) (gpointer user_data, int done, int total);

typedef struct _SaccadeJob SaccadeJob;

/* The work, in a worker thread: returns the result (freed with the result_free given to
 * saccade_job_run_async if nobody takes it), or NULL with @error set. */
typedef gpointer (*SaccadeJobFunc) (SaccadeJob *job, gpointer data, GCancellable *cancellable,
                                    GError **error);

/* Runs @func (@data, owned: freed with @data_free after the task completes) in a worker.
 * @progress (may be NULL) is called on the thread-default main context with
 * @progress_data, which must stay valid until @callback runs. @source_tag tells
 * saccade_job_finish which call made the task; @name names its sources for profilers. */
void saccade_job_run_async (gpointer source_object, GCancellable *cancellable,
                            gpointer source_tag, const char *name, SaccadeJobFunc func,
                            gpointer data, GDestroyNotify data_free, GDestroyNotify result_free,
                            SaccadeJobProgress progress, gpointer progress_data,
                            GAsyncReadyCallback callback, gpointer user_data);

/* As saccade_job_run_async(), for a job that reports steps: @progress (may be NULL) gets
 * the latest (done, total) of saccade_job_progress_steps(). */
void saccade_job_run_steps_async (gpointer source_object, GCancellable *cancellable,
                                  gpointer source_tag, const char *name, SaccadeJobFunc func,
                                  gpointer data, GDestroyNotify data_free,
                                  GDestroyNotify result_free, SaccadeJobStepsProgress progress,
                                  gpointer progress_data, GAsyncReadyCallback callback,
                                  gpointer user_data);

/* Cancels *@cancellable (a job's, may be NULL) and drops the caller's reference: the job
 * it stood for is stopped and forgotten (its callback sees G_IO_ERROR_CANCELLED). */
void saccade_job_cancel_clear (GCancellable **cancellable);

/* The result (the caller's), or NULL with @error set. */
gpointer saccade_job_finish (GAsyncResult *result, gpointer source_tag, GError **error);

/* In the worker: the fraction done (clamped to 0..1). */
void saccade_job_progress (SaccadeJob *job, double fraction);

/* In the worker: @done steps of @total (clamped to 0..total). With a fraction callback
 * (saccade_job_run_async) the main loop gets done / total. */
void saccade_job_progress_steps (SaccadeJob *job, int done, int total);

/* saccade_job_progress() as a SaccadeProgress (@job as the user data). */
void saccade_job_report (double fraction, gpointer job);

G_END_DECLS
