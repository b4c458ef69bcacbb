/* saccade-cli-export.c — `saccade export`: one head as CSV, .npy or JSON, every head as one
 * .npz or .npy array with --all, or a figure — heatmap, grid or lines — as PNG, SVG or PDF;
 * each cut to --range Q0:Q1[,K0:K1] when given (token positions, half-open like NumPy
 * slices, the keys defaulting to the queries' range). It reads through a read-only store
 * (beside a running capture, on databases in read-only folders) and writes through the
 * exporter the window uses (app/core/saccade-export.h), reading only the heads it needs.
 * Parse -> a request (ExportRequest) -> a result (ExportResult) -> text or JSON.
 */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli-store.h"

#include "app/core/saccade-export.h"
#include "ui/figures/saccade-token-label.h"
#include "ui/figures/saccade-figure-lines.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------ */
/* export                                                                                */

/* What `saccade export` was asked for, checked. */
typedef struct {
  gint64 run;
  int layer, head;               /* -1: not given */
  const char *out_path;          /* "-": stdout (data only) */
  gboolean all;                  /* every head as one array (.npz or .npy) */
  gboolean npz;                  /* all: an .npz archive, else a .npy */
  gboolean compress;             /* all, npz: deflate the members */
  gboolean has_range;
  SaccadeExportRange range;      /* has_range: as given (ends < 0: to the last token) */
  gboolean figure;               /* a figure, else one head's data */
  SaccadeExportFormat format;    /* data */
  SaccadeExportFigureKind kind;  /* figure */
  SaccadeColormap colormap;
  SaccadeScale scale;
  const char *metric;            /* grid: "entropy", "sink" or NULL */
  int bands;                     /* grid: the layers wrapped into this many bands; 0: auto */
  gboolean exclude_first;        /* rollout: without the first token (sc-rollout.h) */
  double threshold;              /* lines: the least weight drawn */
  int top_k;                     /* lines: links per query and head (0: all) */
  const int *heads;              /* lines: the heads drawn (--heads), or NULL */
  int n_heads;                   /* lines: how many in @heads */
  SaccadeFigureExportOptions figure_options; /* figure: size, font, title, labels */
} ExportRequest;

/* What it wrote. */
typedef struct {
  char *title;                   /* figures */
  guint64 bytes;                 /* data */
  guint n_query, n_key;          /* data */
  size_t n_tokens;
  int n_layers, n_heads;
  SaccadeExportRange range;      /* resolved */
  SaccadeExportArrays arrays;    /* all */
  double seconds;
  char *stored_form;             /* the rounded form's statement, or NULL (fp16 values) */
} ExportResult;

static const char *const figure_ids[] = { "heatmap", "grid", "lines", "profile", "rollout" };
static const char *const format_ids[] = { "csv", "npy", "json" };

/* The run's text for a title: one line, at most 60 characters. Caller frees. */
static char *
title_text (const ScStoreRunInfo *info)
{
  g_autofree char *shown = saccade_terminal_text (info->text, info->text_len);
  glong len = g_utf8_strlen (shown, -1);
  g_autofree char *cut = g_utf8_substring (shown, 0, MIN (len, 60));
  return g_strdup_printf ("“%s%s”", cut, len > 60 ? "…" : "");
}

static char *
figure_title (const ExportRequest *q, const ScStoreRunInfo *info)
{
  g_autofree char *text = title_text (info);
  int group = info->n_kv_heads > 0 ? (int) (info->n_heads / info->n_kv_heads) : 1;

  switch (q->kind)
    {
    case SACCADE_EXPORT_HEATMAP:
      return g_strdup_printf ("%s — layer %d, head %d (KV head %d)", text, q->layer, q->head,
                              q->head / group);
    case SACCADE_EXPORT_GRID:
      return g_strdup_printf ("%s — %d layers × %d heads", text, (int) info->n_layers,
                              (int) info->n_heads);
    case SACCADE_EXPORT_PROFILE:
      return g_strdup_printf ("%s — %s by layer", text, q->metric);
    case SACCADE_EXPORT_ROLLOUT:
      return g_strdup_printf (q->exclude_first ? "%s — attention rollout, first token excluded"
                                               : "%s — attention rollout", text);
    case SACCADE_EXPORT_LINES:
    default:
      if (q->heads != NULL)
        {
          g_autoptr (GString) ids = g_string_new (NULL);
          for (int k = 0; k < q->n_heads; k++)
            g_string_append_printf (ids, "%s%d", k > 0 ? "," : "", q->heads[k]);
          return g_strdup_printf ("%s — layer %d, head%s %s", text, q->layer,
                                  q->n_heads > 1 ? "s" : "", ids->str);
        }
      if (q->head >= 0)
        return g_strdup_printf ("%s — layer %d, head %d", text, q->layer, q->head);
      return g_strdup_printf ("%s — layer %d, all heads", text, q->layer);
    }
}

