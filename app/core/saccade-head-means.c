/* saccade-head-means.c — load the shipped reference set, then reuse or compute and store
 * every head's mean output over it (header). */
#define G_LOG_DOMAIN "saccade-head-means"

#include "app/core/saccade-head-means.h"

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

typedef struct {
  SaccadeProgress progress;
  gpointer user_data;
  GCancellable *cancellable;
} Progress;

static bool
on_progress (void *user, double fraction)
{
  Progress *p = user;

  if (p->progress != NULL)
    p->progress (fraction, p->user_data);
  return !g_cancellable_is_cancelled (p->cancellable);
}

SaccadeHeadMeans *
saccade_head_means_get (ScModel *model, const char *model_path, ScSession *session,
                        const char *db_path, const char *set, gboolean recompute,
                        SaccadeProgress progress, gpointer user_data,
                        GCancellable *cancellable, char **store_warning, GError **error)
{
  const ScModelInfo *info = sc_model_info (model);
  g_autoptr (GPtrArray) sentences = NULL;
  g_autoptr (GPtrArray) tokenized = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  g_autoptr (SaccadeHeadMeans) hm = g_new0 (SaccadeHeadMeans, 1);
  g_autofree const int32_t **ids = NULL;
  g_autofree int *lens = NULL;
  Progress prog = { progress, user_data, cancellable };
  ScStoreModel m;
  ScStore *store = NULL;
  ScError err = { 0 };
  gboolean have_id = FALSE;
  gint64 total = 0, t0;
  char params[160];
  guint i;

  if (set == NULL)
    set = SACCADE_REFERENCE_SET;
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
      total += a->len;
    }
  if (sc_head_means_params_json (set, (int) sentences->len, total, params, sizeof params) < 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "'%s' is not a valid reference set name", set);
      return NULL;
    }

  if (db_path != NULL && sc_store_model_identify (model, model_path, &m, &err) == SC_OK)
    {
      have_id = TRUE;
      store = saccade_store_open (db_path, TRUE, &err);
      if (store == NULL)
        store = saccade_store_open (db_path, FALSE, NULL); /* read what is there */
    }
  if (store != NULL && !recompute)
    {
      int64_t id = 0;
      ScError lerr = { 0 };
      ScStatus st = sc_head_means_load (store, info, m.sha256, params, &hm->means, &id, &lerr);
      if (st == SC_OK)
        {
          hm->study_id = id;
          hm->reused = TRUE;
          sc_store_close (store);
          return g_steal_pointer (&hm);
        }
      if (st == SC_ERR_FORMAT && store_warning != NULL)
        *store_warning = g_strdup_printf ("the stored means were refused and computed again: %s",
                                          lerr.message);
    }

  t0 = g_get_monotonic_time ();
  if (sc_head_means_run (session, model, ids, lens, (int) sentences->len, on_progress, &prog,
                         &hm->means, &err) != SC_OK)
    {
      sc_store_close (store);
      if (err.status == SC_ERR_CANCELLED)
        g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
      else
        saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  hm->seconds = (double) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
  if (store != NULL && have_id)
    {
      int64_t id = 0;
      if (!sc_store_is_writable (store))
        {
          if (store_warning != NULL && *store_warning == NULL)
            *store_warning = g_strdup ("the store is read-only");
        }
      else if (sc_head_means_store (store, &m, params, hm->means, &id, &err) == SC_OK)
        hm->study_id = id;
      else if (store_warning != NULL && *store_warning == NULL)
        *store_warning = g_strdup (err.message);
    }
  sc_store_close (store);
  return g_steal_pointer (&hm);
}
