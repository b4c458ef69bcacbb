/* sc-store-scores.c — a run's head statistics in head_scores (sc-store-scores.h).
 *
 * Reading, in passes:
 *   1. the run (sc_store_get_run: checked against its model);
 *   2. every head_scores row of the run, each checked before use (the layer and head
 *      against the run, the metric's type and name, the value's type and range, no
 *      duplicate) into a (layer, head, score) table with a "present" flag;
 *   3. for each head with a score missing: the head (sc_store_read_head, checked there)
 *      and sc_head_stats_compute; stored values are kept, only the missing are filled;
 *   4. on a writable store without an open capture, the computed scores in one
 *      transaction (INSERT OR IGNORE: another process may have stored them meanwhile).
 * The writer thread's half (sc_store_scores_insert) is here too, so that the mapping from
 * ScHeadStats to rows exists once.
 */
#include "store/sc-store-scores.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sc-store-private.h"

static const char *const extra_ids[2] = {
  SC_STORE_SCORE_LAST_TOP_KEY,
  SC_STORE_SCORE_LAST_TOP_WEIGHT,
};

/* The longest metric id we write ("previous-token"), with room: a longer cell is not
 * ours, and is never loaded whole (the query cuts it). */
#define MAX_ID_BYTES 64

const char *
sc_store_score_id (int k)
{
  if (k >= 0 && k < SC_HEAD_N_METRICS)
    return sc_head_metric_id ((ScHeadMetric) k);
  if (k >= SC_HEAD_N_METRICS && k < SC_STORE_N_SCORES)
    return extra_ids[k - SC_HEAD_N_METRICS];
  return NULL;
}

/* Score @k of @s. */
static double
score_get (const ScHeadStats *s, int k)
{
  if (k < SC_HEAD_N_METRICS)
    return sc_head_stats_get (s, (ScHeadMetric) k);
  return k == SC_HEAD_N_METRICS ? (double) s->last_top : s->last_top_weight;
}

/* Sets score @k of @s to @v (the inverse of score_get; the field for each metric is the
 * one sc_head_stats_get reads). */
static void
score_set (ScHeadStats *s, int k, double v)
{
  switch (k)
    {
    case SC_HEAD_METRIC_ENTROPY: s->entropy = v; break;
    case SC_HEAD_METRIC_ENTROPY_NORM: s->entropy_norm = v; break;
    case SC_HEAD_METRIC_DISTANCE: s->distance = v; break;
    case SC_HEAD_METRIC_CONFIDENCE: s->confidence = v; break;
    case SC_HEAD_METRIC_SINK: s->sink = v; break;
    case SC_HEAD_METRIC_SINK_K: s->sink_k = v; break;
    case SC_HEAD_METRIC_PREVIOUS: s->previous = v; break;
    case SC_HEAD_METRIC_SELF: s->self = v; break;
    case SC_HEAD_METRIC_LAST_ENTROPY: s->last_entropy = v; break;
    case SC_HEAD_N_METRICS:
      /* a key position; NaN (a head the run did not keep) has none: 0 with its weight NaN,
       * so that the contract (a position of the run, an index callers may use unchecked)
       * holds. Converting the NaN itself was undefined behaviour (fuzz-store under UBSan,
       * on a run of chosen heads). */
      s->last_top = isfinite (v) ? (int) v : 0;
      break;
    default: s->last_top_weight = v; break;
    }
}

static int
score_from_id (const char *id)
{
  for (int k = 0; k < SC_STORE_N_SCORES; k++)
    if (strcmp (id, sc_store_score_id (k)) == 0)
      return k;
  return -1;
}

int
sc_store_scores_insert (sqlite3_stmt *st, int64_t run_id, int layer, int head,
                        const ScHeadStats *stats, const bool *only)
{
  for (int k = 0; k < SC_STORE_N_SCORES; k++)
    {
      const double v = score_get (stats, k);
      int rc;

      if (only != NULL && !only[k])
        continue;
      sqlite3_bind_int64 (st, 1, run_id);
      sqlite3_bind_int (st, 2, layer);
      sqlite3_bind_int (st, 3, head);
      sqlite3_bind_text (st, 4, sc_store_score_id (k), -1, SQLITE_STATIC);
      if (isfinite (v))
        sqlite3_bind_double (st, 5, v);
      else
        sqlite3_bind_null (st, 5);
      rc = sqlite3_step (st);
      sqlite3_reset (st);
      if (rc != SQLITE_DONE)
        return rc;
    }
  return SQLITE_DONE;
}

