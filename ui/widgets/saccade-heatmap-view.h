/* saccade-heatmap-view.h — one attention head as a heatmap widget.
 *
 * Draws saccade_figure_heatmap_draw_full() into a cached image (saccade-figure-cache.h)
 * that is rendered again only when the data, the size, the colours or the visible range
 * change. Hovering shows "query → key: weight" in a tooltip and outlines the cell;
 * Ctrl+scroll or a pinch zooms around the pointer, dragging pans, a double click or
 * saccade_heatmap_view_reset_zoom() shows everything again.
 *
 * Properties: "colormap" (SaccadeColormap), "scale" (SaccadeScale), "title" (string).
 * Signals: "cell-activated" (int row, int col): a click on a cell that is not masked.
 * The view also shows matrices that are not heads (the Induction page's layer × head
 * scores): saccade_heatmap_view_set_axis_names() then names rows and columns in the tooltip.
 */
#pragma once

#include <gtk/gtk.h>

#include "ui/figures/saccade-colormap.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_HEATMAP_VIEW (saccade_heatmap_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeHeatmapView, saccade_heatmap_view, SACCADE, HEATMAP_VIEW, GtkWidget)

GtkWidget *saccade_heatmap_view_new (void);

/* Shows @values ((n_rows, n_cols) row-major) with the given display labels (NULL:
 * positions). Everything is copied. @causal: cells above the diagonal are masked. Keeps the
 * zoom when the shape is unchanged (stepping through heads), else resets it. n_rows or
 * n_cols 0 clears the view. */
void saccade_heatmap_view_set_data (SaccadeHeatmapView *self, const float *values, int n_rows,
                                    int n_cols, const char *const *row_labels,
                                    const char *const *col_labels, gboolean causal);

void saccade_heatmap_view_set_title (SaccadeHeatmapView *self, const char *title);
const char *saccade_heatmap_view_get_title (SaccadeHeatmapView *self);

void saccade_heatmap_view_set_colormap (SaccadeHeatmapView *self, SaccadeColormap colormap);
SaccadeColormap saccade_heatmap_view_get_colormap (SaccadeHeatmapView *self);

void saccade_heatmap_view_set_scale (SaccadeHeatmapView *self, SaccadeScale scale);
SaccadeScale saccade_heatmap_view_get_scale (SaccadeHeatmapView *self);

/* What rows, columns and values are ("Layer", "Head", "prefix matching"; copied): the
 * axes and the colour bar are captioned so, and the tooltip reads "Layer 17 · Head 3:
 * 0.8170" instead of "query → key". NULL, NULL, NULL: a head. */
void saccade_heatmap_view_set_axis_names (SaccadeHeatmapView *self, const char *row_name,
                                          const char *col_name, const char *value_name);

/* Shows every cell again. */
void saccade_heatmap_view_reset_zoom (SaccadeHeatmapView *self);

/* The zoom factor (1 = every cell visible). */
double saccade_heatmap_view_get_zoom (SaccadeHeatmapView *self);

G_END_DECLS
