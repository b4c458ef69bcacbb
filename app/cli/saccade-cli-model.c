/* saccade-cli-model.c — the model verbs: info, tokenize, generate, demo (capture and the
 * store's verbs are in saccade-cli-store.c).
 *
 * Each verb parses its options, loads the model, computes a result struct (InfoResult,
 * TokenizeResult, GenerateResult, DemoResult) and prints it as human-readable text or, with
 * --json, through the one JSON writer (app/core/saccade-json.h). Summaries of attention use
 * the definitions of docs/metrics.md (entropy in nats, sink mass = weight on position 0).
 */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/core/saccade-models.h"
#include "engine/format/sc-quant.h"
#include "engine/forward/sc-predict.h"
#include "ui/figures/saccade-token-label.h"

#define DEMO_SENTENCE "The cat chased the ball because it was tired."

/* Joins the remaining arguments as the text, or reads --file / stdin ("-"). */
static char *
text_from_args (int argc, char **argv, const char *file, gsize *len, GError **error)
{
  char *text;

  if (file != NULL)
    return saccade_cli_read_file (file, len, error);
  if (argc < 2)
    {
      g_set_error (error, SACCADE_ERROR, SC_ERR_INVALID_ARG,
                   "no text given: pass it as an argument, with -f FILE, or -f - for stdin");
      return NULL;
    }
  text = g_strjoinv (" ", argv + 1);
  *len = strlen (text);
  return text;
}

/* tokenize's and generate's start: their @entries, then the model verbs' options (@common),
 * parsed from @argc/@argv, then their text (text_from_args, *@file: the --file the entries
 * fill). NULL with *@status the exit status when either fails (2: bad options, 1: no text;
 * said on stderr). Caller frees. */
static char *
parse_text (GOptionContext *ctx, const GOptionEntry *entries, SaccadeCliCommon *common,
            int *argc, char ***argv, char *const *file, gsize *len, int *status)
{
  g_autoptr (GError) error = NULL;
  char *text;

  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, common);
  if (!saccade_cli_parse_options (ctx, argc, argv))
    {
      *status = 2;
      return NULL;
    }
  if ((text = text_from_args (*argc, *argv, *file, len, &error)) == NULL)
    *status = saccade_cli_fail (g_steal_pointer (&error));
  return text;
}

/* Token @id's bytes (at most 256: longer pieces are cut) into @buf; returns the length. */
static gsize
token_bytes (ScModel *model, int32_t id, char buf[256])
{
  size_t n = sc_token_to_bytes (sc_model_tokenizer (model), id, TRUE, buf, 256);
  return MIN (n, 256);
}

/* Token @id as members of @b's open object: "id", then its bytes (saccade_json_piece, the
 * hex first: tokenize's order, which demo shares). */
static void
json_token (JsonBuilder *b, ScModel *model, int32_t id)
{
  char buf[256];
  gsize n = token_bytes (model, id, buf);

  saccade_json_int (b, "id", id);
  saccade_json_piece (b, (const guint8 *) buf, n, SACCADE_JSON_HEX_FIRST);
}

/* Member "tokens": one object for each of @ids (int32_t), with its "pos" first when
 * @with_pos. */
