/* saccade-cli.c — helpers shared by the CLI verbs (see saccade-cli.h). */
#define G_LOG_DOMAIN "saccade-cli"

#include "saccade-cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MODEL_NAME "SmolLM2-135M-Instruct.Q4_1.gguf"

G_DEFINE_QUARK (saccade-error-quark, saccade_error)

void
saccade_set_error_from_sc (GError **error, const ScError *err)
{
  g_set_error_literal (error, SACCADE_ERROR, (int) err->status,
                       err->message[0] != '\0' ? err->message : sc_status_name (err->status));
}

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
  static char *installed = NULL;
  const char *env;

  if (common->model_path != NULL)
    return common->model_path;
  env = g_getenv ("SACCADE_MODEL");
  if (env != NULL && *env != '\0')
    return env;
  /* A source-tree build finds the model fetched next to its sources; an installed one
   * looks in the user's data folder, where data/fetch-model.sh --user puts it. */
  if (g_file_test (SACCADE_SOURCE_MODEL, G_FILE_TEST_EXISTS))
    return SACCADE_SOURCE_MODEL;
  if (installed == NULL)
    installed = g_build_filename (g_get_user_data_dir (), "saccade", "models", DEFAULT_MODEL_NAME,
                                  NULL);
  return installed;
}

ScModel *
saccade_cli_load_model (const SaccadeCliCommon *common, GError **error)
{
  const char *path = saccade_cli_model_path (common);
  ScError err = { 0 };
  ScModel *model = NULL;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, SACCADE_ERROR, SC_ERR_IO,
                   "model file %s does not exist; run data/fetch-model.sh to download the default "
                   "model, or pass -m FILE", path);
      return NULL;
    }
  if (sc_model_open (path, common->threads, &model, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  return model;
}

ScBackend *
saccade_cli_backend (const SaccadeCliCommon *common, GError **error)
{
  ScError err = { 0 };
  ScBackend *b;

  if (common->reference)
    b = sc_backend_cpu_ref_new ();
  else
    b = sc_backend_cpu_new (common->threads, &err);
  if (b == NULL)
    {
      if (err.status == SC_OK)
        sc_error_set (&err, SC_ERR_NOMEM, "out of memory");
      saccade_set_error_from_sc (error, &err);
    }
  return b;
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

GArray *
saccade_cli_tokenize (ScModel *model, const char *text, gssize len, gboolean parse_special,
                      GError **error)
{
  ScError err = { 0 };
  int32_t *ids = NULL;
  size_t n = 0;
  GArray *out;

  if (len < 0)
    len = (gssize) strlen (text);
  if (sc_tokenize (sc_model_tokenizer (model), text, (size_t) len, TRUE, parse_special, &ids, &n,
                   &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  out = g_array_sized_new (FALSE, FALSE, sizeof (int32_t), (guint) n);
  g_array_append_vals (out, ids, (guint) n);
  free (ids);
  return out;
}

char *
saccade_cli_chat_prompt (ScModel *model, const char *user_text, GError **error)
{
  const ScGguf *g = sc_model_gguf (model);
  ScGgufStr tmpl = { 0 };

  /* We do not run Jinja: the ChatML template (SmolLM2, Qwen, ...) is recognised by its
   * markers and rendered here, with SmolLM2's default system turn when the template has
   * one. Other templates are refused rather than guessed. */
  if (sc_gguf_get_str (g, "tokenizer.chat_template", &tmpl, NULL) != SC_OK
      || g_strstr_len (tmpl.ptr, (gssize) tmpl.len, "<|im_start|>") == NULL)
    {
      g_set_error (error, SACCADE_ERROR, SC_ERR_UNSUPPORTED,
                   "the model has no ChatML chat template; use a plain prompt without --chat");
      return NULL;
    }
  if (g_strstr_len (tmpl.ptr, (gssize) tmpl.len, "You are a helpful AI assistant named SmolLM")
      != NULL)
    return g_strdup_printf ("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, "
                            "trained by Hugging Face<|im_end|>\n<|im_start|>user\n%s<|im_end|>\n"
                            "<|im_start|>assistant\n", user_text);
  return g_strdup_printf ("<|im_start|>user\n%s<|im_end|>\n<|im_start|>assistant\n", user_text);
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
