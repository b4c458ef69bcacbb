/* saccade-window-export.c — File > Export: the visible page's figure to PNG, SVG or PDF,
 * and its numbers to CSV, through the exporter both faces share (app/core/saccade-export.h:
 * the same renderers the pages draw with, the same CSV layouts as `saccade export`). This
 * file only asks for a file name (after the figure's options:
 * saccade-window-export-dialog.c) and says what the visible page shows:
 *   Heatmap  the head as a figure, and as a labelled matrix;
 *   Model    every head as a grid framed by the chosen metric, and the metrics table;
 *   Lines    the layer's lines, and its weights in long form.
 */
#define G_LOG_DOMAIN "saccade-window"

#include "app/window/saccade-window-private.h"

#include <glib/gi18n.h>
#include <string.h>

#include "app/core/saccade-export.h"
#include "app/window/saccade-file-chooser.h"

/* ------------------------------------------------------------------------------------ */
/* Figures                                                                               */

gboolean
saccade_window_export_figure_to (SaccadeWindow *self, const char *path, GError **error)
{
  const char *page = saccade_window_get_visible_page_id (self);
  gboolean model = g_str_equal (page, "model"), lines = g_str_equal (page, "lines");
  SaccadeColormap colormap;
  SaccadeScale scale;
  SaccadeMetric metric;
  g_autoptr (SaccadeExportSource) src = NULL;
  g_autofree char *title = NULL;
  SaccadeExportFigure f;

  if (self->run == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("No run is shown"));
      return FALSE;
    }
  if (saccade_page_has_export (saccade_window_get_visible_page (self)))
    return saccade_page_export_figure (saccade_window_get_visible_page (self), path, error);
  title = saccade_window_dup_figure_title (self);
  saccade_window_get_figure_settings (self, &colormap, &scale, &metric);
  if ((src = saccade_export_source_new_for_run (self->run, error)) == NULL)
    return FALSE;
  f = (SaccadeExportFigure) {
    .kind = model ? SACCADE_EXPORT_GRID : lines ? SACCADE_EXPORT_LINES : SACCADE_EXPORT_HEATMAP,
    .layer = saccade_window_get_layer (self),
    .head = lines ? -1 : saccade_window_get_head (self),
    .title = title,
    .colormap = colormap,
    .scale = model ? SACCADE_SCALE_LINEAR : scale,
    .metric = model ? saccade_metric_id (metric) : NULL,
    .metric_name = model ? saccade_metric_name (metric) : NULL,
    .options = saccade_window_get_export_options (self),
  };
  return saccade_export_figure (src, &f, path, error);
}

/* "saccade-run17-L5-H2-heatmap" and the like, without an extension. */
static char *
suggested_name (SaccadeWindow *self)
{
  const char *page = saccade_window_get_visible_page_id (self);
  int layer = saccade_window_get_layer (self), head = saccade_window_get_head (self);

  if (g_str_equal (page, "model"))
    return g_strdup_printf ("saccade-run%" G_GINT64_FORMAT "-grid", self->run->id);
  if (g_str_equal (page, "lines"))
    return g_strdup_printf ("saccade-run%" G_GINT64_FORMAT "-L%d-lines", self->run->id, layer);
  if (!g_str_equal (page, "heatmap"))
    return g_strdup_printf ("saccade-run%" G_GINT64_FORMAT "-%s", self->run->id, page);
  return g_strdup_printf ("saccade-run%" G_GINT64_FORMAT "-L%d-H%d-heatmap", self->run->id,
                          layer, head);
}

typedef gboolean (*ExportFn) (SaccadeWindow *self, const char *path, GError **error);

/* What the save dialog does with its answer (a struct: data pointers cannot hold function
 * pointers in ISO C). */
typedef struct {
  ExportFn export;
  const char *ext;   /* static: added when the typed name has no extension */
} SaveData;

