/* sc-store-merge.c — merging shard databases into one store (sc-store-merge.h; the shard
 * manifests it compares: sc-store-shard.c). The inputs are checked whole before a row is
 * copied; the copy goes into a temporary file beside OUT that replaces OUT by rename(2)
 * only at the end. Rows are copied table by table from each input's own read-only
 * connection into the temporary store's connection (no ATTACH: an input never becomes
 * part of the connection that writes), old ids translated through sorted maps. */
#include "store/sc-store-merge.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/sc-store-predictions.h"
#include "store/sc-store-private.h"
#include "store/sc-store-study.h"

/* ------------------------------------------------------------------------------------ */
/* Id maps: old id -> new id, appended in increasing old id (the SELECTs order by id).   */

typedef struct {
  int64_t old_id, new_id;
} IdPair;

typedef struct {
  IdPair *v;
  size_t n, cap;
} IdMap;

static bool
map_add (IdMap *m, int64_t old_id, int64_t new_id)
{
  if (m->n == m->cap)
    {
      size_t cap = m->cap ? 2 * m->cap : 64;
      IdPair *v = realloc (m->v, cap * sizeof *v);
      if (v == NULL)
        return false;
      m->v = v;
      m->cap = cap;
    }
  m->v[m->n++] = (IdPair) { old_id, new_id };
  return true;
}

static bool
map_find (const IdMap *m, int64_t old_id, int64_t *new_id)
{
  size_t lo = 0, hi = m->n;

  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      if (m->v[mid].old_id < old_id)
        lo = mid + 1;
      else
        hi = mid;
    }
  if (lo < m->n && m->v[lo].old_id == old_id)
    {
      *new_id = m->v[lo].new_id;
      return true;
    }
  return false;
}

/* ------------------------------------------------------------------------------------ */
/* Checking an input                                                                     */

static ScStatus
check_input (ScStore *s, ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStatus status;
  int rc;

  if (s->schema_version != SC_STORE_SCHEMA_VERSION)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "%s is at schema version %d, not %d; open "
                         "it once with this Saccade writable (e.g. `saccade capture --db %s`) "
                         "to migrate it, then merge", s->path, s->schema_version,
                         SC_STORE_SCHEMA_VERSION, s->path);
  if ((status = sc_store_check (s, err)) != SC_OK)
    return status;
  if ((rc = sqlite3_prepare_v2 (s->db, "PRAGMA foreign_key_check", -1, &st, NULL)) != SQLITE_OK)
    return sc_store_sqlite_error (err, s->db, rc, s->path, "checking foreign keys");
  rc = sqlite3_step (st);
  if (rc == SQLITE_ROW)
    {
      const char *table = (const char *) sqlite3_column_text (st, 0);
      status = sc_error_set (err, SC_ERR_FORMAT, "%s: table %s has a row whose reference "
                             "points nowhere (row %lld); the file was edited or is damaged",
                             s->path, table != NULL ? table : "?",
                             (long long) sqlite3_column_int64 (st, 1));
    }
  else if (rc != SQLITE_DONE)
    status = sc_store_sqlite_error (err, s->db, rc, s->path, "checking foreign keys");
  sqlite3_finalize (st);
  if (status != SC_OK)
    return status;

  /* every complete run and study read through the store's own checks */
  for (int pass = 0; pass < 2 && status == SC_OK; pass++)
    {
      if ((rc = sqlite3_prepare_v2 (s->db, pass == 0 ? "SELECT id FROM runs WHERE status = "
                                                       "'complete' ORDER BY id"
                                                     : "SELECT id FROM studies WHERE status = "
                                                       "'complete' ORDER BY id",
                                    -1, &st, NULL)) != SQLITE_OK)
        return sc_store_sqlite_error (err, s->db, rc, s->path, "listing runs and studies");
      while (status == SC_OK && (rc = sqlite3_step (st)) == SQLITE_ROW)
        {
          const int64_t id = sqlite3_column_int64 (st, 0);
          if (pass == 0)
            {
              ScStoreRunShape shape;
              ScStorePredictions pred = { 0 };
              /* the predictions too: their pieces are shown as text, so a long one is
               * refused here rather than copied into OUT */
              if ((status = sc_store_run_shape (s, id, &shape, err)) == SC_OK)
                status = sc_store_read_predictions (s, id, &pred, err);
              sc_store_predictions_clear (&pred);
            }
          else
            {
              ScStoreStudyData *d = NULL;
              status = sc_store_read_study (s, id, &d, err);
              sc_store_study_data_free (d);
            }
        }
      if (status == SC_OK && rc != SQLITE_DONE)
        status = sc_store_sqlite_error (err, s->db, rc, s->path, "listing runs and studies");
      sqlite3_finalize (st);
    }
  return status;
}

