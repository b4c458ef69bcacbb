/* saccade-cli-sinks.c — `saccade sinks`: the sink rate of Gu et al. 2025 (the share of heads
 * whose mean attention to the first token exceeds ε over T tokens) on natural text, random
 * tokens and one repeated token, per input and per layer, and the heads with the most
 * first-token mass. Parse -> one pass per input (engine/study/sc-sink-study.h) -> the rates
 * (engine/analysis/sc-sink.h) -> text or JSON. No store: three short passes.
 *
 * --norm adds the weight–norm gap (issue 27; docs/metrics.md "Attention sinks"): a second
 * pass per input, norm-based attention's (engine/study/sc-norm-study.h), gives every head's
 * mean weight on the first token over the rows i >= 1 beside that token's share of its
 * norm-based attention ‖α f(x)‖ over the same rows, and the "norm sink rate" — the share of
 * heads whose norm share passes ε. --csv FILE writes one row per input and head.
 */
#define G_LOG_DOMAIN "saccade-cli"

#include <math.h>
#include <stdio.h>

#include "app/cli/saccade-cli.h"
#include "app/core/saccade-csv.h"
#include "engine/analysis/sc-sink.h"
#include "engine/study/sc-norm-study.h"
#include "engine/study/sc-sink-study.h"
#include "engine/text/sc-tokenizer.h"

typedef struct {
  SaccadeCliCommon common;
  double epsilon;
  int n_tokens, top;
  gint64 seed;
  gboolean no_bos;
  gboolean norm;  /* the weight–norm gap beside the mass */
  char *csv;      /* one row per input and head to this file; NULL: none */
} SinksOptions;

typedef struct {
  ScSinkInput input;
  int32_t *ids;          /* (T) */
  ScStoreToken *tokens;  /* (T) their pieces */
  char **labels;         /* (T) as the figures show them */
  gboolean bos;          /* ids[0] is the BOS */
  double *mass;          /* (L * H) first-token mass, layer-major */
  double *layer_rate, *layer_mean; /* (L) */
  int *top;              /* (n_top) head indices, most mass first */
  int n_top;
  ScSinkRate rate;
  /* --norm: (L * H) each, over the rows i >= 1 (sc-norm-study.h) */
  double *weight_first, *norm_first;
  ScSinkRate norm_rate; /* of norm_first: the heads whose norm share passes epsilon */
} SinkInputResult;

typedef struct {
  int n_layers, n_heads, n_tokens;
  SinkInputResult in[SC_SINK_N_INPUTS];
} SinksResult;

static void
sinks_result_clear (SinksResult *r)
{
  for (int k = 0; k < SC_SINK_N_INPUTS; k++)
    {
      SinkInputResult *x = &r->in[k];
      g_free (x->ids);
      sc_store_tokens_free (x->tokens);
      g_strfreev (x->labels);
      g_free (x->mass);
      g_free (x->layer_rate);
      g_free (x->layer_mean);
      g_free (x->top);
      g_free (x->weight_first);
      g_free (x->norm_first);
    }
}

/* --norm: input @x's every head's weight and norm share on the first token, from one
 * pass of norm-based attention. */
