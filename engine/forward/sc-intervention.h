/* sc-intervention.h — what an experiment changes inside a forward pass.
 *
 * One mechanism serves every ablation study (DESIGN.md, "ScIntervention"):
 *   - per-head output scale: 1 keeps a head, 0 zero-ablates it (Michel 2019), any other
 *     value scales its contribution before the output projection;
 *   - mean-ablation: replace a head's output by a stored mean vector (ablation issue);
 *   - token masking: masked keys are removed from every attention row, which is then
 *     renormalised (Jain & Wallace leave-one-out without changing positions); dropping
 *     tokens from the input is done by the caller, on the id list;
 *   - attention edits on chosen heads: permute each row (seeded), uniform, zero the
 *     top-attended key and renormalise (ablation issue).
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

typedef enum {
  SC_ATTN_EDIT_NONE = 0,
  SC_ATTN_EDIT_PERMUTE,  /* random permutation of each row's weights over its keys (seeded) */
  SC_ATTN_EDIT_UNIFORM,  /* every allowed key gets 1/(i+1) */
  SC_ATTN_EDIT_ZERO_TOP, /* zero the top-attended key, renormalise (Serrano & Smith 2019) */
} ScAttnEditKind;

typedef struct {
  int layer;
  int head;
  ScAttnEditKind kind;
  uint64_t seed;
} ScAttnEdit;

typedef struct {
  /* (n_layers, n_heads) multipliers of each head's output; NULL = all 1. */
  const float *head_scale;
  /* (n_layers, n_heads, head_dim) replacement outputs for heads with head_mean_on set;
   * both NULL = no mean-ablation. */
  const float *head_mean;
  const uint8_t *head_mean_on;
  /* (n_tokens) nonzero = masked out of every attention row in every layer; NULL = none. */
  const uint8_t *token_mask;
  /* Attention edits, applied after the softmax. */
  const ScAttnEdit *edits;
  int n_edits;
} ScIntervention;

#ifdef __cplusplus
}
#endif
