/* test-path-patch.c — path patching (engine/study/sc-path-patch.h), on the tiny llama of
 * sc-test-gguf (2 layers × 4 heads, grouped KV heads) and on the two-layer induction model
 * whose circuit is known by construction.
 *
 * 1. Every cell of the study (each component, both directions; one sender, two, and all
 *    of layer 0) equals, bit for bit, the definition built by hand in a fresh session with
 *    full runs (start_layer 0): the source and base runs' head outputs, run A with every
 *    head's output patched (the senders' from the source), then each receiver's component
 *    from run A. Layer 0 (at the senders' layer) holds m_base exactly.
 * 2. By construction: "A B x D C z A" (clean: the induction head finds B after A) against
 *    "D B x A C z A" (corrupted: it finds C). The previous-token head L0.H0 writes "the
 *    previous token is A" at position 2 in the clean run and at position 5 in the
 *    corrupted one; the induction head L1.H0 reads it through its KEYS only. So the path
 *    L0.H0 → L1.H0 keys carries the whole behaviour (denoising effect 1, noising 0, to
 *    1e-4), while L0.H0 → L1.H0 queries or values carries nothing (they read the token's
 *    identity, which L0.H0 does not write): denoising 0, noising 1.
 * 3. Refusals: a sender outside the model, an empty or malformed list, a sender in the
 *    last layer (no receivers), through the run and through the kind's params text.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/format/sc-gguf.h"
#include "engine/model/sc-model.h"
#include "engine/study/sc-path-patch.h"
#include "engine/study/sc-study.h"
#include "tests/engine/sc-test-gguf.h"

/* The sequences of test-patch-study.c: they differ at positions 3 and 6. */
static const int32_t clean_ids[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10 };
static const int32_t corrupt_ids[] = { 264, 72, 101, 120, 108, 111, 99, 44, 33, 10 };
#define N ((int) G_N_ELEMENTS (clean_ids))

static void
assert_same_double (double a, double b)
{
  g_assert_cmpmem (&a, sizeof a, &b, sizeof b);
}

/* What a run hands over per query head into (L, H, n, d): its head outputs (attn_output)
 * and its queries, keys and values (keys and values of head h: its KV head's). */
typedef struct {
  float *o, *q, *k, *v;
  int H, Hkv, d, n;
} Heads;

static bool
take_o (void *user, int layer, const float *o, int n_q, int width)
{
  Heads *s = user;

  for (int p = 0; p < n_q; p++)
    for (int h = 0; h < s->H; h++)
      memcpy (s->o + (((size_t) layer * s->H + h) * s->n + p) * s->d,
              o + (size_t) p * width + (size_t) h * s->d, (size_t) s->d * sizeof (float));
  return true;
}

static bool
take_qkv (void *user, int layer, const float *q, const float *k, const float *v, int n_q,
          int n_k, int q_width, int kv_width)
{
  Heads *s = user;

  g_assert_cmpint (n_q, ==, s->n);
  g_assert_cmpint (n_k, ==, s->n);
  for (int h = 0; h < s->H; h++)
    for (int p = 0; p < s->n; p++)
      {
        const size_t to = (((size_t) layer * s->H + h) * s->n + p) * s->d;
        const size_t kv = (size_t) p * kv_width + (size_t) (h / (s->H / s->Hkv)) * s->d;
        memcpy (s->q + to, q + (size_t) p * q_width + (size_t) h * s->d, s->d * sizeof (float));
        memcpy (s->k + to, k + kv, s->d * sizeof (float));
        memcpy (s->v + to, v + kv, s->d * sizeof (float));
      }
  return true;
}

static Heads
heads_new (const ScModelInfo *in, int n)
{
  const gsize size = (gsize) in->n_layers * in->n_heads * n * in->head_dim;
  Heads x = { g_new (float, size), g_new (float, size), g_new (float, size),
              g_new (float, size), (int) in->n_heads, (int) in->n_kv_heads,
              (int) in->head_dim, n };
  return x;
}

static void
heads_clear (Heads *x)
{
  g_free (x->o);
  g_free (x->q);
  g_free (x->k);
  g_free (x->v);
}

/* A full run of @ids (start_layer 0) with @iv, taking what @x wants: its last row (or all
 * rows, @all) into @logits. */
