/* saccade-study-panel.c — one face's study of the run shown, its lookup, Run and status
 * line (see saccade-study-panel.h). */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/pages/saccade-study-panel.h"

#include <glib/gi18n.h>

#include "app/core/saccade-export.h"
#include "app/window/pages/saccade-page.h"

struct _SaccadeStudyPanel
{
  /* Borrowed */
  GtkWidget *owner;
  const SaccadeFaceOutputs *outputs;
  const SaccadeStudyPanelDesc *desc;
  SaccadeStudyPanelWidgets widgets;
  SaccadeStudyPanelParams params;
  SaccadeStudyPanelChanged changed;   /* may be NULL */

  /* Owned */
  GPtrArray *settings;          /* of borrowed widgets: insensitive while a job runs */
  SaccadeStudyJobs *jobs;       /* Run's job and the stored study's lookups */
  gpointer result;              /* the face's result shown, or NULL */
  SaccadeRun *run;
  SaccadeLoadedModel *model;
  char *db_path;
};

SaccadeStudyPanel *
saccade_study_panel_new (GtkWidget *owner, const SaccadeFaceOutputs *outputs,
                         const SaccadeStudyPanelDesc *desc,
                         const SaccadeStudyPanelWidgets *widgets, SaccadeStudyPanelParams params,
                         SaccadeStudyPanelChanged changed)
{
  SaccadeStudyPanel *self = g_new0 (SaccadeStudyPanel, 1);

  self->owner = owner;
  self->outputs = outputs;
  self->desc = desc;
  self->widgets = *widgets;
  self->params = params;
  self->changed = changed;
  self->settings = g_ptr_array_new ();
  self->jobs = saccade_study_jobs_new (widgets->status, widgets->bar, widgets->cancel);
  return self;
}

void
saccade_study_panel_add_settings (SaccadeStudyPanel *self, GtkWidget *first, ...)
{
  va_list ap;

  va_start (ap, first);
  for (GtkWidget *w = first; w != NULL; w = va_arg (ap, GtkWidget *))
    g_ptr_array_add (self->settings, w);
  va_end (ap);
}

static void
set_result (SaccadeStudyPanel *self, gpointer result)
{
  if (self->result != NULL)
    self->outputs->face->result_free (self->result);
  self->result = result;
}

void
saccade_study_panel_stop (SaccadeStudyPanel *self)
{
  saccade_study_jobs_stop (self->jobs);
  set_result (self, NULL);
}

void
saccade_study_panel_free (SaccadeStudyPanel *self)
{
  if (self == NULL)
    return;
  saccade_study_panel_stop (self);
  g_clear_object (&self->jobs);
  g_ptr_array_unref (self->settings);
  g_clear_pointer (&self->run, saccade_run_unref);
  g_clear_object (&self->model);
  g_free (self->db_path);
  g_free (self);
}

/* ------------------------------------------------------------------------------------ */
/* The source and the result                                                             */

void
saccade_study_panel_set_source (SaccadeStudyPanel *self, SaccadeRun *run,
                                SaccadeLoadedModel *model, const char *db_path)
{
  saccade_study_jobs_stop (self->jobs);
  if (run != self->run)
    {
      g_clear_pointer (&self->run, saccade_run_unref);
      self->run = run != NULL ? saccade_run_ref (run) : NULL;
    }
  g_set_object (&self->model, model);
  if (g_strcmp0 (db_path, self->db_path) != 0)
    {
      g_free (self->db_path);
      self->db_path = g_strdup (db_path);
    }
  saccade_study_panel_look_up (self);
}

SaccadeRun *
saccade_study_panel_get_run (SaccadeStudyPanel *self)
{
  return self->run;
}

SaccadeLoadedModel *
saccade_study_panel_get_model (SaccadeStudyPanel *self)
{
  return self->model;
}

gboolean
saccade_study_panel_has_source (SaccadeStudyPanel *self)
{
  return self->run != NULL && self->model != NULL && self->db_path != NULL;
}

gconstpointer
saccade_study_panel_get_result (SaccadeStudyPanel *self)
{
  return self->result;
}

const char *const *
saccade_study_panel_get_labels (SaccadeStudyPanel *self)
{
  const SaccadeStudyFaceBase *base = self->result; /* a face's result starts with it */

  if (self->run != NULL && base != NULL && self->run->n == base->n_tokens)
    return (const char *const *) self->run->labels;
  return NULL;
}

