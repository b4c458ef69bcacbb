/* saccade-profile-view.h — the layer profile of one head metric as a widget (the Model
 * page's "Profile" view): saccade_figure_profile_draw_full() rendered into a cached image,
 * rendered again only when the data, the size or the theme change.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SACCADE_TYPE_PROFILE_VIEW (saccade_profile_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeProfileView, saccade_profile_view, SACCADE, PROFILE_VIEW, GtkWidget)

GtkWidget *saccade_profile_view_new (void);

/* Shows @values ((n_layers, n_heads), NaN: undefined) with the value axis named
 * @metric_name. Copied. n_layers 0 clears the view. */
void saccade_profile_view_set_data (SaccadeProfileView *self, int n_layers, int n_heads,
                                    const double *values, const char *metric_name);
void saccade_profile_view_set_title (SaccadeProfileView *self, const char *title);

G_END_DECLS
