/* saccade-cli-faith-stats.c — the agreements and statistics of `saccade faithfulness` in
 * text and JSON (saccade-cli-faith-stats-private.h): the agreement rows and objects, the
 * file's Table-2 rows, both token sets, bootstrap intervals, the null
 * baselines, the best head's Holm-corrected p, the heads' Benjamini–Hochberg share and the
 * plain reading. The numbers and the reading come from engine/study/sc-faithfulness.h;
 * this file only lays them out. Definitions: docs/metrics.md, "Statistics: corrections,
 * intervals, null baselines". */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli-faith-stats-private.h"

#include <math.h>
#include <stdio.h>

#include "app/cli/saccade-cli-store.h"
#include "app/core/saccade-faith-table.h"
#include "app/core/saccade-faithfulness.h"
#include "app/core/saccade-json.h"

static int
n_compared (const ScFaithResult *r, gboolean without_first)
{
  return without_first ? r->n_items - 1 : r->n_items;
}

void
saccade_cli_faith_print_set (const ScFaithResult *r)
{
  if (r->exclude_first)
    printf ("τ and ρ over the %d tokens after the first (--exclude-first: the first token left "
            "out of both rankings)\n", n_compared (r, TRUE));
  else
    printf ("τ and ρ over all %d tokens, the first included (--exclude-first leaves it out; "
            "both sets are shown below)\n", n_compared (r, FALSE));
}

static gboolean
shown (const ScFaithResult *r, int s)
{
  return s < SC_FAITH_FIRST_GRADIENT_SOURCE || r->agree[s].status != SC_ERR_UNSUPPORTED;
}

static void
print_interval (const ScStatsInterval *ci)
{
  if (isnan (ci->lo))
    printf ("  %-16s", "      -");
  else
    printf ("  [%+5.2f, %+5.2f]  ", ci->lo, ci->hi);
}

void
saccade_cli_faith_print_stats (const ScFaithResult *r, const ScFaithSentenceStats *st)
{
  printf ("\n  %s (%d tokens):\n", r->exclude_first ? "with the first token"
                                                    : "without the first token",
          n_compared (r, !r->exclude_first));
  printf ("  source               τ-b      p(τ)       ρ      p(ρ)  top-%d\n", r->top_k);
  for (int s = 0; s < SC_FAITH_N_SOURCES; s++)
    if (shown (r, s))
      saccade_cli_faith_print_agreement_row (saccade_faith_source_name (s),
                                             sc_faith_source_other (r, s));

  printf ("\nstatistics %s: 95 %% percentile bootstrap over tokens and a permutation null "
          "(attention importance shuffled over tokens), B = %d each, seed %#x\n",
          r->exclude_first ? "without the first token" : "with the first token", st->n_boot,
          st->seed);
  printf ("  source               τ 95 %% CI          ρ 95 %% CI          null τ band     "
          "p(perm)  the first token's part\n");
  for (int s = 0; s < SC_FAITH_N_SOURCES; s++)
    {
      const ScFaithSourceStats *ss = &st->source[s];
      const ScFaithAgreement *a = sc_faith_source_used (r, s), *o = sc_faith_source_other (r, s);
      if (!shown (r, s) || a->status != SC_OK)
        continue;
      printf ("  ");
      saccade_store_cli_print_padded (saccade_faith_source_name (s), 17);
      print_interval (&ss->tau_ci);
      print_interval (&ss->rho_ci);
      if (isnan (ss->perm.lo))
        printf ("  %-16s  %7s", "      -", "-");
      else
        printf ("  [%+5.2f, %+5.2f]    %7.3g", ss->perm.lo, ss->perm.hi, ss->perm.p);
      if (o->status != SC_OK)
        printf ("  -\n");
      else
        printf ("  τ(all) − τ(no first) %+5.2f%s\n", r->agree[s].tau - r->agree_nf[s].tau,
                ss->first_token_drives ? ": drives it" : "");
    }
  printf ("  null baseline, uniform attention rolled out over %d layers (position alone): ",
          r->n_layers);
  if (st->uniform.status == SC_OK)
    printf ("τ %+.3f (p %.2g), ρ %+.3f\n", st->uniform.tau, st->uniform.tau_p, st->uniform.rho);
  else
    printf ("undefined: %s\n", st->uniform.reason);
  if (st->best_head >= 0)
    {
      const ScFaithAgreement *a = sc_faith_head_used (r, st->best_head);
      printf ("  best head L%d.H%d: τ %+.3f, p %.2g alone, %.2g Holm-corrected over %d heads; "
              "%d of %d heads (%.1f %%) have a Benjamini–Hochberg q < %.2f\n",
              st->best_head / r->n_heads, st->best_head % r->n_heads, a->tau, a->tau_p,
              st->best_p_holm, st->m_heads, st->n_heads_bh, st->m_heads,
              100 * st->share_heads_bh, SC_FAITH_ALPHA);
    }

  printf ("\nreading:\n");
  for (int s = 0; s < SC_FAITH_N_SOURCES; s++)
    if (shown (r, s))
      printf ("  - %s\n", st->source[s].reading);
  printf ("  - %s\n", st->best_reading);
}

