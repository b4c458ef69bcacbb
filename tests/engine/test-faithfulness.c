/* test-faithfulness.c — attention importance against leave-one-out importance
 * (engine/study/sc-faithfulness.h) on the tiny llama of sc-test-gguf (2 layers x 4 heads).
 *
 * 1. Brute force: every head's full matrices captured here by an observer of our own, and
 *    leave-one-out recomputed here with sc_forward and a token_mask per token (TV, JSD and
 *    |Δ log p| from sc-effect.h); the study's importances of every source (last-layer mean,
 *    each head, rollout, flow: the latter two from sc-rollout.h over all heads) and its
 *    τ, ρ, p-values and top-k overlap equal the ones computed here from those.
 * 2. Known answers: a source equal to (or a monotone function of) the leave-one-out vector
 *    gives τ = ρ = 1 and top-k overlap 1; its reverse τ = ρ = −1; a constant vector is
 *    undefined with a reason, not an error.
 * 3. File aggregation against numbers worked by hand: mean, std (ddof = 1), share with
 *    p < 0.05, undefined sentences counted apart, the best and median head.
 * 4. The head level against a hand-built sweep: ρ = ±1 for monotone vectors, NaN heads left
 *    out.
 * 5. Stored and read back: the same numbers; other params are another study; hostile stored
 *    values (τ = 2, a negative importance, an unknown status, n too small) are refused with
 *    SC_ERR_FORMAT naming the value.
 * 6. Cancel returns SC_ERR_CANCELLED with no result, and nothing reaches the store; too few
 *    tokens and bad params are refused.
 * 8. Without the first token and the statistics (sc_faith_sentence_stats): the agreements
 *    without token 0 equal the rank statistics of the sliced vectors; the uniform baseline
 *    equals the two-layer rollout of uniform attention written out here; the best head's
 *    Holm p, the heads' BH count, every interval and null equal sc-stats.h called here on
 *    the vectors of the set reported; the same numbers after a round trip through the store;
 *    a study stored without the heads' "-nf" metrics (as before them) still reads back.
 * 7. SmolLM2 (skipped when not fetched), 70 tokens with a leave-one-out result handed in:
 *    flow is past its work ceiling (30 layers x 70 tokens) and reported unavailable with
 *    the reason, while the other sources are defined.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "engine/analysis/sc-effect.h"
#include "engine/analysis/sc-rank.h"
#include "engine/analysis/sc-rollout.h"
#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store-study.h"
#include "engine/study/sc-faithfulness.h"
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

/* Every head's full (n, n) matrix: (L, H, n, n). */
typedef struct {
  int H, n;
  float *all;
} Capture;

static bool
capture_observe (void *user, int layer, int head, const float *probs, int nq, int nk)
{
  Capture *c = user;

  g_assert_cmpint (nq, ==, c->n);
  g_assert_cmpint (nk, ==, c->n);
  memcpy (c->all + ((size_t) layer * c->H + head) * c->n * c->n, probs,
          (size_t) c->n * c->n * sizeof *probs);
  return true;
}

static void
assert_agreement (const ScFaithAgreement *got, const double *attn, const double *loo, int n,
                  int k)
{
  ScKendall kt;
  ScSpearman sp;
  double topk;

  g_assert_cmpint (got->status, ==, SC_OK);
  g_assert_cmpint (sc_kendall_tau_b (attn, loo, n, &kt, NULL), ==, SC_OK);
  g_assert_cmpint (sc_spearman_rho (attn, loo, n, &sp, NULL), ==, SC_OK);
  g_assert_cmpint (sc_topk_overlap (attn, loo, n, k, &topk, NULL), ==, SC_OK);
  g_assert_cmpfloat (got->tau, ==, kt.tau);
  g_assert_cmpfloat (got->tau_p, ==, kt.p);
  g_assert_cmpfloat (got->rho, ==, sp.rho);
  g_assert_cmpfloat (got->rho_p, ==, sp.p);
  g_assert_cmpfloat (got->topk, ==, topk);
}

