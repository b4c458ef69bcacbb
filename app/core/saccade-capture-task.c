/* saccade-capture-task.c — loading a model, capturing a sentence (or given token ids) and
 * running the induction-head detector, in worker threads (see saccade-capture-task.h). The
 * capture follows `saccade capture` (saccade-cli-store.c): the text (in the chat template,
 * with a greedy continuation: saccade-capture-input.h) and its ids, begin a store capture,
 * run the forward pass with the capture's observer, the next-token predictions of every
 * position (sc_predict_topk), commit. The
 * detector is saccade_induction_get() on the loaded model's session, under its lock.
 */
#define G_LOG_DOMAIN "saccade-capture"

#include "app/core/saccade-capture-task.h"

#include "app/core/saccade-study.h"

#include <glib/gi18n.h>
#include <string.h>

#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store.h"
#include "app/core/saccade-capture-input.h"
#include "app/core/saccade-error.h"
#include "app/core/saccade-model.h"
#include "app/core/saccade-paths.h"
#include "ui/widgets/saccade-background.h"

/* ------------------------------------------------------------------------------------ */
/* SaccadeLoadedModel                                                                    */

struct _SaccadeLoadedModel
{
  GObject parent_instance;

  /* Immutable after loading. */
  char *path;               /* absolute */
  char *name;
  ScModel *model;
  ScBackend *backend;
  ScStoreModel ident;       /* borrows path and the model's strings */
  char *backend_notice;     /* why "auto" chose the CPU, or NULL */

  /* The session (activation buffers) is used by one capture at a time. */
  GMutex lock;
  ScSession *session;
};

G_DEFINE_FINAL_TYPE (SaccadeLoadedModel, saccade_loaded_model, G_TYPE_OBJECT)

static void
saccade_loaded_model_finalize (GObject *object)
{
  SaccadeLoadedModel *self = SACCADE_LOADED_MODEL (object);

  sc_session_free (self->session);
  sc_backend_free (self->backend);
  sc_model_free (self->model);
  g_mutex_clear (&self->lock);
  g_free (self->path);
  g_free (self->name);
  g_free (self->backend_notice);
  G_OBJECT_CLASS (saccade_loaded_model_parent_class)->finalize (object);
}

static void
saccade_loaded_model_class_init (SaccadeLoadedModelClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = saccade_loaded_model_finalize;
}

static void
saccade_loaded_model_init (SaccadeLoadedModel *self)
{
  g_mutex_init (&self->lock);
}

const char *
saccade_loaded_model_get_path (SaccadeLoadedModel *self)
{
  g_return_val_if_fail (SACCADE_IS_LOADED_MODEL (self), NULL);
  return self->path;
}

const char *
saccade_loaded_model_get_name (SaccadeLoadedModel *self)
{
  g_return_val_if_fail (SACCADE_IS_LOADED_MODEL (self), NULL);
  return self->name;
}

const char *
saccade_loaded_model_get_backend_name (SaccadeLoadedModel *self)
{
  g_return_val_if_fail (SACCADE_IS_LOADED_MODEL (self), NULL);
  /* A backend computing in host memory (both CPU backends, "cpu" and "cpu-ref") is the CPU
   * to a user; a device backend names its device in its description. */
  if (sc_backend_caps (self->backend) & SC_BACKEND_CAP_HOST_MEMORY)
    return "CPU";
  return sc_backend_description (self->backend);
}

const char *
saccade_loaded_model_get_backend_id (SaccadeLoadedModel *self)
{
  g_return_val_if_fail (SACCADE_IS_LOADED_MODEL (self), NULL);
  return sc_backend_name (self->backend);
}

const char *
saccade_loaded_model_get_backend_description (SaccadeLoadedModel *self)
{
  g_return_val_if_fail (SACCADE_IS_LOADED_MODEL (self), NULL);
  return sc_backend_description (self->backend);
}

const char *
saccade_loaded_model_get_backend_notice (SaccadeLoadedModel *self)
{
  g_return_val_if_fail (SACCADE_IS_LOADED_MODEL (self), NULL);
  return self->backend_notice;
}

char *
saccade_loaded_model_describe (SaccadeLoadedModel *self)
{
  const ScModelInfo *in;

  g_return_val_if_fail (SACCADE_IS_LOADED_MODEL (self), NULL);
  in = sc_model_info (self->model);
  /* Translators: the loaded model's shape, e.g. "30 layers × 9 heads (3 KV heads)", or
   * "18 layers × 4 heads (1 KV head)" (Gemma 3's multi-query attention). */
  return g_strdup_printf (ngettext ("%u layers × %u heads (%u KV head)",
                                    "%u layers × %u heads (%u KV heads)", in->n_kv_heads),
                          in->n_layers, in->n_heads, in->n_kv_heads);
}

