/* test-store.c — the capture store on hand-built data (no model file needed).
 *
 * 1. The BLOB layout: every finite fp16 survives pack/unpack; packing halves causal heads.
 * 2. Round trips: causal and full heads read back as the fp16 rounding of what was
 *    captured (relative error <= 2^-11 in fp16's normal range, exact zeros kept); tokens,
 *    invalid UTF-8 pieces and the text byte for byte; a real forward pass on a tiny GGUF
 *    model through the observer; model identity (same file at two paths = one model).
 * 3. The schema: version 1 with every table, WAL, foreign keys, incremental auto-vacuum;
 *    a newer version is refused without being touched.
 * 4. The writer queue at its smallest.
 * 5. Deleting a run gives its space back; run ids are never reused.
 * 6. Reading from a second connection while a capture is half written sees no part of it.
 * Bad input is test-store-bad.c; the multi-process tests (SIGKILL, concurrent readers) are
 * test-store-crash.c and test-store-concurrency.c.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "engine/core/sc-math.h"
#include "engine/store/sc-store-private.h"
#include "tests/engine/sc-test-gguf.h"
#include "tests/store/store-fake.h"

/* ------------------------------------------------------------------------------------ */
/* 1. BLOB layout                                                                        */

/* Every finite non-negative fp16 (the values a probability can take after rounding) goes
 * through pack and unpack unchanged, in both layouts. */
static void
test_blob_exact (void)
{
  const uint32_t n = 256; /* 256 x 256 = every 16-bit pattern once */
  g_autofree float *m = g_new (float, n * n), *back = g_new (float, n * n);
  g_autofree guint8 *blob = g_malloc (sc_store_blob_bytes (false, n, n));
  uint32_t i, bad = 0;

  for (i = 0; i < n * n; i++)
    {
      uint16_t h = (uint16_t) i;
      m[i] = ((h & 0x7c00u) == 0x7c00u || (h & 0x8000u)) ? 0.5f : sc_fp16_to_fp32 (h);
    }
  sc_store_blob_pack (m, n, n, false, blob);
  sc_store_blob_unpack (blob, n, n, false, back);
  for (i = 0; i < n * n; i++)
    bad += memcmp (&m[i], &back[i], sizeof (float)) != 0;
  g_assert_cmpuint (bad, ==, 0);
  g_assert_false (sc_store_head_is_causal (m, n, n));

  /* causal: zero the upper triangle, pack the lower */
  for (i = 0; i < n; i++)
    memset (m + (gsize) i * n + i + 1, 0, (n - i - 1) * sizeof (float));
  g_assert_true (sc_store_head_is_causal (m, n, n));
  sc_store_blob_pack (m, n, n, true, blob);
  sc_store_blob_unpack (blob, n, n, true, back);
  g_assert_cmpmem (m, n * n * sizeof (float), back, n * n * sizeof (float));

  /* a single non-zero above the diagonal makes a head full */
  m[1] = 1e-30f;
  g_assert_false (sc_store_head_is_causal (m, n, n));
  /* non-square heads are never packed */
  g_assert_false (sc_store_head_is_causal (m, 2, 3));
}

/* The fast conversions (F16C where the build targets it) give sc-math.h's results bit for
 * bit: every fp16 value, its float neighbours, every tie between two fp16 values and the
 * floats beside it, and a million random bit patterns. NaNs only need to stay NaNs of the
 * same sign (F16C quiets signalling NaNs; probabilities are never NaN). */
static gboolean
same_half (uint16_t a, uint16_t b)
{
  gboolean nan_a = (a & 0x7c00u) == 0x7c00u && (a & 0x3ffu), nan_b = (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu);
  return nan_a || nan_b ? nan_a && nan_b && (a & 0x8000u) == (b & 0x8000u) : a == b;
}

