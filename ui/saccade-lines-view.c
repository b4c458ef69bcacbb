/* stub */
#define G_LOG_DOMAIN "saccade-ui"
#include "saccade-lines-view.h"
struct _SaccadeLinesView { GtkWidget parent_instance; };
G_DEFINE_FINAL_TYPE (SaccadeLinesView, saccade_lines_view, GTK_TYPE_WIDGET)
static void saccade_lines_view_class_init (SaccadeLinesViewClass *klass) {}
static void saccade_lines_view_init (SaccadeLinesView *self) {}
GtkWidget *saccade_lines_view_new (void) { return g_object_new (SACCADE_TYPE_LINES_VIEW, NULL); }
void saccade_lines_view_set_data (SaccadeLinesView *self, int n_heads, int n, const float *heads, const char *const *labels) {}
void saccade_lines_view_set_title (SaccadeLinesView *self, const char *title) {}
