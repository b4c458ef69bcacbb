/* sc-faithfulness.h — is attention faithful? Attention-based token importance set against
 * leave-one-out importance for one sentence, the same over a file of sentences in the shape
 * of Jain & Wallace 2019, Table 2, and each head's ablation effect against its statistics
 * (DESIGN.md, "Analyses", "Attention vs ablation"; docs/metrics.md, "Faithfulness").
 *
 * One sentence: ids of n >= SC_FAITH_MIN_TOKENS tokens. The items compared are the tokens
 * j = 0 .. n − 2 (n − 1 items); the last token n − 1 is the query whose next token is
 * measured and is never erased. Below 3 tokens there would be at most one item and no rank
 * statistic: SC_ERR_INVALID_ARG. The study runs
 *   1. one clean forward pass with an observer that keeps, per head, only the last query's
 *      row (L × H × n floats) and its head statistics (sc-head-stats.h, on the whole
 *      matrix), and per layer the head-mean matrix mean_h A_l,h (L × n × n, for rollout and
 *      flow) — never all L × H × n² probabilities;
 *   2. token leave-one-out by sc_token_loo_run() of the chosen kind only (sc-ablation-study.h,
 *      loo_kinds: n − 1 passes), or a result the caller already has for the same ids;
 *   3. the importances and their agreement (below).
 *
 * Leave-one-out importance of item j (the reference ranking): for the chosen erasure kind
 * (mask: default; drop) and metric
 *   tv              TV (p, q_j) of the next-token distribution at the last position (default;
 *                   J&W measured the TVD of the output distribution),
 *   jsd             JSD (p, q_j) in nats,
 *   abs-delta-logp  |Δ log p (target)|, target = the clean top-1 (or the caller's).
 * The patching reference (kind trace, "against patching"): causal tracing (sc-trace.h,
 * Meng et al. 2022) in place of leave-one-out: every item's embedding noised (ν = 3 σ,
 * SC_TRACE_DEFAULT_SAMPLES samples, seed SC_TRACE_DEFAULT_SEED), item j's importance the
 * largest over layers l of the metric's |mean effect| of restoring j's clean residual
 * entering layer l, measured against the noised run (TV, JSD, |Δ log p|, |Δ logit diff|).
 * Erasing one token asks what the answer loses without it; tracing asks how much of the
 * answer the token's own state carries when the rest of the input is unreadable. Costs
 * samples × L (n − 1) restored runs of L − l layers each (about L/2 times leave-one-out's
 * n − 1 passes per sample); no leave-one-out result is run, taken or returned.
 * Attention importance of item j, per source:
 *   last-mean  mean over the last layer's heads of A_{L−1,h}[n − 1][j];
 *   rollout    R[n − 1][j], R = Â_L ··· Â_1, Â_l = ½ mean_h A_l,h + ½ I (sc-rollout.h);
 *   flow       the maximum flow from input j to output n − 1 (sc-rollout.h); unavailable,
 *              with the reason, when the graph is over SC_FLOW_MAX_WORK / _NODES;
 *   head l.h   A_{l,h}[n − 1][j] (L × H sources).
 * Gradient importance of item j (with params.gradients; study/sc-attribution.h, objective
 * log p(target) at the last token, the same target as leave-one-out):
 *   saliency      ||d f / d x_j||;   gradxinput |x_j . d f / d x_j|;
 *   ig            |integrated gradients_j| (params.ig_steps points, adaptive rule, the
 *                 end-of-text token as the baseline, or zero embeddings without one);
 *   grad-rollout  Chefer et al. 2021's gradient-weighted rollout row of the last token.
 * Signed scores enter as magnitudes: leave-one-out importance is a magnitude too, and J&W
 * compare |gradient| rankings with attention. Without params.gradients these sources are
 * unavailable (SC_ERR_UNSUPPORTED, "not asked").
 * Context-mixing importance of item j (with params.mixing; docs/metrics.md, "Norm-based
 * attention", "Value zeroing", "ALTI"), each the last query's row n − 1 of a map the
 * `norms` and `mixing` studies compute (study/sc-norm-study.h, sc-mixing-study.h, called
 * here, not copied):
 *   norm          N_{L−1}[n − 1][j] = ‖Σ_h α_h f_h(x_j)‖ of the last layer, raw;
 *   norm-rollout  R[n − 1][j], R = N̂'_{L−1} ··· N̂'_0, N̂'_l = ½ N̂_l + ½ I with N̂_l layer
 *                 l's norm map, each row divided by its sum over j <= i (attention
 *                 rollout with the norms in place of the head-mean weights);
 *   vz, alti      the last layer's value-zeroing and ALTI maps;
 *   vz-rollout, alti-rollout  their rollouts (no identity added: the maps hold the
 *                 residual). Value zeroing costs about n + 1 forward passes, ALTI and the
 *                 norms one each. A source whose maps do not fit the store is unavailable
 *                 (SC_ERR_RANGE, with the reason). Without params.mixing: "not asked".
 * Contrast (params.contrastive, contrast B): leave-one-out importance is |Δ (logit(target)
 * − logit(B))| at the last position (sc_token_loo_run's delta_logit_diff; the metric must
 * be SC_FAITH_METRIC_ABS_DELTA_LOGIT_DIFF, which needs a contrast) and the gradient
 * sources differentiate logit(target) − logit(B) (SC_OBJECTIVE_LOGIT_DIFF).
 * Attention against gradients (J&W Table 2's τ_g column): the agreement of the last-layer
 * mean attention with saliency, in the same statistics, as attn_vs_grad.
 * Agreement of a source with leave-one-out over the n − 1 items (sc-rank.h): Kendall τ-b
 * and its two-sided p-value (exact without ties up to SC_KENDALL_EXACT_MAX_N, else normal),
 * Spearman ρ and its p (Student's t; NaN with fewer than 4 tokens), and the top-k overlap
 * |top_k (attention) ∩ top_k (LOO)| / k with k = params.top_k, or SC_FAITH_DEFAULT_TOP_K
 * when <= 0, clamped to n − 1. An agreement is undefined (NaN, with status and reason) when
 * a vector is constant (e.g. every erasure left the output unchanged) or the source is
 * unavailable.
 *
 * Over sentences (sc_faith_summarize): per source, over the sentences whose τ is defined,
 * mean and standard deviation of τ (ddof = 1, the sample standard deviation; NaN with fewer
 * than two), the share with p(τ) < SC_FAITH_ALPHA, mean ρ and mean top-k overlap; the count
 * of sentences with an undefined τ is given apart, never folded into the share. For the
 * heads: every head's mean τ (the map), the best head (highest mean τ; ties: lowest index)
 * and the median head (the lower median of the heads with a defined mean, ordered by mean τ
 * then index).
 *
 * Head level (sc_faith_head_level, sc_faith_head_corr): over the L × H heads, Spearman ρ
 * (and p) between each head's ablation effect from a head sweep (sc_head_sweep_run or
 * _load: Δ log p and TV) and a per-head vector — its entropy, confidence, sink mass and
 * previous-token score from the clean run above, or any vector the caller names (direct
 * logit attribution comes from elsewhere). Heads with a NaN on either side are left out.
 *
 * Without the first token: every agreement above is computed twice, over all n − 1 items and
 * over items 1 .. n − 2 (the first token left out of both vectors; top-k clamped to n − 2;
 * undefined below 4 tokens), so that the attention sink's part in a result is always in
 * view: agree / agree_nf, heads / heads_nf. params.exclude_first chooses which of the two a
 * result reports (its best head, its statistics, its reading, a file's Table 2); since both
 * are computed and stored, the choice is not part of the params text (a study stored with
 * either serves both). Statistics, intervals, null baselines and the plain reading:
 * sc_faith_sentence_stats and sc_faith_summarize_with (below; docs/metrics.md,
 * "Statistics: corrections, intervals, null baselines").
 *
 * Storage (sc-store-study.h): kind SC_FAITH_KIND with params from sc_faith_params_json();
 * series "loo" and "attn.<source>" (pos = item j), "agree.<source>" and "agree.attn-vs-grad"
 * (pos 0 τ, 1 p(τ), 2 ρ, 3 p(ρ), 4 top-k overlap, 5 status), "ig.gap" (pos 0), "clean" (0 target, 1 clean top-1, 2 n, 3 k);
 * per head metrics "tau", "tau-p", "rho", "rho-p", "topk", "status", "entropy",
 * "confidence", "sink", "previous-token", and without the first token "tau-nf", "tau-p-nf",
 * "rho-nf", "rho-p-nf", "topk-nf", "status-nf" (a study stored before these has none: its
 * heads_nf read back undefined, SC_ERR_NOT_FOUND; the sources' agree_nf are recomputed from
 * the stored vectors on reading, the same numbers as when computed). The last-query rows of every head are not stored
 * (a loaded result has head_rows NULL). sc_faith_load() checks every value.
 *
 * Progress and cancel as sc-ablation-study.h: @progress (may be NULL) gets the fraction done
 * after each erased run (the erasures span 0 .. 0.95) and 1 at the end; false stops with
 * SC_ERR_CANCELLED and no result.
 * Deterministic. Thread safety: one study per session at a time. Plain C, no GLib.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "analysis/sc-head-stats.h"
#include "analysis/sc-rank.h"
#include "analysis/sc-stats.h"
#include "core/sc-error.h"
#include "forward/sc-forward.h"
#include "model/sc-model.h"
#include "store/sc-store-study.h"
#include "study/sc-ablation-study.h"
#include "study/sc-study.h"
#include "study/sc-trace.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SC_FAITH_KIND "faithfulness"
/* Bumped whenever a definition above changes, so old stored studies are not reused. */
#define SC_FAITH_STUDY_VERSION 2
/* Two items (tokens 0 and 1) and the query: the fewest for which τ can be defined. */
#define SC_FAITH_MIN_TOKENS 3
/* k of the top-k overlap when none is asked: J&W-sized sentences have tens of tokens, and
 * three is the handful a reader looks at first. */
