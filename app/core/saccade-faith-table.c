/* saccade-faith-table.c — a prompt set's faithfulness as a table: its rows, per-sentence τ,
 * CSV and the window's job (header). */
#define G_LOG_DOMAIN "saccade-faithfulness"

#include "app/core/saccade-faith-table.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <math.h>

#include "app/core/saccade-csv.h"
#include "app/core/saccade-dataset.h"
#include "app/core/saccade-error.h"
#include "app/core/saccade-study.h"

gboolean
saccade_faith_table_row (const ScFaithFileSummary *s, int k, SaccadeFaithTableRow *row)
{
  int h;

  *row = (SaccadeFaithTableRow) { .source = -1, .head = -1 };
  if (k < 0 || k >= SACCADE_FAITH_TABLE_ROWS)
    return FALSE;
  if (k < SC_FAITH_N_SOURCES)
    {
      if (k >= SC_FAITH_FIRST_GRADIENT_SOURCE && s->source[k].n_defined == 0)
        return FALSE; /* gradients or context mixing not asked */
      row->source = k;
      row->m = &s->source[k];
      g_strlcpy (row->name, saccade_faith_source_name (k), sizeof row->name);
      g_strlcpy (row->id, sc_faith_source_id (k), sizeof row->id);
      return TRUE;
    }
  h = k == SC_FAITH_N_SOURCES ? s->best_head : s->median_head;
  if (h < 0 || s->n_heads <= 0)
    return FALSE;
  row->head = h;
  row->m = &s->heads[h];
  if (k == SC_FAITH_N_SOURCES)
    /* Translators: a row of the faithfulness table: the head with the highest mean τ. */
    g_snprintf (row->name, sizeof row->name, _("best head L%d.H%d"), h / s->n_heads,
                h % s->n_heads);
  else
    /* Translators: a row of the faithfulness table: the head of the median mean τ. */
    g_snprintf (row->name, sizeof row->name, _("median head L%d.H%d"), h / s->n_heads,
                h % s->n_heads);
  g_snprintf (row->id, sizeof row->id, "%s-head L%d.H%d",
              k == SC_FAITH_N_SOURCES ? "best" : "median", h / s->n_heads, h % s->n_heads);
  return TRUE;
}

int
saccade_faith_table_taus (const SaccadeFaithFile *f, const SaccadeFaithTableRow *row,
                          double *out)
{
  int n = 0;

  for (guint i = 0; i < f->sentences->len; i++)
    {
      const ScFaithResult *r = f->results[i];
      const ScFaithAgreement *a = row->head >= 0 ? sc_faith_head_used (r, row->head)
                                                 : sc_faith_source_used (r, row->source);
      /* the summary's rule for "defined" (sc-faith-summary.c): SC_OK and a finite τ */
      if (a != NULL && a->status == SC_OK && !isnan (a->tau))
        out[n++] = a->tau;
    }
  return n;
}

void
saccade_faith_table_reading (const ScFaithFileSummary *s, const SaccadeFaithTableRow *row,
                             char *buf, size_t size)
{
  if (row->source < 0)
    {
      if (size > 0)
        buf[0] = '\0';
      return;
    }
  sc_faith_summary_reading (s, row->m, sc_faith_source_title (row->source), buf, size);
}

void
saccade_faith_table_figure (const SaccadeFaithFile *f, const char *title,
                            SaccadeFaithRow rows[SACCADE_FAITH_TABLE_ROWS], char ***names,
                            double *taus, SaccadeFaithfulnessFigure *fig)
{
  int r = 0;

  saccade_faithfulness_file_figure (f, title, rows, names, fig);
  /* the same rows in the same order: both leave out what saccade_faith_table_row does */
  for (int k = 0; k < SACCADE_FAITH_TABLE_ROWS && r < fig->n_rows; k++)
    {
      SaccadeFaithTableRow row;
      double *t = taus + (size_t) r * f->sentences->len;

      if (!saccade_faith_table_row (f->summary, k, &row))
        continue;
      rows[r].taus = t;
      rows[r].n_taus = saccade_faith_table_taus (f, &row, t);
      r++;
    }
}