static void
run_full (ScSession *s, const int32_t *ids, int n, bool all, const ScIntervention *iv,
          Heads *x, float *logits)
{
  ScObserver obs = { .attn_output = take_o, .qkv = take_qkv, .user = x };
  ScForwardOptions opt = { .all_logits = all, .intervention = iv,
                           .observer = x != NULL ? &obs : NULL };
  ScError err = { 0 };

  g_assert_cmpint (sc_forward (s, ids, n, &opt, logits, &err), ==, SC_OK);
}

static ScPathPatchParams
params_of (int dir, int component, const char *senders, int target, int contrast)
{
  ScPathPatchParams p = { .patch = { .corrupted_run = 2, .target = target,
                                     .contrast = contrast, .direction = dir },
                          .component = component };

  g_strlcpy (p.senders, senders, sizeof p.senders);
  return p;
}

/* 1. The study against the definition built by hand with full runs. */
static void
check_cells (ScModel *m, ScModel *m2, const ScPathPatchParams *p, int last_sender_layer,
             const int *sender_layer, const int *sender_head, int n_senders)
{
  const ScModelInfo *in = sc_model_info (m);
  const int L = (int) in->n_layers, H = (int) in->n_heads, V = (int) in->n_vocab,
            d = (int) in->head_dim;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL, *s2 = NULL;
  ScPathPatchResult *r = NULL;
  ScError err = { 0 };
  const bool denoise = p->patch.direction == SC_PATCH_DENOISE;
  g_autofree float *clean = g_new (float, (gsize) N * V);
  g_autofree float *row = g_new (float, V);
  g_autofree uint8_t *on = g_new (uint8_t, (gsize) L * H * N);
  Heads src = heads_new (in, N), base = heads_new (in, N), a = heads_new (in, N);
  ScIntervention iv = { .patch_tokens = N };
  double m_clean, m_corrupt, m_base;
  int moved = 0;

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_new (m2, b, &s2, &err), ==, SC_OK);
  g_assert_cmpint (sc_path_patch_run (s, m, clean_ids, corrupt_ids, N, p, NULL, NULL, &r,
                                      &err), ==, SC_OK);
  g_assert_cmpint (r->receivers_from_layer, ==, last_sender_layer + 1);
  g_assert_cmpint (r->grid->n_rows, ==, L);
  g_assert_cmpint (r->grid->n_cols, ==, H);
  g_assert_cmpint (r->grid->what, ==, SC_PATCH_QUERIES + p->component);

  /* the source and base runs: head outputs; the metric as activation patching's */
  run_full (s2, clean_ids, N, true, NULL, denoise ? &src : &base, clean);
  run_full (s2, corrupt_ids, N, false, NULL, denoise ? &base : &src, row);
  m_clean = sc_patch_metric (clean + (gsize) (N - 1) * V, V, r->grid->target,
                             r->grid->contrast);
  m_corrupt = sc_patch_metric (row, V, r->grid->target, r->grid->contrast);
  g_assert_cmpint (r->grid->target, ==, sc_logits_top1 (clean + (gsize) (N - 1) * V, V));
  assert_same_double (r->grid->metric_clean, m_clean);
  assert_same_double (r->grid->metric_corrupted, m_corrupt);
  m_base = denoise ? m_corrupt : m_clean;

  /* run A: every head's output patched, the senders' from the source */
  for (int i = 0; i < n_senders; i++)
    {
      const gsize at = ((gsize) sender_layer[i] * H + sender_head[i]) * N * d;
      memcpy (base.o + at, src.o + at, (gsize) N * d * sizeof (float));
    }
  memset (on, 1, (gsize) L * H * N);
  iv.head_patch = base.o;
  iv.head_patch_on = on;
  run_full (s2, denoise ? corrupt_ids : clean_ids, N, false, &iv, &a, row);

  /* each receiver: its component from run A, a full run */
  iv = (ScIntervention) { .patch_tokens = N };
  memset (on, 0, (gsize) L * H);
  if (p->component == SC_PATH_QUERIES)
    iv.q_patch = a.q, iv.q_patch_on = on;
  else if (p->component == SC_PATH_KEYS)
    iv.k_patch = a.k, iv.k_patch_on = on;
  else
    iv.v_patch = a.v, iv.v_patch_on = on;
  for (int c = 0; c < L * H; c++)
    {
      if (c / H <= last_sender_layer)
        {
          assert_same_double (r->grid->patched[c], m_base);
          continue;
        }
      on[c] = 1;
      run_full (s2, denoise ? corrupt_ids : clean_ids, N, false, &iv, NULL, row);
      on[c] = 0;
      assert_same_double (r->grid->patched[c],
                          sc_patch_metric (row, V, r->grid->target, r->grid->contrast));
      moved += fabs (r->grid->patched[c] - m_base) > 1e-4;
      g_test_message ("%s %s from %s: L%d.H%d m %.6f (base %.6f)",
                      sc_patch_direction_names[p->patch.direction],
                      sc_path_component_names[p->component], p->senders, c / H, c % H,
                      r->grid->patched[c], m_base);
    }
  /* the paths carry something on this model: the test compares numbers that move */
  if (n_senders == H)
    g_assert_cmpint (moved, >, 0);
  heads_clear (&src);
  heads_clear (&base);
  heads_clear (&a);
  sc_path_patch_result_free (r);
  sc_session_free (s);
  sc_session_free (s2);
  sc_backend_free (b);
}

