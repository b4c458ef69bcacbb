/* bench-cuda-attention.c — the CUDA attention kernels alone, and SmolLM2's whole forward
 * pass with every head captured (needs a device; exits 77 without one). Not a test: it
 * asserts nothing about time. tools/gpu-check.sh runs it and divides by the PyTorch peers
 * (tools/gpu-peers.py).
 *
 *   bench-cuda-attention [--model PATH] [--reps R] [N ...]
 *
 * For each N (default 512 1024 2048 4096 8192), SmolLM2's head layout (9 query heads over
 * 3 KV heads, head_dim 64), causal, random q, k, v on the device, it prints one JSON line:
 *   flash_ms       the fused kernel (attention_capture, no head wanted), median of R;
 *   flash_tflops   causal attention FLOPs / time, counted as PyTorch's SDPA benchmarks
 *                  count them: 4 n^2 d H / 2 (QK^T and PV over the unmasked half);
 *   capture_dev_ms every head captured, on the device: both passes writing the fp16
 *                  packed probabilities into device memory (attention_capture, then the
 *                  compute stream synchronised; the host copy may still run);
 *   capture_dev_gbs the captured bytes (H n(n+1)/2 fp16) / capture_dev_ms, and its
 *                  fraction of the H200's 4.8 TB/s HBM bandwidth (the yardstick);
 *   capture_ms, capture_gbs  the same until the bytes are in pinned host memory
 *                  (capture_wait): bounded by the host link (PCIe 5 x16, ~55 GB/s), not HBM.
 * With --model PATH (a GGUF file, or "shaped": SmolLM2-135M's shapes and 30 layers with
 * random weights, tests/gpu/gpu-shaped-model.h — the same FLOPs and bytes), also the
 * whole forward pass on N tokens with every head captured through observe_f16 (the
 * observer only touches the first value of each head):
 *   {"kind":"forward","n":N,"seconds":S}.
 * Times are wall clock around the ops with the stream synchronised (a 1-float download).
 */
#include <math.h>
#include <string.h>

#include "engine/forward/sc-forward.h"
#include "engine/model/sc-model.h"
#include "gpu-common.h"
#include "gpu-shaped-model.h"
#include "tests/engine/sc-test-gguf.h"

#define HBM_BYTES_PER_S 4.8e12 /* H200 HBM3e, NVIDIA's data sheet */

static ScBackend *gpu;

static void
sync_stream (const float *buf)
{
  float one;
  gpu_download (gpu, &one, buf, 1); /* download synchronises the compute stream */
}