/* 1., for each metric and kind. */
static void
check_brute (ScFaithMetric metric, ScFaithErase kind)
{
  Fixture f;
  ScFaithParams p = { .metric = metric, .kind = kind, .top_k = 4, .target = -1 };
  ScFaithResult *r = NULL;
  ScTokenLooResult *loo_out = NULL;
  ScError err = { 0 };
  Capture cap;
  ScObserver obs = { NULL, capture_observe, &cap, NULL };
  ScForwardOptions opt = { .observer = &obs, .all_logits = true };
  g_autofree float *clean = NULL, *abl = NULL, *mean = NULL;
  g_autofree double *loo = NULL, *attn = NULL, *roll = NULL, *flow = NULL;
  g_autofree int32_t *dids = NULL;
  const float **layers;
  uint8_t mask[N] = { 0 };
  ScIntervention iv = { .token_mask = mask };
  const size_t nn = (size_t) N * N;
  int target;

  fixture_init (&f, sc_test_tiny_model ());
  g_assert_cmpint (sc_faith_run (f.s, f.m, ids, N, &p, NULL, NULL, NULL, &r, &loo_out, &err),
                   ==, SC_OK);
  g_assert_nonnull (loo_out);
  g_assert_cmpint (r->n_items, ==, N - 1);
  g_assert_cmpint (r->top_k, ==, 4);
  g_assert_cmpfloat (r->timing.total_s, >=, r->timing.forward_s);
  g_assert_cmpfloat (r->timing.forward_s, >, 0);

  /* The clean run, all heads kept. */
  cap.H = f.H;
  cap.n = N;
  cap.all = g_new (float, (size_t) f.L * f.H * nn);
  /* All logits, as sc_token_loo_run asks for them: the vocabulary projection of n rows and
   * of one row need not round alike. */
  clean = g_new (float, (size_t) N * f.V);
  abl = g_new (float, (size_t) N * f.V);
  g_assert_cmpint (sc_forward (f.s, ids, N, &opt, clean, &err), ==, SC_OK);
  target = sc_logits_top1 (clean + (size_t) (N - 1) * f.V, f.V);
  g_assert_cmpint (r->target, ==, target);

  /* Leave-one-out by hand. */
  loo = g_new (double, N - 1);
  dids = g_new (int32_t, N - 1);
  for (int j = 0; j < N - 1; j++)
    {
      ScForwardOptions o2 = { .all_logits = true };
      ScEffect e;
      int last = N - 1;
      if (kind == SC_FAITH_ERASE_MASK)
        {
          mask[j] = 1;
          o2.intervention = &iv;
          g_assert_cmpint (sc_forward (f.s, ids, N, &o2, abl, &err), ==, SC_OK);
          mask[j] = 0;
        }
      else
        {
          for (int k = 0; k < N - 1; k++)
            dids[k] = ids[k + (k >= j)];
          g_assert_cmpint (sc_forward (f.s, dids, N - 1, &o2, abl, &err), ==, SC_OK);
          last = N - 2;
        }
      g_assert_cmpint (sc_effect_next_token (clean + (size_t) (N - 1) * f.V,
                                             abl + (size_t) last * f.V, f.V, target, &e, &err),
                       ==, SC_OK);
      loo[j] = metric == SC_FAITH_METRIC_TV    ? e.tv
               : metric == SC_FAITH_METRIC_JSD ? e.jsd
                                               : fabs (e.delta_logp);
      g_assert_cmpfloat (r->loo[j], ==, loo[j]);
    }

  /* Each head's last row, and the last layer's mean. */
  attn = g_new0 (double, N - 1);
  for (int l = 0; l < f.L; l++)
    for (int h = 0; h < f.H; h++)
      {
        const float *a = cap.all + ((size_t) l * f.H + h) * nn;
        double row[N - 1];
        ScHeadStats hs;
        for (int j = 0; j < N - 1; j++)
          {
            row[j] = a[(size_t) (N - 1) * N + j];
            g_assert_cmpfloat (r->head_rows[(size_t) (l * f.H + h) * (N - 1) + j], ==, row[j]);
            if (l == f.L - 1)
              attn[j] += row[j];
          }
        assert_agreement (&r->heads[l * f.H + h], row, loo, N - 1, 4);
        assert_agreement (&r->heads_nf[l * f.H + h], row + 1, loo + 1, N - 2, 4);
        g_assert_cmpint (sc_head_stats_compute (a, N, N, NULL, &hs, NULL), ==, SC_OK);
        g_assert_cmpfloat (r->head_stats[l * f.H + h].entropy, ==, hs.entropy);
        g_assert_cmpfloat (r->head_stats[l * f.H + h].sink, ==, hs.sink);
      }
  for (int j = 0; j < N - 1; j++)
    attn[j] /= f.H;
  for (int j = 0; j < N - 1; j++)
    g_assert_cmpfloat_with_epsilon (r->attn[SC_FAITH_SOURCE_LAST_MEAN][j], attn[j], 1e-15);
  assert_agreement (&r->agree[SC_FAITH_SOURCE_LAST_MEAN], r->attn[SC_FAITH_SOURCE_LAST_MEAN],
                    loo, N - 1, 4);
  for (int s = 0; s < SC_FAITH_FIRST_GRADIENT_SOURCE; s++)
    assert_agreement (&r->agree_nf[s], r->attn[s] + 1, loo + 1, N - 2, 4);

  /* Rollout and flow over every head (not the study's kept layer means): equal within
   * float rounding of the means, and the same ranking statistics. */
  layers = g_new (const float *, f.L);
  for (int l = 0; l < f.L; l++)
    layers[l] = cap.all + (size_t) l * f.H * nn;
  roll = g_new (double, nn);
  flow = g_new (double, N);
  g_assert_cmpint (sc_attention_rollout (layers, f.L, f.H, N, roll, &err), ==, SC_OK);
  g_assert_cmpint (sc_attention_flow (layers, f.L, f.H, N, N - 1, flow, &err), ==, SC_OK);
  for (int j = 0; j < N - 1; j++)
    {
      g_assert_cmpfloat_with_epsilon (r->attn[SC_FAITH_SOURCE_ROLLOUT][j],
                                      roll[(size_t) (N - 1) * N + j], 1e-6);
      g_assert_cmpfloat_with_epsilon (r->attn[SC_FAITH_SOURCE_FLOW][j], flow[j], 1e-6);
    }
  {
    double rr[N - 1];
    for (int j = 0; j < N - 1; j++)
      rr[j] = roll[(size_t) (N - 1) * N + j];
    ScKendall kt;
    g_assert_cmpint (sc_kendall_tau_b (rr, loo, N - 1, &kt, NULL), ==, SC_OK);
    g_assert_cmpfloat_with_epsilon (r->agree[SC_FAITH_SOURCE_ROLLOUT].tau, kt.tau, 1e-12);
    g_assert_cmpint (sc_kendall_tau_b (flow, loo, N - 1, &kt, NULL), ==, SC_OK);
    g_assert_cmpfloat_with_epsilon (r->agree[SC_FAITH_SOURCE_FLOW].tau, kt.tau, 1e-12);
  }
  assert_agreement (&r->agree[SC_FAITH_SOURCE_ROLLOUT], r->attn[SC_FAITH_SOURCE_ROLLOUT], loo,
                    N - 1, 4);

  /* The leave-one-out result handed back gives the same study when passed in. */
  {
    ScFaithResult *r2 = NULL;
    g_assert_cmpint (sc_faith_run (f.s, f.m, ids, N, &p, loo_out, NULL, NULL, &r2, NULL, &err),
                     ==, SC_OK);
    for (int s = 0; s < SC_FAITH_N_SOURCES; s++)
      g_assert_true (r2->agree[s].tau == r->agree[s].tau
                     || (isnan (r2->agree[s].tau) && isnan (r->agree[s].tau)));
    /* gradients were not asked: their sources say so */
    for (int s = SC_FAITH_FIRST_GRADIENT_SOURCE; s < SC_FAITH_N_SOURCES; s++)
      g_assert_cmpint (r->agree[s].status, ==, SC_ERR_UNSUPPORTED);
    g_assert_cmpint (r->attn_vs_grad.status, ==, SC_ERR_UNSUPPORTED);
    sc_faith_result_free (r2);
  }
  g_free (layers);
  g_free (cap.all);
  sc_token_loo_result_free (loo_out);
  sc_faith_result_free (r);
  fixture_clear (&f);
}

static void
test_brute_tv_mask (void)
{
  check_brute (SC_FAITH_METRIC_TV, SC_FAITH_ERASE_MASK);
}

static void
test_brute_jsd_drop (void)
{
  check_brute (SC_FAITH_METRIC_JSD, SC_FAITH_ERASE_DROP);
}

static void
test_brute_logp_mask (void)
{
  check_brute (SC_FAITH_METRIC_ABS_DELTA_LOGP, SC_FAITH_ERASE_MASK);
}

/* 2. */
static void
test_known_answers (void)
{
  const double loo[6] = { 0.1, 0.5, 0.05, 0.3, 0.2, 0.9 };
  double same[6], rev[6];
  const double flat[6] = { 0.2, 0.2, 0.2, 0.2, 0.2, 0.2 };
  ScFaithAgreement a;

  for (int j = 0; j < 6; j++)
    {
      same[j] = exp (loo[j]); /* monotone: the same ranking */
      rev[j] = -loo[j];
    }
  g_assert_cmpint (sc_faith_agreement (same, loo, 6, 3, &a, NULL), ==, SC_OK);
  g_assert_cmpint (a.status, ==, SC_OK);
  g_assert_cmpfloat (a.tau, ==, 1.0);
  g_assert_cmpfloat_with_epsilon (a.rho, 1.0, 1e-15);
  g_assert_cmpfloat (a.topk, ==, 1.0);
  /* Exact p of τ = 1 with n = 6: 2 / 6! = 1/360. */
  g_assert_cmpfloat_with_epsilon (a.tau_p, 2.0 / 720.0, 1e-15);
  g_assert_cmpint (sc_faith_agreement (rev, loo, 6, 3, &a, NULL), ==, SC_OK);
  g_assert_cmpfloat (a.tau, ==, -1.0);
  g_assert_cmpfloat_with_epsilon (a.rho, -1.0, 1e-15);
  /* Top 3 of loo: {5, 1, 3}; of rev (the smallest loo): {2, 0, 4}. */
  g_assert_cmpfloat (a.topk, ==, 0.0);
  g_assert_cmpint (sc_faith_agreement (flat, loo, 6, 3, &a, NULL), ==, SC_OK);
  g_assert_cmpint (a.status, ==, SC_ERR_RANGE);
  g_assert_true (isnan (a.tau) && isnan (a.rho) && isnan (a.topk));
  g_assert_cmpstr (a.reason, !=, "");
  g_assert_cmpint (sc_faith_agreement (same, loo, 6, 7, &a, NULL), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_faith_agreement (same, loo, 1, 1, &a, NULL), ==, SC_ERR_INVALID_ARG);
}

