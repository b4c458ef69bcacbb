/* test-norm-study.c — norm-based attention as a study (engine/study/sc-norm-study.h) on a
 * one-layer llama written here, whose every number is known by construction.
 *
 * The model. E = 8, H = 4 query heads over H_kv = 2 KV heads (heads 0, 1 read KV head 0;
 * heads 2, 3 KV head 1), head_dim 4 of which RoPE turns only dims 0, 1 (n_rot 2), the byte
 * vocabulary of sc-test-gguf (<s> = 264), attention norm weights 1, an MLP of zeros.
 * Embeddings: <s> is e_1 (so x̂ = x / sqrt(1/8 + eps): x̂[1] = cB = 2.83); every other token
 * t is e_0 + e_{6 + t mod 2} (x̂[0] = c0 = 2.00); the FFN's norm weights are 2. What the
 * heads do:
 *   head 0  the sink: q reads x̂[0] (dim 2, unrotated), KV 0's k reads x̂[1] (dim 2), each
 *           times A = sqrt(40 / (scale · c0 · cB)), so a query at i >= 1 scores 40 on <s> and
 *           0 elsewhere: α[i][0] = 1 − O(i e^-40);
 *   head 1  q = 0: uniform, α[i][j] = 1 / (i + 1);
 *   heads 2, 3  q = 0, KV 1's k = 0: uniform;
 *   values  KV 0's v = (x̂[0], 0, 0, 0): exactly 0 at <s>, which has no e_0;
 *           KV 1's v = (x̂[0], x̂[1], 0, 0): c0 on a token, cB on <s> (in its second dim);
 *   W_O     head 0's dim 0 → e_2 (× 1); head 1's dim 0 → e_3 (× 2); head 2's dims 0, 1 →
 *           e_4 (× 1), e_5 (× 3); head 3's slice 0. The heads write orthogonal directions.
 * So on "<s> t1 .. t_{n-1}":
 *   value norms  head 0: 0 at <s>, c0 elsewhere; head 1: 0, 2 c0; head 2: 3 cB, c0;
 *                head 3: 0 everywhere (its W_O slice is zero);
 *   head 0       weight on <s> ~1 for every row, its norm-based share exactly 0: the sink
 *                takes the weight and moves nothing (N_0[i][0] = α · 0);
 *   head 1       weight on <s> mean_i 1/(i+1), its share exactly 0;
 *   head 2       share at row i: 3 cB / (3 cB + i c0), averaged over i = 1 .. n − 1;
 *   head 3       no norm at all: its share is NaN (every row sums to 0);
 *   layer        N[i][j] = sqrt (Σ_h N_h[i][j]²) (orthogonal heads): on <s>, head 2's alone;
 *   residual     the embeddings lie in e_0, e_1, e_6, e_7, orthogonal to what the heads write:
 *                R[i][j] = N[i][j] off the diagonal, sqrt (N[i][i]² + ‖x_i‖²) on it (‖x_i‖ =
 *                1 for <s>, √2 for a token); through the FFN's norm (weights 2),
 *                RN[i][j] = 2 R[i][j] / rms(y_i), y_i = x_i + Σ_j A_ij, whose parts are
 *                orthogonal too: ‖Σ_j A_ij‖² = 5 c0² (i/(i+1))² + 9 cB² / (i+1)² (head 0's
 *                e^-40 left out); the mixing ratios of N, R and RN from those maps.
 * The study must give these, its maps and its summaries; stored and read back through the
 * kind, the same numbers; a tampered weight, a missing map cell, maps where none fit and a
 * layer other than the params' refused; bad input refused. A run too long for the maps
 * (460 tokens, 7 maps of 460·461/2 cells past the store's 2^19 positions) keeps the
 * summaries, value norms and mixing ratios and no maps, and reads back so.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "engine/analysis/sc-norm-attn.h"
#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store.h"
#include "engine/store/sc-store-study.h"
#include "engine/study/sc-norm-study.h"
#include "engine/study/sc-study.h"
#include "tests/engine/sc-test-gguf.h"

enum { E = 8, H = 4, HKV = 2, D = 4, ROT = 2, F = 4, VOCAB = SC_TEST_GGUF_BYTE_VOCAB };
#define BOS 264
#define EPS 1e-6
#define CTX 512

static void
add (ScTestGguf *g, const char *name, int64_t ne0, int64_t ne1, const float *w)
{
  int64_t ne[2] = { ne0, ne1 };
  sc_test_gguf_add_tensor (g, name, ne1 == 1 ? 1 : 2, ne, 0, w, (gsize) (ne0 * ne1) * 4);
}

/* x̂ of a token (c0, in e_0) and of <s> (cB, in e_1), as the engine's RMSNorm makes them */
static double
c0 (void)
{
  return 1.0 / sqrt (2.0 / E + EPS);
}

