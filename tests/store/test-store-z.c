/* test-store-z.c — compressed heads (schema v5, attention_z): lossless against the
 * uncompressed path, readable beside it in one store, merged, and refused with a message
 * naming the run, layer and head when someone edited a compressed BLOB.
 *
 * The same fake runs (store-fake.c) are captured twice, by a store writing fp16 BLOBs as
 * before (compress_heads false: the old path) and by one compressing them; every head is
 * then compared fp16 bit for bit, whole and in blocks of rows that cut across the
 * compressed blocks.
 */
#include <glib.h>
#include <string.h>

#include "engine/store/sc-store-heads.h"
#include "engine/store/sc-store-merge.h"
#include "engine/store/sc-store.h"
#include "store-fake.h"

static ScStore *
open_store (const char *path, gboolean compress, guint64 max_blob)
{
  ScStoreOptions opt = { .writable = TRUE, .compress_heads = compress, .max_blob_bytes = max_blob };
  ScError err = { 0 };
  ScStore *s = NULL;

  if (sc_store_open (path, &opt, &s, &err) != SC_OK)
    g_error ("opening %s: %s", path, err.message);
  return s;
}

/* Every head of run @a in @sa and run @b in @sb: the same fp16 bits, whole, and rows in
 * blocks of 37 (which cut the 64-row compressed blocks anywhere) as floats. */
static void
assert_runs_identical (ScStore *sa, gint64 a, ScStore *sb, gint64 b, int n)
{
  ScError err = { 0 };

  for (int l = 0; l < STORE_FAKE_LAYERS; l++)
    for (int h = 0; h < STORE_FAKE_HEADS; h++)
      {
        ScStoreHeadF16 x = { 0 }, y = { 0 };
        g_assert_cmpint (sc_store_read_head_f16 (sa, a, l, h, &x, &err), ==, SC_OK);
        g_assert_cmpint (sc_store_read_head_f16 (sb, b, l, h, &y, &err), ==, SC_OK);
        g_assert_cmpuint (x.n_values, ==, y.n_values);
        g_assert_cmpint (x.causal, ==, y.causal);
        g_assert_cmpmem (x.values, x.n_values * 2, y.values, y.n_values * 2);
        sc_store_head_f16_clear (&x);
        sc_store_head_f16_clear (&y);
        for (int q0 = 0; q0 < n; q0 += 37)
          {
            const int q1 = MIN (n, q0 + 37);
            g_autofree float *ra = g_new (float, (gsize) (q1 - q0) * n);
            g_autofree float *rb = g_new (float, (gsize) (q1 - q0) * n);
            g_assert_cmpint (sc_store_read_head_rows (sa, a, l, h, q0, q1, ra, NULL, &err), ==, SC_OK);
            g_assert_cmpint (sc_store_read_head_rows (sb, b, l, h, q0, q1, rb, NULL, &err), ==, SC_OK);
            g_assert_cmpmem (ra, (gsize) (q1 - q0) * n * sizeof *ra, rb,
                             (gsize) (q1 - q0) * n * sizeof *rb);
          }
      }
}

/* Causal and full runs, whole heads and (under a 64 KiB BLOB limit) heads in several
 * attention_z rows: identical to the old path, smaller, and exact (store_fake_verify). */
static void
test_lossless (void)
{
  static const struct { int n; gboolean causal; guint64 max_blob; } cases[] = {
    { 1, TRUE, 0 }, { 2, FALSE, 0 }, { 63, TRUE, 0 }, { 200, TRUE, 0 }, { 130, FALSE, 0 }, { 400, TRUE, 65536 },
    { 250, FALSE, 65536 },
  };

  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      StoreTmp ta, tb;
      ScStore *raw, *z;
      gint64 a, b;
      store_tmp_init (&ta);
      store_tmp_init (&tb);
      raw = open_store (ta.path, FALSE, cases[c].max_blob);
      z = open_store (tb.path, TRUE, cases[c].max_blob);
      a = store_test_capture (raw, 40 + c, cases[c].n, cases[c].causal);
      b = store_test_capture (z, 40 + c, cases[c].n, cases[c].causal);
      store_test_assert_run (z, b);
      assert_runs_identical (raw, a, z, b, cases[c].n);
      sc_store_close (raw);
      sc_store_close (z);
      if (cases[c].n < 63)
        {
          /* a head of a few tokens does not compress below its fp16 BLOB: stored as one */
          g_assert_cmpint (store_test_raw_int (tb.path, "SELECT count(*) FROM attention_z"), ==, 0);
          g_assert_cmpint (store_test_raw_int (tb.path, "SELECT count(*) FROM attention"), ==,
                           STORE_FAKE_LAYERS * STORE_FAKE_HEADS);
          store_tmp_clear (&ta);
          store_tmp_clear (&tb);
          continue;
        }
      /* the compressed store holds its heads in attention_z only, and fewer bytes */
      g_assert_cmpint (store_test_raw_int (tb.path, "SELECT count(*) FROM attention"), ==, 0);
      g_assert_cmpint (store_test_raw_int (tb.path, "SELECT count(*) FROM attention_parts"), ==, 0);
      g_assert_cmpint (store_test_raw_int (tb.path, "SELECT count(DISTINCT layer * 100 + head) "
                                                    "FROM attention_z"), ==,
                       STORE_FAKE_LAYERS * STORE_FAKE_HEADS);
      if (cases[c].max_blob > 0)
        g_assert_cmpint (store_test_raw_int (tb.path, "SELECT max(c) FROM (SELECT count(*) AS c "
                                                      "FROM attention_z GROUP BY layer, head)"),
                         >, 1);
      g_assert_cmpint (store_test_raw_int (tb.path, "SELECT attention_bytes FROM runs"), <,
                       store_test_raw_int (ta.path, "SELECT attention_bytes FROM runs"));
      store_tmp_clear (&ta);
      store_tmp_clear (&tb);
    }
}

