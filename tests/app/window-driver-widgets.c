/* window-driver-widgets.c — the scripted user's commands that look at widgets by name and
 * at the window's size (window-driver.c lists them): the open message dialog's rows and
 * words, a named label, the window's width and size, the predictions panel's candidates. */
#define G_LOG_DOMAIN "saccade-window-test"

#include "tests/app/window-driver-private.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

#include "ui/widgets/saccade-predictions-view.h"
#include "ui/widgets/saccade-grid-view.h"
#include "ui/widgets/saccade-heatmap-view.h"

/* Prints the chain of widgets from @w down that ask for the most width: where a window that
 * widened itself got its minimum from. */
static void
print_widest (GtkWidget *w)
{
  for (int depth = 0; w != NULL && depth < 40; depth++)
    {
      GtkWidget *widest = NULL;
      int min = 0, best = -1;

      gtk_widget_measure (w, GTK_ORIENTATION_HORIZONTAL, -1, &min, NULL, NULL, NULL);
      g_print ("test-driver: %*s%s%s%s needs %d px\n", depth, "", G_OBJECT_TYPE_NAME (w),
               GTK_IS_LABEL (w) ? " " : "", GTK_IS_LABEL (w) ? gtk_label_get_text (GTK_LABEL (w)) : "",
               min);
      for (GtkWidget *c = gtk_widget_get_first_child (w); c != NULL;
           c = gtk_widget_get_next_sibling (c))
        {
          int m = 0;
          if (!gtk_widget_get_visible (c))
            continue;
          gtk_widget_measure (c, GTK_ORIENTATION_HORIZONTAL, -1, &m, NULL, NULL, NULL);
          if (m > best)
            best = m, widest = c;
        }
      w = widest;
    }
}

