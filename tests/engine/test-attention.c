/* test-attention.c — the attention op and its neighbours, on both CPU backends.
 *
 * 1. The seeds' hand-worked numbers (shared/seeds/000_08e7882fded166fa.txt and
 *    004_fb7afb5c123d0a88.txt) reproduced by the engine's attention op.
 * 2. The fast backend ("cpu": OpenBLAS + own pool) against the scalar reference ("cpu-ref")
 *    on random inputs with GQA shapes, with explicit tolerances.
 * 3. Invariants: rows sum to 1, causal entries exactly 0, masking renormalises, head scale.
 * 4. The whole forward pass on a tiny hand-built model: cpu vs cpu-ref, interventions.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/backend/sc-backend-cpu-private.h"
#include "engine/backend/sc-backend-impl.h"
#include "engine/forward/sc-forward.h"
#include "engine/core/sc-math.h"
#include "engine/model/sc-model.h"
#include "tests/engine/sc-test-gguf.h"

static void
assert_close (double got, double want, double tol, const char *what)
{
  if (fabs (got - want) > tol)
    g_error ("%s: got %.6f, want %.6f (tolerance %g)", what, got, want, tol);
}

/* The causal attention op with the given scale, key mask and head scales (no window). */
static ScStatus
attend (ScBackend *b, float *out, float *probs, const float *q, const float *k, const float *v,
        int n_q, int n_k, int n_heads, int n_kv, int d, float scale, const uint8_t *key_mask,
        const float *head_scale)
{
  const ScAttnParams p = { .scale = scale, .causal = true, .key_mask = key_mask,
                           .head_scale = head_scale };

  return b->ops->attention (b, out, probs, q, k, v, n_q, n_k, n_heads, n_kv, d, &p, NULL);
}

/* Seed 000: one query "它" = [1,1,0,0] over keys 猫 [2,2,0,0], 球 [1,0,1,0], 它 [0,0,0,2];
 * values one-hot, so the output equals the weights. As a causal op the query is the third
 * row; rows 0 and 1 are filled with the same key vectors (their results are not checked). */
static void
check_seed_000 (ScBackend *b)
{
  const float k[3 * 4] = { 2, 2, 0, 0, 1, 0, 1, 0, 0, 0, 0, 2 };
  const float q[3 * 4] = { 2, 2, 0, 0, 1, 0, 1, 0, 1, 1, 0, 0 };
  const float v[3 * 4] = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0 };
  float out[3 * 4], probs[3 * 3];

  /* scaled by 1/sqrt(d_k) = 0.5: scores 2, 0.5, 0 */
  g_assert_cmpint (attend (b, out, probs, q, k, v, 3, 3, 1, 1, 4, 0.5f, NULL, NULL), ==,
                   SC_OK);
  assert_close (probs[6], 0.7361, 5e-5, "seed 000 scaled weight 猫");
  assert_close (probs[7], 0.1643, 5e-5, "seed 000 scaled weight 球");
  assert_close (probs[8], 0.0996, 5e-5, "seed 000 scaled weight 它");
  assert_close (out[8], 0.736, 5e-4, "seed 000 output[0]");
  assert_close (out[9], 0.164, 5e-4, "seed 000 output[1]");
  assert_close (out[10], 0.100, 5e-4, "seed 000 output[2]");
  /* unscaled: scores 4, 1, 0 */
  g_assert_cmpint (attend (b, out, probs, q, k, v, 3, 3, 1, 1, 4, 1.0f, NULL, NULL), ==,
                   SC_OK);
  assert_close (probs[6], 0.936, 5e-4, "seed 000 unscaled weight 猫");
  assert_close (probs[7], 0.047, 5e-4, "seed 000 unscaled weight 球");
  assert_close (probs[8], 0.017, 5e-4, "seed 000 unscaled weight 它");
}

/* Seed 004: d_k = d_v = 2; q3 = (1,1), k = (1,0), (0,1), (1,1); v = (1,0), (0,2), (2,2).
 * Row 3 (the last, which sees every key under the causal mask as in the article):
 * scaled scores 0.7071, 0.7071, 1.4142 -> weights 0.2483, 0.2483, 0.5035; z3 = (1.2552,
 * 1.5035). The article's rows 1 and 2 attend bidirectionally and are not causal rows. */
