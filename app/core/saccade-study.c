/* saccade-study.c — the one load-or-run-and-store path for every study kind
 * (saccade-study.h). The passes of saccade_study_get():
 *   1. the store (writable unless only reading) and the run, checked;
 *   2. the params text (the kind validates its params here);
 *   3. reuse: the latest complete stored study with that text, if it describes the run;
 *   4. compute: the reference means first where the kind needs them, a backward pass
 *      where it needs one, then the kind's run;
 *   5. store, whole or not at all, after checking that the run is still there.
 * Nothing here knows a kind: what differs is in the ScStudyKind.
 */
#define G_LOG_DOMAIN "saccade-study"

#include "app/core/saccade-study.h"

#include <glib/gi18n.h>
#include <limits.h>
#include <string.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-head-means.h"
#include "app/core/saccade-paths.h"

/* ------------------------------------------------------------------------------------ */
/* The run                                                                               */

void
saccade_study_run_free (SaccadeStudyRun *r)
{
  if (r == NULL)
    return;
  sc_store_run_info_clear (&r->run);
  sc_store_tokens_free (r->tokens);
  g_free (r->ids);
  g_free (r);
}

void
saccade_study_set_run_gone (GError **error, gint64 run_id)
{
  /* Translators: a study was asked of a run that was deleted meanwhile. */
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
               _("Run %lld is no longer in the database"), (long long) run_id);
}

SaccadeStudyRun *
saccade_study_read_run (ScStore *store, const ScStoreModel *ident, const ScModelInfo *info,
                        gint64 run_id, const char *db_path, GError **error)
{
  g_autoptr (SaccadeStudyRun) r = g_new0 (SaccadeStudyRun, 1);
  ScError err = { 0 };
  char hex[SC_SHA256_HEX_SIZE];
  size_t n = 0;
  ScStatus st;

  st = sc_store_get_run (store, run_id, &r->run, &err);
  if (st == SC_OK)
    st = sc_store_read_tokens (store, run_id, &r->tokens, &n, &err);
  if (st == SC_ERR_NOT_FOUND && db_path != NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   _("there is no run %lld in %s (see `saccade runs`)"), (long long) run_id,
                   db_path);
      return NULL;
    }
  if (st == SC_ERR_NOT_FOUND)
    {
      saccade_study_set_run_gone (error, run_id);
      return NULL;
    }
  if (st != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  sc_sha256_hex (ident->sha256, hex);
  if (strcmp (hex, r->run.model_sha256) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   /* Translators: the run, its model's name and the loaded model's. */
                   _("Run %lld was captured with %s, another model file than the loaded %s"),
                   (long long) run_id, r->run.model_name, ident->name);
      return NULL;
    }
  if (n < 1 || n > INT_MAX)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("Run %lld has no tokens"), (long long) run_id);
      return NULL;
    }
  r->ids = g_new (int32_t, n);
  for (size_t i = 0; i < n; i++)
    {
      /* An untrusted store: the engine checks ids too, but say which token is wrong. */
      if (r->tokens[i].id < 0 || (uint32_t) r->tokens[i].id >= info->n_vocab)
        {
          g_set_error (error, SACCADE_ERROR, SC_ERR_FORMAT,
                       "run %lld: token %zu has id %d, outside the vocabulary of %u",
                       (long long) run_id, i, r->tokens[i].id, info->n_vocab);
          return NULL;
        }
      r->ids[i] = r->tokens[i].id;
    }
  r->n_tokens = (int) n;
  return g_steal_pointer (&r);
}

