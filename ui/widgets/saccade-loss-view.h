/* saccade-loss-view.h — the in-context-learning curve as a widget (the Induction page):
 * saccade_figure_loss_draw_full() rendered into a cached image, rendered again only when the
 * data, the size or the theme change. Its tooltip names the position under the pointer and
 * its loss.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SACCADE_TYPE_LOSS_VIEW (saccade_loss_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeLossView, saccade_loss_view, SACCADE, LOSS_VIEW, GtkWidget)

GtkWidget *saccade_loss_view_new (void);

/* Shows @values ((n), NaN: none) with the copies split at @boundary, the first copy's
 * targets starting at @first_start, and the copies' means (NaN: no line); the value axis is
 * named @value_name. Copied. n < 2 clears the view. */
void saccade_loss_view_set_data (SaccadeLossView *self, int n, const double *values,
                                 int first_start, int boundary, double mean_first,
                                 double mean_second, const char *value_name);
void saccade_loss_view_set_title (SaccadeLossView *self, const char *title);

G_END_DECLS
