/* sc-gguf.h — a bounds-checked reader for GGUF v2/v3 model files.
 *
 * A GGUF file is a header, a list of typed key/value metadata, a list of tensor
 * descriptors and an aligned data section (format notes: docs/architecture.md and
 * shared/notes/model-formats.md §1). This reader maps the file read-only and parses the
 * header, metadata and tensor descriptors once, distrusting every length and count in the
 * file: each one is checked against the bytes that remain and against integer overflow.
 * Malformed input yields SC_ERR_FORMAT / SC_ERR_RANGE / SC_ERR_UNSUPPORTED with a message
 * that names the section, key or tensor; it never aborts.
 *
 * What it is not: it does not interpret model semantics (that is sc-model) and it does not
 * dequantize (sc-quant). Tensor data pointers point into the mapping and stay valid until
 * sc_gguf_close().
 *
 * Thread safety: an ScGguf is immutable after open; concurrent readers are fine.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  SC_GGUF_TYPE_UINT8 = 0,
  SC_GGUF_TYPE_INT8 = 1,
  SC_GGUF_TYPE_UINT16 = 2,
  SC_GGUF_TYPE_INT16 = 3,
  SC_GGUF_TYPE_UINT32 = 4,
  SC_GGUF_TYPE_INT32 = 5,
  SC_GGUF_TYPE_FLOAT32 = 6,
  SC_GGUF_TYPE_BOOL = 7,
  SC_GGUF_TYPE_STRING = 8,
  SC_GGUF_TYPE_ARRAY = 9,
  SC_GGUF_TYPE_UINT64 = 10,
  SC_GGUF_TYPE_INT64 = 11,
  SC_GGUF_TYPE_FLOAT64 = 12,
  SC_GGUF_TYPE_COUNT
} ScGgufType;

/* Limits that keep a hostile file from making us allocate or loop without bound.
 * They are far above anything a real model uses (SmolLM2: 272 tensors, 38 keys,
 * 49152-entry vocabulary) and are documented in docs/architecture.md. */
#define SC_GGUF_MAX_DIMS 4
#define SC_GGUF_MAX_TENSORS (1u << 20)
#define SC_GGUF_MAX_KV (1u << 20)
#define SC_GGUF_MAX_KEY_LEN 65535u
#define SC_GGUF_MAX_NAME_LEN 64u
#define SC_GGUF_MAX_ARRAY_NESTING 4

/* A string inside the mapped file: NOT NUL-terminated. */
typedef struct {
  const char *ptr;
  uint64_t len;
} ScGgufStr;

/* A metadata array. For fixed-size element types `data` points at `count` packed
 * little-endian elements in the mapping; for strings, `strs` holds `count` entries
 * (owned by the ScGguf). Nested arrays are validated but exposed only as their count. */
typedef struct {
  ScGgufType elem_type;
  uint64_t count;
  const void *data;      /* fixed-size element types; may be unaligned: use memcpy */
  const ScGgufStr *strs; /* SC_GGUF_TYPE_STRING */
} ScGgufArray;

typedef struct {
  ScGgufStr key;
  ScGgufType type;
  union {
    uint64_t u64; /* UINT8..UINT64, BOOL (0/1) */
    int64_t i64;  /* INT8..INT64 (sign-extended) */
    double f64;   /* FLOAT32, FLOAT64 */
    ScGgufStr str;
    ScGgufArray arr;
  } v;
} ScGgufKv;

typedef struct {
  ScGgufStr name;
  uint32_t n_dims;
  int64_t ne[SC_GGUF_MAX_DIMS]; /* ne[0] is the contiguous dimension; unused dims are 1 */
  uint32_t type;                /* ggml type id (ScType in sc-quant.h) */
  uint64_t offset;              /* relative to the data section */
  uint64_t n_elements;
  uint64_t n_bytes;
  const uint8_t *data;          /* into the mapping; n_bytes are readable */
} ScGgufTensor;

typedef struct ScGguf ScGguf;

/* Opens and parses @path. On success *out owns the mapping; free with sc_gguf_close().
 * Errors: SC_ERR_IO (cannot open/stat/map; errno text), SC_ERR_FORMAT (not GGUF,
 * truncated, bad value), SC_ERR_RANGE (count or dims overflow), SC_ERR_UNSUPPORTED
 * (version, big-endian file, unknown tensor type). The message names @path. */
ScStatus sc_gguf_open (const char *path, ScGguf **out, ScError *err);

/* Parses a copy of an in-memory image (@data may be freed once this returns: a model
 * keeps its matrices in the image as long as it lives). Used by tests and the fuzz
 * target. Same errors as sc_gguf_open() minus SC_ERR_IO, plus SC_ERR_NOMEM. */
ScStatus sc_gguf_open_memory (const void *data, size_t size, ScGguf **out, ScError *err);

/* NULL is a no-op. */
void sc_gguf_close (ScGguf *gguf);

uint32_t sc_gguf_version (const ScGguf *gguf);
uint32_t sc_gguf_alignment (const ScGguf *gguf);
size_t sc_gguf_file_size (const ScGguf *gguf);
const char *sc_gguf_path (const ScGguf *gguf); /* "" for memory images */

uint64_t sc_gguf_n_kv (const ScGguf *gguf);
const ScGgufKv *sc_gguf_kv (const ScGguf *gguf, uint64_t index);
/* Looks a key up by exact name; NULL when absent. */
const ScGgufKv *sc_gguf_find_kv (const ScGguf *gguf, const char *key);

uint64_t sc_gguf_n_tensors (const ScGguf *gguf);
const ScGgufTensor *sc_gguf_tensor (const ScGguf *gguf, uint64_t index);
const ScGgufTensor *sc_gguf_find_tensor (const ScGguf *gguf, const char *name);

/* Typed getters. Each returns SC_ERR_NOT_FOUND when the key is absent and SC_ERR_FORMAT
 * when it has an incompatible type or value (message names the key and both types).
 * Integer getters accept any integer type whose value fits. */
ScStatus sc_gguf_get_u32 (const ScGguf *gguf, const char *key, uint32_t *out, ScError *err);
ScStatus sc_gguf_get_i64 (const ScGguf *gguf, const char *key, int64_t *out, ScError *err);
ScStatus sc_gguf_get_f32 (const ScGguf *gguf, const char *key, float *out, ScError *err);
ScStatus sc_gguf_get_bool (const ScGguf *gguf, const char *key, bool *out, ScError *err);
ScStatus sc_gguf_get_str (const ScGguf *gguf, const char *key, ScGgufStr *out, ScError *err);
ScStatus sc_gguf_get_arr (const ScGguf *gguf, const char *key, ScGgufType elem_type,
                          const ScGgufArray **out, ScError *err);

/* Name of a metadata type ("uint32", "string", ...) for messages. */
const char *sc_gguf_type_name (ScGgufType type);

/* Copies a string into a NUL-terminated buffer, truncating; an embedded NUL byte is written
 * as the two characters \0 (so "llama\0x" never reads as "llama"). Returns @buf. */
char *sc_gguf_str_copy (ScGgufStr s, char *buf, size_t size);
bool sc_gguf_str_eq (ScGgufStr s, const char *cstr);

#ifdef __cplusplus
}
#endif
