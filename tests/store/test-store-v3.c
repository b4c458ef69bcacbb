/* test-store-v3.c — schema v3 of the capture store: overview images, reading rows and
 * fp16 heads, runs of chosen heads, the sparse form, row blocks, and the size estimate.
 *
 * Every expected value is computed here from the generated probabilities (store-fake.c)
 * or from sc_store_read_head, which test-store.c checks against them: an overview cell by
 * brute force over its block, a sparse row's kept keys by sorting the row, a split head
 * against the same run stored whole.
 */
#include <glib.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "core/sc-math.h"
#include "engine/store/sc-store-heads.h"
#include "engine/store/sc-store-private.h"
#include "engine/store/sc-store-scores.h"
#include "engine/store/sc-store.h"
#include "hostile-stores.h"
#include "store-fake.h"

/* A peaked head: weights exp (-80 u) for u uniform, about 1 key in 8 an exact zero, the
 * diagonal never. With EPS 1e-3 a row keeps ~9 % of its keys: the sparse form is smaller
 * than the dense one (store-fake's heads, exp (-18 u), keep ~40 % and stay dense). */
static float *
peaked_head (guint64 seed, int layer, int head, int n)
{
  GRand *r = g_rand_new_with_seed ((guint32) (seed * 7919u + (guint64) layer * 31u + head));
  float *p = g_new0 (float, (gsize) n * n);

  for (int i = 0; i < n; i++)
    {
      float *row = p + (gsize) i * n;
      double z = 0;
      for (int j = 0; j <= i; j++)
        {
          double w = g_rand_double (r) < 0.125 && j != i ? 0.0
                                                         : exp (-80.0 * g_rand_double (r));
          row[j] = (float) w;
          z += w;
        }
      for (int j = 0; j <= i; j++)
        row[j] = (float) (row[j] / z);
    }
  g_rand_free (r);
  return p;
}

typedef float *(*HeadFn) (guint64 seed, int layer, int head, int n);

static float *
fake_causal (guint64 seed, int layer, int head, int n)
{
  return store_fake_head (seed, layer, head, n, TRUE);
}

static float *
fake_full (guint64 seed, int layer, int head, int n)
{
  return store_fake_head (seed, layer, head, n, FALSE);
}

/* Captures run @seed of @n tokens with heads from @fn, keeping the heads where @keep is
 * nonzero (NULL: all), sparse with @eps (0: dense). Returns the run id. */
static gint64
capture (ScStore *s, guint64 seed, int n, HeadFn fn, const guint8 *keep, double eps)
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
  text = store_fake_text (seed, n, TRUE, &text_len);
  desc = (ScStoreRunDesc) { &model, text, text_len, tokens, (size_t) n, "fake", keep, eps };
  if (sc_store_capture_begin (s, &desc, &cap, &err) != SC_OK)
    g_error ("capture_begin: %s", err.message);
  for (int l = 0; l < STORE_FAKE_LAYERS; l++)
    for (int h = 0; h < STORE_FAKE_HEADS; h++)
      {
        g_autofree float *p = fn (seed, l, h, n);
        if (sc_store_capture_add_head (cap, l, h, p, n, n, &err) != SC_OK)
          g_error ("add_head: %s", err.message);
      }
  if (sc_store_capture_commit (cap, -1, &id, &err) != SC_OK)
    g_error ("commit: %s", err.message);
  return id;
}

static ScStoreHead
read_head (ScStore *s, gint64 run, int l, int h)
{
  ScStoreHead hd = { 0 };
  ScError err = { 0 };

  if (sc_store_read_head (s, run, l, h, &hd, &err) != SC_OK)
    g_error ("read_head %d.%d: %s", l, h, err.message);
  return hd;
}

/* ------------------------------------------------------------------------------------ */
/* Overviews                                                                             */

