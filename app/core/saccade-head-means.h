/* saccade-head-means.h — the reference means that mean-ablation uses, as both faces get
 * them: every head's mean output (engine/study/sc-head-means.h) over a named set of
 * sentences shipped with Saccade (data/reference/NAME.txt, compiled into the binary as the
 * resource /io/github/saccade/Saccade/reference/NAME.txt), stored in the capture store as a
 * study of kind "head-means" per model file (by SHA-256) and set, and reused from there.
 *
 * The set's format (the file's own header says it too): UTF-8; line 1 is
 * "# saccade-reference-set: NAME" and must name the set asked for; other lines beginning
 * with '#' are comments; blank lines are ignored; every other line (a trailing "\r"
 * dropped) is one sentence, tokenized as a capture is (saccade_tokenize with special tokens
 * parsed) and run alone from position 0. The shipped set is SACCADE_REFERENCE_SET.
 *
 * Stored params: {"study":1,"set":"NAME","sentences":S,"tokens":T} (T counts the tokens
 * of this model's tokenization, so a tokenizer that splits the set differently does not
 * reuse means made from another split).
 */
#pragma once

#include <gio/gio.h>

#include "app/core/saccade-job.h"
#include "app/core/saccade-study-source.h"

#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/study/sc-head-means.h"

G_BEGIN_DECLS

/* The set shipped with this version. */
#define SACCADE_REFERENCE_SET "saccade-ref-1"

typedef struct {
  ScHeadMeans *means; /* owned; means->mean is ScAblationParams.head_mean */
  char *set;          /* the set's name */
  SaccadeStudySource source;
} SaccadeHeadMeans;

void saccade_head_means_free (SaccadeHeadMeans *hm); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeHeadMeans, saccade_head_means_free)

/* The sentences of the set @name parsed from @text (@len bytes; −1: NUL-terminated), in
 * file order. Errors (G_IO_ERROR_INVALID_DATA, naming the line): not UTF-8, a first line
 * that does not name @name, no sentences. Caller frees (g_ptr_array_unref). */
GPtrArray *saccade_reference_set_parse (const char *text, gssize len, const char *name,
                                        GError **error);

/* The sentences of the shipped set @name (NULL: SACCADE_REFERENCE_SET), from the binary's
 * resources; G_IO_ERROR_NOT_FOUND when this build ships no such set. */
GPtrArray *saccade_reference_set_load (const char *name, GError **error);


/* The means of set @set (NULL: SACCADE_REFERENCE_SET) for @model (loaded from
 * @model_path): from the store at @db_path (NULL: no store, always computed) unless
 * @recompute, else computed on @session (bound to @model; borrowed, used by no one else
 * during the call) and stored. Runs on the calling thread (a worker, for the window).
 * Cancelling @cancellable stops it (G_IO_ERROR_CANCELLED). A store that cannot be opened
 * for writing is only read; a failure to store is reported in *@store_warning (may be
 * NULL; caller frees) and the computed means still returned. A stored study that is
 * refused as corrupt (SC_ERR_FORMAT) is recomputed, and its message put in
 * *@store_warning. */
SaccadeHeadMeans *saccade_head_means_get (ScModel *model, const char *model_path,
                                          ScSession *session, const char *db_path,
                                          const char *set, gboolean recompute,
                                          SaccadeProgress progress, gpointer user_data,
                                          GCancellable *cancellable, char **store_warning,
                                          GError **error);

G_END_DECLS
