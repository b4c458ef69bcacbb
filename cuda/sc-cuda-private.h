/* sc-cuda-private.h — what the CUDA backend's files share: the state behind the handle,
 * the error helpers that turn a failed CUDA or cuBLAS call into an ScError naming the call
 * and the error's name, the growable device scratch buffers, and the kernel launchers of
 * sc-cuda-kernels.cu and sc-cuda-attention.cu. Private to cuda/.
 *
 * Streams: every op runs on one compute stream, in order, so ops need no events between
 * them; download() and the memory ops synchronise it. Captured probabilities leave the
 * device on a second (copy) stream, so that their transfer to pinned host memory overlaps
 * the next layer's kernels (sc-cuda-attention.cu).
 */
#pragma once

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "backend/sc-backend-impl.h"

/* Heads a capture slot can describe; far past any model we run (SmolLM2 9, Gemma 3 270M
 * 4, llama 70B 64). attention_capture refuses more with SC_ERR_UNSUPPORTED. */
#define SC_CUDA_MAX_HEADS 256

/* A device buffer that grows on demand (never shrinks until destroy). */
typedef struct {
  void *ptr;
  size_t bytes;
} ScCudaScratch;

/* One fp16 copy of a weight matrix, made on the first matmul that uses it. */
typedef struct {
  const float *f32; /* the handle weight() returned (the fp32 device copy) */
  __half *f16;
  size_t n;
} ScCudaHalfWeight;

/* One capture slot: device and pinned host fp16 areas, the heads they hold, and the event
 * that marks its copy done. */
typedef struct {
  ScCudaScratch dev;
  void *host;           /* pinned (cudaMallocHost) */
  size_t host_bytes;
  cudaEvent_t copied;   /* recorded on the copy stream after the transfer */
  int n_heads;          /* of the call that filled it */
  int head_at[SC_CUDA_MAX_HEADS]; /* captured head h's index in the area, -1 = none */
  size_t per_head;      /* fp16 values a head */
  bool packed;          /* triangle layout (causal, n_q == n_k) */
} ScCudaSlot;

typedef struct {
  ScBackend base;
  int device;
  cudaStream_t stream;      /* compute */
  cudaStream_t copy_stream; /* capture transfers */
  cudaEvent_t computed;     /* a capture's kernels are done (the copy waits on it) */
  cublasHandle_t blas;
  /* weights: fp32 device copies (the handles), and fp16 copies for matmul */
  float **weights;
  size_t n_weights, cap_weights;
  ScCudaHalfWeight *halves;
  size_t n_halves, cap_halves;
  /* scratch */
  ScCudaScratch x16;     /* a matmul's activations in fp16 */
  ScCudaScratch w16;     /* a matmul's W in fp16 when it is not a weight() */
  ScCudaScratch small;   /* get_rows' ids */
  /* The attention's host arguments (head list, head scales, key mask and its prefix
   * count) as last uploaded, and their device copy: a call with the same bytes (every
   * layer of a forward pass but the first) uploads nothing. An upload from pageable
   * memory waits for the stream, which would stop the host running ahead of the GPU. */
  ScCudaScratch attn_args;
  void *attn_args_host;
  size_t attn_args_len;
  ScCudaScratch lse;     /* the capture path's per-row log-sum-exp */
  ScCudaSlot slots[SC_BACKEND_CAPTURE_SLOTS];
} ScCudaBackend;

static inline ScCudaBackend *
sc_cuda (ScBackend *b)
{
  return (ScCudaBackend *) b;
}

/* Fills @err with "cuda: OP: CALL: NAME (description)" and returns the status for @e
 * (SC_ERR_NOMEM for cudaErrorMemoryAllocation, else SC_ERR_IO: the device failed). */
ScStatus sc_cuda_error (ScError *err, const char *op, const char *call, cudaError_t e);
/* The same for a cuBLAS status (cublasGetStatusName). */
ScStatus sc_cublas_error (ScError *err, const char *op, const char *call, cublasStatus_t s);