/* Asserts @ov is the block maxima of @hd. */
static void
assert_overview_of (const ScStoreOverview *ov, const ScStoreHead *hd)
{
  const guint32 n = hd->n_query;
  const guint32 size = sc_store_overview_size (n);
  const guint32 blk = (n + SC_STORE_OVERVIEW_MAX - 1) / SC_STORE_OVERVIEW_MAX;

  /* uniform blocks of ceil (n / 64) tokens, ceil (n / block) of them */
  g_assert_cmpuint (size, ==, (n + blk - 1) / blk);
  g_assert_cmpuint (size, <=, SC_STORE_OVERVIEW_MAX);
  g_assert_cmpuint (ov->size, ==, size);
  g_assert_cmpuint (ov->n_tokens, ==, n);
  g_assert_cmpint (ov->causal, ==, hd->causal);
  for (guint32 a = 0; a < size; a++)
    for (guint32 b = 0; b < size; b++)
      {
        const guint32 r0 = MIN (n, a * blk), r1 = MIN (n, (a + 1) * blk);
        const guint32 k0 = MIN (n, b * blk), k1 = MIN (n, (b + 1) * blk);
        float want = 0;

        g_assert_cmpuint (sc_store_overview_start (n, size, a), ==, r0);
        for (guint32 i = r0; i < r1; i++)
          for (guint32 j = k0; j < k1; j++)
            want = MAX (want, hd->probs[(gsize) i * n + j]);
        g_assert_cmpfloat (ov->values[(gsize) a * size + b], ==, want);
        /* the documented rule: wholly above the diagonal exactly when b > a */
        g_assert_cmpint (sc_store_overview_masked (ov, a, b), ==, hd->causal && k0 >= r1);
        if (sc_store_overview_masked (ov, a, b))
          g_assert_cmpfloat (want, ==, 0.0f);
      }
}

static void
check_overviews (ScStore *s, gint64 run, gboolean expect_computed)
{
  for (int l = 0; l < STORE_FAKE_LAYERS; l++)
    for (int h = 0; h < STORE_FAKE_HEADS; h++)
      {
        ScStoreHead hd = read_head (s, run, l, h);
        ScStoreOverview ov = { 0 };
        ScError err = { 0 };

        g_assert_cmpint (sc_store_read_overview (s, run, l, h, &ov, &err), ==, SC_OK);
        g_assert_cmpint (ov.computed, ==, expect_computed);
        assert_overview_of (&ov, &hd);
        sc_store_overview_clear (&ov);
        sc_store_head_clear (&hd);
      }
}

static void
test_overview_matches_head (void)
{
  StoreTmp t;
  ScStore *s;
  gint64 small, big, full;

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  small = capture (s, 1, 50, fake_causal, NULL, 0);  /* S = n = 50 */
  big = capture (s, 2, 300, fake_causal, NULL, 0);   /* S = 128, blocks of 2 and 3 */
  full = capture (s, 3, 40, fake_full, NULL, 0);     /* nothing masked */
  check_overviews (s, small, FALSE);
  check_overviews (s, big, FALSE);
  check_overviews (s, full, FALSE);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM head_overviews"), ==,
                   3 * STORE_FAKE_LAYERS * STORE_FAKE_HEADS);
  sc_store_close (s);
  store_tmp_clear (&t);
}

/* A run stored before v3 (a v2 store) has no overviews: read-only, they are computed and
 * not stored, and not a byte of the file changes; writable, the store migrates to v3 in
 * one step and they are computed once, then stored. */
static void
test_overview_before_v3 (void)
{
  g_autofree char *why = NULL, *digest = NULL, *digest2 = NULL;
  StoreTmp t;
  ScStore *s;
  ScStoreOverview ov = { 0 };
  ScError err = { 0 };
  gint64 run;

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  run = capture (s, 4, 130, fake_causal, NULL, 0);
  sc_store_close (s);
  g_assert_true (hostile_exec (t.path, STORE_TEST_TO_V2_SQL, &why));
  digest = store_test_digest (t.path);

  s = store_test_open (t.path, FALSE);
  g_assert_cmpint (sc_store_schema_version (s), ==, 2);
  check_overviews (s, run, TRUE);
  g_assert_cmpint (sc_store_read_overview (s, run, 1, 1, &ov, &err), ==, SC_OK);
  g_assert_false (ov.stored);
  sc_store_overview_clear (&ov);
  store_test_assert_run (s, run); /* a v2 run reads as before */
  sc_store_close (s);
  digest2 = store_test_digest (t.path);
  g_assert_cmpstr (digest, ==, digest2);

  s = store_test_open (t.path, TRUE);
  g_assert_cmpint (sc_store_schema_version (s), ==, SC_STORE_SCHEMA_VERSION);
  store_test_assert_run (s, run);
  g_assert_cmpint (sc_store_read_overview (s, run, 1, 1, &ov, &err), ==, SC_OK);
  g_assert_true (ov.computed);
  g_assert_true (ov.stored);
  sc_store_overview_clear (&ov);
  sc_store_close (s);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM head_overviews"), ==, 1);
  s = store_test_open (t.path, FALSE);
  g_assert_cmpint (sc_store_read_overview (s, run, 1, 1, &ov, &err), ==, SC_OK);
  g_assert_false (ov.computed);
  sc_store_overview_clear (&ov);
  sc_store_close (s);
  store_tmp_clear (&t);
}

/* ------------------------------------------------------------------------------------ */
/* Rows and fp16                                                                         */

