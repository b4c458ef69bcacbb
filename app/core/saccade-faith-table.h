/* saccade-faith-table.h — faithfulness over a prompt set (a file of sentences) laid out as a
 * table, once for both faces: the rows of Jain & Wallace's Table 2 extended (each source
 * the studies hold, then the best and the median head), each row's per-sentence τ (the
 * window's distributions), the summary again in the token set and with the statistics
 * asked, the table as CSV, and the window's job over a file. The numbers are the engine's
 * (sc_faith_summarize_with, sc_faith_summary_reading): this file chooses rows and formats,
 * never computes a statistic. Definitions: docs/metrics.md, "Faithfulness".
 *
 * The job stores each sentence's study exactly as `saccade faithfulness --file FILE --db
 * DB` does (saccade_faithfulness_run_stored, the whole file as one shard), in the database
 * saccade_faith_file_store_path names, so the command line run over the same file with
 * the same options reads every sentence back, and the window reads back what it stored.
 *
 * Table CSV (RFC 4180, CRLF, 9 significant digits, NaN as "nan"), one line per table row:
 *   source,n_defined,n_undefined,tau_mean,tau_std,tau_ci_lo,tau_ci_hi,rho_mean,rho_ci_lo,
 *   rho_ci_hi,share_p05,share_bh,topk_mean,tau_mean_other_set,first_token,reading
 * source as the file CSV names it (sc_faith_source_id, "best-head L.H", "median-head L.H");
 * share_p05 the share of sentences with p(τ) < 0.05 uncorrected (J&W's column), share_bh
 * after Benjamini–Hochberg over each row's sentences; first_token "included" or
 * "excluded" (the set summarised); reading the plain reading of a source (empty for a
 * head). `saccade faithfulness --file FILE --table-csv PATH` writes the same bytes.
 */
#pragma once

#include "app/core/saccade-capture-task.h"
#include "app/core/saccade-faithfulness.h"

G_BEGIN_DECLS

/* The sources, then the best and the median head. */
#define SACCADE_FAITH_TABLE_ROWS (SC_FAITH_N_SOURCES + 2)

typedef struct {
  char name[64];                /* shown: saccade_faith_source_name (translated), "best
                                 * head L19.H5" */
  char id[48];                  /* the CSVs': sc_faith_source_id, "best-head L19.H5" */
  int source;                   /* ScFaithSource, or -1 for a head */
  int head;                     /* layer-major head index, or -1 for a source */
  const ScFaithSummary *m;      /* borrowed from the summary */
} SaccadeFaithTableRow;

/* Row @k (0 .. SACCADE_FAITH_TABLE_ROWS − 1) of @s into @row. FALSE for a row left out: a
 * gradient or context-mixing source no sentence has (not asked for), a head when no head
 * has a defined mean. */
gboolean saccade_faith_table_row (const ScFaithFileSummary *s, int k, SaccadeFaithTableRow *row);

/* The τ of @row in each sentence of @f where it is defined, in file order, into @out
 * (f->sentences->len entries); returns how many were written. */
int saccade_faith_table_taus (const SaccadeFaithFile *f, const SaccadeFaithTableRow *row,
                              double *out);

/* The plain reading of a source's row (sc_faith_summary_reading) into @buf; "" for a head. */
void saccade_faith_table_reading (const ScFaithFileSummary *s, const SaccadeFaithTableRow *row,
                                  char *buf, size_t size);

/* Summarises @f's results again, in the set @exclude_first names, with the statistics @sp
 * (NULL: the defaults): every study holds both sets, so stored sentences serve either.
 * Errors: SACCADE_ERROR with the engine's message. */
gboolean saccade_faith_file_summarize (SaccadeFaithFile *f, gboolean exclude_first,
                                       const ScFaithStatsParams *sp, GError **error);

/* The distributions figure: saccade_faithfulness_file_figure's rows (the table's, in its
 * order), each with its sentences' τ as saccade_faith_table_taus gives them, written into
 * @taus (SACCADE_FAITH_TABLE_ROWS × f->sentences->len doubles, the caller's) for @fig to
 * borrow, as it borrows @rows and @names (caller frees with g_strfreev). */
void saccade_faith_table_figure (const SaccadeFaithFile *f, const char *title,
                                 SaccadeFaithRow rows[SACCADE_FAITH_TABLE_ROWS], char ***names,
                                 double *taus, SaccadeFaithfulnessFigure *fig);

/* The table CSV above. */
GBytes *saccade_faith_table_csv (const SaccadeFaithFile *f);

/* The window's study of the sentences in @file_path with @params (its exclude_first the
 * set summarised), in a worker on @model's session: each sentence read back from, or
 * computed and stored in, the database saccade_faith_file_store_path names in @folder
 * (created when missing), then summarised with the default statistics — the numbers of
 * `saccade faithfulness --file FILE --db PATH --json` with the same options. The result
 * (caller frees) says where it stored (db_path) and how many sentences it read back.
 * Errors: those of saccade_faithfulness_read_sentences and _run_stored,
 * G_IO_ERROR_CANCELLED. */
void saccade_faith_file_async (gpointer source_object, SaccadeLoadedModel *model,
                               const char *folder, const char *file_path,
                               const ScFaithParams *params, GCancellable *cancellable,
                               SaccadeJobProgress progress, gpointer progress_data,
                               GAsyncReadyCallback callback, gpointer user_data);
SaccadeFaithFile *saccade_faith_file_finish (GAsyncResult *result, GError **error);

G_END_DECLS
