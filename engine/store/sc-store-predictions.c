/* sc-store-predictions.c — a run's next-token predictions in the store (see the header):
 * the copy a capture keeps until its commit, the rows the writer inserts in the run's
 * transaction, and the checked reader.
 *
 * Reading is done in two passes, as the tokens are (sc-store-read.c): first the counts —
 * rows, the largest rank, the pieces' bytes — checked against the run before anything is
 * allocated, then the rows in (pos, rank) order, each checked as it comes.
 */
#include "store/sc-store-predictions.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/sc-store-private.h"

void
sc_store_predictions_clear (ScStorePredictions *p)
{
  if (p == NULL)
    return;
  free (p->ids);
  free (p->logits);
  free (p->probs);
  sc_store_tokens_free (p->pieces);
  memset (p, 0, sizeof *p);
}

/* The bytes of @t the store keeps: all of them up to SC_STORE_MAX_PREDICTION_PIECE_BYTES;
 * past it, the first 256 moved back before a UTF-8 sequence the cut would split (a
 * continuation byte 10xxxxxx at the cut; at most 3 steps, so a piece that is not UTF-8 is
 * still cut near 256). */
static uint32_t
piece_stored_len (const ScStoreToken *t)
{
  uint32_t len = SC_STORE_MAX_PREDICTION_PIECE_BYTES;

  if (t->len <= len)
    return t->len;
  for (int back = 0; back < 3 && (t->piece[len] & 0xc0) == 0x80; back++)
    len--;
  return len;
}

ScStatus
sc_store_predictions_copy (ScStorePredictions *dst, uint32_t n_positions, uint32_t k,
                           const int32_t *ids, const float *logits, const double *probs,
                           const ScStoreToken *pieces, ScError *err)
{
  const size_t n = (size_t) n_positions * k;
  size_t bytes = 0;
  uint8_t *at;

  memset (dst, 0, sizeof *dst);
  if (k < 1 || k > SC_STORE_MAX_PREDICTIONS_K || n_positions < 1 || ids == NULL
      || probs == NULL || pieces == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "predictions: %u positions of %u (1 to %u "
                         "a position), ids, probabilities and pieces needed", n_positions, k,
                         SC_STORE_MAX_PREDICTIONS_K);
  for (size_t i = 0; i < n; i++)
    {
      if (!(probs[i] >= 0.0 && probs[i] <= 1.0))
        return sc_error_set (err, SC_ERR_INVALID_ARG, "predictions: position %zu rank %zu has "
                             "probability %g", i / k, i % k, probs[i]);
      if (pieces[i].len > SC_STORE_MAX_PIECE_BYTES || (pieces[i].len > 0 && !pieces[i].piece))
        return sc_error_set (err, SC_ERR_INVALID_ARG, "predictions: position %zu rank %zu: a "
                             "piece of %u bytes", i / k, i % k, pieces[i].len);
      bytes += piece_stored_len (&pieces[i]);
    }
  dst->ids = malloc (n * sizeof *dst->ids);
  dst->logits = malloc (n * sizeof *dst->logits);
  dst->probs = malloc (n * sizeof *dst->probs);
  dst->pieces = malloc (n * sizeof *dst->pieces + bytes + 1);
  if (dst->ids == NULL || dst->logits == NULL || dst->probs == NULL || dst->pieces == NULL)
    {
      sc_store_predictions_clear (dst);
      return sc_error_set (err, SC_ERR_NOMEM, "out of memory for %zu predictions", n);
    }
  memcpy (dst->ids, ids, n * sizeof *ids);
  memcpy (dst->probs, probs, n * sizeof *probs);
  for (size_t i = 0; i < n; i++)
    dst->logits[i] = logits != NULL ? logits[i] : NAN;
  at = (uint8_t *) (dst->pieces + n);
  for (size_t i = 0; i < n; i++)
    {
      const uint32_t len = piece_stored_len (&pieces[i]);
      if (len > 0)
        memcpy (at, pieces[i].piece, len);
      dst->pieces[i] = (ScStoreToken) { ids[i], len, at };
      at += len;
    }
  dst->n_positions = n_positions;
  dst->k = k;
  return SC_OK;
}

