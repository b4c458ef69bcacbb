/* sc-patch-study.h — activation patching: which components carry a behaviour, found by
 * moving them between a clean and a corrupted run (docs/metrics.md, "Activation patching").
 *
 * The experiment of Vig et al. (2020), Meng et al. (2022) and Wang et al. (2022), in the
 * words of Heimersheim & Nanda ("How to use and interpret activation patching", 2024):
 * two runs of the same model and the same number of tokens, a clean prompt ("When Mary and
 * John went to the store, John gave a drink to") and a corrupted one that differs where
 * the behaviour is decided ("... Mary gave a drink to"); a metric of the last position's
 * logits that tells them apart; one component's activation taken from one run into the
 * other, every component in turn.
 *
 * Metric. With a target A and a contrast B, m = logit(A) − logit(B) at the last position,
 * which is also ln p(A) − ln p(B) (the log-sum-exp cancels); without a contrast m = ln p(A).
 * A is the clean run's top-1 unless named; B, unless named, is the corrupted run's top-1,
 * and there is none when that is A (the metric is then ln p(A), and the result says so).
 *
 * Directions (the literature's names; the run that is computed is the "base"):
 *   - denoising: the corrupted run, with one component's clean activation patched in
 *     ("is this component sufficient to restore the behaviour?");
 *   - noising: the clean run, with one component's corrupted activation patched in
 *     ("is it necessary?").
 * Either way the value reported is normalised so that the clean run is 1 and the corrupted
 * 0: effect = (m_patched − m_corrupted) / (m_clean − m_corrupted). Denoising effects near 1
 * mark components that restore the clean behaviour; noising effects near 0 mark components
 * without which it is lost. The normalisation is NaN when |m_clean − m_corrupted| < 1e-6
 * (the runs do not differ on the metric: there is nothing to patch); the raw m_patched is
 * kept beside it.
 *
 * What is patched (ScPatchWhat):
 *   - heads: each head's output (before W_O) at every position — (n_layers, n_heads);
 *   - head-positions: each head's output at one position — (n_layers · n_heads, n_tokens);
 *   - residual: the residual stream entering each layer at one position — (n_layers,
 *     n_tokens);
 *   - patterns: each head's attention pattern P (every query row) taken from the source
 *     run, with the base run's own values: o = P_src V_base — (n_layers, n_heads) (an
 *     SC_ATTN_EDIT_REPLACE edit of the head with the source run's probabilities);
 *   - queries: each head's query vectors (after RoPE: the rows that multiply the keys) at
 *     every position from the source run; its scores, softmax and output recomputed with
 *     the base run's keys and values — (n_layers, n_heads);
 *   - keys, values: each query head's key (after RoPE) or value vectors at every position
 *     from the source run, for THAT query head only: under grouped-query attention the
 *     other query heads of its KV head keep the base run's keys and values (patching the
 *     KV head itself would patch n_heads / n_kv_heads heads at once) — (n_layers,
 *     n_heads). Queries, keys and values are the intervention's q/k/v patches
 *     (sc-intervention.h); the head's P and o are recomputed in double, so a head patched
 *     with its own run's vectors matches the unpatched run to float rounding, not bit for
 *     bit.
 * Each patched run is sc_forward on the base ids with an ScIntervention patch
 * (sc-intervention.h) and start_layer at the patched layer (prefix reuse: bit for bit the
 * full run). A head output or residual patched with its own run's activation changes
 * nothing, bit for bit; the residual patched at every position of a layer gives the source
 * run's logits.
 *
 * Attribution patching (Nanda 2023; Syed, Rager & Conmy 2023): the first-order estimate of
 * the same grid from one run of each prompt and one backward pass. With g_l = d m / d o_l
 * at the base run (the gradient of the metric with respect to layer l's attention output
 * before W_O, ScGradOptions.attn_output_grad) and Δ = o_source − o_base,
 *   m̂(head h of layer l, positions S) = m_base + Σ_{p in S} Σ_t Δ[l, h, p, t] g_l[p, h d + t],
 * normalised as above. Exact where m is linear in the head's output (a head writing straight
 * into the logits, or one whose effect on m is small); it misses saturation (a softmax
 * downstream already at 0 or 1) and interactions, which is why it is shown beside exact
 * patching and ranked against it rather than trusted alone. heads and head-positions only
 * (SC_ERR_INVALID_ARG for the other grids: the estimate is of a head's output); an
 * architecture with a backward pass.
 *
 * Storage (sc-store-study.h): kind SC_PATCH_STUDY_KIND (attribution patching:
 * SC_PATCH_ATTRIBUTION_KIND), params
 * {"study":V,"run":R,"corrupted":C,"target":A|null,"contrast":B|null,
 *  "direction":"denoise"|"noise","what":"heads"|"head-positions"|"residual"|"patterns"|
 *  "queries"|"keys"|"values"};
 * the series "patched" (pos = the cell's flat index, rows × columns as above, row-major:
 * m_patched), "metric" (pos 0 the contrast or −1, 1 m_clean, 2 m_corrupted, 3 the
 * corrupted run's top-1) and the shared "clean" series of sc-study.h (the clean run's
 * target, ln p, top-1, mean loss and n).
 *
 * Thread safety: one study per session at a time (the session's rule). Plain C, no GLib.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "core/sc-error.h"
#include "forward/sc-backward.h"
#include "forward/sc-forward.h"
#include "model/sc-model.h"
#include "store/sc-store-study.h"
#include "study/sc-study.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SC_PATCH_STUDY_KIND "patch"
#define SC_PATCH_ATTRIBUTION_KIND "patch-attribution"
/* Bumped whenever the definition above changes, so old stored studies are not reused. */
#define SC_PATCH_STUDY_VERSION 1

