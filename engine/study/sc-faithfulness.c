/* sc-faithfulness.c — attention importance against leave-one-out importance (the header has
 * every definition). One clean pass with a frugal observer, token leave-one-out through
 * sc_token_loo_run(), then rollout and flow (engine/analysis/sc-rollout) and rank agreement
 * (engine/analysis/sc-rank) per source; aggregation over sentences; the head-level
 * correlations; the study kind (storage is sc-faith-store.c's). Nothing here defines a statistic: it only decides
 * which vectors are compared. */
#include "study/sc-faithfulness.h"
#include "study/sc-faith-private.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/sc-mixing.h"
#include "analysis/sc-rollout.h"
#include "core/sc-sha256.h"
#include "study/sc-attribution.h"
#include "study/sc-mixing-study.h"
#include "study/sc-norm-study.h"
#include "text/sc-tokenizer.h"

static const char *const METRIC_ID[SC_FAITH_N_METRICS] = { "tv", "jsd", "abs-delta-logp",
                                                             "abs-delta-logit-diff" };
static const char *const ERASE_ID[SC_FAITH_N_ERASE] = { "mask", "drop", "trace" };
static const char *const SOURCE_ID[SC_FAITH_N_SOURCES] = { "last-mean", "rollout", "flow",
                                                             "saliency", "gradxinput", "ig",
                                                             "grad-rollout", "norm",
                                                             "norm-rollout", "vz",
                                                             "vz-rollout", "alti",
                                                             "alti-rollout" };

const ScHeadMetric SC_FAITH_HEAD_STATS[SC_FAITH_N_HEAD_STATS] = {
  SC_HEAD_METRIC_ENTROPY, SC_HEAD_METRIC_CONFIDENCE, SC_HEAD_METRIC_SINK,
  SC_HEAD_METRIC_PREVIOUS,
};

const char *
sc_faith_metric_id (ScFaithMetric m)
{
  return (unsigned) m < SC_FAITH_N_METRICS ? METRIC_ID[m] : NULL;
}

const char *
sc_faith_erase_id (ScFaithErase k)
{
  return (unsigned) k < SC_FAITH_N_ERASE ? ERASE_ID[k] : NULL;
}

const char *
sc_faith_source_id (ScFaithSource s)
{
  return (unsigned) s < SC_FAITH_N_SOURCES ? SOURCE_ID[s] : NULL;
}

bool
sc_faith_metric_from_id (const char *id, ScFaithMetric *out)
{
  for (int i = 0; id != NULL && i < SC_FAITH_N_METRICS; i++)
    if (strcmp (id, METRIC_ID[i]) == 0)
      return (*out = (ScFaithMetric) i), true;
  return false;
}

const char *
sc_faith_reference_name (ScFaithErase k)
{
  return k == SC_FAITH_ERASE_TRACE ? "causal tracing" : "leave-one-out";
}

bool
sc_faith_erase_from_id (const char *id, ScFaithErase *out)
{
  for (int i = 0; id != NULL && i < SC_FAITH_N_ERASE; i++)
    if (strcmp (id, ERASE_ID[i]) == 0)
      return (*out = (ScFaithErase) i), true;
  return false;
}

