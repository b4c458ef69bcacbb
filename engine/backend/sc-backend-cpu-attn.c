/* sc-backend-cpu-attn.c — the fast CPU backend's attention: the attention op, and the
 * capture op that hands the probabilities over as fp16 without ever holding a layer's
 * (H, n, n) float probabilities (contracts in sc-backend-impl.h).
 *
 * One kernel serves both. A task is one head's block of query rows (heads split into row
 * chunks of equal work, so nine heads keep every thread busy); it walks its rows eight at a
 * time:
 *   1. scores: with K_g^T (d, n_k) transposed once per call, the block's rows times
 *      contiguous keys are vector accumulators held in registers over the d products (8
 *      rows x 32 keys on AVX-512, 4 x 16 on AVX2), for the keys the block may see, [klo,
 *      khi] (the union of its rows' visible ranges);
 *   2. masked softmax of each row over its own visible range (softmax_row_fast);
 *   3. the capture op only: the row, converted to fp16, into the head's place in the
 *      backend's capture area (the store's layout: the lower triangle, or full rows);
 *   4. o = head_scale * P V: four rows times 64 output dimensions in registers (16 on
 *      AVX2), summed over the keys in order.
 * The rows live in the attention op's probability buffer, or — in the capture op — in a
 * scratch area of 8 rows per task: memory is O(threads n) instead of O(H n^2), so an
 * 8,192-token layer needs 0.5 MB of rows rather than 2.4 GB.
 *
 * Exactness. Every score is the same sum in the same order as before this kernel (and as
 * the scalar loop of a partial block): s = 0, then s += (q_c * scale) * k_c for c = 0 ..
 * d - 1, each product and sum rounded (the project builds with -std=c17, which leaves
 * floating-point contraction off, so no multiply-add is fused here or in the scalar loop).
 * Every o element is head_scale-weighted probabilities times values summed over keys in
 * order, a key every row of a block gives weight 0 skipped as before (adding a product 0 * v
 * to a sum changes nothing for a finite v). So the probabilities, the fp16 values, o, and
 * with them every later layer, are bit for bit what the row-at-a-time loop computed; the
 * work split decides only which thread computes a row. test-attention and the capture
 * tests hold both ops to that.
 *
 * GCC/Clang vector extensions rather than intrinsics, one register wide (VW floats: 16 on
 * AVX-512, 8 on AVX2, 4 otherwise) with tiles sized to the target's register file: a tile
 * whose accumulators do not fit in registers spills on every key, and the kernel built for
 * AVX-512's 32 registers ran at half the speed of BLAS on an AVX2 machine's 16 (the tiles
 * below: RT rows x 2 vectors of keys, 4 rows x PV_NV vectors of output dimensions). The
 * arithmetic is the same IEEE single operations on every target and tile: a score or an o
 * element is the same sum in the same order whichever tile or lane computes it. Head
 * dimensions that are not a multiple of 16 (none of the real models; some test models) take
 * the scalar loop throughout. The kernel uses no BLAS: OpenBLAS's OpenMP build must not be
 * entered from several of our threads.
 */
#include "backend/sc-backend-cpu-private.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/sc-math.h"

#if defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>
#define SC_CPU_F16C 1
#endif

/* The vector width and the tiles, per target: at most 16 accumulators on AVX-512 (32
 * registers), 8 on AVX2 and SSE (16 registers; the loads, the broadcast factor and the
 * product need the rest: no multiply-add is fused, see above). */
#if defined(__AVX512F__)
enum { VW = 16, RT = 8, PV_NV = 4 };
#elif defined(__AVX__)
enum { VW = 8, RT = 4, PV_NV = 2 };
#else
enum { VW = 4, RT = 4, PV_NV = 2 };
#endif

typedef float vf __attribute__ ((vector_size (VW * sizeof (float))));
typedef int32_t vi __attribute__ ((vector_size (VW * sizeof (int32_t))));