static void
set_agree (ScFaithAgreement *a, double tau, double p, double rho, double topk)
{
  *a = (ScFaithAgreement) { SC_OK, tau, p, rho, NAN, topk, "" };
  if (isnan (tau))
    a->status = SC_ERR_RANGE;
}

/* 3. Three sentences of a model with 1 layer x 2 heads. */
static void
test_summarize (void)
{
  ScFaithResult *r[3];
  ScFaithFileSummary *s = NULL;
  ScError err = { 0 };
  const ScFaithResult *const *rr = (const ScFaithResult *const *) r;

  for (int i = 0; i < 3; i++)
    r[i] = sc_faith_result_new (1, 2, 4);
  /* last-mean: τ 0.5 (p 0.01), 1.0 (p 0.2), undefined. */
  set_agree (&r[0]->agree[0], 0.5, 0.01, 0.6, 1.0 / 3);
  set_agree (&r[1]->agree[0], 1.0, 0.2, 1.0, 1.0);
  set_agree (&r[2]->agree[0], NAN, NAN, NAN, NAN);
  /* rollout: τ −0.2, 0.4, 0.1, every p < 0.05. */
  set_agree (&r[0]->agree[1], -0.2, 0.04, NAN, 0);
  set_agree (&r[1]->agree[1], 0.4, 0.001, 0.5, 0.5);
  set_agree (&r[2]->agree[1], 0.1, 0.03, 0.3, 1);
  /* flow: one defined sentence. */
  set_agree (&r[0]->agree[2], 0.3, 0.5, 0.3, 1);
  set_agree (&r[1]->agree[2], NAN, NAN, NAN, NAN);
  set_agree (&r[2]->agree[2], NAN, NAN, NAN, NAN);
  /* Heads: head 0 τ 0.2, 0.4, 0.6 (mean 0.4); head 1 τ 0.5 ×3 (mean 0.5). */
  for (int i = 0; i < 3; i++)
    {
      set_agree (&r[i]->heads[0], 0.2 * (i + 1), 0.5, 0.0, 0.0);
      set_agree (&r[i]->heads[1], 0.5, 0.01, 0.0, 0.0);
    }
  g_assert_cmpint (sc_faith_summarize (rr, 3, &s, &err), ==, SC_OK);
  g_assert_cmpint (s->n_sentences, ==, 3);
  /* last-mean: mean 0.75, std sqrt ((0.25² + 0.25²) / 1) = 0.353553..., share 1/2,
   * ρ mean 0.8, top-k mean (1/3 + 1) / 2 = 2/3. */
  g_assert_cmpint (s->source[0].n_defined, ==, 2);
  g_assert_cmpint (s->source[0].n_undefined, ==, 1);
  g_assert_cmpfloat_with_epsilon (s->source[0].tau_mean, 0.75, 1e-15);
  g_assert_cmpfloat_with_epsilon (s->source[0].tau_std, 0.35355339059327373, 1e-15);
  g_assert_cmpfloat (s->source[0].share_significant, ==, 0.5);
  g_assert_cmpfloat_with_epsilon (s->source[0].rho_mean, 0.8, 1e-15);
  g_assert_cmpfloat_with_epsilon (s->source[0].topk_mean, 2.0 / 3, 1e-15);
  /* rollout: mean 0.1, deviations −0.3, 0.3, 0: std sqrt (0.18 / 2) = 0.3; share 1; ρ mean
   * over the two defined: 0.4. */
  g_assert_cmpfloat_with_epsilon (s->source[1].tau_mean, 0.1, 1e-15);
  g_assert_cmpfloat_with_epsilon (s->source[1].tau_std, 0.3, 1e-15);
  g_assert_cmpfloat (s->source[1].share_significant, ==, 1.0);
  g_assert_cmpfloat_with_epsilon (s->source[1].rho_mean, 0.4, 1e-15);
  /* flow: one sentence, std undefined (ddof 1). */
  g_assert_cmpint (s->source[2].n_defined, ==, 1);
  g_assert_cmpfloat (s->source[2].tau_mean, ==, 0.3);
  g_assert_true (isnan (s->source[2].tau_std));
  g_assert_cmpfloat (s->source[2].share_significant, ==, 0.0);
  /* Heads: means 0.4 and 0.5; the best is head 1, the (lower) median of two is head 0. */
  g_assert_cmpfloat_with_epsilon (s->heads[0].tau_mean, 0.4, 1e-15);
  g_assert_cmpfloat_with_epsilon (s->heads[0].tau_std, 0.2, 1e-15);
  g_assert_cmpfloat (s->heads[1].tau_std, ==, 0.0);
  g_assert_cmpfloat (s->heads[1].share_significant, ==, 1.0);
  g_assert_cmpint (s->best_head, ==, 1);
  g_assert_cmpint (s->median_head, ==, 0);
  g_assert_cmpint (s->m_heads, ==, 2);
  /* Intervals over sentences: none below SC_FAITH_MIN_CI_ITEMS = 5 sentences (the two of
   * last-mean, the three of the best head). BH over last-mean's p 0.01, 0.2: q 0.02, 0.2
   * (share 1/2); rollout's 0.04, 0.001, 0.03: q 0.04, 0.003, 0.04 (share 1). No "without
   * the first token" agreements were set: their mean is NaN over 0 sentences. */
  g_assert_true (isnan (s->source[0].tau_ci.lo) && isnan (s->source[0].tau_ci.hi));
  g_assert_true (isnan (s->heads[1].tau_ci.lo));
  g_assert_cmpfloat (s->source[0].share_significant_bh, ==, 0.5);
  g_assert_cmpfloat (s->source[1].share_significant_bh, ==, 1.0);
  g_assert_cmpint (s->source[0].n_defined_other, ==, 0);
  g_assert_true (isnan (s->source[0].tau_mean_other));
  sc_faith_file_summary_free (s);

  /* BH that changes the share: four sentences with p 0.001, 0.04, 0.045, 0.3 have q 0.004,
   * 0.06, 0.06, 0.3 — one significant after correction, three before. Their τ without the
   * first token (0.1 each) give the other set's mean; with exclude_first the two swap. */
  {
    ScFaithResult *q[4];
    const double pv[4] = { 0.001, 0.04, 0.045, 0.3 };
    for (int i = 0; i < 4; i++)
      {
        q[i] = sc_faith_result_new (1, 2, 4);
        set_agree (&q[i]->agree[0], 0.5, pv[i], 0.5, 1);
        set_agree (&q[i]->agree_nf[0], 0.1, 0.5, 0.1, 1);
      }
    g_assert_cmpint (sc_faith_summarize ((const ScFaithResult *const *) q, 4, &s, &err), ==,
                     SC_OK);
    g_assert_cmpfloat (s->source[0].share_significant, ==, 0.75);
    g_assert_cmpfloat (s->source[0].share_significant_bh, ==, 0.25);
    g_assert_cmpfloat_with_epsilon (s->source[0].tau_mean_other, 0.1, 1e-15);
    g_assert_false (s->exclude_first);
    sc_faith_file_summary_free (s);
    for (int i = 0; i < 4; i++)
      q[i]->exclude_first = true;
    g_assert_cmpint (sc_faith_summarize ((const ScFaithResult *const *) q, 4, &s, &err), ==,
                     SC_OK);
    g_assert_true (s->exclude_first);
    g_assert_cmpfloat_with_epsilon (s->source[0].tau_mean, 0.1, 1e-15);
    g_assert_cmpfloat_with_epsilon (s->source[0].tau_mean_other, 0.5, 1e-15);
    g_assert_cmpfloat (s->source[0].share_significant_bh, ==, 0.0);
    sc_faith_file_summary_free (s);
    /* sentences of both settings are not summarised together */
    q[0]->exclude_first = false;
    g_assert_cmpint (sc_faith_summarize ((const ScFaithResult *const *) q, 4, &s, &err), ==,
                     SC_ERR_INVALID_ARG);
    for (int i = 0; i < 4; i++)
      sc_faith_result_free (q[i]);
  }

  /* An interval over five sentences with τ 0, 0, 0, 0, 1: a resample's mean is k/5, k the
   * draws of the 1, Binomial (5, 0.2): P(k = 0) = 0.33 puts the 2.5 % point at 0, and
   * P(k <= 2) = 0.942, P(k <= 3) = 0.993 put the 97.5 % point at 3/5 (with 1000 resamples
   * the 975th and 976th sorted means are both 0.6 unless the draw is off by ~20 in the
   * k <= 2 block, over 3 standard deviations). */
  {
    ScFaithResult *q[5];
    for (int i = 0; i < 5; i++)
      {
        q[i] = sc_faith_result_new (1, 2, 4);
        set_agree (&q[i]->agree[0], i == 4 ? 1.0 : 0.0, 0.5, 0.0, 1);
      }
    g_assert_cmpint (sc_faith_summarize ((const ScFaithResult *const *) q, 5, &s, &err), ==,
                     SC_OK);
    g_assert_cmpfloat (s->source[0].tau_ci.lo, ==, 0.0);
    g_assert_cmpfloat_with_epsilon (s->source[0].tau_ci.hi, 0.6, 1e-12);
    g_assert_cmpint (s->source[0].tau_ci.n_boot, ==, SC_STATS_DEFAULT_BOOT);
    sc_faith_file_summary_free (s);
    for (int i = 0; i < 5; i++)
      sc_faith_result_free (q[i]);
  }

  /* Another shape is refused. */
  {
    ScFaithResult *other = sc_faith_result_new (2, 2, 4);
    const ScFaithResult *mix[2] = { r[0], other };
    g_assert_cmpint (sc_faith_summarize (mix, 2, &s, &err), ==, SC_ERR_INVALID_ARG);
    sc_faith_result_free (other);
  }
  for (int i = 0; i < 3; i++)
    sc_faith_result_free (r[i]);
}

