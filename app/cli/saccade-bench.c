/* saccade-bench.c — `saccade bench`: prompt-processing throughput, capture cost, peak RSS,
 * projection GFLOP/s against the machine's sgemm peak, and llama.cpp beside us.
 *
 * Method (docs/benchmarks.md): a prompt of exactly n tokens (fixed English prose, repeated
 * and truncated), logits for the last position only (what llama.cpp's prompt processing
 * computes). For each n: one warm-up, then `reps` rounds, each timing one run without
 * capture and one run capturing every head into memory (interleaved, so drift hits both
 * alike), in alternating order. Reported: medians; the capture overhead is the median of
 * the rounds' paired ratios. Where the time goes comes from ScForwardStats. The peer (llama.cpp through llama-cpp-python) runs as a child
 * process with the same thread count, in the same invocation, after our runs.
 */
#define G_LOG_DOMAIN "saccade-bench"

#include "app/cli/saccade-cli.h"

#include "engine/backend/sc-blas.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

/* SACCADE_BENCH_PROSE and two sentences more */
#define BENCH_PROSE                                                                           \
  SACCADE_BENCH_PROSE                                                                         \
  "Whether these weights explain a model's decisions is still debated, so careful studies "   \
  "compare them with the effect of removing tokens or heads. "

/* Capture to memory: every head copied into one preallocated (L, H, n, n) block. */
typedef struct {
  float *store;
  int n_heads;
  size_t head_floats;
} MemCapture;

/* The attention op writes each layer's heads straight into the block (zero copy); observe
 * only checks that they landed where expected. */
static float *
mem_layer_buffer (void *user, int layer, int n_q, int n_k)
{
  MemCapture *mc = user;
  return mc->store + (size_t) layer * mc->n_heads * mc->head_floats;
}

static bool
mem_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  MemCapture *mc = user;
  return probs == mc->store + ((size_t) layer * mc->n_heads + head) * mc->head_floats;
}

/* The machine's sgemm peak: median of 5 square 1024 products on the configured threads. */
static double
sgemm_peak_gflops (void)
{
  const int N = 1024;
  float *a = g_new (float, (gsize) N * N), *b = g_new (float, (gsize) N * N),
        *c = g_new (float, (gsize) N * N);
  double t[5];
  int i;

  for (i = 0; i < N * N; i++)
    a[i] = b[i] = (float) ((i % 7) - 3) * 0.01f;
  sc_sgemm (true, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
  for (i = 0; i < 5; i++)
    {
      gint64 t0 = g_get_monotonic_time ();
      sc_sgemm (true, N, N, N, 1.0f, a, N, b, N, 0.0f, c, N);
      t[i] = (g_get_monotonic_time () - t0) / 1e6;
    }
  g_free (a);
  g_free (b);
  g_free (c);
  return 2.0 * N * N * (double) N / saccade_median (t, 5) / 1e9;
}

typedef struct {
  int n;
  double off_tok_s, mem_tok_s, capture_overhead, proj_gflops, peer_tok_s;
  double matmul_share, attention_share; /* of the no-capture run's time */
  long peak_rss_kb;
} BenchRow;

/* Runs the llama.cpp peer script; fills peer_tok_s of @rows from its JSON lines. */
static void
run_peer (const char *model_path, int threads, int reps, BenchRow *rows, int n_rows,
          char **peer_version)
{
  g_autoptr (GPtrArray) args = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *out = NULL, *errout = NULL;
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) lines = NULL;
  int status = 0, i;

  g_ptr_array_add (args, g_strdup ("python3"));
  g_ptr_array_add (args, g_build_filename (SACCADE_SOURCE_DIR, "tests", "reference",
                                           "bench_llamacpp.py", NULL));
  g_ptr_array_add (args, g_strdup (model_path));
  g_ptr_array_add (args, g_strdup_printf ("--threads=%d", threads));
  g_ptr_array_add (args, g_strdup_printf ("--reps=%d", reps));
  g_ptr_array_add (args, g_strdup ("--n"));
  for (i = 0; i < n_rows; i++)
    g_ptr_array_add (args, g_strdup_printf ("%d", rows[i].n));
  g_ptr_array_add (args, NULL);
  if (!g_spawn_sync (NULL, (char **) args->pdata, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out,
                     &errout, &status, &error)
      || !g_spawn_check_wait_status (status, &error))
    {
      fprintf (stderr, "saccade bench: the llama.cpp peer did not run (%s); install it with "
                       "`pip install llama-cpp-python==0.3.36`\n", error->message);
      return;
    }
  lines = g_strsplit (out, "\n", -1);
  for (i = 0; lines[i] != NULL; i++)
    {
      g_autoptr (JsonParser) p = json_parser_new ();
      JsonObject *o;
      int r;
      if (*lines[i] == '\0' || !json_parser_load_from_data (p, lines[i], -1, NULL))
        continue;
      o = json_node_get_object (json_parser_get_root (p));
      if (o == NULL)
        continue;
      if (json_object_has_member (o, "llama_cpp_python_version"))
        *peer_version = g_strdup (json_object_get_string_member (o, "llama_cpp_python_version"));
      if (!json_object_has_member (o, "median_tok_per_s"))
        continue;
      for (r = 0; r < n_rows; r++)
        if (rows[r].n == json_object_get_int_member (o, "n"))
          rows[r].peer_tok_s = json_object_get_double_member (o, "median_tok_per_s");
    }
}

