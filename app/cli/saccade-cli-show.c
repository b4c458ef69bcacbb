/* saccade-cli-show.c — `saccade show`: a run's tokens, what the model predicted, and, for one
 * head, each token's most attended keys. It reads through a read-only store, so it works
 * beside a running capture and on databases in read-only folders. Parse -> a result
 * (ShowResult) -> text or JSON. `export`, the other reading verb, is saccade-cli-export.c.
 */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli-store.h"

#include "app/core/saccade-export.h"
#include "engine/store/sc-store-predictions.h"
#include "ui/figures/saccade-token-label.h"
#include "ui/figures/saccade-figure-lines.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------ */
/* show                                                                                  */

typedef struct {
  int key;
  float w;
} Ranked;

static int
cmp_ranked (const void *a, const void *b)
{
  const Ranked *x = a, *y = b;
  if (x->w != y->w)
    return x->w < y->w ? 1 : -1;
  return (x->key > y->key) - (x->key < y->key); /* ties: earlier key first */
}

/* The @k largest weights of @row (@n keys), heaviest first. */
static guint
top_k (const float *row, guint n, guint k, Ranked *out)
{
  g_autofree Ranked *all = g_new (Ranked, n);
  guint i;

  for (i = 0; i < n; i++)
    all[i] = (Ranked) { (int) i, row[i] };
  qsort (all, n, sizeof *all, cmp_ranked);
  k = MIN (k, n);
  memcpy (out, all, k * sizeof *out);
  return k;
}

/* A run, and with a head, each query's most attended keys. */
typedef struct {
  ScStoreRunInfo info;
  ScStoreToken *tokens;   /* (n_tokens) */
  size_t n_tokens;
  gboolean with_head;
  int layer, head, k;
  guint n_query;
  Ranked *top;            /* (n_query, k): query i's keys, heaviest first */
  guint *n_top;           /* (n_query): how many of its k there are (a causal row is short) */
  float *dropped;         /* (n_query): a sparse head's dropped mass per row, or NULL */
  ScStorePredictions pred; /* what the model predicted after each position (may be none) */
  gboolean all_predictions; /* --predictions: every position's, not only the last's */
} ShowResult;

/* How many predictions a line shows: the top 5 (the store keeps 10). */
#define SHOW_PREDICTIONS 5

static void
show_result_clear (ShowResult *r)
{
  sc_store_run_info_clear (&r->info);
  sc_store_tokens_free (r->tokens);
  g_free (r->top);
  g_free (r->n_top);
  g_free (r->dropped);
  sc_store_predictions_clear (&r->pred);
}

static gboolean
show_read (ScStore *store, gint64 run, ShowResult *r, ScError *err)
{
  ScStoreHead h = { 0 };

  if (sc_store_get_run (store, run, &r->info, err) != SC_OK
      || sc_store_read_tokens (store, run, &r->tokens, &r->n_tokens, err) != SC_OK
      || sc_store_read_predictions (store, run, &r->pred, err) != SC_OK
      || (r->with_head && sc_store_read_head (store, run, r->layer, r->head, &h, err) != SC_OK))
    return FALSE;
  if (!r->with_head)
    return TRUE;
  r->n_query = h.n_query;
  if (h.dropped != NULL)
    r->dropped = g_memdup2 (h.dropped, h.n_query * sizeof (float));
  r->top = g_new (Ranked, (gsize) h.n_query * r->k);
  r->n_top = g_new (guint, h.n_query);
  for (guint i = 0; i < h.n_query; i++)
    r->n_top[i] = top_k (h.probs + (gsize) i * h.n_key, h.causal ? i + 1 : h.n_key,
                         (guint) r->k, r->top + (gsize) i * r->k);
  sc_store_head_clear (&h);
  return TRUE;
}

