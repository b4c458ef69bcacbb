/* test-dla.c — direct logit attribution (engine/study/sc-dla.h).
 *
 * 1. By construction, on the tiny llama: embed + Σ heads + Σ MLPs = u · x_L in double
 *    (bound 1e-9 relative to Σ |terms|: a telescoping sum of doubles), and u · x_L equals
 *    the logit the forward pass computed in float (bound 1e-5 · (1 + Σ_e |u_e x_e|): the
 *    output head's float rmsnorm and dot product). For the top-1 and for a named target.
 * 2. Heads by construction: with every layer's FFN down weights zeroed, the MLPs write
 *    nothing, so the logit is embed + Σ_h dla_h alone (each MLP term within 1e-5 of 0, the
 *    float rounding of the residual additions) — and each head's term equals a brute-force
 *    u · (W_O[:, block h] · o_h) recomputed here from the observer's attention output.
 * 3. Bad input refused (no tokens, a target out of range); the session's other runs are
 *    unaffected (a plain run after a DLA gives the same logits as before).
 * 6. Contrast: with a contrast B every term is the target's term minus B's (u is linear
 *    in the unembedding row and the norm's scale is the same run's): within 1e-9 of the
 *    two single-target studies' difference, and the identity holds for logit(A) −
 *    logit(B), the difference the forward pass computed. A contrast equal to the target
 *    (named, or the clean top-1 when the target is the default) or outside the vocabulary
 *    is refused.
 * 4. Store round trip (with and without a contrast; the text without one is the one
 *    stored before contrasts existed); a stored study with a missing head value or a
 *    NaN, or a contrast its parameters do not name, is refused.
 * 5. SmolLM2 (skipped when not fetched): identity 1 on "The cat chased the ball because it
 *    was tired." (bound 1e-4 · (1 + Σ |terms|)).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "engine/backend/sc-backend.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store-study.h"
#include "engine/study/sc-dla.h"
#include "tests/engine/sc-test-gguf.h"

static const int32_t ids[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10, 200, 201 };
#define N ((int) G_N_ELEMENTS (ids))

/* Σ of |terms| and their sum. */
static double
terms_sum (const ScDlaResult *r, double *abs_sum)
{
  double s = r->embed, a = fabs (r->embed);
  int i;

  for (i = 0; i < r->n_layers * r->n_heads; i++)
    {
      s += r->heads[i];
      a += fabs (r->heads[i]);
    }
  for (i = 0; i < r->n_layers; i++)
    {
      s += r->mlp[i];
      a += fabs (r->mlp[i]);
    }
  *abs_sum = a;
  return s;
}

static void
check_identity (const ScDlaResult *r, double float_bound)
{
  double a, s = terms_sum (r, &a);

  g_test_message ("terms - u.x_L = %.3g, u.x_L - float logit = %.3g, sum |terms| = %.4g",
                  s - r->logit_recon, r->logit_recon - r->logit_clean, a);
  g_assert_cmpfloat (fabs (s - r->logit_recon), <=, 1e-9 * (1.0 + a));
  g_assert_cmpfloat (fabs (r->logit_recon - r->logit_clean), <=, float_bound * (1.0 + a));
  g_assert_cmpfloat (r->rms, >, 0.0);
}

