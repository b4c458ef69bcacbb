/* sc-model.h — a transformer's architecture description and weights, loaded from GGUF.
 *
 * An ScModel owns the parsed GGUF file, the tokenizer built from its vocabulary, and the
 * weights. Its vectors (norms, biases, GPT-2's position table) are dense float32 from the
 * load on; its matrices (every projection, the token embeddings and the output head) stay
 * in the file's blocks (ScWeightSrc in format/sc-quant.h, borrowed from the mapping), which
 * is what the forward pass hands its backend (weight_src): a Q4_K_M file costs ~0.6 bytes
 * a weight instead of 4 (a 1.5B model 1 GB instead of 6). The matrices as dense float32,
 * row-major [out][in] (the layout nn.Linear uses), are made on the first call of
 * sc_model_weights(), for the readers that want floats; sc_model_weights_packed() gives
 * the same struct without making them.
 *
 * Supported now: GGUF arch "llama" (Llama, SmolLM2, TinyLlama, ...): RMSNorm, RoPE on
 * adjacent pairs (the GGUF convention, see docs/architecture.md), grouped-query attention,
 * SwiGLU, optional tied output; and "gemma3" (Gemma 3 text models: sliding-window layers,
 * QK-norm, post-norms, GeGLU, NeoX RoPE, scaled embeddings; model/sc-arch-gemma3.c); and "qwen2"
 * (Qwen2, Qwen2.5 and Qwen2.5-Coder: llama's block with Q, K, V biases and NeoX RoPE;
 * model/sc-arch-qwen2.c); and "gpt2" (GPT-2: learned positions, LayerNorm with biases, fused
 * QKV with bias, GELU; model/sc-arch-gpt2.c); and "qwen3" (Qwen3: qwen2's body without biases, with
 * a per-head QK RMSNorm; model/sc-arch-qwen3.c); and "phi3" (Phi-3, Phi-4-mini: llama's block
 * with fused Q|K|V and gate|up tensors and NeoX RoPE; model/sc-arch-phi3.c). Other architectures fail with SC_ERR_UNSUPPORTED naming
 * the architecture. Each architecture is one file, model/sc-arch-<name>.c, holding its
 * tensor names and its layer function; sc-arch.h says what one provides.
 *
 * What it is not: the forward pass (sc-forward) and the compute backends (sc-backend).
 *
 * Thread safety: immutable after sc_model_open() but for the float view, which
 * sc_model_weights() makes once under a lock; share the model between threads freely.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sc-error.h"
#include "format/sc-gguf.h"
#include "format/sc-quant.h"
#include "text/sc-tokenizer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  SC_ARCH_LLAMA = 1,
  SC_ARCH_GEMMA3 = 2,
  SC_ARCH_QWEN2 = 3,
  SC_ARCH_GPT2 = 4,
  SC_ARCH_QWEN3 = 5,
  SC_ARCH_GEMMA2 = 6,
  SC_ARCH_PHI3 = 7,
} ScArch;

/* The most RoPE pairs per head whose frequency factors a model may give (head_dim 512). */
#define SC_MAX_ROPE_PAIRS 256

