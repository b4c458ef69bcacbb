/* saccade-ablation.c — compute or reuse the ablation studies of a stored run (header).
 *
 * saccade_ablation_get() in four passes, on the calling thread's own store connection:
 *   1. open the store (writable, else read-only to reuse what is there) and check the run:
 *      still there, captured with this model file, its tokens within the vocabulary;
 *   2. reuse: the latest complete study of the kind with the canonical params, read back
 *      checked by sc_head_sweep_load / sc_token_loo_load;
 *   3. compute on the run's ids, the progress callback turning a fired GCancellable into
 *      the study's "stop" (it returns false, the study ends with SC_ERR_CANCELLED);
 *   4. store in one transaction — after checking the run once more, so a run deleted
 *      while its study ran gets no orphan study.
 * saccade_ablation_async() runs it in a GTask worker under the loaded model's session lock
 * and coalesces progress onto the caller's main context.
 */
#define G_LOG_DOMAIN "saccade-ablation"

#include "app/core/saccade-ablation.h"

#include <glib/gi18n.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-paths.h"

static const char *const KIND_IDS[SACCADE_ABLATION_N_KINDS] = {
  [SACCADE_ABLATION_HEADS] = SC_ABLATION_KIND_HEADS,
  [SACCADE_ABLATION_TOKENS] = SC_ABLATION_KIND_TOKENS,
};
static const char *const KIND_SHORT[SACCADE_ABLATION_N_KINDS] = {
  [SACCADE_ABLATION_HEADS] = "heads",
  [SACCADE_ABLATION_TOKENS] = "tokens",
};

const char *
saccade_ablation_kind_id (SaccadeAblationKind kind)
{
  return (unsigned) kind < SACCADE_ABLATION_N_KINDS ? KIND_IDS[kind] : NULL;
}

gboolean
saccade_ablation_kind_from_id (const char *id, SaccadeAblationKind *out)
{
  for (int k = 0; id != NULL && k < SACCADE_ABLATION_N_KINDS; k++)
    if (g_str_equal (id, KIND_IDS[k]) || g_str_equal (id, KIND_SHORT[k]))
      {
        *out = (SaccadeAblationKind) k;
        return TRUE;
      }
  return FALSE;
}

void
saccade_ablation_free (SaccadeAblation *a)
{
  if (a == NULL)
    return;
  sc_head_sweep_result_free (a->heads);
  sc_token_loo_result_free (a->tokens);
  g_free (a);
}

int
saccade_ablation_target (const SaccadeAblation *a)
{
  return a->heads != NULL ? a->heads->target : a->tokens->target;
}

int
saccade_ablation_top1_clean (const SaccadeAblation *a)
{
  return a->heads != NULL ? a->heads->top1_clean : a->tokens->top1_clean;
}

double
saccade_ablation_logp_clean (const SaccadeAblation *a)
{
  return a->heads != NULL ? a->heads->logp_clean : a->tokens->logp_clean;
}

/* ------------------------------------------------------------------------------------ */
/* Metrics, ranking, CSV                                                                 */

static const char *const METRIC_IDS[SACCADE_ABLATION_N_METRICS] = {
  "delta_logp", "tv", "jsd", "delta_loss",
};

const char *
saccade_ablation_metric_id (SaccadeAblationMetric m)
{
  return (unsigned) m < SACCADE_ABLATION_N_METRICS ? METRIC_IDS[m] : NULL;
}

double
saccade_ablation_effect_value (const ScAblationEffect *e, SaccadeAblationMetric m)
{
  switch (m)
    {
    case SACCADE_ABLATION_METRIC_DELTA_LOGP:
      return e->next.delta_logp;
    case SACCADE_ABLATION_METRIC_TV:
      return e->next.tv;
    case SACCADE_ABLATION_METRIC_JSD:
      return e->next.jsd;
    case SACCADE_ABLATION_METRIC_DELTA_LOSS:
      return e->delta_loss;
    default:
      return NAN;
    }
}

typedef struct {
  const ScAblationEffect *e;
  SaccadeAblationMetric m;
} RankBy;