void
sc_store_head_scores_clear (ScStoreHeadScores *s)
{
  if (s == NULL)
    return;
  free (s->stats);
  free (s->kept);
  memset (s, 0, sizeof *s);
}

/* SC_ERR_FORMAT for head_scores row @rowid of run @run_id, with the advice the other
 * readers give. */
static ScStatus
bad_score (const ScStore *store, int64_t run_id, int64_t rowid, ScError *err, const char *fmt,
           ...) __attribute__ ((format (printf, 5, 6)));

static ScStatus
bad_score (const ScStore *store, int64_t run_id, int64_t rowid, ScError *err, const char *fmt,
           ...)
{
  char what[256];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (what, sizeof what, fmt, ap);
  va_end (ap);
  return sc_error_set (err, SC_ERR_FORMAT,
                       "%s: run %lld: head_scores row %lld: %s; the store was edited or is "
                       "damaged: delete the run (saccade rm %lld) or use a clean copy of the "
                       "store", store->path, (long long) run_id, (long long) rowid, what,
                       (long long) run_id);
}

/* What a cell is, for a message. */
static const char *
type_name (int type)
{
  switch (type)
    {
    case SQLITE_INTEGER: return "an integer";
    case SQLITE_FLOAT: return "a real";
    case SQLITE_TEXT: return "text";
    case SQLITE_BLOB: return "a blob";
    default: return "NULL";
    }
}

/* A layer or head column (@col) that is not an integer in [0, @n). */
static ScStatus
bad_column (const ScStore *store, const ScStoreHeadScores *s, sqlite3_stmt *st, int col,
            int64_t rowid, const char *what, uint32_t n, ScError *err)
{
  if (sqlite3_column_type (st, col) != SQLITE_INTEGER)
    return bad_score (store, s->run_id, rowid, err, "%s is %s, not an integer", what,
                      type_name (sqlite3_column_type (st, col)));
  return bad_score (store, s->run_id, rowid, err, "%s is %lld, outside the run's 0..%u", what,
                    (long long) sqlite3_column_int64 (st, col), n - 1);
}

/* Whether the run kept head (@layer, @head) (in range). */
static bool
head_kept (const ScStoreHeadScores *s, uint32_t layer, uint32_t head)
{
  const size_t bit = (size_t) layer * s->n_heads + head;
  return s->kept == NULL || ((s->kept[bit / 8] >> (bit % 8)) & 1u);
}

