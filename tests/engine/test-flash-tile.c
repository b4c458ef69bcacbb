/* test-flash-tile.c — the CUDA attention kernels' algorithm, run on the CPU.
 *
 * cuda/sc-cuda-attention.cu walks each query row's keys in tiles of SC_FLASH_BC keys, one
 * 32-lane warp a row, with the step functions of engine/core/sc-math.h ("Flash attention").
 * This test runs the same loop on the CPU — the same tile sizes, the same blocks of
 * SC_FLASH_BR rows and the key tiles a block visits, the tiles a row skips, the same lane
 * ownership of keys and dims, the same merge order (tile max, rescale, butterfly sum, keys
 * in ascending order into each dim's fmaf), the same clearing of fp16 values no tile
 * writes (elsewhere left NaN, so a gap would fail) — and holds both paths to the scalar
 * reference backend "cpu-ref":
 *   - flash: one pass with the online softmax, output only;
 *   - capture: pass 1 for each row's log-sum-exp, pass 2 for the normalised probabilities
 *     (fp32, and fp16 packed as the store lays a head: docs/store.md) and P.V.
 * Cases: n = 1, n not a multiple of either tile, GQA 9 over 3, head_dim 64 and 80 (not a
 * multiple of 32), a sliding window, key masks with fully masked rows (which attend to
 * themselves), non-causal, a KV cache (n_q < n_k: stored full), head scales.
 *
 * Tolerances (against cpu-ref, which scores and sums in double), about 10x the largest
 * errors measured on these cases (1e-7 on outputs, 9e-8 on probabilities):
 *   - probabilities (fp32): |p - ref| <= 5e-7 + 5e-6 ref. A score is a float dot product
 *     (|s| < 8 here, so its absolute error is a few 1e-7), exp turns that into a relative
 *     error of p, and lse adds one logf rounding;
 *   - fp16 packed: the fp32 bound plus half an fp16 unit (2^-11 relative, 2^-25 absolute
 *     below fp16's normal range), the store's own bound; and every value the reference
 *     leaves at 0 is exactly 0;
 *   - outputs: |o - ref| <= 2e-6 + 1e-5 |ref| (the probabilities' error times |v| <= 1,
 *     summed over the row's keys in float);
 *   - every row's probabilities sum to 1 within 1e-5.
 * The measured maxima are printed (g_test_message) so a change can be judged against them.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "engine/backend/sc-backend-impl.h"
#include "engine/core/sc-math.h"

#define PROB_ABS 5e-7
#define PROB_REL 5e-6
#define OUT_ABS 2e-6
#define OUT_REL 1e-5
#define FP16_REL 4.8828125e-4     /* 2^-11: half an fp16 unit, relative */
#define FP16_ABS 2.98023223876953125e-8 /* 2^-25: half the smallest fp16 subnormal */

typedef struct {
  const char *name;
  int n_q, n_k, heads, kv, d;
  bool causal;
  int window;
  int mask_kind; /* 0 none; 1 the first 5 keys (rows 0..4 fully masked); 2 every third key */
  bool head_scale;
} Case;

static const Case cases[] = {
  { "n1", 1, 1, 1, 1, 64, true, 0, 0, false },
  { "n37-gqa-9x3-d64", 37, 37, 9, 3, 64, true, 0, 0, false },
  { "n130-d80", 130, 130, 2, 1, 80, true, 0, 0, true },
  { "n100-window17", 100, 100, 3, 1, 32, true, 17, 0, false },
  { "n70-mask-first5", 70, 70, 3, 3, 64, true, 0, 1, false },
  { "n66-mask-third-window9", 66, 66, 2, 2, 64, true, 9, 2, true },
  { "n45-noncausal", 45, 45, 4, 2, 64, false, 0, 2, false },
  { "cache-nq5-nk83", 5, 83, 9, 3, 64, true, 0, 0, false },
  { "n129-d128", 129, 129, 2, 1, 128, true, 0, 0, false },
};

