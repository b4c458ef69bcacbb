/* saccade-patch-file-private.h — what the two forms of patching over a file share: the
 * file computed in one process (saccade-patch-file.c) and the stored, sharded one
 * (saccade-patch-stored.c). Not for the faces: they call saccade-patch-file.h. */
#pragma once

#include "app/core/saccade-patch-file.h"

G_BEGIN_DECLS

/* An empty file of @pairs (taken) for @p: no result, no effect yet. */
SaccadePatchFile *saccade_patch_file_new (GPtrArray *pairs, const SaccadePatchFileParams *p);

/* Pair @p's inputs: its two texts' ids (tokenised as `saccade capture` does; caller frees)
 * and @pp (the metric's tokens A and B parsed, @fp's direction and grid; no corrupted run
 * yet). Errors, naming the line: a text that does not tokenise or has fewer than 2
 * tokens, two token counts, A or B not one token, B equal to A. */
gboolean saccade_patch_pair_inputs (ScModel *model, const SaccadePatchPair *p,
                                    const SaccadePatchFileParams *fp, GArray **clean,
                                    GArray **corrupted, ScPatchParams *pp, GError **error);

/* Takes @r (pair @i's grid; @first_row: the first tested row) into @f and its normalised
 * effects into f->effect. Errors, naming the line: two runs of the same metric, a grid
 * unlike the first pair's. @r is @f's either way. */
gboolean saccade_patch_file_take (SaccadePatchFile *f, int i, ScPatchResult *r, int first_row,
                                  GError **error);

/* The per-cell summary of @f's effects (saccade-patch-file.h), every pair taken. */
gboolean saccade_patch_file_summarise (SaccadePatchFile *f, const SaccadePatchFileParams *fp,
                                       GError **error);

G_END_DECLS
