/* test-adversarial.c — adversarial attention (study/sc-adversarial.h) on the two-layer model
 * with an induction head by construction (sc-test-induction-model.c), where the answer is
 * known: layer 1 head 0 attends (one-hot, logit 40) from the last token to the token after
 * its earlier occurrence and copies it into the prediction.
 *   1. When the output ignores the head (its output zero-scaled by the base intervention),
 *      its attention can go anywhere: the search reaches JSD near ln 2 (disjoint support
 *      from the one-hot original) at the smallest ε, with TVD 0.
 *   2. When the output depends on it (no intervention), moving the attention moves the
 *      copied token: at small ε the search stays well under ln 2 and under the ignored
 *      head's, and the JSD it reaches grows with ε.
 *   3. Every reported iterate satisfies its constraint; ε is sorted; the study round-trips
 *      through the store and a database edited by someone else is refused; bad parameters
 *      are refused naming them.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "engine/backend/sc-backend.h"
#include "engine/format/sc-gguf.h"
#include "engine/forward/sc-backward.h"
#include "engine/model/sc-model.h"
#include "engine/store/sc-store.h"
#include "engine/study/sc-adversarial.h"
#include "tests/engine/sc-test-gguf.h"

typedef struct {
  GBytes *bytes;
  ScModel *model;
  ScBackend *backend;
  ScSession *session;
  ScGrad *grad;
} Fixture;

/* A random block of 8 byte tokens, then its first 5 again: the last token (the 5th of the
 * block) occurred at position 5, so the induction head looks at position 6. */
static const int32_t IDS[] = { 264, 20, 91, 37, 112, 58, 203, 77, 140, 20, 91, 37, 112, 58 };
enum { N = G_N_ELEMENTS (IDS) };

static void
fixture_open (Fixture *f)
{
  ScGguf *g = NULL;
  ScError err = { 0 };
  gsize n;
  const void *d;

  f->bytes = sc_test_gguf_induction_llama (64);
  d = g_bytes_get_data (f->bytes, &n);
  g_assert_cmpint (sc_gguf_open_memory (d, n, &g, &err), ==, SC_OK);
  if (sc_model_open_gguf (g, 1, &f->model, &err) != SC_OK)
    g_error ("%s", err.message);
  f->backend = sc_backend_cpu_new (1, &err);
  g_assert_nonnull (f->backend);
  g_assert_cmpint (sc_session_new (f->model, f->backend, &f->session, &err), ==, SC_OK);
  g_assert_cmpint (sc_grad_new (f->session, &f->grad, &err), ==, SC_OK);
}

static void
fixture_close (Fixture *f)
{
  sc_grad_free (f->grad);
  sc_session_free (f->session);
  sc_backend_free (f->backend);
  sc_model_free (f->model);
  g_bytes_unref (f->bytes);
}

static ScAdvResult *
search (Fixture *f, const ScIntervention *base)
{
  ScAdvParams p = { .layer = 1, .head = 0, .row = -1, .seed = 7, .base = base };
  ScAdvResult *r = NULL;
  ScError err = { 0 };

  if (sc_adv_run (f->grad, f->model, IDS, N, &p, NULL, NULL, &r, &err) != SC_OK)
    g_error ("%s", err.message);
  return r;
}

static void
check_result (const ScAdvResult *r)
{
  for (int e = 0; e < r->n_epsilons; e++)
    {
      g_assert_cmpfloat (r->tvd[e], <=, r->epsilon[e]);
      g_assert_cmpfloat (r->jsd[e], >=, 0.0);
      g_assert_cmpfloat (r->jsd[e], <=, log (2.0) + 1e-12);
      g_assert_cmpfloat (r->jsd_max[e], >=, r->jsd[e] - 1e-12);
      if (e > 0)
        {
          g_assert_cmpfloat (r->epsilon[e], >, r->epsilon[e - 1]);
          /* warm-started from the smaller ε's best, which stays feasible */
          g_assert_cmpfloat (r->jsd[e], >=, r->jsd[e - 1] - 1e-12);
        }
    }
}

static void
test_ignored_vs_used (void)
{
  Fixture f;
  float scale[4] = { 1, 1, 0, 1 }; /* layer 1 head 0 zero-scaled */
  ScIntervention ignore = { .head_scale = scale };
  ScAdvResult *ign, *used;

  fixture_open (&f);
  /* the original attention is the induction match, one-hot */
  ign = search (&f, &ignore);
  g_assert_cmpint (ign->n_dists, ==, 1);
  g_assert_cmpint (ign->row, ==, N - 1);
  g_assert_cmpfloat (ign->original[6], >, 0.999);
  check_result (ign);
  used = search (&f, NULL);
  check_result (used);
  for (int e = 0; e < ign->n_epsilons; e++)
    g_test_message ("epsilon %.3f: ignored head JSD %.4f (TVD %.2g), used head JSD %.4f "
                    "(TVD %.2g)", ign->epsilon[e], ign->jsd[e], ign->tvd[e], used->jsd[e],
                    used->tvd[e]);
  /* 1. */
  g_assert_cmpfloat (ign->jsd[0], >, 0.9 * log (2.0));
  g_assert_cmpfloat (ign->tvd[0], <=, 1e-9);
  /* the adversarial row left the match */
  g_assert_cmpfloat (ign->adversarial[6], <, 0.1);
  /* 2. The copy's logit gain saturates the prediction, so some mass can leave the match
   * unnoticed (measured: JSD 0.27 at ε = 0.001, 0.28 at 0.01), but the match keeps the
   * larger share and the search stays far from ln 2 — and far below the ignored head. */
  for (int e = 0; e < used->n_epsilons && used->epsilon[e] <= 0.01; e++)
    {
      g_assert_cmpfloat (used->jsd[e], <, 0.5 * log (2.0));
      g_assert_cmpfloat (ign->jsd[e] - used->jsd[e], >, 0.3);
    }
  g_assert_cmpfloat (used->jsd[used->n_epsilons - 1], >, used->jsd[0]);
  sc_adv_result_free (ign);
  sc_adv_result_free (used);
  fixture_close (&f);
}

