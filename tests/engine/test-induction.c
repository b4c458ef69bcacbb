/* test-induction.c — the induction-head detector (engine/study/sc-induction-study) on a
 * model whose layer-0 head 0 is a previous-token head and layer-1 head 0 an induction head
 * by construction (tests/engine/sc-test-induction-model.c): those two heads must come out
 * first, clearly, and the second copy must be predicted far better than the first. Also
 * the OV copying score of the same weights and the detector's errors. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/analysis/sc-induction.h"
#include "engine/backend/sc-backend.h"
#include "engine/study/sc-induction-study.h"
#include "tests/engine/sc-test-gguf.h"

typedef struct {
  GBytes *bytes; /* the GGUF image: the model borrows it */
  ScModel *model;
  ScBackend *backend;
  ScSession *session;
} Fixture;

static void
fixture_open (Fixture *f, guint32 n_ctx)
{
  ScGguf *g = NULL;
  ScError err = { 0 };
  gsize n;
  const void *d;

  f->bytes = sc_test_gguf_induction_llama (n_ctx);
  d = g_bytes_get_data (f->bytes, &n);
  g_assert_cmpint (sc_gguf_open_memory (d, n, &g, &err), ==, SC_OK);
  if (sc_model_open_gguf (g, 1, &f->model, &err) != SC_OK)
    g_error ("%s", err.message);
  f->backend = sc_backend_cpu_new (1, &err);
  g_assert_nonnull (f->backend);
  g_assert_cmpint (sc_session_new (f->model, f->backend, &f->session, &err), ==, SC_OK);
}

static void
fixture_close (Fixture *f)
{
  sc_session_free (f->session);
  sc_backend_free (f->backend);
  sc_model_free (f->model);
  g_bytes_unref (f->bytes);
}

/* T = 20, 4 seeds: n = 41 tokens. Measured: previous-token score of head 0.0 and
 * prefix-matching score of head 1.0 both 1.0000 (to 4 decimals), every other score
 * <= 0.033 (the uniform heads: mean 1/(p+1) over the second copy); loss 13.6 nats on the
 * first copy (nothing to copy, and layer 1's uniform attention pushes the earlier tokens
 * up), 0.44 on the second (its first target cannot be predicted, the other 19 are ~0). */
static void
test_detector (void)
{
  const ScInductionParams p = { .seq_len = 20, .n_seeds = 4 };
  ScInductionResult *r = NULL;
  Fixture f = { 0 };
  ScError err = { 0 };
  int i;

  fixture_open (&f, 128);
  if (sc_induction_study_run (f.session, f.model, &p, NULL, NULL, &r, &err) != SC_OK)
    g_error ("%s", err.message);
  g_assert_cmpint (r->n_layers, ==, 2);
  g_assert_cmpint (r->n_heads, ==, 2);
  g_assert_cmpint (r->n_prefix, ==, 1);
  g_assert_cmpint (r->n_tokens, ==, 41);
  for (i = 0; i < 4; i++)
    g_test_message ("head %d.%d: prefix %.4f duplicate %.4f previous %.4f", i / 2, i % 2,
                    r->heads[i].prefix_matching, r->heads[i].duplicate_token,
                    r->heads[i].previous_token);
  g_test_message ("loss first %.4f second %.4f", r->loss_first, r->loss_second);
  /* head 0.0 = previous-token, head 1.0 = induction */
  g_assert_cmpfloat (r->heads[0].previous_token, >=, 0.9);
  g_assert_cmpfloat (r->heads[2].prefix_matching, >=, 0.9);
  for (i = 0; i < 4; i++)
    {
      if (i != 0)
        g_assert_cmpfloat (r->heads[i].previous_token, <=, 0.2);
      if (i != 2)
        g_assert_cmpfloat (r->heads[i].prefix_matching, <=, 0.2);
      g_assert_cmpfloat (r->heads[i].duplicate_token, <=, 0.2);
    }
  g_assert_cmpfloat (r->loss_first, >, 5.0);       /* >= ln 264: nothing to copy */
  g_assert_cmpfloat (r->loss_second, <, 0.5);      /* copied */
  g_assert_true (isnan (r->loss[0]));
  for (i = 1 + 20 + 1; i < 41; i++)                /* past the second copy's first token */
    g_assert_cmpfloat (r->loss[i], <, 0.01);
  /* seed 0's sequence: BOS, T tokens, the same again */
  g_assert_cmpint (r->ids[0], ==, 264);
  for (i = 0; i < 20; i++)
    g_assert_cmpint (r->ids[1 + i], ==, r->ids[21 + i]);
  sc_induction_result_free (r);
  fixture_close (&f);
}

