/* test-store-scores.c — head statistics in head_scores (engine/store/sc-store-scores.h):
 * stored with every capture, computed (and stored) on first use for a run without them, and
 * every row distrusted: hostile head_scores rows, made with SQL the way someone with the
 * sqlite3 tool could, are refused with SC_ERR_FORMAT naming the run and the row. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "engine/store/sc-store-scores.h"
#include "hostile-stores.h"
#include "store-fake.h"

#define N_TOK 6
#define N_ROWS (STORE_FAKE_LAYERS * STORE_FAKE_HEADS * SC_STORE_N_SCORES)

/* Every score of @s equals what sc_head_stats_compute gives on the head as stored. */
static void
assert_scores_match_heads (ScStore *store, const ScStoreHeadScores *s)
{
  for (guint l = 0; l < s->n_layers; l++)
    for (guint h = 0; h < s->n_heads; h++)
      {
        const ScHeadStats *got = &s->stats[l * s->n_heads + h];
        ScStoreHead hd = { 0 };
        ScHeadStats want;

        g_assert_cmpint (sc_store_read_head (store, s->run_id, (int) l, (int) h, &hd, NULL), ==,
                         SC_OK);
        g_assert_cmpint (sc_head_stats_compute (hd.probs, (int) hd.n_query, (int) hd.n_key, NULL,
                                                &want, NULL), ==, SC_OK);
        sc_store_head_clear (&hd);
        for (int m = 0; m < SC_HEAD_N_METRICS; m++)
          {
            const double a = sc_head_stats_get (got, (ScHeadMetric) m);
            const double b = sc_head_stats_get (&want, (ScHeadMetric) m);
            if (isnan (b))
              g_assert_true (isnan (a));
            else
              g_assert_cmpfloat (a, ==, b); /* the same doubles, through SQLite's REAL */
          }
        g_assert_cmpint (got->last_top, ==, want.last_top);
        g_assert_cmpfloat (got->last_top_weight, ==, want.last_top_weight);
      }
}

/* A capture stores 11 scores per head in its transaction; reading them computes nothing. */
static void
test_stored_with_capture (void)
{
  StoreTmp t;
  ScStore *store;
  ScStoreHeadScores s = { 0 };
  ScError err = { 0 };
  gint64 run;

  store_tmp_init (&t);
  store = store_test_open (t.path, TRUE);
  run = store_test_capture (store, 2, N_TOK, TRUE);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM head_scores"), ==, N_ROWS);
  g_assert_cmpint (sc_store_read_head_scores (store, run, &s, &err), ==, SC_OK);
  g_assert_false (s.computed);
  g_assert_cmpuint (s.n_layers, ==, STORE_FAKE_LAYERS);
  g_assert_cmpuint (s.n_heads, ==, STORE_FAKE_HEADS);
  g_assert_cmpuint (s.n_tokens, ==, N_TOK);
  assert_scores_match_heads (store, &s);
  sc_store_head_scores_clear (&s);
  sc_store_head_scores_clear (&s); /* cleared twice: a no-op */
  sc_store_head_scores_clear (NULL);

  /* Deleting the run takes its scores with it. */
  g_assert_cmpint (sc_store_delete_run (store, run, &err), ==, SC_OK);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM head_scores"), ==, 0);
  g_assert_cmpint (sc_store_read_head_scores (store, run, &s, &err), ==, SC_ERR_NOT_FOUND);
  sc_store_close (store);
  store_tmp_clear (&t);
}

/* An older run (its scores deleted, or one metric of one head): read-only, they are
 * computed and not stored; writable, computed once and stored, then read. */
