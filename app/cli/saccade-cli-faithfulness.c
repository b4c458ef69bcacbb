/* saccade-cli-faithfulness.c — `saccade faithfulness RUN` and `saccade faithfulness --file
 * SENTENCES`: is attention faithful? Attention importance (last-layer head mean, each head,
 * rollout, flow) against leave-one-out importance (engine/study/sc-faithfulness.h). Parse ->
 * a result (app/core/saccade-faithfulness.h computes, reuses or runs the file) -> text or
 * JSON, with --csv the data (layouts in the core header) and with -o the figure: the
 * scatter with per-token bars for a run, the Table-2 figure for a file (and with
 * --heads-figure the per-head mean τ map, drawn by the heatmap renderer). Every output ends
 * with where the time went: total, and the share spent outside forward passes.
 * Definitions: docs/metrics.md, "Faithfulness". */
#define G_LOG_DOMAIN "saccade-cli"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app/cli/saccade-cli-faith-stats-private.h"
#include "app/cli/saccade-cli-store.h"
#include "app/core/saccade-dataset.h"
#include "app/core/saccade-export.h"
#include "app/core/saccade-faith-table.h"
#include "app/core/saccade-faithfulness.h"
#include "engine/study/sc-attribution.h"
#include "ui/figures/saccade-figure.h"

typedef struct {
  SaccadeCliCommon common;
  char *db, *file, *csv, *table_csv, *out_path, *heads_path, *metric, *kind, *shard, *report;
  int top_k, ig_steps, n_boot, seed;
  SaccadeCliTarget target;              /* --target, --contrast */
  gboolean recompute, head_sweep, gradients, exclude_first, mixing;
  SaccadeCliFigure figure;              /* --preset, --width-mm, ...: both figures */
  SaccadeFigureExportOptions figure_options;
} FaithOptions;

static gboolean
parse_params (const FaithOptions *o, ScFaithParams *p, GError **error)
{
  *p = (ScFaithParams) { SC_FAITH_METRIC_TV, SC_FAITH_ERASE_MASK, o->top_k, -1,
                         o->gradients, o->ig_steps, o->exclude_first, o->mixing, FALSE, -1 };
  if (o->n_boot < 0 || o->n_boot > SC_STATS_MAX_BOOT)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--bootstrap is 1..%d resamples, not %d", SC_STATS_MAX_BOOT, o->n_boot);
      return FALSE;
    }
  if (o->seed < 0)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--seed is a positive number, not %d", o->seed);
      return FALSE;
    }
  if (o->ig_steps < 0 || o->ig_steps > SC_ATTR_MAX_STEPS)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--ig-steps is 1..%d points, not %d", SC_ATTR_MAX_STEPS, o->ig_steps);
      return FALSE;
    }
  if (o->metric != NULL && !sc_faith_metric_from_id (o->metric, &p->metric))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--metric is tv, jsd, abs-delta-logp or abs-delta-logit-diff, not '%s'",
                   o->metric);
      return FALSE;
    }
  if (o->kind != NULL && !sc_faith_erase_from_id (o->kind, &p->kind))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--kind is mask, drop or trace, not '%s'", o->kind);
      return FALSE;
    }
  if (o->top_k < 0)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--top-k is a positive number of tokens, not %d", o->top_k);
      return FALSE;
    }
  return TRUE;
}

static double
outside_share (double total, double forward)
{
  return total > 0 ? MAX (0.0, total - forward) / total : NAN;
}

static void
print_timing (double total, double forward)
{
  printf ("\ntiming: %.2f s in all, %.2f s in forward passes; %.1f %% outside forward passes\n",
          total, forward, 100 * outside_share (total, forward));
}

static void
json_timing (JsonBuilder *b, double total, double forward)
{
  saccade_json_begin_object (b, "timing");
  saccade_json_double (b, "total_s", total);
  saccade_json_double (b, "forward_s", forward);
  saccade_json_double (b, "outside_forward_share", outside_share (total, forward));
  json_builder_end_object (b);
}

/* ------------------------------------------------------------------------------------ */
/* RUN                                                                                   */

typedef struct {
  ScStoreRunInfo run;
  ScStoreToken *tokens;
  size_t n_tokens;
  char **labels;
  SaccadeFaithfulness *f;
  ScFaithSentenceStats *stats;
  char *warning;
} RunResult;

static void
run_result_clear (RunResult *r)
{
  sc_store_run_info_clear (&r->run);
  sc_store_tokens_free (r->tokens);
  g_strfreev (r->labels);
  saccade_faithfulness_free (r->f);
  sc_faith_sentence_stats_free (r->stats);
  g_free (r->warning);
}