typedef enum {
  SC_PATCH_DENOISE = 0, /* clean activations into the corrupted run */
  SC_PATCH_NOISE = 1,   /* corrupted activations into the clean run */
} ScPatchDirection;

typedef enum {
  SC_PATCH_HEADS = 0,          /* (n_layers, n_heads) */
  SC_PATCH_HEAD_POSITIONS = 1, /* (n_layers · n_heads, n_tokens) */
  SC_PATCH_RESIDUAL = 2,       /* (n_layers, n_tokens) */
  SC_PATCH_PATTERNS = 3,       /* (n_layers, n_heads) */
  SC_PATCH_QUERIES = 4,        /* (n_layers, n_heads) */
  SC_PATCH_KEYS = 5,           /* (n_layers, n_heads) */
  SC_PATCH_VALUES = 6,         /* (n_layers, n_heads) */
} ScPatchWhat;

typedef struct {
  int64_t corrupted_run; /* the stored run patched against (its ids: ScStudyCtx.ids2) */
  int target;            /* A: a token id, or −1 for the clean top-1 */
  int contrast;          /* B: a token id, or −1 for the corrupted top-1 (none when = A) */
  int direction;         /* ScPatchDirection */
  int what;              /* ScPatchWhat */
} ScPatchParams;

typedef struct {
  int n_layers, n_heads, n_tokens;
  int direction, what;
  int n_rows, n_cols;            /* the grid, by `what` (above) */
  int target, contrast;          /* contrast −1: the metric is ln p(target) */
  int top1_clean, top1_corrupted;
  double logp_clean, loss_clean; /* the clean run's (ScStudyClean) */
  double metric_clean, metric_corrupted;
  double *patched;               /* (n_rows · n_cols) m of each patched run */
  bool estimated;                /* attribution patching: patched[] are first-order
                                  * estimates of m, not patched runs */
} ScPatchResult;

/* What a patching study takes from a run, head by head, through the observer: into
 * @heads, (n_layers, H, n, d) floats, the attention output before W_O
 * (sc_patch_take_attn_output, an ScObserver.attn_output), or every query head's queries,
 * keys or values (sc_patch_take_qkv, an ScObserver.qkv; @which SC_PATCH_QUERIES, _KEYS or
 * _VALUES; the keys and values of query head h are its KV head's, h / (H / Hkv)). Shared
 * by activation and path patching (sc-path-patch.c). */
typedef struct {
  float *heads;
  int H, Hkv, d, n; /* query heads, KV heads, head_dim, tokens */
  int which;        /* ScPatchWhat, for sc_patch_take_qkv */
} ScPatchTake;

bool sc_patch_take_attn_output (void *user, int layer, const float *o, int n_q, int width);
bool sc_patch_take_qkv (void *user, int layer, const float *q, const float *k, const float *v,
                        int n_q, int n_k, int q_width, int kv_width);