typedef struct {
  const Case *c;
  float *q, *k, *v, *hs;
  uint8_t *mask;
  ScAttnParams p;
} Inputs;

static void
inputs_init (Inputs *in, const Case *c)
{
  GRand *r = g_rand_new_with_seed ((guint32) (c->n_q * 7919 + c->n_k * 31 + c->d));
  const size_t nq = (size_t) c->n_q * c->heads * c->d, nk = (size_t) c->n_k * c->kv * c->d;
  size_t i;

  in->c = c;
  in->q = g_new (float, nq);
  in->k = g_new (float, nk);
  in->v = g_new (float, nk);
  in->hs = g_new (float, c->heads);
  in->mask = NULL;
  /* q, k in [-1, 1]: scores scale * q.k stay under ~8, so rows mix sharp and flat */
  for (i = 0; i < nq; i++)
    in->q[i] = (float) g_rand_double_range (r, -1.0, 1.0);
  for (i = 0; i < nk; i++)
    {
      in->k[i] = (float) g_rand_double_range (r, -1.0, 1.0);
      in->v[i] = (float) g_rand_double_range (r, -1.0, 1.0);
    }
  for (i = 0; i < (size_t) c->heads; i++)
    in->hs[i] = (float) g_rand_double_range (r, 0.0, 2.0);
  if (c->mask_kind != 0)
    {
      in->mask = g_new0 (uint8_t, c->n_k);
      for (i = 0; i < (size_t) c->n_k; i++)
        in->mask[i] = c->mask_kind == 1 ? i < 5 : i % 3 == 1;
    }
  in->p = (ScAttnParams) { .scale = 1.0f / sqrtf ((float) c->d), .causal = c->causal,
                           .window = c->window, .key_mask = in->mask,
                           .head_scale = c->head_scale ? in->hs : NULL };
  g_rand_free (r);
}

static void
inputs_clear (Inputs *in)
{
  g_free (in->q);
  g_free (in->k);
  g_free (in->v);
  g_free (in->hs);
  g_free (in->mask);
}

/* ---- the kernel's loop, on the CPU --------------------------------------------------- */

/* What one row of a block needs: its position, range and whether every visible key is
 * masked (the kernel reads that from a prefix count of the mask). */
typedef struct {
  int p, lo, hi;
  bool all_masked;
} Row;

static Row
row_of (const Inputs *in, int i)
{
  const Case *c = in->c;
  Row r;
  int j;

  r.p = c->n_k - c->n_q + i;
  sc_attn_key_range (r.p, c->n_k, c->causal, c->window, &r.lo, &r.hi);
  r.all_masked = in->mask != NULL;
  for (j = r.lo; j <= r.hi && r.all_masked; j++)
    r.all_masked = in->mask[j] != 0;
  return r;
}

/* The block of rows [i0, i0 + SC_FLASH_BR) visits key tiles t0 .. t1 - 1: from the tile
 * of its lowest lo to that of its highest hi (the kernel's loop bounds). */
static void
block_tiles (const Inputs *in, int i0, int *t0, int *t1)
{
  const int i1 = MIN (i0 + SC_FLASH_BR, in->c->n_q);
  int lo = in->c->n_k, hi = 0, i;

  for (i = i0; i < i1; i++)
    {
      Row r = row_of (in, i);
      lo = MIN (lo, r.lo);
      hi = MAX (hi, r.hi);
    }
  *t0 = lo / SC_FLASH_BC;
  *t1 = hi / SC_FLASH_BC + 1;
}

/* Lane t's scores of tile @tile: keys tile * BC + t + 32 u for u = 0, 1; -inf when the key
 * is past n_k or invisible to the row. */
