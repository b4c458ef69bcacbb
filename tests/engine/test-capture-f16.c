/* test-capture-f16.c — the engine's side of the fp16 capture contract, on the CPU.
 *
 * A GPU backend with SC_BACKEND_CAP_ATTN_CAPTURE hands captured heads over as fp16 in the
 * store's layout (attention_capture / capture_wait, engine/backend/sc-backend-impl.h); the
 * forward pass routes them to ScObserver.observe_f16 and the store writes them as they are.
 * No GPU is needed to check that plumbing: "fake-capture" (tests/engine/sc-test-capture.h)
 * is cpu-ref with the two capture ops added, computed as the contract says (the fp32
 * attention, then sc_fp32_to_fp16 into sc_attn_packed_index order, into one of two
 * slots). Checked, on the tiny llama of tests/engine/sc-test-gguf.c:
 *   1. observe_f16 receives exactly the heads wants() picks, in layer order, as the packed
 *      fp16 of what observe() receives from a cpu-ref run (bit for bit); observe() is never
 *      called on the capture path; logits are bit-identical;
 *   2. a layer with an attention edit keeps the fp32 path (observe(), edited values) while
 *      the other layers take the fp16 path;
 *   3. the store, fed through sc_store_capture_observer, stores the same bytes from the
 *      fp16 path as from the fp32 path for a dense run; a sparse run's observer takes floats
 *      only (which keys it drops and the mass it records come from the float
 *      probabilities), so its layers keep the fp32 path and store the same bytes;
 *   4. an observer without observe_f16 gets observe() on every layer that wants a head (the
 *      fp32 path), the fused op runs on the layer that wants none, and the session makes
 *      its fp32 probability buffer only then (a capture-only run never does).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "engine/backend/sc-backend-impl.h"
#include "engine/core/sc-math.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store-heads.h"
#include "engine/store/sc-store.h"
#include "tests/engine/sc-test-capture.h"
#include "tests/engine/sc-test-gguf.h"

/* What the fake-capture backend saw (zeroed by each test before it counts). */
static ScTestCaptureCounts *const fc = &sc_test_capture_counts;

/* ---- a recording observer --------------------------------------------------------------- */

typedef struct {
  int n_layers, n_heads, n;
  const uint8_t *want; /* (L * H) or NULL = every head */
  GPtrArray *f32;      /* per observe(): the head packed to fp16, as a GBytes */
  GPtrArray *f16;      /* per observe_f16(): the values, as a GBytes */
  GArray *order;       /* layer * H + head of every call, in call order */
  int n_observe, n_observe_f16;
} Rec;

static bool
rec_wants (void *user, int layer, int head)
{
  Rec *r = user;
  return r->want == NULL || r->want[layer * r->n_heads + head];
}

static GBytes *
pack (const float *probs, int n)
{
  const size_t per = sc_attn_packed_size (n, n, true);
  uint16_t *v = g_new (uint16_t, per);

  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++)
      v[sc_attn_packed_index (i, j, n, true)] = sc_fp32_to_fp16 (probs[(size_t) i * n + j]);
  return g_bytes_new_take (v, per * sizeof *v);
}

static bool
rec_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  Rec *r = user;
  const int at = layer * r->n_heads + head;

  g_assert_cmpint (n_q, ==, r->n);
  g_assert_cmpint (n_k, ==, r->n);
  r->n_observe++;
  g_ptr_array_add (r->f32, pack (probs, n_q));
  g_array_append_val (r->order, at);
  return true;
}

static bool
rec_observe_f16 (void *user, int layer, int head, const uint16_t *values, int n_q, int n_k,
                 bool packed)
{
  Rec *r = user;
  const int at = layer * r->n_heads + head;

  g_assert_true (packed);
  g_assert_cmpint (n_q, ==, r->n);
  g_assert_cmpint (n_k, ==, r->n);
  r->n_observe_f16++;
  g_ptr_array_add (r->f16, g_bytes_new (values, sc_attn_packed_size (n_q, n_k, true) * 2));
  g_array_append_val (r->order, at);
  return true;
}

