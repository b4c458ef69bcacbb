/* test-job.c — app/core/saccade-job: a worker's result reaches the caller whatever its
 * source object, progress is coalesced onto the caller's main context and never arrives
 * after the result, a job that finished before Cancel keeps its result, and a job that
 * returns nothing without saying why still fails with an error. */
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
  return g_test_run ();
}
