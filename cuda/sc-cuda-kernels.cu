/* sc-cuda-kernels.cu — the CUDA backend's elementwise and row-wise kernels: get_rows,
 * rmsnorm, layer_norm, rope (llama's and NeoX's pairs), swiglu, geglu, gelu, add, add_bias,
 * scale, and the fp32 -> fp16 conversion of matmul's inputs.
 *
 * Per-element math is core/sc-math.h's (sc_siluf, sc_gelu_tanhf, sc_rope_rotate_pair,
 * sc_fp32_to_fp16), the functions the CPU backends call, compiled for the device. Row
 * reductions (rmsnorm, layer_norm) accumulate in double as the CPU ops do, and RoPE's
 * angles are computed in double and rounded once, as on the CPU: the results then differ
 * from the CPU's by float rounding, not by a different formula.
 */
#include "sc-cuda-private.h"

#include <math.h>

#include "core/sc-math.h"

/* Threads per block of the elementwise kernels (a multiple of the warp; any works). */
#define SC_CUDA_BLOCK 256
/* Blocks of a grid-stride loop: enough to fill an H200's 132 SMs several times over. */
#define SC_CUDA_MAX_BLOCKS 4096

static unsigned
blocks_for (size_t n)
{
  const size_t b = (n + SC_CUDA_BLOCK - 1) / SC_CUDA_BLOCK;
  return (unsigned) (b < 1 ? 1 : b > SC_CUDA_MAX_BLOCKS ? SC_CUDA_MAX_BLOCKS : b);
}

#define GRID_STRIDE(i, n)                                                                     \
  for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < (n);                   \
       i += (size_t) gridDim.x * blockDim.x)

/* The ops' host-side preamble: the device, the stream, an op name for errors. */
#define CUDA_OP(name)                                                                         \
  const char *OP = name;                                                                      \
  ScCudaBackend *cb = sc_cuda (b);                                                            \
  (void) cb

/* ---- conversion -------------------------------------------------------------------- */

__global__ static void
to_half_kernel (__half *y, const float *x, size_t n)
{
  GRID_STRIDE (i, n)
  y[i] = __ushort_as_half (sc_fp32_to_fp16 (x[i]));
}

ScStatus
sc_cuda_to_half (ScBackend *b, __half *x16, const float *x, size_t n, ScError *err)
{
  CUDA_OP ("fp16 conversion");

  if (n == 0)
    return SC_OK;
  to_half_kernel<<<blocks_for (n), SC_CUDA_BLOCK, 0, cb->stream>>> (x16, x, n);
  SC_CUDA_LAUNCHED ();
  return SC_OK;
}

/* ---- get_rows ------------------------------------------------------------------------ */

__global__ static void
get_rows_kernel (float *dst, const float *table, const int32_t *ids, int n, int dim)
{
  GRID_STRIDE (i, (size_t) n * dim)
  {
    const size_t row = i / dim, c = i % dim;
    dst[i] = table[(size_t) ids[row] * dim + c];
  }
}

ScStatus
sc_cuda_get_rows (ScBackend *b, float *dst, const float *table, const int32_t *ids, int n,
                  int dim, ScError *err)
{
  CUDA_OP ("get_rows");
  ScStatus st;

  if (n <= 0 || dim <= 0)
    return SC_OK;
  if ((st = sc_cuda_scratch (&cb->small, (size_t) n * sizeof (int32_t), OP, err)) != SC_OK)
    return st;
  /* ids are pageable host memory: the copy returns once they are staged */
  SC_CUDA_TRY (cudaMemcpyAsync (cb->small.ptr, ids, (size_t) n * sizeof (int32_t),
                                cudaMemcpyHostToDevice, cb->stream));
  get_rows_kernel<<<blocks_for ((size_t) n * dim), SC_CUDA_BLOCK, 0, cb->stream>>> (
      dst, table, (const int32_t *) cb->small.ptr, n, dim);
  SC_CUDA_LAUNCHED ();
  return SC_OK;
}

/* ---- row norms: one block a row, sums in double --------------------------------------- */

/* The block's sum of @v (every thread gets it). */
__device__ static double
block_sum (double v, double *shared)
{
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, n_warps = blockDim.x / 32;

  for (int off = 16; off >= 1; off /= 2)
    v += __shfl_xor_sync (0xffffffffu, v, off);
  __syncthreads (); /* shared may still be read by a previous call */
  if (lane == 0)
    shared[warp] = v;
  __syncthreads ();
  v = 0.0;
  for (int w = 0; w < n_warps; w++)
    v += shared[w];
  return v;
}