static void
score_tile (const Inputs *in, int h, int i, const Row *r, int tile, float s[SC_FLASH_LANES][2])
{
  const Case *c = in->c;
  const int g = h / (c->heads / c->kv);
  const float *qi = in->q + ((size_t) i * c->heads + h) * c->d;
  int t, u;

  for (t = 0; t < SC_FLASH_LANES; t++)
    for (u = 0; u < 2; u++)
      {
        const int j = tile * SC_FLASH_BC + t + SC_FLASH_LANES * u;
        s[t][u] = -INFINITY;
        if (j < c->n_k && sc_attn_key_visible (r->p, j, r->lo, r->hi, in->mask, r->all_masked))
          s[t][u] = sc_flash_dot (qi, in->k + ((size_t) j * c->kv + g) * c->d, c->d)
                    * in->p.scale;
      }
}

/* Folds one tile's scores into the row's state: tile max, open, weights, butterfly sum;
 * the weights are left in @w for the accumulator. Returns alpha. */
static float
fold_tile (ScSoftmaxState *st, float s[SC_FLASH_LANES][2], float w[SC_FLASH_LANES][2])
{
  float tile_max = -INFINITY, part[SC_FLASH_LANES], alpha;
  int t;

  for (t = 0; t < SC_FLASH_LANES; t++)
    tile_max = fmaxf (tile_max, fmaxf (s[t][0], s[t][1]));
  *st = sc_flash_tile_open (*st, tile_max, &alpha);
  for (t = 0; t < SC_FLASH_LANES; t++)
    {
      w[t][0] = sc_flash_weight (s[t][0], st->max);
      w[t][1] = sc_flash_weight (s[t][1], st->max);
      part[t] = w[t][0] + w[t][1];
    }
  st->sum += sc_flash_lane_sum (part);
  return alpha;
}

/* acc[c] += w_j v_j[c] over the tile's keys in ascending order (lane j mod 32, slot j / 32);
 * keys past n_k have weight 0 and a zero V row in the kernel's shared tile. */
static void
accumulate_tile (const Inputs *in, int h, int tile, float w[SC_FLASH_LANES][2], float *acc)
{
  const Case *c = in->c;
  const int g = h / (c->heads / c->kv);
  int jj, cc;

  for (jj = 0; jj < SC_FLASH_BC; jj++)
    {
      const int j = tile * SC_FLASH_BC + jj;
      const float wj = w[jj % SC_FLASH_LANES][jj / SC_FLASH_LANES];
      for (cc = 0; cc < c->d; cc++)
        {
          const float vj = j < c->n_k ? in->v[((size_t) j * c->kv + g) * c->d + cc] : 0.0f;
          acc[cc] = fmaf (wj, vj, acc[cc]);
        }
    }
}

/* Does row @r skip @tile? The kernel skips the tiles outside the row's range [lo, hi]
 * (exact: such a tile has no visible key, so folding it changes nothing). */
static bool
row_skips (const Row *r, int tile)
{
  return tile * SC_FLASH_BC > r->hi || (tile + 1) * SC_FLASH_BC - 1 < r->lo;
}

/* The fp16 values the kernel does not write itself (tiles a row skips) are those the op
 * clears first: only with a window or a full-layout causal head (a cache). Elsewhere the
 * emulation leaves a NaN (0x7e00) there, which the checks would catch. */
static bool
capture_clears (const Case *c)
{
  const bool packed = c->causal && c->n_q == c->n_k;
  return c->window > 0 || (!packed && c->causal);
}

/* The flash kernel: out (n_q, heads * d). */
static void
emulate_flash (const Inputs *in, float *out)
{
  const Case *c = in->c;
  float *acc = g_new (float, c->d);
  int h, i0, i, tile, cc;

  for (h = 0; h < c->heads; h++)
    for (i0 = 0; i0 < c->n_q; i0 += SC_FLASH_BR)
      {
        int t0, t1;
        block_tiles (in, i0, &t0, &t1);
        for (i = i0; i < MIN (i0 + SC_FLASH_BR, c->n_q); i++)
          {
            const Row r = row_of (in, i);
            const float hs = in->p.head_scale != NULL ? in->p.head_scale[h] : 1.0f;
            ScSoftmaxState st = sc_softmax_state_init ();

            memset (acc, 0, sizeof (float) * c->d);
            for (tile = t0; tile < t1; tile++)
              {
                float s[SC_FLASH_LANES][2], w[SC_FLASH_LANES][2], alpha;
                if (row_skips (&r, tile))
                  continue;
                score_tile (in, h, i, &r, tile, s);
                alpha = fold_tile (&st, s, w);
                for (cc = 0; cc < c->d; cc++)
                  acc[cc] *= alpha;
                accumulate_tile (in, h, tile, w, acc);
              }
            for (cc = 0; cc < c->d; cc++)
              out[((size_t) i * c->heads + h) * c->d + cc] = acc[cc] / st.sum * hs;
          }
      }
  g_free (acc);
}

