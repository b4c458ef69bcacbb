/* saccade-ablation.h — the studies of a stored run as both faces use them: the head sweeps
 * (zero- and mean-ablation) and token leave-one-out of engine/study/sc-ablation-study.h,
 * attention permutation (sc-permutation-study.h), erasure curves (sc-erasure-study.h),
 * direct logit attribution (sc-dla.h), faithfulness (saccade-faithfulness.h) and the layer
 * sweep (sc-layer-study.h), computed
 * on the run's tokens and stored in the capture store as a study with the canonical
 * parameters of its engine file (the same as the `saccade` verb's), or read back from there
 * when the same model file (by SHA-256) studied the same run with the same parameters
 * before. The window's Ablation page calls saccade_ablation_async(); a command line can
 * call saccade_ablation_get() on its own thread.
 *
 * Rules kept here, once for every caller:
 *   - the run must still be in the database, whole, and captured with the model given (by
 *     its file's SHA-256): a deleted run is refused as "run 17 is no longer in the
 *     database", before any work and again before storing (a run deleted while its study
 *     ran leaves no study behind);
 *   - a study is stored in one transaction after it is computed, so Cancel (or any
 *     failure) leaves no study of that kind in the database, not even a 'writing' row;
 *   - the store is opened by the calling thread and closed before returning (one
 *     connection per thread, engine/store/sc-store.h); nothing of it is handed out.
 *
 * Not here: the definitions of the effects (sc-ablation-study.h, docs/metrics.md
 * "Ablation studies"), drawing (ui/figures/saccade-figure-effects.c).
 */
#pragma once

#include <gio/gio.h>

#include "app/core/saccade-capture-task.h"
#include "app/core/saccade-faithfulness.h"
#include "app/core/saccade-study.h"
#include "engine/analysis/sc-rank.h"
#include "engine/study/sc-ablation-first.h"
#include "engine/study/sc-ablation-study.h"
#include "engine/study/sc-dla.h"
#include "engine/study/sc-erasure-study.h"
#include "engine/study/sc-layer-study.h"
#include "engine/study/sc-lens-study.h"
#include "engine/study/sc-mixing-study.h"
#include "engine/study/sc-patch-study.h"
#include "engine/study/sc-path-patch.h"
#include "engine/study/sc-permutation-study.h"
#include "engine/study/sc-qk-study.h"

G_BEGIN_DECLS

/* The studies of a run the window and the command line know, each with the store's kind
 * text and params exactly as the `saccade` verb that makes it writes them, so a study made
 * by one face is found by the other:
 *   HEADS       ablate-heads, mode zero            `saccade ablate RUN --heads`
 *   TOKENS      ablate-tokens                      `saccade ablate RUN --tokens`
 *   HEADS_MEAN  ablate-heads, mode mean, the means of SACCADE_REFERENCE_SET (computed once
 *               per model file and reused, saccade-head-means.h)  `--heads --mean`
 *   PERMUTE     ablate-permute, N and seed         `--permute N [--seed S]`
 *   ERASURE     ablate-erasure, kind, seeds, seed  `--erasure [--kind K] [--seeds R]`
 *   DLA         dla                                `saccade dla RUN`
 *   FAITH       faithfulness (TV, mask, top-3)     `saccade faithfulness RUN`
 *   LAYERS      ablate-layers                      `saccade study layers RUN`
 *   PATCH       patch, against a second run        `saccade study patch RUN --corrupted R2
 *               [--target A] [--contrast B] [--direction D] [--what W]`
 *   ATTR_PATCH  attribution-patch, as PATCH        `saccade study attribution-patch RUN ...`
 *               (needs a backward pass)
 *   LENS        logit-lens, target and contrast    `saccade study lens RUN [--target A]
 *               [--contrast B]`
 *   MIXING_VZ   context-mixing, value zeroing      `saccade study mixing RUN --method
 *   MIXING_ALTI context-mixing, ALTI               value-zeroing|alti` (each layer's map and
 *               their rollout)
 * New kinds are added at the end. */
