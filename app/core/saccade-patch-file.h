/* saccade-patch-file.h — activation or path patching over a file of clean/corrupted pairs
 * (`saccade patch --file PAIRS`), and what the pairs say together.
 *
 * One pair is one experiment of engine/study/sc-patch-study.h (or sc-path-patch.h with
 * senders): the clean and the corrupted text, tokenised as `saccade capture` does (no BOS,
 * no special tokens), of the same token count, and the metric's tokens A and B (each the
 * text or id of one token; A defaults to the clean top-1, B to the corrupted top-1). Every
 * cell's normalised effect e = (m − m_corrupted) / (m_clean − m_corrupted) is read per
 * pair, then summarised over the n pairs, per cell, as the change from the run patched
 * into, d = e − base (base 0 denoising: the corrupted run; 1 noising: the clean run), since
 * a patch that does nothing leaves e at the base (docs/metrics.md, "Patching over pairs"):
 *   - the mean effect, with its 95 % percentile bootstrap interval over pairs (the pairs
 *     resampled with replacement, every cell's mean taken over the same draws:
 *     sc_stats_bootstrap_columns);
 *   - the top share: in how many of those resamples the cell has the largest |mean d| — a
 *     cell picked as "the" head out of 270 is picked by chance too, and this says how often;
 *   - the pairs that agree: |d| > 0.1 with the sign of the mean d;
 *   - the exact two-sided sign test of "d is centred on 0" over the pairs, and its
 *     Holm-adjusted p over the cells tested (every cell; with senders, the receivers only).
 *
 * saccade_patch_file_run() stores nothing: each call patches every pair. With a database,
 * saccade_patch_file_run_stored() stores each pair as the study `saccade study patch` (or
 * path-patch) of one stored pair would: the pair's two texts are runs of the database
 * (found there by model, text and token ids, else captured), and its result is the patch
 * study of the clean run with the corrupted one, read back when stored, else computed and
 * stored at once — so a rerun, or a run after an interruption, computes only what is
 * missing, and `saccade study patch RUN --corrupted RUN2` reads the same study back. A
 * shard (`--shard I/N`, saccade-dataset.h: pair k when k mod N = I) computes its share into
 * its own database, marked with a shard manifest
 *   {"verb":"patch","dataset":"SHA-256 of the file","pairs":K,"shards":N,
 *    "settings":{"study":"patch","direction":D,"what":W}}
 *   (path patching: "settings":{"study":"path-patch","direction":D,"senders":S,
 *    "component":C})
 * that the merge compares (engine/store/sc-store-merge.h; it carries both runs a patch
 * study names); the table is then read back from the merged database (STORED_ONLY), pair
 * by pair in the file's order: the same numbers, bit for bit, as one process computes.
 */
#pragma once

#include <gio/gio.h>

#include "app/core/saccade-dataset.h"
#include "app/core/saccade-job.h"
#include "engine/study/sc-path-patch.h"

G_BEGIN_DECLS

/* Effects of at least this size, with the mean's sign, count as a pair agreeing. */
#define SACCADE_PATCH_FILE_AGREE 0.1

typedef struct {
  char *clean, *corrupted;   /* the two texts */
  char *target, *contrast;   /* A and B as written (a token's text or id), NULL: default */
  int line;                  /* in the file, from 1 */
} SaccadePatchPair;

void saccade_patch_pair_free (SaccadePatchPair *p);

/* The pairs of the file at @path: one a line, CLEAN<TAB>CORRUPTED[<TAB>A[<TAB>B]] (a tab
 * separates the fields so that a token may start with a space: " Mary"); blank lines and
 * lines starting with # are skipped. Errors (G_IO_ERROR_INVALID_DATA naming the line): not
 * UTF-8, a NUL byte, a line without a tab, more than four fields, an empty text, no pair. */
GPtrArray *saccade_patch_pairs_read (const char *path, GError **error);

typedef struct {
  int direction;                    /* ScPatchDirection */
  int what;                         /* ScPatchWhat (activation patching) */
  gboolean path;                    /* path patching from @senders instead */
  int component;                    /* ScPathComponent, with @path */
  char senders[SC_STUDY_HEADS_MAX]; /* "L.H,..." with @path */
  int n_boot;                       /* bootstrap resamples */
  guint32 seed;
} SaccadePatchFileParams;

