/* test-permutation.c — the attention-permutation study (engine/study/
 * sc-permutation-study.h), on the tiny llama of sc-test-gguf (2 layers x 4 heads).
 *
 * 1. The seeds are SplitMix64's outputs (the published first output for state 0), and the
 *    quantiles of hand-made samples are type 7's (worked by hand; numpy gives the same).
 * 2. A study of N permutations equals, bit for bit, N separate full sc_forward runs in a
 *    fresh session with the documented edits, and its summaries are the spread of those
 *    effects; prefix reuse equals the study's own full recompute bit for bit.
 * 3. A one-token sentence (rows with one key) has exactly zero effect.
 * 4. A head list studies only those heads, in layer-major order; bad lists, N and targets
 *    are refused.
 * 5. Cancel returns SC_ERR_CANCELLED and no result.
 * 6. Stored and read back: the same numbers; other params not found; a stored value out of
 *    range is SC_ERR_FORMAT.
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
#include "engine/study/sc-permutation-study.h"
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

static void
assert_same_double (double a, double b)
{
  g_assert_cmpmem (&a, sizeof a, &b, sizeof b);
}

static void
assert_same_effect (const ScAblationEffect *a, const ScAblationEffect *b)
{
  assert_same_double (a->next.delta_logp, b->next.delta_logp);
  assert_same_double (a->next.logp_clean, b->next.logp_clean);
  assert_same_double (a->next.tv, b->next.tv);
  assert_same_double (a->next.jsd, b->next.jsd);
  assert_same_double (a->delta_loss, b->delta_loss);
  g_assert_cmpint (a->next.top1_clean, ==, b->next.top1_clean);
  g_assert_cmpint (a->next.top1_ablated, ==, b->next.top1_ablated);
  g_assert_cmpint (a->flipped, ==, b->flipped);
}

static void
assert_same_spread (const ScSpread *a, const ScSpread *b)
{
  assert_same_double (a->min, b->min);
  assert_same_double (a->q25, b->q25);
  assert_same_double (a->median, b->median);
  assert_same_double (a->q75, b->q75);
  assert_same_double (a->max, b->max);
}

/* 1. */
static void
test_seeds_and_quantiles (void)
{
  const double four[] = { 1, 2, 3, 4 }, three[] = { 1, 2, 3 }, one[] = { 7.5 };
  const double shuffled[] = { 10, -2, 4, 4, 0.5 }, with_nan[] = { 1, NAN, 3 };
  ScSpread s;

  /* SplitMix64 from state 0: its first two outputs (Vigna's reference implementation). */
  g_assert_cmpuint (sc_permutation_seed (0, 0), ==, G_GUINT64_CONSTANT (0xE220A8397B1DCDAF));
  g_assert_cmpuint (sc_permutation_seed (0, 1), ==, G_GUINT64_CONSTANT (0x6E789E6AA1B965F4));
  g_assert_cmpuint (sc_permutation_seed (7, 3), !=, sc_permutation_seed (8, 3));

  /* h = (n − 1) p: n = 4: q25 at h = 0.75 -> 1 + 0.75 = 1.75; median h = 1.5 -> 2.5;
   * q75 h = 2.25 -> 3.25. n = 3: h = 0.5, 1, 1.5 -> 1.5, 2, 2.5. */
  g_assert_cmpfloat (sc_quantile_sorted (four, 4, 0.25), ==, 1.75);
  g_assert_cmpfloat (sc_quantile_sorted (four, 4, 0.5), ==, 2.5);
  g_assert_cmpfloat (sc_quantile_sorted (four, 4, 0.75), ==, 3.25);
  g_assert_cmpfloat (sc_quantile_sorted (four, 4, 0.0), ==, 1.0);
  g_assert_cmpfloat (sc_quantile_sorted (four, 4, 1.0), ==, 4.0);
  g_assert_cmpfloat (sc_quantile_sorted (three, 3, 0.25), ==, 1.5);
  g_assert_cmpfloat (sc_quantile_sorted (three, 3, 0.5), ==, 2.0);
  g_assert_true (isnan (sc_quantile_sorted (three, 3, 1.5)));
  g_assert_true (isnan (sc_quantile_sorted (three, 0, 0.5)));
  g_assert_true (sc_spread (one, 1, &s));
  g_assert_cmpfloat (s.min, ==, 7.5);
  g_assert_cmpfloat (s.q25, ==, 7.5);
  g_assert_cmpfloat (s.median, ==, 7.5);
  g_assert_cmpfloat (s.max, ==, 7.5);
  /* Sorted: −2, 0.5, 4, 4, 10; h = 1, 2, 3 -> 0.5, 4, 4. */
  g_assert_true (sc_spread (shuffled, 5, &s));
  g_assert_cmpfloat (s.min, ==, -2.0);
  g_assert_cmpfloat (s.q25, ==, 0.5);
  g_assert_cmpfloat (s.median, ==, 4.0);
  g_assert_cmpfloat (s.q75, ==, 4.0);
  g_assert_cmpfloat (s.max, ==, 10.0);
  g_assert_true (sc_spread (with_nan, 3, &s));
  g_assert_true (isnan (s.median) && isnan (s.min) && isnan (s.max));
}

