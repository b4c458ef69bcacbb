/* test-ablation.c — the head sweep and token leave-one-out (engine/study/
 * sc-ablation-study.h), on the tiny llama of sc-test-gguf (2 layers x 4 heads) and, where it
 * is fetched, the default model.
 *
 * 1. The head sweep with prefix reuse equals, bit for bit and for every head, the same
 *    ablations run here as full recomputes in a fresh session (and the study's own
 *    full_recompute mode).
 * 2. Ablating nothing (a prefix-reusing rerun with no change) gives zero effects exactly.
 * 3. Masking token j equals a full run with that token_mask bit for bit; dropping j equals a
 *    run on the ids without j; the last token is never erased (NaN entries).
 * 4. Cancelling mid-sweep returns SC_ERR_CANCELLED and no result.
 * 5. Bad input is refused: target out of range, no tokens, one token for leave-one-out,
 *    mean-ablation without means.
 * 6. Stored and read back through the study API: the same numbers; other params not found.
 * 7. SmolLM2 (skipped when not fetched): a sweep of 270 heads on 8 tokens, measures in range.
 * 8. A contrast B: every head's and every erased token's Δ (logit(A) − logit(B)) equals the
 *    difference recomputed here from the same runs' logits (mask and drop: at n − 2 for a
 *    drop), the other measures are unchanged bit for bit by asking for it; stored and read
 *    back (its params text names B; the plain text is the one written before contrasts);
 *    a contrast that is the target, or a stored one its params do not name, is refused.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "engine/analysis/sc-effect.h"
#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store-study.h"
#include "engine/study/sc-ablation-study.h"
#include "tests/engine/sc-test-gguf.h"


static const int32_t ids[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10, 200, 201 };
#define N ((int) G_N_ELEMENTS (ids))

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

/* Bitwise equality of doubles (NaN equals NaN of the same bits). */
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

/* The effect of @ablated against @clean (two (n, V) blocks of @ids), as the header defines
 * it for the same ids. */
static ScAblationEffect
expected_effect (const float *clean, const float *ablated, const int32_t *t, int n, int V,
                 int target)
{
  ScAblationEffect e = { 0 };
  ScError err = { 0 };

  g_assert_cmpint (sc_effect_next_token (clean + (size_t) (n - 1) * V,
                                         ablated + (size_t) (n - 1) * V, V, target, &e.next,
                                         &err), ==, SC_OK);
  g_assert_cmpint (sc_delta_loss_logits (clean, ablated, t, n, V, &e.delta_loss, &err), ==,
                   SC_OK);
  e.flipped = e.next.top1_ablated != e.next.top1_clean;
  return e;
}

/* 1. */
static void
test_heads_prefix_equals_full (void)
{
  Fixture f, g;
  ScAblationParams p = { .target = -1, .contrast = -1 };
  ScHeadSweepResult *r = NULL, *rf = NULL;
  ScError err = { 0 };
  g_autofree float *clean = NULL, *abl = NULL, *scale = NULL;
  ScForwardOptions opt = { .all_logits = true };
  ScIntervention iv = { 0 };
  int i;

  fixture_init (&f, sc_test_tiny_model ());
  fixture_init (&g, sc_test_tiny_model ());
  g_assert_cmpint (sc_head_sweep_run (f.s, f.m, ids, N, &p, NULL, NULL, &r, &err), ==, SC_OK);
  p.full_recompute = true;
  g_assert_cmpint (sc_head_sweep_run (f.s, f.m, ids, N, &p, NULL, NULL, &rf, &err), ==, SC_OK);
  g_assert_cmpint (r->n_layers, ==, f.L);
  g_assert_cmpint (r->n_heads, ==, f.H);

  clean = g_new (float, (gsize) N * f.V);
  abl = g_new (float, (gsize) N * f.V);
  scale = g_new (float, f.L * f.H);
  g_assert_cmpint (sc_forward (g.s, ids, N, &opt, clean, &err), ==, SC_OK);
  g_assert_cmpint (r->top1_clean, ==, sc_logits_top1 (clean + (size_t) (N - 1) * f.V, f.V));
  g_assert_cmpint (r->target, ==, r->top1_clean);
  for (i = 0; i < f.L * f.H; i++)
    scale[i] = 1.0f;
  iv.head_scale = scale;
  opt.intervention = &iv;
  for (i = 0; i < f.L * f.H; i++)
    {
      ScAblationEffect e;
      scale[i] = 0.0f;
      g_assert_cmpint (sc_forward (g.s, ids, N, &opt, abl, &err), ==, SC_OK);
      scale[i] = 1.0f;
      e = expected_effect (clean, abl, ids, N, f.V, r->target);
      assert_same_effect (&r->heads[i], &e);
      assert_same_effect (&rf->heads[i], &e);
      /* Zero-ablating a head of a random model changes the output. */
      g_assert_cmpfloat (r->heads[i].next.tv, >, 0.0);
    }
  sc_head_sweep_result_free (r);
  sc_head_sweep_result_free (rf);
  fixture_clear (&f);
  fixture_clear (&g);
}

