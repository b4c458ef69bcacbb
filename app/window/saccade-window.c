/* saccade-window.c — the main window's life: its template, settings (size, model, database),
 * the model it runs, the status line and how errors are shown.
 *
 * The window never blocks: the model loads, runs are captured, listed, loaded and deleted
 * in worker threads (saccade-capture-task.c, saccade-run.c) and the window reacts when
 * they finish. Engine errors arrive as GErrors carrying the engine's message and are shown
 * as a toast (short) or a dialog (long); the window stays usable either way.
 *
 * The pages (app/window/pages/) are known here only as SaccadePage: the window adds them
 * to its view stack, binds their cursors (one layer and head for all), hands each the run
 * shown, and asks the visible one for its id, cursor and figure title. Capturing, the
 * sidebar, the actions and export live in the other saccade-window-*.c files.
 */
#define G_LOG_DOMAIN "saccade-window"

#include "app/window/saccade-window-private.h"

#include <glib/gi18n.h>
#include <string.h>

#include "app/core/saccade-error.h"
#include "app/core/saccade-job.h"
#include "app/core/saccade-model.h"
#include "app/core/saccade-models.h"
#include "app/core/saccade-paths.h"
#include "app/window/pages/saccade-pages.h"
#include "app/window/saccade-application.h"

/* Messages up to this many characters fit a toast; longer ones (a model file's path and
 * what was wrong with it) get a dialog, where they can be read in full. */
#define TOAST_MAX_CHARS 90

G_DEFINE_FINAL_TYPE (SaccadeWindow, saccade_window, ADW_TYPE_APPLICATION_WINDOW)

/* ------------------------------------------------------------------------------------ */
/* Status, toasts, errors                                                                */

void
saccade_window_set_status (SaccadeWindow *self, const char *text)
{
  gtk_label_set_text (self->status_label, text != NULL ? text : "");
}

void
saccade_window_toast (SaccadeWindow *self, const char *message)
{
  g_autofree char *escaped = g_markup_escape_text (message, -1);
  AdwToast *toast = adw_toast_new (escaped);

  adw_toast_set_timeout (toast, 5);
  g_set_object (&self->last_toast, toast);
  adw_toast_overlay_add_toast (self->toast_overlay, toast);
}

void
saccade_window_show_error (SaccadeWindow *self, const char *title, const GError *error)
{
  AdwMessageDialog *dialog;

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;
  g_debug ("%s: %s", title, error->message);
  g_free (self->last_error);
  self->last_error = g_strdup_printf ("%s: %s", title, error->message);
  if (g_utf8_strlen (error->message, -1) + g_utf8_strlen (title, -1) <= TOAST_MAX_CHARS
      && strchr (error->message, '\n') == NULL)
    {
      g_autofree char *text = g_strdup_printf ("%s: %s", title, error->message);
      saccade_window_toast (self, text);
      return;
    }
  dialog = ADW_MESSAGE_DIALOG (adw_message_dialog_new (GTK_WINDOW (self), title, error->message));
  adw_message_dialog_add_response (dialog, "close", _("_Close"));
  adw_message_dialog_set_default_response (dialog, "close");
  gtk_window_present (GTK_WINDOW (dialog));
}

const char *
saccade_window_get_status (SaccadeWindow *self)
{
  g_return_val_if_fail (SACCADE_IS_WINDOW (self), "");
  return gtk_label_get_text (self->status_label);
}

double
saccade_window_get_progress (SaccadeWindow *self)
{
  g_return_val_if_fail (SACCADE_IS_WINDOW (self), 0);
  return gtk_widget_get_visible (GTK_WIDGET (self->progress_bar))
           ? gtk_progress_bar_get_fraction (self->progress_bar) : 0;
}

const char *
saccade_window_get_last_error (SaccadeWindow *self)
{
  g_return_val_if_fail (SACCADE_IS_WINDOW (self), NULL);
  return self->last_error;
}

void
saccade_window_dismiss_toast (SaccadeWindow *self)
{
  g_return_if_fail (SACCADE_IS_WINDOW (self));
  if (self->last_toast != NULL)
    adw_toast_dismiss (self->last_toast);
}

/* ------------------------------------------------------------------------------------ */
/* The header bar                                                                        */

const char *
saccade_window_get_sentence (SaccadeWindow *self)
{
  g_return_val_if_fail (SACCADE_IS_WINDOW (self), "");
  return gtk_editable_get_text (GTK_EDITABLE (self->sentence_entry));
}