static void
test_blob_simd_matches_scalar (void)
{
  GArray *in = g_array_new (FALSE, FALSE, sizeof (float));
  g_autofree guint8 *enc = NULL;
  GRand *r = g_rand_new_with_seed (16);
  guint8 halves[2 * 65536];
  float back[65536];
  guint i, bad = 0;

  g_test_message ("fp16 conversion: %s", sc_store_blob_simd () ? "F16C" : "scalar only");
  for (i = 0; i < 65536; i++)
    {
      float f = sc_fp16_to_fp32 ((uint16_t) i);
      float next = sc_fp16_to_fp32 ((uint16_t) (i + 1));
      g_array_append_val (in, f);
      if (isfinite (f))
        {
          float up = nextafterf (f, INFINITY), down = nextafterf (f, -INFINITY);
          g_array_append_val (in, up);
          g_array_append_val (in, down);
        }
      if (i + 1 < 65536 && isfinite (f) && isfinite (next) && (i & 0x7fffu) != 0x7fffu)
        {
          float tie = (float) (((double) f + (double) next) / 2); /* exact in float */
          float above = nextafterf (tie, INFINITY), below = nextafterf (tie, -INFINITY);
          g_array_append_val (in, tie);
          g_array_append_val (in, above);
          g_array_append_val (in, below);
        }
    }
  for (i = 0; i < 1000000; i++)
    {
      guint32 bits = g_rand_int (r);
      float f;
      memcpy (&f, &bits, sizeof f);
      g_array_append_val (in, f);
    }
  enc = g_malloc (2 * in->len);
  sc_store_f16_encode ((const float *) in->data, in->len, enc);
  for (i = 0; i < in->len; i++)
    {
      uint16_t want = sc_fp32_to_fp16 (g_array_index (in, float, i));
      uint16_t got = (uint16_t) (enc[2 * i] | (enc[2 * i + 1] << 8));
      if (!same_half (want, got) && bad++ < 10)
        g_test_message ("encode %a: 0x%04x, want 0x%04x", (double) g_array_index (in, float, i), got,
                        want);
    }
  g_assert_cmpuint (bad, ==, 0);

  for (i = 0; i < 65536; i++)
    {
      halves[2 * i] = (guint8) i;
      halves[2 * i + 1] = (guint8) (i >> 8);
    }
  sc_store_f16_decode (halves, 65536, back);
  for (i = 0; i < 65536; i++)
    {
      float want = sc_fp16_to_fp32 ((uint16_t) i);
      if (isnan (want))
        g_assert_true (isnan (back[i]) && signbit (back[i]) == signbit (want));
      else
        g_assert_cmpmem (&back[i], sizeof (float), &want, sizeof (float));
    }
  g_array_unref (in);
  g_rand_free (r);
}

/* Packing halves causal heads: n(n+1)/2 values against n^2. */
static void
test_blob_sizes (void)
{
  g_assert_cmpuint (sc_store_blob_bytes (true, 128, 128), ==, 128 * 129);
  g_assert_cmpuint (sc_store_blob_bytes (false, 128, 128), ==, 2 * 128 * 128);
  g_assert_cmpuint (sc_store_blob_bytes (true, 512, 512), ==, 512 * 513);
  g_assert_cmpuint (sc_store_blob_bytes (false, 512, 512), ==, 2 * 512 * 512);
  g_assert_cmpuint (sc_store_blob_bytes (true, 1, 1), ==, 2);
}

/* The rounding bound itself, on values chosen at the edges of fp16's ranges. */
static void
test_fp16_bound (void)
{
  const float vals[] = { 1.0f, 0.999f, 0.5f, 1.0f / 3, 0x1.0p-14f, 0x1.ffcp-15f, 1e-5f, 1e-6f,
                         0x1.0p-24f, 0x1.0p-25f, 0x1.8p-25f, 1e-8f, 1e-30f, 0.0f };
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (vals); i++)
    {
      float r = sc_fp16_to_fp32 (sc_fp32_to_fp16 (vals[i]));
      g_assert_true (store_fake_fp16_close (vals[i], r));
      if (vals[i] >= 0x1.0p-14f)
        g_assert_cmpfloat (fabs (r - vals[i]), <=, 0x1.0p-11 * vals[i]);
    }
  g_assert_false (store_fake_fp16_close (0.0f, 1e-30f)); /* zeros must stay exact */
  g_assert_false (store_fake_fp16_close (0.5f, 0.5f + 0x1.0p-10f));
}

/* ------------------------------------------------------------------------------------ */
/* 2. Round trips                                                                        */

