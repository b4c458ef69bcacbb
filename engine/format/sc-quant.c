/* sc-quant.c — ggml type traits, row sizes and row dequantisation (see sc-quant.h).
 *
 * The traits table is the engine's one list of ggml type sizes; the block sizes of the
 * types we decode come from the structs in sc-quant-blocks.h, the others from ggml's
 * src/ggml-common.h written out as the same formulas. sc_dequant_row() validates its
 * arguments once and then walks the row block by block through the sc-math.h decoders.
 * Nothing here allocates or keeps state.
 */
#include "format/sc-quant.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/sc-math.h"

/* Elements per block of the non-K types we only size, not decode (ggml-common.h). */
#define SC_QK8_1 32
#define SC_QK4_NL 32
#define SC_QK_MXFP4 32
#define SC_QK_NVFP4 64
#define SC_QK1_0 128
#define SC_QK2_0 64

#define SC_HALF 2   /* bytes of an fp16 scale */

/* Indexed by type id; removed ids are left zeroed (name == NULL). */
static const ScTypeTraits type_traits[SC_TYPE_COUNT] = {
  [SC_TYPE_F32] = { "f32", 1, sizeof (float), true },
  [SC_TYPE_F16] = { "f16", 1, sizeof (uint16_t), true },
  [SC_TYPE_Q4_0] = { "q4_0", SC_QK4_0, sizeof (ScBlockQ4_0), true },
  [SC_TYPE_Q4_1] = { "q4_1", SC_QK4_1, sizeof (ScBlockQ4_1), true },
  [SC_TYPE_Q5_0] = { "q5_0", SC_QK5_0, sizeof (ScBlockQ5_0), true },
  [SC_TYPE_Q5_1] = { "q5_1", SC_QK5_1, sizeof (ScBlockQ5_1), true },
  [SC_TYPE_Q8_0] = { "q8_0", SC_QK8_0, sizeof (ScBlockQ8_0), true },
  /* fp16 d, fp16 s = d * sum(q), 32 int8 */
  [SC_TYPE_Q8_1] = { "q8_1", SC_QK8_1, 2 * SC_HALF + SC_QK8_1, false },
  [SC_TYPE_Q2_K] = { "q2_K", SC_QK_K, sizeof (ScBlockQ2_K), true },
  [SC_TYPE_Q3_K] = { "q3_K", SC_QK_K, sizeof (ScBlockQ3_K), true },
  [SC_TYPE_Q4_K] = { "q4_K", SC_QK_K, sizeof (ScBlockQ4_K), true },
  [SC_TYPE_Q5_K] = { "q5_K", SC_QK_K, sizeof (ScBlockQ5_K), true },
  [SC_TYPE_Q6_K] = { "q6_K", SC_QK_K, sizeof (ScBlockQ6_K), true },
  /* f32 d, 256 int8, 16 int16 group sums */
  [SC_TYPE_Q8_K] = { "q8_K", SC_QK_K,
                     sizeof (float) + SC_QK_K + SC_QK_K / 16 * sizeof (int16_t), false },
  [SC_TYPE_IQ2_XXS] = { "iq2_xxs", SC_QK_K, SC_HALF + SC_QK_K / 8 * sizeof (uint16_t), false },
  [SC_TYPE_IQ2_XS] = { "iq2_xs", SC_QK_K,
                       SC_HALF + SC_QK_K / 8 * sizeof (uint16_t) + SC_QK_K / 32, false },
  [SC_TYPE_IQ3_XXS] = { "iq3_xxs", SC_QK_K, SC_HALF + 3 * (SC_QK_K / 8), false },
  [SC_TYPE_IQ1_S] = { "iq1_s", SC_QK_K, SC_HALF + SC_QK_K / 8 + SC_QK_K / 16, false },
  [SC_TYPE_IQ4_NL] = { "iq4_nl", SC_QK4_NL, SC_HALF + SC_QK4_NL / 2, false },
  /* fp16 d, qs[64], qh[8], signs[32], scales[4] */
  [SC_TYPE_IQ3_S] = { "iq3_s", SC_QK_K, SC_HALF + 13 * (SC_QK_K / 32) + SC_QK_K / 64, false },
  [SC_TYPE_IQ2_S] = { "iq2_s", SC_QK_K, SC_HALF + SC_QK_K / 4 + SC_QK_K / 16, false },
  /* fp16 d, uint16 scales_h, scales_l[4], qs[128] */
  [SC_TYPE_IQ4_XS] = { "iq4_xs", SC_QK_K,
                       SC_HALF + sizeof (uint16_t) + SC_QK_K / 64 + SC_QK_K / 2, false },
  [SC_TYPE_I8] = { "i8", 1, sizeof (int8_t), false },
  [SC_TYPE_I16] = { "i16", 1, sizeof (int16_t), false },
  [SC_TYPE_I32] = { "i32", 1, sizeof (int32_t), false },
  [SC_TYPE_I64] = { "i64", 1, sizeof (int64_t), false },
  [SC_TYPE_F64] = { "f64", 1, sizeof (double), false },
  [SC_TYPE_IQ1_M] = { "iq1_m", SC_QK_K, SC_QK_K / 8 + SC_QK_K / 16 + SC_QK_K / 32, false },
  [SC_TYPE_BF16] = { "bf16", 1, sizeof (uint16_t), true },
  /* 240 ternary digits five to a byte, 16 four to a byte, fp16 d */
  [SC_TYPE_TQ1_0] = { "tq1_0", SC_QK_K,
                      (SC_QK_K - 4 * SC_QK_K / 64) / 5 + SC_QK_K / 64 + SC_HALF, false },
  [SC_TYPE_TQ2_0] = { "tq2_0", SC_QK_K, SC_QK_K / 4 + SC_HALF, false },
  /* E8M0 shared exponent + 32 4-bit E2M1 values */
  [SC_TYPE_MXFP4] = { "mxfp4", SC_QK_MXFP4, 1 + SC_QK_MXFP4 / 2, false },
  /* four UE4M3 sub-block scales + 64 4-bit E2M1 values */
  [SC_TYPE_NVFP4] = { "nvfp4", SC_QK_NVFP4, SC_QK_NVFP4 / 16 + SC_QK_NVFP4 / 2, false },
  [SC_TYPE_Q1_0] = { "q1_0", SC_QK1_0, SC_HALF + SC_QK1_0 / 8, false },
  [SC_TYPE_Q2_0] = { "q2_0", SC_QK2_0, SC_HALF + SC_QK2_0 / 4, false },
};