void
saccade_window_set_sentence (SaccadeWindow *self, const char *text)
{
  g_return_if_fail (SACCADE_IS_WINDOW (self));
  gtk_editable_set_text (GTK_EDITABLE (self->sentence_entry), text != NULL ? text : "");
}

SaccadePromptPopover *
saccade_window_get_prompt_editor (SaccadeWindow *self)
{
  g_return_val_if_fail (SACCADE_IS_WINDOW (self), NULL);
  return self->prompt_popover;
}

void
saccade_window_show_prompt_editor (SaccadeWindow *self, gboolean shown)
{
  g_return_if_fail (SACCADE_IS_WINDOW (self));
  if (shown)
    gtk_menu_button_popup (self->prompt_button);
  else
    gtk_menu_button_popdown (self->prompt_button);
}

GtkWidget *
saccade_window_get_backend_badge (SaccadeWindow *self)
{
  g_return_val_if_fail (SACCADE_IS_WINDOW (self), NULL);
  return GTK_WIDGET (self->backend_label);
}

/* The status line for the run shown (or what to do when there is none). */
void
saccade_window_update_status (SaccadeWindow *self)
{
  g_autofree char *text = NULL;

  if (saccade_window_is_capturing (self))
    return; /* the progress callback owns the line */
  if (self->run != NULL)
    {
      g_autofree char *size = g_format_size (self->run->attention_bytes);
      /* Translators: the status line, e.g. "Run 17 · 12 tokens · 270 heads · 1.2 MB ·
       * SmolLM2-135M-Instruct · cpu"; the last is the backend that computed the run (its
       * short name: cpu, cpu-ref, cuda). */
      text = g_strdup_printf (_("Run %lld · %d tokens · %d heads · %s · %s · %s"),
                              (long long) self->run->id, self->run->n,
                              self->run->n_layers * self->run->n_heads, size,
                              self->run->model_name,
                              self->run->backend != NULL ? self->run->backend : "?");
    }
  else if (self->model_cancellable != NULL)
    {
      g_autofree char *base = g_path_get_basename (self->model_path);
      text = g_strdup_printf (_("Loading %s…"), base);
    }
  else if (self->model_error != NULL)
    text = g_strdup (self->model_error->message);
  else
    text = g_strdup_printf (_("Database: %s"), self->db_path);
  saccade_window_set_status (self, text);
}

/* ------------------------------------------------------------------------------------ */
/* The model                                                                             */

static void
update_model_widgets (SaccadeWindow *self)
{
  g_autofree char *base = g_path_get_basename (self->model_path);
  g_autofree char *tip = NULL;
  char *dot;

  /* The model's readable name once loaded ("Qwen2.5-Coder 0.5B Instruct · Q4_K_M": its
   * general.name and quantisation); until then, and when it cannot load, the file's. */
  if ((dot = g_strrstr (base, ".gguf")) != NULL && dot[5] == '\0')
    *dot = '\0';
  gtk_label_set_text (self->model_label,
                      self->model != NULL ? saccade_loaded_model_get_name (self->model) : base);
  saccade_window_models_sync (self);
  gtk_widget_set_visible (self->model_warning, self->model_error != NULL);
  /* No model, no backend: the badge would name the last one. */
  gtk_widget_set_visible (GTK_WIDGET (self->backend_label), self->model != NULL);
  if (self->model != NULL)
    {
      g_autofree char *shape = saccade_loaded_model_describe (self->model);
      const char *notice = saccade_loaded_model_get_backend_notice (self->model);
      /* The badge's tooltip: the backend's description, and why auto chose the CPU. */
      g_autofree char *backend_tip = g_strconcat (
        saccade_loaded_model_get_backend_description (self->model), notice != NULL ? "\n" : "",
        notice, NULL);
      g_autofree char *particulars = saccade_model_particulars (
        saccade_loaded_model_get_model (self->model));
      tip = g_strdup_printf ("%s\n%s%s%s\n%s", saccade_loaded_model_get_name (self->model), shape,
                             particulars != NULL ? "\n" : "",
                             particulars != NULL ? particulars : "", self->model_path);
      gtk_label_set_text (self->backend_label, saccade_loaded_model_get_backend_name (self->model));
      gtk_widget_set_tooltip_text (GTK_WIDGET (self->backend_label), backend_tip);
    }
  else if (self->model_error != NULL)
    tip = g_strdup (self->model_error->message);
  else
    tip = g_strdup (self->model_path);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->model_button), tip);
}


