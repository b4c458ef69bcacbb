/* saccade-export-private.h — what the exporter's files share (saccade-export.c: the source,
 * figures and one-head data; saccade-export-arrays.c: whole-run arrays). Not for callers:
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

G_END_DECLS
