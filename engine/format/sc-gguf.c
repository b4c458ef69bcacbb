/* sc-gguf.c — bounds-checked GGUF v2/v3 parser (see sc-gguf.h for the contract).
 *
 * The parse is one forward pass over a cursor that knows how many bytes remain. Every
 * read goes through cursor_take(), which fails instead of reading past the end, and every
 * count read from the file is checked against what the remaining bytes could possibly
 * hold before anything is allocated for it. The workload is a single parse at model load
 * (a few hundred tensors, ~100k metadata strings for a vocabulary); simplicity beats speed.
 *
 * Passes:
 *   1. header: magic, version, tensor and kv counts;
 *   2. metadata: kv pairs, arrays validated element by element (strings indexed);
 *   3. tensor infos: name, dims (overflow-checked), type (must be a known ggml type),
 *      offset (must be aligned);
 *   4. data section: aligned start; every tensor's byte range must lie inside the file.
 */
#include "format/sc-gguf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/sc-quant.h"

#define GGUF_MAGIC "GGUF"
#define GGUF_DEFAULT_ALIGNMENT 32u /* include/gguf.h: GGUF_DEFAULT_ALIGNMENT */

struct ScGguf {
  char *path;
  const uint8_t *base;
  size_t size;
  bool mapped; /* base is our mmap */
  bool owned;  /* base is our copy (sc_gguf_open_memory) */

  uint32_t version;
  uint32_t alignment;
  uint64_t n_kv;
  ScGgufKv *kv;
  uint64_t n_tensors;
  ScGgufTensor *tensors;
  size_t data_offset;

  /* String tables of string arrays (one allocation each, pointed to by kv[i].v.arr.strs). */
  ScGgufStr **str_tables;
  size_t n_str_tables;
};

typedef struct {
  const uint8_t *p;
  size_t left;
  size_t size; /* of the whole image, for offsets in messages */
} Cursor;

static size_t
cursor_pos (const Cursor *c)
{
  return c->size - c->left;
}

static bool
cursor_take (Cursor *c, void *dst, size_t n)
{
  if (n > c->left)
    return false;
  if (dst != NULL)
    memcpy (dst, c->p, n);
  c->p += n;
  c->left -= n;
  return true;
}

static const char *const type_names[SC_GGUF_TYPE_COUNT] = {
  "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
  "bool", "string", "array", "uint64", "int64", "float64",
};

/* Size in bytes of one fixed-size element; 0 for string and array. */
static size_t
type_size (ScGgufType t)
{
  static const size_t sizes[SC_GGUF_TYPE_COUNT] = { 1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8 };
  return (unsigned) t < SC_GGUF_TYPE_COUNT ? sizes[t] : 0;
}

const char *
sc_gguf_type_name (ScGgufType type)
{
  return (unsigned) type < SC_GGUF_TYPE_COUNT ? type_names[type] : "invalid";
}

char *
sc_gguf_str_copy (ScGgufStr s, char *buf, size_t size)
{
  size_t n, i;

  if (size == 0)
    return buf;
  /* An embedded NUL would silently end the C string ("llama\0x" would read as "llama"):
   * it is written as the two characters \0 instead, so the copy says what the file holds. */
  for (n = 0, i = 0; i < s.len && n + 1 < size; i++)
    {
      if (s.ptr[i] != '\0')
        buf[n++] = s.ptr[i];
      else if (n + 2 < size)
        {
          buf[n++] = '\\';
          buf[n++] = '0';
        }
      else
        break;
    }
  buf[n] = '\0';
  return buf;
}

bool
sc_gguf_str_eq (ScGgufStr s, const char *cstr)
{
  size_t n = strlen (cstr);
  return s.len == n && memcmp (s.ptr, cstr, n) == 0;
}

/* A printable, truncated copy of a file string for error messages. Non-printable bytes
 * become '?', so a hostile name cannot inject terminal escapes into a message. */
static const char *
printable (ScGgufStr s, char *buf, size_t size)
{
  size_t i;

  sc_gguf_str_copy (s, buf, size);
  for (i = 0; buf[i] != '\0'; i++)
    if ((unsigned char) buf[i] < 0x20 || (unsigned char) buf[i] == 0x7f)
      buf[i] = '?';
  return buf;
}