int
sc_store_predictions_insert (sqlite3 *db, int64_t run_id, const ScStorePredictions *p)
{
  sqlite3_stmt *st = NULL;
  int rc;

  rc = sqlite3_prepare_v2 (db, "INSERT INTO predictions (run_id, pos, rank, token_id, piece, "
                               "logit, prob) VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &st, NULL);
  if (rc != SQLITE_OK)
    return rc;
  rc = SQLITE_DONE;
  for (uint32_t pos = 0; pos < p->n_positions && rc == SQLITE_DONE; pos++)
    for (uint32_t r = 0; r < p->k && rc == SQLITE_DONE; r++)
      {
        const size_t i = (size_t) pos * p->k + r;
        sqlite3_bind_int64 (st, 1, run_id);
        sqlite3_bind_int64 (st, 2, pos);
        sqlite3_bind_int64 (st, 3, r);
        sqlite3_bind_int64 (st, 4, p->ids[i]);
        sqlite3_bind_blob (st, 5, p->pieces[i].len > 0 ? (const void *) p->pieces[i].piece : "",
                           (int) p->pieces[i].len, SQLITE_STATIC);
        if (isfinite (p->logits[i]))
          sqlite3_bind_double (st, 6, p->logits[i]);
        else
          sqlite3_bind_null (st, 6);
        sqlite3_bind_double (st, 7, p->probs[i]);
        rc = sqlite3_step (st);
        sqlite3_reset (st);
      }
  sqlite3_finalize (st);
  return rc;
}

/* Pass 1 found more piece bytes than the rows may hold: the first piece too long (or not a
 * BLOB), named by position and rank. length() reads a BLOB's size from its record header,
 * not the BLOB. */
static ScStatus
long_piece (ScStore *store, const ScStoreRunShape *r, int64_t total, ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStatus status;
  int rc;

  rc = sqlite3_prepare_v2 (store->db, "SELECT pos, rank, length(piece), typeof(piece) FROM "
                           "predictions WHERE run_id = ? AND (typeof(piece) <> 'blob' OR "
                           "length(piece) > ?) ORDER BY pos, rank LIMIT 1", -1, &st, NULL);
  if (rc == SQLITE_OK)
    {
      sqlite3_bind_int64 (st, 1, r->id);
      sqlite3_bind_int64 (st, 2, SC_STORE_MAX_PREDICTION_PIECE_BYTES);
      rc = sqlite3_step (st);
    }
  if (rc == SQLITE_ROW && strcmp ((const char *) sqlite3_column_text (st, 3), "blob") != 0)
    status = sc_store_bad_run (store, r->id, err, "prediction (%lld, %lld): its piece is "
                               "%s, not a BLOB", (long long) sqlite3_column_int64 (st, 0),
                               (long long) sqlite3_column_int64 (st, 1),
                               (const char *) sqlite3_column_text (st, 3));
  else if (rc == SQLITE_ROW)
    status = sc_store_bad_run (store, r->id, err, "prediction (%lld, %lld): its piece is "
                               "a %lld-byte %s, more than the %u bytes a vocabulary piece "
                               "may have (pieces are untrusted: a long one would hang the "
                               "window)", (long long) sqlite3_column_int64 (st, 0),
                               (long long) sqlite3_column_int64 (st, 1),
                               (long long) sqlite3_column_int64 (st, 2),
                               (const char *) sqlite3_column_text (st, 3),
                               SC_STORE_MAX_PREDICTION_PIECE_BYTES);
  else
    status = sc_store_bad_run (store, r->id, err, "predictions pieces of %lld bytes in all, "
                               "more than %u a row", (long long) total,
                               SC_STORE_MAX_PREDICTION_PIECE_BYTES);
  sqlite3_finalize (st);
  return status;
}

/* Pass 1: how many rows, the largest rank and the pieces' bytes, checked against the run. */
static ScStatus
prediction_totals (ScStore *store, const ScStoreRunShape *r, uint32_t *k, size_t *bytes,
                   ScError *err)
{
  sqlite3_stmt *st = NULL;
  int64_t rows = 0, max_rank = -1, total = 0;
  int rc;

  rc = sqlite3_prepare_v2 (store->db, "SELECT count(*), max(rank), sum(length(piece)) FROM "
                                      "predictions WHERE run_id = ?", -1, &st, NULL);
  if (rc == SQLITE_OK)
    {
      sqlite3_bind_int64 (st, 1, r->id);
      rc = sqlite3_step (st);
    }
  if (rc != SQLITE_ROW)
    {
      sqlite3_finalize (st);
      return sc_store_sqlite_error (err, store->db, rc, store->path, "reading run %lld's "
                                    "predictions", (long long) r->id);
    }
  rows = sqlite3_column_int64 (st, 0);
  if (rows > 0)
    {
      max_rank = sqlite3_column_type (st, 1) == SQLITE_INTEGER ? sqlite3_column_int64 (st, 1)
                                                               : -1;
      total = sqlite3_column_type (st, 2) == SQLITE_INTEGER ? sqlite3_column_int64 (st, 2) : -1;
    }
  sqlite3_finalize (st);
  *k = 0;
  *bytes = 0;
  if (rows == 0)
    return SC_OK;
  if (max_rank < 0 || max_rank >= (int64_t) SC_STORE_MAX_PREDICTIONS_K)
    return sc_store_bad_run (store, r->id, err, "predictions rank up to %lld (at most %u "
                             "predictions a position)", (long long) max_rank,
                             SC_STORE_MAX_PREDICTIONS_K);
  if (rows != (int64_t) r->n_tokens * (max_rank + 1))
    return sc_store_bad_run (store, r->id, err, "%lld predictions rows for %u positions of "
                             "%lld", (long long) rows, r->n_tokens, (long long) max_rank + 1);
  if (total < 0 || total > rows * (int64_t) SC_STORE_MAX_PREDICTION_PIECE_BYTES)
    return long_piece (store, r, total, err);
  *k = (uint32_t) max_rank + 1;
  *bytes = (size_t) total;
  return SC_OK;
}

/* Pass 2: the rows in (pos, rank) order, each checked. */
static ScStatus
prediction_rows (ScStore *store, const ScStoreRunShape *r, ScStorePredictions *p,
                 size_t bytes, ScError *err)
{
  const size_t n = (size_t) p->n_positions * p->k;
  sqlite3_stmt *st = NULL;
  uint8_t *at = (uint8_t *) (p->pieces + n);
  size_t i = 0, left = bytes;
  char what[64];
  int rc;

  rc = sqlite3_prepare_v2 (store->db, "SELECT pos, rank, token_id, piece, logit, prob FROM "
                                      "predictions WHERE run_id = ? ORDER BY pos, rank", -1,
                           &st, NULL);
  if (rc != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "reading run %lld's "
                                  "predictions", (long long) r->id);
  sqlite3_bind_int64 (st, 1, r->id);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      const int64_t want_pos = (int64_t) (i / p->k), want_rank = (int64_t) (i % p->k);
      int64_t pos, rank, id;
      double prob, logit = NAN;
      size_t len;

      if (i >= n || !sc_store_int_in (st, 0, want_pos, want_pos, &pos)
          || !sc_store_int_in (st, 1, want_rank, want_rank, &rank))
        {
          sc_store_describe_value (st, 0, what, sizeof what);
          sqlite3_finalize (st);
          return sc_store_bad_run (store, r->id, err, "predictions row for position %s out of "
                                   "order (expected position %lld rank %lld)", what,
                                   (long long) want_pos, (long long) want_rank);
        }
      if (!sc_store_int_in (st, 2, 0, r->n_vocab - 1, &id))
        {
          sc_store_describe_value (st, 2, what, sizeof what);
          sqlite3_finalize (st);
          return sc_store_bad_run (store, r->id, err, "prediction (%lld, %lld) names token %s, "
                                   "outside the vocabulary of %lld", (long long) pos,
                                   (long long) rank, what, (long long) r->n_vocab);
        }
      len = (size_t) sqlite3_column_bytes (st, 3);
      if (sqlite3_column_type (st, 3) != SQLITE_BLOB || len > SC_STORE_MAX_PREDICTION_PIECE_BYTES)
        {
          sqlite3_finalize (st);
          return long_piece (store, r, -1, err);
        }
      if (len > left)
        {
          sqlite3_finalize (st);
          return sc_store_bad_run (store, r->id, err, "prediction (%lld, %lld): its piece is "
                                   "not a BLOB of the size counted", (long long) pos,
                                   (long long) rank);
        }
      if (sqlite3_column_type (st, 4) == SQLITE_FLOAT
          || sqlite3_column_type (st, 4) == SQLITE_INTEGER)
        logit = sqlite3_column_double (st, 4);
      prob = sqlite3_column_type (st, 5) == SQLITE_FLOAT
               || sqlite3_column_type (st, 5) == SQLITE_INTEGER
             ? sqlite3_column_double (st, 5) : NAN;
      if (sqlite3_column_type (st, 4) != SQLITE_NULL && !isfinite (logit))
        {
          sc_store_describe_value (st, 4, what, sizeof what);
          sqlite3_finalize (st);
          return sc_store_bad_run (store, r->id, err, "prediction (%lld, %lld) has logit %s",
                                   (long long) pos, (long long) rank, what);
        }
      if (!(prob >= 0.0 && prob <= 1.0) || (rank > 0 && prob > p->probs[i - 1]))
        {
          sc_store_describe_value (st, 5, what, sizeof what);
          sqlite3_finalize (st);
          return sc_store_bad_run (store, r->id, err, "prediction (%lld, %lld) has probability "
                                   "%s (in [0, 1], no more than the rank before)",
                                   (long long) pos, (long long) rank, what);
        }
      if (len > 0)
        memcpy (at, sqlite3_column_blob (st, 3), len);
      p->ids[i] = (int32_t) id;
      p->logits[i] = (float) logit;
      p->probs[i] = prob;
      p->pieces[i] = (ScStoreToken) { (int32_t) id, (uint32_t) len, at };
      at += len;
      left -= len;
      i++;
    }
  sqlite3_finalize (st);
  if (rc != SQLITE_DONE)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "reading run %lld's "
                                  "predictions", (long long) r->id);
  if (i != n)
    return sc_store_bad_run (store, r->id, err, "%zu predictions rows read of %zu counted", i,
                             n);
  return SC_OK;
}

