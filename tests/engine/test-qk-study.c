/* test-qk-study.c — QK attribution (engine/study/sc-qk-study.h) by construction, on the tiny llama
 * of sc-test-gguf (2 layers, 4 query heads over 2 KV heads, head_dim 4, n_embd 16).
 *
 * 1. For every query head of layer 1 and layer 0, every (i >= j) of a 10-token run: the C × C
 *    parts sum to scale · q_i · k_j with q and k taken by sc_session_layer_qk (another path
 *    than the study's observer) within 1e-5 of max(|score|, scale |q_i| |k_j|) — float32
 *    rounding of the forward pass's projections, nothing more; the study's own score is
 *    the same number; and the softmax over j <= i of the sums is the attention the forward
 *    pass observed, within 1e-5. Layer 0 has one component (the embedding): its one part is
 *    the score.
 * 2. A head with W_O zero (written into the model's weights before the session is made):
 *    its row and column of parts are exactly 0, and the parts still sum to the score.
 * 3. Stored and read back through the kind: the same numbers, bit for bit; a part edited
 *    in the database is refused (the parts no longer sum to the score); parameters out of
 *    range give no params text; the defaults resolve to the middle layer and the last
 *    position.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store.h"
#include "engine/store/sc-store-study.h"
#include "engine/study/sc-qk-study.h"
#include "engine/study/sc-study.h"
#include "tests/engine/sc-test-gguf.h"

static const int32_t ids[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10 };
#define N ((int) G_N_ELEMENTS (ids))

typedef struct {
  int layer;
  float *probs; /* (H, N, N) of @layer (keep_probs_n: (H, n, n)) */
  int n;
} Probs;

static bool
keep_probs (void *user, int layer, int head, const float *p, int n_query, int n_key)
{
  Probs *c = user;

  g_assert_cmpint (n_query, ==, N);
  g_assert_cmpint (n_key, ==, N);
  if (layer == c->layer)
    memcpy (c->probs + (gsize) head * N * N, p, (gsize) N * N * sizeof *p);
  return true;
}

static bool
keep_probs_n (void *user, int layer, int head, const float *p, int n_query, int n_key)
{
  Probs *c = user;

  g_assert_cmpint (n_query, ==, c->n);
  g_assert_cmpint (n_key, ==, c->n);
  if (layer == c->layer)
    memcpy (c->probs + (gsize) head * c->n * c->n, p, (gsize) c->n * c->n * sizeof *p);
  return true;
}

