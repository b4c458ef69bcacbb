/* window-driver.h — the window test (saccade-window-test.c): a scripted user that drives
 * the window through its actions and public API (window-driver.c), and what that user
 * waits for (window-timing.c). Test code: nothing here is in the saccade binary.
 */
#pragma once

#include "app/window/saccade-window.h"

G_BEGIN_DECLS

/* window-driver.c: plays the script @lines (one command a line; the driver takes them) on
 * @window, each once the window is idle. When the script ends, or a command fails, it
 * stores its verdict in *@status (0 passed, 1 failed) and quits the application. The
 * driver lives as long as @window. */
void window_driver_start (SaccadeWindow *window, char **lines, int *status);

/* window-timing.c: what the driver's "timed" and "expect-stall-below" measure. */
typedef struct _WindowTiming WindowTiming;
WindowTiming *window_timing_new (SaccadeWindow *window);
void window_timing_free (WindowTiming *timing); /* NULL is a no-op */
void window_timing_begin (WindowTiming *timing, const char *label);
gboolean window_timing_is_open (WindowTiming *timing);
void window_timing_end (WindowTiming *timing); /* prints the result */
gboolean window_timing_expect_stall_below (WindowTiming *timing, double limit_ms,
                                           GError **error);
gboolean window_timing_print_memory (const char *label, GError **error);

G_END_DECLS