/* The capture kernels: pass 1 (row lse), pass 2 (probabilities and P.V). @probs (heads,
 * n_q, n_k) fp32, @f16 per head in the store's layout (packed when causal and square). */
static void
emulate_capture (const Inputs *in, float *out, float *probs, uint16_t *f16)
{
  const Case *c = in->c;
  const bool packed = c->causal && c->n_q == c->n_k;
  const size_t per_f16 = sc_attn_packed_size (c->n_q, c->n_k, packed);
  float *acc = g_new (float, c->d);
  int h, i0, i, tile, cc, t, u;

  for (h = 0; h < c->heads; h++)
    for (i0 = 0; i0 < c->n_q; i0 += SC_FLASH_BR)
      {
        int t0, t1;
        block_tiles (in, i0, &t0, &t1);
        for (i = i0; i < MIN (i0 + SC_FLASH_BR, c->n_q); i++)
          {
            const Row r = row_of (in, i);
            const float hs = in->p.head_scale != NULL ? in->p.head_scale[h] : 1.0f;
            float *prow = probs + ((size_t) h * c->n_q + i) * c->n_k;
            uint16_t *frow = f16 + per_f16 * h;
            const int jmax = packed ? i : c->n_k - 1; /* the keys the layout stores */
            ScSoftmaxState st = sc_softmax_state_init ();
            float lse;

            /* pass 1 */
            for (tile = t0; tile < t1; tile++)
              {
                float s[SC_FLASH_LANES][2], w[SC_FLASH_LANES][2];
                if (row_skips (&r, tile))
                  continue;
                score_tile (in, h, i, &r, tile, s);
                fold_tile (&st, s, w);
              }
            lse = sc_flash_lse (st);
            /* pass 2: every stored key gets a value (0 outside the row's tiles too) */
            memset (acc, 0, sizeof (float) * c->d);
            for (int j = 0; j < c->n_k; j++)
              prow[j] = 0.0f;
            for (int j = 0; j <= jmax; j++)
              frow[sc_attn_packed_index (i, j, c->n_k, packed)] = capture_clears (c) ? 0x0000
                                                                                    : 0x7e00;
            for (tile = t0; tile < t1; tile++)
              {
                float s[SC_FLASH_LANES][2], w[SC_FLASH_LANES][2];
                if (row_skips (&r, tile))
                  continue;
                score_tile (in, h, i, &r, tile, s);
                for (t = 0; t < SC_FLASH_LANES; t++)
                  for (u = 0; u < 2; u++)
                    {
                      const int j = tile * SC_FLASH_BC + t + SC_FLASH_LANES * u;
                      w[t][u] = sc_flash_prob (s[t][u], lse);
                      if (j < c->n_k)
                        prow[j] = w[t][u];
                      if (j <= jmax)
                        frow[sc_attn_packed_index (i, j, c->n_k, packed)]
                            = sc_fp32_to_fp16 (w[t][u]);
                    }
                accumulate_tile (in, h, tile, w, acc);
              }
            for (cc = 0; cc < c->d; cc++)
              out[((size_t) i * c->heads + h) * c->d + cc] = acc[cc] * hs;
          }
      }
  g_free (acc);
}

/* ---- the checks ---------------------------------------------------------------------- */

