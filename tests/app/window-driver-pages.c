/* window-driver-pages.c — the scripted user's commands on the study pages (Induction,
 * Ablation, Attribution and its adversarial view, Learn): each acts through the page's
 * page.* actions and reads its status line (the command list is at the top of
 * window-driver.c). Test code only.
 */
#define G_LOG_DOMAIN "saccade-window-test"

#include "tests/app/window-driver-private.h"

#include <string.h>

#include "app/window/pages/saccade-ablation-page.h"
#include "app/window/pages/saccade-attribution-page.h"
#include "app/window/pages/saccade-page.h"
#include "app/window/studies/saccade-faith-file-window.h"

/* A page's (or view's) read-only "status" property, the status line. Caller frees. */
char *
window_driver_dup_status (gpointer object)
{
  char *status = NULL;

  g_object_get (object, "status", &status, NULL);
  return status != NULL ? status : g_strdup ("");
}

/* Its "fraction" property: of the study it runs, 0 when none runs. */
double
window_driver_get_fraction (gpointer object)
{
  double fraction = 0;

  g_object_get (object, "fraction", &fraction, NULL);
  return fraction;
}

/* The Induction page's commands (see the list at the top). */
gboolean
window_driver_induction_command (SaccadeTestDriver *d, const char *cmd, const char *a1,
                                 const char *a2,
                   const char *rest)
{
  SaccadePage *page = saccade_window_get_page (d->window, "induction");

  if (page == NULL)
    return window_driver_fail (d, "no induction page");
  if (g_str_equal (cmd, "induction"))
    {
      if (saccade_page_get_model (page) == NULL)
        return window_driver_fail (d, "induction: no model is loaded");
      gtk_widget_activate_action (GTK_WIDGET (page), "page.find", "(ii)",
                                  a1 != NULL ? atoi (a1) : 0, a2 != NULL ? atoi (a2) : 0);
      if (!saccade_page_is_busy (page))
        return window_driver_fail (d, "induction: the detector did not start");
    }
  else if (g_str_equal (cmd, "induction-open"))
    {
      gtk_widget_activate_action (GTK_WIDGET (page), "page.open-head", "(ii)",
                                  a1 != NULL ? atoi (a1) : 0, a2 != NULL ? atoi (a2) : 0);
    }
  else
    {
      g_autofree char *status = window_driver_dup_status (page);
      if (strstr (status, rest != NULL ? rest : "") == NULL)
        return window_driver_fail (d, "the induction page says '%s', expected '%s'", status, rest);
    }
  return TRUE;
}

/* The Attribution page's commands (see the list at the top). */
gboolean
window_driver_attribution_command (SaccadeTestDriver *d, const char *cmd, const char *a1,
                                   const char *rest)
{
  SaccadePage *page = saccade_window_get_page (d->window, "attribution");
  GtkWidget *at = page != NULL ? GTK_WIDGET (page) : NULL;
  g_autofree char *status = NULL;

  if (at == NULL)
    return window_driver_fail (d, "no attribution page");
  if (g_str_equal (cmd, "attribution-option"))
    {
      /* the value is the rest after the name, spaces kept (" Paris" is one token) */
      const char *value = rest != NULL && a1 != NULL && strlen (rest) > strlen (a1)
                            ? rest + strlen (a1) + 1 : "";
      g_autofree char *action = g_strconcat ("page.", a1 != NULL ? a1 : "", NULL);
      if (a1 == NULL || !gtk_widget_activate_action (at, action, "s", value))
        return window_driver_fail (d, "attribution-option: no option '%s' with value '%s'",
                     a1 != NULL ? a1 : "", value);
    }
  else if (g_str_equal (cmd, "expect-attribution-runnable"))
    {
      const gboolean can = gtk_widget_activate_action (at, "page.attribute", NULL)
                           && saccade_page_is_busy (page);
      if (can != g_str_equal (a1 != NULL ? a1 : "", "yes"))
        return window_driver_fail (d, "Run %s pressed (%s)", can ? "could be" : "could not be",
                     status = window_driver_dup_status (at));
      if (can)
        gtk_widget_activate_action (at, "page.cancel", NULL);
    }
  else if (g_str_equal (cmd, "attribution-run")
           || g_str_equal (cmd, "attribution-run-then-cancel"))
    {
      gtk_widget_activate_action (at, "page.attribute", NULL);
      if (!saccade_page_is_busy (page))
        return window_driver_fail (d, "%s: the study did not start (%s)", cmd, status = window_driver_dup_status (at));
      d->cancel_attribution = g_str_equal (cmd, "attribution-run-then-cancel");
    }
  else
    {
      status = window_driver_dup_status (at);
      if (strstr (status, rest != NULL ? rest : "") == NULL)
        return window_driver_fail (d, "the attribution page says '%s', expected '%s'", status, rest);
    }
  return TRUE;
}

