/* test-store-band.c — heads of sliding-window layers stored as their band (schema v4).
 *
 * Synthetic captures through the writer API: the fake model (4 layers x 3 heads) given
 * sliding_window W and swa_pattern 2, so layers 0 and 2 are local (sc_model_layer_window)
 * and 1 and 3 global; a local layer's heads are softmax rows over keys i - W + 1..i with
 * exact zeros elsewhere, as the attention op's window contract writes them. Checked: the
 * round trip (values to fp16, zeros and the window marking the masked cells), what the
 * database holds (attention_bands rows of exactly the band's length, layer_windows rows),
 * a run shorter than the window (causal), a head that ignores its window (causal, values
 * intact), row blocks under a 64 KiB BLOB limit against the unsplit store, every reader
 * (rows, fp16, overview with its masked cells), edited databases (wrong window, wrong
 * BLOB length, window past n, a bad value, a gap, a layer outside the model) failing with
 * their messages, and a store from before v4 opened read-only and migrated.
 */
#include <math.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "engine/core/sc-math.h"
#include "engine/store/sc-store-heads.h"
#include "hostile-stores.h"
#include "store-fake.h"

#define PATTERN 2u /* layers 1 and 3 global: (layer + 1) % 2 == 0 */

/* Head (@layer, @head) of run @seed: a band of @w keys (w 0: causal). */
static float *
band_head (guint64 seed, int layer, int head, int n, guint32 w)
{
  GRand *r = g_rand_new_with_seed ((guint32) (seed * 104729u + (guint64) layer * 131u + head));
  float *p = g_new0 (float, (gsize) n * n);

  for (int i = 0; i < n; i++)
    {
      const int s = w > 0 && i + 1 > (int) w ? i + 1 - (int) w : 0;
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

/* The window the fake model with @w gives @layer. */
static guint32
layer_w (int layer, guint32 w)
{
  return (layer + 1) % PATTERN == 0 ? 0 : w;
}

/* Captures run @seed of @n tokens, model window @w; heads of local layers get the band of
 * @head_w (normally w; another value makes heads that ignore the window). */
static gint64
capture (ScStore *s, guint64 seed, int n, guint32 w, guint32 head_w)
{
  g_autofree ScStoreToken *tokens = store_fake_tokens (seed, n);
  g_autofree char *text = NULL;
  ScStoreModel model;
  ScStoreRunDesc desc = { 0 };
  ScStoreCapture *cap = NULL;
  ScError err = { 0 };
  gsize text_len = 0;
  gint64 id = -1;

  store_fake_model (&model, 0);
  model.sliding_window = w;
  model.swa_pattern = PATTERN;
  text = store_fake_text (seed, n, TRUE, &text_len);
  desc = (ScStoreRunDesc) { &model, text, text_len, tokens, (size_t) n, "fake", NULL, 0 };
  if (sc_store_capture_begin (s, &desc, &cap, &err) != SC_OK)
    g_error ("capture_begin: %s", err.message);
  for (int l = 0; l < STORE_FAKE_LAYERS; l++)
    for (int h = 0; h < STORE_FAKE_HEADS; h++)
      {
        g_autofree float *p = band_head (seed, l, h, n, layer_w (l, head_w));
        if (sc_store_capture_add_head (cap, l, h, p, n, n, &err) != SC_OK)
          g_error ("add_head: %s", err.message);
      }
  if (sc_store_capture_commit (cap, -1, &id, &err) != SC_OK)
    g_error ("commit: %s", err.message);
  return id;
}

/* Asserts run @run reads back as captured (seed, n, head window @head_w), with head
 * windows @expect_w on local layers and the run's layer windows @w. */
static void
assert_run (ScStore *s, gint64 run, guint64 seed, int n, guint32 w, guint32 head_w,
            guint32 expect_w)
{
  ScStoreRunInfo info = { 0 };
  ScError err = { 0 };

  g_assert_cmpint (sc_store_get_run (s, run, &info, &err), ==, SC_OK);
  if (w == 0)
    g_assert_null (info.windows);
  for (int l = 0; l < STORE_FAKE_LAYERS; l++)
    g_assert_cmpuint (sc_store_run_layer_window (&info, l), ==, layer_w (l, w));
  sc_store_run_info_clear (&info);

  for (int l = 0; l < STORE_FAKE_LAYERS; l++)
    for (int h = 0; h < STORE_FAKE_HEADS; h++)
      {
        g_autofree float *want = band_head (seed, l, h, n, layer_w (l, head_w));
        g_autofree float *rows = g_new (float, (gsize) n * n);
        ScStoreHead hd = { 0 };
        ScStoreHeadF16 f16 = { 0 };
        ScStoreOverview ov = { 0 };
        const guint32 hw = layer_w (l, expect_w);

        g_assert_cmpint (sc_store_read_head (s, run, l, h, &hd, &err), ==, SC_OK);
        g_assert_true (hd.causal);
        g_assert_cmpuint (hd.window, ==, hw);
        for (int i = 0; i < n; i++)
          for (int j = 0; j < n; j++)
            {
              const float got = hd.probs[(gsize) i * n + j];
              g_assert_true (store_fake_fp16_close (want[(gsize) i * n + j], got));
              if (j > i || (hw > 0 && j + (int) hw <= i))
                g_assert_true (got == 0.0f); /* masked: exactly 0 */
            }
        /* rows in three uneven blocks are the same floats */
        for (int q0 = 0; q0 < n;)
          {
            const int q1 = MIN (n, q0 + n / 3 + 1);
            g_assert_cmpint (sc_store_read_head_rows (s, run, l, h, (guint32) q0, (guint32) q1,
                                                      rows + (gsize) q0 * n, NULL, &err), ==,
                             SC_OK);
            q0 = q1;
          }
        g_assert_cmpmem (rows, (gsize) n * n * sizeof (float), hd.probs,
                         (gsize) n * n * sizeof (float));
        /* the fp16 view is the lower triangle, zeros left of the band */
        g_assert_cmpint (sc_store_read_head_f16 (s, run, l, h, &f16, &err), ==, SC_OK);
        g_assert_cmpuint (f16.window, ==, hw);
        g_assert_cmpuint (f16.n_values, ==, (gsize) n * (n + 1) / 2);
        for (int i = 0, k = 0; i < n; i++)
          for (int j = 0; j <= i; j++, k++)
            g_assert_cmpfloat (hd.probs[(gsize) i * n + j], ==,
                               sc_fp16_to_fp32 (f16.values[k]));
        /* the overview: block maxima, masked cells 0, some masked left of the band */
        g_assert_cmpint (sc_store_read_overview (s, run, l, h, &ov, &err), ==, SC_OK);
        g_assert_cmpuint (ov.window, ==, hw);
        {
          int n_left = 0;
          for (guint32 a = 0; a < ov.size; a++)
            for (guint32 b = 0; b < ov.size; b++)
              {
                const guint32 r0 = sc_store_overview_start ((guint32) n, ov.size, a);
                const guint32 r1 = sc_store_overview_start ((guint32) n, ov.size, a + 1);
                const guint32 c0 = sc_store_overview_start ((guint32) n, ov.size, b);
                const guint32 c1 = sc_store_overview_start ((guint32) n, ov.size, b + 1);
                float m = 0;
                gboolean any_open = FALSE;
                for (guint32 i = r0; i < r1; i++)
                  for (guint32 j = c0; j < c1; j++)
                    {
                      m = MAX (m, hd.probs[(gsize) i * n + j]);
                      any_open = any_open || (j <= i && (hw == 0 || j + hw > i));
                    }
                g_assert_cmpfloat (ov.values[(gsize) a * ov.size + b], ==, m);
                /* masked exactly when no cell of the block is open */
                g_assert_cmpint (sc_store_overview_masked (&ov, a, b), ==, !any_open);
                n_left += sc_store_overview_masked (&ov, a, b) && b < a;
              }
          g_assert_cmpint (n_left > 0, ==, hw > 0);
        }
        sc_store_overview_clear (&ov);
        sc_store_head_f16_clear (&f16);
        sc_store_head_clear (&hd);
      }
}

/* n > w: band heads in attention_bands, exactly the band's bytes; layer_windows rows. */
static void
test_roundtrip (void)
{
  const int n = 70;
  const guint32 w = 16;
  StoreTmp t;
  ScStore *s;

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  g_assert_cmpint (capture (s, 1, n, w, w), ==, 1);
  assert_run (s, 1, 1, n, w, w, w);
  sc_store_close (s);
  /* 2 local layers x 3 heads, one row each; the global ones causal */
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM attention_bands"), ==, 6);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM attention WHERE layout = "
                                       "'causal'"), ==, 6);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM layer_windows WHERE size = 16 "
                                       "AND layer IN (0, 2)"), ==, 2);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM layer_windows"), ==, 2);
  /* w (w + 1) / 2 + (n - w) w values: 136 + 864 = 1000, against n (n + 1) / 2 = 2485 */
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT min (length (data)) = max (length (data)) "
                                       "AND max (length (data)) = 2000 FROM attention_bands"), ==, 1);
  /* the run is read back whole from a read-only store too */
  s = store_test_open (t.path, FALSE);
  assert_run (s, 1, 1, n, w, w, w);
  sc_store_close (s);
  store_tmp_clear (&t);
}

