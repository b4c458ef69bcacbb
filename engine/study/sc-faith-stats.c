/* sc-faith-stats.c — the statistics of one faithfulness result (sc-faithfulness.h,
 * "Statistics of one sentence"): bootstrap intervals over tokens, the permutation null, the
 * uniform-attention baseline, the best head's Holm-corrected p and the heads' BH share, and
 * the plain-language reading generated from those numbers. Everything is computed from
 * what a result stores (the importance vectors, every head's p), so a study read back gives
 * the same numbers as when it was computed. The statistics themselves are
 * engine/analysis/sc-stats.c; the study and its storage sc-faithfulness.c. */
#include "study/sc-faithfulness.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sc-rollout.h"

static const char *const SOURCE_TITLE[SC_FAITH_N_SOURCES] = {
  "last-layer mean attention", "attention rollout", "attention flow", "saliency",
  "gradient x input", "integrated gradients", "gradient rollout",
  "norm-based attention (last layer)", "norm-based rollout", "value zeroing (last layer)",
  "value zeroing rolled out", "ALTI (last layer)", "ALTI rolled out",
};

const char *
sc_faith_source_title (ScFaithSource s)
{
  return (unsigned) s < SC_FAITH_N_SOURCES ? SOURCE_TITLE[s] : NULL;
}

/* Appends printf output to @buf (@size bytes), truncating. */
static void
append (char *buf, size_t size, const char *fmt, ...)
{
  const size_t len = strlen (buf);
  va_list ap;

  if (len + 1 >= size)
    return;
  va_start (ap, fmt);
  vsnprintf (buf + len, size - len, fmt, ap);
  va_end (ap);
}

/* "0.003", "< 0.001": a p-value for a sentence. */
static void
p_text (double p, char *buf, size_t size)
{
  if (p < 0.001)
    snprintf (buf, size, "< 0.001");
  else
    snprintf (buf, size, "%.2g", p);
}

/* How a τ against the reference @ref reads, from its interval and p: like, against, or not
 * beyond chance; into @buf. */
static const char *
verdict (double tau, double p, double lo, double hi, const char *ref, char *buf, size_t size)
{
  const bool sig = p < SC_FAITH_ALPHA;
  if (isnan (lo)) /* no interval (too few tokens): the sign and the p alone */
    lo = hi = tau;
  if (sig && lo > 0)
    snprintf (buf, size, "ranks tokens %slike %s",
              tau >= 0.5 ? "closely " : tau >= 0.3 ? "" : "weakly ", ref);
  else if (sig && hi < 0)
    snprintf (buf, size, "ranks tokens against %s", ref);
  else
    snprintf (buf, size, "does not rank tokens like %s beyond chance", ref);
  return buf;
}

static const char *
set_name (bool exclude_first)
{
  return exclude_first ? "once the first token is excluded" : "with the first token";
}

