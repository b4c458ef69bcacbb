/* test-patch-study.c — activation patching (engine/study/sc-patch-study.h and the patch
 * fields of ScIntervention), on the tiny llama of sc-test-gguf (2 layers × 4 heads) and on
 * the two-layer induction model whose circuit is known by construction.
 *
 * 1. The intervention: the residual entering layer l patched at every position from a
 *    source run gives the source run's logits bit for bit; a run's own head outputs patched
 *    into it change nothing; bad patch fields are refused naming the field. Queries, keys,
 *    values (recomputed in double) and patterns (SC_ATTN_EDIT_REPLACE): a run's own change
 *    nothing (patterns bit for bit, q/k/v to float rounding); keys and values reach only
 *    the patched query head, not its KV-group sibling; a replaced pattern multiplies the
 *    base run's values exactly.
 * 2. Every cell of the study (every ScPatchWhat; denoise and noise) equals, bit
 *    for bit, a full run in a fresh session with that patch (prefix reuse changes nothing);
 *    the metric and its normalisation are as defined.
 * 3. By construction: on "…A B … A" against "…A C … A" (target B, contrast C) the only head
 *    that restores the clean prediction is the induction head L1.H0 (effect 1 to 1e-4); every
 *    other head's effect is below 0.01; the residual restores it exactly where the
 *    construction says the information sits (the B/C position, before each layer); of
 *    L1.H0's parts only its values restore it (its queries, keys and pattern are the same
 *    in both runs).
 * 4. Stored and read back through the kind: the same numbers; a tampered cell refused.
 * 5. Bad input: different lengths, the contrast equal to the target, cancel.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "engine/analysis/sc-effect.h"
#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/format/sc-gguf.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store.h"
#include "engine/store/sc-store-study.h"
#include "engine/study/sc-patch-study.h"
#include "engine/study/sc-study.h"
#include "tests/engine/sc-test-gguf.h"

/* Two sequences of the tiny model's byte vocabulary that differ at positions 3 and 6. */
static const int32_t clean_ids[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10 };
static const int32_t corrupt_ids[] = { 264, 72, 101, 120, 108, 111, 99, 44, 33, 10 };
#define N ((int) G_N_ELEMENTS (clean_ids))

static void
assert_same_double (double a, double b)
{
  g_assert_cmpmem (&a, sizeof a, &b, sizeof b);
}

typedef struct {
  float *heads; /* (L, H, n, d) */
  int H, d, n;
} Heads;

static bool
take (void *user, int layer, const float *o, int n_q, int width)
{
  Heads *s = user;

  for (int p = 0; p < n_q; p++)
    for (int h = 0; h < s->H; h++)
      memcpy (s->heads + (((size_t) layer * s->H + h) * s->n + p) * s->d,
              o + (size_t) p * width + (size_t) h * s->d, (size_t) s->d * sizeof (float));
  return true;
}

/* A run of @ids: its (n, V) logits (the last row only, (V), without @all: computed alone,
 * as the study does), and its head outputs (L, H, n, d) and residuals (L, n, E) when asked. */
static void
run_source (ScSession *s, const ScModelInfo *in, const int32_t *ids, int n, bool all,
            float *logits, float *heads, float *resid)
{
  Heads h = { heads, (int) in->n_heads, (int) in->head_dim, n };
  ScObserver obs = { .attn_output = take, .user = &h };
  ScForwardOptions opt = { .all_logits = all, .keep_residuals = true,
                           .observer = heads != NULL ? &obs : NULL };
  ScError err = { 0 };

  g_assert_cmpint (sc_forward (s, ids, n, &opt, logits, &err), ==, SC_OK);
  for (int l = 0; resid != NULL && l < (int) in->n_layers; l++)
    for (int q = 0; q < n; q++)
      g_assert_cmpint (sc_session_residual (s, l, q, resid + ((size_t) l * n + q) * in->n_embd,
                                            &err), ==, SC_OK);
}

/* A run's queries, keys, values and head outputs per query head (L, H, n, d) each (keys
 * and values of head h: its KV head's) and its patterns (L, H, n, n). */
typedef struct {
  float *q, *k, *v, *P, *o;
  int H, Hkv, d, n;
} Qkv;

static bool
take_o (void *user, int layer, const float *o, int n_q, int width)
{
  Qkv *s = user;
  Heads h = { s->o, s->H, s->d, s->n };

  return take (&h, layer, o, n_q, width);
}

