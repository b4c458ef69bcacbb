/* saccade-cli-compare-models.c — `saccade compare --model A --model B TEXT`: two models'
 * heads side by side at the level of head statistics (app/core/saccade-model-compare.h
 * computes everything): how many heads of each type (docs/metrics.md, "Head types") each
 * model has and which, at which relative depth; the strongest heads of each type; the mean
 * statistics; the stored ablation effects by relative depth when both models have a head
 * sweep of the text; and, only when both tokenizers give the same ids, each A head's
 * nearest B head by head distance. Text or --json.
 */
#define G_LOG_DOMAIN "saccade-cli"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app/cli/saccade-cli.h"
#include "app/core/saccade-model-compare.h"
#include "app/core/saccade-paths.h"

/* Heads listed per type and model in the text table; JSON lists them all. */
#define LIST_HEADS 8
/* The strongest heads of each type in JSON's "strongest". */
#define STRONGEST 5

/* The mean of statistic @m over @s's heads whose value is defined; NaN when none is. */
static double
mean_stat (const SaccadeModelSide *s, ScHeadMetric m)
{
  double sum = 0;
  int n = 0;

  for (int i = 0; i < s->n_layers * s->n_heads; i++)
    {
      const double v = sc_head_stats_get (&s->stats[i], m);
      if (!isnan (v))
        {
          sum += v;
          n++;
        }
    }
  return n > 0 ? sum / n : NAN;
}

static const char *
source_text (const SaccadeModelSide *s, char *buf, gsize size)
{
  if (s->induction->source.reused)
    g_snprintf (buf, size, "reused study %" G_GINT64_FORMAT, s->induction->source.study_id);
  else if (s->induction->source.study_id > 0)
    g_snprintf (buf, size, "computed in %.1f s, stored as study %" G_GINT64_FORMAT,
                s->induction->source.seconds, s->induction->source.study_id);
  else
    g_snprintf (buf, size, "computed in %.1f s, not stored", s->induction->source.seconds);
  return buf;
}

