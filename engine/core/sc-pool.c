/* sc-pool.c — persistent worker threads that sleep between jobs (see sc-pool.h).
 *
 * A job is (fn, ctx, n_tasks) plus an atomic "next task" counter. The caller publishes
 * it under the mutex, bumps the generation and broadcasts; workers and the caller then
 * claim tasks with an atomic fetch-add until none are left, and the last one to finish
 * signals the caller. Invariant: `job` is only written while no worker is inside it
 * (pending == 0), so workers never see a half-published job.
 */
#include "core/sc-pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

struct ScPool {
  int n_threads;
  pthread_t *workers;
  int n_workers;

  pthread_mutex_t lock;
  pthread_cond_t wake; /* workers wait here for a new generation */
  pthread_cond_t done; /* the caller waits here for pending == 0 */
  unsigned long generation;
  bool quit;

  /* the current job */
  ScPoolFn fn;
  void *ctx;
  int n_tasks;
  atomic_int next;
  int pending; /* workers still inside the job (under lock) */
};

int
sc_cpu_count (void)
{
  long n = sysconf (_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int) n : 1;
}

static void
drain (ScPool *p)
{
  int t;

  while ((t = atomic_fetch_add_explicit (&p->next, 1, memory_order_relaxed)) < p->n_tasks)
    p->fn (p->ctx, t);
}

static void *
worker_main (void *data)
{
  ScPool *p = data;
  unsigned long seen = 0;

  pthread_mutex_lock (&p->lock);
  for (;;)
    {
      while (!p->quit && p->generation == seen)
        pthread_cond_wait (&p->wake, &p->lock);
      if (p->quit)
        break;
      seen = p->generation;
      pthread_mutex_unlock (&p->lock);
      drain (p);
      pthread_mutex_lock (&p->lock);
      if (--p->pending == 0)
        pthread_cond_signal (&p->done);
    }
  pthread_mutex_unlock (&p->lock);
  return NULL;
}

ScPool *
sc_pool_new (int n_threads)
{
  ScPool *p = calloc (1, sizeof *p);
  int i;

  if (p == NULL)
    return NULL;
  if (n_threads <= 0)
    n_threads = sc_cpu_count ();
  p->n_threads = n_threads;
  pthread_mutex_init (&p->lock, NULL);
  pthread_cond_init (&p->wake, NULL);
  pthread_cond_init (&p->done, NULL);
  atomic_init (&p->next, 0);
  if (n_threads > 1)
    {
      p->workers = calloc ((size_t) n_threads - 1, sizeof *p->workers);
      if (p->workers == NULL)
        {
          sc_pool_free (p);
          return NULL;
        }
      for (i = 0; i < n_threads - 1; i++)
        {
          if (pthread_create (&p->workers[i], NULL, worker_main, p) != 0)
            {
              sc_pool_free (p);
              return NULL;
            }
          p->n_workers++;
        }
    }
  return p;
}

void
sc_pool_free (ScPool *p)
{
  int i;

  if (p == NULL)
    return;
  pthread_mutex_lock (&p->lock);
  p->quit = true;
  pthread_cond_broadcast (&p->wake);
  pthread_mutex_unlock (&p->lock);
  for (i = 0; i < p->n_workers; i++)
    pthread_join (p->workers[i], NULL);
  free (p->workers);
  pthread_cond_destroy (&p->wake);
  pthread_cond_destroy (&p->done);
  pthread_mutex_destroy (&p->lock);
  free (p);
}

int
sc_pool_n_threads (const ScPool *p)
{
  return p->n_threads;
}

void
sc_pool_run (ScPool *p, int n_tasks, ScPoolFn fn, void *ctx)
{
  int t;

  if (n_tasks <= 0)
    return;
  if (p == NULL || p->n_workers == 0 || n_tasks == 1)
    {
      for (t = 0; t < n_tasks; t++)
        fn (ctx, t);
      return;
    }
  pthread_mutex_lock (&p->lock);
  p->fn = fn;
  p->ctx = ctx;
  p->n_tasks = n_tasks;
  atomic_store_explicit (&p->next, 0, memory_order_relaxed);
  p->pending = p->n_workers;
  p->generation++;
  pthread_cond_broadcast (&p->wake);
  pthread_mutex_unlock (&p->lock);

  drain (p);

  pthread_mutex_lock (&p->lock);
  while (p->pending > 0)
    pthread_cond_wait (&p->done, &p->lock);
  pthread_mutex_unlock (&p->lock);
}
