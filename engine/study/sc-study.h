/* sc-study.h — what a study is, once for every kind (DESIGN.md, "Layers and folders": a
 * study kind is data).
 *
 * A study runs the model (forward passes, and for some kinds the backward pass) under
 * interventions, measures something of a stored run (or of a set of sentences), and is
 * stored in the capture store as one complete study with the canonical text of its
 * parameters (sc-store-study.h). Every kind is described by one ScStudyKind: its names,
 * what it needs to run, its parameters (size, defaults, the canonical text), and the four
 * things done with a result — run, store, load, free. The descriptors sit at the end of
 * the engine file that implements each kind; sc_study_kinds() is the one table of them.
 *
 * Callers (app/core's load-or-run-and-store path, the command line's verb runner, the
 * window's study page) hold a `const ScStudyKind *` and never switch on a kind: adding a
 * study is one engine file ending with its descriptor (docs/architecture.md, "Adding a
 * study").
 *
 * Also here, shared by the study files: the effect of an ablation measured against the
 * clean run of the same ids (ScAblationEffect, sc_study_same_ids_effect), the progress
 * callback's type, and the reader of an integer in a params text.
 *
 * Not here: the definitions of the effects (analysis/sc-effect.h), the store's study rows
 * (store/sc-store-study.h), GLib, GTask or threads (app/core/saccade-study.h).
 *
 * Thread safety: descriptors are immutable; a run follows its session's rule (one study per
 * session at a time). Plain C, no GLib.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/sc-effect.h"
#include "core/sc-error.h"
#include "forward/sc-backward.h"
#include "forward/sc-forward.h"
#include "model/sc-model.h"
#include "store/sc-store-study.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Called with the fraction done (0..1], on the thread that runs the study; returning false
 * cancels it (the run then fails with SC_ERR_CANCELLED and returns nothing). */
typedef bool (*ScStudyProgressFn) (void *user, double fraction);

/* What a kind needs from its caller before it can run (ScStudyKind.needs, bits). */
typedef enum {
  SC_STUDY_NEEDS_RUN = 1 << 0,        /* a stored run's ids (ScStudyCtx.run_id, ids) */
  SC_STUDY_NEEDS_SESSION = 1 << 1,    /* forward passes on ScStudyCtx.session */
  SC_STUDY_NEEDS_BACKWARD = 1 << 2,   /* gradients: ScStudyCtx.grad (an architecture with
                                       * a backward pass, sc-backward.h) */
  SC_STUDY_NEEDS_MEANS = 1 << 3,      /* the head means of a reference set (ScStudyCtx.means,
                                       * the "head-means" kind's result) */
  SC_STUDY_NEEDS_SENTENCES = 1 << 4,  /* a set of sentences (ScStudyCtx.sentences) */
  SC_STUDY_NEEDS_RUN_PAIR = 1 << 5,   /* with NEEDS_RUN: a second stored run of the same
                                       * length (ScStudyCtx.run2_id, ids2), the one the
                                       * kind's SC_STUDY_OPTION_RUN option names */
} ScStudyNeeds;

/* Everything a kind may run on; a field its needs do not name is ignored (may be zero). */
typedef struct {
  const ScModel *model;               /* always */
  ScSession *session;                 /* NEEDS_SESSION: bound to @model */
  ScGrad *grad;                       /* NEEDS_BACKWARD: bound to @session */
  int64_t run_id;                     /* NEEDS_RUN: the stored run (>= 1) */
  const int32_t *ids;                 /* NEEDS_RUN: (n_tokens) its ids, checked against the
                                       * vocabulary */
  int n_tokens;
  int64_t run2_id;                    /* NEEDS_RUN_PAIR: the second run (>= 1) */
  const int32_t *ids2;                /* NEEDS_RUN_PAIR: (n_tokens2) its ids, checked */
  int n_tokens2;
  const float *head_mean;             /* NEEDS_MEANS: (n_layers, n_heads, head_dim) */
  const char *means_set;              /* NEEDS_MEANS, NEEDS_SENTENCES: the reference set's
                                       * name (SC_HEAD_MEANS_SET_MAX rules) */
  const int32_t *const *sentences;    /* NEEDS_SENTENCES: (n_sentences) id arrays */
  const int *sentence_lengths;        /* (n_sentences) */
  int n_sentences;
  ScStudyProgressFn progress;         /* may be NULL */
  void *progress_user;
} ScStudyCtx;

