/* test-head-means.c — reference means of every head's output (engine/study/sc-head-means.h)
 * and the forward pass's attention-output hook they are built on, on the tiny llama of
 * sc-test-gguf (2 layers x 4 heads over 2 KV heads, head_dim 4).
 *
 * 1. The means over three sentences equal a brute-force recompute from P · V by hand: the
 *    observer's probabilities, and V recomputed here in double from the kept residual
 *    entering each layer (rmsnorm, attn_norm, W_v), averaged over every position
 *    (bound 1e-5 absolute: V in double against the forward pass's float V).
 * 2. The hook sees, with a head mean-ablated, exactly the mean (what multiplies W_O), and
 *    a plain run with the hook set gives the same logits bit for bit as one without it.
 * 3. Mean-ablating heads with their own mean over a one-token sentence reproduces the
 *    clean run of that sentence bit for bit (the mean of one row is that row, exactly).
 * 4. Bad input: no sentences, an empty sentence, an id out of range; cancel.
 * 4b. The head sweep in mean mode with these means: each head's logits equal a full run
 *    with that head mean-ablated (bit for bit, through the effects), and the sweep's
 *    params name the set.
 * 5. Store round trip (bit for bit); stored means with a NaN, a missing value, a wrong
 *    shape or counts that disagree with the params are refused with SC_ERR_FORMAT naming
 *    it; the params text and set-name rules.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store-study.h"
#include "engine/study/sc-ablation-study.h"
#include "engine/study/sc-head-means.h"
#include "tests/engine/sc-test-gguf.h"

static const int32_t s0[] = { 264, 72, 101, 108, 108, 111 };
static const int32_t s1[] = { 264, 257, 44, 33, 10, 200, 201, 87, 3 };
static const int32_t s2[] = { 264, 50, 51 };

typedef struct {
  ScModel *m;
  const ScModelInfo *in;
  ScBackend *b;
  ScSession *s;
  int L, H, d, E, Q, KV, V;
} Fixture;

static void
fixture_init (Fixture *f)
{
  ScError err = { 0 };

  f->m = sc_test_tiny_model ();
  f->in = sc_model_info (f->m);
  f->b = sc_backend_cpu_new (2, NULL);
  g_assert_nonnull (f->b);
  g_assert_cmpint (sc_session_new (f->m, f->b, &f->s, &err), ==, SC_OK);
  f->L = (int) f->in->n_layers;
  f->H = (int) f->in->n_heads;
  f->d = (int) f->in->head_dim;
  f->E = (int) f->in->n_embd;
  f->Q = f->H * f->d;
  f->KV = (int) f->in->n_kv_heads * f->d;
  f->V = (int) f->in->n_vocab;
}

static void
fixture_clear (Fixture *f)
{
  sc_session_free (f->s);
  sc_backend_free (f->b);
  sc_model_free (f->m);
}

/* 1. ---------------------------------------------------------------------------------- */

typedef struct {
  int L, H, n;
  float *probs; /* (L, H, n, n) */
} Probs;

static bool
keep_probs (void *user, int layer, int head, const float *p, int n_q, int n_k)
{
  Probs *c = user;

  g_assert_cmpint (n_q, ==, c->n);
  g_assert_cmpint (n_k, ==, c->n);
  memcpy (c->probs + ((size_t) layer * c->H + head) * c->n * c->n, p,
          (size_t) c->n * c->n * sizeof *p);
  return true;
}

