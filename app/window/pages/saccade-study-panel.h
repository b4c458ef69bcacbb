/* saccade-study-panel.h — SaccadeStudyPanel, one face's study of the run shown
 * (SaccadeStudyFace, app/core/saccade-study.h) for a page or a view that shows one study at
 * a time: the Attribution page and its Adversarial view. It keeps, once for both:
 *   - the source (run, model, database) and the result shown (the face's, owned);
 *   - the lookup: saccade_study_panel_look_up() forgets the result and asks the face for
 *     the study stored with the owner's settings (STORED_ONLY: no session lock, no pass
 *     run), shown as soon as it is found;
 *   - Run: saccade_study_panel_run() computes it (or reads it back) in a worker on the
 *     model's session, its progress coalesced onto the bar, Cancel stopping it at the
 *     engine's next check;
 *   - the status line, from the owner's texts;
 *   - the exports of what is shown: title, figure and CSV (the face's outputs,
 *     app/core/studies/saccade-study-outputs.h).
 * The jobs themselves are SaccadeStudyJobs's (app/window/studies/saccade-study-jobs.h): a
 * job or lookup that finishes after the source changed, or after another request, is
 * dropped. The owner keeps its settings (it fills the params when asked), its drawing and
 * anything else it shows of the result (the panel calls its changed hook whenever the
 * result or the running job changed); the panel enables its Run and Cancel actions, makes
 * its settings insensitive while a job runs, redraws its figure and shows the result's
 * note.
 *
 * Main thread only.
 */
#pragma once

#include <gtk/gtk.h>

#include "app/core/saccade-run.h"
#include "app/core/studies/saccade-study-outputs.h"
#include "app/window/studies/saccade-study-jobs.h"

G_BEGIN_DECLS

/* What the owner tells the panel: its status texts, msgids marked with N_() and
 * translated here (the formats take exactly the arguments named), and the names of its
 * Run and Cancel actions, which the panel enables. */
typedef struct {
  const char *reused;      /* a stored study shown: its id (%lld) */
  const char *computed;    /* computed and stored: seconds (%.1f), its id (%lld) */
  const char *not_stored;  /* computed, not stored: seconds (%.1f) */
  const char *not_yet;     /* nothing stored with these settings */
  const char *working;     /* Run, before its first progress */
  const char *progress;    /* Run: percent done (%.0f) */
  const char *nothing;     /* an export without a result */
  const char *run_action;  /* e.g. "page.attribute": enabled with a source and no job */
  const char *cancel_action; /* enabled while a job runs */
} SaccadeStudyPanelDesc;

/* The owner's widgets the panel keeps up to date (borrowed: the owner's children). */
typedef struct {
  GtkLabel *status;        /* the status line */
  GtkProgressBar *bar;     /* a job's progress, shown while it runs */
  GtkWidget *cancel;       /* Cancel, shown while a job runs */
  GtkWidget *figure;       /* redrawn when the result changes */
  GtkLabel *note;          /* the result's note (SaccadeFaceOutputs.note), hidden without
                            * one; may be NULL */
} SaccadeStudyPanelWidgets;

/* Fills @params (the face's kind's params_size bytes) from the owner's settings; FALSE when
 * a setting is not valid (the owner has said why on the status line). */
typedef gboolean (*SaccadeStudyPanelParams) (GtkWidget *owner, gpointer params);
/* The result or the running job changed, after the panel updated its widgets: what the
 * owner shows besides (a table). */
typedef void (*SaccadeStudyPanelChanged) (GtkWidget *owner);

typedef struct _SaccadeStudyPanel SaccadeStudyPanel;

/* A panel of @owner (borrowed: it owns the panel and frees it in its finalize, after
 * saccade_study_panel_stop in its dispose) for @outputs's face, with @desc and @widgets
 * (copied); @changed may be NULL. */
SaccadeStudyPanel *saccade_study_panel_new (GtkWidget *owner, const SaccadeFaceOutputs *outputs,
                                            const SaccadeStudyPanelDesc *desc,
                                            const SaccadeStudyPanelWidgets *widgets,
                                            SaccadeStudyPanelParams params,
                                            SaccadeStudyPanelChanged changed);
/* The owner's settings (a NULL-terminated list of widgets, borrowed): insensitive while a
 * job runs. */
void saccade_study_panel_add_settings (SaccadeStudyPanel *self, GtkWidget *first, ...)
  G_GNUC_NULL_TERMINATED;
void saccade_study_panel_free (SaccadeStudyPanel *self); /* NULL is a no-op */

/* Stops the job and the lookups and frees the result (the owner's dispose). */
void saccade_study_panel_stop (SaccadeStudyPanel *self);

/* The run (referenced), model (referenced) and database (copied) whose studies are shown,
 * each may be NULL; then saccade_study_panel_look_up(). */
void saccade_study_panel_set_source (SaccadeStudyPanel *self, SaccadeRun *run,
                                     SaccadeLoadedModel *model, const char *db_path);
SaccadeRun *saccade_study_panel_get_run (SaccadeStudyPanel *self);            /* borrowed */
SaccadeLoadedModel *saccade_study_panel_get_model (SaccadeStudyPanel *self);  /* borrowed */
/* A run, a model and a database are set: a study can be asked for. */
gboolean saccade_study_panel_has_source (SaccadeStudyPanel *self);

/* Forgets the result and looks up the study stored with the settings (none without a
 * source, or when the params are refused). */
void saccade_study_panel_look_up (SaccadeStudyPanel *self);
/* Run: the study with the settings and @flags (RECOMPUTE: even when one is stored).
 * FALSE, doing nothing, without a source, while a job runs, or when the params are
 * refused. */
gboolean saccade_study_panel_run (SaccadeStudyPanel *self, SaccadeStudyFlags flags);
void saccade_study_panel_cancel (SaccadeStudyPanel *self);

/* The face's result shown (borrowed), or NULL. */
gconstpointer saccade_study_panel_get_result (SaccadeStudyPanel *self);
/* The run's labels when the result is of the run shown (its length), else NULL. */
const char *const *saccade_study_panel_get_labels (SaccadeStudyPanel *self);

SaccadeStudyJobs *saccade_study_panel_get_jobs (SaccadeStudyPanel *self); /* borrowed */
gboolean saccade_study_panel_get_running (SaccadeStudyPanel *self);
/* Shows the result (or its absence) as the panel does when it changes: the actions, the
 * settings, the note, the figure, the owner's changed hook, the status line (the owner's
 * init, once its widgets are built). */
void saccade_study_panel_show (SaccadeStudyPanel *self);
/* The status line for the result shown, or for why there is none. */
void saccade_study_panel_show_status (SaccadeStudyPanel *self);
void saccade_study_panel_set_status (SaccadeStudyPanel *self, const char *text);

/* The figure's title ("" without a result; caller frees), and the exports of the result
 * shown: G_IO_ERROR_INVALID_ARGUMENT with the desc's "nothing" without one. */
char *saccade_study_panel_dup_title (SaccadeStudyPanel *self);
gboolean saccade_study_panel_export_figure (SaccadeStudyPanel *self, const char *path,
                                            GError **error);
gboolean saccade_study_panel_export_csv (SaccadeStudyPanel *self, const char *path,
                                         GError **error);

G_END_DECLS
