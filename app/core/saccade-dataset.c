/* saccade-dataset.c — sharded, resumable faithfulness over a file of sentences, and the
 * report computed from a (merged) database (header). */
#define G_LOG_DOMAIN "saccade-dataset"

#include "app/core/saccade-dataset.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-model.h"
#include "app/core/saccade-paths.h"
#include "engine/store/sc-store-merge.h"
#include "engine/store/sc-store-study.h"

gboolean
saccade_shard_parse (const char *text, SaccadeShard *out, GError **error)
{
  g_auto (GStrv) parts = g_strsplit (text, "/", -1);
  guint64 i, n;

  if (g_strv_length (parts) != 2
      || !g_ascii_string_to_unsigned (parts[1], 10, 1, SC_STORE_MAX_SHARDS, &n, NULL)
      || !g_ascii_string_to_unsigned (parts[0], 10, 0, n - 1, &i, NULL))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   _("--shard is I/N with 0 <= I < N <= %d (e.g. 0/3, the first of three), "
                     "not '%s'"), SC_STORE_MAX_SHARDS, text);
      return FALSE;
    }
  out->index = (int) i;
  out->count = (int) n;
  return TRUE;
}

gboolean
saccade_shard_has (const SaccadeShard *shard, guint k)
{
  return k % (guint) shard->count == (guint) shard->index;
}

/* The study's settings out of a sentence's params text (sc_faith_params_json):
 * {"study":V,"run":..,"ids":..,"metric":... } -> {"study":V,"metric":...}. NULL when the
 * text does not have that shape. */
static char *
settings_of (const char *pj)
{
  const char *run = strstr (pj, ",\"run\":"), *metric = strstr (pj, "\"metric\":");

  if (!g_str_has_prefix (pj, "{\"study\":") || run == NULL || metric == NULL || metric < run)
    return NULL;
  return g_strdup_printf ("%.*s,%s", (int) (run - pj), pj, metric);
}

/* The settings of @p, as every sentence's params hold them. */
static char *
settings_text (const ScFaithParams *p)
{
  const int32_t one = 0;
  char pj[256];

  if (sc_faith_params_json (0, &one, 1, p, pj, sizeof pj) < 0)
    return NULL;
  return settings_of (pj);
}

/* What names a study over the file @file_path under @p: the file's hash into *@dataset and
 * the settings into *@settings (both freed by the caller). */
static gboolean
dataset_and_settings (const char *file_path, const ScFaithParams *p, char **dataset,
                      char **settings, GError **error)
{
  if ((*dataset = saccade_dataset_sha256 (file_path, error)) == NULL)
    return FALSE;
  if ((*settings = settings_text (p)) == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "faithfulness: bad parameters");
      return FALSE;
    }
  return TRUE;
}

static char *
manifest_text (const char *dataset, int n_sentences, int n_shards, const char *settings)
{
  return g_strdup_printf ("{\"verb\":\"faithfulness\",\"dataset\":\"%s\",\"sentences\":%d,"
                          "\"shards\":%d,\"settings\":%s}", dataset, n_sentences, n_shards,
                          settings);
}

char *
saccade_dataset_sha256 (const char *path, GError **error)
{
  g_autofree char *data = NULL;
  gsize len;

  if (!g_file_get_contents (path, &data, &len, error))
    return NULL;
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) data, len);
}