/* 2. */
static void
test_nothing_ablated (void)
{
  Fixture f;
  ScError err = { 0 };
  g_autofree float *clean = NULL, *again = NULL, *ones = NULL;
  ScForwardOptions keep = { .all_logits = true, .keep_residuals = true };
  ScForwardOptions reuse = { .all_logits = true };
  ScIntervention iv = { 0 };
  ScAblationEffect e;
  int l, i;

  fixture_init (&f, sc_test_tiny_model ());
  clean = g_new (float, (gsize) N * f.V);
  again = g_new (float, (gsize) N * f.V);
  ones = g_new (float, f.L * f.H);
  for (i = 0; i < f.L * f.H; i++)
    ones[i] = 1.0f;
  iv.head_scale = ones;
  reuse.intervention = &iv;
  g_assert_cmpint (sc_forward (f.s, ids, N, &keep, clean, &err), ==, SC_OK);
  for (l = 0; l <= f.L; l++)
    {
      reuse.start_layer = l;
      g_assert_cmpint (sc_forward (f.s, ids, N, &reuse, again, &err), ==, SC_OK);
      e = expected_effect (clean, again, ids, N, f.V, 7);
      g_assert_cmpfloat (e.next.delta_logp, ==, 0.0);
      g_assert_cmpfloat (e.next.tv, ==, 0.0);
      g_assert_cmpfloat (e.next.jsd, ==, 0.0);
      g_assert_cmpfloat (e.delta_loss, ==, 0.0);
      g_assert_false (e.flipped);
    }
  fixture_clear (&f);
}