/* Appends every text @widget and its descendants show (labels, and entries other than
 * spin buttons and entry rows, whose rows' titles already say them), one per line. */
static void
collect_text (GtkWidget *widget, GString *out)
{
  if (!gtk_widget_get_visible (widget))
    return;
  if (GTK_IS_LABEL (widget))
    g_string_append_printf (out, "%s\n", gtk_label_get_text (GTK_LABEL (widget)));
  else if (GTK_IS_EDITABLE (widget) && !GTK_IS_SPIN_BUTTON (widget) && !ADW_IS_ENTRY_ROW (widget))
    g_string_append_printf (out, "%s\n", gtk_editable_get_text (GTK_EDITABLE (widget)));
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    collect_text (c, out);
}

/* The Learn page's commands (see the list at the top). */
gboolean
window_driver_learn_command (SaccadeTestDriver *d, const char *cmd, const char *a1,
                             const char *rest)
{
  SaccadePage *page = saccade_window_get_page (d->window, "learn");
  g_autoptr (GString) text = g_string_new (NULL);

  if (page == NULL)
    return window_driver_fail (d, "no learn page");
  if (g_str_equal (cmd, "learn-set"))
    {
      /* the value is the rest after the name, spaces kept ("1 0; 0 1" is one table) */
      const char *value = rest != NULL && a1 != NULL && strlen (rest) > strlen (a1)
                            ? rest + strlen (a1) + 1 : "";
      g_autofree char *action = g_strconcat ("page.", a1 != NULL ? a1 : "", NULL);
      if (a1 == NULL || !gtk_widget_activate_action (GTK_WIDGET (page), action, "s", value))
        return window_driver_fail (d, "learn-set: no field '%s' taking '%s'", a1 != NULL ? a1 : "", value);
      return TRUE;
    }
  collect_text (GTK_WIDGET (page), text);
  if (strstr (text->str, rest != NULL ? rest : "") == NULL)
    return window_driver_fail (d, "the learn page does not show '%s'; it shows:\n%s", rest, text->str);
  return TRUE;
}

/* The Attribution page turned to its adversarial view (page.view, as the switcher does):
 * the view, a reference, or NULL without the page. */
GtkWidget *
window_driver_adversarial_view (SaccadeTestDriver *d)
{
  SaccadePage *page = saccade_window_get_page (d->window, "attribution");
  GtkWidget *view = NULL;

  if (page == NULL)
    return NULL;
  gtk_widget_activate_action (GTK_WIDGET (page), "page.view", "s", "adversarial");
  g_object_get (page, "adversarial-view", &view, NULL);
  return view;
}

/* The adversarial view's commands (see the list at the top); each turns to the view. */
gboolean
window_driver_adversarial_command (SaccadeTestDriver *d, const char *cmd, const char *a1,
                                   const char *a2)
{
  g_autoptr (GtkWidget) v = window_driver_adversarial_view (d);
  g_autofree char *status = NULL;

  if (v == NULL)
    return window_driver_fail (d, "no attribution page");
  if (g_str_equal (cmd, "adversarial-option"))
    {
      /* adversarial.layer, adversarial.head, adversarial.iterations: as the pickers */
      g_autofree char *action = g_strconcat ("adversarial.", a1 != NULL ? a1 : "", NULL);
      if (a1 == NULL || a2 == NULL || !gtk_widget_activate_action (v, action, "s", a2))
        return window_driver_fail (d, "adversarial-option: no option '%s' with value '%s'",
                     a1 != NULL ? a1 : "", a2 != NULL ? a2 : "");
    }
  else if (g_str_equal (cmd, "adversarial-search")
           || g_str_equal (cmd, "adversarial-search-then-cancel"))
    {
      gtk_widget_activate_action (v, "adversarial.search", NULL);
      /* the page is busy once the search started (it stops the view's lookup first) */
      if (!saccade_page_is_busy (saccade_window_get_page (d->window, "attribution")))
        return window_driver_fail (d, "%s: the search did not start (%s)", cmd, status = window_driver_dup_status (v));
      d->cancel_adversarial = g_str_equal (cmd, "adversarial-search-then-cancel");
    }
  else
    {
      status = window_driver_dup_status (v);
      if (strstr (status, a2 != NULL ? a2 : "") == NULL)
        return window_driver_fail (d, "the adversarial view says '%s', expected '%s'", status, a2);
    }
  return TRUE;
}

