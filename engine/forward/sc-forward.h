/* sc-forward.h — the forward pass, written once over the backend interface.
 *
 * An ScSession binds a model to a backend and owns the activation buffers, so repeated
 * runs (an ablation sweep, generation) do not reallocate. sc_forward() takes token ids
 * and an optional ScIntervention, produces logits (the last position or all), and hands
 * every attention head's probability matrix to an observer as soon as its layer is done:
 *
 *   wants (user, layer, head)                        -> should observe() see this head?
 *   observe (user, layer, head, probs, n_q, n_k)     -> false cancels the run
 *
 * probs is (n_q, n_k) row-major host memory, borrowed for the duration of the call. The
 * queries are the last n_q positions (n_q == n_k unless n_past is used): row i sits at
 * position p = n_k - n_q + i, sums to 1 over keys 0..p and is exactly 0 beyond p (causal).
 * A head with an attention edit (ScAttnEdit) is observed as edited: the matrix the
 * observer sees is the one that multiplied V.
 *
 * Prefix reuse: with keep_residuals, the session keeps the residual stream entering every
 * layer. A later call on the same ids may set start_layer = L to recompute only layers
 * >= L (an intervention that touches nothing below L gives the same result as a full
 * run, bit for bit). sc_intervention_first_layer() says which L an intervention allows.
 *
 * Incremental decoding: with keep_kv the session keeps each layer's keys and values; a
 * later call whose first n_past ids are the same may pass n_past to compute only the new
 * rows (generation). The observer then sees (n - n_past, n) matrices, and all_logits
 * returns the new rows only. Cached keys carry the intervention of the call that made them.
 *
 * Thread safety: a session is used by one thread at a time; sessions over the same
 * model may run concurrently.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "backend/sc-backend.h"
#include "core/sc-error.h"
#include "forward/sc-intervention.h"
#include "model/sc-model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  bool (*wants) (void *user, int layer, int head); /* NULL = every head */
  bool (*observe) (void *user, int layer, int head, const float *probs, int n_query, int n_key);
  void *user;
  /* Optional, for zero-copy capture on host-memory backends (CPU): returns where layer
   * @layer's probabilities, (n_heads, n_query, n_key) floats, should be written, or NULL
   * for the session's own buffer. observe() then receives pointers into that block. */
  float *(*layer_buffer) (void *user, int layer, int n_query, int n_key);
  /* Optional (NULL = not wanted): layer @layer's attention output before W_O, (n_query,
   * width) row-major host floats with width = n_heads * head_dim, head h in columns
   * h*head_dim .. (h+1)*head_dim - 1 — exactly what multiplies W_O: after the head scales,
   * mean-ablation and attention edits of the intervention. Called once for each layer the
   * call computes (start_layer .. n_layers - 1), with the call's n_query new rows, after
   * the layer returns and after the layer's observe() calls; borrowed for the call (on a
   * device backend it is a host copy, downloaded only when this is set). Returning false
   * cancels (SC_ERR_CANCELLED). observe may be NULL when only this is wanted. */
  bool (*attn_output) (void *user, int layer, const float *o, int n_query, int width);
  /* Optional (NULL = not taken): the same heads as observe() (wants() chooses them) as
   * fp16 values in the store's layout (docs/store.md): @packed, the lower triangle (row i
   * at i(i+1)/2, keys 0..i; causal and n_query == n_key), else all (n_query, n_key)
   * row-major; host memory, borrowed for the call. On a backend with
   * SC_BACKEND_CAP_ATTN_CAPTURE (a GPU) the forward pass calls this instead of observe()
   * for every layer without attention edits in an untaped run, so no fp32 probabilities
   * are ever made or downloaded; layer l's call comes after layer l + 1 has been queued
   * (its copy overlaps the next layer), still in layer order and before sc_forward()
   * returns. Elsewhere (CPU backends, edited layers) observe() is called as before, so an
   * observer that sets this must set observe too. Returning false cancels. */
  bool (*observe_f16) (void *user, int layer, int head, const uint16_t *values, int n_query,
                       int n_key, bool packed);
  /* Optional (NULL = not wanted): layer @layer's queries and keys as they enter the
   * attention (after RoPE, and Gemma 3's QK-norm: the rows whose products are the scores)
   * and its values: @q (n_query, q_width) for the call's new rows, q_width = n_heads *
   * head_dim with query head h in columns h*head_dim ..; @k and @v (n_key, kv_width) for
   * every key of the call (cached rows included), kv_width = n_kv_heads * head_dim with
   * KV head g in columns g*head_dim .. (query head h reads KV head h / (n_heads /
   * n_kv_heads)). The layer's own vectors: an intervention's q/k/v patches
   * (sc-intervention.h) are applied inside the attention's edit and do not show here.
   * Called once per computed layer, after its observe() and attn_output() calls; host
   * memory borrowed for the call (copies downloaded on device backends). Returning false
   * cancels (SC_ERR_CANCELLED). */
  bool (*qkv) (void *user, int layer, const float *q, const float *k, const float *v,
               int n_query, int n_key, int q_width, int kv_width);
} ScObserver;

