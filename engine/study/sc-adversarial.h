/* sc-adversarial.h — adversarial attention (Jain & Wallace 2019, section 4.2): how far can
 * a head's attention move while the model's output barely changes? (docs/metrics.md,
 * "Adversarial attention".)
 *
 * For a head (or every head of a layer) and a query row — the last by default: the row
 * whose next-token distribution y is measured, the analogue of J&W's single attention
 * distribution — search for attention a' over the row's visible keys that maximises
 * JSD(a', a) from the original a while TVD(y', y) <= ε, y' the next-token distribution
 * after the last token with a' put in place of a (an SC_ATTN_EDIT_REPLACE edit: the head's
 * output becomes a' V, everything downstream recomputed). The search is gradient ascent
 * (Adam, Kingma & Ba 2015) on the attention logits z (a' = softmax(z)) of
 *     F(z) = mean JSD(a', a) - λ max(0, TVD(y', y) - ε) / ε
 * with the JSD's gradient in closed form (dJSD/da'_j = ½ ln(a'_j / m_j)) and the TVD's
 * through the backward pass (sc-backward.h: its subgradient ½ sign(y' - y) at the logits,
 * back to the head's probabilities), which runs only while the constraint is violated.
 * The ε values are taken in increasing order, each search starting from the best a' of
 * the one before (feasible for a smaller ε is feasible for a larger); the first starts
 * from the original logits plus Gaussian noise (seeded). Reported per ε: the largest mean
 * JSD over the iterates with TVD <= ε (0 when none moved: a' = a is always feasible), the
 * TVD there, and the largest single-distribution JSD. JSD in nats: at most ln 2, reached
 * when a' and a have disjoint support.
 *
 * With @rows = SC_ADV_ALL_ROWS every row with two or more visible keys is searched at once
 * (the mean over them is reported). Only rows of the chosen heads change; the model runs
 * from the chosen layer up (prefix reuse).
 *
 * Storage (sc-store-study.h): kind SC_ADV_KIND with params from sc_adv_params_json();
 * series "epsilon", "jsd", "jsd.max", "tvd" (pos = the ε's index) and "clean" (0 layer,
 * 1 head (-1 = every head), 2 row (-1 = all), 3 n, 4 the target: the clean top-1).
 * sc_adv_load() checks every number.
 *
 * Deterministic for a seed. Plain C, no GLib.
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

#define SC_ADV_KIND "adversarial"
#define SC_ADV_STUDY_VERSION 1
#define SC_ADV_ALL_ROWS (-2)
#define SC_ADV_MAX_EPSILONS 32
/* Defaults: J&W's ε range (TVD of the output, Fig. 6-8: 0.01 .. 0.1) with two smaller
 * values; 100 Adam steps of 0.1 per ε (measured on SmolLM2: the best JSD moves by < 1 %
 * from 100 to 300 steps; docs/metrics.md); the penalty weight λ = 10 per unit ε. */
#define SC_ADV_DEFAULT_ITERATIONS 100
#define SC_ADV_DEFAULT_LR 0.1
#define SC_ADV_PENALTY 10.0
extern const double SC_ADV_DEFAULT_EPSILONS[6];

typedef struct {
  int layer;                /* 0 .. n_layers - 1 */
  int head;                 /* -1: every head of the layer */
  int row;                  /* query row; -1: the last; SC_ADV_ALL_ROWS */
  const double *epsilons;   /* (n_epsilons) in (0, 1], any order; NULL: the defaults */
  int n_epsilons;
  int iterations;           /* per ε; <= 0: SC_ADV_DEFAULT_ITERATIONS */
  double lr;                /* <= 0: SC_ADV_DEFAULT_LR */
  uint64_t seed;
  const ScIntervention *base; /* NULL, or head scales / masked tokens to search under (a
                               * test zero-scales a head to make the output ignore it) */
} ScAdvParams;

typedef struct {
  int layer, head;            /* head -1: every head of the layer */
  int row;                    /* the query row searched as an index (the params' -1, "the
                               * last", is resolved to n_tokens - 1); -1: every row */
  int n_tokens;
  int32_t target;             /* the clean top-1 */
  int n_dists;                /* distributions searched (heads x rows with >= 2 keys; a
                               * loaded study: the same count, from its head and row) */
  int *dist_head, *dist_row;  /* (n_dists) which head and query row each distribution is,
                               * the order of adversarial and original; NULL after
                               * sc_adv_load */
  int n_epsilons;
  double *epsilon;            /* (n_epsilons) increasing */
  double *jsd;                /* (n_epsilons) best mean JSD with TVD <= ε */
  double *jsd_max;            /* (n_epsilons) the largest single JSD at that iterate */
  double *tvd;                /* (n_epsilons) TVD at that iterate */
  float *adversarial;         /* (n_dists, n_tokens) the best a' at the largest ε; NULL
                               * after sc_adv_load */
  float *original;            /* (n_dists, n_tokens) a; NULL after sc_adv_load */
  double search_s;
} ScAdvResult;

typedef ScStudyProgressFn ScAdvProgressFn;

/* The search on @ids (n >= 2) through @grad (its session bound to @model). Errors:
 * SC_ERR_INVALID_ARG (a layer, head or row out of range, a row with a single visible key,
 * ε outside (0, 1] or more than SC_ADV_MAX_EPSILONS of them, a base intervention with
 * edits or means), those of sc-backward.h, SC_ERR_CANCELLED, SC_ERR_NOMEM. */
ScStatus sc_adv_run (ScGrad *grad, const ScModel *model, const int32_t *ids, int n_tokens,
                     const ScAdvParams *params, ScAdvProgressFn progress, void *progress_user,
                     ScAdvResult **out, ScError *err);
void sc_adv_result_free (ScAdvResult *r); /* NULL is a no-op */

/* Params text, as the other studies (320 bytes always suffice); -1 on bad arguments. */
int sc_adv_params_json (int64_t run_id, const int32_t *ids, int n_tokens, const ScAdvParams *p,
                        char *buf, size_t size);
ScStatus sc_adv_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                       const ScAdvResult *r, int64_t *study_id, ScError *err);
/* SC_ERR_NOT_FOUND when absent; SC_ERR_FORMAT naming the value when a number is out of
 * range (JSD outside [0, ln 2], TVD outside [0, 1], ε not increasing, indices). */
ScStatus sc_adv_load (ScStore *store, const ScModelInfo *info,
                      const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                      ScAdvResult **out, int64_t *study_id, ScError *err);

/* This file's study kind (sc-study.h), params ScAdvParams (its epsilons and base are
 * borrowed): `saccade adversarial RUN`. */
extern const ScStudyKind sc_study_kind_adversarial;

#ifdef __cplusplus
}
#endif
