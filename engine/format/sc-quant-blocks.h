/* sc-quant-blocks.h — the byte layout of the ggml quantisation blocks we decode.
 *
 * This is the single definition of each block the engine can dequantise (Q4_0, Q4_1,
 * Q5_0, Q5_1, Q8_0 and the K-quants Q2_K .. Q6_K), laid out byte for byte as ggml's
 * src/ggml-common.h lays them out in a GGUF file, with a size (and key offset) assert on
 * each so a wrong field can never go unnoticed. It is included by sc-math.h, so the CPU
 * and the CUDA backend read blocks through the same structs. It holds layouts only: the
 * decoding is in sc-math.h, the type ids and sizes of every ggml type in sc-quant.h.
 *
 * Halves are stored as uint16_t holding IEEE binary16 bits; GGUF data is little-endian and
 * so is every host we build for (checked below). Every block is a whole number of bytes
 * with 2-byte alignment at most, so a row of blocks has no padding between blocks.
 *
 * Plain C17, also valid C++ for nvcc. No GLib.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "sc-quant-blocks.h reads little-endian GGUF blocks in place: big-endian hosts unsupported"
#endif

#ifdef __cplusplus
#define SC_STATIC_ASSERT(cond, msg) static_assert (cond, msg)
#else
#define SC_STATIC_ASSERT(cond, msg) _Static_assert (cond, msg)
#endif

/* Elements per block. The "legacy" quants group 32 weights per scale; the K-quants group
 * 256 weights in a super-block with 8 or 16 sub-block scales (ggml's QK4_0 ... QK_K). */
#define SC_QK4_0 32
#define SC_QK4_1 32
#define SC_QK5_0 32
#define SC_QK5_1 32
#define SC_QK8_0 32
#define SC_QK_K 256

/* Bytes of packed 6-bit (scale, min) pairs in Q4_K/Q5_K and of 6-bit scales in Q3_K:
 * 8 scales + 8 mins (or 16 scales) x 6 bits = 96 bits = 12 bytes. */
#define SC_K_SCALE_SIZE 12

/* Q4_0: y = (q - 8) * d, q a 4-bit code. */
typedef struct {
  uint16_t d;                     /* fp16 scale */
  uint8_t qs[SC_QK4_0 / 2];       /* element j in the low nibble of qs[j], j+16 in the high */
} ScBlockQ4_0;
SC_STATIC_ASSERT (sizeof (ScBlockQ4_0) == 2 + SC_QK4_0 / 2, "wrong q4_0 block size");

/* Q4_1: y = q * d + m. */
typedef struct {
  uint16_t d;                     /* fp16 scale */
  uint16_t m;                     /* fp16 minimum (offset) */
  uint8_t qs[SC_QK4_1 / 2];       /* nibbles, as in Q4_0 */
} ScBlockQ4_1;
SC_STATIC_ASSERT (sizeof (ScBlockQ4_1) == 2 * 2 + SC_QK4_1 / 2, "wrong q4_1 block size");

/* Q5_0: y = (q - 16) * d, q a 5-bit code: 4 low bits in qs, the 5th in qh. */
typedef struct {
  uint16_t d;                     /* fp16 scale */
  uint8_t qh[4];                  /* little-endian uint32: bit j = 5th bit of element j */
  uint8_t qs[SC_QK5_0 / 2];       /* low nibbles, as in Q4_0 */
} ScBlockQ5_0;
SC_STATIC_ASSERT (sizeof (ScBlockQ5_0) == 2 + 4 + SC_QK5_0 / 2, "wrong q5_0 block size");

/* Q5_1: y = q * d + m, q as in Q5_0. */
typedef struct {
  uint16_t d;                     /* fp16 scale */
  uint16_t m;                     /* fp16 minimum */
  uint8_t qh[4];
  uint8_t qs[SC_QK5_1 / 2];
} ScBlockQ5_1;
SC_STATIC_ASSERT (sizeof (ScBlockQ5_1) == 2 * 2 + 4 + SC_QK5_1 / 2, "wrong q5_1 block size");

