/* saccade-bench-draw.c — `saccade bench-draw`: what drawing the figures costs, against a
 * plain cairo_paint() of an image of the same size, in the same process (docs/benchmarks.md,
 * "Figures").
 *
 * The widgets render a figure once into a SaccadeFigureCache and redraw from it; these are
 * the measured operations, each the median of --reps rounds of --iters repetitions:
 *   paint      cairo_paint of a 512 x 512 ARGB image onto a 512 x 512 image: the baseline;
 *   head       a 512-token causal head's heatmap, 512 x 512, redrawn from its cache
 *              (saccade_figure_cache_paint: what a frame costs);
 *   grid       the Model grid, 30 layers x 9 heads = 270 thumbnails, 1024 x 768, redrawn from
 *              its cache; and paint-grid, the baseline at that size;
 *   grid-render  the grid rendered again from its prebuilt thumbnails (what a resize, a metric
 *              or a colour map change costs);
 *   head-render  the head's heatmap rendered from the data (a new head, zoom or pan), and
 *              the same for a 12-token sentence's head at the same size.
 * No model and no display are needed: the heads are synthetic (each row a softmax of a
 * fixed pseudo-random pattern with a diagonal and a sink, like real heads).
 */
#define G_LOG_DOMAIN "saccade-bench"

#include "app/cli/saccade-bench-draw.h"
#include "app/cli/saccade-cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "ui/figures/saccade-figure-cache.h"
#include "ui/figures/saccade-figure.h"

/* A causal head of @n tokens: row i is a softmax over keys 0..i of a sink at 0, a peak at
 * i - @shift and noise from a fixed LCG (seeded by @seed). */
static void
fill_head (float *a, int n, int shift, guint32 seed)
{
  for (int i = 0; i < n; i++)
    {
      double sum = 0;
      for (int j = 0; j <= i; j++)
        {
          double s;
          seed = seed * 1664525u + 1013904223u;
          s = (seed >> 8) / (double) (1u << 24) + (j == 0 ? 3.0 : 0.0)
              + (j == MAX (0, i - shift) ? 4.0 : 0.0);
          a[(gsize) i * n + j] = (float) exp (s);
          sum += a[(gsize) i * n + j];
        }
      for (int j = 0; j < n; j++)
        a[(gsize) i * n + j] = j <= i ? (float) (a[(gsize) i * n + j] / sum) : 0.0f;
    }
}

typedef struct {
  const SaccadeHeatmapFigure *heatmap;
  const SaccadeGridFigure *grid;
  SaccadeGridThumbs *thumbs;
} RenderData;

static void
render_heatmap (cairo_t *cr, double w, double h, gpointer user)
{
  RenderData *d = user;
  saccade_figure_heatmap_draw_full (cr, d->heatmap, NULL, NULL, w, h, NULL);
}

static void
render_grid (cairo_t *cr, double w, double h, gpointer user)
{
  RenderData *d = user;
  saccade_figure_grid_draw_full (cr, d->grid, d->thumbs, NULL, -1, -1, w, h, NULL);
}

typedef enum {
  OP_PAINT,        /* a plain image onto the target */
  OP_CACHE_PAINT,  /* a figure cache onto the target */
  OP_HEAD_RENDER,
  OP_GRID_RENDER,
} Op;

/* Median seconds per operation over @reps rounds of @iters. */
static double
time_op (Op op, cairo_surface_t *target, cairo_surface_t *src, SaccadeFigureCache *cache,
         RenderData *data, int reps, int iters)
{
  g_autofree double *t = g_new (double, reps);
  int w = cairo_image_surface_get_width (target), h = cairo_image_surface_get_height (target);

  for (int r = 0; r < reps; r++)
    {
      cairo_t *cr = cairo_create (target);
      gint64 t0 = g_get_monotonic_time ();
      for (int i = 0; i < iters; i++)
        switch (op)
          {
          case OP_PAINT:
            cairo_set_source_surface (cr, src, 0, 0);
            cairo_paint (cr);
            break;
          case OP_CACHE_PAINT:
            saccade_figure_cache_paint (cache, cr);
            break;
          case OP_HEAD_RENDER:
            render_heatmap (cr, w, h, data);
            break;
          case OP_GRID_RENDER:
            render_grid (cr, w, h, data);
            break;
          }
      cairo_surface_flush (target);
      t[r] = (g_get_monotonic_time () - t0) / 1e6 / iters;
      cairo_destroy (cr);
    }
  return saccade_median (t, reps);
}