/* Hands every page the loaded model (NULL while none is). */
static void
pages_set_model (SaccadeWindow *self)
{
  for (guint i = 0; self->pages != NULL && i < self->pages->len; i++)
    saccade_page_set_model (g_ptr_array_index (self->pages, i), self->model);
}

static void
model_loaded (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr (SaccadeWindow) self = user_data;
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeLoadedModel) model = saccade_loaded_model_new_finish (result, &error);
  g_autofree char *queued = NULL;

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return; /* another model was chosen meanwhile, or the window closed */
  g_clear_object (&self->model_cancellable);
  queued = g_steal_pointer (&self->queued_text);
  if (model == NULL)
    {
      self->model_error = g_error_copy (error);
      /* Tell the user now if they are waiting for a run; otherwise the model button's
       * tooltip and the status line say it, and Run shows it. */
      saccade_window_show_error (self, _("Could not load the model"), error);
    }
  else
    self->model = g_steal_pointer (&model);
  pages_set_model (self);
  update_model_widgets (self);
  saccade_window_update_status (self);
  saccade_window_update_actions (self);
  if (queued != NULL && self->model != NULL)
    saccade_window_start_capture (self, queued);
}

void
saccade_window_set_model_path (SaccadeWindow *self, const char *new_path)
{
  g_autofree char *path = g_strdup (new_path); /* may be self->model_path itself */

  g_return_if_fail (new_path != NULL);

  saccade_job_cancel_clear (&self->model_cancellable);
  g_clear_object (&self->model);
  pages_set_model (self);
  g_clear_error (&self->model_error);
  g_free (self->model_path);
  self->model_path = g_strdup (path);

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      /* Not an error until someone presses Run: a user may only want to browse runs. */
      g_set_error (&self->model_error, SACCADE_ERROR, 0,
                   _("The model file %s does not exist: run data/fetch-model.sh to download "
                     "the default model, or choose Open Model…"), path);
    }
  else
    {
      g_autofree char *backend = g_settings_get_string (self->settings, "backend");
      self->model_cancellable = g_cancellable_new ();
      self->backend_stale = FALSE;
      saccade_loaded_model_new_for_backend_async (path, backend, self->model_cancellable,
                                                  model_loaded, g_object_ref (self));
    }
  update_model_widgets (self);
  saccade_window_update_status (self);
  saccade_window_update_actions (self);
}

void
saccade_window_backend_changed (SaccadeWindow *self)
{
  if (saccade_window_is_capturing (self) || self->queued_text != NULL)
    self->backend_stale = TRUE;
  else
    saccade_window_set_model_path (self, self->model_path);
}

/* A page computing in the background (the Compare page's distance matrix). */
static gboolean
pages_busy (SaccadeWindow *self)
{
  for (guint i = 0; self->pages != NULL && i < self->pages->len; i++)
    if (saccade_page_is_busy (g_ptr_array_index (self->pages, i)))
      return TRUE;
  return FALSE;
}

gboolean
saccade_window_is_busy (SaccadeWindow *self)
{
  return self->model_cancellable != NULL || self->capture_cancellable != NULL
         || self->listing > 0 || self->run_cancellable != NULL || self->deleting > 0
         || self->queued_text != NULL || pages_busy (self);
}

/* ------------------------------------------------------------------------------------ */
/* The pages                                                                             */

/* Adds every page to the view stack under its id, title and icon, and binds their cursors
 * to the first page's, so that stepping on one page moves them all (the Heatmap and Lines
 * pickers show the same layer; the Model page outlines the same head). */
/* What the model predicted after @position of the run shown (-1: its last token), in the
 * panel beside the pages; hidden for a run stored without predictions. */
