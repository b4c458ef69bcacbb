/* test-store-z.c — compressed heads (schema v5, attention_z): lossless against the
 * uncompressed path, readable beside it in one store, merged, and refused with a message
 * naming the run, layer and head when someone edited a compressed BLOB; and the rounded
 * form (schema v6): every value within its stated bound of the lossless one.
 *
 * The same fake runs (store-fake.c) are captured twice, by a store writing fp16 BLOBs as
 * before (compress_heads false: the old path) and by one compressing them; every head is
 * then compared fp16 bit for bit, whole and in blocks of rows that cut across the
 * compressed blocks.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/core/sc-math.h"

#include "engine/store/sc-store-heads.h"
#include "engine/store/sc-store-merge.h"
#include "engine/store/sc-store-private.h" /* the rounding the compressor applies */
#include "engine/store/sc-store-scores.h"
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

/* @sql turns the store at @path (run 1 in it) into what an older Saccade wrote: it opens
 * read-only as @version, run 1 reads back exact and not rounded, and no byte changed. */
static void
assert_reads_as_older (const char *path, const char *sql, int version)
{
  g_autofree char *digest = NULL, *again = NULL;
  ScStoreRunInfo info = { 0 };
  ScError err = { 0 };
  ScStore *s;

  store_test_raw_exec (path, sql);
  digest = store_test_digest (path);
  s = store_test_open (path, FALSE);
  g_assert_cmpint (sc_store_schema_version (s), ==, version);
  store_test_assert_run (s, 1);
  g_assert_cmpint (sc_store_get_run (s, 1, &info, &err), ==, SC_OK);
  g_assert_cmpuint (info.round_bits, ==, 0);
  g_assert_cmpfloat (info.zero_below, ==, 0);
  sc_store_run_info_clear (&info);
  sc_store_close (s);
  again = store_test_digest (path);
  g_assert_cmpstr (digest, ==, again);
}

/* A v4 store (what Saccade wrote before v5: the same tables less attention_z) reads as v4
 * read-only, without a change to its bytes, and migrates to the current schema when opened
 * writable, its runs byte for byte; a compressed run then goes in beside them. */
