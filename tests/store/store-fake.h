/* store-fake.h — deterministic fake runs and small helpers for the capture store's tests.
 *
 * A fake run is a function of its seed: the tokens (pieces full of invalid UTF-8, NUL
 * bytes, empty pieces), the text and every head's probabilities (softmax rows spanning
 * fp16's normal and subnormal ranges, with exact zeros). Any process can regenerate a run
 * from the seed written into its text, so a test can check a run that another process
 * stored — or failed to store — without sharing memory with it.
 */
#pragma once

#include <glib.h>

#include "engine/store/sc-store.h"

G_BEGIN_DECLS

/* The fake model: 4 layers x 3 heads (2 KV heads, head_dim 8); @variant changes the
 * fingerprint (and name), so variants are different models. */
#define STORE_FAKE_LAYERS 4
#define STORE_FAKE_HEADS 3
void store_fake_model (ScStoreModel *m, int variant);

/* Head (layer, head) of the run with @seed: (n, n) row-major, freshly allocated. Causal
 * runs are exactly 0 above the diagonal; others (@causal false) are not. */
float *store_fake_head (guint64 seed, int layer, int head, int n, gboolean causal);

/* The run's tokens (one allocation; g_free) and text (g_free; *@len bytes). */
ScStoreToken *store_fake_tokens (guint64 seed, int n);
char *store_fake_text (guint64 seed, int n, gboolean causal, gsize *len);

/* Captures the run with @seed, @n tokens; @delay_us sleeps before each head (a slower
 * "forward pass" for the crash and concurrency tests). Returns the run id, or -1 with
 * @err set. */
gint64 store_fake_capture (ScStore *store, guint64 seed, int n, gboolean causal,
                           int model_variant, int delay_us, ScError *err);

/* Checks that run @run_id is exactly what store_fake_capture() stored for the seed in its
 * text: info, tokens byte for byte, every head equal to the fp16 rounding of the
 * generated probabilities. On a mismatch returns FALSE and sets *@why (g_free). */
gboolean store_fake_verify (ScStore *store, gint64 run_id, char **why);

/* Whether @got is @want rounded to fp16 (and within the rounding bound: relative 2^-11 in
 * fp16's normal range, absolute 2^-25 below it; exact zeros exact). */
gboolean store_fake_fp16_close (float want, float got);

/* ------------------------------------------------------------------------------------ */
/* Helpers for test-store.c and test-store-bad.c; each fails the test on an unexpected error */

/* A fresh folder (mode 0755: the read-only tests run as another user) and a database path
 * inside it; store_tmp_clear() deletes the folder with everything in it. */
typedef struct {
  char *dir;
  char *path;
} StoreTmp;
void store_tmp_init (StoreTmp *t);
void store_tmp_clear (StoreTmp *t);

ScStore *store_test_open (const char *path, gboolean writable);
/* store_fake_capture() with model 0 and no delay; returns the run id. */
gint64 store_test_capture (ScStore *s, guint64 seed, int n, gboolean causal);
/* Asserts store_fake_verify(). */
void store_test_assert_run (ScStore *s, gint64 id);
/* Three causal runs of 64 tokens (ids 1-3) in a new store at @path. */
void store_test_three_runs (const char *path);

/* Straight SQLite on @path, around the store: the first column of the first row. */
gint64 store_test_raw_int (const char *path, const char *sql);
char *store_test_raw_text (const char *path, const char *sql);
void store_test_raw_exec (const char *path, const char *sql);

/* SQL that turns a current store whose runs are v2-like (every head, dense, one attention
 * row each, no local layers) into the v2 store an older Saccade wrote: SQLite's DROP
 * COLUMN gives back the exact v2 text of runs (the schema check compares it). */
#define STORE_TEST_V6_DROP_SQL                                                             \
  "ALTER TABLE runs DROP COLUMN zero_below; ALTER TABLE runs DROP COLUMN round_bits; "
#define STORE_TEST_TO_V5_SQL STORE_TEST_V6_DROP_SQL "PRAGMA user_version = 5"
#define STORE_TEST_V5_DROP_SQL                                                             \
  STORE_TEST_V6_DROP_SQL                                                                   \
  "ALTER TABLE runs DROP COLUMN prompt_tokens; ALTER TABLE runs DROP COLUMN kind; "         \
  "DROP TABLE attention_z; "
