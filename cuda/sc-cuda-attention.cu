/* sc-cuda-attention.cu — attention on the GPU: a fused flash kernel when nothing is
 * captured, and the two-pass capture path that writes the exact normalised probabilities.
 *
 * One kernel template, three modes, over the algorithm of core/sc-math.h ("Flash
 * attention"), which tests/engine/test-flash-tile.c runs on the CPU against cpu-ref:
 *   - FLASH: online softmax over key tiles; out = acc / sum * head_scale. No probabilities
 *     exist anywhere;
 *   - STATS (capture pass 1): the same tiles without V; writes each row's log-sum-exp;
 *   - PROBS (capture pass 2): rescores every key the row sees, p = exp(s - lse), writes p
 *     (fp32 full rows for the attention op, or fp16 in the store's layout for
 *     attention_capture) and accumulates out = head_scale * sum p v from those same p.
 * A block is SC_FLASH_BR query rows of one head (grid.y indexes a list of heads, so a
 * launch covers just the captured heads or just the others); its SC_FLASH_WARPS warps own
 * SC_FLASH_BR / SC_FLASH_WARPS rows each. Every K/V tile of SC_FLASH_BC keys is loaded into
 * shared memory once per block (K rows padded to d + 1 floats so that the 32 lanes, each
 * reading its own key, hit distinct banks). Lane t scores keys t and t + 32 and owns the
 * output dims t + 32 u. A row skips the tiles outside its visible range [lo, hi]: folding a
 * tile with no visible key changes nothing (alpha = 1, weights 0), so skipping is exact.
 *
 * The capture pipeline: the probabilities of a layer's captured heads go to a device fp16
 * area of slot l % 2; an event after pass 2 lets the copy stream move them to the slot's
 * pinned host area while the compute stream goes on with the next layer; capture_wait()
 * waits for that event, so the host only reads finished bytes, already fp16 and packed,
 * and the store copies them (engine/store). Before a slot's device area is rewritten, the
 * compute stream waits for its previous transfer.
 *
 * Limits: head_dim <= SC_FLASH_MAX_D (256), n_heads <= SC_CUDA_MAX_HEADS; SC_ERR_UNSUPPORTED
 * beyond. Performance is not yet tuned: the scores and P.V are fp32 FMA (SIMT), not tensor
 * core MMA; docs/cuda.md says what that costs and what the next step is.
 */
#include "sc-cuda-private.h"

#include <stdlib.h>
#include <string.h>

#include "core/sc-math.h"

enum { MODE_FLASH, MODE_STATS, MODE_PROBS };

#define FULL_MASK 0xffffffffu
#define ROWS_PER_WARP (SC_FLASH_BR / SC_FLASH_WARPS)
/* The shared memory a block may use without opting in (every CUDA GPU). */
#define SC_CUDA_DEFAULT_SMEM (48 * 1024)

typedef struct {
  const float *q, *k, *v;
  float *out;
  int n_q, n_k, n_heads, n_kv, d, group, first;
  float scale;
  bool causal;
  int window;
  const uint8_t *mask;  /* device (n_k) or NULL */
  const int *mcount;    /* device (n_k + 1): masked keys before j; NULL without a mask */
  const float *hs;      /* device (n_heads) or NULL */
  const int *heads;     /* device: the heads of this launch, indexed by blockIdx.y */
  float *lse;           /* device (launch heads, n_q): pass 1 writes, pass 2 reads */
  float *p32;           /* PROBS: (n_heads, n_q, n_k) fp32, or NULL */
  uint16_t *p16;        /* PROBS: per launch head, per16 fp16 values, or NULL */
  size_t per16;
  bool packed;          /* p16 in the causal triangle layout */
} AttnArgs;

/* The warp's maximum (order does not matter for a max). */
__device__ static float
warp_max (float v)
{
  for (int off = SC_FLASH_LANES / 2; off >= 1; off /= 2)
    v = fmaxf (v, __shfl_xor_sync (FULL_MASK, v, off));
  return v;
}

