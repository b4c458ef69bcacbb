/* saccade-study.h — a study of a stored run as both faces get it: the one path that reads
 * the run and checks it, reads back a stored study, else computes it and stores it, for
 * any ScStudyKind (engine/study/sc-study.h). The window calls saccade_study_get_async();
 * the command line calls saccade_study_get() on its own thread. Each kind's extras (the
 * stored sweep beside a DLA, the best head of a faithfulness study, …) are added by its
 * outputs file on top of what this returns.
 *
 * Rules kept here, once for every kind:
 *   - the run must still be in the database, whole, and captured with the model given (by
 *     its file's SHA-256), and every token id must be in the vocabulary: a deleted run is
 *     refused as "Run 17 is no longer in the database", before any work and again before
 *     storing (a run deleted while its study ran leaves no study behind);
 *   - a stored study is reused only when its params text is the same, it describes the
 *     run (its length) and its kind's loader accepts it (sc-study.h, "Validation"); one
 *     refused is said so with g_message ("stored KIND study ID is refused (WHY); computing
 *     it again", on stderr from the command line) before it is computed anew, and the
 *     refusal is kept in SaccadeStudy.refused;
 *   - a study is stored in one transaction after it is computed, so Cancel (or any
 *     failure) leaves no study of that kind in the database, not even a 'writing' row; a
 *     store that cannot be written is only read, and the computed result still returned;
 *   - the store is opened by the calling thread and closed before returning (one
 *     connection per thread, engine/store/sc-store.h); nothing of it is handed out.
 */
#pragma once

#include <gio/gio.h>

#include "app/core/saccade-capture-task.h"
#include "app/core/saccade-job.h"
#include "engine/store/sc-store.h"
#include "engine/study/sc-study.h"

G_BEGIN_DECLS

typedef enum {
  SACCADE_STUDY_DEFAULT = 0,
  SACCADE_STUDY_STORED_ONLY = 1 << 0, /* only read a stored study: never compute */
  SACCADE_STUDY_RECOMPUTE = 1 << 1,   /* compute even when a study is stored */
  /* with STORED_ONLY: read the study back as the run's own model stored it — the run's
   * model row (its file's SHA-256, layers, heads, vocabulary) stands for the model given,
   * which may be another one (the window shows such studies read-only) */
  SACCADE_STUDY_RUN_MODEL = 1 << 2,
} SaccadeStudyFlags;

/* The model a stored run was captured with, as the store describes it: the run's row and,
 * borrowing its strings, the model's identity and the part of its description that reading
 * a stored study checks (name, arch_name, n_layers, n_heads, n_kv_heads, head_dim,
 * n_vocab; the rest 0). */
typedef struct {
  ScStoreRunInfo run;
  ScStoreModel ident;
  ScModelInfo info;
} SaccadeRunModel;

/* Fills @out for run @run_id of @store. FALSE with @error: G_IO_ERROR_NOT_FOUND ("Run 7 is
 * no longer in the database"), SACCADE_ERROR (the store's message). */
gboolean saccade_run_model_read (ScStore *store, gint64 run_id, SaccadeRunModel *out,
                                 GError **error);
void saccade_run_model_clear (SaccadeRunModel *m); /* what @m owns, not @m */

/* A stored run, read and checked: its row, its tokens and their ids. */
typedef struct {
  ScStoreRunInfo run;
  ScStoreToken *tokens;   /* (n_tokens) */
  int32_t *ids;           /* (n_tokens), each in the model's vocabulary */
  int n_tokens;           /* >= 1 */
} SaccadeStudyRun;

void saccade_study_run_free (SaccadeStudyRun *r); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeStudyRun, saccade_study_run_free)

/* The one checked run reader: run @run_id of @store, captured with the model file @ident,
 * every token id below @info's vocabulary. NULL with @error: G_IO_ERROR_NOT_FOUND (the run
 * is not in the database: "there is no run 7 in @db_path (see `saccade runs`)" as the
 * command line says it, or, @db_path NULL, "Run 7 is no longer in the database" as the
 * window does of a run it listed), G_IO_ERROR_INVALID_ARGUMENT (another model file; no
 * tokens), SACCADE_ERROR (the store's message; SC_ERR_FORMAT naming a token out of the
 * vocabulary). */
SaccadeStudyRun *saccade_study_read_run (ScStore *store, const ScStoreModel *ident,
                                         const ScModelInfo *info, gint64 run_id,
                                         const char *db_path, GError **error);

/* The same on its own read-only connection to the store at @db_path, closed before
 * returning; G_IO_ERROR_NOT_FOUND "no capture store at @db_path" when there is no file. */
SaccadeStudyRun *saccade_study_read_run_at (const char *db_path, const ScStoreModel *ident,
                                            const ScModelInfo *info, gint64 run_id,
                                            GError **error);

/* What every face's result (SaccadeStudyFace, below) starts with, as its first member
 * `base`: the run it is of and where its study came from. The shared code (the verb's
 * runner, the window's study panel) reads it from any face's result. */
