/* saccade-window-test.c — the Saccade window with a scripted user (window-driver.c), for the
 * window tests (tests/app/test-app-*.sh). It is the saccade binary's window path built on
 * libsaccade-app, plus the driver: the product itself carries no test code.
 *
 * Usage: SACCADE_TEST_SCRIPT=FILE saccade-window-test [--db FILE] [--model FILE]
 * Exits 0 when the script ran to its end (or `quit`), 1 when a command failed or the
 * script cannot be read, else what the application returned.
 */
#define G_LOG_DOMAIN "saccade-window-test"

#include <glib/gi18n.h>
#include <gtk/gtk.h>
#include <locale.h>
#include <stdio.h>

#include "app/window/saccade-application.h"
#include "tests/app/window-driver.h"

typedef struct {
  char **lines; /* the script, until the window takes it */
  int status;
} Test;

/* The first main window gets the driver. */
static void
window_added (GtkApplication *app, GtkWindow *window, gpointer data)
{
  Test *t = data;

  if (SACCADE_IS_WINDOW (window) && t->lines != NULL)
    window_driver_start (SACCADE_WINDOW (window), g_steal_pointer (&t->lines), &t->status);
}

int
main (int argc, char **argv)
{
  g_autoptr (SaccadeApplication) app = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *contents = NULL;
  const char *path = g_getenv ("SACCADE_TEST_SCRIPT");
  Test t = { NULL, 0 };
  int rc;

  setlocale (LC_ALL, "");
  /* The build folder's translations (test-app-backend screenshots zh_CN). */
  bindtextdomain (GETTEXT_PACKAGE, SACCADE_BUILD_LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
  if (path == NULL || *path == '\0' || !g_file_get_contents (path, &contents, NULL, &error))
    {
      g_printerr ("test-driver: cannot read the script $SACCADE_TEST_SCRIPT: %s\n",
                  error != NULL ? error->message : "not set");
      return 1;
    }
  if (!gtk_init_check ())
    {
      g_printerr ("test-driver: cannot open the display\n");
      return 1;
    }
  /* No animations: each one is skipped to its end as it starts. The scripted user acts
   * faster than a person, and libadwaita 1.2 (Debian 12's) frees a toast's state twice when
   * a toast is dismissed during its 300 ms show animation and both animations then end in
   * the same frame (a main-loop stall under load): a use after free in the show
   * animation's "done" handler, fixed upstream in libadwaita 1.3 (commit 1674ebc9,
   * "toast-overlay: Prevent show_done from firing after hide_done"). test-app-patch
   * crashed there (SIGSEGV in adw_animation_skip → g_object_unref after dismiss-toast). */
  g_object_set (gtk_settings_get_default (), "gtk-enable-animations", FALSE, NULL);
  t.lines = g_strsplit (contents, "\n", -1);
  app = saccade_application_new ();
  g_signal_connect (app, "window-added", G_CALLBACK (window_added), &t);
  rc = g_application_run (G_APPLICATION (app), argc, argv);
  g_strfreev (t.lines); /* NULL once a window took it */
  if (rc != 0)
    return rc;
  return t.status != 0 ? t.status : saccade_application_get_exit_status (app);
}
