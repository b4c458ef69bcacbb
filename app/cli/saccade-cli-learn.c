/* saccade-cli-learn.c — `saccade learn TOPIC`: the Learn page's arithmetic on the command
 * line (the twin of the page; the computations are engine/analysis/sc-learn.h, docs/learn.md
 * derives them). Topics: example (the seeds' worked attention examples, or your own Q, K, V),
 * sqrt-dk (why scores are divided by √d_k), heads (d_k = d_model / h), kv-cache (the KV
 * cache's bytes and read time) and flash (FlashAttention's HBM traffic). Each parses its
 * options, computes a result struct and prints it as text, or as JSON with --json. None
 * loads a model. */
#define G_LOG_DOMAIN "saccade-cli"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/cli/saccade-cli.h"
#include "engine/analysis/sc-learn.h"

/* Unset int64 options: a value no user types (−1 is a value the engine must refuse). */
#define UNSET G_MININT64

/* --bytes B into @bytes (a gint64): the element width that kv-cache and flash both size
 * memory by. A GOptionEntry initialiser. */
#define BYTES_OPTION(bytes)                                                                  \
  { "bytes", 0, 0, G_OPTION_ARG_INT64, (bytes), "bytes per element (2: fp16)", "B" }

static int
fail_sc (const ScError *err)
{
  g_autoptr (GError) error = NULL;
  saccade_set_error_from_sc (&error, err);
  return saccade_cli_fail (g_steal_pointer (&error));
}

/* Parses @argv with @entries and --json; FALSE (message printed) on a bad option or an
 * unexpected argument. */
