/* saccade-bench-store.c — `saccade bench-store`: what storing captures costs.
 *
 * Three measurements, in one invocation, on the disk that holds --dir (default: the
 * folder of the default capture database), medians of --reps rounds (docs/benchmarks.md,
 * "Capture store"):
 *   1. Capture persisted / capture to memory: one forward pass over a prompt of exactly n
 *      tokens (default 512) with every head (i) copied into preallocated memory, (ii)
 *      stored through sc-store (begin, observer, commit: durable in the WAL). Rounds
 *      interleave the two; the store is closed after each stored run (untimed), so its
 *      background checkpoint never overlaps a timed run. The checkpoint's own time is
 *      reported too.
 *   2. SQLite ingest rate / sequential write rate of the same disk: the heads of one
 *      n-token run (a fixed causal probability matrix, 270 times) pushed into a capture
 *      as fast as it takes them, BLOB bytes per second to the durable commit (and to the
 *      end of the checkpoint); against `dd if=/dev/zero of=DIR/dd.tmp bs=1M count=SIZE
 *      conv=fdatasync` writing the same number of bytes, timed by dd itself, in the same
 *      rounds.
 *   3. Bytes per run: the database file's growth per stored run at n = 128 and n = 512.
 */
#define G_LOG_DOMAIN "saccade-bench"

#include "app/cli/saccade-cli.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/store/sc-store.h"

#define PROSE                                                                                  \
  "A capture store keeps every attention head of every run, so that a question asked today " \
  "about one sentence can be asked again tomorrow about a thousand, without running the "    \
  "model a second time. Each head is a matrix of probabilities, one row per query token, "    \
  "and a causal model leaves the upper triangle empty, which the store does not write. "

static double
now_s (void)
{
  return g_get_monotonic_time () / 1e6;
}

static gint64
file_bytes (const char *path)
{
  struct stat sb;
  return stat (path, &sb) == 0 ? (gint64) sb.st_size : 0;
}

static void
remove_db (const char *path)
{
  static const char *suffix[] = { "", "-wal", "-shm", "-journal" };
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (suffix); i++)
    {
      g_autofree char *f = g_strconcat (path, suffix[i], NULL);
      g_unlink (f);
    }
}

/* Capture to memory: every head copied into one preallocated (L, H, n, n) block. */
typedef struct {
  float *block;
  int n_heads;
  size_t head_floats;
} MemCapture;

static bool
mem_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  MemCapture *mc = user;
  memcpy (mc->block + ((size_t) layer * mc->n_heads + head) * mc->head_floats, probs,
          (size_t) n_q * n_k * sizeof (float));
  return true;
}

/* --compress: the stores are written with compressed heads (ScStoreOptions.compress_heads) */
static gboolean compress_heads;

static ScStore *
open_store (const char *path, ScError *err)
{
  ScStoreOptions opt = { .writable = TRUE, .compress_heads = compress_heads };
  ScStore *s = NULL;

  if (sc_store_open (path, &opt, &s, err) != SC_OK)
    return NULL;
  return s;
}

/* Closes @s: the seconds the close takes (the writer's checkpoint, then the final one). */
static double
timed_close (ScStore *s)
{
  const double t0 = now_s ();

  sc_store_close (s);
  return now_s () - t0;
}

/* One stored forward pass: the time to the durable commit and, separately, the time the
 * close takes (the writer's checkpoint, then the final one). */
static gboolean
stored_run (const char *path, ScSession *session, const ScStoreModel *ident,
            const ScStoreToken *pieces, const int32_t *ids, int n, float *logits,
            double *run_s, double *close_s, ScError *err)
{
  ScStoreRunDesc desc = { ident, "bench", 5, pieces, (size_t) n, "cpu" };
  ScStoreCapture *cap = NULL;
  ScObserver obs;
  ScForwardOptions fo = { 0 };
  ScStore *s;
  const double t0 = now_s ();

  if ((s = open_store (path, err)) == NULL)
    return FALSE;
  if (sc_store_capture_begin (s, &desc, &cap, err) != SC_OK)
    goto fail;
  obs = sc_store_capture_observer (cap);
  fo.observer = &obs;
  if (sc_forward (session, ids, n, &fo, logits, err) != SC_OK)
    {
      if (err->status == SC_ERR_CANCELLED)
        sc_store_capture_commit (cap, -1, NULL, err);
      else
        sc_store_capture_abort (cap);
      goto fail;
    }
  if (sc_store_capture_commit (cap, now_s () - t0, NULL, err) != SC_OK)
    goto fail;
  *run_s = now_s () - t0;
  *close_s = timed_close (s);
  return TRUE;
fail:
  sc_store_close (s);
  return FALSE;
}

