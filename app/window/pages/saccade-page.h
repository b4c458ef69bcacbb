/* saccade-page.h — SaccadePage, the base widget of every page of the main window (Heatmap,
 * Model, Lines, and the analysis pages to come). The window knows its pages only through
 * this class: it adds them to its AdwViewStack under their page id, title and icon, hands
 * each the run it shows, and asks the visible one for its figure's title and its cursor.
 *
 * What every page has, and the base class keeps:
 *   - page-id, title, icon-name: the view stack's name, label and icon for the page
 *     (set in the subclass's template);
 *   - settings: the application's GSettings (construct-only), where pages keep the choices
 *     the Preferences window also edits (colour map, scale, metric);
 *   - the run shown (a SaccadeRun, app/core/saccade-run.h, or NULL) and the set_run hook;
 *   - the cursor: one layer and one head, "the head the user is looking at". A page that
 *     shows one head or one layer follows it; the window binds every page's cursor
 *     together, so stepping on one page moves them all. The base class clamps it to the
 *     run's shape and keeps it when the next run has the same shape;
 *   - the page actions every page has, installed here and inherited by each subclass:
 *     page.previous-head, page.next-head, page.previous-layer, page.next-layer (step the
 *     cursor, clamped; enabled while a run is shown), reached by the arrow keys and
 *     Page Up/Down that no focused child used, and by the window's win.* twins;
 *   - the figure: the widget that draws the page's figure. A click on it gives it the
 *     keyboard (so the arrow keys step through heads), and the window focuses it when it
 *     opens a head on a page.
 * A subclass installs its own page.* actions (the Heatmap page: page.reset-zoom) with
 * gtk_widget_class_install_action() and keeps their enabled state in one update_actions
 * function of its own.
 *
 * Main thread only, as every widget.
 */
#pragma once

#include <gtk/gtk.h>

#include "app/core/saccade-capture-task.h"
#include "app/core/saccade-export.h"
#include "app/core/saccade-run.h"
#include "app/window/studies/saccade-study-jobs.h"
#include "ui/figures/saccade-figure.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_PAGE (saccade_page_get_type ())
G_DECLARE_DERIVABLE_TYPE (SaccadePage, saccade_page, SACCADE, PAGE, GtkWidget)

struct _SaccadePageClass
{
  GtkWidgetClass parent_class;

  /* The run shown changed to @run (NULL: none). Called by saccade_page_set_run() after the
   * base class has stored @run (saccade_page_get_run() returns it) and moved the cursor
   * into its shape. A page shows @run's numbers here. (optional) */
  void (*set_run) (SaccadePage *self, SaccadeRun *run);
  /* The title of the page's figure for the run shown, as on screen and in exports, e.g.
   * "Layer 5, head 2 (KV group 0) · “The cat…”"; "" without a run. Caller frees.
   * (optional: the default is "") */
  char *(*dup_figure_title) (SaccadePage *self);
  /* File > Export of what the page shows now: its figure to @path (.png, .svg, .pdf) and
   * its numbers as CSV. (optional: without them the window exports the page by its id,
   * saccade-window-export.c) */
  gboolean (*export_figure) (SaccadePage *self, const char *path, GError **error);
  gboolean (*export_csv) (SaccadePage *self, const char *path, GError **error);
  /* TRUE while the page computes something in the background (the e2e test waits for
   * it). (optional: never busy) */
  gboolean (*is_busy) (SaccadePage *self);
  /* The window's loaded model changed to @model (NULL: none, or still loading). A page
   * that runs the model (Induction) keeps it from here. (optional) */
  void (*set_model) (SaccadePage *self, SaccadeLoadedModel *model);
};

const char *saccade_page_get_page_id (SaccadePage *self);
void saccade_page_set_page_id (SaccadePage *self, const char *page_id);
const char *saccade_page_get_title (SaccadePage *self);
void saccade_page_set_title (SaccadePage *self, const char *title);
const char *saccade_page_get_icon_name (SaccadePage *self);
void saccade_page_set_icon_name (SaccadePage *self, const char *icon_name);
/* Borrowed; NULL only before construction ends. */
GSettings *saccade_page_get_settings (SaccadePage *self);
/* Follows the window's settings @keys (string keys, NULL-terminated): @changed runs with each
 * key's value now and again whenever one of them changes. Once per page, after
 * construction (the settings are a construct property). */
typedef void (*SaccadePageSettingFunc) (SaccadePage *self, const char *key, const char *value);
void saccade_page_follow_settings (SaccadePage *self, const char *const *keys,
                                   SaccadePageSettingFunc changed);

/* The capture database the window shows (@db_path, copied) and its runs (@runs, a list of
 * SaccadeRunItem, referenced): what a page that loads other runs (Compare) reads. The
 * window sets them before every saccade_page_set_run(). */
