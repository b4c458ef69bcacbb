/* test-interventions.c — mean-ablation and attention edits (ScIntervention), on the tiny
 * llama of sc-test-gguf (2 layers, 4 query heads over 2 KV heads, head_dim 4) and, where
 * it is fetched, the default model.
 *
 * 1. Zero-ablating every head of a layer (head_scale = 0, or a zero mean for each head)
 *    equals a second copy of the model whose W_O of that layer is zeroed by hand.
 * 2. PERMUTE: rows with one allowed key are unchanged bit for bit; reproducible for a
 *    seed, different for another; each row a permutation of the original row.
 * 3. UNIFORM rows are exactly 1/(i+1) (1/m with a masked key), as the observer sees them.
 * 4. ZERO_TOP: the top key is 0, the rest renormalised, the row sums to 1.
 * 5. Mean-ablation with the head's own output at position 0 as the mean keeps position 0.
 * 6. Prefix reuse with each new intervention equals the full recompute bit for bit.
 * 7. Invalid interventions are refused, naming the field.
 * 8. The default model: UNIFORM and prefix reuse on SmolLM2 (skipped when not fetched).
 */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend/sc-backend-impl.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "tests/engine/sc-test-gguf.h"

/* A fresh copy of the tiny model (each has its own weight arena, so a test may change one
 * copy's weights). */

static const int32_t ids[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10, 200, 201 };
#define N ((int) G_N_ELEMENTS (ids))

/* Every head's probabilities of a run, (L, H, n, n). */
typedef struct {
  float *store;
  int H, n;
} Collect;

static bool
collect (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  Collect *c = user;

  g_assert_cmpint (n_q, ==, c->n);
  g_assert_cmpint (n_k, ==, c->n);
  memcpy (c->store + ((size_t) layer * c->H + head) * c->n * c->n, probs,
          sizeof (float) * n_q * n_k);
  return true;
}

/* A session on the fast CPU backend, with what the tests compare. */
typedef struct {
  ScModel *m;
  const ScModelInfo *in;
  ScBackend *b;
  ScSession *s;
  int L, H, d, V;
} Fixture;

static void
fixture_init (Fixture *f, ScModel *m)
{
  ScError err = { 0 };

  f->m = m;
  f->in = sc_model_info (m);
  f->b = sc_backend_cpu_new (2, NULL);
  g_assert_cmpint (sc_session_new (m, f->b, &f->s, &err), ==, SC_OK);
  f->L = (int) f->in->n_layers;
  f->H = (int) f->in->n_heads;
  f->d = (int) f->in->head_dim;
  f->V = (int) f->in->n_vocab;
}

static void
fixture_clear (Fixture *f)
{
  sc_session_free (f->s);
  sc_backend_free (f->b);
  sc_model_free (f->m);
}

/* Runs @n ids with @iv: all logits (n, V) into @logits, probabilities (L, H, n, n) into
 * @probs when not NULL. */
static void
run (Fixture *f, const int32_t *tok, int n, const ScIntervention *iv, float *logits,
     float *probs)
{
  Collect c = { probs, f->H, n };
  ScObserver o = { NULL, collect, &c, NULL };
  ScForwardOptions opt = { .intervention = iv, .all_logits = true,
                           .observer = probs != NULL ? &o : NULL };
  ScError err = { 0 };

  if (sc_forward (f->s, tok, n, &opt, logits, &err) != SC_OK)
    g_error ("sc_forward: %s", err.message);
}

static const float *
head_probs (const Fixture *f, const float *probs, int layer, int head, int n)
{
  return probs + ((size_t) layer * f->H + head) * n * n;
}

/* Equal as floats (-0 == +0), element by element. */
static void
assert_equal (const float *a, const float *b, size_t n, const char *what)
{
  size_t i;

  for (i = 0; i < n; i++)
    if (a[i] != b[i])
      g_error ("%s: element %zu: %.9g != %.9g", what, i, a[i], b[i]);
}

