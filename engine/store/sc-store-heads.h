/* sc-store-heads.h — reading a head without unpacking all of it to float, and a head's
 * overview image; what a capture will cost before it runs.
 *
 * A 8,192-token run of SmolLM2 holds 270 heads of 67 MB (fp16, lower triangle); as float32
 * one would be 268 MB. A window shows such runs from:
 *   - the overview (sc_store_read_overview): an S x S image, S = min (n_tokens, 128), each
 *     cell the largest stored value over a block of rows x keys — enough to draw the whole
 *     head, 32 KB; written by the capture (schema v3), computed on first read for runs
 *     stored before (and stored when the store is writable);
 *   - a block of rows (sc_store_read_head_rows), read with SQLite's incremental BLOB I/O:
 *     only the bytes of those rows leave the file;
 *   - the packed fp16 (sc_store_read_head_f16): the whole head at 2 bytes a value.
 * Every value read is checked as sc_store_read_head checks it (a probability in [0, 1]),
 * and every number of the rows it comes from (sc-store.h, "Trust").
 *
 * Thread safety: as the store (one thread per ScStore). Plain C17 + SQLite; no GLib.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/sc-store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest overview side. 64: the Model page's thumbnails are at most 64 cells a side,
 * and the Heatmap page shows the overview only for the moment until the head's pyramid is
 * built; 64^2 fp16 is 8 KiB, so eight share a 64 KiB page (a 128-cell overview took a page
 * of its own: 17.7 MB per 270-head run, +25 % at 512 tokens; 64 cells: 2.2 MB). */
#define SC_STORE_OVERVIEW_MAX 64u

/* Overview blocks are uniform: b = ceil (n / SC_STORE_OVERVIEW_MAX) tokens a side (the
 * last block may be shorter), and the side S = ceil (n / b) <= SC_STORE_OVERVIEW_MAX —
 * the coarse level of the window's pyramid (ui/figures/saccade-lod.h) is the same grid. */
uint32_t sc_store_overview_block (uint32_t n);
uint32_t sc_store_overview_size (uint32_t n);

/* An overview image. Cell (a, b) covers rows [a B, min (n, (a + 1) B)), B =
 * sc_store_overview_block (n), and the keys likewise (n = n_tokens);
 * its value is the largest stored fp16 value there (exactly: the maximum of fp16 values is
 * one). In a causal head the cells with b > a lie wholly above the diagonal: they are 0
 * and masked (sc_store_overview_masked); the cells with b == a straddle it. */
typedef struct {
  uint32_t size;             /* S */
  uint32_t n_tokens;         /* the run's n */
  bool causal;               /* the head is causal: cells above the diagonal are masked */
  uint32_t window;           /* the head is a band of this window (ScStoreHead.window): cells
                              * wholly left of it are masked too; 0: none */
  bool computed;             /* not in the store: computed from the head on this read */
  bool stored;               /* ... and written to the store (writable, no open capture) */
  float *values;             /* (size, size) row-major, each in [0, 1]; owned */
} ScStoreOverview;

/* The packed fp16 of a head, as the store holds it (docs/store.md, "The attention BLOB"). */
typedef struct {
  uint32_t n_query, n_key;
  bool causal;               /* values holds the lower triangle: row i starts at i(i+1)/2 */
  bool sparse;               /* stored sparse: dropped keys are 0 here */
  uint32_t window;           /* stored as a band (ScStoreHead.window): expanded to the lower
                              * triangle here, 0 left of the band; 0: not a band */
  size_t n_values;           /* n(n+1)/2 causal, n_query * n_key full */
  uint16_t *values;          /* IEEE half floats, host order; owned */
} ScStoreHeadF16;

/* Head (@layer, @head)'s overview. Errors as sc_store_read_head (SC_ERR_NOT_FOUND for a
 * missing run, a head outside the model or not kept); SC_ERR_FORMAT for an overview row
 * whose size is not sc_store_overview_size (n_tokens), whose BLOB has the wrong length, or holds a value
 * outside [0, 1] or a non-zero masked cell. A run without one (stored before schema v3)
 * gets it computed from its head (read in blocks of rows, at most ~8 MB of floats at a
 * time) and, on a writable store with no open capture, stored (without waiting for
 * another writer; failing to store is not an error: stored = false). */
ScStatus sc_store_read_overview (ScStore *store, int64_t run_id, int layer, int head,
                                 ScStoreOverview *out, ScError *err);
void sc_store_overview_clear (ScStoreOverview *ov); /* NULL is a no-op */

/* Whether cell (@a, @b) is masked: a causal head's cell wholly above the diagonal, b > a,
 * or a band head's cell wholly left of its band (every key of block b < every row of
 * block a, less window - 1). */
bool sc_store_overview_masked (const ScStoreOverview *ov, uint32_t a, uint32_t b);

/* The first row (or key) of block @a of the @size = sc_store_overview_size (n) blocks
 * over @n tokens: min (n, a B); @a == size gives n. */
uint32_t sc_store_overview_start (uint32_t n, uint32_t size, uint32_t a);

/* The head's values as fp16, without converting them to float: n(n+1)/2 halves for a causal
 * head (a sparse one is expanded, its dropped keys 0), 2 bytes a value. Errors as
 * sc_store_read_head. */
ScStatus sc_store_read_head_f16 (ScStore *store, int64_t run_id, int layer, int head,
                                 ScStoreHeadF16 *out, ScError *err);
void sc_store_head_f16_clear (ScStoreHeadF16 *h); /* NULL is a no-op */

/* Rows [@q0, @q1) of the head as float into @out ((q1 - q0) x n_tokens, row-major,
 * caller-owned; zeros above the diagonal of a causal head and where a sparse head dropped
 * keys), reading only those rows' bytes (incremental BLOB I/O). @dropped (may be NULL)
 * receives (q1 - q0) floats: each row's dropped mass, 0 for a dense head. Requires 0 <= q0
 * < q1 <= n_tokens (else SC_ERR_INVALID_ARG naming the run's length); other errors as
 * sc_store_read_head. On error @out's contents are undefined. */
ScStatus sc_store_read_head_rows (ScStore *store, int64_t run_id, int layer, int head,
                                  uint32_t q0, uint32_t q1, float *out, float *dropped,
                                  ScError *err);

/* What a capture of @n_tokens tokens keeping @n_kept of a model's @n_layers x @n_heads
 * heads adds to a store, in bytes, before it runs: causal fp16 heads (n(n+1) bytes each),
 * their overviews and scores, the tokens, and SQLite's pages (docs/store.md, "Bytes per
 * run", compares it with measured runs). @sparse: the sparse form stores a head sparse
 * only when that is smaller than dense, so its dense size is the upper bound returned (the
 * real size depends on the attention; measured ratios in docs/store.md). 0 for no heads
 * or no tokens. */
uint64_t sc_store_estimate_bytes (uint32_t n_tokens, uint32_t n_layers, uint32_t n_heads,
                                  uint32_t n_kept, bool sparse);

#ifdef __cplusplus
}
#endif