/* What a load is asked for. */
typedef struct {
  char *path;
  char *backend;            /* a backend name, or NULL: auto */
} LoadRequest;

static void
load_request_free (LoadRequest *req)
{
  g_free (req->path);
  g_free (req->backend);
  g_free (req);
}

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  const LoadRequest *req = task_data;
  const char *path = req->path;
  g_autoptr (SaccadeLoadedModel) self = g_object_new (SACCADE_TYPE_LOADED_MODEL, NULL);
  GError *error = NULL;
  ScError err = { 0 };

  self->path = g_canonicalize_filename (path, NULL);
  /* The backend first: a name it refuses fails before half a second of loading. */
  if ((self->backend = saccade_backend_new (req->backend, 0, 0, &self->backend_notice, &error))
        == NULL
      || (self->model = saccade_model_load (path, 0, &error)) == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  if (g_task_return_error_if_cancelled (task))
    return;
  /* The store identifies a model by its file's SHA-256: hash it once, here. */
  if (sc_store_model_identify (self->model, self->path, &self->ident, &err) != SC_OK
      || sc_session_new (self->model, self->backend, &self->session, &err) != SC_OK)
    {
      saccade_set_error_from_sc (&error, &err);
      g_task_return_error (task, error);
      return;
    }
  self->name = g_strdup (sc_model_info (self->model)->name);
  g_task_return_pointer (task, g_steal_pointer (&self), g_object_unref);
}

void
saccade_loaded_model_new_for_backend_async (const char *path, const char *backend,
                                            GCancellable *cancellable,
                                            GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  LoadRequest *req;

  g_return_if_fail (path != NULL);
  req = g_new0 (LoadRequest, 1);
  req->path = g_strdup (path);
  req->backend = g_strdup (backend);
  g_task_set_source_tag (task, saccade_loaded_model_new_async);
  g_task_set_task_data (task, req, (GDestroyNotify) load_request_free);
  saccade_background_run (task, load_thread);
}

void
saccade_loaded_model_new_async (const char *path, GCancellable *cancellable,
                                GAsyncReadyCallback callback, gpointer user_data)
{
  saccade_loaded_model_new_for_backend_async (path, "cpu", cancellable, callback, user_data);
}

