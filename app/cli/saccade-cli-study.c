/* saccade-cli-study.c — a verb's study: read back, else computed on a session opened now
 * (saccade-cli-study.h). */
#include "app/cli/saccade-cli-study.h"

SaccadeStudy *
saccade_cli_study_get (const ScStudyKind *kind, const void *params, ScModel *model,
                       const SaccadeCliCommon *common, const char *db_path, gint64 run_id,
                       gboolean recompute, char **warning, GError **error)
{
  SaccadeCliSession cs = { 0 };
  ScStoreModel sm;
  ScError err = { 0 };
  SaccadeStudy *s;

  if (sc_store_model_identify (model, saccade_cli_model_path (common), &sm, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return NULL;
    }
  if (!recompute)
    {
      g_autoptr (GError) local = NULL;
      s = saccade_study_get (kind, params, model, &sm, NULL, db_path, run_id,
                             SACCADE_STUDY_STORED_ONLY, NULL, NULL, NULL, NULL, &local);
      if (s != NULL)
        return s;
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
  s = saccade_study_get (kind, params, model, &sm, cs.session, db_path, run_id,
                         recompute ? SACCADE_STUDY_RECOMPUTE : SACCADE_STUDY_DEFAULT,
                         saccade_cli_progress (), NULL, NULL, warning, error);
  saccade_cli_progress_end ();
  saccade_cli_session_close (&cs);
  return s;
}