/* Adds Σ_p o_l,h(p) of one sentence to @sum (L, H, d), o from P V by hand. */
static void
brute_force_sum (Fixture *f, const int32_t *ids, int n, double *sum)
{
  const ScWeights *w = sc_model_weights (f->m);
  Probs c = { f->L, f->H, n, g_new (float, (gsize) f->L * f->H * n * n) };
  ScObserver obs = { NULL, keep_probs, &c, NULL, NULL };
  ScForwardOptions opt = { .observer = &obs, .keep_residuals = true };
  g_autofree float *x = g_new (float, f->E);
  g_autofree double *v = g_new (double, (gsize) n * f->KV);
  ScError err = { 0 };
  const int group = f->H / (int) f->in->n_kv_heads;
  int l, p, j, e, k, h, t;

  g_assert_cmpint (sc_forward (f->s, ids, n, &opt, NULL, &err), ==, SC_OK);
  for (l = 0; l < f->L; l++)
    {
      /* V (n, KV) = (rmsnorm (x_l) * attn_norm) W_v^T, in double */
      for (p = 0; p < n; p++)
        {
          double ss = 0.0, r;
          g_assert_cmpint (sc_session_residual (f->s, l, p, x, &err), ==, SC_OK);
          for (e = 0; e < f->E; e++)
            ss += (double) x[e] * x[e];
          r = 1.0 / sqrt (ss / f->E + f->in->norm_eps);
          for (k = 0; k < f->KV; k++)
            {
              double acc = 0.0;
              for (e = 0; e < f->E; e++)
                acc += (double) x[e] * r * w->layers[l].attn_norm[e]
                       * w->layers[l].wv[(size_t) k * f->E + e];
              v[(size_t) p * f->KV + k] = acc;
            }
        }
      /* o_h (p) = Σ_j P_h[p][j] V_g(h)[j] */
      for (h = 0; h < f->H; h++)
        for (p = 0; p < n; p++)
          for (t = 0; t < f->d; t++)
            {
              double acc = 0.0;
              for (j = 0; j < n; j++)
                acc += (double) c.probs[(((size_t) l * f->H + h) * n + p) * n + j]
                       * v[(size_t) j * f->KV + (h / group) * f->d + t];
              sum[((size_t) l * f->H + h) * f->d + t] += acc;
            }
    }
  g_free (c.probs);
}

static void
test_brute_force (void)
{
  const int32_t *const sents[] = { s0, s1, s2 };
  const int lens[] = { G_N_ELEMENTS (s0), G_N_ELEMENTS (s1), G_N_ELEMENTS (s2) };
  ScHeadMeans *m = NULL;
  ScError err = { 0 };
  Fixture f;
  double *sum;
  int i, k, T = 0;

  fixture_init (&f);
  g_assert_cmpint (sc_head_means_run (f.s, f.m, sents, lens, 3, NULL, NULL, &m, &err), ==,
                   SC_OK);
  g_assert_cmpint (m->n_sentences, ==, 3);
  g_assert_cmpint (m->n_tokens, ==, lens[0] + lens[1] + lens[2]);
  g_assert_cmpint (m->n_layers, ==, f.L);
  g_assert_cmpint (m->n_heads, ==, f.H);
  g_assert_cmpint (m->head_dim, ==, f.d);
  sum = g_new0 (double, (gsize) f.L * f.H * f.d);
  for (i = 0; i < 3; i++)
    {
      brute_force_sum (&f, sents[i], lens[i], sum);
      T += lens[i];
    }
  for (k = 0; k < f.L * f.H * f.d; k++)
    {
      const double want = sum[k] / T;
      g_assert_cmpfloat (fabs (m->mean[k] - want), <=, 1e-5);
    }
  /* not all zero: the test would pass trivially otherwise */
  g_assert_cmpfloat (fabs (m->mean[0]) + fabs (m->mean[f.L * f.H * f.d - 1]), >, 1e-3);
  g_free (sum);
  sc_head_means_free (m);
  fixture_clear (&f);
}

/* 2. ---------------------------------------------------------------------------------- */

typedef struct {
  int layer;
  float *o; /* (n, Q) of @layer */
  int calls;
} OutOf;

static bool
keep_output (void *user, int layer, const float *o, int n_query, int width)
{
  OutOf *c = user;

  c->calls++;
  if (layer == c->layer)
    memcpy (c->o, o, (size_t) n_query * width * sizeof *o);
  return true;
}