/* Writes @data to the file or stdout @q names. */
static gboolean
export_write (const ExportRequest *q, GBytes *data, GError **error)
{
  gsize len = 0;
  const void *bytes = g_bytes_get_data (data, &len);

  if (strcmp (q->out_path, "-") != 0)
    return saccade_export_write (data, q->out_path, error);
  if (fwrite (bytes, 1, len, stdout) != len || fflush (stdout) != 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno),
                   "writing to stdout failed: %s", g_strerror (errno));
      return FALSE;
    }
  return TRUE;
}

/* Runs the export @q asks for; returns the exit status (2: a layer or head the run does
 * not have, 1: other failures), having printed why. */
static int
export_run (const ExportRequest *q, const char *db_path, ExportResult *r)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SaccadeExportSource) src = NULL;
  g_autoptr (GBytes) data = NULL;
  ScStoreRunInfo info = { 0 };
  ScStore *store;
  ScError err = { 0 };
  int rc = 0;

  if ((store = saccade_store_open (db_path, FALSE, &err)) == NULL)
    return saccade_store_cli_fail (&err);
  if (sc_store_get_run (store, q->run, &info, &err) != SC_OK)
    {
      rc = saccade_store_cli_fail (&err);
      goto out;
    }
  if ((src = saccade_export_source_new_for_store (store, &info, &error)) == NULL)
    goto fail;
  r->stored_form = saccade_run_rounding_label (info.round_bits, info.zero_below);
  r->n_tokens = info.n_tokens;
  r->n_layers = (int) info.n_layers;
  r->n_heads = (int) info.n_heads;
  if (!saccade_export_range_resolve (src, q->has_range ? &q->range : NULL, &r->range, &error))
    {
      rc = 2;
      fprintf (stderr, "saccade: %s\n", error->message);
      goto out;
    }
  if (q->all)
    {
      gint64 t0 = g_get_monotonic_time ();
      /* Level 1: level 6 is 7 % smaller and 5x slower (docs/store.md). */
      if (!saccade_export_run_arrays_full (src, &r->range, q->npz, q->compress ? 1 : 0,
                                           q->out_path, &r->arrays, &error))
        goto fail;
      r->seconds = (g_get_monotonic_time () - t0) / 1e6;
      r->bytes = r->arrays.bytes;
      r->n_query = r->arrays.n_query;
      r->n_key = r->arrays.n_key;
      goto out;
    }
  if (!q->figure)
    {
      data = saccade_export_head_range (src, q->layer, q->head, &r->range, q->format,
                                        &r->n_query, &r->n_key, &error);
      if (data == NULL || !export_write (q, data, &error))
        goto fail;
      r->bytes = g_bytes_get_size (data);
      goto out;
    }
  for (int k = 0; k < q->n_heads; k++)
    if (q->heads[k] >= (int) info.n_heads)
      {
        fprintf (stderr, "saccade: run %" G_GINT64_FORMAT " has heads 0-%d, not %d (--heads)\n",
                 q->run, (int) info.n_heads - 1, q->heads[k]);
        rc = 2;
        goto out;
      }
  if (q->layer >= (int) info.n_layers || q->head >= (int) info.n_heads)
    {
      fprintf (stderr, "saccade: run %" G_GINT64_FORMAT " has layers 0-%d and heads 0-%d\n",
               q->run, (int) info.n_layers - 1, (int) info.n_heads - 1);
      rc = 2;
      goto out;
    }
  {
    g_autofree char *title = figure_title (q, &info);
    r->title = q->has_range ? g_strdup_printf ("%s, tokens %d:%d × %d:%d", title, r->range.q0,
                                               r->range.q1, r->range.k0, r->range.k1)
                            : g_steal_pointer (&title);
    /* a figure drawn from rounded weights says so, as the window's title does */
    if (r->stored_form != NULL)
      {
        char *with = g_strdup_printf ("%s · %s", r->title, r->stored_form);
        g_free (r->title);
        r->title = with;
      }
  }
  {
    SaccadeMetric m;
    SaccadeExportFigure fig = {
      .kind = q->kind, .layer = q->layer, .head = q->head, .title = r->title,
      .colormap = q->colormap, .scale = q->scale, .metric = q->metric,
      .range = q->has_range ? &r->range : NULL,
      .lines_threshold = q->threshold, .lines_top_k = q->top_k, .lines_heads = q->heads,
      .lines_n_heads = q->n_heads, .options = &q->figure_options, .grid_bands = q->bands,
      .exclude_first = q->exclude_first,
      /* The window's name of the metric ("Previous-token score"), from the shared table. */
      .metric_name = q->metric == NULL ? NULL
                     : saccade_metric_from_id (q->metric, &m) ? saccade_metric_name (m)
                                                               : q->metric,
    };
    if (!saccade_export_figure (src, &fig, q->out_path, &error))
      goto fail;
  }
  goto out;