/* The warp's sum in sc_flash_lane_sum's order: for offset 16 .. 1, v[t] + v[t ^ offset]. */
__device__ static float
warp_sum (float v)
{
  for (int off = SC_FLASH_LANES / 2; off >= 1; off /= 2)
    v = v + __shfl_xor_sync (FULL_MASK, v, off);
  return v;
}

template <int DPL, int MODE>
__global__ static void
attn_kernel (const AttnArgs a)
{
  extern __shared__ float sm[];
  const int d = a.d, lane = threadIdx.x % SC_FLASH_LANES, warp = threadIdx.x / SC_FLASH_LANES;
  const int hw = blockIdx.y, h = a.heads[hw], g = h / a.group;
  const int i0 = blockIdx.x * SC_FLASH_BR;
  const int i_last = min (i0 + SC_FLASH_BR, a.n_q) - 1;
  const size_t qs = (size_t) a.n_heads * d, kvs = (size_t) a.n_kv * d;
  float *Qs = sm, *Ks = Qs + SC_FLASH_BR * d, *Vs = Ks + SC_FLASH_BC * (d + 1);
  const float hs = a.hs != NULL ? a.hs[h] : 1.0f;
  ScSoftmaxState st[ROWS_PER_WARP];
  float acc[ROWS_PER_WARP][DPL], row_lse[ROWS_PER_WARP];
  int rp[ROWS_PER_WARP], rlo[ROWS_PER_WARP], rhi[ROWS_PER_WARP];
  bool ram[ROWS_PER_WARP];
  int lo0, hi0, lo1, hi1, t0, t1;

  for (int t = threadIdx.x; t < SC_FLASH_BR * d; t += blockDim.x)
    {
      const int i = i0 + t / d;
      Qs[t] = i < a.n_q ? a.q[(size_t) i * qs + (size_t) h * d + t % d] : 0.0f;
    }
  /* lo and hi never decrease with the position: the block's tiles run from its first
   * row's lo to its last row's hi */
  sc_attn_key_range (a.first + i0, a.n_k, a.causal, a.window, &lo0, &hi0);
  sc_attn_key_range (a.first + i_last, a.n_k, a.causal, a.window, &lo1, &hi1);
  t0 = lo0 / SC_FLASH_BC;
  t1 = hi1 / SC_FLASH_BC + 1;

  #pragma unroll
  for (int r = 0; r < ROWS_PER_WARP; r++)
    {
      const int i = i0 + warp * ROWS_PER_WARP + r;
      rp[r] = a.first + i;
      sc_attn_key_range (rp[r], a.n_k, a.causal, a.window, &rlo[r], &rhi[r]);
      ram[r] = i < a.n_q && a.mcount != NULL
               && a.mcount[rhi[r] + 1] - a.mcount[rlo[r]] == rhi[r] - rlo[r] + 1;
      st[r] = sc_softmax_state_init ();
      row_lse[r] = MODE == MODE_PROBS && i < a.n_q ? a.lse[(size_t) hw * a.n_q + i] : 0.0f;
      #pragma unroll
      for (int u = 0; u < DPL; u++)
        acc[r][u] = 0.0f;
    }

  for (int tile = t0; tile < t1; tile++)
    {
      __syncthreads (); /* the previous tile is no longer read */
      for (int t = threadIdx.x; t < SC_FLASH_BC * d; t += blockDim.x)
        {
          const int jj = t / d, c = t % d, j = tile * SC_FLASH_BC + jj;
          const size_t at = (size_t) j * kvs + (size_t) g * d + c;
          Ks[jj * (d + 1) + c] = j < a.n_k ? a.k[at] : 0.0f;
          if (MODE != MODE_STATS)
            Vs[jj * d + c] = j < a.n_k ? a.v[at] : 0.0f;
        }
      __syncthreads ();
      #pragma unroll
      for (int r = 0; r < ROWS_PER_WARP; r++)
        {
          const int rl = warp * ROWS_PER_WARP + r, i = i0 + rl;
          float s[2], w[2];

          if (i >= a.n_q || tile * SC_FLASH_BC > rhi[r] || (tile + 1) * SC_FLASH_BC - 1 < rlo[r])
            continue; /* warp-uniform */
          #pragma unroll
          for (int u = 0; u < 2; u++)
            {
              const int jj = lane + SC_FLASH_LANES * u, j = tile * SC_FLASH_BC + jj;
              s[u] = -INFINITY;
              if (j < a.n_k && sc_attn_key_visible (rp[r], j, rlo[r], rhi[r], a.mask, ram[r]))
                s[u] = sc_flash_dot (Qs + rl * d, Ks + jj * (d + 1), d) * a.scale;
            }
          if (MODE == MODE_PROBS)
            {
              const int jmax = a.packed ? i : a.n_k - 1;
              #pragma unroll
              for (int u = 0; u < 2; u++)
                {
                  const int j = tile * SC_FLASH_BC + lane + SC_FLASH_LANES * u;
                  w[u] = sc_flash_prob (s[u], row_lse[r]);
                  if (a.p32 != NULL && j < a.n_k)
                    a.p32[((size_t) h * a.n_q + i) * a.n_k + j] = w[u];
                  if (a.p16 != NULL && j <= jmax)
                    a.p16[(size_t) hw * a.per16 + sc_attn_packed_index (i, j, a.n_k, a.packed)]
                        = sc_fp32_to_fp16 (w[u]);
                }
            }
          else
            {
              float alpha;
              st[r] = sc_flash_tile_open (st[r], warp_max (fmaxf (s[0], s[1])), &alpha);
              w[0] = sc_flash_weight (s[0], st[r].max);
              w[1] = sc_flash_weight (s[1], st[r].max);
              st[r].sum += warp_sum (w[0] + w[1]);
              #pragma unroll
              for (int u = 0; u < DPL; u++)
                acc[r][u] *= alpha;
            }
          if (MODE != MODE_STATS)
            #pragma unroll 8
            for (int jj = 0; jj < SC_FLASH_BC; jj++)
              {
                const float wj = __shfl_sync (FULL_MASK, jj < SC_FLASH_LANES ? w[0] : w[1],
                                              jj % SC_FLASH_LANES);
                #pragma unroll
                for (int u = 0; u < DPL; u++)
                  {
                    const int c = lane + SC_FLASH_LANES * u;
                    if (c < d)
                      acc[r][u] = fmaf (wj, Vs[jj * d + c], acc[r][u]);
                  }
              }
        }
    }

  #pragma unroll
  for (int r = 0; r < ROWS_PER_WARP; r++)
    {
      const int i = i0 + warp * ROWS_PER_WARP + r;
      if (i >= a.n_q)
        continue;
      if (MODE == MODE_STATS)
        {
          if (lane == 0)
            a.lse[(size_t) hw * a.n_q + i] = sc_flash_lse (st[r]);
        }
      else
        #pragma unroll
        for (int u = 0; u < DPL; u++)
          {
            const int c = lane + SC_FLASH_LANES * u;
            if (c < d)
              a.out[(size_t) i * qs + (size_t) h * d + c]
                  = MODE == MODE_FLASH ? acc[r][u] / st[r].sum * hs : acc[r][u] * hs;
          }
    }
}

