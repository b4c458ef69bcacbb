/* bench-lines-stall.c — how long the Lines page's work keeps the main loop from running,
 * on a synthetic layer of N tokens (docs/benchmarks.md, "Lines page: main-loop stall").
 *
 * Not a test (it asserts nothing about time): a measurement, run by hand under Xvfb:
 *   xvfb-run -a build/tests/ui/bench-lines-stall 1000 4000
 *
 * A 1 ms timeout on the main loop records the longest gap between two of its ticks: the
 * longest time the window could not answer an event ("gap"), and the most CPU time the main
 * thread used between two ticks ("busy": how much of a gap was the main thread working;
 * the rest it waited for a core the machine's other work held). Each step below starts from an idle
 * loop, does what the page does on the main thread, and waits until the view shows the new
 * picture; it prints the longest gap and the time until the picture was shown.
 *   open     the links of a layer chosen in a GTask worker (as the page's choose_worker:
 *            saccade_lines_links_select, threshold 0.1, top 3), then on the main thread the
 *            page's push_view work (the links counted for the status line, set_links of
 *            the last 200 tokens) and the view's render in its own worker;
 *   hover    a query token of the range highlighted, as hovering it does (render);
 *   whole    the whole run shown (set_links, render);
 *   head     one head toggled off (set_links, render);
 *   retune   threshold 0.05, top 10 chosen again in the worker, then shown;
 *   before   the old view's work: every line of at least 1/256 of the whole run drawn on
 *            the main thread at the window's size (what its snapshot did), for comparison.
 *   idle     nothing at all for one second: the gaps the machine's other work causes alone
 *            (the floor under every other line on a loaded machine).
 * Each step also prints "main", the time spent in the page's main-thread calls
 * (push_view's work), measured around them, and "cpu", the CPU time the main thread used
 * over the whole step (its calls, the frames, the blits): on a machine whose cores are
 * busy with other work, a gap much longer than "cpu" is the main thread waiting for a
 * core, not working.
 * The layer: 9 heads, causal rows, each a mix of a sink at token 0, the previous token and
 * noise (weights drawn from a fixed xorshift generator), normalised to 1.
 */
#include <gtk/gtk.h>
#include <stdlib.h>
#include <time.h>

#include "ui/figures/saccade-figure-lines.h"
#include "ui/widgets/saccade-lines-view.h"

#define N_HEADS 9
/* The page's defaults: a long run opens on its last 200 tokens. */
#define SPAN 200

typedef struct {
  gint64 last_tick, max_gap;  /* wall clock, µs */
  double last_cpu, max_busy;  /* the main thread's CPU time, s */
} Meter;

static Meter meter;
static gint64 main_us;  /* the last step's time in main-thread calls */

