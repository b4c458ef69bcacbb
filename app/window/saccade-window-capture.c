/* saccade-window-capture.c — capturing the sentence of the header bar: Run (now, or once
 * the model has loaded), Cancel, the progress bar and status line while the layers run,
 * the toast with the stored run and its predicted next token, the question before a run
 * that adds much to the database (with the layers, heads and sparse rows to store), and
 * the sample sentence of a first start.
 *
 * The capture itself is app/core/saccade-capture-task.h's job; this file only starts it
 * and shows what it reports. Not here: loading the model (saccade-window.c), listing the
 * stored runs (saccade-window-runs.c).
 */
#define G_LOG_DOMAIN "saccade-window"

#include "app/window/saccade-window-private.h"

#include <glib/gi18n.h>

#include "app/core/saccade-capture-input.h"
#include "app/core/saccade-model.h"
#include "app/core/saccade-paths.h"
#include "app/window/saccade-preferences-window.h"
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

/* ------------------------------------------------------------------------------------ */
/* The question before a large run                                                      */

/* A run that would add more than Preferences' "ask-above" to the database asks first (as
 * `saccade capture` says on stderr; docs/store.md, "Bytes per run") and offers what the
 * command line offers: only chosen layers and heads (--layers, --heads), sparse rows
 * (--sparse). The estimate is engine/store's (sc_store_estimate_bytes) for the text's tokens
 * and the tokens to be generated; tokenising on this thread is safe (the tokenizer is
 * read-only) and quick: well under a millisecond a thousand tokens. */
typedef struct {
  SaccadeWindow *self;
  char *text;
  SaccadeCaptureOptions options; /* chat and n_generate; the rest from the rows */
  guint n_tokens;
  AdwEntryRow *layers_row, *heads_row;
  GtkSwitch *sparse_switch;
  GtkLabel *estimate_label;
} LargeRun;

static void
large_run_free (LargeRun *q)
{
  g_object_unref (q->self);
  g_free (q->text);
  g_free (q);
}

/* The heads the rows keep (NULL and FALSE with @error set when a row does not parse). */
static gboolean
large_run_keep (LargeRun *q, guint8 **keep, guint *n_kept, GError **error)
{
  const ScModelInfo *in = sc_model_info (saccade_loaded_model_get_model (q->self->model));

  return saccade_capture_keep_parse (in, gtk_editable_get_text (GTK_EDITABLE (q->layers_row)),
                                     _("Layers"),
                                     gtk_editable_get_text (GTK_EDITABLE (q->heads_row)),
                                     _("Heads"), keep, n_kept, error);
}

/* What the run stores with the rows' choices, under the rows; Run is off while a row does
 * not parse. */
static void
large_run_update (LargeRun *q)
{
  const ScModelInfo *in = sc_model_info (saccade_loaded_model_get_model (q->self->model));
  const gboolean sparse = gtk_switch_get_active (q->sparse_switch);
  g_autoptr (GError) error = NULL;
  g_autofree guint8 *keep = NULL;
  g_autofree char *text = NULL, *size = NULL;
  guint n_kept;
  gboolean ok = large_run_keep (q, &keep, &n_kept, &error);

  if (ok)
    {
      size = g_format_size (sc_store_estimate_bytes (q->n_tokens, in->n_layers, in->n_heads,
                                                     n_kept, sparse));
      text = g_strdup_printf (sparse
                                /* Translators: "With these choices: at most 1.2 GB (30 of
                                 * 270 heads; sparse rows take less)" */
                                ? _("With these choices: at most %s (%u of %u heads; sparse "
                                    "rows take less)")
                                /* Translators: "With these choices: about 1.2 GB (30 of 270
                                 * heads)" */
                                : _("With these choices: about %s (%u of %u heads)"),
                              size, n_kept, in->n_layers * in->n_heads);
    }
  gtk_label_set_text (q->estimate_label, ok ? text : error->message);
  if (ok)
    gtk_widget_remove_css_class (GTK_WIDGET (q->estimate_label), "error");
  else
    gtk_widget_add_css_class (GTK_WIDGET (q->estimate_label), "error");
  adw_message_dialog_set_response_enabled (ADW_MESSAGE_DIALOG (q->self->large_run_dialog),
                                           "run", ok);
}