static int
cmp_double (const void *a, const void *b)
{
  const double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
median (double *t, int n)
{
  qsort (t, n, sizeof *t, cmp_double);
  return t[n / 2];
}

static void
bench_attention (int n, int reps)
{
  const int H = 9, KV = 3, d = 64;
  const size_t nq = (size_t) n * H * d, nkv = (size_t) n * KV * d;
  const ScAttnParams p = { .scale = 0.125f, .causal = true };
  GRand *r = g_rand_new_with_seed (42);
  float *hq = g_new (float, nq), *hk = g_new (float, nkv), *hv = g_new (float, nkv);
  float *q, *k, *v, *out;
  uint8_t want[9];
  const uint16_t *heads[9];
  double *tf = g_new (double, reps), *tc = g_new (double, reps), *td = g_new (double, reps);
  const double flops = 4.0 * (double) n * n * d * H / 2.0;
  const double bytes = (double) H * n * (n + 1.0) / 2.0 * 2.0;
  ScError err = { SC_OK, "" };
  bool packed;

  for (size_t i = 0; i < nq; i++)
    hq[i] = (float) g_rand_double_range (r, -1, 1);
  for (size_t i = 0; i < nkv; i++)
    {
      hk[i] = (float) g_rand_double_range (r, -1, 1);
      hv[i] = (float) g_rand_double_range (r, -1, 1);
    }
  q = gpu_upload (gpu, hq, nq);
  k = gpu_upload (gpu, hk, nkv);
  v = gpu_upload (gpu, hv, nkv);
  out = gpu_upload (gpu, NULL, nq);
  memset (want, 1, sizeof want);
  for (int rep = -1; rep < reps; rep++) /* rep -1: warm-up (allocations, module load) */
    {
      gint64 t0 = g_get_monotonic_time ();
      if (sc_backend_attention_capture (gpu, out, q, k, v, n, n, H, KV, d, &p, NULL, 0, &err)
          != SC_OK)
        g_error ("flash: %s", err.message);
      sync_stream (out);
      if (rep >= 0)
        tf[rep] = (g_get_monotonic_time () - t0) * 1e-6;
      t0 = g_get_monotonic_time ();
      if (sc_backend_attention_capture (gpu, out, q, k, v, n, n, H, KV, d, &p, want, 0, &err)
          != SC_OK)
        g_error ("capture: %s", err.message);
      sync_stream (out);
      if (rep >= 0)
        td[rep] = (g_get_monotonic_time () - t0) * 1e-6;
      if (gpu->ops->capture_wait (gpu, 0, heads, &packed, &err) != SC_OK)
        g_error ("capture: %s", err.message);
      if (rep >= 0)
        tc[rep] = (g_get_monotonic_time () - t0) * 1e-6;
    }
  {
    const double f = median (tf, reps), c = median (tc, reps), dv = median (td, reps);
    printf ("{\"kind\":\"attention\",\"n\":%d,\"heads\":%d,\"kv_heads\":%d,\"head_dim\":%d,"
            "\"flash_ms\":%.4f,\"flash_tflops\":%.3f,\"capture_dev_ms\":%.4f,"
            "\"capture_dev_gbs\":%.2f,\"capture_frac_hbm\":%.4f,\"capture_ms\":%.4f,"
            "\"capture_gbs\":%.2f}\n",
            n, H, KV, d, f * 1e3, flops / f * 1e-12, dv * 1e3, bytes / dv * 1e-9,
            bytes / dv / HBM_BYTES_PER_S, c * 1e3, bytes / c * 1e-9);
    fflush (stdout);
  }
  gpu->ops->free (gpu, q);
  gpu->ops->free (gpu, k);
  gpu->ops->free (gpu, v);
  gpu->ops->free (gpu, out);
  g_free (hq);
  g_free (hk);
  g_free (hv);
  g_free (tf);
  g_free (tc);
  g_free (td);
  g_rand_free (r);
}

static volatile uint16_t sink;

static bool
touch_f16 (void *user, int layer, int head, const uint16_t *values, int n_q, int n_k, bool packed)
{
  sink = values[0];
  return true;
}

static bool
no_f32 (void *user, int layer, int head, const float *probs, int n_q, int n_k)
{
  return true;
}

static void
bench_forward (const char *path, int n, int reps)
{
  ScModel *m = NULL;
  ScSession *s = NULL;
  ScError err = { SC_OK, "" };
  ScObserver obs = { NULL, no_f32, NULL };
  ScForwardOptions fo = { .observer = &obs };
  const int V = 49152; /* any token id below SmolLM2's vocabulary */
  int32_t *ids = g_new (int32_t, n);
  double *t = g_new (double, reps);
  g_autofree float *logits = NULL;

  GBytes *shaped = NULL;

  obs.observe_f16 = touch_f16;
  if (strcmp (path, "shaped") == 0)
    m = sc_test_model_open_bytes (shaped = gpu_smollm2_shaped (30));
  else if (sc_model_open (path, 4, &m, &err) != SC_OK)
    g_error ("%s: %s", path, err.message);
  if (sc_session_new (m, gpu, &s, &err) != SC_OK)
    g_error ("%s: %s", path, err.message);
  logits = g_new (float, sc_model_info (m)->n_vocab);
  for (int i = 0; i < n; i++)
    ids[i] = (int32_t) ((i * 7919) % MIN (V, (int) sc_model_info (m)->n_vocab));
  for (int rep = -1; rep < reps; rep++)
    {
      const gint64 t0 = g_get_monotonic_time ();
      if (sc_forward (s, ids, n, &fo, logits, &err) != SC_OK)
        g_error ("forward: %s", err.message);
      if (rep >= 0)
        t[rep] = (g_get_monotonic_time () - t0) * 1e-6;
    }
  printf ("{\"kind\":\"forward\",\"model\":\"%s\",\"n\":%d,\"layers\":%u,\"heads\":%u,"
          "\"seconds\":%.4f}\n", path, n, sc_model_info (m)->n_layers, sc_model_info (m)->n_heads,
          median (t, reps));
  fflush (stdout);
  sc_session_free (s);
  sc_model_free (m);
  if (shaped != NULL)
    g_bytes_unref (shaped);
  g_free (ids);
  g_free (t);
}

int
main (int argc, char **argv)
{
  const char *model = NULL;
  int reps = 5, sizes[16], n_sizes = 0;

  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--model") == 0 && i + 1 < argc)
      model = argv[++i];
    else if (strcmp (argv[i], "--reps") == 0 && i + 1 < argc)
      reps = MAX (1, atoi (argv[++i]));
    else if (n_sizes < 16 && atoi (argv[i]) > 0)
      sizes[n_sizes++] = atoi (argv[i]);
    else
      {
        fprintf (stderr, "usage: %s [--model PATH] [--reps R] [N ...]\n", argv[0]);
        return 2;
      }
  if (n_sizes == 0)
    for (int n = 512; n <= 8192; n *= 2)
      sizes[n_sizes++] = n;
  gpu = gpu_backend_or_skip ("bench-cuda-attention");
  fprintf (stderr, "# %s\n", sc_backend_description (gpu));
  for (int i = 0; i < n_sizes; i++)
    bench_attention (sizes[i], reps);
  if (model != NULL)
    for (int i = 0; i < n_sizes; i++)
      bench_forward (model, sizes[i], MAX (1, reps / 2));
  sc_backend_free (gpu);
  return 0;
}
