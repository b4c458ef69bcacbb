/* sc-intervention.h — what an experiment changes inside a forward pass.
 *
 * One mechanism serves every ablation study (DESIGN.md, "ScIntervention"):
 *   - per-head output scale: 1 keeps a head, 0 zero-ablates it (Michel 2019), any other
 *     value scales its contribution before the output projection;
 *   - mean-ablation: replace a head's output by a given mean vector;
 *   - token masking: masked keys are removed from every attention row, which is then
 *     renormalised (Jain & Wallace leave-one-out without changing positions); dropping
 *     tokens from the input is done by the caller, on the id list;
 *   - attention edits on chosen heads: permute each row (seeded), uniform, zero the
 *     top-attended key and renormalise.
 * sc_forward() checks every field against the model (SC_ERR_INVALID_ARG naming it).
 * An all-default intervention (or NULL) reproduces the plain forward pass bit for bit.
 *
 * The struct is plain data owned by the caller and borrowed by sc_forward() for the call.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An attention edit rewrites the probabilities of one (layer, head) after the softmax, in
 * every query row, over the keys that row may see: keys j <= p for the query at position p
 * (causal), minus the masked tokens (a row whose keys are all masked has its own position
 * alone, as in the attention op). Every other entry stays exactly 0. The observer sees the
 * edited probabilities, and they are what multiplies V (sc-forward.c, edit_heads). */
typedef enum {
  SC_ATTN_EDIT_NONE = 0, /* no edit (an entry that is ignored) */
  /* A random permutation of each row's weights over its allowed keys (Jain & Wallace
   * 2019, section 4): Fisher-Yates driven by SplitMix64 seeded from (seed, layer, head,
   * the query's position) (sc-forward.c, permute_stream): reproducible, the same for any
   * number of threads, and with n_past the same as in a full run. */
  SC_ATTN_EDIT_PERMUTE,
  /* Every allowed key gets 1/m, m = the number of allowed keys: 1/(p + 1), exactly
   * 1.0f / (p + 1), for an unmasked causal row at position p. */
  SC_ATTN_EDIT_UNIFORM,
  /* The top-attended allowed key (ties: the lowest index) is set to 0 and the other
   * allowed keys are renormalised to sum to 1 (Serrano & Smith 2019). A row with a single
   * allowed key stays as it is (there is nothing to move its weight to); if every other
   * weight is exactly 0 (underflow), they share the row equally. */
  SC_ATTN_EDIT_ZERO_TOP,
  /* The row's weights over its allowed keys are taken from @probs (the edit's matrix,
   * (n_q, n_k) row-major for the call's query rows and keys); entries outside the allowed
   * keys are ignored and stay 0. The caller makes each row a distribution over its allowed
   * keys. The backward pass treats such a head as detached: its P does not depend on its
   * queries and keys (adversarial attention, study/sc-adversarial.h, sets P this way). */
  SC_ATTN_EDIT_REPLACE,
} ScAttnEditKind;

typedef struct {
  int layer;           /* 0 .. n_layers - 1 */
  int head;            /* query head, 0 .. n_heads - 1; at most one edit per (layer, head) */
  ScAttnEditKind kind;
  uint64_t seed;       /* PERMUTE only */
  const float *probs;  /* REPLACE only: (n_q, n_k) host, borrowed for the call */
} ScAttnEdit;

typedef struct {
  /* (n_layers, n_heads) finite multipliers of each head's output; NULL = all 1. */
  const float *head_scale;
  /* (n_layers, n_heads, head_dim) replacement outputs for heads with head_mean_on
   * (n_layers, n_heads) nonzero: such a head outputs head_scale * its mean vector at
   * every query row instead of head_scale * P V, before W_O (its probabilities are still
   * computed, edited if it has an edit, and observed). Both NULL = no mean-ablation;
   * head_mean may only be NULL when head_mean_on is, and must be finite where it is on. */
  const float *head_mean;
  const uint8_t *head_mean_on;
  /* (n_tokens) nonzero = masked out of every attention row in every layer; NULL = none. */
  const uint8_t *token_mask;
  /* (n_edits >= 0) attention edits, applied after the softmax (above); NULL when 0. */
  const ScAttnEdit *edits;
  int n_edits;
} ScIntervention;

#ifdef __cplusplus
}
#endif