typedef struct ScStudyKind ScStudyKind;

/* One option of a kind's params, as a user sets it by name (`saccade study KIND RUN --NAME
 * VALUE`, the window's option rows): where it sits in the params struct and what values it
 * takes. The option table is the params' validation for values a user types; params_json
 * checks the params as a whole. */
typedef enum {
  SC_STUDY_OPTION_TOKEN,   /* an int field: a token id in the vocabulary, or −1 (the default:
                            * the clean top-1); a face turns a token's text into its id */
  SC_STUDY_OPTION_INT,     /* an int field in [min, max] */
  SC_STUDY_OPTION_UINT64,  /* a uint64_t field */
  SC_STUDY_OPTION_CHOICE,  /* an int (enum) field: the index of one of choices */
  SC_STUDY_OPTION_RUN,     /* an int64_t field: a stored run's id (>= 1), whose ids the caller
                            * reads into ScStudyCtx.ids2 (a kind has at most one; 0, the
                            * default, is none: the user must name it) */
  SC_STUDY_OPTION_HEADS,   /* a char[SC_STUDY_HEADS_MAX] field: a list of heads "L.H,L.H"
                            * (layer.head, e.g. "17.4,20.0"), stored in its canonical text
                            * (sc_study_heads_parse); "" (the default) is none. Checked
                            * against the model's layers and heads when the study runs */
  SC_STUDY_OPTION_BOOL,    /* a bool field: "yes", "true", "1" or "no", "false", "0" (the
                            * command line gives it as a switch, --NAME, meaning yes) */
} ScStudyOptionType;

/* The bytes of an SC_STUDY_OPTION_HEADS field, its NUL included: room for 40 heads of
 * layers and heads below 10 ("0.0," is 4 bytes), 18 of SmolLM2's ("29.8,"). */
#define SC_STUDY_HEADS_MAX 160
/* The most heads such a list holds: one "L.H" is at least 3 bytes and a comma. */
#define SC_STUDY_HEADS_MAX_COUNT (SC_STUDY_HEADS_MAX / 4)

typedef struct {
  const char *name;                /* NULL ends a table */
  ScStudyOptionType type;
  size_t offset;                   /* of the field in the params struct */
  int min, max;                    /* SC_STUDY_OPTION_INT */
  const char *const *choices;      /* SC_STUDY_OPTION_CHOICE: NULL-terminated names */
  const char *help;                /* one line, English */
} ScStudyOption;

/* The clean run's numbers a result was measured against (NaN / −1 where a kind has none:
 * a DLA measures a logit, not a log-probability). */
typedef struct {
  int target;         /* the token measured */
  int top1_clean;     /* the clean run's top-1 */
  double logp_clean;  /* ln p_clean(target) */
  double loss_clean;  /* the clean mean next-token loss over q = 1 .. n − 1 */
  /* A second token B the study measures against, or −1, and the clean logit(target) −
   * logit(B) (NaN without one). A kind without contrasts leaves both as the caller set
   * them: callers start from SC_STUDY_CLEAN_INIT. */
  int contrast;
  double logit_diff_clean;
} ScStudyClean;

#define SC_STUDY_CLEAN_INIT { -1, -1, NAN, NAN, -1, NAN }