/* Layer 1 head 0's circuit is COPY_GAIN/s1 times the identity on the vocabulary: copying
 * 1. Layer 0 head 0 writes where the unembedding does not read (the previous-token block)
 * and the other heads are zero: no eigenvalue mass, NaN. */
static void
test_copying (void)
{
  Fixture f = { 0 };
  ScOvCopying c[4];
  ScError err = { 0 };

  fixture_open (&f, 128);
  if (sc_ov_copying_model (f.model, c, &err) != SC_OK)
    g_error ("%s", err.message);
  g_test_message ("copying: %.4f %.4f %.4f %.4f", c[0].copying, c[1].copying, c[2].copying,
                  c[3].copying);
  g_assert_cmpfloat_with_epsilon (c[2].copying, 1.0, 1e-4);
  g_assert_cmpfloat_with_epsilon (c[2].positive_share, 1.0, 1e-4);
  g_assert_true (isnan (c[0].copying) || fabs (c[0].copying) < 1e-3 || c[0].copying == 0);
  g_assert_true (isnan (c[1].copying));
  g_assert_true (isnan (c[3].copying));
  fixture_close (&f);
}

static bool
cancel_at_half (void *user, double fraction)
{
  double *last = user;
  g_assert_cmpfloat (fraction, >, *last);
  *last = fraction;
  return fraction < 0.5;
}

static void
test_errors (void)
{
  Fixture f = { 0 }, big = { 0 };
  ScInductionParams p = { .seq_len = 64, .n_seeds = 1 };
  ScInductionResult *r = NULL;
  ScError err = { 0 };
  double last = 0.0;

  fixture_open (&f, 128);
  /* BOS + 2 x 64 = 129 > 128 */
  g_assert_cmpint (sc_induction_study_run (f.session, f.model, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_RANGE);
  g_assert_nonnull (strstr (err.message, "choose T <= 63"));
  p.seq_len = 1;
  g_assert_cmpint (sc_induction_study_run (f.session, f.model, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  p.seq_len = 10;
  p.n_seeds = 0;
  g_assert_cmpint (sc_induction_study_run (f.session, f.model, &p, NULL, NULL, &r, &err), ==,
                   SC_ERR_INVALID_ARG);
  /* cancelled half way through 2 seeds */
  p.n_seeds = 2;
  g_assert_cmpint (sc_induction_study_run (f.session, f.model, &p, cancel_at_half, &last, &r,
                                           &err), ==, SC_ERR_CANCELLED);
  g_assert_null (r);
  /* determinism: the same seed, the same sequence */
  {
    int32_t a[21], b[21];
    g_assert_cmpint (sc_induction_sequence (f.model, 10, 3, a, NULL, &err), ==, SC_OK);
    g_assert_cmpint (sc_induction_sequence (f.model, 10, 3, b, NULL, &err), ==, SC_OK);
    g_assert_cmpmem (a, sizeof a, b, sizeof b);
    g_assert_cmpint (sc_induction_sequence (f.model, 10, 4, b, NULL, &err), ==, SC_OK);
    g_assert_true (memcmp (a, b, sizeof a) != 0);
  }
  fixture_close (&f);

  /* 264 ordinary tokens (the 256 bytes and 8 merges; <s>, </s> are CONTROL) < T = 300 */
  fixture_open (&big, 1024);
  p.seq_len = 300;
  p.n_seeds = 1;
  g_assert_cmpint (sc_induction_study_run (big.session, big.model, &p, NULL, NULL, &r, &err),
                   ==, SC_ERR_UNSUPPORTED);
  g_assert_nonnull (strstr (err.message, "264 ordinary"));
  fixture_close (&big);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/induction/detector", test_detector);
  g_test_add_func ("/induction/copying", test_copying);
  g_test_add_func ("/induction/errors", test_errors);
  return g_test_run ();
}
