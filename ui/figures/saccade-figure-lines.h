/* saccade-figure-lines.h — the strongest links of one layer, chosen once for the lines
 * figure (saccade-figure.h, "lines") so that a long run draws thousands of lines rather
 * than n² per head.
 *
 * A link is (query, key, head, weight) in run positions. For each query and each head, the
 * links kept are the @top_k largest weights of the query's whole row that are at least
 * @threshold (every key of the row competes, not only the keys a range shows, so a link is
 * drawn or not whatever the range). Choosing per head rather than per query across heads
 * makes a head's links independent of the others: toggling heads on and off, and moving the
 * range, only filter the chosen links and never choose again. Ties at the k-th place go to
 * the earlier key (the lower position), so the choice is deterministic.
 *
 * Bounds: a row of probabilities sums to 1, so at most floor(1 / threshold) links per
 * (query, head) pass the threshold; with top_k the bound is min(top_k, 1 / threshold):
 * 1,000 queries x 9 heads x 3 = 27,000 links at most with the page's defaults.
 *
 * A SaccadeLinesLinks is immutable once finished and reference-counted (atomically): a
 * worker thread builds it and hands it to the main thread, which draws from it on another
 * worker. Building (new, add_head, finish) belongs to one thread.
 */
#pragma once

#include <gio/gio.h>

#include "ui/figures/saccade-figure.h"

G_BEGIN_DECLS

/* The defaults of both faces (the Lines page and `saccade export --figure lines`): links
 * of at least 0.1 — ten times a uniform row's weight at 100 tokens, so a link that stands
 * out — and the 3 strongest of them per query and head, the few the eye follows in
 * BertViz's head view. */
#define SACCADE_LINES_DEFAULT_THRESHOLD 0.1
#define SACCADE_LINES_DEFAULT_TOP_K 3
/* The faintest link ever chosen: a line of opacity under 1/256 rounds to nothing at 8 bits
 * per channel, and Cairo skips it altogether (its CAIRO_ALPHA_IS_CLEAR is alpha <= 255/65535),
 * so a weaker link would be counted but never drawn. */
#define SACCADE_LINES_MIN_WEIGHT (1.0 / 256)

typedef struct {
  int query, key;   /* run positions */
  int head;         /* the head's index in its layer */
  float weight;     /* the attention weight, > 0 */
} SaccadeLink;

struct _SaccadeLinesLinks {
  int n_heads;        /* the layer's heads: every link's head is in 0 .. n_heads - 1 */
  int q0, q1;         /* the queries chosen from, q0 .. q1 - 1 */
  double threshold;   /* as given, at least SACCADE_LINES_MIN_WEIGHT */
  int top_k;          /* 0: no limit */
  guint n_links;
  SaccadeLink *links; /* (n_links) weakest first (then by head, query, key): drawn in this
                       * order the strongest end on top whatever their head */
  /*< private >*/
  gatomicrefcount ref;
  guint capacity;
  gboolean finished;
};

/* An empty set for the queries @q0 .. @q1 - 1 of a layer of @n_heads heads, choosing links
 * of at least @threshold (raised to SACCADE_LINES_MIN_WEIGHT; NaN is that too) and at most
 * @top_k per query and head (<= 0: all). Never fails for 0 <= q0 <= q1 and n_heads >= 0
 * (g_return_val_if_fail otherwise). Caller unrefs. */
SaccadeLinesLinks *saccade_lines_links_new (int n_heads, int q0, int q1, double threshold,
                                            int top_k);

/* Chooses head @head's links from @rows: (q1 - q0, n_keys) row-major, row r is query q0 + r
 * and column c is key key0 + c. Give whole rows (key0 0, n_keys the run's tokens; for a
 * causal head keys 0 .. q1 - 1 are the whole rows): the top k are of the columns given.
 * A causal head's zeros above the diagonal are never chosen. NaN, infinite and non-positive weights are never chosen; weights above 1 are
 * kept as they are. Returns FALSE, choosing nothing more, when @cancellable (may be NULL)
 * fires. Not after finish. */
gboolean saccade_lines_links_add_head (SaccadeLinesLinks *links, int head, const float *rows,
                                       int key0, int n_keys, GCancellable *cancellable);

/* Sorts the links into drawing order; the set is then immutable. */
void saccade_lines_links_finish (SaccadeLinesLinks *links);

/* new + add_head for each head h of @heads (n_heads, q1 - q0, n_keys), keys key0 .. key0 +
 * n_keys - 1, + finish. NULL when @cancellable (may be NULL) fires. */
SaccadeLinesLinks *saccade_lines_links_select (const float *heads, int n_heads, int q0, int q1,
                                               int key0, int n_keys, double threshold,
                                               int top_k, GCancellable *cancellable);

SaccadeLinesLinks *saccade_lines_links_ref (SaccadeLinesLinks *links);
void saccade_lines_links_unref (SaccadeLinesLinks *links); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeLinesLinks, saccade_lines_links_unref)

/* How many links the figure @f draws: those of its links (or of the links it would choose
 * from its heads) with both ends among its tokens and a head it shows. For a status line
 * ("2,310 links"). */
guint saccade_figure_lines_count (const SaccadeLinesFigure *f);

/* The lines figure drawn with a cancellable: stops between strokes when @cancellable fires
 * and returns FALSE (the drawing is then incomplete); else as
 * saccade_figure_lines_draw_full(). For a worker thread. */
gboolean saccade_figure_lines_draw_cancellable (cairo_t *cr, const SaccadeLinesFigure *f,
                                                const SaccadeFigureStyle *style,
                                                gboolean highlight_is_key, double width,
                                                double height, SaccadeLinesGeometry *geom,
                                                GCancellable *cancellable);

/* The highlight of f->highlight_token (a query, or a key when @highlight_is_key) drawn over
 * an image of @f drawn without one, whose geometry is @geom (same size and style): the
 * token's links at full strength, its label boxed and the labels at the links' other ends
 * in bold. The caller fades the image under it (the widget shows its rows at 30 %). Draws
 * nothing without a highlight or when @geom is not of @f's tokens. Cheap (one pass over
 * the links, a few labels): for the main thread, so that hovering needs no new render. */
void saccade_figure_lines_draw_highlight (cairo_t *cr, const SaccadeLinesFigure *f,
                                          const SaccadeFigureStyle *style,
                                          gboolean highlight_is_key,
                                          const SaccadeLinesGeometry *geom);

G_END_DECLS
