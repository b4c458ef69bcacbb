/* saccade-file-chooser.h — the one modal file chooser of the window, its pages and its
 * study windows (GtkFileChooserNative: GTK 4.8 has no GtkFileDialog).
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Called with the local path of the file the user accepted, and the chooser's @owner and
 * @data. */
typedef void (*SaccadeFileChosenFn) (gpointer owner, const char *path, gpointer data);

/* A modal chooser over @parent (may be NULL) for @action, offering the files @patterns
 * (NULL-terminated) match as @filter_name; once accepted with a local path, @chosen (@owner,
 * path, @data) runs. The caller sets its folder or name, then shows it
 * (gtk_native_dialog_show); it destroys itself when answered. @owner must outlive it (the
 * chooser is modal over @owner's window). */
GtkFileChooser *saccade_file_chooser_new (GtkWindow *parent, GtkFileChooserAction action,
                                          const char *title, const char *accept,
                                          const char *filter_name,
                                          const char *const *patterns,
                                          SaccadeFileChosenFn chosen, gpointer owner,
                                          gpointer data);

/* Opens @chooser in the folder holding @path (may be NULL: nothing), when that folder
 * exists. */
void saccade_file_chooser_set_folder_of (GtkFileChooser *chooser, const char *path);

G_END_DECLS
