/* sc-test-gguf.c — in-memory GGUF writer for tests (see sc-test-gguf.h). */
#include "tests/engine/sc-test-gguf.h"

#include <string.h>

#include "engine/format/sc-gguf.h"
#include "engine/model/sc-model.h"

#define ALIGN 32u

typedef struct {
  char *name;
  uint32_t n_dims;
  int64_t ne[4];
  uint32_t type;
  GBytes *data;
} Tensor;

struct ScTestGguf {
  uint32_t version;
  GByteArray *kv; /* encoded kv pairs */
  GArray *kv_ends; /* offset in kv of the end of each pair */
  guint n_kv;
  GPtrArray *tensors;
};

static void
tensor_free (gpointer p)
{
  Tensor *t = p;
  g_free (t->name);
  g_bytes_unref (t->data);
  g_free (t);
}

ScTestGguf *
sc_test_gguf_new (uint32_t version)
{
  ScTestGguf *g = g_new0 (ScTestGguf, 1);
  g->version = version;
  g->kv = g_byte_array_new ();
  g->kv_ends = g_array_new (FALSE, FALSE, sizeof (gsize));
  g->tensors = g_ptr_array_new_with_free_func (tensor_free);
  return g;
}

void
sc_test_gguf_free (ScTestGguf *g)
{
  if (g == NULL)
    return;
  g_byte_array_unref (g->kv);
  g_array_unref (g->kv_ends);
  g_ptr_array_unref (g->tensors);
  g_free (g);
}

static void
put (GByteArray *a, const void *p, gsize n)
{
  g_byte_array_append (a, p, (guint) n);
}

static void
put_u32 (GByteArray *a, uint32_t v)
{
  put (a, &v, 4);
}

static void
put_u64 (GByteArray *a, uint64_t v)
{
  put (a, &v, 8);
}

static void
put_str (GByteArray *a, const char *s, gsize len)
{
  put_u64 (a, len);
  put (a, s, len);
}

void
sc_test_gguf_add_raw (ScTestGguf *g, const char *key, uint32_t type, const void *value, gsize len)
{
  gsize end;
  put_str (g->kv, key, strlen (key));
  put_u32 (g->kv, type);
  put (g->kv, value, len);
  end = g->kv->len;
  g_array_append_val (g->kv_ends, end);
  g->n_kv++;
}

void
sc_test_gguf_add_u32 (ScTestGguf *g, const char *key, uint32_t v)
{
  sc_test_gguf_add_raw (g, key, 4, &v, 4);
}

void
sc_test_gguf_add_f32 (ScTestGguf *g, const char *key, float v)
{
  sc_test_gguf_add_raw (g, key, 6, &v, 4);
}

void
sc_test_gguf_add_bool (ScTestGguf *g, const char *key, gboolean v)
{
  uint8_t b = v ? 1 : 0;
  sc_test_gguf_add_raw (g, key, 7, &b, 1);
}

void
sc_test_gguf_add_str (ScTestGguf *g, const char *key, const char *v)
{
  g_autoptr (GByteArray) a = g_byte_array_new ();
  put_str (a, v, strlen (v));
  sc_test_gguf_add_raw (g, key, 8, a->data, a->len);
}

void
sc_test_gguf_add_str_array (ScTestGguf *g, const char *key, const char *const *strs,
                            const uint32_t *lens, guint n)
{
  g_autoptr (GByteArray) a = g_byte_array_new ();
  guint i;
  put_u32 (a, 8);
  put_u64 (a, n);
  for (i = 0; i < n; i++)
    put_str (a, strs[i], lens != NULL ? lens[i] : strlen (strs[i]));
  sc_test_gguf_add_raw (g, key, 9, a->data, a->len);
}

void
sc_test_gguf_add_i32_array (ScTestGguf *g, const char *key, const int32_t *v, guint n)
{
  g_autoptr (GByteArray) a = g_byte_array_new ();
  put_u32 (a, 5);
  put_u64 (a, n);
  put (a, v, (gsize) n * 4);
  sc_test_gguf_add_raw (g, key, 9, a->data, a->len);
}