static int
rank_cmp (gconstpointer pa, gconstpointer pb, gpointer user_data)
{
  const RankBy *r = user_data;
  const int ia = *(const int *) pa, ib = *(const int *) pb;
  const double a = saccade_ablation_effect_value (&r->e[ia], r->m);
  const double b = saccade_ablation_effect_value (&r->e[ib], r->m);
  const double va = isnan (a) ? -1 : fabs (a), vb = isnan (b) ? -1 : fabs (b);

  return va > vb ? -1 : va < vb ? 1 : ia - ib;
}

int *
saccade_ablation_rank_heads (const ScHeadSweepResult *r, SaccadeAblationMetric m)
{
  const int n = r->n_layers * r->n_heads;
  int *order = g_new (int, n);
  RankBy by = { r->heads, m };

  for (int i = 0; i < n; i++)
    order[i] = i;
  g_qsort_with_data (order, n, sizeof *order, rank_cmp, &by);
  return order;
}

static void
csv_number (GString *out, double v)
{
  char num[G_ASCII_DTOSTR_BUF_SIZE];

  /* NaN (not measured) is an empty field; else 17 significant digits: the stored double. */
  g_string_append_c (out, ',');
  if (!isnan (v))
    g_string_append (out, g_ascii_formatd (num, sizeof num, "%.17g", v));
}

static void
csv_metrics (GString *out, const ScAblationEffect *e)
{
  for (int m = 0; m < SACCADE_ABLATION_N_METRICS; m++)
    csv_number (out, saccade_ablation_effect_value (e, (SaccadeAblationMetric) m));
}

/* The clean run's numbers and the ids every row repeats (each row complete on its own). */
static void
csv_clean (GString *out, const SaccadeAblation *a, double loss_clean)
{
  g_string_append_printf (out, ",%d,%d", saccade_ablation_target (a),
                          saccade_ablation_top1_clean (a));
  csv_number (out, saccade_ablation_logp_clean (a));
  csv_number (out, loss_clean);
  g_string_append_printf (out, ",%lld,%lld\n", (long long) a->run_id, (long long) a->study_id);
}

static const char CSV_CLEAN_COLUMNS[] = "target,top1_clean,logp_clean,loss_clean,run,study\n";

GBytes *
saccade_ablation_csv (const SaccadeAblation *a, const ScStoreToken *tokens,
                      const char *const *labels, int n)
{
  GString *out;

  g_return_val_if_fail (a != NULL && (a->heads != NULL || a->tokens != NULL), NULL);
  if (a->heads != NULL)
    {
      const ScHeadSweepResult *r = a->heads;
      out = g_string_new ("layer,head");
      for (int m = 0; m < SACCADE_ABLATION_N_METRICS; m++)
        g_string_append_printf (out, ",%s", METRIC_IDS[m]);
      g_string_append_printf (out, ",flipped,top1_ablated,%s", CSV_CLEAN_COLUMNS);
      for (int i = 0; i < r->n_layers * r->n_heads; i++)
        {
          g_string_append_printf (out, "%d,%d", i / r->n_heads, i % r->n_heads);
          csv_metrics (out, &r->heads[i]);
          g_string_append_printf (out, ",%d,%d", r->heads[i].flipped ? 1 : 0,
                                  r->heads[i].next.top1_ablated);
          csv_clean (out, a, r->loss_clean);
        }
      return g_string_free_to_bytes (out);
    }

  const ScTokenLooResult *r = a->tokens;
  const gboolean named = n == r->n_tokens;
  out = g_string_new ("pos,token_id,label");
  for (int s = 0; s < 2; s++)
    for (int m = 0; m < SACCADE_ABLATION_N_METRICS; m++)
      g_string_append_printf (out, ",%s_%s", s == 0 ? "mask" : "drop", METRIC_IDS[m]);
  g_string_append_printf (out, ",mask_flipped,mask_top1,drop_flipped,drop_top1,%s",
                          CSV_CLEAN_COLUMNS);
  for (int j = 0; j < r->n_tokens; j++)
    {
      const char *label = named && labels != NULL ? labels[j] : "";
      /* The label as the figures show it, quoted ("" for a quote inside). */
      g_string_append_printf (out, "%d,%d,\"", j, named && tokens != NULL ? tokens[j].id : -1);
      for (const char *p = label; *p != '\0'; p++)
        {
          if (*p == '"')
            g_string_append_c (out, '"');
          g_string_append_c (out, *p);
        }
      g_string_append_c (out, '"');
      csv_metrics (out, &r->mask[j]);
      csv_metrics (out, &r->drop[j]);
      g_string_append_printf (out, ",%d,%d,%d,%d", r->mask[j].flipped ? 1 : 0,
                              r->mask[j].next.top1_ablated, r->drop[j].flipped ? 1 : 0,
                              r->drop[j].next.top1_ablated);
      csv_clean (out, a, r->loss_clean);
    }
  return g_string_free_to_bytes (out);
}

