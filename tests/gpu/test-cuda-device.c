/* test-cuda-device.c — the CUDA backend's handle and its errors.
 *
 * Without a device (this part runs on every machine that builds cuda/): creating the
 * backend fails cleanly with SC_ERR_UNSUPPORTED and a message that says why: no driver
 * ("cuda: no CUDA driver (libcuda.so.1: ...)"), or the driver call and its error name
 * ("cuda: no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)", or the runtime's
 * "cudaGetDeviceCount: cudaErrorNoDevice"), or the module that could not be loaded; the
 * device count is 0. Then the test exits 77.
 * With a device: a device index out of range is SC_ERR_INVALID_ARG naming the range; the
 * caps are what sc-backend-cuda.h promises (no host memory, no backward ops, capture);
 * a failing cudaMalloc reaches ScError as SC_ERR_NOMEM naming the call and
 * cudaErrorMemoryAllocation; the backend still works after it.
 */
#include <string.h>

#include "gpu-common.h"

int
main (int argc, char **argv)
{
  ScError err = { SC_OK, "" };
  ScBackend *b;
  float *buf, one = 1.0f, back = 0.0f;
  int n = sc_backend_cuda_device_count ();

  g_test_init (&argc, &argv, NULL);
  b = sc_backend_cuda_new (0, &err);
  if (b == NULL)
    {
      g_assert_cmpint (err.status, ==, SC_ERR_UNSUPPORTED);
      g_assert_cmpint (n, ==, 0);
      if (!g_str_has_prefix (err.message, "cuda: no CUDA driver (")
          && !g_str_has_prefix (err.message, "cuda: no CUDA device (cu")
          && !g_str_has_prefix (err.message, "cuda: the CUDA backend module could not be "
                                "loaded ("))
        g_error ("the no-device message does not say why: \"%s\"", err.message);
      printf ("1..0 # SKIP no CUDA device: %s\n", err.message);
      return 77;
    }
  g_assert_cmpint (n, >=, 1);
  g_assert_cmpstr (sc_backend_name (b), ==, "cuda");
  g_assert_true (g_str_has_prefix (sc_backend_description (b), "CUDA 0: "));
  printf ("# %s, %d device(s)\n", sc_backend_description (b), n);
  g_assert_false (sc_backend_supports (b, SC_BACKEND_CAP_HOST_MEMORY));
  g_assert_false (sc_backend_supports (b, SC_BACKEND_CAP_BACKWARD));
  g_assert_true (sc_backend_supports (b, SC_BACKEND_CAP_ATTN_CAPTURE | SC_BACKEND_CAP_GELU
                                             | SC_BACKEND_CAP_LAYER_NORM
                                             | SC_BACKEND_CAP_ADD_BIAS
                                             | SC_BACKEND_CAP_ATTN_WINDOW
                                             | SC_BACKEND_CAP_ATTN_NONCAUSAL));

  /* out of range */
  g_assert_null (sc_backend_cuda_new (n, &err));
  g_assert_cmpint (err.status, ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "does not exist"));

  /* 2^60 bytes: no GPU has that */
  g_assert_null (b->ops->alloc (b, (size_t) 1 << 58, &err));
  g_assert_cmpint (err.status, ==, SC_ERR_NOMEM);
  if (strstr (err.message, "cudaMalloc") == NULL
      || strstr (err.message, "cudaErrorMemoryAllocation") == NULL)
    g_error ("the allocation error does not name the call and the error: \"%s\"", err.message);
  printf ("# %s\n", err.message);

  /* and the backend still works */
  buf = gpu_upload (b, &one, 1);
  gpu_download (b, &back, buf, 1);
  g_assert_cmpfloat (back, ==, 1.0f);
  b->ops->free (b, buf);
  sc_backend_free (b);
  return 0;
}