static void
show_predictions (SaccadeWindow *self, int position)
{
  SaccadeRun *run = self->run;
  g_autofree char *heading = NULL;
  int p, k;

  self->predictions_first = -1;
  if (run == NULL || run->n_predictions == 0)
    {
      gtk_widget_set_visible (GTK_WIDGET (self->predictions_view), FALSE);
      return;
    }
  p = position >= 0 && position < run->n_predictions ? position : run->n_predictions - 1;
  k = run->k_predictions;
  heading = p == run->n_predictions - 1
    /* Translators: the predictions panel's heading: what the model says after the run's
     * last token, e.g. "Next after “␣is” (4)". */
    ? g_strdup_printf (_("Next after “%s” (%d), the last token"), run->labels[p], p)
    /* Translators: the same after the token under the pointer. */
    : g_strdup_printf (_("Next after “%s” (%d)"), run->labels[p], p);
  saccade_predictions_view_set (self->predictions_view, heading, k,
                                (const char *const *) run->predicted_labels + (gsize) p * k,
                                run->predicted_probs + (gsize) p * k);
  self->predictions_first = p * k;
  saccade_window_targets_mark (self);
  gtk_widget_set_visible (GTK_WIDGET (self->predictions_view), TRUE);
}

static void
page_query_hovered (SaccadePage *page, int position, SaccadeWindow *self)
{
  show_predictions (self, position);
}

static void
pages_init (SaccadeWindow *self)
{
  SaccadePage *first = NULL;
  guint i;

  self->pages = saccade_pages_new (self->settings);
  for (i = 0; i < self->pages->len; i++)
    {
      SaccadePage *page = g_ptr_array_index (self->pages, i);
      AdwViewStackPage *stack_page = adw_view_stack_add_titled (
        self->view_stack, GTK_WIDGET (page), saccade_page_get_page_id (page),
        saccade_page_get_title (page));

      g_signal_connect (page, "query-hovered", G_CALLBACK (page_query_hovered), self);
      g_object_bind_property (page, "title", stack_page, "title", G_BINDING_SYNC_CREATE);
      g_object_bind_property (page, "icon-name", stack_page, "icon-name", G_BINDING_SYNC_CREATE);
      if (first == NULL)
        {
          first = page;
          continue;
        }
      g_object_bind_property (first, "layer", page, "layer",
                              G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL);
      g_object_bind_property (first, "head", page, "head",
                              G_BINDING_SYNC_CREATE | G_BINDING_BIDIRECTIONAL);
    }
}

void
saccade_window_set_run (SaccadeWindow *self, SaccadeRun *run)
{
  SaccadeRun *old = self->run;
  guint i;

  self->run = run != NULL ? saccade_run_ref (run) : NULL;
  g_clear_pointer (&old, saccade_run_unref);
  if (run == NULL)
    gtk_list_box_unselect_all (self->runs_list);
  for (i = 0; i < self->pages->len; i++)
    {
      saccade_page_set_database (g_ptr_array_index (self->pages, i), self->db_path,
                                 G_LIST_MODEL (self->runs));
      saccade_page_set_run (g_ptr_array_index (self->pages, i), run);
    }
  gtk_stack_set_visible_child_name (self->content_stack, run != NULL ? "pages" : "empty");
  show_predictions (self, -1);
  saccade_window_update_status (self);
  saccade_window_update_actions (self);
}

SaccadePage *
saccade_window_get_visible_page (SaccadeWindow *self)
{
  GtkWidget *child = adw_view_stack_get_visible_child (self->view_stack);

  /* Before the stack has chosen one, the first page is what it will show. */
  if (child == NULL)
    return g_ptr_array_index (self->pages, 0);
  return SACCADE_PAGE (child);
}

SaccadePage *
saccade_window_get_page (SaccadeWindow *self, const char *page_id)
{
  guint i;

  for (i = 0; i < self->pages->len; i++)
    if (g_strcmp0 (saccade_page_get_page_id (g_ptr_array_index (self->pages, i)), page_id) == 0)
      return g_ptr_array_index (self->pages, i);
  return NULL;
}

const char *
saccade_window_get_visible_page_id (SaccadeWindow *self)
{
  return saccade_page_get_page_id (saccade_window_get_visible_page (self));
}

void
saccade_window_show_page (SaccadeWindow *self, const char *page_id)
{
  adw_view_stack_set_visible_child_name (self->view_stack, page_id);
}

int
saccade_window_get_layer (SaccadeWindow *self)
{
  return saccade_page_get_layer (saccade_window_get_visible_page (self));
}

int
saccade_window_get_head (SaccadeWindow *self)
{
  return saccade_page_get_head (saccade_window_get_visible_page (self));
}

void
saccade_window_select_head (SaccadeWindow *self, int layer, int head)
{
  /* The bindings carry it to every other page. */
  saccade_page_select_head (saccade_window_get_visible_page (self), layer, head);
}