/* 1. The reference is built by hand, outside the intervention path: a second copy of the
 * model whose layer-l W_O is zeroed, so x += o W_O^T adds exact zeros whatever o is. The
 * interventions remove the same contribution another way (o = 0 before W_O: head_scale 0
 * in the attention op, or a zero mean in edit_heads), and x + 0 is exact, so the logits
 * agree exactly, not to a tolerance. */
static void
test_zero_layer (void)
{
  int l;

  for (l = 0; l < 2; l++)
    {
      Fixture f, z;
      g_autofree float *want = NULL, *got = NULL, *plain = NULL, *scale = NULL, *mean = NULL;
      g_autofree uint8_t *on = NULL;
      ScIntervention by_scale, by_mean;
      size_t nl;
      int h;

      ScModel *zm = sc_test_tiny_model ();

      fixture_init (&f, sc_test_tiny_model ());
      /* the zeroed copy: its float view made and edited before its session, which binds
       * the float matrices only when they exist (else the file's blocks) */
      memset (sc_model_weights (zm)->layers[l].wo, 0,
              sizeof (float) * f.in->n_embd * f.H * f.d);
      fixture_init (&z, zm);
      nl = (size_t) N * f.V;
      want = g_new (float, nl);
      got = g_new (float, nl);
      plain = g_new (float, nl);
      run (&z, ids, N, NULL, want, NULL);
      run (&f, ids, N, NULL, plain, NULL);
      g_assert_cmpint (memcmp (plain, want, sizeof (float) * nl), !=, 0);

      scale = g_new (float, f.L * f.H);
      for (h = 0; h < f.L * f.H; h++)
        scale[h] = h / f.H == l ? 0.0f : 1.0f;
      by_scale = (ScIntervention) { .head_scale = scale };
      run (&f, ids, N, &by_scale, got, NULL);
      assert_equal (got, want, nl, "head_scale 0 vs zeroed W_O");

      mean = g_new0 (float, (size_t) f.L * f.H * f.d);
      on = g_new0 (uint8_t, f.L * f.H);
      for (h = 0; h < f.H; h++)
        on[l * f.H + h] = 1;
      by_mean = (ScIntervention) { .head_mean = mean, .head_mean_on = on };
      run (&f, ids, N, &by_mean, got, NULL);
      assert_equal (got, want, nl, "zero mean vs zeroed W_O");
      fixture_clear (&f);
      fixture_clear (&z);
    }
}

static int
cmp_float (const void *a, const void *b)
{
  float x = *(const float *) a, y = *(const float *) b;
  return x < y ? -1 : x > y;
}