/* 4. */
static void
test_head_level (void)
{
  ScHeadSweepResult *sw = sc_head_sweep_result_new (1, 4, 5);
  const double dl[4] = { -0.5, -0.1, -2.0, NAN };
  const double tv[4] = { 0.2, 0.05, 0.6, 0.1 };
  const double x[4] = { 3.0, 1.0, 9.0, 4.0 }; /* the same order as tv, and as −Δ log p */
  ScFaithHeadCorr c;
  ScError err = { 0 };

  for (int h = 0; h < 4; h++)
    {
      sw->heads[h].next.delta_logp = dl[h];
      sw->heads[h].next.tv = tv[h];
    }
  g_assert_cmpint (sc_faith_head_corr (sw, "dla", x, &c, &err), ==, SC_OK);
  g_assert_cmpstr (c.name, ==, "dla");
  g_assert_cmpint (c.n_heads_used, ==, 3); /* head 3's Δ log p is NaN */
  g_assert_cmpint (c.status, ==, SC_OK);
  g_assert_cmpfloat_with_epsilon (c.vs_tv.rho, 1.0, 1e-15);
  g_assert_cmpfloat_with_epsilon (c.vs_delta_logp.rho, -1.0, 1e-15);
  g_assert_cmpint (sc_faith_head_corr (sw, "", x, &c, &err), ==, SC_ERR_INVALID_ARG);
  sc_head_sweep_result_free (sw);
}

static bool
cancel_at_half (void *user, double fraction)
{
  (void) user;
  return fraction < 0.5;
}