static double
cB (void)
{
  return 1.0 / sqrt (1.0 / E + EPS);
}

static GBytes *
sink_model (void)
{
  ScTestGguf *g = sc_test_gguf_new (3);
  const double scale = 1.0 / sqrt ((double) D);
  const float a = (float) sqrt (40.0 / (scale * c0 () * cB ()));
  float emb[VOCAB * E] = { 0 }, ones[E], twos[E], wq[H * D * E] = { 0 }, wk[HKV * D * E] = { 0 },
        wv[HKV * D * E] = { 0 }, wo[E * H * D] = { 0 }, ffn[F * E] = { 0 };
  GBytes *out;

  sc_test_gguf_add_str (g, "general.architecture", "llama");
  sc_test_gguf_add_str (g, "general.name", "sink-by-construction");
  sc_test_gguf_add_u32 (g, "llama.block_count", 1);
  sc_test_gguf_add_u32 (g, "llama.embedding_length", E);
  sc_test_gguf_add_u32 (g, "llama.attention.head_count", H);
  sc_test_gguf_add_u32 (g, "llama.attention.head_count_kv", HKV);
  sc_test_gguf_add_u32 (g, "llama.attention.key_length", D);
  sc_test_gguf_add_u32 (g, "llama.attention.value_length", D);
  sc_test_gguf_add_u32 (g, "llama.rope.dimension_count", ROT);
  sc_test_gguf_add_u32 (g, "llama.feed_forward_length", F);
  sc_test_gguf_add_u32 (g, "llama.context_length", CTX);
  sc_test_gguf_add_f32 (g, "llama.attention.layer_norm_rms_epsilon", (float) EPS);
  sc_test_gguf_add_byte_vocab (g);
  for (int t = 0; t < VOCAB; t++)
    if (t == BOS)
      emb[t * E + 1] = 1.0f;
    else
      {
        emb[t * E + 0] = 1.0f;
        emb[t * E + 6 + t % 2] = 1.0f; /* away from e_2 .. e_5, where the heads write */
      }
  for (int e = 0; e < E; e++)
    ones[e] = 1.0f, twos[e] = 2.0f;
  /* rows are outputs, columns inputs ([out][in]) */
  wq[(0 * D + 2) * E + 0] = a;   /* head 0's query dim 2 reads x̂[0] */
  wk[(0 * D + 2) * E + 1] = a;   /* KV 0's key dim 2 reads x̂[1] */
  wv[(0 * D + 0) * E + 0] = 1.0f; /* KV 0's value: x̂[0] */
  wv[(1 * D + 0) * E + 0] = 1.0f; /* KV 1's value: x̂[0], x̂[1] */
  wv[(1 * D + 1) * E + 1] = 1.0f;
  wo[2 * (H * D) + 0 * D + 0] = 1.0f; /* head 0 dim 0 → e_2 */
  wo[3 * (H * D) + 1 * D + 0] = 2.0f; /* head 1 dim 0 → e_3 */
  wo[4 * (H * D) + 2 * D + 0] = 1.0f; /* head 2 dim 0 → e_4 */
  wo[5 * (H * D) + 2 * D + 1] = 3.0f; /* head 2 dim 1 → e_5 */
  add (g, "token_embd.weight", E, VOCAB, emb);
  add (g, "output_norm.weight", E, 1, ones);
  add (g, "blk.0.attn_norm.weight", E, 1, ones);
  add (g, "blk.0.attn_q.weight", E, H * D, wq);
  add (g, "blk.0.attn_k.weight", E, HKV * D, wk);
  add (g, "blk.0.attn_v.weight", E, HKV * D, wv);
  add (g, "blk.0.attn_output.weight", H * D, E, wo);
  add (g, "blk.0.ffn_norm.weight", E, 1, twos);
  add (g, "blk.0.ffn_gate.weight", E, F, ffn);
  add (g, "blk.0.ffn_up.weight", E, F, ffn);
  add (g, "blk.0.ffn_down.weight", F, E, ffn);
  out = sc_test_gguf_build (g, NULL);
  sc_test_gguf_free (g);
  return out;
}