static double
check_out (const Case *c, const float *got, const float *ref, const char *path)
{
  const size_t n = (size_t) c->n_q * c->heads * c->d;
  double worst = 0.0;
  size_t i;

  for (i = 0; i < n; i++)
    {
      const double e = fabs ((double) got[i] - ref[i]);
      if (e > OUT_ABS + OUT_REL * fabs (ref[i]))
        g_error ("%s %s: out[%zu] = %.9g, cpu-ref %.9g", c->name, path, i, got[i], ref[i]);
      worst = MAX (worst, e);
    }
  return worst;
}

static void
test_case (gconstpointer data)
{
  const Case *c = data;
  const bool packed = c->causal && c->n_q == c->n_k;
  const size_t per_head = (size_t) c->n_q * c->n_k;
  const size_t per_f16 = sc_attn_packed_size (c->n_q, c->n_k, packed);
  const size_t n_out = (size_t) c->n_q * c->heads * c->d;
  ScBackend *ref = sc_backend_cpu_ref_new ();
  float *ref_out = g_new (float, n_out), *ref_p = g_new (float, c->heads * per_head);
  float *fl_out = g_new (float, n_out), *cap_out = g_new (float, n_out);
  float *cap_p = g_new (float, c->heads * per_head);
  uint16_t *f16 = g_new (uint16_t, c->heads * per_f16);
  double worst_p = 0.0, worst_f16 = 0.0, worst_fl, worst_cap;
  ScError err = { SC_OK, "" };
  Inputs in;
  int h, i, j;

  g_assert_nonnull (ref);
  inputs_init (&in, c);
  g_assert_cmpint (sc_backend_attention (ref, ref_out, ref_p, in.q, in.k, in.v, c->n_q, c->n_k,
                                         c->heads, c->kv, c->d, &in.p, &err), ==, SC_OK);
  emulate_flash (&in, fl_out);
  emulate_capture (&in, cap_out, cap_p, f16);

  worst_fl = check_out (c, fl_out, ref_out, "flash");
  worst_cap = check_out (c, cap_out, ref_out, "capture");
  for (h = 0; h < c->heads; h++)
    for (i = 0; i < c->n_q; i++)
      {
        double sum = 0.0;
        for (j = 0; j < c->n_k; j++)
          {
            const double want = ref_p[h * per_head + (size_t) i * c->n_k + j];
            const double got = cap_p[h * per_head + (size_t) i * c->n_k + j];
            const double e = fabs (got - want);
            if (want == 0.0 && got != 0.0)
              g_error ("%s: head %d row %d key %d: %g where cpu-ref has exactly 0", c->name, h,
                       i, j, got);
            if (e > PROB_ABS + PROB_REL * want)
              g_error ("%s: head %d row %d key %d: p = %.9g, cpu-ref %.9g", c->name, h, i, j,
                       got, want);
            worst_p = MAX (worst_p, e);
            sum += got;
            if (!packed || j <= i)
              {
                const uint16_t bits = f16[h * per_f16 + sc_attn_packed_index (i, j, c->n_k,
                                                                               packed)];
                const double v = sc_fp16_to_fp32 (bits), ef = fabs (v - want);
                if (want == 0.0 && bits != 0)
                  g_error ("%s: head %d row %d key %d: fp16 0x%04x where cpu-ref has 0",
                           c->name, h, i, j, bits);
                if (ef > PROB_ABS + PROB_REL * want + FP16_REL * want + FP16_ABS)
                  g_error ("%s: head %d row %d key %d: fp16 %.9g, cpu-ref %.9g", c->name, h, i,
                           j, v, want);
                worst_f16 = MAX (worst_f16, ef);
              }
          }
        if (fabs (sum - 1.0) > 1e-5)
          g_error ("%s: head %d row %d sums to %.9g", c->name, h, i, sum);
      }
  /* A fully masked row attends to itself: probability 1 on its own key. */
  if (c->mask_kind == 1)
    for (h = 0; h < c->heads; h++)
      for (i = 0; i < 5 && i < c->n_q; i++)
        {
          const int p = c->n_k - c->n_q + i;
          g_assert_cmpfloat (cap_p[h * per_head + (size_t) i * c->n_k + p], ==, 1.0f);
          g_assert_cmpuint (f16[h * per_f16 + sc_attn_packed_index (i, p, c->n_k, packed)], ==,
                            0x3c00); /* fp16 1.0 */
        }
  g_test_message ("%s: max |error| out flash %.3g, out capture %.3g, p %.3g, fp16 %.3g",
                  c->name, worst_fl, worst_cap, worst_p, worst_f16);

  inputs_clear (&in);
  g_free (ref_out);
  g_free (ref_p);
  g_free (fl_out);
  g_free (cap_out);
  g_free (cap_p);
  g_free (f16);
  sc_backend_free (ref);
}