SaccadeStudyRun *
saccade_study_read_run_at (const char *db_path, const ScStoreModel *ident,
                           const ScModelInfo *info, gint64 run_id, GError **error)
{
  SaccadeStudyRun *run;
  ScError err = { 0 };
  ScStore *store;

  if (!g_file_test (db_path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _("no capture store at %s"),
                   db_path);
      return NULL;
    }
  if ((store = saccade_store_open (db_path, FALSE, &err)) == NULL)
    {
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  run = saccade_study_read_run (store, ident, info, run_id, db_path, error);
  sc_store_close (store);
  return run;
}

gboolean
saccade_run_model_read (ScStore *store, gint64 run_id, SaccadeRunModel *out, GError **error)
{
  ScError err = { 0 };
  ScStatus st;

  memset (out, 0, sizeof *out);
  st = sc_store_get_run (store, run_id, &out->run, &err);
  if (st == SC_ERR_NOT_FOUND)
    {
      saccade_study_set_run_gone (error, run_id);
      return FALSE;
    }
  if (st != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  for (int i = 0; i < SC_SHA256_DIGEST_SIZE; i++)
    out->ident.sha256[i] = (uint8_t) g_ascii_xdigit_value (out->run.model_sha256[2 * i]) << 4
                           | (uint8_t) g_ascii_xdigit_value (out->run.model_sha256[2 * i + 1]);
  out->ident.path = out->run.model_path;
  out->ident.name = out->run.model_name;
  out->ident.arch = out->run.model_arch;
  out->ident.n_layers = out->info.n_layers = out->run.n_layers;
  out->ident.n_heads = out->info.n_heads = out->run.n_heads;
  out->ident.n_kv_heads = out->info.n_kv_heads = out->run.n_kv_heads;
  out->ident.head_dim = out->info.head_dim = out->run.head_dim;
  out->ident.n_vocab = out->info.n_vocab = out->run.n_vocab;
  g_strlcpy (out->info.name, out->run.model_name, sizeof out->info.name);
  g_strlcpy (out->info.arch_name, out->run.model_arch, sizeof out->info.arch_name);
  return TRUE;
}

void
saccade_run_model_clear (SaccadeRunModel *m)
{
  sc_store_run_info_clear (&m->run);
  memset (m, 0, sizeof *m);
}

void
saccade_study_face_base_clear (SaccadeStudyFaceBase *base)
{
  sc_store_run_info_clear (&base->run);
  g_clear_pointer (&base->tokens, sc_store_tokens_free);
}

gpointer
saccade_study_face_base_take (SaccadeStudyFaceBase *base, SaccadeStudy *s)
{
  base->reused = s->reused;
  base->study_id = s->study_id;
  return saccade_study_steal_result (s);
}

gboolean
saccade_study_read_run_into (const char *db_path, const ScStoreModel *ident,
                             const ScModelInfo *info, gint64 run_id, SaccadeStudyFaceBase *base,
                             GError **error)
{
  g_autoptr (SaccadeStudyRun) r = saccade_study_read_run_at (db_path, ident, info, run_id,
                                                              error);

  if (r == NULL)
    return FALSE;
  base->run = r->run;
  memset (&r->run, 0, sizeof r->run);
  base->tokens = g_steal_pointer (&r->tokens);
  base->n_tokens = r->n_tokens;
  return TRUE;
}

gboolean
saccade_study_check_call (const char *name, const char *db_path, ScSession *session,
                          SaccadeStudyFlags flags, GError **error)
{
  if (db_path == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("No database is open: a study belongs to a stored run"));
      return FALSE;
    }
  if (session == NULL && !(flags & SACCADE_STUDY_STORED_ONLY))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "%s: computing a study needs a session", name);
      return FALSE;
    }
  return TRUE;
}

static gboolean
run_exists (ScStore *store, gint64 run_id)
{
  ScStoreRunInfo run = { 0 };
  ScStatus st = sc_store_get_run (store, run_id, &run, NULL);

  sc_store_run_info_clear (&run);
  return st != SC_ERR_NOT_FOUND;
}

gint64
saccade_study_created_ms (ScStore *store, gint64 id)
{
  ScStoreStudyData *d = NULL;
  gint64 ms = 0;

  if (sc_store_read_study (store, id, &d, NULL) == SC_OK)
    ms = d->created_ms;
  sc_store_study_data_free (d);
  return ms;
}