fail:
  rc = saccade_cli_fail (g_steal_pointer (&error));
out:
  g_clear_pointer (&src, saccade_export_source_free);
  sc_store_run_info_clear (&info);
  sc_store_close (store);
  return rc;
}

/* "" for the whole run, else " tokens Q0:Q1 x K0:K1". Caller frees. */
static char *
range_text (const ExportRequest *q, const ExportResult *r)
{
  if (!q->has_range)
    return g_strdup ("");
  return g_strdup_printf (", queries %d:%d x keys %d:%d", r->range.q0, r->range.q1,
                          r->range.k0, r->range.k1);
}

static void
export_print_all (const ExportRequest *q, const ExportResult *r, gboolean json)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autofree char *size = g_format_size (r->bytes);
  g_autofree char *range = range_text (q, r);

  if (!json)
    {
      printf ("Wrote %s: run %" G_GINT64_FORMAT ", %d heads as float32 [layer, head, query, "
              "key] (%u x %u%s), %s in %.2f s\n", q->out_path, q->run,
              r->arrays.heads_stored + r->arrays.heads_missing, r->n_query, r->n_key, range,
              size, r->seconds);
      if (r->arrays.heads_missing > 0)
        printf ("%d heads are not in the store: NaN in the array%s\n", r->arrays.heads_missing,
                q->npz ? ", false in 'stored'" : "");
      if (!q->npz)
        printf ("A .npy holds the attention alone: the tokens, the text and the metadata are "
                "in the .npz form (-o FILE.npz)\n");
      if (r->stored_form != NULL)
        printf ("The values are the stored probabilities, %s: rows sum to 1 only within "
                "that (the npz's metadata has it under 'rounded')\n", r->stored_form);
      else
        printf ("The values are the stored fp16 probabilities: rows sum to 1 within fp16 "
                "rounding\n");
      return;
    }
  json_builder_begin_object (b);
  saccade_json_string (b, "output", q->out_path);
  saccade_json_string (b, "format", q->npz ? "npz" : "npy");
  saccade_json_int (b, "run", q->run);
  saccade_json_int (b, "bytes", (gint64) r->bytes);
  saccade_json_double (b, "seconds", r->seconds);
  saccade_json_begin_array (b, "shape");
  json_builder_add_int_value (b, r->n_layers);
  json_builder_add_int_value (b, r->n_heads);
  json_builder_add_int_value (b, r->n_query);
  json_builder_add_int_value (b, r->n_key);
  json_builder_end_array (b);
  saccade_json_begin_object (b, "range");
  saccade_json_int (b, "q0", r->range.q0);
  saccade_json_int (b, "q1", r->range.q1);
  saccade_json_int (b, "k0", r->range.k0);
  saccade_json_int (b, "k1", r->range.k1);
  json_builder_end_object (b);
  saccade_json_int (b, "heads_stored", r->arrays.heads_stored);
  saccade_json_int (b, "heads_missing", r->arrays.heads_missing);
  saccade_json_string (b, "values", "stored fp16 probabilities widened to float32");
  json_builder_end_object (b);
  saccade_json_print (b);
}