/* 2. PERMUTE. */
static void
test_permute (void)
{
  Fixture f;
  ScAttnEdit all[2 * 4];
  g_autofree float *plain = NULL, *got = NULL, *again = NULL, *pp = NULL, *pe = NULL,
                   *pe2 = NULL;
  uint8_t mask[N] = { 0 };
  ScIntervention iv;
  size_t nl, np;
  int i, j, h, changed_rows = 0;

  fixture_init (&f, sc_test_tiny_model ());
  nl = (size_t) N * f.V;
  np = (size_t) f.L * f.H * N * N;
  plain = g_new (float, nl);
  got = g_new (float, nl);
  again = g_new (float, nl);
  pp = g_new (float, np);
  pe = g_new (float, np);
  pe2 = g_new (float, np);
  for (i = 0; i < f.L * f.H; i++)
    all[i] = (ScAttnEdit) { i / f.H, i % f.H, SC_ATTN_EDIT_PERMUTE, 1234 + i };

  /* a one-token run: every row has one key, so permuting every head changes nothing */
  iv = (ScIntervention) { .edits = all, .n_edits = f.L * f.H };
  run (&f, ids, 1, NULL, plain, NULL);
  run (&f, ids, 1, &iv, got, NULL);
  g_assert_cmpint (memcmp (plain, got, sizeof (float) * f.V), ==, 0);

  /* keys 1.. masked: every row of every head sees key 0 alone; permuting changes nothing */
  memset (mask + 1, 1, N - 1);
  iv = (ScIntervention) { .token_mask = mask };
  run (&f, ids, N, &iv, plain, pp);
  iv.edits = all;
  iv.n_edits = f.L * f.H;
  run (&f, ids, N, &iv, got, pe);
  g_assert_cmpint (memcmp (plain, got, sizeof (float) * nl), ==, 0);
  g_assert_cmpint (memcmp (pp, pe, sizeof (float) * np), ==, 0);

  /* reproducible for a seed, another seed differs */
  run (&f, ids, N, NULL, plain, pp);
  iv = (ScIntervention) { .edits = all + 1, .n_edits = 1 }; /* layer 0 head 1, seed 1235 */
  run (&f, ids, N, &iv, got, pe);
  run (&f, ids, N, &iv, again, pe2);
  g_assert_cmpint (memcmp (got, again, sizeof (float) * nl), ==, 0);
  g_assert_cmpint (memcmp (pe, pe2, sizeof (float) * np), ==, 0);
  g_assert_cmpint (memcmp (got, plain, sizeof (float) * nl), !=, 0);
  {
    ScAttnEdit other = all[1];
    ScIntervention iv2 = { .edits = &other, .n_edits = 1 };
    other.seed = 99;
    run (&f, ids, N, &iv2, again, pe2);
    g_assert_cmpint (memcmp (head_probs (&f, pe, 0, 1, N), head_probs (&f, pe2, 0, 1, N),
                             sizeof (float) * N * N), !=, 0);
  }

  /* each edited row is a permutation of the original row over keys 0..i, zeros beyond;
   * the layer's other heads are untouched */
  for (h = 0; h < f.H; h++)
    if (h != 1)
      g_assert_cmpint (memcmp (head_probs (&f, pp, 0, h, N), head_probs (&f, pe, 0, h, N),
                               sizeof (float) * N * N), ==, 0);
  for (i = 0; i < N; i++)
    {
      float a[N], b[N];
      const float *ra = head_probs (&f, pp, 0, 1, N) + i * N,
                  *rb = head_probs (&f, pe, 0, 1, N) + i * N;
      memcpy (a, ra, sizeof (float) * (i + 1));
      memcpy (b, rb, sizeof (float) * (i + 1));
      if (memcmp (a, b, sizeof (float) * (i + 1)) != 0)
        changed_rows++;
      qsort (a, i + 1, sizeof (float), cmp_float);
      qsort (b, i + 1, sizeof (float), cmp_float);
      g_assert_cmpint (memcmp (a, b, sizeof (float) * (i + 1)), ==, 0);
      for (j = i + 1; j < N; j++)
        g_assert_cmpfloat (rb[j], ==, 0.0f);
    }
  g_test_message ("PERMUTE changed %d of %d rows", changed_rows, N);
  g_assert_cmpint (changed_rows, >=, N / 2);
  fixture_clear (&f);
}

/* 3. UNIFORM, as the observer sees it: exactly 1/(i+1); with key 3 masked, 1/m over the
 * i + 1 - 1 remaining keys of rows i >= 3, and exactly 0 on key 3. */
static void
test_uniform (void)
{
  Fixture f;
  ScAttnEdit e = { 1, 2, SC_ATTN_EDIT_UNIFORM, 0 };
  uint8_t mask[N] = { 0 };
  ScIntervention iv = { .edits = &e, .n_edits = 1 };
  g_autofree float *lg = NULL, *p = NULL;
  const float *row;
  int i, j;

  fixture_init (&f, sc_test_tiny_model ());
  lg = g_new (float, (size_t) N * f.V);
  p = g_new (float, (size_t) f.L * f.H * N * N);
  run (&f, ids, N, &iv, lg, p);
  for (i = 0; i < N; i++)
    for (j = 0, row = head_probs (&f, p, 1, 2, N) + i * N; j < N; j++)
      g_assert_cmpfloat (row[j], ==, j <= i ? 1.0f / (float) (i + 1) : 0.0f);

  mask[3] = 1;
  iv.token_mask = mask;
  run (&f, ids, N, &iv, lg, p);
  for (i = 0; i < N; i++)
    {
      const int m = i < 3 ? i + 1 : i;
      for (j = 0, row = head_probs (&f, p, 1, 2, N) + i * N; j < N; j++)
        g_assert_cmpfloat (row[j], ==, j <= i && j != 3 ? 1.0f / (float) m : 0.0f);
    }
  fixture_clear (&f);
}

