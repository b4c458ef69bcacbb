/* saccade-error.c — ScError -> GError (saccade-error.h). */
#define G_LOG_DOMAIN "saccade"

#include "app/core/saccade-error.h"

G_DEFINE_QUARK (saccade-error-quark, saccade_error)

void
saccade_set_error_from_sc (GError **error, const ScError *err)
{
  g_set_error_literal (error, SACCADE_ERROR, (int) err->status,
                       err->message[0] != '\0' ? err->message : sc_status_name (err->status));
}