static void
tamper (const char *db, const char *sql)
{
  sqlite3 *h;
  g_assert_cmpint (sqlite3_open (db, &h), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (h, sql, NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (h);
}

static void
test_store (void)
{
  g_autofree char *dir = g_dir_make_tmp ("saccade-adv-XXXXXX", NULL);
  g_autofree char *db = g_build_filename (dir, "a.sqlite", NULL);
  g_autofree char *mpath = g_build_filename (dir, "m.gguf", NULL);
  const double eps[] = { 0.05, 0.01 };
  ScAdvParams p = { .layer = 1, .head = -1, .row = SC_ADV_ALL_ROWS, .epsilons = eps,
                    .n_epsilons = 2, .iterations = 20, .seed = 3 };
  ScStoreOptions so = { .writable = true };
  ScStoreModel sm;
  ScStore *store = NULL;
  ScAdvResult *r = NULL, *back = NULL;
  ScError err = { 0 };
  Fixture f;
  char params[512];
  gsize len;
  const void *d;

  fixture_open (&f);
  d = g_bytes_get_data (f.bytes, &len);
  g_assert_true (g_file_set_contents (mpath, d, (gssize) len, NULL));
  g_assert_cmpint (sc_adv_run (f.grad, f.model, IDS, N, &p, NULL, NULL, &r, &err), ==, SC_OK);
  /* both heads, every row with two or more keys */
  g_assert_cmpint (r->n_dists, ==, 2 * (N - 1));
  for (int k = 0; k < r->n_dists; k++)
    {
      g_assert_cmpint (r->dist_head[k], ==, k / (N - 1));
      g_assert_cmpint (r->dist_row[k], ==, 1 + k % (N - 1));
    }
  g_assert_cmpfloat (r->epsilon[0], ==, 0.01);
  check_result (r);
  g_assert_cmpint (sc_adv_params_json (4, NULL, 0, &p, params, sizeof params), >, 0);
  g_assert_nonnull (strstr (params, "\"head\":null,\"row\":\"all\",\"epsilons\":[0.01,0.05]"));
  g_assert_cmpint (sc_store_model_identify (f.model, mpath, &sm, &err), ==, SC_OK);
  g_assert_cmpint (sc_store_open (db, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_adv_store (store, &sm, params, r, NULL, &err), ==, SC_OK);
  g_assert_cmpint (sc_adv_load (store, sc_model_info (f.model), sm.sha256, params, &back, NULL,
                                &err), ==, SC_OK);
  g_assert_cmpint (back->n_epsilons, ==, 2);
  for (int e = 0; e < 2; e++)
    {
      g_assert_cmpfloat (back->jsd[e], ==, r->jsd[e]);
      g_assert_cmpfloat (back->tvd[e], ==, r->tvd[e]);
    }
  g_assert_cmpint (back->head, ==, -1);
  g_assert_cmpint (back->row, ==, -1);
  g_assert_cmpint (back->n_dists, ==, r->n_dists);
  g_assert_null (back->dist_head);
  sc_adv_result_free (back);
  back = NULL;
  sc_store_close (store);
  tamper (db, "UPDATE study_series SET value = 0.9 WHERE series = 'jsd' AND pos = 1");
  g_assert_cmpint (sc_store_open (db, &so, &store, &err), ==, SC_OK);
  g_assert_cmpint (sc_adv_load (store, sc_model_info (f.model), sm.sha256, params, &back, NULL,
                                &err), ==, SC_ERR_FORMAT);
  g_assert_nonnull (strstr (err.message, "'jsd' at 1"));
  sc_store_close (store);
  sc_adv_result_free (r);
  fixture_close (&f);
  g_remove (db);
  g_remove (mpath);
  g_rmdir (dir);
}

static void
test_refused (void)
{
  Fixture f;
  ScError err = { 0 };
  ScAdvResult *r = NULL;
  const double bad_eps[] = { 0.0 };
  ScAdvParams p = { .layer = 2, .head = 0, .row = -1 };
  ScAttnEdit edit = { 0, 0, SC_ATTN_EDIT_UNIFORM, 0, NULL };
  ScIntervention iv = { .edits = &edit, .n_edits = 1 };

  fixture_open (&f);
  g_assert_cmpint (sc_adv_run (f.grad, f.model, IDS, N, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "layer 2"));
  p.layer = 1;
  p.row = N;
  g_assert_cmpint (sc_adv_run (f.grad, f.model, IDS, N, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "row 14"));
  p.row = -1;
  p.epsilons = bad_eps;
  p.n_epsilons = 1;
  g_assert_cmpint (sc_adv_run (f.grad, f.model, IDS, N, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "epsilon 0"));
  p.epsilons = NULL;
  p.base = &iv;
  g_assert_cmpint (sc_adv_run (f.grad, f.model, IDS, N, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_nonnull (strstr (err.message, "base intervention"));
  p.base = NULL;
  g_assert_cmpint (sc_adv_run (f.grad, f.model, IDS, 1, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  g_assert_null (r);
  fixture_close (&f);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/adversarial/ignored-vs-used", test_ignored_vs_used);
  g_test_add_func ("/adversarial/store", test_store);
  g_test_add_func ("/adversarial/refused", test_refused);
  return g_test_run ();
}
