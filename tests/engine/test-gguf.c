/* test-gguf.c — the GGUF reader and model loader on good and hostile input.
 *
 * Every input here is built by tests/engine/sc-test-gguf.c; each bad input must produce a clear
 * error naming what was wrong, never a crash (the suite also runs under ASan/UBSan in CI).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/format/sc-gguf.h"
#include "engine/model/sc-model.h"
#include "engine/format/sc-quant.h"
#include "tests/engine/sc-test-gguf.h"

static void
assert_error_contains (ScStatus st, ScStatus want, const ScError *err, const char *needle)
{
  if (st != want || strstr (err->message, needle) == NULL)
    g_error ("expected %s error containing \"%s\", got %s: \"%s\"", sc_status_name (want), needle,
             sc_status_name (st), err->message);
}

static ScStatus
parse_bytes (GBytes *b, ScGguf **out, ScError *err)
{
  gsize n;
  const void *d = g_bytes_get_data (b, &n);
  return sc_gguf_open_memory (d, n, out, err);
}

static void
test_good_file (void)
{
  g_autoptr (GBytes) b = sc_test_gguf_tiny_llama (1, "llama", NULL);
  ScGguf *g = NULL;
  ScError err = { 0 };
  const ScGgufTensor *t;
  const ScGgufArray *arr;
  uint32_t u;
  float f;
  ScGgufStr s;

  g_assert_cmpint (parse_bytes (b, &g, &err), ==, SC_OK);
  g_assert_cmpuint (sc_gguf_version (g), ==, 3);
  g_assert_cmpuint (sc_gguf_alignment (g), ==, 32);
  g_assert_cmpint (sc_gguf_get_u32 (g, "llama.block_count", &u, &err), ==, SC_OK);
  g_assert_cmpuint (u, ==, 2);
  g_assert_cmpint (sc_gguf_get_f32 (g, "llama.rope.freq_base", &f, &err), ==, SC_OK);
  g_assert_cmpfloat (f, ==, 10000.0f);
  g_assert_cmpint (sc_gguf_get_str (g, "general.architecture", &s, &err), ==, SC_OK);
  g_assert_true (sc_gguf_str_eq (s, "llama"));
  g_assert_cmpint (sc_gguf_get_arr (g, "tokenizer.ggml.tokens", SC_GGUF_TYPE_STRING, &arr, &err),
                   ==, SC_OK);
  g_assert_cmpuint (arr->count, ==, 266);
  g_assert_true (sc_gguf_str_eq (arr->strs[265], "</s>"));
  /* wrong type and missing key are named */
  assert_error_contains (sc_gguf_get_str (g, "llama.block_count", &s, &err), SC_ERR_FORMAT, &err,
                         "llama.block_count");
  assert_error_contains (sc_gguf_get_u32 (g, "no.such.key", &u, &err), SC_ERR_NOT_FOUND, &err,
                         "no.such.key");
  t = sc_gguf_find_tensor (g, "blk.1.attn_k.weight");
  g_assert_nonnull (t);
  g_assert_cmpint (t->ne[0], ==, 16);
  g_assert_cmpint (t->ne[1], ==, 8);
  g_assert_cmpuint (t->n_bytes, ==, 16 * 8 * 4);
  g_assert_null (sc_gguf_find_tensor (g, "blk.2.attn_k.weight"));
  sc_gguf_close (g);
}

static void
test_not_gguf (void)
{
  static const char text[] = "this is a text file, not a model\n";
  ScGguf *g = (ScGguf *) 1;
  ScError err = { 0 };

  assert_error_contains (sc_gguf_open_memory (text, sizeof text, &g, &err), SC_ERR_FORMAT, &err,
                         "not a GGUF file");
  g_assert_null (g);
  assert_error_contains (sc_gguf_open_memory (text, 2, &g, &err), SC_ERR_FORMAT, &err,
                         "not a GGUF file");
  assert_error_contains (sc_gguf_open ("/nonexistent/model.gguf", &g, &err), SC_ERR_IO, &err,
                         "/nonexistent/model.gguf");
  assert_error_contains (sc_gguf_open ("/", &g, &err), SC_ERR_IO, &err, "not a regular file");
}