SaccadeStudyJobs *
saccade_study_panel_get_jobs (SaccadeStudyPanel *self)
{
  return self->jobs;
}

gboolean
saccade_study_panel_get_running (SaccadeStudyPanel *self)
{
  return saccade_study_jobs_get_running (self->jobs);
}

void
saccade_study_panel_set_status (SaccadeStudyPanel *self, const char *text)
{
  saccade_study_jobs_set_status (self->jobs, text);
}

/* @format, one of the owner's status texts (a msgid taking the arguments its desc comment
 * names, which msgfmt checks in every translation), translated and formatted. */
static char *
text_printf (const char *format, ...)
{
  va_list ap;
  char *text;

  va_start (ap, format);
  text = g_strdup_vprintf (_(format), ap);
  va_end (ap);
  return text;
}

/* Why Run cannot run on the loaded model (the run was captured with another model file; a
 * study that needs a backward pass on an architecture without one), or NULL. Caller
 * frees. */
static char *
cannot_run (SaccadeStudyPanel *self)
{
  ScModel *model = self->model != NULL ? saccade_loaded_model_get_model (self->model) : NULL;
  char *other = saccade_run_dup_other_model (self->run, self->model);

  if (other != NULL)
    return other;
  if (model != NULL && (self->outputs->face->kind->needs & SC_STUDY_NEEDS_BACKWARD)
      && !sc_model_has_backward (model))
    /* Translators: Run is off: the loaded model's architecture, e.g. gemma3. */
    return g_strdup_printf (_("Needs gradients, and %s models have no backward pass yet: "
                              "load a llama-architecture model such as SmolLM2"),
                            sc_model_info (model)->arch_name);
  return NULL;
}

void
saccade_study_panel_show_status (SaccadeStudyPanel *self)
{
  const SaccadeStudyFaceBase *base = self->result;
  g_autofree char *text = NULL;

  if (base != NULL && base->reused)
    text = text_printf (self->desc->reused, (long long) base->study_id);
  else if (base != NULL && base->study_id > 0)
    text = text_printf (self->desc->computed, base->seconds, (long long) base->study_id);
  else if (base != NULL)
    text = text_printf (self->desc->not_stored, base->seconds);
  else if (self->run == NULL)
    text = g_strdup (_("Select a run"));
  else if (self->model == NULL)
    text = g_strdup (_("The model is not loaded yet"));
  else if ((text = cannot_run (self)) == NULL)
    text = g_strdup (_(self->desc->not_yet));
  saccade_study_jobs_set_status (self->jobs, text);
}

/* The result or the job changed: the actions, the settings, the note, the figure, then
 * what the owner shows besides. */
static void
changed (SaccadeStudyPanel *self)
{
  const gboolean busy = saccade_study_jobs_get_running (self->jobs);
  GtkWidget *owner = self->owner;
  g_autofree char *note = NULL;

  g_autofree char *why_not = cannot_run (self);

  gtk_widget_action_set_enabled (owner, self->desc->run_action,
                                 saccade_study_panel_has_source (self) && !busy
                                   && why_not == NULL);
  gtk_widget_action_set_enabled (owner, self->desc->cancel_action, busy);
  for (guint i = 0; i < self->settings->len; i++)
    gtk_widget_set_sensitive (g_ptr_array_index (self->settings, i), !busy);
  if (self->widgets.note != NULL)
    {
      if (self->result != NULL)
        note = self->outputs->note (self->result);
      gtk_label_set_text (self->widgets.note, note != NULL ? note : "");
      gtk_widget_set_visible (GTK_WIDGET (self->widgets.note), note != NULL);
    }
  gtk_widget_queue_draw (self->widgets.figure);
  if (self->changed != NULL)
    self->changed (owner);
}

/* The result (NULL: none) is shown, then the status line says it. */
static void
show (SaccadeStudyPanel *self, gpointer result)
{
  set_result (self, result);
  changed (self);
  saccade_study_panel_show_status (self);
}

void
saccade_study_panel_show (SaccadeStudyPanel *self)
{
  show (self, self->result);
}

/* ------------------------------------------------------------------------------------ */
/* Jobs                                                                                  */

static void
lookup_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SaccadeStudyPanel *self = user_data;
  g_autoptr (GError) error = NULL;
  gpointer found = saccade_study_face_finish (result, &error);

  if (!saccade_study_jobs_finish_lookup (self->jobs, result))
    {
      if (found != NULL)
        self->outputs->face->result_free (found);
      return; /* another source, setting or request took its place */
    }
  if (found != NULL)
    show (self, found);
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
    saccade_study_jobs_set_status (self->jobs, error->message);
  else
    saccade_study_panel_show_status (self);
}