static void start_capture_now (SaccadeWindow *self, const char *text,
                               const SaccadeCaptureOptions *options);

static void
large_run_response (AdwMessageDialog *dialog, const char *response, LargeRun *q)
{
  SaccadeWindow *self = q->self;
  g_autofree guint8 *keep = NULL;
  guint n_kept;

  self->large_run_dialog = NULL;
  if (g_str_equal (response, "run") && large_run_keep (q, &keep, &n_kept, NULL))
    {
      q->options.keep = keep;
      q->options.sparse_eps = gtk_switch_get_active (q->sparse_switch)
                                ? SC_STORE_DEFAULT_SPARSE_EPS : 0;
      start_capture_now (self, q->text, &q->options);
    }
  else
    {
      saccade_window_set_status (self, _("Not run; nothing was stored"));
      saccade_window_update_actions (self);
    }
}

static AdwEntryRow *
large_run_entry (AdwPreferencesGroup *group, const char *name, const char *title, LargeRun *q)
{
  AdwEntryRow *row = ADW_ENTRY_ROW (adw_entry_row_new ());

  gtk_widget_set_name (GTK_WIDGET (row), name);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_preferences_row_set_use_underline (ADW_PREFERENCES_ROW (row), TRUE);
  g_signal_connect_swapped (row, "changed", G_CALLBACK (large_run_update), q);
  adw_preferences_group_add (group, GTK_WIDGET (row));
  return row;
}

/* Asks before a run of @n_tokens that would add @bytes (more than @limit). */
static void
ask_large_run (SaccadeWindow *self, const char *text, const SaccadeCaptureOptions *options,
               guint n_tokens, guint64 bytes, guint64 limit)
{
  const ScModelInfo *in = sc_model_info (saccade_loaded_model_get_model (self->model));
  LargeRun *q = g_new0 (LargeRun, 1);
  g_autofree char *size = g_format_size (bytes), *limit_size = g_format_size (limit);
  g_autofree char *body = NULL, *layers_hint = NULL, *heads_hint = NULL;
  AdwPreferencesGroup *group = ADW_PREFERENCES_GROUP (adw_preferences_group_new ());
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  AdwActionRow *sparse_row = ADW_ACTION_ROW (adw_action_row_new ());
  GtkWidget *dialog;

  q->self = g_object_ref (self);
  q->text = g_strdup (text);
  q->options = *options;
  q->n_tokens = n_tokens;

  /* Translators: the question before a large run; "%s" is a size ("8.8 GB"). */
  body = g_strdup_printf (_("This run of %u tokens will add about %s to the database "
                            "(Preferences ask before runs larger than %s). Every head of every "
                            "layer is stored unless you choose fewer below."), n_tokens, size,
                          limit_size);
  dialog = adw_message_dialog_new (GTK_WINDOW (self), _("Store a Large Run?"), body);
  self->large_run_dialog = dialog;

  /* Translators: the layers row's hint, e.g. "Layers (0–29; e.g. 10-20 or 0,4,10-12; empty:
   * all)" */
  layers_hint = g_strdup_printf (_("_Layers (0–%u, e.g. 10-20 or 0,4; empty: all)"),
                                 in->n_layers - 1);
  heads_hint = g_strdup_printf (_("_Heads (0–%u, e.g. 0,4; empty: all)"), in->n_heads - 1);
  q->layers_row = large_run_entry (group, "layers", layers_hint, q);
  q->heads_row = large_run_entry (group, "heads", heads_hint, q);
  q->sparse_switch = GTK_SWITCH (gtk_switch_new ());
  gtk_widget_set_name (GTK_WIDGET (q->sparse_switch), "sparse");
  gtk_widget_set_valign (GTK_WIDGET (q->sparse_switch), GTK_ALIGN_CENTER);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (sparse_row), _("_Sparse Rows"));
  adw_preferences_row_set_use_underline (ADW_PREFERENCES_ROW (sparse_row), TRUE);
  adw_action_row_set_subtitle (sparse_row, _("Each row keeps its fewest keys that hold all but "
                                             "10⁻³ of its weight (saccade capture --sparse)"));
  adw_action_row_add_suffix (sparse_row, GTK_WIDGET (q->sparse_switch));
  adw_action_row_set_activatable_widget (sparse_row, GTK_WIDGET (q->sparse_switch));
  g_signal_connect_swapped (q->sparse_switch, "notify::active", G_CALLBACK (large_run_update),
                            q);
  adw_preferences_group_add (group, GTK_WIDGET (sparse_row));
  q->estimate_label = GTK_LABEL (gtk_label_new (NULL));
  gtk_widget_set_name (GTK_WIDGET (q->estimate_label), "estimate");
  gtk_label_set_wrap (q->estimate_label, TRUE);
  gtk_label_set_xalign (q->estimate_label, 0);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (group));
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (q->estimate_label));
  adw_message_dialog_set_extra_child (ADW_MESSAGE_DIALOG (dialog), box);

  adw_message_dialog_add_responses (ADW_MESSAGE_DIALOG (dialog), "cancel", _("_Cancel"),
                                    "run", _("_Run"), NULL);
  adw_message_dialog_set_response_appearance (ADW_MESSAGE_DIALOG (dialog), "run",
                                              ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  adw_message_dialog_set_close_response (ADW_MESSAGE_DIALOG (dialog), "cancel");
  g_signal_connect_data (dialog, "response", G_CALLBACK (large_run_response), q,
                         (GClosureNotify) (void (*) (void)) large_run_free, 0);
  large_run_update (q);
  saccade_window_update_actions (self);
  gtk_window_present (GTK_WINDOW (dialog));
}