static void
test_empty_file (void)
{
  g_autofree char *path = NULL;
  ScGguf *g = NULL;
  ScError err = { 0 };
  int fd = g_file_open_tmp ("sc-empty-XXXXXX.gguf", &path, NULL);

  g_assert_cmpint (fd, >=, 0);
  close (fd);
  assert_error_contains (sc_gguf_open (path, &g, &err), SC_ERR_FORMAT, &err, "empty");
  g_assert_nonnull (strstr (err.message, path));
  g_unlink (path);
}

/* Truncating a valid file at any section boundary (and one byte either side) fails cleanly. */
static void
test_truncation (void)
{
  g_autoptr (GArray) bounds = g_array_new (FALSE, FALSE, sizeof (gsize));
  ScTestGguf *w = sc_test_gguf_new (3);
  g_autoptr (GBytes) b = NULL;
  const uint8_t *data;
  gsize size, i;
  float wdata[64] = { 0 };
  int64_t ne[2] = { 8, 8 };
  guint checked = 0;

  sc_test_gguf_add_str (w, "general.architecture", "llama");
  sc_test_gguf_add_u32 (w, "llama.block_count", 1);
  {
    const char *strs[] = { "a", "bc", "def" };
    sc_test_gguf_add_str_array (w, "tokenizer.ggml.tokens", strs, NULL, 3);
  }
  sc_test_gguf_add_tensor (w, "a.weight", 2, ne, 0, wdata, sizeof wdata);
  sc_test_gguf_add_tensor (w, "b.weight", 2, ne, 0, wdata, sizeof wdata);
  b = sc_test_gguf_build (w, bounds);
  sc_test_gguf_free (w);
  data = g_bytes_get_data (b, &size);

  for (i = 0; i < bounds->len; i++)
    {
      gsize at = g_array_index (bounds, gsize, i);
      gsize cut;
      for (cut = at > 0 ? at - 1 : 0; cut <= at + 1 && cut < size; cut++)
        {
          g_autofree uint8_t *copy = g_memdup2 (data, cut);
          ScGguf *g = NULL;
          ScError err = { 0 };
          ScStatus st = sc_gguf_open_memory (copy, cut, &g, &err);
          g_assert_cmpint (st, !=, SC_OK);
          g_assert_null (g);
          g_assert_cmpuint (strlen (err.message), >, 0);
          checked++;
        }
    }
  /* and every single byte length, which is cheap for a file this small */
  for (i = 0; i < size; i++)
    {
      ScGguf *g = NULL;
      g_autofree uint8_t *copy = g_memdup2 (data, i);
      if (sc_gguf_open_memory (copy, i, &g, NULL) == SC_OK)
        g_error ("a file cut to %zu of %zu bytes parsed", i, size);
    }
  g_test_message ("%u cuts at %u section boundaries, %zu byte lengths", checked, bounds->len, size);
  {
    ScGguf *g = NULL;
    g_assert_cmpint (sc_gguf_open_memory (data, size, &g, NULL), ==, SC_OK);
    sc_gguf_close (g);
  }
}

/* Builds a header by hand: magic, version, n_tensors, n_kv, then @tail. */
static GBytes *
raw_file (uint32_t version, uint64_t n_tensors, uint64_t n_kv, const void *tail, gsize tail_len)
{
  GByteArray *a = g_byte_array_new ();
  g_byte_array_append (a, (const guint8 *) "GGUF", 4);
  g_byte_array_append (a, (const guint8 *) &version, 4);
  g_byte_array_append (a, (const guint8 *) &n_tensors, 8);
  g_byte_array_append (a, (const guint8 *) &n_kv, 8);
  if (tail_len > 0)
    g_byte_array_append (a, tail, (guint) tail_len);
  /* padding so that "cannot fit" checks are not what trips first where irrelevant */
  {
    static const guint8 zeros[256] = { 0 };
    g_byte_array_append (a, zeros, sizeof zeros);
  }
  return g_byte_array_free_to_bytes (a);
}