/* A causal probability matrix with a realistic spread of weights. */
static float *
synthetic_head (int n)
{
  float *p = g_new0 (float, (gsize) n * n);
  GRand *r = g_rand_new_with_seed (512);
  int i, j;

  for (i = 0; i < n; i++)
    {
      double z = 0.0;
      for (j = 0; j <= i; j++)
        z += p[(gsize) i * n + j] = (float) exp (-12.0 * g_rand_double (r));
      for (j = 0; j <= i; j++)
        p[(gsize) i * n + j] = (float) (p[(gsize) i * n + j] / z);
    }
  g_rand_free (r);
  return p;
}

/* Pushes @n_heads copies of @head into one capture: seconds to the durable commit, the
 * close's seconds, the fp16 bytes of the heads taken in (*@bytes: the BLOB bytes without
 * compression) and the BLOB bytes stored (*@stored: fewer with --compress). */
static gboolean
ingest_run (const char *path, const ScStoreModel *ident, const ScStoreToken *pieces, int n,
            const float *head, double *run_s, double *close_s, guint64 *bytes, guint64 *stored,
            ScError *err)
{
  ScStoreRunDesc desc = { ident, "ingest", 6, pieces, (size_t) n, "synthetic" };
  ScStoreRunInfo info = { 0 };
  ScStoreCapture *cap = NULL;
  ScStore *s;
  gint64 run = 0;
  double t0, t1;
  int l, h;

  if ((s = open_store (path, err)) == NULL)
    return FALSE;
  t0 = now_s ();
  if (sc_store_capture_begin (s, &desc, &cap, err) != SC_OK)
    goto fail;
  for (l = 0; l < (int) ident->n_layers; l++)
    for (h = 0; h < (int) ident->n_heads; h++)
      if (sc_store_capture_add_head (cap, l, h, head, n, n, err) != SC_OK)
        {
          sc_store_capture_commit (cap, -1, NULL, err);
          goto fail;
        }
  if (sc_store_capture_commit (cap, -1, &run, err) != SC_OK)
    goto fail;
  t1 = now_s ();
  if (sc_store_get_run (s, run, &info, err) != SC_OK)
    goto fail;
  *stored = info.attention_bytes;
  *bytes = (guint64) ident->n_layers * ident->n_heads * (guint64) n * (n + 1); /* 2 bytes a value */
  sc_store_run_info_clear (&info);
  *run_s = t1 - t0;
  *close_s = timed_close (s);
  return TRUE;
fail:
  sc_store_close (s);
  return FALSE;
}

/* Runs dd writing @mib MiB with conv=fdatasync into @dir; returns dd's own seconds. */
static double
run_dd (const char *dir, guint mib, GError **error)
{
  g_autofree char *of = g_build_filename (dir, "dd.tmp", NULL);
  g_autofree char *of_arg = g_strconcat ("of=", of, NULL);
  g_autofree char *count = g_strdup_printf ("count=%u", mib);
  char *argv[] = { "dd", "if=/dev/zero", of_arg, "bs=1M", count, "conv=fdatasync", NULL };
  g_autofree char *err_text = NULL;
  g_auto (GStrv) lines = NULL;
  double secs = -1.0;
  int status = 0, i;

  if (!g_spawn_sync (NULL, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                     NULL, NULL, &err_text, &status, error)
      || !g_spawn_check_wait_status (status, error))
    {
      g_unlink (of);
      return -1.0;
    }
  g_unlink (of);
  /* "... bytes (...) copied, 0.534783 s, 502 MB/s" (the number is locale-independent in
   * dd's C locale output only, so parse it ourselves after the comma) */
  lines = g_strsplit (err_text != NULL ? err_text : "", "\n", -1);
  for (i = 0; lines[i] != NULL; i++)
    {
      const char *c = strstr (lines[i], "copied, ");
      if (c != NULL)
        {
          g_autofree char *num = g_strdup (c + strlen ("copied, "));
          g_strdelimit (num, ",", '.');
          secs = g_ascii_strtod (num, NULL);
        }
    }
  if (secs <= 0)
    g_set_error (error, SACCADE_ERROR, SC_ERR_FORMAT, "cannot read dd's timing from: %s",
                 err_text != NULL ? err_text : "");
  return secs;
}

