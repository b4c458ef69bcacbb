/* test-job.c — app/core/saccade-job: a worker's result reaches the caller whatever its
 * source object, progress is coalesced onto the caller's main context and never arrives
 * after the result nor after a Cancel, a job that finished before Cancel keeps its result,
 * a job that returns nothing without saying why still fails with an error, and a job that
 * counts steps hands the main loop its exact counts. */
#include <gio/gio.h>

#include "app/core/saccade-job.h"

typedef struct {
  GMainLoop *loop;
  GAsyncResult *result;
  int progress_calls;
  double last_fraction;
  gboolean progress_after_result;
  gboolean done;
} Wait;

static void
on_progress (gpointer user_data, double fraction)
{
  Wait *w = user_data;

  w->progress_calls++;
  w->last_fraction = fraction;
  if (w->done)
    w->progress_after_result = TRUE;
}

static void
on_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Wait *w = user_data;

  (void) source;
  w->result = g_object_ref (result);
  w->done = TRUE;
  g_main_loop_quit (w->loop);
}

/* Reports 1000 fractions, then returns 42 (or NULL when asked to, with no error). */
static gpointer
count_job (SaccadeJob *job, gpointer data, GCancellable *cancellable, GError **error)
{
  const gboolean fail_silently = GPOINTER_TO_INT (data);

  (void) cancellable, (void) error;
  for (int i = 1; i <= 1000; i++)
    saccade_job_progress (job, i / 1000.0);
  return fail_silently ? NULL : g_memdup2 (&(int) { 42 }, sizeof (int));
}

static gpointer
run (gpointer source, gboolean fail_silently, gboolean cancel_first, Wait *w, GError **error)
{
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();

  w->loop = g_main_loop_new (NULL, FALSE);
  saccade_job_run_async (source, cancellable, run, "test job", count_job,
                         GINT_TO_POINTER (fail_silently), NULL, g_free, on_progress, w,
                         on_done, w);
  if (cancel_first)
    g_cancellable_cancel (cancellable); /* the job ignores it: it finishes anyway */
  g_main_loop_run (w->loop);
  g_main_loop_unref (w->loop);
  {
    gpointer r = saccade_job_finish (w->result, run, error);
    /* a progress idle queued before the result must not run after it */
    while (g_main_context_iteration (NULL, FALSE))
      ;
    g_clear_object (&w->result);
    return r;
  }
}

static void
test_result_with_source (void)
{
  g_autoptr (GObject) source = g_object_new (G_TYPE_OBJECT, NULL);
  g_autoptr (GError) error = NULL;
  Wait w = { 0 };
  g_autofree int *r = run (source, FALSE, FALSE, &w, &error);

  g_assert_no_error (error);
  g_assert_nonnull (r);
  g_assert_cmpint (*r, ==, 42);
  /* coalesced: far fewer calls than reports, and none after the result */
  g_assert_cmpint (w.progress_calls, <, 1000);
  g_assert_false (w.progress_after_result);
}

static void
test_finished_before_cancel (void)
{
  g_autoptr (GError) error = NULL;
  Wait w = { 0 };
  g_autofree int *r = run (NULL, FALSE, TRUE, &w, &error);

  g_assert_no_error (error);
  g_assert_nonnull (r);
  g_assert_cmpint (*r, ==, 42);
  /* cancelled before the main loop ran: no progress reaches the caller who moved on */
  g_assert_cmpint (w.progress_calls, ==, 0);
}

typedef struct {
  Wait wait;
  int calls, last_done, last_total;
} StepsWait;

static void
on_steps (gpointer user_data, int done, int total)
{
  StepsWait *w = user_data;

  g_assert_cmpint (done, >=, w->last_done);
  g_assert_cmpint (done, <=, total);
  w->calls++;
  w->last_done = done;
  w->last_total = total;
  if (w->wait.done)
    w->wait.progress_after_result = TRUE;
}

/* Reports 3030 steps (a capture of 30 layers with 100 generated tokens): finer than a
 * fraction's resolution, so a count that came back through one would be off. */
static gpointer
steps_job (SaccadeJob *job, gpointer data, GCancellable *cancellable, GError **error)
{
  (void) data, (void) cancellable, (void) error;
  for (int i = 1; i <= 3030; i++)
    saccade_job_progress_steps (job, i, 3030);
  return g_memdup2 (&(int) { 7 }, sizeof (int));
}

static void
test_steps (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree int *r = NULL;
  StepsWait w = { 0 };

  w.wait.loop = g_main_loop_new (NULL, FALSE);
  saccade_job_run_steps_async (NULL, NULL, test_steps, "steps job", steps_job, NULL, NULL,
                               g_free, on_steps, &w, on_done, &w.wait);
  g_main_loop_run (w.wait.loop);
  g_main_loop_unref (w.wait.loop);
  r = saccade_job_finish (w.wait.result, test_steps, &error);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_clear_object (&w.wait.result);
  g_assert_no_error (error);
  g_assert_cmpint (*r, ==, 7);
  g_assert_cmpint (w.calls, <, 3030);
  g_assert_false (w.wait.progress_after_result);
  /* whatever count was shown last is an exact one of the job's */
  g_assert_true (w.calls == 0 || w.last_total == 3030);
}

static void
test_silent_failure (void)
{
  g_autoptr (GError) error = NULL;
  Wait w = { 0 };
  gpointer r = run (NULL, TRUE, FALSE, &w, &error);

  g_assert_null (r);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "test job"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/job/result-with-source", test_result_with_source);
  g_test_add_func ("/job/finished-before-cancel", test_finished_before_cancel);
  g_test_add_func ("/job/silent-failure", test_silent_failure);
  g_test_add_func ("/job/steps", test_steps);
  return g_test_run ();
}
