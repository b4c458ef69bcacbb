/* saccade-learn-rows.c — the rows the Learn page is built of (saccade-learn-private.h):
 * a section's AdwPreferencesGroup, input rows with a spin button or drop-down as suffix,
 * and result rows whose suffix is a selectable numeric label that shows an error in place
 * of the numbers. Nothing here knows a section's arithmetic.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-learn-private.h"

/* The widest a result may be before it wraps, in characters: half the clamped column. */
#define RESULT_CHARS 48

AdwPreferencesGroup *
learn_add_group (GtkBox *column, const char *title, const char *description)
{
  AdwPreferencesGroup *group = ADW_PREFERENCES_GROUP (adw_preferences_group_new ());

  adw_preferences_group_set_title (group, title);
  adw_preferences_group_set_description (group, description);
  gtk_box_append (column, GTK_WIDGET (group));
  return group;
}

AdwActionRow *
learn_add_row (AdwPreferencesGroup *group, const char *title, const char *subtitle, GtkWidget *suffix)
{
  AdwActionRow *row = ADW_ACTION_ROW (adw_action_row_new ());

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  if (subtitle != NULL)
    adw_action_row_set_subtitle (row, subtitle);
  gtk_widget_set_valign (suffix, GTK_ALIGN_CENTER);
  adw_action_row_add_suffix (row, suffix);
  adw_action_row_set_activatable_widget (row, suffix);
  adw_preferences_group_add (group, GTK_WIDGET (row));
  return row;
}

GtkSpinButton *
learn_add_spin (gpointer self, AdwPreferencesGroup *group, const char *title,
          const char *subtitle, double lower, double upper, double step, int digits,
          double value, GCallback changed)
{
  GtkSpinButton *spin = GTK_SPIN_BUTTON (gtk_spin_button_new_with_range (lower, upper, step));

  gtk_spin_button_set_digits (spin, digits);
  gtk_spin_button_set_numeric (spin, TRUE);
  gtk_spin_button_set_value (spin, value);
  learn_add_row (group, title, subtitle, GTK_WIDGET (spin));
  g_signal_connect_swapped (spin, "value-changed", changed, self);
  return spin;
}

static GtkLabel *
value_label (void)
{
  GtkLabel *label = GTK_LABEL (gtk_label_new (""));

  gtk_label_set_selectable (label, TRUE);
  gtk_label_set_wrap (label, TRUE);
  gtk_label_set_xalign (label, 1);
  gtk_label_set_justify (label, GTK_JUSTIFY_RIGHT);
  gtk_widget_add_css_class (GTK_WIDGET (label), "numeric");
  return label;
}

GtkLabel *
learn_add_result (AdwPreferencesGroup *group, const char *title)
{
  GtkLabel *label = value_label ();

  learn_add_row (group, title, NULL, GTK_WIDGET (label));
  return label;
}

/* A result label's text, or an error in its place (the "error" style class). */
void
learn_set_result (GtkLabel *label, const char *text, gboolean error)
{
  /* A row's suffix gets its minimum width: ask for the whole text up to RESULT_CHARS, so
   * that short results stay on one line and long ones wrap at a readable width. */
  int width = 0;

  for (const char *c = text; *c != '\0'; c = g_utf8_next_char (c))
    width += g_unichar_iswide (g_utf8_get_char (c)) ? 2 : 1; /* CJK: two columns */
  gtk_label_set_width_chars (label, MIN (width, RESULT_CHARS));
  gtk_label_set_text (label, text);
  if (error)
    gtk_widget_add_css_class (GTK_WIDGET (label), "error");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (label), "error");
}

gint64
learn_spin_int (GtkSpinButton *spin)
{
  return (gint64) gtk_spin_button_get_value (spin);
}

GtkStringList *
learn_preset_names (const char *const *name, int n, gsize stride)
{
  GtkStringList *names = gtk_string_list_new (NULL);

  for (int i = 0; i < n; i++)
    gtk_string_list_append (names, *(const char *const *) ((const char *) name + i * stride));
  return names;
}

GtkDropDown *
learn_add_dropdown (gpointer self, AdwPreferencesGroup *group, const char *title,
                    const char *subtitle, GtkStringList *names, GCallback chosen)
{
  GtkDropDown *dd = GTK_DROP_DOWN (gtk_drop_down_new (G_LIST_MODEL (g_object_ref (names)), NULL));

  learn_add_row (group, title, subtitle, GTK_WIDGET (dd));
  g_signal_connect_swapped (dd, "notify::selected", chosen, self);
  return dd;
}
