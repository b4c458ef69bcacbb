/* saccade-run-choice.c — the run pickers of the pages (Compare's two sides, the Ablation
 * page's corrupted run): a run's name in them and a list factory whose labels cannot widen
 * the window (declared in saccade-page.h).
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-page.h"

#define RUN_CHOICE_CHARS 24

char *
saccade_page_dup_run_choice (gint64 id, const char *title)
{
  g_autofree char *cut = NULL;

  if (title != NULL && g_utf8_strlen (title, -1) > RUN_CHOICE_CHARS)
    {
      g_autofree char *head = g_utf8_substring (title, 0, RUN_CHOICE_CHARS - 1);
      cut = g_strconcat (head, "…", NULL);
    }
  return g_strdup_printf ("%" G_GINT64_FORMAT " · %s", id, cut != NULL ? cut : title);
}

static void
run_choice_setup (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer chars)
{
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  gtk_label_set_width_chars (GTK_LABEL (label), GPOINTER_TO_INT (chars) / 3);
  gtk_label_set_max_width_chars (GTK_LABEL (label), GPOINTER_TO_INT (chars));
  gtk_list_item_set_child (item, label);
}

static void
run_choice_bind (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer chars)
{
  GtkStringObject *name = gtk_list_item_get_item (item);

  gtk_label_set_text (GTK_LABEL (gtk_list_item_get_child (item)),
                      gtk_string_object_get_string (name));
}

/* A factory of labels ellipsized past @chars characters, which may shrink to a third of
 * that: the picker's minimum never follows the text. */
static GtkListItemFactory *
run_choice_factory (int chars)
{
  GtkListItemFactory *f = gtk_signal_list_item_factory_new ();

  g_signal_connect (f, "setup", G_CALLBACK (run_choice_setup), GINT_TO_POINTER (chars));
  g_signal_connect (f, "bind", G_CALLBACK (run_choice_bind), GINT_TO_POINTER (chars));
  return f;
}

void
saccade_page_run_dropdown_init (GtkDropDown *dd)
{
  g_autoptr (GtkListItemFactory) button = run_choice_factory (RUN_CHOICE_CHARS + 6);
  g_autoptr (GtkListItemFactory) list = run_choice_factory (RUN_CHOICE_CHARS + 6);

  gtk_drop_down_set_factory (dd, button);
  gtk_drop_down_set_list_factory (dd, list);
}