static double
now_s (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

void
sc_faith_agreement_undefined (ScFaithAgreement *a, ScStatus status, const char *reason)
{
  a->status = status;
  a->tau = a->tau_p = a->rho = a->rho_p = a->topk = NAN;
  snprintf (a->reason, sizeof a->reason, "%.*s", (int) sizeof a->reason - 1,
            reason != NULL ? reason : "");
}

ScFaithResult *
sc_faith_result_new (int n_layers, int n_heads, int n_tokens)
{
  ScFaithResult *r;
  size_t nh;
  int i, s;

  if (n_layers < 1 || n_heads < 1 || n_tokens < SC_FAITH_MIN_TOKENS
      || (unsigned) n_tokens > SC_STORE_MAX_TOKENS || (unsigned) n_layers > SC_STORE_MAX_LAYERS
      || (unsigned) n_heads > SC_STORE_MAX_HEADS || (r = calloc (1, sizeof *r)) == NULL)
    return NULL;
  nh = (size_t) n_layers * n_heads;
  r->n_tokens = n_tokens;
  r->n_items = n_tokens - 1;
  r->n_layers = n_layers;
  r->n_heads = n_heads;
  r->target = r->top1_clean = r->contrast = -1;
  r->loo = malloc ((size_t) r->n_items * sizeof *r->loo);
  r->heads = malloc (nh * sizeof *r->heads);
  r->heads_nf = malloc (nh * sizeof *r->heads_nf);
  r->head_stats = malloc (nh * sizeof *r->head_stats);
  for (s = 0; s < SC_FAITH_N_SOURCES; s++)
    r->attn[s] = malloc ((size_t) r->n_items * sizeof *r->attn[s]);
  for (s = 0; s < SC_FAITH_N_SOURCES; s++)
    if (r->attn[s] == NULL)
      {
        sc_faith_result_free (r);
        return NULL;
      }
  if (r->loo == NULL || r->heads == NULL || r->heads_nf == NULL || r->head_stats == NULL)
    {
      sc_faith_result_free (r);
      return NULL;
    }
  for (i = 0; i < r->n_items; i++)
    {
      r->loo[i] = NAN;
      for (s = 0; s < SC_FAITH_N_SOURCES; s++)
        r->attn[s][i] = NAN;
    }
  for (s = 0; s < SC_FAITH_N_SOURCES; s++)
    {
      sc_faith_agreement_undefined (&r->agree[s], SC_ERR_NOT_FOUND, "not computed");
      sc_faith_agreement_undefined (&r->agree_nf[s], SC_ERR_NOT_FOUND, "not computed");
    }
  sc_faith_agreement_undefined (&r->attn_vs_grad, SC_ERR_NOT_FOUND, "not computed");
  r->ig_gap_rel = NAN;
  for (size_t h = 0; h < nh; h++)
    {
      sc_faith_agreement_undefined (&r->heads[h], SC_ERR_NOT_FOUND, "not computed");
      sc_faith_agreement_undefined (&r->heads_nf[h], SC_ERR_NOT_FOUND, "not computed");
      r->head_stats[h] = (ScHeadStats) { NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, -1, NAN };
    }
  return r;
}

void
sc_faith_result_free (ScFaithResult *r)
{
  if (r == NULL)
    return;
  free (r->loo);
  for (int s = 0; s < SC_FAITH_N_SOURCES; s++)
    free (r->attn[s]);
  free (r->head_rows);
  free (r->heads);
  free (r->heads_nf);
  free (r->head_stats);
  free (r);
}

/* ------------------------------------------------------------------------------------ */
/* Importances and agreement                                                             */

ScStatus
sc_faith_loo_importance (const ScTokenLooResult *loo, ScFaithMetric metric, ScFaithErase kind,
                         double *out, ScError *err)
{
  const ScAblationEffect *e;

  if (loo == NULL || out == NULL || loo->n_tokens < 2 || (unsigned) metric >= SC_FAITH_N_METRICS
      || (unsigned) kind >= SC_FAITH_N_ERASE)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: bad leave-one-out arguments");
  if (metric == SC_FAITH_METRIC_ABS_DELTA_LOGIT_DIFF && loo->contrast < 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: the leave-one-out result has "
                         "no contrast, and abs-delta-logit-diff measures one");
  e = kind == SC_FAITH_ERASE_MASK ? loo->mask : loo->drop;
  for (int j = 0; j < loo->n_tokens - 1; j++)
    {
      const double v = metric == SC_FAITH_METRIC_TV    ? e[j].next.tv
                       : metric == SC_FAITH_METRIC_JSD ? e[j].next.jsd
                       : metric == SC_FAITH_METRIC_ABS_DELTA_LOGP
                           ? fabs (e[j].next.delta_logp)
                           : fabs (e[j].delta_logit_diff);
      if (isnan (v))
        return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: leave-one-out %s %s of "
                             "token %d is NaN", ERASE_ID[kind], METRIC_ID[metric], j);
      out[j] = v;
    }
  return SC_OK;
}

ScStatus
sc_faith_agreement (const double *attn, const double *loo, int n, int k, ScFaithAgreement *out,
                    ScError *err)
{
  ScKendall kt;
  ScSpearman sp;
  ScError e2 = { 0 };
  ScStatus st;

  if (attn == NULL || loo == NULL || out == NULL || n < 2 || k < 1 || k > n)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: agreement of %d items with "
                         "top-%d", n, k);
  sc_faith_agreement_undefined (out, SC_OK, NULL);
  for (int j = 0; j < n; j++)
    if (isnan (attn[j]))
      {
        sc_faith_agreement_undefined (out, SC_ERR_RANGE, "the attention importance is undefined");
        return SC_OK;
      }
  st = sc_kendall_tau_b (attn, loo, n, &kt, &e2);
  if (st == SC_ERR_RANGE)
    {
      /* The only undefined case left: one vector is constant (0/0). */
      sc_faith_agreement_undefined (out, SC_ERR_RANGE, e2.message);
      return SC_OK;
    }
  if (st != SC_OK)
    return sc_error_set (err, st, "%s", e2.message);
  out->tau = kt.tau;
  out->tau_p = kt.p;
  st = sc_spearman_rho (attn, loo, n, &sp, &e2);
  if (st != SC_OK && st != SC_ERR_RANGE)
    return sc_error_set (err, st, "%s", e2.message);
  out->rho = st == SC_OK ? sp.rho : NAN;
  out->rho_p = st == SC_OK ? sp.p : NAN;
  if ((st = sc_topk_overlap (attn, loo, n, k, &out->topk, err)) != SC_OK)
    return st;
  return SC_OK;
}

int
sc_faith_n_sources (const ScFaithResult *r)
{
  return r->mixing ? SC_FAITH_N_SOURCES : SC_FAITH_FIRST_MIXING_SOURCE;
}

const ScFaithAgreement *
sc_faith_source_used (const ScFaithResult *r, int s)
{
  return r->exclude_first ? &r->agree_nf[s] : &r->agree[s];
}

const ScFaithAgreement *
sc_faith_source_other (const ScFaithResult *r, int s)
{
  return r->exclude_first ? &r->agree[s] : &r->agree_nf[s];
}

const ScFaithAgreement *
sc_faith_head_used (const ScFaithResult *r, int h)
{
  return r->exclude_first ? &r->heads_nf[h] : &r->heads[h];
}

/* The agreement of @attn with @loo over items 1 .. n − 1 (the first token left out) with
 * top-k @k clamped to n − 1. */
static ScStatus
agreement_without_first (const double *attn, const double *loo, int n, int k,
                         ScFaithAgreement *out, ScError *err)
{
  if (n - 1 < 2)
    {
      sc_faith_agreement_undefined (out, SC_ERR_RANGE, "without the first token one token is left");
      return SC_OK;
    }
  return sc_faith_agreement (attn + 1, loo + 1, n - 1, k < n - 1 ? k : n - 1, out, err);
}

