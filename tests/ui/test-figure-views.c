/* test-figure-views.c — the figure widgets in a real window (suite "ui"; meson runs it
 * under xvfb-run, and it exits 77 when no display can be opened).
 *
 * Each widget is shown with hand-built data, drawn through GTK (GtkWidgetPaintable →
 * render node → texture on the window's renderer) and checked by pixels: the colours of
 * the data appear, a colour map change shows, zoom actions and "head-activated" work,
 * and clearing the data leaves an empty widget. The predictions panel's rows are chosen
 * (activated as a click or Enter does) and marked A and B. With SC_TEST_SCREENSHOT_DIR set, every
 * frame checked is also saved there as a PNG, for a person to look at.
 */
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "tests/ui/view-harness.h"

#include "ui/figures/saccade-colormap.h"
#include "ui/widgets/saccade-grid-view.h"
#include "ui/widgets/saccade-heatmap-view.h"
#include "ui/widgets/saccade-lines-view.h"
#include "ui/widgets/saccade-predictions-view.h"

static const float known3[9] = { 1, 0, 0, 0.25f, 0.75f, 0, 0.1f, 0.2f, 0.7f };
static const char *const labels3[3] = { "The", "␣cat", "␣sat" };

static void
on_notify (GObject *obj, GParamSpec *pspec, int *count)
{
  (*count)++;
}

