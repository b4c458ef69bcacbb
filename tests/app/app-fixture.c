/* app-fixture.c — writes the end-to-end test's capture database: three runs of a small
 * made-up model (4 layers x 6 query heads over 2 KV heads) whose heads have the shapes real
 * heads have — an attention sink, a previous-token head, a self head, a uniform head, a
 * head that looks back at one word, and a diffuse one — so every page has something to
 * show without needing the real model.
 *
 * The tokens test the labels: leading spaces, a newline, CJK text, and a CJK character
 * split across two byte-level pieces (which must show as hex).
 *
 * Usage: app-fixture DB   (DB must not exist; prints the run ids)
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "app-fixture-model.h"
#include "engine/store/sc-store.h"

#define N_LAYERS APP_FIXTURE_LAYERS
#define N_HEADS APP_FIXTURE_HEADS

typedef struct {
  const char *text;
  const char *const *pieces;
  int anchor_query, anchor_key; /* head 4 looks from this query back to this key */
} FixtureRun;

static const char *const cat_pieces[] = {
  "The", " cat", " chased", " the", " ball", " because", " it", " was", " tired", ".", NULL,
};
/* 猫 is E7 8C AB: split into two pieces that are not whole characters. */
static const char *const zh_pieces[] = {
  "\xE7\x8C", "\xAB", "追", "球", "，", "它", "累", "了", "。", NULL,
};
static const char *const lines_pieces[] = {
  "def", " add", "(a", ",", " b", "):", "\n", "   ", " return", " a", " +", " b", NULL,
};

static const FixtureRun runs[] = {
  { "def add(a, b):\n    return a + b", lines_pieces, 10, 3 },
  { "猫追球，它累了。", zh_pieces, 5, 0 },
  { "The cat chased the ball because it was tired.", cat_pieces, 6, 1 },
};

/* Row i of head (l, h): a distribution over keys 0..i (causal), zeros after. */
static void
fill_row (float *row, int n, int i, int l, int h, const FixtureRun *r, guint seed)
{
  double w[64], sum = 0;
  int j, kind = h % N_HEADS;

  for (j = 0; j <= i; j++)
    {
      double s = 0.3 * app_fixture_noise (seed, (guint) (l * 100 + h), (guint) (i * 64 + j));
      switch (kind)
        {
        case 0: s += j == 0 ? 4.0 : 0; break;                          /* sink */
        case 1: s += j == i - 1 ? 3.5 : (i == 0 ? 1 : 0); break;       /* previous token */
        case 2: s += j == i ? 3.0 : 0; break;                          /* self */
        case 3: break;                                                  /* uniform */
        case 4: s += (i == r->anchor_query && j == r->anchor_key) ? 4.0
                     : j == 0 ? 1.5 : 0; break;                         /* looks back */
        default: s += 2.5 * app_fixture_noise (seed + 7, (guint) (l * 100 + h), (guint) (i * 64 + j)); /* diffuse */
        }
      /* Deeper layers are sharper. */
      w[j] = exp (s * (1.0 + 0.4 * l));
      sum += w[j];
    }
  for (j = 0; j < n; j++)
    row[j] = j <= i ? (float) (w[j] / sum) : 0.0f;
}

int
main (int argc, char **argv)
{
  ScStoreOptions opt = { .writable = TRUE };
  ScStoreModel model = { 0 };
  ScStore *store = NULL;
  ScError err = { 0 };
  gsize r;

  if (argc != 2)
    {
      g_printerr ("usage: app-fixture DB\n");
      return 2;
    }
  app_fixture_model (&model, 64);

  if (sc_store_open (argv[1], &opt, &store, &err) != SC_OK)
    goto fail;
  for (r = 0; r < G_N_ELEMENTS (runs); r++)
    {
      const FixtureRun *fr = &runs[r];
      ScStoreToken tokens[64];
      ScStoreRunDesc desc = { 0 };
      ScStoreCapture *cap = NULL;
      g_autofree float *head = NULL;
      gint64 id = 0;
      int n = 0, l, h, i;

      while (fr->pieces[n] != NULL)
        {
          tokens[n].id = n + 1;
          tokens[n].len = (uint32_t) strlen (fr->pieces[n]);
          tokens[n].piece = (const uint8_t *) fr->pieces[n];
          n++;
        }
      desc.model = &model;
      desc.text = fr->text;
      desc.text_len = strlen (fr->text);
      desc.tokens = tokens;
      desc.n_tokens = (size_t) n;
      desc.backend = "cpu";
      if (sc_store_capture_begin (store, &desc, &cap, &err) != SC_OK)
        goto fail;
      head = g_new (float, (gsize) n * n);
      for (l = 0; l < N_LAYERS; l++)
        for (h = 0; h < N_HEADS; h++)
          {
            for (i = 0; i < n; i++)
              fill_row (head + (gsize) i * n, n, i, l, h, fr, (guint) r);
            if (sc_store_capture_add_head (cap, l, h, head, n, n, &err) != SC_OK)
              {
                sc_store_capture_abort (cap);
                goto fail;
              }
          }
      if (sc_store_capture_commit (cap, 0.01 * (double) (r + 1), &id, &err) != SC_OK)
        goto fail;
      g_print ("%" G_GINT64_FORMAT "\n", id);
    }
  sc_store_close (store);
  return 0;

fail:
  g_printerr ("app-fixture: %s\n", err.message);
  sc_store_close (store);
  return 1;
}
