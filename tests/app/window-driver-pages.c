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
