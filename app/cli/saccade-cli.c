/* saccade-cli.c — helpers shared by the CLI verbs (see saccade-cli.h). */
#define G_LOG_DOMAIN "saccade-cli"

#include "app/cli/saccade-cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
saccade_cli_common_add (GOptionContext *ctx, SaccadeCliCommon *common)
{
  GOptionEntry entries[] = {
    { "model", 'm', 0, G_OPTION_ARG_FILENAME, &common->model_path,
      "GGUF model file (default: $SACCADE_MODEL, else the fetched SmolLM2-135M)", "FILE" },
    SACCADE_CLI_JSON_OPTION (&common->json),
    SACCADE_CLI_THREADS_OPTION (&common->threads),
    { "backend", 0, 0, G_OPTION_ARG_STRING, &common->backend,
      "Compute backend: cpu, cpu-ref (scalar, slow; for checking), cuda, or auto (the "
      "default: CUDA when built in and a GPU answers, else cpu)", "NAME" },
    { "reference", 0, 0, G_OPTION_ARG_NONE, &common->reference,
      "Same as --backend cpu-ref", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_option_context_add_main_entries (ctx, entries, NULL);
}

void
saccade_cli_common_clear (SaccadeCliCommon *common)
{
  g_clear_pointer (&common->model_path, g_free);
  g_clear_pointer (&common->backend, g_free);
}

const char *
saccade_cli_model_path (const SaccadeCliCommon *common)
{
  return saccade_model_path (common->model_path);
}

const char *
saccade_cli_backend_name (const SaccadeCliCommon *common, GError **error)
{
  if (common->reference)
    {
      if (common->backend != NULL && strcmp (common->backend, "cpu-ref") != 0)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--reference means --backend cpu-ref; it cannot go with --backend %s",
                       common->backend);
          return NULL;
        }
      return "cpu-ref";
    }
  if (common->backend == NULL)
    return SACCADE_BACKEND_AUTO;
  return saccade_backend_check_name (common->backend, error) ? common->backend : NULL;
}

ScModel *
saccade_cli_load_model (const SaccadeCliCommon *common, GError **error)
{
  if (saccade_cli_backend_name (common, error) == NULL)
    return NULL;
  return saccade_model_load (saccade_cli_model_path (common), common->threads, error);
}

ScBackend *
saccade_cli_backend (const SaccadeCliCommon *common, GError **error)
{
  g_autofree char *notice = NULL;
  const char *name;
  ScBackend *b;

  if ((name = saccade_cli_backend_name (common, error)) == NULL)
    return NULL;
  b = saccade_backend_new (name, common->threads, common->needs, &notice, error);
  /* stderr, so that --json's stdout stays one JSON document. Said when the user asked for
   * a backend, or when a GPU is there but auto could not use it; the default on a machine
   * without any CUDA device (the ordinary CPU machine, CUDA build or not) stays silent. */
  if (notice != NULL && (common->backend != NULL || saccade_backend_have_gpu ()))
    fprintf (stderr, "saccade: %s\n", notice);
  return b;
}

gboolean
saccade_cli_session_open (SaccadeCliSession *s, const SaccadeCliCommon *common, ScModel *model,
                          GError **error)
{
  ScError err = { 0 };

  s->session = NULL;
  if ((s->backend = saccade_cli_backend (common, error)) == NULL)
    return FALSE;
  if (sc_session_new (model, s->backend, &s->session, &err) != SC_OK)
    {
      saccade_set_error_from_sc (error, &err);
      saccade_cli_session_close (s);
      return FALSE;
    }
  return TRUE;
}

void
saccade_cli_session_close (SaccadeCliSession *s)
{
  g_clear_pointer (&s->session, sc_session_free);
  g_clear_pointer (&s->backend, sc_backend_free);
}

char *
saccade_cli_read_file (const char *file, gsize *len, GError **error)
{
  char *contents = NULL;

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
  if (!g_file_get_contents (file, &contents, len, error))
    return NULL;
  return contents;
}

gboolean
saccade_cli_parse_options (GOptionContext *ctx, int *argc, char ***argv)
{
  g_autoptr (GError) error = NULL;

  if (!g_option_context_parse (ctx, argc, argv, &error))
    {
      fprintf (stderr, "saccade: %s\n", error->message);
      return FALSE;
    }
  return TRUE;
}