ScStatus
sc_faith_fill_without_first (ScFaithResult *r, ScError *err)
{
  ScStatus st;

  if (r == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: NULL result");
  for (int s = 0; s < SC_FAITH_N_SOURCES; s++)
    {
      const ScFaithAgreement *a = &r->agree[s];
      /* not asked, not computed: the same without the first token; a constant vector or a
       * NaN importance is looked at again (sc_faith_agreement says which) */
      if (a->status == SC_ERR_UNSUPPORTED || a->status == SC_ERR_NOT_FOUND)
        {
          sc_faith_agreement_undefined (&r->agree_nf[s], a->status, a->reason);
          continue;
        }
      if ((st = agreement_without_first (r->attn[s], r->loo, r->n_items, r->top_k,
                                         &r->agree_nf[s], err)) != SC_OK)
        return st;
    }
  return SC_OK;
}

/* ------------------------------------------------------------------------------------ */
/* The clean pass's observer                                                             */

typedef struct {
  int L, H, n;
  double *row;           /* (L * H, n − 1) the last query's row over the items */
  ScHeadStats *stats;    /* (L * H) */
  float *layer_mean;     /* (L, n, n): mean_h A_l,h */
  double *acc;           /* (n, n) the running sum of the current layer's heads */
  int acc_layer, acc_count;
  double seconds;        /* time spent in observe() */
  ScStatus status;
} Keep;

static void
keep_flush (Keep *k)
{
  const size_t nn = (size_t) k->n * k->n;
  float *dst;

  if (k->acc_layer < 0)
    return;
  dst = k->layer_mean + (size_t) k->acc_layer * nn;
  for (size_t i = 0; i < nn; i++)
    dst[i] = (float) (k->acc[i] / k->acc_count);
  memset (k->acc, 0, nn * sizeof *k->acc);
  k->acc_layer = -1;
  k->acc_count = 0;
}

static bool
keep_observe (void *user, int layer, int head, const float *probs, int n_query, int n_key)
{
  Keep *k = user;
  const double t0 = now_s ();
  const size_t nn = (size_t) k->n * k->n;
  const int i = layer * k->H + head;

  if (n_query != k->n || n_key != k->n || layer < 0 || layer >= k->L || head < 0
      || head >= k->H)
    {
      k->status = SC_ERR_INVALID_ARG;
      return false;
    }
  if (k->acc_layer != layer)
    keep_flush (k);
  k->acc_layer = layer;
  k->acc_count++;
  for (size_t c = 0; c < nn; c++)
    k->acc[c] += probs[c];
  for (int j = 0; j < k->n - 1; j++)
    k->row[(size_t) i * (k->n - 1) + j] = probs[(size_t) (k->n - 1) * k->n + j];
  if (sc_head_stats_compute (probs, n_query, n_key, NULL, &k->stats[i], NULL) != SC_OK)
    {
      k->status = SC_ERR_INVALID_ARG;
      return false;
    }
  /* Heads of a layer arrive together (sc-forward.h); the last one closes the layer. */
  if (k->acc_count == k->H)
    keep_flush (k);
  k->seconds += now_s () - t0;
  return true;
}

/* ------------------------------------------------------------------------------------ */
/* Running                                                                               */

typedef struct {
  ScFaithProgressFn fn;
  void *user;
  double lo, span; /* the fraction of the study a step's [0, 1] covers */
} Prog;

/* Leave-one-out is nearly all of the work: its fraction is reported as 95 % of the study
 * (with the context-mixing sources, whose value zeroing costs as much, the first half, and
 * they the second). */
static bool
loo_progress (void *user, double fraction)
{
  const Prog *p = user;
  return p->fn == NULL || p->fn (p->user, p->lo + p->span * fraction);
}

static ScStatus
check_params (const ScModelInfo *info, const int32_t *ids, int n, const ScFaithParams *p,
              ScError *err)
{
  if (n < SC_FAITH_MIN_TOKENS)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: %d token%s given, at least %d "
                         "needed (the last token is the query and is never erased, and a "
                         "rank agreement needs two tokens before it)", n, n == 1 ? "" : "s",
                         SC_FAITH_MIN_TOKENS);
  if ((unsigned) n > SC_STORE_MAX_TOKENS)
    return sc_error_set (err, SC_ERR_RANGE, "faithfulness: %d tokens, at most %u", n,
                         SC_STORE_MAX_TOKENS);
  if ((unsigned) p->metric >= SC_FAITH_N_METRICS)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: unknown metric %d",
                         (int) p->metric);
  if ((unsigned) p->kind >= SC_FAITH_N_ERASE)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: unknown erasure kind %d",
                         (int) p->kind);
  if (p->target < -1 || (p->target >= 0 && (uint32_t) p->target >= info->n_vocab))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: target %d is outside the "
                         "vocabulary 0..%u", p->target, info->n_vocab - 1);
  if (p->contrastive != (p->metric == SC_FAITH_METRIC_ABS_DELTA_LOGIT_DIFF))
    return sc_error_set (err, SC_ERR_INVALID_ARG, p->contrastive
                         ? "faithfulness: with a contrast the leave-one-out importance is "
                           "abs-delta-logit-diff, not %s"
                         : "faithfulness: the metric %s needs a contrast token",
                         METRIC_ID[p->metric]);
  if (p->contrastive
      && (p->contrast < 0 || (uint32_t) p->contrast >= info->n_vocab
          || p->contrast == p->target))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: contrast %d is outside the "
                         "vocabulary 0..%u or the target itself", p->contrast,
                         info->n_vocab - 1);
  for (int i = 0; i < n; i++)
    if (ids[i] < 0 || (uint32_t) ids[i] >= info->n_vocab)
      return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: token %d has id %d, outside "
                           "the vocabulary of %u", i, ids[i], info->n_vocab);
  return SC_OK;
}