/* Launches mode MODE over @n_launch heads (a.heads), with the kernel instance for d. */
template <int DPL, int MODE>
static ScStatus
launch_dpl (ScCudaBackend *cb, const AttnArgs &a, int n_launch, ScError *err)
{
  const char *OP = "attention";
  const size_t smem = sizeof (float)
                      * ((size_t) SC_FLASH_BR * a.d + (size_t) SC_FLASH_BC * (a.d + 1)
                         + (MODE != MODE_STATS ? (size_t) SC_FLASH_BC * a.d : 0));
  const dim3 grid ((unsigned) ((a.n_q + SC_FLASH_BR - 1) / SC_FLASH_BR), (unsigned) n_launch);

  if (smem > SC_CUDA_DEFAULT_SMEM)
    SC_CUDA_TRY (cudaFuncSetAttribute (attn_kernel<DPL, MODE>,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, (int) smem));
  attn_kernel<DPL, MODE><<<grid, SC_FLASH_WARPS * SC_FLASH_LANES, smem, cb->stream>>> (a);
  SC_CUDA_LAUNCHED ();
  return SC_OK;
}

template <int MODE>
static ScStatus
launch (ScCudaBackend *cb, const AttnArgs &a, int n_launch, ScError *err)
{
  if (n_launch == 0)
    return SC_OK;
  if (a.d <= 32)
    return launch_dpl<1, MODE> (cb, a, n_launch, err);
  if (a.d <= 64)
    return launch_dpl<2, MODE> (cb, a, n_launch, err);
  if (a.d <= 128)
    return launch_dpl<4, MODE> (cb, a, n_launch, err);
  return launch_dpl<8, MODE> (cb, a, n_launch, err);
}