static gboolean
parse (const char *summary, GOptionEntry *entries, gboolean *json, int *argc, char ***argv)
{
  GOptionEntry json_entry[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, json, "print JSON", NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (summary);

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_add_main_entries (ctx, json_entry, NULL);
  if (!saccade_cli_parse_options (ctx, argc, argv))
    return FALSE;
  if (*argc > 1)
    {
      fprintf (stderr, "saccade: unexpected argument '%s'\n", (*argv)[1]);
      return FALSE;
    }
  return TRUE;
}

static void
json_strings (JsonBuilder *b, const char *name, const char *const *s, int n)
{
  saccade_json_begin_array (b, name);
  for (int i = 0; i < n; i++)
    json_builder_add_string_value (b, s[i]);
  json_builder_end_array (b);
}

/* ---- example ----------------------------------------------------------------------------- */

/* Prints @s padded to @width terminal columns (a CJK label such as 猫 takes two), on the
 * left when @right is FALSE. */
static void
print_padded (const char *s, int width, gboolean right)
{
  int cols = 0;
  for (const char *p = s; *p; p = g_utf8_next_char (p))
    cols += g_unichar_iswide (g_utf8_get_char (p)) ? 2 : 1;
  if (right)
    printf ("%*s%s", MAX (0, width - cols), "", s);
  else
    printf ("%s%*s", s, MAX (0, width - cols), "");
}

/* A step's (rows, cols) table with row and column labels, @prec decimals. */
static void
print_table (const char *title, const double *x, int rows, int cols, const char *const *row_l,
             const char *const *col_l, int prec)
{
  printf ("\n%s\n      ", title);
  for (int j = 0; j < cols; j++)
    {
      printf (" ");
      print_padded (col_l[j], 9, TRUE);
    }
  printf ("\n");
  for (int i = 0; i < rows; i++)
    {
      printf ("  ");
      print_padded (row_l[i], 4, FALSE);
      for (int j = 0; j < cols; j++)
        printf (" %9.*f", prec, x[i * cols + j]);
      printf ("\n");
    }
}

static void
print_example_text (const ScLearnExample *ex, const ScLearnAttention *a)
{
  char title[160];
  const char *dims[SC_LEARN_MAX_DIM];
  g_auto (GStrv) dim_names = g_new0 (char *, SC_LEARN_MAX_DIM + 1);

  for (int c = 0; c < SC_LEARN_MAX_DIM; c++)
    dims[c] = dim_names[c] = g_strdup_printf ("[%d]", c);
  printf ("worked example %s: %s\n", ex->id, ex->title);
  printf ("softmax (Q Kᵀ / %s) V;  m = %d queries, n = %d keys, d_k = %d, d_v = %d\n",
          a->scale ? (a->temperature == 1 ? "√d_k" : "(√d_k · T)")
                   : (a->temperature == 1 ? "1" : "T"), a->m, a->n, a->d, a->dv);
  print_table ("Q", ex->q, a->m, a->d, ex->query_labels, dims, 4);
  print_table ("K", ex->k, a->n, a->d, ex->key_labels, dims, 4);
  print_table ("V", ex->v, a->n, a->dv, ex->key_labels, dims, 4);
  print_table ("1. raw scores Q Kᵀ (q_i · k_j)", a->raw, a->m, a->n, ex->query_labels,
               ex->key_labels, 4);
  if (a->scale)
    {
      g_snprintf (title, sizeof title, "2. scaled: ÷ √d_k = %.4f", sqrt ((double) a->d));
      print_table (title, a->scaled, a->m, a->n, ex->query_labels, ex->key_labels, 4);
    }
  else
    printf ("\n2. not scaled (--no-scale): the raw scores go to the softmax\n");
  if (a->temperature != 1)
    {
      g_snprintf (title, sizeof title, "   ÷ temperature T = %g: the softmax's input",
                  a->temperature);
      print_table (title, a->logits, a->m, a->n, ex->query_labels, ex->key_labels, 4);
    }
  print_table ("3. exponentials exp (s − row max) (max subtracted: the largest is 1; "
               "exp (s) = this × e^max)", a->exps, a->m, a->n, ex->query_labels,
               ex->key_labels, 4);
  printf ("   row max:");
  for (int i = 0; i < a->m; i++)
    printf (" %.4f", a->row_max[i]);
  printf ("   unshifted sums Σ exp (s):");
  for (int i = 0; i < a->m; i++)
    printf (" %.4f", a->exp_sum[i] * exp (a->row_max[i]));
  printf ("\n");
  print_table ("4. weights (each row sums to 1; columns do not)", a->weights, a->m, a->n,
               ex->query_labels, ex->key_labels, 4);
  print_table ("5. outputs z_i = Σ_j w_ij v_j", a->out, a->m, a->dv, ex->query_labels, dims, 4);
  if (a->n > 1)
    {
      printf ("\nOne weight passes %.2f when its score exceeds the other %d (all equal) by "
              "ln (%.2f · %d / %.2f) = %.4f in the softmax's input, %.4f in raw q·k\n",
              SC_LEARN_HARD_WEIGHT, a->n - 1, SC_LEARN_HARD_WEIGHT, a->n - 1,
              1 - SC_LEARN_HARD_WEIGHT, a->gap_needed, a->gap_needed_raw);
      for (int i = 0; i < a->m; i++)
        {
          printf ("  row ");
          print_padded (ex->query_labels[i], 4, FALSE);
          printf (" top key ");
          print_padded (ex->key_labels[a->top[i]], 4, FALSE);
          printf (" weight %.4f, gap to the next %.4f (needs %.4f)\n",
                  a->weights[i * a->n + a->top[i]], a->gap[i], a->gap_needed);
        }
    }
}

static void
print_example_json (const ScLearnExample *ex, const ScLearnAttention *a)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  saccade_json_string (b, "example", ex->id);
  saccade_json_string (b, "title", ex->title);
  saccade_json_int (b, "m", a->m);
  saccade_json_int (b, "n", a->n);
  saccade_json_int (b, "d_k", a->d);
  saccade_json_int (b, "d_v", a->dv);
  saccade_json_bool (b, "scale", a->scale);
  saccade_json_double (b, "temperature", a->temperature);
  saccade_json_double (b, "divisor", a->divisor);
  json_strings (b, "query_labels", ex->query_labels, a->m);
  json_strings (b, "key_labels", ex->key_labels, a->n);
  saccade_json_matrix (b, "q", ex->q, a->m, a->d);
  saccade_json_matrix (b, "k", ex->k, a->n, a->d);
  saccade_json_matrix (b, "v", ex->v, a->n, a->dv);
  saccade_json_matrix (b, "raw", a->raw, a->m, a->n);
  saccade_json_matrix (b, "scaled", a->scaled, a->m, a->n);
  saccade_json_matrix (b, "logits", a->logits, a->m, a->n);
  saccade_json_doubles (b, "row_max", a->row_max, a->m);
  saccade_json_matrix (b, "exps_shifted", a->exps, a->m, a->n);
  saccade_json_doubles (b, "exp_sum_shifted", a->exp_sum, a->m);
  saccade_json_matrix (b, "weights", a->weights, a->m, a->n);
  saccade_json_matrix (b, "out", a->out, a->m, a->dv);
  saccade_json_double (b, "hard_weight", SC_LEARN_HARD_WEIGHT);
  saccade_json_double (b, "gap_needed", a->gap_needed);
  saccade_json_double (b, "gap_needed_raw", a->gap_needed_raw);
  saccade_json_begin_array (b, "rows");
  for (int i = 0; i < a->m; i++)
    {
      json_builder_begin_object (b);
      saccade_json_int (b, "top", a->top[i]);
      saccade_json_double (b, "top_weight", a->weights[i * a->n + a->top[i]]);
      saccade_json_double (b, "gap", a->gap[i]);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  saccade_json_print (b);
}

static int
learn_example (int argc, char **argv)
{
  g_autofree char *id = NULL, *q = NULL, *k = NULL, *v = NULL;
  gboolean no_scale = FALSE, json = FALSE;
  double temperature = 1.0;
  GOptionEntry entries[] = {
    { "example", 0, 0, G_OPTION_ARG_STRING, &id, "000 (default: 它 over 猫/球/它) or 004",
      "ID" },
    { "no-scale", 0, 0, G_OPTION_ARG_NONE, &no_scale, "do not divide by √d_k", NULL },
    { "temperature", 0, 0, G_OPTION_ARG_DOUBLE, &temperature,
      "divide the softmax's input by T (1)", "T" },
    { "q", 0, 0, G_OPTION_ARG_STRING, &q, "your own Q: rows separated by ';' (with --k, --v)",
      "\"1 0; 0 1\"" },
    { "k", 0, 0, G_OPTION_ARG_STRING, &k, "your own K", "ROWS" },
    { "v", 0, 0, G_OPTION_ARG_STRING, &v, "your own V", "ROWS" },
    { NULL },
  };
  ScLearnExample ex;
  ScLearnAttention a;
  ScError err = { 0 };
  int rows[3], cols[3];
  char *labels[2][SC_LEARN_MAX_DIM] = { { 0 } };

  if (!parse ("- softmax (QKᵀ/√d_k) V step by step", entries, &json, &argc, &argv))
    return 2;
  if ((q || k || v) && !(q && k && v))
    {
      fprintf (stderr, "saccade: your own example needs all three of --q, --k and --v\n");
      return 2;
    }
  if (q && id)
    {
      fprintf (stderr, "saccade: --example and --q/--k/--v are alternatives\n");
      return 2;
    }
  if (q)
    {
      const char *text[3] = { q, k, v }, *names[3] = { "Q", "K", "V" };
      double *dst[3] = { ex.q, ex.k, ex.v };
      memset (&ex, 0, sizeof ex);
      for (int t = 0; t < 3; t++)
        if (sc_learn_parse_matrix (text[t], names[t], dst[t], &rows[t], &cols[t], &err))
          return fail_sc (&err);
      if (sc_learn_check_shapes (cols[0], rows[1], cols[1], rows[2], &err))
        return fail_sc (&err);
      ex.id = "custom";
      ex.title = "your Q, K, V";
      ex.m = rows[0], ex.n = rows[1], ex.d = cols[0], ex.dv = cols[2];
      for (int i = 0; i < ex.m; i++)
        ex.query_labels[i] = labels[0][i] = g_strdup_printf ("q%d", i + 1);
      for (int j = 0; j < ex.n; j++)
        ex.key_labels[j] = labels[1][j] = g_strdup_printf ("k%d", j + 1);
    }
  else if (sc_learn_example (id ? id : "000", &ex, &err))
    return fail_sc (&err);

  const ScStatus st = sc_learn_attention (ex.q, ex.k, ex.v, ex.m, ex.n, ex.d, ex.dv, !no_scale,
                                          temperature, &a, &err);
  if (st == SC_OK)
    {
      if (json)
        print_example_json (&ex, &a);
      else
        print_example_text (&ex, &a);
    }
  for (int i = 0; i < SC_LEARN_MAX_DIM; i++)
    g_free (labels[0][i]), g_free (labels[1][i]);
  return st == SC_OK ? 0 : fail_sc (&err);
}

/* ---- sqrt-dk ----------------------------------------------------------------------------- */

static int
learn_sqrt_dk (int argc, char **argv)
{
  int d_k = 64, keys = 2;
  double gap = NAN;
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "dk", 0, 0, G_OPTION_ARG_INT, &d_k, "the key dimension d_k (64)", "N" },
    { "gap", 0, 0, G_OPTION_ARG_DOUBLE, &gap,
      "the unscaled score gap (default 2√d_k: two standard deviations, 16 at d_k = 64)", "G" },
    { "keys", 0, 0, G_OPTION_ARG_INT, &keys, "keys in the row: the top one and equal others (2)",
      "N" },
    { NULL },
  };
  ScLearnSqrtDk s;
  ScError err = { 0 };

  if (!parse ("- the spread of q·k and the softmax's saturation", entries, &json, &argc, &argv))
    return 2;
  if (isnan (gap))
    gap = d_k > 0 ? 2 * sqrt ((double) d_k) : 0;
  if (sc_learn_sqrt_dk (d_k, gap, keys, &s, &err))
    return fail_sc (&err);
  if (json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      json_builder_begin_object (b);
      saccade_json_int (b, "d_k", s.d_k);
      saccade_json_int (b, "keys", s.n_keys);
      saccade_json_double (b, "gap", s.gap);
      saccade_json_double (b, "std_unscaled", s.std_unscaled);
      saccade_json_double (b, "std_scaled", s.std_scaled);
      saccade_json_double (b, "exp_gap", s.exp_gap);
      saccade_json_double (b, "p_unscaled", s.p_unscaled);
      saccade_json_double (b, "jacobian_unscaled", s.jacobian_unscaled);
      saccade_json_double (b, "gap_scaled", s.gap / s.std_unscaled);
      saccade_json_double (b, "p_scaled", s.p_scaled);
      saccade_json_double (b, "jacobian_scaled", s.jacobian_scaled);
      json_builder_end_object (b);
      saccade_json_print (b);
      return 0;
    }
  printf ("q, k with i.i.d. N(0, 1) entries, d_k = %d: Var (q·k) = d_k, std %.4g; "
          "q·k / √d_k has std %.4g\n", s.d_k, s.std_unscaled, s.std_scaled);
  printf ("one score %g above %d equal other%s (e^%g = %.4g):\n", s.gap, s.n_keys - 1,
          s.n_keys > 2 ? "s" : "", s.gap, s.exp_gap);
  printf ("  unscaled  gap %-8.4g largest weight %.10f  p (1 − p) = %.4g\n", s.gap,
          s.p_unscaled, s.jacobian_unscaled);
  printf ("  scaled    gap %-8.4g largest weight %.10f  p (1 − p) = %.4g\n",
          s.gap / s.std_unscaled, s.p_scaled, s.jacobian_scaled);
  printf ("p (1 − p) is the softmax Jacobian's diagonal ∂p/∂s: near 0 the gradient is gone.\n");
  return 0;
}

