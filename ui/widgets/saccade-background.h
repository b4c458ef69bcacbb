/* saccade-background.h — running a GTask's work in a worker thread that yields the cores to
 * the window's main loop.
 *
 * On a machine with as many busy workers as cores, a worker at the main thread's priority
 * takes its share of the cores from the thread that draws the window: selecting a long run
 * starts a dozen lookups at once (stored studies, overviews, rows), and on two cores the
 * main loop got a third of a core while they ran (docs/benchmarks.md, "Long runs in the
 * window"). With saccade_background_set_nice() the window gives every worker it starts a
 * higher nice value, so a worker still gets an idle core but no longer competes on equal
 * terms with the frame being drawn. The command line never sets it: a worker there is the
 * only work, and its timings are set against peers at the default priority.
 */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Workers started by saccade_background_run() from now on lower their own priority to the
 * process's nice value plus @increment (0, the default: they keep the priority they have;
 * capped at 19). Call it once, from the main thread, before the first worker starts. */
void saccade_background_set_nice (int increment);

/* g_task_run_in_thread (@task, @func), with the worker's priority lowered first as
 * saccade_background_set_nice() asked. */
void saccade_background_run (GTask *task, GTaskThreadFunc func);

G_END_DECLS
