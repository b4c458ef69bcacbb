/* test-figure-lines.c — the links the lines figure draws (ui/figures/saccade-figure-lines.h)
 * and the figure of a range, on hand-built matrices:
 *
 *   1. the threshold keeps weights >= T (T itself included), never NaN, infinities, zeros or
 *      negative weights, and is raised to 1/256;
 *   2. top k keeps the k largest of each (query, head) row, ties at the k-th place going to
 *      the earlier key; 0 keeps all;
 *   3. links carry run positions: rows of queries q0.., columns of keys key0..;
 *   4. the set is sorted weakest first, then by head, query, key; a cancelled choice
 *      returns NULL;
 *   5. the heads shown and the range filter the links the figure counts and draws, without
 *      choosing again; a key before the range is counted (drawn to the column's top);
 *   6. the figure of a range: the range's tokens are labelled with their run positions,
 *      its lines are in the colours of the heads shown only, and a link before the range
 *      ends at the top of the key column.
 */
#include <math.h>
#include <glib/gstdio.h>
#include <string.h>

#include "tests/ui/figure-pixels.h"
#include "ui/figures/saccade-figure-lines.h"
#include "ui/figures/saccade-figure-private.h"

static guint32
head_rgb24 (int head, int n_heads)
{
  double rgb[3];

  saccade_figure_head_color (head, n_heads, rgb);
  return ((guint32) lround (rgb[0] * 255) << 16) | ((guint32) lround (rgb[1] * 255) << 8)
         | (guint32) lround (rgb[2] * 255);
}

/* Whether @links holds (query, key, head). */
static gboolean
has_link (const SaccadeLinesLinks *links, int query, int key, int head)
{
  for (guint i = 0; i < links->n_links; i++)
    if (links->links[i].query == query && links->links[i].key == key
        && links->links[i].head == head)
      return TRUE;
  return FALSE;
}

/* 1. */
static void
test_threshold (void)
{
  /* one head, one query row of 6 keys */
  const float row[6] = { 0.5f, 0.2f, 0.19999f, NAN, INFINITY, -0.3f };
  g_autoptr (SaccadeLinesLinks) links = saccade_lines_links_select (row, 1, 0, 1, 0, 6, 0.2,
                                                                    0, NULL);
  g_autoptr (SaccadeLinesLinks) low = NULL;
  const float tiny[3] = { 0.002f, 0.004f, 0.0f };

  g_assert_cmpuint (links->n_links, ==, 2);
  g_assert_true (has_link (links, 0, 0, 0));
  g_assert_true (has_link (links, 0, 1, 0)); /* exactly at the threshold */
  g_assert_false (has_link (links, 0, 2, 0));
  /* the threshold is raised to 1/256 (0.0039): 0.002 and 0 are never chosen, NaN neither */
  low = saccade_lines_links_select (tiny, 1, 0, 1, 0, 3, NAN, 0, NULL);
  g_assert_cmpfloat (low->threshold, ==, SACCADE_LINES_MIN_WEIGHT);
  g_assert_cmpuint (low->n_links, ==, 1);
  g_assert_true (has_link (low, 0, 1, 0));
}

/* 2. */
static void
test_top_k_and_ties (void)
{
  /* query 0: 0.3 at keys 1, 2 and 4 (a three-way tie), 0.1 at key 0 */
  const float row[5] = { 0.1f, 0.3f, 0.3f, 0.0f, 0.3f };
  g_autoptr (SaccadeLinesLinks) two = saccade_lines_links_select (row, 1, 0, 1, 0, 5, 0.05, 2,
                                                                  NULL);
  g_autoptr (SaccadeLinesLinks) four = saccade_lines_links_select (row, 1, 0, 1, 0, 5, 0.05, 4,
                                                                   NULL);
  g_autoptr (SaccadeLinesLinks) all = saccade_lines_links_select (row, 1, 0, 1, 0, 5, 0.05, 0,
                                                                  NULL);
  /* the strongest come later in the row than a weaker one: they still displace it */
  const float rising[4] = { 0.1f, 0.2f, 0.3f, 0.4f };
  g_autoptr (SaccadeLinesLinks) rise = saccade_lines_links_select (rising, 1, 0, 1, 0, 4, 0.05,
                                                                   2, NULL);

  /* the tie at the 2nd place keeps the earlier keys: 1 and 2, not 4 */
  g_assert_cmpuint (two->n_links, ==, 2);
  g_assert_true (has_link (two, 0, 1, 0));
  g_assert_true (has_link (two, 0, 2, 0));
  g_assert_false (has_link (two, 0, 4, 0));
  g_assert_cmpuint (four->n_links, ==, 4);
  g_assert_true (has_link (four, 0, 0, 0));
  g_assert_cmpuint (all->n_links, ==, 4);
  g_assert_cmpuint (rise->n_links, ==, 2);
  g_assert_true (has_link (rise, 0, 2, 0));
  g_assert_true (has_link (rise, 0, 3, 0));
}

