/* store-helper.c — a process that captures fake runs into a store, for the crash and
 * concurrency tests (test-store-crash.c, test-store-concurrency.c), which kill it or read
 * beside it.
 *
 * Usage: store-helper DB FIRST_SEED N_RUNS N_MIN N_MAX DELAY_US
 *   captures N_RUNS runs (0: until killed) with seeds FIRST_SEED, FIRST_SEED + 1, ...; run
 *   sizes n in [N_MIN, N_MAX] drawn from the seed; every fifth seed is a full (non-causal)
 *   run; DELAY_US is slept before each head (a slower "forward pass"). Every fourth run
 *   reopens the store, so kills also land in opening and closing. Prints, flushed:
 *     begin SEED            before a run starts
 *     committed ID SEED     after its commit returned
 *   and exits 1 with "error MESSAGE" on any failure.
 */
#include <glib.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "tests/store/store-fake.h"

int
main (int argc, char **argv)
{
  ScStoreOptions opt = { .writable = TRUE };
  ScStore *store = NULL;
  ScError err = { 0 };
  guint64 seed, first, n_runs, r;
  int n_min, n_max, delay_us;

  /* Die with the test that started us, even when it dies of a failed assertion. */
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  if (getppid () == 1)
    return 1;
  if (argc != 7)
    {
      fprintf (stderr, "usage: store-helper DB FIRST_SEED N_RUNS N_MIN N_MAX DELAY_US\n");
      return 2;
    }
  first = g_ascii_strtoull (argv[2], NULL, 10);
  n_runs = g_ascii_strtoull (argv[3], NULL, 10);
  n_min = atoi (argv[4]);
  n_max = atoi (argv[5]);
  delay_us = atoi (argv[6]);
  if (n_min < 1 || n_max < n_min)
    {
      fprintf (stderr, "store-helper: bad sizes\n");
      return 2;
    }
  for (r = 0; n_runs == 0 || r < n_runs; r++)
    {
      gint64 id;
      int n;

      seed = first + r;
      n = n_min + (int) ((seed * 2654435761u) % (guint64) (n_max - n_min + 1));
      if (store == NULL && sc_store_open (argv[1], &opt, &store, &err) != SC_OK)
        {
          printf ("error %s\n", err.message);
          return 1;
        }
      printf ("begin %" G_GUINT64_FORMAT "\n", seed);
      fflush (stdout);
      id = store_fake_capture (store, seed, n, seed % 5 != 0, (int) (seed % 2), delay_us, &err);
      if (id < 0)
        {
          printf ("error %s\n", err.message);
          return 1;
        }
      printf ("committed %" G_GINT64_FORMAT " %" G_GUINT64_FORMAT "\n", id, seed);
      fflush (stdout);
      if (r % 4 == 3)
        {
          sc_store_close (store);
          store = NULL;
        }
    }
  sc_store_close (store);
  return 0;
}