static void
json_tokens (JsonBuilder *b, ScModel *model, const GArray *ids, gboolean with_pos)
{
  saccade_json_begin_array (b, "tokens");
  for (guint i = 0; i < ids->len; i++)
    {
      json_builder_begin_object (b);
      if (with_pos)
        saccade_json_int (b, "pos", i);
      json_token (b, model, g_array_index (ids, int32_t, i));
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

/* One token as the figures label it ("␣cat", "<0xE7>"); safe on a terminal. */
static char *
piece (ScModel *model, int32_t id)
{
  char buf[256];
  gsize n = token_bytes (model, id, buf);
  return saccade_token_label (buf, n);
}

/* The labels of a whole sequence of @ids, so that a character split across byte tokens is
 * named on each of its pieces ("<0xE7> (猫)"), as the window shows them. g_strfreev(). */
static char **
labels_of_ids (ScModel *model, const GArray *ids)
{
  g_autofree char *bytes = g_new (char, (gsize) ids->len * 256 + 1);
  g_autofree const char **pieces = g_new (const char *, ids->len + 1);
  g_autofree gsize *lens = g_new (gsize, ids->len + 1);

  for (guint i = 0; i < ids->len; i++)
    {
      pieces[i] = bytes + (gsize) i * 256;
      lens[i] = token_bytes (model, g_array_index (ids, int32_t, i), bytes + (gsize) i * 256);
    }
  return saccade_token_labels_new (pieces, lens, ids->len);
}

/* ------------------------------------------------------------------------------------ */
/* info                                                                                  */

typedef struct {
  const char *path;
  const ScModelInfo *in;     /* borrowed from the model */
  guint64 n_params;
  const char *weight_type;
  guint64 kv_bytes;          /* per token, fp16 keys and values */
  guint64 file_bytes;
  char *particulars;         /* saccade_model_particulars, or NULL (a plain llama block) */
  gboolean qkv_bias;
} InfoResult;

static void
info_compute (ScModel *model, const char *path, InfoResult *r)
{
  const ScTypeTraits *tr;

  r->path = path;
  r->in = sc_model_info (model);
  tr = sc_type_traits (r->in->main_type);
  r->n_params = sc_model_n_params (model);
  r->weight_type = tr != NULL ? tr->name : "unknown";
  r->kv_bytes = sc_model_kv_bytes_per_token (model, 2);
  r->particulars = saccade_model_particulars (model);
  r->qkv_bias = r->in->n_layers > 0 && sc_model_weights_packed (model)->layers[0].bq != NULL;
  r->file_bytes = sc_gguf_file_size (sc_model_gguf (model));
}

static void
info_print_json (const InfoResult *r)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  const ScModelInfo *in = r->in;

  json_builder_begin_object (b);
  saccade_json_string (b, "path", r->path);
  saccade_json_string (b, "name", in->name);
  saccade_json_string (b, "architecture", in->arch_name);
  saccade_json_int (b, "parameters", (gint64) r->n_params);
  saccade_json_int (b, "layers", in->n_layers);
  saccade_json_int (b, "embedding_length", in->n_embd);
  saccade_json_int (b, "heads", in->n_heads);
  saccade_json_int (b, "kv_heads", in->n_kv_heads);
  saccade_json_int (b, "head_dim", in->head_dim);
  saccade_json_int (b, "feed_forward_length", in->n_ff);
  saccade_json_int (b, "vocab_size", in->n_vocab);
  saccade_json_int (b, "context_length", in->n_ctx_train);
  /* GPT-2: learned absolute positions (no RoPE: rope_freq_base is then unused) */
  saccade_json_string (b, "positions", in->learned_positions ? "learned" : "rope");
  saccade_json_double (b, "rope_freq_base", in->rope_base);
  /* local (sliding-window) layers: 0 / empty for a model whose every layer is global */
  saccade_json_int (b, "sliding_window", in->sliding_window);
  saccade_json_double (b, "rope_freq_base_local", in->rope_base_local);
  json_builder_set_member_name (b, "global_layers");
  json_builder_begin_array (b);
  for (guint l = 0; in->sliding_window > 0 && l < in->n_layers; l++)
    if (sc_model_layer_window (in, (int) l) == 0)
      json_builder_add_int_value (b, l);
  json_builder_end_array (b);
  /* Llama 3's RoPE frequency factors (rope_freqs.weight), one a pair; empty for none */
  json_builder_set_member_name (b, "rope_freq_factors");
  json_builder_begin_array (b);
  for (guint c = 0; c < in->n_rope_freq; c++)
    json_builder_add_double_value (b, in->rope_freq[c]);
  json_builder_end_array (b);
  /* Gemma 2's soft-caps: 0 = none */
  saccade_json_double (b, "attn_logit_softcapping", in->attn_softcap);
  saccade_json_double (b, "final_logit_softcapping", in->final_softcap);
  saccade_json_string (b, "norm", in->layer_norm ? "layernorm" : "rmsnorm");
  saccade_json_double (b, in->layer_norm ? "layer_norm_eps" : "rms_norm_eps", in->norm_eps);
  saccade_json_bool (b, "tied_output", in->tied_output);
  saccade_json_bool (b, "qkv_bias", r->qkv_bias);
  saccade_json_double (b, "embedding_scale", in->embd_scale);
  if (r->particulars != NULL)
    saccade_json_string (b, "particulars", r->particulars);
  saccade_json_string (b, "weight_type", r->weight_type);
  saccade_json_int (b, "kv_cache_bytes_per_token_f16", (gint64) r->kv_bytes);
  saccade_json_int (b, "file_bytes", (gint64) r->file_bytes);
  json_builder_end_object (b);
  saccade_json_print (b);
}

static void
info_print_text (const InfoResult *r)
{
  const ScModelInfo *in = r->in;
  g_autofree char *name = saccade_terminal_text (in->name, -1);
  g_autofree char *path = saccade_terminal_text (r->path, -1);
  g_autofree char *arch = saccade_terminal_text (in->arch_name, -1);

  printf ("Model        %s\n", name);
  printf ("File         %s (%.1f MB)\n", path, r->file_bytes / 1e6);
  printf ("Architecture %s, %u layers, embedding %u, feed-forward %u\n", arch,
          in->n_layers, in->n_embd, in->n_ff);
  printf ("Attention    %u query heads over %u KV head%s (groups of %u%s), head dim %u, ",
          in->n_heads, in->n_kv_heads, in->n_kv_heads == 1 ? "" : "s",
          in->n_heads / in->n_kv_heads,
          in->n_kv_heads == 1 && in->n_heads > 1 ? ": multi-query" : "", in->head_dim);
  if (in->learned_positions)
    printf ("learned positions\n");
  else
    printf ("RoPE base %g\n", (double) in->rope_base);
  /* the local/global layers, as the window's model tooltip says them, are among these */
  if (r->particulars != NULL)
    {
      g_autofree char *shown = saccade_terminal_text (r->particulars, -1);
      printf ("Particulars  %s\n", shown);
    }
  printf ("Vocabulary   %u tokens; context %u; output %s\n", in->n_vocab, in->n_ctx_train,
          in->tied_output ? "tied to the embeddings" : "separate");
  printf ("Parameters   %" G_GUINT64_FORMAT " (%.1f M); weights %s\n", r->n_params,
          r->n_params / 1e6, r->weight_type);
  printf ("KV cache     %" G_GUINT64_FORMAT " bytes per token in fp16 "
          "(2 x %u layers x %u KV heads x %u dims x 2 bytes); %.1f MB at %u tokens\n",
          r->kv_bytes, in->n_layers, in->n_kv_heads, in->head_dim,
          r->kv_bytes * (double) in->n_ctx_train / 1e6, in->n_ctx_train);
}

int
saccade_cmd_info (int argc, char **argv)
{
  g_auto (SaccadeCliCommon) common = { 0 };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- describe a model");
  g_autoptr (GError) error = NULL;
  InfoResult r = { 0 };
  ScModel *model;

  saccade_cli_common_add (ctx, &common);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if ((model = saccade_cli_load_model (&common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  info_compute (model, saccade_cli_model_path (&common), &r);
  if (common.json)
    info_print_json (&r);
  else
    info_print_text (&r);
  g_free (r.particulars);
  sc_model_free (model);
  return 0;
}

/* ------------------------------------------------------------------------------------ */
/* tokenize                                                                              */

typedef struct {
  GArray *ids;               /* int32_t */
} TokenizeResult;

static void
tokenize_print_json (ScModel *model, const TokenizeResult *r)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  saccade_json_int (b, "n_tokens", r->ids->len);
  json_tokens (b, model, r->ids, FALSE);
  json_builder_end_object (b);
  saccade_json_print (b);
}

static void
tokenize_print_text (ScModel *model, const TokenizeResult *r, gboolean ids_only)
{
  g_auto (GStrv) labels = NULL;
  guint i;

  if (ids_only)
    {
      for (i = 0; i < r->ids->len; i++)
        printf ("%s%d", i ? " " : "", g_array_index (r->ids, int32_t, i));
      printf ("\n");
      return;
    }
  labels = labels_of_ids (model, r->ids);
  for (i = 0; i < r->ids->len; i++)
    printf ("%5u %7d  '%s'\n", i, g_array_index (r->ids, int32_t, i), labels[i]);
  printf ("%u tokens\n", r->ids->len);
}

int
saccade_cmd_tokenize (int argc, char **argv)
{
  g_auto (SaccadeCliCommon) common = { 0 };
  gboolean no_special = FALSE, ids_only = FALSE;
  g_autofree char *file = NULL;
  GOptionEntry entries[] = {
    { "no-parse-special", 0, 0, G_OPTION_ARG_NONE, &no_special,
      "Treat special-token text such as <|im_start|> as plain text", NULL },
    { "ids", 0, 0, G_OPTION_ARG_NONE, &ids_only, "Print only the ids, one line", NULL },
    { "file", 'f', 0, G_OPTION_ARG_FILENAME, &file, "Read the text from FILE (- = stdin)", "FILE" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("TEXT... - split text into tokens");
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL;
  TokenizeResult r = { 0 };
  ScModel *model;
  gsize len = 0;
  int status;

  if ((text = parse_text (ctx, entries, &common, &argc, &argv, &file, &len, &status)) == NULL)
    return status;
  if ((model = saccade_cli_load_model (&common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  if ((r.ids = saccade_tokenize (model, text, (gssize) len, !no_special, &error)) == NULL)
    {
      sc_model_free (model);
      return saccade_cli_fail (g_steal_pointer (&error));
    }
  if (common.json)
    tokenize_print_json (model, &r);
  else
    tokenize_print_text (model, &r, ids_only);
  g_array_unref (r.ids);
  sc_model_free (model);
  return 0;
}

/* ------------------------------------------------------------------------------------ */
/* generate                                                                              */

typedef struct {
  guint n_prompt;
  GArray *ids;               /* int32_t: the prompt's, then the generated ones */
  GString *text;             /* the generated tokens' bytes */
} GenerateResult;

/* What generate_token() needs. */
typedef struct {
  ScModel *model;
  GenerateResult *r;
  gboolean stream;           /* text mode: print each token as it comes */
} GenerateCtx;

/* ScTokenFn: appends the new token's bytes to the result (and prints them in text mode). */
static bool
generate_token (void *user, int32_t id, int n_done, int n_new)
{
  GenerateCtx *g = user;
  char buf[256];
  size_t n = MIN (sc_token_to_bytes (sc_model_tokenizer (g->model), id, FALSE, buf, sizeof buf),
                  sizeof buf);

  g_string_append_len (g->r->text, buf, (gssize) n);
  if (g->stream)
    {
      fwrite (buf, 1, n, stdout);
      fflush (stdout);
    }
  return true;
}

/* Greedy decoding of up to @n_new tokens after the prompt in @r->ids (which sets
 * @r->n_prompt), stopping at an end-of-generation token (engine/forward/sc-predict.h, as
 * `saccade capture --generate` does); appends to @r. */
static gboolean
generate_run (const SaccadeCliCommon *common, ScModel *model, int n_new, gboolean stream,
              GenerateResult *r, GError **error)
{
  GenerateCtx g = { model, r, stream };
  SaccadeCliSession s;
  ScError err = { 0 };
  int n = 0;
  gboolean ok;

  r->n_prompt = r->ids->len;
  if (!saccade_cli_session_open (&s, common, model, error))
    return FALSE;
  g_array_set_size (r->ids, r->n_prompt + (guint) n_new);
  ok = sc_generate_greedy (s.session, (int32_t *) r->ids->data, (int) r->n_prompt, n_new,
                           generate_token, NULL, &g, &n, &err) == SC_OK;
  g_array_set_size (r->ids, (guint) n);
  if (!ok)
    saccade_set_error_from_sc (error, &err);
  saccade_cli_session_close (&s);
  return ok;
}

static void
generate_print_json (const GenerateResult *r)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autofree char *valid = g_utf8_make_valid (r->text->str, (gssize) r->text->len);

  json_builder_begin_object (b);
  saccade_json_int (b, "prompt_tokens", r->n_prompt);
  saccade_json_begin_array (b, "generated_ids");
  for (guint j = r->n_prompt; j < r->ids->len; j++)
    json_builder_add_int_value (b, g_array_index (r->ids, int32_t, j));
  json_builder_end_array (b);
  saccade_json_string (b, "text", valid);
  json_builder_end_object (b);
  saccade_json_print (b);
}

int
saccade_cmd_generate (int argc, char **argv)
{
  g_auto (SaccadeCliCommon) common = { 0 };
  gboolean chat = FALSE;
  int n_new = 32;
  g_autofree char *file = NULL;
  GOptionEntry entries[] = {
    { "tokens", 'n', 0, G_OPTION_ARG_INT, &n_new, "New tokens to generate (default 32)", "N" },
    { "chat", 'c', 0, G_OPTION_ARG_NONE, &chat, "Wrap the text in the model's chat template",
      NULL },
    { "file", 'f', 0, G_OPTION_ARG_FILENAME, &file, "Read the prompt from FILE (- = stdin)",
      "FILE" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("PROMPT... - greedy continuation");
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL, *prompt = NULL;
  GenerateResult r = { 0 };
  ScModel *model;
  gsize len = 0, prompt_len = 0;
  int rc = 0, status;

  if ((text = parse_text (ctx, entries, &common, &argc, &argv, &file, &len, &status)) == NULL)
    return status;
  if (n_new < 0)
    {
      fprintf (stderr, "saccade: -n must be >= 0\n");
      return 2;
    }
  if ((model = saccade_cli_load_model (&common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  r.text = g_string_new (NULL);
  if (chat && (prompt = saccade_chat_prompt (model, text, (gssize) len, &prompt_len, &error))
                  == NULL)
    rc = saccade_cli_fail (g_steal_pointer (&error));
  else if ((r.ids = saccade_tokenize (model, chat ? prompt : text,
                                      (gssize) (chat ? prompt_len : len), TRUE, &error)) == NULL)
    rc = saccade_cli_fail (g_steal_pointer (&error));
  else if (!generate_run (&common, model, n_new, !common.json, &r, &error))
    rc = saccade_cli_fail (g_steal_pointer (&error));
  else if (common.json)
    generate_print_json (&r);
  else
    printf ("\n");
  g_clear_pointer (&r.ids, g_array_unref);
  g_string_free (r.text, TRUE);
  sc_model_free (model);
  return rc;
}

/* ------------------------------------------------------------------------------------ */
/* demo                                                                                  */

#define DEMO_TOP 5

typedef struct {
  GArray *ids;                   /* int32_t */
  SaccadeHeadStatsTable stats;   /* every head */
  double seconds;                /* the forward pass */
  int n_top;                     /* DEMO_TOP, or fewer for a smaller vocabulary */
  int32_t top[DEMO_TOP];         /* the most likely next tokens, best first */
  double top_pct[DEMO_TOP];      /* their softmax probabilities, in per cent */
  char *backend;                 /* the backend's name ("cpu", "cuda") */
} DemoResult;

/* Runs the model once on @text and fills @r's ids, stats and time, and @logits (the last
 * position's). */
static gboolean
demo_forward (const SaccadeCliCommon *common, ScModel *model, const char *text, DemoResult *r,
              float *logits, GError **error)
{
  const ScModelInfo *in = sc_model_info (model);
  ScObserver obs = { NULL, saccade_head_stats_table_observe, &r->stats };
  ScForwardOptions opt = { .observer = &obs };
  ScBackend *backend;
  ScSession *session = NULL;
  ScError err = { 0 };
  gboolean ok;
  gint64 t0;

  if ((r->ids = saccade_tokenize (model, text, -1, TRUE, error)) == NULL)
    return FALSE;
  saccade_head_stats_table_init (&r->stats, (int) in->n_layers, (int) in->n_heads);
  if ((backend = saccade_cli_backend (common, error)) == NULL)
    return FALSE;
  r->backend = g_strdup (sc_backend_name (backend));
  t0 = g_get_monotonic_time ();
  ok = sc_session_new (model, backend, &session, &err) == SC_OK
       && sc_forward (session, (const int32_t *) r->ids->data, (int) r->ids->len, &opt, logits,
                      &err) == SC_OK;
  r->seconds = (g_get_monotonic_time () - t0) / 1e6;
  if (!ok)
    saccade_set_error_from_sc (error, &err);
  sc_session_free (session);
  sc_backend_free (backend);
  return ok;
}

/* The DEMO_TOP most likely tokens of @logits (@n_vocab) by softmax probability. */
static void
demo_top (const float *logits, int n_vocab, DemoResult *r)
{
  double max = -INFINITY, z = 0.0;
  int j, k, m;

  for (k = 0; k < n_vocab; k++)
    max = fmax (max, logits[k]);
  for (k = 0; k < n_vocab; k++)
    z += exp (logits[k] - max);
  r->n_top = MIN (DEMO_TOP, n_vocab);
  for (k = 0; k < r->n_top; k++)
    {
      int best = -1;
      for (j = 0; j < n_vocab; j++)
        {
          gboolean taken = FALSE;
          for (m = 0; m < k; m++)
            taken |= r->top[m] == j;
          if (!taken && (best < 0 || logits[j] > logits[best]))
            best = j;
        }
      r->top[k] = best;
      r->top_pct[k] = 100.0 * exp (logits[best] - max) / z;
    }
}

/* Layer @l's summary of the last token's attention: mean entropy and sink over its heads,
 * and the head whose top weight is the largest. */
static void
demo_layer (const SaccadeHeadStatsTable *s, int l, double *entropy, double *sink, int *best)
{
  *entropy = *sink = 0.0;
  *best = 0;
  for (int h = 0; h < s->n_heads; h++)
    {
      const ScHeadStats *st = saccade_head_stats_table_get (s, l, h);
      *entropy += st->last_entropy;
      *sink += st->sink;
      if (st->last_top_weight > saccade_head_stats_table_get (s, l, *best)->last_top_weight)
        *best = h;
    }
  *entropy /= s->n_heads;
  *sink /= s->n_heads;
}

static void
demo_print_json (ScModel *model, const SaccadeCliCommon *common, const char *text,
                 const DemoResult *r)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  const SaccadeHeadStatsTable *s = &r->stats;
  const ScModelInfo *in = sc_model_info (model);

  json_builder_begin_object (b);
  saccade_json_string (b, "version", SACCADE_VERSION);
  saccade_json_begin_object (b, "model");
  saccade_json_string (b, "name", in->name);
  saccade_json_string (b, "path", saccade_cli_model_path (common));
  saccade_json_string (b, "architecture", in->arch_name);
  saccade_json_int (b, "layers", in->n_layers);
  saccade_json_int (b, "heads", in->n_heads);
  json_builder_end_object (b);
  saccade_json_string (b, "backend", r->backend);
  saccade_json_begin_object (b, "text");
  saccade_json_piece (b, (const guint8 *) text, strlen (text), SACCADE_JSON_PIECE_FIRST);
  json_builder_end_object (b);
  json_tokens (b, model, r->ids, TRUE);
  saccade_json_int (b, "heads_captured", (gint64) s->n_layers * s->n_heads);
  saccade_json_double (b, "forward_seconds", r->seconds);
  saccade_json_begin_array (b, "next_tokens");
  for (int k = 0; k < r->n_top; k++)
    {
      json_builder_begin_object (b);
      json_token (b, model, r->top[k]);
      saccade_json_double (b, "probability", r->top_pct[k] / 100.0);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  /* The text form's table: the last token's attention per layer (docs/metrics.md). */
  saccade_json_begin_array (b, "layers");
  for (int l = 0; l < s->n_layers; l++)
    {
      double entropy, sink;
      int best;
      const ScHeadStats *st;
      demo_layer (s, l, &entropy, &sink, &best);
      st = saccade_head_stats_table_get (s, l, best);
      json_builder_begin_object (b);
      saccade_json_int (b, "layer", l);
      saccade_json_double (b, "last_entropy_mean", entropy);
      saccade_json_double (b, "sink_mean", sink);
      saccade_json_int (b, "focused_head", best);
      saccade_json_int (b, "focused_key", st->last_top);
      saccade_json_double (b, "focused_weight", st->last_top_weight);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  saccade_json_print (b);
}

static void
demo_print (ScModel *model, const char *text, const DemoResult *r)
{
  const SaccadeHeadStatsTable *s = &r->stats;
  g_autofree char *name = saccade_terminal_text (sc_model_info (model)->name, -1);
  g_autofree char *shown = saccade_terminal_text (text, -1);
  g_auto (GStrv) labels = labels_of_ids (model, r->ids);
  g_autofree char *backend = g_ascii_strup (r->backend, -1);
  int l, k;

  printf ("Saccade %s — %s on %s\n\n", SACCADE_VERSION, name, backend);
  printf ("Text: %s\n%u tokens:", shown, r->ids->len);
  for (guint i = 0; i < r->ids->len; i++)
    printf (" [%s]", labels[i]);
  printf ("\nForward pass with all %d heads captured: %.3f s\n\n", s->n_layers * s->n_heads,
          r->seconds);
  printf ("Next token, top %d:\n", r->n_top);
  for (k = 0; k < r->n_top; k++)
    {
      g_autofree char *p = piece (model, r->top[k]);
      printf ("  %5.1f%%  '%s'\n", r->top_pct[k], p);
    }

  printf ("\nAttention of the last token, per layer (mean entropy over heads in nats; the most "
          "focused head and where it looks):\n");
  for (l = 0; l < s->n_layers; l++)
    {
      double ent, sink;
      int best;
      const ScHeadStats *st;
      demo_layer (s, l, &ent, &sink, &best);
      st = saccade_head_stats_table_get (s, l, best);
      printf ("  layer %2d  entropy %.2f  sink %.2f  head %d -> '%s' (%.2f)\n", l, ent, sink,
              best, labels[st->last_top], st->last_top_weight);
    }
}

int
saccade_cmd_demo (int argc, char **argv)
{
  g_auto (SaccadeCliCommon) common = { 0 };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("[TEXT...] - a first look at a model");
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree float *logits = NULL;
  DemoResult r = { 0 };
  ScModel *model;
  int rc = 0;

  saccade_cli_common_add (ctx, &common);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  text = argc > 1 ? g_strjoinv (" ", argv + 1) : g_strdup (DEMO_SENTENCE);
  if ((model = saccade_cli_load_model (&common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  logits = g_new (float, sc_model_info (model)->n_vocab);
  if (!demo_forward (&common, model, text, &r, logits, &error))
    rc = saccade_cli_fail (g_steal_pointer (&error));
  else
    {
      demo_top (logits, (int) sc_model_info (model)->n_vocab, &r);
      if (common.json)
        demo_print_json (model, &common, text, &r);
      else
        demo_print (model, text, &r);
    }
  g_free (r.backend);
  g_clear_pointer (&r.ids, g_array_unref);
  saccade_head_stats_table_clear (&r.stats);
  sc_model_free (model);
  return rc;
}