static void
export_print (const ExportRequest *q, const ExportResult *r, gboolean json)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  if (q->all)
    {
      export_print_all (q, r, json);
      return;
    }
  if (!json && q->figure)
    printf ("Wrote %s: %s of run %" G_GINT64_FORMAT "\n", q->out_path, r->title, q->run);
  else if (!json)
    {
      g_autofree char *range = range_text (q, r);
      printf ("Wrote %s: run %" G_GINT64_FORMAT " layer %d head %d, %u x %u%s\n", q->out_path,
              q->run, q->layer, q->head, r->n_query, r->n_key, range);
    }
  if (!json)
    return;
  json_builder_begin_object (b);
  saccade_json_string (b, "output", q->out_path);
  if (q->figure)
    {
      saccade_json_string (b, "figure", figure_ids[q->kind]);
      saccade_json_int (b, "run", q->run);
      saccade_json_head (b, q->layer, q->head);
      saccade_json_int (b, "n_tokens", (gint64) r->n_tokens);
      if (q->kind == SACCADE_EXPORT_ROLLOUT)
        saccade_json_string (b, "first_token", q->exclude_first ? "excluded" : "kept");
      if (q->kind == SACCADE_EXPORT_LINES)
        {
          saccade_json_double (b, "threshold", q->threshold);
          saccade_json_int (b, "top_k", q->top_k);
          saccade_json_begin_array (b, "heads");
          for (int k = 0; k < (q->heads != NULL ? q->n_heads : 0); k++)
            json_builder_add_int_value (b, q->heads[k]);
          if (q->heads == NULL)
            for (int k = q->head >= 0 ? q->head : 0;
                 k < (q->head >= 0 ? q->head + 1 : r->n_heads); k++)
              json_builder_add_int_value (b, k);
          json_builder_end_array (b);
          saccade_json_int (b, "range_start", r->range.q0);
          saccade_json_int (b, "range_end", r->range.q1);
        }
    }
  else
    {
      saccade_json_string (b, "format", format_ids[q->format]);
      saccade_json_int (b, "bytes", (gint64) r->bytes);
      saccade_json_int (b, "n_query", r->n_query);
      saccade_json_int (b, "n_key", r->n_key);
      saccade_json_int (b, "query_start", r->range.q0);
      saccade_json_int (b, "key_start", r->range.k0);
    }
  json_builder_end_object (b);
  saccade_json_print (b);
}

/* The index of @s in @ids (@n of them), compared as @casefold says; -1 when none. */
static int
id_index (const char *s, const char *const *ids, int n, gboolean casefold)
{
  for (int i = 0; i < n; i++)
    if (casefold ? g_ascii_strcasecmp (s, ids[i]) == 0 : strcmp (s, ids[i]) == 0)
      return i;
  return -1;
}