char *
saccade_window_dup_figure_title (SaccadeWindow *self)
{
  return saccade_page_dup_figure_title (saccade_window_get_visible_page (self));
}

void
saccade_window_get_figure_settings (SaccadeWindow *self, SaccadeColormap *colormap,
                                    SaccadeScale *scale, SaccadeMetric *metric)
{
  g_autofree char *map_id = g_settings_get_string (self->settings, "colormap");
  g_autofree char *scale_id = g_settings_get_string (self->settings, "scale");
  g_autofree char *metric_id = g_settings_get_string (self->settings, "metric");

  /* An unknown id (a schema older or newer than this build) reads as the default. */
  *colormap = SACCADE_COLORMAP_VIRIDIS;
  *scale = SACCADE_SCALE_LINEAR;
  *metric = SACCADE_METRIC_ENTROPY;
  saccade_colormap_from_id (map_id, colormap);
  saccade_scale_from_id (scale_id, scale);
  saccade_metric_from_id (metric_id, metric);
}

/* ------------------------------------------------------------------------------------ */
/* The database                                                                          */

void
saccade_window_set_database (SaccadeWindow *self, const char *path)
{
  g_autofree char *title = NULL, *base = NULL;

  g_return_if_fail (path != NULL);
  g_free (self->db_path);
  self->db_path = g_strdup (path);
  base = g_path_get_basename (path);
  /* Translators: the window title, e.g. "captures.sqlite — Saccade". */
  title = g_strdup_printf (_("%s — Saccade"), base);
  gtk_window_set_title (GTK_WINDOW (self), title);
  saccade_window_set_run (self, NULL);
  saccade_window_runs_reload (self, 0);
}

/* ------------------------------------------------------------------------------------ */
/* GObject                                                                               */

static void
entry_activated (SaccadeWindow *self)
{
  saccade_window_run (self);
}

static void
entry_icon_pressed (SaccadeWindow *self, GtkEntryIconPosition pos)
{
  if (pos == GTK_ENTRY_ICON_SECONDARY && !saccade_window_is_capturing (self))
    gtk_editable_set_text (GTK_EDITABLE (self->sentence_entry), "");
}

static gboolean
saccade_window_close_request (GtkWindow *window)
{
  SaccadeWindow *self = SACCADE_WINDOW (window);
  int width = 0, height = 0;

  gtk_window_get_default_size (window, &width, &height);
  g_settings_delay (self->settings);
  g_settings_set_boolean (self->settings, "window-maximized", gtk_window_is_maximized (window));
  if (!gtk_window_is_maximized (window) && width > 0 && height > 0)
    {
      g_settings_set_int (self->settings, "window-width", width);
      g_settings_set_int (self->settings, "window-height", height);
    }
  g_settings_apply (self->settings);
  return GTK_WINDOW_CLASS (saccade_window_parent_class)->close_request (window);
}

static void
saccade_window_dispose (GObject *object)
{
  SaccadeWindow *self = SACCADE_WINDOW (object);

  g_cancellable_cancel (self->cancellable);
  if (self->settings != NULL)
    g_signal_handlers_disconnect_by_data (self->settings, self);
  if (self->model_cancellable != NULL)
    g_cancellable_cancel (self->model_cancellable);
  if (self->capture_cancellable != NULL)
    g_cancellable_cancel (self->capture_cancellable);
  if (self->run_cancellable != NULL)
    g_cancellable_cancel (self->run_cancellable);
  saccade_window_watch_stop (self);
  g_clear_pointer (&self->pages, g_ptr_array_unref);
  g_clear_object (&self->model);
  g_clear_pointer (&self->run, saccade_run_unref);
  gtk_widget_dispose_template (GTK_WIDGET (self), SACCADE_TYPE_WINDOW);
  G_OBJECT_CLASS (saccade_window_parent_class)->dispose (object);
}

static void
saccade_window_finalize (GObject *object)
{
  SaccadeWindow *self = SACCADE_WINDOW (object);

  g_clear_object (&self->settings);
  g_clear_object (&self->last_toast);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->model_cancellable);
  g_clear_object (&self->capture_cancellable);
  g_clear_object (&self->run_cancellable);
  g_clear_object (&self->runs_shown);
  g_clear_object (&self->runs_filter);
  g_clear_object (&self->runs);
  g_clear_error (&self->model_error);
  g_free (self->db_path);
  g_free (self->model_path);
  g_free (self->queued_text);
  g_free (self->search_needle);
  g_free (self->last_error);
  g_free (self->export_dir);
  G_OBJECT_CLASS (saccade_window_parent_class)->finalize (object);
}

