/* saccade-heatmap-view-jobs.c — the heatmap view's two workers (saccade-heatmap-view.h):
 * measuring the widest of up to 8,192 token labels once per head (50 ms of CPU, too long
 * for the main thread), and writing an export of the view's range. Each works on copies
 * (labels, title) and a reference to the pyramid, so the view may change meanwhile; a
 * measurement that arrives for labels since replaced is dropped.
 */
#define G_LOG_DOMAIN "saccade-ui"

#include "ui/widgets/saccade-heatmap-view-private.h"

#include "ui/figures/saccade-figure-private.h"
#include "ui/widgets/saccade-background.h"

/* Up to this many labels are measured on the main thread when they are set (about 3 ms);
 * more in a worker (8,192: 50 ms of CPU, docs/benchmarks.md), labels hidden meanwhile. */
#define LABELS_MEASURED_INLINE 1024

/* ------------------------------------------------------------------------------------ */
/* Labels                                                                                */

/* The widest of the view's labels in font sizes, measured once per set of labels so that
 * the margins do not depend on which labels are visible. */
typedef struct {
  char **rows, **cols;
  int n_rows, n_cols;
} LabelJob;

static void
label_job_free (LabelJob *job)
{
  g_strfreev (job->rows);
  g_strfreev (job->cols);
  g_free (job);
}

static double
labels_em (char **rows, int n_rows, char **cols, int n_cols)
{
  return MAX (saccade_figure_labels_em ((const char *const *) rows, n_rows),
              saccade_figure_labels_em ((const char *const *) cols, n_cols));
}

static void
measure_in_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  LabelJob *job = task_data;
  double *em = g_new (double, 1);

  *em = labels_em (job->rows, job->n_rows, job->cols, job->n_cols);
  g_task_return_pointer (task, em, g_free);
}

static void
on_measured (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SaccadeHeatmapView *self = SACCADE_HEATMAP_VIEW (source);
  g_autofree double *em = g_task_propagate_pointer (G_TASK (result), NULL);

  if (em == NULL || g_task_get_cancellable (G_TASK (result)) != self->label_cancel)
    return; /* labels replaced meanwhile */
  g_clear_object (&self->label_cancel);
  self->label_em = *em;
  saccade_heatmap_view_invalidate (self);
}

void
saccade_heatmap_view_measure_labels (SaccadeHeatmapView *self)
{
  g_autoptr (GTask) task = NULL;
  LabelJob *job;

  if (self->label_cancel != NULL)
    g_cancellable_cancel (self->label_cancel);
  g_clear_object (&self->label_cancel);
  if (self->row_labels == NULL && self->col_labels == NULL)
    {
      self->label_em = 0.0;
      return;
    }
  if (MAX (self->n_rows, self->n_cols) <= LABELS_MEASURED_INLINE)
    {
      self->label_em = labels_em (self->row_labels, self->n_rows, self->col_labels,
                                  self->n_cols);
      return;
    }
  self->label_em = -1.0;
  self->label_cancel = g_cancellable_new ();
  job = g_new0 (LabelJob, 1);
  job->rows = g_strdupv (self->row_labels);
  job->cols = g_strdupv (self->col_labels);
  job->n_rows = self->n_rows;
  job->n_cols = self->n_cols;
  task = g_task_new (self, self->label_cancel, on_measured, NULL);
  g_task_set_source_tag (task, saccade_heatmap_view_measure_labels);
  g_task_set_task_data (task, job, (GDestroyNotify) label_job_free);
  saccade_background_run (task, measure_in_thread);
}

/* ------------------------------------------------------------------------------------ */
/* Export                                                                                */

/* Everything an export needs, owned: the view may change or go while a worker writes. */
typedef struct {
  SaccadeLod *lod;
  char **row_labels, **col_labels;
  char *title, *row_name, *col_name, *value_name, *path;
  gboolean has_opts;                  /* export options given: @opts, owning these */
  SaccadeFigureExportOptions opts;
  char *font, *export_title;
  SaccadeColormap colormap;
  SaccadeScale scale;
  SaccadeTokenRange range;
} ExportJob;

static void
export_job_free (ExportJob *job)
{
  saccade_lod_unref (job->lod);
  g_strfreev (job->row_labels);
  g_strfreev (job->col_labels);
  g_free (job->title);
  g_free (job->row_name);
  g_free (job->col_name);
  g_free (job->value_name);
  g_free (job->path);
  g_free (job->font);
  g_free (job->export_title);
  g_free (job);
}

static ExportJob *
export_job_new (SaccadeHeatmapView *self, const char *path,
                const SaccadeFigureExportOptions *opts, GError **error)
{
  ExportJob *job;
  SaccadeTokenRange range;

  if (!saccade_heatmap_view_get_export_range (self, &range))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                           _("There is nothing to export: the figure has no data"));
      return NULL;
    }
  job = g_new0 (ExportJob, 1);
  job->lod = saccade_lod_ref (self->lod);
  job->row_labels = g_strdupv (self->row_labels);
  job->col_labels = g_strdupv (self->col_labels);
  job->title = g_strdup (self->title);
  job->row_name = g_strdup (self->row_name);
  job->col_name = g_strdup (self->col_name);
  job->value_name = g_strdup (self->value_name);
  job->path = g_strdup (path);
  job->colormap = self->colormap;
  job->scale = self->scale;
  job->range = range;
  if (opts != NULL)
    {
      job->opts = *opts;
      job->has_opts = TRUE;
      job->opts.font_family = job->font = g_strdup (opts->font_family);
      job->opts.title = job->export_title = g_strdup (opts->title);
    }
  return job;
}

static gboolean
export_job_run (const ExportJob *job, GError **error)
{
  SaccadeHeatmapLodFigure f = {
    .lod = job->lod,
    .row_labels = (const char *const *) job->row_labels,
    .col_labels = (const char *const *) job->col_labels,
    .title = job->title, .colormap = job->colormap, .scale = job->scale,
    .row_name = job->row_name, .col_name = job->col_name, .value_name = job->value_name,
  };

  return saccade_figure_export_heatmap_lod (&f, &job->range, job->path,
                                            job->has_opts ? &job->opts : NULL, error);
}

static void
export_in_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  GError *error = NULL;

  if (g_task_return_error_if_cancelled (task))
    return;
  if (export_job_run (task_data, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

void
saccade_heatmap_view_export_async (SaccadeHeatmapView *self, const char *path,
                                   const SaccadeFigureExportOptions *opts,
                                   GCancellable *cancellable, GAsyncReadyCallback callback,
                                   gpointer user_data)
{
  g_autoptr (GTask) task = NULL;
  GError *error = NULL;
  ExportJob *job;

  g_return_if_fail (SACCADE_IS_HEATMAP_VIEW (self));
  g_return_if_fail (path != NULL);
  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, saccade_heatmap_view_export_async);
  if ((job = export_job_new (self, path, opts, &error)) == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  g_task_set_task_data (task, job, (GDestroyNotify) export_job_free);
  saccade_background_run (task, export_in_thread);
}

gboolean
saccade_heatmap_view_export_finish (SaccadeHeatmapView *self, GAsyncResult *result,
                                    GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

gboolean
saccade_heatmap_view_export (SaccadeHeatmapView *self, const char *path,
                             const SaccadeFigureExportOptions *opts, GError **error)
{
  ExportJob *job;
  gboolean ok;

  g_return_val_if_fail (SACCADE_IS_HEATMAP_VIEW (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  if ((job = export_job_new (self, path, opts, error)) == NULL)
    return FALSE;
  ok = export_job_run (job, error);
  export_job_free (job);
  return ok;
}
