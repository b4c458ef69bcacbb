/* sc-math.h — per-element math shared by the CPU engine and the CUDA backend.
 *
 * Everything here is a small `SC_HD` (static inline, and __host__ __device__ under nvcc)
 * function over scalars or one quant block: IEEE fp16 and bf16 conversion done on the bit
 * patterns, the RoPE pair rotation, the activations (SiLU, tanh-approximated GELU), the
 * attention mask rule (causal, sliding window), the online-softmax (max, sum) state and its
 * merge, the steps of the tiled (flash) attention kernel, and the decoding of one ggml
 * quant block into floats. Keeping them in one header means the
 * CPU unit tests exercise exactly the arithmetic the GPU kernels run. It is not the place
 * for loops over tensors, threading or error reporting: sc-quant.c walks rows of blocks and
 * validates sizes; the backends own their kernels.
 *
 * Plain C17 that also compiles as CUDA C++. No GLib, no global state, no allocation.
 */
#pragma once

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "format/sc-quant-blocks.h"

#ifdef __CUDACC__
#define SC_HD static inline __host__ __device__
#else
#define SC_HD static inline
#endif

/* C's restrict, spelled so that C++ (nvcc) accepts it too. The block decoders promise
 * the compiler that the output floats do not overlap the block, which is what lets it
 * vectorise their fixed-length loops (the engine builds with -fno-strict-aliasing, so
 * it cannot infer that from the pointer types). */
#if defined(__cplusplus)
#define SC_RESTRICT __restrict__
#else
#define SC_RESTRICT restrict
#endif

/* ------------------------------------------------------------------------------------ */
/* Bit casts                                                                             */
/* ------------------------------------------------------------------------------------ */

/* Returns the IEEE-754 bit pattern of @f (memcpy is the portable, alias-safe spelling;
 * compilers turn it into a register move). */
SC_HD uint32_t
sc_fp32_bits (float f)
{
#ifdef __CUDA_ARCH__
  return __float_as_uint (f);
#else
  uint32_t u;
  memcpy (&u, &f, sizeof u);
  return u;
#endif
}

/* Returns the float whose IEEE-754 bit pattern is @u. */
SC_HD float
sc_fp32_from_bits (uint32_t u)
{
#ifdef __CUDA_ARCH__
  return __uint_as_float (u);
#else
  float f;
  memcpy (&f, &u, sizeof f);
  return f;
#endif
}

/* ------------------------------------------------------------------------------------ */
/* fp16 (IEEE binary16: 1 sign, 5 exponent bits biased by 15, 10 mantissa bits)          */
/* ------------------------------------------------------------------------------------ */

#define SC_FP16_EXP_MASK 0x7c00u
#define SC_FP16_MANT_MASK 0x03ffu
#define SC_FP16_MANT_BITS 10
#define SC_FP16_EXP_BIAS 15
#define SC_FP32_EXP_MASK 0x7f800000u
#define SC_FP32_MANT_MASK 0x007fffffu
#define SC_FP32_MANT_BITS 23
#define SC_FP32_EXP_BIAS 127
/* A binary16 mantissa sits in the top 10 of a binary32's 23 mantissa bits. */
#define SC_FP16_TO_FP32_MANT_SHIFT (SC_FP32_MANT_BITS - SC_FP16_MANT_BITS)

/* Converts binary16 bits @h to float, exactly (every half is a float): normals and
 * subnormals to the same value, ±0 to ±0, ±inf to ±inf, NaN to a NaN with the same sign
 * and the payload shifted into the top mantissa bits. */
SC_HD float
sc_fp16_to_fp32 (uint16_t h)
{
  uint32_t sign = (uint32_t) (h & 0x8000u) << 16;
  uint32_t exp = (h & SC_FP16_EXP_MASK) >> SC_FP16_MANT_BITS;
  uint32_t mant = h & SC_FP16_MANT_MASK;

  if (exp == 0x1f)                              /* inf or NaN: all-ones exponent */
    return sc_fp32_from_bits (sign | SC_FP32_EXP_MASK | (mant << SC_FP16_TO_FP32_MANT_SHIFT));

  if (exp == 0)
    {
      int shift = 0;

      if (mant == 0)                            /* ±0 */
        return sc_fp32_from_bits (sign);

      /* Subnormal: mant * 2^-24. Shift the leading 1 up to the implicit-bit position
       * (bit 10); the value is then 1.f * 2^(-14 - shift), a normal float. */
      while ((mant & (SC_FP16_MANT_MASK + 1)) == 0)
        {
          mant <<= 1;
          shift++;
        }
      mant &= SC_FP16_MANT_MASK;
      exp = (uint32_t) (SC_FP32_EXP_BIAS - (SC_FP16_EXP_BIAS - 1) - shift);
      return sc_fp32_from_bits (sign | (exp << SC_FP32_MANT_BITS)
                                | (mant << SC_FP16_TO_FP32_MANT_SHIFT));
    }

  /* Normal: rebias the exponent from 15 to 127. */
  exp += SC_FP32_EXP_BIAS - SC_FP16_EXP_BIAS;
  return sc_fp32_from_bits (sign | (exp << SC_FP32_MANT_BITS)
                            | (mant << SC_FP16_TO_FP32_MANT_SHIFT));
}

