/* saccade-capture-task.h — the window's background work on a model: loading it, capturing
 * a sentence (or given token ids) into the store, and running the induction-head detector.
 *
 * SaccadeLoadedModel is a model ready to run: the weights, a backend (chosen by name:
 * saccade_backend_new() of saccade-model.h), a forward session
 * and the model's identity for the store (its file hashed once). Loading takes about half
 * a second for SmolLM2, so the window loads once, in a worker, and keeps the result.
 * Capturing tokenizes the text, runs the forward pass with the store's observer — every
 * head goes to the capture database as its layer finishes — and returns the new run's id.
 * Progress (one step per layer) reaches the main loop coalesced: however fast the layers
 * finish, at most one progress callback is pending at a time, and it reports the latest
 * count. Cancelling the GCancellable stops the forward pass at the next layer; the store
 * then rolls the run back and keeps every earlier run.
 *
 * The detector (app/core/saccade-induction.h) runs on the same session: it holds the
 * session's lock for the whole study (seconds), so a capture started meanwhile waits for it
 * in its worker (the window never waits).
 *
 * Thread safety: a SaccadeLoadedModel may be shared between threads; its session is used by
 * one job at a time (captures and studies on the same model wait for each other).
 */
#pragma once

#include <gio/gio.h>

#include "app/core/saccade-job.h"

#include "app/core/saccade-induction.h"
#include "engine/forward/sc-predict.h"

G_BEGIN_DECLS

#define SACCADE_TYPE_LOADED_MODEL (saccade_loaded_model_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeLoadedModel, saccade_loaded_model, SACCADE, LOADED_MODEL, GObject)

/* The file the model was loaded from (absolute). */
const char *saccade_loaded_model_get_path (SaccadeLoadedModel *self);
/* general.name, or the file's base name. */
const char *saccade_loaded_model_get_name (SaccadeLoadedModel *self);
/* Short backend name for the header bar ("CPU") and a longer description
 * ("CPU (OpenBLAS, 2 threads)"). */
const char *saccade_loaded_model_get_backend_name (SaccadeLoadedModel *self);
const char *saccade_loaded_model_get_backend_description (SaccadeLoadedModel *self);
/* The backend's stable name ("cpu", "cpu-ref", "cuda"): what saccade_backend_new() takes
 * to make the same kind of backend again. Borrowed. */
const char *saccade_loaded_model_get_backend_id (SaccadeLoadedModel *self);
/* Why "auto" settled on the CPU ("backend auto: no CUDA device ...; using the CPU"), or
 * NULL when the backend is the one asked for. Borrowed. */
const char *saccade_loaded_model_get_backend_notice (SaccadeLoadedModel *self);
/* "30 layers × 9 heads (3 KV heads)", translated. Caller frees. */
char *saccade_loaded_model_describe (SaccadeLoadedModel *self);

/* Loads the GGUF file at @path in a worker thread, over the backend named @backend
 * (saccade_backend_choices(); NULL means "auto"). Errors: SACCADE_ERROR with the engine's
 * message (a missing file, a bad GGUF, an unsupported architecture, no BLAS library, "cuda"
 * without CUDA or a device), G_OPTION_ERROR_BAD_VALUE for an unknown backend name. */
void saccade_loaded_model_new_for_backend_async (const char *path, const char *backend,
                                                 GCancellable *cancellable,
                                                 GAsyncReadyCallback callback,
                                                 gpointer user_data);
/* The same over the "cpu" backend: the same numbers on every machine (the tests' loader). */
void saccade_loaded_model_new_async (const char *path, GCancellable *cancellable,
                                     GAsyncReadyCallback callback, gpointer user_data);
SaccadeLoadedModel *saccade_loaded_model_new_finish (GAsyncResult *result, GError **error);

/* Called on the main loop with the number of layers done so far, of n_layers: a saccade
 * job's steps (saccade-job.h). */
typedef SaccadeJobStepsProgress SaccadeCaptureProgress;

/* Captures @text (UTF-8, special-token text parsed as `saccade capture` does) with @model
 * into the store at @db_path (created if missing). @progress (may be NULL) is called on the
 * thread-default main context with @progress_data, which must stay valid until @callback
 * runs (pass @source_object's self: GTask keeps it alive). Errors: SACCADE_ERROR (empty
 * text, a text longer than the model's context, a store that cannot be written),
 * G_IO_ERROR_CANCELLED. */
