/* app-fixture-band.c — writes a capture database with runs of a made-up sliding-window
 * model, for the band tests of the command line, the Python reader and the window
 * (test-app-band.sh): the fixture model (4 layers x 6 heads over 2 KV heads) with a window
 * of W tokens on layers 0 and 2 (swa_pattern 2: every second layer global, as
 * sc_model_layer_window says), its local heads exact zeros left of the window as the
 * attention op writes them, stored as bands (docs/store.md, "Band heads").
 *
 * Run 1: N tokens (N > W: the local layers' heads are bands). Run 2: 6 tokens (shorter
 * than the window: every head causal, the layers still marked local). The heads: a sink on
 * the first key the row can see, a previous-token head, and diffuse rows, so that the
 * window's edge shows as the sink's diagonal stripe in a local layer and a column at key
 * 0 in a global one.
 *
 * Run 3, with LONG: LONG tokens, window LONG_W — long enough (2,400 tokens: 24 heads of
 * 2,400^2 floats pass the window's 512 MiB) for the window to read its heads from the store
 * one at a time, through the fp16 reader and the overviews.
 *
 * Usage: app-fixture-band DB [N [W [LONG LONG_W]]]   (N 96, W 16 by default; prints the run
 * ids)
 */
#include <glib.h>
#include <math.h>
#include <stdlib.h>

#include "app-fixture-model.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store.h"

#define PATTERN 2u

/* Head @h of a layer whose window is @w (0: global), row-major (n, n). */
static float *
make_head (int layer, int h, int n, guint w)
{
  float *p = g_new0 (float, (gsize) n * n);

  for (int i = 0; i < n; i++)
    {
      const int s = w > 0 && i + 1 > (int) w ? i + 1 - (int) w : 0;
      float *row = p + (gsize) i * n;
      double z = 0;
      for (int j = s; j <= i; j++)
        {
          double v = 0.05 + 0.2 * app_fixture_noise ((guint) layer, (guint) (h * 1000 + i),
                                                      (guint) j);
          if (h % 3 == 0 && j == s)
            v += 6.0; /* a sink on the first key the row sees */
          if (h % 3 == 1 && j + 1 == i)
            v += 6.0; /* the previous token */
          row[j] = (float) v;
          z += v;
        }
      for (int j = s; j <= i; j++)
        row[j] = (float) (row[j] / z);
    }
  return p;
}

static gint64
store_run (ScStore *store, int n, guint window, GError **error)
{
  ScStoreModel model;
  ScStoreToken *tokens = g_new0 (ScStoreToken, n);
  g_autofree char *text = NULL;
  GString *t = g_string_new (NULL);
  char **pieces = g_new0 (char *, n + 1);
  ScStoreRunDesc desc = { 0 };
  ScStoreCapture *cap = NULL;
  ScModelInfo info = { 0 };
  ScError err = { 0 };
  gint64 id = -1;

  app_fixture_model (&model, 8192);
  model.sliding_window = window;
  model.swa_pattern = PATTERN;
  info.n_layers = model.n_layers;
  info.sliding_window = window;
  info.swa_pattern = PATTERN;
  for (int i = 0; i < n; i++)
    {
      pieces[i] = g_strdup_printf (" w%d", i);
      g_string_append (t, pieces[i]);
      tokens[i] = (ScStoreToken) { i % 100, (guint32) strlen (pieces[i]),
                                   (const guint8 *) pieces[i] };
    }
  text = g_string_free (t, FALSE);
  desc = (ScStoreRunDesc) { &model, text, strlen (text), tokens, (size_t) n, "fixture", NULL, 0 };
  if (sc_store_capture_begin (store, &desc, &cap, &err) != SC_OK)
    goto fail;
  for (int l = 0; l < APP_FIXTURE_LAYERS; l++)
    for (int h = 0; h < APP_FIXTURE_HEADS; h++)
      {
        g_autofree float *p = make_head (l, h, n, sc_model_layer_window (&info, l));
        if (sc_store_capture_add_head (cap, l, h, p, n, n, &err) != SC_OK)
          {
            sc_store_capture_abort (cap);
            goto fail;
          }
      }
  if (sc_store_capture_commit (cap, -1, &id, &err) != SC_OK)
    goto fail;
  g_strfreev (pieces);
  g_free (tokens);
  return id;

fail:
  g_set_error_literal (error, g_quark_from_static_string ("app-fixture-band"), 1, err.message);
  g_strfreev (pieces);
  g_free (tokens);
  return -1;
}

int
main (int argc, char **argv)
{
  ScStoreOptions opt = { .writable = true };
  g_autoptr (GError) error = NULL;
  ScStore *store = NULL;
  ScError err = { 0 };
  int n = argc > 2 ? atoi (argv[2]) : 96;
  guint w = argc > 3 ? (guint) atoi (argv[3]) : 16;
  int n_long = argc > 5 ? atoi (argv[4]) : 0;
  guint w_long = argc > 5 ? (guint) atoi (argv[5]) : 0;
  gint64 a, b, c = 0;

  if (argc < 2 || n < 8 || n > 4096 || w < 1 || argc == 5 || argc > 6
      || (argc == 6 && (n_long < 8 || n_long > 8192 || w_long < 1)))
    {
      g_printerr ("usage: app-fixture-band DB [N [W [LONG LONG_W]]]\n");
      return 2;
    }
  if (sc_store_open (argv[1], &opt, &store, &err) != SC_OK)
    {
      g_printerr ("%s\n", err.message);
      return 1;
    }
  if ((a = store_run (store, n, w, &error)) < 0 || (b = store_run (store, 6, w, &error)) < 0
      || (n_long > 0 && (c = store_run (store, n_long, w_long, &error)) < 0))
    {
      g_printerr ("%s\n", error->message);
      sc_store_close (store);
      return 1;
    }
  g_print ("%" G_GINT64_FORMAT "\n%" G_GINT64_FORMAT "\n", a, b);
  if (c > 0)
    g_print ("%" G_GINT64_FORMAT "\n", c);
  sc_store_close (store);
  return 0;
}
