/* saccade-window-export.c — File > Export: the visible page's figure to PNG, SVG or PDF,
 * and its numbers to CSV, through the exporter both faces share (app/core/saccade-export.h:
 * the same renderers the pages draw with, the same CSV layouts as `saccade export`). This
 * file only asks for a file name and says what the visible page shows:
 *   Heatmap  the head as a figure, and as a labelled matrix;
 *   Model    every head as a grid framed by the chosen metric, and the metrics table;
 *   Lines    the layer's lines, and its weights in long form.
 */
#define G_LOG_DOMAIN "saccade-window"

#include "app/window/saccade-window-private.h"

#include <glib/gi18n.h>
#include <string.h>

#include "app/core/saccade-export.h"

/* ------------------------------------------------------------------------------------ */
/* Figures                                                                               */

gboolean
saccade_window_export_figure_to (SaccadeWindow *self, const char *path, GError **error)
{
  const char *page = saccade_window_get_visible_page_id (self);
  gboolean model = g_str_equal (page, "model"), lines = g_str_equal (page, "lines");
  SaccadeMetric metric = saccade_window_get_metric (self);
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
  if ((src = saccade_export_source_new_for_run (self->run, error)) == NULL)
    return FALSE;
  f = (SaccadeExportFigure) {
    .kind = model ? SACCADE_EXPORT_GRID : lines ? SACCADE_EXPORT_LINES : SACCADE_EXPORT_HEATMAP,
    .layer = saccade_window_get_layer (self),
    .head = lines ? -1 : saccade_window_get_head (self),
    .title = title,
    .colormap = saccade_window_get_colormap (self),
    .scale = model ? SACCADE_SCALE_LINEAR : saccade_window_get_scale (self),
    .metric = model ? saccade_metric_id (metric) : NULL,
    .metric_name = model ? saccade_metric_name (metric) : NULL,
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

/* What the save dialog does with its answer. */
typedef struct {
  ExportFn export;
  const char *ext;   /* static: added when the typed name has no extension */
} SaveData;

static void
save_response (GtkNativeDialog *native, int response, SaccadeWindow *self)
{
  SaveData *data = g_object_get_data (G_OBJECT (native), "saccade-save");

  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (native));
      g_autofree char *path = file != NULL ? g_file_get_path (file) : NULL;
      g_autoptr (GError) error = NULL;

      if (path != NULL && strchr (strrchr (path, '/') != NULL ? strrchr (path, '/') : path, '.')
                            == NULL)
        {
          /* No extension typed: use the format the dialog suggested. */
          char *with_ext = g_strconcat (path, data->ext, NULL);
          g_free (path);
          path = with_ext;
        }
      if (path != NULL && !data->export (self, path, &error))
        saccade_window_show_error (self, _("Could not export"), error);
      else if (path != NULL)
        {
          g_autofree char *base = g_path_get_basename (path);
          /* The next export starts in the same folder. */
          g_free (self->export_dir);
          self->export_dir = g_path_get_dirname (path);
          g_autofree char *msg = g_strdup_printf (_("Saved %s"), base);
          saccade_window_toast (self, msg);
        }
    }
  gtk_native_dialog_destroy (native);
  g_object_unref (native);
}

static void
ask_save (SaccadeWindow *self, const char *title, const char *filter_name,
          const char *const *patterns, const char *ext, ExportFn export)
{
  GtkFileChooserNative *native = gtk_file_chooser_native_new (
    title, GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_SAVE, _("_Export"), _("_Cancel"));
  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();
  g_autofree char *base = suggested_name (self);
  g_autofree char *name = g_strconcat (base, ext, NULL);

  gtk_file_filter_set_name (filter, filter_name);
  for (; *patterns != NULL; patterns++)
    gtk_file_filter_add_pattern (filter, *patterns);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (native), filter);
  const char *folder = self->export_dir;
  g_autoptr (GFile) dir = NULL;
  SaveData *data = g_new0 (SaveData, 1);

  /* The folder of the last export, else Pictures, else home — not the current directory. */
  if (folder == NULL || !g_file_test (folder, G_FILE_TEST_IS_DIR))
    folder = g_get_user_special_dir (G_USER_DIRECTORY_PICTURES);
  if (folder == NULL || !g_file_test (folder, G_FILE_TEST_IS_DIR))
    folder = g_get_home_dir ();
  dir = g_file_new_for_path (folder);
  gtk_file_chooser_set_current_folder (GTK_FILE_CHOOSER (native), dir, NULL);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (native), name);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (native), TRUE);

  data->export = export;
  data->ext = ext;
  g_object_set_data_full (G_OBJECT (native), "saccade-save", data, g_free);
  g_signal_connect (native, "response", G_CALLBACK (save_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (native));
}

void
saccade_window_export_figure (SaccadeWindow *self)
{
  const char *patterns[] = { "*.png", "*.svg", "*.pdf", NULL };

  if (self->run == NULL)
    return;
  /* Translators: the export dialog; the typed extension (.png, .svg or .pdf) picks the
   * format. */
  ask_save (self, _("Export Figure"), _("PNG, SVG or PDF"), patterns, ".png",
            saccade_window_export_figure_to);
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
