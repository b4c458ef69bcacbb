/* stub */
#define G_LOG_DOMAIN "saccade-ui"
#include "saccade-grid-view.h"
struct _SaccadeGridView { GtkWidget parent_instance; };
G_DEFINE_FINAL_TYPE (SaccadeGridView, saccade_grid_view, GTK_TYPE_WIDGET)
static void saccade_grid_view_class_init (SaccadeGridViewClass *klass) {}
static void saccade_grid_view_init (SaccadeGridView *self) {}
GtkWidget *saccade_grid_view_new (void) { return g_object_new (SACCADE_TYPE_GRID_VIEW, NULL); }
void saccade_grid_view_set_data (SaccadeGridView *self, int n_layers, int n_heads, int n_kv_heads, int n, const float *heads, const double *metric, const char *metric_name) {}
void saccade_grid_view_set_metric (SaccadeGridView *self, const double *metric, const char *metric_name) {}
void saccade_grid_view_set_title (SaccadeGridView *self, const char *title) {}
void saccade_grid_view_set_colormap (SaccadeGridView *self, SaccadeColormap colormap) {}
SaccadeColormap saccade_grid_view_get_colormap (SaccadeGridView *self) { return 0; }
void saccade_grid_view_set_selected (SaccadeGridView *self, int layer, int head) {}
