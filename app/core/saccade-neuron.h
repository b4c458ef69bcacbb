/* saccade-neuron.h — the neuron view of a stored run as both faces use it (`saccade neuron
 * RUN --layer L --head H --query I` and the Learn page's "Inside the model" section): how
 * one head's attention is made from its query and key vectors.
 *
 * saccade_neuron_get() reads run @run_id's tokens and head (@layer, @head)'s stored
 * probabilities, then recomputes layers 0 .. @layer on the caller's session
 * (sc_session_layer_qk) for the post-RoPE queries and keys. For query i and each visible
 * key j <= i, saccade_neuron_query() gives dot = q_i · k_j (k of the KV head the query head
 * shares: head / (n_heads / n_kv_heads)), scaled = dot × attn_scale, the softmax weight of
 * the scaled scores over j <= i (double), and the stored probability. The softmax weights
 * are what the forward pass computed in float; the store keeps fp16 (relative error
 * 2^-11 ≈ 4.9e-4 of a value <= 1), so |weight − stored| <= 1e-3 for a dense run
 * (max_diff below says how close every query of the head is; a sparse run dropped keys and
 * shows them as 0).
 *
 * Memory: the head's (n, n) stored probabilities as float, and q, k of the layer: for a
 * sentence, kilobytes; a run of thousands of tokens, up to hundreds of MB (call from a
 * worker thread).
 */
#pragma once

#include <gio/gio.h>

#include "app/core/saccade-capture-task.h"
#include "engine/forward/sc-forward.h"
#include "engine/store/sc-store.h"

G_BEGIN_DECLS

typedef struct {
  ScStoreRunInfo run;     /* the run's row (owned) */
  ScStoreToken *tokens;   /* (n_tokens), owned */
  int n_tokens;
  int layer, head, kv_head;
  int n_heads, n_kv_heads, head_dim;
  double attn_scale;
  float *q;               /* (n_tokens, n_heads * head_dim): every head of the layer */
  float *k;               /* (n_tokens, n_kv_heads * head_dim) */
  float *stored;          /* (n_tokens, n_tokens): the head as stored, 0 above the diagonal */
  double max_diff;        /* max over every query i and key j <= i of |weight − stored| */
  int max_diff_query;     /* the query where it is */
  double max_sum_error;   /* max over queries of |Σ_j weight − 1| */
} SaccadeNeuron;

/* One visible key of a query. */
typedef struct {
  double dot, scaled, weight, stored;
} SaccadeNeuronKey;

/* Computes the view (above). @ident identifies the loaded model (sc_store_model_identify);
 * a run captured with another model file is refused. Errors: G_IO_ERROR_NOT_FOUND (no
 * store, no such run), G_IO_ERROR_INVALID_ARGUMENT (another model; layer or head outside
 * the model, naming the range; a head the run did not keep), SACCADE_ERROR with the engine's
 * or store's message, G_IO_ERROR_CANCELLED. Free with saccade_neuron_free. Any thread (the
 * session is the caller's, used by this thread only during the call). */
SaccadeNeuron *saccade_neuron_get (ScModel *model, const ScStoreModel *ident, ScSession *session,
                                   const char *db_path, gint64 run_id, int layer, int head,
                                   GCancellable *cancellable, GError **error);
void saccade_neuron_free (SaccadeNeuron *nv); /* NULL is a no-op */

/* saccade_neuron_get in a worker thread on @model's session (under its lock), for the
 * window. @model and @db_path are referenced / copied. */
void saccade_neuron_get_async (gpointer source_object, SaccadeLoadedModel *model,
                               const char *db_path, gint64 run_id, int layer, int head,
                               GCancellable *cancellable, GAsyncReadyCallback callback,
                               gpointer user_data);
/* The view (free with saccade_neuron_free), or NULL with @error set. */
SaccadeNeuron *saccade_neuron_get_finish (GAsyncResult *result, GError **error);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeNeuron, saccade_neuron_free)

/* Query @i's head_dim floats (post-RoPE), borrowed; 0 <= i < n_tokens. */
const float *saccade_neuron_q (const SaccadeNeuron *nv, int i);
/* Key @j's head_dim floats of the head's KV head (post-RoPE), borrowed. */
const float *saccade_neuron_k (const SaccadeNeuron *nv, int j);
/* Query @i (0 <= i < n_tokens) against keys 0 .. i into @keys (i + 1 entries). */
void saccade_neuron_query (const SaccadeNeuron *nv, int i, SaccadeNeuronKey *keys);

G_END_DECLS
