/* sc-store-blob.c — the attention BLOB layout: fp16, little-endian, row-major; a causal
 * head keeps only its lower triangle (row i holds keys 0..i), which halves it.
 *
 * The conversion is sc-math.h's sc_fp32_to_fp16 (round to nearest, ties to even), so a
 * stored value differs from the captured one by at most half an fp16 unit: a relative
 * error of 2^-11 for values >= 2^-14 (fp16's normal range) and an absolute error of 2^-25
 * below it; values under 2^-25 round to zero. Exact zeros stay exact (docs/store.md).
 * Reading converts back exactly (every fp16 is a float).
 */
#include "sc-store-private.h"

#include <string.h>

#include "sc-math.h"

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
      for (j = i + 1; j < n_key; j++)
        if (row[j] != 0.0f)
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

void
sc_store_blob_pack (const float *probs, uint32_t n_query, uint32_t n_key, bool causal,
                    uint8_t *out)
{
  uint32_t i, j;

  for (i = 0; i < n_query; i++)
    {
      const float *row = probs + (size_t) i * n_key;
      const uint32_t len = causal ? i + 1 : n_key;
      for (j = 0; j < len; j++, out += 2)
        put_le16 (out, sc_fp32_to_fp16 (row[j]));
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
      for (j = 0; j < len; j++, blob += 2)
        row[j] = sc_fp16_to_fp32 (get_le16 (blob));
      for (; j < n_key; j++)
        row[j] = 0.0f;
    }
}
