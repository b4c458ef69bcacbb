/* sc-store-scores.h — a run's per-head statistics (engine/analysis/sc-head-stats.h) kept in
 * the store's head_scores table, so that the heads table, the Model page's colouring and
 * sorting do not read every head of a run again.
 *
 * Written by the capture itself: the writer thread computes each head's statistics from the
 * fp16 values it stores (so they are exactly what reading the head back gives) and inserts them
 * in the run's transaction — a run is stored with its scores or not at all. Only the heads a
 * run kept have scores (schema v3: a score row of another head is SC_ERR_FORMAT). Runs stored
 * before this existed (or by a build that stored fewer metrics) get them on first use:
 * sc_store_read_head_scores() computes what is missing from the stored heads and, when the
 * store is writable, stores it.
 *
 * Rows: one per (run, layer, head, score): the metric ids of sc_head_metric_id() and
 * SC_STORE_SCORE_LAST_TOP_KEY / _WEIGHT (the last token's most attended key and its
 * weight), value REAL, NULL where the statistic is undefined (NaN: the previous-token
 * score of a one-token run). Trust: every row read is checked (docs/store.md, "Trust"):
 * layer and head inside the run's model, a known metric stored as text, no (layer, head,
 * metric) twice, a value that is NULL or a finite number (the key an integer position of
 * the run); anything else is SC_ERR_FORMAT naming the run, the row and the value.
 *
 * Thread safety: as the store (one thread per ScStore). Plain C17 + SQLite; no GLib.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "analysis/sc-head-stats.h"
#include "core/sc-error.h"
#include "store/sc-store.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SC_STORE_SCORE_LAST_TOP_KEY "last-top-key"
#define SC_STORE_SCORE_LAST_TOP_WEIGHT "last-top-weight"

/* The scores stored per head: the SC_HEAD_N_METRICS metrics, then the last top key and
 * its weight. */
#define SC_STORE_N_SCORES (SC_HEAD_N_METRICS + 2)

/* The id of score @k (0 <= k < SC_STORE_N_SCORES) as head_scores.metric holds it: k <
 * SC_HEAD_N_METRICS is sc_head_metric_id (k); NULL out of range. */
const char *sc_store_score_id (int k);

/* A run's head statistics. */
typedef struct {
  int64_t run_id;
  uint32_t n_layers, n_heads, n_kv_heads, n_tokens;
  ScHeadStats *stats;   /* (n_layers, n_heads) row-major; owned (sc_store_head_scores_clear);
                         * every score NaN for a head the run did not keep (last_top,
                         * an int, is 0 there: always a position 0..n_tokens - 1) */
  uint32_t n_kept;      /* heads the run kept */
  uint8_t *kept;        /* NULL: every head; else ScStoreRunInfo.kept's bitmap, owned */
  bool computed;        /* some were absent from the store and were computed from its heads */
  bool stored;          /* ... and were written to it (a writable store with no open capture) */
} ScStoreHeadScores;

/* Fills @out with run @run_id's statistics, reading head_scores and, for every head whose
 * scores are missing, reading the head and computing them (sc_head_stats_compute with the
 * default options); on a writable store with no open capture the computed ones are then stored
 * (in one transaction, without waiting for another writer; failing to store — a capture in
 * another process holding the lock, a full disk — is not an error: the scores are returned with
 * stored = false). Errors: those of sc_store_get_run() and sc_store_read_head(); SC_ERR_FORMAT
 * for a head_scores row that breaks the rules above; SC_ERR_NOMEM. On error @out holds nothing. */
ScStatus sc_store_read_head_scores (ScStore *store, int64_t run_id, ScStoreHeadScores *out,
                                    ScError *err);

/* Frees @s's array; NULL is a no-op. */
void sc_store_head_scores_clear (ScStoreHeadScores *s);

#ifdef __cplusplus
}
#endif