/* ------------------------------------------------------------------------------------ */
/* The study                                                                             */

void
saccade_study_free (SaccadeStudy *s)
{
  if (s == NULL)
    return;
  if (s->result != NULL)
    s->kind->result_free (s->result);
  g_free (s->refused);
  g_free (s);
}

gpointer
saccade_study_steal_result (SaccadeStudy *s)
{
  return g_steal_pointer (&s->result);
}

static void
set_cancelled_or (GError **error, const ScError *err, GCancellable *cancellable)
{
  if (err->status == SC_ERR_CANCELLED && g_cancellable_is_cancelled (cancellable))
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("Cancelled"));
  else
    saccade_set_error_from_sc (error, err);
}

/* Pass 4: the means, the backward pass, the run. */
static gboolean
compute (SaccadeStudy *s, const void *params, ScModel *model, const ScStoreModel *ident,
         ScSession *session, const char *db_path, ScStudyCtx *ctx, SaccadeProgressPart *prog,
         GError **error)
{
  const ScStudyKind *kind = s->kind;
  g_autoptr (SaccadeHeadMeans) hm = NULL;
  ScGrad *grad = NULL;
  ScError err = { 0 };
  const gint64 t0 = g_get_monotonic_time ();
  ScStatus st;

  if (kind->needs & SC_STUDY_NEEDS_MEANS)
    {
      g_autofree char *means_warning = NULL;
      /* When the means are computed, they take the first 30 % of the bar: the set's passes
       * are about a third of a 270-head sweep of a short sentence (docs/window.md). */
      SaccadeProgressPart mp = { prog->progress, prog->user_data, prog->cancellable, 0, 0.3 };
      hm = saccade_head_means_get (model, ident->path, session, db_path, ctx->means_set, FALSE,
                                   saccade_progress_part_report, &mp, prog->cancellable, &means_warning,
                                   error);
      if (hm == NULL)
        return FALSE;
      if (means_warning != NULL)
        g_message ("reference means: %s", means_warning);
      ctx->head_mean = hm->means->mean;
      s->means_computed = !hm->source.reused;
      s->means_seconds = hm->source.seconds;
      if (s->means_computed)
        prog->base = 0.3, prog->span = 0.7;
    }
  if (kind->needs & SC_STUDY_NEEDS_BACKWARD)
    {
      if (sc_grad_new (session, &grad, &err) != SC_OK)
        {
          saccade_set_error_from_sc (error, &err);
          return FALSE;
        }
      ctx->grad = grad;
    }
  st = sc_study_run (kind, ctx, params, &s->result, &err);
  sc_grad_free (grad);
  ctx->grad = NULL;
  ctx->head_mean = NULL;
  if (st != SC_OK)
    {
      set_cancelled_or (error, &err, prog->cancellable);
      return FALSE;
    }
  s->seconds = (double) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
  return TRUE;
}

/* Passes 2-5 on @ctx (its run or sentences filled), with @store open (writable unless only
 * reading; closed by the caller). */