__global__ static void
rmsnorm_kernel (float *y, const float *x, const float *w, int dim, float eps)
{
  __shared__ double shared[SC_CUDA_BLOCK / 32];
  const float *xr = x + (size_t) blockIdx.x * dim;
  float *yr = y + (size_t) blockIdx.x * dim;
  double ss = 0.0;
  float scale;

  for (int c = threadIdx.x; c < dim; c += blockDim.x)
    ss += (double) xr[c] * xr[c];
  ss = block_sum (ss, shared);
  scale = (float) (1.0 / sqrt (ss / dim + (double) eps));
  for (int c = threadIdx.x; c < dim; c += blockDim.x)
    yr[c] = xr[c] * scale * w[c];
}

ScStatus
sc_cuda_rmsnorm (ScBackend *b, float *y, const float *x, const float *w, int n, int dim,
                 float eps, ScError *err)
{
  CUDA_OP ("rmsnorm");

  if (n <= 0)
    return SC_OK;
  rmsnorm_kernel<<<n, SC_CUDA_BLOCK, 0, cb->stream>>> (y, x, w, dim, eps);
  SC_CUDA_LAUNCHED ();
  return SC_OK;
}

__global__ static void
layer_norm_kernel (float *y, const float *x, const float *w, const float *bias, int dim,
                   float eps)
{
  __shared__ double shared[SC_CUDA_BLOCK / 32];
  const float *xr = x + (size_t) blockIdx.x * dim;
  float *yr = y + (size_t) blockIdx.x * dim;
  double mean = 0.0, var = 0.0, inv;

  for (int c = threadIdx.x; c < dim; c += blockDim.x)
    mean += xr[c];
  mean = block_sum (mean, shared) / dim;
  for (int c = threadIdx.x; c < dim; c += blockDim.x)
    var += ((double) xr[c] - mean) * ((double) xr[c] - mean);
  var = block_sum (var, shared) / dim;
  inv = 1.0 / sqrt (var + (double) eps);
  /* every thread has read its elements before any writes (y may alias x): block_sum's
   * barriers order them */
  for (int c = threadIdx.x; c < dim; c += blockDim.x)
    yr[c] = (float) (((double) xr[c] - mean) * inv * w[c] + (bias != NULL ? bias[c] : 0.0));
}

ScStatus
sc_cuda_layer_norm (ScBackend *b, float *y, const float *x, const float *w, const float *bias,
                    int n, int dim, float eps, ScError *err)
{
  CUDA_OP ("layer_norm");

  if (n <= 0)
    return SC_OK;
  layer_norm_kernel<<<n, SC_CUDA_BLOCK, 0, cb->stream>>> (y, x, w, bias, dim, eps);
  SC_CUDA_LAUNCHED ();
  return SC_OK;
}

/* ---- RoPE ------------------------------------------------------------------------------ */

/* One thread a (row, head, pair): the angle pos * base^(-2c/n_rot) in double, rounded
 * once (as the CPU backends compute it). The pair is (2c, 2c+1) for llama's rope and
 * (c, c + n_rot/2) for the NeoX form (Gemma), as in the CPU backend's rope_apply. */
__global__ static void
rope_kernel (float *x, int n, int n_heads, int head_dim, int half, int n_rot, int pos0,
             float base, bool neox)
{
  GRID_STRIDE (t, (size_t) n * n_heads * half)
  {
    const int c = (int) (t % half);
    const size_t rh = t / half; /* row * n_heads + head */
    const int i = (int) (rh / n_heads);
    const double theta = (double) (pos0 + i) * pow ((double) base, -2.0 * c / n_rot);
    float *xh = x + rh * head_dim;
    if (neox)
      sc_rope_rotate_pair (&xh[c], &xh[c + half], (float) cos (theta), (float) sin (theta));
    else
      sc_rope_rotate_pair (&xh[2 * c], &xh[2 * c + 1], (float) cos (theta), (float) sin (theta));
  }
}

static ScStatus
rope_launch (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot, int pos0,
             float base, bool neox, ScError *err)
{
  CUDA_OP (neox ? "rope_neox" : "rope");
  const int half = n_rot / 2;

  if (half == 0 || n <= 0)
    return SC_OK;
  rope_kernel<<<blocks_for ((size_t) n * n_heads * half), SC_CUDA_BLOCK, 0, cb->stream>>> (
      x, n, n_heads, head_dim, half, n_rot, pos0, base, neox);
  SC_CUDA_LAUNCHED ();
  return SC_OK;
}