void
sc_test_gguf_add_f32_array (ScTestGguf *g, const char *key, const float *v, guint n)
{
  g_autoptr (GByteArray) a = g_byte_array_new ();
  put_u32 (a, 6);
  put_u64 (a, n);
  put (a, v, (gsize) n * 4);
  sc_test_gguf_add_raw (g, key, 9, a->data, a->len);
}

void
sc_test_gguf_add_tensor (ScTestGguf *g, const char *name, uint32_t n_dims, const int64_t *ne,
                         uint32_t type, const void *data, gsize nbytes)
{
  Tensor *t = g_new0 (Tensor, 1);
  uint32_t d;
  t->name = g_strdup (name);
  t->n_dims = n_dims;
  for (d = 0; d < 4; d++)
    t->ne[d] = d < n_dims ? ne[d] : 1;
  t->type = type;
  t->data = g_bytes_new (data, nbytes);
  g_ptr_array_add (g->tensors, t);
}

static void
mark (GArray *b, gsize at)
{
  if (b != NULL)
    g_array_append_val (b, at);
}

GBytes *
sc_test_gguf_build (ScTestGguf *g, GArray *boundaries)
{
  GByteArray *a = g_byte_array_new ();
  gsize header_end, i, offset = 0;
  static const uint8_t zeros[ALIGN] = { 0 };

  put (a, "GGUF", 4);
  put_u32 (a, g->version);
  put_u64 (a, g->tensors->len);
  put_u64 (a, g->n_kv);
  header_end = a->len;
  mark (boundaries, header_end);
  put (a, g->kv->data, g->kv->len);
  for (i = 0; i < g->kv_ends->len; i++)
    mark (boundaries, header_end + g_array_index (g->kv_ends, gsize, i));
  for (i = 0; i < g->tensors->len; i++)
    {
      Tensor *t = g_ptr_array_index (g->tensors, i);
      uint32_t d;
      put_str (a, t->name, strlen (t->name));
      put_u32 (a, t->n_dims);
      for (d = 0; d < t->n_dims; d++)
        put_u64 (a, (uint64_t) t->ne[d]);
      put_u32 (a, t->type);
      put_u64 (a, offset);
      offset += (g_bytes_get_size (t->data) + ALIGN - 1) / ALIGN * ALIGN;
      mark (boundaries, a->len);
    }
  if (a->len % ALIGN != 0)
    put (a, zeros, ALIGN - a->len % ALIGN);
  mark (boundaries, a->len);
  for (i = 0; i < g->tensors->len; i++)
    {
      Tensor *t = g_ptr_array_index (g->tensors, i);
      gsize n = g_bytes_get_size (t->data);
      put (a, g_bytes_get_data (t->data, NULL), n);
      if (n % ALIGN != 0)
        put (a, zeros, ALIGN - n % ALIGN);
      mark (boundaries, a->len);
    }
  return g_byte_array_free_to_bytes (a);
}

/* GPT-2 byte -> unicode map, for building a byte-level vocabulary. */
static gunichar
byte_to_cp (guint b)
{
  guint n = 0, x;
  if ((b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae))
    return b;
  for (x = 0; x < b; x++)
    if (!((x >= 0x21 && x <= 0x7e) || (x >= 0xa1 && x <= 0xac) || (x >= 0xae)))
      n++;
  return 256 + n;
}

/* A random weight; when @tw names it, its element 0 becomes @tw->bad_value. */
static void
add_weight (ScTestGguf *g, GRand *r, const char *name, int64_t ne0, int64_t ne1, float scale,
            float offset, const ScTestTinyTweaks *tw)
{
  gsize n = (gsize) (ne0 * ne1), i;
  g_autofree float *w = g_new (float, n);
  int64_t ne[2] = { ne0, ne1 };
  for (i = 0; i < n; i++)
    w[i] = offset + scale * (float) g_rand_double_range (r, -1.0, 1.0);
  if (tw != NULL && tw->bad_tensor != NULL && strcmp (tw->bad_tensor, name) == 0)
    w[0] = tw->bad_value;
  sc_test_gguf_add_tensor (g, name, ne1 == 1 ? 1 : 2, ne, 0, w, n * sizeof (float));
}

