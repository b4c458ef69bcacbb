/* sc-qk-study.h — QK attribution (docs/metrics.md, "QK attribution"): which upstream
 * components make one head attend from query i to key j — the pre-softmax score
 * q_i · k_j · scale written as a sum over (query-side component) × (key-side component).
 *
 * Definition. Head h of layer l (its KV group g = h / (n_heads / n_kv_heads)), positions
 * i >= j of one clean run (no intervention). The residual entering layer l at p is
 *     x_p = e_p + Σ_{l'<l} (Σ_{h'} a_{l',h',p} + m_{l',p})
 * with e_p the token embedding (x entering layer 0), a_{l',h',p} = W_O^{l'}[:, block h']
 * o_{l',h',p} head h''s write (o the head's attention output before W_O) and m_{l',p} =
 * x^{l'+1}_p − x^{l'}_p − Σ_{h'} a_{l',h',p} the rest of layer l''s update (its MLP, to
 * float rounding of the forward pass's adds), as sc-dla.h does. The attention norm's
 * 1/rms_p (rms_p = sqrt (mean x_p² + eps)) is frozen at the clean run's, so with g the
 * attn_norm weight each component c gives
 *     q_i^c = RoPE_i (W_Q^h (g ∘ c_i) / rms_i),   k_j^c = RoPE_j (W_K^g (g ∘ c_j) / rms_j)
 * (RoPE is linear: a rotation per position) and
 *     part[c][c'] = scale · q_i^c · k_j^{c'},    Σ_{c,c'} part[c][c'] = scale · q_i · k_j,
 * the score the softmax of row i sees at key j (scale the model's attention scale). The
 * components, on each side: "embed", every head (l', h') and every "mlp l'" of the layers
 * below l: C = 1 + l (n_heads + 1), in the order embed, L0.H0 .. L0.H(n−1), MLP0, L1.H0 ..
 * It is not what removing a component does (that changes the norm's scale and every layer
 * between): it is the bilinear split of the score with the scale held, as DLA is the
 * linear split of a logit.
 *
 * Gemma 3. Its post-attention norm makes a head's write depend on the whole layer's and its
 * QK-norm adds a norm per head; both scales are frozen at the clean run's too, so the split
 * stays exact: a_{l',h',p} = g_post ∘ (W_O^{l'}[:, block h'] o_{l',h',p}) / rms_post, rms_post
 * of the layer's whole W_O o at p (the MLP's rest then holds its post-FFN norm), and
 * q_i^c = RoPE_i (g_qn ∘ (W_Q^h (g ∘ c_i) / rms_i) / rms_qn_i), rms_qn_i of the whole
 * projection W_Q^h (g ∘ x_i) / rms_i, likewise k; RoPE on NeoX pairs with the layer's base
 * (rope_base_local on a local layer); e_p is the embedding as scaled (sqrt(n_embd)). On a
 * local layer the key must lie within the window (query − key < sliding_window). Qwen3 is
 * Gemma's QK-norm and NeoX RoPE on llama's body (no post-norms, no window, no embedding
 * scale).
 *
 * Qwen2 adds a constant to each side: its Q and K biases, after the projection and before
 * RoPE, so q_i = RoPE_i (W_Q^h (g ∘ x_i) / rms_i + b_Q^h); the bias is a component of its
 * own on each side, "bias", q_i^bias = RoPE_i (b_Q^h), k_j^bias = RoPE_j (b_K^g) (the same
 * rotation as the others: it is linear). GPT-2 has no RoPE and a LayerNorm with a bias
 * before attention, LN (x) = g ∘ (x − mean x) / σ + β, σ = sqrt (mean (x − mean x)² + eps),
 * then the fused projection's bias: q_i = W_Q^h LN (x_i) + b_Q^h. With σ frozen at the
 * clean run's the mean subtraction is linear, so each component c gives
 * q_i^c = W_Q^h (g ∘ (c_i − mean c_i)) / σ_i (the components' centred pieces sum to the
 * centred x_i), and the constants make "bias", q_i^bias = W_Q^h β + b_Q^h (likewise k); x
 * entering layer 0 is split into "embed", the token's row of token_embd, and "pos", the
 * rest — the learned position embedding's row (to the float rounding of the add). GPT-2's
 * attention output bias and MLP biases are constants of the residual, inside each layer's
 * "MLP" rest. These components follow the layers' (n_extra of them: qwen2 1, "bias";
 * gpt2 2, "pos" then "bias"), so C = 1 + l (n_heads + 1) + n_extra. Other architectures
 * fail with SC_ERR_UNSUPPORTED naming theirs.
 *
 * Storage (sc-store-study.h): kind SC_QK_STUDY_KIND, params {"study":V,"run":R,"layer":L,
 * "head":H,"query":I,"key":J} (resolved: no −1 in the text); series "part" at pos
 * a · C + b (query component a, key component b; C² <= SC_STORE_MAX_TOKENS), and "qk":
 * pos 0 the score as the forward pass computed it, 1 rms_i, 2 rms_j, 3 n, 4 the clean
 * top-1 at n − 1, 5 layer, 6 head, 7 query, 8 key. The loader checks every part is there
 * and finite and that the parts sum to the stored score (within 1e-3 relative, a bound
 * far above float rounding: an edited part fails it).
 *
 * Thread safety: one study per session at a time (the session's rule). Plain C, no GLib.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sc-error.h"
#include "forward/sc-forward.h"
#include "model/sc-model.h"
#include "store/sc-store-study.h"
#include "study/sc-study.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SC_QK_STUDY_KIND "qk-attribution"
/* Bumped whenever the definition above changes, so old stored studies are not reused. */
#define SC_QK_STUDY_VERSION 1

