/* test-observer-tee.c — `saccade capture`'s tee of two observers keeps a GPU's fp16 route
 * (app/core/saccade-observer-tee.h), checked on the CPU.
 *
 * The backend is "fake-capture" (tests/engine/sc-test-capture.h): cpu-ref with the two
 * capture ops added as the contract says (the fp32 attention, then sc_fp32_to_fp16 into
 * sc_attn_packed_index order), so the forward pass takes the observe_f16 route exactly as
 * on a CUDA device. On the tiny llama of tests/engine/sc-test-gguf.c:
 *   1. forwarding: a side with observe_f16 gets every head through it (never observe()),
 *      as the fp16 of what cpu-ref's fp32 pass gives, bit for bit; a side with only
 *      observe() gets those values decoded to floats (0 above the diagonal); on cpu-ref
 *      both sides get observe() with the same floats; the logits are bit-identical;
 *   2. the capture as the CLI makes it (the store's observer and the head statistics' one
 *      behind the tee): the stored bytes from the fp16 route equal those of the fp32 route,
 *      dense and sparse, and the statistics equal those computed from the stored run. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "app/core/saccade-model.h"
#include "app/core/saccade-observer-tee.h"
#include "engine/backend/sc-backend-impl.h"
#include "engine/core/sc-math.h"
#include "engine/store/sc-store-heads.h"
#include "engine/store/sc-store.h"
#include "tests/engine/sc-test-capture.h"
#include "tests/engine/sc-test-gguf.h"

/* What the fake-capture backend saw (zeroed by each test before it counts). */
static ScTestCaptureCounts *const fc = &sc_test_capture_counts;

/* ---- recording sides ------------------------------------------------------------------- */

/* Every head a side received, as (n, n) floats (fp16 values decoded here for a side that
 * took fp16), indexed layer * H + head; and how it received them. */
typedef struct {
  int n_heads, n;
  float *probs;  /* (L * H, n, n) */
  int n_observe, n_observe_f16;
} Rec;

static bool
rec_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  Rec *r = user;

  g_assert_cmpint (n_q, ==, r->n);
  g_assert_cmpint (n_k, ==, r->n);
  r->n_observe++;
  memcpy (r->probs + (size_t) (layer * r->n_heads + head) * r->n * r->n, probs,
          (size_t) r->n * r->n * sizeof (float));
  return true;
}

static bool
rec_observe_f16 (void *user, int layer, int head, const uint16_t *values, int n_q, int n_k,
                 bool packed)
{
  Rec *r = user;
  float *dst = r->probs + (size_t) (layer * r->n_heads + head) * r->n * r->n;

  g_assert_true (packed);
  g_assert_cmpint (n_q, ==, r->n);
  g_assert_cmpint (n_k, ==, r->n);
  r->n_observe_f16++;
  for (int i = 0; i < n_q; i++)
    for (int j = 0; j < n_k; j++)
      dst[(size_t) i * n_k + j]
          = j > i ? 0.0f : sc_fp16_to_fp32 (values[sc_attn_packed_index (i, j, n_k, true)]);
  return true;
}

static void
rec_init (Rec *r, const ScModelInfo *in, int n)
{
  memset (r, 0, sizeof *r);
  r->n_heads = (int) in->n_heads;
  r->n = n;
  r->probs = g_new0 (float, (size_t) in->n_layers * in->n_heads * n * n);
}

static const int32_t prompt[] = { 1, 72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100,
                                  33, 32, 72, 101, 108, 108, 111 };
#define N_PROMPT ((int) G_N_ELEMENTS (prompt))

/* Runs the prompt on @b with @obs; its logits into @logits (N_PROMPT * n_vocab). */
static void
run (ScModel *m, ScBackend *b, const ScObserver *obs, float *logits)
{
  ScForwardOptions fo = { .observer = obs, .all_logits = true };
  ScError err = { SC_OK, "" };
  ScSession *s = NULL;

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  if (sc_forward (s, prompt, N_PROMPT, &fo, logits, &err) != SC_OK)
    g_error ("%s: %s", sc_backend_name (b), err.message);
  sc_session_free (s);
}

