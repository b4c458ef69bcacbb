/* saccade-error.h — the engine's errors on the GObject side. An ScError's status becomes
 * the GError code in the SACCADE_ERROR domain and its message (which names the file,
 * tensor or value that was wrong) the GError message, unchanged. */
#pragma once

#include <glib.h>

#include "engine/core/sc-error.h"

G_BEGIN_DECLS

#define SACCADE_ERROR (saccade_error_quark ())
GQuark saccade_error_quark (void);

/* Sets @error (may be NULL) from @err: code = err->status, message = err->message (or the
 * status's name when the engine gave none). */
void saccade_set_error_from_sc (GError **error, const ScError *err);

/* The same, except that SC_ERR_CANCELLED becomes G_IO_ERROR_CANCELLED ("Cancelled"), the
 * code a GIO caller tests for: for work whose only cancel is its caller's. */
void saccade_set_error_from_sc_cancel (GError **error, const ScError *err);

G_END_DECLS
