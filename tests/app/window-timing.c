/* window-timing.c — what a user waits for, measured by the window test's driver: the time
 * from a command (selecting a run, changing page or layer) until the window is idle again
 * with the new figure's data handed to its widgets, and the longest stall of the main loop
 * in that time.
 *
 * The stall monitor is a 5 ms timeout at high priority: GLib dispatches it late by as long
 * as the main loop was busy elsewhere (a handler, a snapshot, rendering a frame), so the
 * largest lateness of its beats is the longest stall, to within its period. "Ready" is the
 * first beat at which saccade_window_is_busy() is false after the command ran (the command
 * runs synchronously at the start, so anything it starts — a load, a head read — is busy
 * by then). The frame that shows the result is painted after that; its cost shows as a
 * stall if it is long. Both run only while a measurement is open, so scripts that do not
 * ask for them are untouched.
 *
 * It hooks in from outside the product: a main-loop source of its own, and the window's
 * public saccade_window_is_busy(). Driver commands (window-driver.c):
 *   timed LABEL COMMAND...   run COMMAND now and, before the next command, print
 *                            "test-driver: time LABEL: ready after X ms, longest main-loop
 *                            stall Y ms"
 *   expect-stall-below MS    the last measurement's longest stall was below MS
 *   memory LABEL             print the process's peak and current resident memory
 *                            ("test-driver: memory LABEL: peak X MiB, now Y MiB", from
 *                            /proc/self/status)
 */
#define G_LOG_DOMAIN "saccade-window-test"

#include "tests/app/window-driver.h"

#include <stdlib.h>
#include <string.h>

/* The stall monitor's period: well below the 100 ms a stall may last (DESIGN.md). */
#define BEAT_MS 5

struct _WindowTiming {
  SaccadeWindow *window;  /* borrowed */
  gint64 t0;              /* time-begin, monotonic us; 0: not measuring */
  gint64 ready_at;        /* the first idle beat after t0, or 0 */
  char *label;
  gint64 last_beat;
  gint64 max_stall;       /* us */
  gint64 last_stall;      /* of the last finished measurement, us */
  guint beat_id;
};

static gboolean
beat (gpointer data)
{
  WindowTiming *t = data;
  gint64 now = g_get_monotonic_time ();
  gint64 late = now - t->last_beat - BEAT_MS * 1000;

  if (late > t->max_stall)
    t->max_stall = late;
  t->last_beat = now;
  if (t->ready_at == 0 && !saccade_window_is_busy (t->window))
    t->ready_at = now;
  return G_SOURCE_CONTINUE;
}

static void
stop (WindowTiming *t)
{
  g_clear_handle_id (&t->beat_id, g_source_remove);
  g_clear_pointer (&t->label, g_free);
  t->t0 = 0;
}

WindowTiming *
window_timing_new (SaccadeWindow *window)
{
  WindowTiming *t = g_new0 (WindowTiming, 1);

  t->window = window;
  return t;
}

void
window_timing_free (WindowTiming *t)
{
  if (t == NULL)
    return;
  stop (t);
  g_free (t);
}

void
window_timing_begin (WindowTiming *t, const char *label)
{
  stop (t);
  t->label = g_strdup (label);
  t->t0 = t->last_beat = g_get_monotonic_time ();
  t->ready_at = 0;
  t->max_stall = 0;
  t->beat_id = g_timeout_add_full (G_PRIORITY_HIGH, BEAT_MS, beat, t, NULL);
}

gboolean
window_timing_is_open (WindowTiming *t)
{
  return t->t0 != 0;
}

void
window_timing_end (WindowTiming *t)
{
  gint64 t0 = t->t0;

  if (t0 == 0)
    return;
  beat (t); /* a stall still going on counts too */
  t->last_stall = t->max_stall;
  g_print ("test-driver: time %s: ready after %.0f ms, longest main-loop stall %.0f ms\n",
           t->label, (t->ready_at - t0) / 1000.0, t->last_stall / 1000.0);
  stop (t);
}

gboolean
window_timing_expect_stall_below (WindowTiming *t, double limit_ms, GError **error)
{
  if (t->last_stall / 1000.0 < limit_ms)
    return TRUE;
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "the main loop stalled for %.0f ms "
               "(expected below %.0f ms)", t->last_stall / 1000.0, limit_ms);
  return FALSE;
}

/* VmHWM and VmRSS of /proc/self/status, in kB; FALSE where there is no such file. */
static gboolean
read_memory (gint64 *peak_kb, gint64 *now_kb)
{
  g_autofree char *status = NULL;
  const char *p;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return FALSE;
  if ((p = strstr (status, "VmHWM:")) == NULL)
    return FALSE;
  *peak_kb = g_ascii_strtoll (p + 6, NULL, 10);
  if ((p = strstr (status, "VmRSS:")) == NULL)
    return FALSE;
  *now_kb = g_ascii_strtoll (p + 6, NULL, 10);
  return TRUE;
}

gboolean
window_timing_print_memory (const char *label, GError **error)
{
  gint64 peak = 0, now = 0;

  if (!read_memory (&peak, &now))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           "no VmHWM/VmRSS in /proc/self/status");
      return FALSE;
    }
  g_print ("test-driver: memory %s: peak %.0f MiB, now %.0f MiB\n", label != NULL ? label : "",
           peak / 1024.0, now / 1024.0);
  return TRUE;
}
