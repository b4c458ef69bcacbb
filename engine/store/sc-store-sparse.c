/* sc-store-sparse.c — the sparse form of a causal head (docs/store.md, "Sparse heads").
 *
 * Row i keeps the fewest keys whose captured (float32) weights sum to at least 1 - eps:
 * the row sorted by weight, descending, ties broken by the lower key, and its shortest
 * prefix reaching 1 - eps (the whole row when even that does not: a row whose weights
 * sum to less). The kept keys are stored in key order with their fp16 values; the weights
 * left out are summed (in double) into the row's dropped mass, stored as float32. Since
 * the dropped weights sum to less than eps, the row read back differs from the captured
 * one by at most eps + the fp16 rounding of the kept values in L1.
 *
 * Speed: sorting every row would cost n log n per row, n^2 log n per head — minutes for a
 * 8,192-token run. Weights are non-negative floats, whose bit patterns sort as the
 * values do, so a histogram over the top bits (sign, exponent, 3 mantissa bits: 2,048
 * buckets) finds the bucket where the descending sum crosses 1 - eps in one pass; only
 * that bucket's keys are sorted. Rows of at most SORT_ROW keys are sorted directly.
 *
 * Thread safety: an ScStoreSparse is used by one thread (the capture's producer).
 */
#include "store/sc-store-private.h"

#include <stdlib.h>
#include <string.h>

/* Rows this short are sorted outright: cheaper than clearing the histogram. */
#define SORT_ROW 256u
/* Histogram buckets: a non-negative float's bits >> 20 (sign 0, 8 exponent bits, the top
 * 3 mantissa bits) is below 2^11. */
#define BUCKET_SHIFT 20
#define N_BUCKETS 2048u

static inline uint32_t
float_bits (float f)
{
  uint32_t b;
  memcpy (&b, &f, sizeof b);
  return b & 0x7fffffffu; /* -0 is 0; the store refuses negative weights anyway */
}

/* Whether key a comes before key b: larger weight first, then the lower key. */
static inline bool
before (const float *row, uint32_t a, uint32_t b)
{
  const uint32_t x = float_bits (row[a]), y = float_bits (row[b]);
  return x > y || (x == y && a < b);
}

/* Heap sort of @idx (@n keys of @row) by before(): O(n log n), no recursion. */
static void
sift (const float *row, uint32_t *idx, size_t start, size_t end)
{
  size_t root = start;

  for (;;)
    {
      size_t child = 2 * root + 1, swap = root;
      if (child >= end)
        return;
      /* a max-heap of "comes last" puts the last at the end: the array ends sorted */
      if (before (row, idx[swap], idx[child]))
        swap = child;
      if (child + 1 < end && before (row, idx[swap], idx[child + 1]))
        swap = child + 1;
      if (swap == root)
        return;
      uint32_t t = idx[root];
      idx[root] = idx[swap];
      idx[swap] = t;
      root = swap;
    }
}

static void
sort_keys (const float *row, uint32_t *idx, size_t n)
{
  if (n < 2)
    return;
  for (size_t start = n / 2; start-- > 0;)
    sift (row, idx, start, n);
  for (size_t end = n - 1; end > 0; end--)
    {
      uint32_t t = idx[0];
      idx[0] = idx[end];
      idx[end] = t;
      sift (row, idx, 0, end);
    }
}

static bool
grow (ScStoreSparse *sp, uint64_t need)
{
  uint64_t cap = sp->cap ? sp->cap : 4096;
  uint32_t *keys;
  uint8_t *vals;

  if (need <= sp->cap)
    return true;
  while (cap < need)
    cap *= 2;
  if ((keys = realloc (sp->keys, cap * sizeof *keys)) == NULL)
    return false;
  sp->keys = keys;
  if ((vals = realloc (sp->vals, cap * 2)) == NULL)
    return false;
  sp->vals = vals;
  sp->cap = cap;
  return true;
}

void
sc_store_sparse_clear (ScStoreSparse *sp)
{
  if (sp == NULL)
    return;
  free (sp->offsets);
  free (sp->keys);
  free (sp->vals);
  free (sp->dropped);
  free (sp->order);
  memset (sp, 0, sizeof *sp);
}

uint64_t
sc_store_sparse_bytes (uint32_t n, uint64_t nnz)
{
  return 4 * (uint64_t) n + 8 * ((uint64_t) n + 1) + 6 * nnz;
}

