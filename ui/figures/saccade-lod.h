/* saccade-lod.h — a level-of-detail pyramid of one attention head, so that a heatmap of
 * 8,192 tokens draws only what the screen can show.
 *
 * Level 0 is the head itself, kept in the type it came in: a float (n_rows, n_cols)
 * row-major matrix, or the store's causal layout — the fp16 lower triangle, row i holding
 * its i + 1 keys (docs/store.md) — which stays fp16 (67 MB at 8,192 tokens, where float
 * would be 268 MB). Level k + 1 is the 2 × 2 MAXIMUM of level k (odd sizes: the last row or
 * column pools what it has), so the level-k cell (I, J) is the largest weight among the
 * tokens [I·2^k, (I+1)·2^k) × [J·2^k, (J+1)·2^k). Max, not mean: attention is sparse, and a
 * mean of 8 × 8 cells turns one link of 0.9 into a dim 0.014; the max keeps every strong
 * link visible at every zoom (the widget's tooltip then names the exact cell and weight).
 * Max pooling picks values, never computes them, so every level keeps level 0's type and
 * every value in the pyramid is a value of the head. The levels of a causal head are
 * causal too (cell (I, J) has an unmasked token iff J <= I) and a triangle stays a
 * triangle: the whole pyramid is 4/3 of level 0 (89.5 MB at 8,192 tokens, fp16).
 *
 * A pyramid may also start from a coarse overview instead of the head (the store keeps an
 * S × S max-pooled overview per head, S <= 128): it draws at once while the full pyramid is
 * read and built; it has no exact values (saccade_lod_is_exact() is FALSE).
 *
 * Cells above the diagonal of a causal head are masked: never read, never pooled, never a
 * weight of 0. NaN cells are "no value": pooling skips them, a block of NaN only is NaN.
 * A head of a sliding-window layer stored as its band (docs/store.md, "Band heads") is
 * masked left of its band too (saccade_lod_set_window): cells wholly left of it are never
 * a value, at every level; its zeros there pool as zeros, which no drawn cell shows.
 *
 * Thread safety: building is a pure function of its arguments and may run in any thread
 * (saccade_lod_new_fp16_triangle_async() runs it in a GTask worker). A built pyramid is
 * immutable; its reference count is atomic, so one pyramid may be read by any number of
 * threads (the widget on the main thread, an export in a worker) at once.
 */
#pragma once

#include <gio/gio.h>
#include <stdint.h>

G_BEGIN_DECLS

typedef struct _SaccadeLod SaccadeLod;

/* One level of the pyramid: @rows x @cols cells, each covering @block x @block tokens (the
 * last row and column may cover fewer). @data holds the cells in @fp16 (IEEE binary16 bits,
 * host order) or float, row-major; @tri: the packed lower triangle (rows == cols, row i
 * holds cells 0 .. i, starting at i (i + 1) / 2), else full rows of @cols. */
typedef struct {
  int block;
  int rows, cols;
  gboolean fp16, tri;
  const void *data;
} SaccadeLodLevel;

/* Over the unmasked, finite cells of level 0 (of the overview when the pyramid has no
 * exact level): the smallest and largest value, the smallest positive one (INFINITY when
 * none) and the largest magnitude. What the figure's automatic colour range is made of. */
typedef struct {
  double lo, hi, min_pos, max_abs;
} SaccadeLodStats;

/* Converts IEEE binary16 bits @h to float, exactly (every half is a float): normals,
 * subnormals, ±0, ±inf; NaN stays NaN. ui/ does not see the engine, so this is its own
 * copy of engine/core/sc-math.h's sc_fp16_to_fp32(), through a table of all 65,536 values
 * made once. Thread-safe. */
float saccade_fp16_to_float (uint16_t h);

/* A pyramid over a copy of @values ((n_rows, n_cols) row-major, borrowed for the call).
 * @causal: cells with column > row are masked. Returns NULL with G_IO_ERROR_INVALID_ARGUMENT
 * for a shape < 1 or past 2^15 a side (the store's own limit on a head is lower), or
 * G_IO_ERROR_FAILED when memory runs out. Any thread. */
SaccadeLod *saccade_lod_new_float (const float *values, int n_rows, int n_cols,
                                   gboolean causal, GError **error);

/* A causal pyramid over @triangle: the fp16 lower triangle of an (n, n) head, row i holding
 * i + 1 values (n (n + 1) / 2 uint16 in host order, the store's layout), referenced, not
 * copied (g_bytes_new_take() a BLOB read from the store). Untrusted: @n outside 1 .. 2^15 or
 * a size that is not n (n + 1) / 2 values is G_IO_ERROR_INVALID_ARGUMENT naming both;
 * G_IO_ERROR_FAILED when memory runs out. Any thread; 8,192 tokens take about a second on
 * one core (docs/benchmarks.md), so the main thread uses the _async form. */