/* n <= w: causal heads, the run still says which layers are local; a head with values left
 * of its window is stored causal with them intact; a model without windows records none. */
static void
test_short_and_unwindowed (void)
{
  StoreTmp t;
  ScStore *s;

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  g_assert_cmpint (capture (s, 2, 12, 12, 12), ==, 1);  /* n == w */
  g_assert_cmpint (capture (s, 3, 9, 512, 512), ==, 2); /* n < w */
  g_assert_cmpint (capture (s, 4, 30, 8, 0), ==, 3);    /* heads ignore the window */
  g_assert_cmpint (capture (s, 5, 30, 0, 0), ==, 4);    /* no windows at all */
  assert_run (s, 1, 2, 12, 12, 12, 0);
  assert_run (s, 2, 3, 9, 512, 512, 0);
  assert_run (s, 3, 4, 30, 8, 0, 0);
  assert_run (s, 4, 5, 30, 0, 0, 0);
  sc_store_close (s);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM attention_bands"), ==, 0);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM layer_windows"), ==, 6);
  store_tmp_clear (&t);
}

/* Row blocks: under a 64 KiB BLOB limit a band of 110,100 bytes takes two rows; heads,
 * rows and overviews read back as from the unsplit store. */
static void
test_blocks (void)
{
  const int n = 600;
  const guint32 w = 100;
  ScStoreOptions opt = { .writable = TRUE, .max_blob_bytes = SC_STORE_MIN_BLOB_BYTES };
  StoreTmp whole, split;
  ScStore *a, *b = NULL;
  ScError err = { 0 };

  store_tmp_init (&whole);
  store_tmp_init (&split);
  a = store_test_open (whole.path, TRUE);
  g_assert_cmpint (sc_store_open (split.path, &opt, &b, &err), ==, SC_OK);
  g_assert_cmpint (capture (a, 7, n, w, w), ==, 1);
  g_assert_cmpint (capture (b, 7, n, w, w), ==, 1);
  sc_store_close (b);
  g_assert_cmpint (store_test_raw_int (split.path, "SELECT count(*) FROM attention_bands WHERE "
                                       "row0 > 0"), >=, 6);
  g_assert_cmpint (store_test_raw_int (split.path, "SELECT max (length (data)) FROM "
                                       "attention_bands"), <=, SC_STORE_MIN_BLOB_BYTES);
  g_assert_cmpint (store_test_raw_int (whole.path, "SELECT count(*) FROM attention_bands"), ==, 6);
  b = store_test_open (split.path, FALSE);
  for (int l = 0; l < STORE_FAKE_LAYERS; l += 2)
    for (int h = 0; h < STORE_FAKE_HEADS; h++)
      {
        ScStoreHead x = { 0 }, y = { 0 };
        const gsize nn = (gsize) n * n;
        g_assert_cmpint (sc_store_read_head (a, 1, l, h, &x, &err), ==, SC_OK);
        g_assert_cmpint (sc_store_read_head (b, 1, l, h, &y, &err), ==, SC_OK);
        g_assert_cmpuint (y.window, ==, w);
        g_assert_cmpmem (x.probs, nn * sizeof (float), y.probs, nn * sizeof (float));
        /* rows across the block boundary */
        {
          g_autofree float *rows = g_new (float, (gsize) 400 * n);
          g_assert_cmpint (sc_store_read_head_rows (b, 1, l, h, 100, 500, rows, NULL, &err), ==,
                           SC_OK);
          g_assert_cmpmem (rows, (gsize) 400 * n * sizeof (float), x.probs + (gsize) 100 * n,
                           (gsize) 400 * n * sizeof (float));
        }
        sc_store_head_clear (&x);
        sc_store_head_clear (&y);
      }
  assert_run (b, 1, 7, n, w, w, w);
  sc_store_close (a);
  sc_store_close (b);
  store_tmp_clear (&whole);
  store_tmp_clear (&split);
}

