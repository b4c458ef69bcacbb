/* sc-blas.c — run-time loading of OpenBLAS (see sc-blas.h for why). */
#include "backend/sc-blas.h"

#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef __typeof__ (cblas_sgemm) SgemmFn;
typedef __typeof__ (cblas_sgemv) SgemvFn;
typedef void (*SetThreadsFn) (int);
typedef char *(*StrFn) (void);
/* LAPACK's Fortran interface; the two trailing lengths are gfortran's hidden CHARACTER
 * lengths (a C-translated LAPACK ignores them). */
typedef void (*DgeevFn) (const char *jobvl, const char *jobvr, const int *n, double *a,
                         const int *lda, double *wr, double *wi, double *vl, const int *ldvl,
                         double *vr, const int *ldvr, double *work, const int *lwork,
                         int *info, size_t len_jobvl, size_t len_jobvr);

static struct {
  void *handle;
  SgemmFn *sgemm;
  SgemvFn *sgemv;
  SetThreadsFn set_threads;
  DgeevFn dgeev;            /* NULL: the library has no LAPACK */
  char loaded[128];
  char describe[160];
  char error[SC_ERROR_MESSAGE_MAX];
} blas;

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

/* The OpenMP build first (Debian/Ubuntu multiarch, then Fedora's name), then whatever
 * variant the system's alternatives point at. */
static const char *const candidates[] = {
  "/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0",
  "/usr/lib/aarch64-linux-gnu/openblas-openmp/libopenblas.so.0",
  "libopenblaso.so.0",
  "libopenblas.so.0",
  "libopenblas.so",
};

/* The kernel family for this CPU, from its features; NULL to let OpenBLAS decide. */
static const char *
preferred_coretype (void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init ();
  if (__builtin_cpu_supports ("avx512f") && __builtin_cpu_supports ("avx512bw")
      && __builtin_cpu_supports ("avx512vl") && __builtin_cpu_supports ("avx512dq"))
    return "SkylakeX";
  if (__builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma"))
    return "Haswell";
#endif
  return NULL;
}

static void
load (void)
{
  const char *user = getenv ("OPENBLAS_CORETYPE");
  const char *core = user != NULL ? NULL : preferred_coretype ();
  const char *loaded = NULL;
  StrFn corename = NULL, config = NULL;
  size_t i;

  /* OpenBLAS's OpenMP build brings libgomp, whose workers by default spin ~300k rounds
   * after each parallel region: on a busy 2-core machine a spinning worker takes the core
   * its peer needs. Unless the user chose a policy, spin briefly (GOMP_SPINCOUNT, in
   * rounds of a pause instruction, ~10 us) and then sleep. Both variables are read once,
   * by the constructors that run inside dlopen(); we set them only for the load. */
  const bool set_spin = getenv ("OMP_WAIT_POLICY") == NULL && getenv ("GOMP_SPINCOUNT") == NULL;

  if (set_spin)
    setenv ("GOMP_SPINCOUNT", "10000", 1);
  if (core != NULL)
    setenv ("OPENBLAS_CORETYPE", core, 1);
  for (i = 0; i < sizeof candidates / sizeof candidates[0] && blas.handle == NULL; i++)
    if ((blas.handle = dlopen (candidates[i], RTLD_NOW | RTLD_LOCAL)) != NULL)
      loaded = candidates[i];
  if (core != NULL)
    unsetenv ("OPENBLAS_CORETYPE");
  if (set_spin)
    unsetenv ("GOMP_SPINCOUNT");
  if (blas.handle == NULL)
    {
      snprintf (blas.error, sizeof blas.error,
                "OpenBLAS could not be loaded (tried libopenblas.so.0 and its OpenMP build): %s; "
                "install libopenblas0", dlerror ());
      return;
    }
  blas.sgemm = (SgemmFn *) dlsym (blas.handle, "cblas_sgemm");
  blas.sgemv = (SgemvFn *) dlsym (blas.handle, "cblas_sgemv");
  blas.set_threads = (SetThreadsFn) dlsym (blas.handle, "openblas_set_num_threads");
  blas.dgeev = (DgeevFn) dlsym (blas.handle, "dgeev_");
  snprintf (blas.loaded, sizeof blas.loaded, "%s", loaded);
  corename = (StrFn) dlsym (blas.handle, "openblas_get_corename");
  config = (StrFn) dlsym (blas.handle, "openblas_get_config");
  if (blas.sgemm == NULL || blas.sgemv == NULL)
    {
      snprintf (blas.error, sizeof blas.error, "%s has no cblas_sgemm/cblas_sgemv", loaded);
      dlclose (blas.handle);
      blas.handle = NULL;
      return;
    }
  snprintf (blas.describe, sizeof blas.describe, "%s%s%s kernels",
            config != NULL ? config () : "BLAS", ", ", corename != NULL ? corename () : "unknown");
  /* "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY SkylakeX MAX_THREADS=64" is long:
   * keep the version and say which threading the build uses. */
  if (config != NULL)
    {
      char version[32] = "";
      sscanf (config (), "OpenBLAS %31s", version);
      snprintf (blas.describe, sizeof blas.describe, "OpenBLAS %s (%s), %s kernels", version,
                strstr (loaded, "openmp") != NULL || strstr (loaded, "blaso") != NULL
                    ? "OpenMP" : "pthreads",
                corename != NULL ? corename () : "unknown");
    }
}

ScStatus
sc_blas_init (ScError *err)
{
  pthread_once (&blas_once, load);
  if (blas.handle == NULL)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "%s", blas.error);
  return SC_OK;
}

