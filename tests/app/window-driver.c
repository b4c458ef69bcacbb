/* window-driver.c — a scripted user for the window tests (tests/app/test-app-*.sh), run by
 * saccade-window-test (the window of libsaccade-app, with this driver; the saccade binary
 * has none of it).
 *
 * The script ($SACCADE_TEST_SCRIPT, read by saccade-window-test.c) is one command per
 * line, played in order, each once the window is idle (nothing loading, capturing or
 * listing) and has drawn a few frames. The driver reaches the window as a user does:
 * through its win.* and app.* actions, the pages' page.* actions and the public API of
 * saccade-window.h and the pages' headers — never the window's private parts. A failed
 * command prints "test-driver: line N: why", makes the test exit with status 1 and quits.
 * Commands:
 *
 *   expect-runs N            the sidebar lists N runs
 *   select newest|ID         select a run in the sidebar (and wait for it to load)
 *   expect-run ID|newest     that run is shown
 *   page heatmap|model|lines show a page
 *   head L H                 pick layer L, head H
 *   action NAME [STRING]     activate a window action (win.next-head, ...)
 *   page-action NAME [STRING]  activate an action of the shown page (page.view table,
 *                            page.sort-heads -entropy, page.pair "0.1 2.3", ...)
 *   expect-table-row N L H   row N of the Model page's heads table shows layer L, head H
 *   expect-run-item N TEXT   item N of the runs list (0: the newest) says TEXT in its subtitle
 *                            (the model, the size), and its tooltip's text line is short
 *   expect-view-title [TEXT] the shown page's first heatmap view's title contains TEXT;
 *                            without TEXT, it has none (the view shows nothing)
 *   table-scroll-end         scroll the Model page's heads table to its last rows
 *   expect-table-top         the heads table is scrolled to its top (its first rows in sight)
 *   key KEYVAL               send a key press to the shown page's figure (Right, Page_Down)
 *   expect-head L H          the pickers show layer L, head H
 *   colormap ID / scale ID / metric ID / backend ID    change a setting
 *   setting KEY VALUE        set the string setting KEY (e.g. ask-above 100-mb)
 *   backend-preference ID    what choosing ID in Preferences → Backend does: the row first
 *                            shows the current setting, then the setting follows the row
 *   expect-backend TEXT      the header bar's backend badge is shown and it, or its
 *                            tooltip, contains TEXT
 *   type TEXT                put TEXT in the sentence entry
 *   prompt TEXT              put TEXT, C escapes read (\n a newline), in the prompt editor's
 *                            text view (the entry follows)
 *   expect-sentence TEXT     the sentence entry holds TEXT exactly (C escapes read)
 *   prompt-editor open|close show or hide the prompt editor (the popover of the header bar)
 *   capture-option chat yes|no / capture-option generate N   the prompt editor's options
 *   screenshot-prompt PATH   render the prompt editor (open) into a PNG
 *   prompt-ctrl-enter        what Ctrl+Enter in the prompt editor's text view does (its
 *                            capture-phase shortcut for Ctrl+Return, activated there)
 *   run                      press Run and wait for the run to be stored and shown
 *   run-then-cancel          press Run, then Cancel once the first layer is done
 *   expect-status TEXT       the status line contains TEXT
 *   search TEXT / expect-shown N   type in the runs' search field; the sidebar shows N runs
 *   delete ID|newest         select a run and ask to delete it (a dialog opens)
 *   respond ID               answer the open dialog ("delete", "cancel", "close", "run")
 *   dialog-set NAME VALUE    in the open message dialog, the entry row or switch (on|off)
 *                            named NAME gets VALUE, as a user typing or clicking it
 *   expect-dialog TEXT       a message dialog is open and its heading, body or a label of
 *                            its extra child contains TEXT
 *   expect-dialog-run yes|no its "run" response can (not) be chosen
 *   activate-head L H        what a click on a head of the Model page does
 *   compare-head L H RUN     what Shift+click on head (L, H) of the Ablation page's
 *                            patching map does (win.compare-head: the head of the run shown
 *                            beside the same head of run RUN on the Compare page)
 *   induction T S            on the Induction page: run the detector (T tokens, S seeds) and
 *                            wait for it
 *   induction-open L H       on the Induction page: what a click on head (L, H) does (the
 *                            sequence captured as a run, the head opened in Heatmap)
 *   expect-induction TEXT    the Induction page's status line contains TEXT
 *   ablation-study ID        on the Ablation page: choose a study (heads, heads-mean,
 *                            heads-first, tokens,
 *                            permute, erasure, dla, faithfulness, layers, patch)
 *   ablation-option NAME VAL on the Ablation page: set a study's option (permutations N,
 *                            seeds R, erase-kind mask|drop, source last-mean|rollout|flow|
 *                            best-head; patching's corrupted RUN, direction denoise|noise,
 *                            what heads|head-positions|residual|patterns|queries|keys|
 *                            values, contrast [TOKEN]; path patching's senders LIST,
 *                            component queries|keys|values; QK attribution's qk-layer L,
 *                            qk-head H, qk-query I, qk-key J (−1: the defaults), qk-each
 *                            yes|no), as its chooser does
 *   expect-ablation-runnable yes|no  the Ablation page's Run Study can (not) be pressed
 *   ablation-target [TEXT]   on the Ablation page: type TEXT as the target (none: top-1)
 *   ablation-run             on the Ablation page: run the chosen study and wait for it
 *   ablation-run-then-cancel run it, then Cancel once it reports progress
 *   expect-ablation TEXT     the Ablation page's status line contains TEXT
 *   attribution-option NAME [VALUE]  on the Attribution page: set steps N, rule
 *                            adaptive|gauss-legendre|midpoint, baseline [TOKEN], target [TOKEN],
 *                            contrast [TOKEN]
 *   attribution-run          on the Attribution page: press Run and wait for the study
 *   attribution-run-then-cancel  press Run, then Cancel once it reports progress
 *   expect-attribution TEXT  the Attribution page's status line contains TEXT
 *   expect-attribution-runnable yes|no  the Attribution page's Run can (not) be pressed
 *   learn-set FIELD VALUE    edit a field of the Learn page (its action page.FIELD:
 *                            "learn-set q 1 0; 0 1", "learn-set scale off", ...)
 *   expect-learn TEXT        the Learn page shows TEXT (in any of its labels)
 *   adversarial-option NAME VALUE  on the Attribution page's adversarial view (turned to):
 *                            set layer L, head H|all, iterations N
 *   adversarial-search       press Search there and wait for the study
 *   adversarial-search-then-cancel  press Search, then Cancel once it reports progress
 *   expect-adversarial TEXT  the adversarial view's status line contains TEXT
 *   expect-page NAME         that page is shown
 *   model PATH               use another model file
 *   database PATH            open another capture database
 *   expect-error TEXT        the last error shown contains TEXT (expect-no-error: none)
 *   close-dialogs            close every dialog over the window
 *   dismiss-toast            hide the last toast (before a screenshot)
 *   export-figure PATH / export-csv PATH      export the visible page
 *   export-options SIZE      answer Export Figure's options dialog: its size row set to
 *                            SIZE (natural, journal-single, journal-double), then "export"
 *   screenshot PATH          render the whole window into a PNG
 *   screenshot-dialog PATH [TYPE]  render the message dialog (or a TYPE window) into a PNG
 *   save-as PATH             answer the open file chooser with PATH
 *   open-file PATH           answer the open file chooser (an Open one) with PATH
 *   faith-file-open          on the Ablation page: open the prompt-set window
 *                            (page.faith-file)
 *   faith-file ACTION [VALUE]  in the prompt-set window: activate faith-file.ACTION (choose,
 *                            run — the script then waits for the study —, cancel,
 *                            export-csv, export-figure; metric ID, kind mask|drop, mixing
 *                            yes|no, exclude-first yes|no)
 *   faith-file-run-then-cancel  press its Run, then Cancel once it reports progress
 *   expect-faith-file TEXT   the prompt-set window's status line contains TEXT
 *   print-faith-file         print its set line, its table (a line a row, cells between
 *                            " | "), its note and its reading
 *   preferences PATH         open Preferences, screenshot it, close it
 *   shortcuts PATH           open the shortcuts window, screenshot it, close it
 *   timed LABEL COMMAND...   run COMMAND and print how long the user waited for it
 *   expect-stall-below MS    ... and that the main loop never stalled that long
 *   heatmap-zoom Q0:Q1 K0:K1 zoom the Heatmap page onto those queries and keys
 *   memory LABEL             print the peak and current resident memory
 *                            (window-timing.c)
 *   window-size W H          resize the window to W × H (as a user dragging its corner)
 *   expect-named NAME TEXT   the label named NAME (gtk_widget_set_name) in the window is
 *                            shown and contains TEXT; of a drop-down, its chosen item
 *   print-named NAME         print that label's text ("test-driver: NAME: TEXT")
 *   expect-sensitive NAME yes|no  the widget named NAME is shown and can (not) be used
 *   expect-menu NAME N TEXT  the menu button named NAME, opened as a user opens it, has N
 *                            items whose label contains TEXT (the model menu's fetched models)
 *   predictions-choose LABEL  activate the predictions panel's candidate LABEL ("␣Mary"),
 *                            as a click or Enter on it does (the window's target, then contrast)
 *   expect-prediction LABEL A|B|none  that candidate is marked A (the target), B (the
 *                            contrast) or neither
 *   note-width / expect-width-unchanged   remember the window's width; it is still that
 *                            (the window must not widen itself as what it shows changes)
 *   expect-grid-fill PCT [HPCT]  the Model page's grid, as drawn last, spans at least PCT %
 *                            of its view's width or height (the side that bounds it, its
 *                            aspect kept), and with HPCT at least HPCT % of its height;
 *                            prints both shares
 *   expect-heatmap-side PX   the first heatmap shown (Compare: A) draws its matrix at least
 *                            PX across and down; prints its size
 *   sleep MS
 *   quit
 * Commands for the fixes of issue 11 (one block, fixes_command()):
 *   expect-selected ID|newest|none  the sidebar's selected run (none: no row selected)
 *   expect-title TEXT        the shown page's figure title contains TEXT
 *   expect-scale-control SCALE yes|no  the Heatmap page's scale buttons show SCALE
 *                            pressed, and "Log" can (yes) or cannot (no) be chosen
 *   touch PATH               create the empty file PATH (tells a test script the window got
 *                            here, e.g. to store a run from the command line now)
 *   wait-runs N [SECONDS]    wait until the sidebar lists N runs (default 60 s), e.g. runs
 *                            another process stores in the open database
 */
