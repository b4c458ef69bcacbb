/* store-bench-band.c — what storing sliding-window heads as bands saves (docs/store.md,
 * "Band heads"): the bytes and the write time of one n-token run of a model shaped like
 * Gemma 3 270M (18 layers x 4 heads, 1 KV head), stored three ways:
 *   causal   no layer local: 72 causal heads (the layout without windows);
 *   band     every layer local with window W: 72 band heads;
 *   gemma    Gemma 3's pattern, 5 local : 1 global (swa_pattern 6): 60 bands, 12 causal.
 * Each head is a fixed synthetic probability matrix (softmax rows over the keys the layer
 * lets a query see: exact zeros outside, as the attention op writes them), pushed through
 * the capture API as the forward pass's observer would push it. Reported per way: the BLOB
 * bytes (runs.attention_bytes), the database file's growth over an empty store (after
 * close: the WAL folded in), and the seconds from sc_store_capture_begin to the durable
 * commit, median of REPS rounds, each into a new store in DIR. Not a test: wall times are
 * printed, never asserted.
 *
 * Usage: store-bench-band DIR [N [W [REPS]]]   (N 2048, W 512, REPS 3)
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "engine/model/sc-model.h"
#include "engine/store/sc-store.h"

#define LAYERS 18
#define HEADS 4

static gint64
file_size (const char *path)
{
  struct stat sb;
  return stat (path, &sb) == 0 ? (gint64) sb.st_size : 0;
}

static void
remove_store (const char *path)
{
  static const char *suffix[] = { "", "-wal", "-shm" };
  for (gsize i = 0; i < G_N_ELEMENTS (suffix); i++)
    {
      g_autofree char *f = g_strconcat (path, suffix[i], NULL);
      g_unlink (f);
    }
}

/* A head whose queries see keys i - w + 1 .. i (w 0: 0 .. i). */
static float *
make_head (int n, int w)
{
  float *p = g_new0 (float, (gsize) n * n);
  GRand *r = g_rand_new_with_seed (2048);

  for (int i = 0; i < n; i++)
    {
      const int s = w > 0 && i + 1 > w ? i + 1 - w : 0;
      float *row = p + (gsize) i * n;
      double z = 0;
      for (int j = s; j <= i; j++)
        z += row[j] = (float) exp (-12.0 * g_rand_double (r));
      for (int j = s; j <= i; j++)
        row[j] = (float) (row[j] / z);
    }
  g_rand_free (r);
  return p;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

/* One round: a new store, one run; FALSE on an error (printed). */
static gboolean
one_run (const char *path, int n, guint window, guint pattern, const float *local,
         const float *global, double *secs, guint64 *blob_bytes, gint64 *growth)
{
  ScStoreOptions opt = { .writable = true };
  ScStoreModel m = { 0 };
  ScStoreRunDesc desc = { 0 };
  ScStoreRunInfo info = { 0 };
  ScModelInfo mi = { 0 };
  ScStoreCapture *cap = NULL;
  ScStore *s = NULL;
  ScError err = { 0 };
  g_autofree ScStoreToken *tokens = g_new0 (ScStoreToken, n);
  gint64 run = 0, empty;
  gint64 t0;

  remove_store (path);
  if (sc_store_open (path, &opt, &s, &err) != SC_OK)
    goto fail;
  sc_store_close (s);
  s = NULL;
  empty = file_size (path);
  if (sc_store_open (path, &opt, &s, &err) != SC_OK)
    goto fail;
  sc_sha256 ("store-bench-band", 16, m.sha256);
  m.path = "/nonexistent/gemma-like.gguf";
  m.name = "gemma-like";
  m.arch = "gemma3";
  m.n_layers = LAYERS;
  m.n_heads = HEADS;
  m.n_kv_heads = 1;
  m.head_dim = 256;
  m.n_embd = 640;
  m.n_vocab = 262144;
  m.sliding_window = window;
  m.swa_pattern = pattern;
  mi.n_layers = LAYERS;
  mi.sliding_window = window;
  mi.swa_pattern = pattern;
  for (int i = 0; i < n; i++)
    tokens[i] = (ScStoreToken) { i % 1000, 0, NULL };
  desc = (ScStoreRunDesc) { &m, "bench", 5, tokens, (size_t) n, "synthetic", NULL, 0 };
  t0 = g_get_monotonic_time ();
  if (sc_store_capture_begin (s, &desc, &cap, &err) != SC_OK)
    goto fail;
  for (int l = 0; l < LAYERS; l++)
    for (int h = 0; h < HEADS; h++)
      if (sc_store_capture_add_head (cap, l, h, sc_model_layer_window (&mi, l) > 0 ? local
                                                                                   : global,
                                     n, n, &err) != SC_OK)
        {
          sc_store_capture_abort (cap);
          goto fail;
        }
  if (sc_store_capture_commit (cap, -1, &run, &err) != SC_OK)
    goto fail;
  *secs = (g_get_monotonic_time () - t0) / 1e6;
  if (sc_store_get_run (s, run, &info, &err) != SC_OK)
    goto fail;
  *blob_bytes = info.attention_bytes;
  sc_store_run_info_clear (&info);
  sc_store_close (s);
  *growth = file_size (path) - empty;
  return TRUE;

fail:
  g_printerr ("store-bench-band: %s\n", err.message);
  sc_store_close (s);
  return FALSE;
}

int
main (int argc, char **argv)
{
  const char *dir = argc > 1 ? argv[1] : NULL;
  int n = argc > 2 ? atoi (argv[2]) : 2048;
  guint w = argc > 3 ? (guint) atoi (argv[3]) : 512;
  int reps = argc > 4 ? atoi (argv[4]) : 3;
  static const struct {
    const char *name;
    gboolean windowed;
    guint pattern;
  } ways[] = {
    { "causal", FALSE, 0 },
    { "band", TRUE, LAYERS + 1 },  /* (layer + 1) % 19 is never 0: every layer local */
    { "gemma", TRUE, 6 },          /* Gemma 3: every sixth layer global */
  };
  g_autofree char *path = NULL;
  g_autofree float *local = NULL, *global = NULL;

  if (dir == NULL || n < 2 || w < 1 || reps < 1)
    {
      g_printerr ("usage: store-bench-band DIR [N [W [REPS]]]\n");
      return 2;
    }
  path = g_build_filename (dir, "store-bench-band.sqlite", NULL);
  local = make_head (n, (int) w);
  global = make_head (n, 0);
  g_print ("n = %d, window %u, %d layers x %d heads, median of %d\n", n, w, LAYERS, HEADS, reps);
  g_print ("%-7s %14s %14s %10s\n", "way", "BLOB bytes", "file growth", "seconds");
  for (gsize k = 0; k < G_N_ELEMENTS (ways); k++)
    {
      g_autofree double *t = g_new (double, reps);
      guint64 bytes = 0;
      gint64 growth = 0;
      for (int r = 0; r < reps; r++)
        if (!one_run (path, n, ways[k].windowed ? w : 0, ways[k].pattern, local, global, &t[r],
                      &bytes, &growth))
          return 1;
      qsort (t, (size_t) reps, sizeof *t, cmp_double);
      g_print ("%-7s %14" G_GUINT64_FORMAT " %14" G_GINT64_FORMAT " %10.3f\n", ways[k].name,
               bytes, growth, t[reps / 2]);
    }
  remove_store (path);
  return 0;
}