static void
print_run_text (const RunResult *rr, const char *db_path)
{
  const ScFaithResult *r = rr->f->result;
  const int k = r->top_k;
  int best, median;
  char contrast[40] = "";

  if (r->contrast >= 0)
    g_snprintf (contrast, sizeof contrast, ", contrast id %d", r->contrast);
  printf ("run %" G_GINT64_FORMAT " (%zu tokens), %s: %s, %s of the next token at the last "
          "position (target id %d%s); %d tokens compared, the last (%s) is the query\n",
          rr->run.id, rr->n_tokens, rr->run.model_name, saccade_cli_faith_reference (r->kind),
          sc_faith_metric_id (r->metric), r->target, contrast, r->n_items,
          rr->labels[rr->n_tokens - 1]);
  if (rr->f->reused)
    printf ("reused study %" G_GINT64_FORMAT " from %s (--recompute to compute again)\n",
            rr->f->study_id, db_path);
  else if (rr->f->study_id > 0)
    printf ("computed now%s, stored as study %" G_GINT64_FORMAT " in %s\n",
            rr->f->loo_reused ? " (leave-one-out reused from a stored ablate-tokens study)" : "",
            rr->f->study_id, db_path);
  else
    printf ("computed now (not stored: %s)\n", rr->warning != NULL ? rr->warning : "no store");

  saccade_cli_faith_print_set (r);
  printf ("\n  source               τ-b      p(τ)       ρ      p(ρ)  top-%d\n", k);
  for (int s = 0; s < SC_FAITH_N_SOURCES; s++)
    if (s < SC_FAITH_FIRST_GRADIENT_SOURCE || r->agree[s].status != SC_ERR_UNSUPPORTED)
      saccade_cli_faith_print_agreement_row (saccade_faith_source_name (s), sc_faith_source_used (r, s));
  if (r->attn_vs_grad.status != SC_ERR_UNSUPPORTED)
    saccade_cli_faith_print_agreement_row ("attention vs saliency", &r->attn_vs_grad);
  if (!isnan (r->ig_gap_rel))
    printf ("  (integrated gradients' completeness gap: %.1f %% of f(x) - f(x'))\n",
            100 * r->ig_gap_rel);
  saccade_faith_head_extremes (r, &best, &median);
  if (best >= 0)
    {
      char name[32];
      g_snprintf (name, sizeof name, "best head L%d.H%d", best / r->n_heads, best % r->n_heads);
      saccade_cli_faith_print_agreement_row (name, sc_faith_head_used (r, best));
      g_snprintf (name, sizeof name, "median head L%d.H%d", median / r->n_heads,
                  median % r->n_heads);
      saccade_cli_faith_print_agreement_row (name, sc_faith_head_used (r, median));
      printf ("  (the best head is picked from %d heads: its p alone is not a test; Holm's "
              "correction below)\n", rr->stats->m_heads);
    }
  saccade_cli_faith_print_stats (r, rr->stats);

  printf ("\n  pos  token              leave-one-out  last-mean   rollout      flow%s%s\n",
          r->agree[SC_FAITH_SOURCE_SALIENCY].status != SC_ERR_UNSUPPORTED
            ? "  saliency  |g x in|      |ig|  g-rollout" : "",
          r->mixing ? "      norm  norm-rol        vz    vz-rol      alti  alti-rol" : "");
  for (int j = 0; j < r->n_items && (size_t) j < rr->n_tokens; j++) /* trust no stored count */
    {
      printf ("  %3d  ", j);
      saccade_store_cli_print_padded (rr->labels[j], 16);
      printf ("  %13.5f  %9.4f  %8.4f  %8.4f", r->loo[j], r->attn[0][j], r->attn[1][j],
              r->attn[2][j]);
      if (r->agree[SC_FAITH_SOURCE_SALIENCY].status != SC_ERR_UNSUPPORTED)
        for (int s = SC_FAITH_FIRST_GRADIENT_SOURCE; s < SC_FAITH_FIRST_MIXING_SOURCE; s++)
          printf ("  %8.4f", r->attn[s][j]);
      if (r->mixing)
        for (int s = SC_FAITH_FIRST_MIXING_SOURCE; s < SC_FAITH_N_SOURCES; s++)
          printf ("  %8.4f", r->attn[s][j]);
      printf ("\n");
    }
  if (rr->f->have_head_level)
    {
      printf ("\nhead level: Spearman ρ over the heads between a head statistic (or its direct "
              "logit attribution, dla) and its zero-ablation effect (%s head sweep)\n",
              rr->f->sweep_reused ? "stored" : "new");
      printf ("  statistic         ρ(Δ log p)    p       ρ(TV)      p     heads\n");
      for (int c = 0; c < rr->f->n_head_corr; c++)
        {
          const ScFaithHeadCorr *h = &rr->f->head_corr[c];
          printf ("  %-16s  %+9.3f  %8.2g  %+8.3f  %8.2g  %5d\n", h->name, h->vs_delta_logp.rho,
                  h->vs_delta_logp.p, h->vs_tv.rho, h->vs_tv.p, h->n_heads_used);
        }
    }
  else
    printf ("\n(no head level: no head sweep of this run is stored; run `saccade ablate %"
            G_GINT64_FORMAT " --heads` or pass --head-sweep)\n", rr->run.id);
  if (rr->f->reused)
    printf ("\ntiming: %.2f s (the study read back from the store%s)\n", rr->f->seconds,
            rr->f->have_head_level && !rr->f->sweep_reused ? ", the head sweep computed now"
                                                           : "");
  else
    /* the faithfulness study's own time; the head level (a head sweep of 270 passes when
     * computed now) is timed apart, or it would count as time outside forward passes */
    print_timing (rr->f->seconds - rr->f->head_level_seconds, r->timing.forward_s);
  if (rr->f->have_head_level && rr->f->head_level_seconds >= 0.01)
    printf ("head level: %.2f s (head sweep %s, direct logit attribution)\n",
            rr->f->head_level_seconds, rr->f->sweep_reused ? "read back" : "computed");
}