static void
source_reading (const ScFaithResult *r, int s, const ScFaithSourceStats *ss,
                const ScFaithAgreement *uniform, char *buf, size_t size)
{
  const ScFaithAgreement *a = sc_faith_source_used (r, s), *o = sc_faith_source_other (r, s);
  char pt[16], vt[80];

  buf[0] = '\0';
  if (a->status != SC_OK)
    {
      /* from the status, not the reason: a study read back keeps the status only, and its
       * reading must be the one it had when computed */
      append (buf, size, "%s: no ranking to compare %s (%s).", SOURCE_TITLE[s],
              set_name (r->exclude_first),
              a->status == SC_ERR_UNSUPPORTED ? "not computed in this study"
                                              : "undefined: a constant vector, too few "
                                                "tokens or a source over its ceiling");
      return;
    }
  p_text (a->tau_p, pt, sizeof pt);
  append (buf, size, "%s %s %s (τ %.2f", SOURCE_TITLE[s],
          verdict (a->tau, a->tau_p, ss->tau_ci.lo, ss->tau_ci.hi,
                   sc_faith_reference_name (r->kind), vt, sizeof vt),
          set_name (r->exclude_first), a->tau);
  if (!isnan (ss->tau_ci.lo))
    append (buf, size, ", 95 %% CI %.2f to %.2f", ss->tau_ci.lo, ss->tau_ci.hi);
  else
    append (buf, size, ", no interval over so few tokens");
  append (buf, size, ", p %s", pt);
  if (!isnan (ss->perm.lo))
    append (buf, size, "; chance alone gives τ %.2f to %.2f over %d tokens", ss->perm.lo,
            ss->perm.hi, r->exclude_first ? r->n_items - 1 : r->n_items);
  append (buf, size, ")");
  if (o->status == SC_OK)
    {
      p_text (o->tau_p, pt, sizeof pt);
      append (buf, size, "; %s τ %.2f (p %s)", r->exclude_first ? "with the first token"
                                                                : "without the first token",
              o->tau, pt);
      if (ss->first_token_drives)
        append (buf, size, ": the first token drives this result");
    }
  append (buf, size, ".");
  if ((s < SC_FAITH_FIRST_GRADIENT_SOURCE || s >= SC_FAITH_FIRST_MIXING_SOURCE)
      && uniform->status == SC_OK && a->tau <= uniform->tau)
    append (buf, size, " No better than position alone (uniform attention rolled out: τ "
            "%.2f).", uniform->tau);
}

static void
best_head_reading (const ScFaithResult *r, const ScFaithSentenceStats *st, char *buf,
                   size_t size)
{
  const ScFaithAgreement *a;
  char pt[16], ph[16];

  buf[0] = '\0';
  if (st->best_head < 0)
    {
      append (buf, size, "No head has a defined τ %s.", set_name (r->exclude_first));
      return;
    }
  a = sc_faith_head_used (r, st->best_head);
  p_text (a->tau_p, pt, sizeof pt);
  p_text (st->best_p_holm, ph, sizeof ph);
  append (buf, size, "The best head, L%d.H%d, is the highest τ of %d heads (τ %.2f %s, p %s "
          "alone); picked from %d, its p is %s after Holm's correction, so it %s.",
          st->best_head / r->n_heads, st->best_head % r->n_heads, st->m_heads, a->tau,
          set_name (r->exclude_first), pt, st->m_heads, ph,
          st->best_p_holm < SC_FAITH_ALPHA ? "stands out beyond the choice among heads"
                                           : "may be the luck of the choice among heads");
  append (buf, size, " %d of %d heads (%.0f %%) agree with %s at q < %.2f "
          "(Benjamini–Hochberg).", st->n_heads_bh, st->m_heads, 100 * st->share_heads_bh,
          sc_faith_reference_name (r->kind), SC_FAITH_ALPHA);
}

/* The rollout of uniform causal attention over @L layers, row n − 1, into @out (n − 1). */
static ScStatus
uniform_rollout (int L, int n, double *out, ScError *err)
{
  float *u = malloc ((size_t) n * n * sizeof *u);
  const float **layers = malloc ((size_t) L * sizeof *layers);
  double *roll = malloc ((size_t) n * n * sizeof *roll);
  ScStatus st = SC_OK;

  if (u == NULL || layers == NULL || roll == NULL)
    st = sc_error_set (err, SC_ERR_NOMEM, "faithfulness: out of memory for the uniform "
                       "baseline");
  else
    {
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
          u[(size_t) i * n + j] = j <= i ? 1.0f / (float) (i + 1) : 0.0f;
      for (int l = 0; l < L; l++)
        layers[l] = u;
      if ((st = sc_attention_rollout (layers, L, 1, n, roll, err)) == SC_OK)
        for (int j = 0; j < n - 1; j++)
          out[j] = roll[(size_t) (n - 1) * n + j];
    }
  free (u);
  free (layers);
  free (roll);
  return st;
}

void
sc_faith_sentence_stats_free (ScFaithSentenceStats *s)
{
  if (s == NULL)
    return;
  free (s->uniform_rollout);
  free (s);
}

