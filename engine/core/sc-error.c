/* sc-error.c — ScError helpers (see sc-error.h). */
#include "core/sc-error.h"

#include <stdio.h>
#include <string.h>

const char *
sc_status_name (ScStatus status)
{
  switch (status)
    {
    case SC_OK: return "ok";
    case SC_ERR_INVALID_ARG: return "invalid-argument";
    case SC_ERR_IO: return "io";
    case SC_ERR_FORMAT: return "format";
    case SC_ERR_UNSUPPORTED: return "unsupported";
    case SC_ERR_RANGE: return "range";
    case SC_ERR_NOT_FOUND: return "not-found";
    case SC_ERR_NOMEM: return "out-of-memory";
    case SC_ERR_CANCELLED: return "cancelled";
    case SC_ERR_DB: return "database";
    case SC_ERR_BACKEND: return "backend";
    }
  return "unknown";
}

ScStatus
sc_error_set (ScError *err, ScStatus status, const char *fmt, ...)
{
  if (err != NULL)
    {
      va_list ap;
      err->status = status;
      va_start (ap, fmt);
      vsnprintf (err->message, sizeof err->message, fmt, ap);
      va_end (ap);
    }
  return status;
}

ScStatus
sc_error_prefix (ScError *err, const char *fmt, ...)
{
  char prefix[SC_ERROR_MESSAGE_MAX];
  char joined[SC_ERROR_MESSAGE_MAX];
  va_list ap;

  if (err == NULL)
    return SC_OK;
  va_start (ap, fmt);
  vsnprintf (prefix, sizeof prefix, fmt, ap);
  va_end (ap);
  /* Truncation is acceptable: the start of a message names the failing thing. */
  if (snprintf (joined, sizeof joined, "%s: %s", prefix, err->message) < 0)
    return err->status;
  memcpy (err->message, joined, sizeof joined);
  return err->status;
}

void
sc_error_clear (ScError *err)
{
  if (err == NULL)
    return;
  err->status = SC_OK;
  err->message[0] = '\0';
}
