/* saccade-bench-compress.c — `saccade bench-compress`: how well stored heads compress.
 *
 * Reads heads of a stored run as their fp16 lower triangles (the bytes the store keeps,
 * sc_store_read_head_f16) and, for each lossless form, compresses every head one block of
 * --rows rows at a time with libzstd, then decompresses each block and checks it is the
 * original bytes. Forms: "raw" (the fp16 values as stored, little-endian) and "split" (the
 * block's high bytes, then its low bytes: an fp16 probability's high byte is its sign,
 * exponent and two mantissa bits, which repeat; the low byte is the rest of the mantissa),
 * each at zstd levels 1, 3 and 9. Prints, per form, the compressed bytes against the raw
 * fp16 triangles and the compress and decompress rates in MB/s of raw bytes, medians of
 * --reps rounds (docs/benchmarks.md, "Compressed heads").
 *
 * --store-check FILE instead stores the run again through the store's compressed path
 * (schema v5) into a new database and checks that every head reads back with the same fp16
 * bits, and how many bytes it took; with --round-bits and --zero-below, in the rounded form
 * (schema v6), checking that every value is within the stated bound of the stored one and
 * printing the largest error found. --every K stores every K-th head only.
 */
#define G_LOG_DOMAIN "saccade-bench"

#include "app/cli/saccade-cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "engine/core/sc-math.h"

#include "engine/store/sc-store-heads.h"
#include "engine/store/sc-store.h"

typedef struct {
  const char *name;
  bool split;
  int level;
} Form;

static const Form forms[] = {
  { "raw", false, 1 }, { "raw", false, 3 }, { "raw", false, 9 },
  { "split", true, 1 }, { "split", true, 3 }, { "split", true, 9 },
};

static double
now_s (void)
{
  return g_get_monotonic_time () / 1e6;
}