/* 3. and 4. */
static void
test_positions_and_order (void)
{
  /* 2 heads x 2 queries (positions 10, 11) x 3 keys (positions 5, 6, 7) */
  const float heads[2 * 2 * 3] = {
    0.6f, 0.4f, 0.0f,   0.0f, 0.3f, 0.7f,   /* head 0 */
    0.4f, 0.0f, 0.6f,   1.0f, 0.0f, 0.0f,   /* head 1 */
  };
  g_autoptr (SaccadeLinesLinks) links = saccade_lines_links_select (heads, 2, 10, 12, 5, 3, 0.1,
                                                                    0, NULL);
  g_autoptr (GCancellable) cancel = g_cancellable_new ();

  g_assert_cmpint (links->q0, ==, 10);
  g_assert_cmpint (links->q1, ==, 12);
  g_assert_cmpuint (links->n_links, ==, 7);
  g_assert_true (has_link (links, 10, 5, 0));
  g_assert_true (has_link (links, 11, 7, 0));
  g_assert_true (has_link (links, 11, 5, 1));
  g_assert_false (has_link (links, 11, 6, 1));
  /* weakest first; equal weights by head, then query, then key */
  for (guint i = 1; i < links->n_links; i++)
    g_assert_cmpfloat (links->links[i - 1].weight, <=, links->links[i].weight);
  /* 0.3, then 0.4 twice: (10, 6, head 0) before (10, 5, head 1); the 1.0 last */
  g_assert_cmpfloat (links->links[0].weight, ==, 0.3f);
  g_assert_cmpint (links->links[1].head, ==, 0);
  g_assert_cmpint (links->links[1].key, ==, 6);
  g_assert_cmpint (links->links[2].head, ==, 1);
  g_assert_cmpint (links->links[2].key, ==, 5);
  g_assert_cmpint (links->links[links->n_links - 1].head, ==, 1);
  g_assert_cmpint (links->links[links->n_links - 1].query, ==, 11);

  g_cancellable_cancel (cancel);
  g_assert_null (saccade_lines_links_select (heads, 2, 10, 12, 5, 3, 0.1, 0, cancel));
}

/* 4 tokens, 2 heads: head 0 attends to the previous token, head 1 to token 0. */
static float *
prev_and_sink (void)
{
  float *heads = g_new0 (float, 2 * 16);

  for (int i = 0; i < 4; i++)
    {
      heads[i * 4 + MAX (i - 1, 0)] = 1;
      heads[16 + i * 4] = 1;
    }
  return heads;
}

/* 5. */
static void
test_filters (void)
{
  g_autofree float *heads = prev_and_sink ();
  g_autoptr (SaccadeLinesLinks) links = saccade_lines_links_select (heads, 2, 0, 4, 0, 4, 0.1, 3,
                                                                    NULL);
  const int head0 = 0, head1 = 1, both[] = { 0, 1 };
  SaccadeLinesFigure f = { .n_heads = 2, .n = 4, .links = links, .head_ids = both,
                           .n_heads_total = 2 };

  g_assert_cmpuint (links->n_links, ==, 8);
  g_assert_cmpuint (saccade_figure_lines_count (&f), ==, 8);
  /* head 1 off */
  f.n_heads = 1;
  f.head_ids = &head0;
  g_assert_cmpuint (saccade_figure_lines_count (&f), ==, 4);
  /* no head */
  f.n_heads = 0;
  g_assert_cmpuint (saccade_figure_lines_count (&f), ==, 0);
  /* tokens 2..3, head 1: queries 2 and 3, both to key 0 (before the range: still drawn) */
  f.n_heads = 1;
  f.head_ids = &head1;
  f.position0 = 2;
  f.n = 2;
  g_assert_cmpuint (saccade_figure_lines_count (&f), ==, 2);
  /* tokens 0..0: query 0 alone */
  f.position0 = 0;
  f.n = 1;
  f.head_ids = both;
  f.n_heads = 2;
  g_assert_cmpuint (saccade_figure_lines_count (&f), ==, 2);
  /* drawing from heads chooses the same way (threshold, top k) */
  g_assert_cmpuint (saccade_figure_lines_count (&(SaccadeLinesFigure) {
    .n_heads = 2, .n = 4, .heads = heads, .threshold = 0.1, .top_k = 1 }), ==, 8);
}

/* The leftmost column of @s holding ink in rows [y0, y1). */
static int
leftmost_ink (cairo_surface_t *s, double y0, double y1, int x_max)
{
  for (int x = 0; x < x_max; x++)
    for (int y = (int) y0; y < (int) y1; y++)
      if (color_distance (pixel (s, x + 0.5, y + 0.5), 0xffffff) > 60)
        return x;
  return x_max;
}

