/* sc-neuron.c — one layer's queries and keys, for the neuron view (sc_session_layer_qk in
 * sc-forward.h): the window's "Inside the model" section and `saccade neuron` show how a
 * head's scores are made from q · k, so they need the vectors the forward pass used.
 *
 * It runs layers 0 .. layer as a taped forward (sc-session-private.h) whose tape asks for
 * nothing but the stop layer: every slot NULL, so the layers write where an untaped run
 * writes and no memory is added. When the run stops, the session's query buffer holds that
 * layer's post-RoPE queries and the layer's key cache its post-RoPE keys. Nothing above
 * the layer runs: a query of layer 0 costs one layer.
 */
#include "forward/sc-forward.h"

#include "backend/sc-backend-impl.h"
#include "forward/sc-session-private.h"

#include <stddef.h>

ScStatus
sc_session_layer_qk (ScSession *s, const int32_t *ids, int n, int layer, float *q, float *k,
                     ScError *err)
{
  const ScModelInfo *in;
  ScForwardTape tape = { 0 };
  size_t N, Q, KV;
  ScStatus st;

  if (err != NULL)
    sc_error_clear (err);
  if (s == NULL || ids == NULL || q == NULL || k == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "layer_qk: NULL session, ids, q or k");
  in = sc_model_info (s->model);
  if (n < 1)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "layer_qk: empty input: there are no tokens");
  if (layer < 0 || layer >= (int) in->n_layers)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "layer_qk: layer %d is outside 0..%u", layer,
                         in->n_layers - 1);
  N = (size_t) n;
  Q = (size_t) in->n_heads * in->head_dim;
  KV = (size_t) in->n_kv_heads * in->head_dim;
  tape.stop_layer = layer + 1; /* == n_layers for the last layer: the output head then runs
                                * on the last row too (one row's logits, not downloaded) */
  if ((st = sc_forward_taped (s, ids, n, NULL, &tape, NULL, err)) != SC_OK)
    return st;
  /* the last layer run was @layer: its queries are in q, its keys in rows 0 .. n of its
   * cache */
  if ((st = s->b->ops->download (s->b, q, s->q, N * Q, err)) != SC_OK)
    return st;
  return s->b->ops->download (s->b, k, s->kc + (size_t) layer * s->cap * KV, N * KV, err);
}
