/* saccade-cli-compare.c — `saccade compare`: two heads side by side with their distance and
 * largest differences (PairResult: the difference map), or every head's distance matrix in
 * clustering order (DistanceResult). Parse -> a result -> text, JSON or CSV; the distances
 * and the order come from engine/analysis/ (sc-head-distance.h, sc-cluster.h).
 */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli-heads-private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/core/saccade-csv.h"
#include "engine/analysis/sc-cluster.h"
#include "engine/analysis/sc-head-distance.h"
#include "engine/analysis/sc-rollout.h"
#include "engine/store/sc-store-scores.h"

/* ------------------------------------------------------------------------------------ */
/* compare: two heads                                                                    */

typedef struct {
  gint64 run;
  int layer, head;
} HeadRef;

/* Parses "RUN:LAYER:HEAD" (non-negative integers, run >= 1). */
static gboolean
parse_head_ref (const char *s, HeadRef *out)
{
  g_auto (GStrv) parts = g_strsplit (s, ":", -1);
  guint64 v[3];

  if (g_strv_length (parts) != 3)
    goto bad;
  for (int i = 0; i < 3; i++)
    if (!g_ascii_string_to_unsigned (parts[i], 10, i == 0 ? 1 : 0, i == 0 ? G_MAXINT64 : G_MAXINT,
                                     &v[i], NULL))
      goto bad;
  out->run = (gint64) v[0];
  out->layer = (int) v[1];
  out->head = (int) v[2];
  return TRUE;
bad:
  fprintf (stderr, "saccade: '%s' is not RUN:LAYER:HEAD (for example 3:5:2, layer 5 head 2 of "
           "run 3)\n", s);
  return FALSE;
}

/* The most different cell of the two heads. */
typedef struct {
  int query, key;
  float a, b;
} Diff;

#define N_DIFFS 10

typedef struct {
  HeadRef ref[2];
  SaccadeCliRunHeads run[2];               /* info, tokens, labels */
  float *head[2];                /* (n, n) each */
  gboolean same_tokens;
  guint n;
  double distance;               /* mean JSD, nats */
  double *row_jsd;               /* (n) per query row: the profile beside the figure */
  float *diff;                   /* (n, n) a - b: the difference map */
  Diff top[N_DIFFS];             /* largest |a - b|, largest first */
  int n_top;
} PairResult;

static void
pair_result_clear (PairResult *r)
{
  for (int i = 0; i < 2; i++)
    {
      saccade_cli_run_heads_clear (&r->run[i]);
      g_free (r->head[i]);
    }
  g_free (r->row_jsd);
  g_free (r->diff);
}

static int
cmp_diff (const void *pa, const void *pb)
{
  const Diff *x = pa, *y = pb;
  const float dx = fabsf (x->a - x->b), dy = fabsf (y->a - y->b);

  if (dx != dy)
    return dx < dy ? 1 : -1;
  if (x->query != y->query)
    return x->query - y->query;
  return x->key - y->key;
}

static gboolean
same_tokens (const SaccadeCliRunHeads *a, const SaccadeCliRunHeads *b)
{
  if (a->n_tokens != b->n_tokens)
    return FALSE;
  for (size_t i = 0; i < a->n_tokens; i++)
    if (a->tokens[i].id != b->tokens[i].id)
      return FALSE;
  return TRUE;
}