/* Rounds @f to the nearest binary16, ties to even (IEEE default rounding, as numpy's
 * astype(float16) and ggml's F16C path do). Values that round past 65504 become ±inf,
 * values below half the smallest subnormal (2^-25) become ±0, NaN stays a quiet NaN. */
SC_HD uint16_t
sc_fp32_to_fp16 (float f)
{
  uint32_t x = sc_fp32_bits (f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x & SC_FP32_EXP_MASK) >> SC_FP32_MANT_BITS;
  uint32_t mant = x & SC_FP32_MANT_MASK;
  int e = (int) exp - SC_FP32_EXP_BIAS;             /* unbiased exponent */

  if (exp == 0xff)
    {
      if (mant == 0)
        return (uint16_t) (sign | SC_FP16_EXP_MASK);  /* ±inf */
      /* NaN: keep the top payload bits and set the quiet bit, so it cannot become inf. */
      return (uint16_t) (sign | SC_FP16_EXP_MASK | 0x0200u | (mant >> SC_FP16_TO_FP32_MANT_SHIFT));
    }

  if (e > SC_FP16_EXP_BIAS)                          /* >= 2^16: beyond any half */
    return (uint16_t) (sign | SC_FP16_EXP_MASK);

  if (e >= 1 - SC_FP16_EXP_BIAS)
    {
      /* Normal range of binary16. Drop 13 mantissa bits with round-to-nearest-even; a
       * carry out of the mantissa bumps the exponent, and out of exponent 30 gives the
       * inf pattern 0x7c00, which is the right answer for values >= 65520. */
      uint32_t h = ((uint32_t) (e + SC_FP16_EXP_BIAS) << SC_FP16_MANT_BITS)
                   | (mant >> SC_FP16_TO_FP32_MANT_SHIFT);
      uint32_t rest = mant & ((1u << SC_FP16_TO_FP32_MANT_SHIFT) - 1);
      uint32_t half = 1u << (SC_FP16_TO_FP32_MANT_SHIFT - 1);

      if (rest > half || (rest == half && (h & 1u)))
        h++;
      return (uint16_t) (sign | h);
    }

  {
    /* Subnormal (or zero) binary16: the result is round(|f| / 2^-24). With the implicit
     * bit, |f| = m24 * 2^(e - 23), so |f| / 2^-24 = m24 >> (-e - 1). Past a shift of 24
     * even the largest m24 (< 2^24) is below half a unit, so the result is ±0; fp32
     * subnormals (exp == 0) always land there. */
    uint32_t m24 = mant | (1u << SC_FP32_MANT_BITS);
    int shift = -e - 1;                              /* >= 14 here */
    uint32_t h, rest, half;

    if (shift > 24)
      return (uint16_t) sign;
    h = m24 >> shift;
    rest = m24 & ((1u << shift) - 1);
    half = 1u << (shift - 1);
    /* Rounding up from 0x3ff gives 0x400: the smallest normal, encoded correctly. */
    if (rest > half || (rest == half && (h & 1u)))
      h++;
    return (uint16_t) (sign | h);
  }
}

/* ------------------------------------------------------------------------------------ */
/* bf16 (the top 16 bits of a binary32)                                                  */
/* ------------------------------------------------------------------------------------ */

/* Converts bfloat16 bits @b to float, exactly. */
SC_HD float
sc_bf16_to_fp32 (uint16_t b)
{
  return sc_fp32_from_bits ((uint32_t) b << 16);
}

/* Rounds @f to bfloat16, ties to even. NaN stays NaN and is made quiet (bit 6 of the
 * result, the top mantissa bit) so truncating its payload cannot turn it into inf.
 * Identical bits to ggml's fp32->bf16 and the gguf Python package's. */
