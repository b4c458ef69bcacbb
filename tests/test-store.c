/* test-store.c — the capture store on hand-built data (no model file needed).
 *
 * 1. The BLOB layout: every finite fp16 survives pack/unpack; packing halves causal heads.
 * 2. Round trips: causal and full heads read back as the fp16 rounding of what was
 *    captured (relative error <= 2^-11 in fp16's normal range, exact zeros kept); tokens,
 *    invalid UTF-8 pieces and the text byte for byte; a real forward pass on a tiny GGUF
 *    model through the observer; model identity (same file at two paths = one model).
 * 3. The schema: version 1 with every table, WAL, foreign keys, incremental auto-vacuum;
 *    a newer version is refused without being touched.
 * 4. Bad input, each with a clear message and nothing lost: not a database, another
 *    application's database, corrupt and truncated files, a read-only file and folder,
 *    a full disk (three ways), a locked database, run ids that do not exist, misuse.
 * 5. Deleting a run gives its space back; run ids are never reused.
 * 6. Reading from a second connection while a capture is half written sees no part of it.
 * The multi-process tests (SIGKILL, concurrent readers) are test-store-crash.c and
 * test-store-concurrency.c.
 */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/sc-math.h"
#include "engine/sc-store-private.h"
#include "sc-test-gguf.h"
#include "store-fake.h"

/* ------------------------------------------------------------------------------------ */
/* Helpers                                                                               */

typedef struct {
  char *dir;
  char *path;
} Tmp;

static void
tmp_init (Tmp *t)
{
  t->dir = g_dir_make_tmp ("sc-store-XXXXXX", NULL);
  g_assert_nonnull (t->dir);
  g_chmod (t->dir, 0755); /* the read-only tests run as another user */
  t->path = g_build_filename (t->dir, "captures.sqlite", NULL);
}

static void
remove_tree (const char *path)
{
  GDir *d = g_dir_open (path, 0, NULL);
  const char *name;

  if (d != NULL)
    {
      while ((name = g_dir_read_name (d)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          remove_tree (child);
        }
      g_dir_close (d);
      g_rmdir (path);
    }
  else
    g_unlink (path);
}

static void
tmp_clear (Tmp *t)
{
  g_chmod (t->dir, 0755);
  remove_tree (t->dir);
  g_free (t->dir);
  g_free (t->path);
}

static ScStore *
open_store (const char *path, gboolean writable)
{
  ScStoreOptions opt = { .writable = writable };
  ScError err = { 0 };
  ScStore *s = NULL;

  if (sc_store_open (path, &opt, &s, &err) != SC_OK)
    g_error ("opening %s: %s", path, err.message);
  return s;
}

static gint64
capture (ScStore *s, guint64 seed, int n, gboolean causal)
{
  ScError err = { 0 };
  gint64 id = store_fake_capture (s, seed, n, causal, 0, 0, &err);
  if (id < 0)
    g_error ("capturing seed %" G_GUINT64_FORMAT ": %s", seed, err.message);
  return id;
}

static void
assert_run_ok (ScStore *s, gint64 id)
{
  g_autofree char *why = NULL;
  if (!store_fake_verify (s, id, &why))
    g_error ("%s", why);
}

static gint64
raw_int (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  gint64 v = -1;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &st, NULL), ==, SQLITE_OK);
  if (sqlite3_step (st) == SQLITE_ROW)
    v = sqlite3_column_int64 (st, 0);
  sqlite3_finalize (st);
  sqlite3_close (db);
  return v;
}

static char *
raw_text (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  char *v = NULL;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &st, NULL), ==, SQLITE_OK);
  if (sqlite3_step (st) == SQLITE_ROW)
    v = g_strdup ((const char *) sqlite3_column_text (st, 0));
  sqlite3_finalize (st);
  sqlite3_close (db);
  return v;
}

static void
raw_exec (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  char *msg = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  if (sqlite3_exec (db, sql, NULL, NULL, &msg) != SQLITE_OK)
    g_error ("%s: %s", sql, msg);
  sqlite3_close (db);
}

/* SHA-256 of a file's bytes, or "" when it does not exist. */
static char *
file_digest (const char *path)
{
  g_autofree char *data = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &data, &len, NULL))
    return g_strdup ("");
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) data, len);
}

static gint64
file_size (const char *path)
{
  struct stat sb;
  return stat (path, &sb) == 0 ? (gint64) sb.st_size : -1;
}

/* Asserts that opening @path (@writable) fails with @status and a message containing
 * @needle and the path, and leaves the file's bytes as they were. */
static void
assert_open_fails (const char *path, gboolean writable, ScStatus status, const char *needle)
{
  g_autofree char *before = file_digest (path);
  g_autofree char *after = NULL;
  ScStoreOptions opt = { .writable = writable };
  ScError err = { 0 };
  ScStore *s = NULL;
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);

  g_assert_cmpint (sc_store_open (path, &opt, &s, &err), ==, status);
  g_assert_null (s);
  g_test_message ("%s open of %s: %s", writable ? "writable" : "read-only", path, err.message);
  if (strstr (err.message, needle) == NULL)
    g_error ("message lacks '%s': %s", needle, err.message);
  g_assert_nonnull (strstr (err.message, path));
  after = file_digest (path);
  g_assert_cmpstr (before, ==, after);
  g_assert_false (g_file_test (wal, G_FILE_TEST_EXISTS) && file_size (wal) > 0);
}