/* Checks and completes the figure options; prints why not and returns FALSE. */
static gboolean
figure_request (const char *figure, const char *colormap, const char *scale,
                const char *metric, ExportRequest *q)
{
  int kind = id_index (figure, figure_ids, G_N_ELEMENTS (figure_ids), FALSE);
  SaccadeFigureFormat fmt;
  g_autoptr (GError) error = NULL;

  if (kind < 0)
    {
      fprintf (stderr, "saccade: --figure is heatmap, grid or lines (or profile, rollout), "
                       "not '%s'\n", figure);
      return FALSE;
    }
  q->figure = TRUE;
  q->kind = (SaccadeExportFigureKind) kind;
  if (q->out_path == NULL)
    {
      fprintf (stderr, "saccade: export --figure needs -o FILE (.png, .svg or .pdf)\n");
      return FALSE;
    }
  if (strcmp (q->out_path, "-") == 0 || !saccade_figure_format_from_path (q->out_path, &fmt, &error))
    {
      fprintf (stderr, "saccade: %s\n", error != NULL ? error->message
                                                      : "figures are written to files, not stdout");
      return FALSE;
    }
  if ((q->kind == SACCADE_EXPORT_HEATMAP && (q->layer < 0 || q->head < 0))
      || (q->kind == SACCADE_EXPORT_LINES && q->layer < 0))
    {
      fprintf (stderr, "saccade: --figure %s needs --layer L%s\n", figure,
               q->kind == SACCADE_EXPORT_HEATMAP ? " and --head H"
                                                 : " (and --head H for one head)");
      return FALSE;
    }
  if (colormap != NULL && !saccade_colormap_from_id (colormap, &q->colormap))
    {
      fprintf (stderr, "saccade: --colormap is viridis, magma, cividis, grays or rdbu, "
                       "not '%s'\n", colormap);
      return FALSE;
    }
  if (scale != NULL && !saccade_scale_from_id (scale, &q->scale))
    {
      fprintf (stderr, "saccade: --scale is linear or log, not '%s'\n", scale);
      return FALSE;
    }
  {
    ScHeadMetric m;
    if (metric != NULL && !sc_head_metric_from_id (metric, &m))
      {
        fprintf (stderr, "saccade: --metric is a head metric (entropy, entropy-norm, distance, "
                         "confidence, sink, sink-k, previous-token, self, last-entropy), "
                         "not '%s'\n", metric);
        return FALSE;
      }
  }
  if (metric != NULL && q->kind != SACCADE_EXPORT_GRID && q->kind != SACCADE_EXPORT_PROFILE)
    {
      fprintf (stderr, "saccade: --metric goes with the grid and profile figures\n");
      return FALSE;
    }
  if (q->kind == SACCADE_EXPORT_PROFILE && metric == NULL)
    metric = "entropy";
  q->metric = metric;
  return TRUE;
}

/* One side of --range, "A:B" with either end left out ("A:" to the last token, ":B" from
 * 0); *@b is -1 for "to the last token". */
static gboolean
parse_side (const char *s, int *a, int *b)
{
  const char *colon = strchr (s, ':');
  g_autofree char *left = NULL;
  guint64 v;

  if (colon == NULL || strchr (colon + 1, ':') != NULL)
    return FALSE;
  left = g_strndup (s, (gsize) (colon - s));
  *a = 0;
  *b = -1;
  if (*left != '\0')
    {
      if (!g_ascii_string_to_unsigned (left, 10, 0, G_MAXINT, &v, NULL))
        return FALSE;
      *a = (int) v;
    }
  if (colon[1] != '\0')
    {
      if (!g_ascii_string_to_unsigned (colon + 1, 10, 0, G_MAXINT, &v, NULL))
        return FALSE;
      *b = (int) v;
    }
  return TRUE;
}

/* --range Q0:Q1[,K0:K1]: half-open, as NumPy slices; the keys default to the queries'
 * range. Prints why not and returns FALSE. */
static gboolean
parse_range (const char *s, SaccadeExportRange *r)
{
  g_auto (GStrv) sides = g_strsplit (s, ",", -1);
  guint n = g_strv_length (sides);

  if ((n == 1 || n == 2) && parse_side (sides[0], &r->q0, &r->q1)
      && (n == 1 || parse_side (sides[1], &r->k0, &r->k1)))
    {
      if (n == 1)
        {
          r->k0 = r->q0;
          r->k1 = r->q1;
        }
      return TRUE;
    }
  fprintf (stderr, "saccade: --range is Q0:Q1 or Q0:Q1,K0:K1 (token positions, half-open "
                   "like NumPy slices: 0:10 is tokens 0 to 9; an end may be left out), "
                   "not '%s'\n", s);
  return FALSE;
}

/* --heads 0,3: distinct head indices, in the order given. Caller frees *@out. Prints why
 * not and returns FALSE. */
