/* sc-blas.h — the engine's one door to BLAS (OpenBLAS, loaded at run time).
 *
 * Why at run time: OpenBLAS picks its kernels when it is loaded, from the CPU model, and
 * the 0.3.21 that Debian 12 ships falls back to its generic SSE3 kernels ("Prescott", ~8
 * GFLOP/s a core) on CPUs it does not recognise, such as recent Xeons behind a hypervisor.
 * Loading it ourselves lets us choose the kernel family from the CPU's features first
 * (AVX-512 -> SkylakeX, AVX2+FMA -> Haswell) unless the user set OPENBLAS_CORETYPE, and
 * prefer the OpenMP build of OpenBLAS, whose libgomp workers we can tell to spin briefly,
 * over the pthreads build, whose workers spin after every call and fight the engine's own
 * pool (core/sc-pool.c; the engine itself uses no OpenMP) for the same cores.
 * See docs/architecture.md, "OpenBLAS is loaded at run time".
 *
 * Thread safety: sc_blas_init() is idempotent and thread-safe. sc_sgemm() and sc_sgemv()
 * may be called from any thread but from one at a time: the OpenMP build must not be
 * entered from several non-OpenMP threads at once (it deadlocked when the attention
 * kernel's pool tasks did), which is why only the calling thread of an op uses BLAS.
 */
#pragma once

#include <stdbool.h>

#include "core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Loads OpenBLAS once. SC_ERR_UNSUPPORTED (naming what was tried) when no library loads. */
ScStatus sc_blas_init (ScError *err);

/* C (m, n) = alpha * A (m, k) . op(B) + beta * C, row-major; op(B) = B^T when @trans_b
 * (B stored (n, k)), else B (k, n). Leading dimensions as in cblas. sc_blas_init() first. */
void sc_sgemm (bool trans_b, int m, int n, int k, float alpha, const float *a, int lda,
               const float *b, int ldb, float beta, float *c, int ldc);

/* sc_sgemm with either operand transposed: op(A) (m, k) is A^T (A stored (k, m)) when
 * @trans_a, else A (m, k); op(B) as above. */
void sc_sgemm_t (bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float *a,
                 int lda, const float *b, int ldb, float beta, float *c, int ldc);

/* y (m) = alpha * A (m, n) . x (n) + beta * y, A row-major with leading dimension lda. */
void sc_sgemv (int m, int n, float alpha, const float *a, int lda, const float *x, float beta,
               float *y);

/* The eigenvalues of the general real (n, n) matrix @a (destroyed; row- or column-major
 * alike: a matrix and its transpose have the same eigenvalues) into @wr, @wi (n each, real
 * and imaginary parts), through LAPACK's dgeev from the same OpenBLAS (it ships LAPACK; the
 * engine links no second one). sc_blas_init() first. Errors: SC_ERR_UNSUPPORTED when the
 * loaded library has no dgeev_ (a BLAS built without LAPACK), SC_ERR_NOMEM, SC_ERR_RANGE
 * (n < 1 or too large), SC_ERR_BACKEND (dgeev did not converge; its INFO in the message).
 * Called from one thread at a time, like sc_sgemm(). */
ScStatus sc_blas_eigenvalues (int n, double *a, double *wr, double *wi, ScError *err);

/* Threads OpenBLAS uses outside parallel regions. */
void sc_blas_set_threads (int n_threads);

/* "OpenBLAS 0.3.21, openmp, SkylakeX kernels" — valid after a successful init. */
const char *sc_blas_describe (void);

#ifdef __cplusplus
}
#endif
