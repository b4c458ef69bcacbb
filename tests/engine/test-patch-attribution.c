/* test-patch-attribution.c — attribution patching (engine/study/sc-patch-study.h,
 * sc_patch_attribution_run) and the backward's attention-output gradient
 * (ScGradOptions.attn_output_grad), on the tiny llama of sc-test-gguf (2 layers × 4 heads)
 * and on the induction model whose circuit is known by construction.
 *
 * 1. First order, checked against exact patching: for every head, moving its output from
 *    the base run's towards the source run's by ±ε (an exact patch of o_base ± ε Δ through
 *    the ScIntervention head patch) changes m by ±ε times the estimate's slope m̂ − m_base,
 *    to the central difference's accuracy: the gradient is d m / d o, nothing else. Both
 *    directions; with and without a contrast (ln p(A) has another d m / d logits).
 * 2. The head-positions estimates of a head sum to its heads estimate; the clean and
 *    corrupted metrics are those of exact patching.
 * 3. By construction (the induction model, "…A B … A" against "…A C … A"): the heads with
 *    zero weights have estimates of exactly m_base (their outputs do not change); the
 *    previous-token head L0.H0, whose effect reaches m only through the induction head's
 *    saturated attention (logits ±40), within 0.01 of no effect; the induction head L1.H0
 *    the only head that moves m, as exact patching says (by about half as much: the first
 *    order cannot see the final norm's saturation; exact patching's effect is 1).
 * 4. The residual is refused; a model without a backward pass is the caller's error
 *    (sc_grad_new).
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/backend/sc-backend.h"
#include "engine/format/sc-gguf.h"
#include "engine/forward/sc-backward.h"
#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "engine/study/sc-patch-study.h"
#include "tests/engine/sc-test-gguf.h"

static const int32_t clean_ids[] = { 264, 72, 101, 108, 108, 111, 257, 44, 33, 10 };
static const int32_t corrupt_ids[] = { 264, 72, 101, 120, 108, 111, 99, 44, 33, 10 };
#define N ((int) G_N_ELEMENTS (clean_ids))

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

static void
head_outputs (ScSession *s, const ScModelInfo *in, const int32_t *ids, int n, float *heads)
{
  Heads h = { heads, (int) in->n_heads, (int) in->head_dim, n };
  ScObserver obs = { .attn_output = take, .user = &h };
  ScForwardOptions opt = { .observer = &obs };
  ScError err = { 0 };

  g_assert_cmpint (sc_forward (s, ids, n, &opt, NULL, &err), ==, SC_OK);
}

/* 1 and 2 for one direction and contrast. */
static void
check_first_order (ScModel *m, int direction, int contrast)
{
  const ScModelInfo *in = sc_model_info (m);
  const int L = (int) in->n_layers, H = (int) in->n_heads, d = (int) in->head_dim,
            V = (int) in->n_vocab;
  const gsize per = (gsize) L * H * N * d;
  const double eps = 1e-2;
  ScBackend *b = sc_backend_cpu_new (2, NULL);
  ScSession *s = NULL;
  ScGrad *g = NULL;
  ScError err = { 0 };
  ScPatchParams p = { .corrupted_run = 2, .target = 65, .contrast = contrast,
                      .direction = direction, .what = SC_PATCH_HEADS };
  ScPatchResult *r = NULL, *rp = NULL, *exact = NULL;
  const int32_t *src_ids = direction == SC_PATCH_DENOISE ? clean_ids : corrupt_ids;
  const int32_t *base_ids = direction == SC_PATCH_DENOISE ? corrupt_ids : clean_ids;
  g_autofree float *src = g_new (float, per), *base = g_new (float, per);
  g_autofree float *mixed = g_new (float, per), *row = g_new (float, V);
  g_autofree uint8_t *on = g_new0 (uint8_t, (gsize) L * H * N);
  ScIntervention iv = { .patch_tokens = N, .head_patch = mixed, .head_patch_on = on };
  ScForwardOptions opt = { .intervention = &iv };

  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_grad_new (s, &g, &err), ==, SC_OK);
  g_assert_cmpint (sc_patch_attribution_run (s, g, m, clean_ids, corrupt_ids, N, &p, NULL, NULL,
                                             &r, &err), ==, SC_OK);
  g_assert_true (r->estimated);
  p.what = SC_PATCH_HEAD_POSITIONS;
  g_assert_cmpint (sc_patch_attribution_run (s, g, m, clean_ids, corrupt_ids, N, &p, NULL, NULL,
                                             &rp, &err), ==, SC_OK);
  p.what = SC_PATCH_HEADS;
  g_assert_cmpint (sc_patch_run (s, m, clean_ids, corrupt_ids, N, &p, NULL, NULL, &exact, &err),
                   ==, SC_OK);
  /* 2. the runs' metrics are exact patching's, to the rounding of the two forward paths */
  g_assert_cmpfloat (fabs (r->metric_clean - exact->metric_clean), <, 1e-5);
  g_assert_cmpfloat (fabs (r->metric_corrupted - exact->metric_corrupted), <, 1e-5);
  g_assert_cmpint (r->contrast, ==, exact->contrast);

  head_outputs (s, in, src_ids, N, src);
  head_outputs (s, in, base_ids, N, base);
  {
    const double m_base = direction == SC_PATCH_DENOISE ? r->metric_corrupted : r->metric_clean;
    for (int c = 0; c < L * H; c++)
      {
        const double slope = r->patched[c] - m_base;
        double sum = 0.0, mp, mm;
        /* 2. head-positions add up to the head */
        for (int q = 0; q < N; q++)
          sum += rp->patched[(gsize) c * N + q] - m_base;
        g_assert_cmpfloat (fabs (sum - slope), <=, 1e-9 * (1.0 + fabs (slope)));
        /* 1. o_base + ε Δ and o_base − ε Δ at every position of head c, patched exactly */
        memset (on, 0, (gsize) L * H * N);
        memset (on + (gsize) c * N, 1, N);
        for (int sign = 1; sign >= -1; sign -= 2)
          {
            for (gsize i = 0; i < per; i++)
              mixed[i] = (float) (base[i] + sign * eps * ((double) src[i] - base[i]));
            g_assert_cmpint (sc_forward (s, base_ids, N, &opt, row, &err), ==, SC_OK);
            *(sign > 0 ? &mp : &mm) = sc_patch_metric (row, V, r->target, r->contrast);
          }
        g_test_message ("dir %d contrast %d L%d.H%d: slope %.6g, central difference %.6g",
                        direction, contrast, c / H, c % H, slope, (mp - mm) / (2 * eps));
        g_assert_cmpfloat (fabs ((mp - mm) / (2 * eps) - slope), <=, 2e-3 + 2e-2 * fabs (slope));
      }
  }
  sc_patch_result_free (r);
  sc_patch_result_free (rp);
  sc_patch_result_free (exact);
  sc_grad_free (g);
  sc_session_free (s);
  sc_backend_free (b);
}