#define G_LOG_DOMAIN "saccade-window-test"

#include "tests/app/window-driver-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/core/saccade-model.h"
#include "app/core/saccade-run.h"
#include "app/window/pages/saccade-ablation-page.h"
#include "app/window/pages/saccade-attribution-page.h"
#include "app/window/pages/saccade-heads-table.h"
#include "app/window/saccade-application.h"
#include "app/window/saccade-preferences-window.h"
#include "ui/widgets/saccade-heatmap-view.h"

/* Polling period and how long a step may wait for the window to become idle. Frames: the
 * ticks to wait after a command so that the pages have been laid out and drawn. */
#define TICK_MS 50
#define STEP_TIMEOUT_MS 180000
#define SETTLE_TICKS 6


static void
quit_idle (gpointer app)
{
  g_action_group_activate_action (G_ACTION_GROUP (app), "quit", NULL);
  g_object_unref (app);
}

/* Stops the script and quits from an idle (the window, which owns @d, closes then). */
static void
driver_finish (SaccadeTestDriver *d, int status)
{
  GApplication *app = G_APPLICATION (gtk_window_get_application (GTK_WINDOW (d->window)));

  g_clear_handle_id (&d->source_id, g_source_remove);
  *d->status = status;
  g_idle_add_once (quit_idle, g_object_ref (app));
}

gboolean
window_driver_fail (SaccadeTestDriver *d, const char *format, ...)
{
  g_autofree char *msg = NULL;
  va_list args;

  va_start (args, format);
  msg = g_strdup_vprintf (format, args);
  va_end (args);
  g_printerr ("test-driver: line %u: %s\n", d->next, msg);
  driver_finish (d, 1);
  return FALSE;
}

/* The application's settings (the pages and Preferences read them). Borrowed. */
static GSettings *
settings (SaccadeTestDriver *d)
{
  return saccade_application_get_settings (
    SACCADE_APPLICATION (gtk_window_get_application (GTK_WINDOW (d->window))));
}

/* ------------------------------------------------------------------------------------ */
/* Screenshots                                                                           */

/* Renders @widget (a whole window) with its own renderer into a PNG at @path. */
static gboolean
screenshot (GtkWidget *widget, const char *path, GError **error)
{
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  g_autoptr (GdkTexture) texture = NULL;
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  GskRenderNode *node;
  GskRenderer *renderer = gtk_native_get_renderer (GTK_NATIVE (widget));
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);

  if (renderer == NULL || w <= 0 || h <= 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "the window is not shown (%dx%d)", w,
                   h);
      gtk_snapshot_free_to_node (snapshot);
      return FALSE;
    }
  gdk_paintable_snapshot (paintable, GDK_SNAPSHOT (snapshot), w, h);
  node = gtk_snapshot_free_to_node (snapshot);
  /* The paintable is empty until GTK has drawn a frame of the window, which a busy
   * machine can delay past the driver's settle time: let the main loop run (~10 s). */
  for (int tries = 0; tries < 500 && node == NULL; tries++)
    {
      for (int i = 0; i < 50; i++)
        g_main_context_iteration (NULL, FALSE);
      g_usleep (20000);
      snapshot = gtk_snapshot_new ();
      gdk_paintable_snapshot (paintable, GDK_SNAPSHOT (snapshot), w, h);
      node = gtk_snapshot_free_to_node (snapshot);
    }
  if (node == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "the window drew nothing");
      return FALSE;
    }
  texture = gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, w, h));
  gsk_render_node_unref (node);
  if (!gdk_texture_save_to_png (texture, path))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "could not write %s", path);
      return FALSE;
    }
  return TRUE;
}

/* The first dialog-like window over ours of @type, or NULL. */
static GtkWindow *
find_toplevel (SaccadeTestDriver *d, GType type)
{
  GListModel *tops = gtk_window_get_toplevels ();
  guint i, n = g_list_model_get_n_items (tops);

  for (i = 0; i < n; i++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (tops, i);
      if (w != GTK_WINDOW (d->window) && G_TYPE_CHECK_INSTANCE_TYPE (w, type)
          && gtk_widget_get_visible (GTK_WIDGET (w)))
        return w;
    }
  return NULL;
}