/* 1: what each side receives, on either route. */
static void
test_forward (void)
{
  ScModel *m = sc_test_tiny_model ();
  const ScModelInfo *in = sc_model_info (m);
  const int L = (int) in->n_layers, H = (int) in->n_heads, V = (int) in->n_vocab;
  const size_t nn = (size_t) N_PROMPT * N_PROMPT, n_all = (size_t) L * H * nn;
  ScBackend *ref = sc_backend_cpu_ref_new (), *fake = sc_test_capture_backend_new ();
  g_autofree float *lr = g_new (float, (size_t) N_PROMPT * V);
  g_autofree float *lf = g_new (float, (size_t) N_PROMPT * V);
  Rec ra, rb, fa, fb;
  ScObserver a = { NULL, rec_observe, NULL }, b = { NULL, rec_observe, NULL };
  g_auto (SaccadeObserverTee) tee = { 0 };

  a.observe_f16 = rec_observe_f16; /* a takes fp16 (as the store's observer), b does not */
  rec_init (&ra, in, N_PROMPT);
  rec_init (&rb, in, N_PROMPT);
  rec_init (&fa, in, N_PROMPT);
  rec_init (&fb, in, N_PROMPT);

  /* cpu-ref: no capture op, so observe() on both sides */
  a.user = &ra;
  b.user = &rb;
  run (m, ref, saccade_observer_tee_init (&tee, &a, &b), lr);
  g_assert_cmpint (ra.n_observe, ==, L * H);
  g_assert_cmpint (rb.n_observe, ==, L * H);
  g_assert_cmpint (ra.n_observe_f16 + rb.n_observe_f16, ==, 0);
  g_assert_cmpmem (ra.probs, n_all * sizeof (float), rb.probs, n_all * sizeof (float));

  /* fake-capture: observe_f16 reaches a as it is and b decoded; observe() never runs */
  a.user = &fa;
  b.user = &fb;
  fc->n_capture_calls = 0;
  run (m, fake, saccade_observer_tee_init (&tee, &a, &b), lf);
  g_assert_cmpint (fc->n_capture_calls, ==, L);
  g_assert_cmpint (fa.n_observe_f16, ==, L * H);
  g_assert_cmpint (fa.n_observe, ==, 0);
  g_assert_cmpint (fb.n_observe, ==, L * H);
  g_assert_cmpint (fb.n_observe_f16, ==, 0);
  /* both: the fp16 rounding of cpu-ref's probabilities, exactly */
  for (size_t i = 0; i < n_all; i++)
    ra.probs[i] = sc_fp16_to_fp32 (sc_fp32_to_fp16 (ra.probs[i]));
  g_assert_cmpmem (fa.probs, n_all * sizeof (float), ra.probs, n_all * sizeof (float));
  g_assert_cmpmem (fb.probs, n_all * sizeof (float), ra.probs, n_all * sizeof (float));
  g_assert_cmpmem (lf, (size_t) N_PROMPT * V * sizeof (float), lr,
                   (size_t) N_PROMPT * V * sizeof (float));

  g_free (ra.probs);
  g_free (rb.probs);
  g_free (fa.probs);
  g_free (fb.probs);
  sc_backend_free (ref);
  sc_backend_free (fake);
  sc_model_free (m);
}

/* Stores the prompt through the tee of the store's observer and @stats's, as `saccade
 * capture --summary` does, into a new store at @db; the run's id. */