static void
print_text (const SaccadeModelCompare *c)
{
  const ScHeadTypeThresholds *t = &c->thresholds;
  const ScInductionResult *ir = c->side[0].induction->result;
  gboolean both_ablation = c->side[0].ablation != NULL && c->side[1].ablation != NULL;
  char buf[128];

  for (int i = 0; i < 2; i++)
    {
      const SaccadeModelSide *s = &c->side[i];
      g_autofree char *name = saccade_terminal_text (s->name, -1);
      g_autofree char *path = saccade_terminal_text (s->path, -1);
      printf ("%c: %s (%s, %.12s)\n   %d layers x %d heads (%d KV head%s), %d tokens of the "
              "text; induction: %s\n", 'A' + i, name, path, s->sha256, s->n_layers,
              s->n_heads, s->n_kv_heads, s->n_kv_heads == 1 ? "" : "s", s->n_tokens, source_text (s, buf, sizeof buf));
    }
  printf ("Induction scores on %d random tokens of each model's own vocabulary, repeated; %d "
          "seeds.\n", ir->seq_len, ir->n_seeds);
  if (c->same_tokens)
    printf ("Tokens: the two models give the same %d ids.\n", c->side[0].n_tokens);
  else
    printf ("Tokens: the tokenizations differ (A %d tokens, B %d): a head of A and a head of "
            "B do not look at the same positions, so there is no head-vs-head matrix; the "
            "models are compared by head statistics only.\n", c->side[0].n_tokens,
            c->side[1].n_tokens);

  printf ("\nHead types (docs/metrics.md \"Head types\"; the first criterion met, in this "
          "order):\n");
  printf ("  induction >= %.2f prefix matching, previous-token >= %.2f, first-token >= %.2f "
          "sink, broad >= %.2f normalised entropy, local <= %.1f tokens mean distance\n\n",
          t->induction, t->previous, t->sink, t->broad, t->local_distance);
  printf ("  %-15s %8s %7s   %8s %7s\n", "type", "A heads", "share", "B heads", "share");
  for (int k = 0; k < SC_HEAD_N_TYPES; k++)
    {
      const int na = c->side[0].n_layers * c->side[0].n_heads;
      const int nb = c->side[1].n_layers * c->side[1].n_heads;
      printf ("  %-15s %8d %6.1f%%   %8d %6.1f%%\n", sc_head_type_id ((ScHeadType) k),
              c->side[0].counts[k], 100.0 * c->side[0].counts[k] / na, c->side[1].counts[k],
              100.0 * c->side[1].counts[k] / nb);
    }

  printf ("\nHeads of each type, strongest first: layer.head@relative depth (score)\n");
  for (int k = 0; k < SC_HEAD_TYPE_OTHER; k++)
    {
      printf ("  %s\n", sc_head_type_id ((ScHeadType) k));
      for (int i = 0; i < 2; i++)
        {
          const SaccadeModelSide *s = &c->side[i];
          int n = 0;
          g_autofree int *heads = saccade_model_side_heads_of_type (s, (ScHeadType) k, &n);

          printf ("    %c:", 'A' + i);
          if (n == 0)
            printf (" none");
          for (int j = 0; j < MIN (n, LIST_HEADS); j++)
            {
              const int h = heads[j], l = h / s->n_heads;
              printf (" L%d.H%d@%.2f (%.3f)", l, h % s->n_heads, saccade_model_side_depth (s, l),
                      sc_head_type_score ((ScHeadType) k, &s->stats[h],
                                          &s->induction->result->heads[h]));
            }
          if (n > LIST_HEADS)
            printf (" +%d more", n - LIST_HEADS);
          printf ("\n");
        }
    }

  printf ("\nMean over the heads        A          B\n");
  for (int m = 0; m < SC_HEAD_N_METRICS; m++)
    printf ("  %-18s %10.4f %10.4f\n", sc_head_metric_id ((ScHeadMetric) m),
            mean_stat (&c->side[0], (ScHeadMetric) m), mean_stat (&c->side[1], (ScHeadMetric) m));

  if (c->cross != NULL)
    {
      const SaccadeModelSide *a = &c->side[0], *b = &c->side[1];
      const int na = a->n_layers * a->n_heads, nb = b->n_layers * b->n_heads;
      double sum = 0;
      int same_place = 0;

      for (int i = 0; i < na; i++)
        {
          const int j = c->nearest[i];
          sum += c->cross[(gsize) i * nb + j];
          same_place += j / b->n_heads == i / a->n_heads && j % b->n_heads == i % a->n_heads;
        }
      printf ("\nHead distance (mean Jensen-Shannon divergence, nats) of each A head to its "
              "nearest B head: mean %.6f; %d of %d A heads have as nearest the B head at the "
              "same layer and index.\n", sum / na, same_place, na);
    }
  else if (c->matrix_too_long)
    printf ("\nThe tokens agree, but the text is longer than %d tokens: no head-vs-head "
            "matrix.\n", SACCADE_MODEL_COMPARE_MATRIX_MAX_TOKENS);

  printf ("\nAblation (stored zero-ablation head sweeps of this text):\n");
  for (int i = 0; i < 2; i++)
    {
      const SaccadeAblation *ab = c->side[i].ablation;
      if (ab != NULL)
        printf ("  %c: study %" G_GINT64_FORMAT " of run %" G_GINT64_FORMAT "\n", 'A' + i,
                ab->study_id, ab->run_id);
      else
        printf ("  %c: none stored (saccade capture -m MODEL TEXT, then saccade ablate RUN "
                "--heads)\n", 'A' + i);
    }
  if (both_ablation)
    {
      double by[2][SACCADE_MODEL_COMPARE_DEPTH_BINS];
      printf ("  mean TV of the next-token distribution when one head is zeroed, by relative "
              "depth:\n  depth ");
      for (int b = 0; b < SACCADE_MODEL_COMPARE_DEPTH_BINS; b++)
        printf (" %6.1f", (double) b / SACCADE_MODEL_COMPARE_DEPTH_BINS);
      printf ("\n");
      for (int i = 0; i < 2; i++)
        {
          saccade_model_side_ablation_by_depth (&c->side[i], by[i]);
          printf ("  %c     ", 'A' + i);
          for (int b = 0; b < SACCADE_MODEL_COMPARE_DEPTH_BINS; b++)
            printf (" %6.4f", by[i][b]);
          printf ("\n");
        }
    }
  printf ("\n(%.1f s)\n", c->seconds);
}

