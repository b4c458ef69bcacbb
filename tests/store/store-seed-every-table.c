/* store-seed-every-table.c — writes a small store that holds a row in every table of the
 * schema, as a seed for the store fuzz target (tests/fuzz/fuzz-store.c) and for trying the
 * reading verbs by hand: runs of every storage form at fuzzing size (band heads with layer
 * windows and predictions, a run shorter than its window, causal, full, sparse, chosen
 * heads; head scores and overviews come with every run), a shard manifest, a run-level study
 * with head values and a series, and a dataset-level one.
 *
 * Usage: store-seed-every-table PATH   (PATH must not exist)
 * Exit status: 0, or 1 with a message.
 */
#include <glib.h>
#include <stdio.h>

#include "engine/store/sc-store-merge.h"
#include "engine/store/sc-store-study.h"
#include "tests/store/store-fake.h"

/* Small runs: every head a few hundred bytes, so that a fuzzer's mutations land on pages
 * that matter. */
static const guint8 KEEP[STORE_FAKE_LAYERS * STORE_FAKE_HEADS] = { 1, 0, 0, 1, 0, 1,
                                                                 0, 1, 0, 0, 1, 0 };
static const StoreFakeRun RUNS[] = {
  { 1, 24, TRUE, 8, NULL, 0, 4 },   /* bands of window 8, layer windows, predictions */
  { 2, 6, TRUE, 8, NULL, 0, 2 },    /* shorter than its window: causal, layers still local */
  { 3, 10, TRUE, 0, NULL, 0, 0 },   /* causal */
  { 4, 7, FALSE, 0, NULL, 0, 0 },   /* full */
  { 5, 48, TRUE, 0, NULL, 0.02, 0 }, /* sparse (smaller than dense at this size) */
  { 6, 5, TRUE, 0, KEEP, 0, 0 },    /* chosen heads */
};

static gboolean
fail (const char *what, const ScError *err)
{
  fprintf (stderr, "store-seed-every-table: %s: %s\n", what, err->message);
  return FALSE;
}

static gboolean
write_seed (const char *path)
{
  const ScStoreOptions opt = { .writable = TRUE };
  ScStore *s = NULL;
  ScStoreStudy *st = NULL;
  ScStoreModel m;
  ScError err = { 0 };
  gboolean ok = TRUE;
  gint64 first = 0;

  if (g_file_test (path, G_FILE_TEST_EXISTS))
    {
      fprintf (stderr, "store-seed-every-table: %s exists\n", path);
      return FALSE;
    }
  if (sc_store_open (path, &opt, &s, &err) != SC_OK)
    return fail ("opening", &err);
  store_fake_model (&m, 0);
  if (sc_store_shard_mark (s, &m, "{\"verb\":\"seed\",\"shards\":2}", 0, 2, &err) != SC_OK)
    ok = fail ("marking the shard", &err);
  for (gsize i = 0; ok && i < G_N_ELEMENTS (RUNS); i++)
    {
      const gint64 id = store_fake_capture_run (s, &RUNS[i], 0, &err);
      if (id < 0)
        ok = fail ("capturing", &err);
      if (i == 0)
        first = id;
    }
  if (ok)
    {
      char params[64];
      g_snprintf (params, sizeof params, "{\"study\":1,\"run\":%" G_GINT64_FORMAT ",\"target\":null}",
                  first);
      if (sc_store_study_begin (s, "ablate-heads", &m, params, &st, &err) != SC_OK
          || sc_store_study_add_head (st, 0, 1, "kl", 0.25, &err) != SC_OK
          || sc_store_study_add_series (st, "clean", 0, 1.5, &err) != SC_OK
          || sc_store_study_commit (st, NULL, &err) != SC_OK)
        ok = fail ("storing a run-level study", &err);
    }
  if (ok && (sc_store_study_begin (s, "faithfulness", &m, "{\"line\":3}", &st, &err) != SC_OK
             || sc_store_study_add_head (st, 1, 2, "tau", 0.5, &err) != SC_OK
             || sc_store_study_add_series (st, "loo", 2, 0.125, &err) != SC_OK
             || sc_store_study_commit (st, NULL, &err) != SC_OK))
    ok = fail ("storing a dataset study", &err);
  sc_store_close (s);
  return ok;
}

int
main (int argc, char **argv)
{
  if (argc != 2)
    {
      fprintf (stderr, "usage: store-seed-every-table PATH\n");
      return 2;
    }
  return write_seed (argv[1]) ? 0 : 1;
}