static void
check_roundtrip (gboolean causal)
{
  StoreTmp t;
  ScStore *s;
  ScStoreRunInfo info = { 0 };
  ScError err = { 0 };
  gint64 id, id2;
  g_autofree ScStoreToken *want = NULL;
  ScStoreToken *got = NULL;
  size_t n_got = 0, i;
  const int n = 37;

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  id = store_test_capture (s, 11, n, causal);
  id2 = store_test_capture (s, 12, 1, causal); /* a single token: the smallest head */
  g_assert_cmpint (id, ==, 1);
  g_assert_cmpint (id2, ==, 2);
  store_test_assert_run (s, id);
  store_test_assert_run (s, id2);

  /* pieces byte for byte, the invalid UTF-8 ones included */
  g_assert_cmpint (sc_store_read_tokens (s, id, &got, &n_got, &err), ==, SC_OK);
  want = store_fake_tokens (11, n);
  g_assert_cmpuint (n_got, ==, n);
  for (i = 0; i < n_got; i++)
    {
      g_assert_cmpint (got[i].id, ==, want[i].id);
      g_assert_cmpmem (got[i].piece, got[i].len, want[i].piece, want[i].len);
    }
  g_assert_false (g_utf8_validate ((const char *) got[1].piece, got[1].len, NULL));
  g_assert_cmpuint (got[6].len, ==, 0);
  g_assert_cmpmem (got[5].piece, got[5].len, "a\0b", 3);
  sc_store_tokens_free (got);

  /* the run's description */
  g_assert_cmpint (sc_store_get_run (s, id, &info, &err), ==, SC_OK);
  g_assert_cmpstr (info.model_name, ==, "fake-model-a");
  g_assert_cmpuint (info.n_tokens, ==, n);
  g_assert_cmpuint (info.attention_bytes, ==,
                    STORE_FAKE_LAYERS * STORE_FAKE_HEADS
                    * sc_store_blob_bytes (causal, n, n));
  g_assert_cmpfloat (info.forward_s, ==, 0.25);
  g_assert_cmpfloat (info.capture_s, >=, 0.0);
  g_assert_cmpint (llabs (info.created_ms - g_get_real_time () / 1000), <, 60000);
  g_assert_cmpuint (strlen (info.model_sha256), ==, 64);
  sc_store_run_info_clear (&info);

  /* what SQLite holds: the layout and the BLOB size per row */
  {
    g_autofree char *layout = store_test_raw_text (t.path, "SELECT DISTINCT layout FROM attention");
    g_assert_cmpstr (layout, ==, causal ? "causal" : "full");
  }
  sc_store_close (s);

  /* and again from a fresh read-only connection */
  s = store_test_open (t.path, FALSE);
  store_test_assert_run (s, id);
  sc_store_close (s);
  store_tmp_clear (&t);
}

static void
test_roundtrip_causal (void)
{
  check_roundtrip (TRUE);
}

static void
test_roundtrip_full (void)
{
  check_roundtrip (FALSE);
}

/* Packing halves causal heads in the database too. */
static void
test_packing_halves (void)
{
  StoreTmp t;
  ScStore *s;
  ScStoreRunInfo a = { 0 }, b = { 0 };
  ScError err = { 0 };
  const int n = 128;

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  store_test_capture (s, 1, n, TRUE);
  store_test_capture (s, 2, n, FALSE);
  g_assert_cmpint (sc_store_get_run (s, 1, &a, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_get_run (s, 2, &b, &err), ==, SC_OK);
  g_test_message ("n = %d: causal %" G_GUINT64_FORMAT " bytes, full %" G_GUINT64_FORMAT
                  " bytes (%.4f)", n, a.attention_bytes, b.attention_bytes,
                  (double) a.attention_bytes / b.attention_bytes);
  g_assert_cmpfloat ((double) a.attention_bytes / b.attention_bytes, ==, (n + 1.0) / (2.0 * n));
  sc_store_run_info_clear (&a);
  sc_store_run_info_clear (&b);
  sc_store_close (s);
  store_tmp_clear (&t);
}

/* A tee observer: every head into the store and a copy into memory. */
typedef struct {
  ScObserver store;
  float *copy;      /* (n_layers, n_heads, n, n) */
  int n_heads, n;
} Tee;

static bool
tee_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  Tee *t = user;
  memcpy (t->copy + ((gsize) layer * t->n_heads + head) * t->n * t->n, probs,
          (gsize) n_q * n_k * sizeof (float));
  return t->store.observe (t->store.user, layer, head, probs, n_q, n_k);
}