typedef struct {
  ScStoreRunInfo run;      /* the run's row (owned) */
  ScStoreToken *tokens;    /* (n_tokens), owned */
  int n_tokens;
  gint64 study_id;         /* 0 when not stored */
  gboolean reused;         /* the study was read back rather than computed */
  double seconds;          /* wall time of the whole call */
} SaccadeStudyFaceBase;

/* Frees what @base owns (not @base). */
void saccade_study_face_base_clear (SaccadeStudyFaceBase *base);

/* The same as saccade_study_read_run_at(), its row, tokens and length moved into @base
 * (its other members untouched). FALSE with @error, @base untouched. */
gboolean saccade_study_read_run_into (const char *db_path, const ScStoreModel *ident,
                                      const ScModelInfo *info, gint64 run_id,
                                      SaccadeStudyFaceBase *base, GError **error);

/* "Run %lld is no longer in the database" (G_IO_ERROR_NOT_FOUND). */
void saccade_study_set_run_gone (GError **error, gint64 run_id);

/* What every study's get function checks first: a database (a study belongs to a stored
 * run) and, unless it only reads back, a session. G_IO_ERROR_INVALID_ARGUMENT saying which
 * is missing (@name: the study, for the message). */
gboolean saccade_study_check_call (const char *name, const char *db_path, ScSession *session,
                                   SaccadeStudyFlags flags, GError **error);

/* One study of a run. */
typedef struct {
  const ScStudyKind *kind;
  gint64 run_id;
  int n_tokens;
  void *result;             /* owned: kind->result_free */
  char params_json[SC_STUDY_PARAMS_MAX]; /* as stored */
  gint64 study_id;          /* in the store; 0 when it could not be stored */
  gint64 created_ms;        /* when it was stored (Unix ms); 0 when it was not */
  gboolean reused;          /* read back rather than computed */
  double seconds;           /* computing time (0 when reused) */
  char *refused;            /* a stored study with these params that was refused (its
                             * message: malformed, or of another length), computed anew;
                             * else NULL */
  /* SC_STUDY_NEEDS_MEANS: the reference means were computed now (not read back), in
   * means_seconds (inside seconds). */
  gboolean means_computed;
  double means_seconds;
} SaccadeStudy;

void saccade_study_free (SaccadeStudy *s); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeStudy, saccade_study_free)

/* The result, taken out of @s (the caller frees it with s->kind->result_free). */
gpointer saccade_study_steal_result (SaccadeStudy *s);

/* Where study @s came from (its id, reused) into @base; returns @s's result, stolen
 * (saccade_study_steal_result: the caller's). For a face's get, after saccade_study_get. */
gpointer saccade_study_face_base_take (SaccadeStudyFaceBase *base, SaccadeStudy *s);

/* Study @kind of run @run_id of the store at @db_path with @params (NULL: the kind's
 * defaults), on @model (identified by @ident, whose strings it borrows; ident->path is the
 * model file). A kind that needs the reference means gets them first
 * (saccade_head_means_get: read back, else computed and stored — then the first 30 % of
 * the progress); one that needs the backward pass binds one to @session. Unless @flags has
 * RECOMPUTE, the latest complete stored study with the same params is read back; else (and
 * unless STORED_ONLY) it is computed on @session (bound to @model, used by no one else
 * during the call; may be NULL with STORED_ONLY) and stored. Runs on the calling thread.
 * Errors: G_IO_ERROR_INVALID_ARGUMENT (no database, a run of another model file, too few
 * tokens, params out of range), G_IO_ERROR_NOT_FOUND (the run is not in the database;
 * STORED_ONLY and no such study), G_IO_ERROR_CANCELLED when @cancellable fires (the
 * study's progress then returns false), SACCADE_ERROR with the engine's or the store's
 * message. A failure to store is reported in *@store_warning (may be NULL; caller frees). */
SaccadeStudy *saccade_study_get (const ScStudyKind *kind, const void *params, ScModel *model,
                                 const ScStoreModel *ident, ScSession *session,
                                 const char *db_path, gint64 run_id, SaccadeStudyFlags flags,
                                 SaccadeProgress progress, gpointer user_data,
                                 GCancellable *cancellable, char **store_warning,
                                 GError **error);

/* The same for a kind that studies a set of sentences (SC_STUDY_NEEDS_SENTENCES: the
 * reference means): @sentences[s] is @lengths[s] ids. @db_path and @ident may be NULL
 * (computed, not kept); a store that cannot be opened is not used either. */
SaccadeStudy *saccade_study_get_sentences (const ScStudyKind *kind, const void *params,
                                           ScModel *model, const ScStoreModel *ident,
                                           ScSession *session, const char *db_path,
                                           const int32_t *const *sentences, const int *lengths,
                                           int n_sentences, SaccadeStudyFlags flags,
                                           SaccadeProgress progress, gpointer user_data,
                                           GCancellable *cancellable, char **store_warning,
                                           GError **error);