/* Evaluates a CUDA runtime call; on failure returns from the calling function with the
 * ScError (the function must have an `err` and an op name in scope as `OP`). */
#define SC_CUDA_TRY(call)                                                                     \
  do                                                                                          \
    {                                                                                         \
      cudaError_t e_ = (call);                                                                \
      if (e_ != cudaSuccess)                                                                  \
        return sc_cuda_error (err, OP, #call, e_);                                            \
    }                                                                                         \
  while (0)

#define SC_CUBLAS_TRY(call)                                                                   \
  do                                                                                          \
    {                                                                                         \
      cublasStatus_t s_ = (call);                                                             \
      if (s_ != CUBLAS_STATUS_SUCCESS)                                                        \
        return sc_cublas_error (err, OP, #call, s_);                                          \
    }                                                                                         \
  while (0)

/* After a kernel launch: the launch's own error (bad configuration, no kernel image for
 * this GPU). Errors while the kernel runs surface at the next synchronising call. */
#define SC_CUDA_LAUNCHED() SC_CUDA_TRY (cudaGetLastError ())

/* Makes @s at least @bytes (contents lost when it grows; cudaFree synchronises). */
ScStatus sc_cuda_scratch (ScCudaScratch *s, size_t bytes, const char *op, ScError *err);

/* Elementwise ops (sc-cuda-kernels.cu); arguments as the ops of sc-backend-impl.h, device
 * pointers except where named host. */
ScStatus sc_cuda_get_rows (ScBackend *b, float *dst, const float *table, const int32_t *ids,
                           int n, int dim, ScError *err);
ScStatus sc_cuda_rmsnorm (ScBackend *b, float *y, const float *x, const float *w, int n, int dim,
                          float eps, ScError *err);
ScStatus sc_cuda_rope (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot,
                       int pos0, float base, ScError *err);
ScStatus sc_cuda_swiglu (ScBackend *b, float *y, const float *gu, int n, int f, ScError *err);
ScStatus sc_cuda_add (ScBackend *b, float *y, const float *x, size_t n, ScError *err);
ScStatus sc_cuda_scale (ScBackend *b, float *y, const float *x, float f, size_t n,
                        ScError *err);
ScStatus sc_cuda_rope_neox (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot,
                            int pos0, float base, ScError *err);
ScStatus sc_cuda_layer_norm (ScBackend *b, float *y, const float *x, const float *w,
                             const float *bias, int n, int dim, float eps, ScError *err);
ScStatus sc_cuda_gelu (ScBackend *b, float *y, const float *x, size_t n, ScError *err);
ScStatus sc_cuda_geglu (ScBackend *b, float *y, const float *gu, int n, int f, ScError *err);
ScStatus sc_cuda_add_bias (ScBackend *b, float *y, const float *bias, int n, int dim,
                           ScError *err);
/* x16 (n) = fp16 (x (n)), round to nearest even (sc_fp32_to_fp16). */
ScStatus sc_cuda_to_half (ScBackend *b, __half *x16, const float *x, size_t n, ScError *err);

/* Attention (sc-cuda-attention.cu). */
ScStatus sc_cuda_attention (ScBackend *b, float *out, float *probs, const float *q,
                            const float *k, const float *v, int n_q, int n_k, int n_heads,
                            int n_kv, int d, const ScAttnParams *params, ScError *err);
ScStatus sc_cuda_attention_capture (ScBackend *b, float *out, const float *q, const float *k,
                                    const float *v, int n_q, int n_k, int n_heads, int n_kv,
                                    int d, const ScAttnParams *params, const uint8_t *want,
                                    int slot, ScError *err);
ScStatus sc_cuda_capture_wait (ScBackend *b, int slot, const uint16_t **heads, bool *packed,
                               ScError *err);
void sc_cuda_slots_free (ScCudaBackend *cb);