static void
test_cells_equal_definition (void)
{
  ScModel *m = sc_test_tiny_model (), *m2 = sc_test_tiny_model ();
  const int one_l[] = { 0 }, one_h[] = { 1 };
  const int two_l[] = { 0, 0 }, two_h[] = { 0, 2 };
  const int all_l[] = { 0, 0, 0, 0 }, all_h[] = { 0, 1, 2, 3 };

  g_assert_cmpint (sc_model_info (m)->n_heads, ==, 4);
  for (int dir = SC_PATCH_DENOISE; dir <= SC_PATCH_NOISE; dir++)
    for (int c = SC_PATH_QUERIES; c <= SC_PATH_VALUES; c++)
      {
        ScPathPatchParams p = params_of (dir, c, "0.1", -1, -1);
        check_cells (m, m2, &p, 0, one_l, one_h, 1);
        p = params_of (dir, c, "0.2,0.0", -1, -1);
        check_cells (m, m2, &p, 0, two_l, two_h, 2);
        p = params_of (dir, c, "0.3,0.1,0.0,0.2", -1, -1);
        check_cells (m, m2, &p, 0, all_l, all_h, 4);
      }
  sc_model_free (m);
  sc_model_free (m2);
}

/* 2. The induction model: BOS, then A B x D C z A (clean) and D B x A C z A (corrupted),
 *    target B, contrast C. In both runs the last A's query (its identity) looks for a key
 *    whose previous-token block is A: position 2 (B) in the clean run, position 5 (C) in
 *    the corrupted one; the multiset of tokens is the same, only where A sits differs.
 *
 *    Denoising, senders L0.H0 (the previous-token head): run A is the corrupted ids with
 *    L0.H0's clean output (previous token A at position 2, D at position 5) and every
 *    other head frozen (layer 1's included). L1.H0's keys from run A make it find position
 *    2 in the corrupted run, whose value is the identity of B (B sits at position 2 in both
 *    runs): it copies B, the last position's residual is the clean run's, effect 1. Its
 *    queries and values read the identity block, which L0.H0 does not write: run A's are
 *    the corrupted run's, effect 0. Noising mirrors it: keys 0 (L1.H0 now finds C at
 *    position 5), queries and values 1. L1.H1 (zero q, k, v) and layer 0 (no path) stay at
 *    the base. */
