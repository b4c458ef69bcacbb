/* sc-layer-out.c — one layer run again under an intervention, from the residual a
 * keep_residuals run kept entering it (sc_session_layer_output in sc-forward.h): value
 * zeroing (study/sc-mixing-study.h) reruns a layer once per key with that key's values
 * zeroed and compares what leaves the layer.
 *
 * It is a taped forward (sc-session-private.h) whose tape asks for nothing but the stop
 * layer, started at that layer: only the layer runs (and the output head, on the last row,
 * when it is the last layer), the kept residuals stay, and the layer's output is the
 * session's residual buffer when the run stops. */
#include "forward/sc-forward.h"

#include "backend/sc-backend-impl.h"
#include "forward/sc-session-private.h"

#include <stddef.h>

ScStatus
sc_session_layer_output (ScSession *s, const int32_t *ids, int n, int layer,
                         const ScIntervention *iv, float *out, ScError *err)
{
  const ScModelInfo *in;
  ScForwardTape tape = { 0 };
  ScForwardOptions fo = { 0 };
  ScStatus st;

  if (err != NULL)
    sc_error_clear (err);
  if (s == NULL || ids == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "layer_output: NULL session, ids or out");
  in = sc_model_info (s->model);
  if (layer < 0 || layer >= (int) in->n_layers)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "layer_output: layer %d is outside 0..%u",
                         layer, in->n_layers - 1);
  if (layer > 0 && (s->resid == NULL || s->kept_n != n))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "layer_output: layer %d needs residuals "
                         "kept by a previous run on the same %d tokens", layer, n);
  fo.intervention = iv;
  fo.start_layer = layer;     /* sc_forward checks the ids and the intervention's layer */
  tape.stop_layer = layer + 1; /* == n_layers for the last layer: the output head then runs
                                * on the last row (not downloaded) and leaves x as it is */
  if ((st = sc_forward_taped (s, ids, n, &fo, &tape, NULL, err)) != SC_OK)
    return st;
  return s->b->ops->download (s->b, out, s->x, (size_t) n * in->n_embd, err);
}
