/* sc-backend-cuda.cu — the CUDA backend's handle, memory, weights and projections.
 *
 * Weights. The engine hands weight() fp32 host matrices (dequantised from the GGUF by
 * format/sc-quant.c). Each is uploaded once as fp32 — that device copy is the handle every
 * op may read (rmsnorm's gain, get_rows' table) — and a matrix that reaches matmul also
 * gets an fp16 copy, made on the device on first use. Why fp16 and not bf16 or the quant
 * blocks: SmolLM2's and Gemma's weights lie far inside fp16's range (|w| < 65504; their
 * Q4/Q8 blocks have fp16 scales already), fp16 keeps 3 more mantissa bits than bf16, and
 * cuBLAS runs fp16 x fp16 with fp32 accumulation on the tensor cores; dequantising
 * kernels would save memory we do not need (135M parameters are 270 MB in fp16 next to an
 * H200's 141 GB) at the price of writing our own GEMMs. The fp32 copies of matrices that
 * only matmul reads could be dropped later; docs/cuda.md counts the memory.
 *
 * Projections: y (n, out) = x (n, in) . W^T as cublasGemmEx with x converted to fp16 on
 * the device, W fp16, y fp32 and CUBLAS_COMPUTE_32F (fp32 accumulation).
 *
 * Errors: every CUDA and cuBLAS call goes through SC_CUDA_TRY / SC_CUBLAS_TRY, so a failure
 * reaches ScError as "cuda: OP: the call: the error's name (its description)".
 */
#include "sc-backend-cuda.h"
#include "sc-cuda-private.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ScStatus
sc_cuda_error (ScError *err, const char *op, const char *call, cudaError_t e)
{
  return sc_error_set (err, e == cudaErrorMemoryAllocation ? SC_ERR_NOMEM : SC_ERR_IO,
                       "cuda: %s: %s: %s (%s)", op, call, cudaGetErrorName (e),
                       cudaGetErrorString (e));
}

ScStatus
sc_cublas_error (ScError *err, const char *op, const char *call, cublasStatus_t s)
{
  return sc_error_set (err, s == CUBLAS_STATUS_ALLOC_FAILED ? SC_ERR_NOMEM : SC_ERR_IO,
                       "cuda: %s: %s: %s (%s)", op, call, cublasGetStatusName (s),
                       cublasGetStatusString (s));
}

ScStatus
sc_cuda_scratch (ScCudaScratch *s, size_t bytes, const char *OP, ScError *err)
{
  if (s->bytes >= bytes)
    return SC_OK;
  if (s->ptr != NULL)
    SC_CUDA_TRY (cudaFree (s->ptr));
  s->ptr = NULL;
  s->bytes = 0;
  SC_CUDA_TRY (cudaMalloc (&s->ptr, bytes));
  s->bytes = bytes;
  return SC_OK;
}

/* ---- memory ------------------------------------------------------------------------ */

static float *
cuda_alloc (ScBackend *b, size_t n, ScError *err)
{
  const char *OP = "alloc";
  void *p = NULL;
  cudaError_t e;

  if (n > SIZE_MAX / sizeof (float))
    {
      sc_error_set (err, SC_ERR_NOMEM, "cuda: alloc: %zu floats do not fit in size_t bytes", n);
      return NULL;
    }
  e = cudaMalloc (&p, n > 0 ? n * sizeof (float) : sizeof (float));

  if (e != cudaSuccess)
    {
      sc_cuda_error (err, OP, "cudaMalloc", e);
      return NULL;
    }
  return (float *) p;
}

static void
cuda_free (ScBackend *b, float *buf)
{
  if (buf != NULL)
    cudaFree (buf); /* synchronises; an error here has nobody to report to */
}

static ScStatus
cuda_upload (ScBackend *b, float *dst, const float *src, size_t n, ScError *err)
{
  const char *OP = "upload";

  SC_CUDA_TRY (cudaMemcpyAsync (dst, src, n * sizeof (float), cudaMemcpyHostToDevice,
                                sc_cuda (b)->stream));
  SC_CUDA_TRY (cudaStreamSynchronize (sc_cuda (b)->stream));
  return SC_OK;
}

