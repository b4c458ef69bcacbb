/* saccade-export.h — the one exporter of both faces: a stored run to a figure file (PNG,
 * SVG, PDF through the renderers the window draws with, ui/figures/saccade-figure.h) or to
 * data (CSV, NumPy .npy, JSON; the whole run as one .npz or .npy array, streamed head by
 * head), each optionally cut to a token range (SaccadeExportRange).
 *
 * An export reads from a SaccadeExportSource: either a run loaded in full (the window's
 * SaccadeRun, whose heads and metrics are already in memory) or a run in a store, whose
 * heads are read only when an export needs them (the command line, which exports one head
 * of a run too long to load whole). Both give the same bytes for the same request: the
 * metrics are engine head statistics (engine/analysis/sc-head-stats.h) computed by
 * saccade_head_stats_table_observe() in both cases, never by hand.
 *
 * Data layouts (CSV is RFC 4180 with CRLF line ends, values to 9 significant digits —
 * exact for every stored fp16):
 *   head     one head as a labelled matrix: a header row "query\key,0:The,1:␣cat,..." and a
 *            first column of query labels "pos:token" (pandas.read_csv (f, index_col=0));
 *            .npy: float32 (n_query, n_key) row-major; JSON: {run, layer, head, n_query,
 *            n_key, causal, window (a band head's: keys left of it are masked, 0 in
 *            weights and in the CSV and .npy, as above the diagonal), dtype_stored: "f16",
 *            tokens, weights: [[...]]}, compact;
 *   metrics  one row per head: layer,head,kv_head,entropy,sink_mass,previous_token, then
 *            the other engine statistics: entropy_norm,distance,confidence,sink_k,self,
 *            last_entropy,last_top,last_top_token,last_top_weight;
 *   distance an items x items matrix with a header row and a first column of item names,
 *            rows and columns in the order given (the clustering's);
 *   values   one value per token: pos,token,NAME;
 *   layer    one row per (head, query, key) the causal mask allows, in long form:
 *            layer,head,query,key,query_token,key_token,weight;
 *   induction one row per head of an induction study, ranked by prefix matching:
 *            rank,layer,head,prefix_matching,duplicate_token,previous_token,copying,
 *            positive_share (NaN as "nan").
 *
 * Not here: choosing a file name or asking for one (each face does), the title (each face
 * writes its own), printing what was written.
 * Thread safety: a source belongs to one thread at a time, like the ScStore it reads.
 */
#pragma once

#include <glib.h>

#include "app/core/saccade-induction.h"
#include "app/core/saccade-run.h"
#include "engine/store/sc-store.h"
#include "ui/figures/saccade-figure.h"

G_BEGIN_DECLS

typedef struct _SaccadeExportSource SaccadeExportSource;

/* Exports from @run (takes a reference): a resident run lends its heads, a long one is read
 * from its store (a read-only connection of the source's own, opened here: NULL with
 * @error set when that fails — the file is gone, the run was deleted). */
SaccadeExportSource *saccade_export_source_new_for_run (SaccadeRun *run, GError **error);

/* Exports from the run @info describes (sc_store_get_run()) in @store; reads its tokens
 * now and its heads when an export needs them. @store is borrowed and must outlive the
 * source; nothing of @info is kept. NULL with @error set (SACCADE_ERROR, the store's
 * message) when the tokens cannot be read. */
SaccadeExportSource *saccade_export_source_new_for_store (ScStore *store,
                                                          const ScStoreRunInfo *info,
                                                          GError **error);

void saccade_export_source_free (SaccadeExportSource *src); /* NULL is a no-op */
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SaccadeExportSource, saccade_export_source_free)

/* ------------------------------------------------------------------------------------ */
/* Figures                                                                               */

typedef enum {
  SACCADE_EXPORT_HEATMAP, /* one head, (layer, head) */
  SACCADE_EXPORT_GRID,    /* every head of the run */
  SACCADE_EXPORT_LINES,   /* one layer: one head, or every head when head < 0 */
  SACCADE_EXPORT_PROFILE, /* one metric by layer, a dot per head (metric required) */
  SACCADE_EXPORT_ROLLOUT, /* the attention rollout (engine/analysis/sc-rollout.h) as a
                           * token x token heatmap */
} SaccadeExportFigureKind;

/* A token range: queries @q0 .. @q1 - 1 and keys @k0 .. @k1 - 1 of a run, half-open like
 * NumPy's a[q0:q1, k0:k1]; @q1 or @k1 < 0 means "to the last token". Positions stay those of
 * the run (the labels, the CSV's "pos:token" cells and the .npz's positions say them).
 * Exports take a range pointer; NULL is the whole run. */
