/* bench-heatmap-lod.c — what the heatmap costs at 8,192 tokens (docs/benchmarks.md,
 * "Heatmap at 8,192 tokens"). Not a test (nothing here asserts on time): run by hand,
 *
 *   build/tests/bench-heatmap-lod [--old]
 *
 * on the synthetic head of the tests (tests/ui/synthetic-head.h) as the store's fp16
 * triangle. Prints medians (and the slowest) of repeated runs of: building the pyramid,
 * measuring 8,192 labels once, rendering a 1000 x 800 view the way SaccadeHeatmapView does
 * (saccade_figure_heatmap_lod_draw_full into a transparent ARGB image, minimap on, the
 * widget's font size) at several zooms and at device scale 2, and exporting PNGs.
 * --old also renders the same head with the small-matrix renderer the view used before
 * (a float copy of 268 MB and every label laid out), once.
 */
#include <math.h>
#include <stdio.h>
#include <time.h>
#include <glib/gstdio.h>
#include <string.h>

#include "tests/ui/synthetic-head.h"
#include "ui/figures/saccade-figure-private.h"

#define N 8192
#define VIEW_W 1000
#define VIEW_H 800

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* Medians of the thread's CPU time (what the work costs, whatever else the machine runs)
 * and of the wall-clock time (what a user waits on this machine now). */
static void
report (const char *what, double *cpu, double *wall, int n)
{
  qsort (cpu, n, sizeof *cpu, cmp_double);
  qsort (wall, n, sizeof *wall, cmp_double);
  printf ("%-62s cpu %8.2f ms (max %8.2f)   wall %8.2f ms   (%d runs)\n", what, cpu[n / 2],
          cpu[n - 1], wall[n / 2], n);
}

static double
now_ms (void)
{
  return g_get_monotonic_time () / 1000.0;
}

static double
cpu_ms (void)
{
  struct timespec t;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Times @stmt @n times into cpu[] and wall[]. */
#define TIME_RUNS(n, cpu, wall, stmt)                                                     \
  for (int run_ = 0; run_ < (n); run_++)                                                  \
    {                                                                                     \
      double c0_ = cpu_ms (), w0_ = now_ms ();                                            \
      stmt;                                                                               \
      (cpu)[run_] = cpu_ms () - c0_;                                                      \
      (wall)[run_] = now_ms () - w0_;                                                     \
    }

/* The widget's style: its theme's text colour on a transparent background, 90 % of an
 * 11-point font in CSS pixels (what saccade_view_style_init gives on a default desktop). */
static void
widget_style (SaccadeFigureStyle *style)
{
  saccade_figure_style_init (style);
  style->fg[0] = style->fg[1] = style->fg[2] = 0.2;
  style->bg[3] = 0.0;
  style->font_size = 0.9 * 11 * 96.0 / 72.0;
}

static void
bench_view (const char *what, const SaccadeHeatmapLodFigure *f, double zoom, double row0,
            int scale)
{
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, VIEW_W * scale,
                                                   VIEW_H * scale);
  SaccadeCellRange range = { row0, row0, N / zoom, N / zoom };
  SaccadeFigureStyle style;
  SaccadeHeatmapGeometry g;
  double cpu[21], wall[21];
  char name[128];

  cairo_surface_set_device_scale (s, scale, scale);
  widget_style (&style);
  for (int i = 0; i < (int) G_N_ELEMENTS (cpu); i++)
    {
      cairo_t *cr = cairo_create (s);
      double c0, w0;
      /* the cache starts transparent each render (saccade_figure_cache_ensure) */
      cairo_set_operator (cr, CAIRO_OPERATOR_CLEAR);
      cairo_paint (cr);
      cairo_set_operator (cr, CAIRO_OPERATOR_OVER);
      c0 = cpu_ms ();
      w0 = now_ms ();
      saccade_figure_heatmap_lod_draw_full (cr, f, &range, TRUE, &style, VIEW_W, VIEW_H, &g);
      cairo_surface_flush (s);
      cpu[i] = cpu_ms () - c0;
      wall[i] = now_ms () - w0;
      cairo_destroy (cr);
    }
  g_snprintf (name, sizeof name, "%s (level %d, %d token%s a cell)", what, g.level, g.block,
              g.block > 1 ? "s" : "");
  report (name, cpu, wall, G_N_ELEMENTS (cpu));
  cairo_surface_destroy (s);
}