void
sc_sgemm (bool trans_b, int m, int n, int k, float alpha, const float *a, int lda,
          const float *b, int ldb, float beta, float *c, int ldc)
{
  blas.sgemm (CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha,
              a, lda, b, ldb, beta, c, ldc);
}

void
sc_sgemm_t (bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float *a,
            int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
  blas.sgemm (CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void
sc_sgemv (int m, int n, float alpha, const float *a, int lda, const float *x, float beta, float *y)
{
  blas.sgemv (CblasRowMajor, CblasNoTrans, m, n, alpha, a, lda, x, 1, beta, y, 1);
}

ScStatus
sc_blas_eigenvalues (int n, double *a, double *wr, double *wi, ScError *err)
{
  /* dgeev needs lwork >= 3n without vectors; 8n lets its blocked Hessenberg reduction use
   * a block size of a few columns (the matrices here are a head's head_dim, 64-256). */
  const int lwork = 8 * n, one = 1;
  double *work, dummy = 0.0;
  int info = 0;

  if (blas.handle == NULL)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "BLAS is not loaded (sc_blas_init first)");
  if (blas.dgeev == NULL)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "%s has no LAPACK (no dgeev_): eigenvalues "
                         "need an OpenBLAS built with LAPACK, as Debian's libopenblas0 is",
                         blas.loaded);
  if (n < 1 || n > (1 << 20))
    return sc_error_set (err, SC_ERR_RANGE, "eigenvalues of a %d x %d matrix", n, n);
  if ((work = malloc ((size_t) lwork * sizeof *work)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "eigenvalues: out of memory for n = %d", n);
  blas.dgeev ("N", "N", &n, a, &n, wr, wi, &dummy, &one, &dummy, &one, work, &lwork, &info, 1,
              1);
  free (work);
  if (info != 0)
    return sc_error_set (err, info < 0 ? SC_ERR_INVALID_ARG : SC_ERR_BACKEND,
                         "LAPACK dgeev failed on a %d x %d matrix (INFO = %d%s)", n, n, info,
                         info > 0 ? ": the QR algorithm did not converge" : "");
  return SC_OK;
}

void
sc_blas_set_threads (int n_threads)
{
  if (blas.set_threads != NULL)
    blas.set_threads (n_threads);
}

const char *
sc_blas_describe (void)
{
  return blas.describe;
}