const ScTypeTraits *
sc_type_traits (uint32_t type)
{
  if (type >= SC_TYPE_COUNT || type_traits[type].name == NULL)
    return NULL;
  return &type_traits[type];
}

/* Looks up @type and checks @n against it: the shared front half of both entry points.
 * Returns the traits through @out_traits and the block count through @out_blocks. */
static ScStatus
check_count (uint32_t type, int64_t n, const ScTypeTraits **out_traits, int64_t *out_blocks,
             ScError *err)
{
  const ScTypeTraits *traits = sc_type_traits (type);

  if (traits == NULL)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "unknown tensor type id %u", type);
  if (n < 0)
    return sc_error_set (err, SC_ERR_RANGE, "negative element count %lld for tensor type %s",
                         (long long) n, traits->name);
  if (n % traits->block_size != 0)
    return sc_error_set (err, SC_ERR_RANGE,
                         "element count %lld is not a multiple of the %s block size %u",
                         (long long) n, traits->name, traits->block_size);
  *out_traits = traits;
  *out_blocks = n / traits->block_size;
  return SC_OK;
}

ScStatus
sc_type_row_bytes (uint32_t type, int64_t n_elements, size_t *out_bytes, ScError *err)
{
  const ScTypeTraits *traits = NULL;
  int64_t n_blocks = 0;
  ScStatus status;

  if (out_bytes == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "sc_type_row_bytes: out_bytes is NULL");
  status = check_count (type, n_elements, &traits, &n_blocks, err);
  if (status != SC_OK)
    return status;
  if ((uint64_t) n_blocks > SIZE_MAX / traits->type_size)
    return sc_error_set (err, SC_ERR_RANGE,
                         "%lld elements of tensor type %s overflow the addressable size",
                         (long long) n_elements, traits->name);
  *out_bytes = (size_t) n_blocks * traits->type_size;
  return SC_OK;
}