static void
test_computed_on_first_use (void)
{
  StoreTmp t;
  ScStore *store;
  ScStoreHeadScores s = { 0 };
  ScError err = { 0 };
  gint64 run;

  store_tmp_init (&t);
  store = store_test_open (t.path, TRUE);
  run = store_test_capture (store, 1, 4, TRUE);
  sc_store_close (store);
  store_test_raw_exec (t.path, "DELETE FROM head_scores");

  store = store_test_open (t.path, FALSE);
  g_assert_cmpint (sc_store_read_head_scores (store, run, &s, &err), ==, SC_OK);
  g_assert_true (s.computed);
  g_assert_false (s.stored);
  assert_scores_match_heads (store, &s);
  sc_store_head_scores_clear (&s);
  sc_store_close (store);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM head_scores"), ==, 0);

  store = store_test_open (t.path, TRUE);
  g_assert_cmpint (sc_store_read_head_scores (store, run, &s, &err), ==, SC_OK);
  g_assert_true (s.computed);
  g_assert_true (s.stored);
  sc_store_head_scores_clear (&s);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM head_scores"), ==, N_ROWS);
  g_assert_cmpint (sc_store_read_head_scores (store, run, &s, &err), ==, SC_OK);
  g_assert_false (s.computed);
  assert_scores_match_heads (store, &s);
  sc_store_head_scores_clear (&s);
  sc_store_close (store);

  /* One score of one head missing: only that one is computed and stored. */
  store_test_raw_exec (t.path, "DELETE FROM head_scores WHERE layer = 2 AND head = 1 "
                               "AND metric = 'sink'");
  store = store_test_open (t.path, TRUE);
  g_assert_cmpint (sc_store_read_head_scores (store, run, &s, &err), ==, SC_OK);
  g_assert_true (s.computed);
  g_assert_true (s.stored);
  assert_scores_match_heads (store, &s);
  sc_store_head_scores_clear (&s);
  sc_store_close (store);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM head_scores"), ==, N_ROWS);
  store_tmp_clear (&t);
}

/* A one-token run: the previous-token score and the normalised entropy are undefined,
 * stored as NULL and read back as NaN. */
static void
test_undefined_is_null (void)
{
  StoreTmp t;
  ScStore *store;
  ScStoreHeadScores s = { 0 };
  gint64 run;

  store_tmp_init (&t);
  store = store_test_open (t.path, TRUE);
  run = store_test_capture (store, 5, 1, TRUE);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM head_scores WHERE value "
                                               "IS NULL"), ==,
                   2 * STORE_FAKE_LAYERS * STORE_FAKE_HEADS);
  g_assert_cmpint (sc_store_read_head_scores (store, run, &s, NULL), ==, SC_OK);
  g_assert_true (isnan (s.stats[0].previous));
  g_assert_true (isnan (s.stats[0].entropy_norm));
  g_assert_cmpint (s.stats[0].last_top, ==, 0);
  sc_store_head_scores_clear (&s);
  sc_store_close (store);
  store_tmp_clear (&t);
}

/* Hostile rows, each applied to run 2 (6 tokens) of the hostile base store. */
typedef struct {
  const char *name;
  const char *sql;
  const char *needle;
} HostileScore;

#define ROW_2_0_0(metric) "run_id = 2 AND layer = 0 AND head = 0 AND metric = '" metric "'"

