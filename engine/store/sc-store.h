/* sc-store.h — the capture store: every attention head of every run, in one SQLite file.
 *
 * One database holds many runs of many models. A run is one forward pass over one text:
 * its model (identified by the SHA-256 of the model file), the text, the tokens with their
 * byte pieces, and one fp16 BLOB per (layer, head) holding the attention probabilities
 * row-major — causal heads packed as the lower triangle (row i holds i + 1 values).
 * docs/store.md describes the schema (v1 to v3), the file format rules and the measured
 * costs.
 *
 * Writing: sc_store_capture_begin() opens a capture, whose observer (an ScObserver for
 * sc_forward) converts each head to fp16 and hands it to a writer thread through a bounded
 * queue, so writing overlaps the forward pass; sc_store_capture_commit() waits for the
 * writer, commits and returns the run id. A run is written in one transaction: readers —
 * in this process or another — see a run whole or not at all, and a crash (even SIGKILL)
 * loses only the run being written. After each commit the writer thread copies the WAL
 * into the database file (a checkpoint) while the caller computes the next run.
 *
 * Reading: the list of runs, a run's tokens, one head unpacked to float (sc-store-heads.h
 * reads less: a block of rows, the packed fp16, an overview image). Only complete runs
 * are visible.
 *
 * Schema v3 (docs/store.md, "Schema v3"): a run may keep only chosen heads
 * (ScStoreRunDesc.keep), store its heads sparse (sparse_eps: per row, the fewest keys
 * holding all but eps of the mass), and a head too large for one SQLite BLOB is stored as
 * row blocks; each kept head also gets a small overview image. Schema v4 ("Schema v4"):
 * a run records which layers are local (a sliding window, ScStoreModel.sliding_window) and
 * stores their heads as bands, row i keeping keys i - w + 1..i; readers return the same
 * dense view with ScStoreHead.window marking the masked keys. Deleting a run removes its
 * tokens and heads and gives the space back to the file system.
 *
 * Errors (ScError messages always name the database file):
 *   SC_ERR_DB           SQLite failed: not a database, corrupt, disk full, locked by another
 *                       writer past the busy timeout, I/O error (SQLite's text included);
 *   SC_ERR_IO           a problem we detect before SQLite does: the file or its folder is
 *                       not writable, the model file changed while it was hashed;
 *   SC_ERR_UNSUPPORTED  the database was created by a newer Saccade (higher schema version);
 *   SC_ERR_NOT_FOUND    no such run / head, or (read-only opening) no such database file;
 *   SC_ERR_INVALID_ARG  out-of-contract calls (writing through a read-only store, a head of
 *                       the wrong shape, a run id <= 0 ...);
 *   SC_ERR_FORMAT       the file's schema is not the one this version writes (an unknown
 *                       table, index, view or trigger; a changed column), or a row breaks
 *                       the store's invariants (the contract below); the message names the
 *                       table, the row and the value, and says what the user can do;
 *   SC_ERR_RANGE        the store has used up its run ids (AUTOINCREMENT at 2^63 - 1);
 *   SC_ERR_NOMEM.
 * Nothing here aborts on a bad file, and a failed open never modifies the file; a
 * read-only store never writes to it at all.
 *
 * Trust (docs/store.md, "Trust"): a database is untrusted input, like a model file. Every
 * connection runs SQLite's defensive mode with triggers and views off and an untrusted
 * schema; opening compares the file's schema, object by object, with what this version
 * writes and refuses anything else; the reading functions check every number against the
 * others before using it. What they return therefore holds these invariants, which
 * callers may rely on without checking again:
 *
 *   ScStoreRunInfo (sc_store_list_runs, sc_store_get_run):
 *     1 <= n_layers <= SC_STORE_MAX_LAYERS, 1 <= n_heads <= SC_STORE_MAX_HEADS,
 *     n_layers * n_heads <= SC_STORE_MAX_RUN_HEADS, 1 <= n_kv_heads <= n_heads and
 *     n_heads % n_kv_heads == 0, 1 <= head_dim <= SC_STORE_MAX_HEAD_DIM,
 *     1 <= n_tokens <= SC_STORE_MAX_TOKENS; id >= 1, model_id >= 1;
 *     0 <= created_ms <= SC_STORE_MAX_TIME_MS; forward_s and capture_s finite (< 0 only as
 *     "unknown", exactly -1); attention_bytes at most what n_layers x n_heads full heads
 *     take; model_sha256 64 hex digits; the strings non-NULL, NUL-terminated, at most
 *     SC_STORE_MAX_NAME_BYTES bytes (not necessarily UTF-8: a path need not be); the run
 *     has exactly one token row per position 0..n_tokens-1 and exactly the heads it kept
 *     (every (layer < n_layers, head < n_heads) when kept is NULL; else 1 <= n_kept <=
 *     n_layers * n_heads bits set in kept, no bit past the last head); sparse_eps is 0
 *     (dense) or in (0, 1).
 *   ScStoreToken array (sc_store_read_tokens): exactly n_tokens entries, in position
 *     order, 0 <= id < the model's vocabulary size (<= INT32_MAX), len <=
 *     SC_STORE_MAX_PIECE_BYTES, piece non-NULL.
 *   ScStoreHead (sc_store_read_head): n_query == n_key == the run's n_tokens, probs holds
 *     n_query * n_key floats, every one in [0, 1] (no NaN, no infinity), zeros above the
 *     diagonal when causal; window 0 or 0 < window < n_query with zeros left of the band
 *     (keys j < i - window + 1) and window the layer's recorded window; dropped NULL or
 *     n_query floats in [0, 1]. ScStoreRunInfo.windows: NULL or n_layers entries, each
 *     0 or in [1, INT32_MAX]. The same holds for
 *     what sc-store-heads.h reads (rows, fp16 heads, overviews).
 * Anything else is SC_ERR_FORMAT, with the table, row and value in the message. Nothing
 * reads past a buffer or divides by a stored number, and no allocation is larger than the
 * rows the store actually holds could need.
 *
 * Thread safety: an ScStore is used by one thread at a time (the capture's observer is
 * called by the thread running sc_forward, which must be that thread). Any number of
 * stores — in this process or others — may open the same file at once: open one per
 * thread (say, a worker thread capturing and the GUI thread reading).
 *
 * Plain C17 + SQLite + pthreads; no GLib.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sc-error.h"
#include "forward/sc-forward.h"
#include "model/sc-model.h"
#include "core/sc-sha256.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The schema version this build creates and the newest it can read (PRAGMA user_version). */
#define SC_STORE_SCHEMA_VERSION 6