static void
check_seed_004 (ScBackend *b)
{
  const float q[3 * 2] = { 1, 0, 0, 1, 1, 1 };
  const float k[3 * 2] = { 1, 0, 0, 1, 1, 1 };
  const float v[3 * 2] = { 1, 0, 0, 2, 2, 2 };
  float out[3 * 2], probs[3 * 3];

  g_assert_cmpint (attend (b, out, probs, q, k, v, 3, 3, 1, 1, 2, 1.0f / sqrtf (2.0f),
                           NULL, NULL), ==, SC_OK);
  assert_close (probs[6], 0.2483, 5e-5, "seed 004 row 3 weight 1");
  assert_close (probs[7], 0.2483, 5e-5, "seed 004 row 3 weight 2");
  assert_close (probs[8], 0.5035, 5e-5, "seed 004 row 3 weight 3");
  assert_close (out[4], 1.2552, 5e-4, "seed 004 z3[0]");
  assert_close (out[5], 1.5035, 5e-4, "seed 004 z3[1]");
}

static void
test_seeds (void)
{
  ScBackend *bs[2] = { sc_backend_cpu_new (2, NULL), sc_backend_cpu_ref_new () };
  int i;

  for (i = 0; i < 2; i++)
    {
      g_test_message ("backend %s", bs[i]->ops->name);
      check_seed_000 (bs[i]);
      check_seed_004 (bs[i]);
      sc_backend_free (bs[i]);
    }
}

static void
fill_random (GRand *r, float *x, gsize n, double scale)
{
  gsize i;
  for (i = 0; i < n; i++)
    x[i] = (float) g_rand_double_range (r, -scale, scale);
}

/* Invariants of a (H, n, n) probability block. */
static void
check_invariants (const float *probs, int H, int n, const uint8_t *mask)
{
  int h, i, j;

  for (h = 0; h < H; h++)
    for (i = 0; i < n; i++)
      {
        const float *row = probs + ((size_t) h * n + i) * n;
        double sum = 0.0;
        for (j = 0; j < n; j++)
          {
            if (j > i)
              g_assert_cmpfloat (row[j], ==, 0.0f); /* causal: exactly zero */
            g_assert_cmpfloat (row[j], >=, 0.0f);
            sum += row[j];
          }
        if (fabs (sum - 1.0) > 1e-5)
          g_error ("head %d row %d sums to %.8f", h, i, sum);
        if (mask != NULL)
          {
            gboolean all = TRUE;
            for (j = 0; j <= i; j++)
              all = all && mask[j];
            for (j = 0; j <= i; j++)
              if (mask[j] && !(all && j == i))
                g_assert_cmpfloat (row[j], ==, 0.0f);
          }
      }
}

