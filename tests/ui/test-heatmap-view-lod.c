/* test-heatmap-view-lod.c — SaccadeHeatmapView with an 8,192-token head (suite "ui"; meson
 * runs it under xvfb-run, and it exits 77 when no display can be opened).
 *
 * A synthetic head (tests/ui/synthetic-head.h: previous-token diagonal, sink column, noise)
 * as the store's fp16 triangle, its pyramid built by the async builder, shown in a
 * 1000 x 800 window:
 *   - whole: drawn from a level whose cells are at least a pixel; the diagonal's and the
 *     sink's colours are on screen; the tooltip at the diagonal names the strongest link of
 *     the block under the pointer, with positions;
 *   - zoomed onto 24 tokens: exact cells (level 0), token labels (measured in a worker),
 *     the tooltip is the cell's exact weight; the visible range is those tokens;
 *   - an overview first (64-token blocks), then the pyramid: the zoom and range stay;
 *   - the range: set, read back, "range-changed" once per change, zoomed onto, cleared by
 *     Escape's action, kept while stepping to a head of the same shape;
 *   - export: the range (or the visible tokens) through the worker, byte for byte the file
 *     saccade_figure_export_heatmap_lod() writes for that range.
 * SC_TEST_SCREENSHOT_DIR: every frame checked is saved there (the 8,192-token screenshots).
 */
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "tests/ui/synthetic-head.h"
#include "tests/ui/view-harness.h"
#include "ui/widgets/saccade-heatmap-view.h"

#define N 8192

static const char *const words[] = { "The", "␣cat", "␣sat", "␣on", "␣the", "␣mat", ".",
                                     "⏎", "␣It", "␣was", "␣tired", "," };

static char **
make_labels (void)
{
  char **labels = g_new0 (char *, N + 1);
  for (int i = 0; i < N; i++)
    labels[i] = g_strdup (words[i % G_N_ELEMENTS (words)]);
  return labels;
}

static void
on_built (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  *(SaccadeLod **) user_data = saccade_lod_new_fp16_triangle_finish (result, &error);
  g_assert_no_error (error);
}

static SaccadeLod *
build_head (void)
{
  g_autoptr (GBytes) tri = synth_head_fp16 (N, 1);
  SaccadeLod *lod = NULL;

  saccade_lod_new_fp16_triangle_async (tri, N, NULL, on_built, &lod);
  while (lod == NULL)
    g_main_context_iteration (NULL, TRUE);
  return lod;
}

static guint32
viridis (double t)
{
  return saccade_colormap_rgb24 (SACCADE_COLORMAP_VIRIDIS, t);
}

static void
on_range_changed (SaccadeHeatmapView *view, int *count)
{
  (*count)++;
}

/* The widget point at the middle of the drawn block holding token (@r, @c). */
static void
block_point (SaccadeHeatmapView *view, int r, int c, double *x, double *y)
{
  const SaccadeHeatmapGeometry *g = saccade_heatmap_view_get_geometry (view);
  int b = MAX (1, g->block);

  *x = g->x + (c / b * b + b / 2.0 - g->range.col0) * g->cell_w;
  *y = g->y + (r / b * b + b / 2.0 - g->range.row0) * g->cell_h;
}

static void
on_exported (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (GError) error = NULL;
  gboolean ok = saccade_heatmap_view_export_finish (SACCADE_HEATMAP_VIEW (source), result, &error);
  g_assert_no_error (error);
  *(int *) user_data = ok ? 1 : -1;
}

static void
assert_same_file (const char *a, const char *b)
{
  g_autofree char *da = NULL, *db = NULL;
  gsize la, lb;

  g_assert_true (g_file_get_contents (a, &da, &la, NULL));
  g_assert_true (g_file_get_contents (b, &db, &lb, NULL));
  g_assert_cmpuint (la, ==, lb);
  g_assert_true (memcmp (da, db, la) == 0);
}

