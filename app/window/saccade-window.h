/* saccade-window.h — Saccade's main window: the model, a sentence and Run in the header
 * bar, the stored runs in a sidebar, the Heatmap, Model and Lines pages, a status line.
 * DESIGN.md ("The window") describes it; saccade-window-private.h lists its parts.
 *
 * What a user does is a win.* action (saccade-window-actions.c: win.run, win.cancel,
 * win.delete-run, win.show-page, win.show-head, ...) or a page.* action of a page; the
 * functions here are what the window shows and what it does without a dialog, for the
 * application and for the tests that drive the window (tests/app/window-driver.c). None
 * of them exists for the tests alone: each is what a user sees or does on screen.
 */
#pragma once

#include <adwaita.h>

#include "app/window/pages/saccade-page.h"
#include "app/window/saccade-prompt-popover.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_WINDOW (saccade_window_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeWindow, saccade_window, SACCADE, WINDOW, AdwApplicationWindow)

/* A window on the capture database @db_path (NULL: the default one, or the last opened)
 * running the model @model_path (NULL: the last used, else the default model). */
SaccadeWindow *saccade_window_new (AdwApplication *application, const char *db_path,
                                   const char *model_path);

/* The model and the database: what File > Open Model… and Open Database… do once a file
 * is chosen. */
void saccade_window_set_model_path (SaccadeWindow *self, const char *path);
void saccade_window_set_database (SaccadeWindow *self, const char *path);
/* What Run does (win.run): captures the sentence in the header bar. */
void saccade_window_run (SaccadeWindow *self);
/* TRUE while anything runs in the background (model, capture, list, load, delete, or a
 * page's own job: SaccadePage.is_busy). */
gboolean saccade_window_is_busy (SaccadeWindow *self);
gboolean saccade_window_is_capturing (SaccadeWindow *self);

/* The header bar: the sentence entry's text, and the prompt editor (its popover) shown or
 * hidden, borrowed. */
const char *saccade_window_get_sentence (SaccadeWindow *self);
void saccade_window_set_sentence (SaccadeWindow *self, const char *text);
SaccadePromptPopover *saccade_window_get_prompt_editor (SaccadeWindow *self);
void saccade_window_show_prompt_editor (SaccadeWindow *self, gboolean shown);
/* The backend badge (a GtkLabel: "CPU" or a GPU's name, the reason in its tooltip). */
GtkWidget *saccade_window_get_backend_badge (SaccadeWindow *self);

/* The sidebar: every stored run (SaccadeRunItem, newest first), those the search lets
 * through, the search text typed, and the selected run (0: none). Borrowed. */
GListModel *saccade_window_get_runs (SaccadeWindow *self);
GListModel *saccade_window_get_runs_shown (SaccadeWindow *self);
void saccade_window_set_search (SaccadeWindow *self, const char *text);
void saccade_window_runs_select (SaccadeWindow *self, gint64 run_id);
gint64 saccade_window_runs_selected_id (SaccadeWindow *self);

/* The status line's text and its progress bar's fraction (0 when hidden). Borrowed. */
const char *saccade_window_get_status (SaccadeWindow *self);
double saccade_window_get_progress (SaccadeWindow *self);
/* The last error shown (in a toast or a dialog) since Run was last pressed, as "title:
 * message"; NULL if none. Borrowed. */
const char *saccade_window_get_last_error (SaccadeWindow *self);
/* Hides the last toast shown, if it is still up. */
void saccade_window_dismiss_toast (SaccadeWindow *self);

/* The pages: the one shown in the view stack, the one called @page_id ("heatmap",
 * "model", "lines", ...; NULL if none), the shown one's id, showing one (win.show-page).
 * Borrowed. */
SaccadePage *saccade_window_get_visible_page (SaccadeWindow *self);
SaccadePage *saccade_window_get_page (SaccadeWindow *self, const char *page_id);
const char *saccade_window_get_visible_page_id (SaccadeWindow *self);
void saccade_window_show_page (SaccadeWindow *self, const char *page_id);
/* The cursor every page shares (SaccadePage:layer and :head). */
int saccade_window_get_layer (SaccadeWindow *self);
int saccade_window_get_head (SaccadeWindow *self);
void saccade_window_select_head (SaccadeWindow *self, int layer, int head);
/* The visible page's figure title, as on screen. Caller frees. */
char *saccade_window_dup_figure_title (SaccadeWindow *self);

/* File > Export Figure… and Export CSV… once the file is chosen (by its extension: .png,
 * .svg, .pdf; .csv). FALSE with @error set when the page has nothing to export or the
 * file cannot be written. */
gboolean saccade_window_export_figure_to (SaccadeWindow *self, const char *path, GError **error);
/* The figure options Export Figure's dialog kept (saccade-window-export-dialog.c), used by
 * every page's figure export; NULL before the first answer: the natural size. _set keeps a
 * copy. */
const SaccadeFigureExportOptions *saccade_window_get_export_options (SaccadeWindow *self);
void saccade_window_set_export_options (SaccadeWindow *self,
                                        const SaccadeFigureExportOptions *opts);
gboolean saccade_window_export_csv_to (SaccadeWindow *self, const char *path, GError **error);

G_END_DECLS