static void
test_v4_migration (void)
{
  StoreTmp t;
  ScStore *s;

  store_tmp_init (&t);
  s = open_store (t.path, FALSE, 0);
  g_assert_cmpint (store_test_capture (s, 21, 100, TRUE), ==, 1);
  sc_store_close (s);
  assert_reads_as_older (t.path, STORE_TEST_TO_V4_SQL, 4);
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

/* Every finite non-negative fp16 rounded to 1..9 bits: the nearest value with that many
 * bits after its leading one, ties to even, computed here another way (frexp, nearbyint in
 * double); the relative bound holds; the threshold zeroes exactly the values below it. */
static void
test_round_values (void)
{
  for (uint32_t bits = 1; bits <= SC_STORE_ROUND_BITS_MAX; bits++)
    {
      const ScStoreZRound r = sc_store_z_round (bits, 0);
      const double bound = sc_store_round_relative_error (bits);
      g_assert_cmpfloat (bound, ==, ldexp (1.0, -(int) bits - 1));
      for (uint32_t h = 0; h < 0x7c00u; h++)
        {
          const double v = sc_fp16_to_fp32 ((uint16_t) h);
          const uint16_t got = sc_store_z_round_value (r, (uint16_t) h);
          const double g = sc_fp16_to_fp32 (got);
          double want = 0;
          if (v > 0)
            {
              int e;
              (void) frexp (v, &e); /* v = m 2^e, m in [0.5, 1): the leading one is 2^(e-1) */
              const double unit = ldexp (1.0, e - 1 - (int) bits);
              want = nearbyint (v / unit) * unit;
            }
          if (want > 65504.0)
            {
              /* past fp16's largest: kept as it was (a probability never gets there) */
              g_assert_cmpuint (got, ==, h);
              continue;
            }
          if (g != want)
            g_error ("%u bits: fp16 0x%04x (%g) rounded to %g, not %g", bits, h, v, g, want);
          g_assert_cmpfloat (fabs (g - v), <=, bound * v);
          /* the sign passes through */
          g_assert_cmpuint (sc_store_z_round_value (r, (uint16_t) (h | 0x8000u)), ==,
                            got | 0x8000u);
        }
      /* infinities and NaN pass unchanged (the reader refuses them) */
      g_assert_cmpuint (sc_store_z_round_value (r, 0x7c00u), ==, 0x7c00u);
      g_assert_cmpuint (sc_store_z_round_value (r, 0x7e01u), ==, 0x7e01u);
    }
  {
    const double zero_below = 1e-3;
    const ScStoreZRound r = sc_store_z_round (0, zero_below);
    for (uint32_t h = 0; h < 0x7c00u; h++)
      {
        const double v = sc_fp16_to_fp32 ((uint16_t) h);
        const uint16_t got = sc_store_z_round_value (r, (uint16_t) h);
        g_assert_cmpuint (got, ==, v < zero_below ? 0u : h);
      }
  }
}

/* Captures @n tokens twice, lossless and rounded (@bits, @zero_below), into two compressing
 * stores; every value of every head within the bound of its lossless twin, the statistics
 * and overviews the same (they are of the values before rounding), fewer bytes, the form
 * read back from the run; a merge keeps it. */
static void
check_rounded (guint32 bits, double zero_below, int n, gboolean causal, guint64 max_blob)
{
  StoreTmp ta, tb, tm;
  ScStore *exact, *rounded, *merged;
  ScError err = { 0 };
  const double bound = sc_store_round_relative_error (bits);
  StoreFakeRun run = { .seed = 77, .n = n, .causal = causal };
  ScStoreRunInfo info = { 0 };
  gint64 a, b;
  gsize changed = 0, zeroed = 0, total = 0;

  store_tmp_init (&ta);
  store_tmp_init (&tb);
  store_tmp_init (&tm);
  exact = open_store (ta.path, TRUE, max_blob);
  rounded = open_store (tb.path, TRUE, max_blob);
  if ((a = store_fake_capture_run (exact, &run, 0, &err)) < 0)
    g_error ("%s", err.message);
  run.round_bits = bits;
  run.zero_below = zero_below;
  if ((b = store_fake_capture_run (rounded, &run, 0, &err)) < 0)
    g_error ("%s", err.message);
  g_assert_cmpint (sc_store_get_run (rounded, b, &info, &err), ==, SC_OK);
  g_assert_cmpuint (info.round_bits, ==, bits);
  g_assert_cmpfloat (info.zero_below, ==, zero_below);
  sc_store_run_info_clear (&info);
  for (int l = 0; l < STORE_FAKE_LAYERS; l++)
    for (int h = 0; h < STORE_FAKE_HEADS; h++)
      {
        ScStoreHeadF16 x = { 0 }, y = { 0 };
        ScStoreOverview ox = { 0 }, oy = { 0 };
        g_assert_cmpint (sc_store_read_head_f16 (exact, a, l, h, &x, &err), ==, SC_OK);
        g_assert_cmpint (sc_store_read_head_f16 (rounded, b, l, h, &y, &err), ==, SC_OK);
        g_assert_cmpuint (x.n_values, ==, y.n_values);
        for (gsize i = 0; i < x.n_values; i++)
          {
            const uint16_t hx = x.values[i], hy = y.values[i];
            const double v = sc_fp16_to_fp32 (hx), g = sc_fp16_to_fp32 (hy);
            if (v < zero_below)
              {
                g_assert_cmpfloat (g, ==, 0.0);
                zeroed += v > 0;
              }
            else if (fabs (g - v) > bound * v)
              g_error ("layer %d head %d value %zu: %g stored as %g, more than %g of it away",
                       l, h, i, v, g, bound);
            changed += hx != hy;
          }
        total += x.n_values;
        sc_store_head_f16_clear (&x);
        sc_store_head_f16_clear (&y);
        g_assert_cmpint (sc_store_read_overview (exact, a, l, h, &ox, &err), ==, SC_OK);
        g_assert_cmpint (sc_store_read_overview (rounded, b, l, h, &oy, &err), ==, SC_OK);
        g_assert_cmpmem (ox.values, (gsize) ox.size * ox.size * sizeof (float), oy.values,
                         (gsize) oy.size * oy.size * sizeof (float));
        sc_store_overview_clear (&ox);
        sc_store_overview_clear (&oy);
      }
  /* the form did something, and what it did is smaller */
  g_assert_cmpuint (changed, >, total / 10);
  if (zero_below > 0)
    g_assert_cmpuint (zeroed, >, 0);
  {
    ScStoreHeadScores sx = { 0 }, sy = { 0 };
    g_assert_cmpint (sc_store_read_head_scores (exact, a, &sx, &err), ==, SC_OK);
    g_assert_cmpint (sc_store_read_head_scores (rounded, b, &sy, &err), ==, SC_OK);
    g_assert_false (sy.computed);
    g_assert_cmpmem (sx.stats, STORE_FAKE_LAYERS * STORE_FAKE_HEADS * sizeof *sx.stats,
                     sy.stats, STORE_FAKE_LAYERS * STORE_FAKE_HEADS * sizeof *sy.stats);
    sc_store_head_scores_clear (&sx);
    sc_store_head_scores_clear (&sy);
  }
  sc_store_close (exact);
  sc_store_close (rounded);
  g_assert_cmpint (store_test_raw_int (tb.path, "SELECT attention_bytes FROM runs"), <,
                   store_test_raw_int (ta.path, "SELECT attention_bytes FROM runs"));
  /* a merge carries the form with the values */
  {
    const char *inputs[] = { tb.path };
    if (sc_store_merge (tm.path, inputs, 1, NULL, NULL, NULL, &err) != SC_OK)
      g_error ("merging: %s", err.message);
  }
  merged = store_test_open (tm.path, FALSE);
  rounded = store_test_open (tb.path, FALSE);
  store_test_assert_same_run (rounded, b, merged, 1);
  sc_store_close (rounded);
  sc_store_close (merged);
  store_tmp_clear (&ta);
  store_tmp_clear (&tb);
  store_tmp_clear (&tm);
}

static void
test_rounded (void)
{
  check_rounded (4, 0, 200, TRUE, 0);
  check_rounded (0, 1e-3, 130, FALSE, 0);
  check_rounded (2, 6.103515625e-05, 400, TRUE, 65536); /* several attention_z rows a head */
  check_rounded (SC_STORE_ROUND_BITS_MAX, 0, 100, TRUE, 0);
}

/* What cannot be rounded is refused before anything is stored, naming why. */
static void
test_rounded_refused (void)
{
  static const struct { gboolean compress; guint32 bits; double zero, eps; const char *needle; } cases[] = {
    { FALSE, 4, 0, 0, "opened without compression" },
    { FALSE, 0, 1e-4, 0, "opened without compression" },
    { TRUE, 10, 0, 0, "between 1 and 9" },
    { TRUE, 0, 1.0, 0, "between 0 and 1" },
    { TRUE, 0, -1e-3, 0, "between 0 and 1" },
    { TRUE, 0, NAN, 0, "between 0 and 1" },
    { TRUE, 4, 0, 1e-3, "sparse form cannot be rounded" },
  };

  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      StoreTmp t;
      ScStore *s;
      ScError err = { 0 };
      StoreFakeRun run = { .seed = 5, .n = 80, .causal = TRUE, .sparse_eps = cases[c].eps,
                           .round_bits = cases[c].bits, .zero_below = cases[c].zero };
      store_tmp_init (&t);
      s = open_store (t.path, cases[c].compress, 0);
      g_assert_cmpint (store_fake_capture_run (s, &run, 0, &err), ==, -1);
      g_assert_cmpint (err.status, ==, SC_ERR_INVALID_ARG);
      store_test_assert_message (&err, cases[c].needle);
      sc_error_clear (&err);
      /* nothing was stored; a run that says no rounding still goes in */
      run.round_bits = 0;
      run.zero_below = 0;
      run.sparse_eps = 0;
      g_assert_cmpint (store_fake_capture_run (s, &run, 0, &err), ==, 1);
      sc_store_close (s);
      store_tmp_clear (&t);
    }
}

