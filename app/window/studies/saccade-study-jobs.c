/* saccade-study-jobs.c — a study page's job, lookups and status line (see
 * saccade-study-jobs.h).
 *
 * A result belongs to the page's current job or lookups when the GTask's cancellable is
 * the one handed out for them and not yet replaced: stopping drops the cancellables, so
 * whatever finishes later is recognised as stale by identity, without a generation count.
 */
#define G_LOG_DOMAIN "saccade-page"

#include "app/window/studies/saccade-study-jobs.h"

#include "app/core/saccade-job.h"

struct _SaccadeStudyJobs
{
  GObject parent_instance;

  /* Borrowed: the page's widgets (the page outlives the helper's use of them). */
  GtkLabel *status;
  GtkProgressBar *bar;
  GtkWidget *cancel_button;

  /* Owned */
  GCancellable *job;            /* the running job, or NULL */
  SaccadeStudyProgressText text;
  gpointer owner;
  double fraction;              /* of the running job */
  GCancellable *lookup;         /* shared by the running lookups, or NULL */
  int lookups;                  /* lookups running */
};

G_DEFINE_FINAL_TYPE (SaccadeStudyJobs, saccade_study_jobs, G_TYPE_OBJECT)

enum { PROP_0, PROP_STATUS, PROP_FRACTION, PROP_RUNNING, PROP_BUSY, N_PROPS };
static GParamSpec *props[N_PROPS];

/* The job's widgets and properties after it started or ended. */
static void
job_changed (SaccadeStudyJobs *self)
{
  const gboolean running = self->job != NULL;

  gtk_widget_set_visible (GTK_WIDGET (self->bar), running);
  gtk_widget_set_visible (self->cancel_button, running);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_RUNNING]);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_BUSY]);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_FRACTION]);
}

SaccadeStudyJobs *
saccade_study_jobs_new (GtkLabel *status, GtkProgressBar *bar, GtkWidget *cancel_button)
{
  SaccadeStudyJobs *self = g_object_new (SACCADE_TYPE_STUDY_JOBS, NULL);

  g_return_val_if_fail (GTK_IS_LABEL (status) && GTK_IS_PROGRESS_BAR (bar), self);
  self->status = status;
  self->bar = bar;
  self->cancel_button = cancel_button;
  gtk_widget_set_visible (GTK_WIDGET (bar), FALSE);
  gtk_widget_set_visible (cancel_button, FALSE);
  return self;
}

GCancellable *
saccade_study_jobs_start (SaccadeStudyJobs *self, SaccadeStudyProgressText text, gpointer owner)
{
  g_autofree char *line = NULL;

  g_return_val_if_fail (SACCADE_IS_STUDY_JOBS (self), NULL);
  if (self->job != NULL)
    return NULL;
  self->job = g_cancellable_new ();
  self->text = text;
  self->owner = owner;
  self->fraction = 0;
  gtk_progress_bar_set_fraction (self->bar, 0.0);
  line = text (owner, -1);
  saccade_study_jobs_set_status (self, line);
  job_changed (self);
  return self->job;
}

void
saccade_study_jobs_progress (gpointer data, double fraction)
{
  SaccadeStudyJobs *self = data;
  g_autofree char *line = NULL;

  if (self->job == NULL)
    return;
  self->fraction = fraction;
  gtk_progress_bar_set_fraction (self->bar, fraction);
  line = self->text (self->owner, fraction);
  saccade_study_jobs_set_status (self, line);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_FRACTION]);
}

gboolean
saccade_study_jobs_finish_job (SaccadeStudyJobs *self, GAsyncResult *result)
{
  g_return_val_if_fail (SACCADE_IS_STUDY_JOBS (self), FALSE);
  if (self->job == NULL || g_task_get_cancellable (G_TASK (result)) != self->job)
    return FALSE;
  g_clear_object (&self->job);
  self->fraction = 0;
  job_changed (self);
  return TRUE;
}

void
saccade_study_jobs_cancel (SaccadeStudyJobs *self)
{
  g_return_if_fail (SACCADE_IS_STUDY_JOBS (self));
  if (self->job != NULL)
    g_cancellable_cancel (self->job);
}

GCancellable *
saccade_study_jobs_lookup (SaccadeStudyJobs *self)
{
  g_return_val_if_fail (SACCADE_IS_STUDY_JOBS (self), NULL);
  if (self->lookup == NULL)
    self->lookup = g_cancellable_new ();
  if (self->lookups++ == 0)
    g_object_notify_by_pspec (G_OBJECT (self), props[PROP_BUSY]);
  return self->lookup;
}

gboolean
saccade_study_jobs_finish_lookup (SaccadeStudyJobs *self, GAsyncResult *result)
{
  g_return_val_if_fail (SACCADE_IS_STUDY_JOBS (self), FALSE);
  if (self->lookup == NULL || g_task_get_cancellable (G_TASK (result)) != self->lookup)
    return FALSE;
  if (--self->lookups == 0)
    {
      g_clear_object (&self->lookup);
      g_object_notify_by_pspec (G_OBJECT (self), props[PROP_BUSY]);
    }
  return TRUE;
}

