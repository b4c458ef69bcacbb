/* sc-backend-cuda.h — the CUDA backend ("cuda"): the backend contract of
 * engine/backend/sc-backend-impl.h on an NVIDIA GPU (cuda/, built when nvcc is found:
 * meson's -Dcuda=auto; docs/cuda.md has the design and what was verified where).
 *
 * Code that uses it includes this header only under SC_HAVE_CUDA (saccade_cuda_dep sets it)
 * and then treats the result as any ScBackend (engine/backend/sc-backend.h). The engine
 * itself never includes it.
 */
#pragma once

#include "engine/backend/sc-backend.h"
#include "engine/core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The number of CUDA devices the driver reports; 0 when there is no device, no driver or
 * the runtime cannot start (never an error: "no GPU" is an ordinary answer). Thread-safe. */
int sc_backend_cuda_device_count (void);

/* Creates the backend on device @device (0 .. count - 1): a cuBLAS handle, a compute stream
 * and a copy stream for captured probabilities. Returns NULL and fills @err with
 * SC_ERR_UNSUPPORTED when there is no usable device, saying why ("cuda: no CUDA driver
 * (libcuda.so.1: ...)", "cuda: no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)", or the
 * module that could not be loaded), SC_ERR_INVALID_ARG for a device index out of range,
 * or the failing CUDA/cuBLAS call and its error name. Without a driver or a device this
 * costs well under a millisecond: cuBLAS is loaded only once a device is there
 * (sc-cuda-loader.c). Free with sc_backend_free().
 * Caps: the required ops plus layer_norm, gelu/geglu, add_bias, non-causal and windowed
 * attention, and attention_capture; no backward ops. Used by one thread at a time. */
ScBackend *sc_backend_cuda_new (int device, ScError *err);

#ifdef __cplusplus
}
#endif
