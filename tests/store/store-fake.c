/* store-fake.c — deterministic fake runs and helpers for the store tests (see store-fake.h). */
#include "tests/store/store-fake.h"

#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/core/sc-math.h"
#include "engine/store/sc-store-heads.h"
#include "engine/store/sc-store-predictions.h"
#include "engine/store/sc-store-scores.h"

/* splitmix64: a tiny, well-mixed generator whose stream is fixed by its seed — the same in
 * every process and on every platform (GRand's would do too, but this is 6 lines). */
static guint64
mix (guint64 *s)
{
  guint64 z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static double
uniform (guint64 *s)
{
  return (double) (mix (s) >> 11) * 0x1.0p-53;
}

void
store_fake_model (ScStoreModel *m, int variant)
{
  static const char *names[] = { "fake-model-a", "fake-model-b", "fake-model-c" };
  char text[64];

  memset (m, 0, sizeof *m);
  snprintf (text, sizeof text, "fake model %d", variant);
  sc_sha256 (text, strlen (text), m->sha256);
  m->path = "/nonexistent/fake.gguf";
  m->file_size = 1000 + (guint64) variant;
  m->name = names[variant % G_N_ELEMENTS (names)];
  m->arch = "llama";
  m->n_layers = STORE_FAKE_LAYERS;
  m->n_heads = STORE_FAKE_HEADS;
  m->n_kv_heads = 1;
  m->head_dim = 8;
  m->n_embd = 24;
  m->n_vocab = 49152;
  m->n_ctx_train = 2048;
}

float *
store_fake_head (guint64 seed, int layer, int head, int n, gboolean causal)
{
  guint64 s = seed * 1000003u + (guint64) layer * 101u + (guint64) head;
  float *p = g_new0 (float, (gsize) n * n);
  int i, j;

  for (i = 0; i < n; i++)
    {
      float *row = p + (gsize) i * n;
      int len = causal ? i + 1 : n;
      double z = 0.0;

      /* Logits over a range of 18 nats: weights from ~1 down to ~1e-8, through fp16's
       * subnormal range (< 2^-14) and below its smallest subnormal; about 1 key in 8 is
       * masked (an exact zero). */
      for (j = 0; j < len; j++)
        {
          double w = uniform (&s) < 0.125 && j != i ? 0.0 : exp (-18.0 * uniform (&s));
          row[j] = (float) w;
          z += w;
        }
      for (j = 0; j < len; j++)
        row[j] = (float) (row[j] / z);
    }
  return p;
}

ScStoreToken *
store_fake_tokens (guint64 seed, int n)
{
  /* Pieces that are not UTF-8 on their own: half a CJK character, a lone continuation
   * byte, 0xFF, an overlong NUL, a NUL byte, and an empty piece. */
  static const struct { const char *bytes; guint len; } special[] = {
    { "<|im_start|>", 12 }, { "\xe4\xb8", 2 }, { "\x80", 1 }, { "\xff", 1 },
    { "\xc0\x80", 2 }, { "a\0b", 3 }, { "", 0 }, { " \xe7\x8c\xab", 4 },
  };
  guint64 s = seed ^ 0x5eedULL;
  gsize total = 0;
  ScStoreToken *t;
  guint8 *bytes;
  int i;

  /* Each piece is at most 12 bytes. */
  t = g_malloc ((gsize) n * sizeof *t + (gsize) n * 12 + 1);
  bytes = (guint8 *) (t + n);
  for (i = 0; i < n; i++)
    {
      guint len, k;
      t[i].id = (gint32) (mix (&s) % 49152);
      t[i].piece = bytes + total;
      if (i < (int) G_N_ELEMENTS (special))
        {
          len = special[i].len;
          memcpy (bytes + total, special[i].bytes, len);
        }
      else
        {
          len = (guint) (mix (&s) % 7);
          for (k = 0; k < len; k++)
            bytes[total + k] = (guint8) mix (&s);
        }
      t[i].len = len;
      total += len;
    }
  return t;
}

char *
store_fake_text (guint64 seed, int n, gboolean causal, gsize *len)
{
  /* The header names the run; the tail is not UTF-8 and holds a NUL. */
  static const char tail[] = "\xff\xfe tail \0 after NUL \xe4\xb8";
  g_autofree char *head = g_strdup_printf ("fake run seed=%" G_GUINT64_FORMAT " n=%d causal=%d|",
                                           seed, n, causal ? 1 : 0);
  gsize hl = strlen (head);
  char *text = g_malloc (hl + sizeof tail);

  memcpy (text, head, hl);
  memcpy (text + hl, tail, sizeof tail - 1);
  *len = hl + sizeof tail - 1;
  return text;
}

gint64
store_fake_capture (ScStore *store, guint64 seed, int n, gboolean causal, int model_variant,
                    int delay_us, ScError *err)
{
  g_autofree ScStoreToken *tokens = store_fake_tokens (seed, n);
  g_autofree char *text = NULL;
  ScStoreModel model;
  ScStoreRunDesc desc = { 0 };
  ScStoreCapture *cap = NULL;
  gsize text_len = 0;
  gint64 run_id = -1;
  int l, h;

  store_fake_model (&model, model_variant);
  text = store_fake_text (seed, n, causal, &text_len);
  desc.model = &model;
  desc.text = text;
  desc.text_len = text_len;
  desc.tokens = tokens;
  desc.n_tokens = (size_t) n;
  desc.backend = "fake";
  if (sc_store_capture_begin (store, &desc, &cap, err) != SC_OK)
    return -1;
  for (l = 0; l < STORE_FAKE_LAYERS; l++)
    for (h = 0; h < STORE_FAKE_HEADS; h++)
      {
        g_autofree float *p = store_fake_head (seed, l, h, n, causal);
        if (delay_us > 0)
          g_usleep (delay_us);
        if (sc_store_capture_add_head (cap, l, h, p, n, n, NULL) != SC_OK)
          goto commit; /* commit() reports the error */
      }
commit:
  if (sc_store_capture_commit (cap, 0.25, &run_id, err) != SC_OK)
    return -1;
  return run_id;
}

gboolean
store_fake_fp16_close (float want, float got)
{
  const float rounded = sc_fp16_to_fp32 (sc_fp32_to_fp16 (want));
  const double err = fabs ((double) got - (double) want);

  if (want == 0.0f)
    return got == 0.0f && !signbit (got);
  if (got != rounded)
    return FALSE;
  if (fabs (want) >= 0x1.0p-14)
    return err <= 0x1.0p-11 * fabs (want);
  return err <= 0x1.0p-25;
}

#define WHY(...) (*why = g_strdup_printf (__VA_ARGS__))

gboolean
store_fake_verify (ScStore *store, gint64 run_id, char **why)
{
  g_autofree ScStoreToken *want_tokens = NULL;
  g_autofree char *want_text = NULL;
  ScStoreRunInfo info = { 0 };
  ScStoreToken *tokens = NULL;
  ScError err = { 0 };
  guint64 seed = 0;
  int n = 0, causal = 0, l, h;
  size_t n_tokens = 0;
  gsize want_len = 0;
  gboolean ok = FALSE;

  *why = NULL;
  if (sc_store_get_run (store, run_id, &info, &err) != SC_OK)
    {
      WHY ("run %" G_GINT64_FORMAT ": %s", run_id, err.message);
      return FALSE;
    }
  if (sscanf (info.text, "fake run seed=%" G_GUINT64_FORMAT " n=%d causal=%d|", &seed, &n,
              &causal) != 3)
    {
      WHY ("run %" G_GINT64_FORMAT ": not a fake run: %s", run_id, info.text);
      goto out;
    }
  want_text = store_fake_text (seed, n, causal, &want_len);
  if (info.text_len != want_len || memcmp (info.text, want_text, want_len) != 0)
    {
      WHY ("run %" G_GINT64_FORMAT ": text differs", run_id);
      goto out;
    }
  if (info.n_tokens != (guint) n || info.n_layers != STORE_FAKE_LAYERS
      || info.n_heads != STORE_FAKE_HEADS || strcmp (info.backend, "fake") != 0
      || strcmp (info.model_arch, "llama") != 0)
    {
      WHY ("run %" G_GINT64_FORMAT ": description differs", run_id);
      goto out;
    }
  if (sc_store_read_tokens (store, run_id, &tokens, &n_tokens, &err) != SC_OK)
    {
      WHY ("run %" G_GINT64_FORMAT ": %s", run_id, err.message);
      goto out;
    }
  want_tokens = store_fake_tokens (seed, n);
  if (n_tokens != (size_t) n)
    {
      WHY ("run %" G_GINT64_FORMAT ": %zu tokens, want %d", run_id, n_tokens, n);
      goto out;
    }
  for (size_t i = 0; i < n_tokens; i++)
    if (tokens[i].id != want_tokens[i].id || tokens[i].len != want_tokens[i].len
        || (tokens[i].len > 0 && memcmp (tokens[i].piece, want_tokens[i].piece, tokens[i].len)))
      {
        WHY ("run %" G_GINT64_FORMAT ": token %zu differs", run_id, i);
        goto out;
      }
  for (l = 0; l < STORE_FAKE_LAYERS; l++)
    for (h = 0; h < STORE_FAKE_HEADS; h++)
      {
        g_autofree float *want = store_fake_head (seed, l, h, n, causal);
        ScStoreHead got = { 0 };
        gsize k;

        if (sc_store_read_head (store, run_id, l, h, &got, &err) != SC_OK)
          {
            WHY ("run %" G_GINT64_FORMAT ": %s", run_id, err.message);
            goto out;
          }
        /* The store packs any head that is exactly zero above the diagonal (a full run's
         * 1 x 1 head, say), whatever the run calls itself. */
        gboolean want_causal = TRUE;
        for (k = 0; k < (gsize) n * n; k++)
          if (k % n > k / n && want[k] != 0.0f)
            want_causal = FALSE;
        if (got.n_query != (guint) n || got.n_key != (guint) n || got.causal != want_causal
            || (causal && !want_causal))
          {
            sc_store_head_clear (&got);
            WHY ("run %" G_GINT64_FORMAT " layer %d head %d: shape differs", run_id, l, h);
            goto out;
          }
        for (k = 0; k < (gsize) n * n; k++)
          if (!store_fake_fp16_close (want[k], got.probs[k]))
            {
              WHY ("run %" G_GINT64_FORMAT " layer %d head %d [%zu]: got %.9g, want %.9g",
                   run_id, l, h, k, got.probs[k], want[k]);
              sc_store_head_clear (&got);
              goto out;
            }
        sc_store_head_clear (&got);
      }
  ok = TRUE;
out:
  sc_store_tokens_free (tokens);
  sc_store_run_info_clear (&info);
  return ok;
}

/* ------------------------------------------------------------------------------------ */
/* Test helpers                                                                          */

void
store_tmp_init (StoreTmp *t)
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

void
store_tmp_clear (StoreTmp *t)
{
  g_chmod (t->dir, 0755);
  remove_tree (t->dir);
  g_free (t->dir);
  g_free (t->path);
}

ScStore *
store_test_open (const char *path, gboolean writable)
{
  ScStoreOptions opt = { .writable = writable };
  ScError err = { 0 };
  ScStore *s = NULL;

  if (sc_store_open (path, &opt, &s, &err) != SC_OK)
    g_error ("opening %s: %s", path, err.message);
  return s;
}

gint64
store_test_capture (ScStore *s, guint64 seed, int n, gboolean causal)
{
  ScError err = { 0 };
  gint64 id = store_fake_capture (s, seed, n, causal, 0, 0, &err);
  if (id < 0)
    g_error ("capturing seed %" G_GUINT64_FORMAT ": %s", seed, err.message);
  return id;
}

void
store_test_assert_run (ScStore *s, gint64 id)
{
  g_autofree char *why = NULL;
  if (!store_fake_verify (s, id, &why))
    g_error ("%s", why);
}

gint64
store_test_raw_int (const char *path, const char *sql)
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

char *
store_test_raw_text (const char *path, const char *sql)
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

void
store_test_raw_exec (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  char *msg = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  if (sqlite3_exec (db, sql, NULL, NULL, &msg) != SQLITE_OK)
    g_error ("%s: %s", sql, msg);
  sqlite3_close (db);
}

/* SHA-256 of a file's bytes, or "" when it does not exist. */
char *
store_test_digest (const char *path)
{
  g_autofree char *data = NULL;
  gsize len = 0;

  if (!g_file_get_contents (path, &data, &len, NULL))
    return g_strdup ("");
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) data, len);
}

