/* saccade-cli-ablate.c — `saccade ablate RUN --heads|--tokens`: ablation importance of a
 * stored run's heads (each zero-ablated in turn) or tokens (each masked, then dropped, in
 * turn). Parse -> a result (engine/study/sc-ablation-study.h computes it, or reads it back
 * from the store when the same model file and parameters were studied before) -> text (the
 * top heads by |Δ log p|, or one row per token) or JSON. With --bench it times the head
 * sweep against the same number of plain forward passes (docs/benchmarks.md, "Head
 * sweep"). The measures are defined in docs/metrics.md, "Ablation studies". */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli-store.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/study/sc-ablation-study.h"

typedef struct {
  SaccadeCliCommon common;
  char *db;
  char *mode;
  int target, top, bench_len, bench_repeats;
  gboolean heads, tokens, recompute, bench;
} AblateOptions;

/* What the verb prints: one of the two results, with where it came from. */
typedef struct {
  ScStoreRunInfo run;
  ScStoreToken *tokens;
  size_t n_tokens;
  char **labels;
  ScHeadSweepResult *heads;   /* --heads */
  ScTokenLooResult *loo;      /* --tokens */
  gint64 study_id;
  gboolean reused;
  double seconds;
  char *warning;              /* why it was not stored, or NULL */
} AblateResult;

static void
ablate_result_clear (AblateResult *r)
{
  sc_store_run_info_clear (&r->run);
  sc_store_tokens_free (r->tokens);
  g_strfreev (r->labels);
  sc_head_sweep_result_free (r->heads);
  sc_token_loo_result_free (r->loo);
  g_free (r->warning);
  memset (r, 0, sizeof *r);
}

static bool
progress_bar (void *user, double fraction)
{
  const int width = 30, fill = (int) (fraction * width);
  int i;

  (void) user;
  fprintf (stderr, "\r[");
  for (i = 0; i < width; i++)
    fputc (i < fill ? '#' : '.', stderr);
  fprintf (stderr, "] %3.0f%% ", 100.0 * fraction);
  fflush (stderr);
  return true;
}

/* Reads run @id and its tokens from the store at @path; FALSE with @error when there is no
 * such store or run. */
static gboolean
read_run (const char *path, gint64 id, AblateResult *r, GError **error)
{
  ScStore *store;
  ScError err = { 0 };
  ScStatus st;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "no capture store at %s", path);
      return FALSE;
    }
  if ((store = saccade_store_open (path, FALSE, &err)) == NULL)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  st = sc_store_get_run (store, id, &r->run, &err);
  if (st == SC_OK)
    st = sc_store_read_tokens (store, id, &r->tokens, &r->n_tokens, &err);
  sc_store_close (store);
  if (st == SC_ERR_NOT_FOUND)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "there is no run %" G_GINT64_FORMAT " in %s (see `saccade runs`)", id, path);
      return FALSE;
    }
  if (st != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  r->labels = saccade_token_labels_for_store (r->tokens, r->n_tokens);
  return TRUE;
}