/* How long a writer waits for another process's write transaction before giving up
 * (SQLite's busy timeout). A capture holds the write lock for its whole forward pass, so
 * this is sized for "another capture is running", not for a momentary lock. */
#define SC_STORE_DEFAULT_BUSY_MS 60000

/* Ceilings. A store that claims more is refused (SC_ERR_FORMAT) before any number from
 * it sizes a buffer, and a capture that would need more is refused before it starts; with
 * these, every product below (tokens^2 x heads x 4 bytes) fits in 64 bits with room to
 * spare. The reasons (docs/store.md, "Trust"):
 *   tokens: a (n, n) head of 2^19 tokens is 2^38 fp16 values, far past SQLite's 1 GB
 *           BLOB limit and any run we can compute;
 *   layers, heads: the largest published models have 126 layers and 128 query heads
 *           (16 128 heads); these leave a factor 4 to 32;
 *   head_dim: 2^16, 256x the common 64-256;
 *   names (model name, architecture, path, backend): 4 KiB, PATH_MAX on Linux;
 *   a token's piece: 64 KiB (a BPE piece is tens of bytes);
 *   created: the end of the year 9999, in Unix milliseconds. */
#define SC_STORE_MAX_TOKENS (1u << 19)
#define SC_STORE_MAX_LAYERS 4096u
#define SC_STORE_MAX_HEADS 4096u
#define SC_STORE_MAX_RUN_HEADS 65536u
#define SC_STORE_MAX_HEAD_DIM 65536u
#define SC_STORE_MAX_NAME_BYTES 4096u
#define SC_STORE_MAX_PIECE_BYTES 65536u
#define SC_STORE_MAX_TIME_MS 253402300799999LL

/* sc_store_list_runs() returns at most this many bytes of each run's text (text_truncated
 * says it was cut): listing reads the first page of a huge text cell, not all of it. */
#define SC_STORE_LIST_TEXT_BYTES 4096u

/* The writer queue's default budget: enough fp16 heads to absorb a checkpoint or a slow
 * disk for a few layers without stalling the forward pass. */
#define SC_STORE_DEFAULT_QUEUE_BYTES (32u << 20)

typedef struct ScStore ScStore;
typedef struct ScStoreCapture ScStoreCapture;

