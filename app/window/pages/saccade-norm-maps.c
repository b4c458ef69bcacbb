/* saccade-norm-maps.c — norm-based attention of the run a page shows (see
 * saccade-norm-maps.h): when it can be computed, the study through the shared
 * load-or-run-and-store path, a cache of one run's results by layer, and the CSV the
 * pages export of them. */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-norm-maps.h"

#include <glib/gi18n.h>

#include "app/core/saccade-csv.h"
#include "app/core/saccade-study.h"
#include "app/window/pages/saccade-page.h"

char *
saccade_norm_dup_unavailable (SaccadeRun *run, SaccadeLoadedModel *model, const char *db_path,
                              SaccadeNormNeed need)
{
  char *other;

  if (run == NULL)
    return g_strdup (_("No run is shown"));
  /* the run's own limits first: no model makes them go away */
  if (run->n < 2)
    return g_strdup_printf (_("Run %lld has one token: norm-based attention needs two"),
                            (long long) run->id);
  if (need == SACCADE_NORM_NEED_MAPS && !sc_norm_maps_fit (run->n_heads, run->n))
    {
      int most = 2;
      while (sc_norm_maps_fit (run->n_heads, most + 1))
        most++;
      /* Translators: the Heatmap page's Norm view on a long run: the maps of every head of a
       * layer are kept with the run only up to a length. */
      return g_strdup_printf (_("Run %lld has %d tokens: norm-based maps are kept for runs of "
                                "up to %d tokens of this model"),
                              (long long) run->id, run->n, most);
    }
  if ((gint64) run->n_heads * run->n > (gint64) SC_STORE_MAX_TOKENS)
    return g_strdup_printf (_("Run %lld has %d tokens: norm-based attention is kept for "
                              "runs of up to %u tokens of this model"),
                            (long long) run->id, run->n,
                            SC_STORE_MAX_TOKENS / (guint) MAX (1, run->n_heads));
  if (model == NULL)
    /* Translators: norm-based attention needs a forward pass of the run's model. */
    return g_strdup (_("Norm-based attention runs the model: it is still loading"));
  if (db_path == NULL)
    return g_strdup (_("Norm-based attention is stored with the run: no database is open"));
  if ((other = saccade_run_dup_other_model (run, model)) != NULL)
    return other;
  return NULL;
}

/* ------------------------------------------------------------------------------------ */
/* The study                                                                             */

void
saccade_norm_get_async (gpointer source_object, SaccadeLoadedModel *model, const char *db_path,
                        gint64 run_id, int layer, GCancellable *cancellable,
                        GAsyncReadyCallback callback, gpointer user_data)
{
  const ScNormParams params = { .layer = layer };

  saccade_study_get_async (source_object, model, db_path, run_id, &sc_study_kind_norms, &params,
                           SACCADE_STUDY_DEFAULT, cancellable, NULL, NULL, callback, user_data);
}

ScNormResult *
saccade_norm_get_finish (GAsyncResult *result, GError **error)
{
  g_autoptr (SaccadeStudy) s = saccade_study_get_finish (result, error);

  return s != NULL ? saccade_study_steal_result (s) : NULL;
}

/* ------------------------------------------------------------------------------------ */
/* The cache                                                                             */

struct _SaccadeNormCache
{
  gint64 run_id;       /* 0: none */
  GHashTable *layers;  /* layer (GINT_TO_POINTER) -> ScNormResult, owned */
};

SaccadeNormCache *
saccade_norm_cache_new (void)
{
  SaccadeNormCache *c = g_new0 (SaccadeNormCache, 1);

  c->layers = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) sc_norm_result_free);
  return c;
}

void
saccade_norm_cache_free (SaccadeNormCache *cache)
{
  if (cache == NULL)
    return;
  g_hash_table_unref (cache->layers);
  g_free (cache);
}

void
saccade_norm_cache_set_run (SaccadeNormCache *cache, gint64 run_id)
{
  if (cache->run_id == run_id)
    return;
  g_hash_table_remove_all (cache->layers);
  cache->run_id = run_id;
}

void
saccade_norm_cache_take (SaccadeNormCache *cache, ScNormResult *r)
{
  g_hash_table_replace (cache->layers, GINT_TO_POINTER (r->layer), r);
}

const ScNormResult *
saccade_norm_cache_lookup (SaccadeNormCache *cache, int layer)
{
  GHashTableIter it;
  gpointer value;

  if (layer >= 0)
    return g_hash_table_lookup (cache->layers, GINT_TO_POINTER (layer));
  g_hash_table_iter_init (&it, cache->layers);
  return g_hash_table_iter_next (&it, NULL, &value) ? value : NULL;
}

/* ------------------------------------------------------------------------------------ */
/* CSV                                                                                   */

/* "pos:token" as one field. */
static void
csv_label (GString *out, const char *const *labels, int pos)
{
  g_autofree char *label = g_strdup_printf ("%d:%s", pos, labels[pos]);
  saccade_csv_field (out, label);
}

GBytes *
saccade_norm_map_csv (const ScNormResult *r, int head, const char *const *labels, int q0,
                      int q1, int k0, int k1)
{
  const int n = r->n_tokens;
  const float *map = sc_norm_result_map (r, head);
  GString *out;

  if (map == NULL || head < 0 || head >= r->n_heads || q0 < 0 || k0 < 0 || q1 > n || k1 > n
      || q0 >= q1 || k0 >= k1)
    return NULL;
  out = g_string_new ("query\\key [norm ||alpha_ij f_h(x_j)||]");
  for (int j = k0; j < k1; j++)
    {
      g_string_append_c (out, ',');
      csv_label (out, labels, j);
    }
  g_string_append (out, "\r\n");
  for (int i = q0; i < q1; i++)
    {
      csv_label (out, labels, i);
      for (int j = k0; j < k1; j++)
        saccade_csv_add_number (out, map[(gsize) i * n + j]);
      g_string_append (out, "\r\n");
    }
  return g_string_free_to_bytes (out);
}

GBytes *
saccade_norm_heads_csv (const ScNormResult *r)
{
  GString *out = g_string_new ("layer,head,weight_first,norm_first,gap,vnorm_first,"
                               "vnorm_rest\r\n");

  for (int l = 0; l < r->n_layers; l++)
    for (int h = 0; h < r->n_heads; h++)
      {
        const int at = l * r->n_heads + h;
        g_string_append_printf (out, "%d,%d", l, h);
        saccade_csv_add_number (out, r->weight_first[at]);
        saccade_csv_add_number (out, r->norm_first[at]);
        saccade_csv_add_number (out, r->weight_first[at] - r->norm_first[at]);
        saccade_csv_add_number (out, r->vnorm_first[at]);
        saccade_csv_add_number (out, r->vnorm_rest[at]);
        g_string_append (out, "\r\n");
      }
  return g_string_free_to_bytes (out);
}
