/* sc-erasure-study.h — erasure curves (Serrano & Smith 2019; DESIGN.md, "Analyses";
 * docs/metrics.md, "Attention permutation and erasure curves"): erase a sentence's tokens
 * one after another, most important first by some importance, and see how soon the model's
 * prediction flips. An importance that finds the tokens the decision rests on flips it
 * after few erasures; one that does not needs many.
 *
 * The sentence has n >= 2 tokens; tokens 0 .. n − 2 may be erased, the last (n − 1) is the
 * query whose next token is measured and is never erased. An ordering is a permutation
 * o_1 .. o_{n−1} of 0 .. n − 2. After erasing the first k (k = 0 .. n − 1; k = 0 is the
 * clean run) the study reads, at the query:
 *   p_k(target), TV_k (the total variation of the next-token distribution against the
 *   clean run, sc-effect.h), top1_k;
 * the flip point is the first k with top1_k != top1_0 (the clean top-1), and the fraction
 * removed is k / (n − 1) there; when no k flips it, "never": the fraction is NaN and
 * never_flips is set. The whole curve k = 0 .. n − 1 is kept, not only its start.
 * Target: the clean top-1 unless the caller names one.
 *
 * Erasure kinds (as token leave-one-out, sc-ablation-study.h):
 *   - mask (default): the erased tokens are removed from every attention row of every layer
 *     and the rows renormalised (ScIntervention.token_mask); ids and positions stay;
 *   - drop: the erased tokens are deleted from the ids and the rest run again (the query is
 *     then at position n − 1 − k).
 *
 * Orderings, each highest importance first:
 *   - attention: the last query's attention in the clean run, averaged over the heads of
 *     the last layer, a_j = (1 / H) Σ_h A^{(L−1,h)}[n − 1, j] (read through the observer),
 *     for j = 0 .. n − 2; ties by position (lower first);
 *   - leave-one-out: the TV of masking j alone (sc_token_loo_run, mask kind); ties by
 *     position;
 *   - random, R seeds r = 0 .. R − 1: a Fisher–Yates shuffle of 0 .. n − 2 (from the end,
 *     j = next % (t + 1)) driven by SplitMix64 whose state starts at
 *     sc_permutation_seed (seed, r) (sc-permutation-study.h): reproducible, and a seed's
 *     order does not depend on R;
 *   - gradient importance: refused (SC_ERR_UNSUPPORTED) until the backward pass of issue 12
 *     ("Gradient attributions") lands.
 *
 * Progress and cancel: @progress (may be NULL) is called with the fraction done (0..1],
 * after each run (the leave-one-out study's runs included); returning false stops with
 * SC_ERR_CANCELLED and nothing is returned. Deterministic.
 *
 * Storage (sc-store-study.h): kind SC_ERASURE_KIND, params from sc_erasure_params_json().
 * Per ordering class c in "attention", "loo", "random": series "<c>.order" at pos
 * r (n − 1) + (k − 1) (the k-th erased position), "<c>.p", "<c>.tv", "<c>.top1" at pos
 * r n + k, r the random seed's index (0 for the others); series "clean" as in
 * sc-ablation-study.h. The flip point is not stored: the reader recomputes it from the
 * top-1s after checking every value.
 *
 * Thread safety: one study per session at a time. Plain C, no GLib.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "study/sc-ablation-study.h"
#include "study/sc-study.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SC_ERASURE_KIND "ablate-erasure"
#define SC_ERASURE_STUDY_VERSION 1
/* At most this many random orderings: a distribution's median needs tens, not thousands. */
#define SC_ERASURE_MAX_SEEDS 256

typedef enum {
  SC_ERASE_ORDER_ATTENTION = 0,
  SC_ERASE_ORDER_LOO,
  SC_ERASE_ORDER_RANDOM,
  SC_ERASE_ORDER_GRADIENT, /* refused (above) */
} ScEraseOrdering;

typedef enum {
  SC_ERASE_MASK = 0,
  SC_ERASE_DROP,
} ScEraseKind;

typedef struct {
  int target;          /* token id to measure, or −1: the clean top-1 */
  ScEraseKind kind;
  int n_random;        /* R, 0 .. SC_ERASURE_MAX_SEEDS */
  uint64_t seed;       /* base seed of the random orderings */
  bool gradient;       /* ask for the gradient ordering too: SC_ERR_UNSUPPORTED for now */
} ScErasureParams;

