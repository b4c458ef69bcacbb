/* saccade-cli-dla.c — `saccade dla RUN`: direct logit attribution of a stored run (each
 * head's output written through W_O and the frozen final norm onto the target's
 * unembedding; engine/study/sc-dla.h), and `saccade means`: the reference means that
 * mean-ablation uses (app/core/saccade-head-means.h). Parse -> a result (computed, or read
 * back from the store when the same model file and parameters were studied before) -> text
 * or JSON. When the store holds a zero-ablation head sweep of the same run and target
 * (`saccade ablate RUN --heads`), `dla` sets each head's Δ log p beside its DLA, with the
 * Spearman ρ between them. Definitions: docs/metrics.md, "Reference means and direct logit
 * attribution". */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli-store.h"
#include "app/cli/saccade-cli-study.h"
#include "app/core/saccade-ablation.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/core/saccade-head-means.h"
#include "engine/analysis/sc-rank.h"
#include "engine/study/sc-ablation-study.h"
#include "engine/study/sc-dla.h"

typedef struct {
  SaccadeCliCommon common;
  char *db;
  SaccadeCliTarget target;
  int top;
  gboolean recompute;
} DlaOptions;

/* A token's bytes, raw and safe on a terminal. */
typedef struct {
  char *label;
  char *bytes;
  gsize len;
} TokenText;

static void
token_text_set (TokenText *t, ScModel *model, int id)
{
  char buf[256];
  const size_t len = sc_token_to_bytes (sc_model_tokenizer (model), id, true, buf, sizeof buf);

  t->len = MIN (len, sizeof buf);
  t->bytes = g_memdup2 (buf, t->len);
  t->label = saccade_terminal_text (buf, (gssize) t->len);
}

static void
token_text_clear (TokenText *t)
{
  g_free (t->label);
  g_free (t->bytes);
}

/* What `dla` prints. */
typedef struct {
  ScStoreRunInfo run;
  ScStoreToken *tokens;
  size_t n_tokens;
  SaccadeStudy *study;        /* owns the result dla borrows */
  ScDlaResult *dla;
  ScHeadSweepResult *sweep;   /* a stored zero-ablation sweep of the same target (none with a
                               * contrast: it measures Δ log p of the target alone), or NULL */
  gint64 sweep_id;
  ScSpearman rho;             /* DLA against Δ log p over the heads, when sweep != NULL */
  TokenText target, contrast; /* contrast: only with one */
  gint64 study_id;
  gboolean reused;
  double seconds;
  char *warning;              /* why it was not stored, or NULL */
  char *refused;              /* why a stored study was not reused, or NULL */
} DlaResult;

static void
dla_result_clear (DlaResult *r)
{
  sc_store_run_info_clear (&r->run);
  sc_store_tokens_free (r->tokens);
  saccade_study_free (r->study);
  sc_head_sweep_result_free (r->sweep);
  token_text_clear (&r->target);
  token_text_clear (&r->contrast);
  g_free (r->warning);
  g_free (r->refused);
  memset (r, 0, sizeof *r);
}

/* Reads run @id and its tokens; FALSE with @error when there is no such store or run. */
static gboolean
read_run (const char *path, gint64 id, DlaResult *r, GError **error)
{
  return saccade_store_read_run (path, id, &r->run, &r->tokens, &r->n_tokens, error);
}

static gboolean
get_result (ScModel *model, const DlaOptions *o, const char *db_path, DlaResult *r,
            GError **error)
{
  const ScModelInfo *info = sc_model_info (model);
  ScDlaParams params;
  ScStoreModel sm;
  ScStore *store;

  if (!saccade_cli_target_parse (model, &o->target, &params.target, &params.contrast, error))
    return FALSE;
  /* The run must be of the loaded model file, by fingerprint (said with the paths here). */
  if (!saccade_cli_identify_run_model (model, &o->common, &r->run, &sm, error))
    return FALSE;
  r->study = saccade_cli_study_get (&sc_study_kind_dla, &params, model, &sm, &o->common, db_path,
                                    r->run.id, o->recompute, &r->warning, error);
  if (r->study == NULL)
    return FALSE;
  r->dla = r->study->result;
  r->reused = r->study->reused;
  r->study_id = r->study->study_id;
  r->seconds = r->study->seconds;
  if (r->study->refused != NULL)
    r->refused = g_strdup_printf ("the stored study was refused and computed again: %s",
                                  r->study->refused);
  if ((store = saccade_store_open (db_path, FALSE, NULL)) != NULL)
    {
      saccade_dla_find_sweep (store, info, &sm, r->run.id, r->dla, &r->sweep, &r->sweep_id,
                              &r->rho);
      sc_store_close (store);
    }
  token_text_set (&r->target, model, r->dla->target);
  if (r->dla->contrast >= 0)
    token_text_set (&r->contrast, model, r->dla->contrast);
  return TRUE;
}