static ScStatus
cuda_download (ScBackend *b, float *dst, const float *src, size_t n, ScError *err)
{
  const char *OP = "download";

  SC_CUDA_TRY (cudaMemcpyAsync (dst, src, n * sizeof (float), cudaMemcpyDeviceToHost,
                                sc_cuda (b)->stream));
  SC_CUDA_TRY (cudaStreamSynchronize (sc_cuda (b)->stream));
  return SC_OK;
}

static ScStatus
cuda_copy (ScBackend *b, float *dst, const float *src, size_t n, ScError *err)
{
  const char *OP = "copy";

  SC_CUDA_TRY (cudaMemcpyAsync (dst, src, n * sizeof (float), cudaMemcpyDeviceToDevice,
                                sc_cuda (b)->stream));
  return SC_OK;
}

static ScStatus
cuda_copy_2d (ScBackend *b, float *dst, int ld_dst, const float *src, int ld_src, int rows,
              int cols, ScError *err)
{
  const char *OP = "copy_2d";

  if (rows <= 0 || cols <= 0)
    return SC_OK;
  SC_CUDA_TRY (cudaMemcpy2DAsync (dst, (size_t) ld_dst * sizeof (float), src,
                                  (size_t) ld_src * sizeof (float), (size_t) cols * sizeof (float),
                                  (size_t) rows, cudaMemcpyDeviceToDevice, sc_cuda (b)->stream));
  return SC_OK;
}

/* ---- weights and matmul ---------------------------------------------------------- */

static const float *
cuda_weight (ScBackend *b, const float *host, size_t n, ScError *err)
{
  ScCudaBackend *cb = sc_cuda (b);
  float *dev;

  if (cb->n_weights == cb->cap_weights)
    {
      const size_t cap = cb->cap_weights ? 2 * cb->cap_weights : 64;
      float **w = (float **) realloc (cb->weights, cap * sizeof *w);
      if (w == NULL)
        {
          sc_error_set (err, SC_ERR_NOMEM, "cuda: weight: out of host memory");
          return NULL;
        }
      cb->weights = w;
      cb->cap_weights = cap;
    }
  if ((dev = cuda_alloc (b, n, err)) == NULL)
    return NULL;
  if (cuda_upload (b, dev, host, n, err) != SC_OK)
    {
      cudaFree (dev);
      return NULL;
    }
  cb->weights[cb->n_weights++] = dev;
  return dev;
}

/* A matrix in its file's form: expanded to floats on the host, a panel of rows at a time
 * into one temporary, and uploaded as weight() uploads (the device keeps its fp32 copy and
 * makes its fp16 one on first use, as for any weight). */
static const float *
cuda_weight_src (ScBackend *b, const ScWeightSrc *src, ScError *err)
{
  const int64_t rows = sc_weight_src_rows (src);
  const size_t n = (size_t) rows * (size_t) src->cols;
  float *host;
  const float *dev;

  if (src->n_parts < 1 || src->cols < 1 || rows < 1)
    {
      sc_error_set (err, SC_ERR_INVALID_ARG, "cuda: weight_src: an empty matrix");
      return NULL;
    }
  if ((host = (float *) malloc (n * sizeof (float))) == NULL)
    {
      sc_error_set (err, SC_ERR_NOMEM, "cuda: weight_src: out of host memory for %zu MB",
                    (n * sizeof (float)) >> 20);
      return NULL;
    }
  if (sc_weight_src_dequant (src, 0, rows, host, err) != SC_OK)
    {
      free (host);
      return NULL;
    }
  dev = cuda_weight (b, host, n, err);
  free (host);
  return dev;
}

/* The fp16 copy of @w (n floats): for a weight() handle, made on first use and kept; for
 * any other buffer (the contract does not forbid one), converted into scratch each call. */