static ScStatus
read_string (Cursor *c, ScGgufStr *out, uint64_t max_len, const char *what, ScError *err)
{
  uint64_t len;
  size_t at = cursor_pos (c);

  if (!cursor_take (c, &len, sizeof len))
    return sc_error_set (err, SC_ERR_FORMAT, "truncated %s length at byte %zu", what, at);
  if (len > max_len)
    return sc_error_set (err, SC_ERR_RANGE, "%s at byte %zu is %llu bytes long (limit %llu)",
                         what, at, (unsigned long long) len, (unsigned long long) max_len);
  if (len > c->left)
    return sc_error_set (err, SC_ERR_FORMAT,
                         "truncated %s at byte %zu: %llu bytes declared, %zu left", what, at,
                         (unsigned long long) len, c->left);
  out->ptr = (const char *) c->p;
  out->len = len;
  cursor_take (c, NULL, (size_t) len);
  return SC_OK;
}

static ScStatus
read_u32 (Cursor *c, uint32_t *out, const char *what, ScError *err)
{
  if (!cursor_take (c, out, sizeof *out))
    return sc_error_set (err, SC_ERR_FORMAT, "truncated %s at byte %zu", what, cursor_pos (c));
  return SC_OK;
}

static ScStatus
read_u64 (Cursor *c, uint64_t *out, const char *what, ScError *err)
{
  if (!cursor_take (c, out, sizeof *out))
    return sc_error_set (err, SC_ERR_FORMAT, "truncated %s at byte %zu", what, cursor_pos (c));
  return SC_OK;
}

/* Reads one scalar of fixed-size type @t into @kv's union. */
static void
decode_scalar (ScGgufType t, const uint8_t *p, ScGgufKv *kv)
{
  uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32; int32_t i32;
  float f32; uint64_t u64; int64_t i64; double f64;

  switch (t)
    {
    case SC_GGUF_TYPE_UINT8: memcpy (&u8, p, 1); kv->v.u64 = u8; break;
    case SC_GGUF_TYPE_BOOL: memcpy (&u8, p, 1); kv->v.u64 = u8; break;
    case SC_GGUF_TYPE_INT8: memcpy (&i8, p, 1); kv->v.i64 = i8; break;
    case SC_GGUF_TYPE_UINT16: memcpy (&u16, p, 2); kv->v.u64 = u16; break;
    case SC_GGUF_TYPE_INT16: memcpy (&i16, p, 2); kv->v.i64 = i16; break;
    case SC_GGUF_TYPE_UINT32: memcpy (&u32, p, 4); kv->v.u64 = u32; break;
    case SC_GGUF_TYPE_INT32: memcpy (&i32, p, 4); kv->v.i64 = i32; break;
    case SC_GGUF_TYPE_FLOAT32: memcpy (&f32, p, 4); kv->v.f64 = f32; break;
    case SC_GGUF_TYPE_UINT64: memcpy (&u64, p, 8); kv->v.u64 = u64; break;
    case SC_GGUF_TYPE_INT64: memcpy (&i64, p, 8); kv->v.i64 = i64; break;
    case SC_GGUF_TYPE_FLOAT64: memcpy (&f64, p, 8); kv->v.f64 = f64; break;
    default: break;
    }
}

