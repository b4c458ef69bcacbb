/* saccade-head-means.c — load the shipped reference set, then reuse or compute and store
 * every head's mean output over it (header). */
#define G_LOG_DOMAIN "saccade-head-means"

#include "app/core/saccade-head-means.h"

#include "app/core/saccade-study.h"

#include <string.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-model.h"
#include "app/core/saccade-paths.h"
#include "engine/store/sc-store-study.h"

#define SET_HEADER "# saccade-reference-set: "
#define RESOURCE_DIR "/io/github/saccade/Saccade/reference/"

void
saccade_head_means_free (SaccadeHeadMeans *hm)
{
  if (hm == NULL)
    return;
  sc_head_means_free (hm->means);
  g_free (hm->set);
  g_free (hm);
}

GPtrArray *
saccade_reference_set_parse (const char *text, gssize len, const char *name, GError **error)
{
  g_autoptr (GPtrArray) out = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *copy = NULL;
  g_auto (GStrv) lines = NULL;
  const char *bad = NULL;
  guint i;

  if (len < 0)
    len = (gssize) strlen (text);
  if (!g_utf8_validate (text, len, &bad))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "reference set %s: not UTF-8 at byte %" G_GSSIZE_FORMAT, name,
                   (gssize) (bad - text));
      return NULL;
    }
  copy = g_strndup (text, (gsize) len);
  lines = g_strsplit (copy, "\n", -1);
  for (i = 0; lines[i] != NULL; i++)
    {
      char *line = lines[i];
      const gsize n = strlen (line);
      if (n > 0 && line[n - 1] == '\r')
        line[n - 1] = '\0';
      if (i == 0)
        {
          if (!g_str_has_prefix (line, SET_HEADER) || strcmp (line + strlen (SET_HEADER), name) != 0)
            {
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           "reference set %s: line 1 is \"%.60s\", not \"" SET_HEADER "%s\"", name,
                           line, name);
              return NULL;
            }
          continue;
        }
      if (line[0] == '#' || line[strspn (line, " \t")] == '\0')
        continue;
      g_ptr_array_add (out, g_strdup (line));
    }
  if (out->len == 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "reference set %s holds no sentences", name);
      return NULL;
    }
  return g_steal_pointer (&out);
}

GPtrArray *
saccade_reference_set_load (const char *name, GError **error)
{
  g_autofree char *path = NULL;
  g_autoptr (GBytes) bytes = NULL;
  gsize len;
  const char *data;

  if (name == NULL)
    name = SACCADE_REFERENCE_SET;
  path = g_strconcat (RESOURCE_DIR, name, ".txt", NULL);
  if ((bytes = g_resources_lookup_data (path, G_RESOURCE_LOOKUP_FLAGS_NONE, NULL)) == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "this build ships no reference set named '%s' (it ships '%s')", name,
                   SACCADE_REFERENCE_SET);
      return NULL;
    }
  data = g_bytes_get_data (bytes, &len);
  return saccade_reference_set_parse (data, (gssize) len, name, error);
}

SaccadeHeadMeans *
saccade_head_means_get (ScModel *model, const char *model_path, ScSession *session,
                        const char *db_path, const char *set, gboolean recompute,
                        SaccadeProgress progress, gpointer user_data,
                        GCancellable *cancellable, char **store_warning, GError **error)
{
  g_autoptr (GPtrArray) sentences = NULL;
  g_autoptr (GPtrArray) tokenized = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  g_autoptr (SaccadeHeadMeans) hm = g_new0 (SaccadeHeadMeans, 1);
  g_autofree const int32_t **ids = NULL;
  g_autofree int *lens = NULL;
  g_autoptr (SaccadeStudy) study = NULL;
  ScHeadMeansParams params;
  ScStoreModel m;
  ScError err = { 0 };
  gboolean have_id = FALSE;
  guint i;

  if (set == NULL)
    set = SACCADE_REFERENCE_SET;
  params.set = set;
  hm->set = g_strdup (set);
  if ((sentences = saccade_reference_set_load (set, error)) == NULL)
    return NULL;
  ids = g_new (const int32_t *, sentences->len);
  lens = g_new (int, sentences->len);
  for (i = 0; i < sentences->len; i++)
    {
      GArray *a = saccade_tokenize (model, g_ptr_array_index (sentences, i), -1, TRUE, error);
      if (a == NULL)
        {
          g_prefix_error (error, "reference set %s, sentence %u: ", set, i + 1);
          return NULL;
        }
      if (a->len == 0)
        {
          g_array_unref (a);
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       "reference set %s, sentence %u tokenizes to nothing", set, i + 1);
          return NULL;
        }
      g_ptr_array_add (tokenized, a);
      ids[i] = (const int32_t *) a->data;
      lens[i] = (int) a->len;
    }
  if (db_path != NULL && sc_store_model_identify (model, model_path, &m, &err) == SC_OK)
    have_id = TRUE;
  study = saccade_study_get_sentences (&sc_study_kind_head_means, &params, model,
                                       have_id ? &m : NULL, session, have_id ? db_path : NULL,
                                       ids, lens, (int) sentences->len,
                                       recompute ? SACCADE_STUDY_RECOMPUTE : SACCADE_STUDY_DEFAULT,
                                       progress, user_data, cancellable, store_warning, error);
  if (study == NULL)
    return NULL;
  if (study->refused != NULL && store_warning != NULL && *store_warning == NULL)
    *store_warning = g_strdup_printf ("the stored means were refused and computed again: %s",
                                      study->refused);
  hm->means = saccade_study_steal_result (study);
  hm->source.study_id = study->study_id;
  hm->source.reused = study->reused;
  hm->source.seconds = study->seconds;
  return g_steal_pointer (&hm);
}