typedef struct {
  bool writable;            /* create the file, migrate the schema, store and delete runs */
  int busy_timeout_ms;      /* 0: SC_STORE_DEFAULT_BUSY_MS; < 0: do not wait at all */
  uint64_t max_bytes;       /* 0: unlimited; else the database may not grow past about this
                             * size (a quota; it is also how the tests fill the disk) */
  size_t queue_bytes;       /* 0: SC_STORE_DEFAULT_QUEUE_BYTES */
  uint64_t max_blob_bytes;  /* 0: SQLite's length limit (SQLITE_LIMIT_LENGTH, 1e9 bytes by
                             * default); else a lower one, set on the writer's connection
                             * with sqlite3_limit: heads whose BLOB would pass it are stored
                             * as row blocks (for the tests, which force blocks with small
                             * runs; must be at least SC_STORE_MIN_BLOB_BYTES) */
  bool compress_heads;      /* store dense heads compressed (schema v5,
                             * attention_z: lossless, zstd on byte planes of row blocks;
                             * docs/store.md, "Compressed heads"); false: as fp16 BLOBs */
} ScStoreOptions;

/* The rounded form's mantissa bits: 1..9 (fp16 keeps 10). */
#define SC_STORE_ROUND_BITS_MAX 9u

/* The largest relative error of a value stored with @round_bits mantissa bits (rounded to
 * nearest): 2^-(round_bits + 1); 0 for 0 (not rounded). */
double sc_store_round_relative_error (uint32_t round_bits);

/* The smallest max_blob_bytes: a part row's other columns and one row of a head must fit
 * beside each other (a row of 2^19 fp16 values is 1 MiB; the tests use small runs). */
#define SC_STORE_MIN_BLOB_BYTES 65536u

/* The sparse form's default EPS (saccade capture --sparse): per row, the dropped keys
 * hold at most 0.1 % of the attention. */
#define SC_STORE_DEFAULT_SPARSE_EPS 1e-3

/* A model's identity as the store records it. The strings are borrowed for the call that
 * takes the struct. */
typedef struct {
  const char *path;         /* where the file was found (the store keeps the latest path) */
  uint64_t file_size;
  uint8_t sha256[SC_SHA256_DIGEST_SIZE]; /* of the whole file: the identity */
  const char *name;         /* general.name */
  const char *arch;         /* general.architecture */
  uint32_t n_layers, n_heads, n_kv_heads, head_dim, n_embd, n_vocab, n_ctx_train;
  /* Sliding-window attention, as ScModelInfo has it (0, 0: every layer global). The
   * capture records each layer's window, sc_model_layer_window() of these, in the run
   * (schema v4) and stores heads of local layers as their band (docs/store.md, "Band
   * heads"). Not part of the model's identity. */
  uint32_t sliding_window, swa_pattern;
} ScStoreModel;

/* A token and the bytes it stands for. @piece may hold any bytes (byte-level BPE pieces are
 * often not valid UTF-8 on their own) and is not NUL-terminated. */
typedef struct {
  int32_t id;
  uint32_t len;
  const uint8_t *piece;
} ScStoreToken;

/* What a run is: how its tokens came to be (runs.kind, schema v5; docs/store.md). */
typedef enum {
  SC_RUN_KIND_UNKNOWN = 0, /* not said: a run stored before schema v5 */
  SC_RUN_KIND_TEXT,        /* a text, typed or read from a file, tokenized */
  SC_RUN_KIND_CHAT,        /* a text in the model's chat template */
  SC_RUN_KIND_GENERATED,   /* a prompt (text or chat) and the tokens the model generated
                            * after it; n_prompt says where they start */
  SC_RUN_KIND_IDS,         /* token ids no text was tokenized to: the induction detector's
                            * repeated random tokens, `capture --ids` */
  SC_RUN_N_KINDS
} ScRunKind;

/* "text", "chat", "generated", "ids" (runs.kind); NULL for SC_RUN_KIND_UNKNOWN. */
const char *sc_run_kind_id (ScRunKind kind);

/* What a capture is about. Everything is borrowed for the sc_store_capture_begin() call
 * only (the capture copies what it needs). */
