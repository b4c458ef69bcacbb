/* saccade-window-capture.c — capturing the sentence of the header bar: Run (now, or once
 * the model has loaded), Cancel, the progress bar and status line while the layers run,
 * the toast with the stored run and its predicted next token, the warning before a run
 * that adds much to the database, and the sample sentence of a first start.
 *
 * The capture itself is app/core/saccade-capture-task.h's job; this file only starts it
 * and shows what it reports. Not here: loading the model (saccade-window.c), listing the
 * stored runs (saccade-window-runs.c).
 */
#define G_LOG_DOMAIN "saccade-window"

#include "app/window/saccade-window-private.h"

#include <glib/gi18n.h>

#include "app/core/saccade-model.h"
#include "app/core/saccade-paths.h"
#include "engine/store/sc-store-heads.h"
#include "ui/figures/saccade-token-label.h"

/* The sentence a first-time user sees without typing anything (README, "Two commands"). */
#define SAMPLE_SENTENCE "The cat chased the ball because it was tired."

gboolean
saccade_window_is_capturing (SaccadeWindow *self)
{
  return self->capture_cancellable != NULL;
}

static void
set_capturing (SaccadeWindow *self, gboolean on)
{
  gtk_widget_set_visible (GTK_WIDGET (self->progress_bar), on);
  gtk_widget_set_visible (self->status_cancel_button, on);
  gtk_editable_set_editable (GTK_EDITABLE (self->sentence_entry), !on);
  gtk_widget_set_sensitive (GTK_WIDGET (self->prompt_button), !on);
  if (on)
    gtk_progress_bar_set_fraction (self->progress_bar, 0.0);
  saccade_window_update_actions (self);
}

static void
capture_progress (gpointer user_data, int layers_done, int n_layers)
{
  SaccadeWindow *self = user_data;
  g_autofree char *text = NULL;

  int L;

  if (!saccade_window_is_capturing (self) || self->model == NULL)
    return;
  gtk_progress_bar_set_fraction (self->progress_bar,
                                 n_layers > 0 ? (double) layers_done / n_layers : 0.0);
  /* With generation the steps are n_layers per generated token, then the capture's pass
   * (saccade_capture_text_async()). */
  L = (int) sc_model_info (saccade_loaded_model_get_model (self->model))->n_layers;
  if (n_layers > L && layers_done < n_layers - L)
    text = g_strdup_printf (_("Generating token %d of at most %d…"), layers_done / L + 1,
                            n_layers / L - 1);
  else
    text = g_strdup_printf (_("Running layer %d of %d…"),
                            MIN (layers_done - (n_layers - L) + 1, L), L);
  saccade_window_set_status (self, text);
}

/* "'␣Paris' (23 %)": the most likely token after the run's last position, or NULL. */
static char *
predicted_next (SaccadeWindow *self, const ScPredictions *p)
{
  const ScTokenizer *tok;
  g_autofree char *label = NULL;
  char buf[256];
  size_t n;
  int32_t id;

  if (self->model == NULL || p->n_positions == 0 || p->k == 0)
    return NULL;
  tok = sc_model_tokenizer (saccade_loaded_model_get_model (self->model));
  id = p->ids[(size_t) (p->n_positions - 1) * p->k];
  n = sc_token_to_bytes (tok, id, true, buf, sizeof buf);
  label = saccade_token_label (buf, MIN (n, sizeof buf));
  /* Translators: a token and its probability, e.g. "'␣Paris' (23 %)". */
  return g_strdup_printf (_("'%s' (%.0f %%)"), label,
                          100.0 * p->probs[(size_t) (p->n_positions - 1) * p->k]);
}

static void
capture_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SaccadeWindow *self = SACCADE_WINDOW (source);
  g_autoptr (GError) error = NULL;
  ScPredictions pred = { 0 };
  gint64 run_id = saccade_capture_finish_with_predictions (result, &pred, &error);

  if (g_cancellable_is_cancelled (self->cancellable))
    {
      sc_predictions_clear (&pred);
      return; /* the window closed while the model ran */
    }
  g_clear_object (&self->capture_cancellable);
  set_capturing (self, FALSE);
  if (self->backend_stale)
    saccade_window_backend_changed (self);
  if (run_id <= 0)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        saccade_window_set_status (self, _("Cancelled; nothing was stored"));
      else
        {
          saccade_window_show_error (self, _("The run failed"), error);
          saccade_window_update_status (self);
        }
      return;
    }
  g_settings_set_boolean (self->settings, "sample-done", TRUE);
  {
    g_autofree char *next = predicted_next (self, &pred);
    g_autofree char *msg = NULL;
    if (next != NULL)
      /* Translators: "Stored run 12; next token: ' Paris' (23 %)". */
      msg = g_strdup_printf (_("Stored run %lld; next token: %s"), (long long) run_id, next);
    else
      msg = g_strdup_printf (_("Stored run %lld"), (long long) run_id);
    saccade_window_toast (self, msg);
  }
  sc_predictions_clear (&pred);
  saccade_window_runs_reload (self, run_id);
}