#define SC_FAITH_DEFAULT_TOP_K 3
/* The significance level of "the share of sentences with p < 0.05" (J&W Table 2). */
#define SC_FAITH_ALPHA 0.05

typedef enum {
  SC_FAITH_METRIC_TV = 0,
  SC_FAITH_METRIC_JSD,
  SC_FAITH_METRIC_ABS_DELTA_LOGP,
  SC_FAITH_METRIC_ABS_DELTA_LOGIT_DIFF, /* with a contrast only, and always with one */
  SC_FAITH_N_METRICS
} ScFaithMetric;

typedef enum {
  SC_FAITH_ERASE_MASK = 0,
  SC_FAITH_ERASE_DROP,
  SC_FAITH_ERASE_TRACE, /* not an erasure: causal tracing (sc-trace.h), the patching reference */
  SC_FAITH_N_ERASE
} ScFaithErase;

/* The token-level sources other than the heads, in the order tables show them. */
typedef enum {
  SC_FAITH_SOURCE_LAST_MEAN = 0,
  SC_FAITH_SOURCE_ROLLOUT,
  SC_FAITH_SOURCE_FLOW,
  SC_FAITH_SOURCE_SALIENCY,     /* the gradient sources: params.gradients */
  SC_FAITH_SOURCE_GRADXINPUT,
  SC_FAITH_SOURCE_IG,
  SC_FAITH_SOURCE_GRAD_ROLLOUT,
  SC_FAITH_SOURCE_NORM,         /* the context-mixing sources: params.mixing */
  SC_FAITH_SOURCE_NORM_ROLLOUT,
  SC_FAITH_SOURCE_VZ,
  SC_FAITH_SOURCE_VZ_ROLLOUT,
  SC_FAITH_SOURCE_ALTI,
  SC_FAITH_SOURCE_ALTI_ROLLOUT,
  SC_FAITH_N_SOURCES
} ScFaithSource;

