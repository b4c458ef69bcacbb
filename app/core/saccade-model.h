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

/* The fast CPU backend (@threads <= 0: all cores), or the scalar reference one. */
ScBackend *saccade_backend_new (int threads, gboolean reference, GError **error);

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
