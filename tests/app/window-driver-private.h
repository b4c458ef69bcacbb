/* window-driver-private.h — what the scripted user's files share (tests/app/window-driver.c
 * plays the script; window-driver-pages.c holds the commands of the study pages: Induction,
 * Ablation, Attribution and its adversarial view, Learn). Test code only.
 */
#pragma once

#include <gtk/gtk.h>

#include "tests/app/window-driver.h"

G_BEGIN_DECLS

typedef struct {
  SaccadeWindow *window; /* borrowed: the window owns the driver (object data) */
  int *status;           /* where the verdict goes (saccade-window-test.c's) */
  char **lines;
  guint next;            /* index of the next line */
  guint settle;          /* ticks left before the next command */
  gint64 waiting_since;
  guint source_id;
  gboolean cancel_on_progress; /* press Cancel once the capture reports a layer */
  gboolean cancel_ablation;    /* press the Ablation page's Cancel once it reports progress */
  gboolean cancel_attribution; /* the same on the Attribution page */
  gboolean cancel_adversarial; /* the same on its adversarial view */
  gboolean cancel_faith_file;  /* the same in the prompt-set window */
  int noted_width;             /* note-width: the window's width then (0: none noted) */
  GType shot_type;       /* a dialog to screenshot on the next tick, or 0 */
  char *shot_path;
  WindowTiming *timing; /* time-begin, time-end, expect-stall-below */
  int wait_runs;         /* wait-runs: the runs to wait for, or -1 */
  gint64 wait_deadline;  /* wait-runs: monotonic time to give up at */
} SaccadeTestDriver;

/* Says "test-driver: line N: MESSAGE" on stderr, ends the script with status 1 and returns
 * FALSE (a command's verdict). */
gboolean window_driver_fail (SaccadeTestDriver *d, const char *format, ...) G_GNUC_PRINTF (2, 3);

/* A page's (or view's) read-only "status" property (caller frees) and its "fraction". */
char *window_driver_dup_status (gpointer object);
double window_driver_get_fraction (gpointer object);

/* The Attribution page's adversarial view, turned to (a new reference), or NULL. */
GtkWidget *window_driver_adversarial_view (SaccadeTestDriver *d);

/* The study pages' commands (the list at the top of window-driver.c): TRUE when the command
 * ran and its expectation held, else window_driver_fail()'s FALSE. */
gboolean window_driver_induction_command (SaccadeTestDriver *d, const char *cmd, const char *a1,
                                          const char *a2, const char *rest);
gboolean window_driver_attribution_command (SaccadeTestDriver *d, const char *cmd,
                                            const char *a1, const char *rest);
gboolean window_driver_learn_command (SaccadeTestDriver *d, const char *cmd, const char *a1,
                                      const char *rest);
gboolean window_driver_adversarial_command (SaccadeTestDriver *d, const char *cmd,
                                            const char *a1, const char *a2);
/* window-driver-widgets.c: expect-named, print-named, note-width, expect-width-unchanged,
 * window-size, expect-menu; and dialog-set, expect-dialog, expect-dialog-run on @dialog (the open
 * message dialog, or NULL). */
gboolean window_driver_widget_command (SaccadeTestDriver *d, const char *cmd, const char *a1,
                                       const char *a2, const char *rest);
gboolean window_driver_dialog_command (SaccadeTestDriver *d, GtkWindow *dialog, const char *cmd,
                                       const char *a1, const char *a2, const char *rest);
gboolean window_driver_ablation_command (SaccadeTestDriver *d, const char *cmd, const char *a1,
                                         const char *rest);
/* window-driver-pages.c: the prompt-set window's commands, and whether its study runs (the
 * script waits for it as for the window). */
gboolean window_driver_faith_file_command (SaccadeTestDriver *d, const char *cmd, const char *a1,
                                           const char *a2, const char *rest);
gboolean window_driver_faith_file_busy (void);
/* Presses the prompt-set window's Cancel once its study reports progress (clears
 * cancel_faith_file then). */
void window_driver_faith_file_cancel_on_progress (SaccadeTestDriver *d);

G_END_DECLS