static void
json_pair (JsonBuilder *b, const char *name, double lo, double hi)
{
  saccade_json_begin_array (b, name);
  saccade_json_add_double (b, lo);
  saccade_json_add_double (b, hi);
  json_builder_end_array (b);
}

void
saccade_cli_faith_json_source_stats (JsonBuilder *b, const ScFaithSourceStats *ss)
{
  json_pair (b, "tau_ci", ss->tau_ci.lo, ss->tau_ci.hi);
  json_pair (b, "rho_ci", ss->rho_ci.lo, ss->rho_ci.hi);
  json_pair (b, "null_tau_band", ss->perm.lo, ss->perm.hi);
  saccade_json_double (b, "p_permutation", ss->perm.p);
  saccade_json_bool (b, "first_token_drives", ss->first_token_drives);
  saccade_json_string (b, "reading", ss->reading);
}

static void
json_agree (JsonBuilder *b, const char *name, const ScFaithAgreement *a)
{
  saccade_json_begin_object (b, name);
  saccade_cli_faith_json_agreement (b, a);
  json_builder_end_object (b);
}

void
saccade_cli_faith_json_stats (JsonBuilder *b, const ScFaithResult *r,
                              const ScFaithSentenceStats *st)
{
  g_autoptr (GString) reading = g_string_new (st->source[SC_FAITH_SOURCE_LAST_MEAN].reading);

  saccade_json_bool (b, "exclude_first", r->exclude_first);
  saccade_json_int (b, "n_compared", n_compared (r, r->exclude_first));
  for (int k = 0; k < 2; k++)
    {
      saccade_json_begin_object (b, k == 0 ? "sources_all_tokens" : "sources_without_first");
      for (int s = 0; s < sc_faith_n_sources (r); s++)
        json_agree (b, sc_faith_source_id (s), k == 0 ? &r->agree[s] : &r->agree_nf[s]);
      json_builder_end_object (b);
    }
  json_agree (b, "uniform_baseline", &st->uniform);
  saccade_json_begin_object (b, "best_head");
  if (st->best_head >= 0)
    {
      const ScFaithAgreement *a = sc_faith_head_used (r, st->best_head);
      saccade_json_int (b, "layer", st->best_head / r->n_heads);
      saccade_json_int (b, "head", st->best_head % r->n_heads);
      saccade_json_double (b, "tau", a->tau);
      saccade_json_double (b, "tau_p", a->tau_p);
    }
  saccade_json_double (b, "tau_p_corrected", st->best_p_holm);
  saccade_json_string (b, "correction", "holm");
  saccade_json_int (b, "m_heads", st->m_heads);
  saccade_json_string (b, "reading", st->best_reading);
  json_builder_end_object (b);
  saccade_json_begin_object (b, "heads_bh");
  saccade_json_string (b, "correction", "benjamini-hochberg");
  saccade_json_int (b, "m_heads", st->m_heads);
  saccade_json_int (b, "n_significant", st->n_heads_bh);
  saccade_json_double (b, "share_significant", st->share_heads_bh);
  saccade_json_double (b, "alpha", SC_FAITH_ALPHA);
  json_builder_end_object (b);
  saccade_json_begin_object (b, "statistics");
  saccade_json_string (b, "interval", "percentile bootstrap over tokens");
  saccade_json_double (b, "level", SC_FAITH_CI_LEVEL);
  saccade_json_int (b, "n_boot", st->n_boot);
  saccade_json_int (b, "seed", st->seed);
  saccade_json_string (b, "null", "attention importance permuted over tokens; uniform "
                                  "attention rolled out");
  saccade_json_double (b, "first_token_delta", SC_FAITH_FIRST_TOKEN_DELTA);
  json_builder_end_object (b);
  g_string_append_printf (reading, " %s", st->best_reading);
  saccade_json_string (b, "reading", reading->str);
}

