/* saccade-heatmap-view-private.h — what the heatmap view's files share: its instance
 * struct and the entry points between saccade-heatmap-view.c (the widget: drawing, input,
 * state) and saccade-heatmap-view-jobs.c (its workers: measuring labels, exporting).
 * Internal to ui/widgets.
 */
#pragma once

#include "ui/widgets/saccade-heatmap-view.h"
#include "ui/widgets/saccade-view-private.h"

G_BEGIN_DECLS

struct _SaccadeHeatmapView {
  GtkWidget parent_instance;

  /* owned data */
  SaccadeLod *lod;             /* the head, or NULL */
  int n_rows, n_cols;          /* its shape (0 x 0 without one) */
  char **row_labels, **col_labels;
  double label_em;             /* the widest label in font sizes; < 0: being measured */
  GCancellable *label_cancel;  /* the worker measuring them, or NULL */
  char *title;
  char *row_name, *col_name;   /* for a matrix that is not a head: what rows, columns and */
  char *value_name;            /* values are ("Layer", "Head", "prefix matching"), or NULL */
  SaccadeColormap colormap;
  SaccadeScale scale;

  /* view */
  double zoom;                 /* >= 1: the share of rows and columns shown is 1 / zoom */
  double row0, col0;           /* first visible cell (fractional) */
  double drag_row0, drag_col0; /* at the start of a drag */
  double pinch_zoom0;          /* at the start of a pinch */
  double pointer_x, pointer_y; /* last pointer position, for zooming around it */
  int hover_row, hover_col;    /* the token under the pointer; -1: none */

  /* the selected range, and a selection being dragged */
  gboolean has_range;
  SaccadeTokenRange range;
  gboolean selecting;
  double sel_x0, sel_y0;       /* where the drag began */
  int sel_r0, sel_c0, sel_r1, sel_c1; /* its anchor and current token (inclusive) */

  SaccadeFigureCache *cache;
  SaccadeHeatmapGeometry geom; /* where the cached render put the cells */
};

/* Marks the cached figure stale and queues a draw. */
void saccade_heatmap_view_invalidate (SaccadeHeatmapView *self);

/* Sets self->label_em for the current labels: measured at once for up to
 * LABELS_MEASURED_INLINE labels, else in a worker (self->label_em < 0 meanwhile, labels
 * hidden; the view is invalidated when the width arrives). Cancels an earlier worker. */
void saccade_heatmap_view_measure_labels (SaccadeHeatmapView *self);

G_END_DECLS