static SaccadeStudy *
get_on (const ScStudyKind *kind, const void *params, ScStudyCtx *ctx, ScModel *model,
        const ScModelInfo *info, const ScStoreModel *ident, ScSession *session,
        const char *db_path, ScStore *store, SaccadeStudyFlags flags, SaccadeProgressPart *prog,
        char **store_warning, GError **error)
{
  g_autoptr (SaccadeStudy) s = g_new0 (SaccadeStudy, 1);
  ScError err = { 0 };
  int64_t id = 0;
  ScStatus st;

  s->kind = kind;
  s->run_id = ctx->run_id;
  s->n_tokens = ctx->n_tokens;
  ctx->progress = saccade_progress_part_engine;
  ctx->progress_user = prog;

  /* 2. the params text. */
  if (sc_study_params_json (kind, params, ctx, s->params_json, sizeof s->params_json, &err)
      != SC_OK)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "%s", err.message);
      return NULL;
    }

  /* 3. reuse. */
  if (store != NULL && !(flags & SACCADE_STUDY_RECOMPUTE))
    {
      st = kind->load (store, info, ident->sha256, s->params_json, params, &s->result, &id, &err);
      if (st == SC_OK && (kind->needs & SC_STUDY_NEEDS_RUN)
          && kind->result_n_tokens (s->result) != ctx->n_tokens)
        {
          /* its params name this run, so it must describe the run's tokens: one of another
           * length indexed the run's labels past their end (issue 25) */
          st = sc_error_set (&err, SC_ERR_FORMAT, "study %lld (%s) describes %d tokens, run "
                             "%lld has %d", (long long) id, kind->id,
                             kind->result_n_tokens (s->result), (long long) ctx->run_id,
                             ctx->n_tokens);
        }
      if (st == SC_OK)
        {
          s->study_id = id;
          s->created_ms = saccade_study_created_ms (store, id);
          s->reused = TRUE;
          return g_steal_pointer (&s);
        }
      g_clear_pointer (&s->result, kind->result_free);
      if (st != SC_ERR_NOT_FOUND)
        {
          s->refused = g_strdup (err.message);
          /* said before the work starts, as every refusal of stored data is (a study
           * recomputed in silence looked like a lost one) */
          if (flags & SACCADE_STUDY_STORED_ONLY)
            ;
          else if (id > 0)
            g_message ("stored %s study %lld is refused (%s); computing it again", kind->id,
                       (long long) id, err.message);
          else
            g_message ("a stored %s study is refused (%s); computing it again", kind->id,
                       err.message);
        }
    }
  if (flags & SACCADE_STUDY_STORED_ONLY)
    {
      if (kind->needs & SC_STUDY_NEEDS_RUN)
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                     "run %lld has no stored %s study with these parameters",
                     (long long) ctx->run_id, kind->id);
      else
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                     "no stored %s study with these parameters", kind->id);
      return NULL;
    }

  /* 4. compute. */
  if (!compute (s, params, model, ident, session, db_path, ctx, prog, error))
    return NULL;

  /* 5. store, whole or not at all. */
  if (store == NULL)
    ; /* no database: the result is the caller's only */
  else if (!sc_store_is_writable (store))
    {
      if (store_warning != NULL)
        *store_warning = g_strdup_printf ("%s is read-only", db_path);
    }
  else if ((kind->needs & SC_STUDY_NEEDS_RUN) && !run_exists (store, ctx->run_id))
    {
      saccade_study_set_run_gone (error, ctx->run_id);
      return NULL;
    }
  else if (kind->store (store, ident, s->params_json, s->result, &id, &err) == SC_OK)
    {
      s->study_id = id;
      s->created_ms = saccade_study_created_ms (store, id);
    }
  else if (store_warning != NULL)
    *store_warning = g_strdup (err.message);
  return g_steal_pointer (&s);
}

/* The store at @db_path: writable unless @flags only read (or it cannot be written), else
 * read-only; NULL with @error. */
static ScStore *
open_store (const char *db_path, SaccadeStudyFlags flags, GError **error)
{
  ScError err = { 0 };
  ScStore *store = NULL;

  if (!(flags & SACCADE_STUDY_STORED_ONLY))
    store = saccade_store_open (db_path, TRUE, NULL);
  if (store == NULL && (store = saccade_store_open (db_path, FALSE, &err)) == NULL)
    saccade_set_error_from_sc (error, &err);
  return store;
}