struct ScStudyKind {
  const char *id;          /* the store's kind text ("ablate-heads"); two descriptors may
                            * share one when their params tell them apart */
  const char *name;        /* the short name the command line and the window use
                            * ("heads", "heads-mean"); unique */
  const char *title;       /* a short English title ("Head sweep (zero-ablation)") */
  unsigned needs;          /* ScStudyNeeds bits */
  int min_tokens;          /* NEEDS_RUN: the fewest tokens the kind can study */
  size_t params_size;      /* sizeof the kind's params struct (ScAblationParams, ...) */
  const void *params_default; /* params_size bytes: every option at its verb's default */
  const ScStudyOption *options;  /* what a user may set, ended by a NULL name (may be NULL:
                                  * nothing) */

  /* The canonical params text of a study with @params on @ctx (fixed key order, no spaces)
   * into @buf (@size bytes; SC_STUDY_PARAMS_MAX always suffice): the length, or −1 with
   * @err set (SC_ERR_INVALID_ARG naming the value) when a parameter is out of range. This
   * is the validation of the params: a params text is made before every run and lookup. */
  int (*params_json) (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx,
                      char *buf, size_t size, ScError *err);
  /* Computes the study: *@out receives the result (caller frees with result_free). Errors:
   * the kind's engine function's (its header says which). */
  ScStatus (*run) (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params,
                   void **out, ScError *err);
  /* Stores @result as a complete study of @model with @params_json, in one transaction. */
  ScStatus (*store) (ScStore *store, const ScStoreModel *model, const char *params_json,
                     const void *result, int64_t *study_id, ScError *err);
  /* Reads back the latest complete study with @params_json of the model with @sha256,
   * checked against @info (and @params where the result carries them): SC_ERR_NOT_FOUND
   * when there is none, SC_ERR_FORMAT naming the value that does not fit. */
  ScStatus (*load) (ScStore *store, const ScModelInfo *info,
                    const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                    const void *params, void **out, int64_t *study_id, ScError *err);
  /* The number of tokens the result describes (a stored study of another length does not
   * describe the run), or −1 when the kind does not study a run. */
  int (*result_n_tokens) (const void *result);
  /* The clean run's numbers of @result (ScStudyClean). */
  void (*result_clean) (const void *result, ScStudyClean *out);
  void (*result_free) (void *result); /* NULL is a no-op */
};

/* Room for any kind's params text. */
#define SC_STUDY_PARAMS_MAX 512

/* Every kind, in a fixed order (the order the command line lists them in), NULL-terminated.
 * *@n (may be NULL) receives the count. */
const ScStudyKind *const *sc_study_kinds (size_t *n);

/* The kind whose short name is @name, else the first whose store id is @name; NULL when
 * none is. */
const ScStudyKind *sc_study_kind_find (const char *name);

/* A copy of @kind's default params (params_size bytes, caller frees with free()); NULL when
 * out of memory. */
void *sc_study_params_dup_default (const ScStudyKind *kind);

/* The option @name of @kind, or NULL. */
const ScStudyOption *sc_study_option_find (const ScStudyKind *kind, const char *name);

/* The run an SC_STUDY_OPTION_RUN option of @kind names in @params (a @kind params struct):
 * the id, or 0 when the kind has no such option or it is not set. */
int64_t sc_study_params_run2 (const ScStudyKind *kind, const void *params);

/* Sets option @name of @params (a @kind params struct) from the text @value, checked:
 * SC_ERR_INVALID_ARG naming the option and the value when there is no such option, the
 * value is not a number of its type, is outside [min, max], is not one of the choices,
 * (a token) is not −1 nor below @n_vocab, or (heads) is not a list sc_study_heads_parse
 * takes. */
ScStatus sc_study_option_set (const ScStudyKind *kind, void *params, const char *name,
                              const char *value, uint32_t n_vocab, ScError *err);

/* kind->params_json with @buf checked; SC_ERR_INVALID_ARG when a need of the kind is
 * missing from @ctx (no ids for a run kind, no session, ...) or the kind refuses the
 * params. */
