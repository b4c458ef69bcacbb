/* gpu-common.h — what the tests and the benchmark of the 'gpu' suite share: opening the
 * CUDA backend or skipping (exit 77) with the reason, and device buffers from host data.
 * Header-only (static functions); GLib test programs. */
#pragma once

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda/sc-backend-cuda.h"
#include "engine/backend/sc-backend-impl.h"

/* The CUDA backend on device 0, or exit 77 (skip) printing why when there is none; any
 * other failure fails the program. */
static inline ScBackend *
gpu_backend_or_skip (const char *program)
{
  ScError err = { SC_OK, "" };
  ScBackend *b = sc_backend_cuda_new (0, &err);

  if (b == NULL)
    {
      if (err.status != SC_ERR_UNSUPPORTED)
        g_error ("%s: %s", program, err.message);
      printf ("1..0 # SKIP %s: %s\n", program, err.message);
      exit (77);
    }
  return b;
}

/* A backend buffer holding @n floats of @host (NULL: uninitialised). */
static inline float *
gpu_upload (ScBackend *b, const float *host, size_t n)
{
  ScError err = { SC_OK, "" };
  float *buf = b->ops->alloc (b, n, &err);

  if (buf == NULL)
    g_error ("%s: alloc: %s", b->ops->name, err.message);
  if (host != NULL && b->ops->upload (b, buf, host, n, &err) != SC_OK)
    g_error ("%s: upload: %s", b->ops->name, err.message);
  return buf;
}

static inline void
gpu_download (ScBackend *b, float *host, const float *buf, size_t n)
{
  ScError err = { SC_OK, "" };

  if (b->ops->download (b, host, buf, n, &err) != SC_OK)
    g_error ("%s: download: %s", b->ops->name, err.message);
}
