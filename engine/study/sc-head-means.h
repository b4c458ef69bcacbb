/* sc-head-means.h — each attention head's mean output over a reference set of sentences,
 * the replacement that mean-ablation puts in a head's place (DESIGN.md, "ScIntervention";
 * docs/metrics.md, "Reference means and direct logit attribution").
 *
 * Definition. For a set of S sentences (token id arrays, each run alone from position 0,
 * no intervention), let o_l,h(s, p) be head h of layer l's attention output at position p
 * of sentence s: the head_dim floats that multiply its block of W_O (the observer's
 * attn_output, sc-forward.h). The mean is
 *     mean_l,h = (1 / T) Σ_s Σ_{p = 0 .. n_s − 1} o_l,h(s, p),   T = Σ_s n_s,
 * over every (sentence, position) pair, position 0 included. All positions count because
 * mean-ablation (ScIntervention.head_mean) replaces the head's output at every query row
 * of a run with this one vector, so the mean is taken over the same kind of rows it
 * replaces; leaving position 0 out would bias it away from what the head does there. The
 * sums are accumulated in double, per element, in sentence then position order, and
 * rounded to float once at the end (so the result does not depend on T's size beyond
 * double's 53 bits and is the same for any number of threads).
 *
 * Progress and cancel: @progress (may be NULL) is called after each sentence with the
 * fraction done (0..1]; returning false stops with SC_ERR_CANCELLED and nothing returned.
 *
 * Storage (sc-store-study.h): kind SC_HEAD_MEANS_KIND, params from
 * sc_head_means_params_json(): {"study":V,"set":"NAME","sentences":S,"tokens":T}. Series
 * "mean" holds mean_l,h[t] at pos (layer * n_heads + head) * head_dim + t (n_layers *
 * n_heads * head_dim values, which must stay below SC_STORE_MAX_TOKENS: checked on
 * storing; SmolLM2 needs 17,280); series "shape" holds pos 0 n_layers, 1 n_heads,
 * 2 head_dim, 3 S, 4 T. Reading back checks the shape against the model, that every
 * position of "mean" is there exactly once and finite, and that S and T match the params:
 * anything else is SC_ERR_FORMAT naming the study and what is wrong.
 *
 * Thread safety: one run per session at a time (the session's rule). Plain C, no GLib.
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

#define SC_HEAD_MEANS_KIND "head-means"
/* Bumped whenever the definition above changes, so old stored means are not reused. */
#define SC_HEAD_MEANS_VERSION 1
/* A set's name: 1 to 63 bytes of [A-Za-z0-9._-] (it goes into the params text as is). */
#define SC_HEAD_MEANS_SET_MAX 64

typedef struct {
  int n_layers, n_heads, head_dim;
  int n_sentences;   /* S */
  int64_t n_tokens;  /* T: the (sentence, position) pairs averaged */
  float *mean;       /* (n_layers, n_heads, head_dim): ScIntervention.head_mean's layout */
} ScHeadMeans;

/* Called after each sentence with the fraction done; false cancels. */
typedef ScStudyProgressFn ScHeadMeansProgressFn;

/* The means of @n_sentences >= 1 sentences: sentence s is ids[s], n_tokens[s] >= 1 ids, run
 * on @session (bound to @model). On success *@out is the caller's (sc_head_means_free).
 * Errors: SC_ERR_INVALID_ARG (NULL arguments, no sentences, an empty sentence or an id out
 * of the vocabulary: the message names the sentence), those of sc_forward() (prefixed with
 * the sentence), SC_ERR_CANCELLED, SC_ERR_NOMEM. */
ScStatus sc_head_means_run (ScSession *session, const ScModel *model,
                            const int32_t *const *ids, const int *n_tokens, int n_sentences,
                            ScHeadMeansProgressFn progress, void *progress_user,
                            ScHeadMeans **out, ScError *err);

/* Zeroed means of this shape (every count 0), or NULL (out of memory, a dimension < 1). */
ScHeadMeans *sc_head_means_new (int n_layers, int n_heads, int head_dim);
void sc_head_means_free (ScHeadMeans *m); /* NULL is a no-op */

/* The canonical params text {"study":V,"set":"NAME","sentences":S,"tokens":T} into @buf.
 * Returns its length, or −1 when @set is not a valid name (above), S < 1, T < S, or @buf
 * is too small (160 bytes always suffice). */
int sc_head_means_params_json (const char *set, int n_sentences, int64_t n_tokens, char *buf,
                               size_t size);

/* Stores @m as a complete study of @model with @params_json, in one transaction. Errors:
 * SC_ERR_INVALID_ARG (no means, n_layers * n_heads * head_dim >= SC_STORE_MAX_TOKENS, a
 * value that is not finite), those of sc-store-study.h. */
ScStatus sc_head_means_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                              const ScHeadMeans *m, int64_t *study_id, ScError *err);

/* Reads back the latest complete study of the model with @sha256 and @params_json, checked
 * as above. SC_ERR_NOT_FOUND when there is none; SC_ERR_FORMAT when it does not fit @info
 * or holds a bad value. *@study_id (may be NULL) receives its id. */
ScStatus sc_head_means_load (ScStore *store, const ScModelInfo *info,
                             const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                             ScHeadMeans **out, int64_t *study_id, ScError *err);

/* The study's params: the reference set's name (SC_HEAD_MEANS_SET_MAX rules); its
 * sentences are the ScStudyCtx's (SC_STUDY_NEEDS_SENTENCES). */
typedef struct {
  const char *set;
} ScHeadMeansParams;

/* This file's study kind (sc-study.h), params ScHeadMeansParams, the sentences from
 * ScStudyCtx: `saccade means`. */
extern const ScStudyKind sc_study_kind_head_means;

#ifdef __cplusplus
}
#endif