typedef struct {
  int q0, q1, k0, k1;
} SaccadeExportRange;

/* Checks @range (NULL: the whole run) against the run of @src and returns it with both
 * ends set in *@out. Errors (G_IO_ERROR_INVALID_ARGUMENT) name the run's token count and
 * the bad side: an empty range (q0 >= q1), a start < 0, an end past the last token. */
gboolean saccade_export_range_resolve (const SaccadeExportSource *src,
                                       const SaccadeExportRange *range,
                                       SaccadeExportRange *out, GError **error);

typedef struct {
  SaccadeExportFigureKind kind;
  int layer;                 /* heatmap, lines */
  int head;                  /* heatmap; lines: < 0 for every head of the layer */
  const char *title;         /* borrowed; may be NULL */
  SaccadeColormap colormap;  /* heatmap, grid */
  SaccadeScale scale;        /* heatmap, grid */
  const char *metric;        /* grid: frame each head in the colour of this engine metric
                              * ("entropy", "sink", "previous-token": sc_head_metric_id()),
                              * or NULL for none; profile: the metric shown */
  const char *metric_name;   /* grid: the colour bar's caption; profile: the value axis';
                              * may be NULL */
  const double *metric_values; /* grid, profile: (n_layers, n_heads) values computed by the
                              * caller (the Model page's norm metrics, which need a forward
                              * pass) used instead of @metric's; then @metric is NULL and
                              * @metric_name says what they are */
  const SaccadeExportRange *range; /* NULL: the whole run. Heatmap and rollout: any
                              * rectangle; grid: a square (the same number of queries and
                              * keys); lines: the same tokens on both sides (q0 == k0, q1 ==
                              * k1); profile: none (it summarises whole heads). A grid's
                              * metric is always of the whole head. The rollout is computed
                              * over the whole run and then cut. Cells above the diagonal
                              * are drawn masked only when q0 == k0 (else as their stored
                              * zeros). */
  /* lines: the links drawn (ui/figures/saccade-figure-lines.h), chosen per query and head
   * over the query's whole row, whatever the range: at least @lines_threshold (0: every
   * visible line, 1/256) and the @lines_top_k strongest (0: all). @lines_heads (NULL: @head,
   * or every head when head < 0) names @lines_n_heads heads of the layer to draw. A range
   * labels its tokens with their run positions. */
  double lines_threshold;
  int lines_top_k;
  const int *lines_heads;
  int lines_n_heads;
  int grid_bands;            /* grid: the layers wrapped into this many bands, 1 .. the
                              * run's layers; 0: as many as give the biggest heads */
  gboolean exclude_first;    /* rollout: key 0 (the first token, the usual attention sink)
                              * removed from every attention row and the rows renormalised
                              * before rolling out (sc-rollout.h); the title should say so */
  const SaccadeFigureExportOptions *options; /* size, font, title, labels; NULL: natural */
} SaccadeExportFigure;

/* Draws @fig into @path; the extension (.png, .svg, .pdf) chooses the format. Errors:
 * G_IO_ERROR_INVALID_ARGUMENT (unknown extension or metric, a layer or head the run does not
 * have), SACCADE_ERROR (the store), and the renderer's and file system's errors. */
gboolean saccade_export_figure (SaccadeExportSource *src, const SaccadeExportFigure *fig,
                                const char *path, GError **error);

/* ------------------------------------------------------------------------------------ */
/* Data                                                                                  */

typedef enum {
  SACCADE_EXPORT_CSV,
  SACCADE_EXPORT_NPY,
  SACCADE_EXPORT_JSON,
} SaccadeExportFormat;

/* Head (@layer, @head) as @format. CSV cells name tokens "POS:LABEL" with the labels the
 * figures show (ui/figures/saccade-token-label.h: "1:␣cat", "3:<0xE7> (猫)"), the same from
 * both faces. @n_query and @n_key (optional) receive its shape. Caller unrefs; NULL with
 * @error set as for saccade_export_figure(). */
GBytes *saccade_export_head (SaccadeExportSource *src, int layer, int head,
                             SaccadeExportFormat format, guint *n_query, guint *n_key,
                             GError **error);

/* The same, cut to @range (NULL: whole): the CSV's cells keep the run's positions, the
 * JSON gains "query_start" and "key_start" (its "tokens" stay the whole run's), the .npy
 * is the block alone. */
GBytes *saccade_export_head_range (SaccadeExportSource *src, int layer, int head,
                                   const SaccadeExportRange *range,
                                   SaccadeExportFormat format, guint *n_query, guint *n_key,
                                   GError **error);

