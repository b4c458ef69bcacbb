/* saccade-model.c — model, backend, tokens and head statistics for both faces
 * (saccade-model.h). */
#define G_LOG_DOMAIN "saccade"

#include "app/core/saccade-model.h"

#include <stdlib.h>
#include <string.h>

#include "app/core/saccade-error.h"
#ifdef SC_HAVE_CUDA
#include "cuda/sc-backend-cuda.h"
#endif

ScModel *
saccade_model_load (const char *path, int threads, GError **error)
{
  ScError err = { 0 };
  ScModel *model = NULL;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, SACCADE_ERROR, SC_ERR_IO,
                   "model file %s does not exist; run data/fetch-model.sh to download the default "
                   "model, or pass -m FILE", path);
      return NULL;
    }
  if (sc_model_open (path, threads, &model, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  return model;
}

/* The order of the window's Backend preference, and of its GSettings choices
 * (data/io.github.saccade.Saccade.gschema.xml). */
static const char *const backend_choices[] = { SACCADE_BACKEND_AUTO, "cpu", "cuda", "cpu-ref",
                                                NULL };

/* What `--backend cuda` says in a build without CUDA (cuda/meson.build builds it only when
 * it finds nvcc). */
#define NO_CUDA_MESSAGE "this saccade was built without CUDA (nvcc was not found at build time)"

const char *const *
saccade_backend_choices (void)
{
  return backend_choices;
}

gboolean
saccade_backend_have_cuda (void)
{
#ifdef SC_HAVE_CUDA
  return TRUE;
#else
  return FALSE;
#endif
}

gboolean
saccade_backend_have_gpu (void)
{
#ifdef SC_HAVE_CUDA
  return sc_backend_cuda_device_count () > 0;
#else
  return FALSE;
#endif
}

gboolean
saccade_backend_check_name (const char *name, GError **error)
{
  if (name != NULL && g_strv_contains (backend_choices, name))
    return TRUE;
  g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
               "unknown backend '%s' (choose cpu, cpu-ref, cuda or auto)",
               name != NULL ? name : "(none)");
  return FALSE;
}

/* The CUDA backend on device 0, or NULL with @err set (SC_ERR_UNSUPPORTED without CUDA,
 * a device or a driver). */
static ScBackend *
cuda_backend_new (ScError *err)
{
#ifdef SC_HAVE_CUDA
  return sc_backend_cuda_new (0, err);
#else
  sc_error_set (err, SC_ERR_UNSUPPORTED, NO_CUDA_MESSAGE);
  return NULL;
#endif
}

ScBackend *
saccade_backend_new (const char *name, int threads, unsigned needs, char **notice,
                     GError **error)
{
  ScError err = { 0 };
  ScBackend *b;

  if (notice != NULL)
    *notice = NULL;
  if (name == NULL)
    name = SACCADE_BACKEND_AUTO;
  if (!saccade_backend_check_name (name, error))
    return NULL;
  if (strcmp (name, "cuda") == 0 || strcmp (name, SACCADE_BACKEND_AUTO) == 0)
    {
      const gboolean is_auto = strcmp (name, SACCADE_BACKEND_AUTO) == 0;
      if ((b = cuda_backend_new (&err)) != NULL
          && (!is_auto || sc_backend_supports (b, needs)))
        return b;
      if (!is_auto)
        {
          saccade_set_error_from_sc (error, &err);
          return NULL;
        }
      /* "auto": any failure of the GPU (no build, no device, no driver, no memory), or a
       * GPU backend without what the caller needs, leaves the CPU, which has every
       * capability; the notice says why. */
      if (notice != NULL)
        *notice = g_strdup_printf ("backend auto: %s; using the CPU",
                                   b != NULL ? "the CUDA backend lacks an op this needs "
                                               "(the backward pass)"
                                   : err.message[0] != '\0' ? err.message : "no CUDA device");
      g_clear_pointer (&b, sc_backend_free);
      sc_error_clear (&err);
    }
  if (strcmp (name, "cpu-ref") == 0)
    b = sc_backend_cpu_ref_new ();
  else
    b = sc_backend_cpu_new (threads, &err);
  if (b == NULL)
    {
      if (err.status == SC_OK)
        sc_error_set (&err, SC_ERR_NOMEM, "out of memory");
      saccade_set_error_from_sc (error, &err);
      if (notice != NULL)
        g_clear_pointer (notice, g_free);
    }
  return b;
}

