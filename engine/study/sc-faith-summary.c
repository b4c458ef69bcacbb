/* sc-faith-summary.c — faithfulness over many sentences and over heads (sc-faithfulness.h):
 * J&W's Table 2 summary of a file's studies (mean ± std of τ, the share with p < α, per
 * source and per head, heads ranked by mean τ), and the head level — each head's attention
 * statistic or its DLA against its ablation effect. The single-sentence study, its
 * storage and its study kind are sc-faithfulness.c. */
#include "study/sc-faithfulness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sc-rank.h"

/* ------------------------------------------------------------------------------------ */
/* Over sentences                                                                        */

/* The running sums of one source or head. */
typedef struct {
  double tau_sum, tau_sq, rho_sum, topk_sum, other_sum;
  int n_tau, n_rho, n_sig, n_undef, n_other;
} Acc;

/* Adds one sentence's agreement @g of the set summarised and @o of the other set. */
static void
acc_add (Acc *a, const ScFaithAgreement *g, const ScFaithAgreement *o)
{
  if (o->status == SC_OK && !isnan (o->tau))
    {
      a->n_other++;
      a->other_sum += o->tau;
    }
  if (g->status != SC_OK || isnan (g->tau))
    {
      a->n_undef++;
      return;
    }
  a->n_tau++;
  a->tau_sum += g->tau;
  a->tau_sq += g->tau * g->tau;
  a->topk_sum += g->topk;
  a->n_sig += g->tau_p < SC_FAITH_ALPHA;
  if (!isnan (g->rho))
    {
      a->n_rho++;
      a->rho_sum += g->rho;
    }
}

/* The sum of squares is safe for the variance here (|τ| <= 1, tens to thousands of
 * sentences); a negative rounding residue is clamped to 0. */
static ScFaithSummary
acc_summary (const Acc *a)
{
  ScFaithSummary s = { a->n_tau, a->n_undef, NAN, NAN, NAN, NAN, NAN };

  s.tau_ci = s.rho_ci = (ScStatsInterval) { NAN, NAN, SC_FAITH_CI_LEVEL, 0, 0, 0 };
  s.share_significant_bh = NAN;
  s.tau_mean_other = a->n_other > 0 ? a->other_sum / a->n_other : NAN;
  s.n_defined_other = a->n_other;

  if (a->n_tau >= 1)
    {
      s.tau_mean = a->tau_sum / a->n_tau;
      s.share_significant = (double) a->n_sig / a->n_tau;
      s.topk_mean = a->topk_sum / a->n_tau;
    }
  if (a->n_tau >= 2)
    {
      const double var = (a->tau_sq - a->n_tau * s.tau_mean * s.tau_mean) / (a->n_tau - 1);
      s.tau_std = sqrt (var > 0 ? var : 0);
    }
  if (a->n_rho >= 1)
    s.rho_mean = a->rho_sum / a->n_rho;
  return s;
}

static int
cmp_mean (const void *pa, const void *pb, const ScFaithSummary *heads)
{
  const int a = *(const int *) pa, b = *(const int *) pb;
  const double va = heads[a].tau_mean, vb = heads[b].tau_mean;
  return va < vb ? -1 : va > vb ? 1 : a - b;
}

/* qsort has no user pointer: a small insertion sort keeps this reentrant (L x H <= 4096²
 * is bounded by the store's ceilings, and real models have hundreds of heads). */
static void
sort_heads (int *idx, int m, const ScFaithSummary *heads)
{
  for (int i = 1; i < m; i++)
    {
      int v = idx[i], j = i - 1;
      while (j >= 0 && cmp_mean (&idx[j], &v, heads) > 0)
        {
          idx[j + 1] = idx[j];
          j--;
        }
      idx[j + 1] = v;
    }
}

/* Agreement @k of @r — a source below SC_FAITH_N_SOURCES, attention against saliency at
 * SC_FAITH_N_SOURCES, else head k − SC_FAITH_N_SOURCES − 1 — in the set @r reports (@used)
 * or the other. */
