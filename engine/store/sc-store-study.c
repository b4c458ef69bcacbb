/* sc-store-study.c — writing and reading study results (sc-store-study.h): one write
 * transaction per study on the store's own connection, and reads that check every number
 * against the study's model before anyone uses it. Not the studies themselves
 * (engine/study/) nor captures (sc-store-writer.c). */
#include "store/sc-store-study.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/sc-store-private.h"

struct ScStoreStudy {
  ScStore *store;
  int64_t id;
  uint32_t n_layers, n_heads;
  sqlite3_stmt *add_head, *add_series;
};

/* A name is 1 .. NAME_MAX - 1 bytes of [a-z0-9_.-]: nothing to quote, nothing to confuse. */
static bool
good_name (const char *s, size_t len)
{
  size_t i;

  if (s == NULL || len < 1 || len >= SC_STORE_STUDY_NAME_MAX)
    return false;
  for (i = 0; i < len; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'
          || s[i] == '.' || s[i] == '-'))
      return false;
  return true;
}

ScStatus
sc_store_study_begin (ScStore *store, const char *kind, const ScStoreModel *model,
                      const char *params, ScStoreStudy **out, ScError *err)
{
  ScStoreStudy *s;
  sqlite3_stmt *st = NULL;
  int64_t model_id = 0;
  bool mismatch = false;
  int rc;

  *out = NULL;
  if (!store->writable)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s was opened read-only", store->path);
  if (store->capture != NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: a capture is open; finish it before "
                         "storing a study", store->path);
  if (kind == NULL || !good_name (kind, strlen (kind)) || params == NULL
      || strlen (params) > SC_STORE_STUDY_MAX_PARAMS || model == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: a study needs a kind of [a-z0-9_.-] "
                         "and params of at most %u bytes", store->path,
                         SC_STORE_STUDY_MAX_PARAMS);
  if ((s = calloc (1, sizeof *s)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "%s: out of memory", store->path);
  s->store = store;
  s->n_layers = model->n_layers;
  s->n_heads = model->n_heads;
  if ((rc = sc_store_exec (store->db, "BEGIN IMMEDIATE")) != SQLITE_OK)
    {
      free (s);
      return sc_store_sqlite_error (err, store->db, rc, store->path, "starting a %s study",
                                    kind);
    }
  if ((rc = sc_store_upsert_model (store->db, model, &model_id, &mismatch)) != SQLITE_OK)
    goto fail;
  if (mismatch)
    {
      sc_store_study_abort (s);
      return sc_error_set (err, SC_ERR_FORMAT, "%s: the stored model with this SHA-256 has "
                           "another shape than %s (the row was damaged or edited)",
                           store->path, model->name);
    }
  if ((rc = sqlite3_prepare_v2 (store->db, "INSERT INTO studies (kind, model_id, params, "
                                "created) VALUES (?, ?, ?, ?)", -1, &st, NULL)) != SQLITE_OK)
    goto fail;
  sqlite3_bind_text (st, 1, kind, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 2, model_id);
  sqlite3_bind_text (st, 3, params, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 4, sc_store_now_ms ());
  rc = sqlite3_step (st);
  sqlite3_finalize (st);
  if (rc != SQLITE_DONE)
    goto fail;
  s->id = sqlite3_last_insert_rowid (store->db);
  if ((rc = sqlite3_prepare_v2 (store->db, "INSERT INTO study_heads (study_id, layer, head, "
                                "metric, value) VALUES (?, ?, ?, ?, ?)", -1, &s->add_head,
                                NULL)) != SQLITE_OK
      || (rc = sqlite3_prepare_v2 (store->db, "INSERT INTO study_series (study_id, series, "
                                   "pos, value) VALUES (?, ?, ?, ?)", -1, &s->add_series,
                                   NULL)) != SQLITE_OK)
    goto fail;
  *out = s;
  return SC_OK;

fail:
  {
    const ScStatus status = sc_store_sqlite_error (err, store->db, rc, store->path,
                                                   "starting a %s study", kind);
    sc_store_study_abort (s);
    return status;
  }
}

static void
bind_value (sqlite3_stmt *st, int i, double v)
{
  if (isfinite (v))
    sqlite3_bind_double (st, i, v);
  else
    sqlite3_bind_null (st, i); /* NaN (and infinities, which no study produces) */
}

ScStatus
sc_store_study_add_head (ScStoreStudy *s, int layer, int head, const char *metric,
                         double value, ScError *err)
{
  int rc;

  if (layer < 0 || (uint32_t) layer >= s->n_layers || head < 0
      || (uint32_t) head >= s->n_heads || metric == NULL || !good_name (metric, strlen (metric)))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: study %lld: no head L%d.H%d or bad "
                         "metric name", s->store->path, (long long) s->id, layer, head);
  sqlite3_reset (s->add_head);
  sqlite3_bind_int64 (s->add_head, 1, s->id);
  sqlite3_bind_int (s->add_head, 2, layer);
  sqlite3_bind_int (s->add_head, 3, head);
  sqlite3_bind_text (s->add_head, 4, metric, -1, SQLITE_TRANSIENT);
  bind_value (s->add_head, 5, value);
  if ((rc = sqlite3_step (s->add_head)) != SQLITE_DONE)
    return sc_store_sqlite_error (err, s->store->db, rc, s->store->path,
                                  "storing study %lld, head L%d.H%d %s", (long long) s->id,
                                  layer, head, metric);
  return SC_OK;
}