/* Every way of reading (rows in blocks, fp16) against sc_store_read_head, on every head. */
static void
check_readers (ScStore *s, gint64 run)
{
  for (int l = 0; l < STORE_FAKE_LAYERS; l++)
    for (int h = 0; h < STORE_FAKE_HEADS; h++)
      {
        ScStoreHead hd = read_head (s, run, l, h);
        ScStoreHeadF16 f = { 0 };
        ScError err = { 0 };
        const guint32 n = hd.n_query;
        const guint32 blocks[][2] = { { 0, n }, { 0, 1 }, { n - 1, n }, { n / 3, n / 2 + 1 },
                                      { 1, n } };
        gsize k = 0;

        g_assert_cmpint (sc_store_read_head_f16 (s, run, l, h, &f, &err), ==, SC_OK);
        g_assert_cmpint (f.causal, ==, hd.causal);
        g_assert_cmpint (f.sparse, ==, hd.dropped != NULL);
        g_assert_cmpuint (f.n_values, ==, hd.causal ? (gsize) n * (n + 1) / 2 : (gsize) n * n);
        for (guint32 i = 0; i < n; i++)
          for (guint32 j = 0; j < (hd.causal ? i + 1 : n); j++)
            g_assert_cmpfloat (sc_fp16_to_fp32 (f.values[k++]), ==, hd.probs[(gsize) i * n + j]);
        sc_store_head_f16_clear (&f);

        for (gsize b = 0; b < G_N_ELEMENTS (blocks); b++)
          {
            const guint32 q0 = blocks[b][0], q1 = blocks[b][1];
            if (q0 >= q1)
              continue; /* a one-token run has one block */
            g_autofree float *rows = g_new (float, (gsize) (q1 - q0) * n);
            g_autofree float *dropped = g_new (float, q1 - q0);

            g_assert_cmpint (sc_store_read_head_rows (s, run, l, h, q0, q1, rows, dropped, &err),
                             ==, SC_OK);
            g_assert_cmpmem (rows, (gsize) (q1 - q0) * n * sizeof (float),
                             hd.probs + (gsize) q0 * n, (gsize) (q1 - q0) * n * sizeof (float));
            for (guint32 i = q0; i < q1; i++)
              g_assert_cmpfloat (dropped[i - q0], ==, hd.dropped != NULL ? hd.dropped[i] : 0.0f);
          }
        {
          float one;
          g_assert_cmpint (sc_store_read_head_rows (s, run, l, h, 2, 2, &one, NULL, &err), ==,
                           SC_ERR_INVALID_ARG);
          g_assert_cmpint (sc_store_read_head_rows (s, run, l, h, 0, n + 1, &one, NULL, &err), ==,
                           SC_ERR_INVALID_ARG);
          store_test_assert_message (&err, "tokens; rows 0..");
        }
        sc_store_head_clear (&hd);
      }
}

static void
test_rows_and_f16 (void)
{
  StoreTmp t;
  ScStore *s;

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  check_readers (s, capture (s, 5, 37, fake_causal, NULL, 0));
  check_readers (s, capture (s, 6, 23, fake_full, NULL, 0));
  check_readers (s, capture (s, 7, 1, fake_causal, NULL, 0));
  check_readers (s, capture (s, 8, 90, peaked_head, NULL, 1e-3));
  sc_store_close (s);
  store_tmp_clear (&t);
}

/* Reading a row reads the pages that hold it, not the head: a 1,000-token head is 1 MB, 16
 * overflow pages of 64 KiB; its last row costs a pointer-map page and the page(s) the row
 * lies on (SQLite's page-cache misses on a fresh connection, after the run's own rows were
 * read once for another head). */
static void
test_rows_read_their_pages (void)
{
  const guint32 n = 1000;
  g_autofree float *rows = g_new (float, (gsize) n * 2);
  ScStoreHead hd = { 0 };
  ScError err = { 0 };
  StoreTmp t;
  ScStore *s;
  int miss = 0, hi = 0;

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  capture (s, 50, (int) n, fake_causal, NULL, 0);
  sc_store_close (s);
  s = store_test_open (t.path, FALSE);
  g_assert_cmpint (sc_store_read_head_rows (s, 1, 0, 0, n - 1, n, rows, NULL, &err), ==, SC_OK);
  sqlite3_db_status (s->db, SQLITE_DBSTATUS_CACHE_MISS, &miss, &hi, 1);
  g_assert_cmpint (sc_store_read_head_rows (s, 1, 2, 1, n - 2, n, rows, NULL, &err), ==, SC_OK);
  sqlite3_db_status (s->db, SQLITE_DBSTATUS_CACHE_MISS, &miss, &hi, 1);
  g_test_message ("the last 2 rows of a %u-token head: %d page reads", n, miss);
  g_assert_cmpint (miss, <=, 4);
  hd = read_head (s, 1, 3, 2);
  sqlite3_db_status (s->db, SQLITE_DBSTATUS_CACHE_MISS, &miss, &hi, 1);
  g_test_message ("the whole head: %d page reads", miss);
  g_assert_cmpint (miss, >=, (int) ((gsize) n * (n + 1) / 65536));
  sc_store_head_clear (&hd);
  sc_store_close (s);
  store_tmp_clear (&t);
}