/* 1. */
static void
test_sum_is_score (void)
{
  ScModel *m = sc_test_tiny_model ();
  const ScModelInfo *in = sc_model_info (m);
  const int H = (int) in->n_heads, d = (int) in->head_dim, Hkv = (int) in->n_kv_heads;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScError err = { 0 };
  g_autofree float *q = g_new (float, (gsize) N * H * d);
  g_autofree float *k = g_new (float, (gsize) N * Hkv * d);
  g_autofree float *logits = g_new (float, in->n_vocab);
  Probs pc = { 0 };
  ScObserver obs = { .observe = keep_probs, .user = &pc };
  ScForwardOptions opt = { .observer = &obs };
  int checked = 0;

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  pc.probs = g_new (float, (gsize) H * N * N);
  for (int layer = 0; layer < (int) in->n_layers; layer++)
    {
      pc.layer = layer;
      g_assert_cmpint (sc_forward (s, ids, N, &opt, logits, &err), ==, SC_OK);
      g_assert_cmpint (sc_session_layer_qk (s, ids, N, layer, q, k, &err), ==, SC_OK);
      for (int h = 0; h < H; h++)
        {
          const int g = h / (H / Hkv);
          for (int i = 0; i < N; i++)
            {
              double sums[N], mx = -INFINITY, z = 0.0;
              for (int j = 0; j <= i; j++)
                {
                  ScQkParams p = { .layer = layer, .head = h, .query = i, .key = j };
                  ScQkResult *r = NULL;
                  double dot = 0.0, nq = 0.0, nk = 0.0, score, bound, sum = 0.0;
                  for (int e = 0; e < d; e++)
                    {
                      const double a = q[((gsize) i * H + h) * d + e];
                      const double c = k[((gsize) j * Hkv + g) * d + e];
                      dot += a * c;
                      nq += a * a;
                      nk += c * c;
                    }
                  score = dot * in->attn_scale;
                  bound = 1e-5 * fmax (fabs (score), in->attn_scale * sqrt (nq * nk));
                  g_assert_cmpint (sc_qk_run (s, m, ids, N, &p, &r, &err), ==, SC_OK);
                  g_assert_cmpint (r->n_comp, ==, 1 + layer * (H + 1));
                  for (int c = 0; c < r->n_comp * r->n_comp; c++)
                    sum += r->parts[c];
                  g_assert_cmpfloat (fabs (sum - r->total), <=, 1e-12 * (1 + fabs (sum)));
                  if (!(fabs (r->total - score) <= bound && fabs (r->score - score) <= bound))
                    g_error ("layer %d head %d (%d, %d): parts sum to %.9g, the study's score "
                             "%.9g, layer_qk's %.9g (bound %.3g)", layer, h, i, j, r->total,
                             r->score, score, bound);
                  if (layer == 0)
                    g_assert_cmpfloat (r->parts[0], ==, r->total);
                  sums[j] = r->total;
                  mx = fmax (mx, sums[j]);
                  sc_qk_result_free (r);
                  checked++;
                }
              for (int j = 0; j <= i; j++)
                z += exp (sums[j] - mx);
              for (int j = 0; j <= i; j++)
                g_assert_cmpfloat (fabs (exp (sums[j] - mx) / z
                                         - pc.probs[((gsize) h * N + i) * N + j]), <=, 1e-5);
            }
        }
    }
  g_test_message ("%d (layer, head, i, j) checked", checked);
  g_free (pc.probs);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

/* 4. qwen2 and gpt2: the components of their constants. For each (layer, head) of @checks
 * on the model at @path (@ids), each i (@every_row; else the last) and j <= i, the parts —
 * with "bias" (and gpt2's "pos") — sum to the score the forward pass's own q and k give
 * (the study's observer) within 1e-4 of max (1, |score|), and the softmax over j <= i of the sums is the attention the forward
 * pass observed, within 1e-4; the constants' components carry something (a part of the
 * bias row or column, gpt2's pos row, is not 0) and are named so. */
typedef struct {
  int layer, head;
} QkCheck;

/* Why a real model's case was skipped, or NULL: main then exits 77, so that meson and
 * .ci/run see the skip instead of a pass. */
static char *skipped;

static void
check_constants (const char *path, const int32_t *ids_, int n, const QkCheck *checks,
                 int n_checks, int n_extra, gboolean every_row)
{
  ScModel *m = NULL;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScError err = { 0 };
  const ScModelInfo *in;
  g_autofree float *logits = NULL;
  Probs pc = { 0 };
  ScObserver obs = { .observe = keep_probs_n, .user = &pc };
  ScForwardOptions opt = { .observer = &obs };
  double worst = 0.0;
  int checked = 0;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_free (skipped);
      skipped = g_strdup_printf ("%s is not fetched (data/fetch-model.sh)", path);
      g_test_skip (skipped);
      sc_backend_free (b);
      return;
    }
  if (sc_model_open (path, 2, &m, &err) != SC_OK)
    g_error ("%s", err.message);
  in = sc_model_info (m);
  g_assert_cmpint (sc_qk_n_extra (in), ==, n_extra);
  logits = g_new (float, in->n_vocab);
  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  pc.n = n;
  pc.probs = g_new (float, (gsize) in->n_heads * n * n);
  for (int c = 0; c < n_checks; c++)
    {
      const int layer = checks[c].layer, h = checks[c].head;
      pc.layer = layer;
      g_assert_cmpint (sc_forward (s, ids_, n, &opt, logits, &err), ==, SC_OK);
      for (int i = every_row ? 0 : n - 1; i < n; i++)
        {
          double sums[64], mx = -INFINITY, z = 0.0;
          g_assert_cmpint (n, <=, 64);
          for (int j = 0; j <= i; j++)
            {
              ScQkParams p = { .layer = layer, .head = h, .query = i, .key = j };
              ScQkResult *r = NULL;
              char name[16];
              double bias_mass = 0.0;
              int C;
              if (sc_qk_run (s, m, ids_, n, &p, &r, &err) != SC_OK)
                g_error ("%s", err.message);
              C = r->n_comp;
              g_assert_cmpint (r->n_extra, ==, n_extra);
              g_assert_cmpint (C, ==, 1 + layer * ((int) in->n_heads + 1) + n_extra);
              g_assert_cmpint (sc_qk_component_name (r, C - 1, name, sizeof name), >, 0);
              g_assert_cmpstr (name, ==, "bias");
              if (n_extra == 2)
                {
                  double pos_mass = 0.0;
                  g_assert_cmpint (sc_qk_component_name (r, C - 2, name, sizeof name), >, 0);
                  g_assert_cmpstr (name, ==, "pos");
                  for (int k = 0; k < C; k++)
                    pos_mass += fabs (r->parts[(gsize) (C - 2) * C + k]);
                  g_assert_cmpfloat (pos_mass, >, 0.0);
                }
              for (int k = 0; k < C; k++)
                bias_mass += fabs (r->parts[(gsize) (C - 1) * C + k])
                             + fabs (r->parts[(gsize) k * C + C - 1]);
              g_assert_cmpfloat (bias_mass, >, 0.0);
              worst = fmax (worst, fabs (r->total - r->score) / fmax (1.0, fabs (r->score)));
              if (!(fabs (r->total - r->score) <= 1e-4 * fmax (1.0, fabs (r->score))))
                g_error ("%s layer %d head %d (%d, %d): the parts sum to %.9g, the forward "
                         "pass's score is %.9g", in->arch_name, layer, h, i, j, r->total,
                         r->score);
              sums[j] = r->total;
              mx = fmax (mx, sums[j]);
              sc_qk_result_free (r);
              checked++;
            }
          for (int j = 0; j <= i; j++)
            z += exp (sums[j] - mx);
          for (int j = 0; j <= i; j++)
            g_assert_cmpfloat (fabs (exp (sums[j] - mx) / z
                                     - pc.probs[((gsize) h * n + i) * n + j]), <=, 1e-4);
        }
    }
  g_test_message ("%s: %d (layer, head, i, j) checked; largest |Σ parts − score| / "
                  "max (1, |score|) %.3g", in->arch_name, checked, worst);
  g_free (pc.probs);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

static void
test_gpt2 (void)
{
  static const int32_t gpt2_ids[] = { 3, 17, 42, 8, 99, 5, 61, 23, 7, 30 };
  g_autofree char *path = g_build_filename (g_getenv ("SC_TEST_REFERENCE_DIR"),
                                            "tiny-gpt2.gguf", NULL);
  ScModel *m = NULL;
  ScError err = { 0 };
  GArray *checks = g_array_new (FALSE, FALSE, sizeof (QkCheck));
  int L, H;

  if (sc_model_open (path, 1, &m, &err) != SC_OK)
    g_error ("%s", err.message);
  L = (int) sc_model_info (m)->n_layers;
  H = (int) sc_model_info (m)->n_heads;
  g_assert_cmpuint (sc_model_info (m)->n_vocab, >, 99);
  sc_model_free (m);
  /* every head of every layer, every (i >= j) */
  for (int l = 0; l < L; l++)
    for (int h = 0; h < H; h++)
      g_array_append_val (checks, ((QkCheck) { l, h }));
  check_constants (path, gpt2_ids, (int) G_N_ELEMENTS (gpt2_ids), (const QkCheck *) checks->data,
                   (int) checks->len, 2, TRUE);
  g_array_unref (checks);
}

static void
test_qwen2 (void)
{
  /* the ids of test-ablation-last's Qwen2.5 sentence */
  static const int32_t qwen2_ids[] = { 785, 8251, 61820, 279, 4935, 1576, 432, 572 };
  static const QkCheck checks[] = { { 0, 0 }, { 12, 5 }, { 23, 13 } };
  g_autofree char *path = g_getenv ("SACCADE_QWEN2_MODEL") != NULL
                            ? g_strdup (g_getenv ("SACCADE_QWEN2_MODEL"))
                            : g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"), "data",
                                                "models",
                                                "Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf", NULL);

  check_constants (path, qwen2_ids, (int) G_N_ELEMENTS (qwen2_ids), checks,
                   (int) G_N_ELEMENTS (checks), 1, FALSE);
}