static void
rec_init (Rec *r, const ScModelInfo *in, int n, const uint8_t *want)
{
  memset (r, 0, sizeof *r);
  r->n_layers = (int) in->n_layers;
  r->n_heads = (int) in->n_heads;
  r->n = n;
  r->want = want;
  r->f32 = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  r->f16 = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  r->order = g_array_new (FALSE, FALSE, sizeof (int));
}

static void
rec_clear (Rec *r)
{
  g_ptr_array_unref (r->f32);
  g_ptr_array_unref (r->f16);
  g_array_unref (r->order);
}

/* Runs @ids on @b with an observer (f16: also observe_f16) and intervention @iv; the
 * logits of every row into @logits. */
static void
run (ScModel *m, ScBackend *b, const int32_t *ids, int n, bool f16, const ScIntervention *iv,
     Rec *r, float *logits)
{
  ScObserver obs = { rec_wants, rec_observe, r };
  ScForwardOptions fo = { .observer = &obs, .all_logits = true, .intervention = iv };
  ScError err = { SC_OK, "" };
  ScSession *s = NULL;

  if (f16)
    obs.observe_f16 = rec_observe_f16;
  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  if (sc_forward (s, ids, n, &fo, logits, &err) != SC_OK)
    g_error ("%s: %s", sc_backend_name (b), err.message);
  sc_session_free (s);
}

static const int32_t prompt[] = { 1, 72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100,
                                  33, 32, 72, 101, 108, 108, 111 };
#define N_PROMPT ((int) G_N_ELEMENTS (prompt))

/* 1 and 4: the capture path against cpu-ref's fp32 path, wanted heads only. */
static void
test_observer (void)
{
  ScModel *m = sc_test_tiny_model ();
  const ScModelInfo *in = sc_model_info (m);
  const int L = (int) in->n_layers, H = (int) in->n_heads, V = (int) in->n_vocab;
  ScBackend *ref = sc_backend_cpu_ref_new (), *fake = sc_test_capture_backend_new ();
  g_autofree uint8_t *want = g_new0 (uint8_t, L * H);
  g_autofree float *lr = g_new (float, (size_t) N_PROMPT * V);
  g_autofree float *lf = g_new (float, (size_t) N_PROMPT * V);
  Rec rr, rf, rn;
  int k = 0;

  /* a pattern that leaves one layer with no wanted head */
  for (int l = 0; l < L; l++)
    for (int h = 0; h < H; h++)
      want[l * H + h] = l != 1 && (l + h) % 2 == 0;
  rec_init (&rr, in, N_PROMPT, want);
  rec_init (&rf, in, N_PROMPT, want);
  run (m, ref, prompt, N_PROMPT, false, NULL, &rr, lr);
  fc->n_capture_calls = fc->n_capture_wanted_heads = fc->n_attention_calls = 0;
  fc->probs_floats = (size_t) H * N_PROMPT * N_PROMPT;
  fc->n_probs_allocs = 0;
  run (m, fake, prompt, N_PROMPT, true, NULL, &rf, lf);
  g_assert_cmpint (fc->n_probs_allocs, ==, 0); /* no fp32 probability buffer was made */

  g_assert_cmpint (rf.n_observe, ==, 0);          /* no fp32 probabilities at all */
  g_assert_cmpint (fc->n_attention_calls, ==, 0);
  g_assert_cmpint (fc->n_capture_calls, ==, L);       /* every layer, wanted heads or none */
  g_assert_cmpint (rf.n_observe_f16, ==, rr.n_observe);
  g_assert_cmpint (fc->n_capture_wanted_heads, ==, rr.n_observe);
  g_assert_cmpuint (rf.order->len, ==, rr.order->len);
  for (guint i = 0; i < rr.order->len; i++)
    {
      g_assert_cmpint (g_array_index (rf.order, int, i), ==, g_array_index (rr.order, int, i));
      g_assert_true (g_bytes_equal (rf.f16->pdata[i], rr.f32->pdata[i]));
      k++;
    }
  g_assert_cmpint (k, >, 0);
  g_assert_cmpmem (lf, (size_t) N_PROMPT * V * sizeof (float), lr,
                   (size_t) N_PROMPT * V * sizeof (float));

  /* 4: an observer that takes only fp32 gets it on every layer that wants a head */
  rec_init (&rn, in, N_PROMPT, want);
  fc->n_capture_calls = fc->n_attention_calls = 0;
  fc->n_probs_allocs = 0;
  run (m, fake, prompt, N_PROMPT, false, NULL, &rn, lf);
  g_assert_cmpint (fc->n_probs_allocs, ==, 1); /* made once, when a layer needed it */
  g_assert_cmpint (rn.n_observe, ==, rr.n_observe);
  g_assert_cmpint (rn.n_observe_f16, ==, 0);
  g_assert_cmpint (fc->n_attention_calls, ==, L - 1); /* layer 1 wants nothing: fused */
  g_assert_cmpint (fc->n_capture_calls, ==, 1);
  for (guint i = 0; i < rr.order->len; i++)
    g_assert_true (g_bytes_equal (rn.f32->pdata[i], rr.f32->pdata[i]));
  g_assert_cmpmem (lf, (size_t) N_PROMPT * V * sizeof (float), lr,
                   (size_t) N_PROMPT * V * sizeof (float));

  rec_clear (&rr);
  rec_clear (&rf);
  rec_clear (&rn);
  sc_backend_free (ref);
  sc_backend_free (fake);
  sc_model_free (m);
}