/* Fills @a from the op's arguments and uploads what the kernels need from the host: the
 * head list (@order, n_heads ints), the head scales, the key mask and its prefix count,
 * in one copy into cb->attn_args — skipped when the bytes are those of the last call. */
static ScStatus
prepare (ScCudaBackend *cb, AttnArgs *a, float *out, const float *q, const float *k,
         const float *v, int n_q, int n_k, int n_heads, int n_kv, int d, const ScAttnParams *p,
         const int *order, ScError *err)
{
  const char *OP = "attention";
  const size_t heads_b = (size_t) n_heads * sizeof (int), hs_b = (size_t) n_heads * sizeof (float);
  const size_t mcount_b = p->key_mask != NULL ? (size_t) (n_k + 1) * sizeof (int) : 0;
  const size_t mask_b = p->key_mask != NULL ? (size_t) n_k : 0;
  const size_t total = heads_b + hs_b + mcount_b + mask_b;
  unsigned char *host, *dev;
  ScStatus st;

  if (d > SC_FLASH_MAX_D || n_heads > SC_CUDA_MAX_HEADS)
    return sc_error_set (err, SC_ERR_UNSUPPORTED, "cuda: attention: head_dim %d / %d heads is "
                         "past the kernels' %d / %d", d, n_heads, SC_FLASH_MAX_D,
                         SC_CUDA_MAX_HEADS);
  if ((st = sc_cuda_scratch (&cb->lse, (size_t) n_heads * n_q * sizeof (float), OP, err))
      != SC_OK)
    return st;
  host = (unsigned char *) malloc (total);
  if (host == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "cuda: attention: out of host memory");
  memcpy (host, order, heads_b);
  for (int h = 0; h < n_heads; h++)
    ((float *) (host + heads_b))[h] = p->head_scale != NULL ? p->head_scale[h] : 1.0f;
  if (p->key_mask != NULL)
    {
      int *mc = (int *) (host + heads_b + hs_b);
      mc[0] = 0;
      for (int j = 0; j < n_k; j++)
        mc[j + 1] = mc[j] + (p->key_mask[j] != 0);
      memcpy (host + heads_b + hs_b + mcount_b, p->key_mask, mask_b);
    }
  if (total == cb->attn_args_len && memcmp (host, cb->attn_args_host, total) == 0)
    free (host);
  else
    {
      cudaError_t e;

      free (cb->attn_args_host);
      cb->attn_args_host = NULL;
      cb->attn_args_len = 0;
      if ((st = sc_cuda_scratch (&cb->attn_args, total, OP, err)) != SC_OK)
        {
          free (host);
          return st;
        }
      /* pageable source: cudaMemcpyAsync returns once it is staged (after waiting for the
       * stream), so @host may be kept or freed */
      e = cudaMemcpyAsync (cb->attn_args.ptr, host, total, cudaMemcpyHostToDevice, cb->stream);
      if (e != cudaSuccess)
        {
          free (host);
          return sc_cuda_error (err, OP, "cudaMemcpyAsync (attention arguments)", e);
        }
      cb->attn_args_host = host;
      cb->attn_args_len = total;
    }
  dev = (unsigned char *) cb->attn_args.ptr;
  *a = AttnArgs {};
  a->q = q;
  a->k = k;
  a->v = v;
  a->out = out;
  a->n_q = n_q;
  a->n_k = n_k;
  a->n_heads = n_heads;
  a->n_kv = n_kv;
  a->d = d;
  a->group = n_heads / n_kv;
  a->first = n_k - n_q;
  a->scale = p->scale;
  a->causal = p->causal;
  a->window = p->window;
  a->heads = (const int *) dev;
  a->hs = (const float *) (dev + heads_b);
  a->mcount = p->key_mask != NULL ? (const int *) (dev + heads_b + hs_b) : NULL;
  a->mask = p->key_mask != NULL ? dev + heads_b + hs_b + mcount_b : NULL;
  a->lse = (float *) cb->lse.ptr;
  return SC_OK;
}

