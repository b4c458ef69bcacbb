/* saccade-patch-stored.c — patching over a file of clean/corrupted pairs, each pair stored
 * as the patch (or path-patch) study of its two runs, resumable and sharded
 * (saccade-patch-file.h, "With a database"; docs/cluster.md).
 *
 * A pair is found in the database in three passes:
 *   1. its runs: every complete run of the model (by its file's SHA-256) whose text is the
 *      pair's clean (corrupted) text and whose token ids are the ones that text tokenises
 *      to — more than one when the text was captured twice, or when two shards each
 *      captured it and were merged;
 *   2. its study: the first (clean run, corrupted run) of those, in id order, whose params
 *      text names a complete stored study of the kind; none: the lowest ids (a run not
 *      there is captured now, as `saccade capture` stores it: every head, the predictions);
 *   3. saccade_study_get() on that pair of runs: read back (and checked) when stored, else
 *      computed and stored in its own transaction — the one path `saccade study patch`
 *      takes, so the two read each other's studies back.
 * What the database holds is listed once (pass 1 and 2's candidates), then kept up to date
 * in memory as runs are captured and studies stored; the store is opened only around a
 * capture, and saccade_study_get() opens its own (one connection per thread at a time). */
#define G_LOG_DOMAIN "saccade-patch"

#include "app/core/saccade-patch-file-private.h"

#include <glib/gi18n.h>
#include <string.h>

#include "app/core/saccade-capture-input.h"
#include "app/core/saccade-error.h"
#include "app/core/saccade-paths.h"
#include "app/core/saccade-study.h"
#include "engine/backend/sc-backend.h"
#include "engine/core/sc-sha256.h"
#include "engine/forward/sc-predict.h"
#include "engine/store/sc-store-merge.h"
#include "engine/store/sc-store-study.h"

/* A run of the database that one of the pairs' texts may be. */
typedef struct {
  gint64 id;
  char *text;
  GArray *ids;   /* int32_t */
} KnownRun;

static void
known_run_clear (KnownRun *r)
{
  g_free (r->text);
  g_clear_pointer (&r->ids, g_array_unref);
}

/* What the database holds for the file, as far as the pairs need it. */
typedef struct {
  GArray *runs;        /* KnownRun, by id */
  GHashTable *studies; /* params texts of the complete studies of the kind and model */
} Known;

