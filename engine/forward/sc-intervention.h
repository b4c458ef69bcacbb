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
 *     top-attended key and renormalise;
 *   - activation patching (Vig et al. 2020; Meng et al. 2022; Wang et al. 2022): a head's
 *     output at chosen positions, its query, key or value vectors at every position, or
 *     the residual stream entering one layer at chosen positions, taken from another run
 *     of the same length (study/sc-patch-study.h).
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
  /* Patching. patch_tokens is the length the arrays below were made for and must be the
   * call's whole length n (n_past included); 0 when nothing is patched.
   *
   * Heads: head_patch holds (n_layers, n_heads, patch_tokens, head_dim) head outputs
   * before W_O (what the observer's attn_output hands over, head by head), head_patch_on
   * (n_layers, n_heads, patch_tokens) flags. Where a flag is nonzero, that head's output at
   * that position is head_scale * the patch row instead of head_scale * P V; its
   * probabilities are still computed, edited and observed, and a mean-ablated head takes
   * the patch at the flagged rows. Both NULL = no head patching; head_patch may only be
   * NULL when head_patch_on is, and must be finite where it is on.
   *
   * Residual: the residual stream entering layer resid_patch_layer (0 .. n_layers - 1) is
   * replaced, at the positions resid_patch_on ((patch_tokens) flags) marks, by the rows of
   * resid_patch ((patch_tokens, n_embd), finite where on) before the layer runs.
   * resid_patch NULL = none (resid_patch_on and resid_patch_layer are then ignored).
   *
   * Queries, keys, values: q_patch, k_patch and v_patch hold (n_layers, n_heads,
   * patch_tokens, head_dim) vectors per QUERY head, q and k after RoPE (and Gemma 3's
   * QK-norm): the rows that multiply each other in the scores; q_patch_on, k_patch_on and
   * v_patch_on are (n_layers, n_heads) flags. A flagged head's rows are recomputed by
   * edit_heads (sc-forward.c) at every query row of the call, with its own queries, keys
   * or values replaced by the patch's at every position:
   *   s_ij = attn_scale * q_i . k_j over the keys row i may see (causal, the layer's
   *   sliding window, minus masked tokens: the attention op's keys), P_i = softmax(s_i)
   *   (double), o_i = head_scale * sum_j P_ij v_j (double);
   * unpatched vectors are the base run's own. Keys and values are patched for that query
   * head ONLY: under grouped-query attention its KV head's other query heads keep the
   * base run's keys and values (patching the shared KV head would change them all).
   * The recomputed P is what the observer sees and what an attention edit of the head
   * then edits; a head patch or mean still replaces o. Each array may only be NULL when
   * its flags are, and must be finite (at every position) where a flag is on. A head
   * patched with its own run's vectors gives the same logits up to float rounding (the
   * double recomputation is not the fused op's float sums). */
  int patch_tokens;
  const float *head_patch;
  const uint8_t *head_patch_on;
  const float *resid_patch;
  const uint8_t *resid_patch_on;
  int resid_patch_layer;
  const float *q_patch;
  const uint8_t *q_patch_on;
  const float *k_patch;
  const uint8_t *k_patch_on;
  const float *v_patch;
  const uint8_t *v_patch_on;
} ScIntervention;

#ifdef __cplusplus
}
#endif