/* ------------------------------------------------------------------------------------ */
/* Chosen heads                                                                          */

static void
test_kept_heads (void)
{
  const int nh = STORE_FAKE_LAYERS * STORE_FAKE_HEADS;
  guint8 keep[STORE_FAKE_LAYERS * STORE_FAKE_HEADS] = { 0 };
  ScStoreRunInfo info = { 0 };
  ScStoreHeadScores sc = { 0 };
  ScStoreHead hd = { 0 };
  ScStoreOverview ov = { 0 };
  ScError err = { 0 };
  StoreTmp t;
  ScStore *s;
  gint64 run;
  int n_keep = 0;

  /* layers 1-2, heads 0 and 2 */
  for (int l = 1; l <= 2; l++)
    for (int h = 0; h < STORE_FAKE_HEADS; h += 2)
      keep[l * STORE_FAKE_HEADS + h] = 1, n_keep++;
  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  run = capture (s, 9, 20, fake_causal, keep, 0);
  g_assert_cmpint (sc_store_get_run (s, run, &info, &err), ==, SC_OK);
  g_assert_cmpuint (info.n_kept, ==, n_keep);
  g_assert_nonnull (info.kept);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM attention"), ==, n_keep);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM head_overviews"), ==, n_keep);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(DISTINCT layer * 100 + head) FROM "
                                       "head_scores"), ==, n_keep);
  for (int k = 0; k < nh; k++)
    {
      const int l = k / STORE_FAKE_HEADS, h = k % STORE_FAKE_HEADS;
      g_assert_cmpint (sc_store_run_has_head (&info, l, h), ==, keep[k] != 0);
      if (keep[k])
        {
          g_autofree float *want = store_fake_head (9, l, h, 20, TRUE);
          hd = read_head (s, run, l, h);
          for (int i = 0; i < 20 * 20; i++)
            g_assert_true (store_fake_fp16_close (want[i], hd.probs[i]));
          sc_store_head_clear (&hd);
          continue;
        }
      g_assert_cmpint (sc_store_read_head (s, run, l, h, &hd, &err), ==, SC_ERR_NOT_FOUND);
      {
        g_autofree char *msg = g_strdup_printf ("run %lld did not keep layer %d head %d",
                                                (long long) run, l, h);
        store_test_assert_message (&err, msg);
      }
      g_assert_cmpint (sc_store_read_overview (s, run, l, h, &ov, &err), ==, SC_ERR_NOT_FOUND);
      {
        float row[20];
        g_assert_cmpint (sc_store_read_head_rows (s, run, l, h, 0, 1, row, NULL, &err), ==,
                         SC_ERR_NOT_FOUND);
      }
    }
  g_assert_false (sc_store_run_has_head (&info, STORE_FAKE_LAYERS, 0));
  g_assert_false (sc_store_run_has_head (&info, 0, -1));
  sc_store_run_info_clear (&info);

  /* scores: the kept heads' from the store, the others NaN */
  g_assert_cmpint (sc_store_read_head_scores (s, run, &sc, &err), ==, SC_OK);
  g_assert_false (sc.computed);
  g_assert_cmpuint (sc.n_kept, ==, n_keep);
  for (int k = 0; k < nh; k++)
    g_assert_cmpint (isnan (sc_head_stats_get (&sc.stats[k], SC_HEAD_METRIC_ENTROPY)), ==,
                     !keep[k]);
  sc_store_head_scores_clear (&sc);

  /* a run that keeps nothing is refused before it starts */
  {
    guint8 none[STORE_FAKE_LAYERS * STORE_FAKE_HEADS] = { 0 };
    g_autofree ScStoreToken *tokens = store_fake_tokens (1, 4);
    ScStoreModel model;
    ScStoreCapture *cap = NULL;
    ScStoreRunDesc desc = { 0 };
    store_fake_model (&model, 0);
    desc = (ScStoreRunDesc) { &model, "x", 1, tokens, 4, "fake", none, 0 };
    g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_ERR_INVALID_ARG);
    store_test_assert_message (&err, "at least one head");
  }
  sc_store_close (s);

  /* the listing checks the stored heads against runs.kept */
  {
    g_autofree char *why = NULL;
    ScStoreRunInfo *runs = NULL;
    size_t n_runs = 0;
    g_assert_true (hostile_exec (t.path, "UPDATE runs SET kept = x'0000' WHERE id = 1", &why));
    s = store_test_open (t.path, FALSE);
    g_assert_cmpint (sc_store_list_runs (s, &runs, &n_runs, &err), ==, SC_ERR_FORMAT);
    store_test_assert_message (&err, "runs.kept keeps no head");
    sc_store_close (s);
    g_assert_true (hostile_exec (t.path, "UPDATE runs SET kept = x'00F0' WHERE id = 1", &why));
    s = store_test_open (t.path, FALSE);
    g_assert_cmpint (sc_store_list_runs (s, &runs, &n_runs, &err), ==, SC_ERR_FORMAT);
    store_test_assert_message (&err, "runs.kept has bits set past the model's 12 heads");
    sc_store_close (s);
    g_assert_true (hostile_exec (t.path, "UPDATE runs SET kept = x'0001' WHERE id = 1", &why));
    s = store_test_open (t.path, FALSE);
    g_assert_cmpint (sc_store_list_runs (s, &runs, &n_runs, &err), ==, SC_ERR_FORMAT);
    store_test_assert_message (&err, "is stored, but the run did not keep it");
    sc_store_close (s);
    g_assert_true (hostile_exec (t.path, "UPDATE runs SET kept = x'00' WHERE id = 1", &why));
    s = store_test_open (t.path, FALSE);
    g_assert_cmpint (sc_store_list_runs (s, &runs, &n_runs, &err), ==, SC_ERR_FORMAT);
    store_test_assert_message (&err, "needs a 2-byte bitmap");
    sc_store_close (s);
  }
  store_tmp_clear (&t);
}

