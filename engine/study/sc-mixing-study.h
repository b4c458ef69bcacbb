/* sc-mixing-study.h — context mixing of a run, residual included, per layer and rolled
 * out (the arithmetic and its definitions are analysis/sc-mixing.h's; docs/metrics.md,
 * "Value zeroing" and "ALTI"). One kind, `mixing`, with a method:
 *
 *   value-zeroing (Mohebbi et al. 2023)  one clean forward pass keeping every layer's
 *       values and residuals; then for each layer l the layer alone is run again
 *       (sc_session_layer_output) with its values patched (ScIntervention.v_patch, every
 *       head): once with the run's own values (x_i, the reference: the same arithmetic as
 *       the variants, so a key whose values are already zero gives exactly 0), and once per
 *       key j with token j's value rows zeroed (x_i^{¬j}); VZ_l[i][j] = 1 − cos(x_i,
 *       x_i^{¬j}) on the residual leaving the layer (after its FFN), j <= i, each row
 *       normalised over j <= i. n + 1 runs of one layer per layer: about n + 1 forward
 *       passes for the whole model (docs/benchmarks.md, "Context mixing").
 *   alti (Ferrando et al. 2022)  one clean forward pass keeping every layer's weights,
 *       values and residuals; each layer's map from them (sc_alti_layer_map; Gemma 3's
 *       post-attention RMSNorm linearised at each row's scale).
 *
 * Both keep every layer's map M_l (n × n, rows summing to 1 over j <= i, or 0) and their
 * rollout R = M_{L−1} ⋯ M_0, and the context-mixing ratio of each (sc_norm_mix_ratio: the
 * mean over rows i >= 1 of the share of row i not on itself). The architectures: llama,
 * gemma3 and qwen2 (qwen2's value bias is part of the values zeroed and of f_h).
 *
 * Storage (sc-store-study.h): kind SC_MIXING_STUDY_KIND, params
 * {"study":V,"run":R,"method":"value-zeroing"|"alti"}; the series "maps" (pos
 * sc_study_tri_pos (k, n, i, j): k = 0 .. L − 1 the layers, k = L the rollout), "mix" (pos
 * k, the same k), "n" (pos 0) and "top1" (pos 0: the clean run's top-1). A study whose
 * maps do not fit the store's positions ((L + 1) · n(n+1)/2 <= SC_STORE_MAX_TOKENS: 183
 * tokens for SmolLM2's 30 layers) is refused before it runs.
 *
 * Thread safety: one study per session at a time (the session's rule). Plain C, no GLib.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "core/sc-error.h"
#include "forward/sc-forward.h"
#include "model/sc-model.h"
#include "store/sc-store-study.h"
#include "study/sc-study.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SC_MIXING_STUDY_KIND "context-mixing"
/* Bumped whenever the definitions above change, so old stored studies are not reused. */
#define SC_MIXING_STUDY_VERSION 1

typedef enum {
  SC_MIXING_VALUE_ZEROING = 0,
  SC_MIXING_ALTI = 1,
} ScMixingMethod;

/* The methods' names, in ScMixingMethod's order, NULL-terminated. */
extern const char *const sc_mixing_method_names[];

typedef struct {
  int method; /* ScMixingMethod */
} ScMixingParams;

typedef struct {
  int method, n_layers, n_tokens;
  int top1_clean;  /* the clean run's top-1 at the last position */
  float *maps;     /* (n_layers + 1, n, n): each layer's map, then the rollout; full
                    * squares, 0 above the diagonal */
  double *mix;     /* (n_layers + 1): the mixing ratio of each */
} ScMixingResult;

/* Whether (n_layers + 1) maps of @n_tokens tokens fit the store. */
bool sc_mixing_fits (int n_layers, int n_tokens);

/* The mixing maps of @ids (n_tokens >= 2) on @session (bound to @model). @progress (may be
 * NULL) is told its fraction done; false from it cancels. Errors: those of
 * sc_study_check_ids, sc_forward, sc_session_layer_output and sc_session_residual (the run
 * keeps the session's residuals: they are replaced), SC_ERR_INVALID_ARG (an unknown
 * method), SC_ERR_RANGE (the maps do not fit the store), SC_ERR_NOMEM, SC_ERR_CANCELLED. */
ScStatus sc_mixing_run (ScSession *session, const ScModel *model, const int32_t *ids,
                        int n_tokens, const ScMixingParams *params, const ScStudyCtx *progress,
                        ScMixingResult **out, ScError *err);

/* An empty result (maps 0, ratios NaN); NULL when out of memory or a dimension is out of
 * range. */
ScMixingResult *sc_mixing_result_new (int method, int n_layers, int n_tokens);
void sc_mixing_result_free (ScMixingResult *r); /* NULL is a no-op */

/* Map k of @r, (n, n) row-major: k = 0 .. n_layers − 1 layer k's, n_layers the rollout;
 * NULL out of range. */
const float *sc_mixing_result_map (const ScMixingResult *r, int k);

/* The params text into @buf: its length, or −1 when @buf is too small (80 bytes suffice)
 * or the method is unknown. */
int sc_mixing_params_json (int64_t run_id, int method, char *buf, size_t size);

ScStatus sc_mixing_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                          const ScMixingResult *r, int64_t *study_id, ScError *err);
/* SC_ERR_NOT_FOUND when there is none; SC_ERR_FORMAT when it does not fit @info (a map
 * cell missing or repeated or outside [0, 1], a row of a layer's map whose sum is neither
 * 1 nor 0, a ratio outside [0, 1], no method in the params). */
ScStatus sc_mixing_load (ScStore *store, const ScModelInfo *info,
                         const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                         ScMixingResult **out, int64_t *study_id, ScError *err);

/* This file's study kind (sc-study.h): `saccade study mixing RUN [--method M]`. */
extern const ScStudyKind sc_study_kind_mixing;

#ifdef __cplusplus
}
#endif