typedef enum {
  SACCADE_ABLATION_HEADS,   /* the head sweep: each head zero-ablated alone */
  SACCADE_ABLATION_TOKENS,  /* token leave-one-out: each token masked, then dropped */
  SACCADE_ABLATION_HEADS_MEAN, /* the head sweep: each head mean-ablated alone */
  SACCADE_ABLATION_PERMUTE, /* attention permutation: N seeded permutations per head */
  SACCADE_ABLATION_ERASURE, /* erasure curves: tokens erased until the top-1 flips */
  SACCADE_ABLATION_DLA,     /* direct logit attribution of each head */
  SACCADE_ABLATION_FAITH,   /* attention against leave-one-out importance */
  SACCADE_ABLATION_LAYERS,  /* the layer sweep: each layer's attention zero-ablated */
  SACCADE_ABLATION_PATCH,   /* activation patching between the run and a corrupted run */
  SACCADE_ABLATION_ATTR_PATCH, /* its first-order estimate from one backward pass */
  SACCADE_ABLATION_LENS,    /* the logit lens: each layer's residual through the head */
  SACCADE_ABLATION_MIXING_VZ,   /* context mixing by value zeroing, rolled out */
  SACCADE_ABLATION_MIXING_ALTI, /* context mixing by ALTI, rolled out */
  SACCADE_ABLATION_PATH_PATCH,  /* path patching: senders into receivers' q, k or v */
  SACCADE_ABLATION_QK,          /* QK attribution of one head's score at (query, key) */
  SACCADE_ABLATION_HEADS_FIRST, /* the head sweep after a first-order first pass: every
                                 * head estimated, the top SACCADE_ABLATION_DEFAULT_FIRST_TOP
                                 * zero-ablated exactly (sc-ablation-first.h) */
  SACCADE_ABLATION_N_KINDS
} SaccadeAblationKind;

/* The engine's study kind (engine/study/sc-study.h); NULL outside the enum. */
const ScStudyKind *saccade_ablation_study_kind (SaccadeAblationKind kind);
/* The store's kind text (SC_ABLATION_KIND_HEADS, ...; HEADS_MEAN is "ablate-heads" too, told
 * apart by its params); NULL outside the enum. */
const char *saccade_ablation_kind_id (SaccadeAblationKind kind);
/* The short names "heads", "tokens", "heads-mean", "permute", "erasure", "dla",
 * "faithfulness", "layers", "patch", "lens", "mixing" (both methods) (the engine kinds'
 * names); NULL outside the enum. */
const char *saccade_ablation_kind_name (SaccadeAblationKind kind);
/* Parses a short name, or a store kind text other than "ablate-heads"'s mean form and
 * "mixing"'s ALTI (the first kind of a name wins). */
gboolean saccade_ablation_kind_from_id (const char *id, SaccadeAblationKind *out);

/* The defaults of the verbs' options, which the window uses as well. */
#define SACCADE_ABLATION_DEFAULT_PERMUTATIONS 8 /* page; the CLI asks for N */
#define SACCADE_ABLATION_DEFAULT_SEEDS 8        /* `--erasure` without --seeds */
#define SACCADE_ABLATION_DEFAULT_FIRST_TOP 30   /* HEADS_FIRST: heads ablated exactly */

/* What a study is asked for; a field a kind does not use is ignored (and not part of its
 * stored params). Zero-initialised it is every verb's default but for n_permutations,
 * whose 0 means SACCADE_ABLATION_DEFAULT_PERMUTATIONS, and n_random, whose 0 is zero random
 * orderings (as `--seeds 0`): say SACCADE_ABLATION_DEFAULT_SEEDS for the verb's default, and
 * contrast, whose 0 is token 0: say −1 for the verb's default. */
