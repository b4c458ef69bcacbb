/* sc-test-fixture.c — see sc-test-fixture.h. */
#include "sc-test-fixture.h"

char *
sc_test_reference_path (const char *name)
{
  const char *dir = g_getenv ("SC_TEST_REFERENCE_DIR");

  if (dir == NULL)
    g_error ("SC_TEST_REFERENCE_DIR is not set (run through meson test)");
  return g_build_filename (dir, name, NULL);
}

JsonObject *
sc_test_fixture_json (const char *name, JsonParser **parser_out)
{
  g_autofree char *path = sc_test_reference_path (name);
  g_autoptr (GError) error = NULL;
  JsonParser *p = json_parser_new ();

  if (!json_parser_load_from_file (p, path, &error))
    g_error ("%s: %s", path, error->message);
  *parser_out = p;
  return json_node_get_object (json_parser_get_root (p));
}

GMappedFile *
sc_test_fixture_map (const char *name)
{
  g_autofree char *path = sc_test_reference_path (name);
  g_autoptr (GError) error = NULL;
  GMappedFile *f = g_mapped_file_new (path, FALSE, &error);

  if (f == NULL)
    g_error ("%s: %s", path, error->message);
  return f;
}

int32_t *
sc_test_fixture_ids (JsonArray *a, int *n)
{
  int32_t *ids;

  *n = (int) json_array_get_length (a);
  ids = g_new (int32_t, *n > 0 ? *n : 1);
  for (int i = 0; i < *n; i++)
    ids[i] = (int32_t) json_array_get_int_element (a, (guint) i);
  return ids;
}

char *
sc_test_file_sha256 (const char *path)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GMappedFile) map = g_mapped_file_new (path, FALSE, &error);

  if (map == NULL)
    g_error ("%s: %s", path, error->message);
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256,
                                      (const guchar *) g_mapped_file_get_contents (map),
                                      g_mapped_file_get_length (map));
}