/* The first gradient source: sources below it are attention weights (values in [0, 1]),
 * the ones from it on are asked for (params.gradients, params.mixing) and "not asked"
 * (SC_ERR_UNSUPPORTED) otherwise. */
#define SC_FAITH_FIRST_GRADIENT_SOURCE SC_FAITH_SOURCE_SALIENCY
/* The first context-mixing source (the gradient sources end before it). */
#define SC_FAITH_FIRST_MIXING_SOURCE SC_FAITH_SOURCE_NORM

/* Stable identifiers ("tv", "jsd", "abs-delta-logp", "abs-delta-logit-diff"; "mask",
 * "drop", "trace"; "last-mean", "rollout", "flow", "saliency", "gradxinput", "ig",
 * "grad-rollout", "norm", "norm-rollout", "vz", "vz-rollout", "alti", "alti-rollout"), used in params, the
 * store, JSON and CSV. NULL out of range. */
const char *sc_faith_metric_id (ScFaithMetric m);
/* What a reading calls the reference ranking of @k: "leave-one-out" (mask, drop) or
 * "causal tracing" (trace). */
const char *sc_faith_reference_name (ScFaithErase k);
const char *sc_faith_erase_id (ScFaithErase k);
const char *sc_faith_source_id (ScFaithSource s);
bool sc_faith_metric_from_id (const char *id, ScFaithMetric *out);
bool sc_faith_erase_from_id (const char *id, ScFaithErase *out);