/* 5. and 6. */
static void
test_store_cancel_and_hostile (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-faith-XXXXXX", NULL);
  g_autofree char *model_path = g_build_filename (dir, "tiny.gguf", NULL);
  g_autofree char *db_path = g_build_filename (dir, "s.sqlite", NULL);
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreModel sm;
  ScModel *m = NULL;
  Fixture f;
  /* with the gradient sources (integrated gradients on 6 points) */
  ScFaithParams p = { .target = -1, .gradients = true, .ig_steps = 6 };
  ScFaithResult *r = NULL, *back = NULL;
  ScError err = { 0 };
  char pj[256], pj2[256];
  int64_t id = 0, id2 = 0;
  gsize len;
  const void *d;

  d = g_bytes_get_data (sc_test_tiny_bytes (), &len);
  g_assert_true (g_file_set_contents (model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (model_path, 1, &m, &err), ==, SC_OK);
  fixture_init (&f, m);
  g_assert_cmpint (sc_store_model_identify (m, model_path, &sm, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);

  /* Cancel: no result, nothing stored. */
  g_assert_cmpint (sc_faith_run (f.s, m, ids, N, &p, NULL, cancel_at_half,
                                 NULL, &r, NULL, &err), ==, SC_ERR_CANCELLED);
  g_assert_null (r);
  g_assert_cmpint (sc_faith_params_json (7, NULL, 0, &p, pj, sizeof pj), >, 0);
  g_assert_cmpstr (pj, ==, "{\"study\":2,\"run\":7,\"ids\":null,\"metric\":\"tv\","
                   "\"kind\":\"mask\",\"top_k\":0,\"target\":null,\"gradients\":6}");
  g_assert_cmpint (sc_faith_load (store, f.in, sm.sha256, pj, &p, &back, NULL, &err), ==,
                   SC_ERR_NOT_FOUND);

  /* Round trip. */
  g_assert_cmpint (sc_faith_run (f.s, m, ids, N, &p, NULL, NULL, NULL, &r, NULL, &err), ==,
                   SC_OK);
  g_assert_cmpint (sc_faith_store (store, &sm, pj, r, &id, &err), ==, SC_OK);
  g_assert_cmpint (sc_faith_load (store, f.in, sm.sha256, pj, &p, &back, &id2, &err), ==,
                   SC_OK);
  g_assert_cmpint (id2, ==, id);
  g_assert_cmpint (back->n_tokens, ==, N);
  g_assert_cmpint (back->target, ==, r->target);
  g_assert_cmpint (back->top_k, ==, r->top_k);
  g_assert_null (back->head_rows);
  /* the gradient sources: defined, magnitudes, attention against saliency computed */
  for (int s = SC_FAITH_FIRST_GRADIENT_SOURCE; s < SC_FAITH_FIRST_MIXING_SOURCE; s++)
    for (int j = 0; j < N - 1; j++)
      g_assert_cmpfloat (r->attn[s][j], >=, 0.0);
  g_assert_true (r->agree[SC_FAITH_SOURCE_SALIENCY].status == SC_OK
                 || r->agree[SC_FAITH_SOURCE_SALIENCY].status == SC_ERR_RANGE);
  g_assert_cmpint (back->attn_vs_grad.status, ==, r->attn_vs_grad.status);
  g_assert_true (back->attn_vs_grad.tau == r->attn_vs_grad.tau
                 || (isnan (back->attn_vs_grad.tau) && isnan (r->attn_vs_grad.tau)));
  g_assert_true (back->ig_gap_rel == r->ig_gap_rel
                 || (isnan (back->ig_gap_rel) && isnan (r->ig_gap_rel)));
  for (int j = 0; j < N - 1; j++)
    {
      g_assert_cmpfloat (back->loo[j], ==, r->loo[j]);
      for (int s = 0; s < sc_faith_n_sources (r); s++)
        g_assert_cmpfloat (back->attn[s][j], ==, r->attn[s][j]);
    }
  for (int s = 0; s < sc_faith_n_sources (r); s++)
    {
      g_assert_cmpint (back->agree[s].status, ==, r->agree[s].status);
      g_assert_cmpfloat (back->agree[s].tau, ==, r->agree[s].tau);
      g_assert_cmpfloat (back->agree[s].tau_p, ==, r->agree[s].tau_p);
      g_assert_cmpfloat (back->agree[s].topk, ==, r->agree[s].topk);
    }
  for (int h = 0; h < f.L * f.H; h++)
    {
      const double a = back->heads[h].tau, b = r->heads[h].tau;
      g_assert_true (a == b || (isnan (a) && isnan (b)));
      g_assert_cmpfloat (back->head_stats[h].entropy, ==, r->head_stats[h].entropy);
      g_assert_cmpfloat (back->head_stats[h].confidence, ==, r->head_stats[h].confidence);
    }
  sc_faith_result_free (back);
  back = NULL;
  /* Other params: another study. The ids form hashes the ids. */
  p.kind = SC_FAITH_ERASE_DROP;
  sc_faith_params_json (7, NULL, 0, &p, pj2, sizeof pj2);
  g_assert_cmpint (sc_faith_load (store, f.in, sm.sha256, pj2, &p, &back, NULL, &err), ==,
                   SC_ERR_NOT_FOUND);
  g_assert_cmpint (sc_faith_params_json (0, ids, N, &p, pj2, sizeof pj2), >, 0);
  g_assert_nonnull (strstr (pj2, "\"run\":null,\"ids\":\""));
  g_assert_cmpint (sc_faith_params_json (0, NULL, 0, &p, pj2, sizeof pj2), ==, -1);
  g_assert_cmpint (sc_faith_params_json (7, NULL, 0, &p, pj2, 16), ==, -1);
  p.kind = SC_FAITH_ERASE_MASK;

  /* Hostile values, each a study of its own params written through the study API. */
  {
    static const struct {
      const char *series;
      int pos;
      double value;
      const char *names;
    } cases[] = {
      { "agree.rollout", 0, 2.0, "agree.rollout" },   /* τ outside [−1, 1] */
      { "agree.flow", 1, -0.5, "agree.flow" },        /* a negative p */
      { "agree.last-mean", 5, 42.0, "agree.last-mean" }, /* an unknown status */
      { "loo", 3, -1.0, "loo" },                      /* a negative importance */
      { "loo", 40, 0.1, "loo" },                      /* a position past the items */
      { "attn.flow", 2, 7.0, "attn.flow" },           /* an attention weight above 1 */
      { "clean", 2, 2.0, "clean" },                   /* n below the minimum */
      { "nothing", 0, 0.0, "agree.last-mean" },       /* no agreement stored at all */
    };
    for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
      {
        ScFaithParams hp = { .target = 1000 + (int) c };
        char hj[256];
        ScStoreStudy *st = NULL;
        g_assert_cmpint (sc_faith_params_json (7, NULL, 0, &hp, hj, sizeof hj), >, 0);
        hp.target = -1;
        g_assert_cmpint (sc_faith_run (f.s, m, ids, N, &hp, NULL, NULL, NULL, &back, NULL, &err),
                         ==, SC_OK);
        g_assert_cmpint (sc_faith_store (store, &sm, hj, back, NULL, &err), ==, SC_OK);
        sc_faith_result_free (back);
        back = NULL;
        /* The same params again, with one hostile value: the latest study is read. */
        g_assert_cmpint (sc_store_study_begin (store, SC_FAITH_KIND, &sm, hj, &st, &err), ==,
                         SC_OK);
        {
          const double clean[4] = { 5, 5, N, 3 };
          for (int k = 0; k < 4; k++)
            if (strcmp (cases[c].series, "clean") != 0 || k != cases[c].pos)
              g_assert_cmpint (sc_store_study_add_series (st, "clean", k, clean[k], &err), ==,
                               SC_OK);
          for (int j = 0; j < N - 1; j++)
            if (strcmp (cases[c].series, "loo") != 0 || j != cases[c].pos)
              g_assert_cmpint (sc_store_study_add_series (st, "loo", j, 0.1 * j, &err), ==,
                               SC_OK);
        }
        g_assert_cmpint (sc_store_study_add_series (st, cases[c].series, cases[c].pos,
                                                    cases[c].value, &err), ==, SC_OK);
        g_assert_cmpint (sc_store_study_commit (st, NULL, &err), ==, SC_OK);
        g_assert_cmpint (sc_faith_load (store, f.in, sm.sha256, hj, &p, &back, NULL, &err), ==,
                         SC_ERR_FORMAT);
        g_assert_null (back);
        if (strstr (err.message, cases[c].names) == NULL
            && strcmp (cases[c].series, "clean") != 0)
          g_error ("hostile case %" G_GSIZE_FORMAT ": message '%s' does not name %s", c,
                   err.message, cases[c].names);
      }
  }

  /* Bad input. */
  g_assert_cmpint (sc_faith_run (f.s, m, ids, 2, &p, NULL, NULL, NULL, &back, NULL, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "at least 3"));
  p.metric = (ScFaithMetric) 9;
  g_assert_cmpint (sc_faith_run (f.s, m, ids, N, &p, NULL, NULL, NULL, &back, NULL, &err), ==,
                   SC_ERR_INVALID_ARG);
  p.metric = SC_FAITH_METRIC_TV;
  p.target = f.V;
  g_assert_cmpint (sc_faith_run (f.s, m, ids, N, &p, NULL, NULL, NULL, &back, NULL, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_null (back);

  sc_store_close (store);
  sc_faith_result_free (r);
  fixture_clear (&f);
  g_remove (db_path);
  g_remove (model_path);
  g_rmdir (dir);
}

/* 7. */
static void
test_flow_ceiling (void)
{
  const char *env = g_getenv ("SACCADE_MODEL");
  g_autofree char *path = env != NULL ? g_strdup (env)
                                      : g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"),
                                                          "data", "models",
                                                          "SmolLM2-135M-Instruct.Q4_1.gguf",
                                                          NULL);
  enum { LONG = 70 };
  int32_t tok[LONG];
  ScFaithParams p = { .target = -1 };
  ScTokenLooResult *loo;
  ScFaithResult *r = NULL;
  ScModel *m = NULL;
  ScError err = { 0 };
  Fixture f;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("the default model is not fetched (data/fetch-model.sh)");
      return;
    }
  if (sc_model_open (path, 2, &m, &err) != SC_OK)
    g_error ("%s", err.message);
  fixture_init (&f, m);
  g_assert_false (sc_attention_flow_fits (f.L, LONG));
  for (int i = 0; i < LONG; i++)
    tok[i] = 504 + 7 * i;
  /* A leave-one-out result of distinct importances, so that no erasure pass is needed. */
  loo = sc_token_loo_result_new (LONG);
  loo->target = 30;
  loo->top1_clean = 30;
  for (int j = 0; j < LONG - 1; j++)
    loo->mask[j].next.tv = 0.001 * ((j * 37) % (LONG - 1));
  g_assert_cmpint (sc_faith_run (f.s, m, tok, LONG, &p, loo, NULL, NULL, &r, NULL, &err), ==,
                   SC_OK);
  g_assert_cmpint (r->agree[SC_FAITH_SOURCE_FLOW].status, ==, SC_ERR_RANGE);
  g_assert_nonnull (strstr (r->agree[SC_FAITH_SOURCE_FLOW].reason, "ceiling"));
  g_assert_true (isnan (r->attn[SC_FAITH_SOURCE_FLOW][0]));
  g_assert_cmpint (r->agree[SC_FAITH_SOURCE_LAST_MEAN].status, ==, SC_OK);
  g_assert_cmpint (r->agree[SC_FAITH_SOURCE_ROLLOUT].status, ==, SC_OK);
  /* Exact p-values stop at 50 items: 69 items take the normal approximation. */
  g_assert_cmpfloat (r->agree[SC_FAITH_SOURCE_LAST_MEAN].tau_p, >=, 0);
  sc_faith_result_free (r);
  sc_token_loo_result_free (loo);
  fixture_clear (&f);
}

/* The interval, null and first-token flag of source @s of @r against sc-stats.h called
 * here on the vectors of the set @r reports. */
static void
check_source_stats (const ScFaithResult *r, const ScFaithSentenceStats *st, int s)
{
  const ScFaithSourceStats *ss = &st->source[s];
  const ScFaithAgreement *a = r->exclude_first ? &r->agree_nf[s] : &r->agree[s];
  const ScFaithAgreement *o = r->exclude_first ? &r->agree[s] : &r->agree_nf[s];
  const int off = r->exclude_first ? 1 : 0, n = r->n_items - off;
  ScStatsInterval ci;
  ScStatsPermNull pn;
  char tau_text[32];

  if (a->status != SC_OK)
    {
      g_assert_true (isnan (ss->tau_ci.lo) && isnan (ss->perm.p));
      g_assert_nonnull (strstr (ss->reading, "no ranking"));
      return;
    }
  g_assert_cmpint (sc_stats_bootstrap_corr (SC_STATS_KENDALL, r->attn[s] + off, r->loo + off, n,
                                            st->n_boot, 0.95, st->seed, &ci, NULL), ==, SC_OK);
  g_assert_cmpfloat (ss->tau_ci.lo, ==, ci.lo);
  g_assert_cmpfloat (ss->tau_ci.hi, ==, ci.hi);
  g_assert_cmpint (sc_stats_bootstrap_corr (SC_STATS_SPEARMAN, r->attn[s] + off, r->loo + off,
                                            n, st->n_boot, 0.95, st->seed, &ci, NULL), ==, SC_OK);
  g_assert_cmpfloat (ss->rho_ci.lo, ==, ci.lo);
  g_assert_cmpfloat (ss->rho_ci.hi, ==, ci.hi);
  g_assert_cmpint (sc_stats_permutation_null (SC_STATS_KENDALL, r->attn[s] + off, r->loo + off,
                                              n, st->n_boot, 0.95, st->seed, &pn, NULL), ==,
                   SC_OK);
  g_assert_cmpfloat (ss->perm.p, ==, pn.p);
  g_assert_cmpfloat (ss->perm.lo, ==, pn.lo);
  g_assert_cmpfloat (pn.observed, ==, a->tau);
  g_assert_cmpint (ss->first_token_drives, ==,
                   o->status == SC_OK
                     && (fabs (a->tau - o->tau) > SC_FAITH_FIRST_TOKEN_DELTA
                         || (a->tau_p < SC_FAITH_ALPHA) != (o->tau_p < SC_FAITH_ALPHA)));
  /* the reading is made of these numbers */
  g_snprintf (tau_text, sizeof tau_text, "(τ %.2f, 95 %% CI %.2f to %.2f", a->tau,
              ss->tau_ci.lo, ss->tau_ci.hi);
  g_assert_nonnull (strstr (ss->reading, tau_text));
  g_assert_nonnull (strstr (ss->reading, r->exclude_first ? "once the first token is excluded"
                                                          : "with the first token"));
  g_assert_true ((strstr (ss->reading, "the first token drives this result") != NULL)
                 == ss->first_token_drives);
}

/* The best head, Holm and BH of @st against the heads of @r recomputed here. */
static void
check_head_stats (const ScFaithResult *r, const ScFaithSentenceStats *st)
{
  const int nh = r->n_layers * r->n_heads;
  g_autofree double *p = g_new (double, nh), *adj = g_new (double, nh);
  int best = -1, m = 0, n_bh = 0;

  for (int h = 0; h < nh; h++)
    {
      const ScFaithAgreement *a = r->exclude_first ? &r->heads_nf[h] : &r->heads[h];
      p[h] = a->status == SC_OK ? a->tau_p : NAN;
      if (a->status == SC_OK && (best < 0 || a->tau > (r->exclude_first ? r->heads_nf
                                                                         : r->heads)[best].tau))
        best = h;
    }
  g_assert_cmpint (st->best_head, ==, best);
  g_assert_cmpint (sc_stats_holm (p, nh, adj, &m, NULL), ==, SC_OK);
  g_assert_cmpint (st->m_heads, ==, m);
  g_assert_cmpfloat (st->best_p_holm, ==, adj[best]);
  g_assert_cmpfloat (st->best_p_holm, >=, p[best]);
  g_assert_cmpint (sc_stats_bh (p, nh, adj, NULL, NULL), ==, SC_OK);
  for (int h = 0; h < nh; h++)
    n_bh += !isnan (adj[h]) && adj[h] < SC_FAITH_ALPHA;
  g_assert_cmpint (st->n_heads_bh, ==, n_bh);
  g_assert_nonnull (strstr (st->best_reading, "Holm"));
}

/* 8. */
static void
test_statistics (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-faith-stats-XXXXXX", NULL);
  g_autofree char *model_path = g_build_filename (dir, "tiny.gguf", NULL);
  g_autofree char *db_path = g_build_filename (dir, "s.sqlite", NULL);
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreModel sm;
  ScModel *m = NULL;
  Fixture f;
  ScFaithParams p = { .target = -1 };
  ScFaithParams p_nf = { .target = -1, .exclude_first = true };
  const ScFaithStatsParams sp = { 300, 42 };
  ScFaithResult *r = NULL, *back = NULL, *old = NULL;
  ScFaithSentenceStats *st = NULL, *st2 = NULL;
  ScError err = { 0 };
  char pj[256], pj_nf[256];
  gsize len;
  const void *d;

  d = g_bytes_get_data (sc_test_tiny_bytes (), &len);
  g_assert_true (g_file_set_contents (model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (model_path, 1, &m, &err), ==, SC_OK);
  fixture_init (&f, m);
  g_assert_cmpint (f.L, ==, 2);
  g_assert_cmpint (sc_faith_run (f.s, m, ids, N, &p, NULL, NULL, NULL, &r, NULL, &err), ==,
                   SC_OK);
  g_assert_false (r->exclude_first);

  /* The choice is not in the params text: a study serves both sets. */
  g_assert_cmpint (sc_faith_params_json (7, NULL, 0, &p, pj, sizeof pj), >, 0);
  g_assert_cmpint (sc_faith_params_json (7, NULL, 0, &p_nf, pj_nf, sizeof pj_nf), >, 0);
  g_assert_cmpstr (pj, ==, pj_nf);

  for (int pass = 0; pass < 2; pass++)
    {
      r->exclude_first = pass == 1;
      g_assert_cmpint (sc_faith_sentence_stats (r, &sp, &st, &err), ==, SC_OK);
      g_assert_cmpint (st->n_boot, ==, 300);
      g_assert_cmpint (st->seed, ==, 42);
      /* Uniform attention in 2 layers: Â = ½ U + ½ I, U[i][k] = 1/(i + 1) for k <= i;
       * the rollout row N − 1 is Σ_k Â[N − 1][k] Â[k][j], written out. */
      for (int j = 0; j < N - 1; j++)
        {
          double want = 0;
          for (int k = j; k < N; k++)
            {
              const double a1 = 0.5 / N + (k == N - 1 ? 0.5 : 0.0);
              const double a2 = 0.5 / (k + 1) + (k == j ? 0.5 : 0.0);
              want += a1 * a2;
            }
          g_assert_cmpfloat_with_epsilon (st->uniform_rollout[j], want, 1e-6);
          if (j > 0) /* position alone: earlier tokens first */
            g_assert_cmpfloat (st->uniform_rollout[j], <, st->uniform_rollout[j - 1]);
        }
      {
        ScKendall kt;
        const int off = pass;
        g_assert_cmpint (sc_kendall_tau_b (st->uniform_rollout + off, r->loo + off,
                                           N - 1 - off, &kt, NULL), ==, SC_OK);
        g_assert_cmpfloat (st->uniform.tau, ==, kt.tau);
      }
      for (int s = 0; s < SC_FAITH_N_SOURCES; s++)
        check_source_stats (r, st, s);
      check_head_stats (r, st);
      /* the same seed, the same numbers */
      g_assert_cmpint (sc_faith_sentence_stats (r, &sp, &st2, &err), ==, SC_OK);
      for (int s = 0; s < SC_FAITH_N_SOURCES; s++)
        {
          g_assert_true (st2->source[s].tau_ci.lo == st->source[s].tau_ci.lo
                         || isnan (st->source[s].tau_ci.lo));
          g_assert_cmpstr (st2->source[s].reading, ==, st->source[s].reading);
        }
      sc_faith_sentence_stats_free (st2);
      st2 = NULL;
      if (pass == 0)
        sc_faith_sentence_stats_free (st);
    }
  r->exclude_first = false;

  /* Stored and read back (with exclude_first asked): the same agreements in both sets and
   * the same statistics. */
  g_assert_cmpint (sc_store_model_identify (m, model_path, &sm, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_faith_store (store, &sm, pj, r, NULL, &err), ==, SC_OK);
  g_assert_cmpint (sc_faith_load (store, f.in, sm.sha256, pj, &p_nf, &back, NULL, &err), ==,
                   SC_OK);
  g_assert_true (back->exclude_first);
  for (int s = 0; s < SC_FAITH_N_SOURCES; s++)
    {
      g_assert_cmpint (back->agree_nf[s].status, ==, r->agree_nf[s].status);
      g_assert_true (back->agree_nf[s].tau == r->agree_nf[s].tau
                     || (isnan (back->agree_nf[s].tau) && isnan (r->agree_nf[s].tau)));
      g_assert_true (back->agree_nf[s].topk == r->agree_nf[s].topk
                     || isnan (r->agree_nf[s].topk));
    }
  for (int h = 0; h < f.L * f.H; h++)
    {
      g_assert_cmpint (back->heads_nf[h].status, ==, r->heads_nf[h].status);
      g_assert_cmpfloat (back->heads_nf[h].tau, ==, r->heads_nf[h].tau);
      g_assert_cmpfloat (back->heads_nf[h].tau_p, ==, r->heads_nf[h].tau_p);
    }
  g_assert_cmpint (sc_faith_sentence_stats (back, &sp, &st2, &err), ==, SC_OK);
  g_assert_cmpint (st2->best_head, ==, st->best_head);
  g_assert_cmpfloat (st2->best_p_holm, ==, st->best_p_holm);
  for (int s = 0; s < SC_FAITH_N_SOURCES; s++)
    {
      g_assert_true (st2->source[s].tau_ci.lo == st->source[s].tau_ci.lo
                     || (isnan (st2->source[s].tau_ci.lo) && isnan (st->source[s].tau_ci.lo)));
      g_assert_true (st2->source[s].perm.p == st->source[s].perm.p
                     || (isnan (st2->source[s].perm.p) && isnan (st->source[s].perm.p)));
      g_assert_cmpstr (st2->source[s].reading, ==, st->source[s].reading);
    }
  g_assert_cmpstr (st2->best_reading, ==, st->best_reading);
  sc_faith_sentence_stats_free (st2);

  /* A study stored before the heads' "-nf" metrics existed: sc_faith_store writes none for
   * heads_nf left "not computed". It reads back with every head undefined without the
   * first token (said so), the sources' computed from the stored vectors. */
  {
    const char *pj_old = "{\"study\":2,\"run\":8,\"ids\":null,\"metric\":\"tv\",\"kind\":"
                         "\"mask\",\"top_k\":0,\"target\":null,\"gradients\":null}";
    ScFaithParams p_old = { .target = -1, .exclude_first = true };
    for (int h = 0; h < f.L * f.H; h++)
      r->heads_nf[h] = (ScFaithAgreement) { SC_ERR_NOT_FOUND, NAN, NAN, NAN, NAN, NAN, "" };
    g_assert_cmpint (sc_faith_store (store, &sm, pj_old, r, NULL, &err), ==, SC_OK);
    g_assert_cmpint (sc_faith_load (store, f.in, sm.sha256, pj_old, &p_old, &old, NULL, &err),
                     ==, SC_OK);
    for (int h = 0; h < f.L * f.H; h++)
      {
        g_assert_cmpint (old->heads_nf[h].status, ==, SC_ERR_NOT_FOUND);
        g_assert_nonnull (strstr (old->heads_nf[h].reason, "not stored"));
        g_assert_cmpfloat (old->heads[h].tau, ==, r->heads[h].tau);
      }
    for (int s = 0; s < SC_FAITH_FIRST_GRADIENT_SOURCE; s++)
      g_assert_true (old->agree_nf[s].tau == back->agree_nf[s].tau
                     || (isnan (old->agree_nf[s].tau) && isnan (back->agree_nf[s].tau)));
    g_assert_cmpint (sc_faith_sentence_stats (old, &sp, &st2, &err), ==, SC_OK);
    g_assert_cmpint (st2->best_head, ==, -1);
    g_assert_cmpint (st2->m_heads, ==, 0);
    g_assert_nonnull (strstr (st2->best_reading, "No head"));
    sc_faith_sentence_stats_free (st2);
  }

  /* B over the ceiling is refused. */
  {
    const ScFaithStatsParams big = { SC_STATS_MAX_BOOT + 1, 0 };
    g_assert_cmpint (sc_faith_sentence_stats (back, &big, &st2, &err), ==, SC_ERR_INVALID_ARG);
  }
  sc_faith_sentence_stats_free (st);
  sc_faith_result_free (old);
  sc_faith_result_free (back);
  sc_faith_result_free (r);
  sc_store_close (store);
  fixture_clear (&f);
  g_unlink (db_path);
  g_unlink (model_path);
  g_rmdir (dir);
}

/* The patching reference (kind trace): the reference vector is causal tracing's importance
 * (sc-trace.h, the documented defaults) of the same metric, read in a fresh session; no
 * leave-one-out is run, taken or returned; every source is ranked against it; the readings
 * name it. */
static void
test_trace_reference (void)
{
  Fixture f, g;
  const ScFaithMetric metrics[2] = { SC_FAITH_METRIC_TV, SC_FAITH_METRIC_ABS_DELTA_LOGP };
  const ScTraceMeasure measures[2] = { SC_TRACE_TV, SC_TRACE_ABS_DELTA_LOGP };
  ScError err = { 0 };

  fixture_init (&f, sc_test_tiny_model ());
  fixture_init (&g, sc_test_tiny_model ());
  for (int m = 0; m < 2; m++)
    {
      const ScFaithParams p = { .metric = metrics[m], .kind = SC_FAITH_ERASE_TRACE, .top_k = 4,
                                .target = -1 };
      const ScTraceParams tp = { .target = -1, .contrast = -1,
                                 .samples = SC_TRACE_DEFAULT_SAMPLES,
                                 .noise = SC_TRACE_DEFAULT_NOISE,
                                 .seed = SC_TRACE_DEFAULT_SEED };
      ScFaithResult *r = NULL;
      ScTokenLooResult *loo_out = (ScTokenLooResult *) &err; /* must come back NULL */
      ScTraceResult *tr = NULL;
      ScFaithSentenceStats *st = NULL;
      double want[N - 1];

      g_assert_cmpint (sc_faith_run (f.s, f.m, ids, N, &p, NULL, NULL, NULL, &r, &loo_out,
                                     &err), ==, SC_OK);
      g_assert_null (loo_out);
      g_assert_cmpint (r->kind, ==, SC_FAITH_ERASE_TRACE);
      g_assert_cmpint (sc_trace_run (g.s, g.m, ids, N, &tp, NULL, NULL, &tr, &err), ==, SC_OK);
      g_assert_cmpint (sc_trace_importance (tr, measures[m], want, NULL, &err), ==, SC_OK);
      g_assert_cmpint (r->target, ==, tr->target);
      g_assert_cmpint (r->top1_clean, ==, tr->top1_clean);
      for (int j = 0; j < N - 1; j++)
        g_assert_cmpfloat (r->loo[j], ==, want[j]);
      assert_agreement (&r->agree[SC_FAITH_SOURCE_LAST_MEAN], r->attn[SC_FAITH_SOURCE_LAST_MEAN],
                       r->loo, N - 1, 4);
      g_assert_cmpint (sc_faith_sentence_stats (r, NULL, &st, &err), ==, SC_OK);
      g_assert_nonnull (strstr (st->source[SC_FAITH_SOURCE_LAST_MEAN].reading, "causal tracing"));
      g_assert_null (strstr (st->source[SC_FAITH_SOURCE_LAST_MEAN].reading, "leave-one-out"));
      g_assert_nonnull (strstr (st->best_reading, "causal tracing"));
      sc_faith_sentence_stats_free (st);
      sc_trace_result_free (tr);

      /* a leave-one-out result is not a causal-tracing reference */
      {
        ScTokenLooResult *loo = NULL;
        const ScAblationParams ap = { .target = -1, .contrast = -1 };
        ScFaithResult *r2 = NULL;
        g_assert_cmpint (sc_token_loo_run (f.s, f.m, ids, N, &ap, NULL, NULL, &loo, &err), ==,
                         SC_OK);
        g_assert_cmpint (sc_faith_run (f.s, f.m, ids, N, &p, loo, NULL, NULL, &r2, NULL, &err),
                         ==, SC_ERR_INVALID_ARG);
        g_assert_nonnull (strstr (err.message, "causal tracing"));
        g_assert_null (r2);
        sc_token_loo_result_free (loo);
      }
      sc_faith_result_free (r);
    }
  fixture_clear (&f);
  fixture_clear (&g);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/faithfulness/brute-tv-mask", test_brute_tv_mask);
  g_test_add_func ("/faithfulness/brute-jsd-drop", test_brute_jsd_drop);
  g_test_add_func ("/faithfulness/brute-logp-mask", test_brute_logp_mask);
  g_test_add_func ("/faithfulness/known-answers", test_known_answers);
  g_test_add_func ("/faithfulness/summarize", test_summarize);
  g_test_add_func ("/faithfulness/head-level", test_head_level);
  g_test_add_func ("/faithfulness/store-cancel-hostile", test_store_cancel_and_hostile);
  g_test_add_func ("/faithfulness/flow-ceiling", test_flow_ceiling);
  g_test_add_func ("/faithfulness/statistics", test_statistics);
  g_test_add_func ("/faithfulness/trace-reference", test_trace_reference);
  return g_test_run ();
}
