/* saccade-window-export-dialog.c — File > Export Figure's options, asked before the file
 * name: size (the figure's own, a journal's single or double column, or a width in mm),
 * the PNG's resolution, the font family and size in points at that width, the title (shown
 * or not, and editable) and how token labels show spaces. The window keeps the last answer
 * (saccade_window_get_export_options) for the next export; the figure itself is written by
 * saccade-window-export.c with them. libadwaita 1.2 (Debian 12) has no AdwDialog or
 * AdwSpinRow: the form is an AdwMessageDialog's extra child of preference rows.
 */
#define G_LOG_DOMAIN "saccade-window"

#include "app/window/saccade-window-private.h"

#include <glib/gi18n.h>

/* The sizes offered, in the order of the size row. */
enum { SIZE_NATURAL, SIZE_SINGLE, SIZE_DOUBLE, SIZE_CUSTOM };

/* What the window keeps of the last answer: the options and the strings they borrow. */
typedef struct {
  SaccadeFigureExportOptions opts;
  char *font, *title;
  guint size;
} ExportSettings;

/* The form's widgets, for the response. */
typedef struct {
  SaccadeWindow *window;
  AdwComboRow *size, *labels;
  GtkSpinButton *width, *dpi, *font_size;
  GtkEditable *font, *title;
  GtkSwitch *show_title;
  char *figure_title;            /* the title the figure has: kept unless edited */
  SaccadeWindowExportDone done;
} Form;

static void
settings_free (gpointer p)
{
  ExportSettings *s = p;
  g_free (s->font);
  g_free (s->title);
  g_free (s);
}

static void
form_free (gpointer p)
{
  Form *f = p;
  g_free (f->figure_title);
  g_free (f);
}

const SaccadeFigureExportOptions *
saccade_window_get_export_options (SaccadeWindow *self)
{
  ExportSettings *s = g_object_get_data (G_OBJECT (self), "saccade-export-settings");
  return s != NULL ? &s->opts : NULL;
}

void
saccade_window_set_export_options (SaccadeWindow *self, const SaccadeFigureExportOptions *opts)
{
  ExportSettings *s = g_new0 (ExportSettings, 1);

  s->opts = *opts;
  s->font = g_strdup (opts->font_family);
  s->title = g_strdup (opts->title);
  s->opts.font_family = s->font;
  s->opts.title = s->title;
  s->size = opts->width_mm == 0                                    ? SIZE_NATURAL
            : opts->width_mm == SACCADE_FIGURE_JOURNAL_SINGLE_MM ? SIZE_SINGLE
            : opts->width_mm == SACCADE_FIGURE_JOURNAL_DOUBLE_MM ? SIZE_DOUBLE
                                                                 : SIZE_CUSTOM;
  g_object_set_data_full (G_OBJECT (self), "saccade-export-settings", s, settings_free);
}

static GtkSpinButton *
spin_row (AdwPreferencesGroup *group, const char *title, double lo, double hi, double step,
          int digits, double value)
{
  GtkWidget *row = adw_action_row_new ();
  GtkWidget *spin = gtk_spin_button_new_with_range (lo, hi, step);

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  gtk_spin_button_set_digits (GTK_SPIN_BUTTON (spin), (guint) digits);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), value);
  gtk_widget_set_valign (spin, GTK_ALIGN_CENTER);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), spin);
  adw_preferences_group_add (group, row);
  return GTK_SPIN_BUTTON (spin);
}

static AdwComboRow *
combo_row (AdwPreferencesGroup *group, const char *title, const char *const *items,
           guint selected)
{
  GtkWidget *row = adw_combo_row_new ();
  g_autoptr (GtkStringList) model = gtk_string_list_new (items);

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_combo_row_set_model (ADW_COMBO_ROW (row), G_LIST_MODEL (model));
  adw_combo_row_set_selected (ADW_COMBO_ROW (row), selected);
  adw_preferences_group_add (group, row);
  return ADW_COMBO_ROW (row);
}

static GtkEditable *
entry_row (AdwPreferencesGroup *group, const char *title, const char *text)
{
  GtkWidget *row = adw_entry_row_new ();

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  gtk_editable_set_text (GTK_EDITABLE (row), text != NULL ? text : "");
  adw_preferences_group_add (group, row);
  return GTK_EDITABLE (row);
}

/* A journal size fills in its width, resolution and text size; only a custom size lets the
 * width be typed. */
static void
size_changed (AdwComboRow *row, GParamSpec *pspec, Form *f)
{
  SaccadeFigureExportOptions preset;
  guint size = adw_combo_row_get_selected (row);

  (void) pspec;
  gtk_widget_set_sensitive (GTK_WIDGET (f->width), size == SIZE_CUSTOM);
  if (size != SIZE_SINGLE && size != SIZE_DOUBLE)
    return;
  saccade_figure_export_options_init (&preset);
  saccade_figure_export_options_preset (&preset,
                                        size == SIZE_SINGLE ? "journal-single"
                                                            : "journal-double",
                                        NULL);
  gtk_spin_button_set_value (f->width, preset.width_mm);
  gtk_spin_button_set_value (f->dpi, preset.dpi);
  gtk_spin_button_set_value (f->font_size, preset.font_size);
}