/* Returns the exit status (0, or 1/2 having printed why). */
static int
pair_compute (ScStore *store, PairResult *r)
{
  ScError err = { 0 };

  for (int i = 0; i < 2; i++)
    {
      ScStoreHead hd = { 0 };

      if (!saccade_cli_run_heads_read (store, r->ref[i].run, FALSE, &r->run[i], &err))
        return saccade_store_cli_fail (&err);
      if (!saccade_cli_check_head (&r->run[i].info, r->ref[i].layer, r->ref[i].head))
        return 2;
      if (sc_store_read_head (store, r->ref[i].run, r->ref[i].layer, r->ref[i].head, &hd, &err)
          != SC_OK)
        return saccade_store_cli_fail (&err);
      r->head[i] = g_steal_pointer (&hd.probs);
    }
  if (strcmp (r->run[0].info.model_sha256, r->run[1].info.model_sha256) != 0)
    {
      g_autofree char *m0 = saccade_terminal_text (r->run[0].info.model_name, -1);
      g_autofree char *m1 = saccade_terminal_text (r->run[1].info.model_name, -1);
      fprintf (stderr, "saccade: run %" G_GINT64_FORMAT " (%s, %.12s) and run %" G_GINT64_FORMAT
               " (%s, %.12s) are of different models; heads can be compared only within one "
               "model\n", r->ref[0].run, m0, r->run[0].info.model_sha256, r->ref[1].run, m1,
               r->run[1].info.model_sha256);
      return 2;
    }
  r->same_tokens = same_tokens (&r->run[0], &r->run[1]);
  if (!r->same_tokens)
    return 0;
  r->n = r->run[0].info.n_tokens;
  if (sc_head_distance (r->head[0], r->head[1], (int) r->n, (int) r->n, &r->distance, &err)
      != SC_OK)
    return saccade_store_cli_fail (&err);
  r->row_jsd = g_new (double, r->n);
  r->diff = g_new (float, (gsize) r->n * r->n);
  {
    g_autofree Diff *all = g_new (Diff, (gsize) r->n * r->n);

    for (guint i = 0; i < r->n; i++)
      {
        const gsize off = (gsize) i * r->n;
        r->row_jsd[i] = sc_jsd (r->head[0] + off, r->head[1] + off, (int) r->n);
        for (guint j = 0; j < r->n; j++)
          {
            r->diff[off + j] = r->head[0][off + j] - r->head[1][off + j];
            all[off + j] = (Diff) { (int) i, (int) j, r->head[0][off + j], r->head[1][off + j] };
          }
      }
    qsort (all, (gsize) r->n * r->n, sizeof *all, cmp_diff);
    for (r->n_top = 0; r->n_top < N_DIFFS && (gsize) r->n_top < (gsize) r->n * r->n
                       && all[r->n_top].a != all[r->n_top].b; r->n_top++)
      r->top[r->n_top] = all[r->n_top];
  }
  return 0;
}