gboolean
saccade_cli_parse_json_only (GOptionContext *ctx, gboolean *json, int *argc, char ***argv)
{
  const GOptionEntry entries[] = {
    SACCADE_CLI_JSON_OPTION (json),
    G_OPTION_ENTRY_NULL
  };

  g_option_context_add_main_entries (ctx, entries, NULL);
  return saccade_cli_parse_options (ctx, argc, argv);
}

int
saccade_cli_fail (GError *error)
{
  fprintf (stderr, "saccade: %s\n", error->message);
  g_error_free (error);
  return 1;
}

int
saccade_cli_fail_sc (const ScError *err)
{
  fprintf (stderr, "saccade: %s\n", err->message);
  return 1;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

double
saccade_median (double *v, int n)
{
  qsort (v, (size_t) n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void
saccade_json_bench_sweep (JsonBuilder *b, int repeats, const SaccadeBenchTime *times,
                          int n_times, const SaccadeBenchRatio *ratios, int n_ratios)
{
  saccade_json_int (b, "repeats", repeats);
  for (int i = 0; i < n_times; i++)
    saccade_json_double (b, times[i].name, times[i].seconds);
  for (int i = 0; i < n_ratios; i++)
    saccade_json_double (b, ratios[i].name,
                         times[ratios[i].num].seconds / times[ratios[i].den].seconds);
}

/* The lengths of --sizes @text (NULL: SACCADE_BENCH_SIZES_DEFAULT), @n of them; NULL after
 * saying which is under @min. */
static int *
bench_sizes (const char *text, int min, int *n)
{
  g_auto (GStrv) list = g_strsplit (text != NULL ? text : SACCADE_BENCH_SIZES_DEFAULT, ",", -1);
  g_autofree int *sizes = NULL;

  *n = (int) g_strv_length (list);
  sizes = g_new0 (int, MAX (*n, 1));
  for (int i = 0; i < *n; i++)
    if ((sizes[i] = atoi (list[i])) < min)
      {
        if (min > 1)
          fprintf (stderr, "saccade: bad size '%s' (at least %d tokens)\n", list[i], min);
        else
          fprintf (stderr, "saccade: bad size '%s'\n", list[i]);
        return NULL;
      }
  return g_steal_pointer (&sizes);
}

GArray *
saccade_bench_prompt (ScModel *model, const char *prose, int n, GError **error)
{
  g_autoptr (GString) text = g_string_new (NULL);
  g_autoptr (GArray) ids = NULL;

  while (ids == NULL || (int) ids->len < n)
    {
      g_string_append (text, prose);
      g_clear_pointer (&ids, g_array_unref);
      if ((ids = saccade_tokenize (model, text->str, -1, FALSE, error)) == NULL)
        return NULL;
    }
  return g_steal_pointer (&ids);
}

gboolean
saccade_bench_parse (SaccadeBench *bench, const char *summary, const char *reps_help,
                     const GOptionEntry *entries, int min, int *argc, char ***argv)
{
  g_autoptr (GOptionContext) ctx = g_option_context_new (summary);
  /* GLib copies the entries; the strings they point to are static or outlive the parse. */
  const GOptionEntry own[] = {
    { "sizes", 'n', 0, G_OPTION_ARG_STRING, &bench->sizes,
      "Prompt lengths (default " SACCADE_BENCH_SIZES_DEFAULT ")", "N,N" },
    { "reps", 'r', 0, G_OPTION_ARG_INT, &bench->reps, reps_help, "R" },
    { "weight-cache", 0, 0, G_OPTION_ARG_INT, &bench->weight_cache_mb,
      "MiB of weights the cpu backend keeps decoded from their second use on (default: a "
      "quarter of the memory, at most 4096; 0: decode them in every product)", "MB" },
    G_OPTION_ENTRY_NULL
  };

  bench->weight_cache_mb = G_MININT;
  g_option_context_add_main_entries (ctx, own, NULL);
  if (entries != NULL)
    g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &bench->common);
  if (!saccade_cli_parse_options (ctx, argc, argv))
    return FALSE;
  bench->reps = MAX (bench->reps, 1);
  if (bench->weight_cache_mb != G_MININT && bench->weight_cache_mb < 0)
    {
      fprintf (stderr, "saccade: bad --weight-cache %d (MiB, 0 or more)\n", bench->weight_cache_mb);
      return FALSE;
    }
  if ((bench->lengths = bench_sizes (bench->sizes, min, &bench->n_lengths)) == NULL)
    return FALSE;
  bench->longest = 0;
  for (int i = 0; i < bench->n_lengths; i++)
    bench->longest = MAX (bench->longest, bench->lengths[i]);
  return TRUE;
}

gboolean
saccade_bench_open (SaccadeBench *bench, const char *prose, GError **error)
{
  /* explicit, so that what the verbs report is the count they ran with */
  if (bench->common.threads <= 0)
    bench->common.threads = (int) g_get_num_processors ();
  if ((bench->model = saccade_cli_load_model (&bench->common, error)) == NULL)
    return FALSE;
  if ((bench->ids = saccade_bench_prompt (bench->model, prose, bench->longest, error)) == NULL)
    return FALSE;
  if (!saccade_cli_session_open (&bench->session, &bench->common, bench->model, error))
    return FALSE;
  if (bench->weight_cache_mb != G_MININT)
    sc_backend_cpu_set_weight_cache (bench->session.backend,
                                     (size_t) bench->weight_cache_mb << 20);
  return TRUE;
}

void
saccade_bench_print_header (const SaccadeBench *bench)
{
  printf ("model %s, %s backend, %d threads; medians of %d rounds\n",
          sc_model_info (bench->model)->name, sc_backend_name (bench->session.backend),
          bench->common.threads, bench->reps);
}

double
saccade_bench_now (void)
{
  return g_get_monotonic_time () / 1e6;
}

gboolean
saccade_bench_rotate (int reps, int n_ways, SaccadeBenchWay way, gpointer data, double *t,
                      ScError *err)
{
  for (int r = 0; r < reps; r++)
    for (int k = 0; k < n_ways; k++)
      {
        const int which = (r + k) % n_ways;
        const double t0 = saccade_bench_now ();

        if (!way (which, data, err))
          return FALSE;
        t[which * reps + r] = saccade_bench_now () - t0;
      }
  return TRUE;
}

void
saccade_bench_clear (SaccadeBench *bench)
{
  saccade_cli_common_clear (&bench->common);
  g_clear_pointer (&bench->sizes, g_free);
  g_clear_pointer (&bench->lengths, g_free);
  g_clear_pointer (&bench->ids, g_array_unref);
  saccade_cli_session_close (&bench->session);
  g_clear_pointer (&bench->model, sc_model_free);
}

void
saccade_cli_print_study_source (gboolean reused, gint64 study_id, double seconds,
                                int decimals, const char *db_path, const char *warning)
{
  if (reused)
    printf ("reused study %" G_GINT64_FORMAT " from %s (--recompute to compute again)\n",
            study_id, db_path);
  else if (study_id > 0)
    printf ("computed now in %.*f s, stored as study %" G_GINT64_FORMAT " in %s\n", decimals,
            seconds, study_id, db_path);
  else
    printf ("computed now in %.*f s (not stored%s%s)\n", decimals, seconds,
            warning != NULL ? ": " : "", warning != NULL ? warning : "");
}

gboolean
saccade_cli_target_parse (ScModel *model, const SaccadeCliTarget *t, int *target, int *contrast,
                          GError **error)
{
  if (!saccade_parse_token (model, "--target", t->target, target, error)
      || !saccade_parse_token (model, "--contrast", t->contrast, contrast, error))
    return FALSE;
  if (*contrast >= 0 && *contrast == *target)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--contrast names the target itself (token %d): a logit difference needs "
                   "two tokens", *target);
      return FALSE;
    }
  return TRUE;
}

void
saccade_cli_target_clear (SaccadeCliTarget *t)
{
  g_clear_pointer (&t->target, g_free);
  g_clear_pointer (&t->contrast, g_free);
}

void
saccade_cli_progress_bar (double fraction, gpointer user_data)
{
  const int width = 30, fill = (int) (fraction * width);

  (void) user_data;
  fprintf (stderr, "\r[");
  for (int i = 0; i < width; i++)
    fputc (i < fill ? '#' : '.', stderr);
  fprintf (stderr, "] %3.0f%% ", 100.0 * fraction);
  fflush (stderr);
}

SaccadeProgress
saccade_cli_progress (void)
{
  return isatty (STDERR_FILENO) ? saccade_cli_progress_bar : NULL;
}

void
saccade_cli_progress_end (void)
{
  if (isatty (STDERR_FILENO))
    {
      fprintf (stderr, "\r\033[K");
      fflush (stderr);
    }
}
