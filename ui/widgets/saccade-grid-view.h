/* saccade-grid-view.h — every head of a run as a grid of thumbnails (the "Model" page).
 *
 * Layers one way and query heads the other (the grid turns to give the biggest
 * thumbnails: layers across on a wide page), heads grouped by the KV head they share with
 * a gap between groups. With a metric, each head is framed in the metric's colour and a
 * colour bar names it. Thumbnails are made once per data set (SaccadeGridThumbs) and the grid is
 * drawn into a cached image, rendered again only on data, size, colour or selection
 * changes. Hovering outlines a head and tells its metric in a tooltip; a click (or Enter on
 * the selected head) emits "head-activated".
 *
 * Signals: "head-activated" (int layer, int head).
 * Properties: "colormap" (SaccadeColormap, for the metric).
 */
#pragma once

#include <gtk/gtk.h>

#include "ui/figures/saccade-colormap.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_GRID_VIEW (saccade_grid_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeGridView, saccade_grid_view, SACCADE, GRID_VIEW, GtkWidget)

GtkWidget *saccade_grid_view_new (void);

/* Shows a run's heads: @heads is (n_layers, n_heads, n, n), @metric (n_layers, n_heads) or
 * NULL, @metric_name the colour bar's caption (may be NULL). Copied (the heads as
 * thumbnails). n_layers 0 clears the view. */
void saccade_grid_view_set_data (SaccadeGridView *self, int n_layers, int n_heads,
                                 int n_kv_heads, int n, const float *heads,
                                 const double *metric, const char *metric_name);

/* As saccade_grid_view_set_data(), from each head's overview instead of the head: @overviews
 * is (n_layers, n_heads, S, S) with S = @overview_size <= @n, block maxima with NaN for
 * masked blocks (the store's overviews: a run of any length costs S^2 floats a head).
 * Copied as thumbnails. */
void saccade_grid_view_set_overviews (SaccadeGridView *self, int n_layers, int n_heads,
                                      int n_kv_heads, int n, int overview_size,
                                      const float *overviews, const double *metric,
                                      const char *metric_name);

/* Marks the local layers (sliding-window attention): @windows (n_layers of the data set
 * last, copied; NULL: none) holds each layer's window, 0 for a global layer. Setting data
 * clears it. */
void saccade_grid_view_set_layer_windows (SaccadeGridView *self, const guint *windows);

/* Replaces only the metric (NULL: none), keeping the thumbnails. */
void saccade_grid_view_set_metric (SaccadeGridView *self, const double *metric,
                                   const char *metric_name);

void saccade_grid_view_set_title (SaccadeGridView *self, const char *title);

void saccade_grid_view_set_colormap (SaccadeGridView *self, SaccadeColormap colormap);
SaccadeColormap saccade_grid_view_get_colormap (SaccadeGridView *self);

/* Outlines one head as selected (-1, -1: none); does not emit "head-activated". */
void saccade_grid_view_set_selected (SaccadeGridView *self, int layer, int head);

/* Where the heads' thumbnails were drawn last (widget coordinates): the rectangle that
 * holds every one, whatever the bands (x, y, width, height); FALSE, and
 * @rect untouched, before the first draw or with no data. */
gboolean saccade_grid_view_get_drawn (SaccadeGridView *self, double rect[4]);

G_END_DECLS