/* The first widget of @type under @w (depth first), or NULL. */
static GtkWidget *
find_descendant (GtkWidget *w, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (w, type))
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_descendant (c, type);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static void
close_dialogs (SaccadeTestDriver *d)
{
  GtkWindow *w;

  while ((w = find_toplevel (d, GTK_TYPE_WINDOW)) != NULL)
    gtk_window_destroy (w);
}

/* ------------------------------------------------------------------------------------ */
/* Commands                                                                              */

static guint
n_runs (SaccadeTestDriver *d)
{
  return g_list_model_get_n_items (saccade_window_get_runs (d->window));
}

static gint64
run_id_arg (SaccadeTestDriver *d, const char *arg)
{
  if (g_strcmp0 (arg, "newest") == 0)
    {
      g_autoptr (SaccadeRunItem) item = NULL;
      if (n_runs (d) == 0)
        return 0;
      item = g_list_model_get_item (saccade_window_get_runs (d->window), 0);
      return saccade_run_item_get_id (item);
    }
  return arg != NULL ? g_ascii_strtoll (arg, NULL, 10) : 0;
}

static gboolean
send_key (SaccadeTestDriver *d, const char *name)
{
  guint keyval = gdk_keyval_from_name (name);
  GtkWidget *target = saccade_page_get_figure (saccade_window_get_visible_page (d->window));
  GtkWidget *w;

  if (keyval == GDK_KEY_VoidSymbol)
    return window_driver_fail (d, "no key named '%s'", name);
  /* The way a key press travels: the focused widget's key controllers, then its ancestors'
   * (bubble phase). Synthesising a GdkEvent is not public API, so walk the same path and
   * stop at the first controller that handles it. */
  gtk_widget_grab_focus (target);
  for (w = target; w != NULL; w = gtk_widget_get_parent (w))
    {
      g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (w);
      guint i, n = g_list_model_get_n_items (controllers);
      for (i = 0; i < n; i++)
        {
          g_autoptr (GtkEventController) c = g_list_model_get_item (controllers, i);
          gboolean handled = FALSE;
          if (!GTK_IS_EVENT_CONTROLLER_KEY (c)
              || gtk_event_controller_get_propagation_phase (c) != GTK_PHASE_BUBBLE)
            continue;
          g_signal_emit_by_name (c, "key-pressed", keyval, 0, (GdkModifierType) 0, &handled);
          if (handled)
            return TRUE;
        }
    }
  return window_driver_fail (d, "no widget handled the key %s", name);
}

static gboolean
expect_head (SaccadeTestDriver *d, const char *l, const char *h)
{
  int layer = saccade_window_get_layer (d->window), head = saccade_window_get_head (d->window);

  if (l == NULL || h == NULL || layer != atoi (l) || head != atoi (h))
    return window_driver_fail (d, "shows layer %d head %d, expected %s %s", layer, head, l, h);
  return TRUE;
}

static GtkWidget *
find_heads_table (GtkWidget *w)
{
  if (SACCADE_IS_HEADS_TABLE (w))
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *t = find_heads_table (c);
      if (t != NULL)
        return t;
    }
  return NULL;
}

/* Row @row of the Model page's heads table shows @lh ("L H"). */
static gboolean
expect_table_row (SaccadeTestDriver *d, const char *row, const char *lh)
{
  int el = -1, eh = -1;
  SaccadePage *model = saccade_window_get_page (d->window, "model");
  GtkWidget *w = model != NULL ? find_heads_table (GTK_WIDGET (model)) : NULL;
  int layer = -1, head = -1;

  if (w == NULL || row == NULL || lh == NULL || sscanf (lh, "%d %d", &el, &eh) != 2)
    return window_driver_fail (d, "no heads table, or expect-table-row needs N L H");
  if (!saccade_heads_table_get_row (SACCADE_HEADS_TABLE (w), (guint) atoi (row), &layer, &head)
      || layer != el || head != eh)
    return window_driver_fail (d, "heads table row %s shows L%d.H%d, expected L%d.H%d", row, layer, head, el, eh);
  return TRUE;
}

/* The first heatmap view under @w, or NULL. */
static SaccadeHeatmapView *
find_heatmap_view (GtkWidget *w)
{
  if (SACCADE_IS_HEATMAP_VIEW (w))
    return SACCADE_HEATMAP_VIEW (w);
  for (GtkWidget *c = gtk_widget_get_first_child (w); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      SaccadeHeatmapView *v = find_heatmap_view (c);
      if (v != NULL)
        return v;
    }
  return NULL;
}

/* expect-view-title [TEXT] */
static gboolean
expect_view_title (SaccadeTestDriver *d, const char *text)
{
  const char *id = saccade_window_get_visible_page_id (d->window);
  SaccadePage *page = id != NULL ? saccade_window_get_page (d->window, id) : NULL;
  SaccadeHeatmapView *v = page != NULL ? find_heatmap_view (GTK_WIDGET (page)) : NULL;
  const char *title = v != NULL ? saccade_heatmap_view_get_title (v) : NULL;

  if (v == NULL)
    return window_driver_fail (d, "expect-view-title: page %s has no heatmap view", id);
  if (text == NULL || *text == '\0')
    {
      if (title != NULL && *title != '\0')
        return window_driver_fail (d, "the %s page's view is titled '%s', expected none", id, title);
    }
  else if (title == NULL || strstr (title, text) == NULL)
    return window_driver_fail (d, "the %s page's view is titled '%s', expected '%s' in it", id,
                               title, text);
  return TRUE;
}

/* The vertical adjustment of the Model page's heads table (its scrolled window), or NULL. */
static GtkAdjustment *
heads_table_vadjustment (SaccadeTestDriver *d)
{
  SaccadePage *model = saccade_window_get_page (d->window, "model");
  GtkWidget *w = model != NULL ? find_heads_table (GTK_WIDGET (model)) : NULL;
  GtkWidget *sw = w != NULL ? gtk_widget_get_first_child (w) : NULL;

  return GTK_IS_SCROLLED_WINDOW (sw) ? gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (sw))
                                     : NULL;
}

/* table-scroll-end, expect-table-top */
static gboolean
table_scroll (SaccadeTestDriver *d, const char *cmd)
{
  GtkAdjustment *v = heads_table_vadjustment (d);

  if (v == NULL)
    return window_driver_fail (d, "%s: no heads table", cmd);
  if (g_str_equal (cmd, "table-scroll-end"))
    {
      const double end = gtk_adjustment_get_upper (v) - gtk_adjustment_get_page_size (v);
      if (!(end > gtk_adjustment_get_lower (v)))
        return window_driver_fail (d, "table-scroll-end: the table has nothing to scroll (%g rows' height in %g)",
                                   gtk_adjustment_get_upper (v), gtk_adjustment_get_page_size (v));
      gtk_adjustment_set_value (v, end);
    }
  else if (gtk_adjustment_get_value (v) != gtk_adjustment_get_lower (v))
    return window_driver_fail (d, "the heads table is scrolled to %g, not to its top (%g)",
                               gtk_adjustment_get_value (v), gtk_adjustment_get_lower (v));
  return TRUE;
}