/* The row loop for one block type: block i decodes into dst[i * qk ..]. GGUF rows are
 * aligned in practice, and then the blocks are read in place; a misaligned @src (legal in
 * a file whose general.alignment is 1) is decoded from an aligned copy of each block. */
#define SC_DEQUANT_BLOCKS(Block, qk, decode)                                \
  do                                                                        \
    {                                                                       \
      if (aligned)                                                          \
        {                                                                   \
          const Block *blocks = (const Block *) src;                        \
          for (int64_t i = 0; i < n_blocks; i++)                            \
            decode (&blocks[i], dst + i * (qk));                            \
        }                                                                   \
      else                                                                  \
        {                                                                   \
          const unsigned char *bytes = (const unsigned char *) src;         \
          for (int64_t i = 0; i < n_blocks; i++)                            \
            {                                                               \
              Block copy;                                                   \
              memcpy (&copy, bytes + (size_t) i * sizeof (Block), sizeof copy); \
              decode (&copy, dst + i * (qk));                               \
            }                                                               \
        }                                                                   \
    }                                                                       \
  while (0)

/* Reads the 16-bit value @i of @src, which may be misaligned. */
static inline uint16_t
load_u16 (const void *src, int64_t i)
{
  uint16_t v;

  memcpy (&v, (const unsigned char *) src + (size_t) i * sizeof v, sizeof v);
  return v;
}

/* Elements converted per inner loop in convert_bf16(): a fixed trip count lets the
 * compiler vectorise without a runtime overlap check (restrict) or a cost model that
 * allows remainder loops (-O2's does not). */
#define BF16_CHUNK 64

static void
convert_bf16 (const uint16_t *restrict src, float *restrict dst, int64_t n)
{
  int64_t i = 0;

  for (; i + BF16_CHUNK <= n; i += BF16_CHUNK)
    for (int k = 0; k < BF16_CHUNK; k++)
      dst[i + k] = sc_bf16_to_fp32 (src[i + k]);
  for (; i < n; i++)
    dst[i] = sc_bf16_to_fp32 (src[i]);
}

