/* sc-lens-study.h — the logit lens (nostalgebraist 2020): what the model would predict if
 * it stopped after each layer (docs/metrics.md, "Logit lens").
 *
 * Definition. x_l is the residual stream entering layer l at the last position (x_0 the
 * token embedding as the model scales it; x_L after the last layer, what the output head
 * reads). Each goes through the model's own output head — the final RMSNorm with
 * output_norm and the vocabulary projection (sc_session_unembed) — giving logits_l, so the
 * entry of layer L is the model's prediction itself (to float32 rounding: the head runs on
 * the L + 1 rows at once, the forward pass on one). For a target A (the clean top-1 unless
 * named) and an optional contrast B, per l = 0 .. L: ln p_l(A), the rank of A (the number of
 * tokens with a strictly larger logit: 0 = top-1), the top-1, and m_l = logit_l(A) −
 * logit_l(B) (NaN without a contrast). No tuned lens: the final norm's statistics are those
 * of x_l itself, which for early layers of small models is far from what the head was
 * trained on; read the early layers' ranks as that.
 *
 * Storage (sc-store-study.h): kind SC_LENS_STUDY_KIND, params
 * {"study":V,"run":R,"target":A|null,"contrast":B|null}; the series "logp", "rank", "top1",
 * "m" (pos = l, 0 .. L) and the shared "clean" series of sc-study.h.
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

#define SC_LENS_STUDY_KIND "logit-lens"
/* Bumped whenever the definition above changes, so old stored studies are not reused. */
#define SC_LENS_STUDY_VERSION 1

typedef struct {
  int target;   /* A: a token id, or −1 for the clean top-1 */
  int contrast; /* B: a token id, or −1 for none */
} ScLensParams;

typedef struct {
  int n_layers, n_tokens;        /* the entries are 0 .. n_layers (n_layers + 1 of them) */
  int target, contrast, top1_clean;
  double logp_clean, loss_clean; /* the clean run's (ScStudyClean) */
  double *logp;                  /* (n_layers + 1) ln p_l(target) */
  int *rank;                     /* (n_layers + 1) */
  int *top1;                     /* (n_layers + 1) */
  double *m;                     /* (n_layers + 1) logit_l(A) − logit_l(B), NaN without B */
} ScLensResult;

/* The lens of @ids (n_tokens >= 1) on @session (bound to @model). Errors: those of
 * sc_study_check_ids, sc_forward and sc_session_unembed, SC_ERR_INVALID_ARG (the contrast
 * is the target), SC_ERR_NOMEM. */
ScStatus sc_lens_run (ScSession *session, const ScModel *model, const int32_t *ids,
                      int n_tokens, const ScLensParams *params, ScLensResult **out,
                      ScError *err);

/* An empty result (numbers NaN, ids −1); NULL when out of memory or a count is < 1. */
ScLensResult *sc_lens_result_new (int n_layers, int n_tokens);
void sc_lens_result_free (ScLensResult *r); /* NULL is a no-op */

/* The params text into @buf: its length, or −1 when @buf is too small (100 bytes suffice)
 * or a token is below −1 or the contrast is the target. */
int sc_lens_params_json (int64_t run_id, const ScLensParams *params, char *buf, size_t size);

ScStatus sc_lens_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                        const ScLensResult *r, int64_t *study_id, ScError *err);
/* SC_ERR_NOT_FOUND when there is none; SC_ERR_FORMAT when it does not fit @info (a missing
 * or repeated layer, a rank or top-1 outside the vocabulary, a target or contrast other than
 * the params name). */
ScStatus sc_lens_load (ScStore *store, const ScModelInfo *info,
                       const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                       const ScLensParams *params, ScLensResult **out, int64_t *study_id,
                       ScError *err);

/* This file's study kind (sc-study.h): `saccade study lens RUN`. */
extern const ScStudyKind sc_study_kind_lens;

#ifdef __cplusplus
}
#endif