ScStatus
sc_store_study_add_series (ScStoreStudy *s, const char *series, int pos, double value,
                           ScError *err)
{
  int rc;

  if (pos < 0 || (uint32_t) pos >= SC_STORE_MAX_TOKENS || series == NULL
      || !good_name (series, strlen (series)))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: study %lld: bad series name or "
                         "position %d", s->store->path, (long long) s->id, pos);
  sqlite3_reset (s->add_series);
  sqlite3_bind_int64 (s->add_series, 1, s->id);
  sqlite3_bind_text (s->add_series, 2, series, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int (s->add_series, 3, pos);
  bind_value (s->add_series, 4, value);
  if ((rc = sqlite3_step (s->add_series)) != SQLITE_DONE)
    return sc_store_sqlite_error (err, s->store->db, rc, s->store->path,
                                  "storing study %lld, %s[%d]", (long long) s->id, series, pos);
  return SC_OK;
}

void
sc_store_study_abort (ScStoreStudy *s)
{
  if (s == NULL)
    return;
  sqlite3_finalize (s->add_head);
  sqlite3_finalize (s->add_series);
  if (!sqlite3_get_autocommit (s->store->db))
    sc_store_exec (s->store->db, "ROLLBACK");
  free (s);
}

ScStatus
sc_store_study_commit (ScStoreStudy *s, int64_t *study_id, ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStore *store = s->store;
  const int64_t id = s->id;
  int rc;

  sqlite3_finalize (s->add_head);
  sqlite3_finalize (s->add_series);
  s->add_head = s->add_series = NULL;
  if ((rc = sqlite3_prepare_v2 (store->db, "UPDATE studies SET status = 'complete' WHERE id = ?",
                                -1, &st, NULL)) == SQLITE_OK)
    {
      sqlite3_bind_int64 (st, 1, id);
      rc = sqlite3_step (st);
      sqlite3_finalize (st);
      if (rc == SQLITE_DONE)
        rc = sc_store_exec (store->db, "COMMIT");
    }
  if (rc != SQLITE_OK && rc != SQLITE_DONE)
    {
      const ScStatus status = sc_store_sqlite_error (err, store->db, rc, store->path,
                                                     "committing study %lld", (long long) id);
      sc_store_study_abort (s);
      return status;
    }
  free (s);
  if (study_id != NULL)
    *study_id = id;
  return SC_OK;
}