/* ------------------------------------------------------------------------------------ */
/* Sparse                                                                                */

/* The reference: row @i's kept keys, by sorting (weight descending, lower key first) and
 * taking the shortest prefix whose sum (in double) reaches 1 - eps. */
static int
ref_compare (gconstpointer a, gconstpointer b, gpointer row)
{
  const float *w = row;
  const guint32 x = *(const guint32 *) a, y = *(const guint32 *) b;
  if (w[x] != w[y])
    return w[x] > w[y] ? -1 : 1;
  return x < y ? -1 : 1;
}

static void
check_sparse_run (ScStore *s, gint64 run, guint64 seed, int n, double eps, int *n_sparse)
{
  /* fp16 rounding of a row: relative 2^-11 of the kept mass (<= 1), absolute 2^-25 a
   * value below fp16's normal range; the generated rows sum to 1 within float rounding. */
  const double fp16_bound = 0x1.0p-11 + n * 0x1.0p-25, float_slack = n * 0x1.0p-23;

  for (int l = 0; l < STORE_FAKE_LAYERS; l++)
    for (int h = 0; h < STORE_FAKE_HEADS; h++)
      {
        g_autofree float *w = peaked_head (seed, l, h, n);
        ScStoreHead hd = read_head (s, run, l, h);
        g_autofree guint32 *idx = g_new (guint32, n);

        if (hd.dropped == NULL)
          {
            /* stored dense: smaller so; exact to fp16 */
            for (int i = 0; i < n * n; i++)
              g_assert_true (store_fake_fp16_close (w[i], hd.probs[i]));
            sc_store_head_clear (&hd);
            continue;
          }
        (*n_sparse)++;
        for (int i = 0; i < n; i++)
          {
            const float *wr = w + (gsize) i * n, *got = hd.probs + (gsize) i * n;
            double cum = 0, l1 = 0, sum = 0, dropped = 0;
            int k, n_keep = 0;

            for (int j = 0; j <= i; j++)
              idx[j] = (guint32) j;
            g_qsort_with_data (idx, i + 1, sizeof *idx, ref_compare, (gpointer) wr);
            for (k = 0; k <= i && cum < 1.0 - eps; k++)
              cum += wr[idx[k]];
            n_keep = k;
            for (k = 0; k <= i; k++)
              {
                const guint32 j = idx[k];
                if (k < n_keep)
                  g_assert_true (store_fake_fp16_close (wr[j], got[j]));
                else
                  {
                    g_assert_cmpfloat (got[j], ==, 0.0f);
                    dropped += wr[j];
                  }
              }
            for (int j = i + 1; j < n; j++)
              g_assert_cmpfloat (got[j], ==, 0.0f);
            for (int j = 0; j <= i; j++)
              {
                l1 += fabs ((double) got[j] - wr[j]);
                sum += got[j];
              }
            /* the recorded dropped mass is what was left out, as float32 */
            g_assert_cmpfloat (fabs (hd.dropped[i] - dropped), <=, 1e-7 + 1e-6 * dropped);
            g_assert_cmpfloat (dropped, <, eps);
            /* docs/store.md: the L1 error of a row is at most eps + fp16 rounding */
            g_assert_cmpfloat (l1, <=, eps + fp16_bound);
            /* the kept values and the dropped mass make 1 within fp16 rounding */
            g_assert_cmpfloat (fabs (sum + hd.dropped[i] - 1.0), <=, fp16_bound + float_slack);
          }
        sc_store_head_clear (&hd);
      }
}

