/* saccade-cli-models.c — `saccade models`: the model files fetched on this machine, as the
 * window's model menu lists them (app/core/saccade-models.h): readable name, architecture,
 * layers × heads, size and path, the default marked; --json for the same as an array.
 * A file whose header Saccade refuses is listed with the reason.
 */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli.h"

#include <stdio.h>

#include "app/core/saccade-models.h"

static void
models_print_json (GPtrArray *files)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_array (b);
  for (guint i = 0; i < files->len; i++)
    {
      const SaccadeModelFile *f = g_ptr_array_index (files, i);
      json_builder_begin_object (b);
      saccade_json_string (b, "path", f->path);
      if (f->name != NULL)
        {
          saccade_json_string (b, "name", f->name);
          saccade_json_string (b, "architecture", f->arch);
          saccade_json_int (b, "layers", f->n_layers);
          saccade_json_int (b, "heads", f->n_heads);
        }
      else
        saccade_json_string (b, "error", f->error);
      saccade_json_int (b, "file_bytes", f->bytes);
      saccade_json_bool (b, "default", f->is_default);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  saccade_json_print (b);
}

/* @text padded with spaces to @width characters (not bytes: names hold "·"). */
static char *
padded (const char *text, glong width)
{
  glong n = g_utf8_strlen (text, -1);
  GString *s = g_string_new (text);

  while (n++ < width)
    g_string_append_c (s, ' ');
  return g_string_free (s, FALSE);
}

static void
models_print_text (GPtrArray *files)
{
  g_auto (GStrv) dirs = saccade_model_dirs ();
  g_autofree char *where = g_strjoinv (", ", dirs);

  if (files->len == 0)
    {
      g_autofree char *shown = saccade_terminal_text (where, -1);
      printf ("No model files in %s: data/fetch-model.sh fetches the default one "
              "(`data/fetch-model.sh gemma3` or `qwen2.5-0.5b` the others).\n", shown);
      return;
    }
  for (guint i = 0; i < files->len; i++)
    {
      const SaccadeModelFile *f = g_ptr_array_index (files, i);
      g_autofree char *path = saccade_terminal_text (f->path, -1);
      g_autofree char *size = g_format_size (f->bytes > 0 ? (guint64) f->bytes : 0);

      if (f->name != NULL)
        {
          g_autofree char *shown = saccade_terminal_text (f->name, -1);
          g_autofree char *name = padded (shown, 40);
          g_autofree char *arch = saccade_terminal_text (f->arch, -1);
          printf ("%s %s %-8s %3u × %-3u %9s  %s\n", f->is_default ? "*" : " ", name, arch,
                  f->n_layers, f->n_heads, size, path);
        }
      else
        {
          g_autofree char *why = saccade_terminal_text (f->error, -1);
          printf ("! %s\n  %9s  %s\n", why, size, path);
        }
    }
  printf ("(* the default model; layers × heads; `saccade … -m FILE` or the window's model "
          "menu opens another)\n");
}

int
saccade_cmd_models (int argc, char **argv)
{
  gboolean json = FALSE;
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- list the fetched model files");
  g_autoptr (GPtrArray) files = NULL;

  if (!saccade_cli_parse_json_only (ctx, &json, &argc, &argv))
    return 2;
  if (argc > 1)
    {
      fprintf (stderr, "saccade models: unexpected argument '%s' (it takes none)\n", argv[1]);
      return 2;
    }
  files = saccade_model_files ();
  if (json)
    models_print_json (files);
  else
    models_print_text (files);
  return 0;
}
