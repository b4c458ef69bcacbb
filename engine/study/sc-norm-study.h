/* sc-norm-study.h — norm-based attention of a run (Kobayashi et al. 2020; the arithmetic
 * and its definitions are analysis/sc-norm-attn.h's, docs/metrics.md "Norm-based
 * attention"): one clean forward pass, each layer's weights α and values v taken from the
 * observer (observe, qkv), W_O from the model's weights.
 *
 * What it keeps. For every layer l and head h, over the query rows i = 1 .. n − 1 (row 0
 * sees only token 0):
 *     weight_first[l][h] = mean_i α_h[i][0]                   the weight on the first token
 *     norm_first[l][h]   = mean_i N_h[i][0] / Σ_j N_h[i][j]   its share of the norm-based
 *                          attention (the one renormalised number: each row by its sum)
 *     vnorm_first[l][h]  = ‖f_h(x_0)‖,  vnorm_rest[l][h] = mean_{j >= 1} ‖f_h(x_j)‖
 * and per layer the same two for the whole layer: layer_weight_first[l] = mean_h
 * weight_first[l][h], layer_norm_first[l] = mean_i N[i][0] / Σ_j N[i][j] with N the layer's
 * map ‖Σ_h α_h[i][j] f_h(x_j)‖. The gap between weight_first and norm_first is the
 * attention sink seen through the norms: a head that puts most of its weight on the first
 * token but moves little through it (its value there is small).
 * For one chosen layer (params.layer; −1: the middle one, n_layers / 2) it keeps every
 * head's value norms vnorm[h][j] and, when they fit the store (sc_norm_maps_fit), the maps
 * themselves, raw (not renormalised): N_h for h = 0 .. H − 1, then the layer's N, then the
 * two maps with the residual of Kobayashi et al. 2021 (sc-norm-attn.h): R, the residual
 * after the attention block split by source token (‖t_ij‖, t_ij = A_ij + δ_ij x_i through
 * Gemma 3's post-attention norm where the layer has one), and RN, the same through the
 * FFN's RMSNorm (‖ffn_norm ∘ t_ij‖ / rms(Σ_j t_ij): what the FFN reads). Norms are frozen at
 * each row's own scale, computed in double from the pass's float residual x_i and attention
 * output. And the layer's context-mixing ratios (sc_norm_mix_ratio) of N, R and RN, whether
 * or not the maps are kept.
 *
 * Gemma 3: f_h is taken before the post-attention RMSNorm (which scales each query row's
 * sum over heads and weighs its channels: not a per-head, per-token linear map), i.e. the
 * same W_O^h v_j as for llama. Neither architecture has a value bias.
 *
 * Storage (sc-store-study.h): kind SC_NORM_STUDY_KIND, params
 * {"study":V,"run":R,"layer":L} (L resolved: never −1). Per head the metrics
 * "weight-first", "norm-first", "vnorm-first", "vnorm-rest"; the series
 * "layer-weight-first" and "layer-norm-first" (pos l), "vnorm" (pos h·n + j), "maps" (pos
 * k·T + i(i+1)/2 + j, k = 0 .. H + 2, T = n(n+1)/2: the lower triangles; absent when the
 * maps do not fit), "mix" (pos 0, 1, 2: N's, R's, RN's), "n" (pos 0: the tokens) and "top1"
 * (pos 0: the clean run's top-1).
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

#define SC_NORM_STUDY_KIND "norm-attention"
/* Bumped whenever the definition above changes, so old stored studies are not reused. */
#define SC_NORM_STUDY_VERSION 1

/* The maps kept beyond the heads': N, R, RN (map indices n_heads, n_heads + 1, + 2). */
#define SC_NORM_EXTRA_MAPS 3

typedef struct {
  int layer; /* the layer whose value norms and maps are kept; −1: n_layers / 2 */
} ScNormParams;