static void
test_sparse (void)
{
  StoreTmp t;
  ScStore *s;
  gint64 run;
  int n_sparse = 0;

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  run = capture (s, 10, 120, peaked_head, NULL, 1e-3);
  check_sparse_run (s, run, 10, 120, 1e-3, &n_sparse);
  g_assert_cmpint (n_sparse, ==, STORE_FAKE_LAYERS * STORE_FAKE_HEADS);
  {
    ScStoreRunInfo info = { 0 };
    ScError err = { 0 };
    g_assert_cmpint (sc_store_get_run (s, run, &info, &err), ==, SC_OK);
    g_assert_cmpfloat (info.sparse_eps, ==, 1e-3);
    sc_store_run_info_clear (&info);
  }
  n_sparse = 0;
  run = capture (s, 11, 60, peaked_head, NULL, 0.05);
  check_sparse_run (s, run, 11, 60, 0.05, &n_sparse);
  g_assert_cmpint (n_sparse, ==, STORE_FAKE_LAYERS * STORE_FAKE_HEADS);
  /* store-fake's flatter heads: sparse would be larger, so they stay dense */
  {
    gint64 flat = store_test_capture (s, 12, 40, TRUE);
    ScStoreHead hd = read_head (s, flat, 0, 0);
    g_assert_null (hd.dropped);
    sc_store_head_clear (&hd);
  }
  sc_store_close (s);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM attention_parts WHERE "
                                       "layout = 'sparse'"), ==, 2 * STORE_FAKE_LAYERS * STORE_FAKE_HEADS);
  store_tmp_clear (&t);
}

/* ------------------------------------------------------------------------------------ */
/* Row blocks                                                                            */

static ScStore *
open_limited (const char *path)
{
  ScStoreOptions opt = { .writable = TRUE, .max_blob_bytes = SC_STORE_MIN_BLOB_BYTES };
  ScError err = { 0 };
  ScStore *s = NULL;

  if (sc_store_open (path, &opt, &s, &err) != SC_OK)
    g_error ("opening %s: %s", path, err.message);
  return s;
}

/* The same runs stored whole and under a 64 KiB BLOB limit read back the same, head for
 * head, row block for row block. */
