/* sc-backend-cpu-private.h — what the two CPU backends share (sc-backend-cpu.c defines it,
 * sc-backend-ref.c uses it): the state behind their handles, the ops that are the same for
 * both, and the masked softmax of one attention row.
 *
 * Shared ops are the memory-bound, simple ones (memory, get_rows, copies, rmsnorm, rope,
 * swiglu, add, add_bias): their only freedom is a reduction order that double accumulation
 * makes irrelevant at float precision, so one implementation serves as both the reference
 * and the fast path. Private to engine/backend/.
 */
#pragma once

#include "backend/sc-backend-impl.h"
#include "core/sc-pool.h"

#include <pthread.h>

typedef struct ScCpuWeight ScCpuWeight;

/* The CPU backends' state: the public part, and the pool that runs their loops (one
 * thread for the reference backend). */
typedef struct {
  ScBackend base;
  ScPool *pool;
  /* the fast backend's capture op (sc-backend-cpu-attn.c): the last call's fp16 heads,
   * head h at capture + capture_at[h] (SIZE_MAX: not captured) */
  uint16_t *capture;
  size_t capture_cap, *capture_at;
  int capture_n_heads;
  bool capture_packed;
  /* weight_src's matrices (sc-backend-cpu-weight.c): every handle it returned, and the
   * panel the products decode into (guarded by panel_lock; NULL until the first). */
  bool expand_weights;   /* cpu-ref: expand each matrix into floats once */
  pthread_mutex_t weights_lock; /* guards the list: sessions may be made on other threads */
  ScCpuWeight **weights; /* entries never move or die before destroy */
  size_t n_weights, cap_weights;
  float *panel;
  pthread_mutex_t panel_lock;
  /* the matrices kept decoded (sc-backend-cpu-weight.c): their bytes and the budget */
  pthread_mutex_t kept_lock;
  size_t kept_bytes, kept_budget;
} ScCpuBackend;

/* Allocates a CPU backend over @ops with @caps; NULL and @err filled when memory or
 * threads run out. The caller writes the description. */
ScCpuBackend *sc_cpu_backend_new (const ScBackendOps *ops, unsigned caps, int n_threads,
                                  ScError *err);

/* Rows [first, last) of task @t when @n rows are split into @n_tasks even chunks. */
void sc_cpu_chunk (int n, int n_tasks, int t, int *first, int *last);

/* How many pool tasks to split @n rows of @row_cost units into (1 = run inline). */
int sc_cpu_n_tasks_for (ScBackend *b, int n, double row_cost);

ScPool *sc_cpu_pool (ScBackend *b);

/* The shared ops (contracts in sc-backend-impl.h). */
void sc_cpu_destroy (ScBackend *b);
float *sc_cpu_alloc (ScBackend *b, size_t n, ScError *err);
void sc_cpu_free (ScBackend *b, float *buf);
ScStatus sc_cpu_copy_in (ScBackend *b, float *dst, const float *src, size_t n, ScError *err);
const float *sc_cpu_weight (ScBackend *b, const float *host, size_t n, ScError *err);
const float *sc_cpu_weight_src (ScBackend *b, const ScWeightSrc *src, ScError *err);

/* The products over weight_src's handles (sc-backend-cpu-weight.c). sc_cpu_weight_find()
 * returns the matrix behind @w when @w points into a handle weight_src returned (handle +
 * r * cols is its row r: *@row0 = r), else NULL; the ops below are matmul,
 * matmul_backward and get_rows over its rows from @row0 on (their contracts). */
ScCpuWeight *sc_cpu_weight_find (ScBackend *b, const float *w, int64_t *row0);
ScStatus sc_cpu_weight_matmul (ScBackend *b, ScCpuWeight *w, int64_t row0, float *y,
                               const float *x, int n, int in, int out, bool accumulate,
                               ScError *err);
ScStatus sc_cpu_weight_matmul_backward (ScBackend *b, ScCpuWeight *w, int64_t row0,
                                        float *dx, const float *dy, int n, int in, int out,
                                        bool accumulate, ScError *err);
ScStatus sc_cpu_weight_get_rows (ScBackend *b, ScCpuWeight *w, int64_t row0, float *dst,
                                 const int32_t *ids, int n, int dim, ScError *err);