static ScStatus
half_weight (ScCudaBackend *cb, const float *w, size_t n, const __half **out, ScError *err)
{
  const char *OP = "matmul";
  ScCudaHalfWeight *hw;
  bool is_weight = false;
  ScStatus st;
  size_t i;

  for (i = 0; i < cb->n_halves; i++)
    if (cb->halves[i].f32 == w && cb->halves[i].n >= n)
      {
        *out = cb->halves[i].f16;
        return SC_OK;
      }
  for (i = 0; i < cb->n_weights && !is_weight; i++)
    is_weight = cb->weights[i] == w;
  if (!is_weight)
    {
      if ((st = sc_cuda_scratch (&cb->w16, n * sizeof (__half), OP, err)) != SC_OK
          || (st = sc_cuda_to_half (&cb->base, (__half *) cb->w16.ptr, w, n, err)) != SC_OK)
        return st;
      *out = (const __half *) cb->w16.ptr;
      return SC_OK;
    }
  if (cb->n_halves == cb->cap_halves)
    {
      const size_t cap = cb->cap_halves ? 2 * cb->cap_halves : 64;
      ScCudaHalfWeight *h = (ScCudaHalfWeight *) realloc (cb->halves, cap * sizeof *h);
      if (h == NULL)
        return sc_error_set (err, SC_ERR_NOMEM, "cuda: matmul: out of host memory");
      cb->halves = h;
      cb->cap_halves = cap;
    }
  hw = &cb->halves[cb->n_halves];
  hw->f32 = w;
  hw->n = n;
  hw->f16 = NULL;
  SC_CUDA_TRY (cudaMalloc ((void **) &hw->f16, n * sizeof (__half)));
  if ((st = sc_cuda_to_half (&cb->base, hw->f16, w, n, err)) != SC_OK)
    {
      cudaFree (hw->f16); /* not cached: a later call tries again */
      return st;
    }
  cb->n_halves++;
  *out = hw->f16;
  return SC_OK;
}