/* ------------------------------------------------------------------------------------ */
/* Pass 1: the run                                                                       */

static void
set_run_gone (GError **error, gint64 run_id)
{
  /* Translators: a study was asked of a run that was deleted meanwhile. */
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
               _("Run %lld is no longer in the database"), (long long) run_id);
}

/* The ids of run @run_id, checked against @ident and @info; NULL with @error. */
static int32_t *
read_run_ids (ScStore *store, const ScStoreModel *ident, const ScModelInfo *info,
              gint64 run_id, int *n_out, GError **error)
{
  ScStoreRunInfo run = { 0 };
  ScStoreToken *tokens = NULL;
  size_t n = 0;
  ScError err = { 0 };
  char hex[SC_SHA256_HEX_SIZE];
  int32_t *ids = NULL;
  ScStatus st;

  st = sc_store_get_run (store, run_id, &run, &err);
  if (st == SC_OK)
    st = sc_store_read_tokens (store, run_id, &tokens, &n, &err);
  if (st == SC_ERR_NOT_FOUND)
    set_run_gone (error, run_id);
  else if (st != SC_OK)
    saccade_set_error_from_sc (error, &err);
  if (st != SC_OK)
    goto out;
  sc_sha256_hex (ident->sha256, hex);
  if (strcmp (hex, run.model_sha256) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   /* Translators: the run, its model's name and the loaded model's. */
                   _("Run %lld was captured with %s, another model file than the loaded %s"),
                   (long long) run_id, run.model_name, ident->name);
      goto out;
    }
  if (n < 1 || n > INT_MAX)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("Run %lld has no tokens"), (long long) run_id);
      goto out;
    }
  ids = g_new (int32_t, n);
  for (size_t i = 0; i < n; i++)
    {
      /* An untrusted store: the engine checks ids too, but say which token is wrong. */
      if (tokens[i].id < 0 || (uint32_t) tokens[i].id >= info->n_vocab)
        {
          g_set_error (error, SACCADE_ERROR, SC_ERR_FORMAT,
                       "run %lld: token %zu has id %d, outside the vocabulary of %u",
                       (long long) run_id, i, tokens[i].id, info->n_vocab);
          g_clear_pointer (&ids, g_free);
          goto out;
        }
      ids[i] = tokens[i].id;
    }
  *n_out = (int) n;
out:
  sc_store_tokens_free (tokens);
  sc_store_run_info_clear (&run);
  return ids;
}

static gboolean
run_exists (ScStore *store, gint64 run_id)
{
  ScStoreRunInfo run = { 0 };
  ScStatus st = sc_store_get_run (store, run_id, &run, NULL);

  sc_store_run_info_clear (&run);
  return st != SC_ERR_NOT_FOUND;
}

/* When study @id was stored (0 when it cannot be read). */
static gint64
study_created (ScStore *store, gint64 id)
{
  ScStoreStudyData *d = NULL;
  gint64 ms = 0;

  if (sc_store_read_study (store, id, &d, NULL) == SC_OK)
    ms = d->created_ms;
  sc_store_study_data_free (d);
  return ms;
}

/* ------------------------------------------------------------------------------------ */
/* Passes 2-4                                                                            */

