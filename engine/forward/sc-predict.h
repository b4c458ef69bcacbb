/* sc-predict.h — what the model predicts: the top-k next tokens at every position of a run,
 * and greedy continuation of a prompt.
 *
 * Top-k at every position: a capture runs the forward pass with keep_residuals, then
 * sc_predict_topk() applies the output head (sc_session_kept_logits()) to the kept final
 * residual a chunk of SC_PREDICT_CHUNK_ROWS rows at a time and keeps the k best tokens of
 * each row, with their softmax probabilities computed over the whole row in double. It
 * never holds more than one chunk of logits: (n_tokens, n_vocab) floats would be 1.6 GB
 * for SmolLM2 (vocabulary 49,152) at 8,192 positions; a chunk is 12.6 MB.
 *
 * Greedy continuation: sc_generate_greedy() appends the argmax token of the last position
 * one at a time, running the prompt once and then each new token against the KV cache
 * (keep_kv, n_past), and stops before an end-of-generation token — what `saccade generate`
 * and `saccade capture --generate` do.
 *
 * Thread safety: as the session's (one thread at a time).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "forward/sc-forward.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The k a capture keeps per position: enough to see the runners-up of a prediction, few
 * enough that a 8,192-token run's predictions are 1.3 MB (ids, logits and probabilities). */
#define SC_PREDICT_TOP_K 10

/* Rows of logits computed at once: 64 rows keep sgemm near its peak (its M dimension) while
 * the chunk stays small (64 x 49,152 floats = 12.6 MB for SmolLM2). */
#define SC_PREDICT_CHUNK_ROWS 64

/* The top-k next tokens of every position of a run. Row p is the prediction after reading
 * positions 0..p: the distribution of the token at p + 1. */
typedef struct {
  int n_positions; /* rows */
  int k;           /* predictions per row: min(k asked, n_vocab) */
  int32_t *ids;    /* (n_positions, k), best first; equal logits: the lower id first */
  float *logits;   /* (n_positions, k) the logits of those ids */
  double *probs;   /* (n_positions, k) softmax over the whole row of n_vocab logits, in double */
} ScPredictions;

/* The top @k (1 .. n_vocab; SC_PREDICT_TOP_K for a capture) next tokens at each of the
 * @n_positions positions of the run the session last ran with keep_residuals (n_positions
 * is that run's length), into @out (caller frees with sc_predictions_clear(); cleared on
 * failure). The ids, logits and probabilities are those of the same sc_forward run with
 * all_logits up to the rounding of the vocabulary projection done in chunks. @progress
 * (may be NULL) is called after each chunk with the rows done; returning false cancels.
 * Errors: SC_ERR_INVALID_ARG (NULL arguments, k out of range, no residuals kept for
 * n_positions rows), SC_ERR_RANGE (a row with a NaN or infinite logit: a broken model; the
 * message names the position), SC_ERR_NOMEM, SC_ERR_CANCELLED, the backend's error. */
ScStatus sc_predict_topk (ScSession *session, int n_positions, int k, ScProgressFn progress,
                          void *progress_user, ScPredictions *out, ScError *err);

/* Frees @p's arrays and zeroes it; NULL and a zeroed struct are no-ops. */
void sc_predictions_clear (ScPredictions *p);

/* Called with each new token as it is appended (@n_done tokens generated so far, this one
 * counted, of at most @n_new); returning false stops the generation (SC_ERR_CANCELLED). */
typedef bool (*ScTokenFn) (void *user, int32_t id, int n_done, int n_new);

/* Greedy decoding: @ids holds the @n_prompt prompt ids (>= 1) and room for @n_new (>= 0)
 * more; appends up to @n_new tokens, each the argmax of the last position's logits (equal
 * logits: the lower id), stopping before an end-of-generation token of the model's
 * tokenizer (sc_tokenizer_is_eog(), not appended). *@n_out receives n_prompt + the tokens
 * appended (also on failure: ids[0 .. *n_out) are valid). The session's KV cache is used
 * and left holding the sequence. @on_token may be NULL; @progress (may be NULL) is passed
 * to every forward call with @user. Errors: SC_ERR_INVALID_ARG (NULL arguments, n_prompt
 * < 1, n_new < 0, an id out of the vocabulary), SC_ERR_RANGE (n_prompt + n_new longer than
 * the model's context: checked before anything runs), SC_ERR_CANCELLED, sc_forward's. */
ScStatus sc_generate_greedy (ScSession *session, int32_t *ids, int n_prompt, int n_new,
                             ScTokenFn on_token, ScProgressFn progress, void *user, int *n_out,
                             ScError *err);

#ifdef __cplusplus
}
#endif