/* The gradient sources (sc-faithfulness.h) from one attribution study of log p(target) at
 * the last token; unavailable when not asked. */
static ScStatus
gradient_sources (ScSession *session, const ScModel *model, const int32_t *ids, int n,
                  const ScFaithParams *p, ScFaithResult *r, ScError *err)
{
  static const ScAttrMethod method[] = { SC_ATTR_SALIENCY, SC_ATTR_GRADXINPUT, SC_ATTR_IG,
                                         SC_ATTR_GRAD_ROLLOUT };
  const ScTokenizer *tok = sc_model_tokenizer (model);
  const int32_t eos = tok != NULL ? sc_tokenizer_eos (tok) : -1;
  ScAttrParams ap = { .methods = 0, .target = r->target, .contrast = r->contrast, .position = -1,
                      .steps = p->ig_steps, .rule = SC_ATTR_RULE_ADAPTIVE,
                      .baseline = eos >= 0 ? SC_ATTR_BASELINE_TOKEN : SC_ATTR_BASELINE_ZERO,
                      .baseline_token = eos };
  ScAttrResult *a = NULL;
  ScGrad *g = NULL;
  ScError e2 = { 0 };
  ScStatus st;

  if (!p->gradients)
    {
      for (int s = SC_FAITH_FIRST_GRADIENT_SOURCE; s < SC_FAITH_FIRST_MIXING_SOURCE; s++)
        sc_faith_agreement_undefined (&r->agree[s], SC_ERR_UNSUPPORTED, "gradients not asked");
      sc_faith_agreement_undefined (&r->attn_vs_grad, SC_ERR_UNSUPPORTED, "gradients not asked");
      return SC_OK;
    }
  if ((st = sc_grad_new (session, &g, err)) != SC_OK)
    return st;
  st = sc_attr_run (g, model, ids, n, &ap, NULL, NULL, &a, &e2);
  if (st == SC_ERR_RANGE) /* the gradient overflowed on the path: integrated gradients is
                           * undefined; the other methods come from the clean pass */
    {
      ap.methods = (1u << SC_ATTR_N_METHODS) - 1 - (1u << SC_ATTR_IG);
      st = sc_attr_run (g, model, ids, n, &ap, NULL, NULL, &a, err);
      if (st == SC_OK)
        sc_faith_agreement_undefined (&r->agree[SC_FAITH_SOURCE_IG], SC_ERR_RANGE, e2.message);
    }
  else if (st != SC_OK)
    sc_error_set (err, st, "%s", e2.message);
  sc_grad_free (g);
  if (st != SC_OK)
    return st;
  for (int m = 0; m < 4; m++)
    if (a->scores[method[m]] != NULL)
      for (int j = 0; j < n - 1; j++)
        r->attn[SC_FAITH_FIRST_GRADIENT_SOURCE + m][j] = fabs (a->scores[method[m]][j]);
  r->ig_gap_rel = a->ig_gap_rel;
  sc_attr_result_free (a);
  return SC_OK;
}

/* Rollout and flow rows of position n − 1 from the kept layer means. */
static ScStatus
rollout_and_flow (Keep *k, ScFaithResult *r, ScError *err)
{
  const size_t nn = (size_t) k->n * k->n;
  const float **layers = malloc ((size_t) k->L * sizeof *layers);
  double *roll = malloc (nn * sizeof *roll), *flow = malloc ((size_t) k->n * sizeof *flow);
  ScError e2 = { 0 };
  ScStatus st = SC_OK;
  double t0;

  if (layers == NULL || roll == NULL || flow == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "faithfulness: out of memory for rollout");
      goto done;
    }
  for (int l = 0; l < k->L; l++)
    layers[l] = k->layer_mean + (size_t) l * nn;
  if ((st = sc_attention_rollout (layers, k->L, 1, k->n, roll, err)) != SC_OK)
    goto done;
  for (int j = 0; j < k->n - 1; j++)
    r->attn[SC_FAITH_SOURCE_ROLLOUT][j] = roll[(size_t) (k->n - 1) * k->n + j];

  t0 = now_s ();
  if (!sc_attention_flow_fits (k->L, k->n))
    {
      char why[160];
      snprintf (why, sizeof why, "flow of %d layers x %d tokens is over its work ceiling "
                "(SC_FLOW_MAX_WORK %.0f, SC_FLOW_MAX_NODES %d)", k->L, k->n, SC_FLOW_MAX_WORK,
                SC_FLOW_MAX_NODES);
      sc_faith_agreement_undefined (&r->agree[SC_FAITH_SOURCE_FLOW], SC_ERR_RANGE, why);
    }
  else if ((st = sc_attention_flow (layers, k->L, 1, k->n, k->n - 1, flow, &e2)) == SC_OK)
    for (int j = 0; j < k->n - 1; j++)
      r->attn[SC_FAITH_SOURCE_FLOW][j] = flow[j];
  else if (st == SC_ERR_UNSUPPORTED || st == SC_ERR_RANGE)
    {
      sc_faith_agreement_undefined (&r->agree[SC_FAITH_SOURCE_FLOW], st, e2.message);
      st = SC_OK;
    }
  else
    sc_error_set (err, st, "%s", e2.message);
  r->timing.flow_s = now_s () - t0;