static int
cmp_double (const void *a, const void *b)
{
  const double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (double *v, int n)
{
  qsort (v, (size_t) n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The high bytes of @n fp16 values, then their low bytes. */
static void
split_planes (const uint16_t *v, size_t n, uint8_t *out)
{
  for (size_t i = 0; i < n; i++)
    {
      out[i] = (uint8_t) (v[i] >> 8);
      out[n + i] = (uint8_t) v[i];
    }
}

/* One round of @form over @heads: the compressed bytes, and the seconds compressing and
 * decompressing; false (with a message) when a block does not come back as it was. */
static bool
one_round (const Form *form, ScStoreHeadF16 *heads, guint n_heads, guint rows, ZSTD_CCtx *cc,
           ZSTD_DCtx *dc, uint8_t *plane, uint8_t *dst, size_t dst_cap, uint8_t *back,
           guint64 *z_bytes, double *c_s, double *d_s)
{
  *z_bytes = 0;
  *c_s = *d_s = 0;
  for (guint h = 0; h < n_heads; h++)
    {
      const ScStoreHeadF16 *hd = &heads[h];
      for (uint32_t r0 = 0; r0 < hd->n_query; r0 += rows)
        {
          const uint32_t r1 = hd->n_query - r0 < rows ? hd->n_query : r0 + rows;
          const size_t v0 = hd->causal ? (size_t) r0 * (r0 + 1) / 2 : (size_t) r0 * hd->n_key;
          const size_t v1 = hd->causal ? (size_t) r1 * (r1 + 1) / 2 : (size_t) r1 * hd->n_key;
          const size_t bytes = 2 * (v1 - v0);
          const uint8_t *src = (const uint8_t *) (hd->values + v0);
          double t0 = now_s ();
          size_t z, got;

          if (form->split)
            {
              split_planes (hd->values + v0, v1 - v0, plane);
              src = plane;
            }
          z = ZSTD_compressCCtx (cc, dst, dst_cap, src, bytes, form->level);
          *c_s += now_s () - t0;
          if (ZSTD_isError (z))
            {
              fprintf (stderr, "saccade: zstd: %s\n", ZSTD_getErrorName (z));
              return false;
            }
          t0 = now_s ();
          got = ZSTD_decompressDCtx (dc, back, bytes, dst, z);
          *d_s += now_s () - t0;
          if (ZSTD_isError (got) || got != bytes || memcmp (back, src, bytes) != 0)
            {
              fprintf (stderr, "saccade: %s level %d: rows %u..%u of a head did not come back "
                       "as they were\n", form->name, form->level, r0, r1);
              return false;
            }
          *z_bytes += z;
        }
    }
  return true;
}

/* --store-check: every stored head of run @run_id in @src stored again, compressed, through
 * a capture into a new store at @path (sc_store_capture_add_head_f16: the same fp16 bits),
 * then every head read back from both and compared bit for bit. Prints the bytes stored
 * against the fp16 BLOBs and the capture's time. */
/* Whether @b (read back from the rounded store) is what the rounded form may store for
 * @a: 0 when @a is below @zero_below, else within @bound of @a relative to it; the largest
 * relative error so far in *@worst, the values stored as 0 in *@zeroed. */
static gboolean
within_bound (const uint16_t *a, const uint16_t *b, size_t n, double bound, double zero_below,
              double *worst, guint64 *zeroed)
{
  for (size_t i = 0; i < n; i++)
    {
      const double x = sc_fp16_to_fp32 (a[i]), y = sc_fp16_to_fp32 (b[i]);
      if (x < zero_below)
        {
          if (y != 0)
            return FALSE;
          *zeroed += x > 0;
          continue;
        }
      if (x > 0)
        {
          const double e = fabs (y - x) / x;
          if (e > bound)
            return FALSE;
          *worst = MAX (*worst, e);
        }
      else if (y != x)
        return FALSE;
    }
  return TRUE;
}

static gboolean
store_check (ScStore *src, int64_t run_id, const ScStoreRunInfo *info, const char *path,
             int every, guint32 round_bits, double zero_below, ScError *err)
{
  ScStoreOptions opt = { .writable = TRUE, .compress_heads = TRUE };
  ScStoreModel model = { info->model_path, 0, { 0 }, info->model_name, info->model_arch,
                         info->n_layers, info->n_heads, info->n_kv_heads, info->head_dim,
                         info->n_heads * info->head_dim, 1, info->n_tokens, 0, 0 };
  ScStoreToken *tokens = NULL;
  g_autofree guint8 *keep = NULL;
  ScStoreRunDesc desc = { 0 };
  ScStoreCapture *cap = NULL;
  ScStoreRunInfo got = { 0 };
  ScStore *dst = NULL;
  size_t n_tokens = 0;
  gint64 new_id = 0;
  guint64 raw = 0, zeroed = 0;
  double t0, t_capture, worst = 0;
  const gboolean rounded = round_bits > 0 || zero_below > 0;
  const double bound = sc_store_round_relative_error (round_bits);
  gboolean ok = FALSE;

  if (sc_store_read_tokens (src, run_id, &tokens, &n_tokens, err) != SC_OK
      || sc_store_open (path, &opt, &dst, err) != SC_OK)
    goto out;
  for (size_t i = 0; i < n_tokens; i++)
    if ((uint32_t) tokens[i].id >= model.n_vocab)
      model.n_vocab = (uint32_t) tokens[i].id + 1;
  if (info->kept != NULL || every > 1)
    {
      keep = g_new0 (guint8, info->n_layers * info->n_heads);
      for (guint k = 0; k < info->n_layers * info->n_heads; k++)
        keep[k] = k % (guint) every == 0
                  && sc_store_run_has_head (info, (int) (k / info->n_heads), (int) (k % info->n_heads));
    }
  desc = (ScStoreRunDesc) { &model, info->text, info->text_len, tokens, n_tokens, "store-check",
                            keep, 0, info->kind, info->n_prompt, round_bits, zero_below };
  t0 = now_s ();
  if (sc_store_capture_begin (dst, &desc, &cap, err) != SC_OK)
    goto out;
  for (guint k = 0; k < info->n_layers * info->n_heads; k++)
    {
      const int layer = (int) (k / info->n_heads), head = (int) (k % info->n_heads);
      ScStoreHeadF16 h = { 0 };
      if (!sc_store_run_has_head (info, layer, head) || k % (guint) every != 0)
        continue;
      if (sc_store_read_head_f16 (src, run_id, layer, head, &h, err) != SC_OK
          || sc_store_capture_add_head_f16 (cap, layer, head, h.values, h.causal, (int) h.n_query,
                                            (int) h.n_key, err) != SC_OK)
        {
          sc_store_head_f16_clear (&h);
          sc_store_capture_abort (cap);
          goto out;
        }
      raw += 2 * h.n_values;
      sc_store_head_f16_clear (&h);
    }
  if (sc_store_capture_commit (cap, -1, &new_id, err) != SC_OK)
    goto out;
  t_capture = now_s () - t0;
  if (sc_store_get_run (dst, new_id, &got, err) != SC_OK)
    goto out;
  for (guint k = 0; k < info->n_layers * info->n_heads; k++)
    {
      const int layer = (int) (k / info->n_heads), head = (int) (k % info->n_heads);
      ScStoreHeadF16 a = { 0 }, b = { 0 };
      gboolean same;
      if (!sc_store_run_has_head (info, layer, head) || k % (guint) every != 0)
        continue;
      if (sc_store_read_head_f16 (src, run_id, layer, head, &a, err) != SC_OK
          || sc_store_read_head_f16 (dst, new_id, layer, head, &b, err) != SC_OK)
        {
          sc_store_head_f16_clear (&a);
          sc_store_head_f16_clear (&b);
          goto out;
        }
      same = a.n_values == b.n_values
             && (rounded ? within_bound (a.values, b.values, a.n_values, bound, zero_below,
                                         &worst, &zeroed)
                         : memcmp (a.values, b.values, 2 * a.n_values) == 0);
      sc_store_head_f16_clear (&a);
      sc_store_head_f16_clear (&b);
      if (!same)
        {
          sc_error_set (err, SC_ERR_FORMAT, "layer %d head %d does not read back %s from the "
                        "compressed store", layer, head,
                        rounded ? "within the rounded form's bound" : "with the same fp16 bits");
          goto out;
        }
    }
  if (rounded)
    printf ("store-check: every head of run %lld read back from the rounded store within its "
            "bound (%u mantissa bits: %.4g relative, largest seen %.4g; below %g: 0, %"
            G_GUINT64_FORMAT " values)", (long long) run_id, round_bits, bound, worst,
            zero_below, zeroed);
  else
    printf ("store-check: every head of run %lld identical (fp16 bits) read back from the "
            "compressed store", (long long) run_id);
  printf ("; %.1f MB of fp16 stored in %.1f MB (%.1f %%), captured in %.1f s (%.0f MB/s of "
          "fp16)\n", raw / 1e6, got.attention_bytes / 1e6,
          100.0 * (double) got.attention_bytes / (double) raw, t_capture, raw / 1e6 / t_capture);
  ok = TRUE;
out:
  sc_store_run_info_clear (&got);
  sc_store_tokens_free (tokens);
  sc_store_close (dst);
  return ok;
}

int
saccade_cmd_bench_compress (int argc, char **argv)
{
  int reps = 3, rows = 64, every = 1, round_bits = 0;
  double zero_below = 0;
  g_autofree char *db = NULL, *check_db = NULL;
  GOptionEntry entries[] = {
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &db, "The capture database (required)", "FILE" },
    { "rows", 0, 0, G_OPTION_ARG_INT, &rows, "Rows per compressed block (default 64)", "R" },
    { "every", 0, 0, G_OPTION_ARG_INT, &every,
      "Only every K-th head of the run, in layer-major order (default 1: all)", "K" },
    { "reps", 'r', 0, G_OPTION_ARG_INT, &reps, "Rounds (default 3)", "N" },
    { "store-check", 0, 0, G_OPTION_ARG_FILENAME, &check_db,
      "Only store every head of RUN again, compressed, into the new database FILE, and check "
      "each reads back with the same fp16 bits", "FILE" },
    { "round-bits", 0, 0, G_OPTION_ARG_INT, &round_bits,
      "--store-check in the rounded form: M mantissa bits (1-9)", "M" },
    { "zero-below", 0, 0, G_OPTION_ARG_DOUBLE, &zero_below,
      "--store-check in the rounded form: values below F as 0", "F" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("RUN - how well stored heads compress");
  ScStoreOptions opt = { 0 };
  ScStoreRunInfo info = { 0 };
  ScStoreHeadF16 *heads = NULL;
  ScStore *store = NULL;
  ScError err = { 0 };
  guint n_heads = 0;
  guint64 raw = 0;
  size_t max_block = 0, dst_cap;
  uint8_t *plane = NULL, *dst = NULL, *back = NULL;
  ZSTD_CCtx *cc = NULL;
  ZSTD_DCtx *dc = NULL;
  int64_t run_id;
  int rc = 1;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!saccade_cli_parse_options (ctx, &argc, &argv))
    return 2;
  if (db == NULL || argc != 2 || reps < 1 || rows < 1 || every < 1)
    {
      fprintf (stderr, "saccade: bench-compress needs --db FILE and one RUN id; --reps, --rows "
               "and --every must be positive\n");
      return 2;
    }
  run_id = g_ascii_strtoll (argv[1], NULL, 10);
  if (sc_store_open (db, &opt, &store, &err) != SC_OK
      || sc_store_get_run (store, run_id, &info, &err) != SC_OK)
    {
      fprintf (stderr, "saccade: %s\n", err.message);
      goto out;
    }
  if (check_db != NULL)
    {
      if (g_file_test (check_db, G_FILE_TEST_EXISTS))
        {
          fprintf (stderr, "saccade: %s exists; --store-check writes a new database\n", check_db);
          goto out;
        }
      if (!store_check (store, run_id, &info, check_db, every, (guint32) MAX (round_bits, 0),
                        zero_below, &err))
        fprintf (stderr, "saccade: %s\n", err.message);
      else
        rc = 0;
      goto out;
    }
  heads = g_new0 (ScStoreHeadF16, info.n_layers * info.n_heads);
  for (guint k = 0; k < info.n_layers * info.n_heads; k += (guint) every)
    {
      const int layer = (int) (k / info.n_heads), head = (int) (k % info.n_heads);
      ScStoreHeadF16 *h = &heads[n_heads];
      if (!sc_store_run_has_head (&info, layer, head))
        continue;
      if (sc_store_read_head_f16 (store, run_id, layer, head, h, &err) != SC_OK)
        {
          fprintf (stderr, "saccade: %s\n", err.message);
          goto out;
        }
      raw += 2 * h->n_values;
      n_heads++;
    }
  if (n_heads == 0)
    {
      fprintf (stderr, "saccade: run %lld keeps none of the heads asked for\n", (long long) run_id);
      goto out;
    }
  max_block = 2 * (size_t) rows * info.n_tokens;
  dst_cap = ZSTD_compressBound (max_block);
  plane = g_malloc (max_block);
  dst = g_malloc (dst_cap);
  back = g_malloc (max_block);
  cc = ZSTD_createCCtx ();
  dc = ZSTD_createDCtx ();
  printf ("bench-compress: run %lld, %u tokens, %u heads, %.1f MB of fp16 (triangles), "
          "blocks of %d rows, zstd %s, median of %d\n", (long long) run_id, info.n_tokens,
          n_heads, raw / 1e6, rows, ZSTD_versionString (), reps);
  printf ("%-6s %5s %10s %12s %14s\n", "form", "level", "ratio", "compress", "decompress");
  for (gsize f = 0; f < G_N_ELEMENTS (forms); f++)
    {
      g_autofree double *c = g_new (double, reps), *d = g_new (double, reps);
      guint64 z = 0;
      for (int r = 0; r < reps; r++)
        {
          double cs, ds;
          if (!one_round (&forms[f], heads, n_heads, (guint) rows, cc, dc, plane, dst, dst_cap,
                          back, &z, &cs, &ds))
            goto out;
          c[r] = raw / 1e6 / cs;
          d[r] = raw / 1e6 / ds;
        }
      printf ("%-6s %5d %9.1f%% %7.0f MB/s %9.0f MB/s\n", forms[f].name, forms[f].level,
              100.0 * (double) z / (double) raw, median (c, reps), median (d, reps));
    }
  rc = 0;
out:
  for (guint h = 0; h < n_heads; h++)
    sc_store_head_f16_clear (&heads[h]);
  g_free (heads);
  g_free (plane);
  g_free (dst);
  g_free (back);
  ZSTD_freeCCtx (cc);
  ZSTD_freeDCtx (dc);
  sc_store_run_info_clear (&info);
  sc_store_close (store);
  sc_error_clear (&err);
  return rc;
}