/* Computes the study @o asks for on @ids, or reads it back; stores what it computed. */
static gboolean
get_result (ScModel *model, const AblateOptions *o, const char *db_path, const int32_t *ids,
            AblateResult *r, GError **error)
{
  const ScModelInfo *info = sc_model_info (model);
  const char *kind = o->heads ? SC_ABLATION_KIND_HEADS : SC_ABLATION_KIND_TOKENS;
  const ScAblationParams p = { .target = o->target,
                               .mode = g_strcmp0 (o->mode, "mean") == 0 ? SC_ABLATE_MEAN
                                                                         : SC_ABLATE_ZERO };
  const int n = (int) r->n_tokens;
  SaccadeCliSession cs = { 0 };
  ScStoreModel sm;
  ScStore *store = NULL;
  ScError err = { 0 };
  char params[128];
  int64_t id = 0;
  gint64 t0;
  ScStatus st;

  if (o->mode != NULL && strcmp (o->mode, "zero") != 0 && strcmp (o->mode, "mean") != 0)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--mode is zero or mean, not '%s'", o->mode);
      return FALSE;
    }
  if (p.mode == SC_ABLATE_MEAN)
    {
      /* Refused before any work: the engine takes means, nothing computes them yet. */
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           "--mode mean needs each head's mean output over a reference corpus, "
                           "which saccade does not compute yet; use --mode zero");
      return FALSE;
    }
  /* The run must be of the loaded model file, by fingerprint. */
  if (sc_store_model_identify (model, saccade_cli_model_path (&o->common), &sm, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  {
    char hex[SC_SHA256_HEX_SIZE];
    sc_sha256_hex (sm.sha256, hex);
    if (strcmp (hex, r->run.model_sha256) != 0)
      {
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                     "run %" G_GINT64_FORMAT " was captured with %s (%s, SHA-256 %.12s…), not "
                     "with the loaded model %s (SHA-256 %.12s…); load that file with -m",
                     r->run.id, r->run.model_name, r->run.model_path, r->run.model_sha256,
                     saccade_cli_model_path (&o->common), hex);
        return FALSE;
      }
  }
  if (sc_ablation_params_json (kind, r->run.id, &p, params, sizeof params) < 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, "ablation: params too long");
      return FALSE;
    }
  store = saccade_store_open (db_path, TRUE, NULL);
  if (store == NULL)
    store = saccade_store_open (db_path, FALSE, NULL); /* read what is there */
  if (store != NULL && !o->recompute)
    {
      st = o->heads ? sc_head_sweep_load (store, info, sm.sha256, params, &r->heads, &id, NULL)
                    : sc_token_loo_load (store, info, sm.sha256, params, &r->loo, &id, NULL);
      if (st == SC_OK)
        {
          r->reused = TRUE;
          r->study_id = id;
          sc_store_close (store);
          return TRUE;
        }
    }

  if (!saccade_cli_session_open (&cs, &o->common, model, error))
    {
      sc_store_close (store);
      return FALSE;
    }
  t0 = g_get_monotonic_time ();
  {
    ScAblationProgressFn bar = isatty (STDERR_FILENO) ? progress_bar : NULL;
    st = o->heads ? sc_head_sweep_run (cs.session, model, ids, n, &p, bar, NULL, &r->heads, &err)
                  : sc_token_loo_run (cs.session, model, ids, n, &p, bar, NULL, &r->loo, &err);
    if (bar != NULL)
      fprintf (stderr, "\r\033[K");
  }
  r->seconds = (double) (g_get_monotonic_time () - t0) / G_USEC_PER_SEC;
  saccade_cli_session_close (&cs);
  if (st != SC_OK)
    {
      sc_store_close (store);
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  if (store == NULL || !sc_store_is_writable (store))
    r->warning = g_strdup ("the store is read-only");
  else
    {
      st = o->heads ? sc_head_sweep_store (store, &sm, params, r->heads, &id, &err)
                    : sc_token_loo_store (store, &sm, params, r->loo, &id, &err);
      if (st == SC_OK)
        r->study_id = id;
      else
        r->warning = g_strdup (err.message);
    }
  sc_store_close (store);
  return TRUE;
}

static void
print_source (const AblateResult *r, const char *db_path)
{
  if (r->reused)
    printf ("reused study %" G_GINT64_FORMAT " from %s (--recompute to compute again)\n",
            r->study_id, db_path);
  else if (r->study_id > 0)
    printf ("computed now in %.1f s, stored as study %" G_GINT64_FORMAT " in %s\n", r->seconds,
            r->study_id, db_path);
  else
    printf ("computed now in %.1f s (not stored: %s)\n", r->seconds,
            r->warning != NULL ? r->warning : "no store");
}

/* Head indices by |Δ log p|, largest first, NaN last, ties by index. */
static int
by_abs_delta (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const ScAblationEffect *e = user_data;
  const int ia = *(const int *) a, ib = *(const int *) b;
  const double va = isnan (e[ia].next.delta_logp) ? -1.0 : fabs (e[ia].next.delta_logp);
  const double vb = isnan (e[ib].next.delta_logp) ? -1.0 : fabs (e[ib].next.delta_logp);

  return va > vb ? -1 : va < vb ? 1 : ia - ib;
}