static void
pair_print_json (const PairResult *r)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  saccade_json_begin_array (b, "heads");
  for (int i = 0; i < 2; i++)
    {
      json_builder_begin_object (b);
      saccade_json_int (b, "run", r->ref[i].run);
      saccade_json_head (b, r->ref[i].layer, r->ref[i].head);
      saccade_json_int (b, "kv_head", r->ref[i].head / saccade_cli_group_size (&r->run[i].info));
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  saccade_json_bool (b, "same_tokens", r->same_tokens);
  if (r->same_tokens)
    {
      saccade_json_double (b, "distance", r->distance);
      saccade_json_doubles (b, "row_distance", r->row_jsd, r->n);
      saccade_json_begin_array (b, "largest_differences");
      for (int k = 0; k < r->n_top; k++)
        {
          json_builder_begin_object (b);
          saccade_json_int (b, "query", r->top[k].query);
          saccade_json_int (b, "key", r->top[k].key);
          saccade_json_double (b, "a", r->top[k].a);
          saccade_json_double (b, "b", r->top[k].b);
          saccade_json_double (b, "difference", (double) r->top[k].a - r->top[k].b);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      saccade_json_tokens (b, r->run[0].tokens, r->run[0].n_tokens);
    }
  json_builder_end_object (b);
  saccade_json_print (b);
}

static void
pair_print_text (const PairResult *r)
{
  for (int i = 0; i < 2; i++)
    printf ("%c: run %" G_GINT64_FORMAT " layer %d head %d (KV head %d)\n", 'A' + i,
            r->ref[i].run, r->ref[i].layer, r->ref[i].head,
            r->ref[i].head / saccade_cli_group_size (&r->run[i].info));
  if (!r->same_tokens)
    {
      printf ("The runs' tokens differ (%zu and %zu tokens): their heads are not over the same "
              "sentence, so there is no distance or difference to give.\n",
              r->run[0].n_tokens, r->run[1].n_tokens);
      return;
    }
  printf ("Head distance (mean Jensen-Shannon divergence over %u rows): %.6f nats (0 = the "
          "same, ln 2 = %.4f = disjoint)\n", r->n, r->distance, log (2.0));
  if (r->n_top == 0)
    {
      printf ("The two heads are identical.\n");
      return;
    }
  printf ("Largest differences (A - B):\n");
  for (int k = 0; k < r->n_top; k++)
    printf ("  %4d '%s' -> %4d '%s': %.4f - %.4f = %+.4f\n", r->top[k].query,
            r->run[0].labels[r->top[k].query], r->top[k].key, r->run[0].labels[r->top[k].key],
            r->top[k].a, r->top[k].b, (double) r->top[k].a - r->top[k].b);
}

/* ------------------------------------------------------------------------------------ */
/* compare --distance: every head                                                        */

typedef struct {
  SaccadeCliRunHeads run;
  int n_all;                     /* n_layers * n_heads */
  double *d;                     /* (n_all, n_all) in head order (layer * n_heads + head) */
  ScClusterMerge *merges;        /* (n_all - 1) */
  int *order;                    /* (n_all): heads in clustering order */
  double seconds;
} DistanceResult;

static void
distance_result_clear (DistanceResult *r)
{
  saccade_cli_run_heads_clear (&r->run);
  g_free (r->d);
  g_free (r->merges);
  g_free (r->order);
}

static gboolean
distance_compute (ScStore *store, gint64 run, DistanceResult *r, ScError *err)
{
  g_autofree const float **heads = NULL;
  gsize nn;
  gint64 t0;

  if (!saccade_cli_run_heads_read (store, run, TRUE, &r->run, err))
    return FALSE;
  r->n_all = (int) (r->run.info.n_layers * r->run.info.n_heads);
  nn = (gsize) r->run.info.n_tokens * r->run.info.n_tokens;
  heads = g_new (const float *, r->n_all);
  for (int i = 0; i < r->n_all; i++)
    heads[i] = r->run.heads + (gsize) i * nn;
  r->d = g_new (double, (gsize) r->n_all * r->n_all);
  r->merges = g_new (ScClusterMerge, MAX (r->n_all - 1, 1));
  r->order = g_new (int, r->n_all);
  t0 = g_get_monotonic_time ();
  if (sc_head_distance_matrix ((const float *const *) heads, r->n_all, (int) r->run.info.n_tokens,
                               (int) r->run.info.n_tokens, 0, NULL, NULL, r->d, err) != SC_OK
      || sc_cluster_average (r->d, r->n_all, r->merges, r->order, err) != SC_OK)
    return FALSE;
  r->seconds = (g_get_monotonic_time () - t0) / 1e6;
  return TRUE;
}

static char *
head_label (const DistanceResult *r, int h)
{
  return g_strdup_printf ("L%d.H%d", h / (int) r->run.info.n_heads, h % (int) r->run.info.n_heads);
}

/* The matrix in clustering order, labelled "L3.H4" (RFC 4180, CRLF). */
static GString *
distance_csv (const DistanceResult *r)
{
  GString *s = g_string_new ("head");

  for (int i = 0; i < r->n_all; i++)
    {
      g_autofree char *l = head_label (r, r->order[i]);
      g_string_append_printf (s, ",%s", l);
    }
  g_string_append (s, "\r\n");
  for (int i = 0; i < r->n_all; i++)
    {
      g_autofree char *l = head_label (r, r->order[i]);
      g_string_append (s, l);
      for (int j = 0; j < r->n_all; j++)
        g_string_append_printf (s, ",%.9g", r->d[(gsize) r->order[i] * r->n_all + r->order[j]]);
      g_string_append (s, "\r\n");
    }
  return s;
}

static void
distance_print_json (const DistanceResult *r)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  saccade_json_int (b, "run", r->run.info.id);
  saccade_json_int (b, "layers", r->run.info.n_layers);
  saccade_json_int (b, "heads", r->run.info.n_heads);
  saccade_json_string (b, "metric", "mean Jensen-Shannon divergence (nats)");
  saccade_json_begin_array (b, "order");
  for (int i = 0; i < r->n_all; i++)
    {
      json_builder_begin_object (b);
      saccade_json_head (b, r->order[i] / (int) r->run.info.n_heads,
                         r->order[i] % (int) r->run.info.n_heads);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  saccade_json_begin_array (b, "merges");
  for (int k = 0; k < r->n_all - 1; k++)
    {
      json_builder_begin_object (b);
      saccade_json_int (b, "a", r->merges[k].a);
      saccade_json_int (b, "b", r->merges[k].b);
      saccade_json_double (b, "height", r->merges[k].height);
      saccade_json_int (b, "size", r->merges[k].size);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  /* rows and columns in "order" */
  saccade_json_begin_array (b, "matrix");
  for (int i = 0; i < r->n_all; i++)
    {
      json_builder_begin_array (b);
      for (int j = 0; j < r->n_all; j++)
        saccade_json_add_double (b, r->d[(gsize) r->order[i] * r->n_all + r->order[j]]);
      json_builder_end_array (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  saccade_json_print (b);
}

typedef struct {
  int a, b;
  double d;
} Pair;

static int
cmp_pair (const void *pa, const void *pb)
{
  const Pair *x = pa, *y = pb;
  if (x->d != y->d)
    return x->d < y->d ? -1 : 1;
  return x->a != y->a ? x->a - y->a : x->b - y->b;
}

static void
distance_print_text (const DistanceResult *r, const char *csv_path)
{
  const int n = r->n_all;
  g_autofree Pair *pairs = g_new (Pair, MAX ((gsize) n * (n - 1) / 2, 1));
  gsize np = 0;

  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++)
      pairs[np++] = (Pair) { a, b, r->d[(gsize) a * n + b] };
  qsort (pairs, np, sizeof *pairs, cmp_pair);
  printf ("Head distance (mean Jensen-Shannon divergence, nats) between the %d heads of run %"
          G_GINT64_FORMAT " (%u tokens), in %.2f s\n", n, r->run.info.id, r->run.info.n_tokens,
          r->seconds);
  printf ("Clustering order (average linkage):");
  for (int i = 0; i < n; i++)
    {
      g_autofree char *l = head_label (r, r->order[i]);
      printf ("%s%s", i % 15 == 0 ? "\n  " : " ", l);
    }
  printf ("\nClosest pairs:\n");
  for (gsize k = 0; k < MIN (np, 5); k++)
    {
      g_autofree char *la = head_label (r, pairs[k].a);
      g_autofree char *lb = head_label (r, pairs[k].b);
      printf ("  %s - %s: %.6f\n", la, lb, pairs[k].d);
    }
  printf ("Farthest pairs:\n");
  for (gsize k = 0; k < MIN (np, 5); k++)
    {
      const Pair *p = &pairs[np - 1 - k];
      g_autofree char *la = head_label (r, p->a);
      g_autofree char *lb = head_label (r, p->b);
      printf ("  %s - %s: %.6f\n", la, lb, p->d);
    }
  if (csv_path != NULL)
    printf ("Wrote %s: the %d x %d matrix in clustering order\n", csv_path, n, n);
}

int
saccade_cmd_compare (int argc, char **argv)
{
  gboolean json = FALSE, distance = FALSE;
  char *db_opt = NULL, *out_path = NULL;
  g_autofree char *text_opt = NULL, *file = NULL, *backend = NULL;
  g_auto (GStrv) models = NULL;
  int seq_len = 0, n_seeds = 0, threads = 0;
  gint64 text_run = 0;
  GOptionEntry entries[] = {
    SACCADE_STORE_CLI_DB_OPTION (&db_opt),
    { "model", 'm', 0, G_OPTION_ARG_FILENAME_ARRAY, &models,
      "Two models side by side: --model A --model B on a TEXT (saccade-cli-compare-models.c)",
      "FILE" },
    { "text", 't', 0, G_OPTION_ARG_STRING, &text_opt, "With --model: the text", "TEXT" },
    { "file", 0, 0, G_OPTION_ARG_FILENAME, &file, "With --model: the text from FILE (- stdin)",
      "FILE" },
    { "run", 0, 0, G_OPTION_ARG_INT64, &text_run,
      "With --model: the text of stored run RUN", "RUN" },
    { "len", 0, 0, G_OPTION_ARG_INT, &seq_len,
      "With --model: tokens T of the induction sequence (50)", "T" },
    { "seeds", 0, 0, G_OPTION_ARG_INT, &n_seeds,
      "With --model: random induction sequences S (10)", "S" },
    SACCADE_CLI_THREADS_OPTION (&threads),
    { "backend", 0, 0, G_OPTION_ARG_STRING, &backend,
      "With --model: compute on NAME: cpu, cpu-ref, cuda or auto (default)", "NAME" },
    { "distance", 0, 0, G_OPTION_ARG_NONE, &distance,
      "With one RUN: every head's distance to every other, in clustering order", NULL },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out_path,
      "With --distance: write the matrix as CSV to FILE", "FILE" },
    SACCADE_CLI_JSON_OPTION (&json),
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "RUN:LAYER:HEAD RUN:LAYER:HEAD | RUN --distance | --model A --model B TEXT - two heads' "
    "distance and largest differences, every head's distance matrix, or two models' heads "
    "side by side");
  g_autofree char *path = NULL;
  ScStore *store;
  ScError err = { 0 };
  int rc = 0;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if (models != NULL)
    {
      if (distance || out_path != NULL)
        {
          fprintf (stderr, "saccade: --distance and -o compare heads of one run, not two "
                   "models\n");
          return 2;
        }
      return saccade_cli_compare_models (models, text_opt, file, text_run, argc, argv, db_opt,
                                         seq_len, n_seeds, threads, backend, json);
    }
  if (text_opt != NULL || file != NULL || text_run != 0)
    {
      fprintf (stderr, "saccade: -t, --file and --run go with --model A --model B\n");
      return 2;
    }
  path = saccade_db_path (db_opt);
  if (distance)
    {
      DistanceResult r = { 0 };
      gint64 run;

      if (argc != 2)
        {
          fprintf (stderr, "saccade: compare --distance takes one run id\n");
          return 2;
        }
      if (!saccade_store_cli_run_id (argv[1], &run))
        return 2;
      if ((store = saccade_cli_heads_open_store (path, FALSE, &err)) == NULL)
        return saccade_store_cli_fail (&err);
      if (!distance_compute (store, run, &r, &err))
        rc = saccade_store_cli_fail (&err);
      else
        {
          g_autoptr (GError) error = NULL;
          if (out_path != NULL)
            {
              GString *csv = distance_csv (&r);
              if (!saccade_cli_write_gstring (out_path, csv, &error))
                rc = saccade_cli_fail (g_steal_pointer (&error));
              g_string_free (csv, TRUE);
            }
          if (rc == 0 && json)
            distance_print_json (&r);
          else if (rc == 0)
            distance_print_text (&r, out_path);
        }
      distance_result_clear (&r);
      sc_store_close (store);
      return rc;
    }
  if (out_path != NULL)
    {
      fprintf (stderr, "saccade: -o goes with --distance\n");
      return 2;
    }
  if (argc != 3)
    {
      fprintf (stderr, "saccade: compare takes two heads RUN:LAYER:HEAD (or one RUN with "
               "--distance)\n");
      return 2;
    }
  {
    PairResult r = { 0 };

    if (!parse_head_ref (argv[1], &r.ref[0]) || !parse_head_ref (argv[2], &r.ref[1]))
      return 2;
    if ((store = saccade_cli_heads_open_store (path, FALSE, &err)) == NULL)
      return saccade_store_cli_fail (&err);
    if ((rc = pair_compute (store, &r)) == 0)
      {
        if (json)
          pair_print_json (&r);
        else
          pair_print_text (&r);
      }
    pair_result_clear (&r);
    sc_store_close (store);
  }
  return rc;
}
