/* saccade-cli-show.c — the capture store's reading verbs: show (a run's tokens and, for one
 * head, each token's most attended keys) and export (one head as CSV, .npy or JSON, or a
 * figure — heatmap, grid or lines — as PNG, SVG or PDF through the renderers the window
 * uses). Both read through a read-only store, so they work beside a running capture and on
 * databases in read-only folders.
 */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli-store.h"

#include "ui/figures/saccade-figure.h"
#include "ui/figures/saccade-token-label.h"

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

int
saccade_cmd_show (int argc, char **argv)
{
  gboolean json = FALSE;
  char *db_opt = NULL;
  int layer = -1, head = -1, k = 3;
  GOptionEntry entries[] = {
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &db_opt,
      "Capture database (default: $XDG_DATA_HOME/saccade/captures.sqlite)", "FILE" },
    { "layer", 'l', 0, G_OPTION_ARG_INT, &layer, "Show this layer's head (with --head)", "L" },
    { "head", 'H', 0, G_OPTION_ARG_INT, &head, "Show this head (with --layer)", "H" },
    { "top", 'k', 0, G_OPTION_ARG_INT, &k, "Keys per query token (default 3)", "K" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Print JSON", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "RUN - a run's tokens and, with --layer and --head, where each token attends");
  g_autofree char *path = NULL;
  ScStoreRunInfo info = { 0 };
  ScStoreToken *tokens = NULL;
  ScStoreHead h = { 0 };
  ScStore *store = NULL;
  ScError err = { 0 };
  size_t n = 0, i;
  gint64 run;
  gboolean with_head;
  int rc = 0;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if (argc != 2)
    {
      fprintf (stderr, "saccade: show takes one run id (see `saccade runs`)\n");
      return 2;
    }
  if (!saccade_store_cli_run_id (argv[1], &run))
    return 2;
  with_head = layer >= 0 || head >= 0;
  if (with_head && (layer < 0 || head < 0))
    {
      fprintf (stderr, "saccade: --layer and --head go together (both >= 0)\n");
      return 2;
    }
  if (k < 1)
    {
      fprintf (stderr, "saccade: --top must be at least 1\n");
      return 2;
    }
  path = saccade_db_path (db_opt);
  if ((store = saccade_store_open (path, FALSE, &err)) == NULL)
    return saccade_store_cli_fail (&err);
  if (sc_store_get_run (store, run, &info, &err) != SC_OK
      || sc_store_read_tokens (store, run, &tokens, &n, &err) != SC_OK
      || (with_head && sc_store_read_head (store, run, layer, head, &h, &err) != SC_OK))
    {
      rc = saccade_store_cli_fail (&err);
      goto out;
    }

  if (json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      g_autofree Ranked *best = g_new (Ranked, k);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "run");
      json_builder_begin_object (b);
      saccade_store_cli_json_run (b, &info);
      json_builder_end_object (b);
      saccade_store_cli_json_tokens (b, tokens, n);
      if (with_head)
        {
          json_builder_set_member_name (b, "attention");
          json_builder_begin_object (b);
          json_builder_set_member_name (b, "layer");
          json_builder_add_int_value (b, layer);
          json_builder_set_member_name (b, "head");
          json_builder_add_int_value (b, head);
          json_builder_set_member_name (b, "kv_head");
          json_builder_add_int_value (b, head / (int) (info.n_heads / info.n_kv_heads));
          json_builder_set_member_name (b, "queries");
          json_builder_begin_array (b);
          for (i = 0; i < h.n_query; i++)
            {
              guint m = top_k (h.probs + i * h.n_key, h.causal ? (guint) i + 1 : h.n_key,
                               (guint) k, best);
              json_builder_begin_object (b);
              json_builder_set_member_name (b, "query");
              json_builder_add_int_value (b, (gint64) i);
              json_builder_set_member_name (b, "top");
              json_builder_begin_array (b);
              for (guint j = 0; j < m; j++)
                {
                  json_builder_begin_object (b);
                  json_builder_set_member_name (b, "key");
                  json_builder_add_int_value (b, best[j].key);
                  json_builder_set_member_name (b, "weight");
                  json_builder_add_double_value (b, best[j].w);
                  json_builder_end_object (b);
                }
              json_builder_end_array (b);
              json_builder_end_object (b);
            }
          json_builder_end_array (b);
          json_builder_end_object (b);
        }
      json_builder_end_object (b);
      saccade_cli_print_json (b);
    }
  else
    {
      g_autofree char *when = saccade_store_cli_time (info.created_ms, FALSE);
      g_autofree char *text = saccade_token_display (info.text, info.text_len);
      g_autofree char *size = saccade_store_cli_bytes (info.attention_bytes);
      printf ("Run %" G_GINT64_FORMAT ", %s: %s (%s, %u layers x %u heads), %s backend\n",
              info.id, when, info.model_name, info.model_arch, info.n_layers, info.n_heads,
              info.backend);
      if (info.forward_s >= 0)
        printf ("%u tokens, forward pass %.3f s, %s of attention\n", info.n_tokens,
                info.forward_s, size);
      else
        printf ("%u tokens, %s of attention\n", info.n_tokens, size);
      printf ("Text: %s\n\n", text);
      if (!with_head)
        {
          printf ("  pos      id  piece\n");
          for (i = 0; i < n; i++)
            {
              g_autofree char *p = saccade_store_cli_piece (&tokens[i]);
              printf ("%5zu %7d  '%s'\n", i, tokens[i].id, p);
            }
          printf ("\n`saccade show %" G_GINT64_FORMAT " --layer L --head H` shows where each "
                  "token attends.\n", run);
        }
      else
        {
          g_autofree Ranked *best = g_new (Ranked, k);
          printf ("Layer %d head %d (KV head %u): for each query token, the %d most attended "
                  "keys\n", layer, head, head / (info.n_heads / info.n_kv_heads), k);
          for (i = 0; i < h.n_query; i++)
            {
              g_autofree char *q = saccade_store_cli_piece (&tokens[i]);
              guint m = top_k (h.probs + i * h.n_key, h.causal ? (guint) i + 1 : h.n_key,
                               (guint) k, best);
              printf ("%4zu ", i);
              saccade_store_cli_print_padded (q, 14);
              printf (" ->");
              for (guint j = 0; j < m; j++)
                {
                  g_autofree char *key = saccade_store_cli_piece (&tokens[best[j].key]);
                  printf ("%s %d '%s' %.3f", j ? "," : "", best[j].key, key, best[j].w);
                }
              printf ("\n");
            }
        }
    }
out:
  sc_store_head_clear (&h);
  sc_store_tokens_free (tokens);
  sc_store_run_info_clear (&info);
  sc_store_close (store);
  return rc;
}