ScStatus
sc_faith_sentence_stats (const ScFaithResult *r, const ScFaithStatsParams *sp,
                         ScFaithSentenceStats **out, ScError *err)
{
  ScFaithSentenceStats *st;
  const int nh = r != NULL ? r->n_layers * r->n_heads : 0;
  const int off = r != NULL && r->exclude_first ? 1 : 0;
  double *p = NULL, *adj = NULL;
  ScStatus status = SC_OK;

  if (r == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: NULL argument");
  if (sp != NULL && sp->n_boot > SC_STATS_MAX_BOOT)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "faithfulness: %d resamples, at most %d",
                         sp->n_boot, SC_STATS_MAX_BOOT);
  if ((st = calloc (1, sizeof *st)) == NULL
      || (st->uniform_rollout = malloc ((size_t) r->n_items * sizeof (double))) == NULL
      || (p = malloc ((size_t) nh * sizeof *p)) == NULL
      || (adj = malloc ((size_t) nh * sizeof *adj)) == NULL)
    {
      sc_faith_sentence_stats_free (st);
      free (p);
      return sc_error_set (err, SC_ERR_NOMEM, "faithfulness: out of memory");
    }
  st->n_boot = sp != NULL && sp->n_boot > 0 ? sp->n_boot : SC_STATS_DEFAULT_BOOT;
  st->seed = sp != NULL && sp->seed != 0 ? sp->seed : SC_STATS_DEFAULT_SEED;

  /* 1. The uniform-attention baseline, in the reported set. */
  if ((status = uniform_rollout (r->n_layers, r->n_tokens, st->uniform_rollout, err)) != SC_OK)
    goto done;
  if (r->n_items - off < 2)
    {
      st->uniform = (ScFaithAgreement) { SC_ERR_RANGE, NAN, NAN, NAN, NAN, NAN, "" };
      snprintf (st->uniform.reason, sizeof st->uniform.reason, "too few tokens");
    }
  else if ((status = sc_faith_agreement (st->uniform_rollout + off, r->loo + off,
                                         r->n_items - off,
                                         r->top_k < r->n_items - off ? r->top_k
                                                                     : r->n_items - off,
                                         &st->uniform, err)) != SC_OK)
    goto done;

  /* 2. Per source: intervals, the permutation null, the first-token flag, the reading.
   *    Every source uses the same seed: the same resamples, so that two sources' intervals
   *    differ by the sources, not by the draw. */
  for (int s = 0; s < SC_FAITH_N_SOURCES; s++)
    {
      ScFaithSourceStats *ss = &st->source[s];
      const ScFaithAgreement *a = sc_faith_source_used (r, s), *o = sc_faith_source_other (r, s);
      const int n = r->n_items - off;
      ss->tau_ci = ss->rho_ci = (ScStatsInterval) { NAN, NAN, SC_FAITH_CI_LEVEL, st->n_boot, 0,
                                                    st->seed };
      ss->perm = (ScStatsPermNull) { NAN, NAN, NAN, NAN, st->n_boot, 0, st->seed };
      if (a->status == SC_OK)
        {
          const double *x = r->attn[s] + off, *y = r->loo + off;
          const bool ci = n >= SC_FAITH_MIN_CI_ITEMS;
          ScStatus s1;
          /* an undefined interval (too few defined resamples) stays NaN: SC_ERR_RANGE */
          if ((ci && (s1 = sc_stats_bootstrap_corr (SC_STATS_KENDALL, x, y, n, st->n_boot,
                                                    SC_FAITH_CI_LEVEL, st->seed, &ss->tau_ci,
                                                    NULL)) == SC_ERR_NOMEM)
              || (ci && (s1 = sc_stats_bootstrap_corr (SC_STATS_SPEARMAN, x, y, n, st->n_boot,
                                                       SC_FAITH_CI_LEVEL, st->seed,
                                                       &ss->rho_ci, NULL)) == SC_ERR_NOMEM)
              || (s1 = sc_stats_permutation_null (SC_STATS_KENDALL, x, y, n, st->n_boot,
                                                  SC_FAITH_CI_LEVEL, st->seed, &ss->perm,
                                                  NULL)) == SC_ERR_NOMEM)
            {
              status = sc_error_set (err, SC_ERR_NOMEM, "faithfulness: out of memory");
              goto done;
            }
          if (o->status == SC_OK)
            ss->first_token_drives = fabs (a->tau - o->tau) > SC_FAITH_FIRST_TOKEN_DELTA
                                     || (a->tau_p < SC_FAITH_ALPHA) != (o->tau_p < SC_FAITH_ALPHA);
        }
      source_reading (r, s, ss, &st->uniform, ss->reading, sizeof ss->reading);
    }

  /* 3. The heads: the best of the reported set, Holm over the m defined p-values for it,
   *    BH q-values for the share. */
  st->best_head = -1;
  for (int h = 0; h < nh; h++)
    {
      const ScFaithAgreement *a = sc_faith_head_used (r, h);
      p[h] = a->status == SC_OK ? a->tau_p : NAN;
      if (a->status == SC_OK && !isnan (a->tau)
          && (st->best_head < 0 || a->tau > sc_faith_head_used (r, st->best_head)->tau))
        st->best_head = h;
    }
  if ((status = sc_stats_holm (p, nh, adj, &st->m_heads, err)) != SC_OK)
    goto done;
  st->best_p_holm = st->best_head >= 0 ? adj[st->best_head] : NAN;
  if ((status = sc_stats_bh (p, nh, adj, NULL, err)) != SC_OK)
    goto done;
  for (int h = 0; h < nh; h++)
    st->n_heads_bh += !isnan (adj[h]) && adj[h] < SC_FAITH_ALPHA;
  st->share_heads_bh = st->m_heads > 0 ? (double) st->n_heads_bh / st->m_heads : NAN;
  best_head_reading (r, st, st->best_reading, sizeof st->best_reading);

done:
  free (p);
  free (adj);
  if (status != SC_OK)
    {
      sc_faith_sentence_stats_free (st);
      return status;
    }
  *out = st;
  return SC_OK;
}

