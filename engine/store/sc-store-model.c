/* sc-store-model.c — the models table: a loaded model's identity (its file's SHA-256 and
 * shape), finding a model by its hash, and finding or adding its row when a capture or a
 * study is written (sc_store_upsert_model, inside the writer's transaction).
 *
 * A model is one row per file content: the same bytes seen at another path are the same
 * model (the row remembers the newest path); a stored row whose shape disagrees with the
 * file of the same hash was damaged, and the writers refuse it.
 *
 * What it is not: reading a run's model with the run (sc-store-read.c checks it there),
 * the writer thread (sc-store-writer.c). It calls only the bottom layer (sc-store-base.c).
 */
#include "store/sc-store-private.h"

#include <string.h>

/* ------------------------------------------------------------------------------------ */
/* Models                                                                                */

ScStatus
sc_store_model_identify (const ScModel *model, const char *path, ScStoreModel *out,
                         ScError *err)
{
  const ScModelInfo *in = sc_model_info (model);
  uint64_t size = 0;
  ScStatus st;

  memset (out, 0, sizeof *out);
  if ((st = sc_sha256_file (path, out->sha256, &size, err)) != SC_OK)
    return st;
  /* The model was loaded from this path a moment ago; a different size means the file was
   * replaced in between and the hash would name the wrong model. */
  if (size != sc_gguf_file_size (sc_model_gguf (model)))
    return sc_error_set (err, SC_ERR_IO,
                         "%s changed while it was in use (%llu bytes loaded, %llu bytes now)",
                         path, (unsigned long long) sc_gguf_file_size (sc_model_gguf (model)),
                         (unsigned long long) size);
  out->path = path;
  out->file_size = size;
  out->name = in->name;
  out->arch = in->arch_name;
  out->n_layers = in->n_layers;
  out->n_heads = in->n_heads;
  out->n_kv_heads = in->n_kv_heads;
  out->head_dim = in->head_dim;
  out->n_embd = in->n_embd;
  out->n_vocab = in->n_vocab;
  out->n_ctx_train = in->n_ctx_train;
  out->sliding_window = in->sliding_window;
  out->swa_pattern = in->swa_pattern;
  return SC_OK;
}

ScStatus
sc_store_find_model (ScStore *store, const uint8_t sha256[SC_SHA256_DIGEST_SIZE],
                     int64_t *model_id, ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStatus status;
  int rc;

  if (store->schema_version == 0)
    return sc_error_set (err, SC_ERR_NOT_FOUND, "%s has no models yet", store->path);
  if ((rc = sqlite3_prepare_v2 (store->db, "SELECT id FROM models WHERE sha256 = ?", -1, &st,
                                NULL)) != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "looking up a model");
  sqlite3_bind_blob (st, 1, sha256, SC_SHA256_DIGEST_SIZE, SQLITE_STATIC);
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW)
    {
      *model_id = sqlite3_column_int64 (st, 0);
      status = SC_OK;
    }
  else if (rc == SQLITE_DONE)
    {
      char hex[SC_SHA256_HEX_SIZE];
      sc_sha256_hex (sha256, hex);
      status = sc_error_set (err, SC_ERR_NOT_FOUND, "%s has no model with SHA-256 %s",
                             store->path, hex);
    }
  else
    status = sc_store_sqlite_error (err, store->db, rc, store->path, "looking up a model");
  sqlite3_finalize (st);
  return status;
}

static int
bind_text (sqlite3_stmt *st, int i, const char *s)
{
  return sqlite3_bind_text (st, i, s, -1, SQLITE_STATIC);
}

int
sc_store_upsert_model (sqlite3 *db, const ScStoreModel *m, int64_t *id, bool *mismatch)
{
  sqlite3_stmt *st = NULL;
  int rc;

  *mismatch = false;
  rc = sqlite3_prepare_v2 (db, "SELECT id, n_layers, n_heads, n_kv_heads, head_dim, path = ?2 "
                               "FROM models WHERE sha256 = ?1", -1, &st, NULL);
  if (rc != SQLITE_OK)
    return rc;
  sqlite3_bind_blob (st, 1, m->sha256, SC_SHA256_DIGEST_SIZE, SQLITE_STATIC);
  bind_text (st, 2, m->path);
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW)
    {
      bool same_path = sqlite3_column_int (st, 5) != 0;
      *id = sqlite3_column_int64 (st, 0);
      /* The same bytes cannot describe two shapes: a row that disagrees was damaged. */
      *mismatch = sqlite3_column_int64 (st, 1) != m->n_layers
                  || sqlite3_column_int64 (st, 2) != m->n_heads
                  || sqlite3_column_int64 (st, 3) != m->n_kv_heads
                  || sqlite3_column_int64 (st, 4) != m->head_dim;
      sqlite3_finalize (st);
      if (*mismatch || same_path)
        return SQLITE_OK;
      /* The same file seen at another path: one model; remember where it is now. */
      if ((rc = sqlite3_prepare_v2 (db, "UPDATE models SET path = ? WHERE id = ?", -1, &st,
                                    NULL)) != SQLITE_OK)
        return rc;
      bind_text (st, 1, m->path);
      sqlite3_bind_int64 (st, 2, *id);
      rc = sqlite3_step (st);
      sqlite3_finalize (st);
      return rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
  sqlite3_finalize (st);
  if (rc != SQLITE_DONE)
    return rc;

  rc = sqlite3_prepare_v2 (db, "INSERT INTO models (sha256, file_size, path, name, arch, "
                               "n_layers, n_heads, n_kv_heads, head_dim, n_embd, n_vocab, "
                               "n_ctx_train, added) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st,
                           NULL);
  if (rc != SQLITE_OK)
    return rc;
  sqlite3_bind_blob (st, 1, m->sha256, SC_SHA256_DIGEST_SIZE, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 2, (sqlite3_int64) m->file_size);
  bind_text (st, 3, m->path);
  bind_text (st, 4, m->name);
  bind_text (st, 5, m->arch);
  sqlite3_bind_int64 (st, 6, m->n_layers);
  sqlite3_bind_int64 (st, 7, m->n_heads);
  sqlite3_bind_int64 (st, 8, m->n_kv_heads);
  sqlite3_bind_int64 (st, 9, m->head_dim);
  sqlite3_bind_int64 (st, 10, m->n_embd);
  sqlite3_bind_int64 (st, 11, m->n_vocab);
  sqlite3_bind_int64 (st, 12, m->n_ctx_train);
  sqlite3_bind_int64 (st, 13, sc_store_now_ms ());
  rc = sqlite3_step (st);
  sqlite3_finalize (st);
  if (rc != SQLITE_DONE)
    return rc;
  *id = sqlite3_last_insert_rowid (db);
  return SQLITE_OK;
}
