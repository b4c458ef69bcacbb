/* saccade-cli-rollout.c — `saccade rollout`: attention rollout of a stored run, and
 * attention flow for one target (RolloutResult: the rollout matrix and the bars), from
 * engine/analysis/sc-rollout.h; with --exclude-first both without the first token (every
 * row renormalised without key 0), and the text and JSON say which. Parse -> a result ->
 * text, JSON or CSV.
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
/* rollout                                                                               */

typedef struct {
  SaccadeCliRunHeads run;
  guint n;
  int target;
  double *rollout;               /* (n, n) */
  gboolean with_flow;
  ScRolloutOptions opt;          /* --exclude-first */
  double *flow;                  /* (n) to target, with --flow */
  double rollout_s, flow_s;
} RolloutResult;

static void
rollout_result_clear (RolloutResult *r)
{
  saccade_cli_run_heads_clear (&r->run);
  g_free (r->rollout);
  g_free (r->flow);
}

/* Returns the exit status (having printed why when not 0). */
static int
rollout_compute (ScStore *store, gint64 run, RolloutResult *r)
{
  g_autofree const float **layers = NULL;
  ScError err = { 0 };
  gint64 t0;
  gsize block;

  if (!saccade_cli_run_heads_read (store, run, FALSE, &r->run, &err))
    return saccade_store_cli_fail (&err);
  r->n = r->run.info.n_tokens;
  if (r->target < 0)
    r->target = (int) r->n - 1;
  if (r->target >= (int) r->n)
    {
      fprintf (stderr, "saccade: run %" G_GINT64_FORMAT " has positions 0-%u; there is no "
               "--target %d\n", run, r->n - 1, r->target);
      return 2;
    }
  /* Refuse a flow that is too large before reading every head: the engine's refusal
   * (which it gives before reading any layer) says how far flows go for this depth. */
  if (r->with_flow && !sc_attention_flow_fits ((int) r->run.info.n_layers, (int) r->n))
    {
      static const float one = 1;
      g_autofree const float **unread = g_new (const float *, r->run.info.n_layers);
      double f;

      for (guint l = 0; l < r->run.info.n_layers; l++)
        unread[l] = &one;
      sc_attention_flow ((const float *const *) unread, (int) r->run.info.n_layers, 1,
                         (int) r->n, r->target, &f, &err);
      return saccade_store_cli_fail (&err);
    }
  if (!saccade_cli_run_heads_load (store, &r->run, &err))
    return saccade_store_cli_fail (&err);
  block = (gsize) r->run.info.n_heads * r->n * r->n;
  layers = g_new (const float *, r->run.info.n_layers);
  for (guint l = 0; l < r->run.info.n_layers; l++)
    layers[l] = r->run.heads + l * block;
  r->rollout = g_new (double, (gsize) r->n * r->n);
  t0 = g_get_monotonic_time ();
  if (sc_attention_rollout_with ((const float *const *) layers, (int) r->run.info.n_layers,
                                 (int) r->run.info.n_heads, (int) r->n, &r->opt, r->rollout,
                                 &err) != SC_OK)
    return saccade_store_cli_fail (&err);
  r->rollout_s = (g_get_monotonic_time () - t0) / 1e6;
  if (r->with_flow)
    {
      r->flow = g_new (double, r->n);
      t0 = g_get_monotonic_time ();
      if (sc_attention_flow_with ((const float *const *) layers, (int) r->run.info.n_layers,
                                  (int) r->run.info.n_heads, (int) r->n, &r->opt, r->target,
                                  r->flow, &err) != SC_OK)
        return saccade_store_cli_fail (&err);
      r->flow_s = (g_get_monotonic_time () - t0) / 1e6;
    }
  return 0;
}

/* The rollout matrix, RFC 4180 with CRLF: header "query\key,0:The,...", rows "pos:token". */
static GString *
rollout_csv (const RolloutResult *r)
{
  GString *s = g_string_new ("query\\key");

  for (guint j = 0; j < r->n; j++)
    {
      g_autofree char *cell = g_strdup_printf ("%u:%s", j, r->run.labels[j]);
      g_string_append_c (s, ',');
      saccade_csv_quoted (s, cell);
    }
  g_string_append (s, "\r\n");
  for (guint i = 0; i < r->n; i++)
    {
      g_autofree char *cell = g_strdup_printf ("%u:%s", i, r->run.labels[i]);
      saccade_csv_quoted (s, cell);
      for (guint j = 0; j < r->n; j++)
        g_string_append_printf (s, ",%.9g", r->rollout[(gsize) i * r->n + j]);
      g_string_append (s, "\r\n");
    }
  return s;
}