/* 3. */
static void
test_tokens (void)
{
  Fixture f;
  ScAblationParams p = { .target = 101, .contrast = -1 };
  ScTokenLooResult *r = NULL;
  ScError err = { 0 };
  g_autofree float *clean = NULL, *abl = NULL;
  g_autofree uint8_t *mask = g_new0 (uint8_t, N);
  int32_t dids[N];
  ScForwardOptions opt = { .all_logits = true };
  ScIntervention iv = { .token_mask = mask };
  int j, k;

  fixture_init (&f, sc_test_tiny_model ());
  g_assert_cmpint (sc_token_loo_run (f.s, f.m, ids, N, &p, NULL, NULL, &r, &err), ==, SC_OK);
  g_assert_cmpint (r->n_tokens, ==, N);
  g_assert_cmpint (r->target, ==, 101);
  clean = g_new (float, (gsize) N * f.V);
  abl = g_new (float, (gsize) N * f.V);
  g_assert_cmpint (sc_forward (f.s, ids, N, &opt, clean, &err), ==, SC_OK);
  for (j = 0; j < N - 1; j++)
    {
      ScAblationEffect e;
      double sum = 0.0, lc, ld;
      int m = 0, q;

      mask[j] = 1;
      opt.intervention = &iv;
      g_assert_cmpint (sc_forward (f.s, ids, N, &opt, abl, &err), ==, SC_OK);
      mask[j] = 0;
      e = expected_effect (clean, abl, ids, N, f.V, 101);
      assert_same_effect (&r->mask[j], &e);

      for (k = 0; k < N - 1; k++)
        dids[k] = ids[k < j ? k : k + 1];
      opt.intervention = NULL;
      g_assert_cmpint (sc_forward (f.s, dids, N - 1, &opt, abl, &err), ==, SC_OK);
      g_assert_cmpint (sc_effect_next_token (clean + (size_t) (N - 1) * f.V,
                                             abl + (size_t) (N - 2) * f.V, f.V, 101, &e.next,
                                             &err), ==, SC_OK);
      /* Δ mean loss over the tokens both runs predict, spelled out. */
      for (q = 1; q < N; q++)
        if (q != j && (q < j ? q : q - 1) >= 1)
          {
            const int nq = q < j ? q : q - 1;
            sc_log_softmax_at (clean + (size_t) (q - 1) * f.V, f.V, ids[q], &lc, NULL);
            sc_log_softmax_at (abl + (size_t) (nq - 1) * f.V, f.V, dids[nq], &ld, NULL);
            sum += lc - ld;
            m++;
          }
      g_assert_cmpint (m, ==, N - 2);
      e.delta_loss = sum / m;
      e.flipped = e.next.top1_ablated != e.next.top1_clean;
      assert_same_effect (&r->drop[j], &e);
    }
  /* The query is never erased. */
  g_assert_true (isnan (r->mask[N - 1].next.delta_logp));
  g_assert_true (isnan (r->drop[N - 1].delta_loss));
  g_assert_cmpint (r->mask[N - 1].next.top1_ablated, ==, -1);
  sc_token_loo_result_free (r);
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

/* 4. */
static void
test_cancel (void)
{
  Fixture f;
  ScAblationParams p = { .target = -1, .contrast = -1 };
  ScHeadSweepResult *r = NULL;
  ScTokenLooResult *t = NULL;
  ScError err = { 0 };
  Cancel c = { 0, 3, 0.0 };

  fixture_init (&f, sc_test_tiny_model ());
  g_assert_cmpint (sc_head_sweep_run (f.s, f.m, ids, N, &p, cancel_after, &c, &r, &err), ==,
                   SC_ERR_CANCELLED);
  g_assert_null (r);
  g_assert_cmpint (c.calls, ==, 3);
  c = (Cancel) { 0, 2, 0.0 };
  g_assert_cmpint (sc_token_loo_run (f.s, f.m, ids, N, &p, cancel_after, &c, &t, &err), ==,
                   SC_ERR_CANCELLED);
  g_assert_null (t);
  /* A full sweep reports 8 steps ending at exactly 1. */
  c = (Cancel) { 0, 1000, 0.0 };
  g_assert_cmpint (sc_head_sweep_run (f.s, f.m, ids, N, &p, cancel_after, &c, &r, &err), ==,
                   SC_OK);
  g_assert_cmpint (c.calls, ==, f.L * f.H);
  g_assert_cmpfloat (c.last, ==, 1.0);
  sc_head_sweep_result_free (r);
  fixture_clear (&f);
}

/* 5. */
static void
test_invalid (void)
{
  Fixture f;
  ScAblationParams p = { .target = -1, .contrast = -1 };
  ScHeadSweepResult *r = NULL;
  ScTokenLooResult *t = NULL;
  ScError err = { 0 };
  const int32_t bad[] = { 1, 99999 };

  fixture_init (&f, sc_test_tiny_model ());
  p.target = f.V;
  g_assert_cmpint (sc_head_sweep_run (f.s, f.m, ids, N, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "target"));
  g_assert_cmpint (sc_token_loo_run (f.s, f.m, ids, N, &p, NULL, NULL, &t, &err), ==,
                   SC_ERR_INVALID_ARG);
  p.target = -1;
  g_assert_cmpint (sc_head_sweep_run (f.s, f.m, ids, 0, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_token_loo_run (f.s, f.m, ids, 1, &p, NULL, NULL, &t, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "never erased"));
  g_assert_cmpint (sc_head_sweep_run (f.s, f.m, bad, 2, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  p.mode = SC_ABLATE_MEAN;
  g_assert_cmpint (sc_head_sweep_run (f.s, f.m, ids, N, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "mean"));
  g_assert_null (r);
  g_assert_null (t);
  /* A one-token head sweep has effects but no loss. */
  p.mode = SC_ABLATE_ZERO;
  g_assert_cmpint (sc_head_sweep_run (f.s, f.m, ids, 1, &p, NULL, NULL, &r, &err), ==, SC_OK);
  g_assert_true (isnan (r->heads[0].delta_loss));
  g_assert_true (isfinite (r->heads[0].next.tv));
  sc_head_sweep_result_free (r);
  fixture_clear (&f);
}

/* 6. */
static void
test_store_roundtrip (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-ablation-XXXXXX", NULL);
  g_autofree char *model_path = g_build_filename (dir, "tiny.gguf", NULL);
  g_autofree char *db_path = g_build_filename (dir, "s.sqlite", NULL);
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreModel sm;
  ScModel *m = NULL;
  Fixture f;
  ScAblationParams p = { .target = -1, .contrast = -1 };
  ScHeadSweepResult *r = NULL, *back = NULL;
  ScTokenLooResult *t = NULL, *tback = NULL;
  ScError err = { 0 };
  char pj[128], pt[128];
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

  g_assert_cmpint (sc_head_sweep_run (f.s, m, ids, N, &p, NULL, NULL, &r, &err), ==, SC_OK);
  g_assert_cmpint (sc_token_loo_run (f.s, m, ids, N, &p, NULL, NULL, &t, &err), ==, SC_OK);
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_HEADS, 5, &p, pj, sizeof pj), >,
                   0);
  g_assert_cmpstr (pj, ==, "{\"study\":1,\"run\":5,\"target\":null,\"mode\":\"zero\"}");
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_TOKENS, 5, &p, pt, sizeof pt), >,
                   0);
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_TOKENS, 5, &p, pt, 8), ==, -1);
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_TOKENS, 5, &p, pt, sizeof pt), >,
                   0);
  g_assert_cmpint (sc_head_sweep_load (store, f.in, sm.sha256, pj, &back, NULL, &err), ==,
                   SC_ERR_NOT_FOUND);
  g_assert_cmpint (sc_head_sweep_store (store, &sm, pj, r, &id, &err), ==, SC_OK);
  g_assert_cmpint (sc_token_loo_store (store, &sm, pt, t, &id2, &err), ==, SC_OK);
  g_assert_cmpint (sc_head_sweep_load (store, f.in, sm.sha256, pj, &back, &id2, &err), ==,
                   SC_OK);
  g_assert_cmpint (id2, ==, id);
  g_assert_cmpint (back->target, ==, r->target);
  g_assert_cmpint (back->n_tokens, ==, N);
  for (i = 0; i < f.L * f.H; i++)
    assert_same_effect (&back->heads[i], &r->heads[i]);
  g_assert_cmpint (sc_token_loo_load (store, f.in, sm.sha256, pt, &tback, NULL, &err), ==,
                   SC_OK);
  for (i = 0; i < N - 1; i++)
    {
      assert_same_effect (&tback->mask[i], &t->mask[i]);
      assert_same_effect (&tback->drop[i], &t->drop[i]);
    }
  /* Other params: not reused. */
  p.target = 3;
  sc_ablation_params_json (SC_ABLATION_KIND_HEADS, 5, &p, pj, sizeof pj);
  sc_head_sweep_result_free (back);
  back = NULL;
  g_assert_cmpint (sc_head_sweep_load (store, f.in, sm.sha256, pj, &back, NULL, &err), ==,
                   SC_ERR_NOT_FOUND);
  sc_store_close (store);
  sc_head_sweep_result_free (r);
  sc_token_loo_result_free (t);
  sc_token_loo_result_free (tback);
  fixture_clear (&f);
  g_remove (db_path);
  g_remove (model_path);
  g_rmdir (dir);
}

