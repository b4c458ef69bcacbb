/* synthetic-head.c — the tests' long causal head (synthetic-head.h). */
#include "tests/ui/synthetic-head.h"

#include <math.h>

uint16_t
synth_fp16_encode (float v)
{
  double a = fabs (v), m;
  uint16_t sign = signbit (v) ? 0x8000u : 0;
  int e;
  long mant;

  if (a < ldexp (1, -14)) /* subnormal: a multiple of 2^-24 */
    return (uint16_t) (sign | (uint16_t) lround (ldexp (a, 24)));
  m = frexp (a, &e);      /* a = m 2^e, m in [0.5, 1): 1.f 2^(e-1) */
  mant = lround ((2 * m - 1) * 1024);
  if (mant == 1024)       /* rounded up to the next power of two */
    {
      mant = 0;
      e++;
    }
  if (e - 1 > 15)
    return (uint16_t) (sign | 0x7c00u);
  return (uint16_t) (sign | ((e - 1 + 15) << 10) | mant);
}

GBytes *
synth_head_fp16 (int n, guint32 seed)
{
  gsize total = (gsize) n * (n + 1) / 2, k = 0;
  uint16_t *tri = g_new (uint16_t, total);
  GRand *rand = g_rand_new_with_seed (seed);
  double *share = g_new (double, n);

  for (int i = 0; i < n; i++)
    {
      double sum = 0;
      for (int j = 1; j < i - 1; j++)
        sum += share[j] = g_rand_double (rand);
      for (int j = 0; j <= i; j++)
        {
          float w;
          if (i == 0)
            w = 1.0f;
          else if (j == i)
            w = SYNTH_SELF;
          else if (j == i - 1)
            w = SYNTH_PREV + (i == 1 ? SYNTH_SINK + SYNTH_NOISE : 0);
          else if (j == 0)
            w = SYNTH_SINK + (i == 2 ? SYNTH_NOISE : 0);
          else
            w = (float) (SYNTH_NOISE * share[j] / sum);
          tri[k++] = synth_fp16_encode (w);
        }
    }
  g_free (share);
  g_rand_free (rand);
  return g_bytes_new_take (tri, total * sizeof (uint16_t));
}
