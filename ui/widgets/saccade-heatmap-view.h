/* saccade-heatmap-view.h — one attention head as a heatmap widget, from 3 to 8,192 tokens
 * and beyond.
 *
 * The view shows a head's level-of-detail pyramid (ui/figures/saccade-lod.h) through
 * saccade_figure_heatmap_lod_draw_full(), rendered into a cached image (saccade-figure-
 * cache.h) only when the data, the size, the colours or the visible range change. A frame
 * draws only the visible cells, at screen resolution, from the max-pooled level whose cells
 * are at least a device pixel, so its cost follows the widget's size, not the head's
 * (docs/benchmarks.md, "Heatmap at 8,192 tokens"). Axes carry position ticks; token labels
 * appear when zoomed in far enough for them to be readable; zoomed in, a minimap under the
 * colour bar shows where the view is (a click on it moves there).
 *
 * Interaction: hovering outlines the drawn cell and the tooltip reads "“query” (i) →
 * “key” (j): weight" — zoomed out, where a pixel covers several tokens, the strongest link
 * of that block with its exact weight and the block's positions. Ctrl+scroll or a pinch
 * zooms around the pointer, dragging or scrolling pans, a double click or Ctrl+0 shows
 * everything again. Shift+drag selects a rectangle of queries × keys (the "range"), Escape
 * clears it; heatmap.zoom-to-range zooms onto it.
 *
 * Properties: "colormap" (SaccadeColormap), "scale" (SaccadeScale), "title" (string), "zoom"
 * (double, read-only).
 * Signals: "cell-activated" (int row, int col): a click on a cell that is not masked (on a
 * block covering several tokens: its strongest cell). "range-changed": the selection
 * changed (by the user or saccade_heatmap_view_set_range()). "hover-changed" (int row, int
 * col): the pointer is over another cell (zoomed out, the first token of its block), or
 * off the matrix (-1, -1) — the Heatmap page shows that query's predicted next tokens.
 * The view also shows matrices that are not heads (the Induction page's layer × head
 * scores): saccade_heatmap_view_set_axis_names() then names rows and columns in the tooltip.
 */
#pragma once

#include <gtk/gtk.h>

#include "ui/figures/saccade-colormap.h"
#include "ui/figures/saccade-figure.h"
#include "ui/figures/saccade-lod.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_HEATMAP_VIEW (saccade_heatmap_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeHeatmapView, saccade_heatmap_view, SACCADE, HEATMAP_VIEW, GtkWidget)

GtkWidget *saccade_heatmap_view_new (void);

/* Shows @values ((n_rows, n_cols) row-major) with the given display labels (NULL: none,
 * the axes' position ticks say where a cell is). Everything is copied (the values into a
 * pyramid built here, on the calling thread: fine for the small matrices this is for — a
 * 1,024-token head takes a few milliseconds; long heads go through _set_lod()). @causal:
 * cells above the diagonal are masked. Keeps the zoom when the shape is unchanged
 * (stepping through heads), else resets it and clears the range. n_rows or n_cols 0
 * clears the view. */
void saccade_heatmap_view_set_data (SaccadeHeatmapView *self, const float *values, int n_rows,
                                    int n_cols, const char *const *row_labels,
                                    const char *const *col_labels, gboolean causal);

/* Shows @lod (referenced; NULL clears), causal or not as the pyramid says, with display
 * labels ((n_rows) and (n_cols) strings, copied; NULL: none). A pyramid that is only an
 * overview (saccade_lod_new_overview()) draws at once; set the full pyramid of the same
 * shape when it is built and the zoom and range stay. Zoom and range as _set_data(). */
void saccade_heatmap_view_set_lod (SaccadeHeatmapView *self, SaccadeLod *lod,
                                   const char *const *row_labels,
                                   const char *const *col_labels);

/* The pyramid shown (borrowed), or NULL. */
SaccadeLod *saccade_heatmap_view_get_lod (SaccadeHeatmapView *self);

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

/* The zoom factor (1 = every cell visible; at most max(64, n / 8), about 8 cells). */
double saccade_heatmap_view_get_zoom (SaccadeHeatmapView *self);

/* Shows queries [q0, q1) x keys [k0, k1) (clamped to the head), as far as the view's square
 * cells allow: the larger side fills the view. */
void saccade_heatmap_view_zoom_to (SaccadeHeatmapView *self, int q0, int q1, int k0, int k1);

/* The selected range, half-open: queries [*q0, *q1) x keys [*k0, *k1). FALSE (outputs
 * untouched) when nothing is selected. Any output may be NULL. */
gboolean saccade_heatmap_view_get_range (SaccadeHeatmapView *self, int *q0, int *q1, int *k0,
                                         int *k1);

/* Selects queries [q0, q1) x keys [k0, k1), clamped to the head; an empty range (q0 >= q1
 * or k0 >= k1 after clamping) clears the selection. Emits "range-changed" when it changed. */
void saccade_heatmap_view_set_range (SaccadeHeatmapView *self, int q0, int q1, int k0, int k1);

/* The tokens the view shows now: every query and key at least partly visible. FALSE when
 * the view is empty. */
gboolean saccade_heatmap_view_get_visible_range (SaccadeHeatmapView *self,
                                                 SaccadeTokenRange *range);

/* Where the last render put the matrix (cells, the level drawn, the minimap), in widget
 * coordinates; all 0 before the first render. Borrowed. */
const SaccadeHeatmapGeometry *saccade_heatmap_view_get_geometry (SaccadeHeatmapView *self);

/* The tooltip's text for the point (@x, @y) of the widget (NULL outside the cells): "“q”
 * (i) → “k” (j): w", with the block it stands for when a drawn cell covers several tokens.
 * Free with g_free(). */
char *saccade_heatmap_view_describe_at (SaccadeHeatmapView *self, double x, double y);

/* What an export of the view writes: the selected range if there is one, else the visible
 * range. FALSE when the view is empty. */
gboolean saccade_heatmap_view_get_export_range (SaccadeHeatmapView *self,
                                                SaccadeTokenRange *range);

/* Writes the view's figure to @path (PNG, SVG or PDF by its extension) in the export style:
 * the export range (saccade_heatmap_view_get_export_range()) with its own positions on
 * the axes, the view's title, colours, scale and axis names, sized for the range
 * (saccade_figure_export_heatmap_lod()). The work runs in a GTask worker on a reference to
 * the pyramid and copies of the rest, so the view may change or go meanwhile. Errors as
 * saccade_figure_export_heatmap_lod(); an empty view: G_IO_ERROR_INVALID_ARGUMENT. @opts
 * (may be NULL: the natural size) is copied. */
void saccade_heatmap_view_export_async (SaccadeHeatmapView *self, const char *path,
                                        const SaccadeFigureExportOptions *opts,
                                        GCancellable *cancellable, GAsyncReadyCallback callback,
                                        gpointer user_data);
gboolean saccade_heatmap_view_export_finish (SaccadeHeatmapView *self, GAsyncResult *result,
                                             GError **error);

/* The same, on the calling thread (the CLI and tests; an 8,192-token head's PNG takes
 * about half a second). */
gboolean saccade_heatmap_view_export (SaccadeHeatmapView *self, const char *path,
                                      const SaccadeFigureExportOptions *opts, GError **error);

G_END_DECLS