ScStatus
sc_cuda_attention (ScBackend *b, float *out, float *probs, const float *q, const float *k,
                   const float *v, int n_q, int n_k, int n_heads, int n_kv, int d,
                   const ScAttnParams *p, ScError *err)
{
  const char *OP = "attention";
  ScCudaBackend *cb = sc_cuda (b);
  int order[SC_CUDA_MAX_HEADS] = { 0 };
  AttnArgs a;
  ScStatus st;

  for (int h = 0; h < n_heads && h < SC_CUDA_MAX_HEADS; h++)
    order[h] = h;
  if ((st = prepare (cb, &a, out, q, k, v, n_q, n_k, n_heads, n_kv, d, p, order, err)) != SC_OK)
    return st;
  /* every entry a row does not see is exactly 0: clear, then pass 2 writes the seen tiles */
  SC_CUDA_TRY (cudaMemsetAsync (probs, 0, (size_t) n_heads * n_q * n_k * sizeof (float),
                                cb->stream));
  a.p32 = probs;
  if ((st = launch<MODE_STATS> (cb, a, n_heads, err)) != SC_OK)
    return st;
  return launch<MODE_PROBS> (cb, a, n_heads, err);
}

/* Makes slot @s hold @bytes on the device and in pinned host memory. */
static ScStatus
slot_reserve (ScCudaSlot *s, size_t bytes, ScError *err)
{
  const char *OP = "attention_capture";
  ScStatus st;

  if ((st = sc_cuda_scratch (&s->dev, bytes, OP, err)) != SC_OK)
    return st;
  if (s->host_bytes < bytes)
    {
      /* the host may still be receiving the previous transfer */
      SC_CUDA_TRY (cudaEventSynchronize (s->copied));
      if (s->host != NULL)
        SC_CUDA_TRY (cudaFreeHost (s->host));
      s->host = NULL;
      s->host_bytes = 0;
      SC_CUDA_TRY (cudaMallocHost (&s->host, bytes));
      s->host_bytes = bytes;
    }
  return SC_OK;
}

