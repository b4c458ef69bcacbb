/* sc-quant.h — ggml tensor types: their ids, sizes, and dequantisation of a row to float.
 *
 * A GGUF tensor stores its data as a ggml type (an id from ggml's `enum ggml_type`) in
 * blocks: `block_size` elements packed into `type_size` bytes. This module knows every id
 * ggml currently defines (names, block sizes, byte sizes), validates element counts
 * against them, and decodes one row of the types Saccade supports (F32, F16, BF16, Q4_0,
 * Q4_1, Q5_0, Q5_1, Q8_0, Q2_K .. Q6_K) into floats. It is used at model load time, over
 * ~10^8 weights, so the row loop is plain and vectorisable; the caller splits a tensor
 * into rows and parallelises over them. It does not quantise, parse GGUF, or decode the
 * IQ*, TQ*, MXFP4 or other exotic types (those report SC_ERR_UNSUPPORTED by name).
 *
 * The per-block decoders live in sc-math.h (shared with CUDA); the block layouts in
 * sc-quant-blocks.h. Every function here is pure and thread-safe.
 *
 * Plain C17, no GLib.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ggml type ids, as stored in a GGUF tensor info (ggml include/ggml.h). Gaps are ids
 * ggml removed: 4, 5 (Q4_2, Q4_3), 31..33 (Q4_0_4_4 .. Q4_0_8_8) and 36..38
 * (IQ4_NL_4_4 .. IQ4_NL_8_8); they are unknown to sc_type_traits(). */
typedef enum {
  SC_TYPE_F32 = 0,
  SC_TYPE_F16 = 1,
  SC_TYPE_Q4_0 = 2,
  SC_TYPE_Q4_1 = 3,
  SC_TYPE_Q5_0 = 6,
  SC_TYPE_Q5_1 = 7,
  SC_TYPE_Q8_0 = 8,
  SC_TYPE_Q8_1 = 9,
  SC_TYPE_Q2_K = 10,
  SC_TYPE_Q3_K = 11,
  SC_TYPE_Q4_K = 12,
  SC_TYPE_Q5_K = 13,
  SC_TYPE_Q6_K = 14,
  SC_TYPE_Q8_K = 15,
  SC_TYPE_IQ2_XXS = 16,
  SC_TYPE_IQ2_XS = 17,
  SC_TYPE_IQ3_XXS = 18,
  SC_TYPE_IQ1_S = 19,
  SC_TYPE_IQ4_NL = 20,
  SC_TYPE_IQ3_S = 21,
  SC_TYPE_IQ2_S = 22,
  SC_TYPE_IQ4_XS = 23,
  SC_TYPE_I8 = 24,
  SC_TYPE_I16 = 25,
  SC_TYPE_I32 = 26,
  SC_TYPE_I64 = 27,
  SC_TYPE_F64 = 28,
  SC_TYPE_IQ1_M = 29,
  SC_TYPE_BF16 = 30,
  SC_TYPE_TQ1_0 = 34,
  SC_TYPE_TQ2_0 = 35,
  SC_TYPE_MXFP4 = 39,
  SC_TYPE_NVFP4 = 40,
  SC_TYPE_Q1_0 = 41,
  SC_TYPE_Q2_0 = 42,
  SC_TYPE_COUNT = 43,   /* one past the largest id; not a type */
} ScType;

/* What the engine knows about one type. Static data: never freed, never changes. */
typedef struct {
  const char *name;     /* as ggml prints it: "f32", "q4_1", "q6_K", "bf16", ... */
  uint32_t block_size;  /* elements per block (1 for the plain types) */
  uint32_t type_size;   /* bytes per block */
  bool can_dequant;     /* sc_dequant_row() decodes it */
} ScTypeTraits;

/* Returns the traits of ggml type @type (borrowed, static), or NULL when @type is not a
 * type id ggml defines: a removed id (4, 5, 31..33, 36..38) or one >= SC_TYPE_COUNT. */
const ScTypeTraits *sc_type_traits (uint32_t type);