static void
json_side (JsonBuilder *b, const SaccadeModelCompare *c, int which)
{
  const SaccadeModelSide *s = &c->side[which];
  const ScInductionResult *ir = s->induction->result;
  double by[SACCADE_MODEL_COMPARE_DEPTH_BINS];

  json_builder_begin_object (b);
  saccade_json_string (b, "path", s->path);
  saccade_json_string (b, "name", s->name);
  saccade_json_string (b, "sha256", s->sha256);
  saccade_json_int (b, "n_layers", s->n_layers);
  saccade_json_int (b, "n_heads", s->n_heads);
  saccade_json_int (b, "n_kv_heads", s->n_kv_heads);
  saccade_json_int (b, "n_tokens", s->n_tokens);
  saccade_json_begin_array (b, "ids");
  for (int i = 0; i < s->n_tokens; i++)
    json_builder_add_int_value (b, s->ids[i]);
  json_builder_end_array (b);
  saccade_json_begin_object (b, "induction");
  saccade_json_int (b, "seq_len", ir->seq_len);
  saccade_json_int (b, "n_seeds", ir->n_seeds);
  saccade_json_string (b, "source", s->induction->source.reused ? "reused" : "computed");
  saccade_json_int (b, "study_id", s->induction->source.study_id);
  json_builder_end_object (b);
  saccade_json_begin_object (b, "counts");
  for (int k = 0; k < SC_HEAD_N_TYPES; k++)
    saccade_json_int (b, sc_head_type_id ((ScHeadType) k), s->counts[k]);
  json_builder_end_object (b);
  saccade_json_begin_object (b, "strongest");
  for (int k = 0; k < SC_HEAD_TYPE_OTHER; k++)
    {
      int n = 0;
      g_autofree int *heads = saccade_model_side_heads_of_type (s, (ScHeadType) k, &n);
      saccade_json_begin_array (b, sc_head_type_id ((ScHeadType) k));
      for (int j = 0; j < MIN (n, STRONGEST); j++)
        {
          json_builder_begin_object (b);
          saccade_json_head (b, heads[j] / s->n_heads, heads[j] % s->n_heads);
          saccade_json_double (b, "depth", saccade_model_side_depth (s, heads[j] / s->n_heads));
          saccade_json_double (b, "score", sc_head_type_score ((ScHeadType) k, &s->stats[heads[j]],
                                                               &ir->heads[heads[j]]));
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
    }
  json_builder_end_object (b);
  saccade_json_begin_array (b, "heads");
  for (int i = 0; i < s->n_layers * s->n_heads; i++)
    {
      const int l = i / s->n_heads;
      json_builder_begin_object (b);
      saccade_json_head (b, l, i % s->n_heads);
      saccade_json_double (b, "depth", saccade_model_side_depth (s, l));
      saccade_json_string (b, "type", sc_head_type_id (s->types[i]));
      saccade_json_begin_array (b, "meets");
      for (int k = 0; k < SC_HEAD_TYPE_OTHER; k++)
        if (s->flags[i] & (1u << k))
          json_builder_add_string_value (b, sc_head_type_id ((ScHeadType) k));
      json_builder_end_array (b);
      for (int m = 0; m < SC_HEAD_N_METRICS; m++)
        saccade_json_double (b, sc_head_metric_id ((ScHeadMetric) m),
                             sc_head_stats_get (&s->stats[i], (ScHeadMetric) m));
      saccade_json_double (b, "prefix_matching", ir->heads[i].prefix_matching);
      saccade_json_double (b, "duplicate_token", ir->heads[i].duplicate_token);
      saccade_json_double (b, "induction_previous_token", ir->heads[i].previous_token);
      if (s->ablation != NULL && s->ablation->heads != NULL
          && s->ablation->heads->n_layers == s->n_layers
          && s->ablation->heads->n_heads == s->n_heads)
        saccade_json_double (b, "ablation_tv", s->ablation->heads->heads[i].next.tv);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  if (saccade_model_side_ablation_by_depth (s, by))
    {
      saccade_json_begin_object (b, "ablation");
      saccade_json_int (b, "run", s->ablation->run_id);
      saccade_json_int (b, "study_id", s->ablation->study_id);
      saccade_json_doubles (b, "tv_by_depth", by, SACCADE_MODEL_COMPARE_DEPTH_BINS);
      json_builder_end_object (b);
    }
  else
    {
      json_builder_set_member_name (b, "ablation");
      json_builder_add_null_value (b);
    }
  json_builder_end_object (b);
}

static void
print_json (const SaccadeModelCompare *c)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  const ScHeadTypeThresholds *t = &c->thresholds;

  json_builder_begin_object (b);
  saccade_json_begin_object (b, "thresholds");
  saccade_json_double (b, "induction", t->induction);
  saccade_json_double (b, "previous-token", t->previous);
  saccade_json_double (b, "first-token", t->sink);
  saccade_json_double (b, "broad", t->broad);
  saccade_json_double (b, "local", t->local_distance);
  json_builder_end_object (b);
  saccade_json_begin_array (b, "models");
  for (int i = 0; i < 2; i++)
    json_side (b, c, i);
  json_builder_end_array (b);
  saccade_json_bool (b, "same_tokens", c->same_tokens);
  if (c->cross != NULL)
    {
      const SaccadeModelSide *a = &c->side[0], *bs = &c->side[1];
      const int nb = bs->n_layers * bs->n_heads;
      saccade_json_begin_array (b, "nearest");
      for (int i = 0; i < a->n_layers * a->n_heads; i++)
        {
          json_builder_begin_object (b);
          saccade_json_int (b, "a_layer", i / a->n_heads);
          saccade_json_int (b, "a_head", i % a->n_heads);
          saccade_json_int (b, "b_layer", c->nearest[i] / bs->n_heads);
          saccade_json_int (b, "b_head", c->nearest[i] % bs->n_heads);
          saccade_json_double (b, "distance", c->cross[(gsize) i * nb + c->nearest[i]]);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
    }
  else
    {
      json_builder_set_member_name (b, "nearest");
      json_builder_add_null_value (b);
      saccade_json_string (b, "matrix", c->same_tokens
                                          ? "the text is too long for the matrix"
                                          : "the tokenizations differ: statistics only");
    }
  saccade_json_double (b, "seconds", c->seconds);
  json_builder_end_object (b);
  saccade_json_print (b);
}

/* The raw text of stored run @run of the store at @db_path (caller frees), or NULL after
 * printing why. */
static char *
run_text (const char *db_path, gint64 run, gsize *len)
{
  ScStoreRunInfo info = { 0 };
  ScError err = { 0 };
  ScStore *store = saccade_store_open (db_path, FALSE, &err);
  char *text = NULL;

  if (store != NULL && sc_store_get_run (store, run, &info, &err) == SC_OK)
    {
      text = g_memdup2 (info.text, info.text_len + 1); /* the store adds a NUL */
      *len = info.text_len;
    }
  else
    fprintf (stderr, "saccade: %s\n", err.message);
  sc_store_run_info_clear (&info);
  sc_store_close (store);
  return text;
}

int
saccade_cli_compare_models (char **models, const char *text_opt, const char *file,
                            gint64 run, int argc, char **argv, const char *db, int seq_len,
                            int n_seeds, int threads, const char *backend, gboolean json)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL, *db_path = saccade_db_path (db);
  gsize len = 0;
  const ScInductionParams ind = { seq_len > 0 ? seq_len : SC_INDUCTION_DEFAULT_LEN,
                                  n_seeds > 0 ? n_seeds : SC_INDUCTION_DEFAULT_SEEDS };
  g_autoptr (SaccadeModelCompare) c = NULL;

  if (g_strv_length (models) != 2)
    {
      fprintf (stderr, "saccade: compare --model takes two models: --model A --model B (the "
               "same file twice is allowed); %u given\n", g_strv_length (models));
      return 2;
    }
  if ((text_opt != NULL) + (file != NULL) + (argc > 1) + (run > 0) > 1)
    {
      fprintf (stderr, "saccade: give the text once: -t TEXT, --file FILE, --run RUN or as "
               "arguments\n");
      return 2;
    }
  if (run > 0)
    {
      if ((text = run_text (db_path, run, &len)) == NULL)
        return 1;
    }
  else if (file != NULL)
    {
      if ((text = saccade_cli_read_file (file, &len, &error)) == NULL)
        return saccade_cli_fail (g_steal_pointer (&error));
    }
  else if (text_opt != NULL)
    text = g_strdup (text_opt);
  else if (argc > 1)
    text = g_strjoinv (" ", argv + 1);
  else
    {
      fprintf (stderr, "saccade: compare --model A --model B needs a text: -t TEXT, --file "
               "FILE, --run RUN (a stored run's text) or as arguments\n");
      return 2;
    }
  if (file == NULL && run <= 0)
    len = strlen (text);
  c = saccade_model_compare_compute (models[0], models[1], text, (gssize) len, db_path, &ind,
                                     threads, backend, saccade_cli_progress (),
                                     NULL, NULL, &error);
  if (isatty (STDERR_FILENO))
    fprintf (stderr, "\r%*s\r", 40, "");
  if (c == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  for (int i = 0; i < 2; i++)
    if (c->side[i].induction_warning != NULL)
      fprintf (stderr, "saccade: warning: model %c's induction study was not stored: %s\n",
               'A' + i, c->side[i].induction_warning);
  if (json)
    print_json (c);
  else
    print_text (c);
  return 0;
}
