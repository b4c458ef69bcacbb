/* gpu-shaped-model.c — a model of SmolLM2-135M's shapes with random weights, for the
 * 'gpu' suite and its benchmark: a lent GPU machine receives only the working tree, and
 * the real model (98 MB) does not fit in what travels. */
#include "gpu-shaped-model.h"

#include <math.h>

#include "tests/engine/sc-test-gguf.h"

/* A model of SmolLM2-135M's shapes with @n_layers layers and random weights: each matrix
 * uniform in +-sqrt(3 / in) (unit variance out for unit variance in), q and k twice that
 * (sharper attention), norms 1 +- 0.1. */
GBytes *
gpu_smollm2_shaped (int n_layers)
{
  enum { E = 576, H = 9, HKV = 3, D = 64, F = 1536 };
  const guint V = SC_TEST_GGUF_BYTE_VOCAB;
  ScTestGguf *g = sc_test_gguf_new (3);
  GRand *r = g_rand_new_with_seed (135);
  GBytes *out;

  sc_test_gguf_add_str (g, "general.architecture", "llama");
  sc_test_gguf_add_str (g, "general.name", "smollm2-shaped-random");
  sc_test_gguf_add_u32 (g, "llama.block_count", (uint32_t) n_layers);
  sc_test_gguf_add_u32 (g, "llama.embedding_length", E);
  sc_test_gguf_add_u32 (g, "llama.attention.head_count", H);
  sc_test_gguf_add_u32 (g, "llama.attention.head_count_kv", HKV);
  sc_test_gguf_add_u32 (g, "llama.feed_forward_length", F);
  sc_test_gguf_add_u32 (g, "llama.context_length", 8192);
  sc_test_gguf_add_f32 (g, "llama.rope.freq_base", 100000.0f);
  sc_test_gguf_add_f32 (g, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
  sc_test_gguf_add_byte_vocab (g);
#define T(name, ne0, ne1, scale, off)                                                         \
  do                                                                                          \
    {                                                                                         \
      const int64_t ne_[2] = { ne0, ne1 };                                                    \
      const gsize n_ = (gsize) (ne0) * (gsize) (ne1);                                         \
      float *w_ = g_new (float, n_);                                                          \
      for (gsize i_ = 0; i_ < n_; i_++)                                                       \
        w_[i_] = (off) + (scale) * (float) g_rand_double_range (r, -1.0, 1.0);                \
      sc_test_gguf_add_tensor (g, name, (ne1) == 1 ? 1 : 2, ne_, 0, w_, n_ * sizeof (float)); \
      g_free (w_);                                                                            \
    }                                                                                         \
  while (0)
  T ("token_embd.weight", E, V, 1.0f, 0.0f);
  T ("output_norm.weight", E, 1, 0.1f, 1.0f);
  for (int l = 0; l < n_layers; l++)
    {
      char n[64];
      const float s_e = sqrtf (3.0f / E), s_f = sqrtf (3.0f / F);
#define LT(s, ne0, ne1, scale, off)                                                           \
  do                                                                                          \
    {                                                                                         \
      g_snprintf (n, sizeof n, "blk.%d.%s.weight", l, s);                                     \
      T (n, ne0, ne1, scale, off);                                                            \
    }                                                                                         \
  while (0)
      LT ("attn_norm", E, 1, 0.1f, 1.0f);
      LT ("attn_q", E, H * D, 2.0f * s_e, 0.0f);
      LT ("attn_k", E, HKV * D, 2.0f * s_e, 0.0f);
      LT ("attn_v", E, HKV * D, s_e, 0.0f);
      LT ("attn_output", H * D, E, s_e, 0.0f);
      LT ("ffn_norm", E, 1, 0.1f, 1.0f);
      LT ("ffn_gate", E, F, s_e, 0.0f);
      LT ("ffn_up", E, F, s_e, 0.0f);
      LT ("ffn_down", F, E, s_f, 0.0f);
#undef LT
    }
#undef T
  out = sc_test_gguf_build (g, NULL);
  sc_test_gguf_free (g);
  g_rand_free (r);
  return out;
}