static gboolean
parse_heads (const char *s, int **out, int *n)
{
  g_auto (GStrv) items = g_strsplit (s, ",", -1);
  guint count = g_strv_length (items);
  g_autofree int *ids = g_new (int, MAX (count, 1));

  for (guint i = 0; i < count; i++)
    {
      guint64 v;
      if (!g_ascii_string_to_unsigned (items[i], 10, 0, G_MAXINT, &v, NULL))
        {
          fprintf (stderr, "saccade: --heads is a comma-separated list of head indices "
                           "(0,3), not '%s'\n", s);
          return FALSE;
        }
      for (guint j = 0; j < i; j++)
        if (ids[j] == (int) v)
          {
            fprintf (stderr, "saccade: --heads names head %d twice\n", (int) v);
            return FALSE;
          }
      ids[i] = (int) v;
    }
  if (count == 0)
    {
      fprintf (stderr, "saccade: --heads names no head\n");
      return FALSE;
    }
  *out = g_steal_pointer (&ids);
  *n = (int) count;
  return TRUE;
}

/* Checks and completes the lines figure's options (--threshold, --top-k, --heads; < 0 and
 * NULL: not given) into @q; the defaults are the Lines page's. Prints why not and returns
 * FALSE. */
static gboolean
lines_request (double threshold, int top_k, const char *heads, int **heads_out,
               ExportRequest *q)
{
  gboolean given = threshold != -1 || top_k != -1 || heads != NULL;

  if (given && !(q->figure && q->kind == SACCADE_EXPORT_LINES))
    {
      fprintf (stderr, "saccade: --threshold, --top-k and --heads go with --figure lines\n");
      return FALSE;
    }
  if (!q->figure || q->kind != SACCADE_EXPORT_LINES)
    return TRUE;
  /* -1 is "not given" (the option's default); any other value below 0, NaN and values
   * above 1 are refused: a weight is a probability. */
  if (threshold != -1 && !(threshold >= 0 && threshold <= 1))
    {
      fprintf (stderr, "saccade: --threshold is a weight from 0 to 1, not %g\n", threshold);
      return FALSE;
    }
  if (top_k < -1)
    {
      fprintf (stderr, "saccade: --top-k is a count of links per query and head (0: all), "
                       "not %d\n", top_k);
      return FALSE;
    }
  if (heads != NULL && q->head >= 0)
    {
      fprintf (stderr, "saccade: give --head H or --heads LIST, not both\n");
      return FALSE;
    }
  if (heads != NULL && !parse_heads (heads, heads_out, &q->n_heads))
    return FALSE;
  q->heads = *heads_out;
  q->threshold = threshold == -1 ? SACCADE_LINES_DEFAULT_THRESHOLD : threshold;
  q->top_k = top_k == -1 ? SACCADE_LINES_DEFAULT_TOP_K : top_k;
  return TRUE;
}

/* Checks the options of --all (every head as one .npz or .npy). */
static gboolean
all_request (const char *format, ExportRequest *q)
{
  const char *dot = q->out_path != NULL ? strrchr (q->out_path, '.') : NULL;
  const char *name = format != NULL ? format : dot != NULL ? dot + 1 : "";

  if (q->layer >= 0 || q->head >= 0)
    {
      fprintf (stderr, "saccade: --all exports every head: leave out --layer and --head\n");
      return FALSE;
    }
  if (q->out_path == NULL || strcmp (q->out_path, "-") == 0)
    {
      fprintf (stderr, "saccade: export --all needs -o FILE.npz (or FILE.npy); it writes a "
                       "file, not stdout\n");
      return FALSE;
    }
  if (g_ascii_strcasecmp (name, "npz") != 0 && g_ascii_strcasecmp (name, "npy") != 0)
    {
      fprintf (stderr, "saccade: export --all writes .npz (attention, tokens and metadata) or "
                       ".npy (the attention alone), not '%s'\n", q->out_path);
      return FALSE;
    }
  q->all = TRUE;
  q->npz = g_ascii_strcasecmp (name, "npz") == 0;
  if (q->compress && !q->npz)
    {
      fprintf (stderr, "saccade: --compress is for .npz archives; a .npy is never "
                       "compressed\n");
      return FALSE;
    }
  return TRUE;
}