/* Marks in @keep (len bytes) the keys row @row keeps; returns how many. */
static uint32_t
choose (ScStoreSparse *sp, const float *row, uint32_t len, double target, uint8_t *keep,
        double *hist)
{
  uint32_t *idx = sp->order, n_keep = 0, m = 0;
  double cum = 0;

  memset (keep, 0, len);
  if (len <= SORT_ROW)
    {
      for (uint32_t j = 0; j < len; j++)
        idx[j] = j;
      sort_keys (row, idx, len);
      for (uint32_t k = 0; k < len && cum < target; k++)
        {
          keep[idx[k]] = 1;
          cum += row[idx[k]];
          n_keep++;
        }
      return n_keep;
    }
  memset (hist, 0, N_BUCKETS * sizeof *hist);
  for (uint32_t j = 0; j < len; j++)
    hist[float_bits (row[j]) >> BUCKET_SHIFT] += row[j];
  {
    uint32_t b = N_BUCKETS;
    while (b > 0 && cum + hist[b - 1] < target)
      cum += hist[--b];
    if (b == 0)
      {
        /* the whole row sums to less than the target: keep it all */
        memset (keep, 1, len);
        return len;
      }
    b--; /* the crossing bucket */
    for (uint32_t j = 0; j < len; j++)
      {
        const uint32_t bj = float_bits (row[j]) >> BUCKET_SHIFT;
        if (bj > b)
          {
            keep[j] = 1;
            n_keep++;
          }
        else if (bj == b)
          idx[m++] = j;
      }
    sort_keys (row, idx, m);
    for (uint32_t k = 0; k < m && cum < target; k++)
      {
        keep[idx[k]] = 1;
        cum += row[idx[k]];
        n_keep++;
      }
  }
  return n_keep;
}

bool
sc_store_sparse_build (ScStoreSparse *sp, const float *probs, uint32_t n, bool causal,
                       double eps)
{
  const double target = 1.0 - eps;
  double *hist = NULL;
  uint8_t *keep = NULL;
  float *kept_vals = NULL;
  bool ok = false;

  if (sp->n != n || sp->offsets == NULL)
    {
      uint64_t *offsets = realloc (sp->offsets, ((size_t) n + 1) * sizeof *offsets);
      float *dropped = offsets != NULL ? realloc (sp->dropped, (size_t) n * sizeof *dropped)
                                       : NULL;
      if (offsets != NULL)
        sp->offsets = offsets;
      if (dropped == NULL)
        return false;
      sp->dropped = dropped;
    }
  if (sp->order_cap < n)
    {
      uint32_t *order = realloc (sp->order, (size_t) n * sizeof *order);
      if (order == NULL)
        return false;
      sp->order = order;
      sp->order_cap = n;
    }
  sp->n = n;
  sp->causal = causal;
  sp->nnz = 0;
  hist = malloc (N_BUCKETS * sizeof *hist);
  keep = malloc (n);
  kept_vals = malloc ((size_t) n * sizeof *kept_vals);
  if (hist == NULL || keep == NULL || kept_vals == NULL)
    goto out;
  sp->offsets[0] = 0;
  for (uint32_t i = 0; i < n; i++)
    {
      const float *row = probs + (size_t) i * n;
      const uint32_t len = causal ? i + 1 : n;
      const uint32_t n_keep = choose (sp, row, len, target, keep, hist);
      double dropped = 0;
      uint32_t k = 0;

      if (!grow (sp, sp->nnz + n_keep))
        goto out;
      for (uint32_t j = 0; j < len; j++)
        if (keep[j])
          {
            sp->keys[sp->nnz + k] = j;
            kept_vals[k++] = row[j];
          }
        else
          dropped += row[j];
      sc_store_f16_encode (kept_vals, k, sp->vals + 2 * sp->nnz);
      sp->nnz += k;
      sp->offsets[i + 1] = sp->nnz;
      sp->dropped[i] = (float) dropped;
    }
  ok = true;
out:
  free (hist);
  free (keep);
  free (kept_vals);
  return ok;
}

void
sc_store_sparse_serialise (const ScStoreSparse *sp, uint8_t *out)
{
  for (uint32_t i = 0; i < sp->n; i++)
    {
      uint32_t b;
      memcpy (&b, &sp->dropped[i], sizeof b);
      for (int k = 0; k < 4; k++)
        *out++ = (uint8_t) (b >> (8 * k));
    }
  for (uint32_t i = 0; i <= sp->n; i++)
    for (int k = 0; k < 8; k++)
      *out++ = (uint8_t) (sp->offsets[i] >> (8 * k));
  for (uint64_t j = 0; j < sp->nnz; j++)
    for (int k = 0; k < 4; k++)
      *out++ = (uint8_t) (sp->keys[j] >> (8 * k));
  memcpy (out, sp->vals, 2 * sp->nnz);
}