typedef struct {
  ScFaithMetric metric;
  ScFaithErase kind;
  int top_k;   /* <= 0: SC_FAITH_DEFAULT_TOP_K; clamped to n − 1 */
  int target;  /* token id to measure, or -1: the clean top-1 */
  bool gradients; /* compute the gradient sources too */
  int ig_steps;   /* integrated gradients' points; <= 0: SC_ATTR_DEFAULT_STEPS */
  bool exclude_first; /* report the agreements without the first token (not in the params
                       * text: both are always computed and stored) */
  bool mixing;        /* compute the context-mixing sources too (norm, value zeroing, ALTI) */
  bool contrastive;   /* measure logit(target) − logit(contrast) (metric
                       * SC_FAITH_METRIC_ABS_DELTA_LOGIT_DIFF, gradients of the difference) */
  int contrast;       /* with contrastive: the token B, in the vocabulary, not the target */
} ScFaithParams;

/* One source's agreement with leave-one-out. */
typedef struct {
  ScStatus status;   /* SC_OK; SC_ERR_RANGE (a constant vector, flow over its ceiling),
                      * SC_ERR_UNSUPPORTED (flow without igraph): then every number is NaN */
  double tau, tau_p; /* Kendall τ-b and its two-sided p */
  double rho, rho_p; /* Spearman ρ and its p (NaN for fewer than 3 items) */
  double topk;       /* top-k overlap, in [0, 1] */
  char reason[160];  /* why undefined (empty when status == SC_OK) */
} ScFaithAgreement;

/* Where a study's time went (seconds). forward_s counts the clean pass (less the observer's
 * own time) and the whole of sc_token_loo_run, whose effect arithmetic (a log-softmax over
 * the vocabulary per position and variant) is inside its clock; everything else — the
 * observer, rollout, flow, the rank statistics — is total − forward. */
typedef struct {
  double total_s, forward_s, observer_s, flow_s;
} ScFaithTiming;

typedef struct {
  int n_tokens, n_items;      /* n and n − 1 */
  int n_layers, n_heads;
  int top_k;                  /* the k used */
  ScFaithMetric metric;
  ScFaithErase kind;
  int target, top1_clean;
  double *loo;                /* (n_items) leave-one-out importance */
  double *attn[SC_FAITH_N_SOURCES]; /* (n_items) each; NaN when the source is unavailable */
  ScFaithAgreement agree[SC_FAITH_N_SOURCES];
  ScFaithAgreement attn_vs_grad; /* last-mean attention against saliency (J&W's τ_g) */
  double ig_gap_rel;             /* integrated gradients' completeness gap (NaN: none) */
  double *head_rows;          /* (n_layers * n_heads, n_items) last-query rows; NULL after
                               * sc_faith_load */
  ScFaithAgreement *heads;    /* (n_layers * n_heads), layer-major */
  bool exclude_first;         /* which of the two sets the result reports (params) */
  ScFaithAgreement agree_nf[SC_FAITH_N_SOURCES]; /* without the first token */
  ScFaithAgreement *heads_nf; /* (n_layers * n_heads) without the first token */
  ScHeadStats *head_stats;    /* (n_layers * n_heads), of the clean run */
  ScFaithTiming timing;       /* zero after sc_faith_load */
  bool mixing;                /* the context-mixing sources were asked (params.mixing) */
  int contrast;               /* −1: none; else the B of logit(target) − logit(B) */
} ScFaithResult;

/* Called with the fraction done (0..1]; false cancels. */
typedef ScStudyProgressFn ScFaithProgressFn;

/* The study of @ids (n_tokens >= SC_FAITH_MIN_TOKENS) on @session (bound to @model). @loo
 * (may be NULL) is a leave-one-out result of the same ids and target to use instead of
 * computing one (borrowed); when it is computed and @loo_out is not NULL, *@loo_out
 * receives it (caller frees), e.g. to store it as an "ablate-tokens" study. On success
 * *@out is the caller's (sc_faith_result_free). Errors: SC_ERR_INVALID_ARG (NULL
 * arguments, too few tokens, an id or target outside the vocabulary, a metric or kind out
 * of the enums, a @loo of another length or target), those of sc_forward(),
 * sc_token_loo_run() and sc-rollout.h (not flow's ceiling: that makes flow unavailable),
 * SC_ERR_CANCELLED, SC_ERR_NOMEM. */