/* Above this a capture says how much it will add to the database before it runs (as
 * `saccade capture` does on stderr; docs/store.md, "Bytes per run"). */
#define CAPTURE_WARN_BYTES 1000000000ull

/* Tells the user, before a run starts, that it will add much to the database: the
 * estimate of engine/store (sc_store_estimate_bytes) for the text's tokens and the
 * tokens to be generated. Tokenising on this thread is safe (the tokenizer is read-only)
 * and quick: well under a millisecond a thousand tokens. */
static void
warn_if_large (SaccadeWindow *self, const char *text, const SaccadeCaptureOptions *options)
{
  ScModel *model = saccade_loaded_model_get_model (self->model);
  const ScModelInfo *in = sc_model_info (model);
  g_autoptr (GArray) ids = saccade_tokenize (model, text, -1, TRUE, NULL);
  guint64 bytes;
  guint n;

  if (ids == NULL)
    return; /* the capture reports it */
  n = ids->len + (guint) MAX (options->n_generate, 0);
  bytes = sc_store_estimate_bytes (n, in->n_layers, in->n_heads, in->n_layers * in->n_heads,
                                   false);
  if (bytes > CAPTURE_WARN_BYTES)
    {
      g_autofree char *size = g_format_size (bytes);
      g_autofree char *msg = g_strdup_printf (
        /* Translators: a toast before a long run; %s is a size ("18.1 GB"). */
        _("This run of %u tokens will add about %s to the database; "
          "`saccade capture --layers --heads --sparse` stores less"), n, size);
      saccade_window_toast (self, msg);
    }
}

void
saccade_window_start_capture (SaccadeWindow *self, const char *text)
{
  g_autofree char *status = NULL;
  SaccadeCaptureOptions options = {
    .chat = saccade_prompt_popover_get_chat (self->prompt_popover),
    .n_generate = saccade_prompt_popover_get_n_generate (self->prompt_popover),
  };

  g_return_if_fail (self->model != NULL && self->capture_cancellable == NULL);

  warn_if_large (self, text, &options);
  self->capture_cancellable = g_cancellable_new ();
  set_capturing (self, TRUE);
  gtk_popover_popdown (GTK_POPOVER (self->prompt_popover));
  status = g_strdup_printf (_("Running %s…"), saccade_loaded_model_get_name (self->model));
  saccade_window_set_status (self, status);
  saccade_capture_text_async (self, self->model, self->db_path, text, &options,
                              self->capture_cancellable, capture_progress, self, capture_done,
                              NULL);
}

void
saccade_window_run (SaccadeWindow *self)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->sentence_entry));
  g_autofree char *stripped = g_strstrip (g_strdup (text != NULL ? text : ""));

  if (saccade_window_is_capturing (self) || self->queued_text != NULL)
    return;
  g_clear_pointer (&self->last_error, g_free);
  if (*stripped == '\0')
    {
      saccade_window_toast (self, _("Type a sentence first"));
      gtk_widget_grab_focus (GTK_WIDGET (self->sentence_entry));
      return;
    }
  if (self->model != NULL)
    {
      saccade_window_start_capture (self, text);
      return;
    }
  if (self->model_error != NULL && self->model_cancellable == NULL)
    {
      saccade_window_show_error (self, _("Could not load the model"), self->model_error);
      /* The file may have appeared since (data/fetch-model.sh): try again. */
      if (!g_file_test (self->model_path, G_FILE_TEST_EXISTS))
        return;
      saccade_window_set_model_path (self, self->model_path);
    }
  /* The model is loading: run as soon as it is there. */
  if (self->model_cancellable == NULL)
    return;
  self->queued_text = g_strdup (text);
  saccade_window_update_actions (self);
}

void
saccade_window_cancel (SaccadeWindow *self)
{
  if (self->capture_cancellable != NULL)
    g_cancellable_cancel (self->capture_cancellable);
  g_clear_pointer (&self->queued_text, g_free);
  saccade_window_update_actions (self);
}

/* First start (nothing stored yet, the default model): show the sample sentence's
 * attention without the user typing anything. Called by the runs list when it arrives. */
void
saccade_window_maybe_run_sample (SaccadeWindow *self, guint n_runs)
{

  if (n_runs > 0 || g_settings_get_boolean (self->settings, "sample-done")
      || g_strcmp0 (self->model_path, saccade_model_path (NULL)) != 0
      || !g_file_test (self->model_path, G_FILE_TEST_EXISTS))
    return;
  g_settings_set_boolean (self->settings, "sample-done", TRUE);
  gtk_editable_set_text (GTK_EDITABLE (self->sentence_entry), SAMPLE_SENTENCE);
  saccade_window_run (self);
}
