/* saccade-model.h — the engine as both faces use it: loading a model, making a backend,
 * tokenising, the chat template, and collecting every head's statistics during a forward
 * pass. Errors are GErrors in SACCADE_ERROR carrying the engine's message. */
#pragma once

#include <glib.h>

#include "engine/analysis/sc-head-stats.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"

G_BEGIN_DECLS

/* Loads the GGUF model at @path with @threads dequantising threads (<= 0: all cores).
 * A missing file says how to fetch the default model. */
ScModel *saccade_model_load (const char *path, int threads, GError **error);

/* Choosing a backend by name: the one place both faces (--backend, the window's Backend
 * preference) turn a name into an ScBackend.
 *   "cpu"      the fast CPU backend (OpenBLAS and the thread pool);
 *   "cpu-ref"  the scalar reference backend (slow; for checking; what --reference asks);
 *   "cuda"     the CUDA backend on device 0 (cuda/), when this saccade was built with it;
 *   "auto"     "cuda" when it is built in and a device answers, else "cpu".
 * The stored run records the backend's own name (sc_backend_name), never "auto". */
#define SACCADE_BACKEND_AUTO "auto"

/* The choices above, in the order a user is shown them (NULL-terminated, static). */
const char *const *saccade_backend_choices (void);

/* TRUE when this binary has the CUDA backend built in (nvcc was found at build time). */
gboolean saccade_backend_have_cuda (void);

/* TRUE when this binary has the CUDA backend and the machine has a CUDA device the driver
 * reports (sc_backend_cuda_device_count() > 0; about 10 ms the first time, without loading
 * cuBLAS). Any thread. */
gboolean saccade_backend_have_gpu (void);

/* TRUE when @name is one of saccade_backend_choices(); otherwise FALSE with @error set
 * (G_OPTION_ERROR_BAD_VALUE naming @name and the choices). Cheap: verbs check it before
 * loading a model. */
gboolean saccade_backend_check_name (const char *name, GError **error);

/* Makes the backend named @name (NULL means "auto") computing with @threads CPU threads
 * (<= 0: all cores; a GPU backend ignores it). @needs (ScBackendCap flags, 0 for a plain
 * forward pass) is what the caller will use: "auto" passes over a GPU backend that lacks
 * one of them (a named backend is returned as it is; the op that it lacks then fails with
 * SC_ERR_UNSUPPORTED naming it). When "auto" settles on the CPU, *@notice
 * (when @notice is not NULL) receives one line saying why (caller frees), else NULL.
 * Errors: G_OPTION_ERROR_BAD_VALUE for an unknown name; SACCADE_ERROR SC_ERR_UNSUPPORTED
 * for "cuda" in a build without CUDA or on a machine without a device or driver (the
 * message says which); the engine's error when a CPU backend cannot start (OpenBLAS
 * missing, out of memory). Free the result with sc_backend_free(). Any thread. */
ScBackend *saccade_backend_new (const char *name, int threads, unsigned needs, char **notice,
                                GError **error);

/* A token named by the user as @option (e.g. "--target", "line 3's A"): a token id, or a
 * text that tokenizes (without BOS, special tokens parsed) to exactly one token; *@out = −1
 * for a NULL @text. G_OPTION_ERROR_BAD_VALUE naming @option and the tokens otherwise. */
gboolean saccade_parse_token (ScModel *model, const char *option, const char *text, int *out,
                              GError **error);

/* Tokenizes @text (@len < 0: NUL-terminated) with BOS as the model asks and special
 * tokens parsed when @parse_special; the ids as an array of int32_t. */
GArray *saccade_tokenize (ScModel *model, const char *text, gssize len, gboolean parse_special,
                          GError **error);

/* Wraps @len bytes of @user_text (any bytes, NULs included; @len < 0: NUL-terminated) in
 * the model's chat template (ChatML as SmolLM2 uses; other templates are refused rather
 * than guessed). Returns the prompt (NUL-terminated for convenience; it may hold NULs:
 * *@out_len is its length). Caller frees. */
char *saccade_chat_prompt (ScModel *model, const char *user_text, gssize len, gsize *out_len,
                           GError **error);

/* Every head's statistics of one forward pass (engine/analysis/sc-head-stats.h):
 * @stats is (n_layers * n_heads), indexed layer * n_heads + head. */
typedef struct {
  int n_layers, n_heads;
  ScHeadStats *stats;
} SaccadeHeadStatsTable;

void saccade_head_stats_table_init (SaccadeHeadStatsTable *t, int n_layers, int n_heads);
void saccade_head_stats_table_clear (SaccadeHeadStatsTable *t);
/* An ScObserver.observe filling the SaccadeHeadStatsTable passed as @user. */
bool saccade_head_stats_table_observe (void *user, int layer, int head, const float *probs,
                                       int n_query, int n_key);
/* Head (@layer, @head) of @t, borrowed. */
const ScHeadStats *saccade_head_stats_table_get (const SaccadeHeadStatsTable *t, int layer,
                                                 int head);

G_END_DECLS
