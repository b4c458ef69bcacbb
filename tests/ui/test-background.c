/* test-background.c — workers that yield to the main loop (ui/widgets/saccade-background.h):
 *
 *   - off (the default, and what the command line keeps): a worker runs at the nice value
 *     its thread had, and the task's function, source, data and result pass through;
 *   - on with 10: the worker's own nice value is the process's plus 10 while it runs, the
 *     main thread's stays where it was (Linux keeps a nice value per thread), and a pooled
 *     thread lowered once is not lowered again (still the process's plus 10, not plus 20);
 *   - on with an increment past the scale: capped at 19.
 * Each check reads getpriority(2) of the thread itself, from inside the worker.
 */
#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ui/widgets/saccade-background.h"

static int
thread_nice (void)
{
  int v;

  errno = 0;
  v = getpriority (PRIO_PROCESS, (id_t) syscall (SYS_gettid));
  g_assert_cmpint (errno, ==, 0);
  return v;
}

static void
report_nice (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  g_assert_true (source == task_data); /* the source and the data reach the function */
  g_task_return_int (task, thread_nice ());
}

static void
done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GError *error = NULL;
  int *out = user_data;

  *out = (int) g_task_propagate_int (G_TASK (result), &error);
  g_assert_no_error (error);
}

/* The nice value a worker started now reports from inside. */
static int
worker_nice (void)
{
  g_autoptr (GObject) source = g_object_new (G_TYPE_OBJECT, NULL);
  int got = G_MININT;
  GTask *task = g_task_new (source, NULL, done, &got);

  g_task_set_task_data (task, source, NULL);
  saccade_background_run (task, report_nice);
  g_object_unref (task);
  while (got == G_MININT)
    g_main_context_iteration (NULL, TRUE);
  return got;
}

static void
test_background_nice (void)
{
  const int main_nice = thread_nice ();
  const int want = MIN (main_nice + 10, 19);
  int i;

  /* off: as the thread was (the pool's threads are made from this one, at its value) */
  saccade_background_set_nice (0);
  g_assert_cmpint (worker_nice (), ==, main_nice);

  /* on: the process's value plus 10, every time, however often a thread is reused */
  saccade_background_set_nice (10);
  for (i = 0; i < 8; i++)
    g_assert_cmpint (worker_nice (), ==, want);
  g_assert_cmpint (thread_nice (), ==, main_nice); /* the main thread is untouched */

  /* past the scale: capped at 19 */
  saccade_background_set_nice (39);
  g_assert_cmpint (worker_nice (), ==, 19);
  saccade_background_set_nice (0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/background/nice", test_background_nice);
  return g_test_run ();
}