/* ---- heads ------------------------------------------------------------------------------- */

static int
learn_heads (int argc, char **argv)
{
  gint64 d_model = 512, heads = 8, d_k = 0;
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "d-model", 0, 0, G_OPTION_ARG_INT64, &d_model, "the model width (512)", "N" },
    { "heads", 0, 0, G_OPTION_ARG_INT64, &heads, "the number of heads h (8)", "H" },
    { NULL },
  };
  ScError err = { 0 };

  if (!parse ("- d_k = d_model / h", entries, &json, &argc, &argv))
    return 2;
  if (sc_learn_head_dim (d_model, heads, &d_k, &err))
    return fail_sc (&err);
  if (json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      json_builder_begin_object (b);
      saccade_json_int (b, "d_model", d_model);
      saccade_json_int (b, "heads", heads);
      saccade_json_int (b, "d_k", d_k);
      json_builder_end_object (b);
      saccade_json_print (b);
      return 0;
    }
  printf ("d_k = d_model / h = %" G_GINT64_FORMAT " / %" G_GINT64_FORMAT " = %" G_GINT64_FORMAT
          ": %" G_GINT64_FORMAT " heads × %" G_GINT64_FORMAT " = %" G_GINT64_FORMAT
          ", the same budget cut into heads\n", d_model, heads, d_k, heads, d_k, heads * d_k);
  return 0;
}

