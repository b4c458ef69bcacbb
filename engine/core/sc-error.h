/* sc-error.h — status codes and error messages for the engine.
 *
 * Every fallible engine function returns an ScStatus and, when the caller passes a
 * non-NULL ScError, fills it with the same status and a message that names what was
 * wrong (the file, the tensor, the key, the value). The engine never aborts or exits on
 * bad input. The GObject side maps ScError to GError (app/core/saccade-error.c).
 *
 * This header is plain C17: no GLib.
 */
#pragma once

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  SC_OK = 0,
  SC_ERR_INVALID_ARG,  /* the caller passed something out of contract */
  SC_ERR_IO,           /* open/read/mmap/write failed (errno text in the message) */
  SC_ERR_FORMAT,       /* the input is not what it claims to be, or is truncated/corrupt */
  SC_ERR_UNSUPPORTED,  /* well-formed, but a feature we do not implement (arch, quant type) */
  SC_ERR_RANGE,        /* a count or dimension is out of range or overflows */
  SC_ERR_NOT_FOUND,    /* a key, tensor, run ... that does not exist */
  SC_ERR_NOMEM,        /* allocation failed */
  SC_ERR_CANCELLED,    /* an observer or progress callback asked to stop */
  SC_ERR_DB,           /* the capture store failed (SQLite message included) */
  SC_ERR_BACKEND,      /* a compute backend failed (CUDA error text included) */
} ScStatus;

#define SC_ERROR_MESSAGE_MAX 512

typedef struct {
  ScStatus status;
  char message[SC_ERROR_MESSAGE_MAX];
} ScError;

/* Returns a short stable name for @status ("format", "unsupported", ...). Never NULL. */
const char *sc_status_name (ScStatus status);

/* Fills @err (if non-NULL) with @status and a printf-formatted message; returns @status
 * so callers can write `return sc_error_set (err, SC_ERR_FORMAT, "...", ...);`. */
ScStatus sc_error_set (ScError *err, ScStatus status, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/* Prepends "prefix: " to an existing message (to add context such as a file name).
 * No-op when @err is NULL. Returns err->status (SC_OK when err is NULL). */
ScStatus sc_error_prefix (ScError *err, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/* Resets @err to SC_OK with an empty message. NULL is a no-op. */
void sc_error_clear (ScError *err);

#ifdef __cplusplus
}
#endif
