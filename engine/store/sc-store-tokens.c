/* sc-store-tokens.c — a run's tokens: read out of the store, checked, and made from a
 * tokenizer's ids for a capture (sc-store.h: sc_store_read_tokens, sc_store_tokens_from_ids).
 *
 * Reading is done in two passes: first the counts — rows, pieces that are not BLOBs, the
 * longest piece and the pieces' total bytes — checked against the run (its shape read by
 * sc_store_run_shape, sc-store-read.c) before anything is allocated; then the rows in
 * position order, each checked as it comes. The array and the pieces' bytes are one block,
 * freed by sc_store_tokens_free.
 *
 * What it is not: the run itself (sc-store-read.c), the next-token predictions, whose
 * pieces are read the same way (sc-store-predictions.c).
 */
#include "store/sc-store-private.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------ */
/* Tokens                                                                                */

/* One block: the array, then the pieces' bytes. */
static ScStoreToken *
tokens_alloc (size_t n, size_t piece_bytes)
{
  if (n > (SIZE_MAX - piece_bytes - 1) / sizeof (ScStoreToken))
    return NULL;
  return malloc (n * sizeof (ScStoreToken) + piece_bytes + 1);
}

void
sc_store_tokens_free (ScStoreToken *tokens)
{
  free (tokens);
}