/* 6. */
static void
test_range_figure (void)
{
  static const char *const labels[] = { "aa", "bb", "cc", "dd" };
  g_autofree float *heads = prev_and_sink ();
  g_autoptr (SaccadeLinesLinks) links = saccade_lines_links_select (heads, 2, 0, 4, 0, 4, 0.1, 3,
                                                                    NULL);
  const int head1 = 1, head0 = 0;
  guint32 c0 = head_rgb24 (0, 2), c1 = head_rgb24 (1, 2);
  SaccadeLinesFigure f = { .n_heads = 1, .n = 2, .links = links, .head_ids = &head1,
                           .n_heads_total = 2, .position0 = 2, .show_positions = TRUE,
                           .labels = labels + 2, .highlight_token = -1, .title = "range" };
  SaccadeLinesGeometry g;
  Canvas c;
  int n0 = 0, with_pos, without_pos;

  /* head 1 over tokens 2..3: its lines go from queries 2 and 3 to key 0, before the range:
   * they end past the top of the key column (half a row, at most half a font size of the
   * export style's 10 above it, 5 left of the labels), where they meet in head 1's colour */
  canvas_init (&c, 500, 300);
  saccade_figure_lines_draw_full (c.cr, &f, NULL, FALSE, 500, 300, &g);
  g_assert_cmpint (g.n, ==, 2);
  {
    double ex = g.right_x - 5, ey = g.y0 - MIN (0.5 * g.row_h, 5);
    double sx = g.left_x + 5, sy = g.y0 + 0.5 * g.row_h;   /* query 2's row */
    assert_color_near (pixel (c.surface, sx + 0.9 * (ex - sx), sy + 0.9 * (ey - sy)), c1, 60);
  }
  /* ... and nothing of head 0 is drawn between the columns */
  for (int y = (int) g.y0; y < (int) (g.y0 + 2 * g.row_h); y++)
    for (int x = (int) g.left_x; x < (int) g.right_x; x++)
      n0 += color_distance (pixel (c.surface, x + 0.5, y + 0.5), c0) <= 6;
  g_assert_cmpint (n0, ==, 0);
  /* the labels carry run positions: "2 cc" reaches further left than "cc" */
  with_pos = leftmost_ink (c.surface, g.y0, g.y0 + g.row_h, (int) g.left_x);
  canvas_clear (&c);
  f.show_positions = FALSE;
  canvas_init (&c, 500, 300);
  saccade_figure_lines_draw_full (c.cr, &f, NULL, FALSE, 500, 300, &g);
  without_pos = leftmost_ink (c.surface, g.y0, g.y0 + g.row_h, (int) g.left_x);
  g_assert_cmpint (with_pos, <, without_pos - 3);
  canvas_clear (&c);

  /* head 0 over tokens 2..3: the line 3 -> 2 inside the range, in head 0's colour, halfway
   * between row 0 (y0 + row/2) and row 1 (y0 + 3 row/2) */
  f.head_ids = &head0;
  f.show_positions = TRUE;
  canvas_init (&c, 500, 300);
  saccade_figure_lines_draw_full (c.cr, &f, NULL, FALSE, 500, 300, &g);
  assert_color_near (pixel (c.surface, (g.left_x + g.right_x) / 2, g.y0 + g.row_h), c0, 40);
  canvas_clear (&c);

  /* natural size and export of a range of chosen links */
  {
    g_autofree char *dir = g_dir_make_tmp ("saccade-lines-XXXXXX", NULL);
    g_autofree char *path = g_build_filename (dir, "range.png", NULL);
    g_autoptr (GError) error = NULL;
    double w, h;
    f.head_ids = NULL;
    f.n_heads = 2;
    saccade_figure_lines_natural_size (&f, &w, &h);
    g_assert_cmpfloat (w, >, 100);
    g_assert_cmpfloat (h, >, 50);
    g_assert_true (saccade_figure_export_lines (&f, path, NULL, &error));
    g_assert_no_error (error);
    check_png (path);
    /* every head off: still a figure of the tokens */
    f.n_heads = 0;
    f.head_ids = &head0;
    g_assert_true (saccade_figure_export_lines (&f, path, NULL, &error));
    g_assert_no_error (error);
    check_png (path);
    g_unlink (path);
    g_rmdir (dir);
  }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/figures/lines/threshold", test_threshold);
  g_test_add_func ("/figures/lines/top-k-ties", test_top_k_and_ties);
  g_test_add_func ("/figures/lines/positions-order", test_positions_and_order);
  g_test_add_func ("/figures/lines/filters", test_filters);
  g_test_add_func ("/figures/lines/range-figure", test_range_figure);
  return g_test_run ();
}