static void
test_hook (void)
{
  const int n = G_N_ELEMENTS (s1);
  ScError err = { 0 };
  Fixture f;
  float *plain, *hooked, *mean;
  uint8_t *on;
  OutOf c;
  ScObserver obs = { 0 };
  ScIntervention iv = { 0 };
  ScForwardOptions opt = { 0 };
  int i, t;

  fixture_init (&f);
  plain = g_new (float, f.V);
  hooked = g_new (float, f.V);
  mean = g_new (float, (gsize) f.L * f.H * f.d);
  on = g_new0 (uint8_t, (gsize) f.L * f.H);
  c = (OutOf) { 1, g_new (float, (gsize) n * f.Q), 0 };
  obs.attn_output = keep_output;
  obs.user = &c;

  g_assert_cmpint (sc_forward (f.s, s1, n, NULL, plain, &err), ==, SC_OK);
  opt.observer = &obs;
  g_assert_cmpint (sc_forward (f.s, s1, n, &opt, hooked, &err), ==, SC_OK);
  g_assert_cmpmem (plain, f.V * sizeof (float), hooked, f.V * sizeof (float));
  g_assert_cmpint (c.calls, ==, f.L);

  /* head 2 of layer 1 mean-ablated with a made-up mean: the hook sees it in every row */
  for (i = 0; i < f.L * f.H * f.d; i++)
    mean[i] = 0.125f * (float) (i % 7) - 0.3f;
  on[1 * f.H + 2] = 1;
  iv.head_mean = mean;
  iv.head_mean_on = on;
  opt.intervention = &iv;
  g_assert_cmpint (sc_forward (f.s, s1, n, &opt, hooked, &err), ==, SC_OK);
  for (i = 0; i < n; i++)
    for (t = 0; t < f.d; t++)
      g_assert_cmpfloat (c.o[(size_t) i * f.Q + 2 * f.d + t], ==, mean[(1 * f.H + 2) * f.d + t]);

  g_free (plain);
  g_free (hooked);
  g_free (mean);
  g_free (on);
  g_free (c.o);
  fixture_clear (&f);
}

static bool
refuse (void *user, int layer, const float *o, int n_query, int width)
{
  (void) user, (void) o, (void) n_query, (void) width;
  return layer < 1;
}

