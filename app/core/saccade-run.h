/* saccade-run.h — stored runs as the window sees them, and the background jobs that read
 * and delete them.
 *
 * The window never touches the capture store on its own thread: listing, loading and
 * deleting runs are GTasks that open their own ScStore connection in a worker thread
 * (engine/store/sc-store.h allows one store per thread on the same file) and hand back plain
 * data. SaccadeRunItem is one row of the sidebar; SaccadeRun is one run as the window
 * holds it — token labels, the per-head metrics of docs/metrics.md, each head's small
 * overview, and, for a run short enough (RESIDENT_MAX_BYTES in saccade-run.c), every
 * head's matrix. A longer run (thousands of tokens: 270 heads of 8,192 tokens are 72 GB as
 * float) is "not resident": its heads stay in the store and are read one at a time, or a
 * range of rows at a time, by whoever needs them (saccade_run_read_head(),
 * saccade_run_read_rows(), in a worker thread), so the window opens any run the store
 * holds.
 *
 * Not here: capturing a new run (saccade-capture-task.c) and drawing (ui/).
 */
#pragma once

#include <gio/gio.h>

#include "engine/analysis/sc-head-stats.h"
#include "engine/store/sc-store.h"

G_BEGIN_DECLS

/* ------------------------------------------------------------------------------------ */
/* One row of the runs list                                                              */

#define SACCADE_TYPE_RUN_ITEM (saccade_run_item_get_type ())
G_DECLARE_FINAL_TYPE (SaccadeRunItem, saccade_run_item, SACCADE, RUN_ITEM, GObject)

gint64 saccade_run_item_get_id (SaccadeRunItem *self);
/* The run's text, readable (control bytes and invalid UTF-8 escaped), one line, its first
 * SACCADE_RUN_TITLE_CHARS characters (then "…"): a row's width, never a long text. */
#define SACCADE_RUN_TITLE_CHARS 120
const char *saccade_run_item_get_title (SaccadeRunItem *self);
/* "SmolLM2 135M Instruct · 12 tok · 0.4 s": the model, size and time (translated). */
const char *saccade_run_item_get_subtitle (SaccadeRunItem *self);
/* The hover text: the run's first SACCADE_RUN_TOOLTIP_CHARS characters (then "…"), then
 * the subtitle and the run's id. */
#define SACCADE_RUN_TOOLTIP_CHARS 200
const char *saccade_run_item_get_tooltip (SaccadeRunItem *self);
const char *saccade_run_item_get_model_name (SaccadeRunItem *self);
guint saccade_run_item_get_n_tokens (SaccadeRunItem *self);
/* Lower-case title and model name, for the search filter. */
gboolean saccade_run_item_matches (SaccadeRunItem *self, const char *casefolded_needle);
/* A row for the run @r describes (its strings copied). */
SaccadeRunItem *saccade_run_item_new (const ScStoreRunInfo *r);

/* At this many tokens a text run is a "long text" rather than a "sentence". */
#define SACCADE_LONG_TEXT_TOKENS 512

/* What @r is, in a word or three for the runs list and `saccade runs`: "sentence", "long
 * text" (SACCADE_LONG_TEXT_TOKENS tokens or more), "chat", "prompt + 4 generated",
 * "induction sequence" (token ids, the Induction page's repeated random tokens); for a run
 * stored before the store said (runs.kind NULL) "long text" by its length, else NULL.
 * Caller frees. */
char *saccade_run_kind_label (const ScStoreRunInfo *r);

/* The stated error of a run stored in the rounded form (ScStoreRunInfo.round_bits,
 * zero_below), in a sentence for `saccade runs`/`show` and the window, e.g. "rounded:
 * each value within 3.12 % of its fp16, values below 6.1e-05 stored as 0"; NULL for a
 * run stored as fp16. Caller frees. */
char *saccade_run_rounding_label (guint32 round_bits, double zero_below);

/* ------------------------------------------------------------------------------------ */
/* One run in full                                                                       */

/* The per-head metrics a run carries (definitions in docs/metrics.md): every engine head
 * metric, in the engine's order (SaccadeMetric m is ScHeadMetric m; checked by a static
 * assertion in saccade-run.c). The GSettings "metric" key stores the ids, not the values. */
typedef enum {
  SACCADE_METRIC_ENTROPY,
  SACCADE_METRIC_ENTROPY_NORM,
  SACCADE_METRIC_DISTANCE,
  SACCADE_METRIC_CONFIDENCE,
  SACCADE_METRIC_SINK,
  SACCADE_METRIC_SINK_K,
  SACCADE_METRIC_PREVIOUS_TOKEN,
  SACCADE_METRIC_SELF,
  SACCADE_METRIC_LAST_ENTROPY,
} SaccadeMetric;

#define SACCADE_N_METRICS 9