static void
known_clear (Known *k)
{
  g_clear_pointer (&k->runs, g_array_unref);
  g_clear_pointer (&k->studies, g_hash_table_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Known, known_clear)

static const char *
kind_id (const SaccadePatchFileParams *p)
{
  return p->path ? SC_PATH_PATCH_KIND : SC_PATCH_STUDY_KIND;
}

/* Reads into @k the runs of @ident whose text is one of @texts, and the params of the
 * studies of @p's kind of @ident. */
static gboolean
known_read (ScStore *store, const ScStoreModel *ident, GHashTable *texts,
            const SaccadePatchFileParams *p, Known *k, GError **error)
{
  char hex[SC_SHA256_HEX_SIZE];
  ScStoreRunInfo *runs = NULL;
  ScStoreStudyRef *refs = NULL;
  size_t n_runs = 0, n_refs = 0;
  ScError err = { 0 };
  gboolean ok = FALSE;

  k->runs = g_array_new (FALSE, TRUE, sizeof (KnownRun));
  g_array_set_clear_func (k->runs, (GDestroyNotify) known_run_clear);
  k->studies = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  sc_sha256_hex (ident->sha256, hex);
  if (sc_store_list_runs (store, &runs, &n_runs, &err) != SC_OK
      || sc_store_list_studies (store, kind_id (p), &refs, &n_refs, &err) != SC_OK)
    goto out;
  for (size_t i = 0; i < n_runs; i++)
    {
      const ScStoreRunInfo *r = &runs[i];
      ScStoreRunInfo full = { 0 };
      ScStoreToken *tokens = NULL;
      size_t n_tokens = 0;
      KnownRun kr = { r->id, NULL, NULL };
      if (strcmp (r->model_sha256, hex) != 0)
        continue;
      if (r->text_truncated)
        {
          /* a listing keeps the first bytes of a long text: compare it whole */
          if (sc_store_get_run (store, r->id, &full, &err) != SC_OK)
            goto out;
          kr.text = g_strndup (full.text, full.text_len);
          sc_store_run_info_clear (&full);
        }
      else
        kr.text = g_strndup (r->text, r->text_len);
      if (!g_hash_table_contains (texts, kr.text))
        {
          g_free (kr.text);
          continue;
        }
      if (sc_store_read_tokens (store, r->id, &tokens, &n_tokens, &err) != SC_OK)
        {
          g_free (kr.text);
          goto out;
        }
      kr.ids = g_array_sized_new (FALSE, FALSE, sizeof (int32_t), (guint) n_tokens);
      for (size_t t = 0; t < n_tokens; t++)
        g_array_append_val (kr.ids, tokens[t].id);
      sc_store_tokens_free (tokens);
      g_array_append_val (k->runs, kr);
    }
  for (size_t i = 0; i < n_refs; i++)
    if (memcmp (refs[i].model_sha256, ident->sha256, SC_SHA256_DIGEST_SIZE) == 0)
      g_hash_table_add (k->studies, g_strdup (refs[i].params));
  ok = TRUE;
out:
  if (!ok)
    saccade_set_error_from_sc (error, &err);
  sc_store_run_list_free (runs, n_runs);
  sc_store_study_refs_free (refs, n_refs);
  return ok;
}

/* The runs of @k that are @text tokenised to @ids, in id order (caller frees). */
static GArray *
known_find (const Known *k, const char *text, const GArray *ids)
{
  GArray *found = g_array_new (FALSE, FALSE, sizeof (gint64));

  for (guint i = 0; i < k->runs->len; i++)
    {
      const KnownRun *r = &g_array_index (k->runs, KnownRun, i);
      if (strcmp (r->text, text) == 0 && r->ids->len == ids->len
          && memcmp (r->ids->data, ids->data, ids->len * sizeof (int32_t)) == 0)
        g_array_append_val (found, r->id);
    }
  return found;
}

/* The params text of the study of @p for the runs (@clean, @corrupted) into @buf. */
static gboolean
params_text (const SaccadePatchFileParams *p, const ScPatchParams *pp, gint64 clean,
             gint64 corrupted, char buf[SC_STUDY_PARAMS_MAX])
{
  ScPatchParams one = *pp;

  one.corrupted_run = corrupted;
  if (p->path)
    {
      ScPathPatchParams path = { .patch = one, .component = p->component };
      g_strlcpy (path.senders, p->senders, sizeof path.senders);
      return sc_path_patch_params_json (clean, &path, buf, SC_STUDY_PARAMS_MAX) > 0;
    }
  return sc_patch_params_json (clean, &one, buf, SC_STUDY_PARAMS_MAX) > 0;
}

/* Stores @text (@ids) as a run of @model in @db_path, as `saccade capture` does: every head
 * and the next-token predictions. Returns the run's id, or 0 with @error. */
static gint64
capture_text (ScModel *model, const ScStoreModel *ident, ScSession *session,
              const char *db_path, const char *text, const GArray *ids, GError **error)
{
  ScStoreToken *pieces = NULL;
  ScStoreCapture *cap = NULL;
  SaccadeCaptureOutcome out = { 0 };
  ScForwardOptions fo = { 0 };
  ScObserver obs;
  ScError err = { 0 };
  ScStore *store;

  if ((store = saccade_store_open (db_path, TRUE, &err)) == NULL)
    {
      saccade_set_error_from_sc (error, &err);
      return 0;
    }
  if (sc_store_tokens_from_ids (sc_model_tokenizer (model), (const int32_t *) ids->data,
                                ids->len, &pieces, &err) == SC_OK)
    {
      const ScStoreRunDesc desc = {
        .model = ident, .text = text, .text_len = strlen (text), .tokens = pieces,
        .n_tokens = ids->len, .backend = sc_backend_name (sc_session_backend (session)),
        .kind = SC_RUN_KIND_TEXT,
      };
      if (sc_store_capture_begin (store, &desc, &cap, &err) == SC_OK)
        {
          obs = sc_store_capture_observer (cap);
          fo.observer = &obs;
          saccade_capture_forward (session, model, cap, (const int32_t *) ids->data,
                                   (int) ids->len, &fo, NULL, NULL, &out, &err);
        }
    }
  sc_predictions_clear (&out.pred);
  sc_store_tokens_free (pieces);
  sc_store_close (store);
  if (out.run_id == 0)
    saccade_set_error_from_sc (error, &err);
  return out.run_id;
}

/* @text's run in @k, captured now (and added to @k) when there is none. */
static gint64
run_of (ScModel *model, const ScStoreModel *ident, ScSession *session, const char *db_path,
        Known *k, const GArray *found, const char *text, const GArray *ids, GError **error)
{
  KnownRun kr;

  if (found->len > 0)
    return g_array_index (found, gint64, 0);
  if ((kr.id = capture_text (model, ident, session, db_path, text, ids, error)) == 0)
    return 0;
  kr.text = g_strdup (text);
  kr.ids = g_array_copy ((GArray *) ids);
  g_array_append_val (k->runs, kr);
  return kr.id;
}

/* The shard manifest of the file (dataset @dataset, @n_pairs pairs) under @p, in @n_shards. */
static char *
manifest_text (const char *dataset, int n_pairs, int n_shards, const SaccadePatchFileParams *p)
{
  g_autofree char *settings = NULL;

  if (p->path)
    settings = g_strdup_printf ("{\"study\":\"%s\",\"direction\":\"%s\",\"senders\":\"%s\","
                                "\"component\":\"%s\"}", SC_PATH_PATCH_KIND,
                                sc_patch_direction_names[p->direction], p->senders,
                                sc_path_component_names[p->component]);
  else
    settings = g_strdup_printf ("{\"study\":\"%s\",\"direction\":\"%s\",\"what\":\"%s\"}",
                                SC_PATCH_STUDY_KIND, sc_patch_direction_names[p->direction],
                                sc_patch_what_names[p->what]);
  return g_strdup_printf ("{\"verb\":\"patch\",\"dataset\":\"%s\",\"pairs\":%d,\"shards\":%d,"
                          "\"settings\":%s}", dataset, n_pairs, n_shards, settings);
}

/* What @store's shard manifests of this file and settings say of the pairs missing: the
 * shards of @missing (the pairs' numbers in the file, from 0) that @store does not hold, "" when it holds
 * no such manifest. Caller frees. */
static char *
missing_shards (ScStore *store, const ScStoreModel *ident, const char *dataset, int n_pairs,
                const SaccadePatchFileParams *p, const GArray *missing)
{
  g_autoptr (GString) out = g_string_new (NULL);
  g_autoptr (GHashTable) present = g_hash_table_new (NULL, NULL);
  g_autoptr (GHashTable) named = g_hash_table_new (NULL, NULL);
  ScStoreManifest *man = NULL;
  size_t n_man = 0;
  ScError err = { 0 };
  int n_shards = 0;

  if (sc_store_read_shard_manifests (store, &man, &n_man, &err) != SC_OK || n_man == 0)
    {
      sc_store_manifests_free (man, n_man);
      return g_strdup ("");
    }
  for (size_t i = 0; i < n_man; i++)
    {
      g_autofree char *want = manifest_text (dataset, n_pairs, man[i].n, p);
      if (strcmp (man[i].params, want) != 0
          || memcmp (man[i].sha256, ident->sha256, SC_SHA256_DIGEST_SIZE) != 0)
        continue;
      n_shards = man[i].n;
      g_hash_table_add (present, GINT_TO_POINTER (man[i].index + 1));
    }
  sc_store_manifests_free (man, n_man);
  if (n_shards == 0)
    return g_strdup ("");
  for (guint i = 0; i < missing->len; i++)
    {
      const int s = g_array_index (missing, int, i) % n_shards;
      if (g_hash_table_contains (present, GINT_TO_POINTER (s + 1))
          || !g_hash_table_add (named, GINT_TO_POINTER (s + 1)))
        continue;
      g_string_append_printf (out, "%s%d/%d", out->len > 0 ? ", " : "", s, n_shards);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* Pair @i of @f (number @k in the file): its runs and study, read back or computed. With
 * STORED_ONLY a pair whose study is not stored is left empty (FALSE, no error). */
static gboolean
stored_pair (SaccadePatchFile *f, int i, ScModel *model, const ScStoreModel *ident,
             ScSession *session, const char *db_path, Known *known,
             const SaccadePatchFileParams *p, SaccadePatchFileMode mode,
             SaccadeProgressPart *prog, gboolean *missing, GError **error)
{
  const SaccadePatchPair *pair = g_ptr_array_index (f->pairs, i);
  g_autoptr (GArray) clean = NULL, corrupted = NULL, rc = NULL, rx = NULL;
  g_autoptr (SaccadeStudy) s = NULL;
  g_autofree char *warning = NULL;
  SaccadePatchStored *st = &f->stored[i];
  char pj[SC_STUDY_PARAMS_MAX];
  ScPatchParams pp;
  ScPathPatchParams path;
  ScPatchResult *grid;
  int first_row = 0;

  *missing = FALSE;
  if (!saccade_patch_pair_inputs (model, pair, p, &clean, &corrupted, &pp, error))
    return FALSE;
  rc = known_find (known, pair->clean, clean);
  rx = known_find (known, pair->corrupted, corrupted);
  /* 2. the first pair of runs with a stored study */
  for (guint a = 0; a < rc->len && st->clean_run == 0; a++)
    for (guint b = 0; b < rx->len && st->clean_run == 0; b++)
      if (params_text (p, &pp, g_array_index (rc, gint64, a), g_array_index (rx, gint64, b), pj)
          && g_hash_table_contains (known->studies, pj))
        {
          st->clean_run = g_array_index (rc, gint64, a);
          st->corrupted_run = g_array_index (rx, gint64, b);
        }
  if (st->clean_run == 0)
    {
      if (mode == SACCADE_PATCH_FILE_STORED_ONLY)
        {
          *missing = TRUE;
          return FALSE;
        }
      if ((st->clean_run = run_of (model, ident, session, db_path, known, rc, pair->clean,
                                   clean, error)) == 0
          || (st->corrupted_run = run_of (model, ident, session, db_path, known, rx,
                                          pair->corrupted, corrupted, error)) == 0)
        {
          g_prefix_error (error, _("line %d: "), pair->line);
          return FALSE;
        }
    }
  /* 3. the study, as `saccade study patch` gets it */
  pp.corrupted_run = st->corrupted_run;
  path = (ScPathPatchParams) { .patch = pp, .component = p->component };
  g_strlcpy (path.senders, p->senders, sizeof path.senders);
  s = saccade_study_get (p->path ? &sc_study_kind_path_patch : &sc_study_kind_patch,
                         p->path ? (const void *) &path : (const void *) &pp, model, ident,
                         session, db_path, st->clean_run,
                         mode == SACCADE_PATCH_FILE_STORED_ONLY ? SACCADE_STUDY_STORED_ONLY
                                                                : SACCADE_STUDY_DEFAULT,
                         saccade_progress_part_report, prog, prog->cancellable, &warning,
                         error);
  if (s == NULL)
    {
      g_prefix_error (error, _("line %d: "), pair->line);
      return FALSE;
    }
  if (s->study_id == 0)
    {
      /* the file's point is what it stores: a store that took nothing is a failure */
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   _("line %d: the study could not be stored in %s: %s"), pair->line, db_path,
                   warning != NULL ? warning : "?");
      return FALSE;
    }
  st->study_id = s->study_id;
  st->reused = s->reused;
  f->n_reused += s->reused;
  g_hash_table_add (known->studies, g_strdup (s->params_json));
  if (p->path)
    {
      ScPathPatchResult *r = saccade_study_steal_result (s);
      first_row = r->receivers_from_layer;
      grid = g_steal_pointer (&r->grid);
      sc_path_patch_result_free (r);
    }
  else
    grid = saccade_study_steal_result (s);
  return saccade_patch_file_take (f, i, grid, first_row, error);
}

SaccadePatchFile *
saccade_patch_file_run_stored (ScModel *model, const ScStoreModel *ident, ScSession *session,
                               const char *file_path, GPtrArray *pairs,
                               const SaccadePatchFileParams *p, const SaccadeShard *shard,
                               const char *db_path, SaccadePatchFileMode mode,
                               SaccadeProgress progress, gpointer user_data,
                               GCancellable *cancellable, GError **error)
{
  g_autoptr (GPtrArray) all = pairs;
  g_autoptr (GPtrArray) mine = g_ptr_array_new_with_free_func ((GDestroyNotify)
                                                               saccade_patch_pair_free);
  g_autoptr (GHashTable) texts = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GArray) number = g_array_new (FALSE, FALSE, sizeof (int));  /* in the file */
  g_autoptr (GArray) missing = g_array_new (FALSE, FALSE, sizeof (int)); /* in f->pairs */
  g_autoptr (SaccadePatchFile) f = NULL;
  g_autofree char *dataset = NULL;
  const SaccadeShard whole = { 0, 1 };
  const gboolean partial = shard != NULL && shard->count > 1;
  const gint64 t0 = g_get_monotonic_time ();
  g_auto (Known) known = { 0 };
  ScStore *store;
  ScError err = { 0 };

  if (shard == NULL)
    shard = &whole;
  if ((dataset = saccade_dataset_sha256 (file_path, error)) == NULL)
    return NULL;
  /* this shard's pairs, in file order */
  for (guint k = 0; k < all->len; k++)
    if (saccade_shard_has (shard, k))
      {
        SaccadePatchPair *pair = g_ptr_array_index (all, k);
        all->pdata[k] = NULL;
        g_ptr_array_add (mine, pair);
        g_array_append_val (number, k);
        g_hash_table_add (texts, pair->clean);
        g_hash_table_add (texts, pair->corrupted);
      }

  /* 1. what the database holds; a shard of several marks it first */
  if ((store = saccade_store_open (db_path, mode != SACCADE_PATCH_FILE_STORED_ONLY, &err))
      == NULL)
    {
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  if (partial)
    {
      g_autofree char *manifest = manifest_text (dataset, (int) all->len, shard->count, p);
      if (sc_store_shard_mark (store, ident, manifest, shard->index, shard->count, &err)
          != SC_OK)
        {
          sc_store_close (store);
          saccade_set_error_from_sc (error, &err);
          return NULL;
        }
    }
  if (!known_read (store, ident, texts, p, &known, error))
    {
      sc_store_close (store);
      return NULL;
    }
  sc_store_close (store);

  /* 2, 3. each pair */
  f = saccade_patch_file_new (g_steal_pointer (&mine), p);
  f->stored = g_new0 (SaccadePatchStored, MAX (f->n_pairs, 1));
  f->partial = partial;
  for (int i = 0; i < f->n_pairs; i++)
    {
      SaccadeProgressPart prog = { progress, user_data, cancellable, (double) i / f->n_pairs,
                                   1.0 / f->n_pairs };
      gboolean absent;
      if (!stored_pair (f, i, model, ident, session, db_path, &known, p, mode, &prog, &absent,
                        error))
        {
          if (!absent)
            return NULL;
          g_array_append_val (missing, i);
        }
    }
  if (missing->len > 0)
    {
      g_autoptr (GString) lines = g_string_new (NULL);
      g_autoptr (GArray) numbers = g_array_new (FALSE, FALSE, sizeof (int));
      g_autofree char *shards = NULL;
      for (guint m = 0; m < missing->len; m++)
        {
          const int i = g_array_index (missing, int, m);
          const SaccadePatchPair *pair = g_ptr_array_index (f->pairs, i);
          g_string_append_printf (lines, "%s%d", m > 0 ? ", " : "", pair->line);
          g_array_append_val (numbers, g_array_index (number, int, i));
        }
      if ((store = saccade_store_open (db_path, FALSE, &err)) != NULL)
        {
          shards = missing_shards (store, ident, dataset, (int) all->len, p, numbers);
          sc_store_close (store);
        }
      if (shards != NULL && *shards != '\0')
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                     _("%s holds no stored study of %u of the %d pairs of %s (lines %s): "
                       "shard %s is not in it; run it with --shard and merge its database "
                       "into %s (`saccade merge`)"), db_path, missing->len, f->n_pairs,
                     file_path, lines->str, shards, db_path);
      else
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                     _("%s holds no stored study of %u of the %d pairs of %s (lines %s) "
                       "under these settings; compute them with `saccade patch --file %s "
                       "--db %s`"), db_path, missing->len, f->n_pairs, file_path,
                     lines->str, file_path, db_path);
      return NULL;
    }
  if (!partial && !saccade_patch_file_summarise (f, p, error))
    return NULL;
  f->seconds = (double) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
  return g_steal_pointer (&f);
}
