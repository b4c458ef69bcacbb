/* saccade-paths.c — model and database locations, opening the store (saccade-paths.h). */
#define G_LOG_DOMAIN "saccade"

#include "app/core/saccade-paths.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "app/core/saccade-error.h"

#define DEFAULT_MODEL_NAME "SmolLM2-135M-Instruct.Q4_1.gguf"

const char *
saccade_model_path (const char *opt)
{
  static char *installed = NULL;
  const char *env;

  if (opt != NULL)
    return opt;
  env = g_getenv ("SACCADE_MODEL");
  if (env != NULL && *env != '\0')
    return env;
  /* A source-tree build finds the model fetched next to its sources; an installed one
   * looks in the user's data folder, where data/fetch-model.sh --user puts it. */
  if (g_file_test (SACCADE_SOURCE_MODEL, G_FILE_TEST_EXISTS))
    return SACCADE_SOURCE_MODEL;
  if (g_once_init_enter (&installed))
    g_once_init_leave (&installed, g_build_filename (g_get_user_data_dir (), "saccade", "models",
                                                     DEFAULT_MODEL_NAME, NULL));
  return installed;
}

char *
saccade_db_path (const char *opt)
{
  if (opt != NULL)
    return g_strdup (opt);
  return g_build_filename (g_get_user_data_dir (), "saccade", "captures.sqlite", NULL);
}

ScStore *
saccade_store_open (const char *path, gboolean writable, ScError *err)
{
  return saccade_store_open_with (path, writable, FALSE, err);
}

ScStore *
saccade_store_open_with (const char *path, gboolean writable, gboolean compress_heads,
                         ScError *err)
{
  ScStoreOptions opt = { .writable = writable, .compress_heads = compress_heads };
  ScStore *store = NULL;

  if (writable)
    {
      /* Create the folder of a new database (the default one's, typically). */
      g_autofree char *dir = g_path_get_dirname (path);
      if (g_mkdir_with_parents (dir, 0700) != 0)
        {
          sc_error_set (err, SC_ERR_IO, "cannot create the folder %s: %s", dir,
                        g_strerror (errno));
          return NULL;
        }
    }
  if (sc_store_open (path, &opt, &store, err) != SC_OK)
    return NULL;
  return store;
}

gboolean
saccade_store_read_run (const char *path, gint64 run_id, ScStoreRunInfo *run,
                        ScStoreToken **tokens, size_t *n_tokens, GError **error)
{
  ScStore *store;
  ScError err = { 0 };
  ScStatus st;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _("no capture store at %s"), path);
      return FALSE;
    }
  if ((store = saccade_store_open (path, FALSE, &err)) == NULL)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  st = sc_store_get_run (store, run_id, run, &err);
  if (st == SC_OK)
    st = sc_store_read_tokens (store, run_id, tokens, n_tokens, &err);
  sc_store_close (store);
  if (st == SC_ERR_NOT_FOUND)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   _("there is no run %lld in %s (see `saccade runs`)"), (long long) run_id, path);
      return FALSE;
    }
  if (st != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  return TRUE;
}