/* Validates (and for strings indexes) an array value. @depth guards nesting. */
static ScStatus
read_array (ScGguf *g, Cursor *c, ScGgufArray *arr, const char *key, int depth, ScError *err)
{
  uint32_t et = 0;
  uint64_t count = 0, i;
  ScStatus st;

  if ((st = read_u32 (c, &et, "array element type", err)) != SC_OK)
    return (sc_error_prefix (err, "key '%s'", key), st);
  if (et >= SC_GGUF_TYPE_COUNT)
    return sc_error_set (err, SC_ERR_FORMAT, "key '%s': array element type %u is not a GGUF type",
                         key, et);
  if ((st = read_u64 (c, &count, "array length", err)) != SC_OK)
    return (sc_error_prefix (err, "key '%s'", key), st);
  arr->elem_type = (ScGgufType) et;
  arr->count = count;
  arr->data = NULL;
  arr->strs = NULL;

  if (et == SC_GGUF_TYPE_ARRAY)
    {
      if (depth >= SC_GGUF_MAX_ARRAY_NESTING)
        return sc_error_set (err, SC_ERR_RANGE, "key '%s': arrays nested deeper than %d", key,
                             SC_GGUF_MAX_ARRAY_NESTING);
      /* Each nested array needs at least 12 header bytes. */
      if (count > c->left / 12)
        return sc_error_set (err, SC_ERR_FORMAT,
                             "key '%s': %llu nested arrays cannot fit in the %zu bytes left", key,
                             (unsigned long long) count, c->left);
      for (i = 0; i < count; i++)
        {
          ScGgufArray inner;
          if ((st = read_array (g, c, &inner, key, depth + 1, err)) != SC_OK)
            return st;
          /* Nested string tables are not exposed; free them now. */
          if (inner.strs != NULL)
            {
              g->n_str_tables--;
              free ((void *) inner.strs);
            }
        }
      return SC_OK;
    }

  if (et == SC_GGUF_TYPE_STRING)
    {
      ScGgufStr *strs, **tables;

      /* Each string needs at least its 8-byte length. */
      if (count > c->left / 8)
        return sc_error_set (err, SC_ERR_FORMAT,
                             "key '%s': %llu strings cannot fit in the %zu bytes left", key,
                             (unsigned long long) count, c->left);
      tables = realloc (g->str_tables, (g->n_str_tables + 1) * sizeof *tables);
      if (tables == NULL)
        return sc_error_set (err, SC_ERR_NOMEM, "key '%s': out of memory", key);
      g->str_tables = tables;
      strs = calloc (count > 0 ? (size_t) count : 1, sizeof *strs);
      if (strs == NULL)
        return sc_error_set (err, SC_ERR_NOMEM, "key '%s': out of memory for %llu strings", key,
                             (unsigned long long) count);
      g->str_tables[g->n_str_tables++] = strs;
      for (i = 0; i < count; i++)
        if ((st = read_string (c, &strs[i], UINT64_MAX, "array string", err)) != SC_OK)
          return (sc_error_prefix (err, "key '%s' element %llu", key, (unsigned long long) i), st);
      arr->strs = strs;
      return SC_OK;
    }

  {
    size_t es = type_size ((ScGgufType) et);
    if (count > c->left / es)
      return sc_error_set (err, SC_ERR_FORMAT,
                           "key '%s': array of %llu %s needs more than the %zu bytes left", key,
                           (unsigned long long) count, type_names[et], c->left);
    arr->data = c->p;
    if (et == SC_GGUF_TYPE_BOOL)
      for (i = 0; i < count; i++)
        if (c->p[i] > 1)
          return sc_error_set (err, SC_ERR_FORMAT, "key '%s': bool element %llu has value %u",
                               key, (unsigned long long) i, c->p[i]);
    cursor_take (c, NULL, (size_t) (count * es));
  }
  return SC_OK;
}