/* Screenshots and closes the dialog a previous command opened. */
static gboolean
shoot_dialog (SaccadeTestDriver *d)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *path = g_steal_pointer (&d->shot_path);
  GType type = d->shot_type;
  GtkWindow *w = find_toplevel (d, type);

  d->shot_type = 0;
  if (w == NULL)
    return window_driver_fail (d, "no %s is shown", g_type_name (type));
  if (!screenshot (GTK_WIDGET (w), path, &error))
    return window_driver_fail (d, "screenshot %s: %s", path, error->message);
  gtk_window_destroy (w);
  return TRUE;
}

/* The commands of the fixes block (see the list at the top). */
static gboolean
fixes_command (SaccadeTestDriver *d, const char *cmd, const char *a1, const char *a2,
               const char *rest)
{
  SaccadeWindow *win = d->window;

  if (g_str_equal (cmd, "expect-selected"))
    {
      gint64 want = g_strcmp0 (a1, "none") == 0 ? 0 : run_id_arg (d, a1);
      gint64 got = saccade_window_runs_selected_id (win);
      if (got != want)
        return window_driver_fail (d, "the sidebar selects run %" G_GINT64_FORMAT ", expected %s", got, a1);
    }
  else if (g_str_equal (cmd, "expect-title"))
    {
      g_autofree char *title = saccade_window_dup_figure_title (win);
      if (title == NULL || strstr (title, rest != NULL ? rest : "") == NULL)
        return window_driver_fail (d, "the figure's title is '%s', expected '%s' in it", title, rest);
    }
  else if (g_str_equal (cmd, "expect-scale-control"))
    {
      SaccadePage *page = saccade_window_get_page (win, "heatmap");
      g_autofree char *shown = NULL;
      gboolean offered = FALSE;
      if (page == NULL || a1 == NULL || a2 == NULL)
        return window_driver_fail (d, "expect-scale-control needs linear|log yes|no and a heatmap page");
      g_object_get (page, "scale", &shown, "log-offered", &offered, NULL);
      if (g_strcmp0 (shown, a1) != 0 || offered != g_str_equal (a2, "yes"))
        return window_driver_fail (d, "the scale control shows %s with log %s, expected %s and %s",
                     shown, offered ? "offered" : "not offered", a1, a2);
    }
  else if (g_str_equal (cmd, "touch"))
    {
      g_autoptr (GError) error = NULL;
      if (a1 == NULL || !g_file_set_contents (a1, "", 0, &error))
        return window_driver_fail (d, "touch %s: %s", a1, error != NULL ? error->message : "no path");
    }
  else if (g_str_equal (cmd, "wait-runs"))
    {
      if (a1 == NULL || atoi (a1) < 0)
        return window_driver_fail (d, "wait-runs needs a number of runs");
      d->wait_runs = atoi (a1);
      d->wait_deadline = g_get_monotonic_time ()
                         + (gint64) (a2 != NULL ? atoi (a2) : 60) * G_USEC_PER_SEC;
    }
  return TRUE;
}

/* wait-runs: TRUE while still waiting; fails the script at the deadline. */
static gboolean
fixes_waiting (SaccadeTestDriver *d)
{
  if (d->wait_runs < 0)
    return FALSE;
  if (n_runs (d) == (guint) d->wait_runs)
    {
      g_print ("test-driver: %d runs listed\n", d->wait_runs);
      d->wait_runs = -1;
      return FALSE;
    }
  if (g_get_monotonic_time () > d->wait_deadline)
    {
      window_driver_fail (d, "%u runs listed, waited in vain for %d", n_runs (d), d->wait_runs);
      d->wait_runs = -1;
      return TRUE;
    }
  return TRUE;
}

/* prompt-ctrl-enter: finds the prompt editor's capture-phase shortcut whose trigger is
 * Ctrl+Return (alone or in an alternative) and activates its action on the text view's
 * ancestor, as a key press there would (synthesising a GdkEvent is not public API). */
static gboolean
prompt_ctrl_enter (SaccadeTestDriver *d)
{
  GtkWidget *pop = GTK_WIDGET (saccade_window_get_prompt_editor (d->window));
  g_autoptr (GtkShortcutTrigger) want = gtk_keyval_trigger_new (GDK_KEY_Return,
                                                                 GDK_CONTROL_MASK);
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (pop);

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr (GtkEventController) c = g_list_model_get_item (controllers, i);
      if (!GTK_IS_SHORTCUT_CONTROLLER (c)
          || gtk_event_controller_get_propagation_phase (c) != GTK_PHASE_CAPTURE)
        continue;
      for (guint j = 0; j < g_list_model_get_n_items (G_LIST_MODEL (c)); j++)
        {
          g_autoptr (GtkShortcut) sc = g_list_model_get_item (G_LIST_MODEL (c), j);
          GtkShortcutTrigger *t = gtk_shortcut_get_trigger (sc);
          gboolean match = gtk_shortcut_trigger_equal (t, want);
          if (GTK_IS_ALTERNATIVE_TRIGGER (t))
            match = gtk_shortcut_trigger_equal (gtk_alternative_trigger_get_first (
                                                  GTK_ALTERNATIVE_TRIGGER (t)), want)
                    || gtk_shortcut_trigger_equal (gtk_alternative_trigger_get_second (
                                                     GTK_ALTERNATIVE_TRIGGER (t)), want);
          if (match)
            {
              if (!gtk_shortcut_action_activate (gtk_shortcut_get_action (sc), 0, pop, NULL))
                return window_driver_fail (d, "prompt-ctrl-enter: the shortcut's action did not run");
              return TRUE;
            }
        }
    }
  return window_driver_fail (d, "prompt-ctrl-enter: the prompt editor has no Ctrl+Return shortcut");
}

/* The prompt editor's commands (saccade-prompt-popover.h). */
static gboolean
prompt_command (SaccadeTestDriver *d, const char *cmd, const char *a1, const char *a2,
                const char *rest)
{
  SaccadeWindow *win = d->window;
  SaccadePromptPopover *pop = saccade_window_get_prompt_editor (win);
  g_autofree char *text = g_strcompress (rest != NULL ? rest : "");
  g_autoptr (GError) error = NULL;

  if (g_str_equal (cmd, "prompt"))
    saccade_prompt_popover_set_text (pop, text);
  else if (g_str_equal (cmd, "prompt-ctrl-enter"))
    return prompt_ctrl_enter (d);
  else if (g_str_equal (cmd, "expect-sentence"))
    {
      const char *have = saccade_window_get_sentence (win);
      g_autofree char *in_view = saccade_prompt_popover_dup_text (pop);
      if (g_strcmp0 (have, text) != 0 || g_strcmp0 (in_view, text) != 0)
        return window_driver_fail (d, "the entry holds '%s' and the prompt editor '%s', expected '%s'", have,
                     in_view, text);
    }
  else if (g_str_equal (cmd, "prompt-editor") && g_strcmp0 (a1, "open") == 0)
    saccade_window_show_prompt_editor (win, TRUE);
  else if (g_str_equal (cmd, "prompt-editor") && g_strcmp0 (a1, "close") == 0)
    saccade_window_show_prompt_editor (win, FALSE);
  else if (g_str_equal (cmd, "capture-option") && g_strcmp0 (a1, "chat") == 0)
    saccade_prompt_popover_set_chat (pop, g_strcmp0 (a2, "yes") == 0);
  else if (g_str_equal (cmd, "capture-option") && g_strcmp0 (a1, "generate") == 0 && a2 != NULL)
    saccade_prompt_popover_set_n_generate (pop, atoi (a2));
  else if (g_str_equal (cmd, "screenshot-prompt") && a1 != NULL)
    {
      if (!gtk_widget_get_visible (GTK_WIDGET (pop)))
        return window_driver_fail (d, "screenshot-prompt: the prompt editor is not open");
      if (!screenshot (GTK_WIDGET (pop), a1, &error))
        return window_driver_fail (d, "screenshot %s: %s", a1, error->message);
    }
  else
    return window_driver_fail (d, "%s: bad arguments", cmd);
  return TRUE;
}

