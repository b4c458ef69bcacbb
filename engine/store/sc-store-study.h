/* sc-store-study.h — study results in the capture store (schema v2, docs/store.md): a
 * study is a row of `studies` (its kind, its model, its parameters as a JSON text) with
 * numbers per (layer, head, metric) in `study_heads` and per (series, position) in
 * `study_series`. The induction detector stores its scores and loss curve here; the
 * ablation studies will too.
 *
 * Writing: sc_store_study_begin() opens a write transaction on the store's connection and
 * adds the study as 'writing'; the add functions insert rows; sc_store_study_commit()
 * marks it 'complete' and commits, so readers see a study whole or not at all. Reuse:
 * sc_store_find_study() finds the latest complete study of a kind for a model (by its
 * file's SHA-256) whose params text is byte-for-byte the one given — callers write params
 * canonically (fixed key order, no spaces) so that equal parameters are equal texts.
 *
 * Trust: like every read of the store (sc-store.h, "Trust"), sc_store_read_study() checks
 * every number: 0 <= layer < the model's n_layers, 0 <= head < n_heads (the model row's,
 * themselves within the store's ceilings), 0 <= pos < SC_STORE_MAX_TOKENS, names of 1 to
 * SC_STORE_STUDY_NAME_MAX - 1 bytes without NUL, values REAL or NULL (NULL reads as NaN),
 * at most SC_STORE_STUDY_MAX_METRICS metrics per head and SC_STORE_STUDY_MAX_SERIES series;
 * anything else is SC_ERR_FORMAT naming the study, the table and the value. A store at
 * schema v1 (opened read-only: it is not migrated) has no studies: SC_ERR_NOT_FOUND.
 *
 * Thread safety: as ScStore (one thread at a time). A study cannot be written while a
 * capture is open on the same store.
 */
#pragma once

#include <stdint.h>

#include "store/sc-store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Names (metric, series, kind) are short identifiers: "prefix_matching", "loss". */
#define SC_STORE_STUDY_NAME_MAX 64
#define SC_STORE_STUDY_MAX_METRICS 64u
#define SC_STORE_STUDY_MAX_SERIES 64u
/* A params text longer than this is refused on writing and on reading. */
#define SC_STORE_STUDY_MAX_PARAMS 4096u

typedef struct ScStoreStudy ScStoreStudy;

typedef struct {
  int layer, head;
  char metric[SC_STORE_STUDY_NAME_MAX];
  double value; /* NaN: NULL in the store */
} ScStoreHeadValue;

typedef struct {
  char series[SC_STORE_STUDY_NAME_MAX];
  int pos;
  double value;
} ScStoreSeriesValue;

typedef struct {
  int64_t id, model_id;
  int64_t created_ms;
  char kind[SC_STORE_STUDY_NAME_MAX];
  char *params;               /* NUL-terminated */
  int n_layers, n_heads;      /* of the study's model */
  ScStoreHeadValue *heads;    /* (n_head_values), ordered by layer, head, metric */
  size_t n_head_values;
  ScStoreSeriesValue *series; /* (n_series_values), ordered by series, pos */
  size_t n_series_values;
} ScStoreStudyData;

/* Begins a study of @kind for @model with @params (JSON text). Errors: SC_ERR_INVALID_ARG
 * (a read-only store, an open capture, a bad name, params too long), SC_ERR_FORMAT (the
 * model's row in the store has another shape), SC_ERR_DB. */
ScStatus sc_store_study_begin (ScStore *store, const char *kind, const ScStoreModel *model,
                               const char *params, ScStoreStudy **out, ScError *err);

/* Adds one value (NaN is stored as NULL). SC_ERR_INVALID_ARG for a layer or head outside
 * the model, a bad name, a position < 0; SC_ERR_DB. */
ScStatus sc_store_study_add_head (ScStoreStudy *study, int layer, int head, const char *metric,
                                  double value, ScError *err);
ScStatus sc_store_study_add_series (ScStoreStudy *study, const char *series, int pos,
                                    double value, ScError *err);

/* Marks the study complete and commits; frees @study (also on failure, which rolls back).
 * *@study_id (may be NULL) receives its id. */
ScStatus sc_store_study_commit (ScStoreStudy *study, int64_t *study_id, ScError *err);

/* Rolls back and frees. NULL is a no-op. */
void sc_store_study_abort (ScStoreStudy *study);

/* The latest complete study of @kind for the model with @sha256 whose params equal
 * @params; SC_ERR_NOT_FOUND when there is none (or the store is empty or at v1). */
ScStatus sc_store_find_study (ScStore *store, const char *kind,
                              const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params,
                              int64_t *study_id, ScError *err);

/* Reads a complete study, checked as above. Free with sc_store_study_data_free(). */
ScStatus sc_store_read_study (ScStore *store, int64_t study_id, ScStoreStudyData **out,
                              ScError *err);
void sc_store_study_data_free (ScStoreStudyData *data); /* NULL is a no-op */

/* A complete study as listed: its id, params and model (dimensions checked against the
 * store's ceilings; the values are not read: sc_store_read_study or a study's own loader
 * checks them). */
typedef struct {
  int64_t id;
  char *params;                                /* NUL-terminated, owned */
  uint8_t model_sha256[SC_SHA256_DIGEST_SIZE];
  uint32_t n_layers, n_heads, n_vocab;         /* of the study's model */
  char *model_name;                            /* NUL-terminated, owned */
} ScStoreStudyRef;

/* Every complete study of @kind in @store, by id. *@out is NULL when there is none (or the
 * store is at v0/v1). Errors: SC_ERR_FORMAT (a params text not text or too long, a model
 * hash not 32 bytes, dimensions outside the ceilings), SC_ERR_NOMEM, SC_ERR_DB. Free with
 * sc_store_study_refs_free(). */
ScStatus sc_store_list_studies (ScStore *store, const char *kind, ScStoreStudyRef **out,
                                size_t *n, ScError *err);
void sc_store_study_refs_free (ScStoreStudyRef *refs, size_t n); /* NULL is a no-op */

#ifdef __cplusplus
}
#endif