typedef struct {
  gint64 id;
  char *text;           /* readable form of the run's text (see SaccadeRunItem) */
  char *model_name;
  char model_sha256[SC_SHA256_HEX_SIZE]; /* the model file's, lower-case hex: the identity a
                                          * study of the run must be computed with */
  char *backend;
  int n_layers, n_heads, n_kv_heads;
  int n;                /* tokens */
  char **labels;        /* (n) display labels (saccade_token_label), NULL-terminated */
  ScStoreToken *tokens; /* (n) the stored pieces, raw bytes (data exports need them) */
  char *db_path;        /* the store the run was read from (its heads are read from there) */
  gboolean resident;    /* every head is in @heads; FALSE: @heads is NULL (a long run) */
  float *heads;         /* (n_layers, n_heads, n, n) row-major; causal: 0 above the
                         * diagonal. Resident runs only. */
  gboolean causal;      /* every head stored as a lower triangle */
  guint8 *kept;         /* (n_layers, n_heads): 1 where the run kept the head (a capture of
                         * chosen heads: `capture --layers --heads`), 0 where not */
  int n_kept;
  double sparse_eps;    /* the run was stored in the sparse per-row form; 0: dense */
  guint32 round_bits;   /* the rounded form (ScStoreRunInfo): 0 and 0 when stored as fp16 */
  double zero_below;
  guint *windows;       /* (n_layers) each layer's attention window (the store's
                         * layer_windows: 0 for a global layer), or NULL when every layer is
                         * global; saccade_run_layer_window() asks */
  guint *head_windows;  /* resident runs: (n_layers, n_heads) each head's band window as
                         * stored (ScStoreHead.window: 0 unless stored as a band, its keys
                         * left of the band masked); NULL otherwise */
  int overview_size;    /* S: each head's overview is (S, S) (saccade_head_overview_size) */
  float *overviews;     /* (n_layers, n_heads, S, S): block maxima of each head (the
                         * store's overviews), NaN where a block is wholly masked */
  ScHeadStats *stats;   /* (n_layers, n_heads): every head's statistics (docs/metrics.md) */
  double *metric_values[SACCADE_N_METRICS]; /* per SaccadeMetric, (n_layers, n_heads), taken from stats for
                             * the grid's colouring */
  guint64 attention_bytes;
  double forward_s;     /* < 0: unknown */
  /* What the model predicted after each position (the store's predictions): k per
   * position, best first; n_predictions 0 for a run stored without them. */
  int n_predictions;    /* positions: 0 or n */
  int k_predictions;
  double *predicted_probs;   /* (n, k) */
  char **predicted_labels;   /* (n * k) display labels of the predicted tokens */
  char **predicted_texts;    /* (n * k) their text as typed (" Mary"), to name them as a
                              * target; "" where the bytes are not UTF-8 text */
} SaccadeRun;

SaccadeRun *saccade_run_ref (SaccadeRun *run);
void saccade_run_unref (SaccadeRun *run);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeRun, saccade_run_unref)

/* sc_head_metric_id(): "entropy", "sink", "previous-token", ... the GSettings "metric"
 * values. */
const char *saccade_metric_id (SaccadeMetric metric);
/* "Entropy (nats)", ... translated. */
const char *saccade_metric_name (SaccadeMetric metric);
/* A short column heading: "Entropy", "Sink", ... translated. */
const char *saccade_metric_short_name (SaccadeMetric metric);
gboolean saccade_metric_from_id (const char *id, SaccadeMetric *out);
/* The metric's values (n_layers, n_heads), borrowed from @run. */
const double *saccade_run_metric (const SaccadeRun *run, SaccadeMetric metric);

/* Layer @layer's attention window: 0 for a global layer (or outside the model), else w:
 * query i sees keys i - w + 1 .. i (a local layer of a sliding-window model, Gemma 3). */
guint saccade_run_layer_window (const SaccadeRun *run, int layer);
/* The window of head (@layer, @head) as stored: w when it is stored as its band (its keys
 * left of the band are masked cells), 0 otherwise. Resident runs know it from loading;
 * for others it is the layer's window when the run is longer than it (the store keeps such
 * heads as bands), which saccade_run_read_head_f16() confirms per head. */
guint saccade_run_head_window (const SaccadeRun *run, int layer, int head);

/* Whether the run kept head (@layer, @head) (FALSE outside the model's shape). A head it
 * did not keep has no matrix: its statistics are NaN, its overview all NaN, and reading it
 * is an error naming it. */
gboolean saccade_run_has_head (const SaccadeRun *run, int layer, int head);

/* Head (@layer, @head): (n, n) floats, borrowed from @run; NULL when the run is not
 * resident (then read it with saccade_run_read_head()), and zeros for a head the run did
 * not keep. */
const float *saccade_run_head (const SaccadeRun *run, int layer, int head);
/* Layer @layer's heads: (n_heads, n, n), borrowed; NULL when the run is not resident. */
const float *saccade_run_layer (const SaccadeRun *run, int layer);
/* Head (@layer, @head)'s overview: (S, S) floats (S = run->overview_size), borrowed. */
const float *saccade_run_overview (const SaccadeRun *run, int layer, int head);

