/* saccade-preferences-window.c — the preferences window (see saccade-preferences-window.h).
 * Each combo row shows a fixed list of choices and is bound to a string key of the app's
 * settings through its choice ids, so the window needs no code to save anything.
 */
#define G_LOG_DOMAIN "saccade-prefs"

#include "app/window/saccade-preferences-window.h"

#include <glib/gi18n.h>

#include "app/core/saccade-model.h"
#include "app/core/saccade-run.h"
#include "ui/figures/saccade-colormap.h"

struct _SaccadePreferencesWindow
{
  AdwPreferencesWindow parent_instance;

  /* Template widgets */
  AdwComboRow *colormap_row;
  AdwComboRow *scale_row;
  AdwComboRow *metric_row;
  AdwComboRow *backend_row;
  AdwComboRow *ask_row;

  /* Owned */
  GSettings *settings;
  GStrv colormap_ids;
  GStrv scale_ids;
  GStrv metric_ids;
  GStrv backend_ids;
  GStrv ask_ids;
};

G_DEFINE_FINAL_TYPE (SaccadePreferencesWindow, saccade_preferences_window,
                     ADW_TYPE_PREFERENCES_WINDOW)

/* The choices of "ask-above" (the schema's, in its order) and their sizes. */
static const struct {
  const char *id;
  guint64 bytes;
} ASK_ABOVE[] = {
  { "100-mb", 100000000ull },
  { "1-gb", 1000000000ull },
  { "10-gb", 10000000000ull },
  { "100-gb", 100000000000ull },
  { "never", G_MAXUINT64 },
};

guint64
saccade_preferences_ask_above_bytes (GSettings *settings)
{
  g_autofree char *id = g_settings_get_string (settings, "ask-above");

  for (gsize i = 0; i < G_N_ELEMENTS (ASK_ABOVE); i++)
    if (g_str_equal (id, ASK_ABOVE[i].id))
      return ASK_ABOVE[i].bytes;
  return ASK_ABOVE[1].bytes; /* the schema's choices make this unreachable */
}

/* GSettings string → the row's "selected" index; @user_data is the row's id list. */
static gboolean
id_to_index (GValue *value, GVariant *variant, gpointer user_data)
{
  const char *const *ids = user_data;
  const char *id = g_variant_get_string (variant, NULL);
  guint i;

  for (i = 0; ids[i] != NULL; i++)
    if (g_str_equal (ids[i], id))
      {
        g_value_set_uint (value, i);
        return TRUE;
      }
  g_value_set_uint (value, 0);
  return TRUE;
}

static GVariant *
index_to_id (const GValue *value, const GVariantType *type, gpointer user_data)
{
  const char *const *ids = user_data;
  guint i = g_value_get_uint (value);

  if (i >= g_strv_length ((GStrv) ids))
    return NULL;
  return g_variant_new_string (ids[i]);
}

static void
bind_row (SaccadePreferencesWindow *self, AdwComboRow *row, const char *key, GStrv ids,
          const char *const *names)
{
  g_autoptr (GtkStringList) model = gtk_string_list_new (names);

  adw_combo_row_set_model (row, G_LIST_MODEL (model));
  g_settings_bind_with_mapping (self->settings, key, row, "selected", G_SETTINGS_BIND_DEFAULT,
                                id_to_index, index_to_id, ids, NULL);
}

static void
saccade_preferences_window_finalize (GObject *object)
{
  SaccadePreferencesWindow *self = SACCADE_PREFERENCES_WINDOW (object);

  g_clear_object (&self->settings);
  g_strfreev (self->colormap_ids);
  g_strfreev (self->scale_ids);
  g_strfreev (self->metric_ids);
  g_strfreev (self->backend_ids);
  g_strfreev (self->ask_ids);
  G_OBJECT_CLASS (saccade_preferences_window_parent_class)->finalize (object);
}

static void
saccade_preferences_window_dispose (GObject *object)
{
  SaccadePreferencesWindow *self = SACCADE_PREFERENCES_WINDOW (object);

  if (self->settings != NULL)
    {
      g_settings_unbind (self->colormap_row, "selected");
      g_settings_unbind (self->scale_row, "selected");
      g_settings_unbind (self->metric_row, "selected");
      g_settings_unbind (self->backend_row, "selected");
      g_settings_unbind (self->ask_row, "selected");
    }
  gtk_widget_dispose_template (GTK_WIDGET (self), SACCADE_TYPE_PREFERENCES_WINDOW);
  G_OBJECT_CLASS (saccade_preferences_window_parent_class)->dispose (object);
}