SaccadeStudy *
saccade_study_get (const ScStudyKind *kind, const void *params, ScModel *model,
                   const ScStoreModel *ident, ScSession *session, const char *db_path,
                   gint64 run_id, SaccadeStudyFlags flags, SaccadeProgress progress,
                   gpointer user_data, GCancellable *cancellable, char **store_warning,
                   GError **error)
{
  const ScModelInfo *info;
  g_autoptr (SaccadeStudyRun) run = NULL;
  g_autoptr (SaccadeStudyRun) run2 = NULL;
  SaccadeProgressPart prog = { progress, user_data, cancellable, 0, 1 };
  SaccadeRunModel own = { 0 };
  ScStudyCtx ctx = { 0 };
  ScStore *store;
  SaccadeStudy *s = NULL;

  g_return_val_if_fail (kind != NULL && model != NULL && ident != NULL, NULL);
  g_return_val_if_fail (kind->needs & SC_STUDY_NEEDS_RUN, NULL);
  /* another model's study is only read back: nothing of it is computed on this one */
  g_return_val_if_fail (!(flags & SACCADE_STUDY_RUN_MODEL) || (flags & SACCADE_STUDY_STORED_ONLY),
                        NULL);
  info = sc_model_info (model);
  if (params == NULL)
    params = kind->params_default;
  if (!saccade_study_check_call (kind->name, db_path, session, flags, error))
    return NULL;

  /* 1. the store and the run (and, RUN_MODEL, the run's own model for the loaded one). */
  if ((store = open_store (db_path, flags, error)) == NULL)
    return NULL;
  if (flags & SACCADE_STUDY_RUN_MODEL)
    {
      if (!saccade_run_model_read (store, run_id, &own, error))
        goto out;
      info = &own.info;
      ident = &own.ident;
    }
  if ((run = saccade_study_read_run (store, ident, info, run_id, NULL, error)) == NULL)
    goto out;
  if (run->n_tokens < kind->min_tokens)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   /* Translators: a study, the run, its tokens and the fewest it needs. */
                   _("A %s study needs at least %d tokens: run %lld has %d"), kind->name,
                   kind->min_tokens, (long long) run_id, run->n_tokens);
      goto out;
    }
  ctx = (ScStudyCtx) { .model = model, .session = session, .run_id = run_id, .ids = run->ids,
                       .n_tokens = run->n_tokens, .means_set = SACCADE_REFERENCE_SET };
  if (kind->needs & SC_STUDY_NEEDS_RUN_PAIR)
    {
      /* the second run, read and checked as the first (the same model, ids in its
       * vocabulary); the kind says whether their lengths must agree */
      const gint64 run2_id = sc_study_params_run2 (kind, params);
      if (run2_id < 1)
        {
          const char *option = "";
          for (const ScStudyOption *o = kind->options; o != NULL && o->name != NULL; o++)
            if (o->type == SC_STUDY_OPTION_RUN)
              option = o->name;
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                       /* Translators: a study kind that compares two stored runs, and the
                        * option (command line) or field (window) that names the second. */
                       _("A %s study sets two runs against each other: name the second one "
                         "(%s)"), kind->name, option);
          goto out;
        }
      if ((run2 = saccade_study_read_run (store, ident, info, run2_id, db_path, error)) == NULL)
        goto out;
      ctx.run2_id = run2_id;
      ctx.ids2 = run2->ids;
      ctx.n_tokens2 = run2->n_tokens;
    }
  s = get_on (kind, params, &ctx, model, info, ident, session, db_path, store, flags, &prog,
              store_warning, error);
out:
  sc_store_close (store);
  saccade_run_model_clear (&own);
  return s;
}