/* A store written by the old path (fp16 BLOBs), opened by a compressing store: its runs
 * read back unchanged beside a new compressed run, and both merge into a third store. */
static void
test_old_beside_new (void)
{
  StoreTmp t, m;
  ScStore *s;
  ScError err = { 0 };
  gint64 old_id, new_id;
  const char *in[1];

  store_tmp_init (&t);
  store_tmp_init (&m);
  s = open_store (t.path, FALSE, 0);
  old_id = store_test_capture (s, 7, 150, TRUE);
  sc_store_close (s);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM attention"), ==,
                   STORE_FAKE_LAYERS * STORE_FAKE_HEADS);
  s = open_store (t.path, TRUE, 0);
  new_id = store_test_capture (s, 7, 150, TRUE);
  store_test_assert_run (s, old_id);
  store_test_assert_run (s, new_id);
  assert_runs_identical (s, old_id, s, new_id, 150);
  sc_store_close (s);

  in[0] = t.path;
  g_assert_cmpint (sc_store_merge (m.path, in, 1, NULL, NULL, NULL, &err), ==, SC_OK);
  s = store_test_open (m.path, FALSE);
  store_test_assert_run (s, 1);
  store_test_assert_run (s, 2);
  assert_runs_identical (s, 1, s, 2, 150);
  sc_store_close (s);
  g_assert_cmpint (store_test_raw_int (m.path, "SELECT count(*) FROM attention_z"), >, 0);
  store_tmp_clear (&t);
  store_tmp_clear (&m);
}

/* A v4 store (what Saccade wrote before v5: the same tables less attention_z) reads as v4
 * read-only, without a change to its bytes, and migrates to v5 when opened writable, its
 * runs byte for byte; a compressed run then goes in beside them. */
static void
test_v4_migration (void)
{
  StoreTmp t;
  ScStore *s;
  g_autofree char *why = NULL, *digest = NULL, *again = NULL;

  store_tmp_init (&t);
  s = open_store (t.path, FALSE, 0);
  g_assert_cmpint (store_test_capture (s, 21, 100, TRUE), ==, 1);
  sc_store_close (s);
  store_test_raw_exec (t.path, STORE_TEST_TO_V4_SQL);
  digest = store_test_digest (t.path);
  s = store_test_open (t.path, FALSE);
  g_assert_cmpint (sc_store_schema_version (s), ==, 4);
  store_test_assert_run (s, 1);
  sc_store_close (s);
  again = store_test_digest (t.path);
  g_assert_cmpstr (digest, ==, again);
  s = open_store (t.path, TRUE, 0);
  g_assert_cmpint (sc_store_schema_version (s), ==, SC_STORE_SCHEMA_VERSION);
  store_test_assert_run (s, 1);
  g_assert_cmpint (store_test_capture (s, 21, 100, TRUE), ==, 2);
  sc_store_close (s);
  s = store_test_open (t.path, FALSE);
  assert_runs_identical (s, 1, s, 2, 100);
  sc_store_close (s);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM attention"), ==,
                   STORE_FAKE_LAYERS * STORE_FAKE_HEADS);
  store_tmp_clear (&t);
}

/* Someone edited a compressed head. Each edit: reading the head fails with SC_ERR_FORMAT
 * and a message naming the run, the layer and head and the attention_z row; nothing
 * crashes; the other heads still read. */
