/* saccade-paths.h — where Saccade finds its model and its capture database, and opening
 * that database; the same answers for the command line and the window. */
#pragma once

#include <glib.h>

#include "engine/store/sc-store.h"

G_BEGIN_DECLS

/* The model file: @opt (-m, a chosen file) when not NULL, else $SACCADE_MODEL, else the
 * default model fetched next to the sources (a build tree), else
 * $XDG_DATA_HOME/saccade/models/ (where data/fetch-model.sh --user puts it). Never NULL;
 * the string is @opt, the environment's or a static one: do not free it. */
const char *saccade_model_path (const char *opt);

/* The capture database: @opt (--db) when not NULL, else
 * $XDG_DATA_HOME/saccade/captures.sqlite. Caller frees. */
char *saccade_db_path (const char *opt);

/* Opens the store at @path; a writable open first creates its folder. NULL with @err set
 * (the store's message names the file). */
ScStore *saccade_store_open (const char *path, gboolean writable, ScError *err);
/* saccade_store_open, its captures storing dense heads compressed when @compress_heads
 * (ScStoreOptions.compress_heads). */
ScStore *saccade_store_open_with (const char *path, gboolean writable, gboolean compress_heads,
                                  ScError *err);

/* Reads run @run_id's row and tokens from the store at @path (opened read-only, closed
 * again): what every study of a stored run starts from. G_IO_ERROR_NOT_FOUND when there is
 * no file at @path ("no capture store at …") or no such run ("there is no run 7 in …");
 * the store's own error otherwise. The caller clears *@run (sc_store_run_info_clear) and
 * frees *@tokens (sc_store_tokens_free), also after a failure. */
gboolean saccade_store_read_run (const char *path, gint64 run_id, ScStoreRunInfo *run,
                                 ScStoreToken **tokens, size_t *n_tokens, GError **error);

G_END_DECLS
