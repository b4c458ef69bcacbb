/* test-loo-kinds.c — token leave-one-out of one erasure kind (ScAblationParams.loo_kinds,
 * engine/study/sc-ablation-study.h), on the tiny llama of sc-test-gguf.
 *
 * 1. A mask-only and a drop-only run each equal, bit for bit, the corresponding half of a
 *    both-kinds run of the same ids (and target), with the other kind's entries all NaN,
 *    kinds saying which, and n − 1 progress calls instead of 2 (n − 1) ending at 1.
 * 2. loo_kinds 0 is both; bits other than mask and drop are refused (run and params text),
 *    and so is storing a result whose kinds are 0.
 * 3. The params text: the default's is what it always was, byte for byte; one kind appends
 *    "kinds"; a head sweep ignores the field; the documented buffer sizes suffice at the
 *    widest run id and target.
 * 4. A one-kind result stored under its own params reads back with its kind only and the
 *    same numbers, and is not found under the both-kinds params (so `saccade ablate
 *    --tokens` never takes it for a full study).
 * 5. sc_faith_run asks for its own kind only: the leave-one-out it hands back holds that
 *    kind, and its importances equal those of a run given a both-kinds result, bit for bit.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store-study.h"
#include "engine/study/sc-ablation-study.h"
#include "engine/study/sc-faithfulness.h"
#include "tests/engine/sc-test-gguf.h"

static const int32_t ids[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10, 200, 201 };
#define N ((int) G_N_ELEMENTS (ids))

typedef struct {
  ScModel *m;
  const ScModelInfo *in;
  ScBackend *b;
  ScSession *s;
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
  assert_same_double (a->next.logp_ablated, b->next.logp_ablated);
  assert_same_double (a->next.tv, b->next.tv);
  assert_same_double (a->next.jsd, b->next.jsd);
  assert_same_double (a->delta_loss, b->delta_loss);
  g_assert_cmpint (a->next.top1_clean, ==, b->next.top1_clean);
  g_assert_cmpint (a->next.top1_ablated, ==, b->next.top1_ablated);
  g_assert_cmpint (a->flipped, ==, b->flipped);
}

static void
assert_nan_effect (const ScAblationEffect *e)
{
  g_assert_true (isnan (e->next.delta_logp));
  g_assert_true (isnan (e->next.tv));
  g_assert_true (isnan (e->next.jsd));
  g_assert_true (isnan (e->delta_loss));
  g_assert_cmpint (e->next.top1_ablated, ==, -1);
  g_assert_false (e->flipped);
}

typedef struct {
  int calls;
  double last;
} Count;

static bool
count_progress (void *user, double fraction)
{
  Count *c = user;

  g_assert_cmpfloat (fraction, >, c->last);
  g_assert_cmpfloat (fraction, <=, 1.0);
  c->last = fraction;
  c->calls++;
  return true;
}

/* 1. */
static void
test_one_kind_equals_half (void)
{
  static const int targets[] = { -1, 101 };
  Fixture f;
  ScError err = { 0 };
  int t, j;

  fixture_init (&f, sc_test_tiny_model ());
  for (t = 0; t < (int) G_N_ELEMENTS (targets); t++)
    {
      ScAblationParams both_p = { .target = targets[t], .contrast = -1 };
      ScAblationParams mask_p = { .target = targets[t], .contrast = -1, .loo_kinds = SC_LOO_MASK };
      ScAblationParams drop_p = { .target = targets[t], .contrast = -1, .loo_kinds = SC_LOO_DROP };
      ScTokenLooResult *both = NULL, *mask = NULL, *drop = NULL;
      Count cm = { 0 }, cd = { 0 }, cb = { 0 };

      g_assert_cmpint (sc_token_loo_run (f.s, f.m, ids, N, &both_p, count_progress, &cb, &both,
                                         &err), ==, SC_OK);
      g_assert_cmpint (sc_token_loo_run (f.s, f.m, ids, N, &mask_p, count_progress, &cm, &mask,
                                         &err), ==, SC_OK);
      g_assert_cmpint (sc_token_loo_run (f.s, f.m, ids, N, &drop_p, count_progress, &cd, &drop,
                                         &err), ==, SC_OK);
      g_assert_cmpuint (both->kinds, ==, SC_LOO_BOTH);
      g_assert_cmpuint (mask->kinds, ==, SC_LOO_MASK);
      g_assert_cmpuint (drop->kinds, ==, SC_LOO_DROP);
      g_assert_cmpint (cb.calls, ==, 2 * (N - 1));
      g_assert_cmpint (cm.calls, ==, N - 1);
      g_assert_cmpint (cd.calls, ==, N - 1);
      g_assert_cmpfloat (cm.last, ==, 1.0);
      g_assert_cmpfloat (cd.last, ==, 1.0);
      for (const ScTokenLooResult *r = mask; r != NULL; r = r == mask ? drop : NULL)
        {
          g_assert_cmpint (r->n_tokens, ==, N);
          g_assert_cmpint (r->target, ==, both->target);
          g_assert_cmpint (r->top1_clean, ==, both->top1_clean);
          assert_same_double (r->logp_clean, both->logp_clean);
          assert_same_double (r->loss_clean, both->loss_clean);
        }
      for (j = 0; j < N; j++)
        {
          assert_same_effect (&mask->mask[j], &both->mask[j]);
          assert_same_effect (&drop->drop[j], &both->drop[j]);
          assert_nan_effect (&mask->drop[j]);
          assert_nan_effect (&drop->mask[j]);
        }
      /* the halves hold numbers (the comparison above is not NaN against NaN) */
      g_assert_true (isfinite (mask->mask[0].next.tv));
      g_assert_true (isfinite (drop->drop[0].next.tv));
      sc_token_loo_result_free (both);
      sc_token_loo_result_free (mask);
      sc_token_loo_result_free (drop);
    }
  fixture_clear (&f);
}