int
saccade_study_jobs_get_lookups (SaccadeStudyJobs *self)
{
  g_return_val_if_fail (SACCADE_IS_STUDY_JOBS (self), 0);
  return self->lookups;
}

void
saccade_study_jobs_stop (SaccadeStudyJobs *self)
{
  const gboolean had_job = self->job != NULL, had_lookups = self->lookups > 0;

  g_return_if_fail (SACCADE_IS_STUDY_JOBS (self));
  saccade_job_cancel_clear (&self->job);
  self->fraction = 0;
  saccade_job_cancel_clear (&self->lookup);
  self->lookups = 0;
  if (had_job)
    job_changed (self);
  else if (had_lookups)
    g_object_notify_by_pspec (G_OBJECT (self), props[PROP_BUSY]);
}

gboolean
saccade_study_jobs_get_running (SaccadeStudyJobs *self)
{
  g_return_val_if_fail (SACCADE_IS_STUDY_JOBS (self), FALSE);
  return self->job != NULL;
}

gboolean
saccade_study_jobs_get_busy (SaccadeStudyJobs *self)
{
  g_return_val_if_fail (SACCADE_IS_STUDY_JOBS (self), FALSE);
  return self->job != NULL || self->lookups > 0;
}

double
saccade_study_jobs_get_fraction (SaccadeStudyJobs *self)
{
  g_return_val_if_fail (SACCADE_IS_STUDY_JOBS (self), 0);
  return self->job != NULL ? self->fraction : 0;
}

const char *
saccade_study_jobs_get_status (SaccadeStudyJobs *self)
{
  g_return_val_if_fail (SACCADE_IS_STUDY_JOBS (self), "");
  return self->status != NULL ? gtk_label_get_text (self->status) : "";
}

void
saccade_study_jobs_set_status (SaccadeStudyJobs *self, const char *text)
{
  g_return_if_fail (SACCADE_IS_STUDY_JOBS (self));
  if (g_strcmp0 (gtk_label_get_text (self->status), text != NULL ? text : "") == 0)
    return;
  gtk_label_set_text (self->status, text != NULL ? text : "");
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_STATUS]);
}

static void
forward_notify (SaccadeStudyJobs *self, GParamSpec *pspec, GObject *owner)
{
  GParamSpec *target = g_object_get_data (G_OBJECT (self), pspec->name);

  if (target != NULL)
    g_object_notify_by_pspec (owner, target);
}

void
saccade_study_jobs_forward (SaccadeStudyJobs *self, GObject *owner, GParamSpec *status,
                            GParamSpec *fraction)
{
  g_return_if_fail (SACCADE_IS_STUDY_JOBS (self));
  g_object_set_data (G_OBJECT (self), "status", status);
  g_object_set_data (G_OBJECT (self), "fraction", fraction);
  g_signal_connect_object (self, "notify::status", G_CALLBACK (forward_notify), owner, 0);
  g_signal_connect_object (self, "notify::fraction", G_CALLBACK (forward_notify), owner, 0);
}

static void
saccade_study_jobs_get_property (GObject *object, guint prop_id, GValue *value,
                                 GParamSpec *pspec)
{
  SaccadeStudyJobs *self = SACCADE_STUDY_JOBS (object);

  switch (prop_id)
    {
    case PROP_STATUS:
      g_value_set_string (value, saccade_study_jobs_get_status (self));
      break;
    case PROP_FRACTION:
      g_value_set_double (value, saccade_study_jobs_get_fraction (self));
      break;
    case PROP_RUNNING:
      g_value_set_boolean (value, saccade_study_jobs_get_running (self));
      break;
    case PROP_BUSY:
      g_value_set_boolean (value, saccade_study_jobs_get_busy (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
saccade_study_jobs_dispose (GObject *object)
{
  SaccadeStudyJobs *self = SACCADE_STUDY_JOBS (object);

  saccade_job_cancel_clear (&self->job);
  saccade_job_cancel_clear (&self->lookup);
  self->lookups = 0;
  G_OBJECT_CLASS (saccade_study_jobs_parent_class)->dispose (object);
}

static void
saccade_study_jobs_class_init (SaccadeStudyJobsClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->get_property = saccade_study_jobs_get_property;
  object_class->dispose = saccade_study_jobs_dispose;
  props[PROP_STATUS] = g_param_spec_string ("status", NULL, NULL, "", flags);
  props[PROP_FRACTION] = g_param_spec_double ("fraction", NULL, NULL, 0, 1, 0, flags);
  props[PROP_RUNNING] = g_param_spec_boolean ("running", NULL, NULL, FALSE, flags);
  props[PROP_BUSY] = g_param_spec_boolean ("busy", NULL, NULL, FALSE, flags);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
saccade_study_jobs_init (SaccadeStudyJobs *self)
{
}