static ScStatus
cuda_matmul (ScBackend *b, float *y, const float *x, const float *w, int n, int in, int out,
             bool accumulate, ScError *err)
{
  const char *OP = "matmul";
  ScCudaBackend *cb = sc_cuda (b);
  const float alpha = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  const __half *w16 = NULL;
  ScStatus st;

  if (n <= 0 || out <= 0)
    return SC_OK;
  if ((st = half_weight (cb, w, (size_t) out * in, &w16, err)) != SC_OK)
    return st;
  if ((st = sc_cuda_scratch (&cb->x16, (size_t) n * in * sizeof (__half), OP, err)) != SC_OK
      || (st = sc_cuda_to_half (b, (__half *) cb->x16.ptr, x, (size_t) n * in, err)) != SC_OK)
    return st;
  /* Column-major view: y^T (out, n) = W (out, in) . x^T (in, n); W row-major (out, in) is
   * column-major (in, out), hence OP_T. */
  SC_CUBLAS_TRY (cublasGemmEx (cb->blas, CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, &alpha, w16,
                               CUDA_R_16F, in, cb->x16.ptr, CUDA_R_16F, in, &beta, y, CUDA_R_32F,
                               out, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  return SC_OK;
}

/* ---- the handle ------------------------------------------------------------------ */

static void
cuda_destroy (ScBackend *b)
{
  ScCudaBackend *cb = sc_cuda (b);
  size_t i;

  cudaSetDevice (cb->device);
  if (cb->stream != NULL)
    cudaStreamSynchronize (cb->stream);
  if (cb->copy_stream != NULL)
    cudaStreamSynchronize (cb->copy_stream);
  for (i = 0; i < cb->n_weights; i++)
    cudaFree (cb->weights[i]);
  for (i = 0; i < cb->n_halves; i++)
    cudaFree (cb->halves[i].f16);
  free (cb->weights);
  free (cb->halves);
  cudaFree (cb->x16.ptr);
  cudaFree (cb->w16.ptr);
  cudaFree (cb->small.ptr);
  cudaFree (cb->attn_args.ptr);
  free (cb->attn_args_host);
  cudaFree (cb->lse.ptr);
  sc_cuda_slots_free (cb);
  if (cb->computed != NULL)
    cudaEventDestroy (cb->computed);
  if (cb->blas != NULL)
    cublasDestroy (cb->blas);
  if (cb->stream != NULL)
    cudaStreamDestroy (cb->stream);
  if (cb->copy_stream != NULL)
    cudaStreamDestroy (cb->copy_stream);
  free (cb);
}

static const ScBackendOps cuda_ops = {
  .name = "cuda",
  .destroy = cuda_destroy,
  .alloc = cuda_alloc,
  .free = cuda_free,
  .upload = cuda_upload,
  .download = cuda_download,
  .weight = cuda_weight,
  .weight_src = cuda_weight_src,
  .get_rows = sc_cuda_get_rows,
  .rmsnorm = sc_cuda_rmsnorm,
  .matmul = cuda_matmul,
  .rope = sc_cuda_rope,
  .rope_neox = sc_cuda_rope_neox,
  .attention = sc_cuda_attention,
  .swiglu = sc_cuda_swiglu,
  .add = sc_cuda_add,
  .scale = sc_cuda_scale,
  .copy = cuda_copy,
  .copy_2d = cuda_copy_2d,
  .layer_norm = sc_cuda_layer_norm,
  .gelu = sc_cuda_gelu,
  .geglu = sc_cuda_geglu,
  .add_bias = sc_cuda_add_bias,
  .attention_capture = sc_cuda_attention_capture,
  .capture_wait = sc_cuda_capture_wait,
};

int
sc_backend_cuda_device_count (void)
{
  int n = 0;

  return cudaGetDeviceCount (&n) == cudaSuccess ? n : 0;
}

/* The body of sc_backend_cuda_new once @cb is allocated: any failure leaves what was made
 * for cuda_destroy. */
static ScStatus
cuda_init (ScCudaBackend *cb, int device, ScError *err)
{
  const char *OP = "init";
  struct cudaDeviceProp prop;
  int n = 0, s;
  cudaError_t e = cudaGetDeviceCount (&n);

  if (e != cudaSuccess || n == 0)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "cuda: no CUDA device (cudaGetDeviceCount: %s)",
                         e != cudaSuccess ? cudaGetErrorName (e) : "0 devices");
  if (device < 0 || device >= n)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "cuda: device %d does not exist (%d device%s: "
                         "0 .. %d)", device, n, n == 1 ? "" : "s", n - 1);
  cb->device = device;
  SC_CUDA_TRY (cudaSetDevice (device));
  SC_CUDA_TRY (cudaGetDeviceProperties (&prop, device));
  SC_CUDA_TRY (cudaStreamCreateWithFlags (&cb->stream, cudaStreamNonBlocking));
  SC_CUDA_TRY (cudaStreamCreateWithFlags (&cb->copy_stream, cudaStreamNonBlocking));
  SC_CUDA_TRY (cudaEventCreateWithFlags (&cb->computed, cudaEventDisableTiming));
  for (s = 0; s < SC_BACKEND_CAPTURE_SLOTS; s++)
    SC_CUDA_TRY (cudaEventCreateWithFlags (&cb->slots[s].copied, cudaEventDisableTiming));
  SC_CUBLAS_TRY (cublasCreate (&cb->blas));
  SC_CUBLAS_TRY (cublasSetStream (cb->blas, cb->stream));
  snprintf (cb->base.description, sizeof cb->base.description, "CUDA %d: %.80s (sm_%d%d, %.0f GiB)",
            device, prop.name, prop.major, prop.minor,
            (double) prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
  return SC_OK;
}

ScBackend *
sc_backend_cuda_new (int device, ScError *err)
{
  ScCudaBackend *cb = (ScCudaBackend *) calloc (1, sizeof *cb);

  if (cb == NULL)
    {
      sc_error_set (err, SC_ERR_NOMEM, "cuda: out of host memory");
      return NULL;
    }
  cb->base.ops = &cuda_ops;
  cb->base.caps = SC_BACKEND_CAP_LAYER_NORM | SC_BACKEND_CAP_GELU | SC_BACKEND_CAP_ADD_BIAS
                  | SC_BACKEND_CAP_ATTN_NONCAUSAL | SC_BACKEND_CAP_ATTN_WINDOW
                  | SC_BACKEND_CAP_ATTN_CAPTURE | SC_BACKEND_CAP_ROPE_NEOX | SC_BACKEND_CAP_SCALE;
  cb->base.n_threads = 1;
  if (cuda_init (cb, device, err) != SC_OK)
    {
      cuda_destroy (&cb->base);
      return NULL;
    }
  return &cb->base;
}