static void
test_heatmap_view (void)
{
  GtkWidget *view = saccade_heatmap_view_new ();
  GtkWidget *window = show_in_window (view);
  SaccadeHeatmapView *hv = SACCADE_HEATMAP_VIEW (view);
  GdkTexture *texture;
  int zoom_notes = 0;

  saccade_heatmap_view_set_data (hv, known3, 3, 3, labels3, labels3, TRUE);
  saccade_heatmap_view_set_title (hv, "Layer 0, head 0");
  g_assert_cmpstr (saccade_heatmap_view_get_title (hv), ==, "Layer 0, head 0");
  texture = draw_widget (view);
  g_assert_cmpint (count_color (texture, 0xfde725), >, 100); /* the 1.0 cell, viridis */
  g_object_unref (texture);

  g_object_set (view, "colormap", SACCADE_COLORMAP_MAGMA, NULL);
  g_assert_cmpint (saccade_heatmap_view_get_colormap (hv), ==, SACCADE_COLORMAP_MAGMA);
  texture = draw_widget (view);
  g_assert_cmpint (count_color (texture, 0xfde725), ==, 0);
  g_assert_cmpint (count_color (texture, 0xfcfdbf), >, 100); /* magma's top */
  g_object_unref (texture);
  saccade_heatmap_view_set_scale (hv, SACCADE_SCALE_LOG);
  g_assert_cmpint (saccade_heatmap_view_get_scale (hv), ==, SACCADE_SCALE_LOG);

  g_signal_connect (view, "notify::zoom", G_CALLBACK (on_notify), &zoom_notes);
  g_assert_true (gtk_widget_activate_action (view, "heatmap.zoom-in", NULL));
  g_assert_cmpfloat (saccade_heatmap_view_get_zoom (hv), >, 1.0);
  texture = draw_widget (view);
  g_object_unref (texture);
  saccade_heatmap_view_reset_zoom (hv);
  g_assert_cmpfloat (saccade_heatmap_view_get_zoom (hv), ==, 1.0);
  g_assert_cmpint (zoom_notes, ==, 2);

  /* a new shape resets the zoom; clearing draws nothing and does not crash */
  g_assert_true (gtk_widget_activate_action (view, "heatmap.zoom-in", NULL));
  saccade_heatmap_view_set_data (hv, known3, 1, 3, NULL, NULL, FALSE);
  g_assert_cmpfloat (saccade_heatmap_view_get_zoom (hv), ==, 1.0);
  saccade_heatmap_view_set_data (hv, NULL, 0, 0, NULL, NULL, FALSE);
  texture = draw_widget (view);
  g_object_unref (texture);
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
on_activated (SaccadeGridView *grid, int layer, int head, int *got)
{
  got[0] = layer;
  got[1] = head;
}

static void
test_grid_view (void)
{
  GtkWidget *view = saccade_grid_view_new ();
  GtkWidget *window = show_in_window (view);
  SaccadeGridView *gv = SACCADE_GRID_VIEW (view);
  g_autofree float *heads = g_new0 (float, 2 * 4 * 9);
  double metric[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
  GdkTexture *first, *second;
  int got[2] = { -1, -1 };

  for (int h = 0; h < 8; h++)
    memcpy (heads + h * 9, known3, sizeof known3);
  saccade_grid_view_set_data (gv, 2, 4, 2, 3, heads, NULL, NULL);
  first = draw_widget (view);
  g_assert_cmpint (count_color (first, 0xfde725), >, 8 * 10);
  second = draw_widget (view);
  g_assert_cmpint (count_color (second, 0xfde725), ==, count_color (first, 0xfde725));
  g_object_unref (first);
  g_object_unref (second);

  saccade_grid_view_set_metric (gv, metric, "entropy");
  first = draw_widget (view);
  g_assert_cmpint (count_color (first, 0x440154), >, 20); /* the lowest metric's frame */
  g_object_unref (first);

  g_signal_connect (view, "head-activated", G_CALLBACK (on_activated), got);
  g_assert_true (gtk_widget_activate_action (view, "grid.activate", NULL));
  g_assert_cmpint (got[0], ==, -1); /* nothing selected yet */
  saccade_grid_view_set_selected (gv, 1, 2);
  g_assert_true (gtk_widget_activate_action (view, "grid.activate", NULL));
  g_assert_cmpint (got[0], ==, 1);
  g_assert_cmpint (got[1], ==, 2);
  saccade_grid_view_set_colormap (gv, SACCADE_COLORMAP_CIVIDIS);
  g_assert_cmpint (saccade_grid_view_get_colormap (gv), ==, SACCADE_COLORMAP_CIVIDIS);
  saccade_grid_view_set_data (gv, 0, 0, 1, 0, NULL, NULL, NULL);
  first = draw_widget (view);
  g_object_unref (first);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* Iterates until the lines view has no render under way (it draws in a worker), then
 * draws it; a snapshot may start a render, so wait, draw, and wait again until one draw
 * finds it idle. */
static GdkTexture *
draw_lines_view (GtkWidget *view)
{
  /* A widget not yet allocated draws nothing and starts no render. */
  for (int tries = 0; tries < 500 && gtk_widget_get_width (view) <= 0; tries++)
    iterate ();
  for (int round = 0; round < 50; round++)
    {
      GdkTexture *texture;
      for (int tries = 0; tries < 500 && saccade_lines_view_get_busy (SACCADE_LINES_VIEW (view));
           tries++)
        iterate ();
      texture = draw_widget (view);
      if (!saccade_lines_view_get_busy (SACCADE_LINES_VIEW (view)))
        return texture;
      g_object_unref (texture);
    }
  g_assert_not_reached ();
}

static void
test_lines_view (void)
{
  GtkWidget *view = saccade_lines_view_new ();
  GtkWidget *window = show_in_window (view);
  float heads[9] = { 1, 0, 0, 1, 0, 0, 1, 0, 0 };
  GdkTexture *texture;

  saccade_lines_view_set_data (SACCADE_LINES_VIEW (view), 1, 3, heads, labels3);
  saccade_lines_view_set_title (SACCADE_LINES_VIEW (view), "Layer 0");
  texture = draw_lines_view (view);
  g_assert_cmpint (count_color (texture, 0x1f77b4), >, 100); /* head 0's blue */
  g_object_unref (texture);
  saccade_lines_view_set_data (SACCADE_LINES_VIEW (view), 0, 0, NULL, NULL);
  gtk_window_destroy (GTK_WINDOW (window));
}

/* The pixels of colour @rgb in the view showing @links over tokens @p0 .. @p0 + @n - 1
 * with head @head alone. */
static int
lines_count (GtkWidget *view, SaccadeLinesLinks *links, int p0, int n, const char *const *labels,
             int head, guint32 rgb)
{
  GdkTexture *texture;
  int count;

  saccade_lines_view_set_links (SACCADE_LINES_VIEW (view), links, p0, n, labels + p0, p0 > 0,
                                &head, 1);
  texture = draw_lines_view (view);
  count = count_color (texture, rgb);
  g_object_unref (texture);
  return count;
}

static guint32
head_rgb (int head, int n_heads)
{
  double c[3];

  saccade_figure_head_color (head, n_heads, c);
  return ((guint32) lround (c[0] * 255) << 16) | ((guint32) lround (c[1] * 255) << 8)
         | (guint32) lround (c[2] * 255);
}

/* Links chosen beforehand, a range of a longer run and one head shown: each picture is
 * compared with the same view over an empty set of links (the same legend and captions),
 * so the difference is the lines alone. */
static void
test_lines_view_links (void)
{
  GtkWidget *view = saccade_lines_view_new ();
  GtkWidget *window = show_in_window (view);
  /* 2 heads x 6 tokens: head 0 attends to the previous token (0 -> 0), head 1 to token 0 */
  float heads[2 * 36] = { 0 };
  const char *labels[] = { "a", "b", "c", "d", "e", "f" };
  g_autoptr (SaccadeLinesLinks) links = NULL;
  g_autoptr (SaccadeLinesLinks) none = saccade_lines_links_new (2, 0, 6, 0.1, 3);
  guint32 blue = head_rgb (0, 2), orange = head_rgb (1, 2);

  for (int i = 0; i < 6; i++)
    {
      heads[i * 6 + MAX (i - 1, 0)] = 1;
      heads[36 + i * 6] = 1;
    }
  links = saccade_lines_links_select (heads, 2, 0, 6, 0, 6, 0.1, 3, NULL);
  saccade_lines_links_finish (none);
  g_assert_cmpuint (links->n_links, ==, 12);

  /* tokens 2..5, head 0: its previous-token lines 3->2, 4->3, 5->4 */
  g_assert_cmpint (lines_count (view, links, 2, 4, labels, 0, blue), >,
                   lines_count (view, none, 2, 4, labels, 0, blue) + 50);
  g_assert_cmpint (lines_count (view, links, 2, 4, labels, 0, orange), ==,
                   lines_count (view, none, 2, 4, labels, 0, orange));
  /* tokens 2..5, head 1: all its links go to token 0, before the range: drawn to the top
   * of the key column */
  g_assert_cmpint (lines_count (view, links, 2, 4, labels, 1, orange), >,
                   lines_count (view, none, 2, 4, labels, 1, orange) + 50);
  /* the whole run, head 1: its lines into token 0 */
  g_assert_cmpint (lines_count (view, links, 0, 6, labels, 1, orange), >,
                   lines_count (view, none, 0, 6, labels, 1, orange) + 100);

  /* Hovering query 5 keeps its line (5 -> 0) at full strength and fades the other five:
   * fewer full-colour pixels, but some; no render is needed for it. */
  {
    int all = lines_count (view, links, 0, 6, labels, 1, orange), lit;
    GdkTexture *texture;
    saccade_lines_view_set_highlight (SACCADE_LINES_VIEW (view), 5, FALSE);
    g_assert_false (saccade_lines_view_get_busy (SACCADE_LINES_VIEW (view)));
    texture = draw_lines_view (view);
    lit = count_color (texture, orange);
    g_object_unref (texture);
    g_assert_cmpint (saccade_lines_view_get_highlight (SACCADE_LINES_VIEW (view), NULL), ==, 5);
    g_assert_cmpint (lit, <, all - 50);
    g_assert_cmpint (lit, >, lines_count (view, none, 0, 6, labels, 1, orange) + 20);
  }
  gtk_window_destroy (GTK_WINDOW (window));
}

static void
on_chosen (SaccadePredictionsView *view, int row, gboolean contrast, int *got)
{
  got[0] = row;
  got[1] = contrast;
}

/* The row buttons of @w, in order. */
static void
row_buttons (GtkWidget *w, GPtrArray *out)
{
  if (GTK_IS_BUTTON (w))
    g_ptr_array_add (out, w);
  else
    for (GtkWidget *c = gtk_widget_get_first_child (w); c != NULL;
         c = gtk_widget_get_next_sibling (c))
      row_buttons (c, out);
}

static void
test_predictions_view (void)
{
  static const char *const labels[3] = { "␣Mary", "␣the", "␣John" };
  static const double probs[3] = { 0.9, 0.05, 0.01 };
  GtkWidget *view = saccade_predictions_view_new ();
  GtkWidget *window = show_in_window (view);
  SaccadePredictionsView *pv = SACCADE_PREDICTIONS_VIEW (view);
  g_autoptr (GPtrArray) buttons = g_ptr_array_new ();
  int got[2] = { -1, -1 };
  char *text;

  saccade_predictions_view_set (pv, "Next", 3, labels, probs);
  row_buttons (view, buttons);
  g_assert_cmpuint (buttons->len, ==, 3);
  /* not choosable until the window says so */
  g_assert_false (gtk_widget_is_sensitive (g_ptr_array_index (buttons, 2)));
  saccade_predictions_view_set_choosable (pv, TRUE, "tip");
  g_assert_true (gtk_widget_is_sensitive (g_ptr_array_index (buttons, 2)));
  g_assert_cmpstr (gtk_widget_get_tooltip_text (g_ptr_array_index (buttons, 2)), ==, "tip");
  g_signal_connect (view, "chosen", G_CALLBACK (on_chosen), got);
  gtk_widget_activate (g_ptr_array_index (buttons, 2));
  /* a button's activation ends (and "clicked" comes) on the main loop */
  for (gint64 until = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
       got[0] < 0 && g_get_monotonic_time () < until;)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpint (got[0], ==, 2);
  g_assert_false (got[1]);
  /* Ctrl+Enter on row 1 (its shortcut's action, as the key runs it): the contrast */
  {
    GtkWidget *b1 = g_ptr_array_index (buttons, 1);
    g_autoptr (GListModel) ctls = gtk_widget_observe_controllers (b1);
    gboolean ran = FALSE;
    for (guint i = 0; i < g_list_model_get_n_items (ctls) && !ran; i++)
      {
        g_autoptr (GObject) c = g_list_model_get_item (ctls, i);
        if (GTK_IS_SHORTCUT_CONTROLLER (c))
          {
            g_autoptr (GtkShortcut) sc = g_list_model_get_item (G_LIST_MODEL (c), 0);
            g_autofree char *trigger =
              gtk_shortcut_trigger_to_string (gtk_shortcut_get_trigger (sc));
            g_assert_nonnull (strstr (trigger, "<Control>Return"));
            ran = gtk_shortcut_action_activate (gtk_shortcut_get_action (sc), 0, b1, NULL);
          }
      }
    g_assert_true (ran);
    g_assert_cmpint (got[0], ==, 1);
    g_assert_true (got[1]);
  }

  text = saccade_predictions_view_dup_row_text (pv, 0);
  g_assert_cmpstr (text, ==, "␣Mary 90.0 %");
  g_free (text);
  saccade_predictions_view_set_marks (pv, 0, 2);
  text = saccade_predictions_view_dup_row_text (pv, 0);
  g_assert_cmpstr (text, ==, "A ␣Mary 90.0 %");
  g_free (text);
  text = saccade_predictions_view_dup_row_text (pv, 1);
  g_assert_cmpstr (text, ==, "␣the 5.0 %");
  g_free (text);
  text = saccade_predictions_view_dup_row_text (pv, 2);
  g_assert_cmpstr (text, ==, "B ␣John 1.0 %");
  g_free (text);
  /* one row cannot be both: A wins */
  saccade_predictions_view_set_marks (pv, 1, 1);
  text = saccade_predictions_view_dup_row_text (pv, 1);
  g_assert_cmpstr (text, ==, "A ␣the 5.0 %");
  g_free (text);
  /* new rows keep the choosability, not the marks */
  saccade_predictions_view_set (pv, "Next", 2, labels, probs);
  text = saccade_predictions_view_dup_row_text (pv, 1);
  g_assert_cmpstr (text, ==, "␣the 5.0 %");
  g_free (text);
  g_assert_null (saccade_predictions_view_dup_row_text (pv, 2));
  g_ptr_array_set_size (buttons, 0);
  row_buttons (view, buttons);
  g_assert_cmpuint (buttons->len, ==, 2);
  g_assert_true (gtk_widget_is_sensitive (g_ptr_array_index (buttons, 1)));
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
  g_test_add_func ("/ui/views/heatmap", test_heatmap_view);
  g_test_add_func ("/ui/views/grid", test_grid_view);
  g_test_add_func ("/ui/views/lines", test_lines_view);
  g_test_add_func ("/ui/views/lines-links", test_lines_view_links);
  g_test_add_func ("/ui/views/predictions", test_predictions_view);
  return g_test_run ();
}