static void
test_bad_header (void)
{
  ScGguf *g = NULL;
  ScError err = { 0 };
  g_autoptr (GBytes) v1 = raw_file (1, 0, 0, NULL, 0);
  g_autoptr (GBytes) v4 = raw_file (4, 0, 0, NULL, 0);
  g_autoptr (GBytes) be = raw_file (0x03000000u, 0, 0, NULL, 0);
  g_autoptr (GBytes) many_t = raw_file (3, (uint64_t) 1 << 60, 0, NULL, 0);
  g_autoptr (GBytes) many_kv = raw_file (3, 0, UINT64_MAX, NULL, 0);
  g_autoptr (GBytes) empty_ok = raw_file (3, 0, 0, NULL, 0);

  assert_error_contains (parse_bytes (v1, &g, &err), SC_ERR_UNSUPPORTED, &err, "version 1");
  assert_error_contains (parse_bytes (v4, &g, &err), SC_ERR_UNSUPPORTED, &err, "version 4");
  assert_error_contains (parse_bytes (be, &g, &err), SC_ERR_UNSUPPORTED, &err, "big-endian");
  assert_error_contains (parse_bytes (many_t, &g, &err), SC_ERR_RANGE, &err, "tensors");
  assert_error_contains (parse_bytes (many_kv, &g, &err), SC_ERR_RANGE, &err, "metadata");
  g_assert_cmpint (parse_bytes (empty_ok, &g, &err), ==, SC_OK);
  sc_gguf_close (g);
}

static void
test_bad_kv (void)
{
  ScGguf *g = NULL;
  ScError err = { 0 };
  ScTestGguf *w;
  g_autoptr (GBytes) b1 = NULL, b2 = NULL, b3 = NULL, b4 = NULL, b5 = NULL, b6 = NULL;

  /* a string length of 2^62 */
  {
    uint64_t klen = 3, vlen = (uint64_t) 1 << 62;
    uint32_t type = 8;
    GByteArray *a = g_byte_array_new ();
    g_byte_array_append (a, (guint8 *) &klen, 8);
    g_byte_array_append (a, (guint8 *) "abc", 3);
    g_byte_array_append (a, (guint8 *) &type, 4);
    g_byte_array_append (a, (guint8 *) &vlen, 8);
    b1 = raw_file (3, 0, 1, a->data, a->len);
    g_byte_array_unref (a);
    assert_error_contains (parse_bytes (b1, &g, &err), SC_ERR_FORMAT, &err, "abc");
  }
  /* an array claiming 2^61 uint32 elements */
  w = sc_test_gguf_new (3);
  {
    uint8_t v[12];
    uint32_t et = 4;
    uint64_t count = (uint64_t) 1 << 61;
    memcpy (v, &et, 4);
    memcpy (v + 4, &count, 8);
    sc_test_gguf_add_raw (w, "huge.array", 9, v, sizeof v);
  }
  b2 = sc_test_gguf_build (w, NULL);
  sc_test_gguf_free (w);
  assert_error_contains (parse_bytes (b2, &g, &err), SC_ERR_FORMAT, &err, "huge.array");
  /* an invalid value type and an invalid bool */
  w = sc_test_gguf_new (3);
  {
    uint32_t v = 0;
    sc_test_gguf_add_raw (w, "bad.type", 77, &v, 4);
  }
  b3 = sc_test_gguf_build (w, NULL);
  sc_test_gguf_free (w);
  assert_error_contains (parse_bytes (b3, &g, &err), SC_ERR_FORMAT, &err, "bad.type");
  w = sc_test_gguf_new (3);
  {
    uint8_t v = 2;
    sc_test_gguf_add_raw (w, "bad.bool", 7, &v, 1);
  }
  b4 = sc_test_gguf_build (w, NULL);
  sc_test_gguf_free (w);
  assert_error_contains (parse_bytes (b4, &g, &err), SC_ERR_FORMAT, &err, "bad.bool");
  /* alignment not a power of two; duplicate key */
  w = sc_test_gguf_new (3);
  sc_test_gguf_add_u32 (w, "general.alignment", 24);
  b5 = sc_test_gguf_build (w, NULL);
  sc_test_gguf_free (w);
  assert_error_contains (parse_bytes (b5, &g, &err), SC_ERR_FORMAT, &err, "power of two");
  w = sc_test_gguf_new (3);
  sc_test_gguf_add_u32 (w, "dup.key", 1);
  sc_test_gguf_add_u32 (w, "dup.key", 2);
  b6 = sc_test_gguf_build (w, NULL);
  sc_test_gguf_free (w);
  assert_error_contains (parse_bytes (b6, &g, &err), SC_ERR_FORMAT, &err, "duplicate");
}

