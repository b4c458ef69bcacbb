/* saccade-export-private.h — what the exporter's files share (saccade-export.c: the source,
 * figures and one-head data; saccade-export-csv.c: the CSV tables; saccade-export-arrays.c:
 * whole-run arrays). Not for callers:
 * they see app/core/saccade-export.h only.
 */
#pragma once

#include "app/core/saccade-export.h"

G_BEGIN_DECLS

struct _SaccadeExportSource
{
  SaccadeRun *run;          /* owned reference, or NULL: read from @store; a run that is
                             * not resident has its heads read from @store too */
  ScStore *store;           /* borrowed, or @own_store */
  ScStore *own_store;       /* opened for a run that is not resident */
  gint64 run_id;
  int n_layers, n_heads, n_kv_heads;
  int n;                    /* tokens */
  const ScStoreToken *tokens; /* (n), borrowed from @run or @own_tokens */
  ScStoreToken *own_tokens;
  char **labels;            /* (n) readable labels, borrowed from @run or @own_labels */
  char **own_labels;
  ScStoreRunInfo info;      /* a store source's run, whole (the arrays' metadata) */
};

/* @r (resolved) covers the whole run. */
gboolean saccade_export_range_is_whole (const SaccadeExportSource *src,
                                        const SaccadeExportRange *r);

/* Copies the (q1 - q0, k1 - k0) block of the (n, n) head @a into @out (@r resolved). */
void saccade_export_cut_block (const float *a, int n, const SaccadeExportRange *r, float *out);

/* One head: borrowed from the run, or read into @stored; cut to a range into @cut. */
typedef struct {
  const float *probs;       /* (n_query, n_key) row-major */
  guint n_query, n_key;
  guint q0, k0;             /* the run positions of row and column 0 */
  gboolean causal;          /* the head is stored causal */
  guint window;             /* stored as a band of this window: keys left of it are masked */
  ScStoreHead stored;
  float *cut;
} SaccadeExportHeadView;

/* Heads [l0, l0 + nl) x [h0, h0 + nh) cut to @r (resolved), (nl, nh, rows, cols) floats:
 * borrowed from a resident run, else read into *@owned (caller frees); *@causal (optional):
 * every head stored as a lower triangle. NULL with @error. */
const float *saccade_export_source_block (SaccadeExportSource *src, int l0, int nl, int h0,
                                          int nh, const SaccadeExportRange *r, float **owned,
                                          gboolean *causal, GError **error);
/* Every head's statistics: the run's, else the store's, else computed from the store one
 * head at a time into *@owned_stats (caller frees). NULL with @error. */
const ScHeadStats *saccade_export_source_stats (SaccadeExportSource *src,
                                                ScHeadStats **owned_stats, GError **error);
/* Query heads per KV head, as saccade_run_group_size() counts them. */
int saccade_export_source_group_size (const SaccadeExportSource *src);
/* One head as CSV (its labels on both axes). */
GBytes *saccade_export_head_csv (const SaccadeExportHeadView *v, const char *const *labels);

G_END_DECLS