static void
start_capture_now (SaccadeWindow *self, const char *text, const SaccadeCaptureOptions *options)
{
  g_autofree char *status = NULL;

  self->capture_cancellable = g_cancellable_new ();
  set_capturing (self, TRUE);
  gtk_popover_popdown (GTK_POPOVER (self->prompt_popover));
  status = g_strdup_printf (_("Running %s…"), saccade_loaded_model_get_name (self->model));
  saccade_window_set_status (self, status);
  saccade_capture_text_async (self, self->model, self->db_path, text, options,
                              self->capture_cancellable, capture_progress, self, capture_done,
                              NULL);
}

void
saccade_window_start_capture (SaccadeWindow *self, const char *text)
{
  ScModel *model;
  const ScModelInfo *in;
  g_autoptr (GArray) ids = NULL;
  const guint64 limit = saccade_preferences_ask_above_bytes (self->settings);
  SaccadeCaptureOptions options = {
    .chat = saccade_prompt_popover_get_chat (self->prompt_popover),
    .n_generate = saccade_prompt_popover_get_n_generate (self->prompt_popover),
  };

  g_return_if_fail (self->model != NULL && self->capture_cancellable == NULL
                    && self->large_run_dialog == NULL);

  model = saccade_loaded_model_get_model (self->model);
  in = sc_model_info (model);
  /* A text that does not tokenize runs, and the capture says why. */
  if (limit != G_MAXUINT64 && (ids = saccade_tokenize (model, text, -1, TRUE, NULL)) != NULL)
    {
      const guint n = ids->len + (guint) MAX (options.n_generate, 0);
      const guint64 bytes = sc_store_estimate_bytes (n, in->n_layers, in->n_heads,
                                                     in->n_layers * in->n_heads, false);
      if (bytes > limit)
        {
          ask_large_run (self, text, &options, n, bytes, limit);
          return;
        }
    }
  start_capture_now (self, text, &options);
}

void
saccade_window_run (SaccadeWindow *self)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (self->sentence_entry));
  g_autofree char *stripped = g_strstrip (g_strdup (text != NULL ? text : ""));

  if (saccade_window_is_capturing (self) || self->queued_text != NULL
      || self->large_run_dialog != NULL)
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
