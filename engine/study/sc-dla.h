/* sc-dla.h — direct logit attribution (docs/metrics.md, "Reference means and direct logit
 * attribution"): how much of the target token's logit each head writes directly, through
 * W_O and the final norm onto the target's unembedding — the linear part of each head's
 * effect, to set beside its ablation effect (sc-ablation-study.h).
 *
 * Definition. One clean run of ids (n >= 1 tokens, no intervention). At the last position
 * n − 1, with x_l the residual entering layer l (x_0 = the token embedding, x_L the final
 * residual before the output norm), g the output-norm weight, W_U the unembedding (the
 * output matrix, the token embedding when tied) and t the target:
 *     rms   = sqrt (mean_e x_L[e]² + eps)              frozen at the clean run
 *     u[e]  = W_U[t][e] · g[e] / rms                    the target's read-out direction
 *     logit = u · x_L                                   (= the model's logit of t)
 *     dla[l][h] = u · (W_O,l[:, block h] · o_l,h)       o_l,h = head h's attention output
 *     embed     = u · x_0
 *     mlp[l]    = u · (x_{l+1} − x_l) − Σ_h dla[l][h]    the rest of layer l's update
 * The norm's scale 1/rms is the clean run's and is held fixed (as is usual for DLA): the
 * decomposition is then exact, embed + Σ_l,h dla + Σ_l mlp = u · x_L, the target's logit,
 * up to float rounding of the forward pass's own sums (each term is computed here in
 * double from the float activations). It is not what removing a head does: that also
 * changes the norm's scale and every later layer (the ablation studies measure that).
 * The target is the clean run's top-1 unless the caller names one.
 *
 * Contrast. With a second token B, u[e] = (W_U[t][e] − W_U[B][e]) · g[e] / rms and every
 * term above decomposes logit(t) − logit(B) (= ln p(t) − ln p(B)) instead: the indirect-
 * object metric of Wang et al. 2022 written into embedding, heads and MLPs, still exact.
 *
 * Storage (sc-store-study.h): kind SC_DLA_KIND, params from sc_dla_params_json():
 * {"study":V,"run":R,"target":T|null} or, with a contrast, {"study":V,"run":R,"target":
 * T|null,"contrast":B} (the text without one is what it was before contrasts existed). Per
 * head metric "dla"; series "mlp" (pos l), "embed" (pos 0), "clean": pos 0 the target, 1
 * the clean logit (difference) as the forward pass computed it, 2 the clean top-1, 3 rms,
 * 4 n, 5 u · x_L, and 6 the contrast when there is one.
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

#define SC_DLA_KIND "dla"
/* Bumped whenever the definition above changes, so old stored studies are not reused. */
#define SC_DLA_STUDY_VERSION 1

typedef struct {
  int n_layers, n_heads, n_tokens;
  int target, top1_clean;
  int contrast;       /* −1: none */
  double logit_clean; /* the target's logit at n − 1 as sc_forward computed it (float), or
                       * with a contrast the difference of the two */
  double logit_recon; /* u · x_L in double: what the terms below add up to */
  double rms;         /* of the clean final residual at n − 1, eps included */
  double embed;       /* u · x_0 */
  double *heads;      /* (n_layers * n_heads), layer-major: dla[l][h] */
  double *mlp;        /* (n_layers) */
} ScDlaResult;

/* Direct logit attribution of @ids (n_tokens >= 1) on @session (bound to @model) for
 * @target (a token id, or −1: the clean top-1), against @contrast (a token id other than
 * the target, or −1: none). On success *@out is the caller's (sc_dla_result_free). The
 * session's kept residuals are replaced by this run's. Errors: SC_ERR_INVALID_ARG (NULL
 * arguments, no tokens, an id, the target or the contrast out of the vocabulary, the
 * contrast equal to the target), those of sc_forward(), SC_ERR_NOMEM. */
ScStatus sc_dla_run (ScSession *session, const ScModel *model, const int32_t *ids, int n_tokens,
                     int target, int contrast, ScDlaResult **out, ScError *err);

/* Empty result (every number NaN, ids −1), for a reader; NULL when out of memory or a
 * dimension < 1. */
ScDlaResult *sc_dla_result_new (int n_layers, int n_heads, int n_tokens);
void sc_dla_result_free (ScDlaResult *r); /* NULL is a no-op */

/* The canonical params text (above) into @buf; the length, or −1 when @buf is too small
 * (96 bytes always suffice). */
int sc_dla_params_json (int64_t run_id, int target, int contrast, char *buf, size_t size);

/* Stores @r as a complete study of @model, in one transaction. Errors: sc-store-study.h's. */
ScStatus sc_dla_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                       const ScDlaResult *r, int64_t *study_id, ScError *err);

/* Reads back the latest complete study with @params_json of the model with @sha256:
 * SC_ERR_NOT_FOUND when there is none; SC_ERR_FORMAT (naming what) when its shape does not
 * fit @info, a head or layer value is missing or not finite, or the clean series is out of
 * range. */
ScStatus sc_dla_load (ScStore *store, const ScModelInfo *info,
                      const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                      ScDlaResult **out, int64_t *study_id, ScError *err);

/* The study's params: the token measured, or −1: the clean top-1; the contrast, or −1. */
typedef struct {
  int target;
  int contrast;
} ScDlaParams;

/* This file's study kind (sc-study.h), params ScDlaParams: `saccade dla RUN`. */
extern const ScStudyKind sc_study_kind_dla;

#ifdef __cplusplus
}
#endif