enum {
  R = 8,         /* query rows per block */
  KW = 2 * VW,   /* keys per score tile: 2 vectors x RT rows */
  OW = PV_NV * VW, /* output dimensions per P V tile: PV_NV vectors x 4 rows */
  MAX_D = 512,   /* the largest head dimension the vector path takes (stack use) */
};
_Static_assert (R % RT == 0 && 16 % VW == 0, "tiles must divide the block and 16");

static inline vf
loadv (const float *p)
{
  vf v;
  memcpy (&v, p, sizeof v);
  return v;
}

static inline void
storev (float *p, vf v)
{
  memcpy (p, &v, sizeof v);
}

/* sc_expf (core/sc-math.h) of VW lanes at once: the same IEEE single operations in the same
 * order in every lane (no contraction: see above), so each lane is bit for bit the scalar
 * function's result — which GCC does not vectorise itself (the clamps and the exponent's
 * integer bits stop it), and which was 40 % of this kernel's time at 2,048 tokens. */
static inline vf
vexpf (vf x)
{
  const vf lo = (vf) { 0 } + SC_EXPF_MIN, hi = (vf) { 0 } + SC_EXPF_MAX;
  vi below, above, bits;
  vf t, n, r, p, scale;

  /* x < lo ? lo : x, then x > hi ? hi : x, as selects on the comparison masks (a NaN lane
   * compares false and passes, as in the scalar code) */
  below = x < lo;
  x = (vf) (((vi) x & ~below) | ((vi) lo & below));
  above = x > hi;
  x = (vf) (((vi) x & ~above) | ((vi) hi & above));
  t = x * SC_EXPF_LOG2E + SC_EXPF_ROUND;
  n = t - SC_EXPF_ROUND;
  r = x - n * SC_EXPF_LN2_HI - n * SC_EXPF_LN2_LO;
  p = SC_EXPF_POLY (r);
  bits = (__builtin_convertvector (n, vi) + 127) << 23;
  memcpy (&scale, &bits, sizeof scale);
  return p * scale;
}

void
sc_cpu_expf_lanes (const float *x, float *out, size_t n)
{
  size_t i = 0;

  for (; i + VW <= n; i += VW)
    storev (out + i, vexpf (loadv (x + i)));
  for (; i < n; i++)
    out[i] = sc_expf (x[i]);
}

/* The fast path's softmax of one row: the same result as sc_cpu_softmax_row() to a few
 * ulp, in loops that vectorise: 16 running maxima and 16 partial sums (added in double at
 * the end, in a fixed order, so the result does not depend on the thread or the machine's
 * vector width) and sc_expf, over the visible range [lo, hi]. Entries [z0, lo) and
 * (hi, z1] become 0 (the attention op zeroes the whole row; the capture op only what its
 * P V reads). Rows with masked keys take the shared scalar path, which writes the whole
 * row. */