static const ScFaithAgreement *
pick (const ScFaithResult *r, int k, bool used)
{
  const bool nf = used == r->exclude_first;
  if (k < SC_FAITH_N_SOURCES)
    return nf ? &r->agree_nf[k] : &r->agree[k];
  if (k == SC_FAITH_N_SOURCES)
    return &r->attn_vs_grad; /* one set only */
  return nf ? &r->heads_nf[k - SC_FAITH_N_SOURCES - 1] : &r->heads[k - SC_FAITH_N_SOURCES - 1];
}

/* The intervals over sentences and the BH share of summary @m of agreement @k (pick). */
static ScStatus
intervals (const ScFaithResult *const *results, int n, int k, int n_boot, uint32_t seed,
           ScFaithSummary *m, ScError *err)
{
  double *tau = malloc ((size_t) n * sizeof *tau), *rho = malloc ((size_t) n * sizeof *rho);
  double *p = malloc ((size_t) n * sizeof *p);
  int nt = 0, nr = 0, mp = 0, sig = 0;
  ScStatus st = SC_OK, s1;

  if (tau == NULL || rho == NULL || p == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "faithfulness: out of memory");
      goto done;
    }
  for (int i = 0; i < n; i++)
    {
      const ScFaithAgreement *g = pick (results[i], k, true);
      if (g->status != SC_OK || isnan (g->tau))
        continue;
      tau[nt++] = g->tau;
      p[mp++] = isnan (g->tau_p) ? NAN : g->tau_p;
      if (!isnan (g->rho))
        rho[nr++] = g->rho;
    }
  m->tau_ci.n_boot = m->rho_ci.n_boot = n_boot;
  m->tau_ci.seed = m->rho_ci.seed = seed;
  /* too few sentences: no interval (NaN) */
  if ((nt >= SC_FAITH_MIN_CI_ITEMS
       && (s1 = sc_stats_bootstrap_mean (tau, nt, n_boot, SC_FAITH_CI_LEVEL, seed, &m->tau_ci,
                                         NULL)) == SC_ERR_NOMEM)
      || (nr >= SC_FAITH_MIN_CI_ITEMS
          && (s1 = sc_stats_bootstrap_mean (rho, nr, n_boot, SC_FAITH_CI_LEVEL, seed,
                                            &m->rho_ci, NULL)) == SC_ERR_NOMEM))
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "faithfulness: out of memory");
      goto done;
    }
  if (mp > 0)
    {
      int m_bh = 0;
      if ((st = sc_stats_bh (p, mp, p, &m_bh, err)) != SC_OK)
        goto done;
      for (int i = 0; i < mp; i++)
        sig += !isnan (p[i]) && p[i] < SC_FAITH_ALPHA;
      m->share_significant_bh = (double) sig / nt;
    }
done:
  free (tau);
  free (rho);
  free (p);
  return st;
}

ScStatus
sc_faith_summarize (const ScFaithResult *const *results, int n, ScFaithFileSummary **out,
                    ScError *err)
{
  return sc_faith_summarize_with (results, n, NULL, out, err);
}