typedef struct {
  int n;
  gint64 db_bytes;
  guint64 attention_bytes;
} SizeRow;

int
saccade_cmd_bench_store (int argc, char **argv)
{
  g_auto (SaccadeCliCommon) common = { 0 };
  int n = 512, reps = 3;
  g_autofree char *dir_opt = NULL;
  GOptionEntry entries[] = {
    { "tokens", 'n', 0, G_OPTION_ARG_INT, &n, "Prompt length (default 512)", "N" },
    { "reps", 'r', 0, G_OPTION_ARG_INT, &reps, "Rounds (default 3)", "R" },
    { "compress", 0, 0, G_OPTION_ARG_NONE, &compress_heads,
      "Store the heads compressed (zstd; the ingest rate stays in fp16 bytes taken in)", NULL },
    { "dir", 0, 0, G_OPTION_ARG_FILENAME, &dir_opt,
      "Folder on the disk to measure (default: the default database's folder)", "DIR" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("- the capture store's costs");
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) prose_ids = NULL;
  g_autofree char *base = NULL, *dir = NULL, *db = NULL, *model_path = NULL;
  g_autofree double *t_mem = NULL, *t_sql = NULL, *t_sql_ck = NULL, *r_ingest = NULL,
                    *r_ingest_ck = NULL, *r_dd = NULL;
  g_autofree float *logits = NULL, *head = NULL;
  MemCapture mc = { 0 };
  ScStoreModel ident = { 0 };
  ScStoreToken *pieces = NULL;
  ScBackend *backend = NULL;
  ScSession *session = NULL;
  ScModel *model = NULL;
  ScError err = { 0 };
  SizeRow sizes[2] = { { 128, 0, 0 }, { 512, 0, 0 } };
  guint64 ingest_bytes = 0, stored_bytes = 0;
  const ScModelInfo *in;
  guint dd_mib;
  int r, i, rc = 1;

  g_option_context_add_main_entries (ctx, entries, NULL);
  saccade_cli_common_add (ctx, &common);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if (reps < 1 || n < 1)
    {
      fprintf (stderr, "saccade: --reps and --tokens must be positive\n");
      return 2;
    }
  if (common.threads <= 0)
    common.threads = (int) g_get_num_processors ();
  base = dir_opt != NULL ? g_strdup (dir_opt)
                         : g_build_filename (g_get_user_data_dir (), "saccade", NULL);
  if (g_mkdir_with_parents (base, 0700) != 0)
    {
      fprintf (stderr, "saccade: cannot create %s: %s\n", base, g_strerror (errno));
      return 1;
    }
  dir = g_build_filename (base, "bench-store-XXXXXX", NULL);
  if (g_mkdtemp (dir) == NULL)
    {
      fprintf (stderr, "saccade: cannot create a folder in %s: %s\n", base, g_strerror (errno));
      return 1;
    }
  db = g_build_filename (dir, "bench.sqlite", NULL);

  if ((model = saccade_cli_load_model (&common, &error)) == NULL)
    goto out;
  in = sc_model_info (model);
  model_path = g_canonicalize_filename (saccade_cli_model_path (&common), NULL);
  if (sc_store_model_identify (model, model_path, &ident, &err) != SC_OK)
    goto sc_fail;
  if ((prose_ids = saccade_bench_prompt (model, PROSE, MAX (n, 512), &error)) == NULL)
    goto out;
  if (sc_store_tokens_from_ids (sc_model_tokenizer (model), (const int32_t *) prose_ids->data,
                                prose_ids->len, &pieces, &err) != SC_OK)
    goto sc_fail;
  if ((backend = saccade_cli_backend (&common, &error)) == NULL)
    goto out;
  if (sc_session_new (model, backend, &session, &err) != SC_OK)
    goto sc_fail;
  logits = g_new (float, in->n_vocab);
  mc.n_heads = (int) in->n_heads;
  mc.head_floats = (size_t) n * n;
  mc.block = g_try_malloc ((gsize) in->n_layers * in->n_heads * n * n * sizeof (float));
  if (mc.block == NULL)
    {
      fprintf (stderr, "saccade: not enough memory to capture %d tokens\n", n);
      goto out;
    }
  t_mem = g_new (double, reps);
  t_sql = g_new (double, reps);
  t_sql_ck = g_new (double, reps);
  r_ingest = g_new (double, reps);
  r_ingest_ck = g_new (double, reps);
  r_dd = g_new (double, reps);

  /* 1. forward + capture, memory vs SQLite; one warm-up of each */
  fprintf (stderr, "bench-store: %d-token forward passes, %u heads, in %s\n", n,
           in->n_layers * in->n_heads, dir);
  {
    const int32_t *ids = (const int32_t *) prose_ids->data;
    ScObserver mobs = { NULL, mem_observe, &mc };
    ScForwardOptions mfo = { .observer = &mobs };
    double close_s = 0;

    if (sc_forward (session, ids, n, &mfo, logits, &err) != SC_OK
        || !stored_run (db, session, &ident, pieces, ids, n, logits, &t_sql[0], &close_s, &err))
      goto sc_fail;
    for (r = 0; r < reps; r++)
      {
        double t0 = now_s ();
        if (sc_forward (session, ids, n, &mfo, logits, &err) != SC_OK)
          goto sc_fail;
        t_mem[r] = now_s () - t0;
        if (!stored_run (db, session, &ident, pieces, ids, n, logits, &t_sql[r], &close_s, &err))
          goto sc_fail;
        t_sql_ck[r] = t_sql[r] + close_s;
        fprintf (stderr, "  round %d: memory %.3f s, SQLite %.3f s (+ %.3f s checkpoint)\n", r,
                 t_mem[r], t_sql[r], close_s);
      }
  }
  g_clear_pointer (&mc.block, g_free);
  remove_db (db);

  /* 2. ingest vs dd, interleaved */
  head = synthetic_head (n);
  dd_mib = 0;
  for (r = -1; r < reps; r++) /* round -1 warms up */
    {
      double run_s = 0, close_s = 0, dd_s;
      if (!ingest_run (db, &ident, pieces, n, head, &run_s, &close_s, &ingest_bytes,
                       &stored_bytes, &err))
        goto sc_fail;
      if (dd_mib == 0)
        dd_mib = (guint) ((ingest_bytes + (1u << 20) - 1) >> 20);
      if ((dd_s = run_dd (dir, dd_mib, &error)) < 0)
        goto out;
      if (r >= 0)
        {
          r_ingest[r] = ingest_bytes / run_s / 1e6;
          r_ingest_ck[r] = ingest_bytes / (run_s + close_s) / 1e6;
          r_dd[r] = (double) dd_mib * (1u << 20) / dd_s / 1e6;
          fprintf (stderr, "  round %d: ingest %.0f MB/s (%.0f MB/s with checkpoint), dd %.0f "
                   "MB/s\n", r, r_ingest[r], r_ingest_ck[r], r_dd[r]);
        }
      remove_db (db);
    }

  /* 3. bytes per run */
  for (i = 0; i < (int) G_N_ELEMENTS (sizes); i++)
    {
      const int32_t *ids = (const int32_t *) prose_ids->data;
      double run_s, close_s;
      ScStore *s;
      ScStoreRunInfo *runs = NULL;
      size_t n_runs = 0;
      gint64 empty;

      /* an empty store's size, then one run: the growth is what a run costs */
      if ((s = open_store (db, &err)) == NULL)
        goto sc_fail;
      sc_store_close (s);
      empty = file_bytes (db);
      if (!stored_run (db, session, &ident, pieces, ids, sizes[i].n, logits, &run_s, &close_s,
                       &err))
        goto sc_fail;
      sizes[i].db_bytes = file_bytes (db) - empty;
      if ((s = open_store (db, &err)) == NULL)
        goto sc_fail;
      if (sc_store_list_runs (s, &runs, &n_runs, &err) == SC_OK && n_runs == 1)
        sizes[i].attention_bytes = runs[0].attention_bytes;
      sc_store_run_list_free (runs, n_runs);
      sc_store_close (s);
      remove_db (db);
    }

  {
    double mem = saccade_median (t_mem, reps), sql = saccade_median (t_sql, reps), sql_ck = saccade_median (t_sql_ck, reps);
    double ing = saccade_median (r_ingest, reps), ing_ck = saccade_median (r_ingest_ck, reps),
           dd = saccade_median (r_dd, reps);

    if (common.json)
      {
        g_autoptr (JsonBuilder) b = json_builder_new ();
        json_builder_begin_object (b);
        saccade_json_string (b, "backend", sc_backend_description (backend));
        saccade_json_string (b, "folder", base);
        saccade_json_int (b, "threads", common.threads);
        saccade_json_int (b, "reps", reps);
        saccade_json_int (b, "n", n);
        saccade_json_int (b, "heads", (gint64) in->n_layers * in->n_heads);
        saccade_json_double (b, "capture_memory_s", mem);
        saccade_json_double (b, "capture_sqlite_s", sql);
        saccade_json_double (b, "capture_sqlite_with_checkpoint_s", sql_ck);
        saccade_json_double (b, "persisted_over_memory", sql / mem);
        saccade_json_double (b, "persisted_with_checkpoint_over_memory", sql_ck / mem);
        saccade_json_int (b, "ingest_bytes_per_run", (gint64) ingest_bytes);
        saccade_json_int (b, "stored_bytes_per_run", (gint64) stored_bytes);
        saccade_json_bool (b, "compressed", compress_heads);
        saccade_json_double (b, "ingest_mb_per_s", ing);
        saccade_json_double (b, "ingest_with_checkpoint_mb_per_s", ing_ck);
        saccade_json_double (b, "dd_fdatasync_mb_per_s", dd);
        saccade_json_double (b, "ingest_over_dd", ing / dd);
        saccade_json_double (b, "ingest_with_checkpoint_over_dd", ing_ck / dd);
        saccade_json_begin_array (b, "bytes_per_run");
        for (i = 0; i < (int) G_N_ELEMENTS (sizes); i++)
          {
            json_builder_begin_object (b);
            saccade_json_int (b, "n", sizes[i].n);
            saccade_json_int (b, "database_bytes", sizes[i].db_bytes);
            saccade_json_int (b, "attention_bytes", (gint64) sizes[i].attention_bytes);
            json_builder_end_object (b);
          }
        json_builder_end_array (b);
        json_builder_end_object (b);
        saccade_json_print (b);
      }
    else
      {
        printf ("Capture store, %s; %d tokens, %u heads; median of %d rounds; disk of %s\n",
                sc_backend_description (backend), n, in->n_layers * in->n_heads, reps, base);
        printf ("  forward + capture to memory      %8.3f s\n", mem);
        printf ("  forward + capture to SQLite      %8.3f s   persisted / memory %.3f (goal <= "
                "1.3)\n", sql, sql / mem);
        printf ("    ... and its checkpoint         %8.3f s   %.3f\n", sql_ck, sql_ck / mem);
        printf ("  SQLite ingest, %.1f MB per run   %8.0f MB/s (to the durable commit)\n",
                ingest_bytes / 1e6, ing);
        if (compress_heads)
          printf ("    ... stored compressed in       %8.1f MB (%.1f %%)\n", stored_bytes / 1e6,
                  100.0 * (double) stored_bytes / (double) ingest_bytes);
        printf ("    ... and its checkpoint         %8.0f MB/s\n", ing_ck);
        printf ("  dd bs=1M count=%u conv=fdatasync %6.0f MB/s\n", dd_mib, dd);
        printf ("  ingest / dd                      %8.3f (goal >= 0.6); with the checkpoint "
                "%.3f\n", ing / dd, ing_ck / dd);
        for (i = 0; i < (int) G_N_ELEMENTS (sizes); i++)
          printf ("  one run at n = %3d               %8.2f MB in the database (%.2f MB of "
                  "attention BLOBs, %+.1f%%)\n", sizes[i].n, sizes[i].db_bytes / 1e6,
                  sizes[i].attention_bytes / 1e6,
                  100.0 * ((double) sizes[i].db_bytes / (double) sizes[i].attention_bytes - 1));
      }
  }
  rc = 0;
  goto out;

sc_fail:
  saccade_set_error_from_sc (&error, &err);
out:
  if (rc != 0 && error != NULL)
    fprintf (stderr, "saccade: %s\n", error->message);
  g_free (mc.block);
  remove_db (db);
  g_rmdir (dir);
  sc_store_tokens_free (pieces);
  sc_session_free (session);
  sc_backend_free (backend);
  sc_model_free (model);
  return rc;
}