void saccade_page_set_database (SaccadePage *self, const char *db_path, GListModel *runs);
const char *saccade_page_get_db_path (SaccadePage *self);  /* borrowed, or NULL */
GListModel *saccade_page_get_runs (SaccadePage *self);     /* borrowed, or NULL */

/* The model the window has loaded (NULL: none yet); the page takes a reference. The
 * window calls it whenever its model changes. */
void saccade_page_set_model (SaccadePage *self, SaccadeLoadedModel *model);
SaccadeLoadedModel *saccade_page_get_model (SaccadePage *self); /* borrowed, or NULL */

/* Shows @run (NULL: none); the page takes a reference. */
void saccade_page_set_run (SaccadePage *self, SaccadeRun *run);
/* Borrowed, or NULL. */
SaccadeRun *saccade_page_get_run (SaccadePage *self);

/* The cursor, always within the run's shape (0 without a run). */
int saccade_page_get_layer (SaccadePage *self);
int saccade_page_get_head (SaccadePage *self);
void saccade_page_set_layer (SaccadePage *self, int layer);
void saccade_page_set_head (SaccadePage *self, int head);
/* Moves the cursor to @layer, @head (clamped), notifying once for each that changed. */
void saccade_page_select_head (SaccadePage *self, int layer, int head);

/* Caller frees; "" without a run. */
char *saccade_page_dup_figure_title (SaccadePage *self);

/* Emits "query-hovered": the user points at query @position of the run (-1: none). */
void saccade_page_hover_query (SaccadePage *self, int position);

/* Whether the page has its own export hooks; then these call them. */
gboolean saccade_page_has_export (SaccadePage *self);
gboolean saccade_page_export_figure (SaccadePage *self, const char *path, GError **error);
gboolean saccade_page_export_csv (SaccadePage *self, const char *path, GError **error);
/* For subclasses' export hooks: an export source of the run shown (caller frees), or NULL
 * with @error set: G_IO_ERROR_INVALID_ARGUMENT "No run is shown" without one, else
 * saccade_export_source_new_for_run()'s. */
SaccadeExportSource *saccade_page_new_export_source (SaccadePage *self, GError **error);
gboolean saccade_page_is_busy (SaccadePage *self);

/* Borrowed, or NULL. Subclasses set it once, from their init. */
GtkWidget *saccade_page_get_figure (SaccadePage *self);
void saccade_page_set_figure (SaccadePage *self, GtkWidget *figure);

/* The figure style of a page's own drawing area @widget: the theme's text colour and font
 * size on a transparent background (what the ui/widgets views use). */
void saccade_page_figure_style (GtkWidget *widget, SaccadeFigureStyle *style);

/* For subclasses' titles: the run's text in quotes, cut to a title's length. Caller frees. */
char *saccade_page_dup_quoted_text (SaccadeRun *run);
/* A run's name in a run picker: "17 · The cat…", its title cut to 24 characters, so a long
 * text (a whole page, the Induction page's random tokens) cannot make the picker — and with
 * it the window — wider than the screen. Caller frees. */
char *saccade_page_dup_run_choice (gint64 id, const char *title);
/* Why a study of the page's run cannot be computed with the loaded model (the run was
 * captured with another model file: the words `saccade study` says), or NULL when it can
 * (or there is no run or no model). Caller frees. */
char *saccade_page_dup_other_model (SaccadePage *self);
/* The same for @run and @model (either may be NULL). */
char *saccade_run_dup_other_model (SaccadeRun *run, SaccadeLoadedModel *model);
/* Makes @dd, a run picker over a GtkStringList of saccade_page_dup_run_choice() names, ask
 * for a minimum width that does not follow the run it shows (its label ellipsized, the
 * list's rows too), so choosing a run with wide characters (a chat template's
 * "<|im_start|>⏎") does not widen the page and the window. */
void saccade_page_run_dropdown_init (GtkDropDown *dd);
/* The figure title "@what · model · “text”" of the page's run ("" without one); caller frees. */
char *saccade_page_dup_run_title (SaccadePage *self, const char *what);

/* For a page or a view whose status line is kept by study jobs (SaccadeStudyJobs,
 * app/window/studies/saccade-study-jobs.h: the study pages and views): its read-only,
 * notified "status" (the status line) and "fraction" (of the running job, 0 when none)
 * properties, installed on @klass with ids @status_id and @status_id + 1. */
void saccade_page_class_install_status (GObjectClass *klass, guint status_id);
/* In the owner's init: its "status" and "fraction" follow @jobs's (notified with them). */
void saccade_page_forward_status (GObject *owner, SaccadeStudyJobs *jobs);
/* In the owner's get_property: sets @value and returns TRUE when @prop_id is one of the
 * two (@status_id as installed). */
gboolean saccade_page_get_status (SaccadeStudyJobs *jobs, guint status_id, guint prop_id,
                                  GValue *value);

G_END_DECLS