/* Head indices by |dla|, largest first, ties by index. */
static int
by_abs_dla (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const double *v = user_data;
  const int ia = *(const int *) a, ib = *(const int *) b;
  const double va = fabs (v[ia]), vb = fabs (v[ib]);

  return va > vb ? -1 : va < vb ? 1 : ia - ib;
}

static int *
rank_heads (const ScDlaResult *d)
{
  const int n = d->n_layers * d->n_heads;
  int *order = g_new (int, n);
  int i;

  for (i = 0; i < n; i++)
    order[i] = i;
  g_qsort_with_data (order, n, sizeof *order, by_abs_dla, d->heads);
  return order;
}

static double
sum_of (const double *v, int n)
{
  double s = 0.0;
  int i;

  for (i = 0; i < n; i++)
    s += v[i];
  return s;
}

static void
print_text (const DlaResult *r, const DlaOptions *o, const char *db_path)
{
  const ScDlaResult *d = r->dla;
  const int n_heads = d->n_layers * d->n_heads, top = MIN (MAX (o->top, 0), n_heads);
  g_autofree int *order = rank_heads (d);
  int k;

  printf ("run %" G_GINT64_FORMAT " (%zu tokens), %s: target %d \"%s\" at the last position%s\n",
          r->run.id, r->n_tokens, r->run.model_name, d->target, r->target.label,
          d->target == d->top1_clean ? " (the clean top-1)" : "");
  if (d->contrast >= 0)
    printf ("against contrast %d \"%s\": every term below is of logit(target) - "
            "logit(contrast), the log-probability difference\n", d->contrast, r->contrast.label);
  if (r->reused)
    printf ("reused study %" G_GINT64_FORMAT " from %s (--recompute to compute again)\n",
            r->study_id, db_path);
  else if (r->study_id > 0)
    printf ("computed now in %.3f s, stored as study %" G_GINT64_FORMAT " in %s\n", r->seconds,
            r->study_id, db_path);
  else
    printf ("computed now in %.3f s (not stored: %s)\n", r->seconds,
            r->warning != NULL ? r->warning : "no store");
  if (r->refused != NULL)
    printf ("note: %s\n", r->refused);
  printf ("\nclean logit%s %.4f; the final norm's scale frozen at 1/rms = 1/%.4f\n",
          d->contrast >= 0 ? " difference" : "", d->logit_clean, d->rms);
  printf ("  embedding        %+10.4f\n", d->embed);
  printf ("  all heads        %+10.4f\n", sum_of (d->heads, n_heads));
  printf ("  all MLPs         %+10.4f\n", sum_of (d->mlp, d->n_layers));
  printf ("  sum              %+10.4f   (logit%s %.4f)\n",
          d->embed + sum_of (d->heads, n_heads) + sum_of (d->mlp, d->n_layers),
          d->contrast >= 0 ? " difference" : "", d->logit_clean);
  printf ("\nthe top %d heads by |DLA|%s:\n", top,
          r->sweep != NULL ? ", beside their zero-ablation Δ log p" : "");
  printf (r->sweep != NULL ? "  rank  head        DLA      Δ log p\n" : "  rank  head        DLA\n");
  for (k = 0; k < top; k++)
    {
      const int i = order[k];
      char name[SACCADE_HEAD_NAME_MAX];
      printf ("  %4d  %-6s  %+10.4f", k + 1, saccade_head_name (name, i / d->n_heads,
                                                                i % d->n_heads), d->heads[i]);
      if (r->sweep != NULL)
        printf ("   %+10.4f", r->sweep->heads[i].next.delta_logp);
      printf ("\n");
    }
  if (r->sweep != NULL)
    printf ("\nSpearman ρ (DLA, Δ log p) over the %d heads: %+.4f (p = %.3g), sweep study %"
            G_GINT64_FORMAT "\n(a head that pushes the target up has DLA > 0 and, if it "
            "matters, Δ log p < 0: a faithful linear picture gives ρ < 0)\n", n_heads,
            r->rho.rho, r->rho.p, r->sweep_id);
  else if (d->contrast < 0)
    printf ("\n(no stored zero-ablation sweep of this run and target: `saccade ablate %"
            G_GINT64_FORMAT " --heads%s` sets Δ log p beside the DLA)\n", r->run.id,
            d->target == d->top1_clean ? "" : " --target N");
}