typedef struct {
  int layer; /* −1: the middle layer, n_layers / 2 */
  int head;  /* a query head */
  int query; /* i; −1: the last position */
  int key;   /* j <= i */
} ScQkParams;

typedef struct {
  int n_layers, n_heads, n_tokens;
  int layer, head, query, key;
  int n_comp;        /* C = 1 + layer (n_heads + 1) + n_extra */
  int n_extra;       /* components after the layers' (above): 0; qwen2 1, "bias"; gpt2 2,
                      * "pos" and "bias" */
  int top1_clean;    /* the clean run's top-1 at n − 1 */
  double score;      /* scale · q_i · k_j from the forward pass's own q and k (float) */
  double total;      /* Σ parts, in double */
  double rms_q, rms_k; /* the frozen norm scales at i and j, eps included */
  double *parts;     /* (C, C): parts[a * C + b], query component a, key component b */
} ScQkResult;

/* The params with −1 resolved for a run of @n_tokens on @info, checked: SC_ERR_INVALID_ARG
 * naming the value out of range (layer, head, a position outside the run, key > query). */
ScStatus sc_qk_params_resolve (const ScModelInfo *info, int n_tokens, const ScQkParams *p,
                               ScQkParams *out, ScError *err);

/* QK attribution of @ids on @session (bound to @model). The session's kept residuals are
 * replaced by this run's. Errors: those of sc_study_check_ids, sc_qk_params_resolve and
 * sc_forward, SC_ERR_INVALID_ARG (the key outside a local layer's window),
 * SC_ERR_UNSUPPORTED (none of llama, gemma3, qwen2, qwen3, gpt2), SC_ERR_NOMEM. */
ScStatus sc_qk_run (ScSession *session, const ScModel *model, const int32_t *ids,
                    int n_tokens, const ScQkParams *params, ScQkResult **out, ScError *err);

/* Component @c's name into @buf: "embed", "L3.H4", "MLP3", "pos", "bias"; the length, or −1 when @c is
 * outside the result's components or @buf too small (16 bytes suffice). */
int sc_qk_component_name (const ScQkResult *r, int c, char *buf, size_t size);

/* Whether the split above is written for @info's architecture (llama, gemma3, qwen2,
 * qwen3, gpt2): what sc_qk_run refuses otherwise, for a face to refuse before it runs. */
bool sc_qk_supports (const ScModelInfo *info);

/* The components after the layers' that @info's architecture has (by its arch_name, which
 * a stored run's model row keeps): gpt2 2, qwen2 1, others 0. */
int sc_qk_n_extra (const ScModelInfo *info);

/* An empty result (numbers NaN) with @n_extra (0..2) components after the layers'; NULL
 * when out of memory or a count is out of range. */
ScQkResult *sc_qk_result_new (int n_layers, int n_heads, int n_tokens, int layer, int n_extra);
void sc_qk_result_free (ScQkResult *r); /* NULL is a no-op */

/* The params text (resolved params) into @buf: its length, or −1 (@buf too small: 128
 * bytes suffice; a value below 0). */
int sc_qk_params_json (int64_t run_id, const ScQkParams *resolved, char *buf, size_t size);

ScStatus sc_qk_store (ScStore *store, const ScStoreModel *model, const char *params_json,
                      const ScQkResult *r, int64_t *study_id, ScError *err);
/* SC_ERR_NOT_FOUND when there is none; SC_ERR_FORMAT when it does not fit @info or
 * @params (resolved against its own n), a part is missing or not finite, or the parts do
 * not sum to the score. */
ScStatus sc_qk_load (ScStore *store, const ScModelInfo *info,
                     const uint8_t sha256[SC_SHA256_DIGEST_SIZE], const char *params_json,
                     const ScQkParams *params, ScQkResult **out, int64_t *study_id,
                     ScError *err);

extern const ScStudyKind sc_study_kind_qk;

#ifdef __cplusplus
}
#endif