/* The Ablation page's commands (see the list at the top). */
gboolean
window_driver_ablation_command (SaccadeTestDriver *d, const char *cmd, const char *a1,
                                const char *rest)
{
  SaccadePage *page = saccade_window_get_page (d->window, "ablation");
  GtkWidget *ab = page != NULL ? GTK_WIDGET (page) : NULL;
  g_autofree char *status = NULL;

  if (ab == NULL)
    return window_driver_fail (d, "no ablation page");
  if (g_str_equal (cmd, "ablation-study"))
    {
      if (a1 == NULL || !gtk_widget_activate_action (ab, "page.study", "s", a1))
        return window_driver_fail (d, "ablation-study: no study '%s'", a1 != NULL ? a1 : "");
    }
  else if (g_str_equal (cmd, "ablation-target"))
    gtk_widget_activate_action (ab, "page.target", "s", rest != NULL ? rest : "");
  else if (g_str_equal (cmd, "ablation-option"))
    {
      /* page.permutations, page.seeds, page.erase-kind, page.source: as the choosers */
      g_auto (GStrv) nv = g_strsplit (rest != NULL ? rest : "", " ", 2);
      g_autofree char *action = nv[0] != NULL ? g_strconcat ("page.", nv[0], NULL) : NULL;
      if (nv[0] == NULL || nv[1] == NULL || !gtk_widget_activate_action (ab, action, "s", nv[1]))
        return window_driver_fail (d, "ablation-option: no option '%s'", rest != NULL ? rest : "");
    }
  else if (g_str_equal (cmd, "expect-ablation-runnable"))
    {
      const gboolean can = gtk_widget_activate_action (ab, "page.run-study", NULL)
                           && saccade_page_is_busy (page);
      if (can != g_str_equal (a1 != NULL ? a1 : "", "yes"))
        return window_driver_fail (d, "Run Study %s pressed (%s)", can ? "could be" : "could not be",
                     status = window_driver_dup_status (ab));
      if (can)
        gtk_widget_activate_action (ab, "page.cancel", NULL);
    }
  else if (g_str_equal (cmd, "ablation-run") || g_str_equal (cmd, "ablation-run-then-cancel"))
    {
      /* Run, as its button does; the page is busy once the study started. */
      gtk_widget_activate_action (ab, "page.run-study", NULL);
      if (!saccade_page_is_busy (page))
        return window_driver_fail (d, "%s: the study did not start (%s)", cmd, status = window_driver_dup_status (ab));
      d->cancel_ablation = g_str_equal (cmd, "ablation-run-then-cancel");
    }
  else
    {
      status = window_driver_dup_status (ab);
      if (strstr (status, rest != NULL ? rest : "") == NULL)
        return window_driver_fail (d, "the ablation page says '%s', expected '%s'", status, rest);
      /* the whole line, for a test that reads its numbers from the log */
      g_printerr ("test-driver:   the ablation page says '%s'\n", status);
    }
  return TRUE;
}

/* ------------------------------------------------------------------------------------ */
/* The prompt-set window (saccade-faith-file-window.h)                                   */

/* The prompt-set window, shown, or NULL (borrowed). */
static SaccadeFaithFileWindow *
faith_file_window (void)
{
  GListModel *tops = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (tops); i++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (tops, i);
      if (SACCADE_IS_FAITH_FILE_WINDOW (w) && gtk_widget_get_visible (GTK_WIDGET (w)))
        return SACCADE_FAITH_FILE_WINDOW (w);
    }
  return NULL;
}

gboolean
window_driver_faith_file_busy (void)
{
  SaccadeFaithFileWindow *w = faith_file_window ();

  return w != NULL && saccade_faith_file_window_is_busy (w);
}