static void
test_hook_cancel_and_residual_errors (void)
{
  ScObserver obs = { 0 };
  ScForwardOptions opt = { .observer = &obs };
  ScError err = { 0 };
  ScSession *fresh = NULL;
  Fixture f;
  float x[64];

  fixture_init (&f);
  obs.attn_output = refuse;
  g_assert_cmpint (sc_forward (f.s, s0, G_N_ELEMENTS (s0), &opt, NULL, &err), ==,
                   SC_ERR_CANCELLED);
  g_assert_nonnull (strstr (err.message, "layer 1"));

  g_assert_cmpint (sc_session_new (f.m, f.b, &fresh, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_residual (fresh, 0, 0, x, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "keeps no residuals"));
  opt = (ScForwardOptions) { .keep_residuals = true };
  g_assert_cmpint (sc_forward (fresh, s0, G_N_ELEMENTS (s0), &opt, NULL, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_residual (fresh, f.L + 1, 0, x, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "layer 3"));
  g_assert_cmpint (sc_session_residual (fresh, 0, G_N_ELEMENTS (s0), x, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "row 6"));
  /* layer 0 is the embedding of the token, exactly */
  g_assert_cmpint (sc_session_residual (fresh, 0, 2, x, &err), ==, SC_OK);
  g_assert_cmpmem (x, f.E * sizeof (float),
                   sc_model_weights (f.m)->token_embd + (size_t) s0[2] * f.E,
                   f.E * sizeof (float));
  sc_session_free (fresh);
  fixture_clear (&f);
}

/* 3. ---------------------------------------------------------------------------------- */

static void
test_own_mean_one_position (void)
{
  const int32_t one[] = { 101 };
  const int32_t *const sents[] = { one };
  const int lens[] = { 1 };
  ScHeadMeans *m = NULL;
  ScError err = { 0 };
  Fixture f;
  float *clean, *abl;
  uint8_t *on;
  ScIntervention iv = { 0 };
  ScForwardOptions opt = { .intervention = &iv };
  int i;

  fixture_init (&f);
  clean = g_new (float, f.V);
  abl = g_new (float, f.V);
  on = g_new0 (uint8_t, (gsize) f.L * f.H);
  g_assert_cmpint (sc_head_means_run (f.s, f.m, sents, lens, 1, NULL, NULL, &m, &err), ==,
                   SC_OK);
  g_assert_cmpint (sc_forward (f.s, one, 1, NULL, clean, &err), ==, SC_OK);
  iv.head_mean = m->mean;
  iv.head_mean_on = on;
  /* each head alone, then every head at once */
  for (i = 0; i <= f.L * f.H; i++)
    {
      if (i < f.L * f.H)
        on[i] = 1;
      else
        memset (on, 1, (size_t) f.L * f.H);
      g_assert_cmpint (sc_forward (f.s, one, 1, &opt, abl, &err), ==, SC_OK);
      g_assert_cmpmem (clean, f.V * sizeof (float), abl, f.V * sizeof (float));
      if (i < f.L * f.H)
        on[i] = 0;
    }
  /* and a different mean does change the output (the comparison can fail) */
  m->mean[0] += 1.0f;
  g_assert_cmpint (sc_forward (f.s, one, 1, &opt, abl, &err), ==, SC_OK);
  g_assert_true (memcmp (clean, abl, f.V * sizeof (float)) != 0);
  sc_head_means_free (m);
  g_free (clean);
  g_free (abl);
  g_free (on);
  fixture_clear (&f);
}

/* 4. ---------------------------------------------------------------------------------- */

static bool
stop_after_one (void *user, double fraction)
{
  (*(int *) user)++;
  return fraction < 0.5;
}

static void
test_invalid (void)
{
  const int32_t bad[] = { 1, 99999 };
  const int32_t *const sents[] = { s0, bad, s2 };
  const int32_t *const ok[] = { s0, s1, s2 };
  int lens[] = { G_N_ELEMENTS (s0), 2, G_N_ELEMENTS (s2) };
  const int good_lens[] = { G_N_ELEMENTS (s0), G_N_ELEMENTS (s1), G_N_ELEMENTS (s2) };
  ScHeadMeans *m = NULL;
  ScError err = { 0 };
  Fixture f;
  int calls = 0;

  fixture_init (&f);
  g_assert_cmpint (sc_head_means_run (f.s, f.m, sents, lens, 0, NULL, NULL, &m, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_head_means_run (f.s, f.m, sents, lens, 3, NULL, NULL, &m, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "sentence 1, token 1 has id 99999"));
  lens[1] = 0;
  g_assert_cmpint (sc_head_means_run (f.s, f.m, sents, lens, 3, NULL, NULL, &m, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "sentence 1 has no tokens"));
  g_assert_cmpint (sc_head_means_run (f.s, f.m, ok, good_lens, 3, stop_after_one, &calls, &m,
                                      &err), ==, SC_ERR_CANCELLED);
  g_assert_cmpint (calls, ==, 2);
  g_assert_null (m);
  fixture_clear (&f);
}

/* 4b. --------------------------------------------------------------------------------- */

static void
test_mean_sweep (void)
{
  const int32_t *const sents[] = { s0, s2 };
  const int lens[] = { G_N_ELEMENTS (s0), G_N_ELEMENTS (s2) };
  const int n = G_N_ELEMENTS (s1);
  ScHeadMeans *m = NULL;
  ScHeadSweepResult *r = NULL;
  ScAblationParams p = { .target = -1, .contrast = -1, .mode = SC_ABLATE_MEAN };
  ScError err = { 0 };
  ScSession *fresh = NULL;
  Fixture f;
  float *clean, *abl;
  uint8_t *on;
  ScIntervention iv = { 0 };
  ScForwardOptions opt = { .intervention = &iv, .all_logits = true };
  char pj[160];
  int i, changed = 0;

  fixture_init (&f);
  g_assert_cmpint (sc_head_means_run (f.s, f.m, sents, lens, 2, NULL, NULL, &m, &err), ==,
                   SC_OK);
  p.head_mean = m->mean;
  g_assert_cmpint (sc_head_sweep_run (f.s, f.m, s1, n, &p, NULL, NULL, &r, &err), ==, SC_OK);
  /* the same ablations, each a full run in a fresh session */
  g_assert_cmpint (sc_session_new (f.m, f.b, &fresh, &err), ==, SC_OK);
  clean = g_new (float, (gsize) n * f.V);
  abl = g_new (float, (gsize) n * f.V);
  on = g_new0 (uint8_t, (gsize) f.L * f.H);
  g_assert_cmpint (sc_forward (fresh, s1, n, &(ScForwardOptions) { .all_logits = true }, clean,
                               &err), ==, SC_OK);
  iv.head_mean = m->mean;
  iv.head_mean_on = on;
  for (i = 0; i < f.L * f.H; i++)
    {
      ScEffect e;
      on[i] = 1;
      g_assert_cmpint (sc_forward (fresh, s1, n, &opt, abl, &err), ==, SC_OK);
      on[i] = 0;
      g_assert_cmpint (sc_effect_next_token (clean + (size_t) (n - 1) * f.V,
                                             abl + (size_t) (n - 1) * f.V, f.V, r->target, &e,
                                             &err), ==, SC_OK);
      g_assert_cmpmem (&e.delta_logp, sizeof (double), &r->heads[i].next.delta_logp,
                       sizeof (double));
      g_assert_cmpmem (&e.tv, sizeof (double), &r->heads[i].next.tv, sizeof (double));
      changed += e.tv > 0.0;
    }
  g_assert_cmpint (changed, >, 0);
  /* params: the set is named; a mean sweep without a valid set name has none */
  p.mean_set = "saccade-ref-1";
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_HEADS, 7, &p, pj, sizeof pj), >, 0);
  g_assert_cmpstr (pj, ==, "{\"study\":1,\"run\":7,\"target\":null,\"mode\":\"mean\","
                           "\"means\":\"saccade-ref-1\"}");
  p.mean_set = NULL;
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_HEADS, 7, &p, pj, sizeof pj), ==,
                   -1);
  p.mean_set = "bad\"name";
  g_assert_cmpint (sc_ablation_params_json (SC_ABLATION_KIND_HEADS, 7, &p, pj, sizeof pj), ==,
                   -1);
  sc_session_free (fresh);
  sc_head_sweep_result_free (r);
  sc_head_means_free (m);
  g_free (clean);
  g_free (abl);
  g_free (on);
  fixture_clear (&f);
}