/* 8. */
static void
test_contrast (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-ablation-XXXXXX", NULL);
  g_autofree char *model_path = g_build_filename (dir, "tiny.gguf", NULL);
  g_autofree char *db_path = g_build_filename (dir, "s.sqlite", NULL);
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreModel sm;
  ScModel *m = NULL;
  Fixture f;
  ScAblationParams p = { .target = -1, .contrast = -1 }, pc;
  ScHeadSweepResult *r = NULL, *rc = NULL, *back = NULL;
  ScTokenLooResult *t = NULL, *tc = NULL, *tback = NULL;
  ScError err = { 0 };
  g_autofree float *clean = NULL, *abl = NULL, *scale = NULL;
  g_autofree int32_t *dids = NULL;
  g_autofree uint8_t *mask = NULL;
  ScForwardOptions opt = { .all_logits = true };
  ScIntervention iv = { 0 };
  char pj[128];
  double m_clean;
  int i, j, A, B;
  gsize len;
  const void *d;

  d = g_bytes_get_data (sc_test_tiny_bytes (), &len);
  g_assert_true (g_file_set_contents (model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (model_path, 1, &m, &err), ==, SC_OK);
  fixture_init (&f, m);
  g_assert_cmpint (sc_head_sweep_run (f.s, m, ids, N, &p, NULL, NULL, &r, &err), ==, SC_OK);
  g_assert_cmpint (sc_token_loo_run (f.s, m, ids, N, &p, NULL, NULL, &t, &err), ==, SC_OK);
  A = r->target;
  B = A == 7 ? 8 : 7;
  pc = p;
  pc.contrast = B;
  g_assert_cmpint (sc_head_sweep_run (f.s, m, ids, N, &pc, NULL, NULL, &rc, &err), ==, SC_OK);
  g_assert_cmpint (sc_token_loo_run (f.s, m, ids, N, &pc, NULL, NULL, &tc, &err), ==, SC_OK);
  g_assert_cmpint (rc->contrast, ==, B);
  g_assert_cmpint (r->contrast, ==, -1);
  g_assert_true (isnan (r->heads[0].delta_logit_diff));

  /* by hand, from the runs' own logits */
  clean = g_new (float, (gsize) N * f.V);
  abl = g_new (float, (gsize) N * f.V);
  scale = g_new (float, f.L * f.H);
  g_assert_cmpint (sc_forward (f.s, ids, N, &opt, clean, &err), ==, SC_OK);
  m_clean = (double) clean[(size_t) (N - 1) * f.V + A] - clean[(size_t) (N - 1) * f.V + B];
  g_assert_cmpfloat (rc->logit_diff_clean, ==, m_clean);
  g_assert_cmpfloat (tc->logit_diff_clean, ==, m_clean);
  for (i = 0; i < f.L * f.H; i++)
    scale[i] = 1.0f;
  iv.head_scale = scale;
  opt.intervention = &iv;
  for (i = 0; i < f.L * f.H; i++)
    {
      const float *z = abl + (size_t) (N - 1) * f.V;
      scale[i] = 0.0f;
      g_assert_cmpint (sc_forward (f.s, ids, N, &opt, abl, &err), ==, SC_OK);
      scale[i] = 1.0f;
      g_assert_cmpfloat (fabs (rc->heads[i].delta_logit_diff
                               - (((double) z[A] - z[B]) - m_clean)), <=, 1e-6);
      assert_same_effect (&rc->heads[i], &r->heads[i]);
    }
  mask = g_new0 (uint8_t, N);
  dids = g_new (int32_t, N);
  iv = (ScIntervention) { .token_mask = mask };
  for (j = 0; j < N - 1; j++)
    {
      const float *z;
      mask[j] = 1;
      g_assert_cmpint (sc_forward (f.s, ids, N, &opt, abl, &err), ==, SC_OK);
      mask[j] = 0;
      z = abl + (size_t) (N - 1) * f.V;
      g_assert_cmpfloat (fabs (tc->mask[j].delta_logit_diff
                               - (((double) z[A] - z[B]) - m_clean)), <=, 1e-6);
      for (i = 0; i < N - 1; i++)
        dids[i] = ids[i + (i >= j)];
      opt.intervention = NULL;
      g_assert_cmpint (sc_forward (f.s, dids, N - 1, &opt, abl, &err), ==, SC_OK);
      opt.intervention = &iv;
      z = abl + (size_t) (N - 2) * f.V;
      g_assert_cmpfloat (fabs (tc->drop[j].delta_logit_diff
                               - (((double) z[A] - z[B]) - m_clean)), <=, 1e-6);
      assert_same_effect (&tc->mask[j], &t->mask[j]);
      assert_same_effect (&tc->drop[j], &t->drop[j]);
    }
  g_assert_true (isnan (tc->mask[N - 1].delta_logit_diff));

  /* the store */
  g_assert_cmpint (sc_store_model_identify (m, model_path, &sm, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_HEADS, 5, &pc, pj, sizeof pj), >,
                   0);
  {
    g_autofree char *want = g_strdup_printf ("{\"study\":1,\"run\":5,\"target\":null,"
                                             "\"contrast\":%d,\"mode\":\"zero\"}", B);
    g_assert_cmpstr (pj, ==, want);
  }
  g_assert_cmpint (sc_head_sweep_store (store, &sm, pj, rc, NULL, &err), ==, SC_OK);
  g_assert_cmpint (sc_head_sweep_load (store, f.in, sm.sha256, pj, &back, NULL, &err), ==,
                   SC_OK);
  g_assert_cmpint (back->contrast, ==, B);
  g_assert_cmpfloat (back->logit_diff_clean, ==, rc->logit_diff_clean);
  for (i = 0; i < f.L * f.H; i++)
    g_assert_cmpfloat (back->heads[i].delta_logit_diff, ==, rc->heads[i].delta_logit_diff);
  sc_head_sweep_result_free (back);
  back = NULL;
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_TOKENS, 5, &pc, pj, sizeof pj), >,
                   0);
  g_assert_cmpint (sc_token_loo_store (store, &sm, pj, tc, NULL, &err), ==, SC_OK);
  g_assert_cmpint (sc_token_loo_load (store, f.in, sm.sha256, pj, &tback, NULL, &err), ==,
                   SC_OK);
  for (j = 0; j < N - 1; j++)
    {
      g_assert_cmpfloat (tback->mask[j].delta_logit_diff, ==, tc->mask[j].delta_logit_diff);
      g_assert_cmpfloat (tback->drop[j].delta_logit_diff, ==, tc->drop[j].delta_logit_diff);
    }
  sc_token_loo_result_free (tback);
  tback = NULL;
  /* a sweep with a contrast stored under the plain params text (edited by hand): refused */
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_HEADS, 5, &p, pj, sizeof pj), >,
                   0);
  g_assert_cmpint (sc_head_sweep_store (store, &sm, pj, rc, NULL, &err), ==, SC_OK);
  g_assert_cmpint (sc_head_sweep_load (store, f.in, sm.sha256, pj, &back, NULL, &err), ==,
                   SC_ERR_FORMAT);
  g_assert_nonnull (strstr (err.message, "no contrast"));
  g_assert_null (back);
  sc_store_close (store);

  /* refused: the contrast is the target; outside the vocabulary */
  pc.contrast = A;
  g_assert_cmpint (sc_head_sweep_run (f.s, m, ids, N, &pc, NULL, NULL, &back, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "is the target"));
  pc.contrast = f.V;
  g_assert_cmpint (sc_token_loo_run (f.s, m, ids, N, &pc, NULL, NULL, &tback, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "contrast"));
  g_assert_null (back);
  g_assert_null (tback);
  sc_head_sweep_result_free (r);
  sc_head_sweep_result_free (rc);
  sc_token_loo_result_free (t);
  sc_token_loo_result_free (tc);
  fixture_clear (&f);
  g_remove (db_path);
  g_remove (model_path);
  g_rmdir (dir);
}

