/* saccade-file-chooser.c — see saccade-file-chooser.h. */
#define G_LOG_DOMAIN "saccade-window"

#include "app/window/saccade-file-chooser.h"

#include <glib/gi18n.h>

typedef struct {
  SaccadeFileChosenFn chosen;
  gpointer owner;
  gpointer data;
} ChooserData;

static void
chooser_response (GtkNativeDialog *native, int response, ChooserData *chooser)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (native));
      g_autofree char *path = file != NULL ? g_file_get_path (file) : NULL;
      if (path != NULL)
        chooser->chosen (chooser->owner, path, chooser->data);
    }
  gtk_native_dialog_destroy (native);
  g_object_unref (native);
}

GtkFileChooser *
saccade_file_chooser_new (GtkWindow *parent, GtkFileChooserAction action, const char *title,
                          const char *accept, const char *filter_name,
                          const char *const *patterns, SaccadeFileChosenFn chosen,
                          gpointer owner, gpointer data)
{
  GtkFileChooserNative *native = gtk_file_chooser_native_new (title, parent, action, accept,
                                                              _("_Cancel"));
  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();
  ChooserData *chooser = g_new0 (ChooserData, 1);

  gtk_file_filter_set_name (filter, filter_name);
  for (; *patterns != NULL; patterns++)
    gtk_file_filter_add_pattern (filter, *patterns);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (native), filter);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (native), TRUE);
  *chooser = (ChooserData) { chosen, owner, data };
  /* the data lives as long as the dialog, which the response handler frees last */
  g_object_set_data_full (G_OBJECT (native), "saccade-chooser", chooser, g_free);
  g_signal_connect (native, "response", G_CALLBACK (chooser_response), chooser);
  return GTK_FILE_CHOOSER (native);
}

void
saccade_file_chooser_set_folder_of (GtkFileChooser *chooser, const char *path)
{
  g_autoptr (GFile) file = NULL;
  g_autoptr (GFile) dir = NULL;

  if (path == NULL)
    return;
  file = g_file_new_for_path (path);
  dir = g_file_get_parent (file);
  if (dir != NULL && g_file_query_exists (dir, NULL))
    gtk_file_chooser_set_current_folder (chooser, dir, NULL);
}