static void
assert_message (const ScError *err, const char *needle)
{
  if (strstr (err->message, needle) == NULL)
    g_error ("message lacks '%s': %s", needle, err->message);
}

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
  Tmp t;
  ScStore *s;
  ScStoreRunInfo info = { 0 };
  ScError err = { 0 };
  gint64 id, id2;
  g_autofree ScStoreToken *want = NULL;
  ScStoreToken *got = NULL;
  size_t n_got = 0, i;
  const int n = 37;

  tmp_init (&t);
  s = open_store (t.path, TRUE);
  id = capture (s, 11, n, causal);
  id2 = capture (s, 12, 1, causal); /* a single token: the smallest head */
  g_assert_cmpint (id, ==, 1);
  g_assert_cmpint (id2, ==, 2);
  assert_run_ok (s, id);
  assert_run_ok (s, id2);

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
    g_autofree char *layout = raw_text (t.path, "SELECT DISTINCT layout FROM attention");
    g_assert_cmpstr (layout, ==, causal ? "causal" : "full");
  }
  sc_store_close (s);

  /* and again from a fresh read-only connection */
  s = open_store (t.path, FALSE);
  assert_run_ok (s, id);
  sc_store_close (s);
  tmp_clear (&t);
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
  Tmp t;
  ScStore *s;
  ScStoreRunInfo a = { 0 }, b = { 0 };
  ScError err = { 0 };
  const int n = 128;

  tmp_init (&t);
  s = open_store (t.path, TRUE);
  capture (s, 1, n, TRUE);
  capture (s, 2, n, FALSE);
  g_assert_cmpint (sc_store_get_run (s, 1, &a, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_get_run (s, 2, &b, &err), ==, SC_OK);
  g_test_message ("n = %d: causal %" G_GUINT64_FORMAT " bytes, full %" G_GUINT64_FORMAT
                  " bytes (%.4f)", n, a.attention_bytes, b.attention_bytes,
                  (double) a.attention_bytes / b.attention_bytes);
  g_assert_cmpfloat ((double) a.attention_bytes / b.attention_bytes, ==, (n + 1.0) / (2.0 * n));
  sc_store_run_info_clear (&a);
  sc_store_run_info_clear (&b);
  sc_store_close (s);
  tmp_clear (&t);
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
  Tmp t;
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

  tmp_init (&t);
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
  {
    guint8 want[32];
    g_assert_cmpint (sc_sha256_file (mpath, want, NULL, &err), ==, SC_OK);
    g_assert_cmpmem (ident.sha256, 32, want, 32);
  }

  g_assert_cmpint (sc_tokenize (sc_model_tokenizer (model), text, strlen (text), true, false, &ids,
                                &n_ids, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_tokens_from_ids (sc_model_tokenizer (model), ids, n_ids, &pieces,
                                             &err), ==, SC_OK);
  s = open_store (t.path, TRUE);
  desc.model = &ident;
  desc.text = text;
  desc.text_len = strlen (text);
  desc.tokens = pieces;
  desc.n_tokens = n_ids;
  desc.backend = backend->ops->name;
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
  g_assert_cmpint (raw_int (t.path, "SELECT count(*) FROM models"), ==, 1);
  {
    g_autofree char *p = raw_text (t.path, "SELECT path FROM models");
    g_assert_cmpstr (p, ==, mlink); /* the latest path is kept */
  }
  g_assert_cmpint (sc_store_find_model (s, ident2.sha256, &mid2, &err), ==, SC_ERR_NOT_FOUND);
  assert_message (&err, "has no model with SHA-256");

  sc_session_free (session);
  sc_backend_free (backend);
  sc_model_free (model);
  sc_model_free (model2);
  sc_store_tokens_free (pieces);
  free (ids);
  g_free (tee.copy);
  g_string_free (joined, TRUE);
  sc_store_close (s);
  tmp_clear (&t);
}

/* Runs of different models stay apart: each run names its own model. */
static void
test_models_apart (void)
{
  Tmp t;
  ScStore *s;
  ScStoreRunInfo *runs = NULL;
  ScError err = { 0 };
  size_t n = 0;

  tmp_init (&t);
  s = open_store (t.path, TRUE);
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
  g_assert_cmpint (raw_int (t.path, "SELECT count(*) FROM models"), ==, 2);
  sc_store_close (s);
  tmp_clear (&t);
}

/* ------------------------------------------------------------------------------------ */
/* 3. Schema                                                                             */

static void
test_schema (void)
{
  static const char *tables[] = { "ablations", "attention", "head_scores", "models", "runs",
                                  "studies", "tokens" };
  Tmp t;
  ScStore *s;
  gsize i;

  tmp_init (&t);
  s = open_store (t.path, TRUE);
  g_assert_cmpint (sc_store_schema_version (s), ==, SC_STORE_SCHEMA_VERSION);
  capture (s, 5, 4, TRUE);
  sc_store_close (s);

  g_assert_cmpint (raw_int (t.path, "PRAGMA user_version"), ==, 1);
  g_assert_cmpint (raw_int (t.path, "PRAGMA application_id"), ==, SC_STORE_APPLICATION_ID);
  g_assert_cmpint (raw_int (t.path, "PRAGMA auto_vacuum"), ==, 2); /* incremental */
  g_assert_cmpint (raw_int (t.path, "PRAGMA page_size"), ==, SC_STORE_PAGE_SIZE);
  {
    g_autofree char *mode = raw_text (t.path, "PRAGMA journal_mode");
    g_assert_cmpstr (mode, ==, "wal");
  }
  for (i = 0; i < G_N_ELEMENTS (tables); i++)
    {
      g_autofree char *sql = g_strdup_printf ("SELECT count(*) FROM sqlite_schema WHERE "
                                              "type = 'table' AND name = '%s'", tables[i]);
      g_assert_cmpint (raw_int (t.path, sql), ==, 1);
    }
  g_assert_cmpint (raw_int (t.path, "SELECT count(*) FROM pragma_foreign_key_check"), ==, 0);
  /* reopening a current store changes nothing */
  {
    g_autofree char *before = file_digest (t.path);
    g_autofree char *after = NULL;
    s = open_store (t.path, TRUE);
    sc_store_close (s);
    after = file_digest (t.path);
    g_assert_cmpstr (before, ==, after);
  }
  tmp_clear (&t);
}

/* A store from a newer Saccade is refused, read-only or writable, and not modified. */
static void
test_schema_newer (void)
{
  Tmp t;
  ScStore *s;

  tmp_init (&t);
  s = open_store (t.path, TRUE);
  capture (s, 1, 4, TRUE);
  sc_store_close (s);
  raw_exec (t.path, "PRAGMA user_version = 7");
  assert_open_fails (t.path, TRUE, SC_ERR_UNSUPPORTED,
                     "was created by a newer Saccade (schema 7); this version reads up to 1");
  assert_open_fails (t.path, FALSE, SC_ERR_UNSUPPORTED, "newer Saccade (schema 7)");
  tmp_clear (&t);
}

/* Two writers creating the same new store at once: one creates, the other finds it. */
static gpointer
open_close_thread (gpointer path)
{
  ScStore *s = open_store (path, TRUE);
  sc_store_close (s);
  return NULL;
}

static void
test_schema_concurrent_create (void)
{
  Tmp t;
  GThread *th[4];
  int i;

  tmp_init (&t);
  for (i = 0; i < 4; i++)
    th[i] = g_thread_new ("open", open_close_thread, t.path);
  for (i = 0; i < 4; i++)
    g_thread_join (th[i]);
  g_assert_cmpint (raw_int (t.path, "PRAGMA user_version"), ==, 1);
  g_assert_cmpint (raw_int (t.path, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'"),
                   ==, 8); /* ours + sqlite_sequence */
  tmp_clear (&t);
}

/* ------------------------------------------------------------------------------------ */
/* 4. Bad input                                                                          */

static void
test_not_a_database (void)
{
  Tmp t;

  tmp_init (&t);
  g_assert_true (g_file_set_contents (t.path, "Dear diary,\nthis is not a database. "
                                      "It is long enough to hold a header, though: "
                                      "0123456789012345678901234567890123456789012345678901234"
                                      "5678901234567890123456789\n", -1, NULL));
  assert_open_fails (t.path, TRUE, SC_ERR_DB, "is not an SQLite database");
  assert_open_fails (t.path, FALSE, SC_ERR_DB, "is not an SQLite database");
  /* a folder where the file should be */
  assert_open_fails (t.dir, TRUE, SC_ERR_IO, "is a folder");
  /* a missing file, read-only */
  {
    g_autofree char *missing = g_build_filename (t.dir, "missing.sqlite", NULL);
    ScStoreOptions ro = { 0 };
    ScError err = { 0 };
    ScStore *s = NULL;
    g_assert_cmpint (sc_store_open (missing, &ro, &s, &err), ==, SC_ERR_NOT_FOUND);
    assert_message (&err, "no capture store at");
    g_assert_false (g_file_test (missing, G_FILE_TEST_EXISTS));
  }
  tmp_clear (&t);
}

static void
test_foreign_database (void)
{
  Tmp t;

  tmp_init (&t);
  raw_exec (t.path, "CREATE TABLE recipes (name TEXT); INSERT INTO recipes VALUES ('soup')");
  assert_open_fails (t.path, TRUE, SC_ERR_FORMAT, "is an SQLite database but not a Saccade "
                                                  "capture store");
  assert_open_fails (t.path, FALSE, SC_ERR_FORMAT, "not a Saccade capture store");
  g_assert_cmpint (raw_int (t.path, "SELECT count(*) FROM recipes"), ==, 1);
  tmp_clear (&t);
}

/* Builds a store of three runs and returns its page size and page count. */
static void
three_runs (const char *path)
{
  ScStore *s = open_store (path, TRUE);
  capture (s, 1, 64, TRUE);
  capture (s, 2, 64, TRUE);
  capture (s, 3, 64, TRUE);
  sc_store_close (s);
}

static void
overwrite (const char *path, gint64 at, const void *bytes, gsize len)
{
  FILE *f = fopen (path, "r+b");
  g_assert_nonnull (f);
  g_assert_cmpint (fseek (f, (long) at, SEEK_SET), ==, 0);
  g_assert_cmpuint (fwrite (bytes, 1, len, f), ==, len);
  fclose (f);
}

static void
test_corrupt (void)
{
  Tmp t;
  ScStore *s = NULL;
  ScError err = { 0 };
  ScStoreRunInfo *runs = NULL;
  size_t n = 0;
  gint64 size;
  guint8 garbage[SC_STORE_PAGE_SIZE];
  ScStatus st;
  int l, h, failures = 0;
  gint64 r;

  tmp_init (&t);

  /* (a) a damaged header */
  three_runs (t.path);
  overwrite (t.path, 0, "SQLite formax 3", 16);
  assert_open_fails (t.path, TRUE, SC_ERR_DB, "is not an SQLite database");
  assert_open_fails (t.path, FALSE, SC_ERR_DB, "is not an SQLite database");
  g_unlink (t.path);

  /* (b) truncated to a third: opens (the header is intact), but reading the cut-off runs
   * fails with a message, never a crash */
  three_runs (t.path);
  size = file_size (t.path);
  g_assert_cmpint (truncate (t.path, size / 3), ==, 0);
  st = sc_store_open (t.path, NULL, &s, &err);
  if (st == SC_OK)
    {
      st = sc_store_check (s, &err);
      g_assert_cmpint (st, ==, SC_ERR_DB);
      g_test_message ("truncated: %s", err.message);
      assert_message (&err, t.path);
      for (r = 1; r <= 3; r++)
        {
          g_autofree char *why = NULL;
          failures += !store_fake_verify (s, r, &why);
          if (why != NULL)
            g_test_message ("truncated, run %" G_GINT64_FORMAT ": %s", r, why);
        }
      g_assert_cmpint (failures, >, 0);
      sc_store_close (s);
    }
  else
    {
      g_test_message ("truncated: %s", err.message);
      assert_message (&err, t.path);
    }
  g_unlink (t.path);

  /* (c) garbage over interior pages (the b-tree of the attention table and the heads):
   * every failing call says the store is corrupt; nothing crashes; integrity_check
   * notices */
  three_runs (t.path);
  size = file_size (t.path);
  memset (garbage, 0xA5, sizeof garbage);
  for (r = 2; r < size / SC_STORE_PAGE_SIZE; r += 3)
    overwrite (t.path, r * SC_STORE_PAGE_SIZE, garbage, sizeof garbage);
  s = open_store (t.path, FALSE);
  g_assert_cmpint (sc_store_check (s, &err), ==, SC_ERR_DB);
  assert_message (&err, "fails its integrity check");
  st = sc_store_list_runs (s, &runs, &n, &err);
  if (st != SC_OK)
    {
      g_assert_cmpint (st, ==, SC_ERR_DB);
      assert_message (&err, "corrupt");
    }
  sc_store_run_list_free (runs, n);
  failures = 0;
  for (r = 1; r <= 3; r++)
    for (l = 0; l < STORE_FAKE_LAYERS; l++)
      for (h = 0; h < STORE_FAKE_HEADS; h++)
        {
          ScStoreHead head = { 0 };
          st = sc_store_read_head (s, r, l, h, &head, &err);
          if (st != SC_OK && st != SC_ERR_NOT_FOUND)
            {
              failures++;
              g_assert_true (st == SC_ERR_DB || st == SC_ERR_FORMAT);
              assert_message (&err, t.path);
            }
          sc_store_head_clear (&head);
        }
  g_test_message ("garbage pages: %d of %d head reads failed cleanly (%s)", failures,
                  3 * STORE_FAKE_LAYERS * STORE_FAKE_HEADS, err.message);
  g_assert_cmpint (failures, >, 0);
  sc_store_close (s);
  tmp_clear (&t);
}

static void
test_missing_run (void)
{
  Tmp t;
  ScStore *s;
  ScStoreRunInfo info = { 0 };
  ScStoreHead head = { 0 };
  ScStoreToken *tok = NULL;
  ScError err = { 0 };
  size_t n = 0;

  tmp_init (&t);
  s = open_store (t.path, TRUE);
  capture (s, 1, 5, TRUE);
  g_assert_cmpint (sc_store_get_run (s, 42, &info, &err), ==, SC_ERR_NOT_FOUND);
  assert_message (&err, "has no run 42");
  assert_message (&err, t.path);
  g_assert_cmpint (sc_store_read_head (s, 42, 0, 0, &head, &err), ==, SC_ERR_NOT_FOUND);
  assert_message (&err, "has no run 42");
  g_assert_cmpint (sc_store_read_tokens (s, 42, &tok, &n, &err), ==, SC_ERR_NOT_FOUND);
  assert_message (&err, "has no run 42");
  g_assert_cmpint (sc_store_delete_run (s, 42, &err), ==, SC_ERR_NOT_FOUND);
  assert_message (&err, "has no run 42");
  g_assert_cmpint (sc_store_read_head (s, 1, STORE_FAKE_LAYERS, 0, &head, &err), ==,
                   SC_ERR_NOT_FOUND);
  assert_message (&err, "run 1 has no layer 4 head 0");
  g_assert_cmpint (sc_store_read_head (s, 1, 0, -1, &head, &err), ==, SC_ERR_NOT_FOUND);
  g_assert_cmpint (sc_store_read_head (s, -3, 0, 0, &head, &err), ==, SC_ERR_NOT_FOUND);
  g_assert_null (head.probs);
  assert_run_ok (s, 1);
  sc_store_close (s);
  tmp_clear (&t);
}

/* Misuse of the capture API fails clearly and stores nothing. */
static void
test_capture_misuse (void)
{
  Tmp t;
  ScStore *s, *ro;
  ScStoreCapture *cap = NULL, *cap2 = NULL;
  ScStoreModel model;
  ScStoreRunDesc desc = { 0 };
  g_autofree ScStoreToken *tokens = store_fake_tokens (1, 6);
  g_autofree float *p = store_fake_head (1, 0, 0, 6, TRUE);
  ScError err = { 0 };
  ScObserver obs;
  gint64 id = 0;
  int l, h;

  tmp_init (&t);
  s = open_store (t.path, TRUE);
  capture (s, 1, 6, TRUE);
  store_fake_model (&model, 0);
  desc.model = &model;
  desc.tokens = tokens;
  desc.n_tokens = 6;
  desc.backend = "fake";

  /* read-only stores do not capture */
  ro = open_store (t.path, FALSE);
  g_assert_cmpint (sc_store_capture_begin (ro, &desc, &cap, &err), ==, SC_ERR_INVALID_ARG);
  assert_message (&err, "opened read-only");
  g_assert_cmpint (sc_store_delete_run (ro, 1, &err), ==, SC_ERR_INVALID_ARG);
  sc_store_close (ro);

  /* no tokens */
  desc.n_tokens = 0;
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_ERR_INVALID_ARG);
  desc.n_tokens = 6;

  /* one capture at a time */
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap2, &err), ==, SC_ERR_INVALID_ARG);
  assert_message (&err, "another capture is open");

  /* a missing head: the commit fails and nothing is stored */
  for (l = 0; l < STORE_FAKE_LAYERS; l++)
    for (h = 0; h < STORE_FAKE_HEADS; h++)
      if (l != 2 || h != 1)
        g_assert_cmpint (sc_store_capture_add_head (cap, l, h, p, 6, 6, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_capture_commit (cap, -1, &id, &err), ==, SC_ERR_INVALID_ARG);
  assert_message (&err, "the run has 11 of its 12 heads");
  assert_message (&err, "earlier runs are intact");

  /* a head out of range, of the wrong shape, twice: the capture fails, the observer says
   * stop, the commit reports the first error */
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_OK);
  obs = sc_store_capture_observer (cap);
  g_assert_true (obs.observe (obs.user, 0, 0, p, 6, 6));
  g_assert_cmpint (sc_store_capture_add_head (cap, 0, 0, p, 6, 6, &err), ==, SC_ERR_INVALID_ARG);
  assert_message (&err, "layer 0 head 0 was added twice");
  g_assert_false (obs.observe (obs.user, 0, 1, p, 6, 6));
  g_assert_cmpint (sc_store_capture_status (cap, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_store_capture_commit (cap, -1, &id, &err), ==, SC_ERR_INVALID_ARG);
  assert_message (&err, "added twice");

  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_capture_add_head (cap, 9, 0, p, 6, 6, &err), ==, SC_ERR_INVALID_ARG);
  assert_message (&err, "outside the run's 4 x 3 heads");
  sc_store_capture_abort (cap);

  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_capture_add_head (cap, 0, 0, p, 5, 5, &err), ==, SC_ERR_INVALID_ARG);
  assert_message (&err, "the run's heads are 6 x 6");
  sc_store_capture_abort (cap);

  /* abort after every head: nothing stored */
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_OK);
  for (l = 0; l < STORE_FAKE_LAYERS; l++)
    for (h = 0; h < STORE_FAKE_HEADS; h++)
      g_assert_cmpint (sc_store_capture_add_head (cap, l, h, p, 6, 6, &err), ==, SC_OK);
  sc_store_capture_abort (cap);
  sc_store_capture_abort (NULL);

  /* closing a store with a capture open aborts it */
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_capture_add_head (cap, 0, 0, p, 6, 6, &err), ==, SC_OK);
  sc_store_close (s);

  g_assert_cmpint (raw_int (t.path, "SELECT count(*) FROM runs"), ==, 1);
  g_assert_cmpint (raw_int (t.path, "SELECT count(*) FROM attention"), ==, 12);
  g_assert_cmpint (raw_int (t.path, "SELECT count(*) FROM tokens"), ==, 6);
  s = open_store (t.path, TRUE);
  assert_run_ok (s, 1);
  g_assert_cmpint (capture (s, 2, 6, TRUE), ==, 2); /* ids of rolled-back runs are reused */
  sc_store_close (s);
  tmp_clear (&t);
}

