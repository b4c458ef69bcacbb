/* saccade-lines-view.h — one layer's attention as lines between tokens (the "Lines" page,
 * BertViz's head view).
 *
 * Queries on the left, keys on the right, one line per link (query, key, head) coloured by
 * head with an opacity proportional to the weight; the links are chosen beforehand
 * (ui/figures/saccade-figure-lines.h: the strongest per query and head). Hovering a token
 * on the left keeps only the lines it sends, on the right only the lines it receives.
 *
 * The figure is rendered off the main thread: a change of data, size, theme or highlighted
 * token starts a GTask that draws an image (cancelling the one before), and the widget
 * shows the last finished image until the new one arrives; the main thread only blits it.
 * :busy says whether the picture shown is behind.
 *
 * Main thread only, as every widget.
 */
#pragma once

#include <gtk/gtk.h>

#include "ui/figures/saccade-figure-lines.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_LINES_VIEW (saccade_lines_view_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeLinesView, saccade_lines_view, SACCADE, LINES_VIEW, GtkWidget)

GtkWidget *saccade_lines_view_new (void);

/* Shows one layer whole: @heads is (n_heads, n, n), @labels (n) display strings (NULL:
 * positions). Every visible link is drawn (weights of at least 1/256, no top k), chosen here
 * on the calling thread: for a sentence; a long run goes through set_links. n 0 clears the
 * view. */
void saccade_lines_view_set_data (SaccadeLinesView *self, int n_heads, int n,
                                  const float *heads, const char *const *labels);

/* Shows @links (a reference is taken; NULL clears the view) between the tokens at run
 * positions @position0 .. @position0 + @n - 1, labelled @labels (n display strings, copied;
 * NULL: positions), with the run's position before each label when @show_positions. Only
 * the heads @head_ids (n_shown of them, copied; each < links->n_heads) are drawn; NULL: all.
 * Links with an end outside the tokens are not drawn. */
void saccade_lines_view_set_links (SaccadeLinesView *self, SaccadeLinesLinks *links,
                                   int position0, int n, const char *const *labels,
                                   gboolean show_positions, const int *head_ids, int n_shown);

void saccade_lines_view_set_title (SaccadeLinesView *self, const char *title);

/* TRUE while the picture shown is not yet that of the view's state: an image is being
 * rendered in the background, or (mapped) the next frame will start one. :busy is notified
 * when a render starts and ends. */
gboolean saccade_lines_view_get_busy (SaccadeLinesView *self);

/* The run position of the highlighted token, or -1 when none; *@is_key (may be NULL) says
 * which column. */
int saccade_lines_view_get_highlight (SaccadeLinesView *self, gboolean *is_key);

/* Highlights the token at run position @position (-1 or a token not shown: none) in the key
 * column when @is_key, else the query column: what hovering it does. */
void saccade_lines_view_set_highlight (SaccadeLinesView *self, int position, gboolean is_key);

G_END_DECLS