ScStatus
sc_faith_summarize_with (const ScFaithResult *const *results, int n,
                         const ScFaithStatsParams *sp, ScFaithFileSummary **out, ScError *err)
{
  ScFaithFileSummary *s;
  Acc src[SC_FAITH_N_SOURCES] = { { 0 } }, attn_grad = { 0 };
  Acc *heads = NULL;
  int *idx = NULL, m = 0, L, H;
  size_t nh;

  if (results == NULL || out == NULL || n < 1 || results[0] == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: nothing to summarise");
  L = results[0]->n_layers;
  H = results[0]->n_heads;
  for (int i = 1; i < n; i++)
    if (results[i] == NULL || results[i]->n_layers != L || results[i]->n_heads != H
        || results[i]->exclude_first != results[0]->exclude_first
        || (results[i]->kind == SC_FAITH_ERASE_TRACE) != (results[0]->kind == SC_FAITH_ERASE_TRACE))
      return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: sentence %d is missing, of "
                           "another model shape, of another first-token setting or measured "
                           "against another reference (leave-one-out, causal tracing)", i);
  if (sp != NULL && sp->n_boot > SC_STATS_MAX_BOOT)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: %d resamples, at most %d",
                         sp->n_boot, SC_STATS_MAX_BOOT);
  nh = (size_t) L * H;
  s = calloc (1, sizeof *s);
  heads = calloc (nh, sizeof *heads);
  idx = malloc (nh * sizeof *idx);
  if (s == NULL || heads == NULL || idx == NULL || (s->heads = malloc (nh * sizeof *s->heads)) == NULL)
    {
      free (s);
      free (heads);
      free (idx);
      return sc_error_set (err, SC_ERR_NOMEM, "faithfulness: out of memory");
    }
  s->n_sentences = n;
  s->n_layers = L;
  s->n_heads = H;
  s->exclude_first = results[0]->exclude_first;
  s->kind = results[0]->kind;
  for (int i = 0; i < n; i++)
    s->mixing = s->mixing || results[i]->mixing;
  s->n_boot = sp != NULL && sp->n_boot > 0 ? sp->n_boot : SC_STATS_DEFAULT_BOOT;
  s->seed = sp != NULL && sp->seed != 0 ? sp->seed : SC_STATS_DEFAULT_SEED;
  for (int i = 0; i < n; i++)
    {
      for (int k = 0; k < SC_FAITH_N_SOURCES; k++)
        acc_add (&src[k], pick (results[i], k, true), pick (results[i], k, false));
      acc_add (&attn_grad, &results[i]->attn_vs_grad, &(ScFaithAgreement) { SC_ERR_RANGE });
      for (size_t h = 0; h < nh; h++)
        acc_add (&heads[h], pick (results[i], SC_FAITH_N_SOURCES + 1 + (int) h, true),
                 pick (results[i], SC_FAITH_N_SOURCES + 1 + (int) h, false));
    }
  for (int k = 0; k < SC_FAITH_N_SOURCES; k++)
    s->source[k] = acc_summary (&src[k]);
  s->attn_vs_grad = acc_summary (&attn_grad);
  for (size_t h = 0; h < nh; h++)
    {
      s->heads[h] = acc_summary (&heads[h]);
      if (!isnan (s->heads[h].tau_mean))
        idx[m++] = (int) h;
    }
  s->best_head = s->median_head = -1;
  if (m > 0)
    {
      sort_heads (idx, m, s->heads);
      /* Best: the highest mean, the lowest index among equals (the sort is by mean, then
       * index, so walk back over the run of equal maxima). */
      int b = m - 1;
      while (b > 0 && s->heads[idx[b - 1]].tau_mean == s->heads[idx[m - 1]].tau_mean)
        b--;
      s->best_head = idx[b];
      s->median_head = idx[(m - 1) / 2];
    }
  s->m_heads = m;
  free (heads);
  free (idx);
  {
    ScStatus st = SC_OK;
    for (int k = 0; k < SC_FAITH_N_SOURCES && st == SC_OK; k++)
      st = intervals (results, n, k, s->n_boot, s->seed, &s->source[k], err);
    if (st == SC_OK)
      st = intervals (results, n, SC_FAITH_N_SOURCES, s->n_boot, s->seed, &s->attn_vs_grad,
                      err);
    for (int k = 0; k < 2 && st == SC_OK; k++)
      {
        const int h = k == 0 ? s->best_head : s->median_head;
        if (h >= 0)
          st = intervals (results, n, SC_FAITH_N_SOURCES + 1 + h, s->n_boot, s->seed,
                          &s->heads[h], err);
      }
    if (st != SC_OK)
      {
        sc_faith_file_summary_free (s);
        return st;
      }
  }
  *out = s;
  return SC_OK;
}