SC_HD uint16_t
sc_fp32_to_bf16 (float f)
{
  uint32_t x = sc_fp32_bits (f);

  if ((x & 0x7fffffffu) > SC_FP32_EXP_MASK)
    return (uint16_t) ((x >> 16) | 0x0040u);
  /* Add just under half an ulp of the result, plus one more when the kept part is odd:
   * that is round-half-to-even on the 16 discarded bits. Overflow carries into the
   * exponent and yields inf for values that round past the largest bf16. */
  return (uint16_t) ((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* ------------------------------------------------------------------------------------ */
/* RoPE                                                                                  */
/* ------------------------------------------------------------------------------------ */

/* Rotates the pair (*x0, *x1) by the angle whose cosine and sine are @cos_t, @sin_t:
 *   x0' = x0 cos - x1 sin,   x1' = x0 sin + x1 cos.
 * Which elements form a pair (adjacent for GGUF llama weights, split halves for NeoX) is
 * the caller's choice. */
SC_HD void
sc_rope_rotate_pair (float *x0, float *x1, float cos_t, float sin_t)
{
  float a = *x0;
  float b = *x1;

  *x0 = a * cos_t - b * sin_t;
  *x1 = a * sin_t + b * cos_t;
}

/* ------------------------------------------------------------------------------------ */
/* Activations                                                                           */
/* ------------------------------------------------------------------------------------ */

/* Soft-capping (Gemma 2): cap tanh(x / cap), in float with libm's tanhf; cap > 0. */
SC_HD float
sc_softcapf (float x, float cap)
{
  return cap * tanhf (x / cap);
}

/* SiLU (swish): silu(x) = x sigmoid(x) = x / (1 + e^-x), in float with libm's expf. The
 * gate of a SwiGLU block (llama). */
SC_HD float
sc_siluf (float x)
{
  return x / (1.0f + expf (-x));
}

/* The derivative of silu, in double (the backward pass's): with s = sigmoid(x),
 * silu'(x) = s (1 + x (1 - s)). */
SC_HD double
sc_silu_grad (double x)
{
  const double s = 1.0 / (1.0 + exp (-x));

  return s * (1.0 + x * (1.0 - s));
}

/* GELU, tanh approximation (Hendrycks & Gimpel 2016, eq. 2; GPT-2's "gelu_new", Gemma's
 * "gelu_pytorch_tanh", ggml's ggml_gelu):
 *   gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
 * Not the exact erf form 0.5 x (1 + erf(x / sqrt 2)) that BERT uses; the two differ by up
 * to ~1e-3 near |x| = 2. The float version is the fast paths'; the double one is the
 * reference backend's, from the same constants. */
#define SC_GELU_COEF_A 0.044715
#define SC_SQRT_2_OVER_PI 0.79788456080286535588 /* sqrt(2 / pi) */

SC_HD float
sc_gelu_tanhf (float x)
{
  const float a = (float) SC_GELU_COEF_A, c = (float) SC_SQRT_2_OVER_PI;

  return 0.5f * x * (1.0f + tanhf (c * x * (1.0f + a * x * x)));
}

SC_HD double
sc_gelu_tanh (double x)
{
  return 0.5 * x * (1.0 + tanh (SC_SQRT_2_OVER_PI * (x + SC_GELU_COEF_A * x * x * x)));
}

/* d gelu / dx of the tanh form above, with u = sqrt(2/pi) (x + a x^3), t = tanh u:
 *   0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 a x^2)  (the backward's geglu). */
SC_HD double
sc_gelu_tanh_grad (double x)
{
  const double t = tanh (SC_SQRT_2_OVER_PI * (x + SC_GELU_COEF_A * x * x * x));

  return 0.5 * (1.0 + t)
         + 0.5 * x * (1.0 - t * t) * SC_SQRT_2_OVER_PI * (1.0 + 3.0 * SC_GELU_COEF_A * x * x);
}

/* ------------------------------------------------------------------------------------ */
/* Attention mask                                                                        */
/* ------------------------------------------------------------------------------------ */

/* Which keys the query at position @p may see, before any per-key mask: causal, key j
 * needs j <= p (decoders) or else every key (encoders such as BERT); a sliding window
 * @window > 0 also masks every key with p - j >= window (Gemma 3's local layers: the
 * query and the window - 1 keys before it; the rule llama.cpp applies for its standard
 * SWA type), so a non-causal windowed query still sees every key after it. window = 0
 * means no window. The visible keys form one contiguous range [*lo, *hi] of 0..n_k - 1,
 * never empty when 0 <= p < n_k (the query's own key is always visible). */
SC_HD void
sc_attn_key_range (int p, int n_k, bool causal, int window, int *lo, int *hi)
{
  *lo = window > 0 && p - window + 1 > 0 ? p - window + 1 : 0;
  *hi = causal ? p : n_k - 1;
}

/* ------------------------------------------------------------------------------------ */
/* Online softmax                                                                        */
/* ------------------------------------------------------------------------------------ */

/* exp(x) for the softmax of the fast CPU path, without branches or calls (libm's expf is a
 * call). Range reduction x = n ln2 + r with |r| <= ln2/2 (ln2 split in two for an exact
 * n ln2), a degree-6 polynomial for e^r (Cephes expf's coefficients), and 2^n built in the
 * exponent bits. Error <= 2 ulp against expf over [-87.3, 88.7] (tests/engine/test-attention.c
 * checks every 97th float in range); below -87.3 it returns ~0 (a denormal-free flush:
 * e^-87.3 is 1.2e-38, far under any probability we store), above 88.7 it is not meant to be
 * used (softmax inputs are <= 0 after subtracting the row maximum). GCC does not vectorise
 * a loop over it (the clamps and the conversion to the exponent's integer stop it): the
 * CPU attention kernel runs the same operations with the same SC_EXPF_* constants in vector
 * lanes (vexpf in sc-backend-cpu-attn.c), bit for bit. */
#define SC_EXPF_MIN (-87.3f)
#define SC_EXPF_MAX 88.7f
#define SC_EXPF_LOG2E 1.44269504088896341f
#define SC_EXPF_LN2_HI 0.693359375f
#define SC_EXPF_LN2_LO (-2.12194440e-4f)
#define SC_EXPF_ROUND 12582912.0f /* 1.5 * 2^23: adding it rounds to an integer */
#define SC_EXPF_P0 1.9875691500e-4f
#define SC_EXPF_P1 1.3981999507e-3f
#define SC_EXPF_P2 8.3334519073e-3f
#define SC_EXPF_P3 4.1665795894e-2f
#define SC_EXPF_P4 1.6666665459e-1f
#define SC_EXPF_P5 5.0000001201e-1f
/* e^r - the polynomial above, for a float or a GCC vector of floats @r (the same operations
 * in the same order either way: a float constant times a vector is lane by lane). */
#define SC_EXPF_POLY(r)                                                                    \
  ((((((SC_EXPF_P0 * (r) + SC_EXPF_P1) * (r) + SC_EXPF_P2) * (r) + SC_EXPF_P3) * (r)          \
     + SC_EXPF_P4) * (r) + SC_EXPF_P5) * (r) * (r) + (r) + 1.0f)

SC_HD float
sc_expf (float x)
{
  float t, n, r, p;
  uint32_t bits;

  x = x < SC_EXPF_MIN ? SC_EXPF_MIN : x;
  x = x > SC_EXPF_MAX ? SC_EXPF_MAX : x;
  t = x * SC_EXPF_LOG2E + SC_EXPF_ROUND;
  n = t - SC_EXPF_ROUND;
  r = x - n * SC_EXPF_LN2_HI - n * SC_EXPF_LN2_LO;
  p = SC_EXPF_POLY (r);
  bits = (uint32_t) ((int32_t) n + 127) << 23;
  return p * sc_fp32_from_bits (bits);
}

/* The running normaliser of a softmax over scores seen so far (Milakov & Gimelshein 2018):
 *   max = max_i x_i,   sum = Σ_i exp(x_i - max).
 * Then softmax(x)_i = exp(x_i - max) / sum. The empty state is (-inf, 0). Scores of -inf
 * (masked keys) contribute nothing. Two states over disjoint sets of scores merge into the
 * state of their union, so scores can be folded in any order and split across threads;
 * an accumulator Σ exp(x_i - max) v_i kept beside a state must be multiplied by
 * sc_softmax_rescale (old.max, new.max) whenever the state's max changes. */
typedef struct {
  float max;
  float sum;
} ScSoftmaxState;

/* Returns the empty state (max = -inf, sum = 0). */
SC_HD ScSoftmaxState
sc_softmax_state_init (void)
{
  ScSoftmaxState s;

  s.max = -INFINITY;
  s.sum = 0.0f;
  return s;
}

/* Returns exp(from_max - to_max): the factor that moves a sum taken relative to @from_max
 * onto @to_max (to_max >= from_max). Equal maxima give exactly 1, also when both are
 * -inf (where the plain formula would give NaN). */
SC_HD float
sc_softmax_rescale (float from_max, float to_max)
{
  return from_max == to_max ? 1.0f : expf (from_max - to_max);
}

/* Returns @s with the score @x folded in:
 *   max' = max(max, x),   sum' = sum * exp(max - max') + exp(x - max').
 * x = -inf leaves the state unchanged. */
SC_HD ScSoftmaxState
sc_softmax_state_update (ScSoftmaxState s, float x)
{
  ScSoftmaxState r;

  if (x == -INFINITY)
    return s;
  if (x > s.max)
    {
      r.max = x;
      r.sum = s.sum * sc_softmax_rescale (s.max, x) + 1.0f;
    }
  else
    {
      r.max = s.max;
      r.sum = s.sum + expf (x - s.max);
    }
  return r;
}

/* Returns the state of the union of the scores behind @a and @b:
 *   max = max(a.max, b.max),   sum = a.sum exp(a.max - max) + b.sum exp(b.max - max).
 * Merging with the empty state returns the other state unchanged. */
SC_HD ScSoftmaxState
sc_softmax_state_merge (ScSoftmaxState a, ScSoftmaxState b)
{
  ScSoftmaxState r;

  r.max = a.max > b.max ? a.max : b.max;
  r.sum = a.sum * sc_softmax_rescale (a.max, r.max) + b.sum * sc_softmax_rescale (b.max, r.max);
  return r;
}

/* ------------------------------------------------------------------------------------ */
/* Flash attention: the steps of the tiled kernel (cuda/sc-cuda-attention.cu)            */
/* ------------------------------------------------------------------------------------ */
/* The CUDA attention kernels walk the keys of a query row in tiles of SC_FLASH_BC keys,
 * one warp of SC_FLASH_LANES lanes per row. Lane t scores the keys t and t + 32 of a tile
 * (a sequential fmaf dot product over the head's dims, then times scale); the tile's
 * maximum and sum are taken across the warp by the butterfly below; each lane then owns
 * the output dims c = t + 32 u and adds p_j v_j[c] over the tile's keys in ascending order.
 * The functions here are those steps, used by the kernels and by the CPU emulation of the
 * kernel's loop in tests/engine/test-flash-tile.c, so both run the same arithmetic in the
 * same order (only expf/logf may differ by an ulp between libm and CUDA).
 *
 * Two paths share them:
 *   - flash (nothing captured): one pass; the row's softmax state (max, sum) and its
 *     accumulator are rescaled whenever a tile raises the max (online softmax);
 *   - capture (probabilities wanted): pass 1 runs the same tiles without V to get the row's
 *     state, hence its log-sum-exp lse = max + ln(sum); pass 2 rescores each key and writes
 *     the exact normalised p = exp(s - lse) (fp32, or fp16 packed as the store lays a
 *     head), and accumulates P.V from those same p. No n x n matrix is ever needed in
 *     fp32 on the device. */

/* Keys per tile: two per lane of a 32-lane warp, so a tile's scores sit in registers. */
#define SC_FLASH_LANES 32
#define SC_FLASH_BC (2 * SC_FLASH_LANES)
/* Query rows per thread block: 4 warps, each walking 4 rows in turn (the block shares each
 * K/V tile among its 16 rows through shared memory). */
#define SC_FLASH_WARPS 4
#define SC_FLASH_BR 16
/* Largest head_dim the kernels take: each lane holds head_dim / 32 accumulator floats. */
#define SC_FLASH_MAX_D 256

/* May the query at position @p see key @j? [lo, hi] is its range (sc_attn_key_range),
 * @key_mask (n_k, NULL = none) masks keys for every query, and a row whose visible keys
 * are all masked (@row_all_masked) sees its own key alone (the attention contract in
 * backend/sc-backend-impl.h). */
SC_HD bool
sc_attn_key_visible (int p, int j, int lo, int hi, const uint8_t *key_mask, bool row_all_masked)
{
  if (j < lo || j > hi)
    return false;
  if (row_all_masked)
    return j == p;
  return key_mask == NULL || key_mask[j] == 0;
}

/* The dot product of a query and a key row of @d floats, in order, with fmaf: the lane's
 * arithmetic in the kernels (where it is one FMA instruction a step). */
SC_HD float
sc_flash_dot (const float *q, const float *k, int d)
{
  float acc = 0.0f;

  for (int c = 0; c < d; c++)
    acc = fmaf (q[c], k[c], acc);
  return acc;
}

/* Opens a tile whose visible scores have maximum @tile_max (-inf: none visible): returns
 * the state with the new maximum and the old sum rescaled onto it, and in *alpha the factor
 * the row's accumulator must be multiplied by before the tile's p_j v_j are added. The
 * caller then adds the tile's weights (sc_flash_weight against the returned max) to .sum. */
SC_HD ScSoftmaxState
sc_flash_tile_open (ScSoftmaxState s, float tile_max, float *alpha)
{
  ScSoftmaxState r;

  r.max = tile_max > s.max ? tile_max : s.max;
  *alpha = sc_softmax_rescale (s.max, r.max);
  r.sum = s.sum * *alpha;
  return r;
}

/* The unnormalised weight exp(s - max) of a score within a tile; a masked score (-inf)
 * weighs exactly 0. */
SC_HD float
sc_flash_weight (float s, float max)
{
  return s == -INFINITY ? 0.0f : expf (s - max);
}

/* The warp's sum of one float per lane, in the kernels' order: a butterfly where, for
 * offset 16, 8, 4, 2, 1, lane t adds lane t XOR offset's value to its own (__shfl_xor_sync
 * on the GPU). Every lane ends with the same value (float addition is commutative), which
 * this returns; @v is overwritten. The CPU emulation of a warp reduction. */
SC_HD float
sc_flash_lane_sum (float v[SC_FLASH_LANES])
{
  for (int off = SC_FLASH_LANES / 2; off >= 1; off /= 2)
    {
      float t[SC_FLASH_LANES];

      for (int l = 0; l < SC_FLASH_LANES; l++)
        t[l] = v[l] + v[l ^ off];
      for (int l = 0; l < SC_FLASH_LANES; l++)
        v[l] = t[l];
    }
  return v[0];
}

/* The log-sum-exp of a row's finished state: ln sum_j exp(s_j) = max + ln(sum). A row
 * always sees at least its own key, so sum >= 1 and the result is finite. */
SC_HD float
sc_flash_lse (ScSoftmaxState s)
{
  return s.max + logf (s.sum);
}

/* A normalised probability from the row's log-sum-exp (the capture path's pass 2);
 * masked keys (-inf) are exactly 0. */
SC_HD float
sc_flash_prob (float s, float lse)
{
  return s == -INFINITY ? 0.0f : expf (s - lse);
}

/* Where value (i, j) of a head of (n_q, n_k) probabilities sits in the store's layout
 * (docs/store.md): a causal square head (@packed: n_q == n_k, causal) keeps the lower
 * triangle, row i starting at i(i+1)/2 and holding keys 0..i; any other head is stored
 * full, row-major. Indexes in size_t: a 2^19-token head has 2^37 values. */
SC_HD size_t
sc_attn_packed_index (int i, int j, int n_k, bool packed)
{
  return packed ? (size_t) i * ((size_t) i + 1) / 2 + (size_t) j
                : (size_t) i * (size_t) n_k + (size_t) j;
}

/* Values in a head stored as above: n(n + 1)/2 packed, n_q n_k full. */
SC_HD size_t
sc_attn_packed_size (int n_q, int n_k, bool packed)
{
  return packed ? (size_t) n_q * ((size_t) n_q + 1) / 2 : (size_t) n_q * (size_t) n_k;
}

/* ------------------------------------------------------------------------------------ */
/* Quant block decoding (layouts in sc-quant-blocks.h; ggml's dequantize_row_* order)    */
/* ------------------------------------------------------------------------------------ */
/* Each function writes the block's elements, in order, to y[0 .. block size - 1], which
 * must not overlap the block. They never fail: every bit pattern decodes to some float
 * (inf/NaN scales give inf/NaN). The arithmetic is spelled as ggml spells it
 * ((d * sc) * q - dmin * m, ...) so results match ggml and the gguf Python package to the
 * last bit when no FMA contraction is used. */

/* Q4_0: y[j] = (lo(qs[j]) - 8) d,  y[j + 16] = (hi(qs[j]) - 8) d. */
SC_HD void
sc_dequant_block_q4_0 (const ScBlockQ4_0 *SC_RESTRICT b, float *SC_RESTRICT y)
{
  const float d = sc_fp16_to_fp32 (b->d);

  for (int j = 0; j < SC_QK4_0 / 2; j++)
    {
      y[j] = (float) ((b->qs[j] & 0x0f) - 8) * d;
      y[j + SC_QK4_0 / 2] = (float) ((b->qs[j] >> 4) - 8) * d;
    }
}

/* Q4_1: y[j] = lo(qs[j]) d + m,  y[j + 16] = hi(qs[j]) d + m. */
SC_HD void
sc_dequant_block_q4_1 (const ScBlockQ4_1 *SC_RESTRICT b, float *SC_RESTRICT y)
{
  const float d = sc_fp16_to_fp32 (b->d);
  const float m = sc_fp16_to_fp32 (b->m);

  for (int j = 0; j < SC_QK4_1 / 2; j++)
    {
      y[j] = (float) (b->qs[j] & 0x0f) * d + m;
      y[j + SC_QK4_1 / 2] = (float) (b->qs[j] >> 4) * d + m;
    }
}

/* Returns the 32 fifth bits of a Q5 block as one little-endian word (read bytewise, so
 * the block needs no 4-byte alignment). */
SC_HD uint32_t
sc_q5_high_bits (const uint8_t qh[4])
{
  return (uint32_t) qh[0] | ((uint32_t) qh[1] << 8) | ((uint32_t) qh[2] << 16)
         | ((uint32_t) qh[3] << 24);
}

/* Q5_0: q = nibble | (bit j of qh) << 4;  y = (q - 16) d. */
SC_HD void
sc_dequant_block_q5_0 (const ScBlockQ5_0 *SC_RESTRICT b, float *SC_RESTRICT y)
{
  const float d = sc_fp16_to_fp32 (b->d);
  const uint32_t qh = sc_q5_high_bits (b->qh);

  for (int j = 0; j < SC_QK5_0 / 2; j++)
    {
      const int h0 = (int) ((qh >> j) & 1u) << 4;
      const int h1 = (int) ((qh >> (j + SC_QK5_0 / 2)) & 1u) << 4;

      y[j] = (float) (((b->qs[j] & 0x0f) | h0) - 16) * d;
      y[j + SC_QK5_0 / 2] = (float) (((b->qs[j] >> 4) | h1) - 16) * d;
    }
}

/* Q5_1: q as in Q5_0;  y = q d + m. */
SC_HD void
sc_dequant_block_q5_1 (const ScBlockQ5_1 *SC_RESTRICT b, float *SC_RESTRICT y)
{
  const float d = sc_fp16_to_fp32 (b->d);
  const float m = sc_fp16_to_fp32 (b->m);
  const uint32_t qh = sc_q5_high_bits (b->qh);

  for (int j = 0; j < SC_QK5_1 / 2; j++)
    {
      const int h0 = (int) ((qh >> j) & 1u) << 4;
      const int h1 = (int) ((qh >> (j + SC_QK5_1 / 2)) & 1u) << 4;

      y[j] = (float) ((b->qs[j] & 0x0f) | h0) * d + m;
      y[j + SC_QK5_1 / 2] = (float) ((b->qs[j] >> 4) | h1) * d + m;
    }
}

/* Q8_0: y[j] = qs[j] d. */
SC_HD void
sc_dequant_block_q8_0 (const ScBlockQ8_0 *SC_RESTRICT b, float *SC_RESTRICT y)
{
  const float d = sc_fp16_to_fp32 (b->d);

  for (int j = 0; j < SC_QK8_0; j++)
    y[j] = (float) b->qs[j] * d;
}

/* Q2_K. The 256 elements are two halves of 128; half h reads qs[32h .. 32h + 31], and
 * bit pair p (bits 2p, 2p+1) of those 32 bytes holds elements 128h + 32p + l, l = 0..31.
 * Each run of 16 elements has its own scale byte, taken in order:
 *   sc = scales[8h + 2p + l / 16];  y = d (sc & 15) q - dmin (sc >> 4). */
SC_HD void
sc_dequant_block_q2_k (const ScBlockQ2_K *SC_RESTRICT b, float *SC_RESTRICT y)
{
  const float d = sc_fp16_to_fp32 (b->d);
  const float dmin = sc_fp16_to_fp32 (b->dmin);

  for (int h = 0; h < 2; h++)
    for (int p = 0; p < 4; p++)
      for (int g = 0; g < 2; g++)               /* the two runs of 16 under one pair */
        {
          const uint8_t sc = b->scales[8 * h + 2 * p + g];
          const float dl = d * (float) (sc & 0x0f);
          const float ml = dmin * (float) (sc >> 4);
          const uint8_t *q = b->qs + 32 * h + 16 * g;
          float *out = y + 128 * h + 32 * p + 16 * g;

          for (int l = 0; l < 16; l++)
            out[l] = dl * (float) ((q[l] >> (2 * p)) & 3) - ml;
        }
}

/* Returns Q3_K scale @j (0..15), unbiased to -32..31. The 12 bytes pack 16 6-bit values:
 * the low 4 bits of scale j are the low nibble of byte j (j < 8) or the high nibble of
 * byte j - 8 (j >= 8); the high 2 bits are bits 2(j / 4), 2(j / 4) + 1 of byte 8 + j % 4.
 * (ggml unpacks the same with 32-bit masks, the "kmask" trick; this is the per-scale
 * reading of that code.) */
SC_HD int
sc_q3_k_scale (const uint8_t scales[SC_K_SCALE_SIZE], int j)
{
  const int lo = j < 8 ? (scales[j] & 0x0f) : (scales[j - 8] >> 4);
  const int hi = (scales[8 + (j & 3)] >> (2 * (j >> 2))) & 3;

  return (lo | (hi << 4)) - 32;
}

/* Q3_K. Same walk as Q2_K (halves h, bit pairs p, runs g of 16); the third bit of an
 * element at index l (0..31) within its 32 comes from bit 4h + p of hmask[l], inverted:
 *   q = ((qs >> 2p) & 3) - (hbit ? 0 : 4);  y = d (scale_{8h + 2p + g} - 32) q. */
SC_HD void
sc_dequant_block_q3_k (const ScBlockQ3_K *SC_RESTRICT b, float *SC_RESTRICT y)
{
  const float d = sc_fp16_to_fp32 (b->d);

  for (int h = 0; h < 2; h++)
    for (int p = 0; p < 4; p++)
      {
        const uint8_t hbit = (uint8_t) (1u << (4 * h + p));

        for (int g = 0; g < 2; g++)
          {
            const float dl = d * (float) sc_q3_k_scale (b->scales, 8 * h + 2 * p + g);
            const uint8_t *q = b->qs + 32 * h + 16 * g;
            const uint8_t *hm = b->hmask + 16 * g;
            float *out = y + 128 * h + 32 * p + 16 * g;

            for (int l = 0; l < 16; l++)
              out[l] = dl * (float) (((q[l] >> (2 * p)) & 3) - ((hm[l] & hbit) ? 0 : 4));
          }
      }
}

/* Unpacks (scale, min) pair @j (0..7) of Q4_K/Q5_K (ggml's get_scale_min_k4): pairs 0..3
 * are the low 6 bits of bytes j and j + 4; pairs 4..7 take their low 4 bits from the
 * nibbles of byte j + 4 and their top 2 bits from the spare top bits of bytes j - 4, j. */
SC_HD void
sc_k4_scale_min (const uint8_t q[SC_K_SCALE_SIZE], int j, uint8_t *sc, uint8_t *m)
{
  if (j < 4)
    {
      *sc = q[j] & 63;
      *m = q[j + 4] & 63;
    }
  else
    {
      *sc = (uint8_t) ((q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4));
      *m = (uint8_t) ((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

/* The body Q4_K and Q5_K share. Four chunks c of 64 elements over qs[32c .. 32c + 31]:
 * the low nibbles are elements 64c + l with scale/min pair 2c, the high nibbles
 * 64c + 32 + l with pair 2c + 1: y = (d sc) q - (dmin m). With @qh (Q5_K) each q gains a
 * fifth bit: element 64c + l takes bit 2c of qh[l], element 64c + 32 + l bit 2c + 1 (bit k
 * of qh[l] belongs to element 32k + l). @qh NULL is Q4_K. */
SC_HD void
sc_dequant_k4_chunks (float d, float dmin, const uint8_t *scales, const uint8_t *qs,
                      const uint8_t *qh, float *SC_RESTRICT y)
{
  for (int c = 0; c < 4; c++)
    {
      uint8_t sc1, m1, sc2, m2;
      const uint8_t *q = qs + 32 * c;
      float *out = y + 64 * c;

      sc_k4_scale_min (scales, 2 * c, &sc1, &m1);
      sc_k4_scale_min (scales, 2 * c + 1, &sc2, &m2);
      {
        const float d1 = d * (float) sc1, m1f = dmin * (float) m1;
        const float d2 = d * (float) sc2, m2f = dmin * (float) m2;

        for (int l = 0; l < 32; l++)
          {
            const int h1 = qh != NULL ? ((qh[l] >> (2 * c)) & 1) << 4 : 0;
            const int h2 = qh != NULL ? ((qh[l] >> (2 * c + 1)) & 1) << 4 : 0;

            out[l] = d1 * (float) ((q[l] & 0x0f) | h1) - m1f;
            out[l + 32] = d2 * (float) ((q[l] >> 4) | h2) - m2f;
          }
      }
    }
}

/* Q4_K: sc_dequant_k4_chunks without a fifth bit. */
SC_HD void
sc_dequant_block_q4_k (const ScBlockQ4_K *SC_RESTRICT b, float *SC_RESTRICT y)
{
  sc_dequant_k4_chunks (sc_fp16_to_fp32 (b->d), sc_fp16_to_fp32 (b->dmin), b->scales, b->qs,
                        NULL, y);
}

/* Q5_K: Q4_K plus a fifth bit from qh. */
SC_HD void
sc_dequant_block_q5_k (const ScBlockQ5_K *SC_RESTRICT b, float *SC_RESTRICT y)
{
  sc_dequant_k4_chunks (sc_fp16_to_fp32 (b->d), sc_fp16_to_fp32 (b->dmin), b->scales, b->qs,
                        b->qh, y);
}

/* Q6_K. Two halves h of 128 elements over ql[64h ..], qh[32h ..], scales[8h ..]. For
 * l = 0..31 the four elements l, l + 32, l + 64, l + 96 of the half take their low 4 bits
 * from lo(ql[l]), lo(ql[l + 32]), hi(ql[l]), hi(ql[l + 32]) and their top 2 bits from bit
 * pairs 0, 1, 2, 3 of qh[l]; element e of the half uses scale e / 16, so the four
 * elements use scales l/16, l/16 + 2, l/16 + 4, l/16 + 6:
 *   y = (d scales[e / 16]) (q - 32). */
SC_HD void
sc_dequant_block_q6_k (const ScBlockQ6_K *SC_RESTRICT b, float *SC_RESTRICT y)
{
  const float d = sc_fp16_to_fp32 (b->d);

  for (int h = 0; h < 2; h++)
    {
      const uint8_t *ql = b->ql + 64 * h;
      const uint8_t *qh = b->qh + 32 * h;
      const int8_t *sc = b->scales + 8 * h;
      float *out = y + 128 * h;

      for (int g = 0; g < 2; g++)               /* runs l = 16g .. 16g + 15 share scales */
        {
          const float d1 = d * (float) sc[g + 0];
          const float d2 = d * (float) sc[g + 2];
          const float d3 = d * (float) sc[g + 4];
          const float d4 = d * (float) sc[g + 6];

          for (int l = 16 * g; l < 16 * g + 16; l++)
            {
              const int q1 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
              const int q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
              const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
              const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;

              out[l] = d1 * (float) q1;
              out[l + 32] = d2 * (float) q2;
              out[l + 64] = d3 * (float) q3;
              out[l + 96] = d4 * (float) q4;
            }
        }
    }
}

/* ln x for a positive normal float, branch-free so that loops over it vectorise (libm's
 * logf does not without -ffast-math, which the engine never uses). Cephes' logf: x =
 * f 2^e with f in [√½, √2), ln x = ln f + e ln 2, ln f from a degree-9 polynomial in f - 1;
 * ln 2 split in two so that e ln 2 keeps its digits. Error about 1e-7 relative; used where
 * the result is summed in double and reported to about 1e-6 (entropies, JSD). A subnormal
 * x (below 1.2e-38: a probability that small contributes x ln x < 1e-36) gets a wrong but
 * finite log; 0 must be masked by the caller. */
SC_HD float
sc_logf (float x)
{
  uint32_t u;
  int32_t e, small;
  float f, z, y;

  memcpy (&u, &x, sizeof u);
  e = (int32_t) (u >> 23) - 126;                  /* x = f 2^e, f in [0.5, 1) */
  u = (u & 0x007fffffu) | 0x3f000000u;
  memcpy (&f, &u, sizeof f);
  /* move f to [√½, √2): f < √½ → 2f - 1 with e - 1, else f - 1 (arithmetic, no branch) */
  small = f < 0.707106781186547524f;
  e -= small;
  f = f + f * (float) small - 1.0f;
  z = f * f;
  y = 7.0376836292e-2f;
  y = y * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  y = y * f * z;
  y += -2.12194440e-4f * (float) e;
  y += -0.5f * z;
  return f + y + 0.693359375f * (float) e;
}