static void
show_print_json (const ShowResult *r)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  saccade_json_begin_object (b, "run");
  saccade_json_run (b, &r->info);
  json_builder_end_object (b);
  saccade_json_tokens (b, r->tokens, r->n_tokens);
  if (r->pred.n_positions > 0)
    {
      /* "next": after the last token; "predictions" (--predictions): after every one. */
      guint p0 = r->all_predictions ? 0 : r->pred.n_positions - 1;
      saccade_json_begin_array (b, r->all_predictions ? "predictions" : "next");
      for (guint p = p0; p < r->pred.n_positions; p++)
        {
          if (r->all_predictions)
            {
              json_builder_begin_object (b);
              saccade_json_int (b, "pos", (int) p);
              saccade_json_begin_array (b, "next");
            }
          for (guint k = 0; k < r->pred.k; k++)
            {
              const gsize i = (gsize) p * r->pred.k + k;
              g_autofree char *piece = saccade_token_label ((const char *) r->pred.pieces[i].piece,
                                                            r->pred.pieces[i].len);
              json_builder_begin_object (b);
              saccade_json_int (b, "id", r->pred.ids[i]);
              saccade_json_string (b, "token", piece);
              saccade_json_double (b, "probability", r->pred.probs[i]);
              saccade_json_double (b, "logit", r->pred.logits[i]);
              json_builder_end_object (b);
            }
          if (r->all_predictions)
            {
              json_builder_end_array (b);
              json_builder_end_object (b);
            }
        }
      json_builder_end_array (b);
    }
  if (r->with_head)
    {
      saccade_json_begin_object (b, "attention");
      saccade_json_head (b, r->layer, r->head);
      saccade_json_int (b, "kv_head", r->head / (int) (r->info.n_heads / r->info.n_kv_heads));
      saccade_json_begin_array (b, "queries");
      for (guint i = 0; i < r->n_query; i++)
        {
          json_builder_begin_object (b);
          saccade_json_int (b, "query", i);
          saccade_json_begin_array (b, "top");
          for (guint j = 0; j < r->n_top[i]; j++)
            {
              const Ranked *best = &r->top[(gsize) i * r->k + j];
              json_builder_begin_object (b);
              saccade_json_int (b, "key", best->key);
              saccade_json_double (b, "weight", best->w);
              json_builder_end_object (b);
            }
          json_builder_end_array (b);
          if (r->dropped != NULL)
            saccade_json_double (b, "dropped", r->dropped[i]);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_object (b);
  saccade_json_print (b);
}

static void
show_print_text (const ShowResult *r)
{
  const ScStoreRunInfo *info = &r->info;
  g_autofree char *when = saccade_format_time (info->created_ms, FALSE);
  g_autofree char *text = saccade_terminal_text (info->text, info->text_len);
  g_autofree char *size = saccade_store_cli_bytes (info->attention_bytes);
  g_autofree char *model = saccade_terminal_text (info->model_name, -1);
  g_autofree char *arch = saccade_terminal_text (info->model_arch, -1);
  g_autofree char *backend = saccade_terminal_text (info->backend, -1);
  g_auto (GStrv) labels = saccade_token_labels_for_store (r->tokens, r->n_tokens);

  printf ("Run %" G_GINT64_FORMAT ", %s: %s (%s, %u layers x %u heads), %s backend\n",
          info->id, when, model, arch, info->n_layers, info->n_heads, backend);
  if (info->forward_s >= 0)
    printf ("%u tokens, forward pass %.3f s, %s of attention\n", info->n_tokens,
            info->forward_s, size);
  else
    printf ("%u tokens, %s of attention\n", info->n_tokens, size);
  printf ("Text: %s\n", text);
  if (info->windows != NULL)
    {
      /* The local layers (a sliding window: docs/store.md, "Band heads"): their window
       * once when they share one (Gemma 3), else after each layer. */
      guint32 common = 0;
      gboolean same = TRUE;
      for (guint32 l = 0; l < info->n_layers; l++)
        if (info->windows[l] > 0)
          {
            same = same && (common == 0 || common == info->windows[l]);
            common = info->windows[l];
          }
      printf ("Local layers:");
      for (guint32 l = 0, first = 1; l < info->n_layers; l++)
        if (info->windows[l] > 0)
          {
            printf ("%s %u", first ? "" : ",", l);
            if (!same)
              printf (" (window %u)", info->windows[l]);
            first = 0;
          }
      if (same)
        printf (" (window %u)", common);
      printf (": a query there sees only its last window of keys\n");
    }
  printf ("\n");
  if (r->pred.n_positions > 0)
    {
      const guint last = r->pred.n_positions - 1;
      printf ("Next (after the last token):");
      for (guint k = 0; k < MIN (r->pred.k, SHOW_PREDICTIONS); k++)
        {
          const gsize i = (gsize) last * r->pred.k + k;
          g_autofree char *piece = saccade_token_label ((const char *) r->pred.pieces[i].piece,
                                                        r->pred.pieces[i].len);
          printf ("%s '%s' %.3f", k ? "," : "", piece, r->pred.probs[i]);
        }
      printf ("\n\n");
    }
  if (!r->with_head)
    {
      gboolean next = r->all_predictions && r->pred.n_positions > 0;
      printf ("  pos      id  piece%s\n", next ? "           predicted next" : "");
      for (size_t i = 0; i < r->n_tokens; i++)
        {
          if (!next)
            {
              printf ("%5zu %7d  '%s'\n", i, r->tokens[i].id, labels[i]);
              continue;
            }
          printf ("%5zu %7d  ", i, r->tokens[i].id);
          saccade_store_cli_print_padded (labels[i], 14);
          for (guint k = 0; k < MIN (r->pred.k, 3); k++)
            {
              const gsize j = i * r->pred.k + k;
              g_autofree char *piece = saccade_token_label (
                (const char *) r->pred.pieces[j].piece, r->pred.pieces[j].len);
              printf ("%s '%s' %.3f", k ? "," : " ->", piece, r->pred.probs[j]);
            }
          printf ("\n");
        }
      printf ("\n`saccade show %" G_GINT64_FORMAT " --layer L --head H` shows where each "
              "token attends.\n", info->id);
      return;
    }
  printf ("Layer %d head %d (KV head %u): for each query token, the %d most attended "
          "keys\n", r->layer, r->head, r->head / (info->n_heads / info->n_kv_heads), r->k);
  if (sc_store_run_layer_window (info, r->layer) > 0)
    printf ("Layer %d is local: each query sees its last %u keys, the earlier ones are "
            "masked\n", r->layer, sc_store_run_layer_window (info, r->layer));
  if (r->dropped != NULL)
    printf ("Stored sparse (EPS %g): each row kept the fewest keys holding at least 1 - EPS of "
            "its weight; the weight it dropped is shown after it\n", info->sparse_eps);
  {
    g_autofree char *rounded = saccade_run_rounding_label (info->round_bits, info->zero_below);
    if (rounded != NULL)
      printf ("Stored form: %s\n", rounded);
  }
  for (guint i = 0; i < r->n_query; i++)
    {
      printf ("%4u ", i);
      saccade_store_cli_print_padded (labels[i], 14);
      printf (" ->");
      for (guint j = 0; j < r->n_top[i]; j++)
        {
          const Ranked *best = &r->top[(gsize) i * r->k + j];
          printf ("%s %d '%s' %.3f", j ? "," : "", best->key, labels[best->key], best->w);
        }
      if (r->dropped != NULL)
        printf ("  (dropped %.2g)", r->dropped[i]);
      printf ("\n");
    }
}

int
saccade_cmd_show (int argc, char **argv)
{
  gboolean json = FALSE;
  g_autofree char *db_opt = NULL;
  int layer = -1, head = -1, k = 3;
  ShowResult r = { 0 };
  GOptionEntry entries[] = {
    SACCADE_STORE_CLI_DB_OPTION (&db_opt),
    { "layer", 'l', 0, G_OPTION_ARG_INT, &layer, "Show this layer's head (with --head)", "L" },
    { "head", 'H', 0, G_OPTION_ARG_INT, &head, "Show this head (with --layer)", "H" },
    { "top", 'k', 0, G_OPTION_ARG_INT, &k, "Keys per query token (default 3)", "K" },
    { "predictions", 'p', 0, G_OPTION_ARG_NONE, &r.all_predictions,
      "What the model predicted after every token (the top 3; --json: all stored), not only "
      "after the last", NULL },
    SACCADE_CLI_JSON_OPTION (&json),
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "RUN - a run's tokens and, with --layer and --head, where each token attends");
  g_autofree char *path = NULL;
  ScStore *store = NULL;
  ScError err = { 0 };
  gint64 run;
  int rc = 0;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!saccade_store_cli_parse_run (ctx, &argc, &argv, "show", &run))
    return 2;
  r.with_head = layer >= 0 || head >= 0;
  if (r.with_head && (layer < 0 || head < 0))
    {
      fprintf (stderr, "saccade: --layer and --head go together (both >= 0)\n");
      return 2;
    }
  if (k < 1)
    {
      fprintf (stderr, "saccade: --top must be at least 1\n");
      return 2;
    }
  r.layer = layer;
  r.head = head;
  r.k = k;
  path = saccade_db_path (db_opt);
  if ((store = saccade_store_open (path, FALSE, &err)) == NULL)
    return saccade_store_cli_fail (&err);
  if (!show_read (store, run, &r, &err))
    rc = saccade_store_cli_fail (&err);
  else if (json)
    show_print_json (&r);
  else
    show_print_text (&r);
  show_result_clear (&r);
  sc_store_close (store);
  return rc;
}