/* ------------------------------------------------------------------------------------ */
/* export                                                                                */

typedef enum {
  FORMAT_CSV,
  FORMAT_NPY,
  FORMAT_JSON,
} ExportFormat;

/* RFC 4180: quote a field that holds a comma, quote, CR/LF or leading/trailing space. */
static void
csv_field (GString *out, const char *s)
{
  gboolean quote = strpbrk (s, ",\"\r\n") != NULL || *s == ' '
                   || (*s != '\0' && s[strlen (s) - 1] == ' ');
  if (!quote)
    {
      g_string_append (out, s);
      return;
    }
  g_string_append_c (out, '"');
  for (; *s != '\0'; s++)
    {
      if (*s == '"')
        g_string_append_c (out, '"');
      g_string_append_c (out, *s);
    }
  g_string_append_c (out, '"');
}

/* A labelled matrix: the first row names the keys, the first column the queries, as
 * "pos:piece"; values to 9 significant digits (exact for every stored fp16). Loads with
 * pandas.read_csv (f, index_col=0) or numpy.loadtxt (f, delimiter=',', skiprows=1,
 * usecols=range (1, n + 1)). */
static GBytes *
export_csv (const ScStoreHead *h, const ScStoreToken *tokens)
{
  GString *out = g_string_new ("query\\key");
  char num[G_ASCII_DTOSTR_BUF_SIZE];
  guint i, j;

  for (j = 0; j < h->n_key; j++)
    {
      g_autofree char *p = saccade_store_cli_piece (&tokens[j]);
      g_autofree char *label = g_strdup_printf ("%u:%s", j, p);
      g_string_append_c (out, ',');
      csv_field (out, label);
    }
  g_string_append (out, "\r\n");
  for (i = 0; i < h->n_query; i++)
    {
      g_autofree char *p = saccade_store_cli_piece (&tokens[i]);
      g_autofree char *label = g_strdup_printf ("%u:%s", i, p);
      csv_field (out, label);
      for (j = 0; j < h->n_key; j++)
        {
          g_string_append_c (out, ',');
          g_string_append (out, g_ascii_formatd (num, sizeof num, "%.9g",
                                                 h->probs[(gsize) i * h->n_key + j]));
        }
      g_string_append (out, "\r\n");
    }
  return g_string_free_to_bytes (out);
}

