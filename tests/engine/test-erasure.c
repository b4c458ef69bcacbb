/* test-erasure.c — erasure curves (engine/study/sc-erasure-study.h) on the tiny llama of
 * sc-test-gguf (2 layers x 4 heads).
 *
 * 1. Brute force, both erasure kinds: every ordering is recomputed here from its
 *    definition (the last layer's attention through an own observer, leave-one-out TV, the
 *    documented SplitMix64 shuffle written out again), every point of every curve by a
 *    separate sc_forward run with the first k tokens masked or dropped, and the flip point
 *    by scanning the top-1s.
 * 2. Random orderings are reproducible from the seed, independent of R, and differ across
 *    seeds.
 * 3. "Never flips": a sentence of one repeated token, where erasing copies cannot change
 *    what the query sees (no positional embedding: equal values whatever the weights), is
 *    reported as never flipping (NaN fraction, flag set).
 * 4. The gradient ordering is refused (SC_ERR_UNSUPPORTED naming issue 12), and bad input.
 * 5. Cancel: SC_ERR_CANCELLED and no result.
 * 6. Stored and read back; a tampered order is SC_ERR_FORMAT.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "engine/analysis/sc-effect.h"
#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store-study.h"
#include "engine/study/sc-erasure-study.h"
#include "tests/engine/sc-test-gguf.h"

static const int32_t ids[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10, 200, 201 };
#define N_IDS ((int) G_N_ELEMENTS (ids))

typedef struct {
  ScModel *m;
  const ScModelInfo *in;
  ScBackend *b;
  ScSession *s;
  int L, H, V;
} Fixture;

static void
fixture_init (Fixture *f, ScModel *m)
{
  ScError err = { 0 };

  f->m = m;
  f->in = sc_model_info (m);
  f->b = sc_backend_cpu_new (2, NULL);
  g_assert_nonnull (f->b);
  g_assert_cmpint (sc_session_new (m, f->b, &f->s, &err), ==, SC_OK);
  f->L = (int) f->in->n_layers;
  f->H = (int) f->in->n_heads;
  f->V = (int) f->in->n_vocab;
}

static void
fixture_clear (Fixture *f)
{
  sc_session_free (f->s);
  sc_backend_free (f->b);
  sc_model_free (f->m);
}

/* The order of @score (m) highest first, ties to the lower position: selection, written
 * differently from the study's insertion sort. */
static void
ranks (const double *score, int m, int *order)
{
  g_autofree gboolean *taken = g_new0 (gboolean, m);

  for (int k = 0; k < m; k++)
    {
      int best = -1;
      for (int j = 0; j < m; j++)
        if (!taken[j] && (best < 0 || score[j] > score[best]))
          best = j;
      taken[best] = TRUE;
      order[k] = best;
    }
}

typedef struct {
  int L, H, n;
  double *per_head; /* (H, n) the last row of each head of the last layer */
} Rows;

static bool
rows_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  Rows *r = user;

  if (layer == r->L - 1)
    for (int j = 0; j < n_k; j++)
      r->per_head[head * r->n + j] = probs[(size_t) (n_q - 1) * n_k + j];
  return true;
}