/* Every head's metrics as CSV (reads every head from a store source). */
GBytes *saccade_export_metrics_csv (SaccadeExportSource *src, GError **error);

/* Layer @layer's heads in long form as CSV. */
GBytes *saccade_export_layer_csv (SaccadeExportSource *src, int layer, GError **error);

/* The rollout of the run ((n, n), caller frees), computed from every head
 * (sc_attention_rollout_with; @exclude_first: without the first token, ScRolloutOptions).
 * NULL with @error set (SACCADE_ERROR: the engine's message). */
double *saccade_export_rollout (SaccadeExportSource *src, gboolean exclude_first,
                                GError **error);

/* The (n, n) matrix @values (items in their own order) as CSV in @order (NULL: as given),
 * each row and column named by @labels. */
GBytes *saccade_export_distance_csv (int n, const double *values, const int *order,
                                     const char *const *labels);

/* @values (n, one per token of @src) as CSV, the value column named @name. */
GBytes *saccade_export_values_csv (SaccadeExportSource *src, const double *values,
                                   const char *name);

/* The induction study's heads as CSV (the layout above). */
GBytes *saccade_export_induction_csv (const SaccadeInduction *ind);

/* Whole-run arrays (`saccade export RUN --all`). The attention of every head is one
 * float32 array (n_layers, n_heads, n_query, n_key), C order, values the stored fp16
 * probabilities exactly (so a row of n keys sums to 1 only within fp16 rounding, at most
 * n·2⁻¹² off; docs/store.md has measured ranges). A head the store does not hold (a capture of chosen
 * layers or heads) is NaN throughout, and the .npz's "stored" mask says so.
 *   .npy  the attention array alone: the tokens, the text and the metadata are lost (the
 *         caller says so);
 *   .npz  members (numpy.load (path) gives a dict-like of them; no pickles):
 *         attention   <f4 (n_layers, n_heads, n_query, n_key)
 *         stored      |b1 (n_layers, n_heads): the head is in the store
 *         layer_windows <i4 (n_layers): each layer's attention window, 0 for a global
 *                     layer; a local layer's heads are 0 left of it (masked cells, like
 *                     the upper triangle: query i sees keys i - w + 1 .. i)
 *         query_positions, key_positions  <i4 (n_query), (n_key): run positions of the
 *                     array's rows and columns (the range's)
 *         token_ids   <i4 (n_tokens), positions <i4 (n_tokens) 0 .. n_tokens - 1: every
 *                     token of the run, whatever the range
 *         tokens      <U (n_tokens): each piece decoded as UTF-8 (bytes that are not
 *                     valid UTF-8 become U+FFFD: a character split over byte tokens)
 *         token_labels <U (n_tokens): the labels the figures and CSV show ("␣cat")
 *         token_bytes <u1 (total), token_offsets <i8 (n_tokens + 1): the exact bytes,
 *                     token i is token_bytes[token_offsets[i]:token_offsets[i+1]]
 *         text        <U 0-d: the run's text (made valid UTF-8)
 *         metadata    <U 0-d: JSON {"format": "saccade-run-npz", "version": 1, run, model
 *                     {name, arch, sha256, n_layers, n_heads, n_kv_heads, head_dim},
 *                     backend, created_ms, n_tokens, range {q0, q1, k0, k1}, dtype_stored
 *                     "f16", values (what they are and their precision), text_is_utf8,
 *                     heads_stored, heads_missing}.
 * Memory: one head at a time (an n_tokens² float32 head read from the store, its range
 * copied out, then written): the peak is about 2 heads, never the whole array. Only a
 * store source (saccade_export_source_new_for_store) has the metadata: a loaded run's
 * source is refused (G_IO_ERROR_NOT_SUPPORTED). */
typedef struct {
  guint64 bytes;                 /* the file's size */
  guint n_query, n_key;
  int heads_stored, heads_missing;
} SaccadeExportArrays;

gboolean saccade_export_run_arrays (SaccadeExportSource *src, const SaccadeExportRange *range,
                                    gboolean npz, const char *path, SaccadeExportArrays *out,
                                    GError **error);
/* The same, an .npz's members deflated at zlib @level (1-9; 0: stored, the default). */
gboolean saccade_export_run_arrays_full (SaccadeExportSource *src,
                                         const SaccadeExportRange *range, gboolean npz,
                                         int level, const char *path,
                                         SaccadeExportArrays *out, GError **error);

/* Writes @data to @path atomically (beside it, then renamed over it: a failed export
 * leaves no half file). */
gboolean saccade_export_write (GBytes *data, const char *path, GError **error);

G_END_DECLS