SaccadeLoadedModel *
saccade_loaded_model_new_finish (GAsyncResult *result, GError **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ------------------------------------------------------------------------------------ */
/* Capture                                                                               */

/* A capture of the model (of text, or of given ids): a saccade job's data. Its progress is
 * in layers of forward passes, reported as steps (saccade_job_progress_steps()), so the
 * window's callback gets the exact layer count. */
typedef struct {
  SaccadeLoadedModel *model;
  char *db_path;
  char *text;               /* a capture of text, or NULL */
  SaccadeCaptureOptions options; /* of a capture of text; options.keep is @keep */
  guint8 *keep;             /* the heads to keep, or NULL: all */
  GArray *ids;              /* a capture of these int32_t ids, or NULL */
  int total;                /* layers of a capture (times n_generate + 1 with generation) */
  /* The worker's, while it runs. */
  SaccadeJob *job;          /* borrowed */
  GCancellable *cancellable; /* borrowed; may be NULL */
  int steps_done;           /* forward passes of a capture finished (generation's steps) */
} CaptureJob;

static void
capture_job_free (CaptureJob *job)
{
  g_clear_object (&job->model);
  g_free (job->db_path);
  g_free (job->text);
  g_free (job->keep);
  g_clear_pointer (&job->ids, g_array_unref);
  g_free (job);
}

/* ScProgressFn: runs in the worker after each layer of each forward pass (generation's
 * steps, then the capture's): reports the layers of the passes so far. */
static bool
capture_progress (void *user, int layers_done, int n_layers)
{
  CaptureJob *job = user;

  saccade_job_progress_steps (job->job, MIN (job->steps_done * n_layers + layers_done, job->total),
                              job->total);
  if (layers_done == n_layers)
    job->steps_done++;
  return !g_cancellable_is_cancelled (job->cancellable);
}

/* ScProgressFn of the predictions (after each chunk of rows): Cancel stops them too. */
static bool
predict_progress (void *user, int rows_done, int n_rows)
{
  CaptureJob *job = user;

  return !g_cancellable_is_cancelled (job->cancellable);
}

/* What a capture of the window returns: the run and its next-token predictions. */
typedef SaccadeCaptureOutcome CaptureOutcome;

static void
capture_outcome_free (CaptureOutcome *o)
{
  sc_predictions_clear (&o->pred);
  g_free (o);
}

/* Runs the forward pass into a capture of @desc in @store, computes the predictions into
 * @out and commits the run (or rolls it back): saccade_capture_forward() with the job's
 * progress and Cancel. The caller holds the session's lock. */
static gboolean
capture_run (CaptureJob *job, ScStore *store, const ScStoreRunDesc *desc, const int32_t *ids,
             int n_ids, CaptureOutcome *out, GError **error)
{
  SaccadeLoadedModel *m = job->model;
  ScStoreCapture *cap = NULL;
  ScObserver obs;
  ScForwardOptions fo = { .progress = capture_progress, .progress_user = job };
  ScError err = { 0 };
  ScStatus st;

  if (sc_store_capture_begin (store, desc, &cap, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  obs = sc_store_capture_observer (cap);
  fo.observer = &obs;
  st = saccade_capture_forward (m->session, m->model, cap, ids, n_ids, &fo, predict_progress,
                                job, out, &err);
  if (st == SC_OK)
    return TRUE;
  /* A cancellation of ours as G_IO_ERROR_CANCELLED; else the engine's or the store's error. */
  if (st == SC_ERR_CANCELLED && g_cancellable_is_cancelled (job->cancellable))
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("Cancelled"));
  else
    saccade_set_error_from_sc (error, &err);
  return FALSE;
}

/* With a continuation: generates it on the session (the caller holds its lock) and
 * appends it to @input. */
static gboolean
capture_generate (CaptureJob *job, SaccadeCaptureInput *input, GError **error)
{
  g_autoptr (GError) local = NULL;

  if (job->options.n_generate == 0)
    return TRUE;
  if (saccade_capture_input_generate (input, job->model->session, job->options.n_generate,
                                      capture_progress, job, &local))
    return TRUE;
  if (g_error_matches (local, SACCADE_ERROR, SC_ERR_CANCELLED)
      && g_cancellable_is_cancelled (job->cancellable))
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("Cancelled"));
  else
    g_propagate_error (error, g_steal_pointer (&local));
  return FALSE;
}

static gpointer
capture_func (SaccadeJob *sjob, gpointer data, GCancellable *cancellable, GError **error_out)
{
  CaptureJob *job = data;
  SaccadeLoadedModel *m = job->model;
  const guint n_ctx = sc_model_info (m->model)->n_ctx_train;
  const guint n_generate = (guint) job->options.n_generate;
  g_auto (SaccadeCaptureInput) input = { 0 };
  CaptureOutcome *out = g_new0 (CaptureOutcome, 1);
  GArray *ids;
  ScStoreToken *pieces = NULL;
  ScStoreRunDesc desc = { 0 };
  ScStore *store = NULL;
  ScError err = { 0 };
  GError *error = NULL;
  gboolean locked = FALSE;

  g_autofree char *ids_text = NULL;

  job->job = sjob;
  job->cancellable = cancellable;

  if (job->ids != NULL)
    {
      input.ids = g_array_ref (job->ids);
      input.n_prompt = job->ids->len;
    }
  else if (!saccade_capture_input_init (&input, m->model, job->text, -1, TRUE,
                                        job->options.chat, &error))
    goto fail;
  ids = input.ids;
  if (ids->len == 0)
    {
      g_set_error_literal (&error, SACCADE_ERROR, SC_ERR_INVALID_ARG,
                           _("The sentence is empty: type some text to run"));
      goto fail;
    }
  if (ids->len > n_ctx || n_generate > n_ctx - ids->len)
    {
      if (n_generate == 0)
        g_set_error (&error, SACCADE_ERROR, SC_ERR_RANGE,
                     _("The text has %u tokens; %s reads at most %u"), ids->len, m->name,
                     n_ctx);
      else
        /* Translators: "The text has 8000 tokens and 500 more are to be generated;
         * SmolLM2 reads at most 8192". */
        g_set_error (&error, SACCADE_ERROR, SC_ERR_RANGE,
                     _("The text has %u tokens and %u more are to be generated; %s reads at "
                       "most %u"), ids->len, n_generate, m->name, n_ctx);
      goto fail;
    }
  if ((store = saccade_store_open (job->db_path, TRUE, &err)) == NULL)
    {
      saccade_set_error_from_sc (&error, &err);
      goto fail;
    }

  /* Generation, the forward pass and the predictions share the session. */
  g_mutex_lock (&m->lock);
  locked = TRUE;
  if (!capture_generate (job, &input, &error))
    goto fail;
  job->steps_done = (int) n_generate; /* the capture's pass is the last n_layers steps */
  if (sc_store_tokens_from_ids (sc_model_tokenizer (m->model), (const int32_t *) ids->data,
                                ids->len, &pieces, &err) != SC_OK)
    {
      saccade_set_error_from_sc (&error, &err);
      goto fail;
    }
  if (job->text == NULL)
    {
      /* Given ids: the run's text is what they decode to, piece after piece. */
      GString *t = g_string_new (NULL);
      for (guint i = 0; i < ids->len; i++)
        g_string_append_len (t, (const char *) pieces[i].piece, pieces[i].len);
      desc.text_len = t->len;
      ids_text = g_string_free (t, FALSE);
    }
  desc.model = &m->ident;
  desc.text = job->text != NULL ? input.text->str : ids_text;
  if (job->text != NULL)
    desc.text_len = input.text->len;
  desc.tokens = pieces;
  desc.n_tokens = ids->len;
  desc.backend = sc_backend_name (m->backend);
  desc.keep = job->keep;
  desc.sparse_eps = job->options.sparse_eps;
  if (job->text != NULL)
    desc.kind = saccade_capture_run_kind (input.n_prompt, ids->len, job->options.chat,
                                          &desc.n_prompt);
  else
    desc.kind = SC_RUN_KIND_IDS;
  if (!capture_run (job, store, &desc, (const int32_t *) ids->data, (int) ids->len, out,
                    &error))
    goto fail;
  g_mutex_unlock (&m->lock);
  goto done;

fail:
  if (locked)
    g_mutex_unlock (&m->lock);
  g_clear_pointer (&out, capture_outcome_free);
  g_propagate_error (error_out, error);
done:
  sc_store_close (store);
  sc_store_tokens_free (pieces);
  return out;
}

/* A capture's data on @model (the job's from saccade_job_run_steps_async() on). */
static CaptureJob *
capture_job_new (SaccadeLoadedModel *model, const char *db_path)
{
  CaptureJob *job = g_new0 (CaptureJob, 1);

  job->model = g_object_ref (model);
  job->db_path = g_strdup (db_path);
  job->total = (int) sc_model_info (model->model)->n_layers;
  return job;
}

/* Both captures: one source tag, so one finish (saccade_capture_finish()). */
static void
capture_run_async (gpointer source_object, CaptureJob *job, GCancellable *cancellable,
                   SaccadeCaptureProgress progress, gpointer progress_data,
                   GAsyncReadyCallback callback, gpointer user_data)
{
  saccade_job_run_steps_async (source_object, cancellable, saccade_capture_async, "capture",
                               capture_func, job, (GDestroyNotify) capture_job_free,
                               (GDestroyNotify) capture_outcome_free, progress, progress_data,
                               callback, user_data);
}

void
saccade_capture_text_async (gpointer source_object, SaccadeLoadedModel *model,
                            const char *db_path, const char *text,
                            const SaccadeCaptureOptions *options, GCancellable *cancellable,
                            SaccadeCaptureProgress progress, gpointer progress_data,
                            GAsyncReadyCallback callback, gpointer user_data)
{
  CaptureJob *job;

  g_return_if_fail (SACCADE_IS_LOADED_MODEL (model));
  g_return_if_fail (db_path != NULL && text != NULL);
  g_return_if_fail (options == NULL || options->n_generate >= 0);
  g_return_if_fail (options == NULL || (options->sparse_eps >= 0 && options->sparse_eps < 1));

  job = capture_job_new (model, db_path);
  job->text = g_strdup (text);
  if (options != NULL)
    job->options = *options;
  if (job->options.keep != NULL)
    {
      const ScModelInfo *in = sc_model_info (model->model);
      job->keep = g_memdup2 (job->options.keep, (gsize) in->n_layers * in->n_heads);
    }
  job->options.keep = job->keep;
  job->total *= job->options.n_generate + 1;
  capture_run_async (source_object, job, cancellable, progress, progress_data, callback,
                     user_data);
}

void
saccade_capture_async (gpointer source_object, SaccadeLoadedModel *model, const char *db_path,
                       const char *text, GCancellable *cancellable,
                       SaccadeCaptureProgress progress, gpointer progress_data,
                       GAsyncReadyCallback callback, gpointer user_data)
{
  saccade_capture_text_async (source_object, model, db_path, text, NULL, cancellable, progress,
                              progress_data, callback, user_data);
}

void
saccade_capture_ids_async (gpointer source_object, SaccadeLoadedModel *model,
                           const char *db_path, const int32_t *ids, int n_ids,
                           GCancellable *cancellable, SaccadeCaptureProgress progress,
                           gpointer progress_data, GAsyncReadyCallback callback,
                           gpointer user_data)
{
  CaptureJob *job;

  g_return_if_fail (SACCADE_IS_LOADED_MODEL (model));
  g_return_if_fail (db_path != NULL && (ids != NULL || n_ids == 0) && n_ids >= 0);

  job = capture_job_new (model, db_path);
  job->ids = g_array_sized_new (FALSE, FALSE, sizeof (int32_t), (guint) n_ids);
  g_array_append_vals (job->ids, ids, (guint) n_ids);
  capture_run_async (source_object, job, cancellable, progress, progress_data, callback,
                     user_data);
}

/* ------------------------------------------------------------------------------------ */
/* The induction-head detector                                                           */

static gpointer
induction_func (ScModel *model, const ScStoreModel *ident, ScSession *session,
                const char *db_path, gpointer data, SaccadeStudyFlags flags,
                SaccadeProgress progress, gpointer progress_data, GCancellable *cancellable,
                char **store_warning, GError **error)
{
  (void) flags;
  return saccade_induction_get (model, ident->path, session, db_path, data, FALSE, progress,
                                progress_data, cancellable, store_warning, error);
}

void
saccade_induction_async (gpointer source_object, SaccadeLoadedModel *model,
                         const char *db_path, const ScInductionParams *params,
                         GCancellable *cancellable, SaccadeJobProgress progress,
                         gpointer progress_data, GAsyncReadyCallback callback,
                         gpointer user_data)
{
  g_return_if_fail (params != NULL);

  saccade_study_job_async (source_object, saccade_induction_async, "induction", model,
                           db_path, SACCADE_STUDY_DEFAULT, FALSE, induction_func,
                           g_memdup2 (params, sizeof *params), g_free,
                           (GDestroyNotify) saccade_induction_free, cancellable, progress,
                           progress_data, callback, user_data);
}

SaccadeInduction *
saccade_induction_finish (GAsyncResult *result, GError **error)
{
  return saccade_job_finish (result, saccade_induction_async, error);
}

gint64
saccade_capture_finish_with_predictions (GAsyncResult *result, ScPredictions *predictions,
                                         GError **error)
{
  CaptureOutcome *o = saccade_job_finish (result, saccade_capture_async, error);
  gint64 run_id;

  if (predictions != NULL)
    memset (predictions, 0, sizeof *predictions);
  if (o == NULL)
    return 0;
  run_id = o->run_id;
  if (predictions != NULL)
    {
      *predictions = o->pred;
      memset (&o->pred, 0, sizeof o->pred);
    }
  capture_outcome_free (o);
  return run_id;
}

gint64
saccade_capture_finish (GAsyncResult *result, GError **error)
{
  return saccade_capture_finish_with_predictions (result, NULL, error);
}

/* ------------------------------------------------------------------------------------ */
/* For the studies of other files (header)                                               */

ScModel *
saccade_loaded_model_get_model (SaccadeLoadedModel *self)
{
  g_return_val_if_fail (SACCADE_IS_LOADED_MODEL (self), NULL);
  return self->model;
}

const ScStoreModel *
saccade_loaded_model_get_ident (SaccadeLoadedModel *self)
{
  g_return_val_if_fail (SACCADE_IS_LOADED_MODEL (self), NULL);
  return &self->ident;
}

ScSession *
saccade_loaded_model_lock_session (SaccadeLoadedModel *self)
{
  g_return_val_if_fail (SACCADE_IS_LOADED_MODEL (self), NULL);
  g_mutex_lock (&self->lock);
  return self->session;
}

void
saccade_loaded_model_unlock_session (SaccadeLoadedModel *self)
{
  g_return_if_fail (SACCADE_IS_LOADED_MODEL (self));
  g_mutex_unlock (&self->lock);
}