static void
saccade_window_class_init (SaccadeWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkWindowClass *window_class = GTK_WINDOW_CLASS (klass);

  object_class->dispose = saccade_window_dispose;
  object_class->finalize = saccade_window_finalize;
  window_class->close_request = saccade_window_close_request;

  g_type_ensure (SACCADE_TYPE_PROMPT_POPOVER);
  g_type_ensure (SACCADE_TYPE_PREDICTIONS_VIEW);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/saccade/Saccade/saccade-window.ui");
#define CHILD(name) gtk_widget_class_bind_template_child (widget_class, SaccadeWindow, name)
  CHILD (toast_overlay);
  CHILD (header_bar);
  CHILD (sidebar_button);
  CHILD (model_button);
  CHILD (model_label);
  CHILD (model_warning);
  CHILD (sentence_entry);
  CHILD (prompt_button);
  CHILD (prompt_popover);
  CHILD (run_stack);
  CHILD (backend_label);
  CHILD (flap);
  CHILD (search_entry);
  CHILD (runs_list);
  CHILD (content_stack);
  CHILD (view_stack);
  CHILD (predictions_view);
  CHILD (status_label);
  CHILD (progress_bar);
  CHILD (status_cancel_button);
#undef CHILD
}

static void
saccade_window_init (SaccadeWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->cancellable = g_cancellable_new ();
  self->runs = g_list_store_new (SACCADE_TYPE_RUN_ITEM);
  g_signal_connect_swapped (self->sentence_entry, "activate", G_CALLBACK (entry_activated), self);
  g_signal_connect_swapped (self->sentence_entry, "icon-press", G_CALLBACK (entry_icon_pressed),
                            self);
  saccade_prompt_popover_bind_entry (self->prompt_popover, GTK_EDITABLE (self->sentence_entry));
}

SaccadeWindow *
saccade_window_new (AdwApplication *application, const char *db_path, const char *model_path)
{
  SaccadeWindow *self = g_object_new (SACCADE_TYPE_WINDOW, "application", application, NULL);
  g_autofree char *db = NULL, *last_db = NULL, *last_model = NULL;
  const char *env;

  self->settings = g_object_ref (saccade_application_get_settings (SACCADE_APPLICATION (application)));
  gtk_window_set_default_size (GTK_WINDOW (self),
                               g_settings_get_int (self->settings, "window-width"),
                               g_settings_get_int (self->settings, "window-height"));
  if (g_settings_get_boolean (self->settings, "window-maximized"))
    gtk_window_maximize (GTK_WINDOW (self));

  g_signal_connect_swapped (self->settings, "changed::backend", G_CALLBACK (saccade_window_backend_changed),
                            self);
  pages_init (self);
  saccade_window_actions_init (self);
  saccade_window_models_init (self);
  saccade_window_targets_init (self);
  saccade_window_runs_init (self);

  /* The model: --model, else $SACCADE_MODEL, else the last one used (if it is still
   * there), else the default — saccade_model_path() resolves the first, second and
   * last exactly as every CLI verb does. */
  last_model = g_settings_get_string (self->settings, "last-model");
  env = g_getenv ("SACCADE_MODEL");
  if (model_path == NULL && (env == NULL || *env == '\0') && *last_model != '\0'
      && g_file_test (last_model, G_FILE_TEST_EXISTS))
    model_path = last_model;
  saccade_window_set_model_path (self, model_path != NULL ? model_path
                                                          : saccade_model_path (NULL));

  /* The database: --db, else $SACCADE_DB, else the last one opened, else the default. */
  last_db = g_settings_get_string (self->settings, "last-database");
  env = g_getenv ("SACCADE_DB");
  if (db_path != NULL)
    db = g_strdup (db_path);
  else if (env != NULL && *env != '\0')
    db = g_strdup (env);
  else if (*last_db != '\0' && g_file_test (last_db, G_FILE_TEST_EXISTS))
    db = g_steal_pointer (&last_db);
  else
    db = saccade_db_path (NULL);
  saccade_window_set_database (self, db);

  gtk_widget_grab_focus (GTK_WIDGET (self->sentence_entry));
  return self;
}