/* Runs one command; FALSE after a failure (the driver has finished then). */
/* backend-preference ID and expect-backend TEXT (see the list at the top). */
static gboolean
backend_command (SaccadeTestDriver *d, const char *cmd, const char *a1, const char *rest)
{
  SaccadeWindow *win = d->window;
  const char *const *ids = saccade_backend_choices ();
  g_autofree char *before = NULL, *after = NULL;
  GtkWindow *prefs;
  GtkWidget *row;
  guint i, shown;

  if (g_str_equal (cmd, "expect-backend"))
    {
      GtkWidget *badge = saccade_window_get_backend_badge (win);
      const char *label = gtk_label_get_text (GTK_LABEL (badge));
      const char *tip = gtk_widget_get_tooltip_text (badge);
      if (!gtk_widget_get_visible (badge))
        return window_driver_fail (d, "the backend badge is hidden (no model is loaded)");
      if (rest == NULL
          || (strstr (label, rest) == NULL && (tip == NULL || strstr (tip, rest) == NULL)))
        return window_driver_fail (d, "the backend badge says '%s' (tooltip '%s'), expected '%s'", label,
                     tip != NULL ? tip : "", rest != NULL ? rest : "");
      return TRUE;
    }
  for (i = 0; ids[i] != NULL && g_strcmp0 (ids[i], a1) != 0; i++)
    ;
  if (ids[i] == NULL)
    return window_driver_fail (d, "backend-preference: no backend choice '%s'", a1 != NULL ? a1 : "");
  g_action_group_activate_action (
    G_ACTION_GROUP (gtk_window_get_application (GTK_WINDOW (win))), "preferences", NULL);
  if ((prefs = find_toplevel (d, SACCADE_TYPE_PREFERENCES_WINDOW)) == NULL)
    return window_driver_fail (d, "backend-preference: Preferences did not open");
  row = GTK_WIDGET (gtk_widget_get_template_child (GTK_WIDGET (prefs),
                                                   SACCADE_TYPE_PREFERENCES_WINDOW, "backend_row"));
  before = g_settings_get_string (settings (d), "backend");
  shown = adw_combo_row_get_selected (ADW_COMBO_ROW (row));
  adw_combo_row_set_selected (ADW_COMBO_ROW (row), i);
  after = g_settings_get_string (settings (d), "backend");
  gtk_window_destroy (prefs);
  if (shown >= g_strv_length ((GStrv) ids) || !g_str_equal (ids[shown], before))
    return window_driver_fail (d, "backend-preference: the row shows choice %u, the setting is '%s'", shown,
                 before);
  if (!g_str_equal (after, a1))
    return window_driver_fail (d, "backend-preference: chose '%s', the setting is '%s'", a1, after);
  return TRUE;
}