static void
test_hostile (void)
{
  static const struct { const char *what, *sql, *needle; } edits[] = {
    { "data cut in half", "UPDATE attention_z SET data = substr (data, 1, length (data) / 2) "
      "WHERE id = (SELECT min (id) FROM attention_z)", "block" },
    { "bytes in a frame changed", "UPDATE attention_z SET data = CAST (substr (data, 1, 40) || "
      "randomblob (16) || substr (data, 57) AS BLOB) WHERE id = (SELECT min (id) FROM attention_z)",
      "does not decompress" },
    { "data emptied", "UPDATE attention_z SET data = zeroblob (0) "
      "WHERE id = (SELECT min (id) FROM attention_z)", "block 0" },
    { "offsets zeroed", "UPDATE attention_z SET blocks = zeroblob (length (blocks)) "
      "WHERE id = (SELECT min (id) FROM attention_z)", "does not decompress" },
    { "offsets random", "UPDATE attention_z SET blocks = randomblob (length (blocks)) "
      "WHERE id = (SELECT min (id) FROM attention_z)", "block" },
    { "offsets swapped", "UPDATE attention_z SET blocks = CAST (substr (blocks, 9, 8) || "
      "substr (blocks, 1, 8) || substr (blocks, 17) AS BLOB) WHERE id = (SELECT min (id) FROM attention_z)",
      "block" },
    { "block_rows changed", "PRAGMA ignore_check_constraints = 1; UPDATE attention_z SET "
      "block_rows = 7 WHERE id = (SELECT min (id) FROM attention_z)", "blocks is not a BLOB" },
    { "block_rows zero", "PRAGMA ignore_check_constraints = 1; UPDATE attention_z SET "
      "block_rows = 0 WHERE id = (SELECT min (id) FROM attention_z)", "block_rows is 0" },
    { "n_key changed", "PRAGMA ignore_check_constraints = 1; UPDATE attention_z SET "
      "n_key = 7 WHERE id = (SELECT min (id) FROM attention_z)", "n_key is 7" },
    { "rows past the head", "PRAGMA ignore_check_constraints = 1; UPDATE attention_z SET "
      "row1 = 900 WHERE id = (SELECT min (id) FROM attention_z)", "row1 is 900" },
    { "codec unknown", "PRAGMA ignore_check_constraints = 1; UPDATE attention_z SET "
      "codec = 'lz4' WHERE id = (SELECT min (id) FROM attention_z)", "codec 'lz4'" },
  };

  for (gsize e = 0; e < G_N_ELEMENTS (edits); e++)
    {
      StoreTmp t;
      ScStore *s;
      ScError err = { 0 };
      ScStoreHead head = { 0 };
      gint64 id;
      g_autofree float *rows = g_new (float, 200 * 10);
      ScStatus st;

      store_tmp_init (&t);
      s = open_store (t.path, TRUE, 0);
      id = store_test_capture (s, 3, 200, TRUE);
      sc_store_close (s);
      store_test_raw_exec (t.path, edits[e].sql);
      s = store_test_open (t.path, FALSE);
      st = sc_store_read_head (s, id, 0, 0, &head, &err);
      if (st == SC_OK)
        g_error ("%s: read the edited head", edits[e].what);
      g_assert_cmpint (st, ==, strcmp (edits[e].what, "codec unknown") == 0 ? SC_ERR_UNSUPPORTED
                                                                             : SC_ERR_FORMAT);
      store_test_assert_message (&err, edits[e].needle);
      store_test_assert_message (&err, "layer 0 head 0");
      store_test_assert_message (&err, "run 1");
      store_test_assert_message (&err, "attention_z row");
      sc_error_clear (&err);
      /* rows of a block that the edit may not have touched still read or fail cleanly;
       * another head reads */
      st = sc_store_read_head_rows (s, id, 0, 0, 190, 200, rows, NULL, &err);
      g_assert_true (st == SC_OK || st == SC_ERR_FORMAT || st == SC_ERR_UNSUPPORTED);
      sc_error_clear (&err);
      g_assert_cmpint (sc_store_read_head (s, id, 1, 2, &head, &err), ==, SC_OK);
      sc_store_head_clear (&head);
      sc_store_close (s);
      store_tmp_clear (&t);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/store/z/lossless", test_lossless);
  g_test_add_func ("/store/z/old-beside-new", test_old_beside_new);
  g_test_add_func ("/store/z/v4-migration", test_v4_migration);
  g_test_add_func ("/store/z/hostile", test_hostile);
  return g_test_run ();
}
