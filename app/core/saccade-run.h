/* saccade-run.h — stored runs as the window sees them, and the background jobs that read
 * and delete them.
 *
 * The window never touches the capture store on its own thread: listing, loading and
 * deleting runs are GTasks that open their own ScStore connection in a worker thread
 * (engine/store/sc-store.h allows one store per thread on the same file) and hand back plain
 * data. SaccadeRunItem is one row of the sidebar; SaccadeRun is one run loaded in full —
 * token labels, every head's matrix and the per-head metrics of docs/metrics.md, which are
 * computed in the worker with the same code as `saccade capture --summary`.
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
/* The run's text, readable (control bytes and invalid UTF-8 escaped), one line. */
const char *saccade_run_item_get_title (SaccadeRunItem *self);
/* "12 tok · 0.4 s" (translated). */
const char *saccade_run_item_get_subtitle (SaccadeRunItem *self);
const char *saccade_run_item_get_model_name (SaccadeRunItem *self);
guint saccade_run_item_get_n_tokens (SaccadeRunItem *self);
/* Lower-case title and model name, for the search filter. */
gboolean saccade_run_item_matches (SaccadeRunItem *self, const char *casefolded_needle);

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
  char *backend;
  int n_layers, n_heads, n_kv_heads;
  int n;                /* tokens */
  char **labels;        /* (n) display labels (saccade_token_label), NULL-terminated */
  ScStoreToken *tokens; /* (n) the stored pieces, raw bytes (data exports need them) */
  float *heads;         /* (n_layers, n_heads, n, n) row-major; causal: 0 above the diagonal */
  gboolean causal;      /* every head stored as a lower triangle */
  ScHeadStats *stats;   /* (n_layers, n_heads): every head's statistics (docs/metrics.md) */
  double *metric_values[SACCADE_N_METRICS]; /* per SaccadeMetric, (n_layers, n_heads), taken from stats for
                             * the grid's colouring */
  guint64 attention_bytes;
  double forward_s;     /* < 0: unknown */
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

/* Head (@layer, @head): (n, n) floats, borrowed from @run. */
const float *saccade_run_head (const SaccadeRun *run, int layer, int head);
/* Layer @layer's heads: (n_heads, n, n), borrowed. */
const float *saccade_run_layer (const SaccadeRun *run, int layer);
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

/* Loads run @run_id of the store at @db_path with every head and computes the metrics, on
 * the calling thread (a worker's, or the command line's): the work saccade_run_load_async
 * does in its thread. Opens and closes its own read-only connection. Errors: SACCADE_ERROR
 * with the store's message (no such run, a damaged head), SC_ERR_RANGE for a run too long
 * to hold in memory, G_IO_ERROR_CANCELLED when @cancellable (optional) fires. */
SaccadeRun *saccade_run_load (const char *db_path, gint64 run_id, GCancellable *cancellable,
                              GError **error);

/* Loads run @run_id with every head and computes the metrics (saccade_run_load in a worker
 * thread). */
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
