/* saccade-bars-view.h — one value per token as bars (the Rollout view's bars):
 * saccade_figure_bars_draw_full() rendered into a cached image. Hovering a bar names its
 * token and value in a tooltip and outlines the bar.
 */
#pragma once

#include <gtk/gtk.h>

#include "ui/figures/saccade-colormap.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_BARS_VIEW (saccade_bars_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeBarsView, saccade_bars_view, SACCADE, BARS_VIEW, GtkWidget)

GtkWidget *saccade_bars_view_new (void);

/* Shows @values (n) under @labels (NULL: positions), the value axis named @value_name.
 * Copied. n 0 clears the view. */
void saccade_bars_view_set_data (SaccadeBarsView *self, int n, const double *values,
                                 const char *const *labels, const char *value_name);
void saccade_bars_view_set_title (SaccadeBarsView *self, const char *title);
void saccade_bars_view_set_colormap (SaccadeBarsView *self, SaccadeColormap colormap);

G_END_DECLS