static void
bench_export (const char *what, const SaccadeHeatmapLodFigure *f, const SaccadeTokenRange *r)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-bench-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "head.png", NULL);
  double cpu[5], wall[5];
  GError *error = NULL;

  TIME_RUNS (5, cpu, wall, if (!saccade_figure_export_heatmap_lod (f, r, path, NULL, &error))
                             g_error ("%s", error->message));
  report (what, cpu, wall, 5);
  g_remove (path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  gboolean old = argc > 1 && strcmp (argv[1], "--old") == 0;
  g_autoptr (GBytes) tri = synth_head_fp16 (N, 1);
  g_auto (GStrv) labels = g_new0 (char *, N + 1);
  static const char *const words[] = { "The", "␣cat", "␣sat", "␣on", "␣the", "␣mat", "." };
  SaccadeLod *lod = NULL;
  SaccadeHeatmapLodFigure f;
  double cpu[5], wall[5];

  for (int i = 0; i < N; i++)
    labels[i] = g_strdup (words[i % G_N_ELEMENTS (words)]);

  TIME_RUNS (5, cpu, wall, g_clear_pointer (&lod, saccade_lod_unref);
             lod = saccade_lod_new_fp16_triangle (tri, N, NULL));
  report ("pyramid from the fp16 triangle (8,192 tokens)", cpu, wall, 5);
  printf ("pyramid: %d levels, %.1f MB (level 0: %.1f MB)\n", saccade_lod_get_n_levels (lod),
          saccade_lod_get_size (lod) / 1e6, g_bytes_get_size (tri) / 1e6);

  f = (SaccadeHeatmapLodFigure) { .lod = lod, .row_labels = (const char *const *) labels,
                                  .col_labels = (const char *const *) labels,
                                  .title = "Layer 3, head 5" };
  TIME_RUNS (5, cpu, wall, f.label_em = saccade_figure_labels_em (f.row_labels, N));
  report ("widest of 8,192 labels (once per head shown)", cpu, wall, 5);

  bench_view ("1000 x 800 view, whole head", &f, 1, 0, 1);
  bench_view ("1000 x 800 view, zoom 8 (1,024 tokens)", &f, 8, 3000, 1);
  bench_view ("1000 x 800 view, zoom 128 (64 tokens)", &f, 128, 4000, 1);
  bench_view ("1000 x 800 view, zoom 341 (24 tokens, labels)", &f, N / 24.0, 4000, 1);
  bench_view ("1000 x 800 view at scale 2, whole head", &f, 1, 0, 2);
  bench_view ("1000 x 800 view at scale 2, zoom 341 (labels)", &f, N / 24.0, 4000, 2);
  bench_export ("PNG export, whole head (1,040-pixel matrix)", &f, NULL);
  bench_export ("PNG export, 24 x 24 range", &f, &(SaccadeTokenRange) { 4000, 4024, 4000, 4024 });

  if (old)
    {
      /* The renderer the view used before, on the same head as floats. */
      float *full = g_new0 (float, (gsize) N * N);
      cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, VIEW_W, VIEW_H);
      cairo_t *cr = cairo_create (s);
      SaccadeFigureStyle style;
      double t0;
      for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++)
          saccade_lod_level_value (lod, 0, i, j, &full[(gsize) i * N + j]);
      widget_style (&style);
      t0 = cpu_ms ();
      saccade_figure_heatmap_draw_full (cr, &(SaccadeHeatmapFigure) {
        .values = full, .n_rows = N, .n_cols = N, .row_labels = (const char *const *) labels,
        .col_labels = (const char *const *) labels, .causal = TRUE, .title = "Layer 3, head 5",
      }, NULL, &style, VIEW_W, VIEW_H, NULL);
      cairo_surface_flush (s);
      printf ("%-62s cpu %8.2f ms (once)\n", "before: the small-matrix renderer, whole head",
              cpu_ms () - t0);
      cairo_destroy (cr);
      cairo_surface_destroy (s);
      g_free (full);
    }
  saccade_lod_unref (lod);
  return 0;
}
