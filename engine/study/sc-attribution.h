/* sc-attribution.h — gradient attributions over tokens: which input tokens the model's
 * log-probability of a target depends on, by the gradient (docs/metrics.md, "Gradient
 * attributions"; the backward pass is forward/sc-backward.h).
 *
 * Objective f(x) = log p(target | tokens 0 .. position) with x the input embeddings (n, E),
 * target the clean top-1 after @position unless the caller names one; with a contrast B,
 * f(x) = logit(target) − logit(B) at @position, which is also log p(target) − log p(B)
 * (the log-sum-exp cancels): the contrastive explanation of Yin & Neubig 2022, "why the
 * target rather than B". Per token j:
 *   saliency      ||df/dx_j||_2                                   (Simonyan 2014; Li 2016)
 *   gradxinput    sum_d x_jd df/dx_jd                              (Shrikumar 2016)
 *   ig            sum_d (x - x')_jd integral_0^1 df/dx_jd (x' + a (x - x')) da
 *                 (Sundararajan 2017), the integral by an @steps-point rule over a in
 *                 [0, 1]: adaptive (default: the trapezoid rule on nodes placed where the
 *                 measured error is largest, sc-attribution.c says how), Gauss-Legendre
 *                 (Captum's default) or the midpoint Riemann sum;
 *                 x' the baseline: zero embeddings (default) or every position the
 *                 embedding of one token. Completeness: sum_j ig_j = f(x) - f(x') exactly
 *                 for the true integral; the result reports the gap
 *                 |sum_j ig_j - (f(x) - f(x'))| and its share of |f(x) - f(x')|.
 *   grad-rollout  Chefer, Gur & Wolf 2021 (ICCV, "Generic attention-model explainability
 *                 ...", eqs. 5-6, the self-attention rule): per layer
 *                 Ā_l = mean_h (dfdA_l,h ⊙ A_l,h)^+ (the gradient with respect to the
 *                 head's probabilities times the probabilities, negative entries to 0, mean
 *                 over heads), R = I, then R <- R + Ā_l R for l = 0 .. L - 1; token j's
 *                 relevance is R[position][j]. (Not their earlier "transformer attribution"
 *                 of CVPR 2021, which multiplies by LRP relevances instead of A.)
 * Saliency, gradxinput and grad-rollout share one forward and one backward; ig takes
 * @steps more of each, plus a forward for f(x').
 *
 * Storage (sc-store-study.h): kind SC_ATTR_KIND with params from sc_attr_params_json();
 * series "<method>" (pos = token j) for each computed method; "ig" also series "ig.check"
 * (0 f(x), 1 f(x'), 2 sum, 3 gap, 4 relative gap); series "clean" (0 target, 1 position,
 * 2 n, 3 value f(x), 4 top-1, and 5 the contrast when there is one). sc_attr_load() checks
 * every number. Params without a contrast are written as before it existed, so studies
 * stored then are found and read back unchanged.
 *
 * Deterministic. Thread safety: one study per ScGrad at a time. Plain C, no GLib.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "core/sc-error.h"
#include "forward/sc-backward.h"
#include "model/sc-model.h"
#include "store/sc-store-study.h"
#include "study/sc-study.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SC_ATTR_KIND "attribution"
/* Bumped whenever a definition above changes, so old stored studies are not reused. */
#define SC_ATTR_STUDY_VERSION 1
/* Integrated gradients' default number of points (the issue's, and Captum's). */
#define SC_ATTR_DEFAULT_STEPS 50
/* The most points a study may ask for (each is a forward and a backward). */
#define SC_ATTR_MAX_STEPS 4096

typedef enum {
  SC_ATTR_SALIENCY = 0,
  SC_ATTR_GRADXINPUT,
  SC_ATTR_IG,
  SC_ATTR_GRAD_ROLLOUT,
  SC_ATTR_N_METHODS
} ScAttrMethod;

typedef enum {
  SC_ATTR_RULE_ADAPTIVE = 0,
  SC_ATTR_RULE_GAUSS_LEGENDRE,
  SC_ATTR_RULE_MIDPOINT,
  SC_ATTR_N_RULES
} ScAttrRule;

typedef enum {
  SC_ATTR_BASELINE_ZERO = 0,
  SC_ATTR_BASELINE_TOKEN, /* every position: the embedding of baseline_token */
  SC_ATTR_N_BASELINES
} ScAttrBaseline;