static uint64_t
mix (uint64_t *s)
{
  uint64_t z = (*s += G_GUINT64_CONSTANT (0x9E3779B97F4A7C15));

  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* Random ordering r of seed @seed, from the header's words. */
static void
random_order (uint64_t seed, int r, int m, int *order)
{
  uint64_t st = seed, z = 0;

  for (int i = 0; i <= r; i++)
    z = mix (&st); /* the (r + 1)-th output of SplitMix64 from state seed */
  st = z;
  for (int t = 0; t < m; t++)
    order[t] = t;
  for (int t = m - 1; t > 0; t--)
    {
      int j = (int) (mix (&st) % (uint64_t) (t + 1)), tmp = order[t];
      order[t] = order[j];
      order[j] = tmp;
    }
}

static void
check_brute_force (ScEraseKind kind)
{
  const int n = N_IDS, m = n - 1, R = 3;
  Fixture f, g;
  ScErasureParams p = { .target = -1, .kind = kind, .n_random = R, .seed = 2024 };
  ScErasureResult *r = NULL;
  ScTokenLooResult *loo = NULL;
  ScAblationParams lp = { .target = -1, .contrast = -1 };
  ScError err = { 0 };
  g_autofree float *clean = g_new (float, 1024), *abl = NULL;
  g_autofree double *score = g_new0 (double, n);
  g_autofree int *order = g_new (int, m);
  g_autofree uint8_t *mask = g_new0 (uint8_t, n);
  g_autofree int32_t *dids = g_new (int32_t, n);
  Rows rows;
  ScObserver obs = { NULL, rows_observe, &rows, NULL };
  ScForwardOptions opt = { .observer = &obs };
  ScIntervention iv = { .token_mask = mask };
  int c, k, j, flips = 0;

  fixture_init (&f, sc_test_tiny_model ());
  fixture_init (&g, sc_test_tiny_model ());
  g_assert_cmpint (sc_erasure_run (f.s, f.m, ids, n, &p, NULL, NULL, &r, &err), ==, SC_OK);
  g_assert_cmpint (r->n_curves, ==, 2 + R);
  g_assert_cmpint (r->kind, ==, kind);
  abl = g_new (float, f.V);
  g_assert_cmpint (f.V, <=, 1024);

  /* The clean run and the last layer's attention from the last query. */
  rows = (Rows) { f.L, f.H, n, g_new0 (double, (gsize) f.H * n) };
  g_assert_cmpint (sc_forward (g.s, ids, n, &opt, clean, &err), ==, SC_OK);
  g_assert_cmpint (r->top1_clean, ==, sc_logits_top1 (clean, f.V));
  g_assert_cmpint (r->target, ==, r->top1_clean);
  for (j = 0; j < m; j++)
    {
      for (int h = 0; h < f.H; h++)
        score[j] += rows.per_head[h * n + j];
      score[j] /= f.H;
    }
  g_free (rows.per_head);
  ranks (score, m, order);
  g_assert_cmpmem (r->curves[0].order, m * sizeof (int), order, m * sizeof (int));
  g_assert_cmpint (r->curves[0].ordering, ==, SC_ERASE_ORDER_ATTENTION);
  g_assert_cmpint (sc_token_loo_run (g.s, g.m, ids, n, &lp, NULL, NULL, &loo, &err), ==, SC_OK);
  for (j = 0; j < m; j++)
    score[j] = loo->mask[j].next.tv;
  sc_token_loo_result_free (loo);
  ranks (score, m, order);
  g_assert_cmpmem (r->curves[1].order, m * sizeof (int), order, m * sizeof (int));
  g_assert_cmpint (r->curves[1].ordering, ==, SC_ERASE_ORDER_LOO);
  for (c = 2; c < 2 + R; c++)
    {
      random_order (2024, c - 2, m, order);
      g_assert_cmpmem (r->curves[c].order, m * sizeof (int), order, m * sizeof (int));
      g_assert_cmpint (r->curves[c].ordering, ==, SC_ERASE_ORDER_RANDOM);
      g_assert_cmpint (r->curves[c].seed_index, ==, c - 2);
    }

  /* Every point of every curve, run again; the flip point found by a scan. */
  opt.observer = NULL;
  for (c = 0; c < r->n_curves; c++)
    {
      const ScErasureCurve *cv = &r->curves[c];
      int flip = -1;
      memset (mask, 0, n);
      g_assert_cmpfloat (cv->tv[0], ==, 0.0);
      g_assert_cmpint (cv->top1[0], ==, r->top1_clean);
      for (k = 1; k <= m; k++)
        {
          ScEffect e;
          int kept = 0;
          mask[cv->order[k - 1]] = 1;
          if (kind == SC_ERASE_MASK)
            {
              opt.intervention = &iv;
              g_assert_cmpint (sc_forward (g.s, ids, n, &opt, abl, &err), ==, SC_OK);
            }
          else
            {
              for (j = 0; j < n; j++)
                if (!mask[j])
                  dids[kept++] = ids[j];
              g_assert_cmpint (kept, ==, n - k);
              g_assert_cmpint (dids[kept - 1], ==, ids[n - 1]); /* the query stays */
              opt.intervention = NULL;
              g_assert_cmpint (sc_forward (g.s, dids, kept, &opt, abl, &err), ==, SC_OK);
            }
          g_assert_cmpint (sc_effect_next_token (clean, abl, f.V, r->target, &e, &err), ==,
                           SC_OK);
          g_assert_cmpfloat (cv->p_target[k], ==, exp (e.logp_ablated));
          g_assert_cmpfloat (cv->tv[k], ==, e.tv);
          g_assert_cmpint (cv->top1[k], ==, sc_logits_top1 (abl, f.V));
          if (flip < 0 && cv->top1[k] != r->top1_clean)
            flip = k;
        }
      g_assert_cmpint (cv->flip_k, ==, flip);
      g_assert_cmpint (cv->never_flips, ==, flip < 0);
      if (flip > 0)
        g_assert_cmpfloat (cv->fraction, ==, (double) flip / m);
      else
        g_assert_true (isnan (cv->fraction));
      flips += flip > 0;
    }
  /* Erasing every token of a random model's sentence changes its prediction somewhere. */
  g_assert_cmpint (flips, >, 0);
  sc_erasure_result_free (r);
  fixture_clear (&f);
  fixture_clear (&g);
}

/* 1. */
static void
test_brute_force_mask (void)
{
  check_brute_force (SC_ERASE_MASK);
}

static void
test_brute_force_drop (void)
{
  check_brute_force (SC_ERASE_DROP);
}

/* 2. */
static void
test_random_reproducible (void)
{
  const int m = N_IDS - 1;
  Fixture f;
  ScErasureParams p = { .target = -1, .n_random = 4, .seed = 1 };
  ScErasureResult *a = NULL, *b = NULL, *c = NULL;
  ScError err = { 0 };
  int differ = 0;

  fixture_init (&f, sc_test_tiny_model ());
  g_assert_cmpint (sc_erasure_run (f.s, f.m, ids, N_IDS, &p, NULL, NULL, &a, &err), ==, SC_OK);
  p.n_random = 2; /* the first two orderings of a study with more */
  g_assert_cmpint (sc_erasure_run (f.s, f.m, ids, N_IDS, &p, NULL, NULL, &b, &err), ==, SC_OK);
  p.n_random = 4;
  p.seed = 2;
  g_assert_cmpint (sc_erasure_run (f.s, f.m, ids, N_IDS, &p, NULL, NULL, &c, &err), ==, SC_OK);
  for (int r = 0; r < 4; r++)
    {
      if (r < 2)
        {
          g_assert_cmpmem (a->curves[2 + r].order, m * sizeof (int), b->curves[2 + r].order,
                           m * sizeof (int));
          g_assert_cmpmem (a->curves[2 + r].p_target, N_IDS * sizeof (double),
                           b->curves[2 + r].p_target, N_IDS * sizeof (double));
        }
      differ += memcmp (a->curves[2 + r].order, c->curves[2 + r].order, m * sizeof (int)) != 0;
      /* Seeds within a study differ too. */
      if (r > 0)
        g_assert_true (memcmp (a->curves[2 + r].order, a->curves[2].order, m * sizeof (int)));
    }
  g_assert_cmpint (differ, ==, 4);
  sc_erasure_result_free (a);
  sc_erasure_result_free (b);
  sc_erasure_result_free (c);
  fixture_clear (&f);
}

/* The seeds' median, with never larger than any fraction (hand-made results). */
static void
test_random_median (void)
{
  ScErasureResult *r = sc_erasure_result_new (4, 3);
  bool never = true;

  g_assert_nonnull (r);
  r->curves[2].fraction = 0.4;
  r->curves[3].fraction = 0.2;
  r->curves[4].fraction = NAN;
  r->curves[4].never_flips = true;
  g_assert_cmpfloat (sc_erasure_random_median (r, &never), ==, 0.4);
  g_assert_false (never);
  r->n_random = 2; /* 0.4 and 0.2: the mean of the middle pair */
  g_assert_cmpfloat (fabs (sc_erasure_random_median (r, &never) - 0.3), <, 1e-15);
  r->curves[3].fraction = NAN; /* 0.4 and never */
  r->curves[3].never_flips = true;
  g_assert_true (isnan (sc_erasure_random_median (r, &never)));
  g_assert_true (never);
  r->n_random = 0;
  g_assert_true (isnan (sc_erasure_random_median (r, &never)));
  g_assert_false (never);
  r->n_random = 3;
  sc_erasure_result_free (r);
}

/* 3. */
static void
test_never_flips (void)
{
  const int32_t same[] = { 101, 101, 101, 101, 101, 101 };
  Fixture f;
  ScErasureParams p = { .target = -1, .n_random = 2, .seed = 3 };
  ScErasureResult *r = NULL;
  ScError err = { 0 };
  int kind, c, k;

  fixture_init (&f, sc_test_tiny_model ());
  for (kind = 0; kind < 2; kind++)
    {
      p.kind = kind == 0 ? SC_ERASE_MASK : SC_ERASE_DROP;
      g_assert_cmpint (sc_erasure_run (f.s, f.m, same, 6, &p, NULL, NULL, &r, &err), ==, SC_OK);
      for (c = 0; c < r->n_curves; c++)
        {
          const ScErasureCurve *cv = &r->curves[c];
          g_assert_true (cv->never_flips);
          g_assert_cmpint (cv->flip_k, ==, -1);
          g_assert_true (isnan (cv->fraction));
          for (k = 0; k < 6; k++)
            {
              g_assert_cmpint (cv->top1[k], ==, r->top1_clean);
              /* Equal values: only rounding can move the output. */
              g_assert_cmpfloat (cv->tv[k], <, 1e-5);
            }
        }
      sc_erasure_result_free (r);
      r = NULL;
    }
  fixture_clear (&f);
}

/* 4. */
static void
test_refused (void)
{
  Fixture f;
  ScErasureParams p = { .target = -1, .gradient = true };
  ScErasureResult *r = NULL;
  ScError err = { 0 };

  fixture_init (&f, sc_test_tiny_model ());
  g_assert_cmpint (sc_erasure_run (f.s, f.m, ids, N_IDS, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_UNSUPPORTED);
  g_assert_nonnull (strstr (err.message, "gradient"));
  g_assert_nonnull (strstr (err.message, "issue 12"));
  p.gradient = false;
  g_assert_cmpint (sc_erasure_run (f.s, f.m, ids, 1, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "never erased"));
  p.n_random = SC_ERASURE_MAX_SEEDS + 1;
  g_assert_cmpint (sc_erasure_run (f.s, f.m, ids, N_IDS, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "random"));
  p.n_random = 0;
  p.kind = (ScEraseKind) 7;
  g_assert_cmpint (sc_erasure_run (f.s, f.m, ids, N_IDS, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  p.kind = SC_ERASE_MASK;
  p.target = f.V;
  g_assert_cmpint (sc_erasure_run (f.s, f.m, ids, N_IDS, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "target"));
  g_assert_null (r);
  fixture_clear (&f);
}

typedef struct {
  int calls, stop_after;
  double last;
} Cancel;

static bool
cancel_after (void *user, double fraction)
{
  Cancel *c = user;

  g_assert_cmpfloat (fraction, >, c->last);
  g_assert_cmpfloat (fraction, <=, 1.0);
  c->last = fraction;
  return ++c->calls < c->stop_after;
}

/* 5. */
static void
test_cancel (void)
{
  const int n = N_IDS, m = n - 1;
  Fixture f;
  ScErasureParams p = { .target = -1, .n_random = 2, .seed = 3 };
  ScErasureResult *r = NULL;
  ScError err = { 0 };
  Cancel c;
  int stop;

  fixture_init (&f, sc_test_tiny_model ());
  /* In the leave-one-out part, at the clean run, in the curves. */
  for (stop = 1; stop <= 2 * m + 5; stop += m + 2)
    {
      c = (Cancel) { 0, stop, 0.0 };
      g_assert_cmpint (sc_erasure_run (f.s, f.m, ids, n, &p, cancel_after, &c, &r, &err), ==,
                       SC_ERR_CANCELLED);
      g_assert_null (r);
      g_assert_cmpint (c.calls, ==, stop);
    }
  c = (Cancel) { 0, 100000, 0.0 };
  g_assert_cmpint (sc_erasure_run (f.s, f.m, ids, n, &p, cancel_after, &c, &r, &err), ==,
                   SC_OK);
  g_assert_cmpint (c.calls, ==, 2 * m + 1 + 4 * m);
  g_assert_cmpfloat (c.last, ==, 1.0);
  sc_erasure_result_free (r);
  fixture_clear (&f);
}

static void
db_exec (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  char *msg = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  if (sqlite3_exec (db, sql, NULL, NULL, &msg) != SQLITE_OK)
    g_error ("%s: %s", sql, msg);
  g_assert_cmpint (sqlite3_changes (db), >, 0);
  sqlite3_close (db);
}

/* 6. */
static void
test_store_roundtrip (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-erasure-XXXXXX", NULL);
  g_autofree char *model_path = g_build_filename (dir, "tiny.gguf", NULL);
  g_autofree char *db_path = g_build_filename (dir, "s.sqlite", NULL);
  const int n = N_IDS;
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreModel sm;
  ScModel *m = NULL;
  Fixture f;
  ScErasureParams p = { .target = 101, .kind = SC_ERASE_DROP, .n_random = 3, .seed = 11 };
  ScErasureResult *r = NULL, *back = NULL;
  ScError err = { 0 };
  char pj[160];
  int64_t id = 0, id2 = 0;
  gsize len;
  const void *d;

  d = g_bytes_get_data (sc_test_tiny_bytes (), &len);
  g_assert_true (g_file_set_contents (model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (model_path, 1, &m, &err), ==, SC_OK);
  fixture_init (&f, m);
  g_assert_cmpint (sc_store_model_identify (m, model_path, &sm, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_erasure_run (f.s, m, ids, n, &p, NULL, NULL, &r, &err), ==, SC_OK);
  g_assert_cmpint (sc_erasure_params_json (8, &p, pj, sizeof pj), >, 0);
  g_assert_cmpstr (pj, ==, "{\"study\":1,\"run\":8,\"target\":101,\"kind\":\"drop\","
                           "\"seeds\":3,\"seed\":11}");
  g_assert_cmpint (sc_erasure_params_json (8, &p, pj, 16), ==, -1);
  g_assert_cmpint (sc_erasure_params_json (8, &p, pj, sizeof pj), >, 0);
  g_assert_cmpint (sc_erasure_load (store, f.in, sm.sha256, pj, &back, NULL, &err), ==,
                   SC_ERR_NOT_FOUND);
  g_assert_cmpint (sc_erasure_store (store, &sm, pj, r, &id, &err), ==, SC_OK);
  g_assert_cmpint (sc_erasure_load (store, f.in, sm.sha256, pj, &back, &id2, &err), ==, SC_OK);
  g_assert_cmpint (id, ==, id2);
  g_assert_cmpint (back->n_tokens, ==, n);
  g_assert_cmpint (back->kind, ==, SC_ERASE_DROP);
  g_assert_cmpint (back->n_curves, ==, r->n_curves);
  g_assert_cmpint (back->target, ==, 101);
  g_assert_cmpint (back->top1_clean, ==, r->top1_clean);
  g_assert_cmpfloat (back->logp_clean, ==, r->logp_clean);
  for (int c = 0; c < r->n_curves; c++)
    {
      const ScErasureCurve *a = &r->curves[c], *b = &back->curves[c];
      g_assert_cmpint (a->ordering, ==, b->ordering);
      g_assert_cmpint (a->seed_index, ==, b->seed_index);
      g_assert_cmpmem (a->order, (n - 1) * sizeof (int), b->order, (n - 1) * sizeof (int));
      g_assert_cmpmem (a->p_target, n * sizeof (double), b->p_target, n * sizeof (double));
      g_assert_cmpmem (a->tv, n * sizeof (double), b->tv, n * sizeof (double));
      g_assert_cmpmem (a->top1, n * sizeof (int), b->top1, n * sizeof (int));
      g_assert_cmpint (a->flip_k, ==, b->flip_k);
      g_assert_cmpint (a->never_flips, ==, b->never_flips);
    }
  sc_erasure_result_free (back);
  back = NULL;
  sc_store_close (store);

  /* Position 3 erased twice in the attention order: refused. */
  db_exec (db_path, "UPDATE study_series SET value = (SELECT value FROM study_series WHERE "
                    "series = 'attention.order' AND pos = 0) WHERE series = 'attention.order' "
                    "AND pos = 1");
  so.writable = false;
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_erasure_load (store, f.in, sm.sha256, pj, &back, NULL, &err), ==,
                   SC_ERR_FORMAT);
  g_assert_nonnull (strstr (err.message, "twice"));
  g_assert_null (back);
  sc_store_close (store);
  /* A p(target) above 1. */
  db_exec (db_path, "UPDATE study_series SET value = 1.25 WHERE series = 'random.p' AND pos = 4");
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_erasure_load (store, f.in, sm.sha256, pj, &back, NULL, &err), ==,
                   SC_ERR_FORMAT);
  g_assert_nonnull (strstr (err.message, "p(target)"));
  sc_store_close (store);

  sc_erasure_result_free (r);
  fixture_clear (&f);
  g_remove (db_path);
  g_remove (model_path);
  {
    g_autofree char *wal = g_strconcat (db_path, "-wal", NULL);
    g_autofree char *shm = g_strconcat (db_path, "-shm", NULL);
    g_remove (wal);
    g_remove (shm);
  }
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/erasure/brute-force-mask", test_brute_force_mask);
  g_test_add_func ("/erasure/brute-force-drop", test_brute_force_drop);
  g_test_add_func ("/erasure/random-reproducible", test_random_reproducible);
  g_test_add_func ("/erasure/random-median", test_random_median);
  g_test_add_func ("/erasure/never-flips", test_never_flips);
  g_test_add_func ("/erasure/refused", test_refused);
  g_test_add_func ("/erasure/cancel", test_cancel);
  g_test_add_func ("/erasure/store-roundtrip", test_store_roundtrip);
  return g_test_run ();
}