/* 7. */
static void
test_default_model (void)
{
  const char *env = g_getenv ("SACCADE_MODEL");
  g_autofree char *path = env != NULL ? g_strdup (env)
                                      : g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"),
                                                          "data", "models",
                                                          "SmolLM2-135M-Instruct.Q4_1.gguf",
                                                          NULL);
  const int32_t tok[] = { 1, 504, 3458, 282, 4649, 314, 1345, 30 };
  ScAblationParams p = { .target = -1, .contrast = -1 };
  ScHeadSweepResult *r = NULL;
  ScModel *m = NULL;
  ScError err = { 0 };
  Fixture f;
  int i, flips = 0;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("the default model is not fetched (data/fetch-model.sh)");
      return;
    }
  if (sc_model_open (path, 2, &m, &err) != SC_OK)
    g_error ("%s", err.message);
  fixture_init (&f, m);
  g_assert_cmpint (sc_head_sweep_run (f.s, m, tok, G_N_ELEMENTS (tok), &p, NULL, NULL, &r,
                                      &err), ==, SC_OK);
  g_assert_cmpint (r->n_layers * r->n_heads, ==, 270);
  for (i = 0; i < 270; i++)
    {
      const ScAblationEffect *e = &r->heads[i];
      g_assert_true (isfinite (e->next.delta_logp) && isfinite (e->delta_loss));
      g_assert_cmpfloat (e->next.tv, >=, 0.0);
      g_assert_cmpfloat (e->next.tv, <=, 1.0);
      g_assert_cmpfloat (e->next.jsd, >=, 0.0);
      g_assert_cmpfloat (e->next.jsd, <=, log (2.0) + 1e-12);
      flips += e->flipped;
    }
  /* One head of 270 rarely decides the next token: most ablations keep the top-1. */
  g_assert_cmpint (flips, <, 135);
  sc_head_sweep_result_free (r);
  fixture_clear (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ablation/heads-prefix-equals-full", test_heads_prefix_equals_full);
  g_test_add_func ("/ablation/nothing-ablated", test_nothing_ablated);
  g_test_add_func ("/ablation/tokens", test_tokens);
  g_test_add_func ("/ablation/cancel", test_cancel);
  g_test_add_func ("/ablation/invalid", test_invalid);
  g_test_add_func ("/ablation/store-roundtrip", test_store_roundtrip);
  g_test_add_func ("/ablation/contrast", test_contrast);
  g_test_add_func ("/ablation/default-model", test_default_model);
  return g_test_run ();
}