static void
test_blocks (void)
{
  StoreTmp whole, split;
  ScStore *a, *b;
  ScError err = { 0 };

  store_tmp_init (&whole);
  store_tmp_init (&split);
  a = store_test_open (whole.path, TRUE);
  b = open_limited (split.path);
  /* 300 tokens: 90 KB a causal head; 200 full: 80 KB; 700 peaked sparse: ~3 parts */
  for (int k = 0; k < 3; k++)
    {
      const int n[] = { 300, 200, 700 };
      const HeadFn fn[] = { fake_causal, fake_full, peaked_head };
      const double eps[] = { 0, 0, 1e-3 };
      g_assert_cmpint (capture (a, 20 + k, n[k], fn[k], NULL, eps[k]), ==, k + 1);
      g_assert_cmpint (capture (b, 20 + k, n[k], fn[k], NULL, eps[k]), ==, k + 1);
    }
  sc_store_close (b);
  g_assert_cmpint (store_test_raw_int (split.path, "SELECT count(*) FROM attention"), ==, 0);
  g_assert_cmpint (store_test_raw_int (split.path, "SELECT count(DISTINCT run_id * 1000 + layer "
                                       "* 10 + head) FROM attention_parts WHERE row0 > 0"), ==,
                   3 * STORE_FAKE_LAYERS * STORE_FAKE_HEADS);
  g_assert_cmpint (store_test_raw_int (split.path, "SELECT max (length (data) + "
                                       "coalesce (length (keys) + length (offsets) + "
                                       "length (dropped), 0)) FROM attention_parts"), <=,
                   SC_STORE_MIN_BLOB_BYTES);
  b = store_test_open (split.path, FALSE);
  for (gint64 run = 1; run <= 3; run++)
    for (int l = 0; l < STORE_FAKE_LAYERS; l++)
      for (int h = 0; h < STORE_FAKE_HEADS; h++)
        {
          ScStoreHead x = read_head (a, run, l, h), y = read_head (b, run, l, h);
          ScStoreOverview ox = { 0 }, oy = { 0 };
          const gsize nn = (gsize) x.n_query * x.n_key;
          g_assert_cmpuint (x.n_query, ==, y.n_query);
          g_assert_cmpmem (x.probs, nn * sizeof (float), y.probs, nn * sizeof (float));
          g_assert_cmpint (x.dropped != NULL, ==, y.dropped != NULL);
          if (x.dropped != NULL)
            g_assert_cmpmem (x.dropped, x.n_query * sizeof (float), y.dropped,
                             y.n_query * sizeof (float));
          g_assert_cmpint (sc_store_read_overview (a, run, l, h, &ox, &err), ==, SC_OK);
          g_assert_cmpint (sc_store_read_overview (b, run, l, h, &oy, &err), ==, SC_OK);
          g_assert_cmpmem (ox.values, (gsize) ox.size * ox.size * sizeof (float), oy.values,
                           (gsize) oy.size * oy.size * sizeof (float));
          sc_store_overview_clear (&ox);
          sc_store_overview_clear (&oy);
          sc_store_head_clear (&x);
          sc_store_head_clear (&y);
        }
  check_readers (b, 1);
  check_readers (b, 3);
  sc_store_close (a);
  sc_store_close (b);

  /* deleting a run takes its parts and overviews with it */
  b = store_test_open (split.path, TRUE);
  g_assert_cmpint (sc_store_delete_run (b, 3, &err), ==, SC_OK);
  sc_store_close (b);
  g_assert_cmpint (store_test_raw_int (split.path, "SELECT count(*) FROM attention_parts WHERE "
                                       "run_id = 3"), ==, 0);
  g_assert_cmpint (store_test_raw_int (split.path, "SELECT count(*) FROM head_overviews WHERE "
                                       "run_id = 3"), ==, 0);
  g_assert_cmpint (store_test_raw_int (split.path, "SELECT count(*) FROM attention_parts"), >, 0);

  /* a limit below the smallest is refused */
  {
    ScStoreOptions opt = { .writable = TRUE, .max_blob_bytes = 100 };
    ScStore *s = NULL;
    g_assert_cmpint (sc_store_open (split.path, &opt, &s, &err), ==, SC_ERR_INVALID_ARG);
  }
  store_tmp_clear (&whole);
  store_tmp_clear (&split);
}

/* Hostile parts: a gap between blocks, a sparse key past its row, a masked overview cell. */
static void
test_hostile_parts (void)
{
  static const struct {
    const char *sql, *needle;
    int layer, head;
    gboolean overview;
  } cases[] = {
    { "DELETE FROM attention_parts WHERE run_id = 1 AND layer = 0 AND head = 0 AND row0 = 0",
      "the head's parts must cover rows 0..300 in order", 0, 0, FALSE },
    { "UPDATE attention_parts SET row1 = row1 - 1 WHERE run_id = 1 AND layer = 0 AND head = 1 "
      "AND row1 = 300", "the size of rows 254..299 of a causal fp16 head", 0, 1, FALSE },
    { "UPDATE attention_parts SET keys = CAST (x'FFFFFF00' || substr (keys, 5) AS BLOB) WHERE run_id = 2 "
      "AND layer = 1 AND head = 0 AND row0 = 0", "row 0 keeps key 16777215", 1, 0, FALSE },
    { "UPDATE attention_parts SET data = CAST (x'003C' || substr (data, 3) AS BLOB) WHERE run_id = 2 AND "
      "layer = 1 AND head = 1 AND row0 = 0", NULL, 1, 1, FALSE },
    { "UPDATE attention_parts SET data = CAST (x'007C' || substr (data, 3) AS BLOB) WHERE run_id = 2 AND "
      "layer = 1 AND head = 2 AND row0 = 0", "value 0 is inf, not a probability", 1, 2, FALSE },
    { "UPDATE head_overviews SET data = CAST (substr (data, 1, 2) || x'003C' || substr (data, 5) "
      "AS BLOB) WHERE run_id = 1 AND layer = 2 AND head = 0", "above the diagonal of a causal head", 2, 0,
      TRUE },
    { "UPDATE head_overviews SET size = 32 WHERE run_id = 1 AND layer = 2 AND head = 1",
      "size is 32; a run of 300 tokens has overviews of 60", 2, 1, TRUE },
  };
  StoreTmp t;
  ScStore *s;

  store_tmp_init (&t);
  s = open_limited (t.path);
  capture (s, 30, 300, fake_causal, NULL, 0);
  capture (s, 31, 700, peaked_head, NULL, 1e-3);
  sc_store_close (s);
  for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      g_autofree char *why = NULL;
      ScStoreHead hd = { 0 };
      ScStoreOverview ov = { 0 };
      ScError err = { 0 };
      const gint64 run = cases[c].layer == 1 ? 2 : 1;

      g_test_message ("%s", cases[c].sql);
      g_assert_true (hostile_exec (t.path, cases[c].sql, &why));
      s = store_test_open (t.path, FALSE);
      if (cases[c].overview)
        g_assert_cmpint (sc_store_read_overview (s, run, cases[c].layer, cases[c].head, &ov,
                                                 &err), ==, SC_ERR_FORMAT);
      else if (cases[c].needle == NULL)
        {
          /* a row 0 value of 1.0 where the row had another: still a probability, read */
          g_assert_cmpint (sc_store_read_head (s, run, cases[c].layer, cases[c].head, &hd, &err),
                           ==, SC_OK);
          sc_store_head_clear (&hd);
        }
      else
        g_assert_cmpint (sc_store_read_head (s, run, cases[c].layer, cases[c].head, &hd, &err),
                         ==, SC_ERR_FORMAT);
      if (cases[c].needle != NULL)
        store_test_assert_message (&err, cases[c].needle);
      sc_store_close (s);
    }
  store_tmp_clear (&t);
}