/* 5. ---------------------------------------------------------------------------------- */

typedef enum { GOOD, NAN_VALUE, MISSING, BAD_SHAPE, BAD_COUNT } Corruption;

/* Writes @m as a head-means study by hand, with @c applied. */
static void
store_by_hand (ScStore *store, const ScStoreModel *sm, const char *params, const ScHeadMeans *m,
               Corruption c)
{
  const int n = m->n_layers * m->n_heads * m->head_dim;
  ScStoreStudy *s = NULL;
  ScError err = { 0 };
  const double shape[5] = { m->n_layers, m->n_heads, m->head_dim + (c == BAD_SHAPE),
                            m->n_sentences, (double) m->n_tokens + (c == BAD_COUNT) };
  int k;

  g_assert_cmpint (sc_store_study_begin (store, SC_HEAD_MEANS_KIND, sm, params, &s, &err), ==,
                   SC_OK);
  for (k = 0; k < 5; k++)
    g_assert_cmpint (sc_store_study_add_series (s, "shape", k, shape[k], &err), ==, SC_OK);
  for (k = 0; k < n - (c == MISSING); k++)
    g_assert_cmpint (sc_store_study_add_series (s, "mean", k,
                                                c == NAN_VALUE && k == 5 ? NAN : m->mean[k],
                                                &err), ==, SC_OK);
  g_assert_cmpint (sc_store_study_commit (s, NULL, &err), ==, SC_OK);
}