/* The byte-level vocabulary of sc_test_gguf_tiny_llama (header): 256 byte tokens, 8
 * merges, <s> and </s>; writes the tokenizer.* keys. */
static void
add_byte_vocab (ScTestGguf *g, const ScTestTinyTweaks *tw);

void
sc_test_gguf_add_byte_vocab (ScTestGguf *g)
{
  add_byte_vocab (g, NULL);
}

static void
add_byte_vocab (ScTestGguf *g, const ScTestTinyTweaks *tw)
{
  enum { NMERGE = SC_TEST_GGUF_N_MERGES };
  static const char *merge_pairs[NMERGE][2] = {
    { "t", "h" }, { "th", "e" }, { "Ġ", "t" }, { "Ġt", "he" },
    { "a", "t" }, { "c", "at" }, { "Ġ", "c" }, { "Ġc", "at" },
  };
  const guint V = SC_TEST_GGUF_BYTE_VOCAB;
  g_autoptr (GPtrArray) toks = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GPtrArray) merges = g_ptr_array_new_with_free_func (g_free);
  g_autofree int32_t *types = g_new (int32_t, V);
  guint i;

  for (i = 0; i < 256; i++)
    {
      char buf[8];
      buf[g_unichar_to_utf8 (byte_to_cp (i), buf)] = '\0';
      g_ptr_array_add (toks, g_strdup (buf));
      types[i] = 1;
    }
  for (i = 0; i < NMERGE; i++)
    {
      g_ptr_array_add (toks, g_strconcat (merge_pairs[i][0], merge_pairs[i][1], NULL));
      g_ptr_array_add (merges, g_strdup_printf ("%s %s", merge_pairs[i][0], merge_pairs[i][1]));
      types[256 + i] = 1;
    }
  g_ptr_array_add (toks, g_strdup ("<s>"));
  g_ptr_array_add (toks, g_strdup ("</s>"));
  types[256 + NMERGE] = types[256 + NMERGE + 1] = 3;
  if (tw != NULL && tw->token_type_at >= 0 && (guint) tw->token_type_at < V)
    types[tw->token_type_at] = tw->token_type;

  sc_test_gguf_add_str (g, "tokenizer.ggml.model", "gpt2");
  sc_test_gguf_add_str (g, "tokenizer.ggml.pre", "smollm");
  sc_test_gguf_add_str_array (g, "tokenizer.ggml.tokens", (const char *const *) toks->pdata, NULL,
                              toks->len);
  sc_test_gguf_add_i32_array (g, "tokenizer.ggml.token_type", types, V);
  sc_test_gguf_add_str_array (g, "tokenizer.ggml.merges", (const char *const *) merges->pdata,
                              NULL, merges->len);
  sc_test_gguf_add_u32 (g, "tokenizer.ggml.bos_token_id",
                        tw != NULL && tw->bos_id >= 0 ? (uint32_t) tw->bos_id : 256 + NMERGE);
  sc_test_gguf_add_u32 (g, "tokenizer.ggml.eos_token_id", 256 + NMERGE + 1);
  if (tw != NULL && tw->unk_id >= 0)
    sc_test_gguf_add_u32 (g, "tokenizer.ggml.unknown_token_id", (uint32_t) tw->unk_id);
}

GBytes *
sc_test_gguf_tiny_llama (guint32 seed, const char *arch, const char *omit_tensor)
{
  const ScTestTinyTweaks tw = { .omit_tensor = omit_tensor, .bos_id = -1, .unk_id = -1,
                                .token_type_at = -1 };
  return sc_test_gguf_tiny_llama_tweaked (seed, arch, &tw);
}