static const HostileScore hostile_scores[] = {
  { "layer-out", "UPDATE head_scores SET layer = 4 WHERE " ROW_2_0_0 ("entropy"),
    "layer is 4, outside the run's 0..3" },
  { "layer-negative", "UPDATE head_scores SET layer = -1 WHERE " ROW_2_0_0 ("entropy"),
    "layer is -1" },
  { "layer-text", "UPDATE head_scores SET layer = 'zero' WHERE " ROW_2_0_0 ("entropy"),
    "layer is text, not an integer" },
  { "head-out", "UPDATE head_scores SET head = 3 WHERE " ROW_2_0_0 ("entropy"),
    "head is 3, outside the run's 0..2" },
  { "head-real", "UPDATE head_scores SET head = 0.5 WHERE " ROW_2_0_0 ("entropy"),
    "head is a real, not an integer" },
  { "metric-unknown", "UPDATE head_scores SET metric = 'bogus' WHERE " ROW_2_0_0 ("entropy"),
    "metric 'bogus' is not one Saccade stores" },
  { "metric-blob", "UPDATE head_scores SET metric = CAST ('sink' AS BLOB) WHERE "
    ROW_2_0_0 ("entropy"), "(not text)" },
  { "metric-huge", "UPDATE head_scores SET metric = hex (zeroblob (500000)) WHERE "
    ROW_2_0_0 ("entropy"), "(a long text)" },
  /* The unique index sees the BLOB 'entropy' and the TEXT 'entropy' as different values;
   * read as one metric they would be the same score twice. */
  { "metric-duplicate-by-type", "INSERT INTO head_scores (run_id, layer, head, metric, value) "
    "VALUES (2, 0, 0, CAST ('entropy' AS BLOB), 0.5)", "(not text)" },
  { "value-text", "UPDATE head_scores SET value = 'high' WHERE " ROW_2_0_0 ("sink"),
    "the value of sink is text" },
  { "value-blob", "UPDATE head_scores SET value = zeroblob (4) WHERE " ROW_2_0_0 ("sink"),
    "the value of sink is a blob" },
  { "value-infinite", "UPDATE head_scores SET value = 9e999 WHERE " ROW_2_0_0 ("sink"),
    "is inf, not finite" },
  { "value-minus-infinite", "UPDATE head_scores SET value = -9e999 WHERE " ROW_2_0_0 ("distance"),
    "is -inf, not finite" },
  { "top-key-fraction", "UPDATE head_scores SET value = 2.5 WHERE " ROW_2_0_0 ("last-top-key"),
    "the last top key is 2.5" },
  { "top-key-past-end", "UPDATE head_scores SET value = 6 WHERE " ROW_2_0_0 ("last-top-key"),
    "the last top key is 6, not a position 0..5" },
  { "top-key-negative", "UPDATE head_scores SET value = -1 WHERE " ROW_2_0_0 ("last-top-key"),
    "the last top key is -1" },
  { "top-key-null", "UPDATE head_scores SET value = NULL WHERE " ROW_2_0_0 ("last-top-key"),
    "the last top key is nan" },
};

static void
test_hostile (void)
{
  StoreTmp t;
  g_autofree char *base = NULL;

  store_tmp_init (&t);
  base = g_build_filename (t.dir, "base.sqlite", NULL);

  hostile_base (base);
  for (gsize i = 0; i < G_N_ELEMENTS (hostile_scores); i++)
    {
      const HostileScore *k = &hostile_scores[i];
      g_autofree char *path = g_strdup_printf ("%s/%s.sqlite", t.dir, k->name);
      const HostileKind kind = { .name = k->name, .sql = k->sql };
      g_autofree char *why = NULL;
      ScStoreHeadScores s = { 0 };
      ScError err = { 0 };
      ScStore *store;

      g_test_message ("%s", k->name);
      g_assert_true (hostile_build (&kind, base, path, &why));
      for (int writable = 0; writable < 2; writable++)
        {
          store = store_test_open (path, writable);
          g_assert_cmpint (sc_store_read_head_scores (store, 2, &s, &err), ==, SC_ERR_FORMAT);
          store_test_assert_message (&err, k->needle);
          store_test_assert_message (&err, "run 2: head_scores row");
          store_test_assert_message (&err, "saccade rm 2");
          g_assert_null (s.stats);
          /* The other runs are untouched by run 2's damage. */
          g_assert_cmpint (sc_store_read_head_scores (store, 1, &s, &err), ==, SC_OK);
          g_assert_false (s.computed);
          sc_store_head_scores_clear (&s);
          sc_store_close (store);
        }
    }
  store_tmp_clear (&t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/store/scores/stored-with-capture", test_stored_with_capture);
  g_test_add_func ("/store/scores/computed-on-first-use", test_computed_on_first_use);
  g_test_add_func ("/store/scores/undefined-is-null", test_undefined_is_null);
  g_test_add_func ("/store/scores/hostile", test_hostile);
  return g_test_run ();
}
