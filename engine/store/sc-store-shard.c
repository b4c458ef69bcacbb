/* sc-store-shard.c — shard manifests (sc-store-merge.h): written by sc_store_shard_mark,
 * read and compared by the merge (sc-store-merge.c). A manifest is a study of kind
 * SC_STORE_SHARD_KIND whose params are what the shards of one study share and whose
 * series "shard" holds (I, N); every number is checked as it is read. */
#include "store/sc-store-merge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sc-store-private.h"
#include "store/sc-store-study.h"

void
sc_store_manifests_clear (ScStoreManifests *in)
{
  for (size_t i = 0; i < in->n_m; i++)
    free (in->m[i].params);
  free (in->m);
  in->m = NULL;
  in->n_m = 0;
}

/* The non-negative integer after "@key": in @params: 1 and it in *@value; 0 when @params
 * have no such member; -1 when what follows is no integer Saccade writes (a sign, no
 * digits, more than fits an int64_t, anything but ',' or '}' after it). */
static int
params_integer (const char *params, const char *key, int64_t *value)
{
  char pattern[32];
  const char *p, *digits;
  int64_t v = 0;

  snprintf (pattern, sizeof pattern, "\"%s\":", key);
  if (params == NULL || (p = strstr (params, pattern)) == NULL)
    return 0;
  digits = p += strlen (pattern);
  for (; *p >= '0' && *p <= '9'; p++)
    {
      if (v > (INT64_MAX - (*p - '0')) / 10)
        return -1;
      v = v * 10 + (*p - '0');
    }
  if (p == digits || (*p != ',' && *p != '}'))
    return -1;
  *value = v;
  return 1;
}

/* What follows "@key": in @params (which has it), up to the member's end and at most 24
 * characters, into @buf (32 bytes), for a message. */
static const char *
member_value (const char *params, const char *key, char buf[32])
{
  char pattern[32];
  const char *p;
  size_t len;

  snprintf (pattern, sizeof pattern, "\"%s\":", key);
  p = strstr (params, pattern) + strlen (pattern);
  len = strcspn (p, ",}");
  snprintf (buf, 32, "%.*s", (int) (len < 24 ? len : 24), p);
  return buf;
}

ScStatus
sc_store_check_line_param (const char *path, int64_t study_id, const char *params,
                           ScError *err)
{
  int64_t line = 0;
  const int r = params_integer (params, "line", &line);
  char value[32];

  if (r == 0 || (r == 1 && line >= 1 && line <= SC_STORE_MAX_LINE))
    return SC_OK;
  return sc_error_set (err, SC_ERR_FORMAT, "%s: study %lld names line %s of its sentence "
                       "file, which no file has (1 to %d); the file was edited or is "
                       "damaged: delete the study or use a clean copy",
                       path, (long long) study_id, member_value (params, "line", value),
                       SC_STORE_MAX_LINE);
}

/* Reads @store's complete manifests (each checked: its study readable, series "shard"
 * exactly (I, N) with integers 0 <= I < N <= SC_STORE_MAX_SHARDS, a "shards" member of
 * its params equal to N). */
