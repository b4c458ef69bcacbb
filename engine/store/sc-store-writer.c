/* sc-store-writer.c — captures: heads in, one transaction per run out, on a writer thread.
 *
 * The thread that runs the forward pass converts each head to its fp16 BLOB (packing the
 * lower triangle of causal heads) into a slot of a bounded ring, and goes back to
 * computing (that side is sc-store-capture.c); the store's writer thread, here, takes the
 * slots in order and INSERTs them through its own connection, inside the run's
 * transaction. The ring's budget (queue_bytes) bounds the memory a capture holds; when the
 * disk is slower than the model, the forward pass blocks on a full ring rather than
 * buffering without limit.
 *
 * One writer thread per store, started with the first capture and stopped by
 * sc_store_close(). For each capture it:
 *   1. BEGIN IMMEDIATE; finds or inserts the model (by SHA-256); inserts the run row
 *      (status 'writing') and the tokens;
 *   2. inserts each queued head as it arrives — one attention row, or (schema v3) row
 *      blocks in attention_parts when its BLOB would pass SQLite's length limit, or the
 *      sparse form, or (schema v4) the band of a sliding-window head (sc-store-band.c) —,
 *      and its statistics (sc-head-stats.h) and overview image
 *      (sc-store-heads.h), both computed from the fp16 values just stored, into
 *      head_scores (sc-store-scores.h) and head_overviews: they are what reading the head
 *      back gives, and come with the run or not at all;
 *   3. on commit: checks every head arrived, marks the run 'complete', COMMIT (the WAL is
 *      synced: synchronous=FULL); on abort or any error: ROLLBACK;
 *   4. after a commit, copies the WAL into the database file (a passive checkpoint) while
 *      the caller is already computing the next run; the next run's BEGIN comes after it,
 *      which lets SQLite restart the WAL from its beginning instead of growing it;
 *   5. after a commit or a rollback that left the WAL past WAL_KEEP_BYTES (a long run's
 *      transaction is all in the WAL, and a rolled-back one's spilled pages stay there),
 *      checkpoints with TRUNCATE, waiting at most WAL_TRUNCATE_WAIT_MS for readers of older
 *      snapshots, so that a 9 GB run does not leave a 9 GB file beside the store.
 * The first error (a lock held past the busy timeout, SQLITE_FULL, an I/O error) marks the
 * capture failed: later heads are dropped, add_head() and the observer report failure so
 * the forward pass stops early, and commit() returns the error after rolling back.
 *
 * Locking: the writer's mutex guards the ring indices, the finish request and the status.
 * A slot's bytes belong to the producer until it is published (q_count++), then to the
 * writer thread until it is released (q_count--), so neither touches the other's slot.
 */
#include "core/sc-math.h"
#include "store/sc-store-capture-private.h"
#include "store/sc-store-heads.h"
#include "store/sc-store-private.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Early write-back (Linux): every WRITEBACK_BYTES of heads, ask the kernel to start writing
 * the WAL's dirty pages to the disk (sync_file_range SYNC_FILE_RANGE_WRITE: it starts the
 * I/O and does not wait for it). Without it the disk sits idle while SQLite fills the page
 * cache, and the whole run is written during the commit's fsync; with it, the disk works
 * while SQLite does, and the fsync finds little left to do. PostgreSQL's
 * wal_writer_flush_after does the same. 4 MiB: measured on our machines, smaller chunks
 * gain nothing more (docs/store.md, "Write-back"). */
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
#define SC_STORE_WRITEBACK 1
#define WRITEBACK_BYTES (4u << 20)
#endif