/* Called after each layer; returning false cancels (SC_ERR_CANCELLED). */
typedef bool (*ScProgressFn) (void *user, int layers_done, int n_layers);

/* Where a run's time went (sc_forward adds to it; the caller zeroes it). Clocks are read
 * only when the caller asks, and only around whole ops. */
typedef struct {
  double matmul_s;     /* projections and the vocabulary projection */
  double matmul_flops; /* 2 * n * in * out per projection */
  double attention_s;  /* scores, softmax, weighted values */
  double total_s;
} ScForwardStats;

typedef struct {
  const ScIntervention *intervention; /* NULL = none */
  const ScObserver *observer;         /* NULL = none */
  bool all_logits;                    /* logits for every position, else only the last */
  bool keep_residuals;                /* keep per-layer residuals for prefix reuse */
  bool keep_final;                    /* keep the final residual alone, for
                                       * sc_session_kept_logits (what a capture's
                                       * predictions need: (L + 1)x less memory than
                                       * keep_residuals, 0.6 GB at 8,192 tokens of
                                       * SmolLM2; no prefix reuse); ignored with
                                       * keep_residuals, which keeps it too */
  int start_layer;                    /* > 0: reuse residuals kept by the previous call */
  bool keep_kv;                       /* keep every layer's keys and values (KV cache) */
  int n_past;                         /* > 0: ids[0..n_past) were run by a previous call
                                       * with keep_kv; compute only ids[n_past..n) */
  ScProgressFn progress;
  void *progress_user;
  ScForwardStats *stats;              /* NULL = not measured */
  /* Only the last position's logits are wanted (all_logits false): the last layer computes
   * its queries, keys and values for every row but its attention, output projection and
   * feed-forward for the last row only (ScLayerCtx.n_tail), and the output head the last
   * row as always. Not bit-identical to the same call without it: those products on one
   * row are matrix-vector products (sgemv) where a run of n rows makes matrix products,
   * whose bits depend on the row count (docs/benchmarks.md, "Head sweep"); the logits
   * differ by a few ulp (tests/engine/test-ablation-last.c bounds them). For sweeps that
   * read the last position only (the head sweep's last_only). Refused (SC_ERR_INVALID_ARG)
   * with all_logits, keep_residuals, keep_kv, n_past, or an observer. */
  bool last_row;
} ScForwardOptions;

typedef struct ScSession ScSession;

/* Creates a session. @backend is borrowed and must outlive the session. */
ScStatus sc_session_new (const ScModel *model, ScBackend *backend, ScSession **out, ScError *err);
void sc_session_free (ScSession *session); /* NULL is a no-op */

/* Runs the model on @ids (n_tokens >= 1, each < n_vocab, n_tokens <= the model's training
 * context). @logits receives (n_tokens, n_vocab) floats with all_logits, else (n_vocab).
 * Errors: SC_ERR_INVALID_ARG (empty input, id out of range, start_layer without kept
 * residuals for the same ids or below sc_intervention_first_layer(), an intervention field
 * out of range for the model: the message names the field), SC_ERR_RANGE (longer than the
 * context), SC_ERR_UNSUPPORTED (the backend lacks an op the model needs),
 * SC_ERR_CANCELLED, SC_ERR_NOMEM. */
ScStatus sc_forward (ScSession *session, const int32_t *ids, int n_tokens,
                     const ScForwardOptions *options, float *logits, ScError *err);

/* The first layer whose computation @iv changes (0 when it masks tokens; else the lowest
 * layer with a head scale other than 1, a mean-ablated head, an edit or a patch; n_layers
 * when it changes nothing), i.e. the deepest start_layer a prefix-reusing run may use. */
int sc_intervention_first_layer (const ScIntervention *iv, const ScModelInfo *info);

/* Row @row of the residual stream entering layer @layer (0 .. n_layers; n_layers = the
 * final residual, before the output norm), as kept by the session's last run with
 * keep_residuals, into @out (n_embd floats, host memory). Rows are that run's positions
 * 0 .. n - 1. Runs without keep_residuals leave the kept residuals as they are, unless a
 * longer run grows the session's buffers (which drops them); a failed keep_residuals run
 * drops them too. Errors: SC_ERR_INVALID_ARG (NULL arguments, no residuals kept, layer or
 * row out of range; the message names it), the backend's download error. */
ScStatus sc_session_residual (const ScSession *session, int layer, int row, float *out,
                              ScError *err);

/* The output head (what sc_forward does after the last layer: rmsnorm, output_norm, the
 * vocabulary projection) on rows @row0 .. @row0 + @n_rows - 1 of the final residual kept
 * by the session's last run with keep_residuals (rows are that run's positions), into
 * @logits: (n_rows, n_vocab) row-major host floats. For consumers that want every
 * position's logits without holding them all at once (engine/forward/sc-predict.h walks
 * the rows in chunks). Uses the session's scratch buffers; the kept residuals and the KV
 * cache stay as they were. Errors: SC_ERR_INVALID_ARG (NULL arguments, no residuals
 * kept, rows outside the kept run; the message names them), the backend's error. */