typedef struct {
  ScArch arch;
  char arch_name[32];   /* general.architecture as stored */
  char name[128];       /* readable: "SmolLM2 135M Instruct · Q4_1" (sc-model.c, readable_name) */
  uint32_t n_layers;
  uint32_t n_embd;
  uint32_t n_heads;     /* query heads */
  uint32_t n_kv_heads;  /* key/value heads; n_heads % n_kv_heads == 0 */
  uint32_t head_dim;
  uint32_t n_rot;       /* rotated dims per head (<= head_dim, even) */
  uint32_t n_ff;
  uint32_t n_vocab;
  uint32_t n_ctx_train; /* context length the model was trained for */
  float rope_base;
  /* Llama 3's RoPE frequency scaling, as llama.cpp's converter stores it: the tensor
   * rope_freqs.weight, n_rot/2 factors; pair c's angle is divided by rope_freq[c] (ggml's
   * rope with freq_factors). n_rope_freq = 0: none (every other file). */
  uint32_t n_rope_freq;
  float rope_freq[SC_MAX_ROPE_PAIRS];
  float norm_eps;
  /* Gemma 2's soft-capping: attention scores s become attn_softcap * tanh(s / attn_softcap)
   * before the softmax, logits l become final_softcap * tanh(l / final_softcap); 0 = none
   * (every other architecture). */
  float attn_softcap;
  float final_softcap;
  float attn_scale;     /* 1/sqrt(head_dim) unless the file says otherwise */
  bool tied_output;     /* logits use token_embd (no output.weight) */
  uint32_t file_type;   /* general.file_type (llama ftype), 0 if absent */
  uint32_t main_type;   /* ggml type of the attention weights, for display */
  /* Local (sliding-window) layers, as Gemma 3 interleaves them with global ones; both 0
   * for a model whose every layer is global (llama). A layer is local unless
   * swa_pattern == 0 or (layer + 1) % swa_pattern == 0 (llama.cpp's "every n-th layer is
   * dense" rule); a local layer's query at position p sees keys p - sliding_window + 1 .. p
   * (the attention op's window). swa_pattern > n_layers makes every layer local (Mistral's
   * window on a llama body). Use sc_model_layer_window() rather than the rule. */
  uint32_t sliding_window;
  uint32_t swa_pattern;
  float rope_base_local; /* RoPE base of local layers (0 when there are none) */
  float embd_scale;      /* the token embeddings are multiplied by this before layer 0
                          * (Gemma: sqrt(n_embd)); 0 = not scaled (llama) */
  /* GPT-2: every norm, the output head's included, is LayerNorm with a bias ((x - mean) /
   * sqrt(var + norm_eps) * w + b), not RMSNorm; the output head's bias is
   * ScWeights.output_norm_b. false = RMSNorm (llama, gemma3, qwen2). */
  bool layer_norm;
  /* GPT-2: learned absolute positions: row p of ScWeights.position_embd (n_ctx_train rows)
   * is added to the token embedding at position p, and a run is refused past n_ctx_train
   * tokens. false = none (RoPE architectures). */
  bool learned_positions;
} ScModelInfo;

/* One block's weights, dense float32, row-major [out][in]. The loader fills the fields
 * its architecture's tensor table names (sc-arch.h), in the table's order; for llama it
 * guarantees that wq, wk, wv are consecutive in memory, so wq is also the fused projection
 * W_qkv (n_heads * head_dim + 2 * n_kv_heads * head_dim, n_embd), and likewise w_gate,
 * w_up form W_gate_up (2 * n_ff, n_embd): one matrix product instead of three, and of two.
 * A field an architecture has no tensor for stays NULL. */
typedef struct {
  float *attn_norm; /* (n_embd) */
  float *wq;        /* (n_heads * head_dim, n_embd) */
  float *wk;        /* (n_kv_heads * head_dim, n_embd) */
  float *wv;        /* (n_kv_heads * head_dim, n_embd) */
  float *wo;        /* (n_embd, n_heads * head_dim) */
  float *ffn_norm;  /* (n_embd) */
  float *w_gate;    /* (n_ff, n_embd) */
  float *w_up;      /* (n_ff, n_embd) */
  float *w_down;    /* (n_embd, n_ff) */
  /* Gemma's extra norms (NULL for llama) */
  float *attn_q_norm;    /* (head_dim) RMSNorm of each query head (QK-norm) */
  float *attn_k_norm;    /* (head_dim) RMSNorm of each key head */
  float *post_attn_norm; /* (n_embd) RMSNorm of the attention block's output */
  float *post_ffn_norm;  /* (n_embd) RMSNorm of the feed-forward block's output */
  /* Qwen2's attention biases (NULL for llama and gemma3) */
  float *bq;             /* (n_heads * head_dim) added to the queries before RoPE */
  float *bk;             /* (n_kv_heads * head_dim) added to the keys before RoPE */
  float *bv;             /* (n_kv_heads * head_dim) added to the values */
  /* GPT-2's fused projection and biases (NULL elsewhere). Its attn_qkv.weight (and .bias)
   * is one tensor loaded into wq (bq); the loader then points wk, wv (bk, bv) at its rows,
   * so the three are back to back as llama's are. Phi-3's attn_qkv is loaded the same way,
   * and its ffn_up (gate rows, then up rows) into w_gate, with w_up pointed at its second
   * half. */
  float *attn_norm_b;    /* (n_embd) LayerNorm bias of the attention block */
  float *bo;             /* (n_embd) attn_output.bias */
  float *ffn_norm_b;     /* (n_embd) LayerNorm bias of the feed-forward block */
  float *b_up;           /* (n_ff) ffn_up.bias */
  float *b_down;         /* (n_embd) ffn_down.bias */
  /* The matrices above as the file stores them (one part each; n_parts 0 where the
   * architecture has no such tensor; GPT-2's and Phi-3's attn_qkv is src_wq with all
   * Q + 2 KV rows, Phi-3's ffn_up src_w_gate with all 2 n_ff rows).
   * Set from the load on, whether or not the float fields are. */
  ScWeightSrc src_wq, src_wk, src_wv, src_wo, src_w_gate, src_w_up, src_w_down;
} ScLayerWeights;