/* NumPy's .npy format, version 1.0: the magic "\x93NUMPY", the version (1, 0), a
 * little-endian uint16 header length, a Python dict literal padded with spaces and a final
 * newline so that the data starts at a multiple of 64 bytes, then the float32 data
 * little-endian, row-major. numpy.load reads it directly. */
static GBytes *
export_npy (const ScStoreHead *h)
{
  static const char magic[] = "\x93NUMPY\x01\x00";
  g_autofree char *dict = g_strdup_printf ("{'descr': '<f4', 'fortran_order': False, "
                                           "'shape': (%u, %u), }", h->n_query, h->n_key);
  const gsize prefix = sizeof magic - 1 + 2;
  gsize header = strlen (dict) + 1; /* with the newline */
  gsize pad = (64 - (prefix + header) % 64) % 64, i, n = (gsize) h->n_query * h->n_key;
  GByteArray *out = g_byte_array_sized_new ((guint) (prefix + header + pad + 4 * n));
  guint8 len_le[2];

  header += pad;
  len_le[0] = (guint8) (header & 0xff);
  len_le[1] = (guint8) (header >> 8);
  g_byte_array_append (out, (const guint8 *) magic, sizeof magic - 1);
  g_byte_array_append (out, len_le, 2);
  g_byte_array_append (out, (const guint8 *) dict, (guint) strlen (dict));
  for (i = 0; i < pad; i++)
    g_byte_array_append (out, (const guint8 *) " ", 1);
  g_byte_array_append (out, (const guint8 *) "\n", 1);
  for (i = 0; i < n; i++)
    {
      guint32 bits;
      memcpy (&bits, &h->probs[i], sizeof bits);
      bits = GUINT32_TO_LE (bits);
      g_byte_array_append (out, (const guint8 *) &bits, 4);
    }
  return g_byte_array_free_to_bytes (out);
}