ScStatus
sc_store_read_manifests (ScStore *store, ScStoreManifests *in, ScError *err)
{
  sqlite3_stmt *st = NULL;
  ScStatus status = SC_OK;
  int rc;

  in->path = store->path;
  if ((rc = sqlite3_prepare_v2 (store->db, "SELECT s.id, m.sha256 FROM studies s JOIN models m "
                                "ON m.id = s.model_id WHERE s.kind = '" SC_STORE_SHARD_KIND
                                "' AND s.status = 'complete' ORDER BY s.id", -1, &st, NULL))
      != SQLITE_OK)
    return sc_store_sqlite_error (err, store->db, rc, store->path, "reading shard manifests");
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      const int64_t id = sqlite3_column_int64 (st, 0);
      ScStoreStudyData *d = NULL;
      ScStoreManifest *grown, *m;
      double i = NAN, n = NAN;

      if (sqlite3_column_type (st, 1) != SQLITE_BLOB
          || sqlite3_column_bytes (st, 1) != SC_SHA256_DIGEST_SIZE)
        {
          status = sc_error_set (err, SC_ERR_FORMAT, "%s: shard manifest %lld: its model's "
                                 "SHA-256 is not 32 bytes", store->path, (long long) id);
          break;
        }
      if ((status = sc_store_read_study (store, id, &d, err)) != SC_OK)
        break;
      for (size_t k = 0; k < d->n_series_values; k++)
        if (strcmp (d->series[k].series, "shard") == 0 && d->series[k].pos == 0)
          i = d->series[k].value;
        else if (strcmp (d->series[k].series, "shard") == 0 && d->series[k].pos == 1)
          n = d->series[k].value;
      if (!(n >= 1 && n <= SC_STORE_MAX_SHARDS && n == floor (n) && i >= 0 && i < n
            && i == floor (i))
          || d->n_series_values != 2)
        {
          sc_store_study_data_free (d);
          status = sc_error_set (err, SC_ERR_FORMAT, "%s: shard manifest %lld does not hold a "
                                 "shard index I and a count N with 0 <= I < N <= %d; the "
                                 "file was edited or is damaged", store->path, (long long) id,
                                 SC_STORE_MAX_SHARDS);
          break;
        }
      {
        int64_t said = 0;
        const int r = params_integer (d->params, "shards", &said);
        char value[32];
        if (r == -1 || (r == 1 && said != (int64_t) n))
          {
            status = sc_error_set (err, SC_ERR_FORMAT, "%s: shard manifest %lld: its "
                                   "parameters say \"shards\":%s but it is shard %d of %d; "
                                   "the file was edited or is damaged", store->path,
                                   (long long) id, member_value (d->params, "shards", value), (int) i,
                                   (int) n);
            sc_store_study_data_free (d);
            break;
          }
      }
      if ((grown = realloc (in->m, (in->n_m + 1) * sizeof *grown)) == NULL)
        {
          sc_store_study_data_free (d);
          status = sc_error_set (err, SC_ERR_NOMEM, "out of memory");
          break;
        }
      in->m = grown;
      m = &in->m[in->n_m++];
      m->study_id = id;
      m->params = d->params;
      d->params = NULL;
      memcpy (m->sha256, sqlite3_column_blob (st, 1), SC_SHA256_DIGEST_SIZE);
      m->index = (int) i;
      m->n = (int) n;
      sc_store_study_data_free (d);
    }
  if (status == SC_OK && rc != SQLITE_DONE)
    status = sc_store_sqlite_error (err, store->db, rc, store->path, "reading shard manifests");
  sqlite3_finalize (st);
  return status;
}

ScStatus
sc_store_read_shard_manifests (ScStore *store, ScStoreManifest **out, size_t *n_out,
                               ScError *err)
{
  ScStoreManifests in = { 0 };
  ScStatus status;

  *out = NULL;
  *n_out = 0;
  if (store->schema_version < 2)
    return SC_OK; /* no studies before version 2 */
  if ((status = sc_store_read_manifests (store, &in, err)) != SC_OK)
    {
      sc_store_manifests_clear (&in);
      return status;
    }
  *out = in.m;
  *n_out = in.n_m;
  return SC_OK;
}

void
sc_store_manifests_free (ScStoreManifest *m, size_t n)
{
  ScStoreManifests in = { NULL, m, n };

  sc_store_manifests_clear (&in);
}

