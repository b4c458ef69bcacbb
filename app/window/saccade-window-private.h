/* saccade-window-private.h — the main window's parts, shared by the files that implement it:
 *
 *   saccade-window.c          lifetime, settings, the model, the status line, errors, and
 *                             the pages (SaccadePage, app/window/pages/): adding them,
 *                             handing them the run, asking the visible one
 *   saccade-window-capture.c  capturing the sentence: Run, Cancel, progress, the sample
 *   saccade-window-runs.c     the sidebar: listing, searching, selecting, deleting runs
 *   saccade-window-actions.c  the win.* actions and which of them are enabled
 *   saccade-window-export.c   figures (PNG/SVG/PDF) and data (CSV) to files
 *   saccade-window-watch.c    runs other processes add to the open database
 *   saccade-window-models.c   the model menu's fetched models and win.use-model
 *   saccade-window-targets.c  the target and contrast chosen in the predictions panel
 *
 * What other code may use (the application, the tests in tests/app/) is in
 * saccade-window.h; this header is for these files only.
 */
#pragma once

#include "app/core/saccade-capture-task.h"
#include "app/core/saccade-run.h"
#include "app/window/pages/saccade-page.h"
#include "app/window/saccade-prompt-popover.h"
#include "app/window/saccade-window.h"
#include "ui/figures/saccade-colormap.h"
#include "ui/widgets/saccade-predictions-view.h"

G_BEGIN_DECLS

struct _SaccadeWindow
{
  AdwApplicationWindow parent_instance;

  /* Template widgets */
  AdwToastOverlay *toast_overlay;
  AdwHeaderBar *header_bar;
  GtkToggleButton *sidebar_button;
  GtkMenuButton *model_button;
  GtkLabel *model_label;
  GtkWidget *model_warning;
  GtkEntry *sentence_entry;
  GtkMenuButton *prompt_button;
  SaccadePromptPopover *prompt_popover; /* the whole prompt and the capture's options */
  GtkStack *run_stack;
  GtkLabel *backend_label;
  AdwFlap *flap;
  GtkSearchEntry *search_entry;
  GtkListBox *runs_list;
  GtkStack *content_stack;
  AdwViewStack *view_stack;
  SaccadePredictionsView *predictions_view;
  GtkLabel *status_label;
  GtkProgressBar *progress_bar;
  GtkWidget *status_cancel_button;

  /* Owned */
  GSettings *settings;
  GCancellable *cancellable;         /* the window's lifetime: cancelled in dispose */
  GPtrArray *pages;                  /* SaccadePage, in view_stack's order */
  char *db_path;                     /* the open capture database */
  char *model_path;                  /* the model the next run uses */
  SaccadeLoadedModel *model;         /* loaded from model_path, or NULL */
  GCancellable *model_cancellable;   /* non-NULL while a model loads */
  GError *model_error;               /* why model_path did not load, or NULL */
  gboolean backend_stale;            /* the Backend preference changed during a capture:
                                      * reload the model once it ends */
  char *queued_text;                 /* Run pressed while the model was loading */
  GCancellable *capture_cancellable; /* non-NULL while capturing */
  GtkWidget *large_run_dialog;       /* the question before a large run, while it is open */
  GListStore *runs;                  /* SaccadeRunItem, newest first */
  GtkFilter *runs_filter;            /* the search */
  GtkFilterListModel *runs_shown;    /* runs through runs_filter: what the sidebar lists */
  guint listing;                     /* list jobs in flight */
  gint64 select_after_list;          /* run to select when the list arrives (0: keep) */
  char *search_needle;               /* casefolded search text, or NULL */
  SaccadeRun *run;                   /* the run shown, or NULL */
  GCancellable *run_cancellable;     /* non-NULL while a run loads */
  gint64 loading_run_id;
  gint64 open_after_load;            /* win.show-run-head: open a head once this run loads */
  int open_layer, open_head;
  guint deleting;                    /* delete jobs in flight */
  char *export_dir;                  /* where the last export went, or NULL */
  char *last_error;                  /* the last error shown since Run, or NULL */
  gboolean models_listed;            /* the model menu has its fetched-models section */
  AdwToast *last_toast;              /* the last toast shown */
  gpointer db_watch;                 /* saccade-window-watch.c's state, or NULL */
  int predictions_first;             /* the panel's first row in run->predicted_*, or -1 */
};