/* Pass 2. @present (n_layers * n_heads * SC_STORE_N_SCORES) is zeroed by the caller. */
static ScStatus
read_rows (ScStore *store, const ScStoreHeadScores *s, bool *present, ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStatus status = SC_OK;
  int rc;

  rc = sqlite3_prepare_v2 (store->db,
                           "SELECT id, layer, head, typeof (metric), "
                           "CASE WHEN typeof (metric) = 'text' AND length (CAST (metric AS BLOB)) "
                           "<= 64 THEN metric END, value FROM head_scores WHERE run_id = ?",
                           -1, &st, NULL);
  if (rc != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path,
                                  "reading the head scores of run %lld", (long long) s->run_id);
  sqlite3_bind_int64 (st, 1, s->run_id);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      const int64_t rowid = sqlite3_column_int64 (st, 0);
      const char *type = (const char *) sqlite3_column_text (st, 3);
      const char *id = (const char *) sqlite3_column_text (st, 4);
      const int vt = sqlite3_column_type (st, 5);
      int64_t layer, head;
      double v = NAN;
      int k;
      size_t at;

      if (sqlite3_column_type (st, 1) != SQLITE_INTEGER
          || (layer = sqlite3_column_int64 (st, 1)) < 0 || layer >= s->n_layers)
        {
          status = bad_column (store, s, st, 1, rowid, "layer", s->n_layers, err);
          break;
        }
      if (sqlite3_column_type (st, 2) != SQLITE_INTEGER
          || (head = sqlite3_column_int64 (st, 2)) < 0 || head >= s->n_heads)
        {
          status = bad_column (store, s, st, 2, rowid, "head", s->n_heads, err);
          break;
        }
      if (type == NULL || strcmp (type, "text") != 0 || id == NULL || (k = score_from_id (id)) < 0)
        {
          char q[MAX_ID_BYTES + 16];

          if (id != NULL)
            sc_store_quote (id, strlen (id), q, sizeof q);
          status = bad_score (store, s->run_id, rowid, err, "metric %s is not one Saccade "
                              "stores", id != NULL ? q : type != NULL && strcmp (type, "text") == 0
                                                     ? "(a long text)" : "(not text)");
          break;
        }
      if (vt == SQLITE_INTEGER || vt == SQLITE_FLOAT)
        v = sqlite3_column_double (st, 5);
      else if (vt != SQLITE_NULL)
        {
          status = bad_score (store, s->run_id, rowid, err, "the value of %s is %s, not a "
                              "number", id, type_name (vt));
          break;
        }
      if (vt != SQLITE_NULL && !isfinite (v))
        {
          status = bad_score (store, s->run_id, rowid, err, "the value of %s is %g, not finite",
                              id, v);
          break;
        }
      if (k == SC_HEAD_N_METRICS && !(vt != SQLITE_NULL && v >= 0 && v < s->n_tokens && v == floor (v)))
        {
          status = bad_score (store, s->run_id, rowid, err, "the last top key is %g, not a "
                              "position 0..%u of the run", v, s->n_tokens - 1);
          break;
        }
      if (!head_kept (s, (uint32_t) layer, (uint32_t) head))
        {
          status = bad_score (store, s->run_id, rowid, err, "layer %lld head %lld has a score, "
                              "but the run did not keep that head", (long long) layer,
                              (long long) head);
          break;
        }
      at = ((size_t) layer * s->n_heads + (size_t) head) * SC_STORE_N_SCORES + (size_t) k;
      if (present[at])
        {
          status = bad_score (store, s->run_id, rowid, err, "layer %lld head %lld has %s twice",
                              (long long) layer, (long long) head, id);
          break;
        }
      present[at] = true;
      score_set (&s->stats[(size_t) layer * s->n_heads + (size_t) head], k, v);
    }
  if (status == SC_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
    status = sc_store_sqlite_error (err, store->db, rc, store->path,
                                    "reading the head scores of run %lld", (long long) s->run_id);
  sqlite3_finalize (st);
  return status;
}

/* Pass 4: the scores not in @present, in one transaction. Returns whether they were
 * stored. */
static bool
store_missing (ScStore *store, const ScStoreHeadScores *s, const bool *present)
{
  sqlite3_stmt *st = NULL;
  bool ok;
  int rc;

  /* A cache write: never wait for another writer (a capture holds the lock for its whole
   * forward pass); the store's busy timeout is restored after the attempt. */
  sqlite3_busy_timeout (store->db, 0);
  rc = sc_store_exec (store->db, "BEGIN IMMEDIATE");
  sqlite3_busy_timeout (store->db, store->busy_ms > 0 ? store->busy_ms : 0);
  if (rc != SQLITE_OK)
    return false;
  rc = sqlite3_prepare_v2 (store->db, SC_STORE_SCORES_INSERT_SQL, -1, &st, NULL);
  for (uint32_t l = 0; rc == SQLITE_OK && l < s->n_layers; l++)
    for (uint32_t h = 0; rc == SQLITE_OK && h < s->n_heads; h++)
      {
        const size_t head = (size_t) l * s->n_heads + h;
        bool only[SC_STORE_N_SCORES], any = false;

        if (!head_kept (s, l, h))
          continue;
        for (int k = 0; k < SC_STORE_N_SCORES; k++)
          any |= only[k] = !present[head * SC_STORE_N_SCORES + k];
        if (any && sc_store_scores_insert (st, s->run_id, (int) l, (int) h, &s->stats[head],
                                           only) != SQLITE_DONE)
          rc = SQLITE_ERROR;
      }
  sqlite3_finalize (st);
  ok = rc == SQLITE_OK && sc_store_exec (store->db, "COMMIT") == SQLITE_OK;
  if (!ok && !sqlite3_get_autocommit (store->db))
    sc_store_exec (store->db, "ROLLBACK");
  return ok;
}

