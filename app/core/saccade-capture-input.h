/* saccade-capture-input.h — what goes into a capture, as both faces build it: the text,
 * wrapped in the model's chat template when asked (saccade_chat_prompt(), as `saccade
 * generate --chat` does), its token ids, and optionally a greedy continuation of them
 * (sc_generate_greedy(), as `saccade generate` does).
 *
 * A capture with a continuation stores the prompt and the generated tokens as one run and
 * runs one forward pass over all of them after generating. By causality that pass's row p
 * of every head is the attention of the step that read position p: it sees positions
 * 0 .. p only, the same tokens the generating step saw (the numbers equal the step's up to
 * the float rounding of a batched against a one-row computation). So every generated
 * token's attention row is in the run, and the run equals a plain capture of the same ids.
 *
 * Thread safety: none of its own; generation uses the session given (one thread at a time).
 */
#pragma once

#include <glib.h>

#include "engine/forward/sc-forward.h"
#include "engine/forward/sc-predict.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store.h"

G_BEGIN_DECLS

/* The ids a capture runs and the run's text. */
typedef struct {
  GArray *ids;      /* int32_t: the prompt's, then the generated ones */
  guint n_prompt;   /* how many of @ids are the prompt's (the rest were generated) */
  GString *text;    /* the run's text: the prompt's bytes (in the chat template with chat),
                     * then each generated token's piece (special tokens shown, as the
                     * store's pieces are) */
} SaccadeCaptureInput;

/* Fills @in (zeroed by the caller; cleared on failure) with @len bytes of @text (< 0:
 * NUL-terminated; any bytes), in the model's chat template when @chat, and their ids
 * (special-token text parsed when @parse_special). The ids may be empty: the caller says
 * so in its own words. Errors: SACCADE_ERROR (a model without a ChatML template with
 * @chat, the tokenizer's). */
gboolean saccade_capture_input_init (SaccadeCaptureInput *in, ScModel *model, const char *text,
                                     gssize len, gboolean parse_special, gboolean chat,
                                     GError **error);

/* Appends up to @n_new greedily generated tokens to @in (which holds at least one id),
 * stopping before an end-of-generation token; their pieces go to @in->text. @progress
 * (may be NULL) is called with @progress_user after each layer of each step; returning
 * false cancels. On failure @in keeps the tokens generated so far. Errors: SACCADE_ERROR
 * (SC_ERR_RANGE: the prompt and @n_new exceed the model's context, checked first;
 * SC_ERR_CANCELLED; the forward pass's). */
gboolean saccade_capture_input_generate (SaccadeCaptureInput *in, ScSession *session, int n_new,
                                         ScProgressFn progress, void *progress_user,
                                         GError **error);

/* What a run of @n_tokens tokens, @n_prompt of them the prompt's, is (runs.kind): GENERATED
 * when tokens were generated after the prompt (*@prompt_tokens = @n_prompt), else CHAT with
 * @chat, else TEXT (*@prompt_tokens = 0). */
ScRunKind saccade_capture_run_kind (guint n_prompt, guint n_tokens, gboolean chat,
                                    guint32 *prompt_tokens);

/* Frees @in's arrays and zeroes it; a zeroed one is a no-op. */
void saccade_capture_input_clear (SaccadeCaptureInput *in);

/* Hands the run's predictions (sc_predict_topk()) to @cap, to be stored in its commit
 * (sc_store_capture_set_predictions()), with each predicted id's bytes from @model's
 * tokenizer: `saccade capture` and the window's capture task store them the same way. */
ScStatus saccade_capture_store_predictions (ScStoreCapture *cap, const ScModel *model,
                                            const ScPredictions *pred, ScError *err);

/* One capture's outcome (saccade_capture_forward()). */
typedef struct {
  ScPredictions pred;  /* the next-token predictions of every position */
  double forward_s;    /* the forward pass, recorded as the run's time */
  double predict_s;    /* the predictions */
  gint64 run_id;       /* the stored run; 0 without a capture */
} SaccadeCaptureOutcome;

/* Runs @ids through @session with @fo (its observer set by the caller: @cap's
 * (sc_store_capture_observer()) or one that feeds it; keep_final is set here, since the
 * predictions read the final residual), computes the top SC_PREDICT_TOP_K predictions of
 * every position into @out (@predict_progress may be NULL) and, with a capture @cap (NULL:
 * nothing is stored), hands them to it and commits the run: what `saccade capture`, the
 * window's capture task and patching over a file each do with a text. @cap is always
 * consumed. On failure the run is rolled back and every earlier run is intact; a forward
 * pass that a failing store stopped reports the store's own error (disk full, locked, ...),
 * and any other cancellation returns SC_ERR_CANCELLED. The caller holds the session. */
ScStatus saccade_capture_forward (ScSession *session, const ScModel *model, ScStoreCapture *cap,
                                  const int32_t *ids, int n_ids, const ScForwardOptions *fo,
                                  ScProgressFn predict_progress, void *predict_user,
                                  SaccadeCaptureOutcome *out, ScError *err);

/* The heads a capture keeps (ScStoreRunDesc.keep, docs/store.md "Schema v3"): every
 * (layer, head) whose layer is in @layers and whose head is in @heads, each a set of
 * indices "3", "10-20" (inclusive) or a comma-separated list of both ("0,4,10-12"); NULL
 * or blank: all. Sets *@keep to a (n_layers × n_heads) mask, index layer × n_heads + head
 * (NULL when every head is kept; free with g_free) and *@n_kept to the heads kept. The
 * messages name the sets @layers_name and @heads_name ("--layers" on the command line,
 * "Layers" in the window). Errors: SACCADE_ERROR SC_ERR_INVALID_ARG (not an index or a
 * range, an index past the model's last). */
gboolean saccade_capture_keep_parse (const ScModelInfo *info, const char *layers,
                                     const char *layers_name, const char *heads,
                                     const char *heads_name, guint8 **keep, guint *n_kept,
                                     GError **error);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SaccadeCaptureInput, saccade_capture_input_clear)

G_END_DECLS