static void
test_bad_tensor_info (void)
{
  ScGguf *g = NULL;
  ScError err = { 0 };
  float data[16] = { 0 };
  struct {
    const char *what;
    uint32_t n_dims;
    int64_t ne[4];
    uint32_t type;
    ScStatus want;
    const char *needle;
  } cases[] = {
    { "overflow", 4, { 1 << 20, 1 << 20, 1 << 20, 1 << 20 }, 0, SC_ERR_RANGE, "overflow" },
    { "negative", 2, { -5, 4 }, 0, SC_ERR_RANGE, "negative" },
    { "dims", 0, { 16 }, 0, SC_ERR_RANGE, "dimensions" },
    { "unknown type", 1, { 16 }, 99, SC_ERR_UNSUPPORTED, "unknown tensor type 99" },
    { "removed type", 1, { 32 }, 4, SC_ERR_UNSUPPORTED, "unknown tensor type 4" },
    { "block", 1, { 17 }, 2, SC_ERR_FORMAT, "multiple" },
    { "past end", 2, { 1024, 1024 }, 0, SC_ERR_FORMAT, "past the end" },
  };
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      ScTestGguf *w = sc_test_gguf_new (3);
      g_autoptr (GBytes) b = NULL;
      sc_test_gguf_add_tensor (w, "t.weight", cases[i].n_dims, cases[i].ne, cases[i].type, data,
                               sizeof data);
      b = sc_test_gguf_build (w, NULL);
      sc_test_gguf_free (w);
      g_test_message ("case %s", cases[i].what);
      assert_error_contains (parse_bytes (b, &g, &err), cases[i].want, &err, cases[i].needle);
      g_assert_nonnull (strstr (err.message, "t.weight"));
    }
}

static ScStatus
open_model_bytes (GBytes *b, ScModel **m, ScError *err)
{
  ScGguf *g = NULL;
  ScStatus st = parse_bytes (b, &g, err);
  if (st != SC_OK)
    return st;
  return sc_model_open_gguf (g, 1, m, err);
}