static void
test_first_order (void)
{
  ScModel *m = sc_test_tiny_model ();

  for (int dir = SC_PATCH_DENOISE; dir <= SC_PATCH_NOISE; dir++)
    {
      check_first_order (m, dir, 44); /* logit(A) − logit(B) */
      check_first_order (m, dir, -1); /* ln p(A), or the corrupted top-1 as the contrast */
    }
  sc_model_free (m);
}

/* 3. */
static void
test_by_construction (void)
{
  enum { TA = 'a', TB = 'b', TC = 'c', BOS = 257 };
  g_autoptr (GBytes) bytes = sc_test_gguf_induction_llama (64);
  const int32_t clean[] = { BOS, 'x', TA, TB, 'y', 'z', TA };
  const int32_t corrupt[] = { BOS, 'x', TA, TC, 'y', 'z', TA };
  const int n = (int) G_N_ELEMENTS (clean);
  const ScPatchParams p = { .corrupted_run = 2, .target = TB, .contrast = TC,
                            .direction = SC_PATCH_DENOISE, .what = SC_PATCH_HEADS };
  ScGguf *gg = NULL;
  ScModel *m = NULL;
  ScBackend *b = sc_backend_cpu_new (1, NULL);
  ScSession *s = NULL;
  ScGrad *g = NULL;
  ScPatchResult *r = NULL;
  ScError err = { 0 };
  gsize len;
  const void *data = g_bytes_get_data (bytes, &len);

  g_assert_cmpint (sc_gguf_open_memory (data, len, &gg, &err), ==, SC_OK);
  g_assert_cmpint (sc_model_open_gguf (gg, 1, &m, &err), ==, SC_OK);
  g_assert_cmpint (sc_session_new (m, b, &s, &err), ==, SC_OK);
  g_assert_cmpint (sc_grad_new (s, &g, &err), ==, SC_OK);
  g_assert_cmpint (sc_patch_attribution_run (s, g, m, clean, corrupt, n, &p, NULL, NULL, &r,
                                             &err), ==, SC_OK);
  for (int c = 0; c < 4; c++)
    g_test_message ("L%d.H%d estimated effect %.6g", c / 2, c % 2,
                    sc_patch_normalised (r, r->patched[c]));
  /* the zero-weight heads: no change of output, an estimate of exactly m_base */
  g_assert_cmpfloat (r->patched[1], ==, r->metric_corrupted);
  g_assert_cmpfloat (r->patched[3], ==, r->metric_corrupted);
  /* the previous-token head reaches m only through saturated attention */
  g_assert_cmpfloat (fabs (sc_patch_normalised (r, r->patched[0])), <, 0.01);
  /* the induction head alone moves it; the estimate is about half of exact patching's 1
   * (measured 0.52): the copied token enters the logits through the final RMSNorm, whose
   * normaliser grows with what is added, so the first order overshoots the norm's change */
  g_assert_cmpfloat (sc_patch_normalised (r, r->patched[2]), >, 0.3);
  sc_patch_result_free (r);
  r = NULL;

  /* 4. the residual is exact patching's alone */
  {
    ScPatchParams q = p;
    q.what = SC_PATCH_RESIDUAL;
    g_assert_cmpint (sc_patch_attribution_run (s, g, m, clean, corrupt, n, &q, NULL, NULL, &r,
                                               &err), ==, SC_ERR_INVALID_ARG);
    g_assert_nonnull (strstr (err.message, "residual"));
    g_assert_null (r);
  }
  sc_grad_free (g);
  sc_session_free (s);
  sc_backend_free (b);
  sc_model_free (m);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/patch-attribution/first-order", test_first_order);
  g_test_add_func ("/patch-attribution/by-construction", test_by_construction);
  return g_test_run ();
}