static double
thread_cpu (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Between two ticks: the wall time (the stall a user feels) and the main thread's CPU time
 * (the part of it the main thread spent working; the rest it waited for a core). */
static gboolean
tick (gpointer data)
{
  gint64 now = g_get_monotonic_time ();
  double cpu = thread_cpu ();

  if (now - meter.last_tick > meter.max_gap)
    meter.max_gap = now - meter.last_tick;
  if (cpu - meter.last_cpu > meter.max_busy)
    meter.max_busy = cpu - meter.last_cpu;
  meter.last_tick = now;
  meter.last_cpu = cpu;
  return G_SOURCE_CONTINUE;
}

static void
meter_reset (void)
{
  meter.last_tick = g_get_monotonic_time ();
  meter.last_cpu = thread_cpu ();
  meter.max_gap = 0;
  meter.max_busy = 0;
}

static guint64 rng = 0x9e3779b97f4a7c15ull;

static double
uniform (void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (double) (rng >> 11) / (double) (1ull << 53);
}

/* (N_HEADS, n, n): head h puts sink[h] on token 0, prev[h] on the previous token, the rest
 * as noise with a heavy tail (u^8), so a few keys per row stand out as in real heads. */
static float *
synthetic_layer (int n)
{
  static const double sink[N_HEADS] = { 0.8, 0.5, 0.2, 0.6, 0.1, 0.4, 0.7, 0.3, 0.05 };
  static const double prev[N_HEADS] = { 0.05, 0.3, 0.6, 0.1, 0.2, 0.0, 0.1, 0.4, 0.05 };
  float *heads = g_new0 (float, (gsize) N_HEADS * n * n);
  double *row = g_new (double, n);

  for (int h = 0; h < N_HEADS; h++)
    for (int i = 0; i < n; i++)
      {
        float *out = heads + ((gsize) h * n + i) * n;
        double noise = 0;
        for (int j = 0; j <= i; j++)
          {
            double u = uniform ();
            row[j] = u * u * u * u * u * u * u * u;
            noise += row[j];
          }
        for (int j = 0; j <= i; j++)
          {
            double w = (1 - sink[h] - prev[h]) * row[j] / noise;
            w += j == 0 ? sink[h] : 0;
            w += j == MAX (i - 1, 0) ? prev[h] : 0;
            out[j] = (float) w;
          }
      }
  g_free (row);
  return heads;
}

typedef struct {
  const float *heads;
  int n;
  double threshold;
  int top_k;
} Choice;

static void
choose_worker (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  Choice *c = data;

  g_task_return_pointer (task, saccade_lines_links_select (c->heads, N_HEADS, 0, c->n, 0, c->n,
                                                           c->threshold, c->top_k, cancellable),
                         (GDestroyNotify) saccade_lines_links_unref);
}

static void
choose_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  *(SaccadeLinesLinks **) user_data = g_task_propagate_pointer (G_TASK (result), NULL);
}

/* Runs the loop until @view has drawn its current state. */
static void
wait_shown (GtkWidget *view)
{
  /* A frame must pass for a render to start; then it runs until the view is idle. */
  for (int i = 0; i < 5; i++)
    g_main_context_iteration (NULL, TRUE);
  while (saccade_lines_view_get_busy (SACCADE_LINES_VIEW (view)))
    g_main_context_iteration (NULL, TRUE);
}

/* The page's push_view: the status line's count, then the view's data. */
static void
push (GtkWidget *view, SaccadeLinesLinks *links, int n, int q0, char **labels,
      const int *ids, int n_ids)
{
  gint64 t0 = g_get_monotonic_time ();
  guint count = saccade_figure_lines_count (&(SaccadeLinesFigure) {
    .n_heads = n_ids, .n = n - q0, .links = links, .head_ids = ids,
    .n_heads_total = N_HEADS, .position0 = q0,
  });
  (void) count;
  saccade_lines_view_set_links (SACCADE_LINES_VIEW (view), links, q0, n - q0,
                                (const char *const *) labels + q0, q0 > 0, ids, n_ids);
  main_us = g_get_monotonic_time () - t0;
}

static SaccadeLinesLinks *
choose (const float *heads, int n, double threshold, int top_k)
{
  SaccadeLinesLinks *links = NULL;
  Choice c = { heads, n, threshold, top_k };
  g_autoptr (GTask) task = g_task_new (NULL, NULL, choose_done, &links);

  g_task_set_task_data (task, &c, NULL);
  g_task_run_in_thread (task, choose_worker);
  while (links == NULL)
    g_main_context_iteration (NULL, TRUE);
  return links;
}

static double cpu0;    /* the main thread's CPU time at the step's start, seconds */

static void
step_start (gint64 *t0)
{
  meter_reset ();
  main_us = 0;
  cpu0 = thread_cpu ();
  *t0 = g_get_monotonic_time ();
}

static void
report (int n, const char *step, gint64 t0, guint n_links)
{
  g_print ("%5d  %-7s  gap %7.1f ms  busy %7.1f ms  main %5.1f ms  cpu %6.1f ms  "
           "shown after %7.1f ms  %6u links\n", n, step, meter.max_gap / 1e3,
           meter.max_busy * 1e3, main_us / 1e3, (thread_cpu () - cpu0) * 1e3,
           (g_get_monotonic_time () - t0) / 1e3, n_links);
}