done:
  free (layers);
  free (roll);
  free (flow);
  return st;
}

/* Makes the context-mixing source @s unavailable with status @st and @why. */
static void
mixing_undefined (ScFaithResult *r, int s, ScStatus st, const char *why)
{
  for (int j = 0; j < r->n_items; j++)
    r->attn[s][j] = NAN;
  sc_faith_agreement_undefined (&r->agree[s], st, why);
}

/* The norm-based sources: one pass of the `norms` study keeping every layer's map N. */
static ScStatus
norm_sources (ScSession *session, const ScModel *model, const int32_t *ids, int n,
              const ScStudyCtx *ctx, ScFaithResult *r, ScError *err)
{
  const int L = r->n_layers;
  const size_t nn = (size_t) n * n;
  ScNormParams np = { .layer = L - 1 };
  ScNormResult *nres = NULL;
  float *maps = malloc ((size_t) L * nn * sizeof *maps);
  const float **layers = malloc ((size_t) L * sizeof *layers);
  double *roll = malloc (nn * sizeof *roll);
  ScError e2 = { 0 };
  ScStatus st;

  if (maps == NULL || layers == NULL || roll == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "faithfulness: out of memory for the norm maps");
      goto out;
    }
  st = sc_norm_run_layers (session, model, ids, n, &np, ctx, &nres, maps, &e2);
  if (st == SC_ERR_RANGE)
    {
      mixing_undefined (r, SC_FAITH_SOURCE_NORM, st, e2.message);
      mixing_undefined (r, SC_FAITH_SOURCE_NORM_ROLLOUT, st, e2.message);
      st = SC_OK;
      goto out;
    }
  if (st != SC_OK)
    {
      sc_error_set (err, st, "%s", e2.message);
      goto out;
    }
  for (int j = 0; j < n - 1; j++)
    r->attn[SC_FAITH_SOURCE_NORM][j] = maps[(size_t) (L - 1) * nn + (size_t) (n - 1) * n + j];
  /* N̂_l: each row over its sum; rollout adds ½ I to each as it does to the weights */
  for (int l = 0; l < L; l++)
    {
      sc_mixing_normalise_rows (maps + (size_t) l * nn, n);
      layers[l] = maps + (size_t) l * nn;
    }
  if ((st = sc_attention_rollout (layers, L, 1, n, roll, err)) != SC_OK)
    goto out;
  for (int j = 0; j < n - 1; j++)
    r->attn[SC_FAITH_SOURCE_NORM_ROLLOUT][j] = roll[(size_t) (n - 1) * n + j];
out:
  sc_norm_result_free (nres);
  free (maps);
  free (layers);
  free (roll);
  return st;
}

/* Value zeroing or ALTI (@method) of the `mixing` study: the last layer's map's last row
 * into source @s, the rollout's into @s + 1. */
static ScStatus
mixing_method_sources (ScSession *session, const ScModel *model, const int32_t *ids, int n,
                       int method, int s, const ScStudyCtx *ctx, ScFaithResult *r,
                       ScError *err)
{
  const ScMixingParams mp = { .method = method };
  ScMixingResult *mr = NULL;
  ScError e2 = { 0 };
  ScStatus st = sc_mixing_run (session, model, ids, n, &mp, ctx, &mr, &e2);

  if (st == SC_ERR_RANGE) /* the maps do not fit the store: unavailable, saying why */
    {
      mixing_undefined (r, s, st, e2.message);
      mixing_undefined (r, s + 1, st, e2.message);
      return SC_OK;
    }
  if (st != SC_OK)
    return sc_error_set (err, st, "%s", e2.message);
  for (int k = 0; k < 2; k++)
    {
      const float *map = sc_mixing_result_map (mr, mr->n_layers - 1 + k);
      for (int j = 0; j < n - 1; j++)
        r->attn[s + k][j] = map[(size_t) (n - 1) * n + j];
    }
  sc_mixing_result_free (mr);
  return SC_OK;
}

/* The context-mixing sources (sc-faithfulness.h); unavailable when not asked. Progress
 * from @prog->lo to lo + span: the norms a tenth, value zeroing most, ALTI a tenth. */
static ScStatus
mixing_sources (ScSession *session, const ScModel *model, const int32_t *ids, int n,
                const ScFaithParams *p, ScFaithResult *r, Prog *prog, ScError *err)
{
  const double lo = prog->lo, span = prog->span;
  ScStudyCtx ctx = { 0 };
  ScStatus st;

  if (!p->mixing)
    {
      for (int s = SC_FAITH_FIRST_MIXING_SOURCE; s < SC_FAITH_N_SOURCES; s++)
        sc_faith_agreement_undefined (&r->agree[s], SC_ERR_UNSUPPORTED, "context mixing not asked");
      return SC_OK;
    }
  ctx.progress = loo_progress;
  ctx.progress_user = prog;
  prog->lo = lo, prog->span = 0.1 * span;
  if ((st = norm_sources (session, model, ids, n, &ctx, r, err)) != SC_OK)
    return st;
  prog->lo = lo + 0.1 * span, prog->span = 0.8 * span;
  if ((st = mixing_method_sources (session, model, ids, n, SC_MIXING_VALUE_ZEROING,
                                   SC_FAITH_SOURCE_VZ, &ctx, r, err)) != SC_OK)
    return st;
  prog->lo = lo + 0.9 * span, prog->span = 0.1 * span;
  return mixing_method_sources (session, model, ids, n, SC_MIXING_ALTI, SC_FAITH_SOURCE_ALTI,
                                &ctx, r, err);
}

