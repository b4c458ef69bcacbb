/* test-store-predictions.c — a run's next-token predictions in the store
 * (engine/store/sc-store-predictions.h): written with the run and read back exactly,
 * absent for a run stored without them, refused when set wrongly, gone with the run, and
 * every hostile edit of the table refused with a message naming what is wrong.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/store/sc-store-predictions.h"
#include "store-fake.h"

#define N 9
#define K 4

/* A run of N tokens with K predictions a position: ids p * 7 + r, probabilities falling
 * with the rank, pieces "t<id>", logits 10 - r (one NULL-able NaN). */
static gint64
capture_with_predictions (ScStore *s, gboolean set_twice, ScError *err)
{
  g_autofree ScStoreToken *tokens = store_fake_tokens (3, N);
  g_autofree char *text = NULL;
  int32_t ids[N * K];
  float logits[N * K];
  double probs[N * K];
  ScStoreToken pieces[N * K];
  char bytes[N * K][8];
  ScStoreModel model;
  ScStoreRunDesc desc = { 0 };
  ScStoreCapture *cap = NULL;
  gsize len = 0;
  gint64 id = -1;

  for (int i = 0; i < N * K; i++)
    {
      ids[i] = (i / K) * 7 + i % K;
      logits[i] = i == 5 ? NAN : 10.0f - (float) (i % K);
      probs[i] = 0.5 / (1 << (i % K));
      g_snprintf (bytes[i], sizeof bytes[i], "t%d", ids[i]);
      pieces[i] = (ScStoreToken) { ids[i], (uint32_t) strlen (bytes[i]), (const uint8_t *) bytes[i] };
    }
  store_fake_model (&model, 0);
  text = store_fake_text (3, N, TRUE, &len);
  desc = (ScStoreRunDesc) { &model, text, len, tokens, N, "fake" };
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, err), ==, SC_OK);
  for (int l = 0; l < STORE_FAKE_LAYERS; l++)
    for (int h = 0; h < STORE_FAKE_HEADS; h++)
      {
        g_autofree float *p = store_fake_head (3, l, h, N, TRUE);
        g_assert_cmpint (sc_store_capture_add_head (cap, l, h, p, N, N, err), ==, SC_OK);
      }
  /* the wrong shape and a bad probability are refused and change nothing */
  g_assert_cmpint (sc_store_capture_set_predictions (cap, N - 1, K, ids, logits, probs, pieces,
                                                     err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err->message, "predictions for 8 positions, the run has 9"));
  probs[3] = 1.5;
  g_assert_cmpint (sc_store_capture_set_predictions (cap, N, K, ids, logits, probs, pieces, err),
                   ==, SC_ERR_INVALID_ARG);
  probs[3] = 0.5 / 8;
  g_assert_cmpint (sc_store_capture_set_predictions (cap, N, K, ids, logits, probs, pieces, err),
                   ==, SC_OK);
  if (set_twice)
    g_assert_cmpint (sc_store_capture_set_predictions (cap, N, K, ids, logits, probs, pieces,
                                                       err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_store_capture_commit (cap, 0.1, &id, err), ==, SC_OK);
  return id;
}

static void
test_roundtrip (void)
{
  StoreTmp t;
  ScStore *s;
  ScStorePredictions p = { 0 };
  ScError err = { 0 };
  gint64 plain, run;

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  plain = store_test_capture (s, 1, 5, TRUE);
  run = capture_with_predictions (s, TRUE, &err);

  /* a run stored without: none, not an error */
  g_assert_cmpint (sc_store_read_predictions (s, plain, &p, &err), ==, SC_OK);
  g_assert_cmpuint (p.n_positions, ==, 0);
  g_assert_null (p.ids);

  g_assert_cmpint (sc_store_read_predictions (s, run, &p, &err), ==, SC_OK);
  g_assert_cmpuint (p.n_positions, ==, N);
  g_assert_cmpuint (p.k, ==, K);
  for (int i = 0; i < N * K; i++)
    {
      char want[8];
      g_snprintf (want, sizeof want, "t%d", (i / K) * 7 + i % K);
      g_assert_cmpint (p.ids[i], ==, (i / K) * 7 + i % K);
      g_assert_cmpfloat (p.probs[i], ==, 0.5 / (1 << (i % K)));
      if (i == 5)
        g_assert_true (isnan (p.logits[i]));
      else
        g_assert_cmpfloat (p.logits[i], ==, 10.0f - (float) (i % K));
      g_assert_cmpmem (p.pieces[i].piece, p.pieces[i].len, want, strlen (want));
    }
  sc_store_predictions_clear (&p);
  sc_store_predictions_clear (&p); /* a cleared struct is a no-op */

  /* they go with the run */
  g_assert_cmpint (sc_store_delete_run (s, run, &err), ==, SC_OK);
  sc_store_close (s);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM predictions"), ==, 0);
  store_tmp_clear (&t);
}