/* A queue of two slots: the forward pass waits for the writer, nothing is lost. */
static void
test_small_queue (void)
{
  Tmp t;
  ScStoreOptions opt = { .writable = TRUE, .queue_bytes = 1 };
  ScError err = { 0 };
  ScStore *s = NULL;
  gint64 id;

  tmp_init (&t);
  g_assert_cmpint (sc_store_open (t.path, &opt, &s, &err), ==, SC_OK);
  id = store_fake_capture (s, 77, 150, TRUE, 0, 0, &err);
  g_assert_cmpint (id, ==, 1);
  id = store_fake_capture (s, 78, 150, FALSE, 0, 0, &err);
  g_assert_cmpint (id, ==, 2);
  assert_run_ok (s, 1);
  assert_run_ok (s, 2);
  sc_store_close (s);
  tmp_clear (&t);
}

/* The checks, as a user who may read but not write. */
static void
read_only_checks (const Tmp *t, gboolean folder)
{
  ScStore *s = NULL;
  ScStoreRunInfo *runs = NULL;
  ScStoreCapture *cap = NULL;
  ScStoreRunDesc desc = { 0 };
  ScError err = { 0 };
  size_t n = 0;

  /* writing fails, saying why */
  assert_open_fails (t->path, TRUE, SC_ERR_IO, folder ? "is not writable" : "is read-only");
  /* reading works */
  s = open_store (t->path, FALSE);
  g_assert_cmpint (sc_store_list_runs (s, &runs, &n, &err), ==, SC_OK);
  g_assert_cmpuint (n, ==, 3);
  sc_store_run_list_free (runs, n);
  assert_run_ok (s, 1);
  assert_run_ok (s, 3);
  g_assert_cmpint (sc_store_capture_begin (s, &desc, &cap, &err), ==, SC_ERR_INVALID_ARG);
  sc_store_close (s);
}