ScStatus
sc_dequant_row (uint32_t type, const void *src, float *dst, int64_t n, ScError *err)
{
  const ScTypeTraits *traits = NULL;
  int64_t n_blocks = 0;
  ScStatus status;
  bool aligned;

  status = check_count (type, n, &traits, &n_blocks, err);
  if (status != SC_OK)
    return status;
  if (!traits->can_dequant)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "tensor type %s (%u) is not supported",
                         traits->name, type);
  if (n == 0)
    return SC_OK;
  if (src == NULL || dst == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "sc_dequant_row: %s is NULL",
                         src == NULL ? "src" : "dst");
  /* Every decodable layout is made of bytes and uint16_t halves (F32 is copied bytewise),
   * so 2-byte alignment is all the block structs need to be read in place. */
  aligned = (uintptr_t) src % _Alignof (uint16_t) == 0;

  switch ((ScType) type)
    {
    case SC_TYPE_F32:
      memcpy (dst, src, (size_t) n * sizeof (float));
      break;

    case SC_TYPE_F16:
      {
        const uint16_t *h = (const uint16_t *) src;
        /* Not vectorisable (the subnormal path loops); F16 weights are rare and the
         * common, normal case is a well-predicted branch. */
        if (aligned)
          for (int64_t i = 0; i < n; i++)
            dst[i] = sc_fp16_to_fp32 (h[i]);
        else
          for (int64_t i = 0; i < n; i++)
            dst[i] = sc_fp16_to_fp32 (load_u16 (src, i));
      }
      break;

    case SC_TYPE_BF16:
      {
        if (aligned)
          convert_bf16 ((const uint16_t *) src, dst, n);
        else
          for (int64_t i = 0; i < n; i++)
            dst[i] = sc_bf16_to_fp32 (load_u16 (src, i));
      }
      break;

    case SC_TYPE_Q4_0:
      SC_DEQUANT_BLOCKS (ScBlockQ4_0, SC_QK4_0, sc_dequant_block_q4_0);
      break;
    case SC_TYPE_Q4_1:
      SC_DEQUANT_BLOCKS (ScBlockQ4_1, SC_QK4_1, sc_dequant_block_q4_1);
      break;
    case SC_TYPE_Q5_0:
      SC_DEQUANT_BLOCKS (ScBlockQ5_0, SC_QK5_0, sc_dequant_block_q5_0);
      break;
    case SC_TYPE_Q5_1:
      SC_DEQUANT_BLOCKS (ScBlockQ5_1, SC_QK5_1, sc_dequant_block_q5_1);
      break;
    case SC_TYPE_Q8_0:
      SC_DEQUANT_BLOCKS (ScBlockQ8_0, SC_QK8_0, sc_dequant_block_q8_0);
      break;
    case SC_TYPE_Q2_K:
      SC_DEQUANT_BLOCKS (ScBlockQ2_K, SC_QK_K, sc_dequant_block_q2_k);
      break;
    case SC_TYPE_Q3_K:
      SC_DEQUANT_BLOCKS (ScBlockQ3_K, SC_QK_K, sc_dequant_block_q3_k);
      break;
    case SC_TYPE_Q4_K:
      SC_DEQUANT_BLOCKS (ScBlockQ4_K, SC_QK_K, sc_dequant_block_q4_k);
      break;
    case SC_TYPE_Q5_K:
      SC_DEQUANT_BLOCKS (ScBlockQ5_K, SC_QK_K, sc_dequant_block_q5_k);
      break;
    case SC_TYPE_Q6_K:
      SC_DEQUANT_BLOCKS (ScBlockQ6_K, SC_QK_K, sc_dequant_block_q6_k);
      break;

    default:
      /* can_dequant is true exactly for the cases above; reaching here means the table
       * and this switch disagree, which is a bug in this file, not bad input. */
      return sc_error_set (err, SC_ERR_UNSUPPORTED, "tensor type %s (%u) is not supported",
                           traits->name, type);
    }
  return SC_OK;
}

int64_t
sc_weight_src_rows (const ScWeightSrc *w)
{
  int64_t rows = 0;

  for (int k = 0; k < w->n_parts; k++)
    rows += w->parts[k].rows;
  return rows;
}

ScStatus
sc_weight_src_dequant (const ScWeightSrc *w, int64_t row0, int64_t n_rows, float *dst,
                       ScError *err)
{
  int64_t first = 0; /* the first row of part k */

  if (row0 < 0 || n_rows < 0 || row0 + n_rows > sc_weight_src_rows (w))
    return sc_error_set (err, SC_ERR_RANGE, "rows %lld .. %lld are outside a matrix of %lld rows",
                         (long long) row0, (long long) (row0 + n_rows),
                         (long long) sc_weight_src_rows (w));
  for (int k = 0; k < w->n_parts && n_rows > 0; k++)
    {
      const ScWeightPart *p = &w->parts[k];
      size_t row_bytes;
      ScStatus st;

      if (row0 >= first + p->rows)
        {
          first += p->rows;
          continue;
        }
      if ((st = sc_type_row_bytes (p->type, w->cols, &row_bytes, err)) != SC_OK)
        return st;
      for (; n_rows > 0 && row0 < first + p->rows; row0++, n_rows--, dst += w->cols)
        if ((st = sc_dequant_row (p->type, (const unsigned char *) p->data
                                             + (size_t) (row0 - first) * row_bytes,
                                  dst, w->cols, err)) != SC_OK)
          return st;
      first += p->rows;
    }
  return SC_OK;
}