static void
softmax_row_fast (float *restrict row, int p, int n_k, int lo, int hi, const uint8_t *key_mask,
                  int z0, int z1)
{
  enum { LANES = 16 };
  float lane_max[LANES], lane_sum[LANES], max, inv;
  float *restrict r = row + lo;
  const int len = hi - lo + 1, whole = len / LANES * LANES;
  double sum = 0.0;
  int j, l;

  /* A row with masked keys takes the scalar path (with the same exp); a mask that masks
   * nothing this row can see changes nothing, bit for bit. */
  if (key_mask != NULL)
    for (j = lo; j <= hi; j++)
      if (key_mask[j])
        {
          sc_cpu_softmax_row (row, p, n_k, lo, hi, key_mask, true);
          return;
        }
  for (l = 0; l < LANES; l++)
    {
      lane_max[l] = -INFINITY;
      lane_sum[l] = 0.0f;
    }
  for (j = 0; j < whole; j += LANES)
    for (l = 0; l < LANES; l++)
      lane_max[l] = r[j + l] > lane_max[l] ? r[j + l] : lane_max[l];
  max = -INFINITY;
  for (l = 0; l < LANES; l++)
    max = lane_max[l] > max ? lane_max[l] : max;
  for (j = whole; j < len; j++)
    max = r[j] > max ? r[j] : max;

  {
    /* the 16 lanes as LANES / VW vectors: lane l still sums r[j + l] over j in order */
    vf vsum[LANES / VW];
    const vf vmax = (vf) { 0 } + max;
    for (l = 0; l < LANES / VW; l++)
      vsum[l] = (vf) { 0 };
    for (j = 0; j < whole; j += LANES)
      for (l = 0; l < LANES / VW; l++)
        {
          const vf e = vexpf (loadv (r + j + VW * l) - vmax);
          storev (r + j + VW * l, e);
          vsum[l] = vsum[l] + e;
        }
    for (l = 0; l < LANES / VW; l++)
      storev (lane_sum + VW * l, vsum[l]);
  }
  for (l = 0; l < LANES; l++)
    sum += lane_sum[l];
  for (j = whole; j < len; j++)
    {
      r[j] = sc_expf (r[j] - max);
      sum += r[j];
    }
  inv = (float) (1.0 / sum);
  for (j = 0; j < len; j++)
    r[j] *= inv;
  for (j = z0; j < lo; j++)
    row[j] = 0.0f;
  for (j = hi + 1; j <= z1; j++)
    row[j] = 0.0f;
}

/* @n floats to fp16 (sc_fp32_to_fp16's rounding; F16C, which gives the same bits, where the
 * build targets it). */
