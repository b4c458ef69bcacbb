/* sc-store-capture-private.h — what the two halves of a capture share: the producer
 * (sc-store-capture.c: the forward pass's thread, which packs each head into a slot of the
 * ring) and the store's writer thread (sc-store-writer.c: which INSERTs the slots inside
 * the run's transaction). The pipeline and its locking are described in
 * sc-store-writer.c. Private to engine/store/.
 */
#pragma once

#include "store/sc-store-private.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct ScStoreWriter {
  ScStore *store;             /* borrowed: the owner */
  sqlite3 *db;                /* used only by the thread once it runs */
  int wal_fd;                 /* read-only descriptor of PATH-wal for write-back, or -1 */
  size_t unflushed;           /* BLOB bytes inserted since the last write-back request */
  sqlite3_stmt *insert_head;  /* the thread's cached INSERT INTO attention */
  sqlite3_stmt *insert_score; /* ... and INSERT INTO head_scores */
  sqlite3_stmt *insert_part;  /* ... and INSERT INTO attention_parts */
  ScStoreZWriter *z;          /* compressing heads (store->compress_heads), made on first use */
  uint64_t part_budget;       /* the most bytes of BLOBs one row may hold (the length limit
                               * less room for the row's other columns) */
  uint32_t *blk;              /* (n) the overview block of each row / key */
  uint32_t blk_n;             /* n the blocks were made for */
  float *overview;            /* (S, S) the maxima */
  float *unpacked;            /* the thread's (n, n) buffer for a head's statistics */
  size_t unpacked_cap;        /* floats */
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t wake;        /* to the thread: a job, a slot filled, a finish, quit */
  pthread_cond_t done;        /* from the thread: a slot released, a job finished */
  ScStoreCapture *job;        /* guarded by mu */
  bool quit;                  /* guarded by mu */
};

typedef struct {
  uint8_t *buf;
  size_t cap;
  size_t len;
  int layer, head;
  uint32_t n;                 /* n_query = n_key */
  bool causal;
  bool sparse;                /* buf holds the sparse form: dropped (f32, n), offsets (u64,
                               * n + 1), keys (u32, nnz), values (f16, nnz), little-endian */
  uint64_t nnz;
  uint32_t window;            /* > 0: buf holds the band of this window (sc-store-band.c) */
} Slot;

typedef enum {
  FINISH_NONE,
  FINISH_COMMIT,
  FINISH_ABORT,
} Finish;

struct ScStoreCapture {
  ScStore *store;
  ScStoreWriter *w;

  /* What the run is about: copies, owned. */
  ScStoreModel model;         /* strings point into the copies below */
  char *model_path, *model_name, *model_arch, *backend;
  uint8_t *text;
  size_t text_len;
  ScStoreToken *tokens;
  size_t n_tokens;
  int n_layers, n_heads;
  uint8_t *keep;              /* (n_layers * n_heads) 1: stored */
  size_t n_keep;
  bool keep_all;
  double sparse_eps;          /* 0: dense */
  ScStoreZRound round;        /* the rounded form (runs.round_bits, zero_below) */
  double zero_below;
  ScRunKind kind;             /* runs.kind (UNKNOWN: NULL) */
  uint32_t n_prompt;          /* runs.prompt_tokens (0: NULL) */
  uint32_t *windows;          /* (n_layers) sc_model_layer_window of the model: 0 global */
  int64_t created_ms;
  struct timespec t0;
  ScStorePredictions pred;    /* set before the commit (producer), read by the thread at
                               * the commit; n_positions 0: none */

  /* Producer side (the forward pass's thread only). */
  uint8_t *seen;              /* (n_layers * n_heads): 1 once added */
  size_t n_seen;
  ScStoreSparse sparse;       /* scratch for the sparse form */

  /* Shared, guarded by w->mu. */
  Slot *slots;
  size_t n_slots, q_head, q_count;
  Finish finish;
  double forward_s;
  bool finished;              /* the thread is done with this capture */
  ScStatus status;            /* the first error, or SC_OK */
  ScError error;

  /* Written by the thread before it sets finished. */
  int64_t run_id;
  uint64_t attention_bytes;
  size_t n_stored;
};

/* Starts the store's writer thread with its own connection and prepared statements. */
ScStatus sc_store_writer_start (ScStore *store, ScStoreWriter **out, ScError *err);

/* Records @e as the capture's error unless it already has one, and wakes the producer;
 * _locked when the caller holds w->mu. */
void sc_store_capture_fail (ScStoreCapture *cap, const ScError *e);
void sc_store_capture_fail_locked (ScStoreCapture *cap, const ScError *e);