/* The fp16 fields of one block that bound its values: its scale and, where it has one, its
 * min (offsets into the block; -1: none). */
typedef struct {
  int d, dmin;
} ScScaleFields;

#define SCALES(Block, min) ((ScScaleFields) { offsetof (Block, d), (min) })

static bool
scale_fields (uint32_t type, ScScaleFields *f)
{
  switch ((ScType) type)
    {
    case SC_TYPE_Q4_0: *f = SCALES (ScBlockQ4_0, -1); return true;
    case SC_TYPE_Q4_1: *f = SCALES (ScBlockQ4_1, offsetof (ScBlockQ4_1, m)); return true;
    case SC_TYPE_Q5_0: *f = SCALES (ScBlockQ5_0, -1); return true;
    case SC_TYPE_Q5_1: *f = SCALES (ScBlockQ5_1, offsetof (ScBlockQ5_1, m)); return true;
    case SC_TYPE_Q8_0: *f = SCALES (ScBlockQ8_0, -1); return true;
    case SC_TYPE_Q2_K: *f = SCALES (ScBlockQ2_K, offsetof (ScBlockQ2_K, dmin)); return true;
    case SC_TYPE_Q3_K: *f = SCALES (ScBlockQ3_K, -1); return true;
    case SC_TYPE_Q4_K: *f = SCALES (ScBlockQ4_K, offsetof (ScBlockQ4_K, dmin)); return true;
    case SC_TYPE_Q5_K: *f = SCALES (ScBlockQ5_K, offsetof (ScBlockQ5_K, dmin)); return true;
    case SC_TYPE_Q6_K: *f = SCALES (ScBlockQ6_K, -1); return true;
    default: return false;
    }
}

#undef SCALES

/* Whether the half at @src + @offset bytes is finite (its exponent not all ones). */
static bool
half_finite_at (const unsigned char *src, size_t offset)
{
  uint16_t h;

  memcpy (&h, src + offset, sizeof h);
  return (h & SC_FP16_EXP_MASK) != SC_FP16_EXP_MASK;
}

bool
sc_quant_row_finite (uint32_t type, const void *src, int64_t n)
{
  const ScTypeTraits *tr = sc_type_traits (type);
  const unsigned char *bytes = src;
  ScScaleFields f;

  if (tr == NULL || !tr->can_dequant || src == NULL || n < 0 || n % tr->block_size != 0)
    return false;
  switch ((ScType) type)
    {
    case SC_TYPE_F32:
      for (int64_t i = 0; i < n; i++)
        {
          uint32_t bits;
          memcpy (&bits, bytes + (size_t) i * sizeof bits, sizeof bits);
          if ((bits & SC_FP32_EXP_MASK) == SC_FP32_EXP_MASK)
            return false;
        }
      return true;
    case SC_TYPE_F16:
      for (int64_t i = 0; i < n; i++)
        if (!half_finite_at (bytes, (size_t) i * 2))
          return false;
      return true;
    case SC_TYPE_BF16: /* the top half of a float32 */
      for (int64_t i = 0; i < n; i++)
        if ((load_u16 (src, i) & (SC_FP32_EXP_MASK >> 16)) == (SC_FP32_EXP_MASK >> 16))
          return false;
      return true;
    default:
      break;
    }
  if (!scale_fields (type, &f))
    return false;
  for (int64_t b = 0; b < n / tr->block_size; b++)
    {
      const unsigned char *block = bytes + (size_t) b * tr->type_size;
      if (!half_finite_at (block, (size_t) f.d)
          || (f.dmin >= 0 && !half_finite_at (block, (size_t) f.dmin)))
        return false;
    }
  return true;
}
