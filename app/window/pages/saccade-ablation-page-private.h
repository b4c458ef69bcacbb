/* saccade-ablation-page-private.h — what the Ablation page (saccade-ablation-page.c: the
 * study table, choosers, running and storing) shares with the views of its further studies
 * (saccade-ablation-views.c: attention permutation, erasure curves, direct logit
 * attribution, faithfulness — each one's figure, hover, click and export). Not for other
 * files.
 */
#pragma once

#include <adwaita.h>

#include "app/core/saccade-ablation.h"
#include "app/window/pages/saccade-ablation-page.h"
#include "app/window/pages/saccade-ablation-table.h"
#include "ui/figures/saccade-figure.h"

G_BEGIN_DECLS

/* The faithfulness page's attention sources, in the chooser's order. */
typedef enum {
  SOURCE_LAST_MEAN,
  SOURCE_ROLLOUT,
  SOURCE_FLOW,
  SOURCE_BEST_HEAD,
  N_SOURCES
} FaithSource;


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
  GtkLabel *hover_label;
  GtkStack *figure_stack;
  AdwStatusPage *empty_page;
  GtkDrawingArea *map_area;
  SaccadeAblationTable *table;
  GtkDrawingArea *bars_area;
  GtkDrawingArea *perm_area;
  GtkDrawingArea *erasure_area;
  GtkDrawingArea *dla_area;
  GtkWidget *dla_beside;
  GtkDrawingArea *dla_sweep_area;
  GtkDrawingArea *dla_scatter_area;
  GtkLabel *dla_note;
  GtkDrawingArea *faith_area;
  GtkLabel *faith_head_title;
  GtkGrid *faith_grid;

  /* Owned */
  GCancellable *job;            /* the study being computed, or NULL */
  SaccadeAblationKind job_kind;
  double job_fraction;
  GCancellable *lookup;         /* the stored studies' lookups, while any runs */
  int lookups_pending;
  guint lookup_gen[SACCADE_ABLATION_N_KINDS]; /* a kind's latest lookup: older are dropped */
  gboolean choose_found;        /* the run's first lookups: show a study that was found */
  SaccadeAblation *results[SACCADE_ABLATION_N_KINDS]; /* of the shown run, or NULL */
  GtkStringList *stored_names;  /* the Stored drop-down's items */
  int stored_kinds[SACCADE_ABLATION_N_KINDS]; /* the kind of each item */
  double *cells;                /* the map's values (n_layers * n_heads), or NULL */
  gboolean *flipped;            /* the map's marks */
  double *bars[2];              /* mask, drop (n_tokens) */
  double *perm_cells;           /* the permutation map's medians (n_layers * n_heads) */
  gboolean *perm_flipped;       /* its marks: top-1 changed in at least half */
  double *sweep_cells;          /* DLA: the zero-ablation Δ log p beside it, or NULL */
  ScKendall dla_tau;            /* DLA against that Δ log p (ρ is the study's) */
  SaccadeErasureSeries *series; /* the erasure figure's (n_curves) */
  char **series_names;          /* their names (NULL-terminated) */
  SaccadeEffectsMapGeometry map_geom, perm_geom, dla_geom, dla_sweep_geom;
  SaccadePairedBarsGeometry bars_geom;
  int hover_layer, hover_head, hover_token;
  int perm_hover, dla_hover;    /* the head under the pointer (layer-major), or -1 */
  gboolean updating;            /* the page sets its own choosers */
};

/* The page (saccade-ablation-page.c), for the views. */
int saccade_ablation_chosen_metric (SaccadeAblationPage *self);
const char *saccade_ablation_metric_name (int metric);  /* translated, with units */
const char *saccade_ablation_metric_short (int metric); /* translated */
void saccade_ablation_open_head (SaccadeAblationPage *self, int layer, int head);

/* The views (saccade-ablation-views.c), for the page's study table. */
void saccade_ablation_views_init (SaccadeAblationPage *self);  /* draw funcs, pointer, clicks */
void saccade_ablation_views_clear (SaccadeAblationPage *self); /* frees their buffers */
const char *saccade_ablation_source_name (FaithSource s);       /* translated */
void saccade_ablation_update_runs_label (SaccadeAblationPage *self);
#define SACCADE_ABLATION_DECLARE_VIEW(name)                                                \
  void saccade_ablation_show_##name (SaccadeAblationPage *self, const SaccadeAblation *a);  \
  gboolean saccade_ablation_export_##name##_figure (SaccadeAblationPage *self,             \
                                                    const SaccadeAblation *a,              \
                                                    const char *path, GError **error);     \
  char *saccade_ablation_##name##_title (SaccadeAblationPage *self);
SACCADE_ABLATION_DECLARE_VIEW (perm)
SACCADE_ABLATION_DECLARE_VIEW (erasure)
SACCADE_ABLATION_DECLARE_VIEW (dla)
SACCADE_ABLATION_DECLARE_VIEW (faith)
#undef SACCADE_ABLATION_DECLARE_VIEW

G_END_DECLS