/* cpu vs cpu-ref on SmolLM2's head shapes: 9 query heads over 3 KV heads, d = 64. */
static void
test_fast_vs_reference (void)
{
  const int H = 9, HKV = 3, d = 64, n = 37;
  GRand *r = g_rand_new_with_seed (42);
  ScBackend *fast = sc_backend_cpu_new (2, NULL), *ref = sc_backend_cpu_ref_new ();
  g_autofree float *q = g_new (float, n * H * d), *k = g_new (float, n * HKV * d),
                   *v = g_new (float, n * HKV * d), *o1 = g_new (float, n * H * d),
                   *o2 = g_new (float, n * H * d), *p1 = g_new (float, H * n * n),
                   *p2 = g_new (float, H * n * n);
  uint8_t mask[37] = { 0 };
  float scale[9] = { 1, 1, 0, 1, 0.5f, 1, 1, 1, 2 };
  double max_p = 0, max_o = 0;
  int pass, i;

  fill_random (r, q, (gsize) n * H * d, 1.0);
  fill_random (r, k, (gsize) n * HKV * d, 1.0);
  fill_random (r, v, (gsize) n * HKV * d, 1.0);
  mask[0] = mask[5] = mask[6] = 1;

  for (pass = 0; pass < 2; pass++)
    {
      const uint8_t *m = pass ? mask : NULL;
      const float *s = pass ? scale : NULL;
      g_assert_cmpint (attend (fast, o1, p1, q, k, v, n, n, H, HKV, d, 0.125f, m, s),
                       ==, SC_OK);
      g_assert_cmpint (attend (ref, o2, p2, q, k, v, n, n, H, HKV, d, 0.125f, m, s), ==,
                       SC_OK);
      check_invariants (p1, H, n, m);
      check_invariants (p2, H, n, m);
      for (i = 0; i < H * n * n; i++)
        max_p = fmax (max_p, fabs (p1[i] - p2[i]));
      for (i = 0; i < n * H * d; i++)
        max_o = fmax (max_o, fabs (o1[i] - o2[i]) / (1.0 + fabs (o2[i])));
    }
  g_test_message ("max |dP| = %.3g, max |dO|/(1+|O|) = %.3g", max_p, max_o);
  /* float32 dot products of 64 terms with |q|,|k| < 1 differ from double by ~1e-6. */
  g_assert_cmpfloat (max_p, <, 1e-5);
  g_assert_cmpfloat (max_o, <, 1e-5);
  /* zero head scale zeroes the head's output */
  for (i = 0; i < n; i++)
    g_assert_cmpfloat (o1[(size_t) i * H * d + 2 * d + 7], ==, 0.0f);
  sc_backend_free (fast);
  sc_backend_free (ref);
  g_rand_free (r);
}

static void
test_matmul_rope_norm (void)
{
  const int n = 5, in = 70, out = 33;
  GRand *r = g_rand_new_with_seed (3);
  ScBackend *fast = sc_backend_cpu_new (2, NULL), *ref = sc_backend_cpu_ref_new ();
  g_autofree float *x = g_new (float, n * in), *w = g_new (float, out * in),
                   *y1 = g_new (float, n * out), *y2 = g_new (float, n * out);
  float rx[8] = { 1, 0, 1, 0, 1, 0, 1, 0 };
  int i;

  fill_random (r, x, (gsize) n * in, 1.0);
  fill_random (r, w, (gsize) out * in, 1.0);
  fast->ops->matmul (fast, y1, x, w, n, in, out, false, NULL);
  ref->ops->matmul (ref, y2, x, w, n, in, out, false, NULL);
  for (i = 0; i < n * out; i++)
    g_assert_cmpfloat (fabs (y1[i] - y2[i]), <=, 1e-5 + 1e-5 * fabs (y2[i]));
  /* accumulate */
  fast->ops->matmul (fast, y1, x, w, n, in, out, true, NULL);
  for (i = 0; i < n * out; i++)
    g_assert_cmpfloat (fabs (y1[i] - 2 * y2[i]), <=, 1e-5 + 1e-5 * fabs (y2[i]));

  /* rope: one head of 8 dims at position 1, base 100: pair j turns by 100^(-2j/8) rad */
  fast->ops->rope (fast, rx, 1, 1, 8, 8, 1, 100.0f, NULL);
  for (i = 0; i < 4; i++)
    {
      double theta = pow (100.0, -2.0 * i / 8);
      assert_close (rx[2 * i], cos (theta), 1e-6, "rope cos");
      assert_close (rx[2 * i + 1], sin (theta), 1e-6, "rope sin");
    }
  /* rmsnorm: [3, 4] -> rms = sqrt(12.5) */
  {
    float v[2] = { 3, 4 }, wt[2] = { 1, 2 }, y[2];
    fast->ops->rmsnorm (fast, y, v, wt, 1, 2, 0.0f, NULL);
    assert_close (y[0], 3 / sqrt (12.5), 1e-6, "rmsnorm[0]");
    assert_close (y[1], 2 * 4 / sqrt (12.5), 1e-6, "rmsnorm[1]");
  }
  sc_backend_free (fast);
  sc_backend_free (ref);
  g_rand_free (r);
}