static gboolean
run_command (SaccadeTestDriver *d, char **argv, const char *rest)
{
  SaccadeWindow *win = d->window;
  const char *cmd = argv[0], *a1 = argv[1], *a2 = a1 != NULL ? argv[2] : NULL;
  g_autoptr (GError) error = NULL;

  if (g_str_equal (cmd, "expect-runs"))
    {
      if (a1 == NULL || n_runs (d) != (guint) atoi (a1))
        return window_driver_fail (d, "%u runs listed, expected %s", n_runs (d), a1);
    }
  else if (g_str_equal (cmd, "select"))
    {
      gint64 id = run_id_arg (d, a1);
      if (id <= 0)
        return window_driver_fail (d, "no run '%s' to select", a1);
      saccade_window_runs_select (win, id);
      if (saccade_window_runs_selected_id (win) != id)
        return window_driver_fail (d, "run %" G_GINT64_FORMAT " is not in the sidebar", id);
    }
  else if (g_str_equal (cmd, "expect-run"))
    {
      gint64 id = run_id_arg (d, a1);
      SaccadeRun *run = saccade_page_get_run (saccade_window_get_visible_page (win));
      if (run == NULL || run->id != id)
        return window_driver_fail (d, "run %" G_GINT64_FORMAT " is not shown (%" G_GINT64_FORMAT " is)", id,
                     run != NULL ? run->id : 0);
    }
  else if (g_str_equal (cmd, "page"))
    {
      saccade_window_show_page (win, a1);
      if (g_strcmp0 (saccade_window_get_visible_page_id (win), a1) != 0)
        return window_driver_fail (d, "page %s is not shown", a1);
    }
  else if (g_str_equal (cmd, "head"))
    saccade_window_select_head (win, a1 != NULL ? atoi (a1) : 0, a2 != NULL ? atoi (a2) : 0);
  else if (g_str_equal (cmd, "expect-head"))
    return expect_head (d, a1, a2);
  else if (g_str_equal (cmd, "action"))
    {
      g_autoptr (GVariant) param = a2 != NULL ? g_variant_ref_sink (g_variant_new_string (a2)) : NULL;
      if (a1 == NULL || !gtk_widget_activate_action_variant (GTK_WIDGET (win), a1, param))
        return window_driver_fail (d, "no action %s", a1);
    }
  else if (g_str_equal (cmd, "page-action"))
    {
      GtkWidget *page = GTK_WIDGET (saccade_window_get_visible_page (win));
      const char *arg = a1 != NULL ? strchr (rest, ' ') : NULL;
      if (a1 == NULL)
        return window_driver_fail (d, "page-action needs a name");
      if (!gtk_widget_activate_action (page, a1, arg != NULL ? "s" : NULL,
                                       arg != NULL ? arg + 1 : NULL))
        return window_driver_fail (d, "the page has no action %s", a1);
      return TRUE;
    }
  else if (g_str_equal (cmd, "expect-table-row"))
    return expect_table_row (d, a1, a2);
  else if (g_str_equal (cmd, "table-scroll-end") || g_str_equal (cmd, "expect-table-top"))
    return table_scroll (d, cmd);
  else if (g_str_equal (cmd, "expect-view-title"))
    return expect_view_title (d, rest);
  else if (g_str_equal (cmd, "expect-run-item"))
    {
      g_auto (GStrv) nv = g_strsplit (rest != NULL ? rest : "", " ", 2);
      g_autoptr (SaccadeRunItem) item = nv[0] != NULL && nv[1] != NULL
        ? g_list_model_get_item (saccade_window_get_runs (win), (guint) atoi (nv[0])) : NULL;
      g_auto (GStrv) lines = NULL;
      if (item == NULL)
        return window_driver_fail (d, "expect-run-item: no run item '%s'", rest);
      if (strstr (saccade_run_item_get_subtitle (item), nv[1]) == NULL)
        return window_driver_fail (d, "run item %s says '%s', expected '%s' in it", nv[0],
                                   saccade_run_item_get_subtitle (item), nv[1]);
      /* a row's title is a line's width, never a long run's whole text (GTK shapes all of
       * it on every layout) */
      if (g_utf8_strlen (saccade_run_item_get_title (item), -1) > SACCADE_RUN_TITLE_CHARS + 1)
        return window_driver_fail (d, "run item %s's title is %ld characters", nv[0],
                                   g_utf8_strlen (saccade_run_item_get_title (item), -1));
      lines = g_strsplit (saccade_run_item_get_tooltip (item), "\n", -1);
      if (g_utf8_strlen (lines[0], -1) > SACCADE_RUN_TOOLTIP_CHARS + 1)
        return window_driver_fail (d, "run item %s's tooltip is %ld characters", nv[0],
                                   g_utf8_strlen (lines[0], -1));
    }
  else if (g_str_equal (cmd, "key"))
    return send_key (d, a1);
  else if (g_str_equal (cmd, "colormap") || g_str_equal (cmd, "scale")
           || g_str_equal (cmd, "metric") || g_str_equal (cmd, "backend"))
    g_settings_set_string (settings (d), cmd, a1 != NULL ? a1 : "");
  else if (g_str_equal (cmd, "setting"))
    {
      if (a1 == NULL || a2 == NULL)
        return window_driver_fail (d, "setting: KEY VALUE");
      g_settings_set_string (settings (d), a1, a2);
    }
  else if (g_str_equal (cmd, "backend-preference") || g_str_equal (cmd, "expect-backend"))
    return backend_command (d, cmd, a1, rest);
  else if (g_str_equal (cmd, "type"))
    saccade_window_set_sentence (win, rest);
  else if (g_str_has_prefix (cmd, "prompt") || g_str_equal (cmd, "expect-sentence")
           || g_str_equal (cmd, "capture-option") || g_str_equal (cmd, "screenshot-prompt"))
    return prompt_command (d, cmd, a1, a2, rest);
  else if (g_str_equal (cmd, "run"))
    {
      gtk_widget_activate_action (GTK_WIDGET (win), "win.run", NULL);
    }
  else if (g_str_equal (cmd, "run-then-cancel"))
    {
      /* Press Run, then Cancel as soon as the first layer is reported (see tick()). */
      gtk_widget_activate_action (GTK_WIDGET (win), "win.run", NULL);
      d->cancel_on_progress = TRUE;
    }
  else if (g_str_equal (cmd, "expect-status"))
    {
      const char *status = saccade_window_get_status (win);
      if (strstr (status, rest != NULL ? rest : "") == NULL)
        return window_driver_fail (d, "the status line says '%s', expected '%s'", status, rest);
    }
  else if (g_str_equal (cmd, "search"))
    saccade_window_set_search (win, rest);
  else if (g_str_equal (cmd, "expect-shown"))
    {
      guint shown = g_list_model_get_n_items (saccade_window_get_runs_shown (win));
      if (a1 == NULL || shown != (guint) atoi (a1))
        return window_driver_fail (d, "the sidebar shows %u runs, expected %s", shown, a1);
    }
  else if (g_str_equal (cmd, "delete"))
    {
      gint64 id = run_id_arg (d, a1);
      saccade_window_runs_select (win, id);
      if (saccade_window_runs_selected_id (win) != id)
        return window_driver_fail (d, "run %s is not in the sidebar", a1);
      gtk_widget_activate_action (GTK_WIDGET (win), "win.delete-run", NULL);
    }
  else if (g_str_equal (cmd, "respond"))
    {
      GtkWindow *dialog = find_toplevel (d, ADW_TYPE_MESSAGE_DIALOG);
      if (dialog == NULL || a1 == NULL)
        return window_driver_fail (d, "no dialog to answer");
      g_object_ref (dialog);
      adw_message_dialog_response (ADW_MESSAGE_DIALOG (dialog), a1);
      gtk_window_destroy (dialog);
      g_object_unref (dialog);
    }
  else if (g_str_equal (cmd, "expect-named") || g_str_equal (cmd, "print-named")
           || g_str_equal (cmd, "note-width") || g_str_equal (cmd, "expect-width-unchanged")
           || g_str_equal (cmd, "window-size") || g_str_equal (cmd, "expect-menu")
           || g_str_equal (cmd, "predictions-choose") || g_str_equal (cmd, "expect-prediction")
           || g_str_equal (cmd, "expect-grid-fill") || g_str_equal (cmd, "expect-sensitive")
           || g_str_equal (cmd, "expect-heatmap-side"))
    return window_driver_widget_command (d, cmd, a1, a2, rest);
  else if (g_str_equal (cmd, "dialog-set") || g_str_equal (cmd, "expect-dialog")
           || g_str_equal (cmd, "expect-dialog-run"))
    return window_driver_dialog_command (d, find_toplevel (d, ADW_TYPE_MESSAGE_DIALOG), cmd,
                                         a1, a2, rest);
  else if (g_str_equal (cmd, "save-as"))
    {
      /* Answer the open file chooser (GtkFileChooserNative falls back to a dialog when
       * there is no portal) as a user typing PATH and pressing the accept button. */
      GtkWindow *dialog = find_toplevel (d, GTK_TYPE_FILE_CHOOSER_DIALOG);
      g_autoptr (GFile) file = a1 != NULL ? g_file_new_for_path (a1) : NULL;
      g_autoptr (GFile) dir = file != NULL ? g_file_get_parent (file) : NULL;
      g_autofree char *name = file != NULL ? g_file_get_basename (file) : NULL;
      if (dialog == NULL || file == NULL)
        return window_driver_fail (d, "no file chooser to answer");
      if (!gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (dialog), dir, &error))
        return window_driver_fail (d, "save-as %s: %s", a1, error->message);
      gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (dialog), name);
      gtk_dialog_response (GTK_DIALOG (dialog), GTK_RESPONSE_ACCEPT);
    }
  else if (g_str_equal (cmd, "open-file"))
    {
      /* Answer the open file chooser as a user picking PATH and pressing the accept button. */
      GtkWindow *dialog = find_toplevel (d, GTK_TYPE_FILE_CHOOSER_DIALOG);
      g_autoptr (GFile) file = a1 != NULL ? g_file_new_for_path (a1) : NULL;
      if (dialog == NULL || file == NULL)
        return window_driver_fail (d, "no file chooser to answer");
      gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
      if (!gtk_file_chooser_set_file (GTK_FILE_CHOOSER (dialog), file, &error))
        return window_driver_fail (d, "open-file %s: %s", a1, error->message);
      /* An Open chooser selects the file once it has listed its folder (asynchronously):
       * let the main loop run until it has, as a user waits to see it selected. */
      for (;;)
        {
          g_autoptr (GFile) got = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
          if (got != NULL && g_file_equal (got, file))
            break;
          if (g_get_monotonic_time () > deadline)
            return window_driver_fail (d, "open-file %s: the chooser never selected it", a1);
          g_main_context_iteration (NULL, FALSE);
          g_usleep (10000);
        }
      gtk_dialog_response (GTK_DIALOG (dialog), GTK_RESPONSE_ACCEPT);
    }
  else if (g_str_equal (cmd, "activate-head"))
    {
      /* What the Model page's grid emits for a click on a head. */
      SaccadePage *model = saccade_window_get_page (win, "model");
      if (model == NULL || saccade_page_get_figure (model) == NULL)
        return window_driver_fail (d, "no model page");
      g_signal_emit_by_name (saccade_page_get_figure (model), "head-activated",
                             a1 != NULL ? atoi (a1) : 0, a2 != NULL ? atoi (a2) : 0);
    }
  else if (g_str_equal (cmd, "compare-head"))
    {
      if (a1 == NULL || a2 == NULL || rest == NULL || strrchr (rest, ' ') == NULL)
        return window_driver_fail (d, "compare-head needs L H RUN");
      gtk_widget_activate_action (GTK_WIDGET (win), "win.compare-head", "(iix)", atoi (a1),
                                  atoi (a2), (gint64) g_ascii_strtoll (strrchr (rest, ' ') + 1,
                                                                       NULL, 10));
    }
  else if (g_str_equal (cmd, "induction") || g_str_equal (cmd, "induction-open")
           || g_str_equal (cmd, "expect-induction"))
    return window_driver_induction_command (d, cmd, a1, a2, rest);
  else if (g_str_has_prefix (cmd, "faith-file") || g_str_equal (cmd, "expect-faith-file")
           || g_str_equal (cmd, "print-faith-file"))
    return window_driver_faith_file_command (d, cmd, a1, a2, rest);
  else if (g_str_has_prefix (cmd, "ablation-") || g_str_has_prefix (cmd, "expect-ablation"))
    return window_driver_ablation_command (d, cmd, a1, rest);
  else if (g_str_has_prefix (cmd, "attribution-") || g_str_has_prefix (cmd, "expect-attribution"))
    return window_driver_attribution_command (d, cmd, a1, rest);
  else if (g_str_equal (cmd, "learn-set") || g_str_equal (cmd, "expect-learn"))
    return window_driver_learn_command (d, cmd, a1, rest);
  else if (g_str_has_prefix (cmd, "adversarial-") || g_str_equal (cmd, "expect-adversarial"))
    return window_driver_adversarial_command (d, cmd, a1, g_str_equal (cmd, "expect-adversarial") ? rest : a2);
  else if (g_str_equal (cmd, "expect-page"))
    {
      if (g_strcmp0 (saccade_window_get_visible_page_id (win), a1) != 0)
        return window_driver_fail (d, "page %s is shown, expected %s",
                     saccade_window_get_visible_page_id (win), a1);
    }
  else if (g_str_equal (cmd, "model"))
    saccade_window_set_model_path (win, a1);
  else if (g_str_equal (cmd, "database"))
    saccade_window_set_database (win, a1);
  else if (g_str_equal (cmd, "expect-error"))
    {
      const char *shown = saccade_window_get_last_error (win);
      if (shown == NULL || strstr (shown, rest != NULL ? rest : "") == NULL)
        return window_driver_fail (d, "last error is '%s', expected one with '%s'",
                     shown != NULL ? shown : "(none)", rest);
      g_print ("test-driver: error shown: %s\n", shown);
    }
  else if (g_str_equal (cmd, "expect-no-error"))
    {
      if (saccade_window_get_last_error (win) != NULL)
        return window_driver_fail (d, "unexpected error: %s", saccade_window_get_last_error (win));
    }
  else if (g_str_equal (cmd, "close-dialogs"))
    close_dialogs (d);
  else if (g_str_equal (cmd, "dismiss-toast"))
    saccade_window_dismiss_toast (win);
  else if (g_str_equal (cmd, "export-figure"))
    {
      if (!saccade_window_export_figure_to (win, a1, &error))
        return window_driver_fail (d, "export-figure %s: %s", a1, error->message);
    }
  else if (g_str_equal (cmd, "export-options"))
    {
      const char *sizes[] = { "natural", "journal-single", "journal-double" };
      GtkWindow *dialog = find_toplevel (d, ADW_TYPE_MESSAGE_DIALOG);
      GtkWidget *extra = dialog != NULL
        ? adw_message_dialog_get_extra_child (ADW_MESSAGE_DIALOG (dialog)) : NULL;
      GtkWidget *size = extra != NULL ? find_descendant (extra, ADW_TYPE_COMBO_ROW) : NULL;
      guint i = 0;

      while (i < G_N_ELEMENTS (sizes) && g_strcmp0 (a1, sizes[i]) != 0)
        i++;
      if (size == NULL || i == G_N_ELEMENTS (sizes))
        return window_driver_fail (d, "export-options %s: no options dialog, or not a size",
                                   a1 != NULL ? a1 : "");
      adw_combo_row_set_selected (ADW_COMBO_ROW (size), i);
      g_object_ref (dialog);
      adw_message_dialog_response (ADW_MESSAGE_DIALOG (dialog), "export");
      gtk_window_close (dialog); /* as its button does after the response */
      g_object_unref (dialog);
    }
  else if (g_str_equal (cmd, "export-csv"))
    {
      if (!saccade_window_export_csv_to (win, a1, &error))
        return window_driver_fail (d, "export-csv %s: %s", a1, error->message);
    }
  else if (g_str_equal (cmd, "screenshot"))
    {
      if (a1 == NULL || !screenshot (GTK_WIDGET (win), a1, &error))
        return window_driver_fail (d, "screenshot %s: %s", a1, error != NULL ? error->message : "no path");
    }
  else if (g_str_equal (cmd, "screenshot-dialog"))
    {
      /* The message dialog, or a dialog of the type named second (GtkFileChooserDialog). */
      GType type = a2 != NULL ? g_type_from_name (a2) : ADW_TYPE_MESSAGE_DIALOG;
      GtkWindow *dialog = type != 0 ? find_toplevel (d, type) : NULL;
      if (dialog == NULL)
        return window_driver_fail (d, "no %s is shown", a2 != NULL ? a2 : "message dialog");
      if (a1 == NULL || !screenshot (GTK_WIDGET (dialog), a1, &error))
        return window_driver_fail (d, "screenshot %s: %s", a1, error != NULL ? error->message : "no path");
    }
  else if (g_str_equal (cmd, "preferences") || g_str_equal (cmd, "shortcuts"))
    {
      /* Open it now; the screenshot waits until it has been drawn (next tick). */
      if (a1 == NULL)
        return window_driver_fail (d, "%s needs a PNG path", cmd);
      if (g_str_equal (cmd, "preferences"))
        {
          g_action_group_activate_action (
            G_ACTION_GROUP (gtk_window_get_application (GTK_WINDOW (win))), "preferences", NULL);
          d->shot_type = ADW_TYPE_PREFERENCES_WINDOW;
        }
      else
        {
          gtk_widget_activate_action (GTK_WIDGET (win), "win.show-help-overlay", NULL);
          d->shot_type = GTK_TYPE_SHORTCUTS_WINDOW;
        }
      g_free (d->shot_path);
      d->shot_path = g_strdup (a1);
    }
  else if (g_str_equal (cmd, "expect-selected") || g_str_equal (cmd, "expect-title")
           || g_str_equal (cmd, "expect-scale-control") || g_str_equal (cmd, "touch")
           || g_str_equal (cmd, "wait-runs"))
    return fixes_command (d, cmd, a1, a2, rest);
  else if (g_str_equal (cmd, "timed"))
    {
      /* timed LABEL COMMAND...: the command runs now, the result prints before the next. */
      const char *sub = rest != NULL ? strchr (rest, ' ') : NULL;
      g_auto (GStrv) sub_argv = NULL;
      if (a1 == NULL || sub == NULL)
        return window_driver_fail (d, "timed needs a label and a command");
      sub++;
      sub_argv = g_strsplit_set (sub, " \t", 3);
      window_timing_begin (d->timing, a1);
      return run_command (d, sub_argv, strchr (sub, ' ') != NULL ? strchr (sub, ' ') + 1 : NULL);
    }
  else if (g_str_equal (cmd, "heatmap-zoom"))
    {
      /* heatmap-zoom Q0:Q1 K0:K1: what zooming there with the pointer does */
      SaccadePage *page = saccade_window_get_page (win, "heatmap");
      int q0 = 0, q1 = 0, k0 = 0, k1 = 0;
      if (page == NULL || a1 == NULL || a2 == NULL || sscanf (a1, "%d:%d", &q0, &q1) != 2
          || sscanf (a2, "%d:%d", &k0, &k1) != 2)
        return window_driver_fail (d, "heatmap-zoom Q0:Q1 K0:K1");
      saccade_heatmap_view_zoom_to (SACCADE_HEATMAP_VIEW (saccade_page_get_figure (page)), q0, q1,
                                    k0, k1);
    }
  else if (g_str_equal (cmd, "memory"))
    {
      if (!window_timing_print_memory (a1, &error))
        return window_driver_fail (d, "%s", error->message);
    }
  else if (g_str_equal (cmd, "expect-stall-below"))
    {
      if (!window_timing_expect_stall_below (d->timing, a1 != NULL ? atof (a1) : 0, &error))
        return window_driver_fail (d, "%s", error->message);
    }
  else if (g_str_equal (cmd, "sleep"))
    d->settle = (guint) (a1 != NULL ? atoi (a1) : 0) / TICK_MS;
  else if (g_str_equal (cmd, "quit"))
    {
      g_print ("test-driver: done\n");
      driver_finish (d, 0);
      return FALSE;
    }
  else
    return window_driver_fail (d, "unknown command '%s'", cmd);
  return TRUE;
}

