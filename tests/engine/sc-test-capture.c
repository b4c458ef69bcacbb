/* sc-test-capture.c — the fake-capture backend of sc-test-capture.h. */
#include "tests/engine/sc-test-capture.h"

#include <glib.h>

#include "engine/backend/sc-backend-impl.h"
#include "engine/core/sc-math.h"

ScTestCaptureCounts sc_test_capture_counts;

static ScBackendOps fake_ops;
static const ScBackendOps *ref_ops;
static struct {
  uint16_t *values;
  size_t cap, per_head;
  int n_heads;
  bool packed;
  long at[64]; /* head -> its index in values, -1 = not captured */
} slots[SC_BACKEND_CAPTURE_SLOTS];

static float *
fake_alloc (ScBackend *b, size_t n, ScError *err)
{
  sc_test_capture_counts.n_probs_allocs += n == sc_test_capture_counts.probs_floats;
  return ref_ops->alloc (b, n, err);
}

static ScStatus
fake_attention (ScBackend *b, float *out, float *probs, const float *q, const float *k,
                const float *v, int n_q, int n_k, int n_heads, int n_kv, int d,
                const ScAttnParams *p, ScError *err)
{
  sc_test_capture_counts.n_attention_calls++;
  return ref_ops->attention (b, out, probs, q, k, v, n_q, n_k, n_heads, n_kv, d, p, err);
}

static ScStatus
fake_capture (ScBackend *b, float *out, const float *q, const float *k, const float *v, int n_q,
              int n_k, int n_heads, int n_kv, int d, const ScAttnParams *p,
              const uint8_t *want, int slot, ScError *err)
{
  const bool packed = p->causal && n_q == n_k;
  const size_t per = sc_attn_packed_size (n_q, n_k, packed);
  g_autofree float *probs = g_new (float, (size_t) n_heads * n_q * n_k);
  ScStatus st = ref_ops->attention (b, out, probs, q, k, v, n_q, n_k, n_heads, n_kv, d, p, err);
  size_t w = 0;

  g_assert_cmpint (n_heads, <=, 64);
  sc_test_capture_counts.n_capture_calls++;
  if (st != SC_OK)
    return st;
  if (slots[slot].cap < (size_t) n_heads * per)
    {
      slots[slot].cap = (size_t) n_heads * per;
      slots[slot].values = g_renew (uint16_t, slots[slot].values, slots[slot].cap);
    }
  slots[slot].n_heads = n_heads;
  slots[slot].per_head = per;
  slots[slot].packed = packed;
  for (int h = 0; h < n_heads; h++)
    {
      slots[slot].at[h] = -1;
      if (want == NULL || !want[h])
        continue;
      sc_test_capture_counts.n_capture_wanted_heads++;
      slots[slot].at[h] = (long) w;
      for (int i = 0; i < n_q; i++)
        for (int j = 0; j <= (packed ? i : n_k - 1); j++)
          slots[slot].values[w * per + sc_attn_packed_index (i, j, n_k, packed)]
              = sc_fp32_to_fp16 (probs[((size_t) h * n_q + i) * n_k + j]);
      w++;
    }
  return SC_OK;
}

static ScStatus
fake_wait (ScBackend *b, int slot, const uint16_t **heads, bool *packed, ScError *err)
{
  *packed = slots[slot].packed;
  for (int h = 0; h < slots[slot].n_heads; h++)
    heads[h] = slots[slot].at[h] >= 0
                   ? slots[slot].values + (size_t) slots[slot].at[h] * slots[slot].per_head
                   : NULL;
  return SC_OK;
}

ScBackend *
sc_test_capture_backend_new (void)
{
  ScBackend *b = sc_backend_cpu_ref_new ();

  ref_ops = b->ops;
  fake_ops = *b->ops;
  fake_ops.name = "fake-capture";
  fake_ops.attention = fake_attention;
  fake_ops.attention_capture = fake_capture;
  fake_ops.capture_wait = fake_wait;
  fake_ops.alloc = fake_alloc;
  b->ops = &fake_ops;
  b->caps |= SC_BACKEND_CAP_ATTN_CAPTURE;
  return b;
}
