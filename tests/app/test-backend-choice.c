/* test-backend-choice.c — choosing a backend by name (app/core/saccade-model.h), the one
 * place both faces turn --backend or the window's preference into an ScBackend:
 *
 *   1. the names: auto, cpu, cuda, cpu-ref, in that order, exactly the choices (and the
 *      default, auto) of the window's GSettings key "backend";
 *   2. cpu and cpu-ref make those backends, with no notice; an unknown name (or a name in
 *      the wrong case) is G_OPTION_ERROR_BAD_VALUE naming it;
 *   3. cuda: in a build without CUDA, SC_ERR_UNSUPPORTED with "built without CUDA"; in a
 *      CUDA build, a backend named "cuda" or SC_ERR_UNSUPPORTED (no device or driver);
 *   4. auto (and NULL): cuda where it works, else cpu with a one-line notice saying why;
 *      asked for the backward ops, a backend that has them;
 *   5. the window's loader over a named backend, on the tiny test llama: cpu-ref's
 *      description, auto's notice, an unknown name refused.
 */
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>

#include "app/core/saccade-capture-task.h"
#include "app/core/saccade-error.h"
#include "app/core/saccade-model.h"
#include "engine/backend/sc-backend.h"
#include "tests/engine/sc-test-gguf.h"

#define SCHEMA_ID "io.github.saccade.Saccade"

static void
test_names_match_schema (void)
{
  const char *const want[] = { "auto", "cpu", "cuda", "cpu-ref", NULL };
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr (GSettingsSchema) schema = NULL;
  g_autoptr (GSettingsSchemaKey) key = NULL;
  g_autoptr (GVariant) range = NULL, values = NULL, def = NULL;
  g_autofree char *type = NULL;
  g_autofree const char **choices = NULL;

  g_assert_true (g_strv_equal (saccade_backend_choices (), want));

  g_assert_nonnull (source); /* GSETTINGS_SCHEMA_DIR: build/data */
  schema = g_settings_schema_source_lookup (source, SCHEMA_ID, TRUE);
  g_assert_nonnull (schema);
  key = g_settings_schema_get_key (schema, "backend");
  range = g_settings_schema_key_get_range (key);
  g_variant_get (range, "(sv)", &type, &values);
  g_assert_cmpstr (type, ==, "enum");
  choices = g_variant_get_strv (values, NULL);
  g_assert_true (g_strv_equal ((const char *const *) choices, saccade_backend_choices ()));
  def = g_settings_schema_key_get_default_value (key);
  g_assert_cmpstr (g_variant_get_string (def, NULL), ==, SACCADE_BACKEND_AUTO);
}

static void
test_cpu_backends (void)
{
  const char *const names[] = { "cpu", "cpu-ref" };

  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *notice = g_strdup ("stale");
      ScBackend *b = saccade_backend_new (names[i], 1, 0, &notice, &error);
      g_assert_no_error (error);
      g_assert_nonnull (b);
      g_assert_cmpstr (sc_backend_name (b), ==, names[i]);
      g_assert_null (notice);
      g_assert_true (saccade_backend_check_name (names[i], NULL));
      sc_backend_free (b);
    }
}

static void
test_unknown_names (void)
{
  const char *const names[] = { "bogus", "CPU", "", "gpu" };

  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr (GError) error = NULL, check_error = NULL;
      g_autofree char *quoted = g_strdup_printf ("'%s'", names[i]);
      ScBackend *b = saccade_backend_new (names[i], 1, 0, NULL, &error);
      g_assert_null (b);
      g_assert_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
      g_assert_nonnull (strstr (error->message, quoted));
      g_assert_nonnull (strstr (error->message, "cpu, cpu-ref, cuda or auto"));
      g_assert_false (saccade_backend_check_name (names[i], &check_error));
      g_assert_cmpstr (check_error->message, ==, error->message);
    }
}

static void
test_cuda (void)
{
  g_autoptr (GError) error = NULL;
  ScBackend *b = saccade_backend_new ("cuda", 1, 0, NULL, &error);

  if (!saccade_backend_have_cuda ())
    {
      g_assert_null (b);
      g_assert_error (error, SACCADE_ERROR, SC_ERR_UNSUPPORTED);
      g_assert_cmpstr (error->message, ==,
                       "this saccade was built without CUDA (nvcc was not found at build time)");
    }
  else if (b == NULL)
    {
      g_test_message ("no CUDA device here: %s", error->message);
      g_assert_error (error, SACCADE_ERROR, SC_ERR_UNSUPPORTED);
      g_assert_cmpuint (strlen (error->message), >, 0);
    }
  else
    {
      g_assert_no_error (error);
      g_assert_cmpstr (sc_backend_name (b), ==, "cuda");
      sc_backend_free (b);
    }
}