/* A store whose file (or folder) the user cannot write. Root ignores permission bits, so
 * as root the checks run in a child process that has become "nobody". */
static void
read_only_body (gboolean folder)
{
  Tmp t;
  g_autofree char *before = NULL, *after = NULL;
  gboolean root = geteuid () == 0;
  pid_t pid;
  int status = 0;

  tmp_init (&t);
  three_runs (t.path);
  before = file_digest (t.path);
  if (folder)
    {
      /* the file is the user's and writable; only the folder is not */
      if (root)
        g_assert_cmpint (chown (t.path, 65534, 65534), ==, 0);
      g_assert_cmpint (g_chmod (t.path, 0644), ==, 0);
      g_assert_cmpint (g_chmod (t.dir, 0555), ==, 0);
    }
  else
    {
      /* the folder takes new files (-wal, -shm); the file is read-only */
      if (root)
        g_assert_cmpint (chown (t.dir, 65534, 65534), ==, 0);
      g_assert_cmpint (g_chmod (t.dir, root ? 0755 : 0777), ==, 0);
      g_assert_cmpint (g_chmod (t.path, 0444), ==, 0);
    }
  if (!root)
    read_only_checks (&t, folder);
  else if ((pid = fork ()) == 0)
    {
      if (setgid (65534) != 0 || setuid (65534) != 0)
        _exit (3);
      read_only_checks (&t, folder);
      _exit (0);
    }
  else
    {
      g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
      g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    }
  after = file_digest (t.path);
  g_assert_cmpstr (before, ==, after);
  tmp_clear (&t);
}

