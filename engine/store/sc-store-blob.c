/* sc-store-blob.c — the attention BLOB layout: fp16, little-endian, row-major; a causal
 * head keeps only its lower triangle (row i holds keys 0..i), which halves it.
 *
 * The conversion is sc-math.h's sc_fp32_to_fp16 (round to nearest, ties to even), so a
 * stored value differs from the captured one by at most half an fp16 unit: a relative
 * error of 2^-11 for values >= 2^-14 (fp16's normal range) and an absolute error of 2^-25
 * below it; values under 2^-25 round to zero. Exact zeros stay exact (docs/store.md).
 * Reading converts back exactly (every fp16 is a float).
 *
 * Speed: sc_fp32_to_fp16 is the ground truth, but it costs ~17 ns a value on our machines
 * (its branches follow the exponent, which probabilities spread widely) — 0.6 s for the
 * 270 heads of a 512-token run, more than SQLite needs to store them. Where the compiler
 * targets F16C (x86 -march=native), rows go 8 values at a time through vcvtps2ph with
 * round-to-nearest-even — the same IEEE rounding, bit for bit (tests/test-store.c checks
 * it against sc_fp32_to_fp16 on every fp16 boundary and tie) — and the tail of each row
 * through the scalar function.
 */
#include "store/sc-store-base.h"

#include <string.h>

#include "core/sc-math.h"

#if defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>
#define SC_STORE_F16C 1
#endif

size_t
sc_store_blob_bytes (bool causal, uint32_t n_query, uint32_t n_key)
{
  if (causal)
    return (size_t) n_query * (n_query + 1) / 2 * sizeof (uint16_t);
  return (size_t) n_query * n_key * sizeof (uint16_t);
}

bool
sc_store_head_is_causal (const float *probs, uint32_t n_query, uint32_t n_key)
{
  uint32_t i, j;

  if (n_query != n_key)
    return false;
  for (i = 0; i + 1 < n_query; i++)
    {
      const float *row = probs + (size_t) i * n_key;
      uint32_t any = 0;
      /* OR the bits without the sign (so -0 counts as zero) over the row's upper part and
       * test once per row: a loop without an early exit vectorises, which makes the scan
       * 10x faster than comparing value by value. */
      for (j = i + 1; j < n_key; j++)
        {
          uint32_t bits;
          memcpy (&bits, &row[j], sizeof bits);
          any |= bits & 0x7fffffffu;
        }
      if (any != 0)
        return false;
    }
  return true;
}

static inline void
put_le16 (uint8_t *p, uint16_t h)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy (p, &h, sizeof h);
#else
  p[0] = (uint8_t) h;
  p[1] = (uint8_t) (h >> 8);
#endif
}

static inline uint16_t
get_le16 (const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint16_t h;
  memcpy (&h, p, sizeof h);
  return h;
#else
  return (uint16_t) (p[0] | (p[1] << 8));
#endif
}

size_t
sc_store_blob_first_bad (const uint8_t *blob, size_t n)
{
  size_t i, k;

  /* fp16 bits of a probability: 0x0000..0x3C00 (+0 to 1), or 0x8000 (-0). Blocks of 256
   * without an early exit vectorise; the failing index is looked for only after. */
  for (i = 0; i < n; i += 256)
    {
      const size_t end = n - i < 256 ? n : i + 256;
      unsigned any = 0;
      for (k = i; k < end; k++)
        {
          const uint16_t h = get_le16 (blob + 2 * k);
          any |= (h > 0x3C00u) & (h != 0x8000u);
        }
      if (any)
        for (k = i; k < end; k++)
          {
            const uint16_t h = get_le16 (blob + 2 * k);
            if (h > 0x3C00u && h != 0x8000u)
              return k;
          }
    }
  return n;
}

bool
sc_store_blob_simd (void)
{
#ifdef SC_STORE_F16C
  return true;
#else
  return false;
#endif
}

void
sc_store_f16_encode (const float *src, size_t n, uint8_t *out)
{
  size_t j = 0;

#ifdef SC_STORE_F16C
  /* x86 is little-endian: the 8 halves store in file order. */
  for (; j + 8 <= n; j += 8)
    _mm_storeu_si128 ((__m128i *) (out + 2 * j),
                      _mm256_cvtps_ph (_mm256_loadu_ps (src + j),
                                       _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
  for (; j < n; j++)
    put_le16 (out + 2 * j, sc_fp32_to_fp16 (src[j]));
}

void
sc_store_f16_decode (const uint8_t *src, size_t n, float *out)
{
  size_t j = 0;

#ifdef SC_STORE_F16C
  for (; j + 8 <= n; j += 8)
    _mm256_storeu_ps (out + j, _mm256_cvtph_ps (_mm_loadu_si128 ((const __m128i *) (src + 2 * j))));
#endif
  for (; j < n; j++)
    out[j] = sc_fp16_to_fp32 (get_le16 (src + 2 * j));
}

void
sc_store_blob_pack (const float *probs, uint32_t n_query, uint32_t n_key, bool causal,
                    uint8_t *out)
{
  uint32_t i;

  for (i = 0; i < n_query; i++)
    {
      const uint32_t len = causal ? i + 1 : n_key;
      sc_store_f16_encode (probs + (size_t) i * n_key, len, out);
      out += 2 * (size_t) len;
    }
}

void
sc_store_blob_unpack (const uint8_t *blob, uint32_t n_query, uint32_t n_key, bool causal,
                      float *out)
{
  uint32_t i, j;

  for (i = 0; i < n_query; i++)
    {
      float *row = out + (size_t) i * n_key;
      const uint32_t len = causal ? i + 1 : n_key;
      sc_store_f16_decode (blob, len, row);
      blob += 2 * (size_t) len;
      for (j = len; j < n_key; j++)
        row[j] = 0.0f;
    }
}
