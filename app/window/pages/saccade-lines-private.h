/* saccade-lines-private.h — the Lines page's parts, shared by the files that build it:
 *
 *   saccade-lines-page.c   the page: choosing the links in a worker, the range, the
 *                          actions, export, the status line
 *   saccade-lines-heads.c  the toggle button of each head (in the head's colour), which
 *                          choose the heads shown
 *
 * What other code may use is in saccade-lines-page.h; this header is for these files only.
 */
#pragma once

#include "app/window/pages/saccade-lines-page.h"
#include "ui/figures/saccade-figure-lines.h"
#include "ui/widgets/saccade-lines-view.h"

G_BEGIN_DECLS

struct _SaccadeLinesPage
{
  SaccadePage parent_instance;

  /* Template widgets */
  GtkAdjustment *layer_adjustment;
  GtkAdjustment *threshold_adjustment;
  GtkAdjustment *top_k_adjustment;
  GtkAdjustment *start_adjustment;
  GtkAdjustment *end_adjustment;
  GtkBox *heads_box;
  GtkLabel *status_label;
  GtkSpinner *spinner;
  SaccadeLinesView *lines_view;

  /* owned */
  GtkToggleButton **head_buttons;  /* (n_heads) */
  gboolean *head_on;               /* (n_heads) */
  int n_heads;
  SaccadeLinesLinks *links;        /* of links_layer; NULL before the first result */
  int links_layer;                 /* the layer of @links: the view's title says it while
                                    * the cursor's layer is still being chosen */
  GCancellable *job;               /* non-NULL while links are chosen */
  char *error;                     /* why the last choice failed, or NULL */
  gboolean default_range;          /* the range is the one a long run opened on */
  gboolean updating;               /* widgets are being set from code: ignore their signals */
};

/* saccade-lines-page.c: hands the view the links of the layer, cut to the heads and range
 * shown. */
void lines_push_view (SaccadeLinesPage *self);

/* saccade-lines-heads.c */
/* One toggle button per head of the run (made again when the number of heads changes). */
void lines_rebuild_head_buttons (SaccadeLinesPage *self, int n_heads);
/* Shows exactly the heads @on says (n_heads of them), setting the buttons to match. */
void lines_set_heads (SaccadeLinesPage *self, const gboolean *on);
/* Shows @head alone. */
void lines_solo_head (SaccadeLinesPage *self, int head);

G_END_DECLS
