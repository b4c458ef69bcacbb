/* saccade-cli-study.c — a verb's study: read back, else computed on a session opened now
 * (saccade-cli-study.h). */
#include "app/cli/saccade-cli-study.h"

gpointer
saccade_cli_study_run (SaccadeStudyFunc func, gpointer data, ScModel *model,
                       const SaccadeCliCommon *common, const char *db_path, gboolean recompute,
                       gboolean lookup_first, char **warning, GError **error)
{
  SaccadeCliSession cs = { 0 };
  ScStoreModel sm;
  ScError err = { 0 };
  gpointer result;

  if (sc_store_model_identify (model, saccade_cli_model_path (common), &sm, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  if (lookup_first && !recompute)
    {
      g_autoptr (GError) local = NULL;
      result = func (model, &sm, NULL, db_path, data, SACCADE_STUDY_STORED_ONLY, NULL, NULL,
                     NULL, NULL, &local);
      if (result != NULL)
        return result;
      /* Anything but "not stored" (a run of another model, a store that cannot be read)
       * would fail the same way computing. */
      if (!g_error_matches (local, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
        {
          g_propagate_error (error, g_steal_pointer (&local));
          return NULL;
        }
    }
  if (!saccade_cli_session_open (&cs, common, model, error))
    return NULL;
  result = func (model, &sm, cs.session, db_path, data,
                 recompute ? SACCADE_STUDY_RECOMPUTE : SACCADE_STUDY_DEFAULT,
                 saccade_cli_progress (), NULL, NULL, warning, error);
  saccade_cli_progress_end ();
  saccade_cli_session_close (&cs);
  return result;
}

typedef struct {
  const ScStudyKind *kind;
  const void *params;
  gint64 run_id;
} GetData;

static gpointer
get_func (ScModel *model, const ScStoreModel *ident, ScSession *session, const char *db_path,
          gpointer data, SaccadeStudyFlags flags, SaccadeProgress progress,
          gpointer progress_data, GCancellable *cancellable, char **store_warning,
          GError **error)
{
  GetData *d = data;

  return saccade_study_get (d->kind, d->params, model, ident, session, db_path, d->run_id,
                            flags, progress, progress_data, cancellable, store_warning, error);
}

SaccadeStudy *
saccade_cli_study_get (const ScStudyKind *kind, const void *params, ScModel *model,
                       const SaccadeCliCommon *common, const char *db_path, gint64 run_id,
                       gboolean recompute, char **warning, GError **error)
{
  GetData d = { kind, params, run_id };

  return saccade_cli_study_run (get_func, &d, model, common, db_path, recompute, TRUE, warning,
                                error);
}
