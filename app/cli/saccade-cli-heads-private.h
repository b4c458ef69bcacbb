/* saccade-cli-heads-private.h — what the head-analysis verbs share (heads, compare and
 * rollout: saccade-cli-heads.c, saccade-cli-compare.c, saccade-cli-rollout.c): opening the
 * store, a run with every head read, the checks of a head given on the command line. */
#pragma once

#include "app/cli/saccade-cli-store.h"

G_BEGIN_DECLS

/* Every head of a stored run: (n_layers, n_heads, n, n) floats, as sc-rollout.h and
 * sc-head-distance.h take them. */
typedef struct {
  ScStoreRunInfo info;
  ScStoreToken *tokens;
  size_t n_tokens;
  char **labels;             /* (n) terminal-safe token labels */
  float *heads;              /* (n_layers, n_heads, n, n); NULL until loaded */
} SaccadeCliRunHeads;

void saccade_cli_run_heads_clear (SaccadeCliRunHeads *r);
/* The run, its tokens and labels, and with @all_heads every head. */
gboolean saccade_cli_run_heads_read (ScStore *store, gint64 run, gboolean all_heads,
                                     SaccadeCliRunHeads *r, ScError *err);
/* Every head of the run @r holds (after saccade_cli_run_heads_read). */
gboolean saccade_cli_run_heads_load (ScStore *store, SaccadeCliRunHeads *r, ScError *err);
/* The store at @path, writable when @want_write and it can be (so that scores computed for
 * an older run are kept), else read-only. */
ScStore *saccade_cli_heads_open_store (const char *path, gboolean want_write, ScError *err);
/* Query heads per KV head of the run. */
int saccade_cli_group_size (const ScStoreRunInfo *info);
/* "saccade: run R has layers 0-L and heads 0-H" (exit status 2) unless (layer, head) is
 * one of the run's heads. */
gboolean saccade_cli_check_head (const ScStoreRunInfo *info, int layer, int head);
/* @s into the file @path. */
gboolean saccade_cli_write_gstring (const char *path, const GString *s, GError **error);

G_END_DECLS
