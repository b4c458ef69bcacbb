/* app-fixture-long.c — writes a long run for the window's long-run test (test-app-long.sh):
 * N tokens (thousands) of the made-up 4 layer x 6 head model app-fixture.c uses, stored
 * through the store API like a capture, then a one-sentence run after it (so the window
 * starts on the short run and the test times selecting the long one).
 *
 * The heads have shapes that must stay visible when a long head is drawn at screen
 * resolution (docs/window.md, "Long runs"): head 0 a sink (most weight on position 0),
 * head 1 a previous-token head, head 2 a self head, head 3 a local window (the last 16
 * tokens), head 4 an induction stripe (the text repeats every PERIOD tokens; a token of a
 * later copy looks at the token after its match in the copy before), head 5 diffuse. Each
 * row is its shape's bumps over a faint deterministic noise floor, normalised to 1; no
 * row is computed with more than O(n) work, so 3,000 tokens take a few seconds.
 *
 * Usage: app-fixture-long DB N   (prints the two run ids: long, short)
 */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "app-fixture-model.h"
#include "engine/store/sc-store.h"

#define N_LAYERS APP_FIXTURE_LAYERS
#define N_HEADS APP_FIXTURE_HEADS
#define PERIOD 500

static const char *const words[] = {
  "The", " cat", " chased", " the", " ball", " because", " it", " was", " tired", ".",
  " Then", " a", " dog", " came", " in", ",", " and", " everyone", " left", "\n",
};

/* Row i of head (l, h) over keys 0..i, zeros after. */
static void
fill_row (float *row, int n, int i, int l, int h, double *w)
{
  double sum = 0, floor_w = 0.02 / (i + 1);

  for (int j = 0; j <= i; j++)
    w[j] = floor_w * app_fixture_noise ((guint) l, (guint) h, (guint) (i * 8191 + j));
  switch (h)
    {
    case 0: w[0] += 0.8; w[i] += 0.1; break;
    case 1: w[i > 0 ? i - 1 : 0] += 0.9; break;
    case 2: w[i] += 0.85; break;
    case 3:
      for (int j = MAX (0, i - 15); j <= i; j++)
        w[j] += 0.06;
      break;
    case 4:
      if (i >= PERIOD)
        w[i - PERIOD + 1] += 0.7;
      w[0] += 0.2;
      break;
    default:
      for (int j = MAX (0, i - 200); j <= i; j += 7)
        w[j] += 0.02 * app_fixture_noise ((guint) (l + 11), (guint) h, (guint) (i * 31 + j));
      w[0] += 0.05;
    }
  for (int j = 0; j <= i; j++)
    sum += w[j];
  for (int j = 0; j < n; j++)
    row[j] = j <= i ? (float) (w[j] / sum) : 0.0f;
}

static gboolean
store_run (ScStore *store, const ScStoreModel *model, int n, gint64 *id, ScError *err)
{
  g_autofree ScStoreToken *tokens = g_new (ScStoreToken, n);
  g_autofree float *head = g_new (float, (gsize) n * n);
  g_autofree double *w = g_new (double, n);
  g_autoptr (GString) text = g_string_new (NULL);
  ScStoreRunDesc desc = { 0 };
  ScStoreCapture *cap = NULL;

  for (int i = 0; i < n; i++)
    {
      const char *piece = words[(i % PERIOD) % G_N_ELEMENTS (words)];
      tokens[i].id = (int32_t) ((i % PERIOD) % G_N_ELEMENTS (words)) + 1;
      tokens[i].len = (uint32_t) strlen (piece);
      tokens[i].piece = (const uint8_t *) piece;
      g_string_append (text, piece);
    }
  desc.model = model;
  desc.text = text->str;
  desc.text_len = text->len;
  desc.tokens = tokens;
  desc.n_tokens = (size_t) n;
  desc.backend = "cpu";
  if (sc_store_capture_begin (store, &desc, &cap, err) != SC_OK)
    return FALSE;
  for (int l = 0; l < N_LAYERS; l++)
    for (int h = 0; h < N_HEADS; h++)
      {
        for (int i = 0; i < n; i++)
          fill_row (head + (gsize) i * n, n, i, l, h, w);
        if (sc_store_capture_add_head (cap, l, h, head, n, n, err) != SC_OK)
          {
            sc_store_capture_abort (cap);
            return FALSE;
          }
      }
  return sc_store_capture_commit (cap, 1.0, id, err) == SC_OK;
}

int
main (int argc, char **argv)
{
  ScStoreOptions opt = { .writable = TRUE };
  ScStoreModel model = { 0 };
  ScStore *store = NULL;
  ScError err = { 0 };
  gint64 id_long = 0, id_short = 0;
  int n;

  if (argc != 3 || (n = atoi (argv[2])) < 2 || n > 16384)
    {
      g_printerr ("usage: app-fixture-long DB N   (2 <= N <= 16384)\n");
      return 2;
    }
  app_fixture_model (&model, 16384);

  if (sc_store_open (argv[1], &opt, &store, &err) != SC_OK
      || !store_run (store, &model, n, &id_long, &err)
      || !store_run (store, &model, 10, &id_short, &err))
    {
      g_printerr ("app-fixture-long: %s\n", err.message);
      sc_store_close (store);
      return 1;
    }
  g_print ("%" G_GINT64_FORMAT "\n%" G_GINT64_FORMAT "\n", id_long, id_short);
  sc_store_close (store);
  return 0;
}
