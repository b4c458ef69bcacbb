/* fuzz-store.c — libFuzzer target for the capture store's reader.
 *
 * The input is a database file: it is written to a temporary file, opened read-only through
 * sc_store_open, then every reading path runs over it — list the runs, get each, read its
 * tokens, every head its model claims (bounded below) with its overview, its predictions
 * and head scores, then the first studies and the studies of each kind the seed holds —
 * touching every byte returned, so that a wrong bound shows up under ASan. A read-only open must not write: the file's bytes
 * are compared afterwards, and a change aborts (a finding).
 * Build: CC=clang meson setup build-fuzz -Dfuzzing=true. Seeds: stores Saccade wrote, made
 * small — build/tests/store/hostile-stores DIR writes a real store and its hostile variants,
 * build/tests/store/store-seed-every-table F a store with a row in every table (bands, layer
 * windows, row blocks, sparse heads, overviews, scores, predictions, studies, a manifest),
 * and the every-* hostile stores, built from another such store;
 * each seed is one of them re-paged to 512-byte pages (sqlite3 F 'PRAGMA journal_mode =
 * DELETE; PRAGMA page_size = 512; VACUUM': same schema, header and rows, 16 KB instead of
 * 1.2 MB, so that mutations land on pages that matter; the every-table store is 186 KB,
 * hence -max_len). Run:
 * build-fuzz/tests/fuzz/fuzz-store corpus-store/ -max_total_time=600 -max_len=262144
 *   -timeout=10 -rss_limit_mb=4096
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/store/sc-store-heads.h"
#include "engine/store/sc-store-predictions.h"
#include "engine/store/sc-store-scores.h"
#include "engine/store/sc-store-study.h"
#include "engine/store/sc-store.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static volatile uint8_t sink;

/* One file per process, rewritten for each input (with -wal and -shm removed). */
static char path[64];