SaccadeStudy *
saccade_study_get_sentences (const ScStudyKind *kind, const void *params, ScModel *model,
                             const ScStoreModel *ident, ScSession *session, const char *db_path,
                             const int32_t *const *sentences, const int *lengths,
                             int n_sentences, SaccadeStudyFlags flags, SaccadeProgress progress,
                             gpointer user_data, GCancellable *cancellable,
                             char **store_warning, GError **error)
{
  SaccadeProgressPart prog = { progress, user_data, cancellable, 0, 1 };
  ScStudyCtx ctx = { .model = model, .session = session, .sentences = sentences,
                     .sentence_lengths = lengths, .n_sentences = n_sentences };
  ScStore *store = NULL;
  SaccadeStudy *s;

  g_return_val_if_fail (kind != NULL && model != NULL, NULL);
  g_return_val_if_fail (kind->needs & SC_STUDY_NEEDS_SENTENCES, NULL);
  if (params == NULL)
    params = kind->params_default;
  if (db_path != NULL && ident != NULL)
    {
      /* what cannot be opened is computed without it (the means are then not kept) */
      g_autoptr (GError) local = NULL;
      store = open_store (db_path, flags, &local);
      if (store == NULL && (flags & SACCADE_STUDY_STORED_ONLY))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
    }
  s = get_on (kind, params, &ctx, model, sc_model_info (model), ident, session, db_path, store,
              flags & ~SACCADE_STUDY_RUN_MODEL, &prog, store_warning, error);
  sc_store_close (store);
  return s;
}

/* ------------------------------------------------------------------------------------ */
/* In a worker                                                                           */

typedef struct {
  SaccadeLoadedModel *model;
  char *db_path;
  SaccadeStudyFlags flags;
  gboolean lock_for_lookup;
  char *name;
  SaccadeStudyFunc func;
  gpointer data;
  GDestroyNotify data_free;
} StudyJob;

static void
study_job_free (StudyJob *job)
{
  g_clear_object (&job->model);
  g_free (job->db_path);
  g_free (job->name);
  if (job->data_free != NULL)
    job->data_free (job->data);
  g_free (job);
}

static gpointer
study_thread (SaccadeJob *job, gpointer data, GCancellable *cancellable, GError **error)
{
  StudyJob *sj = data;
  g_autofree char *warning = NULL;
  ScSession *session = NULL;
  gpointer result;

  /* The whole study holds the session: a capture started meanwhile waits for it. A lookup
   * of stored studies runs nothing and takes no lock (unless the kind says it may run a
   * pass even then). */
  if (!(sj->flags & SACCADE_STUDY_STORED_ONLY) || sj->lock_for_lookup)
    session = saccade_loaded_model_lock_session (sj->model);
  result = sj->func (saccade_loaded_model_get_model (sj->model),
                     saccade_loaded_model_get_ident (sj->model), session, sj->db_path,
                     sj->data, sj->flags, saccade_job_report, job, cancellable, &warning,
                     error);
  if (session != NULL)
    saccade_loaded_model_unlock_session (sj->model);
  if (result != NULL && warning != NULL)
    g_message ("The %s study was not stored: %s", sj->name, warning);
  return result;
}

void
saccade_study_job_async (gpointer source_object, gpointer source_tag, const char *name,
                         SaccadeLoadedModel *model, const char *db_path,
                         SaccadeStudyFlags flags, gboolean lock_for_lookup,
                         SaccadeStudyFunc func, gpointer data, GDestroyNotify data_free,
                         GDestroyNotify result_free, GCancellable *cancellable,
                         SaccadeJobProgress progress, gpointer progress_data,
                         GAsyncReadyCallback callback, gpointer user_data)
{
  StudyJob *sj;

  g_return_if_fail (SACCADE_IS_LOADED_MODEL (model));
  g_return_if_fail (func != NULL);

  sj = g_new0 (StudyJob, 1);
  sj->model = g_object_ref (model);
  sj->db_path = g_strdup (db_path);
  sj->flags = flags;
  sj->lock_for_lookup = lock_for_lookup;
  sj->name = g_strdup (name);
  sj->func = func;
  sj->data = data;
  sj->data_free = data_free;
  saccade_job_run_async (source_object, cancellable, source_tag, name, study_thread, sj,
                         (GDestroyNotify) study_job_free, result_free, progress, progress_data,
                         callback, user_data);
}