/* 2: an edited layer keeps the fp32 path, and shows the edited values. */
static void
test_edited_layer (void)
{
  ScModel *m = sc_test_tiny_model ();
  const ScModelInfo *in = sc_model_info (m);
  const int L = (int) in->n_layers, H = (int) in->n_heads, V = (int) in->n_vocab;
  ScBackend *ref = sc_backend_cpu_ref_new (), *fake = sc_test_capture_backend_new ();
  g_autofree float *lr = g_new (float, (size_t) N_PROMPT * V);
  g_autofree float *lf = g_new (float, (size_t) N_PROMPT * V);
  ScAttnEdit edit = { .layer = 1, .head = 0, .kind = SC_ATTN_EDIT_UNIFORM };
  ScIntervention iv = { 0 };
  Rec rr, rf;

  g_assert_cmpint (L, >=, 2);
  iv.edits = &edit;
  iv.n_edits = 1;
  rec_init (&rr, in, N_PROMPT, NULL);
  rec_init (&rf, in, N_PROMPT, NULL);
  run (m, ref, prompt, N_PROMPT, false, &iv, &rr, lr);
  run (m, fake, prompt, N_PROMPT, true, &iv, &rf, lf);
  g_assert_cmpint (rf.n_observe, ==, H);                 /* layer 1, through observe() */
  g_assert_cmpint (rf.n_observe_f16, ==, (L - 1) * H);   /* the others */
  g_assert_cmpuint (rf.order->len, ==, (guint) (L * H)); /* in layer order */
  for (guint i = 0; i < rf.order->len; i++)
    g_assert_cmpint (g_array_index (rf.order, int, i), ==, (int) i);
  {
    guint a = 0, b = 0;
    for (guint i = 0; i < rr.order->len; i++)
      {
        const bool edited_layer = (int) i / H == 1;
        GBytes *got = edited_layer ? rf.f32->pdata[a++] : rf.f16->pdata[b++];
        g_assert_true (g_bytes_equal (got, rr.f32->pdata[i]));
      }
  }
  g_assert_cmpmem (lf, (size_t) N_PROMPT * V * sizeof (float), lr,
                   (size_t) N_PROMPT * V * sizeof (float));
  rec_clear (&rr);
  rec_clear (&rf);
  sc_backend_free (ref);
  sc_backend_free (fake);
  sc_model_free (m);
}