/* 2. */
static void
test_zero_head (void)
{
  gsize len;
  const void *src = g_bytes_get_data (sc_test_tiny_bytes (), &len);
  g_autoptr (GBytes) bytes = g_bytes_new (src, len); /* the model may point into them */
  ScModel *m = sc_test_model_open_bytes (bytes);
  const ScModelInfo *in = sc_model_info (m);
  const int H = (int) in->n_heads, d = (int) in->head_dim, E = (int) in->n_embd;
  const int Q = H * d, zh = 2;
  float *wo = sc_model_weights (m)->layers[0].wo;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScError err = { 0 };
  ScQkParams p = { .layer = 1, .head = 1, .query = N - 1, .key = 3 };
  ScQkResult *r = NULL;
  double sum = 0.0, other = 0.0;
  int c0 = 1 + zh, C;

  for (int e = 0; e < E; e++)
    for (int c = zh * d; c < (zh + 1) * d; c++)
      wo[(gsize) e * Q + c] = 0.0f;
  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_qk_run (s, m, ids, N, &p, &r, &err), ==, SC_OK);
  C = r->n_comp;
  {
    char name[16];
    g_assert_cmpint (sc_qk_component_name (r, c0, name, sizeof name), >, 0);
    g_assert_cmpstr (name, ==, "L0.H2");
    sc_qk_component_name (r, 0, name, sizeof name);
    g_assert_cmpstr (name, ==, "embed");
    sc_qk_component_name (r, C - 1, name, sizeof name);
    g_assert_cmpstr (name, ==, "MLP0");
    g_assert_cmpint (sc_qk_component_name (r, C, name, sizeof name), ==, -1);
  }
  for (int a = 0; a < C; a++)
    for (int c = 0; c < C; c++)
      {
        const double v = r->parts[(gsize) a * C + c];
        if (a == c0 || c == c0)
          g_assert_cmpfloat (v, ==, 0.0);
        else
          other = fmax (other, fabs (v));
        sum += v;
      }
  g_assert_cmpfloat (other, >, 1e-3); /* the others are not zero: the test could fail */
  g_assert_cmpfloat (fabs (sum - r->score), <=, 1e-5 * fmax (1.0, fabs (r->score)));
  sc_qk_result_free (r);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