/* 2. */
static void
test_bad_kinds (void)
{
  Fixture f;
  ScAblationParams p = { .target = -1, .contrast = -1, .loo_kinds = 4 };
  ScTokenLooResult *r = NULL, *z;
  ScError err = { 0 };
  char buf[128];

  fixture_init (&f, sc_test_tiny_model ());
  g_assert_cmpint (sc_token_loo_run (f.s, f.m, ids, N, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_null (r);
  g_assert_nonnull (strstr (err.message, "kinds"));
  p.loo_kinds = SC_LOO_BOTH | 8;
  g_assert_cmpint (sc_token_loo_run (f.s, f.m, ids, N, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_TOKENS, 1, &p, buf, sizeof buf),
                   ==, -1);
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_HEADS, 1, &p, buf, sizeof buf),
                   ==, -1);
  /* 0 is both */
  p.loo_kinds = 0;
  g_assert_cmpint (sc_token_loo_run (f.s, f.m, ids, N, &p, NULL, NULL, &r, &err), ==, SC_OK);
  g_assert_cmpuint (r->kinds, ==, SC_LOO_BOTH);
  g_assert_true (isfinite (r->mask[0].next.tv) && isfinite (r->drop[0].next.tv));
  sc_token_loo_result_free (r);
  /* a result of no kind is not stored (checked before the store is touched) */
  z = sc_token_loo_result_new (N);
  g_assert_cmpuint (z->kinds, ==, SC_LOO_BOTH);
  z->kinds = 0;
  g_assert_cmpint (sc_token_loo_store (NULL, NULL, "{}", z, NULL, &err), ==,
                   SC_ERR_INVALID_ARG);
  z->kinds = 5;
  g_assert_cmpint (sc_token_loo_store (NULL, NULL, "{}", z, NULL, &err), ==,
                   SC_ERR_INVALID_ARG);
  sc_token_loo_result_free (z);
  fixture_clear (&f);
}

