/* saccade-models.h — the model files fetched on this machine (data/fetch-model.sh), for the
 * window's model menu and `saccade models`.
 *
 * Where fetch-model.sh puts them: data/models/ beside the sources (a build tree) and
 * $XDG_DATA_HOME/saccade/models/ (`fetch-model.sh --user`, an installed Saccade). Each
 * *.gguf there is read by its header only (sc_model_peek: mapped, no weights), so listing
 * a folder of large files costs milliseconds; a file whose header Saccade refuses is listed
 * with the reason instead of a name.
 */
#pragma once

#include <glib.h>

#include "engine/model/sc-model.h"

G_BEGIN_DECLS

typedef struct {
  char *path;        /* the file */
  char *name;        /* readable: "Qwen2.5-Coder 0.5B Instruct · Q4_K_M"; NULL if refused */
  char *arch;        /* general.architecture; NULL if refused */
  char *error;       /* why the header was refused ("unknown architecture 'bert' …"); or NULL */
  guint n_layers, n_heads;
  gint64 bytes;      /* the file's size */
  gboolean is_default; /* the model Saccade opens when none is chosen (saccade_model_path) */
} SaccadeModelFile;

void saccade_model_file_free (SaccadeModelFile *file);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeModelFile, saccade_model_file_free)

/* The folders searched, in order (existing or not); free with g_strfreev. */
char **saccade_model_dirs (void);

/* Every *.gguf file of saccade_model_dirs(), each once (by real path), sorted by readable
 * name, case aside (refused files last, by path). A folder that cannot be read is skipped. Never
 * NULL; free with g_ptr_array_unref. */
GPtrArray *saccade_model_files (void);

/* What sets @model's architecture apart where it changes a picture or a number, translated,
 * one phrase per particular joined by "; " (sliding-window layers and which are global;
 * query, key and value biases; per-head query/key norms; post-norms; scaled embeddings), or
 * NULL for a plain llama block. For `saccade info` and the model button's tooltip. */
char *saccade_model_particulars (const ScModel *model);

G_END_DECLS