static void
to_fp16 (const float *src, int n, uint16_t *dst)
{
  int j = 0;

#ifdef SC_CPU_F16C
  for (; j + 8 <= n; j += 8)
    _mm_storeu_si128 ((__m128i *) (dst + j),
                      _mm256_cvtps_ph (_mm256_loadu_ps (src + j),
                                       _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
  for (; j < n; j++)
    dst[j] = sc_fp32_to_fp16 (src[j]);
}

/* The op's arguments, shared by its tasks. */
typedef struct {
  float *out, *probs; /* probs: (H, n_q, n_k), or NULL in the capture op */
  const float *q, *k, *v;
  int n_q, n_k, n_heads, n_kv, d;
  const ScAttnParams *p;
  const float *kt;       /* (n_kv, d, n_k): each KV head's keys, transposed */
  uint16_t *f16;         /* the capture op: the wanted heads' fp16 values, or NULL */
  const size_t *f16_at;  /* the capture op: head h's values at f16 + f16_at[h], SIZE_MAX
                          * for a head not wanted */
  bool packed;           /* the capture layout: lower triangle (else full rows) */
  int chunks;            /* row chunks per head */
  const int *chunk_row;  /* chunks + 1 row boundaries, multiples of R */
  bool failed;           /* a task ran out of memory */
} AttnJob;

/* Scores of @nr (<= R) rows for keys [klo, khi], the scalar loop: s = 0; s += qc * k. */
static void
scores_scalar (const AttnJob *j, float *const *rows, const float *const *qrow, int nr, int klo,
               int khi, const float *kt)
{
  const float scale = j->p->scale;

  for (int r = 0; r < nr; r++)
    for (int key = klo; key <= khi; key++)
      rows[r][key] = 0.0f;
  for (int c = 0; c < j->d; c++)
    {
      const float *restrict ktc = kt + (size_t) c * j->n_k;
      for (int r = 0; r < nr; r++)
        {
          float *restrict sr = rows[r];
          const float qc = qrow[r][c] * scale;
          for (int key = klo; key <= khi; key++)
            sr[key] += qc * ktc[key];
        }
    }
}

/* Scores of a whole block (R rows) for keys [klo, khi]: tiles of RT rows x KW keys in
 * registers (the block's row groups in turn, while the KW keys' columns of K^T are in L1),
 * then R rows x VW keys, then the scalar loop for the last < VW keys. @qs holds q_c * scale
 * per row. */
static void
scores_block (const AttnJob *j, float *const *rows, const float (*qs)[MAX_D],
              const float *const *qrow, int klo, int khi, const float *kt)
{
  const int d = j->d;
  const size_t nk = (size_t) j->n_k;
  int key = klo, r, c;

  for (; key + KW - 1 <= khi; key += KW)
    for (int rg = 0; rg < R; rg += RT)
      {
        vf a0[RT], a1[RT];
        for (r = 0; r < RT; r++)
          a0[r] = a1[r] = (vf) { 0 };
        for (c = 0; c < d; c++)
          {
            const float *ktc = kt + (size_t) c * nk + key;
            const vf k0 = loadv (ktc), k1 = loadv (ktc + VW);
            for (r = 0; r < RT; r++)
              {
                a0[r] = a0[r] + qs[rg + r][c] * k0;
                a1[r] = a1[r] + qs[rg + r][c] * k1;
              }
          }
        for (r = 0; r < RT; r++)
          {
            storev (rows[rg + r] + key, a0[r]);
            storev (rows[rg + r] + key + VW, a1[r]);
          }
      }
  for (; key + VW - 1 <= khi; key += VW)
    {
      vf a[R];
      for (r = 0; r < R; r++)
        a[r] = (vf) { 0 };
      for (c = 0; c < d; c++)
        {
          const vf k0 = loadv (kt + (size_t) c * nk + key);
          for (r = 0; r < R; r++)
            a[r] = a[r] + qs[r][c] * k0;
        }
      for (r = 0; r < R; r++)
        storev (rows[r] + key, a[r]);
    }
  if (key <= khi)
    scores_scalar (j, rows, qrow, R, key, khi, kt);
}

/* o rows += hs * P V over keys [klo, khi] for @nr rows, the scalar loop (o zeroed first). */
static void
pv_scalar (const AttnJob *j, float *const *rows, float *const *orow, int nr, int klo, int khi,
           int g, float hs)
{
  const size_t kvs = (size_t) j->n_kv * j->d;

  for (int r = 0; r < nr; r++)
    for (int c = 0; c < j->d; c++)
      orow[r][c] = 0.0f;
  for (int key = klo; key <= khi; key++)
    {
      const float *restrict vj = j->v + key * kvs + (size_t) g * j->d;
      for (int r = 0; r < nr; r++)
        {
          float *restrict o = orow[r];
          const float w = rows[r][key] * hs;
          if (w == 0.0f)
            continue;
          for (int c = 0; c < j->d; c++)
            o[c] += w * vj[c];
        }
    }
}

/* The P V of four rows for output dimensions [c0, c0 + VW NV): accumulators in registers
 * over the keys in order, a key all four rows weigh 0 skipped. */
static inline __attribute__ ((always_inline)) void
pv_tile (const AttnJob *j, float *const *rows, float *const *orow, int klo, int khi, int g,
         float hs, int c0, const int NV)
{
  const size_t kvs = (size_t) j->n_kv * j->d;
  const float *vbase = j->v + (size_t) g * j->d + c0;
  vf acc[4][PV_NV];
  int r, u, key;

  for (r = 0; r < 4; r++)
    for (u = 0; u < NV; u++)
      acc[r][u] = (vf) { 0 };
  for (key = klo; key <= khi; key++)
    {
      const float w0 = rows[0][key] * hs, w1 = rows[1][key] * hs, w2 = rows[2][key] * hs,
                  w3 = rows[3][key] * hs;
      const float *vj = vbase + key * kvs;
      if (w0 == 0.0f && w1 == 0.0f && w2 == 0.0f && w3 == 0.0f)
        continue;
      for (u = 0; u < NV; u++)
        {
          const vf vv = loadv (vj + VW * u);
          acc[0][u] = acc[0][u] + w0 * vv;
          acc[1][u] = acc[1][u] + w1 * vv;
          acc[2][u] = acc[2][u] + w2 * vv;
          acc[3][u] = acc[3][u] + w3 * vv;
        }
    }
  for (r = 0; r < 4; r++)
    for (u = 0; u < NV; u++)
      storev (orow[r] + c0 + VW * u, acc[r][u]);
}

/* P V of four rows, every output dimension (d a multiple of 16): tiles of PV_NV vectors,
 * then what is left, fewer vectors at a time. */
static void
pv_four (const AttnJob *j, float *const *rows, float *const *orow, int klo, int khi, int g,
         float hs)
{
  int c0 = 0;

  for (; c0 + OW <= j->d; c0 += OW)
    pv_tile (j, rows, orow, klo, khi, g, hs, c0, PV_NV);
  for (; c0 + VW <= j->d; c0 += VW)
    pv_tile (j, rows, orow, klo, khi, g, hs, c0, 1);
}

/* Rows [i0, i0 + nr) of head @h, with @rows their score rows (n_k floats each). */
static void
head_rows (const AttnJob *j, int h, int i0, int nr, float *const *rows)
{
  const ScAttnParams *p = j->p;
  const int g = h / (j->n_heads / j->n_kv), first = j->n_k - j->n_q, d = j->d;
  const size_t qstride = (size_t) j->n_heads * d;
  const float hs = p->head_scale != NULL ? p->head_scale[h] : 1.0f;
  const float *kt = j->kt + (size_t) g * d * j->n_k;
  const bool vec = d % 16 == 0 && d <= MAX_D;
  const bool convert = j->f16 != NULL && j->f16_at[h] != SIZE_MAX;
  int lo[R], hi[R], klo, khi, r;
  const float *qrow[R];
  float *orow[R];

  for (r = 0; r < nr; r++)
    {
      sc_attn_key_range (first + i0 + r, j->n_k, p->causal, p->window, &lo[r], &hi[r]);
      qrow[r] = j->q + (i0 + r) * qstride + (size_t) h * d;
      orow[r] = j->out + (i0 + r) * qstride + (size_t) h * d;
    }
  klo = lo[0];      /* lo grows with the position */
  khi = hi[nr - 1]; /* so does hi */

  /* 1. scores for keys klo..khi (entries outside a row's own range are discarded by the
   *    softmax) */
  if (vec && nr == R)
    {
      float qs[R][MAX_D];
      for (r = 0; r < R; r++)
        for (int c = 0; c < d; c++)
          qs[r][c] = qrow[r][c] * p->scale;
      scores_block (j, rows, (const float (*)[MAX_D]) qs, qrow, klo, khi, kt);
    }
  else
    scores_scalar (j, rows, qrow, nr, klo, khi, kt);
  /*    with Gemma 2's soft-capping of each visible score */
  if (p->softcap > 0.0f)
    for (r = 0; r < nr; r++)
      for (int k = lo[r]; k <= hi[r]; k++)
        rows[r][k] = sc_softcapf (rows[r][k], p->softcap);

  /* 2. softmax per row; 3. its fp16 copy */
  for (r = 0; r < nr; r++)
    {
      const int i = i0 + r;
      softmax_row_fast (rows[r], first + i, j->n_k, lo[r], hi[r], p->key_mask,
                        j->probs != NULL ? 0 : klo, j->probs != NULL ? j->n_k - 1 : khi);
      if (convert)
        {
          uint16_t *dst = j->f16 + j->f16_at[h] + sc_attn_packed_index (i, 0, j->n_k, j->packed);
          const int len = j->packed ? i + 1 : j->n_k;
          /* [0, lo) and (hi, len) hold exact zeros, as the attention op writes */
          memset (dst, 0, (size_t) lo[r] * sizeof *dst);
          to_fp16 (rows[r] + lo[r], hi[r] - lo[r] + 1, dst + lo[r]);
          if (len > hi[r] + 1)
            memset (dst + hi[r] + 1, 0, (size_t) (len - hi[r] - 1) * sizeof *dst);
        }
    }

  /* 4. o = hs * P V */
  if (vec && nr == R)
    {
      pv_four (j, rows, orow, klo, khi, g, hs);
      pv_four (j, rows + 4, orow + 4, klo, khi, g, hs);
    }
  else
    pv_scalar (j, rows, orow, nr, klo, khi, g, hs);
}

static void
attention_task (void *ctx, int t)
{
  AttnJob *j = ctx;
  const int h = t / j->chunks, chunk = t % j->chunks;
  const int row0 = j->chunk_row[chunk], row1 = j->chunk_row[chunk + 1];
  float *scratch = NULL, *rows[R];
  int i0, r;

  if (row0 >= row1)
    return;
  if (j->probs == NULL && (scratch = malloc ((size_t) R * j->n_k * sizeof *scratch)) == NULL)
    {
      j->failed = true; /* read after sc_pool_run's join */
      return;
    }
  for (i0 = row0; i0 < row1; i0 += R)
    {
      const int nr = row1 - i0 < R ? row1 - i0 : R;
      for (r = 0; r < nr; r++)
        rows[r] = j->probs != NULL ? j->probs + ((size_t) h * j->n_q + i0 + r) * j->n_k
                                   : scratch + (size_t) r * j->n_k;
      head_rows (j, h, i0, nr, rows);
    }
  free (scratch);
}

/* Splits each head's n_q rows into @chunks blocks of about equal work (a causal row costs
 * its position), at multiples of R; boundaries into @row (chunks + 1). */
static void
split_rows (int n_q, int n_k, bool causal, int chunks, int *row)
{
  const int first = n_k - n_q;

  row[0] = 0;
  for (int c = 1; c < chunks; c++)
    {
      double f = (double) c / chunks, at;
      if (causal)
        {
          /* work to row i ~ (first + i)^2 - first^2: solve for a share f of the whole */
          const double a = first, b = first + (double) n_q;
          at = sqrt (a * a + f * (b * b - a * a)) - a;
        }
      else
        at = f * n_q;
      int i = (int) at / R * R;
      row[c] = i < row[c - 1] ? row[c - 1] : i > n_q ? n_q : i;
    }
  row[chunks] = n_q;
}

static ScStatus
run_attention (ScBackend *b, AttnJob *j, ScError *err)
{
  enum { MAX_CHUNKS = 16 };
  const int threads = sc_pool_n_threads (sc_cpu_pool (b));
  /* Heads are independent; a decode step's few multiply-adds stay on the calling thread. */
  const bool parallel = (double) j->n_q * j->n_k * j->d * j->n_heads >= 4e6 && threads > 1;
  const size_t kvs = (size_t) j->n_kv * j->d;
  int chunk_row[MAX_CHUNKS + 1], chunks = 1, g, c, key;
  float *kt;

  /* enough tasks that threads finish together (about 4 a thread), none under 64 rows */
  if (parallel)
    {
      chunks = (4 * threads + j->n_heads - 1) / j->n_heads;
      if (chunks > j->n_q / 64)
        chunks = j->n_q / 64;
      chunks = chunks < 1 ? 1 : chunks > MAX_CHUNKS ? MAX_CHUNKS : chunks;
    }
  split_rows (j->n_q, j->n_k, j->p->causal, chunks, chunk_row);
  j->chunks = chunks;
  j->chunk_row = chunk_row;

  if ((kt = malloc ((size_t) j->n_kv * j->d * j->n_k * sizeof *kt)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "cpu: attention: out of memory for the transposed "
                         "keys of %d positions", j->n_k);
  /* Kt[g] (d, n_k) = K_g^T, once per KV head (each serves n_heads / n_kv query heads) */
  for (g = 0; g < j->n_kv; g++)
    for (key = 0; key < j->n_k; key++)
      for (c = 0; c < j->d; c++)
        kt[((size_t) g * j->d + c) * j->n_k + key] = j->k[key * kvs + (size_t) g * j->d + c];
  j->kt = kt;
  if (parallel)
    sc_pool_run (sc_cpu_pool (b), j->n_heads * chunks, attention_task, j);
  else
    for (int t = 0; t < j->n_heads * chunks; t++)
      attention_task (j, t);
  free (kt);
  if (j->failed)
    return sc_error_set (err, SC_ERR_NOMEM, "cpu: attention: out of memory for the score rows "
                         "of %d keys", j->n_k);
  return SC_OK;
}

ScStatus
sc_cpu_attention (ScBackend *b, float *out, float *probs, const float *q, const float *k,
                  const float *v, int n_q, int n_k, int n_heads, int n_kv, int d,
                  const ScAttnParams *p, ScError *err)
{
  AttnJob j = { .out = out, .probs = probs, .q = q, .k = k, .v = v, .n_q = n_q, .n_k = n_k,
                .n_heads = n_heads, .n_kv = n_kv, .d = d, .p = p };

  return run_attention (b, &j, err);
}

/* The capture op on the host: synchronous, so the values are in the backend's area when it
 * returns; only the wanted heads have a place there. One area serves every slot (the
 * forward pass hands a host backend's heads over before its next layer: sc-forward.c),
 * grown to the largest layer seen and kept until the backend is destroyed. */
ScStatus
sc_cpu_attention_capture (ScBackend *b, float *out, const float *q, const float *k,
                          const float *v, int n_q, int n_k, int n_heads, int n_kv, int d,
                          const ScAttnParams *p, const uint8_t *want, int slot, ScError *err)
{
  ScCpuBackend *cb = (ScCpuBackend *) b;
  const bool packed = p->causal && n_q == n_k;
  const size_t per_head = sc_attn_packed_size (n_q, n_k, packed);
  AttnJob j = { .out = out, .q = q, .k = k, .v = v, .n_q = n_q, .n_k = n_k,
                .n_heads = n_heads, .n_kv = n_kv, .d = d, .p = p, .packed = packed };
  size_t need = 0, *at;
  ScStatus st;
  int h;

  (void) slot;
  if ((at = realloc (cb->capture_at, (size_t) n_heads * sizeof *at)) == NULL)
    return sc_error_set (err, SC_ERR_NOMEM, "cpu: attention: out of memory");
  cb->capture_at = at;
  cb->capture_n_heads = 0; /* nothing to hand over until this call succeeds */
  for (h = 0; h < n_heads; h++)
    {
      at[h] = want != NULL && want[h] ? need : SIZE_MAX;
      need += at[h] != SIZE_MAX ? per_head : 0;
    }
  if (need > cb->capture_cap)
    {
      uint16_t *area = realloc (cb->capture, need * sizeof *area);
      if (area == NULL)
        return sc_error_set (err, SC_ERR_NOMEM, "cpu: attention: out of memory for %zu fp16 "
                             "probabilities (%.1f GB)", need, (double) need * 2 / 1e9);
      cb->capture = area;
      cb->capture_cap = need;
    }
  j.f16 = need > 0 ? cb->capture : NULL;
  j.f16_at = at;
  if ((st = run_attention (b, &j, err)) != SC_OK)
    return st;
  cb->capture_n_heads = n_heads;
  cb->capture_packed = packed;
  return SC_OK;
}

ScStatus
sc_cpu_capture_wait (ScBackend *b, int slot, const uint16_t **heads, bool *packed, ScError *err)
{
  ScCpuBackend *cb = (ScCpuBackend *) b;

  (void) slot;
  (void) err;
  for (int h = 0; h < cb->capture_n_heads; h++)
    heads[h] = cb->capture_at[h] != SIZE_MAX ? cb->capture + cb->capture_at[h] : NULL;
  *packed = cb->capture_packed;
  return SC_OK;
}