#define STORE_TEST_TO_V4_SQL STORE_TEST_V5_DROP_SQL "PRAGMA user_version = 4"
#define STORE_TEST_TO_V3_SQL                                                               \
  STORE_TEST_V5_DROP_SQL "DROP TABLE attention_bands; DROP TABLE layer_windows; "          \
  "PRAGMA user_version = 3"
#define STORE_TEST_TO_V2_SQL                                                               \
  STORE_TEST_V5_DROP_SQL "DROP TABLE attention_bands; DROP TABLE layer_windows; "          \
  "DROP TABLE head_overviews; DROP TABLE attention_parts; DROP TABLE predictions; "      \
  "ALTER TABLE runs DROP COLUMN sparse_eps; ALTER TABLE runs DROP COLUMN kept; "          \
  "PRAGMA user_version = 2"

/* SHA-256 of a file's bytes ("" when it does not exist); a file's size (-1 if none). */
char *store_test_digest (const char *path);
gint64 store_test_file_size (const char *path);

/* Asserts that opening @path fails with @status and a message holding @needle and the path,
 * and that the file's bytes did not change and no WAL was left. */
void store_test_assert_open_fails (const char *path, gboolean writable, ScStatus status,
                                   const char *needle);
void store_test_assert_message (const ScError *err, const char *needle);

/* After a failed capture: @n_runs runs, each exact; integrity_check passes; no row of an
 * unfinished run; with @then_capture, a new run can be stored. */
void store_test_assert_nothing_lost (const char *path, size_t n_runs, gboolean then_capture);

/* ------------------------------------------------------------------------------------ */
/* Runs of every storage form (the merge and concurrency tests)                          */

/* A fake run in one of the store's storage forms. With @window > 0 the model has sliding
 * windows (layers 0 and 2 local, STORE_FAKE_SWA_PATTERN): the run gets layer_windows rows,
 * and when n > window the heads of local layers are bands of that window (attention_bands);
 * a shorter run keeps them causal. @keep: the heads to store (NULL: all); @sparse_eps: the
 * sparse form; @predictions_k: that many predictions a position (0: none); @round_bits and
 * @zero_below: the rounded form (ScStoreRunDesc). Row blocks
 * (attention_parts) come from the store's own max_blob_bytes. */
#define STORE_FAKE_SWA_PATTERN 2u
typedef struct {
  guint64 seed;
  int n;
  gboolean causal;
  guint32 window;
  const guint8 *keep;
  double sparse_eps;
  guint32 predictions_k;
  guint32 round_bits;   /* the rounded form (the store must compress heads) */
  double zero_below;
} StoreFakeRun;

/* Run @form (0 .. STORE_FAKE_N_FORMS - 1) of every storage form, with @seed: a Gemma-style
 * 600-token run with layer windows, band heads (in row blocks under a 64 KiB BLOB limit) and
 * predictions; a run shorter than its window (layer windows, causal heads); a 300-token
 * causal run (row blocks under the same limit); a full run; a sparse run; a run of chosen
 * heads. */
#define STORE_FAKE_N_FORMS 6
StoreFakeRun store_fake_form_run (int form, guint64 seed);

/* Head (@layer, @head) of @r: a band of r->window keys on local layers of a run longer than
 * the window, else store_fake_head(); (n, n) row-major, g_free. */
float *store_fake_run_head (const StoreFakeRun *r, int layer, int head);

/* Captures @r (model variant 0); returns the run id, or -1 with @err set. @delay_us sleeps
 * before each head, as store_fake_capture(). */
gint64 store_fake_capture_run (ScStore *store, const StoreFakeRun *r, int delay_us,
                               ScError *err);

/* Asserts that run @ia of @a and run @ib of @b hold the same things, read through every
 * reader: the run's shape (tokens, kept heads, sparse EPS, layer windows), its tokens byte
 * for byte, every kept head bit for bit (with its window and dropped mass), every
 * overview, the head scores and the predictions. */
void store_test_assert_same_run (ScStore *a, gint64 ia, ScStore *b, gint64 ib);

G_END_DECLS