void
saccade_cli_faith_json_summary_stats (JsonBuilder *b, const ScFaithSummary *m)
{
  json_pair (b, "tau_ci", m->tau_ci.lo, m->tau_ci.hi);
  json_pair (b, "rho_ci", m->rho_ci.lo, m->rho_ci.hi);
  saccade_json_double (b, "share_significant_bh", m->share_significant_bh);
  saccade_json_double (b, "tau_mean_other_set", m->tau_mean_other);
  saccade_json_int (b, "n_defined_other_set", m->n_defined_other);
}

/* Rows 0 .. @n_rows − 1 of the file's table (saccade_faith_table_row: the sources, the
 * best head, the median head) that are not left out, each "  " then @print's. */
static void
print_file_rows (const ScFaithFileSummary *s, int n_rows,
                 void (*print) (const char *name, const ScFaithSummary *m))
{
  for (int k = 0; k < n_rows; k++)
    {
      SaccadeFaithTableRow row;

      if (!saccade_faith_table_row (s, k, &row))
        continue;
      printf ("  ");
      print (row.name, row.m);
    }
}

/* A row of the intervals' table: τ's and ρ's intervals, the BH share, the other set's τ. */
static void
print_stats_row (const char *name, const ScFaithSummary *m)
{
  saccade_store_cli_print_padded (name, 20);
  print_interval (&m->tau_ci);
  print_interval (&m->rho_ci);
  if (isnan (m->tau_mean_other)) /* e.g. heads of studies stored before the second set */
    printf ("  %6.1f %%   %7s\n", 100 * m->share_significant_bh, "-");
  else
    printf ("  %6.1f %%   %+7.3f\n", 100 * m->share_significant_bh, m->tau_mean_other);
}

void
saccade_cli_faith_print_file_stats (const ScFaithFileSummary *s)
{
  char buf[SC_FAITH_READING_MAX];

  printf ("\n  %s; intervals: 95 %% percentile bootstrap of the mean over sentences (B = %d, "
          "seed %#x); share significant after Benjamini–Hochberg over each source's sentences\n",
          s->exclude_first ? "without the first token" : "with the first token", s->n_boot,
          s->seed);
  printf ("  source                 τ 95 %% CI          ρ 95 %% CI        BH share   mean τ %s\n",
          s->exclude_first ? "with first" : "without first");
  print_file_rows (s, SC_FAITH_N_SOURCES + 1, print_stats_row); /* no median head */
  if (s->best_head >= 0)
    printf ("  (the best head is the highest mean τ of %d heads: its interval does not "
            "account for that choice)\n", s->m_heads);
  printf ("\nreading:\n");
  for (int k = 0; k < SC_FAITH_N_SOURCES; k++)
    {
      SaccadeFaithTableRow row;

      if (!saccade_faith_table_row (s, k, &row))
        continue;
      saccade_faith_table_reading (s, &row, buf, sizeof buf);
      printf ("  - %s\n", buf);
    }
}

void
saccade_cli_faith_json_file_stats (JsonBuilder *b, const ScFaithFileSummary *s)
{
  char buf[SC_FAITH_READING_MAX];

  saccade_json_bool (b, "exclude_first", s->exclude_first);
  saccade_json_begin_object (b, "statistics");
  saccade_json_string (b, "interval", "percentile bootstrap of the mean over sentences");
  saccade_json_double (b, "level", SC_FAITH_CI_LEVEL);
  saccade_json_int (b, "n_boot", s->n_boot);
  saccade_json_int (b, "seed", s->seed);
  saccade_json_string (b, "share_correction", "benjamini-hochberg");
  saccade_json_int (b, "m_heads", s->m_heads);
  json_builder_end_object (b);
  sc_faith_summary_reading (s, &s->source[SC_FAITH_SOURCE_LAST_MEAN],
                            sc_faith_source_title (SC_FAITH_SOURCE_LAST_MEAN), buf, sizeof buf);
  saccade_json_string (b, "reading", buf);
}

/* ------------------------------------------------------------------------------------ */
/* Agreements and summaries (saccade-cli-faithfulness.c's rows and objects)              */

void
saccade_cli_faith_json_agreement (JsonBuilder *b, const ScFaithAgreement *a)
{
  saccade_json_double (b, "tau", a->tau);
  saccade_json_double (b, "tau_p", a->tau_p);
  saccade_json_double (b, "rho", a->rho);
  saccade_json_double (b, "rho_p", a->rho_p);
  saccade_json_double (b, "topk", a->topk);
  saccade_json_bool (b, "defined", a->status == SC_OK);
  if (a->status != SC_OK)
    saccade_json_string (b, "reason", a->reason);
}