ScStatus
sc_cuda_rope (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot, int pos0,
              float base, ScError *err)
{
  return rope_launch (b, x, n, n_heads, head_dim, n_rot, pos0, base, false, err);
}

ScStatus
sc_cuda_rope_neox (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot,
                   int pos0, float base, ScError *err)
{
  return rope_launch (b, x, n, n_heads, head_dim, n_rot, pos0, base, true, err);
}

/* ---- gated and plain activations, additions ---------------------------------------- */

/* y (n, f) = act(gu[:, 0:f]) * gu[:, f:2f]; gelu selects GeGLU over SwiGLU. */
__global__ static void
glu_kernel (float *y, const float *gu, int n, int f, bool gelu)
{
  GRID_STRIDE (i, (size_t) n * f)
  {
    const size_t row = i / f, c = i % f;
    const float gate = gu[row * 2 * f + c], up = gu[row * 2 * f + f + c];
    y[i] = (gelu ? sc_gelu_tanhf (gate) : sc_siluf (gate)) * up;
  }
}

ScStatus
sc_cuda_swiglu (ScBackend *b, float *y, const float *gu, int n, int f, ScError *err)
{
  CUDA_OP ("swiglu");

  if (n <= 0 || f <= 0)
    return SC_OK;
  glu_kernel<<<blocks_for ((size_t) n * f), SC_CUDA_BLOCK, 0, cb->stream>>> (y, gu, n, f, false);
  SC_CUDA_LAUNCHED ();
  return SC_OK;
}

ScStatus
sc_cuda_geglu (ScBackend *b, float *y, const float *gu, int n, int f, ScError *err)
{
  CUDA_OP ("geglu");

  if (n <= 0 || f <= 0)
    return SC_OK;
  glu_kernel<<<blocks_for ((size_t) n * f), SC_CUDA_BLOCK, 0, cb->stream>>> (y, gu, n, f, true);
  SC_CUDA_LAUNCHED ();
  return SC_OK;
}

__global__ static void
gelu_kernel (float *y, const float *x, size_t n)
{
  GRID_STRIDE (i, n)
  y[i] = sc_gelu_tanhf (x[i]);
}

ScStatus
sc_cuda_gelu (ScBackend *b, float *y, const float *x, size_t n, ScError *err)
{
  CUDA_OP ("gelu");

  if (n == 0)
    return SC_OK;
  gelu_kernel<<<blocks_for (n), SC_CUDA_BLOCK, 0, cb->stream>>> (y, x, n);
  SC_CUDA_LAUNCHED ();
  return SC_OK;
}

__global__ static void
add_kernel (float *y, const float *x, size_t n)
{
  GRID_STRIDE (i, n)
  y[i] += x[i];
}

ScStatus
sc_cuda_add (ScBackend *b, float *y, const float *x, size_t n, ScError *err)
{
  CUDA_OP ("add");

  if (n == 0)
    return SC_OK;
  add_kernel<<<blocks_for (n), SC_CUDA_BLOCK, 0, cb->stream>>> (y, x, n);
  SC_CUDA_LAUNCHED ();
  return SC_OK;
}

/* One float product per element, as the CPU backends' scale (exact-rounded). */
__global__ static void
scale_kernel (float *y, const float *x, float f, size_t n)
{
  GRID_STRIDE (i, n)
  y[i] = x[i] * f;
}

ScStatus
sc_cuda_scale (ScBackend *b, float *y, const float *x, float f, size_t n, ScError *err)
{
  CUDA_OP ("scale");

  if (n == 0)
    return SC_OK;
  scale_kernel<<<blocks_for (n), SC_CUDA_BLOCK, 0, cb->stream>>> (y, x, f, n);
  SC_CUDA_LAUNCHED ();
  return SC_OK;
}

__global__ static void
add_bias_kernel (float *y, const float *bias, int n, int dim)
{
  GRID_STRIDE (i, (size_t) n * dim)
  y[i] += bias[i % dim];
}

ScStatus
sc_cuda_add_bias (ScBackend *b, float *y, const float *bias, int n, int dim, ScError *err)
{
  CUDA_OP ("add_bias");

  if (n <= 0 || dim <= 0)
    return SC_OK;
  add_bias_kernel<<<blocks_for ((size_t) n * dim), SC_CUDA_BLOCK, 0, cb->stream>>> (y, bias, n,
                                                                                   dim);
  SC_CUDA_LAUNCHED ();
  return SC_OK;
}