typedef struct {
  int target;              /* the token measured, or −1: the clean top-1 */
  int n_permutations;      /* PERMUTE: N, 1 .. SC_PERMUTATION_MAX_N (0: the default) */
  guint64 seed;            /* PERMUTE, ERASURE: the base seed (`--seed`, default 0) */
  ScEraseKind erase_kind;  /* ERASURE: mask (default) or drop */
  ScFaithErase faith_kind; /* FAITH: its reference, leave-one-out by masking (default), by
                            * dropping, or causal tracing */
  int n_random;            /* ERASURE: random orderings, 0 .. SC_ERASURE_MAX_SEEDS */
  /* PATCH (sc-patch-study.h): the corrupted run (a stored run of the same model and
   * length; 0: none named, which the study refuses), ScPatchDirection and ScPatchWhat (0:
   * denoise, heads), and the contrast token B of its metric logit(target) − logit(B) (−1:
   * the corrupted run's top-1); DLA, LENS, the head sweeps and token leave-one-out take the
   * same B (−1: none). PATH_PATCH takes the run, target, contrast and direction too (not
   * `what`). */
  gint64 corrupted_run;
  int contrast;
  int patch_direction;
  int patch_what;
  /* PATH_PATCH (sc-path-patch.h): the sender heads "L.H,L.H" (sc_study_heads_parse; ""
   * is none, which the study refuses) and the receivers' ScPathComponent. */
  char senders[SC_STUDY_HEADS_MAX];
  int path_component;
  /* QK (sc-qk-study.h): the head's layer (−1: the middle layer), the query head, the query
   * position (−1: the last) and the key position (−1: the key the head attends most from
   * that query in the run's stored attention, read in the worker). Zero-initialised:
   * layer 0, head 0, query 0, key 0. */
  int qk_layer, qk_head, qk_query, qk_key;
} SaccadeAblationParams;


typedef struct {
  SaccadeAblationKind kind;
  gint64 run_id;
  SaccadeStudy *study;        /* owned: the study (NULL for FAITH); the typed pointers below
                               * borrow its result */
  /* The result, owned; exactly one is set (heads for both head sweeps), but for
   * PATH_PATCH, whose patch is its path's grid (borrowed: the metric on both runs and the
   * receivers' m, as activation patching's). */
  ScHeadSweepResult *heads;   /* HEADS, HEADS_MEAN; HEADS_FIRST: first->sweep (NaN where a
                               * head was only estimated) */
  ScHeadFirstResult *first;   /* HEADS_FIRST */
  ScTokenLooResult *tokens;   /* TOKENS */
  ScPermutationResult *perm;  /* PERMUTE */
  ScErasureResult *erasure;   /* ERASURE */
  ScDlaResult *dla;           /* DLA */
  ScLayerSweepResult *layers; /* LAYERS */
  ScPatchResult *patch;       /* PATCH, ATTR_PATCH (estimated); PATH_PATCH: path->grid */
  ScLensResult *lens;         /* LENS */
  ScMixingResult *mixing;     /* MIXING_VZ, MIXING_ALTI */
  ScPathPatchResult *path;    /* PATH_PATCH */
  ScQkResult *qk;             /* QK */
  SaccadeFaithfulness *faith; /* FAITH (its head level when a zero-ablation sweep is stored) */
  /* DLA: the stored zero-ablation head sweep of the same run and target, read when there is
   * one (as `saccade dla` finds it), and Spearman ρ of DLA against its Δ log p over the
   * heads; NULL / NaN when none is stored. */
  ScHeadSweepResult *dla_sweep;
  ScSpearman dla_rho;
  /* FAITH: the best head (highest τ-b with leave-one-out; ties: the lowest index; −1 when
   * no head's τ is defined) and its last query's attention over the items (n_items), from
   * the computed rows or, for a study read back, from the run's stored head (fp16). */
  int faith_best_head;
  double *faith_best_row;
  /* PATCH, ATTR_PATCH, PATH_PATCH: the corrupted run it was patched against. */
  gint64 patch_corrupted;
  /* ATTR_PATCH: the stored exact patching of the same runs and parameters when there is
   * one (read back, never computed for it), its study id, and Spearman ρ of the estimates
   * against its effects over the cells; NULL / 0 / NaN when none is stored. */
  SaccadeStudy *patch_exact;
  gint64 patch_exact_id;
  ScSpearman patch_rho;
  /* HEADS_MEAN: the reference means were computed now (not read from the store), in
   * means_seconds (inside seconds). */
  gboolean means_computed;
  double means_seconds;
  gint64 study_id;            /* in the store; 0 when it could not be stored */
  gint64 created_ms;          /* when the study was stored (Unix ms); 0 when it was not */
  gboolean reused;            /* read back rather than computed */
  double seconds;             /* computing time (0 when reused) */
} SaccadeAblation;