gboolean
saccade_parse_token (ScModel *model, const char *option, const char *text, int *out,
                     GError **error)
{
  const ScModelInfo *info = sc_model_info (model);
  guint64 id;
  int32_t *ids = NULL;
  size_t n = 0;
  ScError err = { 0 };

  *out = -1;
  if (text == NULL)
    return TRUE;
  if (g_ascii_string_to_unsigned (text, 10, 0, G_MAXINT32, &id, NULL))
    {
      if (id >= info->n_vocab)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "%s %s is outside the vocabulary of %s (ids 0 to %u)", option, text,
                       info->name, info->n_vocab - 1);
          return FALSE;
        }
      *out = (int) id;
      return TRUE;
    }
  if (sc_tokenize (sc_model_tokenizer (model), text, strlen (text), false, true, &ids, &n,
                   &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  if (n != 1)
    {
      g_autoptr (GString) list = g_string_new (NULL);
      for (size_t i = 0; i < n; i++)
        g_string_append_printf (list, "%s%d", i > 0 ? " " : "", ids[i]);
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "%s '%s' is %zu tokens (%s), not one; give a text of one token "
                   "(mind the leading space: ' ball') or its id", option, text, n,
                   n > 0 ? list->str : "none");
      free (ids);
      return FALSE;
    }
  *out = ids[0];
  free (ids);
  return TRUE;
}

GArray *
saccade_tokenize (ScModel *model, const char *text, gssize len, gboolean parse_special,
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
saccade_chat_prompt (ScModel *model, const char *user_text, gssize len, gsize *out_len,
                     GError **error)
{
  const ScGguf *g = sc_model_gguf (model);
  ScGgufStr tmpl = { 0 };
  GString *p;

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
  /* Built with lengths, never through "%s": the user's text may hold NUL bytes. */
  if (len < 0)
    len = (gssize) strlen (user_text);
  p = g_string_sized_new ((gsize) len + 160);
  if (g_strstr_len (tmpl.ptr, (gssize) tmpl.len, "You are a helpful AI assistant named SmolLM")
      != NULL)
    g_string_append (p, "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, "
                        "trained by Hugging Face<|im_end|>\n");
  g_string_append (p, "<|im_start|>user\n");
  g_string_append_len (p, user_text, len);
  g_string_append (p, "<|im_end|>\n<|im_start|>assistant\n");
  if (out_len != NULL)
    *out_len = p->len;
  return g_string_free (p, FALSE);
}

void
saccade_head_stats_table_init (SaccadeHeadStatsTable *t, int n_layers, int n_heads)
{
  t->n_layers = n_layers;
  t->n_heads = n_heads;
  t->stats = g_new0 (ScHeadStats, (gsize) n_layers * n_heads);
}

void
saccade_head_stats_table_clear (SaccadeHeadStatsTable *t)
{
  g_clear_pointer (&t->stats, g_free);
  t->n_layers = t->n_heads = 0;
}

bool
saccade_head_stats_table_observe (void *user, int layer, int head, const float *probs,
                                  int n_query, int n_key)
{
  SaccadeHeadStatsTable *t = user;

  if (layer < 0 || layer >= t->n_layers || head < 0 || head >= t->n_heads)
    return false;
  return sc_head_stats_compute (probs, n_query, n_key, NULL,
                                &t->stats[(gsize) layer * t->n_heads + head], NULL) == SC_OK;
}

const ScHeadStats *
saccade_head_stats_table_get (const SaccadeHeadStatsTable *t, int layer, int head)
{
  return &t->stats[(gsize) layer * t->n_heads + head];
}