/* Q8_0: y = q * d, q a signed byte. */
typedef struct {
  uint16_t d;                     /* fp16 scale */
  int8_t qs[SC_QK8_0];
} ScBlockQ8_0;
SC_STATIC_ASSERT (sizeof (ScBlockQ8_0) == 2 + SC_QK8_0, "wrong q8_0 block size");

/* Q2_K: 16 sub-blocks of 16; y = d * (sc & 15) * q - dmin * (sc >> 4), q a 2-bit code. */
typedef struct {
  uint8_t scales[SC_QK_K / 16];   /* per sub-block: low nibble scale, high nibble min */
  uint8_t qs[SC_QK_K / 4];        /* 2-bit codes, four per byte */
  uint16_t d;                     /* fp16 super-block scale of the scales */
  uint16_t dmin;                  /* fp16 super-block scale of the mins */
} ScBlockQ2_K;
SC_STATIC_ASSERT (sizeof (ScBlockQ2_K) == 2 * 2 + SC_QK_K / 16 + SC_QK_K / 4,
                  "wrong q2_K block size");
SC_STATIC_ASSERT (offsetof (ScBlockQ2_K, d) == 80, "wrong q2_K d offset");

/* Q3_K: 16 sub-blocks of 16; y = d * (sc - 32) * (q - 4 * !hbit), q a 2-bit code. */
typedef struct {
  uint8_t hmask[SC_QK_K / 8];     /* the high bit of each code, stored inverted (1 = no -4) */
  uint8_t qs[SC_QK_K / 4];        /* low 2 bits of each code, four per byte */
  uint8_t scales[SC_K_SCALE_SIZE];/* 16 6-bit scales, biased by 32 */
  uint16_t d;                     /* fp16 super-block scale */
} ScBlockQ3_K;
SC_STATIC_ASSERT (sizeof (ScBlockQ3_K) == 2 + SC_QK_K / 4 + SC_QK_K / 8 + SC_K_SCALE_SIZE,
                  "wrong q3_K block size");
SC_STATIC_ASSERT (offsetof (ScBlockQ3_K, d) == 108, "wrong q3_K d offset");

/* Q4_K: 8 sub-blocks of 32; y = d * sc * q - dmin * m, q a 4-bit code. */
typedef struct {
  uint16_t d;                     /* fp16 super-block scale of the scales */
  uint16_t dmin;                  /* fp16 super-block scale of the mins */
  uint8_t scales[SC_K_SCALE_SIZE];/* 8 (scale, min) pairs of 6 bits each */
  uint8_t qs[SC_QK_K / 2];        /* 4-bit codes */
} ScBlockQ4_K;
SC_STATIC_ASSERT (sizeof (ScBlockQ4_K) == 2 * 2 + SC_K_SCALE_SIZE + SC_QK_K / 2,
                  "wrong q4_K block size");

/* Q5_K: as Q4_K with a 5th bit per code in qh. */
typedef struct {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[SC_K_SCALE_SIZE];
  uint8_t qh[SC_QK_K / 8];        /* 5th bits: bit c of qh[l] belongs to element 32c + l */
  uint8_t qs[SC_QK_K / 2];        /* low 4 bits */
} ScBlockQ5_K;
SC_STATIC_ASSERT (sizeof (ScBlockQ5_K) == 2 * 2 + SC_K_SCALE_SIZE + SC_QK_K / 8 + SC_QK_K / 2,
                  "wrong q5_K block size");

/* Q6_K: 16 sub-blocks of 16; y = d * sc * (q - 32), q a 6-bit code, sc a signed byte. */
typedef struct {
  uint8_t ql[SC_QK_K / 2];        /* low 4 bits of each code */
  uint8_t qh[SC_QK_K / 4];        /* high 2 bits of each code */
  int8_t scales[SC_QK_K / 16];    /* signed 8-bit sub-block scales */
  uint16_t d;                     /* fp16 super-block scale */
} ScBlockQ6_K;
SC_STATIC_ASSERT (sizeof (ScBlockQ6_K) == 2 + SC_QK_K / 16 + 3 * SC_QK_K / 4,
                  "wrong q6_K block size");
SC_STATIC_ASSERT (offsetof (ScBlockQ6_K, d) == 208, "wrong q6_K d offset");
