/* sc-test-gguf.h — builds GGUF images in memory for tests (and a tiny llama model).
 *
 * Tests build their own inputs (STYLE.md): this writer produces well-formed files that a
 * test can then truncate, corrupt or feed to the model loader. It records the byte offset
 * of every section boundary so truncation tests can cut at each one.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

typedef struct ScTestGguf ScTestGguf;

ScTestGguf *sc_test_gguf_new (uint32_t version);
void sc_test_gguf_free (ScTestGguf *g);

void sc_test_gguf_add_u32 (ScTestGguf *g, const char *key, uint32_t v);
void sc_test_gguf_add_f32 (ScTestGguf *g, const char *key, float v);
void sc_test_gguf_add_bool (ScTestGguf *g, const char *key, gboolean v);
void sc_test_gguf_add_str (ScTestGguf *g, const char *key, const char *v);
/* Strings with explicit lengths (may contain any bytes). */
void sc_test_gguf_add_str_array (ScTestGguf *g, const char *key, const char *const *strs,
                                 const uint32_t *lens, guint n);
void sc_test_gguf_add_i32_array (ScTestGguf *g, const char *key, const int32_t *v, guint n);
void sc_test_gguf_add_f32_array (ScTestGguf *g, const char *key, const float *v, guint n);
/* A raw value: the caller writes type + encoded value bytes. */
void sc_test_gguf_add_raw (ScTestGguf *g, const char *key, uint32_t type, const void *value,
                           gsize len);

/* Adds a tensor; @data must hold the tensor's bytes (copied). */
void sc_test_gguf_add_tensor (ScTestGguf *g, const char *name, uint32_t n_dims,
                              const int64_t *ne, uint32_t type, const void *data, gsize nbytes);

/* Serialises. @boundaries (may be NULL) receives the byte offsets (gsize) where the
 * header, each kv, each tensor info, the padding and each tensor's data end. */
GBytes *sc_test_gguf_build (ScTestGguf *g, GArray *boundaries);

/* The byte-level vocabulary below: 256 byte tokens (type NORMAL), 8 merges (NORMAL),
 * <s> = 264 and </s> = 265 (CONTROL); writes every tokenizer.* key (gpt2 / smollm). */
#define SC_TEST_GGUF_N_MERGES 8
#define SC_TEST_GGUF_BYTE_VOCAB (256 + SC_TEST_GGUF_N_MERGES + 2)
void sc_test_gguf_add_byte_vocab (ScTestGguf *g);

/* A complete, tiny llama model with F32 weights drawn from @seed: 2 layers, n_embd 16,
 * 4 query heads over 2 KV heads (head_dim 4), n_ff 32, a byte-level vocabulary of the
 * 256 byte tokens plus 8 merges and 2 control tokens (<s> = 256 + 8, </s> = 256 + 9),
 * context 64. @omit_tensor / @arch let tests break it. */
GBytes *sc_test_gguf_tiny_llama (guint32 seed, const char *arch, const char *omit_tensor);

/* What sc_test_gguf_tiny_llama_tweaked changes in the tiny llama, to build a hostile file
 * (tests/engine/test-model-hostile.c). */
typedef struct {
  const char *omit_tensor;   /* NULL: every tensor */
  guint32 block_count;       /* the block_count key; 0: the 2 layers written */
  gint64 bos_id;             /* tokenizer.ggml.bos_token_id; -1: <s> (264) */
  gint64 unk_id;             /* tokenizer.ggml.unknown_token_id; -1: absent */
  int token_type_at;         /* the token whose type becomes token_type; -1: none */
  gint32 token_type;
  const char *bad_tensor;    /* the tensor whose element 0 becomes bad_value; NULL: none */
  float bad_value;
} ScTestTinyTweaks;

GBytes *sc_test_gguf_tiny_llama_tweaked (guint32 seed, const char *arch,
                                         const ScTestTinyTweaks *tw);

/* Opens a model (one dequantising thread) from GGUF bytes held in memory, which the model
 * borrows: @bytes must outlive it. Fails the test with the engine's message. */
struct ScModel *sc_test_model_open_bytes (GBytes *bytes);

/* The tiny llama of seed 11: its GGUF bytes, made once and kept for the process (borrowed),
 * and an open model over them (caller frees the model). */
GBytes *sc_test_tiny_bytes (void);
struct ScModel *sc_test_tiny_model (void);

/* A two-layer attention-only llama whose head 0 of layer 0 is a previous-token head and
 * head 0 of layer 1 an induction head by construction (docs/metrics.md, "A model with an
 * induction head by construction"); the other head of each layer has zero weights and
 * attends uniformly. The byte vocabulary above, BOS added, tied embeddings, context @n_ctx
 * (its previous-token head is sharp up to 127 positions). */
GBytes *sc_test_gguf_induction_llama (guint32 n_ctx);
