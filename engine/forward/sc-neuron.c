/* sc-neuron.c — one layer's queries and keys, for the neuron view (sc_session_layer_qk in
 * sc-forward.h): the window's "Inside the model" section and `saccade neuron` show how a
 * head's scores are made from q · k, so they need the vectors the forward pass used.
 *
 * It runs layers 0 .. layer of a taped forward (sc-session-private.h) with a one-slot tape
 * of its own: the tape's q slot holds the layer's post-RoPE queries when the run stops, the
 * session's key cache of that layer its post-RoPE keys. Nothing above the layer runs and
 * no output head: a query of layer 0 costs one layer.
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
  size_t N, E, Q, KV, F, H;
  ScBackend *b;
  ScForwardTape tape = { 0 };
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
  /* before the tape is sized from n (H n² floats): sc_forward would refuse it only later */
  if ((uint32_t) n > in->n_ctx_train)
    return sc_error_set (err, SC_ERR_RANGE, "layer_qk: %d tokens is longer than the model's "
                         "context of %u", n, in->n_ctx_train);
  b = s->b;
  N = (size_t) n;
  E = in->n_embd;
  H = in->n_heads;
  Q = H * in->head_dim;
  KV = (size_t) in->n_kv_heads * in->head_dim;
  F = in->n_ff;
  /* one slot (every stride 0): only layer @layer's values survive, which is all we read */
  tape.q = b->ops->alloc (b, N * Q, err);
  tape.probs = tape.q != NULL ? b->ops->alloc (b, H * N * N, err) : NULL;
  tape.gu = tape.probs != NULL ? b->ops->alloc (b, N * 2 * F, err) : NULL;
  tape.x_mid = tape.gu != NULL ? b->ops->alloc (b, N * E, err) : NULL;
  tape.stop_layer = layer + 1;
  if (tape.x_mid == NULL)
    {
      st = SC_ERR_NOMEM;
      goto out;
    }
  if ((st = sc_forward_taped (s, ids, n, NULL, &tape, NULL, err)) != SC_OK)
    goto out;
  if ((st = b->ops->download (b, q, tape.q, N * Q, err)) != SC_OK)
    goto out;
  /* the run left the layer's keys in rows 0 .. n of its cache */
  st = b->ops->download (b, k, s->kc + (size_t) layer * s->cap * KV, N * KV, err);
out:
  if (tape.q != NULL)
    b->ops->free (b, tape.q);
  if (tape.probs != NULL)
    b->ops->free (b, tape.probs);
  if (tape.gu != NULL)
    b->ops->free (b, tape.gu);
  if (tape.x_mid != NULL)
    b->ops->free (b, tape.x_mid);
  return st;
}