/* The causal-tracing reference (sc-faithfulness.h, sc-trace.h): item j's importance is the
 * largest over layers of the metric's |mean effect| of restoring its clean state. */
static ScStatus
trace_reference (ScSession *session, const ScModel *model, const int32_t *ids, int n,
                 const ScFaithParams *p, ScFaithResult *r, Prog *prog, ScError *err)
{
  static const ScTraceMeasure MEASURE[SC_FAITH_N_METRICS] = {
    [SC_FAITH_METRIC_TV] = SC_TRACE_TV,
    [SC_FAITH_METRIC_JSD] = SC_TRACE_JSD,
    [SC_FAITH_METRIC_ABS_DELTA_LOGP] = SC_TRACE_ABS_DELTA_LOGP,
    [SC_FAITH_METRIC_ABS_DELTA_LOGIT_DIFF] = SC_TRACE_ABS_DELTA_LOGIT_DIFF,
  };
  const ScTraceParams tp = { .target = p->target, .contrast = p->contrastive ? p->contrast : -1,
                             .samples = SC_TRACE_DEFAULT_SAMPLES,
                             .noise = SC_TRACE_DEFAULT_NOISE, .seed = SC_TRACE_DEFAULT_SEED };
  ScTraceResult *tr = NULL;
  ScStatus st;

  if ((st = sc_trace_run (session, model, ids, n, &tp, loo_progress, prog, &tr, err)) != SC_OK)
    return st;
  r->target = tr->target;
  r->top1_clean = tr->top1_clean;
  r->contrast = tr->contrast;
  st = sc_trace_importance (tr, MEASURE[p->metric], r->loo, NULL, err);
  sc_trace_result_free (tr);
  return st;
}