static GtkWidget *
named_under (GtkWidget *w, const char *name)
{
  if (g_strcmp0 (gtk_widget_get_name (w), name) == 0)
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = named_under (c, name);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The label named @name in @w's text ("" when there is none). */
static const char *
label_text (GtkWidget *w, const char *name)
{
  GtkWidget *l = named_under (w, name);

  return l != NULL && GTK_IS_LABEL (l) ? gtk_label_get_text (GTK_LABEL (l)) : "";
}

/* Prints the table as "test-driver: faith-file-row: CELL | CELL | ...", a line a row. */
static void
print_table (GtkWidget *w)
{
  GtkWidget *grid = named_under (w, "faith-file-table");

  for (int r = 0; grid != NULL && GTK_IS_GRID (grid); r++)
    {
      g_autoptr (GString) line = g_string_new (NULL);
      GtkWidget *c = gtk_grid_get_child_at (GTK_GRID (grid), 0, r);
      if (c == NULL)
        break;
      for (int col = 0; (c = gtk_grid_get_child_at (GTK_GRID (grid), col, r)) != NULL; col++)
        g_string_append_printf (line, "%s%s", col > 0 ? " | " : "",
                                GTK_IS_LABEL (c) ? gtk_label_get_text (GTK_LABEL (c)) : "?");
      g_print ("test-driver: faith-file-row: %s\n", line->str);
    }
}

void
window_driver_faith_file_cancel_on_progress (SaccadeTestDriver *d)
{
  SaccadeFaithFileWindow *w = faith_file_window ();
  GtkWidget *bar = w != NULL ? named_under (GTK_WIDGET (w), "faith-file-progress") : NULL;
  double fraction = bar != NULL ? gtk_progress_bar_get_fraction (GTK_PROGRESS_BAR (bar)) : 0;

  if (fraction > 0 && saccade_faith_file_window_is_busy (w))
    {
      d->cancel_faith_file = FALSE;
      g_print ("test-driver: cancelling the prompt-set study at %.0f %%\n", 100 * fraction);
      gtk_widget_activate_action (GTK_WIDGET (w), "faith-file.cancel", NULL);
    }
}

/* faith-file-open, faith-file ACTION [VALUE], faith-file-run-then-cancel,
 * expect-faith-file TEXT, print-faith-file. */
gboolean
window_driver_faith_file_command (SaccadeTestDriver *d, const char *cmd, const char *a1,
                                  const char *a2, const char *rest)
{
  SaccadeFaithFileWindow *w;

  if (g_str_equal (cmd, "faith-file-open"))
    {
      SaccadePage *page = saccade_window_get_page (d->window, "ablation");
      if (page == NULL || !gtk_widget_activate_action (GTK_WIDGET (page), "page.faith-file", NULL)
          || faith_file_window () == NULL)
        return window_driver_fail (d, "faith-file-open: the prompt-set window did not open");
      return TRUE;
    }
  if ((w = faith_file_window ()) == NULL)
    return window_driver_fail (d, "%s: no prompt-set window is open", cmd);
  if (g_str_equal (cmd, "faith-file"))
    {
      g_autofree char *action = g_strconcat ("faith-file.", a1 != NULL ? a1 : "", NULL);
      const gboolean ok = a2 != NULL ? gtk_widget_activate_action (GTK_WIDGET (w), action, "s", a2)
                                     : gtk_widget_activate_action (GTK_WIDGET (w), action, NULL);
      if (a1 == NULL || !ok)
        return window_driver_fail (d, "faith-file: no action '%s' (or it cannot be used now: %s)",
                                   a1 != NULL ? a1 : "", label_text (GTK_WIDGET (w),
                                                                     "faith-file-status"));
      if (g_str_equal (a1, "run") && !saccade_faith_file_window_is_busy (w))
        return window_driver_fail (d, "faith-file run: the study did not start (%s)",
                                   label_text (GTK_WIDGET (w), "faith-file-status"));
    }
  else if (g_str_equal (cmd, "faith-file-run-then-cancel"))
    {
      if (!gtk_widget_activate_action (GTK_WIDGET (w), "faith-file.run", NULL)
          || !saccade_faith_file_window_is_busy (w))
        return window_driver_fail (d, "%s: the study did not start (%s)", cmd,
                                   label_text (GTK_WIDGET (w), "faith-file-status"));
      d->cancel_faith_file = TRUE;
    }
  else if (g_str_equal (cmd, "expect-faith-file"))
    {
      const char *status = label_text (GTK_WIDGET (w), "faith-file-status");
      if (strstr (status, rest != NULL ? rest : "") == NULL)
        return window_driver_fail (d, "the prompt-set window says '%s', expected '%s'", status,
                                   rest != NULL ? rest : "");
      g_printerr ("test-driver:   the prompt-set window says '%s'\n", status);
    }
  else if (g_str_equal (cmd, "print-faith-file"))
    {
      g_print ("test-driver: faith-file-set: %s\n", label_text (GTK_WIDGET (w), "faith-file-set"));
      print_table (GTK_WIDGET (w));
      g_print ("test-driver: faith-file-note: %s\n", label_text (GTK_WIDGET (w), "faith-file-note"));
      g_print ("test-driver: faith-file-reading: %s\n",
               label_text (GTK_WIDGET (w), "faith-file-reading"));
    }
  else
    return window_driver_fail (d, "unknown command %s", cmd);
  return TRUE;
}