/* The manifests rule of sc-store-merge.h over all inputs. */
ScStatus
sc_store_check_manifests (const ScStoreManifests *in, size_t n_in, ScError *err)
{
  const ScStoreManifests *ref = NULL;
  const ScStoreManifest *r = NULL;

  for (size_t a = 0; a < n_in; a++)
    if (in[a].n_m > 0)
      {
        ref = &in[a];
        r = &in[a].m[0];
        break;
      }
  if (ref == NULL)
    return SC_OK; /* plain stores: nothing to compare */
  for (size_t a = 0; a < n_in; a++)
    {
      if (in[a].n_m == 0)
        return sc_error_set (err, SC_ERR_INVALID_ARG, "%s is not a shard of the study in %s "
                             "(it holds no shard manifest); merge shards of one study only",
                             in[a].path, ref->path);
      for (size_t k = 0; k < in[a].n_m; k++)
        {
          const ScStoreManifest *m = &in[a].m[k];
          if (memcmp (m->sha256, r->sha256, SC_SHA256_DIGEST_SIZE) != 0)
            {
              char h1[SC_SHA256_HEX_SIZE], h2[SC_SHA256_HEX_SIZE];
              sc_sha256_hex (m->sha256, h1);
              sc_sha256_hex (r->sha256, h2);
              return sc_error_set (err, SC_ERR_INVALID_ARG, "%s was made with another model "
                                   "(SHA-256 %.12s...) than %s (%.12s...); shards of one study "
                                   "share their model", in[a].path, h1, ref->path, h2);
            }
          if (strcmp (m->params, r->params) != 0)
            return sc_error_set (err, SC_ERR_INVALID_ARG, "%s was made with other settings "
                                 "than %s: %s against %s; shards of one study share the file, "
                                 "the settings and N", in[a].path, ref->path, m->params,
                                 r->params);
          if (m->n != r->n)
            return sc_error_set (err, SC_ERR_INVALID_ARG, "%s is shard %d of %d, %s of %d",
                                 in[a].path, m->index, m->n, ref->path, r->n);
          /* the same index in two inputs (or twice in one) would count its work twice */
          for (size_t b = 0; b <= a; b++)
            for (size_t j = 0; j < (b == a ? k : in[b].n_m); j++)
              if (in[b].m[j].index == m->index)
                return sc_error_set (err, SC_ERR_INVALID_ARG, "shard %d of %d is in both %s "
                                     "and %s; merge each shard once (rerun a shard into its "
                                     "own database, then merge into a new OUT)", m->index,
                                     m->n, in[b].path, in[a].path);
        }
    }
  return SC_OK;
}

/* ------------------------------------------------------------------------------------ */
/* Manifests, written                                                                    */

ScStatus
sc_store_shard_mark (ScStore *store, const ScStoreModel *model, const char *params, int index,
                     int n, ScError *err)
{
  ScStoreManifests have = { 0 };
  ScStoreStudy *s = NULL;
  ScStatus status;

  if (model == NULL || params == NULL || n < 1 || n > SC_STORE_MAX_SHARDS || index < 0
      || index >= n)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "%s: shard %d of %d is not a shard (0 <= I "
                         "< N <= %d)", store->path, index, n, SC_STORE_MAX_SHARDS);
  if (store->schema_version >= 2 && (status = sc_store_read_manifests (store, &have, err)) != SC_OK)
    return status;
  for (size_t k = 0; k < have.n_m; k++)
    {
      const ScStoreManifest *m = &have.m[k];
      const bool same = strcmp (m->params, params) == 0 && m->index == index && m->n == n
                        && memcmp (m->sha256, model->sha256, SC_SHA256_DIGEST_SIZE) == 0;
      if (!same)
        {
          status = sc_error_set (err, SC_ERR_INVALID_ARG, "%s already holds shard %d of %d of "
                                 "another study (%s); give each shard of each study its own "
                                 "--db", store->path, m->index, m->n, m->params);
          sc_store_manifests_clear (&have);
          return status;
        }
    }
  if (have.n_m > 0)
    {
      sc_store_manifests_clear (&have);
      return SC_OK;
    }
  if ((status = sc_store_study_begin (store, SC_STORE_SHARD_KIND, model, params, &s, err))
        != SC_OK
      || (status = sc_store_study_add_series (s, "shard", 0, index, err)) != SC_OK
      || (status = sc_store_study_add_series (s, "shard", 1, n, err)) != SC_OK)
    {
      sc_store_study_abort (s);
      return status;
    }
  return sc_store_study_commit (s, NULL, err);
}
