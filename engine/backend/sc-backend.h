/* sc-backend.h — the compute backend interface: a small vtable of the ops the forward
 * pass needs, over buffers that live wherever the backend computes.
 *
 * The forward pass (sc-forward.c) is written once against these ops. Backends:
 *   - "cpu":     OpenBLAS sgemm + OpenMP threads (sc-backend-cpu.c), the default;
 *   - "cpu-ref": plain scalar loops accumulating in double, the ground truth that tests
 *                compare every faster path against (same file);
 *   - "cuda":    cuda/ (optional; it includes this header, the engine never includes it).
 *
 * Buffers: `float *` handles returned by alloc(). For CPU backends they are host memory;
 * for a device backend they are device pointers, which is why results reach the host only
 * through download(). All shapes are row-major and written next to each op as (rows, cols).
 * A backend is used by one thread at a time (it may use many threads inside an op).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ScBackend ScBackend;

typedef struct {
  const char *name;

  void (*destroy) (ScBackend *b);

  /* Memory. alloc returns NULL on failure; upload/download copy @bytes. */
  float *(*alloc) (ScBackend *b, size_t n_floats);
  void (*free) (ScBackend *b, float *buf);
  ScStatus (*upload) (ScBackend *b, float *dst, const float *src, size_t n_floats, ScError *err);
  ScStatus (*download) (ScBackend *b, float *dst, const float *src, size_t n_floats, ScError *err);

  /* Makes a weight matrix available to the backend. CPU backends return @host itself (no
   * copy); device backends upload once and keep the copy until destroy. */
  const float *(*weight) (ScBackend *b, const float *host, size_t n_floats, ScError *err);

  /* dst (n, dim) = table[ids[i]] rows; ids are host memory and already range-checked. */
  ScStatus (*get_rows) (ScBackend *b, float *dst, const float *table, const int32_t *ids, int n,
                        int dim);

  /* y (n, dim) = x / sqrt(mean(x^2) + eps) * w, per row; y may alias x. */
  ScStatus (*rmsnorm) (ScBackend *b, float *y, const float *x, const float *w, int n, int dim,
                       float eps);

  /* y (n, out) = x (n, in) . W^T with W (out, in); accumulate adds into y instead. */
  ScStatus (*matmul) (ScBackend *b, float *y, const float *x, const float *w, int n, int in,
                      int out, bool accumulate);

  /* In place: x (n, n_heads * head_dim), row i at position pos0 + i; rotates adjacent
   * pairs (2j, 2j+1) of the first n_rot dims of every head by pos * base^(-2j/n_rot). */
  ScStatus (*rope) (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot, int pos0,
                    float base);

  /* Causal grouped-query attention of n_q queries over n_k keys (n_q <= n_k): the queries
   * are the last n_q positions, so query row i sits at position p = n_k - n_q + i and sees
   * keys 0..p (n_q == n_k for a whole prompt; n_q < n_k when keys come from a cache).
   *   q (n_q, n_heads * d), k and v (n_k, n_kv * d); query head h uses kv head
   *     h / (n_heads / n_kv);
   *   probs (n_heads, n_q, n_k): softmax_j(scale * q_i . k_j) over the keys row i may see,
   *     exactly 0 for j > p and for keys masked by key_mask (host, (n_k) bytes, nonzero =
   *     masked; NULL = none); a row whose keys are all masked attends to itself alone;
   *   out (n_q, n_heads * d) = head_scale[h] * probs_h . v  (head_scale host (n_heads) or
   *     NULL = all 1).
   */
  ScStatus (*attention) (ScBackend *b, float *out, float *probs, const float *q, const float *k,
                         const float *v, int n_q, int n_k, int n_heads, int n_kv, int d,
                         float scale, const uint8_t *key_mask, const float *head_scale);

  /* y (n, f) = silu(gu[:, 0:f]) * gu[:, f:2f]: the fused gate|up projection (n, 2f) of a
   * SwiGLU block; y must not overlap gu. */
  ScStatus (*swiglu) (ScBackend *b, float *y, const float *gu, int n, int f);

  /* y (n) += x (n). */
  ScStatus (*add) (ScBackend *b, float *y, const float *x, size_t n);

  /* Copies n floats between backend buffers. */
  ScStatus (*copy) (ScBackend *b, float *dst, const float *src, size_t n);

  /* Copies a (rows, cols) block: dst row i = src row i, with leading dimensions (floats
   * between row starts) ld_dst and ld_src. Splits a fused projection's output. */
  ScStatus (*copy_2d) (ScBackend *b, float *dst, int ld_dst, const float *src, int ld_src,
                       int rows, int cols);
} ScBackendOps;

struct ScBackend {
  const ScBackendOps *ops;
  int n_threads;
  char description[128]; /* for display: "CPU (OpenBLAS, 2 threads)", a GPU's name */
};

/* CPU backends. @n_threads <= 0 means all cores. sc_backend_cpu_new() returns NULL and
 * fills @err when OpenBLAS cannot be loaded (sc-blas.h); the reference backend needs no
 * library and returns NULL only when out of memory. */
ScBackend *sc_backend_cpu_new (int n_threads, ScError *err);
ScBackend *sc_backend_cpu_ref_new (void);

/* Destroys any backend; NULL is a no-op. */
void sc_backend_free (ScBackend *b);

#ifdef __cplusplus
}
#endif