typedef struct {
  int n_layers, n_heads, n_tokens;
  int layer;                  /* the chosen layer (resolved) */
  int top1_clean;             /* the clean run's top-1 at the last position */
  double *weight_first;       /* (n_layers, n_heads) layer-major */
  double *norm_first;         /* (n_layers, n_heads) */
  double *vnorm_first;        /* (n_layers, n_heads) */
  double *vnorm_rest;         /* (n_layers, n_heads) */
  double *layer_weight_first; /* (n_layers) */
  double *layer_norm_first;   /* (n_layers) */
  double *vnorm;              /* (n_heads, n_tokens): the chosen layer's ‖f_h(x_j)‖ */
  double mix[3];              /* the chosen layer's context-mixing ratios of N, R, RN */
  float *maps;                /* (n_heads + 3, n_tokens, n_tokens): the chosen layer's N_h,
                               * then N, R, RN, full squares (0 above the diagonal); NULL
                               * when they do not fit the store */
} ScNormResult;

/* Whether a study of @n_tokens tokens of a model with @n_heads heads keeps its maps: their
 * lower triangles, (n_heads + 3) · n(n+1)/2 values, within the store's positions
 * (SC_STORE_MAX_TOKENS: n <= 295 for 9 heads). */
bool sc_norm_maps_fit (int n_heads, int n_tokens);

/* Norm-based attention of @ids (n_tokens >= 2) on @session (bound to @model). @progress
 * (may be NULL) is told each layer's end; false from it cancels. Errors: those of
 * sc_study_check_ids, sc_forward and sc_session_residual (the run keeps the session's
 * residuals: they are replaced), SC_ERR_INVALID_ARG (the layer outside the model),
 * SC_ERR_RANGE (n_heads · n_tokens value norms past the store's positions), SC_ERR_NOMEM,
 * SC_ERR_CANCELLED. */
ScStatus sc_norm_run (ScSession *session, const ScModel *model, const int32_t *ids,
                      int n_tokens, const ScNormParams *params, const ScStudyCtx *progress,
                      ScNormResult **out, ScError *err);

/* sc_norm_run, and every layer's map N (the layer's ‖Σ_h α_h[i][j] f_h(x_j)‖, raw) into
 * @layer_maps (n_layers, n_tokens, n_tokens) when it is not NULL: the maps the
 * faithfulness study rolls out (study/sc-faithfulness.h, "norm-rollout"). */
ScStatus sc_norm_run_layers (ScSession *session, const ScModel *model, const int32_t *ids,
                             int n_tokens, const ScNormParams *params,
                             const ScStudyCtx *progress, ScNormResult **out,
                             float *layer_maps, ScError *err);

/* An empty result (numbers NaN, maps allocated when they fit and zero); NULL when out of
 * memory or a dimension is out of range. */
ScNormResult *sc_norm_result_new (int n_layers, int n_heads, int n_tokens, int layer);
void sc_norm_result_free (ScNormResult *r); /* NULL is a no-op */

/* Map k of @r, (n, n) row-major: 0 .. n_heads − 1 head k's N_h; n_heads the layer's N;
 * n_heads + 1 R; n_heads + 2 RN. NULL without maps or k out of range. */
const float *sc_norm_result_map (const ScNormResult *r, int k);

/* The params text into @buf: its length, or −1 when @buf is too small (64 bytes suffice)
 * or the layer is below 0 (resolve −1 first). */
int sc_norm_params_json (int64_t run_id, int layer, char *buf, size_t size);

ScStatus sc_norm_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                        const ScNormResult *r, int64_t *study_id, ScError *err);
/* SC_ERR_NOT_FOUND when there is none; SC_ERR_FORMAT when it does not fit @info (a head,
 * layer or position missing or repeated, a weight outside [0, 1], a norm negative or not
 * finite, a layer other than the params name). */
ScStatus sc_norm_load (ScStore *store, const ScModelInfo *info,
                       const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                       ScNormResult **out, int64_t *study_id, ScError *err);

/* This file's study kind (sc-study.h): `saccade study norms RUN [--layer L]`. */
extern const ScStudyKind sc_study_kind_norms;

#ifdef __cplusplus
}
#endif
