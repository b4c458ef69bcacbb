/* saccade-faithfulness.h — attention against leave-one-out importance as both faces use it
 * (engine/study/sc-faithfulness.h has the definitions; docs/metrics.md, "Faithfulness").
 *
 * A stored run: saccade_faithfulness_get() reuses a stored "faithfulness" study of the same
 * run, model file (SHA-256) and parameters, or computes one and stores it. When it computes,
 * it first reuses a stored token leave-one-out study of the run ("ablate-tokens", the one
 * `saccade ablate RUN --tokens` writes) and stores the one it computes, so the two verbs
 * never run the same erasures twice. The head level sets each head's ablation effect from
 * a stored head sweep of the run ("ablate-heads") — or, when asked, one computed and
 * stored now (n_layers × n_heads more passes) — against the head statistics.
 *
 * A file of sentences: one sentence per line, UTF-8 (an invalid line is refused with its
 * line number), blank lines and lines starting with '#' skipped, a line longer than
 * SACCADE_FAITH_MAX_LINE_BYTES or a sentence of more than SACCADE_FAITH_MAX_TOKENS tokens
 * refused (with its line), a file with no sentence refused. Sentences are tokenised as
 * plain text (special tokens are not parsed), run in memory — not stored as runs, and no
 * study is stored: a file is a batch whose numbers are the summary — and summarised as
 * Jain & Wallace's Table 2 (sc_faith_summarize). With a database, each sentence is stored
 * as its own study, resumable and shardable: app/core/saccade-dataset.h.
 *
 * Timing: every result says how long it took and how much of it the forward passes took
 * (ScFaithTiming), the benchmark's "share spent outside forward passes".
 *
 * CSV (RFC 4180, CRLF, 9 significant digits, NaN as "nan"):
 *   run   one row per compared token: pos,token,loo,last_mean,rollout,flow, then one column
 *         per head "L.H" (its last-query weight);
 *   file  one table in long form, the Table-2 rows first then the per-sentence rows:
 *         scope,sentence,line,n_tokens,source,n_defined,tau,tau_std,tau_p,share_significant,
 *         rho,rho_p,topk — scope "summary" (sentence, line, n_tokens and the p columns empty;
 *         tau is the mean) or "sentence" (n_defined, tau_std and share_significant empty);
 *         sources last-mean, rollout, flow, best-head, median-head (named "best-head L.H").
 *         One file, so that a reader filters by scope instead of matching two files.
 */
#pragma once

#include <gio/gio.h>

#include "app/core/saccade-job.h"

#include "engine/store/sc-store.h"
#include "engine/study/sc-faithfulness.h"
#include "ui/figures/saccade-figure.h"

G_BEGIN_DECLS

/* A line of more than this many bytes is refused: J&W's sentences are tens of words, and a
 * longer line is almost certainly not one sentence. */
#define SACCADE_FAITH_MAX_LINE_BYTES 2048
/* Leave-one-out runs 2 (n − 1) passes of n tokens, so a sentence costs ~n²: 256 tokens is
 * about 500 passes, a minute of SmolLM2 on two cores. */
#define SACCADE_FAITH_MAX_TOKENS 256
/* The head level's per-head vectors: the head statistics and the direct logit attribution. */
#define SACCADE_FAITH_N_HEAD_CORR (SC_FAITH_N_HEAD_STATS + 1)

typedef struct {
  ScFaithResult *result;            /* owned */
  /* The head statistics (SC_FAITH_HEAD_STATS), then "dla": each head's direct logit
   * attribution to the target (engine/study/sc-dla.h) against its ablation effect. */
  ScFaithHeadCorr head_corr[SACCADE_FAITH_N_HEAD_CORR];
  int n_head_corr;                  /* entries of head_corr filled */
  gboolean have_head_level;         /* a head sweep was found or computed */
  gint64 study_id;                  /* 0 when not stored */
  gboolean reused;                  /* read back rather than computed */
  gboolean loo_reused;              /* leave-one-out read from an ablate-tokens study */
  gboolean sweep_reused;            /* the head sweep read back */
  double seconds;                   /* wall time of this call */
  double head_level_seconds;        /* of which the head level (sweep, DLA: found or run) */
} SaccadeFaithfulness;

void saccade_faithfulness_free (SaccadeFaithfulness *f); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeFaithfulness, saccade_faithfulness_free)

/* The best and the median head of one sentence's result by τ-b with leave-one-out (NaN
 * left out; the best is the lowest index among the highest τ, the median the lower middle
 * of the heads in ascending τ, ties by index); -1 each when no head has a τ. */
void saccade_faith_head_extremes (const ScFaithResult *r, int *best, int *median);

/* Reads run @run_id's info and tokens from the store at @db_path and checks that it was
 * captured with @model (by the SHA-256 of @model_path): G_IO_ERROR_NOT_FOUND (no store, no
 * such run), G_IO_ERROR_INVALID_ARGUMENT (another model, saying which). */