SaccadeFaithFile *
saccade_faithfulness_run_stored (ScModel *model, const char *model_path, ScSession *session,
                                 const char *file_path, GPtrArray *sentences,
                                 const ScFaithParams *params, const SaccadeShard *shard,
                                 const char *db_path, SaccadeProgress progress,
                                 gpointer user_data, GCancellable *cancellable, int *n_reused,
                                 GError **error)
{
  const ScModelInfo *info = sc_model_info (model);
  g_autoptr (GPtrArray) all = sentences;
  g_autoptr (SaccadeFaithFile) f = g_new0 (SaccadeFaithFile, 1);
  g_autofree char *dataset = NULL, *settings = NULL, *manifest = NULL;
  const gint64 t0 = g_get_monotonic_time ();
  ScStoreModel sm;
  ScStore *store = NULL;
  ScError err = { 0 };
  guint n = 0;

  if (n_reused != NULL)
    *n_reused = 0;
  if (!dataset_and_settings (file_path, params, &dataset, &settings, error))
    return NULL;
  manifest = manifest_text (dataset, (int) all->len, shard->count, settings);
  if (sc_store_model_identify (model, model_path, &sm, &err) != SC_OK
      || (store = saccade_store_open (db_path, TRUE, &err)) == NULL
      || sc_store_shard_mark (store, &sm, manifest, shard->index, shard->count, &err) != SC_OK)
    {
      sc_store_close (store);
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }

  /* this shard's sentences, in file order */
  f->sentences = saccade_faith_sentences_new ();
  for (guint k = 0; k < all->len; k++)
    if (saccade_shard_has (shard, k))
      {
        const SaccadeFaithSentence *from = g_ptr_array_index (all, k);
        saccade_faith_sentences_add (f->sentences, g_strdup (from->text), from->line);
      }
  n = f->sentences->len;
  f->results = g_new0 (ScFaithResult *, MAX (n, 1));
  f->n_tokens = g_new0 (int, MAX (n, 1));
  for (guint i = 0; i < n; i++)
    {
      const SaccadeFaithSentence *s = g_ptr_array_index (f->sentences, i);
      g_autoptr (GArray) ids = saccade_faith_sentence_ids (model, s, error);
      SaccadeProgressPart prog = { progress, user_data, cancellable, (double) i / n, 1.0 / n };
      char pj[256], pl[512];
      if (ids == NULL)
        {
          sc_store_close (store);
          return NULL;
        }
      f->n_tokens[i] = (int) ids->len;
      if (sc_faith_params_json (0, (const int32_t *) ids->data, (int) ids->len, params, pj,
                                sizeof pj) < 2
          || g_snprintf (pl, sizeof pl, "%.*s,\"dataset\":\"%s\",\"line\":%d}",
                         (int) strlen (pj) - 1, pj, dataset, s->line) >= (int) sizeof pl)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                               "faithfulness: bad parameters");
          sc_store_close (store);
          return NULL;
        }
      /* complete in the database already: an interrupted shard resumes here */
      if (sc_faith_load (store, info, sm.sha256, pl, params, &f->results[i], NULL, NULL)
          == SC_OK)
        {
          f->n_reused++;
          continue;
        }
      if (sc_faith_run (session, model, (const int32_t *) ids->data, (int) ids->len, params,
                        NULL, saccade_progress_part_engine, &prog, &f->results[i], NULL, &err) != SC_OK
          || sc_faith_store (store, &sm, pl, f->results[i], NULL, &err) != SC_OK)
        {
          saccade_set_error_from_sc_cancel (error, &err);
          g_prefix_error (error, _("line %d: "), s->line);
          sc_store_close (store);
          return NULL;
        }
      f->forward_s += f->results[i]->timing.forward_s;
    }
  sc_store_close (store);
  if (n > 0 && sc_faith_summarize ((const ScFaithResult *const *) f->results, (int) n,
                                   &f->summary, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  f->total_s = (double) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
  if (n_reused != NULL)
    *n_reused = f->n_reused;
  return g_steal_pointer (&f);
}

char *
saccade_faith_file_store_path (const char *folder, const char *file_path,
                               const ScFaithParams *params, GError **error)
{
  g_autofree char *dataset = NULL, *settings = NULL, *both = NULL, *key = NULL;
  g_autofree char *base = NULL, *stem = NULL, *name = NULL;
  char *dot;

  if (!dataset_and_settings (file_path, params, &dataset, &settings, error))
    return NULL;
  both = g_strconcat (dataset, settings, NULL);
  key = g_compute_checksum_for_string (G_CHECKSUM_SHA256, both, -1);
  base = g_path_get_basename (file_path);
  if ((dot = strrchr (base, '.')) != NULL && dot != base)
    *dot = '\0';
  /* the file's name kept readable, anything a file system might refuse replaced */
  stem = g_strcanon (g_strndup (base, 48),
                     "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", '_');
  name = g_strdup_printf ("%s-%.12s.sqlite", stem, key);
  return g_build_filename (folder, name, NULL);
}

gboolean
saccade_capture_shard_begin (ScStore *store, const ScStoreModel *model, const char *file_path,
                             guint n_lines, const char *settings, const SaccadeShard *shard,
                             guint *n_done, GError **error)
{
  g_autofree char *dataset = NULL, *manifest = NULL;
  ScStoreRunInfo *runs = NULL;
  size_t n_runs = 0;
  ScError err = { 0 };

  *n_done = 0;
  if ((dataset = saccade_dataset_sha256 (file_path, error)) == NULL)
    return FALSE;
  manifest = g_strdup_printf ("{\"verb\":\"capture\",\"dataset\":\"%s\",\"lines\":%u,"
                              "\"shards\":%d,\"settings\":%s}", dataset, n_lines,
                              shard->count, settings);
  if (sc_store_shard_mark (store, model, manifest, shard->index, shard->count, &err) != SC_OK
      || sc_store_list_runs (store, &runs, &n_runs, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  sc_store_run_list_free (runs, n_runs);
  *n_done = (guint) n_runs;
  return TRUE;
}

/* ------------------------------------------------------------------------------------ */
/* The report                                                                            */

void
saccade_faith_report_info_clear (SaccadeFaithReportInfo *info)
{
  g_clear_pointer (&info->model_name, g_free);
  g_clear_pointer (&info->dataset, g_free);
}

/* ScFaithParams from a manifest's settings object; FALSE when a member is missing or not
 * one of ours. */
static gboolean
params_from_settings (JsonObject *o, ScFaithParams *p)
{
  JsonNode *target, *grads;

  if (o == NULL || !json_object_has_member (o, "metric") || !json_object_has_member (o, "kind")
      || !json_object_has_member (o, "top_k") || (target = json_object_get_member (o, "target"))
      == NULL || (grads = json_object_get_member (o, "gradients")) == NULL
      /* null or a number: anything else (an object, an array) is not ours */
      || !(JSON_NODE_HOLDS_NULL (target) || JSON_NODE_HOLDS_VALUE (target))
      || !(JSON_NODE_HOLDS_NULL (grads) || JSON_NODE_HOLDS_VALUE (grads))
      || !sc_faith_metric_from_id (json_object_get_string_member_with_default (o, "metric", ""),
                                   &p->metric)
      || !sc_faith_erase_from_id (json_object_get_string_member_with_default (o, "kind", ""),
                                  &p->kind))
    return FALSE;
  p->top_k = (int) json_object_get_int_member_with_default (o, "top_k", -1);
  p->target = JSON_NODE_HOLDS_NULL (target) ? -1 : (int) json_node_get_int (target);
  p->gradients = !JSON_NODE_HOLDS_NULL (grads);
  p->ig_steps = p->gradients ? (int) json_node_get_int (grads) : 0;
  p->exclude_first = false; /* a reading choice, not a setting: both sets are stored */
  /* written only when asked (sc_faith_params_json): absent is off */
  p->mixing = json_object_get_boolean_member_with_default (o, "mixing", FALSE);
  p->contrastive = json_object_has_member (o, "contrast");
  p->contrast = p->contrastive ? (int) json_object_get_int_member_with_default (o, "contrast",
                                                                                 -1)
                               : -1;
  return p->top_k >= 0 && p->target >= -1 && p->ig_steps >= 0
         && (!p->contrastive || p->contrast >= 0);
}

static JsonObject *
parse_object (const char *text, JsonParser *parser)
{
  JsonNode *root;

  if (!json_parser_load_from_data (parser, text, -1, NULL)
      || (root = json_parser_get_root (parser)) == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;
  return json_node_get_object (root);
}

typedef struct {
  int line;
  const ScStoreStudyRef *ref;
} Item;

static int
item_cmp (gconstpointer a, gconstpointer b)
{
  const Item *x = a, *y = b;

  if (x->line != y->line)
    return x->line < y->line ? -1 : 1;
  return x->ref->id < y->ref->id ? -1 : x->ref->id > y->ref->id;
}

SaccadeFaithFile *
saccade_faithfulness_report (const char *db_path, SaccadeFaithReportInfo *info,
                             GError **error)
{
  g_autoptr (SaccadeFaithFile) f = NULL;
  g_autoptr (GArray) items = g_array_new (FALSE, FALSE, sizeof (Item));
  g_autoptr (GHashTable) shards = g_hash_table_new (NULL, NULL);
  g_autofree char *manifest = NULL, *settings = NULL;
  ScStoreStudyRef *man = NULL, *refs = NULL;
  ScStoreManifest *checked = NULL;
  size_t n_man = 0, n_refs = 0, n_checked = 0;
  ScStore *store = NULL;
  ScError err = { 0 };
  gboolean ok = FALSE;

  memset (info, 0, sizeof *info);
  if ((store = saccade_store_open (db_path, FALSE, &err)) == NULL
      /* the manifests read and checked as the merge reads them (sc-store-merge.h) */
      || sc_store_read_shard_manifests (store, &checked, &n_checked, &err) != SC_OK
      || sc_store_list_studies (store, SC_STORE_SHARD_KIND, &man, &n_man, &err) != SC_OK
      || sc_store_list_studies (store, SC_FAITH_KIND, &refs, &n_refs, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      goto out;
    }
  if (n_man == 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   _("%s holds no faithfulness study of a sentence file (no shard manifest); "
                     "run `saccade faithfulness --file SENTENCES --db %s` first"), db_path,
                   db_path);
      goto out;
    }

  /* 1. the manifests: one text, understood, re-written the same */
  {
    g_autoptr (JsonParser) parser = json_parser_new ();
    JsonObject *o = parse_object (man[0].params, parser);
    JsonObject *so;
    JsonNode *sn;
    g_autofree char *again = NULL;
    if (o == NULL || g_strcmp0 (json_object_get_string_member_with_default (o, "verb", ""),
                                "faithfulness") != 0
        || (sn = json_object_get_member (o, "settings")) == NULL
        || !JSON_NODE_HOLDS_OBJECT (sn) || (so = json_node_get_object (sn)) == NULL
        || !params_from_settings (so, &info->params)
        || (settings = settings_text (&info->params)) == NULL)
      {
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                     _("%s: the shard manifest (study %lld) is not a faithfulness manifest "
                       "Saccade writes: %s"), db_path, (long long) man[0].id, man[0].params);
        goto out;
      }
    info->dataset = g_strdup (json_object_get_string_member_with_default (o, "dataset", ""));
    info->n_file_sentences = (int) json_object_get_int_member_with_default (o, "sentences", 0);
    info->n_shards = (int) json_object_get_int_member_with_default (o, "shards", 0);
    info->model_name = g_strdup (man[0].model_name);
    again = manifest_text (info->dataset, info->n_file_sentences, info->n_shards, settings);
    if (strcmp (again, man[0].params) != 0 || info->n_file_sentences < 1
        || info->n_shards < 1)
      {
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                     _("%s: the shard manifest (study %lld) is not in the form Saccade writes: "
                       "%s"), db_path, (long long) man[0].id, man[0].params);
        goto out;
      }
    manifest = g_steal_pointer (&again);
  }
  for (size_t k = 0; k < n_checked; k++)
    {
      if (strcmp (checked[k].params, manifest) != 0
          || memcmp (checked[k].sha256, man[0].model_sha256, SC_SHA256_DIGEST_SIZE) != 0)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       _("%s holds shards of two studies (%s and %s, or two models); a report "
                         "covers one"), db_path, man[0].params, checked[k].params);
          goto out;
        }
      g_hash_table_add (shards, GINT_TO_POINTER (checked[k].index + 1));
    }
  info->n_shards_present = (int) g_hash_table_size (shards);

  /* 2. the sentence studies of this dataset and these settings, by line */
  for (size_t k = 0; k < n_refs; k++)
    {
      g_autoptr (JsonParser) parser = json_parser_new ();
      JsonObject *o;
      g_autofree char *tail = NULL, *head = NULL, *set = NULL;
      const char *p = refs[k].params;
      gint64 line;
      if (memcmp (refs[k].model_sha256, man[0].model_sha256, SC_SHA256_DIGEST_SIZE) != 0
          || (o = parse_object (p, parser)) == NULL
          || g_strcmp0 (json_object_get_string_member_with_default (o, "dataset", ""),
                        info->dataset) != 0)
        continue; /* a study of a run, of another file or model */
      if (sc_store_check_line_param (db_path, refs[k].id, p, &err) != SC_OK)
        {
          saccade_set_error_from_sc (error, &err);
          goto out;
        }
      line = json_object_get_int_member_with_default (o, "line", 0);
      tail = g_strdup_printf (",\"dataset\":\"%s\",\"line\":%" G_GINT64_FORMAT "}",
                              info->dataset, line);
      if (line < 1 || line > G_MAXINT || !g_str_has_suffix (p, tail))
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                       _("%s: study %lld is not a sentence study Saccade writes: %s"),
                       db_path, (long long) refs[k].id, p);
          goto out;
        }
      head = g_strdup_printf ("%.*s}", (int) (strlen (p) - strlen (tail)), p);
      if ((set = settings_of (head)) == NULL || strcmp (set, settings) != 0)
        continue; /* the same file under other settings */
      g_array_append_val (items, ((Item) { (int) line, &refs[k] }));
    }
  if (items->len == 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   _("%s holds no complete sentence study of its dataset yet"), db_path);
      goto out;
    }
  g_array_sort (items, item_cmp);

  /* 3. each line once (the latest study of it), read back checked, summarised */
  f = g_new0 (SaccadeFaithFile, 1);
  f->sentences = saccade_faith_sentences_new ();
  f->results = g_new0 (ScFaithResult *, items->len);
  f->n_tokens = g_new0 (int, items->len);
  {
    ScModelInfo mi = { 0 };
    mi.n_layers = man[0].n_layers;
    mi.n_heads = man[0].n_heads;
    mi.n_vocab = man[0].n_vocab;
    for (guint i = 0; i < items->len; i++)
      {
        const Item *it = &g_array_index (items, Item, i);
        const guint n = f->sentences->len;
        if (i + 1 < items->len && g_array_index (items, Item, i + 1).line == it->line)
          continue;
        if (sc_faith_load (store, &mi, man[0].model_sha256, it->ref->params, &info->params,
                           &f->results[n], NULL, &err) != SC_OK)
          {
            saccade_set_error_from_sc (error, &err);
            goto out;
          }
        f->n_tokens[n] = f->results[n]->n_tokens;
        saccade_faith_sentences_add (f->sentences, g_strdup (""), it->line);
      }
  }
  if (sc_faith_summarize ((const ScFaithResult *const *) f->results, (int) f->sentences->len,
                          &f->summary, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      goto out;
    }
  ok = TRUE;

out:
  sc_store_study_refs_free (man, n_man);
  sc_store_study_refs_free (refs, n_refs);
  sc_store_manifests_free (checked, n_checked);
  sc_store_close (store);
  if (!ok)
    {
      saccade_faith_report_info_clear (info);
      return NULL;
    }
  return g_steal_pointer (&f);
}