ScStatus sc_faith_run (ScSession *session, const ScModel *model, const int32_t *ids,
                       int n_tokens, const ScFaithParams *params, const ScTokenLooResult *loo,
                       ScFaithProgressFn progress, void *progress_user, ScFaithResult **out,
                       ScTokenLooResult **loo_out, ScError *err);

/* The importance vector of @loo (n_tokens − 1 items) for @metric and @kind into @out: the
 * reference ranking above. SC_ERR_INVALID_ARG for bad arguments or a NaN entry. */
ScStatus sc_faith_loo_importance (const ScTokenLooResult *loo, ScFaithMetric metric,
                                  ScFaithErase kind, double *out, ScError *err);

/* The agreement of @attn with @loo (@n items each, borrowed) with top-k @k (1 <= k <= n)
 * into @out; an undefined statistic sets out->status and reason and returns SC_OK (only a
 * bad argument or SC_ERR_NOMEM is an error). */
ScStatus sc_faith_agreement (const double *attn, const double *loo, int n, int k,
                             ScFaithAgreement *out, ScError *err);

/* The sources @r holds: all with the context-mixing ones (r->mixing), else those before
 * them — what the store, JSON and CSV list, as they did before these sources existed. */
int sc_faith_n_sources (const ScFaithResult *r);

/* The agreement of source @s (0 .. SC_FAITH_N_SOURCES − 1) or of head @h (layer-major) in
 * the set @r reports (r->exclude_first), and in the other set. */
const ScFaithAgreement *sc_faith_source_used (const ScFaithResult *r, int s);
const ScFaithAgreement *sc_faith_source_other (const ScFaithResult *r, int s);
const ScFaithAgreement *sc_faith_head_used (const ScFaithResult *r, int h);

/* The agreements without the first token of every source from @r's vectors (@r->loo and
 * @r->attn; a source whose agreement is not SC_OK keeps that status). */
ScStatus sc_faith_fill_without_first (ScFaithResult *r, ScError *err);

/* An empty result (every number NaN) for a reader; NULL when out of memory or a dimension
 * is out of range. */
ScFaithResult *sc_faith_result_new (int n_layers, int n_heads, int n_tokens);
void sc_faith_result_free (ScFaithResult *r); /* NULL is a no-op */

/* ------------------------------------------------------------------------------------ */
/* Statistics of one sentence (docs/metrics.md, "Statistics: corrections, intervals, null  */
/* baselines")                                                                           */

/* A τ that moves by more than this when the first token is left out (or whose p crosses
 * SC_FAITH_ALPHA) is flagged "the first token drives this result": 0.2 is a fifth of the
 * scale, more than the difference between the sources J&W compare. */
#define SC_FAITH_FIRST_TOKEN_DELTA 0.2
/* The level of every interval and null band. */
#define SC_FAITH_CI_LEVEL 0.95
/* Fewer tokens (one sentence) or sentences (a file) than this: no bootstrap interval. The
 * percentile bootstrap of a handful of values covers far less than its level (two values
 * give [min, max]), and an interval that looks tight there would mislead. */
#define SC_FAITH_MIN_CI_ITEMS 5
#define SC_FAITH_READING_MAX 512

typedef struct {
  int n_boot;     /* resamples of the bootstrap and the permutation null; <= 0:
                   * SC_STATS_DEFAULT_BOOT, at most SC_STATS_MAX_BOOT */
  uint32_t seed;  /* 0: SC_STATS_DEFAULT_SEED */
} ScFaithStatsParams;

typedef struct {
  ScStatsInterval tau_ci, rho_ci; /* bootstrap over the tokens of the reported set (NaN
                                   * below SC_FAITH_MIN_CI_ITEMS tokens) */
  ScStatsPermNull perm;           /* τ with the attention importance permuted over tokens */
  bool first_token_drives;        /* both sets defined and |Δτ| > SC_FAITH_FIRST_TOKEN_DELTA,
                                   * or p(τ) on the two sides of SC_FAITH_ALPHA */
  char reading[SC_FAITH_READING_MAX]; /* the plain-language reading of these numbers */
} ScFaithSourceStats;