static void
test_auto (void)
{
  /* NULL is auto too. */
  const char *const names[] = { "auto", NULL };
  g_autoptr (GError) cuda_error = NULL;
  ScBackend *cuda = saccade_backend_new ("cuda", 1, 0, NULL, &cuda_error);

  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *notice = NULL;
      ScBackend *b = saccade_backend_new (names[i], 1, 0, &notice, &error);
      g_assert_no_error (error);
      g_assert_nonnull (b);
      if (cuda != NULL)
        {
          g_assert_cmpstr (sc_backend_name (b), ==, "cuda");
          g_assert_null (notice);
        }
      else
        {
          /* The notice is one line and carries the reason `--backend cuda` gives. */
          g_assert_cmpstr (sc_backend_name (b), ==, "cpu");
          g_assert_nonnull (notice);
          g_assert_true (g_str_has_prefix (notice, "backend auto: "));
          g_assert_true (g_str_has_suffix (notice, "; using the CPU"));
          g_assert_null (strchr (notice, '\n'));
          g_assert_nonnull (strstr (notice, cuda_error->message));
        }
      sc_backend_free (b);
    }

  /* Asked for the backward ops, auto returns a backend that has them. */
  {
    g_autoptr (GError) error = NULL;
    ScBackend *b = saccade_backend_new ("auto", 1, SC_BACKEND_CAP_BACKWARD, NULL, &error);
    g_assert_no_error (error);
    g_assert_true (sc_backend_supports (b, SC_BACKEND_CAP_BACKWARD));
    sc_backend_free (b);
  }
  sc_backend_free (cuda);
}

/* ---- the window's loader ---------------------------------------------------------- */

typedef struct {
  GMainLoop *loop;
  SaccadeLoadedModel *model;
  GError *error;
} Load;

static void
loaded (GObject *source, GAsyncResult *res, gpointer data)
{
  Load *l = data;
  l->model = saccade_loaded_model_new_finish (res, &l->error);
  g_main_loop_quit (l->loop);
}

static void
load (const char *path, const char *backend, Load *l)
{
  l->loop = g_main_loop_new (NULL, FALSE);
  l->model = NULL;
  l->error = NULL;
  saccade_loaded_model_new_for_backend_async (path, backend, NULL, loaded, l);
  g_main_loop_run (l->loop);
  g_main_loop_unref (l->loop);
}

static void
test_loaded_model (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-backend-choice-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "tiny.gguf", NULL);
  gsize len;
  const void *bytes = g_bytes_get_data (sc_test_tiny_bytes (), &len);
  Load l;

  g_assert_true (g_file_set_contents (path, bytes, (gssize) len, NULL));

  load (path, "cpu-ref", &l);
  g_assert_no_error (l.error);
  g_assert_nonnull (strstr (saccade_loaded_model_get_backend_description (l.model),
                            "reference"));
  g_assert_cmpstr (saccade_loaded_model_get_backend_name (l.model), ==, "CPU");
  g_assert_null (saccade_loaded_model_get_backend_notice (l.model));
  g_clear_object (&l.model);

  load (path, "auto", &l);
  g_assert_no_error (l.error);
  if (!saccade_backend_have_cuda ())
    g_assert_nonnull (strstr (saccade_loaded_model_get_backend_notice (l.model),
                              "built without CUDA"));
  g_clear_object (&l.model);

  load (path, "bogus", &l);
  g_assert_null (l.model);
  g_assert_error (l.error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE);
  g_clear_error (&l.error);

  g_assert_cmpint (g_remove (path), ==, 0);
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/backend-choice/names-match-schema", test_names_match_schema);
  g_test_add_func ("/backend-choice/cpu", test_cpu_backends);
  g_test_add_func ("/backend-choice/unknown", test_unknown_names);
  g_test_add_func ("/backend-choice/cuda", test_cuda);
  g_test_add_func ("/backend-choice/auto", test_auto);
  g_test_add_func ("/backend-choice/loaded-model", test_loaded_model);
  return g_test_run ();
}