/* "saliency", "gradxinput", "ig", "grad-rollout"; "adaptive", "gauss-legendre", "midpoint"; "zero",
 * "token". NULL out of range. */
const char *sc_attr_method_id (ScAttrMethod m);
const char *sc_attr_rule_id (ScAttrRule r);
const char *sc_attr_baseline_id (ScAttrBaseline b);
bool sc_attr_method_from_id (const char *id, ScAttrMethod *out);
bool sc_attr_rule_from_id (const char *id, ScAttrRule *out);

typedef struct {
  unsigned methods;        /* OR of 1u << ScAttrMethod; 0 = all */
  int32_t target;          /* -1: the clean top-1 after @position */
  int position;            /* -1: the last token */
  int steps;               /* ig: <= 0 = SC_ATTR_DEFAULT_STEPS */
  ScAttrRule rule;
  ScAttrBaseline baseline;
  int32_t baseline_token;  /* SC_ATTR_BASELINE_TOKEN only */
  int32_t contrast;        /* -1: none, f = log p(target); else f = logit(target) −
                            * logit(contrast), a token other than the target */
} ScAttrParams;

typedef struct {
  int n_tokens, n_layers, n_heads;
  int32_t target, top1;
  int32_t contrast;                    /* -1: none */
  int position;
  double value;                        /* f(x) */
  unsigned methods;                    /* the methods computed */
  double *scores[SC_ATTR_N_METHODS];   /* (n_tokens) each; NULL when not computed */
  /* ig */
  int steps;
  ScAttrRule rule;
  ScAttrBaseline baseline;
  int32_t baseline_token;
  double f_baseline, ig_sum, ig_gap, ig_gap_rel; /* NaN without ig */
  double forward_backward_s;           /* seconds in the engine's passes */
} ScAttrResult;

/* Called with the fraction done (0..1]; false cancels. */
typedef ScStudyProgressFn ScAttrProgressFn;

/* The attributions of @ids (n >= 1; position < n) on @grad's session (bound to @model).
 * Errors: SC_ERR_INVALID_ARG (NULL arguments, an id, target or baseline token outside the
 * vocabulary, a position out of range, steps over SC_ATTR_MAX_STEPS, a method set, rule or
 * baseline out of the enums), those of sc-backward.h, SC_ERR_CANCELLED, SC_ERR_NOMEM. */
ScStatus sc_attr_run (ScGrad *grad, const ScModel *model, const int32_t *ids, int n_tokens,
                      const ScAttrParams *params, ScAttrProgressFn progress, void *progress_user,
                      ScAttrResult **out, ScError *err);

/* An empty result (every number NaN, no scores) for a reader; NULL when out of memory. */
ScAttrResult *sc_attr_result_new (int n_tokens, int n_layers, int n_heads);
void sc_attr_result_free (ScAttrResult *r); /* NULL is a no-op */

/* The params text (fixed key order, no spaces) of a study of run @run_id (>= 1), or of ids
 * (@run_id 0: the SHA-256 of their little-endian int32 bytes instead), into @buf; the
 * length, or -1 (bad arguments, @buf too small: 320 bytes always suffice). */
int sc_attr_params_json (int64_t run_id, const int32_t *ids, int n_tokens,
                         const ScAttrParams *params, char *buf, size_t size);

/* Stores @r as a complete study of @model in one transaction. */
ScStatus sc_attr_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                        const ScAttrResult *r, int64_t *study_id, ScError *err);

/* Reads back the latest complete study with @params_json (made from @params, which fill
 * the result's integration settings) of the model with @sha256, checked against @info:
 * SC_ERR_NOT_FOUND when there is none; SC_ERR_FORMAT naming the
 * value when a number is out of range (n, a position, a target outside the vocabulary, a
 * score not finite, a saliency or rollout negative). */
ScStatus sc_attr_load (ScStore *store, const ScModelInfo *info,
                       const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                       const ScAttrParams *params, ScAttrResult **out, int64_t *study_id,
                       ScError *err);

/* This file's study kind (sc-study.h), params ScAttrParams: `saccade attribute RUN`. */
extern const ScStudyKind sc_study_kind_attribution;

#ifdef __cplusplus
}
#endif