/* ---- kv-cache ---------------------------------------------------------------------------- */

static void
json_kv (JsonBuilder *b, const char *id, const char *name, const ScLearnKvCache *c)
{
  json_builder_begin_object (b);
  saccade_json_string (b, "preset", id);
  saccade_json_string (b, "name", name);
  saccade_json_int (b, "layers", c->layers);
  saccade_json_int (b, "kv_heads", c->kv_heads);
  saccade_json_int (b, "head_dim", c->head_dim);
  saccade_json_int (b, "len", c->len);
  saccade_json_int (b, "bytes_per_elem", c->bytes_per_elem);
  saccade_json_int (b, "bytes_per_token", c->bytes_per_token);
  saccade_json_int (b, "bytes", c->bytes);
  saccade_json_double (b, "gib", c->gib);
  saccade_json_double (b, "bandwidth_gbs", c->bandwidth_gbs);
  saccade_json_double (b, "read_seconds", c->read_seconds);
  json_builder_end_object (b);
}

static void
print_kv_json (const ScLearnKvPreset *rows, const ScLearnKvCache *c, int n_rows)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  saccade_json_begin_array (b, "rows");
  for (int i = 0; i < n_rows; i++)
    json_kv (b, rows[i].id, rows[i].name, &c[i]);
  json_builder_end_array (b);
  json_builder_end_object (b);
  saccade_json_print (b);
}