static void
print_run_json (const RunResult *rr)
{
  const ScFaithResult *r = rr->f->result;
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  saccade_json_int (b, "run", rr->run.id);
  saccade_json_string (b, "model", rr->run.model_name);
  saccade_json_string (b, "study", SC_FAITH_KIND);
  saccade_json_string (b, "source", rr->f->reused ? "reused" : "computed");
  saccade_json_int (b, "study_id", rr->f->study_id);
  saccade_json_bool (b, "loo_reused", rr->f->loo_reused);
  saccade_json_string (b, "metric", sc_faith_metric_id (r->metric));
  saccade_json_string (b, "kind", sc_faith_erase_id (r->kind));
  saccade_json_int (b, "top_k", r->top_k);
  saccade_json_int (b, "n_tokens", r->n_tokens);
  saccade_json_int (b, "target", r->target);
  if (r->contrast >= 0) /* written only with one: the output without is as before */
    saccade_json_int (b, "contrast", r->contrast);
  saccade_json_begin_object (b, "sources");
  saccade_cli_faith_json_source_agreements (b, r, rr->stats);
  saccade_cli_faith_json_agreement_member (b, "attention-vs-saliency", &r->attn_vs_grad);
  json_builder_end_object (b);
  saccade_cli_faith_json_stats (b, r, rr->stats);
  saccade_json_double (b, "ig_gap_rel", r->ig_gap_rel);
  saccade_json_begin_array (b, "tokens");
  for (int j = 0; j < r->n_items && (size_t) j < rr->n_tokens; j++) /* trust no stored count */
    {
      json_builder_begin_object (b);
      saccade_json_int (b, "pos", j);
      saccade_json_int (b, "id", rr->tokens[j].id);
      saccade_json_string (b, "label", rr->labels[j]);
      saccade_json_double (b, "loo", r->loo[j]);
      for (int s = 0; s < sc_faith_n_sources (r); s++)
        saccade_json_double (b, sc_faith_source_id (s), r->attn[s][j]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  saccade_json_begin_array (b, "heads"); /* layer-major */
  for (int h = 0; h < r->n_layers * r->n_heads; h++)
    {
      json_builder_begin_object (b);
      saccade_json_int (b, "layer", h / r->n_heads);
      saccade_json_int (b, "head", h % r->n_heads);
      saccade_cli_faith_json_agreement (b, &r->heads[h]);
      saccade_json_double (b, "tau_without_first", r->heads_nf[h].tau);
      saccade_json_double (b, "tau_p_without_first", r->heads_nf[h].tau_p);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  if (rr->f->have_head_level)
    {
      saccade_json_begin_array (b, "head_level");
      for (int c = 0; c < rr->f->n_head_corr; c++)
        {
          const ScFaithHeadCorr *h = &rr->f->head_corr[c];
          json_builder_begin_object (b);
          saccade_json_string (b, "statistic", h->name);
          saccade_json_int (b, "n_heads", h->n_heads_used);
          saccade_json_double (b, "rho_delta_logp", h->vs_delta_logp.rho);
          saccade_json_double (b, "p_delta_logp", h->vs_delta_logp.p);
          saccade_json_double (b, "rho_tv", h->vs_tv.rho);
          saccade_json_double (b, "p_tv", h->vs_tv.p);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
    }
  json_timing (b, rr->f->seconds - rr->f->head_level_seconds,
               rr->f->reused ? 0.0 : r->timing.forward_s);
  saccade_json_double (b, "head_level_s", rr->f->head_level_seconds);
  json_builder_end_object (b);
  saccade_json_print (b);
}

static int
run_mode (ScModel *model, const FaithOptions *o, const ScFaithParams *p, gint64 run_id)
{
  g_autofree char *db_path = saccade_db_path (o->db);
  g_autofree int32_t *ids = NULL;
  g_autoptr (GError) error = NULL;
  SaccadeCliSession cs = { 0 };
  RunResult rr = { 0 };
  const gboolean tty = isatty (STDERR_FILENO);
  int rc = 0;

  if (!saccade_faithfulness_read_run (db_path, run_id, model, saccade_cli_model_path (&o->common),
                                      &rr.run, &rr.tokens, &rr.n_tokens, &error))
    {
      run_result_clear (&rr);
      return saccade_cli_fail (g_steal_pointer (&error));
    }
  rr.labels = saccade_token_labels_for_store (rr.tokens, rr.n_tokens);
  ids = g_new (int32_t, rr.n_tokens);
  for (size_t i = 0; i < rr.n_tokens; i++)
    ids[i] = rr.tokens[i].id;
  if (!saccade_cli_session_open (&cs, &o->common, model, &error))
    {
      run_result_clear (&rr);
      return saccade_cli_fail (g_steal_pointer (&error));
    }
  rr.f = saccade_faithfulness_get (model, saccade_cli_model_path (&o->common), cs.session,
                                   db_path, run_id, ids, (int) rr.n_tokens, p, o->head_sweep,
                                   o->recompute, tty ? saccade_cli_progress_bar : NULL, NULL, NULL,
                                   &rr.warning, &error);
  if (tty)
    fprintf (stderr, "\r\033[K");
  saccade_cli_session_close (&cs);
  if (rr.f != NULL)
    {
      const ScFaithStatsParams sp = { o->n_boot, (uint32_t) o->seed };
      ScError err = { 0 };
      if (sc_faith_sentence_stats (rr.f->result, &sp, &rr.stats, &err) != SC_OK)
        {
          saccade_set_error_from_sc (&error, &err);
          g_clear_pointer (&rr.f, saccade_faithfulness_free);
        }
    }
  if (rr.f == NULL)
    rc = saccade_cli_fail (g_steal_pointer (&error));
  else
    {
      if (o->common.json)
        print_run_json (&rr);
      else
        print_run_text (&rr, db_path);
      if (o->csv != NULL)
        {
          g_autoptr (GBytes) csv = saccade_faithfulness_run_csv (rr.f,
                                                                 (const char *const *) rr.labels);
          if (!saccade_export_write (csv, o->csv, &error))
            rc = saccade_cli_fail (g_steal_pointer (&error));
          else if (!o->common.json)
            printf ("wrote the per-token importances to %s\n", o->csv);
        }
      if (rc == 0 && o->out_path != NULL)
        {
          g_autofree char *title = g_strdup_printf ("Attention vs leave-one-out · run %"
                                                    G_GINT64_FORMAT " · %s", run_id,
                                                    rr.run.model_name);
          SaccadeScatterFigure fig;
          saccade_faithfulness_scatter_figure (rr.f, (const char *const *) rr.labels, title,
                                               &fig);
          if (!saccade_figure_export_scatter (&fig, o->out_path, &o->figure_options, &error))
            rc = saccade_cli_fail (g_steal_pointer (&error));
          else if (!o->common.json)
            printf ("wrote the scatter to %s\n", o->out_path);
        }
    }
  run_result_clear (&rr);
  return rc;
}

/* ------------------------------------------------------------------------------------ */
/* --file                                                                                */

static void
print_file_text (const SaccadeFaithFile *f, const char *model_name, const ScFaithParams *p)
{
  saccade_cli_faith_print_file_table (f->summary, model_name, p);
  print_timing (f->total_s, f->forward_s);
}

static void
print_file_json (const SaccadeFaithFile *f, const char *model_name, const ScFaithParams *p,
                 const SaccadeFaithReportInfo *report)
{
  const ScFaithFileSummary *s = f->summary;
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  saccade_json_string (b, "model", model_name);
  if (report != NULL)
    {
      saccade_json_string (b, "dataset", report->dataset);
      saccade_json_int (b, "file_sentences", report->n_file_sentences);
      saccade_json_int (b, "shards", report->n_shards);
      saccade_json_int (b, "shards_present", report->n_shards_present);
    }
  saccade_json_int (b, "n_sentences", s->n_sentences);
  saccade_json_string (b, "metric", sc_faith_metric_id (p->metric));
  saccade_json_string (b, "kind", sc_faith_erase_id (p->kind));
  saccade_json_int (b, "top_k", p->top_k > 0 ? p->top_k : SC_FAITH_DEFAULT_TOP_K);
  if (p->contrastive)
    saccade_json_int (b, "contrast", p->contrast);
  saccade_json_double (b, "alpha", SC_FAITH_ALPHA);
  saccade_json_int (b, "std_ddof", 1);
  saccade_cli_faith_json_file_stats (b, s);
  saccade_json_begin_object (b, "table2");
  for (int k = 0; k < sc_faith_summary_n_sources (s); k++)
    saccade_cli_faith_json_summary_member (b, sc_faith_source_id (k), &s->source[k]);
  saccade_cli_faith_json_summary_member (b, "attention-vs-saliency", &s->attn_vs_grad);
  for (int k = 0; k < 2; k++)
    {
      const int h = k == 0 ? s->best_head : s->median_head;
      if (h < 0)
        continue;
      saccade_json_begin_object (b, k == 0 ? "best-head" : "median-head");
      saccade_json_int (b, "layer", h / s->n_heads);
      saccade_json_int (b, "head", h % s->n_heads);
      saccade_cli_faith_json_summary (b, &s->heads[h]);
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
  saccade_json_begin_array (b, "head_tau_mean"); /* (n_layers, n_heads) */
  for (int l = 0; l < s->n_layers; l++)
    {
      json_builder_begin_array (b);
      for (int h = 0; h < s->n_heads; h++)
        saccade_json_add_double (b, s->heads[l * s->n_heads + h].tau_mean);
      json_builder_end_array (b);
    }
  json_builder_end_array (b);
  saccade_json_begin_array (b, "sentences");
  for (guint i = 0; i < f->sentences->len; i++)
    {
      const SaccadeFaithSentence *sent = g_ptr_array_index (f->sentences, i);
      const ScFaithResult *r = f->results[i];
      json_builder_begin_object (b);
      saccade_json_int (b, "line", sent->line);
      if (report == NULL)
        saccade_json_string (b, "text", sent->text);
      saccade_json_int (b, "n_tokens", f->n_tokens[i]);
      saccade_json_int (b, "target", r->target);
      saccade_cli_faith_json_source_agreements (b, r, NULL);
      saccade_json_double (b, "seconds", r->timing.total_s);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_timing (b, f->total_s, f->forward_s);
  json_builder_end_object (b);
  saccade_json_print (b);
}

/* The file's summary again in the set and with the statistics asked (--exclude-first,
 * --bootstrap, --seed): both sets are in every study, so stored sentences serve either. */
static gboolean
resummarize (SaccadeFaithFile *f, const FaithOptions *o, GError **error)
{
  const ScFaithStatsParams sp = { o->n_boot, (uint32_t) o->seed };

  return saccade_faith_file_summarize (f, o->exclude_first, &sp, error);
}

/* --csv of --file and --report: the Table-2 rows, then the per-sentence rows; --table-csv:
 * the table with its intervals and readings (saccade-faith-table.h), the window's export.
 * Returns the exit status (1 when a file cannot be written, said on stderr). */
static int
write_file_csv (const SaccadeFaithFile *f, const FaithOptions *o)
{
  g_autoptr (GError) error = NULL;

  if (o->csv != NULL)
    {
      g_autoptr (GBytes) csv = saccade_faithfulness_file_csv (f);
      if (!saccade_export_write (csv, o->csv, &error))
        return saccade_cli_fail (g_steal_pointer (&error));
      if (!o->common.json)
        printf ("wrote the Table-2 rows and the per-sentence rows to %s\n", o->csv);
    }
  if (o->table_csv != NULL)
    {
      g_autoptr (GBytes) csv = saccade_faith_table_csv (f);
      if (!saccade_export_write (csv, o->table_csv, &error))
        return saccade_cli_fail (g_steal_pointer (&error));
      if (!o->common.json)
        printf ("wrote the table with its intervals and readings to %s\n", o->table_csv);
    }
  return 0;
}

static int
file_mode (ScModel *model, const FaithOptions *o, const ScFaithParams *p)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeFaithFile) f = NULL;
  SaccadeCliSession cs = { 0 };
  GPtrArray *sentences;
  const gboolean tty = isatty (STDERR_FILENO);
  SaccadeShard shard = { 0, 1 };
  int rc = 0, n_reused = 0;

  if (o->shard != NULL && !saccade_shard_parse (o->shard, &shard, &error))
    return saccade_cli_fail (g_steal_pointer (&error));
  if ((sentences = saccade_faithfulness_read_sentences (o->file, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  if (!saccade_cli_session_open (&cs, &o->common, model, &error))
    {
      g_ptr_array_unref (sentences);
      return saccade_cli_fail (g_steal_pointer (&error));
    }
  if (o->db != NULL)
    {
      g_autofree char *db_path = saccade_db_path (o->db);
      f = saccade_faithfulness_run_stored (model, saccade_cli_model_path (&o->common),
                                           cs.session, o->file, sentences, p, &shard, db_path,
                                           tty ? saccade_cli_progress_bar : NULL, NULL, NULL, &n_reused,
                                           &error);
    }
  else
    f = saccade_faithfulness_run_file (model, cs.session, sentences, p,
                                       tty ? saccade_cli_progress_bar : NULL, NULL, NULL, &error);
  if (tty)
    fprintf (stderr, "\r\033[K");
  saccade_cli_session_close (&cs);
  if (f == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  if (f->summary == NULL)
    {
      /* a shard with no sentence: N is larger than the file's sentences */
      if (o->common.json)
        {
          g_autoptr (JsonBuilder) b = json_builder_new ();
          json_builder_begin_object (b);
          saccade_json_string (b, "model", sc_model_info (model)->name);
          saccade_json_string (b, "shard", o->shard);
          saccade_json_int (b, "n_sentences", 0);
          json_builder_end_object (b);
          saccade_json_print (b);
        }
      else
        printf ("shard %s holds no sentence of %s; its database records the shard\n", o->shard,
                o->file);
      return 0;
    }
  if (!resummarize (f, o, &error))
    return saccade_cli_fail (g_steal_pointer (&error));
  if (o->db != NULL && !o->common.json)
    printf ("%d sentences %s%s%s (%d read back from %s, %d computed now)\n",
            (int) f->sentences->len, o->shard != NULL ? "of shard " : "",
            o->shard != NULL ? o->shard : "", o->shard != NULL ? "" : "of the file", n_reused,
            o->db, (int) f->sentences->len - n_reused);
  if (o->common.json)
    print_file_json (f, sc_model_info (model)->name, p, NULL);
  else
    print_file_text (f, sc_model_info (model)->name, p);
  if (o->csv != NULL || o->table_csv != NULL)
    rc = write_file_csv (f, o);
  if (rc == 0 && o->heads_path != NULL)
    {
      /* The per-head mean τ map: layers as rows, heads as columns, on a diverging map
       * over [−1, 1] so that 0 (no agreement) is white. */
      const ScFaithFileSummary *s = f->summary;
      g_autofree float *v = g_new (float, (gsize) s->n_layers * s->n_heads);
      g_autofree char *title = g_strdup_printf ("Mean Kendall τ with leave-one-out per head · "
                                                "%d sentences · %s", s->n_sentences,
                                                sc_model_info (model)->name);
      SaccadeHeatmapFigure hm = { .values = v, .n_rows = s->n_layers, .n_cols = s->n_heads,
                                  .title = title, .colormap = SACCADE_COLORMAP_RDBU,
                                  .scale = SACCADE_SCALE_LINEAR, .vmin = -1, .vmax = 1,
                                  .row_name = "Layer", .col_name = "Head",
                                  .value_name = "mean τ" };
      for (int h = 0; h < s->n_layers * s->n_heads; h++)
        v[h] = (float) s->heads[h].tau_mean;
      if (!saccade_figure_export_heatmap (&hm, o->heads_path, &o->figure_options, &error))
        rc = saccade_cli_fail (g_steal_pointer (&error));
      else if (!o->common.json)
        printf ("wrote the per-head mean τ map to %s\n", o->heads_path);
    }
  if (rc == 0 && o->out_path != NULL)
    {
      g_autofree char *title = g_strdup_printf ("Is attention faithful? · %s",
                                                sc_model_info (model)->name);
      SaccadeFaithRow rows[SC_FAITH_N_SOURCES + 2];
      g_auto (GStrv) names = NULL;
      SaccadeFaithfulnessFigure fig;
      saccade_faithfulness_file_figure (f, title, rows, &names, &fig);
      if (!saccade_figure_export_faithfulness (&fig, o->out_path, &o->figure_options, &error))
        rc = saccade_cli_fail (g_steal_pointer (&error));
      else if (!o->common.json)
        printf ("wrote the Table-2 figure to %s\n", o->out_path);
    }
  return rc;
}

/* --report DB: the Table-2 summary of the sentence studies stored in DB (a merge of shards
 * or one run with --db); needs no model. */
static int
report_mode (const FaithOptions *o)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeFaithFile) f = NULL;
  SaccadeFaithReportInfo info;
  int rc = 0;

  if ((f = saccade_faithfulness_report (o->report, &info, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  info.params.exclude_first = o->exclude_first;
  if (!resummarize (f, o, &error))
    {
      saccade_faith_report_info_clear (&info);
      return saccade_cli_fail (g_steal_pointer (&error));
    }
  if (o->common.json)
    print_file_json (f, info.model_name, &info.params, &info);
  else
    {
      printf ("%s: dataset %.12s…, %d of the file's %d sentences stored, %d of %d shards "
              "present%s\n", o->report, info.dataset, (int) f->sentences->len,
              info.n_file_sentences, info.n_shards_present, info.n_shards,
              (int) f->sentences->len < info.n_file_sentences ? " (incomplete: run the "
                                                                 "missing shards and merge)"
                                                               : "");
      print_file_text (f, info.model_name, &info.params);
    }
  if (o->csv != NULL || o->table_csv != NULL)
    rc = write_file_csv (f, o);
  saccade_faith_report_info_clear (&info);
  return rc;
}

int
saccade_cmd_faithfulness (int argc, char **argv)
{
  FaithOptions o = { .figure = SACCADE_CLI_FIGURE_INIT };
  GOptionEntry entries[] = {
    { "file", 0, 0, G_OPTION_ARG_FILENAME, &o.file,
      "sentences, one per line (# comments and blank lines skipped), instead of RUN", "FILE" },
    { "metric", 0, 0, G_OPTION_ARG_STRING, &o.metric,
      "leave-one-out importance: tv (default), jsd, abs-delta-logp (the default with --kind "
      "trace) or, with --contrast, abs-delta-logit-diff (the default then)", "METRIC" },
    { "kind", 0, 0, G_OPTION_ARG_STRING, &o.kind,
      "the reference ranking: leave-one-out by mask (default: out of every attention row) or "
      "drop (from the input), or trace (causal tracing: every other token noised, the token's "
      "own state restored layer by layer)", "KIND" },
    { "top-k", 0, 0, G_OPTION_ARG_INT, &o.top_k, "k of the top-k overlap (3)", "K" },
    SACCADE_CLI_TARGET_OPTIONS (&o.target, "measured (abs-delta-logp, the gradients)"),
    SACCADE_STORE_CLI_DB_OPTION (&o.db),
    SACCADE_STORE_CLI_RECOMPUTE_OPTION (&o.recompute),
    { "gradients", 0, 0, G_OPTION_ARG_NONE, &o.gradients,
      "also the gradient sources (saliency, gradient x input, integrated gradients, gradient "
      "rollout) and attention against saliency (J&W's tau_g)", NULL },
    { "mixing", 0, 0, G_OPTION_ARG_NONE, &o.mixing,
      "also the context-mixing sources: norm-based attention, value zeroing and ALTI, of the "
      "last layer and rolled out (value zeroing costs about one pass per token)", NULL },
    { "ig-steps", 0, 0, G_OPTION_ARG_INT, &o.ig_steps,
      "integrated gradients' points with --gradients (50)", "N" },
    { "exclude-first", 0, 0, G_OPTION_ARG_NONE, &o.exclude_first,
      "report the agreements without the first token (both sets are always computed and "
      "shown; the first token is often an attention sink)", NULL },
    { "bootstrap", 0, 0, G_OPTION_ARG_INT, &o.n_boot,
      "resamples of the bootstrap intervals and the permutation null (1000)", "B" },
    { "seed", 0, 0, G_OPTION_ARG_INT, &o.seed,
      "seed of the resampling (default 0x5accade; the same seed gives the same intervals)",
      "N" },
    { "head-sweep", 0, 0, G_OPTION_ARG_NONE, &o.head_sweep,
      "RUN: ablate every head if no sweep is stored, for the head level", NULL },
    { "csv", 0, 0, G_OPTION_ARG_FILENAME, &o.csv,
      "write the data as CSV (RUN: per token; --file: Table-2 rows, then per sentence)",
      "PATH" },
    { "table-csv", 0, 0, G_OPTION_ARG_FILENAME, &o.table_csv,
      "--file, --report: write the table with its intervals, shares and readings as CSV "
      "(the window's export)", "PATH" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &o.out_path,
      "write the figure (.png, .svg, .pdf): RUN the scatter, --file the Table-2 figure",
      "FIGURE" },
    { "heads-figure", 0, 0, G_OPTION_ARG_FILENAME, &o.heads_path,
      "--file: write the per-head mean τ map (.png, .svg, .pdf)", "FIGURE" },
    SACCADE_CLI_FIGURE_OPTIONS (&o.figure),
    { "shard", 0, 0, G_OPTION_ARG_STRING, &o.shard,
      "--file with --db: only sentences k with k mod N = I (I/N, e.g. 0/3); see docs/cluster.md",
      "I/N" },
    { "report", 0, 0, G_OPTION_ARG_FILENAME, &o.report,
      "the Table-2 summary of the sentence studies stored in DB (merged shards)", "DB" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "RUN | --file SENTENCES - attention importance against leave-one-out importance");
  g_autoptr (GError) error = NULL;
  ScFaithParams p;
  ScModel *model = NULL;
  gint64 run = 0;
  int rc;

  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &o.common);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if (o.report != NULL)
    {
      if (o.file != NULL || argc != 1)
        {
          fprintf (stderr, "saccade: --report DB takes no run and no --file\n");
          return 2;
        }
      rc = report_mode (&o);
      goto done;
    }
  if (o.shard != NULL && (o.file == NULL || o.db == NULL))
    {
      fprintf (stderr, "saccade: --shard I/N is for --file SENTENCES with --db SHARD.sqlite "
                       "(each shard writes its own database; merge them with `saccade merge`)\n");
      return 2;
    }
  if ((o.file == NULL) == (argc != 2) || argc > 2)
    {
      fprintf (stderr, "saccade: faithfulness takes one run id (see `saccade runs`) or "
                       "--file SENTENCES, not both\n");
      return 2;
    }
  if (o.file == NULL && !saccade_store_cli_run_id (argv[1], &run))
    return 2;
  if (!parse_params (&o, &p, &error))
    return saccade_cli_fail (g_steal_pointer (&error)) + 1;
  if (o.gradients)
    o.common.needs = SC_BACKEND_CAP_BACKWARD;
  for (int k = 0; k < 2; k++)
    {
      const char *path = k == 0 ? o.out_path : o.heads_path;
      SaccadeFigureFormat fmt;
      /* Refused before the study runs, not after minutes of computing. */
      if (path != NULL && !saccade_figure_format_from_path (path, &fmt, &error))
        return saccade_cli_fail (g_steal_pointer (&error));
    }
  if (!saccade_cli_figure_check (&o.figure, o.out_path != NULL || o.heads_path != NULL,
                                 "-o or --heads-figure", &o.figure_options, &rc))
    return rc;
  if ((o.heads_path != NULL || o.table_csv != NULL) && o.file == NULL)
    {
      fprintf (stderr, o.heads_path != NULL
                         ? "saccade: --heads-figure is for --file (a run's heads are in --json)\n"
                         : "saccade: --table-csv is for --file (a run's table is in --csv)\n");
      return 2;
    }
  if (o.file != NULL && !g_file_test (o.file, G_FILE_TEST_EXISTS))
    {
      g_set_error (&error, G_FILE_ERROR, G_FILE_ERROR_NOENT, "no sentence file at %s", o.file);
      return saccade_cli_fail (g_steal_pointer (&error));
    }
  if ((model = saccade_cli_load_model (&o.common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  if (!saccade_cli_target_parse (model, &o.target, &p.target, &p.contrast, &error))
    {
      sc_model_free (model);
      rc = saccade_cli_fail (g_steal_pointer (&error)) + 1;
      goto done;
    }
  p.contrastive = p.contrast >= 0;
  if (p.contrastive && o.metric == NULL)
    p.metric = SC_FAITH_METRIC_ABS_DELTA_LOGIT_DIFF;
  else if (p.kind == SC_FAITH_ERASE_TRACE && o.metric == NULL)
    p.metric = SC_FAITH_METRIC_ABS_DELTA_LOGP; /* causal tracing's own quantity
                                                * (docs/metrics.md) */
  if (p.contrastive != (p.metric == SC_FAITH_METRIC_ABS_DELTA_LOGIT_DIFF))
    {
      fprintf (stderr, p.contrastive
               ? "saccade: with --contrast the leave-one-out importance is "
                 "abs-delta-logit-diff, not --metric %s\n"
               : "saccade: --metric %s measures logit(target) - logit(B): it needs "
                 "--contrast B\n", sc_faith_metric_id (p.metric));
      sc_model_free (model);
      rc = 2;
      goto done;
    }
  rc = o.file != NULL ? file_mode (model, &o, &p) : run_mode (model, &o, &p, run);
  sc_model_free (model);
done:
  g_free (o.shard);
  g_free (o.report);
  g_free (o.db);
  g_free (o.file);
  g_free (o.csv);
  g_free (o.table_csv);
  g_free (o.out_path);
  g_free (o.heads_path);
  saccade_cli_figure_clear (&o.figure);
  g_free (o.metric);
  g_free (o.kind);
  saccade_cli_target_clear (&o.target);
  return rc;
}