gint64
store_test_file_size (const char *path)
{
  struct stat sb;
  return stat (path, &sb) == 0 ? (gint64) sb.st_size : -1;
}

/* Asserts that opening @path (@writable) fails with @status and a message containing
 * @needle and the path, and leaves the file's bytes as they were. */
void
store_test_assert_open_fails (const char *path, gboolean writable, ScStatus status, const char *needle)
{
  g_autofree char *before = store_test_digest (path);
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
  after = store_test_digest (path);
  g_assert_cmpstr (before, ==, after);
  g_assert_false (g_file_test (wal, G_FILE_TEST_EXISTS) && store_test_file_size (wal) > 0);
}

void
store_test_assert_message (const ScError *err, const char *needle)
{
  if (strstr (err->message, needle) == NULL)
    g_error ("message lacks '%s': %s", needle, err->message);
}

/* Builds a store of three runs and returns its page size and page count. */
void
store_test_three_runs (const char *path)
{
  ScStore *s = store_test_open (path, TRUE);
  store_test_capture (s, 1, 64, TRUE);
  store_test_capture (s, 2, 64, TRUE);
  store_test_capture (s, 3, 64, TRUE);
  sc_store_close (s);
}

/* After a failed capture: every run left reads back intact, there are @n_runs of them,
 * the file passes its integrity check, no row of an unfinished run is left, and (when
 * @then_capture) the store takes a new run. */