static ScStatus
parse_kv (ScGguf *g, Cursor *c, ScError *err)
{
  char key[128];
  ScStatus st;
  uint64_t i;

  for (i = 0; i < g->n_kv; i++)
    {
      ScGgufKv *kv = &g->kv[i];
      uint32_t t = 0;

      if ((st = read_string (c, &kv->key, SC_GGUF_MAX_KEY_LEN, "metadata key", err)) != SC_OK)
        return (sc_error_prefix (err, "metadata entry %llu", (unsigned long long) i), st);
      printable (kv->key, key, sizeof key);
      /* Keys and tensor names are identifiers looked up as C strings: one with a NUL byte
       * inside could never be found by its full name, or would shadow a shorter one. */
      if (memchr (kv->key.ptr, '\0', (size_t) kv->key.len) != NULL)
        return sc_error_set (err, SC_ERR_FORMAT, "metadata key '%s' contains a NUL byte", key);
      if ((st = read_u32 (c, &t, "value type", err)) != SC_OK)
        return (sc_error_prefix (err, "key '%s'", key), st);
      if (t >= SC_GGUF_TYPE_COUNT)
        return sc_error_set (err, SC_ERR_FORMAT, "key '%s': value type %u is not a GGUF type", key,
                             t);
      kv->type = (ScGgufType) t;
      if (t == SC_GGUF_TYPE_STRING)
        {
          if ((st = read_string (c, &kv->v.str, UINT64_MAX, "string value", err)) != SC_OK)
            return (sc_error_prefix (err, "key '%s'", key), st);
        }
      else if (t == SC_GGUF_TYPE_ARRAY)
        {
          if ((st = read_array (g, c, &kv->v.arr, key, 0, err)) != SC_OK)
            return st;
        }
      else
        {
          uint8_t buf[8];
          size_t n = type_size (kv->type);
          if (!cursor_take (c, buf, n))
            return sc_error_set (err, SC_ERR_FORMAT, "key '%s': truncated %s value at byte %zu",
                                 key, type_names[t], cursor_pos (c));
          decode_scalar (kv->type, buf, kv);
          if (t == SC_GGUF_TYPE_BOOL && kv->v.u64 > 1)
            return sc_error_set (err, SC_ERR_FORMAT, "key '%s': bool has value %llu", key,
                                 (unsigned long long) kv->v.u64);
        }
      /* Duplicate keys make lookups ambiguous; gguf.cpp rejects them too. */
      {
        uint64_t j;
        for (j = 0; j < i; j++)
          if (g->kv[j].key.len == kv->key.len
              && memcmp (g->kv[j].key.ptr, kv->key.ptr, (size_t) kv->key.len) == 0)
            return sc_error_set (err, SC_ERR_FORMAT, "duplicate metadata key '%s'", key);
      }
    }
  return SC_OK;
}

/* a * b with overflow detection (both non-negative). */
static bool
mul_u64 (uint64_t a, uint64_t b, uint64_t *out)
{
  return !__builtin_mul_overflow (a, b, out);
}

static ScStatus
parse_tensors (ScGguf *g, Cursor *c, ScError *err)
{
  char name[80];
  ScStatus st;
  uint64_t i;

  for (i = 0; i < g->n_tensors; i++)
    {
      ScGgufTensor *t = &g->tensors[i];
      const ScTypeTraits *tr;
      uint64_t n = 1, nb, rows;
      uint32_t d;

      if ((st = read_string (c, &t->name, SC_GGUF_MAX_NAME_LEN, "tensor name", err)) != SC_OK)
        return (sc_error_prefix (err, "tensor %llu", (unsigned long long) i), st);
      printable (t->name, name, sizeof name);
      if (memchr (t->name.ptr, '\0', (size_t) t->name.len) != NULL)
        return sc_error_set (err, SC_ERR_FORMAT, "tensor name '%s' contains a NUL byte", name);
      if ((st = read_u32 (c, &t->n_dims, "n_dims", err)) != SC_OK)
        return (sc_error_prefix (err, "tensor '%s'", name), st);
      if (t->n_dims == 0 || t->n_dims > SC_GGUF_MAX_DIMS)
        return sc_error_set (err, SC_ERR_RANGE, "tensor '%s': %u dimensions (1 to %d allowed)",
                             name, t->n_dims, SC_GGUF_MAX_DIMS);
      for (d = 0; d < SC_GGUF_MAX_DIMS; d++)
        t->ne[d] = 1;
      for (d = 0; d < t->n_dims; d++)
        {
          uint64_t ne = 0;
          if ((st = read_u64 (c, &ne, "dimension", err)) != SC_OK)
            return (sc_error_prefix (err, "tensor '%s'", name), st);
          if (ne > (uint64_t) INT64_MAX)
            return sc_error_set (err, SC_ERR_RANGE, "tensor '%s': dimension %u is %llu (negative)",
                                 name, d, (unsigned long long) ne);
          if (!mul_u64 (n, ne, &n) || n > (uint64_t) INT64_MAX)
            return sc_error_set (err, SC_ERR_RANGE, "tensor '%s': dims overflow int64", name);
          t->ne[d] = (int64_t) ne;
        }
      t->n_elements = n;
      if ((st = read_u32 (c, &t->type, "tensor type", err)) != SC_OK)
        return (sc_error_prefix (err, "tensor '%s'", name), st);
      tr = sc_type_traits (t->type);
      if (tr == NULL)
        return sc_error_set (err, SC_ERR_UNSUPPORTED, "tensor '%s': unknown tensor type %u", name,
                             t->type);
      if (t->ne[0] % tr->block_size != 0)
        return sc_error_set (err, SC_ERR_FORMAT,
                             "tensor '%s': row length %lld is not a multiple of the %s block "
                             "size %u", name, (long long) t->ne[0], tr->name, tr->block_size);
      rows = n / (uint64_t) (t->ne[0] > 0 ? t->ne[0] : 1);
      if (!mul_u64 ((uint64_t) t->ne[0] / tr->block_size, tr->type_size, &nb)
          || !mul_u64 (nb, t->ne[0] > 0 ? rows : 0, &nb))
        return sc_error_set (err, SC_ERR_RANGE, "tensor '%s': byte size overflows", name);
      t->n_bytes = nb;
      if ((st = read_u64 (c, &t->offset, "tensor offset", err)) != SC_OK)
        return (sc_error_prefix (err, "tensor '%s'", name), st);
      if (t->offset % g->alignment != 0)
        return sc_error_set (err, SC_ERR_FORMAT, "tensor '%s': offset %llu is not a multiple of "
                             "the alignment %u", name, (unsigned long long) t->offset,
                             g->alignment);
      {
        uint64_t j;
        for (j = 0; j < i; j++)
          if (g->tensors[j].name.len == t->name.len
              && memcmp (g->tensors[j].name.ptr, t->name.ptr, (size_t) t->name.len) == 0)
            return sc_error_set (err, SC_ERR_FORMAT, "duplicate tensor name '%s'", name);
      }
    }
  return SC_OK;
}