/* A v5 store (v6 less the two runs columns) reads as v5 without a change, and migrates to
 * v6 when opened writable; its runs read as not rounded. */
static void
test_v5_migration (void)
{
  StoreTmp t;
  ScStore *s;

  store_tmp_init (&t);
  s = open_store (t.path, TRUE, 0);
  g_assert_cmpint (store_test_capture (s, 8, 100, TRUE), ==, 1);
  sc_store_close (s);
  assert_reads_as_older (t.path, STORE_TEST_TO_V5_SQL, 5);
  s = open_store (t.path, TRUE, 0);
  g_assert_cmpint (sc_store_schema_version (s), ==, SC_STORE_SCHEMA_VERSION);
  store_test_assert_run (s, 1);
  sc_store_close (s);
  store_tmp_clear (&t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/store/z/lossless", test_lossless);
  g_test_add_func ("/store/z/old-beside-new", test_old_beside_new);
  g_test_add_func ("/store/z/v4-migration", test_v4_migration);
  g_test_add_func ("/store/z/hostile", test_hostile);
  g_test_add_func ("/store/z/round-values", test_round_values);
  g_test_add_func ("/store/z/rounded", test_rounded);
  g_test_add_func ("/store/z/rounded-refused", test_rounded_refused);
  g_test_add_func ("/store/z/v5-migration", test_v5_migration);
  return g_test_run ();
}