static cairo_surface_t *
noise_image (int w, int h)
{
  cairo_surface_t *s = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, w, h);
  guint32 *px = (guint32 *) cairo_image_surface_get_data (s), seed = 7;
  int stride = cairo_image_surface_get_stride (s) / 4;

  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        seed = seed * 1664525u + 1013904223u;
        px[y * stride + x] = 0xff000000u | (seed >> 8); /* opaque, like a rendered figure */
      }
  cairo_surface_mark_dirty (s);
  return s;
}

int
saccade_cmd_bench_draw (int argc, char **argv)
{
  gboolean json = FALSE;
  int reps = 9, iters = 50;
  GOptionEntry entries[] = {
    { "reps", 'r', 0, G_OPTION_ARG_INT, &reps, "Rounds per measurement (median; default 9)",
      "N" },
    { "iters", 'i', 0, G_OPTION_ARG_INT, &iters, "Repetitions per round (default 50)", "N" },
    SACCADE_CLI_JSON_OPTION (&json),
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "- the cost of drawing figures from their caches, against a plain cairo_paint");
  g_autoptr (GError) error = NULL;
  const int n = 512, n_layers = 30, n_heads = 9, n_kv = 3, grid_n = 128;
  const int gw = 1024, gh = 768;
  g_autofree float *head = g_new (float, (gsize) n * n);
  g_autofree float *heads = g_new (float, (gsize) n_layers * n_heads * grid_n * grid_n);
  g_autoptr (GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (SaccadeFigureCache) head_cache = saccade_figure_cache_new ();
  g_autoptr (SaccadeFigureCache) grid_cache = saccade_figure_cache_new ();
  g_autoptr (SaccadeGridThumbs) thumbs = NULL;
  cairo_surface_t *target, *src, *grid_target, *grid_src;
  double paint, head_cached, head_render, grid_paint, grid_cached, grid_render, thumbs_s;
  double small_render;
  g_autofree float *small = g_new (float, 12 * 12);
  SaccadeHeatmapFigure hf, small_f;
  RenderData small_data;
  SaccadeGridFigure gf;
  RenderData data;
  gint64 t0;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if (reps < 1 || iters < 1)
    {
      fprintf (stderr, "saccade: --reps and --iters must be at least 1\n");
      return 2;
    }

  fill_head (head, n, 1, 1);
  for (int i = 0; i < n; i++)
    g_ptr_array_add (labels, g_strdup_printf ("␣tok%d", i));
  g_ptr_array_add (labels, NULL);
  for (int h = 0; h < n_layers * n_heads; h++)
    fill_head (heads + (gsize) h * grid_n * grid_n, grid_n, h % 5, (guint32) h + 2);
  hf = (SaccadeHeatmapFigure) {
    .values = head, .n_rows = n, .n_cols = n,
    .row_labels = (const char *const *) labels->pdata,
    .col_labels = (const char *const *) labels->pdata,
    .title = "Layer 5, head 2", .colormap = SACCADE_COLORMAP_VIRIDIS, .causal = TRUE,
  };
  gf = (SaccadeGridFigure) {
    .n_layers = n_layers, .n_heads = n_heads, .n_kv_heads = n_kv, .n = grid_n, .heads = heads,
    .title = "Model", .colormap = SACCADE_COLORMAP_VIRIDIS,
  };
  fill_head (small, 12, 1, 3);
  small_f = hf;
  small_f.values = small;
  small_f.n_rows = small_f.n_cols = 12;
  t0 = g_get_monotonic_time ();
  thumbs = saccade_grid_thumbs_new (&gf);
  thumbs_s = (g_get_monotonic_time () - t0) / 1e6;
  data = (RenderData) { &hf, &gf, thumbs };
  small_data = (RenderData) { &small_f, &gf, thumbs };

  target = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, n, n);
  src = noise_image (n, n);
  grid_target = cairo_image_surface_create (CAIRO_FORMAT_ARGB32, gw, gh);
  grid_src = noise_image (gw, gh);
  saccade_figure_cache_ensure (head_cache, n, n, 1, render_heatmap, &data);
  saccade_figure_cache_ensure (grid_cache, gw, gh, 1, render_grid, &data);

  /* Interleaved so that frequency changes hit every measurement alike. */
  paint = time_op (OP_PAINT, target, src, NULL, NULL, reps, iters);
  head_cached = time_op (OP_CACHE_PAINT, target, NULL, head_cache, NULL, reps, iters);
  grid_paint = time_op (OP_PAINT, grid_target, grid_src, NULL, NULL, reps, iters);
  grid_cached = time_op (OP_CACHE_PAINT, grid_target, NULL, grid_cache, NULL, reps, iters);
  grid_render = time_op (OP_GRID_RENDER, grid_target, NULL, NULL, &data, reps,
                         MAX (1, iters / 10));
  head_render = time_op (OP_HEAD_RENDER, target, NULL, NULL, &data, reps, MAX (1, iters / 10));
  small_render = time_op (OP_HEAD_RENDER, target, NULL, NULL, &small_data, reps, iters);

  if (json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      struct { const char *name; double s; } rows[] = {
        { "paint_512_s", paint }, { "head_cached_s", head_cached },
        { "paint_1024x768_s", grid_paint }, { "grid_cached_s", grid_cached },
        { "grid_render_s", grid_render }, { "head_render_s", head_render },
        { "grid_thumbnails_s", thumbs_s }, { "head12_render_s", small_render },
      };
      json_builder_begin_object (b);
      for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
        {
          saccade_json_double (b, rows[i].name, rows[i].s);
        }
      saccade_json_double (b, "head_cached_over_paint", head_cached / paint);
      saccade_json_double (b, "grid_cached_over_paint", grid_cached / paint);
      saccade_json_double (b, "grid_render_over_paint", grid_render / paint);
      json_builder_end_object (b);
      saccade_json_print (b);
    }
  else
    {
      printf ("Figures: medians of %d rounds x %d draws (renders: x %d), one thread\n", reps,
              iters, MAX (1, iters / 10));
      printf ("  paint 512x512 image (baseline)      %9.1f us\n", paint * 1e6);
      printf ("  head 512 tokens, from cache         %9.1f us  %5.2fx paint  (goal <= 2x)\n",
              head_cached * 1e6, head_cached / paint);
      printf ("  grid 270 thumbnails, from cache     %9.1f us  %5.2fx paint  (goal <= 5x; "
              "%dx%d, %.2fx a paint of that size)\n",
              grid_cached * 1e6, grid_cached / paint, gw, gh, grid_cached / grid_paint);
      printf ("  grid rendered from thumbnails       %9.1f us  %5.2fx paint  (resize, metric, "
              "colour map)\n", grid_render * 1e6, grid_render / paint);
      printf ("  head rendered from data             %9.1f us  %5.2fx paint  (new head, zoom, "
              "pan)\n", head_render * 1e6, head_render / paint);
      printf ("  12-token head rendered from data    %9.1f us  %5.2fx paint\n",
              small_render * 1e6, small_render / paint);
      printf ("  grid thumbnails made once           %9.1f us  (270 heads of %d tokens)\n",
              thumbs_s * 1e6, grid_n);
    }
  cairo_surface_destroy (target);
  cairo_surface_destroy (src);
  cairo_surface_destroy (grid_target);
  cairo_surface_destroy (grid_src);
  return 0;
}