static bool
take_qkv (void *user, int layer, const float *q, const float *k, const float *v, int n_q,
          int n_k, int q_width, int kv_width)
{
  Qkv *s = user;

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

static bool
take_p (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  Qkv *s = user;

  memcpy (s->P + ((size_t) layer * s->H + head) * s->n * s->n, probs,
          (size_t) n_q * n_k * sizeof (float));
  return true;
}

static Qkv
qkv_new (const ScModelInfo *in, int n)
{
  const gsize L = in->n_layers, H = in->n_heads, d = in->head_dim;
  Qkv x = { g_new (float, L * H * n * d), g_new (float, L * H * n * d),
            g_new (float, L * H * n * d), g_new (float, L * H * n * n),
            g_new (float, L * H * n * d), (int) H, (int) in->n_kv_heads, (int) d, n };
  return x;
}

static void
qkv_clear (Qkv *x)
{
  g_free (x->q);
  g_free (x->k);
  g_free (x->v);
  g_free (x->P);
  g_free (x->o);
}

/* A full run of @ids with @iv: its logits (all rows) and what @x takes. */
static void
run_qkv (ScSession *s, const int32_t *ids, int n, const ScIntervention *iv, Qkv *x, float *logits)
{
  ScObserver obs = { .observe = take_p, .qkv = take_qkv, .attn_output = take_o, .user = x };
  ScForwardOptions opt = { .all_logits = true, .intervention = iv, .observer = &obs };
  ScError err = { 0 };

  g_assert_cmpint (sc_forward (s, ids, n, &opt, logits, &err), ==, SC_OK);
}

/* 1. */
static void
test_intervention (void)
{
  ScModel *m = sc_test_tiny_model ();
  const ScModelInfo *in = sc_model_info (m);
  const int L = (int) in->n_layers, H = (int) in->n_heads, V = (int) in->n_vocab,
            E = (int) in->n_embd, d = (int) in->head_dim;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScError err = { 0 };
  g_autofree float *src = g_new (float, (gsize) N * V);
  g_autofree float *base = g_new (float, (gsize) N * V);
  g_autofree float *out = g_new (float, (gsize) N * V);
  g_autofree float *resid = g_new (float, (gsize) L * N * E);
  g_autofree float *heads = g_new (float, (gsize) L * H * N * d);
  g_autofree uint8_t *on = g_new (uint8_t, (gsize) L * H * N);
  ScIntervention iv = { .patch_tokens = N };
  ScForwardOptions opt = { .all_logits = true, .intervention = &iv };

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  run_source (s, in, clean_ids, N, true, src, NULL, resid);
  run_source (s, in, corrupt_ids, N, true, base, heads, NULL);
  g_assert_cmpint (memcmp (src, base, (gsize) N * V * sizeof *src), !=, 0);

  /* the clean residual entering layer l at every position: the clean logits */
  memset (on, 1, N);
  iv.resid_patch = resid;
  iv.resid_patch_on = on;
  for (int l = 0; l < L; l++)
    {
      iv.resid_patch_layer = l;
      iv.resid_patch = resid + (gsize) l * N * E;
      g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_OK);
      g_assert_cmpmem (out, (gsize) N * V * sizeof *out, src, (gsize) N * V * sizeof *src);
    }
  iv.resid_patch = NULL;

  /* a run's own head outputs, every head at every position: nothing changes */
  memset (on, 1, (gsize) L * H * N);
  iv.head_patch = heads;
  iv.head_patch_on = on;
  g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_OK);
  g_assert_cmpmem (out, (gsize) N * V * sizeof *out, base, (gsize) N * V * sizeof *base);
  g_assert_cmpint (sc_intervention_first_layer (&iv, in), ==, 0);
  memset (on, 0, (gsize) H * N);
  g_assert_cmpint (sc_intervention_first_layer (&iv, in), ==, 1);

  /* refused, naming the field */
  iv.patch_tokens = N - 1;
  g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "tokens"));
  iv.patch_tokens = N;
  heads[(((gsize) 1 * H + 2) * N + 4) * d + 1] = NAN;
  g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "layer 1 head 2 position 4"));
  iv.head_patch = NULL;
  g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "head_patch"));
  iv.head_patch_on = NULL;
  iv.resid_patch = resid;
  iv.resid_patch_on = on;
  iv.resid_patch_layer = L;
  g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "resid_patch_layer"));

  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