static void
bench (int n, gboolean before)
{
  GtkWidget *window = gtk_window_new ();
  GtkWidget *view = saccade_lines_view_new ();
  g_autofree float *heads = NULL;
  g_auto (GStrv) labels = g_new0 (char *, (gsize) n + 1);
  int all[N_HEADS], q0 = MAX (0, n - SPAN);
  SaccadeLinesLinks *links;
  gint64 t0;

  for (int h = 0; h < N_HEADS; h++)
    all[h] = h;
  for (int i = 0; i < n; i++)
    labels[i] = g_strdup_printf ("tok%d", i % 97);
  heads = synthetic_layer (n);
  gtk_window_set_default_size (GTK_WINDOW (window), 1200, 800);
  gtk_window_set_child (GTK_WINDOW (window), view);
  gtk_window_present (GTK_WINDOW (window));
  wait_shown (view);

  step_start (&t0);
  while (g_get_monotonic_time () - t0 < G_USEC_PER_SEC)
    g_main_context_iteration (NULL, TRUE);
  report (n, "idle", t0, 0);

  step_start (&t0);
  links = choose (heads, n, SACCADE_LINES_DEFAULT_THRESHOLD, SACCADE_LINES_DEFAULT_TOP_K);
  push (view, links, n, q0, labels, all, N_HEADS);
  wait_shown (view);
  report (n, "open", t0, links->n_links);

  step_start (&t0);
  saccade_lines_view_set_highlight (SACCADE_LINES_VIEW (view), n - SPAN / 2, FALSE);
  wait_shown (view);
  report (n, "hover", t0, links->n_links);
  saccade_lines_view_set_highlight (SACCADE_LINES_VIEW (view), -1, FALSE);
  wait_shown (view);

  step_start (&t0);
  push (view, links, n, 0, labels, all, N_HEADS);
  wait_shown (view);
  report (n, "whole", t0, links->n_links);

  step_start (&t0);
  push (view, links, n, 0, labels, all + 1, N_HEADS - 1);
  wait_shown (view);
  report (n, "head", t0, links->n_links);
  saccade_lines_links_unref (links);

  step_start (&t0);
  links = choose (heads, n, 0.05, 10);
  push (view, links, n, 0, labels, all, N_HEADS);
  wait_shown (view);
  report (n, "retune", t0, links->n_links);
  saccade_lines_links_unref (links);

  if (before)
    {
      /* The old view: every visible line of the whole layer, on the main thread. */
      cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, 1200, 800);
      cairo_t *cr = cairo_create (s);
      step_start (&t0);
      saccade_figure_lines_draw_full (cr, &(SaccadeLinesFigure) {
        .n_heads = N_HEADS, .n = n, .heads = heads, .labels = (const char *const *) labels,
        .highlight_token = -1,
      }, NULL, FALSE, 1200, 800, NULL);
      main_us = g_get_monotonic_time () - t0;
      g_main_context_iteration (NULL, FALSE);
      g_main_context_iteration (NULL, FALSE);
      report (n, "before", t0, 0);
      cairo_destroy (cr);
      cairo_surface_destroy (s);
    }
  gtk_window_destroy (GTK_WINDOW (window));
}

int
main (int argc, char **argv)
{
  gboolean before = g_getenv ("BENCH_LINES_BEFORE") != NULL;

  if (!gtk_init_check ())
    {
      g_printerr ("no display: run under xvfb-run\n");
      return 77;
    }
  g_timeout_add (1, tick, NULL);
  g_print ("    n  step     gap: longest main-loop stall; busy: of it, main-thread work; "
           "main: page calls; cpu: main thread's CPU over the step\n");
  for (int i = 1; i < argc; i++)
    bench (atoi (argv[i]), before);
  return 0;
}