ScStatus
sc_faith_run (ScSession *session, const ScModel *model, const int32_t *ids, int n,
              const ScFaithParams *p, const ScTokenLooResult *loo_in,
              ScFaithProgressFn progress, void *progress_user, ScFaithResult **out,
              ScTokenLooResult **loo_out, ScError *err)
{
  const double t_start = now_s ();
  const ScModelInfo *info;
  ScFaithResult *r = NULL;
  ScTokenLooResult *loo = NULL;
  Keep k = { 0 };
  ScObserver obs = { NULL, keep_observe, &k, NULL };
  ScForwardOptions opt = { .observer = &obs };
  ScAblationParams ap = { 0 };
  Prog prog = { progress, progress_user, 0.0, p != NULL && p->mixing ? 0.5 : 0.95 };
  float *logits = NULL;
  size_t nh;
  double t0;
  ScStatus st;

  if (loo_out != NULL)
    *loo_out = NULL;
  if (session == NULL || model == NULL || ids == NULL || p == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: NULL argument");
  info = sc_model_info (model);
  if ((st = check_params (info, ids, n, p, err)) != SC_OK)
    return st;
  if (loo_in != NULL && p->kind == SC_FAITH_ERASE_TRACE)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: a leave-one-out result was "
                         "given, and the reference asked for is causal tracing");
  if (loo_in != NULL && (loo_in->n_tokens != n || (p->target >= 0 && loo_in->target != p->target)))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: the leave-one-out result given "
                         "is of %d tokens and target %d, not %d tokens and target %d",
                         loo_in->n_tokens, loo_in->target, n, p->target);
  if (loo_in != NULL && loo_in->contrast != (p->contrastive ? p->contrast : -1))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: the leave-one-out result given "
                         "has contrast %d, not %d", loo_in->contrast,
                         p->contrastive ? p->contrast : -1);
  k.L = (int) info->n_layers;
  k.H = (int) info->n_heads;
  k.n = n;
  k.acc_layer = -1;
  nh = (size_t) k.L * k.H;
  r = sc_faith_result_new (k.L, k.H, n);
  k.row = malloc (nh * (size_t) (n - 1) * sizeof *k.row);
  k.layer_mean = malloc ((size_t) k.L * n * n * sizeof *k.layer_mean);
  k.acc = calloc ((size_t) n * n, sizeof *k.acc);
  logits = malloc ((size_t) info->n_vocab * sizeof *logits);
  if (r == NULL || k.row == NULL || k.layer_mean == NULL || k.acc == NULL || logits == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "faithfulness: out of memory for %d tokens", n);
      goto fail;
    }
  r->metric = p->metric;
  r->kind = p->kind;
  r->exclude_first = p->exclude_first;
  r->top_k = p->top_k > 0 ? p->top_k : SC_FAITH_DEFAULT_TOP_K;
  if (r->top_k > n - 1)
    r->top_k = n - 1;
  k.stats = r->head_stats;

  /* 1. The clean pass, keeping the last rows, head statistics and layer means. */
  t0 = now_s ();
  st = sc_forward (session, ids, n, &opt, logits, err);
  r->timing.forward_s += now_s () - t0 - k.seconds;
  r->timing.observer_s = k.seconds;
  if (st != SC_OK)
    {
      if (k.status != SC_OK)
        st = sc_error_set (err, k.status, "faithfulness: the observer saw an unexpected head");
      goto fail;
    }

  /* 2. The reference ranking: leave-one-out, or causal tracing. */
  if (p->kind == SC_FAITH_ERASE_TRACE)
    {
      t0 = now_s ();
      st = trace_reference (session, model, ids, n, p, r, &prog, err);
      r->timing.forward_s += now_s () - t0;
      if (st != SC_OK)
        goto fail;
    }
  else if (loo_in == NULL)
    {
      ap.target = p->target;
      ap.contrast = p->contrastive ? p->contrast : -1;
      /* only the kind the importance reads: n - 1 passes, not 2 (n - 1) */
      ap.loo_kinds = p->kind == SC_FAITH_ERASE_MASK ? SC_LOO_MASK : SC_LOO_DROP;
      t0 = now_s ();
      st = sc_token_loo_run (session, model, ids, n, &ap, loo_progress, &prog, &loo, err);
      r->timing.forward_s += now_s () - t0;
      if (st != SC_OK)
        goto fail;
      loo_in = loo;
    }
  if (loo_in != NULL)
    {
      r->target = loo_in->target;
      r->top1_clean = loo_in->top1_clean;
      r->contrast = loo_in->contrast;
    }
  r->mixing = p->mixing;
  if (p->contrastive && r->contrast == r->target)
    {
      st = sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: the contrast %d is the target "
                         "(the clean top-1) itself", r->contrast);
      goto fail;
    }
  if (loo_in != NULL
      && (st = sc_faith_loo_importance (loo_in, p->metric, p->kind, r->loo, err)) != SC_OK)
    goto fail;

  /* 3. The sources and their agreement. */
  for (int j = 0; j < n - 1; j++)
    {
      double s = 0.0;
      for (int h = 0; h < k.H; h++)
        s += k.row[((size_t) (k.L - 1) * k.H + h) * (n - 1) + j];
      r->attn[SC_FAITH_SOURCE_LAST_MEAN][j] = s / k.H;
    }
  for (int s = 0; s < SC_FAITH_N_SOURCES; s++)
    sc_faith_agreement_undefined (&r->agree[s], SC_OK, NULL);
  if ((st = rollout_and_flow (&k, r, err)) != SC_OK)
    goto fail;
  t0 = now_s ();
  st = gradient_sources (session, model, ids, n, p, r, err);
  r->timing.forward_s += now_s () - t0;
  if (st != SC_OK)
    goto fail;
  prog.lo = 0.5, prog.span = 0.45;
  t0 = now_s ();
  st = mixing_sources (session, model, ids, n, p, r, &prog, err);
  r->timing.forward_s += now_s () - t0;
  if (st != SC_OK)
    goto fail;
  if (p->gradients)
    sc_faith_agreement_undefined (&r->attn_vs_grad, SC_OK, NULL);
  if (p->gradients && r->agree[SC_FAITH_SOURCE_SALIENCY].status == SC_OK
      && (st = sc_faith_agreement (r->attn[SC_FAITH_SOURCE_LAST_MEAN],
                                   r->attn[SC_FAITH_SOURCE_SALIENCY], n - 1, r->top_k,
                                   &r->attn_vs_grad, err)) != SC_OK)
    goto fail;
  for (int s = 0; s < SC_FAITH_N_SOURCES; s++)
    if (r->agree[s].status == SC_OK
        && (st = sc_faith_agreement (r->attn[s], r->loo, n - 1, r->top_k, &r->agree[s], err))
               != SC_OK)
      goto fail;
  for (size_t h = 0; h < nh; h++)
    if ((st = sc_faith_agreement (k.row + h * (n - 1), r->loo, n - 1, r->top_k, &r->heads[h],
                                  err)) != SC_OK
        || (st = agreement_without_first (k.row + h * (n - 1), r->loo, n - 1, r->top_k,
                                          &r->heads_nf[h], err)) != SC_OK)
      goto fail;
  if ((st = sc_faith_fill_without_first (r, err)) != SC_OK)
    goto fail;
  r->head_rows = k.row;
  k.row = NULL;
  if (progress != NULL && !progress (progress_user, 1.0))
    {
      st = sc_error_set (err, SC_ERR_CANCELLED, "faithfulness: cancelled");
      goto fail;
    }
  r->timing.total_s = now_s () - t_start;
  free (k.layer_mean);
  free (k.acc);
  free (logits);
  if (loo_out != NULL)
    *loo_out = loo;
  else
    sc_token_loo_result_free (loo);
  *out = r;
  return SC_OK;

fail:
  free (k.row);
  free (k.layer_mean);
  free (k.acc);
  free (logits);
  sc_token_loo_result_free (loo);
  sc_faith_result_free (r);
  return st;
}

/* ------------------------------------------------------------------------------------ */
/* The study kind (sc-study.h)                                                           */

static bool faith_params_resolve (const ScStudyKind *kind, const ScFaithParams *in,
                                  ScFaithParams *out, ScError *err);

static int
faith_params_json (const ScStudyKind *kind, const void *params, const ScStudyCtx *ctx,
                   char *buf, size_t size, ScError *err)
{
  ScFaithParams p;
  int len;

  if (!faith_params_resolve (kind, params, &p, err))
    return -1;
  len = sc_faith_params_json (ctx->run_id, ctx->ids, ctx->n_tokens, &p, buf, size);
  if (len < 0)
    sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: the parameters are out of range",
                  kind->name);
  return len;
}

/* The study with its own leave-one-out (a caller that has one stored, or wants to store the
 * one computed, calls sc_faith_run itself). */
