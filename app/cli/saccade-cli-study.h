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

/* Identifies the model file @model was loaded from (saccade_cli_model_path (@common)) into
 * @sm, and checks that @run was captured with that file, by fingerprint. FALSE with @error
 * otherwise: the engine's error, or G_IO_ERROR_INVALID_ARGUMENT naming both files. */
gboolean saccade_cli_identify_run_model (ScModel *model, const SaccadeCliCommon *common,
                                         const ScStoreRunInfo *run, ScStoreModel *sm,
                                         GError **error);

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

/* What `saccade study` and the verbs built on one kind (`norms`) share: run @run_id of the
 * store at @db_path read and checked against @model (its file identified into *@sm), then
 * saccade_cli_study_get() of it. On success *@run and the returned study are the caller's;
 * NULL with @error (the run reader's, the model file's or the study's error). */
SaccadeStudy *saccade_cli_study_of_run (const ScStudyKind *kind, const void *params,
                                        ScModel *model, const SaccadeCliCommon *common,
                                        const char *db_path, gint64 run_id,
                                        gboolean recompute, ScStoreModel *sm,
                                        SaccadeStudyRun **run, char **warning, GError **error);

/* Prints study @s of @run to standard output: its JSON under --json (@common), else its
 * text (saccade_study_outputs_text, @top rows of a ranked table) followed by @more (may be
 * NULL). @labels: the run's token labels; @stored: what the store holds when the kind has
 * no outputs file, else NULL. */
void saccade_cli_study_print (const SaccadeStudy *s, ScModel *model, const SaccadeStudyRun *run,
                              const char *const *labels, const ScStoreStudyData *stored,
                              const SaccadeCliCommon *common, const char *db_path,
                              const char *warning, int top, const char *more);

/* What the verbs built on one study kind of a stored run (`mixing`, `norms`) parse beside
 * their own options: --db, --recompute, the run and the common options. */
typedef struct {
  SaccadeCliCommon common;
  char *db; /* --db, or NULL: the default database */
  gboolean recompute;
  gint64 run_id;
} SaccadeCliKindOptions;

/* Adds --db and --recompute, then the verb's own @entries, then the common ones
 * (saccade_cli_common_add) to @ctx, and parses the command line: the run into @o->run_id.
 * FALSE when the command line is bad (said on stderr; exit status 2). */
gboolean saccade_cli_kind_parse (GOptionContext *ctx, SaccadeCliKindOptions *o,
                                 const GOptionEntry *entries, const char *verb, int *argc,
                                 char ***argv);

/* Frees what parsing stored in @o. */
void saccade_cli_kind_options_clear (SaccadeCliKindOptions *o);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SaccadeCliKindOptions, saccade_cli_kind_options_clear)

/* What a verb of one kind adds to the study's text: appends to @more (@labels: the run's
 * token labels; @data: the verb's). */
typedef void (*SaccadeCliKindMore) (GString *more, const SaccadeStudy *s,
                                    const char *const *labels, gpointer data);

/* The rest of such a verb once its options are checked: study @kind of the run @o names
 * with @params on @model (saccade_cli_study_of_run), printed by saccade_cli_study_print with
 * @top rows and, unless --json, what @more (may be NULL) adds. Returns the exit status (1
 * after printing the error). */
int saccade_cli_kind_print (const ScStudyKind *kind, const void *params, ScModel *model,
                            const SaccadeCliKindOptions *o, int top, SaccadeCliKindMore more,
                            gpointer data);

/* @func on @model for a verb: a session of @common's backend opened for the call (unless
 * @lookup_first and the result is stored: @func is first asked with STORED_ONLY and no
 * session, and only a G_IO_ERROR_NOT_FOUND opens one), RECOMPUTE when @recompute, the
 * progress bar on a terminal. Returns @func's result, or NULL with @error. */
gpointer saccade_cli_study_run (SaccadeStudyFunc func, gpointer data, ScModel *model,
                                const ScStoreModel *ident, const SaccadeCliCommon *common,
                                const char *db_path, gboolean recompute, gboolean lookup_first,
                                char **warning, GError **error);

/* What every verb of a face's study (`saccade attribute`, `saccade adversarial`) parses
 * beside its own options: --db, --recompute, --csv, -o (--output), the figure options
 * (--preset, --width-mm, ...: SACCADE_CLI_FIGURE_OPTIONS) and the common ones
 * (saccade_cli_common_add), for a backend with a backward pass (gradients). */
typedef struct {
  SaccadeCliCommon common;
  char *db, *csv, *out_path;
  gboolean recompute;
  char *csv_help;            /* owned: "write one row per token as CSV" */
  ScModel *model;            /* owned: saccade_cli_face_load_model's, or NULL */
  SaccadeCliFigure figure;   /* the figure options (SACCADE_CLI_FIGURE_OPTIONS) */
  SaccadeFigureExportOptions figure_options; /* parsed by saccade_cli_face_load_model */
} SaccadeCliFaceOptions;

/* Adds them to @ctx after the verb's own entries (@recompute_help: what --recompute does;
 * the --csv help names @outputs' csv_row), then parses the command line: the run in
 * *@run_id. FALSE when the command line is bad (said on stderr; exit status 2). */
gboolean saccade_cli_face_parse (GOptionContext *ctx, SaccadeCliFaceOptions *o,
                                 const SaccadeFaceOutputs *outputs, const char *recompute_help,
                                 const char *verb, int *argc, char ***argv, gint64 *run_id);

/* The figure's format checked (-o), then the model loaded (@o keeps it); NULL with the
 * error printed and the exit status in *@rc. */
ScModel *saccade_cli_face_load_model (SaccadeCliFaceOptions *o, int *rc);

/* Frees what parsing stored in @o, and the model it loaded. */
void saccade_cli_face_options_clear (SaccadeCliFaceOptions *o);

/* The verb: @outputs's face gets run @run_id of the store --db names with @params on
 * @model (saccade_cli_study_run: a session always opened, RECOMPUTE with --recompute), then
 * prints its JSON (--json) or its text, writes its CSV (--csv) and its figure (-o), "wrote
 * ..." said unless --json. Returns the exit status (1 after printing the error). */
int saccade_cli_study_face (const SaccadeFaceOutputs *outputs, const void *params,
                            ScModel *model, const SaccadeCliFaceOptions *o, gint64 run_id);

G_END_DECLS