/* Edited databases: each edit of a stored band run makes reading head (0, 1) — or the
 * run — fail with SC_ERR_FORMAT naming what is wrong, and never crash. */
static void
test_hostile (void)
{
  static const struct {
    const char *sql;
    gboolean run_fails; /* the listing fails, not only the head */
    const char *needle;
  } edits[] = {
    { "UPDATE attention_bands SET window_size = 17 WHERE layer = 0 AND head = 1", FALSE,
      "window_size is 17, but layer 0's window is 16" },
    { "UPDATE layer_windows SET size = 15 WHERE layer = 0", FALSE,
      "window_size is 16, but layer 0's window is 15" },
    { "DELETE FROM layer_windows WHERE layer = 0", FALSE,
      "layer_windows has no row: a global layer" },
    { "UPDATE attention_bands SET window_size = 75 WHERE layer = 0 AND head = 1", FALSE,
      "window_size is 75; a band of a 70-token run has a window of 1..69" },
    { "UPDATE attention_bands SET window_size = 70 WHERE layer = 0 AND head = 1", FALSE,
      "window_size is 70; a band of a 70-token run" },
    { "UPDATE attention_bands SET window_size = 'x' WHERE layer = 0 AND head = 1", FALSE,
      "window_size is 'x' (text)" },
    { "UPDATE attention_bands SET data = substr (data, 1, length (data) - 2) WHERE layer = 0 "
      "AND head = 1", FALSE, "data is blob of 1998 bytes; rows 0..70 of a band of window 16 "
      "have 2000" },
    { "UPDATE attention_bands SET data = CAST (X'007C' || substr (data, 3) AS BLOB) WHERE layer = 0 AND "
      "head = 1", FALSE, "value 0 is inf, not a probability in [0, 1] (row 0)" },
    { "UPDATE attention_bands SET data = CAST (substr (data, 1, 1000) || X'00BC' || "
      "substr (data, 1003) AS BLOB) WHERE layer = 0 AND head = 1", FALSE,
      "value 500 is -1, not a probability" },
    { "UPDATE attention_bands SET row0 = 1 WHERE layer = 0 AND head = 1", FALSE,
      "row0 is 1; the head's parts must cover rows 0..70 in order" },
    { "UPDATE attention_bands SET n_query = 71 WHERE layer = 0 AND head = 1", FALSE,
      "n_query is 71, but the run has 70 tokens" },
    { "INSERT INTO attention_bands (run_id, layer, head, row0, row1, n_query, window_size, "
      "dtype, data) SELECT run_id, layer, head, 70, 71, 70, 16, 'f16', X'0000' FROM "
      "attention_bands WHERE layer = 0 AND head = 1", FALSE,
      "has attention_bands rows past its last row" },
    { "UPDATE layer_windows SET layer = 9 WHERE layer = 2", TRUE,
      "layer_windows has a row for layer 9, outside the model's 4 layers" },
    { "UPDATE layer_windows SET size = -3 WHERE layer = 2", TRUE,
      "layer 2 has a window of -3 tokens, not an integer in 1..2147483647" },
    { "INSERT INTO attention_bands (run_id, layer, head, row0, row1, n_query, window_size, "
      "dtype, data) SELECT run_id, layer, head, 0, 70, 70, 16, 'f16', data FROM attention "
      "WHERE layer = 1 AND head = 0", TRUE, "or attention_bands" },
  };
  StoreTmp t;
  ScStore *s;
  g_autofree char *base = NULL;

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  capture (s, 1, 70, 16, 16);
  sc_store_close (s);
  base = g_strdup_printf ("%s.base", t.path);
  {
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true (g_file_get_contents (t.path, &bytes, &len, NULL));
    g_assert_true (g_file_set_contents (base, bytes, (gssize) len, NULL));
  }
  for (gsize k = 0; k < G_N_ELEMENTS (edits); k++)
    {
      g_autofree char *path = g_strdup_printf ("%s.%zu", t.path, k);
      g_autofree char *bytes = NULL, *why = NULL, *before = NULL, *after = NULL;
      ScStoreHead hd = { 0 };
      ScStoreOverview ov = { 0 };
      ScStoreHeadF16 f16 = { 0 };
      ScStoreRunInfo info = { 0 };
      ScError err = { 0 };
      float rows[70 * 70];
      gsize len = 0;
      ScStore *r = NULL;

      g_test_message ("edit %zu: %s", k, edits[k].sql);
      g_assert_true (g_file_get_contents (base, &bytes, &len, NULL));
      g_assert_true (g_file_set_contents (path, bytes, (gssize) len, NULL));
      g_assert_true (hostile_exec (path, edits[k].sql, &why));
      before = store_test_digest (path);
      r = store_test_open (path, FALSE);
      if (edits[k].run_fails)
        {
          g_assert_cmpint (sc_store_get_run (r, 1, &info, &err), ==, SC_ERR_FORMAT);
          store_test_assert_message (&err, edits[k].needle);
        }
      else
        {
          g_assert_cmpint (sc_store_get_run (r, 1, &info, &err), ==, SC_OK);
          sc_store_run_info_clear (&info);
          g_assert_cmpint (sc_store_read_head (r, 1, 0, 1, &hd, &err), ==, SC_ERR_FORMAT);
          store_test_assert_message (&err, edits[k].needle);
          g_assert_null (hd.probs);
          g_assert_cmpint (sc_store_read_head_f16 (r, 1, 0, 1, &f16, &err), ==, SC_ERR_FORMAT);
          g_assert_cmpint (sc_store_read_overview (r, 1, 0, 1, &ov, &err) == SC_OK, ==,
                           strstr (edits[k].needle, "probability") != NULL);
          sc_store_overview_clear (&ov);
          g_assert_cmpint (sc_store_read_head_rows (r, 1, 0, 1, 0, 70, rows, NULL, &err), !=,
                           SC_OK);
          /* the other layers' heads still read */
          g_assert_cmpint (sc_store_read_head (r, 1, 2, 0, &hd, &err), ==, SC_OK);
          sc_store_head_clear (&hd);
          g_assert_cmpint (sc_store_read_head (r, 1, 1, 2, &hd, &err), ==, SC_OK);
          sc_store_head_clear (&hd);
        }
      sc_store_close (r);
      after = store_test_digest (path);
      g_assert_cmpstr (before, ==, after);
      g_remove (path);
    }
  g_remove (base);
  store_tmp_clear (&t);
}

