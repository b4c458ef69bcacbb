/* saccade-cli.c — helpers shared by the CLI verbs (see saccade-cli.h). */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
saccade_cli_common_add (GOptionContext *ctx, SaccadeCliCommon *common)
{
  GOptionEntry entries[] = {
    { "model", 'm', 0, G_OPTION_ARG_FILENAME, &common->model_path,
      "GGUF model file (default: $SACCADE_MODEL, else the fetched SmolLM2-135M)", "FILE" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &common->json, "Print JSON", NULL },
    { "threads", 0, 0, G_OPTION_ARG_INT, &common->threads, "CPU threads (default: all cores)",
      "N" },
    { "reference", 0, 0, G_OPTION_ARG_NONE, &common->reference,
      "Use the scalar reference backend (slow; for checking)", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_option_context_add_main_entries (ctx, entries, NULL);
}

const char *
saccade_cli_model_path (const SaccadeCliCommon *common)
{
  return saccade_model_path (common->model_path);
}

ScModel *
saccade_cli_load_model (const SaccadeCliCommon *common, GError **error)
{
  return saccade_model_load (saccade_cli_model_path (common), common->threads, error);
}

ScBackend *
saccade_cli_backend (const SaccadeCliCommon *common, GError **error)
{
  return saccade_backend_new (common->threads, common->reference, error);
}

void
saccade_cli_print_json (JsonBuilder *builder)
{
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (builder);
  g_autofree char *text = NULL;

  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  text = json_generator_to_data (gen, NULL);
  printf ("%s\n", text);
}

char *
saccade_token_display (const char *bytes, gsize len)
{
  GString *s = g_string_new (NULL);
  const char *p = bytes, *end = bytes + len;

  while (p < end)
    {
      gunichar c = g_utf8_get_char_validated (p, end - p);
      if (c == (gunichar) -1 || c == (gunichar) -2)
        {
          g_string_append_printf (s, "\\x%02X", (unsigned char) *p);
          p++;
          continue;
        }
      if (c == '\n')
        g_string_append (s, "\\n");
      else if (c == '\t')
        g_string_append (s, "\\t");
      else if (c == '\r')
        g_string_append (s, "\\r");
      else if (c == '\\')
        g_string_append (s, "\\\\");
      else if (c < 0x20 || c == 0x7f)
        g_string_append_printf (s, "\\x%02X", c);
      else
        g_string_append_len (s, p, g_utf8_next_char (p) - p);
      p = g_utf8_next_char (p);
    }
  return g_string_free (s, FALSE);
}

gboolean
saccade_cli_parse_options (GOptionContext *ctx, int *argc, char ***argv)
{
  g_autoptr (GError) error = NULL;

  if (!g_option_context_parse (ctx, argc, argv, &error))
    {
      fprintf (stderr, "saccade: %s\n", error->message);
      return FALSE;
    }
  return TRUE;
}

int
saccade_cli_fail (GError *error)
{
  fprintf (stderr, "saccade: %s\n", error->message);
  g_error_free (error);
  return 1;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

double
saccade_median (double *v, int n)
{
  qsort (v, (size_t) n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
