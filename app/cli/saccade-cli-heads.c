/* saccade-cli-heads.c — `saccade heads`: every head's statistics of a stored run, sortable,
 * and what the head-analysis verbs share (saccade-cli-heads-private.h: compare in
 * saccade-cli-compare.c, rollout in saccade-cli-rollout.c). Parse -> a result (HeadsResult:
 * the layer profile's arrays) -> text or JSON; the numbers come from the store
 * (sc-store-scores.h) and engine/analysis/, nothing is computed here by hand.
 */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli-heads-private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "app/core/saccade-csv.h"
#include "engine/analysis/sc-cluster.h"
#include "engine/analysis/sc-head-distance.h"
#include "engine/analysis/sc-rollout.h"
#include "engine/store/sc-store-scores.h"

/* ------------------------------------------------------------------------------------ */
/* Shared                                                                                */

/* Opens the store at @path writable when it can be (so that scores computed for an older
 * run are kept), else read-only. */
ScStore *
saccade_cli_heads_open_store (const char *path, gboolean want_write, ScError *err)
{
  ScStore *store = NULL;

  if (want_write && g_file_test (path, G_FILE_TEST_EXISTS)
      && (store = saccade_store_open (path, TRUE, NULL)) != NULL)
    return store;
  return saccade_store_open (path, FALSE, err);
}

void
saccade_cli_run_heads_clear (SaccadeCliRunHeads *r)
{
  sc_store_run_info_clear (&r->info);
  sc_store_tokens_free (r->tokens);
  g_strfreev (r->labels);
  g_free (r->heads);
  memset (r, 0, sizeof *r);
}

/* Every head of the run @r holds (after saccade_cli_run_heads_read). */
gboolean
saccade_cli_run_heads_load (ScStore *store, SaccadeCliRunHeads *r, ScError *err)
{
  const ScStoreRunInfo *in = &r->info;
  const gsize nn = (gsize) in->n_tokens * in->n_tokens;

  if ((r->heads = g_try_malloc_n ((gsize) in->n_layers * in->n_heads * nn, sizeof (float)))
      == NULL)
    {
      sc_error_set (err, SC_ERR_NOMEM, "run %" G_GINT64_FORMAT ": its %u heads of %u tokens "
                    "(%.1f GB) do not fit in memory", in->id, in->n_layers * in->n_heads,
                    in->n_tokens, in->n_layers * in->n_heads * nn * 4.0 / 1e9);
      return FALSE;
    }
  for (guint l = 0; l < in->n_layers; l++)
    for (guint h = 0; h < in->n_heads; h++)
      {
        ScStoreHead hd = { 0 };

        if (sc_store_read_head (store, in->id, (int) l, (int) h, &hd, err) != SC_OK)
          return FALSE;
        memcpy (r->heads + ((gsize) l * in->n_heads + h) * nn, hd.probs, nn * sizeof (float));
        sc_store_head_clear (&hd);
      }
  return TRUE;
}

/* The run, its tokens and labels, and with @all_heads every head. */
gboolean
saccade_cli_run_heads_read (ScStore *store, gint64 run, gboolean all_heads,
                            SaccadeCliRunHeads *r, ScError *err)
{
  if (sc_store_get_run (store, run, &r->info, err) != SC_OK
      || sc_store_read_tokens (store, run, &r->tokens, &r->n_tokens, err) != SC_OK)
    return FALSE;
  r->labels = saccade_token_labels_for_store (r->tokens, r->n_tokens);
  return !all_heads || saccade_cli_run_heads_load (store, r, err);
}

int
saccade_cli_group_size (const ScStoreRunInfo *info)
{
  return (int) (info->n_heads / info->n_kv_heads); /* the store's contract: divides */
}

/* "saccade: run R has layers 0-L and heads 0-H" (exit status 2) unless (layer, head) is
 * one of the run's heads. */
gboolean
saccade_cli_check_head (const ScStoreRunInfo *info, int layer, int head)
{
  if (layer >= 0 && head >= 0 && layer < (int) info->n_layers && head < (int) info->n_heads)
    return TRUE;
  fprintf (stderr, "saccade: run %" G_GINT64_FORMAT " has layers 0-%d and heads 0-%d; there is "
           "no layer %d head %d\n", info->id, (int) info->n_layers - 1, (int) info->n_heads - 1,
           layer, head);
  return FALSE;
}