static void
save_chosen (gpointer owner, const char *chosen, gpointer data_p)
{
  SaccadeWindow *self = owner;
  const SaveData *data = data_p;
  const char *slash = strrchr (chosen, '/');
  g_autofree char *path = NULL, *base = NULL, *msg = NULL;
  g_autoptr (GError) error = NULL;

  /* No extension typed: use the format the dialog suggested. */
  if (strchr (slash != NULL ? slash : chosen, '.') == NULL)
    path = g_strconcat (chosen, data->ext, NULL);
  else
    path = g_strdup (chosen);
  if (!data->export (self, path, &error))
    {
      saccade_window_show_error (self, _("Could not export"), error);
      return;
    }
  /* The next export starts in the same folder. */
  g_free (self->export_dir);
  self->export_dir = g_path_get_dirname (path);
  base = g_path_get_basename (path);
  msg = g_strdup_printf (_("Saved %s"), base);
  saccade_window_toast (self, msg);
}

static void
ask_save (SaccadeWindow *self, const char *title, const char *filter_name,
          const char *const *patterns, const char *ext, ExportFn export)
{
  SaveData *data = g_new0 (SaveData, 1);
  GtkFileChooser *chooser = saccade_file_chooser_new (
    GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_SAVE, title, _("_Export"), filter_name, patterns,
    save_chosen, self, data);
  g_autofree char *base = suggested_name (self);
  g_autofree char *name = g_strconcat (base, ext, NULL);
  const char *folder = self->export_dir;
  g_autoptr (GFile) dir = NULL;

  data->export = export;
  data->ext = ext;
  g_object_set_data_full (G_OBJECT (chooser), "saccade-save", data, g_free);
  /* The folder of the last export, else Pictures, else home — not the current directory. */
  if (folder == NULL || !g_file_test (folder, G_FILE_TEST_IS_DIR))
    folder = g_get_user_special_dir (G_USER_DIRECTORY_PICTURES);
  if (folder == NULL || !g_file_test (folder, G_FILE_TEST_IS_DIR))
    folder = g_get_home_dir ();
  dir = g_file_new_for_path (folder);
  gtk_file_chooser_set_current_folder (chooser, dir, NULL);
  gtk_file_chooser_set_current_name (chooser, name);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (chooser));
}

/* The options are answered: ask for the file. */
static void
ask_figure_file (SaccadeWindow *self)
{
  const char *patterns[] = { "*.png", "*.svg", "*.pdf", NULL };

  /* Translators: the export dialog; the typed extension (.png, .svg or .pdf) picks the
   * format. */
  ask_save (self, _("Export Figure"), _("PNG, SVG or PDF"), patterns, ".png",
            saccade_window_export_figure_to);
}

void
saccade_window_export_figure (SaccadeWindow *self)
{
  if (self->run == NULL)
    return;
  gtk_window_present (GTK_WINDOW (saccade_window_export_dialog_new (self, ask_figure_file)));
}

/* ------------------------------------------------------------------------------------ */
/* CSV                                                                                   */

gboolean
saccade_window_export_csv_to (SaccadeWindow *self, const char *path, GError **error)
{
  const char *page = saccade_window_get_visible_page_id (self);
  int layer = saccade_window_get_layer (self);
  g_autoptr (SaccadeExportSource) src = NULL;
  g_autoptr (GBytes) data = NULL;

  if (self->run == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("No run is shown"));
      return FALSE;
    }
  if (saccade_page_has_export (saccade_window_get_visible_page (self)))
    return saccade_page_export_csv (saccade_window_get_visible_page (self), path, error);
  if ((src = saccade_export_source_new_for_run (self->run, error)) == NULL)
    return FALSE;
  if (g_str_equal (page, "model"))
    data = saccade_export_metrics_csv (src, error);
  else if (g_str_equal (page, "lines"))
    data = saccade_export_layer_csv (src, layer, error);
  else
    data = saccade_export_head (src, layer, saccade_window_get_head (self), SACCADE_EXPORT_CSV,
                                NULL, NULL, error);
  return data != NULL && saccade_export_write (data, path, error);
}

void
saccade_window_export_csv (SaccadeWindow *self)
{
  const char *patterns[] = { "*.csv", NULL };

  if (self->run == NULL)
    return;
  ask_save (self, _("Export Data as CSV"), _("CSV Files"), patterns, ".csv",
            saccade_window_export_csv_to);
}