void saccade_patch_file_params_init (SaccadePatchFileParams *p);

/* Where a stored pair's result came from (saccade_patch_file_run_stored). */
typedef struct {
  gint64 clean_run, corrupted_run; /* the pair's runs in the database */
  gint64 study_id;                 /* its patch (or path-patch) study */
  gboolean reused;                 /* read back rather than computed now */
} SaccadePatchStored;

typedef struct {
  GPtrArray *pairs;          /* SaccadePatchPair, owned */
  int n_pairs;
  int n_rows, n_cols;        /* every pair's grid (ScPatchResult's) */
  int first_row;             /* cells of rows below it are not tested (path patching: the
                              * layers up to the latest sender have no path), else 0 */
  ScPatchResult **results;   /* (n_pairs) each pair's result, owned */
  double *effect;            /* (n_pairs, cells) the normalised effects */
  /* per cell (n_rows · n_cols); NaN for a cell that is not tested */
  double *mean, *lo, *hi, *top_share, *sign_p, *sign_p_holm;
  int *n_agree;
  int n_tested;              /* the Holm correction's m */
  double base;               /* the effect of a patch that changes nothing: 0 denoising, 1
                              * noising */
  double seconds;
  /* saccade_patch_file_run_stored only (else NULL and 0) */
  SaccadePatchStored *stored; /* (n_pairs) */
  int n_reused;               /* pairs read back */
  gboolean partial;           /* one shard of several: its pairs have no summary (mean and
                               * the other per-cell arrays NULL); the table is the whole
                               * file's, read back after the merge */
} SaccadePatchFile;

void saccade_patch_file_free (SaccadePatchFile *f); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadePatchFile, saccade_patch_file_free)

/* Patches every pair of @pairs (taken) on @session (bound to @model) with @p, then
 * summarises them (above); @progress (may be NULL) over the whole file. Errors, naming the
 * pair's line: a text that does not tokenise or has fewer than 2 tokens, the two texts of
 * different token counts, A or B not one token of the vocabulary, B equal to A, two runs
 * that give the same metric (nothing to normalise by), a grid unlike the first pair's
 * (positions: every pair must have as many tokens); the engine's errors (G_IO_ERROR_CANCELLED
 * when @cancellable fires). */
SaccadePatchFile *saccade_patch_file_run (ScModel *model, ScSession *session, GPtrArray *pairs,
                                          const SaccadePatchFileParams *p,
                                          SaccadeProgress progress, gpointer user_data,
                                          GCancellable *cancellable, GError **error);

typedef enum {
  SACCADE_PATCH_FILE_COMPUTE = 0,     /* read back what is stored, compute the rest */
  SACCADE_PATCH_FILE_STORED_ONLY = 1, /* read back only: a pair not stored is an error */
} SaccadePatchFileMode;

/* The pairs of @shard (NULL: the whole file) among @pairs (taken; read from @file_path,
 * whose bytes name the dataset), each stored in the database at @db_path as described
 * above, for @model (identified by @ident) on @session (bound to @model; may be NULL with
 * STORED_ONLY). A shard of several (count > 1) marks the database with its manifest and
 * returns its pairs unsummarised (partial); otherwise every pair is summarised as
 * saccade_patch_file_run() does, the pairs in file order. @progress (may be NULL) over the
 * whole call. Errors: saccade_patch_file_run()'s, the store's (G_IO_ERROR_*,
 * SACCADE_ERROR), G_IO_ERROR_INVALID_ARGUMENT when @db_path is a shard of another study,
 * and, STORED_ONLY, G_IO_ERROR_NOT_FOUND naming every line whose study is not stored
 * (and, when the database holds this file's shard manifests, the shards missing). */
SaccadePatchFile *saccade_patch_file_run_stored (ScModel *model, const ScStoreModel *ident,
                                                 ScSession *session, const char *file_path,
                                                 GPtrArray *pairs,
                                                 const SaccadePatchFileParams *p,
                                                 const SaccadeShard *shard,
                                                 const char *db_path,
                                                 SaccadePatchFileMode mode,
                                                 SaccadeProgress progress, gpointer user_data,
                                                 GCancellable *cancellable, GError **error);

/* The order of the tested cells by |mean effect − base|, largest first (caller frees; *@n
 * the count). */
int *saccade_patch_file_order (const SaccadePatchFile *f, int *n);

G_END_DECLS