static void
test_model_errors (void)
{
  g_autoptr (GBytes) good = sc_test_gguf_tiny_llama (7, "llama", NULL);
  g_autoptr (GBytes) arch = sc_test_gguf_tiny_llama (7, "gptneox", NULL);
  g_autoptr (GBytes) missing = sc_test_gguf_tiny_llama (7, "llama", "blk.1.ffn_up.weight");
  ScModel *m = NULL;
  ScError err = { 0 };
  const ScModelInfo *in;

  g_assert_cmpint (open_model_bytes (good, &m, &err), ==, SC_OK);
  in = sc_model_info (m);
  g_assert_cmpuint (in->n_layers, ==, 2);
  g_assert_cmpuint (in->n_heads, ==, 4);
  g_assert_cmpuint (in->n_kv_heads, ==, 2);
  g_assert_cmpuint (in->head_dim, ==, 4);
  g_assert_cmpuint (in->n_vocab, ==, 266);
  g_assert_true (in->tied_output);
  g_assert_cmpuint (sc_model_kv_bytes_per_token (m, 2), ==, 2 * 2 * 2 * 4 * 2);
  sc_model_free (m);

  assert_error_contains (open_model_bytes (arch, &m, &err), SC_ERR_UNSUPPORTED, &err, "gptneox");
  assert_error_contains (open_model_bytes (missing, &m, &err), SC_ERR_FORMAT, &err,
                         "tensor 'blk.1.ffn_up.weight' is missing");
  g_assert_null (m);
}

/* A copy of @b whose uint32 metadata value @key is @value (the key's bytes are followed by
 * its type, 4 bytes, then the value). */
static GBytes *
with_u32 (GBytes *b, const char *key, guint32 value)
{
  gsize n, klen = strlen (key), i;
  const guint8 *d = g_bytes_get_data (b, &n);
  guint8 *copy = g_memdup2 (d, n);

  for (i = 0; i + klen + 8 <= n; i++)
    if (memcmp (copy + i, key, klen) == 0)
      {
        guint32 le = GUINT32_TO_LE (value);
        memcpy (copy + i + klen + 4, &le, 4);
        return g_bytes_new_take (copy, n);
      }
  g_error ("key '%s' not found", key);
}

/* Dimensions that promise far more weights than the file holds (4096 layers with a
 * feed-forward width of 2^20: 800 GB of float32) are refused by the first tensor whose
 * shape disagrees, before any memory is taken for the weights — never an attempt to
 * allocate what the data could not fill. */
static void
test_model_absurd_dims (void)
{
  g_autoptr (GBytes) good = sc_test_gguf_tiny_llama (7, "llama", NULL);
  g_autoptr (GBytes) wide = with_u32 (good, "llama.feed_forward_length", 1u << 20);
  g_autoptr (GBytes) absurd = with_u32 (wide, "llama.block_count", 4096);
  ScModel *m = NULL;
  ScError err = { 0 };

  assert_error_contains (open_model_bytes (absurd, &m, &err), SC_ERR_FORMAT, &err,
                         "tensor 'blk.0.");
  g_assert_null (strstr (err.message, "out of memory"));
  g_assert_null (m);
}

/* A copy of @b with the first occurrence of @find (a C string) replaced by @repl, which has
 * the same length and may contain NUL bytes; @repl_len says how long. */
static GBytes *
patched (GBytes *b, const char *find, const char *repl, gsize repl_len)
{
  gsize n, flen = strlen (find), i;
  const guint8 *d = g_bytes_get_data (b, &n);
  guint8 *copy = g_memdup2 (d, n);

  g_assert_cmpuint (flen, ==, repl_len);
  for (i = 0; i + flen <= n; i++)
    if (memcmp (copy + i, find, flen) == 0)
      {
        memcpy (copy + i, repl, repl_len);
        return g_bytes_new_take (copy, n);
      }
  g_error ("'%s' not found", find);
}

/* Strings with an embedded NUL byte: a key or tensor name is refused (it could never be
 * looked up by its full name); an architecture "llama\0x" is named as such, never as the
 * "llama" a C string would make of it. */