static double
seconds_since (const struct timespec *t0)
{
  struct timespec t;

  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Records @e as the capture's error unless it already has one. Caller holds w->mu. */
void
sc_store_capture_fail_locked (ScStoreCapture *cap, const ScError *e)
{
  if (cap->status != SC_OK)
    return;
  cap->status = e->status != SC_OK ? e->status : SC_ERR_DB;
  cap->error = *e;
  pthread_cond_broadcast (&cap->w->done);
}

void
sc_store_capture_fail (ScStoreCapture *cap, const ScError *e)
{
  pthread_mutex_lock (&cap->w->mu);
  sc_store_capture_fail_locked (cap, e);
  pthread_mutex_unlock (&cap->w->mu);
}

/* ------------------------------------------------------------------------------------ */
/* The writer thread                                                                     */

static int
bind_text (sqlite3_stmt *st, int i, const char *s)
{
  return sqlite3_bind_text (st, i, s, -1, SQLITE_STATIC);
}

/* Whether the INSERT of a run failed with SQLITE_FULL because AUTOINCREMENT has no id
 * left (sqlite_sequence, or the largest id, at 2^63 - 1) rather than for want of space:
 * SQLite says "database or disk is full" for both. */
static bool
run_ids_exhausted (sqlite3 *db)
{
  sqlite3_stmt *st = NULL;
  bool exhausted = false;

  if (sqlite3_prepare_v2 (db, "SELECT max (coalesce ((SELECT max (seq) FROM sqlite_sequence "
                              "WHERE name = 'runs'), 0), coalesce ((SELECT max (id) FROM runs), 0))",
                          -1, &st, NULL) == SQLITE_OK
      && sqlite3_step (st) == SQLITE_ROW)
    exhausted = sqlite3_column_type (st, 0) == SQLITE_INTEGER
                && sqlite3_column_int64 (st, 0) == INT64_MAX;
  sqlite3_finalize (st);
  return exhausted;
}

/* Step 1: the transaction, the model, the run row and the tokens. */
static ScStatus
begin_run (ScStoreWriter *w, ScStoreCapture *cap, ScError *err)
{
  const char *path = w->store->path;
  sqlite3 *db = w->db;
  sqlite3_stmt *st = NULL;
  int64_t model_id = 0;
  bool mismatch = false;
  size_t i;
  int rc;

  if ((rc = sc_store_exec (db, "BEGIN IMMEDIATE")) != SQLITE_OK)
    return sc_store_sqlite_error (err, db, rc, path, "starting a new run (waited up to %.1f s)",
                                  w->store->busy_ms > 0 ? w->store->busy_ms / 1000.0 : 0.0);
  if ((rc = sc_store_upsert_model (db, &cap->model, &model_id, &mismatch)) != SQLITE_OK)
    goto db_error;
  if (mismatch)
    return sc_error_set (err, SC_ERR_DB, "%s: the stored model with the SHA-256 of %s has "
                         "other dimensions; the store is damaged", path, cap->model.path);

  rc = sqlite3_prepare_v2 (db, "INSERT INTO runs (model_id, text, created, backend, n_tokens, "
                               "kept, sparse_eps, kind, prompt_tokens, round_bits, zero_below) "
                               "VALUES (?,?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL);
  if (rc != SQLITE_OK)
    goto db_error;
  sqlite3_bind_int64 (st, 1, model_id);
  sqlite3_bind_blob64 (st, 2, cap->text, cap->text_len, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 3, cap->created_ms);
  bind_text (st, 4, cap->backend);
  sqlite3_bind_int64 (st, 5, (sqlite3_int64) cap->n_tokens);
  if (!cap->keep_all)
    {
      /* the bitmap of runs.kept: bit layer * n_heads + head, least significant first */
      const size_t n_heads = (size_t) cap->n_layers * cap->n_heads;
      uint8_t bits[SC_STORE_MAX_RUN_HEADS / 8] = { 0 };
      for (i = 0; i < n_heads; i++)
        if (cap->keep[i])
          bits[i / 8] |= (uint8_t) (1u << (i % 8));
      sqlite3_bind_blob (st, 6, bits, (int) ((n_heads + 7) / 8), SQLITE_TRANSIENT);
    }
  if (cap->sparse_eps > 0)
    sqlite3_bind_double (st, 7, cap->sparse_eps);
  if (cap->kind != SC_RUN_KIND_UNKNOWN)
    sqlite3_bind_text (st, 8, sc_run_kind_id (cap->kind), -1, SQLITE_STATIC);
  if (cap->n_prompt > 0)
    sqlite3_bind_int64 (st, 9, cap->n_prompt);
  if (cap->round.bits > 0)
    sqlite3_bind_int64 (st, 10, cap->round.bits);
  if (cap->zero_below > 0)
    sqlite3_bind_double (st, 11, cap->zero_below);
  rc = sqlite3_step (st);
  sqlite3_finalize (st);
  st = NULL;
  if ((rc & 0xff) == SQLITE_FULL && run_ids_exhausted (db))
    return sc_error_set (err, SC_ERR_RANGE,
                         "%s: storing a new run: the store has given out every run id (the "
                         "last, %lld, is the largest SQLite allows, and ids are never reused); "
                         "it cannot take more runs, but reading it still works: capture into "
                         "a new store with --db", path, (long long) INT64_MAX);
  if (rc != SQLITE_DONE)
    goto db_error;
  cap->run_id = sqlite3_last_insert_rowid (db);
  if ((rc = sc_store_windows_insert (db, cap->run_id, cap->windows, (uint32_t) cap->n_layers))
      != SQLITE_DONE)
    goto db_error;

  rc = sqlite3_prepare_v2 (db, "INSERT INTO tokens (run_id, pos, token_id, piece) "
                               "VALUES (?,?,?,?)", -1, &st, NULL);
  if (rc != SQLITE_OK)
    goto db_error;
  for (i = 0; i < cap->n_tokens; i++)
    {
      sqlite3_bind_int64 (st, 1, cap->run_id);
      sqlite3_bind_int64 (st, 2, (sqlite3_int64) i);
      sqlite3_bind_int64 (st, 3, cap->tokens[i].id);
      /* zeroblob-safe: a piece may be empty, and must still be a BLOB, not NULL */
      if (cap->tokens[i].len == 0)
        sqlite3_bind_zeroblob (st, 4, 0);
      else
        sqlite3_bind_blob (st, 4, cap->tokens[i].piece, (int) cap->tokens[i].len,
                           SQLITE_STATIC);
      if ((rc = sqlite3_step (st)) != SQLITE_DONE)
        goto db_error;
      sqlite3_reset (st);
    }
  sqlite3_finalize (st);
  return SC_OK;

db_error:
  sqlite3_finalize (st);
  return sc_store_sqlite_error (err, db, rc, path, "storing a new run");
}

/* The slot as the parts code sees it. */
static ScStoreBlobHead
blob_head (const Slot *slot)
{
  return (ScStoreBlobHead) { slot->buf, slot->len, slot->layer, slot->head, slot->n,
                             slot->causal, slot->sparse, slot->nnz, slot->window };
}

/* Step 2's statistics and overview: sc_head_stats, one head_scores row per score; the block
 * maxima, one head_overviews row. A dense head is read a row at a time from its fp16 values
 * into w->unpacked's first n floats (zeroed once per head: a causal row i overwrites
 * [0, i] and the entries after it are still 0), so the writer holds O(n) floats, not the
 * (n, n) matrix (268 MB at 8,192 tokens), and visits a causal head's triangle only; a band
 * or sparse head is unpacked whole. Returns SQLite's code (SQLITE_DONE when stored;
 * SQLITE_NOMEM when a buffer cannot grow). */
static int
insert_scores (ScStoreWriter *w, ScStoreCapture *cap, const Slot *slot, ScError *err)
{
  const uint32_t n = slot->n;
  const uint32_t size = sc_store_overview_size (n);
  const bool by_row = slot->window == 0 && !slot->sparse;
  const size_t need = by_row ? n : (size_t) n * n;
  const ScStoreBlobHead b = blob_head (slot);
  ScHeadStatsAcc acc;
  ScHeadStats stats;
  int rc;

  (void) err;
  if (w->unpacked_cap < need)
    {
      float *buf = realloc (w->unpacked, need * sizeof *buf);
      if (buf == NULL)
        return SQLITE_NOMEM;
      w->unpacked = buf;
      w->unpacked_cap = need;
    }
  if (w->blk_n != n)
    {
      uint32_t *blk = realloc (w->blk, (size_t) n * sizeof *blk);
      float *ov = realloc (w->overview, (size_t) SC_STORE_OVERVIEW_MAX * SC_STORE_OVERVIEW_MAX
                                          * sizeof *ov);
      if (blk != NULL)
        w->blk = blk;
      if (ov != NULL)
        w->overview = ov;
      if (blk == NULL || ov == NULL)
        return SQLITE_NOMEM;
      sc_store_overview_blocks (n, size, w->blk);
      w->blk_n = n;
    }
  memset (w->overview, 0, (size_t) size * size * sizeof *w->overview);
  sc_head_stats_begin (&acc, (int) n, (int) n, NULL);
  if (by_row)
    memset (w->unpacked, 0, (size_t) n * sizeof *w->unpacked);
  else
    sc_store_blob_head_unpack (&b, w->unpacked);
  for (uint32_t i = 0; i < n; i++)
    {
      const uint32_t len = slot->causal ? i + 1 : n;
      const float *row = w->unpacked;
      if (by_row)
        sc_store_f16_decode (slot->buf + 2 * sc_attn_packed_index ((int) i, 0, (int) n,
                                                                   slot->causal),
                             len, w->unpacked);
      else
        row = w->unpacked + (size_t) i * n;
      sc_head_stats_add_row (&acc, row, (int) len);
      sc_store_overview_row (w->overview, size, w->blk, i, row, len);
    }
  sc_head_stats_end (&acc, &stats);
  rc = sc_store_scores_insert (w->insert_score, cap->run_id, slot->layer, slot->head, &stats,
                               NULL);
  if (rc != SQLITE_DONE)
    return rc;
  return sc_store_overview_insert (w->db, cap->run_id, slot->layer, slot->head, size,
                                   w->overview);
}

/* Step 2: one head. */
static ScStatus
insert_head (ScStoreWriter *w, ScStoreCapture *cap, const Slot *slot, ScError *err)
{
  sqlite3_stmt *st = w->insert_head;
  uint64_t bytes = slot->len;
  ScStatus status;
  int rc;

  if (w->store->compress_heads && slot->window == 0 && !slot->sparse)
    {
      const ScStoreBlobHead b = blob_head (slot);
      bool fits = false;
      if (w->z == NULL && (w->z = sc_store_z_writer_new ()) == NULL)
        return sc_error_set (err, SC_ERR_NOMEM, "out of memory starting to compress heads");
      if ((status = sc_store_z_insert (w->db, w->z, w->store->path, cap->run_id, &b,
                                       cap->round, w->part_budget, &fits, &bytes, err)) != SC_OK)
        return status;
      if (fits)
        goto stored;
      bytes = slot->len;
    }
  if (slot->window > 0)
    {
      const ScStoreBlobHead b = blob_head (slot);
      if ((status = sc_store_band_insert (w->db, w->store->path, cap->run_id, &b,
                                          w->part_budget, err)) != SC_OK)
        return status;
      goto stored;
    }
  if (slot->sparse || slot->len > w->part_budget)
    {
      const ScStoreBlobHead b = blob_head (slot);
      if ((status = sc_store_parts_insert (w->db, w->insert_part, w->store->path, cap->run_id,
                                           &b, w->part_budget, err)) != SC_OK)
        return status;
      goto stored;
    }
  sqlite3_bind_int64 (st, 1, cap->run_id);
  sqlite3_bind_int (st, 2, slot->layer);
  sqlite3_bind_int (st, 3, slot->head);
  sqlite3_bind_int64 (st, 4, slot->n);
  sqlite3_bind_int64 (st, 5, slot->n);
  bind_text (st, 6, slot->causal ? "causal" : "full");
  /* SQLITE_STATIC: SQLite copies the bytes into its pages during the step; the slot stays
   * ours until it is released after the step. */
  sqlite3_bind_blob64 (st, 7, slot->buf, slot->len, SQLITE_STATIC);
  rc = sqlite3_step (st);
  sqlite3_reset (st);
  sqlite3_clear_bindings (st);
  if (rc != SQLITE_DONE)
    return sc_store_sqlite_error (err, w->db, rc, w->store->path,
                                  "storing layer %d head %d of a new run", slot->layer,
                                  slot->head);
stored:
  cap->attention_bytes += bytes;
  cap->n_stored++;
  if ((rc = insert_scores (w, cap, slot, err)) != SQLITE_DONE)
    return rc == SQLITE_NOMEM ? sc_error_set (err, SC_ERR_NOMEM, "out of memory computing "
                                              "layer %d head %d's statistics and overview",
                                              slot->layer,
                                              slot->head)
                              : sc_store_sqlite_error (err, w->db, rc, w->store->path,
                                                       "storing the statistics and overview of "
                                                       "layer %d head %d of a new run", slot->layer,
                                                       slot->head);
#ifdef SC_STORE_WRITEBACK
  w->unflushed += bytes;
  if (w->unflushed >= WRITEBACK_BYTES)
    {
      /* The WAL file exists once this connection has written to it; a failure here only
       * loses the overlap, never data, so it is not reported. */
      if (w->wal_fd < 0)
        {
          char wal[4096];
          if (snprintf (wal, sizeof wal, "%s-wal", w->store->path) < (int) sizeof wal)
            w->wal_fd = open (wal, O_RDONLY | O_CLOEXEC);
        }
      if (w->wal_fd >= 0)
        sync_file_range (w->wal_fd, 0, 0, SYNC_FILE_RANGE_WRITE);
      w->unflushed = 0;
    }
#endif
  return SC_OK;
}

/* Step 3 (commit). */
static ScStatus
commit_run (ScStoreWriter *w, ScStoreCapture *cap, double forward_s, ScError *err)
{
  sqlite3_stmt *st = NULL;
  int rc;

  if (cap->n_stored != cap->n_keep)
    return sc_error_set (err, SC_ERR_INVALID_ARG,
                         "%s: the run has %zu of the %zu heads it keeps (of %d layers x %d "
                         "heads)", w->store->path, cap->n_stored, cap->n_keep, cap->n_layers,
                         cap->n_heads);
  if (cap->pred.n_positions > 0
      && (rc = sc_store_predictions_insert (w->db, cap->run_id, &cap->pred)) != SQLITE_DONE)
    goto db_error;
  rc = sqlite3_prepare_v2 (w->db, "UPDATE runs SET status = 'complete', forward_ms = ?, "
                                  "capture_ms = ?, attention_bytes = ? WHERE id = ?", -1, &st,
                           NULL);
  if (rc != SQLITE_OK)
    goto db_error;
  if (forward_s >= 0)
    sqlite3_bind_double (st, 1, forward_s * 1000.0);
  sqlite3_bind_double (st, 2, seconds_since (&cap->t0) * 1000.0);
  sqlite3_bind_int64 (st, 3, (sqlite3_int64) cap->attention_bytes);
  sqlite3_bind_int64 (st, 4, cap->run_id);
  rc = sqlite3_step (st);
  sqlite3_finalize (st);
  if (rc != SQLITE_DONE)
    goto db_error;
  if ((rc = sc_store_exec (w->db, "COMMIT")) != SQLITE_OK)
    goto db_error;
  return SC_OK;

db_error:
  return sc_store_sqlite_error (err, w->db, rc, w->store->path, "committing the new run");
}

/* Appends what a failed capture means for the data to the message. */
static void
note_rolled_back (ScError *e)
{
  size_t len = strlen (e->message);
  snprintf (e->message + len, sizeof e->message - len,
            "; the run was not stored, earlier runs are intact");
}

/* Runs one capture from BEGIN to COMMIT or ROLLBACK. Returns whether it committed. */
static bool
write_capture (ScStoreWriter *w, ScStoreCapture *cap)
{
  ScError e = { 0 };
  Finish finish;
  double forward_s;
  bool committed = false, ok;

  if (begin_run (w, cap, &e) != SC_OK)
    sc_store_capture_fail (cap, &e);

  pthread_mutex_lock (&w->mu);
  for (;;)
    {
      Slot *slot;
      bool failed;

      while (cap->q_count == 0 && cap->finish == FINISH_NONE)
        pthread_cond_wait (&w->wake, &w->mu);
      if (cap->q_count == 0)
        break;
      slot = &cap->slots[cap->q_head];
      /* after a failure or an abort, queued heads are only released */
      failed = cap->status != SC_OK || cap->finish == FINISH_ABORT;
      pthread_mutex_unlock (&w->mu);

      if (!failed && insert_head (w, cap, slot, &e) != SC_OK)
        sc_store_capture_fail (cap, &e);

      pthread_mutex_lock (&w->mu);
      cap->q_head = (cap->q_head + 1) % cap->n_slots;
      cap->q_count--;
      pthread_cond_broadcast (&w->done);
    }
  finish = cap->finish;
  forward_s = cap->forward_s;
  ok = cap->status == SC_OK;
  pthread_mutex_unlock (&w->mu);

  /* From here on the caller only waits for `finished`: nothing else touches cap. */
  if (finish == FINISH_COMMIT && ok)
    {
      if (commit_run (w, cap, forward_s, &e) == SC_OK)
        committed = true;
      else
        sc_store_capture_fail (cap, &e);
    }
  if (!committed && !sqlite3_get_autocommit (w->db))
    sc_store_exec (w->db, "ROLLBACK");
  if (!committed && cap->status != SC_OK)
    note_rolled_back (&cap->error);
  return committed;
}

/* Step 5's threshold: the journal_size_limit below, which SQLite itself applies only when
 * the next transaction restarts the WAL — too late for a store left open after a big run. */
#define WAL_KEEP_BYTES (32 * 1024 * 1024)
/* How long step 5 waits for readers of older snapshots and for another process's writer;
 * past it the checkpoint gives up (SQLITE_BUSY, not an error): the next run's commit, or the
 * last connection's close, cuts the WAL then. Short, since the next run's BEGIN waits for it. */
#define WAL_TRUNCATE_WAIT_MS 2000

/* Step 5: checkpoints and truncates the WAL when it is past WAL_KEEP_BYTES. Its errors leave
 * the data safe in the WAL (or the rolled-back pages ignored), so they are not reported. */
static void
shrink_wal (ScStoreWriter *w)
{
  char wal[4096];
  struct stat sb;

  if (snprintf (wal, sizeof wal, "%s-wal", w->store->path) >= (int) sizeof wal
      || stat (wal, &sb) != 0 || sb.st_size <= WAL_KEEP_BYTES)
    return;
  sqlite3_busy_timeout (w->db, WAL_TRUNCATE_WAIT_MS);
  sqlite3_wal_checkpoint_v2 (w->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
  sqlite3_busy_timeout (w->db, w->store->busy_ms > 0 ? w->store->busy_ms : 0);
}

static void *
writer_main (void *arg)
{
  ScStoreWriter *w = arg;

  pthread_mutex_lock (&w->mu);
  for (;;)
    {
      ScStoreCapture *cap;
      bool committed;

      while (w->job == NULL && !w->quit)
        pthread_cond_wait (&w->wake, &w->mu);
      if (w->job == NULL)
        break;
      cap = w->job;
      pthread_mutex_unlock (&w->mu);

      committed = write_capture (w, cap);

      pthread_mutex_lock (&w->mu);
      w->job = NULL;
      cap->finished = true; /* the caller may free cap from here on */
      pthread_cond_broadcast (&w->done);
      if (committed)
        {
          /* Step 4. PASSIVE never waits: readers of older snapshots keep their frames,
           * and whatever is left is copied after the next run. Its errors (a full disk,
           * say) leave the data safe in the WAL, so they are not reported. */
          pthread_mutex_unlock (&w->mu);
          sqlite3_wal_checkpoint_v2 (w->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
          pthread_mutex_lock (&w->mu);
        }
      pthread_mutex_unlock (&w->mu);
      shrink_wal (w);
      pthread_mutex_lock (&w->mu);
    }
  pthread_mutex_unlock (&w->mu);
  return NULL;
}

ScStatus
sc_store_writer_start (ScStore *store, ScStoreWriter **out, ScError *err)
{
  ScStoreWriter *w;
  ScStatus st;
  int rc;

  *out = NULL;
  if ((w = calloc (1, sizeof *w)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
  w->store = store;
  w->wal_fd = -1;
  if ((st = sc_store_connection_open (store, true, &w->db, err)) != SC_OK)
    {
      free (w);
      return st;
    }
  /* This connection checkpoints by itself after each commit (step 4). The WAL file keeps
   * at most 32 MiB once restarted, so a big run does not leave a big file behind. */
  rc = sc_store_exec (w->db, "PRAGMA wal_autocheckpoint = 0; PRAGMA journal_size_limit = 33554432");
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v3 (w->db, "INSERT INTO attention (run_id, layer, head, n_query, n_key, "
                                    "layout, dtype, data) VALUES (?,?,?,?,?,?,'f16',?)", -1,
                             SQLITE_PREPARE_PERSISTENT, &w->insert_head, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v3 (w->db, SC_STORE_SCORES_INSERT_SQL, -1, SQLITE_PREPARE_PERSISTENT,
                             &w->insert_score, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v3 (w->db, "INSERT INTO attention_parts (run_id, layer, head, row0, "
                                    "row1, n_query, n_key, layout, dtype, dropped, offsets, "
                                    "keys, data) VALUES (?,?,?,?,?,?,?,?,'f16',?,?,?,?)", -1,
                             SQLITE_PREPARE_PERSISTENT, &w->insert_part, NULL);
  /* SQLite refuses a value or row longer than SQLITE_LIMIT_LENGTH (1e9 bytes by default);
   * a head whose BLOB would pass it goes into row blocks. The tests lower the limit to
   * force blocks with small runs. PART_ROOM leaves space for a row's other columns. */
  if (rc == SQLITE_OK)
    {
      const uint64_t room = 512;
      if (store->max_blob_bytes > 0 && store->max_blob_bytes < INT32_MAX)
        sqlite3_limit (w->db, SQLITE_LIMIT_LENGTH, (int) store->max_blob_bytes);
      w->part_budget = (uint64_t) sqlite3_limit (w->db, SQLITE_LIMIT_LENGTH, -1) - room;
    }
  if (rc != SQLITE_OK)
    {
      st = sc_store_sqlite_error (err, w->db, rc, store->path, "preparing the writer");
      sqlite3_finalize (w->insert_head);
      sqlite3_finalize (w->insert_score);
      sqlite3_finalize (w->insert_part);
      sqlite3_close (w->db);
      free (w);
      return st;
    }
  pthread_mutex_init (&w->mu, NULL);
  pthread_cond_init (&w->wake, NULL);
  pthread_cond_init (&w->done, NULL);
  if (pthread_create (&w->thread, NULL, writer_main, w) != 0)
    {
      sqlite3_finalize (w->insert_head);
      sqlite3_finalize (w->insert_score);
      sqlite3_finalize (w->insert_part);
      sqlite3_close (w->db);
      pthread_mutex_destroy (&w->mu);
      pthread_cond_destroy (&w->wake);
      pthread_cond_destroy (&w->done);
      free (w);
      return sc_error_set (err, SC_ERR_NOMEM, "cannot start the store's writer thread");
    }
  *out = w;
  return SC_OK;
}

void
sc_store_writer_free (ScStoreWriter *w)
{
  if (w == NULL)
    return;
  pthread_mutex_lock (&w->mu);
  w->quit = true;
  pthread_cond_broadcast (&w->wake);
  pthread_mutex_unlock (&w->mu);
  pthread_join (w->thread, NULL);
  /* The WAL holds no locks of ours (SQLite locks the -shm file and the database), so
   * closing this descriptor cannot drop SQLite's POSIX locks. */
  if (w->wal_fd >= 0)
    close (w->wal_fd);
  sqlite3_finalize (w->insert_head);
  sqlite3_finalize (w->insert_score);
  sqlite3_finalize (w->insert_part);
  sc_store_z_writer_free (w->z);
  free (w->unpacked);
  free (w->blk);
  free (w->overview);
  sqlite3_close (w->db);
  pthread_mutex_destroy (&w->mu);
  pthread_cond_destroy (&w->wake);
  pthread_cond_destroy (&w->done);
  free (w);
}