gboolean
saccade_cli_write_gstring (const char *path, const GString *s, GError **error)
{
  return g_file_set_contents (path, s->str, (gssize) s->len, error);
}

/* ------------------------------------------------------------------------------------ */
/* heads                                                                                 */

typedef struct {
  SaccadeCliRunHeads run;                  /* info and labels only */
  ScStoreHeadScores scores;
  int sort;                      /* a score index (sc_store_score_id), or -1: layer order */
  int *order;                    /* (n_layers * n_heads) head indices, in table order */
} HeadsResult;

static double
score_value (const ScHeadStats *s, int k)
{
  if (k < SC_HEAD_N_METRICS)
    return sc_head_stats_get (s, (ScHeadMetric) k);
  return k == SC_HEAD_N_METRICS ? s->last_top : s->last_top_weight;
}

static const HeadsResult *sort_ctx; /* qsort has no user pointer; the verb is single-threaded */

/* Largest first; undefined (NaN) last; ties in layer order. */
static int
cmp_heads (const void *pa, const void *pb)
{
  const int a = *(const int *) pa, b = *(const int *) pb;
  const double x = score_value (&sort_ctx->scores.stats[a], sort_ctx->sort);
  const double y = score_value (&sort_ctx->scores.stats[b], sort_ctx->sort);

  if (isnan (x) != isnan (y))
    return isnan (x) ? 1 : -1;
  if (!isnan (x) && x != y)
    return x < y ? 1 : -1;
  return (a > b) - (a < b);
}

static gboolean
heads_compute (ScStore *store, gint64 run, HeadsResult *r, ScError *err)
{
  if (!saccade_cli_run_heads_read (store, run, FALSE, &r->run, err)
      || sc_store_read_head_scores (store, run, &r->scores, err) != SC_OK)
    return FALSE;
  {
    const int n_all = (int) (r->scores.n_layers * r->scores.n_heads);
    r->order = g_new (int, n_all);
    for (int i = 0; i < n_all; i++)
      r->order[i] = i;
    if (r->sort >= 0)
      {
        sort_ctx = r;
        qsort (r->order, (size_t) n_all, sizeof *r->order, cmp_heads);
        sort_ctx = NULL;
      }
  }
  return TRUE;
}

static void
heads_print_json (const HeadsResult *r)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  const int g = saccade_cli_group_size (&r->run.info);

  json_builder_begin_object (b);
  saccade_json_begin_object (b, "run");
  saccade_json_run (b, &r->run.info);
  json_builder_end_object (b);
  saccade_json_string (b, "sort", r->sort >= 0 ? sc_store_score_id (r->sort) : NULL);
  saccade_json_bool (b, "computed", r->scores.computed);
  saccade_json_bool (b, "stored", r->scores.computed ? r->scores.stored : TRUE);
  saccade_json_begin_array (b, "heads");
  for (guint i = 0; i < r->scores.n_layers * r->scores.n_heads; i++)
    {
      const int h = r->order[i];
      const ScHeadStats *s = &r->scores.stats[h];

      json_builder_begin_object (b);
      saccade_json_head (b, h / (int) r->scores.n_heads, h % (int) r->scores.n_heads);
      saccade_json_int (b, "kv_head", (h % (int) r->scores.n_heads) / g);
      for (int k = 0; k < SC_HEAD_N_METRICS; k++)
        saccade_json_double (b, sc_store_score_id (k), score_value (s, k));
      saccade_json_int (b, SC_STORE_SCORE_LAST_TOP_KEY, s->last_top);
      saccade_json_double (b, SC_STORE_SCORE_LAST_TOP_WEIGHT, s->last_top_weight);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  saccade_json_print (b);
}

/* Short column titles, in score order. */
static const char *const score_titles[SC_STORE_N_SCORES] = {
  "entropy", "ent-norm", "distance", "confid", "sink", "sink-k", "prev-tok", "self",
  "last-ent", "top-key", "top-w",
};