gboolean
saccade_faith_file_summarize (SaccadeFaithFile *f, gboolean exclude_first,
                              const ScFaithStatsParams *sp, GError **error)
{
  ScFaithFileSummary *s = NULL;
  ScError err = { 0 };

  for (guint i = 0; i < f->sentences->len; i++)
    f->results[i]->exclude_first = exclude_first;
  if (sc_faith_summarize_with ((const ScFaithResult *const *) f->results,
                               (int) f->sentences->len, sp, &s, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  sc_faith_file_summary_free (f->summary);
  f->summary = s;
  return TRUE;
}

GBytes *
saccade_faith_table_csv (const SaccadeFaithFile *f)
{
  const ScFaithFileSummary *s = f->summary;
  GString *out = g_string_new ("source,n_defined,n_undefined,tau_mean,tau_std,tau_ci_lo,"
                               "tau_ci_hi,rho_mean,rho_ci_lo,rho_ci_hi,share_p05,share_bh,"
                               "topk_mean,tau_mean_other_set,first_token,reading\r\n");

  for (int k = 0; k < SACCADE_FAITH_TABLE_ROWS; k++)
    {
      SaccadeFaithTableRow row;
      char reading[SC_FAITH_READING_MAX];
      const ScFaithSummary *m;

      if (!saccade_faith_table_row (s, k, &row))
        continue;
      m = row.m;
      saccade_csv_field (out, row.id);
      g_string_append_printf (out, ",%d,%d", m->n_defined, m->n_undefined);
      {
        const double v[] = { m->tau_mean, m->tau_std, m->tau_ci.lo, m->tau_ci.hi, m->rho_mean,
                             m->rho_ci.lo, m->rho_ci.hi, m->share_significant,
                             m->share_significant_bh, m->topk_mean, m->tau_mean_other };
        for (gsize i = 0; i < G_N_ELEMENTS (v); i++)
          saccade_csv_add_number (out, v[i]);
      }
      g_string_append (out, s->exclude_first ? ",excluded," : ",included,");
      saccade_faith_table_reading (s, &row, reading, sizeof reading);
      saccade_csv_field (out, reading);
      g_string_append (out, "\r\n");
    }
  return g_string_free_to_bytes (out);
}

/* ------------------------------------------------------------------------------------ */
/* The window's job                                                                      */

typedef struct {
  char *folder, *file_path;
  ScFaithParams params;
} FileJob;

static void
file_job_free (FileJob *j)
{
  g_free (j->folder);
  g_free (j->file_path);
  g_free (j);
}

static gpointer
file_job_func (ScModel *model, const ScStoreModel *ident, ScSession *session,
               const char *db_path, gpointer data, SaccadeStudyFlags flags,
               SaccadeProgress progress, gpointer progress_data, GCancellable *cancellable,
               char **store_warning, GError **error)
{
  const FileJob *j = data;
  const SaccadeShard whole = { 0, 1 };
  g_autofree char *path = NULL;
  g_autoptr (SaccadeFaithFile) f = NULL;
  GPtrArray *sentences;

  if ((sentences = saccade_faithfulness_read_sentences (j->file_path, error)) == NULL)
    return NULL;
  if ((path = saccade_faith_file_store_path (j->folder, j->file_path, &j->params, error))
      == NULL)
    {
      g_ptr_array_unref (sentences);
      return NULL;
    }
  if (g_mkdir_with_parents (j->folder, 0700) != 0)
    {
      const int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e),
                   _("Could not create the folder %s: %s"), j->folder, g_strerror (e));
      g_ptr_array_unref (sentences);
      return NULL;
    }
  f = saccade_faithfulness_run_stored (model, ident->path, session, j->file_path, sentences,
                                       &j->params, &whole, path, progress, progress_data,
                                       cancellable, NULL, error);
  if (f == NULL)
    return NULL;
  /* `saccade faithfulness --file` summarises again in the set asked, default statistics */
  if (!saccade_faith_file_summarize (f, j->params.exclude_first, NULL, error))
    return NULL;
  f->db_path = g_steal_pointer (&path);
  return g_steal_pointer (&f);
}

void
saccade_faith_file_async (gpointer source_object, SaccadeLoadedModel *model,
                          const char *folder, const char *file_path,
                          const ScFaithParams *params, GCancellable *cancellable,
                          SaccadeJobProgress progress, gpointer progress_data,
                          GAsyncReadyCallback callback, gpointer user_data)
{
  FileJob *j = g_new0 (FileJob, 1);

  j->folder = g_strdup (folder);
  j->file_path = g_strdup (file_path);
  j->params = *params;
  saccade_study_job_async (source_object, saccade_faith_file_async, "faithfulness over a file",
                           model, NULL, SACCADE_STUDY_DEFAULT, FALSE, file_job_func, j,
                           (GDestroyNotify) file_job_free,
                           (GDestroyNotify) saccade_faith_file_free, cancellable, progress,
                           progress_data, callback, user_data);
}

SaccadeFaithFile *
saccade_faith_file_finish (GAsyncResult *result, GError **error)
{
  return saccade_job_finish (result, saccade_faith_file_async, error);
}
