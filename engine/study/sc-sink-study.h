/* sc-sink-study.h — the attention-sink measurement of Gu et al. 2025 ("When Attention Sink
 * Emerges in Language Models: An Empirical View", ICLR 2025) on three kinds of input: makes
 * each input's T token ids and runs the model once on it, taking every head's first-token
 * mass as its layer finishes (engine/analysis/sc-sink.h defines the mass and the rate).
 * Three short passes with nothing worth reusing: not a stored study kind, and no store.
 *
 * The inputs, T ids each (T counts the BOS, as Gu et al.'s code truncates the tokenized
 * text, BOS included, to 64 tokens):
 *   natural   SC_SINK_NATURAL_TEXT tokenized as the tokenizer does (BOS first when it adds
 *             one), its first T ids;
 *   random    the BOS when the tokenizer adds one, then ids drawn uniformly, with
 *             replacement, from the ordinary tokens: type NORMAL (after the tokenizer's
 *             CONTROL marking of special tokens), not BOS or EOS, below both the
 *             tokenizer's and the model's vocabulary (the pool of sc-induction-study.h).
 *             Draw k takes pool[splitmix64() mod M] with splitmix64's state = the seed
 *             (modulo bias below M / 2^64); the same (model, T, seed) gives the same ids;
 *   repeated  the BOS when the tokenizer adds one, then SC_SINK_REPEATED_WORD's one token
 *             again and again.
 * With no_bos the BOS is left out of all three, so "the first token" is the text's first
 * token; otherwise it is the BOS for a tokenizer that adds one (Gemma 3's <bos>) and the
 * text's first token for one that does not (SmolLM2).
 *
 * Thread safety: one run per session at a time (the session's rule); the model may be
 * shared.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "core/sc-error.h"
#include "forward/sc-forward.h"
#include "model/sc-model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  SC_SINK_INPUT_NATURAL,
  SC_SINK_INPUT_RANDOM,
  SC_SINK_INPUT_REPEATED,
  SC_SINK_N_INPUTS
} ScSinkInput;

/* Plain English prose of about 150 tokens (enough for T up to 128 in both tokenizers). */
#define SC_SINK_NATURAL_TEXT                                                                  \
  "The river runs past the old mill at the edge of the village, where the road turns north " \
  "towards the hills. In the spring the water rises quickly, and the farmers who live along " \
  "its banks move their animals to higher fields until the flood has passed. Most years the " \
  "mill is closed by the middle of April, and the children walk the long way round to "     \
  "school over the stone bridge. When the water falls again, the meadows are green and "    \
  "soft, and the first market of the summer is held on the square in front of the church. " \
  "People come from the nearby towns to buy bread, cheese, honey and wool, to sell what "   \
  "they have made over the winter, and to hear the news from the other side of the valley."

/* A common word that is one token in both SmolLM2's and Gemma 3's vocabularies. */
#define SC_SINK_REPEATED_WORD " the"

typedef struct {
  int n_tokens;  /* T >= 2, BOS included */
  uint64_t seed; /* of the random input */
  bool no_bos;   /* leave out the BOS the tokenizer would add */
} ScSinkParams;

/* "natural", "random", "repeated"; NULL out of range. */
const char *sc_sink_input_id (ScSinkInput input);

/* Fills @ids (room for T) with @input's ids; *@bos (may be NULL) says whether ids[0] is the
 * BOS. Errors: SC_ERR_INVALID_ARG (NULL arguments, T < 2, an unknown input), SC_ERR_RANGE
 * (T beyond the model's context, or the natural text has fewer than T tokens: the message
 * says how many it has), SC_ERR_UNSUPPORTED (no ordinary tokens, or the repeated word is
 * not one token), SC_ERR_NOMEM. */
ScStatus sc_sink_input_ids (const ScModel *model, ScSinkInput input, const ScSinkParams *p,
                            int32_t *ids, bool *bos, ScError *err);

/* Runs @model on @ids (n >= 1) in @session and fills @mass (n_layers * n_heads,
 * layer-major) with each head's first-token mass over all n queries (sc_sink_first_mass).
 * Errors: SC_ERR_INVALID_ARG, those of sc_forward(), SC_ERR_NOMEM. */
ScStatus sc_sink_study_run (ScSession *session, const ScModel *model, const int32_t *ids, int n,
                            double *mass, ScError *err);

#ifdef __cplusplus
}
#endif
