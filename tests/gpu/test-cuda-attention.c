/* test-cuda-attention.c — the CUDA attention kernels against cpu-ref (needs a device; exits
 * 77 without one).
 *
 * The ops of the other kernels are held to cpu-ref by tests/engine/test-backend-ops.c
 * (its "cuda" rows); this test covers what only the CUDA backend has, on sizes where the
 * tiles matter: attention_capture's fp16 heads in the store's layout (packed when causal
 * and square, full otherwise), its fused path for the heads not captured, the two slots
 * used back to back (the second call queued before the first is waited for, as the
 * forward pass overlaps layers), and the fp32 attention op on the same cases. Shapes: the
 * CPU emulation's (tests/engine/test-flash-tile.c: n = 1, n off the tiles, d = 80, window,
 * fully masked rows, non-causal, a cache) plus SmolLM2's head layout (9 over 3, d = 64) at
 * n = 1000.
 *
 * Tolerances against cpu-ref (double sums), from the emulation's measured errors (1e-7)
 * with room for CUDA's expf/logf (<= 2 ulp) and float sums over up to 1000 keys:
 *   - out: |o - ref| <= 1e-5 + 1e-5 |ref|;
 *   - fp32 probabilities: |p - ref| <= 1e-6 + 1e-5 ref, exact 0 where ref is 0;
 *   - fp16: the same plus half an fp16 unit (2^-11 ref + 2^-25), exact 0 where ref is 0.
 */
#include <math.h>
#include <string.h>

#include "engine/core/sc-math.h"
#include "gpu-common.h"

#define OUT_ABS 1e-5
#define OUT_REL 1e-5
#define P_ABS 1e-6
#define P_REL 1e-5
#define FP16_REL 4.8828125e-4
#define FP16_ABS 2.98023223876953125e-8

typedef struct {
  const char *name;
  int n_q, n_k, heads, kv, d;
  bool causal;
  int window;
  int mask_kind; /* 0 none; 1 the first 5 keys; 2 every third key */
  bool head_scale;
  int want_every; /* capture heads h with h % want_every == 0 */
} Case;

static const Case cases[] = {
  { "n1", 1, 1, 1, 1, 64, true, 0, 0, false, 1 },
  { "n37-gqa-9x3", 37, 37, 9, 3, 64, true, 0, 0, false, 2 },
  { "n130-d80-scaled", 130, 130, 2, 1, 80, true, 0, 0, true, 1 },
  { "n100-window17", 100, 100, 3, 1, 32, true, 17, 0, false, 1 },
  { "n70-mask-first5", 70, 70, 3, 3, 64, true, 0, 1, false, 1 },
  { "n66-mask-third-window9", 66, 66, 2, 2, 64, true, 9, 2, true, 1 },
  { "n45-noncausal", 45, 45, 4, 2, 64, false, 0, 2, false, 1 },
  { "cache-5-of-83", 5, 83, 9, 3, 64, true, 0, 0, false, 3 },
  { "n129-d128", 129, 129, 2, 1, 128, true, 0, 0, false, 1 },
  { "n1000-smollm2-heads", 1000, 1000, 9, 3, 64, true, 0, 0, false, 4 },
};

static ScBackend *gpu, *ref;

static float *
random_floats (GRand *r, size_t n, double lo, double hi)
{
  float *x = g_new (float, n);
  for (size_t i = 0; i < n; i++)
    x[i] = (float) g_rand_double_range (r, lo, hi);
  return x;
}

static void
check (const char *what, const Case *c, const float *got, const float *want, size_t n,
       double abs_tol, double rel_tol, bool zeros)
{
  double worst = 0.0;
  for (size_t i = 0; i < n; i++)
    {
      const double e = fabs ((double) got[i] - want[i]);
      if (!(e <= abs_tol + rel_tol * fabs (want[i])))
        g_error ("%s %s[%zu]: %.9g, cpu-ref %.9g", c->name, what, i, got[i], want[i]);
      if (zeros && want[i] == 0.0f && got[i] != 0.0f)
        g_error ("%s %s[%zu]: %.9g where cpu-ref has exactly 0", c->name, what, i, got[i]);
      worst = MAX (worst, e);
    }
  printf ("# %s %s: max |error| %.3g\n", c->name, what, worst);
}