/* The step functions on their own: the butterfly sums in its fixed order (checked against
 * a hand-ordered sum), the tile open with nothing visible changes nothing, the packed
 * index matches the store's r(r+1)/2 rows, and an all-masked tile adds exactly 0. */
static void
test_steps (void)
{
  float v[SC_FLASH_LANES], w[SC_FLASH_LANES], alpha;
  ScSoftmaxState s = { 2.0f, 3.0f }, r;
  int l, i;

  for (l = 0; l < SC_FLASH_LANES; l++)
    v[l] = w[l] = 1.0f / (float) (l + 1);
  {
    /* offset 16 pairs lanes l and l + 16, then 8, 4, 2, 1: the sum tree over lanes */
    float a[SC_FLASH_LANES];
    int n = SC_FLASH_LANES;
    for (l = 0; l < n; l++)
      a[l] = w[l];
    while (n > 1)
      {
        n /= 2;
        for (l = 0; l < n; l++)
          a[l] = a[l] + a[l + n];
      }
    g_assert_cmpfloat (sc_flash_lane_sum (v), ==, a[0]);
  }
  r = sc_flash_tile_open (s, -INFINITY, &alpha);
  g_assert_cmpfloat (alpha, ==, 1.0f);
  g_assert_cmpfloat (r.max, ==, 2.0f);
  g_assert_cmpfloat (r.sum, ==, 3.0f);
  r = sc_flash_tile_open (sc_softmax_state_init (), -INFINITY, &alpha);
  g_assert_cmpfloat (alpha, ==, 1.0f);
  g_assert_true (r.max == -INFINITY && r.sum == 0.0f);
  r = sc_flash_tile_open (s, 4.0f, &alpha);
  g_assert_cmpfloat (r.max, ==, 4.0f);
  g_assert_cmpfloat (fabs (alpha - exp (-2.0)), <, 1e-7);
  g_assert_cmpfloat (sc_flash_weight (-INFINITY, 1.0f), ==, 0.0f);
  g_assert_cmpfloat (sc_flash_prob (-INFINITY, 1.0f), ==, 0.0f);
  g_assert_cmpfloat (sc_flash_prob (0.0f, sc_flash_lse ((ScSoftmaxState) { 0.0f, 1.0f })), ==,
                     1.0f);
  for (i = 0; i < 1000; i++)
    {
      const size_t start = sc_attn_packed_index (i, 0, 0, true);
      g_assert_cmpuint (start, ==, (size_t) i * (i + 1) / 2);
      g_assert_cmpuint (sc_attn_packed_index (i, i, 0, true) + 1, ==,
                        sc_attn_packed_size (i + 1, i + 1, true));
    }
  g_assert_cmpuint (sc_attn_packed_index (1 << 19, 0, 0, true), ==,
                    (size_t) (1u << 19) * ((1u << 19) + 1) / 2);
  g_assert_cmpuint (sc_attn_packed_size (3, 7, false), ==, 21);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/flash-tile/steps", test_steps);
  for (size_t i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      char *path = g_strdup_printf ("/flash-tile/%s", cases[i].name);
      g_test_add_data_func (path, &cases[i], test_case);
      g_free (path);
    }
  return g_test_run ();
}