ScStatus sc_study_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx,
                               char *buf, size_t size, ScError *err);

/* kind->run after the needs are checked (as sc_study_params_json, plus fewer tokens than
 * min_tokens: SC_ERR_INVALID_ARG). */
ScStatus sc_study_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params,
                       void **out, ScError *err);

/* Parses the head list @text ("L.H,L.H,...": decimal layer and head numbers below 100000,
 * each pair written "23.3" or "L23.H3", commas between, no spaces) into @layer and @head (room for SC_STUDY_HEADS_MAX_COUNT
 * each), sorted by (layer, head) with repeats dropped: the count (>= 1), or −1 when @text is
 * NULL, empty, not such a list or holds more heads. With @canonical (may be NULL) the list's
 * canonical text, the heads in that order ("0.1,2.3"), into @canonical (SC_STUDY_HEADS_MAX
 * bytes; −1 when it does not fit). Does not know the model: the kind checks the layers and
 * heads when it runs. */
int sc_study_heads_parse (const char *text, int *layer, int *head,
                          char canonical[SC_STUDY_HEADS_MAX]);

/* Reports @fraction to @ctx's callback: false when the caller asked to cancel. */
bool sc_study_report (const ScStudyCtx *ctx, double fraction);

/* ------------------------------------------------------------------------------------ */
/* Shared by the study files                                                             */

/* One ablation's effect, against the clean run (sc-ablation-study.h defines each part). */
typedef struct {
  ScEffect next;      /* at the last position, on the target */
  double delta_loss;  /* Δ mean loss (nats) */
  bool flipped;       /* next.top1_ablated != next.top1_clean */
  double delta_logit_diff; /* with a contrast B: Δ (logit(target) − logit(B)); else NaN */
} ScAblationEffect;

/* What every ablation study checks before its first run: a session and model, at least
 * @min_n ids, each in the vocabulary, and @target −1 (the clean top-1) or in it. */
ScStatus sc_study_check_ids (ScSession *session, const ScModel *model, const int32_t *ids, int n,
                             int min_n, int target, ScError *err);

/* The residuals @session kept of its last run (keep_residuals), entering each of the @L
 * layers at its @n positions, into @out ((L, n, E) floats). Errors: those of
 * sc_session_residual. Shared by activation patching and causal tracing. */
ScStatus sc_study_kept_residuals (const ScSession *session, int L, int n, int E, float *out,
                                  ScError *err);

/* The clean run's measures from its (n, V) @logits: the target (@want_target, or the clean
 * top-1 when −1), the top-1, ln p(target) at n − 1 and the mean next-token loss over
 * q = 1 .. n − 1 (NaN when n == 1). SC_ERR_INVALID_ARG when the logits hold a NaN. */
ScStatus sc_study_clean_measures (const float *logits, const int32_t *ids, int n, int V,
                                  int want_target, int *target, int *top1, double *logp,
                                  double *loss, ScError *err);

/* The clean run's per-position losses (n − 1), computed once per study, followed by room for
 * an ablated run's (the @losses block of sc_study_same_ids_effect): every ablation of the
 * same ids is set against them, so a sweep pays one log-sum-exp over the vocabulary per
 * position and variant instead of two. *@out NULL when n < 2 (no loss); caller frees. */
ScStatus sc_study_clean_losses (const float *clean, const int32_t *ids, int n, int V,
                                double **out, ScError *err);

/* The effect of going from @clean to @ablated, two (n, V) logit blocks of the same @ids:
 * the next-token effect on @target at position n − 1, Δ mean loss over q = 1 .. n − 1
 * (NaN when n == 1) and the flip. @losses holds the clean run's n − 1 token losses
 * (sc_token_losses) followed by room for the ablated run's n − 1. The same numbers as
 * sc_delta_loss_logits (clean, ablated, ...), which computes both sides each time. */