static void
heads_print_text (const HeadsResult *r)
{
  const int g = saccade_cli_group_size (&r->run.info);

  printf ("Run %" G_GINT64_FORMAT ": %u layers x %u heads (%u KV head%s), %u tokens%s%s\n",
          r->run.info.id, r->scores.n_layers, r->scores.n_heads, r->scores.n_kv_heads,
          r->scores.n_kv_heads == 1 ? "" : "s", r->scores.n_tokens, r->sort >= 0 ? ", sorted by " : "",
          r->sort >= 0 ? sc_store_score_id (r->sort) : "");
  if (r->scores.computed)
    printf ("(statistics computed from the stored heads%s)\n",
            r->scores.stored ? " and stored with the run" : "; the store is read-only");
  printf ("layer head kv");
  for (int k = 0; k < SC_STORE_N_SCORES; k++)
    printf (" %8s", score_titles[k]);
  printf ("  top token\n");
  for (guint i = 0; i < r->scores.n_layers * r->scores.n_heads; i++)
    {
      const int h = r->order[i];
      const ScHeadStats *s = &r->scores.stats[h];

      printf ("%5d %4d %2d", h / (int) r->scores.n_heads, h % (int) r->scores.n_heads,
              (h % (int) r->scores.n_heads) / g);
      for (int k = 0; k < SC_HEAD_N_METRICS; k++)
        {
          const double v = score_value (s, k);
          if (isnan (v))
            printf (" %8s", "-");
          else
            printf (" %8.4f", v);
        }
      /* the store keeps last_top within the run; a label is only read within it */
      printf (" %8d %8.4f  '%s'\n", s->last_top, s->last_top_weight,
              s->last_top >= 0 && (size_t) s->last_top < r->run.n_tokens
                ? r->run.labels[s->last_top] : "?");
    }
}

int
saccade_cmd_heads (int argc, char **argv)
{
  gboolean json = FALSE;
  g_autofree char *db_opt = NULL, *sort_opt = NULL;
  GOptionEntry entries[] = {
    SACCADE_STORE_CLI_DB_OPTION (&db_opt),
    { "sort", 's', 0, G_OPTION_ARG_STRING, &sort_opt,
      "Sort by this metric, largest first: entropy, entropy-norm, distance, confidence, sink, "
      "sink-k, previous-token, self, last-entropy, last-top-key, last-top-weight", "METRIC" },
    SACCADE_CLI_JSON_OPTION (&json),
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "RUN - every head's statistics (docs/metrics.md), per layer and head");
  g_autofree char *path = NULL;
  HeadsResult r = { .sort = -1 };
  ScStore *store;
  gboolean ok;
  ScError err = { 0 };
  gint64 run;
  int rc = 0;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!saccade_store_cli_parse_run (ctx, &argc, &argv, "heads", &run))
    return 2;
  if (sort_opt != NULL)
    {
      for (int k = 0; k < SC_STORE_N_SCORES; k++)
        if (strcmp (sort_opt, sc_store_score_id (k)) == 0)
          r.sort = k;
      if (r.sort < 0)
        {
          fprintf (stderr, "saccade: --sort takes a metric of `saccade heads --help`, not "
                   "'%s'\n", sort_opt);
          return 2;
        }
    }
  path = saccade_db_path (db_opt);
  /* Read-only first: opening a store writable changes it (its journal mode, its header),
   * and a reading verb leaves the file as it was. Only a run whose scores had to be computed
   * is read again writable, so that they are kept for next time. */
  if ((store = saccade_cli_heads_open_store (path, FALSE, &err)) == NULL)
    return saccade_store_cli_fail (&err);
  ok = heads_compute (store, run, &r, &err);
  if (ok && r.scores.computed && g_access (path, W_OK) == 0)
    {
      saccade_cli_run_heads_clear (&r.run);
      sc_store_head_scores_clear (&r.scores);
      g_clear_pointer (&r.order, g_free);
      sc_store_close (store);
      if ((store = saccade_cli_heads_open_store (path, TRUE, &err)) == NULL)
        return saccade_store_cli_fail (&err);
      ok = heads_compute (store, run, &r, &err);
    }
  if (!ok)
    rc = saccade_store_cli_fail (&err);
  else if (json)
    heads_print_json (&r);
  else
    heads_print_text (&r);
  saccade_cli_run_heads_clear (&r.run);
  sc_store_head_scores_clear (&r.scores);
  g_free (r.order);
  sc_store_close (store);
  return rc;
}