static void
test_store (void)
{
  const int32_t *const sents[] = { s0, s1 };
  const int lens[] = { G_N_ELEMENTS (s0), G_N_ELEMENTS (s1) };
  static const struct { Corruption c; const char *says; } bad[] = {
    { NAN_VALUE, "layer 0 head 1 dimension 1 is nan, not a finite float" },
    { MISSING, "series \"mean\" has 31 values, tiny-llama-test needs 32" },
    { BAD_SHAPE, "shaped 2 layers x 4 heads x 5 dimensions" },
    { BAD_COUNT, "it says 2 sentences and 16 tokens, its params 2 and 15" },
  };
  g_autofree char *dir = g_dir_make_tmp ("saccade-means-XXXXXX", NULL);
  g_autofree char *model_path = g_build_filename (dir, "tiny.gguf", NULL);
  g_autofree char *db_path = g_build_filename (dir, "s.sqlite", NULL);
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreModel sm;
  ScModel *model = NULL;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScHeadMeans *m = NULL, *back = NULL;
  ScError err = { 0 };
  char pj[160], name[80];
  int64_t id = 0, id2 = 0;
  gsize len, i;
  const void *d;

  d = g_bytes_get_data (sc_test_tiny_bytes (), &len);
  g_assert_true (g_file_set_contents (model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (model_path, 1, &model, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_new (model, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_model_identify (model, model_path, &sm, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_head_means_run (s, model, sents, lens, 2, NULL, NULL, &m, &err), ==,
                   SC_OK);

  /* the params text and its rules */
  g_assert_cmpint (sc_head_means_params_json ("saccade-ref-1", 2, 15, pj, sizeof pj), >, 0);
  g_assert_cmpstr (pj, ==, "{\"study\":1,\"set\":\"saccade-ref-1\",\"sentences\":2,\"tokens\":15}");
  g_assert_cmpint (sc_head_means_params_json ("a\"b", 2, 15, name, sizeof name), ==, -1);
  g_assert_cmpint (sc_head_means_params_json ("", 2, 15, name, sizeof name), ==, -1);
  g_assert_cmpint (sc_head_means_params_json ("x", 0, 15, name, sizeof name), ==, -1);
  g_assert_cmpint (sc_head_means_params_json ("x", 2, 1, name, sizeof name), ==, -1);
  g_assert_cmpint (sc_head_means_params_json ("saccade-ref-1", 2, 15, name, 10), ==, -1);

  /* round trip */
  g_assert_cmpint (sc_head_means_load (store, sc_model_info (model), sm.sha256, pj, &back, NULL,
                                       &err), ==, SC_ERR_NOT_FOUND);
  g_assert_cmpint (sc_head_means_store (store, &sm, pj, m, &id, &err), ==, SC_OK);
  g_assert_cmpint (sc_head_means_load (store, sc_model_info (model), sm.sha256, pj, &back, &id2,
                                       &err), ==, SC_OK);
  g_assert_cmpint (id, ==, id2);
  g_assert_cmpint (back->n_sentences, ==, 2);
  g_assert_cmpint (back->n_tokens, ==, 15);
  g_assert_cmpmem (back->mean, 32 * sizeof (float), m->mean, 32 * sizeof (float));
  sc_head_means_free (back);
  back = NULL;

  /* the writer refuses a NaN itself */
  m->mean[3] = NAN;
  g_assert_cmpint (sc_head_means_store (store, &sm, pj, m, NULL, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "layer 0 head 0 dimension 3 is not finite"));
  m->mean[3] = 0.25f;

  /* corrupt studies, written by hand as the latest with these params: refused */
  for (i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      store_by_hand (store, &sm, pj, m, bad[i].c);
      g_assert_cmpint (sc_head_means_load (store, sc_model_info (model), sm.sha256, pj, &back,
                                           NULL, &err), ==, SC_ERR_FORMAT);
      g_assert_null (back);
      if (strstr (err.message, bad[i].says) == NULL)
        g_error ("case %zu: \"%s\" does not say \"%s\"", i, err.message, bad[i].says);
      g_assert_nonnull (strstr (err.message, "(head-means)"));
    }
  /* and a good one written the same way is read */
  store_by_hand (store, &sm, pj, m, GOOD);
  g_assert_cmpint (sc_head_means_load (store, sc_model_info (model), sm.sha256, pj, &back, NULL,
                                       &err), ==, SC_OK);
  g_assert_cmpfloat (back->mean[3], ==, 0.25f);

  sc_head_means_free (back);
  sc_head_means_free (m);
  sc_store_close (store);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (model);
  g_remove (db_path);
  g_remove (model_path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/head-means/brute-force", test_brute_force);
  g_test_add_func ("/head-means/hook", test_hook);
  g_test_add_func ("/head-means/hook-cancel-residual-errors",
                   test_hook_cancel_and_residual_errors);
  g_test_add_func ("/head-means/own-mean-one-position", test_own_mean_one_position);
  g_test_add_func ("/head-means/invalid", test_invalid);
  g_test_add_func ("/head-means/mean-sweep", test_mean_sweep);
  g_test_add_func ("/head-means/store", test_store);
  return g_test_run ();
}
