/* sc-backend.h — compute backends, as their users see them: create one, ask what it is and
 * what it can do, free it.
 *
 * A backend runs the ops the forward pass needs over buffers that live wherever it
 * computes. Backends:
 *   - "cpu":     OpenBLAS sgemm for the projections, the engine's own thread pool
 *                (core/sc-pool.h) for the rest (sc-backend-cpu.c); the default;
 *   - "cpu-ref": plain scalar loops accumulating in double, the ground truth that
 *                tests/engine/test-backend-ops.c holds every faster path to
 *                (sc-backend-ref.c);
 *   - "cuda":    cuda/ (optional; it implements sc-backend-impl.h, the engine never
 *                includes it).
 *
 * This header is for users (app/, the forward pass's callers). The ops themselves, and the
 * struct behind the handle, are the implementers' contract in sc-backend-impl.h, which the
 * forward pass, the architectures and the backends include (ggml keeps ggml-backend.h and
 * ggml-backend-impl.h apart the same way).
 *
 * Capabilities: a backend says what it can do through flags instead of its name. Required
 * ops every backend has; each optional op, and each attention option beyond the causal
 * default, has a flag, and calling one a backend lacks fails with SC_ERR_UNSUPPORTED.
 *
 * Thread safety: a backend is used by one thread at a time (it may use many threads inside
 * an op). The queries below never change after creation and may be read from any thread.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sc-error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ScBackend ScBackend;

/* What a backend can do, beyond the required ops. */
typedef enum {
  /* Its buffers are host memory: the host may read what an op wrote without download(),
   * and an observer may hand the attention op its own memory (zero-copy capture). */
  SC_BACKEND_CAP_HOST_MEMORY = 1u << 0,
  /* (optional op) layer_norm: LayerNorm with weight and bias (GPT-2, BERT). */
  SC_BACKEND_CAP_LAYER_NORM = 1u << 1,
  /* (optional ops) gelu and geglu: GELU, tanh approximation (GPT-2, Gemma). */
  SC_BACKEND_CAP_GELU = 1u << 2,
  /* (optional op) add_bias: a bias row added to every row (GPT-2, BERT projections). */
  SC_BACKEND_CAP_ADD_BIAS = 1u << 3,
  /* (optional attention option) causal = false: every query sees every key (encoders). */
  SC_BACKEND_CAP_ATTN_NONCAUSAL = 1u << 4,
  /* (optional attention option) window > 0: sliding-window masking (Gemma 3 local layers). */
  SC_BACKEND_CAP_ATTN_WINDOW = 1u << 5,
  /* (optional ops) the backward ops: activation gradients for attributions
   * (forward/sc-backward.h). */
  SC_BACKEND_CAP_BACKWARD = 1u << 6,
  /* (optional ops) attention_capture and capture_wait: fused attention that hands captured
   * heads over as fp16 in the store's layout, in host memory (device backends; the forward
   * pass uses them for observers with observe_f16, forward/sc-forward.h). */
  SC_BACKEND_CAP_ATTN_CAPTURE = 1u << 7,
  /* (optional op) rope_neox: RoPE on split halves (GPT-NeoX, Gemma). */
  SC_BACKEND_CAP_ROPE_NEOX = 1u << 8,
  /* (optional op) scale: a vector times a constant (Gemma's embedding scale). */
  SC_BACKEND_CAP_SCALE = 1u << 9,
  /* (optional op) rope_freq: RoPE with a frequency factor per pair, forwards and backwards
   * (llama.cpp's rope_freqs: Llama 3's frequency scaling). */
  SC_BACKEND_CAP_ROPE_FREQ = 1u << 10,
  /* (optional attention option and op) ScAttnParams.softcap > 0, and softcap: y = cap *
   * tanh(x / cap) (Gemma 2's attention-logit and final-logit soft-capping). */
  SC_BACKEND_CAP_SOFTCAP = 1u << 11,
} ScBackendCap;

/* The CPU backends. @n_threads <= 0 means all cores. sc_backend_cpu_new() returns NULL and
 * fills @err when OpenBLAS cannot be loaded (sc-blas.h) or memory or threads run out; the
 * reference backend needs no library and returns NULL only when out of memory. Both have
 * every capability above. Free with sc_backend_free(). */
ScBackend *sc_backend_cpu_new (int n_threads, ScError *err);
ScBackend *sc_backend_cpu_ref_new (void);

/* The cpu backend decodes a matrix kept in its file's blocks inside each product, and
 * keeps it decoded from its second use on (a study's second forward, never a single
 * capture) while the kept matrices fit in @bytes: by default a quarter of the machine's
 * memory, at most 4 GiB. Kept or not, a product gives the same bits. Setting a budget
 * keeps what is kept already; 0 keeps nothing more. Other backends ignore both calls;
 * sc_backend_cpu_weight_cache_bytes() says how many bytes are kept now (0 on them). */
void sc_backend_cpu_set_weight_cache (ScBackend *b, size_t bytes);
size_t sc_backend_cpu_weight_cache_bytes (ScBackend *b);

/* Destroys any backend, and the weights it holds; NULL is a no-op. */
void sc_backend_free (ScBackend *backend);

/* Its short stable name ("cpu", "cpu-ref", "cuda"), stored with each run. Borrowed, valid
 * for the backend's lifetime; never NULL. */
const char *sc_backend_name (const ScBackend *backend);

/* For display: "CPU, 2 threads, OpenBLAS ...", a GPU's name. Borrowed; never NULL. */
const char *sc_backend_description (const ScBackend *backend);

/* Threads it computes with (1 for the reference backend; for a GPU, its host threads). */
int sc_backend_n_threads (const ScBackend *backend);

/* Its ScBackendCap flags, OR-ed. */
unsigned sc_backend_caps (const ScBackend *backend);

/* True when the backend has every flag in @caps. */
bool sc_backend_supports (const ScBackend *backend, unsigned caps);

#ifdef __cplusplus
}
#endif