void saccade_capture_async (gpointer source_object, SaccadeLoadedModel *model,
                            const char *db_path, const char *text, GCancellable *cancellable,
                            SaccadeCaptureProgress progress, gpointer progress_data,
                            GAsyncReadyCallback callback, gpointer user_data);
/* What goes into a capture of text besides the text (app/core/saccade-capture-input.h). */
typedef struct {
  gboolean chat;     /* wrap the text in the model's chat template */
  int n_generate;    /* store this many greedily generated tokens after it (>= 0) */
  /* What the run stores, as `saccade capture --layers --heads --sparse` (ScStoreRunDesc):
   * the heads to keep, (n_layers × n_heads) as saccade_capture_keep_parse() makes it, copied
   * (NULL: every head); and each row's sparse form's EPS (0: dense). */
  const guint8 *keep;
  double sparse_eps;
} SaccadeCaptureOptions;

/* As saccade_capture_async(), with @options (NULL: none, the plain capture). With
 * n_generate > 0 the progress counts (n_generate + 1) x n_layers steps: n_layers for each
 * generated token (fewer when the model ends its turn: the count then jumps), then the
 * capture's own forward pass. Errors: as saccade_capture_async(), and a model without a
 * chat template with chat; a prompt and n_generate longer than the model's context. */
void saccade_capture_text_async (gpointer source_object, SaccadeLoadedModel *model,
                                 const char *db_path, const char *text,
                                 const SaccadeCaptureOptions *options,
                                 GCancellable *cancellable, SaccadeCaptureProgress progress,
                                 gpointer progress_data, GAsyncReadyCallback callback,
                                 gpointer user_data);
/* As saccade_capture_async(), for the @n_ids token ids @ids (copied) instead of a text: the
 * run's text is what the ids decode to. For sequences no text tokenizes to (the detector's
 * random tokens). Finish with saccade_capture_finish(). */
void saccade_capture_ids_async (gpointer source_object, SaccadeLoadedModel *model,
                                const char *db_path, const int32_t *ids, int n_ids,
                                GCancellable *cancellable, SaccadeCaptureProgress progress,
                                gpointer progress_data, GAsyncReadyCallback callback,
                                gpointer user_data);
/* The new run's id, or 0 with @error set. */
gint64 saccade_capture_finish (GAsyncResult *result, GError **error);
/* As saccade_capture_finish() (call one of the two, once), and the run's next-token
 * predictions: the top SC_PREDICT_TOP_K of every position (engine/forward/sc-predict.h),
 * moved into @predictions (caller clears it with sc_predictions_clear(); zeroed on
 * failure). */
gint64 saccade_capture_finish_with_predictions (GAsyncResult *result,
                                                ScPredictions *predictions, GError **error);


/* The detector's result for @model with @params (saccade_induction_get(): reused from the
 * store at @db_path when it holds the same study, else computed on the model's session and
 * stored there; @db_path NULL: computed, not stored), in a worker. @progress as for
 * saccade_capture_async(). A failure to store is logged and the result still returned.
 * Errors: SACCADE_ERROR (the engine's), G_IO_ERROR_CANCELLED. */
void saccade_induction_async (gpointer source_object, SaccadeLoadedModel *model,
                              const char *db_path, const ScInductionParams *params,
                              GCancellable *cancellable, SaccadeJobProgress progress,
                              gpointer progress_data, GAsyncReadyCallback callback,
                              gpointer user_data);
/* The result (caller frees with saccade_induction_free()), or NULL with @error set. */
SaccadeInduction *saccade_induction_finish (GAsyncResult *result, GError **error);

G_END_DECLS

/* ------------------------------------------------------------------------------------ */
/* For the studies of other files (app/core/saccade-ablation.c), which run on the loaded
 * model like the detector: the model and its store identity (borrowed, immutable after
 * loading, any thread), and its session under the session's lock. Lock in a worker only,
 * never on the main thread; every lock is followed by one unlock on the same thread. */

#include "engine/store/sc-store.h"

G_BEGIN_DECLS

ScModel *saccade_loaded_model_get_model (SaccadeLoadedModel *self);
const ScStoreModel *saccade_loaded_model_get_ident (SaccadeLoadedModel *self);
/* Waits while another job holds the session; returns it (borrowed). */
ScSession *saccade_loaded_model_lock_session (SaccadeLoadedModel *self);
void saccade_loaded_model_unlock_session (SaccadeLoadedModel *self);

G_END_DECLS