static void
print_json (const DlaResult *r)
{
  const ScDlaResult *d = r->dla;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  int i;

  json_builder_begin_object (b);
  saccade_json_int (b, "run", r->run.id);
  saccade_json_string (b, "model", r->run.model_name);
  saccade_json_string (b, "study", SC_DLA_KIND);
  saccade_json_string (b, "source", r->reused ? "reused" : "computed");
  saccade_json_int (b, "study_id", r->study_id);
  saccade_json_double (b, "seconds", r->seconds);
  if (r->refused != NULL)
    saccade_json_string (b, "warning", r->refused);
  saccade_json_int (b, "n_tokens", (gint64) r->n_tokens);
  saccade_json_begin_object (b, "target");
  saccade_json_int (b, "id", d->target);
  saccade_json_piece (b, (const guint8 *) r->target.bytes, r->target.len,
                      SACCADE_JSON_PIECE_FIRST);
  json_builder_end_object (b);
  if (d->contrast >= 0)
    {
      /* logit_clean, embed, the heads' and MLPs' terms are then of the difference */
      saccade_json_begin_object (b, "contrast");
      saccade_json_int (b, "id", d->contrast);
      saccade_json_piece (b, (const guint8 *) r->contrast.bytes, r->contrast.len,
                          SACCADE_JSON_PIECE_FIRST);
      json_builder_end_object (b);
    }
  saccade_json_int (b, "top1_clean", d->top1_clean);
  saccade_json_double (b, "logit_clean", d->logit_clean);
  saccade_json_double (b, "rms", d->rms);
  saccade_json_double (b, "embed", d->embed);
  saccade_json_double (b, "heads_total", sum_of (d->heads, d->n_layers * d->n_heads));
  saccade_json_double (b, "mlp_total", sum_of (d->mlp, d->n_layers));
  saccade_json_begin_array (b, "mlp");
  for (i = 0; i < d->n_layers; i++)
    saccade_json_add_double (b, d->mlp[i]);
  json_builder_end_array (b);
  saccade_json_begin_array (b, "heads"); /* layer-major */
  for (i = 0; i < d->n_layers * d->n_heads; i++)
    {
      json_builder_begin_object (b);
      saccade_json_int (b, "layer", i / d->n_heads);
      saccade_json_int (b, "head", i % d->n_heads);
      saccade_json_double (b, "dla", d->heads[i]);
      if (r->sweep != NULL)
        saccade_json_double (b, "delta_logp", r->sweep->heads[i].next.delta_logp);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  if (r->sweep != NULL)
    {
      saccade_json_begin_object (b, "ablation");
      saccade_json_int (b, "study_id", r->sweep_id);
      saccade_json_double (b, "spearman_rho", r->rho.rho);
      saccade_json_double (b, "spearman_p", r->rho.p);
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
  saccade_json_print (b);
}

int
saccade_cmd_dla (int argc, char **argv)
{
  DlaOptions o = { .top = 10 };
  GOptionEntry entries[] = {
    SACCADE_CLI_TARGET_OPTIONS (&o.target, "whose logit is attributed"),
    { "top", 0, 0, G_OPTION_ARG_INT, &o.top, "rows of the table (10)", "N" },
    SACCADE_STORE_CLI_DB_OPTION (&o.db),
    SACCADE_STORE_CLI_RECOMPUTE_OPTION (&o.recompute),
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("RUN - direct logit attribution of "
                                                         "a stored run's heads");
  g_autoptr (GError) error = NULL;
  g_autofree char *db_path = NULL;
  DlaResult r = { 0 };
  ScModel *model = NULL;
  gint64 run = 0;
  int rc = 0;

  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &o.common);
  if (!saccade_store_cli_parse_run (ctx, &argc, &argv, "dla", &run))
    return 2;
  db_path = saccade_db_path (o.db);
  if (!read_run (db_path, run, &r, &error))
    rc = saccade_cli_fail (g_steal_pointer (&error));
  else if ((model = saccade_cli_load_model (&o.common, &error)) == NULL)
    rc = saccade_cli_fail (g_steal_pointer (&error));
  else if (!get_result (model, &o, db_path, &r, &error))
    rc = saccade_cli_fail (g_steal_pointer (&error));
  else if (o.common.json)
    print_json (&r);
  else
    print_text (&r, &o, db_path);
  dla_result_clear (&r);
  sc_model_free (model);
  g_free (o.db);
  saccade_cli_target_clear (&o.target);
  saccade_cli_common_clear (&o.common);
  return rc;
}

/* ------------------------------------------------------------------------------------ */
/* saccade means                                                                         */

int
saccade_cmd_means (int argc, char **argv)
{
  SaccadeCliCommon common = { 0 };
  char *db = NULL, *set = NULL;
  gboolean recompute = FALSE;
  GOptionEntry entries[] = {
    { "set", 0, 0, G_OPTION_ARG_STRING, &set, "reference set (default " SACCADE_REFERENCE_SET ")",
      "NAME" },
    SACCADE_STORE_CLI_DB_OPTION (&db),
    SACCADE_STORE_CLI_RECOMPUTE_OPTION (&recompute),
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- every head's mean output over the "
                                                         "shipped reference set (mean-ablation)");
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeHeadMeans) hm = NULL;
  g_autofree char *db_path = NULL, *warning = NULL;
  SaccadeCliSession cs = { 0 };
  ScModel *model = NULL;
  int rc = 0;

  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &common);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if (argc != 1)
    {
      fprintf (stderr, "saccade: means takes no arguments\n");
      return 2;
    }
  db_path = saccade_db_path (db);
  if ((model = saccade_cli_load_model (&common, &error)) == NULL
      || !saccade_cli_session_open (&cs, &common, model, &error))
    rc = saccade_cli_fail (g_steal_pointer (&error));
  else
    {
      const gboolean bar = isatty (STDERR_FILENO);
      hm = saccade_head_means_get (model, saccade_cli_model_path (&common), cs.session, db_path,
                                   set, recompute, bar ? saccade_cli_progress_bar : NULL, NULL, NULL,
                                   &warning, &error);
      if (bar)
        fprintf (stderr, "\r\033[K");
      if (hm == NULL)
        rc = saccade_cli_fail (g_steal_pointer (&error));
    }
  if (hm != NULL)
    {
      const ScHeadMeans *m = hm->means;
      const size_t n = (size_t) m->n_layers * m->n_heads * m->head_dim;
      double norm = 0.0;
      size_t i;
      for (i = 0; i < n; i++)
        norm += (double) m->mean[i] * m->mean[i];
      if (common.json)
        {
          g_autoptr (JsonBuilder) b = json_builder_new ();
          json_builder_begin_object (b);
          saccade_json_string (b, "model", sc_model_info (model)->name);
          saccade_json_string (b, "set", hm->set);
          saccade_json_int (b, "sentences", m->n_sentences);
          saccade_json_int (b, "tokens", m->n_tokens);
          saccade_json_int (b, "values", (gint64) n);
          saccade_json_double (b, "rms", sqrt (norm / (double) n));
          saccade_json_string (b, "source", hm->source.reused ? "reused" : "computed");
          saccade_json_int (b, "study_id", hm->source.study_id);
          saccade_json_double (b, "seconds", hm->source.seconds);
          if (warning != NULL)
            saccade_json_string (b, "warning", warning);
          json_builder_end_object (b);
          saccade_json_print (b);
        }
      else
        {
          printf ("%s: the mean output of each of %d x %d heads (%d dimensions) over reference "
                  "set %s, %d sentences, %" G_GINT64_FORMAT " positions\n",
                  sc_model_info (model)->name, m->n_layers, m->n_heads, m->head_dim, hm->set,
                  m->n_sentences, (gint64) m->n_tokens);
          saccade_cli_print_study_source (hm->source.reused, hm->source.study_id,
                                          hm->source.seconds, 2, db_path, warning);
          printf ("root mean square of the means: %.4f\n", sqrt (norm / (double) n));
          if (warning != NULL && hm->source.study_id > 0)
            printf ("note: %s\n", warning);
        }
    }
  saccade_cli_session_close (&cs);
  sc_model_free (model);
  g_free (db);
  g_free (set);
  saccade_cli_common_clear (&common);
  return rc;
}