static void
print_kv_text (const ScLearnKvPreset *rows, const ScLearnKvCache *c, int n_rows)
{
  printf ("KV cache = 2 (K and V) × L × h_kv × d_head × len × bytes/elem; len %" G_GINT64_FORMAT
          ", %" G_GINT64_FORMAT " bytes per element", c[0].len, c[0].bytes_per_elem);
  if (c[0].bandwidth_gbs > 0)
    printf (", read once per generated token at %g GB/s", c[0].bandwidth_gbs);
  printf ("\n\n  %-34s %4s %5s %6s %16s %18s %10s %12s\n", "", "L", "h_kv", "d_head",
          "bytes/token", "bytes", "GiB", "read (ms)");
  for (int i = 0; i < n_rows; i++)
    {
      printf ("  %-34s %4" G_GINT64_FORMAT " %5" G_GINT64_FORMAT " %6" G_GINT64_FORMAT
              " %16" G_GINT64_FORMAT " %18" G_GINT64_FORMAT " %10.4f", rows[i].name,
              c[i].layers, c[i].kv_heads, c[i].head_dim, c[i].bytes_per_token, c[i].bytes,
              c[i].gib);
      if (c[i].bandwidth_gbs > 0)
        printf (" %12.4f\n", c[i].read_seconds * 1e3);
      else
        printf (" %12s\n", "-");
    }
}