/* ------------------------------------------------------------------------------------ */
/* The estimate                                                                          */

static void
test_estimate (void)
{
  StoreTmp t;
  ScStore *s;
  ScStoreRunInfo info = { 0 };
  ScError err = { 0 };
  const guint32 nh = STORE_FAKE_LAYERS * STORE_FAKE_HEADS;

  g_assert_cmpuint (sc_store_estimate_bytes (0, 4, 3, 12, FALSE), ==, 0);
  g_assert_cmpuint (sc_store_estimate_bytes (10, 4, 3, 0, FALSE), ==, 0);
  /* sparse: the dense bound */
  g_assert_cmpuint (sc_store_estimate_bytes (512, 30, 9, 270, TRUE), ==,
                    sc_store_estimate_bytes (512, 30, 9, 270, FALSE));
  /* at least the heads' BLOBs; grows with n and with the heads kept */
  g_assert_cmpuint (sc_store_estimate_bytes (8192, 30, 9, 270, FALSE), >=,
                    270ull * 8192 * 8193);
  g_assert_cmpuint (sc_store_estimate_bytes (100, 4, 3, 6, FALSE), <,
                    sc_store_estimate_bytes (100, 4, 3, 12, FALSE));
  g_assert_cmpuint (sc_store_estimate_bytes (100, 4, 3, 12, FALSE), <,
                    sc_store_estimate_bytes (101, 4, 3, 12, FALSE));
  /* against a stored run: the estimate covers its BLOBs and the file's growth, within
   * the run's fixed overhead */
  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  capture (s, 41, 10, fake_causal, NULL, 0); /* the tables' first pages */
  sc_store_close (s); /* the WAL goes into the file */
  s = store_test_open (t.path, TRUE);
  {
    const gint64 before = store_test_file_size (t.path);
    const gint64 run = capture (s, 40, 400, fake_causal, NULL, 0);
    const guint64 est = sc_store_estimate_bytes (400, STORE_FAKE_LAYERS, STORE_FAKE_HEADS, nh,
                                                 FALSE);
    sc_store_close (s);
    const gint64 grown = store_test_file_size (t.path) - before;
    s = store_test_open (t.path, FALSE);
    g_assert_cmpint (sc_store_get_run (s, run, &info, &err), ==, SC_OK);
    g_test_message ("n = 400: estimate %llu, BLOBs %llu, file grew %lld",
                    (unsigned long long) est, (unsigned long long) info.attention_bytes,
                    (long long) grown);
    g_assert_cmpuint (est, >=, info.attention_bytes);
    g_assert_cmpint ((gint64) est, >=, grown);
    g_assert_cmpint ((gint64) est, <=, 2 * grown);
    sc_store_run_info_clear (&info);
  }
  sc_store_close (s);
  store_tmp_clear (&t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/store/v3/overview/matches-head", test_overview_matches_head);
  g_test_add_func ("/store/v3/overview/before-v3", test_overview_before_v3);
  g_test_add_func ("/store/v3/rows-and-f16", test_rows_and_f16);
  g_test_add_func ("/store/v3/rows-read-their-pages", test_rows_read_their_pages);
  g_test_add_func ("/store/v3/kept-heads", test_kept_heads);
  g_test_add_func ("/store/v3/sparse", test_sparse);
  g_test_add_func ("/store/v3/blocks", test_blocks);
  g_test_add_func ("/store/v3/hostile-parts", test_hostile_parts);
  g_test_add_func ("/store/v3/estimate", test_estimate);
  return g_test_run ();
}