static GBytes *
export_json (const ScStoreHead *h, const ScStoreToken *tokens, size_t n_tokens, gint64 run,
             int layer, int head)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;
  gsize len = 0;
  char *text;
  guint i, j;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "run");
  json_builder_add_int_value (b, run);
  json_builder_set_member_name (b, "layer");
  json_builder_add_int_value (b, layer);
  json_builder_set_member_name (b, "head");
  json_builder_add_int_value (b, head);
  json_builder_set_member_name (b, "n_query");
  json_builder_add_int_value (b, h->n_query);
  json_builder_set_member_name (b, "n_key");
  json_builder_add_int_value (b, h->n_key);
  json_builder_set_member_name (b, "causal");
  json_builder_add_boolean_value (b, h->causal);
  saccade_store_cli_json_tokens (b, tokens, n_tokens);
  json_builder_set_member_name (b, "weights");
  json_builder_begin_array (b);
  for (i = 0; i < h->n_query; i++)
    {
      json_builder_begin_array (b);
      for (j = 0; j < h->n_key; j++)
        json_builder_add_double_value (b, h->probs[(gsize) i * h->n_key + j]);
      json_builder_end_array (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  text = json_generator_to_data (gen, &len);
  return g_bytes_new_take (text, len);
}

/* ------------------------------------------------------------------------------------ */
/* export --figure                                                                       */

typedef enum {
  FIGURE_HEATMAP,
  FIGURE_GRID,
  FIGURE_LINES,
} FigureKind;

typedef struct {
  FigureKind kind;
  int layer, head;             /* -1: not given */
  SaccadeColormap colormap;
  SaccadeScale scale;
  const char *metric;          /* grid: "entropy", "sink" or NULL */
  const char *out_path;
  gboolean json;
} FigureArgs;

/* The run's text for a title: one line, at most 60 characters. Caller frees. */
static char *
title_text (const ScStoreRunInfo *info)
{
  g_autofree char *shown = saccade_token_display (info->text, info->text_len);
  glong len = g_utf8_strlen (shown, -1);
  g_autofree char *cut = g_utf8_substring (shown, 0, MIN (len, 60));
  return g_strdup_printf ("“%s%s”", cut, len > 60 ? "…" : "");
}

/* Reads @layers x @heads heads (first layer @l0, first head @h0) into one
 * (n_layers, n_heads, n, n) array; NULL with @err set on failure. */
static float *
read_heads (ScStore *store, gint64 run, int l0, int n_layers, int h0, int n_heads, guint n,
            ScError *err)
{
  g_autofree float *all = g_new (float, (gsize) n_layers * n_heads * n * n);

  for (int l = 0; l < n_layers; l++)
    for (int h = 0; h < n_heads; h++)
      {
        ScStoreHead head = { 0 };
        if (sc_store_read_head (store, run, l0 + l, h0 + h, &head, err) != SC_OK)
          return NULL;
        if (head.n_query != n || head.n_key != n)
          {
            sc_store_head_clear (&head);
            sc_error_set (err, SC_ERR_FORMAT, "run %" G_GINT64_FORMAT " layer %d head %d: "
                          "%u x %u, not %u x %u", run, l0 + l, h0 + h, head.n_query,
                          head.n_key, n, n);
            return NULL;
          }
        memcpy (all + ((gsize) l * n_heads + h) * n * n, head.probs,
                (gsize) n * n * sizeof (float));
        sc_store_head_clear (&head);
      }
  return g_steal_pointer (&all);
}

static int
export_figure (const FigureArgs *a, const char *db_path, gint64 run)
{
  static const char *const kinds[] = { "heatmap", "grid", "lines" };
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) labels = NULL;
  g_autofree float *heads = NULL;
  g_autofree double *metric = NULL;
  g_autofree char *title = NULL, *text = NULL;
  ScStoreRunInfo info = { 0 };
  ScStoreToken *tokens = NULL;
  ScStore *store = NULL;
  ScError err = { 0 };
  size_t n = 0;
  gboolean ok = FALSE;
  int rc = 0, n_layers, n_heads, group;

  if ((store = saccade_store_open (db_path, FALSE, &err)) == NULL)
    return saccade_store_cli_fail (&err);
  if (sc_store_get_run (store, run, &info, &err) != SC_OK
      || sc_store_read_tokens (store, run, &tokens, &n, &err) != SC_OK)
    {
      rc = saccade_store_cli_fail (&err);
      goto out;
    }
  n_layers = (int) info.n_layers;
  n_heads = (int) info.n_heads;
  group = info.n_kv_heads > 0 ? n_heads / (int) info.n_kv_heads : 1;
  if (a->layer >= n_layers || a->head >= n_heads)
    {
      fprintf (stderr, "saccade: run %" G_GINT64_FORMAT " has layers 0-%d and heads 0-%d\n",
               run, n_layers - 1, n_heads - 1);
      rc = 2;
      goto out;
    }
  {
    g_autofree const char **pieces = g_new (const char *, n + 1);
    g_autofree gsize *lens = g_new (gsize, n + 1);
    for (size_t i = 0; i < n; i++)
      {
        pieces[i] = (const char *) tokens[i].piece;
        lens[i] = tokens[i].len;
      }
    labels = saccade_token_labels_new (pieces, lens, n);
  }
  text = title_text (&info);

  switch (a->kind)
    {
    case FIGURE_HEATMAP:
      {
        ScStoreHead h = { 0 };
        SaccadeHeatmapFigure f;
        if (sc_store_read_head (store, run, a->layer, a->head, &h, &err) != SC_OK)
          {
            rc = saccade_store_cli_fail (&err);
            goto out;
          }
        title = g_strdup_printf ("%s — layer %d, head %d (KV head %d)", text, a->layer,
                                 a->head, a->head / group);
        f = (SaccadeHeatmapFigure) {
          .values = h.probs, .n_rows = (int) h.n_query, .n_cols = (int) h.n_key,
          .row_labels = (const char *const *) labels,
          .col_labels = (const char *const *) labels,
          .title = title, .colormap = a->colormap, .scale = a->scale, .causal = h.causal,
        };
        ok = saccade_figure_export_heatmap (&f, a->out_path, &error);
        sc_store_head_clear (&h);
        break;
      }
    case FIGURE_GRID:
      {
        SaccadeGridFigure f;
        if ((heads = read_heads (store, run, 0, n_layers, 0, n_heads, (guint) n, &err)) == NULL)
          {
            rc = saccade_store_cli_fail (&err);
            goto out;
          }
        if (a->metric != NULL)
          {
            /* The metrics `saccade capture --summary` prints, computed once (docs/metrics.md). */
            ScHeadMetric m = strcmp (a->metric, "sink") == 0 ? SC_HEAD_METRIC_SINK
                                                              : SC_HEAD_METRIC_ENTROPY;
            metric = g_new (double, (gsize) n_layers * n_heads);
            for (int l = 0; l < n_layers; l++)
              for (int hd = 0; hd < n_heads; hd++)
                {
                  ScHeadStats st;
                  sc_head_stats_compute (heads + ((gsize) l * n_heads + hd) * n * n, (int) n,
                                         (int) n, NULL, &st, NULL);
                  metric[l * n_heads + hd] = sc_head_stats_get (&st, m);
                }
          }
        title = g_strdup_printf ("%s — %d layers × %d heads", text, n_layers, n_heads);
        f = (SaccadeGridFigure) {
          .n_layers = n_layers, .n_heads = n_heads, .n_kv_heads = (int) info.n_kv_heads,
          .n = (int) n, .heads = heads, .metric = metric,
          .metric_name = a->metric == NULL ? NULL
                         : strcmp (a->metric, "sink") == 0 ? "sink mass (attention to token 0)"
                                                           : "mean entropy (nats)",
          .title = title, .colormap = a->colormap, .scale = a->scale,
        };
        ok = saccade_figure_export_grid (&f, a->out_path, &error);
        break;
      }
    case FIGURE_LINES:
    default:
      {
        int h0 = a->head >= 0 ? a->head : 0, nh = a->head >= 0 ? 1 : n_heads;
        SaccadeLinesFigure f;
        if ((heads = read_heads (store, run, a->layer, 1, h0, nh, (guint) n, &err)) == NULL)
          {
            rc = saccade_store_cli_fail (&err);
            goto out;
          }
        if (a->head >= 0)
          title = g_strdup_printf ("%s — layer %d, head %d", text, a->layer, a->head);
        else
          title = g_strdup_printf ("%s — layer %d, all heads", text, a->layer);
        f = (SaccadeLinesFigure) {
          .n_heads = nh, .n = (int) n, .heads = heads,
          .labels = (const char *const *) labels, .highlight_token = -1, .title = title,
        };
        ok = saccade_figure_export_lines (&f, a->out_path, &error);
        break;
      }
    }
  if (!ok)
    {
      rc = saccade_cli_fail (g_steal_pointer (&error));
      goto out;
    }
  if (a->json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "output");
      json_builder_add_string_value (b, a->out_path);
      json_builder_set_member_name (b, "figure");
      json_builder_add_string_value (b, kinds[a->kind]);
      json_builder_set_member_name (b, "run");
      json_builder_add_int_value (b, run);
      json_builder_set_member_name (b, "layer");
      json_builder_add_int_value (b, a->layer);
      json_builder_set_member_name (b, "head");
      json_builder_add_int_value (b, a->head);
      json_builder_set_member_name (b, "n_tokens");
      json_builder_add_int_value (b, (gint64) n);
      json_builder_end_object (b);
      saccade_cli_print_json (b);
    }
  else
    printf ("Wrote %s: %s of run %" G_GINT64_FORMAT "\n", a->out_path, title, run);