/* 2. */
static void
test_equals_separate_runs (void)
{
  const int NP = 3;
  Fixture f, g;
  ScPermutationParams p = { .target = -1, .n_permutations = NP, .seed = 42 };
  ScPermutationResult *r = NULL, *rf = NULL;
  ScError err = { 0 };
  g_autofree float *clean = NULL, *abl = NULL;
  ScForwardOptions opt = { .all_logits = true };
  ScAttnEdit edit = { .kind = SC_ATTN_EDIT_PERMUTE };
  ScIntervention iv = { .edits = &edit, .n_edits = 1 };
  int i, k, changed = 0;

  fixture_init (&f, sc_test_tiny_model ());
  fixture_init (&g, sc_test_tiny_model ());
  g_assert_cmpint (sc_permutation_run (f.s, f.m, ids, N_IDS, &p, NULL, NULL, &r, &err), ==,
                   SC_OK);
  p.full_recompute = true;
  g_assert_cmpint (sc_permutation_run (f.s, f.m, ids, N_IDS, &p, NULL, NULL, &rf, &err), ==,
                   SC_OK);
  g_assert_cmpint (r->n_studied, ==, f.L * f.H);
  g_assert_cmpint (r->n_permutations, ==, NP);

  clean = g_new (float, (gsize) N_IDS * f.V);
  abl = g_new (float, (gsize) N_IDS * f.V);
  g_assert_cmpint (sc_forward (g.s, ids, N_IDS, &opt, clean, &err), ==, SC_OK);
  g_assert_cmpint (r->top1_clean, ==, sc_logits_top1 (clean + (size_t) (N_IDS - 1) * f.V, f.V));
  opt.intervention = &iv;
  for (i = 0; i < f.L * f.H; i++)
    {
      double tv[3], jsd[3], dl[3], dloss[3];
      ScSpread s;
      int flips = 0;
      g_assert_cmpint (r->heads[i].layer, ==, i / f.H);
      g_assert_cmpint (r->heads[i].head, ==, i % f.H);
      for (k = 0; k < NP; k++)
        {
          ScAblationEffect e = { 0 };
          edit.layer = i / f.H;
          edit.head = i % f.H;
          edit.seed = sc_permutation_seed (42, k);
          g_assert_cmpint (sc_forward (g.s, ids, N_IDS, &opt, abl, &err), ==, SC_OK);
          g_assert_cmpint (sc_effect_next_token (clean + (size_t) (N_IDS - 1) * f.V,
                                                 abl + (size_t) (N_IDS - 1) * f.V, f.V,
                                                 r->target, &e.next, &err), ==, SC_OK);
          g_assert_cmpint (sc_delta_loss_logits (clean, abl, ids, N_IDS, f.V, &e.delta_loss,
                                                 &err), ==, SC_OK);
          e.flipped = e.next.top1_ablated != e.next.top1_clean;
          assert_same_effect (&r->effects[i * NP + k], &e);
          assert_same_effect (&rf->effects[i * NP + k], &e);
          tv[k] = e.next.tv;
          jsd[k] = e.next.jsd;
          dl[k] = e.next.delta_logp;
          dloss[k] = e.delta_loss;
          flips += e.flipped;
          changed += e.next.tv > 0.0;
        }
      /* Three values: min, the midpoint of the lower pair, the middle, ... */
      g_assert_true (sc_spread (tv, NP, &s));
      assert_same_spread (&r->heads[i].tv, &s);
      assert_same_spread (&rf->heads[i].tv, &s);
      g_assert_true (sc_spread (jsd, NP, &s));
      assert_same_spread (&r->heads[i].jsd, &s);
      g_assert_true (sc_spread (dl, NP, &s));
      assert_same_spread (&r->heads[i].delta_logp, &s);
      g_assert_true (sc_spread (dloss, NP, &s));
      assert_same_spread (&r->heads[i].delta_loss, &s);
      assert_same_double (r->heads[i].flip_share, (double) flips / NP);
      g_assert_cmpfloat (r->heads[i].tv.min, <=, r->heads[i].tv.q25);
      g_assert_cmpfloat (r->heads[i].tv.q25, <=, r->heads[i].tv.median);
      g_assert_cmpfloat (r->heads[i].tv.median, <=, r->heads[i].tv.q75);
      g_assert_cmpfloat (r->heads[i].tv.q75, <=, r->heads[i].tv.max);
    }
  /* Permuting a random model's attention rows changes its output. */
  g_assert_cmpint (changed, >, f.L * f.H * NP / 2);
  sc_permutation_result_free (r);
  sc_permutation_result_free (rf);
  fixture_clear (&f);
  fixture_clear (&g);
}