/* The widget named @name (gtk_widget_set_name) under @w, or NULL. */
static GtkWidget *
find_named (GtkWidget *w, const char *name)
{
  if (g_strcmp0 (gtk_widget_get_name (w), name) == 0)
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_named (c, name);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The first drawable widget of @type under @w, or NULL. */
static GtkWidget *
find_drawable (GtkWidget *w, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (w, type) && gtk_widget_is_drawable (w))
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_drawable (c, type);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* expect-grid-fill PCT [HPCT]: the grid spans PCT % of the side that bounds it, and (HPCT)
 * at least HPCT % of its view's height (the layers wrapped into bands on a landscape page). */
static gboolean
expect_grid_fill (SaccadeTestDriver *d, const char *pct, const char *hpct)
{
  GtkWidget *grid = find_drawable (GTK_WIDGET (d->window), SACCADE_TYPE_GRID_VIEW);
  const double want = pct != NULL ? g_ascii_strtod (pct, NULL) / 100 : 0;
  const double want_h = hpct != NULL ? g_ascii_strtod (hpct, NULL) / 100 : 0;
  double r[4], W, H, fw, fh;

  if (want <= 0 || want > 1 || want_h < 0 || want_h > 1)
    return window_driver_fail (d, "expect-grid-fill: a share in %% (1 to 100), and maybe "
                               "one of the height");
  if (grid == NULL || !saccade_grid_view_get_drawn (SACCADE_GRID_VIEW (grid), r))
    return window_driver_fail (d, "expect-grid-fill: no grid is drawn");
  W = gtk_widget_get_width (grid);
  H = gtk_widget_get_height (grid);
  fw = r[2] / W;
  fh = r[3] / H;
  g_print ("test-driver: the grid is %.0f × %.0f px in a view of %.0f × %.0f (%.0f %% of its "
           "width, %.0f %% of its height)\n", r[2], r[3], W, H, 100 * fw, 100 * fh);
  if (MAX (fw, fh) < want)
    return window_driver_fail (d, "the grid spans %.0f %% of its view's width and %.0f %% of its "
                               "height, expected %.0f %% of one", 100 * fw, 100 * fh,
                               100 * want);
  if (fh < want_h)
    return window_driver_fail (d, "the grid spans %.0f %% of its view's height, expected at "
                               "least %.0f %%", 100 * fh, 100 * want_h);
  return TRUE;
}

/* expect-heatmap-side PX: the first heatmap shown (the Compare page's A) draws its matrix at
 * least PX across and down. */
static gboolean
expect_heatmap_side (SaccadeTestDriver *d, const char *px)
{
  GtkWidget *view = find_drawable (GTK_WIDGET (d->window), SACCADE_TYPE_HEATMAP_VIEW);
  const SaccadeHeatmapGeometry *g;
  double want = px != NULL ? g_ascii_strtod (px, NULL) : 0;

  if (want <= 0)
    return window_driver_fail (d, "expect-heatmap-side: a side in px");
  if (view == NULL
      || (g = saccade_heatmap_view_get_geometry (SACCADE_HEATMAP_VIEW (view)))->width <= 0)
    return window_driver_fail (d, "expect-heatmap-side: no heatmap is drawn");
  g_print ("test-driver: the heatmap's matrix is %.0f × %.0f px in a view of %d × %d\n",
           g->width, g->height, gtk_widget_get_width (view), gtk_widget_get_height (view));
  if (MIN (g->width, g->height) < want)
    return window_driver_fail (d, "the heatmap's matrix is %.0f × %.0f px, expected at least "
                               "%.0f a side", g->width, g->height, want);
  return TRUE;
}

/* Whether a label under @w contains @text. */
static gboolean
has_label_text (GtkWidget *w, const char *text)
{
  if (GTK_IS_LABEL (w) && strstr (gtk_label_get_text (GTK_LABEL (w)), text) != NULL)
    return TRUE;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    if (has_label_text (c, text))
      return TRUE;
  return FALSE;
}

/* The items of @menu and of its sections and submenus whose label contains @text. */
static guint
count_menu_items (GMenuModel *menu, const char *text)
{
  guint n = 0;

  for (int i = 0; i < g_menu_model_get_n_items (menu); i++)
    {
      g_autofree char *label = NULL;
      const char *links[] = { G_MENU_LINK_SECTION, G_MENU_LINK_SUBMENU };

      if (g_menu_model_get_item_attribute (menu, i, G_MENU_ATTRIBUTE_LABEL, "s", &label)
          && strstr (label, text) != NULL
          && g_menu_model_get_item_link (menu, i, G_MENU_LINK_SECTION) == NULL)
        n++;
      for (guint k = 0; k < G_N_ELEMENTS (links); k++)
        {
          g_autoptr (GMenuModel) sub = g_menu_model_get_item_link (menu, i, links[k]);
          if (sub != NULL)
            n += count_menu_items (sub, text);
        }
    }
  return n;
}

/* The first widget of type @type under @w, or NULL. */
static GtkWidget *
find_type (GtkWidget *w, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (w, type))
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_type (c, type);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/* The predictions panel's candidate buttons under @w, in row order, into @out. */
static void
collect_buttons (GtkWidget *w, GPtrArray *out)
{
  if (GTK_IS_BUTTON (w))
    {
      g_ptr_array_add (out, w);
      return;
    }
  for (GtkWidget *c = gtk_widget_get_first_child (w); c != NULL;
       c = gtk_widget_get_next_sibling (c))
    collect_buttons (c, out);
}

/* predictions-choose LABEL, expect-prediction LABEL A|B|none: the row of the shown panel
 * whose token label is LABEL ("␣Mary"), activated as a click or Enter does, or checked for
 * its mark (the row's text as the panel reports it starts with "A " or "B "). */
static gboolean
predictions_command (SaccadeTestDriver *d, const char *cmd, const char *label, const char *mark)
{
  GtkWidget *view = find_type (GTK_WIDGET (d->window), SACCADE_TYPE_PREDICTIONS_VIEW);
  g_autoptr (GPtrArray) buttons = g_ptr_array_new ();

  if (view == NULL || !gtk_widget_is_drawable (view) || label == NULL)
    return window_driver_fail (d, "%s: no predictions panel is shown, or no LABEL", cmd);
  collect_buttons (view, buttons);
  for (guint r = 0; r < buttons->len; r++)
    {
      GtkWidget *box = gtk_button_get_child (GTK_BUTTON (g_ptr_array_index (buttons, r)));
      GtkWidget *name = box != NULL ? gtk_widget_get_last_child (box) : NULL;
      g_autofree char *text = NULL;
      if (name == NULL || !GTK_IS_LABEL (name)
          || g_strcmp0 (gtk_label_get_text (GTK_LABEL (name)), label) != 0)
        continue;
      if (g_str_equal (cmd, "predictions-choose"))
        {
          if (!gtk_widget_is_sensitive (g_ptr_array_index (buttons, r)))
            return window_driver_fail (d, "the candidate %s cannot be chosen", label);
          gtk_widget_activate (g_ptr_array_index (buttons, r));
          return TRUE;
        }
      text = saccade_predictions_view_dup_row_text (SACCADE_PREDICTIONS_VIEW (view), (int) r);
      if (g_strcmp0 (mark, "none") == 0 ? (g_str_has_prefix (text, "A ")
                                             || g_str_has_prefix (text, "B "))
                                        : (mark == NULL || !g_str_has_prefix (text, mark)
                                           || text[strlen (mark)] != ' '))
        return window_driver_fail (d, "the candidate %s reads '%s', expected the mark %s",
                                   label, text, mark != NULL ? mark : "(none given)");
      return TRUE;
    }
  return window_driver_fail (d, "%s: the predictions panel has no candidate %s", cmd, label);
}

gboolean
window_driver_dialog_command (SaccadeTestDriver *d, GtkWindow *dialog, const char *cmd,
                              const char *a1, const char *a2, const char *rest)
{
  AdwMessageDialog *md = ADW_MESSAGE_DIALOG (dialog);
  GtkWidget *w;

  if (dialog == NULL)
    return window_driver_fail (d, "%s: no message dialog is open", cmd);
  if (g_str_equal (cmd, "expect-dialog"))
    {
      const char *heading = adw_message_dialog_get_heading (md);
      const char *body = adw_message_dialog_get_body (md);
      GtkWidget *extra = adw_message_dialog_get_extra_child (md);
      if (rest == NULL)
        return window_driver_fail (d, "expect-dialog: no text");
      if ((heading == NULL || strstr (heading, rest) == NULL)
          && (body == NULL || strstr (body, rest) == NULL)
          && (extra == NULL || !has_label_text (extra, rest)))
        return window_driver_fail (d, "the dialog ('%s': '%s') does not say '%s'",
                                   heading != NULL ? heading : "", body != NULL ? body : "",
                                   rest);
      return TRUE;
    }
  if (g_str_equal (cmd, "expect-dialog-run"))
    {
      gboolean enabled = adw_message_dialog_get_response_enabled (md, "run");
      if (a1 == NULL || enabled != g_str_equal (a1, "yes"))
        return window_driver_fail (d, "the dialog's Run %s be chosen", enabled ? "can" : "cannot");
      return TRUE;
    }
  w = a1 != NULL ? find_named (GTK_WIDGET (dialog), a1) : NULL;
  if (w == NULL)
    return window_driver_fail (d, "dialog-set: the dialog has no widget named '%s'",
                               a1 != NULL ? a1 : "");
  if (GTK_IS_SWITCH (w))
    gtk_switch_set_active (GTK_SWITCH (w), g_strcmp0 (a2, "on") == 0);
  else if (GTK_IS_EDITABLE (w))
    {
      /* the value is the rest of the line after the name (it may be empty) */
      const char *value = rest != NULL ? rest + strlen (a1) : "";
      while (*value == ' ')
        value++;
      gtk_editable_set_text (GTK_EDITABLE (w), value);
    }
  else
    return window_driver_fail (d, "dialog-set: '%s' is neither an entry nor a switch", a1);
  return TRUE;
}

gboolean
window_driver_widget_command (SaccadeTestDriver *d, const char *cmd, const char *a1,
                              const char *a2, const char *rest)
{
  SaccadeWindow *win = d->window;

  if (g_str_equal (cmd, "predictions-choose") || g_str_equal (cmd, "expect-prediction"))
    return predictions_command (d, cmd, a1, a2);
  if (g_str_equal (cmd, "expect-named") || g_str_equal (cmd, "print-named"))
    {
      GtkWidget *w = a1 != NULL ? find_named (GTK_WIDGET (win), a1) : NULL;
      const char *text = rest != NULL && a1 != NULL ? rest + strlen (a1) : "";
      while (*text == ' ')
        text++;
      const char *shown = NULL;
      if (w != NULL && GTK_IS_LABEL (w))
        shown = gtk_label_get_text (GTK_LABEL (w));
      else if (w != NULL && GTK_IS_DROP_DOWN (w)
               && GTK_IS_STRING_OBJECT (gtk_drop_down_get_selected_item (GTK_DROP_DOWN (w))))
        shown = gtk_string_object_get_string (
          GTK_STRING_OBJECT (gtk_drop_down_get_selected_item (GTK_DROP_DOWN (w))));
      if (shown == NULL || !gtk_widget_is_drawable (w))
        return window_driver_fail (d, "%s: no label or drop-down '%s' is shown", cmd,
                                   a1 != NULL ? a1 : "");
      if (g_str_equal (cmd, "print-named"))
        g_print ("test-driver: %s: %s\n", a1, shown);
      else if (strstr (shown, text) == NULL)
        return window_driver_fail (d, "%s says '%s', expected '%s'", a1, shown, text);
    }
  else if (g_str_equal (cmd, "expect-sensitive"))
    {
      GtkWidget *w = a1 != NULL ? find_named (GTK_WIDGET (win), a1) : NULL;
      gboolean want = g_strcmp0 (a2, "yes") == 0;
      if (w == NULL || !gtk_widget_is_drawable (w) || (!want && g_strcmp0 (a2, "no") != 0))
        return window_driver_fail (d, "expect-sensitive: no widget '%s' is shown, or not "
                                      "yes|no", a1 != NULL ? a1 : "");
      if (gtk_widget_is_sensitive (w) != want)
        return window_driver_fail (d, "%s can%s be used", a1, want ? "not" : "");
    }
  else if (g_str_equal (cmd, "note-width"))
    d->noted_width = gtk_widget_get_width (GTK_WIDGET (win));
  else if (g_str_equal (cmd, "expect-width-unchanged"))
    {
      int w = gtk_widget_get_width (GTK_WIDGET (win));
      if (d->noted_width <= 0 || w != d->noted_width)
        {
          print_widest (GTK_WIDGET (win));
          return window_driver_fail (d, "the window is %d px wide, it was %d px", w,
                                     d->noted_width);
        }
    }
  else if (g_str_equal (cmd, "expect-menu"))
    {
      /* a2 is the rest of the line after NAME: "N TEXT" */
      GtkWidget *w = a1 != NULL ? find_named (GTK_WIDGET (win), a1) : NULL;
      char *text = NULL;
      long want = a2 != NULL ? strtol (a2, &text, 10) : -1;
      GMenuModel *menu;
      guint n;

      while (text != NULL && *text == ' ')
        text++;
      if (w == NULL || !GTK_IS_MENU_BUTTON (w) || want < 0 || text == NULL || *text == '\0')
        return window_driver_fail (d, "expect-menu: no menu button '%s', or no N TEXT",
                                   a1 != NULL ? a1 : "");
      /* open it as a click does (the window reads its list again then), read, close */
      gtk_menu_button_popup (GTK_MENU_BUTTON (w));
      menu = gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (w));
      n = menu != NULL ? count_menu_items (menu, text) : 0;
      gtk_menu_button_popdown (GTK_MENU_BUTTON (w));
      if (n != (guint) want)
        return window_driver_fail (d, "the menu %s has %u items saying '%s', expected %ld", a1,
                                   n, text, want);
    }
  else if (g_str_equal (cmd, "expect-grid-fill"))
    return expect_grid_fill (d, a1, a2);
  else if (g_str_equal (cmd, "expect-heatmap-side"))
    return expect_heatmap_side (d, a1);
  else if (g_str_equal (cmd, "window-size"))
    {
      if (a1 == NULL || a2 == NULL || atoi (a1) < 360 || atoi (a2) < 300)
        return window_driver_fail (d, "window-size: W and H, at least 360 × 300");
      gtk_window_unmaximize (GTK_WINDOW (win));
      gtk_window_set_default_size (GTK_WINDOW (win), atoi (a1), atoi (a2));
    }
  return TRUE;
}