typedef struct {
  int n_boot;
  uint32_t seed;
  ScFaithSourceStats source[SC_FAITH_N_SOURCES]; /* (undefined sources: NaN, a reading that
                                                  * says why) */
  /* Null baseline "uniform attention": every query spreads its weight evenly over the keys
   * it sees (A[i][j] = 1/(i + 1), j <= i) in every layer. A uniform last row is constant
   * and ranks nothing (τ undefined), so its ranking is taken through rollout over the
   * model's L layers: position alone, earlier tokens first. */
  double *uniform_rollout;        /* (n_items) */
  ScFaithAgreement uniform;       /* against leave-one-out, in the reported set */
  /* The best head of the reported set (highest τ; ties: the lowest index; -1: none), its
   * p-value Holm-corrected over the m heads with a defined p, and the share of the m heads
   * with a Benjamini–Hochberg q-value below SC_FAITH_ALPHA. */
  int best_head, m_heads;
  double best_p_holm;
  int n_heads_bh;
  double share_heads_bh;
  char best_reading[SC_FAITH_READING_MAX];
} ScFaithSentenceStats;

/* The statistics of @r (computed or read back: every input is stored, so a stored study
 * gives the same numbers) into *@out (caller frees with sc_faith_sentence_stats_free).
 * Errors: SC_ERR_INVALID_ARG (NULL, n_boot over SC_STATS_MAX_BOOT), SC_ERR_NOMEM, those of
 * sc-rollout.h. */
ScStatus sc_faith_sentence_stats (const ScFaithResult *r, const ScFaithStatsParams *sp,
                                  ScFaithSentenceStats **out, ScError *err);
void sc_faith_sentence_stats_free (ScFaithSentenceStats *s); /* NULL is a no-op */

/* A plain name of source @s for readings ("last-layer mean attention", ...). */
const char *sc_faith_source_title (ScFaithSource s);

/* ------------------------------------------------------------------------------------ */
/* Over sentences                                                                        */

typedef struct {
  int n_defined;             /* sentences whose τ is defined */
  int n_undefined;           /* the others (a constant vector, source unavailable) */
  double tau_mean, tau_std;  /* over the defined; std with ddof = 1 (NaN when n_defined < 2) */
  double share_significant;  /* share of the defined with p(τ) < SC_FAITH_ALPHA */
  double rho_mean;           /* over the sentences whose ρ is defined */
  double topk_mean;          /* over the defined */
  /* sc_faith_summarize_with (NaN for the heads other than the best and the median): */
  ScStatsInterval tau_ci, rho_ci; /* percentile bootstrap of the means over the sentences
                                   * (NaN below SC_FAITH_MIN_CI_ITEMS sentences) */
  double share_significant_bh; /* share of the defined with a BH q(τ) < SC_FAITH_ALPHA, BH
                                * over this source's defined sentences */
  double tau_mean_other;     /* mean τ of the other set (all tokens / without the first) */
  int n_defined_other;
} ScFaithSummary;

typedef struct {
  int n_sentences, n_layers, n_heads;
  ScFaithSummary source[SC_FAITH_N_SOURCES];
  ScFaithSummary attn_vs_grad;
  ScFaithSummary *heads;     /* (n_layers * n_heads) */
  int best_head, median_head;/* layer * n_heads + head; -1 when no head has a defined mean */
  int m_heads;               /* heads with a defined mean: the best is picked from these */
  bool exclude_first;        /* the set summarised (the results' exclude_first) */
  ScFaithErase kind;         /* the first result's reference (leave-one-out by masking or
                              * dropping, or causal tracing: the results share it) */
  bool mixing;               /* any result holds the context-mixing sources */
  int n_boot;
  uint32_t seed;
} ScFaithFileSummary;

/* Aggregates @n results (borrowed; all of the same model shape and exclude_first) as above,
 * in the set they report. Errors: SC_ERR_INVALID_ARG (n < 1, NULL entries, shapes or sets
 * that differ), SC_ERR_NOMEM. sc_faith_summarize is sc_faith_summarize_with the default
 * statistics parameters (@sp NULL). */
ScStatus sc_faith_summarize (const ScFaithResult *const *results, int n,
                             ScFaithFileSummary **out, ScError *err);
ScStatus sc_faith_summarize_with (const ScFaithResult *const *results, int n,
                                  const ScFaithStatsParams *sp, ScFaithFileSummary **out,
                                  ScError *err);