typedef struct {
  float *token_embd;  /* (n_vocab, n_embd) */
  float *output_norm; /* (n_embd) */
  float *output;      /* (n_vocab, n_embd); == token_embd when tied */
  float *output_norm_b; /* (n_embd) with info.layer_norm, else NULL */
  float *position_embd; /* (n_ctx_train, n_embd) with info.learned_positions, else NULL */
  ScLayerWeights *layers; /* (n_layers) */
  /* token_embd and output as the file stores them; src_output is src_token_embd when
   * tied. */
  ScWeightSrc src_token_embd, src_output;
} ScWeights;

typedef struct ScModel ScModel;

/* Loads @path. Errors name the file and the offending key/tensor: SC_ERR_IO, SC_ERR_FORMAT
 * (missing key/tensor, wrong shape), SC_ERR_UNSUPPORTED (architecture, tensor type,
 * tokenizer), SC_ERR_RANGE, SC_ERR_NOMEM. @n_threads bounds the dequantisation threads
 * (0 = all cores). */
ScStatus sc_model_open (const char *path, int n_threads, ScModel **out, ScError *err);

/* Same, over an already-open GGUF whose ownership passes to the model (even on failure). */
ScStatus sc_model_open_gguf (ScGguf *gguf, int n_threads, ScModel **out, ScError *err);

void sc_model_free (ScModel *model); /* NULL is a no-op */

/* Reads @path's header only (no weights, no tokenizer; mapped, so a large file costs
 * little): the hyperparameters and readable name into *@info, n_vocab left 0. Refuses what
 * sc_model_open refuses about the header (not a GGUF, an unknown architecture, missing or
 * out-of-range hyperparameters) with the same messages, prefixed by @path; a file it
 * accepts can still fail to load later (its tensors, its tokenizer). For listing model
 * files (the window's model menu, `saccade models`). */
ScStatus sc_model_peek (const char *path, ScModelInfo *info, ScError *err);

const ScModelInfo *sc_model_info (const ScModel *model);

/* Whether @model's architecture has a backward pass (sc-backward.h: gradients, attribution
 * and adversarial studies); sc_grad_new refuses the others with SC_ERR_UNSUPPORTED. */
bool sc_model_has_backward (const ScModel *model);
/* Every weight as dense float32: the vectors, and the matrices, which the first call
 * decodes from the file (in parallel, with the load's thread count) into one arena of 4
 * bytes a weight that lives as long as the model. Thread-safe. NULL when that arena
 * cannot be allocated. For readers that index weights as floats (studies, tests); the
 * forward pass does not need it. */
const ScWeights *sc_model_weights (const ScModel *model);

/* Rows [row0, row0 + n) of one matrix of the packed struct as floats into @dst (n * cols):
 * copied from @dense, its float field, when the float view exists (it is the weights then:
 * a caller may have written into it), else decoded from @src (sc_weight_src_dequant). For
 * readers that need a matrix, or a few rows of one, without the whole float view. */
ScStatus sc_model_matrix_rows (const ScWeightSrc *src, const float *dense, int64_t row0,
                               int64_t n, float *dst, ScError *err);

/* The same struct without decoding anything: the vectors and the src_ fields are set; the
 * float matrix fields are NULL unless sc_model_weights() has run (do not read them). */
const ScWeights *sc_model_weights_packed (const ScModel *model);
const ScTokenizer *sc_model_tokenizer (const ScModel *model);
const ScGguf *sc_model_gguf (const ScModel *model);

/* The attention window of @layer: sliding_window for a local layer, 0 (none) for a global
 * one or a layer out of range. Pure; any thread. */
uint32_t sc_model_layer_window (const ScModelInfo *info, int layer);

/* Parameter count as stored in the file (every tensor's elements, tied output counted once). */
uint64_t sc_model_n_params (const ScModel *model);

/* KV-cache bytes per token at @bytes_per_elem (2 for fp16): 2 (K and V) x n_layers x
 * n_kv_heads x head_dim x bytes. */
uint64_t sc_model_kv_bytes_per_token (const ScModel *model, unsigned bytes_per_elem);

#ifdef __cplusplus
}
#endif