typedef struct {
  ScEraseOrdering ordering;
  int seed_index;      /* random: r; else −1 */
  int *order;          /* (n − 1) positions, the k-th erased at order[k − 1] */
  double *p_target;    /* (n) p_k(target), k = 0 .. n − 1 */
  double *tv;          /* (n) TV_k (TV_0 = 0) */
  int *top1;           /* (n) top1_k */
  int flip_k;          /* the flip point, or −1: never */
  double fraction;     /* flip_k / (n − 1), or NaN: never */
  bool never_flips;
} ScErasureCurve;

typedef struct {
  int n_tokens;
  ScEraseKind kind;
  int target, top1_clean;
  double logp_clean;
  int n_random;
  uint64_t seed;
  int n_curves;            /* 2 + n_random */
  ScErasureCurve *curves;  /* attention, leave-one-out, then random r = 0 .. R − 1 */
} ScErasureResult;

/* The study of @ids (n_tokens >= 2). On success *@out is the caller's
 * (sc_erasure_result_free). Errors: SC_ERR_INVALID_ARG (NULL arguments, n_tokens < 2, an
 * id or the target outside the vocabulary, a kind not in the enum, R outside
 * 0 .. SC_ERASURE_MAX_SEEDS), SC_ERR_UNSUPPORTED (gradient ordering), those of
 * sc_forward(), sc_token_loo_run() and sc-effect.h, SC_ERR_CANCELLED, SC_ERR_NOMEM. */
ScStatus sc_erasure_run (ScSession *session, const ScModel *model, const int32_t *ids,
                         int n_tokens, const ScErasureParams *params,
                         ScAblationProgressFn progress, void *progress_user,
                         ScErasureResult **out, ScError *err);

/* The flip point of @curve (n entries of top1; @top1_clean): fills flip_k, fraction and
 * never_flips as defined above. */
void sc_erasure_curve_find_flip (ScErasureCurve *curve, int n_tokens, int top1_clean);

/* The median (type 7, sc-permutation-study.h) of the random orderings' fractions removed,
 * with "never" larger than any fraction: when the median falls on a never or between one
 * and a fraction, it is never (NaN, *@never true). NaN and *@never false when R = 0. */
double sc_erasure_random_median (const ScErasureResult *r, bool *never);

/* The name of an ordering ("attention", "leave-one-out", "random", "gradient"). */
const char *sc_erase_ordering_name (ScEraseOrdering ordering);

/* An empty result (numbers NaN, orders −1), for readers. NULL when out of memory, n < 2 or
 * R outside 0 .. SC_ERASURE_MAX_SEEDS. */
ScErasureResult *sc_erasure_result_new (int n_tokens, int n_random);
void sc_erasure_result_free (ScErasureResult *r); /* NULL is a no-op */

/* {"study":V,"run":R,"target":T|null,"kind":"mask"|"drop","seeds":R,"seed":S} into @buf.
 * Returns the length, or −1 when @buf is too small (128 bytes always suffice). */
int sc_erasure_params_json (int64_t run_id, const ScErasureParams *params, char *buf,
                            size_t size);

/* Stores @r as a complete study (one transaction). Errors: those of sc-store-study.h;
 * SC_ERR_INVALID_ARG when R n >= 2^19 (the store's series positions). */
ScStatus sc_erasure_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                           const ScErasureResult *r, int64_t *study_id, ScError *err);

/* Reads back the latest complete study with @params_json of the model with @sha256.
 * SC_ERR_NOT_FOUND when there is none; SC_ERR_FORMAT when anything does not fit: an order
 * that is not a permutation of 0 .. n − 2, a p outside [0, 1], a TV outside [0, 1], a
 * top-1 outside the vocabulary, a k = 0 point that is not the clean run's, a missing
 * value. */
ScStatus sc_erasure_load (ScStore *store, const ScModelInfo *info,
                          const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                          ScErasureResult **out, int64_t *study_id, ScError *err);

/* This file's study kind (sc-study.h), params ScErasureParams: `saccade ablate RUN --erasure`. */
extern const ScStudyKind sc_study_kind_erasure;

#ifdef __cplusplus
}
#endif
