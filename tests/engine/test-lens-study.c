/* test-lens-study.c — the logit lens (engine/study/sc-lens-study.h) and the output head on
 * given rows (sc_session_unembed), on the tiny llama of sc-test-gguf (2 layers × 4 heads).
 *
 * 1. The output head on the final residual gives the run's own last logits bit for bit
 *    (the lens's last entry is the model's prediction), and every row of a run its logits;
 *    in chunks when a session holds fewer rows than asked; a non-finite row is refused.
 * 2. Each layer's entry is the output head on that layer's kept residual: ln p, the rank
 *    (logits strictly above the target's), the top-1 and logit(A) − logit(B), recomputed
 *    here from sc_session_residual and sc_session_unembed.
 * 3. Stored and read back through the kind: the same numbers; a fractional rank and a
 *    contrast other than the params' refused; the contrast equal to the target refused.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "engine/analysis/sc-effect.h"
#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store.h"
#include "engine/store/sc-store-study.h"
#include "engine/study/sc-lens-study.h"
#include "engine/study/sc-study.h"
#include "tests/engine/sc-test-gguf.h"

static const int32_t ids[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10 };
#define N ((int) G_N_ELEMENTS (ids))

static void
assert_same_double (double a, double b)
{
  g_assert_cmpmem (&a, sizeof a, &b, sizeof b);
}

/* 1. */
static void
test_unembed (void)
{
  ScModel *m = sc_test_tiny_model ();
  const ScModelInfo *in = sc_model_info (m);
  const int L = (int) in->n_layers, E = (int) in->n_embd, V = (int) in->n_vocab;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL, *fresh = NULL;
  ScError err = { 0 };
  ScForwardOptions opt = { .keep_residuals = true };
  g_autofree float *last = g_new (float, V);
  g_autofree float *all = g_new (float, (gsize) N * V);
  g_autofree float *rows = g_new (float, (gsize) N * E);
  g_autofree float *got = g_new (float, (gsize) N * V);

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_forward (s, ids, N, &opt, last, &err), ==, SC_OK);
  for (int q = 0; q < N; q++)
    g_assert_cmpint (sc_session_residual (s, L, q, rows + (gsize) q * E, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_unembed (s, rows + (gsize) (N - 1) * E, 1, got, &err), ==, SC_OK);
  g_assert_cmpmem (got, (gsize) V * sizeof *got, last, (gsize) V * sizeof *last);
  /* every row at once against the run's every row */
  opt.all_logits = true;
  g_assert_cmpint (sc_forward (s, ids, N, &opt, all, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_unembed (s, rows, N, got, &err), ==, SC_OK);
  g_assert_cmpmem (got, (gsize) N * V * sizeof *got, all, (gsize) N * V * sizeof *all);
  /* a session that has run 3 tokens does N rows in chunks of 3: the same rows as one at a
   * time, to float32 rounding (BLAS sums a 3-row and a 1-row product in other orders) */
  g_assert_cmpint (sc_session_new (m, b, &fresh, &err), ==, SC_OK);
  opt = (ScForwardOptions) { 0 };
  g_assert_cmpint (sc_forward (fresh, ids, 3, &opt, last, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_unembed (fresh, rows, N, got, &err), ==, SC_OK);
  for (int q = 0; q < N; q++)
    {
      g_assert_cmpint (sc_session_unembed (s, rows + (gsize) q * E, 1, last, &err), ==, SC_OK);
      for (int t = 0; t < V; t++)
        g_assert_cmpfloat (fabsf (got[(gsize) q * V + t] - last[t]), <=, 1e-5f);
    }
  rows[3] = NAN;
  g_assert_cmpint (sc_session_unembed (s, rows, N, got, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "row 0"));
  g_assert_cmpint (sc_session_unembed (s, rows, 0, got, &err), ==, SC_ERR_INVALID_ARG);
  sc_session_free (fresh);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

/* 2. */
static void
test_layers (void)
{
  ScModel *m = sc_test_tiny_model ();
  const ScModelInfo *in = sc_model_info (m);
  const int L = (int) in->n_layers, E = (int) in->n_embd, V = (int) in->n_vocab;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL, *s2 = NULL;
  ScLensResult *r = NULL;
  ScError err = { 0 };
  ScForwardOptions opt = { .keep_residuals = true };
  const ScLensParams p = { .target = 101, .contrast = 44 };
  g_autofree float *rows = g_new (float, (gsize) (L + 1) * E);
  g_autofree float *all = g_new (float, (gsize) (L + 1) * V);

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_new (m, b, &s2, &err), ==, SC_OK);
  g_assert_cmpint (sc_lens_run (s, m, ids, N, &p, &r, &err), ==, SC_OK);
  g_assert_cmpint (r->target, ==, 101);
  g_assert_cmpint (r->contrast, ==, 44);
  g_assert_cmpint (sc_forward (s2, ids, N, &opt, NULL, &err), ==, SC_OK);
  /* every layer's last row through the output head at once, as the definition reads */
  for (int l = 0; l <= L; l++)
    g_assert_cmpint (sc_session_residual (s2, l, N - 1, rows + (gsize) l * E, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_unembed (s2, rows, L + 1, all, &err), ==, SC_OK);
  for (int l = 0; l <= L; l++)
    {
      const float *logits = all + (gsize) l * V;
      double logp;
      int above = 0;
      g_assert_cmpint (sc_log_softmax_at (logits, V, 101, &logp, &err), ==, SC_OK);
      for (int t = 0; t < V; t++)
        above += logits[t] > logits[101];
      assert_same_double (r->logp[l], logp);
      g_assert_cmpint (r->rank[l], ==, above);
      g_assert_cmpint (r->top1[l], ==, sc_logits_top1 (logits, V));
      assert_same_double (r->m[l], (double) logits[101] - (double) logits[44]);
    }
  sc_lens_result_free (r);
  r = NULL;
  /* the contrast equal to the target, named or the clean top-1 */
  {
    const ScLensParams same = { .target = 101, .contrast = 101 };
    g_assert_cmpint (sc_lens_run (s, m, ids, N, &same, &r, &err), ==, SC_ERR_INVALID_ARG);
    g_assert_null (r);
  }
  sc_session_free (s);
  sc_session_free (s2);
  sc_backend_free (b);
  sc_model_free (m);
}

/* 3. */
static void
test_store_roundtrip (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-lens-XXXXXX", NULL);
  g_autofree char *model_path = g_build_filename (dir, "tiny.gguf", NULL);
  g_autofree char *db_path = g_build_filename (dir, "s.sqlite", NULL);
  const ScStudyKind *k = sc_study_kind_find ("lens");
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreModel sm;
  ScModel *m = NULL;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScLensParams p = { .target = -1, .contrast = 44 };
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
  g_assert_cmpint (sc_study_params_json (k, &p, &ctx, pj, sizeof pj, &err), ==, SC_OK);
  g_assert_cmpstr (pj, ==, "{\"study\":1,\"run\":3,\"target\":null,\"contrast\":44}");
  g_assert_cmpint (sc_study_run (k, &ctx, &p, &r, &err), ==, SC_OK);
  g_assert_cmpint (k->store (store, &sm, pj, r, &id, &err), ==, SC_OK);
  g_assert_cmpint (k->load (store, sc_model_info (m), sm.sha256, pj, &p, &back, &id2, &err), ==,
                   SC_OK);
  g_assert_cmpint (id2, ==, id);
  {
    const ScLensResult *a = r, *c = back;
    g_assert_cmpint (c->contrast, ==, 44);
    g_assert_cmpint (c->target, ==, a->target);
    for (int l = 0; l <= a->n_layers; l++)
      {
        assert_same_double (c->logp[l], a->logp[l]);
        assert_same_double (c->m[l], a->m[l]);
        g_assert_cmpint (c->rank[l], ==, a->rank[l]);
        g_assert_cmpint (c->top1[l], ==, a->top1[l]);
      }
  }
  k->result_free (back);
  back = NULL;
  sc_store_close (store);
  {
    /* someone else's database: a rank of 2.5 */
    g_autofree char *sql = g_strdup_printf ("UPDATE study_series SET value = 2.5 WHERE "
                                            "study_id = %lld AND series = 'rank' AND pos = 1",
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
  g_assert_nonnull (strstr (err.message, SC_LENS_STUDY_KIND));
  g_assert_null (back);
  sc_store_close (store);
  /* the contrast equal to the target: no params text */
  p.target = 44;
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
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/lens/unembed", test_unembed);
  g_test_add_func ("/lens/layers", test_layers);
  g_test_add_func ("/lens/store-roundtrip", test_store_roundtrip);
  return g_test_run ();
}