/* 1, queries, keys, values and patterns. */
static void
test_qkv_intervention (void)
{
  ScModel *m = sc_test_tiny_model ();
  const ScModelInfo *in = sc_model_info (m);
  const int L = (int) in->n_layers, H = (int) in->n_heads, V = (int) in->n_vocab,
            d = (int) in->head_dim;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScError err = { 0 };
  g_autofree float *base = g_new (float, (gsize) N * V);
  g_autofree float *out = g_new (float, (gsize) N * V);
  g_autofree uint8_t *on = g_new (uint8_t, (gsize) L * H);
  g_autofree ScAttnEdit *edits = g_new0 (ScAttnEdit, (gsize) L * H);
  Qkv own = qkv_new (in, N), clean = qkv_new (in, N), got = qkv_new (in, N);
  ScIntervention iv = { .patch_tokens = N };
  ScForwardOptions opt = { .all_logits = true, .intervention = &iv };
  double dev = 0.0;

  g_assert_cmpint (in->n_kv_heads * 2, ==, in->n_heads); /* the sibling checks below */
  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  run_qkv (s, clean_ids, N, NULL, &clean, out);
  run_qkv (s, corrupt_ids, N, NULL, &own, base);

  /* a run's own queries, keys or values at every head: the same logits up to float
   * rounding — the patched heads' P and o are recomputed with double sums, not the fused
   * op's float ones, so the last bits may differ (logits here are of order 1: 1e-5 is
   * some 100 float ulps and far below any real change) */
  memset (on, 1, (gsize) L * H);
  for (int f = 0; f < 3; f++)
    {
      iv.q_patch_on = f == 0 ? on : NULL;
      iv.q_patch = f == 0 ? own.q : NULL;
      iv.k_patch_on = f == 1 ? on : NULL;
      iv.k_patch = f == 1 ? own.k : NULL;
      iv.v_patch_on = f == 2 ? on : NULL;
      iv.v_patch = f == 2 ? own.v : NULL;
      g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_OK);
      for (gsize i = 0; i < (gsize) N * V; i++)
        {
          g_assert_cmpfloat (fabs (out[i] - base[i]), <=, 1e-5);
          dev = MAX (dev, fabs (out[i] - base[i]));
        }
    }
  g_test_message ("own q/k/v: max |Δ logit| %.3g", dev);
  g_assert_cmpint (sc_intervention_first_layer (&iv, in), ==, 0);
  memset (on, 0, (gsize) H);
  g_assert_cmpint (sc_intervention_first_layer (&iv, in), ==, 1);
  memset (on, 0, (gsize) L * H);
  g_assert_cmpint (sc_intervention_first_layer (&iv, in), ==, L);
  iv.v_patch = NULL;
  iv.v_patch_on = NULL;

  /* a run's own pattern at every head: the rows are bit-identical, the op's o is kept */
  for (int c = 0; c < L * H; c++)
    edits[c] = (ScAttnEdit) { .layer = c / H, .head = c % H, .kind = SC_ATTN_EDIT_REPLACE,
                              .probs = own.P + (gsize) c * N * N };
  iv.edits = edits;
  iv.n_edits = L * H;
  g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_OK);
  g_assert_cmpmem (out, (gsize) N * V * sizeof *out, base, (gsize) N * V * sizeof *base);

  /* the clean pattern of L1.H0 with the corrupted values: o = P_clean V_base, the double
   * sum over the row's keys in key order (bit for bit where the row changed) */
  iv.n_edits = 1;
  iv.edits = &edits[H]; /* (1, 0) */
  edits[H].probs = clean.P + (gsize) H * N * N;
  run_qkv (s, corrupt_ids, N, &iv, &got, out);
  {
    bool some = false;
    for (int p = 0; p < N; p++)
      {
        const float *Pr = clean.P + ((gsize) H * N + p) * N;
        const bool same = memcmp (Pr, own.P + ((gsize) H * N + p) * N, N * sizeof (float)) == 0;
        some = some || !same;
        g_assert_cmpmem (got.P + ((gsize) H * N + p) * N, N * sizeof (float), Pr,
                         N * sizeof (float));
        for (int t = 0; t < d; t++)
          {
            const float o = got.o[((gsize) H * N + p) * d + t];
            double acc = 0.0;
            for (int j = 0; j <= p; j++)
              acc += (double) Pr[j] * own.v[((gsize) H * N + j) * d + t];
            if (same) /* the op's own fused o, float sums */
              g_assert_cmpfloat (fabs (o - acc), <=, 1e-6 * (1.0 + fabs (acc)));
            else
              g_assert_cmpfloat (o, ==, (float) acc);
          }
      }
    g_assert_true (some);
  }

  /* keys and values of one query head reach it alone: the clean keys of L1.H0 change its
   * pattern, not its KV-group sibling L1.H1's (nor any other head's) */
  iv.n_edits = 0;
  iv.edits = NULL;
  on[H + 0] = 1;
  iv.k_patch = clean.k;
  iv.k_patch_on = on;
  run_qkv (s, corrupt_ids, N, &iv, &got, out);
  g_assert_cmpint (memcmp (got.P + (gsize) H * N * N, own.P + (gsize) H * N * N,
                           (gsize) N * N * sizeof (float)), !=, 0);
  g_assert_cmpmem (got.P + (gsize) (H + 1) * N * N, (gsize) (H - 1) * N * N * sizeof (float),
                   own.P + (gsize) (H + 1) * N * N, (gsize) (H - 1) * N * N * sizeof (float));
  g_assert_cmpmem (got.P, (gsize) H * N * N * sizeof (float), own.P,
                   (gsize) H * N * N * sizeof (float));
  /* the recomputed pattern is softmax(scale q_base . k_clean) */
  for (int p = 0; p < N; p++)
    {
      double sc[N], mx = -INFINITY, sum = 0.0;
      for (int j = 0; j <= p; j++)
        {
          double dot = 0.0;
          for (int t = 0; t < d; t++)
            dot += (double) own.q[((gsize) H * N + p) * d + t]
                   * clean.k[((gsize) H * N + j) * d + t];
          sc[j] = in->attn_scale * dot;
          mx = MAX (mx, sc[j]);
        }
      for (int j = 0; j <= p; j++)
        sum += sc[j] = exp (sc[j] - mx);
      for (int j = 0; j < N; j++)
        g_assert_cmpfloat (fabs (got.P[((gsize) H * N + p) * N + j] - (j <= p ? sc[j] / sum : 0)),
                           <=, 1e-7);
    }
  iv.k_patch = NULL;
  iv.k_patch_on = NULL;

  /* the clean values of L1.H0: its own logits change, and with head L1.H0 zeroed the run
   * is the base's again bit for bit (the sibling L1.H1 kept the base's values) */
  iv.v_patch = clean.v;
  iv.v_patch_on = on;
  g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_OK);
  g_assert_cmpint (memcmp (out, base, (gsize) N * V * sizeof *out), !=, 0);
  {
    g_autofree float *scale = g_new (float, (gsize) L * H);
    g_autofree float *zeroed = g_new (float, (gsize) N * V);
    ScIntervention z = { .head_scale = scale };
    ScForwardOptions zo = { .all_logits = true, .intervention = &z };
    for (int i = 0; i < L * H; i++)
      scale[i] = i == H ? 0.0f : 1.0f;
    g_assert_cmpint (sc_forward (s, corrupt_ids, N, &zo, zeroed, &err), ==, SC_OK);
    iv.head_scale = scale;
    g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_OK);
    g_assert_cmpmem (out, (gsize) N * V * sizeof *out, zeroed, (gsize) N * V * sizeof *out);
    iv.head_scale = NULL;
  }

  /* refused, naming the field */
  clean.v[(((gsize) 1 * H + 0) * N + 4) * d + 1] = NAN;
  g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "v_patch of layer 1 head 0 is not finite at position 4"));
  iv.v_patch = NULL;
  g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "v_patch is NULL"));
  iv.v_patch_on = NULL;
  iv.q_patch = clean.q;
  g_assert_cmpint (sc_forward (s, corrupt_ids, N, &opt, out, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "q_patch_on is NULL"));

  qkv_clear (&own);
  qkv_clear (&clean);
  qkv_clear (&got);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

