/* saccade-ablation-private.h — the Ablation page's insides, shared by its files:
 * saccade-ablation-page.c (results, lookups, jobs, the SaccadePage),
 * saccade-ablation-options.c (the study table, the choosers and their page.* actions),
 * saccade-ablation-contrast.c (the target and contrast entries' tokens) and
 * saccade-ablation-circuits.c (the choosers of path patching and QK attribution).
 * For those files only; the page's users read saccade-ablation-page.h.
 */
#pragma once

#include <adwaita.h>

#include "app/core/saccade-ablation.h"
#include "app/window/pages/saccade-ablation-page.h"
#include "app/window/studies/saccade-study-jobs.h"
#include "app/window/studies/saccade-study-views.h"

G_BEGIN_DECLS

/* One study the page shows (the header: "a study kind is one table entry"). */
typedef enum {
  OPTIONS_NONE,
  OPTIONS_PERMUTE,              /* the permutations spin button */
  OPTIONS_ERASURE,              /* erasure kind, random orders */
  OPTIONS_SOURCE,               /* faithfulness: the attention source */
  OPTIONS_PATCH,                /* patching: corrupted run, direction, what, contrast */
  OPTIONS_PATH,                 /* path patching: corrupted run, direction, senders,
                                 * component, contrast */
  OPTIONS_QK,                   /* QK attribution: layer, head, query, key */
} StudyOptions;

/* Does the study set the run against a second one (the corrupted-run chooser)? */
#define ABLATION_NEEDS_PAIR(s) ((s)->options == OPTIONS_PATCH || (s)->options == OPTIONS_PATH)

typedef struct {
  const char *id;               /* page.study's parameter */
  const char *name;             /* the chooser's, translated at use */
  SaccadeAblationKind kind;
  const char *child;            /* the figure stack's child: the view's name */
  GType (*view_type) (void);    /* its SaccadeStudyView */
  gboolean metric;              /* the metric chooser applies */
  int default_metric;           /* set when the study is chosen; -1: kept */
  StudyOptions options;
  gboolean contrast;            /* the contrast entry applies (the head and layer sweeps,
                                 * token leave-one-out, DLA, patching, lens) */
} StudyKind;

/* The study table: one row per study the page offers, in the chooser's order. */
#define ABLATION_N_STUDIES 16
extern const StudyKind ablation_studies[ABLATION_N_STUDIES];

struct _SaccadeAblationPage
{
  SaccadePage parent_instance;

  /* Template widgets */
  GtkDropDown *study_dropdown;
  GtkEntry *target_entry;
  GtkProgressBar *progress_bar;
  GtkWidget *cancel_button;
  GtkLabel *status_label;
  GtkDropDown *stored_dropdown;
  GtkDropDown *metric_dropdown;
  GtkWidget *metric_box;
  GtkWidget *permute_box;
  GtkSpinButton *permutations_spin;
  GtkLabel *runs_label;
  GtkWidget *erasure_box;
  GtkDropDown *erase_kind_dropdown;
  GtkSpinButton *seeds_spin;
  GtkWidget *source_box;
  GtkDropDown *source_dropdown;
  GtkDropDown *reference_dropdown; /* faithfulness: ScFaithErase's order */
  GtkWidget *contrast_box;
  GtkEntry *contrast_entry;
  GtkWidget *patch_box;
  GtkDropDown *corrupted_dropdown;
  GtkDropDown *direction_dropdown;
  GtkDropDown *what_dropdown;
  GtkWidget *path_box;          /* path patching's senders and component (built in code) */
  GtkEntry *senders_entry;
  GtkDropDown *component_dropdown;
  GtkWidget *qk_box;            /* QK attribution's head, query and key (built in code) */
  GtkSpinButton *qk_spins[4];   /* layer, head, query (−1: last), key (−1: most attended) */
  GtkLabel *hover_label;
  GtkStack *figure_stack;
  AdwStatusPage *empty_page;

  /* Borrowed: children of figure_stack */
  SaccadeStudyView *views[SACCADE_ABLATION_N_KINDS]; /* each kind's view */

  /* Owned */
  SaccadeStudyJobs *jobs;       /* Run's job and the stored studies' lookups */
  SaccadeAblationKind job_kind;
  guint lookup_gen[SACCADE_ABLATION_N_KINDS]; /* a kind's latest lookup: older are dropped */
  gboolean choose_found;        /* the run's first lookups: show a study that was found */
  SaccadeAblation *results[SACCADE_ABLATION_N_KINDS]; /* of the shown run, or NULL */
  GtkStringList *stored_names;  /* the Stored drop-down's items */
  GArray *corrupted_ids;        /* gint64 per item of corrupted_dropdown (none: empty) */
  int stored_kinds[SACCADE_ABLATION_N_KINDS]; /* the kind of each item */
  gboolean updating;            /* the page sets its own choosers */
  GtkWindow *faith_file;        /* the prompt-set window (a weak pointer), or NULL */
};