ScStatus
sc_cuda_attention_capture (ScBackend *b, float *out, const float *q, const float *k,
                           const float *v, int n_q, int n_k, int n_heads, int n_kv, int d,
                           const ScAttnParams *p, const uint8_t *want, int slot, ScError *err)
{
  const char *OP = "attention_capture";
  ScCudaBackend *cb = sc_cuda (b);
  ScCudaSlot *s = &cb->slots[slot];
  const bool packed = p->causal && n_q == n_k;
  const size_t per16 = sc_attn_packed_size (n_q, n_k, packed);
  int order[SC_CUDA_MAX_HEADS] = { 0 }, n_want = 0, n_rest = 0;
  AttnArgs a;
  ScStatus st;

  /* captured heads first, then the others: one list, two launches */
  for (int h = 0; h < n_heads && h < SC_CUDA_MAX_HEADS; h++)
    if (want != NULL && want[h])
      order[n_want++] = h;
  for (int h = 0; h < n_heads && h < SC_CUDA_MAX_HEADS; h++)
    if (want == NULL || !want[h])
      order[n_want + n_rest++] = h;
  if ((st = prepare (cb, &a, out, q, k, v, n_q, n_k, n_heads, n_kv, d, p, order, err)) != SC_OK)
    return st;

  s->n_heads = n_heads;
  s->per_head = per16;
  s->packed = packed;
  for (int h = 0; h < n_heads; h++)
    s->head_at[h] = -1;
  if (n_want > 0)
    {
      const size_t bytes = (size_t) n_want * per16 * sizeof (uint16_t);
      if ((st = slot_reserve (s, bytes, err)) != SC_OK)
        return st;
      /* the device area is rewritten only after its previous transfer */
      SC_CUDA_TRY (cudaStreamWaitEvent (cb->stream, s->copied, 0));
      /* rows skip tiles they do not see; entries there are stored only with a window or
       * a cache (keys after the query in a full layout): clear them first */
      if (p->window > 0 || (!packed && p->causal))
        SC_CUDA_TRY (cudaMemsetAsync (s->dev.ptr, 0, bytes, cb->stream));
      a.p16 = (uint16_t *) s->dev.ptr;
      a.per16 = per16;
      a.packed = packed;
      if ((st = launch<MODE_STATS> (cb, a, n_want, err)) != SC_OK
          || (st = launch<MODE_PROBS> (cb, a, n_want, err)) != SC_OK)
        return st;
      for (int w = 0; w < n_want; w++)
        s->head_at[order[w]] = w;
      SC_CUDA_TRY (cudaEventRecord (cb->computed, cb->stream));
      SC_CUDA_TRY (cudaStreamWaitEvent (cb->copy_stream, cb->computed, 0));
      SC_CUDA_TRY (cudaMemcpyAsync (s->host, s->dev.ptr, bytes, cudaMemcpyDeviceToHost,
                                    cb->copy_stream));
      SC_CUDA_TRY (cudaEventRecord (s->copied, cb->copy_stream));
    }
  if (n_rest > 0)
    {
      AttnArgs f = a;
      f.heads = a.heads + n_want;
      f.p16 = NULL;
      if ((st = launch<MODE_FLASH> (cb, f, n_rest, err)) != SC_OK)
        return st;
    }
  return SC_OK;
}

ScStatus
sc_cuda_capture_wait (ScBackend *b, int slot, const uint16_t **heads, bool *packed,
                      ScError *err)
{
  const char *OP = "capture_wait";
  ScCudaSlot *s = &sc_cuda (b)->slots[slot];

  /* also where a kernel's failure surfaces (cudaErrorIllegalAddress, ...) */
  SC_CUDA_TRY (cudaEventSynchronize (s->copied));
  *packed = s->packed;
  for (int h = 0; h < s->n_heads; h++)
    heads[h] = s->head_at[h] >= 0
                   ? (const uint16_t *) s->host + (size_t) s->head_at[h] * s->per_head
                   : NULL;
  return SC_OK;
}

void
sc_cuda_slots_free (ScCudaBackend *cb)
{
  for (int s = 0; s < SC_BACKEND_CAPTURE_SLOTS; s++)
    {
      ScCudaSlot *sl = &cb->slots[s];
      cudaFree (sl->dev.ptr);
      if (sl->host != NULL)
        cudaFreeHost (sl->host);
      if (sl->copied != NULL)
        cudaEventDestroy (sl->copied);
    }
}