void
sc_faith_summary_reading (const ScFaithFileSummary *s, const ScFaithSummary *m,
                          const char *name, char *buf, size_t size)
{
  buf[0] = '\0';
  if (m->n_defined < 1)
    {
      append (buf, size, "%s: no sentence with a defined τ.", name);
      return;
    }
  if (isnan (m->tau_ci.lo))
    append (buf, size, "Over %d sentence%s, %s: mean τ %.2f (too few sentences for an "
            "interval: no verdict)", m->n_defined, m->n_defined == 1 ? "" : "s", name,
            m->tau_mean);
  else
    append (buf, size, "Over %d sentences, %s %s %s%s: mean τ %.2f (95 %% CI %.2f to %.2f "
            "over sentences)", m->n_defined, name,
            m->tau_ci.lo > 0   ? "ranks tokens like"
            : m->tau_ci.hi < 0 ? "ranks tokens against"
                               : "does not rank tokens like",
            sc_faith_reference_name (s->kind),
            m->tau_ci.lo > 0 || m->tau_ci.hi < 0 ? "" : " beyond chance",
            m->tau_mean, m->tau_ci.lo, m->tau_ci.hi);
  append (buf, size, " %s; %.0f %% of sentences significant after Benjamini–Hochberg "
          "(%.0f %% uncorrected)", set_name (s->exclude_first), 100 * m->share_significant_bh,
          100 * m->share_significant);
  if (m->n_defined_other > 0)
    append (buf, size, "; %s mean τ %.2f%s", s->exclude_first ? "with the first token"
                                                              : "without the first token",
            m->tau_mean_other,
            fabs (m->tau_mean - m->tau_mean_other) > SC_FAITH_FIRST_TOKEN_DELTA
              ? ": the first token drives this result" : "");
  append (buf, size, ".");
}