/* Checks the data options (one head, a format from --format or the extension). */
static gboolean
data_request (const char *format, ExportRequest *q)
{
  const char *name = format;
  int f;

  if (q->layer < 0 || q->head < 0 || q->out_path == NULL)
    {
      fprintf (stderr, "saccade: export needs --layer L, --head H and -o FILE\n");
      return FALSE;
    }
  if (name == NULL)
    {
      const char *dot = strrchr (q->out_path, '.');
      name = dot != NULL ? dot + 1 : "";
    }
  if ((f = id_index (name, format_ids, G_N_ELEMENTS (format_ids), TRUE)) < 0)
    {
      fprintf (stderr, "saccade: cannot tell the format of '%s': name it .csv, .npy or .json, "
                       "or pass --format\n", q->out_path);
      return FALSE;
    }
  q->format = (SaccadeExportFormat) f;
  return TRUE;
}

int
saccade_cmd_export (int argc, char **argv)
{
  gboolean json = FALSE;
  g_autofree char *db_opt = NULL, *out_path = NULL, *format_opt = NULL;
  g_autofree char *figure_opt = NULL, *colormap_opt = NULL, *scale_opt = NULL;
  g_autofree char *metric_opt = NULL, *range_opt = NULL, *heads_opt = NULL;
  g_autofree int *heads = NULL;
  gboolean all = FALSE, compress = FALSE, exclude_first = FALSE;
  int layer = -1, head = -1, top_k = -1, bands = 0;
  double threshold = -1;
  g_auto (SaccadeCliFigure) figure = SACCADE_CLI_FIGURE_INIT;
  GOptionEntry entries[] = {
    SACCADE_STORE_CLI_DB_OPTION (&db_opt),
    { "layer", 'l', 0, G_OPTION_ARG_INT, &layer, "Layer", "L" },
    { "head", 'H', 0, G_OPTION_ARG_INT, &head, "Head", "H" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out_path,
      "Output file; .csv, .npy or .json chooses the format (- = stdout, with --format)",
      "FILE" },
    { "format", 0, 0, G_OPTION_ARG_STRING, &format_opt, "csv, npy or json (with --all: npz "
      "or npy)", "FORMAT" },
    { "all", 'a', 0, G_OPTION_ARG_NONE, &all,
      "Every head as one float32 array [layer, head, query, key]: -o FILE.npz (with the "
      "tokens, text and metadata) or FILE.npy (the attention alone); read one head at a time",
      NULL },
    { "compress", 0, 0, G_OPTION_ARG_NONE, &compress,
      "With --all -o FILE.npz: deflate the arrays, as numpy.savez_compressed (about a third "
      "of the size, ten times slower)", NULL },
    { "range", 'r', 0, G_OPTION_ARG_STRING, &range_opt,
      "Only tokens Q0:Q1 (queries) and K0:K1 (keys; default: the same as the queries), "
      "half-open as in NumPy (0:10 is tokens 0-9; 100: runs to the end); every export and "
      "figure honours it (the profile takes none)", "Q0:Q1[,K0:K1]" },
    { "figure", 0, 0, G_OPTION_ARG_STRING, &figure_opt,
      "Draw a figure instead: heatmap (one head), grid (every head), lines (one layer), "
      "profile (a metric by layer), rollout; "
      "-o names a .png, .svg or .pdf", "KIND" },
    { "colormap", 0, 0, G_OPTION_ARG_STRING, &colormap_opt,
      "Figure colours: viridis (default), magma, cividis, grays, rdbu", "MAP" },
    { "scale", 0, 0, G_OPTION_ARG_STRING, &scale_opt, "Figure colour scale: linear or log",
      "SCALE" },
    { "metric", 0, 0, G_OPTION_ARG_STRING, &metric_opt,
      "Grid and profile figures: a head metric (entropy, sink, previous-token, ...)",
      "METRIC" },
    { "bands", 0, 0, G_OPTION_ARG_INT, &bands,
      "Grid figure: wrap the layers into N bands (2: layers 0-14 and 15-29 of 30; default "
      "0: as many as give the biggest heads for the figure's size)", "N" },
    { "threshold", 0, 0, G_OPTION_ARG_DOUBLE, &threshold,
      "Lines figure: draw links of at least this weight (default 0.1; 0: every visible "
      "line)", "T" },
    { "top-k", 0, 0, G_OPTION_ARG_INT, &top_k,
      "Lines figure: at most the K strongest links per query and head (default 3; 0: all)",
      "K" },
    { "heads", 0, 0, G_OPTION_ARG_STRING, &heads_opt,
      "Lines figure: only these heads of the layer (default: all)", "H1,H2,..." },
    { "exclude-first", 0, 0, G_OPTION_ARG_NONE, &exclude_first,
      "Rollout figure: remove the first token (the attention sink) from every attention row "
      "and renormalise before rolling out, as `saccade rollout --exclude-first`", NULL },
    SACCADE_CLI_FIGURE_OPTIONS (&figure),
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "Report in JSON", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "RUN --layer L --head H -o FILE - write one head's attention matrix, with --all every "
    "head, or with --figure a heatmap, grid or lines figure");
  g_autofree char *path = NULL;
  ExportRequest q = { .colormap = SACCADE_COLORMAP_VIRIDIS, .scale = SACCADE_SCALE_LINEAR };
  ExportResult r = { 0 };
  int rc;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if (argc != 2 || !saccade_store_cli_run_id (argv[1], &q.run))
    {
      if (argc != 2)
        fprintf (stderr, "saccade: export takes one run id (see `saccade runs`)\n");
      return 2;
    }
  q.layer = layer;
  q.head = head;
  q.out_path = out_path;
  if (figure_opt != NULL && format_opt != NULL)
    {
      fprintf (stderr, "saccade: --format is for data; a figure's format is its "
                       "file's extension\n");
      return 2;
    }
  if (figure_opt == NULL && (colormap_opt != NULL || scale_opt != NULL || metric_opt != NULL))
    {
      fprintf (stderr, "saccade: --colormap, --scale and --metric go with --figure\n");
      return 2;
    }
  if (all && figure_opt != NULL)
    {
      fprintf (stderr, "saccade: --all writes data; draw every head with --figure grid\n");
      return 2;
    }
  if (compress && !all)
    {
      fprintf (stderr, "saccade: --compress goes with --all -o FILE.npz\n");
      return 2;
    }
  if (range_opt != NULL)
    {
      if (!parse_range (range_opt, &q.range))
        return 2;
      q.has_range = TRUE;
    }
  q.compress = compress;
  if (all ? !all_request (format_opt, &q)
      : figure_opt != NULL ? !figure_request (figure_opt, colormap_opt, scale_opt, metric_opt, &q)
                           : !data_request (format_opt, &q))
    return 2;
  if (!lines_request (threshold, top_k, heads_opt, &heads, &q))
    return 2;
  if (bands != 0 && !(q.figure && q.kind == SACCADE_EXPORT_GRID))
    {
      fprintf (stderr, "saccade: --bands goes with --figure grid\n");
      return 2;
    }
  if (bands < 0)
    {
      fprintf (stderr, "saccade: --bands is a number of bands of layers (0: automatic), "
                       "not %d\n", bands);
      return 2;
    }
  q.bands = bands;
  if (exclude_first && !(q.figure && q.kind == SACCADE_EXPORT_ROLLOUT))
    {
      fprintf (stderr, "saccade: --exclude-first goes with --figure rollout\n");
      return 2;
    }
  q.exclude_first = exclude_first;
  if (!saccade_cli_figure_check (&figure, q.figure, "--figure", &q.figure_options, &rc))
    return rc;
  if (q.has_range && q.figure && q.kind == SACCADE_EXPORT_PROFILE)
    {
      fprintf (stderr, "saccade: the profile figure summarises whole heads: it takes no "
                       "--range\n");
      return 2;
    }
  path = saccade_db_path (db_opt);
  /* Data written to stdout is the output: nothing is said about it there. */
  if ((rc = export_run (&q, path, &r)) == 0 && strcmp (q.out_path, "-") != 0)
    export_print (&q, &r, json);
  g_free (r.title);
  g_free (r.stored_form);
  return rc;
}