int
saccade_cmd_bench (int argc, char **argv)
{
  g_auto (SaccadeBench) bench = { .reps = 5 };
  gboolean peer = FALSE;
  const GOptionEntry entries[] = {
    { "peer", 0, 0, G_OPTION_ARG_NONE, &peer,
      "Also measure llama.cpp (llama-cpp-python) on the same model", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GError) error = NULL;
  g_autofree char *peer_version = NULL;
  g_autofree BenchRow *rows = NULL;
  const ScModelInfo *in;
  ScBackend *inner;
  ScSession *session;
  ScError err = { 0 };
  double peak;
  int n_rows, reps, r, i;

  if (!saccade_bench_parse (&bench, "- throughput benchmark", "Timed runs per size (default 5)",
                            entries, 1, &argc, &argv))
    return 2;
  reps = bench.reps;
  n_rows = bench.n_lengths;
  rows = g_new0 (BenchRow, n_rows);
  for (i = 0; i < n_rows; i++)
    rows[i].n = bench.lengths[i];
  if (!saccade_bench_open (&bench, BENCH_PROSE, &error))
    goto fail_bench;
  in = sc_model_info (bench.model);
  inner = bench.session.backend, session = bench.session.session;
  peak = sgemm_peak_gflops ();

  for (r = 0; r < n_rows; r++)
    {
      const int n = rows[r].n;
      MemCapture mc = { NULL, (int) in->n_heads, (size_t) n * n };
      ScObserver obs = { NULL, mem_observe, &mc, mem_layer_buffer };
      ScForwardStats stats = { 0 };
      ScForwardOptions off = { .stats = &stats }, mem = { .observer = &obs, .stats = &stats };
      g_autofree double *t_off = g_new (double, reps), *t_mem = g_new (double, reps),
                        *gf = g_new (double, reps), *mm = g_new (double, reps),
                        *at = g_new (double, reps), *ratio = g_new (double, reps);
      g_autofree float *logits = g_new (float, in->n_vocab);
      const int32_t *ids = (const int32_t *) bench.ids->data;
      struct rusage ru;

      mc.store = g_try_malloc ((gsize) in->n_layers * in->n_heads * n * n * sizeof (float));
      if (mc.store == NULL)
        {
          fprintf (stderr, "saccade: not enough memory to capture %d tokens\n", n);
          break;
        }
      /* warm-up: touches every page of the capture store and the session buffers */
      if (sc_forward (session, ids, n, &mem, logits, &err) != SC_OK)
        {
          saccade_set_error_from_sc (&error, &err);
          g_free (mc.store);
          goto fail_bench;
        }
      /* Paired rounds; the order alternates (off, mem), (mem, off), ... so drift during
       * a round weighs on both alike. */
      for (i = 0; i < reps; i++)
        {
          int k;
          for (k = 0; k < 2; k++)
            {
              const gboolean capture = (k == 0) == (i % 2 == 1);
              gint64 t0;
              memset (&stats, 0, sizeof stats);
              t0 = g_get_monotonic_time ();
              sc_forward (session, ids, n, capture ? &mem : &off, logits, &err);
              if (capture)
                t_mem[i] = (g_get_monotonic_time () - t0) / 1e6;
              else
                {
                  t_off[i] = (g_get_monotonic_time () - t0) / 1e6;
                  gf[i] = stats.matmul_flops / stats.matmul_s / 1e9;
                  mm[i] = stats.matmul_s / t_off[i];
                  at[i] = stats.attention_s / t_off[i];
                }
            }
          ratio[i] = t_mem[i] / t_off[i];
        }
      getrusage (RUSAGE_SELF, &ru);
      rows[r].off_tok_s = n / saccade_median (t_off, reps);
      rows[r].mem_tok_s = n / saccade_median (t_mem, reps);
      /* the median of the paired ratios: robust to drift between rounds */
      rows[r].capture_overhead = saccade_median (ratio, reps) - 1.0;
      rows[r].proj_gflops = saccade_median (gf, reps);
      rows[r].matmul_share = saccade_median (mm, reps);
      rows[r].attention_share = saccade_median (at, reps);
      rows[r].peak_rss_kb = ru.ru_maxrss;
      g_free (mc.store);
    }
  g_clear_pointer (&bench.session.session, sc_session_free);

  if (peer)
    run_peer (saccade_cli_model_path (&bench.common), bench.common.threads, reps, rows, n_rows,
              &peer_version);

  if (bench.common.json)
    {
      g_autoptr (JsonBuilder) b = json_builder_new ();
      json_builder_begin_object (b);
      saccade_json_int (b, "threads", bench.common.threads);
      saccade_json_int (b, "reps", reps);
      saccade_json_double (b, "sgemm_peak_gflops", peak);
      saccade_json_string (b, "backend", sc_backend_description (inner));
      saccade_json_begin_array (b, "sizes");
      for (r = 0; r < n_rows; r++)
        {
          json_builder_begin_object (b);
          saccade_json_int (b, "n", rows[r].n);
          saccade_json_double (b, "tok_per_s_capture_off", rows[r].off_tok_s);
          saccade_json_double (b, "tok_per_s_capture_memory", rows[r].mem_tok_s);
          saccade_json_double (b, "capture_overhead", rows[r].capture_overhead);
          saccade_json_double (b, "projection_gflops", rows[r].proj_gflops);
          saccade_json_double (b, "projection_time_share", rows[r].matmul_share);
          saccade_json_double (b, "attention_time_share", rows[r].attention_share);
          saccade_json_int (b, "peak_rss_kb", rows[r].peak_rss_kb);
          if (rows[r].peer_tok_s > 0)
            {
              saccade_json_double (b, "llamacpp_tok_per_s", rows[r].peer_tok_s);
              saccade_json_double (b, "ratio_vs_llamacpp", rows[r].off_tok_s / rows[r].peer_tok_s);
            }
          json_builder_end_object (b);
        }
      json_builder_end_array (b);
      json_builder_end_object (b);
      saccade_json_print (b);
    }
  else
    {
      printf ("%s, %d thread%s, median of %d runs; sgemm peak %.1f GFLOP/s\n",
              sc_backend_description (inner), bench.common.threads,
              bench.common.threads == 1 ? "" : "s", reps, peak);
      if (peer_version != NULL)
        printf ("peer: llama.cpp via llama-cpp-python %s\n", peer_version);
      printf ("    n  tok/s(no capture)  tok/s(capture)  overhead  proj GFLOP/s  time in proj/attn"
              "  peak RSS  llama.cpp tok/s  ours/llama.cpp\n");
      for (r = 0; r < n_rows; r++)
        {
          printf ("%5d  %17.1f  %14.1f  %7.1f%%  %12.1f  %7.0f%% /%4.0f%%  %5ld MB", rows[r].n,
                  rows[r].off_tok_s, rows[r].mem_tok_s, 100.0 * rows[r].capture_overhead,
                  rows[r].proj_gflops, 100.0 * rows[r].matmul_share,
                  100.0 * rows[r].attention_share, rows[r].peak_rss_kb / 1024);
          if (rows[r].peer_tok_s > 0)
            printf ("  %15.1f  %14.2f", rows[r].peer_tok_s, rows[r].off_tok_s / rows[r].peer_tok_s);
          printf ("\n");
        }
    }
  return 0;

fail_bench:
  fprintf (stderr, "saccade: %s\n", error->message);
  return 1;
}