typedef struct {
  const ScStoreModel *model;
  const char *text;          /* the input, any bytes */
  size_t text_len;
  const ScStoreToken *tokens; /* (n_tokens) */
  size_t n_tokens;
  const char *backend;       /* e.g. "cpu", "cpu-ref" */
  const uint8_t *keep;       /* (n_layers * n_heads), index layer * n_heads + head: nonzero
                              * for the heads to store, at least one; NULL: every head */
  double sparse_eps;         /* 0: dense heads; in (0, 1): the sparse form (docs/store.md) */
  ScRunKind kind;            /* SC_RUN_KIND_UNKNOWN: not said (stored as NULL) */
  uint32_t n_prompt;         /* GENERATED: the prompt's tokens, 0 < n_prompt < n_tokens;
                              * other kinds: 0 */
  /* The rounded form (schema v6; docs/store.md, "Rounded heads"): a stated error traded for
   * bytes. Both 0: every value stored as its fp16 (the lossless default). Else the store
   * must compress heads (ScStoreOptions.compress_heads) and the run must be dense; each
   * value of a compressed head is stored rounded to round_bits mantissa bits after its
   * leading one (1..SC_STORE_ROUND_BITS_MAX; 0: not rounded), at most
   * sc_store_round_relative_error (round_bits) of its fp16 value away, and a value whose
   * fp16 is below zero_below (0, or in (0, 1)) as 0. Statistics and overviews are of the
   * values before rounding. */
  uint32_t round_bits;
  double zero_below;
} ScStoreRunDesc;

/* One run as listed. Strings are owned by the struct (sc_store_run_info_clear()). */
typedef struct {
  int64_t id;
  int64_t model_id;
  char *model_name;
  char *model_arch;
  char *model_path;
  char model_sha256[SC_SHA256_HEX_SIZE];
  uint32_t n_layers, n_heads, n_kv_heads, head_dim; /* the model's */
  uint32_t n_vocab;          /* the model's vocabulary, 1..INT32_MAX: with the above, what a
                              * stored study of the run is read against when another model
                              * is loaded */
  uint32_t n_kept;           /* heads the run kept (n_layers * n_heads when kept is NULL) */
  uint8_t *kept;             /* NULL: every head; else a bitmap, bit layer * n_heads + head
                              * of byte bit / 8, least significant first; owned. Ask with
                              * sc_store_run_has_head() */
  double sparse_eps;         /* 0: dense; else the EPS of the run's sparse heads */
  uint32_t round_bits;       /* 0: not rounded; else the rounded form's mantissa bits */
  double zero_below;         /* 0: none; else values below it were stored as 0 */
  ScRunKind kind;            /* UNKNOWN for a run stored before schema v5, or one that did
                              * not say */
  uint32_t n_prompt;         /* GENERATED: the prompt's tokens; else 0 */
  uint32_t *windows;         /* NULL: every layer global (a model without sliding windows, or
                              * a run stored before schema v4); else (n_layers) each layer's
                              * attention window, 0 for a global layer, a local layer's
                              * query i seeing keys i - w + 1..i; owned. Ask with
                              * sc_store_run_layer_window() */
  int64_t created_ms;        /* Unix time, milliseconds */
  char *backend;
  uint32_t n_tokens;
  double forward_s;          /* the forward pass as the caller timed it; < 0: unknown */
  double capture_s;          /* begin to commit */
  uint64_t attention_bytes;  /* the BLOBs' total size */
  char *text;                /* NUL added after text_len bytes; may contain NULs */
  size_t text_len;
  bool text_truncated;       /* sc_store_list_runs() only: text holds the first
                              * SC_STORE_LIST_TEXT_BYTES bytes or less (cut before a UTF-8
                              * sequence it would split), sc_store_get_run() has it all */
} ScStoreRunInfo;

/* One head, unpacked. */
typedef struct {
  uint32_t n_query, n_key;
  bool causal;               /* stored as the lower triangle; entries above the diagonal are 0 */
  uint32_t window;           /* 0: none; else (0 < window < n) the head is its layer's band:
                              * in row i the keys j < i - window + 1 are masked, like the
                              * upper triangle (0 in probs, never attention) */
  float *probs;              /* (n_query, n_key) row-major; owned (sc_store_head_clear()) */
  float *dropped;            /* sparse heads: (n_query), the mass each row dropped (stored as
                              * fp32; the row's kept values plus it sum to 1 within fp16
                              * rounding); NULL for a dense head. Owned */
} ScStoreHead;

/* ------------------------------------------------------------------------------------ */
/* Opening                                                                               */

/* Opens (and with @opt->writable creates or migrates) the store at @path. @opt may be
 * NULL: read-only, default timeouts. A read-only store opens files whose folder we cannot
 * write to as well (docs/store.md says how). Errors: see the top of this file; a missing
 * file without @opt->writable is SC_ERR_NOT_FOUND. On error *@out is NULL and the file is
 * as it was. */