static ScStatus
parse (ScGguf *g, ScError *err)
{
  Cursor c = { g->base, g->size, g->size };
  char magic[4];
  const ScGgufKv *align;
  ScStatus st;
  uint64_t i;
  size_t pos;

  /* 1. header */
  if (!cursor_take (&c, magic, 4))
    return sc_error_set (err, SC_ERR_FORMAT, "not a GGUF file: only %zu bytes", g->size);
  if (memcmp (magic, GGUF_MAGIC, 4) != 0)
    return sc_error_set (err, SC_ERR_FORMAT, "not a GGUF file: the first bytes are not \"GGUF\"");
  if ((st = read_u32 (&c, &g->version, "header version", err)) != SC_OK)
    return st;
  if ((g->version & 0xffffu) == 0 && g->version != 0)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "big-endian GGUF files are not supported");
  if (g->version != 2 && g->version != 3)
    return sc_error_set (err, SC_ERR_UNSUPPORTED,
                         "GGUF version %u is not supported (versions 2 and 3 are)", g->version);
  if ((st = read_u64 (&c, &g->n_tensors, "tensor count", err)) != SC_OK
      || (st = read_u64 (&c, &g->n_kv, "metadata count", err)) != SC_OK)
    return st;
  /* A tensor info is at least 8+4+8+4+8 bytes, a kv at least 8+4+1. */
  if (g->n_tensors > SC_GGUF_MAX_TENSORS)
    return sc_error_set (err, SC_ERR_RANGE, "header claims %llu tensors (limit %u)",
                         (unsigned long long) g->n_tensors, SC_GGUF_MAX_TENSORS);
  if (g->n_kv > SC_GGUF_MAX_KV)
    return sc_error_set (err, SC_ERR_RANGE, "header claims %llu metadata entries (limit %u)",
                         (unsigned long long) g->n_kv, SC_GGUF_MAX_KV);
  if (g->n_tensors > c.left / 32 || g->n_kv > c.left / 13 || g->n_tensors * 32 + g->n_kv * 13 > c.left)
    return sc_error_set (err, SC_ERR_FORMAT, "truncated file: the header claims %llu tensors and "
                         "%llu metadata entries but only %zu bytes follow",
                         (unsigned long long) g->n_tensors, (unsigned long long) g->n_kv, c.left);
  g->kv = calloc (g->n_kv > 0 ? (size_t) g->n_kv : 1, sizeof *g->kv);
  g->tensors = calloc (g->n_tensors > 0 ? (size_t) g->n_tensors : 1, sizeof *g->tensors);
  if (g->kv == NULL || g->tensors == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "out of memory for the GGUF index");

  /* 2. metadata */
  if ((st = parse_kv (g, &c, err)) != SC_OK)
    return st;
  g->alignment = GGUF_DEFAULT_ALIGNMENT;
  align = sc_gguf_find_kv (g, "general.alignment");
  if (align != NULL)
    {
      if (align->type != SC_GGUF_TYPE_UINT32)
        return sc_error_set (err, SC_ERR_FORMAT, "key 'general.alignment' has type %s, not uint32",
                             type_names[align->type]);
      if (align->v.u64 == 0 || (align->v.u64 & (align->v.u64 - 1)) != 0)
        return sc_error_set (err, SC_ERR_FORMAT,
                             "key 'general.alignment' is %llu, not a power of two",
                             (unsigned long long) align->v.u64);
      g->alignment = (uint32_t) align->v.u64;
    }

  /* 3. tensor infos */
  if ((st = parse_tensors (g, &c, err)) != SC_OK)
    return st;

  /* 4. data section: aligned start, every tensor inside the file. */
  pos = cursor_pos (&c);
  g->data_offset = pos + (g->alignment - pos % g->alignment) % g->alignment;
  if (g->n_tensors > 0 && g->data_offset > g->size)
    return sc_error_set (err, SC_ERR_FORMAT, "truncated before the tensor data section (%zu of %zu "
                         "bytes)", g->size, g->data_offset);
  for (i = 0; i < g->n_tensors; i++)
    {
      ScGgufTensor *t = &g->tensors[i];
      uint64_t avail = g->size - g->data_offset;
      char name[80];

      if (t->offset > avail || t->n_bytes > avail - t->offset)
        return sc_error_set (err, SC_ERR_FORMAT,
                             "truncated file: tensor '%s': data [%llu, +%llu) runs past the end "
                             "(%llu data bytes)", printable (t->name, name, sizeof name),
                             (unsigned long long) t->offset, (unsigned long long) t->n_bytes,
                             (unsigned long long) avail);
      t->data = g->base + g->data_offset + t->offset;
    }
  return SC_OK;
}