ScStatus
sc_store_read_head_scores (ScStore *store, int64_t run_id, ScStoreHeadScores *out,
                           ScError *err)
{
  ScStoreHeadScores s = { 0 };
  ScStoreRunInfo info = { 0 };
  bool *present = NULL, own = false;
  size_t n_heads, n_missing = 0;
  ScStatus status;

  memset (out, 0, sizeof *out);
  /* One snapshot for the run and its rows (a writer may add or delete runs meanwhile). */
  if (sqlite3_get_autocommit (store->db))
    own = sc_store_exec (store->db, "BEGIN") == SQLITE_OK;
  if ((status = sc_store_get_run (store, run_id, &info, err)) != SC_OK)
    goto out;
  s.run_id = run_id;
  s.n_layers = info.n_layers;
  s.n_heads = info.n_heads;
  s.n_kv_heads = info.n_kv_heads;
  s.n_tokens = info.n_tokens;
  s.n_kept = info.n_kept;
  s.kept = info.kept; /* taken over: info.kept is NULL from here */
  info.kept = NULL;
  n_heads = (size_t) s.n_layers * s.n_heads; /* <= SC_STORE_MAX_RUN_HEADS: the contract */
  s.stats = calloc (n_heads, sizeof *s.stats);
  present = calloc (n_heads * SC_STORE_N_SCORES, sizeof *present);
  if (s.stats == NULL || present == NULL)
    {
      status = sc_error_set (err, SC_ERR_NOMEM, "%s: run %lld: out of memory for %zu heads' "
                             "scores", store->path, (long long) run_id, n_heads);
      goto out;
    }
  if ((status = read_rows (store, &s, present, err)) != SC_OK)
    goto out;

  /* Pass 3. */
  for (size_t h = 0; h < n_heads; h++)
    {
      bool missing = false;

      if (!head_kept (&s, (uint32_t) (h / s.n_heads), (uint32_t) (h % s.n_heads)))
        {
          for (int k = 0; k < SC_STORE_N_SCORES; k++)
            score_set (&s.stats[h], k, NAN);
          continue;
        }
      for (int k = 0; k < SC_STORE_N_SCORES; k++)
        missing |= !present[h * SC_STORE_N_SCORES + k];
      if (!missing)
        continue;
      {
        const int layer = (int) (h / s.n_heads), head = (int) (h % s.n_heads);
        ScStoreHead hd = { 0 };
        ScHeadStats fresh;

        if ((status = sc_store_read_head (store, run_id, layer, head, &hd, err)) != SC_OK)
          goto out;
        status = sc_head_stats_compute (hd.probs, (int) hd.n_query, (int) hd.n_key, NULL, &fresh,
                                        err);
        sc_store_head_clear (&hd);
        if (status != SC_OK)
          goto out;
        for (int k = 0; k < SC_STORE_N_SCORES; k++)
          if (!present[h * SC_STORE_N_SCORES + k])
            {
              score_set (&s.stats[h], k, score_get (&fresh, k));
              n_missing++;
            }
      }
    }
  if (own)
    {
      sc_store_exec (store->db, "COMMIT");
      own = false;
    }
  s.computed = n_missing > 0;
  /* Pass 4. */
  if (s.computed && store->writable && store->capture == NULL)
    s.stored = store_missing (store, &s, present);

out:
  if (own && !sqlite3_get_autocommit (store->db))
    sc_store_exec (store->db, "COMMIT");
  sc_store_run_info_clear (&info);
  free (present);
  if (status != SC_OK)
    sc_store_head_scores_clear (&s);
  else
    *out = s;
  return status;
}