/* 2. Each cell against a full run in a fresh session. */
static void
check_cells (ScModel *m, ScModel *m2, const ScPatchParams *p)
{
  const ScModelInfo *in = sc_model_info (m);
  const int L = (int) in->n_layers, H = (int) in->n_heads, V = (int) in->n_vocab,
            E = (int) in->n_embd, d = (int) in->head_dim;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL, *s2 = NULL;
  ScPatchResult *r = NULL;
  ScError err = { 0 };
  const int32_t *src_ids = p->direction == SC_PATCH_DENOISE ? clean_ids : corrupt_ids;
  const int32_t *base_ids = p->direction == SC_PATCH_DENOISE ? corrupt_ids : clean_ids;
  g_autofree float *clean = g_new (float, (gsize) N * V);
  g_autofree float *corrupt = g_new (float, (gsize) N * V);
  g_autofree float *out = g_new (float, (gsize) N * V);
  g_autofree float *resid = g_new (float, (gsize) L * N * E);
  g_autofree float *heads = g_new (float, (gsize) L * H * N * d);
  g_autofree uint8_t *on = g_new0 (uint8_t, (gsize) L * H * N);
  ScIntervention iv = { .patch_tokens = N };
  ScForwardOptions opt = { .intervention = &iv }; /* the last row, as the study */
  Qkv qkv = qkv_new (in, N);
  ScAttnEdit edit = { 0 };

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_new (m2, b, &s2, &err), ==, SC_OK);
  g_assert_cmpint (sc_patch_run (s, m, clean_ids, corrupt_ids, N, p, NULL, NULL, &r, &err), ==,
                   SC_OK);
  run_source (s2, in, clean_ids, N, true, clean, src_ids == clean_ids ? heads : NULL,
              src_ids == clean_ids ? resid : NULL);
  run_source (s2, in, corrupt_ids, N, false, corrupt, src_ids == corrupt_ids ? heads : NULL,
              src_ids == corrupt_ids ? resid : NULL);

  /* the metric: the target the clean top-1, the contrast the corrupted top-1 */
  {
    const float *lc = clean + (gsize) (N - 1) * V, *lx = corrupt;
    g_assert_cmpint (r->target, ==, sc_logits_top1 (lc, V));
    g_assert_cmpint (r->top1_corrupted, ==, sc_logits_top1 (lx, V));
    if (r->top1_corrupted != r->target)
      {
        g_assert_cmpint (r->contrast, ==, r->top1_corrupted);
        assert_same_double (r->metric_clean,
                            (double) lc[r->target] - (double) lc[r->contrast]);
      }
    assert_same_double (r->metric_clean, sc_patch_metric (lc, V, r->target, r->contrast));
    assert_same_double (r->metric_corrupted, sc_patch_metric (lx, V, r->target, r->contrast));
    g_assert_cmpfloat (fabs (sc_patch_normalised (r, r->metric_clean) - 1.0), <, 1e-12);
    g_assert_cmpfloat (fabs (sc_patch_normalised (r, r->metric_corrupted)), <, 1e-12);
  }

  run_qkv (s2, src_ids, N, NULL, &qkv, out);
  if (p->what == SC_PATCH_RESIDUAL)
    {
      iv.resid_patch_on = on;
    }
  else if (p->what == SC_PATCH_PATTERNS)
    {
      iv.edits = &edit;
      iv.n_edits = 1;
    }
  else if (p->what == SC_PATCH_QUERIES)
    {
      iv.q_patch = qkv.q;
      iv.q_patch_on = on;
    }
  else if (p->what == SC_PATCH_KEYS)
    {
      iv.k_patch = qkv.k;
      iv.k_patch_on = on;
    }
  else if (p->what == SC_PATCH_VALUES)
    {
      iv.v_patch = qkv.v;
      iv.v_patch_on = on;
    }
  else
    {
      iv.head_patch = heads;
      iv.head_patch_on = on;
    }
  for (int c = 0; c < r->n_rows * r->n_cols; c++)
    {
      const int row = c / r->n_cols, col = c % r->n_cols;
      memset (on, 0, (gsize) L * H * N);
      if (p->what == SC_PATCH_HEADS)
        memset (on + ((gsize) row * H + col) * N, 1, N);
      else if (p->what == SC_PATCH_HEAD_POSITIONS)
        on[(gsize) row * N + col] = 1;
      else if (p->what == SC_PATCH_PATTERNS)
        edit = (ScAttnEdit) { .layer = row, .head = col, .kind = SC_ATTN_EDIT_REPLACE,
                              .probs = qkv.P + ((gsize) row * H + col) * N * N };
      else if (p->what != SC_PATCH_RESIDUAL) /* queries, keys, values: an (L, H) flag */
        on[(gsize) row * H + col] = 1;
      else
        {
          on[col] = 1;
          iv.resid_patch_layer = row;
          iv.resid_patch = resid + (gsize) row * N * E;
        }
      g_assert_cmpint (sc_forward (s2, base_ids, N, &opt, out, &err), ==, SC_OK);
      assert_same_double (r->patched[c], sc_patch_metric (out, V, r->target, r->contrast));
    }
  qkv_clear (&qkv);
  sc_patch_result_free (r);
  sc_session_free (s);
  sc_session_free (s2);
  sc_backend_free (b);
}