static ScStatus
faith_run (const ScStudyKind *kind, const ScStudyCtx *ctx, const void *params, void **out,
           ScError *err)
{
  ScFaithResult *r = NULL;
  ScFaithParams p;
  ScStatus st;

  if (!faith_params_resolve (kind, params, &p, err))
    return err != NULL ? err->status : SC_ERR_INVALID_ARG;
  st = sc_faith_run (ctx->session, ctx->model, ctx->ids, ctx->n_tokens, &p, NULL,
                     ctx->progress, ctx->progress_user, &r, NULL, err);
  *out = r;
  return st;
}

static ScStatus
faith_store (ScStore *store, const ScStoreModel *model, const char *params_json,
             const void *result, int64_t *study_id, ScError *err)
{
  return sc_faith_store (store, model, params_json, result, study_id, err);
}

static ScStatus
faith_load (ScStore *store, const ScModelInfo *info, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
            const char *params_json, const void *params, void **out, int64_t *study_id,
            ScError *err)
{
  ScFaithResult *r = NULL;
  ScFaithParams p;
  ScStatus st;

  if (!faith_params_resolve (&sc_study_kind_faithfulness, params, &p, err))
    return err != NULL ? err->status : SC_ERR_INVALID_ARG;
  st = sc_faith_load (store, info, sha256, params_json, &p, &r, study_id, err);
  *out = r;
  return st;
}

static int
faith_n_tokens (const void *result)
{
  return ((const ScFaithResult *) result)->n_tokens;
}

static void
faith_clean (const void *result, ScStudyClean *out)
{
  const ScFaithResult *r = result;

  out->target = r->target;
  out->top1_clean = r->top1_clean;
  out->logp_clean = NAN;
  out->loss_clean = NAN;
}

static void
faith_free (void *result)
{
  sc_faith_result_free (result);
}

/* A CHOICE option writes an int (sc-study.h): the enum fields must be int-sized. */
_Static_assert (sizeof (ScFaithMetric) == sizeof (int), "ScFaithMetric is not int-sized");
_Static_assert (sizeof (ScFaithErase) == sizeof (int), "ScFaithErase is not int-sized");
static const char *const METRIC_ID_LIST[] = { "tv", "jsd", "abs-delta-logp", NULL };
static const char *const FAITH_ERASE[] = { "mask", "drop", "trace", NULL };

static const ScStudyOption FAITH_OPTIONS[] = {
  { "metric", SC_STUDY_OPTION_CHOICE, offsetof (ScFaithParams, metric), 0, 0, METRIC_ID_LIST,
    "leave-one-out importance: tv (default), jsd or abs-delta-logp" },
  { "kind", SC_STUDY_OPTION_CHOICE, offsetof (ScFaithParams, kind), 0, 0, FAITH_ERASE,
    "erasure: mask (default) or drop" },
  { "top-k", SC_STUDY_OPTION_INT, offsetof (ScFaithParams, top_k), 0, 1000, NULL,
    "k of the top-k overlap (0: 3)" },
  { "target", SC_STUDY_OPTION_TOKEN, offsetof (ScFaithParams, target), 0, 0, NULL,
    "abs-delta-logp: the token measured (default: the clean top-1)" },
  { "contrast", SC_STUDY_OPTION_TOKEN, offsetof (ScFaithParams, contrast), 0, 0, NULL,
    "measure logit(target) - logit(B) (the metric abs-delta-logit-diff)" },
  { "mixing", SC_STUDY_OPTION_BOOL, offsetof (ScFaithParams, mixing), 0, 0, NULL,
    "also norm-based attention, value zeroing and ALTI, each and rolled out" },
  { NULL },
};

/* `saccade faithfulness RUN`'s defaults: TV of masking, top-3, the clean top-1. */
static const ScFaithParams FAITH_DEFAULT = { .metric = SC_FAITH_METRIC_TV,
                                             .kind = SC_FAITH_ERASE_MASK, .target = -1,
                                             .contrast = -1 };

/* The params as the options set them, made whole: a contrast B (the option sets the token
 * alone) makes the study contrastive, whose one metric is abs-delta-logit-diff — an explicit
 * other metric is refused (the default, tv, gives way). Params already whole (the verb's,
 * the window's) pass unchanged. False with @err set when they cannot be made whole. */
static bool
faith_params_resolve (const ScStudyKind *kind, const ScFaithParams *in, ScFaithParams *out,
                      ScError *err)
{
  *out = *in;
  if (!in->contrastive && in->contrast >= 0)
    {
      if (in->metric != SC_FAITH_METRIC_TV && in->metric != SC_FAITH_METRIC_ABS_DELTA_LOGIT_DIFF)
        {
          sc_error_set (err, SC_ERR_INVALID_ARG, "study %s: with --contrast the leave-one-out "
                        "importance is abs-delta-logit-diff, not --metric %s", kind->name,
                        sc_faith_metric_id (in->metric));
          return false;
        }
      out->contrastive = true;
      out->metric = SC_FAITH_METRIC_ABS_DELTA_LOGIT_DIFF;
    }
  return true;
}

const ScStudyKind sc_study_kind_faithfulness = {
  .id = SC_FAITH_KIND,
  .name = "faithfulness",
  .title = "Faithfulness",
  .needs = SC_STUDY_NEEDS_RUN | SC_STUDY_NEEDS_SESSION,
  .min_tokens = SC_FAITH_MIN_TOKENS,
  .params_size = sizeof (ScFaithParams),
  .params_default = &FAITH_DEFAULT,
  .options = FAITH_OPTIONS,
  .params_json = faith_params_json,
  .run = faith_run,
  .store = faith_store,
  .load = faith_load,
  .result_n_tokens = faith_n_tokens,
  .result_clean = faith_clean,
  .result_free = faith_free,
};