static void
test_heatmap_8k (void)
{
  g_auto (GStrv) labels = make_labels ();
  g_autoptr (SaccadeLod) lod = build_head ();
  GtkWidget *widget = saccade_heatmap_view_new ();
  SaccadeHeatmapView *view = SACCADE_HEATMAP_VIEW (widget);
  GtkWidget *window = show_in_window_sized (widget, 1000, 800);
  const SaccadeHeatmapGeometry *g = saccade_heatmap_view_get_geometry (view);
  g_autofree char *text = NULL;
  GdkTexture *texture;
  SaccadeTokenRange vis;
  double x, y, y_bare;
  int changes = 0;

  g_signal_connect (view, "range-changed", G_CALLBACK (on_range_changed), &changes);
  saccade_heatmap_view_set_lod (view, lod, (const char *const *) labels,
                                (const char *const *) labels);
  saccade_heatmap_view_set_title (view, "Layer 3, head 5 · 8,192 tokens");
  g_assert_true (saccade_heatmap_view_get_lod (view) == lod);

  /* Whole: a pyramid level, the diagonal's and the sink's colours. */
  texture = draw_widget (widget);
  y_bare = g->y; /* whole, no labels: the column margin holds the numbers only */
  g_assert_cmpint (g->n_rows, ==, N);
  g_assert_cmpint (g->level, >, 0);
  g_assert_cmpfloat (g->cell_w * g->block, >=, 1.0);
  g_assert_cmpint (count_color (texture, viridis (SYNTH_PREV)), >, 300);
  g_assert_cmpint (count_color (texture, viridis (SYNTH_SINK)), >, 300);
  g_object_unref (texture);
  block_point (view, 5000, 4999, &x, &y);
  text = saccade_heatmap_view_describe_at (view, x, y);
  g_assert_nonnull (text);
  /* the strongest link of the block: query 5000's block → its previous token, 0.6 */
  g_assert_nonnull (strstr (text, "→"));
  g_assert_nonnull (strstr (text, "0.6001")); /* 0.6 in fp16 */
  g_assert_nonnull (strstr (text, "the strongest of queries"));
  g_clear_pointer (&text, g_free);
  block_point (view, 100, 6000, &x, &y);
  text = saccade_heatmap_view_describe_at (view, x, y);
  g_assert_nonnull (strstr (text, "masked"));
  g_clear_pointer (&text, g_free);

  /* Zoomed onto 24 tokens: exact cells, the exact weight in the tooltip. */
  saccade_heatmap_view_zoom_to (view, 4000, 4024, 4000, 4024);
  g_assert_cmpfloat (saccade_heatmap_view_get_zoom (view), >, 300);
  /* 8,192 labels are measured in a worker; once they are, the column labels push the
   * matrix down (wait for it, ~10 s at most) */
  texture = draw_widget (widget);
  for (int tries = 0; tries < 20 && g->y < y_bare + 10; tries++)
    {
      g_object_unref (texture);
      texture = draw_widget (widget);
    }
  g_assert_cmpfloat (g->y, >, y_bare + 10);
  g_assert_cmpint (g->level, ==, 0);
  g_assert_cmpint (g->block, ==, 1);
  g_assert_cmpfloat (g->mini_w, >, 0); /* where we are */
  g_assert_cmpint (count_color (texture, viridis (SYNTH_PREV)), >, 20 * 20 * 20);
  g_object_unref (texture);
  g_assert_true (saccade_heatmap_view_get_visible_range (view, &vis));
  g_assert_cmpint (vis.q0, ==, 4000);
  g_assert_cmpint (vis.q1, ==, 4024);
  g_assert_cmpint (vis.k0, ==, 4000);
  block_point (view, 4010, 4009, &x, &y);
  text = saccade_heatmap_view_describe_at (view, x, y);
  g_assert_cmpstr (text, ==, "“␣sat” (4010) → “␣cat” (4009): 0.6001");
  g_clear_pointer (&text, g_free);

  /* The range. */
  g_assert_false (saccade_heatmap_view_get_range (view, NULL, NULL, NULL, NULL));
  saccade_heatmap_view_set_range (view, 4004, 4012, 4001, 4009);
  saccade_heatmap_view_set_range (view, 4004, 4012, 4001, 4009); /* unchanged: no signal */
  g_assert_cmpint (changes, ==, 1);
  {
    int q0, q1, k0, k1;
    g_assert_true (saccade_heatmap_view_get_range (view, &q0, &q1, &k0, &k1));
    g_assert_cmpint (q0, ==, 4004);
    g_assert_cmpint (q1, ==, 4012);
    g_assert_cmpint (k0, ==, 4001);
    g_assert_cmpint (k1, ==, 4009);
  }
  texture = draw_widget (widget); /* the selection over the cells */
  g_object_unref (texture);
  /* zoom onto the range: its 8 rows fill the view (square cells: its 8 keys too) */
  g_assert_true (gtk_widget_activate_action (widget, "heatmap.zoom-to-range", NULL));
  g_assert_true (saccade_heatmap_view_get_visible_range (view, &vis));
  g_assert_cmpint (vis.q0, ==, 4004);
  g_assert_cmpint (vis.q1, ==, 4012);
  g_assert_cmpint (vis.k0, ==, 4001);
  g_assert_cmpint (vis.k1, ==, 4009);
  saccade_heatmap_view_zoom_to (view, 4000, 4024, 4000, 4024);
  g_assert_true (saccade_heatmap_view_get_visible_range (view, &vis));

  /* Export: the range, as the figure's own export writes it. */
  {
    g_autofree char *dir = g_dir_make_tmp ("saccade-view-XXXXXX", NULL);
    g_autofree char *a = g_build_filename (dir, "view.png", NULL);
    g_autofree char *b = g_build_filename (dir, "figure.png", NULL);
    g_autofree char *c = g_build_filename (dir, "visible.png", NULL);
    g_autoptr (GError) error = NULL;
    SaccadeHeatmapLodFigure f = { .lod = lod, .row_labels = (const char *const *) labels,
                                  .col_labels = (const char *const *) labels,
                                  .title = "Layer 3, head 5 · 8,192 tokens" };
    SaccadeTokenRange r;
    int done = 0;

    g_assert_true (saccade_heatmap_view_get_export_range (view, &r));
    g_assert_cmpint (r.q0, ==, 4004);
    saccade_heatmap_view_export_async (view, a, NULL, NULL, on_exported, &done);
    while (done == 0)
      g_main_context_iteration (NULL, TRUE);
    g_assert_cmpint (done, ==, 1);
    g_assert_true (saccade_figure_export_heatmap_lod (&f, &r, b, NULL, &error));
    assert_same_file (a, b);

    /* without a range: the visible tokens */
    gtk_widget_activate_action (widget, "heatmap.clear-range", NULL);
    g_assert_cmpint (changes, ==, 2);
    g_assert_true (saccade_heatmap_view_export (view, c, NULL, &error));
    g_assert_true (saccade_figure_export_heatmap_lod (&f, &vis, b, NULL, &error));
    assert_same_file (c, b);
    g_unlink (a);
    g_unlink (b);
    g_unlink (c);
    g_rmdir (dir);
  }

  /* Stepping to another head of the same shape keeps zoom and range. */
  saccade_heatmap_view_set_range (view, 4004, 4012, 4001, 4009);
  g_assert_cmpint (changes, ==, 3);
  saccade_heatmap_view_set_lod (view, lod, NULL, NULL);
  g_assert_true (saccade_heatmap_view_get_range (view, NULL, NULL, NULL, NULL));
  g_assert_cmpfloat (saccade_heatmap_view_get_zoom (view), >, 300);
  /* a head of another shape clears both */
  saccade_heatmap_view_set_data (view, (const float[]) { 1, 0, 0.5f, 0.5f }, 2, 2, NULL, NULL,
                                 TRUE);
  g_assert_false (saccade_heatmap_view_get_range (view, NULL, NULL, NULL, NULL));
  g_assert_cmpint (changes, ==, 4);
  g_assert_cmpfloat (saccade_heatmap_view_get_zoom (view), ==, 1.0);
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
test_overview_first (void)
{
  GtkWidget *widget = saccade_heatmap_view_new ();
  SaccadeHeatmapView *view = SACCADE_HEATMAP_VIEW (widget);
  GtkWidget *window = show_in_window_sized (widget, 1000, 800);
  const SaccadeHeatmapGeometry *g = saccade_heatmap_view_get_geometry (view);
  int b = saccade_lod_overview_block (N, 128), s = (N + b - 1) / b;
  g_autofree float *ov = g_new (float, s * s);
  g_autoptr (SaccadeLod) coarse = NULL, full = NULL;
  g_autofree char *text = NULL;
  GdkTexture *texture;
  double x, y;

  /* The overview the store would keep: blocks of 64 tokens, max-pooled (made here from
   * the synthetic head's known shape: diagonal blocks hold the previous-token weight,
   * column 0 the sink). */
  for (int i = 0; i < s; i++)
    for (int j = 0; j < s; j++)
      ov[i * s + j] = j > i ? NAN : j == i ? SYNTH_PREV : j == 0 ? SYNTH_SINK : 0.001f;
  ov[0] = 1.0f;
  coarse = saccade_lod_new_overview (ov, s, s, N, N, TRUE, NULL);
  saccade_heatmap_view_set_lod (view, coarse, NULL, NULL);
  texture = draw_widget (widget);
  g_assert_cmpint (g->block, >=, 64);
  g_assert_cmpint (count_color (texture, viridis (SYNTH_PREV)), >, 300);
  g_object_unref (texture);
  block_point (view, 5000, 4999, &x, &y);
  text = saccade_heatmap_view_describe_at (view, x, y);
  g_assert_nonnull (strstr (text, "loading"));
  saccade_heatmap_view_zoom_to (view, 0, 1024, 0, 1024);
  saccade_heatmap_view_set_range (view, 10, 20, 10, 20);

  full = build_head ();
  saccade_heatmap_view_set_lod (view, full, NULL, NULL);
  g_assert_cmpfloat (saccade_heatmap_view_get_zoom (view), ==, 8.0);
  g_assert_true (saccade_heatmap_view_get_range (view, NULL, NULL, NULL, NULL));
  texture = draw_widget (widget);
  g_assert_cmpint (g->block, <, 64);
  g_object_unref (texture);
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  if (!gtk_init_check ())
    {
      g_printerr ("no display: skipping the widget tests\n");
      return 77;
    }
  g_test_add_func ("/ui/heatmap-view/8k", test_heatmap_8k);
  g_test_add_func ("/ui/heatmap-view/overview-first", test_overview_first);
  return g_test_run ();
}
