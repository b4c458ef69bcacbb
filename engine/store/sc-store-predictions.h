/* sc-store-predictions.h — what the model predicted at every position of a run, kept with
 * the run: the top-k next tokens (engine/forward/sc-predict.h) with their probabilities,
 * logits and byte pieces, so the window and the command line show them without the model.
 *
 * Table predictions (schema v3; docs/store.md, "Predictions"): one row per (run, pos,
 * rank), rank 0 the most likely token after reading positions 0..pos. A capture adds them
 * with sc_store_capture_set_predictions() before its commit; they are written in the
 * run's transaction (a run is stored with its predictions or not at all). Runs stored
 * without them (before v3, or by a caller that computed none) have none: reading gives
 * n_positions 0, not an error.
 *
 * Trust: every row read is checked — positions 0..n_tokens-1 each with ranks 0..k-1
 * exactly once (1 <= k <= SC_STORE_MAX_PREDICTIONS_K), a token id inside the model's
 * vocabulary, a piece BLOB of at most SC_STORE_MAX_PREDICTION_PIECE_BYTES, a probability in [0, 1] no
 * larger than the rank before it, a logit finite or NULL; anything else is SC_ERR_FORMAT
 * naming the run, the row and the value. Nothing is allocated before the counts are
 * checked against the run.
 *
 * Thread safety: as the store. Plain C17 + SQLite; no GLib.
 */
#pragma once

#include <stdint.h>

#include "core/sc-error.h"
#include "store/sc-store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most predictions a position may keep: a capture keeps 10 (SC_PREDICT_TOP_K). */
#define SC_STORE_MAX_PREDICTIONS_K 64u

/* The most bytes of a prediction's piece. A vocabulary piece is a few to a few dozen bytes;
 * the window lays every shown piece out as text, where a 64 kB piece took 2 s and a 3 MB
 * one hung it (issue 25), so a longer stored piece is untrusted: the reader refuses it
 * naming the run, position and rank. The writer stores a longer piece (a vocabulary with a
 * piece past 256 bytes) cut to at most 256 bytes, before a UTF-8 sequence it would split:
 * the token id stays exact, and the piece is only its label. */
#define SC_STORE_MAX_PREDICTION_PIECE_BYTES 256u

typedef struct {
  uint32_t n_positions;    /* the run's n_tokens, or 0: the run has none */
  uint32_t k;              /* predictions per position */
  int32_t *ids;            /* (n_positions, k) best first */
  float *logits;           /* (n_positions, k); NaN where none was stored */
  double *probs;           /* (n_positions, k) softmax over the whole vocabulary */
  ScStoreToken *pieces;    /* (n_positions * k) the ids' bytes, one allocation */
} ScStorePredictions;

/* Keeps the top-@k predictions of each of the run's @n_positions positions (it must be the
 * run's token count) with the capture, to be written at its commit. Everything is
 * copied. @ids, @probs: (n_positions, k) row-major; @logits (may be NULL): the same shape;
 * @pieces: (n_positions * k) the ids' bytes (sc_store_tokens_from_ids()). Errors:
 * SC_ERR_INVALID_ARG (a shape that is not the run's, k outside 1..SC_STORE_MAX_PREDICTIONS_K,
 * a probability outside [0, 1] or a NaN, predictions set twice), SC_ERR_NOMEM. */
ScStatus sc_store_capture_set_predictions (ScStoreCapture *cap, uint32_t n_positions,
                                           uint32_t k, const int32_t *ids,
                                           const float *logits, const double *probs,
                                           const ScStoreToken *pieces, ScError *err);

/* Run @run_id's predictions into @out (free with sc_store_predictions_clear()); a run
 * without any gives n_positions 0. Errors: those of sc_store_get_run() (SC_ERR_NOT_FOUND
 * for no such complete run), SC_ERR_FORMAT for a row breaking the rules above, SC_ERR_DB,
 * SC_ERR_NOMEM. On error @out holds nothing. */
ScStatus sc_store_read_predictions (ScStore *store, int64_t run_id, ScStorePredictions *out,
                                    ScError *err);
void sc_store_predictions_clear (ScStorePredictions *p); /* NULL is a no-op */

#ifdef __cplusplus
}
#endif
