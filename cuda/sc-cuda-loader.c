/* sc-cuda-loader.c — sc_backend_cuda_new() and sc_backend_cuda_device_count() for programs,
 * without linking CUDA: the backend itself lives in the module libsaccade-cuda.so
 * (sc-backend-cuda.cu and its kernels, linked with cudart and cuBLAS), which this file
 * loads with dlopen() on first use.
 *
 * Why: linking cuBLAS costs every start of the program ~0.4 s and ~200 MB of resident
 * memory before main() (the dynamic loader maps and relocates libcublasLt; measured in
 * docs/cuda.md), also for `saccade --help` and every CPU run. Loaded lazily, only a run
 * that asks for the GPU pays it, once.
 *
 * Before loading it, the loader asks the CUDA driver itself (libcuda.so.1, small, present
 * only where a driver is installed; cuInit and cuDeviceGetCount) whether there is a
 * device: "auto" on a machine without a GPU then costs a failed dlopen, not cuBLAS.
 *
 * Where the module is looked for, in order: $SC_CUDA_MODULE (a path), the build tree
 * (SC_CUDA_MODULE_BUILD, set by cuda/meson.build), the install directory
 * (SC_CUDA_MODULE_INSTALL), then the plain name through the dynamic loader's search path.
 * The module is never unloaded: backends it made point into it.
 *
 * Plain C, no CUDA headers (compiled by the C compiler). Thread-safe (pthread_once).
 */
#include "sc-backend-cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef ScBackend *(*NewFn) (int device, ScError *err);
typedef int (*CountFn) (void);
/* The driver API's, with CUresult as int (0 = CUDA_SUCCESS). */
typedef int (*CuInitFn) (unsigned flags);
typedef int (*CuCountFn) (int *count);
typedef int (*CuErrorNameFn) (int error, const char **name);

/* Does @s start with @prefix? */
static bool
has_prefix (const char *s, const char *prefix)
{
  return strncmp (s, prefix, strlen (prefix)) == 0;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static NewFn module_new;
static CountFn module_count;
static char load_error[512];
static int driver_devices; /* what the driver reported, module or not */

/* True when the driver reports a device; else fills load_error with why not. */
static bool
driver_has_device (void)
{
  void *h = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  CuInitFn cu_init;
  CuCountFn cu_count;
  CuErrorNameFn cu_name;
  const char *name = NULL, *call = "cuInit";
  int count = 0, rc;

  if (h == NULL)
    {
      const char *why = dlerror ();
      snprintf (load_error, sizeof load_error, "no CUDA driver (%s)",
                why != NULL ? why : "libcuda.so.1 not found");
      return false;
    }
  cu_init = (CuInitFn) dlsym (h, "cuInit");
  cu_count = (CuCountFn) dlsym (h, "cuDeviceGetCount");
  cu_name = (CuErrorNameFn) dlsym (h, "cuGetErrorName");
  if (cu_init == NULL || cu_count == NULL)
    {
      snprintf (load_error, sizeof load_error, "no CUDA driver (libcuda.so.1 has no cuInit)");
      return false;
    }
  rc = cu_init (0);
  if (rc == 0)
    {
      call = "cuDeviceGetCount";
      rc = cu_count (&count);
    }
  if (rc == 0 && count > 0)
    {
      driver_devices = count;
      return true; /* the driver stays loaded: cudart will use it */
    }
  if (rc != 0 && (cu_name == NULL || cu_name (rc, &name) != 0))
    name = NULL;
  if (rc != 0 && name != NULL)
    snprintf (load_error, sizeof load_error, "no CUDA device (%s: %s)", call, name);
  else if (rc != 0)
    snprintf (load_error, sizeof load_error, "no CUDA device (%s: error %d)", call, rc);
  else
    snprintf (load_error, sizeof load_error, "no CUDA device (cuDeviceGetCount: 0 devices)");
  return false;
}

static void
load (void)
{
  const char *candidates[] = { getenv ("SC_CUDA_MODULE"), SC_CUDA_MODULE_BUILD,
                               SC_CUDA_MODULE_INSTALL, "libsaccade-cuda.so" };
  void *h = NULL;
  size_t i;

  load_error[0] = '\0';
  if (!driver_has_device ())
    return;
  for (i = 0; i < sizeof candidates / sizeof candidates[0] && h == NULL; i++)
    {
      const char *why;
      if (candidates[i] == NULL || candidates[i][0] == '\0')
        continue;
      h = dlopen (candidates[i], RTLD_NOW | RTLD_LOCAL);
      if (h == NULL && load_error[0] == '\0' && (why = dlerror ()) != NULL)
        snprintf (load_error, sizeof load_error, "%s", why); /* the first failure */
    }
  if (h == NULL)
    return;
  /* dlsym on the module's handle finds the module's own definitions of these names */
  module_new = (NewFn) dlsym (h, "sc_backend_cuda_new");
  module_count = (CountFn) dlsym (h, "sc_backend_cuda_device_count");
  if (module_new == NULL || module_count == NULL)
    {
      snprintf (load_error, sizeof load_error, "the module has no sc_backend_cuda_new");
      module_new = NULL;
      module_count = NULL;
    }
}

int
sc_backend_cuda_device_count (void)
{
  pthread_once (&once, load);
  /* the driver's count when the module could not be loaded: the GPU is there all the same
   * (sc_backend_cuda_new() then says why it cannot be used) */
  return module_count != NULL ? module_count () : driver_devices;
}

ScBackend *
sc_backend_cuda_new (int device, ScError *err)
{
  pthread_once (&once, load);
  if (module_new == NULL)
    {
      if (has_prefix (load_error, "no CUDA"))
        sc_error_set (err, SC_ERR_UNSUPPORTED, "cuda: %s", load_error);
      else
        sc_error_set (err, SC_ERR_UNSUPPORTED, "cuda: the CUDA backend module could not be "
                      "loaded (%s)", load_error[0] != '\0' ? load_error : "not found");
      return NULL;
    }
  return module_new (device, err);
}
