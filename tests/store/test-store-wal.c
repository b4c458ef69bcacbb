/* test-store-wal.c — what a long run leaves beside the store (issue 25, item 2): after a
 * run whose transaction passed 32 MiB of WAL, the writer checkpoints with TRUNCATE, so a
 * store kept open (the window's) is not left with a WAL the size of the run; a run
 * cancelled half-way leaves no row, no id used and no big WAL either.
 *
 * A second, read-only store stays open through each case, as the window's reading
 * connection does: closing the writing store is then not the last close, which would fold
 * and remove the WAL whatever the writer did, so the WAL's size after the close is the one
 * the writer left.
 */
#include <glib.h>
#include <string.h>

#include "tests/store/store-fake.h"

/* Past the writer's WAL_KEEP_BYTES (32 MiB): 12 causal heads of 1,900 tokens are 43 MB. */
#define LONG_N 1900
#define WAL_KEEP_BYTES (32 * 1024 * 1024)

static void
test_truncated_after_long_run (void)
{
  StoreTmp t;
  g_autofree char *wal = NULL;
  ScStore *w, *r;
  ScError err = { 0 };
  gint64 id;

  store_tmp_init (&t);
  wal = g_strconcat (t.path, "-wal", NULL);
  w = store_test_open (t.path, TRUE);
  store_test_capture (w, 1, 16, TRUE);
  r = store_test_open (t.path, FALSE);
  id = store_fake_capture (w, 2, LONG_N, TRUE, 0, 0, &err);
  g_assert_cmpint (id, ==, 2);
  sc_store_close (w); /* joins the writer thread: its step 5 is done */
  g_test_message ("WAL after a %d-token run: %" G_GINT64_FORMAT " bytes", LONG_N,
                  store_test_file_size (wal));
  g_assert_cmpint (store_test_file_size (wal), <=, WAL_KEEP_BYTES);
  store_test_assert_run (r, id);
  sc_store_close (r);
  store_tmp_clear (&t);
}

static void
test_cancelled_leaves_nothing (void)
{
  const int n = 2600; /* heads of 6.8 MB: 9 are past 32 MiB */
  /* a ring of two slots: at most two heads are still queued (and dropped) at the cancel,
   * so at least 7 reached the WAL */
  const ScStoreOptions small_ring = { .writable = TRUE, .queue_bytes = 1 };
  StoreTmp t;
  g_autofree ScStoreToken *tokens = store_fake_tokens (9, n);
  g_autofree char *text = NULL, *wal = NULL;
  ScStoreModel model;
  ScStoreRunDesc desc = { 0 };
  ScStoreCapture *cap = NULL;
  ScStore *w, *r;
  ScError err = { 0 };
  gsize len = 0;

  store_tmp_init (&t);
  wal = g_strconcat (t.path, "-wal", NULL);
  g_assert_cmpint (sc_store_open (t.path, &small_ring, &w, &err), ==, SC_OK);
  store_test_capture (w, 1, 16, TRUE);
  r = store_test_open (t.path, FALSE);
  store_fake_model (&model, 0);
  text = store_fake_text (9, n, TRUE, &len);
  desc = (ScStoreRunDesc) { &model, text, len, tokens, (size_t) n, "fake" };
  g_assert_cmpint (sc_store_capture_begin (w, &desc, &cap, &err), ==, SC_OK);
  for (int l = 0; l < 3; l++)
    for (int h = 0; h < STORE_FAKE_HEADS; h++)
      {
        g_autofree float *p = store_fake_head (9, l, h, n, TRUE);
        g_assert_cmpint (sc_store_capture_add_head (cap, l, h, p, n, n, &err), ==, SC_OK);
      }
  sc_store_capture_abort (cap);
  sc_store_close (w);
  g_test_message ("WAL after a cancelled %d-token run: %" G_GINT64_FORMAT " bytes", n,
                  store_test_file_size (wal));
  g_assert_cmpint (store_test_file_size (wal), <=, WAL_KEEP_BYTES);
  sc_store_close (r);
  /* nothing of it: no row in any table, and the next run gets id 2 */
  {
    static const char *const tables[] = { "runs", "tokens", "attention", "attention_parts",
                                          "attention_bands", "layer_windows",
                                          "head_overviews", "head_scores", "predictions" };
    for (gsize k = 0; k < G_N_ELEMENTS (tables); k++)
      {
        g_autofree char *sql = g_strdup_printf ("SELECT count(*) FROM %s WHERE %s = 2",
                                                tables[k], k == 0 ? "id" : "run_id");
        g_assert_cmpint (store_test_raw_int (t.path, sql), ==, 0);
      }
  }
  store_test_assert_nothing_lost (t.path, 1, TRUE);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT max(id) FROM runs"), ==, 2);
  store_tmp_clear (&t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/store/wal/truncated-after-long-run", test_truncated_after_long_run);
  g_test_add_func ("/store/wal/cancelled-run-leaves-nothing", test_cancelled_leaves_nothing);
  return g_test_run ();
}