out:
  sc_store_tokens_free (tokens);
  sc_store_run_info_clear (&info);
  sc_store_close (store);
  return rc;
}

/* Checks and completes the figure options; prints why not and returns FALSE. */
static gboolean
figure_args (const char *figure, const char *colormap, const char *scale, const char *metric,
             FigureArgs *a)
{
  SaccadeFigureFormat fmt;
  g_autoptr (GError) error = NULL;

  if (strcmp (figure, "heatmap") == 0)
    a->kind = FIGURE_HEATMAP;
  else if (strcmp (figure, "grid") == 0)
    a->kind = FIGURE_GRID;
  else if (strcmp (figure, "lines") == 0)
    a->kind = FIGURE_LINES;
  else
    {
      fprintf (stderr, "saccade: --figure is heatmap, grid or lines, not '%s'\n", figure);
      return FALSE;
    }
  if (a->out_path == NULL)
    {
      fprintf (stderr, "saccade: export --figure needs -o FILE (.png, .svg or .pdf)\n");
      return FALSE;
    }
  if (strcmp (a->out_path, "-") == 0 || !saccade_figure_format_from_path (a->out_path, &fmt, &error))
    {
      fprintf (stderr, "saccade: %s\n", error != NULL ? error->message
                                                      : "figures are written to files, not stdout");
      return FALSE;
    }
  if ((a->kind == FIGURE_HEATMAP && (a->layer < 0 || a->head < 0))
      || (a->kind == FIGURE_LINES && a->layer < 0))
    {
      fprintf (stderr, "saccade: --figure %s needs --layer L%s\n", figure,
               a->kind == FIGURE_HEATMAP ? " and --head H" : " (and --head H for one head)");
      return FALSE;
    }
  if (colormap != NULL && !saccade_colormap_from_id (colormap, &a->colormap))
    {
      fprintf (stderr, "saccade: --colormap is viridis, magma, cividis, grays or rdbu, "
                       "not '%s'\n", colormap);
      return FALSE;
    }
  if (scale != NULL && !saccade_scale_from_id (scale, &a->scale))
    {
      fprintf (stderr, "saccade: --scale is linear or log, not '%s'\n", scale);
      return FALSE;
    }
  if (metric != NULL && strcmp (metric, "entropy") != 0 && strcmp (metric, "sink") != 0)
    {
      fprintf (stderr, "saccade: --metric is entropy or sink, not '%s'\n", metric);
      return FALSE;
    }
  if (metric != NULL && a->kind != FIGURE_GRID)
    {
      fprintf (stderr, "saccade: --metric colours the grid figure only\n");
      return FALSE;
    }
  a->metric = metric;
  return TRUE;
}