static gboolean
sinks_norm (ScModel *model, ScSession *session, const SinksOptions *o, SinkInputResult *x,
            int nh, GError **error)
{
  const ScNormParams p = { .layer = -1 };
  const int H = (int) sc_model_info (model)->n_heads;
  ScNormResult *nr = NULL;
  ScError err = { 0 };

  if (sc_norm_run (session, model, x->ids, o->n_tokens, &p, NULL, &nr, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  x->weight_first = g_memdup2 (nr->weight_first, (gsize) nh * sizeof (double));
  x->norm_first = g_memdup2 (nr->norm_first, (gsize) nh * sizeof (double));
  sc_norm_result_free (nr);
  if (sc_sink_rate (x->norm_first, nh / H, H, o->epsilon, &x->norm_rate, NULL, NULL, &err)
      != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      return FALSE;
    }
  return TRUE;
}

/* Makes and runs every input; FALSE with @error set on failure. */
static gboolean
sinks_compute (ScModel *model, ScSession *session, const SinksOptions *o, SinksResult *r,
               GError **error)
{
  const ScModelInfo *info = sc_model_info (model);
  const ScSinkParams p = { .n_tokens = o->n_tokens, .seed = (uint64_t) o->seed,
                           .no_bos = o->no_bos };
  const int nh = (int) (info->n_layers * info->n_heads);
  ScError err = { 0 };

  r->n_layers = (int) info->n_layers;
  r->n_heads = (int) info->n_heads;
  r->n_tokens = o->n_tokens;
  for (int k = 0; k < SC_SINK_N_INPUTS; k++)
    {
      SinkInputResult *x = &r->in[k];
      bool bos = false;

      x->input = (ScSinkInput) k;
      x->ids = g_new (int32_t, o->n_tokens);
      x->mass = g_new (double, nh);
      x->layer_rate = g_new (double, r->n_layers);
      x->layer_mean = g_new (double, r->n_layers);
      x->top = g_new (int, MAX (1, o->top));
      if (sc_sink_input_ids (model, x->input, &p, x->ids, &bos, &err) != SC_OK
          || sc_store_tokens_from_ids (sc_model_tokenizer (model), x->ids, o->n_tokens,
                                       &x->tokens, &err) != SC_OK
          || sc_sink_study_run (session, model, x->ids, o->n_tokens, x->mass, &err) != SC_OK
          || sc_sink_rate (x->mass, r->n_layers, r->n_heads, o->epsilon, &x->rate,
                           x->layer_rate, x->layer_mean, &err) != SC_OK)
        {
          saccade_set_error_from_sc (error, &err);
          return FALSE;
        }
      x->bos = bos;
      x->labels = saccade_token_labels_for_store (x->tokens, o->n_tokens);
      x->n_top = sc_sink_top (x->mass, nh, o->top, x->top);
      if (o->norm && !sinks_norm (model, session, o, x, nh, error))
        return FALSE;
    }
  return TRUE;
}

/* Where the first token comes from, in words. */
static const char *
first_token_origin (const SinkInputResult *x, const SinksOptions *o)
{
  if (x->bos)
    return "the tokenizer's BOS";
  return o->no_bos ? "the input's own (--no-bos)" : "the input's own (no BOS added)";
}

static void
print_text (const SinksResult *r, const ScModelInfo *info, const SinksOptions *o)
{
  printf ("%s: attention sinks (Gu et al. 2025): the share of heads whose mean attention to "
          "the first token, over all %d queries, is > %g; %d layers x %d heads\n",
          info->name, r->n_tokens, o->epsilon, r->n_layers, r->n_heads);
  {
    g_autoptr (GString) head = g_string_new ("\n  ");
    saccade_format_padded (head, "input", 10);
    saccade_format_padded (head, "first token", 15);
    saccade_format_padded (head, "which is", 35);
    printf ("%s%9s %11s %9s", head->str, "sink rate", "sinks/heads", "mean mass");
    if (o->norm)
      printf (" %15s %15s", "norm sink rate", "mean norm share");
    printf ("\n");
  }
  for (int k = 0; k < SC_SINK_N_INPUTS; k++)
    {
      const SinkInputResult *x = &r->in[k];
      g_autofree char *tok = g_strdup_printf ("'%s'", x->labels[0]);
      g_autoptr (GString) line = g_string_new ("  ");

      saccade_format_padded (line, sc_sink_input_id (x->input), 10);
      saccade_format_padded (line, tok, 15);
      saccade_format_padded (line, first_token_origin (x, o), 35);
      printf ("%s%9.3f %5d/%-5d %9.3f", line->str, x->rate.rate, x->rate.n_sinks,
              x->rate.n_heads, x->rate.mean);
      if (o->norm)
        printf (" %15.3f %15.3f", x->norm_rate.rate, x->norm_rate.mean);
      printf ("\n");
    }
  printf ("\n  per layer: sink rate (mean first-token mass)\n  %5s", "layer");
  for (int k = 0; k < SC_SINK_N_INPUTS; k++)
    printf ("  %-15s", sc_sink_input_id ((ScSinkInput) k));
  printf ("\n");
  for (int l = 0; l < r->n_layers; l++)
    {
      printf ("  %5d", l);
      for (int k = 0; k < SC_SINK_N_INPUTS; k++)
        printf ("  %5.3f (%5.3f)  ", r->in[k].layer_rate[l], r->in[k].layer_mean[l]);
      printf ("\n");
    }
  printf ("\n  top sink heads (first-token mass%s)\n",
          o->norm ? " | weight and norm share on it over rows >= 1" : "");
  for (int k = 0; k < SC_SINK_N_INPUTS; k++)
    {
      const SinkInputResult *x = &r->in[k];
      printf ("  %-9s", sc_sink_input_id (x->input));
      for (int i = 0; i < x->n_top; i++)
        {
          const int at = x->top[i];
          printf (" L%d.H%d (%.3f", at / r->n_heads, at % r->n_heads, x->mass[at]);
          if (o->norm)
            printf (" | %.3f, norm %.3f", x->weight_first[at], x->norm_first[at]);
          printf (")");
        }
      printf ("\n");
    }
  if (o->norm)
    {
      printf ("\n  largest weight-norm gaps (weight on the first token - its norm share, rows "
              ">= 1)\n");
      for (int k = 0; k < SC_SINK_N_INPUTS; k++)
        {
          const SinkInputResult *x = &r->in[k];
          const int nh = r->n_layers * r->n_heads;
          g_autofree double *gap = g_new (double, nh);
          g_autofree int *top = g_new (int, MAX (1, o->top));
          int n_top;
          for (int at = 0; at < nh; at++)
            gap[at] = x->weight_first[at] - x->norm_first[at];
          n_top = sc_sink_top (gap, nh, o->top, top);
          printf ("  %-9s", sc_sink_input_id (x->input));
          for (int i = 0; i < n_top; i++)
            printf (" L%d.H%d (%.3f - %.3f)", top[i] / r->n_heads, top[i] % r->n_heads,
                    x->weight_first[top[i]], x->norm_first[top[i]]);
          printf ("\n");
        }
    }
  if (o->norm)
    printf ("\n  norm share: the first token's share of the head's norm-based attention "
            "||alpha_ij f_h(x_j)|| (Kobayashi 2020), mean over rows i >= 1; a sink with a small "
            "norm share takes weight and sends little\n");
}

/* --csv: input,layer,head,mass, and with --norm weight_first,norm_share,gap. */
static gboolean
write_csv (const SinksResult *r, const SinksOptions *o, GError **error)
{
  g_autoptr (GString) out = g_string_new ("input,layer,head,mass");

  if (o->norm)
    g_string_append (out, ",weight_first,norm_share,gap");
  g_string_append (out, "\r\n");
  for (int k = 0; k < SC_SINK_N_INPUTS; k++)
    {
      const SinkInputResult *x = &r->in[k];
      for (int at = 0; at < r->n_layers * r->n_heads; at++)
        {
          g_string_append_printf (out, "%s,%d,%d", sc_sink_input_id (x->input),
                                  at / r->n_heads, at % r->n_heads);
          saccade_csv_add_number (out, x->mass[at]);
          if (o->norm)
            {
              saccade_csv_add_number (out, x->weight_first[at]);
              saccade_csv_add_number (out, x->norm_first[at]);
              saccade_csv_add_number (out, x->weight_first[at] - x->norm_first[at]);
            }
          g_string_append (out, "\r\n");
        }
    }
  return g_file_set_contents (o->csv, out->str, (gssize) out->len, error);
}

static void
print_json (const SinksResult *r, const ScModelInfo *info, const SinksOptions *o)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  saccade_json_string (b, "model", info->name);
  saccade_json_int (b, "n_layers", r->n_layers);
  saccade_json_int (b, "n_heads", r->n_heads);
  saccade_json_int (b, "n_tokens", r->n_tokens);
  saccade_json_double (b, "epsilon", o->epsilon);
  saccade_json_int (b, "seed", o->seed);
  saccade_json_bool (b, "no_bos", o->no_bos);
  saccade_json_string (b, "definition", "head_mass = mean over all n_tokens queries of the "
                       "attention to position 0; a sink when head_mass > epsilon");
  if (o->norm)
    saccade_json_string (b, "norm_definition", "head_weight_first = mean over rows i >= 1 of "
                         "alpha[i][0]; head_norm_share = mean over rows i >= 1 of N[i][0] / "
                         "sum_j N[i][j], N[i][j] = alpha[i][j] ||W_O^h v_j||; a norm sink "
                         "when head_norm_share > epsilon");
  saccade_json_begin_array (b, "inputs");
  for (int k = 0; k < SC_SINK_N_INPUTS; k++)
    {
      const SinkInputResult *x = &r->in[k];

      json_builder_begin_object (b);
      saccade_json_string (b, "input", sc_sink_input_id (x->input));
      saccade_json_bool (b, "first_token_is_bos", x->bos);
      saccade_json_begin_object (b, "first_token");
      saccade_json_int (b, "id", x->ids[0]);
      saccade_json_piece (b, x->tokens[0].piece, x->tokens[0].len, SACCADE_JSON_PIECE_FIRST);
      json_builder_end_object (b);
      saccade_json_double (b, "sink_rate", x->rate.rate);
      saccade_json_int (b, "n_sinks", x->rate.n_sinks);
      saccade_json_int (b, "n_heads_total", x->rate.n_heads);
      saccade_json_double (b, "mean_mass", x->rate.mean);
      saccade_json_doubles (b, "layer_sink_rate", x->layer_rate, r->n_layers);
      saccade_json_doubles (b, "layer_mean_mass", x->layer_mean, r->n_layers);
      saccade_json_matrix (b, "head_mass", x->mass, r->n_layers, r->n_heads);
      if (o->norm)
        {
          saccade_json_matrix (b, "head_weight_first", x->weight_first, r->n_layers,
                               r->n_heads);
          saccade_json_matrix (b, "head_norm_share", x->norm_first, r->n_layers, r->n_heads);
          saccade_json_double (b, "norm_sink_rate", x->norm_rate.rate);
          saccade_json_int (b, "n_norm_sinks", x->norm_rate.n_sinks);
          saccade_json_double (b, "mean_norm_share", x->norm_rate.mean);
        }
      saccade_json_begin_array (b, "top");
      for (int i = 0; i < x->n_top; i++)
        {
          json_builder_begin_object (b);
          saccade_json_head (b, x->top[i] / r->n_heads, x->top[i] % r->n_heads);
          saccade_json_double (b, "mass", x->mass[x->top[i]]);
          if (o->norm)
            {
              saccade_json_double (b, "weight_first", x->weight_first[x->top[i]]);
              saccade_json_double (b, "norm_share", x->norm_first[x->top[i]]);
            }
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      saccade_json_tokens (b, x->tokens, r->n_tokens);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  saccade_json_print (b);
}

int
saccade_cmd_sinks (int argc, char **argv)
{
  SinksOptions o = { .epsilon = SC_SINK_EPSILON, .n_tokens = SC_SINK_TOKENS, .top = 5 };
  GOptionEntry entries[] = {
    { "epsilon", 0, 0, G_OPTION_ARG_DOUBLE, &o.epsilon,
      "a head is a sink when its mean first-token attention is > EPS (0.3)", "EPS" },
    { "tokens", 0, 0, G_OPTION_ARG_INT, &o.n_tokens,
      "tokens T of each input, the BOS included (64)", "T" },
    { "seed", 0, 0, G_OPTION_ARG_INT64, &o.seed, "seed of the random tokens (0)", "S" },
    { "no-bos", 0, 0, G_OPTION_ARG_NONE, &o.no_bos,
      "leave out the BOS the tokenizer adds (the first token is then the text's)", NULL },
    { "top", 0, 0, G_OPTION_ARG_INT, &o.top, "sink heads listed per input (5)", "N" },
    { "norm", 0, 0, G_OPTION_ARG_NONE, &o.norm, "beside each head's mass, its weight and "
      "norm-based share on the first token (the weight-norm gap; a second pass per input)",
      NULL },
    { "csv", 0, 0, G_OPTION_ARG_FILENAME, &o.csv, "also write one row per input and head "
      "to FILE", "FILE" },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "- the attention-sink rate on natural text, random tokens and one repeated token");
  g_autoptr (GError) error = NULL;
  SaccadeCliSession cs = { 0 };
  SinksResult r = { 0 };
  ScModel *model;
  gboolean ok;

  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &o.common);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if (argc > 1)
    {
      fprintf (stderr, "saccade: sinks takes no arguments (its inputs are built in)\n");
      return 2;
    }
  if (!(o.epsilon >= 0.0 && o.epsilon < 1.0) || o.n_tokens < 2 || o.top < 0 || o.seed < 0)
    {
      fprintf (stderr, "saccade: sinks needs 0 <= --epsilon < 1, --tokens >= 2, --top >= 0 "
                       "and --seed >= 0\n");
      return 2;
    }
  if ((model = saccade_cli_load_model (&o.common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  if (!saccade_cli_session_open (&cs, &o.common, model, &error))
    {
      sc_model_free (model);
      return saccade_cli_fail (g_steal_pointer (&error));
    }
  ok = sinks_compute (model, cs.session, &o, &r, &error);
  saccade_cli_session_close (&cs);
  if (ok && o.csv != NULL)
    ok = write_csv (&r, &o, &error);
  if (ok && o.common.json)
    print_json (&r, sc_model_info (model), &o);
  else if (ok)
    print_text (&r, sc_model_info (model), &o);
  sinks_result_clear (&r);
  sc_model_free (model);
  saccade_cli_common_clear (&o.common);
  g_free (o.csv);
  return ok ? 0 : saccade_cli_fail (g_steal_pointer (&error));
}
