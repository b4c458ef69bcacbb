/* saccade-neuron.c — the neuron view of a stored run (saccade-neuron.h): read the run and
 * the head, recompute the layer's queries and keys, and the arithmetic between them. */
#define G_LOG_DOMAIN "saccade"

#include "app/core/saccade-neuron.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-paths.h"
#include "app/core/saccade-study.h"
#include "engine/analysis/sc-qk.h"
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
  g_autofree ScQkScore *sc = g_new (ScQkScore, i + 1);

  /* key j's vector at saccade_neuron_k (nv, j): n_kv_heads vectors of head_dim per token */
  sc_qk_scores (saccade_neuron_q (nv, i), saccade_neuron_k (nv, 0),
                (size_t) nv->n_kv_heads * nv->head_dim, nv->head_dim, i + 1, nv->attn_scale, sc);
  for (int j = 0; j <= i; j++)
    {
      keys[j].dot = sc[j].dot;
      keys[j].scaled = sc[j].scaled;
      keys[j].weight = sc[j].weight;
      keys[j].stored = nv->stored[(gsize) i * nv->n_tokens + j];
    }
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
                   _("Run %lld did not keep head L%d.H%d"), (long long) nv->run.id, nv->layer,
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
                   _("Head L%d.H%d is outside the model: layers 0–%u, heads 0–%u"), layer, head,
                   info->n_layers - 1, info->n_heads - 1);
      return NULL;
    }
  if (info->attn_softcap > 0.0f)
    {
      /* its arithmetic (dot, scaled, softmax) would leave out the cap */
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   _("The neuron view does not show soft-capped attention scores yet (%s caps "
                     "them at %g)"), info->arch_name, (double) info->attn_softcap);
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
  gint64 run_id;
  int layer, head;
} Job;

static gpointer
neuron_func (ScModel *model, const ScStoreModel *ident, ScSession *session, const char *db_path,
             gpointer data, SaccadeStudyFlags flags, SaccadeProgress progress,
             gpointer progress_data, GCancellable *cancellable, char **store_warning,
             GError **error)
{
  Job *job = data;

  (void) flags, (void) progress, (void) progress_data, (void) store_warning;
  return saccade_neuron_get (model, ident, session, db_path, job->run_id, job->layer,
                             job->head, cancellable, error);
}

void
saccade_neuron_get_async (gpointer source_object, SaccadeLoadedModel *model,
                          const char *db_path, gint64 run_id, int layer, int head,
                          GCancellable *cancellable, GAsyncReadyCallback callback,
                          gpointer user_data)
{
  Job *job = g_new0 (Job, 1);

  job->run_id = run_id;
  job->layer = layer;
  job->head = head;
  /* one layer's q and k on the model's session: it holds the session lock */
  saccade_study_job_async (source_object, saccade_neuron_get_async, "neuron view", model,
                           db_path, SACCADE_STUDY_DEFAULT, TRUE, neuron_func, job, g_free,
                           (GDestroyNotify) saccade_neuron_free, cancellable, NULL, NULL,
                           callback, user_data);
}

SaccadeNeuron *
saccade_neuron_get_finish (GAsyncResult *result, GError **error)
{
  return saccade_job_finish (result, saccade_neuron_get_async, error);
}