static void
form_response (AdwMessageDialog *dialog, const char *response, Form *f)
{
  SaccadeFigureExportOptions o;
  guint size = adw_combo_row_get_selected (f->size);
  const char *font = gtk_editable_get_text (f->font);
  const char *title = gtk_editable_get_text (f->title);

  (void) dialog;
  if (g_strcmp0 (response, "export") != 0)
    return;
  saccade_figure_export_options_init (&o);
  o.width_mm = size == SIZE_NATURAL ? 0 : gtk_spin_button_get_value (f->width);
  o.dpi = gtk_spin_button_get_value (f->dpi);
  o.font_size = gtk_spin_button_get_value (f->font_size);
  o.font_family = *font != '\0' ? font : NULL;
  o.no_title = !gtk_switch_get_active (f->show_title);
  /* An edited title replaces the figure's; an unedited one follows the figure shown. */
  o.title = g_strcmp0 (title, f->figure_title) != 0 ? title : NULL;
  o.labels = adw_combo_row_get_selected (f->labels) == 1 ? SACCADE_FIGURE_LABELS_PLAIN
                                                         : SACCADE_FIGURE_LABELS_VISIBLE_SPACE;
  saccade_window_set_export_options (f->window, &o);
  f->done (f->window);
}

GtkWidget *
saccade_window_export_dialog_new (SaccadeWindow *self, SaccadeWindowExportDone done)
{
  const ExportSettings *last = g_object_get_data (G_OBJECT (self), "saccade-export-settings");
  const char *sizes[] = { _("The figure's own"), _("Journal, one column (89 mm)"),
                          _("Journal, two columns (183 mm)"), _("Custom width"), NULL };
  /* Translators: how token labels show a space at a token's ends */
  const char *labels[] = { _("Spaces marked “␣”"), _("Plain text"), NULL };
  SaccadeFigureExportOptions o;
  AdwPreferencesGroup *group = ADW_PREFERENCES_GROUP (adw_preferences_group_new ());
  GtkWidget *dialog, *title_row;
  Form *f = g_new0 (Form, 1);

  saccade_figure_export_options_init (&o);
  if (last != NULL)
    o = last->opts;
  f->window = self;
  f->done = done;
  f->figure_title = saccade_window_dup_figure_title (self);
  f->size = combo_row (group, _("Size"), sizes, last != NULL ? last->size : SIZE_NATURAL);
  f->width = spin_row (group, _("Width (mm)"), SACCADE_FIGURE_MIN_WIDTH_MM,
                       SACCADE_FIGURE_MAX_WIDTH_MM, 1, 0,
                       o.width_mm > 0 ? o.width_mm : SACCADE_FIGURE_JOURNAL_SINGLE_MM);
  f->dpi = spin_row (group, _("PNG resolution (dpi)"), SACCADE_FIGURE_MIN_DPI,
                     SACCADE_FIGURE_MAX_DPI, 50, 0, o.dpi > 0 ? o.dpi : 144);
  f->font = entry_row (group, _("Font family (empty: the figures' font)"), o.font_family);
  f->font_size = spin_row (group, _("Font size (pt)"), SACCADE_FIGURE_MIN_FONT_PT,
                           SACCADE_FIGURE_MAX_FONT_PT, 0.5, 1,
                           o.font_size > 0 ? o.font_size : 10);
  title_row = adw_action_row_new ();
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (title_row), _("Show the title"));
  f->show_title = GTK_SWITCH (gtk_switch_new ());
  gtk_switch_set_active (f->show_title, !o.no_title);
  gtk_widget_set_valign (GTK_WIDGET (f->show_title), GTK_ALIGN_CENTER);
  adw_action_row_add_suffix (ADW_ACTION_ROW (title_row), GTK_WIDGET (f->show_title));
  adw_preferences_group_add (group, title_row);
  f->title = entry_row (group, _("Title"), f->figure_title);
  g_object_bind_property (f->show_title, "active", f->title, "sensitive",
                          G_BINDING_SYNC_CREATE);
  f->labels = combo_row (group, _("Token labels"), labels,
                         o.labels == SACCADE_FIGURE_LABELS_PLAIN ? 1 : 0);
  gtk_widget_set_sensitive (GTK_WIDGET (f->width), adw_combo_row_get_selected (f->size)
                                                     == SIZE_CUSTOM);
  g_signal_connect (f->size, "notify::selected", G_CALLBACK (size_changed), f);

  dialog = adw_message_dialog_new (GTK_WINDOW (self), _("Export Figure"),
                                   _("SVG and PDF keep the text as text; PNG records its "
                                     "resolution."));
  adw_message_dialog_set_extra_child (ADW_MESSAGE_DIALOG (dialog), GTK_WIDGET (group));
  adw_message_dialog_add_responses (ADW_MESSAGE_DIALOG (dialog), "cancel", _("_Cancel"),
                                    "export", _("_Choose File…"), NULL);
  adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (dialog), "export",
                                              ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response (ADW_MESSAGE_DIALOG (dialog), "export");
  adw_message_dialog_set_close_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  g_object_set_data_full (G_OBJECT (dialog), "saccade-export-form", f, form_free);
  g_signal_connect (dialog, "response", G_CALLBACK (form_response), f);
  return dialog;
}