GBytes *
sc_test_gguf_tiny_llama_tweaked (guint32 seed, const char *arch, const ScTestTinyTweaks *tw)
{
  enum { E = 16, H = 4, HKV = 2, D = 4, F = 32, L = 2, NMERGE = 8 };
  const char *omit_tensor = tw->omit_tensor;
  ScTestGguf *g = sc_test_gguf_new (3);
  GRand *r = g_rand_new_with_seed (seed);
  const guint V = SC_TEST_GGUF_BYTE_VOCAB;
  GBytes *out;
  guint l;
  char key[64];

  sc_test_gguf_add_str (g, "general.architecture", arch);
  sc_test_gguf_add_str (g, "general.name", "tiny-llama-test");
#define K(s) (g_snprintf (key, sizeof key, "%s.%s", arch, s), key)
  sc_test_gguf_add_u32 (g, K ("block_count"), tw->block_count > 0 ? tw->block_count : L);
  sc_test_gguf_add_u32 (g, K ("embedding_length"), E);
  sc_test_gguf_add_u32 (g, K ("attention.head_count"), H);
  sc_test_gguf_add_u32 (g, K ("attention.head_count_kv"), HKV);
  sc_test_gguf_add_u32 (g, K ("feed_forward_length"), F);
  sc_test_gguf_add_u32 (g, K ("context_length"), 64);
  sc_test_gguf_add_f32 (g, K ("rope.freq_base"), 10000.0f);
  sc_test_gguf_add_f32 (g, K ("attention.layer_norm_rms_epsilon"), 1e-5f);
#undef K
  add_byte_vocab (g, tw);
#define T(name, ne0, ne1, scale, off)                                                         \
  do                                                                                          \
    {                                                                                         \
      if (omit_tensor == NULL || strcmp (omit_tensor, name) != 0)                             \
        add_weight (g, r, name, ne0, ne1, scale, off, tw);                                    \
    }                                                                                         \
  while (0)
  T ("token_embd.weight", E, V, 1.0f, 0.0f);
  T ("output_norm.weight", E, 1, 0.1f, 1.0f);
  for (l = 0; l < L; l++)
    {
      char n[64];
#define LT(s, ne0, ne1, scale, off)                                                           \
  do                                                                                          \
    {                                                                                         \
      g_snprintf (n, sizeof n, "blk.%u.%s.weight", l, s);                                     \
      T (n, ne0, ne1, scale, off);                                                            \
    }                                                                                         \
  while (0)
      LT ("attn_norm", E, 1, 0.1f, 1.0f);
      LT ("attn_q", E, H * D, 0.5f, 0.0f);
      LT ("attn_k", E, HKV * D, 0.5f, 0.0f);
      LT ("attn_v", E, HKV * D, 0.5f, 0.0f);
      LT ("attn_output", H * D, E, 0.3f, 0.0f);
      LT ("ffn_norm", E, 1, 0.1f, 1.0f);
      LT ("ffn_gate", E, F, 0.3f, 0.0f);
      LT ("ffn_up", E, F, 0.3f, 0.0f);
      LT ("ffn_down", F, E, 0.3f, 0.0f);
#undef LT
    }
#undef T
  out = sc_test_gguf_build (g, NULL);
  sc_test_gguf_free (g);
  g_rand_free (r);
  return out;
}

ScModel *
sc_test_model_open_bytes (GBytes *bytes)
{
  ScGguf *g = NULL;
  ScModel *m = NULL;
  ScError err = { 0 };
  gsize n;
  const void *d = g_bytes_get_data (bytes, &n);

  if (sc_gguf_open_memory (d, n, &g, &err) != SC_OK)
    g_error ("test model: %s", err.message);
  if (sc_model_open_gguf (g, 1, &m, &err) != SC_OK)
    g_error ("test model: %s", err.message);
  return m;
}

GBytes *
sc_test_tiny_bytes (void)
{
  static GBytes *bytes = NULL; /* kept for the process: the models borrow it */

  if (bytes == NULL)
    bytes = sc_test_gguf_tiny_llama (11, "llama", NULL);
  return bytes;
}

ScModel *
sc_test_tiny_model (void)
{
  return sc_test_model_open_bytes (sc_test_tiny_bytes ());
}