/* Frees the handles, the kept matrices and the panel (destroy). */
void sc_cpu_weights_free (ScBackend *b);
/* The default budget of the kept matrices: a quarter of the machine's memory, at most
 * 4 GiB (sc_backend_cpu_set_weight_cache). */
size_t sc_cpu_weight_cache_default (void);
ScStatus sc_cpu_get_rows (ScBackend *b, float *dst, const float *table, const int32_t *ids,
                          int n, int dim, ScError *err);
ScStatus sc_cpu_rmsnorm (ScBackend *b, float *y, const float *x, const float *w, int n, int dim,
                         float eps, ScError *err);
ScStatus sc_cpu_rope (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot,
                      int pos0, float base, ScError *err);
ScStatus sc_cpu_rope_neox (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot,
                           int pos0, float base, ScError *err);
ScStatus sc_cpu_rope_freq (ScBackend *b, float *x, int n, int n_heads, int head_dim, int n_rot,
                           int pos0, float base, const float *freq_factors, bool neox,
                           bool inverse, ScError *err);
ScStatus sc_cpu_softcap (ScBackend *b, float *y, const float *x, float cap, size_t n,
                         ScError *err);
ScStatus sc_cpu_swiglu (ScBackend *b, float *y, const float *gu, int n, int f, ScError *err);
ScStatus sc_cpu_add (ScBackend *b, float *y, const float *x, size_t n, ScError *err);
ScStatus sc_cpu_scale (ScBackend *b, float *y, const float *x, float s, size_t n, ScError *err);
ScStatus sc_cpu_copy (ScBackend *b, float *dst, const float *src, size_t n, ScError *err);
ScStatus sc_cpu_copy_2d (ScBackend *b, float *dst, int ld_dst, const float *src, int ld_src,
                         int rows, int cols, ScError *err);
ScStatus sc_cpu_add_bias (ScBackend *b, float *y, const float *bias, int n, int dim,
                          ScError *err);

/* The shared backward ops (sc-backend-cpu-grad.c; rope's in sc-backend-cpu.c) and the fast
 * paths of the two that have a reference of their own in sc-backend-ref.c. */
ScStatus sc_cpu_rmsnorm_backward (ScBackend *b, float *dx, const float *dy, const float *x,
                                  const float *w, int n, int dim, float eps, bool accumulate,
                                  ScError *err);
ScStatus sc_cpu_rope_backward (ScBackend *b, float *dx, int n, int n_heads, int head_dim,
                               int n_rot, int pos0, float base, ScError *err);
ScStatus sc_cpu_swiglu_backward (ScBackend *b, float *dgu, const float *dy, const float *gu,
                                 int n, int f, ScError *err);
ScStatus sc_cpu_rope_neox_backward (ScBackend *b, float *dx, int n, int n_heads, int head_dim,
                                    int n_rot, int pos0, float base, ScError *err);
ScStatus sc_cpu_geglu_backward (ScBackend *b, float *dgu, const float *dy, const float *gu,
                                int n, int f, ScError *err);
ScStatus sc_cpu_get_rows_backward (ScBackend *b, float *dtable, const float *dy,
                                   const int32_t *ids, int n, int dim, ScError *err);
ScStatus sc_cpu_matmul_backward (ScBackend *b, float *dx, const float *dy, const float *w, int n,
                                 int in, int out, bool accumulate, ScError *err);
ScStatus sc_cpu_attention_backward (ScBackend *b, float *dq, float *dk, float *dv,
                                    float *dprobs, const float *dout, const float *q,
                                    const float *k, const float *v, const float *probs, int n,
                                    int n_heads, int n_kv, int d, const ScAttnParams *p,
                                    const uint8_t *detached, ScError *err);

