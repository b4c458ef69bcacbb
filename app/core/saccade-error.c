/* saccade-error.c — ScError -> GError (saccade-error.h). */
#define G_LOG_DOMAIN "saccade"

#include "app/core/saccade-error.h"

#include <gio/gio.h>
#include <glib/gi18n.h>

G_DEFINE_QUARK (saccade-error-quark, saccade_error)

void
saccade_set_error_from_sc (GError **error, const ScError *err)
{
  g_set_error_literal (error, SACCADE_ERROR, (int) err->status,
                       err->message[0] != '\0' ? err->message : sc_status_name (err->status));
}

void
saccade_set_error_from_sc_cancel (GError **error, const ScError *err)
{
  if (err->status == SC_ERR_CANCELLED)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, _("Cancelled"));
  else
    saccade_set_error_from_sc (error, err);
}