/* When study @id of @store was stored (Unix ms; 0 when it cannot be read). */
gint64 saccade_study_created_ms (ScStore *store, gint64 id);

/* A study's get function, as saccade_study_job_async runs it in a worker: @session is the
 * loaded model's, locked for the call (NULL for a STORED_ONLY lookup that does not ask for
 * it); @data is the caller's. Returns the result, or NULL with @error. */
typedef gpointer (*SaccadeStudyFunc) (ScModel *model, const ScStoreModel *ident,
                                      ScSession *session, const char *db_path, gpointer data,
                                      SaccadeStudyFlags flags, SaccadeProgress progress,
                                      gpointer progress_data, GCancellable *cancellable,
                                      char **store_warning, GError **error);

/* @func (@data: owned, freed with @data_free) in a worker (saccade-job.h) on @model's
 * session, its lock held for the whole call — captures and other studies on the same model
 * wait for it — but for a STORED_ONLY lookup, which takes no lock unless
 * @lock_for_lookup. A failure to store is logged, naming the study @name. The result is
 * freed with @result_free when nobody takes it; saccade_job_finish (@source_tag) gets it. */
void saccade_study_job_async (gpointer source_object, gpointer source_tag, const char *name,
                              SaccadeLoadedModel *model, const char *db_path,
                              SaccadeStudyFlags flags, gboolean lock_for_lookup,
                              SaccadeStudyFunc func, gpointer data, GDestroyNotify data_free,
                              GDestroyNotify result_free, GCancellable *cancellable,
                              SaccadeJobProgress progress, gpointer progress_data,
                              GAsyncReadyCallback callback, gpointer user_data);

/* saccade_study_get() as a SaccadeStudyFunc, with @data a SaccadeStudyGetData. */
typedef struct {
  const ScStudyKind *kind;
  const void *params;   /* NULL: the kind's defaults */
  gint64 run_id;
} SaccadeStudyGetData;
gpointer saccade_study_get_func (ScModel *model, const ScStoreModel *ident, ScSession *session,
                                 const char *db_path, gpointer data, SaccadeStudyFlags flags,
                                 SaccadeProgress progress, gpointer progress_data,
                                 GCancellable *cancellable, char **store_warning,
                                 GError **error);

/* saccade_study_get() in a worker (saccade-job.h) on @model's session, its lock held for
 * the whole study (captures and other studies on the same model wait for it; a
 * STORED_ONLY lookup runs nothing and takes no lock). @params (kind->params_size bytes) is
 * copied, shallowly. A failure to store is logged. */
void saccade_study_get_async (gpointer source_object, SaccadeLoadedModel *model,
                              const char *db_path, gint64 run_id, const ScStudyKind *kind,
                              const void *params, SaccadeStudyFlags flags,
                              GCancellable *cancellable, SaccadeJobProgress progress,
                              gpointer progress_data, GAsyncReadyCallback callback,
                              gpointer user_data);
/* The study (caller frees), or NULL with @error: G_IO_ERROR_CANCELLED only when the study
 * saw the cancel (and stored nothing). */
SaccadeStudy *saccade_study_get_finish (GAsyncResult *result, GError **error);

/* A kind both faces get with extras around saccade_study_get(): its result is the face's
 * own struct (the run's row and tokens beside the study, checks in the user's words, other
 * studies read or computed with it — the attribution's leave-one-out). Each such kind's core
 * file defines one (saccade-adversarial.h, saccade-attribution.h); its printing is its
 * outputs file's (app/core/studies/saccade-study-outputs.h, SaccadeFaceOutputs). */
typedef struct {
  const ScStudyKind *kind;
  SaccadeStudyFunc get;         /* data: a SaccadeStudyGetData of @kind (params NULL: the
                                 * face's defaults); returns the face's result, a struct
                                 * whose first member is its SaccadeStudyFaceBase */
  GDestroyNotify result_free;   /* of what @get returns */
} SaccadeStudyFace;

/* @face's get in a worker, as saccade_study_get_async() runs saccade_study_get(): its lock
 * held for the whole study (a STORED_ONLY lookup takes none). @params (kind->params_size
 * bytes, NULL: the face's defaults) is copied shallowly: what it points to must outlive the
 * job (the window's params point to nothing). A failure to store is logged. */
void saccade_study_face_async (const SaccadeStudyFace *face, gpointer source_object,
                               SaccadeLoadedModel *model, const char *db_path, gint64 run_id,
                               const void *params, SaccadeStudyFlags flags,
                               GCancellable *cancellable, SaccadeJobProgress progress,
                               gpointer progress_data, GAsyncReadyCallback callback,
                               gpointer user_data);
/* The face's result (caller frees with face->result_free), or NULL with @error
 * (G_IO_ERROR_CANCELLED when the study saw the cancel). */
gpointer saccade_study_face_finish (GAsyncResult *result, GError **error);

G_END_DECLS