/* ------------------------------------------------------------------------------------ */

static gboolean
tick (gpointer data)
{
  SaccadeTestDriver *d = data;
  g_auto (GStrv) argv = NULL;
  const char *line, *rest;

  if (d->cancel_on_progress && saccade_window_is_capturing (d->window)
      && saccade_window_get_progress (d->window) > 0)
    {
      d->cancel_on_progress = FALSE;
      gtk_widget_activate_action (GTK_WIDGET (d->window), "win.cancel", NULL);
    }
  if (d->cancel_faith_file)
    window_driver_faith_file_cancel_on_progress (d);
  if (d->cancel_ablation)
    {
      SaccadePage *page = saccade_window_get_page (d->window, "ablation");
      if (page != NULL && window_driver_get_fraction (page) > 0)
        {
          d->cancel_ablation = FALSE;
          g_print ("test-driver: cancelling the study at %.0f %%\n",
                   100 * window_driver_get_fraction (page));
          gtk_widget_activate_action (GTK_WIDGET (page), "page.cancel", NULL);
        }
    }
  if (d->cancel_attribution)
    {
      SaccadePage *page = saccade_window_get_page (d->window, "attribution");
      if (page != NULL && window_driver_get_fraction (page) > 0)
        {
          d->cancel_attribution = FALSE;
          g_print ("test-driver: cancelling the attribution at %.0f %%\n",
                   100 * window_driver_get_fraction (page));
          gtk_widget_activate_action (GTK_WIDGET (page), "page.cancel", NULL);
        }
    }
  if (d->cancel_adversarial)
    {
      g_autoptr (GtkWidget) v = window_driver_adversarial_view (d);
      if (v != NULL && window_driver_get_fraction (v) > 0)
        {
          d->cancel_adversarial = FALSE;
          g_print ("test-driver: cancelling the adversarial search at %.0f %%\n",
                   100 * window_driver_get_fraction (v));
          gtk_widget_activate_action (v, "adversarial.cancel", NULL);
        }
    }
  if (saccade_window_is_busy (d->window) || window_driver_faith_file_busy ()
      || !gtk_widget_get_mapped (GTK_WIDGET (d->window)))
    {
      if (d->waiting_since == 0)
        d->waiting_since = g_get_monotonic_time ();
      if (g_get_monotonic_time () - d->waiting_since > (gint64) STEP_TIMEOUT_MS * 1000)
        return window_driver_fail (d, "the window stayed busy for %d s", STEP_TIMEOUT_MS / 1000);
      d->settle = SETTLE_TICKS;
      return G_SOURCE_CONTINUE;
    }
  d->waiting_since = 0;
  if (d->settle > 0)
    {
      d->settle--;
      return G_SOURCE_CONTINUE;
    }
  if (fixes_waiting (d))
    return d->source_id != 0 ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
  if (d->shot_type != 0)
    {
      if (!shoot_dialog (d))
        return G_SOURCE_REMOVE;
      d->settle = SETTLE_TICKS;
      return G_SOURCE_CONTINUE;
    }
  /* Skip blank lines and comments. */
  while (d->lines[d->next] != NULL)
    {
      line = g_strstrip (d->lines[d->next]);
      if (*line != '\0' && *line != '#')
        break;
      d->next++;
    }
  if (d->lines[d->next] == NULL)
    {
      g_print ("test-driver: script ended without quit\n");
      driver_finish (d, 0);
      return G_SOURCE_REMOVE;
    }
  if (window_timing_is_open (d->timing))
    window_timing_end (d->timing);
  line = d->lines[d->next++];
  g_print ("test-driver: %s\n", line);
  argv = g_strsplit_set (line, " \t", 3);
  rest = strchr (line, ' ');
  rest = rest != NULL ? rest + 1 : NULL;
  if (!run_command (d, argv, rest))
    return G_SOURCE_REMOVE;
  d->settle = MAX (d->settle, SETTLE_TICKS);
  return G_SOURCE_CONTINUE;
}

static void
driver_free (gpointer driver)
{
  SaccadeTestDriver *d = driver;

  g_clear_handle_id (&d->source_id, g_source_remove);
  window_timing_free (d->timing);
  g_strfreev (d->lines);
  g_free (d->shot_path);
  g_free (d);
}

void
window_driver_start (SaccadeWindow *window, char **lines, int *status)
{
  SaccadeTestDriver *d = g_new0 (SaccadeTestDriver, 1);

  d->window = window;
  d->status = status;
  d->lines = lines;
  d->wait_runs = -1;
  d->timing = window_timing_new (window);
  d->settle = SETTLE_TICKS;
  d->source_id = g_timeout_add (TICK_MS, tick, d);
  /* The window's dispose drops its data: the driver stops with it. */
  g_object_set_data_full (G_OBJECT (window), "window-driver", d, driver_free);
}