static ScStatus
open_image (ScGguf *g, ScGguf **out, ScError *err)
{
  ScStatus st = parse (g, err);
  if (st != SC_OK)
    {
      sc_gguf_close (g);
      return st;
    }
  *out = g;
  return SC_OK;
}

ScStatus
sc_gguf_open_memory (const void *data, size_t size, ScGguf **out, ScError *err)
{
  ScGguf *g;

  if (out == NULL || (data == NULL && size > 0))
    return sc_error_set (err, SC_ERR_INVALID_ARG, "sc_gguf_open_memory: NULL argument");
  *out = NULL;
  g = calloc (1, sizeof *g);
  if (g == NULL || (g->path = strdup ("")) == NULL)
    {
      free (g);
      return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
    }
  /* A copy: a model borrows its matrices from the image for as long as it lives, and
   * callers (tests) free their bytes once the model is open. */
  if (size > 0 && (g->base = malloc (size)) == NULL)
    {
      free (g->path);
      free (g);
      return sc_error_set (err, SC_ERR_NOMEM, "out of memory for a %zu-byte image", size);
    }
  if (size > 0)
    memcpy ((void *) g->base, data, size);
  g->owned = size > 0;
  g->size = size;
  return open_image (g, out, err);
}

ScStatus
sc_gguf_open (const char *path, ScGguf **out, ScError *err)
{
  struct stat sb;
  ScGguf *g;
  ScStatus st;
  void *map;
  int fd;

  if (path == NULL || out == NULL)
    return sc_error_set (err, SC_ERR_INVALID_ARG, "sc_gguf_open: NULL argument");
  *out = NULL;
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return sc_error_set (err, SC_ERR_IO, "%s: cannot open: %s", path, strerror (errno));
  if (fstat (fd, &sb) != 0)
    {
      int e = errno;
      close (fd);
      return sc_error_set (err, SC_ERR_IO, "%s: cannot stat: %s", path, strerror (e));
    }
  if (!S_ISREG (sb.st_mode))
    {
      close (fd);
      return sc_error_set (err, SC_ERR_IO, "%s: not a regular file", path);
    }
  if (sb.st_size == 0)
    {
      close (fd);
      return sc_error_set (err, SC_ERR_FORMAT, "%s: not a GGUF file: the file is empty", path);
    }
  map = mmap (NULL, (size_t) sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close (fd);
  if (map == MAP_FAILED)
    return sc_error_set (err, SC_ERR_IO, "%s: cannot map: %s", path, strerror (errno));

  g = calloc (1, sizeof *g);
  if (g == NULL || (g->path = strdup (path)) == NULL)
    {
      free (g);
      munmap (map, (size_t) sb.st_size);
      return sc_error_set (err, SC_ERR_NOMEM, "out of memory");
    }
  g->base = map;
  g->size = (size_t) sb.st_size;
  g->mapped = true;
  st = open_image (g, out, err);
  if (st != SC_OK)
    sc_error_prefix (err, "%s", path);
  return st;
}

void
sc_gguf_close (ScGguf *g)
{
  size_t i;

  if (g == NULL)
    return;
  for (i = 0; i < g->n_str_tables; i++)
    free (g->str_tables[i]);
  free (g->str_tables);
  free (g->kv);
  free (g->tensors);
  if (g->mapped)
    munmap ((void *) g->base, g->size);
  if (g->owned)
    free ((void *) g->base);
  free (g->path);
  free (g);
}

uint32_t sc_gguf_version (const ScGguf *g) { return g->version; }
uint32_t sc_gguf_alignment (const ScGguf *g) { return g->alignment; }
size_t sc_gguf_file_size (const ScGguf *g) { return g->size; }
const char *sc_gguf_path (const ScGguf *g) { return g->path; }
uint64_t sc_gguf_n_kv (const ScGguf *g) { return g->n_kv; }
uint64_t sc_gguf_n_tensors (const ScGguf *g) { return g->n_tensors; }

const ScGgufKv *
sc_gguf_kv (const ScGguf *g, uint64_t index)
{
  return index < g->n_kv ? &g->kv[index] : NULL;
}

const ScGgufTensor *
sc_gguf_tensor (const ScGguf *g, uint64_t index)
{
  return index < g->n_tensors ? &g->tensors[index] : NULL;
}

const ScGgufKv *
sc_gguf_find_kv (const ScGguf *g, const char *key)
{
  uint64_t i;

  for (i = 0; i < g->n_kv; i++)
    if (g->kv[i].key.ptr != NULL && sc_gguf_str_eq (g->kv[i].key, key))
      return &g->kv[i];
  return NULL;
}

const ScGgufTensor *
sc_gguf_find_tensor (const ScGguf *g, const char *name)
{
  uint64_t i;

  for (i = 0; i < g->n_tensors; i++)
    if (sc_gguf_str_eq (g->tensors[i].name, name))
      return &g->tensors[i];
  return NULL;
}

static ScStatus
find_typed (const ScGguf *g, const char *key, const ScGgufKv **out, ScError *err)
{
  *out = sc_gguf_find_kv (g, key);
  if (*out == NULL)
    return sc_error_set (err, SC_ERR_NOT_FOUND, "metadata key '%s' is missing", key);
  return SC_OK;
}

static bool
is_unsigned_int (ScGgufType t)
{
  return t == SC_GGUF_TYPE_UINT8 || t == SC_GGUF_TYPE_UINT16 || t == SC_GGUF_TYPE_UINT32
         || t == SC_GGUF_TYPE_UINT64;
}

static bool
is_signed_int (ScGgufType t)
{
  return t == SC_GGUF_TYPE_INT8 || t == SC_GGUF_TYPE_INT16 || t == SC_GGUF_TYPE_INT32
         || t == SC_GGUF_TYPE_INT64;
}

ScStatus
sc_gguf_get_i64 (const ScGguf *g, const char *key, int64_t *out, ScError *err)
{
  const ScGgufKv *kv;
  ScStatus st = find_typed (g, key, &kv, err);

  if (st != SC_OK)
    return st;
  if (is_unsigned_int (kv->type))
    {
      if (kv->v.u64 > (uint64_t) INT64_MAX)
        return sc_error_set (err, SC_ERR_RANGE, "key '%s': value %llu is too large", key,
                             (unsigned long long) kv->v.u64);
      *out = (int64_t) kv->v.u64;
      return SC_OK;
    }
  if (is_signed_int (kv->type))
    {
      *out = kv->v.i64;
      return SC_OK;
    }
  return sc_error_set (err, SC_ERR_FORMAT, "key '%s' has type %s, expected an integer", key,
                       type_names[kv->type]);
}

ScStatus
sc_gguf_get_u32 (const ScGguf *g, const char *key, uint32_t *out, ScError *err)
{
  int64_t v;
  ScStatus st = sc_gguf_get_i64 (g, key, &v, err);

  if (st != SC_OK)
    return st;
  if (v < 0 || v > (int64_t) UINT32_MAX)
    return sc_error_set (err, SC_ERR_RANGE, "key '%s': value %lld is out of range", key,
                         (long long) v);
  *out = (uint32_t) v;
  return SC_OK;
}

ScStatus
sc_gguf_get_f32 (const ScGguf *g, const char *key, float *out, ScError *err)
{
  const ScGgufKv *kv;
  ScStatus st = find_typed (g, key, &kv, err);

  if (st != SC_OK)
    return st;
  if (kv->type == SC_GGUF_TYPE_FLOAT32 || kv->type == SC_GGUF_TYPE_FLOAT64)
    *out = (float) kv->v.f64;
  else if (is_unsigned_int (kv->type))
    *out = (float) kv->v.u64;
  else if (is_signed_int (kv->type))
    *out = (float) kv->v.i64;
  else
    return sc_error_set (err, SC_ERR_FORMAT, "key '%s' has type %s, expected a number", key,
                         type_names[kv->type]);
  return SC_OK;
}

ScStatus
sc_gguf_get_bool (const ScGguf *g, const char *key, bool *out, ScError *err)
{
  const ScGgufKv *kv;
  ScStatus st = find_typed (g, key, &kv, err);

  if (st != SC_OK)
    return st;
  if (kv->type != SC_GGUF_TYPE_BOOL)
    return sc_error_set (err, SC_ERR_FORMAT, "key '%s' has type %s, expected bool", key,
                         type_names[kv->type]);
  *out = kv->v.u64 != 0;
  return SC_OK;
}

ScStatus
sc_gguf_get_str (const ScGguf *g, const char *key, ScGgufStr *out, ScError *err)
{
  const ScGgufKv *kv;
  ScStatus st = find_typed (g, key, &kv, err);

  if (st != SC_OK)
    return st;
  if (kv->type != SC_GGUF_TYPE_STRING)
    return sc_error_set (err, SC_ERR_FORMAT, "key '%s' has type %s, expected string", key,
                         type_names[kv->type]);
  *out = kv->v.str;
  return SC_OK;
}

ScStatus
sc_gguf_get_arr (const ScGguf *g, const char *key, ScGgufType elem_type, const ScGgufArray **out,
                 ScError *err)
{
  const ScGgufKv *kv;
  ScStatus st = find_typed (g, key, &kv, err);

  if (st != SC_OK)
    return st;
  if (kv->type != SC_GGUF_TYPE_ARRAY)
    return sc_error_set (err, SC_ERR_FORMAT, "key '%s' has type %s, expected an array", key,
                         type_names[kv->type]);
  if (kv->v.arr.elem_type != elem_type)
    return sc_error_set (err, SC_ERR_FORMAT, "key '%s' is an array of %s, expected %s", key,
                         type_names[kv->v.arr.elem_type], sc_gguf_type_name (elem_type));
  *out = &kv->v.arr;
  return SC_OK;
}
