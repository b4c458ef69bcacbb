/* saccade-neuron.c — the neuron view of a stored run (saccade-neuron.h): read the run and
 * the head, recompute the layer's queries and keys, and the arithmetic between them. */
#define G_LOG_DOMAIN "saccade"

#include "app/core/saccade-neuron.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-paths.h"
#include "engine/core/sc-sha256.h"
#include "engine/store/sc-store-heads.h"

void
saccade_neuron_free (SaccadeNeuron *nv)
{
  if (nv == NULL)
    return;
  sc_store_run_info_clear (&nv->run);
  sc_store_tokens_free (nv->tokens);
  g_free (nv->q);
  g_free (nv->k);
  g_free (nv->stored);
  g_free (nv);
}

const float *
saccade_neuron_q (const SaccadeNeuron *nv, int i)
{
  return nv->q + ((gsize) i * nv->n_heads + nv->head) * nv->head_dim;
}

const float *
saccade_neuron_k (const SaccadeNeuron *nv, int j)
{
  return nv->k + ((gsize) j * nv->n_kv_heads + nv->kv_head) * nv->head_dim;
}

void
saccade_neuron_query (const SaccadeNeuron *nv, int i, SaccadeNeuronKey *keys)
{
  const float *qi = saccade_neuron_q (nv, i);
  double mx = -INFINITY, sum = 0;

  for (int j = 0; j <= i; j++)
    {
      const float *kj = saccade_neuron_k (nv, j);
      double dot = 0;
      for (int d = 0; d < nv->head_dim; d++)
        dot += (double) qi[d] * kj[d];
      keys[j].dot = dot;
      keys[j].scaled = dot * nv->attn_scale;
      keys[j].stored = nv->stored[(gsize) i * nv->n_tokens + j];
      mx = MAX (mx, keys[j].scaled);
    }
  for (int j = 0; j <= i; j++)
    sum += exp (keys[j].scaled - mx);
  for (int j = 0; j <= i; j++)
    keys[j].weight = exp (keys[j].scaled - mx) / sum;
}

/* Run @run_id's row and tokens, checked against the loaded model. */
static gboolean
read_run (const char *db_path, gint64 run_id, const ScStoreModel *ident,
          const ScModelInfo *info, SaccadeNeuron *nv, GError **error)
{
  char hex[SC_SHA256_HEX_SIZE];
  size_t n = 0;

  if (!saccade_store_read_run (db_path, run_id, &nv->run, &nv->tokens, &n, error))
    return FALSE;
  sc_sha256_hex (ident->sha256, hex);
  if (strcmp (hex, nv->run.model_sha256) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("Run %lld was captured with %s, another model file than the loaded %s"),
                   (long long) run_id, nv->run.model_name, ident->name);
      return FALSE;
    }
  /* each layer's q, k and the (n, n) head are allocated from n: the model's context bounds
   * it, so a damaged row cannot ask for more */
  if (n < 1 || n > info->n_ctx_train)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "run %lld has %zu tokens, outside 1..%u (the model's context)",
                   (long long) run_id, n, info->n_ctx_train);
      return FALSE;
    }
  for (size_t i = 0; i < n; i++)
    if (nv->tokens[i].id < 0 || (uint32_t) nv->tokens[i].id >= info->n_vocab)
      {
        g_set_error (error, SACCADE_ERROR, SC_ERR_FORMAT,
                     "run %lld: token %zu has id %d, outside the vocabulary of %u",
                     (long long) run_id, i, nv->tokens[i].id, info->n_vocab);
        return FALSE;
      }
  nv->n_tokens = (int) n;
  return TRUE;
}

static gboolean
read_head (const char *db_path, SaccadeNeuron *nv, GError **error)
{
  ScError err = { 0 };
  ScStore *store;
  ScStatus st;

  if (!sc_store_run_has_head (&nv->run, nv->layer, nv->head))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("Run %lld did not keep head %d.%d"), (long long) nv->run.id, nv->layer,
                   nv->head);
      return FALSE;
    }
  if ((store = saccade_store_open (db_path, FALSE, &err)) == NULL)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  nv->stored = g_new (float, (gsize) nv->n_tokens * nv->n_tokens);
  st = sc_store_read_head_rows (store, nv->run.id, nv->layer, nv->head, 0,
                                (uint32_t) nv->n_tokens, nv->stored, NULL, &err);
  sc_store_close (store);
  if (st != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  return TRUE;
}