ScStatus sc_study_same_ids_effect (const float *clean, const float *ablated, const int32_t *ids,
                                   int n, int V, int target, double *losses,
                                   ScAblationEffect *e, ScError *err);

/* logit(@target) − logit(@contrast) of one logit row, in double; NaN when @contrast < 0. */
double sc_study_logit_diff (const float *row, int target, int contrast);

/* Checks a contrast for @target (the resolved id, never −1) in a vocabulary of @V: −1 (none)
 * or an id in it other than the target. */
ScStatus sc_study_check_contrast (int contrast, int target, int V, ScError *err);

/* Ablation effects in the store (the head sweep's, token leave-one-out's, the layer
 * sweep's): each effect as SC_STUDY_N_EFFECT_METRICS values named sc_study_effect_metrics
 * — "delta-logp", "tv", "jsd", "delta-loss", "flip" (0/1), "top1" (the ablated top-1 id;
 * "flip" and "top1" NaN when not measured) — and the clean run's numbers as the series
 * "clean": pos 0 the target, 1 ln p_clean(target), 2 the clean top-1, 3 the clean mean
 * loss, 4 n. */
#define SC_STUDY_N_EFFECT_METRICS 6
extern const char *const sc_study_effect_metrics[SC_STUDY_N_EFFECT_METRICS];
/* With a contrast, one metric more (ScAblationEffect.delta_logit_diff), written only then,
 * and the "clean" series' pos 5 (the contrast) and 6 (the clean logit difference). */
#define SC_STUDY_CONTRAST_METRIC "delta-logit-diff"
ScStatus sc_study_add_contrast (ScStoreStudy *s, int contrast, double logit_diff, ScError *err);
/* Reads the contrast from "clean" (pos 5, 6): *@contrast −1 and *@logit_diff NaN when there
 * is none; false when it is out of range (outside the vocabulary, the target itself, a
 * difference not finite, one of the two without the other). */
bool sc_study_read_contrast (const ScStoreStudyData *d, uint32_t n_vocab, int target,
                             int *contrast, double *logit_diff);

/* @e's values in the order of sc_study_effect_metrics. */
void sc_study_effect_values (const ScAblationEffect *e, double v[SC_STUDY_N_EFFECT_METRICS]);
/* The index of metric @name, or −1. */
int sc_study_effect_metric_index (const char *name);
/* Sets metric @k of @e from a stored value (the clean numbers fill what it implies); false
 * when the value is out of range (a flip other than 0/1, a top-1 outside the vocabulary). */
bool sc_study_effect_set (ScAblationEffect *e, int k, double v, int top1_clean, double logp_clean,
                          uint32_t n_vocab);
/* Adds the "clean" series to @s. */
ScStatus sc_study_add_clean (ScStoreStudy *s, int target, double logp, int top1, double loss,
                             int n, ScError *err);
/* Reads the "clean" series of @d: false when it is missing or out of range (a target or
 * top-1 outside the vocabulary, n outside 1 .. SC_STORE_MAX_TOKENS). */
bool sc_study_read_clean (const ScStoreStudyData *d, uint32_t n_vocab, int *target, double *logp,
                          int *top1, double *loss, int *n);
/* ------------------------------------------------------------------------------------ */
/* Validation of a stored study (issue 25, item 7)                                        */
/*
 * A stored study is checked as the capture tables are before it is reused: its rows are
 * unique, it holds every row its kind and parameters call for, each value is in its range,
 * and it agrees with its parameters and its run. The store's reader (sc_store_read_study)
 * checks what any study obeys (indices, names, value types); these check what a kind's
 * loader knows. Every check fails with SC_ERR_FORMAT naming the study (its id and kind),
 * the row and the value: the caller says the study is refused and computes it again. */

