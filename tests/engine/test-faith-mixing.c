/* test-faith-mixing.c — the faithfulness study's context-mixing sources and its contrast
 * (engine/study/sc-faithfulness.h, params.mixing and params.contrastive).
 *
 * 1. Known answer, on a one-layer llama written here whose <s> (token 0) has value vectors
 *    exactly zero (its embedding is e_7 and W_V reads nothing from dimension 7, as in
 *    test-mixing-study): what the last query draws from token 0 through the attention is
 *    exactly 0, so with one layer every context-mixing source gives item 0 exactly 0 —
 *    norm-based ‖Σ_h α f_h(0)‖ = 0 whatever the weight, value zeroing's distance 0, ALTI's
 *    contribution 0, and their rollouts over the one layer the same (norm rollout: ½ · 0 +
 *    ½ I[n − 1][0]) — while the other items are not 0 (the test can fail). The raw weight on
 *    token 0 is not 0. Without mixing, the params text is the one written before mixing
 *    existed; with it, ,"mixing":true is appended; the store round trip gives the same
 *    numbers, and a study stored without mixing reads back with those sources "not asked".
 * 2. The contrast, on the tiny llama of sc-test-gguf: the leave-one-out importance is
 *    |Δ (logit(A) − logit(B))|, recomputed here from plain runs of the masked input
 *    (sc_forward with a token mask) within 1e-6; the params text names B after the target;
 *    a study stored without a contrast, under params that name one, is refused on load;
 *    a contrast that is the target, or a metric without a contrast, is refused.
 * 3. SmolLM2 (skipped when not fetched): each context-mixing source equals the last row of
 *    the `norms` and `mixing` studies of the same ids within 1e-6 (norm rollout: the rollout
 *    of every layer's norms-study map, row-normalised, with ½ I, computed here).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "engine/analysis/sc-mixing.h"
#include "engine/analysis/sc-rollout.h"
#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store-study.h"
#include "engine/study/sc-faithfulness.h"
#include "engine/study/sc-mixing-study.h"
#include "engine/study/sc-norm-study.h"
#include "tests/engine/sc-test-gguf.h"

enum { E = 8, H = 2, HKV = 2, D = 4, ROT = 2, F = 6, VOCAB = SC_TEST_GGUF_BYTE_VOCAB };
#define BOS 264

static guint32 lcg = 777;

static float
draw (void)
{
  lcg = lcg * 1664525u + 1013904223u;
  return (float) ((lcg >> 8) / 16777216.0 - 0.5);
}

static float *
randoms (int n)
{
  float *w = g_new (float, n);
  for (int i = 0; i < n; i++)
    w[i] = draw ();
  return w;
}

static void
put (ScTestGguf *g, int layer, const char *name, int64_t ne0, int64_t ne1, const float *w)
{
  g_autofree char *full = layer < 0 ? g_strdup (name) : g_strdup_printf ("blk.%d.%s", layer,
                                                                         name);
  int64_t ne[2] = { ne0, ne1 };
  sc_test_gguf_add_tensor (g, full, ne1 == 1 ? 1 : 2, ne, 0, w, (gsize) (ne0 * ne1) * 4);
}

/* One layer; <s>'s values exactly zero (above). */
static GBytes *
zero_value_model (void)
{
  ScTestGguf *g = sc_test_gguf_new (3);
  g_autofree float *emb = randoms (VOCAB * E);
  g_autofree float *wq = randoms (H * D * E), *wk = randoms (HKV * D * E),
                   *wv = randoms (HKV * D * E), *wo = randoms (E * H * D),
                   *gate = randoms (F * E), *up = randoms (F * E), *down = randoms (E * F);
  float ones[E];
  GBytes *out;

  sc_test_gguf_add_str (g, "general.architecture", "llama");
  sc_test_gguf_add_str (g, "general.name", "faith-zero-value");
  sc_test_gguf_add_u32 (g, "llama.block_count", 1);
  sc_test_gguf_add_u32 (g, "llama.embedding_length", E);
  sc_test_gguf_add_u32 (g, "llama.attention.head_count", H);
  sc_test_gguf_add_u32 (g, "llama.attention.head_count_kv", HKV);
  sc_test_gguf_add_u32 (g, "llama.attention.key_length", D);
  sc_test_gguf_add_u32 (g, "llama.attention.value_length", D);
  sc_test_gguf_add_u32 (g, "llama.rope.dimension_count", ROT);
  sc_test_gguf_add_u32 (g, "llama.feed_forward_length", F);
  sc_test_gguf_add_u32 (g, "llama.context_length", 64);
  sc_test_gguf_add_f32 (g, "llama.attention.layer_norm_rms_epsilon", 1e-6f);
  sc_test_gguf_add_byte_vocab (g);
  for (int t = 0; t < VOCAB; t++)
    for (int e = 0; e < E; e++)
      if (e == 7 || t == BOS) /* <s> is e_7; no other token has a 7th component */
        emb[t * E + e] = t == BOS && e == 7 ? 1.0f : 0.0f;
  for (int e = 0; e < E; e++)
    ones[e] = 1.0f;
  for (int r = 0; r < HKV * D; r++) /* W_V [out][in]: nothing read from dimension 7 */
    wv[r * E + 7] = 0.0f;
  for (int k = 0; k < H * D * E; k++)
    wq[k] *= 4.0f;
  put (g, -1, "token_embd.weight", E, VOCAB, emb);
  put (g, -1, "output_norm.weight", E, 1, ones);
  put (g, 0, "attn_norm.weight", E, 1, ones);
  put (g, 0, "attn_q.weight", E, H * D, wq);
  put (g, 0, "attn_k.weight", E, HKV * D, wk);
  put (g, 0, "attn_v.weight", E, HKV * D, wv);
  put (g, 0, "attn_output.weight", H * D, E, wo);
  put (g, 0, "ffn_norm.weight", E, 1, ones);
  put (g, 0, "ffn_gate.weight", E, F, gate);
  put (g, 0, "ffn_up.weight", E, F, up);
  put (g, 0, "ffn_down.weight", F, E, down);
  out = sc_test_gguf_build (g, NULL);
  sc_test_gguf_free (g);
  return out;
}