static void
touch (const void *p, size_t n)
{
  if (n > 0)
    sink ^= ((const uint8_t *) p)[0] ^ ((const uint8_t *) p)[n - 1];
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  ScStoreOptions ro = { .busy_timeout_ms = -1 };
  ScStore *s = NULL;
  ScStoreRunInfo *runs = NULL;
  ScError err;
  size_t n = 0, i;
  char side[80];
  FILE *f;

  if (path[0] == '\0')
    snprintf (path, sizeof path, "/tmp/fuzz-store-%ld.sqlite", (long) getpid ());
  snprintf (side, sizeof side, "%s-wal", path);
  unlink (side);
  snprintf (side, sizeof side, "%s-shm", path);
  unlink (side);
  if ((f = fopen (path, "wb")) == NULL)
    return 0;
  if (size > 0 && fwrite (data, 1, size, f) != size)
    {
      fclose (f);
      return 0;
    }
  fclose (f);

  if (sc_store_open (path, &ro, &s, &err) != SC_OK)
    goto check;
  if (sc_store_list_runs (s, &runs, &n, &err) == SC_OK)
    for (i = 0; i < n; i++)
      {
        const ScStoreRunInfo *r = &runs[i];
        ScStoreRunInfo info;
        ScStoreToken *tokens = NULL;
        size_t n_tokens = 0, t;
        uint32_t l, h;
        ScStoreOverview ov;
        ScStorePredictions pred;
        ScStoreHeadScores scores;

        touch (r->text, r->text_len + 1);
        touch (r->model_name, strlen (r->model_name) + 1);
        touch (r->model_path, strlen (r->model_path) + 1);
        touch (r->model_arch, strlen (r->model_arch) + 1);
        touch (r->backend, strlen (r->backend) + 1);
        /* the contract: KV groups divide the heads */
        if (r->n_kv_heads == 0 || r->n_heads % r->n_kv_heads != 0)
          abort ();
        sink ^= (uint8_t) (r->n_heads / r->n_kv_heads);
        if (sc_store_get_run (s, r->id, &info, &err) == SC_OK)
          {
            touch (info.text, info.text_len + 1);
            sc_store_run_info_clear (&info);
          }
        if (sc_store_read_tokens (s, r->id, &tokens, &n_tokens, &err) == SC_OK)
          {
            if (n_tokens != r->n_tokens)
              abort ();
            for (t = 0; t < n_tokens; t++)
              touch (tokens[t].piece, tokens[t].len);
            sc_store_tokens_free (tokens);
          }
        /* at most 64 heads a run: the checked dimensions are still up to 65536 heads */
        for (l = 0; l < r->n_layers && l < 8; l++)
          for (h = 0; h < r->n_heads && h < 8; h++)
            {
              ScStoreHead head;
              if (sc_store_read_head (s, r->id, (int) l, (int) h, &head, &err) != SC_OK)
                continue;
              if (head.n_query != r->n_tokens || head.n_key != r->n_tokens)
                abort ();
              for (size_t v = 0; v < (size_t) head.n_query * head.n_key; v++)
                if (!(head.probs[v] >= 0.0f && head.probs[v] <= 1.0f))
                  abort ();
              sc_store_head_clear (&head);
              if (sc_store_read_overview (s, r->id, (int) l, (int) h, &ov, &err) == SC_OK)
                {
                  for (size_t v = 0; v < (size_t) ov.size * ov.size; v++)
                    if (!(ov.values[v] >= 0.0f && ov.values[v] <= 1.0f))
                      abort ();
                  sc_store_overview_clear (&ov);
                }
            }
        if (sc_store_read_predictions (s, r->id, &pred, &err) == SC_OK)
          {
            if (pred.n_positions != 0 && pred.n_positions != r->n_tokens)
              abort ();
            for (size_t k = 0; k < (size_t) pred.n_positions * pred.k; k++)
              {
                /* the contract: pieces a window can lay out (issue 25) */
                if (pred.pieces[k].len > SC_STORE_MAX_PREDICTION_PIECE_BYTES)
                  abort ();
                touch (pred.pieces[k].piece, pred.pieces[k].len);
              }
            sc_store_predictions_clear (&pred);
          }
        if (sc_store_read_head_scores (s, r->id, &scores, &err) == SC_OK)
          sc_store_head_scores_clear (&scores);
      }
  sc_store_run_list_free (runs, n);
  /* studies: the first ids, whatever their kind */
  for (int64_t id = 1; id <= 16; id++)
    {
      ScStoreStudyData *d = NULL;
      if (sc_store_read_study (s, id, &d, &err) != SC_OK)
        continue;
      touch (d->params, strlen (d->params) + 1);
      touch (d->heads, d->n_head_values * sizeof *d->heads);
      touch (d->series, d->n_series_values * sizeof *d->series);
      sc_store_study_data_free (d);
    }
  /* studies listed by kind: the run-level, sentence and manifest kinds of the seed */
  {
    static const char *const kinds[] = { "shard", "ablate-heads", "faithfulness" };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
      {
        ScStoreStudyRef *refs = NULL;
        size_t n_refs = 0;
        if (sc_store_list_studies (s, kinds[k], &refs, &n_refs, &err) != SC_OK)
          continue;
        for (size_t r = 0; r < n_refs; r++)
          {
            touch (refs[r].params, strlen (refs[r].params) + 1);
            touch (refs[r].model_name, strlen (refs[r].model_name) + 1);
          }
        sc_store_study_refs_free (refs, n_refs);
      }
  }
  sc_store_close (s);

check:
  /* read-only means read-only: the file is what it was */
  if ((f = fopen (path, "rb")) != NULL)
    {
      uint8_t *back = malloc (size + 1);
      size_t got = back != NULL ? fread (back, 1, size + 1, f) : 0;
      fclose (f);
      if (back != NULL && (got != size || (size > 0 && memcmp (back, data, size) != 0)))
        abort ();
      free (back);
    }
  return 0;
}