/* The values one metric (of study_heads) or one series (of study_series) may hold. */
typedef struct {
  const char *name;
  double lo, hi;   /* every value in [lo, hi] */
  bool nan_ok;     /* NaN (NULL in the store) allowed: a value not measured */
} ScStudyValueRule;

/* The rules of the SC_STUDY_N_EFFECT_METRICS effect metrics (sc_study_effect_metrics' order):
 * TV in [0, 1], JSD in [0, ln 2], flip 0/1, Δ log p and Δ loss finite, each NaN when not
 * measured; "top1" is checked against the vocabulary by sc_study_effect_set. */
extern const ScStudyValueRule sc_study_effect_rules[SC_STUDY_N_EFFECT_METRICS];
/* SC_STUDY_CONTRAST_METRIC's: any value; NaN where nothing was measured (token
 * leave-one-out's last position). */
extern const ScStudyValueRule sc_study_contrast_rule;

/* No two head rows of @d share (layer, head, metric) and no two series rows share (series,
 * pos). The store's primary keys say so, but a table rebuilt without them held duplicates,
 * of which the last read silently won (a DLA of +99 beside the real one). Every loader
 * reads through sc_study_find_and_read, which calls this. */
ScStatus sc_study_check_unique (const ScStoreStudyData *d, ScError *err);

/* Each of the (d->n_layers × d->n_heads) heads that @wanted marks (NULL: every head) holds
 * each of the @n_rules metrics of @rules exactly once, in its range; a head not wanted holds
 * none of them. Metrics not in @rules are not looked at. (A sweep with the heads of layers
 * 5 and up missing was reused as complete: its top induction head became 0.8, not 17.4.) */
ScStatus sc_study_check_heads (const ScStoreStudyData *d, const ScStudyValueRule *rules,
                               int n_rules, const bool *wanted, ScError *err);

/* Series @rule->name of @d holds positions 0 .. @n − 1 exactly, each in @rule's range. */
ScStatus sc_study_check_series (const ScStoreStudyData *d, const ScStudyValueRule *rule, int n,
                                ScError *err);

/* A target that @params_json names ("target": an id; null is the clean top-1) is the
 * @target the study's clean series holds. */
ScStatus sc_study_check_target (const ScStoreStudyData *d, const char *params_json, int target,
                                ScError *err);

/* The contrast @params_json names ("contrast": an id; absent: none) is the @contrast (−1:
 * none) the study's clean series holds. */
ScStatus sc_study_check_contrast_params (const ScStoreStudyData *d, const char *params_json,
                                         int contrast, ScError *err);

/* The latest complete study of @kind with @params_json of the model with @sha256, read and
 * checked by sc_study_check_unique: SC_ERR_NOT_FOUND when there is none, SC_ERR_FORMAT when
 * it holds a row twice (*@study_id is then set, so that the refusal can name it). */
ScStatus sc_study_find_and_read (ScStore *store, const char *kind,
                                 const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
                                 const char *params_json, ScStoreStudyData **d,
                                 int64_t *study_id, ScError *err);

/* The unsigned decimal after "@key": in the params text @params; false when there is none
 * (or it is not a number). Params texts are the engine's own canonical JSON, so a plain
 * search finds a key; a text from an untrusted store that lacks one is refused by the
 * caller. */
bool sc_study_params_uint (const char *params, const char *key, uint64_t *out);

/* Maps stored as lower triangles in one series (the norms' and the mixing maps): the
 * position of (i, j <= i) of map @k of @n tokens, k·T + i(i+1)/2 + j with T = n(n+1)/2, and
 * back (false when @pos is negative). */
int64_t sc_study_tri_pos (int k, int n, int i, int j);
/* The one value of series @name at pos 0 of @d (a study's "n", "top1"), or NaN. */
double sc_study_series_at0 (const ScStoreStudyData *d, const char *name);
bool sc_study_tri_unpos (int64_t pos, int n, int *k, int *i, int *j);

#ifdef __cplusplus
}
#endif