static int *
rank_heads (const ScHeadSweepResult *h)
{
  const int n = h->n_layers * h->n_heads;
  int *order = g_new (int, n);
  int i;

  for (i = 0; i < n; i++)
    order[i] = i;
  g_qsort_with_data (order, n, sizeof *order, by_abs_delta, h->heads);
  return order;
}

static void
print_effect_row (const ScAblationEffect *e)
{
  printf ("  %+10.4f  %7.4f  %7.4f  %+10.4f  %s\n", e->next.delta_logp, e->next.tv,
          e->next.jsd, e->delta_loss, e->flipped ? "yes" : "no");
}

static void
print_text (const AblateResult *r, const AblateOptions *o, const char *db_path)
{
  printf ("run %" G_GINT64_FORMAT " (%zu tokens), %s: target %d at the last position "
          "(ln p = %.4f, clean top-1 %d), mean loss %.4f nats\n", r->run.id, r->n_tokens,
          r->run.model_name, r->heads ? r->heads->target : r->loo->target,
          r->heads ? r->heads->logp_clean : r->loo->logp_clean,
          r->heads ? r->heads->top1_clean : r->loo->top1_clean,
          r->heads ? r->heads->loss_clean : r->loo->loss_clean);
  print_source (r, db_path);
  if (r->heads != NULL)
    {
      const ScHeadSweepResult *h = r->heads;
      g_autofree int *order = rank_heads (h);
      const int top = MIN (o->top, h->n_layers * h->n_heads);
      int k;

      printf ("\nzero-ablating one head at a time, the top %d by |Δ log p|:\n", top);
      printf ("  rank  head     Δ log p      TV       JSD      Δ loss     flip\n");
      for (k = 0; k < top; k++)
        {
          printf ("  %4d  %2d.%-3d", k + 1, order[k] / h->n_heads, order[k] % h->n_heads);
          print_effect_row (&h->heads[order[k]]);
        }
    }
  else
    {
      const ScTokenLooResult *t = r->loo;
      int kind, j;

      for (kind = 0; kind < 2; kind++)
        {
          printf (kind == 0 ? "\nmasking one token out of every attention row:\n"
                            : "\ndropping one token from the input:\n");
          printf ("  pos  token                Δ log p      TV       JSD      Δ loss     flip\n");
          for (j = 0; j < t->n_tokens - 1; j++)
            {
              printf ("  %3d  ", j);
              saccade_store_cli_print_padded (r->labels[j], 16);
              print_effect_row (kind == 0 ? &t->mask[j] : &t->drop[j]);
            }
        }
      printf ("  (the last token, %s, is the query and is never erased)\n",
              r->labels[t->n_tokens - 1]);
    }
}

static void
json_effect (JsonBuilder *b, const ScAblationEffect *e)
{
  saccade_json_double (b, "delta_logp", e->next.delta_logp);
  saccade_json_double (b, "tv", e->next.tv);
  saccade_json_double (b, "jsd", e->next.jsd);
  saccade_json_double (b, "delta_loss", e->delta_loss);
  saccade_json_bool (b, "flip", e->flipped);
  saccade_json_int (b, "top1", e->next.top1_ablated);
}

static void
print_json (const AblateResult *r)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  int i, kind;

  json_builder_begin_object (b);
  saccade_json_int (b, "run", r->run.id);
  saccade_json_string (b, "model", r->run.model_name);
  saccade_json_string (b, "study", r->heads ? SC_ABLATION_KIND_HEADS : SC_ABLATION_KIND_TOKENS);
  saccade_json_string (b, "source", r->reused ? "reused" : "computed");
  saccade_json_int (b, "study_id", r->study_id);
  saccade_json_int (b, "n_tokens", (gint64) r->n_tokens);
  saccade_json_int (b, "target", r->heads ? r->heads->target : r->loo->target);
  saccade_json_int (b, "top1_clean", r->heads ? r->heads->top1_clean : r->loo->top1_clean);
  saccade_json_double (b, "logp_clean", r->heads ? r->heads->logp_clean : r->loo->logp_clean);
  saccade_json_double (b, "loss_clean", r->heads ? r->heads->loss_clean : r->loo->loss_clean);
  if (r->heads != NULL)
    {
      const ScHeadSweepResult *h = r->heads;
      saccade_json_string (b, "mode", "zero");
      saccade_json_begin_array (b, "heads"); /* layer-major */
      for (i = 0; i < h->n_layers * h->n_heads; i++)
        {
          json_builder_begin_object (b);
          saccade_json_int (b, "layer", i / h->n_heads);
          saccade_json_int (b, "head", i % h->n_heads);
          json_effect (b, &h->heads[i]);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
    }
  else
    for (kind = 0; kind < 2; kind++)
      {
        const ScAblationEffect *e = kind == 0 ? r->loo->mask : r->loo->drop;
        saccade_json_begin_array (b, kind == 0 ? "mask" : "drop");
        for (i = 0; i < r->loo->n_tokens - 1; i++) /* the query is never erased */
          {
            json_builder_begin_object (b);
            saccade_json_int (b, "pos", i);
            saccade_json_int (b, "id", r->tokens[i].id);
            saccade_json_string (b, "label", r->labels[i]);
            json_effect (b, &e[i]);
            json_builder_end_object (b);
          }
        json_builder_end_array (b);
      }
  json_builder_end_object (b);
  saccade_json_print (b);
}