void
saccade_cli_faith_json_summary (JsonBuilder *b, const ScFaithSummary *m)
{
  saccade_json_int (b, "n_defined", m->n_defined);
  saccade_json_int (b, "n_undefined", m->n_undefined);
  saccade_json_double (b, "tau_mean", m->tau_mean);
  saccade_json_double (b, "tau_std", m->tau_std);
  saccade_json_double (b, "share_significant", m->share_significant);
  saccade_json_double (b, "rho_mean", m->rho_mean);
  saccade_json_double (b, "topk_mean", m->topk_mean);
  saccade_cli_faith_json_summary_stats (b, m);
}

/* Member @name: the object of saccade_cli_faith_json_agreement (@a). */
void
saccade_cli_faith_json_agreement_member (JsonBuilder *b, const char *name, const ScFaithAgreement *a)
{
  saccade_json_begin_object (b, name);
  saccade_cli_faith_json_agreement (b, a);
  json_builder_end_object (b);
}

/* One json_agreement_member for each source of @r in the set it reports, named by its id,
 * with its statistics when @st is not NULL. */
void
saccade_cli_faith_json_source_agreements (JsonBuilder *b, const ScFaithResult *r, const ScFaithSentenceStats *st)
{
  for (int s = 0; s < sc_faith_n_sources (r); s++)
    {
      saccade_json_begin_object (b, sc_faith_source_id (s));
      saccade_cli_faith_json_agreement (b, sc_faith_source_used (r, s));
      if (st != NULL)
        saccade_cli_faith_json_source_stats (b, &st->source[s]);
      json_builder_end_object (b);
    }
}

/* Member @name: the object of saccade_cli_faith_json_summary (@m). */
void
saccade_cli_faith_json_summary_member (JsonBuilder *b, const char *name, const ScFaithSummary *m)
{
  saccade_json_begin_object (b, name);
  saccade_cli_faith_json_summary (b, m);
  json_builder_end_object (b);
}

void
saccade_cli_faith_print_agreement_row (const char *name, const ScFaithAgreement *a)
{
  printf ("  ");
  saccade_store_cli_print_padded (name, 17);
  if (a->status != SC_OK)
    printf ("  undefined: %s\n", a->reason);
  else
    printf ("  %+7.3f  %8.2g  %+7.3f  %8.2g  %5.2f\n", a->tau, a->tau_p, a->rho, a->rho_p,
            a->topk);
}

/* One row of the file's Table 2: @name padded, then @m's τ mean ± std, share significant,
 * mean ρ, mean top-k and undefined count. */
void
saccade_cli_faith_print_summary_row (const char *name, const ScFaithSummary *m)
{
  saccade_store_cli_print_padded (name, 20);
  printf ("  %+6.3f ± %5.3f  %7.1f %%  %+7.3f  %10.3f  %9d\n", m->tau_mean, m->tau_std,
          100 * m->share_significant, m->rho_mean, m->topk_mean, m->n_undefined);
}

const char *
saccade_cli_faith_reference (ScFaithErase kind)
{
  switch (kind)
    {
    case SC_FAITH_ERASE_DROP: return "leave-one-out by dropping";
    case SC_FAITH_ERASE_TRACE:
      return "causal tracing (the other tokens noised, the token's state restored; the "
             "largest effect over layers)";
    default: return "leave-one-out by masking";
    }
}

void
saccade_cli_faith_print_file_table (const ScFaithFileSummary *s, const char *model_name,
                                    const ScFaithParams *p)
{

  printf ("%s: %d sentences from the file, %s, %s; Kendall τ-b of each attention source "
          "with it (J&W 2019, Table 2; std with ddof 1), %s\n", model_name, s->n_sentences,
          saccade_cli_faith_reference (p->kind), sc_faith_metric_id (p->metric),
          s->exclude_first ? "over the tokens after the first (--exclude-first)"
                           : "over all tokens, the first included (--exclude-first leaves it out)");
  printf ("\n  source                 τ mean ± std     p < 0.05   mean ρ  mean top-k  "
          "undefined\n");
  print_file_rows (s, SC_FAITH_N_SOURCES + 2, saccade_cli_faith_print_summary_row);
  if (s->attn_vs_grad.n_defined > 0)
    {
      const ScFaithSummary *m = &s->attn_vs_grad;
      printf ("\n  attention (last-layer mean) against saliency, J&W's τ_g:\n  ");
      saccade_cli_faith_print_summary_row ("attention vs saliency", m);
    }
  saccade_cli_faith_print_file_stats (s);
}