SaccadeLod *saccade_lod_new_fp16_triangle (GBytes *triangle, int n, GError **error);

/* saccade_lod_new_fp16_triangle() in a GTask worker; @triangle is referenced until done. */
void saccade_lod_new_fp16_triangle_async (GBytes *triangle, int n, GCancellable *cancellable,
                                          GAsyncReadyCallback callback, gpointer user_data);
SaccadeLod *saccade_lod_new_fp16_triangle_finish (GAsyncResult *result, GError **error);

/* The block side an overview of at most @max_side cells a side uses for @n tokens:
 * ceil(n / max_side); its side is then ceil(n / block). */
int saccade_lod_overview_block (int n, int max_side);

/* A pyramid without exact values, over a copy of @cells ((s_rows, s_cols) row-major): the
 * max-pooled overview of an (n_rows, n_cols) head in blocks of b = ceil(n_rows / s_rows)
 * tokens, cell (I, J) the max of tokens [I b, (I+1) b) x [J b, (J+1) b). The shapes must
 * agree (b the same both ways, s = ceil(n / b)), else G_IO_ERROR_INVALID_ARGUMENT. */
SaccadeLod *saccade_lod_new_overview (const float *cells, int s_rows, int s_cols, int n_rows,
                                      int n_cols, gboolean causal, GError **error);

SaccadeLod *saccade_lod_ref (SaccadeLod *lod);
void saccade_lod_unref (SaccadeLod *lod); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeLod, saccade_lod_unref)

/* The head's shape in tokens, and whether it is causal. */
int saccade_lod_get_n_rows (const SaccadeLod *lod);
int saccade_lod_get_n_cols (const SaccadeLod *lod);
gboolean saccade_lod_is_causal (const SaccadeLod *lod);

/* A band head: in row i the keys j <= i - @window are masked (like the upper triangle). Set
 * it on a new pyramid before it is shared (drawn or handed to another thread); 0: none. */
void saccade_lod_set_window (SaccadeLod *lod, int window);
int saccade_lod_get_window (const SaccadeLod *lod);

/* The first column of level-@level row @i that is not wholly left of the band (0 without
 * a window): the cells j < it are masked. */
int saccade_lod_band_start (const SaccadeLod *lod, int level, int i);

/* Whether cell (@i, @j) of @level is masked: above the diagonal of a causal head, or
 * wholly left of a band head's window. */
gboolean saccade_lod_is_masked (const SaccadeLod *lod, int level, int i, int j);

/* TRUE when level 0 is the head itself (block 1), FALSE for an overview. */
gboolean saccade_lod_is_exact (const SaccadeLod *lod);

/* Levels 0 .. n_levels - 1, the last one a single cell. Borrowed from @lod. */
int saccade_lod_get_n_levels (const SaccadeLod *lod);
const SaccadeLodLevel *saccade_lod_get_level (const SaccadeLod *lod, int level);

/* The bytes the pyramid holds (all levels; level 0 counted even when it is a referenced
 * GBytes). */
gsize saccade_lod_get_size (const SaccadeLod *lod);

void saccade_lod_get_stats (const SaccadeLod *lod, SaccadeLodStats *stats);

/* Cell (@i, @j) of @level as a float. FALSE (and *value untouched) for a masked cell or
 * one outside the level; TRUE with NaN for a cell without a value. */
gboolean saccade_lod_level_value (const SaccadeLod *lod, int level, int i, int j, float *value);

/* The level to draw at @tokens_per_pixel: the finest whose block is at least that many
 * tokens, so that every drawn cell is at least one pixel and scaling it up skips none (a
 * smaller block drawn smaller than a pixel would drop whole cells, strong links with
 * them); level 0 when @tokens_per_pixel <= 1, the top level when nothing is coarse enough. */
int saccade_lod_pick_level (const SaccadeLod *lod, double tokens_per_pixel);

/* The finest cell under the level-@level cell (@i, @j) holding its value: the head's own
 * (row, col) — or the overview block's first token when the pyramid is not exact, then
 * *exact is FALSE — found by descending the pyramid. FALSE for a masked, out-of-range or
 * NaN cell. */
gboolean saccade_lod_find_max (const SaccadeLod *lod, int level, int i, int j, int *row,
                               int *col, float *value, gboolean *exact);

G_END_DECLS