typedef struct {
  GBytes *bytes;
  char *dir, *model_path, *db_path;
  ScModel *model;
  ScBackend *backend;
  ScSession *session;
  ScStoreModel sm;
  ScStore *store;
} Fixture;

static void
fixture_open (Fixture *f, GBytes *bytes)
{
  ScStoreOptions so = { .writable = true };
  gsize len;
  const void *d = g_bytes_get_data (bytes, &len);
  ScError err = { 0 };

  f->bytes = bytes;
  f->dir = g_dir_make_tmp ("saccade-faith-mixing-XXXXXX", NULL);
  f->model_path = g_build_filename (f->dir, "m.gguf", NULL);
  f->db_path = g_build_filename (f->dir, "s.sqlite", NULL);
  g_assert_true (g_file_set_contents (f->model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (f->model_path, 1, &f->model, &err), ==, SC_OK);
  f->backend = sc_backend_cpu_ref_new ();
  g_assert_cmpint (sc_session_new (f->model, f->backend, &f->session, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_model_identify (f->model, f->model_path, &f->sm, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (f->db_path, &so, &f->store, &err), ==, SC_OK);
}

static void
fixture_close (Fixture *f)
{
  sc_store_close (f->store);
  sc_session_free (f->session);
  sc_backend_free (f->backend);
  sc_model_free (f->model);
  g_remove (f->db_path);
  g_remove (f->model_path);
  g_rmdir (f->dir);
  g_free (f->db_path);
  g_free (f->model_path);
  g_free (f->dir);
  g_bytes_unref (f->bytes);
}

/* 1. */
static void
test_zero_value (void)
{
  static const int mixing_sources[] = { SC_FAITH_SOURCE_NORM, SC_FAITH_SOURCE_NORM_ROLLOUT,
                                        SC_FAITH_SOURCE_VZ, SC_FAITH_SOURCE_VZ_ROLLOUT,
                                        SC_FAITH_SOURCE_ALTI, SC_FAITH_SOURCE_ALTI_ROLLOUT };
  const int32_t ids[] = { BOS, 'c', 'a', 't', 's', ' ', 'r', 'u', 'n' };
  const int n = (int) G_N_ELEMENTS (ids);
  ScFaithParams p = { .target = -1, .contrast = -1 }, pm;
  ScFaithResult *r = NULL, *rm = NULL, *back = NULL;
  Fixture f = { 0 };
  ScError err = { 0 };
  char pj[256], pjm[256];

  lcg = 777;
  fixture_open (&f, zero_value_model ());
  pm = p;
  pm.mixing = true;
  g_assert_cmpint (sc_faith_run (f.session, f.model, ids, n, &p, NULL, NULL, NULL, &r, NULL,
                                 &err), ==, SC_OK);
  g_assert_cmpint (sc_faith_run (f.session, f.model, ids, n, &pm, NULL, NULL, NULL, &rm, NULL,
                                 &err), ==, SC_OK);
  /* the raw weight on <s> is not 0; what it moves is */
  g_assert_cmpfloat (rm->attn[SC_FAITH_SOURCE_LAST_MEAN][0], >, 0.01);
  for (guint k = 0; k < G_N_ELEMENTS (mixing_sources); k++)
    {
      const int s = mixing_sources[k];
      double rest = 0.0;
      g_assert_cmpint (rm->agree[s].status, ==, SC_OK);
      g_assert_cmpfloat (rm->attn[s][0], ==, 0.0);
      for (int j = 1; j < n - 1; j++)
        {
          g_assert_cmpfloat (rm->attn[s][j], >=, 0.0);
          rest += rm->attn[s][j];
        }
      g_assert_cmpfloat (rest, >, 0.0);
      g_assert_cmpint (r->agree[s].status, ==, SC_ERR_UNSUPPORTED); /* not asked */
    }
  /* one layer: the rollouts of value zeroing and ALTI are their layer maps */
  for (int j = 0; j < n - 1; j++)
    {
      g_assert_cmpfloat (rm->attn[SC_FAITH_SOURCE_VZ_ROLLOUT][j], ==,
                         rm->attn[SC_FAITH_SOURCE_VZ][j]);
      g_assert_cmpfloat (rm->attn[SC_FAITH_SOURCE_ALTI_ROLLOUT][j], ==,
                         rm->attn[SC_FAITH_SOURCE_ALTI][j]);
    }
  /* the other sources do not depend on the switch */
  for (int s = 0; s < SC_FAITH_FIRST_MIXING_SOURCE; s++)
    g_assert_true (r->agree[s].tau == rm->agree[s].tau
                   || (isnan (r->agree[s].tau) && isnan (rm->agree[s].tau)));
  g_assert_cmpint (sc_faith_n_sources (r), ==, SC_FAITH_FIRST_MIXING_SOURCE);
  g_assert_cmpint (sc_faith_n_sources (rm), ==, SC_FAITH_N_SOURCES);

  /* params text: without mixing as before it existed */
  g_assert_cmpint (sc_faith_params_json (3, NULL, 0, &p, pj, sizeof pj), >, 0);
  g_assert_cmpstr (pj, ==, "{\"study\":2,\"run\":3,\"ids\":null,\"metric\":\"tv\",\"kind\":"
                           "\"mask\",\"top_k\":0,\"target\":null,\"gradients\":null}");
  g_assert_cmpint (sc_faith_params_json (3, NULL, 0, &pm, pjm, sizeof pjm), >, 0);
  g_assert_cmpstr (pjm, ==, "{\"study\":2,\"run\":3,\"ids\":null,\"metric\":\"tv\",\"kind\":"
                            "\"mask\",\"top_k\":0,\"target\":null,\"gradients\":null,"
                            "\"mixing\":true}");

  /* the store: both read back as computed */
  g_assert_cmpint (sc_faith_store (f.store, &f.sm, pj, r, NULL, &err), ==, SC_OK);
  g_assert_cmpint (sc_faith_store (f.store, &f.sm, pjm, rm, NULL, &err), ==, SC_OK);
  g_assert_cmpint (sc_faith_load (f.store, sc_model_info (f.model), f.sm.sha256, pjm, &pm,
                                  &back, NULL, &err), ==, SC_OK);
  for (int s = 0; s < SC_FAITH_N_SOURCES; s++)
    {
      g_assert_cmpint (back->agree[s].status, ==, rm->agree[s].status);
      g_assert_true (back->agree[s].tau == rm->agree[s].tau
                     || (isnan (back->agree[s].tau) && isnan (rm->agree[s].tau)));
      for (int j = 0; j < n - 1; j++)
        g_assert_true (back->attn[s][j] == rm->attn[s][j]
                       || (isnan (back->attn[s][j]) && isnan (rm->attn[s][j])));
    }
  sc_faith_result_free (back);
  back = NULL;
  g_assert_cmpint (sc_faith_load (f.store, sc_model_info (f.model), f.sm.sha256, pj, &p,
                                  &back, NULL, &err), ==, SC_OK);
  for (int s = SC_FAITH_FIRST_MIXING_SOURCE; s < SC_FAITH_N_SOURCES; s++)
    {
      g_assert_cmpint (back->agree[s].status, ==, SC_ERR_UNSUPPORTED);
      g_assert_cmpint (back->agree_nf[s].status, ==, SC_ERR_UNSUPPORTED);
    }
  sc_faith_result_free (back);
  sc_faith_result_free (r);
  sc_faith_result_free (rm);
  fixture_close (&f);
}

/* 2. */
static void
test_contrast (void)
{
  static const int32_t ids[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10 };
  const int n = (int) G_N_ELEMENTS (ids);
  ScFaithParams p = { .target = -1, .contrast = -1 }, pc;
  ScFaithResult *r = NULL, *rc = NULL, *back = NULL;
  Fixture f = { 0 };
  ScError err = { 0 };
  ScForwardOptions opt = { .all_logits = true };
  g_autofree uint8_t *mask = g_new0 (uint8_t, n);
  ScIntervention iv = { .token_mask = mask };
  g_autofree float *clean = NULL, *abl = NULL;
  char pj[256];
  double m_clean;
  int A, B, V;

  fixture_open (&f, g_bytes_ref (sc_test_tiny_bytes ()));
  V = (int) sc_model_info (f.model)->n_vocab;
  g_assert_cmpint (sc_faith_run (f.session, f.model, ids, n, &p, NULL, NULL, NULL, &r, NULL,
                                 &err), ==, SC_OK);
  A = r->target;
  B = A == 7 ? 8 : 7;
  pc = p;
  pc.contrastive = true;
  pc.contrast = B;
  pc.metric = SC_FAITH_METRIC_ABS_DELTA_LOGIT_DIFF;
  g_assert_cmpint (sc_faith_run (f.session, f.model, ids, n, &pc, NULL, NULL, NULL, &rc, NULL,
                                 &err), ==, SC_OK);
  g_assert_cmpint (rc->contrast, ==, B);
  g_assert_cmpint (r->contrast, ==, -1);
  g_assert_cmpint (rc->target, ==, A);

  /* by hand, from plain runs of the masked input */
  clean = g_new (float, (gsize) n * V);
  abl = g_new (float, (gsize) n * V);
  g_assert_cmpint (sc_forward (f.session, ids, n, &opt, clean, &err), ==, SC_OK);
  m_clean = (double) clean[(size_t) (n - 1) * V + A] - clean[(size_t) (n - 1) * V + B];
  opt.intervention = &iv;
  for (int j = 0; j < n - 1; j++)
    {
      const float *z = abl + (size_t) (n - 1) * V;
      mask[j] = 1;
      g_assert_cmpint (sc_forward (f.session, ids, n, &opt, abl, &err), ==, SC_OK);
      mask[j] = 0;
      g_assert_cmpfloat (fabs (rc->loo[j] - fabs (((double) z[A] - z[B]) - m_clean)), <=, 1e-6);
    }
  /* the contrast changes the reference ranking (the test can fail) */
  {
    gboolean differs = FALSE;
    for (int j = 0; j < n - 1; j++)
      differs = differs || rc->loo[j] != r->loo[j];
    g_assert_true (differs);
  }

  /* params text and the store */
  g_assert_cmpint (sc_faith_params_json (5, NULL, 0, &pc, pj, sizeof pj), >, 0);
  {
    g_autofree char *want = g_strdup_printf ("{\"study\":2,\"run\":5,\"ids\":null,\"metric\":"
                                             "\"abs-delta-logit-diff\",\"kind\":\"mask\","
                                             "\"top_k\":0,\"target\":null,\"contrast\":%d,"
                                             "\"gradients\":null}", B);
    g_assert_cmpstr (pj, ==, want);
  }
  g_assert_cmpint (sc_faith_store (f.store, &f.sm, pj, rc, NULL, &err), ==, SC_OK);
  g_assert_cmpint (sc_faith_load (f.store, sc_model_info (f.model), f.sm.sha256, pj, &pc,
                                  &back, NULL, &err), ==, SC_OK);
  g_assert_cmpint (back->contrast, ==, B);
  for (int j = 0; j < n - 1; j++)
    g_assert_cmpfloat (back->loo[j], ==, rc->loo[j]);
  sc_faith_result_free (back);
  back = NULL;
  /* a study without the contrast stored under params that name it: refused */
  r->metric = SC_FAITH_METRIC_ABS_DELTA_LOGIT_DIFF;
  pc.contrast = B == 7 ? 9 : 10;
  g_assert_cmpint (sc_faith_params_json (5, NULL, 0, &pc, pj, sizeof pj), >, 0);
  g_assert_cmpint (sc_faith_store (f.store, &f.sm, pj, r, NULL, &err), ==, SC_OK);
  g_assert_cmpint (sc_faith_load (f.store, sc_model_info (f.model), f.sm.sha256, pj, &pc,
                                  &back, NULL, &err), ==, SC_ERR_FORMAT);
  g_assert_nonnull (strstr (err.message, "name a contrast"));
  g_assert_null (back);

  /* refused: the contrast is the target; a metric that needs one without it */
  pc.contrast = A;
  g_assert_cmpint (sc_faith_run (f.session, f.model, ids, n, &pc, NULL, NULL, NULL, &back,
                                 NULL, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "target"));
  p.metric = SC_FAITH_METRIC_ABS_DELTA_LOGIT_DIFF;
  g_assert_cmpint (sc_faith_run (f.session, f.model, ids, n, &p, NULL, NULL, NULL, &back,
                                 NULL, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "needs a contrast"));
  g_assert_null (back);
  sc_faith_result_free (r);
  sc_faith_result_free (rc);
  fixture_close (&f);
}

/* 3. */
static void
test_smollm2_studies (void)
{
  const char *env = g_getenv ("SACCADE_MODEL");
  g_autofree char *path = env != NULL ? g_strdup (env)
                                      : g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"),
                                                          "data", "models",
                                                          "SmolLM2-135M-Instruct.Q4_1.gguf",
                                                          NULL);
  /* "The cat chased the ball because it was" in SmolLM2's ids do not matter: any ids */
  static const int32_t ids[] = { 504, 2644, 38977, 260, 2738, 1761, 357, 436 };
  const int n = (int) G_N_ELEMENTS (ids);
  const size_t nn = (size_t) n * n;
  ScFaithParams p = { .target = -1, .contrast = -1, .mixing = true };
  ScFaithResult *r = NULL;
  ScModel *m = NULL;
  ScBackend *b;
  ScSession *s = NULL;
  ScError err = { 0 };
  int L;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("the default model is not fetched (data/fetch-model.sh)");
      return;
    }
  if (sc_model_open (path, 2, &m, &err) != SC_OK)
    g_error ("%s", err.message);
  b = sc_backend_cpu_new (2, NULL);
  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  L = (int) sc_model_info (m)->n_layers;
  g_assert_cmpint (sc_faith_run (s, m, ids, n, &p, NULL, NULL, NULL, &r, NULL, &err), ==,
                   SC_OK);
  /* value zeroing and ALTI: the mixing study's last layer and rollout */
  for (int method = 0; method < 2; method++)
    {
      const ScMixingParams mp = { .method = method };
      const int src = method == SC_MIXING_VALUE_ZEROING ? SC_FAITH_SOURCE_VZ
                                                        : SC_FAITH_SOURCE_ALTI;
      ScMixingResult *mr = NULL;
      g_assert_cmpint (sc_mixing_run (s, m, ids, n, &mp, NULL, &mr, &err), ==, SC_OK);
      for (int j = 0; j < n - 1; j++)
        {
          g_assert_cmpfloat_with_epsilon (r->attn[src][j],
                                          sc_mixing_result_map (mr, L - 1)[(n - 1) * n + j],
                                          1e-6);
          g_assert_cmpfloat_with_epsilon (r->attn[src + 1][j],
                                          sc_mixing_result_map (mr, L)[(n - 1) * n + j], 1e-6);
        }
      sc_mixing_result_free (mr);
    }
  /* norms: the norms study of each layer gives its map N; the last layer's last row is the
   * source, and their row-normalised rollout with ½ I the norm rollout */
  {
    g_autofree float *maps = g_new (float, (size_t) L * nn);
    g_autofree const float **layers = g_new (const float *, L);
    g_autofree double *roll = g_new (double, nn);
    double row_sum = 0.0;
    for (int l = 0; l < L; l++)
      {
        const ScNormParams np = { .layer = l };
        ScNormResult *nr = NULL;
        g_assert_cmpint (sc_norm_run (s, m, ids, n, &np, NULL, &nr, &err), ==, SC_OK);
        memcpy (maps + (size_t) l * nn, sc_norm_result_map (nr, nr->n_heads), nn * sizeof *maps);
        sc_norm_result_free (nr);
      }
    for (int j = 0; j < n - 1; j++)
      g_assert_cmpfloat_with_epsilon (r->attn[SC_FAITH_SOURCE_NORM][j],
                                      maps[(size_t) (L - 1) * nn + (size_t) (n - 1) * n + j],
                                      1e-6);
    for (int l = 0; l < L; l++)
      {
        float *map = maps + (size_t) l * nn;
        for (int i = 0; i < n; i++) /* each row over its sum, written out */
          {
            double sum = 0.0;
            for (int j = 0; j <= i; j++)
              sum += map[i * n + j];
            for (int j = 0; j < n; j++)
              map[i * n + j] = j <= i ? (float) (map[i * n + j] / sum) : 0.0f;
          }
        layers[l] = map;
      }
    g_assert_cmpint (sc_attention_rollout (layers, L, 1, n, roll, &err), ==, SC_OK);
    for (int j = 0; j < n - 1; j++)
      {
        g_assert_cmpfloat_with_epsilon (r->attn[SC_FAITH_SOURCE_NORM_ROLLOUT][j],
                                        roll[(size_t) (n - 1) * n + j], 1e-6);
        row_sum += roll[(size_t) (n - 1) * n + j];
      }
    g_assert_cmpfloat (row_sum, >, 0.0);
    g_assert_cmpfloat (row_sum, <, 1.0); /* the query itself holds the rest */
  }
  for (int k = SC_FAITH_FIRST_MIXING_SOURCE; k < SC_FAITH_N_SOURCES; k++)
    g_assert_cmpint (r->agree[k].status, ==, SC_OK);
  sc_faith_result_free (r);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/faith-mixing/zero-value", test_zero_value);
  g_test_add_func ("/faith-mixing/contrast", test_contrast);
  g_test_add_func ("/faith-mixing/smollm2-studies", test_smollm2_studies);
  return g_test_run ();
}