/* 3. */
static void
test_one_token (void)
{
  Fixture f;
  ScPermutationParams p = { .target = 101, .n_permutations = 4, .seed = 1 };
  ScPermutationResult *r = NULL;
  ScError err = { 0 };
  int i, k;

  fixture_init (&f, sc_test_tiny_model ());
  g_assert_cmpint (sc_permutation_run (f.s, f.m, ids, 1, &p, NULL, NULL, &r, &err), ==, SC_OK);
  g_assert_cmpint (r->target, ==, 101);
  for (i = 0; i < r->n_studied; i++)
    {
      for (k = 0; k < 4; k++)
        {
          const ScAblationEffect *e = &r->effects[i * 4 + k];
          g_assert_cmpfloat (e->next.tv, ==, 0.0);
          g_assert_cmpfloat (e->next.jsd, ==, 0.0);
          g_assert_cmpfloat (e->next.delta_logp, ==, 0.0);
          g_assert_true (isnan (e->delta_loss));
          g_assert_false (e->flipped);
        }
      g_assert_cmpfloat (r->heads[i].tv.max, ==, 0.0);
      g_assert_cmpfloat (r->heads[i].delta_logp.median, ==, 0.0);
      g_assert_cmpfloat (r->heads[i].flip_share, ==, 0.0);
      g_assert_true (isnan (r->heads[i].delta_loss.median));
    }
  sc_permutation_result_free (r);
  fixture_clear (&f);
}