/* "<s>" then @n − 1 byte tokens */
static int32_t *
make_ids (int n)
{
  int32_t *ids = g_new (int32_t, n);

  ids[0] = BOS;
  for (int i = 1; i < n; i++)
    ids[i] = 'a' + (i * 7) % 26;
  return ids;
}

typedef struct {
  GBytes *bytes;
  char *dir, *model_path, *db_path;
  ScModel *model;
  ScBackend *backend;
  ScSession *session;
} Fixture;

static void
fixture_open (Fixture *f)
{
  gsize len;
  const void *d;
  ScError err = { 0 };

  f->bytes = sink_model ();
  d = g_bytes_get_data (f->bytes, &len);
  f->dir = g_dir_make_tmp ("saccade-norm-XXXXXX", NULL);
  f->model_path = g_build_filename (f->dir, "sink.gguf", NULL);
  f->db_path = g_build_filename (f->dir, "s.sqlite", NULL);
  g_assert_true (g_file_set_contents (f->model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (f->model_path, 1, &f->model, &err), ==, SC_OK);
  f->backend = sc_backend_cpu_ref_new ();
  g_assert_cmpint (sc_session_new (f->model, f->backend, &f->session, &err), ==, SC_OK);
}

static void
fixture_close (Fixture *f)
{
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

#define REL(a, b) (fabs ((a) - (b)) <= 1e-5 * fabs (b) + 1e-6)

static void
check_known (const ScNormResult *r, int n)
{
  const double C0 = c0 (), CB = cB ();
  const double want_vn[H][2] = { { 0, C0 }, { 0, 2 * C0 }, { 3 * CB, C0 }, { 0, 0 } };
  double uniform = 0.0, share2 = 0.0, lshare = 0.0;

  g_assert_cmpint (r->n_layers, ==, 1);
  g_assert_cmpint (r->layer, ==, 0);
  g_assert_cmpint (r->n_tokens, ==, n);
  for (int i = 1; i < n; i++)
    {
      uniform += 1.0 / (i + 1);
      share2 += 3 * CB / (3 * CB + i * C0);
    }
  uniform /= n - 1;
  share2 /= n - 1;
  /* value norms: exactly 0 where the construction zeroes them */
  for (int h = 0; h < H; h++)
    for (int j = 0; j < n; j++)
      {
        const double want = want_vn[h][j == 0 ? 0 : 1], got = r->vnorm[h * n + j];
        if (want == 0.0)
          g_assert_cmpfloat (got, ==, 0.0);
        else if (!REL (got, want))
          g_error ("head %d token %d: value norm %.9g, by construction %.9g", h, j, got, want);
      }
  /* head 0, the sink: all weight, no norm */
  g_assert_cmpfloat (r->weight_first[0], >, 1.0 - 1e-12);
  g_assert_cmpfloat (r->norm_first[0], ==, 0.0);
  g_assert_cmpfloat (r->vnorm_first[0], ==, 0.0);
  g_assert_true (REL (r->vnorm_rest[0], C0));
  /* head 1: uniform, no value on <s> */
  g_assert_true (REL (r->weight_first[1], uniform));
  g_assert_cmpfloat (r->norm_first[1], ==, 0.0);
  /* head 2: uniform, a value on <s> 3 cB / c0 times the others' */
  g_assert_true (REL (r->weight_first[2], uniform));
  g_assert_true (REL (r->norm_first[2], share2));
  g_assert_true (REL (r->vnorm_first[2], 3 * CB));
  /* head 3: nothing moves */
  g_assert_true (REL (r->weight_first[3], uniform));
  g_assert_true (isnan (r->norm_first[3]));
  g_assert_cmpfloat (r->vnorm_first[3], ==, 0.0);
  g_assert_cmpfloat (r->vnorm_rest[3], ==, 0.0);
  g_assert_true (REL (r->layer_weight_first[0], (1.0 + 3 * uniform) / 4));
  /* the layer: on <s> head 2's alone (3 cB / (i+1)); elsewhere sqrt(N_0² + (2 c0/(i+1))² +
   * (c0/(i+1))²) with N_0 below 1e-16 */
  for (int i = 1; i < n; i++)
    {
      const double first = 3 * CB / (i + 1), rest = i * C0 * sqrt (5.0) / (i + 1);
      lshare += first / (first + rest);
    }
  g_assert_true (REL (r->layer_norm_first[0], lshare / (n - 1)));
  for (int k = 0; k < 3; k++)
    g_assert_true (r->mix[k] > 0.0 && r->mix[k] < 1.0);
  if (r->maps == NULL)
    return;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      {
        double sq = 0.0;
        for (int h = 0; h < H; h++)
          {
            const float v = sc_norm_result_map (r, h)[i * n + j];
            if (j > i || (j == 0 && h != 2) || h == 3)
              g_assert_cmpfloat (v, ==, 0.0f); /* causal, a zero value, a zero slice */
            sq += (double) v * v;
          }
        if (!REL (sc_norm_result_map (r, H)[i * n + j], sqrt (sq)))
          g_error ("layer map [%d][%d] %.9g, orthogonal heads give %.9g", i, j,
                   sc_norm_result_map (r, H)[i * n + j], sqrt (sq));
      }
  /* the residual: R and RN by construction, and the mixing ratios */
  {
    const float *N = sc_norm_result_map (r, H), *R = sc_norm_result_map (r, H + 1),
                *RN = sc_norm_result_map (r, H + 2);
    g_autofree float *want = g_new (float, (gsize) n * n);
    g_autofree float *want_n = g_new (float, (gsize) n * n);
    for (int i = 0; i < n; i++)
      {
        const double xx = i == 0 ? 1.0 : 2.0, f = (double) i / (i + 1);
        const double aa = 5 * C0 * C0 * f * f + 9 * CB * CB / ((i + 1.0) * (i + 1.0));
        const double rms = sqrt ((xx + aa) / E + EPS);
        for (int j = 0; j < n; j++)
          {
            const double nij = N[i * n + j];
            const double rij = j == i ? sqrt (nij * nij + xx) : nij;
            want[i * n + j] = (float) rij;
            want_n[i * n + j] = (float) (2 * rij / rms);
            if (!REL (R[i * n + j], rij) || !REL (RN[i * n + j], 2 * rij / rms))
              g_error ("R/RN [%d][%d]: %.9g, %.9g; by construction %.9g, %.9g", i, j,
                       R[i * n + j], RN[i * n + j], rij, 2 * rij / rms);
          }
      }
    g_assert_true (REL (r->mix[0], sc_norm_mix_ratio (N, n)));
    g_assert_true (REL (r->mix[1], sc_norm_mix_ratio (want, n)));
    g_assert_true (REL (r->mix[2], sc_norm_mix_ratio (want_n, n)));
    g_assert_cmpfloat (r->mix[1], <, r->mix[0]); /* the residual keeps a token to itself */
  }
  /* a head map is its weight times the norm: head 1 at (i, j) = 2 c0 / (i + 1) */
  g_assert_true (REL (sc_norm_result_map (r, 1)[3 * n + 2], 2 * C0 / 4));
  g_assert_true (REL (sc_norm_result_map (r, 2)[3 * n + 0], 3 * CB / 4));
}

static void
test_known (void)
{
  Fixture f = { 0 };
  const int n = 12;
  g_autofree int32_t *ids = make_ids (n);
  const ScNormParams p = { .layer = -1 };
  ScNormResult *r = NULL;
  ScError err = { 0 };

  fixture_open (&f);
  g_assert_cmpint (sc_norm_run (f.session, f.model, ids, n, &p, NULL, &r, &err), ==, SC_OK);
  g_assert_nonnull (r->maps);
  check_known (r, n);
  sc_norm_result_free (r);
  /* the cpu backend agrees (its own softmax and matmuls) */
  {
    ScBackend *cpu = sc_backend_cpu_new (2, NULL);
    ScSession *s = NULL;
    g_assert_cmpint (sc_session_new (f.model, cpu, &s, &err), ==, SC_OK);
    g_assert_cmpint (sc_norm_run (s, f.model, ids, n, &p, NULL, &r, &err), ==, SC_OK);
    check_known (r, n);
    sc_norm_result_free (r);
    sc_session_free (s);
    sc_backend_free (cpu);
  }
  fixture_close (&f);
}

static void
assert_same (const ScNormResult *a, const ScNormResult *b)
{
  const size_t LH = (size_t) a->n_layers * a->n_heads;

  g_assert_cmpint (b->n_tokens, ==, a->n_tokens);
  g_assert_cmpint (b->layer, ==, a->layer);
  g_assert_cmpint (b->top1_clean, ==, a->top1_clean);
  g_assert_cmpmem (b->weight_first, LH * sizeof (double), a->weight_first, LH * sizeof (double));
  g_assert_cmpmem (b->norm_first, LH * sizeof (double), a->norm_first, LH * sizeof (double));
  g_assert_cmpmem (b->vnorm_first, LH * sizeof (double), a->vnorm_first, LH * sizeof (double));
  g_assert_cmpmem (b->vnorm_rest, LH * sizeof (double), a->vnorm_rest, LH * sizeof (double));
  g_assert_cmpmem (b->layer_norm_first, a->n_layers * sizeof (double), a->layer_norm_first,
                   a->n_layers * sizeof (double));
  g_assert_cmpmem (b->mix, sizeof a->mix, a->mix, sizeof a->mix);
  g_assert_cmpmem (b->vnorm, (size_t) a->n_heads * a->n_tokens * sizeof (double), a->vnorm,
                   (size_t) a->n_heads * a->n_tokens * sizeof (double));
  g_assert_true ((a->maps == NULL) == (b->maps == NULL));
  if (a->maps != NULL)
    g_assert_cmpmem (b->maps,
                     (size_t) (a->n_heads + SC_NORM_EXTRA_MAPS) * a->n_tokens * a->n_tokens * 4,
                     a->maps,
                     (size_t) (a->n_heads + SC_NORM_EXTRA_MAPS) * a->n_tokens * a->n_tokens * 4);
}

static void
tamper (const char *db_path, const char *sql)
{
  sqlite3 *h;

  g_assert_cmpint (sqlite3_open (db_path, &h), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (h, sql, NULL, NULL, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_changes (h), >=, 1);
  sqlite3_close (h);
}

/* Stores a study of @n tokens through the kind and reads it back; then each SQL of
 * @tampers (ID: the study's id) (applied one after another to a fresh copy) makes the load refuse it. */
static void
roundtrip (int n, const char *const *tampers)
{
  Fixture f = { 0 };
  g_autofree int32_t *ids = make_ids (n);
  const ScStudyKind *k = sc_study_kind_find ("norms");
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreModel sm;
  ScNormParams p = { .layer = -1 };
  ScStudyCtx ctx;
  void *r = NULL, *back = NULL;
  ScError err = { 0 };
  char pj[SC_STUDY_PARAMS_MAX];
  int64_t id = 0, id2 = 0;

  g_assert_nonnull (k);
  fixture_open (&f);
  g_assert_cmpint (sc_store_model_identify (f.model, f.model_path, &sm, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (f.db_path, &so, &store, &err), ==, SC_OK);
  ctx = (ScStudyCtx) { .model = f.model, .session = f.session, .run_id = 3, .ids = ids,
                       .n_tokens = n };
  g_assert_cmpint (sc_study_params_json (k, &p, &ctx, pj, sizeof pj, &err), ==, SC_OK);
  g_assert_cmpstr (pj, ==, "{\"study\":1,\"run\":3,\"layer\":0}"); /* −1 resolved */
  g_assert_cmpint (sc_study_run (k, &ctx, &p, &r, &err), ==, SC_OK);
  g_assert_true ((((ScNormResult *) r)->maps != NULL) == sc_norm_maps_fit (H, n));
  g_assert_cmpint (k->result_n_tokens (r), ==, n);
  g_assert_cmpint (k->store (store, &sm, pj, r, &id, &err), ==, SC_OK);
  g_assert_cmpint (k->load (store, sc_model_info (f.model), sm.sha256, pj, &p, &back, &id2,
                            &err), ==, SC_OK);
  g_assert_cmpint (id2, ==, id);
  assert_same (r, back);
  if (((ScNormResult *) r)->maps == NULL)
    check_known (back, n); /* the summaries and value norms by construction */
  k->result_free (back);
  back = NULL;
  sc_store_close (store);
  {
    /* a study whose params text names a layer the model lacks (layer 1 of one) */
    const char *other = "{\"study\":1,\"run\":3,\"layer\":1}";
    g_autofree char *copy = g_strdup_printf ("%s.layer", f.db_path);
    g_autofree char *sql = g_strdup_printf ("UPDATE studies SET params = '%s' WHERE id = %lld",
                                            other, (long long) id);
    g_autofree char *bytes = NULL;
    gsize len;
    g_assert_true (g_file_get_contents (f.db_path, &bytes, &len, NULL));
    g_assert_true (g_file_set_contents (copy, bytes, (gssize) len, NULL));
    tamper (copy, sql);
    g_assert_cmpint (sc_store_open (copy, &so, &store, &err), ==, SC_OK);
    g_assert_cmpint (k->load (store, sc_model_info (f.model), sm.sha256, other, &p, &back,
                              NULL, &err), ==, SC_ERR_FORMAT);
    g_assert_null (back);
    sc_store_close (store);
    g_remove (copy);
  }
  for (int t = 0; tampers != NULL && tampers[t] != NULL; t++)
    {
      g_autofree char *copy = g_strdup_printf ("%s.%d", f.db_path, t);
      g_autofree char *id_text = g_strdup_printf ("%lld", (long long) id);
      GString *sql_s = g_string_new (tampers[t]);
      g_autofree char *sql = (g_string_replace (sql_s, "ID", id_text, 0),
                              g_string_free (sql_s, FALSE));
      g_autofree char *bytes = NULL;
      gsize len;
      g_assert_true (g_file_get_contents (f.db_path, &bytes, &len, NULL));
      g_assert_true (g_file_set_contents (copy, bytes, (gssize) len, NULL));
      tamper (copy, sql);
      g_assert_cmpint (sc_store_open (copy, &so, &store, &err), ==, SC_OK);
      g_assert_cmpint (k->load (store, sc_model_info (f.model), sm.sha256, pj, &p, &back, NULL,
                                &err), ==, SC_ERR_FORMAT);
      g_assert_null (back);
      g_test_message ("refused (%s): %s", tampers[t], err.message);
      sc_store_close (store);
      g_remove (copy);
    }
  k->result_free (r);
  fixture_close (&f);
}

static void
test_store_roundtrip (void)
{
  static const char *const tampers[] = {
    /* a weight above 1 */
    "UPDATE study_heads SET value = 1.5 WHERE study_id = ID AND metric = 'weight-first' "
    "AND head = 1",
    /* a negative norm */
    "UPDATE study_series SET value = -1 WHERE study_id = ID AND series = 'vnorm' AND pos = 5",
    /* a map cell missing */
    "DELETE FROM study_series WHERE study_id = ID AND series = 'maps' AND pos = 7",
    /* a length that does not fit the value norms stored */
    "UPDATE study_series SET value = 11 WHERE study_id = ID AND series = 'n'",
    NULL,
  };

  roundtrip (12, tampers);
}

static void
test_long_no_maps (void)
{
  static const char *const tampers[] = {
    /* maps where none fit */
    "INSERT INTO study_series (study_id, series, pos, value) VALUES (ID, 'maps', 0, 1)",
    NULL,
  };

  /* (H + 3) n(n+1)/2 <= 2^19 */
  g_assert_true (sc_norm_maps_fit (9, 295));
  g_assert_false (sc_norm_maps_fit (9, 296));
  g_assert_true (sc_norm_maps_fit (H, 386));
  g_assert_false (sc_norm_maps_fit (H, 387));
  roundtrip (460, tampers);
}

static void
test_bad_input (void)
{
  Fixture f = { 0 };
  g_autofree int32_t *ids = make_ids (4);
  ScNormParams p = { .layer = 1 }; /* the model has one layer */
  ScNormResult *r = NULL;
  ScError err = { 0 };
  char pj[SC_STUDY_PARAMS_MAX];
  ScStudyCtx ctx;
  const ScStudyKind *k = sc_study_kind_find ("norms");

  fixture_open (&f);
  g_assert_cmpint (sc_norm_run (f.session, f.model, ids, 4, &p, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "layer 1"));
  p.layer = -2;
  g_assert_cmpint (sc_norm_run (f.session, f.model, ids, 4, &p, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  p.layer = 0;
  g_assert_cmpint (sc_norm_run (f.session, f.model, ids, 1, &p, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG); /* one token: no row but the first */
  g_assert_nonnull (strstr (err.message, "at least 2 needed"));
  ids[2] = VOCAB;
  g_assert_cmpint (sc_norm_run (f.session, f.model, ids, 4, &p, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_null (r);
  ctx = (ScStudyCtx) { .model = f.model, .session = f.session, .run_id = 1, .ids = ids,
                       .n_tokens = 4 };
  p.layer = 1;
  g_assert_cmpint (sc_study_params_json (k, &p, &ctx, pj, sizeof pj, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "--layer 1 is outside 0..0"));
  fixture_close (&f);
}

/* Cancelling through the study's progress stops the run with nothing returned. */
static bool
stop_now (void *user, double fraction)
{
  (void) user, (void) fraction;
  return false;
}

static void
test_cancel (void)
{
  Fixture f = { 0 };
  g_autofree int32_t *ids = make_ids (6);
  const ScNormParams p = { .layer = 0 };
  ScStudyCtx ctx = { .progress = stop_now };
  ScNormResult *r = NULL;
  ScError err = { 0 };

  fixture_open (&f);
  g_assert_cmpint (sc_norm_run (f.session, f.model, ids, 6, &p, &ctx, &r, &err), ==,
                   SC_ERR_CANCELLED);
  g_assert_null (r);
  fixture_close (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/norm-study/known", test_known);
  g_test_add_func ("/norm-study/store-roundtrip", test_store_roundtrip);
  g_test_add_func ("/norm-study/long-no-maps", test_long_no_maps);
  g_test_add_func ("/norm-study/bad-input", test_bad_input);
  g_test_add_func ("/norm-study/cancel", test_cancel);
  return g_test_run ();
}