void saccade_ablation_free (SaccadeAblation *a); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeAblation, saccade_ablation_free)

/* The clean run's numbers the study measured against, whichever its kind (DLA has no
 * log-probability: its logp_clean is NaN). */
int saccade_ablation_target (const SaccadeAblation *a);
int saccade_ablation_top1_clean (const SaccadeAblation *a);
double saccade_ablation_logp_clean (const SaccadeAblation *a);

/* The effects a study reports for each ablation (sc-effect.h, docs/metrics.md): what the
 * figures, the ranked heads and the CSV columns show. */
typedef enum {
  SACCADE_ABLATION_METRIC_DELTA_LOGP, /* Δ log p(target) (nats) */
  SACCADE_ABLATION_METRIC_TV,         /* total variation of the next-token distribution */
  SACCADE_ABLATION_METRIC_JSD,        /* Jensen–Shannon divergence (nats) */
  SACCADE_ABLATION_METRIC_DELTA_LOSS, /* Δ mean loss over the sentence (nats) */
  /* Δ (logit(target) − logit(B)) at the measured position, with a contrast B (the head
   * sweeps, token leave-one-out); NaN without one, and for the other studies */
  SACCADE_ABLATION_METRIC_DELTA_LOGIT_DIFF,
  SACCADE_ABLATION_N_METRICS
} SaccadeAblationMetric;

/* "delta_logp", "tv", "jsd", "delta_loss", "delta_logit_diff" (CSV columns, page.metric);
 * NULL outside. */
const char *saccade_ablation_metric_id (SaccadeAblationMetric m);
double saccade_ablation_effect_value (const ScAblationEffect *e, SaccadeAblationMetric m);

/* Sorts the @n indices of @order by @key[index], largest first, NaN last (as −∞), ties by
 * the lower index: the order of every ranked table of heads (the sweeps, the permutation,
 * the models compared by head type). */
void saccade_rank_by_key (int *order, int n, const double *key);

/* The heads of @r (layer-major indices) ordered by |value| of @m, largest first, NaN last,
 * ties by index: the ranked table's order and `saccade ablate`'s. Caller frees. */
int *saccade_ablation_rank_heads (const ScHeadSweepResult *r, SaccadeAblationMetric m);

/* Every number of @a as CSV (columns in docs/metrics.md, "The Ablation page and its
 * exports"): one row per head (the head sweeps; permutation: each quantile of each metric;
 * DLA: with the stored zero-ablation effect beside it), per token (leave-one-out), per
 * ordering and step (erasure: ordering,seed_index,k,erased_pos,p_target,tv,top1) or per
 * compared token (faithfulness: saccade_faithfulness_run_csv's columns), per patched cell
 * (patching: saccade_patch_csv's columns) or per lens entry (layer,logp,p,rank,top1,m,
 * contrast: l = 0 the embedding, l = n_layers the model's output) or per cell j <= i of
 * each context-mixing map (map,query,query_label,key,key_label,share,mix,method: map a
 * layer or "rollout"), per head of the receivers' grid (path patching: layer,head,receiver,
 * m,effect,target,contrast,m_clean,m_corrupted,direction,senders,component,run,corrupted,
 * study; receiver 0 where no path reaches the head: m is the base run's) or per pair of components
 * (QK attribution: query_component,key_component,part, then layer,head,query,key,score,
 * sum_of_parts,run,study), the clean run's numbers
 * and the ids repeated on each but faithfulness's; NaN as an empty field (but
 * faithfulness's "nan"). Token rows name their token by @tokens[j].id and @labels[j]
 * (display labels), both of @n entries; either may be NULL, or @n may differ from the
 * study's length: then id −1 and an empty label. */