gpointer
saccade_study_get_func (ScModel *model, const ScStoreModel *ident, ScSession *session,
                        const char *db_path, gpointer data, SaccadeStudyFlags flags,
                        SaccadeProgress progress, gpointer progress_data,
                        GCancellable *cancellable, char **store_warning, GError **error)
{
  const SaccadeStudyGetData *d = data;

  return saccade_study_get (d->kind, d->params, model, ident, session, db_path, d->run_id,
                            flags, progress, progress_data, cancellable, store_warning, error);
}

/* saccade_study_get_async's and saccade_study_face_async's data: the get data, its own
 * copy of the params and the function that gets the study (saccade_study_get_func, logging
 * a refused stored study, or a face's get). */
typedef struct {
  SaccadeStudyGetData get;
  gpointer params;    /* kind->params_size bytes; get.params points here */
  SaccadeStudyFunc func;
} AsyncData;

static void
async_data_free (AsyncData *d)
{
  g_free (d->params);
  g_free (d);
}

static gpointer
async_func (ScModel *model, const ScStoreModel *ident, ScSession *session, const char *db_path,
            gpointer data, SaccadeStudyFlags flags, SaccadeProgress progress,
            gpointer progress_data, GCancellable *cancellable, char **store_warning,
            GError **error)
{
  AsyncData *d = data;

  return d->func (model, ident, session, db_path, &d->get, flags, progress, progress_data,
                  cancellable, store_warning, error);
}

/* @func on a copy of @params in a worker; saccade_study_face_finish gets its result. */
static void
start_async (gpointer source_object, SaccadeLoadedModel *model, const char *db_path,
             gint64 run_id, const ScStudyKind *kind, const void *params, SaccadeStudyFunc func,
             GDestroyNotify result_free, SaccadeStudyFlags flags, GCancellable *cancellable,
             SaccadeJobProgress progress, gpointer progress_data, GAsyncReadyCallback callback,
             gpointer user_data)
{
  AsyncData *d = g_new0 (AsyncData, 1);

  d->params = params != NULL ? g_memdup2 (params, kind->params_size) : NULL;
  d->get = (SaccadeStudyGetData) { kind, d->params, run_id };
  d->func = func;
  saccade_study_job_async (source_object, saccade_study_get_async, kind->name, model, db_path,
                           flags, FALSE, async_func, d, (GDestroyNotify) async_data_free,
                           result_free, cancellable, progress, progress_data, callback,
                           user_data);
}

void
saccade_study_get_async (gpointer source_object, SaccadeLoadedModel *model, const char *db_path,
                         gint64 run_id, const ScStudyKind *kind, const void *params,
                         SaccadeStudyFlags flags, GCancellable *cancellable,
                         SaccadeJobProgress progress, gpointer progress_data,
                         GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (kind != NULL);

  start_async (source_object, model, db_path, run_id, kind,
               params != NULL ? params : kind->params_default, saccade_study_get_func,
               (GDestroyNotify) saccade_study_free, flags, cancellable, progress, progress_data,
               callback, user_data);
}

SaccadeStudy *
saccade_study_get_finish (GAsyncResult *result, GError **error)
{
  return saccade_job_finish (result, saccade_study_get_async, error);
}

void
saccade_study_face_async (const SaccadeStudyFace *face, gpointer source_object,
                          SaccadeLoadedModel *model, const char *db_path, gint64 run_id,
                          const void *params, SaccadeStudyFlags flags,
                          GCancellable *cancellable, SaccadeJobProgress progress,
                          gpointer progress_data, GAsyncReadyCallback callback,
                          gpointer user_data)
{
  g_return_if_fail (face != NULL);

  start_async (source_object, model, db_path, run_id, face->kind, params, face->get,
               face->result_free, flags, cancellable, progress, progress_data, callback,
               user_data);
}

gpointer
saccade_study_face_finish (GAsyncResult *result, GError **error)
{
  return saccade_job_finish (result, saccade_study_get_async, error);
}