/* A store from before v4 (a v3 file: no layer_windows, no attention_bands) opens read-only
 * as v3 with no windows, and migrates when opened writable, its runs byte for byte; a band
 * run then goes in beside them. */
static void
test_migration (void)
{
  StoreTmp t;
  ScStore *s;
  g_autofree char *why = NULL;
  g_autofree char *digest = NULL;
  ScStoreRunInfo info = { 0 };
  ScError err = { 0 };

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  g_assert_cmpint (store_test_capture (s, 11, 20, TRUE), ==, 1);
  sc_store_close (s);
  g_assert_true (hostile_exec (t.path, STORE_TEST_TO_V3_SQL, &why));
  g_assert_cmpint (store_test_raw_int (t.path, "PRAGMA user_version"), ==, 3);

  digest = store_test_digest (t.path);
  s = store_test_open (t.path, FALSE);
  g_assert_cmpint (sc_store_schema_version (s), ==, 3);
  store_test_assert_run (s, 1);
  g_assert_cmpint (sc_store_get_run (s, 1, &info, &err), ==, SC_OK);
  g_assert_null (info.windows);
  g_assert_cmpuint (sc_store_run_layer_window (&info, 0), ==, 0);
  sc_store_run_info_clear (&info);
  sc_store_close (s);
  {
    g_autofree char *again = store_test_digest (t.path);
    g_assert_cmpstr (digest, ==, again);
  }

  s = store_test_open (t.path, TRUE);
  g_assert_cmpint (sc_store_schema_version (s), ==, SC_STORE_SCHEMA_VERSION);
  store_test_assert_run (s, 1);
  g_assert_cmpint (capture (s, 12, 40, 8, 8), ==, 2);
  assert_run (s, 2, 12, 40, 8, 8, 8);
  store_test_assert_run (s, 1);
  sc_store_close (s);
  g_assert_cmpint (store_test_raw_int (t.path, "PRAGMA user_version"), ==, SC_STORE_SCHEMA_VERSION);
  store_tmp_clear (&t);
}

/* Deleting a band run removes its bands and windows. */
static void
test_delete (void)
{
  StoreTmp t;
  ScStore *s;
  ScError err = { 0 };

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  capture (s, 1, 40, 8, 8);
  capture (s, 2, 40, 8, 8);
  g_assert_cmpint (sc_store_delete_run (s, 1, &err), ==, SC_OK);
  sc_store_close (s);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM attention_bands WHERE "
                                       "run_id = 1"), ==, 0);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM layer_windows WHERE "
                                       "run_id = 1"), ==, 0);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM attention_bands"), ==, 6);
  store_tmp_clear (&t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/store/band/roundtrip", test_roundtrip);
  g_test_add_func ("/store/band/short-and-unwindowed", test_short_and_unwindowed);
  g_test_add_func ("/store/band/blocks", test_blocks);
  g_test_add_func ("/store/band/hostile", test_hostile);
  g_test_add_func ("/store/band/migration", test_migration);
  g_test_add_func ("/store/band/delete", test_delete);
  return g_test_run ();
}