/* saccade-window.c */
void saccade_window_show_error (SaccadeWindow *self, const char *title, const GError *error);

void saccade_window_toast (SaccadeWindow *self, const char *message);
void saccade_window_set_status (SaccadeWindow *self, const char *text);
/* The status line from the window's state (the run shown, the model loading, ...). */
void saccade_window_update_status (SaccadeWindow *self);
/* The Backend preference changed: loads the model again over the new backend, now, or
 * once the capture that uses the current one ends (as Open Model waits for it). */
void saccade_window_backend_changed (SaccadeWindow *self);

/* saccade-window.c: the pages. The window knows them through SaccadePage only. */
/* Shows @run on every page (NULL: the empty page). */
void saccade_window_set_run (SaccadeWindow *self, SaccadeRun *run);
/* The figures' choices, from the settings (the pages and Preferences write them). */
void saccade_window_get_figure_settings (SaccadeWindow *self, SaccadeColormap *colormap,
                                         SaccadeScale *scale, SaccadeMetric *metric);

/* saccade-window-capture.c */
/* Captures @text with the loaded model (there must be one, and no capture running). */
void saccade_window_start_capture (SaccadeWindow *self, const char *text);
void saccade_window_cancel (SaccadeWindow *self);
/* On a first start (nothing stored, the default model) runs the sample sentence. */
void saccade_window_maybe_run_sample (SaccadeWindow *self, guint n_runs);

/* saccade-window-runs.c */
void saccade_window_runs_init (SaccadeWindow *self);
void saccade_window_runs_reload (SaccadeWindow *self, gint64 select_id);
void saccade_window_runs_delete_selected (SaccadeWindow *self);
void saccade_window_runs_focus_search (SaccadeWindow *self);

/* saccade-window-actions.c */
void saccade_window_actions_init (SaccadeWindow *self);
/* Head (@layer, @head) of the run shown, in the Heatmap page, with the keyboard there. */
void saccade_window_open_head (SaccadeWindow *self, int layer, int head);
/* Enables or disables every win.* action from the window's state. The one place that does. */
void saccade_window_update_actions (SaccadeWindow *self);

/* saccade-window-models.c */
/* Adds win.use-model and the model menu's fetched-models section (read again each time the
 * menu opens). After saccade_window_actions_init. */
void saccade_window_models_init (SaccadeWindow *self);
/* Sets win.use-model's state to the model path, so the menu marks the model in use. */
void saccade_window_models_sync (SaccadeWindow *self);
/* saccade-window-targets.c: win.target and win.contrast, chosen in the predictions panel
 * and handed to the pages (that file's top comment). */
void saccade_window_targets_init (SaccadeWindow *self);
/* Marks the panel's rows that are the target and the contrast (after the panel changed). */
void saccade_window_targets_mark (SaccadeWindow *self);

/* saccade-window-export.c */
void saccade_window_export_figure (SaccadeWindow *self);
void saccade_window_export_csv (SaccadeWindow *self);

/* saccade-window-export-dialog.c: Export Figure's options (size, dpi, font, title, token
 * labels), asked before the file name; @done runs on "export" after the answer is kept. The
 * kept options (NULL before the first answer) are what the figure export uses. */
typedef void (*SaccadeWindowExportDone) (SaccadeWindow *self);
GtkWidget *saccade_window_export_dialog_new (SaccadeWindow *self, SaccadeWindowExportDone done);


/* saccade-window-watch.c: runs other processes add to the open database. _sync: (re)starts
 * watching db_path and records its state now (every list of the runs calls it first);
 * _stop: stops (dispose). */
void saccade_window_watch_sync (SaccadeWindow *self);
void saccade_window_watch_stop (SaccadeWindow *self);

G_END_DECLS