ScStatus
sc_store_find_study (ScStore *store, const char *kind,
                     const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params,
                     int64_t *study_id, ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStatus status;
  int rc;

  if (store->schema_version < 2)
    return sc_error_set (err, SC_ERR_NOT_FOUND, "%s has no studies (schema version %d)",
                         store->path, store->schema_version);
  rc = sqlite3_prepare_v2 (store->db, "SELECT s.id FROM studies s JOIN models m ON "
                           "m.id = s.model_id WHERE m.sha256 = ? AND s.kind = ? AND "
                           "s.params = ? AND s.status = 'complete' ORDER BY s.id DESC LIMIT 1",
                           -1, &st, NULL);
  if (rc != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "looking up a study");
  sqlite3_bind_blob (st, 1, sha256, SC_SHA256_DIGEST_SIZE, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, kind, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 3, params, -1, SQLITE_STATIC);
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW && sqlite3_column_int64 (st, 0) >= 1)
    {
      *study_id = sqlite3_column_int64 (st, 0);
      status = SC_OK;
    }
  else if (rc == SQLITE_ROW || rc == SQLITE_DONE)
    status = sc_error_set (err, SC_ERR_NOT_FOUND, "%s has no complete %s study with these "
                           "parameters for this model", store->path, kind);
  else
    status = sc_store_sqlite_error (err, store->db, rc, store->path, "looking up a study");
  sqlite3_finalize (st);
  return status;
}

void
sc_store_study_data_free (ScStoreStudyData *d)
{
  if (d == NULL)
    return;
  free (d->params);
  free (d->heads);
  free (d->series);
  free (d);
}

/* Copies a checked name column into @buf; false when it is not a good name. */
static bool
read_name (sqlite3_stmt *st, int col, char buf[SC_STORE_STUDY_NAME_MAX])
{
  const char *s = (const char *) sqlite3_column_text (st, col);
  const int len = sqlite3_column_bytes (st, col);

  if (sqlite3_column_type (st, col) != SQLITE_TEXT || s == NULL
      || !good_name (s, (size_t) len))
    return false;
  memcpy (buf, s, (size_t) len);
  buf[len] = '\0';
  return true;
}

/* A value column: REAL, or NULL for NaN; anything else (text, a blob, an integer that a
 * hand edit put there) is not ours. */
static bool
read_value (sqlite3_stmt *st, int col, double *v)
{
  switch (sqlite3_column_type (st, col))
    {
    case SQLITE_NULL:
      *v = NAN;
      return true;
    case SQLITE_FLOAT:
      *v = sqlite3_column_double (st, col);
      return isfinite (*v);
    default:
      return false;
    }
}

#define BAD(...)                                                                              \
  do                                                                                          \
    {                                                                                         \
      status = sc_error_set (err, SC_ERR_FORMAT, __VA_ARGS__);                                \
      goto out;                                                                               \
    }                                                                                         \
  while (0)

