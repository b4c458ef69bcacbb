/* saccade-cli-faith-stats-private.h — the statistics part of `saccade faithfulness`'s text
 * and JSON (saccade-cli-faithfulness.c): the two token sets, intervals, null baselines,
 * corrected p-values and the plain reading of engine/study/sc-faithfulness.h. Command-line
 * only. */
#pragma once

#include <json-glib/json-glib.h>

#include "engine/study/sc-faithfulness.h"

G_BEGIN_DECLS

/* "τ over all N tokens (the first token included ...)" or its "without" form. */
void saccade_cli_faith_print_set (const ScFaithResult *r);

/* The other set's agreement table, the intervals, null baselines, the best head's Holm p,
 * the heads' BH share and the readings of @st (of @r). */
void saccade_cli_faith_print_stats (const ScFaithResult *r, const ScFaithSentenceStats *st);

/* The members the statistics add to one source's object in "sources". */
void saccade_cli_faith_json_source_stats (JsonBuilder *b, const ScFaithSourceStats *ss);

/* Top-level members: "exclude_first", "sources_all_tokens", "sources_without_first",
 * "uniform_baseline", "best_head", "heads_bh", "statistics", "reading". */
void saccade_cli_faith_json_stats (JsonBuilder *b, const ScFaithResult *r,
                                   const ScFaithSentenceStats *st);

/* The summary members the statistics add ("tau_ci", "rho_ci", "share_significant_bh",
 * "tau_mean_other_set", "n_defined_other_set"). */
void saccade_cli_faith_json_summary_stats (JsonBuilder *b, const ScFaithSummary *m);

/* The file's statistics lines under its Table 2, and its readings. */
void saccade_cli_faith_print_file_stats (const ScFaithFileSummary *s);

/* Top-level members of a file's JSON: "exclude_first", "statistics", "reading". */
void saccade_cli_faith_json_file_stats (JsonBuilder *b, const ScFaithFileSummary *s);

/* One agreement's members (τ, ρ with p-values, top-k, defined, reason) into the open
 * object; one file summary's (counts, τ mean and std, shares, means, its statistics). */
void saccade_cli_faith_json_agreement (JsonBuilder *b, const ScFaithAgreement *a);
void saccade_cli_faith_json_summary (JsonBuilder *b, const ScFaithSummary *m);
/* The first as member @name. */
void saccade_cli_faith_json_agreement_member (JsonBuilder *b, const char *name,
                                              const ScFaithAgreement *a);
/* One such object for each source of @r in the set it reports, named by its id, with its
 * statistics when @st is not NULL. */
void saccade_cli_faith_json_source_agreements (JsonBuilder *b, const ScFaithResult *r,
                                               const ScFaithSentenceStats *st);
/* The second as member @name. */
void saccade_cli_faith_json_summary_member (JsonBuilder *b, const char *name,
                                            const ScFaithSummary *m);
/* The text rows: one agreement (@name padded to 17), one Table-2 summary row (@name padded
 * to 20: τ mean ± std, share significant, mean ρ, mean top-k, undefined count). */
void saccade_cli_faith_print_agreement_row (const char *name, const ScFaithAgreement *a);
void saccade_cli_faith_print_summary_row (const char *name, const ScFaithSummary *m);
/* How a heading names the reference ranking of @kind ("leave-one-out by masking", …). */
const char *saccade_cli_faith_reference (ScFaithErase kind);
/* A file's heading, Table 2 (each source asked for, the best and median heads, attention
 * against saliency) and its statistics lines. */
void saccade_cli_faith_print_file_table (const ScFaithFileSummary *s, const char *model_name,
                                         const ScFaithParams *p);

G_END_DECLS