/* ---- whole forward pass on the tiny model ---------------------------------------- */


typedef struct {
  int calls;
  float *store; /* (L, H, n, n) */
  int H, n;
} Collect;

static bool
collect_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  Collect *c = user;
  g_assert_cmpint (n_q, ==, c->n);
  g_assert_cmpint (n_k, ==, c->n);
  memcpy (c->store + ((size_t) layer * c->H + head) * c->n * c->n, probs,
          sizeof (float) * n_q * n_k);
  c->calls++;
  return true;
}

static void
test_tiny_forward (void)
{
  ScModel *m = sc_test_tiny_model ();
  const ScModelInfo *in = sc_model_info (m);
  const int32_t ids[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10 };
  const int n = G_N_ELEMENTS (ids), V = (int) in->n_vocab;
  ScBackend *fast = sc_backend_cpu_new (2, NULL), *ref = sc_backend_cpu_ref_new ();
  ScSession *sf = NULL, *sr = NULL;
  ScError err = { 0 };
  g_autofree float *l1 = g_new (float, n * V), *l2 = g_new (float, n * V),
                   *a1 = g_new (float, 2 * 4 * n * n), *a2 = g_new (float, 2 * 4 * n * n);
  Collect c1 = { 0, a1, 4, n }, c2 = { 0, a2, 4, n };
  ScObserver o1 = { NULL, collect_observe, &c1 }, o2 = { NULL, collect_observe, &c2 };
  ScForwardOptions f1 = { .observer = &o1, .all_logits = true },
                   f2 = { .observer = &o2, .all_logits = true };
  double max_l = 0, max_a = 0;
  int i;

  g_assert_cmpint (sc_session_new (m, fast, &sf, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_new (m, ref, &sr, &err), ==, SC_OK);
  g_assert_cmpint (sc_forward (sf, ids, n, &f1, l1, &err), ==, SC_OK);
  g_assert_cmpint (sc_forward (sr, ids, n, &f2, l2, &err), ==, SC_OK);
  g_assert_cmpint (c1.calls, ==, 2 * 4);
  g_assert_cmpint (c2.calls, ==, 2 * 4);
  check_invariants (a1, 8, n, NULL);
  for (i = 0; i < n * V; i++)
    max_l = fmax (max_l, fabs (l1[i] - l2[i]));
  for (i = 0; i < 8 * n * n; i++)
    max_a = fmax (max_a, fabs (a1[i] - a2[i]));
  g_test_message ("tiny model cpu vs cpu-ref: max |dlogit| %.3g, max |dP| %.3g", max_l, max_a);
  g_assert_cmpfloat (max_l, <, 1e-4);
  g_assert_cmpfloat (max_a, <, 1e-5);

  /* the last-position logits equal the last row of all_logits (to float rounding: BLAS
   * picks a different kernel for one row than for many) */
  {
    g_autofree float *last = g_new (float, V);
    g_assert_cmpint (sc_forward (sf, ids, n, NULL, last, &err), ==, SC_OK);
    for (i = 0; i < V; i++)
      g_assert_cmpfloat (fabs (last[i] - l1[(size_t) (n - 1) * V + i]), <=, 1e-5);
  }
  sc_session_free (sf);
  sc_session_free (sr);
  sc_backend_free (fast);
  sc_backend_free (ref);
  sc_model_free (m);
}

static void
test_tiny_interventions (void)
{
  ScModel *m = sc_test_tiny_model ();
  const ScModelInfo *in = sc_model_info (m);
  const int32_t ids[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10, 200, 201 };
  const int n = G_N_ELEMENTS (ids), V = (int) in->n_vocab;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScError err = { 0 };
  g_autofree float *plain = g_new (float, n * V), *got = g_new (float, n * V),
                   *full = g_new (float, n * V);
  float scale[2 * 4] = { 1, 1, 1, 1, 1, 1, 1, 1 };
  uint8_t mask[12] = { 0 };
  ScIntervention noop = { .head_scale = scale, .token_mask = mask };
  ScIntervention ablate = { .head_scale = scale };
  ScForwardOptions keep = { .all_logits = true, .keep_residuals = true };
  ScForwardOptions with = { .all_logits = true, .intervention = &noop };
  int i;

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_forward (s, ids, n, &keep, plain, &err), ==, SC_OK);
  /* 1. an intervention that ablates nothing is bit-identical */
  g_assert_cmpint (sc_forward (s, ids, n, &with, got, &err), ==, SC_OK);
  g_assert_cmpint (memcmp (plain, got, sizeof (float) * n * V), ==, 0);
  g_assert_cmpint (sc_intervention_first_layer (&noop, in), ==, 0); /* it has a mask */
  /* 2. zero-ablating head (1, 2) changes the logits, but only from layer 1 on */
  scale[1 * 4 + 2] = 0.0f;
  with.intervention = &ablate;
  g_assert_cmpint (sc_intervention_first_layer (&ablate, in), ==, 1);
  g_assert_cmpint (sc_forward (s, ids, n, &with, full, &err), ==, SC_OK);
  g_assert_cmpint (memcmp (plain, full, sizeof (float) * n * V), !=, 0);
  /* 3. prefix reuse: start at layer 1 from the kept residuals, bit-identical to full */
  with.start_layer = 1;
  g_assert_cmpint (sc_forward (s, ids, n, &with, got, &err), ==, SC_OK);
  g_assert_cmpint (memcmp (full, got, sizeof (float) * n * V), ==, 0);
  /* ... but not below the intervention, nor on other tokens */
  scale[0] = 0.5f;
  g_assert_cmpint (sc_forward (s, ids, n, &with, got, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "changes layer 0"));
  scale[0] = 1.0f;
  g_assert_cmpint (sc_forward (s, ids, n - 1, &with, got, &err), ==, SC_ERR_INVALID_ARG);
  /* 4. masking a token changes every later position and leaves earlier ones alone */
  scale[1 * 4 + 2] = 1.0f;
  mask[4] = 1;
  with.intervention = &noop;
  with.start_layer = 0;
  g_assert_cmpint (sc_forward (s, ids, n, &with, got, &err), ==, SC_OK);
  g_assert_cmpint (memcmp (plain, got, sizeof (float) * 4 * V), ==, 0);
  for (i = 4; i < n; i++)
    g_assert_cmpint (memcmp (plain + (size_t) i * V, got + (size_t) i * V, sizeof (float) * V),
                     !=, 0);
  /* 5. an invalid intervention is refused, not ignored (tests/engine/test-interventions.c
   * has the edits and mean-ablation themselves) */
  {
    ScAttnEdit edit = { 0, 99, SC_ATTN_EDIT_UNIFORM, 0 };
    ScIntervention e = { .edits = &edit, .n_edits = 1 };
    with.intervention = &e;
    g_assert_cmpint (sc_forward (s, ids, n, &with, got, &err), ==, SC_ERR_INVALID_ARG);
    g_assert_nonnull (strstr (err.message, "edits[0].head"));
  }
  /* 6. bad input */
  with.intervention = NULL;
  g_assert_cmpint (sc_forward (s, ids, 0, &with, got, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "empty"));
  {
    int32_t bad[2] = { 5, 9999 };
    g_assert_cmpint (sc_forward (s, bad, 2, &with, got, &err), ==, SC_ERR_INVALID_ARG);
    g_assert_nonnull (strstr (err.message, "9999"));
  }
  {
    g_autofree int32_t *longer = g_new0 (int32_t, 65);
    g_assert_cmpint (sc_forward (s, longer, 65, &with, NULL, &err), ==, SC_ERR_RANGE);
    g_assert_nonnull (strstr (err.message, "context"));
  }
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

/* Zero-copy capture: the observer's layer buffers receive exactly what the default path
 * hands to observe(). */
typedef struct {
  float *block; /* (L, H, n, n) */
  int H, n, bad;
} ZeroCopy;

static float *
zc_layer_buffer (void *user, int layer, int n_q, int n_k)
{
  ZeroCopy *z = user;
  return z->block + (size_t) layer * z->H * n_q * n_k;
}

static bool
zc_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  ZeroCopy *z = user;
  if (probs != z->block + ((size_t) layer * z->H + head) * n_q * n_k)
    z->bad++;
  return true;
}