ScStatus sc_store_open (const char *path, const ScStoreOptions *opt, ScStore **out,
                        ScError *err);

/* Waits for the writer thread (an open capture is aborted), closes the connections. NULL is
 * a no-op. */
void sc_store_close (ScStore *store);

const char *sc_store_path (const ScStore *store);
int sc_store_schema_version (const ScStore *store);
bool sc_store_is_writable (const ScStore *store);

/* PRAGMA integrity_check over the whole file. SC_OK when SQLite reports "ok"; else SC_ERR_DB
 * with SQLite's first complaint. Reads the whole file: slow on big stores. */
ScStatus sc_store_check (ScStore *store, ScError *err);

/* ------------------------------------------------------------------------------------ */
/* Model identity                                                                        */

/* Fills @out from @model's description and the SHA-256 of the file at @path, which must be
 * the file @model was loaded from (its size is checked against the loaded one: SC_ERR_IO if
 * it changed). Hashes the whole file (about 0.1 s per 100 MB with SHA-NI). The strings in
 * @out borrow from @model and @path. */
ScStatus sc_store_model_identify (const ScModel *model, const char *path, ScStoreModel *out,
                                  ScError *err);

/* The id of the model with this fingerprint, or SC_ERR_NOT_FOUND. */
ScStatus sc_store_find_model (ScStore *store, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
                              int64_t *model_id, ScError *err);

/* ------------------------------------------------------------------------------------ */
/* Capturing                                                                             */

/* Starts a run. The store must be writable and have no other capture open. The run has
 * @desc->model->n_layers x n_heads heads, each (n_tokens, n_tokens); every head it keeps
 * (@desc->keep) must be added before the commit; the others are ignored when added. Starts the
 * writer thread on first use. Errors: SC_ERR_INVALID_ARG (read-only store, another capture
 * open, no tokens, a model with no heads), SC_ERR_NOMEM. Errors from the database (a lock held
 * too long, a full disk) surface in sc_store_capture_add_head() and sc_store_capture_commit(). */
ScStatus sc_store_capture_begin (ScStore *store, const ScStoreRunDesc *desc,
                                 ScStoreCapture **out, ScError *err);

/* Converts one head (@probs: (n_query, n_key) row-major, borrowed for the call) to fp16 and
 * queues it; blocks while the queue is full. A square head whose entries above the diagonal
 * are all exactly 0 is stored as its lower triangle, any other as a full matrix; in a
 * sparse run, a head whose sparse form is smaller than that (docs/store.md) is stored
 * sparse. A head the run does not keep is checked as any other and then ignored (SC_OK). Errors:
 * SC_ERR_INVALID_ARG (layer/head out of range, a head added twice, n_query or n_key not
 * n_tokens), or the writer's error once it has failed (then every later call fails too). */
ScStatus sc_store_capture_add_head (ScStoreCapture *cap, int layer, int head,
                                    const float *probs, int n_query, int n_key, ScError *err);

/* The same for a head already in fp16 (a GPU's capture, ScObserver.observe_f16): @values in
 * the store's layout, the lower triangle when @packed (row i at i(i+1)/2), else (n_query,
 * n_key) row-major. The stored bytes are exactly what sc_store_capture_add_head() stores
 * for the floats these fp16 values stand for; a packed head of a dense run is copied as
 * it is (no conversion), any other goes through floats. Same errors. */
ScStatus sc_store_capture_add_head_f16 (ScStoreCapture *cap, int layer, int head,
                                        const uint16_t *values, bool packed, int n_query,
                                        int n_key, ScError *err);

/* An observer for sc_forward() that adds every head (observe, and observe_f16 for a GPU); observe() returns false (cancelling the
 * forward pass) once adding fails — sc_store_capture_commit() then reports why. */
ScObserver sc_store_capture_observer (ScStoreCapture *cap);

/* The first error the capture met so far (SC_OK if none); copies it into @err. */
ScStatus sc_store_capture_status (const ScStoreCapture *cap, ScError *err);

/* Waits for the writer to store every queued head, then commits the run (durably: the WAL
 * is synced) and frees @cap. @forward_s is recorded as the run's forward-pass time (< 0:
 * unknown). On success *@run_id (may be NULL) is the new run's id. On any failure — the
 * writer's (SC_ERR_DB: disk full, locked, ...) or missing heads (SC_ERR_INVALID_ARG) — the
 * run is rolled back, every earlier run is intact, and @cap is freed all the same. */