GBytes *saccade_ablation_csv (const SaccadeAblation *a, const ScStoreToken *tokens,
                              const char *const *labels, int n);


/* DLA: the stored zero-ablation head sweep of run @run_id whose target is @d's (tried with
 * the target named and, when it is the clean top-1, as the default target: as `saccade dla`
 * and the Ablation page find it) into *@sweep (caller frees; NULL when none is stored),
 * its study id into *@sweep_id (may be NULL), and Spearman ρ of DLA against its Δ log p
 * over the heads into *@rho (NaN without a sweep). None for a DLA with a contrast: a sweep's
 * Δ log p is of the target alone. */
void saccade_dla_find_sweep (ScStore *store, const ScModelInfo *info, const ScStoreModel *ident,
                             gint64 run_id, const ScDlaResult *d, ScHeadSweepResult **sweep,
                             gint64 *sweep_id, ScSpearman *rho);

/* Study @kind of run @run_id of the store at @db_path with @params (NULL: every default), on
 * @model (identified by @ident, whose strings it borrows; ident->path is the model file).
 * HEADS_MEAN first gets the reference means (saccade_head_means_get: read from the store,
 * else computed on @session and stored — the first 30 % of the progress when computed).
 * FAITH never computes a head sweep: its head level is there when a zero-ablation sweep
 * of the run is stored. Unless @flags has RECOMPUTE, the latest complete
 * stored study with the same parameters is read back; else (and unless STORED_ONLY) it is
 * computed on @session (bound to @model, used by no one else during the call; may be NULL
 * with STORED_ONLY) and stored. Runs on the calling thread (a worker, for the window).
 * Errors: G_IO_ERROR_INVALID_ARGUMENT (no database, a run of another model file),
 * G_IO_ERROR_NOT_FOUND (the run is not in the database; STORED_ONLY and no such study),
 * G_IO_ERROR_CANCELLED when @cancellable fires (the study's progress callback then returns
 * false), SACCADE_ERROR with the engine's or the store's message. A store that cannot be
 * written is only read; a failure to store is reported in *@store_warning (may be NULL;
 * caller frees) and the computed result still returned. */
SaccadeAblation *saccade_ablation_get (ScModel *model, const ScStoreModel *ident,
                                       ScSession *session, const char *db_path, gint64 run_id,
                                       SaccadeAblationKind kind, const SaccadeAblationParams *params,
                                       SaccadeStudyFlags flags,
                                       SaccadeProgress progress, gpointer user_data,
                                       GCancellable *cancellable, char **store_warning,
                                       GError **error);


/* saccade_ablation_get() in a worker on @model's session (its lock held for the whole
 * study: captures and other studies on the same model wait for it; a lookup with
 * STORED_ONLY takes it only for FAITH, whose head level may run one clean pass for the
 * direct logit attribution). @params is copied. @progress (may be NULL) is called on
 * the thread-default main context with @progress_data, which must stay valid until
 * @callback runs (pass @source_object's self). A failure to store is logged. */
void saccade_ablation_async (gpointer source_object, SaccadeLoadedModel *model,
                             const char *db_path, gint64 run_id, SaccadeAblationKind kind,
                             const SaccadeAblationParams *params, SaccadeStudyFlags flags,
                             GCancellable *cancellable, SaccadeJobProgress progress,
                             gpointer progress_data, GAsyncReadyCallback callback,
                             gpointer user_data);
/* The result (caller frees), or NULL with @error set: G_IO_ERROR_CANCELLED only when the
 * study saw the cancel (and stored nothing); a study that finished before it did was
 * stored and is returned. */
SaccadeAblation *saccade_ablation_finish (GAsyncResult *result, GError **error);

G_END_DECLS