ScStatus
sc_store_read_study (ScStore *store, int64_t study_id, ScStoreStudyData **out, ScError *err)
{
  ScStoreStudyData *d = NULL;
  sqlite3_stmt *st = NULL;
  ScStatus status = SC_OK;
  const char *path = store->path;
  int64_t n_layers, n_heads, count;
  size_t cap, i;
  int rc;

  *out = NULL;
  if (store->schema_version < 2)
    return sc_error_set (err, SC_ERR_NOT_FOUND, "%s has no studies (schema version %d)", path,
                         store->schema_version);
  if ((d = calloc (1, sizeof *d)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "%s: out of memory", path);
  if ((rc = sc_store_exec (store->db, "BEGIN")) != SQLITE_OK)
    {
      free (d);
      return sc_store_sqlite_error (err, store->db, rc, path, "reading study %lld",
                                    (long long) study_id);
    }

  /* 1. The study and its model's shape. */
  rc = sqlite3_prepare_v2 (store->db, "SELECT s.kind, s.params, s.created, s.model_id, "
                           "m.n_layers, m.n_heads FROM studies s JOIN models m ON m.id = "
                           "s.model_id WHERE s.id = ? AND s.status = 'complete'", -1, &st, NULL);
  if (rc != SQLITE_OK)
    goto db_fail;
  sqlite3_bind_int64 (st, 1, study_id);
  if ((rc = sqlite3_step (st)) == SQLITE_DONE)
    {
      status = sc_error_set (err, SC_ERR_NOT_FOUND, "%s has no complete study %lld", path,
                             (long long) study_id);
      goto out;
    }
  if (rc != SQLITE_ROW)
    goto db_fail;
  d->id = study_id;
  if (!read_name (st, 0, d->kind))
    BAD ("%s: study %lld: its kind is not a name Saccade writes", path, (long long) study_id);
  if (sqlite3_column_type (st, 1) != SQLITE_TEXT
      || (size_t) sqlite3_column_bytes (st, 1) > SC_STORE_STUDY_MAX_PARAMS)
    BAD ("%s: study %lld: params is not a text of at most %u bytes", path,
         (long long) study_id, SC_STORE_STUDY_MAX_PARAMS);
  if ((d->params = strndup ((const char *) sqlite3_column_text (st, 1),
                            (size_t) sqlite3_column_bytes (st, 1))) == NULL)
    {
      status = sc_error_set (err, SC_ERR_NOMEM, "%s: out of memory", path);
      goto out;
    }
  d->created_ms = sqlite3_column_int64 (st, 2);
  d->model_id = sqlite3_column_int64 (st, 3);
  n_layers = sqlite3_column_int64 (st, 4);
  n_heads = sqlite3_column_int64 (st, 5);
  /* the type first: text or a real would read as some integer (issue 25's hostile stores) */
  if (sqlite3_column_type (st, 2) != SQLITE_INTEGER)
    BAD ("%s: study %lld: created is not an integer time", path, (long long) study_id);
  if (d->created_ms < 0 || d->created_ms > SC_STORE_MAX_TIME_MS)
    BAD ("%s: study %lld: created %lld is not a time Saccade writes", path,
         (long long) study_id, (long long) d->created_ms);
  if (n_layers < 1 || n_layers > SC_STORE_MAX_LAYERS || n_heads < 1
      || n_heads > SC_STORE_MAX_HEADS || n_layers * n_heads > SC_STORE_MAX_RUN_HEADS)
    BAD ("%s: study %lld: its model (row %lld) claims %lld layers x %lld heads", path,
         (long long) study_id, (long long) d->model_id, (long long) n_layers,
         (long long) n_heads);
  d->n_layers = (int) n_layers;
  d->n_heads = (int) n_heads;
  sqlite3_finalize (st);
  st = NULL;

  /* 2. Head values: counted first, so the allocation is bounded by what the model allows
   * (a hostile count cannot size it). */
  rc = sqlite3_prepare_v2 (store->db, "SELECT count(*) FROM study_heads WHERE study_id = ?", -1,
                           &st, NULL);
  if (rc != SQLITE_OK)
    goto db_fail;
  sqlite3_bind_int64 (st, 1, study_id);
  if ((rc = sqlite3_step (st)) != SQLITE_ROW)
    goto db_fail;
  count = sqlite3_column_int64 (st, 0);
  sqlite3_finalize (st);
  st = NULL;
  if (count < 0 || count > n_layers * n_heads * (int64_t) SC_STORE_STUDY_MAX_METRICS)
    BAD ("%s: study %lld holds %lld head values, more than %lld layers x %lld heads x %u "
         "metrics", path, (long long) study_id, (long long) count, (long long) n_layers,
         (long long) n_heads, SC_STORE_STUDY_MAX_METRICS);
  cap = (size_t) count;
  if (cap > 0 && (d->heads = malloc (cap * sizeof *d->heads)) == NULL)
    {
      status = sc_error_set (err, SC_ERR_NOMEM, "%s: out of memory", path);
      goto out;
    }
  rc = sqlite3_prepare_v2 (store->db, "SELECT layer, head, metric, value FROM study_heads "
                           "WHERE study_id = ? ORDER BY layer, head, metric", -1, &st, NULL);
  if (rc != SQLITE_OK)
    goto db_fail;
  sqlite3_bind_int64 (st, 1, study_id);
  for (i = 0; (rc = sqlite3_step (st)) == SQLITE_ROW; i++)
    {
      ScStoreHeadValue *v = &d->heads[i];
      const int64_t l = sqlite3_column_int64 (st, 0), h = sqlite3_column_int64 (st, 1);
      if (i >= cap)
        BAD ("%s: study %lld: its head values changed while read", path, (long long) study_id);
      if (sqlite3_column_type (st, 0) != SQLITE_INTEGER || l < 0 || l >= n_layers
          || sqlite3_column_type (st, 1) != SQLITE_INTEGER || h < 0 || h >= n_heads)
        BAD ("%s: study %lld: a value for head L%lld.H%lld, outside the model's %lld layers x "
             "%lld heads", path, (long long) study_id, (long long) l, (long long) h,
             (long long) n_layers, (long long) n_heads);
      v->layer = (int) l;
      v->head = (int) h;
      if (!read_name (st, 2, v->metric))
        BAD ("%s: study %lld: head L%lld.H%lld has a metric name Saccade does not write", path,
             (long long) study_id, (long long) l, (long long) h);
      if (!read_value (st, 3, &v->value))
        BAD ("%s: study %lld: head L%lld.H%lld %s is not a finite REAL or NULL", path,
             (long long) study_id, (long long) l, (long long) h, v->metric);
    }
  if (rc != SQLITE_DONE)
    goto db_fail;
  d->n_head_values = i;
  sqlite3_finalize (st);
  st = NULL;

  /* 3. Series values, the same way. */
  rc = sqlite3_prepare_v2 (store->db, "SELECT count(*), count(DISTINCT series) FROM "
                           "study_series WHERE study_id = ?", -1, &st, NULL);
  if (rc != SQLITE_OK)
    goto db_fail;
  sqlite3_bind_int64 (st, 1, study_id);
  if ((rc = sqlite3_step (st)) != SQLITE_ROW)
    goto db_fail;
  count = sqlite3_column_int64 (st, 0);
  if (sqlite3_column_int64 (st, 1) > SC_STORE_STUDY_MAX_SERIES
      || count > (int64_t) SC_STORE_STUDY_MAX_SERIES * SC_STORE_MAX_TOKENS || count < 0)
    BAD ("%s: study %lld holds %lld series values in %lld series (at most %u series of %u "
         "positions)", path, (long long) study_id, (long long) count,
         (long long) sqlite3_column_int64 (st, 1), SC_STORE_STUDY_MAX_SERIES,
         SC_STORE_MAX_TOKENS);
  sqlite3_finalize (st);
  st = NULL;
  cap = (size_t) count;
  if (cap > 0 && (d->series = malloc (cap * sizeof *d->series)) == NULL)
    {
      status = sc_error_set (err, SC_ERR_NOMEM, "%s: out of memory", path);
      goto out;
    }
  rc = sqlite3_prepare_v2 (store->db, "SELECT series, pos, value FROM study_series WHERE "
                           "study_id = ? ORDER BY series, pos", -1, &st, NULL);
  if (rc != SQLITE_OK)
    goto db_fail;
  sqlite3_bind_int64 (st, 1, study_id);
  for (i = 0; (rc = sqlite3_step (st)) == SQLITE_ROW; i++)
    {
      ScStoreSeriesValue *v = &d->series[i];
      const int64_t pos = sqlite3_column_int64 (st, 1);
      if (i >= cap)
        BAD ("%s: study %lld: its series changed while read", path, (long long) study_id);
      if (!read_name (st, 0, v->series))
        BAD ("%s: study %lld: a series name Saccade does not write", path,
             (long long) study_id);
      if (sqlite3_column_type (st, 1) != SQLITE_INTEGER || pos < 0
          || pos >= SC_STORE_MAX_TOKENS)
        BAD ("%s: study %lld: %s has position %lld (0 to %u)", path, (long long) study_id,
             v->series, (long long) pos, SC_STORE_MAX_TOKENS - 1);
      v->pos = (int) pos;
      if (!read_value (st, 2, &v->value))
        BAD ("%s: study %lld: %s[%lld] is not a finite REAL or NULL", path,
             (long long) study_id, v->series, (long long) pos);
    }
  if (rc != SQLITE_DONE)
    goto db_fail;
  d->n_series_values = i;
  goto out;

db_fail:
  status = sc_store_sqlite_error (err, store->db, rc, path, "reading study %lld",
                                  (long long) study_id);
out:
  sqlite3_finalize (st);
  if (!sqlite3_get_autocommit (store->db))
    sc_store_exec (store->db, "COMMIT");
  if (status != SC_OK)
    {
      sc_store_study_data_free (d);
      return status;
    }
  *out = d;
  return SC_OK;
}

void
sc_store_study_refs_free (ScStoreStudyRef *refs, size_t n)
{
  for (size_t i = 0; refs != NULL && i < n; i++)
    {
      free (refs[i].params);
      free (refs[i].model_name);
    }
  free (refs);
}

ScStatus
sc_store_list_studies (ScStore *store, const char *kind, ScStoreStudyRef **out, size_t *n,
                       ScError *err)
{
  ScStoreStudyRef *v = NULL;
  sqlite3_stmt *st = NULL;
  ScStatus status = SC_OK;
  size_t len = 0, cap = 0;
  int rc;

  *out = NULL;
  *n = 0;
  if (store->schema_version < 2)
    return SC_OK;
  if ((rc = sqlite3_prepare_v2 (store->db, "SELECT s.id, s.params, m.sha256, m.n_layers, "
                                "m.n_heads, m.n_vocab, m.name FROM studies s JOIN models m "
                                "ON m.id = s.model_id WHERE s.kind = ? AND s.status = 'complete' "
                                "ORDER BY s.id", -1, &st, NULL)) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "listing %s studies", kind);
  sqlite3_bind_text (st, 1, kind, -1, SQLITE_STATIC);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      const int64_t id = sqlite3_column_int64 (st, 0), nl = sqlite3_column_int64 (st, 3),
                    nh = sqlite3_column_int64 (st, 4), nv = sqlite3_column_int64 (st, 5);
      ScStoreStudyRef *r;
      if (sqlite3_column_type (st, 1) != SQLITE_TEXT
          || (size_t) sqlite3_column_bytes (st, 1) > SC_STORE_STUDY_MAX_PARAMS
          || sqlite3_column_type (st, 2) != SQLITE_BLOB
          || sqlite3_column_bytes (st, 2) != SC_SHA256_DIGEST_SIZE || nl < 1
          || nl > SC_STORE_MAX_LAYERS || nh < 1 || nh > SC_STORE_MAX_HEADS
          || nl * nh > SC_STORE_MAX_RUN_HEADS || nv < 1 || nv > INT32_MAX
          || sqlite3_column_type (st, 6) != SQLITE_TEXT
          || (size_t) sqlite3_column_bytes (st, 6) > SC_STORE_MAX_NAME_BYTES)
        {
          status = sc_error_set (err, SC_ERR_FORMAT, "%s: study %lld: its params or its "
                                 "model's hash or dimensions are not what Saccade writes; "
                                 "the file was edited or is damaged", store->path,
                                 (long long) id);
          break;
        }
      if (len == cap)
        {
          ScStoreStudyRef *grown = realloc (v, (cap = cap ? 2 * cap : 16) * sizeof *v);
          if (grown == NULL)
            {
              status = sc_error_set (err, SC_ERR_NOMEM, "%s: out of memory", store->path);
              break;
            }
          v = grown;
        }
      r = &v[len];
      r->model_name = NULL;
      if ((r->params = strndup ((const char *) sqlite3_column_text (st, 1),
                                (size_t) sqlite3_column_bytes (st, 1))) == NULL
          || (r->model_name = strndup ((const char *) sqlite3_column_text (st, 6),
                                       (size_t) sqlite3_column_bytes (st, 6))) == NULL)
        {
          free (r->params);
          status = sc_error_set (err, SC_ERR_NOMEM, "%s: out of memory", store->path);
          break;
        }
      len++;
      r->id = id;
      memcpy (r->model_sha256, sqlite3_column_blob (st, 2), SC_SHA256_DIGEST_SIZE);
      r->n_layers = (uint32_t) nl;
      r->n_heads = (uint32_t) nh;
      r->n_vocab = (uint32_t) nv;
    }
  if (status == SC_OK && rc != SQLITE_DONE)
    status = sc_store_sqlite_error (err, store->db, rc, store->path, "listing %s studies",
                                    kind);
  sqlite3_finalize (st);
  if (status != SC_OK)
    {
      sc_store_study_refs_free (v, len);
      return status;
    }
  *out = v;
  *n = len;
  return SC_OK;
}