/* Designated initialisers for the shared slots of a CPU ops table. */
#define SC_CPU_SHARED_OPS                                                                     \
  .destroy = sc_cpu_destroy, .alloc = sc_cpu_alloc, .free = sc_cpu_free,                      \
  .upload = sc_cpu_copy_in, .download = sc_cpu_copy_in, .weight = sc_cpu_weight,              \
  .weight_src = sc_cpu_weight_src,                                                            \
  .get_rows = sc_cpu_get_rows, .rmsnorm = sc_cpu_rmsnorm, .rope = sc_cpu_rope,                \
  .rope_neox = sc_cpu_rope_neox, .rope_freq = sc_cpu_rope_freq, .scale = sc_cpu_scale,       \
  .softcap = sc_cpu_softcap,                                                                  \
  .swiglu = sc_cpu_swiglu, .add = sc_cpu_add, .copy = sc_cpu_copy, .copy_2d = sc_cpu_copy_2d, \
  .add_bias = sc_cpu_add_bias, .rmsnorm_backward = sc_cpu_rmsnorm_backward,                 \
  .rope_backward = sc_cpu_rope_backward, .swiglu_backward = sc_cpu_swiglu_backward,           \
  .rope_neox_backward = sc_cpu_rope_neox_backward, .geglu_backward = sc_cpu_geglu_backward,   \
  .get_rows_backward = sc_cpu_get_rows_backward

/* Every capability: both CPU backends implement every optional op and option. */
#define SC_CPU_CAPS                                                                           \
  (SC_BACKEND_CAP_HOST_MEMORY | SC_BACKEND_CAP_LAYER_NORM | SC_BACKEND_CAP_GELU               \
   | SC_BACKEND_CAP_ADD_BIAS | SC_BACKEND_CAP_ATTN_NONCAUSAL | SC_BACKEND_CAP_ATTN_WINDOW        \
   | SC_BACKEND_CAP_BACKWARD | SC_BACKEND_CAP_ROPE_NEOX | SC_BACKEND_CAP_SCALE                  \
   | SC_BACKEND_CAP_ROPE_FREQ | SC_BACKEND_CAP_SOFTCAP)

/* The fast backend's attention op, and its capture op with capture_wait
 * (sc-backend-cpu-attn.c; contracts in sc-backend-impl.h). */
ScStatus sc_cpu_attention (ScBackend *b, float *out, float *probs, const float *q, const float *k,
                           const float *v, int n_q, int n_k, int n_heads, int n_kv, int d,
                           const ScAttnParams *p, ScError *err);
ScStatus sc_cpu_attention_capture (ScBackend *b, float *out, const float *q, const float *k,
                                   const float *v, int n_q, int n_k, int n_heads, int n_kv,
                                   int d, const ScAttnParams *p, const uint8_t *want, int slot,
                                   ScError *err);
ScStatus sc_cpu_capture_wait (ScBackend *b, int slot, const uint16_t **heads, bool *packed,
                              ScError *err);

/* The masking rules shared by every attention implementation (forward and backward): does
 * every key of the visible range [lo, hi] have @key_mask set (the row then attends to its
 * own position alone)? And may the query at position p see key j? */
static inline bool
sc_cpu_row_all_masked (int lo, int hi, const uint8_t *key_mask)
{
  int j;

  if (key_mask == NULL)
    return false;
  for (j = lo; j <= hi; j++)
    if (key_mask[j] == 0)
      return false;
  return true;
}

static inline bool
sc_cpu_key_allowed (int p, int j, int lo, int hi, const uint8_t *key_mask, bool row_all_masked)
{
  if (j < lo || j > hi)
    return false;
  if (row_all_masked)
    return j == p;
  return key_mask == NULL || key_mask[j] == 0;
}

/* Softmax over the visible entries of one score row of n_k keys, in place, for the query
 * at position @p whose visible range is [lo, hi] (sc_attn_key_range) less @key_mask;
 * every other entry becomes exactly 0. A row whose visible keys are all masked attends to
 * itself alone. The max and the exponentials in float, the sum in double; @fast_exp picks
 * sc_expf (the fast path's) over libm's expf (the reference's). */
/* out[i] = sc_expf (x[i]) for @n floats, the attention kernel's vector form (the same bits;
 * test-attention holds it to sc_expf). */
void sc_cpu_expf_lanes (const float *x, float *out, size_t n);

void sc_cpu_softmax_row (float *row, int p, int n_k, int lo, int hi, const uint8_t *key_mask,
                         bool fast_exp);