ScStatus
sc_store_read_predictions (ScStore *store, int64_t run_id, ScStorePredictions *out,
                           ScError *err)
{
  ScStoreRunShape r;
  ScStatus status;
  size_t bytes = 0, n;
  uint32_t k = 0;
  bool own = false;
  int rc;

  memset (out, 0, sizeof *out);
  if ((rc = sc_store_read_begin (store, &own)) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "reading run %lld",
                                  (long long) run_id);
  if ((status = sc_store_run_shape (store, run_id, &r, err)) != SC_OK)
    goto out;
  if (store->schema_version < 3)
    goto out; /* no predictions table: none stored */
  if ((status = prediction_totals (store, &r, &k, &bytes, err)) != SC_OK || k == 0)
    goto out;
  n = (size_t) r.n_tokens * k;
  out->n_positions = r.n_tokens;
  out->k = k;
  out->ids = malloc (n * sizeof *out->ids);
  out->logits = malloc (n * sizeof *out->logits);
  out->probs = malloc (n * sizeof *out->probs);
  out->pieces = malloc (n * sizeof *out->pieces + bytes + 1);
  if (out->ids == NULL || out->logits == NULL || out->probs == NULL || out->pieces == NULL)
    {
      status = sc_error_set (err, SC_ERR_NOMEM, "out of memory for run %lld's predictions",
                             (long long) run_id);
      goto out;
    }
  status = prediction_rows (store, &r, out, bytes, err);

out:
  sc_store_read_end (store, own);
  if (status != SC_OK)
    sc_store_predictions_clear (out);
  return status;
}