/* The names the params text and the command line use. */
extern const char *const sc_patch_direction_names[]; /* NULL-terminated, by ScPatchDirection */
extern const char *const sc_patch_what_names[];      /* NULL-terminated, by ScPatchWhat */

/* The metric of one last-position logit row (n_vocab floats): logit(target) −
 * logit(contrast), or ln softmax(row)[target] when contrast is −1. NaN when the row holds
 * a NaN. */
double sc_patch_metric (const float *row, int n_vocab, int target, int contrast);

/* (m − m_corrupted) / (m_clean − m_corrupted) of @r, or NaN when the two runs differ by
 * less than 1e-6 on the metric. */
double sc_patch_normalised (const ScPatchResult *r, double m);

/* The study of @clean and @corrupted (the same length n >= 2, ids in the vocabulary) on
 * @session (bound to @model); @progress after each patched run (false cancels:
 * SC_ERR_CANCELLED). Errors: SC_ERR_INVALID_ARG (different lengths, a target or contrast
 * outside the vocabulary, the contrast equal to the target, a grid of more than
 * SC_STORE_MAX_TOKENS cells), those of sc_forward, SC_ERR_NOMEM. */
ScStatus sc_patch_run (ScSession *session, const ScModel *model, const int32_t *clean,
                       const int32_t *corrupted, int n_tokens, const ScPatchParams *params,
                       ScStudyProgressFn progress, void *progress_user, ScPatchResult **out,
                       ScError *err);

/* Attribution patching of @clean and @corrupted (as sc_patch_run) on @session (bound to
 * @model) and @grad, its backward pass; @progress once per pass. Errors: as sc_patch_run,
 * SC_ERR_INVALID_ARG for @params->what SC_PATCH_RESIDUAL, those of sc_grad_forward and
 * sc_grad_backward. */
ScStatus sc_patch_attribution_run (ScSession *session, ScGrad *grad, const ScModel *model,
                                   const int32_t *clean, const int32_t *corrupted, int n_tokens,
                                   const ScPatchParams *params, ScStudyProgressFn progress,
                                   void *progress_user, ScPatchResult **out, ScError *err);

/* An empty result of the grid @what implies (numbers NaN, ids −1); NULL when out of memory
 * or a count is out of range. */
ScPatchResult *sc_patch_result_new (int n_layers, int n_heads, int n_tokens, int what);
void sc_patch_result_free (ScPatchResult *r); /* NULL is a no-op */

/* The params text of a study of run @run_id into @buf: its length, or −1 when @buf is too
 * small (200 bytes suffice) or a parameter is out of range. */
int sc_patch_params_json (int64_t run_id, const ScPatchParams *params, char *buf, size_t size);

/* Stores @r as a complete study (one transaction; nothing stays on failure). */
ScStatus sc_patch_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                         const ScPatchResult *r, int64_t *study_id, ScError *err);
/* Reads back the latest complete study with @params_json (of @params) of the model with
 * @sha256: SC_ERR_NOT_FOUND when there is none; SC_ERR_FORMAT when it does not fit @info
 * and @params (a missing or repeated cell, a value out of range, a target other than the
 * params name). */
ScStatus sc_patch_load (ScStore *store, const ScModelInfo *info,
                        const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                        const ScPatchParams *params, ScPatchResult **out, int64_t *study_id,
                        ScError *err);

/* sc_patch_store and sc_patch_load for a study stored under @kind_id (path patching,
 * sc-path-patch.h, stores its grid in the same series); @estimated marks the result read
 * back as attribution patching's. */
ScStatus sc_patch_store_kind (ScStore *store, const char *kind_id, const ScStoreModel *model,
                              const char *params_json, const ScPatchResult *r,
                              int64_t *study_id, ScError *err);
ScStatus sc_patch_load_kind (const char *kind_id, bool estimated, ScStore *store,
                             const ScModelInfo *info,
                             const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
                             const char *params_json, const ScPatchParams *params,
                             ScPatchResult **out, int64_t *study_id, ScError *err);

/* This file's study kinds (sc-study.h): `saccade study patch RUN --corrupted RUN2` and
 * `saccade study attribution-patch RUN --corrupted RUN2`. */
extern const ScStudyKind sc_study_kind_patch;
extern const ScStudyKind sc_study_kind_patch_attribution;

#ifdef __cplusplus
}
#endif