/* A real forward pass on a tiny GGUF model: what the observer saw is what reads back;
 * the tokenizer's pieces (single bytes of a CJK character: invalid UTF-8 alone) round-trip
 * and concatenate to the text; a second path to the same file is the same model. */
static void
test_roundtrip_forward (void)
{
  const char text[] = "猫 cat\xff!";
  StoreTmp t;
  g_autoptr (GBytes) gguf = sc_test_gguf_tiny_llama (7, "llama", NULL);
  g_autoptr (GBytes) gguf2 = sc_test_gguf_tiny_llama (8, "llama", NULL);
  g_autofree char *mpath = NULL, *mlink = NULL, *mpath2 = NULL;
  ScModel *model = NULL, *model2 = NULL;
  ScBackend *backend = sc_backend_cpu_ref_new ();
  ScSession *session = NULL;
  ScStoreModel ident, ident_link, ident2;
  ScStoreToken *pieces = NULL, *got = NULL;
  ScStoreCapture *cap = NULL;
  ScStoreRunDesc desc = { 0 };
  ScError err = { 0 };
  ScStore *s;
  int32_t *ids = NULL;
  size_t n_ids = 0, n_got = 0, i;
  gint64 run = 0, run2 = 0, mid1 = 0, mid2 = 0;
  Tee tee = { 0 };
  ScObserver obs = { NULL, tee_observe, &tee };
  ScForwardOptions fo = { .observer = &obs };
  g_autofree float *logits = NULL;
  GString *joined = g_string_new (NULL);
  int l, h;

  store_tmp_init (&t);
  mpath = g_build_filename (t.dir, "tiny.gguf", NULL);
  mlink = g_build_filename (t.dir, "tiny-link.gguf", NULL);
  mpath2 = g_build_filename (t.dir, "tiny2.gguf", NULL);
  g_assert_true (g_file_set_contents (mpath, g_bytes_get_data (gguf, NULL),
                                      (gssize) g_bytes_get_size (gguf), NULL));
  g_assert_true (g_file_set_contents (mpath2, g_bytes_get_data (gguf2, NULL),
                                      (gssize) g_bytes_get_size (gguf2), NULL));
  g_assert_cmpint (symlink (mpath, mlink), ==, 0);
  g_assert_cmpint (sc_model_open (mpath, 1, &model, &err), ==, SC_OK);
  g_assert_cmpint (sc_model_open (mpath2, 1, &model2, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_model_identify (model, mpath, &ident, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_model_identify (model, mlink, &ident_link, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_model_identify (model2, mpath2, &ident2, &err), ==, SC_OK);
  g_assert_cmpmem (ident.sha256, 32, ident_link.sha256, 32);
  g_assert_true (memcmp (ident.sha256, ident2.sha256, 32) != 0);
  /* the sliding window comes from the model's description (llama: none, every layer global) */
  g_assert_cmpuint (ident.sliding_window, ==, sc_model_info (model)->sliding_window);
  g_assert_cmpuint (ident.swa_pattern, ==, sc_model_info (model)->swa_pattern);
  {
    guint8 want[32];
    g_assert_cmpint (sc_sha256_file (mpath, want, NULL, &err), ==, SC_OK);
    g_assert_cmpmem (ident.sha256, 32, want, 32);
  }

  g_assert_cmpint (sc_tokenize (sc_model_tokenizer (model), text, strlen (text), true, false, &ids,
                                &n_ids, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_tokens_from_ids (sc_model_tokenizer (model), ids, n_ids, &pieces,
                                             &err), ==, SC_OK);
  s = store_test_open (t.path, TRUE);
  desc.model = &ident;
  desc.text = text;
  desc.text_len = strlen (text);
  desc.tokens = pieces;
  desc.n_tokens = n_ids;
  desc.backend = sc_backend_name (backend);
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_OK);
  tee.store = sc_store_capture_observer (cap);
  tee.n_heads = (int) ident.n_heads;
  tee.n = (int) n_ids;
  tee.copy = g_new0 (float, (gsize) ident.n_layers * ident.n_heads * n_ids * n_ids);
  logits = g_new (float, sc_model_info (model)->n_vocab);
  g_assert_cmpint (sc_session_new (model, backend, &session, &err), ==, SC_OK);
  g_assert_cmpint (sc_forward (session, ids, (int) n_ids, &fo, logits, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_capture_commit (cap, 0.1, &run, &err), ==, SC_OK);

  for (l = 0; l < (int) ident.n_layers; l++)
    for (h = 0; h < (int) ident.n_heads; h++)
      {
        ScStoreHead head = { 0 };
        const float *want = tee.copy + ((gsize) l * ident.n_heads + h) * n_ids * n_ids;
        gsize k;
        g_assert_cmpint (sc_store_read_head (s, run, l, h, &head, &err), ==, SC_OK);
        g_assert_true (head.causal);
        for (k = 0; k < n_ids * n_ids; k++)
          if (!store_fake_fp16_close (want[k], head.probs[k]))
            g_error ("layer %d head %d [%zu]: %.9g read back as %.9g", l, h, k, want[k],
                     head.probs[k]);
        sc_store_head_clear (&head);
      }
  g_assert_cmpint (sc_store_read_tokens (s, run, &got, &n_got, &err), ==, SC_OK);
  g_assert_cmpuint (n_got, ==, n_ids);
  for (i = 0; i < n_got; i++)
    {
      char buf[64];
      size_t len = sc_token_to_bytes (sc_model_tokenizer (model), ids[i], true, buf, sizeof buf);
      g_assert_cmpint (got[i].id, ==, ids[i]);
      g_assert_cmpmem (got[i].piece, got[i].len, buf, len);
      g_string_append_len (joined, (const char *) got[i].piece, got[i].len);
    }
  /* the tokenizer turns the bad byte into U+FFFD (llama.cpp's rule) */
  g_assert_cmpmem (joined->str, joined->len, "猫 cat\xef\xbf\xbd!", strlen (text) + 2);
  g_assert_false (g_utf8_validate ((const char *) got[0].piece, got[0].len, NULL));
  sc_store_tokens_free (got);

  /* The same file through a symlink is the same model; another file is another. */
  desc.model = &ident_link;
  run2 = 0;
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_OK);
  tee.store = sc_store_capture_observer (cap);
  g_assert_cmpint (sc_forward (session, ids, (int) n_ids, &fo, logits, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_capture_commit (cap, 0.1, &run2, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_find_model (s, ident.sha256, &mid1, &err), ==, SC_OK);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM models"), ==, 1);
  {
    g_autofree char *p = store_test_raw_text (t.path, "SELECT path FROM models");
    g_assert_cmpstr (p, ==, mlink); /* the latest path is kept */
  }
  g_assert_cmpint (sc_store_find_model (s, ident2.sha256, &mid2, &err), ==, SC_ERR_NOT_FOUND);
  store_test_assert_message (&err, "has no model with SHA-256");

  sc_session_free (session);
  sc_backend_free (backend);
  sc_model_free (model);
  sc_model_free (model2);
  sc_store_tokens_free (pieces);
  free (ids);
  g_free (tee.copy);
  g_string_free (joined, TRUE);
  sc_store_close (s);
  store_tmp_clear (&t);
}

/* Runs of different models stay apart: each run names its own model. */
static void
test_models_apart (void)
{
  StoreTmp t;
  ScStore *s;
  ScStoreRunInfo *runs = NULL;
  ScError err = { 0 };
  size_t n = 0;

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  g_assert_cmpint (store_fake_capture (s, 1, 8, TRUE, 0, 0, &err), ==, 1);
  g_assert_cmpint (store_fake_capture (s, 2, 8, TRUE, 1, 0, &err), ==, 2);
  g_assert_cmpint (store_fake_capture (s, 3, 8, TRUE, 0, 0, &err), ==, 3);
  g_assert_cmpint (sc_store_list_runs (s, &runs, &n, &err), ==, SC_OK);
  g_assert_cmpuint (n, ==, 3);
  g_assert_cmpint (runs[0].model_id, ==, runs[2].model_id);
  g_assert_cmpint (runs[0].model_id, !=, runs[1].model_id);
  g_assert_cmpstr (runs[0].model_name, ==, "fake-model-a");
  g_assert_cmpstr (runs[1].model_name, ==, "fake-model-b");
  g_assert_cmpstr (runs[0].model_sha256, !=, runs[1].model_sha256);
  sc_store_run_list_free (runs, n);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM models"), ==, 2);
  sc_store_close (s);
  store_tmp_clear (&t);
}

/* ------------------------------------------------------------------------------------ */
/* 3. Schema                                                                             */

static void
test_schema (void)
{
  static const char *tables[] = { "ablations", "attention", "attention_bands", "attention_parts",
                                  "head_overviews", "layer_windows",
                                  "head_scores", "models", "predictions", "runs", "studies",
                                  "study_heads",
                                  "study_series", "tokens" };
  StoreTmp t;
  ScStore *s;
  gsize i;

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  g_assert_cmpint (sc_store_schema_version (s), ==, SC_STORE_SCHEMA_VERSION);
  store_test_capture (s, 5, 4, TRUE);
  sc_store_close (s);

  g_assert_cmpint (store_test_raw_int (t.path, "PRAGMA user_version"), ==, SC_STORE_SCHEMA_VERSION);
  g_assert_cmpint (store_test_raw_int (t.path, "PRAGMA application_id"), ==, SC_STORE_APPLICATION_ID);
  g_assert_cmpint (store_test_raw_int (t.path, "PRAGMA auto_vacuum"), ==, 2); /* incremental */
  g_assert_cmpint (store_test_raw_int (t.path, "PRAGMA page_size"), ==, SC_STORE_PAGE_SIZE);
  {
    g_autofree char *mode = store_test_raw_text (t.path, "PRAGMA journal_mode");
    g_assert_cmpstr (mode, ==, "wal");
  }
  for (i = 0; i < G_N_ELEMENTS (tables); i++)
    {
      g_autofree char *sql = g_strdup_printf ("SELECT count(*) FROM sqlite_schema WHERE "
                                              "type = 'table' AND name = '%s'", tables[i]);
      g_assert_cmpint (store_test_raw_int (t.path, sql), ==, 1);
    }
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM pragma_foreign_key_check"), ==, 0);
  /* reopening a current store changes nothing */
  {
    g_autofree char *before = store_test_digest (t.path);
    g_autofree char *after = NULL;
    s = store_test_open (t.path, TRUE);
    sc_store_close (s);
    after = store_test_digest (t.path);
    g_assert_cmpstr (before, ==, after);
  }
  store_tmp_clear (&t);
}

/* A store from a newer Saccade is refused, read-only or writable, and not modified. */
static void
test_schema_newer (void)
{
  StoreTmp t;
  ScStore *s;

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  store_test_capture (s, 1, 4, TRUE);
  sc_store_close (s);
  {
    const int newer = SC_STORE_SCHEMA_VERSION + 1;
    g_autofree char *sql = g_strdup_printf ("PRAGMA user_version = %d", newer);
    g_autofree char *want = g_strdup_printf ("was created by a newer Saccade (schema %d); this "
                                             "version reads up to %d", newer,
                                             SC_STORE_SCHEMA_VERSION);
    g_autofree char *short_want = g_strdup_printf ("newer Saccade (schema %d)", newer);
    store_test_raw_exec (t.path, sql);
    store_test_assert_open_fails (t.path, TRUE, SC_ERR_UNSUPPORTED, want);
    store_test_assert_open_fails (t.path, FALSE, SC_ERR_UNSUPPORTED, short_want);
  }
  store_tmp_clear (&t);
}

/* An empty file: read-only it is a store without runs; writable it becomes a store. */
static void
test_schema_empty_file (void)
{
  StoreTmp t;
  ScStore *s;
  ScStoreRunInfo *runs = NULL, info = { 0 };
  ScStoreHead head = { 0 };
  ScError err = { 0 };
  size_t n = 7;

  store_tmp_init (&t);
  g_assert_true (g_file_set_contents (t.path, "", 0, NULL));
  s = store_test_open (t.path, FALSE);
  g_assert_cmpint (sc_store_schema_version (s), ==, 0);
  g_assert_cmpint (sc_store_list_runs (s, &runs, &n, &err), ==, SC_OK);
  g_assert_cmpuint (n, ==, 0);
  g_assert_null (runs);
  g_assert_cmpint (sc_store_get_run (s, 1, &info, &err), ==, SC_ERR_NOT_FOUND);
  g_assert_cmpint (sc_store_read_head (s, 1, 0, 0, &head, &err), ==, SC_ERR_NOT_FOUND);
  sc_store_close (s);
  g_assert_cmpint (store_test_file_size (t.path), ==, 0);
  s = store_test_open (t.path, TRUE);
  g_assert_cmpint (sc_store_schema_version (s), ==, SC_STORE_SCHEMA_VERSION);
  g_assert_cmpint (store_test_capture (s, 1, 3, TRUE), ==, 1);
  sc_store_close (s);
  store_tmp_clear (&t);
}

/* Two writers creating the same new store at once: one creates, the other finds it. */
static gpointer
open_close_thread (gpointer path)
{
  ScStore *s = store_test_open (path, TRUE);
  sc_store_close (s);
  return NULL;
}

static void
test_schema_concurrent_create (void)
{
  StoreTmp t;
  GThread *th[4];
  int i;

  store_tmp_init (&t);
  for (i = 0; i < 4; i++)
    th[i] = g_thread_new ("open", open_close_thread, t.path);
  for (i = 0; i < 4; i++)
    g_thread_join (th[i]);
  g_assert_cmpint (store_test_raw_int (t.path, "PRAGMA user_version"), ==, SC_STORE_SCHEMA_VERSION);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'"),
                   ==, 16); /* ours (15 with v5's attention_z) + sqlite_sequence */
  store_tmp_clear (&t);
}

/* ------------------------------------------------------------------------------------ */
/* 4. The queue                                                                          */

/* A queue of two slots: the forward pass waits for the writer, nothing is lost. */
static void
test_small_queue (void)
{
  StoreTmp t;
  ScStoreOptions opt = { .writable = TRUE, .queue_bytes = 1 };
  ScError err = { 0 };
  ScStore *s = NULL;
  gint64 id;

  store_tmp_init (&t);
  g_assert_cmpint (sc_store_open (t.path, &opt, &s, &err), ==, SC_OK);
  id = store_fake_capture (s, 77, 150, TRUE, 0, 0, &err);
  g_assert_cmpint (id, ==, 1);
  id = store_fake_capture (s, 78, 150, FALSE, 0, 0, &err);
  g_assert_cmpint (id, ==, 2);
  store_test_assert_run (s, 1);
  store_test_assert_run (s, 2);
  sc_store_close (s);
  store_tmp_clear (&t);
}

/* ------------------------------------------------------------------------------------ */
/* 5. Deleting                                                                           */

static void
test_delete (void)
{
  StoreTmp t;
  ScStore *s;
  ScStoreRunInfo info = { 0 };
  ScError err = { 0 };
  gint64 before, after, freed, run_bytes;
  int r;

  store_tmp_init (&t);
  s = store_test_open (t.path, TRUE);
  for (r = 1; r <= 4; r++)
    store_test_capture (s, (guint64) r, 200, TRUE);
  sc_store_close (s); /* checkpoints: the file holds everything */
  before = store_test_file_size (t.path);

  s = store_test_open (t.path, TRUE);
  g_assert_cmpint (sc_store_get_run (s, 2, &info, &err), ==, SC_OK);
  run_bytes = (gint64) info.attention_bytes;
  sc_store_run_info_clear (&info);
  g_assert_cmpint (sc_store_delete_run (s, 2, &err), ==, SC_OK);
  after = store_test_file_size (t.path); /* the store is still open: the checkpoint cut the file */
  freed = before - after;
  g_test_message ("deleting a run of %" G_GINT64_FORMAT " attention bytes: %" G_GINT64_FORMAT
                  " -> %" G_GINT64_FORMAT " bytes", run_bytes, before, after);
  g_assert_cmpint (freed, >=, run_bytes);
  g_assert_cmpint (sc_store_get_run (s, 2, &info, &err), ==, SC_ERR_NOT_FOUND);
  g_assert_cmpint (sc_store_delete_run (s, 2, &err), ==, SC_ERR_NOT_FOUND);
  store_test_assert_run (s, 1);
  store_test_assert_run (s, 3);
  store_test_assert_run (s, 4);

  /* ids are never reused, even for the last run */
  g_assert_cmpint (sc_store_delete_run (s, 4, &err), ==, SC_OK);
  g_assert_cmpint (store_test_capture (s, 9, 8, TRUE), ==, 5);
  sc_store_close (s);

  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM attention WHERE run_id IN (2, 4)"), ==,
                   0);
  g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM tokens WHERE run_id IN (2, 4)"), ==, 0);
  g_assert_cmpint (store_test_raw_int (t.path, "PRAGMA freelist_count"), ==, 0);
  store_test_assert_nothing_lost (t.path, 3, FALSE);
  store_tmp_clear (&t);
}

/* ------------------------------------------------------------------------------------ */
/* 6. Reading while a capture is half written                                            */

static void
test_read_during_capture (void)
{
  StoreTmp t;
  ScStore *w, *r;
  ScStoreCapture *cap = NULL;
  ScStoreModel model;
  ScStoreRunDesc desc = { 0 };
  ScStoreRunInfo *runs = NULL;
  ScStoreHead head = { 0 };
  ScError err = { 0 };
  g_autofree ScStoreToken *tokens = store_fake_tokens (2, 40);
  gsize text_len = 0;
  g_autofree char *text = store_fake_text (2, 40, TRUE, &text_len);
  size_t n = 0;
  gint64 id = 0;
  int l, h, k;

  store_tmp_init (&t);
  w = store_test_open (t.path, TRUE);
  store_test_capture (w, 1, 40, TRUE);
  r = store_test_open (t.path, FALSE);

  store_fake_model (&model, 0);
  desc.model = &model;
  desc.text = text;
  desc.text_len = text_len;
  desc.tokens = tokens;
  desc.n_tokens = 40;
  desc.backend = "fake";
  g_assert_cmpint (sc_store_capture_begin (w, &desc, &cap, &err), ==, SC_OK);
  for (k = 0, l = 0; l < STORE_FAKE_LAYERS; l++)
    for (h = 0; h < STORE_FAKE_HEADS; h++, k++)
      {
        g_autofree float *p = store_fake_head (2, l, h, 40, TRUE);
        g_assert_cmpint (sc_store_capture_add_head (cap, l, h, p, 40, 40, &err), ==, SC_OK);
        if (k == 6)
          {
            /* give the writer time to insert the first heads into its transaction */
            g_usleep (100000);
            g_assert_cmpint (sc_store_list_runs (r, &runs, &n, &err), ==, SC_OK);
            g_assert_cmpuint (n, ==, 1);
            sc_store_run_list_free (runs, n);
            g_assert_cmpint (sc_store_read_head (r, 2, 0, 0, &head, &err), ==, SC_ERR_NOT_FOUND);
            store_test_assert_run (r, 1);
            g_assert_cmpint (store_test_raw_int (t.path, "SELECT count(*) FROM attention"), ==, 12);
          }
      }
  g_assert_cmpint (sc_store_capture_commit (cap, 1.0, &id, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_list_runs (r, &runs, &n, &err), ==, SC_OK);
  g_assert_cmpuint (n, ==, 2);
  sc_store_run_list_free (runs, n);
  store_test_assert_run (r, id);
  sc_store_close (r);
  sc_store_close (w);
  store_tmp_clear (&t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/store/blob/every-fp16-exact", test_blob_exact);
  g_test_add_func ("/store/blob/simd-matches-scalar", test_blob_simd_matches_scalar);
  g_test_add_func ("/store/blob/sizes", test_blob_sizes);
  g_test_add_func ("/store/blob/fp16-bound", test_fp16_bound);
  g_test_add_func ("/store/roundtrip/causal", test_roundtrip_causal);
  g_test_add_func ("/store/roundtrip/full", test_roundtrip_full);
  g_test_add_func ("/store/roundtrip/packing-halves", test_packing_halves);
  g_test_add_func ("/store/roundtrip/forward-pass", test_roundtrip_forward);
  g_test_add_func ("/store/roundtrip/models-apart", test_models_apart);
  g_test_add_func ("/store/schema/version-1", test_schema);
  g_test_add_func ("/store/schema/newer-version", test_schema_newer);
  g_test_add_func ("/store/schema/empty-file", test_schema_empty_file);
  g_test_add_func ("/store/schema/concurrent-create", test_schema_concurrent_create);
  g_test_add_func ("/store/queue/two-slots", test_small_queue);
  g_test_add_func ("/store/delete/reclaims-space", test_delete);
  g_test_add_func ("/store/concurrency/read-during-capture", test_read_during_capture);
  return g_test_run ();
}
