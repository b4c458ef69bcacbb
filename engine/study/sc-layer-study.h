/* sc-layer-study.h — the layer sweep: how much the model's output changes when one layer's
 * whole attention block is taken away, every layer in turn (docs/metrics.md, "Layer
 * sweep"). The coarse map before the head sweep: which layers' attention the prediction
 * rests on at all.
 *
 * Definition. For each layer l = 0 .. L − 1, every query head of layer l is zero-ablated at
 * once (ScIntervention.head_scale 0 for (l, h), h = 0 .. H − 1): the attention sublayer adds
 * nothing to the residual at any position (W_O · 0; the architectures here have no output
 * bias), the layer's FFN still runs. Measured against the clean run of the same ids with
 * sc-ablation-study.h's definitions: the next-token effect at n − 1 on the target (the
 * clean top-1 unless named), Δ mean loss over q = 1 .. n − 1, the flip. Prefix reuse as the
 * head sweep: layer l's ablation recomputes layers >= l only, bit for bit the full run.
 * The sum of the L effects is not the effect of removing all attention: layers interact.
 * With a contrast B each effect also holds Δ (logit(target) − logit(B)) at n − 1
 * (ScAblationEffect.delta_logit_diff), as the head sweep's.
 *
 * Storage (sc-store-study.h): kind SC_LAYER_STUDY_KIND, params
 * {"study":V,"run":R,"target":T|null} (with a contrast ,"contrast":B after the target); per
 * layer the effect metrics of sc-study.h as series (series = metric, pos = layer), with a
 * contrast the series "delta-logit-diff" too, and the "clean" series (with a contrast its
 * pos 5 B and pos 6 the clean logit difference: sc_study_add_contrast).
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

#define SC_LAYER_STUDY_KIND "ablate-layers"
/* Bumped whenever the definition above changes, so old stored studies are not reused. */
#define SC_LAYER_STUDY_VERSION 1

typedef struct {
  int target;   /* token id to measure, or −1: the clean top-1 */
  int contrast; /* a second token B, or −1: none (set it: 0 is a token) */
} ScLayerSweepParams;

typedef struct {
  int n_layers, n_tokens;
  int target, top1_clean;
  double logp_clean, loss_clean;  /* as ScHeadSweepResult */
  int contrast;                   /* −1: none */
  double logit_diff_clean;        /* logit(target) − logit(contrast) at n − 1; NaN without */
  ScAblationEffect *layers;       /* (n_layers) */
} ScLayerSweepResult;

/* The sweep of @ids (n_tokens >= 1) on @session (bound to @model); @progress after each
 * layer (false cancels: SC_ERR_CANCELLED). Errors: those of sc_study_check_ids, sc_forward
 * and sc-effect.h, SC_ERR_NOMEM. */
ScStatus sc_layer_sweep_run (ScSession *session, const ScModel *model, const int32_t *ids,
                             int n_tokens, const ScLayerSweepParams *params,
                             ScStudyProgressFn progress, void *progress_user,
                             ScLayerSweepResult **out, ScError *err);

/* An empty result (numbers NaN, top-1s −1), for readers; NULL when out of memory or a count
 * is < 1. */
ScLayerSweepResult *sc_layer_sweep_result_new (int n_layers, int n_tokens);
void sc_layer_sweep_result_free (ScLayerSweepResult *r); /* NULL is a no-op */

/* The params text into @buf: its length, or −1 when @buf is too small (80 bytes suffice) or
 * the target is below −1. */
int sc_layer_sweep_params_json (int64_t run_id, const ScLayerSweepParams *params, char *buf,
                                size_t size);
/* Stores @r as a complete study (one transaction; nothing stays on failure). */
ScStatus sc_layer_sweep_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                               const ScLayerSweepResult *r, int64_t *study_id, ScError *err);
/* Reads back the latest complete study with @params_json of the model with @sha256:
 * SC_ERR_NOT_FOUND when there is none; SC_ERR_FORMAT when it does not fit @info (its layer
 * count, a layer index, a value out of range). */
ScStatus sc_layer_sweep_load (ScStore *store, const ScModelInfo *info,
                              const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
                              const char *params_json, ScLayerSweepResult **out,
                              int64_t *study_id, ScError *err);

/* This file's study kind (sc-study.h): `saccade study layers RUN`. */
extern const ScStudyKind sc_study_kind_layers;

#ifdef __cplusplus
}
#endif
