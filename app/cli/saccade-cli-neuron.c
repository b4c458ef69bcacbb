/* saccade-cli-neuron.c — `saccade neuron RUN --layer L --head H --query I`: the neuron view
 * of app/core/saccade-neuron.h on the command line. Text: a row per visible key (token,
 * q · k, the scaled score, its softmax weight, the stored probability, their difference)
 * and the head-wide largest difference over every query; JSON adds the vectors (q_i, each
 * k_j and q_i ∘ k_j), and with --all-queries every query's scaled scores and stored
 * probabilities, so a reader can redo the softmax for the whole head. */
#define G_LOG_DOMAIN "saccade-cli"

#include <math.h>
#include <stdio.h>

#include "app/cli/saccade-cli-store.h"
#include "app/cli/saccade-cli.h"
#include "app/core/saccade-neuron.h"

typedef struct {
  SaccadeCliCommon common;
  char *db;
  int layer, head, query;
  gboolean all_queries;
} NeuronOptions;

static void
add_vector (JsonBuilder *b, const char *name, const float *v, int n)
{
  saccade_json_begin_array (b, name);
  for (int d = 0; d < n; d++)
    saccade_json_add_double (b, v[d]);
  json_builder_end_array (b);
}

static void
print_json (const SaccadeNeuron *nv, const NeuronOptions *o, const SaccadeNeuronKey *keys)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  const int D = nv->head_dim, i = o->query;
  const float *qi = saccade_neuron_q (nv, i);
  g_autofree float *prod = g_new (float, D);

  json_builder_begin_object (b);
  saccade_json_int (b, "run", nv->run.id);
  saccade_json_string (b, "model", nv->run.model_name);
  saccade_json_int (b, "n_tokens", nv->n_tokens);
  saccade_json_head (b, nv->layer, nv->head);
  saccade_json_int (b, "kv_head", nv->kv_head);
  saccade_json_int (b, "head_dim", D);
  saccade_json_double (b, "attn_scale", nv->attn_scale);
  saccade_json_int (b, "query", i);
  add_vector (b, "q", qi, D);
  saccade_json_begin_array (b, "keys");
  for (int j = 0; j <= i; j++)
    {
      const float *kj = saccade_neuron_k (nv, j);
      for (int d = 0; d < D; d++)
        prod[d] = qi[d] * kj[d];
      json_builder_begin_object (b);
      saccade_json_int (b, "position", j);
      saccade_json_int (b, "id", nv->tokens[j].id);
      saccade_json_piece (b, nv->tokens[j].piece, nv->tokens[j].len, SACCADE_JSON_PIECE_FIRST);
      add_vector (b, "k", kj, D);
      add_vector (b, "product", prod, D);
      saccade_json_double (b, "dot", keys[j].dot);
      saccade_json_double (b, "scaled", keys[j].scaled);
      saccade_json_double (b, "weight", keys[j].weight);
      saccade_json_double (b, "stored", keys[j].stored);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  saccade_json_double (b, "max_diff", nv->max_diff);
  saccade_json_int (b, "max_diff_query", nv->max_diff_query);
  saccade_json_double (b, "max_sum_error", nv->max_sum_error);
  if (o->all_queries)
    {
      g_autofree SaccadeNeuronKey *all = g_new (SaccadeNeuronKey, nv->n_tokens);
      saccade_json_begin_array (b, "queries");
      for (int r = 0; r < nv->n_tokens; r++)
        {
          saccade_neuron_query (nv, r, all);
          json_builder_begin_object (b);
          saccade_json_begin_array (b, "scaled");
          for (int j = 0; j <= r; j++)
            saccade_json_add_double (b, all[j].scaled);
          json_builder_end_array (b);
          saccade_json_begin_array (b, "stored");
          for (int j = 0; j <= r; j++)
            saccade_json_add_double (b, all[j].stored);
          json_builder_end_array (b);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
    }
  json_builder_end_object (b);
  saccade_json_print (b);
}

static void
print_text (const SaccadeNeuron *nv, const NeuronOptions *o, const SaccadeNeuronKey *keys)
{
  g_auto (GStrv) labels = saccade_token_labels_for_store (nv->tokens, (gsize) nv->n_tokens);
  const int i = o->query;

  printf ("run %" G_GINT64_FORMAT " (%s), head L%d.H%d (KV head %d), query %d %s\n", nv->run.id,
          nv->run.model_name, nv->layer, nv->head, nv->kv_head, i, labels[i]);
  printf ("scaled = q·k × %.6g (1/√%d); weight = softmax of scaled over keys 0..%d\n\n",
          nv->attn_scale, nv->head_dim, i);
  printf ("  %4s  %-16s %10s %10s %10s %10s %10s\n", "key", "token", "q·k", "scaled", "weight",
          "stored", "|diff|");
  for (int j = 0; j <= i; j++)
    printf ("  %4d  %-16s %10.4f %10.4f %10.6f %10.6f %10.2e\n", j, labels[j], keys[j].dot,
            keys[j].scaled, keys[j].weight, keys[j].stored, fabs (keys[j].weight - keys[j].stored));
  printf ("\nevery query of the head: max |weight − stored| = %.3g (query %d), max |Σ weight − 1| "
          "= %.3g\n", nv->max_diff, nv->max_diff_query, nv->max_sum_error);
}

static int
neuron (ScModel *model, const NeuronOptions *o, gint64 run_id)
{
  g_autofree char *db_path = saccade_db_path (o->db);
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeNeuron) nv = NULL;
  g_autofree SaccadeNeuronKey *keys = NULL;
  SaccadeCliSession cs = { 0 };
  ScStoreModel ident;
  ScError err = { 0 };
  NeuronOptions opt = *o;

  if (sc_store_model_identify (model, saccade_cli_model_path (&o->common), &ident, &err)
      != SC_OK)
    {
      saccade_set_error_from_sc (&error, &err);
      return saccade_cli_fail (g_steal_pointer (&error));
    }
  if (!saccade_cli_session_open (&cs, &o->common, model, &error))
    return saccade_cli_fail (g_steal_pointer (&error));
  nv = saccade_neuron_get (model, &ident, cs.session, db_path, run_id, o->layer, o->head, NULL,
                           &error);
  saccade_cli_session_close (&cs);
  if (nv == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  if (opt.query < 0)
    opt.query = nv->n_tokens - 1;
  if (opt.query >= nv->n_tokens)
    {
      g_set_error (&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--query %d is outside run %" G_GINT64_FORMAT "'s tokens 0..%d", opt.query,
                   run_id, nv->n_tokens - 1);
      return saccade_cli_fail (g_steal_pointer (&error));
    }
  keys = g_new (SaccadeNeuronKey, opt.query + 1);
  saccade_neuron_query (nv, opt.query, keys);
  if (o->common.json)
    print_json (nv, &opt, keys);
  else
    print_text (nv, &opt, keys);
  return 0;
}

int
saccade_cmd_neuron (int argc, char **argv)
{
  NeuronOptions o = { .layer = -1, .head = -1, .query = -1 };
  GOptionEntry entries[] = {
    { "layer", 0, 0, G_OPTION_ARG_INT, &o.layer, "the layer (required)", "L" },
    { "head", 0, 0, G_OPTION_ARG_INT, &o.head, "the query head (required)", "H" },
    { "query", 0, 0, G_OPTION_ARG_INT, &o.query, "the query position (default: the last)", "I" },
    { "all-queries", 0, 0, G_OPTION_ARG_NONE, &o.all_queries,
      "--json: every query's scaled scores and stored probabilities too", NULL },
    SACCADE_STORE_CLI_DB_OPTION (&o.db),
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "RUN - how one head's attention is made from its query and key vectors");
  g_autoptr (GError) error = NULL;
  ScModel *model;
  gint64 run = 0;
  int rc;

  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &o.common);
  if (!saccade_store_cli_parse_run (ctx, &argc, &argv, "neuron", &run))
    return 2;
  if (o.layer < 0 || o.head < 0)
    {
      fprintf (stderr, "saccade: neuron needs --layer L and --head H (0 or more)\n");
      return 2;
    }
  if ((model = saccade_cli_load_model (&o.common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  rc = neuron (model, &o, run);
  sc_model_free (model);
  saccade_cli_common_clear (&o.common);
  g_free (o.db);
  return rc;
}