/* A head's overview (the store keeps one per head; docs/store.md): the maxima of the
 * (b, b) blocks of the (@n, @n) matrix @a, b = saccade_head_overview_block (n) = ceil (n /
 * 128), into (S, S) cells, S = saccade_head_overview_size (n) = ceil (n / b) <= 128: cell
 * (I, J) is the max over tokens [I b, (I + 1) b) x [J b, (J + 1) b) (the last block may be
 * shorter). With @causal, a block whose every cell lies above the run's diagonal (@a's row
 * 0 is run position @row0, column 0 position @col0) is NaN: masked, not zero attention;
 * so is a block wholly left of the band of a head stored with @window (> 0: a local
 * layer's, its row i seeing keys i - window + 1 .. i).
 * The pyramid of ui/figures/saccade-lod.h takes these as its coarse level. */
int saccade_head_overview_block (int n);
int saccade_head_overview_size (int n);
void saccade_head_overview (const float *a, int n, int row0, int col0, gboolean causal,
                            guint window, float *out);

/* Rows @q0 .. @q1 - 1 of head (@layer, @head): (q1 - q0, n) floats, newly allocated (free
 * with g_free), copied from memory for a resident run, else read from the run's store
 * through a connection of the calling thread's own (call it from a worker: a whole head of
 * 8,192 tokens is 256 MB). 0 <= q0 < q1 <= n. Errors: SACCADE_ERROR with the store's
 * message (the run was deleted, a damaged head), SC_ERR_NOMEM when the rows do not fit in
 * memory, G_IO_ERROR_CANCELLED. Thread-safe (the run is not modified). */
float *saccade_run_read_rows (const SaccadeRun *run, int layer, int head, int q0, int q1,
                              GCancellable *cancellable, GError **error);
/* The head as the store holds it, fp16, without converting it to float (half the memory;
 * ui/figures/saccade-lod.h builds its pyramid from it): n (n + 1) / 2 values when *@causal,
 * else n * n; *@window (may be NULL) the head's band window (0: none; the values left of
 * the band are 0 and masked). Any thread; errors as saccade_run_read_rows(). */
GBytes *saccade_run_read_head_f16 (const SaccadeRun *run, int layer, int head,
                                   gboolean *causal, guint *window,
                                   GCancellable *cancellable, GError **error);
/* The whole head: saccade_run_read_rows (run, layer, head, 0, n, ...). */
float *saccade_run_read_head (const SaccadeRun *run, int layer, int head,
                              GCancellable *cancellable, GError **error);
/* The longest run of a model with @n_layers x @n_heads heads that is loaded resident
 * (every head in memory as float); pages that need every head at once (rollout, the
 * distance matrix, Compare) work up to it and say so past it. */
int saccade_run_resident_max_tokens (int n_layers, int n_heads);

/* Query heads per KV head (n_heads / n_kv_heads; 1 when the model says nothing). */
int saccade_run_group_size (const SaccadeRun *run);

/* ------------------------------------------------------------------------------------ */
/* Jobs (each opens the store at @db_path in a worker thread; @source_object is passed to
 * the callback as GTask does)                                                           */

/* Every complete run, newest first, as a GListStore of SaccadeRunItem. A database file
 * that does not exist yet has no runs (not an error). Errors: SACCADE_ERROR with the
 * store's message (a corrupt file, a newer schema). */
void saccade_run_list_async (gpointer source_object, const char *db_path,
                             GCancellable *cancellable, GAsyncReadyCallback callback,
                             gpointer user_data);
GListStore *saccade_run_list_finish (GAsyncResult *result, GError **error);

/* Loads run @run_id of the store at @db_path — tokens, metrics, overviews and, when the run
 * is short enough to be resident, every head — on the calling thread (a worker's, or the
 * command line's): the work saccade_run_load_async does in its thread. Opens and closes
 * its own read-only connection. Errors: SACCADE_ERROR with the store's message (no such
 * run, a damaged head), G_IO_ERROR_CANCELLED when @cancellable (optional) fires. */
SaccadeRun *saccade_run_load (const char *db_path, gint64 run_id, GCancellable *cancellable,
                              GError **error);

/* saccade_run_load in a worker thread. */
void saccade_run_load_async (gpointer source_object, const char *db_path, gint64 run_id,
                             GCancellable *cancellable, GAsyncReadyCallback callback,
                             gpointer user_data);
SaccadeRun *saccade_run_load_finish (GAsyncResult *result, GError **error);

/* Deletes run @run_id and gives its space back to the file system. */
void saccade_run_delete_async (gpointer source_object, const char *db_path, gint64 run_id,
                               GCancellable *cancellable, GAsyncReadyCallback callback,
                               gpointer user_data);
gboolean saccade_run_delete_finish (GAsyncResult *result, GError **error);

G_END_DECLS