/* Each edit of a stored run's predictions is refused by name; the file is otherwise fine. */
static void
test_hostile (void)
{
  static const struct {
    const char *sql;
    const char *words;
  } edits[] = {
    { "DELETE FROM predictions WHERE pos = 3 AND rank = 1", "35 predictions rows for 9 positions of 4" },
    { "DELETE FROM predictions WHERE pos = 8", "32 predictions rows for 9 positions of 4" },
    { "UPDATE predictions SET prob = 0.9 WHERE pos = 2 AND rank = 2", "(2, 2) has probability 0.9" },
    { "UPDATE predictions SET token_id = 60000 WHERE pos = 1 AND rank = 0", "names token 60000" },
    { "UPDATE predictions SET logit = 'x' WHERE pos = 0 AND rank = 0", "has logit" },
    { "UPDATE predictions SET pos = 20 WHERE pos = 4 AND rank = 1", "out of order (expected position 4 rank 1)" },
    { "UPDATE predictions SET rank = 70 WHERE pos = 8 AND rank = 3", "rank up to 70" },
    { "INSERT INTO predictions VALUES (2, 0, 4, 1, x'00', 1.0, 0.0)", "predictions rows" },
    /* issue 25, item 5: a 3 MB piece hung the window; a piece past 256 bytes is refused */
    { "UPDATE predictions SET piece = randomblob(3000000) WHERE pos = 6 AND rank = 0",
      "prediction (6, 0): its piece is a 3000000-byte blob, more than the 256 bytes" },
    { "UPDATE predictions SET piece = randomblob(257) WHERE pos = 2 AND rank = 1",
      "prediction (2, 1): its piece is a 257-byte blob" },
    { "PRAGMA ignore_check_constraints = ON; "
      "UPDATE predictions SET piece = 'abc' WHERE pos = 1 AND rank = 3",
      "prediction (1, 3): its piece is text, not a BLOB" },
  };

  for (gsize e = 0; e < G_N_ELEMENTS (edits); e++)
    {
      StoreTmp t;
      ScStore *s;
      ScStorePredictions p = { 0 };
      ScError err = { 0 };
      gint64 run;

      store_tmp_init (&t);
      s = store_test_open (t.path, TRUE);
      store_test_capture (s, 1, 5, TRUE);
      run = capture_with_predictions (s, FALSE, &err);
      g_assert_cmpint (run, ==, 2);
      sc_store_close (s);
      store_test_raw_exec (t.path, edits[e].sql);
      s = store_test_open (t.path, FALSE);
      g_assert_cmpint (sc_store_read_predictions (s, run, &p, &err), ==, SC_ERR_FORMAT);
      g_test_message ("%s: %s", edits[e].sql, err.message);
      if (strstr (err.message, edits[e].words) == NULL)
        g_error ("message lacks '%s': %s", edits[e].words, err.message);
      g_assert_null (p.ids);
      /* the run itself still reads */
      store_test_assert_run (s, run);
      sc_store_close (s);
      store_tmp_clear (&t);
    }
}

/* A piece past SC_STORE_MAX_PREDICTION_PIECE_BYTES (256) is stored cut to 256 bytes, before
 * a UTF-8 sequence the cut would split; 256 bytes exactly read back whole. */
static void
test_long_piece_cut (void)
{
  StoreTmp t;
  ScStore *s;
  ScStorePredictions p = { 0 };
  ScError err = { 0 };
  g_autofree ScStoreToken *tokens = store_fake_tokens (3, N);
  g_autofree char *text = NULL;
  int32_t ids[N];
  double probs[N];
  ScStoreToken pieces[N];
  guint8 long_piece[300], exact[256];
  ScStoreModel model;
  ScStoreRunDesc desc = { 0 };
  ScStoreCapture *cap = NULL;
  gsize len = 0;
  gint64 id = -1;

  /* 'a' * 255 then U+00E9 (2 bytes: 255-256) then more: the cut at 256 splits it */
  memset (long_piece, 'a', sizeof long_piece);
  long_piece[255] = 0xc3;
  long_piece[256] = 0xa9;
  memset (exact, 'b', sizeof exact);
  for (int i = 0; i < N; i++)
    {
      ids[i] = i;
      probs[i] = 0.5;
      pieces[i] = (ScStoreToken) { i, 1, (const guint8 *) "x" };
    }
  pieces[2] = (ScStoreToken) { 2, sizeof long_piece, long_piece };
  pieces[4] = (ScStoreToken) { 4, sizeof exact, exact };
  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  store_fake_model (&model, 0);
  text = store_fake_text (3, N, TRUE, &len);
  desc = (ScStoreRunDesc) { &model, text, len, tokens, N, "fake" };
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_OK);
  for (int l = 0; l < STORE_FAKE_LAYERS; l++)
    for (int h = 0; h < STORE_FAKE_HEADS; h++)
      {
        g_autofree float *a = store_fake_head (3, l, h, N, TRUE);
        g_assert_cmpint (sc_store_capture_add_head (cap, l, h, a, N, N, &err), ==, SC_OK);
      }
  g_assert_cmpint (sc_store_capture_set_predictions (cap, N, 1, ids, NULL, probs, pieces, &err),
                   ==, SC_OK);
  g_assert_cmpint (sc_store_capture_commit (cap, 0.1, &id, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_read_predictions (s, id, &p, &err), ==, SC_OK);
  g_assert_cmpuint (p.pieces[2].len, ==, 255);
  g_assert_true (memcmp (p.pieces[2].piece, long_piece, 255) == 0);
  g_assert_cmpuint (p.pieces[4].len, ==, 256);
  g_assert_true (memcmp (p.pieces[4].piece, exact, 256) == 0);
  g_assert_cmpint (p.ids[2], ==, 2);
  sc_store_predictions_clear (&p);
  sc_store_close (s);
  store_tmp_clear (&t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/store/predictions/roundtrip", test_roundtrip);
  g_test_add_func ("/store/predictions/hostile", test_hostile);
  g_test_add_func ("/store/predictions/long-piece-cut", test_long_piece_cut);
  return g_test_run ();
}