/* 4. */
static void
test_head_list_and_invalid (void)
{
  Fixture f;
  const int list[] = { 6, 1 }, dup[] = { 2, 2 }, outside[] = { 8 };
  ScPermutationParams p = { .target = -1, .n_permutations = 2, .seed = 5, .heads = list,
                            .n_list = 2 };
  ScPermutationParams all = p;
  ScPermutationResult *r = NULL, *ra = NULL;
  ScError err = { 0 };
  int k;

  fixture_init (&f, sc_test_tiny_model ());
  g_assert_cmpint (sc_permutation_run (f.s, f.m, ids, N_IDS, &p, NULL, NULL, &r, &err), ==,
                   SC_OK);
  all.heads = NULL;
  all.n_list = 0;
  g_assert_cmpint (sc_permutation_run (f.s, f.m, ids, N_IDS, &all, NULL, NULL, &ra, &err), ==,
                   SC_OK);
  g_assert_cmpint (r->n_studied, ==, 2);
  g_assert_cmpint (r->heads[0].layer * f.H + r->heads[0].head, ==, 1);
  g_assert_cmpint (r->heads[1].layer * f.H + r->heads[1].head, ==, 6);
  /* A head's permutations do not depend on which other heads are studied. */
  for (k = 0; k < 2; k++)
    {
      assert_same_effect (&r->effects[k], &ra->effects[1 * 2 + k]);
      assert_same_effect (&r->effects[2 + k], &ra->effects[6 * 2 + k]);
    }
  sc_permutation_result_free (r);
  sc_permutation_result_free (ra);
  r = NULL;

  p.heads = dup;
  g_assert_cmpint (sc_permutation_run (f.s, f.m, ids, N_IDS, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "listed twice"));
  p.heads = outside;
  p.n_list = 1;
  g_assert_cmpint (sc_permutation_run (f.s, f.m, ids, N_IDS, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "outside the model"));
  p.heads = NULL;
  p.n_list = 0;
  p.n_permutations = 0;
  g_assert_cmpint (sc_permutation_run (f.s, f.m, ids, N_IDS, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "permutations"));
  p.n_permutations = SC_PERMUTATION_MAX_N + 1;
  g_assert_cmpint (sc_permutation_run (f.s, f.m, ids, N_IDS, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  p.n_permutations = 2;
  p.target = f.V;
  g_assert_cmpint (sc_permutation_run (f.s, f.m, ids, N_IDS, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "target"));
  p.target = -1;
  g_assert_cmpint (sc_permutation_run (f.s, f.m, ids, 0, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
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
  Fixture f;
  ScPermutationParams p = { .target = -1, .n_permutations = 3, .seed = 9 };
  ScPermutationResult *r = NULL;
  ScError err = { 0 };
  Cancel c = { 0, 5, 0.0 };

  fixture_init (&f, sc_test_tiny_model ());
  g_assert_cmpint (sc_permutation_run (f.s, f.m, ids, N_IDS, &p, cancel_after, &c, &r, &err),
                   ==, SC_ERR_CANCELLED);
  g_assert_null (r);
  g_assert_cmpint (c.calls, ==, 5);
  c = (Cancel) { 0, 1000, 0.0 };
  g_assert_cmpint (sc_permutation_run (f.s, f.m, ids, N_IDS, &p, cancel_after, &c, &r, &err),
                   ==, SC_OK);
  g_assert_cmpint (c.calls, ==, f.L * f.H * 3);
  g_assert_cmpfloat (c.last, ==, 1.0);
  sc_permutation_result_free (r);
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
  g_autofree char *dir = g_dir_make_tmp ("saccade-permutation-XXXXXX", NULL);
  g_autofree char *model_path = g_build_filename (dir, "tiny.gguf", NULL);
  g_autofree char *db_path = g_build_filename (dir, "s.sqlite", NULL);
  const int list[] = { 3, 5 };
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreModel sm;
  ScModel *m = NULL;
  Fixture f;
  ScPermutationParams p = { .target = -1, .n_permutations = 4, .seed = 77, .heads = list,
                            .n_list = 2 };
  ScPermutationResult *r = NULL, *back = NULL;
  ScError err = { 0 };
  char pj[256];
  int64_t id = 0, id2 = 0;
  gsize len;
  const void *d;
  int i;

  d = g_bytes_get_data (sc_test_tiny_bytes (), &len);
  g_assert_true (g_file_set_contents (model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (model_path, 1, &m, &err), ==, SC_OK);
  fixture_init (&f, m);
  g_assert_cmpint (sc_store_model_identify (m, model_path, &sm, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);

  g_assert_cmpint (sc_permutation_run (f.s, m, ids, N_IDS, &p, NULL, NULL, &r, &err), ==,
                   SC_OK);
  g_assert_cmpint (sc_permutation_params_json (5, &p, pj, sizeof pj), >, 0);
  g_assert_cmpstr (pj, ==, "{\"study\":1,\"run\":5,\"target\":null,\"n\":4,\"seed\":77,"
                           "\"heads\":[3,5]}");
  g_assert_cmpint (sc_permutation_params_json (5, &p, pj, 20), ==, -1);
  g_assert_cmpint (sc_permutation_params_json (5, &p, pj, sizeof pj), >, 0);
  g_assert_cmpint (sc_permutation_load (store, f.in, sm.sha256, pj, &back, NULL, &err), ==,
                   SC_ERR_NOT_FOUND);
  g_assert_cmpint (sc_permutation_store (store, &sm, pj, r, &id, &err), ==, SC_OK);
  g_assert_cmpint (sc_permutation_load (store, f.in, sm.sha256, pj, &back, &id2, &err), ==,
                   SC_OK);
  g_assert_cmpint (id2, ==, id);
  g_assert_cmpint (back->n_studied, ==, 2);
  g_assert_cmpint (back->n_permutations, ==, 4);
  g_assert_cmpuint (back->seed, ==, 77);
  g_assert_cmpint (back->target, ==, r->target);
  g_assert_cmpint (back->top1_clean, ==, r->top1_clean);
  assert_same_double (back->logp_clean, r->logp_clean);
  assert_same_double (back->loss_clean, r->loss_clean);
  for (i = 0; i < 2; i++)
    {
      g_assert_cmpint (back->heads[i].layer, ==, r->heads[i].layer);
      g_assert_cmpint (back->heads[i].head, ==, r->heads[i].head);
      assert_same_spread (&back->heads[i].tv, &r->heads[i].tv);
      assert_same_spread (&back->heads[i].jsd, &r->heads[i].jsd);
      assert_same_spread (&back->heads[i].delta_logp, &r->heads[i].delta_logp);
      assert_same_spread (&back->heads[i].delta_loss, &r->heads[i].delta_loss);
      assert_same_double (back->heads[i].flip_share, r->heads[i].flip_share);
    }
  for (i = 0; i < 8; i++)
    assert_same_effect (&back->effects[i], &r->effects[i]);
  sc_permutation_result_free (back);
  back = NULL;
  /* Other params: not reused. */
  {
    ScPermutationParams q = p;
    char other[256];
    q.seed = 78;
    sc_permutation_params_json (5, &q, other, sizeof other);
    g_assert_cmpint (sc_permutation_load (store, f.in, sm.sha256, other, &back, NULL, &err),
                     ==, SC_ERR_NOT_FOUND);
  }
  sc_store_close (store);

  /* A TV out of range, written behind the store's back: refused, naming what. */
  db_exec (db_path, "UPDATE study_series SET value = 1.5 WHERE series = 'perm.tv' AND pos = 2");
  so.writable = false;
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_permutation_load (store, f.in, sm.sha256, pj, &back, NULL, &err), ==,
                   SC_ERR_FORMAT);
  g_assert_nonnull (strstr (err.message, "TV"));
  g_assert_null (back);
  sc_store_close (store);
  /* A missing permutation. */
  db_exec (db_path, "DELETE FROM study_series WHERE series = 'perm.top1' AND pos = 7");
  db_exec (db_path, "UPDATE study_series SET value = 0.5 WHERE series = 'perm.tv' AND pos = 2");
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_permutation_load (store, f.in, sm.sha256, pj, &back, NULL, &err), ==,
                   SC_ERR_FORMAT);
  g_assert_nonnull (strstr (err.message, "without all its permutations"));
  sc_store_close (store);

  sc_permutation_result_free (r);
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
  g_test_add_func ("/permutation/seeds-and-quantiles", test_seeds_and_quantiles);
  g_test_add_func ("/permutation/equals-separate-runs", test_equals_separate_runs);
  g_test_add_func ("/permutation/one-token", test_one_token);
  g_test_add_func ("/permutation/head-list-and-invalid", test_head_list_and_invalid);
  g_test_add_func ("/permutation/cancel", test_cancel);
  g_test_add_func ("/permutation/store-roundtrip", test_store_roundtrip);
  return g_test_run ();
}