ScStatus sc_store_capture_commit (ScStoreCapture *cap, double forward_s, int64_t *run_id,
                                  ScError *err);

/* Rolls the run back and frees @cap. NULL is a no-op. */
void sc_store_capture_abort (ScStoreCapture *cap);

/* ------------------------------------------------------------------------------------ */
/* Reading                                                                               */

/* Every complete run, oldest first. *@runs is an array of *@n_runs entries (NULL when there
 * are none); free it with sc_store_run_list_free(). Each text is cut to
 * SC_STORE_LIST_TEXT_BYTES (text_truncated set). Every run is checked (the contract at the
 * top): one damaged run fails the whole list with SC_ERR_FORMAT naming it. */
ScStatus sc_store_list_runs (ScStore *store, ScStoreRunInfo **runs, size_t *n_runs,
                             ScError *err);
void sc_store_run_list_free (ScStoreRunInfo *runs, size_t n_runs);

/* One complete run, with its whole text. SC_ERR_NOT_FOUND when there is none with @run_id,
 * SC_ERR_FORMAT when it breaks the contract at the top. */
ScStatus sc_store_get_run (ScStore *store, int64_t run_id, ScStoreRunInfo *out, ScError *err);
void sc_store_run_info_clear (ScStoreRunInfo *info); /* frees the strings; NULL is a no-op */

/* Whether run @info kept head (@layer, @head): false outside the model's shape. */
bool sc_store_run_has_head (const ScStoreRunInfo *info, int layer, int head);

/* Layer @layer's attention window in run @info: 0 for a global layer (and outside the
 * model), else w: query i sees keys i - w + 1..i. A local layer's heads are stored as
 * their band when w < n_tokens (ScStoreHead.window); shorter runs' heads are causal. */
uint32_t sc_store_run_layer_window (const ScStoreRunInfo *info, int layer);

/* A run's tokens in position order: *@tokens is one allocation holding the array and the
 * pieces (free it with sc_store_tokens_free()); *@n_tokens is the run's n_tokens. The run
 * and every token row are checked first (SC_ERR_FORMAT: a missing, extra or misplaced
 * position, a piece that is not a BLOB or is too long, an id outside the vocabulary). */
ScStatus sc_store_read_tokens (ScStore *store, int64_t run_id, ScStoreToken **tokens,
                               size_t *n_tokens, ScError *err);
void sc_store_tokens_free (ScStoreToken *tokens); /* NULL is a no-op */

/* One head of a complete run, unpacked to float (each value the stored fp16 exactly; zeros
 * above the diagonal of a causal head and for the keys a sparse head dropped, whose mass per
 * row is in out->dropped). Holds n_tokens^2 floats: for long runs read rows (sc-store-heads.h).
 * SC_ERR_NOT_FOUND for a missing run, a layer/head outside the run's model, or a head the run
 * did not keep ("run N did not keep layer L head H"); SC_ERR_FORMAT for a run that breaks the
 * contract, a head whose row does not match its run (shape, layout, dtype, BLOB length) or that
 * holds a value outside [0, 1], or a head of the run that is not there. */
ScStatus sc_store_read_head (ScStore *store, int64_t run_id, int layer, int head,
                             ScStoreHead *out, ScError *err);
void sc_store_head_clear (ScStoreHead *head); /* NULL is a no-op */

/* ------------------------------------------------------------------------------------ */
/* Deleting                                                                              */

/* Deletes a run with its tokens and heads (and the scores and studies that refer to it),
 * then returns the freed pages to the file system (incremental vacuum + checkpoint). The
 * store must be writable. SC_ERR_NOT_FOUND when there is no run @run_id. Waits (up to the
 * busy timeout) while another connection writes — another process's capture, or this
 * store's own open capture, which holds the write lock until its commit. */
ScStatus sc_store_delete_run (ScStore *store, int64_t run_id, ScError *err);

/* ------------------------------------------------------------------------------------ */
/* Token helpers                                                                         */

/* The pieces of @ids as @tok decodes them (sc_token_to_bytes with special tokens shown),
 * in one allocation (free with sc_store_tokens_free()). */
ScStatus sc_store_tokens_from_ids (const ScTokenizer *tok, const int32_t *ids, size_t n_ids,
                                   ScStoreToken **tokens, ScError *err);

#ifdef __cplusplus
}
#endif
