/* saccade-cli-model.c — the model verbs: info, tokenize, generate, demo (capture and the
 * store's verbs are in saccade-cli-store.c).
 *
 * Each verb parses its options, loads the model, calls the engine and prints either
 * human-readable text or JSON. Summaries of attention use the definitions of
 * docs/metrics.md (entropy in nats, sink mass = weight on position 0).
 */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/format/sc-quant.h"

#define DEMO_SENTENCE "The cat chased the ball because it was tired."

/* Joins the remaining arguments as the text, or reads --file / stdin ("-"). */
static char *
text_from_args (int argc, char **argv, const char *file, gsize *len, GError **error)
{
  char *text = NULL;

  if (file != NULL)
    {
      if (strcmp (file, "-") == 0)
        {
          GString *s = g_string_new (NULL);
          char buf[4096];
          size_t n;
          while ((n = fread (buf, 1, sizeof buf, stdin)) > 0)
            g_string_append_len (s, buf, (gssize) n);
          *len = s->len;
          return g_string_free (s, FALSE);
        }
      if (!g_file_get_contents (file, &text, len, error))
        return NULL;
      return text;
    }
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

static char *
piece (ScModel *model, int32_t id)
{
  char buf[256];
  size_t n = sc_token_to_bytes (sc_model_tokenizer (model), id, TRUE, buf, sizeof buf);
  return saccade_token_display (buf, MIN (n, sizeof buf));
}

static void
json_add_piece_bytes (JsonBuilder *b, ScModel *model, int32_t id)
{
  char buf[256];
  size_t n = sc_token_to_bytes (sc_model_tokenizer (model), id, TRUE, buf, sizeof buf);
  g_autofree char *hex = g_malloc (2 * MIN (n, sizeof buf) + 1);
  size_t i;

  for (i = 0; i < MIN (n, sizeof buf); i++)
    sprintf (hex + 2 * i, "%02x", (unsigned char) buf[i]);
  hex[2 * i] = '\0';
  json_builder_set_member_name (b, "bytes_hex");
  json_builder_add_string_value (b, hex);
  if (g_utf8_validate (buf, (gssize) MIN (n, sizeof buf), NULL))
    {
      g_autofree char *s = g_strndup (buf, MIN (n, sizeof buf));
      json_builder_set_member_name (b, "piece");
      json_builder_add_string_value (b, s);
    }
}

/* ------------------------------------------------------------------------------------ */

int
saccade_cmd_info (int argc, char **argv)
{
  SaccadeCliCommon common = { 0 };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- describe a model");
  g_autoptr (GError) error = NULL;
  const ScModelInfo *in;
  const ScTypeTraits *tr;
  ScModel *model;
  uint64_t kv;

  saccade_cli_common_add (ctx, &common);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if ((model = saccade_cli_load_model (&common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  in = sc_model_info (model);
  tr = sc_type_traits (in->main_type);
  kv = sc_model_kv_bytes_per_token (model, 2);

  if (common.json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      json_builder_begin_object (b);
#define S(k, v) (json_builder_set_member_name (b, k), json_builder_add_string_value (b, v))
#define JI(k, v) (json_builder_set_member_name (b, k), json_builder_add_int_value (b, (gint64) (v)))
#define JD(k, v) (json_builder_set_member_name (b, k), json_builder_add_double_value (b, v))
      S ("path", saccade_cli_model_path (&common));
      S ("name", in->name);
      S ("architecture", in->arch_name);
      JI ("parameters", sc_model_n_params (model));
      JI ("layers", in->n_layers);
      JI ("embedding_length", in->n_embd);
      JI ("heads", in->n_heads);
      JI ("kv_heads", in->n_kv_heads);
      JI ("head_dim", in->head_dim);
      JI ("feed_forward_length", in->n_ff);
      JI ("vocab_size", in->n_vocab);
      JI ("context_length", in->n_ctx_train);
      JD ("rope_freq_base", in->rope_base);
      JD ("rms_norm_eps", in->norm_eps);
      json_builder_set_member_name (b, "tied_output");
      json_builder_add_boolean_value (b, in->tied_output);
      S ("weight_type", tr != NULL ? tr->name : "unknown");
      JI ("kv_cache_bytes_per_token_f16", kv);
      JI ("file_bytes", sc_gguf_file_size (sc_model_gguf (model)));
#undef S
#undef JI
#undef JD
      json_builder_end_object (b);
      saccade_cli_print_json (b);
    }
  else
    {
      printf ("Model        %s\n", in->name);
      printf ("File         %s (%.1f MB)\n", saccade_cli_model_path (&common),
              sc_gguf_file_size (sc_model_gguf (model)) / 1e6);
      printf ("Architecture %s, %u layers, embedding %u, feed-forward %u\n", in->arch_name,
              in->n_layers, in->n_embd, in->n_ff);
      printf ("Attention    %u query heads over %u KV heads (groups of %u), head dim %u, "
              "RoPE base %g\n", in->n_heads, in->n_kv_heads, in->n_heads / in->n_kv_heads,
              in->head_dim, (double) in->rope_base);
      printf ("Vocabulary   %u tokens; context %u; output %s\n", in->n_vocab, in->n_ctx_train,
              in->tied_output ? "tied to the embeddings" : "separate");
      printf ("Parameters   %" G_GUINT64_FORMAT " (%.1f M); weights %s\n",
              sc_model_n_params (model), sc_model_n_params (model) / 1e6,
              tr != NULL ? tr->name : "unknown");
      printf ("KV cache     %" G_GUINT64_FORMAT " bytes per token in fp16 "
              "(2 x %u layers x %u KV heads x %u dims x 2 bytes); %.1f MB at %u tokens\n", kv,
              in->n_layers, in->n_kv_heads, in->head_dim, kv * (double) in->n_ctx_train / 1e6,
              in->n_ctx_train);
    }
  sc_model_free (model);
  return 0;
}

int
saccade_cmd_tokenize (int argc, char **argv)
{
  SaccadeCliCommon common = { 0 };
  gboolean no_special = FALSE, ids_only = FALSE;
  char *file = NULL;
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
  g_autoptr (GArray) ids = NULL;
  ScModel *model;
  gsize len = 0;
  guint i;

  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &common);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if ((text = text_from_args (argc, argv, file, &len, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  if ((model = saccade_cli_load_model (&common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  if ((ids = saccade_tokenize (model, text, (gssize) len, !no_special, &error)) == NULL)
    {
      sc_model_free (model);
      return saccade_cli_fail (g_steal_pointer (&error));
    }
  if (common.json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "n_tokens");
      json_builder_add_int_value (b, ids->len);
      json_builder_set_member_name (b, "tokens");
      json_builder_begin_array (b);
      for (i = 0; i < ids->len; i++)
        {
          int32_t id = g_array_index (ids, int32_t, i);
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "id");
          json_builder_add_int_value (b, id);
          json_add_piece_bytes (b, model, id);
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      json_builder_end_object (b);
      saccade_cli_print_json (b);
    }
  else if (ids_only)
    {
      for (i = 0; i < ids->len; i++)
        printf ("%s%d", i ? " " : "", g_array_index (ids, int32_t, i));
      printf ("\n");
    }
  else
    {
      for (i = 0; i < ids->len; i++)
        {
          g_autofree char *p = piece (model, g_array_index (ids, int32_t, i));
          printf ("%5u %7d  '%s'\n", i, g_array_index (ids, int32_t, i), p);
        }
      printf ("%u tokens\n", ids->len);
    }
  sc_model_free (model);
  return 0;
}

/* Index of the largest logit. */
static int32_t
argmax (const float *x, int n)
{
  int32_t best = 0;
  int i;

  for (i = 1; i < n; i++)
    if (x[i] > x[best])
      best = i;
  return best;
}

int
saccade_cmd_generate (int argc, char **argv)
{
  SaccadeCliCommon common = { 0 };
  gboolean chat = FALSE;
  int n_new = 32;
  char *file = NULL;
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
  g_autoptr (GArray) ids = NULL;
  g_autoptr (GString) out = g_string_new (NULL);
  g_autofree float *logits = NULL;
  ScBackend *backend = NULL;
  ScSession *session = NULL;
  ScModel *model;
  ScError err = { 0 };
  gsize len = 0;
  guint n_prompt;
  int i, rc = 0;

  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &common);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if ((text = text_from_args (argc, argv, file, &len, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  if (n_new < 0)
    {
      fprintf (stderr, "saccade: -n must be >= 0\n");
      return 2;
    }
  if ((model = saccade_cli_load_model (&common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  if (chat && (prompt = saccade_chat_prompt (model, text, &error)) == NULL)
    goto error;
  if ((ids = saccade_tokenize (model, chat ? prompt : text, chat ? -1 : (gssize) len, TRUE,
                                   &error)) == NULL)
    goto error;
  n_prompt = ids->len;
  if ((backend = saccade_cli_backend (&common, &error)) == NULL)
    goto error;
  if (sc_session_new (model, backend, &session, &err) != SC_OK)
    goto sc_error;
  logits = g_new (float, sc_model_info (model)->n_vocab);

  for (i = 0; i < n_new; i++)
    {
      int32_t next;
      char buf[256];
      size_t n;

      /* The first step runs the prompt; each later one only the newest token, against
       * the keys and values the session kept (KV cache). */
      ScForwardOptions opt = { .keep_kv = TRUE, .n_past = i == 0 ? 0 : (int) ids->len - 1 };

      if (sc_forward (session, (const int32_t *) ids->data, (int) ids->len, &opt, logits, &err)
          != SC_OK)
        goto sc_error;
      next = argmax (logits, (int) sc_model_info (model)->n_vocab);
      if (sc_tokenizer_is_eog (sc_model_tokenizer (model), next))
        break;
      g_array_append_val (ids, next);
      n = sc_token_to_bytes (sc_model_tokenizer (model), next, FALSE, buf, sizeof buf);
      g_string_append_len (out, buf, (gssize) MIN (n, sizeof buf));
      if (!common.json)
        {
          fwrite (buf, 1, MIN (n, sizeof buf), stdout);
          fflush (stdout);
        }
    }
  if (common.json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      guint j;
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "prompt_tokens");
      json_builder_add_int_value (b, n_prompt);
      json_builder_set_member_name (b, "generated_ids");
      json_builder_begin_array (b);
      for (j = n_prompt; j < ids->len; j++)
        json_builder_add_int_value (b, g_array_index (ids, int32_t, j));
      json_builder_end_array (b);
      json_builder_set_member_name (b, "text");
      {
        g_autofree char *valid = g_utf8_make_valid (out->str, (gssize) out->len);
        json_builder_add_string_value (b, valid);
      }
      json_builder_end_object (b);
      saccade_cli_print_json (b);
    }
  else
    printf ("\n");
  goto done;

sc_error:
  saccade_set_error_from_sc (&error, &err);
error:
  fprintf (stderr, "saccade: %s\n", error->message);
  rc = 1;
done:
  sc_session_free (session);
  sc_backend_free (backend);
  sc_model_free (model);
  return rc;
}

/* Runs the model once on @text and fills @s and the last position's @logits. */
static gboolean
run_with_summary (const SaccadeCliCommon *common, ScModel *model, const char *text, gssize len,
                  gboolean parse_special, GArray **ids_out, SaccadeHeadStatsTable *s, float *logits,
                  double *seconds, GError **error)
{
  const ScModelInfo *in = sc_model_info (model);
  ScObserver obs = { NULL, saccade_head_stats_table_observe, s };
  ScForwardOptions opt = { .observer = &obs };
  ScBackend *backend;
  ScSession *session = NULL;
  ScError err = { 0 };
  GArray *ids;
  gint64 t0;

  if ((ids = saccade_tokenize (model, text, len, parse_special, error)) == NULL)
    return FALSE;
  saccade_head_stats_table_init (s, (int) in->n_layers, (int) in->n_heads);
  if ((backend = saccade_cli_backend (common, error)) == NULL)
    {
      g_array_unref (ids);
      return FALSE;
    }
  t0 = g_get_monotonic_time ();
  if (sc_session_new (model, backend, &session, &err) != SC_OK
      || sc_forward (session, (const int32_t *) ids->data, (int) ids->len, &opt, logits, &err)
             != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      sc_session_free (session);
      sc_backend_free (backend);
      g_array_unref (ids);
      return FALSE;
    }
  *seconds = (g_get_monotonic_time () - t0) / 1e6;
  sc_session_free (session);
  sc_backend_free (backend);
  *ids_out = ids;
  return TRUE;
}

int
saccade_cmd_demo (int argc, char **argv)
{
  SaccadeCliCommon common = { 0 };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("[TEXT...] - a first look at a model");
  g_autoptr (GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree float *logits = NULL;
  g_autoptr (GArray) ids = NULL;
  SaccadeHeadStatsTable s = { 0 };
  const ScModelInfo *in;
  ScModel *model;
  double secs, max = -INFINITY, z = 0.0;
  int l, h, k, top[5] = { 0 };
  guint i;

  saccade_cli_common_add (ctx, &common);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  text = argc > 1 ? g_strjoinv (" ", argv + 1) : g_strdup (DEMO_SENTENCE);
  if ((model = saccade_cli_load_model (&common, &error)) == NULL)
    return saccade_cli_fail (g_steal_pointer (&error));
  in = sc_model_info (model);
  logits = g_new (float, in->n_vocab);
  if (!run_with_summary (&common, model, text, -1, TRUE, &ids, &s, logits, &secs, &error))
    {
      sc_model_free (model);
      return saccade_cli_fail (g_steal_pointer (&error));
    }

  printf ("Saccade %s — %s on %s\n\n", SACCADE_VERSION, in->name, "CPU");
  printf ("Text: %s\n%u tokens:", text, ids->len);
  for (i = 0; i < ids->len; i++)
    {
      g_autofree char *p = piece (model, g_array_index (ids, int32_t, i));
      printf (" [%s]", p);
    }
  printf ("\nForward pass with all %d heads captured: %.3f s\n\n", s.n_layers * s.n_heads, secs);

  /* next-token top-5 by softmax probability */
  for (k = 0; k < (int) in->n_vocab; k++)
    max = fmax (max, logits[k]);
  for (k = 0; k < (int) in->n_vocab; k++)
    z += exp (logits[k] - max);
  for (k = 0; k < 5; k++)
    {
      int j, best = -1;
      for (j = 0; j < (int) in->n_vocab; j++)
        {
          int m;
          gboolean taken = FALSE;
          for (m = 0; m < k; m++)
            taken |= top[m] == j;
          if (!taken && (best < 0 || logits[j] > logits[best]))
            best = j;
        }
      top[k] = best;
    }
  printf ("Next token, top 5:\n");
  for (k = 0; k < 5; k++)
    {
      g_autofree char *p = piece (model, top[k]);
      printf ("  %5.1f%%  '%s'\n", 100.0 * exp (logits[top[k]] - max) / z, p);
    }

  printf ("\nAttention of the last token, per layer (mean entropy over heads in nats; the most "
          "focused head and where it looks):\n");
  for (l = 0; l < s.n_layers; l++)
    {
      double ent = 0.0, sink = 0.0;
      int best = 0;
      for (h = 0; h < s.n_heads; h++)
        {
          const ScHeadStats *st = saccade_head_stats_table_get (&s, l, h);
          ent += st->last_entropy;
          sink += st->sink;
          if (st->last_top_weight > saccade_head_stats_table_get (&s, l, best)->last_top_weight)
            best = h;
        }
      {
        const ScHeadStats *st = saccade_head_stats_table_get (&s, l, best);
        g_autofree char *p = piece (model, g_array_index (ids, int32_t, st->last_top));
        printf ("  layer %2d  entropy %.2f  sink %.2f  head %d -> '%s' (%.2f)\n", l,
                ent / s.n_heads, sink / s.n_heads, best, p, st->last_top_weight);
      }
    }
  saccade_head_stats_table_clear (&s);
  sc_model_free (model);
  return 0;
}
