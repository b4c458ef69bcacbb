/* saccade-window-export.c — File > Export: the visible page's figure to PNG, SVG or PDF
 * through the same Cairo renderer the page draws with (ui/saccade-figure.h), and its
 * numbers to CSV.
 *
 * CSV layouts (RFC 4180, CRLF, values to 9 significant digits — exact for the stored fp16):
 *   Heatmap  the head as a labelled matrix, like `saccade export`: a header row of keys, a
 *            first column of queries, each label "pos:token";
 *   Model    one row per head: layer, head, kv_head, entropy, sink_mass, previous_token;
 *   Lines    one row per (head, query, key) the causal mask allows: the layer's weights in
 *            long form, ready for a data frame.
 */
#define G_LOG_DOMAIN "saccade-window"

#include "app/window/saccade-window-private.h"

#include <glib/gi18n.h>
#include <string.h>

#include "ui/figures/saccade-figure.h"

/* ------------------------------------------------------------------------------------ */
/* Figures                                                                               */

gboolean
saccade_window_export_figure_to (SaccadeWindow *self, const char *path, GError **error)
{
  SaccadeRun *run = self->run;
  const char *page = saccade_window_get_visible_page_id (self);
  g_autofree char *title = NULL;
  int layer = saccade_window_get_layer (self), head = saccade_window_get_head (self);

  if (run == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("No run is shown"));
      return FALSE;
    }
  title = saccade_window_dup_figure_title (self);
  if (g_str_equal (page, "model"))
    {
      SaccadeMetric metric = saccade_window_get_metric (self);
      SaccadeGridFigure f = {
        .n_layers = run->n_layers, .n_heads = run->n_heads, .n_kv_heads = run->n_kv_heads,
        .n = run->n, .heads = run->heads,
        .metric = saccade_run_metric (run, metric),
        .metric_name = saccade_metric_name (metric),
        .title = title, .colormap = saccade_window_get_colormap (self),
        .scale = SACCADE_SCALE_LINEAR,
      };
      return saccade_figure_export_grid (&f, path, error);
    }
  if (g_str_equal (page, "lines"))
    {
      SaccadeLinesFigure f = {
        .n_heads = run->n_heads, .n = run->n, .heads = saccade_run_layer (run, layer),
        .labels = (const char *const *) run->labels, .highlight_token = -1, .title = title,
      };
      return saccade_figure_export_lines (&f, path, error);
    }
  {
    SaccadeHeatmapFigure f = {
      .values = saccade_run_head (run, layer, head), .n_rows = run->n, .n_cols = run->n,
      .row_labels = (const char *const *) run->labels,
      .col_labels = (const char *const *) run->labels, .title = title,
      .colormap = saccade_window_get_colormap (self), .scale = saccade_window_get_scale (self),
      .causal = run->causal,
    };
    return saccade_figure_export_heatmap (&f, path, error);
  }
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

/* RFC 4180: quote a field holding a comma, quote, CR/LF, or leading/trailing space. */
static void
csv_field (GString *out, const char *s)
{
  gsize len = strlen (s);

  if (strpbrk (s, ",\"\r\n") == NULL && (len == 0 || (s[0] != ' ' && s[len - 1] != ' ')))
    {
      g_string_append (out, s);
      return;
    }
  g_string_append_c (out, '"');
  for (; *s != '\0'; s++)
    {
      if (*s == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *s);
    }
  g_string_append_c (out, '"');
}

static void
csv_label (GString *out, SaccadeRun *run, int pos)
{
  g_autofree char *label = g_strdup_printf ("%d:%s", pos, run->labels[pos]);
  csv_field (out, label);
}

static void
csv_number (GString *out, double v)
{
  char num[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append (out, g_ascii_formatd (num, sizeof num, "%.9g", v));
}

static void
csv_head (GString *out, SaccadeRun *run, int layer, int head)
{
  const float *a = saccade_run_head (run, layer, head);
  int i, j;

  g_string_append (out, "query\\key");
  for (j = 0; j < run->n; j++)
    {
      g_string_append_c (out, ',');
      csv_label (out, run, j);
    }
  g_string_append (out, "\r\n");
  for (i = 0; i < run->n; i++)
    {
      csv_label (out, run, i);
      for (j = 0; j < run->n; j++)
        {
          g_string_append_c (out, ',');
          csv_number (out, a[(gsize) i * run->n + j]);
        }
      g_string_append (out, "\r\n");
    }
}

static void
csv_metrics (GString *out, SaccadeRun *run)
{
  int l, h, g = saccade_run_group_size (run);

  g_string_append (out, "layer,head,kv_head,entropy,sink_mass,previous_token\r\n");
  for (l = 0; l < run->n_layers; l++)
    for (h = 0; h < run->n_heads; h++)
      {
        gsize at = (gsize) l * run->n_heads + h;
        g_string_append_printf (out, "%d,%d,%d,", l, h, h / g);
        csv_number (out, run->stats[at].entropy);
        g_string_append_c (out, ',');
        csv_number (out, run->stats[at].sink);
        g_string_append_c (out, ',');
        csv_number (out, run->stats[at].previous);
        g_string_append (out, "\r\n");
      }
}

static void
csv_layer (GString *out, SaccadeRun *run, int layer)
{
  int h, i, j;

  g_string_append (out, "layer,head,query,key,query_token,key_token,weight\r\n");
  for (h = 0; h < run->n_heads; h++)
    {
      const float *a = saccade_run_head (run, layer, h);
      for (i = 0; i < run->n; i++)
        for (j = 0; j < run->n; j++)
          {
            if (run->causal && j > i)
              continue;
            g_string_append_printf (out, "%d,%d,%d,%d,", layer, h, i, j);
            csv_field (out, run->labels[i]);
            g_string_append_c (out, ',');
            csv_field (out, run->labels[j]);
            g_string_append_c (out, ',');
            csv_number (out, a[(gsize) i * run->n + j]);
            g_string_append (out, "\r\n");
          }
    }
}

gboolean
saccade_window_export_csv_to (SaccadeWindow *self, const char *path, GError **error)
{
  const char *page = saccade_window_get_visible_page_id (self);
  g_autoptr (GString) out = g_string_new (NULL);

  if (self->run == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("No run is shown"));
      return FALSE;
    }
  if (g_str_equal (page, "model"))
    csv_metrics (out, self->run);
  else if (g_str_equal (page, "lines"))
    csv_layer (out, self->run, saccade_window_get_layer (self));
  else
    csv_head (out, self->run, saccade_window_get_layer (self),
              saccade_window_get_head (self));
  return g_file_set_contents (path, out->str, (gssize) out->len, error);
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
