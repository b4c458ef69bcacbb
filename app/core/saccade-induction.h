/* saccade-induction.h — the induction-head detector as both faces use it: computed by
 * engine/study/sc-induction-study (plus the OV copying scores of engine/analysis/
 * sc-induction) and stored in the capture store as a study of kind "induction" with its
 * parameters, or reused from there when the same model file (by SHA-256) was studied with
 * the same parameters before. The command line (`saccade induction`) and the window's
 * Induction page call saccade_induction_get(); neither computes anything itself.
 *
 * Stored (docs/store.md, schema v2): params {"detector":1,"seq_len":T,"n_seeds":S};
 * per head the metrics prefix_matching, duplicate_token, previous_token, copying,
 * positive_share; series "loss" (pos q = target position, 0 = NULL), "loss_mean" (pos 0 =
 * first copy, 1 = second), "ids" (seed 0's sequence, for showing a head on it).
 */
#pragma once

#include <gio/gio.h>

#include "app/core/saccade-job.h"
#include "app/core/saccade-study-source.h"

#include "engine/analysis/sc-induction.h"
#include "engine/model/sc-model.h"
#include "engine/study/sc-induction-study.h"
#include "ui/figures/saccade-figure.h"

G_BEGIN_DECLS

/* Bumped whenever the detector's definition changes, so old studies are not reused. */
#define SACCADE_INDUCTION_DETECTOR_VERSION 1

typedef struct {
  ScInductionResult *result;  /* owned */
  ScOvCopying *copying;       /* (n_layers * n_heads), owned */
  SaccadeStudySource source;
} SaccadeInduction;

void saccade_induction_free (SaccadeInduction *ind); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeInduction, saccade_induction_free)


/* The detector's result for @model (loaded from @model_path) with @params: from the store
 * at @db_path (NULL: no store, always computed) unless @recompute, else computed on
 * @session (bound to @model; borrowed, and used by no one else during the call: the window
 * holds its loaded model's session lock) and stored. Runs on the calling thread (a worker,
 * for the window).
 * Cancelling @cancellable stops the study (G_IO_ERROR_CANCELLED). A store that cannot be
 * opened for writing is only read; a failure to store is reported in *@store_warning (may
 * be NULL; caller frees) and the computed result still returned. */
SaccadeInduction *saccade_induction_get (ScModel *model, const char *model_path,
                                         ScSession *session, const char *db_path,
                                         const ScInductionParams *params, gboolean recompute,
                                         SaccadeProgress progress, gpointer user_data,
                                         GCancellable *cancellable, char **store_warning,
                                         GError **error);

/* The indices of the heads ordered by @key (0 prefix matching, 1 previous token),
 * highest first, NaN last. Caller frees. */
int *saccade_induction_rank (const SaccadeInduction *ind, int key);

/* The in-context-learning curve of @ind as the loss figure draws it (both faces: the
 * Induction page and `saccade induction -o`): @f borrows @ind's numbers and @title. */
void saccade_induction_loss_figure (const SaccadeInduction *ind, const char *title,
                                    SaccadeLossFigure *f);

/* "In-context learning · NAME · 50 random tokens repeated, 10 seeds", translated: the
 * curve's title on screen and in files. Caller frees. */
char *saccade_induction_dup_loss_title (const SaccadeInduction *ind, const char *model_name);

G_END_DECLS