/* 3. */
static void
test_params_text (void)
{
  ScAblationParams p = { .target = -1, .contrast = -1 };
  char buf[160];

  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_TOKENS, 7, &p, buf, sizeof buf),
                   >, 0);
  g_assert_cmpstr (buf, ==, "{\"study\":1,\"run\":7,\"target\":null,\"mode\":\"zero\"}");
  p.loo_kinds = SC_LOO_BOTH; /* the same study as the default */
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_TOKENS, 7, &p, buf, sizeof buf),
                   >, 0);
  g_assert_cmpstr (buf, ==, "{\"study\":1,\"run\":7,\"target\":null,\"mode\":\"zero\"}");
  p.loo_kinds = SC_LOO_MASK;
  p.target = 42;
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_TOKENS, 7, &p, buf, sizeof buf),
                   >, 0);
  g_assert_cmpstr (buf, ==, "{\"study\":1,\"run\":7,\"target\":42,\"mode\":\"zero\","
                            "\"kinds\":\"mask\"}");
  p.loo_kinds = SC_LOO_DROP;
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_TOKENS, 7, &p, buf, sizeof buf),
                   >, 0);
  g_assert_cmpstr (buf, ==, "{\"study\":1,\"run\":7,\"target\":42,\"mode\":\"zero\","
                            "\"kinds\":\"drop\"}");
  /* a head sweep has no erasure kinds */
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_HEADS, 7, &p, buf, sizeof buf),
                   >, 0);
  g_assert_cmpstr (buf, ==, "{\"study\":1,\"run\":7,\"target\":42,\"mode\":\"zero\"}");
  /* the documented sizes, at the widest numbers */
  p.target = INT32_MAX;
  p.loo_kinds = 0;
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_TOKENS, INT64_MIN, &p, buf, 80),
                   >, 0);
  p.loo_kinds = SC_LOO_DROP;
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_TOKENS, INT64_MIN, &p, buf, 96),
                   >, 0);
  /* too small: refused, not cut */
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_TOKENS, 7, &p, buf, 50), ==, -1);
}

/* 4. */
static void
test_store_one_kind (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-loo-kinds-XXXXXX", NULL);
  g_autofree char *model_path = g_build_filename (dir, "tiny.gguf", NULL);
  g_autofree char *db_path = g_build_filename (dir, "s.sqlite", NULL);
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreModel sm;
  ScModel *m = NULL;
  Fixture f;
  ScAblationParams both_p = { .target = -1, .contrast = -1 }, one_p = { .target = -1 };
  ScTokenLooResult *r = NULL, *back = NULL;
  ScError err = { 0 };
  char pboth[128], pone[128];
  gsize len;
  const void *d;
  int k, j;

  d = g_bytes_get_data (sc_test_tiny_bytes (), &len);
  g_assert_true (g_file_set_contents (model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (model_path, 1, &m, &err), ==, SC_OK);
  fixture_init (&f, m);
  g_assert_cmpint (sc_store_model_identify (m, model_path, &sm, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_TOKENS, 3, &both_p, pboth,
                                            sizeof pboth), >, 0);
  for (k = 0; k < 2; k++)
    {
      one_p.loo_kinds = k == 0 ? SC_LOO_MASK : SC_LOO_DROP;
      g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_TOKENS, 3, &one_p, pone,
                                                sizeof pone), >, 0);
      g_assert_cmpint (sc_token_loo_run (f.s, m, ids, N, &one_p, NULL, NULL, &r, &err), ==,
                       SC_OK);
      g_assert_cmpint (sc_token_loo_store (store, &sm, pone, r, NULL, &err), ==, SC_OK);
      g_assert_cmpint (sc_token_loo_load (store, f.in, sm.sha256, pone, &back, NULL, &err), ==,
                       SC_OK);
      g_assert_cmpuint (back->kinds, ==, one_p.loo_kinds);
      g_assert_cmpint (back->target, ==, r->target);
      /* the query's entries are NaN either way (the store keeps no NaN payload) */
      for (j = 0; j < N - 1; j++)
        {
          assert_same_effect (&back->mask[j], &r->mask[j]);
          assert_same_effect (&back->drop[j], &r->drop[j]);
        }
      assert_nan_effect (&back->mask[N - 1]);
      assert_nan_effect (&back->drop[N - 1]);
      sc_token_loo_result_free (back);
      back = NULL;
      sc_token_loo_result_free (r);
      r = NULL;
      /* a reader that wants both kinds does not find it */
      g_assert_cmpint (sc_token_loo_load (store, f.in, sm.sha256, pboth, &back, NULL, &err), ==,
                       SC_ERR_NOT_FOUND);
      g_assert_null (back);
    }
  /* a both-kinds study reads back with both */
  g_assert_cmpint (sc_token_loo_run (f.s, m, ids, N, &both_p, NULL, NULL, &r, &err), ==, SC_OK);
  g_assert_cmpint (sc_token_loo_store (store, &sm, pboth, r, NULL, &err), ==, SC_OK);
  g_assert_cmpint (sc_token_loo_load (store, f.in, sm.sha256, pboth, &back, NULL, &err), ==,
                   SC_OK);
  g_assert_cmpuint (back->kinds, ==, SC_LOO_BOTH);
  sc_token_loo_result_free (back);
  sc_token_loo_result_free (r);
  sc_store_close (store);
  fixture_clear (&f);
  g_remove (db_path);
  g_remove (model_path);
  g_rmdir (dir);
}