static void
test_identity (void)
{
  ScModel *m = sc_test_tiny_model ();
  const ScModelInfo *in = sc_model_info (m);
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScDlaResult *r = NULL;
  ScError err = { 0 };
  float *before = g_new (float, in->n_vocab), *after = g_new (float, in->n_vocab);

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_forward (s, ids, N, NULL, before, &err), ==, SC_OK);
  g_assert_cmpint (sc_dla_run (s, m, ids, N, -1, -1, &r, &err), ==, SC_OK);
  g_assert_cmpint (r->target, ==, r->top1_clean);
  g_assert_cmpint (r->n_tokens, ==, N);
  check_identity (r, 1e-5);
  sc_dla_result_free (r);
  r = NULL;
  /* a named target other than the top-1 */
  g_assert_cmpint (sc_dla_run (s, m, ids, N, 77, -1, &r, &err), ==, SC_OK);
  g_assert_cmpint (r->target, ==, 77);
  g_assert_cmpfloat (r->logit_clean, ==, before[77]);
  check_identity (r, 1e-5);
  g_assert_cmpint (sc_forward (s, ids, N, NULL, after, &err), ==, SC_OK);
  g_assert_cmpmem (before, in->n_vocab * sizeof (float), after, in->n_vocab * sizeof (float));
  sc_dla_result_free (r);
  r = NULL;

  /* 3. bad input */
  g_assert_cmpint (sc_dla_run (s, m, ids, 0, -1, -1, &r, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_cmpint (sc_dla_run (s, m, ids, N, (int) in->n_vocab, -1, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "target"));
  g_assert_cmpint (sc_dla_run (s, m, ids, N, -2, -1, &r, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_null (r);
  g_free (before);
  g_free (after);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

/* 6. ---------------------------------------------------------------------------------- */

static void
test_contrast (void)
{
  ScModel *m = sc_test_tiny_model ();
  const ScModelInfo *in = sc_model_info (m);
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScDlaResult *a = NULL, *bb = NULL, *c = NULL;
  ScError err = { 0 };
  float *logits = g_new (float, in->n_vocab);
  double abs_sum;
  int i;

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_forward (s, ids, N, NULL, logits, &err), ==, SC_OK);
  g_assert_cmpint (sc_dla_run (s, m, ids, N, 77, -1, &a, &err), ==, SC_OK);
  g_assert_cmpint (sc_dla_run (s, m, ids, N, 5, -1, &bb, &err), ==, SC_OK);
  g_assert_cmpint (sc_dla_run (s, m, ids, N, 77, 5, &c, &err), ==, SC_OK);
  g_assert_cmpint (c->target, ==, 77);
  g_assert_cmpint (c->contrast, ==, 5);
  g_assert_cmpint (a->contrast, ==, -1);
  g_assert_cmpfloat (c->logit_clean, ==, (double) logits[77] - (double) logits[5]);
  check_identity (c, 1e-5);
  terms_sum (c, &abs_sum);
  g_assert_cmpfloat (fabs (c->embed - (a->embed - bb->embed)), <=, 1e-9 * (1.0 + abs_sum));
  for (i = 0; i < c->n_layers * c->n_heads; i++)
    g_assert_cmpfloat (fabs (c->heads[i] - (a->heads[i] - bb->heads[i])), <=,
                       1e-9 * (1.0 + abs_sum));
  for (i = 0; i < c->n_layers; i++)
    g_assert_cmpfloat (fabs (c->mlp[i] - (a->mlp[i] - bb->mlp[i])), <=, 1e-9 * (1.0 + abs_sum));
  g_assert_cmpfloat (c->rms, ==, a->rms);
  sc_dla_result_free (a);
  sc_dla_result_free (bb);
  sc_dla_result_free (c);
  c = NULL;

  /* refused: the contrast is the target, named or the clean top-1; outside the vocabulary */
  g_assert_cmpint (sc_dla_run (s, m, ids, N, 77, 77, &c, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "contrast 77 is the target"));
  g_assert_cmpint (sc_dla_run (s, m, ids, N, -1, sc_logits_top1 (logits, (int) in->n_vocab),
                               &c, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "the clean top-1"));
  g_assert_cmpint (sc_dla_run (s, m, ids, N, -1, (int) in->n_vocab, &c, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "contrast"));
  g_assert_cmpint (sc_dla_run (s, m, ids, N, -1, -2, &c, &err), ==, SC_ERR_INVALID_ARG);
  g_assert_null (c);
  g_free (logits);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

/* 2. ---------------------------------------------------------------------------------- */

typedef struct {
  int Q;
  float *o; /* (L, Q) at the last row */
} Last;

static bool
keep_last (void *user, int layer, const float *o, int n_query, int width)
{
  Last *c = user;

  g_assert_cmpint (width, ==, c->Q);
  memcpy (c->o + (size_t) layer * width, o + (size_t) (n_query - 1) * width,
          (size_t) width * sizeof *o);
  return true;
}

static void
test_heads_by_construction (void)
{
  /* A model of our own: the tiny llama's bytes opened afresh, so zeroing its weights
   * touches no other test's model. */
  ScModel *m = sc_test_model_open_bytes (sc_test_tiny_bytes ());
  const ScModelInfo *in = sc_model_info (m);
  const ScWeights *w = sc_model_weights (m);
  const int L = (int) in->n_layers, H = (int) in->n_heads, d = (int) in->head_dim,
            E = (int) in->n_embd, Q = H * d;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScDlaResult *r = NULL;
  ScError err = { 0 };
  Last c = { Q, g_new (float, (gsize) L * Q) };
  ScObserver obs = { 0 };
  ScForwardOptions opt = { .observer = &obs };
  double heads = 0.0, a;
  int l, h, e, k;

  for (l = 0; l < L; l++) /* before the session binds the weights */
    memset (w->layers[l].w_down, 0, (size_t) E * in->n_ff * sizeof (float));
  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_dla_run (s, m, ids, N, -1, -1, &r, &err), ==, SC_OK);
  check_identity (r, 1e-5);
  terms_sum (r, &a);
  for (l = 0; l < L; l++)
    g_assert_cmpfloat (fabs (r->mlp[l]), <=, 1e-5 * (1.0 + a));
  for (k = 0; k < L * H; k++)
    heads += r->heads[k];
  g_assert_cmpfloat (fabs (r->embed + heads - r->logit_clean), <=, 1e-5 * (1.0 + a));

  /* each head's term by brute force: u · (W_O[:, block h] o_h) */
  obs.attn_output = keep_last;
  obs.user = &c;
  g_assert_cmpint (sc_forward (s, ids, N, &opt, NULL, &err), ==, SC_OK);
  for (l = 0; l < L; l++)
    for (h = 0; h < H; h++)
      {
        double dla = 0.0;
        for (e = 0; e < E; e++)
          {
            double y = 0.0;
            for (k = 0; k < d; k++)
              y += (double) w->layers[l].wo[(size_t) e * Q + h * d + k]
                   * c.o[(size_t) l * Q + h * d + k];
            dla += (double) w->output[(size_t) r->target * E + e] * w->output_norm[e] / r->rms
                   * y;
          }
        g_assert_cmpfloat (fabs (dla - r->heads[l * H + h]), <=, 1e-12 * (1.0 + a));
      }
  /* the heads are not all zero (else the identity above says nothing about them) */
  g_assert_cmpfloat (fabs (heads) + fabs (r->heads[0]), >, 1e-4);
  g_free (c.o);
  sc_dla_result_free (r);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

/* 4. ---------------------------------------------------------------------------------- */

static void
test_store (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-dla-XXXXXX", NULL);
  g_autofree char *model_path = g_build_filename (dir, "tiny.gguf", NULL);
  g_autofree char *db_path = g_build_filename (dir, "s.sqlite", NULL);
  ScStoreOptions so = { .writable = true };
  ScStore *store = NULL;
  ScStoreModel sm;
  ScModel *m = NULL;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScDlaResult *r = NULL, *back = NULL;
  ScStoreStudy *st = NULL;
  ScError err = { 0 };
  char pj[64];
  int64_t id = 0, id2 = 0;
  gsize len;
  const void *d;
  int i, k;

  d = g_bytes_get_data (sc_test_tiny_bytes (), &len);
  g_assert_true (g_file_set_contents (model_path, d, (gssize) len, NULL));
  g_assert_cmpint (sc_model_open (model_path, 1, &m, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_model_identify (m, model_path, &sm, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (db_path, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_dla_run (s, m, ids, N, -1, -1, &r, &err), ==, SC_OK);
  g_assert_cmpint (sc_dla_params_json (4, -1, -1, pj, sizeof pj), >, 0);
  g_assert_cmpstr (pj, ==, "{\"study\":1,\"run\":4,\"target\":null}");
  g_assert_cmpint (sc_dla_params_json (4, 12, -1, pj, 8), ==, -1);
  g_assert_cmpint (sc_dla_load (store, sc_model_info (m), sm.sha256, pj, &back, NULL, &err), ==,
                   SC_ERR_NOT_FOUND);
  g_assert_cmpint (sc_dla_store (store, &sm, pj, r, &id, &err), ==, SC_OK);
  g_assert_cmpint (sc_dla_load (store, sc_model_info (m), sm.sha256, pj, &back, &id2, &err), ==,
                   SC_OK);
  g_assert_cmpint (id, ==, id2);
  g_assert_cmpint (back->target, ==, r->target);
  g_assert_cmpint (back->top1_clean, ==, r->top1_clean);
  g_assert_cmpint (back->n_tokens, ==, N);
  g_assert_cmpfloat (back->logit_clean, ==, r->logit_clean);
  g_assert_cmpfloat (back->rms, ==, r->rms);
  g_assert_cmpfloat (back->embed, ==, r->embed);
  g_assert_cmpmem (back->heads, r->n_layers * r->n_heads * sizeof (double), r->heads,
                   r->n_layers * r->n_heads * sizeof (double));
  g_assert_cmpmem (back->mlp, r->n_layers * sizeof (double), r->mlp,
                   r->n_layers * sizeof (double));
  sc_dla_result_free (back);
  back = NULL;

  /* with a contrast: its own text, found apart from the plain study, read back whole */
  {
    char pc[96];
    ScDlaResult *rc = NULL;
    g_assert_cmpint (sc_dla_run (s, m, ids, N, 77, 5, &rc, &err), ==, SC_OK);
    g_assert_cmpint (sc_dla_params_json (4, 77, 5, pc, sizeof pc), >, 0);
    g_assert_cmpstr (pc, ==, "{\"study\":1,\"run\":4,\"target\":77,\"contrast\":5}");
    g_assert_cmpint (sc_dla_load (store, sc_model_info (m), sm.sha256, pc, &back, NULL, &err),
                     ==, SC_ERR_NOT_FOUND);
    g_assert_cmpint (sc_dla_store (store, &sm, pc, rc, NULL, &err), ==, SC_OK);
    g_assert_cmpint (sc_dla_load (store, sc_model_info (m), sm.sha256, pc, &back, NULL, &err),
                     ==, SC_OK);
    g_assert_cmpint (back->contrast, ==, 5);
    g_assert_cmpint (back->target, ==, 77);
    g_assert_cmpfloat (back->logit_clean, ==, rc->logit_clean);
    g_assert_cmpmem (back->heads, rc->n_layers * rc->n_heads * sizeof (double), rc->heads,
                     rc->n_layers * rc->n_heads * sizeof (double));
    sc_dla_result_free (back);
    back = NULL;
    /* the plain study is still the plain one */
    g_assert_cmpint (sc_dla_load (store, sc_model_info (m), sm.sha256, pj, &back, NULL, &err),
                     ==, SC_OK);
    g_assert_cmpint (back->contrast, ==, -1);
    sc_dla_result_free (back);
    back = NULL;
    /* a contrast that is the target, written by hand: refused */
    g_assert_cmpint (sc_store_study_begin (store, SC_DLA_KIND, &sm, pc, &st, &err), ==, SC_OK);
    for (i = 0; i < rc->n_layers * rc->n_heads; i++)
      g_assert_cmpint (sc_store_study_add_head (st, i / rc->n_heads, i % rc->n_heads, "dla",
                                                rc->heads[i], &err), ==, SC_OK);
    for (i = 0; i < rc->n_layers; i++)
      g_assert_cmpint (sc_store_study_add_series (st, "mlp", i, rc->mlp[i], &err), ==, SC_OK);
    {
      const double clean[7] = { 77, rc->logit_clean, rc->top1_clean, rc->rms, N,
                                rc->logit_recon, 77 };
      for (i = 0; i < 7; i++)
        g_assert_cmpint (sc_store_study_add_series (st, "clean", i, clean[i], &err), ==,
                         SC_OK);
    }
    g_assert_cmpint (sc_store_study_add_series (st, "embed", 0, rc->embed, &err), ==, SC_OK);
    g_assert_cmpint (sc_store_study_commit (st, NULL, &err), ==, SC_OK);
    g_assert_cmpint (sc_dla_load (store, sc_model_info (m), sm.sha256, pc, &back, NULL, &err),
                     ==, SC_ERR_FORMAT);
    g_assert_nonnull (strstr (err.message, "contrast 77"));
    g_assert_null (back);
    sc_dla_result_free (rc);
  }

  /* by hand, the latest: head 1.3 missing, then a NaN MLP term */
  for (k = 0; k < 2; k++)
    {
      const double clean[6] = { r->target, r->logit_clean, r->top1_clean, r->rms, N,
                                r->logit_recon };
      g_assert_cmpint (sc_store_study_begin (store, SC_DLA_KIND, &sm, pj, &st, &err), ==, SC_OK);
      for (i = 0; i < r->n_layers * r->n_heads; i++)
        if (k != 0 || i != 1 * r->n_heads + 3)
          g_assert_cmpint (sc_store_study_add_head (st, i / r->n_heads, i % r->n_heads, "dla",
                                                    r->heads[i], &err), ==, SC_OK);
      for (i = 0; i < r->n_layers; i++)
        g_assert_cmpint (sc_store_study_add_series (st, "mlp", i, k == 1 && i == 1 ? NAN
                                                                               : r->mlp[i],
                                                    &err), ==, SC_OK);
      for (i = 0; i < 6; i++)
        g_assert_cmpint (sc_store_study_add_series (st, "clean", i, clean[i], &err), ==, SC_OK);
      g_assert_cmpint (sc_store_study_add_series (st, "embed", 0, r->embed, &err), ==, SC_OK);
      g_assert_cmpint (sc_store_study_commit (st, NULL, &err), ==, SC_OK);
      g_assert_cmpint (sc_dla_load (store, sc_model_info (m), sm.sha256, pj, &back, NULL, &err),
                       ==, SC_ERR_FORMAT);
      g_assert_null (back);
      g_assert_nonnull (strstr (err.message, k == 0 ? "head L1.H3's \"dla\" is missing"
                                                    : "layer 1's \"mlp\" is missing or not "
                                                      "finite"));
    }
  sc_dla_result_free (r);
  sc_store_close (store);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
  g_remove (db_path);
  g_remove (model_path);
  g_rmdir (dir);
}

/* 5. ---------------------------------------------------------------------------------- */

static void
test_default_model (void)
{
  const char *env = g_getenv ("SACCADE_MODEL");
  g_autofree char *path = env != NULL ? g_strdup (env)
                                      : g_build_filename (g_getenv ("SC_TEST_SOURCE_DIR"),
                                                          "data", "models",
                                                          "SmolLM2-135M-Instruct.Q4_1.gguf",
                                                          NULL);
  /* "The cat chased the ball because it was tired." as SmolLM2 tokenizes it */
  const int32_t tok[] = { 504, 2644, 45360, 260, 4405, 975, 357, 436, 12364, 30 };
  ScModel *m = NULL;
  ScBackend *b;
  ScSession *s = NULL;
  ScDlaResult *r = NULL;
  ScError err = { 0 };

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_test_skip ("the default model is not fetched (data/fetch-model.sh)");
      return;
    }
  if (sc_model_open (path, 2, &m, &err) != SC_OK)
    g_error ("%s", err.message);
  b = sc_backend_cpu_new (2, NULL);
  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_dla_run (s, m, tok, G_N_ELEMENTS (tok), -1, -1, &r, &err), ==, SC_OK);
  g_assert_cmpint (r->n_layers * r->n_heads, ==, 270);
  check_identity (r, 1e-4);
  g_test_message ("SmolLM2: target %d, logit %.6f, u.x_L %.6f, embed %.4f", r->target,
                  r->logit_clean, r->logit_recon, r->embed);
  sc_dla_result_free (r);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/dla/identity", test_identity);
  g_test_add_func ("/dla/contrast", test_contrast);
  g_test_add_func ("/dla/heads-by-construction", test_heads_by_construction);
  g_test_add_func ("/dla/store", test_store);
  g_test_add_func ("/dla/default-model", test_default_model);
  return g_test_run ();
}
