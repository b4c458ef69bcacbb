/* saccade-dataset.h — studies over a file of sentences that live in a database: split into
 * shards, resumed after an interruption, merged (engine/store/sc-store-merge.h) and
 * summarised from what is stored (docs/cluster.md).
 *
 * Shards: `--shard I/N` takes the sentences (the file's non-blank, non-comment lines, in
 * order, numbered 0, 1, ...) whose number k has k mod N == I. Deterministic, and shards
 * never overlap; round robin rather than blocks so that long sentences late in a file
 * spread over the shards.
 *
 * Faithfulness over a file with a database: each sentence is one "faithfulness" study
 * whose params are sc_faith_params_json() of its ids with the dataset and the line added,
 *   {..., "gradients":S|null,"dataset":"SHA-256 of the file","line":L}
 * so a sentence already complete in the database is read back instead of computed (an
 * interrupted shard resumes where it stopped; the same sentence on two lines is two
 * studies, as it is two rows of J&W's table). The database also gets a shard manifest
 * (sc_store_shard_mark) with params
 *   {"verb":"faithfulness","dataset":"HEX","sentences":K,"shards":N,"settings":{...}}
 * (K: sentences in the whole file; settings: the study's metric, kind, top-k, target and
 * gradients), which the merge compares across shards and the report reads.
 *
 * The report (saccade_faithfulness_report) is the Table-2 summary of every sentence study
 * of the manifest's dataset and settings in one database, in line order — so the merge of
 * the shards and one unsharded run give the same numbers, bit for bit.
 */
#pragma once

#include "app/core/saccade-faithfulness.h"

G_BEGIN_DECLS

typedef struct {
  int index, count; /* 0 <= index < count; {0, 1}: the whole file */
} SaccadeShard;

/* Parses "I/N" (0 <= I < N <= 1000000, decimal). G_OPTION_ERROR_BAD_VALUE naming --shard. */
gboolean saccade_shard_parse (const char *text, SaccadeShard *out, GError **error);

/* Whether sentence number @k belongs to @shard. */
gboolean saccade_shard_has (const SaccadeShard *shard, guint k);

/* The dataset's name: the SHA-256 (lower-case hex) of the bytes of the file at @path, which
 * every study over it records. Caller frees; NULL with @error (G_FILE_ERROR). */
char *saccade_dataset_sha256 (const char *path, GError **error);

/* Runs the sentences of @shard among @sentences (taken; read from @file_path, whose bytes
 * name the dataset) on @session, each read back from the store at @db_path when complete
 * there, else computed and stored at once (one transaction per sentence). The result
 * holds the shard's sentences only; *@n_reused (may be NULL) counts those read back.
 * Errors: those of saccade_faithfulness_run_file, the store's (G_IO_ERROR_*), and
 * G_IO_ERROR_INVALID_ARGUMENT when @db_path is a shard of another study. */
SaccadeFaithFile *saccade_faithfulness_run_stored (ScModel *model, const char *model_path,
                                                   ScSession *session, const char *file_path,
                                                   GPtrArray *sentences,
                                                   const ScFaithParams *params,
                                                   const SaccadeShard *shard,
                                                   const char *db_path,
                                                   SaccadeProgress progress,
                                                   gpointer user_data,
                                                   GCancellable *cancellable, int *n_reused,
                                                   GError **error);

/* The database of the window's study of the sentence file at @file_path with @params, in
 * @folder: "STEM-KEY.sqlite", STEM the file's name without its extension (48 bytes at most,
 * other than [A-Za-z0-9_-] as '_'), KEY the first 12 hex digits of the SHA-256 of the
 * dataset (the file's SHA-256 in hex) followed by the settings text of the manifest. A
 * database is one study of one file (sc_store_shard_mark), so each prompt set and
 * settings gets its own, and `saccade faithfulness --file FILE --db PATH` with the same
 * options reads it back. Errors: G_FILE_ERROR_* (the file cannot be read),
 * G_IO_ERROR_INVALID_ARGUMENT (@params out of range). Caller frees. */
char *saccade_faith_file_store_path (const char *folder, const char *file_path,
                                     const ScFaithParams *params, GError **error);

/* capture --file --shard: marks @store (writable) as shard @shard of the capture of the
 * file at @file_path (@n_lines non-empty lines in all) with @settings (a canonical JSON
 * object of the capture's options) for @model, and sets *@n_done to the runs already
 * stored — the database holds this shard alone (the manifest sees to it) and its runs are
 * committed one by one in line order, so the first *@n_done lines of the shard are done
 * and a rerun resumes after them. G_IO_ERROR_INVALID_ARGUMENT when @store is a shard of
 * another study, the store's errors otherwise. */
gboolean saccade_capture_shard_begin (ScStore *store, const ScStoreModel *model,
                                      const char *file_path, guint n_lines,
                                      const char *settings, const SaccadeShard *shard,
                                      guint *n_done, GError **error);

/* What a report covers, beside its SaccadeFaithFile. */
typedef struct {
  ScFaithParams params;
  char *model_name;
  char *dataset;            /* SHA-256 hex of the sentence file */
  int n_file_sentences;     /* K of the manifest */
  int n_shards;             /* N */
  int n_shards_present;     /* distinct shard indices in the database */
} SaccadeFaithReportInfo;

void saccade_faith_report_info_clear (SaccadeFaithReportInfo *info);

/* The report of the database at @db_path (read-only): its sentence studies in line order,
 * summarised (sentence texts are not stored: SaccadeFaithSentence.text is ""). Errors:
 * G_IO_ERROR_NOT_FOUND (no database, no manifest, no sentence study),
 * G_IO_ERROR_INVALID_DATA (manifests that disagree, a params text that is not ours), the
 * store's checks (a value out of range names the study). */
SaccadeFaithFile *saccade_faithfulness_report (const char *db_path,
                                               SaccadeFaithReportInfo *info, GError **error);

G_END_DECLS
