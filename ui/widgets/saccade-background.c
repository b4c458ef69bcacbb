/* saccade-background.c — workers that yield the cores to the main loop
 * (saccade-background.h).
 *
 * Linux keeps a nice value per thread (setpriority(2), "BUGS": PRIO_PROCESS with a thread
 * id sets that thread's alone), and GTask's pool keeps its threads between tasks, so a
 * worker is lowered once and stays lowered; the check costs one getpriority() per task.
 * Raising a nice value needs no privilege. Where the calls fail (another kernel, a
 * sandbox), the worker runs at the priority it has: slower to yield, never wrong.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/widgets/saccade-background.h"

#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct {
  GTaskThreadFunc func;
} Work;

static int nice_increment; /* atomic; 0: off */

static GQuark
work_quark (void)
{
  return g_quark_from_static_string ("saccade-background-work");
}

void
saccade_background_set_nice (int increment)
{
  g_atomic_int_set (&nice_increment, CLAMP (increment, 0, 39));
}

static void
lower_priority (void)
{
  const int increment = g_atomic_int_get (&nice_increment);
  const id_t tid = (id_t) syscall (SYS_gettid);
  int base, now, want;

  if (increment == 0)
    return;
  /* -1 is a valid nice value: errno tells an error from it */
  errno = 0;
  base = getpriority (PRIO_PROCESS, (id_t) getpid ()); /* the main thread's */
  if (errno != 0)
    return;
  errno = 0;
  now = getpriority (PRIO_PROCESS, tid);
  if (errno != 0)
    return;
  want = MIN (base + increment, 19);
  if (now < want && setpriority (PRIO_PROCESS, tid, want) != 0)
    g_debug ("could not lower a worker's priority to nice %d: %s", want, g_strerror (errno));
}

static void
run_lowered (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  const Work *work = g_object_get_qdata (G_OBJECT (task), work_quark ());

  lower_priority ();
  work->func (task, source, task_data, cancellable);
}

void
saccade_background_run (GTask *task, GTaskThreadFunc func)
{
  Work *work = g_new (Work, 1);

  work->func = func;
  g_object_set_qdata_full (G_OBJECT (task), work_quark (), work, g_free);
  g_task_run_in_thread (task, run_lowered);
}