static void
test_tiny_zero_copy (void)
{
  ScModel *m = sc_test_tiny_model ();
  const int32_t ids[] = { 264, 72, 101, 108, 108, 111, 257, 44 };
  const int n = G_N_ELEMENTS (ids);
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScError err = { 0 };
  g_autofree float *a = g_new (float, 2 * 4 * n * n), *zc = g_new0 (float, 2 * 4 * n * n);
  Collect c = { 0, a, 4, n };
  ZeroCopy z = { zc, 4, n, 0 };
  ScObserver o1 = { NULL, collect_observe, &c }, o2 = { NULL, zc_observe, &z, zc_layer_buffer };
  ScForwardOptions f1 = { .observer = &o1 }, f2 = { .observer = &o2 };

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_forward (s, ids, n, &f1, NULL, &err), ==, SC_OK);
  g_assert_cmpint (sc_forward (s, ids, n, &f2, NULL, &err), ==, SC_OK);
  g_assert_cmpint (z.bad, ==, 0);
  g_assert_cmpint (memcmp (a, zc, sizeof (float) * 2 * 4 * n * n), ==, 0);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

/* Checks a (10, 30) block: 10 new queries at positions 20..29 over 30 keys. */
static bool
rect_observe (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  Collect *c = user;
  int i, j;

  g_assert_cmpint (n_q, ==, 10);
  g_assert_cmpint (n_k, ==, 30);
  for (i = 0; i < n_q; i++)
    {
      double sum = 0;
      for (j = 0; j < n_k; j++)
        {
          if (j > 20 + i)
            g_assert_cmpfloat (probs[i * n_k + j], ==, 0.0f);
          sum += probs[i * n_k + j];
        }
      g_assert_cmpfloat (fabs (sum - 1.0), <, 1e-5);
    }
  c->calls++;
  return true;
}