static void
test_read_only_file (void)
{
  read_only_body (FALSE);
}

static void
test_read_only_folder (void)
{
  read_only_body (TRUE);
}

/* After a failed capture: every run left reads back intact, there are @n_runs of them,
 * the file passes its integrity check, no row of an unfinished run is left, and (when
 * @then_capture) the store takes a new run. */
static void
assert_nothing_lost (const char *path, size_t n_runs, gboolean then_capture)
{
  ScStore *s = open_store (path, FALSE);
  ScStoreRunInfo *runs = NULL;
  ScError err = { 0 };
  size_t n = 0, i;
  gint64 last = 0;

  g_assert_cmpint (sc_store_check (s, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_list_runs (s, &runs, &n, &err), ==, SC_OK);
  g_assert_cmpuint (n, ==, n_runs);
  for (i = 0; i < n; i++)
    {
      assert_run_ok (s, runs[i].id);
      last = runs[i].id;
    }
  sc_store_run_list_free (runs, n);
  sc_store_close (s);
  g_assert_cmpint (raw_int (path, "SELECT count(*) FROM runs WHERE status <> 'complete'"), ==, 0);
  g_assert_cmpint (raw_int (path, "SELECT count(*) FROM attention WHERE run_id NOT IN "
                                  "(SELECT id FROM runs)"), ==, 0);
  g_assert_cmpint (raw_int (path, "SELECT count(*) FROM tokens WHERE run_id NOT IN "
                                  "(SELECT id FROM runs)"), ==, 0);
  if (then_capture)
    {
      s = open_store (path, TRUE);
      g_assert_cmpint (capture (s, 500, 8, TRUE), >, last);
      sc_store_close (s);
    }
}

/* A full disk, simulated by a size limit on the database (PRAGMA max_page_count). */
static void
test_full_disk_quota (void)
{
  Tmp t;
  /* an empty store takes ~18 pages (1.1 MB at 64 KiB pages); two small runs fit */
  ScStoreOptions opt = { .writable = TRUE, .max_bytes = 3u << 20 };
  ScError err = { 0 };
  ScStore *s = NULL;
  gint64 id;

  tmp_init (&t);
  g_assert_cmpint (sc_store_open (t.path, &opt, &s, &err), ==, SC_OK);
  g_assert_cmpint (store_fake_capture (s, 1, 64, TRUE, 0, 0, &err), ==, 1);
  g_assert_cmpint (store_fake_capture (s, 2, 64, TRUE, 0, 0, &err), ==, 2);
  /* 12 heads of 500 x 501 bytes: 3 MB, over the limit */
  id = store_fake_capture (s, 3, 500, TRUE, 0, 0, &err);
  g_assert_cmpint (id, ==, -1);
  g_test_message ("quota: %s", err.message);
  g_assert_cmpint (err.status, ==, SC_ERR_DB);
  assert_message (&err, t.path);
  assert_message (&err, "the disk is full");
  assert_message (&err, "the run was not stored, earlier runs are intact");
  /* the store stays usable */
  g_assert_cmpint (store_fake_capture (s, 4, 16, TRUE, 0, 0, &err), ==, 3);
  sc_store_close (s);
  assert_nothing_lost (t.path, 3, FALSE);
  tmp_clear (&t);
}

/* A full disk, simulated by a file size limit (RLIMIT_FSIZE): the writes themselves fail,
 * as they do when a disk fills up. */
static void
test_full_disk_fsize (void)
{
  Tmp t;
  ScError err = { 0 };
  ScStore *s;
  struct rlimit rl;
  gint64 limit, id;
  g_autofree char *wal = NULL;

  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
      g_test_trap_assert_passed ();
      return;
    }
  signal (SIGXFSZ, SIG_IGN);
  tmp_init (&t);
  wal = g_strconcat (t.path, "-wal", NULL);
  s = open_store (t.path, TRUE);
  capture (s, 1, 64, TRUE);
  capture (s, 2, 64, TRUE);
  limit = MAX (file_size (t.path), file_size (wal)) + 64 * 1024;
  g_assert_cmpint (getrlimit (RLIMIT_FSIZE, &rl), ==, 0);
  rl.rlim_cur = (rlim_t) limit;
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &rl), ==, 0);
  id = store_fake_capture (s, 3, 300, TRUE, 0, 0, &err);
  g_assert_cmpint (id, ==, -1);
  g_printerr ("# file size limit %" G_GINT64_FORMAT ": %s\n", limit, err.message);
  g_assert_cmpint (err.status, ==, SC_ERR_DB);
  assert_message (&err, t.path);
  /* SQLite reports the failed write as an I/O error (EFBIG is not ENOSPC) */
  g_assert_true (strstr (err.message, "the disk is full") != NULL
                 || strstr (err.message, "writing to the disk failed (is it full?)") != NULL);
  assert_message (&err, "earlier runs are intact");
  rl.rlim_cur = rl.rlim_max;
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &rl), ==, 0);
  sc_store_close (s);
  assert_nothing_lost (t.path, 2, TRUE);
  tmp_clear (&t);
}