/* --bench: the head sweep of an @len-token sentence against n_layers × n_heads plain
 * forward passes (all logits, as the sweep computes them), medians of @repeats. */
static int
run_bench (ScModel *model, const AblateOptions *o)
{
  static const char TEXT[] = "The cat chased the ball because it was tired, and the dog "
                             "watched from the porch while the children laughed. ";
  const ScModelInfo *info = sc_model_info (model);
  const int reps = MAX (1, o->bench_repeats), heads = (int) (info->n_layers * info->n_heads);
  const int n = MAX (2, o->bench_len);
  g_autofree double *sweep = g_new (double, reps), *full = g_new (double, reps);
  g_autofree double *plain = g_new (double, reps);
  g_autofree int32_t *ids = g_new (int32_t, n);
  g_autofree float *logits = NULL;
  g_autoptr (GArray) tok = NULL;
  g_autoptr (GError) error = NULL;
  SaccadeCliSession cs = { 0 };
  ScAblationParams p = { .target = -1 };
  ScForwardOptions all = { .all_logits = true };
  ScError err = { 0 };
  int rep, i, k;

  if ((tok = saccade_tokenize (model, TEXT, -1, FALSE, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  for (i = 0; i < n; i++) /* the text repeated up to n tokens */
    ids[i] = g_array_index (tok, int32_t, i % tok->len);
  if (!saccade_cli_session_open (&cs, &o->common, model, &error))
    return saccade_cli_fail (g_steal_pointer (&error));
  logits = g_new (float, (gsize) n * info->n_vocab);
  for (rep = 0; rep < reps; rep++)
    {
      ScHeadSweepResult *r = NULL;
      double one[5];
      gint64 t0;

      for (k = 0; k < 2; k++)
        {
          p.full_recompute = k == 1;
          t0 = g_get_monotonic_time ();
          if (sc_head_sweep_run (cs.session, model, ids, n, &p, NULL, NULL, &r, &err) != SC_OK)
            {
              saccade_cli_session_close (&cs);
              saccade_set_error_from_sc (&error, &err);
              return saccade_cli_fail (g_steal_pointer (&error));
            }
          sc_head_sweep_result_free (r);
          (k == 0 ? sweep : full)[rep] = (g_get_monotonic_time () - t0) / 1e6;
        }
      /* One plain pass, median of 5, times the number of heads. */
      for (k = 0; k < 5; k++)
        {
          t0 = g_get_monotonic_time ();
          sc_forward (cs.session, ids, n, &all, logits, NULL);
          one[k] = (g_get_monotonic_time () - t0) / 1e6;
        }
      plain[rep] = saccade_median (one, 5) * heads;
    }
  saccade_cli_session_close (&cs);
  {
    const double ms = saccade_median (sweep, reps), mf = saccade_median (full, reps);
    const double mp = saccade_median (plain, reps);
    if (o->common.json)
      {
        g_autoptr (JsonBuilder) b = json_builder_new ();
        json_builder_begin_object (b);
        saccade_json_string (b, "model", info->name);
        saccade_json_int (b, "n_tokens", n);
        saccade_json_int (b, "heads", heads);
        saccade_json_int (b, "repeats", reps);
        saccade_json_double (b, "sweep_s", ms);
        saccade_json_double (b, "sweep_full_recompute_s", mf);
        saccade_json_double (b, "plain_passes_s", mp);
        saccade_json_double (b, "ratio", ms / mp);
        saccade_json_double (b, "ratio_full_recompute", mf / mp);
        json_builder_end_object (b);
        saccade_json_print (b);
      }
    else
      printf ("%s, %d heads, %d tokens, median of %d:\n  sweep with prefix reuse %.3f s, "
              "%d plain passes %.3f s: ratio %.3f\n  sweep recomputing every layer %.3f s: "
              "ratio %.3f\n", info->name, heads, n, reps, ms, heads, mp, ms / mp, mf, mf / mp);
  }
  return 0;
}

int
saccade_cmd_ablate (int argc, char **argv)
{
  AblateOptions o = { .target = -1, .top = 10, .bench_len = 64, .bench_repeats = 3 };
  GOptionEntry entries[] = {
    { "heads", 0, 0, G_OPTION_ARG_NONE, &o.heads, "ablate each head in turn", NULL },
    { "tokens", 0, 0, G_OPTION_ARG_NONE, &o.tokens, "mask, then drop, each token in turn", NULL },
    { "target", 0, 0, G_OPTION_ARG_INT, &o.target,
      "token id whose log-probability is measured (default: the clean top-1)", "TOKEN_ID" },
    { "mode", 0, 0, G_OPTION_ARG_STRING, &o.mode, "--heads: zero (default) or mean", "MODE" },
    SACCADE_STORE_CLI_DB_OPTION (&o.db),
    { "recompute", 0, 0, G_OPTION_ARG_NONE, &o.recompute, "compute even if stored", NULL },
    { "top", 0, 0, G_OPTION_ARG_INT, &o.top, "--heads: rows of the table (10)", "N" },
    { "bench", 0, 0, G_OPTION_ARG_NONE, &o.bench,
      "time the head sweep against plain passes (no RUN)", NULL },
    { "len", 0, 0, G_OPTION_ARG_INT, &o.bench_len, "--bench: tokens (64)", "N" },
    { "repeats", 0, 0, G_OPTION_ARG_INT, &o.bench_repeats, "--bench: repeats (3)", "N" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("RUN --heads|--tokens - ablation "
                                                         "importance of a stored run");
  g_autoptr (GError) error = NULL;
  g_autofree char *db_path = NULL;
  g_autofree int32_t *ids = NULL;
  AblateResult r = { 0 };
  ScModel *model = NULL;
  gint64 run = 0;
  int rc = 0;
  size_t i;

  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &o.common);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if (o.bench)
    {
      if ((model = saccade_cli_load_model (&o.common, &error)) == NULL)
        return saccade_cli_fail (g_steal_pointer (&error));
      rc = run_bench (model, &o);
      sc_model_free (model);
      return rc;
    }
  if (argc != 2)
    {
      fprintf (stderr, "saccade: ablate takes one run id (see `saccade runs`)\n");
      return 2;
    }
  if (!saccade_store_cli_run_id (argv[1], &run))
    return 2;
  if (o.heads == o.tokens)
    {
      fprintf (stderr, "saccade: ablate takes one of --heads and --tokens\n");
      return 2;
    }
  db_path = saccade_db_path (o.db);
  if (!read_run (db_path, run, &r, &error))
    rc = saccade_cli_fail (g_steal_pointer (&error));
  else if ((model = saccade_cli_load_model (&o.common, &error)) == NULL)
    rc = saccade_cli_fail (g_steal_pointer (&error));
  else
    {
      ids = g_new (int32_t, r.n_tokens);
      for (i = 0; i < r.n_tokens; i++)
        ids[i] = r.tokens[i].id;
      if (!get_result (model, &o, db_path, ids, &r, &error))
        rc = saccade_cli_fail (g_steal_pointer (&error));
      else if (o.common.json)
        print_json (&r);
      else
        print_text (&r, &o, db_path);
    }
  ablate_result_clear (&r);
  sc_model_free (model);
  g_free (o.db);
  g_free (o.mode);
  return rc;
}
