/* sc-test-induction-model.c — a two-layer attention-only llama with a previous-token head
 * (layer 0, head 0) and an induction head (layer 1, head 0) by construction, every weight
 * set analytically (docs/metrics.md, "A model with an induction head by construction",
 * derives each number below). Written as GGUF by the test itself, like every test model.
 *
 * Residual stream, E = 2V + 2 dimensions (V = the 266-token byte vocabulary):
 *   dim 0               a constant 1 (every embedding row has it)
 *   dims 1 .. V         the token's identity, one-hot
 *   dims 1+V .. 2V      the previous token's identity, written by layer 0
 *   dim 2V + 1          unused (E must be a multiple of the 2 heads)
 * Heads have head_dim D = R + V: the first R = 8 dimensions are rotated by RoPE (base
 * 100: frequencies 1, 0.32, 0.1, 0.03 rad per token), the other V are not.
 */
#include "tests/engine/sc-test-gguf.h"

#include <math.h>
#include <string.h>

enum {
  V = SC_TEST_GGUF_BYTE_VOCAB,
  E = 2 * V + 2,
  R = 8,          /* rope.dimension_count */
  D = R + V,      /* head_dim */
  H = 2,          /* heads per layer, each its own KV head */
  F = 8,          /* feed-forward width; its weights are zero */
  L = 2,
};

#define ROPE_BASE 100.0
/* Attention logits of a match: e^-40 leaves no weight elsewhere at any length up to 127. */
#define LOGIT_PREV 40.0 /* layer 0, times sum_c cos(.) whose gap at offset 1 is >= 0.51 */
#define LOGIT_MATCH 40.0 /* layer 1 */
/* What layer 1 writes into the identity block: the copied token outweighs the residual's
 * own identity (1) by 8 times at the logits. */
#define COPY_GAIN 8.0

static void
add (ScTestGguf *g, const char *name, int64_t ne0, int64_t ne1, const float *w)
{
  int64_t ne[2] = { ne0, ne1 };
  sc_test_gguf_add_tensor (g, name, ne1 == 1 ? 1 : 2, ne, 0, w, (gsize) (ne0 * ne1) * 4);
}