/* A real full disk: a 4 MiB tmpfs in a private mount namespace (needs root or user
 * namespaces; skipped where neither is allowed). */
static void
test_full_disk_tmpfs (void)
{
  Tmp t;
  g_autofree char *mnt = NULL, *path = NULL;
  ScError err = { 0 };
  ScStore *s;
  int r, ok = 0;
  gint64 id = 0;

  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
      if (g_test_trap_has_passed ())
        return;
      g_test_trap_assert_stdout ("*cannot mount a tmpfs here*");
      g_test_skip ("cannot mount a tmpfs here (no root, no user namespaces)");
      return;
    }
  tmp_init (&t);
  mnt = g_build_filename (t.dir, "mnt", NULL);
  g_mkdir (mnt, 0755);
  if (unshare (CLONE_NEWNS | (geteuid () == 0 ? 0 : CLONE_NEWUSER)) != 0
      || mount ("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0
      || mount ("tmpfs", mnt, "tmpfs", 0, "size=4m") != 0)
    {
      printf ("cannot mount a tmpfs here: %s\n", g_strerror (errno));
      fflush (stdout);
      tmp_clear (&t);
      exit (1);
    }
  path = g_build_filename (mnt, "captures.sqlite", NULL);
  s = open_store (path, TRUE);
  /* runs of 12 x 150 x 151 bytes (272 kB) until the disk is full */
  for (r = 1; r <= 40; r++)
    {
      id = store_fake_capture (s, (guint64) r, 150, TRUE, 0, 0, &err);
      if (id < 0)
        break;
      ok++;
    }
  g_assert_cmpint (id, ==, -1);
  g_assert_cmpint (ok, >, 0);
  g_printerr ("# tmpfs full after %d runs: %s\n", ok, err.message);
  g_assert_cmpint (err.status, ==, SC_ERR_DB);
  assert_message (&err, "the disk is full");
  assert_message (&err, "earlier runs are intact");
  sc_store_close (s);
  assert_nothing_lost (path, ok, FALSE);
  umount (mnt);
  tmp_clear (&t);
}