static int64_t
capture (const char *db, const char *model_path, ScModel *m, ScBackend *b, double sparse_eps,
         SaccadeHeadStatsTable *stats, ScStore **store_out)
{
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreCapture *cap = NULL;
  ScStoreModel ident;
  ScStoreToken *pieces = NULL;
  ScStoreRunDesc desc = { 0 };
  ScObserver store_obs, stats_obs = { NULL, saccade_head_stats_table_observe, stats };
  g_auto (SaccadeObserverTee) tee = { 0 };
  ScError err = { SC_OK, "" };
  int64_t run_id = 0;

  g_assert_cmpint (sc_store_tokens_from_ids (sc_model_tokenizer (m), prompt, N_PROMPT, &pieces,
                                             &err), ==, SC_OK);
  g_assert_cmpint (sc_store_model_identify (m, model_path, &ident, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (db, &so, &store, &err), ==, SC_OK);
  desc.model = &ident;
  desc.text = "tee";
  desc.text_len = 3;
  desc.tokens = pieces;
  desc.n_tokens = N_PROMPT;
  desc.backend = sc_backend_name (b);
  desc.sparse_eps = sparse_eps;
  g_assert_cmpint (sc_store_capture_begin (store, &desc, &cap, &err), ==, SC_OK);
  store_obs = sc_store_capture_observer (cap);
  run (m, b, saccade_observer_tee_init (&tee, &store_obs, &stats_obs), NULL);
  if (sc_store_capture_commit (cap, -1, &run_id, &err) != SC_OK)
    g_error ("commit: %s", err.message);
  sc_store_tokens_free (pieces);
  *store_out = store;
  return run_id;
}

static void
assert_stats_equal (const ScHeadStats *x, const ScHeadStats *y)
{
  g_assert_cmpfloat (x->entropy, ==, y->entropy);
  g_assert_cmpfloat (x->entropy_norm, ==, y->entropy_norm);
  g_assert_cmpfloat (x->distance, ==, y->distance);
  g_assert_cmpfloat (x->confidence, ==, y->confidence);
  g_assert_cmpfloat (x->sink, ==, y->sink);
  g_assert_cmpfloat (x->sink_k, ==, y->sink_k);
  g_assert_cmpfloat (x->previous, ==, y->previous);
  g_assert_cmpfloat (x->self, ==, y->self);
  g_assert_cmpfloat (x->last_entropy, ==, y->last_entropy);
  g_assert_cmpint (x->last_top, ==, y->last_top);
  g_assert_cmpfloat (x->last_top_weight, ==, y->last_top_weight);
}

/* 2: the stored bytes of either route, and the statistics of the fp16 route. */
static void
test_store (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-observer-tee-XXXXXX", NULL);
  g_autofree char *model_path = g_build_filename (dir, "tiny.gguf", NULL);
  GBytes *bytes = sc_test_tiny_bytes ();
  ScError err = { SC_OK, "" };
  ScModel *m = NULL;

  g_assert_true (g_file_set_contents (model_path, g_bytes_get_data (bytes, NULL),
                                      (gssize) g_bytes_get_size (bytes), NULL));
  g_assert_cmpint (sc_model_open (model_path, 1, &m, &err), ==, SC_OK);
  for (int sparse = 0; sparse < 2; sparse++)
    {
      const ScModelInfo *in = sc_model_info (m);
      const int L = (int) in->n_layers, H = (int) in->n_heads;
      const double eps = sparse ? 1e-3 : 0.0;
      g_autofree char *db_ref = g_strdup_printf ("%s/ref-%d.sqlite", dir, sparse);
      g_autofree char *db_f16 = g_strdup_printf ("%s/f16-%d.sqlite", dir, sparse);
      ScBackend *ref = sc_backend_cpu_ref_new (), *fake = sc_test_capture_backend_new ();
      SaccadeHeadStatsTable st_ref, st_f16, st_read;
      ScStore *sr = NULL, *sf = NULL;
      int64_t run_r, run_f;

      saccade_head_stats_table_init (&st_ref, L, H);
      saccade_head_stats_table_init (&st_f16, L, H);
      saccade_head_stats_table_init (&st_read, L, H);
      run_r = capture (db_ref, model_path, m, ref, eps, &st_ref, &sr);
      fc->n_capture_calls = 0;
      run_f = capture (db_f16, model_path, m, fake, eps, &st_f16, &sf);
      /* the fp16 route was taken for the dense store; a sparse store takes floats only, so
       * the tee offers no fp16 route and every layer keeps the fp32 path */
      g_assert_cmpint (fc->n_capture_calls, ==, sparse ? 0 : L);
      for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++)
          {
            ScStoreHeadF16 a = { 0 }, b = { 0 };
            ScStoreHead read = { 0 };

            g_assert_cmpint (sc_store_read_head_f16 (sr, run_r, l, h, &a, &err), ==, SC_OK);
            g_assert_cmpint (sc_store_read_head_f16 (sf, run_f, l, h, &b, &err), ==, SC_OK);
            g_assert_cmpint (a.sparse, ==, b.sparse);
            g_assert_cmpmem (a.values, a.n_values * 2, b.values, b.n_values * 2);
            sc_store_head_f16_clear (&a);
            sc_store_head_f16_clear (&b);
            /* the fp16 route's statistics are the stored run's (dense: every value kept) */
            if (!sparse)
              {
                g_assert_cmpint (sc_store_read_head (sf, run_f, l, h, &read, &err), ==, SC_OK);
                saccade_head_stats_table_observe (&st_read, l, h, read.probs, N_PROMPT,
                                                  N_PROMPT);
                assert_stats_equal (saccade_head_stats_table_get (&st_f16, l, h),
                                    saccade_head_stats_table_get (&st_read, l, h));
                sc_store_head_clear (&read);
              }
            /* and within fp16 rounding of the fp32 route's: a relative 2^-11 per value moves
             * an entropy of at most ln 20 nats by far less than 1e-2 */
            g_assert_cmpfloat_with_epsilon (saccade_head_stats_table_get (&st_f16, l, h)->entropy,
                                            saccade_head_stats_table_get (&st_ref, l, h)->entropy,
                                            1e-2);
          }
      saccade_head_stats_table_clear (&st_ref);
      saccade_head_stats_table_clear (&st_f16);
      saccade_head_stats_table_clear (&st_read);
      sc_store_close (sr);
      sc_store_close (sf);
      sc_backend_free (ref);
      sc_backend_free (fake);
      g_unlink (db_ref);
      g_unlink (db_f16);
    }
  sc_model_free (m);
  g_unlink (model_path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/observer-tee/forward", test_forward);
  g_test_add_func ("/observer-tee/store", test_store);
  return g_test_run ();
}