GBytes *
sc_test_gguf_induction_llama (guint32 n_ctx)
{
  ScTestGguf *g = sc_test_gguf_new (3);
  const double scale = 1.0 / sqrt ((double) D); /* the default attention scale */
  /* RMSNorm of a layer's input: the embedding has two ones (rms sqrt(2/E)), after layer 0
   * three (the previous-token block adds a third): x-hat = x * sqrt(E/2), x * sqrt(E/3). */
  const double s0 = sqrt (E / 2.0), s1 = sqrt (E / 3.0);
  const double a = sqrt (LOGIT_PREV / (scale * s0 * s0));
  const double b = sqrt (LOGIT_MATCH / (scale * s1 * s1));
  g_autofree float *emb = g_new0 (float, (gsize) V * E);
  g_autofree float *ones = g_new (float, E);
  g_autofree float *wq = g_new0 (float, (gsize) H * D * E);
  g_autofree float *wk = g_new0 (float, (gsize) H * D * E);
  g_autofree float *wv = g_new0 (float, (gsize) H * D * E);
  g_autofree float *wo = g_new0 (float, (gsize) E * H * D);
  g_autofree float *ffn = g_new0 (float, (gsize) F * E);
  GBytes *out;
  char name[64];
  int t, c, l;

  sc_test_gguf_add_str (g, "general.architecture", "llama");
  sc_test_gguf_add_str (g, "general.name", "induction-by-construction");
  sc_test_gguf_add_u32 (g, "llama.block_count", L);
  sc_test_gguf_add_u32 (g, "llama.embedding_length", E);
  sc_test_gguf_add_u32 (g, "llama.attention.head_count", H);
  sc_test_gguf_add_u32 (g, "llama.attention.head_count_kv", H);
  sc_test_gguf_add_u32 (g, "llama.attention.key_length", D);
  sc_test_gguf_add_u32 (g, "llama.attention.value_length", D);
  sc_test_gguf_add_u32 (g, "llama.rope.dimension_count", R);
  sc_test_gguf_add_u32 (g, "llama.feed_forward_length", F);
  sc_test_gguf_add_u32 (g, "llama.context_length", n_ctx);
  sc_test_gguf_add_f32 (g, "llama.rope.freq_base", (float) ROPE_BASE);
  sc_test_gguf_add_f32 (g, "llama.attention.layer_norm_rms_epsilon", 1e-6f);
  sc_test_gguf_add_byte_vocab (g);
  sc_test_gguf_add_bool (g, "tokenizer.ggml.add_bos_token", TRUE);

  /* Embedding row t: the constant and t's one-hot; tied, so logit_t = x-hat[0] + x-hat[1+t]. */
  for (t = 0; t < V; t++)
    {
      emb[(gsize) t * E] = 1.0f;
      emb[(gsize) t * E + 1 + t] = 1.0f;
    }
  for (t = 0; t < E; t++)
    ones[t] = 1.0f;
  add (g, "token_embd.weight", E, V, emb);
  add (g, "output_norm.weight", E, 1, ones);

  for (l = 0; l < L; l++)
    {
      memset (wq, 0, (gsize) H * D * E * sizeof *wq);
      memset (wk, 0, (gsize) H * D * E * sizeof *wk);
      memset (wv, 0, (gsize) H * D * E * sizeof *wv);
      memset (wo, 0, (gsize) E * H * D * sizeof *wo);
      if (l == 0)
        /* Previous-token head: q and k read the constant. Per rotated pair c (frequency
         * θ_c), q = a (1, 0) and k = a (cos θ_c, sin θ_c) = R(θ_c) q, so after RoPE
         * q_p . k_s = a² cos((s - p + 1) θ_c): largest at s = p - 1 for every c. */
        for (c = 0; c < R / 2; c++)
          {
            const double th = pow (ROPE_BASE, -2.0 * c / R);
            wq[(gsize) (2 * c) * E] = (float) a;
            wk[(gsize) (2 * c) * E] = (float) (a * cos (th));
            wk[(gsize) (2 * c + 1) * E] = (float) (a * sin (th));
          }
      else
        /* Induction head: in the unrotated dims R + t, the query is the current token's
         * identity and the key the previous-token block, so q_p . k_s is large exactly when
         * token s - 1 equals token p (the token after p's earlier occurrence). */
        for (t = 0; t < V; t++)
          {
            wq[(gsize) (R + t) * E + 1 + t] = (float) b;
            wk[(gsize) (R + t) * E + 1 + V + t] = (float) b;
          }
      /* OV: the value is the attended token's identity (undoing the norm's scale, times
       * COPY_GAIN in layer 1); layer 0 writes it into the previous-token block, layer 1
       * into the identity block, where the tied unembedding reads it as a logit. */
      for (t = 0; t < V; t++)
        {
          wv[(gsize) t * E + 1 + t] = (float) (l == 0 ? 1.0 / s0 : COPY_GAIN / s1);
          wo[(gsize) (l == 0 ? 1 + V + t : 1 + t) * H * D + t] = 1.0f;
        }
      /* Head 1 keeps all-zero q, k, v: uniform attention, no output. */
#define N(s) (g_snprintf (name, sizeof name, "blk.%d.%s.weight", l, s), name)
      add (g, N ("attn_norm"), E, 1, ones);
      add (g, N ("attn_q"), E, H * D, wq);
      add (g, N ("attn_k"), E, H * D, wk);
      add (g, N ("attn_v"), E, H * D, wv);
      add (g, N ("attn_output"), H * D, E, wo);
      add (g, N ("ffn_norm"), E, 1, ones);
      /* SwiGLU with zero gate and up weights is silu(0) * 0 = 0: no MLP. */
      add (g, N ("ffn_gate"), E, F, ffn);
      add (g, N ("ffn_up"), E, F, ffn);
      add (g, N ("ffn_down"), F, E, ffn);
#undef N
    }
  out = sc_test_gguf_build (g, NULL);
  sc_test_gguf_free (g);
  return out;
}