int
saccade_cmd_export (int argc, char **argv)
{
  gboolean json = FALSE;
  char *db_opt = NULL, *out_path = NULL, *format_opt = NULL, *figure_opt = NULL;
  char *colormap_opt = NULL, *scale_opt = NULL, *metric_opt = NULL;
  int layer = -1, head = -1;
  GOptionEntry entries[] = {
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &db_opt,
      "Capture database (default: $XDG_DATA_HOME/saccade/captures.sqlite)", "FILE" },
    { "layer", 'l', 0, G_OPTION_ARG_INT, &layer, "Layer", "L" },
    { "head", 'H', 0, G_OPTION_ARG_INT, &head, "Head", "H" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out_path,
      "Output file; .csv, .npy or .json chooses the format (- = stdout, with --format)",
      "FILE" },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format_opt, "csv, npy or json", "FORMAT" },
    { "figure", 0, 0, G_OPTION_ARG_STRING, &figure_opt,
      "Draw a figure instead: heatmap (one head), grid (every head), lines (one layer); "
      "-o names a .png, .svg or .pdf", "KIND" },
    { "colormap", 0, 0, G_OPTION_ARG_STRING, &colormap_opt,
      "Figure colours: viridis (default), magma, cividis, grays, rdbu", "MAP" },
    { "scale", 0, 0, G_OPTION_ARG_STRING, &scale_opt, "Figure colour scale: linear or log",
      "SCALE" },
    { "metric", 0, 0, G_OPTION_ARG_STRING, &metric_opt,
      "Grid figure: frame each head in the colour of entropy or sink", "METRIC" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Report in JSON", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "RUN --layer L --head H -o FILE - write one head's attention matrix, or with --figure "
    "a heatmap, grid or lines figure");
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) data = NULL;
  g_autofree char *path = NULL;
  const char *fmt_name;
  ExportFormat format;
  ScStoreToken *tokens = NULL;
  ScStoreHead h = { 0 };
  ScStore *store = NULL;
  ScError err = { 0 };
  size_t n = 0;
  gint64 run;
  int rc = 0;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if (argc != 2 || !saccade_store_cli_run_id (argv[1], &run))
    {
      if (argc != 2)
        fprintf (stderr, "saccade: export takes one run id (see `saccade runs`)\n");
      return 2;
    }
  if (figure_opt != NULL)
    {
      FigureArgs fa = { .layer = layer, .head = head, .out_path = out_path, .json = json,
                        .colormap = SACCADE_COLORMAP_VIRIDIS, .scale = SACCADE_SCALE_LINEAR };
      if (format_opt != NULL)
        {
          fprintf (stderr, "saccade: --format is for data; a figure's format is its "
                           "file's extension\n");
          return 2;
        }
      if (!figure_args (figure_opt, colormap_opt, scale_opt, metric_opt, &fa))
        return 2;
      path = saccade_db_path (db_opt);
      return export_figure (&fa, path, run);
    }
  if (colormap_opt != NULL || scale_opt != NULL || metric_opt != NULL)
    {
      fprintf (stderr, "saccade: --colormap, --scale and --metric go with --figure\n");
      return 2;
    }
  if (layer < 0 || head < 0 || out_path == NULL)
    {
      fprintf (stderr, "saccade: export needs --layer L, --head H and -o FILE\n");
      return 2;
    }
  fmt_name = format_opt;
  if (fmt_name == NULL)
    {
      const char *dot = strrchr (out_path, '.');
      fmt_name = dot != NULL ? dot + 1 : "";
    }
  if (g_ascii_strcasecmp (fmt_name, "csv") == 0)
    format = FORMAT_CSV;
  else if (g_ascii_strcasecmp (fmt_name, "npy") == 0)
    format = FORMAT_NPY;
  else if (g_ascii_strcasecmp (fmt_name, "json") == 0)
    format = FORMAT_JSON;
  else
    {
      fprintf (stderr, "saccade: cannot tell the format of '%s': name it .csv, .npy or .json, "
                       "or pass --format\n", out_path);
      return 2;
    }

  path = saccade_db_path (db_opt);
  if ((store = saccade_store_open (path, FALSE, &err)) == NULL)
    return saccade_store_cli_fail (&err);
  if (sc_store_read_tokens (store, run, &tokens, &n, &err) != SC_OK
      || sc_store_read_head (store, run, layer, head, &h, &err) != SC_OK)
    {
      rc = saccade_store_cli_fail (&err);
      goto out;
    }
  if (format == FORMAT_CSV)
    data = export_csv (&h, tokens);
  else if (format == FORMAT_NPY)
    data = export_npy (&h);
  else
    data = export_json (&h, tokens, n, run, layer, head);

  if (strcmp (out_path, "-") == 0)
    {
      gsize len = 0;
      const void *bytes = g_bytes_get_data (data, &len);
      if (fwrite (bytes, 1, len, stdout) != len || fflush (stdout) != 0)
        {
          fprintf (stderr, "saccade: writing to stdout failed: %s\n", g_strerror (errno));
          rc = 1;
        }
      goto out;
    }
  /* Written beside the target and renamed over it: a failed export leaves no half file. */
  if (!g_file_set_contents (out_path, g_bytes_get_data (data, NULL),
                            (gssize) g_bytes_get_size (data), &error))
    {
      rc = saccade_cli_fail (g_steal_pointer (&error));
      goto out;
    }
  if (json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "output");
      json_builder_add_string_value (b, out_path);
      json_builder_set_member_name (b, "format");
      json_builder_add_string_value (b, format == FORMAT_CSV ? "csv"
                                        : format == FORMAT_NPY ? "npy" : "json");
      json_builder_set_member_name (b, "bytes");
      json_builder_add_int_value (b, (gint64) g_bytes_get_size (data));
      json_builder_set_member_name (b, "n_query");
      json_builder_add_int_value (b, h.n_query);
      json_builder_set_member_name (b, "n_key");
      json_builder_add_int_value (b, h.n_key);
      json_builder_end_object (b);
      saccade_cli_print_json (b);
    }
  else
    printf ("Wrote %s: run %" G_GINT64_FORMAT " layer %d head %d, %u x %u\n", out_path, run, layer,
            head, h.n_query, h.n_key);
out:
  sc_store_head_clear (&h);
  sc_store_tokens_free (tokens);
  sc_store_close (store);
  return rc;
}