/* Computes the bytes that @n_elements elements of @type occupy: n / block_size blocks of
 * type_size bytes each. Writes *@out_bytes (must be non-NULL) only on success.
 * Errors (each message names the type and the value):
 *   SC_ERR_UNSUPPORTED  @type is not a known id ("unknown tensor type id 4");
 *   SC_ERR_RANGE        @n_elements is negative, is not a multiple of the block size, or
 *                       the byte count does not fit in size_t;
 *   SC_ERR_INVALID_ARG  @out_bytes is NULL.
 * n_elements = 0 is valid (0 bytes). */
ScStatus sc_type_row_bytes (uint32_t type, int64_t n_elements, size_t *out_bytes, ScError *err);

/* Decodes @n elements of @type from @src into @dst (n floats, in file order).
 * @src must hold sc_type_row_bytes (type, n) bytes (any alignment; 2-byte aligned rows,
 * which every GGUF with the default alignment has, are read in place, others through a
 * per-block copy); @dst must not overlap @src. Decoding is exact for F32, F16 and BF16
 * and matches ggml's dequantize_row_* for the block types. Every bit pattern decodes
 * (NaN/inf scales give NaN/inf values): the block contents are never an error.
 * Errors:
 *   SC_ERR_UNSUPPORTED  @type is unknown ("unknown tensor type id 4"), or known but not
 *                       decodable here ("tensor type iq2_xxs (16) is not supported");
 *   SC_ERR_RANGE        @n is negative or not a multiple of the type's block size;
 *   SC_ERR_INVALID_ARG  @src or @dst is NULL while n > 0.
 * On error @dst is untouched. n = 0 succeeds without reading anything.
 * Thread-safe; the caller parallelises over rows. */
ScStatus sc_dequant_row (uint32_t type, const void *src, float *dst, int64_t n, ScError *err);

/* Whether every value sc_dequant_row() gives for these @n elements of @type is finite,
 * known without decoding them: F32, F16 and BF16 by their exponent bits; the block types
 * by their fp16 scales and mins alone, since with those finite every value is bounded
 * (the largest, q6_K's 65504 x 128 x 32, is about 2.7e8). false means "not known": a
 * non-finite scale (whose block's values are then NaN or infinite in practice), a type
 * without such a rule, or bad arguments; decode the row to find the value. @src as for
 * sc_dequant_row(), any alignment. Thread-safe. */
bool sc_quant_row_finite (uint32_t type, const void *src, int64_t n);

/* A weight matrix (rows, cols) as the file stores it: up to SC_WEIGHT_MAX_PARTS tensors'
 * rows stacked on top of each other (a fused projection W_qkv is wq, wk and wv, whose
 * types may differ: Q4_K_M files keep wv in q6_K). Part k holds the rows that follow the
 * previous parts', each row of its @type in sc_type_row_bytes (type, cols) bytes. The data
 * is borrowed (the GGUF's mapping). A matrix whose type is F32 is a matrix of floats. */
#define SC_WEIGHT_MAX_PARTS 3

typedef struct {
  uint32_t type;       /* a type sc_dequant_row() decodes */
  const void *data;    /* rows * row bytes, borrowed */
  int64_t rows;
} ScWeightPart;

typedef struct {
  int64_t cols;        /* a multiple of every part's block size */
  int n_parts;         /* 0 = no matrix (the architecture has no such tensor) */
  ScWeightPart parts[SC_WEIGHT_MAX_PARTS];
} ScWeightSrc;

/* The rows of all @w's parts together. */
int64_t sc_weight_src_rows (const ScWeightSrc *w);

/* Decodes rows [row0, row0 + n_rows) of @w into @dst (n_rows * cols floats), with
 * sc_dequant_row() (the same numbers as decoding the whole tensor). SC_ERR_RANGE when the
 * range is outside the matrix; sc_dequant_row()'s errors otherwise. Thread-safe. */
ScStatus sc_weight_src_dequant (const ScWeightSrc *w, int64_t row0, int64_t n_rows, float *dst,
                                ScError *err);

#ifdef __cplusplus
}
#endif