static int
learn_kv_cache (int argc, char **argv)
{
  g_autofree char *preset = NULL;
  gint64 layers = UNSET, kv_heads = UNSET, head_dim = UNSET, len = 4096, bytes = 2;
  double bandwidth = 2039; /* A100 80GB SXM, the GPU of seed 004 (sc-learn.c cites it) */
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "preset", 0, 0, G_OPTION_ARG_STRING, &preset,
      "llama2-70b-mha, llama2-70b-gqa, llama2-70b-mqa or smollm2 (default: all)", "ID" },
    { "layers", 0, 0, G_OPTION_ARG_INT64, &layers, "layers L (overrides the preset)", "L" },
    { "kv-heads", 0, 0, G_OPTION_ARG_INT64, &kv_heads, "KV heads h_kv", "H" },
    { "head-dim", 0, 0, G_OPTION_ARG_INT64, &head_dim, "head dimension d_head", "D" },
    { "len", 0, 0, G_OPTION_ARG_INT64, &len, "tokens in the cache (4096)", "N" },
    BYTES_OPTION (&bytes),
    { "bandwidth-gbs", 0, 0, G_OPTION_ARG_DOUBLE, &bandwidth,
      "memory bandwidth in GB/s for the read time (2039: A100 80GB)", "GBS" },
    { NULL },
  };
  ScError err = { 0 };
  int n_presets;
  const ScLearnKvPreset *all = sc_learn_kv_presets (&n_presets), *one = NULL;

  if (!parse ("- KV-cache bytes = 2 × L × h_kv × d_head × len × bytes/elem", entries, &json,
              &argc, &argv))
    return 2;
  const gboolean custom = layers != UNSET || kv_heads != UNSET || head_dim != UNSET;
  if (preset && (one = sc_learn_kv_preset (preset)) == NULL)
    {
      fprintf (stderr, "saccade: kv-cache preset '%s': unknown (llama2-70b-mha, llama2-70b-gqa, "
                       "llama2-70b-mqa, smollm2)\n", preset);
      return 2;
    }
  if (custom && !one && (layers == UNSET || kv_heads == UNSET || head_dim == UNSET))
    {
      fprintf (stderr, "saccade: without --preset give all of --layers, --kv-heads and "
                       "--head-dim\n");
      return 2;
    }
  ScLearnKvPreset mine = { "custom", "your model", 0, 0, 0, 0, "the command line" };
  if (one)
    mine = *one;
  if (custom)
    {
      if (layers != UNSET)
        mine.layers = layers;
      if (kv_heads != UNSET)
        mine.kv_heads = kv_heads;
      if (head_dim != UNSET)
        mine.head_dim = head_dim;
      if (one)
        mine.id = "custom", mine.name = "the preset, changed";
    }
  const ScLearnKvPreset *rows = (one || custom) ? &mine : all;
  const int n_rows = (one || custom) ? 1 : n_presets;
  g_autofree ScLearnKvCache *c = g_new0 (ScLearnKvCache, n_rows);

  for (int i = 0; i < n_rows; i++)
    if (sc_learn_kv_cache (rows[i].layers, rows[i].kv_heads, rows[i].head_dim, len, bytes,
                           bandwidth, &c[i], &err))
      return fail_sc (&err);
  if (json)
    print_kv_json (rows, c, n_rows);
  else
    print_kv_text (rows, c, n_rows);
  return 0;
}