/* saccade-ablation-options.c */

/* The table's row for @kind (the first row when none). */
const StudyKind *ablation_study_of_kind (SaccadeAblationKind kind);
/* The row the study chooser shows. */
const StudyKind *ablation_chosen_study (SaccadeAblationPage *self);
/* The metric chooser's SaccadeAblationMetric. */
int ablation_chosen_metric (SaccadeAblationPage *self);
/* The permutation study's size beside its spin button, for the loaded model. */
void ablation_update_runs_label (SaccadeAblationPage *self);
/* Shows the chosen study's own choosers, hides the others. */
void ablation_show_options (SaccadeAblationPage *self);
/* Lists the runs patching can set against the run shown in the corrupted-run chooser:
 * the database's runs of the same model and length, but the run shown (the choice kept
 * when it is still there). */
void ablation_fill_corrupted (SaccadeAblationPage *self);
/* The chosen corrupted run; 0 when there is none to choose. */
gint64 ablation_chosen_corrupted (SaccadeAblationPage *self);
/* The chosen options as a study's parameters, @target its target (a kind ignores those it
 * does not use). */
void ablation_current_params (SaccadeAblationPage *self, int target, SaccadeAblationParams *p);
/* The loaded model when the run shown is its own, else NULL: another model's vocabulary
 * cannot be read with the loaded tokenizer (tokens are then named by their ids). */
SaccadeLoadedModel *ablation_own_model (SaccadeAblationPage *self);
/* The prompt-set window, when open, follows the loaded model and the open database. */
void ablation_faith_file_follow (SaccadeAblationPage *self);
/* Installs page.study, page.metric, page.target, page.faith-file (the prompt-set window,
 * saccade-faith-file-window.h) and the options' actions. */
void ablation_options_class_init (GtkWidgetClass *widget_class);
/* Fills the choosers and connects them; called once the template is built. */
void ablation_options_init (SaccadeAblationPage *self);

/* saccade-ablation-contrast.c */

/* The token @entry names: −1 for the default (empty), else the one token its text is.
 * FALSE with the reason on the status line. */
gboolean ablation_parse_token (SaccadeAblationPage *self, SaccadeLoadedModel *model,
                               GtkEntry *entry, int *token);
/* A study of the metric chooser's is run with @contrast (−1: none): the chooser shows its
 * Δ logit difference with one, and leaves it (for Δ log p) without. */
void ablation_metric_follow_contrast (SaccadeAblationPage *self, int contrast);
/* " · logit(“␣Mary”) − logit(“␣John”) = 3.142" for a head or layer sweep or leave-one-out
 * of @a
 * measured against a contrast (the clean run's), else NULL. Caller frees. */
char *ablation_dup_contrast_status (SaccadeAblationPage *self, const SaccadeAblation *a);
/* saccade-ablation-circuits.c */

/* Builds path patching's and QK attribution's choosers into the options row (after the
 * patching box) and connects them; called by ablation_options_init. */
void ablation_circuits_init (SaccadeAblationPage *self);
/* Installs page.senders, page.component and page.qk-layer, -head, -query, -key, -each. */
void ablation_circuits_class_init (GtkWidgetClass *widget_class);
/* Shows the chosen study's circuit choosers (ablation_show_options calls it). */
void ablation_circuits_show (SaccadeAblationPage *self, const StudyKind *s);
/* The spin buttons' ranges for the loaded model and the run shown (values kept where they
 * fit). */
void ablation_circuits_update_ranges (SaccadeAblationPage *self);
/* Sets the choosers' values into @p (senders as typed; check them with the next). */
void ablation_circuits_params (SaccadeAblationPage *self, SaccadeAblationParams *p);
/* FALSE, with the reason on the status line, when @s is path patching and its senders
 * entry is not a list of heads of @model. */
gboolean ablation_circuits_check (SaccadeAblationPage *self, const StudyKind *s,
                                  SaccadeLoadedModel *model);
/* Why the chosen study cannot run on @model (QK attribution on an architecture it does not
 * split), or NULL. Caller frees. */
char *ablation_circuits_refusal (SaccadeAblationPage *self, ScModel *model);

/* saccade-ablation-page.c */

/* Refills the Stored drop-down from the results found. */
void ablation_refresh_stored (SaccadeAblationPage *self);
/* Shows the chosen study's result (or the empty page) with the chosen metric. */
void ablation_show_result (SaccadeAblationPage *self);
/* A study's option changed: its result is dropped and looked for again. */
void ablation_options_changed (SaccadeAblationPage *self, SaccadeAblationKind kind);
/* Runs the chosen study, as Run does; FALSE when it could not start. */
gboolean saccade_ablation_page_run (SaccadeAblationPage *self);

G_END_DECLS