static void
saccade_preferences_window_class_init (SaccadePreferencesWindowClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = saccade_preferences_window_dispose;
  G_OBJECT_CLASS (klass)->finalize = saccade_preferences_window_finalize;
  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/saccade/Saccade/saccade-preferences-window.ui");
  gtk_widget_class_bind_template_child (widget_class, SaccadePreferencesWindow, colormap_row);
  gtk_widget_class_bind_template_child (widget_class, SaccadePreferencesWindow, scale_row);
  gtk_widget_class_bind_template_child (widget_class, SaccadePreferencesWindow, metric_row);
  gtk_widget_class_bind_template_child (widget_class, SaccadePreferencesWindow, backend_row);
  gtk_widget_class_bind_template_child (widget_class, SaccadePreferencesWindow, ask_row);
}

static void
saccade_preferences_window_init (SaccadePreferencesWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

SaccadePreferencesWindow *
saccade_preferences_window_new (GSettings *settings)
{
  SaccadePreferencesWindow *self = g_object_new (SACCADE_TYPE_PREFERENCES_WINDOW, NULL);
  g_autoptr (GStrvBuilder) ids = g_strv_builder_new ();
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  guint i;

  self->settings = g_object_ref (settings);

  for (i = 0; i <= SACCADE_COLORMAP_LAST; i++)
    {
      g_strv_builder_add (ids, saccade_colormap_id ((SaccadeColormap) i));
      g_ptr_array_add (names, (gpointer) saccade_colormap_name ((SaccadeColormap) i));
    }
  g_ptr_array_add (names, NULL);
  self->colormap_ids = g_strv_builder_end (ids);
  bind_row (self, self->colormap_row, "colormap", self->colormap_ids,
            (const char *const *) names->pdata);

  {
    const char *scale_ids[] = { "linear", "log", NULL };
    const char *scale_names[] = { _("Linear"), _("Logarithmic"), NULL };
    self->scale_ids = g_strdupv ((GStrv) scale_ids);
    bind_row (self, self->scale_row, "scale", self->scale_ids, scale_names);
  }

  g_ptr_array_set_size (names, 0);
  for (i = 0; i < SACCADE_N_METRICS; i++)
    {
      g_strv_builder_add (ids, saccade_metric_id ((SaccadeMetric) i));
      g_ptr_array_add (names, (gpointer) saccade_metric_name ((SaccadeMetric) i));
    }
  g_ptr_array_add (names, NULL);
  self->metric_ids = g_strv_builder_end (ids);
  bind_row (self, self->metric_row, "metric", self->metric_ids,
            (const char *const *) names->pdata);

  {
    /* The ids are saccade_backend_choices(), in their order: auto, cpu, cuda, cpu-ref. */
    const char *backend_names[] = { _("Automatic"), _("CPU"), _("CUDA GPU"),
                                    _("CPU reference (slow)"), NULL };
    self->backend_ids = g_strdupv ((GStrv) saccade_backend_choices ());
    g_assert (g_strv_length (self->backend_ids) == G_N_ELEMENTS (backend_names) - 1);
    bind_row (self, self->backend_row, "backend", self->backend_ids, backend_names);
  }

  {
    /* Sizes as g_format_size() writes them (SI units), the same as the question shows. */
    const char *ask_names[] = { _("100 MB"), _("1 GB"), _("10 GB"), _("100 GB"), _("Never"),
                                NULL };
    G_STATIC_ASSERT (G_N_ELEMENTS (ask_names) == G_N_ELEMENTS (ASK_ABOVE) + 1);
    for (i = 0; i < G_N_ELEMENTS (ASK_ABOVE); i++)
      g_strv_builder_add (ids, ASK_ABOVE[i].id);
    self->ask_ids = g_strv_builder_end (ids);
    bind_row (self, self->ask_row, "ask-above", self->ask_ids, ask_names);
  }
  return self;
}
