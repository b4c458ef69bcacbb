/* sc-pool.h — a small persistent thread pool for the engine's data-parallel loops.
 *
 * Why not OpenMP: libgomp's workers spin after every parallel region, and on a 2-core
 * machine that also runs a desktop (or other work) a spinning worker steals the core its
 * peer needs, turning each barrier into a scheduler round-trip: we measured 27 tok/s with
 * two OpenMP threads against 127 tok/s with one on a loaded machine. These workers sleep
 * on a condition variable between jobs, so an idle pool costs nothing, and the engine does
 * not link libgomp at all (sc-blas.c loads OpenBLAS's own, configured not to spin long).
 *
 * Semantics: sc_pool_run() runs fn(ctx, i) for i in [0, n_tasks), handing tasks out in
 * order to the calling thread and the workers, and returns when all are done. Calls are
 * serialised; fn must not call sc_pool_run() on the same pool.
 */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ScPool ScPool;

typedef void (*ScPoolFn) (void *ctx, int task);

/* A pool of @n_threads threads in all, the caller counted (n_threads - 1 workers).
 * @n_threads <= 0: one per online CPU. Returns NULL when threads cannot be created. */
ScPool *sc_pool_new (int n_threads);
void sc_pool_free (ScPool *pool); /* NULL is a no-op; joins the workers */

int sc_pool_n_threads (const ScPool *pool);

/* Runs the tasks; with one thread (or one task) simply loops in the caller. */
void sc_pool_run (ScPool *pool, int n_tasks, ScPoolFn fn, void *ctx);

/* The number of online CPUs (>= 1). */
int sc_cpu_count (void);

#ifdef __cplusplus
}
#endif