/* ------------------------------------------------------------------------------------ */
/* Copying                                                                               */

enum { MAP_NONE = '.', MAP_MODEL = 'm', MAP_RUN = 'r', MAP_STUDY = 's' };

typedef struct {
  const char *select; /* from the input; when @produces, column 0 is the old id */
  const char *insert; /* into OUT: the remaining columns, in order */
  const char *maps;   /* one code per inserted column: MAP_* */
  char produces;      /* MAP_RUN / MAP_STUDY: the new rowid is recorded; else MAP_NONE */
} CopySpec;

/* Every table of schema v6 (sc-store-schema.c) but models (copy_models) and SQLite's own
 * sqlite_sequence, parents before children; check_tables_copied() refuses a merge into a
 * store with a table missing here, so a table added to the schema cannot be dropped by
 * the merge unnoticed. Ids that are INTEGER PRIMARY KEY without meaning outside the row
 * (attention.id ...) are given anew. */
static const CopySpec COPY[] = {
  { "SELECT id, model_id, text, created, backend, n_tokens, forward_ms, capture_ms, "
    "attention_bytes, status, kept, sparse_eps, kind, prompt_tokens, round_bits, zero_below "
    "FROM runs WHERE status = 'complete' ORDER BY id",
    "INSERT INTO runs (model_id, text, created, backend, n_tokens, forward_ms, capture_ms, "
    "attention_bytes, status, kept, sparse_eps, kind, prompt_tokens, round_bits, zero_below) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "m..............", MAP_RUN },
  { "SELECT run_id, pos, token_id, piece FROM tokens ORDER BY run_id, pos",
    "INSERT INTO tokens (run_id, pos, token_id, piece) VALUES (?,?,?,?)", "r...", MAP_NONE },
  { "SELECT run_id, layer, head, n_query, n_key, layout, dtype, data FROM attention ORDER BY id",
    "INSERT INTO attention (run_id, layer, head, n_query, n_key, layout, dtype, data) "
    "VALUES (?,?,?,?,?,?,?,?)", "r.......", MAP_NONE },
  { "SELECT run_id, layer, head, size, dtype, data FROM head_overviews ORDER BY id",
    "INSERT INTO head_overviews (run_id, layer, head, size, dtype, data) VALUES (?,?,?,?,?,?)",
    "r.....", MAP_NONE },
  { "SELECT run_id, layer, head, row0, row1, n_query, n_key, layout, dtype, dropped, offsets, "
    "keys, data FROM attention_parts ORDER BY id",
    "INSERT INTO attention_parts (run_id, layer, head, row0, row1, n_query, n_key, layout, "
    "dtype, dropped, offsets, keys, data) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "r............", MAP_NONE },
  { "SELECT run_id, layer, size FROM layer_windows ORDER BY run_id, layer",
    "INSERT INTO layer_windows (run_id, layer, size) VALUES (?,?,?)", "r..", MAP_NONE },
  { "SELECT run_id, layer, head, row0, row1, n_query, window_size, dtype, data "
    "FROM attention_bands ORDER BY id",
    "INSERT INTO attention_bands (run_id, layer, head, row0, row1, n_query, window_size, "
    "dtype, data) VALUES (?,?,?,?,?,?,?,?,?)", "r........", MAP_NONE },
  { "SELECT run_id, layer, head, row0, row1, n_query, n_key, layout, dtype, codec, "
    "block_rows, blocks, data FROM attention_z ORDER BY id",
    "INSERT INTO attention_z (run_id, layer, head, row0, row1, n_query, n_key, layout, dtype, "
    "codec, block_rows, blocks, data) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", "r............",
    MAP_NONE },
  { "SELECT run_id, pos, rank, token_id, piece, logit, prob FROM predictions "
    "ORDER BY run_id, pos, rank",
    "INSERT INTO predictions (run_id, pos, rank, token_id, piece, logit, prob) "
    "VALUES (?,?,?,?,?,?,?)", "r......", MAP_NONE },
  /* a model-level score OUT already has stays (sc-store-merge.h) */
  { "SELECT run_id, model_id, layer, head, metric, value FROM head_scores ORDER BY id",
    "INSERT OR IGNORE INTO head_scores (run_id, model_id, layer, head, metric, value) "
    "VALUES (?,?,?,?,?,?)", "rm....", MAP_NONE },
  { "SELECT id, kind, model_id, run_id, params, created, status FROM studies "
    "WHERE status = 'complete' ORDER BY id",
    "INSERT INTO studies (kind, model_id, run_id, params, created, status) "
    "VALUES (?,?,?,?,?,?)", ".mr...", MAP_STUDY },
  { "SELECT study_id, target, metric, value FROM ablations ORDER BY study_id, target, metric",
    "INSERT INTO ablations (study_id, target, metric, value) VALUES (?,?,?,?)", "s...",
    MAP_NONE },
  { "SELECT study_id, layer, head, metric, value FROM study_heads "
    "ORDER BY study_id, layer, head, metric",
    "INSERT INTO study_heads (study_id, layer, head, metric, value) VALUES (?,?,?,?,?)",
    "s....", MAP_NONE },
  { "SELECT study_id, series, pos, value FROM study_series ORDER BY study_id, series, pos",
    "INSERT INTO study_series (study_id, series, pos, value) VALUES (?,?,?,?)", "s...",
    MAP_NONE },
};

typedef struct {
  ScStore *out;
  const char *out_path; /* OUT as the user named it, for messages (out is its temporary copy) */
  ScStore *in;
  IdMap models, runs, studies;
  ScStoreMergeStats *stats;
} Copy;

static const IdMap *
map_of (const Copy *c, char code)
{
  return code == MAP_MODEL ? &c->models : code == MAP_RUN ? &c->runs : &c->studies;
}

/* Models by SHA-256: found in OUT (same shape, else the input is refused) or inserted. */
static ScStatus
copy_models (Copy *c, ScError *err)
{
  static const char *const dims = "file_size, path, name, arch, n_layers, n_heads, n_kv_heads, "
                                  "head_dim, n_embd, n_vocab, n_ctx_train, added";
  sqlite3_stmt *sel = NULL, *find = NULL, *ins = NULL;
  char sql[512];
  ScStatus status = SC_OK;
  int rc;

  snprintf (sql, sizeof sql, "SELECT id, sha256, %s FROM models ORDER BY id", dims);
  if ((rc = sqlite3_prepare_v2 (c->in->db, sql, -1, &sel, NULL)) != SQLITE_OK)
    return sc_store_sqlite_error (err, c->in->db, rc, c->in->path, "reading models");
  rc = sqlite3_prepare_v2 (c->out->db, "SELECT id, n_layers, n_heads, n_kv_heads, head_dim, "
                           "n_embd, n_vocab FROM models WHERE sha256 = ?", -1, &find, NULL);
  if (rc == SQLITE_OK)
    {
      snprintf (sql, sizeof sql, "INSERT INTO models (sha256, %s) VALUES "
                "(?,?,?,?,?,?,?,?,?,?,?,?,?)", dims);
      rc = sqlite3_prepare_v2 (c->out->db, sql, -1, &ins, NULL);
    }
  if (rc != SQLITE_OK)
    {
      status = sc_store_sqlite_error (err, c->out->db, rc, c->out_path, "merging models");
      goto out;
    }
  while ((rc = sqlite3_step (sel)) == SQLITE_ROW)
    {
      const int64_t old_id = sqlite3_column_int64 (sel, 0);
      int64_t new_id;
      sqlite3_reset (find);
      sqlite3_bind_value (find, 1, sqlite3_column_value (sel, 1));
      if ((rc = sqlite3_step (find)) == SQLITE_ROW)
        {
          new_id = sqlite3_column_int64 (find, 0);
          for (int k = 0; k < 6; k++) /* n_layers .. n_vocab: columns 6..11 of @sel */
            if (sqlite3_column_int64 (find, 1 + k) != sqlite3_column_int64 (sel, 6 + k))
              {
                status = sc_error_set (err, SC_ERR_FORMAT, "%s: model %lld has the SHA-256 of "
                                       "a model in %s but other dimensions; one of the files "
                                       "was edited or is damaged", c->in->path,
                                       (long long) old_id, c->out_path);
                goto out;
              }
        }
      else if (rc == SQLITE_DONE)
        {
          sqlite3_reset (ins);
          for (int k = 0; k < 13; k++)
            sqlite3_bind_value (ins, 1 + k, sqlite3_column_value (sel, 1 + k));
          if ((rc = sqlite3_step (ins)) != SQLITE_DONE)
            {
              status = sc_store_sqlite_error (err, c->out->db, rc, c->out_path, "copying "
                                              "model %lld of %s", (long long) old_id,
                                              c->in->path);
              goto out;
            }
          new_id = sqlite3_last_insert_rowid (c->out->db);
        }
      else
        {
          status = sc_store_sqlite_error (err, c->out->db, rc, c->out_path, "merging models");
          goto out;
        }
      if (!map_add (&c->models, old_id, new_id))
        {
          status = sc_error_set (err, SC_ERR_NOMEM, "out of memory");
          goto out;
        }
    }
  if (rc != SQLITE_DONE)
    status = sc_store_sqlite_error (err, c->in->db, rc, c->in->path, "reading models");
out:
  sqlite3_finalize (sel);
  sqlite3_finalize (find);
  sqlite3_finalize (ins);
  return status;
}

/* What remap_run_param did. */
enum { PARAM_LEFT_OUT = -1, PARAM_AS_IS = 0, PARAM_REWRITTEN = 1, PARAM_BAD_RUN = 2 };

/* Reads the run id that starts at @p (digits, perhaps after a '-') into *@id and returns
 * the end of its digits; @p itself when there are none. A negative id or one past
 * 2^63 - 1 (parsed with an overflow check, never wrapped) is −1. */
static const char *
read_run_id (const char *p, int64_t *id)
{
  const char *digits = p;
  bool negative = false;

  *id = 0;
  if (*p == '-')
    {
      negative = true;
      p++;
    }
  while (*p >= '0' && *p <= '9')
    {
      const int d = *p++ - '0';
      if (*id > (INT64_MAX - d) / 10)
        {
          while (*p >= '0' && *p <= '9')
            p++;
          *id = -1; /* too large: no run has that id */
          return p;
        }
      *id = *id * 10 + d;
    }
  if (p == digits)
    return digits;
  if (negative)
    *id = -1;
  return p;
}

/* A study's params name its run by id — every run-level study writes them canonically as
 * {"study":V,"run":R,...} (engine/study/) — and the run has a new id in OUT: R is
 * rewritten through the run map into @buf. A study of two runs (activation and path
 * patching, sc-patch-study.h) names the second right after the first,
 * {"study":V,"run":R,"corrupted":C,...}, and C is rewritten too. Returns
 * PARAM_REWRITTEN; PARAM_AS_IS when the params name no run (they are copied as they are);
 * PARAM_LEFT_OUT when they name a run this input does not bring (the study is left out
 * with it); PARAM_BAD_RUN when R or C is not a run id at all — negative, or past
 * 2^63 - 1, the largest SQLite gives (the params were edited), with its first characters
 * in @bad for the message. */
static int
remap_run_param (const Copy *c, const char *params, char *buf, size_t size, char *bad,
                 size_t bad_size)
{
  static const char head[] = "{\"study\":", key[] = ",\"run\":", key2[] = ",\"corrupted\":";
  const char *p = params, *digits, *end, *digits2 = NULL, *end2 = NULL;
  int64_t old_id, new_id, old2 = 0, new2 = 0;

  if (params == NULL || strncmp (p, head, sizeof head - 1) != 0)
    return PARAM_AS_IS;
  p += sizeof head - 1;
  while (*p >= '0' && *p <= '9')
    p++;
  if (strncmp (p, key, sizeof key - 1) != 0)
    return PARAM_AS_IS;
  digits = p + sizeof key - 1;
  end = read_run_id (digits, &old_id);
  if (end == digits || (*end != ',' && *end != '}'))
    return PARAM_AS_IS; /* "run":null, or not a number we wrote */
  if (strncmp (end, key2, sizeof key2 - 1) == 0)
    {
      digits2 = end + sizeof key2 - 1;
      end2 = read_run_id (digits2, &old2);
      if (end2 == digits2 || (*end2 != ',' && *end2 != '}'))
        digits2 = NULL; /* "corrupted":null: no second run */
    }
  if (old_id < 0 || (digits2 != NULL && old2 < 0))
    {
      const char *from = old_id < 0 ? digits : digits2, *to = old_id < 0 ? end : end2;
      snprintf (bad, bad_size, "%.*s", (int) (to - from < 40 ? to - from : 40), from);
      return PARAM_BAD_RUN;
    }
  if (!map_find (&c->runs, old_id, &new_id)
      || (digits2 != NULL && !map_find (&c->runs, old2, &new2)))
    return PARAM_LEFT_OUT;
  if (digits2 == NULL)
    return snprintf (buf, size, "%.*s%lld%s", (int) (digits - params), params,
                     (long long) new_id, end) < (int) size ? PARAM_REWRITTEN : PARAM_LEFT_OUT;
  return snprintf (buf, size, "%.*s%lld%.*s%lld%s", (int) (digits - params), params,
                   (long long) new_id, (int) (digits2 - end), end, (long long) new2, end2)
         < (int) size ? PARAM_REWRITTEN : PARAM_LEFT_OUT;
}

static ScStatus
copy_table (Copy *c, const CopySpec *spec, ScError *err)
{
  const int first = spec->produces != MAP_NONE ? 1 : 0;
  const int n_cols = (int) strlen (spec->maps);
  sqlite3_stmt *sel = NULL, *ins = NULL;
  ScStatus status = SC_OK;
  int rc;

  if ((rc = sqlite3_prepare_v2 (c->in->db, spec->select, -1, &sel, NULL)) != SQLITE_OK)
    return sc_store_sqlite_error (err, c->in->db, rc, c->in->path, "reading for the merge");
  if ((rc = sqlite3_prepare_v2 (c->out->db, spec->insert, -1, &ins, NULL)) != SQLITE_OK)
    {
      sqlite3_finalize (sel);
      return sc_store_sqlite_error (err, c->out->db, rc, c->out_path, "merging");
    }
  while ((rc = sqlite3_step (sel)) == SQLITE_ROW)
    {
      bool keep = true;
      sqlite3_reset (ins);
      sqlite3_clear_bindings (ins);
      for (int k = 0; k < n_cols && keep; k++)
        {
          const int col = first + k;
          if (spec->maps[k] == MAP_NONE || sqlite3_column_type (sel, col) == SQLITE_NULL)
            sqlite3_bind_value (ins, 1 + k, sqlite3_column_value (sel, col));
          else
            {
              int64_t new_id = 0;
              /* a reference to a run or study left out (not complete): the row goes too */
              keep = map_find (map_of (c, spec->maps[k]), sqlite3_column_int64 (sel, col),
                               &new_id);
              sqlite3_bind_int64 (ins, 1 + k, new_id);
            }
        }
      if (keep && spec->produces == MAP_STUDY)
        {
          /* column 4 of the SELECT, 4th of the INSERT: params */
          char params[SC_STORE_STUDY_MAX_PARAMS + 32], bad[48];
          const int r = remap_run_param (c, (const char *) sqlite3_column_text (sel, 4), params,
                                         sizeof params, bad, sizeof bad);
          if ((status = sc_store_check_line_param (c->in->path, sqlite3_column_int64 (sel, 0),
                                                   (const char *) sqlite3_column_text (sel, 4),
                                                   err))
              != SC_OK)
            goto out;
          if (r == PARAM_BAD_RUN)
            {
              status = sc_error_set (err, SC_ERR_FORMAT, "%s: study %lld: its parameters name "
                                     "run %s, which is not a run id (1 to %lld); the file "
                                     "was edited or is damaged: delete the study or use a "
                                     "clean copy of the shard", c->in->path,
                                     (long long) sqlite3_column_int64 (sel, 0), bad,
                                     (long long) INT64_MAX);
              goto out;
            }
          keep = r != PARAM_LEFT_OUT;
          if (r == PARAM_REWRITTEN)
            sqlite3_bind_text (ins, 4, params, -1, SQLITE_TRANSIENT);
        }
      if (!keep)
        {
          if (spec->produces != MAP_NONE)
            c->stats->n_skipped++;
          continue;
        }
      if ((rc = sqlite3_step (ins)) != SQLITE_DONE)
        {
          /* the table's name: the word after " INTO " */
          const char *table = strstr (spec->insert, " INTO ") + 6;
          const int len = (int) strcspn (table, " ");
          /* only a broken constraint is the row's fault; a full disk, an I/O error or a
           * lock is said as it is */
          /* ... and a damaged input, SC_ERR_FORMAT naming it (the contract): a CHECK that
           * the reader's checks do not repeat (a band BLOB's length) fails here */
          if ((rc & 0xff) == SQLITE_CONSTRAINT)
            status = sc_error_set (err, SC_ERR_FORMAT, "%s: a row of its table %.*s breaks a "
                                   "rule of the store (%s); the file was edited or is "
                                   "damaged: nothing was merged into %s", c->in->path, len,
                                   table, sqlite3_errmsg (c->out->db), c->out_path);
          else
            status = sc_store_sqlite_error (err, c->out->db, rc, c->out_path, "copying the "
                                            "rows of %s into %.*s", c->in->path, len, table);
          goto out;
        }
      if (spec->produces != MAP_NONE)
        {
          if (!map_add (spec->produces == MAP_RUN ? &c->runs : &c->studies,
                        sqlite3_column_int64 (sel, 0), sqlite3_last_insert_rowid (c->out->db)))
            {
              status = sc_error_set (err, SC_ERR_NOMEM, "out of memory");
              goto out;
            }
          if (spec->produces == MAP_RUN)
            c->stats->n_runs_added++;
          else
            c->stats->n_studies_added++;
        }
    }
  if (rc != SQLITE_DONE)
    status = sc_store_sqlite_error (err, c->in->db, rc, c->in->path, "reading for the merge");
out:
  sqlite3_finalize (sel);
  sqlite3_finalize (ins);
  return status;
}

/* Whether every table of @out — the schema this build writes — is copied by COPY (or is
 * models, or SQLite's sqlite_sequence). A table added to the schema without a COPY entry
 * would otherwise be dropped from every merged run without a word (issue 25: bands and
 * layer windows were). */
static ScStatus
check_tables_copied (ScStore *out, ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStatus status = SC_OK;
  int rc;

  if ((rc = sqlite3_prepare_v2 (out->db, "SELECT name FROM sqlite_schema WHERE type = 'table' "
                                "AND name NOT IN ('models', 'sqlite_sequence') ORDER BY name",
                                -1, &st, NULL)) != SQLITE_OK)
    return sc_store_sqlite_error (err, out->db, rc, out->path, "listing the store's tables");
  while (status == SC_OK && (rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      const char *name = (const char *) sqlite3_column_text (st, 0);
      char into[96];
      bool copied = false;

      snprintf (into, sizeof into, " INTO %s (", name != NULL ? name : "");
      for (size_t t = 0; t < sizeof COPY / sizeof COPY[0] && !copied; t++)
        copied = strstr (COPY[t].insert, into) != NULL;
      if (!copied)
        status = sc_error_set (err, SC_ERR_UNSUPPORTED, "%s: this build cannot merge table %s "
                               "(its merge does not copy it); nothing was merged",
                               out->path, name != NULL ? name : "?");
    }
  if (status == SC_OK && rc != SQLITE_DONE)
    status = sc_store_sqlite_error (err, out->db, rc, out->path, "listing the store's tables");
  sqlite3_finalize (st);
  return status;
}

/* Incomplete runs and studies of the input, counted as skipped. */
static void
count_incomplete (Copy *c)
{
  sqlite3_stmt *st = NULL;

  if (sqlite3_prepare_v2 (c->in->db, "SELECT (SELECT count(*) FROM runs WHERE status <> "
                          "'complete') + (SELECT count(*) FROM studies WHERE status <> "
                          "'complete')", -1, &st, NULL) == SQLITE_OK
      && sqlite3_step (st) == SQLITE_ROW)
    c->stats->n_skipped += (size_t) sqlite3_column_int64 (st, 0);
  sqlite3_finalize (st);
}

/* One input into OUT in one write transaction (and one read snapshot of the input). */
static ScStatus
copy_input (ScStore *out, const char *out_path, ScStore *in, ScStoreMergeStats *stats,
            ScError *err)
{
  Copy c = { .out = out, .out_path = out_path, .in = in, .stats = stats };
  ScStatus status = SC_OK;
  bool own = false;
  int rc;

  if ((rc = sc_store_exec (out->db, "BEGIN IMMEDIATE")) != SQLITE_OK)
    return sc_store_sqlite_error (err, out->db, rc, out_path, "starting the merge of %s",
                                  in->path);
  if ((rc = sc_store_read_begin (in, &own)) != SQLITE_OK)
    status = sc_store_sqlite_error (err, in->db, rc, in->path, "reading for the merge");
  if (status == SC_OK)
    status = copy_models (&c, err);
  for (size_t t = 0; status == SC_OK && t < sizeof COPY / sizeof COPY[0]; t++)
    status = copy_table (&c, &COPY[t], err);
  count_incomplete (&c);
  sc_store_read_end (in, own);
  if (status == SC_OK && (rc = sc_store_exec (out->db, "COMMIT")) != SQLITE_OK)
    status = sc_store_sqlite_error (err, out->db, rc, out_path, "committing the merge of %s",
                                    in->path);
  if (status != SC_OK && !sqlite3_get_autocommit (out->db))
    sc_store_exec (out->db, "ROLLBACK");
  free (c.models.v);
  free (c.runs.v);
  free (c.studies.v);
  return status;
}

/* ------------------------------------------------------------------------------------ */
/* The merge                                                                             */

static ScStatus
open_input (const char *path, ScStore **out, ScError *err)
{
  const ScStoreOptions ro = { .writable = false };
  ScStatus st;

  if ((st = sc_store_open (path, &ro, out, err)) != SC_OK)
    return st;
  if ((st = check_input (*out, err)) != SC_OK)
    {
      sc_store_close (*out);
      *out = NULL;
    }
  return st;
}

/* Whether PATH-wal exists with content. */
static bool
has_live_wal (const char *path)
{
  char wal[PATH_MAX + 8];
  struct stat sb;

  return snprintf (wal, sizeof wal, "%s-wal", path) < (int) sizeof wal && stat (wal, &sb) == 0
         && sb.st_size > 0;
}

static ScStatus
fsync_path (const char *path, bool dir, ScError *err)
{
  const int fd = open (path, (dir ? O_RDONLY | O_DIRECTORY : O_RDWR) | O_CLOEXEC);
  int rc;

  if (fd < 0)
    return sc_error_set (err, SC_ERR_IO, "cannot open %s to sync it: %s", path,
                         strerror (errno));
  rc = fsync (fd);
  close (fd);
  return rc == 0 ? SC_OK
                 : sc_error_set (err, SC_ERR_IO, "cannot sync %s to disk: %s", path,
                                 strerror (errno));
}

/* OUT's folder ("." for a bare name) into @buf. */
static void
folder_of (const char *path, char *buf, size_t size)
{
  const char *slash = strrchr (path, '/');

  if (slash == NULL)
    snprintf (buf, size, ".");
  else if (slash == path)
    snprintf (buf, size, "/");
  else
    snprintf (buf, size, "%.*s", (int) (slash - path), path);
}

/* Copies the store @src (checked, read-only) page by page into the empty file @dst. */
static ScStatus
backup_into (ScStore *src, const char *dst, ScError *err)
{
  sqlite3 *db = NULL;
  sqlite3_backup *b;
  int rc = sqlite3_open_v2 (dst, &db, SQLITE_OPEN_READWRITE, NULL);

  if (rc == SQLITE_OK && (b = sqlite3_backup_init (db, "main", src->db, "main")) != NULL)
    {
      rc = sqlite3_backup_step (b, -1);
      rc = sqlite3_backup_finish (b) == SQLITE_OK && rc == SQLITE_DONE ? SQLITE_OK
                                                                        : sqlite3_errcode (db);
    }
  else if (rc == SQLITE_OK)
    rc = sqlite3_errcode (db);
  if (rc != SQLITE_OK)
    {
      const ScStatus st = sc_store_sqlite_error (err, db, rc, dst, "copying %s", src->path);
      sqlite3_close (db);
      return st;
    }
  sqlite3_close (db);
  return SC_OK;
}

ScStatus
sc_store_merge (const char *out_path, const char *const *shards, size_t n_shards,
                ScStoreMergeProgress progress, void *user, ScStoreMergeStats *stats,
                ScError *err)
{
  ScStoreMergeStats local = { 0 };
  ScStoreManifests *man = NULL;
  ScStore **in = NULL, *tmp = NULL, *old = NULL;
  char tmp_path[PATH_MAX], dir[PATH_MAX];
  size_t n_in = 0;
  ScStatus status = SC_OK;
  struct stat sb;
  mode_t mode = 0;
  bool tmp_made = false; /* the temporary file is ours to remove on failure */
  int fd;

  if (out_path == NULL || *out_path == '\0' || shards == NULL || n_shards == 0)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "a merge needs OUT and at least one shard");
  if (snprintf (tmp_path, sizeof tmp_path, "%s.merging-XXXXXX", out_path)
      >= (int) sizeof tmp_path)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: the path is too long", out_path);
  if (has_live_wal (out_path))
    return sc_error_set (err, SC_ERR_IO, "%s is open in another process or was not closed "
                         "cleanly (%s-wal holds data); close it (or open and close it once) "
                         "before merging into it", out_path, out_path);
  if ((in = calloc (n_shards + 1, sizeof *in)) == NULL
      || (man = calloc (n_shards + 1, sizeof *man)) == NULL)
    {
      status = sc_error_set (err, SC_ERR_NOMEM, "out of memory");
      goto out;
    }

  /* 0. one file named twice (OUT among the shards, a shard twice) would be copied twice */
  {
    struct stat a, b;
    for (size_t i = 0; i < n_shards; i++)
      for (size_t j = 0; j <= n_shards; j++)
        {
          const char *other = j == n_shards ? out_path : shards[j];
          if (j != i && stat (shards[i], &a) == 0 && stat (other, &b) == 0
              && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
            {
              status = sc_error_set (err, SC_ERR_INVALID_ARG, "%s and %s are the same file; "
                                     "name each database once (OUT keeps what it holds)",
                                     shards[i], other);
              goto out;
            }
        }
  }

  /* 1. every input opened and checked before anything is written */
  if (stat (out_path, &sb) == 0)
    {
      mode = sb.st_mode & 07777;
      if ((status = open_input (out_path, &old, err)) != SC_OK)
        goto out;
      if ((status = sc_store_read_manifests (old, &man[n_in++], err)) != SC_OK)
        goto out;
    }
  else if (errno != ENOENT)
    {
      status = sc_error_set (err, SC_ERR_IO, "cannot access %s: %s", out_path, strerror (errno));
      goto out;
    }
  for (size_t i = 0; i < n_shards; i++)
    {
      if ((status = open_input (shards[i], &in[i], err)) != SC_OK
          || (status = sc_store_read_manifests (in[i], &man[n_in++], err)) != SC_OK)
        goto out;
    }
  if ((status = sc_store_check_manifests (man, n_in, err)) != SC_OK)
    goto out;

  /* 2. the temporary store: a copy of OUT, or a new store */
  if ((fd = mkstemp (tmp_path)) < 0)
    {
      status = sc_error_set (err, SC_ERR_IO, "cannot create a temporary file beside %s: %s",
                             out_path, strerror (errno));
      goto out;
    }
  tmp_made = true;
  /* OUT's permissions (mkstemp makes 0600): those it had; else a new file's, which the
   * umask decides — made again under the name mkstemp reserved, O_EXCL */
  if (old == NULL)
    {
      close (fd);
      unlink (tmp_path);
      fd = open (tmp_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      tmp_made = fd >= 0; /* else someone else's file holds the name now */
    }
  if (fd < 0 || (old != NULL && fchmod (fd, mode) != 0))
    {
      status = sc_error_set (err, SC_ERR_IO, "cannot create %s with OUT's permissions: %s",
                             tmp_path, strerror (errno));
      if (fd >= 0)
        close (fd);
      goto out;
    }
  close (fd);
  if (old != NULL && (status = backup_into (old, tmp_path, err)) != SC_OK)
    goto out;
  {
    const ScStoreOptions rw = { .writable = true };
    if ((status = sc_store_open (tmp_path, &rw, &tmp, err)) != SC_OK
        || (status = check_tables_copied (tmp, err)) != SC_OK)
      goto out;
  }

  /* 3. each shard in its own transaction (the temporary file is not OUT: a crash between
   * them leaves OUT as it was) */
  for (size_t i = 0; i < n_shards; i++)
    {
      if (progress != NULL && !progress (user, i, n_shards))
        {
          status = sc_error_set (err, SC_ERR_CANCELLED, "the merge into %s was stopped; %s is "
                                 "as it was", out_path, out_path);
          goto out;
        }
      if ((status = copy_input (tmp, out_path, in[i], &local, err)) != SC_OK)
        goto out;
    }
  {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2 (tmp->db, "SELECT count(*) FROM models", -1, &st, NULL) == SQLITE_OK
        && sqlite3_step (st) == SQLITE_ROW)
      local.n_models = (size_t) sqlite3_column_int64 (st, 0);
    sqlite3_finalize (st);
  }
  local.n_inputs = n_in;
  if (progress != NULL && !progress (user, n_shards, n_shards))
    {
      status = sc_error_set (err, SC_ERR_CANCELLED, "the merge into %s was stopped; %s is as "
                             "it was", out_path, out_path);
      goto out;
    }

  /* 4. close (the WAL folds into the file), sync, rename over OUT, sync the folder */
  sc_store_close (tmp);
  tmp = NULL;
  sc_store_close (old);
  old = NULL;
  if (has_live_wal (tmp_path))
    {
      status = sc_error_set (err, SC_ERR_IO, "%s: the merged store's WAL was not folded into "
                             "it; %s is as it was", tmp_path, out_path);
      goto out;
    }
  if ((status = fsync_path (tmp_path, false, err)) != SC_OK)
    goto out;
  if (has_live_wal (out_path))
    {
      status = sc_error_set (err, SC_ERR_IO, "%s was opened by another process during the "
                             "merge; it is as it was", out_path);
      goto out;
    }
  if (rename (tmp_path, out_path) != 0)
    {
      status = sc_error_set (err, SC_ERR_IO, "cannot rename %s to %s: %s", tmp_path, out_path,
                             strerror (errno));
      goto out;
    }
  tmp_path[0] = '\0';
  folder_of (out_path, dir, sizeof dir);
  if ((status = fsync_path (dir, true, err)) != SC_OK)
    goto out;
  if (stats != NULL)
    *stats = local;

out:
  sc_store_close (tmp);
  sc_store_close (old);
  for (size_t i = 0; in != NULL && i < n_shards; i++)
    sc_store_close (in[i]);
  for (size_t i = 0; man != NULL && i < n_in; i++)
    sc_store_manifests_clear (&man[i]);
  free (in);
  free (man);
  if (tmp_made && tmp_path[0] != '\0')
    {
      /* a failed merge leaves nothing beside OUT */
      char side[PATH_MAX + 8];
      unlink (tmp_path);
      snprintf (side, sizeof side, "%s-wal", tmp_path);
      unlink (side);
      snprintf (side, sizeof side, "%s-shm", tmp_path);
      unlink (side);
    }
  return status;
}