static void
test_embedded_nul (void)
{
  g_autoptr (GBytes) arch = sc_test_gguf_tiny_llama (7, "llamaQx", NULL);
  g_autoptr (GBytes) arch_nul = patched (arch, "llamaQx", "llama\0x", 7);
  g_autoptr (GBytes) tensor = sc_test_gguf_tiny_llama (7, "llama", NULL);
  g_autoptr (GBytes) tensor_nul = patched (tensor, "token_embd", "token\0embd", 10);
  g_autoptr (GBytes) key = NULL, key_nul = NULL;
  ScTestGguf *w = sc_test_gguf_new (3);
  ScModel *m = NULL;
  ScGguf *g = NULL;
  ScError err = { 0 };

  assert_error_contains (open_model_bytes (arch_nul, &m, &err), SC_ERR_UNSUPPORTED, &err,
                         "architecture 'llama\\0x' is not supported");
  g_assert_null (m);
  assert_error_contains (parse_bytes (tensor_nul, &g, &err), SC_ERR_FORMAT, &err,
                         "tensor name 'token\\0embd.weight' contains a NUL byte");
  sc_test_gguf_add_u32 (w, "general.Xkey", 1);
  key = sc_test_gguf_build (w, NULL);
  sc_test_gguf_free (w);
  key_nul = patched (key, "general.Xkey", "general.\0key", 12);
  assert_error_contains (parse_bytes (key_nul, &g, &err), SC_ERR_FORMAT, &err,
                         "metadata key 'general.\\0key' contains a NUL byte");
  g_assert_null (g);
}

/* A tensor of a known but unsupported quantisation is refused at load, by name. */
static void
test_model_unsupported_type (void)
{
  ScTestGguf *w = sc_test_gguf_new (3);
  g_autoptr (GBytes) b = NULL;
  ScModel *m = NULL;
  ScError err = { 0 };
  const ScTypeTraits *tr = sc_type_traits (16); /* iq2_xxs */
  int64_t ne[2] = { 256, 1 };
  g_autofree uint8_t *blk = g_malloc0 (tr->type_size);
  ScGguf *g = NULL;
  const char *toks[] = { "a" };

  sc_test_gguf_add_str (w, "general.architecture", "llama");
  sc_test_gguf_add_u32 (w, "llama.block_count", 1);
  sc_test_gguf_add_u32 (w, "llama.embedding_length", 256);
  sc_test_gguf_add_u32 (w, "llama.attention.head_count", 4);
  sc_test_gguf_add_u32 (w, "llama.feed_forward_length", 256);
  sc_test_gguf_add_str (w, "tokenizer.ggml.model", "gpt2");
  sc_test_gguf_add_str (w, "tokenizer.ggml.pre", "gpt2");
  sc_test_gguf_add_str_array (w, "tokenizer.ggml.tokens", toks, NULL, 1);
  sc_test_gguf_add_str_array (w, "tokenizer.ggml.merges", toks, NULL, 0);
  sc_test_gguf_add_tensor (w, "token_embd.weight", 2, ne, 16, blk, tr->type_size);
  b = sc_test_gguf_build (w, NULL);
  sc_test_gguf_free (w);
  g_assert_cmpint (parse_bytes (b, &g, &err), ==, SC_OK);
  assert_error_contains (sc_model_open_gguf (g, 1, &m, &err), SC_ERR_UNSUPPORTED, &err,
                         "iq2_xxs");
  g_assert_nonnull (strstr (err.message, "token_embd.weight"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/gguf/good-file", test_good_file);
  g_test_add_func ("/gguf/not-gguf", test_not_gguf);
  g_test_add_func ("/gguf/empty-file", test_empty_file);
  g_test_add_func ("/gguf/truncation", test_truncation);
  g_test_add_func ("/gguf/bad-header", test_bad_header);
  g_test_add_func ("/gguf/bad-kv", test_bad_kv);
  g_test_add_func ("/gguf/bad-tensor-info", test_bad_tensor_info);
  g_test_add_func ("/model/errors", test_model_errors);
  g_test_add_func ("/model/unsupported-type", test_model_unsupported_type);
  g_test_add_func ("/gguf/embedded-nul", test_embedded_nul);
  g_test_add_func ("/model/absurd-dims", test_model_absurd_dims);
  return g_test_run ();
}