typedef struct {
  SaccadeAblationProgress progress;
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

SaccadeAblation *
saccade_ablation_get (ScModel *model, const ScStoreModel *ident, ScSession *session,
                      const char *db_path, gint64 run_id, SaccadeAblationKind kind,
                      const ScAblationParams *params, SaccadeAblationFlags flags,
                      SaccadeAblationProgress progress, gpointer user_data,
                      GCancellable *cancellable, char **store_warning, GError **error)
{
  const ScModelInfo *info;
  const char *kind_id = saccade_ablation_kind_id (kind);
  g_autoptr (SaccadeAblation) a = NULL;
  g_autofree int32_t *ids = NULL;
  Progress prog = { progress, user_data, cancellable };
  ScError err = { 0 };
  ScStore *store = NULL;
  char pj[128];
  int64_t id = 0;
  int n = 0;
  gint64 t0;
  ScStatus st;

  g_return_val_if_fail (model != NULL && ident != NULL && params != NULL, NULL);
  info = sc_model_info (model);
  if (kind_id == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "ablation: no study kind %d", (int) kind);
      return NULL;
    }
  if (db_path == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("No database is open: a study belongs to a stored run"));
      return NULL;
    }
  if (session == NULL && !(flags & SACCADE_ABLATION_STORED_ONLY))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           "ablation: computing a study needs a session");
      return NULL;
    }
  if (sc_ablation_params_json (kind_id, run_id, params, pj, sizeof pj) < 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, "ablation: params too long");
      return NULL;
    }

  /* 1. the store and the run. */
  if (!(flags & SACCADE_ABLATION_STORED_ONLY))
    store = saccade_store_open (db_path, TRUE, NULL);
  if (store == NULL && (store = saccade_store_open (db_path, FALSE, &err)) == NULL)
    {
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  if ((ids = read_run_ids (store, ident, info, run_id, &n, error)) == NULL)
    goto fail;

  a = g_new0 (SaccadeAblation, 1);
  a->kind = kind;
  a->run_id = run_id;

  /* 2. reuse. */
  if (!(flags & SACCADE_ABLATION_RECOMPUTE))
    {
      st = kind == SACCADE_ABLATION_HEADS
             ? sc_head_sweep_load (store, info, ident->sha256, pj, &a->heads, &id, &err)
             : sc_token_loo_load (store, info, ident->sha256, pj, &a->tokens, &id, &err);
      if (st == SC_OK && (a->heads != NULL ? a->heads->n_tokens : a->tokens->n_tokens) == n)
        {
          a->study_id = id;
          a->created_ms = study_created (store, id);
          a->reused = TRUE;
          sc_store_close (store);
          return g_steal_pointer (&a);
        }
      /* A stored study of another length does not describe this run: compute anew. */
      g_clear_pointer (&a->heads, sc_head_sweep_result_free);
      g_clear_pointer (&a->tokens, sc_token_loo_result_free);
      if (st != SC_OK && st != SC_ERR_NOT_FOUND)
        g_message ("study of run %lld not reused: %s", (long long) run_id, err.message);
    }
  if (flags & SACCADE_ABLATION_STORED_ONLY)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "run %lld has no stored %s study with these parameters",
                   (long long) run_id, kind_id);
      goto fail;
    }

  /* 3. compute. */
  t0 = g_get_monotonic_time ();
  st = kind == SACCADE_ABLATION_HEADS
         ? sc_head_sweep_run (session, model, ids, n, params, on_progress, &prog, &a->heads,
                              &err)
         : sc_token_loo_run (session, model, ids, n, params, on_progress, &prog, &a->tokens,
                             &err);
  if (st != SC_OK)
    {
      if (st == SC_ERR_CANCELLED && g_cancellable_is_cancelled (cancellable))
        g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("Cancelled"));
      else
        saccade_set_error_from_sc (error, &err);
      goto fail;
    }
  a->seconds = (double) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC;

  /* 4. store, whole or not at all. */
  if (!sc_store_is_writable (store))
    {
      if (store_warning != NULL)
        *store_warning = g_strdup_printf ("%s is read-only", db_path);
    }
  else if (!run_exists (store, run_id))
    {
      set_run_gone (error, run_id);
      goto fail;
    }
  else
    {
      st = kind == SACCADE_ABLATION_HEADS
             ? sc_head_sweep_store (store, ident, pj, a->heads, &id, &err)
             : sc_token_loo_store (store, ident, pj, a->tokens, &id, &err);
      if (st == SC_OK)
        {
          a->study_id = id;
          a->created_ms = study_created (store, id);
        }
      else if (store_warning != NULL)
        *store_warning = g_strdup (err.message);
    }
  sc_store_close (store);
  return g_steal_pointer (&a);

