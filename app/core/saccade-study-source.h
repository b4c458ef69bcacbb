/* saccade-study-source.h — where a stored-or-computed result came from: the store's id of
 * its study, whether it was read back, and how long computing it took. The results that
 * are not of a run (the reference means, the induction detector) carry it whole, so that
 * the faces that say "reused study 12" or "computed in 3.1 s" read one struct for both.
 * (A run's studies keep the same three in SaccadeStudy and SaccadeStudyFaceBase,
 * saccade-study.h, which this header cannot include: saccade-induction.h sits below it.)
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  gint64 study_id;    /* in the store; 0 when it could not be stored */
  gboolean reused;    /* read back rather than computed */
  double seconds;     /* computing time (0 when reused) */
} SaccadeStudySource;

G_END_DECLS