static void
test_case (gconstpointer data)
{
  const Case *c = data;
  GRand *r = g_rand_new_with_seed ((guint32) (c->n_q * 131 + c->n_k + c->d));
  const size_t nq = (size_t) c->n_q * c->heads * c->d, nkv = (size_t) c->n_k * c->kv * c->d;
  const size_t per_head = (size_t) c->n_q * c->n_k;
  const bool packed = c->causal && c->n_q == c->n_k;
  g_autofree float *q = random_floats (r, nq, -1, 1), *k = random_floats (r, nkv, -1, 1);
  g_autofree float *v = random_floats (r, nkv, -1, 1), *hs = random_floats (r, c->heads, 0, 2);
  g_autofree uint8_t *mask = NULL, *want = g_new0 (uint8_t, c->heads);
  g_autofree float *ref_out = g_new (float, nq), *ref_p = g_new (float, c->heads * per_head);
  g_autofree float *out = g_new (float, nq), *out2 = g_new (float, nq);
  g_autofree float *p32 = g_new (float, c->heads * per_head);
  g_autofree float *f16_as_f32 = g_new (float, c->heads * per_head);
  g_autofree float *ref_wanted = g_new (float, c->heads * per_head);
  const uint16_t *heads[64];
  ScAttnParams p;
  ScError err = { SC_OK, "" };
  float *dq, *dk, *dv, *dout, *dout2, *dprobs;
  bool got_packed = false;
  size_t n_cmp = 0;

  if (c->mask_kind != 0)
    {
      mask = g_new0 (uint8_t, c->n_k);
      for (int j = 0; j < c->n_k; j++)
        mask[j] = c->mask_kind == 1 ? j < 5 : j % 3 == 1;
    }
  for (int h = 0; h < c->heads; h++)
    want[h] = h % c->want_every == 0;
  p = (ScAttnParams) { .scale = 1.0f / sqrtf ((float) c->d), .causal = c->causal,
                       .window = c->window, .key_mask = mask,
                       .head_scale = c->head_scale ? hs : NULL };
  g_assert_cmpint (sc_backend_attention (ref, ref_out, ref_p, q, k, v, c->n_q, c->n_k, c->heads,
                                         c->kv, c->d, &p, &err), ==, SC_OK);

  dq = gpu_upload (gpu, q, nq);
  dk = gpu_upload (gpu, k, nkv);
  dv = gpu_upload (gpu, v, nkv);
  dout = gpu_upload (gpu, NULL, nq);
  dout2 = gpu_upload (gpu, NULL, nq);
  dprobs = gpu_upload (gpu, NULL, c->heads * per_head);

  /* the fp32 op */
  if (sc_backend_attention (gpu, dout, dprobs, dq, dk, dv, c->n_q, c->n_k, c->heads, c->kv, c->d,
                            &p, &err) != SC_OK)
    g_error ("attention: %s", err.message);
  gpu_download (gpu, out, dout, nq);
  gpu_download (gpu, p32, dprobs, c->heads * per_head);
  check ("attention out", c, out, ref_out, nq, OUT_ABS, OUT_REL, false);
  check ("attention probs", c, p32, ref_p, c->heads * per_head, P_ABS, P_REL, true);

  /* capture on slot 0 (some heads) and slot 1 (none: fused only), queued back to back */
  if (sc_backend_attention_capture (gpu, dout, dq, dk, dv, c->n_q, c->n_k, c->heads, c->kv, c->d,
                                    &p, want, 0, &err) != SC_OK
      || sc_backend_attention_capture (gpu, dout2, dq, dk, dv, c->n_q, c->n_k, c->heads, c->kv,
                                       c->d, &p, NULL, 1, &err) != SC_OK)
    g_error ("attention_capture: %s", err.message);
  gpu_download (gpu, out2, dout2, nq);
  check ("fused out", c, out2, ref_out, nq, OUT_ABS, OUT_REL, false);
  if (gpu->ops->capture_wait (gpu, 0, heads, &got_packed, &err) != SC_OK)
    g_error ("capture_wait: %s", err.message);
  g_assert_cmpint (got_packed, ==, packed);
  gpu_download (gpu, out, dout, nq);
  check ("capture out", c, out, ref_out, nq, OUT_ABS, OUT_REL, false);
  for (int h = 0; h < c->heads; h++)
    {
      if (!want[h])
        {
          g_assert_null (heads[h]);
          continue;
        }
      g_assert_nonnull (heads[h]);
      for (int i = 0; i < c->n_q; i++)
        for (int j = 0; j <= (packed ? i : c->n_k - 1); j++)
          {
            f16_as_f32[n_cmp] = sc_fp16_to_fp32 (heads[h][sc_attn_packed_index (i, j, c->n_k,
                                                                                 packed)]);
            ref_wanted[n_cmp++] = ref_p[h * per_head + (size_t) i * c->n_k + j];
          }
    }
  check ("capture fp16", c, f16_as_f32, ref_wanted, n_cmp, P_ABS + FP16_ABS, P_REL + FP16_REL,
         true);
  {
    /* slot 1 captured nothing */
    if (gpu->ops->capture_wait (gpu, 1, heads, &got_packed, &err) != SC_OK)
      g_error ("capture_wait: %s", err.message);
    for (int h = 0; h < c->heads; h++)
      g_assert_null (heads[h]);
  }

  gpu->ops->free (gpu, dq);
  gpu->ops->free (gpu, dk);
  gpu->ops->free (gpu, dv);
  gpu->ops->free (gpu, dout);
  gpu->ops->free (gpu, dout2);
  gpu->ops->free (gpu, dprobs);
  g_rand_free (r);
}

int
main (int argc, char **argv)
{
  int rc;

  g_test_init (&argc, &argv, NULL);
  gpu = gpu_backend_or_skip ("test-cuda-attention");
  ref = sc_backend_cpu_ref_new ();
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/cuda-attention/%s", cases[i].name);
      g_test_add_data_func (path, &cases[i], test_case);
    }
  rc = g_test_run ();
  sc_backend_free (gpu);
  sc_backend_free (ref);
  return rc;
}