/* 3: the store's bytes from either path. Returns the run id in a new store at @db. */
static int64_t
store_run (const char *db, const char *model_path, ScModel *m, ScBackend *b, double sparse_eps,
           ScStore **store_out)
{
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreCapture *cap = NULL;
  ScStoreModel ident;
  ScStoreToken *pieces = NULL;
  ScStoreRunDesc desc = { 0 };
  ScForwardOptions fo = { 0 };
  ScSession *s = NULL;
  ScObserver obs;
  ScError err = { SC_OK, "" };
  int64_t run_id = 0;

  g_assert_cmpint (sc_store_tokens_from_ids (sc_model_tokenizer (m), prompt, N_PROMPT, &pieces,
                                             &err), ==, SC_OK);
  g_assert_cmpint (sc_store_model_identify (m, model_path, &ident, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (db, &so, &store, &err), ==, SC_OK);
  desc.model = &ident;
  desc.text = "f16";
  desc.text_len = 3;
  desc.tokens = pieces;
  desc.n_tokens = N_PROMPT;
  desc.backend = sc_backend_name (b);
  desc.sparse_eps = sparse_eps;
  g_assert_cmpint (sc_store_capture_begin (store, &desc, &cap, &err), ==, SC_OK);
  obs = sc_store_capture_observer (cap);
  if (sparse_eps > 0)
    g_assert_null (obs.observe_f16);
  else
    g_assert_nonnull (obs.observe_f16);
  fo.observer = &obs;
  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  if (sc_forward (s, prompt, N_PROMPT, &fo, NULL, &err) != SC_OK)
    g_error ("forward: %s", err.message);
  if (sc_store_capture_commit (cap, -1, &run_id, &err) != SC_OK)
    g_error ("commit: %s", err.message);
  sc_session_free (s);
  sc_store_tokens_free (pieces);
  *store_out = store;
  return run_id;
}

static void
test_store (void)
{
  g_autofree char *dir = g_dir_make_tmp ("sc-capture-f16-XXXXXX", NULL);
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
      const double eps = sparse ? 1e-3 : 0.0;
      g_autofree char *db_ref = g_strdup_printf ("%s/ref-%d.sqlite", dir, sparse);
      g_autofree char *db_f16 = g_strdup_printf ("%s/f16-%d.sqlite", dir, sparse);
      ScBackend *ref = sc_backend_cpu_ref_new (), *fake = sc_test_capture_backend_new ();
      ScStore *sr = NULL, *sf = NULL;
      const int64_t run_r = store_run (db_ref, model_path, m, ref, eps, &sr);
      int64_t run_f;

      fc->n_capture_wanted_heads = 0;
      run_f = store_run (db_f16, model_path, m, fake, eps, &sf);
      g_assert_cmpint (fc->n_capture_wanted_heads, ==,
                       sparse ? 0 : (int) (in->n_layers * in->n_heads));
      for (int l = 0; l < (int) in->n_layers; l++)
        for (int h = 0; h < (int) in->n_heads; h++)
          {
            ScStoreHeadF16 a = { 0 }, b = { 0 };
            g_assert_cmpint (sc_store_read_head_f16 (sr, run_r, l, h, &a, &err), ==, SC_OK);
            g_assert_cmpint (sc_store_read_head_f16 (sf, run_f, l, h, &b, &err), ==, SC_OK);
            g_assert_cmpint (a.sparse, ==, b.sparse);
            g_assert_cmpmem (a.values, a.n_values * 2, b.values, b.n_values * 2);
            sc_store_head_f16_clear (&a);
            sc_store_head_f16_clear (&b);
          }
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
  g_test_add_func ("/capture-f16/observer", test_observer);
  g_test_add_func ("/capture-f16/edited-layer", test_edited_layer);
  g_test_add_func ("/capture-f16/store", test_store);
  return g_test_run ();
}