/* The params of the owner's settings, in @buf (the kind's params_size bytes); FALSE when
 * the owner refused them. */
static gpointer
current_params (SaccadeStudyPanel *self)
{
  gpointer params = g_malloc0 (self->outputs->face->kind->params_size);

  if (self->params (self->owner, params))
    return params;
  g_free (params);
  return NULL;
}

void
saccade_study_panel_look_up (SaccadeStudyPanel *self)
{
  g_autofree gpointer params = NULL;

  saccade_study_jobs_stop (self->jobs);
  show (self, NULL);
  if (!saccade_study_panel_has_source (self) || (params = current_params (self)) == NULL)
    return;
  {
    /* a run of another model: its study's params name that model's tokens (the default
     * baseline is its end-of-text token), which the loaded one cannot say; the status line
     * says why nothing is looked up or run */
    g_autofree char *other = saccade_run_dup_other_model (self->run, self->model);
    if (other != NULL)
      return;
  }
  saccade_study_face_async (self->outputs->face, self->owner, self->model, self->db_path,
                            self->run->id, params, SACCADE_STUDY_STORED_ONLY,
                            saccade_study_jobs_lookup (self->jobs), NULL, NULL, lookup_done,
                            self);
}

static char *
progress_text (gpointer owner, double fraction)
{
  SaccadeStudyPanel *self = owner;

  if (fraction < 0)
    return g_strdup (_(self->desc->working));
  return text_printf (self->desc->progress, 100.0 * fraction);
}

static void
job_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SaccadeStudyPanel *self = user_data;
  g_autoptr (GError) error = NULL;
  gpointer computed = saccade_study_face_finish (result, &error);

  if (!saccade_study_jobs_finish_job (self->jobs, result))
    {
      if (computed != NULL)
        self->outputs->face->result_free (computed);
      return; /* another source or request took its place */
    }
  if (computed != NULL)
    {
      show (self, computed);
      return;
    }
  changed (self);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    saccade_study_jobs_set_status (self->jobs, _("Cancelled"));
  else
    saccade_study_jobs_set_status (self->jobs, error->message);
}

gboolean
saccade_study_panel_run (SaccadeStudyPanel *self, SaccadeStudyFlags flags)
{
  g_autofree gpointer params = NULL;
  GCancellable *job;

  if (!saccade_study_panel_has_source (self) || saccade_study_jobs_get_running (self->jobs))
    return FALSE;
  if ((params = current_params (self)) == NULL)
    return FALSE;
  saccade_study_jobs_stop (self->jobs);
  job = saccade_study_jobs_start (self->jobs, progress_text, self);
  changed (self);
  saccade_study_face_async (self->outputs->face, self->owner, self->model, self->db_path,
                            self->run->id, params, flags, job, saccade_study_jobs_progress,
                            self->jobs, job_done, self);
  return TRUE;
}

void
saccade_study_panel_cancel (SaccadeStudyPanel *self)
{
  saccade_study_jobs_cancel (self->jobs);
}

/* ------------------------------------------------------------------------------------ */
/* Exports                                                                               */

static ScModel *
scmodel (SaccadeStudyPanel *self)
{
  return self->model != NULL ? saccade_loaded_model_get_model (self->model) : NULL;
}

char *
saccade_study_panel_dup_title (SaccadeStudyPanel *self)
{
  if (self->result == NULL)
    return g_strdup ("");
  return self->outputs->title (self->result, scmodel (self));
}

static gboolean
no_result (SaccadeStudyPanel *self, GError **error)
{
  if (self->result != NULL)
    return FALSE;
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, _(self->desc->nothing));
  return TRUE;
}

gboolean
saccade_study_panel_export_figure (SaccadeStudyPanel *self, const char *path, GError **error)
{
  if (no_result (self, error))
    return FALSE;
  return self->outputs->export_figure (self->result, scmodel (self),
                                       saccade_study_panel_get_labels (self), TRUE, path,
                                       NULL, error);
}

gboolean
saccade_study_panel_export_csv (SaccadeStudyPanel *self, const char *path, GError **error)
{
  g_autoptr (GBytes) data = NULL;

  if (no_result (self, error))
    return FALSE;
  data = self->outputs->csv (self->result, saccade_study_panel_get_labels (self));
  return saccade_export_write (data, path, error);
}