/* Incremental decoding with the KV cache matches full runs, across buffer growth. */
static void
test_tiny_kv_cache (void)
{
  ScModel *m = sc_test_tiny_model ();
  const int V = (int) sc_model_info (m)->n_vocab;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *inc = NULL, *full = NULL;
  ScError err = { 0 };
  int32_t ids[60];
  g_autofree float *a = g_new (float, 60 * V), *c = g_new (float, 60 * V);
  Collect col = { 0, NULL, 4, 0 };
  double worst = 0;
  int n, i;

  for (i = 0; i < 60; i++)
    ids[i] = (i * 37 + 11) % 266;
  g_assert_cmpint (sc_session_new (m, b, &inc, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_new (m, b, &full, &err), ==, SC_OK);
  {
    ScForwardOptions first = { .keep_kv = true };
    g_assert_cmpint (sc_forward (inc, ids, 3, &first, a, &err), ==, SC_OK);
  }
  for (n = 4; n <= 60; n++)
    {
      ScForwardOptions step = { .keep_kv = true, .n_past = n - 1 };
      g_assert_cmpint (sc_forward (inc, ids, n, &step, a, &err), ==, SC_OK);
      g_assert_cmpint (sc_forward (full, ids, n, NULL, c, &err), ==, SC_OK);
      for (i = 0; i < V; i++)
        worst = fmax (worst, fabs (a[i] - c[i]));
    }
  g_test_message ("incremental vs full, 57 steps: max |dlogit| %.3g", worst);
  g_assert_cmpfloat (worst, <, 1e-4);

  /* several new rows at once: all logits, and (n_q, n_k) matrices for the observer */
  {
    ScObserver o = { NULL, rect_observe, &col };
    ScForwardOptions keep = { .keep_kv = true };
    ScForwardOptions more = { .keep_kv = true, .n_past = 20, .all_logits = true,
                              .observer = &o };
    ScForwardOptions all = { .all_logits = true };
    double d = 0;
    g_assert_cmpint (sc_forward (inc, ids, 20, &keep, a, &err), ==, SC_OK);
    g_assert_cmpint (sc_forward (full, ids, 30, &all, c, &err), ==, SC_OK);
    g_assert_cmpint (sc_forward (inc, ids, 30, &more, a, &err), ==, SC_OK);
    g_assert_cmpint (col.calls, ==, 8);
    for (i = 0; i < 10 * V; i++)
      d = fmax (d, fabs (a[i] - c[(size_t) 20 * V + i]));
    g_assert_cmpfloat (d, <, 1e-4);
  }
  /* a cache for other tokens is refused */
  {
    ScForwardOptions bad = { .n_past = 5 };
    int32_t other[10];
    memcpy (other, ids, sizeof other);
    other[2] ^= 1;
    g_assert_cmpint (sc_forward (inc, other, 10, &bad, a, &err), ==, SC_ERR_INVALID_ARG);
    g_assert_nonnull (strstr (err.message, "KV cache"));
  }
  sc_session_free (inc);
  sc_session_free (full);
  sc_backend_free (b);
  sc_model_free (m);
}

/* sc_expf, the fast path's exp, against libm over the range softmax uses and beyond. */
static void
test_expf (void)
{
  double worst = 0.0;
  uint32_t bits;

  for (bits = 0; bits < 0xffffffffu - 97; bits += 97)
    {
      float x, want, got;
      memcpy (&x, &bits, sizeof x);
      if (!(x >= -87.0f && x <= 88.0f))
        continue;
      want = expf (x);
      got = sc_expf (x);
      if (want > 1e-37f)
        {
          /* error in units of the last place of the correct result */
          double ulp = nextafterf (want, INFINITY) - want;
          worst = fmax (worst, fabs ((double) got - want) / ulp);
        }
    }
  g_test_message ("sc_expf: worst error %.2f ulp", worst);
  g_assert_cmpfloat (worst, <=, 2.0);
  g_assert_cmpfloat (sc_expf (0.0f), ==, 1.0f);
  g_assert_cmpfloat (sc_expf (-1000.0f), <, 1e-37f);
  g_assert_cmpfloat (sc_expf (-INFINITY), <, 1e-37f);
}

/* The attention kernel's vector exp (sc_cpu_expf_lanes) is sc_expf bit for bit: every 61st
 * float pattern (both signs, the clamps, infinities, NaNs, subnormals), in blocks that fill
 * the vector lanes and leave a tail for the scalar loop. */
static void
test_expf_lanes (void)
{
  enum { N = 4099 };
  static float x[N], got[N];
  uint64_t bits = 0;
  size_t checked = 0;

  while (bits <= 0xffffffffu)
    {
      size_t n = 0;
      for (; n < N && bits <= 0xffffffffu; n++, bits += 61)
        {
          const uint32_t u = (uint32_t) bits;
          memcpy (&x[n], &u, sizeof u);
        }
      sc_cpu_expf_lanes (x, got, n);
      for (size_t i = 0; i < n; i++)
        {
          const float want = sc_expf (x[i]);
          if (memcmp (&want, &got[i], sizeof want) != 0 && !(isnan (want) && isnan (got[i])))
            g_error ("exp of %a: the lanes give %a, sc_expf %a", (double) x[i], (double) got[i],
                     (double) want);
        }
      checked += n;
    }
  g_test_message ("%zu inputs, every lane the same bits as sc_expf", checked);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/attention/seeds", test_seeds);
  g_test_add_func ("/math/expf", test_expf);
  g_test_add_func ("/math/expf-lanes", test_expf_lanes);
  g_test_add_func ("/attention/fast-vs-reference", test_fast_vs_reference);
  g_test_add_func ("/ops/matmul-rope-rmsnorm", test_matmul_rope_norm);
  g_test_add_func ("/forward/tiny-cpu-vs-reference", test_tiny_forward);
  g_test_add_func ("/forward/tiny-interventions", test_tiny_interventions);
  g_test_add_func ("/forward/tiny-kv-cache", test_tiny_kv_cache);
  g_test_add_func ("/forward/tiny-zero-copy-capture", test_tiny_zero_copy);
  return g_test_run ();
}
