/* sc-ablation-first.h — the head sweep with an attribution first pass (docs/metrics.md,
 * "Head sweep with a first pass"): every head's ablation effect estimated to first order
 * from one taped clean run and one backward pass (attribution patching, Nanda 2023, with
 * the ablation as the "corrupted" activation), the heads ranked by it, and only the top K
 * ablated exactly.
 *
 * The estimate. With m the sweep's metric at the last position n − 1 — ln p(target), or
 * logit(target) − logit(B) with a contrast B — and g_l = ∂m/∂o_l at the clean run (the
 * gradient with respect to layer l's attention output before W_O, ScGradOptions.
 * attn_output_grad), the change ablating head h of layer l makes is estimated as
 *   Δ̂m(l, h) = Σ_p Σ_t g_l[p, h·d + t] · (a[p, t] − o[l, h, p, t])
 * where a = 0 for zero-ablation and a[p, t] = mean[l, h, t] (the reference means) for
 * mean-ablation: the ablation replaces the head's output at every position by a. The
 * heads are ranked by |Δ̂m| (ties by index), and the top K (min (K, n_layers × n_heads))
 * are ablated exactly by sc_head_sweep_run_heads, so each exact effect is the whole
 * sweep's bit for bit (same params). The exact sweep's metric is Δ log p (or Δ logit
 * difference with a contrast); ρ is Spearman's between Δ̂m and it over the heads measured
 * exactly (NaN with fewer than 3, or where either side is constant).
 *
 * Needs the backward pass (sc-backward.h): an architecture without one is refused by
 * sc_grad_new (the study kinds below need SC_STUDY_NEEDS_BACKWARD).
 *
 * Storage: kind SC_ABLATION_FIRST_KIND, the params text of the head sweep
 * (sc_ablation_params_json, SC_ABLATION_KIND_HEADS) with ,"first-pass":"gradient","top":K
 * before its closing brace; per head metric "estimate" (every head), the head sweep's
 * effect metrics (and "delta-logit-diff" with a contrast) for the heads measured exactly
 * only; series "first-pass" pos 0 the number measured exactly, 1 the first pass's seconds,
 * 2 the exact ablations' seconds; "clean" as the head sweep's. ρ is recomputed on load (the
 * same numbers give the same ρ).
 *
 * Thread safety: one study per session at a time. Plain C, no GLib.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "study/sc-ablation-study.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SC_ABLATION_FIRST_KIND "ablate-heads-first"
/* The most heads measured exactly: any K above the model's head count means every head. */
#define SC_ABLATION_FIRST_MAX_TOP 100000

typedef struct {
  ScAblationParams ablation; /* as the head sweep's (target, contrast, mode, means, last_only) */
  int top;                   /* K >= 1: how many heads are ablated exactly */
} ScAblationFirstParams;

typedef struct {
  /* the exact effects of the heads measured exactly; the others' entries are NaN */
  ScHeadSweepResult *sweep;
  double *estimate;  /* (n_layers × n_heads) Δ̂m, layer-major */
  bool *exact;       /* (n_layers × n_heads): measured exactly */
  int n_exact;       /* min (top, n_layers × n_heads) */
  double rho;        /* Spearman ρ of estimate and exact over the exact heads; NaN: undefined */
  double first_s;    /* seconds: the taped run and the backward */
  double exact_s;    /* seconds: the clean run and the exact ablations */
} ScHeadFirstResult;

/* The exact measure the estimate is of, for head @i of @r's sweep: Δ logit difference with a
 * contrast, else Δ log p. */
double sc_head_first_exact (const ScHeadFirstResult *r, int i);

/* The study of @ids (n_tokens >= 1) on @session and @grad (bound to it). Errors: those of
 * sc_head_sweep_run, SC_ERR_INVALID_ARG for top < 1 or above SC_ABLATION_FIRST_MAX_TOP,
 * those of sc_grad_forward and sc_grad_backward, SC_ERR_CANCELLED, SC_ERR_NOMEM. */
ScStatus sc_head_first_run (ScSession *session, ScGrad *grad, const ScModel *model,
                            const int32_t *ids, int n_tokens, const ScAblationFirstParams *params,
                            ScStudyProgressFn progress, void *progress_user,
                            ScHeadFirstResult **out, ScError *err);

void sc_head_first_result_free (ScHeadFirstResult *r); /* NULL is a no-op */

/* The params text (header) into @buf: its length, or −1 when @buf is too small (200 bytes
 * suffice) or a parameter is out of range. */
int sc_head_first_params_json (int64_t run_id, const ScAblationFirstParams *params, char *buf,
                               size_t size);

ScStatus sc_head_first_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                              const ScHeadFirstResult *r, int64_t *study_id, ScError *err);
/* SC_ERR_NOT_FOUND when there is none; SC_ERR_FORMAT when the study does not fit @info (a
 * head without its estimate, a head measured in part, more or fewer heads measured than the
 * "first-pass" series says). */
ScStatus sc_head_first_load (ScStore *store, const ScModelInfo *info,
                             const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                             ScHeadFirstResult **out, int64_t *study_id, ScError *err);

/* `saccade ablate RUN --heads --first-pass --top K` (heads-first) and with --mean
 * (heads-first-mean: the means of ScStudyCtx.means_set). Params ScAblationFirstParams. */
extern const ScStudyKind sc_study_kind_heads_first;
extern const ScStudyKind sc_study_kind_heads_first_mean;

#ifdef __cplusplus
}
#endif
