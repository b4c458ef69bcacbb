/* saccade-study-jobs.h — SaccadeStudyJobs, the life of a study page's background jobs, once
 * for the Ablation page, the Attribution page and its Adversarial view: the job Run starts
 * (one at a time; its progress on the page's bar and status line, coalesced by
 * app/core/saccade-job.h; Cancel), the lookups of stored studies that showing a run starts
 * (any number at once), and the status line they write. A page asks the study's own
 * `_async` function for the work with the cancellable this gives it, and hands the
 * GAsyncResult back here first: a result of a job or lookup that was stopped or replaced
 * (another run, model, database or request) is to be dropped.
 *
 * The helper shows the progress bar and the Cancel button while a job runs; the page keeps
 * its own choosers' sensitivity. Properties (read-only, notified): "status" (the status
 * line), "fraction" (of the running job, 0 when none), "running" (a job runs), "busy" (a job
 * or a lookup runs). Main thread only.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SACCADE_TYPE_STUDY_JOBS (saccade_study_jobs_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeStudyJobs, saccade_study_jobs, SACCADE, STUDY_JOBS, GObject)

/* The status line's text while a job runs: @fraction done, < 0 before the first report.
 * Caller frees. */
typedef char *(*SaccadeStudyProgressText) (gpointer owner, double fraction);

/* The page's status label, progress bar and Cancel button (borrowed: children of the page,
 * which owns the helper). */
SaccadeStudyJobs *saccade_study_jobs_new (GtkLabel *status, GtkProgressBar *bar,
                                          GtkWidget *cancel_button);

/* Starts a job: its cancellable (borrowed; NULL when one already runs). @text says the
 * progress with @owner. */
GCancellable *saccade_study_jobs_start (SaccadeStudyJobs *self, SaccadeStudyProgressText text,
                                        gpointer owner);
/* The job's progress callback (SaccadeJobProgress): the bar and the status line; ignored
 * when no job runs. */
void saccade_study_jobs_progress (gpointer self, double fraction);
/* TRUE when @result is the running job's: the job is over (bar and Cancel hidden). FALSE:
 * drop it. */
gboolean saccade_study_jobs_finish_job (SaccadeStudyJobs *self, GAsyncResult *result);
/* Cancel, as its button does: the running job, if any, stops at its next check. */
void saccade_study_jobs_cancel (SaccadeStudyJobs *self);

/* Starts a lookup: the cancellable all running lookups share (borrowed). */
GCancellable *saccade_study_jobs_lookup (SaccadeStudyJobs *self);
/* TRUE when @result is a running lookup's (one fewer runs). FALSE: drop it. */
gboolean saccade_study_jobs_finish_lookup (SaccadeStudyJobs *self, GAsyncResult *result);
/* Lookups still running. */
int saccade_study_jobs_get_lookups (SaccadeStudyJobs *self);

/* Stops the job and every lookup (their results will be dropped). */
void saccade_study_jobs_stop (SaccadeStudyJobs *self);

gboolean saccade_study_jobs_get_running (SaccadeStudyJobs *self);
gboolean saccade_study_jobs_get_busy (SaccadeStudyJobs *self);
double saccade_study_jobs_get_fraction (SaccadeStudyJobs *self);
/* The status line: borrowed. */
const char *saccade_study_jobs_get_status (SaccadeStudyJobs *self);
void saccade_study_jobs_set_status (SaccadeStudyJobs *self, const char *text);

/* Notifies @owner's @status and @fraction properties (read-only ones of a page, which reads
 * them here) whenever this helper's change. */
void saccade_study_jobs_forward (SaccadeStudyJobs *self, GObject *owner, GParamSpec *status,
                                 GParamSpec *fraction);

G_END_DECLS
