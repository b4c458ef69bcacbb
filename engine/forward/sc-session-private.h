/* sc-session-private.h — the session's insides, for the files that run layers:
 * sc-forward.c (the forward pass), sc-backward.c (the backward pass, which runs the
 * forward with a tape and reads what it kept) and sc-neuron.c (one layer's queries and
 * keys, from a taped run that stops there). Nothing else includes it.
 */
#pragma once

#include "forward/sc-forward.h"
#include "model/sc-arch.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ScSession {
  const ScModel *model;
  ScBackend *b;
  const ScArchDesc *arch;
  void *layers; /* (L) views of arch->layer_size bytes: each layer's weights on b */
  const float *token_embd, *output_norm, *output;
  const float *output_norm_b; /* (E) LayerNorm's bias (info.layer_norm), else NULL */
  const float *position_embd; /* (n_ctx_train, E) (info.learned_positions), else NULL */

  int cap;       /* token capacity of the buffers below */
  float *x;      /* (cap, E) residual stream */
  float *h;      /* (cap, E) normalised input of a sublayer */
  float *qkv;    /* (cap, Q + 2 KV) fused projection output */
  float *q;      /* (cap, Q) */
  float *kc;     /* (L, cap, KV) keys of every layer: the KV cache when kept */
  float *vc;     /* (L, cap, KV) values */
  float *o;      /* (cap, Q) attention output */
  float *gu;     /* (cap, 2F) fused gate|up projection output */
  float *act;    /* (cap, F) silu(gate) * up */
  float *probs;  /* (H, cap, cap) on the backend; packed as (H, n_q, n_k) for a run */
  float *probs_host; /* host copy for device backends; == probs on host-memory ones */
  float *logits_dev; /* (logits_rows, V): only the rows calls have asked for (ensure_logits) */
  int logits_rows;
  float *o_host;     /* (cap, Q) host copy of o for the observer's attn_output on device
                      * backends; NULL until wanted */
  /* The fp16 capture path (SC_BACKEND_CAP_ATTN_CAPTURE): the heads a layer wants (H) and
   * where capture_wait puts their values (H); allocated with the session on such
   * backends, NULL elsewhere. */
  uint8_t *capture_want;
  const uint16_t **capture_heads;

  /* Prefix reuse: residual entering each layer 0..L (L = final), for kept_ids. */
  float *resid;      /* (L + 1, cap, E), NULL until first kept run */
  int32_t *kept_ids; /* (kept_n) */
  int kept_n;
  /* keep_final: the final residual alone (cap, E), for the kept logits; kept_final says the
   * kept run is there and not in resid (no prefix reuse then) */
  float *resid_final;
  bool kept_final;

  /* KV cache: kc/vc rows 0..kv_n hold the keys and values of kv_ids. */
  int32_t *kv_ids;
  int kv_n;
};

/* Where a taped forward (below) leaves what the backward pass needs, per layer l: layer l
 * writes its post-RoPE queries at q + l * q_stride (n, Q), its probabilities at
 * probs + l * probs_stride (H, n, n), its gate|up projection at gu + l * gu_stride (n, 2F)
 * the residual between its two blocks at x_mid + l * x_mid_stride (n, E) and the attention
 * output it multiplied by W_O at o + l * o_stride (n, Q; Gemma's post-norm needs it) — backend
 * memory; a stride of 0 makes every layer write the same slot (a backward that recomputes
 * one layer at a time). Keys and values stay in the session's per-layer cache (kc, vc), the
 * residual entering each layer in resid (keep_residuals). A NULL slot pointer leaves that
 * value where an untaped run leaves it (q, probs, gu, o: the session's own buffers, holding
 * the last layer run; x_mid: not kept) — a run that only wants stop_layer (sc-neuron.c). */
typedef struct {
  float *q, *probs, *gu, *x_mid, *o;
  size_t q_stride, probs_stride, gu_stride, x_mid_stride, o_stride;
  /* backend memory (n, E): the residual entering layer 0 instead of token_embd[ids]
   * (integrated gradients' scaled inputs); NULL = the lookup */
  const float *input_embd;
  /* run layers start_layer .. stop_layer - 1 only; stop_layer < n_layers skips the output
   * head (and @logits is not written); 0 = every layer */
  int stop_layer;
  /* the residuals kept were made by this same run (same ids, input and intervention): a
   * start_layer above the intervention's first layer is then a recomputation, not a
   * prefix reuse, and is allowed */
  bool recompute;
} ScForwardTape;

/* sc_forward() with @tape (NULL = sc_forward itself). The observer, when given, is handed
 * the tape's probabilities; zero-copy layer buffers are not used. */
ScStatus sc_forward_taped (ScSession *session, const int32_t *ids, int n_tokens,
                           const ScForwardOptions *options, const ScForwardTape *tape,
                           float *logits, ScError *err);

#ifdef __cplusplus
}
#endif