static void
test_cells_equal_full_runs (void)
{
  ScModel *m = sc_test_tiny_model (), *m2 = sc_test_tiny_model ();

  for (int dir = SC_PATCH_DENOISE; dir <= SC_PATCH_NOISE; dir++)
    for (int what = SC_PATCH_HEADS; what <= SC_PATCH_VALUES; what++)
      {
        const ScPatchParams p = { .corrupted_run = 2, .target = -1, .contrast = -1,
                                  .direction = dir, .what = what };
        check_cells (m, m2, &p);
      }
  sc_model_free (m);
  sc_model_free (m2);
}

/* 3. The induction model: BOS, then x A B y z A (clean) and x A C y z A (corrupted). The
 *    previous-token head L0.H0 writes "the previous token is A" at B's (C's) position; at
 *    the last A the induction head L1.H0 finds that position and copies its token. */
static void
test_by_construction (void)
{
  enum { TA = 'a', TB = 'b', TC = 'c', BOS = 257 };
  g_autoptr (GBytes) bytes = sc_test_gguf_induction_llama (64);
  const int32_t clean[] = { BOS, 'x', TA, TB, 'y', 'z', TA };
  const int32_t corrupt[] = { BOS, 'x', TA, TC, 'y', 'z', TA };
  const int n = (int) G_N_ELEMENTS (clean), at_b = 3;
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
    {
      ScPatchParams p = { .corrupted_run = 2, .target = TB, .contrast = TC, .direction = dir,
                          .what = SC_PATCH_HEADS };
      ScPatchResult *r = NULL;
      /* the effect that means "this component moved the run all the way" */
      const double moved = dir == SC_PATCH_DENOISE ? 1.0 : 0.0;

      g_assert_cmpint (sc_patch_run (s, m, clean, corrupt, n, &p, NULL, NULL, &r, &err), ==,
                       SC_OK);
      g_test_message ("%s: m clean %.4f, corrupted %.4f", sc_patch_direction_names[dir],
                      r->metric_clean, r->metric_corrupted);
      g_assert_cmpfloat (r->metric_clean, >, 5.0);    /* B well above C ... */
      g_assert_cmpfloat (r->metric_corrupted, <, -5.0); /* ... and the other way round */
      for (int c = 0; c < r->n_rows * r->n_cols; c++)
        {
          const double e = sc_patch_normalised (r, r->patched[c]);
          g_test_message ("  L%d.H%d effect %.6f", c / r->n_cols, c % r->n_cols, e);
          if (c == 1 * r->n_cols + 0) /* L1.H0, the induction head */
            g_assert_cmpfloat (fabs (e - moved), <, 1e-4);
          else
            g_assert_cmpfloat (fabs (e - (1.0 - moved)), <, 0.01);
        }
      sc_patch_result_free (r);

      /* the residual: the B/C position before either layer carries it all; the last
       * position's residual entering layer 1 (its own token and "previous is z", the same
       * in both runs) nothing */
      p.what = SC_PATCH_RESIDUAL;
      g_assert_cmpint (sc_patch_run (s, m, clean, corrupt, n, &p, NULL, NULL, &r, &err), ==,
                       SC_OK);
      for (int l = 0; l < 2; l++)
        for (int q = 0; q < n; q++)
          {
            const double e = sc_patch_normalised (r, r->patched[l * n + q]);
            g_test_message ("  resid L%d @ %d effect %.6f", l, q, e);
            if (q == at_b)
              g_assert_cmpfloat (fabs (e - moved), <, 1e-4);
            else
              g_assert_cmpfloat (fabs (e - (1.0 - moved)), <, 0.01);
          }
      sc_patch_result_free (r);

      /* L1.H0's parts. Its values carry the copied token (v at the B/C position is B's or
       * C's identity): they restore it all. Its queries do not: the last A's query reads
       * the identity block (A in both runs). Nor its keys: they read the previous-token
       * block, the same in both runs at every position that can match A (the B/C
       * position's previous token is A in both), and the one that differs (y's: B or C)
       * scores 0 against A either way. Nor its pattern: it points at the B/C position in
       * both runs. No other head's part moves the metric (layer 0's and the zero heads'
       * parts never reach the B/C identity L1.H0 copies). */
      for (int what = SC_PATCH_PATTERNS; what <= SC_PATCH_VALUES; what++)
        {
          p.what = what;
          g_assert_cmpint (sc_patch_run (s, m, clean, corrupt, n, &p, NULL, NULL, &r, &err), ==,
                           SC_OK);
          g_assert_cmpint (r->n_rows * r->n_cols, ==, 4);
          for (int c = 0; c < 4; c++)
            {
              const double e = sc_patch_normalised (r, r->patched[c]);
              g_test_message ("  %s L%d.H%d effect %.6f", sc_patch_what_names[what],
                              c / r->n_cols, c % r->n_cols, e);
              if (c == 1 * r->n_cols + 0 && what == SC_PATCH_VALUES)
                g_assert_cmpfloat (fabs (e - moved), <, 1e-4);
              else if (c == 1 * r->n_cols + 0)
                g_assert_cmpfloat (fabs (e - (1.0 - moved)), <, 1e-4);
              else
                g_assert_cmpfloat (fabs (e - (1.0 - moved)), <, 0.01);
            }
          sc_patch_result_free (r);
        }
    }
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

/* 4. */
static void
test_store_roundtrip (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-patch-XXXXXX", NULL);
  g_autofree char *model_path = g_build_filename (dir, "tiny.gguf", NULL);
  g_autofree char *db_path = g_build_filename (dir, "s.sqlite", NULL);
  const ScStudyKind *k = sc_study_kind_find ("patch");
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreModel sm;
  ScModel *m = NULL;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScPatchParams p = *(const ScPatchParams *) k->params_default;
  ScStudyCtx ctx;
  void *r = NULL, *back = NULL;
  ScError err = { 0 };
  char pj[SC_STUDY_PARAMS_MAX];
  int64_t id = 0, id2 = 0;
  gsize len;
  const void *d = g_bytes_get_data (sc_test_tiny_bytes (), &len);

  g_assert_true (g_file_set_contents (model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (model_path, 1, &m, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_model_identify (m, model_path, &sm, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);

  ctx = (ScStudyCtx) { .model = m, .session = s, .run_id = 5, .ids = clean_ids, .n_tokens = N,
                       .run2_id = 6, .ids2 = corrupt_ids, .n_tokens2 = N };
  /* the corrupted run must be named */
  g_assert_cmpint (sc_study_params_json (k, &p, &ctx, pj, sizeof pj, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "--corrupted"));
  g_assert_cmpint (sc_study_option_set (k, &p, "corrupted", "6", 1000, &err), ==, SC_OK);
  g_assert_cmpint (sc_study_option_set (k, &p, "corrupted", "0", 1000, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_study_option_set (k, &p, "direction", "noise", 1000, &err), ==, SC_OK);
  g_assert_cmpint (sc_study_option_set (k, &p, "what", "head-positions", 1000, &err), ==,
                   SC_OK);
  g_assert_cmpint (sc_study_params_run2 (k, &p), ==, 6);
  g_assert_cmpint (sc_study_params_json (k, &p, &ctx, pj, sizeof pj, &err), ==, SC_OK);
  g_assert_cmpstr (pj, ==, "{\"study\":1,\"run\":5,\"corrupted\":6,\"target\":null,"
                           "\"contrast\":null,\"direction\":\"noise\",\"what\":\"head-positions\"}");
  g_assert_cmpint (sc_study_run (k, &ctx, &p, &r, &err), ==, SC_OK);
  g_assert_cmpint (k->load (store, sc_model_info (m), sm.sha256, pj, &p, &back, NULL, &err), ==,
                   SC_ERR_NOT_FOUND);
  g_assert_cmpint (k->store (store, &sm, pj, r, &id, &err), ==, SC_OK);
  g_assert_cmpint (k->load (store, sc_model_info (m), sm.sha256, pj, &p, &back, &id2, &err), ==,
                   SC_OK);
  g_assert_cmpint (id2, ==, id);
  {
    const ScPatchResult *a = r, *c = back;
    g_assert_cmpint (c->n_rows, ==, a->n_rows);
    g_assert_cmpint (c->n_cols, ==, a->n_cols);
    g_assert_cmpint (c->target, ==, a->target);
    g_assert_cmpint (c->contrast, ==, a->contrast);
    g_assert_cmpint (c->top1_corrupted, ==, a->top1_corrupted);
    g_assert_cmpint (c->direction, ==, SC_PATCH_NOISE);
    assert_same_double (c->metric_clean, a->metric_clean);
    assert_same_double (c->metric_corrupted, a->metric_corrupted);
    for (int i = 0; i < a->n_rows * a->n_cols; i++)
      assert_same_double (c->patched[i], a->patched[i]);
  }
  k->result_free (back);
  back = NULL;
  sc_store_close (store);

  /* someone else's database: a cell missing, then a contrast that is the target */
  {
    g_autofree char *drop = g_strdup_printf ("DELETE FROM study_series WHERE study_id = %lld "
                                             "AND series = 'patched' AND pos = 7", (long long) id);
    g_autofree char *same = g_strdup_printf ("UPDATE study_series SET value = (SELECT value "
                                             "FROM study_series WHERE study_id = %1$lld AND "
                                             "series = 'clean' AND pos = 0) WHERE study_id = "
                                             "%1$lld AND series = 'metric' AND pos = 0",
                                             (long long) id);
    const char *const edits[] = { drop, same };
    for (gsize e = 0; e < G_N_ELEMENTS (edits); e++)
      {
        const char *sql = edits[e];
        sqlite3 *h;
        g_assert_cmpint (sqlite3_open (db_path, &h), ==, SQLITE_OK);
        g_assert_cmpint (sqlite3_exec (h, "BEGIN", NULL, NULL, NULL), ==, SQLITE_OK);
        g_assert_cmpint (sqlite3_exec (h, sql, NULL, NULL, NULL), ==, SQLITE_OK);
        g_assert_cmpint (sqlite3_changes (h), ==, 1);
        g_assert_cmpint (sqlite3_exec (h, "COMMIT", NULL, NULL, NULL), ==, SQLITE_OK);
        sqlite3_close (h);
        g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);
        g_assert_cmpint (k->load (store, sc_model_info (m), sm.sha256, pj, &p, &back, NULL,
                                  &err), ==, SC_ERR_FORMAT);
        g_assert_nonnull (strstr (err.message, SC_PATCH_STUDY_KIND));
        g_assert_null (back);
        sc_store_close (store);
        if (e == 0) /* put the cell back, so that the next edit is the only fault */
          {
            g_autofree char *put = g_strdup_printf (
              "INSERT INTO study_series (study_id, series, pos, value) VALUES (%lld, "
              "'patched', 7, %.17g)", (long long) id, ((const ScPatchResult *) r)->patched[7]);
            g_assert_cmpint (sqlite3_open (db_path, &h), ==, SQLITE_OK);
            g_assert_cmpint (sqlite3_exec (h, put, NULL, NULL, NULL), ==, SQLITE_OK);
            sqlite3_close (h);
          }
      }
  }

  k->result_free (r);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
  g_remove (db_path);
  g_remove (model_path);
  g_rmdir (dir);
}

/* 5. */
static bool
stop_early (void *user, double fraction)
{
  (void) user;
  return fraction < 0.25;
}

static void
test_invalid (void)
{
  ScModel *m = sc_test_tiny_model ();
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  const ScStudyKind *k = sc_study_kind_find ("patch");
  ScPatchParams p = { .corrupted_run = 2, .target = 44, .contrast = 44 };
  ScPatchResult *r = NULL;
  void *any = NULL;
  ScError err = { 0 };
  ScStudyCtx ctx;

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_patch_run (s, m, clean_ids, corrupt_ids, N, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "contrast is the target"));
  p.contrast = -1;
  g_assert_cmpint (sc_patch_run (s, m, clean_ids, corrupt_ids, N, &p, stop_early, NULL, &r,
                                 &err), ==, SC_ERR_CANCELLED);
  g_assert_null (r);
  ctx = (ScStudyCtx) { .model = m, .session = s, .run_id = 1, .ids = clean_ids, .n_tokens = N,
                       .run2_id = 2, .ids2 = corrupt_ids, .n_tokens2 = N - 1 };
  g_assert_cmpint (sc_study_run (k, &ctx, &p, &any, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "same length"));
  g_assert_null (any);
  ctx.ids2 = NULL;
  g_assert_cmpint (sc_study_run (k, &ctx, &p, &any, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "second run"));
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/patch/intervention", test_intervention);
  g_test_add_func ("/patch/qkv-intervention", test_qkv_intervention);
  g_test_add_func ("/patch/cells-equal-full-runs", test_cells_equal_full_runs);
  g_test_add_func ("/patch/by-construction", test_by_construction);
  g_test_add_func ("/patch/store-roundtrip", test_store_roundtrip);
  g_test_add_func ("/patch/invalid", test_invalid);
  return g_test_run ();
}
