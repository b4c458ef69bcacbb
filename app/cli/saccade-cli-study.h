/* saccade-cli-study.h — a study of a stored run for a command-line verb: the verbs'
 * side of saccade_study_get() (app/core/saccade-study.h).
 *
 * A verb reads back a stored study without loading a backend or a session (a lookup costs
 * a model load and a query); only when it must compute does it open a session on the
 * backend the user chose, draw the progress bar on a terminal, and store the result. The
 * verb prints the result from its outputs file (app/core/studies/): `saccade study` any
 * kind's, `saccade attribute` and `saccade adversarial` their face's
 * (saccade_cli_study_face).
 */
#pragma once

#include "app/cli/saccade-cli.h"
#include "app/core/saccade-study.h"
#include "app/core/studies/saccade-study-outputs.h"

G_BEGIN_DECLS

/* Study @kind of run @run_id in the store at @db_path with @params (NULL: the kind's
 * defaults) on @model (loaded from saccade_cli_model_path (@common)): the stored study
 * unless @recompute, else computed on a session of @common's backend and stored; a failure
 * to store is put in *@warning (may be NULL; caller frees) and the result still returned.
 * @ident: the model file's identity when the verb has it already (hashing the file is the
 * slow part of identifying it), else NULL: identified here.
 * Errors: those of saccade_study_get(), and of identifying the model file or opening the
 * session. */
SaccadeStudy *saccade_cli_study_get (const ScStudyKind *kind, const void *params, ScModel *model,
                                     const ScStoreModel *ident, const SaccadeCliCommon *common,
                                     const char *db_path, gint64 run_id, gboolean recompute,
                                     char **warning, GError **error);

/* @func on @model for a verb: a session of @common's backend opened for the call (unless
 * @lookup_first and the result is stored: @func is first asked with STORED_ONLY and no
 * session, and only a G_IO_ERROR_NOT_FOUND opens one), RECOMPUTE when @recompute, the
 * progress bar on a terminal. Returns @func's result, or NULL with @error. */
gpointer saccade_cli_study_run (SaccadeStudyFunc func, gpointer data, ScModel *model,
                                const ScStoreModel *ident, const SaccadeCliCommon *common,
                                const char *db_path, gboolean recompute, gboolean lookup_first,
                                char **warning, GError **error);

/* The verb of a face's study (`saccade attribute`, `saccade adversarial`): @outputs's face
 * gets run @run_id of the store @db (--db; NULL: the default) with @params on @model
 * (saccade_cli_study_run: a session always opened, RECOMPUTE when @recompute), then prints
 * its JSON (--json) or its text, writes its CSV to @csv_path and its figure to @figure_path
 * (each may be NULL; "wrote ..." said unless --json). Returns the exit status (1 after
 * printing the error). */
int saccade_cli_study_face (const SaccadeFaceOutputs *outputs, const void *params,
                            ScModel *model, const SaccadeCliCommon *common, const char *db,
                            gint64 run_id, gboolean recompute, const char *csv_path,
                            const char *figure_path);

G_END_DECLS