/* 4. ZERO_TOP on layer 0 head 3 (its input is the same as the plain run's, so the plain
 * probabilities are the row before the edit). */
static void
test_zero_top (void)
{
  Fixture f;
  ScAttnEdit e = { 0, 3, SC_ATTN_EDIT_ZERO_TOP, 0 };
  ScIntervention iv = { .edits = &e, .n_edits = 1 };
  g_autofree float *lg = NULL, *pp = NULL, *pe = NULL;
  int i, j;

  fixture_init (&f, sc_test_tiny_model ());
  lg = g_new (float, (size_t) N * f.V);
  pp = g_new (float, (size_t) f.L * f.H * N * N);
  pe = g_new (float, (size_t) f.L * f.H * N * N);
  run (&f, ids, N, NULL, lg, pp);
  run (&f, ids, N, &iv, lg, pe);
  /* row 0 has one key: it stays */
  g_assert_cmpfloat (head_probs (&f, pe, 0, 3, N)[0], ==, 1.0f);
  for (i = 1; i < N; i++)
    {
      const float *ra = head_probs (&f, pp, 0, 3, N) + i * N,
                  *rb = head_probs (&f, pe, 0, 3, N) + i * N;
      double sum = 0;
      int top = 0;
      for (j = 1; j <= i; j++)
        if (ra[j] > ra[top])
          top = j;
      g_assert_cmpfloat (rb[top], ==, 0.0f);
      for (j = 0; j < N; j++)
        {
          sum += rb[j];
          if (j > i)
            g_assert_cmpfloat (rb[j], ==, 0.0f);
          else if (j != top)
            g_assert_cmpfloat (fabs (rb[j] - ra[j] / (1.0 - ra[top])), <=,
                               1e-6 + 1e-5 * ra[j] / (1.0 - ra[top]));
        }
      g_assert_cmpfloat (fabs (sum - 1.0), <=, 1e-5);
    }
  /* what follows sees the edit */
  g_assert_cmpint (memcmp (head_probs (&f, pp, 1, 0, N), head_probs (&f, pe, 1, 0, N),
                           sizeof (float) * N * N), !=, 0);
  fixture_clear (&f);
}

/* 5. Position 0 attends to itself alone in every layer, so head (0, 1)'s output there is
 * its value vector v_0 (KV head 0), computed here by hand in double from the weights:
 *   h = x / sqrt(mean(x^2) + eps) * attn_norm,  v = W_v h  (rows 0..d of KV head 0).
 * With that as the head's mean, position 0's logits are the plain run's (to the rounding
 * of a float mean against the op's product); later positions, whose head output was not
 * v_0, change. */