static void
test_by_construction (void)
{
  enum { TA = 'a', TB = 'b', TC = 'c', TD = 'd', BOS = 257 };
  g_autoptr (GBytes) bytes = sc_test_gguf_induction_llama (64);
  const int32_t clean[] = { BOS, TA, TB, 'x', TD, TC, 'z', TA };
  const int32_t corrupt[] = { BOS, TD, TB, 'x', TA, TC, 'z', TA };
  const int n = (int) G_N_ELEMENTS (clean);
  ScGguf *g = NULL;
  ScModel *m = NULL;
  ScBackend *b = sc_backend_cpu_new (1, NULL);
  ScSession *s = NULL;
  ScError err = { 0 };
  gsize len;
  const void *data = g_bytes_get_data (bytes, &len);

  g_assert_cmpint (sc_gguf_open_memory (data, len, &g, &err), ==, SC_OK);
  g_assert_cmpint (sc_model_open_gguf (g, 1, &m, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  for (int dir = SC_PATCH_DENOISE; dir <= SC_PATCH_NOISE; dir++)
    for (int c = SC_PATH_QUERIES; c <= SC_PATH_VALUES; c++)
      {
        const ScPathPatchParams p = params_of (dir, c, "0.0", TB, TC);
        const double base = dir == SC_PATCH_DENOISE ? 0.0 : 1.0;
        /* the keys carry it all; queries and values nothing */
        const double want = c == SC_PATH_KEYS ? 1.0 - base : base;
        ScPathPatchResult *r = NULL;

        g_assert_cmpint (sc_path_patch_run (s, m, clean, corrupt, n, &p, NULL, NULL, &r, &err),
                         ==, SC_OK);
        g_assert_cmpfloat (r->grid->metric_clean, >, 5.0);     /* B well above C ... */
        g_assert_cmpfloat (r->grid->metric_corrupted, <, -5.0); /* ... and the other way */
        g_assert_cmpint (r->receivers_from_layer, ==, 1);
        for (int cell = 0; cell < 4; cell++)
          {
            const double e = sc_patch_normalised (r->grid, r->grid->patched[cell]);
            g_test_message ("%s %s: L%d.H%d effect %.6f", sc_patch_direction_names[dir],
                            sc_path_component_names[c], cell / 2, cell % 2, e);
            if (cell < 2) /* layer 0: no path, the base exactly */
              assert_same_double (e, base);
            else if (cell == 2) /* L1.H0, the induction head */
              g_assert_cmpfloat (fabs (e - want), <, 1e-4);
            else /* L1.H1 writes nothing */
              g_assert_cmpfloat (fabs (e - base), <, 1e-4);
          }
        sc_path_patch_result_free (r);
      }
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

/* 3. */
static void
test_invalid (void)
{
  static const char *const bad[] = { "2.0", "0.4", "", "0.1,", "1.0", "0.1,1.3", NULL };
  static const char *const why[] = { "not a head", "not a head", "not a list", "not a list",
                                     "last layer", "last layer" };
  const ScStudyKind *kind = sc_study_kind_find ("path-patch");
  ScModel *m = sc_test_tiny_model ();
  ScBackend *b = sc_backend_cpu_new (1, NULL);
  ScSession *s = NULL;
  ScError err = { 0 };
  const ScStudyCtx ctx = { .model = m, .run_id = 1, .ids = clean_ids, .n_tokens = N,
                           .run2_id = 2, .ids2 = corrupt_ids, .n_tokens2 = N };
  char buf[SC_STUDY_PARAMS_MAX];

  g_assert_nonnull (kind);
  g_assert_true (kind == &sc_study_kind_path_patch);
  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  for (int i = 0; bad[i] != NULL; i++)
    {
      const ScPathPatchParams p = params_of (SC_PATCH_DENOISE, SC_PATH_KEYS, bad[i], -1, -1);
      ScPathPatchResult *r = NULL;
      g_assert_cmpint (sc_path_patch_run (s, m, clean_ids, corrupt_ids, N, &p, NULL, NULL, &r,
                                          &err), ==, SC_ERR_INVALID_ARG);
      g_assert_null (r);
      g_test_message ("'%s': %s", bad[i], err.message);
      g_assert_nonnull (strstr (err.message, why[i]));
      /* the kind's params text refuses it too, before anything runs */
      g_assert_cmpint (kind->params_json (kind, &p, &ctx, buf, sizeof buf, &err), ==, -1);
    }
  /* a good one: the canonical text, senders sorted */
  {
    const ScPathPatchParams p = params_of (SC_PATCH_NOISE, SC_PATH_VALUES, "0.3,0.1", 5, -1);
    g_assert_cmpint (kind->params_json (kind, &p, &ctx, buf, sizeof buf, &err), >, 0);
    g_assert_cmpstr (buf, ==, "{\"study\":1,\"run\":1,\"corrupted\":2,\"target\":5,"
                              "\"contrast\":null,\"direction\":\"noise\",\"senders\":\"0.1,0.3\","
                              "\"component\":\"values\"}");
  }
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/path-patch/cells-equal-definition", test_cells_equal_definition);
  g_test_add_func ("/path-patch/by-construction", test_by_construction);
  g_test_add_func ("/path-patch/invalid", test_invalid);
  return g_test_run ();
}