/* The sources @s lists (sc_faith_n_sources over its results). */
int sc_faith_summary_n_sources (const ScFaithFileSummary *s);

/* The plain-language reading of summary @m of @s named @name into @buf (@size bytes). */
void sc_faith_summary_reading (const ScFaithFileSummary *s, const ScFaithSummary *m,
                               const char *name, char *buf, size_t size);
void sc_faith_file_summary_free (ScFaithFileSummary *s); /* NULL is a no-op */

/* ------------------------------------------------------------------------------------ */
/* Head level                                                                            */

/* The head statistics set against ablation effects, in this order. */
#define SC_FAITH_N_HEAD_STATS 4
extern const ScHeadMetric SC_FAITH_HEAD_STATS[SC_FAITH_N_HEAD_STATS];

typedef struct {
  char name[SC_STORE_STUDY_NAME_MAX]; /* the per-head vector's name */
  int n_heads_used;                   /* heads with both values finite */
  ScSpearman vs_delta_logp;           /* ρ with the head's Δ log p (target) */
  ScSpearman vs_tv;                   /* ρ with the head's TV */
  ScStatus status;                    /* SC_OK, or SC_ERR_RANGE: undefined (NaNs) */
} ScFaithHeadCorr;

/* Spearman ρ of @per_head (n_layers * n_heads of @sweep, layer-major; NaN: left out) named
 * @name (1 .. SC_STORE_STUDY_NAME_MAX − 1 bytes) against @sweep's Δ log p and TV. An
 * undefined ρ (fewer than 2 heads, a constant vector) sets out->status = SC_ERR_RANGE and
 * returns SC_OK. Errors: SC_ERR_INVALID_ARG, SC_ERR_NOMEM. */
ScStatus sc_faith_head_corr (const ScHeadSweepResult *sweep, const char *name,
                             const double *per_head, ScFaithHeadCorr *out, ScError *err);

/* sc_faith_head_corr for each of SC_FAITH_HEAD_STATS from @r->head_stats (the same model
 * shape as @sweep) into @out. */
ScStatus sc_faith_head_level (const ScHeadSweepResult *sweep, const ScFaithResult *r,
                              ScFaithHeadCorr out[SC_FAITH_N_HEAD_STATS], ScError *err);

/* ------------------------------------------------------------------------------------ */
/* Storage                                                                               */

/* The canonical params text (fixed key order, no spaces) of a study of @run_id (>= 1), or of
 * a sentence given only by its ids (@run_id 0: the SHA-256 of the ids' little-endian int32
 * bytes is written instead):
 *   {"study":V,"run":R|null,"ids":"HEX"|null,"metric":M,"kind":K,"top_k":k|0,"target":T|null,
 *    "gradients":S|null}   (S: integrated gradients' points)
 * with ,"contrast":B after the target when contrastive and ,"mixing":true at the end with
 * params.mixing; without them the text is the one written before they existed (so are the
 * stored series: "attn.<source>" and "agree.<source>" of the context-mixing sources are
 * written only with mixing, "clean" pos 4 the contrast only with one).
 * into @buf (@size bytes). Returns the length, or −1 (bad arguments, @buf too small: 256
 * bytes always suffice). */
int sc_faith_params_json (int64_t run_id, const int32_t *ids, int n_tokens,
                          const ScFaithParams *params, char *buf, size_t size);

/* Stores @r as a complete study of @model in one transaction (nothing stays on failure);
 * *@study_id (may be NULL) receives its id. Errors: those of sc-store-study.h. */
ScStatus sc_faith_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                         const ScFaithResult *r, int64_t *study_id, ScError *err);

/* Reads back the latest complete study of the model with @sha256 and @params_json, checked
 * against @info and @params: SC_ERR_NOT_FOUND when there is none; SC_ERR_FORMAT naming the
 * value when a stored number is out of range (n, a position, τ outside [−1, 1], a p outside
 * [0, 1], an importance negative or not finite, a status not in the set, a top-1 outside the
 * vocabulary). */
ScStatus sc_faith_load (ScStore *store, const ScModelInfo *info,
                        const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                        const ScFaithParams *params, ScFaithResult **out, int64_t *study_id,
                        ScError *err);

/* This file's study kind (sc-study.h), params ScFaithParams: `saccade faithfulness RUN`
 * (computes its own leave-one-out). */
extern const ScStudyKind sc_study_kind_faithfulness;

#ifdef __cplusplus
}
#endif