fail:
  sc_store_close (store);
  return NULL;
}

/* ------------------------------------------------------------------------------------ */
/* In a worker                                                                           */

/* A study's progress travels as an int of this many steps (atomic). */
#define PROGRESS_SCALE 1000

typedef struct {
  SaccadeLoadedModel *model;
  char *db_path;
  gint64 run_id;
  SaccadeAblationKind kind;
  ScAblationParams params;
  SaccadeAblationFlags flags;
  SaccadeAblationTaskProgress progress;
  gpointer progress_data;
  GMainContext *context;
  GTask *task;       /* borrowed: the job lives as the task's data */
  int done;          /* atomic: written by the worker, read by the main loop */
  int idle_pending;  /* atomic: a progress callback is queued */
} Job;

static void
job_free (Job *job)
{
  g_clear_object (&job->model);
  g_main_context_unref (job->context);
  g_free (job->db_path);
  g_free (job);
}

static gboolean
progress_idle (gpointer data)
{
  GTask *task = data;
  Job *job = g_task_get_task_data (task);

  g_atomic_int_set (&job->idle_pending, 0);
  if (!g_task_get_completed (task) && job->progress != NULL)
    job->progress (job->progress_data,
                   (double) g_atomic_int_get (&job->done) / PROGRESS_SCALE);
  return G_SOURCE_REMOVE;
}

/* SaccadeAblationProgress, in the worker: one idle queued at most. */
static void
job_progress (double fraction, gpointer user_data)
{
  Job *job = user_data;

  g_atomic_int_set (&job->done, (int) (CLAMP (fraction, 0.0, 1.0) * PROGRESS_SCALE));
  if (g_atomic_int_compare_and_exchange (&job->idle_pending, 0, 1))
    {
      g_autoptr (GSource) source = g_idle_source_new ();
      g_source_set_callback (source, progress_idle, g_object_ref (job->task), g_object_unref);
      g_source_set_static_name (source, "[saccade] ablation progress");
      g_source_attach (source, job->context);
    }
}

static void
ablation_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  Job *job = task_data;
  g_autofree char *warning = NULL;
  SaccadeAblation *a;
  GError *error = NULL;
  ScSession *session = NULL;

  /* The whole study holds the session: a capture started meanwhile waits for it. A lookup
   * of stored studies runs nothing and takes no lock. */
  if (!(job->flags & SACCADE_ABLATION_STORED_ONLY))
    session = saccade_loaded_model_lock_session (job->model);
  a = saccade_ablation_get (saccade_loaded_model_get_model (job->model),
                            saccade_loaded_model_get_ident (job->model), session, job->db_path,
                            job->run_id, job->kind, &job->params, job->flags, job_progress, job,
                            cancellable, &warning, &error);
  if (session != NULL)
    saccade_loaded_model_unlock_session (job->model);
  if (a == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  if (warning != NULL)
    g_message ("The ablation study was not stored: %s", warning);
  g_task_return_pointer (task, a, (GDestroyNotify) saccade_ablation_free);
}

void
saccade_ablation_async (gpointer source_object, SaccadeLoadedModel *model, const char *db_path,
                        gint64 run_id, SaccadeAblationKind kind, const ScAblationParams *params,
                        SaccadeAblationFlags flags, GCancellable *cancellable,
                        SaccadeAblationTaskProgress progress, gpointer progress_data,
                        GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = NULL;
  Job *job;

  g_return_if_fail (SACCADE_IS_LOADED_MODEL (model));
  g_return_if_fail (params != NULL);

  task = g_task_new (source_object, cancellable, callback, user_data);
  g_task_set_source_tag (task, saccade_ablation_async);
  job = g_new0 (Job, 1);
  job->model = g_object_ref (model);
  job->db_path = g_strdup (db_path);
  job->run_id = run_id;
  job->kind = kind;
  job->params = *params;
  job->flags = flags;
  job->progress = progress;
  job->progress_data = progress_data;
  job->context = g_main_context_ref_thread_default ();
  job->task = task;
  g_task_set_task_data (task, job, (GDestroyNotify) job_free);
  g_task_run_in_thread (task, ablation_thread);
}

SaccadeAblation *
saccade_ablation_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (G_IS_TASK (result), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
