/* saccade-distance-view.h — a head-distance matrix with its dendrogram as a widget (the
 * Compare page): saccade_figure_distance_draw_full() rendered into a cached image.
 * Hovering a cell outlines it and names the pair ("L5.H2 ~ L7.H1: 0.23 nats"); a click on
 * a cell emits "pair-activated" with the two items (indices in the data's own order, not
 * the drawing order).
 *
 * Signals: "pair-activated" (int row_item, int col_item).
 */
#pragma once

#include <gtk/gtk.h>

#include "ui/figures/saccade-figure.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_DISTANCE_VIEW (saccade_distance_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeDistanceView, saccade_distance_view, SACCADE, DISTANCE_VIEW,
                      GtkWidget)

GtkWidget *saccade_distance_view_new (void);

/* Shows the (n, n) matrix @values in @order (NULL: as given) with @merges (n - 1, or
 * NULL), item names @labels (NULL: positions), the colour bar named @value_name and
 * tooltips ending in @unit (may be NULL). Everything is copied. n 0 clears the view. */
void saccade_distance_view_set_data (SaccadeDistanceView *self, int n, const double *values,
                                     const int *order, const SaccadeDendroMerge *merges,
                                     const char *const *labels, const char *value_name,
                                     const char *unit);
void saccade_distance_view_set_title (SaccadeDistanceView *self, const char *title);

G_END_DECLS