/* ---- flash ------------------------------------------------------------------------------- */

static void
print_flash_json (const ScLearnGpuPreset *rows, const ScLearnFlash *f, int n_rows)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  saccade_json_int (b, "n", f[0].n);
  saccade_json_int (b, "d", f[0].d);
  saccade_json_int (b, "bytes_per_elem", f[0].bytes_per_elem);
  saccade_json_int (b, "score_bytes", f[0].score_bytes);
  saccade_json_begin_array (b, "rows");
  for (int i = 0; i < n_rows; i++)
    {
      json_builder_begin_object (b);
      saccade_json_string (b, "preset", rows[i].id);
      saccade_json_string (b, "name", rows[i].name);
      saccade_json_int (b, "sram_bytes", f[i].sram_bytes);
      saccade_json_int (b, "m_elems", f[i].m_elems);
      saccade_json_int (b, "block_c", f[i].block_c);
      saccade_json_int (b, "block_r", f[i].block_r);
      saccade_json_int (b, "t_c", f[i].t_c);
      saccade_json_int (b, "t_r", f[i].t_r);
      saccade_json_int (b, "standard_elems", f[i].standard_elems);
      saccade_json_int (b, "flash_elems", f[i].flash_elems);
      saccade_json_double (b, "ratio", f[i].ratio);
      saccade_json_double (b, "bandwidth_gbs", f[i].bandwidth_gbs);
      saccade_json_double (b, "standard_seconds", f[i].standard_seconds);
      saccade_json_double (b, "flash_seconds", f[i].flash_seconds);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  saccade_json_print (b);
}

static void
print_flash_text (const ScLearnGpuPreset *rows, const ScLearnFlash *f, int n_rows)
{
  printf ("one head of one layer, N = %" G_GINT64_FORMAT ", d = %" G_GINT64_FORMAT
          ", %" G_GINT64_FORMAT " bytes per element\n", f[0].n, f[0].d, f[0].bytes_per_elem);
  printf ("the N × N score matrix: %" G_GINT64_FORMAT " bytes (%.4g MiB)\n", f[0].score_bytes,
          (double) f[0].score_bytes / (1 << 20));
  printf ("HBM element accesses: standard 4Nd + 4N²; FlashAttention 3Nd + 2N + T_c (3Nd + 4N), "
          "T_c = ⌈N / B_c⌉, B_c = ⌈M / 4d⌉\n\n");
  printf ("  %-26s %9s %8s %5s %5s %14s %14s %7s %13s %13s\n", "", "SRAM (B)", "M", "B_c", "T_c",
          "standard", "flash", "ratio", "std (µs)", "flash (µs)");
  /* Without a preset there is no bandwidth: the times print as "-" (JSON: null). */
  for (int i = 0; i < n_rows; i++)
    {
      printf ("  %-26s %9" G_GINT64_FORMAT " %8" G_GINT64_FORMAT " %5" G_GINT64_FORMAT
              " %5" G_GINT64_FORMAT " %14" G_GINT64_FORMAT " %14" G_GINT64_FORMAT " %7.3f",
              rows[i].name, f[i].sram_bytes, f[i].m_elems, f[i].block_c, f[i].t_c,
              f[i].standard_elems, f[i].flash_elems, f[i].ratio);
      if (f[i].bandwidth_gbs > 0)
        printf (" %13.3f %13.3f\n", f[i].standard_seconds * 1e6, f[i].flash_seconds * 1e6);
      else
        printf (" %13s %13s\n", "-", "-");
    }
}