/* Which attention went in: "kept" (as the model computed it) or "excluded" (key 0 removed
 * from every row, rows renormalised: sc-rollout.h). */
static const char *
first_token_word (const RolloutResult *r)
{
  return r->opt.exclude_first ? "excluded" : "kept";
}

static void
rollout_print_json (const RolloutResult *r)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  saccade_json_int (b, "run", r->run.info.id);
  saccade_json_int (b, "target", r->target);
  saccade_json_string (b, "first_token", first_token_word (r));
  saccade_json_tokens (b, r->run.tokens, r->run.n_tokens);
  saccade_json_doubles (b, "rollout_target", r->rollout + (gsize) r->target * r->n, r->n);
  if (r->with_flow)
    {
      saccade_json_doubles (b, "flow_target", r->flow, r->n);
      saccade_json_double (b, "flow_seconds", r->flow_s);
    }
  saccade_json_double (b, "rollout_seconds", r->rollout_s);
  saccade_json_matrix (b, "rollout", r->rollout, r->n, r->n);
  json_builder_end_object (b);
  saccade_json_print (b);
}

static void
rollout_print_text (const RolloutResult *r, const char *csv_path)
{
  printf ("Attention rollout%s of run %" G_GINT64_FORMAT " (%u layers, %u tokens) to position "
          "%d '%s': how much each input token reaches it\n", r->with_flow ? " and flow" : "",
          r->run.info.id, r->run.info.n_layers, r->n, r->target, r->run.labels[r->target]);
  printf ("First token %s\n", r->opt.exclude_first
          ? "excluded: key 0 removed from every attention row and the rows renormalised"
          : "kept: the attention as the model computed it (--exclude-first renormalises "
            "without it)");
  printf ("  pos  rollout%s  token\n", r->with_flow ? "     flow" : "");
  for (guint j = 0; j < r->n; j++)
    {
      printf ("%5u %8.4f", j, r->rollout[(gsize) r->target * r->n + j]);
      if (r->with_flow)
        printf (" %8.4f", r->flow[j]);
      printf ("  '%s'\n", r->run.labels[j]);
    }
  if (r->with_flow)
    printf ("Rollout in %.3f s, flow in %.3f s\n", r->rollout_s, r->flow_s);
  if (csv_path != NULL)
    printf ("Wrote %s: the %u x %u rollout matrix\n", csv_path, r->n, r->n);
}

int
saccade_cmd_rollout (int argc, char **argv)
{
  gboolean json = FALSE, flow = FALSE, exclude_first = FALSE;
  char *db_opt = NULL, *out_path = NULL;
  int target = -1;
  GOptionEntry entries[] = {
    SACCADE_STORE_CLI_DB_OPTION (&db_opt),
    { "flow", 0, 0, G_OPTION_ARG_NONE, &flow,
      "Also compute attention flow (maximum flow) to the target; short runs only", NULL },
    { "target", 't', 0, G_OPTION_ARG_INT, &target, "Output position (default: the last)",
      "POS" },
    { "exclude-first", 0, 0, G_OPTION_ARG_NONE, &exclude_first,
      "Remove the first token (the attention sink) from every attention row and renormalise "
      "the rows before rollout and flow", NULL },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out_path, "Write the rollout matrix as CSV",
      "FILE" },
    SACCADE_CLI_JSON_OPTION (&json),
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "RUN - attention rollout (and flow) of a stored run: how much each input token reaches "
    "a position");
  g_autofree char *path = NULL;
  RolloutResult r = { .target = -1 };
  ScStore *store;
  ScError err = { 0 };
  gint64 run;
  int rc;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!saccade_store_cli_parse_run (ctx, &argc, &argv, "rollout", &run))
    return 2;
  if (target < -1)
    {
      fprintf (stderr, "saccade: --target is a position >= 0\n");
      return 2;
    }
  r.target = target;
  r.with_flow = flow;
  r.opt.exclude_first = exclude_first;
  path = saccade_db_path (db_opt);
  if ((store = saccade_cli_heads_open_store (path, FALSE, &err)) == NULL)
    return saccade_store_cli_fail (&err);
  if ((rc = rollout_compute (store, run, &r)) == 0)
    {
      g_autoptr (GError) error = NULL;
      if (out_path != NULL)
        {
          GString *csv = rollout_csv (&r);
          if (!saccade_cli_write_gstring (out_path, csv, &error))
            rc = saccade_cli_fail (g_steal_pointer (&error));
          g_string_free (csv, TRUE);
        }
      if (rc == 0 && json)
        rollout_print_json (&r);
      else if (rc == 0)
        rollout_print_text (&r, out_path);
    }
  rollout_result_clear (&r);
  sc_store_close (store);
  return rc;
}