void
store_test_assert_nothing_lost (const char *path, size_t n_runs, gboolean then_capture)
{
  ScStore *s = store_test_open (path, FALSE);
  ScStoreRunInfo *runs = NULL;
  ScError err = { 0 };
  size_t n = 0, i;
  gint64 last = 0;

  g_assert_cmpint (sc_store_check (s, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_list_runs (s, &runs, &n, &err), ==, SC_OK);
  g_assert_cmpuint (n, ==, n_runs);
  for (i = 0; i < n; i++)
    {
      store_test_assert_run (s, runs[i].id);
      last = runs[i].id;
    }
  sc_store_run_list_free (runs, n);
  sc_store_close (s);
  g_assert_cmpint (store_test_raw_int (path, "SELECT count(*) FROM runs WHERE status <> 'complete'"), ==, 0);
  g_assert_cmpint (store_test_raw_int (path, "SELECT count(*) FROM attention WHERE run_id NOT IN "
                                  "(SELECT id FROM runs)"), ==, 0);
  g_assert_cmpint (store_test_raw_int (path, "SELECT count(*) FROM tokens WHERE run_id NOT IN "
                                  "(SELECT id FROM runs)"), ==, 0);
  if (then_capture)
    {
      s = store_test_open (path, TRUE);
      g_assert_cmpint (store_test_capture (s, 500, 8, TRUE), >, last);
      sc_store_close (s);
    }
}


/* ------------------------------------------------------------------------------------ */
/* Runs of every storage form                                                            */

static guint32
run_layer_window (const StoreFakeRun *r, int layer)
{
  return r->window > 0 && (layer + 1) % STORE_FAKE_SWA_PATTERN != 0 ? r->window : 0;
}

float *
store_fake_run_head (const StoreFakeRun *r, int layer, int head)
{
  const guint32 w = run_layer_window (r, layer);
  const int n = r->n;
  GRand *rng;
  float *p;

  if (w == 0 || n <= (int) w)
    return store_fake_head (r->seed, layer, head, n, r->causal || w > 0);
  /* a band: row i attends to keys i - w + 1 .. i only */
  rng = g_rand_new_with_seed ((guint32) (r->seed * 104729u + (guint64) layer * 131u + head));
  p = g_new0 (float, (gsize) n * n);
  for (int i = 0; i < n; i++)
    {
      const int s = i + 1 > (int) w ? i + 1 - (int) w : 0;
      float *row = p + (gsize) i * n;
      double z = 0;
      for (int j = s; j <= i; j++)
        z += row[j] = (float) exp (-12.0 * g_rand_double (rng));
      for (int j = s; j <= i; j++)
        row[j] = (float) (row[j] / z);
    }
  g_rand_free (rng);
  return p;
}

static const guint8 FORM_KEEP[STORE_FAKE_LAYERS * STORE_FAKE_HEADS] = { 1, 0, 1, 0, 0, 1,
                                                                      1, 1, 0, 0, 0, 1 };

StoreFakeRun
store_fake_form_run (int form, guint64 seed)
{
  switch (form)
    {
    case 0: return (StoreFakeRun) { seed, 600, TRUE, 100, NULL, 0, 10 };
    case 1: return (StoreFakeRun) { seed, 40, TRUE, 100, NULL, 0, 3 };
    case 2: return (StoreFakeRun) { seed, 300, TRUE, 0, NULL, 0, 0 };
    case 3: return (StoreFakeRun) { seed, 30, FALSE, 0, NULL, 0, 0 };
    case 4: return (StoreFakeRun) { seed, 50, TRUE, 0, NULL, 1e-3, 0 };
    default: return (StoreFakeRun) { seed, 20, TRUE, 0, FORM_KEEP, 0, 0 };
    }
}

/* Predictions of a fake run: position p's rank k is token (p * 7 + k) with probability
 * 0.5 / (k + 1), logit 10 - k, and a piece of 1..3 bytes. */
static ScStatus
set_fake_predictions (ScStoreCapture *cap, const StoreFakeRun *r, ScError *err)
{
  static const guint8 bytes[] = "ab\xff";
  const gsize total = (gsize) r->n * r->predictions_k;
  g_autofree gint32 *ids = g_new (gint32, total);
  g_autofree float *logits = g_new (float, total);
  g_autofree double *probs = g_new (double, total);
  g_autofree ScStoreToken *pieces = g_new (ScStoreToken, total);

  for (gsize i = 0; i < total; i++)
    {
      const guint32 k = (guint32) (i % r->predictions_k);
      ids[i] = (gint32) ((i / r->predictions_k * 7 + k) % 49152);
      logits[i] = 10.0f - (float) k;
      probs[i] = 0.5 / (k + 1);
      pieces[i] = (ScStoreToken) { ids[i], 1 + (guint32) (i % 3), bytes };
    }
  return sc_store_capture_set_predictions (cap, (guint32) r->n, r->predictions_k, ids, logits,
                                           probs, pieces, err);
}

gint64
store_fake_capture_run (ScStore *store, const StoreFakeRun *r, int delay_us, ScError *err)
{
  g_autofree ScStoreToken *tokens = store_fake_tokens (r->seed, r->n);
  g_autofree char *text = NULL;
  ScStoreModel model;
  ScStoreRunDesc desc = { 0 };
  ScStoreCapture *cap = NULL;
  gsize text_len = 0;
  gint64 run_id = -1;

  store_fake_model (&model, 0);
  if (r->window > 0)
    {
      model.sliding_window = r->window;
      model.swa_pattern = STORE_FAKE_SWA_PATTERN;
    }
  text = store_fake_text (r->seed, r->n, r->causal, &text_len);
  desc = (ScStoreRunDesc) { .model = &model, .text = text, .text_len = text_len,
                            .tokens = tokens, .n_tokens = (size_t) r->n, .backend = "fake",
                            .keep = r->keep, .sparse_eps = r->sparse_eps,
                            .round_bits = r->round_bits, .zero_below = r->zero_below };
  if (sc_store_capture_begin (store, &desc, &cap, err) != SC_OK)
    return -1;
  if (r->predictions_k > 0 && set_fake_predictions (cap, r, err) != SC_OK)
    {
      sc_store_capture_abort (cap);
      return -1;
    }
  for (int l = 0; l < STORE_FAKE_LAYERS; l++)
    for (int h = 0; h < STORE_FAKE_HEADS; h++)
      {
        g_autofree float *p = NULL;
        if (r->keep != NULL && !r->keep[l * STORE_FAKE_HEADS + h])
          continue;
        p = store_fake_run_head (r, l, h);
        if (delay_us > 0)
          g_usleep (delay_us);
        if (sc_store_capture_add_head (cap, l, h, p, r->n, r->n, NULL) != SC_OK)
          goto commit; /* commit() reports the error */
      }
commit:
  if (sc_store_capture_commit (cap, 0.25, &run_id, err) != SC_OK)
    return -1;
  return run_id;
}

/* Two floats bit for bit (so NaN = NaN, -0 != 0). */
static void
assert_same_floats (const float *a, const float *b, gsize n)
{
  if (n > 0)
    g_assert_true (memcmp (a, b, n * sizeof *a) == 0);
}

void
store_test_assert_same_run (ScStore *a, gint64 ia, ScStore *b, gint64 ib)
{
  ScStoreRunInfo x = { 0 }, y = { 0 };
  ScStoreToken *tx = NULL, *ty = NULL;
  ScStorePredictions px = { 0 }, py = { 0 };
  ScStoreHeadScores sx = { 0 }, sy = { 0 };
  size_t ntx = 0, nty = 0;
  ScError err = { 0 };

#define OK(call)                                                                           \
  do                                                                                       \
    {                                                                                      \
      if ((call) != SC_OK)                                                                 \
        g_error ("%s: %s", #call, err.message);                                            \
    }                                                                                      \
  while (0)
  OK (sc_store_get_run (a, ia, &x, &err));
  OK (sc_store_get_run (b, ib, &y, &err));
  g_assert_cmpuint (x.n_tokens, ==, y.n_tokens);
  g_assert_cmpuint (x.n_layers, ==, y.n_layers);
  g_assert_cmpuint (x.n_heads, ==, y.n_heads);
  g_assert_cmpuint (x.n_kept, ==, y.n_kept);
  g_assert_cmpfloat (x.sparse_eps, ==, y.sparse_eps);
  g_assert_cmpuint (x.round_bits, ==, y.round_bits);
  g_assert_cmpfloat (x.zero_below, ==, y.zero_below);
  g_assert_cmpstr (x.model_sha256, ==, y.model_sha256);
  g_assert_cmpuint (x.text_len, ==, y.text_len);
  g_assert_true (memcmp (x.text, y.text, x.text_len) == 0);
  for (guint32 l = 0; l < x.n_layers; l++)
    g_assert_cmpuint (sc_store_run_layer_window (&x, (int) l), ==,
                      sc_store_run_layer_window (&y, (int) l));
  OK (sc_store_read_tokens (a, ia, &tx, &ntx, &err));
  OK (sc_store_read_tokens (b, ib, &ty, &nty, &err));
  g_assert_cmpuint (ntx, ==, nty);
  for (size_t i = 0; i < ntx; i++)
    {
      g_assert_cmpint (tx[i].id, ==, ty[i].id);
      g_assert_cmpuint (tx[i].len, ==, ty[i].len);
      g_assert_true (tx[i].len == 0 || memcmp (tx[i].piece, ty[i].piece, tx[i].len) == 0);
    }
  sc_store_tokens_free (tx);
  sc_store_tokens_free (ty);
  for (guint32 l = 0; l < x.n_layers; l++)
    for (guint32 h = 0; h < x.n_heads; h++)
      {
        ScStoreHead hx = { 0 }, hy = { 0 };
        ScStoreOverview ox = { 0 }, oy = { 0 };
        g_assert_cmpint (sc_store_run_has_head (&x, (int) l, (int) h), ==,
                         sc_store_run_has_head (&y, (int) l, (int) h));
        if (!sc_store_run_has_head (&x, (int) l, (int) h))
          continue;
        OK (sc_store_read_head (a, ia, (int) l, (int) h, &hx, &err));
        OK (sc_store_read_head (b, ib, (int) l, (int) h, &hy, &err));
        g_assert_cmpuint (hx.window, ==, hy.window);
        g_assert_cmpint (hx.causal, ==, hy.causal);
        assert_same_floats (hx.probs, hy.probs, (gsize) x.n_tokens * x.n_tokens);
        g_assert_true ((hx.dropped == NULL) == (hy.dropped == NULL));
        if (hx.dropped != NULL)
          assert_same_floats (hx.dropped, hy.dropped, x.n_tokens);
        sc_store_head_clear (&hx);
        sc_store_head_clear (&hy);
        OK (sc_store_read_overview (a, ia, (int) l, (int) h, &ox, &err));
        OK (sc_store_read_overview (b, ib, (int) l, (int) h, &oy, &err));
        g_assert_cmpuint (ox.size, ==, oy.size);
        g_assert_cmpuint (ox.window, ==, oy.window);
        g_assert_false (oy.computed); /* the overview itself came along */
        assert_same_floats (ox.values, oy.values, (gsize) ox.size * ox.size);
        sc_store_overview_clear (&ox);
        sc_store_overview_clear (&oy);
      }
  OK (sc_store_read_head_scores (a, ia, &sx, &err));
  OK (sc_store_read_head_scores (b, ib, &sy, &err));
  g_assert_false (sy.computed);
  g_assert_true (memcmp (sx.stats, sy.stats, (gsize) x.n_layers * x.n_heads * sizeof *sx.stats)
                 == 0);
  sc_store_head_scores_clear (&sx);
  sc_store_head_scores_clear (&sy);
  OK (sc_store_read_predictions (a, ia, &px, &err));
  OK (sc_store_read_predictions (b, ib, &py, &err));
  g_assert_cmpuint (px.n_positions, ==, py.n_positions);
  g_assert_cmpuint (px.k, ==, py.k);
  for (gsize i = 0; i < (gsize) px.n_positions * px.k; i++)
    {
      g_assert_cmpint (px.ids[i], ==, py.ids[i]);
      g_assert_cmpfloat (px.probs[i], ==, py.probs[i]);
      g_assert_cmpuint (px.pieces[i].len, ==, py.pieces[i].len);
      g_assert_true (memcmp (px.pieces[i].piece, py.pieces[i].piece, px.pieces[i].len) == 0);
    }
  sc_store_predictions_clear (&px);
  sc_store_predictions_clear (&py);
  sc_store_run_info_clear (&x);
  sc_store_run_info_clear (&y);
#undef OK
}
