/* stub */
#define G_LOG_DOMAIN "saccade-ui"
#include "saccade-heatmap-view.h"
struct _SaccadeHeatmapView { GtkWidget parent_instance; };
G_DEFINE_FINAL_TYPE (SaccadeHeatmapView, saccade_heatmap_view, GTK_TYPE_WIDGET)
static void saccade_heatmap_view_class_init (SaccadeHeatmapViewClass *klass) {}
static void saccade_heatmap_view_init (SaccadeHeatmapView *self) {}
GtkWidget *saccade_heatmap_view_new (void) { return g_object_new (SACCADE_TYPE_HEATMAP_VIEW, NULL); }
void saccade_heatmap_view_set_data (SaccadeHeatmapView *self, const float *values, int n_rows, int n_cols, const char *const *row_labels, const char *const *col_labels, gboolean causal) {}
void saccade_heatmap_view_set_title (SaccadeHeatmapView *self, const char *title) {}
const char *saccade_heatmap_view_get_title (SaccadeHeatmapView *self) { return NULL; }
void saccade_heatmap_view_set_colormap (SaccadeHeatmapView *self, SaccadeColormap colormap) {}
SaccadeColormap saccade_heatmap_view_get_colormap (SaccadeHeatmapView *self) { return 0; }
void saccade_heatmap_view_set_scale (SaccadeHeatmapView *self, SaccadeScale scale) {}
SaccadeScale saccade_heatmap_view_get_scale (SaccadeHeatmapView *self) { return 0; }
void saccade_heatmap_view_reset_zoom (SaccadeHeatmapView *self) {}
double saccade_heatmap_view_get_zoom (SaccadeHeatmapView *self) { return 1; }