/* max_diff and max_sum_error over every query of the head. */
static void
compare_all (SaccadeNeuron *nv)
{
  g_autofree SaccadeNeuronKey *keys = g_new (SaccadeNeuronKey, nv->n_tokens);

  nv->max_diff = 0;
  nv->max_diff_query = 0;
  nv->max_sum_error = 0;
  for (int i = 0; i < nv->n_tokens; i++)
    {
      double sum = 0;
      saccade_neuron_query (nv, i, keys);
      for (int j = 0; j <= i; j++)
        {
          const double d = fabs (keys[j].weight - keys[j].stored);
          sum += keys[j].weight;
          if (d > nv->max_diff)
            {
              nv->max_diff = d;
              nv->max_diff_query = i;
            }
        }
      nv->max_sum_error = MAX (nv->max_sum_error, fabs (sum - 1));
    }
}

SaccadeNeuron *
saccade_neuron_get (ScModel *model, const ScStoreModel *ident, ScSession *session,
                    const char *db_path, gint64 run_id, int layer, int head,
                    GCancellable *cancellable, GError **error)
{
  const ScModelInfo *info = sc_model_info (model);
  g_autoptr (SaccadeNeuron) nv = g_new0 (SaccadeNeuron, 1);
  g_autofree int32_t *ids = NULL;
  ScError err = { 0 };

  if (layer < 0 || layer >= (int) info->n_layers || head < 0 || head >= (int) info->n_heads)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("Head %d.%d is outside the model: layers 0–%u, heads 0–%u"), layer, head,
                   info->n_layers - 1, info->n_heads - 1);
      return NULL;
    }
  nv->layer = layer;
  nv->head = head;
  nv->n_heads = (int) info->n_heads;
  nv->n_kv_heads = (int) info->n_kv_heads;
  nv->kv_head = head / (nv->n_heads / nv->n_kv_heads);
  nv->head_dim = (int) info->head_dim;
  nv->attn_scale = info->attn_scale;
  if (!read_run (db_path, run_id, ident, info, nv, error) || !read_head (db_path, nv, error))
    return NULL;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  ids = g_new (int32_t, nv->n_tokens);
  for (int i = 0; i < nv->n_tokens; i++)
    ids[i] = nv->tokens[i].id;
  nv->q = g_new (float, (gsize) nv->n_tokens * nv->n_heads * nv->head_dim);
  nv->k = g_new (float, (gsize) nv->n_tokens * nv->n_kv_heads * nv->head_dim);
  if (sc_session_layer_qk (session, ids, nv->n_tokens, layer, nv->q, nv->k, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  compare_all (nv);
  return g_steal_pointer (&nv);
}

/* ------------------------------------------------------------------------------------ */
/* In a worker                                                                           */

typedef struct {
  SaccadeLoadedModel *model;
  char *db_path;
  gint64 run_id;
  int layer, head;
} Job;

static void
job_free (Job *job)
{
  g_object_unref (job->model);
  g_free (job->db_path);
  g_free (job);
}

static void
neuron_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  Job *job = task_data;
  GError *error = NULL;
  ScSession *session = saccade_loaded_model_lock_session (job->model);
  SaccadeNeuron *nv = saccade_neuron_get (saccade_loaded_model_get_model (job->model),
                                          saccade_loaded_model_get_ident (job->model), session,
                                          job->db_path, job->run_id, job->layer, job->head,
                                          cancellable, &error);

  saccade_loaded_model_unlock_session (job->model);
  (void) source;
  if (nv == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, nv, (GDestroyNotify) saccade_neuron_free);
}

void
saccade_neuron_get_async (gpointer source_object, SaccadeLoadedModel *model,
                          const char *db_path, gint64 run_id, int layer, int head,
                          GCancellable *cancellable, GAsyncReadyCallback callback,
                          gpointer user_data)
{
  g_autoptr (GTask) task = NULL;
  Job *job;

  g_return_if_fail (SACCADE_IS_LOADED_MODEL (model));
  task = g_task_new (source_object, cancellable, callback, user_data);
  g_task_set_source_tag (task, saccade_neuron_get_async);
  job = g_new0 (Job, 1);
  job->model = g_object_ref (model);
  job->db_path = g_strdup (db_path);
  job->run_id = run_id;
  job->layer = layer;
  job->head = head;
  g_task_set_task_data (task, job, (GDestroyNotify) job_free);
  g_task_run_in_thread (task, neuron_thread);
}

SaccadeNeuron *
saccade_neuron_get_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (G_IS_TASK (result), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
