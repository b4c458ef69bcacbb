/* saccade-cli-capture-private.h — what `saccade capture` (saccade-cli-capture.c) shares with
 * its printing (saccade-cli-capture-print.c): a captured text's result and the context every
 * text of one capture shares. */
#pragma once

#include "app/cli/saccade-cli-store.h"
#include "app/core/saccade-model.h"
#include "engine/forward/sc-predict.h"

G_BEGIN_DECLS

/* What capturing one text gives. */
typedef struct {
  gint64 run_id;                /* 0: not stored (--no-store) */
  guint64 attention_bytes;      /* stored runs */
  guint n_tokens;
  double seconds;               /* the forward pass */
  ScStoreToken *pieces;         /* (n_tokens) */
  SaccadeHeadStatsTable stats;  /* every head's statistics, with --summary; else empty */
  guint n_prompt;               /* tokens of the prompt; n_tokens - n_prompt were generated */
  ScPredictions pred;           /* the top SC_PREDICT_TOP_K next tokens of every position */
  double predict_seconds;       /* computing them */
} CaptureResult;

/* What every text of one `saccade capture` shares. */
typedef struct {
  ScModel *model;
  SaccadeCliSession s;
  ScStore *store;           /* NULL with --no-store */
  const ScStoreModel *ident;
  char *model_path;         /* absolute; ident->path borrows it */
  const char *backend_name;
  gboolean parse_special, summary;
  gboolean chat;            /* --chat: the text in the model's chat template */
  int n_generate;           /* --generate N: N greedy tokens after the text (0: none) */
  guint8 *keep;             /* (n_layers * n_heads) the heads to store; NULL: every head */
  guint n_kept;
  double sparse_eps;        /* 0: dense */
  gboolean compress;        /* --compress: dense heads stored compressed (attention_z) */
  guint32 round_bits;       /* --round-bits, --zero-below: the rounded form (ScStoreRunDesc) */
  double zero_below;
  const guint *text_line;   /* --shard: each text's number among the file's non-empty
                             * lines (0-based); NULL: the texts are those lines */
} CaptureCtx;

void saccade_cli_capture_print_text (const CaptureResult *r, const CaptureCtx *c);
void saccade_cli_capture_add_json (JsonBuilder *b, const CaptureResult *r, const CaptureCtx *c);

G_END_DECLS