/* 5. */
static void
test_faithfulness_one_kind (void)
{
  Fixture f;
  ScError err = { 0 };
  ScAblationParams both_p = { .target = -1, .contrast = -1 };
  ScTokenLooResult *both = NULL;
  int k, j;

  fixture_init (&f, sc_test_tiny_model ());
  g_assert_cmpint (sc_token_loo_run (f.s, f.m, ids, N, &both_p, NULL, NULL, &both, &err), ==,
                   SC_OK);
  /* the two erasure kinds (the third reference, causal tracing, runs no leave-one-out:
   * test-faithfulness /trace-reference) */
  for (k = SC_FAITH_ERASE_MASK; k <= SC_FAITH_ERASE_DROP; k++)
    {
      const ScFaithParams fp = { .metric = SC_FAITH_METRIC_TV, .kind = (ScFaithErase) k,
                                 .target = -1 };
      ScFaithResult *own = NULL, *given = NULL;
      ScTokenLooResult *loo = NULL;

      g_assert_cmpint (sc_faith_run (f.s, f.m, ids, N, &fp, NULL, NULL, NULL, &own, &loo, &err),
                       ==, SC_OK);
      g_assert_nonnull (loo);
      g_assert_cmpuint (loo->kinds, ==, k == SC_FAITH_ERASE_MASK ? SC_LOO_MASK : SC_LOO_DROP);
      g_assert_cmpint (sc_faith_run (f.s, f.m, ids, N, &fp, both, NULL, NULL, &given, NULL,
                                     &err), ==, SC_OK);
      g_assert_cmpint (own->n_items, ==, N - 1);
      for (j = 0; j < N - 1; j++)
        {
          g_assert_true (isfinite (own->loo[j]));
          assert_same_double (own->loo[j], given->loo[j]);
        }
      sc_faith_result_free (own);
      sc_faith_result_free (given);
      sc_token_loo_result_free (loo);
    }
  sc_token_loo_result_free (both);
  fixture_clear (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/loo-kinds/one-kind-equals-half", test_one_kind_equals_half);
  g_test_add_func ("/loo-kinds/bad-kinds", test_bad_kinds);
  g_test_add_func ("/loo-kinds/params-text", test_params_text);
  g_test_add_func ("/loo-kinds/store-one-kind", test_store_one_kind);
  g_test_add_func ("/loo-kinds/faithfulness-one-kind", test_faithfulness_one_kind);
  return g_test_run ();
}