static int
learn_flash (int argc, char **argv)
{
  g_autofree char *preset = NULL;
  gint64 n = 4096, d = 64, sram_kb = UNSET, bytes = 2;
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "n", 0, 0, G_OPTION_ARG_INT64, &n, "sequence length N (4096)", "N" },
    { "d", 0, 0, G_OPTION_ARG_INT64, &d, "head dimension d (64)", "D" },
    { "sram-kb", 0, 0, G_OPTION_ARG_INT64, &sram_kb,
      "on-chip SRAM per SM in KiB (overrides the preset's)", "M" },
    { "preset", 0, 0, G_OPTION_ARG_STRING, &preset, "a100, h100 or h200 (default: all)", "ID" },
    BYTES_OPTION (&bytes),
    { NULL },
  };
  ScError err = { 0 };
  int n_presets;
  const ScLearnGpuPreset *all = sc_learn_gpu_presets (&n_presets), *one = NULL;

  if (!parse ("- FlashAttention's HBM traffic against standard attention (Dao et al. 2022)",
              entries, &json, &argc, &argv))
    return 2;
  if (preset && (one = sc_learn_gpu_preset (preset)) == NULL)
    {
      fprintf (stderr, "saccade: flash preset '%s': unknown (a100, h100, h200)\n", preset);
      return 2;
    }
  if (sram_kb != UNSET && (sram_kb < 1 || sram_kb > G_MAXINT64 / 1024))
    {
      fprintf (stderr, "saccade: --sram-kb %" G_GINT64_FORMAT ": must be a positive size\n",
               sram_kb);
      return 1;
    }
  ScLearnGpuPreset mine = { "custom", "your SRAM", 0, 0, 0, 0, "the command line" };
  if (one)
    mine = *one;
  if (sram_kb != UNSET)
    {
      mine.sram_bytes_per_sm = sram_kb * 1024;
      mine.id = "custom";
      mine.name = one ? "the preset, SRAM changed" : "your SRAM";
    }
  const ScLearnGpuPreset *rows = (one || sram_kb != UNSET) ? &mine : all;
  const int n_rows = (one || sram_kb != UNSET) ? 1 : n_presets;
  g_autofree ScLearnFlash *f = g_new0 (ScLearnFlash, n_rows);

  for (int i = 0; i < n_rows; i++)
    if (sc_learn_flash (n, d, rows[i].sram_bytes_per_sm, bytes, rows[i].hbm_gbs, &f[i], &err))
      return fail_sc (&err);
  if (json)
    print_flash_json (rows, f, n_rows);
  else
    print_flash_text (rows, f, n_rows);
  return 0;
}

/* ---- the verb ---------------------------------------------------------------------------- */

static const struct {
  const char *name;
  int (*run) (int argc, char **argv);
  const char *summary;
} topics[] = {
  { "example", learn_example, "a worked attention example, every step (seeds 000, 004)" },
  { "sqrt-dk", learn_sqrt_dk, "why scores are divided by √d_k" },
  { "heads", learn_heads, "d_k = d_model / h" },
  { "kv-cache", learn_kv_cache, "the KV cache's bytes and the time to read it" },
  { "flash", learn_flash, "FlashAttention's HBM traffic against standard attention" },
};

int
saccade_cmd_learn (int argc, char **argv)
{
  const gboolean help = argc >= 2 && strcmp (argv[1], "--help") == 0;
  FILE *out = help ? stdout : stderr;

  if (argc >= 2)
    for (size_t i = 0; i < G_N_ELEMENTS (topics); i++)
      if (strcmp (argv[1], topics[i].name) == 0)
        return topics[i].run (argc - 1, argv + 1);
  if (argc >= 2 && !help)
    fprintf (stderr, "saccade: learn: unknown topic '%s'\n\n", argv[1]);
  fprintf (out, "Usage: saccade learn TOPIC [OPTIONS...] [--json]\n\nTopics:\n");
  for (size_t i = 0; i < G_N_ELEMENTS (topics); i++)
    fprintf (out, "  %-10s %s\n", topics[i].name, topics[i].summary);
  fprintf (out, "\n`saccade learn TOPIC --help` describes a topic's options.\n");
  return help ? 0 : 2;
}