/* Another process holds the write lock: a capture waits for the busy timeout, then fails
 * saying so; reading goes on meanwhile; once the lock is gone, capturing works. */
static void
test_locked (void)
{
  Tmp t;
  ScStoreOptions opt = { .writable = TRUE, .busy_timeout_ms = 300 };
  ScStore *s = NULL, *ro;
  ScStoreRunInfo *runs = NULL;
  ScError err = { 0 };
  sqlite3 *other = NULL;
  size_t n = 0;
  gint64 t0, id;

  tmp_init (&t);
  three_runs (t.path);
  g_assert_cmpint (sqlite3_open (t.path, &other), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (other, "BEGIN IMMEDIATE; DELETE FROM head_scores", NULL, NULL,
                                 NULL), ==, SQLITE_OK);

  g_assert_cmpint (sc_store_open (t.path, &opt, &s, &err), ==, SC_OK);
  t0 = g_get_monotonic_time ();
  id = store_fake_capture (s, 4, 16, TRUE, 0, 0, &err);
  g_assert_cmpint (id, ==, -1);
  g_test_message ("locked: %s (after %.2f s)", err.message,
                  (g_get_monotonic_time () - t0) / 1e6);
  g_assert_cmpint (err.status, ==, SC_ERR_DB);
  assert_message (&err, "locked by another process");
  assert_message (&err, t.path);
  g_assert_cmpint (g_get_monotonic_time () - t0, >=, 250000);

  g_assert_cmpint (sc_store_delete_run (s, 1, &err), ==, SC_ERR_DB);
  assert_message (&err, "locked by another process");

  ro = open_store (t.path, FALSE);
  g_assert_cmpint (sc_store_list_runs (ro, &runs, &n, &err), ==, SC_OK);
  g_assert_cmpuint (n, ==, 3);
  sc_store_run_list_free (runs, n);
  assert_run_ok (ro, 2);
  sc_store_close (ro);

  g_assert_cmpint (sqlite3_exec (other, "COMMIT", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (other);
  g_assert_cmpint (store_fake_capture (s, 5, 16, TRUE, 0, 0, &err), ==, 4);
  sc_store_close (s);
  assert_nothing_lost (t.path, 4, FALSE);
  tmp_clear (&t);
}

/* ------------------------------------------------------------------------------------ */
/* 5. Deleting                                                                           */

static void
test_delete (void)
{
  Tmp t;
  ScStore *s;
  ScStoreRunInfo info = { 0 };
  ScError err = { 0 };
  gint64 before, after, freed, run_bytes;
  int r;

  tmp_init (&t);
  s = open_store (t.path, TRUE);
  for (r = 1; r <= 4; r++)
    capture (s, (guint64) r, 200, TRUE);
  sc_store_close (s); /* checkpoints: the file holds everything */
  before = file_size (t.path);

  s = open_store (t.path, TRUE);
  g_assert_cmpint (sc_store_get_run (s, 2, &info, &err), ==, SC_OK);
  run_bytes = (gint64) info.attention_bytes;
  sc_store_run_info_clear (&info);
  g_assert_cmpint (sc_store_delete_run (s, 2, &err), ==, SC_OK);
  after = file_size (t.path); /* the store is still open: the checkpoint cut the file */
  freed = before - after;
  g_test_message ("deleting a run of %" G_GINT64_FORMAT " attention bytes: %" G_GINT64_FORMAT
                  " -> %" G_GINT64_FORMAT " bytes", run_bytes, before, after);
  g_assert_cmpint (freed, >=, run_bytes);
  g_assert_cmpint (sc_store_get_run (s, 2, &info, &err), ==, SC_ERR_NOT_FOUND);
  g_assert_cmpint (sc_store_delete_run (s, 2, &err), ==, SC_ERR_NOT_FOUND);
  assert_run_ok (s, 1);
  assert_run_ok (s, 3);
  assert_run_ok (s, 4);

  /* ids are never reused, even for the last run */
  g_assert_cmpint (sc_store_delete_run (s, 4, &err), ==, SC_OK);
  g_assert_cmpint (capture (s, 9, 8, TRUE), ==, 5);
  sc_store_close (s);

  g_assert_cmpint (raw_int (t.path, "SELECT count(*) FROM attention WHERE run_id IN (2, 4)"), ==,
                   0);
  g_assert_cmpint (raw_int (t.path, "SELECT count(*) FROM tokens WHERE run_id IN (2, 4)"), ==, 0);
  g_assert_cmpint (raw_int (t.path, "PRAGMA freelist_count"), ==, 0);
  assert_nothing_lost (t.path, 3, FALSE);
  tmp_clear (&t);
}

/* ------------------------------------------------------------------------------------ */
/* 6. Reading while a capture is half written                                            */

static void
test_read_during_capture (void)
{
  Tmp t;
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

  tmp_init (&t);
  w = open_store (t.path, TRUE);
  capture (w, 1, 40, TRUE);
  r = open_store (t.path, FALSE);

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
            assert_run_ok (r, 1);
            g_assert_cmpint (raw_int (t.path, "SELECT count(*) FROM attention"), ==, 12);
          }
      }
  g_assert_cmpint (sc_store_capture_commit (cap, 1.0, &id, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_list_runs (r, &runs, &n, &err), ==, SC_OK);
  g_assert_cmpuint (n, ==, 2);
  sc_store_run_list_free (runs, n);
  assert_run_ok (r, id);
  sc_store_close (r);
  sc_store_close (w);
  tmp_clear (&t);
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
  g_test_add_func ("/store/schema/concurrent-create", test_schema_concurrent_create);
  g_test_add_func ("/store/bad/not-a-database", test_not_a_database);
  g_test_add_func ("/store/bad/foreign-database", test_foreign_database);
  g_test_add_func ("/store/bad/corrupt", test_corrupt);
  g_test_add_func ("/store/bad/missing-run", test_missing_run);
  g_test_add_func ("/store/bad/capture-misuse", test_capture_misuse);
  g_test_add_func ("/store/bad/read-only-file", test_read_only_file);
  g_test_add_func ("/store/bad/read-only-folder", test_read_only_folder);
  g_test_add_func ("/store/bad/full-disk-quota", test_full_disk_quota);
  g_test_add_func ("/store/bad/full-disk-fsize", test_full_disk_fsize);
  g_test_add_func ("/store/bad/full-disk-tmpfs", test_full_disk_tmpfs);
  g_test_add_func ("/store/bad/locked", test_locked);
  g_test_add_func ("/store/queue/two-slots", test_small_queue);
  g_test_add_func ("/store/delete/reclaims-space", test_delete);
  g_test_add_func ("/store/concurrency/read-during-capture", test_read_during_capture);
  return g_test_run ();
}