void
sc_faith_file_summary_free (ScFaithFileSummary *s)
{
  if (s == NULL)
    return;
  free (s->heads);
  free (s);
}

/* ------------------------------------------------------------------------------------ */
/* Head level                                                                            */

ScStatus
sc_faith_head_corr (const ScHeadSweepResult *sweep, const char *name, const double *per_head,
                    ScFaithHeadCorr *out, ScError *err)
{
  double *x, *a, *b;
  int nh, m = 0;
  ScStatus st = SC_OK;

  if (sweep == NULL || name == NULL || per_head == NULL || out == NULL || *name == '\0'
      || strlen (name) >= SC_STORE_STUDY_NAME_MAX)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: bad head-level arguments");
  nh = sweep->n_layers * sweep->n_heads;
  memset (out, 0, sizeof *out);
  snprintf (out->name, sizeof out->name, "%s", name);
  x = malloc ((size_t) nh * sizeof *x);
  a = malloc ((size_t) nh * sizeof *a);
  b = malloc ((size_t) nh * sizeof *b);
  if (x == NULL || a == NULL || b == NULL)
    {
      st = sc_error_set (err, SC_ERR_NOMEM, "faithfulness: out of memory");
      goto done;
    }
  for (int h = 0; h < nh; h++)
    {
      const ScEffect *e = &sweep->heads[h].next;
      if (isnan (per_head[h]) || isnan (e->delta_logp) || isnan (e->tv))
        continue;
      x[m] = per_head[h];
      a[m] = e->delta_logp;
      b[m] = e->tv;
      m++;
    }
  out->n_heads_used = m;
  out->vs_delta_logp = out->vs_tv = (ScSpearman) { NAN, NAN, NAN, m - 2, SC_PVALUE_NONE };
  out->status = SC_OK;
  if (m < 2)
    out->status = SC_ERR_RANGE;
  else
    {
      ScStatus s1 = sc_spearman_rho (x, a, m, &out->vs_delta_logp, NULL);
      ScStatus s2 = sc_spearman_rho (x, b, m, &out->vs_tv, NULL);
      if (s1 == SC_ERR_NOMEM || s2 == SC_ERR_NOMEM)
        st = sc_error_set (err, SC_ERR_NOMEM, "faithfulness: out of memory");
      if (s1 != SC_OK || s2 != SC_OK)
        out->status = SC_ERR_RANGE; /* a constant vector: undefined, said by the NaNs */
    }
done:
  free (x);
  free (a);
  free (b);
  return st;
}

ScStatus
sc_faith_head_level (const ScHeadSweepResult *sweep, const ScFaithResult *r,
                     ScFaithHeadCorr out[SC_FAITH_N_HEAD_STATS], ScError *err)
{
  double *v;
  int nh;
  ScStatus st = SC_OK;

  if (sweep == NULL || r == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: NULL argument");
  if (sweep->n_layers != r->n_layers || sweep->n_heads != r->n_heads)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: the head sweep has %d x %d "
                         "heads, the study %d x %d", sweep->n_layers, sweep->n_heads,
                         r->n_layers, r->n_heads);
  nh = r->n_layers * r->n_heads;
  if ((v = malloc ((size_t) nh * sizeof *v)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "faithfulness: out of memory");
  for (int k = 0; k < SC_FAITH_N_HEAD_STATS && st == SC_OK; k++)
    {
      for (int h = 0; h < nh; h++)
        v[h] = sc_head_stats_get (&r->head_stats[h], SC_FAITH_HEAD_STATS[k]);
      st = sc_faith_head_corr (sweep, sc_head_metric_id (SC_FAITH_HEAD_STATS[k]), v, &out[k],
                               err);
    }
  free (v);
  return st;
}

int
sc_faith_summary_n_sources (const ScFaithFileSummary *s)
{
  return s->mixing ? SC_FAITH_N_SOURCES : SC_FAITH_FIRST_MIXING_SOURCE;
}
