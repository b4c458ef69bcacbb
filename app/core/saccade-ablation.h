/* saccade-ablation.h — the ablation studies of a stored run as both faces use them: the
 * head sweep and token leave-one-out of engine/study/sc-ablation-study.h, computed on the
 * run's tokens and stored in the capture store as a study with its canonical parameters
 * (sc_ablation_params_json: study version, run, target, mode), or read back from there
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
#include "engine/study/sc-ablation-study.h"

G_BEGIN_DECLS

/* The studies of a run the window and the command line know. New study kinds (attention
 * permutation, erasure curves, ...) are added at the end. */
typedef enum {
  SACCADE_ABLATION_HEADS,   /* the head sweep: each head zero-ablated alone */
  SACCADE_ABLATION_TOKENS,  /* token leave-one-out: each token masked, then dropped */
  SACCADE_ABLATION_N_KINDS
} SaccadeAblationKind;

/* The store's kind text (SC_ABLATION_KIND_HEADS, ...); NULL outside the enum. */
const char *saccade_ablation_kind_id (SaccadeAblationKind kind);
/* Parses a kind text or the short names "heads" and "tokens". */
gboolean saccade_ablation_kind_from_id (const char *id, SaccadeAblationKind *out);

typedef enum {
  SACCADE_ABLATION_DEFAULT = 0,
  SACCADE_ABLATION_STORED_ONLY = 1 << 0, /* only read a stored study: never compute */
  SACCADE_ABLATION_RECOMPUTE = 1 << 1,   /* compute even when a study is stored */
} SaccadeAblationFlags;

typedef struct {
  SaccadeAblationKind kind;
  gint64 run_id;
  ScHeadSweepResult *heads;   /* SACCADE_ABLATION_HEADS: owned; else NULL */
  ScTokenLooResult *tokens;   /* SACCADE_ABLATION_TOKENS: owned; else NULL */
  gint64 study_id;            /* in the store; 0 when it could not be stored */
  gint64 created_ms;          /* when the study was stored (Unix ms); 0 when it was not */
  gboolean reused;            /* read back rather than computed */
  double seconds;             /* computing time (0 when reused) */
} SaccadeAblation;

void saccade_ablation_free (SaccadeAblation *a); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeAblation, saccade_ablation_free)

/* The clean run's numbers the study measured against, whichever its kind. */
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
  SACCADE_ABLATION_N_METRICS
} SaccadeAblationMetric;

/* "delta_logp", "tv", "jsd", "delta_loss" (CSV columns, page.metric); NULL outside. */
const char *saccade_ablation_metric_id (SaccadeAblationMetric m);
double saccade_ablation_effect_value (const ScAblationEffect *e, SaccadeAblationMetric m);

/* The heads of @r (layer-major indices) ordered by |value| of @m, largest first, NaN last,
 * ties by index: the ranked table's order and `saccade ablate`'s. Caller frees. */
int *saccade_ablation_rank_heads (const ScHeadSweepResult *r, SaccadeAblationMetric m);

/* Every number of @a as CSV (columns in docs/metrics.md, "The Ablation page and its
 * exports"): one row per head or per token, the clean run's numbers and the ids repeated on
 * each; NaN as an empty field. Leave-one-out rows name their token by @tokens[j].id and
 * @labels[j] (display labels), both of @n entries; either may be NULL, or @n may differ
 * from the study's length: then id −1 and an empty label. */
GBytes *saccade_ablation_csv (const SaccadeAblation *a, const ScStoreToken *tokens,
                              const char *const *labels, int n);

/* Called with the fraction done (0..1], on the thread that runs the study. */
typedef void (*SaccadeAblationProgress) (double fraction, gpointer user_data);

/* Study @kind of run @run_id of the store at @db_path with @params (target, mode; its
 * head_mean and full_recompute as sc-ablation-study.h says), on @model (identified by
 * @ident, whose strings it borrows). Unless @flags has RECOMPUTE, the latest complete
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
                                       SaccadeAblationKind kind, const ScAblationParams *params,
                                       SaccadeAblationFlags flags,
                                       SaccadeAblationProgress progress, gpointer user_data,
                                       GCancellable *cancellable, char **store_warning,
                                       GError **error);

/* Called on the main loop with the fraction of the study done, coalesced: at most one
 * call is pending at a time and it reports the latest fraction. */
typedef void (*SaccadeAblationTaskProgress) (gpointer user_data, double fraction);

/* saccade_ablation_get() in a worker on @model's session (its lock held for the whole
 * study: captures and other studies on the same model wait for it). @params is copied
 * (head_mean is borrowed and must outlive the task). @progress (may be NULL) is called on
 * the thread-default main context with @progress_data, which must stay valid until
 * @callback runs (pass @source_object's self). A failure to store is logged. */
void saccade_ablation_async (gpointer source_object, SaccadeLoadedModel *model,
                             const char *db_path, gint64 run_id, SaccadeAblationKind kind,
                             const ScAblationParams *params, SaccadeAblationFlags flags,
                             GCancellable *cancellable, SaccadeAblationTaskProgress progress,
                             gpointer progress_data, GAsyncReadyCallback callback,
                             gpointer user_data);
/* The result (caller frees), or NULL with @error set. */
SaccadeAblation *saccade_ablation_finish (GAsyncResult *result, GError **error);

G_END_DECLS