static void
test_mean_self (void)
{
  Fixture f;
  const ScWeights *w;
  const int E = 16;
  double x[16], ss = 0.0;
  g_autofree float *plain = NULL, *got = NULL, *mean = NULL;
  g_autofree uint8_t *on = NULL;
  ScIntervention iv;
  double far = 0.0;
  int i, t;

  fixture_init (&f, sc_test_tiny_model ());
  g_assert_cmpint ((int) f.in->n_embd, ==, E);
  w = sc_model_weights (f.m);
  for (i = 0; i < E; i++)
    {
      x[i] = w->token_embd[(size_t) ids[0] * E + i];
      ss += x[i] * x[i];
    }
  for (i = 0; i < E; i++)
    x[i] = x[i] / sqrt (ss / E + f.in->norm_eps) * w->layers[0].attn_norm[i];
  mean = g_new0 (float, (size_t) f.L * f.H * f.d);
  on = g_new0 (uint8_t, f.L * f.H);
  on[1] = 1; /* layer 0 head 1 uses KV head 1 / (H / H_kv) = 0 */
  for (t = 0; t < f.d; t++)
    {
      double acc = 0.0;
      for (i = 0; i < E; i++)
        acc += (double) w->layers[0].wv[(size_t) t * E + i] * x[i];
      mean[1 * f.d + t] = (float) acc;
    }
  plain = g_new (float, (size_t) N * f.V);
  got = g_new (float, (size_t) N * f.V);
  run (&f, ids, N, NULL, plain, NULL);
  iv = (ScIntervention) { .head_mean = mean, .head_mean_on = on };
  run (&f, ids, N, &iv, got, NULL);
  for (i = 0; i < f.V; i++)
    g_assert_cmpfloat (fabs (got[i] - plain[i]), <=, 1e-5 + 1e-5 * fabs (plain[i]));
  for (i = f.V; i < N * f.V; i++)
    far = fmax (far, fabs (got[i] - plain[i]));
  g_test_message ("mean-ablation: max |dlogit| past position 0: %.3g", far);
  g_assert_cmpfloat (far, >, 1e-3);
  fixture_clear (&f);
}

/* 6. Each new intervention on layer 1: sc_intervention_first_layer says 1, and a run from
 * the residuals kept before layer 1 equals the full run bit for bit. */
static void
test_prefix_reuse (void)
{
  Fixture f;
  g_autofree float *kept = NULL, *full = NULL, *got = NULL, *mean = NULL;
  g_autofree uint8_t *on = NULL;
  ScAttnEdit edits[3] = { { 1, 3, SC_ATTN_EDIT_PERMUTE, 5 },
                          { 1, 0, SC_ATTN_EDIT_UNIFORM, 0 },
                          { 1, 1, SC_ATTN_EDIT_ZERO_TOP, 0 } };
  ScAttnEdit none = { 0, 0, SC_ATTN_EDIT_NONE, 0 };
  ScIntervention ivs[5];
  ScForwardOptions keep = { .all_logits = true, .keep_residuals = true };
  ScError err = { 0 };
  size_t nl;
  int k;

  fixture_init (&f, sc_test_tiny_model ());
  nl = (size_t) N * f.V;
  kept = g_new (float, nl);
  full = g_new (float, nl);
  got = g_new (float, nl);
  mean = g_new (float, (size_t) f.L * f.H * f.d);
  on = g_new0 (uint8_t, f.L * f.H);
  for (k = 0; k < f.L * f.H * f.d; k++)
    mean[k] = 0.1f * (float) (k % 7) - 0.3f;
  on[1 * f.H + 2] = 1;
  ivs[0] = (ScIntervention) { .head_mean = mean, .head_mean_on = on };
  for (k = 0; k < 3; k++)
    ivs[1 + k] = (ScIntervention) { .edits = &edits[k], .n_edits = 1 };
  ivs[4] = (ScIntervention) { .head_mean = mean, .head_mean_on = on, .edits = edits,
                              .n_edits = 3 };
  g_assert_cmpint (sc_forward (f.s, ids, N, &keep, kept, &err), ==, SC_OK);
  for (k = 0; k < 5; k++)
    {
      ScForwardOptions opt = { .intervention = &ivs[k], .all_logits = true };
      g_assert_cmpint (sc_intervention_first_layer (&ivs[k], f.in), ==, 1);
      g_assert_cmpint (sc_forward (f.s, ids, N, &opt, full, &err), ==, SC_OK);
      g_assert_cmpint (memcmp (full, kept, sizeof (float) * nl), !=, 0);
      opt.start_layer = 1;
      g_assert_cmpint (sc_forward (f.s, ids, N, &opt, got, &err), ==, SC_OK);
      g_assert_cmpint (memcmp (full, got, sizeof (float) * nl), ==, 0);
    }
  /* an edit on layer 0 forbids starting at 1; an SC_ATTN_EDIT_NONE entry changes nothing */
  {
    ScAttnEdit low = { 0, 2, SC_ATTN_EDIT_UNIFORM, 0 };
    ScIntervention iv = { .edits = &low, .n_edits = 1 };
    ScForwardOptions opt = { .intervention = &iv, .all_logits = true, .start_layer = 1 };
    g_assert_cmpint (sc_intervention_first_layer (&iv, f.in), ==, 0);
    g_assert_cmpint (sc_forward (f.s, ids, N, &opt, got, &err), ==, SC_ERR_INVALID_ARG);
    g_assert_nonnull (strstr (err.message, "changes layer 0"));
    iv.edits = &none;
    g_assert_cmpint (sc_intervention_first_layer (&iv, f.in), ==, f.L);
    opt.start_layer = 0;
    g_assert_cmpint (sc_forward (f.s, ids, N, &opt, got, &err), ==, SC_OK);
    g_assert_cmpint (memcmp (kept, got, sizeof (float) * nl), ==, 0);
  }
  fixture_clear (&f);
}

