/* saccade-lines-view.h — one layer's attention as lines between tokens (the "Lines" page,
 * BertViz's head view).
 *
 * Queries on the left, keys on the right, one line per (query, key, head) coloured by head
 * with an opacity proportional to the weight. Hovering a token on the left keeps only the
 * lines it sends, on the right only the lines it receives. Drawn into a cached image that
 * is rendered again only when the data, the size or the highlighted token change.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SACCADE_TYPE_LINES_VIEW (saccade_lines_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeLinesView, saccade_lines_view, SACCADE, LINES_VIEW, GtkWidget)

GtkWidget *saccade_lines_view_new (void);

/* Shows one layer: @heads is (n_heads, n, n), @labels (n) display strings (NULL:
 * positions). Copied. n 0 clears the view. */
void saccade_lines_view_set_data (SaccadeLinesView *self, int n_heads, int n,
                                  const float *heads, const char *const *labels);

void saccade_lines_view_set_title (SaccadeLinesView *self, const char *title);

G_END_DECLS