ScStatus
sc_store_tokens_from_ids (const ScTokenizer *tok, const int32_t *ids, size_t n_ids,
                          ScStoreToken **tokens, ScError *err)
{
  ScStoreToken *t;
  uint8_t *bytes;
  size_t i, total = 0;

  *tokens = NULL;
  for (i = 0; i < n_ids; i++)
    total += sc_token_to_bytes (tok, ids[i], true, NULL, 0);
  if ((t = tokens_alloc (n_ids, total)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
  bytes = (uint8_t *) (t + n_ids);
  for (i = 0; i < n_ids; i++)
    {
      size_t len = sc_token_to_bytes (tok, ids[i], true, (char *) bytes, total);
      t[i].id = ids[i];
      t[i].len = (uint32_t) len;
      t[i].piece = bytes;
      bytes += len;
      total -= len;
    }
  *tokens = t;
  return SC_OK;
}

/* Pass 1 of reading tokens: how many rows and piece bytes, before anything is allocated.
 * Lengths are read only for BLOB pieces (a BLOB's length is in its record header; a text
 * piece's would need the whole value). */
static ScStatus
token_totals (ScStore *store, const ScStoreRunShape *r, size_t *bytes, ScError *err)
{
  sqlite3_stmt *st = NULL;
  int64_t n, not_blob, longest;
  double total;
  ScStatus status = SC_OK;
  int rc;

  if ((rc = sqlite3_prepare_v2 (store->db,
                                "SELECT count (*), sum (typeof (piece) <> 'blob'), "
                                "max (CASE WHEN typeof (piece) = 'blob' THEN length (piece) END), "
                                "total (CASE WHEN typeof (piece) = 'blob' THEN length (piece) END) "
                                "FROM tokens WHERE run_id = ?", -1, &st, NULL)) != SQLITE_OK
      || (sqlite3_bind_int64 (st, 1, r->id), rc = sqlite3_step (st)) != SQLITE_ROW)
    {
      status = sc_store_sqlite_error (err, store->db, rc, store->path,
                                      "reading the tokens of run %lld", (long long) r->id);
      goto out;
    }
  n = sqlite3_column_int64 (st, 0);
  not_blob = sqlite3_column_int64 (st, 1);
  longest = sqlite3_column_int64 (st, 2);
  total = sqlite3_column_double (st, 3);
  if (n != r->n_tokens)
    status = sc_store_bad_run (store, r->id, err, "the tokens table has %lld rows for %u tokens",
                      (long long) n, r->n_tokens);
  else if (not_blob != 0)
    status = sc_store_bad_run (store, r->id, err, "%lld token pieces are not BLOBs", (long long) not_blob);
  else if (longest > (int64_t) SC_STORE_MAX_PIECE_BYTES)
    status = sc_store_bad_run (store, r->id, err, "a token piece is %lld bytes long, more than %u",
                      (long long) longest, SC_STORE_MAX_PIECE_BYTES);
  else
    *bytes = (size_t) total; /* <= 2^19 pieces x 2^16 bytes: exact in a double */
out:
  sqlite3_finalize (st);
  return status;
}

ScStatus
sc_store_read_tokens (ScStore *store, int64_t run_id, ScStoreToken **tokens, size_t *n_tokens,
                      ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStoreToken *t = NULL;
  ScStoreRunShape r;
  size_t n = 0, total = 0, i;
  uint8_t *bytes;
  ScStatus status;
  bool own = false;
  char val[96];
  int rc;

  *tokens = NULL;
  *n_tokens = 0;
  /* The run check, the size pass and the copy pass are one read transaction, so a
   * concurrent delete cannot change the rows between the passes. */
  if ((rc = sc_store_read_begin (store, &own)) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "reading run %lld",
                                  (long long) run_id);
  if ((status = sc_store_run_shape (store, run_id, &r, err)) != SC_OK
      || (status = token_totals (store, &r, &total, err)) != SC_OK)
    goto done;
  n = r.n_tokens;
  if ((t = tokens_alloc (n, total)) == NULL)
    {
      status = sc_error_set (err, SC_ERR_NOMEM, "out of memory reading %zu tokens", n);
      goto done;
    }
  bytes = (uint8_t *) (t + n);
  /* Pass 2: every row in key order must be position i, with an integer id inside the
   * vocabulary and a BLOB piece that fits what pass 1 counted. */
  if ((rc = sqlite3_prepare_v2 (store->db,
                                "SELECT pos, token_id, CASE WHEN typeof (piece) = 'blob' AND "
                                "length (piece) <= ?2 THEN piece END FROM tokens "
                                "WHERE run_id = ?1 ORDER BY pos", -1, &st, NULL)) != SQLITE_OK)
    goto db_error;
  sqlite3_bind_int64 (st, 1, run_id);
  sqlite3_bind_int64 (st, 2, SC_STORE_MAX_PIECE_BYTES);
  for (i = 0; (rc = sqlite3_step (st)) == SQLITE_ROW; i++)
    {
      int64_t pos = -1, id = -1;
      size_t len;

      if (i >= n || !sc_store_int_in (st, 0, 0, INT64_MAX, &pos) || pos != (int64_t) i)
        {
          sc_store_describe_value (st, 0, val, sizeof val);
          status = sc_store_bad_run (store, run_id, err, "token row %zu in position order has pos %s; "
                            "position %zu is missing or out of place", i, val, i);
          goto done;
        }
      if (!sc_store_int_in (st, 1, 0, r.n_vocab - 1, &id))
        {
          sc_store_describe_value (st, 1, val, sizeof val);
          status = sc_store_bad_run (store, run_id, err, "tokens row (pos %zu): token_id is %s, outside "
                            "the model's vocabulary 0..%lld", i, val, (long long) (r.n_vocab - 1));
          goto done;
        }
      len = (size_t) sqlite3_column_bytes (st, 2);
      if (sqlite3_column_type (st, 2) != SQLITE_BLOB || len > total)
        {
          status = sc_store_bad_run (store, run_id, err, "tokens row (pos %zu): the piece changed size "
                            "between two reads", i);
          goto done;
        }
      t[i].id = (int32_t) id;
      t[i].len = (uint32_t) len;
      t[i].piece = bytes;
      if (len > 0)
        memcpy (bytes, sqlite3_column_blob (st, 2), len);
      bytes += len;
      total -= len;
    }
  if (rc != SQLITE_DONE)
    goto db_error;
  if (i != n)
    {
      status = sc_store_bad_run (store, run_id, err, "the tokens table has %zu rows for %zu tokens", i, n);
      goto done;
    }
  *tokens = t;
  *n_tokens = n;
  t = NULL;
  status = SC_OK;
  goto done;

db_error:
  status = sc_store_sqlite_error (err, store->db, rc, store->path, "reading the tokens of run %lld",
                                  (long long) run_id);
done:
  sqlite3_finalize (st);
  sc_store_read_end (store, own);
  free (t);
  return status;
}