ScStatus sc_session_kept_logits (ScSession *session, int row0, int n_rows, float *logits,
                                 ScError *err);

/* The output head on @n_rows residual-stream rows given by the caller (@x: (n_rows,
 * n_embd) host floats) into @logits ((n_rows, n_vocab) host floats): the final RMSNorm with
 * output_norm and the vocabulary projection, exactly as sc_forward applies them to the
 * final residual — so the last layer's row of a run gives that run's logits bit for bit.
 * The logit lens (nostalgebraist 2020) applies it to earlier layers' residuals. Uses the
 * session's scratch buffers (a run's kept residuals and KV cache stay as they were; rows
 * beyond the session's capacity are done in chunks). Errors: SC_ERR_INVALID_ARG (NULL
 * arguments, n_rows < 1, a non-finite value in @x), SC_ERR_NOMEM, the backend's error. */
ScStatus sc_session_unembed (ScSession *session, const float *x, int n_rows, float *logits,
                             ScError *err);

/* The post-RoPE queries and keys of layer @layer on @ids (1 <= n_tokens <= the model's
 * context), for a reader who wants to see a head's scores made: probability[h][i][j] =
 * softmax over j <= i of attn_scale * q[i, h] . k[j, h / (n_heads / n_kv_heads)] (no
 * intervention). Runs layers 0 .. @layer only (the output head, on the last row, only when
 * @layer is the last) from the token embeddings, adding no memory to the session's,
 * as sc_forward without keep_residuals: the kept residuals stay as such a run leaves them
 * (sc_session_residual), the KV cache is emptied (a later n_past call must start again).
 * @q receives (n_tokens, n_heads * head_dim) host floats, head h in columns h * head_dim ..
 * (h + 1) * head_dim - 1; @k (n_tokens, n_kv_heads * head_dim), likewise by KV head.
 * Errors: SC_ERR_INVALID_ARG (NULL arguments, no tokens, @layer outside 0 .. n_layers - 1,
 * a token id out of range; the message names it), SC_ERR_RANGE (longer than the context),
 * SC_ERR_NOMEM, the backend's error. Thread safety: as sc_forward (one thread a session). */
ScStatus sc_session_layer_qk (ScSession *session, const int32_t *ids, int n_tokens, int layer,
                              float *q, float *k, ScError *err);

/* Layer @layer alone on @ids (1 <= n_tokens) under @iv (NULL: none; it may change no layer
 * below @layer), started from the residual the session's last run with keep_residuals kept
 * entering it (layer 0: the embeddings), into @out: (n_tokens, n_embd) host floats, the
 * residual stream leaving the layer (what enters layer + 1, or the final residual). The
 * kept residuals stay; the KV cache is emptied. With @iv NULL it gives the kept residual
 * entering layer + 1 bit for bit. Value zeroing (study/sc-mixing-study.h) reruns a layer
 * this way once per key. Errors: SC_ERR_INVALID_ARG (NULL arguments, @layer outside 0 ..
 * n_layers - 1, no residuals kept for these ids, an intervention below @layer or out of
 * range), those of sc_forward. Thread safety: as sc_forward. */
ScStatus sc_session_layer_output (ScSession *session, const int32_t *ids, int n_tokens,
                                  int layer, const ScIntervention *iv, float *out,
                                  ScError *err);

/* The last position's logits of @n_var runs of @ids, run v with head @heads[v] of layer
 * @layer zeroed (a head scale of 0, as ScIntervention.head_scale), into @logits (n_var,
 * n_vocab): the head sweep's runs of one layer computed together (sc-variants.c). Each run
 * starts from the residual entering @layer kept by the session's last keep_residuals run
 * on the same ids; the runs are stacked, so each product of layers @layer .. L - 1 is one
 * for all of them, and each run's attention is its own. Within a bound of the same runs
 * made one at a time (a product's bits depend on its row count), not bit for bit: the
 * bound is measured in docs/benchmarks.md and tested by test-ablation-last. Uses the
 * session's attention buffer; the kept residuals stay, the KV cache is not touched.
 * Errors: SC_ERR_UNSUPPORTED (an architecture whose layer does not stack sequences, or a
 * backend without host memory: make the runs one at a time), SC_ERR_INVALID_ARG (NULL
 * arguments, @layer or a head out of range, no residuals kept for these ids),
 * SC_ERR_NOMEM, the backend's error. Runs that would take more than 256 MiB of activations
 * together go in groups. Thread safety: as sc_forward. */
ScStatus sc_forward_zero_heads (ScSession *session, const int32_t *ids, int n_tokens,
                                int layer, const int *heads, int n_var, float *logits,
                                ScError *err);

/* The backend a session runs on. */
ScBackend *sc_session_backend (const ScSession *session);
/* The model a session runs (borrowed). */
const ScModel *sc_session_model (const ScSession *session);

#ifdef __cplusplus
}
#endif