gboolean saccade_faithfulness_read_run (const char *db_path, gint64 run_id, ScModel *model,
                                        const char *model_path, ScStoreRunInfo *run,
                                        ScStoreToken **tokens, size_t *n_tokens,
                                        GError **error);

/* The study of run @run_id (its ids @ids, @n) as above. @session is bound to @model and used
 * by no one else during the call. @head_sweep: compute and store a head sweep when none is
 * stored. Cancelling @cancellable stops it (G_IO_ERROR_CANCELLED; nothing is stored). A
 * failure to store is reported in *@store_warning (may be NULL; caller frees) and the
 * result still returned. */
SaccadeFaithfulness *saccade_faithfulness_get (ScModel *model, const char *model_path,
                                               ScSession *session, const char *db_path,
                                               gint64 run_id, const int32_t *ids, int n,
                                               const ScFaithParams *params,
                                               gboolean head_sweep, gboolean recompute,
                                               SaccadeProgress progress,
                                               gpointer user_data, GCancellable *cancellable,
                                               char **store_warning, GError **error);

/* One sentence of a file. */
typedef struct {
  char *text;   /* valid UTF-8, no line end */
  int line;     /* 1-based */
} SaccadeFaithSentence;

/* An empty array of SaccadeFaithSentence that frees them (caller unrefs), and one more
 * sentence @text (taken) of line @line at its end. */
GPtrArray *saccade_faith_sentences_new (void);
void saccade_faith_sentences_add (GPtrArray *sentences, char *text, int line);

/* The sentences of @path (rules above) as SaccadeFaithSentence (the array frees them).
 * Errors: G_FILE_ERROR_* (cannot read), G_IO_ERROR_INVALID_DATA ("FILE:LINE: ..." for
 * invalid UTF-8, a NUL byte or a line too long; no sentence at all). */
GPtrArray *saccade_faithfulness_read_sentences (const char *path, GError **error);

/* The tokens of sentence @s on @model (no BOS): a GArray of int32 ids, caller frees. NULL
 * with @error when it does not tokenize or is not SC_FAITH_MIN_TOKENS to
 * SACCADE_FAITH_MAX_TOKENS long (G_IO_ERROR_INVALID_DATA); either message begins
 * "line N: ". */
GArray *saccade_faith_sentence_ids (ScModel *model, const SaccadeFaithSentence *s,
                                    GError **error);

typedef struct {
  GPtrArray *sentences;             /* SaccadeFaithSentence, owned */
  ScFaithResult **results;          /* (sentences->len), owned */
  int *n_tokens;                    /* (sentences->len) */
  ScFaithFileSummary *summary;      /* owned */
  double total_s, forward_s;        /* wall time of the whole file; in forward passes */
  int n_reused;                     /* with a database: sentences read back, not computed */
  char *db_path;                    /* the window's job (saccade-faith-table.h): where its
                                     * studies are stored; else NULL */
} SaccadeFaithFile;

void saccade_faith_file_free (SaccadeFaithFile *f); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeFaithFile, saccade_faith_file_free)

/* Runs every sentence of @sentences (taken) on @session, in file order, and summarises.
 * Progress is over the whole file. Errors: a sentence too short or too long ("line N: ..."),
 * those of the study, G_IO_ERROR_CANCELLED. */
SaccadeFaithFile *saccade_faithfulness_run_file (ScModel *model, ScSession *session,
                                                 GPtrArray *sentences,
                                                 const ScFaithParams *params,
                                                 SaccadeProgress progress,
                                                 gpointer user_data, GCancellable *cancellable,
                                                 GError **error);

/* The CSVs above. @labels (n_tokens display strings) name the run's tokens. */
GBytes *saccade_faithfulness_run_csv (const SaccadeFaithfulness *f, const char *const *labels);
GBytes *saccade_faithfulness_file_csv (const SaccadeFaithFile *f);

/* The figures of both faces. The scatter: last-layer-mean attention (x) against
 * leave-one-out importance (y) with τ and ρ, and per-token bars beside it; @f borrows the
 * result's vectors, @labels and @title. The file figure: one row per source (and the best
 * and median heads) with mean τ ± std and the share significant; @rows (SC_FAITH_N_SOURCES
 * + 2 entries) and @names (their texts, caller frees with g_strfreev) are filled for @f to
 * borrow. */
void saccade_faithfulness_scatter_figure (const SaccadeFaithfulness *f,
                                          const char *const *labels, const char *title,
                                          SaccadeScatterFigure *fig);
void saccade_faithfulness_file_figure (const SaccadeFaithFile *f, const char *title,
                                       SaccadeFaithRow rows[SC_FAITH_N_SOURCES + 2],
                                       char ***names, SaccadeFaithfulnessFigure *fig);

/* "last-layer mean", "rollout", "flow" (translated) for tables and figures. */
const char *saccade_faith_source_name (ScFaithSource s);
/* The reference ranking of @kind as a heading names it (translated): "leave-one-out by
 * masking", "leave-one-out by dropping", "causal tracing". */
const char *saccade_faith_reference_name (ScFaithErase kind);

G_END_DECLS
