/* sc-store-merge.h — one store from many: the databases that the shards of a study wrote
 * (docs/cluster.md), merged into one, every run and study with it, ids given anew.
 *
 * A study over a file of sentences can be split into N shards that run apart (a Slurm job
 * array, GNU parallel) and each write their own database. Each such database holds a
 * shard manifest: a study of kind SC_STORE_SHARD_KIND whose params are the canonical text
 * of what all shards share (the verb, the file's SHA-256, the study's settings, N) and
 * whose series "shard" holds (pos 0) its index I and (pos 1) N. sc_store_merge() puts the
 * shards together and refuses what would mix different studies.
 *
 * Rules:
 *   - OUT keeps what it holds: it is the first input, copied as it is (its ids stay); each
 *     shard's complete runs and studies are appended with new ids (runs and studies are
 *     AUTOINCREMENT in OUT) and every reference to them (tokens, heads, scores, study
 *     values, and the run a study's params name: {"study":V,"run":R,...} gets R's new id,
 *     and so does the second run of a study of two, {"study":V,"run":R,"corrupted":C,...}
 *     (patching); a study whose run is not merged is left out) follows. Runs or studies still
 *     'writing' (a shard killed mid-way) are left out. Models are one row per file
 *     SHA-256; a model-level head score OUT already has for the same (model, layer, head,
 *     metric) is kept and the shard's dropped.
 *   - Every input is untrusted: it is opened read-only through sc_store_open (its schema
 *     compared object by object with ours), must be at SC_STORE_SCHEMA_VERSION, passes
 *     PRAGMA integrity_check and foreign_key_check, every complete run passes the
 *     store's run check (dimensions, kept heads) and every complete study is read back
 *     through sc_store_read_study (every number checked against its model). Rows then go
 *     in through OUT's CHECK constraints.
 *   - Manifests: when any input (OUT included) holds a manifest, every input must, all
 *     manifests must have the same params text and the same model SHA-256, and no shard
 *     index may appear in two inputs; anything else is refused (SC_ERR_INVALID_ARG),
 *     naming both files and what differs.
 *   - Atomic: the merge is written into a temporary file beside OUT (OUT.merging-XXXXXX),
 *     closed (its WAL folded in), fsync'ed and renamed over OUT, and the folder fsync'ed.
 *     Until the rename OUT is as it was; a refused merge, an error or a crash (even
 *     SIGKILL) never changes OUT. A crash can leave the temporary file behind (named so).
 *     OUT with a non-empty OUT-wal (open in another process, or not closed cleanly) is
 *     refused: replacing the file under a live WAL would corrupt it.
 *
 * Errors: those of sc_store_open naming the input; SC_ERR_FORMAT (a damaged input: the
 * file, the table and the value), SC_ERR_UNSUPPORTED (an input at another schema version),
 * SC_ERR_INVALID_ARG (the manifests above, no inputs, one file named twice — OUT among the
 * shards, a shard twice),
 * SC_ERR_CANCELLED (@progress said stop), SC_ERR_IO / SC_ERR_DB (writing).
 * OUT keeps its permissions (a new OUT gets 0666 less the umask, as any new file).
 * Thread safety: touches no shared state; one merge per OUT at a time (a second one's
 * rename would win). Plain C17 + SQLite; no GLib.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/sc-store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The study kind of a shard manifest. */
#define SC_STORE_SHARD_KIND "shard"
/* The largest N a manifest may claim: far more tasks than any job array runs (Slurm's
 * MaxArraySize defaults to 1001), small enough that no count overflows an int. */
#define SC_STORE_MAX_SHARDS 1000000

typedef struct {
  size_t n_inputs;          /* OUT (when it existed) and the shards */
  size_t n_models;          /* rows of models in OUT after the merge */
  size_t n_runs_added;      /* complete runs copied from the shards */
  size_t n_studies_added;   /* complete studies copied (manifests included) */
  size_t n_skipped;         /* runs and studies left out because they were not complete */
} ScStoreMergeStats;

/* Called before each shard is copied (@index 0-based among @n shards) and once more with
 * @index == @n before the rename; false stops the merge (SC_ERR_CANCELLED, OUT untouched).
 * Tests use it to stop — or kill the process — in the middle. */
typedef bool (*ScStoreMergeProgress) (void *user, size_t index, size_t n);

/* Merges the stores at @shards (@n_shards >= 1 paths) into @out_path as above. @progress
 * may be NULL; @stats (may be NULL) is filled on success. */
ScStatus sc_store_merge (const char *out_path, const char *const *shards, size_t n_shards,
                         ScStoreMergeProgress progress, void *user, ScStoreMergeStats *stats,
                         ScError *err);

/* Writes a shard manifest into @store (writable): a study of SC_STORE_SHARD_KIND for
 * @model with @params (the shared text) and series "shard" = (@index, @n). Does nothing
 * when the same manifest (params, model, index, n) is already there. Errors: those of
 * sc-store-study.h; SC_ERR_INVALID_ARG when 0 <= @index < @n does not hold, or @store
 * already holds a manifest of other params, model or shard (a database is one shard of
 * one study: use another --db). */
ScStatus sc_store_shard_mark (ScStore *store, const ScStoreModel *model, const char *params,
                              int index, int n, ScError *err);

/* One shard manifest as read and checked: its study readable, its series "shard" exactly
 * (I, N) with integers 0 <= I < N <= SC_STORE_MAX_SHARDS, and a "shards" member of its
 * params, when it has one, equal to N. The one reading of manifests: the merge and
 * `faithfulness --report` both use it, so a manifest one accepts the other accepts. */
typedef struct {
  int64_t study_id;
  char *params;
  uint8_t sha256[SC_SHA256_DIGEST_SIZE]; /* the model's */
  int index, n;
} ScStoreManifest;

/* @store's complete manifests, in id order, into *@out (free with
 * sc_store_manifests_free), their count in *@n_out (0: a plain store). SC_ERR_FORMAT names
 * the first that fails a check. */
ScStatus sc_store_read_shard_manifests (ScStore *store, ScStoreManifest **out, size_t *n_out,
                                        ScError *err);
void sc_store_manifests_free (ScStoreManifest *m, size_t n);

/* The largest line number a study of a sentence file may name. */
#define SC_STORE_MAX_LINE 2147483647
/* A study of one line of a sentence file ends its params with ,"line":L} (every dataset
 * study Saccade writes): SC_ERR_FORMAT, naming @path and @study_id, when L is not an
 * integer in 1 .. SC_STORE_MAX_LINE; SC_OK for params with no "line" member. The merge
 * refuses such a study and the report reads lines through it: one rule for both. */
ScStatus sc_store_check_line_param (const char *path, int64_t study_id, const char *params,
                                    ScError *err);

#ifdef __cplusplus
}
#endif