/* 7. Every field is checked against the model, and the message names it. */
static void
test_invalid (void)
{
  Fixture f;
  float scale[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
  float mean[2 * 4 * 4] = { 0 };
  uint8_t on[8] = { 0, 0, 0, 1, 0, 0, 0, 0 };
  ScAttnEdit layer = { 2, 0, SC_ATTN_EDIT_UNIFORM, 0 }, neg_layer = { -1, 0, SC_ATTN_EDIT_UNIFORM, 0 },
             head = { 0, 4, SC_ATTN_EDIT_PERMUTE, 1 }, kind = { 0, 0, (ScAttnEditKind) 9, 0 },
             dup[2] = { { 1, 2, SC_ATTN_EDIT_UNIFORM, 0 }, { 1, 2, SC_ATTN_EDIT_ZERO_TOP, 0 } };
  struct {
    ScIntervention iv;
    const char *says;
  } cases[] = {
    { { .edits = &layer, .n_edits = 1 }, "edits[0].layer 2" },
    { { .edits = &neg_layer, .n_edits = 1 }, "edits[0].layer -1" },
    { { .edits = &head, .n_edits = 1 }, "edits[0].head 4" },
    { { .edits = &kind, .n_edits = 1 }, "edits[0].kind 9" },
    { { .edits = dup, .n_edits = 2 }, "edits[1] edits layer 1 head 2 again" },
    { { .edits = &layer, .n_edits = -1 }, "n_edits -1" },
    { { .edits = NULL, .n_edits = 2 }, "edits is NULL" },
    { { .head_mean_on = on }, "head_mean is NULL" },
    { { .head_mean = mean }, "head_mean_on is NULL" },
    { { .head_mean = mean, .head_mean_on = on }, "head_mean of layer 0 head 3" },
    { { .head_scale = scale }, "head_scale[5]" },
  };
  g_autofree float *lg = NULL;
  gsize k;

  fixture_init (&f, sc_test_tiny_model ());
  lg = g_new (float, (size_t) N * f.V);
  mean[3 * 4 + 2] = NAN; /* only the mean-ablated head's mean is read */
  scale[5] = INFINITY;
  for (k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      ScForwardOptions opt = { .intervention = &cases[k].iv, .all_logits = true };
      ScError err = { 0 };
      g_assert_cmpint (sc_forward (f.s, ids, N, &opt, lg, &err), ==, SC_ERR_INVALID_ARG);
      if (strstr (err.message, cases[k].says) == NULL)
        g_error ("case %" G_GSIZE_FORMAT ": '%s' does not say '%s'", k, err.message,
                 cases[k].says);
    }
  /* a NaN in a head that is not mean-ablated is never read */
  {
    ScIntervention ok = { .head_mean = mean, .head_mean_on = on };
    ScForwardOptions opt = { .intervention = &ok, .all_logits = true };
    ScError err = { 0 };
    mean[3 * 4 + 2] = 0.0f;
    mean[0] = NAN;
    g_assert_cmpint (sc_forward (f.s, ids, N, &opt, lg, &err), ==, SC_OK);
  }
  fixture_clear (&f);
}

/* 8. The default model: UNIFORM is exact there too, and prefix reuse with a PERMUTE and a
 * mean-ablated head equals the full run bit for bit. */
static void
test_default_model (void)
{
  const char *env = g_getenv ("SACCADE_MODEL");
  g_autofree char *path = env != NULL ? g_strdup (env)
                                      : g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"),
                                                          "data", "models",
                                                          "SmolLM2-135M-Instruct.Q4_1.gguf",
                                                          NULL);
  const int32_t tok[] = { 1, 504, 3458, 282, 4649, 314, 1345, 30 };
  const int n = G_N_ELEMENTS (tok);
  ScModel *m = NULL;
  ScError err = { 0 };
  Fixture f;
  g_autofree float *kept = NULL, *full = NULL, *got = NULL, *p = NULL, *mean = NULL;
  g_autofree uint8_t *on = NULL;
  ScAttnEdit edits[2] = { { 5, 3, SC_ATTN_EDIT_UNIFORM, 0 }, { 6, 1, SC_ATTN_EDIT_PERMUTE, 3 } };
  ScIntervention iv;
  ScForwardOptions keep = { .all_logits = true, .keep_residuals = true };
  size_t nl;
  int i, j;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("the default model is not fetched (data/fetch-model.sh)");
      return;
    }
  if (sc_model_open (path, 2, &m, &err) != SC_OK)
    g_error ("%s", err.message);
  fixture_init (&f, m);
  nl = (size_t) n * f.V;
  kept = g_new (float, nl);
  full = g_new (float, nl);
  got = g_new (float, nl);
  p = g_new (float, (size_t) f.L * f.H * n * n);
  mean = g_new0 (float, (size_t) f.L * f.H * f.d);
  on = g_new0 (uint8_t, f.L * f.H);
  on[5 * f.H + 7] = 1;
  iv = (ScIntervention) { .head_mean = mean, .head_mean_on = on, .edits = edits, .n_edits = 2 };
  g_assert_cmpint (sc_intervention_first_layer (&iv, f.in), ==, 5);
  g_assert_cmpint (sc_forward (f.s, tok, n, &keep, kept, &err), ==, SC_OK);
  run (&f, tok, n, &iv, full, p);
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      g_assert_cmpfloat (head_probs (&f, p, 5, 3, n)[i * n + j], ==,
                         j <= i ? 1.0f / (float) (i + 1) : 0.0f);
  {
    ScForwardOptions opt = { .intervention = &iv, .all_logits = true, .start_layer = 5 };
    g_assert_cmpint (sc_forward (f.s, tok, n, &opt, got, &err), ==, SC_OK);
    g_assert_cmpint (memcmp (full, got, sizeof (float) * nl), ==, 0);
    g_assert_cmpint (memcmp (full, kept, sizeof (float) * nl), !=, 0);
  }
  fixture_clear (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/interventions/zero-layer", test_zero_layer);
  g_test_add_func ("/interventions/permute", test_permute);
  g_test_add_func ("/interventions/uniform", test_uniform);
  g_test_add_func ("/interventions/zero-top", test_zero_top);
  g_test_add_func ("/interventions/mean-self", test_mean_self);
  g_test_add_func ("/interventions/prefix-reuse", test_prefix_reuse);
  g_test_add_func ("/interventions/invalid", test_invalid);
  g_test_add_func ("/interventions/default-model", test_default_model);
  return g_test_run ();
}