/* 3. */
static void
test_store_roundtrip (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-qk-XXXXXX", NULL);
  g_autofree char *model_path = g_build_filename (dir, "tiny.gguf", NULL);
  g_autofree char *db_path = g_build_filename (dir, "s.sqlite", NULL);
  const ScStudyKind *k = sc_study_kind_find ("qk");
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreModel sm;
  ScModel *m = NULL;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScQkParams p = { .layer = -1, .head = 3, .query = -1, .key = 4 };
  ScStudyCtx ctx = { 0 };
  void *r = NULL, *back = NULL;
  ScError err = { 0 };
  char pj[SC_STUDY_PARAMS_MAX];
  int64_t id = 0, id2 = 0;
  gsize len;
  const void *d = g_bytes_get_data (sc_test_tiny_bytes (), &len);

  g_assert_nonnull (k);
  g_assert_true (g_file_set_contents (model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (model_path, 1, &m, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_model_identify (m, model_path, &sm, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);
  ctx = (ScStudyCtx) { .model = m, .session = s, .run_id = 3, .ids = ids, .n_tokens = N };
  /* the defaults resolve: the middle layer of 2 is 1, the last position 9 */
  g_assert_cmpint (sc_study_params_json (k, &p, &ctx, pj, sizeof pj, &err), ==, SC_OK);
  g_assert_cmpstr (pj, ==, "{\"study\":1,\"run\":3,\"layer\":1,\"head\":3,\"query\":9,"
                           "\"key\":4}");
  g_assert_cmpint (sc_study_run (k, &ctx, &p, &r, &err), ==, SC_OK);
  g_assert_cmpint (k->store (store, &sm, pj, r, &id, &err), ==, SC_OK);
  g_assert_cmpint (k->load (store, sc_model_info (m), sm.sha256, pj, &p, &back, &id2, &err), ==,
                   SC_OK);
  g_assert_cmpint (id2, ==, id);
  {
    const ScQkResult *a = r, *c = back;
    g_assert_cmpint (c->n_comp, ==, a->n_comp);
    g_assert_cmpint (c->layer, ==, 1);
    g_assert_cmpint (c->head, ==, 3);
    g_assert_cmpint (c->query, ==, 9);
    g_assert_cmpint (c->key, ==, 4);
    g_assert_cmpint (c->top1_clean, ==, a->top1_clean);
    g_assert_cmpmem (&c->score, sizeof (double), &a->score, sizeof (double));
    g_assert_cmpmem (&c->rms_q, sizeof (double), &a->rms_q, sizeof (double));
    g_assert_cmpmem (&c->rms_k, sizeof (double), &a->rms_k, sizeof (double));
    g_assert_cmpmem (c->parts, (gsize) a->n_comp * a->n_comp * sizeof (double), a->parts,
                     (gsize) a->n_comp * a->n_comp * sizeof (double));
  }
  k->result_free (back);
  back = NULL;
  sc_store_close (store);
  {
    /* someone else's database: one part moved by 0.5 */
    g_autofree char *sql = g_strdup_printf ("UPDATE study_series SET value = value + 0.5 WHERE "
                                            "study_id = %lld AND series = 'part' AND pos = 7",
                                            (long long) id);
    sqlite3 *h;
    g_assert_cmpint (sqlite3_open (db_path, &h), ==, SQLITE_OK);
    g_assert_cmpint (sqlite3_exec (h, sql, NULL, NULL, NULL), ==, SQLITE_OK);
    g_assert_cmpint (sqlite3_changes (h), ==, 1);
    sqlite3_close (h);
  }
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (k->load (store, sc_model_info (m), sm.sha256, pj, &p, &back, NULL, &err), ==,
                   SC_ERR_FORMAT);
  g_assert_nonnull (strstr (err.message, SC_QK_STUDY_KIND));
  g_assert_null (back);
  sc_store_close (store);
  /* out of range: a key after the query, a head beyond the model's */
  p = (ScQkParams) { .layer = 1, .head = 0, .query = 3, .key = 4 };
  g_assert_cmpint (sc_study_params_json (k, &p, &ctx, pj, sizeof pj, &err), ==,
                   SC_ERR_INVALID_ARG);
  p = (ScQkParams) { .layer = 1, .head = 4, .query = 3, .key = 0 };
  g_assert_cmpint (sc_study_params_json (k, &p, &ctx, pj, sizeof pj, &err), ==,
                   SC_ERR_INVALID_ARG);

  k->result_free (r);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
  g_remove (db_path);
  g_remove (model_path);
  g_rmdir (dir);
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/qk/sum-is-score", test_sum_is_score);
  g_test_add_func ("/qk/zero-head", test_zero_head);
  g_test_add_func ("/qk/store-roundtrip", test_store_roundtrip);
  g_test_add_func ("/qk/gpt2-constants", test_gpt2);
  g_test_add_func ("/qk/qwen2-constants", test_qwen2);
  rc = g_test_run ();
  if (rc == 0 && skipped != NULL)
    {
      g_printerr ("skipped: %s\n", skipped);
      rc = 77;
    }
  g_free (skipped);
  return rc;
}
